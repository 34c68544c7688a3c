# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The column-at-a-time writers of the node table (``report_escape.md_column``, ``csv_columns``) give exactly what the
cell-by-cell ones give (``md_cells``, ``csv_text``), whatever the cells hold: their fast path is only a shortcut, and
every cell it cannot vouch for goes the old way. Judged against the old functions on drawn columns (an alphabet of
the characters each rule turns on), on the cases that sit on each rule's edge, and on the plan's own tables."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ainet.fabric.plugins.module_utils.common import report_escape
from ansible_collections.ainet.fabric.plugins.module_utils.plan import plan_report
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan

# What the plain-cell and CSV rules turn on: letters (w, W: "www."), digits, the plain punctuation, a dot, the
# formula starts, a quote, separators, blanks and line breaks.
ALPHABET = "aw0W9/,.-=+@\t\r\n \"|_:\x0b\u2028"
CELL = st.one_of(st.none(), st.integers(min_value=-3, max_value=300), st.text(ALPHABET, max_size=6),
                 st.sampled_from(["gpu01", "10.0.0.2/27", "www.x", "a.b.c", "a..b", "a.", ".a", "-1", "swp1",
                                  "ens6f0np0", "", "w.x", "xw.y"]))


@settings(max_examples=400, deadline=None)
@given(st.lists(CELL, max_size=8))
def test_md_column_is_md_cells(values):
    assert report_escape.md_column(values, "-") == report_escape.md_cells(values, "-")


@settings(max_examples=400, deadline=None)
@given(st.integers(min_value=0, max_value=5).flatmap(
    lambda rows: st.lists(st.lists(CELL, min_size=rows, max_size=rows), min_size=2, max_size=4)))
def test_csv_columns_is_csv_text(columns):
    header = tuple("c%d" % i for i in range(len(columns)))
    assert report_escape.csv_columns(header, columns) == report_escape.csv_text(header, zip(*columns))


@pytest.mark.parametrize("values", [
    ["gpu01", "gpu02"], ["a.b", "www.x"], ["a.b", "w.x"], ["a.b", "a."], ["a", ""], ["", "a"], [""], [],
    ["a", "a\nb"], ["a\n", "b"], ["a", "-b"], ["a", ".b"], ["a..b"], ["a|b"], [1, None, "x"],
])
def test_md_column_on_each_rules_edge(values):
    assert report_escape.md_column(values, "-") == report_escape.md_cells(values, "-")


@pytest.mark.parametrize("columns", [
    [["a", "b"], ["c", "d"]], [["a", "=b"], ["c", "d"]], [["a", "b"], ["c", "-1"]], [["a", "b"], [1, -1]],
    [["a,b", "c"], ["d", "e"]], [["a", "b\nc"], ["d", "e"]], [["a", 'b"'], ["d", "e"]], [["a", "b\r"], ["d", "e"]],
    [["\tx", "b"], ["d", "e"]], [["a", "b"], ["d"]], [[], []], [["a", None], [None, 2]], [["a\u2028b"], ["c"]],
])
def test_csv_columns_on_each_rules_edge(columns):
    header = ("h1", "h2")
    rows = list(zip(*columns)) if len({len(c) for c in columns}) == 1 else None
    if rows is None:
        return  # columns of different lengths: csv_columns goes the row way, as zip does
    assert report_escape.csv_columns(header, columns) == report_escape.csv_text(header, rows)


def test_a_formula_in_the_header_is_prefixed_as_csv_text_does():
    assert report_escape.csv_columns(("=h", "b"), [["x"], ["y"]]) == report_escape.csv_text(("=h", "b"), [("x", "y")]) \
        == "'=h,b\nx,y\n"


def test_the_plan_tables_are_those_of_the_cell_by_cell_writers():
    """rails.csv and the node table of rails.md of a two-fabric plan (IPv4 and IPv6, pod ranges, a ToR per rail) as
    the row-by-row code wrote them: csv_text of the rows, md_cells of each row."""
    cluster = {"name": "cols", "fabrics": {
        "compute": {"rails": 2, "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24,
                                               "node_prefix": 27}},
        "storage": {"rails": 1, "addressing": {"mode": "shared", "supernet": "fd00:70::/48", "rail_prefix": 64}}}}
    plan = rail_plan(cluster, {"gpu%02d" % n: {"node_id": n, "rail_interfaces": {
        "compute": ["ens6f0np0", "ens6f1np1"], "storage": ["ens8f0np0"]}} for n in (1, 2, 5)})
    rows = [[host, node_id] + [plan_report._cell(entry.get(c)) for c in plan_report.COLUMNS[2:]]
            for host, node_id, entry in plan_report._rows(plan)]
    assert len(rows) == 9
    assert plan_report.to_csv(plan) == report_escape.csv_text(plan_report.COLUMNS, rows)
    table = ["| " + " | ".join(report_escape.md_cells(row, "-")) + " |" for row in rows]
    markdown = plan_report.to_markdown(plan)
    assert markdown.endswith("\n".join(table) + "\n")
