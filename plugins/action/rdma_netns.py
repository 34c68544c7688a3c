# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.rdma_netns``: validates the model here (a netns mode that contradicts a
fabric's CNI is refused before the host is touched) and sends the module only the mode (:mod:`desired.rdma_netns`)."""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.desired import rdma_netns
from ansible_collections.ainet.fabric.plugins.plugin_utils.host_action import HostModuleAction


class ActionModule(HostModuleAction):

    MODEL_SPEC = {"cluster": {"type": "dict", "required": True}}

    def desired(self, cluster, args, task_vars):
        return rdma_netns.options(cluster)
