# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""SONiC: everything this collection knows about the NOS, in one module (see :mod:`platforms`).

**Render.** ``render_sonic(intent)`` returns the ``config_db`` tables SONiC needs for the ToR's rail
ports, as a dict ready for ``json.dumps`` (``config load`` input, or the source of a Generic Config
Updater patch); the file is ``<switch>.json``, read back by ``parse_qos`` as ``sonic_config_db``:

* ``PORT``: every rail port admin up, its MTU, description, and ``speed`` (Mb/s) / ``fec`` when
  the model sets them;
* L3 by addressing mode: exclusive/p2p: ``INTERFACE`` with the plan's gateway address on the port;
  shared: one VLAN per rail with the ports untagged members and the rail gateway on
  ``VLAN_INTERFACE``;
* ``FEATURE|lldp`` enabled;
* the lossless profile: ``DSCP_TO_TC_MAP`` ``AINET`` (all 64 DSCPs, as the stock map states them: the
  profile's whole DSCP map on its priorities, every other DSCP on TC 0), identity ``TC_TO_QUEUE_MAP`` /
  ``MAP_PFC_PRIORITY_TO_QUEUE``, ``TC_TO_PRIORITY_GROUP_MAP`` with each lossless TC in its own PG and every
  lossy TC (the CNP TC among them) in PG 0, ``PORT_QOS_MAP`` per port with ``pfc_enable``, ``WRED_PROFILE``
  ``AINET_LOSSLESS`` on the ECN queues (ECN marking on every colour at the profile's thresholds, WRED dropping
  off), ``SCHEDULER`` on every queue the profile uses (:func:`tor_intent.scheduler`, as on every NOS:
  DWRR weights and the strict CNP queue), ``PFC_WD`` on every port when the profile wants the watchdog;
* the lossless buffers (:func:`buffer_tables`), for the switch's buffer model (``DEVICE_METADATA|localhost``
  ``buffer_model``; a render without a running config_db is for the ``traditional`` model, SONiC's default):
  ``BUFFER_QUEUE`` ``egress_lossless_profile`` on the lossless queues and ``BUFFER_PG`` on the lossless PGs,
  keys as ranges (``Ethernet0|3-4``) as SONiC writes them; ``dynamic``: ``"profile": "NULL"`` (buffermgrd
  computes the headroom); ``traditional``: the profile buffermgrd would name, ``pg_lossless_<speed>_<cable>_profile``
  (speed from the port, cable length from ``CABLE_LENGTH``, else 5m), defined with size/xon/xoff/dynamic_th
  from :data:`PG_PROFILE_LOOKUP` and the pools it needs, unless the running config_db holds them already (then
  the switch's own objects are used). A port whose speed is known neither to the model nor to the running
  config_db gets no ``BUFFER_PG`` (traditional buffermgrd writes it from the speed it learns).

Every value is a string, as in config_db. Objects this collection names start with ``AINET``; the buffer objects
carry SONiC's stock names, so that a switch's own ones are used where it has them.

**Validate.** ``validate_sonic(config_db, models_dir)``: the SONiC YANG models (``sonic-buildimage``
``src/sonic-yang-models/yang-models``; no registry packages them, so the directory is given) through
libyang: config_db is translated to YANG JSON (:func:`sonic_yang_json`) and parsed strictly, which
rejects unknown tables and fields, bad enums and ranges, and map or profile references that point
nowhere. A fragment is judged as the running config_db after its patch (:func:`sonic_changes`,
:func:`apply_patch`): SONiC ports need ``lanes`` and ``speed``, which only the device has.

**Diff.** :func:`sonic_changes`: the fragment made fit for the running config_db (:func:`for_running`: the
buffers of its buffer model, its own buffer objects, its ``pfc_to_pg_map``), against it as trees
(:func:`tor_diff.tree_diff`), plus what must go (:func:`range_changes`): a ``BUFFER_PG`` / ``BUFFER_QUEUE`` key
of the running config that overlaps a key of the fragment (the stock ``Ethernet0|3-4`` beside our
``Ethernet0|3``) is removed and what it covered that the fragment does not own is written back with its old
value, one range key per run of indices (a ``BUFFER_QUEUE`` range that already holds what the fragment wants is
left alone); the ``QUEUE`` entries of a rail port are the fragment's whole, so its other queue keys go (no stock
DWRR weight left to dilute the profile's ETS shares); a lossless ``BUFFER_PG`` of a rail port that no TC of the
fragment's ``tc_to_pg_map`` reaches any more goes and keeps no headroom (:func:`unmapped_lossless_pgs`; uplinks
are not the fragment's and keep theirs); and a ``wred_profile`` on a queue that wants no ECN goes
(:func:`stale_fields`). The PFC watchdog is written only where the profile wants it (``pfc_watchdog: true``);
otherwise the switch's ``pfcwd_sw_enable`` and ``PFC_WD`` stay as they are.

**Push**, over SSH (the host's own connection), with the Generic Config Updater (sonic-net/sonic-utilities
``config/main.py``): ``config apply-patch [-f CONFIGDB|SONICYANG] [-d|--dry-run] [-v] PATCH_FILE_PATH``
applies an RFC 6902 patch of config_db (validated against the YANG models, no reload), prints ``Patch
applied successfully.`` or ``Failed to apply patch`` and the error (exit status non-zero); ``config`` needs
root. The running config_db comes from ``sonic-cfggen -d --print-data`` (what ``config save`` writes); the
patch is :func:`sonic_changes`'s, removals first.
Rail ports still marked ``[ainet]`` but no longer planned lose the keys this collection put on them
(:func:`sonic_release_patch`).

**Ports.** SONiC names front-panel ports ``Ethernet<n>`` (``Ethernet0``, ``Ethernet4``...; sonic-buildimage
``device/*/port_config.ini``); MTU up to 9216 (the ``PORT`` YANG model's ``mtu`` range 1..9216).
"""

from __future__ import annotations

import json
import os
import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse_nos import (
    parse_sonic_counterpoll, whole_seconds)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse_sonic import lossless_pg_profile
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import scheduler
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_diff import (
    lookup, owned_stale, port_key, tree_diff)
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import (
    ValidatorUnavailable, check_intent, is_owned)
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import PushError, read_command

# ----------------------------------------------------------------------------- registry facts
NAME = "sonic"
TITLE = "SONiC"
QOS_FORMAT = "sonic_config_db"
EXTENSION = "json"
RUNNING_EXTENSIONS = (".json",)
PORT_TEMPLATE = "Ethernet{node}"
PORT_MTU = 9216
PORT_MTU_MAX = 9216
PORT_NAME = "Ethernet<n>"
PORT_NAME_RE = re.compile(r"^Ethernet[0-9]+\Z")

# LLDP: lldpmgrd (sonic-buildimage dockers/docker-lldp/lldpmgrd) runs, per front-panel port, ``lldpcli configure ports
# <EthernetN> lldp portidsubtype local <alias> [description <description>]``: the Port ID is the PORT entry's alias
# (subtype local), not the port's name; :func:`lldp_port_aliases` maps it back.
LLDP_PORT_ID = "alias"
PUSH = "ssh"
HTTP_PORT = None

MAP = "AINET"
WRED = "AINET_LOSSLESS"
STRICT = "AINET_STRICT"
WATCHDOG = {"action": "drop", "detection_time": "200", "restoration_time": "200"}
FEC = {"rs": "rs", "fc": "fc", "none": "none"}
LIBYANG = "libyang==2.7.1"

# Buffers. The model: sonic-swss cfgmgr/buffermgr.cpp (doBufferMetaTask: DEVICE_METADATA|localhost buffer_model
# "dynamic" runs the dynamic model, anything else or nothing the traditional one), sonic-buildimage
# src/sonic-yang-models/yang-models/sonic-device_metadata.yang (buffer_model: "traditional ... is the default model
# used by all other vendors" than Mellanox) and files/build_templates/init_cfg.json.j2 (a new image writes
# "traditional" unless built with the dynamic default).
#   https://github.com/sonic-net/sonic-swss/blob/master/cfgmgr/buffermgr.cpp
#   https://github.com/sonic-net/sonic-buildimage/blob/master/files/build_templates/init_cfg.json.j2
# BUFFER_PG in each model: src/sonic-yang-models/doc/Configuration.md "BUFFER_PG" (traditional: the profile
# configured explicitly, "pg_lossless_40000_5m_profile"; dynamic: "NULL", calculated from the port's speed and cable
# length) and files/build_templates/buffers_config.j2 (dynamic_mode: "<port>|3-4": NULL; BUFFER_QUEUE "<port>|3-4":
# egress_lossless_profile, "|0-2" and "|5-6" egress_lossy_profile).
#   https://github.com/sonic-net/sonic-buildimage/blob/master/src/sonic-yang-models/doc/Configuration.md
#   https://github.com/sonic-net/sonic-buildimage/blob/master/files/build_templates/buffers_config.j2
# Traditional: buffermgr.cpp doSpeedUpdateTask names the lossless profile "pg_lossless_<speed>_<cable>_profile" and
# fills it from pg_profile_lookup.ini (speed, cable, size, xon, xoff, threshold[, xon_offset]) as pool
# ingress_lossless_pool, xon, xoff, size and "<pool mode>_th", reusing a profile that already exists; the BUFFER_PG
# keys are the runs of pfc_enable ("Ethernet44|3-4"). The cable length is CABLE_LENGTH|AZURE; buffers_config.j2 gives
# a ToR's server-facing port 5m ('torrouter_server': '5m').
LOSSLESS_POOL = "ingress_lossless_pool"
EGRESS_PROFILE = "egress_lossless_profile"
DEFAULT_CABLE = "5m"
# The numbers, for a switch that has none of its own: NVIDIA Spectrum-4 SN5600, sonic-buildimage
# device/mellanox/x86_64-nvidia_sn5600-r0/ACS-SN5600/pg_profile_lookup.ini (rows verbatim: speed cable size xon xoff
# threshold) and buffers_defaults_t0.j2 with ../../x86_64-mlnx_msn2700-r0/ACS-MSN2700/buffers_defaults_objects.j2 (the
# traditional pools: ingress_lossless_pool size 67737959, egress_lossless_pool size 158229504, both dynamic;
# egress_lossless_profile: egress_lossless_pool, size 0, dynamic_th 7). They are one ASIC's: a switch that holds its
# own pools and profiles (the stock buffers template writes them, buffermgrd the pg_lossless ones) keeps them.
#   https://github.com/sonic-net/sonic-buildimage/tree/master/device/mellanox/x86_64-nvidia_sn5600-r0/ACS-SN5600
PG_PROFILE_LOOKUP = """
  10000    5m 64512   19456  45056         0
  25000    5m 67584   19456  48128         0
  40000    5m 75776   19456  57344         0
  50000    5m 82944   19456  63488         0
 100000    5m 133120  19456  113664        0
 200000    5m 150528  19456  131072        0
 400000    5m 250880  19456  231424        0
 800000    5m 304128  38912  257024        0
  10000   40m 65536   19456  46080         0
  25000   40m 71680   19456  52224         0
  40000   40m 81920   19456  62464         0
  50000   40m 89088   19456  69632         0
 100000   40m 146432  19456  126976        0
 200000   40m 177152  19456  157696        0
 400000   40m 303104  19456  283648        0
 800000   40m 410624  38912  362496        0
  10000  300m 75776   19456  56320         0
  25000  300m 96256   19456  76800         0
  40000  300m 120832  19456  101376        0
  50000  300m 138240  19456  118784        0
 100000  300m 244736  19456  225280        0
 200000  300m 374784  19456  355328        0
 400000  300m 697344  19456  677888        0
 800000  300m 1198080 38912  1150976       0
"""
PG_LOSSLESS = {(row[0], row[1]): dict(zip(("size", "xon", "xoff", "threshold"), row[2:]))
               for row in (line.split() for line in PG_PROFILE_LOOKUP.strip().splitlines())}
BUFFER_POOLS = {LOSSLESS_POOL: {"mode": "dynamic", "size": "67737959", "type": "ingress"},
                "egress_lossless_pool": {"mode": "dynamic", "size": "158229504", "type": "egress"}}
EGRESS_PROFILE_FIELDS = {"dynamic_th": "7", "pool": "egress_lossless_pool", "size": "0"}
# Tables keyed "<port>|<index or range>" (range_changes). A range of the running config_db that holds what the
# fragment wants on its indices satisfies BUFFER_QUEUE, not BUFFER_PG: traditional buffermgrd writes the exact runs
# of pfc_enable, so an overlapping range would stay beside them. QUEUE is the fragment's whole on its ports: a queue
# the profile does not use keeps no scheduler (qos_config.j2 leaves queue 7 without one), since a stock DWRR weight
# left on it (scheduler.0, 14) would take a share of the profile's ETS weights.
RANGE_TABLES = ("QUEUE", "BUFFER_PG", "BUFFER_QUEUE")
RANGE_COVERS = ("BUFFER_QUEUE",)
WHOLE_PORT_TABLES = ("QUEUE",)
# Fields of an entry the fragment states whole that go when the fragment leaves them out: an ECN profile on a queue
# the profile wants no ECN on. Not pfcwd_sw_enable (issue 29): without it sonic-swss orchagent/qosorch.cpp keeps a
# bitmask of 0 and pfcwdorch.cpp watches no TC of the port, so removing it turns the switch's watchdog off; a profile
# that does not judge the watchdog (pfc_watchdog not true: nvidia, spiderpool) leaves it as the switch has it.
#   https://github.com/sonic-net/sonic-swss/blob/master/orchagent/qosorch.cpp
STALE_FIELDS = {"QUEUE": ("wred_profile",)}


def invalid_ports(names):
    """The names in ``names`` that are not SONiC port names."""
    return [name for name in names if not PORT_NAME_RE.match(name)]


def render(intent, header):
    """(file text, push data) of one ToR: the config_db fragment as JSON (JSON has no comments, so the
    header is not written)."""
    check_intent(intent, header)
    data = render_sonic(intent)
    return json.dumps(data, indent=4, sort_keys=True) + "\n", data


def validate(item, running_text, options):
    """(violations, note) of a rendered fragment against the SONiC YANG models, merged into the running
    config_db; a note says why it was not checked."""
    models_dir = options.get("sonic_yang_dir")
    if not models_dir:
        return [], "SONiC YANG check skipped: sonic_yang_dir not given"
    if running_text is None:
        return [], "SONiC YANG check skipped: a config_db fragment is checked merged into the running config_db"
    running = json.loads(running_text)
    return validate_sonic(apply_patch(running, sonic_changes(running, item["data"])[0]), models_dir), None


def running_diff(running_text, rendered):
    """Diff items of a rendered fragment against the running config_db (JSON text): :func:`sonic_changes`."""
    running = json.loads(running_text) if running_text.strip() else {}
    return sonic_changes(running, rendered["data"])[1]


def stale_ports(running_text, rendered):
    """Ports the running config_db still marks ``[ainet]`` that the fragment no longer has."""
    if not running_text or not running_text.strip():
        return []
    ports = {name: (fields or {}).get("description") for name, fields in
             (json.loads(running_text).get("PORT") or {}).items()}
    return owned_stale(ports, set(rendered["data"].get("PORT") or {}))


def push(connection, item, check=False):
    """Push a rendered item; ``connection`` is ``run(argv, data=None) -> (rc, stdout, stderr)`` on the switch."""
    return sonic_push(connection, item["data"], check=check)


# ----------------------------------------------------------------------------- render

def merged_config_db(running, fragment):
    """A copy of config_db ``running`` with the fragment's tables, keys and fields laid over it (what the
    switch holds after ``config load`` of the fragment; the SONiC YANG models judge this, not the fragment)."""
    out = {table: {key: dict(fields or {}) for key, fields in entries.items()} for table, entries in running.items()}
    for table, entries in fragment.items():
        for key, fields in entries.items():
            out.setdefault(table, {}).setdefault(key, {}).update(fields)
    return out


def _dwrr(queue):
    return "AINET_DWRR_%d" % queue


def render_sonic(intent):
    """The config_db fragment of one ToR (see the module docstring)."""
    out = {"PORT": {}, "FEATURE": {"lldp": {"state": "enabled"}}}
    for entry in intent["ports"]:
        port = {"admin_status": "up", "mtu": str(entry["mtu"]), "description": entry["description"]}
        if entry["speed"]:
            port["speed"] = str(int(entry["speed"].rstrip("G")) * 1000)
        if entry["fec"]:
            port["fec"] = FEC[entry["fec"]]
        out["PORT"][entry["port"]] = port
    if intent["mode"] in ("exclusive", "p2p"):
        out["INTERFACE"] = {}
        for entry in intent["ports"]:
            out["INTERFACE"][entry["port"]] = {}
            out["INTERFACE"]["%s|%s" % (entry["port"], entry["address"])] = {}
    else:
        out["VLAN"], out["VLAN_MEMBER"], out["VLAN_INTERFACE"] = {}, {}, {}
        for svi in intent["svis"]:
            vlan = "Vlan%d" % svi["vlan"]
            out["VLAN"][vlan] = {"vlanid": str(svi["vlan"]), "mtu": str(svi["mtu"])}
            out["VLAN_INTERFACE"][vlan] = {}
            out["VLAN_INTERFACE"]["%s|%s" % (vlan, svi["address"])] = {}
        for entry in intent["ports"]:
            out["VLAN_MEMBER"]["Vlan%d|%s" % (entry["vlan"], entry["port"])] = {"tagging_mode": "untagged"}
    if intent["qos"]:
        _qos(out, intent["qos"], [e["port"] for e in intent["ports"]])
        out.update(buffer_tables(out, None))
    return out


def _qos(out, q, ports):
    # Every DSCP stated, as the stock map does (sonic-buildimage files/build_templates/qos_config.j2, DSCP_TO_TC_MAP
    # AZURE: all 64, the unmarked ones in TC 1): the profile's whole DSCP map on its priorities (SONiC's TC is the
    # priority), every other DSCP in TC 0, the profiles' bulk class (queue 0 carries their ETS share and ECN).
    # https://github.com/sonic-net/sonic-buildimage/blob/master/files/build_templates/qos_config.j2
    dscp_map = {str(d): "0" for d in range(64)}
    for dscp, priority in q["dscp_to_priority"].items():
        dscp_map[str(dscp)] = str(priority)
    identity = {str(p): str(queue) for p, queue in q["priority_to_queue"].items()}
    # TC -> PG as qos_config.j2's TC_TO_PRIORITY_GROUP_MAP AZURE puts the lossless TCs (3 -> 3, 4 -> 4) and the lossy
    # ones (0-2, 5, 6 -> 0): a lossless TC in its own PG (the one BUFFER_PG gives headroom), every lossy TC in PG 0,
    # the port's lossy PG that the stock buffers give ingress_lossy_profile, so CNPs (TC 6) land in a PG with a
    # buffer. The stock map's 7 -> 7 has no BUFFER_PG either; TC 7 goes to PG 0 too.
    pg_map = {str(tc): str(tc if tc in q["pfc"] else 0) for tc in range(8)}
    out["DSCP_TO_TC_MAP"] = {MAP: dscp_map}
    out["TC_TO_QUEUE_MAP"] = {MAP: dict(identity)}
    out["TC_TO_PRIORITY_GROUP_MAP"] = {MAP: pg_map}
    out["MAP_PFC_PRIORITY_TO_QUEUE"] = {MAP: dict(identity)}
    pfc = ",".join(str(p) for p in q["pfc"])
    out["PORT_QOS_MAP"] = {port: {"dscp_to_tc_map": MAP, "tc_to_queue_map": MAP, "tc_to_pg_map": MAP,
                                  "pfc_to_queue_map": MAP, "pfc_enable": pfc}
                           for port in ports}
    ecn = q["ecn"]
    if ecn:
        # Mark, do not drop: `ecn` ecn_all marks ECN-capable packets of every colour; wred_<colour>_enable is WRED
        # (early drop) for that colour (sonic-buildimage src/sonic-yang-models/yang-models/sonic-wred-profile.yang:
        # "Enable WRED for green-colored traffic", default false; sonic-swss orchagent/qosorch.cpp maps it to
        # SAI_WRED_ATTR_GREEN_ENABLE). SAI's saiwred.h keeps the colour's min/max thresholds valid when
        # "SAI_WRED_ATTR_GREEN_ENABLE == true or SAI_WRED_ATTR_ECN_MARK_MODE == ... SAI_ECN_MARK_MODE_ALL", and ECT
        # traffic marks at them with the drop probability as marking probability; with WRED off, traffic that is
        # not ECN-capable is only tail-dropped (lossless queues: paused), never dropped early. (sonic-buildimage issue
        # 4545 reports a SAI that marks only with WRED enabled, against saiwred.h; such a switch marks nothing here.)
        # https://github.com/opencomputeproject/SAI/blob/master/inc/saiwred.h
        wred = {"ecn": "ecn_all"}
        for colour in ("green", "yellow", "red"):
            wred.update({"wred_%s_enable" % colour: "false",
                         "%s_min_threshold" % colour: str(ecn["min_bytes"]),
                         "%s_max_threshold" % colour: str(ecn["max_bytes"]),
                         "%s_drop_probability" % colour: str(ecn["probability"])})
        out["WRED_PROFILE"] = {WRED: wred}
    # Every queue the profile uses is scheduled, as on every NOS: {queue: DWRR weight, None: strict}.
    scheduled = scheduler(q)
    schedulers = {}
    for queue, weight in scheduled.items():
        if weight is None:
            schedulers[STRICT] = {"type": "STRICT"}
        else:
            schedulers[_dwrr(queue)] = {"type": "DWRR", "weight": str(weight)}
    queues = {}
    for port in ports:
        for queue in range(8):
            entry = {}
            if queue in scheduled:
                entry["scheduler"] = STRICT if scheduled[queue] is None else _dwrr(queue)
            if ecn and queue in ecn["queues"]:
                entry["wred_profile"] = WRED
            if entry:
                queues["%s|%d" % (port, queue)] = entry
    if schedulers:
        out["SCHEDULER"] = schedulers
    if queues:
        out["QUEUE"] = queues
    if q["watchdog"]:
        out["PFC_WD"] = {port: dict(WATCHDOG) for port in ports}
        out["PFC_WD"]["GLOBAL"] = {"POLL_INTERVAL": "200"}
        for port in ports:
            out["PORT_QOS_MAP"][port]["pfcwd_sw_enable"] = pfc


def buffer_model(running):
    """``traditional`` or ``dynamic``: what the running config_db's ``DEVICE_METADATA|localhost`` ``buffer_model``
    makes buffermgrd run (traditional without one, as buffermgr.cpp does)."""
    metadata = ((running or {}).get("DEVICE_METADATA") or {}).get("localhost") or {}
    return "dynamic" if metadata.get("buffer_model") == "dynamic" else "traditional"


def _indices(text):
    """``"3,4"`` / ``"3-4"`` / ``"3"`` -> [3, 4] / [3, 4] / [3]; None when it is not a list of indices."""
    out = []
    for part in str(text).split(","):
        bounds = part.strip().split("-")
        if not part.strip() or len(bounds) > 2 or not all(b.isdigit() for b in bounds):
            return None
        out.extend(range(int(bounds[0]), int(bounds[-1]) + 1))
    return sorted(set(out))


def spans(indices):
    """Sorted runs of indices as config_db key suffixes: [3, 4, 6] -> ["3-4", "6"]."""
    out = []
    for index in sorted(set(indices)):
        if out and out[-1][1] == index - 1:
            out[-1][1] = index
        else:
            out.append([index, index])
    return ["%d-%d" % (a, b) if a != b else str(a) for a, b in out]


def _lossless(fragment, port):
    """(lossless PGs, lossless queues) of a fragment port whose PORT_QOS_MAP entry states ``pfc_enable`` and a
    ``tc_to_pg_map`` (it owns the port's lossless layout), else None. SONiC enables PFC per TC of the same number."""
    qos = (fragment.get("PORT_QOS_MAP") or {}).get(port) or {}
    pg_map = (fragment.get("TC_TO_PRIORITY_GROUP_MAP") or {}).get(qos.get("tc_to_pg_map"))
    pfc = _indices(qos.get("pfc_enable") or "")
    if not pfc or pg_map is None:
        return None
    queue_map = (fragment.get("TC_TO_QUEUE_MAP") or {}).get(qos.get("tc_to_queue_map")) or {}
    return (sorted({int(pg_map.get(str(tc), tc)) for tc in pfc}),
            sorted({int(queue_map.get(str(tc), tc)) for tc in pfc}))


def _define(tables, running, name, fields):
    """Define buffer profile ``name`` (and its pool) in ``tables`` unless ``running`` has it; None fields: unknown."""
    if name in (running.get("BUFFER_PROFILE") or {}) or fields is None:
        return
    tables["BUFFER_PROFILE"][name] = fields
    pool = fields["pool"]
    if pool not in (running.get("BUFFER_POOL") or {}):
        tables["BUFFER_POOL"][pool] = dict(BUFFER_POOLS[pool])


def _pg_profile(running, speed, cable):
    """The fields buffermgrd would write for pg_lossless_<speed>_<cable>_profile from :data:`PG_PROFILE_LOOKUP`."""
    row = PG_LOSSLESS.get((speed, cable))
    if row is None:
        return None
    pool = (running.get("BUFFER_POOL") or {}).get(LOSSLESS_POOL) or BUFFER_POOLS[LOSSLESS_POOL]
    return {"pool": LOSSLESS_POOL, "size": row["size"], "xon": row["xon"], "xoff": row["xoff"],
            "%s_th" % pool.get("mode", "dynamic"): row["threshold"]}


def buffer_tables(fragment, running):
    """The lossless buffers of the fragment's ports (see the module docstring) for ``running`` (None: a render for
    the traditional model with nothing of the switch's own): ``{table: {key: fields}}``, empty tables left out."""
    running = running or {}
    dynamic = buffer_model(running) == "dynamic"
    tables = {"BUFFER_PG": {}, "BUFFER_QUEUE": {}, "BUFFER_PROFILE": {}, "BUFFER_POOL": {}}
    for port in sorted(fragment.get("PORT_QOS_MAP") or {}, key=port_key):
        lossless = _lossless(fragment, port)
        if lossless is None:
            continue
        pgs, queues = lossless
        for span in spans(queues):
            tables["BUFFER_QUEUE"]["%s|%s" % (port, span)] = {"profile": EGRESS_PROFILE}
        _define(tables, running, EGRESS_PROFILE, dict(EGRESS_PROFILE_FIELDS))
        if dynamic:
            profile = "NULL"
        else:
            speed = ((fragment.get("PORT") or {}).get(port) or {}).get("speed") or \
                ((running.get("PORT") or {}).get(port) or {}).get("speed")
            if not speed:
                continue
            cable = ((running.get("CABLE_LENGTH") or {}).get("AZURE") or {}).get(port) or DEFAULT_CABLE
            profile = "pg_lossless_%s_%s_profile" % (speed, cable)
            _define(tables, running, profile, _pg_profile(running, str(speed), cable))
        for span in spans(pgs):
            tables["BUFFER_PG"]["%s|%s" % (port, span)] = {"profile": profile}
    return {table: entries for table, entries in tables.items() if entries}


# ----------------------------------------------------------------------------- SONiC YANG

_INTS = frozenset(range(2, 5)) | frozenset((16, 17, 18))   # libyang Type.UINT8..UINT32, INT8..INT32
_BOOL = 8
_LEAFREF = 14
_CONTEXTS = {}


def _libyang():
    try:
        import libyang  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise ValidatorUnavailable("validating SONiC config_db needs libyang on the controller: pip install '%s' (it "
                                   "builds against libyang 2 and PCRE2: apt-get install libyang2-dev libpcre2-dev gcc "
                                   "python3-dev; or add it to the execution environment)" % LIBYANG) from None
    return libyang


def _sonic_context(models_dir):
    if models_dir in _CONTEXTS:
        return _CONTEXTS[models_dir]
    if not models_dir or not os.path.isdir(models_dir):
        raise ValidatorUnavailable("validating SONiC config_db needs the SONiC YANG models: a directory with "
                                   "sonic-buildimage's src/sonic-yang-models/yang-models/*.yang and its rendered "
                                   "yang-templates (got %r)" % (models_dir,))
    libyang = _libyang()
    ctx = libyang.Context(models_dir)
    names = sorted(f[:-5] for f in os.listdir(models_dir) if f.endswith(".yang"))
    for name in names:
        ctx.load_module(name)
    tables = {}
    for name in names:
        for node in ctx.find_path("/%s:%s/*" % (name, name)) if _has_top(ctx, name) else ():
            tables[node.name()] = (name, node)
    _CONTEXTS[models_dir] = (ctx, tables)
    return ctx, tables


def _has_top(ctx, name):
    try:
        return next(iter(ctx.find_path("/%s:%s" % (name, name))), None) is not None
    except Exception:  # pylint: disable=broad-except
        return False


def _value(leaf, text):
    """A config_db string as the JSON value libyang wants for ``leaf``."""
    kind = leaf.type()
    base = kind.base()
    if base == _LEAFREF:
        base = kind.leafref_type().base()
    if type(leaf).__name__ == "SLeafList":
        return [_scalar(base, item) for item in str(text).split(",") if item != ""]
    return _scalar(base, text)


def _scalar(base, text):
    if base in _INTS and re.match(r"^-?[0-9]+$", str(text)):
        return int(text)
    if base == _BOOL and str(text).lower() in ("true", "false"):
        return str(text).lower() == "true"
    return str(text)


def sonic_yang_json(config_db, tables):
    """config_db (``{TABLE: {key: {field: value}}}``) as YANG JSON, and the tables no model knows."""
    out, unknown = {}, []
    for table, entries in sorted(config_db.items()):
        if table not in tables:
            unknown.append(table)
            continue
        module, container = tables[table]
        lists = [c for c in container.children() if type(c).__name__ == "SList"]
        groups = {c.name(): c for c in container.children() if type(c).__name__ == "SContainer"}
        body = {}
        for key, fields in sorted(entries.items()):
            if key in groups:
                # A table of fixed entries (DEVICE_METADATA|localhost): a container per key.
                children = {c.name(): c for c in groups[key].children()}
                body[key] = {field: _value(children[field], value) if field in children else value
                             for field, value in sorted((fields or {}).items())}
                continue
            parts = key.split("|")
            slist = next((c for c in lists if len(list(c.keys())) == len(parts)), None)
            if slist is None:
                unknown.append("%s|%s (no list of %s has %d keys)" % (table, key, table, len(parts)))
                continue
            children = {c.name(): c for c in slist.children()}
            entry = {name: _value(children[name], part)
                     for name, part in zip([k.name() for k in slist.keys()], parts)}
            inner = children.get(table)
            for field, value in sorted((fields or {}).items()):
                if inner is not None and type(inner).__name__ == "SList" and field not in children:
                    # A map table: {"0": "1"} -> a list of {key leaf, value leaf}.
                    leaves = list(inner.children())
                    entry.setdefault(table, []).append({leaves[0].name(): _value(leaves[0], field),
                                                        leaves[1].name(): _value(leaves[1], value)})
                elif field in children and type(children[field]).__name__ in ("SLeaf", "SLeafList"):
                    entry[field] = _value(children[field], value)
                else:
                    entry[field] = value   # libyang names the unknown field
            body.setdefault(slist.name(), []).append(entry)
        out.setdefault("%s:%s" % (module, module), {})[table] = body
    return out, unknown


def validate_sonic(config_db, models_dir):
    """Violations of a config_db (a whole one, or a fragment merged into the running config) against the
    SONiC YANG models in ``models_dir``."""
    ctx, tables = _sonic_context(models_dir)
    data, unknown = sonic_yang_json(config_db, tables)
    problems = ["%s: no SONiC YANG model has this table" % name for name in unknown]
    try:
        tree = ctx.parse_data_mem(json.dumps(data), "json", strict=True, validate_present=True)
    except Exception as exc:  # libyang.LibyangError; its message names the path
        return problems + [str(exc)]
    if tree is not None:
        tree.free()
    return problems


# ----------------------------------------------------------------------------- push (Generic Config Updater)

def _pointer(*parts):
    """An RFC 6901 JSON pointer: ``~`` -> ``~0``, ``/`` -> ``~1`` in each part."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def sonic_patch(running, fragment, diff=None):
    """RFC 6902 operations that bring the fragment's tables, keys and fields into ``running``: ``add`` for a
    missing table, key or field, ``replace`` for a field that differs. Nothing of ``running`` that the
    fragment does not state is touched, and the patch of a ``running`` that holds the fragment is ``[]``.
    ``diff`` is ``tree_diff(fragment, running)`` when the caller has it already."""
    ops, whole = [], set()
    for item in tree_diff(fragment, running) if diff is None else diff:
        path = item["path"]
        table = path[0]
        if not isinstance(running.get(table), dict):
            if (table,) not in whole:
                whole.add((table,))
                ops.append({"op": "add", "path": _pointer(table), "value": fragment[table]})
            continue
        key = path[1]
        have = running[table].get(key)
        if not isinstance(have, dict):
            if (table, key) not in whole:
                whole.add((table, key))
                ops.append({"op": "add", "path": _pointer(table, key), "value": fragment[table][key]})
            continue
        field = path[2]
        ops.append({"op": "replace" if field in have else "add", "path": _pointer(table, key, field),
                    "value": fragment[table][key][field]})
    return ops


def sonic_remove_patch(running, owned):
    """``remove`` operations for what we own but no longer want: ``(table, key)`` removes a key,
    ``(table, key, field)`` one field; what ``running`` does not hold is skipped."""
    ops = []
    for entry in sorted({tuple(e) for e in owned}):
        if lookup(running, entry) is not None:
            ops.append({"op": "remove", "path": _pointer(*entry)})
    return ops


SONIC_PORT_TABLES = ("INTERFACE", "VLAN_MEMBER", "PORT_QOS_MAP", "QUEUE", "PFC_WD", "BUFFER_PG")


def sonic_release_patch(running, ports):
    """Operations that remove what this collection put on ``ports`` (stale rail ports): their L3, VLAN
    membership, QoS bindings, queues, watchdog, priority groups, and the marked description."""
    owned = []
    for table in SONIC_PORT_TABLES:
        for key in (running.get(table) or {}):
            parts = key.split("|")
            port = parts[1] if table == "VLAN_MEMBER" and len(parts) == 2 else parts[0]
            if port in ports:
                owned.append((table, key))
    owned += [("PORT", port, "description") for port in ports]
    order = {table: i for i, table in enumerate(SONIC_PORT_TABLES + ("PORT",))}
    return sorted(sonic_remove_patch(running, owned), key=lambda op: order[op["path"].split("/")[1]])


def _unpointer(path):
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:])


def apply_patch(config, ops):
    """A copy of config_db ``config`` after RFC 6902 ``add`` / ``replace`` / ``remove`` operations (what GCU leaves)."""
    out = json.loads(json.dumps(config))
    for op in ops:
        parts = _unpointer(op["path"])
        parent = out
        for part in parts[:-1]:
            parent = parent.setdefault(part, {})
        if op["op"] == "remove":
            parent.pop(parts[-1], None)
        else:
            parent[parts[-1]] = json.loads(json.dumps(op["value"]))
    return out


def for_running(fragment, running):
    """A copy of the fragment fit for ``running``: the lossless buffers of the ports that own their lossless layout
    rebuilt for the running buffer model and buffer objects (:func:`buffer_tables`), and, where a rail port of the
    running config_db binds a ``pfc_to_pg_map`` (qos_config.j2 writes one on Mellanox and Barefoot ASICs, mapping
    only 3 and 4), this collection's map of the port's PFC priorities to their PGs in its place."""
    running = running or {}
    out = {table: {key: dict(fields or {}) for key, fields in entries.items()} for table, entries in fragment.items()}
    owners = {port for port in out.get("PORT_QOS_MAP") or {} if _lossless(out, port) is not None}
    for table in ("BUFFER_PG", "BUFFER_QUEUE"):
        for key in [k for k in out.get(table) or {} if k.split("|")[0] in owners]:
            del out[table][key]
    for table, names in (("BUFFER_PROFILE", [EGRESS_PROFILE]), ("BUFFER_POOL", list(BUFFER_POOLS))):
        for name in [n for n in out.get(table) or {} if n in names or n.startswith("pg_lossless_")]:
            del out[table][name]
    for table, entries in buffer_tables(out, running).items():
        out.setdefault(table, {}).update(entries)
    pg_map = (out.get("TC_TO_PRIORITY_GROUP_MAP") or {})
    for port, mine in sorted((out.get("PORT_QOS_MAP") or {}).items()):
        have = (running.get("PORT_QOS_MAP") or {}).get(port) or {}
        pfc = _indices(mine.get("pfc_enable") or "")
        if not pfc or not have.get("pfc_to_pg_map") or "pfc_to_pg_map" in mine:
            continue
        pgs = pg_map.get(mine.get("tc_to_pg_map")) or {}
        out.setdefault("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", {}).setdefault(MAP, {}).update(
            {str(p): str(pgs.get(str(p), p)) for p in pfc})
        mine["pfc_to_pg_map"] = MAP
    return {table: entries for table, entries in out.items() if entries or table in fragment and not fragment[table]}


def _key(key):
    """``"Ethernet0,Ethernet4|3-4"`` -> {(port, index)} of a QUEUE / BUFFER_PG / BUFFER_QUEUE key, or None."""
    ports, sep, rest = str(key).partition("|")
    indices = _indices(rest) if sep else None
    if not indices:
        return None
    return {(port.strip(), index) for port in ports.split(",") if port.strip() for index in indices}


def _holds(have, want):
    return isinstance(have, dict) and all(str(have.get(field)) == str(value) for field, value in want.items())


def range_changes(running, want):
    """``(removed, want)``: the running ``QUEUE`` / ``BUFFER_PG`` / ``BUFFER_QUEUE`` keys that must go, and ``want``
    with what they covered that it does not own written back with their old value, one key per port and run of
    equal entries. A running key goes when it overlaps a key of ``want`` under another name (``Ethernet0|3-4``
    beside our ``Ethernet0|3``); in :data:`RANGE_COVERS` a key of ours whose indices running ranges already cover,
    each holding its fields, is satisfied and dropped instead (nothing to change). :data:`WHOLE_PORT_TABLES` are
    the fragment's whole on its ports: every other running key of such a port goes, and nothing of it is written
    back (a queue the profile does not use keeps no stock scheduler, which would take a DWRR share)."""
    removed = []
    want = dict(want)
    for table in RANGE_TABLES:
        have = running.get(table) or {}
        mine = dict(want.get(table) or {})
        if not have or not mine:
            continue
        theirs = {key: _key(key) for key in have if _key(key) and isinstance(have[key], dict)}
        ours = {key: _key(key) for key in mine if _key(key)}
        whole = {port for pairs in ours.values() for port, _index in pairs} if table in WHOLE_PORT_TABLES else set()
        overlaps = {key: [k for k in theirs if k != key and theirs[k] & pairs] for key, pairs in ours.items()}
        satisfied = set()
        if table in RANGE_COVERS:
            satisfied = {key for key, over in overlaps.items()
                         if key not in have and over and ours[key] <= set().union(*(theirs[k] for k in over))
                         and all(_holds(have[k], mine[key]) for k in over)}
        # lossless PGs of our ports that no TC maps to any more: they go, and nothing of them is written back
        unmapped = unmapped_lossless_pgs(running, want) if table == "BUFFER_PG" else set()
        while True:   # a range that goes for one key of ours satisfies no other
            doomed = {k for key, over in overlaps.items() if key not in satisfied for k in over}
            doomed |= {k for k, pairs in theirs.items() if k not in mine and {port for port, _i in pairs} & whole}
            doomed |= {k for k, pairs in theirs.items() if k not in mine and pairs & unmapped}
            broken = {key for key in satisfied if doomed & set(overlaps[key])}
            if not broken:
                break
            satisfied -= broken
        owned = set().union(*[pairs for key, pairs in ours.items() if key not in satisfied])
        kept = set().union(*[pairs for key, pairs in theirs.items() if key not in doomed])
        rest = {}
        for key in sorted(doomed, key=port_key):
            removed.append((table, key))
            for port, index in sorted(theirs[key]):
                if (port, index) not in owned | kept | unmapped and port not in whole:
                    rest.setdefault(port, {}).setdefault(index, have[key])
        for key in satisfied:
            del mine[key]
        for port, entries in sorted(rest.items()):
            runs = []
            for index in sorted(entries):
                if runs and runs[-1][1] == index - 1 and runs[-1][2] == entries[index]:
                    runs[-1][1] = index
                else:
                    runs.append([index, index, entries[index]])
            for first, last, fields in runs:
                mine["%s|%s" % (port, spans([first, last])[0])] = dict(fields)
        want[table] = mine
    return removed, want


def unmapped_lossless_pgs(running, want):
    """``{(port, PG)}`` of the running lossless ``BUFFER_PG`` entries on the ports whose lossless layout ``want`` owns
    (:func:`_lossless`: it states their ``pfc_enable`` and ``tc_to_pg_map``) that no TC of that map sends traffic to:
    headroom left from an earlier profile (the stock ``3-4`` under nvidia's map, which sends TC 4 to PG 0). Ports the
    fragment does not own (uplinks) are never touched."""
    out = set()
    for key, fields in (running.get("BUFFER_PG") or {}).items():
        pairs = _key(key)
        if not pairs or not isinstance(fields, dict) or \
                not lossless_pg_profile(fields.get("profile"), running.get("BUFFER_PROFILE")):
            continue
        for port, index in pairs:
            qos = (want.get("PORT_QOS_MAP") or {}).get(port) or {}
            pg_map = (want.get("TC_TO_PRIORITY_GROUP_MAP") or {}).get(qos.get("tc_to_pg_map"))
            if _lossless(want, port) is not None and index not in {int(pg) for pg in pg_map.values()}:
                out.add((port, index))
    return out


def stale_fields(running, want):
    """``(table, key, field)`` of the :data:`STALE_FIELDS` that running entries of ``want``'s keys hold and ``want``
    leaves out (a PORT_QOS_MAP entry counts when it states ``pfc_enable``)."""
    out = []
    for table, fields in sorted(STALE_FIELDS.items()):
        for key, entry in sorted((want.get(table) or {}).items()):
            have = (running.get(table) or {}).get(key)
            if not isinstance(have, dict) or (table == "PORT_QOS_MAP" and "pfc_enable" not in entry):
                continue
            out.extend((table, key, field) for field in fields if field in have and field not in entry)
    return out


def sonic_changes(running, fragment):
    """``(ops, diff)``: the RFC 6902 patch that brings the fragment into config_db ``running`` and its diff items.

    The fragment is made fit for the running config_db (:func:`for_running`); overlapping range keys go and what
    they covered beyond the fragment is written back (:func:`range_changes`); stale PFC fields go
    (:func:`stale_fields`). The removals come first (diff ``after`` None), then :func:`sonic_patch` against the
    running config_db without them. The patch of a running config_db that holds all this is ``[]``."""
    running = running or {}
    removed, want = range_changes(running, for_running(fragment, running))
    removed += stale_fields(running, want)
    ops = [{"op": "remove", "path": _pointer(*path)} for path in removed]
    items = [{"path": tuple(path), "before": lookup(running, path), "after": None} for path in removed]
    pruned = apply_patch(running, ops)
    diff = tree_diff(want, pruned)
    return ops + sonic_patch(pruned, want, diff), items + diff


# The GCU patch file on the switch: mktemp's template, and the name it may print back (checked before use).
PATCH_TEMPLATE = "/tmp/ainet-fabric-patch.XXXXXXXXXX"
PATCH_NAME = re.compile(r"/tmp/ainet-fabric-patch\.[A-Za-z0-9]{10}")


def sonic_push(run, fragment, check=False, sudo=False, dry_run_in_check=False):
    """Push a config_db fragment with the Generic Config Updater: ``{"changed", "patch", "diff", "released"}``.

    ``run(argv, data=None) -> (rc, stdout, stderr)`` runs a command on the switch. Check mode reads only,
    unless ``dry_run_in_check`` asks GCU to validate the patch (``config apply-patch --dry-run``), which
    writes the patch to a temporary file on the switch. ``sudo`` prefixes the commands that need root
    (``config``). The patch file is made by ``mktemp`` on the switch (a new random name, created 0600 with
    ``O_EXCL``: no other user can have it first or swap it in the sticky /tmp), filled through its argument (never a
    shell word) and removed afterwards."""
    rc, out, err = run(["sonic-cfggen", "-d", "--print-data"])
    if rc != 0:
        raise PushError("sonic-cfggen -d --print-data failed (rc %d): %s" % (rc, (err or out).strip()[:300]))
    try:
        running = json.loads(out)
    except ValueError:
        raise PushError("sonic-cfggen printed no config_db JSON: %s" % out[:200]) from None
    release = sorted(port for port, fields in (running.get("PORT") or {}).items()
                     if is_owned((fields or {}).get("description")) and port not in (fragment.get("PORT") or {}))
    ops, diff = sonic_changes(running, fragment)
    gone = {op["path"] for op in ops if op["op"] == "remove"}
    released_ops = [op for op in sonic_release_patch(running, set(release)) if op["path"] not in gone]
    ops += released_ops
    for op in released_ops:
        path = _unpointer(op["path"])
        diff.append({"path": path, "before": lookup(running, path), "after": None})
    result = {"changed": bool(ops), "patch": ops, "diff": diff, "released": release}
    if not ops or (check and not dry_run_in_check):
        return result
    rc, out, err = run(["mktemp", PATCH_TEMPLATE])
    patch_file = (out or "").strip()
    if rc != 0 or not PATCH_NAME.fullmatch(patch_file):
        raise PushError("mktemp %s failed (rc %d): %s" % (PATCH_TEMPLATE, rc, " ".join((err or out or "").split())[:300]))
    apply = ["config", "apply-patch"] + (["--dry-run"] if check else []) + [patch_file]
    steps = ((["sh", "-c", 'cat > "$1"', "sh", patch_file], json.dumps(ops, indent=2)),
             ((["sudo", "-n"] if sudo else []) + apply, None))
    try:
        for argv, data in steps:
            rc, out, err = run(argv, data)
            if rc != 0:
                raise PushError("%s failed (rc %d): %s" % (" ".join(argv[:4]), rc, (err or out).strip()[-500:]))
    finally:
        run(["rm", "-f", patch_file])
    return result


# ----------------------------------------------------------------------------- read (the lossless check)

# How the lossless check reads the switch (tor/tor_read.py): over its own connection, as the push reads it.
READ = ("ssh",)
READ_COMMAND = ("sonic-cfggen", "-d", "--print-data")


def read(connection, via):
    """The running config_db as JSON text (what ``parse_qos`` reads as ``sonic_config_db``), from
    ``sonic-cfggen -d --print-data`` (what ``config save`` writes); ``via`` ``"ssh"``, ``connection``
    ``run(argv, data=None) -> (rc, stdout, stderr)`` on the switch. Reads only; :class:`PushError` when it fails."""
    if via != "ssh":
        raise ValueError("SONiC is read over its connection (ssh), not %r" % (via,))
    out = read_command(connection, READ_COMMAND)
    try:
        tables = json.loads(out)
    except ValueError:
        tables = None
    if not isinstance(tables, dict):
        raise PushError("%s printed no config_db JSON: %s" % (" ".join(READ_COMMAND), " ".join(out.split())[:200]))
    return out


# The load test's counters (qos/counters_parse.py formats): sonic-utilities' show commands, read-only
# (``scripts/pfcstat``, ``scripts/queuestat``, ``pfcwd/main.py`` ``show stats``, ``scripts/pg-drop``; ``sonic-clear``
# would reset them, never run here). Each prints every port; the verdict keeps the link's
# (``parse_counters(..., port=)``). The egress queue counters miss two places a lossless class loses packets: the
# PFC watchdog's drops on a stormed queue (``show pfcwd stats``, format ``sonic_pfcwd``) and the ingress priority
# groups' drops when the headroom overflows (``show priority-group drop counters``, ``sonic_pg_drop``), which the PG
# headroom high-water mark (``show priority-group persistent-watermark headroom``, ``sonic_pg_headroom``; polled every
# 60 s by default, PG_WATERMARK_STAT, so it may lag the run: named, never judged) tells from another cause.
COUNTER_READ = ("ssh",)
COUNTER_COMMANDS = (("sonic_pfc", ("show", "pfc", "counters")), ("sonic_queue", ("show", "queue", "counters")),
                    # -e: every watched queue, also one whose counters are all 0/0 (pfcwd/main.py collect_stats leaves
                    # it out otherwise, so its first storm would have no value before the load)
                    ("sonic_pfcwd", ("show", "pfcwd", "stats", "-e")),
                    ("sonic_pg_drop", ("show", "priority-group", "drop", "counters")),
                    ("sonic_pg_headroom", ("show", "priority-group", "persistent-watermark", "headroom")))
# The reads that count the drops of a lossless class (load_verdict: a drop stage that was not read leaves the class
# inconclusive, never lossless), each with how to make it readable. PG drops need their flex counter group polled:
# scripts/pg-drop check_if_stats_enabled prints one warning and exits 0 without it.
DROP_STAGES = {"sonic_queue": "`counterpoll queue enable` (QUEUE_STAT), then `show queue counters`",
               "sonic_pfcwd": "the PFC watchdog (`config pfcwd start_default`) on a release with `show pfcwd stats`",
               "sonic_pg_drop": "`counterpoll pg-drop enable` (PG_DROP_STAT), then `show priority-group drop counters`"}
# Reads a release may not have (the watchdog's CLI, PG drop counters: sonic-utilities 2021 on): a failure is kept
# as its one line, which the parser reports as the read's problem, and the other reads go on.
OPTIONAL_COUNTERS = ("sonic_pfcwd", "sonic_pg_drop", "sonic_pg_headroom")
# The show commands print COUNTERS_DB, which the flex counters refresh by polling the ASIC: port counters (PFC) every
# second, queue counters (drops) and PG drop counters every 10 s by default (sonic-net/sonic-swss#483; `counterpoll
# show`: QUEUE_STAT default (10000), PORT_STAT default (1000), PG_DROP_STAT default (10000)). A read taken right
# after the load can miss its last 10 s of drops: the load test waits this long before its read after the load, or
# as long as the groups it reads are configured to poll (:func:`read_counter_settle`).
COUNTER_SETTLE = 10
SETTLE_COMMAND = ("counterpoll", "show")
SETTLE_GROUPS = ("PORT_STAT", "QUEUE_STAT", "PG_DROP_STAT")


def read_counters(connection, via, ports=None):
    """``{format: text}`` of the switch's PFC, queue, PFC watchdog and ingress PG drop counters and PG headroom
    watermarks (``COUNTER_COMMANDS``)
    over its connection (``via`` ``"ssh"``, ``connection`` as for :func:`read`); ``ports`` is not needed (every port
    is printed). Reads only; :class:`PushError` naming the command when one of the first two fails (an
    ``OPTIONAL_COUNTERS`` read that fails is its error line, reported by its parser)."""
    if via != "ssh":
        raise ValueError("SONiC counters are read over its connection (ssh), not %r" % (via,))
    out = {}
    for fmt, command in COUNTER_COMMANDS:
        try:
            out[fmt] = read_command(connection, command)
        except PushError as exc:
            if fmt not in OPTIONAL_COUNTERS:
                raise
            out[fmt] = str(exc)
    return out


def counter_settle(text):
    """``(seconds, source)`` of the poll intervals ``counterpoll show`` prints for the groups the load test reads
    (``SETTLE_GROUPS``, enabled ones): the longest, in whole seconds; ``(None, why)`` when none is printed."""
    groups, problems = parse_sonic_counterpoll(text)
    used = [(name, groups[name]["interval_ms"]) for name in SETTLE_GROUPS if (groups.get(name) or {}).get("enabled")]
    if not used:
        return None, "counterpoll show printed none of %s enabled%s" % (
            ", ".join(SETTLE_GROUPS), (": " + "; ".join(problems)) if problems else "")
    longest = max(ms for _name, ms in used)
    return whole_seconds(longest), "counterpoll show: %s" % ", ".join("%s %d ms" % item for item in used)


def read_counter_settle(connection, via):
    """``(seconds, source)`` of :func:`counter_settle` on what ``counterpoll show`` prints over the switch's
    connection; :class:`PushError` when it fails."""
    if via != "ssh":
        raise ValueError("SONiC counters are read over its connection (ssh), not %r" % (via,))
    return counter_settle(read_command(connection, SETTLE_COMMAND))


def lldp_port_aliases(config_db, tor="the ToR"):
    """``{alias (lower case): EthernetN}`` from a SONiC config_db (JSON text, bytes or the parsed object: the
    ``PORT`` table, as ``config_db.json`` and ``sonic-cfggen -d --print-data`` print it). A port without an
    ``alias`` maps its own name (lldpmgrd announces the name then). Two ports with one alias, or text that is not
    a config_db, raise one-line ``FabricError`` naming ``tor`` and the field."""
    data = config_db
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise FabricError("the config_db of %s is not JSON (%s); Fix: give the switch's "
                              "/etc/sonic/config_db.json or 'sonic-cfggen -d --print-data'"
                              % (tor, str(exc).splitlines()[0]))
    if not isinstance(data, dict):
        raise FabricError("the config_db of %s is a %s, expected an object with a PORT table"
                          % (tor, type(data).__name__))
    ports = data.get("PORT")
    if ports is None:
        return {}
    if not isinstance(ports, dict):
        raise FabricError("PORT of the config_db of %s is a %s, expected {EthernetN: {alias: ...}}"
                          % (tor, type(ports).__name__))
    out = {}
    for name, fields in sorted(ports.items()):
        alias = (fields or {}).get("alias") if isinstance(fields, dict) else None
        alias = str(alias).strip() if alias not in (None, "") else name
        key = alias.lower()
        if key in out and out[key] != name:
            raise FabricError("config_db of %s: PORT|%s and PORT|%s have the same alias %r; Fix: "
                              "give every port its own alias (SONiC announces the alias over LLDP)"
                              % (tor, out[key], name, alias))
        out[key] = name
    return out
