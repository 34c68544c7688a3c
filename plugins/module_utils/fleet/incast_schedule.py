# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The incast rounds of a lossless load test: per ToR, one receiver and k senders of one rail at once, rotating.

**Groups** (:func:`groups`): one per ToR and rail of the plan (``plan["tors"][t]["ports"]``), its members the nodes
with a port there, in node id order. Taken from the plan alone, never from the play's hosts: a ``--limit`` (or an
AWX slice) runs the same incasts, minus those it cannot (:func:`step_assignments` says which and why).

**Rounds** (:func:`round_count`, :func:`incast`): round r of a group of N nodes makes node
``floor((r - 1) * N / R)`` (R rounds) the receiver and the k nodes after it in the group's circular order its
senders, k = min(``max_senders``, N - 1): by default every other node of the rail. With R = N (``rounds=0``,
the default) every node receives once; ``rounds`` bounds R, spreading the receivers evenly over the group.

**One incast per ToR per step** (:func:`tor_turns`): every ToR runs at once, but a ToR that serves several rails
(several groups) runs their rounds one group after another - group 1's rounds, then group 2's - never two incasts
in one step. Two incasts on one switch share its buffer: a sender paused there proves the switch congested, not the
receiver's port, so a step holds one incast per ToR and a sender's pause is its receiver's evidence
(``fleet/incast_results.py``). A ToR with fewer turns sits the later ones out.

