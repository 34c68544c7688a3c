# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""iproute2 objects: parsers for ``ip -j`` output and the ``ip -batch`` lines that create them.

Pure functions only.  Three kinds of object, each normalised so that a live
object read back from the kernel compares equal to the desired one:

* ``Address(ifname, cidr)``; its live attributes (broadcast, flags, lifetimes) are
  kept apart in :class:`Link.addr_attrs`.
* ``Route``: a key ``(family, table, dst, metric)`` - what the kernel itself uses
  to tell routes apart - and a value ``RouteValue(gateway, dev, src, scope, proto,
  type, nexthops)``.
* ``Rule``: a frozen, sorted tuple of ``(selector, value)`` pairs including family,
  priority, table and protocol, because the kernel treats rules that differ in any
  selector (or only in the protocol) as different rules.

Tables, protocols and scopes are numbers throughout: the module reads with
``ip -N`` (numeric), and names are mapped back for outputs of ``ip`` without it.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections import namedtuple

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricStateError

# Our own routing protocol number (``proto ainet``), registered in
# /etc/iproute2/rt_protos.d/ainet.conf. Outside the kernel's RTPROT_* values and
# FRR's 186-198 block.
PROTO_AINET = 211
PROTO_STATIC = 4
PROTO_KERNEL = 2
TABLE_MAIN = 254
TABLE_LOCAL = 255
_TABLE_NAMES = {"main": 254, "local": 255, "default": 253, "unspec": 0}
_PROTO_NAMES = {"unspec": 0, "redirect": 1, "kernel": 2, "boot": 3, "static": 4, "gated": 8, "ra": 9, "mrt": 10,
                "zebra": 11, "bird": 12, "dnrouted": 13, "xorp": 14, "ntk": 15, "dhcp": 16, "mrouted": 17,
                "keepalived": 18, "babel": 42, "openr": 99, "bgp": 186, "isis": 187, "ospf": 188, "rip": 189,
                "eigrp": 192, "ainet": PROTO_AINET}
_SCOPE_NAMES = {"global": 0, "universe": 0, "site": 200, "link": 253, "host": 254, "nowhere": 255}
_SCOPE_TEXT = {0: None, 200: "site", 253: "link", 254: "host", 255: "nowhere"}
# Link kinds that can carry a rail address. Anything else (bridge, vxlan, tunnel,
# wireguard, vrf, dummy, loopback ...) is another tool's construct, never a rail NIC.
RAIL_KINDS = (None, "vlan", "bond", "team", "macvlan", "ipoib", "veth")
STACKED_KINDS = ("vlan", "macvlan", "macvtap", "ipvlan", "ipoib")

Address = namedtuple("Address", "ifname cidr")
RouteKey = namedtuple("RouteKey", "family table dst metric")
RouteValue = namedtuple("RouteValue", "gateway dev src scope proto type nexthops")
Link = namedtuple("Link", "name index mtu max_mtu up kind lower lower_netns master link_type addrs addr_attrs")


def _number(value, names, what):
    if value is None:
        return None
    if isinstance(value, int):
        return value
    text = str(value)
    if text.isdigit():
        return int(text)
    if text in names:
        return names[text]
    if text.startswith("ipproto-"):
        return text
    raise FabricStateError("unknown %s %r in ip output (read it with `ip -N`)" % (what, text))


def table_number(value):
    return TABLE_MAIN if value is None else _number(value, _TABLE_NAMES, "routing table")


def proto_number(value):
    return 0 if value is None else _number(value, _PROTO_NAMES, "routing protocol")


def _cidr(text, length, family):
    """``ip -j`` prints a host address without its length, a network with ``len`` apart."""
    if text in (None, "all"):
        return None
    if text == "default":
        return "0.0.0.0/0" if family == 4 else "::/0"
    if "/" in str(text):
        return str(ipaddress.ip_network(text, strict=False))
    address = ipaddress.ip_address(text)
    bits = address.max_prefixlen if length is None else int(length)
    return str(ipaddress.ip_network("%s/%d" % (address, bits), strict=False))


_ROUTE_TYPES = {"0": "unspec", "1": "unicast", "2": "local", "3": "broadcast", "4": "anycast", "5": "multicast",
                "6": "blackhole", "7": "unreachable", "8": "prohibit", "9": "throw", "10": "nat"}
