#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: lossless_counters
short_description: Read a node's rail NIC and RDMA counters for a lossless load test
version_added: 0.4.0
author: ainet.fabric contributors (@ainet)
description:
  - Reads, for each of O(links), the rail NIC's C(ethtool -S) and its RDMA device port's C(hw_counters) directory
    (C(/sys/class/infiniband/<dev>/ports/<n>/hw_counters)), and the RDMA device's driver (which picks the parser).
  - Returns the reads unparsed; the controller parses and judges them (P(ainet.fabric.parse_counters#filter),
    P(ainet.fabric.load_verdict#filter)). The role P(ainet.fabric.lossless_test#role) calls it before and after
    each incast round on every participant.
  - Changes nothing. A missing tool, NIC or RDMA device is a line in the result, never a failure.
options:
  links:
    description:
      - The links to read, each C(interface) (the rail NIC), C(rdma_device) and C(rdma_port) (as
        P(ainet.fabric.rdma_facts#module) reports them in its C(rails); omit both where the NIC has no RDMA device).
    type: list
    elements: dict
    required: true
  sysfs_root:
    description: Root under which C(/sys) is read (tests).
    type: path
    default: /
attributes:
  check_mode:
    support: full
    description: Reads only; the same in check mode.
  diff_mode:
    support: none
    description: Nothing to diff.
"""

EXAMPLES = r"""
- name: Read the counters of rail 1
  ainet.fabric.lossless_counters:
    links:
      - {interface: ens6f0np0, rdma_device: mlx5_0, rdma_port: 1}
  register: counters

- name: Parse the RDMA counters of the read
  ansible.builtin.debug:
    msg: "{{ counters.interfaces.ens6f0np0.hw_counters | ainet.fabric.parse_counters('rdma_mlx5') }}"
"""

RETURN = r"""
interfaces:
  description:
    - Per interface - C(ethtool) (the text of C(ethtool -S)) or C(ethtool_error), C(rdma_device), C(rdma_port),
      C(rdma_driver) (C(mlx5_core), C(rxe); null when sysfs does not say), C(hw_counters) (counter name to its file's
      text) or C(rdma_error).
  returned: always
  type: dict
  sample: {ens6f0np0: {ethtool: "NIC statistics:\n     rx_prio3_pause: 12\n", ethtool_error: null,
           rdma_device: mlx5_0, rdma_port: 1, rdma_driver: mlx5_core, hw_counters: {out_of_sequence: "0"},
           rdma_error: null}}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_read import read_links


def main():
    module = AnsibleModule(argument_spec=dict(
        links=dict(type="list", elements="dict", required=True),
        sysfs_root=dict(type="path", default="/"),
    ), supports_check_mode=True)
    links = []
    for index, link in enumerate(module.params["links"]):
        if not isinstance(link.get("interface"), str) or not link["interface"]:
            module.fail_json(msg="links[%d].interface: %r is not an interface name. Fix: give each link its rail NIC"
                             % (index, link.get("interface")))
        links.append(link)
    ethtool = module.get_bin_path("ethtool")

    def run(argv):
        if not ethtool:
            return 127, "", "ethtool is not installed"
        return module.run_command([ethtool] + argv[1:], environ_update={"LC_ALL": "C"})

    module.exit_json(changed=False, **read_links(links, run, module.params["sysfs_root"]))


if __name__ == "__main__":
    main()
