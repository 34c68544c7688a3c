# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
module: lossless_report
short_description: Check lossless agreement for every host-ToR link of the plan and write the report
version_added: 0.1.0
author: ainet.fabric contributors (@ainet)
description:
  - Runs on the controller. Plans O(nodes), takes each host's rail NIC QoS facts (gathered with
    M(ainet.fabric.roce_qos) C(state=gathered) and registered as O(facts_var)) and each ToR's
    configuration (O(switch_configs), else a file named after the ToR in O(switch_config_dir),
    parsed by the ToR's C(platform)), and compares every host NIC with its ToR port and the
    fabric's lossless profile (P(ainet.fabric.lossless_diff#filter)).
  - Writes C(lossless-report.md) and a self-contained C(lossless-report.html) to O(output_dir),
    one row per link, mismatches highlighted, a count per disagreement code. A link whose host or
    ToR could not be read is a row saying what is missing, never a pass.
options:
  cluster:
    description: The cluster model (C(fabric_cluster)).
    type: dict
    required: true
  nodes:
    description: Host name to C({node_id, rail_interfaces}), as built by P(ainet.fabric.node_map#filter).
    type: dict
    required: true
  hosts:
    description: The hosts whose links are checked (the play's hosts).
    type: list
    elements: str
    required: true
  facts_var:
    description:
      - The variable each host registered the result of M(ainet.fabric.roce_qos) C(state=gathered) in; its
        C(facts) are read, and its C(msg) names the reason when the NICs could not be read.
    type: str
    required: true
  switch_config_dir:
    description:
      - Directory with one configuration per ToR, named after it - C(<tor>.json) (SONiC config_db),
        C(<tor>.yaml) (Cumulus C(nv config show)), C(<tor>.cfg) (EOS, NX-OS, OS10 running-config).
    type: path
  switch_configs:
    description: ToR name to configuration text (or C({text, format})) read from the devices; wins over the directory.
    type: dict
    default: {}
  output_dir:
    description: Directory for the report files on the controller; omit it to only check.
    type: path
  generated:
    description: A time stamp to print in the report (the report is otherwise identical for identical input).
    type: str
    default: ""
  fail_on_disagreement:
    description: Fail when a link disagrees or could not be checked.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Checks and reports which report files would change, without writing them.
  diff_mode:
    support: none
    description: No diff; the report is the output.
  action:
    support: full
    description: An action plugin; nothing runs on the managed hosts.
"""

EXAMPLES = r"""
- name: Compare every rail NIC with its ToR port and write the report
  ainet.fabric.lossless_report:
    cluster: "{{ fabric_cluster }}"
    nodes: "{{ groups['gpu_nodes'] | ainet.fabric.node_map(hostvars) }}"
    hosts: "{{ ansible_play_hosts_all }}"
    facts_var: nic_qos
    switch_config_dir: "{{ inventory_dir }}/switch-configs"
    output_dir: "{{ inventory_dir }}/.ainet-fabric/{{ fabric_cluster.name }}"
  run_once: true
"""

RETURN = r"""
summary:
  description: Link counts by verdict and disagreement counts by code.
  returned: success
  type: dict
  sample: {links: 32, agree: 24, disagree: 8, error: 0, by_code: {roce_dscp_lossy_on_switch: 8}}
files:
  description: The report files written (or, in check mode, that would be).
  returned: success
  type: list
  elements: str
switch_problems:
  description: Per ToR, what its configuration states but cannot be honoured (e.g. a policy referenced but never defined).
  returned: success
  type: dict
disagreements:
  description: The first 200 links that disagree or could not be checked, with their disagreements.
  returned: success
  type: list
  elements: dict
"""
