# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.lossless_test``: whether the test may run and how many steps it has, one
step's incasts with every node's perftest command lines, the step's runs judged from the counters read before and
after, and at the end the report.

The logic lives in ``module_utils/fleet/incast_schedule.py`` and ``incast_results.py``; this plugin reads the
hosts' registered reads and writes the files."""

from __future__ import annotations

import json
import os

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.common.linux_names import rdma_device_problem
from ansible_collections.ainet.fabric.plugins.module_utils.fleet import incast_results, incast_schedule
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_report import REPORT_HTML, REPORT_MD, load_report
from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms
from ansible_collections.ainet.fabric.plugins.plugin_utils.one_line import fail
from ansible_collections.ainet.fabric.plugins.plugin_utils.plan_action import PlanAction
from ansible_collections.ainet.fabric.plugins.plugin_utils.reports import write_reports

REPORT_JSON = "lossless.json"
FAIL_CHOICES = ["dropped", "lost", "pause_storm", "ecn_inactive", "inconclusive"]
MAX_SETTLE = 600

ARGUMENT_SPEC = dict(
    mode=dict(type="str", choices=["schedule", "step", "judge", "report"], required=True),
    cluster=dict(type="dict", required=True),
    nodes=dict(type="dict"),
    node_group=dict(type="str"),
    hosts=dict(type="list", elements="str", required=True),
    fabric=dict(type="str"),
    rounds=dict(type="int", default=0),
    max_senders=dict(type="int", default=incast_schedule.DEFAULT_MAX_SENDERS),
    seconds=dict(type="int", default=10),
    qps=dict(type="int", default=4),
    message_size=dict(type="int", default=65536),
    rate_gbps=dict(type="float", default=0.0),
    tx_depth=dict(type="int", default=0),
    qp_timeout=dict(type="int", default=0),
    server_timeout=dict(type="int", default=600),
    tor_settle=dict(type="str", default="auto"),
    agreement=dict(type="list", elements="raw", default=[]),
    step=dict(type="int"),
    rdma_var=dict(type="str", default="__lossless_test_rdma"),
    incasts=dict(type="list", elements="dict", default=[]),
    before_var=dict(type="str", default="__lossless_test_before"),
    after_var=dict(type="str", default="__lossless_test_after"),
    tor_before=dict(type="list", elements="raw", default=[]),
    tor_after=dict(type="list", elements="raw", default=[]),
    max_pause_ratio=dict(type="float", default=0.5),
    max_storm_events=dict(type="int", default=0),
    runs=dict(type="list", elements="dict", default=[]),
    report_dir=dict(type="path"),
    generated=dict(type="str", default=""),
    fail_on=dict(type="list", elements="str", default=["dropped", "lost", "pause_storm"]),
)


def rdma_rails(registered):
    """``{interface: {"rdma_device", "port", "gid_index"}}`` from a registered ``rdma_facts`` result."""
    out = {}
    for rail in (registered or {}).get("rails") or ():
        if isinstance(rail, dict) and rail.get("netdev"):
            out[rail["netdev"]] = rail
    return out


def perftest_argv(device, args, tclass, port, peer=None, timeout=None):
    """One ``ib_write_bw`` command line: the rail's RDMA device, port and RoCE v2 GID index (``-x``), the class's
    traffic class in the GRH (``--tclass``; perftest's ``-T`` is for rdma_cm QPs only, src/perftest_parameters.c),
    the run's length, QPs and message size (symmetric: both ends), and on the sender its send queue depth (``-t``,
    perftest's 128 unless given) and local ACK timeout (``-u``, 4.096 us x 2^u, perftest's 14 unless given), the
    rate bound (perftest's software rate limiter) and the receiver's address. A device name outside
    :func:`linux_names.rdma_device_problem`'s rule is refused (FabricError): the role stops these processes by a
    pattern made from this argv."""
    problem = rdma_device_problem(device.get("rdma_device"), "rdma_device")
    if problem:
        raise FabricError("lossless_test: %s" % problem)
    argv = ["timeout", str(timeout), "ib_write_bw", "-d", device["rdma_device"], "-i", str(device.get("port") or 1),
            "-x", str(device["gid_index"]), "-p", str(port), "-D", str(args["seconds"]), "-q", str(args["qps"]),
            "-s", str(args["message_size"]), "--tclass", str(tclass), "-F", "--report_gbits"]
    if peer is not None and args["tx_depth"] > 0:
        argv += ["-t", str(args["tx_depth"])]
    if peer is not None and args["qp_timeout"] > 0:
        argv += ["-u", str(args["qp_timeout"])]
    if peer is not None and args["rate_gbps"] > 0:
        argv += ["--rate_limit", "%g" % args["rate_gbps"], "--rate_limit_type", "SW", "--rate_units", "g"]
    return argv


