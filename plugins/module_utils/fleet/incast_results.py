# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A lossless load test's inputs and results: which classes and rails it may load, the traffic class each class
sends with, and per receiver link and class the *run* with its verdict (:mod:`qos.load_verdict`).

A run (what the report, ``qos/load_report.py``, reads)::

    {"tor": "tor1", "rail": "1", "fabric": "default", "port": "Ethernet0", "host": "gpu01",
     "host_nic": "ens6f0np0", "senders": ["gpu02", ...], "round": 1, "priority": 3, "seconds": 10.0,
     "verdict": <load_verdict() result> or None, "skipped": None or why it was not run}

The reads of a run are the receiver's (its rail NIC's ``ethtool -S`` and its RDMA device's ``hw_counters``) and,
where the ToR was read, its PFC and queue counters of the receiver's port: a drop on that link shows there and makes
the run ``dropped``. The senders' reads (``senders=``: each sender's host read and, where the ToR was read, its
counters of the sender's port) show where the congestion went - in an incast the switch pauses the senders, so
their NICs' received PFC pauses, the ToR's PFC frames sent out of their ports and the CNPs their RDMA devices
handled are the class's congestion, which the receiver's link alone may never show - and place a loss or show one
the receiver did not see (:func:`place`):

* a drop counter of a sender's own NIC or RDMA device, or of the ToR at the sender's port (``drop``), places the
  loss on that sender's link: the run is ``lost`` (not this link's), naming the sender and its counters;
