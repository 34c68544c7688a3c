# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""From a host's live state and its intent to the exact changes: ownership, conflicts, safety.

Pure functions.  Ownership rules (documented in roles/rail_network/README.md):

* A route or rule is **ours** when it carries protocol ``ainet`` (211), when our
  state file (the *record*) lists it, when it is a rule of an earlier release
  (the old keep-off rule), or when it is exactly a desired object or differs
  from one only in its protocol (an object the backend re-created at boot).
* The **owned scope** is the fabric's rule priorities and tables.  Anything there
  that is not ours is *foreign*: the run fails before any change and names it,
  unless ``takeover`` allows deleting it.  A foreign route at the key of a desired
  route elsewhere (the aggregate route in ``main``) is a conflict too.
* Ours and no longer wanted: removed (rail removed, option off, renumbered node,
  new table base or priority, NICs swapped).  Foreign objects outside the owned
  scope are never touched, except addresses and routes on the rail NICs with
  ``prune``; the planned address is never removed.
"""

from __future__ import annotations

import ipaddress

from ansible_collections.ainet.fabric.plugins.module_utils.host import iproute
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError, FabricStateError
from ansible_collections.ainet.fabric.plugins.module_utils.host.iproute import Address, RouteKey, RouteValue

RECORD_VERSION = 1
_EXTRA_SELECTORS = ("fwmark", "iif", "oif", "ipproto", "sport", "dport", "sport_start", "dport_start",
                    "uid_start", "tos", "suppress_prefixlen", "suppress_ifgroup", "not")


class Live(object):
    """The host's state as read: links, routes and rules of both families, sysctls."""

    __slots__ = ("links", "routes", "rules", "sysctls", "peer_dev")

    def __init__(self, links, routes, rules, sysctls=None, peer_dev=None):
        self.links = links
        self.routes = routes
        self.rules = rules
        self.sysctls = sysctls or {}
        self.peer_dev = peer_dev


# -- the record ------------------------------------------------------------------

def record_of(intent):
    """What the state file keeps for one fabric: the runtime objects it asked for."""
    return {
        "addresses": sorted([a.ifname, a.cidr] for a in intent.addresses),
        "routes": sorted([list(k) + list(v) for k, v in intent.routes.items()], key=str),
        "rules": sorted([[list(p) for p in rule] for rule in intent.rules], key=str),
    }


def merge_records(*records):
    merged = {"addresses": [], "routes": [], "rules": []}
    for record in records:
        for key in merged:
            for item in record.get(key, ()):
                if item not in merged[key]:
                    merged[key].append(item)
    return merged


def _record_sets(record):
    addrs = {Address(*item) for item in record.get("addresses", ())}
    routes = set()
    for item in record.get("routes", ()):
        nexthops = tuple(tuple(h) for h in item[10]) if item[10] else None
        routes.add((RouteKey(*item[:4]), RouteValue(*(item[4:10] + [nexthops]))))
    rules = {tuple(sorted(tuple(p) for p in item)) for item in record.get("rules", ())}
    return addrs, routes, rules


# -- safety ------------------------------------------------------------------------

def protected_interfaces(live, connection_ip=None, extra=()):
    """Interfaces on the management path, with the reason: every default route of the main
    table (IPv4 and IPv6, any metric, every multipath next hop), the route to the controller,
    the Ansible connection's address, the user's list; then their lower devices and ports."""
    protected = {}
    for key, value in live.routes.items():
        if key.table == iproute.TABLE_MAIN and key.dst in ("0.0.0.0/0", "::/0") and value.type == "unicast":
            for dev in sorted(iproute.route_devs(value)):
                protected.setdefault(dev, "carries a default route (%s)" % iproute.route_text(key, value))
    if live.peer_dev:
        protected.setdefault(live.peer_dev, "carries the route to the Ansible controller")
    if connection_ip:
        for link in live.links.values():
            if any(c.split("/")[0] == connection_ip for c in link.addrs):
                protected.setdefault(link.name, "carries the Ansible connection (%s)" % connection_ip)
    for name in extra:
        protected.setdefault(name, "is listed in protect_interfaces")
    # The path below a protected device is protected too: a VLAN's lower NIC, a bond's ports.
    todo = list(protected)
    while todo:
        name = todo.pop()
        link = live.links.get(name)
        related = []
        if link is not None and link.lower and link.lower in live.links:
            related.append(link.lower)
        related += [other.name for other in live.links.values() if other.master == name]
        for other in related:
            if other not in protected:
                protected[other] = "is below %s, which %s" % (name, protected[name])
                todo.append(other)
    return protected


