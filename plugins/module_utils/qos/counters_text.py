# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the counter parsers share (:mod:`counters_parse` and :mod:`counters_parse_nos`): the read's structure
(:func:`new_counters`, the formats' sides in :data:`SIDES`, which each parser module registers its own formats in),
whole numbers from text and JSON, SONiC's tabulate tables, NVUE's cells, and ``ethtool -S``'s ``name: value`` lines
(read on hosts and on Linux ToRs alike). Nothing here knows a format's counters."""

from __future__ import annotations

import json
import re

# Format -> the side of the link it is read on ("host NIC", "RDMA", "switch"); filled by the parser modules.
SIDES = {}
DEFAULT_PORT = "port"


def new_counters(fmt, ports=None, problems=None):
    return {"format": fmt, "side": SIDES.get(fmt), "ports": ports or {}, "problems": problems or []}


def whole(text):
    text = str(text).strip().replace(",", "")
    return int(text) if re.match(r"^\d+$", text) else None


def signed(text):
    """A whole number that may be printed below 0 (``-13,681,484``), or None."""
    text = str(text).strip().replace(",", "")
    return int(text) if re.match(r"^-?\d+$", text) else None


def parse_ethtool(text, port=None):
    """``ethtool -S <if>``: ``NIC statistics:`` then one ``name: value`` a line."""
    counters, problems = {}, []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.endswith("statistics:"):
            continue
        name, sep, value = stripped.rpartition(":")
        number = whole(value)
        if not sep or number is None or not name.strip():
            problems.append("ethtool_mlx5: cannot read the line %r" % stripped[:120])
            continue
        counters[name.strip()] = number
    if not counters:
        problems.append("ethtool_mlx5: no counter in the output (not `ethtool -S <interface>`?)")
        return new_counters("ethtool_mlx5", problems=problems)
    return new_counters("ethtool_mlx5", {port or DEFAULT_PORT: counters}, problems)


def tables(text):
    """The tabulate tables of a SONiC show command: [(headers, rows)], columns cut at the dashes line."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if i == 0 or not re.match(r"^\s*-+(\s+-+)+\s*$", line):
            continue
        spans = [m.span() for m in re.finditer(r"-+", line)]
        cut = [(spans[j][0] if j == 0 else spans[j - 1][1], spans[j][1]) for j in range(len(spans))]
        cut[0] = (0, cut[0][1])

        def cells(row):
            return [row[a:b].strip() for a, b in cut[:-1]] + [row[cut[-1][0]:].strip()]

        headers = cells(lines[i - 1])
        rows = []
        for row in lines[i + 1:]:
            if not row.strip() or row.startswith("For namespace"):
                break
            rows.append(cells(row))
        out.append((headers, rows))
    return out


def only_port(ports, port, fmt, problems):
    if port is None:
        return ports
    if port not in ports:
        problems.append("%s: port %s is not in the output (ports: %s)" % (fmt, port, ", ".join(sorted(ports)) or "none"))
        return {}
    return {port: ports[port]}


def json_doc(data, fmt, problems):
    """A JSON document (text, a mapping, or eAPI's one-element result list) as a dict, or None with a problem."""
    if isinstance(data, (bytes, str)):
        try:
            data = json.loads(data)
        except ValueError as exc:
            problems.append("%s: not JSON (%s); run the command with `| json`" % (fmt, str(exc).split(":", maxsplit=1)[0]))
            return None
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict):
        problems.append("%s: the JSON is a %s, not the command's object" % (fmt, type(data).__name__))
        return None
    return data


def number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return whole(value) if isinstance(value, str) else None


def flat(node, prefix, counters):
    """Every whole-number leaf under ``node`` as ``prefix.key...``."""
    for key, value in node.items():
        name = "%s.%s" % (prefix, key) if prefix else str(key)
        if isinstance(value, dict):
            flat(value, name, counters)
        elif number(value) is not None:
            counters[name] = number(value)


UNITS = {"bytes": 1, "b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40}


def nv_value(cell):
    """An NVUE cell as a whole number: ``12``, ``0 Bytes``, ``7.29 MB`` (binary units); None for ``n/a``/empty or
    what is not a number."""
    cell = cell.strip()
    number = whole(cell)
    if number is not None:
        return number
    match = re.match(r"^(\d+(?:\.\d+)?)\s*([A-Za-z]+)$", cell)
    if match and match.group(2).lower() in UNITS:
        return int(round(float(match.group(1)) * UNITS[match.group(2).lower()]))
    return None


def nv_name(text):
    return "-".join(text.strip().lower().split())
