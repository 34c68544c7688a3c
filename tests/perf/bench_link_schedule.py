"""Benchmark the link test's schedule on the controller (not a test: prints numbers).

Usage: .venv/bin/python tests/perf/bench_link_schedule.py [--repo PATH] [--nodes 1024] [--rails 8]
    [--what full,default] [--json FILE]

What the role's ``ainet.fabric.link_test`` calls compute before round 1's first host task, for ``--nodes`` nodes x
``--rails`` rails (exclusive addressing, node_map-style nodes as a play passes them), in the full mesh
(``link_test_full_mesh: true``, N-1 rounds) and by default (3 rounds):

- a checkout whose ``link_results`` streams the rounds (``round_assignments``): ``mode=schedule`` (the plan, then the
  round count) and ``mode=round`` for round 1, as the role calls them - the role now (``link_results.schedule`` of the
  plan's nodes) plans at the schedule, which registers the count only, and again at each round start; the role
  before it (``judge_round``, ``schedule`` of the plan) planned once and registered the plan with the count, for
  round 1 to read; before that, the plan again at each round start; also the cost of one later round (the middle
  one) and of every round of the schedule, one at a time (with a plan per round where the role plans per round);
- an older checkout (``--repo``, e.g. ``git worktree add /tmp/mesh-old main``): ``mode=schedule``, which computed and
  registered every round's assignments at once (``link_results.assignments``).

- what the job keeps across the rounds (``--what kept``, the full mesh): every client's outputs of a round, as the
  command module registers them per rail (the recorded ping outputs of tests/unit/plugins/module_utils/data/fleet/,
  with the keys ``ansible.builtin.command`` returns), for ``--kept-rounds`` rounds of the full mesh. The role before
  (a checkout without ``link_results.judge_round``) appended each round's outputs to a per-client list kept to the
  end; now the controller judges each round as it ends into a tally and each client keeps one round. Reported: the
  JSON bytes kept after the sampled rounds and, for the old way, extrapolated to every round of the full mesh; the
  tracemalloc peak of making and judging (or keeping) the sampled rounds; and the seconds per round of judging.

Reported per case: seconds to round 1 (best of the repeats of a fresh process), the JSON bytes of what the role
registers before round 1 (the result Ansible sends from the worker to the controller and keeps in hostvars), the
tracemalloc peak of that computation, and the process's ru_maxrss (a separate run without tracemalloc, which costs
memory of its own; the interpreter and imports included: compare with the ``baseline`` line, which builds the nodes
and imports only). Each measurement runs in its own process so that ru_maxrss is its own. Last line: JSON summary.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc

from checkout import ROOT, importable  # noqa: E402 (this directory is on sys.path: the script's own)

import fleet  # noqa: E402  (the addressing derived from the fleet size)

CLUSTER = {"name": "bench"}


def json_bytes(value):
    """len(json.dumps(value)) without building the whole string when ``value`` is a list of rounds."""
    if isinstance(value, list):
        return 2 + sum(len(json.dumps(item)) for item in value) + 2 * max(len(value) - 1, 0)
    return len(json.dumps(value))


def of_nodes(link_results):
    """Whether the checkout's ``link_results.schedule`` takes the plan's nodes (now) rather than the plan (before)."""
    return next(iter(inspect.signature(link_results.schedule).parameters)) == "nodes"


def schedule(link_results, plan, hosts, count, full_mesh):
    """``link_results.schedule`` of the checkout, of ``plan``."""
    return link_results.schedule(plan["nodes"] if of_nodes(link_results) else plan, hosts, count, full_mesh)


def command_result(argv, stdout, rc, item):
    """One item of a looped ``ansible.builtin.command`` task's registered ``results``, with the keys the module
    returns (ansible-core 2.19: cmd, stdout, stderr, rc, start, end, delta, msg, and the lines lists) and the loop's."""
    return {"changed": False, "stdout": stdout, "stderr": "", "rc": rc, "cmd": argv,
            "start": "2026-11-27 10:00:00.000001", "end": "2026-11-27 10:00:00.611112", "delta": "0:00:00.611111",
            "msg": "" if rc == 0 else "non-zero return code", "stdout_lines": stdout.splitlines(), "stderr_lines": [],
            "invocation": {"module_args": {"argv": argv, "_raw_params": None, "chdir": None, "creates": None,
                                           "removes": None, "stdin": None, "stdin_add_newline": True,
                                           "strip_empty_ends": True, "expand_argument_vars": True, "executable": None,
                                           "_uses_shell": False}},
            "failed": False, "item": item, "ansible_loop_var": "item", "failed_when_result": False}


