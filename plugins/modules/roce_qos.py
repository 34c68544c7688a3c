#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: roce_qos
short_description: Set (or read) the lossless RoCE QoS of a GPU node's rail NICs, in one call
version_added: 0.1.0
author: ainet.fabric contributors (@ainet)
description:
  - Reads each rail NIC's lossless settings (C(mlnx_qos -i <nic>) or iproute2 C(dcb ... show), the DCQCN/CNP
    sysfs files, the RDMA device's C(tc/1/traffic_class) and the rdma_cm C(default_roce_tos)) and changes only
    what differs from the NIC's settings in O(nics).
  - Sets trust DSCP, PFC on exactly the O(nics[].pfc) priorities, the O(nics[].dscp_to_priority) entries (the RoCE
    and CNP DSCPs), ETS (O(nics[].ets)), DCQCN reaction and notification point on the O(nics[].ecn_rp) and
    O(nics[].ecn_np) priorities, the CNP DSCP and priority, and the RoCE ToS. Other DSCP entries and other
    priorities' DCQCN switches are left as they are.
  - The action plugin of the same name fills O(nics) on the controller from O(cluster) and O(interfaces) - every
    rail NIC of a fabric with a lossless class, with that fabric's lossless profile (the fabric's C(qos)) - so the
    host never receives the model or the profile code. O(nics) can also be given directly (with C(ansible -m)).
  - Persists the settings with one boot unit, C(/etc/systemd/system/ainet-roce-qos.service), which runs the
    exact commands once per boot after the NICs appear (no re-apply loop). The unit is the only file it
    owns; it is removed when O(nics) is empty (no fabric of the node has a lossless class).
  - A unit of another tool that also sets NIC QoS (it runs C(mlnx_qos), C(dcb), C(cma_roce_tos) or writes
    C(traffic_class)) fails the run before any change, naming it, because the two would fight at every boot.
  - With O(state=gathered) it changes nothing and returns each NIC's settings in the normalized structure of
    P(ainet.fabric.parse_qos#filter) (what the agreement check reads).
extends_documentation_fragment:
  - ainet.fabric.host
  - ainet.fabric.host.interfaces
  - ainet.fabric.host.foreign_units
options:
  nics:
    description:
      - The rail NICs to set (or read) and each one's lossless settings; filled by the action plugin from
        O(cluster). An empty list sets nothing and removes the boot unit.
      - Required unless O(cluster) is given.
    type: list
    elements: dict
    suboptions:
      name:
        description: The NIC (netdev).
        type: str
        required: true
      trust:
        description: The trust mode (hosts always trust DSCP).
        type: str
        choices: [dscp]
        default: dscp
      pfc:
        description: The priorities with PFC on (all others off).
        type: list
        elements: int
        required: true
      dscp_to_priority:
        description:
          - DSCP to priority entries to set, as a mapping from DSCP to priority (the RoCE DSCP and the CNP DSCP);
            other DSCPs are left as they are.
        type: dict
        required: true
      ecn_rp:
        description: The priorities whose DCQCN reaction point is turned on.
        type: list
        elements: int
        default: []
      ecn_np:
        description: The priorities whose DCQCN notification point is turned on.
        type: list
        elements: int
        default: []
      cnp_dscp:
        description: The DSCP of the CNPs the NIC sends.
        type: int
        required: true
      cnp_priority:
        description: The 802.1p priority of the CNPs the NIC sends.
        type: int
        required: true
      roce_tos:
        description: The RoCE ToS (C(tc/1/traffic_class) and the rdma_cm C(default_roce_tos)).
        type: int
        required: true
      ets:
        description: The 8 traffic classes' scheduling; left alone when not given.
        type: dict
        suboptions:
          tsa:
            description: V(ets) or V(strict) per traffic class 0..7.
            type: list
            elements: str
            required: true
          bw:
            description: The bandwidth share (percent) per traffic class 0..7.
            type: list
            elements: int
            required: true
  state:
    description: V(present) applies the settings; V(gathered) only reads.
    type: str
    choices: [present, gathered]
    default: present
  tool:
    description: V(auto) uses C(mlnx_qos) when it is installed, else iproute2 C(dcb).
    type: str
    choices: [auto, mlnx_qos, dcb]
    default: auto
attributes:
  check_mode:
    support: full
    description: Reads the current state and reports the commands it would run.
  diff_mode:
    support: full
    description: Shows each NIC's commands and the boot unit.
requirements:
  - C(mlnx_qos) (DOCA-OFED / mlnx-tools) or iproute2 C(dcb)
"""

EXAMPLES = r"""
- name: Lossless RoCE on the rail NICs
  ainet.fabric.roce_qos:
    cluster: "{{ fabric_cluster }}"
    interfaces: "{{ fabric_rail_interfaces }}"

- name: Read the NICs' lossless settings for the agreement check
  ainet.fabric.roce_qos:
    cluster: "{{ fabric_cluster }}"
    interfaces: "{{ fabric_rail_interfaces }}"
    state: gathered
  register: nic_qos

- name: One NIC with the nvidia preset's host settings, without the model
  ainet.fabric.roce_qos:
    nics:
      - name: ens1f0np0
        pfc: [3]
        dscp_to_priority: {"26": 3, "48": 6}
        ecn_rp: [3]
        ecn_np: [3]
        cnp_dscp: 48
        cnp_priority: 6
        roce_tos: 106
        ets: {tsa: [ets, ets, ets, ets, ets, ets, strict, ets], bw: [50, 0, 0, 50, 0, 0, 0, 0]}
"""

RETURN = r"""
commands:
  description: The commands run (or, in check mode, that would run), in order.
  returned: always
  type: list
  elements: str
facts:
  description: The QoS facts of the rail NICs (after the change), one port per NIC.
  returned: always
  type: dict
tool:
  description: The tool used (C(mlnx_qos) or C(dcb)).
  returned: always
  type: str
unit:
  description: The boot unit's state.
  returned: always
  type: dict
  contains:
    path:
      description: Its path.
      type: str
    changed:
      description: Whether it was written or removed.
      type: bool
    enabled:
      description: Whether it is enabled (linked from C(multi-user.target.wants)).
      type: bool
    present:
      description: Whether it exists after the run.
      type: bool
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.common.file_formats import unit_dump
from ansible_collections.ainet.fabric.plugins.module_utils.host import boot_unit as units
from ansible_collections.ainet.fabric.plugins.module_utils.host.roce_qos_state import (
    FOREIGN, ROLE, QosError, boot_unit, check_settings, command_line, nic_actions,
)
from ansible_collections.ainet.fabric.plugins.module_utils.host.runner import Runner, refuse_action_options
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import merge_facts, new_facts
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse_host import (
    parse_dcb, parse_mlnx_qos, parse_sysfs,
)

ACTION_OPTIONS = ("cluster", "interfaces")
ETS_SPEC = dict(tsa=dict(type="list", elements="str", required=True),
                bw=dict(type="list", elements="int", required=True))
NIC_SPEC = dict(
    name=dict(type="str", required=True),
    trust=dict(type="str", choices=["dscp"], default="dscp"),
    pfc=dict(type="list", elements="int", required=True),
    dscp_to_priority=dict(type="dict", required=True),
    ecn_rp=dict(type="list", elements="int", default=[]),
    ecn_np=dict(type="list", elements="int", default=[]),
    cnp_dscp=dict(type="int", required=True),
    cnp_priority=dict(type="int", required=True),
    roce_tos=dict(type="int", required=True),
    ets=dict(type="dict", options=ETS_SPEC),
)


class NicQos(object):
    """Reads and writes one node's NIC QoS state through a :class:`Runner`."""

    def __init__(self, runner):
        self.runner = runner
        self.tool = None
        self.tool_path = None

    def pick_tool(self, wanted):
        for name in ((wanted,) if wanted != "auto" else ("mlnx_qos", "dcb")):
            path = self.runner.bin(name)
            if path:
                self.tool, self.tool_path = name, path
                return name
        raise QosError("neither mlnx_qos (DOCA-OFED / mlnx-tools) nor iproute2's dcb is installed"
                       if wanted == "auto" else "%s is not installed (tool: %s)" % (wanted, wanted))

    def run(self, argv):
        return self.runner.run(argv)[1]

    def rdma_device(self, nic):
        try:
            names = sorted(os.listdir(self.runner.sys("/sys/class/net/%s/device/infiniband" % nic)))
        except OSError:
            return None
        return names[0] if names else None

    def read_files(self, nic, device):
        paths = ["/sys/class/net/%s/mtu" % nic, "/sys/class/net/%s/ecn/roce_np/cnp_dscp" % nic,
                 "/sys/class/net/%s/ecn/roce_np/cnp_802p_prio" % nic]
        for point in ("rp", "np"):
            paths += ["/sys/class/net/%s/ecn/roce_%s/enable/%d" % (nic, point, p) for p in range(8)]
        if device:
            paths += ["/sys/class/infiniband/%s/tc/1/traffic_class" % device,
                      "/sys/kernel/config/rdma_cm/%s/ports/1/default_roce_tos" % device]
        files = {}
        for path in paths:
            try:
                text = self.runner.read_sys(path)
            except ValueError:  # not text
                continue
            if text is not None:
                files[path] = text + "\n"
        return files

    def caps(self, nic, device):
        sys_path = self.runner.sys
        return {"ecn": os.path.isdir(sys_path("/sys/class/net/%s/ecn" % nic)),
                "traffic_class": bool(device) and os.path.exists(
                    sys_path("/sys/class/infiniband/%s/tc/1/traffic_class" % device)),
                "configfs": os.path.isdir(sys_path("/sys/kernel/config/rdma_cm"))}

    def read(self, nic, device):
        if not os.path.isdir(self.runner.sys("/sys/class/net/%s" % nic)):
            raise QosError("rail NIC %s does not exist on this host" % nic)
        if self.tool == "mlnx_qos":
            tool_facts = parse_mlnx_qos(self.run(["mlnx_qos", "-i", nic]), port=nic)
        else:
            text = ""
            for what in ("pfc", "ets", "app", "apptrust", "buffer"):
                try:
                    text += self.run(["dcb", what, "show", "dev", nic]) + "\n"
                except QosError:
                    if what in ("pfc", "ets", "app"):
                        raise
            tool_facts = parse_dcb(text, port=nic)
        return merge_facts(tool_facts, parse_sysfs(self.read_files(nic, device), port=nic))

    def apply(self, action):
        if "argv" in action:
            self.runner.run(action["argv"])
        elif "mkdir" in action:
            self.runner.mkdir_sys(action["mkdir"])
        else:
            self.runner.write_sys(action["path"], action["value"])


def run_module():
    module = AnsibleModule(
        argument_spec=dict(
            nics=dict(type="list", elements="dict", options=NIC_SPEC),
            cluster=dict(type="dict"),
            interfaces=dict(type="raw"),
            state=dict(type="str", choices=["present", "gathered"], default="present"),
            tool=dict(type="str", choices=["auto", "mlnx_qos", "dcb"], default="auto"),
            persist=dict(type="bool", default=True),
            foreign_units=dict(type="str", choices=["fail", "warn"], default="fail"),
            config_root=dict(type="path", default="/"),
            sysfs_root=dict(type="path", default="/"),
        ),
        required_one_of=[["nics", "cluster"]],
        supports_check_mode=True,
    )
    refuse_action_options(module, ACTION_OPTIONS, "ainet.fabric.roce_qos")
    params = module.params
    unit = units.read_unit(params["config_root"], ROLE)
    result = {"changed": False, "commands": [], "facts": new_facts("roce_qos"), "tool": None,
              "unit": {"path": unit["path"], "changed": False, "enabled": unit["enabled"], "present": unit["present"]}}
    host = NicQos(Runner(module, params["sysfs_root"], params["config_root"], error=QosError))
    warnings = []
    try:
        settings = [check_settings(nic) for nic in params["nics"]]
        if settings:
            host.pick_tool(params["tool"])
        result["tool"] = host.tool
        nics = [(want, want["name"], host.rdma_device(want["name"])) for want in settings]
        if params["state"] == "gathered":
            # The NICs of the fabrics with a lossless class: what the agreement check compares.
            result["facts"] = merge_facts(*[host.read(nic, dev) for _w, nic, dev in nics])
            result["facts"]["format"] = "%s+sysfs" % host.tool
            module.exit_json(**result)
        if settings:
            foreign = [path for path, _labels in units.foreign_units(params["config_root"], ROLE, FOREIGN)]
            if foreign and params["foreign_units"] == "fail":
                raise QosError("another tool's unit sets NIC QoS and would fight this one at every boot: %s. "
                               "Fix: disable and remove it (or set roce_qos_foreign_units: warn)" % ", ".join(foreign))
            warnings += ["another tool's unit also sets NIC QoS: %s" % path for path in foreign]
        plans, boot, before_facts = [], [], []
        for want, nic, device in nics:
            facts = host.read(nic, device)
            before_facts.append(facts)
            current = facts["ports"][nic]
            caps = host.caps(nic, device)
            if not caps["ecn"]:
                warnings.append("%s has no DCQCN/CNP files (/sys/class/net/%s/ecn; not an mlx5 NIC?): DCQCN and CNP "
                                "settings skipped" % (nic, nic))
            if device is None:
                warnings.append("%s has no RDMA device: the RoCE ToS is not set" % nic)
            if current.get("dcbx") and "firmware" in str(current["dcbx"]).lower():
                warnings.append("%s is in firmware DCBX mode: the switch may override these settings over LLDP" % nic)
            actions = nic_actions(want, nic, host.tool, current, device, caps)
            plans.append((nic, device, actions, caps))
            boot.append((nic, device, nic_actions(want, nic, host.tool, None, device, caps)))
        for nic, _device, actions, _caps in plans:
            result["commands"] += [command_line(a) for a in actions]
        # The boot unit.
        unit_text = None
        if boot and params["persist"]:
            unit_text = unit_dump(boot_unit(boot, host.tool, host.tool_path or host.tool), units.header(ROLE))
        unit_changed = unit["text"] != unit_text
        result["unit"]["changed"] = unit_changed
        if module._diff:
            commands = "".join(c + "\n" for c in result["commands"])
            result["diff"] = [{"before_header": "rail NICs (lossless settings)", "before": "",
                               "after_header": "commands to run", "after": commands},
                              {"before_header": unit["file"], "before": unit["text"] or "",
                               "after_header": unit["file"], "after": unit_text or ""}]
        result["changed"] = bool(result["commands"]) or unit_changed
        if module.check_mode:
            # Nothing was changed: the state read for the plan is the state after.
            result["facts"] = merge_facts(*before_facts) if before_facts else result["facts"]
            for warning in warnings:
                module.warn(warning)
            module.exit_json(**result)
        for nic, device, actions, caps in plans:
            for action in actions:
                host.apply(action)
        units.sync_unit(unit, unit_text, False)
        if unit_text is None:
            result["unit"]["enabled"] = False
        result["unit"]["present"] = unit_text is not None
        # Read back: what still differs is a failure, named.
        facts = []
        for (want, nic, device), (_n, _d, _a, caps) in zip(nics, plans):
            after = host.read(nic, device)
            facts.append(after)
            left = nic_actions(want, nic, host.tool, after["ports"][nic], device, caps)
            if left:
                raise QosError("applied, but %s still differs: %s" % (nic, "; ".join(a["what"] for a in left)))
        result["facts"] = merge_facts(*facts) if facts else result["facts"]
    except (FabricError, ValueError) as exc:
        for warning in warnings:
            module.warn(warning)
        module.fail_json(msg=str(exc), **result)
    except OSError as exc:  # a read-only /etc (image-based OS), a full disk
        for warning in warnings:
            module.warn(warning)
        module.fail_json(msg="roce_qos: %s: %s" % (exc.filename or "", exc.strerror or exc), **result)
    for warning in warnings:
        module.warn(warning)
    module.exit_json(**result)


def main():
    run_module()


if __name__ == "__main__":
    main()
