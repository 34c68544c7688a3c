#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: maintenance_slurm
short_description: Take a Slurm node out of service for a maintenance window and give it back, with scontrol
version_added: 0.2.0
author: ainet.fabric contributors (@ainet)
description:
  - The Slurm backend of the C(maintenance) role. Runs Slurm's own C(scontrol) where it is delegated (the
    controller or a login node), always as an argument list, never through a shell; node names are checked first
    (a single name - no hostlist syntax, no spaces, no C(=)).
  - The window's state is the node's Slurm reason - C(ainet.fabric:) followed by the steps and the phase
    (C(plugins/module_utils/maintenance/window.py)); a node out of service with any other reason belongs to
    someone else and is never drained again, re-marked or resumed.
  - V(read) reads the nodes (C(scontrol show node -o)) and the configured C(RebootProgram)
    (C(scontrol show config)). V(drain) opens the window (C(State=DRAIN Reason=<mark>)); running jobs go on.
    V(wait) waits until the node is drained - not draining (DRAIN with ALLOCATED, MIXED or COMPLETING) - and
    never cancels a job; its timeout fails with the node left drained. V(mark) records the next phase. V(reboot)
    has Slurm reboot the node through its C(RebootProgram) with C(nextstate=DOWN), so it returns to service only
    through V(resume); V(wait_reboot) waits until slurmd registered again after that boot (the reason carries
    Slurm's C(reboot complete), no REBOOT flag left), and fails on Slurm's C(reboot timed out). V(resume) gives
    back a node that carries our mark (C(State=RESUME)).
options:
  state:
    description: What to do (see the description).
    type: str
    choices: [read, drain, wait, mark, reboot, wait_reboot, resume]
    default: read
  nodes:
    description: The Slurm node names to read (V(read)) or the one node to act on (the other states).
    type: list
    elements: str
    required: true
  steps:
    description: The window's steps (C(command), C(firmware-reset), C(driver-restart), C(reboot)); the mark names
      them.
    type: list
    elements: str
    default: []
  phase:
    description: The phase V(mark) records (C(drain), C(step), C(reboot), C(check), C(failed)).
    type: str
  boot:
    description: The node's boot id before a reboot, recorded in the mark of V(reboot) and V(mark).
    type: str
  tries:
    description: How many reboots this window issued so far (the reboot-loop guard).
    type: int
  check:
    description: The failed check V(mark) records with phase C(failed).
    type: str
  timeout:
    description: Seconds V(wait) waits for the running jobs to end; then it fails, the node stays drained.
    type: int
    default: 86400
  interval:
    description: Seconds between two reads while waiting.
    type: int
    default: 10
  run:
    description:
      - This run's id, written in the mark (C(run=)). The mark is the window's lock - V(drain) sets it only on a node
        that is free, ours, or held by a stale run, then reads it back; V(mark), V(reboot) and V(resume) refuse a node
        another live run holds. Without it, marks name no run (no lock).
    type: str
  stale_after:
    description:
      - Seconds after which another run's mark that made no progress (Slurm's reason time) is stale and is taken over.
        V(wait) refreshes our mark at a third of it.
    type: int
    default: 3600
  scontrol:
    description: The scontrol program.
    type: str
    default: scontrol
  command_prefix:
    description: An argument list run in front of scontrol (e.g. C([ip, netns, exec, slurm]) or a container's
      exec); each element is one argument.
    type: list
    elements: str
    default: []
  environment:
    description: Environment for scontrol, e.g. C(SLURM_CONF).
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
    description: Reads the nodes; says what it would run, runs nothing that changes a node.
  diff_mode:
    support: none
    description: No diff.
"""

EXAMPLES = r"""
- name: Open the window on gpu01 (drain; running jobs go on)
  ainet.fabric.maintenance_slurm:
    state: drain
    nodes: [gpu01]
    steps: [reboot]
  delegate_to: slurm-ctl

- name: Wait until no job runs there
  ainet.fabric.maintenance_slurm:
    state: wait
    nodes: [gpu01]
    steps: [reboot]
    timeout: 7200
  delegate_to: slurm-ctl
"""

RETURN = r"""
nodes:
  description: Per node read - name, state (as scontrol prints it), base, flags, sinfo (drained, draining, idle,
    mixed ...), out (out of service), idle (no job runs or finishes there), reason, owner (ours, foreign or null).
  returned: always
  type: dict
reboot_program:
  description: Slurm's configured RebootProgram (null when none); V(read) only.
  returned: when state is read
  type: str
