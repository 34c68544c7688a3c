# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``pcie_acs``: from the model to one host's flat desired state (controller side).

``fabric_cluster.pcie_acs`` (resolved by :func:`rdma_host.resolve_acs`) chooses the bridges that lose ACS:
``gpu_nic`` (those above the node's GPUs and rail NICs, found on the host from ``lspci``: the module needs
the rail NICs), ``listed`` (exactly ``bridges``) or ``none``. A host-local list (``pcie_acs_bridges``), when
not empty, replaces that choice on this host. The module's flat options::

    {"disable": "gpu_nic", "nics": ["ens6f0np0", ...], "bridges": [], "source": "fabric_cluster.pcie_acs.bridges"}
    {"disable": "listed", "nics": [], "bridges": ["0000:3a:00.0"], "source": "pcie_acs_bridges"}

``source`` names where ``bridges`` come from in the host's refusals (a listed bridge that is not a PCI
bridge of the host with ACS is refused there, where ``lspci`` is read). The format of a host-local address
is checked here already, with the same line the host would give.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.host.pcie_acs_state import (
    BDF, HOST_FIELD, MODEL_FIELD, AcsError,
)
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import fabric_interfaces


def options(cluster, interfaces, bridges=None):
    """The module's flat options for one host.

    ``cluster``: the validated model; ``interfaces``: the host's ``fabric_rail_interfaces`` (checked here);
    ``bridges``: the host-local ``pcie_acs_bridges``. Raises FabricError (one line) on bad input."""
    nics_by_fabric = fabric_interfaces(cluster, interfaces)
    if isinstance(bridges, str):
        bridges = [bridges]
    if bridges:
        for index, given in enumerate(bridges):
            if not BDF.match(str(given).strip().lower()):
                raise AcsError("%s[%d] %r is not a PCI address (write it as 0000:3a:00.0)" % (HOST_FIELD, index, given))
        return {"disable": "listed", "nics": [], "bridges": [str(b) for b in bridges], "source": HOST_FIELD}
    acs = cluster.pcie_acs
    nics = [nic for fabric in cluster.fabrics for nic in nics_by_fabric.get(fabric.name, [])]
    return {"disable": acs["disable"], "nics": nics if acs["disable"] == "gpu_nic" else [],
            "bridges": list(acs["bridges"]) if acs["disable"] == "listed" else [], "source": MODEL_FIELD}
