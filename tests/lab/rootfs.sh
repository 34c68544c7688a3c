#!/usr/bin/env bash
# Build the Debian root filesystem the lab's GPU-node containers boot from
# (systemd, sshd, python3, iproute2; python3-apt for ansible.builtin.apt; dkms (without kernel headers: the
# DOCA stand-in's modules stay unbuilt, tests/lab/doca_standin.py); lldpd, installed but disabled (its frames
# would blur the rail tests' packet counters: the cabling test starts it, on the nodes through the role and in
# the ToRs' namespaces through tests/lab/lab.py); netplan.io, which the molecule scenario
# `shared` uses; sudo and the login user ops, uid 1000, that Ansible becomes root
# from), once; later runs reuse it.
#   usage: tests/lab/rootfs.sh [DIR]     (default build/lab/rootfs)
# Needs root and mmdebstrap; packages come from the machine's Debian mirror.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DEST=${1:-$ROOT/build/lab/rootfs}
PACKAGES=systemd-sysv,dbus,openssh-server,python3,python3-apt,dkms,iproute2,iputils-ping,procps,tcpdump,netbase,netplan.io,sudo,lldpd
# The rootfs is rebuilt when this script or the files it copies in change.
HERE=$(dirname "${BASH_SOURCE[0]}")
STAMP="$(cat "${BASH_SOURCE[0]}" "$HERE/files/ainet-lab-sysfs-ro.service" | sha256sum | cut -c1-16)"
# One build at a time: the suite's pytest workers and molecule may all ask for it at once.
mkdir -p "$(dirname "$DEST")"
exec 9> "$DEST.lock"
flock 9
if [ -f "$DEST/.ainet-rootfs" ] && [ "$(cat "$DEST/.ainet-rootfs")" = "$STAMP" ]; then
    echo "rootfs: up to date at $DEST"
    exit 0
fi
rm -rf "$DEST" "$DEST.tmp"
mkdir -p "$(dirname "$DEST")"
# A rootfs built before on this machine, kept by its content hash (CI's fresh clone copies it, seconds instead
# of minutes).
CACHE=${AINET_TEST_CACHE:-/var/cache/ainet-fabric-tests}/lab-rootfs
if [ -f "$CACHE/$STAMP/.ainet-rootfs" ]; then
    cp -a "$CACHE/$STAMP" "$DEST.tmp"
    mv "$DEST.tmp" "$DEST"
    echo "rootfs: copied ($STAMP) from the cache $CACHE to $DEST"
    exit 0
fi
# The hooks are run by mmdebstrap with the rootfs as $1: single quotes on purpose.
# shellcheck disable=SC2016
mmdebstrap --quiet --variant=minbase --include="$PACKAGES" \
    --customize-hook='chroot "$1" systemctl mask getty@tty1.service console-getty.service systemd-logind.service apt-daily.timer apt-daily-upgrade.timer; chroot "$1" systemctl disable lldpd.service' \
    --customize-hook='echo "PermitRootLogin prohibit-password" > "$1/etc/ssh/sshd_config.d/ainet-lab.conf"' \
    --customize-hook='echo "UseDNS no" >> "$1/etc/ssh/sshd_config.d/ainet-lab.conf"' \
    --customize-hook="copy-in $HERE/files/ainet-lab-sysfs-ro.service /etc/systemd/system" \
    --customize-hook='chroot "$1" systemctl enable ainet-lab-sysfs-ro.service' \
    --customize-hook='rm -f "$1/etc/hostname"; : > "$1/etc/machine-id"' \
    --customize-hook='chroot "$1" useradd --create-home --uid 1000 --shell /bin/bash ops' \
    --customize-hook='echo "ops ALL=(ALL) NOPASSWD: ALL" > "$1/etc/sudoers.d/ops"; chmod 0440 "$1/etc/sudoers.d/ops"' \
    bookworm "$DEST.tmp"
echo "$STAMP" > "$DEST.tmp/.ainet-rootfs"
mv "$DEST.tmp" "$DEST"
echo "rootfs: built at $DEST ($(du -sh "$DEST" | cut -f1))"
# Into the cache (only this build's), the marker file last so a half copy is never taken.
if mkdir -p "$CACHE" 2>/dev/null; then
    find "$CACHE" -mindepth 1 -maxdepth 1 ! -name "$STAMP" -exec rm -rf {} +
    rm -rf "${CACHE:?}/${STAMP:?}"
    if cp -a "$DEST" "$CACHE/$STAMP.tmp" && rm -f "$CACHE/$STAMP.tmp/.ainet-rootfs" && mv "$CACHE/$STAMP.tmp" "$CACHE/$STAMP" \
            && echo "$STAMP" > "$CACHE/$STAMP/.ainet-rootfs"; then
        chmod go-rwx "$CACHE"
        echo "rootfs: kept in the cache $CACHE/$STAMP"
    else
        rm -rf "${CACHE:?}/${STAMP:?}.tmp" "${CACHE:?}/${STAMP:?}"
        echo "rootfs: could not keep it in the cache $CACHE (the next clone builds it again)" >&2
    fi
fi
