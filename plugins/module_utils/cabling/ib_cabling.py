# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compare an InfiniBand subnet, as ``ibnetdiscover`` saw it (:func:`ib_parse.parse_ibnetdiscover`), with the rail
plan: the InfiniBand counterpart of :mod:`cabling_check` (LLDP), with the same findings and result shape.

The plan's rails (``plan["nodes"][host]["rails"]``: ``{"fabric", "rail", "tor", "tor_port", ...}``) say which
leaf switch and port each rail's HCA is cabled to (one leaf per rail group and rail: ``workload.topology``). On
the subnet:

* a **leaf** is the switch whose node description is the ToR's name (case and a domain suffix ignored, as LLDP
  system names), or the one whose GUID ``switch_guids[tor]`` gives (the inventory's, when the switches keep their
  default descriptions such as ``MF0;sw01:MQM9700/U1``);
* a rail's **HCA** is the CA whose GUID ``hca_guids[host][rail]`` gives (node or port GUID: the inventory's), or
  else whose node description is ``"<host> <device>"``: what mlx5 sets (``<hostname> mlx5_<n>``), the device
  ``rail_hcas[rail]`` (default ``mlx5_<rail-1>``); the host compared like a switch name. Node descriptions are
  set by each node and come from the wire: they are compared and printed (escaped in Markdown), never used
  otherwise.

Each rail gets one verdict, the kinds of :mod:`cabling_check`:

* ok: its HCA's port 1 reaches the planned leaf on the planned port;
* ``missing``: no such HCA in the subnet, or its port has no link (ibnetdiscover lists only linked ports), or the
  planned leaf is not in the subnet;
* ``unexpected``: two CAs answer to the rail's description (no GUID given to tell them apart);
* ``swapped``: two rails of a host each reach the other's planned leaf port (one finding, ``pair`` names the
  second);
* ``wrong_tor`` / ``wrong_port``: another switch / the planned leaf, another port;
* ``slow_link``: cabled as planned, but the link's active width or speed is below ``expect`` (``{"width": "4x",
  "speed": "NDR"}``; ``???``/unknown counts as below); without ``expect`` (or for the key it leaves out), below
  what most of the fabric's rail links run (their common width and speed, the higher one on a tie): a link
  trained down to 1x among 4x peers is a finding without the caller naming a width;
