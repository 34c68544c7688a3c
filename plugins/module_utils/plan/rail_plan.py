# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rail-optimised IP planning.

Every address is a pure function of (cluster model, node id, rail): no host's
plan depends on any other host, on inventory order, or on which hosts a run
is limited to.  Addresses are computed as integers and formatted once, so a
plan for thousands of nodes takes milliseconds.

Layout per mode (``b`` = rail block r of the supernet, carved at rail_prefix):

* shared:     subnet = b; gateway = b[gateway_offset]; node n = b[host_offset + n - 1]
* exclusive:  subnet = n-th node_prefix subnet of b; gateway = subnet[gateway_offset];
              host = subnet[host_offset]; the remaining usable addresses are the pod ranges
* p2p:        subnet = n-th /31 (/127) of b; ToR = subnet[0]; host = subnet[1]
* infiniband: like shared, without gateway, tables or rules
"""

from __future__ import annotations

import bisect
import difflib
import gc
import re
import socket

from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import (
    DEFAULT_FABRIC,
    check_node_id,
    load_cluster,
)
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.model.model_schema import check_host_name

IFNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}\Z")
_AF = {4: (socket.AF_INET, 4), 6: (socket.AF_INET6, 16)}


_OCTETS = tuple(str(i) for i in range(256))


def _formatter(family):
    """An int -> address text function; IPv4 caches the text of each /24."""
    af, width = _AF[family]
    ntop = socket.inet_ntop
    if family == 6:
        def fmt6(value):
            return ntop(af, value.to_bytes(width, "big"))
        return fmt6

    heads = {}
    octets = _OCTETS

    def fmt4(value):
        high = value >> 8
        head = heads.get(high)
        if head is None:
            head = heads[high] = ntop(af, (high << 8).to_bytes(4, "big"))[:-1]
        return head + octets[value & 255]

    return fmt4


class Planner(object):
    """Precomputed per-cluster constants; ``node(n)`` returns one node's rails."""

    def __init__(self, cluster):
        """``cluster`` is one Fabric of the model (the planner works fabric by fabric)."""
        self.cluster = cluster
        self.fabric = cluster.name
        self.fmt = _formatter(cluster.family)
        bits = cluster.supernet.max_prefixlen
        self.bits = bits
        base = int(cluster.supernet.network_address)
        self.rail_size = 1 << (bits - cluster.rail_prefix)
        self.rail_bases = [base + (r - 1) * self.rail_size for r in range(1, cluster.rails + 1)]
        mode = cluster.mode
        if mode == "exclusive":
            self.subnet_prefix = cluster.node_prefix
        elif mode == "p2p":
            self.subnet_prefix = bits - 1
        else:
            self.subnet_prefix = cluster.rail_prefix
        self.subnet_size = 1 << (bits - self.subnet_prefix)
        self.last_usable = (self.subnet_size - 2 if cluster.family == 4 else self.subnet_size - 1)
        if mode == "p2p":
            self.last_usable = 1
        self.tors_by_rail = {}
        for tor in cluster.tors:
            for rail in tor.rails:
                self.tors_by_rail.setdefault(rail, []).append(tor)

    def rail_block(self, rail):
        return "%s/%d" % (self.fmt(self.rail_bases[rail - 1]), self.cluster.rail_prefix)

    def shared_gateway(self, rail):
        """The rail gateway in shared mode (one per rail), else None."""
        if self.cluster.mode != "shared":
            return None
        return self.fmt(self.rail_bases[rail - 1] + self.cluster.gateway_offset)

    def tor_for(self, rail, node_id):
        return _find_tor(self._tor_index(rail), rail, node_id)

    def _tor_index(self, rail):
        """The rail's ToRs for :func:`_find_tor`, made once per rail."""
        indexes = self.__dict__.setdefault("_tor_indexes", {})
        if rail not in indexes:
            indexes[rail] = _tor_index(self.tors_by_rail.get(rail, ()), self.cluster.max_node_id)
        return indexes[rail]

    def _pod_offsets(self):
        """Index ranges of a node subnet left for pods: all usable but gateway and host."""
        cluster = self.cluster
        taken = sorted(i for i in (cluster.gateway_offset, cluster.host_offset) if i is not None)
        ranges = []
        start = 1
        for index in taken + [self.last_usable + 1]:
            if index > start:
                ranges.append((start, index - 1))
            start = index + 1
        return tuple(ranges)

    def _rail_constants(self):
        """Per-rail values that do not depend on the node, formatted once."""
        cluster = self.cluster
        consts = []
        for rail in range(1, cluster.rails + 1):
            block = self.rail_bases[rail - 1]
            gateway = None
            if cluster.mode in ("shared", "infiniband") and cluster.gateway_offset is not None:
                gateway = self.fmt(block + cluster.gateway_offset)
            tors = self.tors_by_rail.get(rail, ())
            consts.append((
                rail,
                block,
                "%s/%d" % (self.fmt(block), cluster.rail_prefix),
                cluster.table_base + rail if cluster.table_base is not None else None,
                cluster.rule_priority + rail if cluster.rule_priority is not None else None,
                gateway,
                tors[0] if len(tors) == 1 and tors[0].ranges is None else None,
                self._tor_index(rail),
            ))
        return consts

    def node(self, node_id):
        cluster = self.cluster
        fmt = self.fmt
        per_node_subnet = cluster.mode in ("exclusive", "p2p")
        subnet_size = self.subnet_size
        small4 = per_node_subnet and cluster.family == 4 and subnet_size <= 256
        octets = _OCTETS
        pod_offsets = self._pod_offsets() if cluster.mode == "exclusive" else ()
        prefix = self.subnet_prefix
        pfx = "/%d" % prefix
        mtu = cluster.mtu
        gw_off = cluster.gateway_offset
        host_off = cluster.host_offset
        consts = self.__dict__.get("_consts")
        if consts is None:
            consts = self._consts = self._rail_constants()
        out = []
        for rail, block, block_str, table, priority, rail_gateway, only_tor, tors in consts:
            if small4:
                # IPv4 subnet of at most 256 addresses: one /24 head, offsets in the last octet.
                net = block + (node_id - 1) * subnet_size
                head = fmt(net & ~255)[:-1]
                low = net & 255
                ip = head + octets[low + host_off]
                gateway = head + octets[low + gw_off]
                subnet = head + octets[low] + pfx
                pods = [head + octets[low + first] + "-" + head + octets[low + last]
                        for first, last in pod_offsets]
            elif per_node_subnet:
                net = block + (node_id - 1) * subnet_size
                ip = fmt(net + host_off)
                gateway = fmt(net + gw_off)
                subnet = fmt(net) + pfx
                pods = [fmt(net + first) + "-" + fmt(net + last) for first, last in pod_offsets]
            else:
                net = block
                ip = fmt(net + host_off + node_id - 1)
                gateway = rail_gateway
                subnet = block_str
                pods = []
            tor = only_tor
            if tor is None and tors[1]:
                tor = _find_tor(tors, rail, node_id)
            out.append({
                "fabric": self.fabric,
                "rail": rail,
                "subnet": subnet,
                "address": ip + pfx,
                "ip": ip,
                "prefix": prefix,
                "gateway": gateway,
                "table": table,
                "priority": priority,
                "mtu": mtu,
                "pod_ranges": pods,
                "tor": tor.name if tor is not None else None,
                "tor_port": tor.port(rail, node_id) if tor is not None else None,
            })
        return out