def check_safe(intent, live, protected, connection_peer=None):
    """Refuse, before any change, what would cut the management path or cannot apply."""
    links = live.links
    single = intent.cluster.single is not None
    for fabric, rails in intent.parts:
        _check_fabric_safe(intent, fabric, rails, links, protected, single)
        _check_supernet_safe(fabric, links, protected, connection_peer)


def _check_fabric_safe(intent, fabric, rails, links, protected, single):
    for index, entry in enumerate(rails):
        name = entry["interface"]
        field = "fabric_rail_interfaces%s[%d]" % ("" if single else "." + fabric.name, index)
        link = links.get(name)
        if link is None:
            raise FabricModelError(field, name, "does not exist on this host",
                                   "use one of: %s" % ", ".join(sorted(links)))
        if name in protected:
            raise FabricModelError(field, name, "%s; refusing to touch it" % protected[name],
                                   "list only RDMA NICs in fabric_rail_interfaces")
        if link.link_type == "loopback" or link.kind not in iproute.RAIL_KINDS:
            raise FabricModelError(field, name, "is a %s device, not a NIC that can carry a rail"
                                   % (link.kind or link.link_type), "list only RDMA NICs in fabric_rail_interfaces")
        if link.master:
            raise FabricModelError(field, name, "is a port of %s; an address on it would not be used" % link.master,
                                   "list the NIC itself, not a bridge, bond or VRF port")
        mtu = intent.links[name]
        if link.max_mtu and mtu > link.max_mtu:
            raise FabricModelError(fabric.field("mtu"), mtu, "is above the maximum MTU %d of %s" % (link.max_mtu, name),
                                   "lower the MTU to %d or less" % link.max_mtu)
        # A VLAN, macvlan or ipvlan reports max_mtu 65535 but can never exceed its lower device.
        lower = links.get(link.lower) if link.lower else None
        if link.kind in iproute.STACKED_KINDS and lower is not None and lower.mtu < mtu:
            raise FabricModelError(fabric.field("mtu"), mtu, "is above the MTU %d of %s, the lower device of %s %s"
                                   % (lower.mtu, lower.name, link.kind, name),
                                   "raise the MTU of %s first, or lower %s" % (lower.name, fabric.field("mtu")))


def _check_supernet_safe(fabric, links, protected, connection_peer):
    supernet = fabric.supernet
    for name, reason in sorted(protected.items()):
        link = links.get(name)
        for cidr in link.addrs if link else ():
            attrs = link.addr_attrs[cidr]
            if attrs["family"] != supernet.version or attrs["scope"] != "global":
                continue
            if ipaddress.ip_interface(cidr).network.overlaps(supernet):
                raise FabricModelError(fabric.field("addressing.supernet"), str(supernet),
                                       "overlaps %s on %s, which %s" % (cidr, name, reason),
                                       "choose an RDMA supernet outside the management network")
    if connection_peer:
        peer = ipaddress.ip_address(connection_peer)
        if peer.version == supernet.version and peer in supernet:
            raise FabricModelError(fabric.field("addressing.supernet"), str(supernet),
                                   "contains the Ansible controller's address %s" % peer,
                                   "choose an RDMA supernet that does not contain the controller")


# -- the plan ------------------------------------------------------------------------

class Plan(object):
    """Ordered changes.  ``steps`` is a list of (phase, family or None, line); phases run in
    the order remove, links, addresses, routes; a family's route and rule lines go to
    ``ip -4|-6 -batch``, link and address lines to a plain ``ip -batch``."""

    __slots__ = ("steps", "sysctls", "conflicts", "removed", "shadowing", "added_v6", "dropped")

    def __init__(self):
        self.steps = []
        self.sysctls = {}
        self.conflicts = []
        self.removed = []
        self.shadowing = []
        self.added_v6 = []
        self.dropped = set()  # addresses (ifname, cidr) this plan deletes for good

    def add(self, phase, family, line):
        self.steps.append((phase, family, line))

    @property
    def commands(self):
        order = {"remove": 0, "links": 1, "addresses": 2, "routes": 3}
        return ["ip %s%s" % ("-%d " % fam if fam else "", line)
                for _p, fam, line in sorted(self.steps, key=lambda s: order[s[0]])]

    def __bool__(self):
        return bool(self.steps or self.sysctls)


def _same_but_proto(value, want):
    return value._replace(proto=want.proto) == want


