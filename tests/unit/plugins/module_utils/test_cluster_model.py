# -*- coding: utf-8 -*-
"""Every validation error of the cluster model: one clear message naming field, value and fix."""

from __future__ import annotations

import copy
import re

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import check_interfaces, fabric_interfaces, rail_plan

BASE = {
    "name": "t",
    "rails": 8,
    "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27},
}


def with_changes(**changes):
    data = copy.deepcopy(BASE)
    for dotted, value in changes.items():
        target = data
        keys = dotted.split("__")
        for key in keys[:-1]:
            target = target.setdefault(key, {})
        if value is DELETE:
            target.pop(keys[-1], None)
        else:
            target[keys[-1]] = value
    return data


DELETE = object()

CASES = [
    # (changes, field named in the error, words the message must contain)
    ({"addressing__supernet": "172.17.0.0/33"}, "fabric_cluster.addressing.supernet", "not a valid network"),
    ({"addressing__supernet": "172.17.0.1/16"}, "fabric_cluster.addressing.supernet", "172.17.0.0/16"),
    ({"addressing__supernet": "banana"}, "fabric_cluster.addressing.supernet", "CIDR"),
    ({"addressing__supernet": DELETE}, "fabric_cluster.addressing.supernet", "missing"),
    ({"addressing__mode": "fancy"}, "fabric_cluster.addressing.mode", "shared, exclusive, p2p, infiniband"),
    ({"addressing__rail_prefix": 64}, "fabric_cluster.addressing.rail_prefix", "IPv6"),
    ({"addressing__rail_prefix": 12}, "fabric_cluster.addressing.rail_prefix", "shorter than the supernet"),
    ({"addressing__rail_prefix": "x"}, "fabric_cluster.addressing.rail_prefix", "not an integer"),
    ({"addressing__node_prefix": 24}, "fabric_cluster.addressing.node_prefix", "longer than rail_prefix"),
    ({"addressing__node_prefix": 31}, "fabric_cluster.addressing.node_prefix", "no usable addresses"),
    ({"addressing__node_prefix": DELETE}, "fabric_cluster.addressing.node_prefix", "missing"),
    ({"addressing__supernet": "172.17.0.0/22"}, "fabric_cluster.addressing.supernet", "too small for 8 rails"),
    ({"addressing__gateway_offset": 40}, "fabric_cluster.addressing.gateway_offset", "outside the usable"),
    ({"addressing__host_offset": 1}, "fabric_cluster.addressing.host_offset", "gateway"),
    ({"addressing__colour": "red"}, "fabric_cluster.addressing.colour", "not a known key"),
    ({"rails": 0}, "fabric_cluster.rails", "below the minimum"),
    ({"rails": True}, "fabric_cluster.rails", "boolean"),
    ({"rails": DELETE}, "fabric_cluster.rails", "missing"),
    ({"name": "bad name!"}, "fabric_cluster.name", "not a valid cluster name"),
    ({"mtu": 10000}, "fabric_cluster.mtu", "above the maximum 9216"),
    ({"routing__table_base": 250}, "fabric_cluster.routing.table_base", "reserved table"),
    ({"routing__rule_priority": 32765}, "fabric_cluster.routing.rule_priority", "32766"),
    ({"management_networks": ["172.17.4.0/24"]}, "fabric_cluster.management_networks[0]", "overlaps"),
    ({"pod_networks": ["172.16.0.0/12"]}, "fabric_cluster.pod_networks[0]", "overlaps"),
    ({"service_networks": ["10.0.0.0/8", "172.17.255.0/24"]}, "fabric_cluster.service_networks[1]", "overlaps"),
    ({"management_networks": ["10.0.0.1/8"]}, "fabric_cluster.management_networks[0]", "host bits"),
    ({"tors": [{"name": "a", "rails": [9]}]}, "fabric_cluster.tors[0].rails", "above the maximum 8"),
    ({"tors": [{"name": "a", "rails": [1]}, {"name": "a", "rails": [2]}]}, "fabric_cluster.tors[1].name", "two ToRs"),
    ({"tors": [{"name": "a", "rails": [1]}, {"name": "b", "rails": [1], "nodes": "4-8"}]},
     "fabric_cluster.tors[1].nodes", "already serves"),
    # the conflicting pair apart in the model and its ranges out of order: found by the sweep, named as the pair
    ({"tors": [{"name": "a", "rails": [1], "nodes": "6-7"}, {"name": "b", "rails": [1], "nodes": "1-2"},
               {"name": "c", "rails": [1], "nodes": ["3-4", "7"]}]}, "fabric_cluster.tors[2].nodes", "which a already serves"),
    ({"tors": [{"name": "a", "rails": [1, 2], "port_template": "swp{node}"}]},
     "fabric_cluster.tors[0].port_template", "{rail}"),
    ({"tors": [{"name": "a", "rails": [1], "port_template": "swp{slot}"}]},
     "fabric_cluster.tors[0].port_template", "unknown field"),
    ({"tors": [{"name": "a", "rails": [1], "port_template": "swp{node}{"}]},
     "fabric_cluster.tors[0].port_template", "stray brace"),
    ({"tors": [{"name": "a", "rails": [1], "nodes": "1-99"}]}, "fabric_cluster.tors[0].nodes", "largest node id"),
    ({"tors": [{"name": "a", "rails": [1], "nodes": "5-2"}]}, "fabric_cluster.tors[0].nodes", "ends before"),
]


