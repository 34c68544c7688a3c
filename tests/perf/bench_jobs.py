"""Benchmark the controller jobs end to end against a no-op play over the same inventory (not a test: prints numbers).

Usage: .venv/bin/python tests/perf/bench_jobs.py [--nodes 1024 4096 16384] [--jobs plan tors ...] [--repeat N]
       [--markdown FILE]

For each fleet size a generated inventory (tests/perf/fleet.py: exclusive addressing that fits the size, 8 rails,
one ToR per rail and 64 nodes) and, back to back on it, a no-op play (one debug task over the node group: what
Ansible itself costs to load the inventory and start a play) and each job. Per job: the wall time, the no-op's wall
time, their ratio, the growth of the job's wall and CPU time per doubling of the fleet (``(t2/t1) ** (1 /
log2(n2/n1))`` between two sizes: 2.0 = linear, 4.0 = quadratic), the CPU time (user + system) of the job's and of
the no-op's process tree and their ratio (on a loaded machine the wall time is the CPU time stretched: the CPU ratio
is the steadier one), and the peak resident memory of the ansible-playbook process tree (the largest process of it:
``ru_maxrss`` of ``os.wait4``).

The jobs (playbooks/*.yml) as they run on the controller:

* plan: playbooks/plan.yml, writing the plan files and the lock into the temporary inventory;
* tors: playbooks/tors.yml, rendering every ToR's configuration (no push);
* k8s: playbooks/k8s.yml, rendering the objects into a temporary directory (no kubeconfig);
* topology: playbooks/topology.yml, rendering the schedulers' topology into a temporary directory (no kubeconfig,
  no cabling result: topology_require_cabling=false publishes every rail group, the whole render);
* check: the opening every host job (validate, cabling, links, lossless, hosts, nccl, maintenance, site) shares before
  it touches a host (tests/perf/host_job_opening.yml): the host play's first task, the rail_plan role's check entry
  point (the job's node groups and the model, then the play's hosts against the published lock, and its summary),
  and the link test's schedule (the link_test role's first, run_once task);
* lock_gate: playbooks/plan_lock_gate.yml, the AWX workflow's approval gate, comparing the plan with the lock the plan
  job committed into the temporary inventory (ainet_awx_inventory_path; an unchanged plan: the gate passes).

The host tasks themselves (one module per host) are not in this table: docs/awx.md gives their per-host cost.
The printed table is markdown (docs/performance.md takes it as it is); --markdown also writes it to a file.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

from checkout import ROOT, importable  # noqa: E402 (this directory is on sys.path: the script's own)

importable()

import fleet  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NOOP = """- name: No-op over the same inventory
  hosts: gpu_nodes
  gather_facts: false
  tasks:
    - name: Nothing
      ansible.builtin.debug:
        msg: "{{ groups['gpu_nodes'] | length }} nodes"
      run_once: true
"""


def jobs(tmp):
    """``{name: (playbook, extra args)}`` of the jobs timed."""
    playbooks = os.path.join(ROOT, "playbooks")
    return {
        "plan": (os.path.join(playbooks, "plan.yml"), []),
        "tors": (os.path.join(playbooks, "tors.yml"), []),
        "k8s": (os.path.join(playbooks, "k8s.yml"), ["-e", "k8s_objects_dest=" + os.path.join(tmp, "k8s")]),
        "topology": (os.path.join(playbooks, "topology.yml"),
                     ["-e", "topology_dest=" + os.path.join(tmp, "topology"), "-e", "topology_require_cabling=false"]),
        "check": (os.path.join(HERE, "host_job_opening.yml"), []),
        "lock_gate": (os.path.join(playbooks, "plan_lock_gate.yml"),
                      ["-e", "ainet_awx_inventory_path=" + os.path.join(tmp, "inv")]),
    }


def run(cmd, env):
    """``(wall seconds, CPU seconds (user + system) of the process tree, peak RSS in MiB of its largest process,
    returncode, output)``."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, proc.returncode, text


