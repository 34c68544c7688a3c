#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: rdma_facts
short_description: Read a node's RDMA devices, GIDs, netns mode, SR-IOV, PCIe ACS, firmware and GPU-NIC topology
version_added: 0.1.0
author: ainet.fabric contributors (@ainet)
description:
  - Read-only, one call per host. Runs the RDMA tools that exist on the host and reads sysfs, parses every output
    with the parsers of P(ainet.fabric.parse_rdma#filter) and returns one merged structure (documented in
    C(plugins/module_utils/rdma/rdma_facts.py)) - RDMA devices with their netdevs, ports (state, physical state, link
    layer), GIDs with their type; the RDMA netns mode; PCI functions with ACS capability and control bits, SR-IOV
    and the bridge chain above them; Mellanox firmware settings with what is pending for the next boot; the
    GPU-NIC topology; loaded RDMA modules; the OFED/DOCA version.
  - Per network interface, from sysfs - PCI address, driver, NUMA node, RDMA devices, SR-IOV total and current VFs
    with each VF's PCI address and netdev.
  - For the O(interfaces) (the rail NICs) - which RDMA device and port each one is, and the index of the RoCEv2 GID
    of its address (O(addresses)), so later roles refer to rails rather than device names.
  - A tool that is missing or fails is reported in RV(sources) as not available with the reason; it never fails
    the module.
options:
  interfaces:
    description: The rail NICs to map to RDMA devices (usually C(fabric_rail_interfaces)).
    type: list
    elements: str
    default: []
  addresses:
    description: Rail NIC to its IPv4 or IPv6 address (C(/len) allowed), to find the index of the RoCEv2 GID holding
      it - in the GID table (C(/sys/class/infiniband/<dev>/ports/<n>/gids/<i>), C(gid_attrs/types/<i>) C(RoCE v2),
      C(gid_attrs/ndevs/<i>) the rail NIC) an IPv4 address is C(::ffff:a.b.c.d), an IPv6 address its own 16 bytes.
    type: dict
    default: {}
  firmware:
    description:
      - Also query Mellanox firmware settings with C(mlxconfig) (LINK_TYPE_P1/P2, SRIOV_EN, NUM_OF_VFS) for the PCI
        function of each rail NIC. Off by default - mlxconfig takes seconds per device and needs the MFT tools.
    type: bool
    default: false
  sysfs_root:
    description: Root of the filesystem that holds C(sys/) (tests).
    type: path
    default: /
attributes:
  check_mode:
    support: full
    description: Reads only.
  diff_mode:
    support: none
    description: Reads only.
notes:
  - C(lspci) shows ACS and SR-IOV capabilities only to root; use C(become).
"""

EXAMPLES = r"""
- name: Read the node's RDMA facts and map the rail NICs
  ainet.fabric.rdma_facts:
    interfaces: "{{ fabric_rail_interfaces }}"
  become: true
  register: rdma
"""

RETURN = r"""
facts:
  description: The merged RDMA facts (format, available, system, devices, pci, firmware, topology, ofed, modules,
    problems).
  returned: always
  type: dict
netdevs:
  description: Per network interface with a PCI device - pci, driver, numa_node, rdma_devices, sriov (total_vfs,
    num_vfs, vfs with index, pci, netdev).
  returned: always
  type: dict
rails:
  description:
    - Per rail NIC, in O(interfaces) order - netdev, rdma_device, port, gid_index, address, problem.
    - An RDMA device whose name is not one the collection uses (letters, digits, C(_), C(.), C(-), at most 63) is
      never returned - rdma_device, port and gid_index are null and problem names it; problem is null otherwise.
  returned: always
  type: list
  elements: dict
sources:
  description: Per source (tool or sysfs), whether it was available and why not.
  returned: always
  type: dict
  sample: {rdma_system: {available: true}, mlxconfig: {available: false, reason: "not asked (firmware: false)"}}
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_facts import merge, new_facts
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_gather import gid_sysfs_text, netdev_sysfs, rails
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse import parse_rdma

