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
trap stage_table EXIT

stage "system packages" bash tests/system-deps.sh
stage "setup (.venv, pip, libyang)" make -s --no-print-directory setup

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

# The 20 slowest tests are listed at the end of pytest's output.
stage "pytest: unit and integration" "$BIN/python" -m pytest -q -p no:cacheprovider --durations=20 \
    tests/unit tests/integration

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
        printf '\n=== molecule scenarios on the lab ===\n'
        bash tests/molecule.sh   # a row per scenario in the stage table
    fi
fi
if [ "$(id -u)" != 0 ] && [ "${AINET_SKIP_LAB:-0}" != 1 ]; then
    echo "the lab layers (namespace lab, containers, molecule) need root and were skipped;" >&2
    echo "run as root, or set AINET_SKIP_LAB=1 to accept a run without them" >&2
    exit 1
fi
printf '\n=== all tests passed ===\n'