_ADDR_SCOPES = {"0": "global", "200": "site", "253": "link", "254": "host", "255": "nowhere"}
_LINK_TYPES = {"[1]": "ether", "[772]": "loopback", "[32]": "infiniband", "[65534]": "none"}
# The reads of one family, run as one ``ip -N -j -d -4|-6 -batch -``, one JSON list per line of it.
# ``addr show`` with a family lists only links that have an address of it: ``link show`` lists all.
READ_BATCH = {4: "route show table all\nrule show\naddr show\nlink show\n",
              6: "route show table all\nrule show\naddr show\n"}


# iproute2 before 5.11 printed the type of a non-unicast route as a bare string,
# ``[{"broadcast","dst":...}]`` (invalid JSON, iproute2/iproute2#37): read it as ``"type"``.
_BARE_TYPE = re.compile(r'([\[{,]\s*\{)"(unicast|local|broadcast|anycast|multicast|blackhole|unreachable|prohibit|'
                        r'throw|nat|unspec|[0-9]+)",')


def repair(text):
    """Output of older ``ip -j`` made valid JSON (see :data:`_BARE_TYPE`)."""
    return _BARE_TYPE.sub(r'\1"type":"\2",', text) if text and '",' in text else (text or "")


def split_lists(text, what, count):
    """The ``count`` JSON lists that one ``ip -j -batch`` run printed, one after the other."""
    decoder = json.JSONDecoder()
    lists, pos = [], 0
    text = repair(text)
    while len(lists) < count:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            lists.append("[]")
            continue
        try:
            _data, end = decoder.raw_decode(text, pos)
        except ValueError as exc:
            raise FabricStateError("could not parse `%s` JSON output: %s" % (what, exc)) from None
        lists.append(text[pos:end])
        pos = end
    return lists


def read_family(text, family):
    """Parse one family's read batch (:data:`READ_BATCH`) -> (routes, rules, links)."""
    parts = split_lists(text, "ip -N -j -d -%d -batch" % family, READ_BATCH[family].count("\n"))
    links = [parse_links(part) for part in parts[:1:-1]]  # link show (all links) first, then addr show
    return parse_routes(parts[0], family), parse_rules(parts[1], family), merge_links(*links)


def merge_links(*parts):
    """Links of the per-family reads, with the addresses of both."""
    merged = {}
    for links in parts:
        for name, link in links.items():
            have = merged.get(name)
            if have is None:
                merged[name] = link
            else:
                attrs = dict(have.addr_attrs)
                attrs.update(link.addr_attrs)
                merged[name] = have._replace(addrs=have.addrs + tuple(a for a in link.addrs if a not in have.addrs),
                                             addr_attrs=attrs, kind=have.kind or link.kind,
                                             max_mtu=have.max_mtu or link.max_mtu)
    return merged


def load(text, what):
    """Parse ``ip -j`` output; empty output is an empty list."""
    try:
        data = json.loads(repair(text) or "[]")
    except ValueError as exc:
        raise FabricStateError("could not parse `%s` JSON output: %s" % (what, exc)) from None
    if not isinstance(data, list):
        raise FabricStateError("`%s` printed %s, expected a JSON list" % (what, type(data).__name__))
    return [item for item in data if isinstance(item, dict)]


# -- links and addresses -------------------------------------------------------

def parse_links(text):
    """``ip -j -d addr show`` -> {ifname: Link}."""
    links = {}
    for item in load(text, "ip -j -d addr show"):
        name = item.get("ifname")
        if not name:
            continue
        addrs, attrs = [], {}
        for info in item.get("addr_info") or ():
            family = {"inet": 4, "inet6": 6}.get(info.get("family"))
            if family is None or info.get("local") is None:
                continue
            cidr = "%s/%s" % (ipaddress.ip_address(info["local"]), info.get("prefixlen"))
            addrs.append(cidr)
            attrs[cidr] = {
                "family": family,
                "scope": _ADDR_SCOPES.get(str(info.get("scope", "global")), info.get("scope", "global")),
                "broadcast": info.get("broadcast"),
                "secondary": "secondary" in info,
                "tentative": "tentative" in info,
                "dadfailed": "dadfailed" in info,
                "deprecated": "deprecated" in info,
                "permanent": info.get("valid_life_time", 4294967295) == 4294967295
                and info.get("preferred_life_time", 4294967295) == 4294967295,
            }
        info = item.get("linkinfo") or {}
        links[name] = Link(
            name=name,
            index=item.get("ifindex"),
            mtu=item.get("mtu"),
            max_mtu=item.get("max_mtu"),
            up="UP" in (item.get("flags") or ()),
            kind=info.get("info_kind"),
            lower=item.get("link"),
            # A lower device in another namespace shows only link_index / link_netnsid.
            lower_netns=item.get("link_netnsid") is not None,
            master=item.get("master"),
            link_type=_LINK_TYPES.get(item.get("link_type"), item.get("link_type")),
            addrs=tuple(addrs),
            addr_attrs=attrs,
        )
    return links