@pytest.mark.parametrize("changes,field,words", CASES, ids=[c[1] + ":" + c[2] for c in CASES])
def test_validation_errors(changes, field, words):
    with pytest.raises(FabricModelError) as err:
        load_cluster(with_changes(**changes))
    message = str(err.value)
    assert message.startswith(field + ":"), message
    assert words in message
    assert "Fix:" in message
    assert err.value.field == field


def test_not_a_mapping():
    with pytest.raises(FabricModelError, match="^fabric_cluster: None is not a mapping"):
        load_cluster(None)


def test_p2p_rejects_offsets():
    data = with_changes(addressing__mode="p2p", addressing__node_prefix=DELETE, addressing__gateway_offset=2)
    with pytest.raises(FabricModelError, match="gateway_offset.*does not apply to p2p"):
        load_cluster(data)


def test_ipv6_supernet_with_ipv4_prefix_sizes_is_fine_but_v4_mgmt_is_ignored():
    data = with_changes(addressing__supernet="fd00:17::/48", addressing__rail_prefix=56, addressing__node_prefix=64,
                        management_networks=["10.0.0.0/8"])
    assert load_cluster(data).single.family == 6


def test_node_ids_must_be_unique():
    with pytest.raises(FabricModelError) as err:
        rail_plan(BASE, {"gpu01": 1, "gpu02": 1})
    assert "hostvars[gpu02].fabric_node_id" in str(err.value)
    assert "gpu01" in str(err.value)


def test_node_id_missing_or_bad():
    with pytest.raises(FabricModelError, match=r"hostvars\[gpu01\].fabric_node_id: None is not set"):
        rail_plan(BASE, {"gpu01": None})
    with pytest.raises(FabricModelError, match="is not an integer"):
        rail_plan(BASE, {"gpu01": "one"})
    with pytest.raises(FabricModelError, match="below the minimum 1"):
        rail_plan(BASE, {"gpu01": 0})
    # Inventory INI gives strings; "3" is accepted.
    assert rail_plan(BASE, {"gpu01": "3"})["nodes"]["gpu01"]["node_id"] == 3


def test_interface_list_checks():
    cluster = load_cluster(BASE).single
    with pytest.raises(FabricModelError, match="has 2 interfaces but the cluster has 8 rails"):
        check_interfaces(cluster, ["a", "b"])
    names = ["ens%d" % i for i in range(8)]
    names[3] = "ens1"
    with pytest.raises(FabricModelError, match=r"fabric_rail_interfaces\[3\]: 'ens1' is listed for two rails"):
        check_interfaces(cluster, names)
    for bad in ("this-name-is-way-too-long", "ens1,ens2", "ens1:0", "ens 1", "ens1/2", "-ens1", "ens\u00e9", "..",
                "\u0665\u0666\u0667"):
        names[3] = bad.encode().decode("unicode_escape")
        with pytest.raises(FabricModelError, match="not a valid Linux interface name"):
            check_interfaces(cluster, names)
    with pytest.raises(FabricModelError, match=r"hostvars\[h\].fabric_rail_interfaces"):
        rail_plan(BASE, {"h": {"node_id": 1, "rail_interfaces": ["x"]}})


