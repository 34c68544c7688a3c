# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report of a lossless load test: ``lossless.md`` and one self-contained HTML page.

``load_report(runs, cluster=None, generated=None)`` returns ``{"markdown": str, "html": str, "summary": {...}}``.
``runs`` holds one entry per receiver link, lossless class and round::

    {"tor": "c1-rail1-tor", "rail": 1, "fabric": "compute",
     "port": "swp1",                     # the ToR port of the receiver's link (None: not known)
     "host": "gpu-001", "host_nic": "ens1f0np0",   # the receiver
     "senders": ["gpu-002", "gpu-003"], "round": 1, "priority": 3, "seconds": 10.0,
     "verdict": load_verdict(...),       # or None when the run did not happen
     "skipped": None}                    # or why not: "the rail's agreement check disagrees (pfc_mismatch)"

A *link* is one receiver NIC and its ToR port; its verdict is the worst of its runs' (:data:`load_verdict.VERDICTS`,
worst first), and ``skipped`` when none of its runs was judged. ``generated`` is the time stamp to print: the
renderers never read the clock, so the same input gives byte-identical output, whatever the order of ``runs``.

The Markdown holds a summary, then per ToR one row per run with its verdict, message and the counters that moved
(with their deltas), then a ``skipped, because ...`` line per run that did not happen. The HTML page is a matrix, one
row per ToR and one cell per link, coloured by the link's verdict (:data:`COLOURS`); hovering a cell shows its runs,
messages and counters (the ``title`` attribute: no script). It has inline CSS only, no script, no URL, nothing
fetched, and every value is HTML-escaped; in the Markdown every value is :func:`report_escape.md_text` (no value
adds a row, a cell, a line, a link or markup).

Both renderers handle 8,192 runs (64 ToRs x 128 links) in under a second on the 2-core CI machine.

:func:`rails_markdown` is the plan report's (``rails.md``) pointer to this report.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import VERDICTS, counter_name, moved_text
from ansible_collections.ainet.fabric.plugins.module_utils.common.report_escape import html_text, md_text, text
from ansible_collections.ainet.fabric.plugins.module_utils.qos.report_style import TINTS, rail_key

REPORT_MD = "lossless.md"
REPORT_HTML = "lossless.html"
STATES = VERDICTS + ("skipped",)
LABELS = {"dropped": "DROPPED", "lost": "LOST (not placed)", "pause_storm": "pause storm", "ecn_inactive": "ECN inactive",
          "inconclusive": "inconclusive", "lossless_under_load": "lossless under load", "skipped": "skipped"}
# Cell backgrounds of the HTML matrix (report_style.TINTS: the agreement report's green, red and amber mean the
# same here). The browser test looks for these exact colours in a screenshot.
COLOURS = {"lossless_under_load": TINTS["good"], "dropped": TINTS["bad"], "lost": TINTS["lost"], "ecn_inactive": TINTS["caution"],
           "pause_storm": TINTS["storm"], "inconclusive": TINTS["unknown"], "skipped": TINTS["absent"]}
MOVED = ("drop", "storm", "pause", "ecn", "link_pause")  # the order counters are listed in


def _fail(where, value, problem, fix):
    raise ValueError("%s: %r %s. Fix: %s" % (where, value, problem, fix))


