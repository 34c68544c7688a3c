#!/usr/bin/env bash
# Record real tool outputs from the VM tier's 2 VMs as parser test data (issue 11):
# lspci -vvv with SR-IOV and ACS, `ip -d link` of a PF with VFs, rdma system/link/dev
# (text and -j JSON), ibv_devinfo, the GID sysfs files, rping / ib_write_bw -R between
# the VMs over rail 1 (soft-RoCE, rdma_rxe). Changes the VMs' live state (VFs, rxe0,
# rail addresses 192.168.51.1/.2 on rail 1, netns mode toggled and set back).
#
#   usage: tests/vm/record.sh [--prefix P] [OUTDIR]   (default tests/vm/recorded)
#
# Needs the VMs up (tests/vm/vms.sh up). Each output file holds the command's stdout
# verbatim; stderr, when there was any, goes to <file>.stderr; OUTDIR/commands.txt
# lists file, VM, exit status and the exact command.
# Commands run on the VMs are single-quoted on purpose: they expand there.
# shellcheck disable=SC2016
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PREFIX=${AINET_LAB_PREFIX:-ainetvm}
if [ "${1:-}" = "--prefix" ]; then PREFIX=$2; shift 2; fi
OUTDIR=${1:-$ROOT/tests/vm/recorded}
SSHCFG=$ROOT/build/vm/$PREFIX/ssh_config
[ "$(id -u)" = 0 ] || { echo "record.sh: must run as root (ssh goes through ip netns exec)" >&2; exit 1; }
[ -f "$SSHCFG" ] || { echo "record.sh: $SSHCFG missing: run tests/vm/vms.sh up --prefix $PREFIX first" >&2; exit 1; }
mkdir -p "$OUTDIR"
: > "$OUTDIR/commands.txt"

on() { local vm=$1; shift; ssh -F "$SSHCFG" "$vm" "$@"; }
# rec FILE VM COMMAND: stdout verbatim into FILE, stderr into FILE.stderr if any
rec() {
    local file=$1 vm=$2 cmd=$3 rc=0
    on "$vm" "$cmd" > "$OUTDIR/$file" 2> "$OUTDIR/$file.stderr" || rc=$?
    [ -s "$OUTDIR/$file.stderr" ] || rm -f "$OUTDIR/$file.stderr"
    printf '%s\t%s\trc=%s\t%s\n' "$file" "$vm" "$rc" "$cmd" >> "$OUTDIR/commands.txt"
    echo "record: $file ($vm, rc=$rc, $(wc -c < "$OUTDIR/$file") bytes)"
}
# The netdev of a VM's NIC by MAC (rail N of vmK has 52:54:00:a1:0K:0N, see vms.sh).
netdev_of() { on "$1" "ip -o link show | awk -F': ' 'tolower(\$0) ~ /link\\/ether $2/ {print \$2; exit}'"; }

R1_VM1=$(netdev_of vm1 52:54:00:a1:01:01)
R1_VM2=$(netdev_of vm2 52:54:00:a1:02:01)
R2_VM1=$(netdev_of vm1 52:54:00:a1:01:02)
echo "record: rail 1 is $R1_VM1 on vm1, $R1_VM2 on vm2; rail 2 is $R2_VM1 on vm1"

# --- back to a clean state (record.sh may run twice on the same VMs) ---------
on vm1 "rdma link delete rxe0 2>/dev/null; rdma system set netns shared 2>/dev/null; ip addr flush dev $R1_VM1; echo 0 > /sys/class/net/$R1_VM1/device/sriov_numvfs; true"
on vm2 "rdma link delete rxe0 2>/dev/null; ip addr flush dev $R1_VM2; true"

# --- versions --------------------------------------------------------------
rec versions.txt vm1 'uname -a; cat /etc/debian_version; cat /etc/ainet/image-packages; rdma -V; ip -V; lspci --version; ethtool --version'

# --- PCIe: lspci before VFs, the root ports' ACS -----------------------------
rec lspci_vvv.txt vm1 'lspci -vvv'
rec lspci_D_nn.txt vm1 'lspci -D -nn'
rec lspci_tv.txt vm1 'lspci -tv'
RP=$(on vm1 "lspci -D -d ::0604 | awk '{print \$1}'" | tr '\n' ' ')
echo "record: root ports: $RP"
RP1=${RP%% *}
rec setpci_acsctl_read.txt vm1 "for d in $RP; do echo \"\$d ACSCap=\$(setpci -s \$d ECAP_ACS+4.w) ACSCtl=\$(setpci -s \$d ECAP_ACS+6.w)\"; done"
rec lspci_vvv_rootport_acs_on.txt vm1 "setpci -s $RP1 ECAP_ACS+6.w=001d && lspci -vvv -s $RP1"
rec lspci_vvv_rootport_acs_off.txt vm1 "setpci -s $RP1 ECAP_ACS+6.w=0000 && lspci -vvv -s $RP1"