def kept(args, link_results, plan, hosts):
    """The kept-results case: ``args.kept_rounds`` rounds of the full mesh, made and kept (old) or judged (new)."""
    data = os.path.join(ROOT, "tests", "unit", "plugins", "module_utils", "data", "fleet")
    with open(os.path.join(data, "ping-jumbo-ok.txt")) as handle:
        ping = handle.read()
    judged = hasattr(link_results, "judge_round")
    kept_old = {}  # the role before: per client, every round's outputs
    state = link_results.new_tally() if judged else None
    round_bytes, judge_seconds = [], []
    total = schedule(link_results, plan, hosts, 3, True)["rounds"]
    for number in range(1, min(args.kept_rounds, total) + 1):
        outputs = {}
        for host, me in link_results.round_assignments(plan, hosts, number).items():
            if me["role"] != "client":
                continue
            small = [command_result(["ping", "-c", "3", "-s", "56", "-I", r["ip"], r["peer_ip"]], ping, 0, r)
                     for r in me["rails"]]
            jumbo = [command_result(["ping", "-c", "3", "-M", "do", "-s", str(r["ping_size"]), "-I", r["ip"],
                                     r["peer_ip"]], ping, 0, r) for r in me["rails"]]
            outputs[host] = {"round": number, "peer": me["peer"], "icmp_small": small, "icmp": jumbo, "rdma_bw": [],
                             "rdma_cm": []}
        round_bytes.append(sum(len(json.dumps(v)) for v in outputs.values()))
        if judged:
            start = time.perf_counter()
            link_results.judge_round(state, number, outputs)
            judge_seconds.append(time.perf_counter() - start)
        else:
            for host, entry in outputs.items():
                kept_old.setdefault(host, []).append(entry)
        del outputs  # a host's next round replaces this one (set_fact), as in round.yml
    sampled = len(round_bytes)
    if judged:
        kept_bytes = len(json.dumps(state))
        every = kept_bytes + max(round_bytes)  # the tally grows with failures only; one round's outputs at a time
    else:
        kept_bytes = sum(len(json.dumps(v)) for v in kept_old.values())
        every = kept_bytes * total / float(sampled)
    return {"kept_rounds": sampled, "rounds": total, "kept_json_mb": kept_bytes / 2 ** 20,
            "one_round_outputs_mb": max(round_bytes) / 2 ** 20, "kept_every_round_mb": every / 2 ** 20,
            "judge_seconds_per_round": (sum(judge_seconds) / len(judge_seconds)) if judge_seconds else None,
            "code": "judged per round" if judged else "kept to the end"}


