# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the lossless reports share: the tints of a verdict and the order of rails.

Both reports (the agreement report, :mod:`lossless_report`, and the load test's report, :mod:`load_report`) colour
a link by how it fared. The same meaning has the same tint in both: :data:`TINTS` names each tint by its meaning
(Bootstrap 5's ``*-bg-subtle`` colours), and each report maps its own verdicts onto these names. The browser tests
look for these exact colours in a screenshot.

How a value is written in Markdown and HTML is :mod:`common.report_escape`'s (the same for every report).
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.common.report_escape import text

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
