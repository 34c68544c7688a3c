"""Benchmark the re-converge of playbooks/hosts.yml against a ping play (not a test: prints numbers).

Usage (root, network namespaces): .venv/bin/python tests/perf/bench_reconverge.py
    [--nodes 64] [--rails 8] [--forks 16] [--repeat 3] [--rail-prefix 19] [--profile] [--keep]

Builds a netns lab (tests/lab/lab.py, kind netns: each node's python runs through
``ip netns exec``, connection local) of N nodes x R rails in exclusive mode, converges
it once, then alternates N timed runs of a re-converge (hosts.yml, must report
changed=0 on every host) and of a one-task ``ansible.builtin.ping`` play over the
same hosts, inventory, ansible.cfg and forks. Reports min/median of each and the
ratio of medians (target 1.2). The collection's plugins are byte-compiled first, as the first
run on a controller leaves them; ``--profile`` adds one untimed re-converge with
ansible.posix.profile_tasks and prints its per-task times. ``--module-cpu N`` keeps the AnsiballZ
payloads of one host's rail_interfaces and ping (ANSIBLE_KEEP_REMOTE_FILES) and runs each N times
in turn, one at a time, in that node's namespace: the CPU the host spends on our module beyond a
no-op module, free of the play's contention. Last line: JSON summary.
"""

