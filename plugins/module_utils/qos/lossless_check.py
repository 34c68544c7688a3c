# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host-ToR lossless agreement check.

:func:`lossless_diff` compares one host NIC's QoS facts with its ToR port's (both in the
normalized structure of :mod:`qos_facts`, from any parser) and, when a resolved profile is
given (:mod:`qos_profile`), each side with the profile. It returns a list of disagreements::

    {"code": "roce_dscp_lossy_on_switch", "host": 3, "switch": 1,
     "message": "DSCP 26 is lossless priority 3 on the host but lands in lossy priority 1 on the switch
                 port Ethernet8 (PFC there: 3,4)"}

empty when they agree. A check whose input one side does not state (``None``) is skipped,
never guessed. :data:`CODES` lists every code with what it means; ``docs/lossless-qos.md``
shows the same table.

:func:`check_links` runs it for every host-ToR link of a rail plan and returns the rows of
the report (:mod:`lossless_report`).
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import lookup, settings_of, sorted_ints
from ansible_collections.ainet.fabric.plugins.module_utils.model.qos_profile import DEFAULT_HEADROOM

CODES = {
    "trust_mismatch": "host and switch port classify RoCE by different fields (DSCP vs PCP)",
    "roce_dscp_unknown": "neither a profile nor the host's RoCE ToS says which DSCP RoCE uses",
    "roce_dscp_not_lossless_on_host": "the host maps the RoCE DSCP to a priority without PFC",
    "roce_dscp_lossy_on_switch": "the switch port maps the RoCE DSCP to a class without PFC",
    "roce_priority_mismatch": "host and switch put the RoCE DSCP on different priorities",
    "pfc_mismatch": "the sets of PFC priorities differ between host and switch port",
    "ecn_off_on_switch": "the switch queue that carries RoCE does not mark ECN",
    "ecn_off_on_host": "DCQCN (ECN reaction/notification point) is off for the RoCE priority on the host",
    "cnp_not_strict_on_switch": "the CNP DSCP lands in a non-strict (or lossless) queue on the switch",
    "cnp_not_strict_on_host": "the host sends CNPs on a priority whose queue is not strict",
    "mtu_too_small": "the switch port MTU does not exceed the host MTU by the headers",
    "pfc_watchdog_off": "a lossless priority of the switch port has no PFC watchdog",
    "no_lossless_buffer_on_switch": "a PFC priority of the switch port has no lossless (headroom) buffer",
    "no_lossless_buffer_on_host": "a PFC priority of the host NIC has no lossless receive buffer",
    "tos_mismatch": "cma_roce_tos and traffic_class disagree, or carry another DSCP than RoCE's",
    "profile_mismatch_host": "the host differs from the fabric's lossless profile",
    "profile_mismatch_switch": "the switch port differs from the fabric's lossless profile",
}


def _fmt(values):
    return ",".join(str(v) for v in values) if values else "none"


def _queue(settings, priority):
    queue = lookup(settings.get("priority_to_queue"), priority)
    return priority if queue is None else int(queue)


def _trusts_dscp(trust):
    return trust is None or "dscp" in str(trust)


class _Diff(object):
    __slots__ = ("items", "port")

    def __init__(self, port):
        self.items = []
        self.port = port

    def add(self, code, host, switch, message):
        self.items.append({"code": code, "host": host, "switch": switch, "message": message})


def lossless_diff(host, switch, port=None, profile=None, host_port=None):
    """Disagreements between a host NIC's QoS facts and its switch port's (see the module doc).

    ``host``/``switch``: facts mappings or bare settings; ``port`` picks the switch port (needed
    when the switch facts hold several), ``host_port`` the host NIC. Raises KeyError when a
    named port is not in the facts."""
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
    if h["trust"] is not None and s["trust"] is not None and _trusts_dscp(h["trust"]) != _trusts_dscp(s["trust"]):
        d.add("trust_mismatch", h["trust"], s["trust"],
              "The host trusts %s but %s trusts %s: RoCE packets are classified by different fields on each end."
              % (h["trust"].upper(), where, s["trust"].upper()))

    h_prio = s_prio = None
    if dscp is None:
        if h["dscp_to_priority"] or s["dscp_to_priority"]:
            d.add("roce_dscp_unknown", None, None,
                  "Which DSCP is RoCE is unknown (no profile, and the host's RoCE ToS was not read): the DSCP "
                  "mapping was not checked.")
    else:
        h_prio = lookup(h["dscp_to_priority"], dscp)
        s_prio = lookup(s["dscp_to_priority"], dscp)
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

    if h_pfc is not None and s_pfc is not None and h_pfc != s_pfc:
        d.add("pfc_mismatch", h_pfc, s_pfc,
              "PFC is on priorities %s on the host but %s on %s." % (_fmt(h_pfc), _fmt(s_pfc), where))

    # ECN on the switch queue of RoCE, DCQCN on the host priority.
    if s_prio is not None and s["ecn"] is not None:
        queue = _queue(s, int(s_prio))
        ecn = lookup(s["ecn"], queue) or {}
        if not ecn.get("enabled"):
            d.add("ecn_off_on_switch", None, "queue %d" % queue,
                  "ECN marking is off on queue %d of %s, which carries RoCE (DSCP %d): DCQCN gets no congestion "
                  "signal." % (queue, where, dscp))
    rp_prio = int(h_prio) if h_prio is not None else (profile["roce_priority"] if profile else None)
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
        if cnp_s_prio is not None and s["ets"] is not None:
            queue = _queue(s, int(cnp_s_prio))
            mode = (lookup(s["ets"], queue) or {}).get("mode")
            if mode != "strict":
                d.add("cnp_not_strict_on_switch", None, "queue %d (%s)" % (queue, mode or "not scheduled"),
                      "CNP DSCP %s lands in queue %s on %s, which is %s, not strict: congestion notifications wait "
                      "behind bulk traffic." % (cnp_dscp, queue, where, mode or "not scheduled"))
            elif s_pfc is not None and int(cnp_s_prio) in s_pfc:
                d.add("cnp_not_strict_on_switch", None, "priority %s (PFC)" % cnp_s_prio,
                      "CNP DSCP %s lands on PFC priority %s on %s: a paused queue holds back the notifications "
                      "meant to end the congestion." % (cnp_dscp, cnp_s_prio, where))
    cnp_h_prio = h["cnp_priority"]
    if cnp_h_prio is not None and strict_wanted and h["ets"] is not None:
        queue = _queue(h, int(cnp_h_prio))
        mode = (lookup(h["ets"], queue) or {}).get("mode")
        if mode != "strict":
            d.add("cnp_not_strict_on_host", "tc %d (%s)" % (queue, mode or "not scheduled"), None,
                  "The host sends CNPs on priority %s, whose traffic class %s is %s, not strict."
                  % (cnp_h_prio, queue, mode or "not scheduled"))

    # MTU chain.
    headroom = profile["switch_mtu_headroom"] if profile else DEFAULT_HEADROOM
    if h["mtu"] is not None and s["mtu"] is not None and int(s["mtu"]) < int(h["mtu"]) + headroom:
        d.add("mtu_too_small", int(h["mtu"]), int(s["mtu"]),
              "The host MTU is %s but %s has MTU %s; it needs at least %s (host MTU + %s bytes of headers)."
              % (h["mtu"], where, s["mtu"], int(h["mtu"]) + headroom, headroom))

    # PFC watchdog and buffers of the lossless priorities.
    if s["pfc_watchdog"] is not None and s_pfc and (profile is None or profile["pfc_watchdog"]):
        missing = [p for p in s_pfc if p not in sorted_ints(s["pfc_watchdog"])]
        if missing:
            d.add("pfc_watchdog_off", None, sorted_ints(s["pfc_watchdog"]),
                  "The PFC watchdog is off for lossless priority %s on %s: a stuck receiver can pause the fabric "
                  "indefinitely." % (_fmt(missing), where))
    for side, settings, pfc, code in (("the host NIC", h, h_pfc, "no_lossless_buffer_on_host"),
                                      (where, s, s_pfc, "no_lossless_buffer_on_switch")):
        if settings["buffer_lossless"] is not None and pfc:
            missing = [p for p in pfc if p not in sorted_ints(settings["buffer_lossless"])]
            if missing:
                values = (missing, None) if side == "the host NIC" else (None, missing)
                d.add(code, values[0], values[1],
                      "Priority %s has PFC but no lossless buffer on %s: pause frames come too late to prevent "
                      "drops." % (_fmt(missing), side))

    # The ToS stamped on RoCE packets.
    tos, tclass = h["roce_tos"], h["traffic_class"]
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
    return d.items


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
        for what, dscp, want in (("RoCE DSCP %d on priority" % p["roce_dscp"], p["roce_dscp"], p["roce_priority"]),
                                 ("CNP DSCP %d on priority" % p["cnp_dscp"], p["cnp_dscp"], p["cnp_priority"])):
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
    if s["ecn"] is not None and p["ecn_queues"] is not None:
        for queue in p["ecn_queues"]:
            ecn = lookup(s["ecn"], queue) or {}
            if not ecn.get("enabled"):
                switch("ECN on queue %d" % queue, "off", "on")
                continue
            for key, want in (("min_bytes", p["ecn_min_bytes"]), ("max_bytes", p["ecn_max_bytes"]),
                              ("probability", p["ecn_probability"])):
                have = ecn.get(key)
                if want is not None and have is not None and int(have) != want:
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


def link_rows(plan, host_facts, switch_facts, hosts=None, host_errors=None):
    """One report row per host-ToR link of ``plan`` (the rail plan) for ``hosts`` (default: all);
    links of a fabric without a lossless class have no row.

    ``host_facts``: {host: facts whose ports are the host's NIC names}; ``switch_facts``: {ToR
    name: facts whose ports are the plan's ToR port names}; ``host_errors``: {host: why its NICs
    could not be read}. A missing source is an ``error``
    row naming what is missing, never a silent pass."""
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
                   "status": "agree", "error": None, "disagreements": []}
            rows.append(row)
            facts = host_facts.get(host)
            tor = switch_facts.get(entry["tor"])
            try:
                if facts is None:
                    reason = (host_errors or {}).get(host)
                    raise KeyError("no QoS facts were gathered from %s%s" % (host, ": " + reason if reason else ""))
                if tor is None:
                    raise KeyError("no configuration of ToR %s was read" % entry["tor"])
                items = lossless_diff(facts, tor, entry["tor_port"], profile, entry.get("interface"))
            except KeyError as exc:
                row["status"], row["error"] = "error", str(exc.args[0] if exc.args else exc)
                continue
            row["disagreements"] = items
            row["status"] = "disagree" if items else "agree"
    return rows
