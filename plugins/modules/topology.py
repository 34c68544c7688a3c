# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
module: topology
short_description: The fabric as the schedulers see it - Slurm topology, node labels, Kueue and Volcano
version_added: 0.4.0
author: ainet.fabric contributors (@ainet)
description:
  - Runs on the controller. From the rail plan, finds each fabric's rail groups (the nodes that reach the same ToR on
    every rail) and spine blocks (the ToRs' C(spine_block)), and renders, per fabric, Slurm's C(topology.conf) for
    C(topology/tree) (a leaf switch per rail group, a switch per spine block, one root) and for C(topology/block)
    (blocks in spine block order, padded per spine block to a power of two, C(BlockSizes)), and one
    C(topology.yaml) (Slurm 25.05) with a topology per fabric; the Kubernetes node labels (the collection's keys or
    NVIDIA topograph's, never both); a Kueue C(Topology) and C(ResourceFlavor); Volcano C(HyperNode)s
    (docs/workloads.md).
  - Before anything is written, judges every rail group against the cabling check's result (O(cabling) or
    O(cabling_file)); a group the cabling splits, fuses or crosses, or whose cabling was not read, is left out of
    every file and reported in RV(withheld). Without a cabling result every group is withheld unless
    O(require_cabling=false).
  - Checks the CEL rules of the Kueue and Volcano CRDs, and with O(crd_dir) (or C(AINET_K8S_CRD_DIR)) their schemas.
  - Writes the files under O(dest) (C(slurm/<fabric>/topology.conf), C(slurm/<fabric>/topology-block.conf),
    C(slurm/topology.yaml), C(k8s/10-node-labels.yaml), C(k8s/20-kueue.yaml), C(k8s/30-volcano.yaml)), only those
    whose content changed; removes its own files (by their header) that the run no longer renders. Applying them is
    the role's (P(ainet.fabric.topology#role)).
options:
  cluster:
    description:
      - The cluster model.
      - Default, the variable C(fabric_cluster) of the task's host, read by the action itself and templated only where
        it holds a template (the model of 2,048 ToRs passed as an argument is templated, checked and sent back with
        the result, about a second), or the first node's of O(node_group) where the task's host is not one of its
        nodes. The node group is checked before the model.
    type: dict
  nodes:
    description:
      - Host name to C({node_id, rail_interfaces}), as built by the P(ainet.fabric.node_map#filter) filter.
      - One of O(nodes) and O(node_group) is required.
    type: dict
  node_group:
    description:
      - The inventory group of the GPU nodes, read once as C(hostvars) gives it. A missing group or one without
        hosts fails the task with one line naming the group.
    type: str
  dest:
    description: The directory of the files.
    type: path
    required: true
  cabling:
    description: The cabling check's result (what P(ainet.fabric.cabling_check#module) returns).
    type: dict
  cabling_file:
    description: The cabling job's saved result (C(cabling.json) beside C(cabling.md)); absent file, not checked.
    type: path
  require_cabling:
    description: Without a cabling result, withhold every rail group (true) or publish the plan as declared (false).
    type: bool
    default: true
  slurm_node_names:
    description:
      - Inventory host name to Slurm C(NodeName) where they differ. A name a Slurm hostlist could read otherwise
        (C(,), C([), C(]), whitespace, C(=), C(#), an IPv6 literal's C(:)) is refused.
    type: dict
    default: {}
  k8s_node_names:
    description: Inventory host name to Kubernetes node name where they differ by more than case.
    type: dict
    default: {}
  label_keys:
    description:
      - C(ainet) - C(ainet.fabric/rail-group) and C(ainet.fabric/spine-block) (with several fabrics
        C(ainet.fabric/<fabric>.rail-group) ...). C(topograph) - C(fabric.topograph.run/tier-0) (rail group) and
        C(tier-1) (spine block) of one fabric (O(topograph_fabric)); refused on a node that topograph itself manages
        (annotation C(topograph.run/instance)). Every node also carries C(ainet.fabric/cluster).
    type: str
    choices: [ainet, topograph]
    default: ainet
  topograph_fabric:
    description: The fabric labelled with topograph's keys (default the first).
    type: str
  kueue_api:
    description: The Kueue Topology API version (C(v1alpha1) up to Kueue 0.13, with ResourceFlavor C(v1beta1)).
    type: str
    choices: [v1alpha1, v1beta1, v1beta2]
    default: v1beta2
  slurm_yaml_types:
    description: Fabric name to C(tree) or C(block), the kind of its topology in C(topology.yaml) (default C(tree)).
    type: dict
    default: {}
  crd_dir:
    description: A directory of CustomResourceDefinitions (Kueue's, Volcano's) to validate the objects against.
    type: path
  nodes_read:
    description:
      - The cluster's nodes as read (C(kubectl get nodes -o json)'s C(items)). Given, RV(label_diff) compares the
        labels with them and the node label file names only nodes that exist.
    type: list
    elements: dict
attributes:
  check_mode:
    support: full
    description: Renders and checks; writes nothing.
  diff_mode:
    support: full
    description: The changed lines of every file.
"""

EXAMPLES = r"""
- name: The schedulers' topology of the fabrics, after the cabling job
  ainet.fabric.topology:
    node_group: gpu_nodes
    dest: "{{ inventory_dir }}/.ainet-fabric/{{ fabric_cluster.name }}/topology"
    cabling_file: "{{ inventory_dir }}/.ainet-fabric/{{ fabric_cluster.name }}/cabling.json"
  run_once: true
"""

RETURN = r"""
files:
  description: The files rendered, relative to O(dest).
  returned: success
  type: list
  elements: str
removed:
  description: Own files no longer rendered, removed (in check mode, that would be removed).
  returned: success
  type: list
  elements: str
k8s_files:
  description: The Kubernetes files among RV(files), in apply order.
  returned: success
  type: list
  elements: str
groups:
  description: Rail groups per fabric, as planned.
  returned: success
  type: dict
withheld:
  description: Fabric to C({rail group - verdict}) of the groups left out (C(split), C(fused), C(crossed), C(unverified)).
  returned: success
  type: dict
why:
  description: Fabric to C({rail group - the first lines of why}).
  returned: success
  type: dict
cabling_checked:
  description: Whether a cabling result was read.
  returned: success
  type: bool
label_diff:
  description: With O(nodes_read) - C(set) (node to C({key - [old, new]})), C(stale), C(absent), C(unchanged).
  returned: success
  type: dict
validated:
  description: Whether the Kueue and Volcano objects were validated against their CRDs.
  returned: success
  type: bool
notes:
  description: What was not checked, and ToRs whose node ranges cut rail groups.
  returned: success
  type: list
  elements: str
summary:
  description:
    - One line - the files written and where, each fabric's rail groups, the groups withheld and whether a cabling
      result judged them, the schema check.
  returned: success
  type: str
  sample: "6 files in /inv/.ainet-fabric/lab/topology; rail groups default: 3; withheld none (cabling checked); schema check passed"
labels_summary:
  description:
    - With O(nodes_read), one line of RV(label_diff) - the nodes to relabel (the first with its change), those as
      planned, those with stale keys of ours, the planned nodes not in the cluster; else null.
  returned: success
  type: str
"""
