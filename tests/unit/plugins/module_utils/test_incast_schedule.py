# -*- coding: utf-8 -*-
"""The incast rounds of the lossless load test (fleet/incast_schedule.py): who receives, who sends, per ToR rail,
derived from the plan alone."""
from __future__ import annotations

import collections

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.fleet import incast_schedule as s
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan


def cluster(nodes_per_tor=4, tors=2, rails=2, qos="nvidia"):
    return {"name": "t", "rails": rails, "mtu": 9000, "management_networks": ["10.0.0.0/16"],
            "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 22, "node_prefix": 28},
            "tors": [{"name": "pod%d-rail%d" % (p, r), "rails": [r],
                      "nodes": "%d-%d" % (p * nodes_per_tor + 1, (p + 1) * nodes_per_tor)}
                     for p in range(tors) for r in range(1, rails + 1)],
            "qos": {"preset": qos}}


def plan_of(nodes_per_tor=4, tors=2, rails=2, qos="nvidia"):
    nodes = dict(("gpu%03d" % i, {"node_id": i, "rail_interfaces": ["eth%d" % r for r in range(rails)]})
                 for i in range(1, nodes_per_tor * tors + 1))
    return rail_plan(cluster(nodes_per_tor, tors, rails, qos), nodes)


def test_groups_are_the_plans_tor_rails_with_their_nodes_in_node_id_order():
    groups = s.groups(plan_of())
    assert [(g["tor"], g["rail"]) for g in groups] == [("pod0-rail1", 1), ("pod0-rail2", 2), ("pod1-rail1", 1),
                                                       ("pod1-rail2", 2)]
    assert groups[0]["members"] == ["gpu001", "gpu002", "gpu003", "gpu004"]
    assert groups[2]["members"] == ["gpu005", "gpu006", "gpu007", "gpu008"]
    assert groups[0]["ports"]["gpu001"] == "swp1"


@pytest.mark.parametrize("size", [2, 3, 5, 8, 17, 32])
def test_by_default_every_node_receives_once_from_every_other_node(size):
    """Every other node sends, up to the bound (16 by default; 32 nodes here with the bound raised)."""
    members = ["n%02d" % i for i in range(size)]
    bound = s.DEFAULT_MAX_SENDERS if size <= 17 else s.MAX_SENDERS_LIMIT
    seen = [s.incast(members, r, max_senders=bound) for r in range(1, s.round_count(size) + 1)]
    assert sorted(receiver for receiver, _senders in seen) == sorted(members)
    for receiver, senders in seen:
        assert sorted(senders + [receiver]) == sorted(members) and receiver not in senders


def test_senders_are_bounded_and_rotate_with_the_receiver():
    members = ["n%02d" % i for i in range(32)]
    receiver, senders = s.incast(members, 1, max_senders=16)
    assert receiver == "n00" and senders == ["n%02d" % i for i in range(1, 17)]
    receiver, senders = s.incast(members, 32, max_senders=16)
    assert receiver == "n31" and senders == ["n%02d" % i for i in range(0, 16)]
    # every node sends equally often over the rounds: the load is spread
    counts = collections.Counter(x for r in range(1, 33) for x in s.incast(members, r, max_senders=16)[1])
    assert set(counts.values()) == {16}


def test_bounded_rounds_spread_the_receivers_over_the_rail():
    members = ["n%02d" % i for i in range(32)]
    assert [s.incast(members, r, rounds=4)[0] for r in range(1, 5)] == ["n00", "n08", "n16", "n24"]
    assert s.round_count(32, 4) == 4 and s.round_count(3, 4) == 3 and s.round_count(1) == 0


def test_a_round_outside_the_schedule_and_a_node_listed_twice_are_refused():
    with pytest.raises(ValueError, match="rounds 1 to 2"):
        s.incast(["a", "b"], 3)
    with pytest.raises(ValueError, match="listed twice"):
        s.incast(["a", "a"], 1)


def test_steps_run_each_lossless_class_in_turn():
    plan = plan_of()
    steps, per_class = s.step_count(plan, [3, 4])
    assert (steps, per_class) == (8, 4)
    assert [s.step_of(n, per_class, [3, 4]) for n in (1, 4, 5, 8)] == [(3, 1), (3, 4), (4, 1), (4, 4)]
    with pytest.raises(ValueError, match="steps 1 to 8"):
        s.step_of(9, per_class, [3, 4])


def test_a_step_holds_every_tor_rail_at_once_each_sender_on_its_own_port():
    plan = plan_of()
    step = s.step_assignments(plan, sorted(plan["nodes"]), 1, [3])
    assert [(i["tor"], i["receiver"], i["senders"]) for i in step["incasts"]] == [
        ("pod0-rail1", "gpu001", ["gpu002", "gpu003", "gpu004"]), ("pod0-rail2", "gpu001", ["gpu002", "gpu003", "gpu004"]),
        ("pod1-rail1", "gpu005", ["gpu006", "gpu007", "gpu008"]), ("pod1-rail2", "gpu005", ["gpu006", "gpu007", "gpu008"])]
    receive = step["hosts"]["gpu001"]["receive"]
    assert [(r["rail"], r["interface"], [x["port"] for x in r["servers"]]) for r in receive] == [
        (1, "eth0", [20000, 20001, 20002]), (2, "eth1", [20100, 20101, 20102])]
    send = step["hosts"]["gpu003"]["send"]
    assert [(x["rail"], x["receiver"], x["port"], x["receiver_ip"]) for x in send] == [
        (1, "gpu001", 20001, plan["nodes"]["gpu001"]["rails"][0]["ip"]),
        (2, "gpu001", 20101, plan["nodes"]["gpu001"]["rails"][1]["ip"])]
    # every (host, port) is used once in a step: no two servers on one port
    ports = [(h, x["port"]) for h, part in step["hosts"].items() for r in part["receive"] for x in r["servers"]]
    assert len(ports) == len(set(ports))


