# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.cabling_check``: the LLDP outputs the play's hosts gathered (their host
variables), parsed and compared with the plan's ToR and port for every node and rail; the findings with their
fixes, a Markdown report, and a failure when a cable is wrong. The rails of an ``infiniband`` fabric are checked
from the subnet instead (``ibnetdiscover`` registered on a node, ``cabling.ib_cabling``), the others from LLDP.

The logic lives in ``module_utils/cabling``; this plugin reads the hosts' outputs and writes the report."""

from __future__ import annotations

import json
import os

from ansible_collections.ainet.fabric.plugins.module_utils.cabling import cabling_check, ib_cabling, ib_parse, lldp_parse
from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms
from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import read_text
from ansible_collections.ainet.fabric.plugins.plugin_utils.plan_action import PlanAction
from ansible_collections.ainet.fabric.plugins.plugin_utils.reports import link_states, write_reports

ARGUMENT_SPEC = dict(
    cluster=dict(type="dict", required=True),
    nodes=dict(type="dict"),
    node_group=dict(type="str"),
    hosts=dict(type="list", elements="str", required=True),
    lldpcli_var=dict(type="str", default="__cabling_check_lldpcli"),
    lldptool_var=dict(type="str", default="__cabling_check_lldptool"),
    links_var=dict(type="str", default="__cabling_check_links"),
    ibnetdiscover_var=dict(type="str", default="__cabling_check_ibnetdiscover"),
    ib_expect=dict(type="dict", default={}),
    ib_rail_hcas=dict(type="dict", default={}),
    ib_hca_guids=dict(type="dict", default={}),
    ib_switch_guids=dict(type="dict", default={}),
    switch_config_dir=dict(type="path"),
    switch_configs=dict(type="dict", default={}),
    report=dict(type="path"),
    fail_on_findings=dict(type="bool", default=True),
)
MAX_LINES = 20


def host_neighbours(hostvars, lldpcli_var, lldptool_var):
    """A host's neighbours from its registered LLDP outputs, or (None, why) when it has none."""
    lldpcli = hostvars.get(lldpcli_var) or {}
    if lldpcli.get("rc") == 0 and not lldpcli.get("skipped"):
        return lldp_parse.parse_lldpcli_json(lldpcli.get("stdout") or ""), None
    results = [r for r in ((hostvars.get(lldptool_var) or {}).get("results") or []) if not r.get("skipped")]
    if results:
        found = []
        for result in results:
            if result.get("rc") == 0:
                found.extend(lldp_parse.parse_lldptool(result.get("stdout") or "", result.get("item")))
        return found, None
    why = (lldpcli.get("msg") or lldpcli.get("stderr") or "no LLDP output").strip().splitlines()
    return None, (why[0] if why else "no LLDP output")


def tor_port_aliases(plan, directory, given):
    """``{tor: {alias: port} or None}`` for the plan's ToRs whose NOS announces port aliases over LLDP (the platform
    registry says which): the table from the ToR's running configuration given (text, or ``{text: ...}``) or in
    ``directory`` as ``<tor>.json``, None when there is none (that ToR's ports stay unverified)."""
    out = {}
    for name, tor in sorted((plan.get("tors") or {}).items()):
        platform = tor.get("platform")
        if not platforms.lldp_announces_alias(platform):
            continue
        text = given.get(name)
        if isinstance(text, dict) and "text" in text:
            text = text["text"]
        if text is None and directory and os.path.isfile(os.path.join(directory, name + ".json")):
            text = read_text(os.path.join(directory, name + ".json"))
        out[name] = platforms.lldp_port_aliases(platform, text, "ToR %s" % name) if text is not None else None
    return out


def subnet_topology(hostvars, hosts, var):
    """The subnet from every ``ibnetdiscover`` the hosts registered (a loop, one run per rail HCA), merged; or
    (None, why) when none answered."""
    found, why = [], "no host ran ibnetdiscover"
    for host in hosts:
        registered = (hostvars.get(host) or {}).get(var) or {}
        for run in registered.get("results") or [registered]:
            if not isinstance(run, dict) or run.get("skipped") or "rc" not in run:
                continue
            if run.get("rc") == 0:
                found.append(ib_parse.parse_ibnetdiscover(run.get("stdout") or ""))
            else:
                lines = (run.get("stderr") or run.get("msg") or "ibnetdiscover failed").strip().splitlines()
                why = "%s: %s" % (host, lines[-1] if lines else "ibnetdiscover failed")
    if not found:
        return None, why
    return ib_parse.merge_topologies(found), None


