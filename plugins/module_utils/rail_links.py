# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rail NIC state: desired state from the plan, live state from ``ip -j``, and the difference.

Everything here is pure: parsers take the JSON text that iproute2 prints, and
``plan_changes()`` returns the ``ip -batch`` lines and sysctl writes that turn
the live state into the desired one.  The module only runs commands.

State is a set of normalised items:

* ``("link", ifname)`` -> ``{"mtu": int, "up": bool}``
* ``("addr", ifname, "ip/prefix")``
* ``("route", table, dst)`` -> ``(gateway, dev, prefsrc)``   (table "main" or a number as text)
* ``("rule", priority, invert, src, dst, table)``
* ``("sysctl", path)`` -> value
"""

from __future__ import annotations

import ipaddress
import json

from ansible_collections.ainet.fabric.plugins.module_utils.errors import FabricModelError, FabricStateError

STACKED_KINDS = ("vlan", "macvlan", "macvtap", "ipvlan")
SYSCTLS_V4 = (("rp_filter", "2"), ("arp_ignore", "1"), ("arp_announce", "2"), ("arp_filter", "1"))


def _net(text, family):
    """Normalise a dst/src as ip prints it ("default", "1.2.3.4", "1.2.3.0/24") to a CIDR."""
    if text in (None, "all"):
        return "all"
    if text == "default":
        return "0.0.0.0/0" if family == 4 else "::/0"
    return str(ipaddress.ip_network(text, strict=False))


def desired_state(cluster, rails):
    """Desired items for one host.

    ``cluster`` is a validated Cluster; ``rails`` the host's entries from the
    planner, each with an ``interface`` key.
    """
    family = cluster.family
    links = {}
    addrs = set()
    routes = {}
    rules = set()
    sysctls = {}
    policy = cluster.policy_routing
    supernet = str(cluster.supernet)
    for entry in rails:
        ifname = entry["interface"]
        links[ifname] = {"mtu": entry["mtu"], "up": True}
        addrs.add((ifname, entry["address"]))
        if not policy:
            continue
        table = str(entry["table"])
        routes[(table, entry["subnet"])] = (None, ifname, entry["ip"])
        routes[(table, _net("default", family))] = (entry["gateway"], ifname, None)
        rules.add((entry["priority"], False, entry["ip"] + ("/32" if family == 4 else "/128"), "all", table))
        if family == 4:
            for key, value in SYSCTLS_V4:
                sysctls["net/ipv4/conf/%s/%s" % (ifname, key)] = value
    if policy and rails:
        first = rails[0]
        if cluster.keep_off_rule:
            rules.add((cluster.rule_priority, True, "all", supernet, "main"))
        if cluster.aggregate_route:
            routes[("main", supernet)] = (first["gateway"], first["interface"], None)
    return {"family": family, "links": links, "addrs": addrs, "routes": routes, "rules": rules,
            "sysctls": sysctls}


def _load(text, what):
    try:
        data = json.loads(text or "[]")
    except ValueError as exc:
        raise FabricStateError("could not parse `%s` JSON output: %s" % (what, exc)) from None
    if not isinstance(data, list):
        raise FabricStateError("`%s` printed %s, expected a JSON list" % (what, type(data).__name__))
    return data


def parse_links(text):
    """``ip -j -d addr show`` -> {ifname: {mtu, max_mtu, up, addrs: [(family, ip/prefix, scope)]}}."""
    links = {}
    for item in _load(text, "ip -j -d addr show"):
        name = item.get("ifname")
        if not name:
            continue
        addrs, broadcast = [], {}
        for info in item.get("addr_info") or []:
            fam = {"inet": 4, "inet6": 6}.get(info.get("family"))
            if fam and info.get("local") is not None:
                cidr = "%s/%s" % (info["local"], info.get("prefixlen"))
                addrs.append((fam, cidr, info.get("scope", "global")))
                broadcast[cidr] = info.get("broadcast")
        links[name] = {
            "mtu": item.get("mtu"),
            "max_mtu": item.get("max_mtu"),
            "up": "UP" in (item.get("flags") or []),
            "operstate": item.get("operstate"),
            "kind": (item.get("linkinfo") or {}).get("info_kind"),
            # The lower device of a VLAN / macvlan / ipvlan ("link": "bond0"); a NIC in another
            # namespace shows only "link_index", which cannot be resolved here.
            "lower": item.get("link"),
            "addrs": addrs,
            "broadcast": broadcast,
        }
    return links


def _broadcast(cidr):
    """The broadcast address networkd (and ``ip ... broadcast +``) gives an IPv4 address; None otherwise."""
    iface = ipaddress.ip_interface(cidr)
    if iface.version != 4 or iface.network.prefixlen > 30:
        return None
    return str(iface.network.broadcast_address)


def parse_routes(text, family):
    """``ip [-6] -j route show table all`` -> {(table, dst): (gateway, dev, prefsrc)} (unicast only)."""
    routes = {}
    for item in _load(text, "ip -j route show table all"):
        if item.get("type", "unicast") != "unicast":
            continue
        table = str(item.get("table", "main"))
        dst = _net(item.get("dst"), family)
        key = (table, dst)
        if key in routes:
            continue  # keep the first (lowest metric) as the kernel does
        routes[key] = (item.get("gateway"), item.get("dev"), item.get("prefsrc"))
    return routes


def parse_rules(text, family):
    """``ip [-6] -j rule show`` -> set of (priority, invert, src, dst, table)."""
    rules = set()
    for item in _load(text, "ip -j rule show"):
        src = item.get("src", "all")
        if src != "all" and item.get("srclen") is not None:
            src = "%s/%s" % (src, item["srclen"])
        dst = item.get("dst", "all")
        if dst != "all" and item.get("dstlen") is not None:
            dst = "%s/%s" % (dst, item["dstlen"])
        rules.add((item.get("priority"), "not" in item, _net(src, family), _net(dst, family),
                   str(item.get("table", "main"))))
    return rules


def protected_interfaces(links, routes, connection_ip=None, extra=()):
    """Interfaces that carry a default route in main, the Ansible connection, or are named by the user."""
    protected = {}
    for (table, dst), (_gw, dev, _src) in routes.items():
        if table == "main" and dst in ("0.0.0.0/0", "::/0") and dev:
            protected.setdefault(dev, "carries the default route")
    if connection_ip:
        for name, link in links.items():
            for _fam, addr, _scope in link["addrs"]:
                if addr.split("/")[0] == connection_ip:
                    protected.setdefault(name, "carries the Ansible connection (%s)" % connection_ip)
    for name in extra:
        protected.setdefault(name, "is listed in protect_interfaces")
    return protected


def check_safe(cluster, rails, links, protected, connection_peer=None):
    """Refuse plans that would touch the management path or cannot apply.  Raises before any change."""
    supernet = cluster.supernet
    for index, entry in enumerate(rails):
        name = entry["interface"]
        field = "fabric_rail_interfaces[%d]" % index
        if name not in links:
            raise FabricModelError(field, name, "does not exist on this host",
                                   "use one of: %s" % ", ".join(sorted(links)))
        if name in protected:
            raise FabricModelError(field, name, "%s; refusing to touch it" % protected[name],
                                   "list only RDMA NICs in fabric_rail_interfaces")
        max_mtu = links[name].get("max_mtu")
        if max_mtu and entry["mtu"] > max_mtu:
            raise FabricModelError("fabric_cluster.mtu", entry["mtu"],
                                   "is above the maximum MTU %d of %s" % (max_mtu, name),
                                   "lower the MTU to %d or less" % max_mtu)
        # A VLAN, macvlan or ipvlan reports max_mtu 65535 but can never exceed its lower device.
        lower = links[name].get("lower")
        if links[name].get("kind") in STACKED_KINDS and lower in links and links[lower]["mtu"] < entry["mtu"]:
            raise FabricModelError("fabric_cluster.mtu", entry["mtu"],
                                   "is above the MTU %d of %s, the lower device of %s %s"
                                   % (links[lower]["mtu"], lower, links[name]["kind"], name),
                                   "raise the MTU of %s first, or lower fabric_cluster.mtu" % lower)
    for name, reason in sorted(protected.items()):
        for fam, addr, scope in links.get(name, {}).get("addrs", ()):
            if fam != supernet.version or scope != "global":
                continue
            if ipaddress.ip_interface(addr).network.overlaps(supernet):
                raise FabricModelError("fabric_cluster.addressing.supernet", str(supernet),
                                       "overlaps %s on %s, which %s" % (addr, name, reason),
                                       "choose an RDMA supernet outside the management network")
    if connection_peer:
        peer = ipaddress.ip_address(connection_peer)
        if peer.version == supernet.version and peer in supernet:
            raise FabricModelError("fabric_cluster.addressing.supernet", str(supernet),
                                   "contains the Ansible controller's address %s" % peer,
                                   "choose an RDMA supernet that does not contain the controller")


def current_state(desired, links, routes, rules, sysctls):
    """The live items in the scope that ``desired`` manages."""
    ifnames = set(desired["links"])
    tables = {table for table, _dst in desired["routes"]}
    priorities = {rule[0] for rule in desired["rules"]}
    family = desired["family"]
    return {
        "family": family,
        "links": {n: {"mtu": links[n]["mtu"], "up": links[n]["up"]} for n in ifnames if n in links},
        # An address without the broadcast that networkd would give it counts as missing:
        # networkd fails ("Numerical result out of range") to take it over at boot or reload.
        "addrs": {(n, a) for n in ifnames if n in links for fam, a, scope in links[n]["addrs"]
                  if fam == family and scope == "global"
                  and ((n, a) not in desired["addrs"] or links[n].get("broadcast", {}).get(a) == _broadcast(a))},
        "routes": {k: v for k, v in routes.items()
                   if (k[0] in tables and k[0] != "main") or k in desired["routes"]},
        "rules": {r for r in rules if r[0] in priorities},
        "sysctls": {k: sysctls.get(k) for k in desired["sysctls"]},
    }


def _rule_cmd(verb, rule):
    priority, invert, src, dst, table = rule
    parts = ["rule", verb, "priority", str(priority)]
    if invert:
        parts.append("not")
    if src != "all":
        parts += ["from", src]
    if dst != "all":
        parts += ["to", dst]
    parts += ["table", table]
    if verb != "del":
        parts += ["protocol", "static"]
    return " ".join(parts)


def _route_cmd(verb, table, dst, value):
    gateway, dev, src = value
    parts = ["route", verb, dst]
    if gateway:
        parts += ["via", gateway]
    if dev:
        parts += ["dev", dev]
    if src:
        parts += ["src", src]
    if gateway is None and verb != "del":
        parts += ["scope", "link"]
    parts += ["table", table]
    if verb != "del":
        # What systemd-networkd creates from the persisted files, so it adopts ours as its own.
        parts += ["proto", "static"]
    return " ".join(parts)


def plan_changes(desired, current, prune=False):
    """Return (ip batch lines, sysctl writes {path: value}) that make current match desired."""
    lines = []
    family = desired["family"]
    # Removals first, so a renumbered address never coexists with its stale rule.
    for rule in sorted(current["rules"] - desired["rules"], key=str):
        lines.append(_rule_cmd("del", rule))
    if prune:
        for key in sorted(set(current["routes"]) - set(desired["routes"])):
            lines.append(_route_cmd("del", key[0], key[1], current["routes"][key]))
        for ifname, addr in sorted(current["addrs"] - desired["addrs"]):
            lines.append("address del %s dev %s" % (addr, ifname))
    for ifname in sorted(desired["links"]):
        want = desired["links"][ifname]
        have = current["links"].get(ifname, {})
        parts = []
        if have.get("mtu") != want["mtu"]:
            parts += ["mtu", str(want["mtu"])]
        if want["up"] and not have.get("up"):
            parts.append("up")
        if parts:
            lines.append("link set dev %s %s" % (ifname, " ".join(parts)))
    for ifname, addr in sorted(desired["addrs"] - current["addrs"]):
        brd = _broadcast(addr)
        lines.append("address replace %s%s dev %s" % (addr, " broadcast %s" % brd if brd else "", ifname))
    # Connected routes in the rail tables before the defaults that use them.
    for key in sorted(desired["routes"], key=lambda k: (k[1] in ("0.0.0.0/0", "::/0"), k)):
        if current["routes"].get(key) != desired["routes"][key]:
            lines.append(_route_cmd("replace", key[0], key[1], desired["routes"][key]))
    for rule in sorted(desired["rules"] - current["rules"], key=str):
        lines.append(_rule_cmd("add", rule))
    sysctls = {k: v for k, v in sorted(desired["sysctls"].items()) if current["sysctls"].get(k) != v}
    if family == 6:
        lines = ["-6 " + line if line.startswith("rule") else line for line in lines]
    return lines, sysctls


def describe(state):
    """Stable text of a state, one item a line, for --diff."""
    out = []
    for ifname in sorted(state["links"]):
        link = state["links"][ifname]
        out.append("link %s mtu %s %s" % (ifname, link["mtu"], "up" if link["up"] else "down"))
    for ifname, addr in sorted(state["addrs"]):
        out.append("address %s dev %s" % (addr, ifname))
    for (table, dst), value in sorted(state["routes"].items()):
        out.append(_route_cmd("", table, dst, value).replace("route  ", "route "))
    for rule in sorted(state["rules"], key=str):
        out.append(_rule_cmd("", rule).replace("rule  ", "rule "))
    for path, value in sorted(state["sysctls"].items()):
        out.append("sysctl %s = %s" % (path.replace("/", "."), value))
    return "\n".join(out) + "\n"


def expected_after(desired, current, prune=False):
    """The managed state as it will be once ``plan_changes`` ran (for --diff)."""
    routes = {k: v for k, v in current["routes"].items() if not prune or k in desired["routes"]}
    routes.update(desired["routes"])
    return {
        "family": desired["family"],
        "links": {**current["links"], **desired["links"]},
        "addrs": desired["addrs"] | (set() if prune else current["addrs"]),
        "routes": routes,
        "rules": set(desired["rules"]),
        "sysctls": {**current["sysctls"], **desired["sysctls"]},
    }


def missing_after(desired, current):
    """Items of desired still absent from current (verification after apply)."""
    missing = []
    for ifname, want in desired["links"].items():
        have = current["links"].get(ifname)
        if have != want:
            missing.append("link %s %r (have %r)" % (ifname, want, have))
    missing += ["address %s dev %s" % (a, i) for i, a in sorted(desired["addrs"] - current["addrs"])]
    missing += ["route %s table %s" % (k[1], k[0]) for k in sorted(desired["routes"])
                if current["routes"].get(k) != desired["routes"][k]]
    missing += [_rule_cmd("", r) for r in sorted(desired["rules"] - current["rules"], key=str)]
    missing += ["sysctl %s" % k for k, v in desired["sysctls"].items() if current["sysctls"].get(k) != v]
    return missing
