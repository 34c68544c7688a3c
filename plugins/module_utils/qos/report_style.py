# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the lossless reports share: the tints of a verdict, and how a value is escaped in Markdown and HTML.

Both reports (the agreement report, :mod:`lossless_report`, and the load test's report, :mod:`load_report`) colour
a link by how it fared. The same meaning has the same tint in both: :data:`TINTS` names each tint by its meaning
(Bootstrap 5's ``*-bg-subtle`` colours), and each report maps its own verdicts onto these names. The browser tests
look for these exact colours in a screenshot.

Escaping: :func:`md_cell` makes any value safe as a Markdown table cell (``|`` escaped, ``<`` written as ``&lt;``,
line breaks flattened), :func:`md_code` a code span in a cell, :func:`html_text` HTML text or an attribute value
(``&``, ``<``, ``>`` and both quotes escaped).
"""

from __future__ import annotations

import html
import re

# meaning -> background tint
TINTS = {
    "good": "#d1e7dd",     # green: agrees / stayed lossless
    "bad": "#f8d7da",      # red: disagrees / dropped
    "lost": "#e9d8fd",     # violet: lost between the ends of a path, not placed on one link
    "caution": "#fff3cd",  # amber: could not be checked / ECN not acting
    "storm": "#ffe5d0",    # orange: paused too long
    "unknown": "#cff4fc",  # cyan: ran, but proves nothing (no congestion reached)
    "absent": "#e2e3e5",   # grey: not run
}


def text(value):
    """``value`` as text; None is empty."""
    return "" if value is None else str(value)


_MD_SPECIAL = re.compile(r"[\\|<\r\n]")


def md_cell(value):
    """``value`` as the text of a Markdown table cell: no pipe ends the cell, no ``<`` opens markup."""
    value = text(value)
    if _MD_SPECIAL.search(value) is None:  # the usual case, and the fast one
        return value
    return value.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("\r", " ").replace("\n", " ")


def md_code(value):
    """``value`` as a code span inside a Markdown table cell."""
    # Inside a code span backslashes and entities are literal: a pipe still needs its escape
    # (GitHub's tables split on it first), a backtick would end the span.
    return "`%s`" % text(value).replace("|", "\\|").replace("`", "'").replace("\r", " ").replace("\n", " ")


def html_text(value):
    """``value`` escaped for HTML text and quoted attribute values."""
    return html.escape(text(value), quote=True)


def rail_key(value):
    """Sort key of a rail: numbers numerically, before anything else (by text)."""
    if isinstance(value, bool):
        return (1, 0, str(value))
    if isinstance(value, int):
        return (0, value, "")
    value = text(value)
    if value.strip().isdigit():
        return (0, int(value), "")
    return (1, 0, value)
