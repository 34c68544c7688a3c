#!/usr/bin/env bash
# The molecule scenarios: molecule/<mode> on the container lab (each builds
# three GPU-node system containers, converges, checks idempotence, reboots them
# and verifies with real traffic), and molecule/rdma_vm on two qemu VMs (the VM
# tier). Needs root; installs podman, runc and mmdebstrap from Debian when they
# are missing, and builds the lab rootfs once (and the VM image, tests/vm/).
#   usage: tests/molecule.sh [scenario ...]     (default: all of them)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export PATH=$ROOT/.venv/bin:$PATH ANSIBLE_NOCOLOR=1 PY_COLORS=0 ANSIBLE_FORCE_COLOR=0
# A row per scenario in tests/run-all.sh's stage table, when run from there.
# shellcheck source=tests/stages.sh
. "$ROOT/tests/stages.sh"
unset ANSIBLE_CONFIG  # molecule writes its own

if [ "$(id -u)" != 0 ]; then
    echo "molecule: the lab needs root (network namespaces, podman)" >&2
    exit 1
fi
need=()
for pair in podman:podman runc:runc mmdebstrap:mmdebstrap ssh:openssh-client ssh-keygen:openssh-client; do
    command -v "${pair%%:*}" >/dev/null || need+=("${pair#*:}")
done
if [ "${#need[@]}" -gt 0 ]; then
    echo "molecule: installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
stage "molecule: lab rootfs" bash tests/lab/rootfs.sh

scenarios=("$@")
# rdma_vm: the VM tier (two qemu TCG VMs, tests/vm/); vms.sh installs qemu from bookworm-backports.
[ "${#scenarios[@]}" -gt 0 ] || scenarios=(shared exclusive p2p two_fabrics rdma_vm)
# A lab prefix of this run's own (see tests/lab/labname.py).
export AINET_LAB_PREFIX=${AINET_LAB_PREFIX:-m$$}
trap '"$ROOT/.venv/bin/python" tests/lab/lab.py down >/dev/null 2>&1 || true
      bash tests/vm/vms.sh down --prefix "$AINET_LAB_PREFIX" >/dev/null 2>&1 || true' EXIT
for scenario in "${scenarios[@]}"; do
    start=$SECONDS
    stage "molecule $scenario" molecule test -s "$scenario"
    echo "molecule: scenario $scenario passed in $((SECONDS - start)) s"
done
