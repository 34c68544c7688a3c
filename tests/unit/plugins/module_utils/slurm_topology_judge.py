# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A judge of Slurm topology files that follows Slurm's own parser rules, written apart from the code under test.

Slurm 22.05 (Debian's) loads only ``topology/tree``; the tree is also judged by a real slurmctld
(tests/integration/test_topology_slurm_lab.py). ``topology/block`` and ``topology.yaml`` need a newer Slurm, so this
judge reads them as Slurm does. Rules and where they are (SchedMD/slurm @ 284c3b95f08a, 2026-08-20):

* hostlists (``src/common/hostlist.c``): a list splits at ``,`` outside brackets; ``prefix[ranges]`` expands each
  ``lo-hi`` or ``n`` of the comma-separated ranges, the width of ``lo`` kept (zero padding), ``hi >= lo``;
* ``topology/tree`` (``src/plugins/topology/tree/switch_record.c``: ``_parse_switches``, ``switch_record_validate``):
  a SwitchName longer than ``HOST_NAME_MAX`` (64) is refused; a switch with both Nodes and Switches is refused; a
  name defined twice is fatal; a child that is no switch is fatal ("invalid child"); a node unknown to slurm.conf
  is fatal ("Invalid node name"); a node on several leaves is reported ("Multiple leaf switches contain nodes", an
  error in 22.05's ``topology_tree.c``), here a violation; a switch with two parents is "not a tree";
* ``topology/block`` (``src/plugins/topology/block/block_record.c``: ``_read_topo_file``, ``block_record_validate``):
  ``BlockSizes`` values are positive, the first is the base block node count, each a multiple of it whose quotient
  is a power of two of level at most 15 (``MAX_BLOCK_LEVELS`` 16); a block name defined twice is fatal; a name
  without nodes is an empty block; aggregated names are read back as hostlists; ``doc/man/man5/topology.conf.5``:
  "Each block must have at least the planning base block size count of nodes", "Successive BlockSizes must be a
  power of two larger than the prior values";
* ``topology.yaml`` (``doc/man/man5/topology.yaml.5``): a list of topologies, ``topology`` first and unique, exactly
  one of ``block``, ``flat``, ``ring``, ``torus3d``, ``tree``; a switch name at most 64 characters.
"""

from __future__ import annotations

import re

HOST_NAME_MAX = 64
MAX_BLOCK_LEVELS = 16
KINDS = ("block", "flat", "ring", "torus3d", "tree")


def split_top(text):
    """Split at commas outside brackets (hostlist.c's list delimiter)."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "[":
            if depth:
                raise ValueError("nested bracket in %r" % text)
            depth += 1
        elif char == "]":
            if not depth:
                raise ValueError("unbalanced bracket in %r" % text)
            depth -= 1
        if char == "," and not depth:
            parts.append(current)
            current = ""
        else:
            current += char
    if depth:
        raise ValueError("unbalanced bracket in %r" % text)
    parts.append(current)
    return [p for p in parts if p]


def expand(text):
    """Every name of a hostlist expression, in order."""
    names = []
    for item in split_top(text):
        match = re.match(r"^([^\[\]]*)\[([^\[\]]+)\]([^\[\]]*)\Z", item)
        if not match:
            if "[" in item or "]" in item:
                raise ValueError("bad range in %r" % item)
            names.append(item)
            continue
        prefix, ranges, suffix = match.groups()
        for part in ranges.split(","):
            lo, _sep, hi = part.partition("-")
            if not lo.isdigit() or (hi and not hi.isdigit()):
                raise ValueError("bad range %r in %r" % (part, item))
            hi = hi or lo
            if int(hi) < int(lo):
                raise ValueError("range %r ends before it starts" % part)
            for number in range(int(lo), int(hi) + 1):
                names.append("%s%0*d%s" % (prefix, len(lo), number, suffix))
    return names


def _pairs(line):
    """``Key=value`` pairs of a config line (Slurm's s_p_parse_line reads key=value words)."""
    out = []
    for word in line.split():
        key, sep, value = word.partition("=")
        if not sep:
            raise ValueError("%r is no key=value" % word)
        out.append((key, value))
    return out


def _lines(text):
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            yield line


def judge_tree(text, known_nodes):
    """``(switches, violations)``: ``{name: {"nodes": [...], "switches": [...]}}`` of a tree topology.conf."""
    switches, violations = {}, []
    for line in _lines(text):
        pairs = dict(_pairs(line))
        name = pairs.get("SwitchName")
        if name is None:
            violations.append("line without SwitchName: %s" % line)
            continue
        if len(name) > HOST_NAME_MAX:
            violations.append("SwitchName (%s) must be shorter than %d chars" % (name, HOST_NAME_MAX))
        if "Nodes" in pairs and "Switches" in pairs:
            violations.append("switch %s has both child switches and nodes" % name)
        if name in switches:
            violations.append("Switch (%s) has already been defined" % name)
        nodes = expand(pairs["Nodes"]) if pairs.get("Nodes") else []
        children = expand(pairs["Switches"]) if pairs.get("Switches") else []
        unknown = [n for n in nodes if n not in known_nodes]
        if unknown:
            violations.append("Invalid node name (%s) in switch config (%s)" % (",".join(unknown), name))
        switches[name] = {"nodes": nodes, "switches": children}
    parents = {}
    for name, switch in switches.items():
        for child in switch["switches"]:
            if child not in switches:
                violations.append("Switch configuration %s has invalid child (%s)" % (name, child))
            elif child in parents:
                violations.append("Switch configuration is not a tree (%s under %s and %s)"
                                  % (child, parents[child], name))
            parents[child] = name
    leaves = {}
    for name, switch in switches.items():
        for node in switch["nodes"]:
            leaves.setdefault(node, []).append(name)
    multi = sorted(n for n, names in leaves.items() if len(names) > 1)
    if multi:
        violations.append("Multiple leaf switches contain nodes: %s" % ",".join(multi))
    return switches, violations


def judge_block(text, known_nodes):
    """``(blocks, sizes, violations)``: ``[(name, [nodes])]`` in file order and BlockSizes of a block topology.conf.

    Relaxed on purpose: ``topology.conf.5`` says "Each block must have at least the planning base block size count
    of nodes", but this judge holds only blocks *with* nodes to it, and lets an empty block (``BlockName=`` without
    ``Nodes=``, the padding that keeps aggregates inside one spine block) pass. Slurm's code accepts such a block:
    ``block_record_validate`` (``src/plugins/topology/block/block_record.c``) takes the branch without nodes and
    keeps the block with an empty node bitmap, and ``topology_p_get_fragmentation``
    (``topology_block.c``) merely counts it as fragmented, the same constant for every job. topograph's
    ``pkg/translate/block_complement.go`` pads blocks to a tree shape the same way."""
    blocks, sizes, violations, names = [], [], [], set()
    for line in _lines(text):
        pairs = _pairs(line)
        key, value = pairs[0]
        if key == "BlockSizes":
            base = None
            for word in value.split(","):
                size = int(word) if word.strip().lstrip("-").isdigit() else 0
                if size <= 0:
                    violations.append("Invalid BlockSizes value: %s" % word)
                    break
                base = base or size
                level = size // base
                if size % base or level & (level - 1) or level.bit_length() - 1 >= MAX_BLOCK_LEVELS:
                    violations.append("Invalid BlockSizes value: %s" % word)
                    break
                if sizes and size <= sizes[-1]:
                    violations.append("BlockSizes %s is not larger than the prior %d" % (word, sizes[-1]))
                sizes.append(size)
            continue
        if key != "BlockName":
            violations.append("unknown key %s" % key)
            continue
        if value in names:
            violations.append("Block (%s) has already been defined" % value)
        names.add(value)
        try:
            if expand(value) != [value]:
                violations.append("Invalid BlockName: %s (read as a hostlist)" % value)
        except ValueError as exc:
            violations.append("Invalid BlockName: %s (%s)" % (value, exc))
        nodes = expand(dict(pairs[1:]).get("Nodes") or "")
        unknown = [n for n in nodes if n not in known_nodes]
        if unknown:
            violations.append("Invalid node name (%s) in block config (%s)" % (",".join(unknown), value))
        blocks.append((value, nodes))
    if not blocks:
        violations.append("No blocks configured")
    if sizes:
        short = [n for n, nodes in blocks if nodes and len(nodes) < sizes[0]]
        if short:
            violations.append("blocks with fewer nodes than the base block size %d: %s" % (sizes[0], ",".join(short)))
    return blocks, sizes, violations


def aggregates(blocks, sizes):
    """The aggregated blocks Slurm builds (block_record.c: block ``i`` starts an aggregate of level ``j`` when
    ``i % 2**j == 0``, unless too few blocks remain): ``{level: [[block names], ...]}``."""
    base = sizes[0]
    levels = [s // base for s in sizes]
    out = {}
    count = len(blocks)
    for j in range(1, len(levels)):
        size = levels[j]
        groups = []
        for i in range(0, count, size):
            if size > count - i and levels[j - 1] >= count - i:
                continue
            groups.append([n for n, _nodes in blocks[i:i + size]])
        out[size] = groups
    return out


def judge_yaml(doc, known_nodes):
    """Violations of a parsed topology.yaml (a list of topologies)."""
    violations = []
    if not isinstance(doc, list):
        return ["topology.yaml is not a list of topologies"]
    seen = set()
    for index, entry in enumerate(doc):
        if not isinstance(entry, dict) or not entry or list(entry)[0] != "topology":
            violations.append("topology %d: 'topology' must be the first attribute" % index)
            continue
        name = entry["topology"]
        if name in seen:
            violations.append("topology %s defined twice" % name)
        seen.add(name)
        kinds = [k for k in KINDS if k in entry]
        if len(kinds) != 1:
            violations.append("topology %s: exactly one of %s, got %s" % (name, ", ".join(KINDS), kinds))
            continue
        if not isinstance(entry.get("cluster_default", False), bool):
            violations.append("topology %s: cluster_default is not a boolean" % name)
        body = entry[kinds[0]]
        if kinds[0] == "tree":
            lines = []
            for switch in body.get("switches") or []:
                if "switch" not in switch:
                    violations.append("topology %s: a switch without its name" % name)
                    continue
                line = "SwitchName=%s" % switch["switch"]
                if "nodes" in switch:
                    line += " Nodes=%s" % switch["nodes"]
                if "children" in switch:
                    line += " Switches=%s" % switch["children"]
                lines.append(line)
            violations += ["topology %s: %s" % (name, v) for v in judge_tree("\n".join(lines), known_nodes)[1]]
        elif kinds[0] == "block":
            lines = []
            for block in body.get("blocks") or []:
                if "block" not in block:
                    violations.append("topology %s: a block without its name" % name)
                    continue
                lines.append("BlockName=%s" % block["block"] + (" Nodes=%s" % block["nodes"] if block.get("nodes")
                                                                else ""))
            lines.append("BlockSizes=%s" % ",".join(str(s) for s in body.get("block_sizes") or []))
            violations += ["topology %s: %s" % (name, v) for v in judge_block("\n".join(lines), known_nodes)[2]]
    return violations
