#!/usr/bin/env bash
# What the SONiC YANG check of rendered config_db needs (tor/nos_sonic.validate_sonic): Python
# libyang (requirements-yang.txt) in the venv, built from source against Debian's libyang2-dev
# and libpcre2-dev with gcc. Run by the Makefile's setup, so both README commands install it.
# As root with apt-get, the missing Debian packages are installed first. When libyang cannot be
# built (no root, no compiler, offline), setup goes on: planning and rendering do not need it,
# and tor_config's summary names every ToR whose schema check did not run and why.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
"$PY" -c "import libyang" 2>/dev/null && exit 0
need=()
for pkg in libyang2-dev libpcre2-dev gcc; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
# The binding's C extension needs Python.h; Debian's python3 keeps it in python3-dev.
if ! "$PY" -c 'import os, sysconfig; raise SystemExit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
    need+=(python3-dev)
fi
if [ "${#need[@]}" -gt 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "installing ${need[*]} (for Python libyang)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 \
        || { apt-get update -qq >/dev/null 2>&1; apt-get install -y -qq "${need[@]}" >/dev/null 2>&1; } \
        || echo "apt-get could not install ${need[*]}" >&2
fi
if "$PY" -m pip install --quiet -r "$ROOT/requirements-yang.txt"; then
    exit 0
fi
echo "Python libyang could not be built (needs ${need[*]:-libyang2-dev libpcre2-dev gcc}): the SONiC YANG check" \
     "of rendered configurations will not run, and tor_config's summary will say so for each SONiC ToR" >&2
exit 0
