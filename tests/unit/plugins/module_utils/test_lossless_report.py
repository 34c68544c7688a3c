# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The agreement report: counts, order, escaping, well-formed tables, nothing external, speed."""

from __future__ import annotations

import random
import re
from html.parser import HTMLParser

from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_report import (
    COLOURS, render_html, render_markdown, summary,
)

LOSSY = {"code": "roce_dscp_lossy_on_switch", "host": 3, "switch": "TC1 (lossy)",
         "message": "DSCP 26 is lossless priority 3 on the host but lands in lossy TC1 on the switch port Ethernet8 "
                    "(PFC there: 3,4)."}
PFC = {"code": "pfc_mismatch", "host": [3], "switch": [3, 4], "message": "PFC is on priorities 3 on the host but 3,4."}
EVIL = "gpu-<script>alert(1)</script>&1"
LINKS = [
    {"fabric": "compute", "rail": 2, "host": "gpu-002", "host_port": "ens2", "tor": "t2", "switch_port": "Ethernet8",
     "status": "disagree", "error": None, "disagreements": [LOSSY, PFC]},
    {"fabric": "compute", "rail": 1, "host": EVIL, "host_port": "ens1|x", "tor": "t1",
     "switch_port": "swp1", "status": "agree", "error": None, "disagreements": []},
    {"fabric": "compute", "rail": 1, "host": "gpu-003", "host_port": "ens1", "tor": "t9", "switch_port": "swp3",
     "status": "error", "error": "no switch config found for t9 <missing> | A&B", "disagreements": []},
    {"fabric": "compute", "rail": 10, "host": "gpu-004", "host_port": "ens10", "tor": "t10", "switch_port": "swp4",
     "status": "disagree", "error": None, "disagreements": [LOSSY]},
    {"fabric": "backend", "rail": 3, "host": "gpu-001", "host_port": "ens3", "tor": "b3", "switch_port": "swp1",
     "status": "agree", "error": None, "disagreements": []},
]
META = {"cluster": "c1 <&>", "generated": "2026-11-22T10:00:00Z", "profile": "compute: nvidia: DSCP 26 -> priority 3",
        "sources": {"hosts": 4, "switches": 2}, "problems": {"t2": ["policy <x> referenced but never defined"]}}
# (fabric, rail, host) in the order the report must show the rows.
ORDER = [("backend", "3", "gpu-001"), ("compute", "1", "gpu-003"), ("compute", "1", EVIL), ("compute", "2", "gpu-002"),
         ("compute", "10", "gpu-004")]


def test_summary_counts_verdicts_and_codes_most_frequent_first():
    assert summary(LINKS) == {"links": 5, "agree": 2, "disagree": 2, "unchecked": 0, "error": 1,
                              "by_code": {"roce_dscp_lossy_on_switch": 2, "pfc_mismatch": 1}}
    assert list(summary(LINKS)["by_code"]) == ["roce_dscp_lossy_on_switch", "pfc_mismatch"]


def test_summary_ties_are_ordered_by_code_and_unknown_status_is_an_error():
    links = [{"status": "disagree", "disagreements": [{"code": c, "message": ""} for c in ("zeta", "alpha", "mid")]},
             {"status": "disagree", "disagreements": [{"code": "mid", "message": ""}]},
             {"status": "weird", "disagreements": []}]
    assert summary(links) == {"links": 3, "agree": 0, "disagree": 2, "unchecked": 0, "error": 1,
                              "by_code": {"mid": 2, "alpha": 1, "zeta": 1}}
    assert summary([]) == {"links": 0, "agree": 0, "disagree": 0, "unchecked": 0, "error": 0, "by_code": {}}


def _cells(line):
    """The cells of a Markdown table line, splitting on unescaped pipes only."""
    assert line.startswith("|") and line.endswith("|"), line
    return re.split(r"(?<!\\)\|", line[1:-1])


def _tables(text):
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return tables


def test_markdown_tables_are_well_formed():
    text = render_markdown(LINKS, META)
    tables = _tables(text)
    assert len(tables) == 2  # disagreements per code, links
    for table in tables:
        widths = {len(_cells(line)) for line in table}
        assert len(widths) == 1, table  # header, separator and every row: the same number of cells
        assert set(table[1]) <= set("|-")  # separator line right below the header
    codes, links = tables
    assert len(codes) == 2 + 2 and len(links) == 2 + len(LINKS)
    assert len(_cells(links[0])) == 9
    assert "| `roce_dscp_lossy_on_switch` | 2 |" in codes and "| `pfc_mismatch` | 1 |" in codes


def test_markdown_rows_are_sorted_and_escaped():
    text = render_markdown(LINKS, META)
    rows = [[c.strip() for c in _cells(line)] for line in _tables(text)[1][2:]]
    assert [tuple(r[:3]) for r in rows] == [(f, r, h.replace("<", "&lt;")) for f, r, h in ORDER]
    assert rows[2][3] == "ens1\\|x"  # the pipe of a value is escaped, not a cell border
    assert "<script>" not in text and "&lt;script>" in text
    assert rows[1][6:8] == ["not checked", "no switch config found for t9 &lt;missing> \\| A&B"]
    assert rows[3][6] == "DISAGREE" and rows[3][7] == (
        "`roce_dscp_lossy_on_switch`: " + LOSSY["message"] + "<br>`pfc_mismatch`: " + PFC["message"])
    assert rows[0][6:] == ["agree", "", ""]
    assert "# Lossless RoCE agreement: c1 &lt;&>" in text and "Generated 2026-11-22T10:00:00Z." in text
    assert "Profiles: compute: nvidia: DSCP 26 -> priority 3." in text and "Read: 4 hosts, 2 switches." in text
    assert "5 links: 2 agree, 2 disagree, 0 not all checked, 1 not checked." in text


