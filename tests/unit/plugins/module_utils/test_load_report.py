# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The load test's report (lossless.md and its HTML matrix) on verdicts judged from the recorded counter pairs."""

from __future__ import annotations

import random
import re
import time
from html.parser import HTMLParser

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos import lossless_report
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_report import (
    COLOURS, REPORT_MD, STATES, load_report, rails_markdown, summary,
)
from test_load_counters import edit, judge, sonic_cell, text  # noqa: E402 (pytest puts this directory on sys.path)

EVIL = "gpu-<script>alert(1)</script>|&x"


def verdicts():
    """One real load_verdict result per verdict, each from the recorded pair with one line changed."""
    lossless = judge()[0]
    dropped = judge(queue_a=sonic_cell(text("sonic-queue-after.txt"), "Ethernet8 UC3", "Drop/pkts", 120))[0]
    storm = judge(nic_a=edit(text("ethtool-cx6dx-after.txt"), "tx_pause_storm_error_events", 1))[0]
    ecn = judge(rdma_a=edit(text("hw_counters-mlx5-after.txt"), "rp_cnp_handled", 40211))[0]
    nic = edit(text("ethtool-cx6dx-after.txt"), "rx_prio3_pause", 18234)
    pfc = sonic_cell(text("sonic-pfc-after.txt").split("\n\n")[0], "Ethernet8", "PFC3", "0") + "\n\n" + \
        sonic_cell(text("sonic-pfc-after.txt").split("\n\n")[1], "Ethernet8", "PFC3", "18,240")
    rdma = edit(text("hw_counters-mlx5-after.txt"), "rp_cnp_handled", 40211)
    inconclusive = judge(nic_a=nic, pfc_a=pfc, rdma_a=rdma)[0]
    lost = judge(rdma_a=edit(text("hw_counters-mlx5-after.txt"), "out_of_sequence", 4))[0]
    out = {"lossless_under_load": lossless, "dropped": dropped, "pause_storm": storm, "ecn_inactive": ecn,
           "inconclusive": inconclusive, "lost": lost}
    assert {k: v["verdict"] for k, v in out.items()} == {k: k for k in out}
    return out


V = verdicts()


def run(tor, port, host, verdict=None, skipped=None, rail=1, fabric="compute", rnd=1, priority=3):
    return {"tor": tor, "rail": rail, "fabric": fabric, "port": port, "host": host, "host_nic": "ens1f0np0",
            "senders": ["gpu-101", "gpu-102"], "round": rnd, "priority": priority, "seconds": 10.0,
            "verdict": V[verdict] if verdict else None, "skipped": skipped}


RUNS = [
    run("t-rail2", "Ethernet8", "gpu-002", "dropped", rail=2),
    run("t-rail2", "Ethernet12", "gpu-003", "pause_storm", rail=2),
    run("t-rail1", "swp10", "gpu-010", "ecn_inactive"),
    run("t-rail1", "swp2", "gpu-002", "lossless_under_load"),
    run("t-rail1", "swp2", "gpu-002", "inconclusive", rnd=2),  # the same link twice: its worst run counts
    run("t-rail1", "swp3", EVIL, "lossless_under_load"),
    run("t-rail10", "swp1", "gpu-001", "inconclusive", rail=10),
    run("t-rail10", "swp4", "gpu-004", skipped="the rail's agreement check disagrees (pfc_mismatch on swp4)",
        rail=10),
]


def test_summary_counts_links_by_their_worst_run():
    counts = summary(RUNS)
    assert counts["links"] == 7 and counts["tors"] == 3 and counts["runs"] == 8
    assert counts["links_by_verdict"] == {"dropped": 1, "lost": 0, "pause_storm": 1, "ecn_inactive": 1, "inconclusive": 2,
                                          "lossless_under_load": 1, "skipped": 1}
    assert counts["runs_by_verdict"]["lossless_under_load"] == 2 and counts["runs_by_verdict"]["inconclusive"] == 2
    assert counts["verdict"] == "dropped"
    assert "t-rail2 Ethernet8 gpu-002 ens1f0np0: DROPPED" in counts["not_lossless"]
    assert not any(line.endswith(("skipped", "lossless under load")) for line in counts["not_lossless"])
    assert summary([])["verdict"] is None and summary([RUNS[-1]])["verdict"] is None


def _cells(line):
    assert line.startswith("|") and line.endswith("|"), line
    return re.split(r"(?<!\\)\|", line[1:-1])


def test_markdown_per_tor_with_verdict_message_and_moved_counters():
    md = load_report(RUNS, cluster="c1", generated="2026-11-27T16:00:00Z")["markdown"]
    assert md.startswith("# Lossless under load: c1\n\nGenerated 2026-11-27T16:00:00Z.\n\n7 links on 3 ToRs, 8 runs.")
    # ToRs by fabric, then rail numerically; links by port naturally (swp2 < swp3 < swp10).
    heads = re.findall(r"(?m)^## ToR (\S+)", md)
    assert heads == ["t-rail1", "t-rail2", "t-rail10"]
    rail1 = md.split("## ToR t-rail1")[1].split("## ToR")[0]
    assert [line.split(" -> ")[1].split(" ")[0] for line in rail1.splitlines() if line.startswith("| gpu")
            or line.startswith("| " + EVIL[:4])] == ["swp2", "swp2", "swp3", "swp10"]
    dropped = [line for line in md.splitlines() if "| DROPPED |" in line]
    assert len(dropped) == 1
    assert "Priority 3 dropped under load: switch Ethernet8 uc3_drop_pkts +120." in dropped[0]
    assert _cells(dropped[0])[-1].strip().startswith("switch Ethernet8 uc3_drop_pkts +120")
    storm = next(line for line in md.splitlines() if "| pause storm |" in line)
    assert "host NIC ens1f0np0 tx_pause_storm_error_events +1" in storm
    lossless = next(line for line in md.splitlines() if "| lossless under load |" in line)
    assert "switch Ethernet8 pfc3_tx_pkts +5,500" in _cells(lossless)[-1]
    assert ("- gpu-004 ens1f0np0 -> swp4, round 1, priority 3: skipped, because the rail's agreement check disagrees "
            "(pfc_mismatch on swp4).") in md


