# -*- coding: utf-8 -*-
"""The link tests' schedule (fleet/pair_schedule): property tests that no node is in two pairs of a round and that
the full mesh holds every pair exactly once in N-1 rounds (N rounded up to even), the default in 3 rounds with 3
different peers per node; and the verdict on results that tell a broken link from a failing pair."""

from __future__ import annotations

import itertools

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
    return rail_plan({"name": "t", "rails": 2, "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16",
                                                               "rail_prefix": 24, "node_prefix": 27}},
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
