# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTML agreement report in a real headless browser (Debian's Chromium), with networking made impossible.

A report of a few host-ToR links - some agree, some disagree, one could not be checked, one host
name carrying a ``<script>`` that would blank the page if it were not escaped - is rendered,
written to a temporary directory, opened by Chromium from the file and screenshotted
(``browser_shot.screenshot``). The PNG is decoded there (zlib, struct and the five PNG filters; no
imaging library) and must show the agree, disagree and not-checked row colours of
:data:`lossless_report.COLOURS` over many pixels: the page rendered and was styled by its inline CSS alone.

Without a ``chromium`` / ``chromium-browser`` binary the browser test is skipped, unless
``AINET_REQUIRE_BROWSER=1`` (then it fails). ``AINET_ARTIFACTS=<dir>`` keeps the screenshot and
the page there.
"""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_report import COLOURS, render_html

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_shot import colour_counts, encode_png, png_pixels, screenshot  # noqa: E402  pylint: disable=wrong-import-position

WIDTH, HEIGHT = 1400, 900
PAYLOAD = "gpu-<script>document.body.innerHTML=''</script>&co"

LOSSY = {"code": "roce_dscp_lossy_on_switch", "host": 3, "switch": "TC1 (lossy)",
         "message": "DSCP 26 is lossless priority 3 on the host but lands in lossy TC1 on the switch port Ethernet8"}
PFC = {"code": "pfc_mismatch", "host": [3], "switch": [3, 4],
       "message": "PFC is enabled on priorities 3 on the host but 3,4 on the switch port Ethernet8"}
META = {"cluster": "c1", "generated": "2026-11-22T10:00:00Z",
        "profile": "compute: nvidia: DSCP 26 -> priority 3 (PFC 3), CNP DSCP 48 -> 6 strict, ToS 106",
        "sources": {"hosts": 4, "switches": 2}}


def _link(rail, host, status, disagreements=(), error=None):
    return {"fabric": "compute", "rail": rail, "host": host, "host_port": "ens%df0np0" % rail,
            "tor": "c1-rail%d-tor" % rail, "switch_port": "Ethernet%d" % (4 * rail) if rail == 2 else "swp%d" % rail,
            "status": status, "error": error, "disagreements": list(disagreements)}


LINKS = [
    _link(1, "gpu-001", "agree"), _link(1, "gpu-002", "agree"), _link(1, PAYLOAD, "agree"),
    _link(2, "gpu-001", "disagree", [LOSSY, PFC]), _link(2, "gpu-002", "disagree", [LOSSY]),
    _link(2, "gpu-003", "disagree", [PFC]),
    _link(3, "gpu-001", "error", error="no switch config found for c1-rail3-tor"),
]


@pytest.mark.parametrize("channels", [3, 4])
def test_png_decoder_undoes_all_five_filters(tmp_path, channels):
    pixels = [[tuple((x * 37 + y * 101 + k * 53 + x * y) % 256 for k in range(channels)) for x in range(7)]
              for y in range(10)]
    path = tmp_path / "filters.png"
    path.write_bytes(encode_png(pixels, channels, [0, 1, 2, 3, 4, 4, 3, 2, 1, 0]))
    width, height, rows = png_pixels(str(path))
    assert (width, height) == (7, 10)
    assert rows == [[pixel[:3] for pixel in row] for row in pixels]


def test_the_report_renders_in_headless_chromium_without_network(tmp_path):
    assert {link["status"] for link in LINKS} == {"agree", "disagree", "error"}
    width, height, rows = screenshot(render_html(LINKS, META), tmp_path, "lossless-report", WIDTH, HEIGHT)
    assert (width, height) == (WIDTH, HEIGHT)
    counts, lines = colour_counts(rows, COLOURS)
    distinct = set()
    for row in rows:
        distinct.update(row[::16])
    # Three agree rows, three disagree rows and one error row, each about 1,000 px wide and 20+ px
    # tall: tens of thousands of pixels per colour; a blank, unstyled or script-wiped page has none.
    assert counts["agree"] > 20000 and counts["disagree"] > 20000 and counts["error"] > 5000, counts
    assert lines["agree"] > 40 and lines["disagree"] > 40 and lines["error"] > 10, lines
    assert len(distinct) > 10, "the screenshot is nearly uniform: nothing rendered"
