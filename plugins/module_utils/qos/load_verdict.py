# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict of a lossless load test on one link: counters read before and after, per lossless class.

``load_verdict(before, after, profile=...)`` takes the reads of one link's participants, each a mapping
``{read name: counter facts}`` (:func:`counters_parse.parse_counters`), the same names before and after; for
example ``{"nic": ethtool, "rdma": hw_counters, "tor_pfc": show pfc counters, "tor_queue": show queue counters}``.
It returns::

    {"verdict": "lossless_under_load", "classes": [{"priority": 3, "queue": 3, "verdict": ..., "message": ...,
      "moved": {"pause": [...], "ecn": [...], "drop": [...], "storm": [...], "link_pause": [...]},
      "reset": [...], "not_reported": [...]}], "counters": [...], "problems": [...]}

Verdicts per class, worst first (the link's ``verdict`` is its worst class's):

* ``dropped``: a drop counter of this link moved: the host NIC's (discards, buffer and congestion drops, errors),
  the RDMA device's local ``out_of_buffer``/``link_downed``, or the switch's drops on the link's port (of the class, or
  of the whole port/device); the message names each counter and its side (host NIC, RDMA, switch).
* ``lost``: only RDMA retransmission or sequence-error counters moved (``transport_error``). They count a loss
  anywhere on the path between the two ends of a QP - either host's link, either direction, or the switch - so they
  never place it on this link (a receiver's ``out_of_sequence`` also moves when a sender's uplink drops data, its
  ``duplicate_request`` when a sender's downlink drops the ACKs): lost, not placed, and never lossless.
* ``pause_storm``: the NIC's pause-storm events moved above ``max_storm_events``, or the NIC sent PFC pauses on
  the class for more than ``max_pause_ratio`` of the run (``seconds``).
* ``ecn_inactive``: the class was PFC-paused, ECN counters are reported and the profile runs DCQCN on the class,
  but no ECN mark and no CNP moved.
* ``inconclusive``: no congestion reached (no PFC pause, no ECN mark: says what to raise), a counter reset between
  the reads, no drop counter of the class reported at all, or a drop stage not read (``unread``: a read of a format
  that counts drops which failed, printed only a warning or lacks the port; :func:`unread_stages`), where the class
  would otherwise be lossless.
* ``lossless_under_load``: congestion reached (a PFC pause or an ECN mark of the class moved) and no drop.

Congestion may show on other links than the judged one: in an incast the switch buffers at the receiver's port and
pauses the *senders* (its PFC frames leave the senders' ports; the senders' NICs count them received), and a sender's
RDMA device counts the CNPs it acted on. ``congestion`` gives such records (moved, of the class, from the other ends:
:mod:`fleet.incast_results`); they count as congestion reached, never as this link's drops.

Drop counters of the whole port or device count against every class judged; device- or port-wide ECN, CNP and PFC
counters (the RDMA ones, EOS's PFC frames, NVUE's RoCE counters) only when one class is judged (``priorities=[p]``:
one class per run).

A link's role in an incast (``role=``) says which way its congestion counters must count to be evidence
(:data:`ROLE_CONGESTION`): the incast's data flows from the senders through the switch to the receiver, so the
receiver's evidence is what counts traffic *toward* it (the pauses its NIC sent and the switch received at its port,
ECN marks on packets reaching it, the CNPs it sent as notification point), a sender's what counts traffic *from* it
(the pauses it received and the switch sent out of its port, the CNPs it handled as reaction point). A counter
that moved the other way (the receiver paused while sending ACKs, say) is listed under ``other_way``, never
counted. Without a role (a link judged on its own) both directions count.

Link-level (802.3x) pause is not PFC: it is reported under ``link_pause``, never counts as congestion reached, and
where it moved without a PFC pause of the class the class is ``inconclusive``, never lossless (ECN marks or not).

