# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The InfiniBand subnet manager's configuration from the plan: OpenSM's ``partitions.conf``, the options that
choose its routing engine, and the comparison of the PKey tables the ports hold with the partitions wanted.

Partitions: the model's (``infiniband.partitions`` of the fabric, :func:`model_partitions`; pass ``partitions``
None), or a list the caller passes, in the model's form plus ``fabric``::

    {"name": "compute",          letters, digits, ``_ . -`` (OpenSM logs it)
     "pkey": "0x0101",           15 bits, 0x0001..0x7ffe (0x7fff is OpenSM's Default, 0x0000 invalid)
     "fabric": "default",        optional: the plan's fabric whose rails are members (default: every fabric)
     "hosts": ["gpu01", ...],    optional: only these hosts' rails (default: all of the fabric's)
     "membership": "full",       full | limited | both (OpenSM's words)
     "ipoib": true,              OpenSM creates the IPoIB broadcast group of the partition
     "mtu": 5, "rate": 7, "sl": 0}   the broadcast group's IBTA codes, optional

Members are port GUIDs (OpenSM matches end ports, not node GUIDs): ``port_guids`` ``{host: {rail: guid}}``, as the
InfiniBand cabling check reads them (its ok entries' ``port_guid``) or the inventory gives them. A member without a
GUID fails the rendering (never a partition silently short of a port).

The file (``opensm(8)``, PARTITION CONFIGURATION; OpenSM parses it at start and on each re-sweep, logging ``PARSE
ERROR`` and falling back to its default partition on a bad file)::

    Default=0x7fff, ipoib : ALL=limited, SELF=full ;
    compute=0x0101, ipoib, mtu=5 : 0x0002c90300100011=full, ... ;

The Default line is always written: every end port stays a limited member of the default partition (the SA and
the SM reach it), only the SM port full. OpenSM's own fallback without the line is the same.
:func:`desired_pkeys` wants that entry too (``0x7fff``, ``0xffff`` on the SM's port), so a port made a full
member of the default partition, or left out of it, is a finding.

Membership ``both`` (a full and a limited PKey on one port) needs ``allow_both_pkeys TRUE`` (``osm_subnet.c``,
default FALSE): without it ``osm_prtn_add_port`` keeps one entry per port and PKey, the full one.
:func:`allow_both_pkeys` decides it from the partitions; :func:`options_text` writes the option and
:func:`desired_pkeys` wants both entries when given that answer, the full one alone otherwise (what OpenSM
serves without the option). ``mtu``/``rate``/``sl`` set the partition's IPoIB broadcast group: refused on a
partition with ``ipoib`` false, where OpenSM would ignore them.

Routing (:func:`options_text`): ``routing_engine ftree,updn``: fat-tree routing for the rail-optimised tree (leaf
per rail group and rail, spines above), up/down when ftree refuses the topology (it needs every leaf at one rank),
``root_guid_file`` naming the spines when their GUIDs are known (otherwise ftree and updn find the roots).

Comparing (:func:`compare_pkeys`): ``smpquery pkeys`` of each member port (``cabling.ib_parse``) against
:func:`desired_pkeys`: a PKey missing, held with the wrong membership (``0x8101`` full, ``0x0101`` limited), an
extra one the plan does not give the port, and a port not read: never agreeing.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.cabling.ib_parse import guid_text
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

DEFAULT_PKEY = 0x7fff
MEMBERSHIPS = ("full", "limited", "both")
ROUTING_ENGINES = "ftree,updn"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_FLAGS = {"mtu": (1, 5), "rate": (2, 21), "sl": (0, 15)}


def _err(field, value, problem):
    return FabricError("subnet manager: %s %r %s" % (field, value, problem))


def pkey_value(value, field="pkey"):
    """A partition key as an int of 15 bits (``"0x0101"``, ``257``); the membership bit is not part of it."""
    try:
        number = int(value, 0) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        raise _err(field, value, "is not a number (write it as 0x0101)") from None
    if isinstance(value, bool) or not 0x0001 <= number <= 0x7ffe:
        raise _err(field, value, "is not a partition key 0x0001..0x7ffe (0x7fff is the default partition)")
    return number


def _fabric_hosts(plan, fabric):
    hosts = {}
    for host, node in (plan.get("nodes") or {}).items():
        rails = [e["rail"] for e in node.get("rails") or [] if fabric is None or e.get("fabric") == fabric]
        if rails:
            hosts[host] = sorted(rails)
    return hosts


def model_partitions(plan, fabric=None):
    """The partitions the model gives (``fabric_cluster`` ``infiniband.partitions``, carried by the plan's
    ``fabrics[name].partitions`` with their fabric): of ``fabric``, or of every fabric. A fabric without the key
    gives none (its ports in the default partition only)."""
    fabrics = plan.get("fabrics") or {} if isinstance(plan, dict) else {}
    if fabric is not None and fabric not in fabrics:
        raise _err("fabric", fabric, "is not a fabric of the plan (%s)" % ", ".join(sorted(fabrics)))
    names = [fabric] if fabric is not None else sorted(fabrics)
    return [dict(p) for name in names for p in (fabrics[name] or {}).get("partitions") or ()]


def normalise(plan, partitions=None):
    """The partitions checked, each with ``members``: ``[(host, rail)]`` in host order. ``partitions`` None: the
    model's (:func:`model_partitions`, possibly none)."""
    if not isinstance(plan, dict) or not isinstance(plan.get("nodes"), dict):
        raise FabricError("subnet manager: pass the rail plan (plan.nodes)")
    if partitions is None:
        partitions = model_partitions(plan)
    elif not isinstance(partitions, list) or not partitions:
        raise FabricError("subnet manager: partitions must be a non-empty list (name, pkey, fabric, hosts, "
                          "membership, ipoib)")
    out, pkeys, fabrics = [], {}, set(plan.get("fabrics") or ()) or None
    for index, part in enumerate(partitions):
        field = "partitions[%d]" % index
        if not isinstance(part, dict):
            raise _err(field, part, "is not a mapping")
        unknown = sorted(set(part) - {"name", "pkey", "fabric", "hosts", "membership", "ipoib", "mtu", "rate", "sl"})
        if unknown:
            raise _err(field + "." + unknown[0], part[unknown[0]], "is not a partition setting")
        name = part.get("name")
        if not isinstance(name, str) or not _NAME.match(name) or name == "Default":
            raise _err(field + ".name", name, "must be 1-64 letters, digits, _ . - (not Default)")
        pkey = pkey_value(part.get("pkey"), field + ".pkey")
        if pkey in pkeys:
            raise _err(field + ".pkey", part.get("pkey"), "is already partition %s's" % pkeys[pkey])
        pkeys[pkey] = name
        fabric = part.get("fabric")
        if fabric is not None and fabrics is not None and fabric not in fabrics:
            raise _err(field + ".fabric", fabric, "is not a fabric of the plan (%s)" % ", ".join(sorted(fabrics)))
        available = _fabric_hosts(plan, fabric)
        hosts = part.get("hosts")
        if hosts is None:
            hosts = sorted(available, key=str)
        elif not isinstance(hosts, list):
            raise _err(field + ".hosts", hosts, "is not a list of host names")
        for host in hosts:
            if host not in available:
                raise _err(field + ".hosts", host, "has no rail%s in the plan" % (
                    " of fabric %s" % fabric if fabric else ""))
        membership = part.get("membership", "full")
        if membership not in MEMBERSHIPS:
            raise _err(field + ".membership", membership, "is not one of %s" % ", ".join(MEMBERSHIPS))
        flags = {}
        for key, (low, high) in _FLAGS.items():
            if part.get(key) is not None:
                value = part[key]
                if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                    raise _err(field + "." + key, value, "is not an IBTA code %d..%d" % (low, high))
                flags[key] = value
        ipoib = part.get("ipoib", True)
        if not isinstance(ipoib, bool):
            raise _err(field + ".ipoib", ipoib, "is not true or false")
        if flags and not ipoib:
            key = sorted(flags)[0]
            raise _err(field + "." + key, flags[key], "sets the IPoIB broadcast group, but ipoib is false (OpenSM "
                       "would ignore it): remove %s or set ipoib true" % key)
        out.append({"name": name, "pkey": pkey, "membership": membership, "ipoib": ipoib, "flags": flags,
                    "members": [(h, r) for h in hosts for r in available[h]]})
    return out


def _member_guid(port_guids, host, rail, name):
    value = ((port_guids or {}).get(host) or {}).get(rail)
    if value is None:
        value = ((port_guids or {}).get(host) or {}).get(str(rail))
    if value is None:
        raise FabricError("subnet manager: partition %s: no port GUID for %s rail %s (run the InfiniBand cabling "
                          "check first, or give the GUID in the inventory)" % (name, host, rail))
    try:
        return guid_text(value)
    except FabricError as err:
        raise FabricError("subnet manager: port GUID of %s rail %s: %s" % (host, rail, err)) from None


def partitions_text(plan, partitions, port_guids):
    """OpenSM's ``partitions.conf`` (see the module docstring); members in host then rail order."""
    parts = normalise(plan, partitions)
    lines = ["# OpenSM partitions, rendered by ainet.fabric from the rail plan: edits are overwritten",
             "Default=0x%04x, ipoib : ALL=limited, SELF=full ;" % DEFAULT_PKEY]
    for part in parts:
        head = "%s=0x%04x" % (part["name"], part["pkey"])
        if part["ipoib"]:
            head += ", ipoib" + "".join(", %s=%d" % (k, part["flags"][k]) for k in ("rate", "mtu", "sl")
                                        if k in part["flags"])
        members = ["%s=%s" % (_member_guid(port_guids, h, r, part["name"]), part["membership"])
                   for h, r in part["members"]]
        if not members:
            lines.append("%s : ;" % head)
            continue
        lines.append("%s :" % head)
        for index, member in enumerate(members):
            lines.append("    %s%s" % (member, " ;" if index == len(members) - 1 else ","))
    return "\n".join(lines) + "\n"


def allow_both_pkeys(partitions):
    """Whether OpenSM must run with ``allow_both_pkeys TRUE``: a partition gives ``both`` memberships. Without the
    option OpenSM keeps one entry per port and PKey (``osm_prtn.c`` ``osm_prtn_add_port`` removes the port from
    both tables before it inserts, so the full entry, added last, wins); with it a port holds the full and the
    limited PKey. The one place this is decided: :func:`options_text` and :func:`desired_pkeys` take its answer."""
    return any(isinstance(p, dict) and p.get("membership") == "both" for p in partitions or ())


def options_text(partitions_file, root_guid_file=None, both_pkeys=False):
    """The ``opensm.conf`` options this collection sets (the rest stays OpenSM's default). ``both_pkeys``:
    :func:`allow_both_pkeys` of the partitions (``allow_both_pkeys TRUE``, ``osm_subnet.c``, default FALSE)."""
    for what, path in (("partitions_file", partitions_file), ("root_guid_file", root_guid_file)):
        if path is not None and (not isinstance(path, str) or not path.startswith("/") or re.search(r"\s", path)):
            raise _err(what, path, "must be an absolute path without blanks")
    lines = ["# OpenSM options set by ainet.fabric", "partition_config_file %s" % partitions_file,
             "routing_engine %s" % ROUTING_ENGINES]
    if root_guid_file:
        lines.append("root_guid_file %s" % root_guid_file)
    if both_pkeys:
        lines.append("allow_both_pkeys TRUE")
    return "\n".join(lines) + "\n"


def root_guids_text(guids):
    """The spines' GUIDs, one a line (``root_guid_file``)."""
    return "".join("%s\n" % guid_text(g) for g in guids)


def _with_membership(pkey, membership, both_pkeys):
    if membership == "full" or (membership == "both" and not both_pkeys):
        return ["0x%04x" % (pkey | 0x8000)]
    if membership == "limited":
        return ["0x%04x" % pkey]
    return ["0x%04x" % (pkey | 0x8000), "0x%04x" % pkey]


def desired_pkeys(plan, partitions, port_guids, both_pkeys=False, sm_port_guid=None):
    """``{port guid: {"host", "rail", "pkeys": sorted [...], "default": pkey}}``: what each member port's table
    must hold. ``default`` is its entry of the default partition as the rendered Default rule gives it
    (``ALL=limited, SELF=full``): ``0x7fff``, and ``0xffff`` for the SM's own port (``sm_port_guid``, as
    ``sminfo`` names it; None: the SM runs on no member port). ``both_pkeys``: OpenSM runs with
    ``allow_both_pkeys TRUE`` (:func:`allow_both_pkeys`); without it a ``both`` member holds the full PKey only."""
    sm_port = guid_text(sm_port_guid) if sm_port_guid is not None else None
    result = {}
    for part in normalise(plan, partitions):
        for host, rail in part["members"]:
            guid = _member_guid(port_guids, host, rail, part["name"])
            default = "0x%04x" % (DEFAULT_PKEY | (0x8000 if guid == sm_port else 0))
            entry = result.setdefault(guid, {"host": host, "rail": rail, "pkeys": [], "default": default})
            entry["pkeys"].extend(_with_membership(part["pkey"], part["membership"], both_pkeys))
    for entry in result.values():
        entry["pkeys"] = sorted(set(entry["pkeys"]))
    return result


def compare_pkeys(desired, seen):
    """Findings of the PKey tables read (``seen``: ``{port guid: [pkey, ...]}`` from ``smpquery pkeys``, or None
    for a port not read) against :func:`desired_pkeys`. Each finding: ``host, rail, port_guid, kind (missing_pkey,
    wrong_membership, extra_pkey, unread), pkey, detail``. Returns ``{"findings", "ok", "summary"}``."""
    findings, ok = [], []
    for guid, want in sorted(desired.items(), key=lambda kv: (str(kv[1]["host"]), kv[1]["rail"])):
        base = {"host": want["host"], "rail": want["rail"], "port_guid": guid}
        have = (seen or {}).get(guid)
        if have is None:
            findings.append(dict(base, kind="unread", pkey=None,
                                 detail="the PKey table of %s rail %s (%s) was not read" % (
                                     want["host"], want["rail"], guid)))
            continue
        have = set(p.lower() for p in have)
        wanted = set(want["pkeys"]) | {want.get("default") or "0x%04x" % DEFAULT_PKEY}
        before = len(findings)
        for pkey in sorted(wanted - have):
            low = int(pkey, 16) & 0x7fff
            other = [p for p in have if int(p, 16) & 0x7fff == low]
            if other:
                findings.append(dict(base, kind="wrong_membership", pkey=pkey, detail="%s rail %s holds %s, wanted %s"
                                     % (want["host"], want["rail"], ", ".join(sorted(other)), pkey)))
            else:
                findings.append(dict(base, kind="missing_pkey", pkey=pkey, detail="%s rail %s lacks %s%s" % (
                    want["host"], want["rail"], pkey, " (the default partition: the port cannot reach the SA)"
                    if low == DEFAULT_PKEY else "")))
        for pkey in sorted(have - wanted):
            if any(int(w, 16) & 0x7fff == int(pkey, 16) & 0x7fff for w in wanted):
                continue
            findings.append(dict(base, kind="extra_pkey", pkey=pkey, detail="%s rail %s holds %s, in no partition "
                                 "of the plan" % (want["host"], want["rail"], pkey)))
        if len(findings) == before:
            ok.append(dict(base, pkeys=sorted(want["pkeys"])))
    by_kind = {}
    for finding in findings:
        by_kind[finding["kind"]] = by_kind.get(finding["kind"], 0) + 1
    return {"findings": findings, "ok": ok,
            "summary": {"ports": len(desired), "ok": len(ok), "findings": len(findings), "by_kind": by_kind}}


def member_lids(topology, port_guids):
    """``{port guid: lid}`` of the member ports ``ibnetdiscover`` saw (:func:`ib_parse.parse_ibnetdiscover`: a
    CA's LID is its node's, as its port line prints it): where ``smpquery pkeys <lid>`` reads each table. A port
    absent from the subnet or without a LID (no SM has swept it) is left out, and :func:`compare_pkeys` then
    reports it ``unread``."""
    lids = {}
    for node in (topology or {}).get("nodes", {}).values():
        for pguid in (node.get("port_guids") or {}).values():
            if node.get("lid"):
                lids[pguid] = node["lid"]
    return dict((g, lids[g]) for g in port_guids if g in lids)
