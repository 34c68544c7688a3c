# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.link_test``: the rounds of a fleet link test (which node tests which, on
which rails, with which addresses), and afterwards the verdict from what every client registered.

The logic lives in ``module_utils/fleet``; this plugin reads the hosts' registered outputs and writes the report.

Every mode that needs the plan (schedule, round, verdict) computes it from the node group's variables, read once
(``PlanAction``): about a second at 16,384 nodes; the schedule not where the job's first task, the rail_plan role's
check of the play's hosts (``rail_plan_check_result``), planned every host it counts (it needs their names only). The
schedule returns its counts only: a plan registered with ``run_once`` is deep-copied by the strategy, sent from the
worker as a pickle and converted for the callbacks (13 s at 16,384 nodes x 8 rails), for every later task to read. A
judged round needs the nodes' names only."""

from __future__ import annotations

import json

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.common.report_escape import md_text
from ansible_collections.ainet.fabric.plugins.module_utils.fleet import link_results, pair_schedule
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import node_group_hosts
from ansible_collections.ainet.fabric.plugins.plugin_utils.inventory_vars import host_variables
from ansible_collections.ainet.fabric.plugins.plugin_utils.plan_action import PlanAction
from ansible_collections.ainet.fabric.plugins.plugin_utils.reports import link_states, write_reports

# The rail_plan role's check of the play's hosts against the published plan, as its check entry point registers it.
CHECK_RESULT = "rail_plan_check_result"

ARGUMENT_SPEC = dict(
    mode=dict(type="str", choices=["schedule", "round", "judge", "verdict"], required=True),
    cluster=dict(type="dict"),
    nodes=dict(type="dict"),
    node_group=dict(type="str"),
    hosts=dict(type="list", elements="str"),
    rounds=dict(type="int", default=pair_schedule.DEFAULT_ROUNDS),
    full_mesh=dict(type="bool", default=False),
    round=dict(type="int"),
    fabric=dict(type="str"),
    results_var=dict(type="str", default="__link_test_results"),
    round_var=dict(type="str", default="__link_test_round_out"),
    state_var=dict(type="str", default="__link_test_state"),
    links_var=dict(type="str", default="__link_test_links"),
    rdma=dict(type="bool", default=False),
    rdma_var=dict(type="str", default="__link_test_rdma"),
    min_gbps=dict(type="float"),
    max_usec=dict(type="float"),
    report=dict(type="path"),
    fail_on_broken=dict(type="bool", default=True),
)


def report_markdown(cluster, verdict, schedule_note, measured=None, skipped=()):
    """The link test's report (Markdown). Every name and message is :func:`report_escape.md_text`: the reasons
    quote what ping and the perftest tools printed on the hosts, which add no row, line, link or markup."""
    lines = ["# Link test: %s" % md_text(cluster), "", md_text(schedule_note), "",
             "%d tests, %d failed." % (verdict["tested"], verdict["failed"]), ""]
    rows = [(kind, f) for kind in ("broken", "slow", "suspect") for f in verdict[kind]]
    if not rows:
        lines.append("Every tested link passed.")
    else:
        lines += ["| verdict | host | NIC | rail | ToR | port | why |", "|---|---|---|---|---|---|---|"]
        for kind, f in rows:
            lines.append("| %s |" % " | ".join(md_text(cell) for cell in (
                kind, f["host"], f["interface"], "%s %s" % (f["fabric"], f["rail"]), f["tor"], f["tor_port"],
                f["why"])))
    rows = []
    for client, fabrics in sorted((measured or {}).items()):
        for fabric, rails in sorted(fabrics.items()):
            for rail, tests in sorted(rails.items(), key=lambda item: int(item[0])):
                for test, row in sorted(tests.items()):
                    rows.append("| %s | %s | %s | %d | %s | %s | %s |" % (
                        md_text(client), md_text("%s %s" % (fabric, rail)), md_text(test), row["peers"],
                        "" if row["min_gbps"] is None else md_text("%g (%s)" % (row["min_gbps"], row["min_peer"])),
                        "" if row["max_gbps"] is None else "%g" % row["max_gbps"],
                        "" if row["max_usec"] is None else "%g" % row["max_usec"]))
    if rows:
        lines += ["", "RDMA measured, per client rail over the servers it met:", "",
                  "| client | rail | test | servers | lowest Gb/s (server) | highest Gb/s | highest usec |",
                  "|---|---|---|---|---|---|---|"] + rows
    if skipped:
        lines += ["", "Not run:", ""] + ["- %s" % md_text(line) for line in skipped]
    return "\n".join(lines) + "\n"