**Steps** (:func:`step_count`, :func:`step_of`): every lossless class runs its own turns, one class at a time (the
RDMA ECN/CNP counters count the whole device: one class per run keeps them the class's). With T the most turns of a
ToR (the sum of its groups' rounds), step s is class ``(s - 1) // T`` and turn ``(s - 1) % T + 1``. A play computes
one step when it starts (:func:`step_assignments`, O(links)), so it holds one step at a time.

:func:`projected_rounds` gives the same numbers for a fleet without a plan (64 ToRs x 32 nodes, say).
"""

from __future__ import annotations

DEFAULT_MAX_SENDERS = 16
MAX_SENDERS_LIMIT = 99
# TCP port of perftest's exchange: BASE_PORT + (fabric index * 16 + rail - 1) * 100 + sender slot, so that every
# rail of every fabric and every sender of an incast has its own (perftest's server serves one client).
BASE_PORT = 20000


def groups(plan, fabric=None):
    """``[{"fabric", "tor", "rail", "members": [host, ...], "ports": {host: tor_port}}]``, one per ToR and rail of
    the plan (of ``fabric`` only, when given), members in node id order, groups sorted by fabric, ToR, rail."""
    out = []
    for name in sorted(plan["tors"]):
        tor = plan["tors"][name]
        if fabric is not None and tor["fabric"] != fabric:
            continue
        for rail in sorted({p["rail"] for p in tor["ports"]}):
            ports = sorted((p for p in tor["ports"] if p["rail"] == rail), key=lambda p: (p["node_id"], p["host"]))
            out.append({"fabric": tor["fabric"], "tor": name, "rail": rail,
                        "members": [p["host"] for p in ports], "ports": dict((p["host"], p["port"]) for p in ports)})
    return sorted(out, key=lambda g: (g["fabric"], g["tor"], g["rail"]))


def senders_per_incast(size, max_senders=DEFAULT_MAX_SENDERS):
    """k: every other node of the group, at most ``max_senders``."""
    return max(0, min(int(max_senders), size - 1))


def round_count(size, rounds=0):
    """Rounds of a group of ``size`` nodes: ``size`` (every node receives once), at most ``rounds`` when that is
    above 0; none below two nodes (no incast without a sender)."""
    if size < 2:
        return 0
    return size if int(rounds) <= 0 else min(int(rounds), size)


def incast(members, number, rounds=0, max_senders=DEFAULT_MAX_SENDERS):
    """``(receiver, [senders])`` of round ``number`` (1, 2, ...) of a group whose nodes are ``members`` (in order).
    The receiver is ``members[floor((number - 1) * N / R)]``, the senders the k nodes after it, circularly."""
    members = list(members)
    if len(members) != len(set(members)):
        raise ValueError("a node is listed twice")
    total = round_count(len(members), rounds)
    if not 1 <= number <= total:
        raise ValueError("round %r: a group of %d nodes has rounds 1 to %d" % (number, len(members), total))
    size = len(members)
    at = (number - 1) * size // total
    k = senders_per_incast(size, max_senders)
    return members[at], [members[(at + i) % size] for i in range(1, k + 1)]


def tor_turns(plan, rounds=0, fabric=None):
    """``{tor: [(group, its rounds), ...]}``: each ToR's groups (one per rail it serves) in the order they take their
    turns, with the rounds each runs."""
    out = {}
    for group in groups(plan, fabric):
        out.setdefault(group["tor"], []).append((group, round_count(len(group["members"]), rounds)))
    return out


def turn_of(turns, number):
    """``(group, round)`` a ToR runs at its turn ``number`` (1, 2, ...), or None when it has no such turn."""
    for group, count in turns:
        if number <= count:
            return group, number
        number -= count
    return None


def step_count(plan, classes, rounds=0, fabric=None):
    """Steps of the whole test ``(steps, per class)``: the most turns of a ToR (its groups' rounds one after another),
    times the lossless classes."""
    per_class = max([sum(turn[1] for turn in turns) for turns in tor_turns(plan, rounds, fabric).values()] or [0])
    return per_class * len(classes), per_class


def step_of(number, per_class, classes):
    """``(priority, turn)`` of step ``number`` (1, 2, ...): the turn is the step's number within its class."""
    if per_class <= 0 or not 1 <= number <= per_class * len(classes):
        raise ValueError("step %r: the test has steps 1 to %d" % (number, per_class * len(classes)))
    return classes[(number - 1) // per_class], (number - 1) % per_class + 1


def port_of(fabric_index, rail, slot):
    """perftest's TCP port for sender ``slot`` (0, 1, ...) of rail ``rail`` of the fabric at ``fabric_index``."""
    return BASE_PORT + (int(fabric_index) * 16 + int(rail) - 1) * 100 + int(slot)


def step_assignments(plan, hosts, number, classes, rounds=0, max_senders=DEFAULT_MAX_SENDERS, fabric=None):
    """Step ``number`` as each host runs it, and the incasts of the step.

    Returns ``{"step", "priority", "round", "hosts": {host: {"receive": [...], "send": [...]}}, "incasts": [...]}``
    (``round``: the step's turn within its class, :func:`step_of`). At most one incast per ToR (:func:`tor_turns`).
    An incast: ``{"fabric", "tor", "rail", "round", "tor_port", "receiver", "interface", "ip", "senders": [host, ...],
    "sender_ports": {sender: its ToR port}, "missing": [host, ...], "skipped": None or why}``. A ``receive`` entry: ``{"fabric", "rail", "interface", "ip",
    "servers": [{"sender", "port"}]}`` (one perftest server per sender); a ``send`` entry: ``{"fabric", "rail",
    "interface", "ip", "receiver", "receiver_ip", "port"}``. Hosts of the plan outside ``hosts`` (a ``--limit``)
    take no part: an incast whose receiver is outside is skipped, saying so; a sender outside is left out of its
    incast (``missing``), and an incast left without a sender is skipped."""
    per_class = step_count(plan, classes, rounds, fabric)[1]
    priority, round_number = step_of(number, per_class, classes)
    present = set(hosts)
    fabric_index = dict((name, i) for i, name in enumerate(sorted(plan["fabrics"])))
    out = {"step": number, "priority": priority, "round": round_number, "hosts": {}, "incasts": []}

    def entry(host, fab, rail):
        for e in plan["nodes"][host]["rails"]:
            if e["fabric"] == fab and e["rail"] == rail:
                return e
        raise ValueError("%s has no rail %s of fabric %s in the plan" % (host, rail, fab))

    by_tor = tor_turns(plan, rounds, fabric)
    for tor in sorted(by_tor):
        turn = turn_of(by_tor[tor], round_number)
        if turn is None:
            continue
        group, group_round = turn
        receiver, senders = incast(group["members"], group_round, rounds, max_senders)
        mine = entry(receiver, group["fabric"], group["rail"])
        here = [s for s in senders if s in present]
        item = {"fabric": group["fabric"], "tor": group["tor"], "rail": group["rail"], "round": group_round,
                "tor_port": group["ports"][receiver], "receiver": receiver, "interface": mine["interface"],
                "ip": mine["ip"], "senders": here, "sender_ports": dict((s, group["ports"][s]) for s in here),
                "missing": [s for s in senders if s not in present],
                "skipped": None}
        if receiver not in present:
            item["skipped"] = "the receiver %s is not in this run (--limit or a slice)" % receiver
        elif not here:
            item["skipped"] = "none of its senders (%s) is in this run (--limit or a slice)" % ", ".join(senders)
        out["incasts"].append(item)
        if item["skipped"]:
            continue
        servers = []
        for slot, sender in enumerate(here):
            port = port_of(fabric_index[group["fabric"]], group["rail"], slot)
            servers.append({"sender": sender, "port": port})
            theirs = entry(sender, group["fabric"], group["rail"])
            out["hosts"].setdefault(sender, {"receive": [], "send": []})["send"].append({
                "fabric": group["fabric"], "rail": group["rail"], "interface": theirs["interface"],
                "ip": theirs["ip"], "receiver": receiver, "receiver_ip": mine["ip"], "port": port,
                "perftest_args": ["--ipv6-addr"] if ":" in mine["ip"] else []})
        out["hosts"].setdefault(receiver, {"receive": [], "send": []})["receive"].append({
            "fabric": group["fabric"], "rail": group["rail"], "interface": mine["interface"], "ip": mine["ip"],
            "servers": servers, "perftest_args": ["--ipv6-addr"] if ":" in mine["ip"] else []})
    return out


def projected_rounds(tors, nodes_per_tor, classes=1, rounds=0, max_senders=DEFAULT_MAX_SENDERS, seconds=None,
                     rails_per_tor=1):
    """The size of a test of ``tors`` ToRs of ``nodes_per_tor`` nodes on each of ``rails_per_tor`` rails, without a
    plan.

    Returns ``{"rounds_per_class", "steps", "incasts", "senders_per_incast", "flows", "load_seconds"}``: the ToRs
    run their turns at once, so the steps (what a run waits for, one after another) do not grow with ``tors``;
    ``incasts`` (one per ToR per step) and ``flows`` (sender-receiver pairs) do. A ToR's rails take turns
    (:func:`tor_turns`): ``rounds_per_class`` is its rails' rounds one after another. ``load_seconds``: steps x
    ``seconds`` (None without it)."""
    per_class = round_count(int(nodes_per_tor), rounds) * int(rails_per_tor)
    k = senders_per_incast(int(nodes_per_tor), max_senders)
    steps = per_class * int(classes)
    return {"rounds_per_class": per_class, "steps": steps, "incasts": steps * int(tors),
            "senders_per_incast": k, "flows": steps * int(tors) * k,
            "load_seconds": None if seconds is None else steps * seconds}
