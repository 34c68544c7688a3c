"""Benchmark the schedulers' topology (not a test: prints numbers).

Usage: .venv/bin/python tests/perf/bench_topology.py [--nodes 16384] [--rails 8] [--group 32] [--blocks 16]
       [--repeat 3] [--crds DIR]

A fleet of --nodes nodes x --rails rails in exclusive addressing, one ToR per rail per rail group of --group nodes
(16,384 nodes: 4,096 ToRs), the rail groups dealt into --blocks spine blocks. Timed, each the median of --repeat runs
(wall and CPU): the plan (for scale, not this feature), the rail groups, the cabling agreement on an all-ok cabling
result, every output (Slurm tree, block and topology.yaml, node labels, Kueue, Volcano) with its text, and with
--crds (or AINET_K8S_CRD_DIR) the CRD schema check of the Kueue and Volcano objects.
"""

import argparse
import os
import statistics
import sys
import time

from checkout import importable  # noqa: E402 (this directory is on sys.path: the script's own)

importable()

from ansible_collections.ainet.fabric.plugins.module_utils.cabling import rail_group_check  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_validate, topology  # noqa: E402


def model(nodes, rails, group, blocks):
    groups = (nodes + group - 1) // group
    per_block = (groups + blocks - 1) // blocks
    tors = []
    for g in range(groups):
        first, last = g * group + 1, min(nodes, (g + 1) * group)
        for rail in range(1, rails + 1):
            tors.append({"name": "su%d-rail%d" % (g + 1, rail), "rails": [rail], "nodes": "%d-%d" % (first, last),
                         "port_template": "Ethernet{local}", "spine_block": "sb%d" % (g // per_block + 1)})
    return {"name": "bench", "rails": rails, "tors": tors,
            "addressing": {"mode": "exclusive", "supernet": "10.0.0.0/8", "rail_prefix": 11, "node_prefix": 29}}


def timed(repeat, func):
    walls, cpus, result = [], [], None
    for _round in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = func()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return result, statistics.median(walls), statistics.median(cpus)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=16384)
    parser.add_argument("--rails", type=int, default=8)
    parser.add_argument("--group", type=int, default=32)
    parser.add_argument("--blocks", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--crds", default=os.environ.get("AINET_K8S_CRD_DIR"))
    args = parser.parse_args(argv)
    cluster = model(args.nodes, args.rails, args.group, args.blocks)
    nodes = dict(("gpu%05d" % i, i) for i in range(1, args.nodes + 1))
    rows = []
    plan, wall, cpu = timed(1, lambda: rail_plan(cluster, nodes))
    rows.append(("plan (not this feature)", wall, cpu))
    topos, wall, cpu = timed(args.repeat, lambda: topology.topologies(plan))
    rows.append(("rail groups", wall, cpu))
    cabling = {"ok": [{"host": h, "fabric": e["fabric"], "rail": e["rail"], "tor": e["tor"], "port": e["tor_port"],
                       "port_verified": True} for h, n in plan["nodes"].items() for e in n["rails"]], "findings": []}
    agreement, wall, cpu = timed(args.repeat, lambda: rail_group_check.agreement(topos, cabling))
    rows.append(("cabling agreement", wall, cpu))
    result, wall, cpu = timed(args.repeat, lambda: topology.render(plan, {}, agreement, topos))
    rows.append(("every output, as text", wall, cpu))
    if args.crds:
        schemas = k8s_validate.load_crds(args.crds)
        objects = result["objects"]["kueue"] + result["objects"]["volcano"]
        (violations, _unchecked), wall, cpu = timed(1, lambda: k8s_validate.validate(objects, schemas))
        rows.append(("CRD schema check (%d objects, %d violations)" % (len(objects), len(violations)), wall, cpu))
    groups = sum(len(t["groups"]) for t in topos.values())
    print("%d nodes x %d rails, %d ToRs, %d rail groups, %d files (%d bytes)" % (
        args.nodes, args.rails, len(plan["tors"]), groups, len(result["files"]),
        sum(len(t) for t in result["files"].values())))
    for what, wall, cpu in rows:
        print("  %-48s %7.3f s wall %7.3f s cpu" % (what, wall, cpu))
    return 0


if __name__ == "__main__":
    sys.exit(main())
