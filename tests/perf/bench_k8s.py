"""Benchmark the Kubernetes objects in-process (not a test: prints numbers).

Usage: .venv/bin/python tests/perf/bench_k8s.py [--nodes 1024] [--rails 8] [--repeat 5] [--crds DIR]

1,024 nodes x 8 rails in exclusive addressing, cni sriov, Spiderpool IPAM: a SpiderIPPool per node and rail
(8,192), a SpiderMultusConfig per rail, the device plugin's ConfigMap. Times the plan, the render, the check
against the plan and, with --crds (or AINET_K8S_CRD_DIR), the CRD schema check; the median of --repeat runs.
"""

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "build", ".collections"))

from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_objects, k8s_validate  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--rails", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--crds", default=os.environ.get("AINET_K8S_CRD_DIR"))
    args = parser.parse_args()
    cluster = {"name": "bench", "rails": args.rails, "cni": "sriov", "sriov": {"vfs": 8},
               "addressing": {"mode": "exclusive", "supernet": "10.128.0.0/10", "rail_prefix": 13, "node_prefix": 24}}
    nodes = dict(("gpu%04d" % n, {"node_id": n, "rail_interfaces": ["ens%df0np0" % r for r in range(1, args.rails + 1)]})
                 for n in range(1, args.nodes + 1))
    times = {"plan": [], "render": [], "check": [], "crd": []}
    schemas = k8s_validate.load_crds(args.crds) if args.crds else None
    for _run in range(args.repeat):
        start = time.perf_counter()
        plan = rail_plan(cluster, nodes)
        planned = time.perf_counter()
        objects = k8s_objects.render(plan)
        rendered = time.perf_counter()
        problems = k8s_objects.check_against_plan(plan, objects)
        checked = time.perf_counter()
        times["plan"].append(planned - start)
        times["render"].append(rendered - planned)
        times["check"].append(checked - rendered)
        if problems:
            raise SystemExit("the objects disagree with the plan: %s" % problems[0])
        if schemas is not None:
            violations, _unchecked = k8s_validate.validate(objects, schemas)
            times["crd"].append(time.perf_counter() - checked)
            if violations:
                raise SystemExit("CRD violations: %s" % violations[0])
    pools = sum(1 for o in objects if o["kind"] == "SpiderIPPool")
    print("%d nodes x %d rails: %d objects (%d SpiderIPPools)" % (args.nodes, args.rails, len(objects), pools))
    for name, values in times.items():
        if values:
            print("  %-7s median %.3f s (min %.3f, %d runs)" % (name, statistics.median(values), min(values),
                                                                len(values)))


if __name__ == "__main__":
    main()
