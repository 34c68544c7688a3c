# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side lossless agreement report: one task joins the rail plan, the rail NICs'
gathered QoS facts and the ToRs' configurations (given as text, found in a directory, or read live),
runs the check for every host-ToR link and writes the Markdown and HTML report.

With ``read_tor`` the task instead reads one ToR's running configuration live (the role's read loop, each
item delegated to the ToR's inventory host): over its NOS's API with the ToR's connection variables, or
with a command over the ToR's own connection (``tor/tor_read.py``); it changes nothing."""

from __future__ import annotations

import os
import shlex

from ansible.errors import AnsibleConnectionFailure, AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import read_text, write_atomic
from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_check import link_rows
from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_report import (
    render_html, render_markdown, summary,
)
from ansible_collections.ainet.fabric.plugins.module_utils.model.qos_profile import describe
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms, tor_push, tor_read
from ansible_collections.ainet.fabric.plugins.plugin_utils.host_action import load_model
from ansible_collections.ainet.fabric.plugins.plugin_utils.one_line import fail

REPORT_MD = "lossless-report.md"
REPORT_HTML = "lossless-report.html"

ARGUMENT_SPEC = dict(
    cluster=dict(type="dict", required=True),
    nodes=dict(type="dict"),
    hosts=dict(type="list", elements="str"),
    facts_var=dict(type="str"),
    switch_config_dir=dict(type="path"),
    switch_configs=dict(type="dict", default={}),
    reads=dict(type="list", elements="raw", default=[]),
    read_tors=dict(type="str", choices=list(tor_read.MODES), default="auto"),
    output_dir=dict(type="path"),
    generated=dict(type="str", default=""),
    fail_on_disagreement=dict(type="bool", default=False),
    read_tor=dict(type="str"),
    read_counters=dict(type="bool", default=False),
    ports=dict(type="list", elements="str", default=[]),
    transport=dict(type="str", choices=list(tor_read.TRANSPORTS), default="auto"),
    timeout=dict(type="int", default=30),
)
REPORT_ARGS = ("nodes", "hosts", "facts_var")
# Connections that cannot run a command themselves: only a persistent connection's socket can (network_cli).
PERSISTENT = ("network_cli", "httpapi", "netconf")


def find_config(directory, tor, platform):
    """(path, format) of ToR ``tor``'s configuration in ``directory``, or (None, None). The file endings
    tried and the format are the ToR platform's (tor/platforms.py); a ToR without a platform is read by the
    format its file's ending names, when only one NOS uses that ending (``.json``, ``.yaml``)."""
    if not directory or not os.path.isdir(directory):
        return None, None
    names = set(os.listdir(directory))
    fmt = platforms.qos_format(platform)
    if fmt:
        for ext in platforms.running_extensions(platform):
            if tor + ext in names:
                return os.path.join(directory, tor + ext), fmt
    for name in sorted(names):
        stem, ext = os.path.splitext(name)
        if stem == tor and (fmt or platforms.format_by_extension(ext)):
            return os.path.join(directory, name), fmt or platforms.format_by_extension(ext)
    return None, None


def switch_facts(plan, tors, directory, given, reads=None, reasons=None):
    """{tor: facts} for ``tors``; a ToR whose configuration is missing or unreadable is absent,
    with the reason in the second mapping. A configuration given as text wins, then one in ``directory``,
    then one read live (``reads``: {tor: {facts, format, source}}, the QoS facts the read kept); ``reasons``
    ({tor: one line}) say why a ToR without any was not read live."""
    facts, missing = {}, {}
    reads, reasons = reads or {}, reasons or {}
    for name in sorted(tors):
        tor = plan["tors"][name]
        fmt = platforms.qos_format(tor.get("platform"))
        text, source = None, None
        if name in given and given[name]:
            entry = given[name]
            text = entry.get("text") if isinstance(entry, dict) else entry
            fmt = (entry.get("format") if isinstance(entry, dict) else None) or fmt
            source = "the device"
        else:
            path, fmt = find_config(directory, name, tor.get("platform"))
            if path:
                text, source = read_text(path), path
            elif name in reads:
                facts[name] = dict(reads[name]["facts"], source=reads[name].get("source") or "read live")
                continue
        if text is None:
            missing[name] = reasons.get(name) or (
                "no configuration of ToR %s was read (platform %s; looked in %s for %s.*)"
                % (name, tor.get("platform") or "unset", directory or "no switch_config_dir", name))
            continue
        if fmt is None:
            missing[name] = "ToR %s: platform %r has no QoS parser" % (name, tor.get("platform"))
            continue
        parsed = tor_read.qos_facts(text, fmt)
        parsed["source"] = source
        facts[name] = parsed
    return facts, missing


