"""The agreement report: counts, order, escaping, well-formed tables, nothing external, speed."""

from html.parser import HTMLParser

from ansible_collections.ainet.fabric.plugins.module_utils.lossless_report import (
    COLOURS, render_html, render_markdown, summary,
)

LOSSY = {"code": "roce_dscp_lossy_on_switch", "host": 3, "switch": 1,
         "message": "DSCP 26 is lossless priority 3 on the host but lands in lossy TC1 on the switch port Ethernet8 "
                    "(PFC there: 3,4)."}
PFC = {"code": "pfc_mismatch", "host": [3], "switch": [3, 4], "message": "PFC is on priorities 3 on the host but 3,4."}
LINKS = [
    {"fabric": "compute", "rail": 2, "host": "gpu-002", "host_port": "ens2", "tor": "t2", "switch_port": "Ethernet8",
     "status": "disagree", "error": None, "disagreements": [LOSSY, PFC]},
    {"fabric": "compute", "rail": 1, "host": "gpu-<script>&1", "host_port": "ens1|x", "tor": "t1",
     "switch_port": "swp1", "status": "agree", "error": None, "disagreements": []},
    {"fabric": "compute", "rail": 1, "host": "gpu-003", "host_port": "ens1", "tor": "t9", "switch_port": "swp3",
     "status": "error", "error": "no configuration of ToR t9 was read", "disagreements": []},
    {"fabric": "compute", "rail": 10, "host": "gpu-004", "host_port": "ens10", "tor": "t10", "switch_port": "swp4",
     "status": "disagree", "error": None, "disagreements": [LOSSY]},
]
META = {"cluster": "c1", "generated": "2026-11-22T10:00:00Z", "profile": "compute: nvidia", "sources": {"hosts": 4}}


def test_summary_counts_verdicts_and_codes_most_frequent_first():
    assert summary(LINKS) == {"links": 4, "agree": 1, "disagree": 2, "error": 1,
                              "by_code": {"roce_dscp_lossy_on_switch": 2, "pfc_mismatch": 1}}


def test_markdown_rows_are_sorted_escaped_and_well_formed():
    text = render_markdown(LINKS, META)
    rows = [line for line in text.splitlines() if line.startswith("| compute")]
    assert [r.split(" | ")[1:3] for r in rows] == [["1", "gpu-003"], ["1", "gpu-<script>&1"], ["2", "gpu-002"],
                                                   ["10", "gpu-004"]]
    assert all(row.replace("\\|", "").count("|") == 9 for row in rows)  # 8 cells each, escaped pipes inside
    assert "ens1\\|x" in text and "| `roce_dscp_lossy_on_switch` | 2 |" in text
    assert text == render_markdown(list(reversed(LINKS)), META)


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.tags, self.texts = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append(dict(attrs).get("class"))

    def handle_data(self, data):
        self.texts.append(data)


def test_html_is_one_row_per_link_escaped_and_self_contained():
    page = render_html(LINKS, META)
    parser = _Page()
    parser.feed(page)
    assert [c for c in parser.rows if c] == ["error", "agree", "disagree", "disagree"]
    assert "gpu-<script>&1" in "".join(parser.texts)  # shown as text ...
    assert not any(tag == "script" for tag, _a in parser.tags)  # ... never as markup
    assert "http://" not in page and "https://" not in page and "src=" not in page and "url(" not in page
    assert "tr.disagree td{background:%s}" % COLOURS["disagree"] in page
    assert page == render_html(list(reversed(LINKS)), META)


def test_eight_thousand_links_render_fast():
    import time
    many = [dict(LINKS[0], host="gpu-%05d" % i) for i in range(8192)]
    start = time.perf_counter()
    render_html(many, META)
    render_markdown(many, META)
    assert time.perf_counter() - start < 5  # generous bound for a loaded CI machine; bench_lossless measures
