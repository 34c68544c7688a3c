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
  - Which bridges (C(pcie_acs.disable) of O(cluster)) - V(gpu_nic) (the default), the bridges with an ACS
    capability on the upstream chain of every GPU and every rail NIC of the node (none on a node without a
    GPU); V(listed), exactly C(pcie_acs.bridges); V(none), none. O(bridges), when not empty, replaces that
    choice on this host.
  - Refuses, before any change, a listed address that is not a PCI device of the host, not a PCI bridge, or has
    no ACS capability, and another tool's unit that also writes ACS (named; O(foreign_units)).
  - Writes C(setpci -s <bridge> ECAP_ACS+0x6.w=0000) only to the bridges whose ACS Control register has a bit on,
    then reads C(lspci -D -vvv) again and fails if a bit is still on.
  - Persists with one boot unit, C(/etc/systemd/system/ainet-pcie-acs.service), which runs the same write for every
    chosen bridge once per boot, early (before the container runtimes, the kubelet and the NVIDIA daemons), as the
    kernel turns ACS on again at every boot when an IOMMU is on. The unit is the only file it owns; it is removed
    when no bridge is chosen or O(persist=false). ACS needs no reboot.
  - Turning ACS off weakens the IOMMU isolation of the devices below those bridges; use C(pcie_acs.disable=none)
    on hosts that pass devices through to virtual machines.
options:
  cluster:
    description: The cluster model (C(fabric_cluster)).
    type: dict
    required: true
  interfaces:
    description: The node's rail NICs (C(fabric_rail_interfaces)); a list for one fabric or a mapping per fabric.
    type: raw
    required: true
  bridges:
    description:
      - Host-local list of bridge PCI addresses (C(0000:3a:00.0)); when not empty it replaces the model's choice
        on this host with exactly these bridges.
    type: list
    elements: str
    default: []
  persist:
    description: Write and keep the boot unit (V(false) removes it; the runtime change stays until the next boot).
    type: bool
    default: true
  foreign_units:
    description: What to do about another tool's unit that also writes ACS (C(ECAP_ACS), C(ECAP0d)).
    type: str
    choices: [fail, warn]
    default: fail
  config_root:
    description: Root directory of the boot unit (image builds and tests).
    type: path
    default: /
  sysfs_root:
    description: Root directory under which C(/sys) is read (tests).
    type: path
    default: /
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
  description: Always empty (ACS changes at once); kept for the site playbook.
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
import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ainet.fabric.plugins.module_utils.host import boot_unit
from ansible_collections.ainet.fabric.plugins.module_utils.host import pcie_acs_state
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.common.file_formats import unit_dump
from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import read_text
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import fabric_interfaces
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_facts import ACS_BITS
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse_pci import parse_lspci_vvv

AcsError = pcie_acs_state.AcsError
FOREIGN = re.compile(r"\bECAP(_ACS|0*d)\b", re.I)
UNIT_DIRS = ("etc/systemd/system",)


class Host(object):
    """Runs pciutils and reads the rail NICs' PCI addresses (sysfs under ``sysfs_root``)."""

    def __init__(self, module, root):
        self.module = module
        self.root = root
        self.lspci = self.setpci = None

    def find_tools(self):
        self.lspci = self.module.get_bin_path("lspci")
        self.setpci = self.module.get_bin_path("setpci")
        missing = [name for name, path in (("lspci", self.lspci), ("setpci", self.setpci)) if not path]
        if missing:
            raise AcsError("%s not found: install the package pciutils on this host" % " and ".join(missing))

    def run(self, argv):
        rc, out, err = self.module.run_command(argv, environ_update={"LC_ALL": "C"})
        if rc != 0:
            raise AcsError("%s failed (rc %d): %s" % (" ".join(argv), rc, (err or out).strip()[:400]))
        return out

    def pci(self):
        out = self.run([self.lspci, "-D", "-vvv"])
        facts = parse_lspci_vvv(out)
        if not facts["pci"]:
            raise AcsError("lspci -D -vvv printed no PCI device: %s" % (out.strip()[:200] or "(nothing)"))
        return pcie_acs_state.normalize(facts["pci"])

    def nic_address(self, nic):
        """The rail NIC's PCI function (its PF for a VF), or None (missing or virtual NIC)."""
        device = os.path.join(self.root, "sys/class/net", nic, "device")
        if not os.path.exists(device):
            return None
        physfn = os.path.join(device, "physfn")
        path = os.path.realpath(physfn if os.path.exists(physfn) else device)
        name = os.path.basename(path)
        return name if pcie_acs_state.BDF.match(name) else None


def foreign_units(config_root):
    """Other units whose ``Exec`` lines write ACS, as ``/etc/systemd/system/<name>``."""
    found = []
    own = boot_unit.unit_name(pcie_acs_state.ROLE)
    for rel in UNIT_DIRS:
        directory = os.path.join(config_root, rel)
        if not os.path.isdir(directory):
            continue
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if name == own or not name.endswith(".service") or not os.path.isfile(path):
                continue
            text = read_text(path) or ""
            if any(FOREIGN.search(line) for line in text.splitlines() if line.strip().startswith("Exec")):
                found.append("/" + rel + "/" + name)
    return found


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
            cluster=dict(type="dict", required=True),
            interfaces=dict(type="raw", required=True),
            bridges=dict(type="list", elements="str", default=[]),
            persist=dict(type="bool", default=True),
            foreign_units=dict(type="str", choices=["fail", "warn"], default="fail"),
            config_root=dict(type="path", default="/"),
            sysfs_root=dict(type="path", default="/"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    unit = boot_unit.read_unit(params["config_root"], pcie_acs_state.ROLE)
    result = {"changed": False, "bridges": [], "commands": [], "reboot_pending": [], "msg": "",
              "unit": {"path": unit["path"], "changed": False, "enabled": unit["enabled"], "present": unit["present"]}}
    warnings, messages = [], []
    try:
        cluster = load_cluster(params["cluster"])
        nics_by_fabric = fabric_interfaces(cluster, params["interfaces"])
        acs = cluster.pcie_acs
        override = params["bridges"] or []
        foreign = foreign_units(params["config_root"])
        if foreign and params["foreign_units"] == "fail":
            raise AcsError("another tool's unit also writes PCIe ACS and would fight this one at every boot: %s. "
                           "Fix: disable and remove it (or set pcie_acs_foreign_units: warn)" % ", ".join(foreign))
        warnings += ["another tool's unit also writes PCIe ACS: %s" % path for path in foreign]
        host = Host(module, params["sysfs_root"])
        pci, selected = {}, []
        if override or acs["disable"] != "none":
            host.find_tools()
            pci = host.pci()
            nics = []
            if not override and acs["disable"] == "gpu_nic":
                nics = [(nic, host.nic_address(nic)) for fabric in cluster.fabrics
                        for nic in nics_by_fabric.get(fabric.name, [])]
            selected, messages = pcie_acs_state.select_bridges(pci, acs, nics, override)
        else:
            messages.append("fabric_cluster.pcie_acs.disable is none: no bridge is changed")
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
                host.run([host.setpci] + action["argv"][1:])
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
