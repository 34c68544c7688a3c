# -*- coding: utf-8 -*-
"""rail_links: parsers on recorded `ip -j` output, diff computation, safety checks."""

from __future__ import annotations

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils import rail_links
from ansible_collections.ainet.fabric.plugins.module_utils.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.errors import FabricModelError, FabricStateError
from ansible_collections.ainet.fabric.plugins.module_utils.rail_plan import rail_addresses

CLUSTER_RAW = {"name": "u", "rails": 2,
               "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27}}
CLUSTER = load_cluster(CLUSTER_RAW)
RAILS = [dict(e, interface=n) for e, n in zip(rail_addresses(CLUSTER_RAW, 1), ["ens6f0np0", "ens6f1np1"])]

# Recorded from iproute2 6.1 (Debian 12) on a lab node, trimmed.
ADDR = """[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP","LOWER_UP"],"mtu":65536,"max_mtu":0,
 "addr_info":[{"family":"inet","local":"127.0.0.1","prefixlen":8,"scope":"host"}]},
 {"ifindex":2,"ifname":"eth0","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"mtu":1500,"max_mtu":65535,
  "linkinfo":{"info_kind":"veth"},
  "addr_info":[{"family":"inet","local":"10.250.0.11","prefixlen":24,"scope":"global","label":"eth0"},
               {"family":"inet6","local":"fe80::1","prefixlen":64,"scope":"link"}]},
 {"ifindex":3,"ifname":"ens6f0np0","flags":["BROADCAST","MULTICAST"],"mtu":1500,"min_mtu":68,"max_mtu":9978,
  "addr_info":[]},
 {"ifindex":4,"ifname":"ens6f1np1","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"mtu":9000,"max_mtu":9978,
  "addr_info":[{"family":"inet","local":"172.17.1.2","prefixlen":27,"broadcast":"172.17.1.31","scope":"global"},
               {"family":"inet","local":"192.0.2.7","prefixlen":24,"scope":"global"}]}]"""
ROUTES = """[{"dst":"default","gateway":"10.250.0.1","dev":"eth0","flags":[]},
 {"dst":"10.250.0.0/24","dev":"eth0","protocol":"kernel","scope":"link","prefsrc":"10.250.0.11","flags":[]},
 {"dst":"default","gateway":"172.17.1.1","dev":"ens6f1np1","table":"152","flags":[]},
 {"dst":"172.17.9.0/24","dev":"ens6f1np1","table":"152","scope":"link","flags":[]},
 {"type":"local","dst":"10.250.0.11","dev":"eth0","table":"local","protocol":"kernel","scope":"host"}]"""
RULES = """[{"priority":0,"src":"all","table":"local"},
 {"priority":1000,"not":null,"src":"all","dst":"172.17.0.0","dstlen":16,"table":"main"},
 {"priority":1002,"src":"172.17.1.9","table":"152"},
 {"priority":32766,"src":"all","table":"main"},{"priority":32767,"src":"all","table":"default"}]"""


def parsed():
    return rail_links.parse_links(ADDR), rail_links.parse_routes(ROUTES, 4), rail_links.parse_rules(RULES, 4)


def test_parsers():
    links, routes, rules = parsed()
    assert links["ens6f0np0"]["max_mtu"] == 9978
    assert links["ens6f0np0"]["up"] is False
    assert links["eth0"]["addrs"][0] == (4, "10.250.0.11/24", "global")
    assert routes[("main", "0.0.0.0/0")] == ("10.250.0.1", "eth0", None)
    assert routes[("152", "0.0.0.0/0")] == ("172.17.1.1", "ens6f1np1", None)
    assert ("local", "10.250.0.11/32") not in routes  # local/broadcast routes are not ours
    assert (1000, True, "all", "172.17.0.0/16", "main") in rules
    assert (1002, False, "172.17.1.9/32", "all", "152") in rules


def test_parse_errors_are_clear():
    with pytest.raises(FabricStateError, match="could not parse `ip -j -d addr show` JSON"):
        rail_links.parse_links("not json")


def test_changes_only_the_difference_and_leaves_foreign_state():
    links, routes, rules = parsed()
    desired = rail_links.desired_state(CLUSTER, RAILS)
    sysctls = {k: ("2" if k.endswith("rp_filter") else "0") for k in desired["sysctls"]}
    current = rail_links.current_state(desired, links, routes, rules, sysctls)
    lines, writes = rail_links.plan_changes(desired, current)
    assert lines[0] == "rule del priority 1002 from 172.17.1.9/32 table 152"  # stale rule at our priority
    assert "link set dev ens6f0np0 mtu 9000 up" in lines
    assert not any("link set dev ens6f1np1" in line for line in lines)  # already right
    assert "address replace 172.17.0.2/27 broadcast 172.17.0.31 dev ens6f0np0" in lines
    assert not any("172.17.1.2/27" in line for line in lines)
    assert not any("192.0.2.7" in line for line in lines)  # foreign address kept without prune
    assert "route replace 172.17.0.0/16 via 172.17.0.1 dev ens6f0np0 table main proto static" in lines
    assert "rule add priority 1002 from 172.17.1.2/32 table 152 protocol static" in lines
    assert not any("not to" in line for line in lines)  # keep-off rule already present
    assert "net/ipv4/conf/ens6f0np0/arp_ignore" in writes
    assert "net/ipv4/conf/ens6f0np0/rp_filter" not in writes
    pruned, _writes = rail_links.plan_changes(desired, current, prune=True)
    assert "address del 192.0.2.7/24 dev ens6f1np1" in pruned
    assert "route del 172.17.9.0/24 dev ens6f1np1 table 152" in pruned


def test_address_without_networkd_broadcast_is_replaced():
    """`ip addr add` without `brd` leaves no broadcast; networkd then fails to take the address over."""
    links, routes, rules = parsed()
    links["ens6f1np1"]["broadcast"]["172.17.1.2/27"] = None
    desired = rail_links.desired_state(CLUSTER, RAILS)
    current = rail_links.current_state(desired, links, routes, rules, {})
    lines, _writes = rail_links.plan_changes(desired, current)
    assert "address replace 172.17.1.2/27 broadcast 172.17.1.31 dev ens6f1np1" in lines
    assert not any(line.startswith("address del") for line in lines)


def test_stacked_nic_cannot_exceed_its_lower_device_mtu():
    links, routes, _rules = parsed()
    links["ens6f1np1"].update(kind="vlan", lower="bond0")
    links["bond0"] = {"mtu": 1500, "max_mtu": 65535, "up": True, "kind": "bond", "lower": None, "addrs": [],
                      "broadcast": {}}
    with pytest.raises(FabricModelError, match=r"fabric_cluster.mtu: 9000 is above the MTU 1500 of bond0, "
                                               r"the lower device of vlan ens6f1np1"):
        rail_links.check_safe(CLUSTER, RAILS, links, {})


def test_applied_state_has_no_changes():
    desired = rail_links.desired_state(CLUSTER, RAILS)
    assert rail_links.plan_changes(desired, desired) == ([], {})
    assert rail_links.missing_after(desired, desired) == []


def test_safety_checks():
    links, routes, _unused = parsed()
    protected = rail_links.protected_interfaces(links, routes, "10.250.0.11")
    assert protected == {"eth0": "carries the default route"}
    bad = [dict(RAILS[0], interface="eth0"), RAILS[1]]
    with pytest.raises(FabricModelError, match=r"fabric_rail_interfaces\[0\]: 'eth0' carries the default route"):
        rail_links.check_safe(CLUSTER, bad, links, protected)
    missing = [RAILS[0], dict(RAILS[1], interface="ens9")]
    with pytest.raises(FabricModelError, match=r"'ens9' does not exist on this host"):
        rail_links.check_safe(CLUSTER, missing, links, protected)
    big = [dict(RAILS[0], mtu=9980), RAILS[1]]
    with pytest.raises(FabricModelError, match="fabric_cluster.mtu: 9980 is above the maximum MTU 9978 of ens6f0np0"):
        rail_links.check_safe(CLUSTER, big, links, protected)
    overlap = load_cluster(dict(CLUSTER_RAW, addressing=dict(CLUSTER_RAW["addressing"], supernet="10.250.0.0/16")))
    with pytest.raises(FabricModelError, match="overlaps 10.250.0.11/24 on eth0"):
        rail_links.check_safe(overlap, RAILS, links, protected)
    with pytest.raises(FabricModelError, match="contains the Ansible controller's address 172.17.5.5"):
        rail_links.check_safe(CLUSTER, RAILS, links, protected, "172.17.5.5")


def test_infiniband_is_addresses_and_mtu_only():
    raw = {"name": "ib", "rails": 2, "addressing": {"mode": "infiniband", "supernet": "172.18.0.0/16", "rail_prefix": 24}}
    rails = [dict(e, interface=n) for e, n in zip(rail_addresses(raw, 3), ["ib0", "ib1"])]
    desired = rail_links.desired_state(load_cluster(raw), rails)
    assert desired["routes"] == {} and desired["rules"] == set() and desired["sysctls"] == {}
    assert desired["links"]["ib0"] == {"mtu": 4092, "up": True}
