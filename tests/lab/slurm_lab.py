"""A real Slurm for the tests: Debian 12's slurmctld and one slurmd per node, each in a network namespace.

Nothing is simulated on the Slurm side: the daemons are Debian's ``slurmctld``/``slurmd`` 22.05,
authenticated by a ``munged`` of the lab's own (own key, own socket), and the client commands
(``scontrol``, ``sinfo``, ``squeue``, ``sbatch``, ``scancel``) talk to the controller over TCP.

Layout (everything named after the lab prefix, ``tests/lab/labname.py``):

* ``<prefix>-slurm``: a network namespace with bridge ``br0`` holding 10.252.0.1/24. slurmctld
  runs here (SlurmctldHost ``ctl``) and so do the client commands.
* ``<prefix>-slurm-<node>``: one namespace per node, a veth into ``br0`` with 10.252.0.(11+i)/24.
  Its slurmd runs in a UTS namespace of its own whose hostname is the node name, so slurmd finds its
  own ``NodeName``; the spool directory, pid file and log carry ``%n``, because the namespaces
  share the machine's filesystem.
* The state directory (default ``/tmp/<prefix>-slurm``): slurm.conf, the munge key and socket,
  StateSaveLocation, per-node spool directories, logs, job output, the jobcomp file, and ``bin/``
  with wrappers of the client commands that enter the controller namespace with ``SLURM_CONF`` set
  (put it first on ``PATH`` and ``scontrol``/``sinfo`` work as on a login node).

No address of the lab exists outside its namespaces, so no lab packet leaves the lab.

Accounting: Slurm 22.05 has no ``accounting_storage/filetxt`` any more (only ``none``, ``slurmdbd``
and ``mysql`` are shipped), so ``sacct`` would need slurmdbd and a database. The lab uses
``AccountingStorageType=accounting_storage/none`` and ``JobCompType=jobcomp/filetxt``: the jobcomp
file gets one line per finished job with its final ``JobState`` (COMPLETED, CANCELLED, FAILED,
TIMEOUT, NODE_FAIL ...), and ``scontrol show job`` keeps a finished job for ``MinJobAge`` (300 s).

Reboots: ``RebootProgram`` is a script of the lab (``reboot.sh``). It stops the node's slurmd and
starts it again in a fresh time namespace whose boot clock starts near zero, so slurmd reports a
new boot time (``uptime`` from ``sysinfo()`` follows the time namespace since Linux 5.6) and
slurmctld completes ``scontrol reboot`` as for a real reboot (REBOOT_ISSUED, then the
``nextstate``). The node's namespaces and files survive: a reboot here does not clear
network state, kernel modules or /run.

Usage from a shell (root)::

    python3 tests/lab/slurm_lab.py up [--nodes n1,n2] [--cpus 1] [--dir DIR]   # prints the environment to export
    python3 tests/lab/slurm_lab.py down [--dir DIR]

From Python (a pytest fixture: ``lab = slurm_lab.start(); yield lab; lab.stop()``)::

    lab = slurm_lab.start(prefix, ["n1", "n2"])
    job = lab.run_job("n1", 30)        # sbatch -w n1, returns the job id
    lab.job_state(job)                 # "RUNNING", later "COMPLETED"
    lab.scontrol("update", "NodeName=n1", "State=DRAIN", "Reason=x")
    lab.stop()
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labname import prefix as default_prefix  # noqa: E402  pylint: disable=wrong-import-position

NET = "10.252.0"
CTL_ADDR = NET + ".1"
NODE_NAME = re.compile(r"^[a-z][a-z0-9]{0,11}$")
CLIENTS = ("scontrol", "sinfo", "squeue", "sbatch", "scancel", "srun", "sacct", "sdiag")
MARKER = ".ainet-slurm-lab"
DAEMONS = ("munged", "slurmctld", "slurmd")


def _sh(*args, check=True, ns=None, env=None, timeout=60):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + [str(a) for a in args]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env, timeout=timeout)
    if check and result.returncode != 0:
        raise RuntimeError("%s: rc=%d %s" % (" ".join(cmd), result.returncode, (result.stderr or result.stdout).strip()))
    return result.stdout


def missing_programs():
    """The programs the lab needs that this machine lacks (tests/system-deps.sh installs them)."""
    wanted = ("slurmctld", "slurmd", "scontrol", "sbatch", "munged", "mungekey", "ip", "unshare", "nsenter")
    return [p for p in wanted if shutil.which(p) is None and not os.path.exists("/usr/sbin/" + p)]


def slurm_cgroup_version():
    """The cgroup plugin slurmd 22.05 picks here (its autodetect_cgroup_version(), from the mount table).

    Only ``cgroup/v1`` suits the lab: with cgroup/v2, slurmd without systemd delegation creates and moves
    into /sys/fs/cgroup/system.slice/slurmstepd, one place shared by every slurmd of every lab.
    """
    mounts = {}
    with open("/proc/self/mounts", encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            if len(fields) >= 3:
                mounts[fields[1]] = fields[2]
    top = mounts.get("/sys/fs/cgroup")
    if top == "cgroup2":
        return "cgroup/v2"
    if top == "tmpfs":
        return {"cgroup": "cgroup/v1", "cgroup2": "cgroup/v2"}.get(mounts.get("/sys/fs/cgroup/systemd"))
    return None


def _write(path, text, mode=0o644):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, mode)


def _host_boot_epoch():
    """Wall-clock time of the machine's boot (CLOCK_REALTIME is not namespaced; CLOCK_BOOTTIME is)."""
    with open("/proc/uptime", encoding="utf-8") as handle:
        return time.time() - float(handle.read().split()[0])