def _rule_without_proto(rule):
    return tuple(p for p in rule if p[0] != "protocol")


def reconcile(intent, live, record=None, prune=False, takeover=False):
    """The changes that turn ``live`` into ``intent``; conflicts are listed, not resolved."""
    plan = Plan()
    rec_addrs, rec_routes, rec_rules = _record_sets(record or {})
    rail_ifs = set(intent.links)
    desired_addrs = set(intent.addresses)
    desired_ips = {ipaddress.ip_interface(a.cidr).ip: a for a in intent.addresses}
    desired_rules = set(intent.rules)
    desired_rules_np = {_rule_without_proto(r): r for r in intent.rules}
    owned_tables = intent.owned_tables
    owned_prios = intent.owned_priorities
    touched = set()

    # Rules: ours and unwanted go; foreign ones in our priority band are conflicts.
    for rule in live.rules:
        if rule in desired_rules:
            continue
        prio = iproute.rule_get(rule, "priority")
        ours = (iproute.rule_get(rule, "protocol") == iproute.PROTO_AINET or rule in rec_rules
                or rule in intent.legacy_rules or _rule_without_proto(rule) in desired_rules_np)
        fam = iproute.rule_get(rule, "family")
        if ours:
            plan.add("remove", fam, iproute.rule_line("del", rule))
            plan.removed.append("rule " + iproute.rule_text(rule))
        elif prio in owned_prios:
            if takeover:
                plan.add("remove", fam, iproute.rule_line("del", rule))
                plan.removed.append("foreign rule " + iproute.rule_text(rule))
            else:
                plan.conflicts.append("rule `%s` (not created by ainet.fabric) sits at priority %d, which %s "
                                      "owns" % (iproute.rule_text(rule), prio, intent.label(owned_prios[prio])))

    # Routes.
    for key, value in sorted(live.routes.items(), key=lambda kv: str(kv[0])):
        want = intent.routes.get(key)
        if want is not None and value == want:
            continue
        ours = (value.proto == iproute.PROTO_AINET or (key, value) in rec_routes
                or (want is not None and _same_but_proto(value, want)))
        if want is not None:
            if not ours and not takeover:
                plan.conflicts.append("route `%s` (not created by ainet.fabric) is where %s needs `%s`"
                                      % (iproute.route_text(key, value), intent.label(intent.fabric_of(want.dev)),
                                         iproute.route_text(key, want)))
            continue  # replaced below
        if ours:
            plan.add("remove", key.family, iproute.route_line("del", key, value))
            plan.removed.append("route " + iproute.route_text(key, value))
        elif key.table in owned_tables:
            if takeover:
                plan.add("remove", key.family, iproute.route_line("del", key, value))
                plan.removed.append("foreign route " + iproute.route_text(key, value))
            else:
                plan.conflicts.append("route `%s` (not created by ainet.fabric) is in table %d, which %s owns"
                                      % (iproute.route_text(key, value), key.table, intent.label(owned_tables[key.table])))
        elif prune and value.proto != iproute.PROTO_KERNEL and iproute.route_devs(value) & rail_ifs:
            plan.add("remove", key.family, iproute.route_line("del", key, value))
            plan.removed.append("pruned route " + iproute.route_text(key, value))

    # Addresses: stale ones of ours, a desired address held elsewhere, attributes to repair.
    for link in live.links.values():
        for cidr in link.addrs:
            addr = Address(link.name, cidr)
            attrs = link.addr_attrs[cidr]
            if addr in desired_addrs:
                if attrs["family"] == 4 and attrs["broadcast"] != iproute.broadcast_of(cidr):
                    plan.add("addresses", None, "address del %s dev %s" % (cidr, link.name))
                    touched.add(link.name)
                elif attrs["dadfailed"]:
                    plan.add("addresses", None, "address del %s dev %s" % (cidr, link.name))
                    touched.add(link.name)
                elif not attrs["permanent"] or attrs["deprecated"]:
                    plan.add("addresses", None, "address change %s dev %s valid_lft forever preferred_lft forever"
                             % (cidr, link.name))
                continue
            if attrs["scope"] != "global":
                continue
            holder = desired_ips.get(ipaddress.ip_interface(cidr).ip)
            if addr in rec_addrs:
                plan.add("remove", None, "address del %s dev %s" % (cidr, link.name))
                plan.removed.append("address %s dev %s" % (cidr, link.name))
                plan.dropped.add(addr)
                touched.add(link.name)
            elif holder is not None and takeover:
                plan.add("remove", None, "address del %s dev %s" % (cidr, link.name))
                plan.removed.append("foreign address %s dev %s" % (cidr, link.name))
                plan.dropped.add(addr)
                touched.add(link.name)
            elif holder is not None:
                plan.conflicts.append("address %s on %s (not created by ainet.fabric) is the address %s plans "
                                      "for %s" % (cidr, link.name, intent.label(intent.fabric_of(holder.ifname)),
                                                  holder.ifname))
            elif prune and link.name in rail_ifs:
                plan.add("remove", None, "address del %s dev %s" % (cidr, link.name))
                plan.removed.append("pruned address %s dev %s" % (cidr, link.name))
                plan.dropped.add(addr)
                touched.add(link.name)

    # Links, then missing addresses, then routes and rules.
    for name in sorted(intent.links):
        link = live.links.get(name)
        parts = []
        if link is None or link.mtu != intent.links[name]:
            parts += ["mtu", str(intent.links[name])]
        if link is None or not link.up:
            parts.append("up")
        if parts:
            plan.add("links", None, "link set dev %s %s" % (name, " ".join(parts)))
    for addr in intent.addresses:
        link = live.links.get(addr.ifname)
        present = link is not None and addr.cidr in link.addrs
        attrs = link.addr_attrs.get(addr.cidr) if present else None
        if present and not (attrs["family"] == 4 and attrs["broadcast"] != iproute.broadcast_of(addr.cidr)) \
                and not attrs["dadfailed"]:
            if attrs["family"] == 6 and attrs["tentative"]:
                plan.added_v6.append(addr)
            continue
        brd = iproute.broadcast_of(addr.cidr)
        suffix = " broadcast %s" % brd if brd else ""
        plan.add("addresses", None, "address add %s%s dev %s" % (addr.cidr, suffix, addr.ifname))
        touched.add(addr.ifname)
        if ":" in addr.cidr:
            plan.added_v6.append(addr)
    # Connected routes before the gateway routes that need them.
    for key in sorted(intent.routes, key=lambda k: (intent.routes[k].gateway is not None, str(k))):
        want = intent.routes[key]
        if live.routes.get(key) != want or want.dev in touched:
            plan.add("routes", key.family, iproute.route_line("replace", key, want))
    present = set(live.rules)
    for rule in intent.rules:
        if rule not in present:
            plan.add("routes", iproute.rule_get(rule, "family"), iproute.rule_line("add", rule))
    plan.sysctls = {k: v for k, v in sorted(intent.sysctls.items()) if live.sysctls.get(k) != v}
    plan.shadowing = shadowing_rules(intent, live)
    return plan


