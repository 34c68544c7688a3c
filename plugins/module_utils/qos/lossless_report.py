# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lossless agreement report: Markdown and one self-contained HTML page.

Input: the link rows of :func:`lossless_check.link_rows`, one per host-ToR link::

    {"fabric": "compute", "rail": 1, "host": "gpu-001", "host_port": "ens1f0np0",
     "tor": "c1-rail1-tor", "switch_port": "swp1",
     "status": "agree",                  # or "disagree", "unchecked" (a topic could not be compared: not shown
                                         # to agree), or "error" (the link could not be checked)
     "error": None,                      # why not, for "error"
     "disagreements": [{"code": "roce_dscp_lossy_on_switch", "host": 3, "switch": "TC1 (lossy)",
                        "message": "DSCP 26 is lossless priority 3 on the host but ..."}],
     "unchecked": [{"topic": "pfc_watchdog", "reason": "the PFC watchdog of ... was not read"}]}

(``unchecked``, optional: the topics that could not be compared, shown in the last column; ``advice``,
optional, ``[{"topic", "message"}]``: what is not a disagreement but would become one if an input the check lacks
turned out badly - a host table that makes more DSCPs lossless than the switch, say - shown in the details column
after the disagreements, each line starting ``advice``. Advice never changes a link's verdict.)

and a ``meta`` mapping: ``cluster``, ``generated`` (the time stamp: the renderers never read the
clock), ``profile``, ``sources`` (``{"hosts": 4, "switches": 2}``) and optionally ``problems``
(``{source: [text, ...]}``: what a ToR or host configuration states but cannot be honoured).

Rows are sorted by fabric, rail (numerically), host, then the remaining columns, so the order
of the input does not matter and the same input gives byte-identical output. A status other
than the four known ones is reported as ``error``; a row that says ``agree`` but lists unchecked topics is
``unchecked`` (never shown as agreeing).

The HTML page is HTML5 with inline CSS only: no script, no external URL, no image, nothing
fetched; every value is HTML-escaped. Rows are coloured by verdict (:data:`COLOURS`). In the
Markdown every value is :func:`report_escape.md_text` (codes and topics :func:`report_escape.md_code`), so no
value becomes a table cell border, a line, a link or HTML markup. Both renderers handle 8,192 links in well
under half a second.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.common.report_escape import (
    html_text as _h, md_code as _md_code, md_text as _md, text as _text,
)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.report_style import TINTS, rail_key as _rail

STATUSES = ("agree", "disagree", "unchecked", "error")
# Verdict column text per status.
LABELS = {"agree": "agree", "disagree": "DISAGREE", "unchecked": "not all checked", "error": "not checked"}
# Row backgrounds of the HTML report (report_style.TINTS): green for a link whose host and ToR agree,
# red for a disagreement, amber for a link that could not be checked, cyan for one checked in part (it proves
# nothing about the topics left out). The browser test looks for these exact colours in a screenshot.
COLOURS = {"agree": TINTS["good"], "disagree": TINTS["bad"], "unchecked": TINTS["unknown"], "error": TINTS["caution"]}
COLUMNS = ("fabric", "rail", "host", "host port", "ToR", "switch port", "verdict", "details", "unchecked")
_FIELDS = ("fabric", "rail", "host", "host_port", "tor", "switch_port")


def _key(row):
    return (_text(row.get("fabric")), _rail(row.get("rail")), _text(row.get("host")), _text(row.get("host_port")),
            _text(row.get("tor")), _text(row.get("switch_port")), _status(row), _text(row.get("error")))


def _status(row):
    status = row.get("status")
    if status == "agree" and row.get("unchecked"):
        return "unchecked"
    return status if status in STATUSES else "error"


def _ordered(links):
    return sorted(links or (), key=_key)


def summary(links):
    """``{"links", "agree", "disagree", "unchecked", "error": counts, "by_code": {code: links}}``.

    ``by_code`` counts the disagreements per code, most frequent first, then by code."""
    links = links or ()
    out = {"links": len(links), "agree": 0, "disagree": 0, "unchecked": 0, "error": 0}
    codes = {}
    for row in links:
        out[_status(row)] += 1
        for item in row.get("disagreements") or ():
            code = _text(item.get("code"))
            codes[code] = codes.get(code, 0) + 1
    out["by_code"] = dict(sorted(codes.items(), key=lambda kv: (-kv[1], kv[0])))
    return out


def _counts_line(counts):
    return "%d links: %d agree, %d disagree, %d not all checked, %d not checked." % (
        counts["links"], counts["agree"], counts["disagree"], counts["unchecked"], counts["error"])


def render_markdown(links, meta):
    """The report as Markdown (str): title, meta, counts, a table of disagreements per code and
    a table of one row per link (details: ``code: message`` per disagreement joined by ``<br>``,
    or the reason a link was not checked)."""
    meta = meta or {}
    counts = summary(links)
    out = ["# Lossless RoCE agreement: %s" % _md(meta.get("cluster")), ""]
    if meta.get("generated"):
        out.append("Generated %s." % _md(meta["generated"]))
    if meta.get("profile"):
        out.append("Profiles: %s." % _md(meta["profile"]))
    sources = meta.get("sources") or {}
    if sources:
        out.append("Read: %s." % ", ".join("%s %s" % (_md(v), _md(k)) for k, v in sorted(sources.items())))
    out += ["", _counts_line(counts), ""]
    if counts["by_code"]:
        out += ["| disagreement | links |", "|---|---|"]
        out += ["| %s | %d |" % (_md_code(code), n) for code, n in counts["by_code"].items()]
        out.append("")
    problems = meta.get("problems") or {}
    if problems:
        out += ["## Configuration problems", ""]
        for source, items in sorted(problems.items()):
            out += ["- %s: %s" % (_md(source), _md(item)) for item in items]
        out.append("")
    out += ["## Links", "", "| %s |" % " | ".join(COLUMNS), "|%s" % ("---|" * len(COLUMNS))]
    spans = {code: _md_code(code) for code in counts["by_code"]}
    for row in _ordered(links):
        status = _status(row)
        if status == "error":
            details = _md(row.get("error"))
        else:
            details = "<br>".join(["%s: %s" % (spans[_text(i.get("code"))], _md(i.get("message")))
                                   for i in row.get("disagreements") or ()]
                                  + ["advice %s: %s" % (_md_code(i.get("topic")), _md(i.get("message")))
                                     for i in row.get("advice") or ()])
        unchecked = "<br>".join("%s: %s" % (_md_code(i.get("topic")), _md(i.get("reason")))
                                for i in row.get("unchecked") or ())
        cells = [_md(row.get(f)) for f in _FIELDS] + [LABELS[status], details, unchecked]
        out.append("| %s |" % " | ".join(cells))
    return "\n".join(out) + "\n"


_CSS = """body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#212529}
h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:20px 0 8px}p{margin:4px 0}
table{border-collapse:collapse;font-size:13px;margin-top:6px}
th,td{border:1px solid #adb5bd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#e9ecef;position:sticky;top:0}
tr.agree td{background:%(agree)s}tr.disagree td{background:%(disagree)s}tr.error td{background:%(error)s}
tr.unchecked td{background:%(unchecked)s}
td.n{text-align:right}table.links td:not(:last-child){white-space:nowrap}
code{font-size:12px}ul{margin:2px 0;padding-left:18px}.count{font-weight:600}""" % COLOURS


def render_html(links, meta):
    """The report as one self-contained HTML5 page (str): inline CSS, no script, no URL; a table
    of disagreements per code and one ``<tr class="agree|disagree|unchecked|error">`` per link."""
    meta = meta or {}
    counts = summary(links)
    title = "Lossless RoCE agreement: %s" % _h(meta.get("cluster"))
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<title>%s</title>" % title, "<style>%s</style>" % _CSS, "</head>", "<body>", "<h1>%s</h1>" % title]
    if meta.get("generated"):
        out.append("<p>Generated %s.</p>" % _h(meta["generated"]))
    if meta.get("profile"):
        out.append("<p>Profiles: %s.</p>" % _h(meta["profile"]))
    sources = meta.get("sources") or {}
    if sources:
        out.append("<p>Read: %s.</p>" % _h(", ".join("%s %s" % (v, k) for k, v in sorted(sources.items()))))
    out.append('<p class="count">%s</p>' % _counts_line(counts))
    if counts["by_code"]:
        out += ["<h2>Disagreements by code</h2>", '<table class="codes">', "<tr><th>code</th><th>links</th></tr>"]
        out += ['<tr><td><code>%s</code></td><td class="n">%d</td></tr>' % (_h(c), n)
                for c, n in counts["by_code"].items()]
        out.append("</table>")
    problems = meta.get("problems") or {}
    if problems:
        out += ["<h2>Configuration problems</h2>", "<ul>"]
        for source, items in sorted(problems.items()):
            out += ["<li>%s: %s</li>" % (_h(source), _h(item)) for item in items]
        out.append("</ul>")
    out += ["<h2>Links</h2>", '<table class="links">', "<tr>%s</tr>" % "".join("<th>%s</th>" % c for c in COLUMNS)]
    codes = {code: _h(code) for code in counts["by_code"]}
    for row in _ordered(links):
        status = _status(row)
        if status == "error":
            details = _h(row.get("error"))
        elif row.get("disagreements") or row.get("advice"):
            details = "<ul>%s</ul>" % "".join(
                ["<li><code>%s</code>: %s</li>" % (codes[_text(i.get("code"))], _h(i.get("message")))
                 for i in row.get("disagreements") or ()]
                + ['<li class="advice">advice <code>%s</code>: %s</li>' % (_h(i.get("topic")), _h(i.get("message")))
                   for i in row.get("advice") or ()])
        else:
            details = ""
        cells = "".join("<td>%s</td>" % _h(row.get(f)) for f in _FIELDS)
        unchecked = "<ul>%s</ul>" % "".join("<li><code>%s</code>: %s</li>" % (_h(i.get("topic")), _h(i.get("reason")))
                                            for i in row["unchecked"]) if row.get("unchecked") else ""
        out.append('<tr class="%s">%s<td>%s</td><td>%s</td><td>%s</td></tr>'
                   % (status, cells, LABELS[status], details, unchecked))
    out += ["</table>", "</body>", "</html>"]
    return "\n".join(out) + "\n"
