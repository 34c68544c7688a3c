# -*- coding: utf-8 -*-
"""Property tests: no overlaps, stability when nodes are added, determinism."""

from __future__ import annotations

import ipaddress

from hypothesis import given, settings, strategies as st

from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_addresses, rail_plan


@st.composite
def clusters(draw):
    mode = draw(st.sampled_from(["shared", "exclusive", "p2p", "infiniband"]))
    family = draw(st.sampled_from([4, 6]))
    rails = draw(st.integers(1, 8))
    if family == 4:
        supernet_prefix = draw(st.integers(8, 20))
        # Inside 10.0.0.0/8: the model refuses supernets in loopback, multicast and other special ranges.
        base = (10 << 24) | (draw(st.integers(0, (1 << (supernet_prefix - 8)) - 1)) << (32 - supernet_prefix))
        supernet = "%s/%d" % (ipaddress.IPv4Address(base), supernet_prefix)
        bits = 32
    else:
        supernet_prefix = draw(st.integers(40, 56))
        base = (0xfd << 120) | (draw(st.integers(0, (1 << (supernet_prefix - 8)) - 1)) << (128 - supernet_prefix))
        supernet = "%s/%d" % (ipaddress.IPv6Address(base), supernet_prefix)
        bits = 128
    rail_prefix = supernet_prefix + (rails - 1).bit_length() + draw(st.integers(0, 2))
    addressing = {"mode": mode, "supernet": supernet, "rail_prefix": rail_prefix}
    if mode == "exclusive":
        addressing["node_prefix"] = draw(st.integers(rail_prefix + 1, min(rail_prefix + 10, bits - 2)))
    return {"name": "h", "rails": rails, "addressing": addressing}


@settings(max_examples=150, deadline=None)
@given(clusters(), st.sets(st.integers(1, 64), min_size=1, max_size=12), st.data())
def test_no_overlaps_and_stable(cluster, ids, data):
    probe = rail_addresses(cluster, 1)
    assert len(probe) == cluster["rails"]
    from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
    limit = load_cluster(cluster).max_node_id
    ids = sorted(i for i in ids if i <= limit) or [1]
    nodes = {"node%03d" % i: i for i in ids}
    plan = rail_plan(cluster, nodes)
    supernet = ipaddress.ip_network(cluster["addressing"]["supernet"])
    addresses = set()
    subnets = {}
    for host, node in plan["nodes"].items():
        for entry in node["rails"]:
            iface = ipaddress.ip_interface(entry["address"])
            assert iface.ip in supernet
            assert iface.ip not in addresses
            addresses.add(iface.ip)
            if entry["gateway"]:
                assert ipaddress.ip_address(entry["gateway"]) not in addresses or cluster["addressing"]["mode"] == "shared"
            subnets.setdefault(entry["subnet"], set()).add(host)
            # The same entry as the single-host filter, whoever else is in the plan.
        assert node["rails"] == [dict(e, interface=None) for e in rail_addresses(cluster, node["node_id"])]
    mode = cluster["addressing"]["mode"]
    if mode in ("exclusive", "p2p"):
        # Per-node subnets: each subnet belongs to one host, and no two overlap.
        assert all(len(hosts) == 1 for hosts in subnets.values())
        nets = sorted(ipaddress.ip_network(s) for s in subnets)
        for a, b in zip(nets, nets[1:]):
            assert not a.overlaps(b)
    # Gateways never collide with any host address.
    for node in plan["nodes"].values():
        for entry in node["rails"]:
            if entry["gateway"]:
                assert ipaddress.ip_address(entry["gateway"]) not in addresses
    # Adding nodes never moves existing ones.
    extra = data.draw(st.integers(1, limit))
    if extra not in ids:
        bigger = dict(nodes, added=extra)
        plan2 = rail_plan(cluster, bigger)
        for host in nodes:
            assert plan2["nodes"][host] == plan["nodes"][host]


@settings(max_examples=50, deadline=None)
@given(clusters())
def test_one_host_alone_gets_what_the_whole_plan_gives_it(cluster):
    """rail_addresses (per host, under --limit or a job slice) and rail_plan (the whole inventory)
    are two code paths; they must agree on every node."""
    ids = [1, 2] if load_cluster(cluster).max_node_id >= 2 else [1]
    plan = rail_plan(cluster, {"n%d" % i: i for i in ids})
    for i in ids:
        alone = rail_addresses(cluster, i)
        assert [dict(e, interface=None) for e in alone] == plan["nodes"]["n%d" % i]["rails"]
