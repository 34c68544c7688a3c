# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cumulus Linux 5.x NVUE QoS -> QoS facts: ``nv config show`` YAML (format ``"nvue"``) and the text of
``nv show qos roce`` (format ``"nvue_roce"``).

``parse_nvue(text)`` reads the YAML list of ``- header:`` / ``- set:`` documents (a bare mapping, or
one with a ``set`` key, is accepted too). YAML is imported lazily, so this module imports without
PyYAML. What is read (the **priority** is the Cumulus switch-priority, the **queue** its traffic class):

* ``qos roce enable``/``mode`` (``lossless``, ``lossless-single-ipool``, ``lossy``, ``lossy-multi-tc``);
* ``qos mapping <profile>``: ``trust`` (``l2``/``pcp`` -> ``"pcp"``, ``l3``/``dscp`` -> ``"dscp"``,
  ``both`` -> ``"pcp,dscp"``) and ``dscp <d> switch-priority <sp>``;
* ``qos egress-queue-mapping <profile> switch-priority <sp> traffic-class <tc>``;
* ``qos pfc <profile> switch-priority`` (``3`` or ``3,4``) and its ``rx`` / ``tx`` (``enable``/``disable``):
  ``rx disable`` makes the port ignore the pause frames it receives (``pfc_rx`` ``[]``), ``tx disable`` stops
  it sending any (``pfc_tx`` ``[]``); either breaks lossless for the profile's priorities (Cumulus Linux user
  guide, Quality of Service, "Priority Flow Control": "Enables sending pause frames and disables receiving
  pause frames" for ``tx enable`` / ``rx disable``; NVUE reference ``nv set qos pfc <profile-id> rx``: "Turns
  receiving PFC frames on and off"). A profile that states neither, and ``qos roce``, send and honour pauses
  on every PFC priority (``pfc_rx`` = ``pfc_tx`` = ``pfc``);
* ``qos congestion-control <profile> traffic-class <tc>``: ``ecn`` (enable/disable), ``min-threshold``,
  ``max-threshold`` (bytes), ``probability``;
* ``qos egress-scheduler <profile> traffic-class <tc>``: ``mode strict`` or ``mode dwrr`` with
  ``bw-percent``;
* ``qos traffic-pool <name>``: the ``switch-priority`` of a pool whose name or ``mode`` says
  ``lossless`` -> ``buffer_lossless``;
* no PFC priority -> queue map: a pause stops the egress queue of its switch-priority (``pfc_to_queue`` =
  ``priority_to_queue``); no priority-group stage: lossless buffers are per switch-priority (``buffer_lossless``);
* per ``swpN`` interface (ranges ``swp1-32`` and lists ``swp1-4,swp10`` are expanded): ``link mtu``,
  ``qos <feature> profile <name>`` (the named profile replaces ``default-global`` for that feature)
  and ``qos pfc-watchdog`` (watchdog on the port's PFC priorities; ``[]`` on the other ports).

The ``default-global`` profiles apply to every port unless the interface references another profile;
a referenced profile that is not defined is a problem. Without any ``swp`` interface the global
settings are reported for one port keyed ``""``.

Vendor defaults: when ``qos roce`` is enabled (``enable on``, or a ``roce`` block without
``enable off``), Cumulus applies its documented RoCE configuration (NVIDIA Cumulus Linux user guide,
"RDMA over Converged Ethernet - RoCE", table "Default RoCE Configuration", and the ``nv show qos roce``
output there), which this parser starts from before the config's own settings override it:

* ``trust`` ``"pcp,dscp"``; ``dscp_to_priority`` DSCP d -> switch-priority d // 8 (so DSCP 26 -> 3 and
  the CNP DSCP 48 -> 6);
* ``priority_to_queue``: switch-priority 3 -> TC 3 (RoCE), 6 -> TC 6 (CNP), the others -> TC 0;
* ``ets``: TC 6 strict, TC 3 and TC 0 DWRR 50 %;
* ``ecn``: TC 0 and TC 3, min 150000 bytes, max 1500000 bytes, probability 100;
* lossless modes only: ``pfc`` ``[3]`` and ``buffer_lossless`` ``[3]`` (the RoCE lossless pool);
  lossy modes: ``pfc`` ``[]``, ``buffer_lossless`` ``[]``.

