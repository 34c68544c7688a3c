# -*- coding: utf-8 -*-
"""The link tests' schedule (fleet/pair_schedule): property tests that no node is in two pairs of a round and that
the full mesh holds every pair exactly once in N-1 rounds (N rounded up to even), the default in 3 rounds with 3
different peers per node; and the verdict on results that tell a broken link from a failing pair."""

from __future__ import annotations

import itertools

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ainet.fabric.plugins.module_utils.fleet import pair_schedule as ps
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan

NODES = st.lists(st.text(alphabet="abcdefgh0123456789", min_size=1, max_size=6), unique=True, max_size=70)


@settings(max_examples=200, deadline=None)
@given(nodes=NODES)
def test_full_mesh_every_pair_once_no_node_twice_in_a_round(nodes):
    rounds = ps.rounds(nodes, full_mesh=True)
    n = len(nodes)
    assert len(rounds) == (0 if n < 2 else n - 1 if n % 2 == 0 else n)
    seen = []
    for pairs in rounds:
        busy = [node for pair in pairs for node in pair]
        assert len(busy) == len(set(busy))  # every node at most once per round
        assert len(pairs) == n // 2  # every node busy but the odd one out
        seen.extend(frozenset(pair) for pair in pairs)
    assert sorted(seen, key=sorted) == sorted((frozenset(p) for p in itertools.combinations(nodes, 2)), key=sorted)
    for pairs in rounds:
        for a, b in pairs:
            assert nodes.index(a) < nodes.index(b)


@settings(max_examples=200, deadline=None)
@given(nodes=NODES, count=st.integers(0, 6))
def test_the_default_rounds_give_every_node_count_different_peers(nodes, count):
    rounds = ps.rounds(nodes, count=count)
    n = len(nodes)
    assert len(rounds) == (0 if n < 2 else min(count, n - 1 if n % 2 == 0 else n))
    peers = dict((node, set()) for node in nodes)
    for pairs in rounds:
        busy = [node for pair in pairs for node in pair]
        assert len(busy) == len(set(busy))
        for a, b in pairs:
            peers[a].add(b)
            peers[b].add(a)
    for node in nodes:
        # an odd fleet's odd one out sits out one round of the N it has
        assert len(peers[node]) >= min(len(rounds), n - 1) - (n % 2)


def plan4():
    addressing = {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27}
    return rail_plan({"name": "t", "rails": 2, "addressing": addressing},
                     dict(("gpu%02d" % n, {"node_id": n, "rail_interfaces": ["ens6f0np0", "ens6f1np1"]})
                          for n in range(1, 5)))


def test_a_broken_link_is_told_from_a_failing_pair():
    nodes = ["gpu01", "gpu02", "gpu03", "gpu04"]
    results = []
    for number, pairs in enumerate(ps.rounds(nodes, count=3), 1):
        for a, b in pairs:
            for rail in (1, 2):
                bad = rail == 2 and "gpu03" in (a, b)  # gpu03's rail-2 link is broken
                slow = rail == 1 and "gpu04" in (a, b)
                results.append({"round": number, "fabric": "default", "rail": rail, "a": a, "b": b, "ok": not bad,
                                "gbps": 180.0 if slow else 390.0, "usec": 3.1, "error": "timeout" if bad else None})
    found = ps.verdict(results, plan4(), min_gbps=300)
    assert [(f["host"], f["rail"], f["interface"], f["tor"], f["tor_port"]) for f in found["broken"]] == [
        ("gpu03", 2, "ens6f1np1", "t-rail2-tor", "swp3")]
    assert found["broken"][0]["peers"] == ["gpu01", "gpu02", "gpu04"]
    assert found["suspect"] == []  # its peers' single failures are explained by gpu03
    assert [(f["host"], f["rail"]) for f in found["slow"]] == [("gpu04", 1)]
    assert found["tested"] == 12 and found["failed"] == 3
    lone = [dict(results[0], ok=False, error="timeout")] + results[1:]
    lone = [r for r in lone if not (r["rail"] == 2 and "gpu03" in (r["a"], r["b"]))]
    suspects = ps.verdict(lone, plan4())["suspect"]
    assert sorted(f["host"] for f in suspects) == sorted([lone[0]["a"], lone[0]["b"]])


