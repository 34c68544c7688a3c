"""Benchmark how the controller-side plan actions get the nodes (not a test: prints numbers).

Usage: .venv/bin/python tests/perf/bench_node_group.py [--nodes 1024] [--rails 8] [--tasks 5] [--repeat 3]
       [--no-playbook]

A generated inventory of ``--nodes`` GPU nodes x ``--rails`` rails (node ids inline per host, the NICs in the group's
vars, the lossless cluster model in group_vars/all), read two ways:

* ``nodes: "{{ groups['gpu_nodes'] | ainet.fabric.node_map(hostvars) }}"``: what the lossless_test and cabling_check
  roles passed before (the lossless test's role five times per job, and twice more per step);
* ``node_group: gpu_nodes``: the action reads the group's variables once (plugins/plugin_utils/plan_action.py over
  inventory_vars.py), what the roles pass now.

In-process: the two reads on the same HostVars (the filter's ``node_map`` against ``plan_action.group_nodes``, the
same result checked), the median of --repeat runs.

End to end: ``ansible-playbook`` running --tasks ``ainet.fabric.lossless_test`` tasks (``mode: schedule``,
``run_once``) each way, against a no-op play over the same inventory (what Ansible itself costs); per task: (run -
no-op) / tasks. Wall and CPU (of ansible-playbook and its workers) both; skipped with --no-playbook.
"""

import argparse
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

import fleet  # noqa: E402  (the addressing derived from the fleet size)

import yaml  # noqa: E402

TORS_PER_RAIL = 8


def model(nodes, rails):
    """A lossless cluster: per rail, TORS_PER_RAIL SONiC ToRs of nodes/TORS_PER_RAIL nodes each, the nvidia preset."""
    per = max(nodes // TORS_PER_RAIL, 1)
    tors = [{"name": "r%d-t%d" % (rail, i + 1), "rails": [rail], "nodes": "%d-%d" % (i * per + 1, (i + 1) * per),
             "port_template": "Ethernet{local}", "platform": "sonic"}
            for rail in range(1, rails + 1) for i in range(TORS_PER_RAIL)]
    return {"name": "bench", "rails": rails, "mtu": 9000, "qos": {"preset": "nvidia"}, "tors": tors,
            "addressing": fleet.addressing(nodes, rails)}


def interfaces(rails):
    return ["ens%df%dnp%d" % (6 + r // 2, r % 2, r % 2) for r in range(rails)]


def write_inventory(tmp, args):
    inv = os.path.join(tmp, "inv")
    os.makedirs(os.path.join(inv, "group_vars"))
    with open(os.path.join(inv, "group_vars", "all.yml"), "w") as handle:
        yaml.safe_dump({"fabric_cluster": model(args.nodes, args.rails)}, handle)
    group = {"hosts": dict(("gpu%04d" % n, {"fabric_node_id": n}) for n in range(1, args.nodes + 1)),
             "vars": {"fabric_rail_interfaces": interfaces(args.rails)}}
    with open(os.path.join(inv, "hosts.yml"), "w") as handle:
        yaml.safe_dump({"all": {"children": {"gpu_nodes": group}}}, handle)
    return inv


def in_process(inv, args):
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.hostvars import HostVars
    from ansible.vars.manager import VariableManager

    from ansible_collections.ainet.fabric.plugins.filter.rail import node_map
    from ansible_collections.ainet.fabric.plugins.plugin_utils.plan_action import group_nodes

    times = {"node_map(hostvars)": [], "node_group": []}
    for _run in range(args.repeat):
        loader = DataLoader()
        inventory = InventoryManager(loader=loader, sources=[inv])
        manager = VariableManager(loader=loader, inventory=inventory)
        hostvars = HostVars(inventory=inventory, variable_manager=manager, loader=loader)
        task_vars = {"groups": inventory.get_groups_dict(), "hostvars": hostvars}
        start = time.perf_counter()
        old = node_map(task_vars["groups"]["gpu_nodes"], hostvars)
        times["node_map(hostvars)"].append(time.perf_counter() - start)
        start = time.perf_counter()
        new = group_nodes(task_vars, "lossless_test_node_group", "gpu_nodes")[0]
        times["node_group"].append(time.perf_counter() - start)
        if new != old:
            raise SystemExit("the two reads differ")
    print("in-process, %d nodes x %d rails (%d runs, each on a fresh inventory)" % (args.nodes, args.rails, args.repeat))
    for name, values in times.items():
        print("  %-20s median %.3f s (min %.3f)" % (name, statistics.median(values), min(values)))


TASK = """    - name: Count the steps ({n})
      ainet.fabric.lossless_test:
        mode: schedule
        cluster: "{{{{ fabric_cluster }}}}"
        {nodes}
        hosts: "{{{{ ansible_play_hosts }}}}"
      run_once: true
"""
NODES = {"nodes": "nodes: \"{{ groups['gpu_nodes'] | ainet.fabric.node_map(hostvars) }}\"",
         "node_group": "node_group: gpu_nodes"}


def playbook(inv, tmp, args):
    books = {"noop": os.path.join(tmp, "noop.yml")}
    head = "- name: Bench\n  hosts: gpu_nodes\n  gather_facts: false\n  tasks:\n"
    with open(books["noop"], "w") as handle:
        handle.write(head + "    - name: Nothing\n      ansible.builtin.debug:\n"
                            "        msg: \"{{ groups['gpu_nodes'] | length }} nodes\"\n      run_once: true\n")
    for name, line in NODES.items():
        books[name] = os.path.join(tmp, name + ".yml")
        with open(books[name], "w") as handle:
            handle.write(head + "".join(TASK.format(n=n, nodes=line) for n in range(1, args.tasks + 1)))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inv]
    runs = dict((name, []) for name in books)
    cpu = dict((name, []) for name in books)
    for _run in range(args.repeat):
        for name, book in books.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(cmd + [book], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
            runs[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            if done.returncode:
                raise SystemExit("%s failed:\n%s%s" % (name, done.stdout[-3000:], done.stderr[-3000:]))
    print("end to end (ansible-playbook, %d runs; %d lossless_test tasks per play)" % (args.repeat, args.tasks))
    noop_wall, noop_cpu = statistics.median(runs["noop"]), statistics.median(cpu["noop"])
    for name in books:
        wall, used = statistics.median(runs[name]), statistics.median(cpu[name])
        extra = "" if name == "noop" else "; per task: %.2f s wall, %.2f s CPU" % (
            (wall - noop_wall) / args.tasks, (used - noop_cpu) / args.tasks)
        print("  %-10s median %.2f s (min %.2f), CPU %.2f s%s" % (name, wall, min(runs[name]), used, extra))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--rails", type=int, default=8)
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-playbook", action="store_true")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench_node_group.")
    try:
        inv = write_inventory(tmp, args)
        in_process(inv, args)
        if not args.no_playbook:
            playbook(inv, tmp, args)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