def shadowing_rules(intent, live):
    """Rules of other tools in front of ours that can send traffic from a rail address to the
    fabric somewhere else: each as one sentence."""
    found = []
    for fabric, rails in intent.parts:
        rules = [r for r in intent.rules if iproute.rule_get(r, "priority") in
                 {e["priority"] for e in rails}]
        if rules:
            found += _shadowing(fabric, rails, rules, intent, live)
    return found


def _shadowing(fabric, rails, own_rules, intent, live):
    first = min(iproute.rule_get(r, "priority") for r in own_rules)
    supernet = fabric.supernet
    ips = [ipaddress.ip_address(e["ip"]) for e in rails]
    nics = {e["interface"] for e in rails}
    found = []
    for rule in live.rules:
        sel = dict(rule)
        prio = sel.get("priority", 0)
        if prio >= first or sel.get("family") != fabric.family or sel.get("l3mdev") or "goto" in sel:
            continue
        if rule in intent.rules or sel.get("protocol") == iproute.PROTO_AINET:
            continue
        if sel.get("table") == iproute.TABLE_LOCAL and not sel.get("src") and not sel.get("dst"):
            continue
        src = ipaddress.ip_network(sel["src"]) if sel.get("src") else None
        dst = ipaddress.ip_network(sel["dst"]) if sel.get("dst") else None
        inverted = sel.get("not")
        if not inverted:
            if src is not None and not any(ip in src for ip in ips):
                continue
            if dst is not None and not dst.overlaps(supernet):
                continue
        partial = inverted or any(k in sel for k in _EXTRA_SELECTORS)
        how = "may send some" if partial else "sends"
        if "action" in sel:
            found.append("rule `%s` (priority below ours) %s traffic from the rail addresses to %s nowhere (action %s)"
                         % (iproute.rule_text(rule), how, supernet, sel["action"]))
            continue
        table = sel.get("table")
        hits = [(k, v) for k, v in live.routes.items()
                if k.table == table and k.family == fabric.family and ipaddress.ip_network(k.dst).overlaps(supernet)
                and not (iproute.route_devs(v) and iproute.route_devs(v) <= nics)]
        if hits:
            key, value = min(hits, key=lambda kv: -ipaddress.ip_network(kv[0].dst).prefixlen)
            found.append("rule `%s` (priority below ours) %s traffic from the rail addresses to %s through table %d "
                         "(`%s`) instead of the rail tables"
                         % (iproute.rule_text(rule), how, supernet, table, iproute.route_text(key, value)))
    return found


