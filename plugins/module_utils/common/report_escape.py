# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How a value becomes text in each report grammar: one escaping function per grammar, used by every renderer.

The reports (the plan's ``rails.md``, ``rails.csv`` and ``topology.mmd``, the cabling findings, the link test's
report, the lossless agreement and load reports in Markdown and HTML) show names from the inventory and strings read
from devices: LLDP system and port names, switch outputs, tool messages. None of them is trusted to be a plain
name: the model check refuses odd inventory names, but a device's strings are never checked, and a renderer may be
called with any plan. So every value goes through the function of the grammar it is written in, and no value can
add a row, a cell, a link, markup or a statement:

* :func:`md_text`: inline Markdown text (a table cell, a heading's text, a list item, a sentence). Every character
  that can start markup is backslash-escaped (CommonMark allows it before any ASCII punctuation), so the value is
  shown as it is: ``|`` cannot end a cell, ``<`` (written ``&lt;``) cannot open HTML or an autolink, ``[`` cannot open a link, a
  backtick cannot open a code span, ``*``, ``_``, ``~`` and ``$`` cannot emphasise or open math, ``://``, ``www.``
  and ``@`` cannot become GFM autolinks, and a leading ``#``, ``>``, ``-``, ``+``, ``=`` or ``1.`` cannot start a
  heading, quote or list where the text begins a block. Line breaks and every other control character (C0, C1,
  U+2028, U+2029) become a space, so a value stays on its line; leading and trailing blanks are dropped.
* :func:`md_code`: a code span inside a GFM table cell, fenced with more backticks than the value holds.
* :func:`mermaid_label`: the text of a quoted Mermaid label. Everything but letters, digits, blanks and
  ``_.,/()+=@-`` is written as Mermaid's numeric entity code (``#34;`` for ``"``, ``#35;`` for ``#``, ``#37;``
  for ``%``), so a value can neither close the quotes nor form a ``%%{init}%%`` directive, a comment, an entity or
  markup. :func:`mermaid_id` makes node ids from a prefix and a number, never from a name: ids from names collide
  (``gpu-1`` and ``gpu_1``) and could be keywords (``end``, ``click``, ``style``).
* :func:`html_text`: HTML text or a quoted attribute value (``html.escape`` with quotes).
* :func:`csv_cell`, :func:`csv_text`: a CSV cell that a spreadsheet does not run: a text starting with ``=``,
  ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'`` (OWASP's rule against formula injection);
  numbers stay numbers. The csv module quotes.

