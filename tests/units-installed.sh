#!/usr/bin/env bash
# `ansible-test units` on the built and installed collection, as a user of the tarball runs it: build the
# tarball, install it into an empty collections path, run ansible-test there (the module tests under
# tests/unit/plugins/modules and module_utils with nothing of ansible-core but ansible.module_utils, the rest
# as controller tests). Not part of `make test`, which runs the same tests from the checkout with pytest:
# about 4-5 minutes on 2 cores.
#   PATH=.venv/bin:$PATH bash tests/units-installed.sh [ansible-test units options, e.g. a test file]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ansible-galaxy collection build --force --output-path "$TMP" "$ROOT" >/dev/null
printf '[defaults]\ncollections_path = %s\n' "$TMP/collections" > "$TMP/ansible.cfg"
(cd "$TMP" && ANSIBLE_CONFIG=$TMP/ansible.cfg ansible-galaxy collection install --offline -p "$TMP/collections" \
    "$TMP"/ainet-fabric-*.tar.gz >/dev/null)
cd "$TMP/collections/ansible_collections/ainet/fabric"
# --local: this venv's Python and its pytest (requirements-dev.txt), as tests/sanity/run.sh runs sanity
env -u ANSIBLE_CONFIG ansible-test units --local --python "$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
    --color no "$@"
