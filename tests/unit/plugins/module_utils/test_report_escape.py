# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every report, rendered with hostile names and device strings, judged by its grammar's real reader.

Each case renders a report twice: the control with a plain placeholder (``zqx``) in every name of one kind, and the
same input with the placeholder replaced by a hostile value. The real reader of the grammar (report_judges:
markdown-it-py, html.parser, Mermaid itself, the csv module) must see the same structure in both (no row, cell,
line, link, markup, element, attribute or diagram statement more or less) and show the hostile value as text where
the control shows the placeholder. Names reach the renderers directly (the model check bypassed); device strings
arrive through the LLDP parser (an lldpd JSON output) and the tools' messages. The judges' own controls show that
each would see the injection that an unescaped value makes.

The threat model this file proves part of: docs/security.md (output grammars: Markdown, Mermaid, HTML, CSV).
"""

from __future__ import annotations

import copy
import json
import os

import pytest

from report_judges import (  # noqa: E402 (pytest puts this directory on sys.path)
    CASES, FORMULA_STARTS, HOSTILE, PH, assert_html_shows, assert_markdown_shows, csv_rows, hostile, markdown_tables,
    markdown_view, mermaid_judge, mermaid_labels, mermaid_shape, shown,
)
from test_load_report import run  # noqa: E402

from ansible_collections.ainet.fabric.plugins.module_utils.cabling.cabling_check import (
    check_cabling, findings_markdown, status_markdown,
)
from ansible_collections.ainet.fabric.plugins.module_utils.cabling.lldp_parse import parse_lldpcli_json
from ansible_collections.ainet.fabric.plugins.module_utils.common import report_escape
from ansible_collections.ainet.fabric.plugins.module_utils.plan.plan_report import render
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.qos import lossless_report
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_report import load_report
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_diff import diff_text


# --- the judges see what an unescaped value does (their controls) ----------------------------------------------

def test_the_markdown_judge_sees_a_forged_row_a_link_and_html():
    control = "| a | b |\n|---|---|\n| x | y |\n"
    assert markdown_tables(control) == [[["a", "b"], ["x", "y"]]]
    forged = "| a | b |\n|---|---|\n| x\n| forged | row | y |\n"
    assert markdown_tables(forged) != markdown_tables(control)
    for raw in ("[x](https://evil.example/)", "<script>x</script>", "http://evil.example", "`x`", "*x*"):
        view = markdown_view("| a | b |\n|---|---|\n| %s | y |\n" % raw)
        assert [v[:3] for v in view] != [v[:3] for v in markdown_view(control)], raw
        view = markdown_view("| a | b |\n|---|---|\n| %s | y |\n" % report_escape.md_text(raw))
        assert [v[:3] for v in view] == [v[:3] for v in markdown_view(control)], raw


JUDGE_CONTROL = 'flowchart LR\n  node1("a")\n  node1 -- "l" --- tor1\n'
JUDGE_FORGED = [JUDGE_CONTROL + '  click node1 href "javascript:alert(1)"\n', "%%{init: {'theme':'dark'}}%%\n" + JUDGE_CONTROL,
                JUDGE_CONTROL + "  style node1 fill:#f00\n", JUDGE_CONTROL.replace('"a"', '"a"]\n  x["b"')]


def _marks(value):
    """A cabling finding's mark on one link of :data:`PLAN` (the saved check's text)."""
    return {("%sgpu2" % value, "default", 1): "cable wrong port %s" % value}


def _punctuation_plan():
    return rail_plan({"name": "d", "rails": 1, "addressing": {"mode": "shared", "supernet": "172.17.0.0/16",
                                                              "rail_prefix": 24}},
                     {"gpu-1": {"node_id": 1}, "gpu_1": {"node_id": 2}})


@pytest.fixture(scope="module", name="mermaid")
def fixture_mermaid():
    """Every diagram of this module judged by Mermaid in one run of node: ``{group: [result, ...]}``."""
    groups = {"judge": [JUDGE_CONTROL] + JUDGE_FORGED,
              "plan": [render(PLAN, "mermaid", 64, _marks(PH))] + [
                  render(hostile(PLAN, HOSTILE[c]), "mermaid", 64, _marks(HOSTILE[c])) for c in CASES],
              "punctuation": [render(_punctuation_plan(), "mermaid")]}
    judged = iter(mermaid_judge([text for texts in groups.values() for text in texts]))
    return {name: [next(judged) for _text in texts] for name, texts in groups.items()}


def test_the_mermaid_judge_sees_a_click_a_directive_and_a_style(mermaid):
    base = mermaid_shape(mermaid["judge"][0])
    assert base["config"] == {} and len(base["vertices"]) == 2 and len(base["edges"]) == 1
    for text, judged in zip(JUDGE_FORGED, mermaid["judge"][1:]):
        assert "error" in judged or mermaid_shape(judged) != base, text


def test_the_html_judge_sees_an_element_and_an_attribute():
    from report_judges import html_events  # pylint: disable=import-outside-toplevel
    control = "<p>zqx</p><td title=\"zqx\">x</td>"
    assert_html_shows(control.replace(PH, "&lt;b&gt;"), control, "<b>", PH)
    with pytest.raises(AssertionError):
        assert_html_shows(control.replace(PH, "<b>x</b>"), control, "<b>x</b>", PH)
    with pytest.raises(AssertionError):
        assert_html_shows(control.replace(PH, '" onclick="x'), control, '" onclick="x', PH)
    assert [e[1] for e in html_events(control)] == ["p", "", "p", "td", "", "td"]


# --- the escaping functions alone ------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES)
def test_md_text_shows_the_value_in_a_cell_a_heading_and_a_list_item(case):
    value = HOSTILE[case]
    for template in ("| h | i |\n|---|---|\n| %s | y |\n", "# Title %s\n", "- %s\n", "%s\n", "- a %s b\n"):
        assert_markdown_shows(template % report_escape.md_text(value), template % PH, value, PH)


@pytest.mark.parametrize("case", CASES)
def test_md_code_shows_the_value_as_code_in_a_cell(case):
    value = HOSTILE[case]
    template = "| h | i |\n|---|---|\n| %s | y |\n"
    assert_markdown_shows(template % report_escape.md_code(value), template % report_escape.md_code(PH), value, PH)
    view = markdown_view(template % report_escape.md_code(value))
    assert ("inline", "", ("code_inline",)) in [v[:3] for v in view], view


def test_md_text_leaves_plain_names_as_they_are():
    for name in ("gpu-001", "ens6f0np0", "172.17.0.2/24", "Ethernet8", "roce_dscp_lossy", "10.0", "swp1s0", "-"):
        assert report_escape.md_text(name) in (name, "\\-")
    assert report_escape.md_text(None) == "" and report_escape.md_code("") == ""


def test_csv_cell_rule_and_control():
    assert report_escape.csv_cell("=1+2") == "'=1+2" and report_escape.csv_cell("@SUM(A1)") == "'@SUM(A1)"
    assert report_escape.csv_cell("+1") == "'+1" and report_escape.csv_cell("-1") == "'-1"
    assert report_escape.csv_cell("\tx") == "'\tx" and report_escape.csv_cell("\rx") == "'\rx"
    assert report_escape.csv_cell("gpu-001") == "gpu-001" and report_escape.csv_cell(-1) == "-1"
    assert report_escape.csv_cell(None) == "" and report_escape.csv_cell(3) == "3"


def test_mermaid_id_is_never_a_name():
    assert report_escape.mermaid_id("node", 3) == "node3"
    for bad in (("node", "gpu1"), ("node", True), ("end\n", 1), ("", 1), ("1x", 1)):
        with pytest.raises(ValueError):
            report_escape.mermaid_id(*bad)


# --- the plan's reports: rails.md, topology.mmd, rails.csv ----------------------------------------------------

def _plan():
    """Three nodes, two rails: every host, ToR and the cluster named with the placeholder."""
    return rail_plan({"name": PH, "rails": 2, "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16",
                                                             "rail_prefix": 24, "node_prefix": 27}},
                     {"%sgpu%d" % (PH, i): {"node_id": i, "rail_interfaces": ["ens6f0np0", "ens6f1np1"]}
                      for i in (1, 2, 3)})


PLAN = _plan()


def test_the_control_plan_names_everything_with_the_placeholder():
    assert PLAN["summary"]["cluster"] == PH and all(h.startswith(PH) for h in PLAN["nodes"])
    assert all(t.startswith(PH) for t in PLAN["tors"])


@pytest.mark.parametrize("case", CASES)
def test_rails_md_shows_hostile_names_as_text(case):
    value = HOSTILE[case]
    control = render(PLAN, "markdown")
    text = render(hostile(PLAN, value), "markdown")
    assert_markdown_shows(text, control, value, PH)
    tables = markdown_tables(text)
    assert [len(t) for t in tables] == [2, 3, 7] and {len(row) for row in tables[2]} == {14}


@pytest.mark.parametrize("case", CASES)
def test_rails_csv_rows_and_formula_rule(case):
    value = HOSTILE[case]
    control = csv_rows(render(PLAN, "csv"))
    rows = csv_rows(render(hostile(PLAN, value), "csv"))
    assert len(rows) == len(control) == 7 and {len(r) for r in rows} == {14}
    for row, want in zip(rows, control):
        for cell, expected in zip(row, want):
            expected = expected.replace(PH, value)
            assert cell == ("'" + expected if expected.startswith(FORMULA_STARTS) else expected)
            assert not cell.startswith(FORMULA_STARTS), cell


def test_mermaid_hostile_names_add_no_statement(mermaid):
    judged = mermaid["plan"]
    want = mermaid_shape(judged[0])
    assert want["config"] == {} and len(want["vertices"]) == 5 and len(want["edges"]) == 6
    assert all(v[2] is None and not v[4] and not v[5] for v in want["vertices"])  # no link, callback, style
    want_vertices, want_edges = mermaid_labels(judged[0])
    for case, diagram in zip(CASES, judged[1:]):
        value = HOSTILE[case]
        assert mermaid_shape(diagram) == want, case
        vertices, edges = mermaid_labels(diagram)
        assert vertices == {k: shown(v.replace(PH, value)) for k, v in want_vertices.items()}, case
        assert edges == {k: [shown(x.replace(PH, value)) for x in v] for k, v in want_edges.items()}, case


def test_mermaid_ids_do_not_merge_hosts_whose_names_differ_only_in_punctuation(mermaid):
    diagram = mermaid["punctuation"][0]
    labels, _edges = mermaid_labels(diagram)
    assert sorted(labels.values()) == ["d-rail1-tor default rail 1", "gpu-1 node 1", "gpu_1 node 2"]


# --- the cabling check: LLDP neighbours' names (device strings) ----------------------------------------------

LLDP = os.path.join(os.path.dirname(__file__), "data", "lldp", "lldpcli-json-one-neighbour-lldpd369.json")


def _lldp(system_name, port_id):
    """The recorded lldpd 1.0.x output (one neighbour on ens1) announcing ``system_name`` and ``port_id``, as
    lldpd's JSON writer would carry them."""
    with open(LLDP) as handle:
        data = json.load(handle)
    iface = data["lldp"]["interface"].pop("ens1")
    iface["chassis"] = {system_name: iface["chassis"]["my-pc"]}
    iface["port"]["id"] = {"type": "ifname", "value": port_id}
    data["lldp"]["interface"]["gpu-ens1"] = iface
    return json.dumps(data)


