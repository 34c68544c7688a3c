# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real readers of each report grammar, as judges of what the renderers write (test_report_escape.py).

Each judge reads a report as its grammar's own reader does and returns what a person would be shown, in a form two
renders can be compared in: the *hostile* render, with a hostile value in one place, against the *control* render,
with a plain placeholder in the same place. The two must have the same structure (blocks, table rows and cells,
inline markup; HTML elements and attributes; Mermaid vertices, edges and statements) and the hostile one must show
the hostile value as text where the control shows the placeholder.

* Markdown: markdown-it-py (CommonMark) with GFM tables, strikethrough and linkify (bare URLs become links, as on
  GitHub) enabled.
* HTML: Python's html.parser (tags, attributes, text with character references resolved).
* Mermaid: Mermaid itself (tests/js/mermaid_judge.mjs, run by node: mermaid's parse and flowchart database, the
  labels decoded as a browser decodes them); skips, naming tests/js-deps.sh, where it is not installed (fails with
  AINET_REQUIRE_MERMAID=1).
* CSV: the csv module.

The hostile values (:data:`HOSTILE`) are what reaches a report from a name or a device string: line breaks
(also U+2028, U+2029, NEL, CR, VT, FF), pipes, backticks, HTML, links, Mermaid statements and directives, block
markers, entities, a spreadsheet formula, a terminal escape.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
JS = os.path.join(ROOT, "tests", "js")
NODE = shutil.which("node") or shutil.which("nodejs")

# What the screen shows of a line-broken value: one line, blanks collapsed.
_BLANKS = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def shown(value):
    """``value`` as it is shown in any report: on one line, runs of blanks (and control characters) one blank."""
    return _BLANKS.sub(" ", value).strip()


# --- the hostile values ----------------------------------------------------------------------------------------

# The placeholder of the control renders: every name of one kind carries it (as a prefix, so that the order of
# the rows stays that of the control when it is replaced).
PH = "zqx"
HOSTILE = {
    "line break and forged row": "gpu\n| forged | row | x | y |",
    "pipe": "a|b",
    "backticks": "`code` ``x`` ```",
    "script": "<script>alert(1)</script>",
    "markdown link": "[x](javascript:alert(1))",
    "image": "![i](http://evil.example/x.png)",
    "mermaid click": 'click node1 href "javascript:alert(1)"',
    "mermaid init directive": "%%{init: {'theme':'dark', 'securityLevel':'loose'}}%%",
    "close label and add a statement": '"]\n  click node1 call alert()\n  x["',
    "close round label": '")\n  style node1 fill:#f00\n  n9("',
    "edge": "--> tor9",
    "semicolon statement": 'a"; click tor1 href "javascript:alert(1)"; b["',
    "heading": "# heading",
    "list item": "- item",
    "quote": "> quote",
    "ordered": "1. one",
    "emphasis and math": "*em* _em_ ~~s~~ $x$",
    "bare urls": "http://evil.example/ www.evil.example x@evil.example",
    "entities": "&lt;b&gt; &amp; &#35; a&#124;b",
    "mermaid entities": "#quot; #35; #amp; #lt;b#gt;",
    "unicode line separators": "line\u2028sep\u2029para\x85nel\rcr\x0bvt\x0cff",
    "formula": "=cmd|' /C calc'!A0",
    "terminal escape": "\x1b[31mred\x1b[0m",
    "mermaid keywords": "end style click subgraph classDef x fill:#f00",
    "html attribute": '" onmouseover="alert(1)" x=\'',
    "backslashes": "\\ trailing\\",
    "indented": "    indented code",
}
CASES = sorted(HOSTILE)


def hostile(data, value):
    """``data`` (JSON-like) with every ``PH`` in its strings and keys replaced by ``value``."""
    return json.loads(json.dumps(data).replace(PH, json.dumps(value)[1:-1]))


# --- Markdown -------------------------------------------------------------------------------------------------

def _markdown():
    return MarkdownIt("commonmark", {"linkify": True}).enable(["table", "strikethrough", "linkify"])


def markdown_view(text):
    """``[(block token, tag, inline signature, inline text)]``: each block token of the document in order, an
    inline one with the types of its children (consecutive text merged) and its text as shown (code spans'
    content included, line breaks as blanks)."""
    view = []
    for token in _markdown().parse(text):
        if token.type != "inline":
            view.append((token.type, token.tag, (), ""))
            continue
        kinds, parts = [], []
        for child in token.children or ():
            kind = "text" if child.type in ("text", "text_special") else child.type
            if child.type in ("softbreak", "hardbreak"):
                parts.append(" ")
            elif child.type == "html_inline":
                parts.append("<%s>" % child.content.strip("<>/ "))  # the report's own <br>
            else:
                parts.append(child.content)
            if not (kinds and kinds[-1] == kind == "text"):
                kinds.append(kind)
        view.append(("inline", "", tuple(kinds), shown("".join(parts))))
    return view


