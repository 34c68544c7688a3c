# -*- coding: utf-8 -*-
"""The rail_network role on real Linux network stacks (network namespaces, needs root).

Each addressing mode gets a fresh lab (tests/lab/lab.py): 3 GPU nodes x 4 rails,
one ToR router namespace per rail, a management network. The verdict is real
traffic: jumbo pings with DF set between every pair of nodes on every rail,
sourced from the rail address, with replies counted on the same NIC.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
# A lab of this test run's own: never the one a person started by hand in this checkout.
os.environ.setdefault("AINET_LAB_PREFIX", "t%d" % os.getpid())
import lab  # noqa: E402  pylint: disable=wrong-import-position

BIN = os.path.dirname(sys.executable)
INTERFACES = ["ens6f0np0", "ens6f1np1", "ens7f0np0", "ens7f1np1"]
NODES = {"gpu01": 1, "gpu02": 2, "gpu05": 5}  # a gap in the ids on purpose

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the lab needs root for network namespaces")

MODES = {
    "shared": {"mode": "shared", "supernet": "172.16.0.0/16", "rail_prefix": 24},
    "exclusive": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27},
    "p2p": {"mode": "p2p", "supernet": "172.18.0.0/16", "rail_prefix": 24},
}


def cluster_for(mode, **extra):
    data = {"name": "t-" + mode, "rails": 4, "mtu": 9000, "addressing": dict(MODES[mode]),
            "management_networks": ["10.250.0.0/24"]}
    data.update(extra)
    return data


def playbook(inventory, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", inventory, os.path.join(ROOT, "playbooks", "hosts.yml")]
    start = time.monotonic()
    result = subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=600, check=False)
    result.elapsed = time.monotonic() - start
    return result


def state(host):
    """The node's runtime network state as ip prints it, minus counters and timers."""
    ns = lab.node_ns(host)
    links = [(link["ifname"], link["mtu"], "UP" in link["flags"],
              sorted((a["family"], a["local"], a["prefixlen"]) for a in link.get("addr_info", [])))
             for link in json.loads(lab.ip("-j", "-d", "addr", "show", ns=ns))]
    routes = sorted(json.dumps({k: v for k, v in r.items() if k not in ("flags", "expires")}, sort_keys=True)
                    for family in ("-4", "-6")
                    for r in json.loads(lab.ip(family, "-j", "route", "show", "table", "all", ns=ns)))
    rules = [json.loads(lab.ip(family, "-j", "rule", "show", ns=ns)) for family in ("-4", "-6")]
    return links, routes, rules


def counters(host, ifname):
    data = json.loads(lab.ip("-j", "-s", "link", "show", ifname, ns=lab.node_ns(host)))[0]
    return data["stats64"]["rx"]["packets"], data["stats64"]["tx"]["packets"]


def ping(host, source, target, size):
    return subprocess.run(["ip", "netns", "exec", lab.node_ns(host), "ping", "-c", "1", "-W", "2", "-M", "do",
                           "-s", str(size), "-I", source, target], capture_output=True, text=True, check=False)


ICMP_LINE = re.compile(r"^\S+\s+(?P<dev>\S+)\s+(?P<dir>In|Out)\s+IP (?P<src>\S+) > (?P<dst>\S+): ICMP echo (?P<kind>request|reply)")