class ActionModule(PlanAction):
    ARGUMENT_SPEC = ARGUMENT_SPEC
    NODE_GROUP_VARIABLE = "link_test_node_group"
    PAUSE_GC = True

    @staticmethod
    def _source(args):
        """Refuse a task without the nodes (``node_group`` or ``nodes``)."""
        if args["node_group"] is None and args["nodes"] is None:
            raise FabricError("link_test: neither nodes nor node_group is given. Fix: pass node_group (the GPU nodes' "
                              "inventory group) or nodes")

    def plan(self, args, task_vars):
        """The plan of the model (``cluster``, else the task's ``fabric_cluster``) and the nodes (the node group's
        variables read once, or ``nodes``)."""
        self._source(args)
        return super().plan(args, task_vars)

    def node_names(self, args, task_vars):
        """The names of the nodes the plan holds (the node group's hosts, or ``nodes``), without planning them."""
        self._source(args)
        if args["node_group"] is not None:
            return set(node_group_hosts(task_vars.get("groups") or {}, self.NODE_GROUP_VARIABLE, args["node_group"]))
        return set(args["nodes"])

    def checked_nodes(self, args, task_vars, given):
        """The node group's hosts, without planning them, where the rail_plan role's check of the play's hosts
        (roles/rail_plan/tasks/check.yml, its registered ``rail_plan_check_result``, read untemplated) planned and
        checked against the published plan every host the schedule counts (the play's hosts in the group): the job's
        first task validated them, and the schedule needs their names only (``given``: the hosts it schedules). Else
        None, and the schedule plans (a host of the group the check did not plan, no check, a failed one: bad input
        still stops the job here)."""
        if args["node_group"] is None or args["nodes"] is not None or args["cluster"] is not None:
            return None
        checked = self.task_variable(task_vars, CHECK_RESULT)
        if not isinstance(checked, dict) or checked.get("failed") or not isinstance(checked.get("checked"), list):
            return None
        names = self.node_names(args, task_vars)
        planned = set(checked["checked"])
        return names if all(h in planned for h in given if h in names) else None

    @staticmethod
    def _tally(args, task_vars):
        """The tally of the rounds judged so far (mode=judge's registered result, ``state_var``), or None."""
        registered = task_vars.get(args["state_var"])
        tally = registered.get("tally") if isinstance(registered, dict) else None
        return tally if isinstance(tally, dict) and "links" in tally else None

    def act(self, result, args, task_vars):
        given = args["hosts"] if args["hosts"] is not None else task_vars.get("ansible_play_hosts") or []
        checked = self.checked_nodes(args, task_vars, given) if args["mode"] == "schedule" else None
        plan = self.plan(args, task_vars) if args["mode"] != "judge" and checked is None else None
        if plan is not None and args["fabric"] and args["fabric"] not in plan["fabrics"]:
            raise FabricError("link_test_fabric: %r is not a fabric of the cluster (%s)"
                              % (args["fabric"], ", ".join(plan["fabrics"])))
        nodes = plan["nodes"] if plan is not None else (
            checked if checked is not None else self.node_names(args, task_vars))
        hosts = [h for h in given if h in nodes]
        if args["mode"] == "schedule":
            # The counts only: the rounds and the verdict plan again (a registered plan costs more than planning).
            return dict(result, changed=False, **link_results.schedule(nodes, hosts, args["rounds"], args["full_mesh"]))
        if args["mode"] in ("round", "judge"):
            total = link_results.schedule(nodes, hosts, args["rounds"], args["full_mesh"])["rounds"]
            if args["round"] is None or not 1 <= args["round"] <= total:
                raise FabricError("link_test: round=%r is not a round of this schedule (1 to %d: %d nodes, %s). "
                                  "Fix: loop round over range(1, <mode=schedule's rounds> + 1)." % (
                                      args["round"], total, len(hosts),
                                      "full mesh" if args["full_mesh"] else "rounds=%d" % args["rounds"]))
        if args["mode"] == "round":
            this = link_results.round_assignments(plan, hosts, args["round"], args["fabric"])
            return dict(result, changed=False, round=args["round"], assignments=this, pairs=len(this) // 2)
        if args["mode"] == "judge":
            # The round's outputs of every client, folded into the tally the job keeps; the outputs go with the
            # next round's.
            state = self._tally(args, task_vars)
            state = json.loads(json.dumps(state)) if state is not None else link_results.new_tally()
            outputs = dict((h, v.get(args["round_var"])) for h, v in
                           host_variables(task_vars, hosts, (args["round_var"],)).items())
            link_results.judge_round(state, args["round"], outputs, args["min_gbps"], args["max_usec"])
            return dict(result, changed=False, _ansible_verbose_override=True, tally=state)
        hostvars = task_vars.get("hostvars", {})
        state = self._tally(args, task_vars)
        if state is None:
            # no tally (the role before it judged each round): every client's kept rounds
            state = link_results.new_tally()
            for host in hosts:
                found = link_results.results_of(host, hostvars.get(host, {}).get(args["results_var"]))
                pair_schedule.tally(found, args["min_gbps"], args["max_usec"], state)
                link_results.measure(state, found)
                state["rounds"] = sorted(set(state["rounds"]) | set(r["round"] for r in found))
        verdict = pair_schedule.findings(state, plan)
        rdma_rails = dict((h, (hostvars.get(h, {}).get(args["rdma_var"]) or {}).get("rails")) for h in hosts)
        skipped = link_results.not_run(plan, hosts, args["rdma"], dict(
            (h, r) for h, r in rdma_rails.items() if r is not None), args["fabric"])
        for finding in verdict["broken"]:
            state_of = link_states(hostvars.get(finding["host"], {}).get(args["links_var"])).get(finding["interface"])
            if state_of is not None and state_of.upper() not in ("UP", "UNKNOWN"):
                finding["why"] = "its link is %s (operstate %s); %s" % (state_of.lower(), state_of, finding["why"])
        note = "%d nodes, %d round(s)%s; every node meets a different peer in each round, on every rail." % (
            len(hosts), len(state["rounds"]), " (full mesh)" if args["full_mesh"] else "")
        changed = False
        if args["report"]:
            text = report_markdown(plan["cluster"]["name"], verdict, note, state["measured"], skipped)
            changed = write_reports({args["report"]: text}, self._task.check_mode, "link_test")
        result.update(changed=changed, verdict=verdict, measured=state["measured"], not_run=skipped,
                      report=args["report"])
        if verdict["broken"] and args["fail_on_broken"]:
            lines = ["%s %s (%s rail %s, %s %s): %s" % (
                f["host"], f["interface"], f["fabric"], f["rail"], f["tor"], f["tor_port"], f["why"])
                for f in verdict["broken"]]
            result.update(failed=True, msg="link_test: %d broken link(s):\n%s" % (len(lines), "\n".join(lines)))
        return result
