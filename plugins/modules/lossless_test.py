#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
module: lossless_test
short_description: Plan the incast rounds of a lossless load test, judge each link, write the report
version_added: 0.3.0
author: ainet.fabric contributors (@ainet)
description:
  - Runs on the controller (the role P(ainet.fabric.lossless_test#role) loads the fabric and reads the counters in
    between).
  - Per ToR and rail of the plan and per lossless class, incast rounds - one receiver, k senders (every other node of
    the rail, at most O(max_senders)) writing to it at once - rotating the receiver (every node once, or O(rounds)
    receivers spread over the rail). The rounds come from the plan alone, never from the hosts of a C(--limit);
    a receiver outside O(hosts) is skipped saying so, a sender outside is left out of its incast.
  - Refuses (fails with one line naming the fix) when no fabric has a lossless profile, and when an option is out of
    bounds (O(seconds) 1 to 300, O(qps) 1 to 64, O(max_senders) 1 to 99, O(message_size) 64 to 8388608, O(rate_gbps)
    not negative).
  - With O(mode=schedule), returns the number of steps (one lossless class and one round each; every ToR runs one
    incast at once, a ToR that serves several rails running them in turn) and the rails O(agreement) refuses.
  - With O(mode=step), returns step O(step) - per host the C(ib_write_bw) servers (one per sender, on the receiver)
    and clients with the rail's RDMA device, port and RoCE v2 GID index (from each host's registered
    M(ainet.fabric.rdma_facts) in O(rdma_var)), the class's traffic class (C(--tclass), the profile's RoCE ToS or the
    DSCP of the class with ECT(0)), O(seconds), O(qps), O(message_size) and, on the senders, O(rate_gbps); and the
    links each host reads counters of. An incast on a rail whose agreement check found a disagreement is not loaded.
  - With O(mode=judge), one run per incast of the step, judged with P(ainet.fabric.load_verdict#filter) from the
    receiver's counters read before and after (its NIC's C(ethtool -S), its RDMA device's C(hw_counters)) and,
    where read, its ToR port's PFC and queue counters; the senders' reads never make the receiver's link
    V(dropped), but a loss they show makes the run V(lost), never lossless.
  - With O(mode=report), writes C(lossless.json) (the runs), C(lossless.md) and C(lossless.html) into O(report_dir)
    and fails when a run's verdict is in O(fail_on), naming each link, its ToR port and the counters that moved.
extends_documentation_fragment:
  - ainet.fabric.nodes
options:
  mode:
    description: V(schedule), V(step), V(judge) or V(report).
    type: str
    choices: [schedule, step, judge, report]
    required: true
  cluster:
    description: The cluster model (C(fabric_cluster)).
    type: dict
    required: true
  hosts:
    description: The nodes of this run (the play's hosts).
    type: list
    elements: str
    required: true
  fabric:
    description: The fabric to load (every fabric with a lossless profile when not given).
    type: str
  rounds:
    description: Incast rounds per ToR rail and class; V(0) makes every node of the rail the receiver once.
    type: int
    default: 0
  max_senders:
    description: Senders per incast at most.
    type: int
    default: 16
  seconds:
    description: Seconds each incast runs (C(ib_write_bw -D)).
    type: int
    default: 10
  qps:
    description: QPs per sender (C(ib_write_bw -q)).
    type: int
    default: 4
  message_size:
    description: Message size in bytes (C(ib_write_bw -s)).
    type: int
    default: 65536
  tx_depth:
    description: Each sender's send queue depth (C(ib_write_bw -t)); V(0) keeps perftest's default (128).
    type: int
    default: 0
  qp_timeout:
    description: Each sender's local ACK timeout (C(ib_write_bw -u), 4.096 us x 2^u); V(0) keeps perftest's 14.
    type: int
    default: 0
  rate_gbps:
    description: A bound on each sender's rate in Gb/s (perftest's software rate limiter); V(0) - line rate.
    type: float
    default: 0
  server_timeout:
    description: Seconds a server waits for its sender at most (C(timeout) around it).
    type: int
    default: 600
  tor_settle:
    description:
      - Seconds to wait after the load before reading the ToRs' counters again (RV(tor_settle)), for the NOS to poll
        them from the ASIC; V(auto) is the slowest of the step's ToRs' NOS (SONiC 10, its default queue counter
        polling; Cumulus 2, its switchd statistics poll; Linux 1; others 0), and the role waits instead as long as the
        poll intervals configured on the ToRs where their read before the load found them (SONiC C(counterpoll
        show), Cumulus switchd's C(stats.poll_interval); RV(tor_settle_auto)); a number from 0 to 600 overrides it.
    type: str
    default: auto
  agreement:
    description: The agreement check's links that disagree (the C(disagreements) of M(ainet.fabric.lossless_report));
      a rail with one is not loaded.
    type: list
    elements: raw
    default: []
  step:
    description: With O(mode=step), the step, from 1 to the RV(steps) of O(mode=schedule) with the same options.
    type: int
  rdma_var:
    description: The host variable holding each node's registered M(ainet.fabric.rdma_facts) result.
    type: str
    default: __lossless_test_rdma
  incasts:
    description: With O(mode=judge), the RV(incasts) of the step.
    type: list
    elements: dict
    default: []
  before_var:
    description: The host variable holding each node's M(ainet.fabric.lossless_counters) read before the load.
    type: str
    default: __lossless_test_before
  after_var:
    description: The same, after the load.
    type: str
    default: __lossless_test_after
  tor_before:
    description: With O(mode=judge), the registered C(results) of the ToR counter reads before the load
      (M(ainet.fabric.lossless_report) with C(read_counters)).
    type: list
    elements: raw
    default: []
  tor_after:
    description: The same, after the load.
    type: list
    elements: raw
    default: []
  max_pause_ratio:
    description: The part of the run the NIC may send PFC pauses for before it is a pause storm.
    type: float
    default: 0.5
  max_storm_events:
    description: Pause-storm events allowed.
    type: int
    default: 0
  runs:
    description: With O(mode=report), every step's RV(runs).
    type: list
    elements: dict
    default: []
  report_dir:
    description: With O(mode=report), the directory of C(lossless.json), C(lossless.md) and C(lossless.html).
    type: path
  generated:
    description: A time stamp for the report.
    type: str
    default: ""
  fail_on:
    description: Verdicts that fail O(mode=report).
    type: list
    elements: str
    default: [dropped, lost, pause_storm]
attributes:
  check_mode:
    support: full
    description: Plans and judges; O(mode=report) does not write the files.
  diff_mode:
    support: none
    description: The files are named in RV(files).
"""

EXAMPLES = r"""
- name: Count the steps
  ainet.fabric.lossless_test:
    mode: schedule
    cluster: "{{ fabric_cluster }}"
    node_group: gpu_nodes
    hosts: "{{ ansible_play_hosts }}"
    seconds: 10
  run_once: true
  register: schedule
"""

RETURN = r"""
steps:
  description: With O(mode=schedule) and O(mode=step), how many steps the test has.
  returned: when mode is schedule or step
  type: int
rounds_per_class:
  description: With O(mode=schedule), incast rounds per class (the largest ToR rail's).
  returned: when mode is schedule
  type: int
classes:
  description: With O(mode=schedule), the lossless priorities, in the order they run.
  returned: when mode is schedule
  type: list
  elements: int
traffic_classes:
  description: With O(mode=schedule), the traffic class sent per fabric and priority.
  returned: when mode is schedule
  type: dict
  sample: {"default 3": 106}
refused:
  description: With O(mode=schedule), one line per rail not loaded because its agreement check found disagreements.
  returned: when mode is schedule
  type: list
  elements: str
hosts:
  description: With O(mode=step), per host its C(servers), C(clients) (each C(label), C(port), C(argv)) and the
    C(links) whose counters it reads.
  returned: when mode is step
  type: dict
incasts:
  description: With O(mode=step), every incast of the step (fabric, tor, rail, tor_port, receiver, interface, ip,
    senders, sender_interfaces, sender_ports, missing, priority, round, skipped).
  returned: when mode is step
  type: list
  elements: dict
tors:
  description: With O(mode=step), the ToRs of the step's loaded incasts (their counters are read before and after).
  returned: when mode is step
  type: list
  elements: str
tor_settle:
  description: With O(mode=step), the seconds the role waits after the load before reading the step's ToRs again.
  returned: when mode is step
  type: int
  sample: 10
tor_settle_auto:
  description: With O(mode=step), whether O(tor_settle) was V(auto) (the role then waits as long as the configured poll
    intervals its ToR reads found, RV(tor_settle) for a ToR whose read did not).
  returned: when mode is step
  type: bool
tor_ports:
  description: With O(mode=step), per ToR of RV(tors) the sorted ToR ports of its loaded incasts, receivers' and
    senders' (the ports whose counters a NOS that reads port by port reads).
  returned: when mode is step
  type: dict
  sample: {leaf1: [swp1, swp5]}
runs:
  description: With O(mode=judge), one per incast - tor, rail, fabric, port, host, host_nic, senders, round,
    priority, seconds, verdict (the P(ainet.fabric.load_verdict#filter) result) or skipped (why not run).
  returned: when mode is judge
  type: list
  elements: dict
summary:
  description: With O(mode=report), runs, skipped and the count of each verdict, and the worst.
  returned: when mode is report
  type: dict
  sample: {runs: 4, skipped: 2, dropped: 1, inconclusive: 1, worst: dropped}
findings:
  description: With O(mode=report), one line per run whose verdict is in O(fail_on); with O(mode=judge), one per run.
  returned: when mode is judge or report
  type: list
  elements: str
files:
  description: With O(mode=report), the report files (written unless in check mode).
  returned: when mode is report
  type: list
  elements: str
"""
