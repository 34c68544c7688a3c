# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``rail_interfaces``: from the model to one host's flat desired state (controller side).

The host needs, per fabric of the cluster, a handful of numbers (family, supernet, rail count, the
first table and rule priority it owns, whether it routes) and how messages name the fabric's keys;
and this node's entries of the IP plan, each with its rail NIC::

    {"cluster_name": "pod1",
     "fabrics": [{"name": "default", "field_prefix": "fabric_cluster", "family": 4,
                  "supernet": "10.0.0.0/16", "rails": 2, "table_base": 150, "rule_priority": 1000,
                  "policy_routing": true, "aggregate_route": false}],
     "rails": [{"fabric": "default", "rail": 1, "interface": "ens1f0np0", "address": "10.0.0.3/24",
                "ip": "10.0.0.3", "subnet": "10.0.0.0/24", "gateway": "10.0.0.1", "mtu": 9000,
                "table": 151, "priority": 1001, ...}]}

:func:`host.rail_intent.intent_from_state` builds the host's complete intent (links, addresses,
routes, rules, sysctls, files) from exactly this, on the host.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import check_node_id
from ansible_collections.ainet.fabric.plugins.module_utils.host.rail_intent import intent_from_state
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import Planner, fabric_interfaces


def fabric_state(fabric):
    """What the host needs of one validated Fabric (the keys of ``rail_intent.FABRIC_KEYS``)."""
    return {
        "name": fabric.name,
        "field_prefix": fabric.field_prefix,
        "family": fabric.family,
        "supernet": str(fabric.supernet),
        "rails": fabric.rails,
        "table_base": fabric.table_base,
        "rule_priority": fabric.rule_priority,
        "policy_routing": fabric.policy_routing,
        "aggregate_route": bool(fabric.aggregate_route),
    }


def rail_state(cluster, node_id, interfaces, rails=None):
    """The module's flat options for one node: ``cluster_name``, ``fabrics`` and ``rails``.

    ``interfaces`` is a list (one-fabric cluster) or ``{fabric: [nic per rail]}`` (checked here, raising
    FabricModelError); ``rails`` may be given when the caller already has this node's plan entries."""
    nics = fabric_interfaces(cluster, interfaces)
    if rails is None:
        node_id = check_node_id(cluster, node_id)
        rails = [entry for fabric in cluster.fabrics for entry in Planner(fabric).node(node_id)]
    return {
        "cluster_name": cluster.name,
        "fabrics": [fabric_state(fabric) for fabric in cluster.fabrics],
        "rails": [dict(entry, interface=nics[entry["fabric"]][entry["rail"] - 1]) for entry in rails],
    }


def host_intent(cluster, node_id, interfaces, backend="networkd", rails=None):
    """The complete intent of one node straight from the model (what the module builds from :func:`rail_state`)."""
    return intent_from_state(backend=backend, **rail_state(cluster, node_id, interfaces, rails))
