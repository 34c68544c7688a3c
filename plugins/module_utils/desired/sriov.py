# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``sriov``: from the model to one host's flat desired state (controller side).

For every fabric with ``cni: sriov``, each of the node's rail NICs of that fabric is a PF with the
fabric's ``sriov`` settings (``vfs``, ``trust``, ``spoof_check``, ``link_state``, ``firmware_vfs``),
unless a host-local override (``sriov_overrides: {nic: {...}}``) changes them for this node; an
override is validated like the model (:func:`rdma_host.resolve_sriov`) and refused on a NIC that is
not a rail NIC of an SR-IOV fabric. The module's flat option (:func:`options`)::

    {"pfs": [{"name": "ens1f0np0", "vfs": 8, "trust": True, "spoof_check": True, "link_state": "auto",
              "firmware_vfs": 8, "fabric": "compute", "source": "fabric_cluster.fabrics.compute.sriov"}]}

``source`` is where the settings come from (the model or the override), ``fabric`` the PF's fabric:
the host names both in its refusals. A rail NIC of a fabric without SR-IOV is not listed; the host
releases the VFs it made on a PF that is no longer listed.

**InfiniBand** (a fabric with ``addressing.mode: infiniband``): each PF entry also carries
``"link_layer": "infiniband"`` and ``"vf_guids"``, one GUID per VF (:func:`vf_guid`), which the host sets
as the VF's node and port GUID. A new IB VF's GUID is all zeros, and ib-sriov-cni refuses such a VF when
the network gives it no GUID (Mellanox/ib-sriov-cni ``pkg/sriov/sriov.go`` ``applyVFGuid``). Ethernet PF
entries are unchanged (no ``link_layer``, no GUID).

**The GUID scheme** (:func:`vf_guid`), eight octets ``02:TT:TT:NN:NN:NN:RR:VV``:

- ``02``: the U/L bit set and the I/G bit clear, so a locally administered, individual EUI-64 in the
  SLAP quadrant "AAI" (administratively assigned, IEEE 802c-2017: second nibble 2). Every IEEE-assigned
  identifier (an OUI, MA-L/M/S, or a CID) has either the U/L bit clear (OUIs: vendor GUIDs such as
  Mellanox's 00:02:c9, NVIDIA's b8:59:9f, 0c:42:a1) or sits in the SAI quadrant (CIDs, second nibble
  ``a``), so no vendor-assigned GUID (a PF's, a switch's) can equal one of these. Never all zeros or all
  ones, the two values ib-sriov-cni refuses.
- ``TT:TT``: the first 16 bits of SHA-256 of ``"<cluster name>/<fabric name>"``: two fabrics of one
  cluster (refused if their tags collide) and, most likely, two clusters on one subnet differ.
- ``NN:NN:NN``: ``fabric_node_id`` (1..16777215), the node's stable identity, never inventory order.
- ``RR``: the rail id (1..64), the NIC's position in the node's rail list.
- ``VV``: the VF index (0..126).

So the GUID of a VF depends only on values that the plan itself keeps stable (the cluster and fabric
names, the node id, the rail id) and the VF index: the same on every run and every boot, and different
for any two VFs of one cluster.
"""

from __future__ import annotations

import hashlib

from ansible_collections.ainet.fabric.plugins.module_utils.host.sriov_state import SriovError
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import check_node_id
from ansible_collections.ainet.fabric.plugins.module_utils.model.rdma_host import resolve_sriov
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import fabric_interfaces

FIELDS = ("vfs", "trust", "spoof_check", "link_state", "firmware_vfs", "fabric", "source")
IB_FIELDS = ("link_layer", "vf_guids")
GUID_FIRST_OCTET = 0x02  # locally administered (U/L bit), individual (I/G clear), SLAP quadrant AAI
MAX_GUID_NODE_ID = (1 << 24) - 1


def fabric_tag(cluster_name, fabric_name):
    """The 16-bit tag of one fabric of one cluster in its VFs' GUIDs."""
    digest = hashlib.sha256(("%s/%s" % (cluster_name, fabric_name)).encode("utf-8")).digest()
    return (digest[0] << 8) | digest[1]


def vf_guid(cluster_name, fabric_name, node_id, rail, index):
    """The node and port GUID of VF ``index`` of the node's rail NIC ``rail`` (1-based) on an InfiniBand fabric:
    ``02:TT:TT:NN:NN:NN:RR:VV`` (see the module docstring), as ``ip link`` writes and reads it."""
    tag = fabric_tag(cluster_name, fabric_name)
    octets = [GUID_FIRST_OCTET, tag >> 8, tag & 0xff, (node_id >> 16) & 0xff, (node_id >> 8) & 0xff, node_id & 0xff,
              rail, index]
    return ":".join("%02x" % o for o in octets)


