# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
module: tor_config
short_description: Render, check, diff and (when asked) push the ToR switches' configurations from the rail plan
version_added: 0.1.0
author: ainet.fabric contributors (@ainet)
description:
  - Runs on the controller. Plans O(cluster) for O(nodes) and renders every ToR whose C(platform) has a renderer
    from the plan's per-ToR view and the fabric's lossless profile - rail ports (description naming node and NIC
    with the marker C([ainet]), MTU, admin up, speed and FEC when the model sets them), L3 by addressing mode
    (routed ports with the plan's gateway in C(exclusive) and C(p2p), one VLAN and SVI per rail in C(shared)),
    LLDP, and the lossless QoS (trust, DSCP to priority, PFC, PFC watchdog, ECN on the RoCE queues, ETS with a
    strict CNP queue, lossless buffers).
  - C(sonic) gives a config_db JSON fragment (C(<switch>.json)), C(cumulus) the YAML that C(nv config apply)
    takes for Cumulus Linux 5.14 (C(<switch>.yaml)), C(eos) Arista EOS CLI rendered by pyavd (C(<switch>.cfg)),
    C(nxos) Cisco NX-OS (Nexus 9000) CLI (C(<switch>.cfg)); C(os10) and ToRs without a platform are listed in
    RV(skipped). Each platform's facts live in one module named by the registry
    C(plugins/module_utils/tor/platforms.py).
  - Every rendered configuration is checked before anything is written or pushed - its port names against the
    NOS's port name syntax, then the vendor's own schema (EOS - pyavd, which also renders it; NVUE - the
    C(nvueschema) object model of the release, unknown keys refused; SONiC - the SONiC YANG models through libyang
    when O(sonic_yang_dir) is given, on the fragment merged into the running config_db; NX-OS, which has no offline
    schema - read back by the C(nxos) parser, and layer-2 port MTUs). A missing validator package is a warning, not
    a failure.
  - With a running configuration (O(running) or O(running_dir)) each ToR's result lists what the running
    configuration lacks of the rendered one, and nothing it has beyond it (uplinks, management and other
    tools' settings are not this module's).
  - With O(push=true) the task must run on the ToR's own inventory host; it pushes through the NOS's usual path -
    NVUE REST API revisions (Cumulus), eAPI configure sessions (EOS), NX-API CLI C(cli_conf) with a read-back
    (NX-OS), a Generic Config Updater patch over SSH (SONiC) - and reports C(changed=false) when the switch
    already holds everything. Nothing is pushed unless
    the plan equals the published plan lock (as for the host jobs). Credentials come from the
    host's usual connection variables and are never printed or written into the rendered files.
options:
  cluster:
    description:
      - The cluster model.
      - Default the task's C(fabric_cluster), which the action reads itself, untemplated unless it holds a template
        (faster than C("{{ fabric_cluster }}") for thousands of ToRs); missing, the task fails with one line naming
        C(fabric_cluster).
    type: dict
  nodes:
    description:
      - Host name to C({node_id, rail_interfaces}), as built by P(ainet.fabric.node_map#filter).
      - One of O(nodes) and O(node_group) is required.
    type: dict
  node_group:
    description:
      - The inventory group of the GPU nodes; the action reads each host's C(fabric_node_id) and
        C(fabric_rail_interfaces) once, as C(hostvars) gives them (faster than O(nodes) for thousands of nodes).
      - A group that is missing or has no hosts fails the task with one line naming C(tor_config_node_group).
    type: str
  node_groups:
    description:
      - The inventory groups of the job, each under the name of the variable that names it, such as
        C(rail_plan_node_group=gpu_nodes), checked first and in this order, before the model is read (the tors job's
        input check, as the other jobs' first play makes it with P(ainet.fabric.rail_plan#module)). Each must exist
        and have hosts, or the task fails with one line naming the variable, the group and the fix.
      - The nodes are still O(node_group)'s (or O(nodes)).
    type: dict
  tors:
    description: The ToRs to render (default every ToR of the plan). Ignored with O(push=true) (the task's host).
    type: list
    elements: str
  dest:
    description: Directory (usually C(<inventory dir>/.ainet-fabric/<cluster>)) under which C(tors/<switch>.<ext>) is written; omit it to
      render and diff without writing.
    type: path
  running:
    description: ToR name to its running configuration text (config_db JSON, C(nv config show -o yaml), EOS or
      NX-OS running-config); wins over O(running_dir).
    type: dict
    default: {}
  running_dir:
    description: Directory with running configurations named like the rendered files (C(<switch>.json|yaml|cfg)).
    type: path
  validate:
    description: Check every rendered configuration with the vendor's schema first.
    type: bool
    default: true
  sonic_yang_dir:
    description: Directory of the SONiC YANG models (sonic-buildimage C(src/sonic-yang-models/yang-models) with its
      rendered templates); needs the Python package C(libyang). Without it SONiC files are not schema-checked.
    type: path
  push:
    description: Push the task host's ToR configuration to the switch (see the description).
    type: bool
    default: false
  timeout:
    description: Seconds for each API request of a push.
    type: int
    default: 60
  lock:
    description:
      - The published plan (C(rail_plan_lock), from the inventory or the plan job's artifact). With O(push=true)
        every node of the plan must be as the published plan has it, else nothing is pushed.
      - Default the task's C(rail_plan_lock), which the action reads itself, untemplated.
    type: raw
  lock_file:
    description: The plan lock file (C(rail_plan_lock.yml) in the inventory directory); where it exists it wins
      over O(lock). Where it does not and has that name, a C(rail_plan_lock.json) beside it (the lock's format 1,
      before the plan job replaces it) is read instead.
    type: path
requirements:
  - pyavd (for C(eos) ToRs only)
  - nvueschema (optional, validates C(cumulus) ToRs)
  - libyang (optional, validates C(sonic) ToRs with O(sonic_yang_dir))
attributes:
  check_mode:
    support: full
    description: Reports which files would change and, with O(push=true), what the switch lacks; writes and pushes
      nothing.
  diff_mode:
    support: full
    description: The rendered files' changes, the differences from the running configuration, and a push's changes.
  action:
    support: full
    description: An action plugin; only a SONiC push runs commands on the switch.
"""

EXAMPLES = r"""
- name: Render every ToR of the cluster (fabric_cluster) into <inventory dir>/.ainet-fabric/<cluster>/tors/
  ainet.fabric.tor_config:
    node_group: gpu_nodes
    dest: "{{ inventory_dir }}/.ainet-fabric/{{ fabric_cluster.name }}"
    running_dir: "{{ inventory_dir }}/switch-configs"
  run_once: true

- name: Push each ToR's configuration (runs on the ToR hosts)
  ainet.fabric.tor_config:
    node_group: gpu_nodes
    push: true
"""

RETURN = r"""
files:
  description: The rendered files written (in check mode, that would be).
  returned: success
  type: list
  elements: str
tors:
  description: Per rendered ToR - name, platform, path, changed (its file), and with a running configuration
    in_sync, differences (a count), diff (what the running configuration lacks, one line each, at most 400).
  returned: success
  type: list
  elements: dict
  sample: [{name: leaf1, platform: sonic, path: inventories/lab/.ainet-fabric/lab/tors/leaf1.json, changed: false, in_sync: false,
            differences: 2, diff: ["+ PORT Ethernet1 mtu: 9216", "~ PORT Ethernet2 admin_status: down -> up"]}]
skipped:
  description: ToRs not rendered, with the reason (no platform, or a platform only the lossless check reads).
  returned: success
  type: dict
notes:
  description: Checks that could not run (a validator package or the SONiC models missing).
  returned: success
  type: list
  elements: str
summary:
  description: One line of the result, as the role prints it - how many configurations were rendered and changed,
    on how many the vendor schema was checked and which not, the ToRs not rendered, those out of sync with their
    running configuration, and RV(notes).
  returned: success
  type: str
lacking:
  description: For each ToR out of sync with its running configuration, a line naming it and counting its differences
    and stale ports, then the first 50 lines of its C(diff) in RV(tors).
  returned: success
  type: list
  elements: str
unvalidated:
  description:
    - With O(validate=true), each rendered ToR whose vendor schema check did not run, and why (the validator
      package or the SONiC YANG models missing, no running config_db to merge a SONiC fragment into). The role's
      summary names them.
  returned: success
  type: dict
push:
  description: With O(push=true) - whether the switch changed and the vendor's handle (NVUE revision, EOS session).
  returned: when push is true
  type: dict
"""
