# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Human-readable views of a rail plan: CSV, Markdown and a Mermaid diagram.

Each function takes the dict returned by ``rail_plan()`` and returns text.
Output is deterministic (rows ordered by node id, then rail), so the files
written from it only change when the plan does. Every name and value goes through its grammar's escaping
function (:mod:`common.report_escape`): no host, fabric or ToR name adds a row, a cell, a link or markup to the
Markdown, a statement to the diagram (whose node ids are numbers, never names) or a formula to the CSV.
"""

from __future__ import annotations

import json
from operator import itemgetter

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.common.report_escape import (
    csv_columns, md_column, md_text, mermaid_id, mermaid_label,
)

COLUMNS = ("host", "node_id", "fabric", "rail", "interface", "address", "subnet", "gateway",
           "table", "priority", "mtu", "tor", "tor_port", "pod_ranges")


def _rows(plan):
    nodes = sorted(plan["nodes"].items(), key=lambda item: item[1]["node_id"])
    for host, node in nodes:
        for entry in node["rails"]:
            yield host, node["node_id"], entry


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def _column(values):
    """:func:`_cell` of each of a column's ``values``: a column of text or of whole numbers converted at once."""
    kinds = set(map(type, values))
    if kinds <= {str}:
        return list(values)
    if kinds == {int}:
        return list(map(str, values))
    if kinds == {list}:
        return [" ".join(map(str, value)) for value in values]
    return [_cell(value) for value in values]


def _columns(plan):
    """The node table's columns (:data:`COLUMNS`), each a list of its cells in :func:`_rows`' order: the host and the
    node id as they are, the rest through :func:`_cell`. Column by column (131,072 rows at 16,384 nodes x 8 rails):
    each row taken by ``itemgetter``, the rows transposed by ``zip``, each column converted at once."""
    take = itemgetter(*COLUMNS[2:])
    rows = []
    try:
        for host, node in sorted(plan["nodes"].items(), key=lambda item: item[1]["node_id"]):
            head = (host, node["node_id"])
            rows.extend([head + take(entry) for entry in node["rails"]])
    except KeyError:  # an entry without some column (a plan not made by rail_plan): None there
        rows = [(host, node_id) + tuple(entry.get(c) for c in COLUMNS[2:]) for host, node_id, entry in _rows(plan)]
    if not rows:
        return [[] for _name in COLUMNS]
    columns = list(zip(*rows))
    return [list(columns[0]), list(columns[1])] + [_column(column) for column in columns[2:]]


def to_csv(plan, columns=None):
    """rails.csv: the node table (:data:`COLUMNS`), one row per node and rail. ``columns``: the plan's
    :func:`_columns`, where the caller has them already."""
    return csv_columns(COLUMNS, columns or _columns(plan))


def _md(value):
    """A Markdown table cell: the value escaped, ``-`` when empty."""
    return md_text(_cell(value)) or "-"


def to_markdown(plan, columns=None):
    """rails.md: the fabrics, the rails and the node table. ``columns``: the plan's :func:`_columns`, where the caller
    has them already."""
    summary = plan["summary"]
    lines = [
        "# Rail plan: %s" % md_text(summary["cluster"]),
        "",
        "%d nodes, %d rails in %d fabric(s), %d ToRs." % (
            summary["nodes"], summary["rails"], len(plan["fabrics"]), summary["tors"]),
        "",
        "## Fabrics",
        "",
        "| fabric | mode | family | supernet | rails | MTU | node id capacity |",
        "|---|---|---|---|---:|---:|---:|",
    ]
    for name, fabric in plan["fabrics"].items():
        lines.append("| %s | %s | %s | %s | %d | %d | %d |" % (
            _md(name), _md(fabric["mode"]), _md(fabric["family"]), _md(fabric["supernet"]), fabric["rails"],
            fabric["mtu"], fabric["max_node_id"]))
    lines += ["", "## Rails", "",
              "| fabric | rail | block | gateway | table | priority | MTU | ToRs |",
              "|---|---:|---|---|---:|---:|---:|---|"]
    for rail in plan["rails"]:
        lines.append("| %s | %d | %s | %s | %s | %s | %d | %s |" % (
            _md(rail["fabric"]), rail["rail"], _md(rail["block"]), _md(rail["gateway"]), _md(rail["table"]),
            _md(rail["priority"]), rail["mtu"], ", ".join(md_text(t) for t in rail["tors"])))
    lines += ["", "## Nodes", "",
              "| " + " | ".join(COLUMNS) + " |",
              "|" + "|".join("---:" if c in ("node_id", "rail", "table", "priority", "mtu") else "---"
                             for c in COLUMNS) + "|"]
    lines += ["| %s |" % " | ".join(row) for row in zip(*(md_column(column, "-") for column in columns or _columns(plan)))]
    lines.append("")
    return "\n".join(lines)


