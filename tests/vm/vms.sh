#!/usr/bin/env bash
# The VM tier's lab (issue 11): 2 qemu TCG VMs (q35, 1 vCPU, 1 GiB) with a
# virtio-net management NIC and, per rail, an emulated Intel 82576 (`-device
# igb`, real SR-IOV) behind its own PCIe root port (real ACS), all inside one
# network namespace `<prefix>-vm`:
#
#   br-mgmt   10.251.0.1/24  controller side; vm1 10.251.0.11, vm2 10.251.0.12
#   br-rail1  no address     rail 1 "ToR" (igb #1 of each VM)
#   br-rail2  no address     rail 2 "ToR" (igb #2 of each VM)
#
# No NAT, no default route, no link out of the namespace: the VMs reach nothing
# but each other and the bridge. ssh/Ansible on this machine reach them through
# `ProxyCommand=python3 tests/lab/netns_proxy.py --netns <prefix>-vm %h %p` (the lab's relay).
#
#   usage: tests/vm/vms.sh up|down|status [--prefix P] [--keep-disks]
#          tests/vm/vms.sh serve --dir DIR [--prefix P]
#
#   up      install qemu >= 8 if needed (bookworm-backports), build the image if
#           needed (image.sh, cached), create namespace/bridges/taps, start the
#           VMs that are not running, wait for SSH, write
#           build/vm/<prefix>/inventory.yml and build/vm/<prefix>/ssh_config
#           (ssh -F build/vm/<prefix>/ssh_config vm1).
#   down    stop the VMs, delete the namespace (and with it bridges and taps) and
#           the per-VM overlays (--keep-disks keeps them for the next `up`).
#   status  namespace, VMs (pid, SSH), exit 0 only when all is up.
#   serve   serve DIR over HTTP to the VMs, at http://10.251.0.1:8780/ in the namespace (the controller's
#           side of br-mgmt; nothing outside the lab reaches it), until `down`; once (a running server of
#           the lab is left as it is). The scenario's stand-in DOCA-OFED mirror (molecule/rdma_vm/prepare.yml).
#
# The prefix: --prefix, else $AINET_LAB_PREFIX, else "ainetvm" (2-12 lower-case
# letters/digits). Files: build/vm/<prefix>/ (pidfiles, serial console logs
# vmN.console.log, qemu monitors, overlays vmN.qcow2, inventory, timings).
# Environment: AINET_VM_BOOT_TIMEOUT (s, default 420), AINET_VM_MEM (MiB, 1024),
# AINET_VM_IOMMU=1 (emulated Intel IOMMU + intel_iommu=on: the guest kernel then
# enables ACS on the root ports itself, as on a real GPU node; default off).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/tests/vm
VMDIR=${AINET_VM_DIR:-$ROOT/build/vm}
VMS=(vm1 vm2)
RAILS=(1 2)
MGMT_NET=10.251.0
CONTROLLER=$MGMT_NET.1
BOOT_TIMEOUT=${AINET_VM_BOOT_TIMEOUT:-420}
MEM=${AINET_VM_MEM:-1024}
IOMMU=${AINET_VM_IOMMU:-0}
BACKPORTS_LIST=/etc/apt/sources.list.d/ainet-bookworm-backports.list
SERVE_PORT=8780

die() { echo "vms.sh: $*" >&2; exit 1; }
log() { echo "vms: $*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

ACTION=${1:-}
shift || true
PREFIX=${AINET_LAB_PREFIX:-ainetvm}
KEEP_DISKS=0
SERVE_DIR=
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || die "--prefix needs a value"; PREFIX=$2; shift 2 ;;
        --prefix=*) PREFIX=${1#--prefix=}; shift ;;
        --keep-disks) KEEP_DISKS=1; shift ;;
        --dir) [ $# -ge 2 ] || die "--dir needs a value"; SERVE_DIR=$2; shift 2 ;;
        *) die "unknown argument '$1' (usage: vms.sh up|down|status [--prefix P] [--keep-disks], vms.sh serve --dir DIR [--prefix P])" ;;
    esac
done
case "$ACTION" in
    up|down|status) ;;
    serve) [ -d "$SERVE_DIR" ] || die "serve: --dir '$SERVE_DIR' is not a directory" ;;
    *) die "usage: vms.sh up|down|status [--prefix P] [--keep-disks], vms.sh serve --dir DIR [--prefix P]" ;;