Each function is linear in the value and returns it unchanged (but as text) when it holds nothing special, the
usual case, so 16,384 nodes x 8 rails render in seconds.
"""

from __future__ import annotations

import csv
import html
import io
import itertools
import re

# C0 and C1 controls, DEL, and the Unicode line and paragraph separators: each becomes one space.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def text(value):
    """``value`` as text; None is empty."""
    return "" if value is None else str(value)


def one_line(value):
    """``value`` as text on one line: every control character and line separator is a space."""
    return _CONTROLS.sub(" ", text(value))


# Markdown: what needs a backslash wherever it is (an ampersand only where it would start an entity) ...
_MD_ANYWHERE = r"[\\`*~\[\]<|$@]|&(?=#?[A-Za-z0-9]+;)"
# ... an underscore that is not between two letters or digits (only those can open or close emphasis), GFM's
# autolink triggers ...
_MD_UNDERSCORE = r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])"
_MD_AUTOLINK = r"(?<=[A-Za-z0-9]):(?=//)|(?<=www)\."
_MD_SPECIAL = re.compile("|".join((_MD_ANYWHERE, _MD_UNDERSCORE, _MD_AUTOLINK)), re.IGNORECASE)
# ... and a block marker at the start of the text: a heading, quote, list item, setext underline (below) or an
# ordered list item's number.
_MD_ORDERED = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")
# The usual value, which needs nothing: a letter or digit first, then letters, digits, "/", "," and "-", and single
# dots between them that do not follow a "w" (no "www.") nor end the value.
_MD_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9/,-]*(?:(?<![wW])\.[A-Za-z0-9/,-]+)*").fullmatch


def _md_escape(match):
    char = match.group(0)
    return "&lt;" if char == "<" else "\\" + char


def md_text(value):
    """``value`` as inline Markdown text that shows exactly the value (on one line, blanks at its ends dropped) and
    can be a table cell, a heading's text or a list item's (see the module)."""
    value = text(value)
    if _MD_PLAIN(value):  # the fast path
        return value
    value = one_line(value).strip()
    if not value:
        return ""
    value = _MD_SPECIAL.sub(_md_escape, value)
    first = value[0]
    if first in "#>+-=":
        return "\\" + value
    if first.isdigit():
        return _MD_ORDERED.sub(r"\1\\\2", value, count=1)
    return value


def md_cells(values, empty=""):
    """:func:`md_text` of each of ``values`` (a table row's cells, in one call: 16,384 nodes x 8 rails x 14
    columns are 1.8 million cells), ``empty`` for an empty one."""
    out = []
    for value in values:
        value = "" if value is None else str(value)
        out.append(value if _MD_PLAIN(value) else (md_text(value) or empty))
    return out


def _texts(values):
    """``values`` as text (None empty): a column of text or of whole numbers converted at once."""
    kinds = set(map(type, values))
    if kinds <= {str}:
        return list(values)
    if kinds == {int}:
        return list(map(str, values))
    return ["" if value is None else str(value) for value in values]


# A column whose cells are all plain (_MD_PLAIN), checked over the column joined by line ends, with substring tests
# instead of one match per cell: only the characters of a plain value; every cell starts with a letter or digit (no
# cell empty); every dot is followed by a character of a plain value other than a dot, and follows no "w".
_MD_NOT_PLAIN_CHAR = re.compile(r"[^A-Za-z0-9/,.\n-]").search
_MD_NOT_PLAIN_PARTS = ("\n\n", "\n/", "\n,", "\n.", "\n-", "w.", "W.", "..", ".\n")


def _md_plain_column(cells):
    joined = "\n".join(cells)
    return (joined != "" and joined.count("\n") == len(cells) - 1 and _MD_NOT_PLAIN_CHAR(joined) is None
            and joined[0] not in "\n/,.-" and joined[-1] not in "\n." and not any(
                part in joined for part in _MD_NOT_PLAIN_PARTS))


def md_column(values, empty=""):
    """:func:`md_cells` of a table's column (``values``: its cells, top to bottom), the same cells: where every cell
    is plain (the usual column: 131,072 rows at 16,384 nodes x 8 rails) found so over the whole column at once, else
    cell by cell."""
    cells = _texts(values)
    return cells if _md_plain_column(cells) else md_cells(cells, empty)


def md_code(value):
    """``value`` as a code span inside a GFM table cell (on one line); empty for an empty value."""
    value = one_line(value)
    if not value.strip():
        return ""
    # GFM splits the row on unescaped pipes before it reads code spans, and takes ``\|`` back to ``|`` inside them.
    value = value.replace("|", "\\|")
    if "`" not in value and value[0] != " " and value[-1] != " ":
        return "`%s`" % value
    longest = max([len(run) for run in re.findall("`+", value)] or [0])
    fence = "`" * (longest + 1)
    # One blank on each side is stripped by the reader: the value may then start or end with a backtick or blank.
    return "%s %s %s" % (fence, value, fence)


# No colon: Mermaid drops the last ";" of a line matching "style.*:\S*#.*;" or "classDef.*:\S*#.*;" before it
# decodes the entities (mermaidAPI encodeEntities), which would leave an entity of the label undecoded.
_MERMAID_SAFE = re.compile(r"[^A-Za-z0-9 _.,/()+=@-]")


def mermaid_label(value):
    """``value`` as the text between the double quotes of a Mermaid label (a node's or an edge's), on one line."""
    return _MERMAID_SAFE.sub(lambda match: "#%d;" % ord(match.group(0)), one_line(value))


def mermaid_id(prefix, number):
    """A Mermaid node id: ``prefix`` (letters, then letters, digits or ``_``) and a whole number."""
    if not re.match(r"[A-Za-z][A-Za-z0-9_]*\Z", prefix) or isinstance(number, bool) or not isinstance(number, int):
        raise ValueError("mermaid_id: %r, %r is not a prefix and a number" % (prefix, number))
    return "%s%d" % (prefix, number)


def html_text(value):
    """``value`` escaped for HTML text and quoted attribute values."""
    return html.escape(text(value), quote=True)


_CSV_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """``value`` as a CSV cell's text: None empty, numbers as they are, a text a spreadsheet would take for a
    formula with a leading ``'``."""
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    value = str(value)
    return "'" + value if value.startswith(_CSV_FORMULA) else value


# What ends a line for csv's reader (and, beyond \r and \n, for str.splitlines).
_LINE_BREAK = re.compile("[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def csv_text(header, rows):
    """CSV text (``\\n`` line ends, quoting by the csv module) of ``header`` and ``rows``, every cell through
    :func:`csv_cell`. A row with a line break in a cell has every cell quoted: the csv module quotes only what
    holds its line terminator (``\\n``), and a bare ``\\r`` would end the row for a reader."""
    out = io.StringIO()
    minimal = csv.writer(out, lineterminator="\n")
    quoted = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    for row in itertools.chain([header], rows):
        cells = [c if isinstance(c, str) and not c.startswith(_CSV_FORMULA) else csv_cell(c)  # the fast path
                 for c in row]
        (quoted if _LINE_BREAK.search("".join(cells)) else minimal).writerow(cells)
    return out.getvalue()


# What makes a cell other than its plain text in csv_text: a quote or a line break anywhere (csv quotes the cell, or
# the row), or a formula's first character at a cell's start, after the line's start or a separator (valid where no
# cell holds a separator or a line end).
_CSV_QUOTED = re.compile("[\"\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]").search


def csv_columns(header, columns):
    """:func:`csv_text` of a table given by its ``columns`` (each the cells of one column, top to bottom), the same
    text: the cells joined at once, then the whole text checked once (every separator and line end where it should
    be, no cell that csv would quote, none that :func:`csv_cell` would prefix), else written row by row by
    :func:`csv_text` (131,072 rows at 16,384 nodes x 8 rails)."""
    width = len(header)
    if width < 2 or len(columns) != width:
        return csv_text(header, zip(*columns))
    cells = [_texts(column) for column in columns]
    lines = [",".join(map(str, header))]
    lines.extend(map(",".join, zip(*cells)))
    out = "\n".join(lines) + "\n"
    rows = len(lines)
    if (all(len(column) == rows - 1 for column in cells) and out.count(",") == rows * (width - 1)
            and out.count("\n") == rows and _CSV_QUOTED(out) is None and not out.startswith(_CSV_FORMULA)
            and not any(before + first in out for first in _CSV_FORMULA if first in out for before in ",\n")):
        return out
    return csv_text(header, zip(*columns))
