#!/usr/bin/env bash
# Bring the lab up or down, or reboot a node (needs root): `make lab`, `make lab-down`.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exec "$ROOT/.venv/bin/python" "$ROOT/tests/lab/lab.py" "$@"
