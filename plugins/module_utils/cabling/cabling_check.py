# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compare the LLDP neighbours of the GPU hosts' rail NICs with the rail plan.

Input: the rail plan (``plan["nodes"][host]["rails"]``: ``{"fabric", "rail", "interface",
"tor", "tor_port", ...}`` per rail) and, per host, the neighbours the parsers of
:mod:`lldp_parse` returned, either as ``{local interface: [neighbour, ...]}`` or as the
parser's flat list. A host missing from the neighbours has no LLDP data at all.

Each rail gets one verdict:

* ok: one neighbour, the planned ToR (case and a domain suffix ignored: ``su1-leaf1.example.net``
  is ``su1-leaf1``) and the planned port (case ignored). Names are compared as announced, except a
  SONiC ToR's Port ID of subtype ``local``: that is the port's alias (lldpmgrd), mapped to the
  ``EthernetN`` the plan uses through the ToR's PORT table (``port_aliases``, see :mod:`port_names`).
  A neighbour on the planned ToR whose port cannot be named (none announced; a SONiC alias without
  its PORT table) is ok with ``port_verified: False`` and ``why`` (counted in
  ``summary.unverified_ports``), never a ``wrong_port``.
* ``missing``: the interface has no LLDP data, or no neighbour.
* ``unexpected``: more than one neighbour on the rail interface.
* ``swapped``: two rail interfaces of the host each reach the other's planned ToR port; one
  finding per pair (on the first of the two), ``pair`` naming the second.
* ``wrong_tor``: the neighbour is another switch (or sends no system name).
* ``wrong_port``: the planned ToR, another port.
* ``unknown_interface``: the plan has no interface name for the rail (inventory lacks it).

Every finding: ``host, fabric, rail, interface, kind, expected: {tor, port}, seen: {tor, port}
or None, detail`` (short, for tables), ``fix`` (what to do) and ``message`` (one line: what is
wrong, then the fix). Findings and ok entries are sorted by (host, fabric, rail).
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.cabling.lldp_parse import neighbours_by_interface
from ansible_collections.ainet.fabric.plugins.module_utils.cabling.port_names import planned_name
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.common.report_escape import md_text

KINDS = ("missing", "swapped", "wrong_tor", "wrong_port", "unexpected", "unknown_interface")


def _clean(name):
    if name is None:
        return None
    text = str(name).strip().rstrip(".").lower()
    return text or None


def same_switch(seen, planned):
    """Switch names equal ignoring case and a domain suffix (``leaf1.example.net`` == ``leaf1``)."""
    a, b = _clean(seen), _clean(planned)
    if a is None or b is None:
        return False
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def same_port(seen, planned):
    """Port names equal ignoring case and surrounding blanks."""
    a, b = _clean(seen), _clean(planned)
    return a is not None and a == b


def _order(item):
    rail = item.get("rail")
    return (str(item.get("host")), str(item.get("fabric") or ""),
            rail if isinstance(rail, int) else -1, str(rail))


def _plan_nodes(plan):
    nodes = plan.get("nodes") if isinstance(plan, dict) else None
    if not isinstance(nodes, dict):
        raise FabricError("cabling check: the plan has no \"nodes\" mapping; pass the rail plan "
                          "(plan.nodes[host].rails)")
    return nodes


def _select_hosts(nodes, hosts):
    if hosts is None:
        return sorted(nodes, key=str)
    if isinstance(hosts, str):
        hosts = [hosts]
    selected = []
    for host in hosts:
        if host not in nodes:
            raise FabricError("cabling check: host %r is not in the rail plan" % (host,))
        if host not in selected:
            selected.append(host)
    return sorted(selected, key=str)


def _rails(nodes, host):
    node = nodes[host]
    rails = node.get("rails") if isinstance(node, dict) else None
    if not isinstance(rails, list):
        raise FabricError("cabling check: plan.nodes[%s] has no \"rails\" list" % host)
    for index, entry in enumerate(rails):
        if not isinstance(entry, dict) or entry.get("rail") is None or not entry.get("tor"):
            raise FabricError("cabling check: plan.nodes[%s].rails[%d] lacks \"rail\" or \"tor\"" % (host, index))
    return sorted(rails, key=lambda e: _order(dict(e, host=host)))