# --- SR-IOV on rail 1 of vm1 -------------------------------------------------
rec ethtool_i_pf.txt vm1 "ethtool -i $R1_VM1"
rec sriov_sysfs_before.txt vm1 "cd /sys/class/net/$R1_VM1/device && grep -H . sriov_totalvfs sriov_numvfs sriov_drivers_autoprobe numa_node"
rec sriov_numvfs_set.txt vm1 "echo 2 > /sys/class/net/$R1_VM1/device/sriov_numvfs && sleep 3 && cat /sys/class/net/$R1_VM1/device/sriov_numvfs"
rec sriov_sysfs_after.txt vm1 "cd /sys/class/net/$R1_VM1/device && grep -H . sriov_totalvfs sriov_numvfs sriov_offset sriov_stride sriov_vf_device numa_node; ls -l virtfn*; for v in virtfn*; do echo \"\$v: \$(ls \$v/net 2>/dev/null)\"; done"
rec sriov_numvfs_change_busy.txt vm1 "echo 3 > /sys/class/net/$R1_VM1/device/sriov_numvfs"
rec sriov_numvfs_too_many.txt vm1 "echo 0 > /sys/class/net/$R1_VM1/device/sriov_numvfs; echo 8 > /sys/class/net/$R1_VM1/device/sriov_numvfs; echo 2 > /sys/class/net/$R1_VM1/device/sriov_numvfs; sleep 3"
rec ip_link_set_vf_mac.txt vm1 "ip link set $R1_VM1 vf 0 mac 52:54:00:b1:01:00"
rec ip_link_set_vf_trust.txt vm1 "ip link set $R1_VM1 vf 0 trust on"
rec ip_link_set_vf_spoofchk.txt vm1 "ip link set $R1_VM1 vf 0 spoofchk off"
rec ip_link_set_vf_max_tx_rate.txt vm1 "ip link set $R1_VM1 vf 1 max_tx_rate 100"
rec ip_link_set_vf_state_unsupported.txt vm1 "ip link set $R1_VM1 vf 1 state disable"
rec ip_link_set_vf_out_of_range.txt vm1 "ip link set $R1_VM1 vf 5 trust on"
rec ip_d_link_pf_with_vfs.txt vm1 "ip -d link show $R1_VM1"
rec ip_j_d_link_pf_with_vfs.txt vm1 "ip -j -d link show $R1_VM1"
rec ip_j_p_d_link_pf_with_vfs.txt vm1 "ip -j -p -d link show $R1_VM1"
rec ip_j_d_link_all.txt vm1 'ip -j -d link show'
rec ip_br_link.txt vm1 'ip -br link show'
rec ethtool_i_vf.txt vm1 "ethtool -i \$(ls /sys/class/net/$R1_VM1/device/virtfn0/net | head -n1)"
rec lspci_vvv_with_vfs.txt vm1 'lspci -vvv'

