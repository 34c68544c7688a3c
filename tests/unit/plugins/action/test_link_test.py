# -*- coding: utf-8 -*-
"""The link_test action as the role calls it: mode=schedule gives the round count (never the rounds, nor the plan),
mode=round one round, computed as it starts; a round outside the schedule is refused with a Fix."""

from __future__ import annotations

import json
import os

from ansible_collections.ainet.fabric.tests.unit.plugins.action.task_runner import run_task

CLUSTER = {"name": "t", "rails": 8, "addressing": {"mode": "exclusive", "supernet": "10.0.0.0/12", "rail_prefix": 16,
                                                   "node_prefix": 27}}
RAILS = ["ens%df%dnp%d" % (6 + r // 2, r % 2, r % 2) for r in range(8)]


def args(size, **extra):
    nodes = dict(("gpu%03d" % n, {"node_id": n, "rail_interfaces": RAILS}) for n in range(1, size + 1))
    return dict({"cluster": CLUSTER, "nodes": nodes, "hosts": sorted(nodes)}, **extra)


def test_schedule_gives_the_count_not_the_rounds(capsys):
    result, _sent = run_task(capsys, "link_test", args(70, mode="schedule", full_mesh=True))
    assert not result.get("failed"), result
    assert (result["rounds"], result["hosts"], result["pairs"]) == (69, 70, 69 * 35)
    # the first schedule registered 69 rounds x 70 hosts x 8 rails here (about 6 MB of JSON), the next one the plan
    # (3 MB at 1,024 nodes x 8 rails, which Ansible copied and converted: 13 s at 16,384 nodes); now three numbers
    assert len(json.dumps(result)) < 300 and "plan" not in result, result
    default, _sent = run_task(capsys, "link_test", args(71, mode="schedule"))
    assert (default["rounds"], default["hosts"], default["pairs"]) == (3, 71, 3 * 35)


def test_one_round_at_a_time(capsys):
    result, _sent = run_task(capsys, "link_test", args(4, mode="round", round=3, full_mesh=True))
    assert not result.get("failed"), result
    mine = result["assignments"]
    # round 3 of 4 nodes (the circle's line gpu001 gpu004 gpu002 gpu003): gpu001 serves gpu003, gpu002 serves gpu004
    assert dict((h, (a["peer"], a["role"])) for h, a in mine.items()) == {
        "gpu001": ("gpu003", "server"), "gpu003": ("gpu001", "client"),
        "gpu002": ("gpu004", "server"), "gpu004": ("gpu002", "client")}
    assert (result["round"], result["pairs"]) == (3, 2)
    rail8 = mine["gpu003"]["rails"][7]
    assert (rail8["rail"], rail8["interface"], rail8["port"], rail8["ping_size"]) == (8, "ens9f1np1", 18523, 8972)


def test_a_round_outside_the_schedule_is_refused(capsys):
    last, _sent = run_task(capsys, "link_test", args(5, mode="round", round=3))
    assert not last.get("failed") and len(last["assignments"]) == 4  # control: round 3 of the default 3
    beyond, _sent = run_task(capsys, "link_test", args(5, mode="round", round=4))
    assert beyond["failed"] and beyond["msg"].startswith(
        "link_test: round=4 is not a round of this schedule (1 to 3: 5 nodes, rounds=3). Fix:"), beyond
    full, _sent = run_task(capsys, "link_test", args(5, mode="round", round=5, full_mesh=True))
    assert not full.get("failed") and len(full["assignments"]) == 4  # the full mesh of 5 has 5 rounds
    missing, _sent = run_task(capsys, "link_test", args(5, mode="round"))
    assert missing["failed"] and "round=None" in missing["msg"]


def test_the_link_test_role_hands_ipv6_rail_addresses_to_the_gid_lookup():
    """roles/link_test passes every rail address to rdma_facts (it passed only IPv4 ones: IPv6 rails had no GID
    index, so ib_write_bw was skipped without a word)."""
    import yaml
    from ansible.template import Templar, trust_as_template
    from ansible.parsing.dataloader import DataLoader

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
    with open(os.path.join(root, "roles", "link_test", "tasks", "main.yml")) as handle:
        tasks = yaml.safe_load(handle)
    task = [t for t in tasks if "ainet.fabric.rdma_facts" in t][0]
    rails = [{"interface": "ens1", "ip": "2001:db8:17::2"}, {"interface": "ens2", "ip": "172.17.1.2"}]
    templar = Templar(loader=DataLoader(), variables={"__link_test_rails": rails})
    got = templar.template(trust_as_template(task["ainet.fabric.rdma_facts"]["addresses"]))
    assert got == {"ens1": "2001:db8:17::2", "ens2": "172.17.1.2"}