**Defaults by omission** (:data:`NVUE_DEFAULTS`; sources in ``docs/lossless-qos.md``): ``nv config show``
prints the whole applied configuration, a ``header`` document first, and leaves out what is at its
default. For such a source (a YAML with the ``header`` document) the parser starts every port from the
defaults Cumulus ships (``qos_features.conf`` as the QoS page's "Default Configuration Files" print it,
``ifupdown2``'s MTU): ``trust`` ``"pcp"``, ``dscp_to_priority`` DSCP d -> d // 8 (the table that applies
when DSCP is trusted), switch-priority n -> TC n, ``pfc`` ``[]``, ECN on TC 0 only (150000 / 1500000
bytes, probability 100), DWRR 12/13 % on every TC, no PFC watchdog, MTU 9216; the RoCE defaults above
replace them when ``qos roce`` is on. A ``congestion-control`` or ``egress-scheduler`` profile replaces
the default ECN / scheduler (Cumulus: a TC the profile does not name has no ECN, DWRR 0), the other
features overlay the defaults. Not filled (no documentation found): ``buffer_lossless`` of PFC ports
without a lossless traffic pool. A ``set`` body without the header (what this collection renders and
PATCHes onto a switch) or a bare mapping cannot tell what it omits: without RoCE, fields it does not
state stay ``None``, and ``pfc_watchdog`` is ``None`` unless some interface configures ``qos
pfc-watchdog``. A profile referenced but not defined leaves its fields ``None``. Invalid YAML gives a
problem, never an exception.

