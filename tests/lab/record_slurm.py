"""Record real Slurm 22.05 outputs from the Slurm lab (tests/lab/slurm_lab.py) as parser test data (root).

Drives a two-node lab (gpu01, gpu02; 2 CPUs each so one 1-CPU job makes a node MIXED) through the
states a maintenance run meets: idle, draining (mixed and allocated), drained, resumed, job
verdicts, reboot ASAP (requested, issued, back), down, not responding, slurmctld unreachable and
the client's error messages. Each capture is one file holding the command's stdout verbatim; a
command that fails gets ``<name>.stderr`` and its exit code in the index. The index (the command
line of every file, the date, the versions) goes to ORIGIN.md.

Usage: python3 tests/lab/record_slurm.py [OUTDIR]
(default tests/unit/plugins/module_utils/maintenance/data/slurm-22.05)
"""

from __future__ import annotations

import datetime
import os
import platform
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import slurm_lab  # noqa: E402  pylint: disable=wrong-import-position

DEFAULT_OUT = os.path.join(ROOT, "tests", "unit", "plugins", "module_utils", "maintenance", "data", "slurm-22.05")
NODES = ["gpu01", "gpu02"]
REASON = "ainet.fabric: maintenance rail check"


class Recorder:
    def __init__(self, lab, out):
        self.lab = lab
        self.out = out
        self.index = []   # (file, command, rc, what)

    def capture(self, name, what, command, *argv):
        result = subprocess.run([os.path.join(self.lab.bindir, command)] + list(argv), capture_output=True,
                                text=True, check=False, timeout=60)
        with open(os.path.join(self.out, name + ".txt"), "w", encoding="utf-8") as handle:
            handle.write(result.stdout)
        if result.returncode != 0 or result.stderr:
            with open(os.path.join(self.out, name + ".stderr"), "w", encoding="utf-8") as handle:
                handle.write(result.stderr)
        shown = " ".join(_quote(a) for a in [command] + list(argv))
        self.index.append((name, shown, result.returncode, what))
        return result.stdout

    def nodes(self, step, what):
        self.capture(step + ".scontrol-show-node-o", what, "scontrol", "show", "node", "-o")
        self.capture(step + ".sinfo-N", what, "sinfo", "-N", "-h", "-o", "%N %T %E")


def _quote(arg):
    return "'%s'" % arg if (" " in arg or "%" in arg or not arg) else arg


def record(out):
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        if name.endswith((".txt", ".stderr")):
            os.unlink(os.path.join(out, name))
    lab = slurm_lab.start("ainetrec", NODES, cpus=2)
    rec = Recorder(lab, out)
    try:
        _drive(lab, rec)
        _write_origin(rec, out)
    finally:
        lab.stop()


