# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a paste adds around a command's output, taken off before a counter parser reads it.

Counter reads reach the parsers as captured stdout, but also pasted from a terminal or a mail. :func:`clean`
takes off, for every text format alike (:func:`counters_parse.parse_counters` calls it once, before the parser):

* line ends: CRLF and lone CR become LF;
* mail quoting: ``> `` (and ``>> ``, ``> > ``) in front of every non-blank line, when every one has it;
* prompt lines: a shell or NOS prompt and the command typed after it (``admin@sonic:~$ show pfc counters``,
  ``[root@gpu01 ~]# ethtool -S ens1f0np0``, ``switch# show ...``, ``switch(config)# ...``, ``leaf01>``,
  ``$ rdma statistic show``, ``# tc -s -j qdisc show``), and a prompt alone (the next one, after the output);
* the shell's echo of the command: an ``xtrace`` line (``+ ethtool -S ...``) or a line that is one of the
  sources' commands by its first word (:data:`COMMANDS`: ``show``, ``ethtool``, ``rdma``, ``nv``, ``tc``...).

A mail client also breaks long lines at 72 or 76 columns, at a space, and drops the spaces where it broke.
:func:`unwrapped` joins such lines back: a line that ends near the width (within :data:`NEAR` columns: the words
that did not fit went on) takes the next line as its rest when that one starts in the first column - the outputs'
own lines that follow a long one are indented (ethtool, NVUE, JSON), start a new table row, or are short. Whether
the text was wrapped at all, only the parse can tell (a table whose rows end near column 72 and start in the first
column looks the same): the caller parses both and keeps the reading with more counters (``parse_counters``).
"""

from __future__ import annotations

import re

# The first words of the commands whose output the counter parsers read (docs/lossless-qos.md, "Proven under load"),
# and what runs them: a line that starts with one of these and a space is the command, not its output.
COMMANDS = ("show", "ethtool", "rdma", "nv", "tc", "ip", "cat", "grep", "sudo", "vtysh", "Cli", "docker", "sonic-clear")
WRAP_WIDTHS = (72, 76)
# How far before the width a wrapped line may end: the words that did not fit (a 25-character NVUE column name and
# the spaces before it) went to the next line.
NEAR = 30

_PROMPTS = (
    re.compile(r"^[\w.-]+@[\w.-]+(?::[^\s$#]*)?\s?[$#]\s*(?P<rest>.*)$"),   # admin@sonic:~$ show ...
    re.compile(r"^\[[^\]\n]+\]\s?[$#]\s*(?P<rest>.*)$"),                  # [root@gpu01 ~]# ethtool -S ...
    re.compile(r"^[\w.-]+(?:\([\w.-]+\))?[#>]\s*(?P<rest>.*)$"),            # switch# show / leaf01(config)# / sw>
    re.compile(r"^[$#]\s+(?P<rest>\S.*)$"),                                  # $ rdma statistic show
    re.compile(r"^[$#]$"),                                                   # a bare prompt after the output
)
_XTRACE = re.compile(r"^\++ \S")
_QUOTE = re.compile(r"^(?:>\s?)+")


def _is_prompt(line):
    return any(rx.match(line) for rx in _PROMPTS)


def _is_echo(line):
    words = line.split()
    return bool(_XTRACE.match(line)) or (len(words) > 1 and words[0] in COMMANDS)


def clean(text):
    """``text`` without line-end, quoting, prompt and echo noise (see the module); other lines unchanged."""
    text = str(text).replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    body = [line for line in lines if line.strip()]
    if body and all(line.lstrip().startswith(">") for line in body):
        lines = [_QUOTE.sub("", line.lstrip()) for line in lines]
    kept = [line for line in lines if not (line.strip() and (_is_prompt(line.strip()) or _is_echo(line.strip())))]
    return "\n".join(kept)


def unwrapped(text, width):
    """``text`` with the lines a mail client broke at ``width`` joined back; None when a line of it is longer than
    ``width`` (it was not wrapped there) or nothing is to join. The rest of a line goes where the first rest of its
    paragraph went (one space after the first broken line), so a table's rows line up with its header again."""
    lines = text.split("\n")
    if any(len(line.rstrip()) > width for line in lines):
        return None
    out, joined, column = [], False, None
    for line in lines:
        line = line.rstrip()
        if not line:
            column = None  # a new paragraph (table) sets its own column
        tail = out[-1][1] if out else ""
        if out and line and not line[0].isspace() and width - NEAR <= len(tail) <= width:
            full = out[-1][0]
            if column is None:
                column = len(full) + 1
            out[-1] = (full + " " * max(1, column - len(full)) + line, line)
            joined = True
            continue
        out.append((line, line))
    return "\n".join(pair[0] for pair in out) if joined else None


def readings(text):
    """The cleaned text, then its unwrapped variants (one per width that finds a line to join)."""
    first = clean(text)
    out = [first]
    for width in WRAP_WIDTHS:
        variant = unwrapped(first, width)
        if variant is not None and variant not in out:
            out.append(variant)
    return out