def _host_neighbours(value, host):
    """``{interface: [neighbour, ...]}`` of one host, or None when it has no LLDP data at all."""
    if value is None:
        return None
    if isinstance(value, list):
        return neighbours_by_interface(value)
    if not isinstance(value, dict):
        raise FabricError("cabling check: the neighbours of %s are a %s; expected a mapping of interface to "
                          "neighbour list" % (host, type(value).__name__))
    result = {}
    for iface, entries in value.items():
        if entries is None:
            entries = []
        elif isinstance(entries, dict):
            entries = [entries]
        result[iface] = [e for e in entries if isinstance(e, dict)]
    return result


def _tor_text(neighbour):
    if neighbour.get("system_name"):
        return neighbour["system_name"]
    if neighbour.get("chassis_id"):
        return "an unnamed switch (chassis id %s)" % neighbour["chassis_id"]
    return "an unnamed device"


def _where(neighbour, port):
    """``su1-leaf2 swp17``, or the raw port id when the neighbour announces no port name."""
    tor = _tor_text(neighbour)
    if port:
        return "%s %s" % (tor, port)
    if neighbour.get("port_id"):
        return "%s (port id %s %s)" % (tor, neighbour.get("port_id_type") or "?", neighbour["port_id"])
    return tor


def _planned(expected):
    return "%s %s" % (expected["tor"], expected["port"]) if expected["port"] else str(expected["tor"])


def _finding(base, kind, seen, detail, problem, fix):
    finding = dict(base)
    finding.update({
        "kind": kind,
        "seen": seen,
        "detail": detail,
        "fix": fix,
        "message": "%s; %s" % (problem, fix),
    })
    return finding


def _port_of(neighbour, tors, port_aliases):
    """(port, why) of ``neighbour`` named as the plan names the ports of the ToR it is (its system name among the
    plan's ToRs; unknown: as announced)."""
    name = next((t for t in sorted(tors) if same_switch(neighbour.get("system_name"), t)), None)
    if name is not None and name in (port_aliases or {}):
        return planned_name(neighbour, True, port_aliases[name])
    return planned_name(neighbour)


def _check_rail(host, entry, neighbours, findings, ok, mismatches, links=None, tors=None, port_aliases=None):
    iface = entry.get("interface")
    expected = {"tor": entry["tor"], "port": entry.get("tor_port")}
    base = {"host": host, "fabric": entry.get("fabric"), "rail": entry["rail"], "interface": iface,
            "expected": expected}
    planned = _planned(expected)
    label = "%s %s (rail %s)" % (host, iface, entry["rail"])
    if not iface:
        findings.append(_finding(
            base, "unknown_interface", None, "no interface name in the inventory",
            "%s rail %s (%s) has no interface name in the inventory, planned %s"
            % (host, entry["rail"], entry.get("fabric"), planned),
            "set fabric_rail_interfaces of %s so that rail %s names its NIC, then check again" % (host, entry["rail"])))
        return
    state = (links or {}).get(iface)
    if state is not None and state.upper() not in ("UP", "UNKNOWN") and not (neighbours or {}).get(iface):
        findings.append(_finding(
            base, "missing", None, "link %s (planned %s)" % (state.lower(), planned),
            "%s: the link is %s (operstate %s), so no LLDP frame arrives, planned %s"
            % (label, state.lower(), state, planned),
            "bring %s %s up (ainet.fabric.rail_network does), then check its cable, optics and the switch port %s"
            % (host, iface, planned)))
        return
    if neighbours is None or iface not in neighbours:
        why = "no LLDP data from %s" % host if neighbours is None else "no LLDP data for %s" % iface
        findings.append(_finding(
            base, "missing", None, "%s (planned %s)" % (why, planned),
            "%s: %s, planned %s" % (label, why, planned),
            "check that the LLDP agent (lldpd or lldpad) receives on %s %s and that it is cabled to %s"
            % (host, iface, planned)))
        return
    seen_all = neighbours[iface]
    if not seen_all:
        findings.append(_finding(
            base, "missing", None, "no LLDP neighbour (planned %s)" % planned,
            "%s sees no LLDP neighbour, planned %s" % (label, planned),
            "plug %s %s into %s (check the cable, the optics and that LLDP is on at the switch port)"
            % (host, iface, planned)))
        return
    named = [_port_of(n, tors or {}, port_aliases) for n in seen_all]
    ports = [port for port, _why in named]
    if len(seen_all) > 1:
        listed = ", ".join(_where(n, p) for n, p in zip(seen_all, ports))
        findings.append(_finding(
            base, "unexpected", {"tor": seen_all[0].get("system_name"), "port": ports[0]},
            "%d LLDP neighbours: %s" % (len(seen_all), listed),
            "%s sees %d LLDP neighbours (%s), planned %s only" % (label, len(seen_all), listed, planned),
            "find the extra LLDP speaker on the link (a switch or hub in between, or a second agent such as the "
            "NIC firmware's LLDP); %s %s must reach only %s" % (host, iface, planned)))
        return
    neighbour, port = seen_all[0], ports[0]
    seen = {"tor": neighbour.get("system_name"), "port": port}
    tor_ok = same_switch(seen["tor"], expected["tor"])
    if tor_ok and (port is None or expected["port"] is None):
        why = named[0][1] or ("the plan names no port" if expected["port"] is None else
                              "the neighbour announces no port name (%s)" % _where(neighbour, None))
        ok.append({"host": host, "fabric": entry.get("fabric"), "rail": entry["rail"], "interface": iface,
                   "tor": seen["tor"], "port": port, "port_verified": False, "why": why})
        return
    if tor_ok and same_port(port, expected["port"]):
        ok.append({"host": host, "fabric": entry.get("fabric"), "rail": entry["rail"], "interface": iface,
                   "tor": seen["tor"], "port": port, "port_verified": True})
        return
    mismatches.append((base, seen, neighbour, tor_ok))


