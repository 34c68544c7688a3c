# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Human-readable views of a rail plan: CSV, Markdown and a Mermaid diagram.

Each function takes the dict returned by ``rail_plan()`` and returns text.
Output is deterministic (rows ordered by node id, then rail), so the files
written from it only change when the plan does.
"""

from __future__ import annotations

import csv
import io
import json
import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError

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


def to_csv(plan):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for host, node_id, entry in _rows(plan):
        writer.writerow([host, node_id] + [_cell(entry.get(c)) for c in COLUMNS[2:]])
    return out.getvalue()


def _md_escape(text):
    return text.replace("|", "\\|")


def to_markdown(plan):
    summary = plan["summary"]
    lines = [
        "# Rail plan: %s" % summary["cluster"],
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
            name, fabric["mode"], fabric["family"], fabric["supernet"], fabric["rails"], fabric["mtu"],
            fabric["max_node_id"]))
    lines += ["", "## Rails", "",
              "| fabric | rail | block | gateway | table | priority | MTU | ToRs |",
              "|---|---:|---|---|---:|---:|---:|---|"]
    for rail in plan["rails"]:
        lines.append("| %s | %d | %s | %s | %s | %s | %d | %s |" % (
            rail["fabric"], rail["rail"], rail["block"], _cell(rail["gateway"]) or "-",
            _cell(rail["table"]) or "-", _cell(rail["priority"]) or "-", rail["mtu"], ", ".join(rail["tors"])))
    lines += ["", "## Nodes", "",
              "| " + " | ".join(COLUMNS) + " |",
              "|" + "|".join("---:" if c in ("node_id", "rail", "table", "priority", "mtu") else "---"
                             for c in COLUMNS) + "|"]
    for host, node_id, entry in _rows(plan):
        cells = [host, str(node_id)] + [_cell(entry.get(c)) for c in COLUMNS[2:]]
        lines.append("| " + " | ".join(_md_escape(c) or "-" for c in cells) + " |")
    lines.append("")
    return "\n".join(lines)


def _mermaid_id(prefix, text):
    return prefix + re.sub(r"[^A-Za-z0-9_]", "_", str(text))


def to_mermaid(plan, max_nodes=64, marks=None):
    """A flowchart of nodes, rails and ToRs.  Large clusters are summarised.

    ``marks``: ``{(host, fabric, rail): text}`` - links drawn dotted and labelled with the text (a cabling
    finding), the plan's ToR still at their end."""
    marks = marks or {}
    lines = ["flowchart LR"]
    nodes = sorted(plan["nodes"].items(), key=lambda item: item[1]["node_id"])
    shown = nodes[:max_nodes]
    for name, tor in sorted(plan["tors"].items()):
        rails = ",".join(str(r) for r in tor["rails"])
        lines.append('  %s[["%s<br/>%s rail %s"]]' % (_mermaid_id("tor_", name), name, tor["fabric"], rails))
    for host, node in shown:
        lines.append('  %s("%s<br/>node %d")' % (_mermaid_id("node_", host), host, node["node_id"]))
    for host, node in shown:
        for entry in node["rails"]:
            label = "%s r%d %s" % (entry["fabric"], entry["rail"], entry["address"])
            if entry.get("interface"):
                label = "%s %s" % (entry["interface"], label)
            mark = marks.get((host, entry["fabric"], entry["rail"]))
            if mark:
                label = "%s: %s" % (label, mark.replace('"', "'"))
            edge = (_mermaid_id("node_", host), label, _mermaid_id("tor_", entry["tor"]))
            lines.append(('  %s -. "%s" .- %s' if mark else '  %s -- "%s" --- %s') % edge)
    if len(nodes) > len(shown):
        lines.append('  more["... %d more nodes"]' % (len(nodes) - len(shown)))
    lines.append("")
    return "\n".join(lines)


def to_json(plan):
    return json.dumps(plan, indent=2, sort_keys=True) + "\n"


FORMATS = {"csv": to_csv, "markdown": to_markdown, "mermaid": to_mermaid, "json": to_json}


def render(plan, fmt, max_nodes=64, marks=None):
    if fmt not in FORMATS:
        raise FabricModelError("format", fmt, "is not a report format", "use one of: %s" % ", ".join(FORMATS))
    if not isinstance(plan, dict) or "nodes" not in plan or "summary" not in plan:
        raise FabricModelError("plan", type(plan).__name__, "is not a rail plan",
                               "pass the result of ainet.fabric.rail_plan")
    if fmt == "mermaid":
        return to_mermaid(plan, max_nodes, marks)
    return FORMATS[fmt](plan)
