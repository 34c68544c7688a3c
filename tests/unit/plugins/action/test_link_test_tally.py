# -*- coding: utf-8 -*-
"""The link test keeps one round, not all of them: the plan is computed from the node group by the schedule, each round
and the verdict (never registered: the schedule returns its counts), not by the judge of a round, which reads the
group's host names only; each round's outputs are judged as the round ends (mode=judge) into a tally that holds the failures,
the slow links and the RDMA table per client rail, never the outputs. The verdict from the tally is the verdict from
every round's results at once (the way the role judged before), on a full mesh with a broken link, a narrow path, a
link failing with one peer only and slow RDMA; and the tally does not grow with the rounds where nothing fails."""

from __future__ import annotations

import json
import os
from unittest import mock

from ansible_collections.ainet.fabric.plugins.action import link_test as action
from ansible_collections.ainet.fabric.plugins.module_utils.fleet import link_results as lr
from ansible_collections.ainet.fabric.plugins.module_utils.fleet import pair_schedule as ps
from ansible_collections.ainet.fabric.plugins.plugin_utils import plan_action

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "module_utils", "data", "fleet")
CLUSTER = {"name": "t", "rails": 3, "addressing": {"mode": "exclusive", "supernet": "10.0.0.0/12", "rail_prefix": 16,
                                                   "node_prefix": 27}}
RAILS = ["ens6f0np0", "ens6f1np1", "ens7f0np0"]