def live_reasons(plan, tors, args, inventory):
    """{tor: why it was not read live} for ``tors``: the read loop's failures, and with ``read_tors: true`` the
    reason of each ToR without a read or a given configuration."""
    reads, errors = tor_read.collect(args["reads"])
    reasons = dict(errors)
    if args["read_tors"] == "true":
        for name in tors:
            if name not in reads and name not in reasons:
                reasons[name] = tor_read.unread_reason(name, plan["tors"][name].get("platform"), inventory)
    return reads, reasons


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    # A ToR on ansible.netcommon.network_cli is read through its persistent connection's socket (read_tor).
    _requires_connection = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _unused, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        if args["read_tor"]:
            result.update(self._read(args, task_vars))
            return result
        lacking = [name for name in REPORT_ARGS if args[name] is None]
        if lacking:
            result.update(failed=True, msg="missing required arguments: %s (or read_tor, to read one ToR)"
                          % ", ".join(lacking))
            return result
        hostvars = task_vars.get("hostvars", {})
        try:
            plan = rail_plan(args["cluster"], args["nodes"])
        except FabricError as exc:
            return fail(self._task, result, str(exc))
        hosts = [h for h in args["hosts"] if h in plan["nodes"]]
        host_facts, host_errors = {}, {}
        for host in hosts:
            gathered = (hostvars.get(host) or {}).get(args["facts_var"]) or {}
            if isinstance(gathered, dict) and (gathered.get("facts") or {}).get("ports") and not gathered.get("msg"):
                host_facts[host] = gathered["facts"]
            elif isinstance(gathered, dict) and gathered.get("msg"):
                host_errors[host] = str(gathered["msg"])[:300]
        tors = {e["tor"] for h in hosts for e in plan["nodes"][h]["rails"]}
        reads, reasons = live_reasons(plan, tors, args, (task_vars.get("groups") or {}).get("all") or ())
        facts, missing = switch_facts(plan, tors, args["switch_config_dir"], args["switch_configs"], reads, reasons)
        live = sorted(name for name, f in facts.items()
                      if name in reads and f.get("source") == reads[name].get("source"))
        rows = link_rows(plan, host_facts, facts, hosts, host_errors)
        for row in rows:
            if row["status"] == "error" and row["tor"] in missing and "ToR" in (row["error"] or ""):
                row["error"] = missing[row["tor"]]
        problems = {name: f["problems"] for name, f in facts.items() if f.get("problems")}
        meta = {"cluster": plan["summary"]["cluster"], "generated": args["generated"],
                "profile": "; ".join("%s: %s" % (name, describe(f.get("qos")))
                                     for name, f in plan["cluster"]["fabrics"].items()),
                "sources": dict({"hosts": len(host_facts), "switches": len(facts)},
                                **({"switches read live": len(live)} if live else {})),
                "problems": problems}
        counts = summary(rows)
        files = []
        out = args["output_dir"]
        if out:
            for name, text in ((REPORT_MD, render_markdown(rows, meta)), (REPORT_HTML, render_html(rows, meta))):
                path = os.path.join(out, name)
                if read_text(path) != text:
                    files.append(path)
                    if not self._task.check_mode:
                        try:
                            write_atomic(path, text, "0644")
                        except OSError as exc:
                            result.update(failed=True, msg="could not write the lossless report %s: %s. Fix: set "
                                          "lossless_check_report_dir to a writable directory" % (path, exc.strerror))
                            return result
        # a link with an unchecked topic is not shown to agree: it fails the play as a disagreement does
        bad = counts.get("disagree", 0) + counts.get("unchecked", 0) + counts.get("error", 0)
        result.update(changed=bool(files), files=files, summary=counts, switch_problems=problems,
                      tor_reads={"read": live, "not_read": {name: missing[name] for name in sorted(missing)
                                                            if name in reasons}},
                      disagreements=[dict(r, disagreements=r["disagreements"]) for r in rows
                                     if r["status"] in ("disagree", "unchecked", "error")][:200])
        if args["fail_on_disagreement"] and bad:
            result.update(failed=True, msg="%d of %d host-ToR links disagree or could not be checked in full; see %s"
                          % (bad, counts.get("links", len(rows)), out or "the task result"))
        return result

    # ------------------------------------------------------------------------- read_tor

    def _read(self, args, task_vars):
        """Read ToR ``read_tor``'s running configuration live (see the module's documentation): the task result
        with ``config`` ({facts: its QoS facts, never the text; format, source}), or ``read_error`` (one line naming the ToR); ``skipped`` when a
        configuration of it is given in ``switch_config_dir``. Changes nothing."""
        name = args["read_tor"]
        target = self._task.delegate_to or task_vars.get("inventory_hostname")
        if target != name:
            return {"failed": True, "msg": "read_tor: ToR %s is read through its own inventory host: delegate the "
                    "task to it (delegate_to: %s); it runs on %s" % (name, name, target)}
        try:
            found, platform = tor_read.platform_of(load_model(args["cluster"]), name)
        except FabricError as exc:
            return {"failed": True, "msg": str(exc)}
        if not found:
            return {"failed": True, "msg": "read_tor: %s is not a ToR of the cluster model" % name}
        path, _fmt = find_config(args["switch_config_dir"], name, platform)
        if path and not args["read_counters"]:
            return {"changed": False, "skipped": True, "tor": name, "given": path,
                    "msg": "ToR %s: its configuration is given in %s, not read live" % (name, path)}
        tvars = (task_vars.get("hostvars") or {}).get(name) or {}
        connection = tvars.get("ansible_connection")
        how = "its %s connection" % tor_read.connection_name(connection)
        if args["read_counters"]:
            return self._counters(name, platform, tvars, args)
        try:
            via = tor_read.choose_via(name, platform, tvars.get("lossless_check_read_transport") or args["transport"],
                                      connection)
            if via == "http":
                url, user, password, validate = tor_read.api_endpoint(tvars, name, platforms.nos(platform).HTTP_PORT)
                how = tor_read.where(platform, via, url=url)
                transport = tor_push.HttpTransport(url, user, password, validate_certs=validate,
                                                   timeout=args["timeout"])
                text = tor_read.read_tor(name, platform, via, transport, how)
            else:
                how = tor_read.where(platform, via, connection=connection)
                if tor_read.connection_name(connection) in PERSISTENT and not self._connection.socket_path:
                    raise tor_read.ReadError("ToR %s: its %s connection runs no command here; set "
                                             "lossless_check_read_transport: api" % (name, connection))
                text = tor_read.read_tor(name, platform, via, self._run_on_switch, how)
        except tor_read.ReadError as exc:
            return {"changed": False, "tor": name, "read_error": str(exc)}
        except AnsibleError as exc:  # AnsibleConnectionFailure: the switch could not be reached
            kind = "reached" if isinstance(exc, AnsibleConnectionFailure) else "read live"
            return {"changed": False, "tor": name, "read_error": tor_read.one_line(
                "ToR %s could not be %s (%s): %s" % (name, kind, how, getattr(exc, "message", None) or exc))}
        source = "%s (read live)" % how
        # Only the QoS facts leave this task: the running configuration's text holds the switch's secrets, and a
        # registered loop result is printed at -v and kept in the job's events for everyone who may view the job.
        fmt = platforms.qos_format(platform)
        return {"changed": False, "tor": name, "via": via, "source": source,
                "config": {"facts": tor_read.qos_facts(text, fmt), "format": fmt, "source": source}}

    def _counters(self, name, platform, tvars, args):
        """The load test's counter read of ToR ``name`` (``read_counters``) the way its NOS reads them (its API with
        the ToR's connection variables, or its own connection, chosen as for the configuration), for ``ports`` where
        the NOS reads port by port: ``counters`` ({format: output}) or ``read_error`` (one line naming the ToR and
        the command). Changes nothing."""
        connection = tvars.get("ansible_connection")
        how = "its %s connection" % tor_read.connection_name(connection)
        try:
            via = tor_read.choose_counter_via(name, platform, tvars.get("lossless_check_read_transport")
                                              or args["transport"], connection)
            if via == "http":
                url, user, password, validate = tor_read.api_endpoint(tvars, name, platforms.nos(platform).HTTP_PORT)
                how = tor_read.counters_where(platform, via, url=url)
                target = tor_push.HttpTransport(url, user, password, validate_certs=validate, timeout=args["timeout"])
            else:
                how = tor_read.counters_where(platform, via, connection=connection)
                if tor_read.connection_name(connection) in PERSISTENT and not self._connection.socket_path:
                    raise tor_read.ReadError("ToR %s: its counters could not be read (%s): its %s connection runs no "
                                             "command here" % (name, how, connection))
                target = self._run_on_switch
            counters = tor_read.read_counters(name, platform, via, target, how, ports=args["ports"])
            settle, settle_source = platforms.read_counter_settle(platform, via, target)
        except tor_read.ReadError as exc:
            return {"changed": False, "tor": name, "read_error": str(exc)}
        except AnsibleError as exc:  # AnsibleConnectionFailure: the switch could not be reached
            return {"changed": False, "tor": name, "read_error": tor_read.one_line(
                "ToR %s: its counters could not be read (%s): %s" % (name, how, getattr(exc, "message", None) or exc))}
        return {"changed": False, "tor": name, "via": via, "source": "%s (read live)" % how, "counters": counters,
                "settle": settle, "settle_source": settle_source}

    def _run_on_switch(self, argv, data=None):
        """``(rc, stdout, stderr)`` of a command on the ToR through its own connection: a persistent one's socket
        (ansible.netcommon.network_cli: the CLI's ``get``), else the connection plugin itself, without a shell
        around it (a switch CLI has none) and without become. A ``|`` word is the CLI's output pipe (EOS's ``| json``)
        and goes to the CLI as it is; every other word is quoted."""
        command = " ".join(arg if arg == "|" else shlex.quote(arg) for arg in argv)
        if self._connection.socket_path:
            # pylint: disable-next=import-outside-toplevel
            from ansible.module_utils.connection import Connection, ConnectionError as RpcError
            try:
                return 0, Connection(self._connection.socket_path).get(command=command), ""
            except RpcError as exc:
                return 1, "", str(exc)
        res = self._low_level_execute_command(command, sudoable=False, executable=False,
                                              in_data=None if data is None else data.encode("utf-8"))
        return res.get("rc", 1), res.get("stdout", ""), res.get("stderr", "")
