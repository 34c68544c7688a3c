# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.sriov``: validates the model and the host-local overrides here and sends
the module only this host's PFs and their VF settings (``pfs``; :mod:`desired.sriov`)."""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.desired import sriov
from ansible_collections.ainet.fabric.plugins.plugin_utils.host_action import HostModuleAction


class ActionModule(HostModuleAction):

    MODEL_SPEC = {
        "cluster": {"type": "dict", "required": True},
        "interfaces": {"type": "raw", "required": True},
        "overrides": {"type": "dict", "default": {}},
        "node_id": {"type": "raw"},
    }

    def desired(self, cluster, args, task_vars):
        return sriov.options(cluster, args["interfaces"], args["overrides"], args["node_id"])
