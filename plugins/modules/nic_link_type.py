#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: nic_link_type
short_description: Set the firmware link type (Ethernet or InfiniBand) of ConnectX ports
version_added: 0.2.0
author: ainet.fabric contributors (@ainet)
description:
  - Gives each port of O(ports) the firmware link type it lists, with C(mlxconfig) (DOCA's MFT) or C(mstconfig)
    (mstflint). The action plugin of the same name fills O(ports) on the controller from O(cluster), so the host
    never receives the model; every rail NIC of an C(infiniband) fabric wants V(IB), every other fabric's V(ETH).
  - Reads each port's PCI function from sysfs (or O(ports[].pci), for a port that runs the other link type today
    and has another netdev name), what it runs now (the RDMA port's C(link_layer)) and the firmware's current and
    next-boot C(LINK_TYPE_P<n>) (port 1 is PCI function .0, port 2 is .1); only a port whose next-boot value differs
    is set (C(mlxconfig -y -d <pci> set LINK_TYPE_P<n>=<1|2>)).
  - A set link type runs after the next boot, which is reported in RV(reboot_pending) (never forced). With
    O(reset=true) the firmware is reset instead (C(mlxfwreset -d <pci> -l <O(reset_level)> -y reset)), which restarts
    the NIC's driver. Before any change the run is refused, naming the reason, on a NIC that carries the management
    path (a default route, the address this session came in on, or a bond, VLAN or bridge above them), on a device
    whose C(mlxfwreset -d <pci> q) does not list the level as supported, and on a device with SR-IOV VFs (the reset
    sets C(sriov_numvfs) to 0).
  - A BlueField (PCI device id a2d6, a2dc, a2d9, a2df) is asked its mode (C(mlxconfig -d <pci> -e q
    INTERNAL_CPU_OFFLOAD_ENGINE)); in DPU mode (C(ENABLED(0))) a port that needs another link type is refused, since
    a host reboot does not load its firmware configuration. In NIC mode (C(DISABLED(1))) it is handled as a ConnectX.
  - A port whose link type cannot be changed (not an NVIDIA/Mellanox NIC, a NIC with a fixed protocol, no
    C(mlxconfig)) and that runs another type than wanted fails the run before any change, naming it.
extends_documentation_fragment:
  - ainet.fabric.host.model
  - ainet.fabric.host.interfaces
options:
  extra_ports:
    description:
      - With O(cluster), further ports the model does not describe (C(nic_link_type_ports)), each with C(nic) or
        C(pci) and C(link_type). An entry for a rail NIC must agree with its fabric. Handled by the action plugin.
    type: list
    elements: raw
  pci:
    description:
      - With O(cluster), the PCI address of rail NICs by name (C(nic_link_type_pci)), for ports whose netdev is
        named otherwise while they run the other link type. Handled by the action plugin.
    type: dict
  ports:
    description:
      - The ports and the link type each wants. Filled by the action plugin from O(cluster); required without it.
    type: list
    elements: dict
    suboptions:
      nic:
        description: The port's network interface (required unless O(ports[].pci) is given).
        type: str
      pci:
        description: The port's PCI function (C(0000:3b:00.0)); read from the interface's sysfs entry when not given.
        type: str
      link_type:
        description: The link type the port must run.
        type: str
        required: true
        choices: [ETH, IB]
      source:
        description: Where the want comes from, named in messages (C(fabric compute), C(nic_link_type_ports[0])).
        type: str
  reset:
    description:
      - Reset the firmware of a NIC whose link type was set (or is pending), so that it runs the new type now,
        instead of reporting a pending reboot. Refused on a NIC that carries the management path.
    type: bool
    default: false
  reset_level:
    description:
      - The C(mlxfwreset) reset level of O(reset). Only V(3) (driver restart and PCI reset) is run; level 4 is a warm
        reboot of the node, which C(fabric_reboot) does in batches.
    type: int
    default: 3
  defer_reset:
    description:
      - With O(reset=true), check that the reset may run (management path, level, VFs) and report the devices in
        RV(reset_devices), but do not reset; the ports stay in RV(reboot_pending). C(playbooks/site.yml) sets it and
        resets in the rolling play, C(fabric_reboot_batch) nodes at a time.
    type: bool
    default: false
  reset_refused:
    description:
      - What a refused firmware reset (management path, level not supported now, VFs on the device, no mlxfwreset)
        comes to. V(fail) fails the task before any change.
      - V(reboot) is for a caller that reboots the node anyway, as C(roles/nic_link_type/tasks/reset.yml) in the
        rolling play of C(playbooks/site.yml) with C(fabric_reboot). Nothing is reset, the ports stay in
        RV(reboot_pending), each noted C(reset refused) with the reason and C(applied by the reboot), and
        RV(reset_refused) says why; the reboot loads the link type C(mlxconfig) set for the next boot.
    type: str
    choices: [fail, reboot]
    default: fail
  management_addresses:
    description:
      - This host's addresses that Ansible reaches it on (the action plugin fills the inventory's C(ansible_host));
        the NIC that holds one carries the management path. C(SSH_CONNECTION) is read too.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: Reads the ports and the firmware, and reports what it would set and reset.
  diff_mode:
    support: full
    description: Shows each port's current and next-boot link type before and after.
