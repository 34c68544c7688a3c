# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``rdma_facts`` reads on a host besides the tools' outputs: sysfs, and the join of rails to devices.

Pure functions over a filesystem root (``/`` on a host, a temporary tree in tests):

* :func:`gid_sysfs_text` - the GID tables of every RDMA device as ``path:value`` lines (what
  ``grep -H . gids/* gid_attrs/types/* gid_attrs/ndevs/*`` prints), which the ``show_gids`` parser reads;
  unused slots (all-zero GIDs, and the attribute files the kernel refuses to read for them) are left out.
* :func:`netdev_sysfs` - per network interface: PCI address, driver, NUMA node, RDMA devices, and SR-IOV
  (total and current VFs, each VF's index, PCI address and netdev).
* :func:`rails` - per rail NIC: its RDMA device and port (from the facts), and the index of the RoCEv2 GID
  of its IPv4 address when one is given.
"""

from __future__ import annotations

import os
import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.linux_names import rdma_device_problem
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_facts import device_of_netdev, roce_v2_gid_index

IB = "sys/class/infiniband"
NET = "sys/class/net"


def _read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _listdir(path):
    try:
        return sorted(os.listdir(path), key=lambda n: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", n)])
    except OSError:
        return []


def gid_sysfs_text(root="/"):
    """The GID tables under ``root`` as ``path:value`` lines (see the module docstring)."""
    lines = []
    base = os.path.join(root, IB)
    for dev in _listdir(base):
        for port in _listdir(os.path.join(base, dev, "ports")):
            pdir = os.path.join(base, dev, "ports", port)
            for index in _listdir(os.path.join(pdir, "gids")):
                gid = _read(os.path.join(pdir, "gids", index))
                if not gid or set(gid.replace(":", "")) == {"0"}:
                    continue
                for rel in ("gids", "gid_attrs/types", "gid_attrs/ndevs"):
                    path = os.path.join(pdir, rel, index)
                    value = gid if rel == "gids" else _read(path)
                    if value is not None:
                        lines.append("/%s:%s" % (os.path.relpath(path, root), value))
    return "\n".join(lines) + ("\n" if lines else "")


def netdev_sysfs(root="/", names=None):
    """``{netdev: {"pci", "driver", "numa_node", "rdma_devices", "sriov"}}`` for ``names`` (default: every
    interface with a PCI device)."""
    base = os.path.join(root, NET)
    out = {}
    for name in (names if names is not None else _listdir(base)):
        dev = os.path.join(base, name, "device")
        if not os.path.exists(dev):
            if names is not None:
                out[name] = None
            continue
        pci = os.path.basename(os.path.realpath(dev))
        driver = os.path.basename(os.path.realpath(os.path.join(dev, "driver"))) \
            if os.path.exists(os.path.join(dev, "driver")) else None
        numa = _read(os.path.join(dev, "numa_node"))
        total = _read(os.path.join(dev, "sriov_totalvfs"))
        sriov = None
        if total is not None:
            vfs = []
            for link in _listdir(dev):
                if link.startswith("virtfn") and link[6:].isdigit():
                    vf = os.path.join(dev, link)
                    vfs.append({"index": int(link[6:]), "pci": os.path.basename(os.path.realpath(vf)),
                                "netdev": (_listdir(os.path.join(vf, "net")) or [None])[0]})
            sriov = {"total_vfs": int(total) if total.isdigit() else None,
                     "num_vfs": int(_read(os.path.join(dev, "sriov_numvfs")) or 0),
                     "vfs": sorted(vfs, key=lambda v: v["index"])}
        out[name] = {"pci": pci, "driver": driver,
                     "numa_node": int(numa) if numa and numa.lstrip("-").isdigit() and int(numa) >= 0 else None,
                     "rdma_devices": _listdir(os.path.join(dev, "infiniband")), "sriov": sriov}
    return out


def rails(facts, nics, netdevs, addresses=None):
    """Per rail NIC: ``{"netdev", "rdma_device", "port", "gid_index", "address"}`` (None where unknown).

    ``addresses``: rail NIC -> its IPv4 or IPv6 address (``/len`` allowed); the GID index is that of the RoCE v2 GID
    holding it (IPv4 as ``::ffff:a.b.c.d``, IPv6 as its own 16 bytes), see :func:`rdma_facts.roce_v2_gid_index`.

    A device name the node reports that breaks :func:`linux_names.rdma_device_problem` is never returned (it would
    reach ``ib_write_bw -d`` and the jobs' command lines): ``rdma_device`` and ``gid_index`` are None and ``problem``
    says why; ``problem`` is None otherwise."""
    out = []
    addresses = addresses or {}
    for nic in nics:
        name = device_of_netdev(facts, nic)
        if name is None and (netdevs.get(nic) or {}).get("rdma_devices"):
            name = netdevs[nic]["rdma_devices"][0]
        ports = ((facts.get("devices") or {}).get(name) or {}).get("ports") or {}
        port = next((number for number, entry in sorted(ports.items()) if (entry or {}).get("netdev") == nic), None)
        address = addresses.get(nic)
        index = roce_v2_gid_index(facts, nic, address.split("/")[0]) if address else None
        problem = None if name is None else rdma_device_problem(name, "the RDMA device of %s" % nic)
        if problem:
            name, port, index = None, None, None
        out.append({"netdev": nic, "rdma_device": name, "port": port, "gid_index": index, "address": address,
                    "problem": problem})
    return out
