"""Benchmark the Kubernetes objects (not a test: prints numbers).

Usage: .venv/bin/python tests/perf/bench_k8s.py [--nodes 1024] [--rails 8] [--repeat 5] [--crds DIR]
       [--no-playbook] [--profile FILE]

1,024 nodes x 8 rails in exclusive addressing, cni sriov, Spiderpool IPAM: a SpiderIPPool per node and rail
(8,192), a SpiderMultusConfig per rail, the device plugin's ConfigMap, the NCCL env.

* library only (in-process): the plan, the render, the check against the plan, the count of the objects without
  rendering them (the plan report's table), with --crds (or AINET_K8S_CRD_DIR) the CRD schema check, and the YAML
  files (k8s_dump), the CRD check and the files sharing one split of the objects (k8s_shapes.Shapes), as the action
  does, with the cyclic garbage collector paused as the action pauses it; the median of --repeat runs, and the CPU
  time of the whole. The files are also written once per object
  (``by_shape=False``) and with the pure-Python emitter, each compared with the files of the run.
* end to end: ``ansible-playbook playbooks/k8s.yml`` over a generated inventory of the same nodes, writing the
  files to a temporary directory, against a no-op playbook over the same inventory (what Ansible itself costs);
  skipped with --no-playbook.

Wall and CPU times both: on a loaded machine (a CI run beside it) the wall time is the CPU time stretched.

--profile FILE writes a cProfile of one in-process run (plan, render, check, dump) to FILE (pstats format).
"""

import argparse
import cProfile
import gc
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from checkout import ROOT, importable  # noqa: E402 (this directory is on sys.path: the script's own)

importable()

import yaml  # noqa: E402

import fleet  # noqa: E402

from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_objects, k8s_shapes, k8s_validate  # noqa: E402
from ansible_collections.ainet.fabric.plugins.plugin_utils import k8s_dump  # noqa: E402


def model(rails, nodes):
    """SR-IOV with Spiderpool; exclusive addressing, a /24 per node and rail, the rails and the supernet as small as
    ``nodes`` allows (fleet.addressing: any fleet size fits)."""
    return {"name": "bench", "rails": rails, "cni": "sriov", "sriov": {"vfs": 8},
            "addressing": fleet.addressing(nodes, rails, node_prefix=24)}


def interfaces(rails):
    return ["ens%df0np0" % r for r in range(1, rails + 1)]


def files_of(plan, objects, pure=False, by_shape=True, shapes=None):
    cluster = plan["cluster"]["name"]
    return dict((name, k8s_dump.dump(items[0]["kind"], cluster, items, pure=pure, by_shape=by_shape, shapes=shapes))
                for name, items in k8s_objects.by_file(objects).items())


