#!/usr/bin/env bash
# Record real iproute2 JSON outputs as parser test data.
#
# Usage (as root):  ./record.sh [OUTDIR]      (OUTDIR defaults to this folder)
#
# Every scenario is built in throw-away network namespaces named "rec<PID>-*".
# Only those namespaces are created, configured and deleted; nothing else on
# the host (other namespaces, /etc/iproute2, sysctls of the init namespace) is
# touched.  All addresses live inside the namespaces; no packet leaves them.
#
# For each scenario S the files S.<what>.json are written, where <what> is:
#   addr     ip -j -d addr show
#   route4   ip -j -4 route show table all      route4n  same with -N
#   route6   ip -j -6 route show table all      route6n  same with -N
#   rule4    ip -j -4 rule show                 rule4n   same with -N
#   rule6    ip -j -6 rule show                 rule6n   same with -N
# plus extras: rule4d/rule6d (ip -j -d -4|-6 rule show), link (ip -j -d link
# show) and, where nexthop objects are used, nexthop (ip -j nexthop show).
# The environment (ip -V, uname -r, skipped features) goes to record-env.txt.

set -euo pipefail

OUTDIR=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
PFX="rec$$-"
CREATED=()
SKIPPED=()

cleanup() {
    local ns
    for ns in "${CREATED[@]}"; do
        case $ns in
            "$PFX"*) ip netns del "$ns" 2>/dev/null || true ;;
        esac
    done
}
trap cleanup EXIT INT TERM

log() { printf '%s\n' "$*" >&2; }

# mkns NAME -> creates namespace ${PFX}NAME with lo up
mkns() {
    local ns="$PFX$1"
    ip netns add "$ns"
    CREATED+=("$ns")
    ip -n "$ns" link set lo up
}

# n NAME args... -> ip -n ${PFX}NAME args...
n() {
    local ns="$PFX$1"
    shift
    ip -n "$ns" "$@"
}

# sx NAME key=value -> sysctl inside the namespace
sx() {
    local ns="$PFX$1"
    shift
    ip netns exec "$ns" sysctl -q -w "$@"
}

# try DESC NAME args... -> ip -n NAME args..., recording a skip on failure
try() {
    local desc=$1
    shift
    local err
    if ! err=$(n "$@" 2>&1); then
        SKIPPED+=("$desc: ${err//$'\n'/ }")
        log "SKIP $desc"
    fi
}

# veth NS IF PEERNS PEERIF -> veth pair, IF in NS, PEERIF in PEERNS, both up
veth() {
    local ns=$1 ifn=$2 pns=$3 pif=$4
    n "$ns" link add "$ifn" type veth peer name "$pif" netns "$PFX$pns"
    n "$ns" link set "$ifn" up
    n "$pns" link set "$pif" up
}

# dump NS SCENARIO [extra...] -> write SCENARIO.<what>.json
dump() {
    local ns=$1 sc=$2 extra
    shift 2
    n "$ns" -j -d addr show >"$OUTDIR/$sc.addr.json"
    n "$ns" -j -4 route show table all >"$OUTDIR/$sc.route4.json"
    n "$ns" -j -6 route show table all >"$OUTDIR/$sc.route6.json"
    n "$ns" -j -4 rule show >"$OUTDIR/$sc.rule4.json"
    n "$ns" -j -6 rule show >"$OUTDIR/$sc.rule6.json"
    n "$ns" -N -j -4 route show table all >"$OUTDIR/$sc.route4n.json"
    n "$ns" -N -j -6 route show table all >"$OUTDIR/$sc.route6n.json"
    n "$ns" -N -j -4 rule show >"$OUTDIR/$sc.rule4n.json"
    n "$ns" -N -j -6 rule show >"$OUTDIR/$sc.rule6n.json"
    for extra in "$@"; do
        case $extra in
            rule_d)
                n "$ns" -j -d -4 rule show >"$OUTDIR/$sc.rule4d.json"
                n "$ns" -j -d -6 rule show >"$OUTDIR/$sc.rule6d.json"
                ;;
            link) n "$ns" -j -d link show >"$OUTDIR/$sc.link.json" ;;
            nexthop) n "$ns" -j nexthop show >"$OUTDIR/$sc.nexthop.json" ;;
        esac
    done
    log "recorded $sc"
}

