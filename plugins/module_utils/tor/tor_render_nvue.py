# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A ToR's Cumulus Linux NVUE configuration from its intent (:func:`tor_intent.tor_intent`).

``render_nvue(intent)`` returns the body of one ``- set:`` document (a nested dict, the same tree
the NVUE REST API patches); ``nvue_text(body)`` the YAML that ``nv config apply -y <file>`` takes.
The object model is Cumulus Linux ``RELEASE`` (5.14): 5.18 renames ``interface.ip`` and
``qos.roce.enable``, so the release is pinned and the tests validate against its schema.

What is set:

* per rail port ``swpN``: ``type swp``, description, ``link`` (``state up``, ``mtu``, ``speed`` /
  ``fec`` when the model sets them), and by addressing mode ``ip address <gateway>`` (exclusive,
  p2p) or ``bridge domain br_default access <vlan>`` (shared, with ``vlan<id>`` SVIs holding the
  rail gateway and the VLANs in ``br_default``);
* ``service lldp state enabled``;
* the lossless profile: ``qos roce`` lossless (Cumulus's RoCE baseline, which sizes the lossless
  ingress pool and headroom) and, on the rail ports, this collection's own profiles named
  ``PROFILE`` for ``mapping`` (trust, the RoCE and CNP DSCPs), ``pfc`` (the PFC priorities),
  ``congestion-control`` (ECN on the ECN queues) and ``egress-scheduler`` (DWRR weights, strict
  CNP queue), ``pfc-watchdog`` on the ports when the profile wants it, and the
  ``roce-lossless`` traffic pool on the PFC priorities. NVUE has no per-port switch-priority to
  traffic-class map, so ``egress-queue-mapping default-global`` is set to identity (the one global
  object written besides ``qos roce``).

Trust: ``dscp`` -> ``l3``, ``pcp,dscp`` -> ``both``. Every map key is a string, as NVUE's.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.common.file_formats import yaml_dump

RELEASE = "5.14"
PROFILE = "ainet-roce"
POOL = "roce-lossless"
BRIDGE = "br_default"
TRUST = {"dscp": "l3", "pcp,dscp": "both"}
FEC = {"rs": "rs", "fc": "baser", "none": "off"}


def render_nvue(intent):
    """The ``set`` body of one ToR (see the module docstring)."""
    q = intent["qos"]
    interfaces = {}
    for entry in intent["ports"]:
        link = {"state": {"up": {}}, "mtu": entry["mtu"]}
        if entry["speed"]:
            link["speed"] = entry["speed"]
        if entry["fec"]:
            link["fec"] = FEC[entry["fec"]]
        conf = {"type": "swp", "description": entry["description"], "link": link}
        if entry["address"]:
            conf["ip"] = {"address": {entry["address"]: {}}}
        else:
            conf["bridge"] = {"domain": {BRIDGE: {"access": entry["vlan"]}}}
        if q:
            conf["qos"] = {feature: {"profile": PROFILE}
                           for feature in ("mapping", "pfc", "congestion-control", "egress-scheduler")}
            if q["watchdog"]:
                conf["qos"]["pfc-watchdog"] = {"state": "enable"}
        interfaces[entry["port"]] = conf
    body = {"interface": interfaces, "service": {"lldp": {"state": "enabled"}}}
    if intent["svis"]:
        body["bridge"] = {"domain": {BRIDGE: {"vlan": {str(svi["vlan"]): {} for svi in intent["svis"]}}}}
        for svi in intent["svis"]:
            interfaces["vlan%d" % svi["vlan"]] = {"type": "svi", "vlan": svi["vlan"],
                                                  "ip": {"address": {svi["address"]: {}}},
                                                  "link": {"mtu": svi["mtu"]}}
    if q:
        body["qos"] = _qos(q)
    return body


def _qos(q):
    ets = {str(queue): {"mode": "dwrr", "bw-percent": weight} for queue, weight in sorted(q["ets"].items())}
    for queue in q["strict_queues"]:
        ets[str(queue)] = {"mode": "strict"}
    out = {
        "roce": {"enable": "on", "mode": "lossless"},
        "mapping": {PROFILE: {"trust": TRUST[q["trust"]],
                              "dscp": {str(d): {"switch-priority": p} for d, p in sorted(q["dscp_to_priority"].items())}}},
        "pfc": {PROFILE: {"switch-priority": {str(p): {} for p in q["pfc"]}}},
        "egress-queue-mapping": {"default-global": {"switch-priority": {
            str(p): {"traffic-class": queue} for p, queue in sorted(q["priority_to_queue"].items())}}},
        "traffic-pool": {POOL: {"switch-priority": {str(p): {} for p in q["buffer_lossless"]}}},
    }
    if q["ecn"]:
        out["congestion-control"] = {PROFILE: {"traffic-class": {
            str(queue): {"ecn": "enable", "min-threshold": q["ecn"]["min_bytes"],
                         "max-threshold": q["ecn"]["max_bytes"], "probability": q["ecn"]["probability"]}
            for queue in q["ecn"]["queues"]}}}
    else:
        out["congestion-control"] = {PROFILE: {}}
    out["egress-scheduler"] = {PROFILE: {"traffic-class": ets} if ets else {}}
    return out


def nvue_text(body, header=None):
    """The ``nv config apply`` YAML of a ``set`` body: a list with one ``set`` document."""
    return yaml_dump([{"set": body}], header=header, plain=True)