def forget_plan(inv):
    """Remove what the plan job writes into the inventory ``inv`` (the lock and the plan files)."""
    for name in ("rail_plan_lock.yml", "rail_plan_lock.json"):
        if os.path.exists(os.path.join(inv, name)):
            os.remove(os.path.join(inv, name))
    shutil.rmtree(os.path.join(inv, ".ainet-fabric"), ignore_errors=True)


def growth(previous, size, seconds):
    """Factor per doubling of the fleet between two sizes (2.0 = linear)."""
    if previous is None:
        return None
    size0, seconds0 = previous
    return (seconds / seconds0) ** (1.0 / math.log2(size / size0))


def load():
    try:
        return "%.1f %.1f %.1f" % os.getloadavg()
    except OSError:
        return "?"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1024, 4096, 16384])
    parser.add_argument("--rails", type=int, default=8)
    parser.add_argument("--jobs", nargs="+", help="only these jobs (default: all)")
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary inventories (their path is printed)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each no-op and job pair this many times and keep each one's least time (timeit's rule: "
                             "the least disturbed run; the no-op alone moves by 15 to 25%% between runs on a quiet machine)")
    args = parser.parse_args()
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    rows, previous, previous_cpu = [], {}, {}
    lines = ["| job | nodes | wall s | no-op s | ratio | growth per doubling | CPU s | no-op CPU s | CPU ratio "
             "| CPU growth per doubling | peak MiB | load before |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    print(lines[0])
    print(lines[1])
    for size in args.nodes:
        tmp = tempfile.mkdtemp(prefix="bench_jobs.%d." % size)
        try:
            inv = fleet.write_inventory(os.path.join(tmp, "inv"), size, args.rails)
            noop = os.path.join(tmp, "noop.yml")
            with open(noop, "w", encoding="utf-8") as handle:
                handle.write(NOOP)
            table = jobs(tmp)
            names = [name for name in table if name in args.jobs] if args.jobs else list(table)
            if ("check" in names or "lock_gate" in names) and "plan" not in names:
                names.insert(0, "plan")  # the check and the lock gate read the lock the plan job writes
            for name in names:
                path, extra = table[name]
                noop_load = load()
                noop_s = noop_cpu = wall = cpu = float("inf")
                rss = 0.0
                for _run in range(max(1, args.repeat)):
                    if name == "plan":
                        forget_plan(inv)  # every run of the plan job as the first: no lock, no plan files yet
                    run_wall, run_cpu, _rss, code, text = run([playbook, "-i", inv, noop], env)
                    if code:
                        raise SystemExit("the no-op play failed at %d nodes:\n%s" % (size, text[-3000:]))
                    noop_s, noop_cpu = min(noop_s, run_wall), min(noop_cpu, run_cpu)
                    run_wall, run_cpu, run_rss, code, text = run([playbook, "-i", inv, path] + extra, env)
                    if code:
                        raise SystemExit("%s failed at %d nodes:\n%s" % (name, size, text[-4000:]))
                    wall, cpu, rss = min(wall, run_wall), min(cpu, run_cpu), max(rss, run_rss)
                factor = growth(previous.get(name), size, wall)
                previous[name] = (size, wall)
                cpu_factor = growth(previous_cpu.get(name), size, cpu)
                previous_cpu[name] = (size, cpu)
                line = "| %s | %d | %.1f | %.1f | %.2f | %s | %.1f | %.1f | %.2f | %s | %.0f | %s |" % (
                    name, size, wall, noop_s, wall / noop_s, "" if factor is None else "%.2f" % factor, cpu, noop_cpu,
                    cpu / noop_cpu, "" if cpu_factor is None else "%.2f" % cpu_factor, rss, noop_load)
                lines.append(line)
                rows.append(line)
                print(line, flush=True)
        finally:
            if args.keep:
                print("kept: %s" % tmp)
            else:
                shutil.rmtree(tmp, ignore_errors=True)
    footer = "\n%s, %d CPUs, Python %s, %s; load average (1, 5, 15 min) before each no-op run in the last column." % (
        platform.machine(), os.cpu_count() or 0, platform.python_version(),
        subprocess.run([playbook, "--version"], capture_output=True, text=True, check=False).stdout.splitlines()[0])
    print(footer)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n" + footer + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
