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
    what differs from its fabric's lossless profile (the C(qos) of the fabric in O(cluster)).
  - Sets trust DSCP, PFC on exactly the profile's priorities, the RoCE and CNP DSCP to priority entries, ETS
    (the CNP traffic class strict, the profile's weights), DCQCN reaction and notification point on the
    profile's priorities, the CNP DSCP and priority, and the RoCE ToS. Other DSCP entries and other
    priorities' DCQCN switches are left as they are.
  - Persists the settings with one boot unit, C(/etc/systemd/system/ainet-roce-qos.service), which runs the
    exact commands once per boot after the NICs appear (no re-apply loop). The unit is the only file it
    owns; it is removed when no fabric of the node has a lossless class.
  - A unit of another tool that also sets NIC QoS (it runs C(mlnx_qos), C(dcb), C(cma_roce_tos) or writes
    C(traffic_class)) fails the run before any change, naming it, because the two would fight at every boot.
  - With O(state=gathered) it changes nothing and returns each NIC's settings in the normalized structure of
    P(ainet.fabric.parse_qos#filter) (what the agreement check reads).
options:
  cluster:
    description: The cluster model (C(fabric_cluster)).
    type: dict
    required: true
  interfaces:
    description: The node's rail NICs (C(fabric_rail_interfaces)); a list for one fabric or a mapping per fabric.
    type: raw
    required: true
  state:
    description: V(present) applies the profiles; V(gathered) only reads.
    type: str
    choices: [present, gathered]
    default: present
  tool:
    description: V(auto) uses C(mlnx_qos) when it is installed, else iproute2 C(dcb).
    type: str
    choices: [auto, mlnx_qos, dcb]
    default: auto
  persist:
    description: Write and keep the boot unit (V(false) removes it).
    type: bool
    default: true
  foreign_units:
    description: What to do about another tool's unit that sets NIC QoS.
    type: str
    choices: [fail, warn]
    default: fail
  config_root:
    description: Root directory of the boot unit (image builds and tests).
    type: path
    default: /
  sysfs_root:
    description: Root directory under which C(/sys) is read and written (tests).
    type: path
    default: /
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
"""

RETURN = r"""
commands:
  description: The commands run (or, in check mode, that would run), in order, as command lines.
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
import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.common.file_formats import unit_dump
from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import write_atomic
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import merge_facts, new_facts
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse_host import parse_dcb, parse_mlnx_qos, parse_sysfs
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import fabric_interfaces
from ansible_collections.ainet.fabric.plugins.module_utils.host.roce_qos_state import (
    UNIT_NAME, UNIT_PATH, boot_unit, command_line, nic_actions,
)

HEADER = "Managed by ainet.fabric (roce_qos); changes here are overwritten."
FOREIGN = re.compile(r"\b(mlnx_qos|dcb\s+(pfc|ets|app|apptrust)|cma_roce_tos)\b|/traffic_class\b|roce_np/cnp_dscp")
UNIT_DIRS = ("etc/systemd/system",)


class QosError(Exception):
    pass


class Host(object):
    """Reads and writes one node's NIC QoS state (sysfs under ``sysfs_root``)."""

    def __init__(self, module, tool, sysfs_root):
        self.module = module
        self.root = sysfs_root
        self.tool = tool
        self.tool_path = None

    def sys(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def pick_tool(self, wanted):
        for name in ((wanted,) if wanted != "auto" else ("mlnx_qos", "dcb")):
            path = self.module.get_bin_path(name)
            if path:
                self.tool, self.tool_path = name, path
                return name
        raise QosError("neither mlnx_qos (DOCA-OFED / mlnx-tools) nor iproute2's dcb is installed"
                       if wanted == "auto" else "%s is not installed (tool: %s)" % (wanted, wanted))

    def run(self, argv):
        rc, out, err = self.module.run_command([self.tool_path] + argv[1:] if argv[0] == self.tool else argv,
                                               environ_update={"LC_ALL": "C"})
        if rc != 0:
            raise QosError("%s failed (rc %d): %s" % (" ".join(argv), rc, (err or out).strip()[:400]))
        return out

    def rdma_device(self, nic):
        base = self.sys("/sys/class/net/%s/device/infiniband" % nic)
        try:
            names = sorted(os.listdir(base))
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
                with open(self.sys(path)) as handle:
                    files[path] = handle.read()
            except (OSError, UnicodeDecodeError):
                continue
        return files

    def caps(self, nic, device):
        return {"ecn": os.path.isdir(self.sys("/sys/class/net/%s/ecn" % nic)),
                "traffic_class": bool(device) and os.path.exists(
                    self.sys("/sys/class/infiniband/%s/tc/1/traffic_class" % device)),
                "configfs": os.path.isdir(self.sys("/sys/kernel/config/rdma_cm"))}

    def read(self, nic, device):
        if not os.path.isdir(self.sys("/sys/class/net/%s" % nic)):
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
            self.run(action["argv"])
        elif "mkdir" in action:
            try:
                os.makedirs(self.sys(action["mkdir"]), exist_ok=True)
            except OSError as exc:
                raise QosError("mkdir %s: %s" % (action["mkdir"], exc.strerror))
        else:
            try:
                with open(self.sys(action["path"]), "w") as handle:
                    handle.write(action["value"] + "\n")
            except OSError as exc:
                raise QosError("writing %s to %s: %s" % (action["value"], action["path"], exc.strerror))


def foreign_units(config_root):
    found = []
    for rel in UNIT_DIRS:
        directory = os.path.join(config_root, rel)
        if not os.path.isdir(directory):
            continue
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if name == UNIT_NAME or not name.endswith(".service") or not os.path.isfile(path):
                continue
            try:
                with open(path) as handle:
                    text = handle.read()
            except (OSError, UnicodeDecodeError):
                continue
            exec_lines = [line for line in text.splitlines() if line.strip().startswith("Exec")]
            if any(FOREIGN.search(line) for line in exec_lines):
                found.append(path)
    return found


def run_module():
    module = AnsibleModule(
        argument_spec=dict(
            cluster=dict(type="dict", required=True),
            interfaces=dict(type="raw", required=True),
            state=dict(type="str", choices=["present", "gathered"], default="present"),
            tool=dict(type="str", choices=["auto", "mlnx_qos", "dcb"], default="auto"),
            persist=dict(type="bool", default=True),
            foreign_units=dict(type="str", choices=["fail", "warn"], default="fail"),
            config_root=dict(type="path", default="/"),
            sysfs_root=dict(type="path", default="/"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    result = {"changed": False, "commands": [], "facts": new_facts("roce_qos"), "tool": None,
              "unit": {"path": "/" + UNIT_PATH, "changed": False, "enabled": False, "present": False}}
    try:
        cluster = load_cluster(params["cluster"])
        nics_by_fabric = fabric_interfaces(cluster, params["interfaces"])
    except FabricError as exc:
        module.fail_json(msg=str(exc), **result)
    host = Host(module, None, params["sysfs_root"])
    unit_file = os.path.join(params["config_root"], UNIT_PATH)
    wants_link = os.path.join(params["config_root"], "etc/systemd/system/multi-user.target.wants", UNIT_NAME)
    result["unit"]["enabled"] = os.path.lexists(wants_link)
    result["unit"]["present"] = os.path.exists(unit_file)
    managed = [(fabric, nic) for fabric in cluster.fabrics if fabric.qos
               for nic in nics_by_fabric.get(fabric.name, [])]
    warnings = []
    try:
        if managed:
            host.pick_tool(params["tool"])
        result["tool"] = host.tool
        nics = [(fabric, nic, host.rdma_device(nic)) for fabric, nic in managed]
        if params["state"] == "gathered":
            # The NICs of the fabrics with a lossless class: what the agreement check compares.
            result["facts"] = merge_facts(*[host.read(nic, dev) for _f, nic, dev in nics])
            result["facts"]["format"] = "%s+sysfs" % host.tool
            module.exit_json(**result)
        if params["state"] == "present" and managed:
            foreign = foreign_units(params["config_root"])
            if foreign and params["foreign_units"] == "fail":
                raise QosError("another tool's unit sets NIC QoS and would fight this one at every boot: %s. "
                               "Fix: disable and remove it (or set roce_qos_foreign_units: warn)" % ", ".join(foreign))
            warnings += ["another tool's unit also sets NIC QoS: %s" % path for path in foreign]
        plans, boot, before_facts = [], [], []
        for fabric, nic, device in nics:
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
            actions = nic_actions(fabric.qos, nic, host.tool, current, device, caps)
            plans.append((nic, device, actions, caps))
            boot.append((nic, device, nic_actions(fabric.qos, nic, host.tool, None, device, caps)))
        for nic, _device, actions, _caps in plans:
            result["commands"] += [command_line(a) for a in actions]
        # The boot unit.
        unit_text = unit_dump(boot_unit(boot, host.tool, host.tool_path or host.tool), HEADER) if boot else None
        if not params["persist"]:
            unit_text = None
        before = None
        if os.path.isfile(unit_file):
            with open(unit_file) as handle:
                before = handle.read()
        unit_changed = before != unit_text
        result["unit"]["changed"] = unit_changed
        if module._diff:
            result["diff"] = [{"before_header": "rail NICs (lossless settings)", "before": "",
                               "after_header": "commands to run", "after": "".join(c + "\n" for c in result["commands"])},
                              {"before_header": unit_file, "before": before or "",
                               "after_header": unit_file, "after": unit_text or ""}]
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
        if unit_changed:
            if unit_text is None:
                os.remove(unit_file)
                if os.path.lexists(wants_link):
                    os.remove(wants_link)
                result["unit"]["enabled"] = False
            else:
                os.makedirs(os.path.dirname(unit_file), exist_ok=True)
                write_atomic(unit_file, unit_text, "0644")
        result["unit"]["present"] = unit_text is not None
        # Read back: what still differs is a failure, named.
        facts = []
        for (fabric, nic, device), (_n, _d, _a, caps) in zip(nics, plans):
            after = host.read(nic, device)
            facts.append(after)
            left = nic_actions(fabric.qos, nic, host.tool, after["ports"][nic], device, caps)
            if left:
                raise QosError("applied, but %s still differs: %s" % (nic, "; ".join(a["what"] for a in left)))
        result["facts"] = merge_facts(*facts) if facts else result["facts"]
    except (QosError, ValueError) as exc:
        for warning in warnings:
            module.warn(warning)
        module.fail_json(msg=str(exc), **result)
    for warning in warnings:
        module.warn(warning)
    module.exit_json(**result)


def main():
    run_module()


if __name__ == "__main__":
    main()