class SlurmLab:
    """A running lab. ``env`` holds SLURM_CONF and a PATH whose first entry has the client wrappers."""

    def __init__(self, prefix, nodes, root):
        self.prefix = prefix
        self.nodes = list(nodes)
        self.dir = root
        self.conf = os.path.join(root, "etc", "slurm.conf")
        self.bindir = os.path.join(root, "bin")
        self.ctl_ns = prefix + "-slurm"
        self.cluster = prefix
        self.cpus = 1
        self.topology = None  # (TopologyPlugin, topology.conf text), see start()
        self.env = {"SLURM_CONF": self.conf, "PATH": self.bindir + os.pathsep + os.environ.get("PATH", "")}

    # ----- names -----------------------------------------------------------------------------
    def node_ns(self, node):
        return "%s-slurm-%s" % (self.prefix, node)

    def node_addr(self, node):
        return "%s.%d" % (NET, 11 + self.nodes.index(node))

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    # ----- client commands -------------------------------------------------------------------
    def run(self, command, *argv, check=True, timeout=60):
        """A Slurm client command (``scontrol``, ``sinfo`` ...) against this lab; returns stdout."""
        return _sh(os.path.join(self.bindir, command), *argv, check=check, timeout=timeout)

    def scontrol(self, *argv, check=True):
        return self.run("scontrol", *argv, check=check)

    def sinfo(self, *argv, check=True):
        return self.run("sinfo", *argv, check=check)

    def run_job(self, node, seconds, name="lab", exit_code=0, wait=True, timeout=30, cpus=1):
        """Submit a batch job pinned to ``node`` (``sbatch -w``) that sleeps ``seconds`` and exits with
        ``exit_code``; returns its id.

        With ``wait`` (the default) it returns once slurmctld reports the job RUNNING, so a drain
        right after it meets a busy node.
        """
        if node not in self.nodes:
            raise ValueError("not a node of this lab: %r" % node)
        out = self.run("sbatch", "--parsable", "-w", node, "-N1", "-n%d" % int(cpus), "-J", name, "-D", self.path("jobs"),
                       "-o", self.path("jobs", "%j.out"), "--wrap", "sleep %d; exit %d" % (int(seconds), int(exit_code)))
        job_id = int(out.strip().split(";")[0])
        if wait:
            self.wait(lambda: self.job_state(job_id) == "RUNNING", timeout,
                      what="job %d RUNNING (now %s)" % (job_id, self.job_state(job_id)))
        return job_id

    def show_job(self, job_id):
        """``scontrol show job -o`` as a dict (empty once the job left slurmctld's memory after MinJobAge)."""
        out = self.scontrol("show", "job", "-o", str(int(job_id)), check=False)
        return _fields(out)

    def job_state(self, job_id):
        """The job's state: from slurmctld while it knows the job, else from the jobcomp file, else None."""
        state = self.show_job(job_id).get("JobState")
        if state:
            return state
        return self.jobcomp().get(int(job_id), {}).get("JobState")

    def jobcomp(self):
        """The jobcomp/filetxt records: {job id: {field: value}}, one per finished job."""
        records = {}
        try:
            with open(self.path("jobcomp.txt"), encoding="utf-8") as handle:
                for line in handle:
                    fields = _fields(line)
                    if "JobId" in fields:
                        records[int(fields["JobId"])] = fields
        except FileNotFoundError:
            pass
        return records

    def show_node(self, node):
        """``scontrol show node -o <node>`` as a dict."""
        return _fields(self.scontrol("show", "node", "-o", node))

    def node_state(self, node):
        """The node's State field, e.g. ``IDLE``, ``IDLE+DRAIN``, ``ALLOCATED+DRAIN``, ``DOWN+REBOOT_ISSUED``."""
        return self.show_node(node).get("State", "")

    def wait(self, predicate, timeout=60, interval=0.25, what="condition"):
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError("slurm lab: %s not reached in %ss" % (what, timeout))
            time.sleep(interval)

    def wait_node(self, node, state, timeout=60):
        """Wait until the node's State equals ``state`` (e.g. ``IDLE``); returns the full record."""
        return self.wait(lambda: self.show_node(node) if self.node_state(node) == state else None,
                         timeout, what="%s State=%s (now %s)" % (node, state, self.node_state(node)))

    # ----- daemons ---------------------------------------------------------------------------
    def _pidfile(self, daemon, node=None):
        if daemon == "munged":
            return self.path("munge", "munged.pid")
        if daemon == "slurmctld":
            return self.path("run", "slurmctld.pid")
        return self.path("run", "slurmd-%s.pid" % node)

    def pid(self, daemon, node=None):
        try:
            with open(self._pidfile(daemon, node), encoding="utf-8") as handle:
                pid = int(handle.read().split()[0])
        except (FileNotFoundError, ValueError, IndexError):
            return None
        return pid if _alive(pid) else None

    def start_slurmd(self, node):
        """Start the node's slurmd (in the node's network namespace and a UTS namespace named after it)."""
        _sh(self.path("slurmd-start.sh"), node, timeout=30)
        self.wait(lambda: self.pid("slurmd", node), 20, what="slurmd %s pid file" % node)

    def kill(self, daemon, node=None, sig=signal.SIGTERM, timeout=20):
        """Stop one daemon of the lab (``slurmd`` with its node, ``slurmctld``, ``munged``) and wait until it is gone."""
        pid = self.pid(daemon, node)
        if pid is None:
            return
        os.kill(pid, sig)
        self.wait(lambda: not _alive(pid), timeout, interval=0.1, what="%s %s exit" % (daemon, node or ""))

    def log(self, name):
        try:
            with open(self.path("log", name + ".log"), encoding="utf-8") as handle:
                return handle.read()
        except FileNotFoundError:
            return ""

    def stop(self):
        """Stop every daemon and job of this lab, delete its namespaces and its state directory."""
        stop(self.prefix, self.dir)


