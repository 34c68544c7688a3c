# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
module: subnet_manager
short_description: OpenSM partitions from the cluster model, and the PKey tables served checked against them
version_added: 0.5.0
author: ainet.fabric contributors (@ainet)
description:
  - Runs on the controller. With O(state=render), from the model's C(infiniband.partitions) of O(fabric) and the
    subnet read by C(ibnetdiscover) (the members' port GUIDs, found by the InfiniBand cabling check), returns the
    text of OpenSM's C(partitions.conf) and of its options (C(partition_config_file), C(routing_engine), and
    C(allow_both_pkeys TRUE) when a partition gives C(both) memberships), each with a marker line, and the LID of
    each member port.
  - With O(state=verify), compares the C(smpquery pkeys) output of each member port (O(pkey_reads)) with the PKeys
    the model gives it, the default partition included; a port not read is never agreeing.
  - Writing the files and asking OpenSM to re-read them is the role's (P(ainet.fabric.subnet_manager#role)).
options:
  cluster:
    description: The cluster model (C(fabric_cluster)).
    type: dict
    required: true
  nodes:
    description: Host name to C({node_id, rail_interfaces}); one of O(nodes) and O(node_group) is required.
    type: dict
  node_group:
    description: The inventory group of the GPU nodes.
    type: str
  fabric:
    description: The infiniband fabric of the model whose subnet this SM runs.
    type: str
    required: true
  state:
    description: C(render) the files, or C(verify) the tables served.
    type: str
    default: render
    choices: [render, verify]
  ibnetdiscover:
    description: The output of C(ibnetdiscover) on the subnet.
    type: str
    required: true
  partitions_file:
    description: The path OpenSM reads the partitions from (written into the options).
    type: path
    default: /etc/opensm/partitions.conf
  sminfo:
    description: The output of C(sminfo) (the master SM's port, the one full member of the default partition).
    type: str
  pkey_reads:
    description:
      - The registered results of C(smpquery pkeys <lid>) looped over RV(lids) (O(state=verify)), each with
        C(item.key) the port GUID; a port whose read failed is unread, never agreeing.
    type: list
    elements: dict
    default: []
  fail_on_findings:
    description: Fail when a table served differs from the model (O(state=verify)).
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Render OpenSM's partitions from the model
  ainet.fabric.subnet_manager:
    cluster: "{{ fabric_cluster }}"
    node_group: gpu_nodes
    fabric: default
    ibnetdiscover: "{{ subnet.stdout }}"
  register: rendered
"""

RETURN = r"""
partitions_text:
  description: The partitions.conf text (O(state=render)).
  returned: render
  type: str
options_text:
  description: The OpenSM options text (O(state=render)).
  returned: render
  type: str
marker:
  description: The first line of the files this collection owns.
  returned: render
  type: str
allow_both_pkeys:
  description: Whether a partition gives C(both) memberships (the options then set C(allow_both_pkeys TRUE)).
  returned: render
  type: bool
lids:
  description: Member port GUID to its LID, where C(smpquery pkeys) reads its table.
  returned: render
  type: dict
findings:
  description: The PKey findings (C(host, rail, port_guid, kind, pkey, detail)).
  returned: verify
  type: list
  elements: dict
summary:
  description: Ports, ok, findings, findings by kind.
  returned: verify
  type: dict
"""
