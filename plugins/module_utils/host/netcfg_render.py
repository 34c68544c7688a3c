# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Persistent rail configuration rendered from a :class:`rail_intent.HostIntent`.

Every renderer reads only the intent (links, addresses, routes, rules, sysctls)
and writes through the structured dumpers of :mod:`file_formats`, never by
joining strings.  The result is ``{relative path: (content, mode)}``.

The files this collection owns are exactly those matching :data:`OWNED_PATTERNS`:
a run removes any of them that it did not render, whichever backend wrote it.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.common import file_formats
from ansible_collections.ainet.fabric.plugins.module_utils.host import iproute

HEADER = "Managed by ainet.fabric (rail_network role). Local changes are overwritten."
NETWORKD_DIR = "etc/systemd/network"
NETWORKD_CONF = "etc/systemd/networkd.conf.d/60-ainet-rails.conf"
NETPLAN_FILE = "etc/netplan/60-ainet-rails.yaml"
NM_DIR = "etc/NetworkManager/system-connections"
SYSCTL_FILE = "etc/sysctl.d/60-ainet-rails.conf"
PROTOS_FILE = "etc/iproute2/rt_protos.d/ainet.conf"
OWNED_PATTERNS = (
    NETWORKD_DIR + "/60-ainet-*.network",
    "etc/systemd/networkd.conf.d/60-ainet-*.conf",
    "etc/netplan/60-ainet-*.yaml",
    NM_DIR + "/ainet-*.nmconnection",
    "etc/sysctl.d/60-ainet-*.conf",
    PROTOS_FILE,
    # The keep-off unit of releases before 0.2, and its enablement link.
    "etc/systemd/system/ainet-rail-*.service",
    "etc/systemd/system/*.wants/ainet-rail-*.service",
)
SCAN_DIRS = sorted({p.rsplit("/", 1)[0] for p in OWNED_PATTERNS if "*" not in p.rsplit("/", 1)[0]}
                   | {"etc/systemd/system/multi-user.target.wants"})
# networkd removes routes and rules it did not configure (ManageForeignRoutes=, since v246;
# ManageForeignRoutingPolicyRules=, since v249) when it starts or reconfigures a link: that
# would wipe what CNIs, Spiderpool or an operator added. Ours are in the .network files.
_NETWORKD_CONF = [("Network", [("ManageForeignRoutingPolicyRules", False), ("ManageForeignRoutes", False)])]


def _glob_match(path, pieces):
    """fnmatchcase for a pattern whose only wildcard is ``*`` (any characters), given as its ``*``-separated
    pieces; without building a regular expression (about 0.5 ms each on a host module's first call)."""
    first, last = pieces[0], pieces[-1]
    if len(pieces) == 1:
        return path == first
    if not path.startswith(first) or not path.endswith(last) or len(path) < len(first) + len(last):
        return False
    pos, end = len(first), len(path) - len(last)
    for piece in pieces[1:-1]:
        pos = path.find(piece, pos, end)
        if pos < 0:
            return False
        pos += len(piece)
    return True


# '*' is the only wildcard in OWNED_PATTERNS and the only one _glob_match knows (test_netcfg_render checks both).
_OWNED_PIECES = tuple(tuple(pattern.split("*")) for pattern in OWNED_PATTERNS)


def owned(path):
    """True for a path (relative to the root) that this collection writes (:data:`OWNED_PATTERNS`)."""
    return any(_glob_match(path, pieces) for pieces in _OWNED_PIECES)


def _v6(addrs):
    return any(":" in a for a in addrs)


def _per_interface(intent):
    """{ifname: (addresses, routes, rules)} in rail order."""
    out = {name: ([], [], []) for name in intent.interfaces}
    ip_owner = {}
    for addr in intent.addresses:
        out[addr.ifname][0].append(addr.cidr)
        ip_owner[addr.cidr.split("/")[0]] = addr.ifname
    for key, value in intent.routes.items():
        out[value.dev][1].append((key, value))
    for rule in intent.rules:
        src = iproute.rule_get(rule, "src")
        out[ip_owner[src.split("/")[0]]][2].append(rule)
    return out


