# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RDMA host facts: the one normalized structure that every RDMA parser returns.

The tools of an RDMA host (iproute2 ``rdma``, ``show_gids`` and the GID sysfs files, ``ibstat`` /
``ibv_devinfo``, ``lspci -vvv``, ``mlxconfig``, ``nvidia-smi topo -m``, ``ofed_info -s``, ``lsmod``)
each say a part of the same story. A parser turns its output into an **RDMA facts** mapping; every
key is always present, empty when the source says nothing about it::

    {
      "format": "rdma_link",       # the parser(s) that produced it ("a+b" after merge)
      "available": True,           # False: the tool is missing or printed only an error
      "system": {...},             # RDMA subsystem settings
      "devices": {"mlx5_0": {...}},  # RDMA devices by name
      "pci": {"0000:17:00.0": {...}},  # PCI functions by address
      "firmware": {"0000:3b:00.0": {...}},  # mlxconfig, by the device it was asked about
      "topology": {...},           # nvidia-smi topo -m
      "ofed": {...},               # ofed_info -s
      "modules": {...},            # lsmod
      "problems": ["..."],         # recognisable but broken lines, error lines, each naming the line
    }

A value the source does not state is ``None`` (or an empty container) - never a guessed default.

``system``
    ``netns``: ``"shared"`` | ``"exclusive"`` | None; ``copy_on_fork``, ``privileged_qkey``,
    ``monitor``: bool | None (``rdma system show``; ``netns`` also from the ``ib_core``
    ``netns_mode`` parameter).

``devices[<name>]`` (:func:`new_device`)
    ``netdevs``: sorted list of the netdevs of its ports and GIDs; ``ca_type`` (``MT4129``),
    ``fw_ver``, ``node_guid``, ``sys_image_guid`` (as printed, ``0x`` or colon form),
    ``board_id``, ``vendor_id``, ``vendor_part_id``, ``transport``; ``ports``: ``{port (int):
    port}``; ``gids``: list of GIDs sorted by port and index.

port (:func:`new_port`)
    ``state`` (``ACTIVE``, ``DOWN``, ``INIT``, ``ARMED``; upper case whatever the tool),
    ``physical_state`` (``LINK_UP``, ``DISABLED``, ``POLLING``, ``NOP``, ... upper case with
    underscores: ibstat's ``LinkUp`` becomes ``LINK_UP``), ``link_layer`` (``Ethernet`` |
    ``InfiniBand``), ``netdev``, ``netdev_index``, ``rate`` (Gb/s, int), ``lid``, ``sm_lid``,
    ``subnet_prefix``, ``port_guid``.

