# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lossless agreement report: Markdown and one self-contained HTML page.

Input: the link rows of :func:`lossless_check.link_rows` - one per host-ToR link, with
``fabric, rail, host, host_port, tor, switch_port, status`` (``agree``, ``disagree`` or
``error``), ``error`` and ``disagreements`` - and a ``meta`` mapping (``cluster``,
``generated``, ``profile``, ``sources``, ``problems``). Rows are sorted by fabric, rail, host;
the same input gives byte-identical output (the time stamp, if any, comes in ``meta``).
The HTML page has inline CSS only: no script, no external URL, nothing fetched.
"""

from __future__ import annotations

import html

STATUSES = ("agree", "disagree", "error")
LABELS = {"agree": "agree", "disagree": "DISAGREE", "error": "not checked"}
# Row backgrounds of the HTML report (tests look for them in a screenshot).
COLOURS = {"agree": "#d1e7dd", "disagree": "#f8d7da", "error": "#fff3cd"}


def _key(row):
    return (str(row.get("fabric")), int(row.get("rail") or 0), str(row.get("host")), str(row.get("host_port")))


def summary(links):
    """Link counts per verdict and disagreement counts per code (most frequent first)."""
    out = {"links": len(links), "agree": 0, "disagree": 0, "error": 0}
    codes = {}
    for row in links:
        status = row.get("status") if row.get("status") in STATUSES else "error"
        out[status] += 1
        for item in row.get("disagreements") or ():
            codes[item["code"]] = codes.get(item["code"], 0) + 1
    out["by_code"] = dict(sorted(codes.items(), key=lambda kv: (-kv[1], kv[0])))
    return out


def _md(text):
    return str("" if text is None else text).replace("|", "\\|").replace("\n", " ")


def render_markdown(links, meta):
    meta = meta or {}
    counts = summary(links)
    out = ["# Lossless RoCE agreement: %s" % _md(meta.get("cluster", "")), ""]
    if meta.get("generated"):
        out.append("Generated %s." % _md(meta["generated"]))
    if meta.get("profile"):
        out.append("Profiles: %s." % _md(meta["profile"]))
    sources = meta.get("sources") or {}
    if sources:
        out.append("Read: %s." % ", ".join("%s %s" % (v, _md(k)) for k, v in sorted(sources.items())))
    out += ["", "%d links: %d agree, %d disagree, %d not checked." % (
        counts["links"], counts["agree"], counts["disagree"], counts["error"]), ""]
    if counts["by_code"]:
        out += ["| disagreement | links |", "|---|---|"]
        out += ["| `%s` | %d |" % (_md(code), n) for code, n in counts["by_code"].items()]
        out.append("")
    problems = meta.get("problems") or {}
    if problems:
        out += ["## Configuration problems", ""]
        for tor, items in sorted(problems.items()):
            out += ["- %s: %s" % (_md(tor), _md(item)) for item in items]
        out.append("")
    out += ["## Links", "", "| fabric | rail | host | host port | ToR | switch port | verdict | details |",
            "|---|---|---|---|---|---|---|---|"]
    for row in sorted(links, key=_key):
        status = row.get("status") if row.get("status") in STATUSES else "error"
        if status == "error":
            details = _md(row.get("error"))
        else:
            details = "<br>".join("`%s`: %s" % (_md(i["code"]), _md(i["message"])) for i in row.get("disagreements")
                                  or ())
        cells = [_md(v) for v in (row.get("fabric"), row.get("rail"), row.get("host"), row.get("host_port"),
                                  row.get("tor"), row.get("switch_port"))]
        out.append("| %s |" % " | ".join(cells + [LABELS[status], details]))
    return "\n".join(out) + "\n"


_CSS = """body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#212529}
h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:20px 0 8px}p{margin:4px 0}
table{border-collapse:collapse;font-size:13px;margin-top:6px}
th,td{border:1px solid #adb5bd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#e9ecef;position:sticky;top:0}
tr.agree td{background:%(agree)s}tr.disagree td{background:%(disagree)s}tr.error td{background:%(error)s}
code{font-size:12px}ul{margin:2px 0;padding-left:18px}.count{font-weight:600}""" % COLOURS


def _h(text):
    return html.escape(str("" if text is None else text), quote=True)


def render_html(links, meta):
    meta = meta or {}
    counts = summary(links)
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           "<title>Lossless RoCE agreement: %s</title>" % _h(meta.get("cluster", "")),
           "<style>%s</style>" % _CSS, "</head>", "<body>",
           "<h1>Lossless RoCE agreement: %s</h1>" % _h(meta.get("cluster", ""))]
    if meta.get("generated"):
        out.append("<p>Generated %s.</p>" % _h(meta["generated"]))
    if meta.get("profile"):
        out.append("<p>Profiles: %s.</p>" % _h(meta["profile"]))
    sources = meta.get("sources") or {}
    if sources:
        out.append("<p>Read: %s.</p>" % _h(", ".join("%s %s" % (v, k) for k, v in sorted(sources.items()))))
    out.append('<p class="count">%d links: %d agree, %d disagree, %d not checked.</p>' % (
        counts["links"], counts["agree"], counts["disagree"], counts["error"]))
    if counts["by_code"]:
        out += ["<h2>Disagreements by code</h2>", "<table>", "<tr><th>code</th><th>links</th></tr>"]
        out += ["<tr><td><code>%s</code></td><td>%d</td></tr>" % (_h(c), n) for c, n in counts["by_code"].items()]
        out.append("</table>")
    problems = meta.get("problems") or {}
    if problems:
        out += ["<h2>Configuration problems</h2>", "<ul>"]
        for tor, items in sorted(problems.items()):
            out += ["<li>%s: %s</li>" % (_h(tor), _h(item)) for item in items]
        out.append("</ul>")
    out += ["<h2>Links</h2>", "<table>",
            "<tr><th>fabric</th><th>rail</th><th>host</th><th>host port</th><th>ToR</th><th>switch port</th>"
            "<th>verdict</th><th>details</th></tr>"]
    for row in sorted(links, key=_key):
        status = row.get("status") if row.get("status") in STATUSES else "error"
        if status == "error":
            details = _h(row.get("error"))
        elif row.get("disagreements"):
            details = "<ul>%s</ul>" % "".join("<li><code>%s</code> %s</li>" % (_h(i["code"]), _h(i["message"]))
                                              for i in row["disagreements"])
        else:
            details = ""
        values = (row.get("fabric"), row.get("rail"), row.get("host"), row.get("host_port"), row.get("tor"),
                  row.get("switch_port"))
        cells = "".join("<td>%s</td>" % _h(v) for v in values)
        out.append('<tr class="%s">%s<td>%s</td><td>%s</td></tr>' % (status, cells, LABELS[status], details))
    out += ["</table>", "</body>", "</html>"]
    return "\n".join(out) + "\n"
