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
own lines that follow a long one are indented (ethtool, NVUE, JSON), start a new table row, or are short. A rest
is itself broken again only where the next line's first word would not have fit after it (:func:`_broken`), so the
short rest of a wide table's header never takes the dashes line below it. Where a rest went is lost with the
spaces: it is joined back both left-aligned and right-aligned (tabulate right-aligns SONiC's numbers). Whether
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


def _broken(tail, rest, following, width):
    """Whether ``tail`` (the last piece of a line: the line itself, or the rest a broken line went on with, ``rest``)
    was broken at ``width`` before ``following``. A line's first piece lost an unknown run of spaces where it broke
    (a table's padding): it ends within :data:`NEAR` of the width. A rest starts right at its break, so it was broken
    again only where the next word could not follow it, one space apart, within the width; otherwise ``following``
    is a line of its own (the dashes under a header whose rest is short, the next row of a table)."""
    if not width - NEAR <= len(tail) <= width:
        return False
    return not rest or len(tail) + 1 + len(following.split()[0]) > width


def unwrapped(text, width, align="left"):
    """``text`` with the lines a mail client broke at ``width`` joined back; None when a line of it is longer than
    ``width`` (it was not wrapped there) or nothing is to join. Where the rest of a line goes is lost with the spaces
    the client dropped: ``align`` ``left`` puts it where the first rest of its paragraph went (one space after the
    first broken line), so a table of left-aligned cells lines up with its header again; ``right`` ends every rest
    of the paragraph at one column (the farthest any of them needs), so a table whose cells are right-aligned (a
    SONiC table of numbers, its dashes line and its headers: tabulate) lines up with its dashes again."""
    lines = text.split("\n")
    if any(len(line.rstrip()) > width for line in lines):
        return None
    paragraphs, current, joined = [], [], False
    for line in lines:
        line = line.rstrip()
        if not line:
            paragraphs.append(current)
            paragraphs.append([[line, None, False]])
            current = []
            continue
        if current and not line[0].isspace() and _broken(current[-1][1] or current[-1][0], current[-1][2], line, width):
            current[-1][1], current[-1][2] = line, True
            current[-1].append(line)
            joined = True
            continue
        current.append([line, None, False])
    paragraphs.append(current)
    if not joined:
        return None
    out = []
    for paragraph in paragraphs:
        pieces = [(item[0], item[3:]) for item in paragraph]
        out.extend(_joined(pieces, align))
    return "\n".join(out)


def _joined(pieces, align):
    """The lines of one paragraph, each ``(first piece, [rests])`` joined as :func:`unwrapped` says."""
    out, column, end = [], None, None
    if align == "right":
        end = max([len(first) + sum(1 + len(r) for r in rests) for first, rests in pieces if rests] or [0])
    for first, rests in pieces:
        full = first
        for i, rest in enumerate(rests):
            if align == "right":
                at = end - len(rest) - sum(1 + len(r) for r in rests[i + 1:])
            else:
                if column is None:
                    column = len(full) + 1
                at = column
            full = full + " " * max(1, at - len(full)) + rest
        out.append(full)
    return out


def readings(text):
    """The cleaned text, then its unwrapped variants (per width that finds a line to join, its rests aligned left
    and right)."""
    first = clean(text)
    out = [first]
    for width in WRAP_WIDTHS:
        for align in ("left", "right"):
            variant = unwrapped(first, width, align)
            if variant is not None and variant not in out:
                out.append(variant)
    return out