* RDMA retransmission and sequence counters (``transport_error``) on either end count a loss anywhere on the path of
  a QP: data toward the receiver crosses a sender's uplink and the receiver's downlink (the receiver's
  ``out_of_sequence``/``out_of_seq_request``, a sender's ``packet_seq_err``/``rcvd_seq_err``), ACKs back cross the
  receiver's uplink and a sender's downlink (a sender's ``implied_nak_seq_err``, the receiver's
  ``duplicate_request``); a sender's ``local_ack_timeout_err`` is either (a lost ACK, or a lost last packet).
  Host counters cannot tell the two links of a path apart: the run is ``lost``, "lost between <senders> and
  <receiver>", never ``dropped`` and never lossless; the switch's drop counters of the ports would place it.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.model.qos_profile import dscp_map
from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import parse_counters
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import (
    PLACED_FACTS, VERDICTS, load_verdict, moved_text)

MAX_SECONDS = 300
MAX_QPS = 64


class RefusedError(ValueError):
    """The test cannot run at all (one line: what, and the fix)."""


def lossless_fabrics(plan, fabric=None):
    """``{fabric: resolved profile}`` of the fabrics with a lossless class (of ``fabric`` only, when given).
    :class:`RefusedError` when there is none: a load test proves a lossless class, it needs one."""
    profiles = dict((name, f.get("qos")) for name, f in plan["cluster"]["fabrics"].items()
                    if fabric is None or name == fabric)
    if fabric is not None and not profiles:
        raise RefusedError("lossless_test_fabric: %r is not a fabric of the cluster (%s)"
                           % (fabric, ", ".join(sorted(plan["cluster"]["fabrics"]))))
    out = dict((name, p) for name, p in profiles.items() if p)
    if not out:
        raise RefusedError("lossless_test: no fabric%s has a lossless profile (fabric_cluster qos preset none, or "
                           "InfiniBand): there is no lossless class to prove under load. Fix: give the fabric a qos "
                           "preset (nvidia, sonic, spiderpool, custom), apply it (playbooks/qos.yml, playbooks/tors.yml) "
                           "and check it (playbooks/validate.yml)" % ("" if fabric is None else " " + fabric))
    return out


def classes(profiles):
    """The lossless classes the test runs, in order: every PFC priority of every profile."""
    return sorted({int(p) for profile in profiles.values() for p in profile["pfc_priorities"]})


def traffic_class(profile, priority):
    """The GRH traffic class (the IPv4 ToS byte of RoCE v2) that lands in ``priority``: the profile's RoCE ToS for
    its RoCE priority, else the lowest DSCP the profile places in that priority with ECT(0), as the RoCE ToS is
    built (``qos_profile``); None when no DSCP of the profile lands there."""
    if int(priority) == profile["roce_priority"]:
        return profile["roce_tos"]
    dscps = [dscp for dscp, prio in dscp_map(profile).items() if prio == int(priority)]
    return (min(dscps) << 2 | 2) if dscps else None


def check_bounds(seconds, qps, rate_gbps, max_senders, message_size, tx_depth=0, qp_timeout=0):
    """One line per option out of its bounds (empty: all fine)."""
    problems = []
    if not 1 <= seconds <= MAX_SECONDS:
        problems.append("lossless_test_seconds: %r is outside 1 to %d. Fix: a run of a few seconds to a minute "
                        "congests a port; a longer one only holds the fabric longer" % (seconds, MAX_SECONDS))
    if not 1 <= qps <= MAX_QPS:
        problems.append("lossless_test_qps: %r is outside 1 to %d. Fix: 1 to 8 QPs per sender" % (qps, MAX_QPS))
    if rate_gbps < 0:
        problems.append("lossless_test_rate_gbps: %r is negative. Fix: 0 (line rate) or a bound in Gb/s per sender"
                        % rate_gbps)
    if not 1 <= max_senders <= 99:
        problems.append("lossless_test_max_senders: %r is outside 1 to 99" % max_senders)
    if not 64 <= message_size <= 8388608:
        problems.append("lossless_test_message_size: %r is outside 64 to 8388608 bytes" % message_size)
    if not 0 <= tx_depth <= 15000:  # perftest's MIN_TX..MAX_TX (src/perftest_parameters.h); 0: its default
        problems.append("lossless_test_tx_depth: %r is outside 0 (perftest's default, 128) to 15000" % tx_depth)
    if not 0 <= qp_timeout <= 31:  # the 5-bit local ACK timeout of the QP (IB spec); 0: perftest's default, 14
        problems.append("lossless_test_qp_timeout: %r is outside 0 (perftest's default, 14) to 31" % qp_timeout)
    return problems


def refused_rails(rows):
    """``{(fabric, rail): one line}`` of each rail whose agreement check (``lossless_check``'s rows, status
    ``disagree``) found a disagreement, naming the first few links and codes."""
    found = {}
    for row in rows or ():
        if not isinstance(row, dict) or row.get("status") != "disagree":
            continue
        found.setdefault((row["fabric"], int(row["rail"])), []).append(row)
    out = {}
    for (fabric, rail), bad in sorted(found.items()):
        named = ["%s %s / %s %s: %s" % (r["host"], r.get("host_port"), r["tor"], r.get("switch_port"), ", ".join(
            sorted({d.get("code", "?") for d in r.get("disagreements") or ()}))) for r in bad[:3]]
        out[(fabric, rail)] = ("%s rail %d is not loaded: its agreement check found %d link(s) that disagree (%s%s); "
                               "fix them (playbooks/qos.yml, playbooks/tors.yml) and run playbooks/validate.yml"
                               % (fabric, rail, len(bad), "; ".join(named), "; ..." if len(bad) > 3 else ""))
    return out


def rdma_format(driver):
    """The ``parse_counters`` format of an RDMA device's ``hw_counters`` from its driver (``mlx5_core``,
    ``rxe``); None when no parser knows the device."""
    if driver in ("rxe", "rdma_rxe"):
        return "rdma_rxe"
    if driver and driver.startswith("mlx5"):
        return "rdma_mlx5"
    return None


def host_reads(read, interface):
    """``({name: counter facts}, [problems])`` of one host read (the ``lossless_counters`` module's result) for
    ``interface``: ``nic`` (``ethtool -S``) and ``rdma`` (``hw_counters``), each only where it was read."""
    out, problems = {}, []
    item = ((read or {}).get("interfaces") or {}).get(interface)
    if not item:
        return out, ["%s was not read" % interface]
    if item.get("ethtool") is not None:
        out["nic"] = parse_counters(item["ethtool"], "ethtool_mlx5", port=interface)
    elif item.get("ethtool_error"):
        problems.append(item["ethtool_error"])
    fmt = rdma_format(item.get("rdma_driver"))
    if item.get("hw_counters") is not None and fmt:
        out["rdma"] = parse_counters(item["hw_counters"], fmt, port=interface)
    elif item.get("hw_counters") is not None:
        problems.append("%s: RDMA device %s (driver %s) has no counter parser; its hw_counters are not judged"
                        % (interface, item.get("rdma_device"), item.get("rdma_driver")))
    elif item.get("rdma_error"):
        problems.append(item["rdma_error"])
    return out, problems


def _port_reads(read, port, label, problems, unread=None, stages=None):
    """:func:`tor_reads` of ``port``, keeping only the reads that hold it; a line in ``problems`` for each other (the
    port is then judged without that read, never failing the run), and in ``unread`` when that read is one of its
    NOS's drop stages (``DROP_STAGES`` of ``tor/nos_<platform>.py``): the class is then never lossless
    (:func:`load_verdict.unread_stages`). ``stages``: ``{format: how to make it readable}`` of the NOSes' drop
    stages (``tor.platforms.drop_stages()``, which the caller passes: this wing does not import the ToR wing)."""
    out, stages = {}, stages or {}
    for key, facts in tor_reads(read, port).items():
        if facts["ports"]:
            out[key] = facts
            continue
        why = "; ".join(facts["problems"]) or "%s: port %s not read" % (key, port)
        problems.append("%s %s" % (label, why))
        if unread is not None and facts["format"] in stages:
            unread.append("%s %s of port %s, %s; to read it: %s"
                          % (label, facts["format"], port, why, stages[facts["format"]]))
    return out


def tor_reads(read, port):
    """``{name: counter facts}`` of one ToR read (``{format: text}``) for its ``port``."""
    out = {}
    for fmt, text in sorted((read or {}).items()):
        out["tor_" + fmt.split("_", 1)[-1]] = parse_counters(text, fmt, port=port)
    return out


def _sender_losses(priority, seconds, profile, senders, max_pause_ratio, max_storm_events, tor_before=None,
                   tor_after=None, stages=None):
    """``{sender: {"placed": [...], "path": [...], "congestion": [...]}}``: the records of each sender's reads that
    moved in the class - drops ``placed`` on its link (its own NIC or RDMA device, the ToR at its port), end-to-end
    transport counters (``path``), PFC pauses and ECN/CNP counters (``congestion``, each named with the sender) -
    and problems; a sender's congestion is what counts traffic from it (``load_verdict.ROLE_CONGESTION``, role
    ``sender``). A sender's read is its host read (``interface``, ``before``, ``after``) and, where the ToR was read
    both times, the ToR's counters of its ``tor_port``."""
    out, problems = {}, []
    for name, read in sorted((senders or {}).items()):
        interface = (read or {}).get("interface")
        b, pb = host_reads((read or {}).get("before"), interface)
        a, pa = host_reads((read or {}).get("after"), interface)
        port = (read or {}).get("tor_port")
        unread = []
        if tor_before and tor_after and port:
            for when, reads, tor in (("before", b, tor_before), ("after", a, tor_after)):
                reads.update(_port_reads(tor, port, "sender %s %s: ToR" % (name, when), problems, unread, stages))
        both = sorted(set(b) & set(a))
        problems += ["sender %s before: %s" % (name, p) for p in pb] + ["sender %s after: %s" % (name, p) for p in pa]
        if not both:
            continue
        unread += ["sender %s: %s (read only %s the load)" % (name, n, "before" if n in b else "after")
                   for n in sorted(set(b) ^ set(a)) if n.startswith("tor_") and (b.get(n) or a.get(n))["format"]
                   in (stages or {})]
        verdict = load_verdict(dict((n, b[n]) for n in both), dict((n, a[n]) for n in both), profile=profile,
                               port=port, host_port=interface, priorities=[priority], seconds=seconds,
                               max_pause_ratio=max_pause_ratio, max_storm_events=max_storm_events, role="sender",
                               unread=unread)
        moved = verdict["classes"][0]["moved"]
        drops = moved["drop"]
        out[name] = {"unread": verdict["classes"][0]["unread"],
                     "placed": [dict(r, host=name) for r in drops if r["fact"] in PLACED_FACTS],
                     "path": [dict(r, host=name) for r in drops if r["fact"] not in PLACED_FACTS],
                     "congestion": [dict(r, host=name, side="%s %s" % (name, r["side"]))
                                    for r in moved["pause"] + moved["ecn"]]}
    return out, problems


def _texts(host, records):
    return "; ".join("%s %s" % (host, moved_text(r)) for r in records)


def place(verdict, receiver, senders, port=None, names=None):
    """Judge a run's loss by where its counters point (see the module): ``verdict`` is the receiver link's
    :func:`load_verdict` result (one class), ``senders`` :func:`_sender_losses`' mapping. Changes and returns it."""
    for cls in verdict["classes"]:
        mine = cls["moved"]["drop"]
        at_sender = dict((s, e["placed"]) for s, e in senders.items() if e["placed"])
        on_path = dict((s, e["path"]) for s, e in senders.items() if e["path"])
        cls["senders_moved"] = [r for e in senders.values() for r in e["placed"] + e["path"]]
        if cls["verdict"] == "dropped":
            if at_sender or on_path:
                cls["message"] += " Senders' counters moved too: %s." % "; ".join(
                    _texts(s, at_sender.get(s, []) + on_path.get(s, [])) for s in sorted(set(at_sender) | set(on_path)))
            continue
        if not (at_sender or on_path or cls["verdict"] == "lost"):
            continue
        previous = cls["verdict"]
        cls["verdict"] = "lost"
        if at_sender:
            message = ("Priority %d lost under load on the senders' side, not on this link: %s." % (
                cls["priority"], "; ".join(_texts(s, at_sender[s]) for s in sorted(at_sender))))
            cls["placed_on"] = sorted(at_sender)
        else:
            everyone = list(mine) + [r for s in sorted(on_path) for r in on_path[s]]
            # which way the lost packets went, where the counter says (counters_parse.COUNTERS' direction)
            ways = {r.get("direction") for r in everyone} - {None}
            hint = []
            if "data" in ways:
                hint.append("data lost on its way to %s (a sender's uplink or %s's downlink)" % (receiver, receiver))
            if "acks" in ways:
                hint.append("ACKs or read responses lost on their way back (%s's uplink or a sender's downlink)"
                            % receiver)
            switch = [r for r in verdict["counters"] if r["side"] == "switch" and r["fact"] in PLACED_FACTS
                      and r["delta"] is not None and (r["queue"] is None or r["queue"] == cls["queue"])]
            seen = []
            if mine:
                seen.append("%s %s" % (receiver, "; ".join(moved_text(r) for r in mine)))
            seen += [_texts(s, on_path[s]) for s in sorted(on_path)]
            ends = ", ".join(sorted(names or senders)) or "its senders"
            where = ("the switch counted no drop on %s (%d counters read): not at its egress to %s"
                     % (port, len(switch), receiver) if switch else "the ToR's drop counters of the ports would place it")
            message = ("Priority %d lost under load between %s and %s, not placed: %s%s. Host counters count a loss "
                       "anywhere on the path of a QP; %s." % (cls["priority"], ends, receiver, "; ".join(seen),
                                                              " (%s)" % ", ".join(hint) if hint else "", where))
        if previous not in ("lost", "inconclusive", "lossless_under_load"):
            message += " Also %s: %s" % (previous.replace("_", " "), cls["message"])
        cls["message"] = message
    verdict["verdict"] = min((c["verdict"] for c in verdict["classes"]), key=VERDICTS.index) \
        if verdict["classes"] else "inconclusive"
    return verdict


def judge(incast, priority, round_number, seconds, profile, before, after, tor_before=None, tor_after=None,
          max_pause_ratio=0.5, max_storm_events=0, senders=None, tor_error=None, drop_stages=None):
    """The run of one incast (see the module): the receiver's reads ``before``/``after`` (its host read), the ToR's
    (``{format: text}``) where read both times, and the senders' (``{sender: {"interface", "before", "after"}}``,
    their host reads) that place a loss or show one the receiver's counters did not. ``tor_error``: why the ToR's
    read, tried, failed: its drop stages are then unread (the class is never lossless); a ToR that is not read at
    all (not an inventory host, no counter reader) is judged from the hosts' counters alone. ``drop_stages``: the
    NOSes' drop stages, ``{counter format: how to make it readable}`` (``tor.platforms.drop_stages()``); a ToR read
    of such a format missing for the run's port leaves the class inconclusive."""
    run = {"tor": incast["tor"], "rail": str(incast["rail"]), "fabric": incast["fabric"], "port": incast["tor_port"],
           "host": incast["receiver"], "host_nic": incast["interface"], "senders": list(incast["senders"]),
           "round": round_number, "priority": priority, "seconds": float(seconds), "verdict": None,
           "skipped": incast.get("skipped")}
    if run["skipped"]:
        return run
    b, pb = host_reads(before, incast["interface"])
    a, pa = host_reads(after, incast["interface"])
    problems = ["before: %s" % p for p in pb] + ["after: %s" % p for p in pa]
    unread = [] if not tor_error or (tor_before and tor_after) else [
        "ToR %s: its counters were not read (%s)" % (incast["tor"], tor_error)]
    if tor_before and tor_after:
        for when, reads, tor in (("before", b, tor_before), ("after", a, tor_after)):
            reads.update(_port_reads(tor, incast["tor_port"], "%s: ToR" % when, problems, unread, drop_stages))
    both = sorted(set(b) & set(a))
    problems += ["%s: read only %s the load, not judged" % (name, "before" if name in b else "after")
                 for name in sorted(set(b) ^ set(a))]
    unread += ["%s (read only %s the load)" % (n, "before" if n in b else "after") for n in sorted(set(b) ^ set(a))
               if n.startswith("tor_") and (b.get(n) or a.get(n))["format"] in (drop_stages or {})]
    if not both:
        run["skipped"] = "no counter of %s %s was read before and after the load (%s)" % (
            incast["receiver"], incast["interface"], "; ".join(problems) or "nothing read")
        return run
    ports = incast.get("sender_ports") or {}
    senders = dict((s, dict(read or {}, tor_port=ports.get(s))) for s, read in (senders or {}).items())
    losses, sender_problems = _sender_losses(priority, seconds, profile, senders, max_pause_ratio, max_storm_events,
                                             tor_before, tor_after, drop_stages)
    # a sender's ToR port whose drop stage was not read could have dropped the incast's data unseen
    unread += [line for e in losses.values() for line in e["unread"]]
    verdict = load_verdict(dict((n, b[n]) for n in both), dict((n, a[n]) for n in both), profile=profile,
                           port=incast["tor_port"], host_port=incast["interface"], priorities=[priority],
                           seconds=seconds, max_pause_ratio=max_pause_ratio, max_storm_events=max_storm_events,
                           congestion={priority: [r for e in losses.values() for r in e["congestion"]]}, role="receiver",
                           unread=unread)
    verdict = place(verdict, incast["receiver"], losses, incast["tor_port"], incast["senders"])
    verdict["problems"] = problems + verdict["problems"] + sender_problems
    run["verdict"] = verdict
    return run


def refused_run(incast, priority, round_number, seconds, why):
    """The run of an incast that was not loaded (its rail refused, no RDMA device...), saying why."""
    return judge(dict(incast, skipped=why), priority, round_number, seconds, None, None, None)


def summary(runs):
    """``{"runs": n, "skipped": n, <verdict>: n, ...}`` and the worst verdict (``worst``, None when none ran)."""
    out = {"runs": len(runs), "skipped": sum(1 for r in runs if r["verdict"] is None)}
    order = VERDICTS
    for run in runs:
        if run["verdict"] is not None:
            out[run["verdict"]["verdict"]] = out.get(run["verdict"]["verdict"], 0) + 1
    out["worst"] = next((v for v in order if out.get(v)), None)
    return out


def finding(run):
    """One line for a run's verdict: ``gpu01 ens6f0np0 (tor1 Ethernet0, default rail 1) priority 3: dropped: ...``."""
    where = "%s %s (%s %s, %s rail %s) priority %d round %d" % (
        run["host"], run["host_nic"], run["tor"], run["port"], run["fabric"], run["rail"], run["priority"],
        run["round"])
    if run["verdict"] is None:
        return "%s: not run: %s" % (where, run["skipped"])
    classes_ = run["verdict"]["classes"]
    return "%s: %s: %s" % (where, run["verdict"]["verdict"], classes_[0]["message"] if classes_ else "")
