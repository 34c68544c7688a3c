# -*- coding: utf-8 -*-
"""The Slurm lab (tests/lab/slurm_lab.py) proven with Slurm's own commands (needs root).

A real slurmctld and two real slurmds (Debian 12, Slurm 22.05): nodes come up IDLE; a job pinned
to n1 runs; a drain while it runs shows DRAINING (ALLOCATED+DRAIN) and DRAINED (IDLE+DRAIN) after
it ends, and the job ends COMPLETED, never cancelled; RESUME brings IDLE back; ``scontrol reboot
ASAP nextstate=RESUME`` waits for the running job, "reboots" the node (slurmd re-registers with a
new boot time) and returns it to IDLE. n2 is the control throughout: what is done to n1 never
shows on it. A failing and a cancelled job prove the job verdicts differ.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import slurm_lab  # noqa: E402  pylint: disable=wrong-import-position

# As root a missing Slurm fails (start() names tests/system-deps.sh), it never skips.
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the Slurm lab needs root for network, UTS and time namespaces")


@pytest.fixture(scope="module", name="slurm")
def slurm_fixture():
    start = time.monotonic()
    lab = slurm_lab.start("ts%d" % os.getpid(), ["n1", "n2"])
    lab.startup_s = time.monotonic() - start
    yield lab
    lab.stop()


def sinfo_states(lab):
    """{node: (state, reason)} from ``sinfo -N -h -o "%N %T %E"`` (the long state name, then the reason)."""
    states = {}
    for line in lab.sinfo("-N", "-h", "-o", "%N %T %E").splitlines():
        node, state, reason = (line.split(None, 2) + [""])[:3]
        states[node] = (state, reason)
    return states


def processes_naming(path):
    """Processes whose command line or environment names a file under ``path`` (this test's own check)."""
    found = []
    needle = path.encode() + b"/"
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as cmdline, open("/proc/%s/environ" % entry, "rb") as environ:
                if needle in cmdline.read() or needle in environ.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def test_nodes_come_up_idle(slurm):
    assert slurm.startup_s < 30, slurm.startup_s
    assert slurm.scontrol("ping").strip().endswith("is UP")
    assert sinfo_states(slurm) == {"n1": ("idle", "none"), "n2": ("idle", "none")}
    for node, addr in (("n1", "10.252.0.11"), ("n2", "10.252.0.12")):
        record = slurm.show_node(node)
        assert (record["State"], record["NodeAddr"], record["NodeHostName"]) == ("IDLE", addr, node)
        assert record["Version"] == "22.05.8"


def test_drain_waits_for_the_running_job_then_resume(slurm):
    job = slurm.run_job("n1", 4)
    assert slurm.show_job(job)["NodeList"] == "n1"
    assert slurm.node_state("n1") == "ALLOCATED"
    slurm.scontrol("update", "NodeName=n1", "State=DRAIN", 'Reason=ainet.fabric: lab drain')
    # Draining: the job keeps running; the node takes no new work.
    record = slurm.show_node("n1")
    assert record["State"] == "ALLOCATED+DRAIN"
    assert record["Reason"].startswith("ainet.fabric: lab drain [root@")
    assert sinfo_states(slurm) == {"n1": ("draining", "ainet.fabric: lab drain"), "n2": ("idle", "none")}
    assert slurm.job_state(job) == "RUNNING"
    # Drained once the job is done, and the job completed on its own.
    slurm.wait_node("n1", "IDLE+DRAIN", timeout=30)
    assert sinfo_states(slurm) == {"n1": ("drained", "ainet.fabric: lab drain"), "n2": ("idle", "none")}
    done = slurm.show_job(job)
    assert (done["JobState"], done["ExitCode"]) == ("COMPLETED", "0:0")
    slurm.wait(lambda: job in slurm.jobcomp(), 10, what="jobcomp record")
    assert slurm.jobcomp()[job]["JobState"] == "COMPLETED"
    # sacct reads the same records with --completion (no slurmdbd in the lab).
    completion = slurm.run("sacct", "-c", "-n", "-P", "-j", str(job), "-o", "JobID,State,NodeList")
    assert completion.split() == ["%d|COMPLETED|n1" % job]
    slurm.scontrol("update", "NodeName=n1", "State=RESUME")
    record = slurm.wait_node("n1", "IDLE", timeout=10)
    assert "Reason" not in record
    assert sinfo_states(slurm) == {"n1": ("idle", "none"), "n2": ("idle", "none")}


def test_job_verdicts_differ(slurm):
    failed = slurm.run_job("n2", 0, exit_code=3, wait=False)
    cancelled = slurm.run_job("n2", 60)
    slurm.run("scancel", str(cancelled))
    slurm.wait(lambda: slurm.job_state(failed) == "FAILED" and slurm.job_state(cancelled) == "CANCELLED", 20,
               what="FAILED and CANCELLED (now %s, %s)" % (slurm.job_state(failed), slurm.job_state(cancelled)))
    assert slurm.show_job(failed)["ExitCode"] == "3:0"
    slurm.wait(lambda: {failed, cancelled} <= set(slurm.jobcomp()), 10, what="jobcomp records")
    assert [slurm.jobcomp()[j]["JobState"] for j in (failed, cancelled)] == ["FAILED", "CANCELLED"]
    slurm.wait_node("n2", "IDLE", timeout=20)


def test_reboot_asap_waits_for_the_job_and_comes_back_with_a_new_boot_time(slurm):
    booted = slurm.show_node("n1")["BootTime"]
    other = slurm.show_node("n2")["BootTime"]
    job = slurm.run_job("n1", 3)
    slurm.scontrol("reboot", "ASAP", "nextstate=RESUME", "reason=ainet.fabric: lab reboot", "n1")
    record = slurm.show_node("n1")
    assert record["State"] == "ALLOCATED+DRAIN+REBOOT_REQUESTED"
    assert (record["NextState"], record["Reason"].split(" [")[0]) == ("RESUME", "ainet.fabric: lab reboot")
    # The job ends COMPLETED, the node reboots (slurmd re-registers with a later boot time), then RESUME.
    record = slurm.wait_node("n1", "IDLE", timeout=60)
    assert slurm.show_job(job)["JobState"] == "COMPLETED"
    assert record["BootTime"] > booted, (record["BootTime"], booted)
    assert "Reason" not in record and "NextState" not in record
    with open(slurm.path("log", "reboot.log"), encoding="utf-8") as handle:
        assert handle.read().count("reboot n1 ") == 1
    assert slurm.show_node("n2")["BootTime"] == other
    assert sinfo_states(slurm) == {"n1": ("idle", "none"), "n2": ("idle", "none")}


def test_stop_leaves_nothing(slurm):
    lab = slurm_lab.start("ts%dx" % os.getpid(), ["a1"])
    job = lab.run_job("a1", 60)
    assert lab.job_state(job) == "RUNNING"
    assert len(processes_naming(lab.dir)) >= 4  # the control: munged, slurmctld, slurmd, the job
    lab.stop()
    assert not os.path.exists(lab.dir)
    assert not [n for n in slurm_lab.netns_names() if n.startswith(lab.ctl_ns)]
    assert not processes_naming(lab.dir)
    # The module's lab is untouched.
    assert sinfo_states(slurm) == {"n1": ("idle", "none"), "n2": ("idle", "none")}


def test_stop_spares_a_process_behind_a_stale_pid_file(tmp_path):
    root = tmp_path / "lab"
    (root / "run").mkdir(parents=True)
    (root / "munge").mkdir()
    (root / slurm_lab.MARKER).write_text("")
    foreign = subprocess.Popen(["sleep", "30"])  # pylint: disable=consider-using-with
    try:
        for name in ("run/slurmctld.pid", "run/slurmd-n1.pid", "munge/munged.pid"):
            (root / name).write_text("%d\n" % foreign.pid)
        slurm_lab.stop("ts%dy" % os.getpid(), str(root))
        assert foreign.poll() is None
        assert not root.exists()
    finally:
        foreign.kill()
        foreign.wait()
