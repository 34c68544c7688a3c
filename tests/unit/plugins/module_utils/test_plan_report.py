# -*- coding: utf-8 -*-
from __future__ import annotations

import csv
import io
import json

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.plan.plan_report import render, summary_line
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan

CLUSTER = {
    "name": "r",
    "rails": 2,
    "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27},
}
PLAN = rail_plan(CLUSTER, {"b": {"node_id": 2, "rail_interfaces": ["e0", "e1"]}, "a": 1})


def test_csv_rows_ordered_by_node_then_rail():
    rows = list(csv.DictReader(io.StringIO(render(PLAN, "csv"))))
    assert [(r["host"], r["rail"]) for r in rows] == [("a", "1"), ("a", "2"), ("b", "1"), ("b", "2")]
    assert rows[2]["interface"] == "e0"
    assert rows[2]["address"] == "172.17.0.34/27"
    assert rows[0]["interface"] == ""


def test_markdown_table():
    text = render(PLAN, "markdown")
    assert text.startswith("# Rail plan: r\n")
    assert "| b | 2 | default | 1 | e0 | 172.17.0.34/27 | 172.17.0.32/27 | 172.17.0.33 |" in text
    assert "| default | exclusive | ipv4 | 172.17.0.0/16 | 2 | 9000 | 8 |" in text


def test_mermaid_summarises_large_plans():
    text = render(PLAN, "mermaid", max_nodes=1)
    assert text.startswith("flowchart LR\n")
    assert 'node1 -- "default r1 172.17.0.2/27" --- tor1' in text
    assert "1 more nodes" in text


def test_json_view_is_the_plan_and_does_not_depend_on_key_order():
    text = render(PLAN, "json")
    assert json.loads(text) == PLAN and text.endswith("}\n")
    shuffled = dict(reversed(list(PLAN.items())))
    assert list(shuffled) != list(PLAN) and render(shuffled, "json") == text


def test_json_view_has_one_line_per_node():
    text = render(PLAN, "json")
    for host, node in PLAN["nodes"].items():
        lines = [line for line in text.splitlines() if line.startswith('    "%s": ' % host)]
        assert len(lines) == 1 and json.loads(lines[0].split(": ", 1)[1].rstrip(",")) == node


def test_bad_format():
    with pytest.raises(FabricModelError, match="format: 'pdf' is not a report format"):
        render(PLAN, "pdf")
    with pytest.raises(FabricModelError, match="not a rail plan"):
        render({}, "csv")


def test_summary_line_of_the_plan_job_and_of_a_check():
    """The one line the rail_plan role prints: the plan's counts, then where the files went and what the lock changes
    (the plan job), or how many hosts agree with which published plan (a host job's check)."""
    head = ("r: 2 nodes, 2 rails in fabric(s) default (exclusive, ipv4), 2 ToRs, 4 addresses; node ids may go up to 8 "
            "(addressing capacity)")
    assert summary_line(PLAN["summary"]) == head
    changes = {"added": ["a", "b"], "removed": ["c"], "changed": [], "model": True}
    assert summary_line(PLAN["summary"], "/inv/out", "/inv/rail_plan_lock.yml", changes) == (
        head + " -> /inv/out; lock /inv/rail_plan_lock.yml: 2 added, 1 removed, 0 changed, model changed")
    assert summary_line(PLAN["summary"], None, "rail_plan_lock (artifact)", dict(changes, model=False)) == (
        head + "; lock rail_plan_lock (artifact): 2 added, 1 removed, 0 changed")
    assert summary_line(PLAN["summary"], checked=["a"], lock_source="/inv/rail_plan_lock.yml") == (
        head + "; 1 host(s) agree with the published plan (/inv/rail_plan_lock.yml)")
    assert summary_line(PLAN["summary"], checked=[]) == head + "; 0 host(s) agree with the published plan (none)"
