#!/usr/bin/env bash
# The Debian packages the test suite needs beyond Python: iproute2, tcpdump and ping for the
# namespace lab, podman, runc, mmdebstrap and ssh for the container lab and molecule, shellcheck
# for ansible-test sanity, gnupg for the stand-in DOCA mirror (tests/lab/doca_standin.py), Debian's chromium for the lossless report's headless screenshot
# (tests/integration/test_lossless_report_browser.py), grub-common for GRUB's own grub-script-check (the gpu_host
# kernel arguments: tests/unit/plugins/module_utils/test_kernel_args_grammar.py), nodejs and npm for the Mermaid
# parser that judges the plan's diagram (tests/js-deps.sh installs it), Slurm 22.05 and munge for the
# Slurm lab (tests/lab/slurm_lab.py), ibsim-utils, libumad2sim0, opensm and infiniband-diags for the simulated
# InfiniBand subnet (tests/lab/ib_lab.py; the labs run their own daemons, so the packages' services (munge, slurmd,
# slurmctld, opensm) are never started here: a policy-rc.d denies them for the duration of the install). Installs the missing ones when run as root
# with apt-get; otherwise lists them and fails, unless AINET_SKIP_LAB=1 (then only shellcheck, grub-common,
# nodejs and npm are needed). Nothing is fetched when everything is already installed, so it runs offline then.
set -euo pipefail
need=()
pairs="make:make git:git ip:iproute2 shellcheck:shellcheck grub-script-check:grub-common node:nodejs npm:npm"
if [ "${AINET_SKIP_LAB:-0}" != 1 ]; then
    pairs="$pairs tcpdump:tcpdump ping:iputils-ping ssh:openssh-client ssh-keygen:openssh-client"
    pairs="$pairs podman:podman runc:runc mmdebstrap:mmdebstrap chromium:chromium gpg:gnupg dpkg-deb:dpkg"
    pairs="$pairs slurmctld:slurmctld slurmd:slurmd scontrol:slurm-client munged:munge unshare:util-linux"
    pairs="$pairs ibsim:ibsim-utils opensm:opensm ibnetdiscover:infiniband-diags"
fi
for pair in $pairs; do
    command -v "${pair%%:*}" >/dev/null || need+=("${pair#*:}")
done
# The InfiniBand lab's umad2sim wrapper is a library, not a command.
if [ "${AINET_SKIP_LAB:-0}" != 1 ] && [ ! -e /usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so ]; then
    need+=(libumad2sim0)
fi
[ "${#need[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # No service of an installed package may start (munge, slurmd, slurmctld, opensm would hold the lab's
    # ports and sockets): deny them all while installing, unless the machine already has a policy.
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    apt-get update -qq || echo "apt-get update failed (offline?); trying the package lists already here" >&2
    apt-get install -y -qq "${need[@]}" >/dev/null
else
    echo "missing: ${need[*]} (apt-get install them as root, or set AINET_SKIP_LAB=1 to skip the lab layers)" >&2
    exit 1
fi