def _tor_index(tors, max_node_id):
    """``(starts, entries, tors)`` of one rail's ToRs: ``entries`` every node range of them as ``(first, last, tor)``
    sorted by its first node, ``starts`` those first nodes; ``tors`` the ToRs in the model's order where ranges
    overlap (then :func:`_find_tor` tries them in that order), else None. A node's ToR is then a bisection, not a
    scan of every ToR of the rail (16,384 nodes x 256 ToRs per rail were 33 million tests)."""
    entries = sorted(((first, last, tor) for tor in tors for first, last in (tor.ranges or [(1, max_node_id)])),
                     key=lambda entry: (entry[0], entry[1]))
    overlap = any(entries[i][0] <= entries[i - 1][1] for i in range(1, len(entries)))
    return [entry[0] for entry in entries], entries, list(tors) if overlap else None


def _find_tor(index, rail, node_id):
    """The ToR of ``rail`` serving ``node_id`` (the first in the model's order), or None; ``index`` is
    :func:`_tor_index`'s."""
    starts, entries, ordered = index
    if ordered is not None:
        return next((tor for tor in ordered if tor.serves(rail, node_id)), None)
    at = bisect.bisect_right(starts, node_id) - 1
    if at >= 0 and node_id <= entries[at][1]:
        return entries[at][2]
    return None