def to_mermaid(plan, max_nodes=64, marks=None):
    """A flowchart of nodes, rails and ToRs.  Large clusters are summarised.

    ``marks``: ``{(host, fabric, rail): text}`` - links drawn dotted and labelled with the text (a cabling
    finding), the plan's ToR still at their end.

    Node ids are numbers in the diagram's order (``tor1``.., ``node1``..), never names, and every label goes
    through :func:`report_escape.mermaid_label`, so no name can close a label or add a statement."""
    marks = marks or {}
    lines = ["flowchart LR"]
    nodes = sorted(plan["nodes"].items(), key=lambda item: item[1]["node_id"])
    shown = nodes[:max_nodes]
    tor_ids = {}
    for name, tor in sorted(plan["tors"].items()):
        tor_ids[name] = mermaid_id("tor", len(tor_ids) + 1)
        rails = ",".join(str(r) for r in tor["rails"])
        lines.append('  %s[["%s<br/>%s rail %s"]]' % (
            tor_ids[name], mermaid_label(name), mermaid_label(tor["fabric"]), mermaid_label(rails)))
    for host, node in shown:  # a ToR the plan's ToRs do not list (a plan not made by rail_plan): a node of its own
        for entry in node["rails"]:
            if entry["tor"] not in tor_ids:
                tor_ids[entry["tor"]] = mermaid_id("tor", len(tor_ids) + 1)
                lines.append('  %s[["%s"]]' % (tor_ids[entry["tor"]], mermaid_label(entry["tor"])))
    node_ids = {}
    for host, node in shown:
        node_ids[host] = mermaid_id("node", len(node_ids) + 1)
        lines.append('  %s("%s<br/>node %d")' % (node_ids[host], mermaid_label(host), node["node_id"]))
    for host, node in shown:
        for entry in node["rails"]:
            label = "%s r%d %s" % (entry["fabric"], entry["rail"], entry["address"])
            if entry.get("interface"):
                label = "%s %s" % (entry["interface"], label)
            mark = marks.get((host, entry["fabric"], entry["rail"]))
            if mark:
                label = "%s: %s" % (label, mark)
            edge = (node_ids[host], mermaid_label(label), tor_ids[entry["tor"]])
            lines.append(('  %s -. "%s" .- %s' if mark else '  %s -- "%s" --- %s') % edge)
    if len(nodes) > len(shown):
        lines.append('  more["... %d more nodes"]' % (len(nodes) - len(shown)))
    lines.append("")
    return "\n".join(lines)


def to_json(plan):
    """plan.json: keys sorted at every depth, one line per entry of each top-level mapping (a node, a ToR) so that a
    diff names the node that changed. Each line is written by json's C encoder (``indent`` would take the pure-Python
    one: 3 s of the plan job at 16,384 nodes)."""
    parts = []
    for key in sorted(plan):
        value = plan[key]
        if isinstance(value, dict) and value:
            inner = ",\n".join("    %s: %s" % (json.dumps(k), json.dumps(v, sort_keys=True))
                               for k, v in sorted(value.items()))
            parts.append("  %s: {\n%s\n  }" % (json.dumps(key), inner))
        else:
            parts.append("  %s: %s" % (json.dumps(key), json.dumps(value, sort_keys=True)))
    return "{\n" + ",\n".join(parts) + "\n}\n"


def summary_line(summary, output_dir=None, lock_name=None, changes=None, checked=None, lock_source=None):
    """The job's one line about the plan (the rail_plan role prints it): the plan's ``summary``; with ``output_dir``,
    where the plan files went; with ``changes`` (``plan_lock.lock_changes``), what the lock ``lock_name`` changes;
    with ``checked`` (a check mode's hosts), how many agree with the published plan ``lock_source``."""
    line = "%s: %d nodes, %d rails in fabric(s) %s (%s, %s), %d ToRs, %d addresses; node ids may go up to %d " \
        "(addressing capacity)" % (summary["cluster"], summary["nodes"], summary["rails"], ", ".join(summary["fabrics"]),
                                   summary["mode"], summary["family"], summary["tors"], summary["addresses"],
                                   summary["max_node_id"])
    if output_dir:
        line += " -> %s" % output_dir
    if changes:
        line += "; lock %s: %d added, %d removed, %d changed%s" % (
            lock_name, len(changes["added"]), len(changes["removed"]), len(changes["changed"]),
            ", model changed" if changes["model"] else "")
    if checked is not None:
        line += "; %d host(s) agree with the published plan (%s)" % (len(checked), lock_source or "none")
    return line


FORMATS = {"csv": to_csv, "markdown": to_markdown, "mermaid": to_mermaid, "json": to_json}


def render(plan, fmt, max_nodes=64, marks=None):
    """The report ``fmt`` (a key of :data:`FORMATS`) of ``plan``; ``max_nodes`` and ``marks`` are the diagram's
    (:func:`to_mermaid`)."""
    return render_all(plan, (fmt,), max_nodes, marks)[fmt]


def render_all(plan, formats, max_nodes=64, marks=None):
    """``{fmt: text}`` of each of ``formats`` (keys of :data:`FORMATS`), as :func:`render` gives them; the node table's
    columns made once for the CSV and the Markdown."""
    for fmt in formats:
        if fmt not in FORMATS:
            raise FabricModelError("format", fmt, "is not a report format", "use one of: %s" % ", ".join(FORMATS))
    if not isinstance(plan, dict) or "nodes" not in plan or "summary" not in plan:
        raise FabricModelError("plan", type(plan).__name__, "is not a rail plan",
                               "pass the result of ainet.fabric.rail_plan")
    columns = _columns(plan) if "csv" in formats and "markdown" in formats else None
    out = {}
    for fmt in formats:
        if fmt == "mermaid":
            out[fmt] = to_mermaid(plan, max_nodes, marks)
        elif fmt in ("csv", "markdown"):
            out[fmt] = FORMATS[fmt](plan, columns)
        else:
            out[fmt] = FORMATS[fmt](plan)
    return out
