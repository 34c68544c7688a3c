# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One host's complete desired rail state (the *intent*), built on the host from its flat desired state.

The controller derives the flat state from the model (:func:`desired.rail.rail_state`: the cluster's
name, per fabric the numbers the host needs, and this node's rail entries of the plan) and the module
builds the intent from it with :func:`intent_from_state`: links (MTU, up), addresses, routes, rules,
sysctls and the persistent files with their content for the backend picked on the host. The runtime
difference (:mod:`rail_reconcile`), the ``ip -batch`` lines and every file renderer
(:mod:`netcfg_render`) read only from it. Nothing here imports the model or the planner.

Routing design (why there is no keep-off rule): each rail NIC gets a table of its
own that routes only the fabric's prefixes - the rail subnet (connected) and the
RDMA supernet via the rail gateway - and a rule ``from <rail address> lookup
<table>``.  Traffic from a rail address to the fabric leaves through its own NIC;
traffic from a rail address to anything else finds no route in the rail table,
so the lookup falls through to the next rule (a VPN's, a CNI's, then ``main``).
No rule of ours matches traffic it does not route, so nothing behind us is
shadowed.

A node carries every fabric of the cluster (compute, storage ...); the fabrics never share a
NIC, a table or a rule priority (checked by the model).

What the collection owns on a host, per fabric (see roles/rail_network/README.md):
rule priorities ``rule_priority + 1 .. rule_priority + rails``, tables
``table_base + 1 .. table_base + rails``, the aggregate supernet route in
``main``, routes and rules with protocol ``ainet`` (211), the objects recorded in
its state file, and the files named in :data:`netcfg_render.OWNED_PATTERNS`.
"""

from __future__ import annotations

import ipaddress

from ansible_collections.ainet.fabric.plugins.module_utils.common import linux_names
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host import iproute
from ansible_collections.ainet.fabric.plugins.module_utils.host.iproute import Address, RouteKey, RouteValue

BACKENDS = ("networkd", "netplan", "nm", "none")
# The protocol each backend gives the routes and rules it re-creates at boot. The
# runtime objects carry the same one, so that the backend adopts them instead of
# adding duplicates. systemd-networkd takes Protocol= for routes only; netplan and
# NetworkManager set none, so theirs are "static" (4). Without a backend they are ours.
_PROTOCOLS = {
    "networkd": (iproute.PROTO_AINET, iproute.PROTO_STATIC),
    "netplan": (iproute.PROTO_STATIC, iproute.PROTO_STATIC),
    "nm": (iproute.PROTO_STATIC, iproute.PROTO_STATIC),
    "none": (iproute.PROTO_AINET, iproute.PROTO_AINET),
}
SYSCTLS_V4 = (("rp_filter", "2"), ("arp_ignore", "1"), ("arp_announce", "2"), ("arp_filter", "1"),
              # Deleting a primary address must never take the secondaries (ours or another tool's) with it.
              ("promote_secondaries", "1"))
SYSCTLS_V6 = (("disable_ipv6", "0"), ("accept_ra", "0"))
DEFAULT_METRIC = {4: 0, 6: 1024}
SCOPE_LINK = 253


# The shape of the flat desired state: the module's argument spec (the module validates it on the host) and what
# the action plugin validates on the controller before the task reaches a host (a role's arguments included: the
# rail_network role passes its variables through these options). desired.rail.fabric_state writes FABRIC_SPEC's keys.
FABRIC_SPEC = dict(
    name=dict(type="str", required=True),
    field_prefix=dict(type="str", required=True),
    family=dict(type="int", required=True, choices=[4, 6]),
    supernet=dict(type="str", required=True),
    rails=dict(type="int", required=True),
    table_base=dict(type="int", required=True),
    rule_priority=dict(type="int", required=True),
    policy_routing=dict(type="bool", required=True),
    aggregate_route=dict(type="bool", required=True),
)
RAIL_SPEC = dict(
    fabric=dict(type="str", required=True),
    rail=dict(type="int", required=True),
    interface=dict(type="str", required=True),
    address=dict(type="str", required=True),
    ip=dict(type="str", required=True),
    subnet=dict(type="str", required=True),
    gateway=dict(type="str"),
    mtu=dict(type="int", required=True),
    table=dict(type="int"),
    priority=dict(type="int"),
    prefix=dict(type="int"),
    pod_ranges=dict(type="list", elements="str"),
    tor=dict(type="str"),
    tor_port=dict(type="str"),
)
ARGUMENT_SPEC = dict(
    cluster_name=dict(type="str"),
    fabrics=dict(type="list", elements="dict", options=FABRIC_SPEC),
    rails=dict(type="list", elements="dict", options=RAIL_SPEC),
    persist=dict(type="str", default="auto", choices=["auto"] + list(BACKENDS)),
    config_root=dict(type="path", default="/"),
    prune=dict(type="bool", default=False),
    takeover=dict(type="bool", default=False),
    protect_interfaces=dict(type="list", elements="str", default=[]),
    manage_service=dict(type="bool", default=True),
    lock_timeout=dict(type="int", default=120),
)
FABRIC_KEYS = tuple(FABRIC_SPEC)


class FabricView(object):
    """What the host needs of one fabric of the model: its numbers and how messages name its keys."""

    __slots__ = FABRIC_KEYS

    def __init__(self, values):
        missing = [key for key in FABRIC_KEYS if key not in values]
        if missing:
            raise FabricError("rail_interfaces: fabrics[%s] lacks %s (the flat desired state the action plugin "
                              "derives from fabric_cluster)" % (values.get("name", "?"), ", ".join(missing)))
        for key in FABRIC_KEYS:
            setattr(self, key, values[key])
        self.supernet = ipaddress.ip_network(values["supernet"])

    def field(self, key):
        """The inventory path of one of this fabric's keys, for messages."""
        return "%s.%s" % (self.field_prefix, key)


class ClusterView(object):
    """The cluster as the host sees it: its name, and its fabric when it has only one (the single form)."""

    __slots__ = ("name", "fabrics", "single")

    def __init__(self, name, fabrics):
        self.name = name
        self.fabrics = fabrics
        self.single = fabrics[0] if len(fabrics) == 1 else None


class HostIntent(object):
    """Everything one host should have, for every fabric of the cluster.  Treat as read-only.

    ``parts`` holds (Fabric, that fabric's rail entries) in declaration order;
    ``owned_tables`` and ``owned_priorities`` map each owned number to its fabric's name.
    """

    __slots__ = ("name", "cluster", "parts", "backend", "rails", "links", "addresses", "routes", "rules",
                 "sysctls", "owned_tables", "owned_priorities", "legacy_rules", "files")

    def __init__(self, **values):
        for key in self.__slots__:
            setattr(self, key, values.get(key))

    @property
    def interfaces(self):
        return [entry["interface"] for entry in self.rails]

    def ips(self):
        return {entry["ip"] for entry in self.rails}

    def label(self, fabric):
        """How messages name a fabric: the cluster in the single-fabric form."""
        return "cluster %s" % self.name if self.cluster.single is not None else "fabric %s" % fabric

    def fabric_of(self, ifname):
        """The name of the fabric whose rail NIC ``ifname`` is (None for other devices)."""
        for entry in self.rails:
            if entry["interface"] == ifname:
                return entry["fabric"]
        return None


def _fabric_part(intent, fabric, rails, backend):
    """Add one fabric's objects to ``intent``."""
    family = fabric.family
    metric = DEFAULT_METRIC[family]
    route_proto, rule_proto = _PROTOCOLS[backend]
    policy = fabric.policy_routing
    supernet = str(fabric.supernet)
    for entry in rails:
        name = entry["interface"]
        intent.links[name] = entry["mtu"]
        intent.addresses.append(Address(name, entry["address"]))
        if family == 4 and policy:
            for key, value in SYSCTLS_V4:
                intent.sysctls["net/ipv4/conf/%s/%s" % (name, key)] = value
        if family == 6:
            for key, value in SYSCTLS_V6:
                intent.sysctls["net/ipv6/conf/%s/%s" % (name, key)] = value
        if not policy:
            continue
        table = entry["table"]
        # IPv6 routes have no scope: the kernel keeps "link" only for IPv4.
        intent.routes[RouteKey(family, table, entry["subnet"], metric)] = RouteValue(
            None, name, entry["ip"], SCOPE_LINK if family == 4 else 0, route_proto, "unicast", None)
        intent.routes[RouteKey(family, table, supernet, metric)] = RouteValue(
            entry["gateway"], name, None, 0, route_proto, "unicast", None)
        intent.rules.append(iproute.make_rule(family, priority=entry["priority"], src="%s/%d" % (
            entry["ip"], 32 if family == 4 else 128), table=table, protocol=rule_proto))
    if policy and rails and fabric.aggregate_route:
        first = rails[0]
        intent.routes[RouteKey(family, iproute.TABLE_MAIN, supernet, metric)] = RouteValue(
            first["gateway"], first["interface"], None, 0, route_proto, "unicast", None)
    if policy:
        for number in range(fabric.table_base + 1, fabric.table_base + fabric.rails + 1):
            intent.owned_tables[number] = fabric.name
        for number in range(fabric.rule_priority + 1, fabric.rule_priority + fabric.rails + 1):
            intent.owned_priorities[number] = fabric.name
        # Releases before 0.2 added `<rule_priority>: not to <supernet> lookup main`:
        # recognised as ours so that an upgraded host loses it.
        intent.legacy_rules += tuple(iproute.make_rule(family, priority=fabric.rule_priority, dst=supernet,
                                                       table=254, protocol=proto, **{"not": True})
                                     for proto in (iproute.PROTO_STATIC, 0))


# The rail entry's values the network files and sysctl paths are made of, and how each must parse (a line break, a
# space or an IPv6 scope id "%..." would be syntax in a networkd, keyfile or netplan file).
_RAIL_ADDRESSES = (("address", ipaddress.ip_interface), ("ip", ipaddress.ip_address),
                   ("subnet", lambda text: ipaddress.ip_network(text, strict=False)), ("gateway", ipaddress.ip_address))


def check_rail(index, entry):
    """One rail entry of the flat desired state, checked before anything is rendered: its interface a name the host
    files take (common.linux_names), its addresses addresses; one line naming the key otherwise."""
    field = "rail_interfaces: rails[%d]" % index
    problem = linux_names.host_ifname_problem(entry.get("interface"), field + ".interface")
    if problem:
        raise FabricError(problem)
    for key, parse in _RAIL_ADDRESSES:
        value = entry.get(key)
        if value is None and key == "gateway":
            continue
        try:
            if not isinstance(value, str) or "%" in value:
                raise ValueError(value)
            parse(value)
        except ValueError:
            what = {"subnet": "network", "address": "interface address"}.get(key, "address")
            raise FabricError("%s.%s %r is not an IP %s" % (field, key, value, what)) from None


def intent_from_state(cluster_name, fabrics, rails, backend="networkd"):
    """The complete desired state of one node from its flat desired state.

    ``fabrics``: one mapping per fabric of the cluster, in declaration order, with :data:`FABRIC_KEYS`;
    ``rails``: this node's rail entries of the plan, each with its ``interface``. Files are rendered for
    ``backend`` (one of :data:`BACKENDS`)."""
    # Imported here: the renderers import this module's constants.
    from ansible_collections.ainet.fabric.plugins.module_utils.host import netcfg_render  # pylint: disable=import-outside-toplevel

    if backend not in BACKENDS:
        raise ValueError("unknown backend %r" % backend)
    for index, entry in enumerate(rails):
        check_rail(index, entry)
    views = [FabricView(values) for values in fabrics]
    intent = HostIntent(name=cluster_name, cluster=ClusterView(cluster_name, views), parts=[], backend=backend,
                        rails=[dict(entry) for entry in rails], links={}, addresses=[], routes={}, rules=[],
                        sysctls={}, owned_tables={}, owned_priorities={}, legacy_rules=(), files={})
    for fabric in views:
        own = [entry for entry in intent.rails if entry["fabric"] == fabric.name]
        intent.parts.append((fabric, own))
        _fabric_part(intent, fabric, own, backend)
    intent.files = netcfg_render.render(intent)
    return intent
