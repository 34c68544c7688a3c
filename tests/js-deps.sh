#!/usr/bin/env bash
# The JavaScript the tests use as a judge: Mermaid's own parser (tests/js/mermaid_judge.mjs reads the diagrams the
# plan job writes, topology.mmd, as Mermaid does), with jsdom for the DOM its sanitizer needs. Installs the pinned
# packages of tests/js/package-lock.json into tests/js/node_modules with `npm ci` when they are missing or older
# than the lock; nothing is fetched when they are current. Debian's nodejs and npm come from tests/system-deps.sh.
# When node or npm is missing or the registry cannot be reached, it says so and exits 0: the Mermaid tests then
# skip, naming this script (AINET_REQUIRE_MERMAID=1 makes them fail instead).
set -uo pipefail
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/js
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "node or npm missing (Debian's nodejs and npm: tests/system-deps.sh): the Mermaid judge is not installed" >&2
    exit 0
fi
installed=$DIR/node_modules/.package-lock.json
if [ -f "$installed" ] && [ "$installed" -nt "$DIR/package-lock.json" ]; then
    exit 0
fi
if npm ci --prefix "$DIR" --no-audit --no-fund --loglevel=error >/dev/null; then
    echo "installed the Mermaid judge (tests/js: $(node -p "require('$DIR/node_modules/mermaid/package.json').version" 2>/dev/null))"
else
    echo "npm ci in tests/js failed (offline?): the Mermaid judge is not installed, its tests skip" >&2
fi
exit 0