esac
[[ "$PREFIX" =~ ^[a-z][a-z0-9]{1,11}$ ]] || die "prefix '$PREFIX': use 2-12 lower-case letters and digits, starting with a letter"
[ "$(id -u)" = 0 ] || die "must run as root (network namespaces, taps, qemu inside the namespace)"

NS=$PREFIX-vm
DIR=$VMDIR/$PREFIX

vm_index() { echo "${1#vm}"; }
vm_ip() { echo "$MGMT_NET.$((10 + $(vm_index "$1")))"; }
# 52:54:00 (qemu's OUI) : a1 : VM : NIC (0 management, N rail N)
vm_mac() { printf '52:54:00:a1:%02x:%02x' "$(vm_index "$1")" "$2"; }
ns_exists() { ip netns list | awk '{print $1}' | grep -qx "$NS"; }
nsx() { ip netns exec "$NS" "$@"; }
vm_pid() {
    local pidfile=$DIR/$1.pid pid
    [ -f "$pidfile" ] || return 1
    pid=$(cat "$pidfile" 2>/dev/null) || return 1
    [ -n "$pid" ] && [ -d "/proc/$pid" ] && grep -q qemu "/proc/$pid/comm" 2>/dev/null || return 1
    echo "$pid"
}
ssh_banner() {  # ssh_banner IP: 0 when sshd answers with its banner
    # shellcheck disable=SC2016
    nsx timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/22" && head -c 4 <&3' "$1" 2>/dev/null | grep -q '^SSH-'
}
PROXY="/usr/bin/python3 $ROOT/tests/lab/netns_proxy.py --netns $NS %h %p"  # the lab's relay
ssh_opts() { printf '%s\n' -F "$DIR/ssh_config" -o ConnectTimeout=10; }  # no spaces inside
ensure_qemu() {
    local have=0
    if command -v qemu-system-x86_64 >/dev/null && command -v qemu-img >/dev/null; then
        local major
        major=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9]*\).*/\1/p')
        if [ "${major:-0}" -ge 8 ] && qemu-system-x86_64 -device help 2>/dev/null | grep -q '^name "igb"'; then
            have=1
        fi
    fi
    if [ "$have" = 0 ]; then
        local t
        t=$(now)
        log "installing qemu-system-x86 >= 8 from bookworm-backports (bookworm's 7.2 lacks -device igb) ..."
        if [ ! -f "$BACKPORTS_LIST" ]; then
            echo "deb http://deb.debian.org/debian bookworm-backports main" > "$BACKPORTS_LIST"
        fi
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            -t bookworm-backports qemu-system-x86 qemu-utils
        qemu-system-x86_64 -device help | grep -q '^name "igb"' \
            || die "installed $(qemu-system-x86_64 --version | head -n1) but it lists no igb device"
        log "qemu installed in $(since "$t") s"
    fi
    if ! command -v grub-mkrescue >/dev/null || ! command -v xorriso >/dev/null \
            || [ ! -d /usr/lib/grub/i386-pc ]; then
        log "installing grub-pc-bin and xorriso (the VMs' GRUB boot image; the host's own boot is not touched)"
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends grub-pc-bin xorriso
    fi
    log "$(qemu-system-x86_64 --version | head -n1) (igb: yes)"
}

net_up() {
    if ! ns_exists; then
        ip netns add "$NS"
        log "namespace $NS created"
    fi
    nsx ip link set lo up
    nsx sysctl -qw net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0
    local br
    for br in br-mgmt "${RAILS[@]/#/br-rail}"; do
        nsx ip link show "$br" >/dev/null 2>&1 || nsx ip link add "$br" type bridge stp_state 0 forward_delay 0
        nsx ip link set "$br" up
    done
    nsx ip addr replace "$CONTROLLER/24" dev br-mgmt
    local vm r
    for vm in "${VMS[@]}"; do
        tap_up "$vm-m" br-mgmt
        for r in "${RAILS[@]}"; do tap_up "$vm-r$r" "br-rail$r"; done
    done
    if nsx ip route show default | grep -q .; then
        die "namespace $NS has a default route: refusing (traffic must stay inside)"
    fi
}
tap_up() {
    nsx ip link show "$1" >/dev/null 2>&1 || nsx ip tuntap add dev "$1" mode tap
    nsx ip link set "$1" master "$2" up
}

