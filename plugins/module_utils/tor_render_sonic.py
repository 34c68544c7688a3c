# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A ToR's SONiC ``config_db`` fragment from the rail plan's per-ToR view (first step of issue 12).

``render_sonic(plan, tor)`` returns the tables SONiC needs for the ToR's rail ports, as a dict
ready for ``json.dumps`` (``config load`` / ``config reload`` input, or a GCU patch source):

* ``PORT``: every rail port admin up, its MTU and a description naming the node and NIC;
* L3 by addressing mode: exclusive/p2p: ``INTERFACE`` with the plan's gateway address on the
  port; shared: one VLAN per rail (``1000 + rail``) with the ports untagged members and the
  rail gateway on ``VLAN_INTERFACE``; infiniband: no Ethernet ToR, an error;
* ``FEATURE|lldp`` enabled;
* the fabric's lossless profile: ``DSCP_TO_TC_MAP`` (the RoCE and CNP DSCPs on their
  priorities, every other DSCP on 0), ``TC_TO_QUEUE_MAP`` and ``TC_TO_PRIORITY_GROUP_MAP``
  (identity), ``PORT_QOS_MAP`` with ``pfc_enable``, ``WRED_PROFILE`` ``AINET_LOSSLESS`` with
  ECN on every colour at the profile's thresholds on the ECN queues, ``SCHEDULER`` with the
  profile's ETS weights and a strict CNP queue, ``PFC_WD`` on every port when the profile wants
  the watchdog, and ``BUFFER_PG`` lossless priority groups with ``"profile": "NULL"`` (SONiC's
  dynamic buffer model computes their headroom).

Every value is a string, as in config_db. Addresses come from the plan, never recomputed.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.errors import FabricModelError

MAP = "AINET"
WRED = "AINET_LOSSLESS"
STRICT = "AINET_STRICT"
VLAN_BASE = 1000
DEFAULT_PORT_MTU = 9216
WATCHDOG = {"action": "drop", "detection_time": "200", "restoration_time": "200"}


def _dwrr(queue):
    return "AINET_DWRR_%d" % queue


def render_sonic(plan, tor_name, port_mtu=DEFAULT_PORT_MTU):
    """The config_db fragment of ToR ``tor_name`` (see the module docstring)."""
    tor = plan["tors"][tor_name]
    fabric = plan["cluster"]["fabrics"][tor["fabric"]]
    mode = fabric["addressing"]["mode"]
    if mode == "infiniband":
        raise FabricModelError("tors[%s].platform" % tor_name, tor.get("platform"),
                               "is an Ethernet NOS on an InfiniBand fabric", "leave platform unset for IB switches")
    profile = fabric.get("qos")
    out = {"PORT": {}, "FEATURE": {"lldp": {"state": "enabled"}}}
    for entry in tor["ports"]:
        out["PORT"][entry["port"]] = {
            "admin_status": "up", "mtu": str(port_mtu),
            "description": "%s %s rail %d" % (entry["host"], entry.get("interface") or "", entry["rail"]),
        }
    if mode in ("exclusive", "p2p"):
        out["INTERFACE"] = {}
        for entry in tor["ports"]:
            out["INTERFACE"][entry["port"]] = {}
            out["INTERFACE"]["%s|%s" % (entry["port"], entry["address"])] = {}
    else:
        out["VLAN"], out["VLAN_MEMBER"], out["VLAN_INTERFACE"] = {}, {}, {}
        for svi in tor["svis"]:
            vlan = "Vlan%d" % (VLAN_BASE + svi["rail"])
            out["VLAN"][vlan] = {"vlanid": str(VLAN_BASE + svi["rail"]), "mtu": str(port_mtu)}
            out["VLAN_INTERFACE"][vlan] = {}
            out["VLAN_INTERFACE"]["%s|%s" % (vlan, svi["address"])] = {}
        for entry in tor["ports"]:
            out["VLAN_MEMBER"]["Vlan%d|%s" % (VLAN_BASE + entry["rail"], entry["port"])] = {"tagging_mode": "untagged"}
    if profile:
        _qos(out, profile, [e["port"] for e in tor["ports"]])
    return out


def _qos(out, p, ports):
    dscp_map = {str(d): "0" for d in range(64)}
    dscp_map[str(p["roce_dscp"])] = str(p["roce_priority"])
    dscp_map[str(p["cnp_dscp"])] = str(p["cnp_priority"])
    identity = {str(q): str(q) for q in range(8)}
    out["DSCP_TO_TC_MAP"] = {MAP: dscp_map}
    out["TC_TO_QUEUE_MAP"] = {MAP: dict(identity)}
    out["TC_TO_PRIORITY_GROUP_MAP"] = {MAP: dict(identity)}
    out["MAP_PFC_PRIORITY_TO_QUEUE"] = {MAP: dict(identity)}
    pfc = ",".join(str(q) for q in p["pfc_priorities"])
    out["PORT_QOS_MAP"] = {port: {"dscp_to_tc_map": MAP, "tc_to_queue_map": MAP, "tc_to_pg_map": MAP,
                                  "pfc_to_queue_map": MAP, "pfc_enable": pfc}
                           for port in ports}
    schedulers, queues = {}, {}
    weights = {int(q): w for q, w in (p.get("ets_weights") or {}).items()}
    if p.get("cnp_strict"):
        schedulers[STRICT] = {"type": "STRICT"}
    for queue, weight in sorted(weights.items()):
        schedulers[_dwrr(queue)] = {"type": "DWRR", "weight": str(weight)}
    ecn_queues = p.get("ecn_queues") or list(p["pfc_priorities"])
    if p.get("ecn_min_bytes") or p.get("ecn_max_bytes"):
        out["WRED_PROFILE"] = {WRED: {
            "ecn": "ecn_all", "wred_green_enable": "true", "wred_yellow_enable": "true", "wred_red_enable": "true",
            "green_min_threshold": str(p["ecn_min_bytes"]), "green_max_threshold": str(p["ecn_max_bytes"]),
            "yellow_min_threshold": str(p["ecn_min_bytes"]), "yellow_max_threshold": str(p["ecn_max_bytes"]),
            "red_min_threshold": str(p["ecn_min_bytes"]), "red_max_threshold": str(p["ecn_max_bytes"]),
            "green_drop_probability": str(p["ecn_probability"] or 100),
            "yellow_drop_probability": str(p["ecn_probability"] or 100),
            "red_drop_probability": str(p["ecn_probability"] or 100)}}
    for port in ports:
        for queue in range(8):
            entry = {}
            if p.get("cnp_strict") and queue == p["cnp_priority"]:
                entry["scheduler"] = STRICT
            elif queue in weights:
                entry["scheduler"] = _dwrr(queue)
            if "WRED_PROFILE" in out and queue in ecn_queues:
                entry["wred_profile"] = WRED
            if entry:
                queues["%s|%d" % (port, queue)] = entry
    if schedulers:
        out["SCHEDULER"] = schedulers
    if queues:
        out["QUEUE"] = queues
    if p.get("pfc_watchdog"):
        out["PFC_WD"] = {port: dict(WATCHDOG) for port in ports}
        out["PFC_WD"]["GLOBAL"] = {"POLL_INTERVAL": "200"}
        for port in ports:
            out["PORT_QOS_MAP"][port]["pfcwd_sw_enable"] = pfc
    out["BUFFER_PG"] = {"%s|%d" % (port, prio): {"profile": "NULL"} for port in ports for prio in p["pfc_priorities"]}
