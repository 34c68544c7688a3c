# -*- coding: utf-8 -*-
"""Unit tests for the rail planner (pure Python, no Ansible run)."""

from __future__ import annotations

import copy
import ipaddress

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import (
    Planner, node_group_hosts, node_map, rail_addresses, rail_plan)

SEED = {
    "name": "seed003",
    "rails": 8,
    "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27},
}


def model(**addressing):
    data = copy.deepcopy(SEED)
    data["addressing"] = addressing
    return data


def test_seed_003_exclusive_example_exactly():
    # Seed 003: rail r of node n = 172.17.(r-1).(32*(n-1))/27.
    for node in range(1, 9):
        rails = rail_addresses(SEED, node)
        assert [r["rail"] for r in rails] == list(range(1, 9))
        for entry in rails:
            base = "172.17.%d.%d" % (entry["rail"] - 1, 32 * (node - 1))
            assert entry["subnet"] == base + "/27"
    assert rail_addresses(SEED, 1)[0]["subnet"] == "172.17.0.0/27"
    assert rail_addresses(SEED, 8)[0]["subnet"] == "172.17.0.224/27"
    node1 = rail_addresses(SEED, 1)[0]
    assert node1["gateway"] == "172.17.0.1"
    assert node1["address"] == "172.17.0.2/27"
    assert node1["ip"] == "172.17.0.2"
    assert node1["prefix"] == 27
    assert node1["table"] == 151
    assert node1["priority"] == 1001
    # Pod range: the rest of the node subnet, never network, broadcast or next subnet.
    assert node1["pod_ranges"] == ["172.17.0.3-172.17.0.30"]
    assert rail_addresses(SEED, 8)[7]["pod_ranges"] == ["172.17.7.227-172.17.7.254"]


def test_exclusive_node_limit_is_subnets_per_rail_block():
    with pytest.raises(FabricModelError) as err:
        rail_addresses(SEED, 9)
    assert "fabric_node_id" in str(err.value)
    assert "9" in str(err.value)
    assert "1 to 8" in str(err.value)


def test_shared_mode():
    cluster = model(mode="shared", supernet="172.16.0.0/16", rail_prefix=24)
    rails = rail_addresses(cluster, 10)
    assert rails[0]["subnet"] == "172.16.0.0/24"
    assert rails[0]["gateway"] == "172.16.0.1"
    assert rails[0]["address"] == "172.16.0.11/24"  # gateway .1, node 1 = .2, node 10 = .11
    assert rails[7]["address"] == "172.16.7.11/24"
    assert rails[0]["pod_ranges"] == []
    assert rail_addresses(cluster, 253)[0]["ip"] == "172.16.0.254"
    with pytest.raises(FabricModelError, match="1 to 253"):
        rail_addresses(cluster, 254)


def test_shared_mode_gateway_at_end():
    cluster = model(mode="shared", supernet="172.16.0.0/16", rail_prefix=24, gateway_offset=-1)
    first = rail_addresses(cluster, 1)[0]
    assert first["gateway"] == "172.16.0.254"
    assert first["ip"] == "172.16.0.1"
    assert rail_addresses(cluster, 253)[0]["ip"] == "172.16.0.253"
    with pytest.raises(FabricModelError):
        rail_addresses(cluster, 254)


def test_p2p_mode_ipv4():
    cluster = model(mode="p2p", supernet="10.0.0.0/16", rail_prefix=20)
    rails = rail_addresses(cluster, 3)
    assert rails[0]["subnet"] == "10.0.0.4/31"
    assert rails[0]["gateway"] == "10.0.0.4"
    assert rails[0]["address"] == "10.0.0.5/31"
    assert rails[1]["subnet"] == "10.0.16.4/31"
    assert rail_addresses(cluster, 2048)[0]["subnet"] == "10.0.15.254/31"
    with pytest.raises(FabricModelError):
        rail_addresses(cluster, 2049)


def test_p2p_mode_ipv6():
    cluster = model(mode="p2p", supernet="fd00:17::/48", rail_prefix=64)
    rails = rail_addresses(cluster, 1)
    assert rails[0]["subnet"] == "fd00:17::/127"
    assert rails[0]["gateway"] == "fd00:17::"
    assert rails[0]["address"] == "fd00:17::1/127"
    assert rails[2]["subnet"] == "fd00:17:0:2::/127"