def _fields(text):
    """``key=value key=value`` (scontrol -o, jobcomp/filetxt) to a dict; values run until the next `` key=``."""
    fields = {}
    text = text.strip()
    if not text:
        return fields
    for match in re.finditer(r"(?:^|\s)([A-Za-z][A-Za-z0-9_:/]*)=(.*?)(?=\s[A-Za-z][A-Za-z0-9_:/]*=|$)", text):
        fields[match.group(1)] = match.group(2)
    return fields


SLURM_CONF = """\
# The Slurm lab's configuration (tests/lab/slurm_lab.py): written by the lab, removed with it.
ClusterName={cluster}
SlurmctldHost=ctl({ctl_addr})
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={dir}/munge/munge.socket
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool/%n
SlurmctldPidFile={dir}/run/slurmctld.pid
SlurmdPidFile={dir}/run/slurmd-%n.pid
SlurmctldLogFile={dir}/log/slurmctld.log
SlurmdLogFile={dir}/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig={dir}/etc/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={dir}/jobcomp.txt
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
# Schedule at once (batch jobs are otherwise held up to 3 s, the main loop runs every 60 s).
SchedulerParameters=batch_sched_delay=0,sched_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
RebootProgram={dir}/reboot.sh
ResumeTimeout=60
SlurmdTimeout=30
MinJobAge=300
KillWait=5
InactiveLimit=0
Waittime=0
# The lab's nodes claim CPUs=<cpus> (start(); 1 by default) and 100 MB whatever the machine has.
SlurmdParameters=config_overrides
MailProg=/bin/true
{topology}{nodes}
PartitionName=lab Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""

# Starts one node's slurmd: enter its network namespace (nsenter, not ``ip netns exec``: that one
# mounts a fresh /sys without the cgroup mounts slurmd 22.05 insists on), then a UTS namespace whose hostname is the
# node (slurmd finds its NodeName from it) and a time namespace whose boot clock starts at
# BOOT_UPTIME seconds (a "fresh boot" for the reboot script; the machine's uptime otherwise).
SLURMD_START = """\
#!/bin/sh
# Start the Slurm lab's slurmd for node $1 (tests/lab/slurm_lab.py). $2: its uptime in seconds after a
# simulated reboot (optional).
set -eu
node=$1
nodes=" {nodes} "
case "$nodes" in *" $node "*) ;; *) echo "not a lab node: $node" >&2; exit 2;; esac
offset=0
if [ -n "${{2:-}}" ]; then
    now=$(date +%s)
    offset=$(( {boot_epoch} - now + $2 ))
