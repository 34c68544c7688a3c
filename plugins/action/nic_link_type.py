# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.nic_link_type``: validates the model, the rail NICs and the host-local port
list here and sends the module only the ports and their link types (:mod:`desired.nic_link_type`), and the
address this host is reached on (the management path a firmware reset must not take down)."""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.desired import nic_link_type
from ansible_collections.ainet.fabric.plugins.plugin_utils.host_action import HostModuleAction


class ActionModule(HostModuleAction):

    # With the model: ``extra_ports``, the host-local list of further ports (nic_link_type_ports), and ``pci``,
    # the rail NICs' PCI addresses (nic_link_type_pci).
    MODEL_SPEC = {
        "cluster": {"type": "dict", "required": True},
        "interfaces": {"type": "raw", "required": True},
        "extra_ports": {"type": "list", "elements": "raw", "default": []},
        "pci": {"type": "dict", "default": {}},
    }

    def desired(self, cluster, args, task_vars):
        state = nic_link_type.options(cluster, args["interfaces"], args["extra_ports"], args["pci"])
        # the address (or name) the controller reaches this host on: the NIC holding it carries the session
        host = task_vars.get("ansible_host") or task_vars.get("inventory_hostname")
        if host and "management_addresses" not in self._task.args:
            state["management_addresses"] = [str(host)]
        return state
