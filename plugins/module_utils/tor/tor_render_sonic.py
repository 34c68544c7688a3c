# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A ToR's SONiC ``config_db`` fragment from its intent (:func:`tor_intent.tor_intent`).

``render_sonic(intent)`` returns the tables SONiC needs for the ToR's rail ports, as a dict ready
for ``json.dumps`` (``config load`` input, or the source of a Generic Config Updater patch):

* ``PORT``: every rail port admin up, its MTU, description, and ``speed`` (Mb/s) / ``fec`` when
  the model sets them;
* L3 by addressing mode: exclusive/p2p: ``INTERFACE`` with the plan's gateway address on the port;
  shared: one VLAN per rail with the ports untagged members and the rail gateway on
  ``VLAN_INTERFACE``;
* ``FEATURE|lldp`` enabled;
* the lossless profile: ``DSCP_TO_TC_MAP`` ``AINET`` (the RoCE and CNP DSCPs on their priorities,
  every other DSCP on 0), identity ``TC_TO_QUEUE_MAP`` / ``TC_TO_PRIORITY_GROUP_MAP`` /
  ``MAP_PFC_PRIORITY_TO_QUEUE``, ``PORT_QOS_MAP`` per port with ``pfc_enable``, ``WRED_PROFILE``
  ``AINET_LOSSLESS`` (ECN on every colour at the profile's thresholds) on the ECN queues,
  ``SCHEDULER`` with the ETS weights and a strict CNP queue, ``PFC_WD`` on every port when the
  profile wants the watchdog, and ``BUFFER_PG`` lossless priority groups with ``"profile": "NULL"``
  (SONiC's dynamic buffer model computes their headroom).

Every value is a string, as in config_db. Objects this collection names start with ``AINET``.
"""

from __future__ import annotations

MAP = "AINET"
WRED = "AINET_LOSSLESS"
STRICT = "AINET_STRICT"
WATCHDOG = {"action": "drop", "detection_time": "200", "restoration_time": "200"}
FEC = {"rs": "rs", "fc": "fc", "none": "none"}


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
    return out


def _qos(out, q, ports):
    dscp_map = {str(d): "0" for d in range(64)}
    for dscp, priority in q["dscp_to_priority"].items():
        dscp_map[str(dscp)] = str(priority)
    identity = {str(p): str(queue) for p, queue in q["priority_to_queue"].items()}
    out["DSCP_TO_TC_MAP"] = {MAP: dscp_map}
    out["TC_TO_QUEUE_MAP"] = {MAP: dict(identity)}
    out["TC_TO_PRIORITY_GROUP_MAP"] = {MAP: dict(identity)}
    out["MAP_PFC_PRIORITY_TO_QUEUE"] = {MAP: dict(identity)}
    pfc = ",".join(str(p) for p in q["pfc"])
    out["PORT_QOS_MAP"] = {port: {"dscp_to_tc_map": MAP, "tc_to_queue_map": MAP, "tc_to_pg_map": MAP,
                                  "pfc_to_queue_map": MAP, "pfc_enable": pfc}
                           for port in ports}
    ecn = q["ecn"]
    if ecn:
        wred = {"ecn": "ecn_all"}
        for colour in ("green", "yellow", "red"):
            wred.update({"wred_%s_enable" % colour: "true",
                         "%s_min_threshold" % colour: str(ecn["min_bytes"]),
                         "%s_max_threshold" % colour: str(ecn["max_bytes"]),
                         "%s_drop_probability" % colour: str(ecn["probability"])})
        out["WRED_PROFILE"] = {WRED: wred}
    schedulers = {}
    if q["strict_queues"]:
        schedulers[STRICT] = {"type": "STRICT"}
    for queue, weight in sorted(q["ets"].items()):
        schedulers[_dwrr(queue)] = {"type": "DWRR", "weight": str(weight)}
    queues = {}
    for port in ports:
        for queue in range(8):
            entry = {}
            if queue in q["strict_queues"]:
                entry["scheduler"] = STRICT
            elif queue in q["ets"]:
                entry["scheduler"] = _dwrr(queue)
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
    out["BUFFER_PG"] = {"%s|%d" % (port, prio): {"profile": "NULL"} for port in ports for prio in q["buffer_lossless"]}
