# -*- coding: utf-8 -*-
"""Field review of issue 41 (docs/reviews/41-maintenance.md): the maintenance role against the real Slurm lab
(tests/lab/slurm_lab.py, Debian 12's Slurm 22.05; root), each case with exactly one thing wrong and a control.

Defects are strict xfails ("review 41 D<n>"): they pass once the defect is fixed and the xfail is removed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import slurm_lab  # noqa: E402  pylint: disable=wrong-import-position
except ImportError:
    slurm_lab = None
from test_maintenance_slurm import NODES, PLAY, idle, inventory, reason  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = [
    pytest.mark.skipif(slurm_lab is None, reason="tests/lab/slurm_lab.py is not in this checkout"),
    pytest.mark.skipif(os.geteuid() != 0, reason="the Slurm lab needs root for network, UTS and time namespaces"),
    pytest.mark.skipif(slurm_lab is not None and os.geteuid() == 0 and bool(slurm_lab.missing_programs()),
                       reason="Slurm/munge missing: run tests/system-deps.sh as root"),
]

# the step appends one line per run (a second run of the same step on the same node shows as a second line), and
# records what Slurm said about the node at that moment
STEP = """#!/bin/sh
PATH=%(bindir)s:$PATH
sleep %(sleep)d
echo "$(date +%%s.%%N) $(scontrol show node -o "$1")" >> %(dir)s/stepped-"$1"
"""


@pytest.fixture(scope="module")
def lab():
    lab = slurm_lab.start("rv41%d" % (os.getpid() % 10000), NODES)
    yield lab
    lab.stop()


@pytest.fixture
def fresh_lab():
    """A lab of its own, for a test whose verdict reads the nodes' boot times: a reboot that an earlier test asked
    Slurm for (the pending-reboot case) may still be landing on the module's lab."""
    lab = slurm_lab.start("rv41b%d" % (os.getpid() % 10000), NODES)
    yield lab
    lab.stop()


@pytest.fixture
def work(lab, tmp_path):
    step = tmp_path / "step.sh"
    step.write_text(STEP % {"bindir": lab.bindir, "dir": tmp_path, "sleep": 0})
    step.chmod(0o755)
    (tmp_path / "play.yml").write_text(PLAY)
    yield tmp_path
    for node in NODES:
        lab.scontrol("update", "NodeName=%s" % node, "State=RESUME", check=False)
    lab.wait(lambda: all(idle(lab, n) for n in NODES), timeout=120, what="nodes idle again")


def playbook(work, inv, *args, background=False):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", str(inv), str(work / "play.yml")] + list(args)
    if background:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)


def slow_step(lab, work, seconds):
    (work / "step.sh").write_text(STEP % {"bindir": lab.bindir, "dir": work, "sleep": seconds})


def steps_run(work, node):
    path = work / ("stepped-" + node)
    return path.read_text().splitlines() if path.exists() else []


def only(node, steps):
    return "{{ %r if inventory_hostname == %r else [] }}" % (steps, node)


# ---- parallel limits: nodes already drained count -------------------------------------------------------------

def test_control_an_admin_drain_in_the_same_rail_group_blocks_the_node(lab, work):
    """Control: n1 and n2 share a rail group, max_per_group 1, n2 drained by an administrator: n1 waits."""
    lab.scontrol("update", "NodeName=n2", "State=DRAIN", "Reason=bad DIMM B2")
    run = playbook(work, inventory(lab, work, only("n1", ["command"])))
    assert run.returncode == 0, run.stdout[-3000:]
    assert steps_run(work, "n1") == [] and "maintenance_max_per_group is 1" in run.stdout
    assert idle(lab, "n1") and reason(lab, "n2").startswith("bad DIMM B2")


def test_an_admin_drain_outside_the_limit_still_counts_against_the_rail_group(lab, work):
    """One thing differs from the control: the run is limited to n1 (n2 stays in the inventory, drained)."""
    lab.scontrol("update", "NodeName=n2", "State=DRAIN", "Reason=bad DIMM B2")
    run = playbook(work, inventory(lab, work, only("n1", ["command"])), "--limit", "n1")
    assert run.returncode == 0, run.stdout[-3000:]
    assert steps_run(work, "n1") == [], "n1 was stepped while n2 of its rail group was drained: " + run.stdout[-1500:]


# ---- two runs at once (an AWX job launched twice) -------------------------------------------------------------

def test_two_runs_at_once_step_a_node_once(lab, work):
    """A job on n1; the same run launched twice, the second while the first waits on the job. The step takes 5 s
    (a driver restart does). The node must be stepped once, and given back once, by one of them."""
    job = lab.run_job("n1", 15)
    slow_step(lab, work, 5)
    inv = inventory(lab, work, only("n1", ["command"]))
    first = playbook(work, inv, background=True)
    lab.wait(lambda: reason(lab, "n1").startswith("ainet.fabric: command drain"), timeout=120, what="n1 draining")
    second = playbook(work, inv, background=True)
    out1, out2 = first.communicate(timeout=600)[0], second.communicate(timeout=600)[0]
    assert lab.job_state(job) == "COMPLETED"
    assert idle(lab, "n1"), out1[-1500:] + out2[-1500:]
    assert len(steps_run(work, "n1")) == 1, (steps_run(work, "n1"), out1[-1200:], out2[-1200:])