# --- soft-RoCE on rail 1 of both VMs ----------------------------------------
rec rdma_link_add_vm1.txt vm1 "ip link set $R1_VM1 up && ip addr replace 192.168.51.1/24 dev $R1_VM1 && modprobe rdma_rxe && rdma link add rxe0 type rxe netdev $R1_VM1"
rec rdma_link_add_vm2.txt vm2 "ip link set $R1_VM2 up && ip addr replace 192.168.51.2/24 dev $R1_VM2 && modprobe rdma_rxe && rdma link add rxe0 type rxe netdev $R1_VM2"
rec rdma_link_add_duplicate.txt vm1 "rdma link add rxe0 type rxe netdev $R1_VM1"
rec rdma_link_add_bad_netdev.txt vm1 'rdma link add rxe9 type rxe netdev nosuchdev0'
on vm1 'sleep 3'
rec ping_rail1.txt vm1 'ping -c 3 -W 2 192.168.51.2'
rec rdma_system_show.txt vm1 'rdma system show'
rec rdma_j_system_show.txt vm1 'rdma -j system show'
rec rdma_system_set_exclusive.txt vm1 'rdma system set netns exclusive'
rec rdma_system_show_exclusive.txt vm1 'rdma system show'
rec rdma_j_system_show_exclusive.txt vm1 'rdma -j system show'
rec rdma_system_set_shared.txt vm1 'rdma system set netns shared'
rec ib_core_netns_mode.txt vm1 'grep -H . /sys/module/ib_core/parameters/netns_mode'
rec rdma_link_show.txt vm1 'rdma link show'
rec rdma_d_link_show.txt vm1 'rdma -d link show'
rec rdma_j_link_show.txt vm1 'rdma -j link show'
rec rdma_j_d_link_show.txt vm1 'rdma -j -d link show'
rec rdma_j_p_link_show.txt vm1 'rdma -j -p link show'
rec rdma_dev_show.txt vm1 'rdma dev show'
rec rdma_d_dev_show.txt vm1 'rdma -d dev show'
rec rdma_j_dev_show.txt vm1 'rdma -j dev show'
rec rdma_res_show.txt vm1 'rdma res show'
rec rdma_statistic_show.txt vm1 'rdma statistic show'
rec ibv_devices.txt vm1 'ibv_devices'
rec ibv_devinfo.txt vm1 'ibv_devinfo'
rec ibv_devinfo_v.txt vm1 'ibv_devinfo -v'
rec ibstat.txt vm1 'ibstat'
# show_gids (a Mellanox OFED script, not in Debian) reads these files:
rec gids_sysfs_table.txt vm1 'for dev in /sys/class/infiniband/*; do for port in $dev/ports/*; do for g in $port/gids/*; do i=${g##*/}; gid=$(cat $g); [ "$gid" = "0000:0000:0000:0000:0000:0000:0000:0000" ] && continue; printf "%s\t%s\t%s\t%s\t%s\t%s\n" "${dev##*/}" "${port##*/}" "$i" "$gid" "$(cat $port/gid_attrs/types/$i 2>/dev/null)" "$(cat $port/gid_attrs/ndevs/$i 2>/dev/null)"; done; done; done'
# stderr kept in line on purpose: unused GID slots answer "Invalid argument" for types/ndevs.
rec gids_sysfs_grep.txt vm1 'cd /sys/class/infiniband/rxe0/ports/1 && for i in 0 1 2 3 4 5; do grep -H . gids/$i gid_attrs/types/$i gid_attrs/ndevs/$i 2>&1; done'
rec rdma_port_sysfs.txt vm1 'cd /sys/class/infiniband/rxe0 && grep -H . node_guid node_type fw_ver sys_image_guid ports/1/state ports/1/phys_state ports/1/link_layer ports/1/rate ports/1/lid ports/1/gid_attrs/types/0 ports/1/gid_attrs/ndevs/0; ls -l device parent 2>&1; cat parent 2>&1'
rec lsmod.txt vm1 'lsmod'

# --- traffic between the VMs over rail 1 ------------------------------------
on vm2 'pkill -x rping; pkill -x ib_write_bw; true'
on vm2 'nohup timeout 120 rping -s -a 192.168.51.2 -v -C 5 > /tmp/rping_server.txt 2>&1 < /dev/null &'
sleep 3
rec rping_client.txt vm1 'timeout 120 rping -c -a 192.168.51.2 -v -C 5'
sleep 2
rec rping_server.txt vm2 'cat /tmp/rping_server.txt'
on vm2 'nohup timeout 300 ib_write_bw -R -d rxe0 -n 200 -s 65536 > /tmp/ib_write_bw_server.txt 2>&1 < /dev/null &'
sleep 3
rec ib_write_bw_R_client.txt vm1 'timeout 300 ib_write_bw -R -d rxe0 -n 200 -s 65536 192.168.51.2'
sleep 2
rec ib_write_bw_R_server.txt vm2 'cat /tmp/ib_write_bw_server.txt'
GIDX=$(on vm1 'cd /sys/class/infiniband/rxe0/ports/1 && for g in gids/*; do i=${g##*/}; [ "$(cat gid_attrs/types/$i 2>/dev/null)" = "RoCE v2" ] && grep -q "ffff:c0a8:3301" $g && echo $i && break; done')
echo "record: RoCEv2 GID index of 192.168.51.1 on vm1: $GIDX"
GIDX2=$(on vm2 'cd /sys/class/infiniband/rxe0/ports/1 && for g in gids/*; do i=${g##*/}; [ "$(cat gid_attrs/types/$i 2>/dev/null)" = "RoCE v2" ] && grep -q "ffff:c0a8:3302" $g && echo $i && break; done')
on vm2 "nohup timeout 300 ib_write_bw -d rxe0 -x $GIDX2 -n 200 -s 65536 > /tmp/ib_write_bw_x_server.txt 2>&1 < /dev/null &"
sleep 3
rec ib_write_bw_x_gid_client.txt vm1 "timeout 300 ib_write_bw -d rxe0 -x $GIDX -n 200 -s 65536 192.168.51.2"
sleep 2
rec ib_write_bw_x_gid_server.txt vm2 'cat /tmp/ib_write_bw_x_server.txt'
echo "record: done, $(wc -l < "$OUTDIR/commands.txt") outputs in $OUTDIR"