def verify(intent, live):
    """What of the intent the live state still lacks, as text (empty when converged)."""
    missing = []
    for name, mtu in sorted(intent.links.items()):
        link = live.links.get(name)
        if link is None or link.mtu != mtu or not link.up:
            missing.append("link %s mtu %d up" % (name, mtu))
    for addr in intent.addresses:
        link = live.links.get(addr.ifname)
        if link is None or addr.cidr not in link.addrs:
            missing.append("address %s dev %s" % (addr.cidr, addr.ifname))
        elif link.addr_attrs[addr.cidr]["dadfailed"]:
            missing.append("address %s dev %s (failed duplicate address detection: another host on the rail "
                           "holds it)" % (addr.cidr, addr.ifname))
    for key, want in sorted(intent.routes.items(), key=str):
        if live.routes.get(key) != want:
            missing.append("route " + iproute.route_text(key, want))
    present = set(live.rules)
    missing += ["rule " + iproute.rule_text(r) for r in intent.rules if r not in present]
    missing += ["sysctl %s = %s" % (k.replace("/", "."), v) for k, v in sorted(intent.sysctls.items())
                if live.sysctls.get(k) != v]
    return missing


def describe(intent, live):
    """The managed runtime objects as text, one a line (for --diff)."""
    lines = []
    for name in sorted(intent.links):
        link = live.links.get(name)
        if link is not None:
            lines.append("link %s mtu %s %s" % (name, link.mtu, "up" if link.up else "down"))
            lines += ["address %s dev %s" % (c, name) for c in sorted(link.addrs)
                      if link.addr_attrs[c]["scope"] == "global"]
    owned_tables = set(intent.owned_tables)
    for key, value in sorted(live.routes.items(), key=lambda kv: str(kv[0])):
        if key.table in owned_tables or key in intent.routes or value.proto == iproute.PROTO_AINET:
            lines.append("route " + iproute.route_text(key, value))
    owned_prios = set(intent.owned_priorities)
    for rule in sorted(live.rules, key=lambda r: (iproute.rule_get(r, "priority"), str(r))):
        if iproute.rule_get(rule, "priority") in owned_prios or rule in intent.rules \
                or iproute.rule_get(rule, "protocol") == iproute.PROTO_AINET:
            lines.append("rule " + iproute.rule_text(rule))
    lines += ["sysctl %s = %s" % (k.replace("/", "."), live.sysctls.get(k)) for k in sorted(intent.sysctls)]
    return "\n".join(lines) + "\n"


def describe_intent(intent, live, plan):
    """The same view as :func:`describe` once ``plan`` ran (for --diff's after)."""
    lines = []
    for name in sorted(intent.links):
        lines.append("link %s mtu %s up" % (name, intent.links[name]))
        keep = []
        link = live.links.get(name)
        if link is not None:
            keep = [c for c in link.addrs if link.addr_attrs[c]["scope"] == "global"
                    and Address(name, c) not in plan.dropped]
        want = [a.cidr for a in intent.addresses if a.ifname == name]
        lines += ["address %s dev %s" % (c, name) for c in sorted(set(keep) | set(want))]
    for key, value in sorted(intent.routes.items(), key=str):
        lines.append("route " + iproute.route_text(key, value))
    for rule in sorted(intent.rules, key=lambda r: (iproute.rule_get(r, "priority"), str(r))):
        lines.append("rule " + iproute.rule_text(rule))
    lines += ["sysctl %s = %s" % (k.replace("/", "."), v) for k, v in sorted(intent.sysctls.items())]
    return "\n".join(lines) + "\n"


def conflict_error(intent, conflicts):
    return FabricStateError("cluster %s: %d object(s) of another tool are in the way, nothing was changed:\n  - %s\n"
                            "Fix: remove or move them, or set rail_network_takeover: true to let ainet.fabric delete "
                            "them" % (intent.name, len(conflicts), "\n  - ".join(conflicts)))
