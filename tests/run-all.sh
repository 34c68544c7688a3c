#!/usr/bin/env bash
# The whole test suite, in order of cost. Called by `make test` and .ci/run.
#   unit + integration (pytest), ansible-lint (production profile),
#   ansible-test sanity, collection build/install smoke test, and the
#   molecule scenarios on real network stacks. The lab layers need root;
#   without root the run fails at the end unless AINET_SKIP_LAB=1 says that
#   skipping them is wanted. Missing Debian packages are installed first
#   (tests/system-deps.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN=$ROOT/.venv/bin
export PATH=$BIN:$PATH ANSIBLE_CONFIG=$ROOT/ansible.cfg ANSIBLE_NOCOLOR=1 PY_COLORS=0
# shellcheck source=tests/stages.sh
. "$ROOT/tests/stages.sh"
AINET_STAGE_LOG=$(mktemp /tmp/ainet-stages.XXXXXX) AINET_STAGE_START=$(date +%s)
export AINET_STAGE_LOG AINET_STAGE_START
# The VM tier (molecule/rdma_vm: two qemu TCG VMs, about half an hour) runs in the background, alongside the
# stages below: its guests spend much of their time waiting on the controller and the other stages leave
# CPU free, so the whole run is shorter than one after the other. Its output goes to its own log, printed
# when it ends; a failed stage stops it (and its VMs). AINET_VM_TIER=serial runs it after the container
# scenarios instead; AINET_VM_TIER=skip leaves it out (said in the output).
VM_TIER=${AINET_VM_TIER:-background}
case "$VM_TIER" in background|serial|skip) ;; *) echo "AINET_VM_TIER=$VM_TIER: use background, serial or skip" >&2; exit 2 ;; esac
LAB=1
if [ "${AINET_SKIP_LAB:-0}" = 1 ] || [ "$(id -u)" != 0 ] || ! ls molecule/*/molecule.yml >/dev/null 2>&1; then
    LAB=0
fi
VM_PID="" VM_START="" VM_LOG=$ROOT/build/test-logs/rdma_vm.log VM_PREFIX=v$$
vm_tier_stop() {  # a stage failed: stop the VM tier and its VMs, show where it was
    [ -n "$VM_PID" ] || return 0
    kill -TERM -- "-$VM_PID" 2>/dev/null || kill -TERM "$VM_PID" 2>/dev/null || true
    sleep 2
    bash tests/vm/vms.sh down --prefix "$VM_PREFIX" >/dev/null 2>&1 || true
    echo "--- the VM tier was stopped; the end of its log ($VM_LOG):"
    tail -n 60 "$VM_LOG" 2>/dev/null || true
}
vm_tier_wait() {  # the VM tier's result: its log, its rows in the table
    local rc=0
    echo "waiting for the VM tier (started $(( $(date +%s) - VM_START )) s ago) ..."
    wait "$VM_PID" || rc=$?
    VM_PID=
    cat "$VM_LOG"
    sed 's/\t\([^\t]*\)$/\t\1 (in the background)/' "$VM_LOG.stages" >> "$AINET_STAGE_LOG" 2>/dev/null || true
    return "$rc"
}
trap 'rc=$?; [ "$rc" = 0 ] || vm_tier_stop; stage_table' EXIT

stage "system packages" bash tests/system-deps.sh
stage "setup (.venv, pip, libyang)" make -s --no-print-directory setup
stage "test judges (npm: mermaid)" bash tests/js-deps.sh

# The SONiC YANG models (sonic-buildimage's yang-models, Apache-2.0) sit beside the checkout in
# ../shared/validators where CI has them; the YANG tests skip, naming the variable, elsewhere.
if [ -z "${AINET_SONIC_YANG_DIR:-}" ] && [ -d "$ROOT/../shared/validators/sonic-yang-models" ]; then
    export AINET_SONIC_YANG_DIR=$ROOT/../shared/validators/sonic-yang-models
fi
echo "SONiC YANG models: ${AINET_SONIC_YANG_DIR:-none (the YANG tests skip)}"
# The Spiderpool and SR-IOV operator CRDs (Apache-2.0), for the Kubernetes objects' schema check.
if [ -z "${AINET_K8S_CRD_DIR:-}" ] && [ -d "$ROOT/../shared/validators/k8s" ]; then
    export AINET_K8S_CRD_DIR=$ROOT/../shared/validators/k8s
fi
echo "Kubernetes CRDs: ${AINET_K8S_CRD_DIR:-none (the CRD tests skip)}"
"$BIN/python" -c "import libyang" 2>/dev/null && echo "Python libyang: installed" \
    || echo "Python libyang: missing (tests/yang-deps.sh could not build it; the YANG tests fail if models are given)"

if [ "$LAB" = 1 ] && [ "$VM_TIER" = background ]; then
    mkdir -p "$(dirname "$VM_LOG")"
    : > "$VM_LOG.stages"
    printf '\n=== molecule rdma_vm (the VM tier) started in the background: %s ===\n' "$VM_LOG"
    VM_START=$(date +%s)
    # a process group of its own (set -m), so that a failed stage can stop all of it
    set -m
    AINET_STAGE_LOG=$VM_LOG.stages AINET_LAB_PREFIX=$VM_PREFIX bash tests/molecule.sh rdma_vm > "$VM_LOG" 2>&1 &
    VM_PID=$!
    set +m
fi

# Two workers (pytest-xdist), one test file per worker at a time (--dist loadfile: a file's module-scoped labs
# and fixtures are built once); every lab, namespace and container of a worker carries a prefix of its own
# (tests/lab/labname.py). AINET_PYTEST_WORKERS=0 runs in one process. The 20 slowest tests end the output.
stage "pytest: unit and integration" "$BIN/python" -m pytest -q -p no:cacheprovider --durations=20 \
    -n "${AINET_PYTEST_WORKERS:-2}" --dist loadfile tests/unit tests/integration

stage "ansible-lint --profile production" ansible-lint --profile production --nocolor

stage "antsibull-changelog lint" antsibull-changelog lint

stage "collection build and install" bash tests/build-install.sh

stage "ansible-test sanity" bash tests/sanity/run.sh

if ls molecule/*/molecule.yml >/dev/null 2>&1; then
    if [ "${AINET_SKIP_LAB:-0}" = 1 ]; then
        echo "molecule: skipped (AINET_SKIP_LAB=1)"
    elif [ "$(id -u)" != 0 ]; then
        echo "molecule: skipped (the lab needs root for network namespaces)"
    else
        printf '\n=== molecule scenarios on the container lab ===\n'
        # a row per scenario in the stage table
        scenarios=()
        for file in molecule/*/molecule.yml; do
            name=$(basename "$(dirname "$file")")
            [ "$name" = rdma_vm ] || scenarios+=("$name")
        done
        bash tests/molecule.sh "${scenarios[@]}"
        case "$VM_TIER" in
            background) stage "molecule rdma_vm (the VM tier): its end" vm_tier_wait ;;
            serial) bash tests/molecule.sh rdma_vm ;;
            skip) echo "molecule rdma_vm (the VM tier): skipped (AINET_VM_TIER=skip)" ;;
        esac
    fi
fi
if [ "$(id -u)" != 0 ] && [ "${AINET_SKIP_LAB:-0}" != 1 ]; then
    echo "the lab layers (namespace lab, containers, molecule) need root and were skipped;" >&2
    echo "run as root, or set AINET_SKIP_LAB=1 to accept a run without them" >&2
    exit 1
fi
printf '\n=== all tests passed ===\n'
