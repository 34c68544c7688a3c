# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch port a ToR's LLDP frames name, in the plan's naming scheme.

What each NOS puts in the Port ID TLV (sources in docs/workloads.md, "What each NOS announces"):

* SONiC: ``lldpmgrd`` (sonic-buildimage ``dockers/docker-lldp/lldpmgrd``) runs, per front-panel port,
  ``lldpcli configure ports <EthernetN> lldp portidsubtype local <alias> [description <description>]`` with the
  ``alias`` and ``description`` of the port's PORT entry (the port name when it has no alias). So the Port ID is
  the platform's alias (``etp2``, ``etp1a`` on a breakout, ``fortyGigE0/4``, ``Ethernet1/1``), subtype ``local``,
  not ``EthernetN``; the plan names SONiC ports ``EthernetN``, so the alias is looked up in the ToR's PORT table
  (config_db ``PORT|EthernetN`` ``alias``). Before lldpmgrd has configured a port, lldpd announces its ifname
  (``lldpd.conf.j2``: ``configure lldp portidsubtype ifname``): ``EthernetN``, subtype ``ifname``.
* Cumulus Linux (lldpd), Arista EOS, Cisco NX-OS, Dell OS10: the interface name, subtype ``ifname``
  (``swp17``, ``Ethernet17/1``, ``Ethernet1/14``, ``ethernet1/1/1``): compared as announced.

:func:`sonic_port_aliases` reads the PORT table; :func:`planned_name` turns one neighbour into the port name the
plan uses, or says why it cannot.
"""

from __future__ import annotations

import json

from ansible_collections.ainet.fabric.plugins.module_utils.cabling.lldp_parse import neighbour_port
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError


def sonic_port_aliases(config_db, tor="the ToR"):
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
            raise FabricError("cabling check: the config_db of %s is not JSON (%s); Fix: give the switch's "
                              "/etc/sonic/config_db.json or 'sonic-cfggen -d --print-data'"
                              % (tor, str(exc).splitlines()[0]))
    if not isinstance(data, dict):
        raise FabricError("cabling check: the config_db of %s is a %s, expected an object with a PORT table"
                          % (tor, type(data).__name__))
    ports = data.get("PORT")
    if ports is None:
        return {}
    if not isinstance(ports, dict):
        raise FabricError("cabling check: PORT of the config_db of %s is a %s, expected {EthernetN: {alias: ...}}"
                          % (tor, type(ports).__name__))
    out = {}
    for name, fields in sorted(ports.items()):
        alias = (fields or {}).get("alias") if isinstance(fields, dict) else None
        alias = str(alias).strip() if alias not in (None, "") else name
        key = alias.lower()
        if key in out and out[key] != name:
            raise FabricError("cabling check: config_db of %s: PORT|%s and PORT|%s have the same alias %r; Fix: "
                              "give every port its own alias (SONiC announces the alias over LLDP)"
                              % (tor, out[key], name, alias))
        out[key] = name
    return out


def planned_name(neighbour, platform=None, aliases=None):
    """``(port, why)``: the port ``neighbour`` (a parser entry) names, as the plan names the ToR's ports, and
    None or the reason it cannot be verified.

    ``platform``: the plan's platform of the ToR the neighbour is (None: unknown); ``aliases``: that ToR's
    :func:`sonic_port_aliases` (None: no PORT table given). A SONiC Port ID of subtype ``local`` is the port's
    alias: mapped to ``EthernetN`` through ``aliases``; without them, or when the alias is not in them, the port
    is None and ``why`` says so. Every other case is :func:`lldp_parse.neighbour_port`."""
    port_id = neighbour.get("port_id")
    kind = (neighbour.get("port_id_type") or "").lower()
    if platform != "sonic" or kind != "local" or not port_id:
        return neighbour_port(neighbour), None
    if aliases is None:
        return None, ("SONiC announces the port alias %r (LLDP Port ID subtype local), not its EthernetN name; give "
                      "the ToR's config_db (its PORT table has the aliases) to verify the port" % port_id)
    name = aliases.get(port_id.strip().lower())
    if name is None:
        return None, "the port alias %r is in no PORT entry of the ToR's config_db" % port_id
    return name, None
