# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host-ToR lossless agreement check.

:func:`lossless_check` compares one host NIC's QoS facts with its ToR port's (both in the
normalized structure of :mod:`qos_facts`, from any parser) and, when a profile is given (a preset
name or a resolved profile of :mod:`qos_profile`), each side with the profile. It returns::

    {"disagreements": [{"code": "roce_dscp_lossy_on_switch", "host": 3, "switch": 1,
                        "message": "DSCP 26 is lossless priority 3 on the host but lands in lossy TC1 on the
                                    switch port Ethernet8 (PFC there: 3,4)."}],
     "unchecked": [{"topic": "pfc_watchdog", "reason": "the switch port's PFC watchdog was not read"}],
     "advice": [{"topic": "lossless_dscps", "message": "DSCP 24,25,27 ... are lossless on the host ..."}]}

``disagreements`` holds only what really disagrees. ``unchecked`` names each topic that could not be compared
because one side does not state its input (``None`` from a parser that cannot tell) and why; such a topic is never
guessed and never counted as agreement. ``verdict`` says which: ``disagree`` (a disagreement), ``unchecked`` (none,
but a topic could not be compared: the link is not shown to agree) or ``agree`` (every topic compared, none
disagrees) - the one value a play asserts on. :func:`lossless_diff` returns the disagreements followed by one
:data:`UNCHECKED` entry per unchecked topic, so that ``length == 0`` holds only for a link that agrees.
:data:`CODES` lists every disagreement code, :data:`TOPICS` every topic; ``docs/lossless-qos.md`` shows both tables.

The check follows one RoCE packet, and one CNP, through the switch port: classification (trust, DSCP ->
priority), the ingress buffer (priority -> priority group, a lossless group), PFC (enabled for that priority,
in both directions, and the pause stopping the queue the priority leaves on), then the egress queue (ECN,
scheduler). A stage whose input a side does not state is ``unchecked``; a NOS that has no such stage says so in
its parser (``qos_facts``: ``pfc_rx``/``pfc_tx``, ``pfc_to_queue``, ``priority_to_pg``, ``pfc_to_pg``,
``pfc_watchdog_queue``); a reason a parser gives for an unknown fact (``why_unknown``) is the unchecked reason.

Without a profile the two sides are still compared: the RoCE DSCP is the one the host stamps
(``cma_roce_tos``/``traffic_class``), and only it and the CNP DSCP are judged. When the ToS was not read
either, RoCE can only use a code point that lands in a PFC priority on both sides: those are judged (same
priority on both ends), none at all is ``lossless_dscp_mismatch``, and a code point lossless on one side only
(NVIDIA's default host table makes DSCP 24-31 lossless where the switch maps only 26) goes to ``advice``, not
to the disagreements. ``advice`` never makes a link disagree; the report shows it.

ECN thresholds are compared in the unit the switch configuration states them in (``qos_facts`` ``ecn_unit``):
bytes exactly; a whole number of kbytes or mbytes (of 1,024) when it is the profile's count with decimal prefixes
(150,000 B = ``150 kbytes``) or no further from the profile's bytes than a kibibyte is from a kilobyte (2.4 %,
:data:`THRESHOLD_SLACK`: ``146`` and ``147 kbytes`` agree with 150,000 B, ``0 mbytes`` and ``1 mbytes`` do not); a
printed value (``nv show qos roce``: ``146.48 KB``) within half of its last digit. A threshold in a unit that is not a
size (EOS ``segments``, ``milliseconds``) is ``unchecked``, never agreed.

:func:`link_rows` runs it for every host-ToR link of a rail plan and returns the rows of the
report (:mod:`lossless_report`).
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.model.qos_profile import (
    DEFAULT_HEADROOM, PRESETS_ORDER, PROFILE_KEYS, dscp_map, resolve_profile)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import lookup, settings_of, sorted_ints

CODES = {
    "trust_mismatch": "host and switch port classify RoCE by different fields (DSCP vs PCP)",
    "lossless_dscp_mismatch": "a DSCP lands in a PFC priority on one side and in a lossy class on the other "
                              "(compared when no profile and no host ToS say which DSCP RoCE uses)",
    "roce_dscp_not_lossless_on_host": "the host maps the RoCE DSCP to a priority without PFC",
    "roce_dscp_lossy_on_switch": "the switch port maps the RoCE DSCP to a class without PFC",
    "roce_priority_mismatch": "host and switch put the RoCE DSCP on different priorities",
    "pfc_mismatch": "the sets of PFC priorities differ between host and switch port",
    "pfc_not_negotiated": "the switch port runs PFC mode auto (PFC only once DCBX negotiates it) but the host NIC does "
                          "not negotiate DCBX",
    "pfc_rx_off_on_switch": "a PFC priority of the switch port ignores received pause frames (rx disabled)",
    "pfc_tx_off_on_switch": "a PFC priority of the switch port never sends pause frames (tx disabled)",
    "pfc_pauses_other_queue": "a pause frame for a PFC priority stops another queue than the one that priority "
                              "leaves on",
    "pfc_pause_from_other_pg": "the pause frames of a PFC priority are sent by another priority group than the one "
                               "that priority is buffered in (PFC priority -> priority group map)",
    "ecn_off_on_switch": "the switch queue that carries RoCE does not mark ECN",
    "ecn_off_on_host": "DCQCN (ECN reaction/notification point) is off for the RoCE priority on the host",
    "cnp_not_strict_on_switch": "the CNP DSCP lands in a non-strict (or lossless) queue on the switch",
    "cnp_not_strict_on_host": "the host sends CNPs on a priority whose queue is not strict",
    "mtu_too_small": "the switch port MTU does not exceed the host MTU by the headers",
    "pfc_watchdog_off": "a lossless priority of the switch port has no PFC watchdog, or one that watches another "
                        "queue than the one the priority leaves on",
    "no_lossless_buffer_on_switch": "a PFC priority of the switch port has no lossless (headroom) buffer",
    "no_lossless_buffer_on_host": "a PFC priority of the host NIC has no lossless receive buffer",
    "tos_mismatch": "cma_roce_tos and traffic_class disagree, or carry another DSCP than RoCE's",
    "profile_mismatch_host": "the host differs from the fabric's lossless profile",
    "profile_mismatch_switch": "the switch port differs from the fabric's lossless profile",
}


# What could not be compared, by topic (the report's "unchecked" column).
TOPICS = {
    "trust": "the trust mode (DSCP vs PCP) of both ends",
    "roce_dscp": "which DSCP RoCE uses (the profile, else the host's RoCE ToS), and where it lands",
    "lossless_dscps": "the DSCPs that land in a PFC priority on each side",
    "pfc": "the sets of PFC priorities",
    "pfc_direction": "whether the switch port sends and honours pause frames on its PFC priorities",
    "pfc_queue": "which queue a pause frame for each PFC priority stops on the switch",
    "ecn_switch": "ECN marking on the switch queue that carries RoCE",
    "ecn_host": "DCQCN on the host's RoCE priority",
    "cnp_switch": "the CNP DSCP's queue on the switch",
    "cnp_host": "the host's CNP priority and its traffic class",
    "mtu": "the MTU chain",
    "pfc_watchdog": "the PFC watchdog of the lossless priorities",
    "buffer_host": "the lossless receive buffers of the host NIC",
    "buffer_switch": "the lossless (headroom) buffers of the switch port and which priority group sends each "
                     "priority's pauses",
    "tos": "the RoCE ToS of the host",
}
# The code of a lossless_diff entry for a topic that could not be compared (not a disagreement, never agreement).
UNCHECKED = "unchecked"
VERDICTS = ("disagree", "unchecked", "agree")
KILO = 1024
# How far a threshold rounded to the switch's unit may be from the profile's bytes: 24/1000, what a kibibyte
# differs from a kilobyte (150 kbytes = 153,600 B for 150,000 B), so rounding never accepts more than the decimal
# prefix convention already does. 146 kbytes (0.3 % off 150,000 B) agrees; 1 mbytes (30 % off 1,500,000 B) and
# 0 mbytes do not.
THRESHOLD_SLACK = (24, 1000)


def resolve(profile):
    """A resolved profile from ``profile``: None, a preset name or a resolved profile (a fabric's ``qos``
    in a rail plan). Anything else raises ValueError with one line naming what to pass."""
    if profile is None:
        return None
    if isinstance(profile, str):
        if profile not in PRESETS_ORDER:
            raise ValueError("profile: %r is not a preset; use one of: %s, or a resolved profile (the qos of a "
                             "fabric in the rail plan)" % (profile, ", ".join(PRESETS_ORDER)))
        try:
            return resolve_profile({"preset": profile}, "profile")
        except FabricError as exc:  # preset custom states nothing itself
            raise ValueError(str(exc)) from None
    if isinstance(profile, dict):
        missing = [k for k in PROFILE_KEYS if k not in profile]
        if missing:
            raise ValueError("profile: a mapping without %s is not a resolved profile; pass a preset name or the "
                             "qos of a fabric in the rail plan" % ", ".join(missing))
        return profile
    raise ValueError("profile: %r is neither a preset name nor a resolved profile; pass a preset name (%s) or the "
                     "qos of a fabric in the rail plan" % (profile, ", ".join(PRESETS_ORDER)))


def same_threshold(have, want, unit=None):
    """Whether a switch's ECN threshold ``have`` (bytes) agrees with the profile's ``want`` (bytes), compared in the
    ``unit`` the switch states it in (bytes per step, ``qos_facts`` ``ecn_unit``; None: a whole number of KiB or MiB
    counts as stated in that unit, anything else in bytes). See the module doc and ``docs/lossless-qos.md``, "Which
    differences count"."""
    have, want = int(have), int(want)
    if have == want:
        return True
    if have <= 0 or want <= 0:
        return False  # a threshold that counts to 0 units marks from the first byte, or never
    if unit is None:
        units = [u for u in (KILO ** 2, KILO) if have % u == 0] or [1]
    else:
        units = [float(unit)]
    for step in units:
        if step in (KILO, KILO ** 2):  # a whole number of kbytes / mbytes, the unit the configuration chose
            power = 1 if step == KILO else 2
            if want % (1000 ** power) == 0 and want // (1000 ** power) == have // int(step):
                return True  # the profile's decimal prefix, the switch's binary one: 150,000 B = 150 kbytes
            if abs(have - want) * THRESHOLD_SLACK[1] <= want * THRESHOLD_SLACK[0]:
                return True  # no further off than a kibibyte is from a kilobyte
        elif abs(have - want) <= step / 2.0 + 0.5:
            return True  # bytes: exact; a printed value (146.48 KB): the profile's bytes to half its last digit
    return False


def _fmt(values):
    return ",".join(str(v) for v in values) if values else "none"


def _queue(settings, priority):
    queue = lookup(settings.get("priority_to_queue"), priority)
    return priority if queue is None else int(queue)


def _trusts_dscp(trust):
    return trust is None or "dscp" in str(trust)


class _Diff(object):
    __slots__ = ("advice", "items", "port", "unchecked")

    def __init__(self, port):
        self.advice = []
        self.items = []
        self.port = port
        self.unchecked = {}

    def advise(self, topic, message):
        """Not a disagreement: something that would become one if the input the check lacks turned out badly."""
        self.advice.append({"topic": topic, "message": message})

    def add(self, code, host, switch, message):
        self.items.append({"code": code, "host": host, "switch": switch, "message": message})

    def skip(self, topic, reason):
        """``topic`` could not be compared (the first reason is kept)."""
        self.unchecked.setdefault(topic, reason)


def _unread(h_value, s_value, what, where):
    """Why a comparison of ``what`` cannot run (None when both sides state it)."""
    sides = [side for side, value in (("the host NIC", h_value), (where, s_value)) if value is None]
    return "%s of %s was not read" % (what, " and ".join(sides)) if sides else None


def lossless_diff(host, switch, port=None, profile=None, host_port=None):
    """What keeps a host NIC and its switch port from agreeing: :func:`lossless_check`'s disagreements, then one
    entry per unchecked topic (:func:`unchecked_entries`). Empty only when the check's verdict is ``agree``."""
    return findings(lossless_check(host, switch, port, profile, host_port))


def unchecked_entries(unchecked):
    """One ``lossless_diff`` entry per unchecked topic: ``{"code": "unchecked", "topic", "host": None, "switch":
    None, "message"}``, the message naming what was not compared and why."""
    return [{"code": UNCHECKED, "topic": item["topic"], "host": None, "switch": None,
             "message": "Not checked: %s (%s)." % (TOPICS.get(item["topic"], item["topic"]), item["reason"])}
            for item in unchecked]


def findings(check):
    """A :func:`lossless_check` result as :func:`lossless_diff`'s list: disagreements, then unchecked topics."""
    return list(check["disagreements"]) + unchecked_entries(check["unchecked"])


def verdict_of(disagreements, unchecked):
    """``disagree``, ``unchecked`` or ``agree`` (:data:`VERDICTS`): agree only when nothing disagrees and every
    topic was compared."""
    return "disagree" if disagreements else "unchecked" if unchecked else "agree"


def lossless_check(host, switch, port=None, profile=None, host_port=None):
    """``{"verdict": "disagree|unchecked|agree", "disagreements": [...], "unchecked": [{"topic", "reason"}],
    "advice": [{"topic", "message"}]}`` for a host NIC and its switch port (:func:`verdict_of`).

    ``host``/``switch``: facts mappings or bare settings; ``port`` picks the switch port (needed
    when the switch facts hold several), ``host_port`` the host NIC; ``profile``: None, a preset
    name or a resolved profile. Raises KeyError when a named port is not in the facts and
    ValueError (one line) for a profile that is neither."""
    profile = resolve(profile)
    h = settings_of(host, host_port)
    s = settings_of(switch, port)
    where = "the switch port %s" % port if port else "the switch"
    d = _Diff(port)
    h_pfc, s_pfc = sorted_ints(h["pfc"]), sorted_ints(s["pfc"])

    # Which DSCP is RoCE: the profile's, else what the host stamps on RoCE packets.
    dscp = profile["roce_dscp"] if profile else None
    if dscp is None:
        tos = h["roce_tos"] if h["roce_tos"] is not None else h["traffic_class"]
        dscp = int(tos) >> 2 if tos is not None else None

    # Trust.
    reason = _unread(h["trust"], s["trust"], "the trust mode", where)
    if reason:
        d.skip("trust", reason)
    elif _trusts_dscp(h["trust"]) != _trusts_dscp(s["trust"]):
        d.add("trust_mismatch", h["trust"], s["trust"],
              "The host trusts %s but %s trusts %s: RoCE packets are classified by different fields on each end."
              % (h["trust"].upper(), where, s["trust"].upper()))

    h_prio = s_prio = None
    if dscp is None:
        d.skip("roce_dscp", "no profile was given and the host's RoCE ToS was not read")
        _lossless_dscps(d, h, s, h_pfc, s_pfc, where)
    else:
        reason = _unread(h["dscp_to_priority"], s["dscp_to_priority"], "the DSCP map", where)
        if reason:
            d.skip("roce_dscp", reason)
        h_prio = lookup(h["dscp_to_priority"], dscp)
        s_prio = lookup(s["dscp_to_priority"], dscp)
        for side, mapping, prio in (("the host NIC", h["dscp_to_priority"], h_prio),
                                    (where, s["dscp_to_priority"], s_prio)):
            if mapping is not None and prio is None:
                # a stated map that leaves the DSCP out: where it lands is the device's default, not read here
                d.skip("roce_dscp", "the DSCP map of %s does not place DSCP %d" % (side, dscp))
        if h_prio is not None and h_pfc is not None and int(h_prio) not in h_pfc:
            d.add("roce_dscp_not_lossless_on_host", int(h_prio), s_pfc,
                  "DSCP %d is priority %d on the host, which has no PFC (the host's PFC priorities: %s)."
                  % (dscp, h_prio, _fmt(h_pfc)))
        if s_prio is not None and s_pfc is not None and int(s_prio) not in s_pfc:
            host_text = ("lossless priority %d on the host" % h_prio if h_prio is not None and h_pfc is not None
                         and int(h_prio) in h_pfc else "RoCE on the host")
            d.add("roce_dscp_lossy_on_switch", h_prio, int(s_prio),
                  "DSCP %d is %s but lands in lossy %s on %s (PFC there: %s)."
                  % (dscp, host_text, _class_name(s, int(s_prio)), where, _fmt(s_pfc)))
        if h_prio is not None and s_prio is not None and int(h_prio) != int(s_prio):
            d.add("roce_priority_mismatch", int(h_prio), int(s_prio),
                  "DSCP %d is priority %d on the host but priority %d on %s: pause frames name a priority the "
                  "other end does not hold back." % (dscp, h_prio, s_prio, where))

    reason = _unread(h_pfc, s_pfc, "PFC", where)
    if reason:
        d.skip("pfc", reason)
    elif h_pfc != s_pfc:
        d.add("pfc_mismatch", h_pfc, s_pfc,
              "PFC is on priorities %s on the host but %s on %s." % (_fmt(h_pfc), _fmt(s_pfc), where))
    if s.get("pfc_mode") == "auto" and s_pfc:
        _pfc_auto(d, h, s_pfc, where)
    elif s.get("pfc_mode") is None and lookup(s.get("why_unknown"), "pfc_mode"):
        # the NOS has a PFC mode and its source did not state it (a part of the config): whether PFC runs is unread
        d.skip("pfc", _why(s, "pfc_mode", None))
    _pfc_stages(d, s, s_pfc, where)

    # ECN on the switch queue of RoCE, DCQCN on the host priority.
    if s_prio is None or s["ecn"] is None:
        d.skip("ecn_switch", "ECN of %s was not read" % where if s["ecn"] is None
               else "the RoCE DSCP's class on %s is not known" % where)
    else:
        queue = _queue(s, int(s_prio))
        ecn = lookup(s["ecn"], queue) or {}
        if not ecn.get("enabled"):
            d.add("ecn_off_on_switch", None, "queue %d" % queue,
                  "ECN marking is off on queue %d of %s, which carries RoCE (DSCP %d): DCQCN gets no congestion "
                  "signal." % (queue, where, dscp))
    rp_prio = int(h_prio) if h_prio is not None else (profile["roce_priority"] if profile else None)
    if rp_prio is None or h["ecn_rp"] is None or h["ecn_np"] is None:
        d.skip("ecn_host", "DCQCN of the host NIC was not read" if rp_prio is not None
               else "the host's RoCE priority is not known")
    if rp_prio is not None:
        for side, field in (("reaction point", "ecn_rp"), ("notification point", "ecn_np")):
            enabled = sorted_ints(h[field])
            if enabled is not None and rp_prio not in enabled:
                d.add("ecn_off_on_host", enabled, None,
                      "DCQCN's %s is off for RoCE priority %d on the host (%s enabled on: %s)."
                      % (side, rp_prio, field, _fmt(enabled)))

    # CNPs: a strict queue on both sides.
    cnp_dscp = profile["cnp_dscp"] if profile else h["cnp_dscp"]
    strict_wanted = profile["cnp_strict"] if profile else True
    if cnp_dscp is not None and strict_wanted:
        cnp_s_prio = lookup(s["dscp_to_priority"], cnp_dscp)
        if cnp_s_prio is None or s["ets"] is None:
            d.skip("cnp_switch", "the CNP DSCP's class or the scheduler of %s was not read" % where)
        else:
            queue = _queue(s, int(cnp_s_prio))
            mode = (lookup(s["ets"], queue) or {}).get("mode")
            if mode is None:
                # the scheduler states other queues only: this one runs as the NOS's default, not read here
                d.skip("cnp_switch", "the scheduler of queue %d (the CNP DSCP's) on %s was not read" % (queue, where))
            elif mode != "strict":
                d.add("cnp_not_strict_on_switch", None, "queue %d (%s)" % (queue, mode),
                      "CNP DSCP %s lands in queue %s on %s, which is %s, not strict: congestion notifications wait "
                      "behind bulk traffic." % (cnp_dscp, queue, where, mode))
            elif s_pfc is not None and int(cnp_s_prio) in s_pfc:
                d.add("cnp_not_strict_on_switch", None, "priority %s (PFC)" % cnp_s_prio,
                      "CNP DSCP %s lands on PFC priority %s on %s: a paused queue holds back the notifications "
                      "meant to end the congestion." % (cnp_dscp, cnp_s_prio, where))
    elif strict_wanted:
        d.skip("cnp_switch", "the CNP DSCP is not known (no profile, and the host's was not read)")
    cnp_h_prio = h["cnp_priority"]
    if strict_wanted and (cnp_h_prio is None or h["ets"] is None):
        d.skip("cnp_host", "the host's CNP priority or its scheduler was not read")
    if cnp_h_prio is not None and strict_wanted and h["ets"] is not None:
        queue = _queue(h, int(cnp_h_prio))
        mode = (lookup(h["ets"], queue) or {}).get("mode")
        if mode is None:
            d.skip("cnp_host", "the scheduler of traffic class %d (the host's CNP priority's) was not read" % queue)
        elif mode != "strict":
            d.add("cnp_not_strict_on_host", "tc %d (%s)" % (queue, mode), None,
                  "The host sends CNPs on priority %s, whose traffic class %s is %s, not strict."
                  % (cnp_h_prio, queue, mode))

    # MTU chain.
    headroom = profile["switch_mtu_headroom"] if profile else DEFAULT_HEADROOM
    reason = _unread(h["mtu"], s["mtu"], "the MTU", where)
    if reason:
        d.skip("mtu", reason)
    elif int(s["mtu"]) < int(h["mtu"]) + headroom:
        d.add("mtu_too_small", int(h["mtu"]), int(s["mtu"]),
              "The host MTU is %s but %s has MTU %s; it needs at least %s (host MTU + %s bytes of headers)."
              % (h["mtu"], where, s["mtu"], int(h["mtu"]) + headroom, headroom))

    # PFC watchdog and buffers of the lossless priorities.
    if s_pfc and (profile is None or profile["pfc_watchdog"]):
        _watchdog(d, s, s_pfc, where)
    for side, settings, pfc in (("the host NIC", h, h_pfc), (where, s, s_pfc)):
        if pfc:
            _buffers(d, side, settings, pfc, side == "the host NIC")

    # The ToS stamped on RoCE packets.
    tos, tclass = h["roce_tos"], h["traffic_class"]
    if tos is None and tclass is None:
        d.skip("tos", "neither cma_roce_tos nor traffic_class of the host was read")
    if tos is not None and tclass is not None and int(tos) != int(tclass):
        d.add("tos_mismatch", {"cma_roce_tos": tos, "traffic_class": tclass}, None,
              "The host's cma_roce_tos is %s but its traffic_class is %s: RDMA-CM and verbs connections send "
              "different DSCPs (%d and %d)." % (tos, tclass, int(tos) >> 2, int(tclass) >> 2))
    elif dscp is not None and profile is None:
        for name, value in (("cma_roce_tos", tos), ("traffic_class", tclass)):
            if value is not None and int(value) >> 2 != dscp:
                d.add("tos_mismatch", value, None, "The host's %s %s carries DSCP %d, not RoCE's %d."
                      % (name, value, int(value) >> 2, dscp))

    if profile:
        _against_profile(d, h, s, profile, where)
    unchecked = [{"topic": topic, "reason": reason} for topic, reason in sorted(d.unchecked.items())]
    return {"verdict": verdict_of(d.items, unchecked), "disagreements": d.items, "unchecked": unchecked,
            "advice": d.advice}


def _why(settings, field, reason):
    """The parser's own reason for an unknown ``field`` (``why_unknown``), else ``reason``."""
    return lookup(settings.get("why_unknown"), field) or reason


def _watchdog(d, s, s_pfc, where):
    """The PFC watchdog of each PFC priority: on, and - where the NOS arms it per queue index
    (``pfc_watchdog_queue``) - on the queue that priority leaves on (:func:`_queue`)."""
    if s["pfc_watchdog"] is None:
        d.skip("pfc_watchdog", _why(s, "pfc_watchdog", "the PFC watchdog of %s was not read" % where))
        return
    armed = sorted_ints(s["pfc_watchdog"])
    missing = [p for p in s_pfc if p not in armed]
    if missing:
        d.add("pfc_watchdog_off", None, armed,
              "The PFC watchdog is off for lossless priority %s on %s: a stuck receiver can pause the fabric "
              "indefinitely." % (_fmt(missing), where))
    for prio in s_pfc:
        watched = lookup(s.get("pfc_watchdog_queue"), prio)
        if prio in missing or watched is None or int(watched) == _queue(s, prio):
            continue
        d.add("pfc_watchdog_off", None, {"priority": prio, "watched_queue": int(watched), "queue": _queue(s, prio)},
              "The PFC watchdog of lossless priority %d on %s watches queue %s, but priority %d leaves on queue %d: "
              "a pause storm there is never detected nor broken." % (prio, where, watched, prio, _queue(s, prio)))


def _pfc_auto(d, h, s_pfc, where):
    """A switch port in PFC mode auto (NX-OS's default) runs PFC on ``s_pfc`` only once DCBX negotiates it with the
    host NIC: a NIC whose firmware runs DCBX does; one whose DCBX is OS controlled (``mlnx_qos``: the firmware does
    not negotiate) needs an LLDP agent on the host, which this collection does not set up; unread: unchecked."""
    dcbx = h.get("dcbx")
    words = str(dcbx).lower().split() if dcbx is not None else []
    if dcbx is None:
        d.skip("pfc", "%s runs priority-flow-control mode auto (PFC on priority %s only once DCBX negotiates it) and "
                      "the host NIC's DCBX mode was not read" % (where, _fmt(s_pfc)))
    elif "os" in words or words[:1] in (["off"], ["disabled"]):
        text = ("%s runs priority-flow-control mode auto, which turns PFC on priority %s on only when DCBX negotiates "
                "it, but the host NIC's DCBX mode is %s (its firmware does not negotiate, and this collection sets up "
                "no LLDP agent that would): PFC stays off on the port; set priority-flow-control mode on.")
        d.add("pfc_not_negotiated", dcbx, "auto", text % (where[0].upper() + where[1:], _fmt(s_pfc), dcbx))
    elif "firmware" not in words:  # firmware controlled: the NIC negotiates DCBX with the port
        d.skip("pfc", "%s runs priority-flow-control mode auto and the host NIC's DCBX mode %r is not one the check "
                      "knows" % (where, dcbx))


def _pfc_stages(d, s, s_pfc, where):
    """Each PFC priority of the switch port past its enable bit: pauses sent (tx) and honoured (rx), and the queue a
    received pause stops (it must be the queue that priority leaves on)."""
    if not s_pfc:
        return
    for field, code, text in (
            ("pfc_rx", "pfc_rx_off_on_switch", "has PFC rx disabled: the port ignores the host's pause frames and "
                                               "keeps sending into a full receive buffer, which drops"),
            ("pfc_tx", "pfc_tx_off_on_switch", "has PFC tx disabled: the port never sends pause frames, so its "
                                               "ingress buffer overflows and drops the host's packets")):
        enabled = sorted_ints(s[field])
        if enabled is None:
            d.skip("pfc_direction", "whether %s sends and honours pause frames (%s) was not read" % (where, field))
            continue
        off = [p for p in s_pfc if p not in enabled]
        if off:
            d.add(code, None, off, "PFC priority %s on %s %s." % (_fmt(off), where, text))
    if s["pfc_to_queue"] is None:
        d.skip("pfc_queue", "which queue a pause frame stops on %s (the PFC priority -> queue map) was not read"
               % where)
        return
    for prio in s_pfc:
        paused = lookup(s["pfc_to_queue"], prio)
        if paused is None:
            d.skip("pfc_queue", "the PFC priority -> queue map of %s does not place priority %d" % (where, prio))
            continue
        queue = _queue(s, prio)
        if int(paused) != queue:
            d.add("pfc_pauses_other_queue", None, {"priority": prio, "paused_queue": int(paused), "queue": queue},
                  "A pause frame for PFC priority %d stops queue %s on %s, but priority %d leaves on queue %d: the "
                  "host's pauses do not hold back the traffic that fills its buffer."
                  % (prio, paused, where, prio, queue))


def _buffers(d, side, settings, pfc, host):
    """The lossless buffer of each PFC priority: per priority (``buffer_lossless``) or through the priority group
    the priority is buffered in (``priority_to_pg`` + ``buffer_lossless_pg``); derived here and nowhere else."""
    topic, code = ("buffer_host", "no_lossless_buffer_on_host") if host else \
        ("buffer_switch", "no_lossless_buffer_on_switch")
    if settings["buffer_lossless"] is not None:
        missing = [p for p in pfc if p not in sorted_ints(settings["buffer_lossless"])]
        if missing:
            d.add(code, missing if host else None, None if host else missing,
                  "Priority %s has PFC but no lossless buffer on %s: pause frames come too late to prevent drops."
                  % (_fmt(missing), side))
        return
    pgs, pg_map = settings.get("buffer_lossless_pg"), settings.get("priority_to_pg")
    if pgs is None:
        d.skip(topic, "the lossless buffers of %s were not read" % side)
        return
    pgs = sorted_ints(pgs)
    if pg_map is None:
        d.skip(topic, "%s has lossless buffers on priority group %s, but which group priority %s is buffered in was "
                      "not read (no TC -> priority group map)" % (side, _fmt(pgs), _fmt(pfc)))
        return
    missing = []
    for prio in pfc:
        group = lookup(pg_map, prio)
        if group is None:
            d.skip(topic, "the TC -> priority group map of %s does not place priority %d" % (side, prio))
        elif int(group) not in pgs:
            missing.append((prio, int(group)))
        else:
            _pause_group(d, settings, side, prio, int(group), topic)
    if missing:
        d.add(code, None, {"priority": [m[0] for m in missing], "priority_group": [m[1] for m in missing]},
              "Priority %s has PFC but is buffered in priority group %s on %s, which has no lossless buffer "
              "(lossless groups: %s): pause frames come too late to prevent drops."
              % (_fmt([m[0] for m in missing]), _fmt(sorted(set(m[1] for m in missing))), side, _fmt(pgs)))


def _pause_group(d, settings, side, prio, group, topic):
    """The priority group whose xoff sends the pauses of ``prio`` (``pfc_to_pg``) must be ``group``, the lossless group
    ``prio`` is buffered in: else the buffer that fills never pauses the host."""
    if settings.get("pfc_to_pg") is None:
        unread = ("which priority group sends the pause frames of priority %d on %s (the PFC priority -> priority "
                  "group map) was not read" % (prio, side))
        d.skip(topic, _why(settings, "pfc_to_pg", unread))
        return
    sender = lookup(settings["pfc_to_pg"], prio)
    if sender is None:
        d.skip(topic, "the PFC priority -> priority group map of %s does not place priority %d" % (side, prio))
    elif int(sender) != group:
        d.add("pfc_pause_from_other_pg", None, {"priority": prio, "pause_pg": int(sender), "priority_group": group},
              "Priority %d is buffered in lossless priority group %d on %s, but its pause frames are sent by priority "
              "group %s (PFC priority -> priority group map): the buffer that fills never pauses the host."
              % (prio, group, side, sender))


def _lossless_dscps(d, h, s, h_pfc, s_pfc, where):
    """Without a known RoCE DSCP: RoCE can only be one of the code points lossless on both sides, so those are judged
    (same priority on both ends); none at all disagrees. A code point lossless on one side only (NVIDIA's default
    table makes DSCP 24-31 lossless on the host where the switch maps only 26) is advice, not a disagreement."""
    reason = (_unread(h["dscp_to_priority"], s["dscp_to_priority"], "the DSCP map", where)
              or _unread(h_pfc, s_pfc, "PFC", where))
    if reason:
        d.skip("lossless_dscps", reason)
        return
    h_map, s_map = h["dscp_to_priority"], s["dscp_to_priority"]
    lossless = []
    for mapping, pfc in ((h_map, h_pfc), (s_map, s_pfc)):
        lossless.append(dict((int(k), int(v)) for k, v in mapping.items() if v is not None and int(v) in pfc))
    both = sorted(set(lossless[0]) & set(lossless[1]))
    sides = (("the host", lossless[0], lossless[1], s_map, s_pfc, where),
             (where, lossless[1], lossless[0], h_map, h_pfc, "the host"))
    for side, mine, theirs, other_map, other_pfc, other in sides:
        lossy = [(dscp, mine[dscp], int(lookup(other_map, dscp))) for dscp in sorted(mine)
                 if dscp not in theirs and lookup(other_map, dscp) is not None]
        if not lossy:
            continue
        text = ("DSCP %s %s lossless on %s (priority %s) but lossy on %s (priority %s; PFC there: %s)"
                % (_fmt([x[0] for x in lossy]), "is" if len(lossy) == 1 else "are", side,
                   _fmt(sorted(set(x[1] for x in lossy))), other, _fmt(sorted(set(x[2] for x in lossy))),
                   _fmt(other_pfc)))
        if both:
            d.advise("lossless_dscps", "%s; only DSCP %s %s lossless on both ends, so RoCE must use %s (read the "
                                       "host's RoCE ToS or name a profile to have it judged)."
                     % (text, _fmt(both), "is" if len(both) == 1 else "are", "it" if len(both) == 1 else "one of them"))
        else:
            d.add("lossless_dscp_mismatch", [x[0] for x in lossy] if side == "the host" else None,
                  [x[0] for x in lossy] if side != "the host" else None, text + ".")
    apart = [(dscp, lossless[0][dscp], lossless[1][dscp]) for dscp in both if lossless[0][dscp] != lossless[1][dscp]]
    if apart:
        d.add("roce_priority_mismatch", [x[1] for x in apart], [x[2] for x in apart],
              "DSCP %s %s lossless on both ends but on priority %s on the host and %s on %s: pause frames name a "
              "priority the other end does not hold back."
              % (_fmt([x[0] for x in apart]), "is" if len(apart) == 1 else "are",
                 _fmt(sorted(set(x[1] for x in apart))), _fmt(sorted(set(x[2] for x in apart))), where))


def _class_name(settings, priority):
    queue = lookup(settings.get("priority_to_queue"), priority)
    if queue is not None and int(queue) != priority:
        return "priority %d (queue %s)" % (priority, queue)
    return "TC%d" % priority


def _against_profile(d, h, s, p, where):
    name = "the %s profile" % p["preset"]

    def host(what, have, want):
        d.add("profile_mismatch_host", have, None, "The host has %s %s; %s wants %s." % (what, have, name, want))

    def switch(what, have, want):
        d.add("profile_mismatch_switch", None, have, "%s has %s %s; %s wants %s."
              % (where[0].upper() + where[1:], what, have, name, want))

    if h["trust"] is not None and h["trust"] != "dscp":
        host("trust", h["trust"], "dscp")
    # RoCEv2 is routed: what matters is that the port classifies by DSCP (with or without PCP).
    if s["trust"] is not None and "dscp" in p["trust"] and "dscp" not in str(s["trust"]):
        switch("trust", s["trust"], p["trust"])
    for side, settings, report in (("host", h, host), ("switch", s, switch)):
        placed = [("RoCE DSCP %d on priority" % p["roce_dscp"], p["roce_dscp"], p["roce_priority"]),
                  ("CNP DSCP %d on priority" % p["cnp_dscp"], p["cnp_dscp"], p["cnp_priority"])]
        placed += [("DSCP %d on priority" % dscp, dscp, prio) for dscp, prio in dscp_map(p).items()
                   if dscp not in (p["roce_dscp"], p["cnp_dscp"])]
        for what, dscp, want in placed:
            if side == "host" and "CNP" in what:
                continue  # the host does not classify its own CNPs; cnp_dscp/cnp_priority below
            have = lookup(settings["dscp_to_priority"], dscp)
            if have is not None and int(have) != want:
                report(what, int(have), want)
        pfc = sorted_ints(settings["pfc"])
        if pfc is not None and pfc != p["pfc_priorities"]:
            report("PFC on priorities", _fmt(pfc), _fmt(p["pfc_priorities"]))
    if h["cnp_dscp"] is not None and int(h["cnp_dscp"]) != p["cnp_dscp"]:
        host("CNP DSCP", h["cnp_dscp"], p["cnp_dscp"])
    if h["cnp_priority"] is not None and int(h["cnp_priority"]) != p["cnp_priority"]:
        host("CNP priority", h["cnp_priority"], p["cnp_priority"])
    for field, what in (("ecn_rp", "DCQCN reaction point on priorities"),
                        ("ecn_np", "DCQCN notification point on priorities")):
        have = sorted_ints(h[field])
        if have is not None and not set(p["dcqcn_priorities"]) <= set(have):
            host(what, _fmt(have), "at least " + _fmt(p["dcqcn_priorities"]))
    for field, what in (("roce_tos", "cma_roce_tos"), ("traffic_class", "traffic_class")):
        if h[field] is not None and int(h[field]) != p["roce_tos"]:
            host(what, h[field], p["roce_tos"])
    # A profile without switch ECN queues (host-only presets) still wants ECN on the queues of its
    # lossless priorities: DCQCN needs the marks (the renderers put NVIDIA's defaults there).
    ecn_queues = p["ecn_queues"] if p["ecn_queues"] is not None else \
        sorted(set(_queue(s, prio) for prio in p["pfc_priorities"]))
    if s["ecn"] is not None:
        for queue in ecn_queues:
            ecn = lookup(s["ecn"], queue) or {}
            if not ecn.get("enabled"):
                switch("ECN on queue %d" % queue, "off", "on")
                continue
            for key, want in (("min_bytes", p["ecn_min_bytes"]), ("max_bytes", p["ecn_max_bytes"]),
                              ("probability", p["ecn_probability"])):
                have = ecn.get(key)
                unit = lookup(lookup(s.get("ecn_unit"), queue), key) if key != "probability" else None
                if want is None:
                    continue
                if have is None:
                    if key != "probability":
                        d.skip("ecn_switch", _unconverted(queue, key, unit, want, where))
                    continue
                if isinstance(unit, str):
                    unit = None  # (a named unit with bytes: not one a parser gives; read the bytes as they are)
                if not (same_threshold(have, want, unit) if key != "probability" else int(have) == want):
                    switch("ECN %s on queue %d" % (key.replace("_", " "), queue), have, want)
    if p["ets_weights"] and s["ets"] is not None:
        # Shares, not raw weights: DWRR weights (SONiC 14/15) and percentages compare as percent of
        # the weighted queues' total, within 2 points.
        weighted = [e for e in s["ets"].values() if (e or {}).get("mode") != "strict" and (e or {}).get("weight")]
        total = sum(int(e["weight"]) for e in weighted)
        for queue, weight in p["ets_weights"].items():
            have = lookup(s["ets"], int(queue)) or {}
            if have.get("weight") is not None and total:
                share = int(have["weight"]) * 100.0 / total
                if abs(share - weight) > 2:
                    switch("ETS share on queue %s" % queue, "%d%%" % round(share), "%d%%" % weight)


def _unconverted(queue, key, unit, want, where):
    """Why an ECN threshold of ``queue`` was not compared with the profile's ``want`` bytes."""
    what = "ECN %s threshold of queue %d on %s" % (key.split("_")[0], queue, where)
    if isinstance(unit, str):
        return "the %s is in %s, not bytes (its size in bytes depends on the platform): not compared with the " \
               "profile's %d bytes" % (what, unit, want)
    return "the %s was not read: not compared with the profile's %d bytes" % (what, want)


def link_rows(plan, host_facts, switch_facts, hosts=None, host_errors=None):
    """One report row per host-ToR link of ``plan`` (the rail plan) for ``hosts`` (default: all);
    links of a fabric without a lossless class have no row.

    ``host_facts``: {host: facts whose ports are the host's NIC names}; ``switch_facts``: {ToR
    name: facts whose ports are the plan's ToR port names}; ``host_errors``: {host: why its NICs
    could not be read}. A missing source is an ``error``
    row naming what is missing, never a silent pass; a link whose check left a topic unchecked is ``unchecked``,
    never ``agree``."""
    profiles = {name: fabric.get("qos") for name, fabric in plan["cluster"]["fabrics"].items()}
    rows = []
    for host in sorted(hosts if hosts is not None else plan["nodes"]):
        node = plan["nodes"][host]
        for entry in node["rails"]:
            profile = profiles.get(entry["fabric"])
            if profile is None:
                continue  # a fabric without a lossless class has nothing to agree on
            row = {"fabric": entry["fabric"], "rail": entry["rail"], "host": host,
                   "host_port": entry.get("interface"), "tor": entry["tor"], "switch_port": entry["tor_port"],
                   "status": "error", "error": "not checked", "disagreements": [], "unchecked": [], "advice": []}
            rows.append(row)
            facts = host_facts.get(host)
            tor = switch_facts.get(entry["tor"])
            try:
                if facts is None:
                    reason = (host_errors or {}).get(host)
                    raise KeyError("no QoS facts were gathered from %s%s" % (host, ": " + reason if reason else ""))
                if tor is None:
                    raise KeyError("no configuration of ToR %s was read" % entry["tor"])
                verdict = lossless_check(facts, tor, entry["tor_port"], profile, entry.get("interface"))
            except KeyError as exc:
                row["status"], row["error"] = "error", str(exc.args[0] if exc.args else exc)
                continue
            row["disagreements"], row["unchecked"] = verdict["disagreements"], verdict["unchecked"]
            row["advice"] = verdict["advice"]
            row["status"], row["error"] = verdict["verdict"], None
    return rows