def data(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


OK, LOST, NONE = data("ping-jumbo-ok.txt"), data("ping-jumbo-lost-peer-mtu-1500.txt"), data("ping-no-route.txt")
BW = data("ib_write_bw-cx-gbits-cpufreq-D.txt")


def act(args, task_vars):
    task = mock.MagicMock(args=dict(args), async_val=0, check_mode=False, diff=False, action="ainet.fabric.link_test")
    plugin = action.ActionModule(task, mock.MagicMock(), mock.MagicMock(), None, None)
    return plugin.run(task_vars=task_vars)


def inventory(size):
    hosts = ["gpu%02d" % n for n in range(1, size + 1)]
    hostvars = dict((h, {"fabric_node_id": n, "fabric_rail_interfaces": RAILS}) for n, h in enumerate(hosts, 1))
    return hosts, {"groups": {"gpu_nodes": hosts}, "hostvars": hostvars}


def outputs(assignments, number, faults):
    """Each client's kept round, as round.yml's set_fact makes it: the small and the DF ping per rail, ib_write_bw."""
    out = {}
    for host, me in assignments.items():
        if me["role"] != "client":
            continue
        small, jumbo, bw = [], [], []
        for rail in me["rails"]:
            fault = faults(host, me["peer"], rail["rail"])
            small.append(dict(item=rail, rc=1 if fault == "none" else 0, stdout=NONE if fault == "none" else OK))
            jumbo.append(dict(item=rail, rc=0 if fault is None or fault == "slow" else 1,
                              stdout={None: OK, "slow": OK, "narrow": LOST, "none": NONE}[fault]))
            bw.append(dict(item=rail, rc=0, stdout=BW))
        out[host] = {"round": number, "peer": me["peer"], "icmp_small": small, "icmp": jumbo, "rdma_bw": bw}
    return out


def faults(host, peer, rail):
    pair = {host, peer}
    if "gpu03" in pair and rail == 2:
        return "none"  # gpu03's rail-2 port is down: no path to anyone
    if "gpu05" in pair and rail == 1:
        return "narrow"  # gpu05's rail-1 port has a small MTU
    if pair == {"gpu06", "gpu07"} and rail == 3:
        return "none"  # one pair only: suspect, not broken
    return None


def run_job(size, min_gbps=None, fault=faults):
    """The role's calls: schedule once, then per round: round (assignments), the clients' outputs, judge; then the
    verdict. Returns (verdict result, every round's outputs, tally sizes after each round, the schedule)."""
    hosts, task_vars = inventory(size)
    common = {"hosts": hosts, "full_mesh": True, "node_group": "gpu_nodes"}
    schedule = act(dict(common, mode="schedule", cluster=CLUSTER), task_vars)
    assert not schedule.get("failed"), schedule
    task_vars = dict(task_vars, __link_test_schedule=schedule)
    every, sizes = [], []
    for number in range(1, schedule["rounds"] + 1):
        pairs = act(dict(common, mode="round", round=number, cluster=CLUSTER), task_vars)
        kept = outputs(pairs["assignments"], number, fault)
        every.append(kept)
        hostvars = dict((h, dict(v, __link_test_round_out=kept.get(h))) for h, v in task_vars["hostvars"].items())
        with mock.patch.object(plan_action, "rail_plan", side_effect=AssertionError("a judged round planned")):
            judged = act(dict(common, mode="judge", round=number, min_gbps=min_gbps), dict(task_vars, hostvars=hostvars))
        assert not judged.get("failed"), judged
        task_vars = dict(task_vars, __link_test_state=judged)
        sizes.append(len(json.dumps(judged["tally"])))
    final = act(dict(common, mode="verdict", cluster=CLUSTER, min_gbps=min_gbps, fail_on_broken=False), task_vars)
    return final, every, sizes, schedule


def test_the_tally_gives_the_verdict_of_every_result_at_once():
    final, every, _sizes, schedule = run_job(8, min_gbps=99)
    results = [r for kept in every for host, entry in sorted(kept.items()) for r in lr.results_of(host, [entry])]
    hosts, task_vars = inventory(8)
    plan = plan_action.rail_plan(CLUSTER, plan_action.group_nodes(task_vars, "link_test_node_group", "gpu_nodes")[0])
    assert schedule == {"changed": False, "rounds": 7, "hosts": 8, "pairs": 28}  # the counts, not the plan
    reference = ps.verdict(results, plan, min_gbps=99.0)  # the action takes a float
    assert final["verdict"] == reference
    assert [(f["host"], f["rail"]) for f in final["verdict"]["broken"]] == [("gpu03", 2), ("gpu05", 1)]
    assert [(f["host"], f["rail"]) for f in final["verdict"]["suspect"]] == [("gpu06", 3), ("gpu07", 3)]
    # 98.02 Gb/s < 99 with every peer: every measured link is slow, each named once
    assert len(final["verdict"]["slow"]) == 8 * 3 and final["verdict"]["tested"] == len(results) == 7 * 4 * 3 * 2


def test_the_tally_does_not_grow_with_the_rounds_where_nothing_fails():
    _final, _every, sizes, _schedule = run_job(16, fault=lambda *_: None)
    # once every client has been measured on every rail, a round adds its number to the list of rounds judged and a
    # digit to a count now and then, nothing else: the tally is of the size of the fleet, not of the tests (15 rounds
    # x 8 pairs x 3 rails here, where each round's outputs alone are some 30 KB)
    steps = [b - a for a, b in zip(sizes, sizes[1:])]
    assert all(step <= 16 for step in steps[len(steps) // 2:]), sizes
    _final, _every, failing, _schedule = run_job(16)
    assert failing[-1] > failing[0]  # the control: failures are kept (they are the verdict)


def test_the_report_holds_one_rdma_row_per_client_rail_not_per_test():
    final, _every, _sizes, _schedule = run_job(8)
    measured = final["measured"]
    assert sorted(measured) == ["gpu%02d" % n for n in range(2, 9)]  # the clients (gpu01 always serves)
    row = measured["gpu08"]["default"]["1"]["rdma_bw"]
    assert row["peers"] >= 1 and row["min_gbps"] == row["max_gbps"] == 98.02
    text = action.report_markdown("t", final["verdict"], "note", measured)
    assert text.count("| rdma_bw |") == sum(len(r) for f in measured.values() for r in f.values())


def test_the_modes_that_plan_need_the_model_and_the_judge_of_a_round_does_not():
    hosts, task_vars = inventory(4)
    common = {"hosts": hosts, "node_group": "gpu_nodes", "round": 1}
    judged = act(dict(common, mode="judge"), task_vars)  # no cluster: a judged round needs the names only
    assert not judged.get("failed") and judged["tally"]["rounds"] == [1], judged
    for mode in ("schedule", "round", "verdict"):
        refused = act(dict(common, mode=mode), task_vars)
        assert refused["failed"] and refused["msg"].startswith("fabric_cluster: None is not defined. Fix: describe the "
                                                               "cluster in the inventory's group_vars"), refused
        assert not act(dict(common, mode=mode, cluster=CLUSTER, fail_on_broken=False), task_vars).get("failed")
        # the task's own fabric_cluster and play hosts, read from its variables
        read = act({"mode": mode, "round": 1, "node_group": "gpu_nodes", "fail_on_broken": False},
                   dict(task_vars, fabric_cluster=CLUSTER, ansible_play_hosts=hosts[:3]))
        assert not read.get("failed") and read.get("hosts", 3) == 3 and len(read.get("assignments", "ab")) == 2, read
    missing = act(dict(common, mode="judge", node_group="gpu_node"), task_vars)
    assert missing["failed"] and missing["msg"].startswith("link_test_node_group: 'gpu_node' is not an inventory group")
    beyond = act(dict(common, mode="judge", round=4), task_vars)  # 4 nodes: 3 rounds by default
    assert beyond["failed"] and beyond["msg"].startswith("link_test: round=4 is not a round of this schedule (1 to 3")


def schedule_with(checked, hosts=None, **extra):
    """The role's schedule (node_group, the model from the task's variables) after the rail_plan role's check of the
    play's hosts registered ``checked`` (None: no check); with the planning counted, the plan's own function run."""
    names, task_vars = inventory(6)
    task_vars = dict(task_vars, fabric_cluster=CLUSTER, ansible_play_hosts=names if hosts is None else hosts)
    if checked is not None:
        task_vars[action.CHECK_RESULT] = checked
    with mock.patch.object(plan_action.PlanAction, "plan", autospec=True, side_effect=plan_action.PlanAction.plan) as plan:
        result = act(dict(dict(mode="schedule", node_group="gpu_nodes"), **extra), task_vars)
    return result, plan.call_count


def test_the_schedule_counts_the_hosts_the_job_s_check_planned_without_planning_them_again():
    """links.yml's first task (roles/rail_plan/tasks/check.yml) planned the group and checked the play's hosts against
    the published plan: the schedule counts the same hosts from the group's names, the same counts as planning."""
    names = ["gpu%02d" % n for n in range(1, 7)]
    control, planned = schedule_with(None)
    assert planned == 1 and (control["rounds"], control["hosts"], control["pairs"]) == (3, 6, 9), control
    result, planned = schedule_with({"changed": False, "checked": names, "msg": "6 host(s) agree"})
    assert planned == 0 and result == control
    # under a limit: the play's hosts, all of them checked
    limited, planned = schedule_with({"checked": names[:4]}, hosts=names[:4])
    assert planned == 0 and (limited["hosts"], limited["pairs"]) == (4, 6), limited


def test_the_schedule_plans_where_the_check_did_not_plan_every_host_it_counts():
    names = ["gpu%02d" % n for n in range(1, 7)]
    for checked in ({"checked": names[:5]},  # a host of the play the check did not plan (another group, a limit)
                    {"checked": names, "failed": True, "msg": "refused"},  # a failed check (rescued, ignored)
                    {"msg": "no hosts checked"}, "not a result"):
        result, planned = schedule_with(checked)
        assert planned == 1 and result["hosts"] == 6, (checked, result)
    # the model or the nodes given to the task: planned from them, whatever was checked
    _result, planned = schedule_with({"checked": names}, cluster=CLUSTER)
    assert planned == 1
    # bad input the check did not vouch for still stops the schedule, in one line
    names_, task_vars = inventory(6)
    task_vars = dict(task_vars, fabric_cluster=dict(CLUSTER, mtuu=1), ansible_play_hosts=names_,
                     **{action.CHECK_RESULT: {"checked": names_[:5]}})
    refused = act(dict(mode="schedule", node_group="gpu_nodes"), task_vars)
    assert refused["failed"] and refused["msg"].startswith("fabric_cluster.mtuu: 1 is not a known key. Fix: "), refused
