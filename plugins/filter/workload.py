# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja2 filter of the workload settings (NCCL); all logic lives in module_utils."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import fabric_interfaces
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_addresses as _rail_addresses
from ansible_collections.ainet.fabric.plugins.module_utils.workload import nccl


def nccl_settings(cluster, node_id, interfaces, facts, socket_ifname, fabric=None, cross_nic=0, host="this node",
                  addr_range=False, architecture=None):
    """One node's NCCL settings (``env``, ``gpu_nic``, ``problems``, ``warnings``) and its ``/etc/nccl.conf`` text
    (``conf``)."""
    try:
        model = load_cluster(cluster)
        rails = _rail_addresses(cluster, node_id, "fabric_node_id")
        nics = fabric_interfaces(model, interfaces)
        for entry in rails:
            entry["interface"] = nics[entry["fabric"]][entry["rail"] - 1]
        plan = {"cluster": model.to_dict(), "nodes": {host: {"rails": rails}}}
        found = nccl.nccl_settings(plan, host, facts or {}, socket_ifname, fabric or None, cross_nic, bool(addr_range),
                                   architecture or None)
    except FabricError as exc:
        raise AnsibleFilterError(str(exc)) from None
    found["conf"] = nccl.nccl_conf(found)
    return found


class FilterModule(object):
    """ainet.fabric workload filters."""

    def filters(self):
        return {"nccl_settings": nccl_settings}
