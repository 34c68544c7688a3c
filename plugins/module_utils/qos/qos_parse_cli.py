# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared helpers for reading indented switch running-configs (Arista EOS, Cisco NX-OS, Dell OS10).

* :func:`split_blocks` turns the text into a tree of :class:`Block` (a line with its more-indented
  children). Lines that are empty, comments (``!``, ``!!``, ``#``) or ``exit``/``end`` are skipped;
  tabs count as 8 columns; trailing blanks are dropped.
* :func:`expand_interfaces` reads an interface name or RANGE (``Ethernet1/1-4``,
  ``ethernet 1/1/1-1/1/4``, ``range ethernet 1/1/1-1/1/4,1/1/10``, ``Ethernet1-4,7``,
  ``Ethernet 1/1-1/54``, breakout ``1/1/1:1-1/1/1:4``) into canonical names:
  EOS ``Ethernet1/1``, NX-OS ``Ethernet1/1`` and OS10 ``ethernet1/1/1``.
* :func:`interface_lines` collects, per Ethernet interface, the children of every block that names
  it, in configuration order, so that a later block (or a later line) overrides or adds to an
  earlier one - the way the CLI applies them.

* :func:`partial_reason` tells a visibly partial running-config (the ``! Command: show running-config
  interfaces Ethernet1`` header of a section) from a whole one, whose omissions state the NOS defaults.

Nothing here raises on bad input: callers get ``ValueError`` from :func:`expand_interfaces` and
:func:`to_bytes` only, and turn it into a line in ``problems``.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import DSCP_NAMES as COMMON_DSCP_NAMES
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import int_list, new_facts

COMMENT_PREFIXES = ("!", "#")
SKIP_WORDS = ("exit", "end")

_TYPE_ALIASES = {
    "eos": (("ethernet", "et", "eth"), "Ethernet"),
    "nxos": (("ethernet", "eth", "e"), "Ethernet"),
    "os10": (("ethernet", "eth"), "ethernet"),
}


class Block(object):
    """One configuration line (``text``, 1-based ``lineno``) and its indented ``children``."""

    __slots__ = ("text", "lineno", "indent", "children")

    def __init__(self, text, lineno, indent):
        self.text = text
        self.lineno = lineno
        self.indent = indent
        self.children = []

    @property
    def words(self):
        return self.text.split()

    def __repr__(self):
        return "Block(%r, line %d, %d children)" % (self.text, self.lineno, len(self.children))


def split_blocks(text):
    """The top-level :class:`Block` list of ``text`` (a running-config)."""
    roots = []
    stack = []
    if not isinstance(text, str):
        return roots
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.expandtabs(8).rstrip()
        body = line.strip()
        if not body or body.startswith(COMMENT_PREFIXES) or body.lower() in SKIP_WORDS:
            continue
        indent = len(line) - len(line.lstrip(" "))
        block = Block(body, number, indent)
        while stack and stack[-1].indent >= indent:
            stack.pop()
        if stack:
            stack[-1].children.append(block)
        else:
            roots.append(block)
        stack.append(block)
    return roots


def find_blocks(blocks, *words):
    """The blocks whose first words (case-insensitive) are ``words``."""
    want = [w.lower() for w in words]
    out = []
    for block in blocks:
        have = [w.lower() for w in block.words[:len(want)]]
        if have == want:
            out.append(block)
    return out


def starts(words, *prefix):
    """``words`` begins with ``prefix`` (case-insensitive)."""
    if len(words) < len(prefix):
        return False
    return all(a.lower() == b.lower() for a, b in zip(words, prefix))


def _split_type(item, style):
    """``"Ethernet1/1"`` -> ``("ethernet", "1/1")``; ``"1/1"`` -> ``(None, "1/1")``."""
    match = re.match(r"^([A-Za-z][A-Za-z-]*)\s*(.*)$", item.strip())
    if not match:
        return None, item.strip()
    return match.group(1).lower(), match.group(2).strip()


def _parts(path):
    """``"1/1/1:2"`` -> ``[1, 1, 1]`` and subport ``2`` (or None)."""
    sub = None
    if ":" in path:
        path, sub_text = path.split(":", 1)
        if not sub_text.isdigit():
            raise ValueError("bad sub-port in %r" % path)
        sub = int(sub_text)
    numbers = path.split("/")
    if not all(n.isdigit() for n in numbers):
        raise ValueError("bad interface number %r" % path)
    return [int(n) for n in numbers], sub


def _fmt(numbers, sub):
    text = "/".join(str(n) for n in numbers)
    return text if sub is None else "%s:%d" % (text, sub)


def _expand_item(item, previous):
    """One comma-separated item (``1/1-4``, ``1/1/1-1/1/4``, ``7``) -> list of number strings."""
    item = item.strip()
    if "-" in item:
        low, high = [x.strip() for x in item.split("-", 1)]
    else:
        low, high = item, None
    low_nums, low_sub = _parts(low)
    if previous is not None and len(low_nums) < len(previous) and low_sub is None:
        low_nums = previous[:len(previous) - len(low_nums)] + low_nums
    if high is None:
        return [_fmt(low_nums, low_sub)], low_nums
    high_nums, high_sub = _parts(high)
    if low_sub is not None or high_sub is not None:
        if len(high_nums) == 1 and high_sub is None:
            # 1/1/1:1-4: a range of sub-ports
            high_nums, high_sub = low_nums, high_nums[0]
        if high_nums != low_nums or low_sub is None or high_sub is None or high_sub < low_sub:
            raise ValueError("unsupported breakout range %r" % item)
        return [_fmt(low_nums, s) for s in range(low_sub, high_sub + 1)], low_nums
    if len(high_nums) < len(low_nums):
        high_nums = low_nums[:len(low_nums) - len(high_nums)] + high_nums
    if len(high_nums) != len(low_nums) or high_nums[:-1] != low_nums[:-1] or high_nums[-1] < low_nums[-1]:
        raise ValueError("unsupported interface range %r" % item)
    if high_nums[-1] - low_nums[-1] > 4096:
        raise ValueError("interface range %r is too large" % item)
    prefix = low_nums[:-1]
    return [_fmt(prefix + [n], None) for n in range(low_nums[-1], high_nums[-1] + 1)], low_nums


def normalize_interface(name, style):
    """Canonical name of one Ethernet interface (``"Et1"`` -> ``"Ethernet1"``, ``"ethernet 1/1/1"``
    -> ``"ethernet1/1/1"``), or None when it is not an Ethernet interface (port-channel, vlan...).
    Raises ValueError when it names Ethernet but the number is unreadable."""
    names = expand_interfaces(name, style)
    if names is None:
        return None
    if len(names) != 1:
        raise ValueError("%r names %d interfaces" % (name, len(names)))
    return names[0]


def expand_interfaces(spec, style):
    """The canonical Ethernet names in an interface spec (the words after ``interface``, with or
    without a leading ``range``), in order and without repeats; None when the spec names
    another kind of interface. Raises ValueError on an unreadable Ethernet spec."""
    aliases, canonical = _TYPE_ALIASES[style]
    text = spec.strip()
    if text.lower() == "range" or text.lower().startswith("range "):
        text = text[5:].strip()
        if not text:
            raise ValueError("empty interface range")
    out = []
    kind_seen = None
    previous = None
    for item in [x for x in text.split(",") if x.strip()]:
        kind, numbers = _split_type(item, style)
        if kind is None:
            kind = kind_seen
        if kind is None:
            raise ValueError("interface spec %r has no type" % spec)
        if kind not in aliases:
            if kind.startswith("ethernet"):
                raise ValueError("interface spec %r has a bad number" % spec)
            if kind_seen is None and not out:
                return None
            raise ValueError("interface spec %r mixes interface types" % spec)
        kind_seen = kind
        if "." in numbers and not out:
            return None  # a sub-interface (Ethernet8.101): no port settings of its own
        if not numbers:
            raise ValueError("interface spec %r has no number" % spec)
        expanded, previous = _expand_item(numbers.replace(" ", ""), previous)
        for number in expanded:
            name = canonical + number
            if name not in out:
                out.append(name)
    if not out:
        raise ValueError("interface spec %r names nothing" % spec)
    return out


def interface_lines(blocks, style, problems):
    """``{name: [Block, ...]}`` - the child lines of every ``interface`` block naming each Ethernet
    interface, in configuration order (so later lines win), with ranges expanded."""
    ports = {}
    for block in find_blocks(blocks, "interface"):
        spec = block.text.split(None, 1)[1] if len(block.words) > 1 else ""
        try:
            names = expand_interfaces(spec, style)
        except ValueError as exc:
            problems.append("line %d: cannot read interface %r (%s)" % (block.lineno, spec, exc))
            continue
        if names is None:
            continue
        for name in names:
            ports.setdefault(name, []).extend(block.children)
    return ports


def sort_key(name):
    """Natural sort key for interface names (``Ethernet2`` before ``Ethernet10``)."""
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name)]