requirements:
  - C(mlxconfig) (DOCA / MFT) or C(mstconfig) (mstflint) to read and set the firmware; C(mlxfwreset) or
    C(mstfwreset) for O(reset)
"""

EXAMPLES = r"""
- name: Link types of the rail NICs from the cluster model
  ainet.fabric.nic_link_type:
    cluster: "{{ fabric_cluster }}"
    interfaces: "{{ fabric_rail_interfaces }}"

- name: One port to InfiniBand, without the model, reset right away
  ainet.fabric.nic_link_type:
    ports:
      - nic: ibp12s0
        pci: "0000:0c:00.0"
        link_type: IB
    reset: true
"""

RETURN = r"""
ports:
  description: Each port with its link types.
  returned: always
  type: list
  elements: dict
  contains:
    nic:
      description: The port's interface (null when given by PCI address).
      type: str
    pci:
      description: Its PCI function.
      type: str
    port:
      description: Its firmware port number (the n of C(LINK_TYPE_P<n>)).
      type: int
    link_type:
      description: The link type wanted.
      type: str
    current:
      description: The link type it runs now (C(ETH), C(IB), C(VPI); null when unknown).
      type: str
    next_boot:
      description: The link type it runs from the next boot (after this run).
      type: str
    action:
      description: C(ok), C(set) (mlxconfig ran, or would run) or C(pending) (set before, not running yet).
      type: str
commands:
  description: The commands run (or, in check mode, that would run), in order.
  returned: always
  type: list
  elements: str
reboot_pending:
  description: Why a reboot is due before the node is as wanted (empty when none).
  returned: always
  type: list
  elements: str
management:
  description: The PCI functions on the management path and why (read when O(reset) is asked for).
  returned: always
  type: list
  elements: str
reset_devices:
  description: The PCI functions whose device's firmware is reset (in check mode or with O(defer_reset), would be).
  returned: always
  type: list
  elements: str
reset_refused:
  description: With O(reset_refused=reboot), why the reset was refused and that the reboot applies the link types
    (C(reset refused), the reason, C(applied by the reboot)); null otherwise.
  returned: always
  type: str
