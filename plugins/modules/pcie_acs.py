#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: pcie_acs
short_description: Turn PCIe ACS off on the bridges between a GPU node's GPUs and RDMA NICs, in one call
version_added: 0.1.0
author: ainet.fabric contributors (@ainet)
description:
  - Reads C(lspci -D -vvv) and turns PCIe Access Control Services (ACS) off on the chosen bridges, so that
    GPUDirect RDMA peer traffic between a GPU and an RDMA NIC is not redirected to the root complex.
  - Which bridges (O(disable)) - V(gpu_nic), the bridges with an ACS capability on the upstream chain of every GPU
    and every rail NIC (O(nics)) of the node (none on a node without a GPU); V(listed), exactly O(bridges);
    V(none), none.
  - The action plugin of the same name fills O(disable), O(nics), O(bridges) and O(source) on the controller from
    O(cluster) (C(fabric_cluster.pcie_acs)) and O(interfaces); with O(cluster), O(bridges) is the host-local list
    (C(pcie_acs_bridges)) that, when not empty, replaces the model's choice on this host with exactly these
    bridges. The host never receives the model. The flat options can also be given directly (with C(ansible -m)).
  - Refuses, before any change, a listed address that is not a PCI device of the host, not a PCI bridge, or has
    no ACS capability, and another tool's unit that also writes ACS (C(ECAP_ACS), C(ECAP0d); named;
    O(foreign_units)).
  - Writes C(setpci -s <bridge> ECAP_ACS+0x6.w=0000) only to the bridges whose ACS Control register has a bit on,
    then reads C(lspci -D -vvv) again and fails if a bit is still on.
  - Persists with one boot unit, C(/etc/systemd/system/ainet-pcie-acs.service), which runs the same write for every
    chosen bridge once per boot, early (before the container runtimes, the kubelet and the NVIDIA daemons), as the
    kernel turns ACS on again at every boot when an IOMMU is on. The unit is the only file it owns; it is removed
    when no bridge is chosen or O(persist=false). ACS needs no reboot.
  - Turning ACS off weakens the IOMMU isolation of the devices below those bridges; use C(pcie_acs.disable=none)
    on hosts that pass devices through to virtual machines.
extends_documentation_fragment:
  - ainet.fabric.host
  - ainet.fabric.host.interfaces
  - ainet.fabric.host.foreign_units
options:
  disable:
    description:
      - Which bridges lose ACS (see the description); filled by the action plugin from O(cluster).
      - Required unless O(cluster) is given.
    type: str
    choices: [gpu_nic, listed, none]
  nics:
    description: The node's rail NICs, for O(disable=gpu_nic); filled by the action plugin from O(interfaces).
    type: list
    elements: str
    default: []
  bridges:
    description:
      - The bridge PCI addresses (C(0000:3a:00.0)) for O(disable=listed), which needs at least one.
      - With O(cluster), the host-local list (C(pcie_acs_bridges)), handled by the action plugin; when not empty it
        replaces the model's choice on this host with exactly these bridges.
    type: list
    elements: str
    default: []
  source:
    description:
      - Where O(bridges) come from (C(fabric_cluster.pcie_acs.bridges), C(pcie_acs_bridges)), named in refusals.
    type: str
    default: bridges
attributes:
  check_mode:
    support: full
    description: Reads the bridges and reports the C(setpci) commands it would run.
  diff_mode:
    support: full
    description: Shows the ACS Control bits of each chosen bridge before and after, and the boot unit.
requirements:
  - pciutils (C(lspci), C(setpci))
"""

EXAMPLES = r"""
- name: ACS off between the GPUs and the rail NICs
  ainet.fabric.pcie_acs:
    cluster: "{{ fabric_cluster }}"
    interfaces: "{{ fabric_rail_interfaces }}"
  register: pcie_acs_result

- name: Only these two switch ports on this host, without a boot unit
  ainet.fabric.pcie_acs:
    cluster: "{{ fabric_cluster }}"
    interfaces: "{{ fabric_rail_interfaces }}"
    bridges: ["0000:17:01.0", "0000:17:02.0"]
    persist: false

- name: One root port, without the model
  ainet.fabric.pcie_acs:
    disable: listed
    bridges: ["0000:00:03.0"]