def rail_addresses(cluster_raw, node_id, field="fabric_node_id", fabric=None):
    """One host's rails, every fabric's in declaration order (or only ``fabric``'s); needs
    nothing but the model and the host's node id."""
    cluster = load_cluster(cluster_raw)
    node_id = check_node_id(cluster, node_id, field)
    fabrics = [cluster.fabric(fabric)] if fabric is not None else cluster.fabrics
    return [entry for f in fabrics for entry in Planner(f).node(node_id)]


def node_map(hosts, hostvars):
    """Map each host to its fabric_node_id and fabric_rail_interfaces (None where unset): the ``nodes`` of
    :func:`rail_plan`. ``hostvars`` is any mapping of host name to that host's variables."""
    result = {}
    for host in hosts:
        variables = hostvars[host]
        result[host] = {
            "node_id": variables.get("fabric_node_id"),
            "rail_interfaces": variables.get("fabric_rail_interfaces"),
        }
    return result


def node_group_hosts(groups, variable, name):
    """The hosts of the node group ``name`` that the variable ``variable`` names (``groups``: the inventory's
    group name to host names). A job whose group is missing or empty must fail, not match no host and succeed."""
    fix = "put the GPU nodes in group %r or name their group with -e %s=<group>" % (name, variable)
    if variable != "rail_plan_node_group":
        fix += " (or rail_plan_node_group: every job's node group defaults to it)"
    if not isinstance(name, str) or not name:
        raise FabricModelError(variable, name, "is not the name of an inventory group", fix)
    if name not in groups:
        near = difflib.get_close_matches(name, [g for g in groups if g not in ("all", "ungrouped")], n=3)
        where = " (close: %s)" % ", ".join(near) if near else ""
        raise FabricModelError(variable, name, "is not an inventory group%s" % where, fix)
    if not groups[name]:
        raise FabricModelError(variable, name, "is an inventory group without hosts", fix)
    return list(groups[name])


def _normalise_nodes(cluster, nodes):
    """Accept {host: id} or {host: {node_id, rail_interfaces}}; check each host name (``model_schema.HOST_NAME``)
    and refuse duplicate ids."""
    if not isinstance(nodes, dict):
        raise FabricModelError("nodes", nodes, "is not a mapping of hostname to node id",
                               "pass a dict such as {'gpu01': 1, 'gpu02': 2}")
    by_id = {}
    result = []
    for host in sorted(nodes, key=str):
        # The one place inventory host names enter a plan: every ToR description, report and Kubernetes object
        # made from the plan takes them from here.
        check_host_name(host)
        value = nodes[host]
        interfaces = None
        if isinstance(value, dict):
            interfaces = value.get("rail_interfaces")
            value = value.get("node_id")
        if value is None:
            raise FabricModelError("hostvars[%s].fabric_node_id" % host, None, "is not set",
                                   "give every node a unique fabric_node_id (1..%d)" % cluster.max_node_id)
        node_id = check_node_id(cluster, value, "hostvars[%s].fabric_node_id" % host)
        if node_id in by_id:
            raise FabricModelError("hostvars[%s].fabric_node_id" % host, node_id,
                                   "is already the node id of %s" % by_id[node_id],
                                   "give every node a unique fabric_node_id")
        by_id[node_id] = host
        if interfaces is not None:
            interfaces = fabric_interfaces(cluster, interfaces, "hostvars[%s].fabric_rail_interfaces" % host)
        result.append((host, node_id, interfaces))
    return result