fi
# shellcheck disable=SC2016  # $1 and $2 are the inner shell's arguments
exec nsenter --net=/run/netns/{prefix}-slurm-"$node" unshare --uts --time --fork --boottime "$offset" \\
    sh -c 'hostname "$1" && exec setsid /usr/sbin/slurmd -f "$2" -N "$1"' slurmd-start "$node" {conf} \\
    </dev/null >>{dir}/log/slurmd-start.log 2>&1
"""

# RebootProgram: run by slurmd (via system()) inside the node's namespaces. Detach, let slurmd's
# system() return, stop slurmd, then start it again with a boot clock near zero.
REBOOT = """\
#!/bin/sh
# The Slurm lab's RebootProgram (tests/lab/slurm_lab.py): a "reboot" restarts this node's slurmd with
# a new boot time. Arguments (scontrol reboot features) are logged and otherwise ignored.
node=$(hostname)
echo "$(date -u +%FT%TZ) reboot $node args: $*" >>{dir}/log/reboot.log
# shellcheck disable=SC2016  # $1 is the inner shell's argument
setsid -f sh -c '
    pidfile={dir}/run/slurmd-$1.pid
    sleep 1
    pid=$(cat "$pidfile" 2>/dev/null) && kill "$pid" 2>/dev/null
    i=0; while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
    sleep 1
    {dir}/slurmd-start.sh "$1" 1
