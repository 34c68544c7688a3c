# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers of what infiniband-diags print about an InfiniBand subnet: ``ibnetdiscover`` (the topology) and
``smpquery pkeys`` (a port's PKey table, as the subnet manager programmed it).

``ibnetdiscover`` (infiniband-diags, rdma-core ``infiniband-diags/ibnetdiscover.c``: ``out_switch``,
``out_ca``, ``out_switch_port``, ``out_ca_port``) prints one record per node::

    vendid=0x2c9
    devid=0xd2f0
    sysimgguid=0x...
    switchguid=0x200000(200000)                          (caguid=0x... / rtguid=0x... on a CA / router)
    Switch  8 "S-0000000000200000"   # "su1-r1" base port 0 lid 1 lmc 0
    [1]     "H-0000000000100000"[1](100001)   # "gpu01 mlx5_0" lid 2 4xSDR
    Ca      1 "H-0000000000100000"   # "gpu01 mlx5_0"
    [1](100001)  "S-0000000000200000"[1]      # lid 2 lmc 0 "su1-r1" lid 1 4xSDR

A node is named ``"S-<guid>"``/``"H-<guid>"``/``"R-<guid>"`` (16 hex digits); the ``#`` comment holds the node
description (``NodeDescription``, at most 64 bytes, set by the node itself: data from the wire, never trusted),
then the LID and the link's active width (``1x 2x 4x 8x 12x``) and speed (``SDR DDR QDR FDR10 FDR EDR HDR NDR``,
``???`` when unknown). With ``-g`` a port may carry ``[ext N]``; ``-f`` (full info) appends ``s= w= v=``. Each
link appears twice (once from each end); :func:`parse_ibnetdiscover` returns every node and each link once.

``smpquery pkeys <lid> [port]`` (``infiniband-diags/smpquery.c``, ``pkey_table``) reads the table with SMPs and
prints it 8 entries a row, then the capacity::

       0: 0xffff 0x8101 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000
       8: 0x0000 ...
    64 pkeys capacity for this port

(``saquery PKeyTableRecord`` asks the SA instead; OpenSM 3.3.23 answered it with ``SA_ERR_REQ_INVALID`` in the lab,
so the tables are read from the ports.)
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

# Speeds in the order of their data rate per lane (infiniband-diags' names).
SPEEDS = ("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR")
WIDTHS = ("1x", "2x", "4x", "8x", "12x")

_NODE_TYPES = {"Switch": "switch", "Ca": "ca", "Rt": "router", "Router": "router"}
_NAME = r'"(?P<{0}kind>[SHR?])-(?P<{0}guid>[0-9a-fA-F]{{1,16}})"'
_NODE = re.compile(r'^(?P<type>Switch|Ca|Rt)\s+(?P<ports>\d+)\s+' + _NAME.format("") +
                   r'\s*(?:#\s*"(?P<desc>.*)"(?P<rest>.*))?$')
_PORT = re.compile(r'^\[(?P<port>\d+)\](?:\[ext \d+\])?(?:\((?P<pguid>[0-9a-fA-F]+)\))?\s*' + _NAME.format("r") +
                   r'\[(?P<rport>\d+)\](?:\[ext \d+\])?\s*(?:\((?P<rpguid>[0-9a-fA-F]+)\))?\s*#(?P<comment>.*)$')
_LINK = re.compile(r'lid (?P<lid>\d+) (?P<width>\d+x|\?\?)(?P<speed>[A-Z0-9?]+)(?: s=\d+ w=\d+ v=\d+)?'
                   r'(?: slot \d+| \(scp\))?\s*$')
_LEADING_LID = re.compile(r'^\s*lid (?P<lid>\d+) lmc \d+ ')
_BASE_LID = re.compile(r'(?:base|enhanced) port 0 lid (?P<lid>\d+)')


def guid_text(value):
    """A GUID as ``0x`` and 16 lower-case hex digits, from ``0x...``, bare hex or ``aa:bb:...`` (8 bytes)."""
    text = str(value).strip().lower()
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 8 or not all(re.match(r"^[0-9a-f]{1,2}$", p) for p in parts):
            raise FabricError("InfiniBand GUID %r is not 8 bytes (aa:bb:cc:dd:ee:ff:00:11)" % (value,))
        text = "".join(p.zfill(2) for p in parts)
    if text.startswith("0x"):
        text = text[2:]
    if not re.match(r"^[0-9a-f]{1,16}$", text):
        raise FabricError("InfiniBand GUID %r is not a 64-bit hex number" % (value,))
    return "0x" + text.zfill(16)


def _link_fields(comment):
    """(description, lid, width, speed) from a port line's comment: ``"desc" lid N 4xHDR`` (the description may
    itself hold quotes: the last ``" lid`` ends it)."""
    match = _LINK.search(comment)
    if not match:
        return None
    head = comment[:match.start()].rstrip()
    desc = None
    if head.endswith('"') and '"' in head[:-1]:
        desc = head[head.index('"') + 1:-1]
    width = match.group("width")
    return desc, int(match.group("lid")), (width if width in WIDTHS else None), \
        (match.group("speed") if match.group("speed") in SPEEDS else None)