def _crossed(a, b):
    """Whether rail a reaches b's planned ToR port and b reaches a's."""
    seen_a, seen_b = a[1], b[1]
    plan_a, plan_b = a[0]["expected"], b[0]["expected"]
    return (seen_a["port"] is not None and seen_b["port"] is not None
            and same_switch(seen_a["tor"], plan_b["tor"]) and same_port(seen_a["port"], plan_b["port"])
            and same_switch(seen_b["tor"], plan_a["tor"]) and same_port(seen_b["port"], plan_a["port"]))


def _report_mismatches(host, mismatches, findings):
    paired = set()
    for i, first in enumerate(mismatches):
        if i in paired:
            continue
        for j in range(i + 1, len(mismatches)):
            if j in paired or not _crossed(first, mismatches[j]):
                continue
            paired.update((i, j))
            second = mismatches[j]
            base, seen = first[0], first[1]
            other = second[0]
            problem = ("%s: %s (rail %s) and %s (rail %s) are crossed: %s reaches %s %s, planned %s"
                       % (host, base["interface"], base["rail"], other["interface"], other["rail"],
                          base["interface"], seen["tor"], seen["port"], _planned(base["expected"])))
            finding = _finding(base, "swapped", seen,
                               "crossed with %s (rail %s)" % (other["interface"], other["rail"]),
                               problem, "swap the two cables")
            finding["pair"] = {"fabric": other["fabric"], "rail": other["rail"], "interface": other["interface"],
                               "expected": other["expected"], "seen": second[1]}
            findings.append(finding)
            break
    for index, (base, seen, neighbour, tor_ok) in enumerate(mismatches):
        if index in paired:
            continue
        label = "%s %s (rail %s)" % (host, base["interface"], base["rail"])
        where = _where(neighbour, seen["port"])
        planned = _planned(base["expected"])
        if tor_ok:
            findings.append(_finding(
                base, "wrong_port", seen, "reaches %s, planned %s" % (where, planned),
                "%s reaches %s, planned %s" % (label, where, planned),
                "move %s %s from %s to %s" % (host, base["interface"], where, base["expected"]["port"])))
        else:
            fix = "move %s %s from %s to %s" % (host, base["interface"], where, planned)
            if not neighbour.get("system_name"):
                fix += " (or, if it is that switch, make it announce its system name)"
            findings.append(_finding(
                base, "wrong_tor", seen, "reaches %s, planned %s" % (where, planned),
                "%s reaches %s, planned %s" % (label, where, planned), fix))