def _ib_fabrics(cluster):
    return [f for f in cluster.fabrics if f.cni == "sriov" and f.mode == "infiniband"]


def guid_node_id(cluster, node_id):
    """``fabric_node_id`` checked for the GUIDs of an InfiniBand SR-IOV fabric (one line naming it on refusal)."""
    if node_id is None:
        fabric = _ib_fabrics(cluster)[0]
        raise SriovError("fabric_node_id: is missing; the GUIDs of the InfiniBand VFs of fabric %s are derived from it "
                         "(fix: set fabric_node_id for this host, as the rail_network role needs it too)" % fabric.name)
    node_id = check_node_id(cluster, node_id)
    if node_id > MAX_GUID_NODE_ID:
        raise SriovError("fabric_node_id: %d is above %d, the largest node id an InfiniBand VF GUID holds (fix: "
                         "number the nodes from 1)" % (node_id, MAX_GUID_NODE_ID))
    tags = {}
    for fabric in _ib_fabrics(cluster):
        tag = fabric_tag(cluster.name, fabric.name)
        if tag in tags:
            raise SriovError("%s: the VF GUID tag of InfiniBand fabric %s (%04x) equals fabric %s's in cluster %s (fix: "
                             "rename one of the two fabrics)"
                             % (fabric.field("cni"), fabric.name, tag, tags[tag], cluster.name))
        tags[tag] = fabric.name
    return node_id


def desired(cluster, nics_by_fabric, overrides=None, node_id=None):
    """``{pf: {"fabric", "vfs", "trust", "spoof_check", "link_state", "firmware_vfs", "source"}}``, plus
    ``"link_layer": "infiniband"`` and ``"vf_guids"`` on an InfiniBand fabric (``node_id`` is then required)."""
    overrides = dict(overrides or {})
    out = {}
    if _ib_fabrics(cluster) and any(nics_by_fabric.get(f.name) for f in _ib_fabrics(cluster)):
        node_id = guid_node_id(cluster, node_id)
    for fabric in cluster.fabrics:
        for rail, nic in enumerate(nics_by_fabric.get(fabric.name, []), 1):
            if fabric.cni != "sriov":
                if nic in overrides:
                    raise SriovError("sriov_overrides.%s: %s is a rail NIC of fabric %s, whose cni is %s, not sriov "
                                     "(fix: remove the override, or set the fabric's cni: sriov)"
                                     % (nic, nic, fabric.name, fabric.cni))
                continue
            settings = dict(fabric.sriov)
            source = fabric.field("sriov")
            if nic in overrides:
                if overrides[nic] is not None and not isinstance(overrides[nic], dict):
                    raise SriovError("sriov_overrides.%s: %r is not a mapping (write it as {vfs: 4, trust: true})"
                                     % (nic, overrides[nic]))
                given = dict(overrides[nic] or {})
                raw = dict((k, v) for k, v in fabric.sriov.items() if k != "firmware_vfs")
                raw.update(given)
                settings = resolve_sriov(raw, "sriov_overrides.%s" % nic, "sriov")
                if "firmware_vfs" not in given:
                    settings["firmware_vfs"] = max(settings["firmware_vfs"], fabric.sriov["firmware_vfs"])
                source = "sriov_overrides.%s" % nic
            settings.update(fabric=fabric.name, source=source)
            if fabric.mode == "infiniband":
                settings.update(link_layer="infiniband",
                                vf_guids=[vf_guid(cluster.name, fabric.name, node_id, rail, index)
                                          for index in range(settings["vfs"])])
            out[nic] = settings
    for nic in overrides:
        if nic not in out and not any(nic in nics for nics in nics_by_fabric.values()):
            raise SriovError("sriov_overrides.%s: %s is not a rail NIC of this node (fabric_rail_interfaces)"
                             % (nic, nic))
    return out


def options(cluster, interfaces, overrides=None, node_id=None):
    """The module's flat options for one host: ``{"pfs": [...]}`` sorted by PF name.

    ``cluster``: the validated model; ``interfaces``: the host's ``fabric_rail_interfaces`` (checked here);
    ``overrides``: the host's ``sriov_overrides``; ``node_id``: its ``fabric_node_id`` (needed only on an
    InfiniBand SR-IOV fabric). Raises FabricError (one line) on bad input."""
    wanted = desired(cluster, fabric_interfaces(cluster, interfaces), overrides, node_id)
    return {"pfs": [dict([("name", name)] + [(key, wanted[name][key]) for key in FIELDS + IB_FIELDS
                                             if key in wanted[name]]) for name in sorted(wanted)]}
