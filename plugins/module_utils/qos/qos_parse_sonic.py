# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""SONiC ``config_db.json`` QoS -> QoS facts (format ``"sonic_config_db"``), one settings entry per port.

Input: the text of a config_db.json (``show runningconfiguration all``, ``sonic-cfggen --print-data``,
a rendered ``qos.json.j2`` / ``buffers.json.j2``) or an already-loaded dict. Both the nested layout
(``{"BUFFER_PG": {"Ethernet0|3-4": {...}}}``) and the flat redis-dump layout
(``{"BUFFER_PG|Ethernet0|3-4": {...}}``) are accepted. Keys naming several ports
(``"Ethernet0,Ethernet4|3-4"``) are expanded, and so are index ranges (``3-4``).

Ports: every port in ``PORT`` and ``PORT_QOS_MAP`` (the ``global`` entry is not a port), plus
the ports named by ``QUEUE``, ``BUFFER_PG`` and ``PFC_WD`` keys (so a rendered buffers file alone
still yields its ports). Per port:

* ``dscp_to_priority``: ``PORT_QOS_MAP[port].dscp_to_tc_map`` -> ``DSCP_TO_TC_MAP[name]``; on SONiC the
  traffic class is the priority (PFC is enabled per TC of the same number). The switch-wide
  ``PORT_QOS_MAP|global`` map is not applied to ports that lack their own.
* ``trust``: ``"dscp"`` with a ``dscp_to_tc_map``, ``"pcp"`` with a ``dot1p_to_tc_map``, ``"pcp,dscp"``
  with both, ``None`` with neither (in a fragment; a whole config_db: see the defaults below).
* ``priority_to_queue``: ``tc_to_queue_map`` -> ``TC_TO_QUEUE_MAP[name]``.
* ``pfc``: ``pfc_enable`` (``"3,4"``); ``[]`` for a port in ``PORT_QOS_MAP`` without it. ``pfc_tx`` equals it;
  ``pfc_rx`` too unless ``PORT[port].pfc_asym`` is ``on``: orchagent writes ``pfc_enable`` as one bit vector,
  ``SAI_PORT_ATTR_PRIORITY_FLOW_CONTROL``, which SAI applies to both directions in the default
  ``SAI_PORT_PRIORITY_FLOW_CONTROL_MODE_COMBINED`` (sonic-swss ``orchagent/portsorch.cpp`` ``setPortPfc``,
  SAI ``inc/saiport.h``); with ``pfc_asym on`` the port runs ``..._MODE_SEPARATE``: ``pfc_enable`` goes to
  ``SAI_PORT_ATTR_PRIORITY_FLOW_CONTROL_TX`` and ``..._RX`` is set to ``0xff`` (``setPortPfcAsym``), so
  ``pfc_rx`` is every priority 0-7.