_UNITS = {"bytes": 1, "byte": 1, "kbytes": 1024, "kbyte": 1024, "kb": 1024, "mbytes": 1024 * 1024,
          "mbyte": 1024 * 1024, "mb": 1024 * 1024}


def to_bytes(value, unit):
    """``(150, "kbytes")`` -> ``153600``. A kbyte is 1024 bytes. Returns None for units that are not
    sizes (``segments``, ``milliseconds``, ``microseconds``, whose byte size depends on the
    platform). Raises ValueError on a bad number."""
    number = int(value)
    factor = _UNITS.get((unit or "").lower())
    if factor is None:
        return None
    return number * factor


def threshold_unit(unit):
    """The ``ecn_unit`` (``qos_facts``) of a threshold stated in ``unit``: the bytes one unit is worth (``kbytes`` ->
    1024), or the unit's name (``"segments"``) when it is not a size; None when no unit is given."""
    name = (unit or "").lower()
    return _UNITS.get(name, name or None)


def block_problem(block, what):
    """A problem line naming the configuration line."""
    return "line %d: %s (%r)" % (block.lineno, what, block.text)


# The common names, plus "default" as the CLIs write DSCP 0.
DSCP_NAMES = dict(COMMON_DSCP_NAMES, default=0)


def dscp_list(words):
    """DSCP values in ``words`` (``["24-26,", "af41", "46"]`` -> ``[24, 25, 26, 34, 46]``).
    Raises ValueError on a value that is neither a number, a range nor a DSCP name."""
    out = set()
    for word in " ".join(words).replace(",", " ").split():
        low = word.lower()
        if low in DSCP_NAMES:
            out.add(DSCP_NAMES[low])
            continue
        for value in int_list(word):
            if value > 63:
                raise ValueError("DSCP %d is out of range" % value)
            out.add(value)
    return sorted(out)