def _cabling(value):
    plan = rail_plan({"name": "c", "rails": 2, "addressing": {"mode": "shared", "supernet": "172.17.0.0/16",
                                                              "rail_prefix": 24}},
                     {"gpu1": {"node_id": 1, "rail_interfaces": ["gpu-ens1", "gpu-ens2"]}})
    plan = copy.deepcopy(plan)
    plan["nodes"]["gpu1"]["rails"][0]["tor_port"] = "swp1"
    plan["nodes"]["gpu1"]["rails"][1]["tor_port"] = None
    wrong = parse_lldpcli_json(_lldp("%s-leaf" % value, "%sswp9" % value))
    unverified = parse_lldpcli_json(_lldp("c-rail2-tor.%s" % value, "%s swp2" % value))
    for entry in unverified:
        entry["interface"] = "gpu-ens2"
    return check_cabling(plan, {"gpu1": wrong + unverified})


def test_the_cabling_control_has_a_finding_and_an_unverified_port():
    result = _cabling(PH)
    assert [f["kind"] for f in result["findings"]] == ["wrong_tor"] and result["summary"]["unverified_ports"] == 1
    assert result["findings"][0]["seen"]["tor"] == PH + "-leaf"


@pytest.mark.parametrize("case", CASES)
def test_cabling_findings_show_lldp_strings_as_text(case):
    value = HOSTILE[case]
    result = _cabling(value)
    assert [f["kind"] for f in result["findings"]] == ["wrong_tor"]
    assert_markdown_shows(findings_markdown(result), findings_markdown(_cabling(PH)), value, PH)
    # rails.md's cabling section (the saved check)
    assert_markdown_shows(status_markdown(result), status_markdown(_cabling(PH)), value, PH)