def check_interfaces(fabric, interfaces, field="fabric_rail_interfaces"):
    """Validate one fabric's rail NIC list: one unique, valid name per rail."""
    if not isinstance(interfaces, list):
        raise FabricModelError(field, interfaces, "is not a list of interface names",
                               "list one NIC per rail, rail 1 first")
    if len(interfaces) != fabric.rails:
        raise FabricModelError(field, interfaces,
                               "has %d interfaces but the %s has %d rails"
                               % (len(interfaces), "cluster" if fabric.name == DEFAULT_FABRIC
                                  else "fabric %s" % fabric.name, fabric.rails),
                               "list exactly one NIC per rail, rail 1 first")
    seen = set()
    for i, name in enumerate(interfaces):
        # The kernel takes up to 15 bytes without '/', ':' or whitespace; generated files
        # (netplan keys, networkd Name= globs, NetworkManager ids) need more care, so
        # only the characters real NIC names use are accepted.
        if not isinstance(name, str) or not IFNAME_RE.match(name) or name in (".", ".."):
            raise FabricModelError("%s[%d]" % (field, i), name, "is not a valid Linux interface name",
                                   "use 1-15 ASCII letters, digits, '_', '.' or '-', starting with a letter or "
                                   "digit (e.g. ens6f0np0, ib0, bond0.100)")
        if name in seen:
            raise FabricModelError("%s[%d]" % (field, i), name, "is listed for two rails",
                                   "give every rail its own NIC")
        seen.add(name)
    return interfaces


def fabric_interfaces(cluster, interfaces, field="fabric_rail_interfaces"):
    """A host's rail NICs per fabric: ``{fabric: [nic per rail]}``.

    A one-fabric cluster takes a plain list; several fabrics take a mapping of fabric name to
    list. No NIC may serve two fabrics.
    """
    if isinstance(interfaces, list) and cluster.single is not None:
        interfaces = {cluster.single.name: interfaces}
    if not isinstance(interfaces, dict):
        raise FabricModelError(field, interfaces, "is not a mapping of fabric name to interface list",
                               "with several fabrics list the NICs per fabric, e.g. {%s}"
                               % ", ".join("%s: [...]" % f.name for f in cluster.fabrics))
    names = [f.name for f in cluster.fabrics]
    unknown = sorted(str(k) for k in interfaces if k not in names)
    if unknown:
        raise FabricModelError("%s.%s" % (field, unknown[0]), interfaces[unknown[0]], "names no fabric of the cluster",
                               "use the fabric names: %s" % ", ".join(names))
    result, owner = {}, {}
    for fabric in cluster.fabrics:
        if fabric.name not in interfaces:
            raise FabricModelError("%s.%s" % (field, fabric.name), None, "is missing",
                                   "list the host's NICs of fabric %s, rail 1 first" % fabric.name)
        sub = field if cluster.single is not None and fabric.name == DEFAULT_FABRIC else "%s.%s" % (field, fabric.name)
        result[fabric.name] = check_interfaces(fabric, interfaces[fabric.name], sub)
        for i, name in enumerate(result[fabric.name]):
            if name in owner:
                raise FabricModelError("%s[%d]" % (sub, i), name, "is also a rail NIC of fabric %s" % owner[name],
                                       "give every fabric NICs of its own")
            owner[name] = fabric.name
    return result


def _link(entry):
    nic = " " + entry["interface"] if entry.get("interface") else ""
    return "rail %d node %s (%s%s)" % (entry["rail"], entry["node_id"], entry["host"], nic)


def _one_link_per_port(field, tor, entries):
    """Refuse a ToR on which two (rail, node) links land on the same port name: every renderer keys its configuration
    by that name (the second link would overwrite the first) and the lossless check would judge two hosts against one
    port. Checked here, where every plan is made, so every platform - rendered or not - and every consumer of the plan
    gets it."""
    seen = {}
    for entry in entries:
        first = seen.setdefault(entry["port"], entry)
        if first is not entry:
            raise FabricModelError(field, tor.port_template, "puts %s and %s on the same port %s of ToR %s"
                                   % (_link(first), _link(entry), entry["port"], tor.name),
                                   "give each link its own port, e.g. with {rail} and {node} apart: swp{rail}s{node}")


def rail_plan(cluster_raw, nodes):
    """The whole cluster's plan: per node, per rail and per ToR."""
    # The plan is tens of thousands of small dicts and nothing cyclic: the
    # cyclic garbage collector would only rescan them over and over.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _rail_plan(cluster_raw, nodes)
    finally:
        if enabled:
            gc.enable()


