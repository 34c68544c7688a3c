# -*- coding: utf-8 -*-
"""Ownership, conflicts, shadowing and safety on live states written as `ip -N -j` prints them
(the shapes recorded from iproute2 6.1 / Linux 6.x in tests/unit/plugins/modules/fixtures)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.host import iproute
from ansible_collections.ainet.fabric.plugins.module_utils.host import rail_reconcile
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.desired.rail import host_intent

CLUSTER = {"name": "u", "rails": 2, "management_networks": ["10.250.0.0/24"],
           "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27}}
NICS = ["ens6f0np0", "ens6f1np1"]


def link(name, index, addrs=(), **extra):
    item = {"ifindex": index, "ifname": name, "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 9000,
            "link_type": "ether", "addr_info": [dict(a) for a in addrs]}
    item.update(extra)
    return item


def v4(cidr, **extra):
    ip, plen = cidr.split("/")
    info = {"family": "inet", "local": ip, "prefixlen": int(plen), "scope": "global",
            "valid_life_time": 4294967295, "preferred_life_time": 4294967295}
    info.update(extra)
    return info


def intent(backend="networkd", cluster=None):
    return host_intent(load_cluster(cluster or CLUSTER), 1, NICS, backend)


def live(links, routes=(), rules=(), rules6=()):
    base_rules = [{"priority": 0, "src": "all", "table": "255"}, {"priority": 32766, "src": "all", "table": "254"},
                  {"priority": 32767, "src": "all", "table": "253"}]
    base_routes = [{"dst": "default", "gateway": "10.250.0.1", "dev": "eth0", "flags": []}]
    return rail_reconcile.Live(
        iproute.parse_links(json.dumps(links)),
        iproute.parse_routes(json.dumps(base_routes + list(routes)), 4),
        iproute.parse_rules(json.dumps(base_rules + list(rules)), 4) + iproute.parse_rules(json.dumps(list(rules6)), 6))


ETH0 = link("eth0", 2, [v4("10.250.0.11/24", broadcast="10.250.0.255")], mtu=1500)
CONVERGED_LINKS = [ETH0, link("ens6f0np0", 3, [v4("172.17.0.2/27", broadcast="172.17.0.31")]),
                   link("ens6f1np1", 4, [v4("172.17.1.2/27", broadcast="172.17.1.31")])]
CONVERGED_ROUTES = [
    {"dst": "172.17.0.0/27", "dev": "ens6f0np0", "table": "151", "protocol": "211", "scope": "253",
     "prefsrc": "172.17.0.2"},
    {"dst": "172.17.0.0/16", "gateway": "172.17.0.1", "dev": "ens6f0np0", "table": "151", "protocol": "211"},
    {"dst": "172.17.1.0/27", "dev": "ens6f1np1", "table": "152", "protocol": "211", "scope": "253",
     "prefsrc": "172.17.1.2"},
    {"dst": "172.17.0.0/16", "gateway": "172.17.1.1", "dev": "ens6f1np1", "table": "152", "protocol": "211"},
    {"dst": "172.17.0.0/16", "gateway": "172.17.0.1", "dev": "ens6f0np0", "protocol": "211"},
]
CONVERGED_RULES = [{"priority": 1001, "src": "172.17.0.2", "table": "151", "protocol": "4"},
                   {"priority": 1002, "src": "172.17.1.2", "table": "152", "protocol": "4"}]
SYSCTLS = {"net/ipv4/conf/%s/%s" % (n, k): v for n in NICS for k, v in
           (("rp_filter", "2"), ("arp_ignore", "1"), ("arp_announce", "2"), ("arp_filter", "1"),
            ("promote_secondaries", "1"))}


def converged(**more):
    state = live(CONVERGED_LINKS, CONVERGED_ROUTES + more.get("routes", []), CONVERGED_RULES + more.get("rules", []),
                 more.get("rules6", []))
    state.sysctls = dict(SYSCTLS)
    return state


def test_converged_host_needs_nothing():
    plan = rail_reconcile.reconcile(intent(), converged())
    assert not plan and plan.conflicts == [] and plan.shadowing == []
    assert rail_reconcile.verify(intent(), converged()) == []


def test_foreign_rules_in_the_band_are_conflicts_elsewhere_untouched():
    state = converged(rules=[{"priority": 1002, "src": "all", "fwmark": "0x10", "iif": "ens6f0np0", "table": "152"},
                             {"priority": 1001, "src": "172.17.0.5", "table": "100"},
                             {"priority": 2000, "src": "all", "table": "200"},
                             {"priority": 500, "src": "all", "fwmark": "0x100", "fwmask": "0xf00", "table": "300"}])
    plan = rail_reconcile.reconcile(intent(), state)
    assert plan.conflicts == [
        "rule `1002: from all fwmark 0x10 iif ens6f0np0 lookup 152 proto 0` (not created by ainet.fabric) sits at "
        "priority 1002, which cluster u owns",
        "rule `1001: from 172.17.0.5/32 lookup 100 proto 0` (not created by ainet.fabric) sits at priority 1001, "
        "which cluster u owns"]
    taken = rail_reconcile.reconcile(intent(), state, takeover=True)
    assert taken.conflicts == [] and [line for _p, _f, line in taken.steps] == [
        "rule del priority 1002 from all fwmark 0x10 iif ens6f0np0 table 152 protocol 0",
        "rule del priority 1001 from 172.17.0.5/32 table 100 protocol 0"]


def test_stale_objects_of_ours_go_by_marker_record_or_legacy_shape():
    old_rule = {"priority": 1003, "src": "172.17.2.2", "table": "153", "protocol": "4"}
    record = {"rules": [[["family", 4], ["priority", 1003], ["protocol", 4], ["src", "172.17.2.2/32"],
                         ["table", 153]]],
              "addresses": [["ens6f1np1", "172.17.0.2/27"]]}
    links = [ETH0, link("ens6f0np0", 3, [v4("172.17.0.2/27", broadcast="172.17.0.31")]),
             link("ens6f1np1", 4, [v4("172.17.1.2/27", broadcast="172.17.1.31"),
                                   v4("172.17.0.2/27", broadcast="172.17.0.31", secondary=True)])]
    state = live(links, CONVERGED_ROUTES + [{"dst": "172.17.2.0/27", "dev": "ens7f0np0", "table": "153",
                                             "protocol": "211", "scope": "253"}],
                 CONVERGED_RULES + [old_rule, {"priority": 1000, "not": None, "src": "all", "dst": "172.17.0.0",
                                               "dstlen": 16, "table": "254", "protocol": "4"}])
    state.sysctls = dict(SYSCTLS)
    plan = rail_reconcile.reconcile(intent(), state, record)
    assert plan.conflicts == []
    assert sorted(plan.removed) == sorted([
        "rule 1003: from 172.17.2.2/32 lookup 153 proto 4", "rule 1000: not from all to 172.17.0.0/16 lookup 254 proto 4",
        "route 172.17.2.0/27 table 153 metric 0 dev ens7f0np0 scope link proto 211",
        "address 172.17.0.2/27 dev ens6f1np1"])
    # Without the record, the swapped NIC's copy of the address is another tool's: a conflict.
    unrecorded = rail_reconcile.reconcile(intent(), state, {"rules": record["rules"]})
    assert unrecorded.conflicts == ["address 172.17.0.2/27 on ens6f1np1 (not created by ainet.fabric) is the "
                                    "address cluster u plans for ens6f0np0"]


def test_an_object_the_backend_made_is_adopted_and_remarked():
    """A rule networkd re-created as 'static' is ours when the backend switches to none (protocol 211)."""
    plan = rail_reconcile.reconcile(intent("none"), converged())
    lines = [line for _p, _f, line in plan.steps]
    assert plan.conflicts == []
    assert "rule del priority 1001 from 172.17.0.2/32 table 151 protocol 4" in lines
    assert "rule add priority 1001 from 172.17.0.2/32 table 151 protocol 211" in lines


def test_foreign_route_where_ours_belongs_is_a_conflict_not_overwritten():
    routes = [r for r in CONVERGED_ROUTES if r.get("table")] + [
        {"dst": "172.17.0.0/16", "gateway": "10.250.0.1", "dev": "eth0", "protocol": "4"}]
    plan = rail_reconcile.reconcile(intent(), live(CONVERGED_LINKS, routes, CONVERGED_RULES))
    assert plan.conflicts == ["route `172.17.0.0/16 table 254 metric 0 via 10.250.0.1 dev eth0 proto 4` (not created "
                              "by ainet.fabric) is where cluster u needs `172.17.0.0/16 table 254 metric 0 via "
                              "172.17.0.1 dev ens6f0np0 proto 211`"]


def test_missing_broadcast_is_repaired_with_the_routes_that_depend_on_it():
    links = [ETH0, link("ens6f0np0", 3, [v4("172.17.0.2/27")]), CONVERGED_LINKS[2]]
    state = live(links, CONVERGED_ROUTES, CONVERGED_RULES)
    state.sysctls = dict(SYSCTLS)
    lines = [line for _p, _f, line in rail_reconcile.reconcile(intent(), state).steps]
    assert lines == ["address del 172.17.0.2/27 dev ens6f0np0",
                     "address add 172.17.0.2/27 broadcast 172.17.0.31 dev ens6f0np0",
                     "route replace 172.17.0.0/27 table 151 metric 0 dev ens6f0np0 src 172.17.0.2 scope link proto 211",
                     "route replace 172.17.0.0/16 table 151 metric 0 via 172.17.0.1 dev ens6f0np0 proto 211",
                     "route replace 172.17.0.0/16 table 254 metric 0 via 172.17.0.1 dev ens6f0np0 proto 211"]


def test_prune_removes_foreign_addresses_and_routes_on_rail_nics_never_the_planned_one():
    links = [ETH0, link("ens6f0np0", 3, [v4("172.17.0.2/27", broadcast="172.17.0.31"),
                                         v4("192.168.77.5/24", broadcast="192.168.77.255")]), CONVERGED_LINKS[2]]
    routes = CONVERGED_ROUTES + [{"dst": "192.168.78.0/24", "gateway": "192.168.77.1", "dev": "ens6f0np0"},
                                 {"dst": "192.168.77.0/24", "dev": "ens6f0np0", "protocol": "2", "scope": "253"}]
    state = live(links, routes, CONVERGED_RULES)
    state.sysctls = dict(SYSCTLS)
    assert not rail_reconcile.reconcile(intent(), state)
    pruned = rail_reconcile.reconcile(intent(), state, prune=True)
    assert sorted(pruned.removed) == ["pruned address 192.168.77.5/24 dev ens6f0np0",
                                      "pruned route 192.168.78.0/24 table 254 metric 0 via 192.168.77.1 dev "
                                      "ens6f0np0 proto 3"]


def test_shadowing_rules_in_front_are_reported():
    state = converged(rules=[{"priority": 999, "src": "all", "table": "100"},
                             {"priority": 998, "src": "all", "fwmark": "0x1", "table": "100"},
                             {"priority": 997, "src": "10.0.0.0", "srclen": 8, "table": "100"},
                             {"priority": 1000, "src": "all", "l3mdev": None, "protocol": "2"}],
                      routes=[{"dst": "172.16.0.0/12", "gateway": "10.250.0.1", "dev": "eth0", "table": "100"}])
    found = rail_reconcile.reconcile(intent(), state).shadowing
    assert found == [
        "rule `999: from all lookup 100 proto 0` (priority below ours) sends traffic from the rail addresses to "
        "172.17.0.0/16 through table 100 (`172.16.0.0/12 table 100 metric 0 via 10.250.0.1 dev eth0 proto 3`) instead "
        "of the rail tables",
        "rule `998: from all fwmark 0x1 lookup 100 proto 0` (priority below ours) may send some traffic from the rail "
        "addresses to 172.17.0.0/16 through table 100 (`172.16.0.0/12 table 100 metric 0 via 10.250.0.1 dev eth0 "
        "proto 3`) instead of the rail tables"]


def test_management_path_is_protected_through_multipath_ipv6_and_lower_devices():
    links = [ETH0, link("bond0", 5, master=None, linkinfo={"info_kind": "bond"}),
             link("eno1", 6, master="bond0"), link("eno2", 7, master="bond0"),
             link("bond0.20", 8, link="bond0", linkinfo={"info_kind": "vlan"}), link("mgmt6", 9)] + CONVERGED_LINKS[1:]
    state = rail_reconcile.Live(iproute.parse_links(json.dumps(links)), {}, [])
    state.routes.update(iproute.parse_routes(json.dumps([
        {"dst": "default", "protocol": "3", "metric": 100, "flags": [],
         "nexthops": [{"gateway": "10.0.0.1", "dev": "eth0", "weight": 1},
                      {"gateway": "10.1.0.1", "dev": "bond0.20", "weight": 1}]}]), 4))
    state.routes.update(iproute.parse_routes(json.dumps([{"dst": "default", "gateway": "fe80::1", "dev": "mgmt6",
                                                          "metric": 1024, "protocol": "9"}]), 6))
    protected = rail_reconcile.protected_interfaces(state)
    assert sorted(protected) == ["bond0", "bond0.20", "eno1", "eno2", "eth0", "mgmt6"]
    assert protected["eno1"].startswith("is below bond0, which is below bond0.20, which carries a default route")
    bad = host_intent(load_cluster(CLUSTER), 1, ["eno1", "ens6f1np1"], "networkd")
    with pytest.raises(FabricModelError, match=r"fabric_rail_interfaces\[0\]: 'eno1' is below bond0"):
        rail_reconcile.check_safe(bad, state, protected)


@pytest.mark.parametrize("kind,message", [("bridge", "is a bridge device"), ("vxlan", "is a vxlan device"),
                                          ("wireguard", "is a wireguard device")])
def test_devices_that_cannot_be_rail_nics_are_refused(kind, message):
    links = [ETH0, link("ens6f0np0", 3, linkinfo={"info_kind": kind}), CONVERGED_LINKS[2]]
    state = live(links)
    with pytest.raises(FabricModelError, match=message):
        rail_reconcile.check_safe(intent(), state, rail_reconcile.protected_interfaces(state))


def test_parsers_take_names_and_numbers_alike():
    named = iproute.parse_rules('[{"priority":1001,"src":"172.17.0.2","table":"main","protocol":"static"}]', 4)
    numeric = iproute.parse_rules('[{"priority":1001,"src":"172.17.0.2","table":"254","protocol":"4"}]', 4)
    assert named == numeric
    routes = iproute.parse_routes('[{"type":"1","dst":"172.17.0.0/24","dev":"r1","table":"254","protocol":"2",'
                                  '"scope":"253","prefsrc":"172.17.0.2"},{"type":"2","dst":"172.17.0.2","dev":"r1",'
                                  '"table":"255"}]', 4)
    assert list(routes.values()) == [iproute.RouteValue(None, "r1", "172.17.0.2", 253, 2, "unicast", None)]
    assert iproute.split_lists('[1]\n[{"a":[2]}]\n', "x", 3) == ['[1]', '[{"a":[2]}]', '[]']


# Verbatim from iproute2/iproute2#37 (iproute2 before 5.11, `ip -j route show table local`): the
# route type is printed as a bare string, which is not JSON.
ISSUE_37 = ('[{"broadcast","dst":"127.0.0.0","dev":"lo","protocol":"kernel","scope":"link","prefsrc":"127.0.0.1",'
            '"flags":[]},{"local","dst":"127.0.0.0/8","dev":"lo","protocol":"kernel","scope":"host",'
            '"prefsrc":"127.0.0.1","flags":[]}]')


def test_routes_of_old_iproute2_with_bare_types_are_read():
    assert iproute.parse_routes(ISSUE_37, 4) == {}  # local and broadcast routes are not ours to manage
    mixed = ISSUE_37[:-1] + ',{"dst":"10.9.0.0/16","dev":"eth1","protocol":"static","flags":[]}]'
    assert list(iproute.parse_routes(mixed, 4)) == [iproute.RouteKey(4, 254, "10.9.0.0/16", 0)]
    # A route whose device or table is literally named like a type is not rewritten.
    named = '[{"dst":"10.1.0.0/16","dev":"local","flags":[]}]'
    assert iproute.repair(named) == named