def test_exclusive_ipv6():
    cluster = model(mode="exclusive", supernet="fd00:17::/48", rail_prefix=56, node_prefix=64)
    rails = rail_addresses(cluster, 2)
    assert rails[0]["subnet"] == "fd00:17:0:1::/64"
    assert rails[0]["gateway"] == "fd00:17:0:1::1"
    assert rails[0]["address"] == "fd00:17:0:1::2/64"
    assert rails[0]["pod_ranges"] == ["fd00:17:0:1::3-fd00:17:0:1:ffff:ffff:ffff:ffff"]
    assert rails[1]["subnet"] == "fd00:17:0:101::/64"


def test_shared_ipv6():
    cluster = model(mode="shared", supernet="fd00:17::/48", rail_prefix=64)
    assert rail_addresses(cluster, 5)[3]["address"] == "fd00:17:0:3::6/64"


def test_infiniband_mode_has_no_gateways_or_tables():
    cluster = model(mode="infiniband", supernet="172.18.0.0/16", rail_prefix=24)
    rails = rail_addresses(cluster, 1)
    assert rails[0]["address"] == "172.18.0.1/24"
    for entry in rails:
        assert entry["gateway"] is None
        assert entry["table"] is None
        assert entry["priority"] is None
        assert entry["mtu"] == 4092


def test_rail_plan_tors_and_nodes():
    nodes = {"gpu-b": 2, "gpu-a": 1}
    plan = rail_plan(SEED, nodes)
    assert set(plan["nodes"]) == {"gpu-a", "gpu-b"}
    assert [dict(e, interface=None) for e in rail_addresses(SEED, 2)] == plan["nodes"]["gpu-b"]["rails"]
    assert len(plan["tors"]) == 8
    tor1 = plan["tors"]["seed003-rail1-tor"]
    assert [p["port"] for p in tor1["ports"]] == ["swp1", "swp2"]
    assert tor1["ports"][1]["address"] == "172.17.0.33/27"
    assert tor1["ports"][1]["host_address"] == "172.17.0.34/27"
    assert plan["summary"]["addresses"] == 16
    assert plan["rails"][0]["block"] == "172.17.0.0/24"


def test_rail_plan_shared_tor_svis():
    cluster = model(mode="shared", supernet="172.16.0.0/16", rail_prefix=24)
    plan = rail_plan(cluster, {"a": 1})
    tor = plan["tors"]["seed003-rail2-tor"]
    assert tor["svis"] == [{"rail": 2, "address": "172.16.1.1/24"}]
    assert tor["ports"][0]["address"] is None


def test_rail_plan_custom_tors_with_node_ranges():
    cluster = copy.deepcopy(SEED)
    cluster["rails"] = 2
    cluster["tors"] = [
        {"name": "su1-leaf", "rails": [1, 2], "nodes": "1-4", "port_template": "swp{rail}s{local}"},
        {"name": "su2-leaf", "rails": [1, 2], "nodes": "5-8", "port_template": "swp{rail}s{local}"},
    ]
    plan = rail_plan(cluster, {"n%d" % i: i for i in range(1, 9)})
    ports = plan["tors"]["su2-leaf"]["ports"]
    assert [(p["rail"], p["node_id"], p["port"]) for p in ports][:2] == [(1, 5, "swp1s1"), (1, 6, "swp1s2")]
    assert plan["nodes"]["n6"]["rails"][1]["tor"] == "su2-leaf"


def test_rail_plan_interfaces_attached():
    cluster = copy.deepcopy(SEED)
    cluster["rails"] = 2
    plan = rail_plan(cluster, {"a": {"node_id": 1, "rail_interfaces": ["ens1np0", "ens2np0"]}})
    assert [r["interface"] for r in plan["nodes"]["a"]["rails"]] == ["ens1np0", "ens2np0"]


def test_rail_plan_output_is_independent_of_input_order():
    nodes = {"n%d" % i: i for i in (5, 1, 3)}
    reordered = dict(reversed(list(nodes.items())))
    assert rail_plan(SEED, nodes) == rail_plan(SEED, reordered)


def test_addresses_are_valid_and_inside_subnets():
    for mode in ("shared", "exclusive", "p2p", "infiniband"):
        addressing = {"mode": mode, "supernet": "10.0.0.0/16", "rail_prefix": 24}
        if mode == "exclusive":
            addressing["node_prefix"] = 28
        cluster = model(**addressing)
        for node in (1, 2, 16):
            for entry in rail_addresses(cluster, node):
                iface = ipaddress.ip_interface(entry["address"])
                net = ipaddress.ip_network(entry["subnet"])
                assert iface.network == net
                if mode != "p2p":
                    assert iface.ip not in (net.network_address, net.broadcast_address)
                if entry["gateway"]:
                    assert ipaddress.ip_address(entry["gateway"]) in net
                    assert ipaddress.ip_address(entry["gateway"]) != iface.ip


