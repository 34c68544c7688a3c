#!/usr/bin/env bash
# Records what a Linux ToR prints for the lossless load test's counter reads (format linux_link: `ip -s -s -j link
# show`; linux_qdisc: `tc -s -j qdisc show`), before and after an incast that congests one port, into
# tests/unit/plugins/module_utils/data/counters/linux-*.json. A lab of its own, in network namespaces it creates and
# deletes: a "ToR" namespace with a bridge br-rail1 and three ports (veth swp1..swp3), one "node" namespace per port
# (10.77.0.N/24). swp1, the receiver's port, has a token-bucket root qdisc (1 Mbit/s, 16 KiB queue): the incast of
# the other two nodes overflows it (congestion drops, `qdisc_drops`); and a clsact egress filter (classic BPF,
# direct action) drops one in ten frames over 200 bytes (`clsact_drops`), as the VM tier injects loss.
# Usage (root): bash tests/lab/record_linux_tor.sh [out-dir]
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "record_linux_tor.sh: must run as root (network namespaces)" >&2; exit 2; }
OUT=${1:-$(cd "$(dirname "$0")/../unit/plugins/module_utils/data/counters" && pwd)}
P=ainetrec$$
TOR=$P-tor
cleanup() { for n in $TOR $P-n1 $P-n2 $P-n3; do ip netns del "$n" 2>/dev/null || true; done; }
trap cleanup EXIT
ip netns add "$TOR"
ip -n "$TOR" link add br-rail1 type bridge stp_state 0 forward_delay 0
ip -n "$TOR" link set br-rail1 up
for n in 1 2 3; do
    ip netns add "$P-n$n"
    ip -n "$TOR" link add name "swp$n" type veth peer name rail1 netns "$P-n$n"
    ip -n "$TOR" link set "swp$n" master br-rail1 up
    ip -n "$P-n$n" addr add "10.77.0.$n/24" dev rail1
    ip -n "$P-n$n" link set rail1 up
done
ip netns exec "$TOR" tc qdisc add dev swp1 root tbf rate 1mbit burst 16kb limit 16kb
ip netns exec "$TOR" tc qdisc add dev swp1 clsact
# A = frame length; over 200: A = random % 10, drop (TC_ACT_SHOT, 2) when 0; else TC_ACT_UNSPEC (-1)
ip netns exec "$TOR" tc filter add dev swp1 egress bpf da bytecode \
    "8,128 0 0 0,37 0 4 200,32 0 0 4294963256,148 0 0 10,21 0 1 0,6 0 0 2,6 0 0 4294967295,6 0 0 4294967295"
ip netns exec "$P-n1" ping -c 3 -q 10.77.0.2 >/dev/null; ip netns exec "$P-n1" ping -c 3 -q 10.77.0.3 >/dev/null
read_tor() {
    ip -n "$TOR" -s -s -j link show > "$OUT/linux-link-$1.json"
    ip netns exec "$TOR" tc -s -j qdisc show > "$OUT/linux-qdisc-$1.json"
}
read_tor before
# the incast: nodes 2 and 3 flood node 1 with 1,400-byte pings at once (ping -f: as fast as replies come back)
for n in 2 3; do ip netns exec "$P-n$n" ping -f -q -c 3000 -s 1400 -w 10 10.77.0.1 >/dev/null 2>&1 & done
wait
read_tor after
echo "recorded:" "$OUT"/linux-{link,qdisc}-{before,after}.json
ip -V