def combine(results):
    """One verdict from the LLDP one and the InfiniBand one (each over its own fabrics' rails)."""
    findings = sorted((f for r in results for f in r["findings"]), key=cabling_check._order)  # pylint: disable=protected-access
    ok = sorted((e for r in results for e in r["ok"]), key=cabling_check._order)  # pylint: disable=protected-access
    by_kind = {}
    for finding in findings:
        by_kind[finding["kind"]] = by_kind.get(finding["kind"], 0) + 1
    hosts = max([r["summary"]["hosts"] for r in results] or [0])
    return {"findings": findings, "ok": ok, "summary": {
        "hosts": hosts, "rails": sum(r["summary"]["rails"] for r in results), "ok": len(ok),
        "findings": len(findings), "by_kind": by_kind,
        "unverified_ports": sum(r["summary"]["unverified_ports"] for r in results)}}


class ActionModule(PlanAction):
    ARGUMENT_SPEC = ARGUMENT_SPEC
    ARGUMENT_RULES = dict(mutually_exclusive=[["nodes", "node_group"]], required_one_of=[["nodes", "node_group"]])
    NODE_GROUP_VARIABLE = "cabling_check_node_group"

    def act(self, result, args, task_vars):
        hostvars = task_vars.get("hostvars", {})
        plan = self.plan(args, task_vars)
        neighbours, unread = {}, {}
        for host in args["hosts"]:
            found, why = host_neighbours(hostvars.get(host, {}), args["lldpcli_var"], args["lldptool_var"])
            if found is None:
                unread[host] = why
            else:
                neighbours[host] = found
        hosts = [h for h in args["hosts"] if h in plan["nodes"]]
        ib_fabrics = ib_cabling.infiniband_fabrics(plan)
        other = [f for f in (plan.get("fabrics") or {}) if f not in ib_fabrics]
        results = []
        if other or not ib_fabrics:
            lldp_plan = ib_cabling.fabric_plan(plan, other) if ib_fabrics else plan
            lldp_hosts = [h for h in hosts if h in lldp_plan["nodes"]]
            aliases = tor_port_aliases(lldp_plan, args["switch_config_dir"], args["switch_configs"])
            results.append(cabling_check.check_cabling(lldp_plan, neighbours, lldp_hosts, dict(
                (h, link_states(hostvars.get(h, {}).get(args["links_var"]))) for h in lldp_hosts), aliases))
        else:
            unread = {}
        if ib_fabrics:
            ib_plan = ib_cabling.fabric_plan(plan, ib_fabrics)
            topology, why = subnet_topology(hostvars, args["hosts"], args["ibnetdiscover_var"])
            if topology is None:
                unread["InfiniBand subnet"] = why
            results.append(ib_cabling.check_ib_cabling(
                ib_plan, topology, [h for h in hosts if h in ib_plan["nodes"]],
                rail_hcas=dict((int(k), v) for k, v in args["ib_rail_hcas"].items()),
                hca_guids=dict((h, dict((int(k), v) for k, v in (g or {}).items()))
                               for h, g in args["ib_hca_guids"].items()),
                switch_guids=args["ib_switch_guids"], expect=args["ib_expect"] or None, unread_why=why))
        verdict = results[0] if len(results) == 1 else combine(results)
        report = cabling_check.findings_markdown(verdict)
        changed = False
        if args["report"]:
            text = "# Cabling check: %s\n\n%s\n" % (plan["cluster"]["name"], report.rstrip("\n"))
            if unread:
                text += "\nNot read: %s\n" % "; ".join("%s (%s)" % i for i in sorted(unread.items()))
            # "hosts": the hosts checked, so that a reader (the topology job) knows every rail of theirs without a
            # finding was seen as planned, and the rails of any other host were not read.
            status = json.dumps({"summary": verdict["summary"], "findings": verdict["findings"], "hosts": hosts},
                                indent=1, sort_keys=True) + "\n"
            status_path = os.path.splitext(args["report"])[0] + ".json"
            # beside the report, what the plan job's rails.md shows as the cabling status
            changed = write_reports({args["report"]: text, status_path: status}, self._task.check_mode,
                                    "cabling_check")
        findings = verdict["findings"]
        result.update(changed=changed, findings=findings, ok=verdict["ok"], summary=verdict["summary"],
                      unread=unread, report=args["report"])
        if findings and args["fail_on_findings"]:
            lines = [f["message"] for f in findings[:MAX_LINES]]
            if len(findings) > MAX_LINES:
                lines.append("... and %d more (%s)" % (len(findings) - MAX_LINES, args["report"] or "findings"))
            result.update(failed=True, msg="cabling_check: %d finding(s):\n%s" % (len(findings), "\n".join(lines)))
        return result
