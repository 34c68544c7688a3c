# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
module: k8s_objects
short_description: Render the fabrics' Kubernetes network objects from the rail plan
version_added: 0.3.0
author: ainet.fabric contributors (@ainet)
description:
  - Runs on the controller. Computes the rail plan and renders, for every fabric whose C(cni) attaches pods, the
    objects its pods need (docs/workloads.md) - the device plugins' ConfigMaps or SR-IOV operator policies,
    Spiderpool C(SpiderIPPool)s (per rail, or per node and rail in C(exclusive) addressing) and
    C(SpiderMultusConfig)s, the NVIDIA network operator's nv-ipam C(CIDRPool)s (each node's subnet a static
    allocation) with C(SriovNetwork)s, or C(NetworkAttachmentDefinition)s with whereabouts, host-local or nv-ipam
    IPAM.
  - Checks every object against the plan (pools inside their rail's or node's subnet, holding no host address and
    no gateway, not overlapping; gateways the ToR's addresses) and fails with the first problem when one disagrees.
  - With O(crd_dir) (or the environment variable C(AINET_K8S_CRD_DIR)), validates every custom resource against the
    C(openAPIV3Schema) of its CRD, strictly (unknown keys are violations); without it, or without the Python package
    C(openapi-schema-validator), says in RV(notes) that the check was skipped.
  - Writes one file per kind to O(dest), in apply order (C(10-configmaps.yaml), C(20-sriovnetworknodepolicies.yaml),
    C(30-spiderippools.yaml), C(30-cidrpools.yaml), C(40-spidermultusconfigs.yaml), C(40-sriovnetworks.yaml),
    C(40-sriovibnetworks.yaml), C(40-networkattachmentdefinitions.yaml)), only the files whose content changed; removes its own files of kinds
    no longer rendered.
  - With O(kubeconfig), compares each file with the cluster (C(kubectl diff --server-side), in file order) and applies
    the files that differ (C(kubectl apply --server-side --field-manager ainet-fabric)), with the C(kubectl) of the
    controller's C(PATH). In check mode the comparison is the answer (of copies of the files this run would write,
    in a private temporary directory) and nothing is applied. A C(kubectl) error fails the task with its first line.
options:
  cluster:
    description:
      - The cluster model.
      - Default, the variable C(fabric_cluster) of the task's host, read by the action itself and templated only where
        it holds a template (the model of 2,048 ToRs passed as an argument is templated, checked and sent back with
        the result, about a second).
    type: dict
  nodes:
    description:
      - Host name to C({node_id, rail_interfaces}), as built by the P(ainet.fabric.node_map#filter) filter.
      - One of O(nodes) and O(node_group) is required.
    type: dict
  node_group:
    description:
      - The inventory group of the GPU nodes. The action reads each node's C(fabric_node_id),
        C(fabric_rail_interfaces) and gathered facts itself, with the same values and precedence as
        C(hostvars[node]) gives them, and much faster for thousands of nodes than O(nodes) templated from
        C(hostvars).
      - A missing group or one without hosts fails the task with one line naming the group.
    type: str
  dest:
    description: The directory of the files; without it nothing is written.
    type: path
  crd_dir:
    description: A directory of CustomResourceDefinitions (YAML, searched recursively) to validate against.
    type: path
  node_names:
    description:
      - Inventory host name to Kubernetes node name, where they differ by more than case (an FQDN in the inventory,
        a short name registered by kubelet). Other hosts are their lower-cased names. Used in node affinities and
        selectors (SpiderIPPools, CIDRPools, per-node SR-IOV policies).
    type: dict
    default: {}
  rail_pci:
    description:
      - "Host name to C({nic: PCI address}) of its rail NICs. Where every node of a fabric has them, the SR-IOV
        selectors pick the rail PFs by PCI address (C(rootDevices)) instead of names. Hosts missing here take the
        C(pciid) of their gathered facts (C(ansible_facts[<nic>].pciid)) when facts were gathered."
    type: dict
    default: {}
  remove_stale:
    description: Remove this module's own files (by their header) of kinds no longer rendered.
    type: bool
    default: true
  kubeconfig:
    description: A kubeconfig to compare the files with that cluster and apply those that differ; without it nothing
      is sent to a cluster.
    type: path
attributes:
  check_mode:
    support: full
    description: Renders and checks, compares with the cluster (O(kubeconfig)); writes and applies nothing.
  diff_mode:
    support: full
    description: The changed lines of every file.
notes:
  - The objects carry the labels C(ainet.fabric/cluster), C(ainet.fabric/fabric), C(ainet.fabric/rail) (and
    C(ainet.fabric/node) on a node's pool).
"""

EXAMPLES = r"""
- name: Render the Kubernetes objects of the fabrics (the model is the host's fabric_cluster)
  ainet.fabric.k8s_objects:
    node_group: gpu_nodes
    dest: "{{ inventory_dir }}/.ainet-fabric/{{ fabric_cluster.name }}/k8s"
    crd_dir: /srv/crds
  run_once: true

- name: Render them and apply the files that differ from the cluster
  ainet.fabric.k8s_objects:
    node_group: gpu_nodes
    dest: "{{ inventory_dir }}/.ainet-fabric/{{ fabric_cluster.name }}/k8s"
    kubeconfig: ~/.kube/config
  run_once: true

- name: The same, from a node map built elsewhere
  ainet.fabric.k8s_objects:
    cluster: "{{ fabric_cluster }}"
    nodes: "{{ groups['gpu_nodes'] | ainet.fabric.node_map(hostvars) }}"
  run_once: true
"""

RETURN = r"""
files:
  description: The file names rendered, in apply order.
  returned: success
  type: list
  elements: str
written:
  description: The files whose content changed (in check mode, that would be written).
  returned: success
  type: list
  elements: str
removed:
  description: Own files of kinds no longer rendered, removed.
  returned: success
  type: list
  elements: str
differ:
  description: With O(kubeconfig), the files C(kubectl diff) found different from the cluster, in file order.
  returned: success
  type: list
  elements: str
applied:
  description: With O(kubeconfig), the files applied (none in check mode).
  returned: success
  type: list
  elements: str
counts:
  description: Objects per kind.
  returned: success
  type: dict
  sample: {ConfigMap: 1, SpiderIPPool: 8192, SpiderMultusConfig: 8}
objects:
  description: The number of objects.
  returned: success
  type: int
validated:
  description: Whether the custom resources were validated against their CRDs.
  returned: success
  type: bool
notes:
  description: What was not checked, and why.
  returned: success
  type: list
  elements: str
problems:
  description: The objects' disagreements with the plan (the task fails).
  returned: failure
  type: list
  elements: str
violations:
  description: The CRD schema violations (the task fails).
  returned: failure
  type: list
  elements: str
"""
