# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which nodes test their rail links against which, round by round, and what the results say.

**Schedule** (:func:`rounds`): the round-robin ("circle") method. With N nodes (a stand-in added when N is odd,
whose partner sits the round out), round k pairs the nodes so that every node is in at most one pair; the N-1
rounds (N rounded up to even) together hold every pair of nodes exactly once - the full mesh, on request. By
default only the first ``count`` rounds run (3): every node meets three different peers on every rail, in
rounds whose pairs all run at once, so a fleet of N nodes is tested in 3 rounds, not N^2 tests. Every rail runs
the same pairs in the same round (each on its own NICs and ToRs).

**Verdict** (:func:`verdict`): a node's rail link is **broken** when its tests failed with at least two different
peers (one failing peer only points at the pair, not at a link: it is **suspect**, unless that peer's own
link is broken, which explains it), and **slow** when its
bandwidth (or latency) missed the threshold with at least two peers. Each finding names the node, its NIC, and
the ToR and port the plan gives that node and rail.
"""

from __future__ import annotations

DEFAULT_ROUNDS = 3


def rounds(nodes, count=DEFAULT_ROUNDS, full_mesh=False):
    """``[[(a, b), ...], ...]``: the pairs of each round, ``a`` before ``b`` in ``nodes``' order (``a`` serves,
    ``b`` connects). ``full_mesh``: every pair once (N-1 rounds, N rounded up to even); else the first ``count``
    of those rounds."""
    members = list(nodes)
    if len(members) != len(set(members)):
        raise ValueError("a node is listed twice")
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
        turn = rest[k:] + rest[:k]  # rotate every node but the first one place per round
        line = [fixed] + turn
        pairs = []
        for i in range(size // 2):
            a, b = line[i], line[size - 1 - i]
            if a is None or b is None:
                continue
            pairs.append((a, b) if order[a] < order[b] else (b, a))
        out.append(sorted(pairs, key=lambda pair: order[pair[0]]))
    return out


def verdict(results, plan, min_gbps=None, max_usec=None):
    """Findings from test results.

    ``results``: ``[{"round", "fabric", "rail", "a", "b", "ok", "gbps", "usec", "error"}]`` (``gbps``/``usec``
    None where not measured); ``plan``: the rail plan (the NIC, ToR and port of a node's rail). Returns
    ``{"broken": [...], "suspect": [...], "slow": [...], "tested": n, "failed": n}``, each finding
    ``{"host", "fabric", "rail", "interface", "tor", "tor_port", "peers": [...], "why"}``."""
    per_link = {}
    for result in results:
        for me, peer in ((result["a"], result["b"]), (result["b"], result["a"])):
            link = per_link.setdefault((me, result["fabric"], result["rail"]), {"failed": {}, "slow": {}})
            if not result.get("ok"):
                link["failed"][peer] = result.get("error") or "failed"
                continue
            reasons = []
            if min_gbps is not None and result.get("gbps") is not None and result["gbps"] < min_gbps:
                reasons.append("%.1f Gb/s < %s" % (result["gbps"], min_gbps))
            if max_usec is not None and result.get("usec") is not None and result["usec"] > max_usec:
                reasons.append("%.2f us > %s" % (result["usec"], max_usec))
            if reasons:
                link["slow"][peer] = ", ".join(reasons)
    out = {"broken": [], "suspect": [], "slow": [], "tested": len(results),
           "failed": sum(1 for r in results if not r.get("ok"))}
    broken = set(key for key, link in per_link.items() if len(link["failed"]) >= 2)
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
