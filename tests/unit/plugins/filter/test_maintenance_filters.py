# -*- coding: utf-8 -*-
"""The maintenance filters (plugins/filter/maintenance.py) as the role calls them: the windows from the hosts'
steps and Slurm records (parsed from the Slurm layouts of data/slurm), the next phase with the parsed mark, the
refusal line, and a bad input refused with one line (AnsibleFilterError), never a traceback."""

from __future__ import annotations

import os

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ainet.fabric.plugins.filter.maintenance import (
    maintenance_checks, maintenance_next, maintenance_refusal, maintenance_windows)
from ansible_collections.ainet.fabric.plugins.module_utils.maintenance.slurm import parse_show_node

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "module_utils", "data", "slurm", "show-node-o-22.05.txt")


def plan(hosts, per_tor=2):
    return {"nodes": dict((h, {"node_id": i, "rails": [{"rail": 1, "tor": "t%d" % ((i - 1) // per_tor)}]})
                          for i, h in enumerate(hosts, 1))}


def records():
    with open(DATA) as handle:
        return parse_show_node(handle.read())


def test_windows_from_slurm_records():
    nodes = records()
    hosts = ["gpu01", "gpu02", "gpu05", "gpu06"]  # busy, idle, our window left, an admin's drain
    entries = dict((h, {"steps": ["reboot"], "record": nodes[h]}) for h in hosts)
    out = maintenance_windows(entries, plan(hosts, per_tor=4), 2, 2)
    assert out["skipped"] == {"gpu06": out["hosts"]["gpu06"]["detail"]} and "bad DIMM B2" in out["skipped"]["gpu06"]
    # gpu06 counts: one place left; our window first, then the idle node, then the busy one
    assert out["batches"] == [["gpu05"], ["gpu02"], ["gpu01"]] and out["blocked"] == {}
    assert out["hosts"]["gpu05"]["action"] == "step" and out["hosts"]["gpu01"]["action"] == "drain"


def test_windows_without_a_scheduler_and_without_steps():
    out = maintenance_windows({"a": {"steps": [], "record": None}, "b": {"steps": ["command"], "record": None}},
                              plan(["a", "b"]), 1, 1)
    assert out["batches"] == [["b"]] and out["hosts"]["a"]["action"] == "none"


def test_next_carries_the_parsed_mark():
    nodes = records()
    out = maintenance_next(nodes["gpu07"], ["reboot"], "9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d")
    assert out["action"] == "rebooted" and out["mark"]["tries"] == 1
    assert maintenance_next(None, [])["action"] == "none"


def test_refusal_and_checks():
    assert "maintenance_backend: slurm" in maintenance_refusal(["slurmd"], "", False, "gpu01")
    assert maintenance_refusal([], "none", True, "gpu01") == ""
    assert maintenance_checks(["command"], command={"rc": 0}) == []


@pytest.mark.parametrize("call,match", [
    (lambda: maintenance_windows({"a": {"steps": ["shutdown"]}}, plan(["a"])), "maintenance_steps \\(a\\): 'shutdown'"),
    (lambda: maintenance_windows({"a": {"steps": ["reboot"]}}, plan(["a"]), 0), "maintenance_max_nodes: 0"),
    (lambda: maintenance_windows(["a"], plan(["a"])), "must map hosts"),
    (lambda: maintenance_refusal([], "lsf", False, "a"), "maintenance_backend: 'lsf'"),
])
def test_bad_input_is_one_line(call, match):
    with pytest.raises(AnsibleFilterError, match=match):
        call()


# ---- review 41 D1: nodes of the node group outside the play count against the limits ---------------------------

def test_a_drained_node_outside_the_play_counts_against_its_group():
    nodes = records()
    entries = {"gpu02": {"steps": ["reboot"], "record": nodes["gpu02"]}}  # idle, in the play
    out = maintenance_windows(entries, plan(["gpu02", "gpu06"]), 2, 1, others={"gpu06": nodes["gpu06"]})  # drained
    assert out["batches"] == [] and "maintenance_max_per_group is 1" in out["blocked"]["gpu02"]
    control = maintenance_windows(entries, plan(["gpu02", "gpu06"]), 2, 1, others={"gpu06": nodes["gpu02"]})
    assert control["batches"] == [["gpu02"]]


def test_a_node_outside_the_play_that_was_not_read_is_refused_not_counted_free():
    entries = {"gpu02": {"steps": ["reboot"], "record": records()["gpu02"]}}
    with pytest.raises(AnsibleFilterError, match="gpu06 \\(outside this play\\) was not read"):
        maintenance_windows(entries, plan(["gpu02", "gpu06"]), 2, 1, others={"gpu06": None})


# ---- review 41 D2: a window another live run holds -------------------------------------------------------------

def test_a_window_another_live_run_holds_is_skipped_and_counts():
    held = {"out": True, "idle": True, "reason": "ainet.fabric: reboot drain run=awx-1", "mark_age": 10}
    out = maintenance_windows({"a": {"steps": ["reboot"], "record": held}}, plan(["a"]), 1, 1, run="awx-2",
                              stale_after=3600)
    assert out["hosts"]["a"]["action"] == "skip" and "run=awx-1" in out["skipped"]["a"] and out["batches"] == []
    mine = maintenance_windows({"a": {"steps": ["reboot"], "record": held}}, plan(["a"]), 1, 1, run="awx-1",
                               stale_after=3600)
    assert mine["batches"] == [["a"]]  # control: our own run goes on


def test_the_warning_names_the_daemon_the_opt_out_ignores():
    from ansible_collections.ainet.fabric.plugins.filter.maintenance import maintenance_warning
    assert maintenance_warning(["slurmd"], "none", True, "gpu01").startswith("gpu01: slurmd runs here")
    assert maintenance_warning([], "none", True, "gpu01") == ""  # control: nothing runs there