``parse_nvue_roce(text)`` reads ``nv show qos roce`` (and the per-interface ``nv show interface <if>
qos roce status``): the ``operational`` / ``applied`` rows (``mode``, ``pfc-priority``,
``congestion-control`` ``enabled-tc`` / ``min-threshold`` / ``max-threshold`` / ``probability``,
``trust-mode``), the "RoCE PCP/DSCP->SP mapping configurations" table (``dscp_to_priority``), the
"RoCE SP->TC mapping and ETS configurations" table (``priority_to_queue`` and ``ets``) and the
"RoCE pool config" table (the switch-priorities of ``roce-reserved-ingress`` / lossless ingress pools
-> ``buffer_lossless``; with ``lossless-single-ipool`` and no such pool, the PFC priorities). The
operational value is used when shown, else the applied one. Sizes printed as ``146.48 KB`` /
``1.43 MB`` are converted with 1024 multiples, so they are only as exact as the print (149996, not
150000): ``ecn_unit`` carries what the last printed digit is worth (10.24 bytes for ``146.48 KB``), and the
check accepts a profile value within half of it. ``pfc`` ``rx-enabled`` / ``tx-enabled`` (``enabled`` /
``disabled``) give ``pfc_rx`` / ``pfc_tx`` (``pfc`` or ``[]``); an output without those rows leaves them ``None``.
One port keyed ``""`` (the switch).
"""

from __future__ import annotations

import copy
import re

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import (
    ECN_OFF, QUEUES, ecn_off_elsewhere, new_facts, new_settings, pause_stops_own_queue, pfc_both_ways, to_int,
    to_int_list, unique,
)

FORMAT = "nvue"
FORMAT_ROCE = "nvue_roce"
DEFAULT_PROFILE = "default-global"
_TRUST = {"l2": "pcp", "pcp": "pcp", "l3": "dscp", "dscp": "dscp", "both": "pcp,dscp", "pcp,dscp": "pcp,dscp",
          "port": "none", "none": "none"}
_FEATURES = ("mapping", "egress-queue-mapping", "pfc", "congestion-control", "egress-scheduler")
_ROCE_ECN = {"enabled": True, "min_bytes": 150000, "max_bytes": 1500000, "probability": 100}
_FEATURE_FIELDS = {"mapping": ("trust", "dscp_to_priority"), "egress-queue-mapping": ("priority_to_queue",),
                   "pfc": ("pfc", "pfc_rx", "pfc_tx"), "congestion-control": ("ecn",), "egress-scheduler": ("ets",)}

# Defaults by omission of `nv config show` without `qos roce` (docs/lossless-qos.md, "Defaults by omission"). Source:
# the Cumulus Linux 5.14 user guide, Quality of Service, "Default Configuration Files" (qos_features.conf as shipped;
# https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-514/Layer-1-and-Switch-Ports/Quality-of-Service/).
NVUE_DEFAULTS = {
    "trust": "pcp",                                              # traffic.packet_priority_source_set = [802.1p]
    "dscp_to_priority": dict((d, d // 8) for d in range(64)),    # the "Trust DSCP" table: DSCP 0-7 -> SP 0, ...
    "priority_to_queue": dict((sp, sp) for sp in QUEUES),        # "switch priority values map directly to ... queue"
    "pfc": [],                                                   # pfc.port_group_list is commented out
    # "The default profile (default-global) enables ECN by default on egress queue 0" (150000 / 1500000 bytes,
    # default_ecn_red_conf.probability = 100); every other TC: no ECN.
    "ecn": dict((tc, dict(_ROCE_ECN) if tc == 0 else dict(ECN_OFF)) for tc in QUEUES),
    # "the bandwidth allocated to egress queues 0,2,4,6 is 12 percent and ... 1,3,5,7 is 13 percent" (DWRR).
    "ets": dict((tc, {"mode": "ets", "weight": 12 if tc % 2 == 0 else 13}) for tc in QUEUES),
    "pfc_watchdog": [],                                          # pfc_watchdog.port_group_list is commented out
    # "In Cumulus Linux, ifupdown2 assigns 9216 as the default MTU setting." (Switch Port Attributes, MTU;
    # .../cumulus-linux-514/Layer-1-and-Switch-Ports/Interface-Configuration-and-Management/Switch-Port-Attributes/)
    "mtu": 9216,
}
# Features whose default-global profile a configured profile replaces rather than overlays (a TC the profile does
# not name: no ECN, "a DWRR value of 0 (no egress scheduling)"; same QoS page, ECN and Egress Scheduler).
_REPLACED = ("congestion-control", "egress-scheduler")
_UNITS = {"b": 1, "byte": 1, "bytes": 1, "kb": 1024, "mb": 1024 ** 2, "gb": 1024 ** 3}


def _on(value):
    if value is True:
        return True
    return str(value).strip().lower() in ("on", "true", "enable", "enabled", "yes")


def _off(value):
    if value is False:
        return True
    return str(value).strip().lower() in ("off", "false", "disable", "disabled", "no")


def _ints(value, where, problems):
    return to_int_list(value, where, problems, "a list of priorities")


def _keyed_ints(table, entries, field, where, problems):
    """``table`` updated from NVUE entries ``{"24-26": {field: 3}}`` (keys expanded, values ints)."""
    table = dict(table or {})
    for key, entry in _dict(entries).items():
        value = to_int(_dict(entry).get(field), "%s %s" % (where, key), problems)
        for index in _ints(key, where, problems):
            if value is not None:
                table[index] = value
    return table


def _dict(value):
    return value if isinstance(value, dict) else {}


def _merge(base, extra):
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def nvue_config(text, problems, headers=None):
    """The merged ``set`` mapping of an ``nv config show`` YAML (``None`` when unreadable); the ``header``
    documents go to ``headers`` when a list is given (``nv config show`` prints one; a ``set`` body has none)."""
    if isinstance(text, dict) or isinstance(text, list):
        docs = text
    else:
        import yaml  # lazily: module_utils must import without PyYAML
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        try:
            docs = yaml.safe_load(text or "")
        except yaml.YAMLError as exc:
            problems.append("nvue: invalid YAML: %s" % str(exc).replace("\n", " "))
            return None
    if docs is None:
        problems.append("nvue: no configuration given")
        return None
    if isinstance(docs, dict):
        docs = [docs]
    if not isinstance(docs, list):
        problems.append("nvue: the YAML is a %s, not a list of header/set documents" % type(docs).__name__)
        return None
    out = {}
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        if "header" in doc and headers is not None:
            headers.append(doc.get("header"))
        if "set" in doc:
            _merge(out, _dict(doc.get("set")))
        elif "header" not in doc:
            _merge(out, doc)
    return out


# No switch has more ports than this in one range (the CLI parsers' bound, qos_parse_cli.expand_interfaces).
MAX_RANGE = 4096


def expand_interfaces(name):
    """``"swp1-4,swp10"`` -> ``["swp1", "swp2", "swp3", "swp4", "swp10"]`` (``swp1s0-3`` too); ValueError for
    a range of more than :data:`MAX_RANGE` ports."""
    out = []
    for item in str(name).split(","):
        item = item.strip()
        match = re.match(r"^(.*?)(\d+)-(\d+)$", item)
        if match and match.group(1):
            low, high = int(match.group(2)), int(match.group(3))
            if high - low > MAX_RANGE:
                raise ValueError("interface range %r is too large" % item)
            out.extend("%s%d" % (match.group(1), n) for n in range(low, high + 1))
        elif item:
            out.append(item)
    return out


def _roce_defaults(mode):
    lossless = str(mode or "lossless").startswith("lossless")
    return {
        "trust": "pcp,dscp",
        "dscp_to_priority": dict((d, d // 8) for d in range(64)),
        "priority_to_queue": dict((sp, sp if sp in (3, 6) else 0) for sp in range(8)),
        "ets": {0: {"mode": "ets", "weight": 50}, 3: {"mode": "ets", "weight": 50},
                6: {"mode": "strict", "weight": None}},
        "ecn": {0: dict(_ROCE_ECN), 3: dict(_ROCE_ECN)},
        "pfc": [3] if lossless else [],
        "buffer_lossless": [3] if lossless else [],
    }


def _apply_profile(s, feature, prof, where, problems):
    """Overlay one ``qos <feature> <profile>`` mapping onto settings ``s``."""
    if feature == "mapping":
        if prof.get("trust") is not None:
            trust = _TRUST.get(str(prof.get("trust")).strip().lower())
            if trust is None:
                problems.append("%s: unknown trust %r" % (where, prof.get("trust")))
            else:
                s["trust"] = trust
        dscp = _dict(prof.get("dscp"))
        if dscp:
            s["dscp_to_priority"] = _keyed_ints(s["dscp_to_priority"], dscp, "switch-priority", "%s dscp" % where,
                                                problems)
    elif feature == "egress-queue-mapping":
        s["priority_to_queue"] = _keyed_ints(s["priority_to_queue"], prof.get("switch-priority"), "traffic-class",
                                             "%s switch-priority" % where, problems)
    elif feature == "pfc":
        if "switch-priority" in prof:
            sps = prof.get("switch-priority")
            if isinstance(sps, dict):
                sps = list(sps)
            s["pfc"] = _ints(sps, "%s switch-priority" % where, problems)
        for field, key in (("pfc_rx", "rx"), ("pfc_tx", "tx")):
            if key in prof:
                if _off(prof.get(key)):
                    s[field] = []
                elif _on(prof.get(key)):
                    s[field] = list(s["pfc"]) if s["pfc"] is not None else None
                else:
                    problems.append("%s %s: %r is neither enable nor disable" % (where, key, prof.get(key)))
    elif feature == "congestion-control":
        table = dict(s["ecn"] or {})
        for key, entry in _dict(prof.get("traffic-class")).items():
            entry = _dict(entry)
            here = "%s traffic-class %s" % (where, key)
            for tc in _ints(key, here, problems):
                cur = dict(table.get(tc) or {"enabled": False, "min_bytes": None, "max_bytes": None,
                                             "probability": None})
                if "ecn" in entry:
                    cur["enabled"] = _on(entry.get("ecn"))
                for field, name in (("min_bytes", "min-threshold"), ("max_bytes", "max-threshold"),
                                    ("probability", "probability")):
                    if name in entry:
                        cur[field] = to_int(entry.get(name), "%s %s" % (here, name), problems)
                table[tc] = cur
        s["ecn"] = table
    elif feature == "egress-scheduler":
        table = dict(s["ets"] or {})
        for key, entry in _dict(prof.get("traffic-class")).items():
            entry = _dict(entry)
            here = "%s traffic-class %s" % (where, key)
            mode = str(entry.get("mode") or "").strip().lower()
            weight = to_int(entry.get("bw-percent"), here, problems)
            for tc in _ints(key, here, problems):
                if mode == "strict":
                    table[tc] = {"mode": "strict", "weight": None}
                elif mode in ("dwrr", "wrr", "ets"):
                    table[tc] = {"mode": "ets", "weight": weight}
                else:
                    table[tc] = {"mode": "vendor", "weight": weight}
        s["ets"] = table


def _lossless_pools(qos, where, problems):
    """Switch priorities of the traffic pools that ``qos`` states: ``(lossless, lossy)``, each a sorted list or None
    when no pool of that kind lists switch priorities. A pool is lossless by its mode or, without a mode, by its name
    (``roce-lossless``); every other pool that lists switch priorities (``default-lossy``) is lossy."""
    lossless, lossy = None, None
    for name, pool in _dict(qos.get("traffic-pool")).items():
        pool = _dict(pool)
        if "switch-priority" not in pool:
            continue
        sps = pool.get("switch-priority")
        found = set(_ints(list(sps) if isinstance(sps, dict) else sps, "%s traffic-pool %s" % (where, name), problems))
        mode = str(pool.get("mode") or "").lower()
        if "lossless" in mode or (not mode and "lossless" in str(name).lower()):
            lossless = sorted(set(lossless or ()) | found)
        else:
            lossy = sorted(set(lossy or ()) | found)
    return lossless, lossy


def _settings(qos, base, refs, port, problems, replaced=()):
    """Settings of ``port``: ``base`` (defaults), then the profile of each feature; the features in ``replaced``
    start from nothing when a profile applies."""
    s = new_settings()
    s.update(copy.deepcopy(base))
    for feature in _FEATURES:
        profiles = _dict(qos.get(feature))
        name = refs.get(feature) or DEFAULT_PROFILE
        if not isinstance(name, (str, int)) or isinstance(name, bool):
            problems.append("interface %s: qos %s profile %r is not a profile name" % (port, feature, name))
            for field in _FEATURE_FIELDS[feature]:
                s[field] = None  # stated but unreadable: no default stands in
            continue
        name = str(name)
        if name not in profiles:
            if name != DEFAULT_PROFILE:
                problems.append("interface %s: qos %s profile %s is not defined in qos %s"
                                % (port, feature, name, feature))
                for field in _FEATURE_FIELDS[feature]:
                    s[field] = None  # stated but unreadable: no default stands in
            continue
        if feature in replaced:
            for field in _FEATURE_FIELDS[feature]:
                s[field] = None
        _apply_profile(s, feature, _dict(profiles.get(name)), "qos %s %s" % (feature, name), problems)
    return s


def parse_nvue(text):
    """``nv config show`` YAML -> QoS facts (format ``"nvue"``); see the module docstring."""
    problems, headers = [], []
    config = nvue_config(text, problems, headers)
    if config is None:
        return new_facts(FORMAT, {}, problems)
    complete = bool(headers)
    qos = _dict(config.get("qos"))
    base = dict(NVUE_DEFAULTS) if complete else {}
    base.pop("mtu", None)
    replaced = _REPLACED if complete else ()
    if "roce" in qos:
        roce = _dict(qos.get("roce"))
        if not _off(roce.get("enable", "on")):
            base.update(_roce_defaults(roce.get("mode")))
            # A port's congestion-control or egress-scheduler profile replaces qos roce's (Cumulus Linux 5.14 QoS
            # page, "Port Groups": a port profile overrides the global settings; "Egress Scheduler": a traffic
            # class the profile leaves out gets DWRR 0), in a set body as in a whole configuration.
            replaced = _REPLACED
    lossless, lossy = _lossless_pools(qos, "qos", problems)
    if lossless is not None:
        base["buffer_lossless"] = lossless
    if lossy and base.get("buffer_lossless") is not None:
        # a switch priority sits in one pool: one that a lossy pool lists is not lossless, whatever qos roce implies
        base["buffer_lossless"] = [sp for sp in base["buffer_lossless"] if sp not in lossy]

    interfaces = {}
    for name, conf in _dict(config.get("interface")).items():
        try:
            names = expand_interfaces(name)
        except ValueError as exc:
            problems.append("interface %s: %s" % (name, exc))
            continue
        for port in names:
            if port.startswith("swp"):
                _merge(interfaces.setdefault(port, {}), _dict(conf) if conf is not None else {})
    watchdog = any("pfc-watchdog" in _dict(_dict(conf).get("qos")) for conf in interfaces.values())

    ports = {}
    for port in sorted(interfaces, key=_port_key) or [""]:
        conf = interfaces.get(port, {})
        port_qos = _dict(conf.get("qos"))
        refs = dict((feature, _dict(port_qos.get(feature)).get("profile")) for feature in _FEATURES)
        s = _settings(qos, base, refs, port, problems, replaced)
        mtu = _dict(conf.get("link")).get("mtu")
        if mtu is not None:
            s["mtu"] = to_int(mtu, "interface %s link mtu" % port, problems)
        elif complete:
            s["mtu"] = NVUE_DEFAULTS["mtu"]
        if complete and s["ecn"] is not None:
            s["ecn"] = ecn_off_elsewhere(s["ecn"])
        if s["ecn"] is not None:  # NVUE's thresholds are bytes
            s["ecn_unit"] = dict((tc, {"min_bytes": 1, "max_bytes": 1}) for tc in s["ecn"])
        if watchdog or complete:
            s["pfc_watchdog"] = list(s["pfc"] or []) if _watchdog_on(port_qos) else []
        pfc_both_ways(s)
        pause_stops_own_queue(s)
        ports[port] = s
    return new_facts(FORMAT, ports, unique(problems))


def _watchdog_on(port_qos):
    """``qos pfc-watchdog`` on an interface: present (``{}``), ``state: enable`` or ``on``."""
    if "pfc-watchdog" not in port_qos:
        return False
    value = port_qos.get("pfc-watchdog")
    if value is None or value == {}:
        return True
    if isinstance(value, dict):
        return not _off(value.get("state", value.get("enable", "on")))
    return not _off(value)


def _port_key(name):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


# ----------------------------------------------------------------------------- nv show qos roce

def _size(text):
    """``"146.48 KB"`` -> ``(149996, 10.24)``: the bytes and what one step of the last printed digit is worth (the
    ``ecn_unit``); ``"1500000"`` -> ``(1500000, 1)``; ``(None, None)`` when unreadable."""
    match = re.match(r"^\s*(\d+(?:\.(\d*))?)\s*([A-Za-z]*)\s*$", str(text or ""))
    if not match:
        return None, None
    unit = _UNITS.get(match.group(3).lower() or "b")
    if unit is None:
        return None, None
    return int(round(float(match.group(1)) * unit)), float(unit) / 10 ** len(match.group(2) or "")


def _roce_values(lines):
    """``{"pfc.pfc-priority": "3", ...}`` from the operational/applied part."""
    values, section, cols = {}, "", None
    for line in lines:
        if re.match(r"^\s*operational\s+applied", line) and cols is None:
            cols = (line.index("operational"), line.index("applied"))
            continue
        if cols is None or not line.strip() or set(line.strip()) <= set("- "):
            continue
        if line.startswith("RoCE ") or line.startswith("Exception"):
            break
        indent = len(line) - len(line.lstrip())
        key = line.split()[0]
        oper = line[cols[0]:cols[1]].strip() if len(line) > cols[0] else ""
        applied = line[cols[1]:].strip() if len(line) > cols[1] else ""
        applied = re.split(r"\s{2,}", applied)[0] if applied else ""
        if indent == 0:
            section = key
            name = key
        else:
            name = "%s.%s" % (section, key)
        value = oper or applied
        if value:
            values[name] = value
    return values


def _tables(lines):
    """``{title: [row lines]}`` for the ``=====``-underlined tables."""
    tables, title, rows = {}, None, None
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and lines[i + 1].strip().startswith("====") and line.strip():
            title = line.strip()
            rows = tables.setdefault(title, [])
            continue
        if title is None or line.strip().startswith("===") or not line.strip():
            continue
        if set(line.strip()) <= set("- "):
            continue
        rows.append(line)
    return tables


def _table(tables, prefix):
    for title, rows in tables.items():
        if title.lower().startswith(prefix.lower()):
            return rows
    return None


def parse_nvue_roce(text):
    """``nv show qos roce`` text -> QoS facts (format ``"nvue_roce"``), one port ``""``."""
    problems = []
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str) or not text.strip():
        return new_facts(FORMAT_ROCE, {}, ["nvue_roce: no 'nv show qos roce' output given"])
    lines = text.expandtabs().splitlines()
    values = _roce_values(lines)
    tables = _tables(lines)
    if not values and not tables:
        return new_facts(FORMAT_ROCE, {}, ["nvue_roce: no 'nv show qos roce' output found"])
    s = new_settings()
    if "trust.trust-mode" in values:
        s["trust"] = _TRUST.get(values["trust.trust-mode"].lower().replace(" ", ""))
    if "pfc.pfc-priority" in values:
        s["pfc"] = _ints(values["pfc.pfc-priority"], "pfc pfc-priority", problems)
    elif values.get("mode", "").startswith("lossy"):
        s["pfc"] = []
    if "congestion-control.enabled-tc" in values:
        ecn, units = {}, {}
        low, low_step = _size(values.get("congestion-control.min-threshold"))
        high, high_step = _size(values.get("congestion-control.max-threshold"))
        for tc in _ints(values["congestion-control.enabled-tc"], "congestion-control enabled-tc", problems):
            ecn[tc] = {"enabled": True, "min_bytes": low, "max_bytes": high,
                       "probability": to_int(values.get("congestion-control.probability"),
                                             "congestion-control probability", problems)}
            units[tc] = {"min_bytes": low_step, "max_bytes": high_step}
        s["ecn"], s["ecn_unit"] = ecn, units
    for field, row in (("pfc_rx", "pfc.rx-enabled"), ("pfc_tx", "pfc.tx-enabled")):
        if row in values and s["pfc"] is not None:
            if _on(values[row]):
                s[field] = list(s["pfc"])
            elif _off(values[row]):
                s[field] = []
            else:
                problems.append("pfc %s: %r is neither enabled nor disabled" % (row.split(".")[1], values[row]))

    rows = _table(tables, "RoCE PCP/DSCP->SP")
    if rows:
        dscp = {}
        for row in rows:
            parts = row.split()
            if len(parts) < 3 or parts[-3] == "pcp":
                continue
            sp = to_int(parts[-1], "PCP/DSCP->SP row %r" % row.strip(), problems)
            for d in _ints(parts[-2], "PCP/DSCP->SP row %r" % row.strip(), problems):
                if sp is not None:
                    dscp[d] = sp
        s["dscp_to_priority"] = dscp or None

    rows = _table(tables, "RoCE SP->TC")
    if rows:
        p2q, ets = {}, {}
        for row in rows:
            match = re.match(r"^\s*\S+\s+(\d+)\s+(\d+)\s+(.+?)\s*$", row)
            if not match:
                continue
            sp, tc, sched = int(match.group(1)), int(match.group(2)), match.group(3).lower()
            p2q[sp] = tc
            if "strict" in sched:
                ets[tc] = {"mode": "strict", "weight": None}
            else:
                weight = re.search(r"(\d+)\s*%", sched)
                mode = "ets" if re.search(r"wrr|ets", sched) else "vendor"
                ets[tc] = {"mode": mode, "weight": int(weight.group(1)) if weight else None}
        s["priority_to_queue"] = p2q or None
        s["ets"] = ets or None

    rows = _table(tables, "RoCE pool")
    if rows is not None:
        header = None
        lossless = set()
        for row in rows:
            parts = row.split()
            if "name" in parts and "switch-priorities" in parts:
                header = ["#"] + parts
                continue
            if header is None:
                continue
            cells = dict(zip(header, parts))
            name = cells.get("name", "").lower()
            sps = cells.get("switch-priorities", "-")
            if "ingress" in name and ("roce-reserved" in name or "lossless" in name) and sps != "-":
                lossless.update(_ints(sps, "pool %s" % name, problems))
        if not lossless and values.get("mode", "").startswith("lossless-single-ipool"):
            lossless.update(s["pfc"] or [])
        s["buffer_lossless"] = sorted(lossless)
    # pauses stop the switch-priority's own queue (see parse_nvue); PFC directions only as the rows print them
    pause_stops_own_queue(s)
    return new_facts(FORMAT_ROCE, {"": s}, unique(problems))
