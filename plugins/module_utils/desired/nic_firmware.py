# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``nic_firmware``: from the model to one host's flat desired state (controller side).

Every nvconfig value the model implies is derived from the place that already owns the fact:

* ``SRIOV_EN``/``NUM_OF_VFS``: :func:`desired.sriov.desired` (a PF of a ``cni: sriov`` fabric gets ``SRIOV_EN=1``
  and ``NUM_OF_VFS=firmware_vfs``; a rail NIC of another fabric is left as it is);
* ``LINK_TYPE_P<n>``: :func:`desired.nic_link_type.fabric_link_type` (``IB`` on an InfiniBand fabric, ``ETH``
  elsewhere); the port number comes from the PCI function on the host
  (:func:`host.nic_firmware_state.wanted_params`);
* ``ROCE_CC_PRIO_MASK_P<n>``, ``CNP_DSCP_P<n>``, ``CNP_802P_PRIO_P<n>``: the fabric's resolved QoS profile
  (:mod:`model.qos_profile`: ``dcqcn_priorities`` as a bit mask, ``cnp_dscp``, ``cnp_priority``), the same values
  the roce_qos role sets at run time and the ToR profile expects;
* ``ATS_ENABLED=0`` with ``nic_firmware_gpudirect: baremetal`` (GPUDirect RDMA peer-to-peer through the PCIe switch;
  NVIDIA's operator sets the same for ``gpuDirectOptimized.env: Baremetal``);
* ``ADVANCED_PCI_SETTINGS=1`` when a raw parameter needs it (:data:`host.nic_firmware_state.NEEDS_ADVANCED_PCI`);
* anything else from the raw list ``nic_firmware_nvconfig`` (checked: :func:`host.nic_firmware_state.check_raw`).

The module's flat options::

    {"nics": [{"nic": "ens6f0np0", "pci": None | "0000:3b:00.0", "fabric": "compute", "link_type": "ETH", "sriov_vfs": 8 | None,
               "roce": {"cc_prio_mask": 8, "cnp_dscp": 48, "cnp_priority": 6} | None}],
     "params": {"ATS_ENABLED": "0", ...}, "pins": {PSID: {...}}, "mirror": "/srv/nic-firmware",
     "bluefield_modes": {pci: "dpu" | "nic"}, "max_read_request": 4096 | None}
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.desired import sriov as sriov_desired
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.desired.nic_link_type import PCI_FIELD, fabric_link_type
from ansible_collections.ainet.fabric.plugins.module_utils.desired.nic_link_type import _pci as link_pci
from ansible_collections.ainet.fabric.plugins.module_utils.host import nic_firmware_state as state
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import fabric_interfaces

GPUDIRECT = ("none", "baremetal")


def roce_params(profile):
    """The nvconfig congestion-control values of a resolved QoS profile (None without one: InfiniBand, preset none)."""
    if not profile:
        return None
    mask = 0
    for priority in profile["dcqcn_priorities"]:
        mask |= 1 << int(priority)
    return {"cc_prio_mask": mask, "cnp_dscp": int(profile["cnp_dscp"]), "cnp_priority": int(profile["cnp_priority"])}


def options(cluster, interfaces, pins=None, mirror=None, raw=None, gpudirect="none", bluefield_modes=None,
            max_read_request=None, sriov_overrides=None, node_id=None, pci=None):
    """The module's flat options for one host. Raises FabricError (one line, naming the field) on bad input.
    ``pci``: ``nic_link_type_pci``, the PCI address of a rail NIC whose netdev has another name while its port runs
    the other link type (the same variable as the nic_link_type role's)."""
    nics_by_fabric = fabric_interfaces(cluster, interfaces)
    pci = pci or {}
    if not isinstance(pci, dict):
        raise FabricModelError(PCI_FIELD, pci, "is not a mapping of rail NIC to PCI address",
                               "e.g. {ibp12s0: '0000:0c:00.0'}")
    rail_nics = [nic for nics in nics_by_fabric.values() for nic in nics]
    unknown = sorted(str(nic) for nic in pci if nic not in rail_nics)
    if unknown:
        raise FabricModelError("%s.%s" % (PCI_FIELD, unknown[0]), pci[unknown[0]], "names no rail NIC of this host",
                               "key it by a NIC of fabric_rail_interfaces")
    pfs = sriov_desired.desired(cluster, nics_by_fabric, sriov_overrides, node_id)
    if gpudirect not in GPUDIRECT:
        raise state.NicFirmwareError("nic_firmware_gpudirect: %r is not one of %s" % (gpudirect, ", ".join(GPUDIRECT)))
    common = state.check_raw(raw or {}, "nic_firmware_nvconfig")
    if gpudirect == "baremetal":
        common["ATS_ENABLED"] = "0"
    if any(name in state.NEEDS_ADVANCED_PCI for name in common):
        common["ADVANCED_PCI_SETTINGS"] = "1"
    modes = {}
    for pci, mode in (bluefield_modes or {}).items():
        if mode not in ("dpu", "nic"):
            raise state.NicFirmwareError("nic_firmware_bluefield_modes.%s: %r is not dpu or nic" % (pci, mode))
        modes[state.check_pci(pci, "nic_firmware_bluefield_modes")] = mode
    nics = []
    for fabric in cluster.fabrics:
        for nic in nics_by_fabric.get(fabric.name, []):
            pf = pfs.get(nic)
            nics.append({"nic": nic, "pci": link_pci(pci[nic], "%s.%s" % (PCI_FIELD, nic)) if nic in pci else None,
                         "fabric": fabric.name, "link_type": fabric_link_type(fabric),
                         "sriov_vfs": pf["firmware_vfs"] if pf else None,
                         "roce": roce_params(fabric.qos) if fabric.mode != "infiniband" else None})
    return {"nics": nics, "params": common, "pins": state.check_pins(pins or {}),
            "mirror": state.check_mirror(mirror) if mirror is not None else None, "bluefield_modes": modes,
            "max_read_request": state.check_max_read_request(max_read_request)}
