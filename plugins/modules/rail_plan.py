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
    description:
      - The cluster model (C(fabric_cluster)).
      - Where omitted, in V(plan) and V(check) mode the C(fabric_cluster) of the task's host, read by the action
        from the task's variables (templated only where it holds a template; passed as C("{{ fabric_cluster }}"),
        a model of 2,048 ToRs is templated, checked and sent back with the task, a second at 16,384 nodes); else
        (V(validate) mode, or the task's host has none) the C(fabric_cluster) of the first host of the first group
        of O(node_groups).
    type: dict
  nodes:
    description:
      - Host name to C({node_id, rail_interfaces}), as built by the P(ainet.fabric.node_map#filter)
        filter, or host name to node id.
      - Where omitted, the hosts of the first group of O(node_groups) with their C(fabric_node_id) and
        C(fabric_rail_interfaces).
      - Every host name must be an RFC 1123 host name (dot-separated labels of letters, digits, C(-) and C(_)) or
        an IPv6 address; another name (a line break, a space, C(;)) is refused in one line, since host names are
        written into the ToRs' port descriptions.
    type: dict
  node_groups:
    description:
      - The inventory groups of the job, each under the name of the variable that names it, such as
        C(rail_plan_node_group=gpu_nodes). Each must exist and have hosts, or the task fails with one line
        naming the variable, the group and the fix (a play on a missing group would be skipped and the job
        succeed).
      - The first group's hosts are the nodes where O(nodes) is omitted.
      - One of O(nodes) and O(node_groups) is required.
    type: dict
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
  mode:
    description:
      - V(plan) (the plan job) writes the report files and the plan lock O(lock_file), and
        publishes the lock as the job artifact C(rail_plan_lock) (C(set_stats) data; not in check
        mode), in the lock file's format 2 (the mapping the file sets as C(rail_plan_lock)). O(nodes) should then
        be the whole inventory.
      - V(check) (the host job, possibly limited or one AWX slice) plans O(nodes), then refuses,
        before any host is touched, every host of O(check_hosts) that the published lock does not
        give exactly the same node id, rail NICs and addresses, or a lock made from another
        cluster model. It writes nothing.
      - V(validate) (the first play of every job) validates the model and the nodes and checks O(node_groups);
        it writes and checks nothing else.
    type: str
    choices: [plan, check, validate]
    default: plan
  lock_file:
    description:
      - >-
        The plan lock on the controller, C(<inventory dir>/rail_plan_lock.yml); commit it with the
        inventory. It is at the same time an inventory source that sets the variable C(rail_plan_lock) for
        every host. Format 2, YAML of four scalars - C(version) (2), C(cluster), C(model) (the model's digest)
        and C(nodes), a block of one line per host in node-id order,
        C(<host> <node id>: <fabric> <rail> <nic> <address>, ...) - so that a diff of it reads like a review of
        the plan and Ansible loads it at almost no cost. A line edited by hand is refused naming its line.
      - Written in V(plan) mode, read first in V(check) mode.
      - Format 1, C(rail_plan_lock.json) (JSON, one host per line), is still read where it is beside a
        O(lock_file) of the default name that does not exist. In V(plan) mode the task removes it, after writing
        O(lock_file), where it is a lock this collection wrote, and fails naming it, before anything is written,
        where it is any other file.
    type: path
  lock:
    description:
      - The published lock as a variable, C(rail_plan_lock) - the inventory's copy (the lock file is
        also an inventory source that sets it), or the plan job's artifact that an AWX workflow passes
        to the next jobs as an extra var; format 2 or 1 (see O(lock_file)).
      - In V(plan) mode it is the lock published so far where O(lock_file) is not given or does not
        exist; the task reports changed only when the new plan differs from it (an AWX plan job,
        which writes no file that outlives it, reports changed=0 for an unchanged plan).
      - In V(check) mode it is used where O(lock_file) does not exist (an AWX job's inventory is not a
        directory of the project); the file, where it exists, wins, because a plan job in the same
        command may just have rewritten it.
      - Omitted, the action reads the variable C(rail_plan_lock) itself, where the task's host has it (templated
        only where it holds a template); passed as O(lock), a lock of 16,384 nodes is templated whole for the task,
        seconds that the check does not need.
    type: raw
  require_lock:
    description: In V(check) mode, fail when there is neither O(lock) nor O(lock_file).
    type: bool
    default: true
  check_hosts:
    description: In V(check) mode, the hosts to check against the lock (the play's hosts); all of O(nodes) when omitted.
    type: list
    elements: str
  check_play_hosts:
    description:
      - In V(check) mode, check the play's hosts (C(ansible_play_hosts_all)), which the action reads from the task's
        variables instead of a list of every host templated into O(check_hosts). Not with O(check_hosts).
    type: bool
    default: false
attributes:
  action:
    support: full
    description: Runs as an action plugin on the controller; the files are written there.
  check_mode:
    support: full
    description: Computes the plan and reports which files would change without writing them or publishing the lock.
  diff_mode:
    support: full
    description:
      - Shows the lines of the plan lock and of C(rails.csv) that change (no context, at most 200 lines
        each) and names the other rewritten report files.
"""

EXAMPLES = r"""
- name: Plan the GPU nodes and write the report files
  ainet.fabric.rail_plan:
    cluster: "{{ fabric_cluster }}"
    nodes: "{{ groups['gpu_nodes'] | ainet.fabric.node_map(hostvars) }}"
    output_dir: "{{ inventory_dir }}/.ainet-fabric/{{ fabric_cluster.name }}"
  delegate_to: localhost
  run_once: true

- name: Refuse, before any change, hosts that disagree with the published plan
  ainet.fabric.rail_plan:
    mode: check
    cluster: "{{ fabric_cluster }}"
    nodes: "{{ groups['gpu_nodes'] | ainet.fabric.node_map(hostvars) }}"
    lock_file: "{{ inventory_dir }}/rail_plan_lock.yml"
    check_play_hosts: true
  run_once: true

- name: Check the job's node group and the cluster model before any host is touched
  ainet.fabric.rail_plan:
    mode: validate
    node_groups:
      rail_plan_node_group: "{{ rail_plan_node_group | default('gpu_nodes') }}"
  run_once: true
"""

RETURN = r"""
summary:
  description: Cluster name, mode, family, node, rail, ToR and address counts.
  returned: success
  type: dict
  sample: {cluster: lab, mode: exclusive, family: 4, nodes: 4, rails: 4, tors: 4, addresses: 16, max_node_id: 4}
files:
  description: Report files and the lock written, and a format 1 lock removed (or, in check mode, that would be).
  returned: success
  type: list
  elements: str
output_dir:
  description: The directory of the report files, if any.
  returned: success
  type: str
lock_file:
  description: The plan lock file, if any.
  returned: success
  type: str
lock_changes:
  description: In V(plan) mode with O(lock_file), the hosts the new lock adds, removes or changes, and whether the model changed.
  returned: success
  type: dict
  sample: {added: [gpu05], removed: [], changed: [], model: false}
checked:
  description: In V(check) mode, the hosts found in agreement with the lock.
  returned: success
  type: list
  elements: str
lock_source:
  description: In V(check) mode, where the lock came from (the file, or C(rail_plan_lock)).
  returned: success
  type: str
msg:
  description: The job's one line about the plan, which the rail_plan role prints - the counts of RV(summary), where the
    plan files went, what the lock changes (V(plan) mode) or how many hosts agree with it (V(check) mode).
  returned: success
  type: str
  sample: "lab: 4 nodes, 4 rails in fabric(s) default (exclusive, ipv4), 4 ToRs, 16 addresses; node ids may go up
    to 8 (addressing capacity) -> /inv/.ainet-fabric/lab; lock /inv/rail_plan_lock.yml: 0 added, 0 removed, 0 changed"
plan:
  description: The whole plan, as the P(ainet.fabric.rail_plan#filter) filter returns it.
  returned: when O(return_plan) is true
  type: dict
"""