* ``priority_to_pg``: ``tc_to_pg_map`` -> ``TC_TO_PRIORITY_GROUP_MAP[name]`` (the ingress priority group a TC
  is buffered in; ``SAI_PORT_ATTR_QOS_TC_TO_PRIORITY_GROUP_MAP``). ``None`` without the field, in a whole
  config_db too: SAI says "Default no map" and not which PG a TC then lands in (the ASIC's choice).
* ``pfc_to_queue``: ``pfc_to_queue_map`` -> ``MAP_PFC_PRIORITY_TO_QUEUE[name]`` (the queue a received pause
  for a priority stops; ``SAI_PORT_ATTR_QOS_PFC_PRIORITY_TO_QUEUE_MAP``); ``None`` without the field (SAI:
  "Default no map").
* ``pfc_to_pg``: ``pfc_to_pg_map`` -> ``PFC_PRIORITY_TO_PRIORITY_GROUP_MAP[name]``: the priority group whose
  xoff sends the pause frames of a PFC priority (``SAI_PORT_ATTR_QOS_PFC_PRIORITY_TO_PRIORITY_GROUP_MAP``,
  ``qosorch.cpp``); the stock ``qos_config.j2`` renders it for ``asic_type`` mellanox and barefoot only. Without
  the field: ``None`` on a Mellanox/NVIDIA or Barefoot platform (``DEVICE_METADATA|localhost`` ``platform`` /
  ``hwsku`` / ``asic_type``: the ASIC's own default applies, "Default no map") and where no platform is named
  (``why_unknown`` says which); on any other platform the ASIC has no such stage, a priority's pauses come from the
  group its TC is buffered in: ``pfc_to_pg`` = ``priority_to_pg``.
* ``ecn``: per queue of ``QUEUE["port|q"]``: ``wred_profile`` -> ``WRED_PROFILE``; ``enabled`` when
  ``ecn`` marks green packets (``ecn_all``, ``ecn_green``, ``ecn_green_yellow``, ``ecn_green_red``; SAI
  ``sai_ecn_mark_mode_t``: ``ecn_yellow``, ``ecn_red``, ``ecn_yellow_red`` leave green packets, so unmetered RoCE,
  unmarked); bytes and probability from ``green_min_threshold`` / ``green_max_threshold`` / ``green_drop_probability`` (yellow, then
  red, when green is not stated). A queue in ``QUEUE`` with no ``wred_profile`` is ``enabled: False``.
* ``ets``: ``QUEUE[...].scheduler`` -> ``SCHEDULER``: ``STRICT`` -> ``strict``, ``DWRR``/``WRR`` ->
  ``ets`` with ``weight``; any other type -> ``vendor``.
* ``mtu``: ``PORT[port].mtu``.
* ``pfc_watchdog``: when ``PFC_WD`` exists: the priorities the watchdog arms on a port whose ``PFC_WD|<port>`` entry
  has a ``detection_time`` (orchagent rejects an entry without it, ``pfcwdorch.cpp`` ``task_invalid_entry``: a
  problem, and the watchdog is off), else ``[]``; ``None`` when there is no ``PFC_WD`` table in a fragment.
  ``PFC_WD|GLOBAL`` (poll interval) is not a port. Which priorities depends on the config_db's schema version
  (``VERSIONS|DATABASE`` ``VERSION``; :data:`PFCWD_SW_ENABLE_VERSION`):

  - ``version_3_0_5`` and later: ``pfcwd_sw_enable`` (sonic-swss #2171 split it from ``pfc_enable``, first in
    202205; orchagent keeps its bit mask, 0 when absent, ``qosorch.cpp`` ``setPortPfcWatchdogStatus``, and the
    watchdog arms only those, ``pfcwdorch.cpp`` ``getLosslessTcsForPort``): a port without the field has the
    watchdog off, whatever its ``pfc_enable``;
  - older versions: ``pfc_enable`` (202111 and older arm the watchdog on the PFC priorities; sonic-utilities
    ``scripts/db_migrator.py`` ``version_3_0_4`` copies ``pfc_enable`` into ``pfcwd_sw_enable`` and sets
    ``version_3_0_5``, so a config_db still older than that was never migrated: it runs on an image before the split);
  - no ``VERSIONS`` (or an unreadable version): ``pfcwd_sw_enable`` when some port states it (the schema has the
    field), ``[]`` when no port has ``pfc_enable``; otherwise the version cannot be told: ``None`` with the reason
    in ``why_unknown``.

* ``pfc_watchdog_queue``: ``{priority: queue}`` for the watchdog's priorities: bit ``i`` watches queue ``i``
  (``port.m_queue_ids[i]``) with the pause counters of priority ``i`` (``pfcwdorch.cpp``
  ``PfcWdSwOrch::registerInWdDb``), whatever queue that priority's traffic leaves on.
* ``buffer_lossless_pg``: the priority groups of ``BUFFER_PG["port|3-4"]`` whose profile is lossless, as
  buffermgrd decides it (``cfgmgr/buffermgrdyn.cpp``, ``handleBufferProfileTable``): a ``BUFFER_PROFILE`` with
  ``xoff`` (``xon`` alone is not), or with ``headroom_type dynamic`` (headroom calculated by buffermgrd);
  ``NULL``, which the dynamic buffer model uses for a lossless PG whose headroom buffermgrd calculates; a
  ``pg_lossless_*`` name only when ``BUFFER_PROFILE`` does not define it (the traditional buffermgrd creates
  those at run time; a defined one is judged by its fields). Both reference styles are read:
  ``"[BUFFER_PROFILE|name]"`` and ``"name"``. ``None`` when the port has no ``BUFFER_PG`` entry.
  ``buffer_lossless`` stays ``None``: PG numbers are not priorities; the check follows ``priority_to_pg``.
* ``ecn_unit``: every WRED threshold is in bytes (``{queue: {"min_bytes": 1, "max_bytes": 1}}``).
* ``why_unknown``: ``{field: reason}`` for ``pfc_watchdog`` and ``pfc_to_pg`` left ``None`` above.

**Defaults by omission** (:data:`SONIC_DEFAULTS`; sources in ``docs/lossless-qos.md``): a whole config_db
(``sonic-cfggen -d --print-data``, ``/etc/sonic/config_db.json``: it has ``DEVICE_METADATA``) states
them by leaving a field out; orchagent then leaves the SAI attribute at its default. Per port: no
``dscp_to_tc_map`` and no ``dot1p_to_tc_map`` -> ``trust`` ``"none"`` and every DSCP on TC 0 (unless
``PORT_QOS_MAP|global`` names a switch-wide map: whether a port without its own map uses it depends on
the ASIC, so both stay ``None``); no ``tc_to_queue_map`` -> every TC on queue 0; no ``pfc_enable`` ->
``pfc`` ``[]``; a queue without ``wred_profile`` -> ECN off; no ``PFC_WD`` entry -> ``pfc_watchdog``
``[]``; a ``PORT`` entry without ``mtu`` -> 9100. Not filled (no documentation found): the scheduler of
a queue without ``scheduler`` (vendor), lossless buffers of ports without ``BUFFER_PG`` (the buffer
model creates them), the PG of a TC without ``tc_to_pg_map`` and the queue a pause stops without
``pfc_to_queue_map`` (SAI: "Default no map", the ASIC decides). A fragment without ``DEVICE_METADATA``
(a rendered ``qos.json``, this collection's patch source) cannot tell, and keeps ``None``. A reference that
cannot be resolved (a problem) keeps ``None`` too.

Unknown tables are ignored. Objects referenced but never defined (a map, WRED profile, scheduler or
buffer profile) and values that are not numbers go to ``problems`` naming the table, key and name;
invalid JSON gives a problem, never an exception.
"""

from __future__ import annotations

import json

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import (
    ECN_OFF, QUEUES, ecn_off_elsewhere, new_facts, new_settings, pfc_both_ways, to_int, to_int_list, unique,
)

FORMAT = "sonic_config_db"
# The WRED_PROFILE ecn values that mark green packets: SAI inc/saiwred.h sai_ecn_mark_mode_t (GREEN, GREEN_YELLOW,
# GREEN_RED, ALL; YELLOW, RED and YELLOW_RED: "Green ... disabled"). No policer colours RoCE (SAI's packet colour is
# green unless a policer or colour map says otherwise): a profile marking only yellow/red packets never marks RoCE.
_ECN_ON = ("ecn_all", "ecn_green", "ecn_green_yellow", "ecn_green_red")
_PORT_KEYED = ("PORT", "PORT_QOS_MAP", "QUEUE", "BUFFER_PG", "PFC_WD")
_NOT_PORTS = ("global", "GLOBAL")
# A whole config_db always has DEVICE_METADATA|localhost (what config save and sonic-cfggen -d write); a fragment not.
_WHOLE_MARK = "DEVICE_METADATA"
# The config_db schema version from which the watchdog follows pfcwd_sw_enable: sonic-utilities scripts/db_migrator.py
# version_3_0_4() copies pfc_enable into pfcwd_sw_enable and sets version_3_0_5 (sonic-swss #2171, 202205).
PFCWD_SW_ENABLE_VERSION = (3, 0, 5)
# ASICs with a PFC priority -> priority group stage of their own: sonic-buildimage files/build_templates/qos_config.j2
# pfc_to_pg_map_supported_asics = ['mellanox', 'barefoot'], matched in DEVICE_METADATA|localhost asic_type, platform
# (x86_64-mlnx_msn2700-r0, x86_64-nvidia_sn5600-r0, x86_64-accton_wedge100bf_32x-r0) or hwsku.
_PFC_TO_PG_ASICS = ("mellanox", "mlnx", "nvidia", "barefoot", "bfn", "wedge100bf", "as9516", "tofino")

# Defaults by omission of a whole config_db (docs/lossless-qos.md, "Defaults by omission"): the SAI attribute
# defaults orchagent leaves in place (opencomputeproject/SAI inc/saiport.h, inc/saiqueue.h) and sonic-swss's.
SONIC_DEFAULTS = {
    # SAI_PORT_ATTR_QOS_DEFAULT_TC "@default 0"; SAI_PORT_ATTR_QOS_DSCP_TO_TC_MAP / _DOT1P_TO_TC_MAP "To
    # enable/disable trust DSCP [Dot1p], map ID should be added/removed on port. Default no map."
    "trust": "none",
    "traffic_class": 0,
    # SAI_PORT_ATTR_QOS_TC_TO_QUEUE_MAP: "Default no map, i.e. all packets to queue 0."
    "queue": 0,
    # SAI_PORT_ATTR_PRIORITY_FLOW_CONTROL: "Bit vector enable/disable port PFC ... @default 0"
    "pfc": [],
    # SAI_QUEUE_ATTR_WRED_PROFILE_ID: "ID = SAI_NULL_OBJECT_ID to disable WRED ... @default SAI_NULL_OBJECT_ID"
    "ecn": ECN_OFF,
    # The watchdog runs on the ports with a PFC_WD|<port> entry, which "pfcwd start" / "pfcwd start_default"
    # write (sonic-net/sonic-utilities pfcwd/main.py): none, no watchdog.
    "pfc_watchdog": [],
    # sonic-swss cfgmgr/portmgr.h: #define DEFAULT_MTU_STR "9100" (portmgrd's default for a PORT without mtu).
    "mtu": 9100,
}


def _load(text, problems):
    if isinstance(text, dict):
        return text
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str) or not text.strip():
        problems.append("sonic_config_db: no config_db JSON given")
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        problems.append("sonic_config_db: invalid JSON: %s" % exc)
        return None
    if not isinstance(data, dict):
        problems.append("sonic_config_db: the JSON is a %s, not an object of tables" % type(data).__name__)
        return None
    return data


def _nest(data, problems):
    """Tables as ``{TABLE: {key: fields}}``, folding flat ``"TABLE|key"`` entries in."""
    out = {}
    for name, value in data.items():
        if not isinstance(name, str):
            continue
        if "|" in name:
            table, key = name.split("|", 1)
            if isinstance(value, dict):
                out.setdefault(table, {})[key] = value
            continue
        if not isinstance(value, dict):
            if name.isupper():
                problems.append("%s: the table is not an object" % name)
            continue
        out.setdefault(name, {}).update(value)
    return out


def _ref(value):
    """``"[BUFFER_PROFILE|name]"`` or ``"name"`` -> ``"name"``."""
    if value is None:
        return None
    text = str(value).strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
        if "|" in text:
            text = text.split("|", 1)[1]
    return text


def _split_key(key):
    """``"Ethernet0,Ethernet4|3-4"`` -> (["Ethernet0", "Ethernet4"], "3-4")."""
    ports, _sep, rest = str(key).partition("|")
    return [p.strip() for p in ports.split(",") if p.strip()], rest


def _indices(text, where, problems):
    return to_int_list(text, where, problems, "an index or range")


def _per_port(table):
    """``{port: fields}`` with comma keys expanded (a later key overrides field by field)."""
    out = {}
    for key, fields in table.items():
        if not isinstance(fields, dict):
            continue
        ports, _rest = _split_key(key)
        for port in ports:
            out.setdefault(port, {}).update(fields)
    return out


def _per_port_index(table, name, problems):
    """``{port: [(index, fields, key)]}`` for ``QUEUE`` / ``BUFFER_PG`` style keys."""
    out = {}
    for key, fields in table.items():
        if not isinstance(fields, dict):
            continue
        ports, rest = _split_key(key)
        indices = _indices(rest, "%s|%s" % (name, key), problems)
        for port in ports:
            for index in indices:
                out.setdefault(port, []).append((index, fields, key))
    return out


def _int_map(tables, table, name, where, problems, cache=None):
    if name is None:
        return None
    maps = tables.get(table) or {}
    if name not in maps or not isinstance(maps[name], dict):
        problems.append("%s: %s %s is not defined in %s" % (where, table.lower(), name, table))
        return None
    if cache is not None and (table, name) in cache:
        return dict(cache[(table, name)])  # every port names the same few maps: convert each once
    out = {}
    for key, value in maps[name].items():
        k = to_int(key, "%s|%s" % (table, name), problems)
        v = to_int(value, "%s|%s|%s" % (table, name, key), problems)
        if k is not None and v is not None:
            out[k] = v
    if cache is not None:
        cache[(table, name)] = out
        return dict(out)
    return out


def _ecn_entry(profile, where, problems):
    ecn = str(profile.get("ecn") or "ecn_none").strip().lower()
    values = {}
    for what in ("min_threshold", "max_threshold", "drop_probability"):
        for colour in ("green", "yellow", "red"):
            if profile.get("%s_%s" % (colour, what)) not in (None, ""):
                values[what] = to_int(profile.get("%s_%s" % (colour, what)), where, problems)
                break
    return {"enabled": ecn in _ECN_ON, "min_bytes": values.get("min_threshold"),
            "max_bytes": values.get("max_threshold"), "probability": values.get("drop_probability")}


def _ets_entry(sched, where, problems):
    kind = str(sched.get("type") or "").strip().upper()
    weight = to_int(sched.get("weight"), where, problems)
    if kind == "STRICT":
        return {"mode": "strict", "weight": weight}
    if kind in ("DWRR", "WRR"):
        return {"mode": "ets", "weight": weight}
    return {"mode": "vendor", "weight": weight}


def _queues(tables, entries, problems):
    """(ecn, ets, queues whose wred_profile cannot be resolved)."""
    ecn, ets, unreadable = {}, {}, set()
    wred = tables.get("WRED_PROFILE") or {}
    scheds = tables.get("SCHEDULER") or {}
    for queue, fields, key in entries:
        where = "QUEUE|%s" % key
        name = _ref(fields.get("wred_profile"))
        if name is None:
            ecn.setdefault(queue, {"enabled": False, "min_bytes": None, "max_bytes": None, "probability": None})
        elif name in wred and isinstance(wred[name], dict):
            ecn[queue] = _ecn_entry(wred[name], "WRED_PROFILE|%s" % name, problems)
        else:
            problems.append("%s: wred_profile %s is not defined in WRED_PROFILE" % (where, name))
            unreadable.add(queue)
        name = _ref(fields.get("scheduler"))
        if name is None:
            continue
        if name in scheds and isinstance(scheds[name], dict):
            ets[queue] = _ets_entry(scheds[name], "SCHEDULER|%s" % name, problems)
        else:
            problems.append("%s: scheduler %s is not defined in SCHEDULER" % (where, name))
    return ecn, ets, unreadable


def lossless_pg_profile(reference, profiles):
    """Whether a ``BUFFER_PG`` ``profile`` reference makes its PG lossless, as buffermgrd decides it: ``NULL`` (the
    dynamic model's lossless PG); a ``BUFFER_PROFILE`` (of ``profiles``) with ``xoff`` or ``headroom_type dynamic``
    (``buffermgrdyn.cpp`` ``handleBufferProfileTable``); an undefined ``pg_lossless_*`` name (buffermgrd creates it,
    with xoff, at run time). None for another undefined name or no reference: the one place this rule lives."""
    name = _ref(reference)
    if name is None:
        return None
    if name == "NULL":
        return True
    profile = (profiles or {}).get(name)
    if isinstance(profile, dict):
        return profile.get("xoff") not in (None, "") or str(profile.get("headroom_type") or "").strip() == "dynamic"
    return True if name.startswith("pg_lossless_") else None


def _lossless_pgs(tables, entries, problems):
    profiles = tables.get("BUFFER_PROFILE") or {}
    out = set()
    for pg, fields, key in entries:
        lossless = lossless_pg_profile(fields.get("profile"), profiles)
        if lossless:
            out.add(pg)
        elif lossless is None and _ref(fields.get("profile")) is not None:
            problems.append("BUFFER_PG|%s: profile %s is not defined in BUFFER_PROFILE"
                            % (key, _ref(fields.get("profile"))))
    return sorted(out)


def _db_version(tables):
    """``VERSIONS|DATABASE`` ``VERSION`` (``"version_3_0_6"``) as ``(3, 0, 6)``; None when absent or unreadable."""
    text = str(((tables.get("VERSIONS") or {}).get("DATABASE") or {}).get("VERSION") or "")
    parts = text.strip().split("_")[1:]
    if not text.startswith("version_") or not parts or not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def _watchdog_field(tables, qos_tbl):
    """``(field, why)``: the ``PORT_QOS_MAP`` field whose priorities the PFC watchdog arms (``"pfcwd_sw_enable"`` or
    ``"pfc_enable"``), or ``(None, why)`` when the config_db's version cannot tell (module docstring)."""
    version = _db_version(tables)
    if version is not None:
        return ("pfcwd_sw_enable" if version >= PFCWD_SW_ENABLE_VERSION else "pfc_enable"), None
    ports = [q for name, q in qos_tbl.items() if name not in _NOT_PORTS]
    if any("pfcwd_sw_enable" in q for q in ports) or not any(q.get("pfc_enable") not in (None, "") for q in ports):
        return "pfcwd_sw_enable", None
    return None, ("no port states pfcwd_sw_enable and the config_db has no VERSIONS|DATABASE version: whether the "
                  "watchdog follows pfc_enable (before version_3_0_5, SONiC 202111 and older) or pfcwd_sw_enable "
                  "(absent: off) cannot be told")


def _watchdog(port, qos, wd_entry, field, problems):
    """The priorities the PFC watchdog arms on ``port`` (module docstring); None when ``field`` is (the version
    cannot tell which field it follows) and the port has PFC."""
    if wd_entry is None or qos is None:
        return list(SONIC_DEFAULTS["pfc_watchdog"])
    detection = wd_entry.get("detection_time")
    if detection in (None, "") or not str(detection).strip().isdigit() or int(detection) <= 0:
        problems.append("PFC_WD|%s: detection_time %s; orchagent rejects the entry (pfcwdorch.cpp), so the "
                        "watchdog is off on the port" % (port, "is missing" if detection in (None, "") else
                                                         "%r is not a positive number of ms" % detection))
        return list(SONIC_DEFAULTS["pfc_watchdog"])
    if field is None:
        return None if qos.get("pfc_enable") not in (None, "") else []
    return _indices(qos.get(field), "PORT_QOS_MAP|%s" % port, problems)


def _pfc_to_pg_stage(tables):
    """Whether the ASIC has a PFC priority -> priority group stage (True), has none (False), or is not named (None)."""
    meta = (tables.get(_WHOLE_MARK) or {}).get("localhost") or {}
    text = " ".join(str(meta.get(key) or "") for key in ("asic_type", "platform", "hwsku")).strip().lower()
    if not text:
        return None
    return any(word in text for word in _PFC_TO_PG_ASICS)


def _pfc_to_pg(s, qos, tables, where, problems, maps):
    """``pfc_to_pg`` of a port (module docstring); the reason goes to ``why_unknown`` when it stays None."""
    name = _ref(qos.get("pfc_to_pg_map"))
    if name is not None:
        s["pfc_to_pg"] = _int_map(tables, "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", name, where, problems, maps)
        return
    stage = _pfc_to_pg_stage(tables)
    if stage is False:
        s["pfc_to_pg"] = dict(s["priority_to_pg"]) if s["priority_to_pg"] is not None else None
        return
    why = ("%s binds no pfc_to_pg_map on a Mellanox/Barefoot platform: which priority group sends the pauses of each "
           "priority is the ASIC's default" if stage else "%s binds no pfc_to_pg_map and DEVICE_METADATA names no "
           "platform: whether the ASIC has a PFC priority -> priority group map (Mellanox, Barefoot) is not known")
    s["why_unknown"] = dict(s["why_unknown"] or {}, pfc_to_pg=why % where)


def _fill_port_qos(s, qos, global_map):
    """Fill what a whole config_db's ``PORT_QOS_MAP`` entry ``qos`` of a port leaves out (SONIC_DEFAULTS)."""
    if qos.get("dscp_to_tc_map") is None and qos.get("dot1p_to_tc_map") is None and not global_map:
        s["trust"] = SONIC_DEFAULTS["trust"]
        s["dscp_to_priority"] = dict.fromkeys(range(64), SONIC_DEFAULTS["traffic_class"])
    elif isinstance(s["dscp_to_priority"], dict):
        # a DSCP the bound map leaves out gets the port's default TC (SAI_PORT_ATTR_QOS_DEFAULT_TC)
        for dscp in range(64):
            s["dscp_to_priority"].setdefault(dscp, SONIC_DEFAULTS["traffic_class"])
    if qos.get("tc_to_queue_map") is None:
        s["priority_to_queue"] = dict.fromkeys(QUEUES, SONIC_DEFAULTS["queue"])
    if qos.get("pfc_enable") in (None, ""):
        s["pfc"] = list(SONIC_DEFAULTS["pfc"])


def parse_sonic_config_db(text):
    """config_db.json text (or dict) -> QoS facts (format ``"sonic_config_db"``); see the module docstring."""
    problems = []
    data = _load(text, problems)
    if data is None:
        return new_facts(FORMAT, {}, problems)
    tables = _nest(data, problems)
    ports_tbl = _per_port(tables.get("PORT") or {})
    qos_tbl = _per_port(tables.get("PORT_QOS_MAP") or {})
    queue_tbl = _per_port_index(tables.get("QUEUE") or {}, "QUEUE", problems)
    pg_tbl = _per_port_index(tables.get("BUFFER_PG") or {}, "BUFFER_PG", problems)
    complete = _WHOLE_MARK in tables
    global_map = (qos_tbl.get("global") or {}).get("dscp_to_tc_map") is not None
    has_wd = "PFC_WD" in tables or complete
    wd_tbl = _per_port(tables.get("PFC_WD") or {})
    wd_field, wd_why = _watchdog_field(tables, qos_tbl)

    names = []
    for source in (ports_tbl, qos_tbl, queue_tbl, pg_tbl, wd_tbl):
        for name in source:
            if name not in _NOT_PORTS and name not in names:
                names.append(name)

    ports = {}
    maps = {}
    for port in names:
        s = new_settings()
        qos = qos_tbl.get(port)
        if qos is not None:
            where = "PORT_QOS_MAP|%s" % port
            dscp = _ref(qos.get("dscp_to_tc_map"))
            dot1p = _ref(qos.get("dot1p_to_tc_map"))
            s["trust"] = {(True, True): "pcp,dscp", (True, False): "dscp", (False, True): "pcp"}.get(
                (dscp is not None, dot1p is not None))
            s["dscp_to_priority"] = _int_map(tables, "DSCP_TO_TC_MAP", dscp, where, problems, maps)
            s["priority_to_queue"] = _int_map(tables, "TC_TO_QUEUE_MAP", _ref(qos.get("tc_to_queue_map")),
                                              where, problems, maps)
            s["pfc"] = _indices(qos.get("pfc_enable"), where, problems)
            s["priority_to_pg"] = _int_map(tables, "TC_TO_PRIORITY_GROUP_MAP", _ref(qos.get("tc_to_pg_map")),
                                           where, problems, maps)
            s["pfc_to_queue"] = _int_map(tables, "MAP_PFC_PRIORITY_TO_QUEUE", _ref(qos.get("pfc_to_queue_map")),
                                         where, problems, maps)
            _pfc_to_pg(s, qos, tables, where, problems, maps)
        if complete:
            _fill_port_qos(s, qos or {}, global_map)
        if str((ports_tbl.get(port) or {}).get("pfc_asym") or "").strip().lower() == "on" and s["pfc"] is not None:
            s["pfc_rx"] = list(QUEUES)  # SAI_PORT_PRIORITY_FLOW_CONTROL_MODE_SEPARATE: RX 0xff
        pfc_both_ways(s)
        if port in queue_tbl:
            ecn, ets, unreadable = _queues(tables, queue_tbl[port], problems)
            s["ecn"] = ecn or None
            s["ets"] = ets or None
            if complete and not unreadable:  # (an unresolved wred_profile keeps the table as stated)
                s["ecn"] = ecn_off_elsewhere(ecn)
        elif complete:
            s["ecn"] = ecn_off_elsewhere(None)
        if port in ports_tbl:
            mtu = ports_tbl[port].get("mtu")
            if mtu in (None, "") and complete:
                mtu = SONIC_DEFAULTS["mtu"]
            s["mtu"] = to_int(mtu, "PORT|%s" % port, problems)
        if has_wd:
            s["pfc_watchdog"] = _watchdog(port, qos, wd_tbl.get(port), wd_field, problems)
            if s["pfc_watchdog"] is None:
                s["why_unknown"] = dict(s["why_unknown"] or {}, pfc_watchdog="PORT_QOS_MAP|%s: %s" % (port, wd_why))
            else:
                s["pfc_watchdog_queue"] = dict((p, p) for p in s["pfc_watchdog"])  # bit i watches queue i
        if port in pg_tbl:
            s["buffer_lossless_pg"] = _lossless_pgs(tables, pg_tbl[port], problems)
        if s["ecn"] is not None:
            s["ecn_unit"] = dict((q, {"min_bytes": 1, "max_bytes": 1}) for q in s["ecn"])
        ports[port] = s
    return new_facts(FORMAT, ports, unique(problems))