# The VM's boot: SeaBIOS starts GRUB from a small per-VM ISO whose grub.cfg sets $ainet_vm_args (this VM's
# console, hostname and management address, which differ per VM on one shared base image) and then reads
# /boot/grub/grub.cfg from the VM's own disk. That file is the guest's: image.sh writes the first boot's
# entry, update-grub in the guest (gpu_host's GRUB drop-in) rewrites it, and every boot takes the kernel,
# initramfs and arguments from it, as a node that boots from its disk does.
boot_image() {
    local vm=$1 append=$2 tree=$DIR/$1.boot.d
    rm -rf "$tree"
    mkdir -p "$tree/boot/grub"
    {
        echo "# $vm of the VM tier (tests/vm/vms.sh): the disk's own grub.cfg, with this VM's arguments"
        echo "serial --unit=0 --speed=115200"
        echo "terminal_input serial"
        echo "terminal_output serial"
        echo "set ainet_vm_args=\"$append\""
        echo "export ainet_vm_args"
        echo "search --no-floppy --label ainet-root --set=root"
        echo "configfile (\$root)/boot/grub/grub.cfg"
    } > "$tree/boot/grub/grub.cfg"
    grub-mkrescue -o "$DIR/$vm.boot.iso" "$tree" > "$DIR/$vm.boot.log" 2>&1 \
        || die "$vm: grub-mkrescue failed; see $DIR/$vm.boot.log"
    rm -rf "$tree"
}

start_vm() {
    local vm=$1 ip stamp overlay
    ip=$(vm_ip "$vm")
    overlay=$DIR/$vm.qcow2
    stamp=$(cat "$VMDIR/image.stamp")
    if [ -f "$overlay" ] && [ "$(cat "$DIR/$vm.base-stamp" 2>/dev/null)" != "$stamp" ]; then
        log "$vm: base image changed, new overlay"
        rm -f "$overlay"
    fi
    if [ ! -f "$overlay" ]; then
        qemu-img create -q -f qcow2 -F raw -b "$VMDIR/base.raw" "$overlay"
        echo "$stamp" > "$DIR/$vm.base-stamp"
    fi
    local append="console=ttyS0,115200 systemd.hostname=$vm ainet.mgmt=$ip/24 panic=10"
    local iommu=()
    if [ "$IOMMU" = 1 ]; then
        iommu=(-device "intel-iommu,intremap=off")
        append="$append intel_iommu=on"
    fi
    boot_image "$vm" "$append"
    # shellcheck disable=SC2054
    local args=(
        -name "$PREFIX-$vm" -machine q35 -accel tcg -m "$MEM" -smp 1
        -nodefaults -no-user-config -display none -vga none
        "${iommu[@]}"
        -drive "file=$DIR/$vm.boot.iso,if=none,id=boot,media=cdrom,readonly=on"
        -device "ide-cd,drive=boot,bus=ide.0,bootindex=0"
        -drive "file=$overlay,if=virtio,format=qcow2,cache=unsafe,discard=unmap"
        -object rng-random,id=rng0,filename=/dev/urandom -device virtio-rng-pci,rng=rng0
        -netdev "tap,id=mgmt,ifname=$vm-m,script=no,downscript=no"
        -device "virtio-net-pci,netdev=mgmt,mac=$(vm_mac "$vm" 0)"
    )
    local r
    for r in "${RAILS[@]}"; do
        args+=(
            -device "pcie-root-port,id=rp$r,bus=pcie.0,chassis=$r,slot=$r"
            -netdev "tap,id=rail$r,ifname=$vm-r$r,script=no,downscript=no"
            -device "igb,netdev=rail$r,bus=rp$r,mac=$(vm_mac "$vm" "$r")"
        )
    done
    args+=(
        -serial "file:$DIR/$vm.console.log"
        -monitor "unix:$DIR/$vm.monitor,server,nowait"
        -pidfile "$DIR/$vm.pid" -daemonize
    )
    printf '%q ' qemu-system-x86_64 "${args[@]}" > "$DIR/$vm.cmdline"; echo >> "$DIR/$vm.cmdline"
    nsx qemu-system-x86_64 "${args[@]}"
    log "$vm: qemu started (pid $(cat "$DIR/$vm.pid"), mgmt $ip, console $DIR/$vm.console.log)"
}

