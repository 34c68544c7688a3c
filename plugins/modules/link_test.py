# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
module: link_test
short_description: Plan the rounds of a fleet link test, and judge its results
version_added: 0.3.0
author: ainet.fabric contributors (@ainet)
description:
  - Runs on the controller (the role P(ainet.fabric.link_test#role) runs the tests on the nodes in between).
  - The O(hosts) are paired round by round with the round-robin method - every node in at most one pair per round,
    O(rounds) rounds (each node meets that many different peers) or, with O(full_mesh), every pair of nodes exactly
    once in N-1 rounds (N rounded up to even).
  - Every mode but O(mode=judge) computes the rail plan of O(cluster) and the nodes (O(node_group)'s variables, read
    once, or O(nodes)); bad input is refused in one line before any host is touched.
  - With O(mode=schedule), returns how many rounds there are (RV(rounds)), not the rounds themselves, and nothing of
    the plan - a registered plan of 16,384 nodes costs Ansible more (copied, sent from the worker, converted for
    the display) than planning again in each round.
  - With O(mode=schedule) and O(node_group) (neither O(cluster) nor O(nodes) given), the schedule does not plan where
    the rail_plan role's check of the play's hosts (its C(check) entry point, the host jobs' first task) left its
    result, C(rail_plan_check_result), with every host the schedule counts (the play's hosts in the group) among
    the hosts it planned and checked against the published plan; it counts them from the group's names (the same
    counts; the action reads that variable itself, untemplated). Otherwise it plans, and refuses bad input.
  - With O(mode=round), returns round O(round) only, computed on its own when it starts (a full mesh of 1,024 nodes
    is 1,023 rounds, and a play holds one at a time) - per host the peer, the role (C(server), C(client)) and the
    pair's rails with both addresses from the plan, the DF ping size that fills the rail MTU and a perftest port per
    rail.
  - With O(mode=judge), as a round ends, parses what every client kept of that round (C(ping), C(ib_write_bw) and
    C(rping) outputs, the host variable O(round_var)) and folds it into the job's tally (RV(tally)), registered as
    O(state_var) - the failures and slow links by peer, the counts and the RDMA measurements per client rail, never
    the outputs - so that a full mesh keeps one round's outputs at a time.
  - With O(mode=verdict), takes the tally (or, without one, parses what every client registered in O(results_var)) and
    judges each node's rail link - broken when it failed with two or more peers, slow when below O(min_gbps) with two or more,
    suspect when one peer only failed and that peer's own link is not broken - naming the node, NIC, ToR and port.
    Writes a Markdown O(report); fails when a link is broken unless O(fail_on_broken=false).
options:
  mode:
    description: V(schedule) (how many rounds), V(round) (one round's pairs), V(judge) (fold one round's outputs
      into the tally) or V(verdict).
    type: str
    choices: [schedule, round, judge, verdict]
    required: true
  cluster:
    description:
      - The cluster model; planned by every mode but O(mode=judge), which needs the nodes' names only.
      - Default - the task's variable C(fabric_cluster), read by the action without rendering it whole (a model of
        thousands of ToRs templated as an argument is copied for the task and sent back with its result).
    type: dict
  nodes:
    description:
      - Host name to C({node_id, rail_interfaces}), as built by the P(ainet.fabric.node_map#filter) filter.
      - This or O(node_group) is required.
    type: dict
  node_group:
    description:
      - The inventory group of the GPU nodes, instead of O(nodes). The action reads each node's C(fabric_node_id) and
        C(fabric_rail_interfaces) itself, as C(hostvars[node]) gives them, without templating them per node
        (O(mode=judge) reads the group's host names only).
    type: str
  hosts:
    description:
      - The nodes to test.
      - Default - the play's hosts (C(ansible_play_hosts)), read from the task's variables.
    type: list
    elements: str
  rounds:
    description: Rounds of pairs.
    type: int
    default: 3
  full_mesh:
    description: Every pair of nodes once.
    type: bool
    default: false
  round:
    description: With O(mode=round), the round to return (with O(mode=judge), the round to judge), from 1 to the RV(rounds) that O(mode=schedule) returned for
      the same O(hosts), O(rounds) and O(full_mesh); required then.
    type: int
  fabric:
    description: The fabric to test (every fabric when not given).
    type: str
  results_var:
    description: The host variable holding each client's registered rounds, read by O(mode=verdict) where no tally
      (O(state_var)) was registered.
    type: str
    default: __link_test_results
  round_var:
    description: The host variable holding what each client kept of its last round (C({round, peer, icmp_small, icmp,
      rdma_bw, rdma_cm}), each a looped task's C(results)), read by O(mode=judge).
    type: str
    default: __link_test_round_out
  state_var:
    description: The variable holding the registered result of the last O(mode=judge) (its RV(tally)).
    type: str
    default: __link_test_state
  links_var:
    description: The host variable holding each node's registered C(ip -j link show) (a broken link whose NIC is
      down says so).
    type: str
    default: __link_test_links
  rdma:
    description: Whether RDMA tests were asked for (the role's C(link_test_rdma)); the report says what was not run, and
      why, under "Not run" (V(false) - every RDMA test; V(true) - each rail without an RDMA device or a RoCE v2 GID for
      its address, IPv4 or IPv6).
    type: bool
    default: false
  rdma_var:
    description: The host variable holding each node's registered C(ainet.fabric.rdma_facts) result (its C(rails)).
    type: str
    default: __link_test_rdma
  min_gbps:
    description: The average RDMA bandwidth below which a link is slow.
    type: float
  max_usec:
    description: The average RDMA latency above which a link is slow.
    type: float
  report:
    description: A Markdown file for the verdict.
    type: path
  fail_on_broken:
    description: Fail when a link is broken.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Plans and judges; does not write the report.
  diff_mode:
    support: none
    description: The report is named in RV(report).
"""

EXAMPLES = r"""
- name: Count the rounds of pairs (the model fabric_cluster and the play's hosts, read by the action)
  ainet.fabric.link_test:
    mode: schedule
    node_group: gpu_nodes
  run_once: true
  register: __link_test_schedule

- name: Pair the nodes of a model and hosts of your own for round 1
  ainet.fabric.link_test:
    mode: round
    round: 1
    cluster: "{{ my_cluster }}"
    node_group: gpu_nodes
    hosts: "{{ groups['rack1'] }}"
  run_once: true
  register: pairs
"""

RETURN = r"""
rounds:
  description: With O(mode=schedule), how many rounds the schedule has (0 below two nodes).
  returned: when mode is schedule
  type: int
hosts:
  description: With O(mode=schedule), how many of the O(hosts) are nodes of the plan.
  returned: when mode is schedule
  type: int
tally:
  description: With O(mode=judge), the rounds judged so far - C(tested), C(failed), C(rounds) (their numbers), C(links)
    (host, fabric and rail to the peers it C(failed) or was C(slow) with, and why; only such links) and C(measured)
    (client, fabric, rail and test to the servers measured, the lowest Gb/s with its server, the highest Gb/s and
    latency).
  returned: when mode is judge
  type: dict
round:
  description: With O(mode=round), the round returned.
  returned: when mode is round
  type: int
assignments:
  description: With O(mode=round), host to C({peer, role, rails}) for that round; a node without a peer in it (an odd
    fleet's odd one out) is absent.
  returned: when mode is round
  type: dict
pairs:
  description: With O(mode=schedule), the number of pairs in all rounds; with O(mode=round), in that round.
  returned: when mode is schedule or round
  type: int
verdict:
  description: With O(mode=verdict), C(broken), C(slow) and C(suspect) links (host, fabric, rail, interface, tor,
    tor_port, peers, why), C(tested) and C(failed).
  returned: when mode is verdict
  type: dict
measured:
  description: With O(mode=verdict), the RDMA measurements per client rail (the RV(tally)'s C(measured)).
  returned: when mode is verdict
  type: dict
not_run:
  description: One line per test not run, each with its reason ("ib_write_bw skipped on ..., because ...").
  returned: when mode is verdict
  type: list
  elements: str
report:
  description: The report file.
  returned: when mode is verdict
  type: str
"""