def test_keep_off_rule_is_refused_with_the_reason():
    raw = dict(BASE, routing={"keep_off_rule": True})
    with pytest.raises(FabricModelError, match=r"routing.keep_off_rule: True was removed in 0.2.0: the rail tables "
                                               r"now route only the fabric's own prefixes"):
        load_cluster(raw)


def test_defaults_filled_in():
    data = load_cluster(BASE).to_dict()["fabrics"]["default"]
    assert data["mtu"] == 9000
    assert data["routing"] == {"table_base": 150, "rule_priority": 1000, "aggregate_route": True}
    assert data["max_node_id"] == 8
    assert [t["name"] for t in data["tors"]] == ["t-rail%d-tor" % r for r in range(1, 9)]


TWO = {
    "name": "dgx", "management_networks": ["10.0.0.0/16"],
    "fabrics": {
        "compute": {"rails": 8, "addressing": {"mode": "exclusive", "supernet": "10.60.0.0/16", "rail_prefix": 19,
                                               "node_prefix": 27}},
        "storage": {"rails": 2, "mtu": 4200, "addressing": {"mode": "shared", "supernet": "10.70.0.0/16",
                                                            "rail_prefix": 20}, "qos": {"preset": "spiderpool"}},
    },
}


def test_two_fabrics_get_their_own_tables_priorities_and_tors():
    cluster = load_cluster(TWO)
    compute, storage = cluster.fabrics
    assert (compute.table_base, compute.rule_priority, storage.table_base, storage.rule_priority) == (
        150, 1000, 250, 1100)
    assert storage.mtu == 4200 and compute.mtu == 9000
    assert [t.name for t in storage.tors] == ["dgx-storage-rail1-tor", "dgx-storage-rail2-tor"]
    assert cluster.max_node_id == 256
    plan = rail_plan(TWO, {"gpu01": {"node_id": 3, "rail_interfaces": {
        "compute": ["c%d" % i for i in range(8)], "storage": ["s0", "s1"]}}})
    rails = plan["nodes"]["gpu01"]["rails"]
    assert [(e["fabric"], e["rail"], e["interface"], e["table"], e["priority"], e["mtu"]) for e in rails[7:]] == [
        ("compute", 8, "c7", 158, 1008, 9000), ("storage", 1, "s0", 251, 1101, 4200),
        ("storage", 2, "s1", 252, 1102, 4200)]
    assert rails[8]["address"] == "10.70.0.4/20" and rails[0]["address"] == "10.60.0.66/27"


@pytest.mark.parametrize("change,message", [
    ({"storage": {"addressing": {"supernet": "10.60.128.0/19"}}},
     r"fabrics.storage.addressing.supernet: '10.60.128.0/19' overlaps the supernet 10.60.0.0/16 of fabric compute"),
    ({"storage": {"routing": {"table_base": 155}}},
     r"fabrics.storage.routing.table_base: 155 gives rail 1 the table 156 that fabric compute uses"),
    ({"storage": {"routing": {"rule_priority": 1007}}},
     r"fabrics.storage.routing.rule_priority: 1007 gives rail 1 the rule priority 1008 that fabric compute uses"),
    ({"storage": {"tors": [{"name": "dgx-compute-rail1-tor", "rails": [1, 2], "port_template": "swp{rail}s{node}"}]}},
     r"fabrics.storage.tors: 'dgx-compute-rail1-tor' is also a ToR of fabric compute"),
    ({"Storage!": {}}, r"fabric_cluster.fabrics: 'Storage!' is not a valid fabric name"),
])
def test_fabrics_never_collide(change, message):
    data = copy.deepcopy(TWO)
    for name, sub in change.items():
        target = data["fabrics"].setdefault(name, copy.deepcopy(TWO["fabrics"]["storage"]))
        for key, value in sub.items():
            if isinstance(value, dict):
                target.setdefault(key, {}).update(value)
            else:
                target[key] = value
    with pytest.raises(FabricModelError, match=message):
        load_cluster(data)


def test_both_forms_at_once_are_refused_with_the_new_form_named():
    data = dict(TWO, rails=8)
    with pytest.raises(FabricModelError, match=r"fabric_cluster.rails: 8 belongs inside a fabric when "
                                               r"fabric_cluster.fabrics is used. Fix: move it to "
                                               r"fabric_cluster.fabrics.<name>.rails"):
        load_cluster(data)