write_inventory() {
    local vm r tmp=$DIR/inventory.yml.tmp
    {
        echo "# Written by tests/vm/vms.sh up --prefix $PREFIX: the VM tier's 2 qemu VMs,"
        echo "# reached by SSH through the network namespace $NS. Do not edit."
        echo "all:"
        echo "  vars:"
        echo "    ansible_user: root"
        echo "    ansible_ssh_private_key_file: $VMDIR/id_ed25519"
        echo "    ansible_python_interpreter: /usr/bin/python3"
        echo "    ansible_ssh_pipelining: true"
        echo "    ansible_ssh_common_args: >-"
        echo "      -o ProxyCommand=\"$PROXY\""
        echo "      -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
        echo "      -o IdentitiesOnly=yes -o ControlPath=$DIR/cp/%C"
        echo "    ainet_vm_netns: $NS"
        echo "    ainet_vm_prefix: $PREFIX"
        echo "  hosts:"
        for vm in "${VMS[@]}"; do
            echo "    $vm:"
            echo "      ansible_host: $(vm_ip "$vm")"
            echo "      ainet_vm_mgmt_mac: \"$(vm_mac "$vm" 0)\""
            echo "      ainet_vm_rail_macs:"
            for r in "${RAILS[@]}"; do echo "        rail$r: \"$(vm_mac "$vm" "$r")\""; done
        done
    } > "$tmp"
    mv "$tmp" "$DIR/inventory.yml"
    {
        echo "# ssh -F $DIR/ssh_config vm1"
        for vm in "${VMS[@]}"; do
            echo "Host $vm"
            echo "  HostName $(vm_ip "$vm")"
            echo "  User root"
            echo "  IdentityFile $VMDIR/id_ed25519"
            echo "  IdentitiesOnly yes"
            echo "  ProxyCommand $PROXY"
            echo "  StrictHostKeyChecking no"
            echo "  UserKnownHostsFile /dev/null"
            echo "  LogLevel ERROR"
            echo "  BatchMode yes"
        done
    } > "$DIR/ssh_config"
}

wait_ssh() {  # wait_ssh VM START_TIME [boot|running]
    local vm=$1 start=$2 ip
    ip=$(vm_ip "$vm")
    while ! ssh_banner "$ip"; do
        vm_pid "$vm" >/dev/null || die "$vm: qemu exited during boot; see $DIR/$vm.console.log"
        if awk -v a="$start" -v b="$(now)" -v t="$BOOT_TIMEOUT" 'BEGIN { exit !(b - a > t) }'; then
            tail -n 20 "$DIR/$vm.console.log" >&2 || true
            die "$vm: no SSH on $ip after ${BOOT_TIMEOUT} s; console: $DIR/$vm.console.log"
        fi
        sleep 1
    done
    local banner login=1
    banner=$(since "$start")
    # shellcheck disable=SC2046
    until ssh $(ssh_opts) "$vm" true 2>/dev/null; do
        login=$((login + 1))
        [ "$login" -le 30 ] || die "$vm: sshd answers but root login by key fails: ssh -F $DIR/ssh_config $vm"
        sleep 1
    done
    log "$vm: SSH banner after $banner s, root login after $(since "$start") s"
    [ "${3:-boot}" = boot ] || return 0
    echo "$vm boot_to_ssh_banner_s=$banner boot_to_login_s=$(since "$start") at=$(date -u +%FT%TZ)" >> "$DIR/timings.log"
}

do_up() {
    local t0
    t0=$(now)
    ensure_qemu
    "$HERE/image.sh"
    mkdir -p "$DIR" "$DIR/cp"
    chmod 0700 "$DIR/cp"
    net_up
    local vm
    declare -A started=()
    for vm in "${VMS[@]}"; do
        if vm_pid "$vm" >/dev/null; then
            log "$vm: already running (pid $(vm_pid "$vm"))"
        else
            started[$vm]=$(now)
            start_vm "$vm"
        fi
    done
    write_inventory
    for vm in "${VMS[@]}"; do
        if [ -n "${started[$vm]:-}" ]; then
            wait_ssh "$vm" "${started[$vm]}"
        else
            wait_ssh "$vm" "$(now)" running
        fi
    done
    log "up in $(since "$t0") s; inventory $DIR/inventory.yml"
    log "try: ansible -i $DIR/inventory.yml all -m ping   or   ssh -F $DIR/ssh_config vm1"
}

