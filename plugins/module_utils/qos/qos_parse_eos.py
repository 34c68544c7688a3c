# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Arista EOS running-config QoS -> QoS facts (format ``"eos"``), one settings entry per Ethernet port.

What is read:

* global ``qos map dscp D.. to traffic-class T`` and ``qos map traffic-class T.. to tx-queue Q``;
  ``priority-flow-control all off``; ``priority-flow-control pause watchdog default ...``;
* ``qos profile NAME`` blocks, applied to the interfaces that say ``service-profile NAME``: the
  profile is applied first, then the interface's own lines override it (EOS gives the directly
  configured setting precedence);
* per interface (and per profile): ``qos trust dscp|cos``, ``no qos trust``, ``switchport`` /
  ``no switchport``, ``priority-flow-control on`` (or ``mode on``), ``no priority-flow-control``,
  ``priority-flow-control priority P no-drop|drop``, ``priority-flow-control pause watchdog``,
  ``mtu N``, and ``tx-queue Q`` / ``uc-tx-queue Q`` sub-blocks with ``priority strict``,
  ``no priority``, ``bandwidth percent W``, ``bandwidth guaranteed percent W`` and
  ``random-detect ecn minimum-threshold A UNIT maximum-threshold B UNIT [max-mark-probability P]``.
  ``mc-tx-queue`` (multicast) blocks and every other line are ignored.

Vocabulary: the **priority** is the EOS traffic class; its PFC priority is the CoS of the same
number (``priority-flow-control priority 3 no-drop`` names traffic class / CoS 3), and the
**queue** is the tx-queue.