# The header line EOS ("! Command: show running-config") and NX-OS ("!Command: show running-config") print
# first; what follows "running-config" names a section or a filter of a partial output.
_COMMAND_HEADER = re.compile(r"^\s*!\s*Command:\s*show\s+(running|startup)-config\b(.*)$", re.I)
# Words of a "show running-config" header that still print the whole configuration: "all" (with the
# defaults), "sanitized" (secrets masked: Cisco NX-OS Fundamentals Configuration Guide, "Verifying the Device
# Configuration"; EOS has the same option), and pagers.
_WHOLE_WORDS = ("all", "sanitized", "|", "no-more", "nomore")
_HEADER_LINES = 10


def partial_reason(text):
    """Why ``text`` is visibly not a whole running-config, or None. Only the ``Command:`` header says so:
    ``show running-config`` (with ``all``, ``sanitized`` or ``| no-more``) is whole; ``show running-config interfaces
    Ethernet1``, ``... section qos`` or ``... | include mtu`` print a part, whose omissions state nothing.
    A text without the header (a saved file, a rendered configuration) is taken as whole."""
    if not isinstance(text, str):
        return None
    for line in text.splitlines()[:_HEADER_LINES]:
        match = _COMMAND_HEADER.match(line)
        if match:
            rest = [w for w in match.group(2).split() if w.lower() not in _WHOLE_WORDS]
            if rest:
                return "the configuration is the output of 'show %s-config%s', a part of the running-config" % (
                    match.group(1).lower(), match.group(2).rstrip())
            return None
    return None


def guarded_parse(fmt, text, parse):
    """``parse(text, problems)`` for a running-config ``text`` of format ``fmt``, never raising: a
    parser reports what it cannot read (a line in ``problems``), it never crashes the play."""
    problems = []
    if not isinstance(text, str):
        return new_facts(fmt, {}, ["%s: expected the running-config text, got %s" % (fmt, type(text).__name__)])
    try:
        return parse(text, problems)
    except Exception as exc:  # a parser must report, never crash the play
        return new_facts(fmt, {}, problems + ["%s: cannot parse the configuration (%s: %s)"
                                              % (fmt, type(exc).__name__, exc)])
