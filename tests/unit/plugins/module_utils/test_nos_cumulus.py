# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cumulus Linux (NVUE) renders against what NVIDIA's `nv set qos roce mode lossless` already sets (Cumulus Linux
5.14 user guide, "RDMA over Converged Ethernet - RoCE", table "Default RoCE Configuration"): switch priority 3 ->
traffic class 3, 6 -> 6, the others -> 0; PFC and the RoCE lossless pool on priority 3; TC 6 strict, TC 3 and TC 0
WRR 50 %. The render writes only what a profile wants otherwise, moves a lossless priority other than 3 between the
traffic pools as the guide does, and gives every rail port a complete egress scheduler."""

from __future__ import annotations

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse import parse_qos
from ansible_collections.ainet.fabric.plugins.module_utils.tor import nos_cumulus
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import scheduler, tor_intent
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_render import render_tor

CUSTOM = {"preset": "custom", "roce_dscp": 24, "roce_priority": 4, "cnp_dscp": 46, "cnp_priority": 7}


def plan_for(qos):
    cluster = {"name": "r", "rails": 1, "mtu": 9000, "qos": qos,
               "addressing": {"mode": "p2p", "supernet": "172.17.0.0/16", "rail_prefix": 24},
               "tors": [{"name": "leaf1", "rails": [1], "platform": "cumulus", "port_template": "swp{node}"}]}
    return rail_plan(cluster, {"gpu01": {"node_id": 1, "rail_interfaces": ["ens1"]}})


def body_qos(qos):
    return render_tor(plan_for(qos), "leaf1")["data"]["qos"]


def sps(tree):
    return sorted(int(sp) for sp in tree["switch-priority"])


# ----------------------------------------------------------------------------- defect 1: qos roce's queue map stays

@pytest.mark.parametrize("qos,moved", [
    ({}, None),                                  # nvidia: RoCE 3 -> TC 3, CNP 6 -> TC 6, as qos roce maps them
    ({"preset": "sonic"}, {4: 4}),               # qos roce sends switch priority 4 to TC 0
    ({"preset": "spiderpool"}, {5: 5}),
    (CUSTOM, {4: 4, 7: 7}),
])
def test_only_the_used_priorities_qos_roce_maps_elsewhere_are_remapped(qos, moved):
    tree = body_qos(qos).get("egress-queue-mapping")
    if moved is None:
        assert tree is None
    else:
        assert list(tree) == ["default-global"]
        assert {int(sp): e["traffic-class"] for sp, e in tree["default-global"]["switch-priority"].items()} == moved


@pytest.mark.parametrize("qos", [{}, {"preset": "spiderpool"}, CUSTOM])
def test_priorities_the_profile_does_not_use_keep_qos_roce_s_queue(qos):
    rendered = render_tor(plan_for(qos), "leaf1")
    port = parse_qos(rendered["text"], "nvue")["ports"]["swp1"]
    used = set(tor_intent(plan_for(qos), "leaf1")["qos"]["dscp_to_priority"].values())
    for sp in range(8):
        want = sp if sp in used else nos_cumulus.ROCE_PRIORITY_TO_QUEUE[sp]
        assert port["priority_to_queue"][sp] == want, sp


# ----------------------------------------------------------------------------- defect 2: a moved lossless priority

@pytest.mark.parametrize("qos,lossless", [
    ({"preset": "spiderpool"}, [5]),
    (CUSTOM, [4]),
    ({"preset": "sonic"}, [3, 4]),
])
def test_a_moved_lossless_priority_leaves_default_lossy_for_the_roce_lossless_pool(qos, lossless):
    tree = body_qos(qos)
    pools = tree["traffic-pool"]
    assert sorted(pools) == ["default-lossy", "roce-lossless"]
    assert sps(pools["roce-lossless"]) == lossless
    assert sps(pools["default-lossy"]) == [sp for sp in range(8) if sp not in lossless]
    # PFC and ECN on the port profiles sit on that priority (and its queue), as the guide moves them.
    assert sps(tree["pfc"]["ainet-roce"]) == lossless
    assert set(lossless) <= set(int(tc) for tc in tree["congestion-control"]["ainet-roce"]["traffic-class"])
    port = parse_qos(render_tor(plan_for(qos), "leaf1")["text"], "nvue")["ports"]["swp1"]
    assert port["buffer_lossless"] == lossless and port["pfc"] == lossless


def test_the_nvidia_profile_leaves_the_traffic_pools_to_qos_roce():
    tree = body_qos({})
    assert "traffic-pool" not in tree
    assert parse_qos(render_tor(plan_for({}), "leaf1")["text"], "nvue")["ports"]["swp1"]["buffer_lossless"] == [3]


# ----------------------------------------------------------------------------- defect 3: a complete scheduler

@pytest.mark.parametrize("qos,want", [
    ({}, {0: 50, 3: 50, 6: None}),                                   # the profile's weights = qos roce's
    (dict(CUSTOM, roce_priority=3, roce_dscp=26, cnp_priority=6, cnp_dscp=48), {0: 50, 3: 50, 6: None}),
    ({"preset": "sonic"}, {0: 25, 3: 25, 4: 25, 6: 25}),             # PFC queues 50 %, the rest 50 %
    ({"preset": "spiderpool"}, {0: 25, 5: 50, 6: 25}),
    (CUSTOM, {0: 50, 4: 50, 7: None}),
    (dict(CUSTOM, cnp_strict=False), {0: 25, 4: 50, 7: 25}),
    (dict(CUSTOM, ets_weights={0: 60, 4: 40}), {0: 60, 4: 40, 7: None}),
    (dict(CUSTOM, cnp_strict=False, ets_weights={0: 50, 4: 30, 7: 20}), {0: 50, 4: 30, 7: 20}),
], ids=["nvidia", "custom-as-nvidia", "sonic", "spiderpool", "custom", "custom-cnp-not-strict", "custom-ets",
        "custom-ets-cnp-not-strict"])
def test_every_preset_renders_a_complete_egress_scheduler(qos, want):
    tree = body_qos(qos)["egress-scheduler"]["ainet-roce"]["traffic-class"]
    have = {int(tc): (e["bw-percent"] if e["mode"] == "dwrr" else None) for tc, e in tree.items()}
    assert have == want
    assert all(e["mode"] == "strict" and "bw-percent" not in e or e["mode"] == "dwrr" and 1 <= e["bw-percent"] <= 100
               for e in tree.values())
    assert sum(w for w in have.values() if w) == 100
    assert nos_cumulus.validate_nvue(render_tor(plan_for(qos), "leaf1")["data"], nos_cumulus.RELEASE) == []


def test_without_ets_weights_the_scheduler_is_qos_roce_s():
    intent = tor_intent(plan_for(dict(CUSTOM, roce_priority=3, roce_dscp=26, cnp_priority=6, cnp_dscp=48)), "leaf1")
    assert intent["qos"]["ets"] == {}
    # "Port ETS": traffic class 6 (CNP) strict, 3 (RoCE) WRR 50 %, 0 (other traffic) WRR 50 %.
    assert scheduler(intent["qos"]) == {0: 50, 3: 50, 6: None}


# ----------------------------------------------------------------------------- the NVUE object model, strict

def test_the_nvue_check_refuses_an_unknown_key_at_any_depth_and_leaves_the_models_as_they_are():
    pytest.importorskip("nvueschema")
    body = render_tor(plan_for({}), "leaf1")["data"]
    assert nos_cumulus.validate_nvue(body, nos_cumulus.RELEASE) == []                       # control
    body["interface"]["swp1"]["link"]["colour"] = "blue"
    body["service"]["lldp"]["tx-colour"] = "red"
    problems = nos_cumulus.validate_nvue(body, nos_cumulus.RELEASE)
    assert [p.split(":")[0] for p in problems] == ["interface.swp1.link.colour", "service.lldp.tx-colour"]
    model, keywords = nos_cumulus._strict_nvue_model(nos_cumulus.RELEASE)  # pylint: disable=protected-access
    if keywords:  # forbidden for the validation only: another user of nvueschema in the process sees its models
        assert keywords == {"extra": "forbid"}
        assert model.model_config.get("extra") != "forbid"


def test_without_a_per_validation_extra_every_model_is_made_to_forbid_unknown_keys(monkeypatch):
    """The path for a pydantic whose model_validate takes no ``extra``: each model's own configuration."""
    pydantic = pytest.importorskip("pydantic")
    import sys  # pylint: disable=import-outside-toplevel
    import types  # pylint: disable=import-outside-toplevel
    module = types.ModuleType("nvue_stand_in")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec("from pydantic import BaseModel\n"  # pylint: disable=exec-used
         "class Link(BaseModel):\n    mtu: int = 9216\n"
         "class Port(BaseModel):\n    link: Link = None\n"
         "class Config(BaseModel):\n    interface: dict[str, Port] = {}\n", module.__dict__)
    body = {"interface": {"swp1": {"link": {"mtu": 9000, "colour": "blue"}}}}
    module.Config.model_validate(body)                                   # control: pydantic ignores it by default
    nos_cumulus._forbid_extra(module, pydantic.BaseModel)  # pylint: disable=protected-access
    with pytest.raises(pydantic.ValidationError) as err:
        module.Config.model_validate(body)
    assert [e["loc"] for e in err.value.errors()] == [("interface", "swp1", "link", "colour")]
