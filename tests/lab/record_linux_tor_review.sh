#!/usr/bin/env bash
# Records more of what a Linux ToR prints for the load test's counter reads, for the review of issue 33
# (docs/reviews/33-linux-tor.md): layouts and kernel behaviours the first recording (record_linux_tor.sh) does not
# show. A lab of its own in network namespaces it creates and deletes (prefix rvl<pid>): a "ToR" namespace with a
# bridge and veth ports, one "node" namespace per port. Writes into tests/unit/plugins/module_utils/data/counters/:
#   linux-link-single-s.json        `ip -s -j link show` (one -s: which keys iproute2 leaves out)
#   linux-qdisc-review-{before,mid,after}.json   three reads of `tc -s -j qdisc show`:
#     swp1: htb root, two classes, each with a small pfifo child; an incast overflows the children between before
#           and mid (does the root count its children's drops?)
#     swp4: (veth, 4 tx queues) mq root, a tbf child per queue, flooded between before and mid (mq sums children)
#     swp2: tbf root, flooded between before and mid; between mid and after deleted and a new tbf added (new
#           handle, counters from 0) and flooded again
#     swp3: an `ingress` qdisc (not clsact) whose filter drops every frame over 200 bytes; big pings from node 3
#           between mid and after
#   linux-ifname-probe.txt          which names the kernel refuses (dev_valid_name), as `ip link add` answers
# Usage (root): bash tests/lab/record_linux_tor_review.sh [out-dir]
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "record_linux_tor_review.sh: must run as root (network namespaces)" >&2; exit 2; }
OUT=${1:-$(cd "$(dirname "$0")/../unit/plugins/module_utils/data/counters" && pwd)}
P=rvl$$
TOR=$P-tor
NODES="$P-n1 $P-n2 $P-n3 $P-n4"
cleanup() { for n in $TOR $NODES; do ip netns del "$n" 2>/dev/null || true; done; }
trap cleanup EXIT
ip netns add "$TOR"
ip -n "$TOR" link set lo up
ip -n "$TOR" link add br-rail1 type bridge stp_state 0 forward_delay 0
ip -n "$TOR" link set br-rail1 up
for n in 1 2 3 4; do
    ip netns add "$P-n$n"
    q=1; [ "$n" = 4 ] && q=4
    ip -n "$TOR" link add name "swp$n" numtxqueues $q numrxqueues $q type veth peer name rail1 \
        numtxqueues $q numrxqueues $q netns "$P-n$n"
    ip -n "$TOR" link set "swp$n" master br-rail1 up
    ip -n "$P-n$n" addr add "10.79.0.$n/24" dev rail1
    ip -n "$P-n$n" link set rail1 up
done
T() { ip netns exec "$TOR" tc "$@"; }
# BPF (classic, direct action): drop (TC_ACT_SHOT) every frame over 200 bytes, else TC_ACT_UNSPEC
BIG="4,128 0 0 0,37 0 1 200,6 0 0 2,6 0 0 4294967295"
# swp1: htb root 1:, classes 1:10 and 1:20 (1 Mbit/s each), pfifo children of 5 packets; everything to 1:10
T qdisc add dev swp1 root handle 1: htb default 10
T class add dev swp1 parent 1: classid 1:10 htb rate 1mbit
T class add dev swp1 parent 1: classid 1:20 htb rate 1mbit
T qdisc add dev swp1 parent 1:10 handle 10: pfifo limit 5
T qdisc add dev swp1 parent 1:20 handle 20: pfifo limit 5
# swp2: a tbf root (to be replaced between two reads)
T qdisc add dev swp2 root tbf rate 1mbit burst 16kb limit 16kb
# swp3: an ingress qdisc (its drop filter is added after the floods, between mid and after)
T qdisc add dev swp3 ingress
# swp4: mq root with a tbf per transmit queue
T qdisc add dev swp4 root handle 1: mq
for q in 1 2 3 4; do T qdisc replace dev swp4 parent 1:$q tbf rate 1mbit burst 16kb limit 16kb; done
for n in 2 3 4; do ip netns exec "$P-n1" ping -c 2 -q "10.79.0.$n" >/dev/null || true; done
ip netns exec "$P-n2" ping -c 2 -q 10.79.0.4 >/dev/null || true
ip -n "$TOR" -s -j link show > "$OUT/linux-link-single-s.json"
qread() { ip netns exec "$TOR" tc -s -j qdisc show > "$OUT/linux-qdisc-$1.json"; }
flood() {  # flood <to> <from...>: 1,400-byte pings, 40 in flight per sender (ping -f -l 40), at once
    local to=$1; shift
    for n in "$@"; do ip netns exec "$P-n$n" ping -f -l 40 -q -c 2000 -s 1400 -w 6 "10.79.0.$to" >/dev/null 2>&1 & done
    wait
}
qread review-before
flood 1 2 3        # incast on swp1 (htb)
flood 4 2 3        # incast on swp4 (mq)
flood 2 3 4        # load on swp2 (first tbf)
qread review-mid
# swp2's root replaced by a new tbf (a new handle; its counters start at 0), then loaded again
T qdisc del dev swp2 root
T qdisc add dev swp2 root tbf rate 1mbit burst 16kb limit 16kb
flood 2 3
# node 3 sends big frames into swp3, whose ingress filter now drops them
T filter add dev swp3 parent ffff: bpf da bytecode "$BIG"
ip netns exec "$P-n3" ping -q -c 20 -i 0.01 -s 1000 10.79.0.1 >/dev/null 2>&1 || true
qread review-after
{
    for name in "swp$(printf '\xc3\xa0')" "swp$(printf '\xc2\xa0')x" "swp1.100" "a234567890123456" "sw:p" "sw%dp"; do
        known=$(ip -n "$TOR" -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | sort)
        if ip -n "$TOR" link add name "$name" type veth peer name "rvlpeer" 2>/dev/null; then
            now=$(ip -n "$TOR" -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | sort)
            echo "accepted $(LC_ALL=C printf %q "$name") as $(comm -13 <(echo "$known") <(echo "$now") | grep -v '^rvlpeer$' | tr '\n' ' ')"
            ip -n "$TOR" link del rvlpeer 2>/dev/null || true
        else
            echo "refused $(LC_ALL=C printf %q "$name")"
        fi
    done
} > "$OUT/linux-ifname-probe.txt" 2>&1
echo "recorded into $OUT; $(ip -V); kernel $(uname -r)"
