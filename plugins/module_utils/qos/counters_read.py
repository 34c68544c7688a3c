# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading a node's counters for a lossless load test (host side, the ``lossless_counters`` module): each rail
NIC's ``ethtool -S`` and its RDMA device port's ``hw_counters`` directory, unparsed (the controller parses them
with :mod:`counters_parse`), and the RDMA device's driver, which picks the parser.

Where the files are (the kernel's sysfs ABI, ``Documentation/ABI/stable/sysfs-class-infiniband``):
``/sys/class/infiniband/<dev>/ports/<n>/hw_counters/<name>`` (one number per file), the device's driver behind
``/sys/class/infiniband/<dev>/device/driver``; a software device (soft-RoCE ``rxe``) has no ``device`` link but a
``parent`` file naming its netdev (``drivers/infiniband/sw/rxe/rxe_verbs.c``: ``parent_show``).
"""

from __future__ import annotations

import os


def rdma_driver(root, device):
    """``mlx5_core``, ``rxe`` ... of RDMA ``device`` under sysfs ``root``; None when sysfs does not say."""
    base = os.path.join(root, "sys/class/infiniband", device)
    link = os.path.join(base, "device", "driver")
    if os.path.exists(link):
        return os.path.basename(os.path.realpath(link))
    if os.path.isfile(os.path.join(base, "parent")):
        return "rxe"
    return None


def hw_counters(root, device, port):
    """``({name: text}, error)`` of the ``hw_counters`` directory of ``device`` port ``port``; error one line, or
    None."""
    path = os.path.join(root, "sys/class/infiniband", device, "ports", str(port), "hw_counters")
    if not os.path.isdir(path):
        return None, "%s port %s has no hw_counters directory (%s)" % (device, port, path)
    out = {}
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        try:
            with open(full) as handle:
                out[name] = handle.read().strip()
        except OSError:
            continue  # a counter the device refuses to read is absent: not reported
    return out, None


def read_links(links, run, root="/"):
    """``{"interfaces": {interface: {...}}}`` for ``links`` (``[{"interface", "rdma_device", "rdma_port"}]``, the
    RDMA keys None where the NIC has none); ``run(argv) -> (rc, out, err)`` runs ``ethtool``. Per interface:
    ``ethtool`` (text) or ``ethtool_error``, ``rdma_device``, ``rdma_port``, ``rdma_driver``, ``hw_counters``
    ({name: text}) or ``rdma_error``. Never raises on a missing device: each absence is a line."""
    out = {}
    for link in links:
        name = link["interface"]
        item = {"ethtool": None, "ethtool_error": None, "rdma_device": link.get("rdma_device"),
                "rdma_port": link.get("rdma_port"), "rdma_driver": None, "hw_counters": None, "rdma_error": None}
        rc, text, err = run(["ethtool", "-S", name])
        if rc == 0 and text.strip():
            item["ethtool"] = text
        else:
            item["ethtool_error"] = "%s: ethtool -S failed (rc %s): %s" % (
                name, rc, " ".join((err or text).split())[:200] or "no output")
        if item["rdma_device"]:
            item["rdma_driver"] = rdma_driver(root, item["rdma_device"])
            item["hw_counters"], item["rdma_error"] = hw_counters(root, item["rdma_device"], item["rdma_port"] or 1)
        else:
            item["rdma_error"] = "%s has no RDMA device" % name
        out[name] = item
    return {"interfaces": out}
