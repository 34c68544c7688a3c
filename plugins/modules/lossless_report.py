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
    configuration (O(switch_configs), else a file named after the ToR in O(switch_config_dir), else
    what the read loop read live from the ToR, O(reads); parsed by the ToR's C(platform)), and compares
    every host NIC with its ToR port and the fabric's lossless profile (P(ainet.fabric.lossless_diff#filter)).
  - Writes C(lossless-report.md) and a self-contained C(lossless-report.html) to O(output_dir),
    one row per link, mismatches highlighted, a count per disagreement code. A link whose host or
    ToR could not be read is a row saying what is missing, never a pass.
  - With O(read_tor) the task instead reads that one ToR's running configuration live and returns its QoS facts,
    never its text, which holds the switch's secrets (password hashes, keys, SNMP communities; nothing is compared
    or written), delegated to the ToR's inventory host (C(delegate_to)), with the connection variables
    and credentials the ToR push uses. Over its NOS's API - Cumulus NVUE REST API (C(GET /nvue_v1/?rev=applied)),
    EOS eAPI (C(runCmds) C(show running-config), text), NX-OS NX-API (C(cli_show_ascii) C(show running-config)) - or
    with a read-only command over the ToR's own Ansible connection - SONiC C(sonic-cfggen -d --print-data), Cumulus
    C(nv config show -o json), EOS and NX-OS C(show running-config), OS10 C(show running-configuration)
    (an C(ansible.netcommon.network_cli) connection through its persistent socket). A ToR that cannot be read is
    not a failure; the result's C(read_error) names the ToR and the reason. Nothing on the switch is changed.
    The role C(ainet.fabric.lossless_check) runs it in a loop over the ToRs, then the report with O(reads).
