# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
module: rail_plan
short_description: Compute the cluster's rail plan once and write its report files
version_added: 0.1.0
author: ainet.fabric contributors (@ainet)
description:
  - Runs on the controller. Validates the cluster model and the nodes, computes the rail plan for
    all of them in one pass, and writes C(plan.json), C(rails.csv), C(rails.md) and
    C(topology.mmd) to O(output_dir), rewriting only files whose content changed.
  - Returns a summary; the whole plan only with O(return_plan), because a plan for thousands of
    nodes is large and Ansible copies registered results.
options:
  cluster:
    description: The cluster model (C(fabric_cluster)).
    type: dict
    required: true
  nodes:
    description:
      - Host name to C({node_id, rail_interfaces}), as built by the P(ainet.fabric.node_map#filter)
        filter, or host name to node id.
    type: dict
    required: true
  output_dir:
    description: Directory for the report files on the controller; omit it to only validate and plan.
    type: path
  diagram_max_nodes:
    description: Nodes drawn in the Mermaid diagram before the rest are summarised.
    type: int
    default: 64
  return_plan:
    description: Return the whole plan as RV(plan).
    type: bool
    default: false
attributes:
  action:
    support: full
    description: Runs as an action plugin on the controller; the files are written there.
  check_mode:
    support: full
    description: Computes the plan and reports which files would change without writing them.
  diff_mode:
    support: full
    description: Shows each report file before and after.
"""

EXAMPLES = r"""
- name: Plan the GPU nodes and write the report files
  ainet.fabric.rail_plan:
    cluster: "{{ fabric_cluster }}"
    nodes: "{{ groups['gpu_nodes'] | ainet.fabric.node_map(hostvars) }}"
    output_dir: "{{ playbook_dir }}/../build/{{ fabric_cluster.name }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
summary:
  description: Cluster name, mode, family, node, rail, ToR and address counts.
  returned: success
  type: dict
  sample: {cluster: lab, mode: exclusive, family: 4, nodes: 4, rails: 4, tors: 4, addresses: 16, max_node_id: 4}
files:
  description: Report files written (or, in check mode, that would be written).
  returned: success
  type: list
  elements: str
output_dir:
  description: The directory of the report files, if any.
  returned: success
  type: str
plan:
  description: The whole plan, as the P(ainet.fabric.rail_plan#filter) filter returns it.
  returned: when O(return_plan) is true
  type: dict
"""
