"""SONiC config_db from the plan, proven by a round trip: parsed back with the SONiC parser, every port
agrees with a host set up by roce_qos for the same profile, and its addresses are the plan's gateways."""

import json

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.lossless_check import lossless_diff
from ansible_collections.ainet.fabric.plugins.module_utils.qos_parse import parse_qos
from ansible_collections.ainet.fabric.plugins.module_utils.qos_profile import resolve_profile
from ansible_collections.ainet.fabric.plugins.module_utils.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.roce_qos_plan import desired, ets_layout
from ansible_collections.ainet.fabric.plugins.module_utils.tor_render_sonic import render_sonic

ADDRESSING = {
    "shared": {"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24},
    "exclusive": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 29},
    "p2p": {"mode": "p2p", "supernet": "172.17.0.0/16", "rail_prefix": 24},
    "p2p-v6": {"mode": "p2p", "supernet": "fd00:17::/48", "rail_prefix": 64},
}
PRESETS = ({}, {"preset": "sonic"}, {"preset": "spiderpool"})


def host_as_roce_qos_leaves_it(profile, mtu):
    """A NIC after roce_qos: the profile's desired settings, ETS as its layout, the fabric MTU."""
    host = dict(desired(profile), mtu=mtu)
    layout = ets_layout(profile)
    if layout:
        host["ets"] = {tc: {"mode": layout[0][tc], "weight": layout[1][tc] if layout[0][tc] == "ets" else None}
                       for tc in range(8)}
        host["priority_to_queue"] = {p: p for p in range(8)}
    return host


def plan_for(mode, qos):
    cluster = {"name": "r", "rails": 2, "mtu": 9000, "addressing": ADDRESSING[mode], "qos": qos,
               "tors": [{"name": "leaf%d" % r, "rails": [r], "platform": "sonic", "port_template": "Ethernet{node}"}
                        for r in (1, 2)]}
    return rail_plan(cluster, {"gpu%02d" % n: {"node_id": n, "rail_interfaces": ["ens1", "ens2"]} for n in (1, 2, 5)})


@pytest.mark.parametrize("mode", sorted(ADDRESSING))
@pytest.mark.parametrize("qos", PRESETS, ids=["nvidia", "sonic", "spiderpool"])
def test_every_port_agrees_with_the_host_after_a_round_trip(mode, qos):
    plan = plan_for(mode, qos)
    profile = plan["cluster"]["fabrics"]["default"]["qos"]
    host = host_as_roce_qos_leaves_it(profile, 9000)
    for name, tor in plan["tors"].items():
        facts = parse_qos(json.dumps(render_sonic(plan, name), sort_keys=True), "sonic_config_db")
        assert facts["problems"] == []
        for entry in tor["ports"]:
            assert lossless_diff(host, facts, entry["port"], profile) == [], (name, entry["port"])


@pytest.mark.parametrize("mode", sorted(ADDRESSING))
def test_addresses_are_the_plans_gateways(mode):
    plan = plan_for(mode, {})
    for name, tor in plan["tors"].items():
        config = render_sonic(plan, name)
        if mode == "shared":
            addresses = sorted(k.split("|", 1)[1] for k in config["VLAN_INTERFACE"] if "|" in k)
            assert addresses == sorted(s["address"] for s in tor["svis"])
            members = sorted("Vlan%d|%s" % (1000 + e["rail"], e["port"]) for e in tor["ports"])
            assert sorted(config["VLAN_MEMBER"]) == members
        else:
            addresses = sorted(k for k in config["INTERFACE"] if "|" in k)
            assert addresses == sorted("%s|%s" % (e["port"], e["address"]) for e in tor["ports"])


def test_a_switch_rendered_for_another_profile_is_caught():
    plan = plan_for("exclusive", {"preset": "sonic"})
    nvidia = resolve_profile({}, "q")
    facts = parse_qos(json.dumps(render_sonic(plan, "leaf1")), "sonic_config_db")
    codes = {i["code"] for i in lossless_diff(host_as_roce_qos_leaves_it(nvidia, 9000), facts, "Ethernet1", nvidia)}
    assert {"roce_dscp_lossy_on_switch", "pfc_mismatch", "profile_mismatch_switch"} <= codes


def test_a_second_render_is_identical():
    plan = plan_for("shared", {})
    assert json.dumps(render_sonic(plan, "leaf1"), sort_keys=True) == json.dumps(render_sonic(plan, "leaf1"),
                                                                                 sort_keys=True)
