# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the browser tests of the HTML reports share: a screenshot of a page in Debian's headless Chromium with
networking made impossible, and a pure-Python PNG decoder to count the colours in it.

Chromium runs with a proxy on a closed port and a resolver that finds no name, so any fetch would fail. Without a
``chromium`` / ``chromium-browser`` binary :func:`screenshot` skips the test, unless ``AINET_REQUIRE_BROWSER=1``
(then it fails). ``AINET_ARTIFACTS=<dir>`` keeps the screenshot and the page there.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib

import pytest

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
REQUIRED = os.environ.get("AINET_REQUIRE_BROWSER") == "1"
# Any fetch fails: every connection goes to a proxy on the discard port of localhost (nothing
# listens there in the test), every host name resolves to nothing.
NO_NETWORK = ["--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND"]


def screenshot(page_html, tmp_path, name, width, height):
    """Write ``page_html`` to ``tmp_path/<name>.html``, open it from the file in headless Chromium at
    ``width`` x ``height`` and return the screenshot's ``(width, height, rows)`` (:func:`png_pixels`)."""
    if BROWSER is None:
        if REQUIRED:
            pytest.fail("AINET_REQUIRE_BROWSER=1 but neither chromium nor chromium-browser is on PATH "
                        "(tests/system-deps.sh installs Debian's chromium)")
        pytest.skip("no chromium or chromium-browser on PATH (tests/system-deps.sh installs Debian's chromium; "
                    "AINET_REQUIRE_BROWSER=1 makes this a failure)")
    page = tmp_path / ("%s.html" % name)
    page.write_text(page_html, encoding="utf-8")
    shot = tmp_path / ("%s.png" % name)
    home = tmp_path / ("%s-home" % name)
    home.mkdir()
    cmd = [BROWSER, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"] + NO_NETWORK + [
        "--no-first-run", "--disable-extensions", "--user-data-dir=%s" % (tmp_path / ("%s-profile" % name)),
        "--window-size=%d,%d" % (width, height), "--screenshot=%s" % shot, page.as_uri()]
    env = dict(os.environ, HOME=str(home))
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                            timeout=180, check=False, env=env)
    assert result.returncode == 0 and shot.exists(), (result.returncode, result.stderr[-3000:])
    artifacts = os.environ.get("AINET_ARTIFACTS")
    if artifacts:
        os.makedirs(artifacts, exist_ok=True)
        shutil.copy(str(shot), os.path.join(artifacts, shot.name))
        shutil.copy(str(page), os.path.join(artifacts, page.name))
    return png_pixels(str(shot))


def rgb(colour):
    """``(r, g, b)`` of a ``#rrggbb`` colour."""
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def colour_counts(rows, colours):
    """``(pixels, lines)`` per key of ``colours`` ({key: "#rrggbb"}): how many pixels have exactly that colour,
    and in how many screenshot rows it shows."""
    wanted = {rgb(colour): key for key, colour in colours.items()}
    counts = dict.fromkeys(colours, 0)
    lines = dict.fromkeys(colours, 0)
    for row in rows:
        seen = set()
        for pixel in row:
            key = wanted.get(pixel)
            if key:
                counts[key] += 1
                seen.add(key)
        for key in seen:
            lines[key] += 1
    return counts, lines


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


def encode_png(pixels, channels, filters):
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
