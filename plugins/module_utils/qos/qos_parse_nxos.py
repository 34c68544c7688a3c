# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cisco NX-OS (Nexus 9000, 8-queue mode) running-config QoS -> QoS facts (format ``"nxos"``).

What is read (modular QoS CLI):

* ``class-map type qos match-all|match-any C`` with ``match dscp ..`` (numbers, ranges, lists,
  names such as ``af31``/``cs3``/``ef``) and ``match cos ..``;
* ``policy-map type qos P`` / ``class C`` / ``set qos-group N``: classification. The
  **priority** is the qos-group, whose PFC priority is the CoS of the same number;
* ``class-map type network-qos C`` / ``match qos-group N`` and ``policy-map type network-qos P``
  / ``class type network-qos C`` / ``pause pfc-cos N`` (also ``pause buffer-size .. pfc-cos N``
  and the older ``pause no-drop``, which pauses the class's own qos-group) / ``mtu N``;
* ``policy-map type queuing P`` / ``class type queuing c-out-8q-qN`` (``c-out-8q-q-default`` is
  queue 0; user ``class-map type queuing`` with ``match qos-group N`` too) with
  ``bandwidth [remaining] percent W``, ``priority [level N]`` and ``random-detect
  minimum-threshold A UNIT maximum-threshold B UNIT drop-probability P weight W [ecn]``;
* ``system qos`` / ``service-policy type network-qos P``, ``service-policy type queuing output
  P``, ``service-policy type qos input P``; global ``priority-flow-control watch-dog-interval
  on|off``;
* per Ethernet interface: ``service-policy type qos input P``, ``service-policy type queuing
  output P`` (both override the system ones), ``priority-flow-control mode on|off|auto``,
  ``priority-flow-control watch-dog-interval on|off``, ``mtu N``.

Vendor defaults used when the config is silent (Cisco Nexus 9000 NX-OS QoS configuration guide):

* ``priority_to_queue``: qos-group N is always queue N (the system queuing classes
  ``c-out-8q-qN``), so it is ``{0: 0, ..., 7: 7}``.
* ``pfc``: the **CoS values** of ``pause pfc-cos`` (``pause no-drop``: the class's own qos-group) of the no-drop
  classes of the network-qos policy in force: N9K enables PFC per CoS, and its pause frames name those values (``show
  queuing interface`` prints a PFC_COS -> QOS_Group table). The buffer is the class's qos-group (the ``c-8q-nq<N>``
  system class or its ``class-map type network-qos`` ``match qos-group N``), stated through the priority group stage:
  ``priority_to_pg`` = identity (qos-group N is priority group N), ``buffer_lossless_pg`` = the no-drop qos-groups,
  ``pfc_to_pg`` = ``{cos: qos-group of the class stating it}``, and ``pfc_to_queue`` = the same (a pause for that CoS
  stops the class's queue; a CoS no class names has no PFC and no entry). ``buffer_lossless`` stays ``None``. A
  no-drop class whose qos-group is not known (an undefined class-map) leaves them ``None``.
* ``pfc_mode``: ``on`` / ``off`` / ``auto`` as the interface states it, else ``auto`` (the interface default) in a
  whole config; in a part of it (``!Command: show running-config ipqos``) an unstated mode is ``None``, unread, with
  its reason in ``why_unknown`` (the check leaves PFC unchecked). ``on`` and ``auto`` give the pfc-cos values as ``pfc`` (none: ``[]``, the default network-qos
  policy pauses nothing), ``off`` ``[]``; with ``auto`` PFC runs only once DCBX negotiates it with the peer, which
  the check judges against the host's DCBX mode.
* classification: a ``class-map type qos match-all`` with a ``match cos`` beside its ``match dscp`` does not
  match a packet without CoS (untagged routed RoCE): its DSCPs go on to the next class, else class-default;
  ``match-any`` classifies by any of its conditions (:func:`dscp_only`). A ``match-all`` class with a condition not
  read here (``match access-group``, ``precedence``, ``protocol``, ...) may not hold a packet of its DSCPs: they are
  left out of ``dscp_to_priority`` (and of the class-default fill), with a problem naming class and condition.
* ``trust``: ``"dscp"`` / ``"pcp"`` / ``"pcp,dscp"`` after what the applied type-qos policy matches
  on; ``None`` without one. ``dscp_to_priority`` holds only the DSCPs the policy matches (first
  matching class wins); unmatched traffic goes to class-default (qos-group 0). When the policy
  states ``class class-default`` / ``set qos-group N`` (as Cisco's RoCE templates do), every DSCP
  no class matches is mapped to N, so the map holds all 64.
* ``buffer_lossless_pg``: the no-drop qos-groups of the system network-qos policy (no-drop buffers are carved
  system-wide, per no-drop class).

Stages NX-OS does not have (:func:`qos_facts.pfc_both_ways`): ``priority-flow-control`` and the no-drop class name
no direction, so ``pfc_rx`` = ``pfc_tx`` = ``pfc``.

**Defaults by omission** (:data:`NXOS_DEFAULTS`; sources in ``docs/lossless-qos.md``): a whole
running-config (anything but a ``!Command: show running-config <section>`` output) states them by
leaving the command out: without a type qos input policy every packet is in qos-group 0 (``trust``
``"none"``, all 64 DSCPs on priority 0), and a policy that matches DSCPs but states no ``class
class-default`` sends the others to qos-group 0 too; without a network-qos policy that pauses a CoS,
``pfc`` and ``buffer_lossless_pg`` are ``[]`` whatever the PFC mode; an interface without ``priority-flow-control mode``
is in mode ``auto``; ``ecn`` is off on every queue without ``random-detect ...
ecn``. Not filled (no documentation found): ``mtu``, the scheduling of queues no queuing policy states
(``ets``), the PFC watchdog of PFC ports where the config says nothing about it.

Problems: a policy-map or class-map that is referenced but never defined (system-defined classes
such as ``c-8q-nq3``, ``c-out-8q-q3`` and ``class-default`` need no definition), and unreadable
values. ECN thresholds in bytes/kbytes/mbytes are converted (kbyte = 1024 bytes); ``ecn_unit`` keeps each
threshold's unit (another unit, e.g. ``packets``: ``None`` bytes and the unit's name).
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import (
    ECN_OFF, ecn_off_elsewhere, ecn_units, int_list, new_facts, new_settings, pfc_both_ways, unique)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse_cli import (
    block_problem, dscp_list, find_blocks, interface_lines, partial_reason, sort_key, split_blocks, starts,
    threshold_unit, to_bytes, guarded_parse)

# Defaults by omission of a whole NX-OS (Nexus 9000) running-config (docs/lossless-qos.md, "Defaults by omission").
NXOS_DEFAULTS = {
    # "By default, all network traffic is grouped into a single category called qos-group 0." (Cisco Nexus 9000
    # NX-OS QoS Configuration Guide 10.6(x), Configure Queuing and Scheduling, https://www.cisco.com/c/en/us/td/
    # docs/dcn/nx-os/nexus9000/106x/configuration/qos/cisco-nexus-9000-series-nx-os-quality-of-service-
    # configuration-guide-106x/m-configuring-queuing-and-scheduling.html): no field classifies.
    "trust": "none",
    "qos_group": 0,
    # PFC pauses only the qos-groups of a network-qos class that states "pause pfc-cos" (Configuring Priority Flow
    # Control, .../105x/.../m-configuring-priority-flow-control.html): without one nothing is no-drop.
    "no_drop": {},
    # "priority-flow-control mode {auto | on | off}": auto, the interface default, runs PFC only where DCBX negotiates
    # it with the peer (same chapter).
    "pfc_mode": "auto",
    # ECN marks only where WRED ECN is configured ("When configured with the WRED ECN feature", same queuing
    # chapter): a queue without "random-detect ... ecn" does not mark.
    "ecn": ECN_OFF,
}

_SYSTEM_NQ = re.compile(r"^c-(?:8q-)?nq(\d|-default)$", re.I)
_SYSTEM_QUEUE = re.compile(r"^c-out-(?:8q-)?q(\d|-default)$", re.I)


def _system_group(name, pattern):
    if name.lower() == "class-default":
        return 0
    match = pattern.match(name)
    if not match:
        return None
    return 0 if match.group(1).lower() == "-default" else int(match.group(1))


def _type_and_name(words, kind):
    """``class-map type qos match-all NAME`` -> NAME when the type is ``kind``."""
    low = [w.lower() for w in words]
    if len(low) < 4 or low[1] != "type" or low[2] != kind:
        return None
    rest = words[3:]
    if rest and rest[0].lower() in ("match-all", "match-any"):
        rest = rest[1:]
    return rest[0] if rest else None


def _match_type(words):
    """``class-map type qos match-any NAME`` -> ``"match-any"``; NX-OS's default, and the bare form, is match-all."""
    low = [w.lower() for w in words]
    return "match-any" if len(low) > 3 and low[3] == "match-any" else "match-all"


def dscp_only(cmap):
    """The DSCPs for which a packet that carries no CoS (untagged, routed RoCEv2) matches type qos class ``cmap``.

    ``match-any``: any ``match dscp`` line. ``match-all``: every condition must hold, so a ``match cos`` beside the
    DSCP condition leaves such a packet out (it goes on to the next class, else class-default), and several ``match
    dscp`` lines leave the DSCPs they share ([CLS]: "match-all ... all the match criteria ... must be satisfied")."""
    conditions = cmap.get("dscp_conditions") or ([cmap["dscp"]] if cmap.get("dscp") else [])
    if not conditions:
        return []
    if cmap.get("match") == "match-any":
        return sorted(set().union(*conditions))
    if cmap.get("cos"):
        return []
    return sorted(set(conditions[0]).intersection(*conditions[1:]))


class _Config(object):
    def __init__(self, blocks, problems, complete=False):
        self.problems = problems
        self.complete = complete
        self.class_qos, self.class_nq, self.class_queue = {}, {}, {}
        self.policy_qos, self.policy_nq, self.policy_queue = {}, {}, {}
        for block in find_blocks(blocks, "class-map"):
            self._class_map(block)
        for block in find_blocks(blocks, "policy-map"):
            self._policy_map(block)

    def _class_map(self, block):
        for kind, table in (("qos", self.class_qos), ("network-qos", self.class_nq), ("queuing", self.class_queue)):
            name = _type_and_name(block.words, kind)
            if name is None:
                continue
            entry = table.setdefault(name, {"dscp": [], "cos": [], "groups": [], "line": block.lineno,
                                            "match": _match_type(block.words), "dscp_conditions": [],
                                            "other": []})
            for child in block.children:
                cw = child.words
                try:
                    if starts(cw, "match", "dscp"):
                        entry["dscp_conditions"].append(sorted(set(dscp_list(cw[2:]))))
                        entry["dscp"] = sorted(set(entry["dscp"]) | set(dscp_list(cw[2:])))
                    elif starts(cw, "match", "cos"):
                        entry["cos"] = sorted(set(entry["cos"]) | set(int_list(" ".join(cw[2:]))))
                    elif starts(cw, "match", "qos-group"):
                        entry["groups"] = sorted(set(entry["groups"]) | set(int_list(" ".join(cw[2:]))))
                    elif starts(cw, "match"):
                        entry["other"].append(" ".join(cw[1:]))  # access-group, precedence, protocol, ...: not read
                except ValueError:
                    self.problems.append(block_problem(child, "cannot read match in class-map %s" % name))

    def _policy_map(self, block):
        words = block.words
        low = [w.lower() for w in words]
        if len(low) >= 4 and low[1] == "type" and low[2] in ("qos", "network-qos", "queuing"):
            kind, name = low[2], words[3]
        elif len(low) == 2:
            kind, name = "qos", words[1]  # "policy-map NAME" is a type qos policy
        else:
            return
        classes = []
        for child in block.children:
            cw = child.words
            if not starts(cw, "class"):
                continue
            if len(cw) >= 4 and cw[1].lower() == "type":
                cname = cw[3]
            elif len(cw) >= 2:
                cname = cw[1]
            else:
                self.problems.append(block_problem(child, "class without a name in policy-map %s" % name))
                continue
            classes.append((cname, child))
        table = {"qos": self.policy_qos, "network-qos": self.policy_nq, "queuing": self.policy_queue}[kind]
        table[name] = {"classes": classes, "line": block.lineno}

    # --- per policy kind -------------------------------------------------------------------
    def classification(self, name, where):
        """(dscp_to_priority, trust) of type qos policy ``name``."""
        policy = self.policy_qos.get(name)
        if policy is None:
            self.problems.append("service-policy type qos %s (%s) is referenced but policy-map type qos %s "
                                 "is not defined" % (name, where, name))
            return None, None
        dscp_map, saw_dscp, saw_cos, default_group, unknown = {}, False, False, None, set()
        for cname, block in policy["classes"]:
            group = None
            for child in block.children:
                cw = child.words
                if starts(cw, "set", "qos-group") and len(cw) == 3:
                    try:
                        group = int(cw[2])
                    except ValueError:
                        self.problems.append(block_problem(child, "cannot read qos-group"))
            if cname.lower() == "class-default":
                default_group = group
                continue
            cmap = self.class_qos.get(cname)
            if cmap is None:
                self.problems.append("policy-map type qos %s (line %d): class-map type qos %s is referenced but "
                                     "not defined" % (name, block.lineno, cname))
                continue
            saw_dscp = saw_dscp or bool(cmap["dscp"])
            saw_cos = saw_cos or bool(cmap["cos"])
            if group is None:
                continue
            dscps = [dscp for dscp in dscp_only(cmap) if dscp not in dscp_map and dscp not in unknown]
            if cmap["match"] == "match-all" and cmap["other"] and dscps:
                # a condition not read decides whether these DSCPs are in the class: where they land is not known
                self.problems.append("policy-map type qos %s (line %d): match-all class-map type qos %s also matches "
                                     "'%s', which is not read: DSCP %s left out of dscp_to_priority"
                                     % (name, block.lineno, cname, cmap["other"][0], ",".join(map(str, dscps))))
                unknown.update(dscps)
                continue
            for dscp in dscps:
                dscp_map[dscp] = group
        trust = {(True, False): "dscp", (False, True): "pcp", (True, True): "pcp,dscp"}.get((saw_dscp, saw_cos))
        if default_group is None and self.complete:
            default_group = NXOS_DEFAULTS["qos_group"]  # unmatched traffic: class-default, qos-group 0
        if saw_dscp and default_group is not None:
            for dscp in range(64):
                if dscp not in unknown:
                    dscp_map.setdefault(dscp, default_group)
        return (dscp_map if saw_dscp else None), trust

    def no_drop(self, name, where):
        """``{qos-group: sorted pfc-cos}`` of the no-drop classes of network-qos policy ``name``: a class with ``pause
        pfc-cos`` / ``pause no-drop`` makes **its qos-group** lossless (the ``c-8q-nq<N>`` system class, or the
        ``match qos-group`` of a user class), and its pause frames name the CoS values of ``pfc-cos`` (``no-drop``:
        the qos-group's own). None when the policy is undefined or a no-drop class covers no readable qos-group."""
        policy = self.policy_nq.get(name)
        if policy is None:
            self.problems.append("service-policy type network-qos %s (%s) is referenced but policy-map type "
                                 "network-qos %s is not defined" % (name, where, name))
            return None
        out, unknown = {}, False
        for cname, block in policy["classes"]:
            group = _system_group(cname, _SYSTEM_NQ)
            if group is None:
                cmap = self.class_nq.get(cname)
                if cmap is None:
                    self.problems.append("policy-map type network-qos %s (line %d): class-map type network-qos %s "
                                         "is referenced but not defined" % (name, block.lineno, cname))
                elif cmap["groups"]:
                    group = cmap["groups"][0]
            cos = set()
            paused = False
            for child in block.children:
                cw = [w.lower() for w in child.words]
                if not cw or cw[0] != "pause":
                    continue
                try:
                    if "pfc-cos" in cw:
                        cos.update(int_list(" ".join(cw[cw.index("pfc-cos") + 1:])))
                        paused = True
                    elif "no-drop" in cw:
                        paused = True
                        if group is not None:
                            cos.add(group)
                except ValueError:
                    self.problems.append(block_problem(child, "cannot read pfc-cos"))
            if any(c > 7 for c in cos):
                self.problems.append("policy-map type network-qos %s: pfc-cos out of range" % name)
                cos = set(c for c in cos if c <= 7)
            if not paused:
                continue
            if group is None:
                unknown = True  # a no-drop class whose qos-group is not known: which traffic is lossless is not known
                continue
            out.setdefault(group, set()).update(cos)
        return None if unknown else dict((g, sorted(c)) for g, c in sorted(out.items()))

    def queuing(self, name, where):
        """(ecn, ets) of queuing output policy ``name``."""
        policy = self.policy_queue.get(name)
        if policy is None:
            self.problems.append("service-policy type queuing output %s (%s) is referenced but policy-map type "
                                 "queuing %s is not defined" % (name, where, name))
            return None, None
        ecn, ets = {}, {}
        for cname, block in policy["classes"]:
            queue = _system_group(cname, _SYSTEM_QUEUE)
            if queue is None:
                cmap = self.class_queue.get(cname)
                if cmap is None:
                    if not cname.lower().startswith("c-in-"):
                        self.problems.append("policy-map type queuing %s (line %d): class-map type queuing %s is "
                                             "referenced but not defined" % (name, block.lineno, cname))
                    continue
                if not cmap["groups"]:
                    continue
                queue = cmap["groups"][0]
            for child in block.children:
                cw = child.words
                low = [w.lower() for w in cw]
                if low[:1] == ["congestion-control"]:
                    cw, low = cw[1:], low[1:]
                try:
                    if low[:1] == ["priority"]:
                        ets[queue] = {"mode": "strict", "weight": (ets.get(queue) or {}).get("weight")}
                    elif low[:1] == ["bandwidth"] and "percent" in low:
                        weight = int(cw[low.index("percent") + 1])
                        mode = (ets.get(queue) or {}).get("mode") or "ets"
                        ets[queue] = {"mode": mode, "weight": weight}
                    elif low[:1] == ["random-detect"]:
                        entry = {"enabled": "ecn" in low, "min_bytes": None, "max_bytes": None, "probability": None}
                        for key, field in (("minimum-threshold", "min_bytes"), ("maximum-threshold", "max_bytes")):
                            if key in low:
                                at = low.index(key)
                                unit = cw[at + 2] if at + 2 < len(cw) else ""
                                entry[field] = to_bytes(cw[at + 1], unit)
                                entry[field.replace("bytes", "unit")] = threshold_unit(unit)
                        if "drop-probability" in low:
                            entry["probability"] = int(cw[low.index("drop-probability") + 1])
                        ecn[queue] = entry
                except (ValueError, IndexError):
                    self.problems.append(block_problem(child, "cannot read queuing setting in %s" % name))
        return ecn, ets


def _service_policy(words):
    """``service-policy type qos input NAME [no-stats]`` -> ("qos", "input", NAME)."""
    low = [w.lower() for w in words]
    if len(low) < 4 or low[0] != "service-policy" or low[1] != "type":
        return None
    kind = low[2]
    if kind == "network-qos":
        return kind, None, words[3]
    if len(low) >= 5 and low[3] in ("input", "output"):
        return kind, low[3], words[4]
    return None


def parse_nxos(text):
    """QoS facts (format ``"nxos"``) of an NX-OS running-config ``text``; never raises."""
    return guarded_parse("nxos", text, _parse)


def _parse(text, problems):
    blocks = split_blocks(text)
    complete = partial_reason(text) is None
    config = _Config(blocks, problems, complete)
    system = {}
    for block in find_blocks(blocks, "system", "qos"):
        for child in block.children:
            found = _service_policy(child.words)
            if found:
                system[(found[0], found[1])] = (found[2], "system qos, line %d" % child.lineno)
    watchdog_global = None
    for block in find_blocks(blocks, "priority-flow-control", "watch-dog-interval"):
        watchdog_global = block.words[-1].lower() == "on"
    for block in find_blocks(blocks, "no", "priority-flow-control", "watch-dog-interval"):
        watchdog_global = False
    cache = {}
    for (kind, direction), (pname, where) in system.items():
        if kind == "qos" and direction == "input":
            cache[(kind, pname, where)] = config.classification(pname, where)
        elif kind == "queuing" and direction == "output":
            cache[(kind, pname, where)] = config.queuing(pname, where)
    no_drop = None
    if ("network-qos", None) in system:
        no_drop = config.no_drop(*system[("network-qos", None)])
    ports = {}
    for name, lines in interface_lines(blocks, "nxos", problems).items():
        policies = dict(system)
        mode, watchdog, mtu = None, None, None
        for block in lines:
            low = [w.lower() for w in block.words]
            try:
                found = _service_policy(block.words)
                if found:
                    policies[(found[0], found[1])] = (found[2], "interface config line %d" % block.lineno)
                elif low[:2] == ["priority-flow-control", "mode"] and len(low) >= 3:
                    mode = low[2]
                elif low[:3] == ["no", "priority-flow-control", "mode"]:
                    mode = "auto"
                elif low[:2] == ["priority-flow-control", "watch-dog-interval"] and len(low) == 3:
                    watchdog = low[2] == "on"
                elif low[:1] == ["mtu"] and len(low) == 2:
                    mtu = int(low[1])
            except ValueError:
                problems.append(block_problem(block, "cannot read"))
        settings = new_settings()
        settings["priority_to_queue"] = dict((n, n) for n in range(8))
        settings["mtu"] = mtu
        if ("qos", "input") in policies:
            key = ("qos",) + policies[("qos", "input")]
            if key not in cache:
                cache[key] = config.classification(*policies[("qos", "input")])
            dscp_map, trust = cache[key]
            settings["dscp_to_priority"] = dict(dscp_map) if dscp_map is not None else None
            settings["trust"] = trust
        elif complete:
            settings["trust"] = NXOS_DEFAULTS["trust"]
            settings["dscp_to_priority"] = dict.fromkeys(range(64), NXOS_DEFAULTS["qos_group"])
        ecn = None
        if ("queuing", "output") in policies:
            key = ("queuing",) + policies[("queuing", "output")]
            if key not in cache:
                cache[key] = config.queuing(*policies[("queuing", "output")])
            ecn, ets = cache[key]
            settings["ecn"] = dict((q, dict(v)) for q, v in ecn.items()) if ecn else None
            settings["ets"] = dict((q, dict(v)) for q, v in ets.items()) if ets else None
        if complete and (ecn is not None or ("queuing", "output") not in policies):
            settings["ecn"] = ecn_off_elsewhere(ecn)
        ecn_units(settings)
        # The qos-groups the network-qos policy in force makes no-drop: {} when a whole config states none (the default
        # pauses nothing); a stated policy that cannot be read stays None.
        stated = ("network-qos", None) in system
        groups = dict(NXOS_DEFAULTS["no_drop"]) if not stated and complete else no_drop
        lossless = sorted(groups) if groups is not None else None
        # PFC runs per CoS: the pfc-cos values of the no-drop classes, which pause frames name; the qos-group is only
        # the buffer whose fill sends them (show queuing interface: PFC_COS -> QOS_Group)
        pfc_cos = sorted(set(c for coses in groups.values() for c in coses)) if groups is not None else None
        settings["pfc_mode"] = mode if mode is not None else (NXOS_DEFAULTS["pfc_mode"] if complete else None)
        if mode is None and not complete:
            # a part of the running-config that leaves the mode out states nothing: whether PFC runs (on, or auto
            # and negotiated) is unread, never the default's
            settings["why_unknown"] = dict(settings.get("why_unknown") or {}, pfc_mode=(
                "interface %s: %s, which does not state its priority-flow-control mode (in a whole running-config "
                "its absence means auto)" % (name, partial_reason(text))))
        if mode == "off":
            settings["pfc"] = []
        elif mode not in (None, "auto", "on"):
            problems.append("interface %s: unknown priority-flow-control mode %s" % (name, mode))
            settings["pfc_mode"] = None
        elif pfc_cos is not None:
            # on: PFC on the pfc-cos values; auto (the default): the same once DCBX negotiates it with the peer,
            # which the check judges against the host's DCBX (pfc_mode)
            settings["pfc"] = list(pfc_cos)
        # the buffer stage: qos-group N is priority group N, no-drop groups are lossless, and the pauses of a CoS are
        # sent by the qos-group of the class whose pfc-cos names it
        settings["priority_to_pg"] = dict((n, n) for n in range(8))
        if lossless is not None:
            settings["buffer_lossless_pg"] = list(lossless)
            settings["pfc_to_pg"] = dict((cos, group) for group, coses in groups.items() for cos in coses)
            # a pause frame received for CoS c stops the queue of the no-drop class that names c (queue N =
            # qos-group N); a CoS no class names has no PFC, so no entry
            settings["pfc_to_queue"] = dict(settings["pfc_to_pg"])
        if settings["pfc"] is not None and not settings["pfc"]:
            settings["pfc_watchdog"] = []  # no lossless priority to watch
        elif settings["pfc"] is not None:
            state = watchdog if watchdog is not None else watchdog_global
            if state is True:
                settings["pfc_watchdog"] = list(settings["pfc"])
            elif state is False:
                settings["pfc_watchdog"] = []
        ports[name] = settings
    # no PFC direction on this NOS (module docstring): pfc_both_ways; pfc_to_queue is the pfc-cos stage above
    ordered = dict((name, pfc_both_ways(ports[name])) for name in sorted(ports, key=sort_key))
    return new_facts("nxos", ordered, unique(problems))