def test_several_fabrics_need_interfaces_per_fabric():
    cluster = load_cluster(TWO)
    with pytest.raises(FabricModelError, match="is not a mapping of fabric name to interface list"):
        fabric_interfaces(cluster, ["a"] * 10)
    with pytest.raises(FabricModelError, match=r"fabric_rail_interfaces.storage: None is missing"):
        fabric_interfaces(cluster, {"compute": ["c%d" % i for i in range(8)]})
    with pytest.raises(FabricModelError, match=r"fabric_rail_interfaces.storage\[0\]: 'c1' is also a rail NIC of "
                                               r"fabric compute"):
        fabric_interfaces(cluster, {"compute": ["c%d" % i for i in range(8)], "storage": ["c1", "s1"]})


@pytest.mark.parametrize("bad", ["\uff13", "\u0663", "3\n", "0x3", "3.0"])
def test_node_ids_are_ascii_integers(bad):
    with pytest.raises(FabricModelError, match="is not an integer"):
        rail_plan(BASE, {"gpu01": bad})


@pytest.mark.parametrize("supernet,what", [
    ("::/0", "::/8 (unspecified, loopback and IPv4-mapped)"), ("0.0.0.0/0", "0.0.0.0/8 (this-network)"),
    ("127.0.0.0/8", "loopback"), ("224.0.0.0/4", "multicast"), ("169.254.0.0/16", "link-local"),
    ("fe80::/10", "link-local"), ("ff00::/8", "multicast"), ("240.0.0.0/8", "reserved")])
def test_supernets_that_would_capture_host_traffic_are_refused(supernet, what):
    """A supernet of ::/0 on an IPv4-managed host once put an IPv6 default route through rail 1."""
    data = with_changes(addressing__supernet=supernet, addressing__rail_prefix=24 if "." in supernet else 64,
                        addressing__node_prefix=27 if "." in supernet else 72, management_networks=[])
    with pytest.raises(FabricModelError, match=r"supernet: '%s' overlaps .*%s.*which can never carry a fabric"
                       % (re.escape(supernet), re.escape(what))):
        load_cluster(data)


@pytest.mark.parametrize("speed, fec, ok", [("400G", "fc", False), ("400G", "none", False), ("400G", "rs", True),
                                            ("800G", "fc", False), ("100G", "fc", False), ("100G", "none", True),
                                            ("25G", "fc", True), ("25G", "rs", True), ("10G", "rs", False)])
def test_port_fec_must_exist_at_the_port_speed(speed, fec, ok):
    raw = {"name": "c", "rails": 1, "addressing": {"mode": "shared", "supernet": "10.1.0.0/16", "rail_prefix": 24},
           "tors": [{"name": "t1", "rails": [1], "port_speed": speed, "port_fec": fec}]}
    if ok:
        assert load_cluster(raw).fabrics[0].tors[0].port_fec == fec
    else:
        with pytest.raises(FabricModelError, match=r"fabric_cluster.tors\[0\].port_fec: '%s' is not a FEC of %s"
                           % (fec, speed)):
            load_cluster(raw)


def _split_rail(mode):
    addressing = {"mode": mode, "supernet": "10.80.0.0/16", "rail_prefix": 24}
    if mode == "exclusive":
        addressing["node_prefix"] = 28
    return {"name": "span", "rails": 1, "addressing": addressing,
            "tors": [{"name": "leaf-a", "rails": [1], "nodes": "1-8"}, {"name": "leaf-b", "rails": [1], "nodes": "9-16"}]}


def test_a_shared_rail_over_two_tors_is_refused_naming_the_second_tor():
    with pytest.raises(FabricModelError, match=r"fabric_cluster.tors\[1\].rails: \[1\] puts rail 1 of a shared-mode "
                                               r"fabric on a second ToR \(leaf-a serves it already\).*one ToR per rail"):
        load_cluster(_split_rail("shared"))


@pytest.mark.parametrize("mode", ["exclusive", "p2p", "infiniband"])
def test_a_rail_over_two_tors_is_fine_where_each_node_is_routed_or_there_is_no_gateway(mode):
    cluster = load_cluster(_split_rail(mode))
    plan = rail_plan(_split_rail(mode), {"n1": 1, "n9": 9})
    tors = {name: node["rails"][0]["tor"] for name, node in plan["nodes"].items()}
    assert tors == {"n1": "leaf-a", "n9": "leaf-b"}, tors