def library(args):
    cluster = model(args.rails, args.nodes)
    nodes = dict(("gpu%04d" % n, {"node_id": n, "rail_interfaces": interfaces(args.rails)})
                 for n in range(1, args.nodes + 1))
    times = {"plan": [], "render": [], "check": [], "count": [], "crd": [], "dump": []}
    schemas = k8s_validate.load_crds(args.crds) if args.crds else None
    cpu = []
    gc.disable()  # as the action runs (PAUSE_GC): the cyclic collector off while the objects are built
    for _run in range(args.repeat):
        cpu_start = time.process_time()
        start = time.perf_counter()
        plan = rail_plan(cluster, nodes)
        planned = time.perf_counter()
        objects = k8s_objects.render(plan)
        rendered = time.perf_counter()
        problems = k8s_objects.check_against_plan(plan, objects)
        checked = time.perf_counter()
        k8s_objects.count_objects(plan)
        counted = time.perf_counter()
        shapes = k8s_shapes.Shapes()
        if schemas is not None:
            violations, _unchecked = k8s_validate.validate(objects, schemas, shapes)
            if violations:
                raise SystemExit("CRD violations: %s" % violations[0])
        validated = time.perf_counter()
        files = files_of(plan, objects, shapes=shapes)
        dumped = time.perf_counter()
        cpu.append(time.process_time() - cpu_start)
        times["plan"].append(planned - start)
        times["render"].append(rendered - planned)
        times["check"].append(checked - rendered)
        times["count"].append(counted - checked)
        if schemas is not None:
            times["crd"].append(validated - counted)
        times["dump"].append(dumped - validated)
        if problems:
            raise SystemExit("the objects disagree with the plan: %s" % problems[0])
    gc.enable()
    start = time.perf_counter()
    one_by_one = files_of(plan, objects, by_shape=False)
    one_by_one_s = time.perf_counter() - start
    start = time.perf_counter()
    pure = files_of(plan, objects, pure=True)
    pure_s = time.perf_counter() - start
    pools = sum(1 for o in objects if o["kind"] == "SpiderIPPool")
    print("%d nodes x %d rails: %d objects (%d SpiderIPPools), %.1f MB of YAML" % (
        args.nodes, args.rails, len(objects), pools, sum(len(t) for t in pure.values()) / 1e6))
    has_c = k8s_dump.C_DUMPER is not None
    print("library only (libyaml C emitter: %s)" % ("yes" if has_c else "no, pure Python"))
    total = 0.0
    for name, values in times.items():
        if values:
            total += statistics.median(values)
            print("  %-7s median %.3f s (min %.3f, %d runs)" % (name, statistics.median(values), min(values),
                                                                len(values)))
    print("  total   %.3f s (CPU: median %.3f s)" % (total, statistics.median(cpu)))
    print("  (the files one emitter run per object: %.3f s, one run, same bytes: %s; by shape with the pure-Python "
          "emitter: %.3f s, same bytes: %s)" % (one_by_one_s, one_by_one == files, pure_s, pure == files))
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        plan = rail_plan(cluster, nodes)
        objects = k8s_objects.render(plan)
        k8s_objects.check_against_plan(plan, objects)
        files_of(plan, objects)
        profiler.disable()
        profiler.dump_stats(args.profile)
        print("  profile of one run: %s" % args.profile)


def playbook(args):
    tmp = tempfile.mkdtemp(prefix="bench_k8s.")
    try:
        inv = os.path.join(tmp, "inv")
        os.makedirs(os.path.join(inv, "group_vars"))
        with open(os.path.join(inv, "group_vars", "all.yml"), "w") as handle:
            yaml.safe_dump({"fabric_cluster": model(args.rails, args.nodes)}, handle)
        group = {"hosts": dict(("gpu%04d" % n, {"fabric_node_id": n}) for n in range(1, args.nodes + 1)),
                 "vars": {"fabric_rail_interfaces": interfaces(args.rails)}}
        with open(os.path.join(inv, "hosts.yml"), "w") as handle:
            yaml.safe_dump({"all": {"children": {"gpu_nodes": group}}}, handle)
        noop = os.path.join(tmp, "noop.yml")
        with open(noop, "w") as handle:
            handle.write("- name: No-op over the same inventory\n  hosts: gpu_nodes\n  gather_facts: false\n"
                         "  tasks:\n    - name: Nothing\n      ansible.builtin.debug:\n"
                         "        msg: \"{{ groups['gpu_nodes'] | length }} nodes\"\n      run_once: true\n")
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                   PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
        cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inv]
        runs, cpu = {"noop": [], "k8s.yml": []}, {"noop": [], "k8s.yml": []}
        for run in range(args.repeat):
            dest = os.path.join(tmp, "k8s%d" % run)  # a fresh directory: every file written
            for name, extra in (("noop", [noop]),
                                ("k8s.yml", [os.path.join(ROOT, "playbooks", "k8s.yml"), "-e", "k8s_objects_dest=" + dest])):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                done = subprocess.run(cmd + extra, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
                runs[name].append(time.perf_counter() - start)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
                if done.returncode:
                    raise SystemExit("%s failed:\n%s%s" % (name, done.stdout[-3000:], done.stderr[-3000:]))
        print("end to end (ansible-playbook, %d runs)" % args.repeat)
        for name, values in runs.items():
            print("  %-8s median %.2f s (min %.2f); CPU of ansible-playbook and its workers: median %.2f s"
                  % (name, statistics.median(values), min(values), statistics.median(cpu[name])))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--rails", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--crds", default=os.environ.get("AINET_K8S_CRD_DIR"))
    parser.add_argument("--no-playbook", action="store_true", help="the library-only numbers only")
    parser.add_argument("--profile", help="write a cProfile of one in-process run to this file")
    args = parser.parse_args()
    library(args)
    if not args.no_playbook:
        playbook(args)


if __name__ == "__main__":
    main()
