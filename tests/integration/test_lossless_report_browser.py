# -*- coding: utf-8 -*-
"""The HTML report in a real headless browser (Debian's Chromium), with networking made impossible.

The report of a small cluster - one ToR with NVIDIA's RoCE defaults (agrees), one with SONiC's
stock template (disagrees), one whose configuration is missing (not checked) - is rendered,
opened by Chromium from a file and screenshotted. The PNG is decoded here (zlib and the five
PNG filters, no imaging library) and must show the agree, disagree and not-checked row colours
over many pixels: the page rendered, styled, without anything fetched.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.lossless_check import link_rows
from ansible_collections.ainet.fabric.plugins.module_utils.lossless_report import COLOURS, render_html
from ansible_collections.ainet.fabric.plugins.module_utils.qos_parse import parse_qos
from ansible_collections.ainet.fabric.plugins.module_utils.qos_profile import resolve_profile

DATA = os.path.join(os.path.dirname(__file__), "..", "unit", "plugins", "module_utils", "data", "qos")
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    BROWSER is None and os.environ.get("AINET_REQUIRE_BROWSER") != "1",
    reason="Chromium is not installed (tests/system-deps.sh installs it; AINET_REQUIRE_BROWSER=1 makes this fail)")


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    with open(path, "rb") as handle:
        data = handle.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _c, _f, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 255
            elif kind == 2:
                line[x] = (line[x] + up) & 255
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, channels)])
        previous = line
    return width, height, rows


def rgb(colour):
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def report(tmp_path):
    profile = resolve_profile({}, "q")
    plan = {"cluster": {"fabrics": {"compute": {"qos": profile}}}, "nodes": {}}
    tors = {"leaf-nvue": ("nvue", "nv-config-roce-lossless.yaml.txt", "swp%d"),
            "leaf-sonic": ("sonic_config_db", "qos-arista7050.json", "Ethernet%d")}
    switches = {}
    for name, (fmt, path, _port) in tors.items():
        with open(os.path.join(DATA, "nvue" if fmt == "nvue" else "sonic", path)) as handle:
            switches[name] = parse_qos(handle.read(), fmt)
    host = {"trust": "dscp", "dscp_to_priority": {26: 3, 48: 6}, "pfc": [3], "ecn_rp": [3], "ecn_np": [3],
            "cnp_dscp": 48, "cnp_priority": 6, "mtu": 9000, "roce_tos": 106, "traffic_class": 106}
    facts = {}
    for node in range(1, 4):
        name = "gpu%02d" % node
        plan["nodes"][name] = {"rails": [
            {"fabric": "compute", "rail": 1, "interface": "ens1", "tor": "leaf-nvue", "tor_port": "swp%d" % node},
            {"fabric": "compute", "rail": 2, "interface": "ens2", "tor": "leaf-sonic", "tor_port": "Ethernet%d" % (
                4 * node)},
            {"fabric": "compute", "rail": 3, "interface": "ens3", "tor": "leaf-missing", "tor_port": "Ethernet1"}]}
        facts[name] = {"format": "mlnx_qos+sysfs", "problems": [], "ports": {"ens1": host, "ens2": host, "ens3": host}}
    rows = link_rows(plan, facts, switches)
    page = tmp_path / "lossless-report.html"
    page.write_text(render_html(rows, {"cluster": "browser-test", "profile": "compute: nvidia"}))
    return page, rows


def test_the_report_renders_in_headless_chromium_without_network(tmp_path):
    if BROWSER is None:
        pytest.fail("AINET_REQUIRE_BROWSER=1 but no chromium binary")
    page, rows = report(tmp_path)
    assert {r["status"] for r in rows} == {"agree", "disagree", "error"}
    shot = tmp_path / "lossless-report.png"
    cmd = [BROWSER, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
           "--user-data-dir=%s" % (tmp_path / "profile"), "--window-size=1600,1400",
           "--screenshot=%s" % shot, "file://%s" % page]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    width, height, pixels = png_pixels(str(shot))
    counts = dict.fromkeys(COLOURS, 0)
    wanted = {rgb(c): status for status, c in COLOURS.items()}
    for line in pixels:
        for pixel in line:
            status = wanted.get(pixel)
            if status:
                counts[status] += 1
    artifacts = os.environ.get("AINET_ARTIFACTS")
    if artifacts:
        os.makedirs(artifacts, exist_ok=True)
        shutil.copy(str(shot), os.path.join(artifacts, "lossless-report.png"))
        shutil.copy(str(page), os.path.join(artifacts, "lossless-report.html"))
    assert (width, height) == (1600, 1400)
    assert all(n > 5000 for n in counts.values()), counts