"""

RETURN = r"""
bridges:
  description: The chosen bridges, sorted by address.
  returned: always
  type: list
  elements: dict
  contains:
    address:
      description: The bridge's PCI address (C(0000:17:01.0)).
      type: str
    reason:
      description: Why it was chosen (C(above GPU 0000:19:00.0; above rail NIC ens6f0np0 (0000:1a:00.0))).
      type: str
    acs_ctl_before:
      description: The ACS Control bits that were on before the run (C(SrcValid), C(ReqRedir) ...).
      type: list
      elements: str
    changed:
      description: Whether ACS was (or, in check mode, would be) written on it.
      type: bool
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
msg:
  description: A summary, with why nothing was chosen when nothing was.
  returned: always
  type: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ainet.fabric.plugins.module_utils.host import boot_unit
from ansible_collections.ainet.fabric.plugins.module_utils.host import pcie_acs_state
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.common.file_formats import unit_dump
from ansible_collections.ainet.fabric.plugins.module_utils.host.runner import Runner, refuse_action_options
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_facts import ACS_BITS
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse_pci import parse_lspci_vvv

AcsError = pcie_acs_state.AcsError
ACTION_OPTIONS = ("cluster", "interfaces")


class Pci(object):
    """Runs pciutils and reads the rail NICs' PCI addresses (sysfs) through a :class:`Runner`."""

    def __init__(self, runner):
        self.runner = runner
        self.lspci = self.setpci = None

    def find_tools(self):
        self.lspci = self.runner.bin("lspci")
        self.setpci = self.runner.bin("setpci")
        missing = [name for name, path in (("lspci", self.lspci), ("setpci", self.setpci)) if not path]
        if missing:
            raise AcsError("%s not found: install the package pciutils on this host" % " and ".join(missing))

    def pci(self):
        _rc, out, _err = self.runner.run([self.lspci, "-D", "-vvv"])
        facts = parse_lspci_vvv(out)
        if not facts["pci"]:
            raise AcsError("lspci -D -vvv printed no PCI device: %s" % (out.strip()[:200] or "(nothing)"))
        return pcie_acs_state.normalize(facts["pci"])

    def nic_address(self, nic):
        """The rail NIC's PCI function (its PF for a VF), or None (missing or virtual NIC)."""
        device = self.runner.sys("/sys/class/net/%s/device" % nic)
        if not os.path.exists(device):
            return None
        physfn = os.path.join(device, "physfn")
        path = os.path.realpath(physfn if os.path.exists(physfn) else device)
        name = os.path.basename(path)
        return name if pcie_acs_state.BDF.match(name) else None


def foreign_units(config_root):
    """Other units whose ``Exec`` lines write ACS, as ``/etc/systemd/system/<name>``."""
    return [path for path, _labels in boot_unit.foreign_units(config_root, pcie_acs_state.ROLE, pcie_acs_state.FOREIGN)]


def ctl_lines(pci, addresses, after=False):
    lines = []
    for addr in addresses:
        entry = pci.get(addr) or {}
        text = " ".join("%s-" % b for b in ACS_BITS) if after else pcie_acs_state.ctl_text(entry)
        lines.append("%s ACSCtl: %s\n" % (addr, text))
    return "".join(lines)


def summary(selected, plan, messages, check_mode):
    if not selected:
        return "; ".join(messages) or "no bridge is selected"
    verb = "would turn" if check_mode else "turned"
    text = "ACS off on %d bridge(s): %s" % (len(selected), ", ".join(s["address"] for s in selected))
    text += "; %s it off on %d" % (verb, len(plan)) if plan else "; all already off"
    return "; ".join([text] + messages)


