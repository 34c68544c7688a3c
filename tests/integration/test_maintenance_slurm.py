# -*- coding: utf-8 -*-
"""The maintenance role against a real Slurm (tests/lab/slurm_lab.py: Debian 12's slurmctld and one slurmd per
node, 22.05; needs root). ansible-playbook runs the role with maintenance_backend: slurm, scontrol through the lab's
wrappers; the nodes are local hosts and the step is a harmless marker that records when it ran and what Slurm said
about the node at that moment.

* A job runs on n1, none on n2, both need the step: n2 goes first; n1 is drained while its job runs, its step waits
  until the job ended (the marker's time is after the job's end, Slurm said IDLE+DRAIN then); the job ends
  COMPLETED (the lab's jobcomp record: no slurmdbd, so no sacct); both nodes are resumed. n3, drained by an
  administrator, stays drained with its reason and is never stepped, and counts against the limits.
* Nothing pending: no scontrol update at all.
* A failing check leaves the node drained, its reason naming the check.
* An ansible-playbook SIGKILLed while it waits for a job leaves the node drained with our mark; the next run
  finishes that window.
* Slurm's own reboot (RebootProgram, nextstate=DOWN): the node comes back DOWN and is resumed only by the role.
* A reboot loop: after maintenance_max_reboots reboots whose checks failed, the node is held (check=reboot-loop).
* Without a backend, a node where slurmd runs is refused in one line naming slurm.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
try:
    import slurm_lab  # noqa: E402  pylint: disable=wrong-import-position
except ImportError:  # the lab arrives with tests/lab/slurm_lab.py
    slurm_lab = None

pytestmark = [
    pytest.mark.skipif(slurm_lab is None, reason="tests/lab/slurm_lab.py is not in this checkout"),
    pytest.mark.skipif(os.geteuid() != 0, reason="the Slurm lab needs root for network, UTS and time namespaces"),
    pytest.mark.skipif(slurm_lab is not None and os.geteuid() == 0 and bool(slurm_lab.missing_programs()),
                       reason="Slurm/munge missing: run tests/system-deps.sh as root"),
]

NODES = ["n1", "n2", "n3"]
PLAY = """
- hosts: gpu_nodes
  gather_facts: false
  roles:
    - role: ainet.fabric.maintenance
"""
STEP = """#!/bin/sh
# the window's step: when it ran, and what Slurm said about the node then
PATH=%(bindir)s:$PATH
{ date +%%s.%%N; scontrol show node -o "$1"; squeue -h -w "$1" -o %%i; } > %(dir)s/stepped-"$1"
"""


@pytest.fixture(scope="module")
def lab():
    lab = slurm_lab.start("tm%d" % os.getpid(), NODES)
    yield lab
    lab.stop()


@pytest.fixture
def work(lab, tmp_path):
    step = tmp_path / "step.sh"
    step.write_text(STEP % {"bindir": lab.bindir, "dir": tmp_path})
    step.chmod(0o755)
    (tmp_path / "play.yml").write_text(PLAY)
    yield tmp_path
    for node in NODES:  # every test starts from idle nodes
        lab.scontrol("update", "NodeName=%s" % node, "State=RESUME", check=False)
    lab.wait(lambda: all(idle(lab, n) for n in NODES), timeout=60, what="nodes idle again")


def inventory(lab, work, steps, **extra):
    # n1 and n2 share their ToRs (one rail group); n3 sits on ToRs of its own
    tors = [{"name": "r%d-a" % r, "rails": [r], "nodes": ["1-2"]} for r in (1, 2)] + [
        {"name": "r%d-b" % r, "rails": [r], "nodes": [3]} for r in (1, 2)]
    variables = {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
        "fabric_rail_interfaces": ["e0", "e1"],
        "fabric_cluster": {"name": "slurmlab", "rails": 2, "tors": tors, "addressing": {
            "mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27}},
        "maintenance_backend": "slurm",
        "maintenance_slurm_scontrol": os.path.join(lab.bindir, "scontrol"),
        "maintenance_slurm_environment": {"SLURM_CONF": lab.conf},
        "maintenance_wait_interval": 1,
        "maintenance_max_nodes": 2,
        "maintenance_max_per_group": 1,
        "maintenance_steps": steps,
        "maintenance_step_command": [str(work / "step.sh"), "{{ inventory_hostname }}"],
        "maintenance_checks": [],
    }
    variables.update(extra)
    hosts = dict((n, {"fabric_node_id": i}) for i, n in enumerate(NODES, 1))
    path = work / "inventory.json"
    path.write_text(json.dumps({"all": {"children": {"gpu_nodes": {"hosts": hosts}}, "vars": variables}}))
    return path


def playbook(work, inv, background=False):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", str(inv), str(work / "play.yml")]
    if background:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)


def stepped(work, node):
    path = work / ("stepped-" + node)
    if not path.exists():
        return None
    lines = path.read_text().splitlines()
    return {"time": float(lines[0]), "node": lines[1], "jobs": lines[2:]}


def idle(lab, node):
    """In service and free: base state IDLE, no DRAIN (a transient NOT_RESPONDING of a loaded machine aside)."""
    flags = lab.node_state(node).split("+")
    return flags[0] == "IDLE" and not set(flags[1:]) - {"NOT_RESPONDING"}


def reason(lab, node):
    """The node's reason as sinfo prints it (%E), "" for none."""
    text = lab.sinfo("-h", "-N", "-n", node, "-o", "%E").strip()
    return "" if text == "none" else text