def _check(runs):
    """Every run as a dict with the fields the report reads (ValueError, one line, on what it cannot read)."""
    if not isinstance(runs, (list, tuple)):
        _fail("runs", type(runs).__name__, "is not a list of runs", "pass one dict per receiver link, class and round")
    out = []
    for i, run in enumerate(runs):
        where = "runs[%d]" % i
        if not isinstance(run, dict):
            _fail(where, type(run).__name__, "is not a run", "give a dict with tor, port, host, host_nic, verdict...")
        for field in ("tor", "host"):
            if not isinstance(run.get(field), str) or not run[field]:
                _fail("%s.%s" % (where, field), run.get(field), "is not a name", "name the receiver's ToR and host")
        verdict = run.get("verdict")
        if verdict is not None and (not isinstance(verdict, dict) or verdict.get("verdict") not in VERDICTS
                                    or not isinstance(verdict.get("classes"), list)):
            _fail("%s.verdict" % where, verdict if not isinstance(verdict, dict) else verdict.get("verdict"),
                  "is not a load_verdict result", "pass what ainet.fabric.load_verdict returned, or None with skipped")
        senders = run.get("senders") or []
        if not isinstance(senders, (list, tuple)):
            _fail("%s.senders" % where, senders, "is not a list", "list the sending hosts' names")
        for field in ("round", "priority"):
            if run.get(field) is not None and (isinstance(run[field], bool) or not isinstance(run[field], int)):
                _fail("%s.%s" % (where, field), run[field], "is not a whole number", "give an int or None")
        if run.get("seconds") is not None and (isinstance(run["seconds"], bool)
                                               or not isinstance(run["seconds"], (int, float))):
            _fail("%s.seconds" % where, run["seconds"], "is not a number", "give the run's length in seconds")
        state = verdict["verdict"] if verdict is not None else "skipped"
        reason = None
        if verdict is None:
            reason = text(run.get("skipped")) or "no verdict and no reason were given"
        out.append(dict(run, senders=[text(s) for s in senders], state=state, reason=reason))
    return out