@settings(max_examples=100, deadline=None)
@given(size=st.integers(min_value=6, max_value=24), data=st.data())
def test_several_broken_links_on_one_rail_break_no_other_node(size, data):
    """Two (or more) broken links on one rail: every node that met two of them failed with two peers, and is still
    not broken (both failures are explained); the full mesh and the default three rounds alike."""
    nodes = ["gpu%02d" % n for n in range(1, size + 1)]
    bad = set(data.draw(st.lists(st.sampled_from(nodes), min_size=2, max_size=size // 3, unique=True)))
    for count, full in ((3, False), (None, True)):
        results = [{"round": number, "fabric": "default", "rail": 1, "a": a, "b": b, "ok": not {a, b} & bad,
                    "gbps": None, "usec": None, "error": "timeout" if {a, b} & bad else None}
                   for number, pairs in enumerate(ps.rounds(nodes, count=count or 3, full_mesh=full), 1)
                   for a, b in pairs]
        found = ps.verdict(results, {"nodes": {}})
        # a bad node that met two good ones is broken; no good node ever is
        met = {h: set() for h in nodes}
        for r in results:
            met[r["a"]].add(r["b"])
            met[r["b"]].add(r["a"])
        if any(len(met[h] - bad) < 2 for h in bad) or any(not met[h] - bad for h in set(nodes) - bad):
            continue  # a bad node that met fewer than two good ones, or a good one that met only bad ones: ambiguous
        assert {f["host"] for f in found["broken"]} == bad
        assert not found["suspect"]


def test_a_rail_that_failed_everywhere_keeps_every_link_broken():
    nodes = ["gpu%02d" % n for n in range(1, 9)]
    results = [{"round": number, "fabric": "default", "rail": 1, "a": a, "b": b, "ok": False, "gbps": None,
                "usec": None, "error": "timeout"}
               for number, pairs in enumerate(ps.rounds(nodes, full_mesh=True), 1) for a, b in pairs]
    found = ps.verdict(results, {"nodes": {}})
    assert sorted(f["host"] for f in found["broken"]) == nodes and not found["suspect"]


# -- outputs ------------------------------------------------------------------------------------------------------

import os  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.ainet.fabric.plugins.module_utils.fleet import link_results as lr  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "data", "fleet")


def data(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def test_ping_outputs_recorded_with_iputils():
    ok = lr.parse_ping(data("ping-jumbo-ok.txt"))
    assert (ok["transmitted"], ok["received"], ok["loss"], ok["rtt_avg_ms"], ok["errors"]) == (3, 3, 0.0, 0.062, [])
    lost = lr.parse_ping(data("ping-jumbo-lost-peer-mtu-1500.txt"))
    assert (lost["received"], lost["loss"]) == (0, 100.0)
    assert lost["errors"] == ["ping: sendmsg: No buffer space available"] and lost["mtu_error"] is None
    local = lr.parse_ping(data("ping-local-error-message-too-long.txt"))
    assert local["mtu_error"] == 9000 and local["received"] == 0
    assert lr.parse_ping(data("ping-no-route.txt"))["loss"] == 100.0
    assert lr.parse_ping(data("ping6-jumbo-ok.txt"))["rtt_avg_ms"] == 0.085
    assert lr.parse_ping("ping: connect: Network is unreachable\n")["errors"] == ["ping: connect: Network is unreachable"]


def test_perftest_outputs_in_both_units_with_interleaved_warnings():
    mb = lr.parse_perftest(data("ib_write_bw-rxe-vm-mb.txt"))
    assert mb["kind"] == "bw" and mb["gbps"] == round(18.97 * 8 / 1000, 4) and mb["peak_gbps"] == round(20.05 * 8 / 1000, 4)
    gbits = lr.parse_perftest(data("ib_write_bw-cx-gbits-cpufreq-D.txt"))
    assert gbits["gbps"] == 98.02 and gbits["peak_gbps"] == 0.0 and gbits["errors"] == []
    sweep = lr.parse_perftest(data("ib_write_bw-cx-gbits-sweep-trimmed.txt"))
    assert len(sweep["rows"]) == 4 and sweep["gbps"] == 126.20
    lat = lr.parse_perftest(data("ib_read_lat-roce-cpufreq.txt"))
    assert lat["kind"] == "lat" and lat["usec"] == 4.82 and lat["gbps"] is None
    send = lr.parse_perftest(data("ib_send_lat-ib-ud-sweep-trimmed.txt"))
    assert [r["t_avg[usec]"] for r in send["rows"]] == [1.70, 1.90] and send["usec"] == 1.90
    failed = lr.parse_perftest("Couldn't connect to 10.0.0.2:18515\nUnable to open file descriptor for socket "
                               "connection Unable to init the socket connection\n")
    assert not failed["rows"] and failed["errors"][0] == "Couldn't connect to 10.0.0.2:18515"


def test_assignments_give_both_ends_the_pair_and_the_plan_addresses():
    plan = plan4()
    rounds = streamed(plan, ["gpu01", "gpu02", "gpu03", "gpu04", "nothere"], 3)
    assert len(rounds) == 3 and all(len(r) == 4 for r in rounds)
    first = rounds[0]
    server = [h for h, a in first.items() if a["role"] == "server"][0]
    client = first[server]["peer"]
    assert first[client]["peer"] == server and first[client]["role"] == "client"
    rail2 = first[client]["rails"][1]
    assert rail2["ip"] == plan["nodes"][client]["rails"][1]["ip"]
    assert rail2["peer_ip"] == plan["nodes"][server]["rails"][1]["ip"]
    assert (rail2["ping_size"], rail2["port"], rail2["interface"]) == (9000 - 28, 18517, "ens6f1np1")


def test_results_of_tells_a_narrow_path_from_no_path():
    rail1 = {"fabric": "default", "rail": 1, "ping_size": 8972}
    rail2 = {"fabric": "default", "rail": 2, "ping_size": 8972}
    registered = [{"round": 1, "peer": "gpu01",
                   "icmp_small": [dict(item=rail1, rc=0, stdout=data("ping6-jumbo-ok.txt")),
                                  dict(item=rail2, rc=1, stdout=data("ping-no-route.txt"))],
                   "icmp": [dict(item=rail1, rc=1, stdout=data("ping-jumbo-lost-peer-mtu-1500.txt")),
                            dict(item=rail2, rc=1, stdout=data("ping-no-route.txt"))],
                   "rdma_bw": [dict(item=rail1, rc=0, stdout=data("ib_write_bw-cx-gbits-cpufreq-D.txt")),
                               {"skipped": True, "item": rail2}]}]
    results = lr.results_of("gpu02", registered)
    assert [(r["test"], r["rail"], r["ok"]) for r in results] == [("icmp", 1, False), ("rdma_bw", 1, True),
                                                                  ("icmp", 2, False)]
    assert results[0]["error"] == ("icmp: 8972-byte DF pings lost (100% loss) while small ones pass: an MTU below the "
                                   "fabric's on the path")
    assert results[1]["gbps"] == 98.02 and (results[1]["a"], results[1]["b"]) == ("gpu01", "gpu02")
    assert results[2]["error"] == "icmp: no ICMP reply (100% loss)"


def test_rping_results_from_the_vm_recording():
    rail1 = {"fabric": "default", "rail": 1, "ping_size": 1472}
    ok = lr.results_of("vm2", [{"round": 1, "peer": "vm1", "rdma_cm": [
        dict(item=rail1, rc=0, stdout=data("rping-rxe-vm-client.txt"), stderr="")]}])
    assert [(r["test"], r["ok"], r["error"]) for r in ok] == [("rdma_cm", True, None)]
    rejected = lr.results_of("vm2", [{"round": 1, "peer": "vm1", "rdma_cm": [
        dict(item=rail1, rc=255, stdout="", stderr="cma event RDMA_CM_EVENT_REJECTED, error 8\nconnect error -1\n")]}])
    assert rejected[0]["error"] == "rdma_cm: rping cma event RDMA_CM_EVENT_REJECTED, error 8"


def plan4_v6():
    addressing = {"mode": "exclusive", "supernet": "fd00:17::/48", "rail_prefix": 64, "node_prefix": 80}
    return rail_plan({"name": "t", "rails": 2, "addressing": addressing},
                     dict(("gpu%02d" % n, {"node_id": n, "rail_interfaces": ["ens6f0np0", "ens6f1np1"]})
                          for n in range(1, 5)))


def test_ib_write_bw_on_an_ipv6_rail_negotiates_over_ipv6_and_ipv4_stays_as_it_was():
    v6 = lr.round_assignments(plan4_v6(), ["gpu01", "gpu02"], 1)
    assert [r["perftest_args"] for a in v6.values() for r in a["rails"]] == [["--ipv6-addr"]] * 4
    v4 = lr.round_assignments(plan4(), ["gpu01", "gpu02"], 1)
    assert [r["perftest_args"] for a in v4.values() for r in a["rails"]] == [[]] * 4


def rdma_rails(host, plan, override=None):
    out = []
    for entry in plan["nodes"][host]["rails"]:
        rail = {"netdev": entry["interface"], "rdma_device": "mlx5_%d" % entry["rail"], "port": 1, "gid_index": 3,
                "address": entry["ip"]}
        rail.update((override or {}).get(entry["rail"], {}))
        out.append(rail)
    return out


def test_not_run_says_why_each_rdma_test_was_skipped():
    plan = plan4_v6()
    hosts = ["gpu01", "gpu02", "gpu03"]
    facts = {"gpu01": rdma_rails("gpu01", plan), "gpu02": rdma_rails("gpu02", plan)}
    assert lr.not_run(plan, ["gpu01", "gpu02"], True, facts) == []  # control: every rail has device and GID
    facts["gpu02"] = rdma_rails("gpu02", plan, {2: {"gid_index": None}})
    lines = lr.not_run(plan, hosts, True, facts)
    ip = plan["nodes"]["gpu02"]["rails"][1]["ip"]
    assert lines[0] == ("ib_write_bw skipped on gpu02 ens6f1np1 (default rail 2, %s), because mlx5_2 port 1 has no "
                        "RoCE v2 GID holding %s (GID table: /sys/class/infiniband/mlx5_2/ports/1/gids; the address "
                        "must be on the NIC itself)" % (ip, ip))
    assert len(lines) == 3 and all("gpu03" in line and "rdma_facts reported nothing" in line for line in lines[1:])
    facts["gpu01"] = rdma_rails("gpu01", plan, {1: {"rdma_device": None}})
    assert "because the NIC has no RDMA device" in lr.not_run(plan, ["gpu01"], True, facts)[0]
    assert lr.not_run(plan, hosts, False, {}) == [
        "RDMA tests (ib_write_bw, rping) skipped on every rail, because link_test_rdma is false: ICMP only."]


# -- the streamed schedule ----------------------------------------------------------------------------------------
# Oracle: the whole schedule at once, as computed before the rounds were streamed (pair_schedule.rounds and
# link_results.assignments of main@0d07781, copied unchanged). The streamed rounds must equal it round for round.

def old_rounds(nodes, count=3, full_mesh=False):
    members = list(nodes)
    if len(members) < 2:
        return []
    order = dict((name, index) for index, name in enumerate(members))
    ring = members + ([None] if len(members) % 2 else [])
    size = len(ring)
    total = size - 1
    wanted = total if full_mesh else min(max(int(count), 0), total)
    out = []
    fixed, rest = ring[0], ring[1:]
    for k in range(wanted):
        turn = rest[k:] + rest[:k]
        line = [fixed] + turn
        pairs = []
        for i in range(size // 2):
            a, b = line[i], line[size - 1 - i]
            if a is None or b is None:
                continue
            pairs.append((a, b) if order[a] < order[b] else (b, a))
        out.append(sorted(pairs, key=lambda pair: order[pair[0]]))
    return out


def old_assignments(plan, hosts, count, full_mesh=False, fabric=None):
    members = [h for h in hosts if h in plan["nodes"]]
    out = []
    for pairs in old_rounds(members, count, full_mesh):
        this = {}
        for server, client in pairs:
            for me, peer, role in ((server, client, "server"), (client, server, "client")):
                mine = dict(((e["fabric"], e["rail"]), e) for e in plan["nodes"][me]["rails"]
                            if fabric is None or e["fabric"] == fabric)
                theirs = dict(((e["fabric"], e["rail"]), e) for e in plan["nodes"][peer]["rails"])
                rails = []
                for key, entry in sorted(mine.items()):
                    if key not in theirs:
                        continue
                    v6 = ":" in entry["ip"]
                    rails.append({"fabric": entry["fabric"], "rail": entry["rail"], "interface": entry["interface"],
                                  "ip": entry["ip"], "peer_ip": theirs[key]["ip"], "mtu": entry["mtu"],
                                  "ping_size": entry["mtu"] - (48 if v6 else 28),
                                  "port": lr.PERFTEST_PORT + entry["rail"],
                                  "perftest_args": ["--ipv6-addr"] if v6 else []})
                this[me] = {"peer": peer, "role": role, "rails": rails}
        out.append(this)
    return out


def streamed(plan, hosts, count, full_mesh=False, fabric=None):
    """The rounds as the role runs them: the count once, then each round on its own."""
    total = lr.schedule(plan["nodes"], hosts, count, full_mesh)["rounds"]
    return [lr.round_assignments(plan, hosts, number, fabric) for number in range(1, total + 1)]


def plan_of(size, v6=False):
    addressing = ({"mode": "exclusive", "supernet": "fd00:17::/48", "rail_prefix": 64, "node_prefix": 80} if v6 else
                  {"mode": "exclusive", "supernet": "10.0.0.0/12", "rail_prefix": 16, "node_prefix": 27})
    return rail_plan({"name": "t", "fabrics": {"compute": {"rails": 2, "addressing": addressing},
                                               "storage": {"rails": 1, "mtu": 4200, "addressing": {
                                                   "mode": "shared", "supernet": "10.70.0.0/16",
                                                   "rail_prefix": 16}}}},
                     dict(("gpu%03d" % n, {"node_id": n, "rail_interfaces": {
                         "compute": ["ens6f0np0", "ens6f1np1"], "storage": ["ens7f0np0"]}}) for n in range(1, size + 1)))


def test_streamed_rounds_equal_the_whole_schedule_round_for_round():
    for size in (1, 2, 3, 4, 7, 8, 70, 71):
        plan = plan_of(size)
        hosts = sorted(plan["nodes"], reverse=True) + ["notanode"]  # play order, not plan order; a stranger
        for count, full_mesh in ((3, False), (3, True), (0, False), (100, False)):
            old = old_assignments(plan, hosts, count, full_mesh)
            assert streamed(plan, hosts, count, full_mesh) == old, (size, count, full_mesh)
            assert lr.schedule(plan["nodes"], hosts, count, full_mesh) == {
                "rounds": len(old), "hosts": size, "pairs": sum(len(r) // 2 for r in old)}
        assert streamed(plan, hosts, 3, True, "storage") == old_assignments(plan, hosts, 3, True, "storage")
    v6 = plan_of(5, v6=True)
    assert streamed(v6, list(v6["nodes"]), 3, True) == old_assignments(v6, list(v6["nodes"]), 3, True)
    # not vacuous: 70 nodes in full mesh are 69 rounds of 35 pairs, every node on 3 rails
    full = streamed(plan_of(70), sorted(plan_of(70)["nodes"]), 3, True)
    assert len(full) == 69 and all(len(r) == 70 and all(len(a["rails"]) == 3 for a in r.values()) for r in full)


@settings(max_examples=200, deadline=None)
@given(nodes=NODES)
def test_each_round_on_its_own_is_that_round_of_the_whole_schedule(nodes):
    whole = old_rounds(nodes, full_mesh=True)
    assert ps.round_count(len(nodes), full_mesh=True) == len(whole)
    assert [ps.round_pairs(nodes, number) for number in range(1, len(whole) + 1)] == whole
    assert ps.rounds(nodes, full_mesh=True) == whole
    seen = [frozenset(pair) for number in range(1, len(whole) + 1) for pair in ps.round_pairs(nodes, number)]
    assert len(seen) == len(set(seen)) == len(nodes) * (len(nodes) - 1) // 2  # every pair once, streamed


def test_a_round_outside_the_schedule_is_refused():
    nodes = ["a", "b", "c", "d"]
    assert ps.round_pairs(nodes, 3) == [("a", "c"), ("b", "d")]  # control: the last round of 4 nodes (line a d b c)
    for number in (0, 4, -1):
        with pytest.raises(ValueError, match="round %d: 4 nodes have rounds 1 to 3" % number):
            ps.round_pairs(nodes, number)
    with pytest.raises(ValueError, match="listed twice"):
        ps.round_pairs(["a", "b", "a"], 1)