options:
  cluster:
    description: The cluster model (C(fabric_cluster)).
    type: dict
    required: true
  nodes:
    description:
      - Host name to C({node_id, rail_interfaces}), as built by P(ainet.fabric.node_map#filter).
      - Required unless O(read_tor) is given.
    type: dict
  hosts:
    description:
      - The hosts whose links are checked (the play's hosts).
      - Required unless O(read_tor) is given.
    type: list
    elements: str
  facts_var:
    description:
      - The variable each host registered the result of M(ainet.fabric.roce_qos) C(state=gathered) in; its
        C(facts) are read, and its C(msg) names the reason when the NICs could not be read.
      - Required unless O(read_tor) is given.
    type: str
  switch_config_dir:
    description:
      - Directory with one configuration per ToR, named after it - C(<tor>.json) (SONiC config_db),
        C(<tor>.yaml) (Cumulus C(nv config show)), C(<tor>.cfg) (EOS, NX-OS, OS10 running-config).
    type: path
  switch_configs:
    description:
      - ToR name to configuration text (or C({text, format})) read from the devices; wins over the directory and over
        O(reads).
    type: dict
    default: {}
  reads:
    description:
      - The registered C(results) of a loop of O(read_tor) tasks (the role's read loop). A ToR read there is checked
        with that configuration unless one is given in O(switch_configs) or O(switch_config_dir); one that could not
        be read is a "not checked" row naming the reason (the item's C(read_error), or Ansible's C(msg) when the item
        failed or was unreachable, for example on the task's C(timeout)).
    type: list
    elements: raw
    default: []
  read_tors:
    description:
      - The role's C(lossless_check_read_tors). V(true) makes a ToR that has no configuration and was not read (it is
        not an inventory host, its platform cannot be read) a "not checked" row saying why; V(auto) and V(false)
        report it as a missing configuration.
    type: str
    choices: [auto, "true", "false"]
    default: auto
  read_tor:
    description:
      - Read this ToR's running configuration live instead of making the report (see the description). The task must
        be delegated to the ToR's inventory host, named as in the model. Only O(cluster), O(switch_config_dir) (a
        configuration of the ToR there wins, and the ToR is not read), O(transport) and O(timeout) are used.
    type: str
  read_counters:
    description:
      - With O(read_tor), read the ToR's load-test counters instead of its configuration, read-only, and return
        them as RV(counters); a configuration of the ToR in O(switch_config_dir) does not stop this read. The role
        P(ainet.fabric.lossless_test#role) reads each ToR so before and after every incast round.
      - Each NOS reads them the way it reads its configuration (O(transport)). SONiC, over its connection -
        C(show pfc counters), C(show queue counters). Arista EOS, over eAPI (C(runCmds) in JSON, the default) or its
        connection (C(| json)) - C(show priority-flow-control counters), C(show interfaces counters queue detail),
        C(show qos interfaces ecn counters queue). Cumulus Linux, over its connection, once per port in O(ports) -
        C(nv show interface <port> counters qos), C(nv show interface <port> qos roce counters).
      - A ToR whose platform has no counter reader, or a command that fails, returns a C(read_error) naming the ToR
        and the command.
    type: bool
    default: false
  ports:
    description:
      - With O(read_counters), the ToR's ports whose counters are wanted (the ToR ports of the step's links). A NOS
        whose commands print every port (SONiC, EOS) reads them all; Cumulus Linux runs its commands for these ports
        only and needs at least one.
    type: list
    elements: str
    default: []
  transport:
    description:
      - With O(read_tor), how the ToR is read. V(api) is its NOS's API with the ToR push's variables
        (C(ansible_host), C(ansible_user), C(ansible_password) or C(ansible_httpapi_password),
        C(ansible_httpapi_port), C(ansible_httpapi_use_ssl), C(ansible_httpapi_validate_certs)); V(connection) is the
        command over its Ansible connection; V(auto) the API where the ToR push uses one (Cumulus, EOS, NX-OS), else
        the connection, and the connection also when it is C(ansible.netcommon.network_cli).
      - The ToR host's own variable C(lossless_check_read_transport) wins.
    type: str
    choices: [auto, api, connection]
    default: auto
  timeout:
    description:
      - With O(read_tor), the seconds the API may take; bound a read over the connection with the task's C(timeout).
    type: int
    default: 30
  output_dir:
    description: Directory for the report files on the controller; omit it to only check.
    type: path
  generated:
    description: A time stamp to print in the report (the report is otherwise identical for identical input).
    type: str
    default: ""
  fail_on_disagreement:
    description:
      - Fail when a link disagrees or could not be checked in full (status C(unchecked) - a topic such as the PFC
        stage could not be compared - or C(error)); only C(agree) links pass.
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
    description: An action plugin. The report runs on the controller only; O(read_tor) runs one read-only command on
      the ToR over its connection, or reads its API, and changes nothing.
"""

EXAMPLES = r"""
- name: Read the ToRs live, each through its own inventory host (nothing is changed)
  ainet.fabric.lossless_report:
    read_tor: "{{ item }}"
    cluster: "{{ fabric_cluster }}"
    timeout: 30
  loop: "{{ groups['tors'] }}"
  delegate_to: "{{ item }}"
  run_once: true
  timeout: 60
  register: tor_reads
  ignore_errors: true
  ignore_unreachable: true

- name: Compare every rail NIC with its ToR port and write the report
  ainet.fabric.lossless_report:
    cluster: "{{ fabric_cluster }}"
    nodes: "{{ groups['gpu_nodes'] | ainet.fabric.node_map(hostvars) }}"
    hosts: "{{ ansible_play_hosts_all }}"
    facts_var: nic_qos
    switch_config_dir: "{{ inventory_dir }}/switch-configs"
    reads: "{{ tor_reads.results }}"
    output_dir: "{{ inventory_dir }}/.ainet-fabric/{{ fabric_cluster.name }}"
  run_once: true
"""

RETURN = r"""
summary:
  description: Link counts by verdict and disagreement counts by code.
  returned: success
  type: dict
  sample: {links: 32, agree: 22, disagree: 8, unchecked: 2, error: 0, by_code: {roce_dscp_lossy_on_switch: 8}}
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
  description: >-
    The first 200 links that disagree or could not be checked in full (C(unchecked), C(error)), with their
    disagreements and unchecked topics.
  returned: success
  type: list
  elements: dict
tor_reads:
  description:
    - The ToRs whose configuration read live was checked (C(read)), and why each ToR left without a configuration was
      not read (C(not_read)).
  returned: success, without O(read_tor)
  type: dict
  sample:
    read: [leaf1, leaf2]
    not_read: {leaf3: "ToR leaf3 could not be read live (Arista EOS API https://10.0.0.3:443): ..."}
tor:
  description: The ToR read.
  returned: with O(read_tor)
  type: str
config:
  description:
    - What is kept of the ToR's running configuration read live - C(facts) (its QoS facts as C(parse_qos) returns
      them, problem lines with secrets redacted; never the configuration's text), the C(parse_qos) C(format) and
      the C(source) (the API, or the command and the connection).
  returned: with O(read_tor), when the ToR was read
  type: dict
counters:
  description:
    - With O(read_counters), the ToR's counters as its commands printed them, by C(parse_counters) format
      (C(sonic_pfc), C(sonic_queue), C(sonic_pfcwd), C(sonic_pg_drop); C(eos_pfc), C(eos_queue), C(eos_ecn), the JSON
      text or, over eAPI, the command's object, and C(eos_pfc_detail), per port, its JSON text; C(nvue_qos),
      C(nvue_roce), C(linux_ethtool), a mapping of each port in O(ports) to its text; C(linux_link), C(linux_qdisc);
      C(nxos_queuing), per port, C(nxos_pfc), C(nxos_pfcwd); C(os10_queuing), per port).
  returned: with O(read_tor) and O(read_counters), when the ToR was read
  type: dict
  sample: {sonic_pfc: "  Port Rx    PFC0 ...", sonic_queue: "     Port    TxQ    Counter/pkts ..."}
settle:
  description:
    - With O(read_counters), the seconds the ToR takes to show its counters' latest values - its NOS's counter poll
      interval as configured on it where the NOS reads it (SONiC C(counterpoll show), Cumulus switchd's
      C(stats.poll_interval)), else the NOS's default.
  returned: with O(read_tor) and O(read_counters), when the ToR was read
  type: int
  sample: 10
settle_source:
  description: With O(read_counters), where RV(settle) comes from, one line.
  returned: with O(read_tor) and O(read_counters), when the ToR was read
  type: str
  sample: "counterpoll show: PORT_STAT 1000 ms, QUEUE_STAT 10000 ms, PG_DROP_STAT 10000 ms"
via:
  description: How the ToR was read - C(http) (its API) or C(ssh) (a command over its connection).
  returned: with O(read_tor), when the ToR was read
  type: str
read_error:
  description: Why the ToR could not be read, one line naming it.
  returned: with O(read_tor), when the ToR could not be read
  type: str
given:
  description:
    - The file in O(switch_config_dir) that holds the ToR's configuration, so it was not read (the item is skipped).
  returned: with O(read_tor), when such a file exists
  type: str
"""
