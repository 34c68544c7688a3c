# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host side of RDMA in the cluster model: how pods attach to each fabric, its SR-IOV VFs, the RDMA
netns mode every node must run, and which PCIe bridges lose ACS.

These settings must agree on every node, so they live in ``fabric_cluster`` and are resolved here
once; host roles (SR-IOV, RDMA netns, PCIe ACS) read the resolved values.

* per fabric ``cni``: ``host`` (no CNI; RDMA from the host network namespace), ``sriov`` (a VF per
  pod, SR-IOV CNI / sriov-network-operator), ``host-device`` (a whole NIC moved into a pod),
  ``macvlan`` / ``ipvlan`` (Spiderpool's shared-RDMA mode over macvlan or ipvlan children) or
  ``ipoib`` (IPoIB children on InfiniBand). Seed 003 (Spiderpool's RDMA overview): a device that is
  moved into a pod's namespace (a VF, a whole NIC) needs the RDMA subsystem in **exclusive** netns
  mode; devices shared by many pods (macvlan, ipvlan, ipoib children) need **shared** mode.
* per fabric ``sriov`` (only with ``cni: sriov``): ``vfs`` per rail PF, ``trust``, ``spoof_check``,
  ``link_state`` and ``firmware_vfs`` (the Mellanox ``NUM_OF_VFS`` the firmware must allow).
* cluster ``rdma_netns``: ``exclusive`` or ``shared``; by default what the fabrics' CNIs need. Two
  fabrics that need different modes, or an explicit mode against a fabric's CNI, is an error that
  names both: the mode is one kernel-wide setting per node.
* cluster ``pcie_acs``: ``disable`` ``gpu_nic`` (the bridges on the path between a GPU and an RDMA
  NIC, found on each node), ``listed`` (only ``bridges``) or ``none``.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError

CNIS = ("host", "sriov", "host-device", "macvlan", "ipvlan", "ipoib")
CNI_BY_MODE = {"roce": ("host", "sriov", "host-device", "macvlan", "ipvlan"),
               "infiniband": ("host", "sriov", "host-device", "ipoib")}
NETNS = {"sriov": "exclusive", "host-device": "exclusive", "macvlan": "shared", "ipvlan": "shared",
         "ipoib": "shared", "host": None}
LINK_STATES = ("auto", "enable", "disable")
ACS_MODES = ("gpu_nic", "listed", "none")
SRIOV_KEYS = ("vfs", "trust", "spoof_check", "link_state", "firmware_vfs")
BDF = re.compile(r"^(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\Z")
MAX_VFS = 127


def _err(field, value, problem, fix):
    return FabricModelError(field, value, problem, fix)


def _bool(value, field, default):
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "true", "on", "1", "no", "false", "off", "0"):
        return value.strip().lower() in ("yes", "true", "on", "1")
    raise _err(field, value, "is not a boolean", "use true or false")


def _int(value, field, low, high):
    if isinstance(value, bool) or not re.match(r"^ *[0-9]+ *\Z", str(value)):
        raise _err(field, value, "is not an integer", "use %d..%d" % (low, high))
    number = int(value)
    if not low <= number <= high:
        raise _err(field, value, "is out of range", "use %d..%d" % (low, high))
    return number


def resolve_cni(raw, field, kind):
    """A fabric's ``cni`` (``kind``: roce or infiniband), checked against the fabric's kind."""
    cni = raw if raw is not None else "host"
    if cni not in CNIS:
        raise _err(field, cni, "is not a known CNI", "use one of: %s" % ", ".join(CNIS))
    if cni not in CNI_BY_MODE[kind]:
        raise _err(field, cni, "cannot attach pods to an %s fabric" % ("InfiniBand" if kind == "infiniband" else
                                                                       "Ethernet (RoCE)"),
                   "use one of: %s" % ", ".join(CNI_BY_MODE[kind]))
    return cni


def resolve_sriov(raw, field, cni):
    """A fabric's ``sriov`` mapping resolved (None unless ``cni`` is sriov)."""
    if cni != "sriov":
        if raw:
            raise _err(field, raw, "is set while the fabric's cni is %s" % cni,
                       "remove sriov, or set cni: sriov")
        return None
    raw = dict(raw or {})
    unknown = sorted(str(k) for k in raw if k not in SRIOV_KEYS)
    if unknown:
        raise _err("%s.%s" % (field, unknown[0]), raw[unknown[0]], "is not a known key",
                   "use one of: %s" % ", ".join(SRIOV_KEYS))
    if raw.get("vfs") is None:
        raise _err(field + ".vfs", None, "is missing (cni sriov needs VFs on every rail PF)",
                   "set sriov.vfs, e.g. 8")
    vfs = _int(raw["vfs"], field + ".vfs", 1, MAX_VFS)
    firmware = _int(raw["firmware_vfs"], field + ".firmware_vfs", 1, MAX_VFS) if raw.get("firmware_vfs") is not None \
        else vfs
    if firmware < vfs:
        raise _err(field + ".firmware_vfs", firmware, "is below sriov.vfs %d (the firmware would refuse them)" % vfs,
                   "set firmware_vfs to at least %d, or leave it out" % vfs)
    link_state = raw.get("link_state", "auto")
    if link_state not in LINK_STATES:
        raise _err(field + ".link_state", link_state, "is not a VF link state", "use one of: %s" % ", ".join(LINK_STATES))
    return {"vfs": vfs, "trust": _bool(raw.get("trust"), field + ".trust", False),
            "spoof_check": _bool(raw.get("spoof_check"), field + ".spoof_check", True),
            "link_state": link_state, "firmware_vfs": firmware}


def resolve_netns(raw, field, fabrics):
    """The RDMA netns mode every node runs: ``raw`` (``fabric_cluster.rdma_netns``) or what the fabrics'
    CNIs need; ``fabrics`` is ``[(name, cni field, cni)]``. None: no fabric cares (left as the kernel has it)."""
    needs = [(name, where, cni, NETNS[cni]) for name, where, cni in fabrics if NETNS[cni]]
    modes = sorted({mode for _n, _w, _c, mode in needs})
    if len(modes) > 1:
        first = next(n for n in needs if n[3] == "exclusive")
        second = next(n for n in needs if n[3] == "shared")
        raise _err(second[1], second[2], "needs RDMA netns mode shared, but %s (cni %s, fabric %s) needs exclusive; "
                   "the mode is one setting per node" % (first[1], first[2], first[0]),
                   "use one kind of CNI on every fabric (sriov/host-device, or macvlan/ipvlan/ipoib)")
    if raw is None:
        return modes[0] if modes else None
    if raw not in ("exclusive", "shared"):
        raise _err(field, raw, "is not an RDMA netns mode", "use exclusive or shared")
    for name, where, cni, mode in needs:
        if mode != raw:
            raise _err(field, raw, "contradicts %s: cni %s (fabric %s) needs %s" % (where, cni, name, mode),
                       "remove rdma_netns (it follows the CNIs) or change the fabric's cni")
    return raw


def resolve_acs(raw, field):
    """``fabric_cluster.pcie_acs`` resolved: ``{"disable": mode, "bridges": [bdf, ...]}``."""
    raw = dict(raw or {})
    unknown = sorted(str(k) for k in raw if k not in ("disable", "bridges"))
    if unknown:
        raise _err("%s.%s" % (field, unknown[0]), raw[unknown[0]], "is not a known key", "use disable or bridges")
    mode = raw.get("disable", "gpu_nic")
    if mode not in ACS_MODES:
        raise _err(field + ".disable", mode, "is not an ACS mode", "use one of: %s" % ", ".join(ACS_MODES))
    bridges = raw.get("bridges") or []
    if isinstance(bridges, str):
        bridges = [bridges]
    out = []
    for i, bdf in enumerate(bridges):
        text = str(bdf).strip().lower()
        if not BDF.match(text):
            raise _err("%s.bridges[%d]" % (field, i), bdf, "is not a PCI address", "write it as 0000:3a:00.0")
        out.append(text if text.count(":") == 2 else "0000:" + text)
    if mode == "listed" and not out:
        raise _err(field + ".bridges", bridges, "is empty while disable is listed", "list the bridges, e.g. [0000:3a:00.0]")
    if mode != "listed" and out:
        raise _err(field + ".bridges", bridges, "is set while disable is %s" % mode, "set disable: listed, or remove bridges")
    return {"disable": mode, "bridges": out}
