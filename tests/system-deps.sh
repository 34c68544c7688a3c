#!/usr/bin/env bash
# The Debian packages the test suite needs beyond Python: iproute2, tcpdump and ping for the
# namespace lab, podman, runc, mmdebstrap and ssh for the container lab and molecule, shellcheck
# for ansible-test sanity, gnupg for the stand-in DOCA mirror (tests/lab/doca_standin.py), Debian's chromium for the lossless report's headless screenshot
# (tests/integration/test_lossless_report_browser.py), nodejs and npm for the Mermaid parser that judges the plan's
# diagram (tests/js-deps.sh installs it). Installs the missing ones when run as root
# with apt-get; otherwise lists them and fails, unless AINET_SKIP_LAB=1 (then only shellcheck, nodejs and npm are
# needed). Nothing is fetched when everything is already installed, so it runs offline then.
set -euo pipefail
need=()
pairs="make:make git:git ip:iproute2 shellcheck:shellcheck node:nodejs npm:npm"
if [ "${AINET_SKIP_LAB:-0}" != 1 ]; then
    pairs="$pairs tcpdump:tcpdump ping:iputils-ping ssh:openssh-client ssh-keygen:openssh-client"
    pairs="$pairs podman:podman runc:runc mmdebstrap:mmdebstrap chromium:chromium gpg:gnupg dpkg-deb:dpkg"
fi
for pair in $pairs; do
    command -v "${pair%%:*}" >/dev/null || need+=("${pair#*:}")
done
[ "${#need[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || echo "apt-get update failed (offline?); trying the package lists already here" >&2
    apt-get install -y -qq "${need[@]}" >/dev/null
else
    echo "missing: ${need[*]} (apt-get install them as root, or set AINET_SKIP_LAB=1 to skip the lab layers)" >&2
    exit 1
fi