# wait_dad NS -> wait until no tentative (non-dadfailed) v6 address is left
wait_dad() {
    local i
    for i in $(seq 1 50); do
        if [ -z "$(n "$1" -6 addr show tentative -dadfailed)" ]; then
            return 0
        fi
        sleep 0.2
    done
    log "DAD did not finish in $1 (after $i tries)"
}

RAILS=(ens6f0np0 ens6f1np1 ens7f0np0 ens7f1np1)

# ---------------------------------------------------------------- clean-v4
scenario_clean_v4() {
    local h=clean-v4 f=clean-v4-fab i nic ip gw net tbl proto
    mkns "$h"
    mkns "$f"
    veth "$h" eth0 "$f" up0
    n "$f" addr add 10.250.0.1/24 dev up0
    n "$h" addr add 10.250.0.11/24 dev eth0
    n "$h" route add default via 10.250.0.1 dev eth0
    for i in 0 1 2 3; do
        nic=${RAILS[$i]}
        net="172.17.0.$((i * 32))"
        gw="172.17.0.$((i * 32 + 1))"
        ip="172.17.0.$((i * 32 + 5))"
        tbl=$((151 + i))
        # rails 0,1 owned by the module (proto 211), rails 2,3 "proto static"
        if [ "$i" -lt 2 ]; then proto=211; else proto=static; fi
        veth "$h" "$nic" "$f" "sw$i"
        n "$f" addr add "$gw/27" dev "sw$i"
        n "$h" addr add "$ip/27" dev "$nic"
        n "$h" route add "$net/27" dev "$nic" scope link src "$ip" \
            table "$tbl" proto "$proto"
        n "$h" route add 172.17.0.0/16 via "$gw" dev "$nic" \
            table "$tbl" proto "$proto"
        n "$h" rule add priority "$((1001 + i))" from "$ip" \
            lookup "$tbl" protocol "$proto"
    done
    dump "$h" clean-v4 rule_d link
}