def broadcast_of(cidr):
    """The broadcast networkd (and ``ip addr add ... broadcast +``) gives an IPv4 address; None otherwise."""
    iface = ipaddress.ip_interface(cidr)
    if iface.version != 4 or iface.network.prefixlen > 30:
        return None
    return str(iface.network.broadcast_address)


# -- routes --------------------------------------------------------------------

def _nexthops(item):
    hops = item.get("nexthops")
    if not hops:
        return None
    return tuple(sorted((hop.get("gateway"), hop.get("dev"), hop.get("weight", 1)) for hop in hops
                        if isinstance(hop, dict)))


def parse_routes(text, family):
    """``ip -N -j -4|-6 route show table all`` -> {RouteKey: RouteValue}."""
    routes = {}
    for item in load(text, "ip -j route show table all"):
        kind = _ROUTE_TYPES.get(str(item.get("type", "unicast")), item.get("type", "unicast"))
        if kind in ("local", "broadcast", "multicast", "anycast") or "cache" in (item.get("flags") or ()):
            continue
        key = RouteKey(family, table_number(item.get("table")), _cidr(item.get("dst"), None, family),
                       int(item.get("metric", 0)))
        gateway = item.get("gateway")
        if gateway is None and isinstance(item.get("via"), dict):
            gateway = item["via"].get("host")
        routes.setdefault(key, RouteValue(
            gateway=str(ipaddress.ip_address(gateway)) if gateway else None,
            dev=item.get("dev"),
            src=item.get("prefsrc"),
            scope=_number(item.get("scope", 0), _SCOPE_NAMES, "scope"),
            # ip hides the protocol "boot" (what `ip route add` gives by default) unless -d.
            proto=3 if item.get("protocol") is None else proto_number(item.get("protocol")),
            type=kind,
            nexthops=_nexthops(item),
        ))
    return routes


def route_devs(value):
    """Every device a route leaves through, multipath next hops included."""
    devs = {value.dev} if value.dev else set()
    for _gw, dev, _weight in value.nexthops or ():
        if dev:
            devs.add(dev)
    return devs


def route_line(verb, key, value=None):
    """One ``ip -batch`` line (without the global -4/-6, which ``ip -batch`` lines cannot carry)."""
    parts = ["route", verb]
    if value is not None and value.type not in (None, "unicast"):
        parts.append(value.type)
    parts += [key.dst, "table", str(key.table), "metric", str(key.metric)]
    if value is not None and verb != "del":
        if value.gateway:
            parts += ["via", value.gateway]
        if value.dev:
            parts += ["dev", value.dev]
        if value.src:
            parts += ["src", value.src]
        if value.scope:
            parts += ["scope", _SCOPE_TEXT.get(value.scope) or str(value.scope)]
        parts += ["proto", str(value.proto)]
    elif value is not None:
        if value.dev:
            parts += ["dev", value.dev]
        parts += ["proto", str(value.proto)]
    return " ".join(parts)


# -- rules ---------------------------------------------------------------------

_RULE_SKIP = frozenset(("srclen", "dstlen"))
_IPPROTOS = {"icmp": 1, "igmp": 2, "tcp": 6, "udp": 17, "gre": 47, "esp": 50, "ah": 51, "ipv6-icmp": 58,
             "icmpv6": 58, "sctp": 132, "udplite": 136, "mptcp": 262}


def _ipproto(value):
    """``ipproto`` as a number: ip prints a name from /etc/protocols, ip -N ``ipproto-N``."""
    text = str(value)
    if text.startswith("ipproto-"):
        text = text[len("ipproto-"):]
    if text.isdigit():
        return int(text)
    return _IPPROTOS.get(text, text)


_RULE_ACTIONS = {"nop": "3", "blackhole": "6", "unreachable": "7", "prohibit": "8"}