Deltas follow each counter's width and the rest of its read (:func:`read_deltas`): a decrease of a counter narrower
than 64 bits (``COUNTERS``' width: a Q counter of mlx5, a qdisc's drops) is a wrap when the same read shows that
nothing was reset - a sibling (another counter of the same read and port) that kept counting (read above 0 both
times, not lower after) and no sibling that cannot wrap (64-bit or of unknown width) went down, and no instance
counter (a qdisc's handle) changed. Otherwise the decrease is a reset, whose delta is unknown (None), never negative;
a 64-bit counter (or one of unknown width) that went down is always a reset, never a wrap. A counter missing from
either read is *not reported*.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import (
    COUNTERS, DEFAULT_PORT, FORMATS, NOT_COUNTING, ZERO_ROWS_OMITTED, describe, printed)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_check import resolve

VERDICTS = ("dropped", "lost", "pause_storm", "ecn_inactive", "inconclusive", "lossless_under_load")
DROP_FACTS = ("drop", "transport_error")
# Facts of a loss that the counter places on the link it was read on (the rest, transport_error, are end to end).
PLACED_FACTS = ("drop",)
ECN_FACTS = ("ecn_mark", "cnp")
# Facts counted for the whole port or device (no priority in the name) that still judge every class.
PORT_WIDE = DROP_FACTS + ECN_FACTS + ("pause_storm", "link_pause")
# Which pause, ECN and CNP counters are a role's congestion in an incast, by the direction each counts (read at the
# role's own host and at the switch port facing it):
# - the NIC's ``tx_prio<p>_pause`` (it sent pauses: it could not absorb what came in) and ``rx_prio<p>_pause`` (it
#   received pauses: "the network is congested and cannot absorb the traffic coming from the adapter"; mlx5
#   counters.rst, torvalds/linux Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst);
# - the switch's PFC frames received at the port (SONiC ``Port Rx``, SAI_PORT_STAT_PFC_<p>_RX_PKTS, sonic-utilities
#   scripts/pfcstat; EOS ``rxFrames``; NVUE ``pfc-stats.<p>.rx-pause-frames``, ``rx-stats.rx-pfc-stats.pause-packets``)
#   are the host's pauses, those sent out of it (``Port Tx``, ``txFrames``, ``...tx-pause-frames``,
#   ``tx-stats.tx-pfc-stats.pause-packets``) the switch holding the host back;
# - DCQCN's notification point counts marked packets that reached the host and the CNPs it sent back
#   (``np_ecn_marked_roce_packets``, ``np_cnp_sent``, ``cc_rx_ce_pkts``, ``cc_tx_cnp_pkts``), like the switch's ECN
#   marks out of the port (EOS ``queueCounters.<q>``, NVUE ``port-stats.ecn-marked-packets.transmit``,
#   ``tx-stats.tx-ecn-stats.ecn-marked-packets``); its reaction point the CNPs that slowed the host's own sending
#   (``rp_cnp_handled``, ``cc_rx_cnp_pkts``) like those the switch sent out of the port
#   (``tx-stats.tx-cnp-stats.cnp-packets``).
# A counter not named here is no role's evidence (a new source must say which way it counts).
ROLE_CONGESTION = {
    "receiver": re.compile(r"^(tx_prio[0-7]_pause|pfc[0-7]_rx_pkts|rxFrames|pfc-stats\.[0-7]\.rx-pause-frames|"
                           r"rx-stats\.rx-pfc-stats\.pause-packets|np_ecn_marked_roce_packets|np_cnp_sent|"
                           r"cc_rx_ce_pkts|cc_tx_cnp_pkts|queueCounters\.\d+|port-stats\.ecn-marked-packets\.transmit|"
                           r"tx-stats\.tx-ecn-stats\.ecn-marked-packets|"
                           # a Linux (mlxsw) ToR's port: PFC received from the host, ECN marks out of the port;
                           # NX-OS `show interface priority-flow-control detail`: RxPPP of the priority
                           r"rx_pause_prio_[0-7]|ecn_marked|pfc[0-7]_rx_frames|"
                           # EOS per priority (eos_pfc_detail); NVUE JSON: ECN marks of a traffic class out of the port
                           r"prio[0-7]\.rxFrames|egress-queue-stats\.\d+\.ecn-marked-frames)$"),
    "sender": re.compile(r"^(rx_prio[0-7]_pause|pfc[0-7]_tx_pkts|txFrames|pfc-stats\.[0-7]\.tx-pause-frames|"
                         r"tx-stats\.tx-pfc-stats\.pause-packets|rp_cnp_handled|cc_rx_cnp_pkts|"
                         r"tx-stats\.tx-cnp-stats\.cnp-packets|"
                         # mlxsw: PFC sent out of the port; NX-OS: TxPPP of the priority; EOS per priority
                         r"tx_pause_prio_[0-7]|pfc[0-7]_tx_frames|prio[0-7]\.txFrames)$"),
}
ROLES = tuple(sorted(ROLE_CONGESTION))


def role_evidence(record, role):
    """Whether a pause, ECN or CNP counter record is ``role``'s congestion (:data:`ROLE_CONGESTION`); any record
    is when ``role`` is None."""
    return role is None or bool(ROLE_CONGESTION[role].match(record["counter"]))


def counter_delta(before, after, width):
    """``(delta, state)`` of one counter alone: state ``counted``, ``wrapped`` (a counter narrower than 64 bits went
    down: the delta through its top, *if* it wrapped - only its read can tell, :func:`read_deltas`), ``reset`` (a
    64-bit counter, or one of unknown width, went down; delta None) or ``not_reported`` (absent from a read)."""
    if before is None or after is None:
        return None, "not_reported"
    if after >= before:
        return after - before, "counted"
    if width and width < 64:
        return after + (1 << width) - before, "wrapped"
    return None, "reset"


def _read_was_reset(records):
    """Whether the rest of one read (one port of it) says its counters were reset between the reads: an instance
    counter changed, a counter that cannot wrap went down, or no counter kept counting (read above 0 both times
    and not lower after) - nothing then tells a wrap from a reset, and a reset is the answer that claims nothing.
    Only counters (facts that count events) are siblings: a setting, a high-water mark or an instance number that
    stayed the same says nothing (:data:`counters_parse.NOT_COUNTING`)."""
    if any(r["fact"] == "instance" and r["before"] != r["after"] and r["state"] != "not_reported" for r in records):
        return True
    counters = [r for r in records if r["fact"] not in NOT_COUNTING]
    if any(r["state"] == "reset" for r in counters):
        return True
    return not any(r["state"] == "counted" and r["before"] > 0 for r in counters)


def _facts(reads, which):
    if isinstance(reads, (list, tuple)):
        reads = {str(i): r for i, r in enumerate(reads)}
    if not isinstance(reads, dict) or not reads:
        raise ValueError("%s: give the reads of the link as a mapping {name: parse_counters output}, got %r"
                         % (which, type(reads).__name__))
    for name, facts in reads.items():
        if not isinstance(facts, dict) or facts.get("format") not in FORMATS or not isinstance(facts.get("ports"), dict):
            raise ValueError("%s[%s]: is not counter facts; pass the output of ainet.fabric.parse_counters (formats: %s)"
                             % (which, name, ", ".join(FORMATS)))
    return reads


def _port(facts_b, facts_a, name, wanted, problems):
    ports = sorted(set(facts_b["ports"]) | set(facts_a["ports"]))
    if wanted is None:
        if len(ports) > 1:
            raise ValueError("reads[%s]: holds the ports %s; name the link's with %s" % (
                name, ", ".join(ports), "port=" if facts_b["side"] == "switch" else "host_port="))
        if not ports:
            problems.append("%s: no counters in either read (%s)" % (name, "; ".join(
                facts_b["problems"] + facts_a["problems"]) or "empty"))
            return None
        return ports[0]
    zeros = facts_b["format"] in ZERO_ROWS_OMITTED
    if wanted not in ports:
        if len(ports) == 1 and ports[0] == DEFAULT_PORT:
            return DEFAULT_PORT  # a read of one port parsed without its name (ethtool, hw_counters, NVUE)
        if zeros and printed(facts_b) and printed(facts_a):
            return wanted  # both tables printed without it: nothing of it counted (ZERO_ROWS_OMITTED)
        if not printed(facts_b) and not printed(facts_a):
            # neither read printed its output (a failure, a warning in its place): unread, never a wrong port
            problems.append("%s: not read before nor after (%s)" % (name, "; ".join(
                facts_b["problems"] + facts_a["problems"])))
            return None
        raise ValueError("reads[%s]: port %s is in neither read (ports: %s)" % (name, wanted, ", ".join(ports) or "none"))
    for when, facts in (("before", facts_b), ("after", facts_a)):
        if wanted not in facts["ports"] and not (zeros and printed(facts)):
            problems.append("%s: port %s is missing from the %s read" % (name, wanted, when))
    return wanted


def read_deltas(name, facts_b, facts_a, port):
    """The delta record of every counter of one read: a wrap of a narrow counter stands only when the rest of the
    read shows nothing was reset (:func:`_read_was_reset`); otherwise it is a reset too."""
    fmt = facts_b["format"]
    before = facts_b["ports"].get(port, {})
    after = facts_a["ports"].get(port, {})
    # a tool that leaves out a row of zeros (ZERO_ROWS_OMITTED): a counter absent from a read that printed its
    # table was 0 there, so the first storm of a queue during the run counts from 0
    zero_b = 0 if fmt in ZERO_ROWS_OMITTED and printed(facts_b) else None
    zero_a = 0 if fmt in ZERO_ROWS_OMITTED and printed(facts_a) else None
    records = []
    for counter in sorted(set(before) | set(after)):
        meaning = describe(fmt, counter)
        value_b, value_a = before.get(counter, zero_b), after.get(counter, zero_a)
        delta, state = counter_delta(value_b, value_a, meaning["width"])
        records.append(dict(meaning, read=name, side=facts_b["side"], port=port, counter=counter,
                            before=value_b, after=value_a, delta=delta, state=state))
    for changed in [r for r in records if r["fact"] == "instance" and r["state"] in ("counted", "reset")
                    and r["before"] != r["after"]]:
        # another object (a qdisc replaced between the reads): its counters began again, whatever they read now
        prefix = changed["counter"].rsplit("_", 1)[0] + "_"
        for r in records:
            if r["counter"].startswith(prefix) and r["state"] != "not_reported":
                r["delta"], r["state"] = None, "reset"
    if any(r["state"] == "wrapped" for r in records) and _read_was_reset(records):
        for r in records:
            if r["state"] == "wrapped":  # the same read was reset, or nothing shows it was not: a reset too
                r["delta"], r["state"] = None, "reset"
    return records


def _where(r):
    return r["side"] if r["port"] == DEFAULT_PORT else "%s %s" % (r["side"], r["port"])


def moved_text(record):
    """One counter record that moved, as the verdict's messages write it: ``switch Ethernet8 pfc3_tx_pkts +5,500``
    (`` (wrapped)`` after a 32-bit wrap)."""
    return "%s %s +%s%s" % (_where(record), record["counter"], format(record["delta"], ","),
                            " (wrapped)" if record["state"] == "wrapped" else "")


def counter_name(record):
    """Where a counter record was read and its name: ``host NIC ens1f0np0 rx_prio3_pause``."""
    return "%s %s" % (_where(record), record["counter"])


def _list(records):
    return "; ".join(moved_text(r) for r in records)


def _names(records):
    return ", ".join(counter_name(r) for r in records)


def drop_stage(fmt):
    """Whether reads of format ``fmt`` count drops (``COUNTERS`` has a drop or transport-error row for it): a
    read of it that was not taken is an unread drop stage (:func:`load_verdict`'s ``unread``)."""
    return any(row[1] in DROP_FACTS for row in COUNTERS.get(fmt, ()))


def _unread_stage(name, facts_b, facts_a, port):
    """Why read ``name`` of a drop-stage format did not read ``port`` (its problems, or that the port is missing
    from a read that printed nothing of it), or None when both reads hold it (or a tool that leaves out a row of
    zeros printed its table: :data:`counters_parse.ZERO_ROWS_OMITTED`)."""
    if not drop_stage(facts_b["format"]):
        return None
    why = []
    for when, facts in (("before", facts_b), ("after", facts_a)):
        if port is not None and port in facts["ports"]:
            continue
        if port is not None and facts["format"] in ZERO_ROWS_OMITTED and printed(facts):
            continue
        why.append("%s: %s" % (when, "; ".join(facts["problems"]) or "port %s not in the read" % port))
    return "%s (%s)" % (name, "; ".join(why)) if why else None


def load_verdict(before, after, profile=None, port=None, host_port=None, priorities=None, seconds=None,
                 max_pause_ratio=0.5, max_storm_events=0, queues=None, congestion=None, role=None, unread=None):
    """The verdict of one link (see the module). ``profile``: a preset name or a resolved profile (which priorities
    are lossless and which run DCQCN); ``priorities``: the classes to judge (default: the profile's PFC priorities);
    ``port``/``host_port``: the switch port and host interface when a read holds several; ``seconds``: the run's
    length (for the pause-duration bound); ``queues``: {priority: switch queue} (default: the same number);
    ``congestion``: ``{priority: [counter records]}`` of PFC pauses and ECN/CNP counters that moved on other links
    because of this link's load (see the module); ``role``: ``receiver`` or ``sender`` of an incast (only the
    counters that count its direction are its congestion), None for a link judged on its own; ``unread``:
    one line per drop stage of the link that was not read and is not among ``before``/``after`` (a ToR read that
    failed or printed only a warning, naming the stage and how to make it readable); a read given whose drop stage
    lacks the port is one too. An unread drop stage never lets a class be ``lossless_under_load``: it is
    ``inconclusive`` unless a drop elsewhere decides ``dropped`` or ``lost``. Raises ValueError (one line) on input
    that is not the link's reads."""
    if role is not None and role not in ROLE_CONGESTION:
        raise ValueError("role: %r is not a role of an incast; use one of: %s, or none" % (role, ", ".join(ROLES)))
    profile = resolve(profile)
    if priorities is None:
        if profile is None:
            raise ValueError("profile: give the fabric's lossless profile (a preset name or the qos of a fabric) or "
                             "priorities=[...] to say which classes are lossless")
        priorities = profile["pfc_priorities"]
    priorities = sorted({int(p) for p in priorities})
    ecn_expected = set(profile["dcqcn_priorities"]) if profile else set()
    queues = {int(k): int(v) for k, v in (queues or {}).items()}
    before, after = _facts(before, "before"), _facts(after, "after")
    problems = []
    missing = sorted(set(before) ^ set(after))
    if missing:
        raise ValueError("reads %s: in only one of before and after; read every participant twice" % ", ".join(missing))
    records, stages = [], [str(line) for line in (unread or ())]
    for name in sorted(before):
        fb, fa = before[name], after[name]
        if fb["format"] != fa["format"]:
            raise ValueError("reads[%s]: %s before but %s after" % (name, fb["format"], fa["format"]))
        problems.extend("%s (before): %s" % (name, p) for p in fb["problems"])
        problems.extend("%s (after): %s" % (name, p) for p in fa["problems"])
        chosen = _port(fb, fa, name, port if fb["side"] == "switch" else host_port, problems)
        if chosen is not None:
            records.extend(read_deltas(name, fb, fa, chosen))
        stage = _unread_stage(name, fb, fa, chosen)
        if stage:
            stages.append(stage)
    single = len(priorities) == 1
    elsewhere = dict((int(k), list(v or ())) for k, v in (congestion or {}).items())
    classes = [unread_stages(_judge(p, queues.get(p, p), records, p in ecn_expected, seconds, max_pause_ratio,
                                    max_storm_events, single, elsewhere.get(p, []), role), stages)
               for p in priorities]
    worst = min((c["verdict"] for c in classes), key=VERDICTS.index) if classes else "inconclusive"
    return {"verdict": worst, "classes": classes, "counters": records, "problems": problems}


def unread_stages(cls, stages):
    """One class's verdict (:func:`_judge`) after the drop stages that were not read (``stages``, one line each):
    a class that would be ``lossless_under_load`` is ``inconclusive`` (a drop may have happened where nothing
    looked), naming them; a drop or loss found elsewhere still decides, and any other verdict names them too.
    Changes and returns ``cls``; ``unread`` lists the lines."""
    cls["unread"] = list(stages)
    if not stages:
        return cls
    named = "; ".join(stages)
    if cls["verdict"] == "lossless_under_load":
        lossless = "Priority %d stayed lossless under load: " % cls["priority"]
        seen = cls["message"][len(lossless):] if cls["message"].startswith(lossless) else cls["message"]
        cls["verdict"] = "inconclusive"
        cls["message"] = ("Priority %d cannot be shown lossless: a drop stage of the link was not read: %s. Make it "
                          "readable and rerun the load. Where it was read: %s" % (cls["priority"], named, seen))
    else:
        cls["message"] += " Not read (drop stages): %s." % named
    return cls


def _headroom(drops, records):
    """Beside an ingress priority-group drop (SONiC ``pg<n>_drop_pkts``), the port's PG headroom high-water marks that
    are not 0 (``headroom_watermark``): near the PG's headroom size, the headroom filled (too small for the cable and
    the pause response, or PFC sent too late). Empty when neither was read."""
    if not [r for r in drops if r["counter"].startswith("pg") and r["counter"].endswith("_drop_pkts")]:
        return ""
    marks = [r for r in records if r["fact"] == "headroom_watermark" and r["after"]]
    if not marks:
        return ""
    return (" Ingress headroom held at most (persistent watermark, since it was last cleared): %s. Where it reaches "
            "the PG's headroom size, the headroom is too small for the cable and the pause response, or PFC is sent "
            "too late." % "; ".join(
                "%s %s %s bytes" % (_where(r), r["counter"], format(r["after"], ",")) for r in marks))


def _judge(prio, queue, records, ecn_expected, seconds, max_pause_ratio, max_storm_events, single, elsewhere=(),
           role=None):
    def mine(r):
        if r["priority"] is not None:
            return r["priority"] == prio
        if r["queue"] is not None:
            return r["queue"] == queue
        if r["fact"] in ECN_FACTS + ("pfc_pause",):
            # device- or port-wide ECN, CNP and PFC counters (RDMA; EOS's PFC frames, NVUE's RoCE counters) tell no
            # class apart: they count only in a run of one class
            return single
        return r["fact"] in PORT_WIDE

    rel = [r for r in records if mine(r)]
    known = [r for r in rel if r["delta"] is not None]

    def moved(*facts):
        return [r for r in known if r["fact"] in facts and r["delta"]]

    pauses, ecn, drops, link_pause = moved("pfc_pause"), moved(*ECN_FACTS), moved(*DROP_FACTS), moved("link_pause")
    # in an incast, congestion counted the other way is not this role's evidence (ROLE_CONGESTION)
    other_way = [r for r in pauses + ecn if not role_evidence(r, role)]
    pauses = [r for r in pauses if role_evidence(r, role)]
    ecn = [r for r in ecn if role_evidence(r, role)]
    # congestion the load caused on the other ends (the senders paused, their CNPs handled): evidence, never drops
    pauses += [r for r in elsewhere if r.get("fact") == "pfc_pause" and r.get("delta")]
    ecn += [r for r in elsewhere if r.get("fact") in ECN_FACTS and r.get("delta")]
    storm = [r for r in known if r["fact"] == "pause_storm" and r["delta"] > max_storm_events]
    if seconds:
        storm += [r for r in known if r["fact"] == "pfc_pause_duration" and r["counter"].startswith("tx_")
                  and r["delta"] > max_pause_ratio * seconds * 1e6]
    resets = [r for r in rel if r["state"] == "reset"]
    out = {"priority": prio, "queue": queue,
           "moved": {"pause": pauses, "ecn": ecn, "drop": drops, "storm": storm, "link_pause": link_pause},
           "placed": [r for r in drops if r["fact"] in PLACED_FACTS], "other_way": other_way,
           "reset": resets, "not_reported": [r for r in rel if r["state"] == "not_reported"]}
    drop_read = [r for r in known if r["fact"] in DROP_FACTS]
    ecn_read = [r for r in known if r["fact"] in ECN_FACTS and role_evidence(r, role)]
    traffic = [r for r in known if r["fact"] == "traffic" and (r["priority"] is not None or r["queue"] is not None)]
    notes = []
    if other_way:
        notes.append(" Moved the other way, not the %s's evidence: %s." % (role, _list(other_way)))
    if link_pause:
        notes.append(" Link-level pause moved (%s): 802.3x flow control, not PFC, is pausing this link; it proves "
                     "nothing about the lossless class." % _list(link_pause))
    if storm and not drops:
        verdict = "pause_storm"
        message = "Priority %d pause storm: %s (bounds: %d storm events, pauses sent for %d %% of the run)." % (
            prio, _list(storm), max_storm_events, round(max_pause_ratio * 100))
    elif [r for r in drops if r["fact"] in PLACED_FACTS]:
        verdict = "dropped"
        message = "Priority %d dropped under load: %s." % (prio, _list(drops)) + _headroom(drops, records)
        if storm:
            message += " Pause storm as well: %s." % _list(storm)
    elif drops:
        verdict = "lost"
        message = ("Priority %d lost under load, not placed: %s. RDMA retransmission and sequence counters count a "
                   "loss anywhere between the ends of a QP (either host's link, either direction, or the switch): "
                   "the switch's drop counters of the ports would place it." % (prio, _list(drops)))
        if storm:
            message += " Pause storm as well: %s." % _list(storm)
    elif [r for r in resets if r["fact"] in DROP_FACTS + ("pfc_pause",) + ECN_FACTS]:
        verdict = "inconclusive"
        message = ("Priority %d cannot be judged: counters were reset between the reads (%s); read them again and "
                   "rerun the load." % (prio, _names(resets)))
    elif not drop_read:
        verdict = "inconclusive"
        message = ("Priority %d cannot be shown lossless: no drop, retransmission or sequence-error counter of it was "
                   "reported on any side; read the host NIC, RDMA and switch queue counters." % prio)
    elif link_pause and not pauses:
        # 802.3x pause, not PFC, held the link: no drop proves nothing about the class's PFC (ECN marks or not)
        verdict = "inconclusive"
        message = ("Priority %d cannot be shown lossless: no PFC pause of the class moved while link-level pause did. "
                   "Turn 802.3x pause off on the link (ethtool -A <interface> rx off tx off) and rerun the load." % prio)
    elif not pauses and not ecn:
        verdict = "inconclusive"
        message = ("No congestion reached on priority %d: no PFC pause and no ECN mark moved. Raise the load: more "
                   "senders per receiver (incast fan-in), more QPs per sender, larger messages or a longer run." % prio)
        if traffic and not any(r["delta"] for r in traffic):
            message += (" No traffic was counted on the class either (%s +0): check that the test sends with the "
                        "class's ToS and that the switch maps it to queue %d." % (_names(traffic), queue))
    elif not ecn and ecn_expected and ecn_read:
        verdict = "ecn_inactive"
        message = ("Priority %d was paused (%s) but no ECN mark or CNP moved (%s +0): DCQCN is not acting; check ECN "
                   "on switch queue %d and roce_np/roce_rp enable on the NICs." % (prio, _list(pauses), _names(ecn_read),
                                                                                   queue))
    else:
        verdict = "lossless_under_load"
        seen = []
        if pauses:
            seen.append("PFC pauses (%s)" % _list(pauses))
        if ecn:
            seen.append("ECN (%s)" % _list(ecn))
        message = "Priority %d stayed lossless under load: %s, and none of %d drop counters moved." % (
            prio, " and ".join(seen), len(drop_read))
        if ecn_expected and not ecn_read:
            message += (" ECN was not judged: no ECN or CNP counter of the class was reported%s." % (
                "" if single else " (the RDMA ones count the whole device: judge one class per run to use them)"))
    out["verdict"] = verdict
    out["message"] = message + "".join(notes)
    return out