def check_cabling(plan, neighbours_by_host, hosts=None, links=None, port_aliases=None):
    """Findings of the LLDP neighbours against the rail plan (see the module docstring).

    ``links``: ``{host: {interface: operstate}}`` (``ip -j link``'s ``operstate``, optional): a rail NIC without a
    neighbour whose link is not up is reported as down, with that fix. ``port_aliases``: ``{tor: {alias:
    port} or None}`` for each ToR whose NOS announces port aliases over LLDP (``tor.platforms.lldp_port_aliases``
    of its running configuration; None: none given, its ports stay unverified); other ToRs are compared as
    announced.

    Returns ``{"findings": [...], "ok": [...], "summary": {...}}``; ``summary`` has ``hosts``,
    ``rails``, ``ok``, ``findings``, ``by_kind`` ({kind: count}) and ``unverified_ports``.
    """
    nodes = _plan_nodes(plan)
    if neighbours_by_host is None:
        neighbours_by_host = {}
    if not isinstance(neighbours_by_host, dict):
        raise FabricError("cabling check: the neighbours are a %s; expected a mapping of host to "
                          "{interface: [neighbour, ...]}" % type(neighbours_by_host).__name__)
    selected = _select_hosts(nodes, hosts)
    findings = []
    ok = []
    rails_checked = 0
    for host in selected:
        rails = _rails(nodes, host)
        rails_checked += len(rails)
        neighbours = _host_neighbours(neighbours_by_host.get(host), host)
        mismatches = []
        for entry in rails:
            _check_rail(host, entry, neighbours, findings, ok, mismatches, (links or {}).get(host),
                        plan.get("tors") or {}, port_aliases)
        _report_mismatches(host, mismatches, findings)
    findings.sort(key=_order)
    ok.sort(key=_order)
    by_kind = {}
    for finding in findings:
        by_kind[finding["kind"]] = by_kind.get(finding["kind"], 0) + 1
    return {
        "findings": findings,
        "ok": ok,
        "summary": {
            "hosts": len(selected),
            "rails": rails_checked,
            "ok": len(ok),
            "findings": len(findings),
            "by_kind": by_kind,
            "unverified_ports": sum(1 for entry in ok if not entry["port_verified"]),
        },
    }


def _cell(value):
    """A Markdown table cell (``-`` when empty): names and ports are the inventory's and the LLDP neighbours'."""
    return md_text(value) or "-"


def _unverified_lines(result):
    """One line per rail on its planned ToR whose port could not be verified, with why."""
    rows = [entry for entry in result.get("ok") or [] if not entry.get("port_verified", True)]
    if not rows:
        return []
    lines = ["", "%d rail(s) reach their planned ToR but the port was not verified:" % len(rows), ""]
    lines += ["- %s %s (rail %s, %s): %s" % (
        md_text(e.get("host")), md_text(e.get("interface")), md_text(e.get("rail")), md_text(e.get("tor")),
        md_text(e.get("why") or "no port name")) for e in rows]
    return lines


def findings_markdown(result):
    """A short Markdown table of the findings (host, interface, rail, finding, fix), then the rails whose port
    was not verified, with why. Every value is :func:`report_escape.md_text`: what an LLDP neighbour announces
    (system and port names, descriptions) cannot add a row, a line, a link or markup."""
    findings = result.get("findings") or []
    summary = result.get("summary") or {}
    if not findings:
        text = "No cabling findings: %s rails on %s hosts match the plan." % (
            summary.get("rails", 0), summary.get("hosts", 0))
        return "\n".join([text] + _unverified_lines(result)) + "\n"
    lines = ["| host | interface | rail | finding | fix |", "|---|---|---|---|---|"]
    for finding in findings:
        interface, rail = finding.get("interface"), finding.get("rail")
        pair = finding.get("pair")
        if pair:
            interface = "%s, %s" % (interface, pair.get("interface"))
            rail = "%s, %s" % (rail, pair.get("rail"))
        text = "%s: %s" % (finding.get("kind", "").replace("_", " "), finding.get("detail", ""))
        lines.append("| %s | %s | %s | %s | %s |" % (
            _cell(finding.get("host")), _cell(interface), _cell(rail), _cell(text), _cell(finding.get("fix"))))
    return "\n".join(lines + _unverified_lines(result)) + "\n"


def status_markdown(status):
    """The plan report's section on the cabling: the last check's counts and findings (``status``: what
    :func:`check_cabling` returned, as the cabling check saved it), or that none was made."""
    lines = ["## Cabling", ""]
    if not status:
        return "\n".join(lines + ["Not checked yet (playbooks/cabling.yml).", ""])
    summary = status.get("summary") or {}
    lines.append("Last check: %s hosts, %s rails, %s as planned, %s finding(s)." % tuple(
        md_text(summary.get(key)) for key in ("hosts", "rails", "ok", "findings")))
    if status.get("findings"):
        lines += ["", findings_markdown(status).rstrip("\n")]
    return "\n".join(lines + [""])


def finding_marks(status):
    """``{(host, fabric, rail): "cable <kind>"}`` of the findings a saved check holds (for the plan's diagram)."""
    return dict(((f.get("host"), f.get("fabric"), f.get("rail")), "cable %s" % f.get("kind", "?").replace("_", " "))
                for f in (status or {}).get("findings") or [])
