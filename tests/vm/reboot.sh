#!/usr/bin/env bash
# Reboot VMs of the VM tier from inside (`systemctl reboot` over SSH) and time until
# root login by SSH works again with a new boot id. qemu restarts the guest on the same
# qcow2 overlay, so the disk state persists (this script checks that with a marker file
# written before the reboot), and GRUB boots what the disk's /boot/grub/grub.cfg says.
#
#   usage: tests/vm/reboot.sh [--prefix P] VM...      (e.g. vm1, or vm1 vm2)
#
# Several VMs reboot at the same time. Appends to build/vm/<prefix>/timings.log.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PREFIX=${AINET_LAB_PREFIX:-ainetvm}
if [ "${1:-}" = "--prefix" ]; then PREFIX=$2; shift 2; fi
[ $# -ge 1 ] || { echo "usage: reboot.sh [--prefix P] VM..." >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "reboot.sh: must run as root (ssh goes through ip netns exec)" >&2; exit 1; }
DIR=$ROOT/build/vm/$PREFIX
SSHCFG=$DIR/ssh_config
TIMEOUT=${AINET_VM_BOOT_TIMEOUT:-420}
[ -f "$SSHCFG" ] || { echo "reboot.sh: $SSHCFG missing: run tests/vm/vms.sh up --prefix $PREFIX first" >&2; exit 1; }

on() { local vm=$1; shift; ssh -F "$SSHCFG" -o ConnectTimeout=5 "$vm" "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

declare -A boot_id=() marker=() start=()
for vm in "$@"; do
    boot_id[$vm]=$(on "$vm" cat /proc/sys/kernel/random/boot_id)
    marker[$vm]=$(date +%s%N)
    on "$vm" "echo ${marker[$vm]} > /var/tmp/ainet-reboot-marker && sync"
done
for vm in "$@"; do
    start[$vm]=$(now)
    on "$vm" 'systemctl reboot' || true   # the connection may drop: fine
    echo "reboot: $vm: systemctl reboot sent (boot id ${boot_id[$vm]})"
done
rc=0
for vm in "$@"; do
    while :; do
        new=$(on "$vm" cat /proc/sys/kernel/random/boot_id 2>/dev/null || true)
        if [ -n "$new" ] && [ "$new" != "${boot_id[$vm]}" ]; then break; fi
        if awk -v a="${start[$vm]}" -v b="$(now)" -v t="$TIMEOUT" 'BEGIN { exit !(b - a > t) }'; then
            echo "reboot: $vm: no SSH login with a new boot id after $TIMEOUT s; console $DIR/$vm.console.log" >&2
            exit 1
        fi
        sleep 1
    done
    took=$(since "${start[$vm]}")
    got=$(on "$vm" cat /var/tmp/ainet-reboot-marker 2>/dev/null || true)
    if [ "$got" = "${marker[$vm]}" ]; then persists=yes; else persists=no; rc=1; fi
    echo "reboot: $vm: back (SSH login, new boot id $new) after $took s; disk state persisted: $persists"
    echo "$vm reboot_to_login_s=$took persisted=$persists at=$(date -u +%FT%TZ)" >> "$DIR/timings.log"
done
exit "$rc"