def make_rule(family, **selectors):
    """A rule as a hashable, sorted tuple of (selector, value); None values are left out."""
    pairs = [("family", family)] + [(k, v) for k, v in selectors.items() if v is not None]
    return tuple(sorted(pairs))


def parse_rules(text, family):
    """``ip -N -j -4|-6 rule show`` -> list of rules (see :func:`make_rule`)."""
    rules = []
    for item in load(text, "ip -j rule show"):
        sel = {}
        for key, value in item.items():
            if key in _RULE_SKIP:
                continue
            if key == "src":
                sel["src"] = _cidr(value, item.get("srclen"), family)
            elif key == "dst":
                sel["dst"] = _cidr(value, item.get("dstlen"), family)
            elif key == "not":
                sel["not"] = True
            elif key == "table":
                sel["table"] = table_number(value)
            elif key == "protocol":
                sel["protocol"] = proto_number(value)
            elif key == "l3mdev":
                sel["l3mdev"] = True
            elif key == "action":
                # ip prints the action by name, ip -N by number.
                sel["action"] = _RULE_ACTIONS.get(str(value), str(value))
            elif key == "ipproto":
                sel["ipproto"] = _ipproto(value)
            elif key == "nop":
                sel["action"] = "3"
            elif isinstance(value, (list, dict)):
                sel[key] = json.dumps(value, sort_keys=True)
            else:
                sel[key] = value
        sel.setdefault("protocol", 0)
        rules.append(make_rule(family, **sel))
    return rules


def rule_get(rule, key, default=None):
    for name, value in rule:
        if name == key:
            return value
    return default


def rule_line(verb, rule):
    """``rule add|del ...`` for a rule that only uses the selectors this collection creates
    (priority, not, from, to, table, protocol); other rules are deleted by their full selector set."""
    sel = dict(rule)
    parts = ["rule", verb, "priority", str(sel.pop("priority"))]
    sel.pop("family")
    if sel.pop("not", False):
        parts.append("not")
    src = sel.pop("src", None)
    dst = sel.pop("dst", None)
    parts += ["from", src or "all"]
    if dst:
        parts += ["to", dst]
    for key, word in (("fwmark", "fwmark"), ("iif", "iif"), ("oif", "oif"), ("tos", "tos"),
                      ("ipproto", "ipproto"), ("dport", "dport"), ("sport", "sport")):
        if key in sel:
            value = sel.pop(key)
            if key == "fwmark" and "fwmask" in sel:
                value = "%s/%s" % (value, sel.pop("fwmask"))
            if key == "ipproto" and str(value).startswith("ipproto-"):
                value = str(value)[len("ipproto-"):]
            parts += [word, str(value)]
    for lo_hi, word in (("sport", "sport"), ("dport", "dport"), ("uid", "uidrange")):
        if lo_hi + "_start" in sel:
            parts += [word, "%s-%s" % (sel.pop(lo_hi + "_start"), sel.pop(lo_hi + "_end"))]
    if sel.pop("l3mdev", False):
        parts.append("l3mdev")
    if "goto" in sel:
        parts += ["goto", str(sel.pop("goto"))]
    action = str(sel.pop("action", ""))
    if action:
        parts.append({"6": "blackhole", "7": "unreachable", "8": "prohibit", "3": "nop"}.get(action, action))
    if "table" in sel:
        parts += ["table", str(sel.pop("table"))]
    if "suppress_prefixlen" in sel:
        parts += ["suppress_prefixlength", str(sel.pop("suppress_prefixlen"))]
    if "suppress_ifgroup" in sel:
        parts += ["suppress_ifgroup", str(sel.pop("suppress_ifgroup"))]
    if "flow_to" in sel:
        realm = str(sel.pop("flow_to"))
        if "flow_from" in sel:
            realm = "%s/%s" % (sel.pop("flow_from"), realm)
        parts += ["realms", realm]
    parts += ["protocol", str(sel.pop("protocol", 0))]
    return " ".join(parts)


def rule_text(rule):
    """A rule as ``ip rule`` shows it, for messages: ``1001: from 172.17.0.2 lookup 151 proto 4``."""
    line = rule_line("x", rule)
    head, _sep, tail = line.partition("priority ")
    prio, _sep, rest = tail.partition(" ")
    return "%s: %s" % (prio, rest.replace("table ", "lookup ").replace("protocol ", "proto "))


def route_text(key, value):
    return route_line("x", key, value)[len("route x "):]
