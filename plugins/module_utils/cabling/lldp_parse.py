# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers of the LLDP neighbour tables that host tools print.

Both parsers return a list of neighbour dicts, one per neighbour seen on a local interface::

    {"interface": "ens7f0np0",       local interface the LLDP frames came in on
     "system_name": "su1-leaf3",     System Name TLV (None when the switch sends none)
     "chassis_id": "1c:34:da:...",   Chassis ID TLV value
     "port_id": "swp17",             Port ID TLV value
     "port_id_type": "ifname",       its subtype: ifname, mac, local, ifalias, ip, ...
     "port_descr": "..."}            Port Description TLV (None when not sent)

``neighbour_port(entry)`` picks from that the switch port name to compare with the plan.

lldpd: ``lldpcli -f json show neighbors`` (also ``lldpctl -f json``). The ``json`` format
changes shape with the data: ``lldp.interface`` is an object keyed by the interface name when
there is one neighbour, a list of one-key objects (``[{"eth0": {...}}, {"eth1": {...}}]``, the
same name twice for two neighbours on one port) when there are several; ``chassis`` is an
object keyed by the system name, or the bare chassis (``{"id": {...}, ...}``) when the
neighbour sends no name; single values are scalars, repeated ones lists. ``-f json0`` (lldpd
0.9.x/1.0.x) is regular: ``lldp`` is a list, ``interface`` a list of objects with a ``name``,
every value a list of ``{"value": ...}`` objects (``"id": [{"type": "mac", "value": ...}]``).
Both are read here, as is ``{"lldp": {}}`` (no neighbour). Unknown keys are ignored.

lldpad: ``lldptool -t -n -i <if>`` prints TLV blocks, a header line then its values, indented
by a tab (some copies lose the indentation; continuation lines of a multi-line System
Description are not indented)::

    Chassis ID TLV
            MAC: 58:f3:9c:81:ad:95
    Port ID TLV
            Ifname: Ethernet1/14          (or MAC: ..., Local: ..., Interface Alias: ...)
    Port Description TLV
            SRV-51D4-14
    System Name TLV
            AC3K-51D4-05.local.odcnoord.nl
    End of LLDPDU TLV

Empty output means no neighbour (``[]``). Text that is not what the tool prints (invalid JSON,
no ``lldp`` object, no TLV block) raises a one-line ``FabricError`` that names the tool.
"""

from __future__ import annotations

import json
import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

FIELDS = ("interface", "system_name", "chassis_id", "port_id", "port_id_type", "port_descr")

# A switch port name: optional leading digits (Huawei 10GE1/0/15), letters (hyphens allowed:
# Juniper ge-0/0/17), a number, more numbers after / : . (Ethernet17/1, xe-0/0/1:0), and
# letter+number groups (breakouts swp1s0, host NICs ens7f0np0). No spaces: free-text
# descriptions ("to-server-41-p0", "Interface 36 as ros0p31") and MAC addresses do not match.
_PORT_NAME = re.compile(r"^\d*[A-Za-z][A-Za-z_-]*\d+(?:[/:.]\d+)*(?:[A-Za-z]+\d+)*$")
_MAC = re.compile(r"^[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){5}$|^[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){2}$")

# lldptool's labels of the Port/Chassis ID subtypes -> lldpd's names for the same subtypes.
_SUBTYPES = {
    "mac": "mac",
    "ifname": "ifname",
    "local": "local",
    "interface alias": "ifalias",
    "ipv4": "ip",
    "ipv6": "ip",
    "port component": "port",
    "chassis component": "chassis",
    "agent circuit id": "agentid",
}
_TLV_HEADER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 /.,'()_-]* TLV$")


def new_entry(interface=None):
    """A neighbour dict with every field ``None`` but ``interface``."""
    entry = dict.fromkeys(FIELDS)
    entry["interface"] = interface
    return entry


# --- lldpd: lldpcli -f json / json0 ---------------------------------------------------------


def _one(value):
    """The first element of json0's one-element lists; json's scalars and objects as they are."""
    while isinstance(value, list):
        if not value:
            return None
        value = value[0]
    return value


def _text(value):
    """A string field in either format: ``"x"``, ``{"value": "x"}`` or ``[{"value": "x"}]``."""
    value = _one(value)
    if isinstance(value, dict):
        value = _one(value.get("value"))
    if value is None or isinstance(value, (dict, list, bool)):
        return None
    text = str(value).strip()
    return text or None


def _typed(value):
    """(value, type) of an ``id`` field: ``{"type": "mac", "value": ...}`` or json0's list of it."""
    value = _one(value)
    if isinstance(value, dict):
        return _text(value.get("value")), _text(value.get("type"))
    return _text(value), None


def _is_id(value):
    value = _one(value)
    return isinstance(value, dict) and ("value" in value or "type" in value)


def _chassis(value):
    """(system name, chassis body) of a ``chassis`` element, json or json0."""
    chassis = _one(value)
    if not isinstance(chassis, dict):
        return None, {}
    # json0 ({"id": [...], "name": [...]}) or json without a system name ({"id": {...}, ...}).
    if _is_id(chassis.get("id")) or isinstance(chassis.get("name"), list):
        return _text(chassis.get("name")), chassis
    # json: {"<system name>": {"id": {...}, ...}}
    if len(chassis) == 1:
        name, body = next(iter(chassis.items()))
        body = _one(body)
        if isinstance(body, dict):
            return _text(name), body
    return None, chassis


