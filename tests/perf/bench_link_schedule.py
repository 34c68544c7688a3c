"""Benchmark the link test's schedule on the controller (not a test: prints numbers).

Usage: .venv/bin/python tests/perf/bench_link_schedule.py [--repo PATH] [--nodes 1024] [--rails 8]
    [--what full,default] [--json FILE]

What the role's ``ainet.fabric.link_test`` calls compute before round 1's first host task, for ``--nodes`` nodes x
``--rails`` rails (exclusive addressing, node_map-style nodes as a play passes them), in the full mesh
(``link_test_full_mesh: true``, N-1 rounds) and by default (3 rounds):

- a checkout whose ``link_results`` streams the rounds (``round_assignments``): ``mode=schedule`` (the plan, then the
  round count) and ``mode=round`` for round 1 (the plan again, then round 1), as the role calls them; also the cost of
  one later round (the middle one) and of every round of the schedule, one at a time;
- an older checkout (``--repo``, e.g. ``git worktree add /tmp/mesh-old main``): ``mode=schedule``, which computed and
  registered every round's assignments at once (``link_results.assignments``).

Reported per case: seconds to round 1 (best of the repeats of a fresh process), the JSON bytes of what the role
registers before round 1 (the result Ansible sends from the worker to the controller and keeps in hostvars), the
tracemalloc peak of that computation, and the process's ru_maxrss (a separate run without tracemalloc, which costs
memory of its own; the interpreter and imports included: compare with the ``baseline`` line, which builds the nodes
and imports only). Each measurement runs in its own process so that ru_maxrss is its own. Last line: JSON summary.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER = {"name": "bench", "addressing": {"mode": "exclusive", "supernet": "10.0.0.0/10", "rail_prefix": 13,
                                           "node_prefix": 27}}


def importable(repo):
    """Make ``repo`` importable as ansible_collections.ainet.fabric (as tests/perf/bench_plan.py does)."""
    link = os.path.join(repo, "build", ".collections", "ansible_collections", "ainet", "fabric")
    if not os.path.islink(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(os.path.abspath(repo), link)
    sys.path.insert(0, os.path.join(repo, "build", ".collections"))


def json_bytes(value):
    """len(json.dumps(value)) without building the whole string when ``value`` is a list of rounds."""
    if isinstance(value, list):
        return 2 + sum(len(json.dumps(item)) for item in value) + 2 * max(len(value) - 1, 0)
    return len(json.dumps(value))


def child(args):
    """One measurement in this process; prints one JSON line."""
    importable(args.repo)
    from ansible_collections.ainet.fabric.plugins.module_utils.fleet import link_results
    from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan

    cluster = dict(CLUSTER, rails=args.rails)
    interfaces = ["ens%df%dnp%d" % (6 + r // 2, r % 2, r % 2) for r in range(args.rails)]
    nodes = dict(("gpu%05d" % n, {"node_id": n, "rail_interfaces": interfaces}) for n in range(1, args.nodes + 1))
    hosts = sorted(nodes)
    full_mesh = args.child == "full"
    streamed = hasattr(link_results, "round_assignments")
    if args.trace:
        tracemalloc.start()
    start = time.perf_counter()
    registered = []
    if args.child == "baseline":
        pass
    elif streamed:
        # the role: mode=schedule (plan, count), then mode=round for round 1 (plan again, round 1)
        count = link_results.schedule(rail_plan(cluster, nodes), hosts, 3, full_mesh)
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
            plan = rail_plan(cluster, nodes)
            start = time.perf_counter()
            for number in range(1, total + 1):
                link_results.round_assignments(plan, hosts, number)
            out["seconds_every_round_one_at_a_time"] = time.perf_counter() - start
            out["rounds"] = total
    print(json.dumps(out))
    return 0


def measure(args, case, trace):
    argv = [sys.executable, os.path.abspath(__file__), "--child", case, "--repo", args.repo, "--nodes",
            str(args.nodes), "--rails", str(args.rails)] + (["--trace"] if trace else [])
    run = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=ROOT, help="the collection checkout to measure")
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--rails", type=int, default=8)
    parser.add_argument("--what", default="full,default", help="cases, comma-separated: full, default")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (without tracemalloc) per case")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--child", choices=["baseline", "full", "default"], help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    results = []
    print("repo %s, %d nodes x %d rails" % (args.repo, args.nodes, args.rails))
    print("%-8s %-10s %10s %12s %12s %12s %14s" % ("case", "code", "to_round_1", "registered", "trace_peak",
                                                   "ru_maxrss", "every_round"))
    for case in ["baseline"] + [c for c in args.what.split(",") if c]:
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