do_down() {
    local vm pid
    for vm in "${VMS[@]}"; do
        if pid=$(vm_pid "$vm"); then
            # what the VM cost this machine: qemu is daemonized, so no caller's rusage (time -v) counts it
            local cpu
            cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/$pid/stat" 2>/dev/null || echo "?")
            log "$vm: qemu used $cpu s of CPU since it started"
            echo "$vm qemu_cpu_s=$cpu at=$(date -u +%FT%TZ)" >> "$DIR/timings.log"
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 50); do [ -d "/proc/$pid" ] || break; sleep 0.2; done
            if [ -d "/proc/$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; sleep 0.5; fi
            log "$vm: stopped (pid $pid)"
        fi
        rm -f "$DIR/$vm.pid" "$DIR/$vm.monitor"
    done
    if ns_exists; then
        # Anything else still running in the namespace was started for it (ssh relays).
        for pid in $(ip netns pids "$NS" 2>/dev/null); do kill -TERM "$pid" 2>/dev/null || true; done
        sleep 0.3
        for pid in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
        ip netns del "$NS"
        log "namespace $NS deleted (with its bridges and taps)"
    fi
    if [ "$KEEP_DISKS" = 0 ]; then
        rm -f "$DIR"/vm*.qcow2 "$DIR"/vm*.base-stamp
    fi
    rm -rf "$DIR/cp"
    rm -f "$DIR/inventory.yml" "$DIR/ssh_config" "$DIR/serve.pid"
    # SSH masters of this lab in Ansible's socket directory (molecule/rdma_vm's control_path, <prefix>-<address>-...):
    # one left by a lab that is gone would take the sessions of the next lab of this prefix (the same addresses)
    # and hang them
    local sock
    for sock in "$HOME/.ansible/cp/$PREFIX"-*; do
        [ -S "$sock" ] || continue
        ssh -o ControlPath="$sock" -O exit "$PREFIX" > /dev/null 2>&1 || true
        rm -f "$sock"
        log "SSH master $sock stopped"
    done
    log "down"
}

do_serve() {  # an HTTP server of the lab, in its namespace, until down (which ends every process in it)
    ns_exists || die "serve: namespace $NS is absent: run vms.sh up --prefix $PREFIX first"
    local url="http://$CONTROLLER:$SERVE_PORT/" pid
    # shellcheck disable=SC2016
    local probe=(timeout 3 /usr/bin/python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1])' "$url")
    if pid=$(cat "$DIR/serve.pid" 2>/dev/null) && [ -d "/proc/$pid" ] && nsx "${probe[@]}" 2>/dev/null; then
        log "serve: $url already answers (pid $pid)"
        return 0
    fi
    # In a session of its own: Ansible ends a task's worker with its whole process group (seen: a server started
    # by a task without it was gone by the next play). ip and setsid exec in turn (setsid forks only a group
    # leader, which a background job of a script is not): $! is the server's pid. down ends it with the namespace.
    ip netns exec "$NS" setsid /usr/bin/python3 -m http.server --bind "$CONTROLLER" --directory "$SERVE_DIR" \
        "$SERVE_PORT" > "$DIR/serve.log" 2>&1 < /dev/null &
    echo "$!" > "$DIR/serve.pid"
    local try
    for try in $(seq 50); do
        if nsx "${probe[@]}" 2>/dev/null; then
            log "serve: $SERVE_DIR at $url (pid $(cat "$DIR/serve.pid"), log $DIR/serve.log)"
            return 0
        fi
        [ -d "/proc/$(cat "$DIR/serve.pid")" ] || die "serve: the server exited; see $DIR/serve.log"
        sleep 0.2
    done
    die "serve: $url does not answer after $try tries; see $DIR/serve.log"
}

do_status() {
    local ok=0 vm pid
    if ns_exists; then
        log "namespace $NS: present"
        nsx ip -br addr show dev br-mgmt 2>/dev/null | sed 's/^/vms:   /' || true
    else
        log "namespace $NS: absent"; ok=1
    fi
    for vm in "${VMS[@]}"; do
        if pid=$(vm_pid "$vm"); then
            if ns_exists && ssh_banner "$(vm_ip "$vm")"; then
                log "$vm: running (pid $pid), SSH on $(vm_ip "$vm") answers"
            else
                log "$vm: running (pid $pid), SSH not answering yet"; ok=1
            fi
        else
            log "$vm: not running"; ok=1
        fi
    done
    [ -f "$DIR/inventory.yml" ] && log "inventory: $DIR/inventory.yml"
    return "$ok"
}

case "$ACTION" in
    up) do_up ;;
    down) do_down ;;
    status) do_status ;;
    serve) do_serve ;;
esac
