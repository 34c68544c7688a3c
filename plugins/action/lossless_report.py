# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side lossless agreement report: one task joins the rail plan, the rail NICs'
gathered QoS facts and the ToRs' configurations (read from the devices or from a directory),
runs the check for every host-ToR link and writes the Markdown and HTML report."""

from __future__ import annotations

import os

from ansible.plugins.action import ActionBase

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import read_text, write_atomic
from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_check import link_rows
from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_report import (
    render_html, render_markdown, summary,
)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse import parse_qos
from ansible_collections.ainet.fabric.plugins.module_utils.model.qos_profile import describe
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms

REPORT_MD = "lossless-report.md"
REPORT_HTML = "lossless-report.html"

ARGUMENT_SPEC = dict(
    cluster=dict(type="dict", required=True),
    nodes=dict(type="dict", required=True),
    hosts=dict(type="list", elements="str", required=True),
    facts_var=dict(type="str", required=True),
    switch_config_dir=dict(type="path"),
    switch_configs=dict(type="dict", default={}),
    output_dir=dict(type="path"),
    generated=dict(type="str", default=""),
    fail_on_disagreement=dict(type="bool", default=False),
)


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


def switch_facts(plan, tors, directory, given):
    """{tor: facts} for ``tors``; a ToR whose configuration is missing or unreadable is absent,
    with the reason in the second mapping."""
    facts, missing = {}, {}
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
        if text is None:
            missing[name] = ("no configuration of ToR %s was read (platform %s; looked in %s for %s.*)"
                             % (name, tor.get("platform") or "unset", directory or "no switch_config_dir", name))
            continue
        if fmt is None:
            missing[name] = "ToR %s: platform %r has no QoS parser" % (name, tor.get("platform"))
            continue
        parsed = parse_qos(text, fmt)
        parsed["source"] = source
        facts[name] = parsed
    return facts, missing


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _unused, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        hostvars = task_vars.get("hostvars", {})
        try:
            plan = rail_plan(args["cluster"], args["nodes"])
        except FabricError as exc:
            result.update(failed=True, msg=str(exc))
            return result
        hosts = [h for h in args["hosts"] if h in plan["nodes"]]
        host_facts, host_errors = {}, {}
        for host in hosts:
            gathered = (hostvars.get(host) or {}).get(args["facts_var"]) or {}
            if isinstance(gathered, dict) and (gathered.get("facts") or {}).get("ports") and not gathered.get("msg"):
                host_facts[host] = gathered["facts"]
            elif isinstance(gathered, dict) and gathered.get("msg"):
                host_errors[host] = str(gathered["msg"])[:300]
        tors = {e["tor"] for h in hosts for e in plan["nodes"][h]["rails"]}
        facts, missing = switch_facts(plan, tors, args["switch_config_dir"], args["switch_configs"])
        rows = link_rows(plan, host_facts, facts, hosts, host_errors)
        for row in rows:
            if row["status"] == "error" and row["tor"] in missing and "ToR" in (row["error"] or ""):
                row["error"] = missing[row["tor"]]
        problems = {name: f["problems"] for name, f in facts.items() if f.get("problems")}
        meta = {"cluster": plan["summary"]["cluster"], "generated": args["generated"],
                "profile": "; ".join("%s: %s" % (name, describe(f.get("qos")))
                                     for name, f in plan["cluster"]["fabrics"].items()),
                "sources": {"hosts": len(host_facts), "switches": len(facts)},
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
        bad = counts.get("disagree", 0) + counts.get("error", 0)
        result.update(changed=bool(files), files=files, summary=counts, switch_problems=problems,
                      disagreements=[dict(r, disagreements=r["disagreements"]) for r in rows
                                     if r["status"] in ("disagree", "error")][:200])
        if args["fail_on_disagreement"] and bad:
            result.update(failed=True, msg="%d of %d host-ToR links disagree or could not be checked; see %s"
                          % (bad, counts.get("links", len(rows)), out or "the task result"))
        return result