# ---------------------------------------------------------- foreign-rules
scenario_foreign_rules() {
    local h=foreign-rules f=foreign-rules-fab i nic ip gw
    mkns "$h"
    mkns "$f"
    veth "$h" eth0 "$f" up0
    n "$f" addr add 10.250.0.1/24 dev up0
    n "$h" addr add 10.250.0.12/24 dev eth0
    n "$h" route add default via 10.250.0.1 dev eth0
    for i in 0 1; do
        nic=${RAILS[$i]}
        gw="172.17.0.$((i * 32 + 1))"
        ip="172.17.0.$((i * 32 + 5))"
        veth "$h" "$nic" "$f" "sw$i"
        n "$f" addr add "$gw/27" dev "sw$i"
        n "$h" addr add "$ip/27" dev "$nic"
        n "$h" route add 172.17.0.0/16 via "$gw" dev "$nic" \
            table "$((151 + i))" proto 211
        n "$h" rule add priority "$((1001 + i))" from "$ip" \
            lookup "$((151 + i))" protocol 211
    done
    # rail-looking rules from someone else at the same priorities
    n "$h" rule add priority 1001 from 172.17.0.5 lookup 100
    n "$h" rule add priority 1000 from all lookup 100
    n "$h" route add 172.17.0.0/16 via 172.17.0.1 dev ens6f0np0 table 100
    # VPN style catch-all with its own default
    n "$h" rule add priority 2000 from all lookup 200
    n "$h" route add default via 172.17.0.33 dev ens6f1np1 table 200
    # Cilium style: local table moved from 0 to 100
    n "$h" rule add priority 100 lookup local
    n "$h" rule del priority 0 lookup local
    n "$h" -6 rule add priority 100 lookup local
    n "$h" -6 rule del priority 0 lookup local
    # fwmark with and without mask (k8s CNIs, Calico, Cilium, Tailscale)
    n "$h" rule add priority 9 fwmark 0x200/0xf00 lookup 2004
    n "$h" rule add priority 10 fwmark 0x80000/0x80000 lookup main
    n "$h" rule add priority 11 fwmark 0x1 lookup 300
    n "$h" rule add priority 5210 fwmark 0x80000/0xff0000 lookup main
    n "$h" rule add priority 5270 lookup 52
    n "$h" route add throw 10.0.0.0/8 table 52
    # iif / oif (existing, loopback, not existing -> detached)
    n "$h" rule add priority 20 iif eth0 lookup 120
    n "$h" rule add priority 21 oif ens6f0np0 lookup 121
    n "$h" rule add priority 22 iif lo lookup main
    n "$h" rule add priority 23 iif ghost0 oif ghost1 lookup 123
    # ipproto and port ranges
    n "$h" rule add priority 30 ipproto tcp dport 8000-8080 lookup 130
    n "$h" rule add priority 31 ipproto udp sport 53 lookup 131
    # (iproute2 6.1 refuses a range ending in 65535: "Invalid sport range")
    n "$h" rule add priority 32 ipproto 132 sport 1024-65000 dport 9 lookup 132
    # uid range, tos, not, suppress_prefixlength, to
    n "$h" rule add priority 40 uidrange 1000-2000 lookup 140
    n "$h" rule add priority 41 tos 0x10 lookup 141
    n "$h" rule add priority 42 not from 10.0.0.0/8 lookup 142
    n "$h" rule add priority 43 not fwmark 0xca6c lookup 51820
    n "$h" rule add priority 44 lookup main suppress_prefixlength 0
    n "$h" rule add priority 45 to 10.96.0.0/12 lookup 145
    n "$h" rule add priority 46 from 192.168.0.0/16 to 10.0.0.0/8 iif eth0 \
        fwmark 0x5 lookup 146
    n "$h" rule add priority 47 lookup 147 suppress_ifgroup 1
    # goto
    n "$h" rule add priority 50 from 192.168.0.0/16 goto 60
    n "$h" rule add priority 60 from 192.168.0.0/16 lookup 160
    # action types
    n "$h" rule add priority 70 from 198.51.100.0/24 blackhole
    n "$h" rule add priority 71 from 198.51.101.0/24 unreachable
    n "$h" rule add priority 72 from 198.51.102.0/24 prohibit
    n "$h" rule add priority 73 from 198.51.103.0/24 type nop
    # realms, table by the well known names, big table id, protocol names
    n "$h" rule add priority 80 from 10.9.0.0/16 realms 5 lookup 180
    n "$h" rule add priority 81 from 10.8.0.0/16 lookup default
    n "$h" rule add priority 82 from 10.7.0.0/16 lookup 4000000000
    n "$h" rule add priority 83 from 10.6.0.0/16 lookup 183 protocol zebra
    n "$h" rule add priority 84 from 10.5.0.0/16 lookup 184 protocol bird
    n "$h" rule add priority 85 from 10.4.0.0/16 lookup 185 protocol 77
    # Spiderpool style: pod source rules into table 100
    n "$h" rule add priority 99 from 172.17.0.6 lookup 100
    n "$h" rule add priority 99 from 172.17.0.7 lookup 100
    # no explicit priority (kernel picks one)
    n "$h" rule add from 10.3.0.0/16 lookup 190
    try "rule l3mdev" "$h" rule add priority 1500 l3mdev
    n "$h" rule add priority 32000 from all lookup 42
    # IPv6 rules from other tools
    n "$h" -6 rule add priority 9 fwmark 0x200/0xf00 lookup 2004
    n "$h" -6 rule add priority 42 not from fd00::/8 lookup 142
    n "$h" -6 rule add priority 44 lookup main suppress_prefixlength 0
    n "$h" -6 rule add priority 30 ipproto tcp dport 443 lookup 130
    n "$h" -6 rule add priority 70 from 2001:db8:dead::/48 blackhole
    n "$h" -6 rule add priority 1001 from fd00:172:17::5 lookup 151 \
        protocol 211
    n "$h" -6 rule add priority 2000 from all lookup 200
    dump "$h" foreign-rules rule_d
}