def _rail_plan(cluster_raw, nodes):
    cluster = load_cluster(cluster_raw)
    planners = [Planner(f) for f in cluster.fabrics]
    # Node-id order: ToR port lists come out sorted without a sort.
    members = sorted(_normalise_nodes(cluster, nodes), key=lambda m: m[1])
    plan_nodes = {}
    tors = {}
    for planner in planners:
        fabric = planner.cluster
        for tor in fabric.tors:
            tors[tor.name] = {
                "name": tor.name,
                "fabric": fabric.name,
                "platform": tor.platform,
                "rails": list(tor.rails),
                "mtu": fabric.mtu,
                "port_mtu": tor.port_mtu,
                "port_speed": tor.port_speed,
                "port_fec": tor.port_fec,
                "svis": [{"rail": r, "address": "%s/%d" % (planner.shared_gateway(r), fabric.rail_prefix)}
                         for r in tor.rails] if fabric.mode == "shared" else [],
                "ports": [],
            }
    for host, node_id, interfaces in members:
        rails = []
        for planner in planners:
            fabric = planner.cluster
            routed = fabric.mode in ("exclusive", "p2p")
            pfx = "/%d" % planner.subnet_prefix
            for entry in planner.node(node_id):
                entry["interface"] = interfaces[fabric.name][entry["rail"] - 1] if interfaces else None
                if entry["tor"] is None:
                    raise FabricModelError(fabric.field("tors"), [t.name for t in fabric.tors],
                                           "has no ToR for rail %d of %s (node %d)"
                                           % (entry["rail"], host, node_id),
                                           "extend a ToR's rails or nodes to cover it")
                tors[entry["tor"]]["ports"].append({
                    "port": entry["tor_port"],
                    "rail": entry["rail"],
                    "node_id": node_id,
                    "host": host,
                    "interface": entry["interface"],
                    "host_address": entry["address"],
                    # Routed port in exclusive/p2p mode; shared mode uses the SVI.
                    "address": entry["gateway"] + pfx if routed else None,
                })
                rails.append(entry)
        plan_nodes[host] = {"node_id": node_id, "rails": rails}
    for tor in tors.values():
        if len(tor["rails"]) > 1:
            tor["ports"].sort(key=lambda p: (p["rail"], p["node_id"]))
    for planner in planners:
        for index, tor in enumerate(planner.cluster.tors):
            _one_link_per_port(planner.cluster.field("tors[%d].port_template" % index), tor, tors[tor.name]["ports"])
    rails = []
    fabrics = {}
    for planner in planners:
        fabric = planner.cluster
        for rail in range(1, fabric.rails + 1):
            rails.append({
                "fabric": fabric.name,
                "rail": rail,
                "block": planner.rail_block(rail),
                "gateway": planner.shared_gateway(rail),
                "table": fabric.table_base + rail if fabric.table_base is not None else None,
                "priority": fabric.rule_priority + rail if fabric.rule_priority is not None else None,
                "mtu": fabric.mtu,
                "tors": [t.name for t in fabric.tors if rail in t.rails],
            })
        fabrics[fabric.name] = {
            "mode": fabric.mode,
            "family": "ipv%d" % fabric.family,
            "supernet": str(fabric.supernet),
            "rails": fabric.rails,
            "mtu": fabric.mtu,
            "tors": len(fabric.tors),
            "max_node_id": fabric.max_node_id,
        }
        # Only when the model gives them: plans of models without them keep their digest.
        if fabric.infiniband is not None:
            fabrics[fabric.name]["partitions"] = [dict(p, fabric=fabric.name)
                                                  for p in fabric.infiniband["partitions"]]
    modes = sorted({f["mode"] for f in fabrics.values()})
    families = sorted({f["family"] for f in fabrics.values()})
    return {
        "cluster": cluster.to_dict(),
        "fabrics": fabrics,
        "rails": rails,
        "nodes": plan_nodes,
        "tors": tors,
        "summary": {
            "cluster": cluster.name,
            "fabrics": [f.name for f in cluster.fabrics],
            "mode": "/".join(modes),
            "family": "/".join(families),
            "nodes": len(plan_nodes),
            "rails": len(rails),
            "tors": len(tors),
            "addresses": len(plan_nodes) * len(rails),
            "max_node_id": cluster.max_node_id,
        },
    }