def child(args):
    """One measurement in this process; prints one JSON line."""
    importable(args.repo)
    from ansible_collections.ainet.fabric.plugins.module_utils.fleet import link_results
    from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan

    cluster = dict(CLUSTER, rails=args.rails, addressing=fleet.addressing(args.nodes, args.rails))
    interfaces = ["ens%df%dnp%d" % (6 + r // 2, r % 2, r % 2) for r in range(args.rails)]
    nodes = dict(("gpu%05d" % n, {"node_id": n, "rail_interfaces": interfaces}) for n in range(1, args.nodes + 1))
    hosts = sorted(nodes)
    full_mesh = args.child == "full"
    streamed = hasattr(link_results, "round_assignments")
    judged = hasattr(link_results, "judge_round")  # the role judges each round
    planned_once = judged and not of_nodes(link_results)  # ... and registered the plan with the count
    if args.trace:
        tracemalloc.start()
    start = time.perf_counter()
    registered = []
    if args.child == "baseline":
        pass
    elif args.child == "kept":
        plan = rail_plan(cluster, nodes)
        if args.trace:
            tracemalloc.reset_peak()
        out = kept(args, link_results, plan, hosts)
        peak = tracemalloc.get_traced_memory()[1] if args.trace else None
        out.update(case="kept", nodes=args.nodes, rails=args.rails, seconds=time.perf_counter() - start,
                   tracemalloc_peak_mb=peak and peak / 2 ** 20,
                   ru_maxrss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)
        print(json.dumps(out))
        return 0
    elif planned_once:
        # the role before: mode=schedule (the plan, once; registered with the count), then mode=round for round 1 from it
        plan = rail_plan(cluster, nodes)
        count = schedule(link_results, plan, hosts, 3, full_mesh)
        first = link_results.round_assignments(plan, hosts, 1)
        registered = [dict(count, plan=plan), {"round": 1, "assignments": first}]
    elif streamed:
        # mode=schedule (plan, count), then mode=round for round 1 (plan again, round 1): the role now, and before the
        # plan was registered once
        count = schedule(link_results, rail_plan(cluster, nodes), hosts, 3, full_mesh)
        first = link_results.round_assignments(rail_plan(cluster, nodes), hosts, 1)
        registered = [count, {"round": 1, "assignments": first}]
    else:
        # the role before: mode=schedule registered every round at once
        registered = [link_results.assignments(rail_plan(cluster, nodes), hosts, 3, full_mesh)]
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] if args.trace else None
    out = {"case": args.child, "code": "streamed" if streamed else "all rounds", "nodes": args.nodes,
           "rails": args.rails, "seconds_to_round_1": seconds, "tracemalloc_peak_mb": peak and peak / 2 ** 20,
           "ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}
    if args.trace:
        tracemalloc.stop()
        out["registered_json_mb"] = sum(json_bytes(item) for item in registered) / 2 ** 20
        if streamed and args.child != "baseline":
            total = count["rounds"]
            middle = max(total // 2, 1)
            start = time.perf_counter()
            link_results.round_assignments(rail_plan(cluster, nodes), hosts, middle)
            out["seconds_one_later_round"] = time.perf_counter() - start
            start = time.perf_counter()
            plan = rail_plan(cluster, nodes)
            plan_seconds = time.perf_counter() - start
            start = time.perf_counter()
            for number in range(1, total + 1):
                link_results.round_assignments(plan, hosts, number)
            # the role plans again at every round start (mode=round), except while it registered the plan once
            out["seconds_every_round_one_at_a_time"] = time.perf_counter() - start + plan_seconds * (
                1 if planned_once else total)
            out["rounds"] = total
    print(json.dumps(out))
    return 0


def measure(args, case, trace):
    argv = [sys.executable, os.path.abspath(__file__), "--child", case, "--repo", args.repo, "--nodes",
            str(args.nodes), "--rails", str(args.rails), "--kept-rounds", str(args.kept_rounds)] + \
        (["--trace"] if trace else [])
    run = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=ROOT, help="the collection checkout to measure")
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--rails", type=int, default=8)
    parser.add_argument("--what", default="full,default,kept", help="cases, comma-separated: full, default, kept")
    parser.add_argument("--kept-rounds", type=int, default=8, help="rounds of the full mesh the kept case makes")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (without tracemalloc) per case")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--child", choices=["baseline", "full", "default", "kept"], help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    results = []
    print("repo %s, %d nodes x %d rails" % (args.repo, args.nodes, args.rails))
    print("%-8s %-10s %10s %12s %12s %12s %14s" % ("case", "code", "to_round_1", "registered", "trace_peak",
                                                   "ru_maxrss", "every_round"))
    for case in ["baseline"] + [c for c in args.what.split(",") if c]:
        if case == "kept":
            out = measure(args, case, True)
            out["ru_maxrss_mb"] = measure(args, case, False)["ru_maxrss_mb"]
            results.append(out)
            print("kept     %-16s %d of %d rounds: kept %.1f MB (%.2f MB of outputs per round), every round %.1f MB; "
                  "trace_peak %.1f MB, ru_maxrss %.1f MB%s" % (
                      out["code"], out["kept_rounds"], out["rounds"], out["kept_json_mb"], out["one_round_outputs_mb"],
                      out["kept_every_round_mb"], out["tracemalloc_peak_mb"], out["ru_maxrss_mb"],
                      "" if out["judge_seconds_per_round"] is None else
                      "; judging %.3f s per round" % out["judge_seconds_per_round"]))
            continue
        runs = [measure(args, case, False) for _run in range(args.repeat if case != "baseline" else 1)]
        traced = measure(args, case, True)
        out = dict(traced, seconds_to_round_1=min(r["seconds_to_round_1"] for r in runs),
                   ru_maxrss_mb=max(r["ru_maxrss_mb"] for r in runs))
        results.append(out)
        every = out.get("seconds_every_round_one_at_a_time")
        print("%-8s %-10s %9.3fs %9.1f MB %9.1f MB %9.1f MB %14s" % (
            case, out["code"], out["seconds_to_round_1"], out["registered_json_mb"], out["tracemalloc_peak_mb"],
            out["ru_maxrss_mb"], "" if every is None else "%.1fs/%d" % (every, out["rounds"])))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