def _interfaces(container):
    """(local interface, neighbour body) pairs of an ``interface`` element, json or json0."""
    if isinstance(container, dict):
        container = [container]
    if not isinstance(container, list):
        return []
    pairs = []
    for item in container:
        if not isinstance(item, dict):
            continue
        name = item.get("name")
        if isinstance(name, str) or (isinstance(name, list) and ("chassis" in item or "port" in item)):
            pairs.append((_text(name), item))  # json0: {"name": "eth0", "chassis": [...], ...}
            continue
        for ifname, body in item.items():  # json: {"eth0": {...}}, possibly several keys
            for one in body if isinstance(body, list) else [body]:
                if isinstance(one, dict):
                    pairs.append((str(ifname), one))
    return pairs


def _lldpcli_entry(ifname, body):
    if "chassis" not in body and "port" not in body:
        return None
    entry = new_entry(ifname)
    name, chassis = _chassis(body.get("chassis"))
    entry["system_name"] = name
    entry["chassis_id"] = _typed(chassis.get("id"))[0]
    port = _one(body.get("port"))
    if isinstance(port, dict):
        entry["port_id"], entry["port_id_type"] = _typed(port.get("id"))
        entry["port_descr"] = _text(port.get("descr"))
    return entry


def parse_lldpcli_json(text):
    """Neighbours from ``lldpcli -f json|json0 show neighbors`` (text, bytes or the parsed object)."""
    if isinstance(text, (dict, list)):
        data = text
    else:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        if text is None or not text.strip():
            return []
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise FabricError("lldpcli -f json: the output is not JSON (%s)" % str(exc).splitlines()[0])
    if not isinstance(data, dict) or "lldp" not in data:
        raise FabricError("lldpcli -f json: no top-level \"lldp\" object; expected the output of "
                          "'lldpcli -f json show neighbors' (or -f json0)")
    lldp = data["lldp"]
    if lldp is None:
        return []
    if isinstance(lldp, dict):
        blocks = [lldp]
    elif isinstance(lldp, list):
        blocks = lldp
    else:
        raise FabricError("lldpcli -f json: \"lldp\" is a %s, expected an object (json) or a list (json0)"
                          % type(lldp).__name__)
    result = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        for ifname, body in _interfaces(block.get("interface")):
            entry = _lldpcli_entry(ifname, body)
            if entry is not None:
                result.append(entry)
    return result


# --- lldpad: lldptool -t -n -i <if> ---------------------------------------------------------


def _label_value(line):
    """("ifname", "swp17") of ``Ifname: swp17``; (None, line) when there is no label."""
    label, sep, value = line.partition(": ")
    if not sep or not label.strip():
        return None, line.strip() or None
    label = label.strip().lower()
    return _SUBTYPES.get(label, label), value.strip() or None


def parse_lldptool(text, interface):
    """The neighbour (a list of zero or one) from ``lldptool -t -n -i <interface>``."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if text is None or not text.strip():
        return []
    blocks = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if _TLV_HEADER.match(line):
            current = line[:-len(" TLV")].strip().lower()
            blocks.setdefault(current, [])
        elif current is not None:
            blocks[current].append(line)
    if not blocks:
        first = text.strip().splitlines()[0].strip()
        raise FabricError("lldptool -t -n -i %s: no TLV block in the output (%r); expected 'Chassis ID TLV', "
                          "'Port ID TLV', ..." % (interface, first[:80]))
    entry = new_entry(interface)
    if blocks.get("chassis id"):
        entry["chassis_id"] = _label_value(blocks["chassis id"][0])[1]
    if blocks.get("port id"):
        entry["port_id_type"], entry["port_id"] = _label_value(blocks["port id"][0])
    if blocks.get("system name"):
        entry["system_name"] = blocks["system name"][0]
    if blocks.get("port description"):
        entry["port_descr"] = blocks["port description"][0]
    if entry["chassis_id"] is None and entry["port_id"] is None and entry["system_name"] is None:
        return []
    return [entry]


# --- the port name to compare -----------------------------------------------------------------


def looks_like_port(name):
    """Whether ``name`` reads as an interface name (swp17, Ethernet17/1, 10GE1/0/15, ge-0/0/17)."""
    if not isinstance(name, str):
        return False
    name = name.strip()
    if not name or len(name) > 64 or _MAC.match(name):
        return False
    return bool(_PORT_NAME.match(name))


def neighbour_port(entry):
    """The neighbour's port name, or None when it announces none.

    The Port ID when its subtype is ``ifname`` (Cumulus ``swp17``, EOS ``Ethernet17/1``), or
    ``local`` and it reads as a port name; otherwise the Port Description when it reads as one
    (lldpd with a MAC Port ID: ``eth1``; Juniper a local number and ``ge-0/0/15.0``). Names are
    returned as announced: a SONiC ToR's ``local`` Port ID is its port alias (``etp2``), which
    :func:`port_names.planned_name` maps to ``EthernetN`` through the ToR's PORT table.
    """
    port_id = entry.get("port_id")
    kind = (entry.get("port_id_type") or "").lower()
    if port_id and kind == "ifname":
        return port_id
    if port_id and kind in ("local", "") and looks_like_port(port_id):
        return port_id
    descr = entry.get("port_descr")
    if looks_like_port(descr):
        return descr.strip()
    return None


def neighbours_by_interface(entries):
    """``{local interface: [neighbour, ...]}`` of a parser's list, in the order given."""
    grouped = {}
    for entry in entries or []:
        grouped.setdefault(entry.get("interface"), []).append(entry)
    return grouped