@contextlib.contextmanager
def capture_icmp(host):
    """tcpdump on all of the node's interfaces; yields a list filled with
    (interface, direction, src, dst, kind) once the block ends."""
    if not shutil.which("tcpdump"):
        pytest.fail("tcpdump is needed for the same-NIC check: apt-get install tcpdump")
    proc = subprocess.Popen(["ip", "netns", "exec", lab.node_ns(host), "tcpdump", "-ni", "any", "-l", "-nn", "icmp"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while "listening on" not in proc.stderr.readline():
        assert proc.poll() is None, "tcpdump did not start"
    packets = []
    try:
        yield packets
    finally:
        time.sleep(0.2)
        proc.terminate()
        out, _err = proc.communicate(timeout=10)
        for line in out.splitlines():
            match = ICMP_LINE.match(line)
            if match:
                packets.append((match["dev"], match["dir"], match["src"], match["dst"], match["kind"]))


@pytest.fixture
def lab_dir(tmp_path):
    yield str(tmp_path / "lab")
    lab.down()


def changed_counts(stdout):
    return {line.split()[0]: int(line.split("changed=")[1].split()[0])
            for line in stdout.splitlines() if "changed=" in line and line.split()[0].startswith("gpu")}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_converge_traffic_idempotence(mode, lab_dir):
    cluster = cluster_for(mode)
    inventory, plan = lab.build(cluster, NODES, INTERFACES, lab_dir)
    before = {h: state(h) for h in NODES}

    # --check on unconfigured hosts: reports changes, changes nothing.
    check = playbook(inventory, "--check", "--diff")
    assert check.returncode == 0, check.stdout + check.stderr
    assert set(changed_counts(check.stdout).values()) == {1}
    assert "+rule priority 1001 from" in check.stdout
    assert {h: state(h) for h in NODES} == before

    first = playbook(inventory)
    assert first.returncode == 0, first.stdout + first.stderr
    assert set(changed_counts(first.stdout).values()) == {1}
    second = playbook(inventory)
    assert second.returncode == 0, second.stdout + second.stderr
    assert set(changed_counts(second.stdout).values()) == {0}, second.stdout
    print("%s: converge %.1f s, re-converge %.1f s for %d hosts" % (mode, first.elapsed, second.elapsed, len(NODES)))

    mtu = cluster["mtu"]
    for src_host, src in plan["nodes"].items():
        owner = {entry["ip"]: INTERFACES[entry["rail"] - 1] for entry in src["rails"]}
        sent = 0
        with capture_icmp(src_host) as packets:
            for dst_host, dst in plan["nodes"].items():
                if src_host == dst_host:
                    continue
                for s_entry, d_entry in zip(src["rails"], dst["rails"]):
                    ifname = INTERFACES[s_entry["rail"] - 1]
                    rx_before = counters(src_host, ifname)[0]
                    result = ping(src_host, s_entry["ip"], d_entry["ip"], mtu - 28)
                    assert result.returncode == 0, (mode, src_host, dst_host, s_entry["rail"], result.stdout)
                    sent += 1
                    assert counters(src_host, ifname)[0] > rx_before
                    # The receiver answers from the same rail: its route back uses the rail table.
                    route = lab.ip("route", "get", s_entry["ip"], "from", d_entry["ip"], ns=lab.node_ns(dst_host))
                    assert "dev %s" % ifname in route, route
                # One byte above the MTU with DF set must not pass.
                too_big = ping(src_host, src["rails"][0]["ip"], dst["rails"][0]["ip"], mtu - 27)
                assert too_big.returncode != 0
        # tcpdump's verdict: every request left by, and every reply came back on, the NIC
        # that owns the rail address; no echo crossed any other interface.
        requests = [p for p in packets if p[4] == "request" and p[1] == "Out" and p[2] in owner]
        replies = [p for p in packets if p[4] == "reply" and p[1] == "In" and p[3] in owner]
        assert len(replies) >= sent and len(requests) >= sent, (sent, packets)
        assert [p for p in requests if p[0] != owner[p[2]]] == []
        assert [p for p in replies if p[0] != owner[p[3]]] == []

    # Management traffic never leaves through a rail NIC, even when sourced from a rail address.
    for host, node in plan["nodes"].items():
        ns = lab.node_ns(host)
        for entry in node["rails"]:
            assert "dev eth0" in lab.ip("route", "get", "10.250.0.1", "from", entry["ip"], ns=ns)
        rails_before = [counters(host, i)[1] for i in INTERFACES]
        eth0_before = counters(host, "eth0")[1]
        assert subprocess.run(["ip", "netns", "exec", ns, "ping", "-c", "20", "-i", "0.01", "-W", "2",
                               "10.250.0.1"], capture_output=True, check=False).returncode == 0
        assert counters(host, "eth0")[1] - eth0_before >= 20
        # At most ARP upkeep on the rails, never the 20 echo requests.
        assert all(after - before < 5 for after, before in
                   zip([counters(host, i)[1] for i in INTERFACES], rails_before))

    # Persistent configuration was written for every rail NIC.
    for host in NODES:
        network_dir = os.path.join(lab_dir, "root", host, "etc", "systemd", "network")
        assert sorted(os.listdir(network_dir)) == sorted("60-ainet-%s.network" % i for i in INTERFACES)


def test_persisted_state_comes_back_after_a_flush(lab_dir):
    """Runtime state lost (as at reboot) is restored from the plan; files are unchanged."""
    inventory, plan = lab.build(cluster_for("exclusive"), {"gpu01": 1, "gpu02": 2}, INTERFACES, lab_dir)
    assert playbook(inventory).returncode == 0
    for ifname in INTERFACES:
        lab.ip("addr", "flush", "dev", ifname, ns=lab.node_ns("gpu01"))
    again = playbook(inventory)
    assert changed_counts(again.stdout) == {"gpu01": 1, "gpu02": 0}
    assert ping("gpu01", plan["nodes"]["gpu01"]["rails"][2]["ip"],
                plan["nodes"]["gpu02"]["rails"][2]["ip"], 8972).returncode == 0


@pytest.mark.parametrize("case,expected", [
    ("missing_interface", "fabric_rail_interfaces[3]: 'ens9f9np9' does not exist on this host"),
    ("management_interface", "fabric_rail_interfaces[0]: 'eth0' carries the default route; refusing to touch it"),
    ("overlaps_management", "overlaps 10.250.0.11/24 on eth0, which carries the default route"),
    ("bad_model", "fabric_cluster.addressing.node_prefix: 24 must be longer than rail_prefix /24"),
    ("mtu_above_lower", "fabric_cluster.mtu: 9000 is above the MTU 1500 of lower0, the lower device of macvlan "
                        "ens7f1np1"),
])
def test_bad_input_fails_before_any_change(case, expected, lab_dir):
    cluster = cluster_for("exclusive")
    inventory, _plan = lab.build(cluster, {"gpu01": 1}, INTERFACES, lab_dir)
    interfaces = list(INTERFACES)
    if case == "missing_interface":
        interfaces[3] = "ens9f9np9"
    elif case == "management_interface":
        interfaces[0] = "eth0"
    elif case == "overlaps_management":
        cluster = dict(cluster, addressing={"mode": "shared", "supernet": "10.250.0.0/20", "rail_prefix": 24},
                       management_networks=[])
    elif case == "bad_model":
        cluster = dict(cluster, addressing=dict(cluster["addressing"], node_prefix=24))
    elif case == "mtu_above_lower":
        # The last rail NIC becomes a macvlan on a 1500-byte lower device: it reports
        # max_mtu 65535, yet the kernel refuses anything above its lower device's MTU.
        ns = lab.node_ns("gpu01")
        lab.ip("link", "set", "ens7f1np1", "down", ns=ns)
        lab.ip("link", "set", "ens7f1np1", "name", "lower0", ns=ns)
        lab.ip("link", "add", "ens7f1np1", "link", "lower0", "type", "macvlan", "mode", "bridge", ns=ns)
    extra = os.path.join(lab_dir, "extra.json")
    with open(extra, "w") as handle:
        json.dump({"fabric_cluster": cluster, "fabric_rail_interfaces": interfaces}, handle)
    before = state("gpu01")
    result = playbook(inventory, "-e", "@" + extra)
    text = result.stdout + result.stderr
    assert result.returncode != 0
    assert expected in text, text
    assert "Traceback" not in text
    assert state("gpu01") == before
    assert not os.path.exists(os.path.join(lab_dir, "root", "gpu01", "etc"))