# ------------------------------------------------------------- routes-misc
scenario_routes_misc() {
    local h=routes-misc f=routes-misc-fab t
    mkns "$h"
    mkns "$f"
    veth "$h" eth1 "$f" up1
    veth "$h" eth2 "$f" up2
    veth "$h" eth3 "$f" up3
    n "$h" addr add 10.1.0.11/24 dev eth1
    n "$h" addr add 10.2.0.11/24 dev eth2
    n "$h" addr add 10.3.0.11/24 dev eth3
    # eth3 loses carrier: its peer goes down -> linkdown routes
    n "$f" link set up3 down
    n "$h" addr add fd01::11/64 dev eth1 nodad
    n "$h" addr add fd02::11/64 dev eth2 nodad
    n "$h" addr add fd03::11/64 dev eth3 nodad
    # several defaults with different metrics in main
    n "$h" route add default via 10.1.0.1 dev eth1 metric 100
    n "$h" route add default via 10.2.0.1 dev eth2 metric 200 proto dhcp
    n "$h" route add default via 10.3.0.1 dev eth3 metric 300
    # multipath v4 / v6
    n "$h" route add default table 10 proto static \
        nexthop via 10.1.0.1 dev eth1 weight 1 \
        nexthop via 10.2.0.1 dev eth2 weight 3
    n "$h" route add 10.20.0.0/16 table 10 \
        nexthop via 10.1.0.1 dev eth1 nexthop via 10.3.0.1 dev eth3
    n "$h" -6 route add default table 10 proto static \
        nexthop via fd01::1 dev eth1 weight 1 \
        nexthop via fd02::1 dev eth2 weight 2
    n "$h" -6 route add default via fd01::1 dev eth1 metric 100
    n "$h" -6 route add default via fd02::1 dev eth2 metric 200 pref high
    n "$h" -6 route add fd20::/48 via fd03::1 dev eth3 metric 1024 \
        expires 600
    # onlink, src, scope, mtu/advmss, realms, protocols
    n "$h" route add 10.50.0.0/24 via 192.0.2.1 dev eth1 onlink
    n "$h" route add 10.80.0.0/24 dev eth1 src 10.1.0.11
    n "$h" route add 10.81.0.0/24 via 10.2.0.1 src 10.2.0.11 proto bird \
        metric 20
    n "$h" route add 10.82.0.0/24 via 10.1.0.1 mtu 9000 advmss 8960 \
        proto 186
    n "$h" route add 10.83.0.0/24 via 10.1.0.1 realm 7 proto 99
    n "$h" route add 10.84.0.0/24 dev eth2 scope host proto zebra
    n "$h" -6 route add fd80::/64 via fd01::1 src fd01::11 proto 211
    n "$h" -6 route add fd81::/64 dev eth2 proto ra metric 5 mtu 1400
    # blackhole / unreachable / prohibit / throw
    n "$h" route add blackhole 10.70.0.0/24
    n "$h" route add unreachable 10.71.0.0/24 metric 5
    n "$h" route add prohibit 10.72.0.0/24
    n "$h" route add throw 10.73.0.0/24 table 10
    n "$h" route add blackhole default table 300 metric 4278198272
    n "$h" -6 route add blackhole fd99::/64
    n "$h" -6 route add unreachable fd98::/64
    n "$h" -6 route add prohibit fd97::/64 table 10
    # many tables
    for t in 100 151 200 252 1000 65535 4000000000; do
        n "$h" route add 172.17.0.0/16 via 10.1.0.1 table "$t" proto 211
    done
    n "$h" route add 172.18.0.0/16 via 10.2.0.1 table default
    try "type multicast route" "$h" route add multicast 239.1.0.0/16 \
        dev eth1 table 10
    try "type local route in main" "$h" route add local 10.99.0.0/24 dev lo
    # nexthop objects (none on eth3: the kernel refuses a nexthop object on a
    # device without carrier and flushes existing ones when carrier is lost)
    n "$h" nexthop add id 1 via 10.1.0.1 dev eth1
    n "$h" nexthop add id 2 via 10.2.0.1 dev eth2 proto 211
    n "$h" nexthop add id 3 via fd01::1 dev eth1
    n "$h" nexthop add id 9 blackhole
    n "$h" nexthop add id 10 group 1/2
    n "$h" nexthop add id 11 group 1,5/2,1
    try "resilient nexthop group" "$h" nexthop add id 12 group 1/2 \
        type resilient buckets 8 idle_timer 60
    try "fdb nexthop" "$h" nexthop add id 13 via 10.1.0.1 fdb
    n "$h" route add 10.90.0.0/24 nhid 10
    n "$h" route add 10.91.0.0/24 nhid 1 proto 211 table 151
    n "$h" route add 10.92.0.0/24 nhid 9
    n "$h" route add 10.93.0.0/24 nhid 11 metric 50
    n "$h" -6 route add fd90::/64 nhid 3
    dump "$h" routes-misc nexthop link
}