def run_module():
    module = AnsibleModule(
        argument_spec=dict(
            disable=dict(type="str", choices=list(pcie_acs_state.MODES)),
            nics=dict(type="list", elements="str", default=[]),
            bridges=dict(type="list", elements="str", default=[]),
            source=dict(type="str", default="bridges"),
            cluster=dict(type="dict"),
            interfaces=dict(type="raw"),
            persist=dict(type="bool", default=True),
            foreign_units=dict(type="str", choices=["fail", "warn"], default="fail"),
            config_root=dict(type="path", default="/"),
            sysfs_root=dict(type="path", default="/"),
        ),
        required_one_of=[["disable", "cluster"]],
        supports_check_mode=True,
    )
    refuse_action_options(module, ACTION_OPTIONS, "ainet.fabric.pcie_acs")
    params = module.params
    unit = boot_unit.read_unit(params["config_root"], pcie_acs_state.ROLE)
    result = {"changed": False, "bridges": [], "commands": [], "reboot_pending": [], "msg": "",
              "unit": {"path": unit["path"], "changed": False, "enabled": unit["enabled"], "present": unit["present"]}}
    warnings, messages = [], []
    try:
        disable, bridges = params["disable"], params["bridges"] or []
        if disable == "listed" and not bridges:
            raise AcsError("disable is listed but bridges is empty: list the bridges, e.g. [0000:3a:00.0]")
        if disable != "listed" and bridges:
            raise AcsError("bridges %s is set while disable is %s: set disable: listed, or remove bridges"
                           % (", ".join(bridges), disable))
        foreign = foreign_units(params["config_root"])
        if foreign and params["foreign_units"] == "fail":
            raise AcsError("another tool's unit also writes PCIe ACS and would fight this one at every boot: %s. "
                           "Fix: disable and remove it (or set pcie_acs_foreign_units: warn)" % ", ".join(foreign))
        warnings += ["another tool's unit also writes PCIe ACS: %s" % path for path in foreign]
        host = Pci(Runner(module, params["sysfs_root"], params["config_root"], error=AcsError))
        pci, selected = {}, []
        if disable != "none":
            host.find_tools()
            pci = host.pci()
            nics = [(nic, host.nic_address(nic)) for nic in params["nics"]] if disable == "gpu_nic" else []
            selected, messages = pcie_acs_state.select_bridges(pci, {"disable": disable, "bridges": bridges}, nics,
                                                               field=params["source"])
        else:
            messages.append("disable is none (fabric_cluster.pcie_acs.disable): no bridge is changed")
        plan = pcie_acs_state.actions(pci, selected)
        planned = set(a["address"] for a in plan)
        result["commands"] = [pcie_acs_state.command_line(a["argv"]) for a in plan]
        result["bridges"] = [{"address": s["address"], "reason": s["reason"],
                              "acs_ctl_before": pcie_acs_state.bits_on(pci[s["address"]]),
                              "changed": s["address"] in planned} for s in selected]
        addresses = [s["address"] for s in selected]
        text = None
        if selected and params["persist"]:
            text = unit_dump(pcie_acs_state.unit_sections(addresses, host.setpci or "/usr/bin/setpci"),
                             boot_unit.header(pcie_acs_state.ROLE))
        unit_changed = unit["text"] != text
        result["unit"]["changed"] = unit_changed
        result["unit"]["present"] = text is not None
        result["changed"] = bool(plan) or unit_changed
        result["msg"] = summary(selected, plan, messages, module.check_mode)
        if module._diff:
            result["diff"] = [{"before_header": "PCIe bridges (ACSCtl)", "after_header": "PCIe bridges (ACSCtl)",
                               "before": ctl_lines(pci, addresses), "after": ctl_lines(pci, addresses, after=True)},
                              {"before_header": unit["path"], "before": unit["text"] or "",
                               "after_header": unit["path"], "after": text or ""}]
        if not module.check_mode:
            for action in plan:
                host.runner.run([host.setpci] + action["argv"][1:])
            boot_unit.sync_unit(unit, text, False)
            if not text:
                result["unit"]["enabled"] = False
            if plan:
                still = pcie_acs_state.left_on(host.pci(), addresses)
                if still:
                    raise AcsError("setpci ran, but lspci still shows ACS on: %s" % "; ".join(
                        "%s %s" % (addr, " ".join(bits)) for addr, bits in sorted(still.items())))
    except (FabricError, OSError, ValueError) as exc:
        for warning in warnings:
            module.warn(warning)
        result["msg"] = str(exc)
        module.fail_json(**result)
    for warning in warnings + [m for m in messages if m.startswith("rail NIC")]:
        module.warn(warning)
    module.exit_json(**result)


def main():
    run_module()


if __name__ == "__main__":
    main()