def test_node_group_hosts_are_the_groups_hosts():
    assert node_group_hosts({"gpu_nodes": ["gpu01", "gpu02"]}, "rail_plan_node_group", "gpu_nodes") == ["gpu01", "gpu02"]


@pytest.mark.parametrize("groups,name,expected", [
    ({"all": ["a"], "gpu_nodes": ["a"]}, "gpu_node",
     "rail_plan_node_group: 'gpu_node' is not an inventory group (close: gpu_nodes). Fix: put the GPU nodes in group "
     "'gpu_node' or name their group with -e rail_plan_node_group=<group>"),
    ({"all": ["a"], "gpu_nodes": ["a"]}, "workers", "rail_plan_node_group: 'workers' is not an inventory group. Fix: "),
    ({"all": ["a"], "gpu_nodes": []}, "gpu_nodes", "rail_plan_node_group: 'gpu_nodes' is an inventory group without hosts"),
    ({"all": ["a"]}, "", "rail_plan_node_group: '' is not the name of an inventory group"),
])
def test_a_missing_or_empty_node_group_names_the_variable(groups, name, expected):
    with pytest.raises(FabricModelError) as err:
        node_group_hosts(groups, "rail_plan_node_group", name)
    assert str(err.value).startswith(expected)
    assert "or rail_plan_node_group" not in str(err.value)


def test_a_role_specific_node_group_also_names_rail_plan_node_group():
    with pytest.raises(FabricModelError) as err:
        node_group_hosts({"gpu_nodes": ["a"]}, "link_test_node_group", "gpux")
    assert str(err.value).endswith("-e link_test_node_group=<group> (or rail_plan_node_group: every job's node group "
                                   "defaults to it)")


def test_node_map_reads_each_hosts_node_id_and_rail_nics():
    hostvars = {"a": {"fabric_node_id": 1, "fabric_rail_interfaces": ["ens1"]}, "b": {"fabric_node_id": 2}}
    assert node_map(["a", "b"], hostvars) == {"a": {"node_id": 1, "rail_interfaces": ["ens1"]},
                                              "b": {"node_id": 2, "rail_interfaces": None}}


def test_each_nodes_tor_by_bisection_is_the_tor_that_serves_it():
    """Ranges out of the model's order, a ToR with two ranges, gaps served by no ToR: the ToR each node gets is the one
    Tor.serves names (the scan the bisection replaced), and none where no ToR serves the node."""
    cluster = copy.deepcopy(SEED)
    cluster["rails"] = 2
    cluster["tors"] = [
        {"name": "leaf-c", "rails": [1], "nodes": ["6-7", "2"], "port_template": "swp{local}"},
        {"name": "leaf-a", "rails": [1], "nodes": "1", "port_template": "swp{local}"},
        {"name": "leaf-b", "rails": [1], "nodes": ["3-4"], "port_template": "swp{local}"},
        {"name": "leaf-r2", "rails": [2], "port_template": "swp{node}"},
    ]
    plan = rail_plan(cluster, {"n%02d" % i: i for i in (1, 2, 3, 4, 6, 7)})
    fabric = load_cluster(cluster).fabrics[0]
    tors = fabric.tors
    for host, node in plan["nodes"].items():
        for rail in node["rails"]:
            serving = [t.name for t in tors if t.serves(rail["rail"], node["node_id"])]
            assert rail["tor"] == (serving[0] if serving else None), (host, rail["rail"])
    assert [(plan["nodes"]["n%02d" % i]["rails"][0]["tor"], plan["nodes"]["n%02d" % i]["rails"][0]["tor_port"])
            for i in (2, 6, 7)] == [("leaf-c", "swp3"), ("leaf-c", "swp1"), ("leaf-c", "swp2")]  # ranges 6-7, then 2
    planner = Planner(fabric)
    assert planner.tor_for(1, 5) is None  # in no range
    assert planner.tor_for(1, 8) is None  # after every range
    assert planner.tor_for(2, 8).name == "leaf-r2"
    assert planner.tor_for(1, 1).name == "leaf-a"


def test_a_tor_with_overlapping_ranges_of_its_own_keeps_its_nodes():
    """One ToR's own ranges may overlap (only two ToRs claiming a node are refused): each node still gets it."""
    cluster = copy.deepcopy(SEED)
    cluster["rails"] = 1
    cluster["tors"] = [{"name": "leaf", "rails": [1], "nodes": ["1-8", "2-4"], "port_template": "swp{node}"}]
    plan = rail_plan(cluster, {"n%02d" % i: i for i in range(1, 9)})
    assert {n["rails"][0]["tor"] for n in plan["nodes"].values()} == {"leaf"}