class ActionModule(PlanAction):
    ARGUMENT_SPEC = ARGUMENT_SPEC
    ARGUMENT_RULES = dict(mutually_exclusive=[["nodes", "node_group"]], required_one_of=[["nodes", "node_group"]])
    NODE_GROUP_VARIABLE = "lossless_test_node_group"
    REFUSED = (FabricError, ValueError)

    def act(self, result, args, task_vars):
        hostvars = task_vars.get("hostvars", {})
        plan = self.plan(args, task_vars)
        profiles = incast_results.lossless_fabrics(plan, args["fabric"])
        bounds = incast_results.check_bounds(args["seconds"], args["qps"], args["rate_gbps"], args["max_senders"],
                                             args["message_size"], args["tx_depth"], args["qp_timeout"])
        settle = str(args["tor_settle"]).strip()
        if settle != "auto" and not (settle.isdigit() and int(settle) <= MAX_SETTLE):
            bounds.append("lossless_test_tor_settle_seconds: %r is neither auto nor a number of seconds from 0 to %d. "
                          "Fix: auto, or your NOS's counter polling interval in seconds"
                          % (args["tor_settle"], MAX_SETTLE))
        bad = [f for f in args["fail_on"] if f not in FAIL_CHOICES]
        if bad:
            bounds.append("lossless_test_fail_on: %s is not a verdict (%s)" % (", ".join(bad),
                                                                               ", ".join(FAIL_CHOICES)))
        if bounds:
            raise incast_results.RefusedError(bounds[0])
        classes = incast_results.classes(profiles)
        fabric = args["fabric"]
        if fabric is None and len(profiles) == 1:
            fabric = next(iter(profiles))
        hosts = [h for h in args["hosts"] if h in plan["nodes"]]
        if args["mode"] == "schedule":
            return dict(result, changed=False, **self._schedule(plan, profiles, classes, fabric, args))
        if args["mode"] == "step":
            return dict(result, changed=False, **self._step(plan, profiles, classes, fabric, hosts, args, hostvars))
        if args["mode"] == "judge":
            return dict(result, changed=False, **self._judge(plan, profiles, args, hostvars))
        return self._report(result, plan, args)

    # ------------------------------------------------------------------------------------------------ schedule

    @staticmethod
    def _schedule(plan, profiles, classes, fabric, args):
        steps, per_class = incast_schedule.step_count(plan, classes, args["rounds"], fabric)
        refused = incast_results.refused_rails(args["agreement"])
        groups = incast_schedule.groups(plan, fabric)
        k = max([incast_schedule.senders_per_incast(len(g["members"]), args["max_senders"]) for g in groups] or [0])
        tclasses = {}
        for name, profile in sorted(profiles.items()):
            for prio in classes:
                if prio in profile["pfc_priorities"]:
                    tclasses["%s %d" % (name, prio)] = incast_results.traffic_class(profile, prio)
        return {"steps": steps, "rounds_per_class": per_class, "classes": classes, "groups": len(groups),
                "senders_per_incast": k, "traffic_classes": tclasses,
                "refused": [refused[key] for key in sorted(refused)],
                "load_seconds": steps * args["seconds"]}

    # ------------------------------------------------------------------------------------------------ step

    def _step(self, plan, profiles, classes, fabric, hosts, args, hostvars):
        steps = incast_schedule.step_count(plan, classes, args["rounds"], fabric)[0]
        if args["step"] is None or not 1 <= args["step"] <= steps:
            raise FabricError("lossless_test: step=%r is not a step of this test (1 to %d). Fix: loop step over "
                              "range(1, <mode=schedule's steps> + 1) with the same options" % (args["step"], steps))
        this = incast_schedule.step_assignments(plan, hosts, args["step"], classes, args["rounds"],
                                                args["max_senders"], fabric)
        prio = this["priority"]
        refused = incast_results.refused_rails(args["agreement"])
        devices = dict((h, rdma_rails((hostvars.get(h) or {}).get(args["rdma_var"]))) for h in hosts)
        per_host = {}
        incasts = []
        for item in this["incasts"]:
            item = dict(item, priority=prio)  # its own round: a ToR's rails take turns (incast_schedule)
            profile = profiles.get(item["fabric"])
            tclass = incast_results.traffic_class(profile, prio) if profile else None
            if item["skipped"] is None:
                if profile is None or prio not in profile["pfc_priorities"]:
                    item["skipped"] = "fabric %s has no lossless class on priority %d" % (item["fabric"], prio)
                elif (item["fabric"], item["rail"]) in refused:
                    item["skipped"] = refused[(item["fabric"], item["rail"])]
                elif tclass is None:
                    item["skipped"] = "no DSCP of the profile lands in priority %d" % prio
            mine = devices.get(item["receiver"], {}).get(item["interface"]) or {}
            if item["skipped"] is None and (mine.get("rdma_device") is None or mine.get("gid_index") is None):
                item["skipped"] = ("%s %s has no RDMA device or no RoCE v2 GID for %s (rdma_facts)"
                                   % (item["receiver"], item["interface"], item["ip"]))
            sends = []
            if item["skipped"] is None:
                receive = next(r for r in this["hosts"][item["receiver"]]["receive"]
                               if r["fabric"] == item["fabric"] and r["rail"] == item["rail"])
                for server in receive["servers"]:
                    sender = server["sender"]
                    entry = next(s for s in this["hosts"][sender]["send"]
                                 if s["fabric"] == item["fabric"] and s["rail"] == item["rail"]
                                 and s["receiver"] == item["receiver"])
                    theirs = devices.get(sender, {}).get(entry["interface"]) or {}
                    if theirs.get("rdma_device") is None or theirs.get("gid_index") is None:
                        item["missing"] = item["missing"] + [sender]
                        continue
                    sends.append((sender, entry, theirs, server["port"]))
                item["senders"] = [s[0] for s in sends]
                item["sender_interfaces"] = dict((s[0], s[1]["interface"]) for s in sends)
                item["sender_ports"] = dict((s[0], (item.get("sender_ports") or {}).get(s[0])) for s in sends)
                if not sends:
                    item["skipped"] = "none of its senders has an RDMA device with a RoCE v2 GID on this rail"
            incasts.append(item)
            if item["skipped"] is not None:
                continue
            label = "%s rail %d priority %d" % (item["fabric"], item["rail"], prio)
            me = per_host.setdefault(item["receiver"], {"servers": [], "clients": [], "links": {}})
            me["links"][item["interface"]] = mine
            for sender, entry, theirs, port in sends:
                me["servers"].append({"label": "%s <- %s" % (label, sender), "port": port,
                                      "argv": perftest_argv(mine, args, tclass, port, timeout=args["server_timeout"])
                                      + entry["perftest_args"]})
                them = per_host.setdefault(sender, {"servers": [], "clients": [], "links": {}})
                them["links"][entry["interface"]] = theirs
                them["clients"].append({"label": "%s -> %s" % (label, item["receiver"]), "port": port,
                                        "argv": perftest_argv(theirs, args, tclass, port, peer=entry["receiver_ip"],
                                                              timeout=args["seconds"] + 60)
                                        + entry["perftest_args"] + [entry["receiver_ip"]]})
        for host, what in per_host.items():
            what["links"] = [{"interface": name, "rdma_device": d.get("rdma_device"), "rdma_port": d.get("port")}
                             for name, d in sorted(what["links"].items())]
        tor_ports = {}
        for item in incasts:
            if item["skipped"] is None:
                # the receiver's port (its drops) and the senders' (the pauses the switch sends them, their drops)
                tor_ports.setdefault(item["tor"], set()).update(
                    [item["tor_port"]] + [p for p in (item.get("sender_ports") or {}).values() if p])
        return {"step": this["step"], "priority": prio, "round": this["round"], "steps": steps,
                "hosts": per_host, "incasts": incasts, "tors": sorted(tor_ports),
                "tor_ports": dict((tor, sorted(ports)) for tor, ports in sorted(tor_ports.items())),
                # seconds to wait after the load before the ToRs' read: the slowest NOS's counter refresh
                # auto: the role waits as long as the ToRs' configured poll intervals instead, where read
                "tor_settle_auto": str(args["tor_settle"]).strip() == "auto",
                "tor_settle": 0 if not tor_ports else int(args["tor_settle"]) if args["tor_settle"] != "auto" else max(
                    platforms.counter_settle((plan["tors"].get(t) or {}).get("platform")) for t in tor_ports),
                "loaded": sum(1 for i in incasts if i["skipped"] is None)}

    # ------------------------------------------------------------------------------------------------ judge

    @staticmethod
    def _tor_reads(results):
        out = {}
        for item in results or ():
            if isinstance(item, dict) and isinstance(item.get("counters"), dict) and not item.get("failed"):
                out[item.get("tor") or item.get("item")] = item["counters"]
        return out

    @staticmethod
    def _tor_errors(*results):
        """``{tor: why}`` of the ToRs whose counter read was tried and failed, before or after the load."""
        out = {}
        for item in (i for r in results for i in (r or ())):
            if isinstance(item, dict) and (item.get("read_error") or item.get("failed")):
                why = item.get("read_error") or item.get("msg") or "the read failed"
                out.setdefault(item.get("tor") or item.get("item"), str(why))
        return out

    def _judge(self, plan, profiles, args, hostvars):
        tor_b, tor_a = self._tor_reads(args["tor_before"]), self._tor_reads(args["tor_after"])
        errors = self._tor_errors(args["tor_before"], args["tor_after"])
        stages = platforms.drop_stages()
        runs = []
        for item in args["incasts"]:
            rvars = hostvars.get(item["receiver"]) or {}
            senders = dict((s, {"interface": interface,
                                "before": (hostvars.get(s) or {}).get(args["before_var"]),
                                "after": (hostvars.get(s) or {}).get(args["after_var"])})
                           for s, interface in (item.get("sender_interfaces") or {}).items())
            runs.append(incast_results.judge(
                item, item["priority"], item["round"], args["seconds"], profiles.get(item["fabric"]),
                rvars.get(args["before_var"]), rvars.get(args["after_var"]), tor_b.get(item["tor"]),
                tor_a.get(item["tor"]), args["max_pause_ratio"], args["max_storm_events"], senders=senders,
                tor_error=errors.get(item["tor"]), drop_stages=stages))
        return {"runs": runs, "findings": [incast_results.finding(r) for r in runs]}

    # ------------------------------------------------------------------------------------------------ report

    def _report(self, result, plan, args):
        runs = args["runs"]
        counts = incast_results.summary(runs)
        files = {}
        out = args["report_dir"]
        if out:
            files[os.path.join(out, REPORT_JSON)] = json.dumps(
                {"cluster": plan["summary"]["cluster"], "generated": args["generated"], "runs": runs},
                indent=1, sort_keys=True) + "\n"
            rendered = load_report(runs, cluster=plan["summary"]["cluster"], generated=args["generated"] or None)
            files[os.path.join(out, REPORT_MD)] = rendered["markdown"]
            files[os.path.join(out, REPORT_HTML)] = rendered["html"]
        changed = write_reports(files, self._task.check_mode, "lossless_test") if files else False
        findings = [incast_results.finding(r) for r in runs
                    if r["verdict"] is not None and r["verdict"]["verdict"] in args["fail_on"]]
        result.update(changed=changed, summary=counts, findings=findings, report_dir=out,
                      files=sorted(files))
        if findings:
            return fail(self._task, result, "lossless_test: %d link(s) and class(es) with %s:\n%s" % (
                len(findings), " or ".join(args["fail_on"]), "\n".join(findings)))
        return result
