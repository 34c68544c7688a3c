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

:func:`planned_name` turns one neighbour into the port name the plan uses, or says why it cannot. Which NOS
announces an alias, and the alias table of a ToR, come from the ToR platform registry (``tor.platforms``:
``lldp_announces_alias``, ``lldp_port_aliases``, read by the cabling_check action), since this wing does not know
platforms.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.cabling.lldp_parse import neighbour_port


def planned_name(neighbour, announces_alias=False, aliases=None):
    """``(port, why)``: the port ``neighbour`` (a parser entry) names, as the plan names the ToR's ports, and
    None or the reason it cannot be verified.

    ``announces_alias``: the ToR the neighbour is runs a NOS that announces the port alias (SONiC); ``aliases``:
    that ToR's ``{alias (lower case): port}`` table (None: no PORT table given). A Port ID of subtype ``local``
    from such a ToR is the port's alias: mapped through ``aliases``; without them, or when the alias is not in
    them, the port is None and ``why`` says so. Every other case is :func:`lldp_parse.neighbour_port`."""
    port_id = neighbour.get("port_id")
    kind = (neighbour.get("port_id_type") or "").lower()
    if not announces_alias or kind != "local" or not port_id:
        return neighbour_port(neighbour), None
    if aliases is None:
        return None, ("the ToR announces the port alias %r (LLDP Port ID subtype local), not the port's name; give "
                      "the ToR's config_db (its PORT table has the aliases) to verify the port" % port_id)
    name = aliases.get(port_id.strip().lower())
    if name is None:
        return None, "the port alias %r is in no PORT entry of the ToR's config_db" % port_id
    return name, None
