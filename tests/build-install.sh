#!/usr/bin/env bash
# Build the collection tarball, install it into an empty collections path and
# use it from there: the tarball must work without this checkout.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/build/dist
TMP=$(mktemp -d)
trap 'chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
ansible-galaxy collection build --force --output-path "$OUT" "$ROOT" >/dev/null
VERSION=$(sed -n 's/^version: *//p' "$ROOT/galaxy.yml")
TARBALL=$OUT/ainet-fabric-$VERSION.tar.gz
# Only the collection goes in: no development machinery, no caches, no lab or test runners. The VM tier's guest
# bytecode cache and its .pth line stay: a unit test imports them (tests/unit/test_vm_pyc_cache.py), as unit tests
# read tests/vm/recorded (tests/integration/test_tarball.py, UNIT_DATA).
tar -tzf "$TARBALL" | grep -v -x -e tests/vm/ainet_vm_pyc.py -e tests/vm/ainet-vm-pyc.pth > "$TMP/files"
if grep -E '(^|/)(Makefile|ansible\.cfg|requirements-dev\.txt|conftest\.py|__pycache__|\.pytest_cache|\.hypothesis|\.benchmarks|\.ainet-fabric|\.molecule|\.venv[^/]*|build)(/|$)|^tests/(lab|perf|integration|sanity|ee)/|^tests/vm/[^/]+$|^tests/.*\.sh$|^changelogs/fragments/|^molecule/|\.pyc$' "$TMP/files"; then
    echo "the tarball carries development files (above); extend build_ignore in galaxy.yml" >&2
    exit 1
fi
for required in LICENSE README.md MANIFEST.json meta/runtime.yml meta/execution-environment.yml meta/ee-requirements.txt requirements.txt \
        bindep.txt plugins/modules/rail_interfaces.py roles/rail_plan/README.md roles/rail_network/README.md; do
    grep -qx "$required" "$TMP/files" || { echo "the tarball lacks $required" >&2; exit 1; }
done
# A config of its own: this checkout's ansible.cfg links the repo as the collection.
printf '[defaults]\ncollections_path = %s\n' "$TMP/collections" > "$TMP/ansible.cfg"
export ANSIBLE_CONFIG=$TMP/ansible.cfg
(cd "$TMP" && ansible-galaxy collection install --offline -p "$TMP/collections" "$TARBALL" >/dev/null)
test -f "$TMP/collections/ansible_collections/ainet/fabric/roles/rail_plan/tasks/main.yml"
echo "built and installed $(basename "$TARBALL")"
# The plan job by its FQCN, on a copy of the example inventory, with the installed tree read-only:
# the files go beside the inventory (tests/integration/test_installed_collection.py runs every
# playbook this way).
cp -r "$ROOT/inventories/lab" "$TMP/inv"
rm -rf "$TMP/inv/.ainet-fabric"   # what a `make plan` in the checkout left there
chmod -R a-w "$TMP/collections/ansible_collections/ainet/fabric"
(cd "$TMP" && ansible-playbook -i inv ainet.fabric.plan >"$TMP/log" 2>&1) || { cat "$TMP/log"; exit 1; }
chmod -R u+w "$TMP/collections"
grep -q "lab: 4 nodes, 4 rails in fabric(s) default" "$TMP/log"
test -s "$TMP/inv/.ainet-fabric/lab/rails.csv"
test -s "$TMP/inv/rail_plan_lock.yml" && test ! -e "$TMP/inv/rail_plan_lock.json"
(cd "$TMP" && ansible-doc -t filter ainet.fabric.rail_addresses >/dev/null)
echo "installed collection planned the lab inventory"

# Galaxy's importer, offline with its default settings (it runs ansible-doc and ansible-lint on
# the tarball): it must accept the collection without a warning or an error.
(cd "$TMP" && python -m galaxy_importer.main "$TARBALL" >"$TMP/importer.log" 2>&1) || { cat "$TMP/importer.log"; exit 1; }
if grep -E '^(WARNING|ERROR)|not found, skipping' "$TMP/importer.log"; then
    echo "galaxy-importer warned about the tarball (above)" >&2
    exit 1
fi
grep -q "Importer processing completed successfully" "$TMP/importer.log"
echo "galaxy-importer accepted $(basename "$TARBALL")"

# The execution environment's build context: ansible-builder must accept the definition and
# put the tarball of this version in it (building the image needs a container engine and
# registry access: tests/ee/build.sh).
bash "$ROOT/tests/ee/context.sh" "$TMP/ee" >/dev/null
test -f "$TMP/ee/_build/collection/ainet-fabric-$VERSION.tar.gz"
grep -q "/usr/share/ansible/collections" "$TMP/ee/Containerfile"
echo "ansible-builder created the EE build context"
