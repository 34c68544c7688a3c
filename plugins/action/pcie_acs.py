# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.pcie_acs``: validates the model, the rail NICs and the host-local bridge list
here and sends the module only its ACS policy, rail NICs and listed bridges (:mod:`desired.pcie_acs`)."""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.desired import pcie_acs
from ansible_collections.ainet.fabric.plugins.plugin_utils.host_action import HostModuleAction


class ActionModule(HostModuleAction):

    # With the model, ``bridges`` is the host-local list (pcie_acs_bridges) that replaces the model's choice.
    MODEL_SPEC = {
        "cluster": {"type": "dict", "required": True},
        "interfaces": {"type": "raw", "required": True},
        "bridges": {"type": "list", "elements": "str", "default": []},
    }

    def desired(self, cluster, args, task_vars):
        return pcie_acs.options(cluster, args["interfaces"], args["bridges"])