# --------------------------------------------------------------------- v6
scenario_v6() {
    local h=v6 f=v6-fab
    mkns "$h"
    mkns "$f"
    sx "$h" net.ipv6.conf.all.accept_dad=1 net.ipv6.conf.default.accept_dad=1
    veth "$h" ens6f0np0 "$f" sw0
    veth "$h" ens6f1np1 "$f" sw1
    # switch side: gateway + the address the host will collide with
    n "$f" addr add fd00:172:17::1/64 dev sw0 nodad
    n "$f" addr add fd00:172:17::99/64 dev sw0 nodad
    n "$f" addr add fd00:172:17:1::1/64 dev sw1 nodad
    wait_dad "$f"
    wait_dad "$h"
    if ! sx "$h" net.ipv6.conf.ens6f1np1.optimistic_dad=1 2>/dev/null; then
        SKIPPED+=("v6: optimistic_dad sysctl not available")
    fi
    n "$h" addr add fd00:172:17::5/64 dev ens6f0np0
    n "$h" addr add fd00:172:17::99/64 dev ens6f0np0
    n "$h" addr add fd00:172:17:1::5/64 dev ens6f1np1
    n "$h" addr add fd00:172:17:2::5/64 dev ens6f1np1 nodad
    n "$h" addr add fd00:172:17:3::5/64 dev ens6f1np1 nodad \
        preferred_lft 0 valid_lft 3600
    n "$h" addr add fd00:172:17:4::5/64 dev ens6f1np1 nodad \
        preferred_lft 1800 valid_lft 3600
    n "$h" addr add fd00:172:17:5::5/64 dev ens6f1np1 nodad noprefixroute
    n "$h" addr add fd00:172:17:6::5/128 dev ens6f1np1 nodad
    # snapshot while DAD is still running
    dump "$h" v6-tentative
    wait_dad "$h"
    sleep 1
    # rules and routes with src (need non-tentative source addresses)
    n "$h" -6 rule add priority 1001 from fd00:172:17::5 lookup 151 \
        protocol 211
    n "$h" -6 rule add priority 1002 from fd00:172:17:1::5 lookup 152 \
        protocol static
    n "$h" -6 route add fd00:172:17::/64 dev ens6f0np0 src fd00:172:17::5 \
        table 151 proto 211
    n "$h" -6 route add fd00:172::/32 via fd00:172:17::1 dev ens6f0np0 \
        src fd00:172:17::5 table 151 proto 211
    n "$h" -6 route add fd00:172::/32 via fd00:172:17:1::1 dev ens6f1np1 \
        src fd00:172:17:1::5 table 152 proto static
    n "$h" -6 route add default via fe80::1 dev ens6f0np0 metric 1024
    dump "$h" v6 rule_d
}