def test_markdown_tables_are_well_formed_and_escaped():
    md = load_report(RUNS, cluster="c<1>|x")["markdown"]
    assert "<script>" not in md and "# Lossless under load: c&lt;1>\\|x" in md
    for line in md.splitlines():
        if line.startswith("|"):
            assert len(_cells(line)) == 8, line


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.cells, self.stack, self.text = [], [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "td":
            self.cells.append(attrs)
        if tag not in ("br", "meta"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-3:])
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def test_html_matrix_one_cell_per_link_coloured_with_counters_on_hover():
    page = _Page()
    page.feed(load_report(RUNS, cluster="c1")["html"])
    assert page.stack == []
    matrix = [c for c in page.cells if c.get("class", "").startswith("v-")]
    assert len(matrix) == 7
    assert sorted(c["class"] for c in matrix) == sorted("v-" + s for s in (
        "dropped", "pause_storm", "ecn_inactive", "inconclusive", "lossless_under_load", "inconclusive", "skipped"))
    dropped = next(c for c in matrix if c["class"] == "v-dropped")
    assert "switch Ethernet8 uc3_drop_pkts +120" in dropped["title"] and "senders: gpu-101, gpu-102" in dropped["title"]
    worst = next(c for c in matrix if "gpu-002 ens1f0np0 -> swp2" in c["title"])
    assert worst["class"] == "v-inconclusive" and "lossless under load" in worst["title"]  # both runs on hover
    skipped = next(c for c in matrix if c["class"] == "v-skipped")
    assert "skipped, because the rail's agreement check disagrees" in skipped["title"]
    assert any(EVIL in c["title"] for c in matrix)  # the attribute holds the name, escaped in the source


def test_html_is_self_contained_and_escaped():
    html = load_report(RUNS, cluster="c<1>")["html"]
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert not re.search(r"(?i)<script|\bsrc=|\bhref=|url\(|@import|https?:", html)
    for state in STATES:
        assert ".v-%s{background:%s}" % (state, COLOURS[state]) in html


def test_same_input_any_order_same_bytes():
    first = load_report(RUNS, cluster="c1", generated="t")
    shuffled = list(RUNS)
    random.Random(7).shuffle(shuffled)
    again = load_report(shuffled, cluster="c1", generated="t")
    assert again["markdown"] == first["markdown"] and again["html"] == first["html"]


def test_colours_one_per_state_and_shared_with_the_agreement_report():
    assert set(COLOURS) == set(STATES) and len(set(COLOURS.values())) == len(STATES)
    assert COLOURS["lossless_under_load"] == lossless_report.COLOURS["agree"]
    assert COLOURS["dropped"] == lossless_report.COLOURS["disagree"]
    assert "#e9ecef" not in COLOURS.values() and "#f8f9fa" not in COLOURS.values()  # not a header's grey


@pytest.mark.parametrize("runs, message", [
    ("runs", "runs: 'str' is not a list of runs"),
    ([{"host": "h"}], "runs[0].tor: None is not a name"),
    ([dict(RUNS[0], verdict={"verdict": "fine"})], "runs[0].verdict: 'fine' is not a load_verdict result"),
    ([dict(RUNS[0], priority="3")], "runs[0].priority: '3' is not a whole number"),
    ([dict(RUNS[0], senders="gpu-1")], "runs[0].senders: 'gpu-1' is not a list"),
])
def test_bad_runs_are_one_line(runs, message):
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        load_report(runs)
    assert "\n" not in str(err.value) and "Fix:" in str(err.value)


def test_a_run_without_verdict_or_reason_is_skipped_and_says_so():
    out = load_report([dict(RUNS[0], verdict=None, skipped=None)])
    assert out["summary"]["links_by_verdict"]["skipped"] == 1
    assert "skipped, because no verdict and no reason were given." in out["markdown"]


def test_rails_md_points_at_the_report_without_claiming_it_exists():
    section = rails_markdown()
    assert "[%s](%s)" % (REPORT_MD, REPORT_MD) in section
    assert "Until a run has written it" in section
    assert not re.search(r"(?i)\b(see|open) the (last )?report\b", section)


def test_a_large_run_renders_in_seconds():
    # 64 ToRs x 128 receiver links, one run each: 0.8 s measured on the 2-core CI machine
    kinds = sorted(V)
    runs = [run("tor%02d" % (i // 128), "swp%d" % (i % 128), "gpu-%04d" % i, kinds[i % 5], rail=i // 128 + 1)
            for i in range(8192)]
    start = time.perf_counter()
    out = load_report(runs, cluster="big", generated="t")
    assert time.perf_counter() - start < 4.0
    assert out["summary"]["links"] == 8192 and out["summary"]["tors"] == 64
