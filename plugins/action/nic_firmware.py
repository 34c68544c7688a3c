# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.nic_firmware``: validates the model, the rail NICs, the pin table, the mirror, the
raw nvconfig list and the BlueField modes here and sends the module only the flat state
(:mod:`desired.nic_firmware`), and the address this host is reached on (the management path a reset must spare)."""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.desired import nic_firmware
from ansible_collections.ainet.fabric.plugins.plugin_utils.host_action import HostModuleAction


class ActionModule(HostModuleAction):

    MODEL_SPEC = {
        "cluster": {"type": "dict", "required": True},
        "interfaces": {"type": "raw", "required": True},
        "raw": {"type": "raw", "default": []},
        "gpudirect": {"type": "str", "default": "none"},
        "sriov_overrides": {"type": "dict", "default": {}},
        "node_id": {"type": "int", "default": None},
        "pins": {"type": "dict", "default": {}},
        "mirror": {"type": "str", "default": None},
        "bluefield_modes": {"type": "dict", "default": {}},
        "max_read_request": {"type": "int", "default": None},
        "pci": {"type": "dict", "default": {}},
    }

    def desired(self, cluster, args, task_vars):
        state = nic_firmware.options(cluster, args["interfaces"], pins=args["pins"], mirror=args["mirror"],
                                     raw=args["raw"], gpudirect=args["gpudirect"],
                                     bluefield_modes=args["bluefield_modes"],
                                     max_read_request=args["max_read_request"],
                                     sriov_overrides=args["sriov_overrides"], node_id=args["node_id"],
                                     pci=args["pci"])
        if state["mirror"] is None:
            state.pop("mirror")
        if state["max_read_request"] is None:
            state.pop("max_read_request")
        host = task_vars.get("ansible_host") or task_vars.get("inventory_hostname")
        if host and "management_addresses" not in self._task.args:
            state["management_addresses"] = [str(host)]
        return state