"""

import os
import socket

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host import mgmt_path
from ansible_collections.ainet.fabric.plugins.module_utils.host import nic_link_type_state as state_lib
from ansible_collections.ainet.fabric.plugins.module_utils.host.runner import Runner, one_line, refuse_action_options
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse_pci import parse_mlxconfig

ACTION_OPTIONS = ("cluster", "interfaces", "extra_ports", "pci")


class Ports(object):
    """Reads the ports (sysfs) and their firmware (mlxconfig / mstconfig) through a :class:`Runner`."""

    def __init__(self, runner, host=None):
        self.runner = runner
        self.host = host
        self.tool = runner.bin("mlxconfig") or runner.bin("mstconfig")
        self._firmware = {}
        self._mode = {}

    def pci(self, port):
        if port["pci"]:
            if not os.path.isdir(self.runner.sys("/sys/bus/pci/devices/%s" % port["pci"])):
                raise state_lib.LinkTypeError("nic_link_type: %s (%s): no PCI device %s on this host"
                                              % (port["nic"] or port["pci"], port["source"], port["pci"]))
            return port["pci"]
        device = self.runner.sys("/sys/class/net/%s/device" % port["nic"])
        if not os.path.exists(device):
            raise state_lib.LinkTypeError(
                "nic_link_type: %s (%s) is not a PCI network interface of this host; a port running the other link "
                "type has another name: give its PCI address in nic_link_type_pci" % (port["nic"], port["source"]))
        return os.path.basename(os.path.realpath(device))

    def reading(self, port):
        pci = self.pci(port)
        base = "/sys/bus/pci/devices/%s" % pci
        # ConnectX-4 and later: a PCI function per port (dev_port 0); ConnectX-3 (mlx4): both ports on one
        # function, the second netdev with dev_port 1 and RDMA port 2
        dev_port = self.runner.read_sys("/sys/class/net/%s/dev_port" % port["nic"]) if port["nic"] else None
        number = int(dev_port) + 1 if dev_port and dev_port.isdigit() and int(dev_port) > 0 else \
            state_lib.port_number(pci)
        rdma_port = number if number > 1 and state_lib.port_number(pci) == 1 else 1
        layer = None
        ib_dir = self.runner.sys(base + "/infiniband")
        if os.path.isdir(ib_dir):
            for dev in sorted(os.listdir(ib_dir)):
                layer = self.runner.read_sys("%s/infiniband/%s/ports/%d/link_layer" % (base, dev, rdma_port))
                if layer:
                    break
        arphrd = self.runner.read_sys("/sys/class/net/%s/type" % port["nic"]) if port["nic"] else None
        reading = {"nic": port["nic"], "pci": pci, "port": number, "vendor": self.runner.read_sys(base + "/vendor"),
                   "device_id": self.runner.read_sys(base + "/device"), "host": self.host,
                   "link_layer": state_lib.link_layer(layer, arphrd), "firmware": None, "firmware_error": None}
        if reading["vendor"] == state_lib.MELLANOX and self.tool:
            reading["firmware"], reading["firmware_error"] = self.firmware(pci)
            if (reading["device_id"] or "").lower() in state_lib.BLUEFIELD:
                reading["mode"], reading["mode_error"] = self.mode(pci, reading["firmware"])
        return reading

    def mode(self, pci, firmware=None):
        """A BlueField's mode (``dpu``/``nic``/None) and why it is unknown: from the full query already read
        (``firmware``) where it lists the mode, else from a query of that parameter alone."""
        device = state_lib.device_of(pci)
        listed = state_lib.bluefield_mode(firmware)
        if device not in self._mode and listed:
            self._mode[device] = (listed, None)
        if device not in self._mode:
            argv = [self.tool, "-d", pci, "-e", "q", state_lib.MODE_PARAM]
            rc, out, err = self.runner.run(argv, check=False)
            facts = parse_mlxconfig(out) if rc == 0 else None
            entry = next(iter(facts["firmware"].values()), None) if facts else None
            mode = state_lib.bluefield_mode(entry)
            error = None if mode else "%s failed (rc %d): %s" % (
                " ".join([os.path.basename(self.tool)] + argv[1:]), rc, one_line(err or out, 200))
            self._mode[device] = (mode, error)
        return self._mode[device]

    def vfs(self, device):
        """``{pf: {"numvfs": n, "vfs": {vf: driver}}}`` of the device's functions, from sysfs."""
        return state_lib.device_vfs(self.runner, device)

    def firmware(self, pci):
        if pci not in self._firmware:
            rc, out, err = self.runner.run([self.tool, "-e", "-d", pci, "q"], check=False)
            facts = parse_mlxconfig(out) if rc == 0 else None
            entry = next(iter(facts["firmware"].values()), None) if facts else None
            error = None if entry else "%s -e -d %s q failed (rc %d): %s" % (
                os.path.basename(self.tool), pci, rc, one_line(err or out, 200))
            self._firmware[pci] = (entry, error)
        return self._firmware[pci]

    def forget(self, pci):
        self._firmware.pop(pci, None)


def _diff(outcomes, key):
    return "".join("%s %s: now %s, next boot %s\n" % (o["nic"] or "-", o["pci"], o["current"] or "unknown",
                                                      o[key] or "unknown") for o in outcomes)