def test_the_idle_node_goes_first_the_busy_one_after_its_job(lab, work):
    lab.scontrol("update", "NodeName=n3", "State=DRAIN", "Reason=bad DIMM B2")
    job = lab.run_job("n1", 12)
    start = time.time()
    run = playbook(work, inventory(lab, work, ["command"]))
    assert run.returncode == 0, run.stdout[-3000:]
    n1, n2 = stepped(work, "n1"), stepped(work, "n2")
    assert n2 and n1 and n2["time"] < n1["time"]
    # n1 was stepped only once drained, with no job left; its job ran to its end (>= 12 s after the start)
    assert re.search(r" State=IDLE\+DRAIN[ +]", n1["node"]) and "Reason=ainet.fabric: command step" in n1["node"]
    assert n1["jobs"] == [] and n1["time"] - start >= 10
    assert re.search(r" State=IDLE\+DRAIN[ +]", n2["node"])
    lab.wait(lambda: lab.job_state(job) in ("COMPLETED", "CANCELLED", "FAILED"), timeout=30, what="job end")
    assert lab.job_state(job) == "COMPLETED"
    assert idle(lab, "n1") and idle(lab, "n2")
    assert reason(lab, "n1") == "" and reason(lab, "n2") == ""
    # the administrator's drain: untouched, never stepped
    assert lab.node_state("n3").startswith("IDLE+DRAIN") and reason(lab, "n3").startswith("bad DIMM B2")
    assert stepped(work, "n3") is None and "n3: out of service for another reason (bad DIMM B2" in run.stdout


def test_nothing_pending_touches_no_node(lab, work):
    run = playbook(work, inventory(lab, work, []))
    assert run.returncode == 0, run.stdout[-3000:]
    assert "changed=0" in run.stdout.split("PLAY RECAP")[1] and all(stepped(work, n) is None for n in NODES)
    assert all(idle(lab, n) for n in NODES)


def test_a_failing_check_leaves_the_node_drained_naming_the_check(lab, work):
    inv = inventory(lab, work, "{{ ['command'] if inventory_hostname == 'n2' else [] }}",
                    maintenance_checks=["command"], maintenance_check_command=["false"])
    run = playbook(work, inv)
    assert run.returncode != 0 and "check failed, the node stays out of service" in run.stdout
    assert lab.node_state("n2").startswith("IDLE+DRAIN")
    assert re.match(r"ainet\.fabric: command failed run=\S+ check=command$", reason(lab, "n2")), run.stdout[-4000:]
    assert idle(lab, "n1") and stepped(work, "n1") is None  # control


def test_a_run_killed_mid_window_is_finished_by_the_next(lab, work):
    """The killed run's mark names it (run=); once it made no progress for maintenance_stale_timeout (short here;
    a live run refreshes its mark at a third of it) the next run takes the window over where it stands."""
    job = lab.run_job("n1", 30)
    inv = inventory(lab, work, "{{ ['command'] if inventory_hostname == 'n1' else [] }}", maintenance_stale_timeout=6,
                    maintenance_wait_interval=1)
    proc = playbook(work, inv, background=True)
    lab.wait(lambda: reason(lab, "n1").startswith("ainet.fabric: command drain"), timeout=120, what="n1 draining")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert lab.node_state("n1").startswith(("MIXED+DRAIN", "ALLOCATED+DRAIN")) and stepped(work, "n1") is None
    time.sleep(8)  # past the stale timeout: the killed run made no progress since
    run = playbook(work, inv)
    assert run.returncode == 0, run.stdout[-3000:]
    assert lab.job_state(job) == "COMPLETED"
    assert stepped(work, "n1")["jobs"] == [] and idle(lab, "n1") and reason(lab, "n1") == ""


def test_slurms_own_reboot_returns_the_node_only_through_the_role(lab, work):
    boot = lab.show_node("n2")["BootTime"]
    inv = inventory(lab, work, "{{ ['reboot'] if inventory_hostname == 'n2' else [] }}", maintenance_reboot_timeout=120)
    run = playbook(work, inv)
    assert run.returncode == 0, run.stdout[-3000:]
    assert "Ask Slurm to reboot the node" in run.stdout and lab.show_node("n2")["BootTime"] != boot
    assert idle(lab, "n2") and reason(lab, "n2") == ""
    assert idle(lab, "n1")


def test_a_reboot_loop_holds_the_node_after_the_allowed_reboots(lab, work):
    inv = inventory(lab, work, "{{ ['reboot'] if inventory_hostname == 'n2' else [] }}", maintenance_reboot_timeout=120,
                    maintenance_checks=["command"], maintenance_check_command=["false"])
    for tries in (1, 2):
        run = playbook(work, inv)
        assert run.returncode != 0 and "check failed, the node stays out of service" in run.stdout
        assert re.match(r"ainet\.fabric: reboot failed run=\S+ boot=[0-9a-f-]+ try=%d check=command$" % tries,
                        reason(lab, "n2"))
    run = playbook(work, inv)
    assert run.returncode != 0 and "2 reboots in this window and it is still not right" in run.stdout
    assert "Ask Slurm to reboot the node" not in run.stdout  # no third reboot
    assert lab.node_state("n2").startswith(("IDLE+DRAIN", "DOWN+DRAIN"))
    assert re.match(r"ainet\.fabric: reboot failed run=\S+ boot=[0-9a-f-]+ try=2 check=reboot-loop$", reason(lab, "n2"))


def test_without_a_backend_a_node_running_slurmd_is_refused_naming_slurm(lab, work):
    inv = inventory(lab, work, "{{ ['command'] if inventory_hostname == 'n1' else [] }}", maintenance_backend="")
    run = playbook(work, inv)
    assert run.returncode != 0
    assert "n1: slurmd runs here and no maintenance_backend is configured: set maintenance_backend: slurm" in run.stdout
    assert stepped(work, "n1") is None and idle(lab, "n1") and reason(lab, "n1") == ""