def _drive(lab, rec):
    sc = lab.scontrol
    rec.nodes("01-idle", "both nodes IDLE after start")
    rec.capture("01-idle.scontrol-show-node-gpu01", "the multi-line form of one node", "scontrol", "show", "node", "gpu01")
    rec.capture("01-idle.sinfo", "sinfo's default table", "sinfo")
    rec.capture("01-idle.scontrol-show-config", "the lab's running configuration", "scontrol", "show", "config")
    rec.capture("01-idle.scontrol-ping", "controller reachable", "scontrol", "ping")

    mixed = lab.run_job("gpu01", 6, name="mixedjob", cpus=1)
    full = lab.run_job("gpu02", 6, name="fulljob", cpus=2)
    rec.nodes("02-busy", "gpu01 MIXED (1 of 2 CPUs), gpu02 ALLOCATED (2 of 2)")
    rec.capture("02-busy.scontrol-show-job-o-running", "a RUNNING job", "scontrol", "show", "job", "-o", str(mixed))
    rec.capture("02-busy.squeue", "squeue of both running jobs", "squeue", "-h", "-o", "%i %T %N %j")
    sc("update", "NodeName=gpu01,gpu02", "State=DRAIN", "Reason=" + REASON)
    rec.nodes("03-draining", "both drained while their job runs: MIXED+DRAIN and ALLOCATED+DRAIN, sinfo 'draining'")
    rec.capture("03-draining.scontrol-show-node-gpu01", "the multi-line form, draining", "scontrol", "show", "node",
                "gpu01")
    lab.wait(lambda: lab.node_state("gpu01") == "IDLE+DRAIN" and lab.node_state("gpu02") == "IDLE+DRAIN", 30,
             what="both IDLE+DRAIN")
    rec.nodes("04-drained", "both jobs done: IDLE+DRAIN, sinfo 'drained'")
    rec.capture("04-drained.scontrol-show-job-o-completed", "the jobs that ran during the drain, COMPLETED",
                "scontrol", "show", "job", "-o", str(mixed))
    rec.capture("04-drained.scontrol-show-job-o-completed-2", "the 2-CPU job, COMPLETED", "scontrol", "show", "job",
                "-o", str(full))
    sc("update", "NodeName=gpu01,gpu02", "State=RESUME")
    lab.wait(lambda: lab.node_state("gpu01") == "IDLE" and lab.node_state("gpu02") == "IDLE", 20, what="IDLE")
    rec.nodes("05-resumed", "RESUME: both IDLE, reason cleared")

    failed = lab.run_job("gpu02", 0, name="failjob", exit_code=3, wait=False)
    cancelled = lab.run_job("gpu02", 60, name="canceljob")
    lab.run("scancel", str(cancelled))
    lab.wait(lambda: lab.job_state(failed) == "FAILED" and lab.job_state(cancelled) == "CANCELLED", 20,
             what="FAILED and CANCELLED")
    lab.wait(lambda: {failed, cancelled} <= set(lab.jobcomp()), 10, what="jobcomp records")
    rec.capture("06-verdicts.scontrol-show-job-o-failed", "a job that exited 3: FAILED, ExitCode=3:0", "scontrol",
                "show", "job", "-o", str(failed))
    rec.capture("06-verdicts.scontrol-show-job-o-cancelled", "a job cancelled by scancel: CANCELLED", "scontrol",
                "show", "job", "-o", str(cancelled))
    rec.capture("06-verdicts.scontrol-show-job-o-all", "every job slurmctld still holds (MinJobAge 300 s)",
                "scontrol", "show", "job", "-o")
    rec.capture("06-verdicts.sacct-c", "sacct --completion over jobcomp/filetxt (no slurmdbd)", "sacct", "-c",
                "-n", "-P", "-o", "JobID,JobName,State,ExitCode,NodeList")
    lab.wait_node("gpu02", "IDLE", timeout=20)

    job = lab.run_job("gpu01", 5, name="rebootjob", cpus=2)
    booted = lab.show_node("gpu01")["BootTime"]
    sc("reboot", "ASAP", "nextstate=RESUME", "reason=ainet.fabric: reboot after firmware", "gpu01")
    rec.nodes("07-reboot-requested", "reboot ASAP while a job runs: ALLOCATED+DRAIN+REBOOT_REQUESTED")
    rec.capture("07-reboot-requested.scontrol-show-node-gpu01", "the multi-line form, reboot requested",
                "scontrol", "show", "node", "gpu01")
    lab.wait(lambda: "REBOOT_ISSUED" in lab.node_state("gpu01"), 30, interval=0.1, what="REBOOT_ISSUED")
    rec.nodes("08-reboot-issued", "job done, reboot issued, slurmd not yet back: DOWN+DRAIN+REBOOT_ISSUED")
    lab.wait(lambda: lab.node_state("gpu01") == "IDLE" and lab.show_node("gpu01")["BootTime"] != booted, 60,
             what="gpu01 back")
    rec.nodes("09-rebooted", "gpu01 back with a new BootTime, nextstate RESUME applied: IDLE")
    rec.capture("09-rebooted.scontrol-show-job-o", "the job that ran before the reboot, COMPLETED", "scontrol",
                "show", "job", "-o", str(job))

    sc("update", "NodeName=gpu02", "State=DOWN", "Reason=ainet.fabric: set down by hand")
    rec.nodes("10-down", "gpu02 set DOWN by an operator")
    sc("update", "NodeName=gpu02", "State=RESUME")
    lab.wait_node("gpu02", "IDLE", timeout=20)

    lab.kill("slurmd", "gpu02")
    lab.wait(lambda: "NOT_RESPONDING" in lab.node_state("gpu02"), 60, what="gpu02 NOT_RESPONDING")
    rec.nodes("11-not-responding", "gpu02's slurmd stopped: IDLE+NOT_RESPONDING, sinfo 'idle*'")
    lab.wait(lambda: lab.node_state("gpu02").startswith("DOWN"), 90, what="gpu02 DOWN")
    rec.nodes("12-down-not-responding", "after SlurmdTimeout: DOWN+NOT_RESPONDING, reason 'Not responding'")
    lab.start_slurmd("gpu02")
    lab.wait_node("gpu02", "IDLE", timeout=30)
    rec.nodes("13-back", "gpu02's slurmd started again: IDLE (ReturnToService=2)")

    rec.capture("14-errors.update-unknown-node", "drain of a node slurmctld does not know", "scontrol", "update",
                "NodeName=gpu99", "State=DRAIN", "Reason=x")
    rec.capture("14-errors.update-drain-without-reason", "drain without a reason", "scontrol", "update",
                "NodeName=gpu01", "State=DRAIN")
    rec.capture("14-errors.resume-idle-node", "resume of a node that is not drained", "scontrol", "update",
                "NodeName=gpu01", "State=RESUME")
    rec.capture("14-errors.show-unknown-node", "show node of an unknown node", "scontrol", "show", "node", "-o",
                "gpu99")
    rec.capture("14-errors.show-unknown-job", "show job of an unknown job id", "scontrol", "show", "job", "-o",
                "999999")
    lab.kill("slurmctld")
    time.sleep(0.5)
    rec.capture("15-no-controller.scontrol-show-node-o", "slurmctld stopped", "scontrol", "show", "node", "-o")
    rec.capture("15-no-controller.sinfo-N", "slurmctld stopped", "sinfo", "-N", "-h", "-o", "%N %T %E")
    rec.capture("15-no-controller.scontrol-ping", "slurmctld stopped", "scontrol", "ping")
    shutil.copyfile(lab.path("jobcomp.txt"), os.path.join(rec.out, "06-verdicts.jobcomp.txt"))
    rec.index.append(("06-verdicts.jobcomp", "(the file JobCompLoc names, copied at the end)", 0,
                      "jobcomp/filetxt: one line per finished job of this recording"))