def run_module():
    module = AnsibleModule(
        argument_spec=dict(
            ports=dict(type="list", elements="dict", options=dict(
                nic=dict(type="str"), pci=dict(type="str"), source=dict(type="str"),
                link_type=dict(type="str", required=True, choices=["ETH", "IB"]))),
            cluster=dict(type="dict"),
            interfaces=dict(type="raw"),
            extra_ports=dict(type="list", elements="raw"),
            pci=dict(type="dict"),
            reset=dict(type="bool", default=False),
            reset_level=dict(type="int", default=3),
            defer_reset=dict(type="bool", default=False),
            reset_refused=dict(type="str", default="fail", choices=["fail", "reboot"]),
            management_addresses=dict(type="list", elements="str", default=[]),
            sysfs_root=dict(type="path", default="/"),
        ),
        required_one_of=[["ports", "cluster"]],
        supports_check_mode=True,
    )
    refuse_action_options(module, ACTION_OPTIONS, "ainet.fabric.nic_link_type")
    params = module.params
    result = {"changed": False, "ports": [], "commands": [], "reboot_pending": [], "management": [],
              "reset_devices": [], "reset_refused": None}
    try:
        ports = state_lib.check_ports(params["ports"] or [])
        level = state_lib.check_reset_level(params["reset_level"])
        runner = Runner(module, params["sysfs_root"], error=state_lib.LinkTypeError)
        hostname = socket.gethostname()
        host = Ports(runner, hostname)
        tool = os.path.basename(host.tool) if host.tool else "mlxconfig"
        readings = [host.reading(port) for port in ports]
        state_lib.check_one_want_per_port(ports, readings)
        outcomes = [state_lib.port_actions(port, reading, host.tool or "mlxconfig")
                    for port, reading in zip(ports, readings)]
        due = [o for o in outcomes if o["action"] != "ok"]
        resets = []
        reset_tool = runner.bin("mlxfwreset") or runner.bin("mstfwreset")
        if params["reset"] and due:
            _devices, management, problem = mgmt_path.read_management(runner, params["management_addresses"])
            result["management"] = ["%s: %s" % item for item in sorted(management.items())]
            refusal = ("nic_link_type: a firmware reset is refused: %s. Fix: reboot the node instead (fabric_reboot)"
                       % problem) if problem else state_lib.reset_refusal([o["pci"] for o in due], management)
            if not refusal and not reset_tool:
                refusal = ("nic_link_type: reset is asked for but neither mlxfwreset (MFT) nor mstfwreset (mstflint) "
                           "is installed; install one, or reboot instead")
            if not refusal:
                for outcome in due:
                    if state_lib.device_of(outcome["pci"]) not in [state_lib.device_of(p) for p in resets]:
                        resets.append(outcome["pci"])
            # read-only, before any change: the level must be supported now, and no VF may be on the device
            for pci in resets if not refusal else []:
                _rc, out, err = runner.run(state_lib.query_argv(pci, reset_tool), check=False)
                refusal = state_lib.reset_level_refusal(pci, level, state_lib.parse_fwreset_query(out), hostname) \
                    or state_lib.vf_refusal(state_lib.device_of(pci), host.vfs(state_lib.device_of(pci)), hostname)
                if refusal:
                    refusal = refusal if out.strip() or not err else "%s (%s)" % (refusal, one_line(err, 200))
                    break
            error, note = state_lib.refused_reset(refusal, params["reset_refused"] == "reboot")
            if error:
                raise state_lib.LinkTypeError(error)
            if note:  # no reset on this node: the reboot that follows loads the new link types
                resets = []
                result["reset_refused"] = note
                for outcome in due:
                    outcome["reboot"] = "%s: %s" % (outcome["reboot"], note)
            result["reset_devices"] = list(resets)
            if params["defer_reset"]:
                resets = []
        sets = [o for o in outcomes if o["action"] == "set"]
        result["commands"] = [" ".join([tool] + o["argv"][1:]) for o in sets]
        result["commands"] += [" ".join(state_lib.reset_argv(pci, os.path.basename(reset_tool or "mlxfwreset"), level))
                               for pci in resets]
        result["changed"] = bool(result["commands"])
        if module._diff:
            result["diff"] = {"before_header": "link types", "before": _diff(outcomes, "current"),
                              "after_header": "link types", "after": _diff(outcomes, "next_boot")}
        if not module.check_mode:
            for outcome in sets:
                runner.run(outcome["argv"])
                host.forget(outcome["pci"])
            for pci in resets:
                runner.run(state_lib.reset_argv(pci, reset_tool, level))
                for outcome in due:
                    if state_lib.device_of(outcome["pci"]) == state_lib.device_of(pci):
                        host.forget(outcome["pci"])
            if resets:
                # read back: the reset is done when the ports run what the firmware holds
                again = dict((o["pci"], o) for o in (state_lib.port_actions(p, host.reading(p), host.tool)
                                                     for p in ports))
                for outcome in due:
                    now = again[outcome["pci"]]
                    outcome.update(current=now["current"], action="set" if outcome["action"] == "set" else "pending",
                                   reboot=now["reboot"])
        # A reset device runs its new type now (read back above; in check mode, as predicted).
        reset_devices = set(state_lib.device_of(pci) for pci in resets)
        result["reboot_pending"] = [o["reboot"] for o in outcomes if o["reboot"] and (
            state_lib.device_of(o["pci"]) not in reset_devices
            or (not module.check_mode and o["current"] != o["link_type"]))]
        shown = ("nic", "pci", "port", "link_type", "current", "next_boot", "action")
        result["ports"] = [dict((k, o[k]) for k in shown) for o in outcomes]
    except FabricError as exc:
        module.fail_json(msg=str(exc), **result)
    module.exit_json(**result)


def main():
    run_module()


if __name__ == "__main__":
    main()