def markdown_tables(text):
    """Every GFM table of ``text`` as its rows' cell texts (header row first)."""
    tables, rows, row = [], None, None
    for token in _markdown().parse(text):
        if token.type == "table_open":
            rows = []
        elif token.type == "table_close":
            tables.append(rows)
            rows = None
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close":
            rows.append(row)
        elif token.type == "inline" and rows is not None and row is not None:
            row.append(shown("".join(c.content for c in token.children or ())))
    return tables


def assert_markdown_shows(hostile, control, value, placeholder):
    """``hostile`` has exactly ``control``'s structure and shows ``value`` where ``control`` shows
    ``placeholder`` (and everything else the same)."""
    got, want = markdown_view(hostile), markdown_view(control)
    assert [v[:3] for v in got] == [v[:3] for v in want], "the value changed the Markdown's structure"
    assert any(placeholder in v[3] for v in want), "the placeholder is not in the control"
    for (_t, _g, _k, text), (_t2, _g2, _k2, expected) in zip(got, want):
        assert text == shown(expected.replace(placeholder, value)), (text, expected)


# --- HTML -----------------------------------------------------------------------------------------------------

class _Events(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.events = []

    def handle_starttag(self, tag, attrs):
        self.events.append(("start", tag, tuple(name for name, _v in attrs), tuple(v or "" for _n, v in attrs)))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        self.events.append(("end", tag, (), ()))

    def handle_data(self, data):
        self.events.append(("data", "", (), (data,)))

    def handle_comment(self, data):
        self.events.append(("comment", "", (), (data,)))

    def handle_decl(self, decl):
        self.events.append(("decl", decl, (), ()))

    def unknown_decl(self, data):
        self.events.append(("unknown", data, (), ()))

    def handle_pi(self, data):
        self.events.append(("pi", data, (), ()))


def html_events(text):
    """``[(kind, tag, attribute names, values)]`` of ``text`` as html.parser reads it (values: the attributes'
    values, or the text's, character references resolved)."""
    parser = _Events()
    parser.feed(text)
    parser.close()
    return parser.events


def assert_html_shows(hostile, control, value, placeholder):
    """``hostile`` has exactly ``control``'s elements and attributes, and its texts and attribute values are
    ``control``'s with ``value`` in place of ``placeholder``."""
    got, want = html_events(hostile), html_events(control)
    assert [e[:3] for e in got] == [e[:3] for e in want], "the value added or removed an element or attribute"
    assert any(placeholder in v for e in want for v in e[3]), "the placeholder is not in the control"
    for event, expected in zip(got, want):
        assert event[3] == tuple(v.replace(placeholder, value) for v in expected[3]), (event, expected)


# --- Mermaid --------------------------------------------------------------------------------------------------

def mermaid_judge(texts):
    """What Mermaid makes of each diagram text (see tests/js/mermaid_judge.mjs)."""
    installed = os.path.isdir(os.path.join(JS, "node_modules", "mermaid")) and os.path.isdir(
        os.path.join(JS, "node_modules", "jsdom"))
    if NODE is None or not installed:
        why = ("the Mermaid judge is not installed (%s): run `bash tests/js-deps.sh` (npm ci in tests/js; node and npm "
               "from Debian's nodejs and npm, tests/system-deps.sh)" % ("no node on PATH" if NODE is None else
                                                                        "tests/js/node_modules lacks mermaid or jsdom"))
        if os.environ.get("AINET_REQUIRE_MERMAID") == "1":
            pytest.fail("AINET_REQUIRE_MERMAID=1 but " + why)
        pytest.skip(why)
    result = subprocess.run([NODE, os.path.join(JS, "mermaid_judge.mjs")], input=json.dumps(texts),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120,
                            check=False, cwd=JS)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def mermaid_shape(diagram):
    """What a diagram states beyond its labels: its type and configuration, vertex ids and shapes, edges, and
    every statement that is not a node or an edge (links, callbacks, tooltips, styles, classes, subgraphs)."""
    assert "error" not in diagram, diagram.get("error")
    return {
        "type": diagram["diagramType"], "config": diagram["config"], "direction": diagram["direction"],
        "vertices": sorted((v["id"], v["type"], v["link"], v["linkTarget"], v["haveCallback"], tuple(v["styles"]),
                            tuple(v["classes"]), v["tooltip"], tuple(v["elements"])) for v in diagram["vertices"]),
        "edges": sorted((e["start"], e["end"], e["type"], e["stroke"], tuple(e["style"]), tuple(e["classes"]),
                         tuple(e["elements"])) for e in diagram["edges"]),
        "classDefs": diagram["classDefs"], "subgraphs": diagram["subgraphs"],
        "acc": (diagram["accTitle"], diagram["accDescription"]),
    }


def mermaid_labels(diagram):
    """``{vertex id: label}`` and ``{(start, end): [labels]}`` as shown (one line, blanks collapsed)."""
    vertices = {v["id"]: shown(v["text"]) for v in diagram["vertices"]}
    edges = {}
    for e in diagram["edges"]:
        edges.setdefault((e["start"], e["end"]), []).append(shown(e["text"]))
    return vertices, edges


# --- CSV ------------------------------------------------------------------------------------------------------

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_rows(text):
    return list(csv.reader(io.StringIO(text, newline="")))
