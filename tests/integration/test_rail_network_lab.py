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
    ("shared", 4): {"mode": "shared", "supernet": "172.16.0.0/16", "rail_prefix": 24},
    ("exclusive", 4): {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27},
    ("p2p", 4): {"mode": "p2p", "supernet": "172.18.0.0/16", "rail_prefix": 24},
    ("shared", 6): {"mode": "shared", "supernet": "fd00:16::/48", "rail_prefix": 64},
    ("exclusive", 6): {"mode": "exclusive", "supernet": "fd00:17::/48", "rail_prefix": 56, "node_prefix": 64},
    ("p2p", 6): {"mode": "p2p", "supernet": "fd00:18::/48", "rail_prefix": 64},
}


def cluster_for(mode, family=4, **extra):
    data = {"name": "t-%s-v%d" % (mode, family), "rails": 4, "mtu": 9000, "addressing": dict(MODES[(mode, family)]),
            "management_networks": ["10.250.0.0/24"]}
    data.update(extra)
    return data


def playbook(inventory, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    # Plan, then apply, as users do: the plan job (never in check mode) publishes the lock that
    # the host job checks its hosts against; a test that changes the model re-plans first.
    plan_cmd = [os.path.join(BIN, "ansible-playbook"), "-i", inventory, os.path.join(ROOT, "playbooks", "plan.yml"),
                "-e", "rail_plan_output_dir=" + os.path.join(os.path.dirname(inventory), "plan")]
    planned = subprocess.run(plan_cmd + [a for a in extra if a not in ("--check", "--diff", "-C", "-D")],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    if planned.returncode != 0:
        planned.elapsed = 0.0
        return planned
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", inventory, os.path.join(ROOT, "playbooks", "hosts.yml")]
    start = time.monotonic()
    result = subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=600, check=False)
    result.elapsed = time.monotonic() - start
    return result


def with_vars(lab_dir, name, **values):
    """An extra-vars file (``-e @file``) for one run."""
    path = os.path.join(lab_dir, name + ".json")
    with open(path, "w") as handle:
        json.dump(values, handle)
    return "@" + path


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


ICMP_LINE = re.compile(r"^\S+\s+(?P<dev>\S+)\s+(?P<dir>In|Out)\s+IP6? (?P<src>\S+) > (?P<dst>\S+?): "
                       r"ICMP6?,? echo (?P<kind>request|reply)")


@contextlib.contextmanager
def capture_icmp(host):
    """tcpdump on all of the node's interfaces; yields a list filled with
    (interface, direction, src, dst, kind) once the block ends."""
    if not shutil.which("tcpdump"):
        pytest.fail("tcpdump is needed for the same-NIC check: apt-get install tcpdump")
    proc = subprocess.Popen(["ip", "netns", "exec", lab.node_ns(host), "tcpdump", "-ni", "any", "-l", "-nn", "icmp or icmp6"],
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


def fabrics_of(cluster):
    """[(name, fabric dict)] of a model in either form."""
    if "fabrics" in cluster:
        return list(cluster["fabrics"].items())
    return [("default", cluster)]


def managed(host, cluster, theirs=()):
    """What a node has beyond a fresh machine, read with ip alone (never with the module under
    test): global addresses on every NIC but eth0, every rule but the kernel's three, every route
    in a table other than main, local and default, and main-table routes with protocol ainet or
    to a fabric's supernet. ``theirs`` lists another tool's objects to leave out: addresses
    (ifname, cidr), rule priorities (int) and tables (str)."""
    ns = lab.node_ns(host)
    supernets = {f["addressing"]["supernet"] for _n, f in fabrics_of(cluster)}
    addrs = set()
    for link in json.loads(lab.ip("-j", "addr", "show", ns=ns)):
        for info in link.get("addr_info", []):
            if info.get("scope") == "global" and link["ifname"] != "eth0":
                addrs.add((link["ifname"], "%s/%s" % (info["local"], info["prefixlen"])))
    rules, routes = set(), set()
    for family in ("-4", "-6"):
        for rule in json.loads(lab.ip("-N", family, "-j", "rule", "show", ns=ns)):
            if rule["priority"] not in (0, 32766, 32767) and rule["priority"] not in theirs:
                rules.add((rule["priority"], rule.get("src"), rule.get("table"), rule.get("protocol")))
        for route in json.loads(lab.ip("-N", family, "-j", "route", "show", "table", "all", ns=ns)):
            table = str(route.get("table", "254"))
            if table in theirs:
                continue
            if table not in ("253", "254", "255") or route.get("protocol") == "211" \
                    or (table == "254" and route.get("dst") in supernets):
                routes.add((int(table), route.get("dst"), route.get("gateway"), route.get("dev")))
    return addrs - set(theirs), rules, routes


def expected(plan, host, interfaces, cluster):
    """The same view, from the plan: one address, rule and table (connected + supernet) per rail."""
    node = plan["nodes"][host]
    addrs, rules, routes = set(), set(), set()
    for name, fabric in fabrics_of(cluster):
        entries = [e for e in node["rails"] if e.get("fabric", "default") == name]
        nics = interfaces[name] if isinstance(interfaces, dict) else interfaces
        supernet = fabric["addressing"]["supernet"]
        addrs |= {(nics[e["rail"] - 1], e["address"]) for e in entries}
        if fabric["addressing"]["mode"] == "infiniband":
            continue
        rules |= {(e["priority"], e["ip"], str(e["table"])) for e in entries}
        for e in entries:
            routes.add((e["table"], e["subnet"], None, nics[e["rail"] - 1]))
            routes.add((e["table"], supernet, e["gateway"], nics[e["rail"] - 1]))
        if fabric.get("routing", {}).get("aggregate_route", fabric["addressing"]["mode"] in ("exclusive", "p2p")):
            routes.add((254, supernet, entries[0]["gateway"], nics[0]))
    return addrs, rules, routes


def assert_exactly_planned(host, plan, interfaces, cluster, theirs=()):
    addrs, rules, routes = managed(host, cluster, theirs)
    want_addrs, want_rules, want_routes = expected(plan, host, interfaces, cluster)
    assert addrs == want_addrs
    assert {(r[0], r[1], r[2]) for r in rules} == want_rules, rules
    assert routes == want_routes


def ping_matrix(plan, mtu, family, interfaces=None):
    """Jumbo pings with DF from every rail address to the same rail of every other node; tcpdump
    confirms each request left, and each reply came in, through the NIC owning the rail address."""
    interfaces = interfaces or INTERFACES
    for src_host, src in plan["nodes"].items():
        owner = {e["ip"]: lab.nic(interfaces, e) for e in src["rails"]}
        sent = 0
        with capture_icmp(src_host) as packets:
            for dst_host, dst in plan["nodes"].items():
                if src_host == dst_host:
                    continue
                for s_entry, d_entry in zip(src["rails"], dst["rails"]):
                    ifname = owner[s_entry["ip"]]
                    rx_before = counters(src_host, ifname)[0]
                    header = 48 if ":" in s_entry["ip"] else 28
                    size = (s_entry.get("mtu") or mtu) - header
                    result = ping(src_host, s_entry["ip"], d_entry["ip"], size)
                    assert result.returncode == 0, (src_host, dst_host, s_entry["rail"], result.stdout)
                    sent += 1
                    assert counters(src_host, ifname)[0] > rx_before
                    route = lab.ip("route", "get", s_entry["ip"], "from", d_entry["ip"], ns=lab.node_ns(dst_host))
                    assert "dev %s" % ifname in route, route
                first = src["rails"][0]
                too_big = ping(src_host, first["ip"], dst["rails"][0]["ip"],
                               (first.get("mtu") or mtu) - (48 if ":" in first["ip"] else 28) + 1)
                assert too_big.returncode != 0
        requests = [p for p in packets if p[4] == "request" and p[1] == "Out" and p[2] in owner]
        replies = [p for p in packets if p[4] == "reply" and p[1] == "In" and p[3] in owner]
        assert len(replies) >= sent and len(requests) >= sent, (sent, packets)
        assert [p for p in requests if p[0] != owner[p[2]]] == []
        assert [p for p in replies if p[0] != owner[p[3]]] == []


@pytest.mark.parametrize("mode,family", sorted(MODES))
def test_converge_traffic_idempotence(mode, family, lab_dir):
    cluster = cluster_for(mode, family)
    inventory, plan = lab.build(cluster, NODES, INTERFACES, lab_dir)
    before = {h: state(h) for h in NODES}

    # --check on unconfigured hosts: reports changes, changes nothing.
    check = playbook(inventory, "--check", "--diff")
    assert check.returncode == 0, check.stdout + check.stderr
    assert set(changed_counts(check.stdout).values()) == {1}
    assert "+rule 1001: from %s" % plan["nodes"]["gpu01"]["rails"][0]["ip"] in check.stdout
    assert {h: state(h) for h in NODES} == before

    first = playbook(inventory)
    assert first.returncode == 0, first.stdout + first.stderr
    assert set(changed_counts(first.stdout).values()) == {1}
    second = playbook(inventory)
    assert second.returncode == 0, second.stdout + second.stderr
    assert set(changed_counts(second.stdout).values()) == {0}, second.stdout
    print("%s/v%d: converge %.1f s, re-converge %.1f s for %d hosts"
          % (mode, family, first.elapsed, second.elapsed, len(NODES)))
    for host in NODES:
        assert_exactly_planned(host, plan, INTERFACES, cluster)
    ping_matrix(plan, cluster["mtu"], family)

    # Traffic from a rail address to anything outside the fabric never takes a rail NIC.
    for host, node in plan["nodes"].items():
        ns = lab.node_ns(host)
        for entry in node["rails"]:
            outside = "10.250.0.1" if family == 4 else "2001:db8:ffff::1"
            route = lab.ip("route", "get", outside, "from", entry["ip"], ns=ns, check=False)
            assert not any("dev %s" % i in route for i in INTERFACES), route
        if family == 4:
            rails_before = [counters(host, i)[1] for i in INTERFACES]
            eth0_before = counters(host, "eth0")[1]
            assert subprocess.run(["ip", "netns", "exec", ns, "ping", "-c", "20", "-i", "0.01", "-W", "2",
                                   "10.250.0.1"], capture_output=True, check=False).returncode == 0
            assert counters(host, "eth0")[1] - eth0_before >= 20
            assert all(after - before < 5 for after, before in
                       zip([counters(host, i)[1] for i in INTERFACES], rails_before))
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


def other_tool(host):
    """What other tools leave on a GPU node: a VPN (its own device, rule 2000 and table 200), a CNI
    (fwmark rule 500, table 300), a static route in main, and an address and a route of their own
    on a rail NIC. Returns their objects as `ip` shows them, to compare after our runs."""
    ns = lab.node_ns(host)
    lab.ip("link", "add", "vpn0", "type", "veth", "peer", "name", "vpn0p", ns=ns)
    for dev in ("vpn0", "vpn0p"):
        lab.ip("link", "set", dev, "up", ns=ns)
    commands = [
        ("rule", "add", "priority", "2000", "from", "all", "lookup", "200"),
        ("route", "add", "198.51.100.0/24", "dev", "vpn0", "table", "200"),
        ("rule", "add", "priority", "500", "fwmark", "0x100/0xf00", "lookup", "300"),
        ("route", "add", "10.233.64.0/18", "dev", "vpn0", "table", "300"),
        ("route", "add", "198.18.0.0/15", "via", "10.250.0.1", "dev", "eth0", "proto", "static"),
        ("link", "set", "ens6f0np0", "up"),
        ("addr", "add", "192.168.77.5/24", "dev", "ens6f0np0"),
        ("route", "add", "192.168.78.0/24", "via", "192.168.77.1", "dev", "ens6f0np0"),
    ]
    for command in commands:
        lab.ip(*command, ns=ns)
    return foreign_view(host)


def foreign_view(host):
    ns = lab.node_ns(host)
    rules = {json.dumps(r, sort_keys=True) for r in json.loads(lab.ip("-N", "-j", "rule", "show", ns=ns))
             if r["priority"] in (500, 2000)}
    routes = {json.dumps({k: v for k, v in r.items() if k != "flags"}, sort_keys=True)
              for r in json.loads(lab.ip("-N", "-j", "route", "show", "table", "all", ns=ns))
              if r.get("table") in ("200", "300") or r.get("dst") in ("198.18.0.0/15", "192.168.78.0/24")}
    addr = "192.168.77.5" in lab.ip("addr", "show", "dev", "ens6f0np0", ns=ns)
    return rules, routes, addr


def test_other_tools_state_survives_and_is_not_captured(lab_dir):
    cluster = cluster_for("exclusive")
    inventory, plan = lab.build(cluster, {"gpu01": 1, "gpu02": 2}, INTERFACES, lab_dir)
    theirs = {h: other_tool(h) for h in ("gpu01", "gpu02")}
    assert all(len(v[0]) == 2 and len(v[1]) == 4 and v[2] for v in theirs.values())
    first = playbook(inventory)
    assert first.returncode == 0, first.stdout + first.stderr
    second = playbook(inventory)
    assert set(changed_counts(second.stdout).values()) == {0}, second.stdout
    for host in ("gpu01", "gpu02"):
        assert foreign_view(host) == theirs[host]
        ns = lab.node_ns(host)
        for entry in plan["nodes"][host]["rails"]:
            # The VPN's rule behind ours still applies to traffic from a rail address.
            assert "dev vpn0" in lab.ip("route", "get", "198.51.100.7", "from", entry["ip"], ns=ns)
            assert "dev vpn0" in lab.ip("route", "get", "10.233.64.9", "from", entry["ip"], "mark", "0x100", ns=ns)
    ping_matrix(plan, cluster["mtu"], 4)
    # A rule in front of ours that captures the fabric is reported (not removed).
    lab.ip("rule", "add", "priority", "999", "from", "all", "lookup", "100", ns=lab.node_ns("gpu01"))
    lab.ip("route", "add", "172.17.0.0/16", "via", "10.250.0.1", "dev", "eth0", "table", "100",
           ns=lab.node_ns("gpu01"))
    third = playbook(inventory)
    assert third.returncode == 0
    text = third.stdout + third.stderr
    assert "999: from all lookup 100" in text and "instead of the rail tables" in text, text


CONFLICTS = {
    "rule_at_our_priority": (("rule", "add", "priority", "1001", "from", "172.17.0.5", "lookup", "100"),
                             "rule `1001: from 172.17.0.5/32 lookup 100 proto 0` (not created by ainet.fabric) sits at "
                             "priority 1001"),
    "rule_with_fwmark": (("rule", "add", "priority", "1002", "fwmark", "0x10", "lookup", "152"),
                         "rule `1002: from all fwmark 0x10 lookup 152 proto 0` (not created by ainet.fabric)"),
    "route_in_our_table": (("route", "add", "10.99.0.0/16", "via", "10.250.0.1", "dev", "eth0", "table", "153"),
                           "route `10.99.0.0/16 table 153 metric 0 via 10.250.0.1 dev eth0 proto 3` (not created by "
                           "ainet.fabric) is in table 153"),
    "planned_address_elsewhere": (("addr", "add", "172.17.1.2/27", "dev", "ens6f0np0"),
                                  "address 172.17.1.2/27 on ens6f0np0 (not created by ainet.fabric) is the address "
                                  "cluster t-exclusive-v4 plans for ens6f1np1"),
    "foreign_supernet_route": (("route", "add", "172.17.0.0/16", "via", "10.250.0.1", "dev", "eth0"),
                               "route `172.17.0.0/16 table 254 metric 0 via 10.250.0.1 dev eth0 proto 3` (not created "
                               "by ainet.fabric) is where cluster t-exclusive-v4 needs"),
}


@pytest.mark.parametrize("case", sorted(CONFLICTS))
def test_foreign_objects_in_the_way_fail_before_any_change(case, lab_dir):
    command, message = CONFLICTS[case]
    inventory, plan = lab.build(cluster_for("exclusive"), {"gpu01": 1}, INTERFACES, lab_dir)
    ns = lab.node_ns("gpu01")
    lab.ip(*command, ns=ns)
    before = state("gpu01")
    result = playbook(inventory)
    text = result.stdout + result.stderr
    assert result.returncode != 0
    assert message in text, text
    assert "Traceback" not in text
    assert state("gpu01") == before
    # Taking over is explicit; then the run converges and the foreign object in our scope is gone.
    taken = playbook(inventory, "-e", "rail_network_takeover=true")
    assert taken.returncode == 0, taken.stdout + taken.stderr
    assert_exactly_planned("gpu01", plan, INTERFACES, cluster_for("exclusive"))


def test_model_changes_leave_nothing_of_the_old_state(lab_dir):
    cluster = cluster_for("exclusive")
    inventory, plan = lab.build(cluster, {"gpu01": 1, "gpu02": 2}, INTERFACES, lab_dir)
    assert playbook(inventory).returncode == 0
    root = os.path.join(lab_dir, "root", "gpu01")
    sys.path.insert(0, os.path.join(ROOT, "build", ".collections"))
    from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan  # noqa: E402

    def converge_to(name, new_cluster, interfaces=None, node_id=1, **more):
        interfaces = interfaces or INTERFACES
        extra = with_vars(lab_dir, name, fabric_cluster=new_cluster, fabric_rail_interfaces=interfaces,
                          **more)
        args = ["-e", extra, "--limit", "gpu01"]
        # A renumbering is an inventory change of this host alone (an extra var would renumber
        # every host, which the plan refuses as duplicate ids).
        host_vars = os.path.join(inventory, "host_vars", "gpu01.yml")
        if node_id != 1:
            os.makedirs(os.path.dirname(host_vars), exist_ok=True)
            with open(host_vars, "w") as handle:
                handle.write("fabric_node_id: %d\n" % node_id)
        elif os.path.exists(host_vars):
            os.unlink(host_vars)
        run = playbook(inventory, *args)
        assert run.returncode == 0, (name, run.stdout + run.stderr)
        again = playbook(inventory, *args)
        assert changed_counts(again.stdout) == {"gpu01": 0}, (name, again.stdout)
        new_plan = rail_plan(new_cluster, {"gpu01": node_id})
        assert_exactly_planned("gpu01", new_plan, interfaces, new_cluster)
        return new_plan

    # A rail removed: its address, rule, table and file go.
    three = dict(cluster, rails=3)
    converge_to("rail-removed", three, INTERFACES[:3])
    assert "ens7f1np1" not in " ".join(os.listdir(os.path.join(root, "etc/systemd/network")))
    # The aggregate route turned off; new table base and rule priority.
    routing = {"aggregate_route": False, "table_base": 200, "rule_priority": 2000}
    converge_to("routing-changed", dict(cluster, routing=routing))
    # The node renumbered: in shared mode two hosts would otherwise answer for one address.
    converge_to("renumbered", cluster, node_id=7)
    # Two rail NICs swapped: each keeps only its new address.
    swapped = [INTERFACES[1], INTERFACES[0]] + INTERFACES[2:]
    converge_to("swapped", cluster, swapped)
    # exclusive -> shared, and the backend switched: the networkd files go, netplan's come.
    shared = dict(cluster, addressing={"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24})
    converge_to("mode-and-backend", shared, rail_network_persist="netplan")
    assert not os.listdir(os.path.join(root, "etc/systemd/network"))
    assert os.listdir(os.path.join(root, "etc/netplan")) == ["60-ainet-rails.yaml"]
    final = converge_to("back", cluster)
    assert not os.path.exists(os.path.join(root, "etc/netplan/60-ainet-rails.yaml"))
    ping_matrix({"nodes": {"gpu01": final["nodes"]["gpu01"], "gpu02": plan["nodes"]["gpu02"]}}, 9000, 4)


def test_leftovers_of_earlier_releases_are_removed(lab_dir):
    """0.1 hosts: the keep-off rule at the base priority, its unit and link, the old sysctl file."""
    cluster = cluster_for("exclusive")
    inventory, plan = lab.build(cluster, {"gpu01": 1}, INTERFACES, lab_dir)
    ns = lab.node_ns("gpu01")
    lab.ip("rule", "add", "priority", "1000", "not", "to", "172.17.0.0/16", "lookup", "main", "protocol", "static",
           ns=ns)
    root = os.path.join(lab_dir, "root", "gpu01")
    unit = os.path.join(root, "etc/systemd/system/ainet-rail-keepoff.service")
    link = os.path.join(root, "etc/systemd/system/multi-user.target.wants/ainet-rail-keepoff.service")
    for path in (unit, os.path.join(root, "etc/systemd/system/other-tool.service")):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write("[Service]\n")
    os.makedirs(os.path.dirname(link))
    os.symlink("/etc/systemd/system/ainet-rail-keepoff.service", link)
    result = playbook(inventory, "--diff")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1000: not from all to 172.17.0.0/16" not in lab.ip("rule", "show", ns=ns)
    assert not os.path.lexists(unit) and not os.path.lexists(link)
    assert os.path.exists(os.path.join(root, "etc/systemd/system/other-tool.service"))
    assert_exactly_planned("gpu01", plan, INTERFACES, cluster)


def test_partial_states_converge_in_one_run(lab_dir):
    cluster = cluster_for("exclusive")
    inventory, plan = lab.build(cluster, {"gpu01": 1}, INTERFACES, lab_dir)
    ns = lab.node_ns("gpu01")
    rails = plan["nodes"]["gpu01"]["rails"]
    # Our address without the broadcast networkd gives it, a foreign primary in the rail subnet
    # (ours becomes secondary), and one of our rules already present.
    lab.ip("addr", "add", rails[0]["address"], "dev", INTERFACES[0], ns=ns)
    lab.ip("addr", "add", "172.17.2.30/27", "dev", INTERFACES[2], ns=ns)
    lab.ip("addr", "add", rails[2]["address"], "broadcast", "+", "dev", INTERFACES[2], ns=ns)
    lab.ip("rule", "add", "priority", "1002", "from", rails[1]["ip"], "lookup", "152", "protocol", "static", ns=ns)
    result = playbook(inventory, "-e", "rail_network_prune=true")
    assert result.returncode == 0, result.stdout + result.stderr
    assert_exactly_planned("gpu01", plan, INTERFACES, cluster)
    assert changed_counts(playbook(inventory, "-e", "rail_network_prune=true").stdout) == {"gpu01": 0}


def test_concurrent_runs_on_one_host_do_not_collide(lab_dir):
    cluster = cluster_for("shared", 6)
    inventory, plan = lab.build(cluster, {"gpu01": 1}, INTERFACES, lab_dir)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", inventory, os.path.join(ROOT, "playbooks", "hosts.yml")]
    runs = [subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for _run in range(2)]
    outputs = [run.communicate(timeout=300)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert_exactly_planned("gpu01", plan, INTERFACES, cluster)


@pytest.mark.parametrize("case,expected", [
    ("missing_interface", "fabric_rail_interfaces[3]: 'ens9f9np9' does not exist on this host"),
    ("management_interface", "fabric_rail_interfaces[0]: 'eth0' carries a default route"),
    ("overlaps_management", "overlaps 10.250.0.11/24 on eth0, which carries a default route"),
    ("bad_model", "fabric_cluster.addressing.node_prefix: 24 must be longer than rail_prefix /24"),
    ("mtu_above_lower", "fabric_cluster.mtu: 9000 is above the MTU 1500 of lower0, the lower device of macvlan "
                        "ens7f1np1"),
    ("bridge_port", "fabric_rail_interfaces[3]: 'ens7f1np1' is a port of br9"),
    ("not_a_nic", "fabric_rail_interfaces[3]: 'ens7f1np1' is a bridge device, not a NIC that can carry a rail"),
    ("mgmt_lower_device", "fabric_rail_interfaces[3]: 'ens7f1np1' is below eth0.5"),
    ("unwritable_root", "cannot write the persistent configuration, nothing was changed"),
    # hosts.yml imports the role without its argument-spec task: the action refuses the role's options.
    ("bad_role_option", "rail_interfaces: value of persist must be one of: auto, networkd, netplan, nm, none, "
                        "got: bogus"),
    ("bad_role_type", "rail_interfaces: argument 'lock_timeout' is of type str and we were unable to convert to int"),
])
def test_bad_input_fails_before_any_change(case, expected, lab_dir):
    cluster = cluster_for("exclusive")
    inventory, _plan = lab.build(cluster, {"gpu01": 1}, INTERFACES, lab_dir)
    interfaces = list(INTERFACES)
    ns = lab.node_ns("gpu01")
    extra = {}
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
        # A macvlan reports max_mtu 65535, yet the kernel refuses anything above its lower device's MTU.
        lab.ip("link", "set", "ens7f1np1", "down", ns=ns)
        lab.ip("link", "set", "ens7f1np1", "name", "lower0", ns=ns)
        lab.ip("link", "add", "ens7f1np1", "link", "lower0", "type", "macvlan", "mode", "bridge", ns=ns)
    elif case == "bridge_port":
        lab.ip("link", "add", "br9", "type", "bridge", ns=ns)
        lab.ip("link", "set", "ens7f1np1", "master", "br9", ns=ns)
    elif case == "not_a_nic":
        lab.ip("link", "set", "ens7f1np1", "name", "old7", ns=ns)
        lab.ip("link", "add", "ens7f1np1", "type", "bridge", ns=ns)
    elif case == "mgmt_lower_device":
        # The management path moves to a VLAN-like stacked device on ens7f1np1 (macvlan here:
        # this kernel has no 8021q): the NIC below it is on the management path too.
        lab.ip("link", "add", "eth0.5", "link", "ens7f1np1", "type", "macvlan", ns=ns)
        lab.ip("link", "set", "eth0.5", "up", ns=ns)
        lab.ip("addr", "add", "10.251.0.2/24", "dev", "eth0.5", ns=ns)
        lab.ip("route", "add", "default", "via", "10.251.0.1", "dev", "eth0.5", "metric", "500", ns=ns)
    elif case == "bad_role_option":
        extra["rail_network_persist"] = "bogus"
    elif case == "bad_role_type":
        extra["rail_network_lock_timeout"] = "soon"
    elif case == "unwritable_root":
        root = os.path.join(lab_dir, "root", "gpu01")
        os.makedirs(root)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", root], check=True)
    path = with_vars(lab_dir, "extra", fabric_cluster=cluster, fabric_rail_interfaces=interfaces, **extra)
    before = state("gpu01")
    try:
        result = playbook(inventory, "-e", path)
    finally:
        if case == "unwritable_root":
            subprocess.run(["umount", os.path.join(lab_dir, "root", "gpu01")], check=False)
    text = result.stdout + result.stderr
    assert result.returncode != 0
    assert expected in text, text
    assert "Traceback" not in text
    assert state("gpu01") == before
    assert not os.path.exists(os.path.join(lab_dir, "root", "gpu01", "etc"))


TWO_FABRICS = {
    "name": "t-two", "management_networks": ["10.250.0.0/24"],
    "fabrics": {
        "compute": {"rails": 4, "mtu": 9000, "addressing": dict(MODES[("exclusive", 4)])},
        "storage": {"rails": 2, "mtu": 4200, "addressing": dict(MODES[("shared", 6)]), "qos": {"preset": "spiderpool"}},
    },
}
TWO_NICS = {"compute": INTERFACES, "storage": ["ens8f0np0", "ens8f1np1"]}


def test_two_fabrics_one_module_call_traffic_on_both(lab_dir):
    """A compute fabric (4 rails, IPv4, exclusive, MTU 9000) and a storage fabric (2 rails, IPv6,
    shared, MTU 4200) on every node: one module call per host, own tables and priorities per
    fabric, jumbo pings at each fabric's MTU on every rail of both."""
    inventory, plan = lab.build(TWO_FABRICS, NODES, TWO_NICS, lab_dir)
    first = playbook(inventory)
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.count("TASK [ainet.fabric.rail_network : Configure rail NICs") == 1
    second = playbook(inventory)
    assert set(changed_counts(second.stdout).values()) == {0}, second.stdout
    storage = [e for e in plan["nodes"]["gpu01"]["rails"] if e["fabric"] == "storage"]
    assert [(e["table"], e["priority"], e["mtu"]) for e in storage] == [(251, 1101, 4200), (252, 1102, 4200)]
    for host in NODES:
        assert_exactly_planned(host, plan, TWO_NICS, TWO_FABRICS)
        links = {l["ifname"]: l["mtu"] for l in json.loads(lab.ip("-j", "link", "show", ns=lab.node_ns(host)))}
        assert [links[n] for n in TWO_NICS["storage"]] == [4200, 4200]
    ping_matrix(plan, None, None, TWO_NICS)
    # The storage fabric removed from the model: its addresses, rules and tables go, compute stays.
    compute_only = dict(TWO_FABRICS, fabrics={"compute": TWO_FABRICS["fabrics"]["compute"]})
    extra = with_vars(lab_dir, "compute-only", fabric_cluster=compute_only,
                      fabric_rail_interfaces={"compute": INTERFACES})
    third = playbook(inventory, "-e", extra)
    assert third.returncode == 0, third.stdout + third.stderr
    sys.path.insert(0, os.path.join(ROOT, "build", ".collections"))
    from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan  # noqa: E402
    for host in NODES:
        assert_exactly_planned(host, rail_plan(compute_only, NODES), {"compute": INTERFACES}, compute_only)


def test_every_recorded_rule_shape_round_trips_through_the_kernel():
    """The 43 foreign rule shapes of data/iproute/foreign-rules (fwmark, ports, uidrange, tos,
    realms, goto, actions ...): the line the module would write adds exactly that rule, reads back
    equal, and the delete line the takeover uses removes it."""
    sys.path.insert(0, os.path.join(ROOT, "build", ".collections"))
    from ansible_collections.ainet.fabric.plugins.module_utils.host import iproute  # noqa: E402
    path = os.path.join(ROOT, "tests", "unit", "plugins", "module_utils", "data", "iproute",
                        "foreign-rules.rule4n.json")
    with open(path) as handle:
        rules = [r for r in iproute.parse_rules(handle.read(), 4) if dict(r)["priority"] not in (0, 32766, 32767)]
    ns = lab.prefix() + "-rules"
    lab.ip("netns", "add", ns)
    try:
        lab.ip("link", "add", "r1", "type", "veth", "peer", "name", "r1p", ns=ns)
        for rule in rules:
            lab.ip("-4", *iproute.rule_line("add", rule).split(), ns=ns)
        back = iproute.parse_rules(lab.ip("-N", "-4", "-j", "rule", "show", ns=ns), 4)
        assert [iproute.rule_text(r) for r in rules if r not in back] == []
        for rule in rules:
            lab.ip("-4", *iproute.rule_line("del", rule).split(), ns=ns)
        left = iproute.parse_rules(lab.ip("-N", "-4", "-j", "rule", "show", ns=ns), 4)
        assert [r for r in left if dict(r)["priority"] not in (0, 32766, 32767)] == []
    finally:
        lab.ip("netns", "del", ns, check=False)
