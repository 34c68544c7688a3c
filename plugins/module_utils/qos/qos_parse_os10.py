# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Dell OS10 running-config QoS -> QoS facts (format ``"os10"``), one entry per Ethernet port
(``ethernet1/1/1``; ``interface range`` blocks are expanded, later blocks override earlier ones).

What is read:

* ``trust dscp-map M`` / ``qos-group N dscp ..`` and ``trust dot1p-map M`` / ``qos-group N dot1p
  ..``: classification into the traffic class (qos-group), which is the **priority**; its PFC
  priority is the CoS named by ``pfc-cos``;
* ``qos-map traffic-class M`` / ``queue Q qos-group ..``: traffic class -> **queue**;
* ``class-map type network-qos C`` / ``match qos-group N``, ``policy-map type network-qos P`` /
  ``class C`` / ``pause`` / ``pfc-cos N``;
* ``class-map type queuing C`` / ``match queue Q``, ``policy-map type queuing P`` / ``class C`` /
  ``bandwidth percent W`` / ``priority`` / ``random-detect W`` (a WRED profile name);
* ``wred W`` / ``random-detect color green minimum-threshold A maximum-threshold B
  drop-probability P`` / ``random-detect ecn`` (thresholds in KB, 1 KB = 1024 bytes, ``ecn_unit`` 1024; ECN is
  enabled when the profile says ``random-detect ecn``);
* ``system qos`` and per interface: ``trust-map dscp M|default``, ``trust-map dot1p M|default``,
  ``qos-map traffic-class M``, ``service-policy input type network-qos P``, ``service-policy
  output type queuing P`` (interface settings override the system ones), and per interface
  ``priority-flow-control mode on|off``, ``mtu N``.

Vendor defaults used when the config is silent (Dell OS10 user guide, "Quality of service"):

* no trust map: OS10 does not classify data traffic, everything is traffic class 0, so
  ``trust`` is ``"none"`` and ``dscp_to_priority`` maps every DSCP to 0 (see below);
* ``trust-map dscp default``: DSCP d -> traffic class d // 8 (the default DSCP trust map);
  a user DSCP map sends every DSCP it does not list to traffic class 0 (as the guide says of
  dot1p maps), so ``dscp_to_priority`` always holds all 64 DSCPs when DSCP is trusted;
* ``priority_to_queue``: traffic class n -> queue n unless a ``qos-map traffic-class`` says
  otherwise;
* ``pfc``: PFC is off unless ``priority-flow-control mode on`` (``pfc_mode`` ``on`` / ``off``); then the
  **CoS values** of ``pfc-cos`` of the ``pause`` classes of the port's network-qos policy (none: ``[]``; a pause
  class without ``match qos-group`` or an undefined policy: ``None``): PFC runs, and pause frames are named, per CoS.
  Silence gives ``[]`` (see below). The traffic classes (qos-groups) the pause classes match are the lossless
  buffers, through the priority group stage: ``priority_to_pg`` = identity, ``buffer_lossless_pg`` = those traffic
  classes (OS10 reserves lossless buffers for them on PFC ports), ``pfc_to_pg`` = ``{cos: traffic class of the pause
  class naming it}``; ``pfc_to_queue`` = ``{cos: queue of that traffic class}`` for the pfc-cos values only.
  ``buffer_lossless`` stays ``None``. OS10 classifies by trust maps here; a ``class-map type qos`` /
  ``service-policy input type qos`` classification is not read.

Stages OS10 does not have (:func:`qos_facts.pfc_both_ways`): ``priority-flow-control`` and the no-drop class name
no direction, so ``pfc_rx`` = ``pfc_tx`` = ``pfc``.

**Defaults by omission** (:data:`OS10_DEFAULTS`; sources in ``docs/lossless-qos.md``): OS10 prints no
``Command:`` header, so every running-config is read as whole and what it leaves out is the default:
no trust map: ``dscp_to_priority`` all 64 DSCPs on traffic class 0; no ``priority-flow-control mode``:
``pfc`` and ``buffer_lossless_pg`` ``[]``; a queue without a WRED profile that says ``random-detect ecn``:
ECN off; no ``mtu``: 1532 bytes. Not filled (no documentation found): the scheduling of queues no
queuing policy states (``ets``), the PFC watchdog of PFC ports.

