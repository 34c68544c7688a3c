# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a ToR's running configuration lacks of its rendered one.

A rendered configuration is a *subset* of the switch's: the switch also holds what other tools and
people configured (uplinks, management, users, BGP). So the diff lists only what the rendered file
states and the running configuration does not hold, never what the switch has beyond it:

* ``tree_diff(desired, running)``: nested mappings (a SONiC config_db fragment against the running
  config_db, an NVUE ``set`` body against ``nv config show``): one ``{"path", "before", "after"}``
  per leaf of ``desired`` that ``running`` lacks or holds with another value (``before`` None: absent).
  Values compare as strings, since config_db is all strings and NVUE prints numbers bare.
* ``eos_diff(running, rendered)``: EOS CLI: per configuration block (``interface Ethernet1``,
  ``qos profile X`` and its ``tx-queue`` sub-blocks; top-level lines are the block ``""``) the
  rendered lines the running block lacks, as ``{"path": "interface Ethernet1", "before": None,
  "after": "mtu 9214"}``. A rendered line that the running block holds with another value (``mtu
  9000``) has that line as ``before``.
* ``stale_ports(platform, running_text, rendered)``: ports the running configuration still describes
  with this collection's marker (``[ainet]``) but the rendered one no longer has: what a run owns and
  no longer wants.
* ``running_diff(platform, running_text, rendered)`` picks the one for the platform, parsing the
  running text (JSON, the YAML of ``nv config show -o yaml`` or an ``nv config apply`` file, CLI),
  and ``diff_text(items)`` prints the items one per line for ``--diff``.
"""

from __future__ import annotations

import json
import re

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse_nvue import nvue_config
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


def _blocks(text):
    """EOS CLI -> {block path: [lines]}; a block path joins the headers above a line with ' / '."""
    blocks = {"": []}
    stack = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("!"):
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 3
        body = line.strip()
        del stack[depth:]
        parent = " / ".join(stack)
        blocks.setdefault(parent, []).append(body)
        stack.append(body)
        blocks.setdefault(" / ".join(stack), [])
    return blocks


def _keyword(line):
    """The part of an EOS line that names the setting (``mtu 9214`` -> ``mtu``)."""
    words = line.split()
    if words[0] == "no":
        words = words[1:]
    head = [w for w in words if not re.match(r"^[0-9.:/]+$", w)]
    return " ".join(head[:2]) if head else line


def eos_diff(running, rendered):
    """Rendered EOS lines the running configuration lacks, per block (see the module docstring)."""
    have = _blocks(running or "")
    out = []
    for block, lines in _blocks(rendered).items():
        current = have.get(block)
        for line in lines:
            if current is not None and line in current:
                continue
            before = None
            if current is not None:
                same = [c for c in current if _keyword(c) == _keyword(line) and c not in lines]
                before = same[0] if same else None
            out.append({"path": (block,) if block else (), "before": before, "after": line})
    return out


def _nvue_tree(text):
    """The merged ``set`` tree of an NVUE configuration, read as the NVUE QoS parser reads it."""
    problems = []
    tree = nvue_config(text, problems)
    if tree is None:
        raise ValueError("; ".join(problems))
    return tree


def running_diff(platform, running_text, rendered):
    """Diff items of a rendered file (:func:`tor_render.render_tor`) against a running configuration."""
    if platform == "sonic":
        running = json.loads(running_text) if running_text.strip() else {}
        return tree_diff(rendered["data"], running)
    if platform == "cumulus":
        return tree_diff(rendered["data"], _nvue_tree(running_text) if running_text.strip() else {})
    if platform == "eos":
        return eos_diff(running_text, rendered["text"])
    raise ValueError("no diff for platform %r" % (platform,))


def diff_text(items):
    """One line per item: ``path: before -> after`` (``+ path: after`` for what is absent)."""
    lines = []
    for item in items:
        path = " ".join(item["path"])
        after = json.dumps(item["after"]) if isinstance(item["after"], (dict, list)) else item["after"]
        if item["before"] is None:
            lines.append("+ %s%s%s" % (path, ": " if path else "", after))
        else:
            lines.append("~ %s%s%s -> %s" % (path, ": " if path else "", item["before"], after))
    return "\n".join(lines) + ("\n" if lines else "")


def stale_ports(platform, running_text, rendered):
    """Ports of the running configuration that carry this collection's description marker but are not
    in the rendered configuration (a node left the plan, a ToR was renumbered): objects this collection
    created and no longer wants. Sorted port names."""
    if not running_text or not running_text.strip():
        return []
    if platform == "sonic":
        ports = {name: (fields or {}).get("description") for name, fields in
                 (json.loads(running_text).get("PORT") or {}).items()}
        wanted = set(rendered["data"].get("PORT") or {})
    elif platform == "cumulus":
        ports = {name: (conf or {}).get("description") for name, conf in
                 (_nvue_tree(running_text).get("interface") or {}).items() if isinstance(conf, dict)}
        wanted = set(rendered["data"].get("interface") or {})
    elif platform == "eos":
        ports = {}
        for block, lines in _blocks(running_text).items():
            if block.startswith("interface ") and " / " not in block:
                ports[block[len("interface "):]] = next((line[len("description "):] for line in lines
                                                         if line.startswith("description ")), None)
        wanted = {b[len("interface "):] for b in _blocks(rendered["text"]) if b.startswith("interface ")}
    else:
        raise ValueError("no diff for platform %r" % (platform,))
    return sorted((p for p, text in ports.items() if is_owned(text) and p not in wanted), key=_port_key)


def _port_key(name):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]
