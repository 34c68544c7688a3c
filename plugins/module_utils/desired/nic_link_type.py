# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``nic_link_type``: from the model to one host's flat desired state (controller side).

Every rail NIC of an ``infiniband`` fabric wants the firmware link type ``IB``, every rail NIC of any other
fabric ``ETH``. Host-local additions: ``nic_link_type_ports`` (other ports, by ``nic`` or ``pci``, with their
``link_type``: a storage or spare port the model does not describe) and ``nic_link_type_pci`` (the PCI
address of a rail NIC, for a port that runs the other link type today and so has another netdev name).
A host-local entry that contradicts the model is refused here, before any host is touched. The module's
flat option::

    {"ports": [{"nic": "ens6f0np0", "pci": None, "link_type": "ETH", "source": "fabric default"}, ...]}
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.host.nic_link_type_state import (
    BDF, LINK_TYPES, NAMES,
)
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import fabric_interfaces

PORTS_FIELD = "nic_link_type_ports"
PCI_FIELD = "nic_link_type_pci"


def fabric_link_type(fabric):
    """``IB`` for an InfiniBand fabric, ``ETH`` for every other (RoCE) fabric."""
    return "IB" if fabric.mode == "infiniband" else "ETH"


def _pci(value, field):
    text = str(value).strip().lower()
    if len(text) == 7:
        text = "0000:" + text
    if not BDF.match(text):
        raise FabricModelError(field, value, "is not a PCI address", "write it as 0000:3b:00.0")
    return text


def options(cluster, interfaces, ports=None, pci=None):
    """The module's flat options for one host. Raises FabricModelError (one line) on bad input."""
    nics_by_fabric = fabric_interfaces(cluster, interfaces)
    pci = pci or {}
    if not isinstance(pci, dict):
        raise FabricModelError(PCI_FIELD, pci, "is not a mapping of rail NIC to PCI address",
                               "e.g. {ibp12s0: '0000:0c:00.0'}")
    rail = {}
    wanted = []
    for fabric in cluster.fabrics:
        for nic in nics_by_fabric.get(fabric.name, []):
            rail[nic] = (fabric, fabric_link_type(fabric))
            wanted.append({"nic": nic, "pci": None, "link_type": rail[nic][1], "source": "fabric %s" % fabric.name})
    unknown = sorted(str(nic) for nic in pci if nic not in rail)
    if unknown:
        raise FabricModelError("%s.%s" % (PCI_FIELD, unknown[0]), pci[unknown[0]], "names no rail NIC of this host",
                               "key it by a NIC of fabric_rail_interfaces: %s" % ", ".join(sorted(rail)))
    for entry in wanted:
        if entry["nic"] in pci:
            entry["pci"] = _pci(pci[entry["nic"]], "%s.%s" % (PCI_FIELD, entry["nic"]))
    if isinstance(ports, dict):
        ports = [ports]
    for index, port in enumerate(ports or []):
        field = "%s[%d]" % (PORTS_FIELD, index)
        if not isinstance(port, dict) or not (port.get("nic") or port.get("pci")):
            raise FabricModelError(field, port, "names no port", "give nic (or pci) and link_type")
        unknown_keys = sorted(set(port) - {"nic", "pci", "link_type"})
        if unknown_keys:
            raise FabricModelError("%s.%s" % (field, unknown_keys[0]), port[unknown_keys[0]], "is not a key of a port",
                                   "use nic, pci and link_type")
        want = str(port.get("link_type", "")).upper()
        if want not in LINK_TYPES:
            raise FabricModelError(field + ".link_type", port.get("link_type"), "is not a link type",
                                   "use ETH or IB")
        address = _pci(port["pci"], field + ".pci") if port.get("pci") is not None else None
        nic = port.get("nic")
        if nic in rail:
            fabric, model_type = rail[nic]
            if want != model_type:
                raise FabricModelError(field + ".link_type", port.get("link_type"),
                                       "contradicts the model: %s is a rail NIC of fabric %s, whose addressing "
                                       "mode %s runs over %s" % (nic, fabric.name, fabric.mode, NAMES[model_type]),
                                       "remove the entry, or change the fabric's addressing mode")
            continue
        wanted.append({"nic": nic, "pci": address, "link_type": want, "source": field})
    return {"ports": wanted}