VOID = ("meta", "br", "hr", "img", "input", "link")


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.tags, self.texts, self.cells, self.stack = [], [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append(dict(attrs).get("class"))
            self.cells.append([])
        elif tag in ("td", "th"):
            self.cells[-1].append("")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (self.stack, tag)  # every tag closed, properly nested
        self.stack.pop()

    def handle_data(self, data):
        self.texts.append(data)
        if "td" in self.stack or "th" in self.stack:
            self.cells[-1][-1] += data


def _parse(page):
    parser = _Page()
    parser.feed(page)
    parser.close()
    assert parser.stack == []
    return parser


def test_html_has_one_row_per_link_plus_headers_sorted_and_escaped():
    page = render_html(LINKS, META)
    assert page.startswith("<!DOCTYPE html>\n<html lang=\"en\">")
    parsed = _parse(page)
    # the code table: a header and a row per code; the link table: a header and a row per link
    assert page.count("<tr") == len(parsed.rows) == 1 + 2 + 1 + len(LINKS)
    assert [c for c in parsed.rows if c] == ["agree", "error", "agree", "disagree", "disagree"]
    link_rows = [cells for cls, cells in zip(parsed.rows, parsed.cells) if cls]
    assert [tuple(r[:3]) for r in link_rows] == ORDER
    assert link_rows[2][3] == "ens1|x" and link_rows[1][7] == "no switch config found for t9 <missing> | A&B"
    assert all(len(r) == 9 for r in parsed.cells[-len(LINKS) - 1:])
    assert EVIL in "".join(parsed.texts)  # shown as text ...
    assert not any(tag == "script" for tag, _a in parsed.tags)  # ... never as markup
    assert "gpu-&lt;script&gt;alert(1)&lt;/script&gt;&amp;1" in page and "<script" not in page
    assert "<h1>Lossless RoCE agreement: c1 &lt;&amp;&gt;</h1>" in page
    assert "policy &lt;x&gt; referenced but never defined" in page


def test_html_is_self_contained_and_coloured_per_verdict():
    page = render_html(LINKS, META)
    lowered = page.lower()
    for needle in ("http://", "https://", "src=", "href=", "url(", "@import", "<script", "<link", "<img", "//"):
        assert needle not in lowered, needle
    for status, colour in COLOURS.items():
        assert "tr.%s td{background:%s}" % (status, colour) in page
    assert COLOURS == {"agree": "#d1e7dd", "disagree": "#f8d7da", "unchecked": "#cff4fc", "error": "#fff3cd"}


def test_output_is_byte_identical_whatever_the_input_order():
    shuffled = list(LINKS)
    random.Random(7).shuffle(shuffled)
    assert render_markdown(LINKS, META) == render_markdown(shuffled, META) == render_markdown(LINKS[::-1], META)
    assert render_html(LINKS, META) == render_html(shuffled, META) == render_html(LINKS[::-1], META)
    assert render_html(LINKS, META).encode("utf-8") == render_html(LINKS, dict(META)).encode("utf-8")


def test_empty_report_and_sparse_rows():
    assert "0 links: 0 agree, 0 disagree, 0 not all checked, 0 not checked." in render_markdown([], {})
    parsed = _parse(render_html([], None))
    assert len(parsed.rows) == 1  # the link table's header only
    sparse = [{"fabric": "f", "rail": "x", "host": None, "status": "error"}, {"fabric": "f", "rail": 2, "host": "h"}]
    text = render_markdown(sparse, {})
    assert all(len(_cells(line)) == 9 for line in _tables(text)[-1])
    assert len(_parse(render_html(sparse, {})).rows) == 3


def test_unchecked_topics_have_a_column_of_their_own():
    row = dict(LINKS[1], unchecked=[{"topic": "pfc_watchdog", "reason": "the PFC watchdog of <b> was not read"}])
    text = render_markdown([row], META)
    cells = [c.strip() for c in _cells(_tables(text)[-1][2])]
    # a row that says agree but lists an unchecked topic is not shown to agree (issue 40)
    assert cells[6:] == ["not all checked", "", "`pfc_watchdog`: the PFC watchdog of &lt;b> was not read"]
    parsed = _parse(render_html([row], META))
    assert parsed.cells[-1][-1] == "pfc_watchdog: the PFC watchdog of <b> was not read"
    assert '<tr class="unchecked">' in render_html([row], META) and '<tr class="agree">' not in render_html([row], META)
    assert summary([row])["agree"] == 0 and summary([row])["unchecked"] == 1
    assert summary([dict(row, status="unchecked")]) == summary([row])
    assert summary([LINKS[1]])["agree"] == 1  # the control: nothing unchecked


def test_advice_is_shown_in_the_details_and_never_changes_the_verdict():
    # issue 29: a host table wider than the switch's is advice, not a disagreement
    advice = [{"topic": "lossless_dscps", "message": "DSCP 24,25 are lossless on the host | not <b>"}]
    row = dict(LINKS[1], status="agree", disagreements=[], advice=advice)
    text = render_markdown([row], {"cluster": "c1"})
    cells = [c.strip() for c in _cells(_tables(text)[-1][2])]
    assert cells[6] == "agree"
    assert cells[7] == "advice `lossless_dscps`: DSCP 24,25 are lossless on the host \\| not &lt;b>"
    page = render_html([row], {"cluster": "c1"})
    assert 'advice <code>lossless_dscps</code>: DSCP 24,25 are lossless on the host | not &lt;b&gt;' in page
    assert summary([row])["agree"] == 1