def test_control_one_run_steps_a_busy_node_once_after_its_job(lab, work):
    job = lab.run_job("n1", 8)
    run = playbook(work, inventory(lab, work, only("n1", ["command"])))
    assert run.returncode == 0, run.stdout[-3000:]
    lines = steps_run(work, "n1")
    assert len(lines) == 1 and " State=IDLE+DRAIN " in lines[0], lines
    assert lab.job_state(job) == "COMPLETED" and idle(lab, "n1") and reason(lab, "n1") == ""


# ---- --check changes nothing in Slurm ---------------------------------------------------------------------------

def test_check_mode_changes_nothing_in_slurm(lab, work):
    """Held: with --check, a pending node (idle), a busy one and a window of ours left failed by an earlier run:
    no scontrol update, no step, and the failed window stays as it was."""
    lab.scontrol("update", "NodeName=n3", "State=DRAIN", "Reason=ainet.fabric: command failed check=command")
    job = lab.run_job("n1", 10)
    before = dict((n, (lab.node_state(n), reason(lab, n))) for n in NODES)
    run = playbook(work, inventory(lab, work, ["command"]), "--check")
    assert run.returncode == 0, run.stdout[-3000:]
    assert all(steps_run(work, n) == [] for n in NODES)
    after = dict((n, (lab.node_state(n), reason(lab, n))) for n in NODES)
    assert after == before, (before, after)
    assert "would open on" in run.stdout
    lab.wait(lambda: lab.job_state(job) == "COMPLETED", timeout=60, what="job end")


# ---- a reboot request someone else left pending --------------------------------------------------------------

def test_a_pending_reboot_request_does_not_return_the_node_mid_window(lab, work):
    """An administrator asked Slurm to reboot n1 when its job ends (nextstate=RESUME, REBOOT_REQUESTED). The
    window drains n1, waits for the job, runs its step (which takes a while): at the step's end the node must
    still be out of service (DRAIN), not handed back by Slurm's own reboot."""
    job = lab.run_job("n1", 30)
    lab.scontrol("reboot", "nextstate=RESUME", "n1")
    assert "REBOOT_REQUESTED" in lab.node_state("n1")
    slow_step(lab, work, 25)
    run = playbook(work, inventory(lab, work, only("n1", ["command"])))
    assert lab.job_state(job) == "COMPLETED"
    lines = steps_run(work, "n1")
    assert lines, run.stdout[-3000:]
    assert "DRAIN" in lines[-1].split(" State=")[1].split()[0].split("+"), lines


def test_control_without_a_pending_reboot_the_node_stays_drained_through_a_long_step(lab, work):
    job = lab.run_job("n1", 8)
    slow_step(lab, work, 25)
    run = playbook(work, inventory(lab, work, only("n1", ["command"])))
    assert run.returncode == 0, run.stdout[-3000:]
    lines = steps_run(work, "n1")
    assert len(lines) == 1 and " State=IDLE+DRAIN " in lines[0], lines
    assert lab.job_state(job) == "COMPLETED" and idle(lab, "n1")


# ---- the done-when's converge: a step and a reboot on both nodes, a job on one ---------------------------------

def test_a_step_and_slurms_reboot_on_both_nodes_idle_first_busy_after_its_job(fresh_lab, tmp_path):
    """Held: n1 runs a job, n2 is idle; both need the step and a reboot (Slurm's RebootProgram, nextstate=DOWN);
    max_per_group 1 puts them in two batches. n2 is stepped and rebooted first, n1 only once its job ended; the
    job ends COMPLETED; both nodes come back in service with no reason left."""
    lab, work = fresh_lab, tmp_path
    step = work / "step.sh"
    step.write_text(STEP % {"bindir": lab.bindir, "dir": work, "sleep": 0})
    step.chmod(0o755)
    (work / "play.yml").write_text(PLAY)
    boots = dict((n, lab.show_node(n)["BootTime"]) for n in ("n1", "n2"))
    job = lab.run_job("n1", 20)
    start = time.time()
    run = playbook(work, inventory(lab, work, "{{ ['command', 'reboot'] if inventory_hostname in ['n1', 'n2'] "
                                              "else [] }}", maintenance_reboot_timeout=120))
    assert run.returncode == 0, run.stdout[-3000:]
    n1, n2 = steps_run(work, "n1"), steps_run(work, "n2")
    assert len(n1) == 1 and len(n2) == 1
    assert float(n2[0].split()[0]) < float(n1[0].split()[0]) and float(n1[0].split()[0]) - start >= 15
    assert " State=IDLE+DRAIN " in n1[0] and " State=IDLE+DRAIN " in n2[0]
    assert lab.job_state(job) == "COMPLETED"
    assert all(lab.show_node(n)["BootTime"] != boots[n] for n in ("n1", "n2"))
    assert idle(lab, "n1") and idle(lab, "n2") and reason(lab, "n1") == "" and reason(lab, "n2") == ""
    assert "Ask Slurm to reboot the node" in run.stdout