def _natural(value):
    """Sort key that orders swp2 before swp10 and Ethernet4 before Ethernet12."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text(value))]


def _worst(states):
    judged = [s for s in states if s != "skipped"]
    return min(judged, key=VERDICTS.index) if judged else "skipped"


def _run_key(run):
    return (run["round"] if run.get("round") is not None else -1,
            run["priority"] if run.get("priority") is not None else -1, run["state"], run.get("reason") or "")


def _group(runs):
    """``[(tor, {"fabric", "rails"}, [(link key, state, [runs])])]`` in report order."""
    tors = {}
    for run in runs:
        tor = tors.setdefault(run["tor"], {"fabric": set(), "rails": set(), "links": {}})
        if run.get("fabric") is not None:
            tor["fabric"].add(text(run["fabric"]))
        if run.get("rail") is not None:
            tor["rails"].add(run["rail"])
        key = (text(run.get("port")), run["host"], text(run.get("host_nic")))
        tor["links"].setdefault(key, []).append(run)
    out = []
    for name, tor in tors.items():
        links = []
        for key in sorted(tor["links"], key=lambda k: (_natural(k[0]), k[1], _natural(k[2]))):
            link_runs = sorted(tor["links"][key], key=_run_key)
            links.append((key, _worst([r["state"] for r in link_runs]), link_runs))
        rails = sorted(tor["rails"], key=rail_key)
        info = {"fabric": ", ".join(sorted(tor["fabric"])), "rails": rails}
        out.append((name, info, links))
    out.sort(key=lambda t: (t[1]["fabric"], rail_key(t[1]["rails"][0]) if t[1]["rails"] else (2, 0, ""), t[0]))
    return out


def _classes(run):
    """The verdict's classes this run judged: the run's priority when it names one, else all."""
    classes = run["verdict"]["classes"]
    if run.get("priority") is not None:
        mine = [c for c in classes if c.get("priority") == run["priority"]]
        return mine or classes
    return classes


def _moved(run):
    """The counters of the run that moved, worst facts first, each once: ``["switch swp1 pfc3_tx_pkts +5,500"]``
    (kept on the run's checked copy: both renderers list them)."""
    if "__moved" not in run:
        run["__moved"] = _moved_now(run)
    return run["__moved"]


def _moved_now(run):
    seen, out = set(), []
    for klass in _classes(run):
        for fact in MOVED:
            for record in (klass.get("moved") or {}).get(fact) or ():
                key = (record.get("side"), record.get("port"), record.get("counter"))
                if key not in seen and record.get("delta") is not None:
                    seen.add(key)
                    out.append(moved_text(record))
    return out


def _resets(run):
    seen = []
    for klass in _classes(run):
        for record in klass.get("reset") or ():
            name = counter_name(record)
            if name not in seen:
                seen.append(name)
    return seen


def _message(run):
    if run["state"] == "skipped":
        return "skipped, because %s" % run["reason"]
    return " ".join(text(c.get("message")) for c in _classes(run))


def summary(runs):
    """``{"tors", "links", "runs": counts, "links_by_verdict": {state: links}, "runs_by_verdict": {state: runs},
    "verdict": the worst link verdict (None when nothing was judged), "not_lossless": ["tor port host nic: label"]}``
    (states: the five verdicts, worst first, then ``skipped``)."""
    return _summary(_group(_check(runs)), len(runs))


def _summary(grouped, n_runs):
    by_link = dict.fromkeys(STATES, 0)
    by_run = dict.fromkeys(STATES, 0)
    not_lossless = []
    for tor, _info, links in grouped:
        for (port, host, nic), state, link_runs in links:
            by_link[state] += 1
            for run in link_runs:
                by_run[run["state"]] += 1
            if state not in ("lossless_under_load", "skipped"):
                not_lossless.append("%s %s %s %s: %s" % (tor, port or "-", host, nic or "-", LABELS[state]))
    judged = [s for s in VERDICTS if by_link[s]]
    return {"tors": len(grouped), "links": sum(by_link.values()), "runs": n_runs, "links_by_verdict": by_link,
            "runs_by_verdict": by_run, "verdict": judged[0] if judged else None, "not_lossless": not_lossless}


def _counts_line(counts):
    return "%d links on %d ToRs, %d runs. Links: %s." % (
        counts["links"], counts["tors"], counts["runs"],
        ", ".join("%d %s" % (counts["links_by_verdict"][s], LABELS[s]) for s in STATES))


def _link_name(key):
    port, host, nic = key
    return "%s %s -> %s" % (host, nic or "?", port or "?")


def _tor_title(name, info):
    rails = ", ".join(text(r) for r in info["rails"])
    where = " ".join(p for p in (info["fabric"], ("rail %s" % rails) if rails else "") if p)
    return "%s (%s)" % (name, where) if where else name


def render_markdown(grouped, counts, cluster, generated):
    out = ["# Lossless under load%s" % (": %s" % md_text(cluster) if cluster else ""), ""]
    if generated:
        out += ["Generated %s." % md_text(generated), ""]
    out += [_counts_line(counts), ""]
    if counts["verdict"]:
        out.append("Worst verdict: %s." % LABELS[counts["verdict"]])
    if counts["not_lossless"]:
        out += ["", "Not proven lossless:", ""] + ["- %s" % md_text(item) for item in counts["not_lossless"]]
    out.append("")
    for tor, info, links in grouped:
        out += ["## ToR %s" % md_text(_tor_title(tor, info)), ""]
        rows, skipped = [], []
        for key, _state, link_runs in links:
            for run in link_runs:
                if run["state"] == "skipped":
                    skipped.append("- %s, round %s, priority %s: skipped, because %s." % (
                        md_text(_link_name(key)), md_text(run.get("round")), md_text(run.get("priority")),
                        md_text(run["reason"])))
                    continue
                moved = _moved(run)
                resets = _resets(run)
                counters = "<br>".join([md_text(m) for m in moved] + ["reset: %s" % md_text(r) for r in resets])
                problems = run["verdict"].get("problems") or []
                message = _message(run) + ("".join(" Problem: %s." % p for p in problems) if problems else "")
                rows.append("| %s |" % " | ".join([
                    md_text(_link_name(key)), md_text(", ".join(run["senders"])), md_text(run.get("round")),
                    md_text(run.get("priority")), md_text(run.get("seconds")), LABELS[run["state"]],
                    md_text(message), counters or "none moved"]))
        if rows:
            out += ["| link (receiver NIC -> ToR port) | senders | round | priority | seconds | verdict | message "
                    "| counters moved |", "|---|---|---|---|---|---|---|---|"] + rows + [""]
        if skipped:
            out += skipped + [""]
    return "\n".join(out).rstrip("\n") + "\n"


_CSS = """body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#212529}
h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:20px 0 8px}p{margin:4px 0}
table{border-collapse:collapse;font-size:13px;margin-top:6px}
th,td{border:1px solid #adb5bd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f8f9fa}table.matrix td{min-width:150px;height:44px;cursor:help}
.legend span{display:inline-block;border:1px solid #adb5bd;padding:1px 6px;margin-right:6px;font-size:12px}
td small,th small{color:#495057}.count{font-weight:600}
""" + "".join(".v-%s{background:%s}" % (state, COLOURS[state]) for state in STATES)


def _hover(key, link_runs):
    """The hover text of a link's cell: each run's verdict, message and counters."""
    senders = sorted({s for r in link_runs for s in r["senders"]})
    lines = ["%s (senders: %s)" % (_link_name(key), ", ".join(senders) or "none")]
    for run in link_runs:
        lines.append("round %s, priority %s, %s s: %s" % (text(run.get("round")) or "-",
                                                          text(run.get("priority")) or "-",
                                                          text(run.get("seconds")) or "-", LABELS[run["state"]]))
        lines.append(_message(run))
        if run["state"] != "skipped":
            moved = _moved(run)
            lines.append("moved: %s" % ("; ".join(moved) if moved else "none"))
            if _resets(run):
                lines.append("reset: %s" % "; ".join(_resets(run)))
    return "\n".join(lines)


def render_html(grouped, counts, cluster, generated):
    title = "Lossless under load%s" % (": %s" % html_text(cluster) if cluster else "")
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<title>%s</title>" % title, "<style>%s</style>" % _CSS, "</head>", "<body>", "<h1>%s</h1>" % title]
    if generated:
        out.append("<p>Generated %s.</p>" % html_text(generated))
    out.append('<p class="count">%s</p>' % html_text(_counts_line(counts)))
    out.append('<p class="legend">%s</p>' % "".join('<span class="v-%s">%s</span>' % (s, LABELS[s]) for s in STATES))
    out.append("<p>Hover a link for its runs, messages and the counters that moved.</p>")
    widest = max([len(links) for _tor, _info, links in grouped] or [1])
    out += ['<table class="matrix">',
            '<tr><th>ToR</th><th colspan="%d">links (receiver NIC -&gt; ToR port)</th></tr>' % widest]
    for tor, info, links in grouped:
        rails = ", ".join(text(r) for r in info["rails"])
        where = " ".join(p for p in (info["fabric"], ("rail %s" % rails) if rails else "") if p)
        cells = "".join('<td class="v-%s" title="%s">%s<br><small>%s -&gt; %s</small><br>%s</td>' % (
            state, html_text(_hover(key, link_runs)), html_text(key[1]), html_text(key[2] or "?"),
            html_text(key[0] or "?"), LABELS[state]) for key, state, link_runs in links)
        out.append('<tr><th scope="row">%s<br><small>%s</small></th>%s</tr>'
                   % (html_text(tor), html_text(where), cells))
    out += ["</table>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


def load_report(runs, cluster=None, generated=None):
    """The report of one load test (see the module): ``{"markdown", "html", "summary"}``. ValueError (one line naming
    the run and field) on input that is not a list of runs."""
    checked = _check(runs)
    grouped = _group(checked)
    counts = _summary(grouped, len(checked))
    return {"markdown": render_markdown(grouped, counts, cluster, generated),
            "html": render_html(grouped, counts, cluster, generated), "summary": counts}


def rails_markdown():
    """The plan report's (``rails.md``) section on the load test: where its last report is written. It does not say
    that the report exists: rails.md is written by the plan job, the report later by the load test."""
    return "\n".join(["## Lossless under load", "",
                      "The last run of playbooks/lossless.yml writes its report beside this file: [%s](%s) "
                      "(and %s). Until a run has written it, the link leads nowhere." % (REPORT_MD, REPORT_MD,
                                                                                         REPORT_HTML), ""])
