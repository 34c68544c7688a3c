# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.roce_qos``: validates the model here, resolves each fabric's lossless profile
and sends the module only its rail NICs with their settings (``nics``; :mod:`desired.roce_qos`), so neither the model
nor the profile code travels to the host."""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.desired import roce_qos
from ansible_collections.ainet.fabric.plugins.plugin_utils.host_action import HostModuleAction


class ActionModule(HostModuleAction):

    MODEL_SPEC = {
        "cluster": {"type": "dict", "required": True},
        "interfaces": {"type": "raw", "required": True},
    }

    def desired(self, cluster, args, task_vars):
        return roce_qos.options(cluster, args["interfaces"])