# (format, tool, argv): each runs when its tool is on PATH.
COMMANDS = (
    ("rdma_system", "rdma", ["rdma", "system", "show"]),
    ("rdma_link", "rdma", ["rdma", "link", "show"]),
    ("ibstat", "ibv_devinfo", ["ibv_devinfo"]),
    ("lspci_vvv", "lspci", ["lspci", "-vvv", "-D"]),
    ("nvidia_smi_topo", "nvidia-smi", ["nvidia-smi", "topo", "-m"]),
    ("ofed_info", "ofed_info", ["ofed_info", "-s"]),
    ("lsmod", "lsmod", ["lsmod"]),
)
MLXCONFIG_KEYS = ["LINK_TYPE_P1", "LINK_TYPE_P2", "SRIOV_EN", "NUM_OF_VFS"]


def gather(module, root):
    parts, sources = [], {}
    for fmt, tool, argv in COMMANDS:
        path = module.get_bin_path(tool)
        if not path:
            sources[fmt] = {"available": False, "reason": "%s is not installed" % tool}
            continue
        rc, out, err = module.run_command([path] + argv[1:])
        facts = parse_rdma(out + err, fmt)
        if rc != 0 and not out.strip():
            facts["available"] = False
        parts.append(facts)
        sources[fmt] = {"available": bool(facts["available"]), "rc": rc}
        if not facts["available"]:
            sources[fmt]["reason"] = (facts["problems"] or [(err or out).strip()[:200] or "rc %d" % rc])[0]
    text = gid_sysfs_text(root)
    if text:
        parts.append(parse_rdma(text, "show_gids"))
    sources["gids"] = {"available": bool(text), "reason": None if text else "no RDMA device in sysfs"}
    netns = os.path.join(root, "sys/module/ib_core/parameters/netns_mode")
    if os.path.exists(netns):
        with open(netns) as handle:
            parts.append(parse_rdma(handle.read(), "netns_mode"))
    return parts, sources


def firmware(module, netdevs, nics, sources):
    path = module.get_bin_path("mlxconfig") or module.get_bin_path("mstconfig")
    if not path:
        sources["mlxconfig"] = {"available": False, "reason": "neither mlxconfig nor mstconfig is installed"}
        return []
    parts, seen = [], set()
    for nic in nics:
        pci = (netdevs.get(nic) or {}).get("pci")
        if not pci or pci in seen:
            continue
        seen.add(pci)
        rc, out, err = module.run_command([path, "-d", pci, "-e", "q"] + MLXCONFIG_KEYS)
        parts.append(parse_rdma(out + err, "mlxconfig"))
    sources["mlxconfig"] = {"available": bool(parts), "devices": sorted(seen)}
    return parts


def main():
    module = AnsibleModule(argument_spec=dict(
        interfaces=dict(type="list", elements="str", default=[]),
        addresses=dict(type="dict", default={}),
        firmware=dict(type="bool", default=False),
        sysfs_root=dict(type="path", default="/"),
    ), supports_check_mode=True)
    root = module.params["sysfs_root"]
    nics = module.params["interfaces"]
    parts, sources = gather(module, root)
    netdevs = netdev_sysfs(root)
    for nic in nics:
        if nic not in netdevs:
            netdevs.update(netdev_sysfs(root, [nic]))
    if module.params["firmware"]:
        parts += firmware(module, netdevs, nics, sources)
    else:
        sources["mlxconfig"] = {"available": False, "reason": "not asked (firmware: false)"}
    facts = merge(*parts) if parts else new_facts("none")
    module.exit_json(changed=False, facts=facts, netdevs=netdevs, sources=sources,
                     rails=rails(facts, nics, netdevs, module.params["addresses"]))


if __name__ == "__main__":
    main()
