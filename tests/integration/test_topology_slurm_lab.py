# -*- coding: utf-8 -*-
"""The generated Slurm tree topology loaded by a real slurmctld (Debian 12's Slurm 22.05, needs root).

Eight nodes, two rails, rail groups of two nodes: three in spine block sb1, one in sb2. The ``topology.conf`` that
workload/topology.py writes is given to the Slurm lab (tests/lab/slurm_lab.py, ``TopologyPlugin=topology/tree``);
``scontrol show topology`` must show every planned rail group as a leaf switch (level 0) with exactly its nodes, each
spine block (level 1) with its groups, and the root (level 2) over both, and slurmctld must not report a node on
several leaves, and a two-node job asking for one leaf switch (``--switches=1``) with n1 busy gets a whole rail
group. The control is the per-rail mistake: one leaf per ToR, as a rail-optimised fabric's cabling suggests and
Slurm's tree cannot hold; slurmctld itself names every node as on "Multiple leaf switches" (22.05 logs it as an
error and goes on; switch_record.c of newer Slurm as a warning), and the same job stays pending for resources
while six nodes are idle.
"""

from __future__ import annotations

import os
import re
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
sys.path.insert(0, os.path.join(ROOT, "tests", "unit", "plugins", "module_utils"))
import slurm_lab  # noqa: E402  pylint: disable=wrong-import-position
import slurm_topology_judge as judge  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.workload import topology  # noqa: E402

# As root a missing Slurm fails (start() names tests/system-deps.sh), it never skips.
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the Slurm lab needs root for network, UTS and time namespaces")

NODES = ["n%d" % i for i in range(1, 9)]
MULTI = "Multiple leaf switches contain nodes"


def model():
    tors = []
    for group in range(4):
        first = group * 2 + 1
        for rail in (1, 2):
            tors.append({"name": "su%d-r%d" % (group + 1, rail), "rails": [rail], "nodes": "%d-%d" % (first, first + 1),
                         "port_template": "swp{local}", "spine_block": "sb1" if group < 3 else "sb2"})
    return {"name": "slurmtopo", "rails": 2, "tors": tors,
            "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 20, "node_prefix": 28}}


def show_topology(lab):
    """``{switch: {"level", "nodes", "switches"}}`` from ``scontrol show topology`` (one line per switch)."""
    out = {}
    for line in lab.scontrol("show", "topology").splitlines():
        fields = dict(re.findall(r"(\w+)=(\S+)", line))
        if "SwitchName" in fields:
            out[fields["SwitchName"]] = {"level": int(fields["Level"]),
                                         "nodes": sorted(judge.expand(fields.get("Nodes", ""))),
                                         "switches": sorted(judge.expand(fields.get("Switches", "")))}
    return out


def two_node_job(lab, wait=True):
    """``sbatch -N2 --switches=1``: the nodes of the job once RUNNING (``wait``), else its id."""
    out = lab.run("sbatch", "--parsable", "-N2", "--switches=1", "-D", lab.path("jobs"), "-o",
                  lab.path("jobs", "%j.out"), "--wrap", "sleep 60")
    job_id = int(out.strip().split(";")[0])
    if not wait:
        return job_id
    lab.wait(lambda: lab.job_state(job_id) == "RUNNING", 30, what="job %d RUNNING" % job_id)
    return sorted(judge.expand(lab.show_job(job_id)["NodeList"]))


def ctld_log(lab):
    with open(lab.path("log", "slurmctld.log"), encoding="utf-8", errors="replace") as handle:
        return handle.read()


@pytest.fixture(scope="module", name="plan")
def plan_fixture():
    return rail_plan(model(), dict((n, i) for i, n in enumerate(NODES, 1)))


def test_slurmctld_loads_the_rail_groups_and_spine_blocks(plan):
    topo = topology.topologies(plan)["default"]
    text = topology.tree_conf(topo, topology.slurm_names(plan))
    lab = slurm_lab.start("tt%d" % os.getpid(), NODES, topology=("topology/tree", text))
    try:
        shown = show_topology(lab)
        log = ctld_log(lab)
        # Slurm places by it: with n1 busy (its rail group half taken), a two-node job asking for one leaf switch
        # gets a whole rail group, never n2 with a node of another group.
        lab.run_job("n1", 60)
        placed = two_node_job(lab)
    finally:
        lab.stop()
    assert placed in (["n3", "n4"], ["n5", "n6"], ["n7", "n8"]), placed
    planned = dict((g["name"], sorted(g["hosts"])) for g in topo["groups"].values())
    assert planned == {"sb1.rg1": ["n1", "n2"], "sb1.rg2": ["n3", "n4"], "sb1.rg3": ["n5", "n6"],
                       "sb2.rg1": ["n7", "n8"]}
    assert dict((n, s["nodes"]) for n, s in shown.items() if s["level"] == 0) == planned
    assert shown["sb1"] == {"level": 1, "nodes": ["n1", "n2", "n3", "n4", "n5", "n6"],
                            "switches": ["sb1.rg1", "sb1.rg2", "sb1.rg3"]}
    assert shown["sb2"]["level"] == 1 and shown["sb2"]["switches"] == ["sb2.rg1"]
    assert shown["default.all"] == {"level": 2, "nodes": sorted(NODES), "switches": ["sb1", "sb2"]}
    assert MULTI not in log


def test_slurmctld_names_the_per_rail_mistake(plan):
    """The control: a leaf per ToR puts each node on two leaves, and slurmctld says so for every node."""
    lines = ["SwitchName=%s Nodes=%s" % (t["name"], topology.hostlist(p["host"] for p in t["ports"]))
             for t in plan["tors"].values()]
    lines.append("SwitchName=top Switches=%s" % topology.hostlist(plan["tors"]))
    lab = slurm_lab.start("tu%d" % os.getpid(), NODES, topology=("topology/tree", "\n".join(lines) + "\n"))
    try:
        shown = show_topology(lab)
        log = ctld_log(lab)
        lab.run_job("n1", 60)
        job_id = two_node_job(lab, wait=False)
        time.sleep(15)          # seven passes of the scheduler (sched_interval=2)
        pending = lab.show_job(job_id)
        idle = [n for n in NODES if lab.node_state(n) == "IDLE"]
    finally:
        lab.stop()
    assert len([s for s in shown.values() if s["level"] == 0]) == 8
    # Slurm cannot place by this tree: the same two-node job on one leaf switch stays pending for resources while
    # three rail groups (six nodes, each pair on two leaves of its own) are idle.
    assert (pending["JobState"], pending["Reason"]) == ("PENDING", "Resources"), pending
    assert idle == NODES[1:]
    named = re.search(MULTI + r": (\S+)", log)
    assert named is not None, log[-2000:]
    assert sorted(judge.expand(named.group(1))) == sorted(NODES)
