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

from ansible_collections.ainet.fabric.plugins.module_utils.model import model_schema
from ansible_collections.ainet.fabric.plugins.module_utils.model.model_schema import given
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError

# What each CNI (the schema's choices of a fabric's `cni`) can attach to, and the netns mode it needs.
CNI_BY_MODE = {"roce": ("host", "sriov", "host-device", "macvlan", "ipvlan"),
               "infiniband": ("host", "sriov", "host-device", "ipoib")}
NETNS = {"sriov": "exclusive", "host-device": "exclusive", "macvlan": "shared", "ipvlan": "shared",
         "ipoib": "shared", "host": None}
# The schema's PCI address format, under the name the host wing reads.
BDF = model_schema.BDF


def _err(field, value, problem, fix):
    return FabricModelError(field, value, problem, fix)


def resolve_cni(cni, field, kind):
    """A fabric's ``cni`` (normalised; ``kind``: roce or infiniband), checked against the fabric's kind."""
    cni = "host" if cni is None else cni
    if cni not in CNI_BY_MODE[kind]:
        raise _err(field, cni, "cannot attach pods to an %s fabric" % ("InfiniBand" if kind == "infiniband" else
                                                                       "Ethernet (RoCE)"),
                   "use one of: %s" % ", ".join(CNI_BY_MODE[kind]))
    return cni


def resolve_sriov(raw, field, cni):
    """A fabric's ``sriov`` mapping as written (in inventory, or a host's override) resolved: the schema
    checks and normalises it first (None unless ``cni`` is sriov)."""
    if cni == "sriov" and raw is not None:
        raw = model_schema.normalized(raw, model_schema.SRIOV, field, part=True)
    return sriov_settings(raw, field, cni)


def sriov_settings(values, field, cni):
    """A fabric's ``sriov`` mapping, normalised by the schema, resolved (None unless ``cni`` is sriov)."""
    if cni != "sriov":
        if values:
            raise _err(field, values, "is set while the fabric's cni is %s" % cni,
                       "remove sriov, or set cni: sriov")
        return None
    vfs = given(values, "vfs")
    if vfs is None:
        raise _err(field + ".vfs", None, "is missing (cni sriov needs VFs on every rail PF)",
                   "set sriov.vfs, e.g. 8")
    firmware = given(values, "firmware_vfs", vfs)
    if firmware < vfs:
        raise _err(field + ".firmware_vfs", firmware, "is below sriov.vfs %d (the firmware would refuse them)" % vfs,
                   "set firmware_vfs to at least %d, or leave it out" % vfs)
    return {"vfs": vfs, "trust": given(values, "trust", False), "spoof_check": given(values, "spoof_check", True),
            "link_state": given(values, "link_state", "auto"), "firmware_vfs": firmware}


def resolve_netns(raw, field, fabrics):
    """The RDMA netns mode every node runs: ``raw`` (``fabric_cluster.rdma_netns``, normalised) or what the
    fabrics' CNIs need; ``fabrics`` is ``[(name, cni field, cni)]``. None: no fabric cares (left as the kernel
    has it)."""
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
    for name, where, cni, mode in needs:
        if mode != raw:
            raise _err(field, raw, "contradicts %s: cni %s (fabric %s) needs %s" % (where, cni, name, mode),
                       "remove rdma_netns (it follows the CNIs) or change the fabric's cni")
    return raw


def resolve_acs(raw, field):
    """``fabric_cluster.pcie_acs`` as written resolved: ``{"disable": mode, "bridges": [bdf, ...]}`` (the
    schema checks and normalises it first)."""
    if raw is not None:
        raw = model_schema.normalized(raw, model_schema.PCIE_ACS, field, part=True)
    return acs_settings(raw, field)


def acs_settings(values, field):
    """``fabric_cluster.pcie_acs``, normalised by the schema, resolved."""
    mode = given(values, "disable", "gpu_nic")
    bridges = given(values, "bridges", [])
    if mode == "listed" and not bridges:
        raise _err(field + ".bridges", bridges, "is empty while disable is listed",
                   "list the bridges, e.g. [0000:3a:00.0]")
    if mode != "listed" and bridges:
        raise _err(field + ".bridges", bridges, "is set while disable is %s" % mode,
                   "set disable: listed, or remove bridges")
    return {"disable": mode, "bridges": list(bridges)}
