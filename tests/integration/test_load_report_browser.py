# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The load test's HTML matrix in a real headless browser (Debian's Chromium), with networking made impossible.

Runs judged from the recorded counter pairs, one link per verdict (all six) and one skipped, one host name carrying
a ``<script>`` that would blank the page if it were not escaped, are rendered with ``load_report``, opened by Chromium
from the file and screenshotted (``browser_shot``). Each state's colour of :data:`load_report.COLOURS` must cover
far more pixels than the legend's swatch alone: every cell rendered in its colour from the inline CSS. The control:
the same page without the dropped link shows the red of the legend only, under the bound.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "unit", "plugins", "module_utils"))
from browser_shot import colour_counts, screenshot  # noqa: E402  pylint: disable=wrong-import-position
from test_load_report import run  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_report import (  # noqa: E402  pylint: disable=wrong-import-position
    COLOURS, STATES, load_report,
)

WIDTH, HEIGHT = 1400, 700
PAYLOAD = "gpu-<script>document.body.innerHTML=''</script>&co"
RUNS = [
    run("c1-rail1-tor", "swp1", "gpu-001", "lossless_under_load"),
    run("c1-rail1-tor", "swp2", PAYLOAD, "lossless_under_load"),
    run("c1-rail1-tor", "swp3", "gpu-003", "dropped"),
    run("c1-rail2-tor", "swp1", "gpu-001", "pause_storm", rail=2),
    run("c1-rail2-tor", "swp3", "gpu-003", "lost", rail=2),
    run("c1-rail2-tor", "swp2", "gpu-002", "ecn_inactive", rail=2),
    run("c1-rail3-tor", "swp1", "gpu-001", "inconclusive", rail=3),
    run("c1-rail3-tor", "swp2", "gpu-002", skipped="the rail's agreement check disagrees", rail=3),
]
# A matrix cell is at least 150 x 44 px; a legend swatch about 100 x 18.
CELL_PIXELS = 4000


def test_every_verdict_colour_renders_in_headless_chromium(tmp_path):
    assert {r["verdict"]["verdict"] if r["verdict"] else "skipped" for r in RUNS} == set(STATES)
    width, height, rows = screenshot(load_report(RUNS, cluster="c1", generated="2026-11-27")["html"], tmp_path,
                                     "lossless", WIDTH, HEIGHT)
    assert (width, height) == (WIDTH, HEIGHT)
    counts, lines = colour_counts(rows, COLOURS)
    for state in STATES:
        assert counts[state] > CELL_PIXELS and lines[state] > 40, (state, counts, lines)
    assert counts["lossless_under_load"] > 2 * CELL_PIXELS, counts  # two cells


def test_control_without_the_dropped_link_shows_no_red_cell(tmp_path):
    runs = [r for r in RUNS if not (r["verdict"] and r["verdict"]["verdict"] == "dropped")]
    _w, _h, rows = screenshot(load_report(runs, cluster="c1")["html"], tmp_path, "control", WIDTH, HEIGHT)
    counts, _lines = colour_counts(rows, COLOURS)
    assert 0 < counts["dropped"] < CELL_PIXELS, counts  # the legend's swatch, no cell
    assert counts["pause_storm"] > CELL_PIXELS, counts