# --- the lossless agreement report (Markdown and HTML) -------------------------------------------------------

def _links():
    message = "DSCP 26 is lossless on %s but lossy on the switch" % PH
    return [
        {"fabric": "compute", "rail": 1, "host": PH + "gpu1", "host_port": "ens1", "tor": PH + "tor",
         "switch_port": PH + "swp1", "status": "agree", "error": None, "disagreements": [],
         "advice": [{"topic": PH + "_dscps", "message": "advice " + PH}]},
        {"fabric": "compute", "rail": 1, "host": PH + "gpu2", "host_port": "ens1", "tor": PH + "tor",
         "switch_port": PH + "swp2", "status": "disagree", "error": None,
         "disagreements": [{"code": PH + "_code", "host": 3, "switch": "TC1", "message": message}],
         "unchecked": [{"topic": "pfc_watchdog", "reason": "not read from " + PH}]},
        {"fabric": "compute", "rail": 1, "host": PH + "gpu3", "host_port": "ens1", "tor": PH + "tor",
         "switch_port": PH + "swp3", "status": "error", "error": "no config from " + PH, "disagreements": []},
    ]


META = {"cluster": PH, "generated": "2026-11-28", "profile": "compute: " + PH, "sources": {"hosts": 3},
        "problems": {PH + "tor": ["the switch says " + PH]}}


