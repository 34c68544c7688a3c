# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side rail plan: compute once, write the report files and the plan lock,
publish the lock as job artifacts, or check a host job's hosts against the published lock.

One task instead of a large set_fact plus a templated copy per file: Ansible
never templates or copies the plan itself unless ``return_plan`` asks for it.
"""

from __future__ import annotations

import json
import os

from ansible_collections.ainet.fabric.plugins.module_utils.cabling import cabling_check
from ansible_collections.ainet.fabric.plugins.module_utils.plan import plan_lock
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError, FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import write_atomic
from ansible_collections.ainet.fabric.plugins.module_utils.plan.plan_report import render_all, summary_line
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.qos import load_report
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_objects
from ansible_collections.ainet.fabric.plugins.plugin_utils.plan_action import PlanAction, node_groups_hosts, read_nodes

REPORTS = (("plan.json", "json"), ("rails.csv", "csv"), ("rails.md", "markdown"), ("topology.mmd", "mermaid"))
DIFFED_REPORTS = ("rails.csv",)

ARGUMENT_SPEC = dict(
    cluster=dict(type="dict"),
    nodes=dict(type="dict"),
    node_groups=dict(type="dict"),
    output_dir=dict(type="path"),
    diagram_max_nodes=dict(type="int", default=64),
    return_plan=dict(type="bool", default=False),
    mode=dict(type="str", default="plan", choices=["plan", "check", "validate"]),
    lock_file=dict(type="path"),
    lock=dict(type="raw"),
    require_lock=dict(type="bool", default=True),
    check_hosts=dict(type="list", elements="str"),
    check_play_hosts=dict(type="bool", default=False),
)


def _plain(names):
    """Host names as plain text: the inventory's names carry Ansible's origin tags, which the worker's result (sent to
    the controller) would pickle one by one, 16,384 of them on a first plan."""
    return [str(name) for name in names] if isinstance(names, list) else names


def _read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


class ActionModule(PlanAction):
    ARGUMENT_SPEC = ARGUMENT_SPEC
    # The plan, its reports and the pods' objects counted for rails.md build millions of containers and no cycle: at
    # 16,384 nodes the collector's passes over the forked worker's inventory were half of the objects' 7 s.
    PAUSE_GC = True

    def act(self, result, args, task_vars):
        if args["lock"] is None:
            args["lock"] = self.task_variable(task_vars, plan_lock.LOCK_VAR)
        if args["check_play_hosts"]:
            if args["check_hosts"] is not None:
                raise FabricModelError("check_play_hosts", True, "and check_hosts are given both",
                                       "give the hosts to check, or check the play's hosts")
            args["check_hosts"] = task_vars.get("ansible_play_hosts_all") or []
        cluster, nodes = self._inputs(args, task_vars)
        plan = rail_plan(cluster, nodes)
        if args["mode"] == "validate":
            result.update(changed=False, summary=plan["summary"])
            return result
        if args["mode"] == "check":
            return self._check(result, args, plan)
        reports = {}
        if args["output_dir"]:
            # What the plan leads to beyond the hosts and ToRs: the pods' objects in rails.md, the last
            # cabling check in rails.md and, its findings drawn dotted, in the diagram, and where the last
            # load test's report is written.
            status = _read(os.path.join(args["output_dir"], "cabling.json"))
            try:
                status = json.loads(status) if status else None
            except ValueError:
                status = None
            marks = cabling_check.finding_marks(status)
            texts = render_all(plan, [fmt for _name, fmt in REPORTS], args["diagram_max_nodes"], marks)
            reports = {name: texts[fmt] for name, fmt in REPORTS}
            reports["rails.md"] += "\n" + k8s_objects.summary_markdown(plan) + "\n" + \
                cabling_check.status_markdown(status) + "\n" + load_report.rails_markdown()

        changed_files, diffs = [], []
        writes = {}
        out = args["output_dir"]
        for name, content in reports.items():
            path = os.path.join(out, name)
            before_text = _read(path)
            if before_text != content:
                writes[path] = content
                # The table's changed lines; the other views of the same plan are only named
                # (a whole plan.json of thousands of nodes would make a diff of megabytes).
                diffs.append(plan_lock.short_diff(before_text, content, path) if name in DIFFED_REPORTS
                             else "%s: rewritten (%d bytes)\n" % (path, len(content)))
        lock = plan_lock.plan_lock(plan)
        # The lock published so far: the file; where it does not exist, a format 1 file beside it that this collection
        # wrote (replaced now; any other file there fails before anything is written); else the variable (in AWX, the
        # inventory's copy of the committed lock), so that a plan job that writes no file still reports changed only
        # when the plan differs from the published one.
        path = args["lock_file"]
        file_text = _read(path) if path else None
        legacy_path = plan_lock.legacy_path(path)
        legacy_text = _read(legacy_path) if legacy_path else None
        legacy = plan_lock.legacy_lock(legacy_text, legacy_path) if legacy_text is not None else None
        before = None
        try:
            if file_text is not None:
                before = plan_lock.lock_load(file_text, path)
            elif legacy is not None:
                before = legacy
            elif args["lock"] not in (None, "", {}):
                before = plan_lock.lock_load(args["lock"], plan_lock.LOCK_VAR)
        except FabricError:
            before = None  # an unreadable old lock is simply replaced
        after_text = plan_lock.lock_dump(lock)
        changes = {key: _plain(value) for key, value in plan_lock.lock_changes(before, lock).items()}
        if path:
            # The file's diff; a format 1 file replaced is diffed in format 2, so that the diff names only the hosts
            # that changed (and none when the plan did not).
            before_text = file_text if file_text is not None else (
                plan_lock.lock_dump(legacy) if legacy is not None else None)
            if file_text != after_text:
                writes[path] = after_text
        else:
            before_text = plan_lock.lock_dump(before) if before is not None else None
        lock_changed = before_text != after_text
        if lock_changed:
            # The lock is the reviewable form of the plan: one line per host.
            diffs.insert(0, plan_lock.short_diff(before_text, after_text, path or plan_lock.LOCK_VAR))
        removes = [legacy_path] if legacy is not None else []
        if removes:
            diffs.insert(0, "%s: removed, replaced by %s (format 2)\n" % (legacy_path, path))
        changed_files = list(writes) + removes
        if changed_files and not self._task.check_mode:
            try:
                for name, content in writes.items():
                    write_atomic(name, content, "0644")
                for name in removes:  # after the new lock is in place
                    os.remove(name)
            except OSError as exc:
                result.update(failed=True, msg="could not write the plan files: %s" % exc)
                return result

        result.update(changed=bool(changed_files) or lock_changed, summary=plan["summary"], files=changed_files,
                      output_dir=out, lock_file=args["lock_file"], lock_changes=changes,
                      msg=summary_line(plan["summary"], out, args["lock_file"] or "%s (artifact)" % plan_lock.LOCK_VAR,
                                       changes))
        if not self._task.check_mode:
            # Job artifacts (AWX passes them to the next jobs of a workflow as extra vars): format 2, a few scalars.
            result["ansible_stats"] = {"data": {plan_lock.LOCK_VAR: plan_lock.lock_variable(lock)}, "per_host": False,
                                       "aggregate": False}
        if self._task.diff and diffs:
            result["diff"] = {"prepared": "".join(diffs)}
        if args["return_plan"]:
            result["plan"] = plan
        return result

    def _inputs(self, args, task_vars):
        """The model and the nodes: as given, or else from the node groups' hosts (checked first, in order, as
        check_input.yml refuses them; the first group's hosts are the nodes, their variables as every role of the job
        sees them) and the model as :meth:`PlanAction.cluster` reads it: the task's host's, read untemplated where it
        holds no template (a model of 2,048 ToRs passed as "{{ fabric_cluster }}" is templated, checked and sent back
        with the task: 1 s at 16,384 nodes), or the first node's where the task's host is not a node (the first
        play's host, or the plan job's under a --limit without a node)."""
        nodes = args["nodes"]
        hosts = node_groups_hosts(task_vars, args["node_groups"])
        if nodes is None and hosts is not None:
            # each node's variables as hostvars gives them, read once without templating hostvars per node
            nodes = read_nodes(task_vars, hosts)[0]
        cluster = self.cluster(args, task_vars, nodes=hosts)
        if nodes is None:
            raise FabricModelError("nodes", None, "is not given", "pass nodes or node_groups")
        return cluster, nodes

    @staticmethod
    def _refuse_hosts_outside(args, hosts, plan):
        """A host job touches its play's hosts: every one of them must be a node of the plan, or the job stops here,
        before any host is touched. A play's ``hosts:`` is templated before any inventory variable is read (the play's,
        the extra and the magic variables only), so a node group named in group_vars instead of with ``-e`` leaves the
        play on its default group or, where that is missing, on every host and localhost (the controller), while this
        check reads the inventory's group: without this refusal the other hosts were left out of the check and the
        job's tasks ran on them (field review of issue 42)."""
        outside = sorted(hosts.difference(plan["nodes"]))
        if not outside:
            return
        variable, group = next(iter((args["node_groups"] or {"rail_plan_node_group": None}).items()))
        named = ", ".join(outside[:5]) + (" ... (%d in all)" % len(outside) if len(outside) > 5 else "")
        raise FabricModelError(
            variable, group, "does not hold the host(s) the job would touch: %s" % named,
            "name the node group on the command line (-e %s=%s: a play's hosts are chosen before the inventory's "
            "variables are read), or leave those hosts out of the play (--limit)" % (variable, group))

    def _check(self, result, args, plan):
        """Host job: the hosts it will touch must be in the published lock, exactly (the newest
        lock: plan_lock.published)."""
        text = _read(args["lock_file"]) if args["lock_file"] else None
        source, lock = plan_lock.published(args["lock"], args["lock_file"], text)
        if lock is None:
            if args["require_lock"]:
                raise FabricModelError(
                    "rail_plan_lock_file", args["lock_file"],
                    "does not exist and no published plan (%s) was passed" % plan_lock.LOCK_VAR,
                    "run the plan job (ansible-playbook ainet.fabric.plan) on the whole inventory first: it writes the lock "
                    "file and publishes %s as job artifacts" % plan_lock.LOCK_VAR)
            result.update(changed=False, summary=plan["summary"], checked=[], lock_source=None,
                          msg=summary_line(plan["summary"], checked=[]))
            return result
        hosts = None if args["check_hosts"] is None else set(args["check_hosts"])
        if hosts is not None:
            self._refuse_hosts_outside(args, hosts, plan)
        checked = plan if hosts is None else dict(plan, nodes={h: n for h, n in plan["nodes"].items() if h in hosts})
        plan_lock.check_plan(lock, checked, source)
        names = _plain(sorted(checked["nodes"]))
        result.update(changed=False, summary=plan["summary"], checked=names, lock_source=source,
                      msg=summary_line(plan["summary"], checked=names, lock_source=source))
        return result