def render_networkd(intent):
    files = {}
    for name, (addrs, routes, rules) in _per_interface(intent).items():
        v6 = _v6(addrs)
        sections = [
            ("Match", [("Name", name)]),
            ("Link", [("MTUBytes", intent.links[name]), ("RequiredForOnline", False)]),
            ("Network", [("Address", a) for a in addrs] + [
                ("LinkLocalAddressing", "ipv6" if v6 else "no"), ("IPv6AcceptRA", False),
                ("ConfigureWithoutCarrier", True), ("KeepConfiguration", "static")]),
        ]
        for key, value in sorted(routes, key=lambda kv: (kv[1].gateway is not None, str(kv[0]))):
            entries = [("Destination", key.dst)]
            if value.gateway:
                entries.append(("Gateway", value.gateway))
            if value.src:
                entries.append(("PreferredSource", value.src))
            if value.scope == 253:
                entries.append(("Scope", "link"))
            if key.table != iproute.TABLE_MAIN:
                entries.append(("Table", key.table))
            entries += [("Metric", key.metric), ("Protocol", value.proto)]
            sections.append(("Route", entries))
        for rule in rules:
            sections.append(("RoutingPolicyRule", [("From", iproute.rule_get(rule, "src")),
                                                   ("Table", iproute.rule_get(rule, "table")),
                                                   ("Priority", iproute.rule_get(rule, "priority"))]))
        files["%s/60-ainet-%s.network" % (NETWORKD_DIR, name)] = (file_formats.unit_dump(sections, HEADER), "0644")
    files[NETWORKD_CONF] = (file_formats.unit_dump(_NETWORKD_CONF, HEADER), "0644")
    return files


def render_netplan(intent):
    ethernets = {}
    for name, (addrs, routes, rules) in _per_interface(intent).items():
        v6 = _v6(addrs)
        entry = {"mtu": intent.links[name], "dhcp4": False, "dhcp6": False, "accept-ra": False,
                 "link-local": ["ipv6"] if v6 else [], "addresses": list(addrs)}
        if routes:
            entry["routes"] = []
            for key, value in sorted(routes, key=lambda kv: (kv[1].gateway is not None, str(kv[0]))):
                route = {"to": key.dst}
                if value.gateway:
                    route["via"] = value.gateway
                if value.src:
                    route["from"] = value.src
                if value.scope == 253:
                    route["scope"] = "link"
                if key.table != iproute.TABLE_MAIN:
                    route["table"] = key.table
                route["metric"] = key.metric
                entry["routes"].append(route)
        if rules:
            entry["routing-policy"] = [{"from": iproute.rule_get(r, "src"), "table": iproute.rule_get(r, "table"),
                                        "priority": iproute.rule_get(r, "priority")} for r in rules]
        ethernets[name] = entry
    files = {NETPLAN_FILE: (file_formats.yaml_dump({"network": {"version": 2, "ethernets": ethernets}}, HEADER),
                            "0600")}
    # netplan's usual backend is networkd, which would otherwise delete other tools' routes and rules.
    files[NETWORKD_CONF] = (file_formats.unit_dump(_NETWORKD_CONF, HEADER), "0644")
    return files


def render_nm(intent):
    files = {}
    for name, (addrs, routes, rules) in _per_interface(intent).items():
        fam, other = ("ipv6", "ipv4") if _v6(addrs) else ("ipv4", "ipv6")
        unspecified = "::" if _v6(addrs) else "0.0.0.0"
        ip_entries = [("method", "manual")]
        ip_entries += [("address%d" % (i + 1), a) for i, a in enumerate(addrs)]
        ip_entries += [("never-default", True), ("may-fail", False)]
        ordered = sorted(routes, key=lambda kv: (kv[1].gateway is not None, str(kv[0])))
        for i, (key, value) in enumerate(ordered, 1):
            # dest,gateway,metric; options carry the table, scope and source.
            ip_entries.append(("route%d" % i, "%s,%s,%d" % (key.dst, value.gateway or unspecified, key.metric)))
            options = []
            if key.table != iproute.TABLE_MAIN:
                options.append("table=%d" % key.table)
            if value.scope == 253:
                options.append("scope=253")
            if value.src:
                options.append("src=%s" % value.src)
            if options:
                ip_entries.append(("route%d_options" % i, ",".join(options)))
        for i, rule in enumerate(rules, 1):
            ip_entries.append(("routing-rule%d" % i, "priority %d from %s table %d" % (
                iproute.rule_get(rule, "priority"), iproute.rule_get(rule, "src"), iproute.rule_get(rule, "table"))))
        groups = [
            ("connection", [("id", "ainet-" + name), ("type", "ethernet"), ("interface-name", name),
                            ("autoconnect", True)]),
            ("ethernet", [("mtu", intent.links[name])]),
            (fam, ip_entries),
            (other, [("method", "disabled")]),
        ]
        files["%s/ainet-%s.nmconnection" % (NM_DIR, name)] = (file_formats.keyfile_dump(groups, HEADER), "0600")
    return files


def render(intent):
    """All files of the intent's backend, plus the sysctl.d file and the protocol name."""
    renderer = {"networkd": render_networkd, "netplan": render_netplan, "nm": render_nm}.get(intent.backend)
    if renderer is None:
        return {}
    files = renderer(intent)
    if intent.sysctls:
        files[SYSCTL_FILE] = (file_formats.sysctl_dump(intent.sysctls, HEADER), "0644")
    files[PROTOS_FILE] = (file_formats.unit_dump([], HEADER) + "%d\tainet\n" % iproute.PROTO_AINET, "0644")
    return files