import argparse
import glob
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(os.path.abspath(sys.executable))
PING_PLAY = """- name: Ping the GPU nodes (baseline)
  hosts: gpu_nodes
  gather_facts: false
  tasks:
    - name: Ping
      ansible.builtin.ping:
"""
RECAP = re.compile(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--rails", type=int, default=8)
    parser.add_argument("--forks", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    # /24 rails hold only 2^(27-24) = 8 nodes of /27: /19 (docs' 64-node example) holds 256.
    parser.add_argument("--rail-prefix", type=int, default=19)
    parser.add_argument("--profile", action="store_true", help="one extra re-converge with profile_tasks")
    parser.add_argument("--keep", action="store_true", help="keep the lab (and its directory) for inspection")
    parser.add_argument("--module-cpu", type=int, default=0, metavar="N",
                        help="also run one host's rail_interfaces and ping payloads N times each, sequentially")
    return parser.parse_args()


def playbook(inventory, play, forks, env_extra=None, extra_args=()):
    """Run ansible-playbook; returns (seconds, stdout + stderr, rc)."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0", PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    env.update(env_extra or {})
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", inventory, "-f", str(forks), play] + list(extra_args)
    start = time.monotonic()
    result = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800, check=False)
    return time.monotonic() - start, result.stdout + result.stderr, result.returncode


def recap(output):
    return {m[1]: {"ok": int(m[2]), "changed": int(m[3]), "unreachable": int(m[4]), "failed": int(m[5])}
            for m in RECAP.finditer(output) if m[1] != "localhost"}


def check_run(what, output, rc, hosts, want_changed=None):
    """Fail loudly unless every host ran, none failed, and (if given) changed matches."""
    counts = recap(output)
    bad = sorted(h for h in hosts if h not in counts or counts[h]["failed"] or counts[h]["unreachable"]
                 or (want_changed is not None and counts[h]["changed"] != want_changed))
    if rc != 0 or bad:
        errors = [line for line in output.splitlines() if line.startswith(("fatal:", "ERROR", "[ERROR]"))]
        sys.stdout.write("\n".join(errors[:3]) + "\n" + output[output.rfind("PLAY RECAP"):][:3000])
        raise SystemExit("%s: rc=%d, %d host(s) not as expected (want changed=%s): %s"
                         % (what, rc, len(bad), want_changed, " ".join(bad[:10])))


def summary(runs):
    return {"min_s": round(min(runs), 2), "median_s": round(statistics.median(runs), 2),
            "runs_s": [round(r, 2) for r in runs]}


def profile_lines(output):
    """profile_tasks' block at the end: one line per task, slowest first."""
    block = output[output.rfind("TASKS RECAP"):] if "TASKS RECAP" in output else output[output.rfind("PLAY RECAP"):]
    return [line.rstrip(" *") for line in block.splitlines()[1:] if line.strip() and not line.startswith("===")]


def module_cpu(inventory, plays, host, lab, runs):
    """Median CPU (ms, the node's python and its children) of one host's rail_interfaces and ping payloads."""
    remote = tempfile.mkdtemp(prefix="bench-remote-")
    keep = {"ANSIBLE_KEEP_REMOTE_FILES": "1", "ANSIBLE_REMOTE_TMP": remote}
    try:
        for play in plays:  # the host job and the ping play, each limited to the host: their payloads are kept
            _s, output, rc = playbook(inventory, play, 1, keep, ["--limit", host])
            if rc != 0:
                raise SystemExit("module-cpu: the run to keep the payloads failed: %s" % output[-2000:])
        payloads = {name: glob.glob(os.path.join(remote, "*", "AnsiballZ_%s.py" % name))[0]
                    for name in ("rail_interfaces", "ping")}
        times = {name: [] for name in payloads}
        for _run in range(runs):
            for name, path in payloads.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run(["ip", "netns", "exec", lab.node_ns(host), "/usr/bin/python3", path],
                               capture_output=True, check=True)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                times[name].append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
        out = {name: round(statistics.median(values), 1) for name, values in times.items()}
        out["extra"] = round(out["rail_interfaces"] - out["ping"], 1)
        return out
    finally:
        shutil.rmtree(remote, ignore_errors=True)


def bench(args, lab, lab_dir, result):
    cluster = {"name": "bench", "rails": args.rails, "mtu": 9000,
               "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16",
                              "rail_prefix": args.rail_prefix, "node_prefix": 27},
               "management_networks": ["10.250.0.0/24"]}
    nodes = {"gpu%03d" % i: i for i in range(1, args.nodes + 1)}
    interfaces = ["ens%df0np0" % r for r in range(1, args.rails + 1)]
    start = time.monotonic()
    inventory, plan = lab.build(cluster, nodes, interfaces, lab_dir)
    result["lab_build_s"] = round(time.monotonic() - start, 2)
    print("lab: %d nodes x %d rails, %d ToRs, built in %.1f s (prefix %s, dir %s)"
          % (len(plan["nodes"]), args.rails, len(plan["tors"]), result["lab_build_s"], lab.prefix(), lab_dir))
    hosts_yml = os.path.join(ROOT, "playbooks", "hosts.yml")
    ping_yml = os.path.join(lab_dir, "ping.yml")
    with open(ping_yml, "w", encoding="utf-8") as handle:
        handle.write(PING_PLAY)

    seconds, output, rc = playbook(inventory, hosts_yml, args.forks)
    check_run("converge", output, rc, nodes)
    result["converge_s"] = round(seconds, 2)
    print("converge: %.1f s" % seconds)

    reconverge, ping = [], []
    for run in range(1, args.repeat + 1):
        seconds, output, rc = playbook(inventory, hosts_yml, args.forks)
        check_run("re-converge #%d" % run, output, rc, nodes, want_changed=0)
        reconverge.append(seconds)
        seconds, output, rc = playbook(inventory, ping_yml, args.forks)
        check_run("ping #%d" % run, output, rc, nodes)
        ping.append(seconds)
        print("run %d: re-converge %.2f s (changed=0 on %d hosts), ping %.2f s, load %s"
              % (run, reconverge[-1], len(nodes), ping[-1], "%.2f %.2f %.2f" % os.getloadavg()))
    result["reconverge"], result["ping"] = summary(reconverge), summary(ping)
    result["ratio"] = round(statistics.median(reconverge) / statistics.median(ping), 2)
    print("re-converge min %.2f median %.2f s | ping min %.2f median %.2f s | ratio %.2fx (target 1.2x)"
          % (min(reconverge), statistics.median(reconverge), min(ping), statistics.median(ping), result["ratio"]))

    if args.module_cpu:
        first = sorted(nodes)[0]
        result["module_cpu_ms"] = module_cpu(inventory, (hosts_yml, ping_yml), first, lab, args.module_cpu)
        print("module CPU on %s, median of %d sequential runs: rail_interfaces %.0f ms, ping %.0f ms, extra %.0f ms"
              % (sorted(nodes)[0], args.module_cpu, result["module_cpu_ms"]["rail_interfaces"],
                 result["module_cpu_ms"]["ping"], result["module_cpu_ms"]["extra"]))

    if args.profile:
        seconds, output, rc = playbook(inventory, hosts_yml, args.forks, {
            "ANSIBLE_CALLBACKS_ENABLED": "ansible.posix.profile_tasks",
            "PROFILE_TASKS_TASK_OUTPUT_LIMIT": "all"})
        check_run("profiled re-converge", output, rc, nodes, want_changed=0)
        result["profiled_reconverge_s"] = round(seconds, 2)
        print("profiled re-converge (untimed in the ratio): %.2f s; profile_tasks:" % seconds)
        print("\n".join("  " + line for line in profile_lines(output)))


def main():
    args = parse_args()
    if os.geteuid() != 0:
        print("bench_reconverge: skipped, the netns lab needs root")
        return 0
    os.environ["AINET_LAB_PREFIX"] = "bench%d" % (os.getpid() % 100000)
    sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
    import lab  # pylint: disable=import-outside-toplevel,import-error

    lab_dir = tempfile.mkdtemp(prefix="bench-reconverge-")
    result = {"nodes": args.nodes, "rails": args.rails, "forks": args.forks, "repeat": args.repeat,
              "nproc": os.cpu_count(), "load_start": [round(x, 2) for x in os.getloadavg()]}
    # Every forked worker imports the action plugins and the module_utils they use. A controller writes their
    # bytecode on the first import and reads it afterwards; with PYTHONDONTWRITEBYTECODE set (some CI and sandbox
    # images) each worker would compile them from source, about 25 ms a host-task, which no user pays twice.
    # Compile them once, as the first run on a controller does (ansible-core's own files are compiled by pip).
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "plugins")], check=True)
    result["pythondontwritebytecode"] = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    try:
        bench(args, lab, lab_dir, result)
    finally:
        result["load_end"] = [round(x, 2) for x in os.getloadavg()]
        if args.keep:
            print("kept: lab prefix %s, inventory %s/inventory; remove with AINET_LAB_PREFIX=%s "
                  "%s tests/lab/lab.py down" % (lab.prefix(), lab_dir, lab.prefix(), sys.executable))
        else:
            lab.down()
            subprocess.run(["rm", "-rf", lab_dir], check=False)
        print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
