# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a ToR's running configuration lacks of its rendered one: the comparisons the NOS modules share.

A rendered configuration is a *subset* of the switch's: the switch also holds what other tools and
people configured (uplinks, management, users, BGP). So a diff lists only what the rendered file
states and the running configuration does not hold, never what the switch has beyond it:

* ``tree_diff(desired, running)``: nested mappings (a SONiC config_db fragment against the running
  config_db, an NVUE ``set`` body against ``nv config show``): one ``{"path", "before", "after"}``
  per leaf of ``desired`` that ``running`` lacks or holds with another value (``before`` None: absent).
  Values compare as strings, since config_db is all strings and NVUE prints numbers bare.
* ``cli_diff(running, rendered, indent)``: an indented CLI (EOS: 3 spaces a level, NX-OS: 2): per
  configuration block (``interface Ethernet1``, ``qos profile X`` and its ``tx-queue`` sub-blocks;
  top-level lines are the block ``""``) the rendered lines the running block lacks, as ``{"path":
  ("interface Ethernet1",), "before": None, "after": "mtu 9214"}``. A rendered line that the running
  block holds with another value (``mtu 9000``) has that line as ``before``. ``cli_blocks`` is the
  block reader, ``cli_port_descriptions`` the ports' descriptions of a CLI text.
* ``diff_text(items)`` prints the items one per line for ``--diff``; ``owned_stale(ports, wanted)``
  sorts the ports that carry this collection's marker but are not wanted any more.

Which comparison a platform uses is its NOS module's business (:mod:`platforms`).
"""

from __future__ import annotations

import json
import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.report_escape import one_line
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import is_owned


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return None if value is None else str(value)


def tree_diff(desired, running, path=()):
    """Leaves of ``desired`` missing from or different in ``running`` (see the module docstring)."""
    out = []
    running = running if isinstance(running, dict) else {}
    for key in sorted(desired, key=str):
        want = desired[key]
        here = path + (str(key),)
        have = running.get(key, running.get(str(key)))
        if isinstance(want, dict):
            if not want:
                if have is None:
                    out.append({"path": here, "before": None, "after": {}})
                continue
            out.extend(tree_diff(want, have, here))
        elif _text(have) != _text(want):
            out.append({"path": here, "before": have, "after": want})
    return out


def lookup(tree, path):
    """The value at ``path`` (a tuple of keys) in nested mappings, or None."""
    for key in path:
        if not isinstance(tree, dict) or key not in tree:
            return None
        tree = tree[key]
    return tree


def cli_blocks(text, indent):
    """Indented CLI -> {block path: [lines]}; a block path joins the headers above a line with ' / '.
    ``indent`` is the number of spaces a level; ``!`` comments and blank lines are skipped."""
    blocks = {"": []}
    stack = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("!"):
            continue
        depth = (len(line) - len(line.lstrip(" "))) // indent
        body = line.strip()
        del stack[depth:]
        parent = " / ".join(stack)
        blocks.setdefault(parent, []).append(body)
        stack.append(body)
        blocks.setdefault(" / ".join(stack), [])
    return blocks


def _keyword(line):
    """The part of a CLI line that names the setting (``mtu 9214`` -> ``mtu``)."""
    words = line.split()
    if words[0] == "no":
        words = words[1:]
    head = [w for w in words if not re.match(r"^[0-9.:/]+$", w)]
    return " ".join(head[:2]) if head else line


def cli_diff(running, rendered, indent, satisfied=None):
    """Rendered CLI lines the running configuration lacks, per block (see the module docstring).

    ``satisfied(line, running_block_lines)``, when given, says that a NOS prints a rendered line's
    setting another way (a default it leaves out of its running configuration)."""
    have = cli_blocks(running or "", indent)
    out = []
    for block, lines in cli_blocks(rendered, indent).items():
        current = have.get(block)
        for line in lines:
            if current is not None and (line in current or (satisfied and satisfied(line, current))):
                continue
            before = None
            if current is not None:
                same = [c for c in current if _keyword(c) == _keyword(line) and c not in lines]
                before = same[0] if same else None
            out.append({"path": (block,) if block else (), "before": before, "after": line})
    return out


def cli_port_descriptions(text, indent):
    """{interface: description or None} of the top-level ``interface`` blocks of a CLI text."""
    ports = {}
    for block, lines in cli_blocks(text, indent).items():
        if block.startswith("interface ") and " / " not in block:
            ports[block[len("interface "):]] = next((line[len("description "):] for line in lines
                                                     if line.startswith("description ")), None)
    return ports


def owned_stale(ports, wanted):
    """Sorted names of ``ports`` ({name: description}) that carry the marker and are not ``wanted``."""
    return sorted((p for p, text in ports.items() if is_owned(text) and p not in wanted), key=port_key)


def diff_text(items):
    """One line per item: ``path: before -> after`` (``+ path: after`` for what is absent). Each part is
    :func:`report_escape.one_line`: what the switch's running configuration holds cannot add a line to the diff."""
    lines = []
    for item in items:
        path = one_line(" ".join(item["path"]))
        after = one_line(json.dumps(item["after"]) if isinstance(item["after"], (dict, list)) else item["after"])
        if item["before"] is None:
            lines.append("+ %s%s%s" % (path, ": " if path else "", after))
        else:
            lines.append("~ %s%s%s -> %s" % (path, ": " if path else "", one_line(item["before"]), after))
    return "\n".join(lines) + ("\n" if lines else "")


def port_key(name):
    """Sort key of a port name: numbers as numbers (``Ethernet2`` before ``Ethernet10``)."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]