' reboot "$node" </dev/null >>{dir}/log/reboot.log 2>&1
exit 0
"""


def _client_wrapper(ctl_ns, conf, program):
    return ("#!/bin/sh\n# %s against the Slurm lab (tests/lab/slurm_lab.py).\n"
            "exec ip netns exec %s env SLURM_CONF=%s /usr/bin/%s \"$@\"\n" % (program, ctl_ns, conf, program))


def start(prefix=None, nodes=("n1", "n2"), root=None, timeout=60, cpus=1, topology=None):
    """Bring a Slurm lab up and wait until every node is IDLE; returns a SlurmLab. ``topology``: ``(TopologyPlugin,
    topology.conf text)``, e.g. ``("topology/tree", "SwitchName=s1 Nodes=n[1-2]\n")``: written beside slurm.conf
    (where slurmctld 22.05 reads it); None: no topology plugin (Slurm's default)."""
    prefix = prefix or default_prefix()
    nodes = list(nodes)
    if not nodes or len(set(nodes)) != len(nodes) or len(nodes) > 200:
        raise ValueError("nodes: give 1-200 distinct names, got %r" % (nodes,))
    for node in nodes:
        if not NODE_NAME.match(node):
            raise ValueError("node name %r: use 1-12 lower-case letters and digits, starting with a letter" % node)
    if os.geteuid() != 0:
        raise PermissionError("the Slurm lab needs root (network namespaces, munged, slurmd)")
    missing = missing_programs()
    if missing:
        raise RuntimeError("missing %s: run tests/system-deps.sh as root" % ", ".join(missing))
    if slurm_cgroup_version() != "cgroup/v1":
        raise RuntimeError("the Slurm lab needs the cgroup v1 layout at /sys/fs/cgroup (slurmd 22.05 would pick %s here; "
                           "see tests/lab/README.md, Limits)" % (slurm_cgroup_version() or "no cgroup plugin"))
    root = os.path.abspath(root or "/tmp/%s-slurm" % prefix)
    stop(prefix, root)
    lab = SlurmLab(prefix, nodes, root)
    lab.cpus = int(cpus)
    lab.topology = topology
    try:
        _setup(lab)
        lab.wait(lambda: all(lab.node_state(n) == "IDLE" for n in nodes), timeout,
                 what="all nodes IDLE (%s)" % lab.sinfo("-N", "-h", "-o", "%N %T", check=False).strip())
    except Exception as exc:
        logs = _log_tails(lab)
        if os.environ.get("AINET_SLURM_LAB_KEEP") != "1":
            stop(prefix, root)
        raise RuntimeError("%s\n%s" % (exc, logs)) from exc
    except BaseException:
        stop(prefix, root)
        raise
    return lab


def _log_tails(lab, lines=15):
    """The last lines of each daemon log, for an error message when the lab does not come up."""
    parts = []
    for name in sorted(os.listdir(lab.path("log"))) if os.path.isdir(lab.path("log")) else []:
        with open(lab.path("log", name), errors="replace", encoding="utf-8") as handle:
            tail = handle.read().splitlines()[-lines:]
        parts.append("--- %s\n%s" % (name, "\n".join(tail)))
    return "\n".join(parts)


def _setup(lab):
    if os.path.isdir(lab.dir) and os.listdir(lab.dir):
        raise RuntimeError("%s exists and is not a Slurm lab's directory: choose another --dir" % lab.dir)
    os.makedirs(lab.dir, mode=0o711, exist_ok=True)
    _write(lab.path(MARKER), "a Slurm lab's state (tests/lab/slurm_lab.py); removed by its stop()\n")
    for sub in ("etc", "bin", "munge", "state", "spool", "run", "log", "jobs"):
        os.makedirs(lab.path(sub), mode=0o700, exist_ok=True)
    # munged wants the path to its socket searchable by everyone; everything else stays root's alone.
    os.chmod(lab.dir, 0o711)
    os.chmod(lab.path("munge"), 0o711)
    # munge: a key of the lab's own, readable by root only, and a socket in the lab directory.
    _sh("mungekey", "--create", "--keyfile", lab.path("munge", "munge.key"), "--bits", "1024")
    os.chmod(lab.path("munge", "munge.key"), 0o600)
    _sh("munged", "--socket", lab.path("munge", "munge.socket"), "--key-file", lab.path("munge", "munge.key"),
        "--pid-file", lab.path("munge", "munged.pid"), "--log-file", lab.path("log", "munged.log"),
        "--seed-file", lab.path("munge", "munged.seed"), "--num-threads", "2")
    lab.wait(lambda: lab.pid("munged"), 10, what="munged pid file")
    node_lines = "\n".join("NodeName=%s NodeHostname=%s NodeAddr=%s CPUs=%d RealMemory=100 State=UNKNOWN"
                           % (n, n, lab.node_addr(n), lab.cpus) for n in lab.nodes)
    topology_line = ""
    if lab.topology:
        plugin, text = lab.topology
        if not re.match(r"^topology/[a-z0-9_]+\Z", plugin):
            raise ValueError("topology plugin %r: give topology/<name>" % (plugin,))
        _write(lab.path("etc", "topology.conf"), text)
        topology_line = "TopologyPlugin=%s\n" % plugin
    _write(lab.conf, SLURM_CONF.format(cluster=lab.cluster, ctl_addr=CTL_ADDR, dir=lab.dir, nodes=node_lines,
                                       topology=topology_line))
    _write(lab.path("etc", "plugstack.conf"), "")
    _write(lab.path("slurmd-start.sh"), SLURMD_START.format(nodes=" ".join(lab.nodes), boot_epoch=int(_host_boot_epoch()),
                                                            prefix=lab.prefix, conf=lab.conf, dir=lab.dir), 0o700)
    _write(lab.path("reboot.sh"), REBOOT.format(dir=lab.dir), 0o700)
    for program in CLIENTS:
        _write(os.path.join(lab.bindir, program), _client_wrapper(lab.ctl_ns, lab.conf, program), 0o700)
    # The network: a bridge in the controller's namespace, a veth per node. Nothing in the machine's own namespace.
    _sh("ip", "netns", "add", lab.ctl_ns)
    _sh("ip", "link", "set", "lo", "up", ns=lab.ctl_ns)
    _sh("ip", "link", "add", "br0", "type", "bridge", ns=lab.ctl_ns)
    _sh("ip", "addr", "add", CTL_ADDR + "/24", "dev", "br0", ns=lab.ctl_ns)
    _sh("ip", "link", "set", "br0", "up", ns=lab.ctl_ns)
    for index, node in enumerate(lab.nodes):
        ns, port = lab.node_ns(node), "p%d" % index
        _sh("ip", "netns", "add", ns)
        _sh("ip", "link", "set", "lo", "up", ns=ns)
        _sh("ip", "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns, ns=lab.ctl_ns)
        _sh("ip", "link", "set", port, "master", "br0", "up", ns=lab.ctl_ns)
        _sh("ip", "addr", "add", lab.node_addr(node) + "/24", "dev", "eth0", ns=ns)
        _sh("ip", "link", "set", "eth0", "up", ns=ns)
    # slurmctld runs only on a host named like SlurmctldHost: a UTS namespace named "ctl".
    _sh("unshare", "--uts", "sh", "-c", 'hostname ctl && exec setsid /usr/sbin/slurmctld -f "$0" -i', lab.conf,
        ns=lab.ctl_ns)
    lab.wait(lambda: lab.pid("slurmctld"), 20, what="slurmctld pid file")
    lab.wait(lambda: lab.scontrol("ping", check=False).find("UP") >= 0, 20, what="slurmctld answering ping")
    for node in lab.nodes:
        os.makedirs(lab.path("spool", node), mode=0o700, exist_ok=True)
        lab.start_slurmd(node)


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            return handle.read().split(b"\0")
    except OSError:
        return []


def _owned(pid, root):
    """Whether ``pid`` is a daemon of the lab in ``root`` (its command line names a file of the lab): a stale
    pid file whose number now belongs to another process must not get that process killed."""
    argv = _cmdline(pid)
    return bool(argv) and os.path.basename(argv[0].decode(errors="replace")) in DAEMONS \
        and any(arg.startswith(root.encode() + b"/") for arg in argv[1:])


def lab_daemons(root):
    """Running daemons of the lab in ``root`` (munged, slurmctld, slurmd), found by their command line."""
    pids = [int(e) for e in os.listdir("/proc") if e.isdigit()]
    return [pid for pid in pids if _owned(pid, root) and _alive(pid)]


def netns_names():
    out = subprocess.run(["ip", "-j", "netns", "list"], capture_output=True, text=True, check=False).stdout
    return [entry["name"] for entry in json.loads(out or "[]")]


def stop(prefix=None, root=None):
    """Tear down the lab of this prefix: daemons (by pid file), job processes, namespaces, state directory."""
    prefix = prefix or default_prefix()
    root = os.path.abspath(root or "/tmp/%s-slurm" % prefix)
    lab = SlurmLab(prefix, [], root)
    # The slurmds first (all at once), while slurmctld still answers their goodbye; then slurmctld, then munged.
    run = lab.path("run")
    pidfiles = sorted(os.path.join(run, n) for n in os.listdir(run) if n.endswith(".pid")) if os.path.isdir(run) else []
    _kill_pidfiles([p for p in pidfiles if os.path.basename(p).startswith("slurmd-")], root)
    _kill_pidfiles([p for p in pidfiles if not os.path.basename(p).startswith("slurmd-")], root)
    _kill_pidfiles([lab.path("munge", "munged.pid")], root)
    # A daemon whose pid file is gone (munged lives outside the namespaces; the rest die with them below).
    for pid in lab_daemons(root):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    # Everything in the lab's namespaces (job steps and jobs, a reboot script in flight), then the namespaces.
    for name in netns_names():
        if name == lab.ctl_ns or name.startswith(lab.ctl_ns + "-"):
            for pid in _sh("ip", "netns", "pids", name, check=False).split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            _sh("ip", "netns", "del", name, check=False)
    if os.path.exists(os.path.join(root, MARKER)):
        shutil.rmtree(root, ignore_errors=True)


def _kill_pidfiles(paths, root, timeout=10):
    """SIGTERM the lab daemons of these pid files, wait for them to end, SIGKILL whatever is left."""
    pids = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                pid = int(handle.read().split()[0])
            if not _owned(pid, root):
                continue
            os.kill(pid, signal.SIGTERM)
            pids.append(pid)
        except (FileNotFoundError, ValueError, IndexError, ProcessLookupError):
            continue
    deadline = time.monotonic() + timeout
    while pids and time.monotonic() < deadline:
        pids = [pid for pid in pids if _alive(pid)]
        time.sleep(0.1)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _alive(pid):
    """Whether the process runs (a zombie does not: its parent, often PID 1, has yet to reap it)."""
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("action", choices=("up", "down", "env"))
    parser.add_argument("--nodes", default="n1,n2", help="comma-separated node names (default n1,n2)")
    parser.add_argument("--dir", default=None, help="state directory (default /tmp/<prefix>-slurm)")
    parser.add_argument("--cpus", type=int, default=1, help="CPUs each node declares (default 1)")
    args = parser.parse_args(argv)
    if args.action == "down":
        stop(root=args.dir)
        return 0
    if args.action == "up":
        try:
            lab = start(nodes=[n for n in args.nodes.split(",") if n], root=args.dir, cpus=args.cpus)
        except (RuntimeError, ValueError, PermissionError, TimeoutError) as exc:
            print("slurm lab: %s" % exc, file=sys.stderr)
            return 1
    else:
        lab = SlurmLab(default_prefix(), [], os.path.abspath(args.dir or "/tmp/%s-slurm" % default_prefix()))
    print("export SLURM_CONF=%s PATH=%s:$PATH" % (lab.conf, lab.bindir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
