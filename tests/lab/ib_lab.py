"""A simulated InfiniBand subnet for the tests: Debian 12's ``ibsim`` with the real OpenSM and infiniband-diags.

ibsim (ibsim-utils) simulates the subnet's SMA/PMA from a topology file in ``ibnetdiscover``'s layout (its README
and ``net-examples``); OpenSM and the diags talk to it through ``libumad2sim.so`` (LD_PRELOAD, libumad2sim0), which
replaces ``/dev/umad*``. Nothing else is simulated: the partitions OpenSM programs are read back with
``smpquery pkeys`` and the cabling with ``ibnetdiscover``.

Isolation: ibsim listens on an abstract Unix socket (``IBSIM_SOCKNAME``), and abstract sockets belong to a network
namespace, so the lab runs ibsim and every client in a namespace of its own, ``<prefix>-ib`` (``labname.py``),
with a state directory ``/tmp/<prefix>-ib`` (topology, OpenSM's log, cache and dumps; umad2sim's ``sys-*`` tree,
made in the working directory). :meth:`IbLab.stop` ends the processes it started (by their pid) and removes the
namespace and the directory.

The topology is made from a rail plan (:func:`net_file`): one HCA per node and rail, described ``"<host>
mlx5_<rail-1>"`` (what mlx5 sets as NodeDescription: the host name then the device), on port ``tor_port`` of
its planned ToR (one leaf per rail group and rail, ``workload.topology``), each leaf's uplinks to the spines on
its last ports. GUIDs are the lab's own: HCA of node ``n`` rail ``r``: node GUID ``0x0002c9030000RRNN`` ...
(``hca_guid``), which the test passes to the check as the inventory would.

Usage::

    lab = ib_lab.start(net_text)        # ibsim up
    lab.opensm(partitions_text)         # OpenSM up on the subnet, the partitions applied (waits for MASTER)
    lab.tool("ibnetdiscover")           # any libibumad tool, its stdout
    lab.stop()
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labname  # noqa: E402

from ansible_collections.ainet.fabric.plugins.module_utils.workload import topology  # noqa: E402

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
PROGRAMS = ("ibsim", "opensm", "ibnetdiscover", "iblinkinfo", "smpquery", "ip")


def missing_programs():
    missing = [p for p in PROGRAMS if shutil.which(p) is None]
    if not os.path.exists(UMAD2SIM):
        missing.append(UMAD2SIM)
    return missing


def hca_guid(node_id, rail):
    """The lab's node GUID of node ``node_id``'s rail ``rail`` HCA (its port 1 GUID is this plus 1: ibsim gives
    a CA's ports the node GUID plus the port number)."""
    return 0x0002c90300000000 | (rail << 20) | (node_id << 4)


def switch_guid(index):
    return 0x0002c90400000000 | (index << 8)


def net_file(plan, fabric=None, spines=2, switch_ports=36, uplinks=2, rail_hca=None, drop=(), swap=None):
    """ibsim's topology (ibnetdiscover layout) for a rail plan: every leaf of ``fabric`` (default: the plan's first),
    the ToRs of its rail groups (``workload.topology.fabric_topology``), its nodes' HCAs on the planned ports,
    ``uplinks`` uplinks per ToR to each of ``spines`` spines on its last ports.

    Faults to inject, for the tests: ``drop``: ``[(host, rail)]`` whose cable is left out; ``swap``: ``(host,
    rail_a, rail_b)``: the two HCAs' cables exchanged at the host (rail a's HCA on rail b's ToR port and back).
    ``rail_hca``: ``{rail: device}`` (default ``mlx5_<rail-1>``).
    """
    # The leaves are the rail groups' ToRs (workload.topology: one leaf per rail group and rail), in group order.
    topo = topology.fabric_topology(plan, fabric or next(iter(plan["fabrics"])))
    names = list(dict.fromkeys(t for block in topo["spine_blocks"] for g in block["groups"] for t in g["tors"]))
    tors = [plan["tors"][name] for name in names]
    links = {}
    hcas = {}
    for host, node in sorted(plan["nodes"].items()):
        for entry in node["rails"]:
            if entry["fabric"] != topo["fabric"]:
                continue
            device = (rail_hca or {}).get(entry["rail"], "mlx5_%d" % (entry["rail"] - 1))
            name = "H-%016x" % hca_guid(node["node_id"], entry["rail"])
            hcas[(host, entry["rail"])] = (name, "%s %s" % (host, device), entry)
    swapped = {}
    if swap:
        host, rail_a, rail_b = swap
        swapped[(host, rail_a)] = hcas[(host, rail_b)][2]
        swapped[(host, rail_b)] = hcas[(host, rail_a)][2]
    tor_names = dict((t["name"], "S-%016x" % switch_guid(i + 1)) for i, t in enumerate(tors))
    for key, (name, _desc, entry) in hcas.items():
        if key in drop:
            continue
        target = swapped.get(key, entry)
        links.setdefault(tor_names[target["tor"]], []).append((int(target["tor_port"]), name, 1))
        links.setdefault(name, []).append((1, tor_names[target["tor"]], int(target["tor_port"])))
    spine_names = ["S-%016x" % switch_guid(100 + s) for s in range(1, spines + 1)]
    for index, tor in enumerate(tors):
        for s, spine in enumerate(spine_names):
            for u in range(uplinks):
                tor_port = switch_ports - s * uplinks - u
                spine_port = index * uplinks + u + 1
                links.setdefault(tor_names[tor["name"]], []).append((tor_port, spine, spine_port))
                links.setdefault(spine, []).append((spine_port, tor_names[tor["name"]], tor_port))
    out = ["# made by tests/lab/ib_lab.py from a rail plan", ""]
    records = [(tor_names[t["name"]], "Switch", switch_ports, t["name"]) for t in tors]
    records += [(s, "Switch", switch_ports, "spine%d" % (i + 1)) for i, s in enumerate(spine_names)]
    records += [(name, "Hca", 1, desc) for name, desc, _e in hcas.values()]
    for name, kind, ports, desc in records:
        # ibsim numbers GUIDs from the last switchguid=/caguid= line (ibnetdiscover's layout): one before each
        # record gives it the GUID its name says.
        out.append("%sguid=0x%s" % ("switch" if kind == "Switch" else "ca", name[2:]))
        out.append('%s\t%d "%s"\t# "%s"' % (kind, ports, name, desc))
        for local, peer, peer_port in sorted(links.get(name, [])):
            out.append('[%d]\t"%s"[%d]' % (local, peer, peer_port))
        out.append("")
    return "\n".join(out)


class IbLab:
    def __init__(self, prefix, root):
        self.prefix = prefix
        self.ns = "%s-ib" % prefix
        self.root = root
        self.sock = "%s-ibsim" % prefix
        self.procs = {}

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def env(self):
        env = dict(os.environ)
        env.update({"LD_PRELOAD": UMAD2SIM, "IBSIM_SOCKNAME": self.sock, "OSM_TMP_DIR": self.root,
                    "OSM_CACHE_DIR": self.root})
        return env

    def _argv(self, argv):
        return ["ip", "netns", "exec", self.ns] + [str(a) for a in argv]

    def tool(self, *argv, check=True, timeout=60):
        """Run an infiniband-diags tool on the simulated subnet; its stdout."""
        proc = subprocess.run(self._argv(argv), cwd=self.root, env=self.env(), capture_output=True, text=True,
                              timeout=timeout, check=False)
        if check and proc.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (" ".join(argv), proc.returncode, proc.stderr[-2000:]))
        return proc.stdout

    def _spawn(self, name, argv, env):
        log = open(self.path(name + ".out"), "w")  # pylint: disable=consider-using-with
        self.procs[name] = subprocess.Popen(self._argv(argv), cwd=self.root, env=env, stdout=log,  # pylint: disable=consider-using-with
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()

    def start_ibsim(self, net_text):
        with open(self.path("net"), "w") as handle:
            handle.write(net_text)
        env = dict(os.environ, IBSIM_SOCKNAME=self.sock)
        self._spawn("ibsim", ["ibsim", "-s", "-n", self.path("net")], env)
        self._wait(lambda: "Parsing" in self.log("ibsim.out") or "MaxNetNodes" in self.log("ibsim.out"),
                   "ibsim to read the topology")
        time.sleep(0.3)

    def opensm(self, partitions_text=None, extra=(), timeout=60, options_text=None):
        """Start OpenSM (``-P`` the partitions when given, ``-F`` the options when given) and wait until it is
        MASTER and the subnet is up."""
        argv = ["opensm", "-f", self.path("opensm.log"), "-F", self.path("opensm.conf")]
        if partitions_text is not None:
            with open(self.path("partitions.conf"), "w") as handle:
                handle.write(partitions_text)
            argv += ["-P", self.path("partitions.conf")]
        with open(self.path("opensm.conf"), "w") as handle:
            # force_log_flush: the lab reads the log as OpenSM writes it (a sweep after SIGHUP is seen by its
            # SUBNET UP line; OpenSM buffers its log otherwise).
            handle.write((options_text or "# the lab's OpenSM options (defaults otherwise)\n") + "force_log_flush TRUE\n")
        self._spawn("opensm", argv + list(extra), self.env())
        self._wait(lambda: "Entering MASTER state" in self.log("opensm.out"), "OpenSM to become master", timeout)
        self._wait(self._subnet_up, "OpenSM to bring every cabled port to Active", timeout)
        return self.log("opensm.log")

    def _subnet_up(self):
        """Every port with a link is Active (OpenSM's sweep sets them Active last, after the LIDs, routes and
        PKey tables): iblinkinfo's ``LinkUp`` lines all say ``Active``."""
        try:
            text = self.tool("iblinkinfo", timeout=30)
        except (RuntimeError, subprocess.TimeoutExpired):
            return False
        up = [line for line in text.splitlines() if "LinkUp" in line]
        return bool(up) and all("Active/" in line for line in up)

    def reload_opensm(self, partitions_text, timeout=60):
        """Rewrite the partitions file and send OpenSM SIGHUP (what the subnet_manager role does: OpenSM re-reads
        its files and sweeps again, the subnet stays up); wait for the sweep after the signal."""
        with open(self.path("partitions.conf"), "w") as handle:
            handle.write(partitions_text)
        before = self.log("opensm.log").count("SUBNET UP")
        self.procs["opensm"].send_signal(signal.SIGHUP)
        self._wait(lambda: self.log("opensm.log").count("SUBNET UP") > before, "OpenSM to sweep after SIGHUP",
                   timeout)
        return self.log("opensm.log")

    def stop_opensm(self):
        self._end("opensm")

    def log(self, name):
        try:
            with open(self.path(name), errors="replace") as handle:
                return handle.read()
        except OSError:
            return ""

    def _wait(self, predicate, what, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError("%s exited (%s) while waiting for %s: %s" % (
                        name, proc.returncode, what, self.log(name + ".out")[-2000:]))
            time.sleep(0.2)
        raise RuntimeError("timed out waiting for %s" % what)

    def _end(self, name):
        proc = self.procs.pop(name, None)
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)

    def stop(self):
        for name in ("opensm", "ibsim"):
            self._end(name)
        for name in list(self.procs):
            self._end(name)
        subprocess.run(["ip", "netns", "del", self.ns], check=False, capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)


def start(net_text, prefix=None, root=None):
    prefix = prefix or labname.prefix()
    lab = IbLab(prefix, root or "/tmp/%s-ib" % prefix)
    subprocess.run(["ip", "netns", "del", lab.ns], check=False, capture_output=True)
    shutil.rmtree(lab.root, ignore_errors=True)
    os.makedirs(lab.root, mode=0o700)
    subprocess.run(["ip", "netns", "add", lab.ns], check=True, capture_output=True)
    try:
        lab.start_ibsim(net_text)
    except Exception:
        lab.stop()
        raise
    return lab