Vendor defaults used when the config is silent (EOS QoS chapter, "default DSCP to traffic class
map" and "default traffic class to transmit queue map", Trident/Tomahawk/Jericho platforms):

* ``dscp_to_priority``: DSCP 0-7 -> TC 1, 8-15 -> TC 0, 16-23 -> 2, 24-31 -> 3, 32-39 -> 4,
  40-47 -> 5, 48-55 -> 6, 56-63 -> 7 (note the 0/1 inversion), overlaid with ``qos map dscp``.
  All 64 DSCPs are always given.
* ``priority_to_queue``: TC n -> tx-queue n, overlaid with ``qos map traffic-class .. to tx-queue``.
* ``trust``: ``"pcp"`` (trust cos) on switched ports, ``"dscp"`` on routed ports (``no switchport``).
  A visibly partial section (``! Command: show running-config interfaces ...``) gets neither these
  maps (unless it holds ``qos map`` lines) nor a trust its interface lines do not imply.
* tx-queue scheduling: strict priority unless ``no priority``; so a queue with ``bandwidth percent``
  but no ``priority`` line is reported as ``{"mode": "strict", "weight": W}``.
* ``pfc``: PFC is off unless ``priority-flow-control on``; ``priority-flow-control all off``
  turns it off on every port.
* ``pfc_watchdog``: the no-drop priorities of ports where ``priority-flow-control pause
  watchdog`` is configured, or of every PFC port when ``priority-flow-control pause watchdog
  default timeout`` is configured globally and the port does not say
  ``no priority-flow-control pause watchdog``.

ECN thresholds in ``bytes``/``kbytes``/``mbytes`` are converted (kbyte = 1024 bytes); thresholds in
``segments`` or time units (``milliseconds``, ``microseconds``; AVD's EOS schema ``random_detect.ecn.threshold.units``)
give ``None`` bytes. ``ecn_unit`` keeps the unit of each threshold (1024 for kbytes, ``"segments"``), so that the check
compares in it and names a unit it cannot convert. ``buffer_lossless`` is not stated by the config.

Stages EOS does not have (:func:`qos_facts.one_way_pfc_stages`): ``priority-flow-control priority N no-drop``
names no direction, so ``pfc_rx`` = ``pfc_tx`` = ``pfc``; there is no PFC priority -> queue map, a pause stops
the tx-queue of its traffic class (``pfc_to_queue`` = ``priority_to_queue``); no priority-group stage.

Global ``switchport default mode routed|access`` sets whether an interface without ``switchport`` /
``no switchport`` is routed; ``interface defaults`` / ``mtu N`` the MTU of routed interfaces without
their own ``mtu``.

**Defaults by omission** (:data:`EOS_DEFAULTS`; sources in ``docs/lossless-qos.md``): a whole
running-config (anything but a ``! Command: show running-config <section>`` output, see
:func:`qos_parse_cli.partial_reason`) states them by leaving the command out: ``pfc`` ``[]`` without
``priority-flow-control on``; ``ecn`` off on every tx-queue without ``random-detect ecn``; ``mtu`` 1500 on
a routed port (the ``interface defaults`` MTU when stated). Not filled (no documentation found): the
MTU of a switched port (EOS's ``mtu`` is the layer 3 MTU), tx-queue scheduling of unconfigured queues
(``ets``), the PFC watchdog where the config says nothing about it.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import (
    ECN_OFF, ecn_off_elsewhere, ecn_units, int_list, new_facts, new_settings, one_way_pfc_stages, unique)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse_cli import (
    block_problem, find_blocks, interface_lines, partial_reason, sort_key, split_blocks, starts, threshold_unit,
    to_bytes, guarded_parse)

EOS_DEFAULT_DSCP_TO_TC = dict((dscp, {0: 1, 1: 0}.get(dscp // 8, dscp // 8)) for dscp in range(64))
EOS_DEFAULT_TC_TO_QUEUE = dict((tc, tc) for tc in range(8))

# Defaults by omission of a whole EOS running-config (docs/lossless-qos.md, "Defaults by omission").
EOS_DEFAULTS = {
    # Trust: CoS on switched ports, DSCP on routed ones ("no switchport makes the port routed, for which DSCP
    # trust is normally the default ... a switched port, whose default trust mode is CoS": the guide
    # "Arista_EOS_RoCEv2_Lossless_Config" after https://www.arista.com/en/um-eos/eos-quality-of-service).
    # An Ethernet interface is a switched port unless "switchport default mode routed" says otherwise.
    "trust": {False: "pcp", True: "dscp"},
    "routed": False,
    # PFC is off until "priority-flow-control on" (https://www.arista.com/en/um-eos/eos-dcbx-and-flow-control,
    # via the same guide: PFC is "enabled directly on an interface with two commands").
    "pfc": [],
    # ECN marks only above a configured threshold ("random-detect ecn minimum-threshold ...";
    # https://www.arista.com/en/support/toi/tag/ecn): a tx-queue without it does not mark.
    "ecn": ECN_OFF,
    # "MTU is independently configurable on all routable interfaces ... The default MTU size is 1500 bytes."
    # (https://www.arista.com/en/um-eos/eos-support-for-layer-3-mtu-on-7280r37500r37800r3). Routed ports only.
    "routed_mtu": 1500,
}
_MTU_UNREADABLE = "unreadable"


def _new_state():
    return {"trust": None, "routed": None, "pfc_on": None, "no_drop": {}, "watchdog": None,
            "mtu": None, "queues": {}, "profile": None}


def _queue(state, number):
    return state["queues"].setdefault(number, {"mode": None, "weight": None, "ecn": None})


def _read_ecn(words):
    """``random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes
    max-mark-probability 100 [weight 0]`` -> ecn mapping."""
    out = {"enabled": True, "min_bytes": None, "max_bytes": None, "probability": None}
    low = [w.lower() for w in words]
    for key, field in (("minimum-threshold", "min_bytes"), ("maximum-threshold", "max_bytes")):
        if key in low:
            at = low.index(key)
            unit = words[at + 2] if at + 2 < len(words) else ""
            out[field] = to_bytes(words[at + 1], unit)
            out[field.replace("bytes", "unit")] = threshold_unit(unit)
    if "max-mark-probability" in low:
        out["probability"] = int(words[low.index("max-mark-probability") + 1])
    return out


def _apply_queue(block, state, problems):
    words = block.words
    try:
        numbers = int_list(words[1])
    except (ValueError, IndexError):
        problems.append(block_problem(block, "cannot read the tx-queue number"))
        return
    for child in block.children:
        cw = child.words
        try:
            for number in numbers:
                queue = _queue(state, number)
                if starts(cw, "priority", "strict"):
                    queue["mode"] = "strict"
                elif starts(cw, "no", "priority"):
                    queue["mode"] = "ets"
                elif starts(cw, "bandwidth", "percent") or starts(cw, "bandwidth", "guaranteed", "percent"):
                    queue["weight"] = int(cw[-1])
                elif starts(cw, "random-detect", "ecn") and len(cw) > 2 and cw[2].lower() != "count":
                    queue["ecn"] = _read_ecn(cw)
                elif starts(cw, "no", "random-detect", "ecn"):
                    queue["ecn"] = {"enabled": False, "min_bytes": None, "max_bytes": None, "probability": None}
        except (ValueError, IndexError):
            problems.append(block_problem(child, "cannot read tx-queue %s setting" % words[1]))


def _apply(lines, state, problems):
    """Apply interface or qos-profile lines, in order, to ``state``."""
    for block in lines:
        words = block.words
        low = [w.lower() for w in words]
        try:
            if low[:1] in (["tx-queue"], ["uc-tx-queue"]):
                _apply_queue(block, state, problems)
            elif low[:3] == ["qos", "trust", "dscp"]:
                state["trust"] = "dscp"
            elif low[:3] == ["qos", "trust", "cos"]:
                state["trust"] = "pcp"
            elif low[:3] == ["no", "qos", "trust"]:
                state["trust"] = "none"
            elif low == ["switchport"]:
                state["routed"] = False
            elif low == ["no", "switchport"]:
                state["routed"] = True
            elif low in (["priority-flow-control", "on"], ["priority-flow-control", "mode", "on"]):
                state["pfc_on"] = True
            elif low in (["no", "priority-flow-control"], ["priority-flow-control", "off"],
                         ["priority-flow-control", "mode", "off"], ["no", "priority-flow-control", "mode"]):
                state["pfc_on"] = False
            elif low[:2] == ["priority-flow-control", "priority"] and len(low) >= 4:
                for prio in int_list(words[2]):
                    if prio > 7:
                        raise ValueError("priority %d" % prio)
                    state["no_drop"][prio] = low[3] == "no-drop"
            elif low[:3] == ["no", "priority-flow-control", "priority"] and len(low) >= 4:
                for prio in int_list(words[3]):
                    state["no_drop"][prio] = False
            elif low == ["priority-flow-control", "pause", "watchdog"]:
                state["watchdog"] = True
            elif low == ["no", "priority-flow-control", "pause", "watchdog"]:
                state["watchdog"] = False
            elif low[:1] == ["mtu"] and len(low) == 2:
                state["mtu"] = _MTU_UNREADABLE  # stated: no default replaces it when it cannot be read
                state["mtu"] = int(words[1])
            elif low[:1] == ["service-profile"] and len(low) == 2:
                state["profile"] = words[1]
        except (ValueError, IndexError):
            problems.append(block_problem(block, "cannot read"))


def _global_maps(blocks, problems):
    dscp_map = dict(EOS_DEFAULT_DSCP_TO_TC)
    tc_queue = dict(EOS_DEFAULT_TC_TO_QUEUE)
    for block in find_blocks(blocks, "qos", "map"):
        low = [w.lower() for w in block.words]
        try:
            if "to" not in low:
                continue
            at = low.index("to")
            sources = int_list(" ".join(block.words[3:at]))
            if low[2] == "dscp" and low[at + 1] == "traffic-class":
                target = int(block.words[at + 2])
                for dscp in sources:
                    if dscp > 63 or target > 7:
                        raise ValueError("out of range")
                    dscp_map[dscp] = target
            elif low[2] == "traffic-class" and low[at + 1] == "tx-queue":
                target = int(block.words[at + 2])
                for tc in sources:
                    tc_queue[tc] = target
        except (ValueError, IndexError):
            problems.append(block_problem(block, "cannot read qos map"))
    return dscp_map, tc_queue


def _global_defaults(blocks, problems):
    """``switchport default mode`` (routed or not) and the ``interface defaults`` MTU of routed ports."""
    routed, mtu = EOS_DEFAULTS["routed"], EOS_DEFAULTS["routed_mtu"]
    for block in find_blocks(blocks, "switchport", "default", "mode"):
        if len(block.words) == 4 and block.words[3].lower() in ("routed", "access"):
            routed = block.words[3].lower() == "routed"
    for block in find_blocks(blocks, "interface", "defaults"):
        for child in block.children:
            if starts(child.words, "mtu") and len(child.words) == 2:
                try:
                    mtu = int(child.words[1])
                except ValueError:
                    problems.append(block_problem(child, "cannot read the default mtu"))
                    mtu = None
    return routed, mtu


def _settings(state, maps, config, name, problems):
    dscp_map, tc_queue = maps
    settings = new_settings()
    routed = state["routed"] if state["routed"] is not None else config["routed"]
    if state["trust"] or config["complete"] or state["routed"] is not None:
        settings["trust"] = state["trust"] or EOS_DEFAULTS["trust"][bool(routed)]
    settings["dscp_to_priority"] = dict(dscp_map) if dscp_map is not None else None
    settings["priority_to_queue"] = dict(tc_queue) if tc_queue is not None else None
    no_drop = sorted(p for p, on in state["no_drop"].items() if on)
    if config["all_off"]:
        settings["pfc"] = []
    elif state["pfc_on"]:
        settings["pfc"] = no_drop
    elif state["pfc_on"] is False:
        settings["pfc"] = []
    elif no_drop:
        settings["pfc"] = []
        problems.append("%s: priority-flow-control priority %s no-drop without priority-flow-control on "
                        "(PFC stays off)" % (name, ",".join(str(p) for p in no_drop)))
    elif config["complete"]:
        settings["pfc"] = list(EOS_DEFAULTS["pfc"])
    pfc = settings["pfc"]
    global_watchdog = config["global_watchdog"]
    if pfc is not None:
        if not pfc or state["watchdog"] is False:
            settings["pfc_watchdog"] = []
        elif state["watchdog"] or global_watchdog:
            settings["pfc_watchdog"] = list(pfc)
    ecn = dict((q, dict(v["ecn"])) for q, v in state["queues"].items() if v["ecn"] is not None)
    settings["ecn"] = ecn_off_elsewhere(ecn) if config["complete"] else ecn or None
    ecn_units(settings)
    ets = {}
    for number, queue in state["queues"].items():
        if queue["mode"] is not None or queue["weight"] is not None:
            ets[number] = {"mode": queue["mode"] or "strict", "weight": queue["weight"]}
    settings["ets"] = ets or None
    if state["mtu"] == _MTU_UNREADABLE:
        settings["mtu"] = None
    elif state["mtu"] is not None:
        settings["mtu"] = state["mtu"]
    elif config["complete"] and routed:
        settings["mtu"] = config["routed_mtu"]
    return settings


def parse_eos(text):
    """QoS facts (format ``"eos"``) of an EOS running-config ``text``; never raises."""
    return guarded_parse("eos", text, _parse)


def _parse(text, problems):
    blocks = split_blocks(text)
    complete = partial_reason(text) is None
    # A section without the global "qos map" lines (show running-config interfaces ...) cannot tell the maps.
    maps = _global_maps(blocks, problems) if complete or find_blocks(blocks, "qos", "map") else (None, None)
    routed, routed_mtu = _global_defaults(blocks, problems)
    config = {"all_off": bool(find_blocks(blocks, "priority-flow-control", "all", "off")),
              "global_watchdog": bool(find_blocks(blocks, "priority-flow-control", "pause", "watchdog", "default",
                                                  "timeout")),
              "routed": routed, "routed_mtu": routed_mtu, "complete": complete}
    profiles = {}
    for block in find_blocks(blocks, "qos", "profile"):
        if len(block.words) == 3:
            profiles.setdefault(block.words[2], []).extend(block.children)
    ports = {}
    for name, lines in interface_lines(blocks, "eos", problems).items():
        probe = _new_state()
        _apply(lines, probe, [])
        state = _new_state()
        if probe["profile"] is not None:
            if probe["profile"] in profiles:
                _apply(profiles[probe["profile"]], state, problems)
            else:
                problems.append("%s: service-profile %s is referenced but no 'qos profile %s' is defined"
                                % (name, probe["profile"], probe["profile"]))
        _apply(lines, state, problems)
        ports[name] = _settings(state, maps, config, name, problems)
    # no PFC direction and no PFC priority -> queue map on this NOS (module docstring): one_way_pfc_stages
    ordered = dict((name, one_way_pfc_stages(ports[name])) for name in sorted(ports, key=sort_key))
    return new_facts("eos", ordered, unique(problems))
