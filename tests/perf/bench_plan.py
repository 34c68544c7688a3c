"""Benchmark the rail planner in-process (not a test: prints numbers).

Usage: .venv/bin/python tests/perf/bench_plan.py [--repeat N] [--nodes 1024 4096 16384] [--json FILE]

For each addressing mode (prefixes derived to hold the largest size) it times ``rail_plan`` for 1,024 .. 16,384
nodes x 8 rails (or --nodes) and ``rail_addresses`` for one node, and reports the best and the median
of N runs, plus the growth factor per doubling (1.0 = linear per node).
"""

import argparse
import json
import statistics
import sys
import time

from checkout import importable  # noqa: E402 (this directory is on sys.path: the script's own)

importable()

import fleet  # noqa: E402

from ansible_collections.ainet.fabric.plugins.module_utils.plan import plan_lock  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import (  # noqa: E402
    rail_addresses,
    rail_plan,
)

SIZES = (1024, 4096, 16384)


def models(largest, rails=8):
    """Each addressing mode with prefixes that hold ``largest`` nodes x ``rails`` (fleet.bits_for)."""
    ids = fleet.bits_for(largest + 2)  # shared, infiniband: the gateway and the hosts in one subnet per rail
    rail_bits = fleet.bits_for(rails)
    p2p = 31 - fleet.bits_for(largest)
    return {
        "shared": {"mode": "shared", "supernet": "10.64.0.0/%d" % (32 - ids - rail_bits), "rail_prefix": 32 - ids},
        "exclusive": fleet.addressing(largest, rails),
        "p2p": {"mode": "p2p", "supernet": "10.64.0.0/%d" % (p2p - rail_bits), "rail_prefix": p2p},
        "p2p-ipv6": {"mode": "p2p", "supernet": "fd00:64::/48", "rail_prefix": 64},
        "infiniband": {"mode": "infiniband", "supernet": "10.64.0.0/%d" % (32 - ids - rail_bits),
                       "rail_prefix": 32 - ids},
    }


def two_fabrics(largest):
    """Seed 001's DGX-style node: 8 compute rails and 2 storage rails, each fabric its own supernets."""
    ids = fleet.bits_for(largest + 2)
    return {
        "name": "bench",
        "fabrics": {
            "compute": {"rails": 8, "addressing": fleet.addressing(largest, 8)},
            "storage": {"rails": 2, "mtu": 4200,
                        "addressing": {"mode": "shared", "supernet": "172.16.0.0/%d" % (31 - ids),
                                       "rail_prefix": 32 - ids},
                        "qos": {"preset": "spiderpool"}},
        },
    }


def timed(func, repeat):
    runs = []
    for _run in range(repeat):
        start = time.perf_counter()
        func()
        runs.append(time.perf_counter() - start)
    return min(runs), statistics.median(runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--nodes", type=int, nargs="+", default=list(SIZES), help="fleet sizes (addressing fits the largest)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    sizes = sorted(args.nodes)
    model_list, both = models(sizes[-1]), two_fabrics(sizes[-1])
    results = []
    print("%-11s %7s %10s %10s %8s" % ("mode", "nodes", "best_s", "median_s", "growth"))
    for name, addressing in model_list.items():
        cluster = {"name": "bench", "rails": 8, "addressing": addressing}
        previous = None
        for size in sizes:
            nodes = {"gpu%05d" % i: i for i in range(1, size + 1)}
            best, median = timed(lambda: rail_plan(cluster, nodes), args.repeat)
            growth = "" if previous is None else "%.2f" % ((best / previous[1]) / (size / previous[0]))
            previous = (size, best)
            print("%-11s %7d %10.4f %10.4f %8s" % (name, size, best, median, growth))
            results.append({"mode": name, "nodes": size, "rails": 8, "best_s": best, "median_s": median})
        best, median = timed(lambda: rail_addresses(cluster, 4096), 200)  # noqa: B023
        print("%-11s %7s %10.6f %10.6f   (rail_addresses, one node)" % (name, "1", best, median))
        results.append({"mode": name, "nodes": 1, "rails": 8, "best_s": best, "median_s": median,
                        "what": "rail_addresses"})
    previous = None
    for size in sizes:
        nodes = {"gpu%05d" % i: i for i in range(1, size + 1)}
        best, median = timed(lambda: rail_plan(both, nodes), args.repeat)  # noqa: B023
        growth = "" if previous is None else "%.2f" % ((best / previous[1]) / (size / previous[0]))
        previous = (size, best)
        print("%-11s %7d %10.4f %10.4f %8s" % ("8+2 fabrics", size, best, median, growth))
        results.append({"mode": "compute exclusive + storage shared", "nodes": size, "rails": 10, "best_s": best,
                        "median_s": median})
    # The plan lock: made and written by the plan job, read and checked by every host job.
    for size in sizes:
        nodes = {"gpu%05d" % i: i for i in range(1, size + 1)}
        plan = rail_plan(both, nodes)
        best, median = timed(lambda: plan_lock.lock_dump(plan_lock.plan_lock(plan)), args.repeat)  # noqa: B023
        text = plan_lock.lock_dump(plan_lock.plan_lock(plan))
        print("%-11s %7d %10.4f %10.4f   (lock made and dumped, %d kB)" % ("lock", size, best, median, len(text) // 1024))
        results.append({"what": "lock dump", "nodes": size, "rails": 10, "best_s": best, "median_s": median,
                        "bytes": len(text)})
        best, median = timed(lambda: plan_lock.check_plan(plan_lock.lock_load(text, "f"), plan, "f"),  # noqa: B023
                             args.repeat)
        print("%-11s %7d %10.4f %10.4f   (lock loaded, whole plan checked)" % ("lock", size, best, median))
        results.append({"what": "lock check", "nodes": size, "rails": 10, "best_s": best, "median_s": median})
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
