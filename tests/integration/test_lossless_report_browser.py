# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTML agreement report in a real headless browser (Debian's Chromium), with networking made impossible.

A report of a few host-ToR links - some agree, some disagree, one could not be checked, one host
name carrying a ``<script>`` that would blank the page if it were not escaped - is rendered,
written to a temporary directory, opened by Chromium from the file and screenshotted. Chromium
runs with a proxy on a closed port and a resolver that finds no name, so any fetch would fail.
The PNG is decoded here (zlib, struct and the five PNG filters; no imaging library) and must
show the agree, disagree and not-checked row colours of :data:`lossless_report.COLOURS` over
many pixels: the page rendered and was styled by its inline CSS alone.

Without a ``chromium`` / ``chromium-browser`` binary the browser test is skipped, unless
``AINET_REQUIRE_BROWSER=1`` (then it fails). ``AINET_ARTIFACTS=<dir>`` keeps the screenshot and
the page there.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_report import COLOURS, render_html

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
REQUIRED = os.environ.get("AINET_REQUIRE_BROWSER") == "1"
WIDTH, HEIGHT = 1400, 900
# Any fetch fails: every connection goes to a proxy on the discard port of localhost (nothing
# listens there in the test), every host name resolves to nothing.
NO_NETWORK = ["--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND"]
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


def png_pixels(path):
    """``(width, height, rows)`` of an 8-bit RGB or RGBA, non-interlaced PNG; a row is a list of
    ``(r, g, b)`` tuples (alpha dropped). Pure Python: chunks by struct, IDAT by zlib, then the
    scanline filters 0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth."""
    with open(path, "rb") as handle:
        data = handle.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    width, height, depth, colour, _compression, _filter, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    assert len(raw) == height * (stride + 1), "truncated image data"
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:
            for x in range(channels, stride):
                line[x] = (line[x] + line[x - channels]) & 255
        elif kind == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, previous))
        elif kind == 3:
            for x in range(stride):
                left = line[x - channels] if x >= channels else 0
                line[x] = (line[x] + ((left + previous[x]) >> 1)) & 255
        elif kind == 4:
            for x in range(stride):
                if x >= channels:
                    left, corner = line[x - channels], previous[x - channels]
                else:
                    left = corner = 0
                up = previous[x]
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        else:
            assert kind == 0, "unknown PNG filter type %d" % kind
        rows.append(list(zip(line[0::channels], line[1::channels], line[2::channels])))
        previous = line
    return width, height, rows


def _encode_png(pixels, channels, filters):
    """A PNG of ``pixels`` (rows of byte tuples) with row ``y`` filtered by ``filters[y]``: the
    decoder's reference (the encoder side of each filter, straight from the PNG specification)."""
    def paeth(a, b, c):
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        return a if pa <= pb and pa <= pc else b if pb <= pc else c

    raw, previous = bytearray(), [0] * (len(pixels[0]) * channels)
    for y, row in enumerate(pixels):
        line = [v for pixel in row for v in pixel]
        out = []
        for x, value in enumerate(line):
            a = line[x - channels] if x >= channels else 0
            b, c = previous[x], previous[x - channels] if x >= channels else 0
            predictor = {0: 0, 1: a, 2: b, 3: (a + b) // 2, 4: paeth(a, b, c)}[filters[y]]
            out.append((value - predictor) & 255)
        raw += bytes([filters[y]]) + bytes(out)
        previous = line

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", len(pixels[0]), len(pixels), 8, 2 if channels == 3 else 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw)))
            + chunk(b"IEND", b""))


@pytest.mark.parametrize("channels", [3, 4])
def test_png_decoder_undoes_all_five_filters(tmp_path, channels):
    pixels = [[tuple((x * 37 + y * 101 + k * 53 + x * y) % 256 for k in range(channels)) for x in range(7)]
              for y in range(10)]
    path = tmp_path / "filters.png"
    path.write_bytes(_encode_png(pixels, channels, [0, 1, 2, 3, 4, 4, 3, 2, 1, 0]))
    width, height, rows = png_pixels(str(path))
    assert (width, height) == (7, 10)
    assert rows == [[pixel[:3] for pixel in row] for row in pixels]


def _rgb(colour):
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def test_the_report_renders_in_headless_chromium_without_network(tmp_path):
    if BROWSER is None:
        if REQUIRED:
            pytest.fail("AINET_REQUIRE_BROWSER=1 but neither chromium nor chromium-browser is on PATH "
                        "(tests/system-deps.sh installs Debian's chromium)")
        pytest.skip("no chromium or chromium-browser on PATH (tests/system-deps.sh installs Debian's chromium; "
                    "AINET_REQUIRE_BROWSER=1 makes this a failure)")
    assert {link["status"] for link in LINKS} == {"agree", "disagree", "error"}
    page = tmp_path / "lossless-report.html"
    page.write_text(render_html(LINKS, META), encoding="utf-8")
    shot = tmp_path / "lossless-report.png"
    home = tmp_path / "home"
    home.mkdir()
    cmd = [BROWSER, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"] + NO_NETWORK + [
        "--no-first-run", "--disable-extensions", "--user-data-dir=%s" % (tmp_path / "profile"),
        "--window-size=%d,%d" % (WIDTH, HEIGHT), "--screenshot=%s" % shot, page.as_uri()]
    env = dict(os.environ, HOME=str(home))
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                            timeout=180, check=False, env=env)
    assert result.returncode == 0 and shot.exists(), (result.returncode, result.stderr[-3000:])

    artifacts = os.environ.get("AINET_ARTIFACTS")
    if artifacts:
        os.makedirs(artifacts, exist_ok=True)
        shutil.copy(str(shot), os.path.join(artifacts, shot.name))
        shutil.copy(str(page), os.path.join(artifacts, page.name))

    width, height, rows = png_pixels(str(shot))
    assert (width, height) == (WIDTH, HEIGHT)
    wanted = {_rgb(colour): status for status, colour in COLOURS.items()}
    counts = dict.fromkeys(COLOURS, 0)
    lines = dict.fromkeys(COLOURS, 0)  # screenshot rows in which the colour shows
    distinct = set()
    for row in rows:
        seen = set()
        for pixel in row:
            status = wanted.get(pixel)
            if status:
                counts[status] += 1
                seen.add(status)
        for status in seen:
            lines[status] += 1
        distinct.update(row[::16])
    # Three agree rows, three disagree rows and one error row, each about 1,000 px wide and 20+ px
    # tall: tens of thousands of pixels per colour; a blank, unstyled or script-wiped page has none.
    assert counts["agree"] > 20000 and counts["disagree"] > 20000 and counts["error"] > 5000, counts
    assert lines["agree"] > 40 and lines["disagree"] > 40 and lines["error"] > 10, lines
    assert len(distinct) > 10, "the screenshot is nearly uniform: nothing rendered"