``ets`` is read from the queuing policy whether or not ``ets mode on`` is set. Problems: any trust
map, qos-map, policy-map, class-map or WRED profile referenced but never defined, and unreadable
values.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import (
    ECN_OFF, ecn_off_elsewhere, ecn_units, int_list, new_facts, new_settings, pfc_both_ways, unique)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse_cli import (
    block_problem, dscp_list, find_blocks, interface_lines, partial_reason, sort_key, split_blocks, starts,
    threshold_unit, to_bytes, guarded_parse)

OS10_DEFAULT_DSCP_TO_TC = dict((dscp, dscp // 8) for dscp in range(64))

# Defaults by omission of a whole OS10 running-config (docs/lossless-qos.md, "Defaults by omission").
OS10_DEFAULTS = {
    # "By default, OS10 does not classify data traffic. OS10 assigns the default traffic class ID 0 to all data
    # traffic." (Dell OS10 User Guide, Quality of service, Ingress traffic classification;
    # https://www.manualshelf.com/manual/dell/powerswitch-s4112f-on-s4112t-on/2-1-users-guide-english/page-1181.html)
    "trust": "none",
    "traffic_class": 0,
    # "PFC and 802.3x link-level flow control (LLFC) are disabled by default on an interface" and "By default, all
    # ingress traffic is handled by the lossy ingress buffer" (OS10 Reference Guide, PFC configuration notes;
    # https://www.manualshelf.com/manual/dell/powerswitch-s4112f-on-s4112t-on/1-reference-guide-english/page-622.html)
    "pfc": [],
    "buffer_lossless": [],
    # "random-detect (queue) ... Default Not configured", "random-detect ecn ... Default Not configured" (OS10 QoS
    # commands; https://www.manualshelf.com/manual/dell/emc-networking-mx9116n/1-api-guide-english/page-1245.html)
    "ecn": ECN_OFF,
    # "mtu ... Sets the link maximum transmission unit (MTU) frame size ... Default 1532 bytes" (OS10 User Guide,
    # https://www.manualshelf.com/manual/dell/powerswitch-s4048-on/1-users-guide-english/page-297.html)
    "mtu": 1532,
}


class _Config(object):
    def __init__(self, blocks, problems):
        self.problems = problems
        self.dscp_maps, self.dot1p_maps, self.tc_maps = {}, {}, {}
        self.class_nq, self.class_queue = {}, {}
        self.policy_nq, self.policy_queue, self.wred = {}, {}, {}
        self.unreadable_ecn = {}  # queuing policy -> queues whose WRED profile is referenced but not defined
        for block in blocks:
            words = block.words
            low = [w.lower() for w in words]
            try:
                if low[:2] == ["trust", "dscp-map"] and len(low) == 3:
                    self.dscp_maps[words[2]] = self._groups(block, "dscp")
                elif low[:2] == ["trust", "dot1p-map"] and len(low) == 3:
                    self.dot1p_maps[words[2]] = self._groups(block, "dot1p")
                elif low[:2] == ["qos-map", "traffic-class"] and len(low) == 3:
                    self.tc_maps[words[2]] = self._queues(block)
                elif low[:3] == ["class-map", "type", "network-qos"] and len(low) >= 4:
                    self.class_nq[words[-1]] = self._match(block, "qos-group")
                elif low[:3] == ["class-map", "type", "queuing"] and len(low) >= 4:
                    self.class_queue[words[-1]] = self._match(block, "queue")
                elif low[:3] == ["policy-map", "type", "network-qos"] and len(low) == 4:
                    self.policy_nq[words[3]] = self._classes(block)
                elif low[:3] == ["policy-map", "type", "queuing"] and len(low) == 4:
                    self.policy_queue[words[3]] = self._classes(block)
                elif low[:1] == ["wred"] and len(low) == 2:
                    self.wred[words[1]] = self._wred(block)
            except (ValueError, IndexError):
                problems.append(block_problem(block, "cannot read"))

    def _groups(self, block, kind):
        """``qos-group 3 dscp 24-31`` lines -> {value: group}."""
        out = {}
        for child in block.children:
            cw = child.words
            try:
                if starts(cw, "qos-group") and len(cw) >= 4 and cw[2].lower() == kind:
                    group = int(cw[1])
                    values = dscp_list(cw[3:]) if kind == "dscp" else int_list(" ".join(cw[3:]))
                    if group > 7 or (kind == "dot1p" and any(v > 7 for v in values)):
                        raise ValueError("out of range")
                    for value in values:
                        out[value] = group
            except ValueError:
                self.problems.append(block_problem(child, "cannot read %s map entry" % kind))
        return out

    def _queues(self, block):
        out = {}
        for child in block.children:
            cw = child.words
            try:
                if starts(cw, "queue") and len(cw) >= 4 and cw[2].lower() == "qos-group":
                    for group in int_list(" ".join(cw[3:])):
                        out[group] = int(cw[1])
            except ValueError:
                self.problems.append(block_problem(child, "cannot read qos-map entry"))
        return out

    def _match(self, block, kind):
        values = []
        for child in block.children:
            cw = child.words
            if starts(cw, "match", kind):
                try:
                    values += int_list(" ".join(cw[2:]))
                except ValueError:
                    self.problems.append(block_problem(child, "cannot read match"))
        return {"values": sorted(set(values)), "line": block.lineno}

    def _classes(self, block):
        classes = []
        for child in block.children:
            cw = child.words
            if starts(cw, "class") and len(cw) >= 2:
                classes.append((cw[-1], child))
        return {"classes": classes, "line": block.lineno}

    def _wred(self, block):
        out = {"enabled": False, "min_bytes": None, "max_bytes": None, "probability": None}
        for child in block.children:
            cw = child.words
            low = [w.lower() for w in cw]
            try:
                if low == ["random-detect", "ecn"]:
                    out["enabled"] = True
                elif low[:3] == ["random-detect", "color", "green"]:
                    if "minimum-threshold" in low:
                        out["min_bytes"] = to_bytes(cw[low.index("minimum-threshold") + 1], "kbytes")
                        out["min_unit"] = threshold_unit("kbytes")
                    if "maximum-threshold" in low:
                        out["max_bytes"] = to_bytes(cw[low.index("maximum-threshold") + 1], "kbytes")
                        out["max_unit"] = threshold_unit("kbytes")
                    if "drop-probability" in low:
                        out["probability"] = int(cw[low.index("drop-probability") + 1])
            except (ValueError, IndexError):
                self.problems.append(block_problem(child, "cannot read WRED setting"))
        return out

    # --- references ---------------------------------------------------------------------------
    def _missing(self, what, name, where):
        self.problems.append("%s %s (%s) is referenced but not defined" % (what, name, where))

    def no_drop(self, name, where):
        """``{traffic class: sorted pfc-cos}`` of the ``pause`` classes of network-qos policy ``name``: ``pause`` makes
        the qos-group its class-map matches lossless, and ``pfc-cos`` names the CoS of its pause frames. None when the
        policy is undefined or a pause class matches no qos-group (which traffic is lossless is then not known)."""
        policy = self.policy_nq.get(name)
        if policy is None:
            self._missing("policy-map type network-qos", name, where)
            return None
        out, unknown = {}, False
        for cname, block in policy["classes"]:
            cmap = self.class_nq.get(cname)
            if cmap is None and cname.lower() != "class-default":
                self._missing("class-map type network-qos", cname, "policy-map %s, line %d" % (name, block.lineno))
            low = [" ".join(c.words).lower() for c in block.children]
            if not any(line == "pause" or line.startswith("pause ") for line in low):
                continue
            cos = set()
            for child in block.children:
                if starts(child.words, "pfc-cos"):
                    try:
                        values = int_list(" ".join(child.words[1:]))
                        if any(v > 7 for v in values):
                            raise ValueError("out of range")
                        cos.update(values)
                    except ValueError:
                        self.problems.append(block_problem(child, "cannot read pfc-cos"))
            if not cmap or not cmap["values"]:
                unknown = True
                continue
            for group in cmap["values"]:
                out.setdefault(group, set()).update(cos)
        return None if unknown else dict((g, sorted(c)) for g, c in sorted(out.items()))

    def queuing(self, name, where):
        policy = self.policy_queue.get(name)
        if policy is None:
            self._missing("policy-map type queuing", name, where)
            return None, None
        ecn, ets, self.unreadable_ecn[name] = {}, {}, set()
        for cname, block in policy["classes"]:
            cmap = self.class_queue.get(cname)
            if cmap is None:
                self._missing("class-map type queuing", cname, "policy-map %s, line %d" % (name, block.lineno))
                continue
            for queue in cmap["values"]:
                for child in block.children:
                    cw = child.words
                    low = [w.lower() for w in cw]
                    try:
                        if low[:1] == ["priority"]:
                            ets[queue] = {"mode": "strict", "weight": (ets.get(queue) or {}).get("weight")}
                        elif low[:2] == ["bandwidth", "percent"]:
                            mode = (ets.get(queue) or {}).get("mode") or "ets"
                            ets[queue] = {"mode": mode, "weight": int(cw[2])}
                        elif low[:1] == ["random-detect"] and len(cw) == 2:
                            profile = self.wred.get(cw[1])
                            if profile is None:
                                self._missing("wred profile", cw[1], "policy-map %s, line %d" % (name, child.lineno))
                                self.unreadable_ecn[name].add(queue)
                            else:
                                ecn[queue] = dict(profile)
                    except (ValueError, IndexError):
                        self.problems.append(block_problem(child, "cannot read queuing setting"))
        return ecn, ets


def _read_scope(lines, scope, where_fmt):
    """Update ``scope`` (a dict of QoS references) from ``system qos`` / interface lines."""
    for block in lines:
        words = block.words
        low = [w.lower() for w in words]
        where = where_fmt % block.lineno
        if low[:1] == ["trust-map"] and len(low) == 3 and low[1] in ("dscp", "dot1p"):
            scope["trust_" + low[1]] = (words[2], where)
        elif low[:2] == ["qos-map", "traffic-class"] and len(low) == 3:
            scope["tc_map"] = (words[2], where)
        elif low[:1] == ["service-policy"] and len(low) == 5 and low[2] == "type":
            scope[low[1] + "_" + low[3]] = (words[4], where)
        elif low[:2] == ["priority-flow-control", "mode"] and len(low) >= 3:
            scope["pfc_mode"] = low[2]
        elif low[:1] == ["mtu"] and len(low) == 2:
            scope["mtu"] = (words[1], where)


def parse_os10(text):
    """QoS facts (format ``"os10"``) of an OS10 running-config ``text``; never raises."""
    return guarded_parse("os10", text, _parse)


def _parse(text, problems):
    blocks = split_blocks(text)
    complete = partial_reason(text) is None
    config = _Config(blocks, problems)
    system = {}
    for block in find_blocks(blocks, "system", "qos"):
        _read_scope(block.children, system, "system qos, line %d")
    cache = {}

    def lookup(kind, ref):
        key = (kind,) + ref
        if key in cache:
            return cache[key]
        name, where = ref
        if kind == "nq":
            value = config.no_drop(name, where)
        elif kind == "queuing":
            value = config.queuing(name, where)
        else:
            table = {"trust_dscp": config.dscp_maps, "trust_dot1p": config.dot1p_maps, "tc_map": config.tc_maps}[kind]
            value = table.get(name)
            if value is None and not (kind.startswith("trust") and name.lower() == "default"):
                config._missing({"trust_dscp": "trust dscp-map", "trust_dot1p": "trust dot1p-map",
                                 "tc_map": "qos-map traffic-class"}[kind], name, where)
        cache[key] = value
        return value

    for key, kind in (("input_network-qos", "nq"), ("output_queuing", "queuing"), ("trust_dscp", "trust_dscp"),
                      ("trust_dot1p", "trust_dot1p"), ("tc_map", "tc_map")):
        if key in system:
            lookup(kind, system[key])

    ports = {}
    for name, lines in interface_lines(blocks, "os10", problems).items():
        scope = dict(system)
        scope.pop("pfc_mode", None)
        scope.pop("mtu", None)
        _read_scope(lines, scope, "interface config line %d")
        settings = new_settings()
        if "mtu" in scope:
            try:
                settings["mtu"] = int(scope["mtu"][0])
            except ValueError:
                problems.append("%s: cannot read mtu %r (%s)" % (name, scope["mtu"][0], scope["mtu"][1]))
        elif complete:
            settings["mtu"] = OS10_DEFAULTS["mtu"]
        dscp_ref, dot1p_ref = scope.get("trust_dscp"), scope.get("trust_dot1p")
        if dscp_ref is not None:
            mapped = lookup("trust_dscp", dscp_ref)
            if dscp_ref[0].lower() == "default" and mapped is None:
                settings["dscp_to_priority"] = dict(OS10_DEFAULT_DSCP_TO_TC)
            elif mapped is not None:
                table = dict((d, 0) for d in range(64))
                table.update(mapped)
                settings["dscp_to_priority"] = table
        elif dot1p_ref is None and complete:
            settings["dscp_to_priority"] = dict.fromkeys(range(64), OS10_DEFAULTS["traffic_class"])
        if dot1p_ref is not None:
            lookup("trust_dot1p", dot1p_ref)
        settings["trust"] = {(True, False): "dscp", (False, True): "pcp", (True, True): "pcp,dscp",
                             (False, False): "none"}[(dscp_ref is not None, dot1p_ref is not None)]
        queues = dict((n, n) for n in range(8))
        if "tc_map" in scope:
            queues.update(lookup("tc_map", scope["tc_map"]) or {})
        settings["priority_to_queue"] = queues
        ecn, unreadable = None, set()
        if "output_queuing" in scope:
            ecn, ets = lookup("queuing", scope["output_queuing"])
            settings["ecn"] = dict((q, dict(v)) for q, v in ecn.items()) if ecn else None
            settings["ets"] = dict((q, dict(v)) for q, v in ets.items()) if ets else None
            unreadable = config.unreadable_ecn.get(scope["output_queuing"][0], set())
        if complete and not unreadable and (ecn is not None or "output_queuing" not in scope):
            # (a queue whose WRED profile cannot be read keeps the table as stated: the check would read it as off)
            settings["ecn"] = ecn_off_elsewhere(ecn)
        ecn_units(settings)
        mode = scope.get("pfc_mode")
        settings["pfc_mode"] = mode if mode in ("on", "off") else ("off" if mode is None and complete else None)
        if mode == "on":
            # PFC and lossless buffers on the traffic classes the no-drop classes match (not their pfc-cos values)
            groups = lookup("nq", scope["input_network-qos"]) if "input_network-qos" in scope else {}
            if groups is not None:
                # PFC runs on the pfc-cos values the pause frames name; the traffic class (qos-group) of the pause
                # class is the lossless buffer whose fill sends them (traffic class N = priority group N)
                settings["pfc"] = sorted(set(c for coses in groups.values() for c in coses))
                settings["buffer_lossless_pg"] = sorted(groups)
                settings["pfc_to_pg"] = dict((cos, group) for group, coses in groups.items() for cos in coses)
                # a pause for CoS c stops the queue of the traffic class whose pause class names c
                settings["pfc_to_queue"] = dict((cos, queues.get(group, group)) for cos, group in
                                                settings["pfc_to_pg"].items())
        elif mode == "off":
            settings["pfc"] = []
        elif mode is not None:
            problems.append("%s: unknown priority-flow-control mode %s" % (name, mode))
        elif complete:
            settings["pfc"] = list(OS10_DEFAULTS["pfc"])
        settings["priority_to_pg"] = dict((n, n) for n in range(8))
        if complete and mode in (None, "off"):
            settings["buffer_lossless_pg"] = list(OS10_DEFAULTS["buffer_lossless"])
        if settings["pfc"] is not None and not settings["pfc"]:
            settings["pfc_watchdog"] = []  # no lossless priority to watch
        if mode != "on" and "input_network-qos" in scope:
            lookup("nq", scope["input_network-qos"])
        ports[name] = settings
    # no PFC direction on this NOS (module docstring): pfc_both_ways; pfc_to_queue is the pfc-cos stage above
    ordered = dict((name, pfc_both_ways(ports[name])) for name in sorted(ports, key=sort_key))
    return new_facts("os10", ordered, unique(problems))