commands:
  description: The scontrol argument lists that change a node (run, or in check mode that would run).
  returned: always
  type: list
  elements: list
skipped_reason:
  description: Why V(drain) left a node alone (out of service for someone else).
  returned: when a node is left alone
  type: str
"""

import datetime
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.maintenance import slurm
from ansible_collections.ainet.fabric.plugins.module_utils.maintenance import window


class Scontrol(object):
    def __init__(self, module):
        params = module.params
        self.module = module
        self.prefix = list(params["command_prefix"])
        self.scontrol = params["scontrol"]
        self.environ = dict((str(k), str(v)) for k, v in (params["environment"] or {}).items())

    def run(self, argv):
        rc, out, err = self.module.run_command(self.prefix + list(argv), environ_update=self.environ)
        if rc != 0:
            raise slurm.SlurmError("%s: rc %d: %s" % (" ".join(argv[:4]), rc, (err or out).strip()[:300]))
        return out

    def nodes(self, names):
        found = slurm.parse_show_node(self.run(slurm.show_node_argv(self.scontrol, names)))
        missing = [n for n in names if n not in found]
        if missing:
            raise slurm.SlurmError("scontrol: no node %s in Slurm (maintenance_slurm_node_name)" % ", ".join(missing))
        now = datetime.datetime.now()  # scontrol prints the reason time in this host's local time
        for record in found.values():
            record["owner"] = window.owner(record)
            record["mark_age"] = slurm.reason_age(record.get("reason_time"), now)
        return found


def run_module():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", default="read", choices=["read", "drain", "wait", "mark", "reboot", "wait_reboot", "resume"]),
            nodes=dict(type="list", elements="str", required=True),
            steps=dict(type="list", elements="str", default=[]),
            phase=dict(type="str"),
            boot=dict(type="str"),
            tries=dict(type="int"),
            check=dict(type="str"),
            timeout=dict(type="int", default=86400),
            interval=dict(type="int", default=10),
            run=dict(type="str"),
            stale_after=dict(type="int", default=3600),
            scontrol=dict(type="str", default="scontrol"),
            command_prefix=dict(type="list", elements="str", default=[]),
            environment=dict(type="dict", default={}),
        ),
        supports_check_mode=True,
    )
    params = module.params
    result = {"changed": False, "nodes": {}, "commands": []}
    try:
        names = [slurm.check_node_name(n) for n in params["nodes"]]
        if not names:
            raise slurm.SlurmError("maintenance_slurm: nodes is empty")
        ctl = Scontrol(module)
        state = params["state"]
        if state == "read":
            result["nodes"] = ctl.nodes(names)
            config = slurm.parse_show_config(ctl.run([ctl.scontrol, "show", "config"]))
            result["reboot_program"] = slurm.reboot_program(config)
            module.exit_json(**result)
        if len(names) != 1:
            raise slurm.SlurmError("maintenance_slurm: state %s acts on one node, not %s" % (state, ", ".join(names)))
        node = names[0]
        steps = window.check_steps(params["steps"])
        record = ctl.nodes(names)[node]
        result["nodes"] = {node: record}

        def change(argv):
            result["commands"].append(argv)
            result["changed"] = True
            if not module.check_mode:
                ctl.run(argv)

        run = window.check_run(params["run"], "run") if params["run"] is not None else None
        stale = params["stale_after"]

        def mark_run(current):
            return (window.parse_mark(current["reason"]) or {}).get("run")

        if state == "drain":
            # a reboot someone else asked for is left to Slurm: waited on, never drained over (window.py)
            deadline = time.time() + params["timeout"]
            # (Slurm's reboot makes the node DOWN+REBOOT_ISSUED meanwhile: still theirs until the flag is gone)
            while not module.check_mode and window.reboot_pending(record) and window.parse_mark(record["reason"]) is None:
                if time.time() >= deadline:
                    raise window.MaintenanceError(
                        "%s: a reboot someone else asked Slurm for is still pending (%s) after %ds: left alone, not "
                        "drained" % (node, record["sinfo"], params["timeout"]))
                time.sleep(max(1, params["interval"]))
                record = ctl.nodes(names)[node]
            other = window.holder(record, run, stale)
            if record["owner"] == "foreign" or window.reboot_pending(record, window.parse_mark(record["reason"])):
                result["skipped_reason"] = "%s: out of service for another reason (%s): left as it is" % (
                    node, record["reason"] or record["state"])
            elif other is not None:
                result["skipped_reason"] = "%s: its window is held by another run (run=%s): left to it" % (node, other)
            elif record["owner"] is None or (run is not None and mark_run(record) != run):
                mark = window.parse_mark(record["reason"])
                if mark is None:
                    reason = window.format_mark(steps, "drain", run=run)
                else:  # a stale run's window, or an earlier version's: taken over where it stands
                    reason = window.format_mark(mark["steps"], mark["phase"], boot=mark["boot"],
                                                tries=mark["tries"] or None, check=mark["check"], run=run)
                change(slurm.drain_argv(ctl.scontrol, node, reason))
                if not module.check_mode and run is not None:
                    # the lock: read back; a run that wrote after us holds the window now
                    time.sleep(1)
                    record = ctl.nodes(names)[node]
                    result["nodes"] = {node: record}
                    if mark_run(record) != run:
                        raise window.MaintenanceError("%s: another run took the window at the same moment (reason "
                                                      "now %r): left to it, nothing done" % (node, record["reason"]))
        elif state == "wait":
            deadline = time.time() + params["timeout"]
            while not module.check_mode:
                if record["owner"] != "ours":
                    raise window.MaintenanceError("%s: the window's mark is gone (reason now %r): someone else "
                                                  "resumed or re-marked the node; nothing done" % (node, record["reason"]))
                if run is not None and mark_run(record) != run:
                    raise window.MaintenanceError("%s: another run holds the window now (reason %r): left to it"
                                                  % (node, record["reason"]))
                if record["idle"]:
                    break
                if run is not None and (record["mark_age"] or 0) * 3 >= stale:
                    ctl.run(slurm.drain_argv(ctl.scontrol, node, record["reason"].split(" : ")[0].strip()))
                if time.time() >= deadline:
                    raise window.MaintenanceError(
                        "%s: still %s after %ds (jobs run or finish there): the node stays drained, no job was "
                        "cancelled; run again to go on" % (node, record["sinfo"], params["timeout"]))
                time.sleep(max(1, params["interval"]))
                record = ctl.nodes(names)[node]
            result["nodes"] = {node: record}
        elif state == "wait_reboot":
            deadline = time.time() + params["timeout"]
            while not module.check_mode:
                if "reboot timed out" in record["reason"]:
                    raise window.MaintenanceError("%s: Slurm says the reboot timed out (%s): the node stays down"
                                                  % (node, record["reason"]))
                flags = set(record["flags"])
                if "reboot complete" in record["reason"] and not flags & {"REBOOT_REQUESTED", "REBOOT_ISSUED"}:
                    break
                if time.time() >= deadline:
                    raise window.MaintenanceError("%s: slurmd did not register after its reboot within %ds (state "
                                                  "%s): the node stays down" % (node, params["timeout"],
                                                                                record["state"]))
                time.sleep(max(1, params["interval"]))
                record = ctl.nodes(names)[node]
            result["nodes"] = {node: record}
        elif state in ("mark", "reboot", "resume"):
            if record["owner"] != "ours":
                raise window.MaintenanceError("%s: its reason is not a window of ours (%r): not touched"
                                              % (node, record["reason"]))
            if window.holder(record, run, stale) is not None:
                raise window.MaintenanceError("%s: its window is held by another run (%r): not touched"
                                              % (node, record["reason"]))
            if state == "resume":
                change(slurm.resume_argv(ctl.scontrol, node))
            elif state == "reboot":
                if record["reboot_pending"]:
                    # Slurm skips a reboot request on such a node silently, rc 0 (proc_req.c)
                    raise window.MaintenanceError("%s: Slurm already has a reboot pending there (%s): ours would be "
                                                  "ignored, so it is not issued; the node stays out of service, run "
                                                  "again once that reboot is done" % (node, record["sinfo"]))
                mark = window.format_mark(steps, "reboot", boot=params["boot"], tries=params["tries"], run=run)
                change(slurm.reboot_argv(ctl.scontrol, node, mark))
            else:
                mark = window.format_mark(steps, params["phase"], boot=params["boot"], tries=params["tries"],
                                          check=params["check"], run=run)
                if record["reason"].split(" : ")[0].strip() != mark:
                    change(slurm.drain_argv(ctl.scontrol, node, mark))
    except FabricError as exc:
        module.fail_json(msg=str(exc), **result)
    module.exit_json(**result)


def main():
    run_module()


if __name__ == "__main__":
    main()