* ``extra``: a link from a planned leaf's port to a CA that is no rail's HCA in the plan (``host`` is None, ``seen``
  the leaf and port, ``detail`` the CA's description and GUID).

Findings: ``host, fabric, rail, interface`` (the HCA device), ``kind, expected: {tor, port}, seen: {tor, port} or
None, detail, fix, message``; ok entries ``{host, fabric, rail, interface, tor, port, port_verified: True,
guid, port_guid}`` (the HCA's node and port GUIDs: the members :mod:`ib.opensm` renders). :func:`cabling_check.findings_markdown` prints either result.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.cabling.cabling_check import (
    _finding, _order, _plan_nodes, _rails, _report_mismatches, _select_hosts, same_switch)
from ansible_collections.ainet.fabric.plugins.module_utils.cabling.ib_parse import SPEEDS, WIDTHS, guid_text, \
    parse_ibnetdiscover
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

KINDS = ("missing", "swapped", "wrong_tor", "wrong_port", "unexpected", "slow_link", "extra")


def _short(name):
    """A name's first label, lower case (the index key of :func:`cabling_check.same_switch`'s comparison)."""
    return str(name).strip().rstrip(".").lower().split(".", maxsplit=1)[0]


def _desc_words(desc):
    words = str(desc or "").split()
    return (words[0], words[1]) if len(words) >= 2 else (None, None)


def _guid_map(value, what):
    try:
        return guid_text(value)
    except FabricError as err:
        raise FabricError("InfiniBand cabling check: %s: %s" % (what, err)) from None


def _index(topology):
    """Per node GUID: its links ``{port: (peer guid, peer port, link)}``; CA lookups by port GUID."""
    ends = {}
    port_owner = {}
    for guid, node in topology["nodes"].items():
        for pguid in (node.get("port_guids") or {}).values():
            port_owner[pguid] = guid
    for link in topology["links"]:
        a, b = link["a"], link["b"]
        ends.setdefault(a["guid"], {})[a["port"]] = (b["guid"], b["port"], link)
        ends.setdefault(b["guid"], {})[b["port"]] = (a["guid"], a["port"], link)
        for end in (a, b):
            if end.get("port_guid"):
                port_owner[end["port_guid"]] = end["guid"]
    return ends, port_owner


def _below(seen, wanted, order):
    if wanted is None:
        return False
    if seen not in order:
        return True
    return order.index(seen) < order.index(wanted)


def _check_expect(expect):
    expect = dict(expect or {})
    for key, order in (("width", WIDTHS), ("speed", SPEEDS)):
        value = expect.get(key)
        if value is not None and value not in order:
            raise FabricError("InfiniBand cabling check: expect.%s %r is not one of %s" % (key, value, ", ".join(order)))
    return expect


class _Subnet:
    def __init__(self, topology, plan_tors, switch_guids, hca_guids):
        self.nodes = topology["nodes"]
        self.ends, self.port_owner = _index(topology)
        self.leaf = {}
        self.switch_name = {}
        switches = {}
        for guid, node in self.nodes.items():
            if node["type"] == "switch" and node.get("description"):
                switches.setdefault(_short(node["description"]), []).append(guid)
        for tor in plan_tors:
            guid = (switch_guids or {}).get(tor)
            if guid is not None:
                guid = _guid_map(guid, "switch_guids[%s]" % tor)
                if guid in self.nodes:
                    self.leaf[tor] = guid
                continue
            named = [g for g in switches.get(_short(tor), ()) if same_switch(self.nodes[g]["description"], tor)]
            if len(named) == 1:
                self.leaf[tor] = named[0]
        for tor, guid in self.leaf.items():
            self.switch_name[guid] = tor
        self.hca_guids = hca_guids or {}
        self.by_desc = {}
        for guid, node in self.nodes.items():
            if node["type"] == "ca":
                host, device = _desc_words(node["description"])
                if host is not None:
                    self.by_desc.setdefault((_short(host), device), []).append(guid)

    def port_guid(self, guid, port):
        """The GUID of a CA's port (its own port lines, or the switch's line naming it), None if not printed."""
        known = (self.nodes.get(guid) or {}).get("port_guids") or {}
        if port in known:
            return known[port]
        _peer, _peer_port, link = (self.ends.get(guid) or {}).get(port, (None, None, {}))
        for end in (link.get("a") or {}, link.get("b") or {}):
            if end.get("guid") == guid and end.get("port") == port:
                return end.get("port_guid")
        return None

    def switch_label(self, guid):
        """What the plan calls the switch (its ToR name), else its description, else its GUID."""
        if guid in self.switch_name:
            return self.switch_name[guid]
        node = self.nodes.get(guid) or {}
        return node.get("description") or guid

    def hcas(self, host, rail, device):
        given = (self.hca_guids.get(host) or {}).get(rail)
        if given is not None:
            guid = _guid_map(given, "hca_guids[%s][%s]" % (host, rail))
            guid = self.port_owner.get(guid, guid)
            return [guid] if guid in self.nodes else []
        return self.by_desc.get((_short(host), device), [])


def infiniband_fabrics(plan):
    """The plan's fabrics in ``infiniband`` addressing mode (their cabling is read from the subnet, not LLDP)."""
    return sorted(name for name, fabric in (plan.get("fabrics") or {}).items()
                  if isinstance(fabric, dict) and fabric.get("mode") == "infiniband")


def fabric_plan(plan, fabrics):
    """The plan with only the rails (and ToRs) of ``fabrics``: for checking each fabric with its own source."""
    wanted = set(fabrics)
    nodes = dict((host, dict(node, rails=[e for e in node.get("rails") or [] if e.get("fabric") in wanted]))
                 for host, node in _plan_nodes(plan).items())
    tors = dict((name, tor) for name, tor in (plan.get("tors") or {}).items() if tor.get("fabric") in wanted)
    return dict(plan, nodes=dict((h, n) for h, n in nodes.items() if n["rails"]), tors=tors)


def _unread(plan, hosts, why):
    nodes = _plan_nodes(plan)
    findings, rails = [], 0
    for host in _select_hosts(nodes, hosts):
        for entry in _rails(nodes, host):
            rails += 1
            planned = "%s port %s" % (entry["tor"], entry.get("tor_port"))
            base = {"host": host, "fabric": entry.get("fabric"), "rail": entry["rail"], "interface": None,
                    "expected": {"tor": entry["tor"], "port": entry.get("tor_port")}}
            findings.append(_finding(base, "missing", None, "the subnet was not read: %s (planned %s)" % (why, planned),
                                     "%s rail %s: the subnet was not read (%s), planned %s" % (
                                         host, entry["rail"], why, planned),
                                     "run ibnetdiscover on a node of the subnet (its HCA port up) and check again"))
    return {"findings": findings, "ok": [],
            "summary": {"hosts": len(_select_hosts(nodes, hosts)), "rails": rails, "ok": 0,
                        "findings": len(findings), "by_kind": {"missing": len(findings)} if findings else {},
                        "unverified_ports": 0}}


def check_ib_cabling(plan, topology, hosts=None, rail_hcas=None, hca_guids=None, switch_guids=None, expect=None,
                     unread_why=None):
    """Findings of the subnet (``topology``: :func:`parse_ibnetdiscover`'s result, or its text) against the rail
    plan (see the module docstring). ``rail_hcas``: ``{rail: device}``; ``hca_guids``: ``{host: {rail: guid}}``;
    ``switch_guids``: ``{tor: guid}``; ``expect``: ``{"width", "speed"}`` the least each rail link must run at.
    ``topology`` None: the subnet was not read (``unread_why`` says why): every rail is ``missing``, never ok.

    Returns ``{"findings", "ok", "summary"}`` as :func:`cabling_check.check_cabling` (``summary.by_kind``, with
    ``extra`` links counted there too).
    """
    nodes = _plan_nodes(plan)
    expect = _check_expect(expect)
    if topology is None:
        return _unread(plan, hosts, unread_why or "no ibnetdiscover output")
    if isinstance(topology, (str, bytes)):
        topology = parse_ibnetdiscover(topology)
    if not isinstance(topology, dict) or not isinstance(topology.get("nodes"), dict):
        raise FabricError("InfiniBand cabling check: pass ibnetdiscover's output or its parsed form as the topology")
    selected = _select_hosts(nodes, hosts)
    plan_tors = sorted(set(e.get("tor") for n in nodes.values() for e in (n.get("rails") or []) if e.get("tor")))
    subnet = _Subnet(topology, plan_tors, switch_guids, hca_guids)
    findings, ok, rails_checked = [], [], 0
    planned_hcas = set()
    for host in sorted(nodes, key=str):
        for entry in _rails(nodes, host):
            device = (rail_hcas or {}).get(entry["rail"], "mlx5_%d" % (int(entry["rail"]) - 1))
            planned_hcas.update(subnet.hcas(host, entry["rail"], device))
    peers = _peer_expect(subnet, nodes, rail_hcas)
    for host in selected:
        mismatches = []
        for entry in _rails(nodes, host):
            rails_checked += 1
            peer = peers.get(entry.get("fabric")) or {}
            used = [k for k in ("width", "speed") if not expect.get(k) and peer.get(k)]
            wanted = dict(expect, peers=used, **dict((k, peer[k]) for k in used))
            _check_rail(subnet, host, entry, rail_hcas, wanted, findings, ok, mismatches)
        _report_mismatches(host, mismatches, findings)
    _extra_links(subnet, nodes, planned_hcas, findings)
    findings.sort(key=_order)
    ok.sort(key=_order)
    by_kind = {}
    for finding in findings:
        by_kind[finding["kind"]] = by_kind.get(finding["kind"], 0) + 1
    return {"findings": findings, "ok": ok,
            "summary": {"hosts": len(selected), "rails": rails_checked, "ok": len(ok), "findings": len(findings),
                        "by_kind": by_kind, "unverified_ports": 0}}


def _peer_expect(subnet, nodes, rail_hcas):
    """Per fabric, ``{"width", "speed"}``: what most of its rail links run (the higher on a tie);
    links of unknown width or speed are not counted. One pass over the rails."""
    counts = {}
    for host in nodes:
        for entry in _rails(nodes, host):
            device = (rail_hcas or {}).get(entry["rail"], "mlx5_%d" % (int(entry["rail"]) - 1))
            found = subnet.hcas(host, entry["rail"], device)
            links = subnet.ends.get(found[0]) or {} if len(found) == 1 else {}
            if not links:
                continue
            link = links[min(links)][2]
            for what in ("width", "speed"):
                if link.get(what) is not None:
                    per = counts.setdefault(entry.get("fabric"), {}).setdefault(what, {})
                    per[link[what]] = per.get(link[what], 0) + 1
    result = {}
    for fabric, per in counts.items():
        result[fabric] = {}
        for what, order in (("width", WIDTHS), ("speed", SPEEDS)):
            seen = [(n, order.index(v) if v in order else -1, v) for v, n in (per.get(what) or {}).items()]
            if seen:
                result[fabric][what] = max(seen)[2]
    return result


def _check_rail(subnet, host, entry, rail_hcas, expect, findings, ok, mismatches):
    device = (rail_hcas or {}).get(entry["rail"], "mlx5_%d" % (int(entry["rail"]) - 1))
    expected = {"tor": entry["tor"], "port": None if entry.get("tor_port") is None else str(entry["tor_port"])}
    base = {"host": host, "fabric": entry.get("fabric"), "rail": entry["rail"], "interface": device,
            "expected": expected}
    planned = "%s port %s" % (expected["tor"], expected["port"])
    label = "%s %s (rail %s)" % (host, device, entry["rail"])
    found = subnet.hcas(host, entry["rail"], device)
    if not found:
        given = (subnet.hca_guids.get(host) or {}).get(entry["rail"])
        what = "GUID %s" % given if given is not None else "description \"%s %s\"" % (host, device)
        findings.append(_finding(
            base, "missing", None, "no HCA with %s in the subnet (planned %s)" % (what, planned),
            "%s: no HCA with %s in the subnet, planned %s" % (label, what, planned),
            "check that %s is up with its HCA %s cabled to %s (and its node description or GUID in the inventory)"
            % (host, device, planned)))
        return
    if len(found) > 1:
        findings.append(_finding(
            base, "unexpected", None, "%d HCAs describe themselves as \"%s %s\": %s" % (
                len(found), host, device, ", ".join(found)),
            "%s: %d HCAs answer to the description \"%s %s\" (%s), planned %s" % (
                label, len(found), host, device, ", ".join(found), planned),
            "give the inventory the GUID of %s's rail %s HCA (hca_guids), or fix the duplicate node description"
            % (host, entry["rail"])))
        return
    guid = found[0]
    links = subnet.ends.get(guid) or {}
    if not links:
        findings.append(_finding(
            base, "missing", None, "HCA %s has no link (planned %s)" % (guid, planned),
            "%s: HCA %s has no active link, planned %s" % (label, guid, planned),
            "plug %s %s into %s (check the cable and the optics)" % (host, device, planned)))
        return
    if expected["tor"] not in subnet.leaf:
        findings.append(_finding(
            base, "missing", None, "leaf %s not in the subnet (planned %s)" % (expected["tor"], planned),
            "%s: the planned leaf %s is not in the subnet (no switch describes itself so, no switch_guids entry)"
            % (label, expected["tor"]),
            "set the node description of %s to its name, or give its GUID in switch_guids" % expected["tor"]))
        return
    port = min(links)
    peer, peer_port, link = links[port]
    seen = {"tor": subnet.switch_label(peer), "port": str(peer_port)}
    tor_ok = subnet.leaf.get(expected["tor"]) == peer
    if tor_ok and seen["port"] == expected["port"]:
        slow = [what for what, order in (("width", WIDTHS), ("speed", SPEEDS))
                if _below(link.get(what), expect.get(what), order)]
        if slow:
            got = "%s%s" % (link.get("width") or "?", link.get("speed") or "?")
            want = "%s%s" % (expect.get("width") or "", expect.get("speed") or "")
            used = [k for k in expect.get("peers") or () if k in slow]
            if used and used == slow:
                against = "most rail links of the fabric run %s" % want
            else:
                against = "planned at least %s%s" % (want, " (the %s that of the fabric's other rail links)"
                                                     % " and ".join(used) if used else "")
            findings.append(_finding(
                base, "slow_link", seen, "runs %s, %s" % (got, against),
                "%s reaches %s port %s but the link runs %s, %s" % (label, seen["tor"], seen["port"], got, against),
                "check the cable, the optics and the port settings of %s and %s port %s (iblinkinfo shows what "
                "each end could run)" % (host, seen["tor"], seen["port"])))
            return
        ok.append({"host": host, "fabric": entry.get("fabric"), "rail": entry["rail"], "interface": device,
                   "tor": seen["tor"], "port": seen["port"], "port_verified": True, "guid": guid,
                   "port_guid": subnet.port_guid(guid, port)})
        return
    neighbour = {"system_name": seen["tor"], "chassis_id": peer}
    mismatches.append((base, seen, neighbour, tor_ok))


def _extra_links(subnet, nodes, planned_hcas, findings):
    rail_of = {}
    for node in nodes.values():
        for entry in node.get("rails") or []:
            rail_of.setdefault(entry.get("tor"), (entry.get("fabric"), entry.get("rail")))
    for tor, guid in sorted(subnet.leaf.items()):
        for port, (peer, _peer_port, _link) in sorted((subnet.ends.get(guid) or {}).items()):
            node = subnet.nodes.get(peer) or {}
            if node.get("type") != "ca" or peer in planned_hcas:
                continue
            fabric, rail = rail_of.get(tor, (None, None))
            desc = node.get("description") or "no description"
            seen = {"tor": tor, "port": str(port)}
            finding = _finding(
                {"host": None, "fabric": fabric, "rail": rail, "interface": None, "expected": {"tor": tor, "port": None}},
                "extra", seen, "%s port %s reaches \"%s\" (%s), in no rail of the plan" % (tor, port, desc, peer),
                "%s port %s reaches the HCA \"%s\" (%s), which is no rail of the plan" % (tor, port, desc, peer),
                "unplug it or add its node to the inventory (or give its GUID in hca_guids)")
            findings.append(finding)