# -------------------------------------------------------------- addrs-misc
scenario_addrs_misc() {
    local h=addrs-misc f=addrs-misc-fab k
    mkns "$h"
    mkns "$f"
    veth "$h" eth0 "$f" up0
    veth "$h" eth1 "$f" up1
    veth "$h" eth2 "$f" up2
    veth "$h" brport0 "$f" up3
    # primary + secondaries, broadcast variants, /31, /32, peer, labels
    n "$h" addr add 10.30.0.5/24 dev eth0
    n "$h" addr add 10.30.0.6/24 dev eth0
    n "$h" addr add 10.30.0.7/24 dev eth0 label eth0:vip
    n "$h" addr add 10.31.0.5/24 dev eth0
    n "$h" addr add 10.32.0.5/24 broadcast + dev eth0
    n "$h" addr add 10.33.0.0/31 dev eth1
    n "$h" addr add 10.34.0.1/32 dev eth1
    n "$h" addr add 10.36.0.1 peer 10.36.0.2/32 dev eth1
    n "$h" addr add 10.37.0.5/24 dev eth1 valid_lft 600 preferred_lft 300
    n "$h" addr add 10.38.0.5/24 dev eth1 noprefixroute
    n "$h" addr add 10.255.255.1/32 dev lo
    # link with an alias / altname, and a down link with an address
    n "$h" link set eth0 alias "uplink to tor1"
    try "altname" "$h" link property add dev eth1 altname enp65s0f1np1
    n "$h" link set eth2 down
    n "$h" addr add 10.39.0.5/24 dev eth2
    # bridge with an enslaved port
    n "$h" link add br0 type bridge
    n "$h" link set brport0 master br0
    n "$h" link set br0 up
    n "$h" addr add 10.40.0.1/24 dev br0
    # macvlan / macvtap on eth0
    n "$h" link add link eth0 name macvl0 type macvlan mode bridge
    n "$h" link set macvl0 up
    n "$h" addr add 10.30.0.50/24 dev macvl0
    try "macvtap" "$h" link add link eth0 name macvtap0 type macvtap
    # vxlan over eth0
    n "$h" link add vxlan42 type vxlan id 42 local 10.30.0.5 dev eth0 \
        dstport 4789 remote 10.30.0.1
    n "$h" link set vxlan42 up
    n "$h" addr add 10.41.0.1/24 dev vxlan42
    # kinds that might not be built into this kernel
    for k in dummy vlan bond vrf ipvlan team; do
        case $k in
            vlan) try "link kind vlan" "$h" link add link eth1 name eth1.100 \
                type vlan id 100 ;;
            ipvlan) try "link kind ipvlan" "$h" link add link eth1 name ipvl0 \
                type ipvlan mode l3 ;;
            vrf) try "link kind vrf" "$h" link add vrf-blue type vrf table 10 ;;
            *) try "link kind $k" "$h" link add "${k}0" type "$k" ;;
        esac
    done
    dump "$h" addrs-misc link
}

main() {
    [ "$(id -u)" -eq 0 ] || { log "must run as root"; exit 1; }
    mkdir -p "$OUTDIR"
    scenario_clean_v4
    scenario_foreign_rules
    scenario_routes_misc
    scenario_v6
    scenario_addrs_misc
    {
        printf 'recorded: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
        printf 'ip -V: %s\n' "$(ip -V)"
        printf 'uname -r: %s\n' "$(uname -r)"
        if [ -r /etc/os-release ]; then
            # shellcheck disable=SC1091
            printf 'os: %s\n' "$(. /etc/os-release && echo "$PRETTY_NAME")"
        fi
        printf 'skipped (not supported here):\n'
        if [ "${#SKIPPED[@]}" -gt 0 ]; then
            printf '  - %s\n' "${SKIPPED[@]}"
        fi
    } >"$OUTDIR/record-env.txt"
    log "done: $OUTDIR"
}

main "$@"
