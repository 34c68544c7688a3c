# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.link_test``: the rounds of a fleet link test (which node tests which, on
which rails, with which addresses), and afterwards the verdict from what every client registered.

The logic lives in ``module_utils/fleet``; this plugin reads the hosts' registered outputs and writes the report."""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.fleet import link_results, pair_schedule
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.plugin_utils.reports import link_states, write_reports
from ansible_collections.ainet.fabric.plugins.plugin_utils.one_line import fail

ARGUMENT_SPEC = dict(
    mode=dict(type="str", choices=["schedule", "round", "verdict"], required=True),
    cluster=dict(type="dict", required=True),
    nodes=dict(type="dict", required=True),
    hosts=dict(type="list", elements="str", required=True),
    rounds=dict(type="int", default=pair_schedule.DEFAULT_ROUNDS),
    full_mesh=dict(type="bool", default=False),
    round=dict(type="int"),
    fabric=dict(type="str"),
    results_var=dict(type="str", default="__link_test_results"),
    links_var=dict(type="str", default="__link_test_links"),
    rdma=dict(type="bool", default=False),
    rdma_var=dict(type="str", default="__link_test_rdma"),
    min_gbps=dict(type="float"),
    max_usec=dict(type="float"),
    report=dict(type="path"),
    fail_on_broken=dict(type="bool", default=True),
)


def report_markdown(cluster, verdict, schedule_note, results=(), skipped=()):
    lines = ["# Link test: %s" % cluster, "", schedule_note, "",
             "%d tests, %d failed." % (verdict["tested"], verdict["failed"]), ""]
    rows = [(kind, f) for kind in ("broken", "slow", "suspect") for f in verdict[kind]]
    if not rows:
        lines.append("Every tested link passed.")
    else:
        lines += ["| verdict | host | NIC | rail | ToR | port | why |", "|---|---|---|---|---|---|---|"]
        for kind, f in rows:
            lines.append("| %s | %s | %s | %s %s | %s | %s | %s |" % (
                kind, f["host"], f["interface"], f["fabric"], f["rail"], f["tor"], f["tor_port"],
                f["why"].replace("|", "\\|")))
    measured = [r for r in results if r["test"].startswith("rdma") and r["ok"]]
    if measured:
        lines += ["", "RDMA measured (client <- server):", "", "| client | server | rail | test | Gb/s | usec |",
                  "|---|---|---|---|---|---|"]
        for r in sorted(measured, key=lambda r: (r["b"], r["fabric"], r["rail"], r["round"])):
            lines.append("| %s | %s | %s %s | %s | %s | %s |" % (
                r["b"], r["a"], r["fabric"], r["rail"], r["test"], "" if r["gbps"] is None else "%g" % r["gbps"],
                "" if r["usec"] is None else "%g" % r["usec"]))
    if skipped:
        lines += ["", "Not run:", ""] + ["- %s" % line for line in skipped]
    return "\n".join(lines) + "\n"


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _unused, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        try:
            plan = rail_plan(args["cluster"], args["nodes"])
            if args["fabric"] and args["fabric"] not in plan["fabrics"]:
                raise FabricError("link_test_fabric: %r is not a fabric of the cluster (%s)"
                                  % (args["fabric"], ", ".join(plan["fabrics"])))
            hosts = [h for h in args["hosts"] if h in plan["nodes"]]
            if args["mode"] == "schedule":
                return dict(result, changed=False, **link_results.schedule(plan, hosts, args["rounds"], args["full_mesh"]))
            if args["mode"] == "round":
                total = link_results.schedule(plan, hosts, args["rounds"], args["full_mesh"])["rounds"]
                if args["round"] is None or not 1 <= args["round"] <= total:
                    raise FabricError("link_test: round=%r is not a round of this schedule (1 to %d: %d nodes, %s). "
                                      "Fix: loop round over range(1, <mode=schedule's rounds> + 1)." % (
                                          args["round"], total, len(hosts),
                                          "full mesh" if args["full_mesh"] else "rounds=%d" % args["rounds"]))
                this = link_results.round_assignments(plan, hosts, args["round"], args["fabric"])
                return dict(result, changed=False, round=args["round"], assignments=this, pairs=len(this) // 2)
            hostvars = task_vars.get("hostvars", {})
            results = []
            for host in hosts:
                results.extend(link_results.results_of(host, hostvars.get(host, {}).get(args["results_var"])))
            verdict = pair_schedule.verdict(results, plan, args["min_gbps"], args["max_usec"])
            rdma_rails = dict((h, (hostvars.get(h, {}).get(args["rdma_var"]) or {}).get("rails")) for h in hosts)
            skipped = link_results.not_run(plan, hosts, args["rdma"], dict(
                (h, r) for h, r in rdma_rails.items() if r is not None), args["fabric"])
            for finding in verdict["broken"]:
                state = link_states(hostvars.get(finding["host"], {}).get(args["links_var"])).get(finding["interface"])
                if state is not None and state.upper() not in ("UP", "UNKNOWN"):
                    finding["why"] = "its link is %s (operstate %s); %s" % (state.lower(), state, finding["why"])
        except FabricError as exc:
            return fail(self._task, result, str(exc))
        rounds = sorted(set(r["round"] for r in results))
        note = "%d nodes, %d round(s)%s; every node meets a different peer in each round, on every rail." % (
            len(hosts), len(rounds), " (full mesh)" if args["full_mesh"] else "")
        changed = False
        if args["report"]:
            text = report_markdown(plan["cluster"]["name"], verdict, note, results, skipped)
            changed = write_reports({args["report"]: text}, self._task.check_mode, "link_test")
        result.update(changed=changed, verdict=verdict, results=results, not_run=skipped, report=args["report"])
        if verdict["broken"] and args["fail_on_broken"]:
            lines = ["%s %s (%s rail %s, %s %s): %s" % (
                f["host"], f["interface"], f["fabric"], f["rail"], f["tor"], f["tor_port"], f["why"])
                for f in verdict["broken"]]
            result.update(failed=True, msg="link_test: %d broken link(s):\n%s" % (len(lines), "\n".join(lines)))
        return result