def test_a_limit_runs_the_same_incasts_minus_those_it_cannot():
    plan = plan_of()
    whole = s.step_assignments(plan, sorted(plan["nodes"]), 2, [3])
    limited = s.step_assignments(plan, ["gpu001", "gpu002", "gpu005"], 2, [3])
    assert [(i["tor"], i["receiver"]) for i in limited["incasts"]] == [(i["tor"], i["receiver"]) for i in whole["incasts"]]
    pod0 = limited["incasts"][0]
    assert pod0["receiver"] == "gpu002" and pod0["senders"] == ["gpu001"] and pod0["missing"] == ["gpu003", "gpu004"]
    assert pod0["skipped"] is None
    pod1 = limited["incasts"][2]
    assert pod1["receiver"] == "gpu006" and pod1["skipped"].startswith("the receiver gpu006 is not in this run")
    alone = s.step_assignments(plan, ["gpu002"], 2, [3])["incasts"][0]
    assert alone["skipped"].startswith("none of its senders (gpu003, gpu004, gpu001)")


def test_projected_rounds_for_64_tors_of_32_nodes():
    assert s.projected_rounds(64, 32, seconds=10) == {
        "rounds_per_class": 32, "steps": 32, "incasts": 2048, "senders_per_incast": 16, "flows": 32768,
        "load_seconds": 320}
    assert s.projected_rounds(64, 32, classes=2, rounds=8, max_senders=31)["steps"] == 16
    # the projection and a real plan agree
    plan = plan_of(nodes_per_tor=8, tors=3, rails=1)
    projected = s.projected_rounds(3, 8, max_senders=4)
    assert s.step_count(plan, [3])[0] == projected["steps"]
    incasts = [s.step_assignments(plan, sorted(plan["nodes"]), n, [3], max_senders=4)["incasts"]
               for n in range(1, projected["steps"] + 1)]
    assert sum(len(i) for i in incasts) == projected["incasts"]
    assert sum(len(x["senders"]) for i in incasts for x in i) == projected["flows"]


# ---- issue 40: one incast per ToR per step ------------------------------------------------------------------------

def shared_tor_plan(nodes_per_tor=4, tors=2, rails=2):
    """Each ToR serves every rail of its pod (``rails: [1, 2]``): several groups on one switch."""
    model = cluster(nodes_per_tor, tors, rails)
    model["tors"] = [{"name": "pod%d" % p, "rails": list(range(1, rails + 1)), "port_template": "swp{rail}s{node}",
                      "nodes": "%d-%d" % (p * nodes_per_tor + 1, (p + 1) * nodes_per_tor)} for p in range(tors)]
    nodes = dict(("gpu%03d" % i, {"node_id": i, "rail_interfaces": ["eth%d" % r for r in range(rails)]})
                 for i in range(1, nodes_per_tor * tors + 1))
    return rail_plan(model, nodes)


def test_a_tor_serving_several_rails_runs_one_incast_per_step_its_rails_taking_turns():
    plan = shared_tor_plan()
    assert [(g["tor"], g["rail"]) for g in s.groups(plan)] == [("pod0", 1), ("pod0", 2), ("pod1", 1), ("pod1", 2)]
    steps, per_class = s.step_count(plan, [3])
    assert (steps, per_class) == (8, 8)  # 4 rounds of rail 1, then 4 of rail 2
    seen = collections.Counter()
    for number in range(1, steps + 1):
        step = s.step_assignments(plan, sorted(plan["nodes"]), number, [3])
        tors = [i["tor"] for i in step["incasts"]]
        assert sorted(tors) == ["pod0", "pod1"], number  # every ToR at once, one incast each
        for item in step["incasts"]:
            assert item["rail"] == (1 if number <= 4 else 2) and item["round"] == (number - 1) % 4 + 1
            seen[(item["tor"], item["rail"], item["receiver"])] += 1
    # every node still receives once on every rail
    assert len(seen) == 2 * 2 * 4 and set(seen.values()) == {1}


def test_the_control_one_rail_per_tor_keeps_every_tor_at_once():
    plan = plan_of()
    assert s.step_count(plan, [3]) == (4, 4)
    step = s.step_assignments(plan, sorted(plan["nodes"]), 1, [3])
    assert [(i["tor"], i["rail"], i["round"]) for i in step["incasts"]] == [
        ("pod0-rail1", 1, 1), ("pod0-rail2", 2, 1), ("pod1-rail1", 1, 1), ("pod1-rail2", 2, 1)]


def test_projected_rounds_of_tors_serving_several_rails_agree_with_a_plan():
    assert s.projected_rounds(64, 32, rails_per_tor=8, seconds=10) == {
        "rounds_per_class": 256, "steps": 256, "incasts": 256 * 64, "senders_per_incast": 16,
        "flows": 256 * 64 * 16, "load_seconds": 2560}
    plan = shared_tor_plan(nodes_per_tor=5, tors=3, rails=2)
    projected = s.projected_rounds(3, 5, max_senders=2, rails_per_tor=2)
    assert s.step_count(plan, [3])[0] == projected["steps"] == 10
    incasts = [s.step_assignments(plan, sorted(plan["nodes"]), n, [3], max_senders=2)["incasts"]
               for n in range(1, projected["steps"] + 1)]
    assert sum(len(i) for i in incasts) == projected["incasts"]
    assert sum(len(x["senders"]) for i in incasts for x in i) == projected["flows"]