def parse_ibnetdiscover(text):
    """``{"nodes": {guid: node}, "links": [link, ...]}`` from ``ibnetdiscover`` output.

    node: ``{"guid", "type" (switch, ca, router), "ports", "description", "lid"}`` and, for a CA or router,
    ``"port_guids": {port: guid}`` (from its own port lines); link: ``{"a": {"guid",
    "port"}, "b": {"guid", "port"}, "width", "speed"}`` with ``a`` the end printed first (a switch's lines come
    first, so a switch-to-CA link has the switch as ``a``), each physical link once. GUIDs are
    :func:`guid_text`. Lines it does not know (headers, ``Chassis``, ``vendid=``) are skipped; text with no node
    record at all raises :class:`FabricError` (not ibnetdiscover output), since an empty subnet still lists the
    node it ran on.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        raise FabricError("ibnetdiscover output must be text, not %s" % type(text).__name__)
    nodes, links, seen = {}, [], set()
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _NODE.match(line) if line[0] != "[" else None
        if match:
            guid = guid_text(match.group("guid"))
            lid = _BASE_LID.search(match.group("rest") or "")
            current = {"guid": guid, "type": _NODE_TYPES[match.group("type")], "ports": int(match.group("ports")),
                       "description": match.group("desc"), "lid": int(lid.group("lid")) if lid else None}
            nodes[guid] = current
            continue
        match = _PORT.match(line) if line[0] == "[" else None
        if not match or current is None:
            continue
        comment = match.group("comment")
        lead = _LEADING_LID.match(comment)
        if lead and current["lid"] is None:
            current["lid"] = int(lead.group("lid"))
        fields = _link_fields(comment[lead.end() - 1:] if lead else comment)
        peer = guid_text(match.group("rguid"))
        local = (current["guid"], int(match.group("port")))
        remote = (peer, int(match.group("rport")))
        if match.group("pguid"):
            current.setdefault("port_guids", {})[local[1]] = guid_text(match.group("pguid"))
        key = tuple(sorted((local, remote)))
        if key in seen:
            continue
        seen.add(key)
        desc, _lid, width, speed = fields if fields else (None, None, None, None)
        b_end = {"guid": remote[0], "port": remote[1]}
        if match.group("rpguid"):
            b_end["port_guid"] = guid_text(match.group("rpguid"))
        links.append({"a": {"guid": local[0], "port": local[1]}, "b": b_end, "b_description": desc,
                      "width": width, "speed": speed})
    if not nodes:
        raise FabricError("not ibnetdiscover output: no Switch or Ca record (run ibnetdiscover on a host of the "
                          "subnet and pass what it printed)")
    return {"nodes": nodes, "links": links}


_PKEY_ROW = re.compile(r"^\s*(?P<index>\d+):(?P<words>(?:\s+0x[0-9a-fA-F]{4})+)\s*$")
_CAPACITY = re.compile(r"^\s*(?P<count>\d+) pkeys capacity for this port\s*$")


def parse_smpquery_pkeys(text):
    """``{"pkeys": [pkey, ...], "capacity": n}`` from ``smpquery pkeys <lid> [port]``: the port's non-zero PKey
    table entries in table order, each ``0x`` and 4 lower-case hex digits with the membership bit (``0x8101``:
    full member of partition 0x0101, ``0x0101``: limited). Text with no table row raises :class:`FabricError`."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    pkeys, rows, capacity = [], 0, None
    for line in str(text).splitlines():
        match = _PKEY_ROW.match(line)
        if match:
            rows += 1
            for word in match.group("words").split():
                value = int(word, 16)
                if value & 0x7fff:
                    pkeys.append("0x%04x" % value)
            continue
        match = _CAPACITY.match(line)
        if match:
            capacity = int(match.group("count"))
    if not rows:
        raise FabricError("not smpquery pkeys output: no PKey table row (run smpquery pkeys <lid> on the subnet)")
    return {"pkeys": pkeys, "capacity": capacity}


def merge_topologies(topologies):
    """One topology from several ``ibnetdiscover`` runs (one per rail HCA when each rail is a subnet of its own; the
    same subnet read twice merges to itself): the union of the nodes and of the links (a link once)."""
    nodes, links, seen = {}, [], set()
    for topo in topologies:
        for guid, node in topo["nodes"].items():
            known = nodes.setdefault(guid, dict(node))
            if node.get("port_guids"):
                known.setdefault("port_guids", {}).update(node["port_guids"])
        for link in topo["links"]:
            key = tuple(sorted(((link["a"]["guid"], link["a"]["port"]), (link["b"]["guid"], link["b"]["port"]))))
            if key not in seen:
                seen.add(key)
                links.append(link)
    return {"nodes": nodes, "links": links}


_SMINFO = re.compile(r"^sminfo: sm lid (?P<lid>\d+) sm guid (?P<guid>0x[0-9a-fA-F]{1,16}),")


def parse_sminfo(text):
    """The master SM's port GUID from ``sminfo`` (``infiniband-diags/sminfo.c``: ``sminfo: sm lid %d sm guid
    0x%016llx, activity count ...``); a text without that line is refused (no SM answered)."""
    for line in str(text or "").splitlines():
        match = _SMINFO.match(line.strip())
        if match:
            return {"lid": int(match.group("lid")), "guid": guid_text(match.group("guid"))}
    raise FabricError("not sminfo output: no 'sminfo: sm lid N sm guid 0x...' line (is an SM running?)")
