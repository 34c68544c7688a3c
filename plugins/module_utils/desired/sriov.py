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
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.host.sriov_state import SriovError
from ansible_collections.ainet.fabric.plugins.module_utils.model.rdma_host import resolve_sriov
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import fabric_interfaces

FIELDS = ("vfs", "trust", "spoof_check", "link_state", "firmware_vfs", "fabric", "source")


def desired(cluster, nics_by_fabric, overrides=None):
    """``{pf: {"fabric", "vfs", "trust", "spoof_check", "link_state", "firmware_vfs", "source"}}``."""
    overrides = dict(overrides or {})
    out = {}
    for fabric in cluster.fabrics:
        for nic in nics_by_fabric.get(fabric.name, []):
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
            out[nic] = settings
    for nic in overrides:
        if nic not in out and not any(nic in nics for nics in nics_by_fabric.values()):
            raise SriovError("sriov_overrides.%s: %s is not a rail NIC of this node (fabric_rail_interfaces)"
                             % (nic, nic))
    return out


def options(cluster, interfaces, overrides=None):
    """The module's flat options for one host: ``{"pfs": [...]}`` sorted by PF name.

    ``cluster``: the validated model; ``interfaces``: the host's ``fabric_rail_interfaces`` (checked here);
    ``overrides``: the host's ``sriov_overrides``. Raises FabricError (one line) on bad input."""
    wanted = desired(cluster, fabric_interfaces(cluster, interfaces), overrides)
    return {"pfs": [dict([("name", name)] + [(key, wanted[name][key]) for key in FIELDS]) for name in sorted(wanted)]}
