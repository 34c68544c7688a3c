# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
module: cabling_check
short_description: Compare the rail NICs' LLDP neighbours with the plan's ToR and port
version_added: 0.3.0
author: ainet.fabric contributors (@ainet)
description:
  - Runs on the controller, once, after every host of O(hosts) registered its LLDP output (the role
    P(ainet.fabric.cabling_check#role) does both). Parses C(lldpcli -f json0 show neighbors) (lldpd; C(json) and
    C(json0) both) or, where lldpcli failed, C(lldptool -t -n -i <rail NIC>) per rail NIC (lldpad).
  - Compares every node's rail NICs with the rail plan's ToR and port and reports each wrong cable with its fix in
    words - two rails crossed (C(swapped)), a NIC on another ToR (C(wrong_tor)), on another port of its ToR
    (C(wrong_port)), no neighbour (C(missing)), several neighbours (C(unexpected)), a rail without an interface name
    in the inventory (C(unknown_interface)).
  - The rails of a fabric in C(infiniband) addressing mode are checked from the subnet instead of LLDP - the
    C(ibnetdiscover) outputs registered in O(ibnetdiscover_var) (on any host; a loop of runs, one per rail HCA, is
    merged) are compared with the plan by leaf and port; an HCA is found by O(ib_hca_guids) or its node description
    C(<host> mlx5_<n>), a leaf by its description or O(ib_switch_guids). Kinds as above, plus C(slow_link) (below
    O(ib_expect)) and C(extra) (a CA on a planned leaf that is no rail of the plan). No output at all - every
    InfiniBand rail is C(missing), never ok. See docs/infiniband.md.
  - Writes the findings as a Markdown table to O(report) and fails with one line per finding unless
    O(fail_on_findings=false).
extends_documentation_fragment:
  - ainet.fabric.nodes
options:
  cluster:
    description: The cluster model (C(fabric_cluster)).
    type: dict
    required: true
  hosts:
    description: The hosts to check (their host variables hold the registered outputs).
    type: list
    elements: str
    required: true
  lldpcli_var:
    description: The host variable holding the registered C(lldpcli) command result.
    type: str
    default: __cabling_check_lldpcli
  lldptool_var:
    description: The host variable holding the registered C(lldptool) loop result (one item per rail NIC).
    type: str
    default: __cabling_check_lldptool
  links_var:
    description: The host variable holding the registered C(ip -j link show) result (a rail NIC without a neighbour
      whose link is down is reported as down).
    type: str
    default: __cabling_check_links
  ibnetdiscover_var:
    description: The host variable holding the registered C(ibnetdiscover) result (or a loop of them).
    type: str
    default: __cabling_check_ibnetdiscover
  ib_expect:
    description: The least width and speed every InfiniBand rail link must run at, keys C(width) (for example C(4x)) and C(speed) (C(NDR))
      (infiniband-diags' names - widths 1x 2x 4x 8x 12x, speeds SDR DDR QDR FDR10 FDR EDR HDR NDR XDR).
    type: dict
    default: {}
  ib_rail_hcas:
    description: The HCA device of each rail, keyed by rail number (default C(mlx5_<rail-1>)).
    type: dict
    default: {}
  ib_hca_guids:
    description: The GUID (node or port) of each host's rail HCA, host name, then rail number; wins over the node
      description.
    type: dict
    default: {}
  ib_switch_guids:
    description: The GUID of each leaf, keyed by ToR name, for switches whose node description is not their name.
    type: dict
    default: {}
  switch_config_dir:
    description: Directory of the SONiC ToRs' config_db files, C(<tor>.json). SONiC announces a port's alias (C(etp2),
      C(etp1a), C(fortyGigE0/4)) as LLDP Port ID, subtype local; the C(alias) of its C(PORT|EthernetN) entry maps
      it to the C(EthernetN) the plan uses. A SONiC ToR without a config_db leaves such a rail's port unverified.
    type: path
  switch_configs:
    description: SONiC config_db texts already read, keyed by ToR name; they win over O(switch_config_dir).
    type: dict
    default: {}
  report:
    description: A Markdown file for the findings, and beside it the same name with C(.json) (summary and findings,
      which the plan job's C(rails.md) shows as the cabling status); without it nothing is written.
    type: path
  fail_on_findings:
    description: Fail when a cable is wrong.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Compares; does not write the report.
  diff_mode:
    support: none
    description: The report is named in RV(report).
"""

EXAMPLES = r"""
- name: Check the cabling against the plan
  ainet.fabric.cabling_check:
    cluster: "{{ fabric_cluster }}"
    node_group: gpu_nodes
    hosts: "{{ ansible_play_hosts }}"
    report: /tmp/cabling.md
  run_once: true
"""

RETURN = r"""
findings:
  description: One per wrong cable - C(host), C(fabric), C(rail), C(interface), C(kind), C(expected) and C(seen)
    ({tor, port}), C(detail), C(fix), C(message).
  returned: always
  type: list
  elements: dict
ok:
  description: The rails whose cable is where the plan has it.
  returned: always
  type: list
  elements: dict
summary:
  description: Counts (hosts, rails, ok, findings, by_kind, unverified_ports).
  returned: always
  type: dict
unread:
  description: Hosts without any LLDP output, and why; C(InfiniBand subnet) when no ibnetdiscover output was read.
  returned: always
  type: dict
report:
  description: The report file.
  returned: always
  type: str
"""