def _version(*cmd):
    return subprocess.run(list(cmd), capture_output=True, text=True, check=False).stdout.strip()


def _write_origin(rec, out):
    slurm = _version("dpkg-query", "-W", "-f", "${Version}", "slurmctld")
    munge = _version("dpkg-query", "-W", "-f", "${Version}", "munge")
    with open("/etc/debian_version", encoding="utf-8") as handle:
        debian = handle.read().strip()
    lines = [
        "# Origin of the Slurm 22.05 test data",
        "",
        "Real outputs, recorded %s UTC by `tests/lab/record_slurm.py` on the Slurm lab"
        % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "(`tests/lab/slurm_lab.py`: a real slurmctld and one real slurmd per node, each in its own network",
        "namespace): Debian %s, slurmctld/slurmd/slurm-client %s, munge %s, kernel %s."
        % (debian, slurm, munge, platform.release()),
        "Cluster `ainetrec`, nodes gpu01 and gpu02 (CPUs=2, RealMemory=100), partition `lab`; the lab's",
        "slurm.conf is in `01-idle.scontrol-show-config.txt`. Each `.txt` holds the command's stdout",
        "byte for byte; a command that wrote to stderr or failed also has a `.stderr` file, its exit code",
        "is in the table. The commands ran as root from the wrappers in the lab's `bin/` (the plain Slurm",
        "client with `SLURM_CONF` set). Timestamps, job ids and boot times are those of the recording.",
        "Re-record with `sudo python3 tests/lab/record_slurm.py` (about two minutes).",
        "",
        "| file | command | rc | state |",
        "|---|---|---|---|",
    ]
    for name, command, rc, what in rec.index:
        files = "`%s.txt`" % name + (" + `.stderr`" if os.path.exists(os.path.join(out, name + ".stderr")) else "")
        lines.append("| %s | `%s` | %d | %s |" % (files, command.replace("|", "\\|"), rc, what))
    lines.append("")
    with open(os.path.join(out, "ORIGIN.md"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))


if __name__ == "__main__":
    record(os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT)