@pytest.mark.parametrize("case", CASES)
def test_lossless_report_markdown_and_html(case):
    value = HOSTILE[case]
    links, meta = hostile(_links(), value), hostile(META, value)
    assert_markdown_shows(lossless_report.render_markdown(links, meta),
                          lossless_report.render_markdown(_links(), META), value, PH)
    assert_html_shows(lossless_report.render_html(links, meta), lossless_report.render_html(_links(), META), value, PH)


# --- the load test's report (Markdown and HTML) --------------------------------------------------------------

def _runs():
    runs = [run(PH + "tor", PH + "swp1", PH + "gpu1", "dropped"),
            run(PH + "tor", PH + "swp2", PH + "gpu2", "lossless_under_load"),
            run(PH + "tor", PH + "swp3", PH + "gpu3", skipped="the agreement check of %s disagrees" % PH)]
    for item in runs:
        item["host_nic"] = PH + "nic"
        item["senders"] = [PH + "gpu8", PH + "gpu9"]
    return runs


@pytest.mark.parametrize("case", CASES)
def test_load_report_markdown_and_html(case):
    value = HOSTILE[case]
    control = load_report(_runs(), cluster=PH, generated="2026-11-28")
    got = load_report(hostile(_runs(), value), cluster=value, generated="2026-11-28")
    assert_markdown_shows(got["markdown"], control["markdown"], value, PH)
    assert_html_shows(got["html"], control["html"], value, PH)


# --- plain text: the ToR diff ---------------------------------------------------

@pytest.mark.parametrize("case", CASES)
def test_tor_diff_is_one_line_per_difference(case):
    value = HOSTILE[case]
    items = [{"path": ["PORT", "Ethernet0", "mtu"], "before": "9100" + value, "after": "9216"},
             {"path": ["PORT", "Ethernet4", "description" + value], "before": None, "after": value}]
    text = diff_text(items)
    assert text.count("\n") == 2 and text.endswith("\n")
    lines = text.splitlines()
    assert len(lines) == 2 and lines[0].startswith("~ PORT Ethernet0 mtu: 9100") and lines[1].startswith("+ PORT")
    assert lines[0].endswith(" -> 9216") and shown(lines[0]) == shown("~ PORT Ethernet0 mtu: 9100%s -> 9216" % value)
