# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which nodes test their rail links against which, round by round, and what the results say.

**Schedule** (:func:`round_count`, :func:`round_pairs`): the round-robin ("circle") method. With N nodes (a
stand-in added when N is odd, whose partner sits the round out), round k pairs the nodes so that every node is in at
most one pair; the N-1 rounds (N rounded up to even) together hold every pair of nodes exactly once - the full mesh,
on request. By default only the first ``count`` rounds run (3): every node meets three different peers on every
rail, in rounds whose pairs all run at once, so a fleet of N nodes is tested in 3 rounds, not N^2 tests. Every rail
runs the same pairs in the same round (each on its own NICs and ToRs). Each round is computed on its own, in O(N),
when it starts: a play never holds more than one round (1,023 rounds of 1,024 nodes in the full mesh).

**Verdict** (:func:`verdict`): a node's rail link is **broken** when its tests failed with at least two different
peers (one failing peer only points at the pair, not at a link: it is **suspect**, unless that peer's own
link is broken, which explains it), and **slow** when its
bandwidth (or latency) missed the threshold with at least two peers. Each finding names the node, its NIC, and
the ToR and port the plan gives that node and rail.
"""

from __future__ import annotations

DEFAULT_ROUNDS = 3


def round_count(size, count=DEFAULT_ROUNDS, full_mesh=False):
    """How many rounds a schedule of ``size`` nodes has: every round of the circle (``size`` - 1, ``size`` rounded up
    to even) with ``full_mesh``, else the first ``count`` of them; none below two nodes."""
    if size < 2:
        return 0
    total = size + size % 2 - 1
    return total if full_mesh else min(max(int(count), 0), total)


def round_pairs(nodes, number):
    """``[(a, b), ...]``: the pairs of round ``number`` (1, 2, ...) of the circle, ``a`` before ``b`` in ``nodes``'
    order (``a`` serves, ``b`` connects), sorted by ``a``.

    Computed on its own in O(N), without the rounds before it: the circle fixes the first node and turns the others
    one place per round, so in round k (from 0) position j >= 1 of the line holds the node ``(j - 1 + k) mod (M - 1)``
    of the turning ones (M: N rounded up to even; a stand-in fills an odd fleet, whose partner sits the round out);
    position i meets position M - 1 - i. A round holds a schedule's memory for one round only."""
    members = list(nodes)
    if len(members) != len(set(members)):
        raise ValueError("a node is listed twice")
    total = round_count(len(members), full_mesh=True)
    if not 1 <= number <= total:
        raise ValueError("round %r: %d nodes have rounds 1 to %d" % (number, len(members), total))
    order = dict((name, index) for index, name in enumerate(members))
    ring = members + ([None] if len(members) % 2 else [])
    size = len(ring)
    shift = number - 1

    def at(position):
        return ring[0] if position == 0 else ring[1 + (position - 1 + shift) % (size - 1)]

    pairs = []
    for i in range(size // 2):
        a, b = at(i), at(size - 1 - i)
        if a is None or b is None:
            continue
        pairs.append((a, b) if order[a] < order[b] else (b, a))
    return sorted(pairs, key=lambda pair: order[pair[0]])


def rounds(nodes, count=DEFAULT_ROUNDS, full_mesh=False):
    """``[[(a, b), ...], ...]``: :func:`round_pairs` of every round, for small fleets and tests. ``full_mesh``: every
    pair once (N-1 rounds, N rounded up to even); else the first ``count`` of those rounds. A play streams the rounds
    instead (:func:`round_count` once, then :func:`round_pairs` as each round starts)."""
    members = list(nodes)
    if len(members) != len(set(members)):
        raise ValueError("a node is listed twice")
    return [round_pairs(members, number) for number in range(1, round_count(len(members), count, full_mesh) + 1)]


def tally(results, min_gbps=None, max_usec=None, state=None):
    """Fold test results into a running tally, round by round, so that a job keeps what the verdict needs and not
    every result: ``{"tested": n, "failed": n, "links": {host: {fabric: {rail: {"failed": {peer: why},
    "slow": {peer: why}}}}}}`` (JSON-ready: rails as strings), where only the links that failed or were slow with some
    peer appear, and ``"passed": {host: {fabric: {rail: true}}}``, the links that passed with some peer (a link that
    never passed is never explained away by its peers' failures). ``results`` as for :func:`verdict`; ``state``: the
    tally so far (None: a new one), updated in place and returned."""
    state = state if state is not None else {"tested": 0, "failed": 0, "links": {}}
    passed = state.setdefault("passed", {})
    state["tested"] += len(results)
    for result in results:
        if not result.get("ok"):
            state["failed"] += 1
        for me, peer in ((result["a"], result["b"]), (result["b"], result["a"])):
            if not result.get("ok"):
                _link(state, me, result)["failed"][peer] = result.get("error") or "failed"
                continue
            passed.setdefault(me, {}).setdefault(result["fabric"], {})[str(result["rail"])] = True
            reasons = []
            if min_gbps is not None and result.get("gbps") is not None and result["gbps"] < min_gbps:
                reasons.append("%.1f Gb/s < %s" % (result["gbps"], min_gbps))
            if max_usec is not None and result.get("usec") is not None and result["usec"] > max_usec:
                reasons.append("%.2f us > %s" % (result["usec"], max_usec))
            if reasons:
                _link(state, me, result)["slow"][peer] = ", ".join(reasons)
    return state


def _link(state, host, result):
    rails = state["links"].setdefault(host, {}).setdefault(result["fabric"], {})
    return rails.setdefault(str(result["rail"]), {"failed": {}, "slow": {}})


def verdict(results, plan, min_gbps=None, max_usec=None):
    """Findings from test results: :func:`findings` of their :func:`tally`.

    ``results``: ``[{"round", "fabric", "rail", "a", "b", "ok", "gbps", "usec", "error"}]`` (``gbps``/``usec``
    None where not measured); ``plan``: the rail plan (the NIC, ToR and port of a node's rail). Returns
    ``{"broken": [...], "suspect": [...], "slow": [...], "tested": n, "failed": n}``, each finding
    ``{"host", "fabric", "rail", "interface", "tor", "tor_port", "peers": [...], "why"}``."""
    return findings(tally(results, min_gbps, max_usec), plan)


def _broken(per_link, passed):
    """The broken links: of the links that failed with at least two peers, those whose failures the others do not
    explain. A candidate that passed with some peer (``passed(key)``) and all of whose failed peers are candidates too
    is explained by them and dropped, fewest failures first, one at a time (a dropped link no longer explains anyone):
    so two broken links on one rail do not make every node that met both of them broken too, and a rail that failed
    everywhere (its ToR down) keeps every link broken."""
    candidates = set(key for key, link in per_link.items() if len(link["failed"]) >= 2)
    while True:
        explained = [key for key in candidates if passed(key)
                     and all((peer, key[1], key[2]) in candidates for peer in per_link[key]["failed"])]
        if not explained:
            return candidates
        candidates.discard(min(explained, key=lambda key: (len(per_link[key]["failed"]), key)))


def findings(state, plan):
    """The verdict (see :func:`verdict`) of a :func:`tally`."""
    per_link = {}
    for host, fabrics in state["links"].items():
        for fabric, rails in fabrics.items():
            for rail, link in rails.items():
                per_link[(host, fabric, int(rail))] = {"failed": dict(link["failed"]), "slow": dict(link["slow"])}
    out = {"broken": [], "suspect": [], "slow": [], "tested": state["tested"], "failed": state["failed"]}
    passed = state.get("passed") or {}
    broken = _broken(per_link, lambda key: bool(passed.get(key[0], {}).get(key[1], {}).get(str(key[2]))))
    for (host, fabric, rail), link in sorted(per_link.items()):
        # A failure with a peer whose own link is broken is explained by that peer.
        for peer in [p for p in link["failed"] if (p, fabric, rail) in broken and (host, fabric, rail) not in broken]:
            del link["failed"][peer]
        entry = None
        for item in (plan["nodes"].get(host) or {}).get("rails", ()):
            if item["fabric"] == fabric and item["rail"] == rail:
                entry = item
        where = {"host": host, "fabric": fabric, "rail": rail,
                 "interface": entry["interface"] if entry else None,
                 "tor": entry["tor"] if entry else None, "tor_port": entry["tor_port"] if entry else None}
        if len(link["failed"]) >= 2:
            out["broken"].append(dict(where, peers=sorted(link["failed"]),
                                      why="failed with %d peers: %s" % (len(link["failed"]), "; ".join(
                                          "%s: %s" % item for item in sorted(link["failed"].items())))))
        elif link["failed"]:
            out["suspect"].append(dict(where, peers=sorted(link["failed"]),
                                       why="failed with one peer only: %s" % "; ".join(
                                           "%s: %s" % item for item in sorted(link["failed"].items()))))
        if len(link["slow"]) >= 2:
            out["slow"].append(dict(where, peers=sorted(link["slow"]),
                                    why="; ".join("%s: %s" % item for item in sorted(link["slow"].items()))))
    return out
