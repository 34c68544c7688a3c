# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.tor_config``: plan, render every ToR's configuration, check it
with the vendor's schema, write it, diff it against a running configuration and, when asked, push it.

The logic lives in module_utils: ``tor_render`` and, per NOS, the module the platform registry
(``tor/platforms.py``) names, which renders, validates, diffs and pushes; this plugin reads the task's
arguments and the ToR host's connection variables and writes files.

At fleet scale (2,048 ToRs for 16,384 nodes) it is one task of a few seconds: the opening is :class:`PlanAction`'s
(the node group's variables read once, Python's cyclic collector paused for the task, whose worker holds the whole
inventory), the model is read from ``fabric_cluster`` untemplated unless the task passes ``cluster``, and the
result carries its own summary line (``summary``, ``lacking``) so that the role prints it with one task."""

from __future__ import annotations

import os

from ansible_collections.ainet.fabric.plugins.module_utils.plan import plan_lock
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.common.report_escape import one_line
from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import read_text, write_atomic
from ansible_collections.ainet.fabric.plugins.module_utils.tor.config_redact import config_secrets, redact_values
from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms, tor_push, tor_read
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_diff import diff_text
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import (
    RendererUnavailable, ValidatorUnavailable)
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_render import lacking, render_tors, summary
from ansible_collections.ainet.fabric.plugins.plugin_utils.one_line import fail
from ansible_collections.ainet.fabric.plugins.plugin_utils.plan_action import PlanAction, node_groups_hosts

ARGUMENT_SPEC = dict(
    # Default: the task's fabric_cluster, read untemplated (a model of 2,048 ToRs templated and deep-copied as an
    # argument cost seconds).
    cluster=dict(type="dict"),
    nodes=dict(type="dict"),
    node_group=dict(type="str"),
    # The job's node groups ({variable: group}), checked first, in order, as the jobs' input check checks them.
    node_groups=dict(type="dict"),
    tors=dict(type="list", elements="str"),
    dest=dict(type="path"),
    running=dict(type="dict", default={}),
    running_dir=dict(type="path"),
    validate=dict(type="bool", default=True),
    sonic_yang_dir=dict(type="path"),
    push=dict(type="bool", default=False),
    timeout=dict(type="int", default=60),
    lock=dict(type="raw"),
    lock_file=dict(type="path"),
)
# Lines of --diff and of the per-ToR differences returned (the file itself holds everything).
MAX_DIFF = 400


def _running_text(args, name, ext):
    given = args["running"].get(name)
    if given:
        return given, "the task's running"
    if args["running_dir"]:
        path = os.path.join(args["running_dir"], "%s.%s" % (name, ext))
        text = read_text(path)
        if text is not None:
            return text, path
    return None, None


def _validate(args, item, running_text):
    """The vendor's violations of one rendered file (port names, then the vendor schema), and a note when the
    schema was not checked. A schema checker quotes the values it refuses (libyang: ``Unsatisfied length - string
    "<value>"``, with list keys in the data path), and a whole running configuration is checked: every secret of
    the running configuration and of the rendering is redacted from each message, for every NOS
    (:func:`config_redact.redact_values`). The secrets are looked for only when there is a message to print: a
    rendering that passes prints nothing (scanning every line of 2,048 clean renderings was a third of the task)."""
    problems = platforms.port_problems(item["platform"], item["ports"])
    try:
        violations, note = platforms.nos(item["platform"]).validate(item, running_text,
                                                                    {"sonic_yang_dir": args["sonic_yang_dir"]})
    except ValidatorUnavailable as exc:
        violations, note = [], "%s: not validated (%s)" % (item["name"], exc)
    messages = problems + list(violations)
    if not messages and not note:
        return [], None
    hidden = config_secrets(running_text) | config_secrets(item.get("text"))
    return [redact_values(p, hidden) for p in messages], note and redact_values(note, hidden)


class ActionModule(PlanAction):
    ARGUMENT_SPEC = ARGUMENT_SPEC
    ARGUMENT_RULES = dict(mutually_exclusive=[("nodes", "node_group")], required_one_of=[("nodes", "node_group")])
    NODE_GROUP_VARIABLE = "tor_config_node_group"
    # 2,048 ToRs rendered build millions of containers and no cycle: in the worker, forked with the whole inventory,
    # the collector's passes over it took half of the rendering's time.
    PAUSE_GC = True

    def act(self, result, args, task_vars):
        host = task_vars.get("inventory_hostname")
        # The input check of the tors job is this task's first step (the job has no check_input.yml play): the job's
        # node groups in order, then the node group, the model and the nodes as the plan reads them, each refused with
        # the line check_input.yml's would give (tests/integration/test_job_input.py).
        node_groups_hosts(task_vars, args["node_groups"])
        plan = self.plan(args, task_vars)
        names = args["tors"]
        if args["push"]:
            if host not in plan["tors"]:
                return fail(self._task, result, "push: true runs on the ToR's own inventory host; %s is not a "
                            "ToR of the plan (ToRs: %s)" % (host, ", ".join(sorted(plan["tors"]))))
            names = [host]
            # A switch gets only what the reviewed, published plan says, as the host jobs do. The published plan
            # variable (one entry per node) is read untemplated, as the rail_plan action reads it.
            if args["lock"] is None:
                args["lock"] = self.task_variable(task_vars, plan_lock.LOCK_VAR)
            try:
                text = read_text(args["lock_file"]) if args["lock_file"] else None
                source, lock = plan_lock.published(args["lock"], args["lock_file"], text)
                if lock is None:
                    return fail(self._task, result, "no published plan (%s, or the variable %s): run the plan "
                                "job (ansible-playbook ainet.fabric.plan) on the whole inventory before pushing"
                                % (args["lock_file"], plan_lock.LOCK_VAR))
                plan_lock.check_whole_plan(lock, plan, source)
            except FabricError as exc:
                return fail(self._task, result, str(exc))
        unknown = sorted(set(names or ()) - set(plan["tors"]))
        if unknown:
            return fail(self._task, result, "tors: %s %s not in the plan (ToRs: %s)"
                        % (", ".join(unknown), "is" if len(unknown) == 1 else "are", ", ".join(sorted(plan["tors"]))))
        try:
            rendered = render_tors(plan, names)
        except (RendererUnavailable, ValueError, FabricError) as exc:
            return fail(self._task, result, str(exc))
        if args["push"] and not rendered["rendered"]:
            return fail(self._task, result, "ToR %s cannot be pushed: %s" % (host, rendered["skipped"][host]))

        # Everything is rendered and checked before anything is written or pushed.
        tors, notes, invalid, unvalidated = [], [], [], {}
        for item in rendered["rendered"]:
            running, source = _running_text(args, item["name"], platforms.nos(item["platform"]).EXTENSION)
            problems, note = [], None
            if args["validate"]:
                problems, note = _validate(args, item, running)
            if note:
                notes.append(note)
                unvalidated[item["name"]] = note
            if problems:
                invalid.append("%s (%s): %s" % (item["name"], item["path"], "; ".join(problems[:10])))
            differences, stale = None, []
            if running is not None:
                try:
                    differences = platforms.running_diff(item["platform"], running, item)
                    stale = platforms.stale_ports(item["platform"], running, item)
                except ValueError as exc:
                    return dict(result, failed=True, msg="ToR %s: the running configuration %s cannot be read: %s"
                                % (item["name"], source, exc))
            tors.append({"name": item["name"], "platform": item["platform"], "item": item, "running": source,
                         "differences": differences, "stale": stale})
        if invalid:
            return dict(result, failed=True, msg="the vendor schema refuses %d rendered configuration(s), nothing was "
                        "written: %s" % (len(invalid), " | ".join(invalid)))

        files, diffs, out = [], [], []
        for tor in tors:
            item = tor["item"]
            path = os.path.join(args["dest"], item["path"]) if args["dest"] else None
            changed = False
            if path:
                before = read_text(path)
                if before != item["text"]:
                    changed = True
                    files.append(path)
                    diffs.append({"before_header": path, "after_header": path, "before": before or "",
                                  "after": item["text"]})
                    if not self._task.check_mode:
                        try:
                            write_atomic(path, item["text"], "0644")
                        except OSError as exc:
                            return dict(result, failed=True, msg="could not write %s: %s. Fix: set "
                                        "tor_config_output_dir to a writable directory" % (path, exc.strerror))
            entry = {"name": tor["name"], "platform": tor["platform"], "path": path, "changed": changed,
                     "running": tor["running"]}
            if tor["differences"] is not None:
                entry["in_sync"] = not tor["differences"] and not tor["stale"]
                entry["differences"] = len(tor["differences"])
                entry["stale_ports"] = tor["stale"]
                text = "".join("- %s: still marked [ainet] but no longer in the plan\n" % one_line(port)
                               for port in tor["stale"])
                text += diff_text(tor["differences"][:MAX_DIFF])
                entry["diff"] = text.splitlines()
                if text:
                    diffs.append({"before_header": "%s running (%s)" % (tor["name"], tor["running"]),
                                  "after_header": "%s rendered" % tor["name"], "prepared": text})
            out.append(entry)
        pushed = None
        if args["push"]:
            pushed = self._push(tors[0], task_vars, args)
            if pushed.get("failed"):
                return dict(result, failed=True, msg=pushed["msg"], tors=out)
            if pushed.get("diff"):
                diffs.append({"before_header": "%s running" % host, "after_header": "%s pushed" % host,
                              "prepared": diff_text(pushed["diff"][:MAX_DIFF])})
        result.update(changed=bool(files) or bool(pushed and pushed.get("changed")), files=files, tors=out,
                      skipped=rendered["skipped"], notes=notes, unvalidated=unvalidated)
        result.update(summary=summary(result, args["validate"], args["dest"]), lacking=lacking(out))
        if pushed is not None:
            result["push"] = {k: v for k, v in pushed.items() if k != "diff"}
        if self._task.diff and diffs:
            result["diff"] = diffs
        return result

    def _push(self, tor, task_vars, args):
        """Push one ToR's rendered configuration through its NOS's usual path (the NOS module's ``push``)."""
        item = tor["item"]
        nos = platforms.nos(item["platform"])
        check = bool(self._task.check_mode)
        if nos.PUSH is None:
            return {"failed": True, "msg": "ToR %s cannot be pushed: this collection has no push for %s (platform "
                    "%s); apply %s by hand" % (item["name"], nos.TITLE, item["platform"], item["path"])}
        try:
            if nos.PUSH == "ssh":
                return nos.push(self._run_on_switch, item, check=check)
            # The same address, credentials and TLS settings the lossless check reads the ToR with.
            variables = dict((key, self._var(task_vars, key)) for key in tor_read.API_VARIABLES)
            url, user, password, validate_certs = tor_read.api_endpoint(variables, item["name"], nos.HTTP_PORT)
            transport = tor_push.HttpTransport(url, user, password, validate_certs=validate_certs,
                                               timeout=args["timeout"])
            return nos.push(transport, item, check=check)
        except tor_read.ReadError as exc:
            return {"failed": True, "msg": str(exc)}
        except tor_push.PushError as exc:
            return {"failed": True, "msg": "push to ToR %s failed: %s" % (item["name"], exc)}

    def _var(self, task_vars, name, default=None):
        value = task_vars.get(name)
        if value is None:
            return default
        return self._templar.template(value)

    def _run_on_switch(self, argv, data=None):
        """Run a command on the ToR through its connection (SONiC is pushed over SSH)."""
        from ansible.module_utils.six.moves import shlex_quote  # pylint: disable=import-outside-toplevel
        # The connection takes the input as bytes.
        res = self._low_level_execute_command(" ".join(shlex_quote(a) for a in argv),
                                              in_data=None if data is None else data.encode("utf-8"))
        return res.get("rc", 1), res.get("stdout", ""), res.get("stderr", "")
