# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.rail_interfaces``: validates the model and the node's id and rail NICs here,
plans the node's rails once (the planner runs on the controller) and sends the module only the cluster's name,
what the host needs of each fabric and this node's rail entries (``cluster_name``, ``fabrics``, ``rails``;
:mod:`desired.rail`). Every argument it sends, the role's
variables among them, is checked against the module's argument spec (``rail_intent.ARGUMENT_SPEC``) here first."""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.desired import rail
from ansible_collections.ainet.fabric.plugins.module_utils.host import rail_intent
from ansible_collections.ainet.fabric.plugins.plugin_utils.host_action import HostModuleAction


class ActionModule(HostModuleAction):

    MODEL_SPEC = {
        "cluster": {"type": "dict", "required": True},
        "node_id": {"type": "raw", "required": True},
        "interfaces": {"type": "raw", "required": True},
    }
    MODULE_SPEC = rail_intent.ARGUMENT_SPEC

    def desired(self, cluster, args, task_vars):
        return rail.rail_state(cluster, args["node_id"], args["interfaces"])