GID (:func:`new_gid`)
    ``port`` (int), ``index`` (int), ``gid`` (as printed), ``ipv4`` (the IPv4 address of an
    IPv4-mapped GID, else None), ``type`` (``"RoCE v2"``, ``"RoCE v1"`` or ``"IB"``: show_gids'
    ``v1`` and sysfs' ``IB/RoCE v1`` are RoCE v1 when the GID has a netdev, IB when not),
    ``netdev``.

``pci[<address>]`` (:func:`new_pci`)
    keyed by the address as printed (``0000:17:00.0`` with ``lspci -D``, ``17:00.0`` without),
    lower case. ``class`` (``PCI bridge``), ``class_id`` (``0604`` with ``-nn``), ``description``
    (the rest of the header line), ``vendor_id`` / ``device_id`` (``-nn``), ``kind`` (``gpu``,
    ``rdma_nic``, ``bridge``, ``other``: Mellanox/NVIDIA network, InfiniBand and DMA functions
    are ``rdma_nic``; NVIDIA 3D/VGA controllers ``gpu``), ``numa_node`` (int), ``driver``,
    ``bus`` (``{"primary", "secondary", "subordinate"}`` hex strings of a bridge), ``acs``
    (``{"cap": {bit: bool}, "ctl": {bit: bool}}`` with the bits of :data:`ACS_BITS`, None when
    the function has no ACS capability), ``sriov`` (``{"initial_vfs", "total_vfs", "num_vfs",
    "vf_offset", "vf_stride", "vf_device_id"}`` or None), ``parent`` (the bridge whose secondary
    bus holds it) and ``upstream`` (the bridge chain up to the root port, nearest first) - both
    only where the bridges' ``Bus:`` lines are in the same output.

``firmware[<device>]`` (:func:`new_firmware`)
    ``device`` (the ``Device:`` line), ``device_type``, ``name``, ``description``, ``configs``:
    ``{NAME: {"default", "current", "next_boot"}}`` raw strings (None where a column is not
    printed: the plain ``q`` prints the next-boot column only); typed fields ``link_type_p1``,
    ``link_type_p2`` (``"ETH"``, ``"IB"``, ``"VPI"``), ``sriov_en`` (bool), ``num_of_vfs`` (int)
    from the next-boot column, ``current`` (the same four from the current column, None when not
    printed) and ``pending`` (sorted names whose next-boot value differs from the current one:
    a reboot or firmware reset is due).

``topology``
    ``gpus``: ``{"GPU0": {"cpu_affinity", "numa_affinity", "gpu_numa_id"}}``; ``nics``:
    ``{"NIC0": {"device": "mlx5_0"}}`` (the NIC Legend; old drivers name the columns ``mlx5_0``
    themselves); ``links``: ``{a: {b: relation}}`` for every pair printed (``X``, ``SYS``,
    ``NODE``, ``PHB``, ``PXB``, ``PIX``, ``NV18``...); ``gpu_nic``: ``{"GPU0": {"mlx5_0": "PIX"}}``
    keyed by RDMA device where the legend names it.

``ofed``
    ``version`` (``5.8-1.1.2.1``, ``24.10-1.1.4.0.200``), ``flavour`` (``mlnx_ofed``: MLNX_OFED;
    ``doca``: ``OFED-internal`` 24.x and later, the DOCA-OFED packages; ``ofed_internal``: an older
    ``OFED-internal`` build), ``raw``.

``modules``
    ``loaded``: sorted module names; ``rdma``: ``{name: bool}`` for :data:`RDMA_MODULES`.
"""

from __future__ import annotations

import ipaddress
import re

ACS_BITS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")
RDMA_MODULES = ("ib_core", "ib_uverbs", "rdma_cm", "rdma_ucm", "mlx5_core", "mlx5_ib", "rdma_rxe", "nvidia_peermem",
                "nv_peer_mem", "gdrdrv")
PORT_FIELDS = ("state", "physical_state", "link_layer", "netdev", "netdev_index", "rate", "lid", "sm_lid",
               "subnet_prefix", "port_guid")
DEVICE_FIELDS = ("ca_type", "fw_ver", "node_guid", "sys_image_guid", "board_id", "vendor_id", "vendor_part_id",
                 "transport")
FIRMWARE_TYPED = ("link_type_p1", "link_type_p2", "sriov_en", "num_of_vfs")

# Lines that mean "the tool did not run / failed", whatever the tool.
ERROR_LINE = re.compile(r"(\bnot found\b|No such file or directory|^-E-|^ibpanic:|^ibwarn:.*fail|Unknown object|"
                        r"has failed|Failed to|^[Ee]rror\b[: ]|Permission denied|Operation not permitted|"
                        r"Invalid argument|couldn't communicate|No devices found|Cannot find|Unable to)")


def new_facts(fmt, problems=None):
    """An empty facts mapping for ``fmt``."""
    return {"format": fmt, "available": True,
            "system": {"netns": None, "copy_on_fork": None, "privileged_qkey": None, "monitor": None},
            "devices": {}, "pci": {}, "firmware": {},
            "topology": {"gpus": {}, "nics": {}, "links": {}, "gpu_nic": {}},
            "ofed": {"version": None, "flavour": None, "raw": None},
            "modules": {"loaded": [], "rdma": {}},
            "problems": list(problems or [])}


def new_device():
    out = dict.fromkeys(DEVICE_FIELDS)
    out.update({"netdevs": [], "ports": {}, "gids": []})
    return out


def new_port():
    return dict.fromkeys(PORT_FIELDS)


def new_gid(port, index, gid, gid_type, netdev=None, ipv4=None):
    return {"port": port, "index": index, "gid": gid, "ipv4": ipv4 or ipv4_of_gid(gid), "type": gid_type,
            "netdev": netdev or None}


def new_pci():
    return {"class": None, "class_id": None, "description": None, "vendor_id": None, "device_id": None,
            "kind": "other", "numa_node": None, "driver": None, "bus": None, "acs": None, "sriov": None,
            "parent": None, "upstream": []}


def new_firmware():
    out = {"device": None, "device_type": None, "name": None, "description": None, "configs": {}, "pending": [],
           "current": dict.fromkeys(FIRMWARE_TYPED)}
    out.update(dict.fromkeys(FIRMWARE_TYPED))
    return out


def device(facts, name):
    """``facts["devices"][name]``, created when absent."""
    if name not in facts["devices"]:
        facts["devices"][name] = new_device()
    return facts["devices"][name]


def port(facts, name, number):
    """The port ``number`` of device ``name``, created when absent."""
    ports = device(facts, name)["ports"]
    if number not in ports:
        ports[number] = new_port()
    return ports[number]


def not_available(fmt, text, why=None):
    """The facts of a tool that did not run: ``available`` False and one problem naming why."""
    facts = new_facts(fmt)
    facts["available"] = False
    first = first_line(text)
    facts["problems"].append(why or ("%s not available: %s" % (fmt, first) if first else "%s: no output" % fmt))
    return facts


def first_line(text):
    for line in str(text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def error_lines(text):
    """The lines of ``text`` that look like a tool's error message."""
    return [line.strip() for line in str(text or "").splitlines() if ERROR_LINE.search(line.strip())]


def finish(facts, text, found):
    """Common ending: no facts found -> not available (naming the error line, if any); error lines
    next to facts -> one problem each. Also fills each device's ``netdevs``."""
    errors = error_lines(text)
    if not found:
        facts["available"] = False
        if errors:
            facts["problems"].insert(0, "%s not available: %s" % (facts["format"], errors[0]))
        elif not str(text or "").strip():
            facts["problems"].insert(0, "%s: no output" % facts["format"])
        else:
            facts["problems"].insert(0, "%s: nothing recognisable in the output (first line: %r)"
                                     % (facts["format"], first_line(text)[:120]))
    else:
        for line in errors:
            facts["problems"].append("%s: error line in the output: %s" % (facts["format"], line))
    for item in facts["devices"].values():
        refresh_netdevs(item)
    return facts


def refresh_netdevs(dev):
    names = set(dev.get("netdevs") or [])
    names.update(p.get("netdev") for p in dev["ports"].values() if p.get("netdev"))
    names.update(g.get("netdev") for g in dev["gids"] if g.get("netdev"))
    dev["netdevs"] = sorted(names)
    dev["gids"].sort(key=lambda g: (g.get("port") or 0, g.get("index") or 0))


def to_int(value):
    """``value`` as an int (decimal, or hex with 0x); None when not a number."""
    if value is None or isinstance(value, bool):
        return None
    text = str(value).strip()
    try:
        return int(text, 16) if text.lower().startswith("0x") else int(text)
    except ValueError:
        return None


def ipv4_of_gid(gid):
    """The IPv4 address of an IPv4-mapped GID (``0000:...:ffff:0a1f:0402`` -> ``10.31.4.2``), else None."""
    parts = str(gid or "").lower().split(":")
    if len(parts) != 8 or parts[:6] != ["0000"] * 5 + ["ffff"]:
        return None
    try:
        high, low = int(parts[6], 16), int(parts[7], 16)
    except ValueError:
        return None
    return "%d.%d.%d.%d" % (high >> 8, high & 255, low >> 8, low & 255)


def gid_type(version, netdev):
    """show_gids' ``v1``/``v2`` or sysfs' ``IB/RoCE v1``/``RoCE v2`` as ``RoCE v2``, ``RoCE v1`` or ``IB``."""
    text = str(version or "").strip().lower()
    if text.endswith("v2"):
        return "RoCE v2"
    if text.endswith("v1"):
        return "RoCE v1" if netdev else "IB"
    if text == "ib":
        return "IB"
    return None


def _merge_value(base, extra):
    if isinstance(base, dict) and isinstance(extra, dict):
        out = dict(base)
        for key, value in extra.items():
            out[key] = _merge_value(out[key], value) if key in out else value
        return out
    if extra is None or extra == [] or extra == {}:
        return base
    return extra


def merge(*facts):
    """One facts mapping from several partial ones about the same host (``rdma_link`` + ``show_gids`` +
    ``ibstat`` + ...): later sources fill and override what earlier ones state; GIDs are merged by
    (port, index), netdevs and loaded modules are united, problems concatenated."""
    items = [item for item in facts if item]
    out = new_facts("+".join(item.get("format") or "?" for item in items) or "none")
    out["available"] = any(item.get("available", True) for item in items) if items else False
    for item in items:
        out["problems"] += item.get("problems") or []
        out["system"] = _merge_value(out["system"], item.get("system") or {})
        for name, dev in (item.get("devices") or {}).items():
            base = out["devices"].get(name) or new_device()
            gids = dict(((g.get("port"), g.get("index")), g) for g in base["gids"])
            gids.update(((g.get("port"), g.get("index")), g) for g in dev.get("gids") or [])
            netdevs = set(base["netdevs"]) | set(dev.get("netdevs") or [])
            merged = _merge_value(dict(base, gids=[]), dict(dev, gids=[]))
            merged["gids"] = list(gids.values())
            merged["netdevs"] = sorted(netdevs)
            refresh_netdevs(merged)
            out["devices"][name] = merged
        for key in ("pci", "firmware", "topology", "ofed"):
            out[key] = _merge_value(out[key], item.get(key) or {})
        mods = item.get("modules") or {}
        out["modules"]["loaded"] = sorted(set(out["modules"]["loaded"]) | set(mods.get("loaded") or []))
        out["modules"]["rdma"] = _merge_value(out["modules"]["rdma"], mods.get("rdma") or {})
    return out


def _gid_holds(gid, address):
    """Whether a GID entry is ``address``: its IPv4 (an IPv4-mapped GID), or for an IPv6 address the GID itself."""
    if ":" not in address:
        return gid.get("ipv4") == address
    try:
        return ipaddress.ip_address(gid.get("gid") or "") == ipaddress.ip_address(address)
    except ValueError:
        return False


def roce_v2_gid_index(facts, device_or_netdev, address):
    """The index of the RoCE v2 GID of ``address`` (IPv4, or IPv6: the GID is the address) on the RDMA
    device (or netdev) ``device_or_netdev``; None when there is none. Given a netdev, only GIDs of that
    netdev count (a bond and a VXLAN on it can carry the same address under different indexes). With
    several ports, the lowest port wins, then the lowest index."""
    found = []
    for name, dev in sorted((facts or {}).get("devices", {}).items()):
        by_device = name == device_or_netdev
        for gid in dev.get("gids") or []:
            if gid.get("type") != "RoCE v2" or not _gid_holds(gid, address):
                continue
            if by_device or gid.get("netdev") == device_or_netdev:
                found.append((gid.get("port") or 0, gid.get("index")))
    return min(found)[1] if found else None


def device_of_netdev(facts, netdev):
    """The RDMA device whose port or GID carries ``netdev`` (the rail NIC -> RDMA device map); None when none."""
    for name, dev in sorted((facts or {}).get("devices", {}).items()):
        if netdev in (dev.get("netdevs") or []):
            return name
    return None
