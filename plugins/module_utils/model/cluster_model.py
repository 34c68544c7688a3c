# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster model: validation and normalisation of ``fabric_cluster``.

``load_cluster()`` turns the inventory variable into a :class:`Cluster`, or
raises :class:`FabricModelError` naming the field, the value and the fix.
Nothing here touches a host; everything is pure Python.

The shape of the model (keys, types, choices, ranges, formats) and the conversion of inventory
values are :mod:`model_schema`'s alone: ``load_cluster()`` asks it for the normalised tree first
and reads only that tree.  What stays here are the rules that relate several keys: the capacity
of the addressing plan, offsets inside a subnet, routing numbers per rail, ToRs that must not
overlap, fabrics that must not collide, and defaults that depend on other keys.

The schema is documented in ``docs/cluster-model.md``.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.model import model_schema
from ansible_collections.ainet.fabric.plugins.module_utils.model import qos_profile
from ansible_collections.ainet.fabric.plugins.module_utils.model import rdma_host
from ansible_collections.ainet.fabric.plugins.module_utils.model.model_schema import (
    FABRIC, ROOT, ROUTING, TOR, given, to_int)
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError

# Defaults that depend on other keys: the MTU on the fabric's kind, the routing numbers on the
# fabric's position (later fabrics move up by 100 tables and priorities).
DEFAULTS = {
    "mtu": {"roce": 9000, "infiniband": 4092},
    "table_base": 150,
    "rule_priority": 1000,
}
# The largest RoCE MTU (the schema's maximum is IPoIB's) and the smallest IPv6 one.
ROCE_MAX_MTU = 9216
IPV6_MIN_MTU = 1280
# Tables a rail's table_base + r must avoid: unspec, default, main, local.
RESERVED_TABLES = (0, 253, 254, 255)
DEFAULT_FABRIC = "default"
PORT_FIELDS = frozenset(("node", "rail", "local"))
# Switch NOSes a ToR's `platform` may name (tor_config renders the first three): the schema's choices.
PLATFORMS = TOR["platform"].choices
DEFAULT_PORT_MTU = 9216
# The spine block of a fabric whose ToRs name none (the schema's documented default).
DEFAULT_SPINE_BLOCK = TOR["spine_block"].default
# Arista EOS ports take at most 9214 (the other platforms the schema's maximum, 9216).
EOS_PORT_MTU = 9214


# FEC per port speed (IEEE 802.3): BASE-R "Fire Code" FEC (clause 74) exists for 10G/25G/40G/50G NRZ lanes;
# RS(528,514) (clauses 91, 108) for 25G/100G NRZ lanes, where FEC may also be off; PAM4 lanes (50G and up per lane:
# 200G, 400G, 800G ports) require RS(544,514) (clauses 119, 134, 172) and cannot run without FEC.
FEC_BY_SPEED = {"10G": ("fc", "none"), "25G": ("rs", "fc", "none"), "40G": ("fc", "none"),
                "50G": ("rs", "fc", "none"), "100G": ("rs", "none"), "200G": ("rs",), "400G": ("rs",), "800G": ("rs",)}
FEC_WHY = {"10G": "BASE-R FEC or none", "25G": "RS(528,514), BASE-R FEC or none", "40G": "BASE-R FEC or none",
           "50G": "RS-FEC, BASE-R FEC or none", "100G": "RS(528,514) or none; BASE-R FEC is not defined",
           "200G": "PAM4 lanes require RS(544,514)", "400G": "PAM4 lanes require RS(544,514)",
           "800G": "PAM4 lanes require RS(544,514)"}


def _err(field, value, problem, fix=None):
    return FabricModelError(field, value, problem, fix)


def _ranges_text(ranges):
    return ", ".join("%d" % first if first == last else "%d-%d" % (first, last) for first, last in ranges)


class Tor(object):
    """One top-of-rack switch of the model."""

    __slots__ = ("name", "rails", "ranges", "port_template", "platform", "port_mtu", "port_speed", "port_fec",
                 "spine_block")

    def __init__(self, name, rails, ranges, port_template, platform, port_mtu=DEFAULT_PORT_MTU, port_speed=None,
                 port_fec=None, spine_block=None):
        self.name = name
        self.rails = rails
        self.ranges = ranges
        self.port_template = port_template
        self.platform = platform
        self.port_mtu = port_mtu
        self.port_speed = port_speed
        self.port_fec = port_fec
        # None: not given (the fabric is one spine block); see DEFAULT_SPINE_BLOCK.
        self.spine_block = spine_block

    def serves(self, rail, node_id):
        if rail not in self.rails:
            return False
        if self.ranges is None:
            return True
        return any(first <= node_id <= last for first, last in self.ranges)

    def local_index(self, node_id):
        """1-based position of ``node_id`` among the node ids this ToR serves."""
        if self.ranges is None:
            return node_id
        index = 0
        for first, last in self.ranges:
            if first <= node_id <= last:
                return index + node_id - first + 1
            index += last - first + 1
        return None

    def port(self, rail, node_id):
        template = self.port_template
        if "{local}" in template:
            return template.format(node=node_id, rail=rail, local=self.local_index(node_id))
        if "{rail}" in template:
            return template.format(node=node_id, rail=rail)
        head, sep, tail = template.partition("{node}")
        if sep and "{" not in tail:
            return head + str(node_id) + tail
        return template.format(node=node_id)

    def to_dict(self):
        out = {
            "name": self.name,
            "rails": list(self.rails),
            "nodes": None if self.ranges is None else ["%d-%d" % r for r in self.ranges],
            "port_template": self.port_template,
            "platform": self.platform,
            "port_mtu": self.port_mtu,
            "port_speed": self.port_speed,
            "port_fec": self.port_fec,
        }
        # Only when given: a model without it keeps the digest its plan lock was written with.
        if self.spine_block is not None:
            out["spine_block"] = self.spine_block
        return out


class Fabric(object):
    """One RDMA fabric of the cluster (compute, storage ...): its rails, NICs' addressing,
    routing numbers, MTU and ToRs.  Attributes are plain Python values."""

    def __init__(self, name, cluster_name):
        self.name = name
        self.cluster_name = cluster_name
        self.rails = 0
        self.mtu = 0
        self.mode = None
        self.family = 4
        self.supernet = None
        self.rail_prefix = 0
        self.node_prefix = None
        self.gateway_offset = None
        self.host_offset = 1
        self.table_base = None
        self.rule_priority = None
        self.aggregate_route = False
        self.tors = []
        self.qos = None
        self.cni = "host"
        self.sriov = None
        self.kubernetes = None
        self.infiniband = None
        self.max_node_id = 0

    @property
    def has_gateway(self):
        return self.mode != "infiniband"

    @property
    def policy_routing(self):
        return self.mode != "infiniband"

    @property
    def field_prefix(self):
        """The inventory path of this fabric: the cluster itself in the single form."""
        return ROOT if self.name == DEFAULT_FABRIC else "%s.fabrics.%s" % (ROOT, self.name)

    def field(self, key):
        """The inventory path of one of this fabric's keys, for messages."""
        return "%s.%s" % (self.field_prefix, key)

    def to_dict(self):
        out = {
            "name": self.name,
            "rails": self.rails,
            "mtu": self.mtu,
            "family": self.family,
            "addressing": {
                "mode": self.mode,
                "supernet": str(self.supernet),
                "rail_prefix": self.rail_prefix,
                "node_prefix": self.node_prefix,
                "gateway_offset": self.gateway_offset,
                "host_offset": self.host_offset,
            },
            "routing": {
                "table_base": self.table_base,
                "rule_priority": self.rule_priority,
                "aggregate_route": self.aggregate_route,
            },
            "tors": [t.to_dict() for t in self.tors],
            "qos": dict(self.qos) if self.qos else None,
            "cni": self.cni,
            "sriov": dict(self.sriov) if self.sriov else None,
            "max_node_id": self.max_node_id,
        }
        # Only when given: a model without it keeps the digest its plan lock was written with.
        if self.kubernetes is not None:
            out["kubernetes"] = dict(self.kubernetes)
        if self.infiniband is not None:
            out["infiniband"] = {"partitions": [dict(p) for p in self.infiniband["partitions"]]}
        return out


class Cluster(object):
    """A validated cluster: its name, its fabrics (in declaration order) and the networks
    the fabrics must stay clear of."""

    def __init__(self):
        self.name = None
        self.fabrics = []
        self.management_networks = []
        self.pod_networks = []
        self.service_networks = []
        self.rdma_netns = None
        self.pcie_acs = {"disable": "gpu_nic", "bridges": []}

    def fabric(self, name):
        for fabric in self.fabrics:
            if fabric.name == name:
                return fabric
        raise FabricModelError(ROOT + ".fabrics", name, "is not a fabric of this cluster",
                               "use one of: %s" % ", ".join(f.name for f in self.fabrics))

    @property
    def single(self):
        """The fabric of a one-fabric cluster (the documented single-fabric form), else None."""
        return self.fabrics[0] if len(self.fabrics) == 1 else None

    @property
    def max_node_id(self):
        """A node belongs to every fabric: its id must fit all of them."""
        return min(f.max_node_id for f in self.fabrics)

    def to_dict(self):
        return {
            "name": self.name,
            "fabrics": {f.name: f.to_dict() for f in self.fabrics},
            "management_networks": [str(n) for n in self.management_networks],
            "pod_networks": [str(n) for n in self.pod_networks],
            "service_networks": [str(n) for n in self.service_networks],
            "rdma_netns": self.rdma_netns,
            "pcie_acs": dict(self.pcie_acs, bridges=list(self.pcie_acs["bridges"])),
            "max_node_id": self.max_node_id,
        }


def _load_addressing(fabric, raw):
    """``raw``: the fabric's normalised ``addressing`` (mode, supernet and rail_prefix are set)."""
    field = fabric.field("addressing")
    mode = raw["mode"]
    fabric.mode = mode
    supernet = raw["supernet"]
    fabric.supernet = supernet
    fabric.family = supernet.version
    bits = supernet.max_prefixlen
    family_hint = ("it must be between %d and %d for an IPv%d supernet"
                   % (supernet.prefixlen, bits, supernet.version))
    rail_prefix = raw["rail_prefix"]
    if rail_prefix > bits:
        other = 6 if supernet.version == 4 else 4
        raise _err(field + ".rail_prefix", rail_prefix,
                   "is longer than an IPv%d address (%d bits)" % (supernet.version, bits),
                   "%s; or did you mean an IPv%d supernet?" % (family_hint, other))
    if rail_prefix < supernet.prefixlen:
        raise _err(field + ".rail_prefix", rail_prefix,
                   "is shorter than the supernet prefix /%d" % supernet.prefixlen, family_hint)
    spare = rail_prefix - supernet.prefixlen
    if spare < 32 and fabric.rails > (1 << spare):
        raise _err(field + ".supernet", str(supernet),
                   "is too small for %d rails of /%d (it holds %d)"
                   % (fabric.rails, rail_prefix, 1 << spare),
                   "use a supernet of /%d or shorter, or a longer rail_prefix"
                   % (rail_prefix - (fabric.rails - 1).bit_length()))
    fabric.rail_prefix = rail_prefix
    p2p_len = bits - 1
    host_len = p2p_len if mode == "p2p" else rail_prefix

    node_prefix = raw.get("node_prefix")
    if mode == "exclusive":
        if node_prefix is None:
            raise _err(field + ".node_prefix", None, "is missing",
                       "exclusive mode needs the per-node subnet prefix, e.g. 27")
        if node_prefix > bits:
            raise _err(field + ".node_prefix", node_prefix,
                       "is longer than an IPv%d address (%d bits)" % (supernet.version, bits),
                       "use a prefix between %d and %d" % (rail_prefix + 1, bits - 2))
        if node_prefix <= rail_prefix:
            raise _err(field + ".node_prefix", node_prefix,
                       "must be longer than rail_prefix /%d" % rail_prefix,
                       "use a prefix between %d and %d" % (rail_prefix + 1, bits - 2))
        fabric.node_prefix = node_prefix
        host_len = node_prefix
    elif node_prefix is not None:
        raise _err(field + ".node_prefix", node_prefix,
                   "is only used in exclusive mode", "remove it, or set mode: exclusive")

    if mode == "p2p":
        for key in ("gateway_offset", "host_offset"):
            if raw.get(key) is not None:
                raise _err(field + "." + key, raw[key],
                           "does not apply to p2p mode (the ToR takes the first address of each "
                           "/%d, the host the second)" % p2p_len, "remove it")
        fabric.gateway_offset = 0
        fabric.host_offset = 1
        if rail_prefix > p2p_len:
            raise _err(field + ".rail_prefix", rail_prefix,
                       "leaves no room for a /%d link" % p2p_len, "use a prefix of /%d or shorter" % (p2p_len - 1))
        spare = p2p_len - rail_prefix
        fabric.max_node_id = (1 << spare) if spare < 63 else (1 << 63)
        return

    # shared, exclusive, infiniband: a subnet with a broadcast address in IPv4.
    size = 1 << (bits - host_len)
    last_usable = size - 2 if supernet.version == 4 else size - 1
    if last_usable < (2 if mode == "exclusive" else 1):
        raise _err(field + (".node_prefix" if mode == "exclusive" else ".rail_prefix"),
                   host_len, "leaves no usable addresses for a gateway and a host",
                   "use a prefix of /%d or shorter" % (bits - 2))

    def resolve(offset_field, offset):
        index = offset if offset >= 0 else last_usable + 1 + offset
        if not 1 <= index <= last_usable:
            raise _err(field + "." + offset_field, offset,
                       "points outside the usable addresses of a /%d (1..%d, or -1 for the last)"
                       % (host_len, last_usable), "pick an offset inside that range")
        return index

    gateway = None
    if mode != "infiniband":
        gateway = resolve("gateway_offset", given(raw, "gateway_offset", 1))
    elif raw.get("gateway_offset") is not None:
        raise _err(field + ".gateway_offset", raw["gateway_offset"],
                   "does not apply to infiniband mode (IPoIB has no gateways)", "remove it")
    if raw.get("host_offset") is not None:
        host = resolve("host_offset", raw["host_offset"])
    elif gateway is not None and gateway < last_usable:
        host = gateway + 1
    else:
        host = 1
    if host == gateway:
        raise _err(field + ".host_offset", given(raw, "host_offset", host),
                   "is the gateway's address", "give the host a different offset than the gateway")
    fabric.gateway_offset = gateway
    fabric.host_offset = host

    if mode == "exclusive":
        spare = node_prefix - rail_prefix
        fabric.max_node_id = (1 << spare) if spare < 63 else (1 << 63)
    else:
        # Node n takes index host + n - 1; the run must stay below the gateway
        # when the gateway sits above the first host address.
        if gateway is not None and gateway > host:
            fabric.max_node_id = gateway - host
        else:
            fabric.max_node_id = last_usable - host + 1
        if fabric.max_node_id < 1:
            raise _err(field + ".host_offset", host, "leaves no room for any node",
                       "lower host_offset or move the gateway")


def _load_routing(fabric, raw, index=0):
    """``raw``: the fabric's normalised ``routing`` (or None); ``index`` the fabric's position (defaults
    of later fabrics move up by 100 tables and priorities, so that fabrics never share them)."""
    field = fabric.field("routing")
    if fabric.mode == "infiniband":
        fabric.table_base = None
        fabric.rule_priority = None
        fabric.aggregate_route = False
        return
    # Rail r uses base + r: the last rail must stay inside the schema's range too.
    key = ROUTING["table_base"]
    base = to_int(given(raw, "table_base", DEFAULTS["table_base"] + 100 * index), field + ".table_base",
                  key.minimum, key.maximum - fabric.rails,
                  "use a table number so that table_base + rails stays at most %d" % key.maximum)
    for rail in range(1, fabric.rails + 1):
        if base + rail in RESERVED_TABLES:
            raise _err(field + ".table_base", base,
                       "gives rail %d the reserved table %d" % (rail, base + rail),
                       "choose a base so that base+1..base+rails avoids 253, 254 and 255")
    fabric.table_base = base
    key = ROUTING["rule_priority"]
    fabric.rule_priority = to_int(
        given(raw, "rule_priority", DEFAULTS["rule_priority"] + 100 * index), field + ".rule_priority",
        key.minimum, key.maximum - fabric.rails,
        "use a value so that priority+rails stays below %d (the main table's rule)" % (key.maximum + 1))
    fabric.aggregate_route = given(raw, "aggregate_route", fabric.mode in ("exclusive", "p2p"))


def _load_tors(fabric, raw):
    """``raw``: the fabric's normalised ``tors`` (or None: one ToR per rail, serving every node)."""
    field = fabric.field("tors")
    if raw is None:
        prefix = fabric.cluster_name
        if fabric.name != DEFAULT_FABRIC:
            prefix = "%s-%s" % (fabric.cluster_name, fabric.name)
        fabric.tors = [Tor("%s-rail%d-tor" % (prefix, rail), (rail,), None, "swp{node}", None)
                       for rail in range(1, fabric.rails + 1)]
        return
    names = set()
    tors = []
    for i, item in enumerate(raw):
        tfield = "%s[%d]" % (field, i)
        name = item["name"]
        if name in names:
            raise _err(tfield + ".name", name, "is used by two ToRs", "give every ToR its own name")
        names.add(name)
        for rail in item["rails"]:
            to_int(rail, tfield + ".rails", TOR["rails"].minimum, fabric.rails,
                   "rails are numbered 1..%d" % fabric.rails)
        rails = tuple(sorted(set(item["rails"])))
        ranges = item.get("nodes")
        for first, last in ranges or ():
            if last > fabric.max_node_id:
                raise _err(tfield + ".nodes", _ranges_text(ranges),
                           "goes past the largest node id this addressing plan allows (%d)"
                           % fabric.max_node_id, "shorten the range")
        template = given(item, "port_template", "swp{node}")
        for fname in re.findall(r"{([^{}]*)}", template):
            if fname not in PORT_FIELDS:
                raise _err(tfield + ".port_template", template, "uses the unknown field {%s}" % fname,
                           "use {node}, {rail} or {local}")
        if re.search(r"[{}]", re.sub(r"{[^{}]*}", "", template)):
            raise _err(tfield + ".port_template", template, "has a stray brace (a port name cannot be made of it)",
                       "write the fields as {node}, {rail} or {local} and no other braces")
        if "{node}" not in template and "{local}" not in template:
            raise _err(tfield + ".port_template", template, "gives every node the same port",
                       "include {node} or {local}, e.g. swp{node}")
        if len(rails) > 1 and "{rail}" not in template:
            raise _err(tfield + ".port_template", template,
                       "gives a node the same port on each of the ToR's %d rails" % len(rails),
                       "include {rail} when one ToR serves several rails, e.g. swp{rail}s{node}")
        platform = item.get("platform")
        if platform is not None and fabric.mode == "infiniband":
            raise _err(tfield + ".platform", platform, "is an Ethernet NOS on an InfiniBand fabric",
                       "remove platform (InfiniBand switches are not rendered)")
        # Arista EOS ports take at most 9214; the others 9216.
        top = EOS_PORT_MTU if platform == "eos" else TOR["port_mtu"].maximum
        port_mtu = to_int(given(item, "port_mtu", EOS_PORT_MTU if platform == "eos" else DEFAULT_PORT_MTU),
                          tfield + ".port_mtu", TOR["port_mtu"].minimum, top,
                          "use the switch port MTU, %d..%d (usually %d on %s)"
                          % (TOR["port_mtu"].minimum, top, top, platform or "a switch"))
        speed, fec = item.get("port_speed"), item.get("port_fec")
        if speed is not None and fec is not None and fec not in FEC_BY_SPEED[speed]:
            raise _err(tfield + ".port_fec", fec, "is not a FEC of %s Ethernet (IEEE 802.3: %s)"
                       % (speed, FEC_WHY[speed]), "use %s" % " or ".join(FEC_BY_SPEED[speed]))
        tors.append(Tor(name, rails, ranges, template, platform, port_mtu, speed, fec, item.get("spine_block")))
    # A spine block on every ToR or on none: a ToR left out would fall in no spine block of the schedulers' topologies.
    given_blocks = [i for i, tor in enumerate(tors) if tor.spine_block is not None]
    if given_blocks and len(given_blocks) != len(tors):
        missing = next(i for i, tor in enumerate(tors) if tor.spine_block is None)
        raise _err("%s[%d].spine_block" % (field, missing), None,
                   "is not set while %s sets it (spine block %s)"
                   % (tors[given_blocks[0]].name, tors[given_blocks[0]].spine_block),
                   "set spine_block on every ToR of the fabric, or on none (one spine block)")
    # Two ToRs must never claim the same (rail, node). The pairs are compared (below, for the message naming the first
    # pair) only where a sweep over each rail's sorted ranges finds a conflict: 2,048 ToRs are 2 million pairs.
    if _tors_conflict(tors, fabric):
        _refuse_tor_conflict(tors, fabric, field)
    fabric.tors = tors


def _tors_conflict(tors, fabric):
    """Whether two ToRs claim the same (rail, node), or share a rail of a shared-mode fabric: per rail, its ToRs'
    node ranges sorted by their first node, each must start after every range before it ends."""
    by_rail = {}
    for tor in tors:
        for rail in set(tor.rails):
            by_rail.setdefault(rail, []).append(tor)
    for rail_tors in by_rail.values():
        if fabric.mode == "shared" and len(rail_tors) > 1:
            return True
        end = 0
        for first, last in sorted(r for tor in rail_tors for r in (tor.ranges or [(1, fabric.max_node_id)])):
            if first <= end:
                return True
            end = max(end, last)
    return False


def _refuse_tor_conflict(tors, fabric, field):
    """Raise the error naming the first pair of ToRs (in the model's order) that claim the same (rail, node)."""
    for a in range(len(tors)):
        for b in range(a + 1, len(tors)):
            shared = set(tors[a].rails) & set(tors[b].rails)
            if not shared:
                continue
            if fabric.mode == "shared":
                # One subnet and one gateway address per rail: two ToRs would each hold the gateway, with no
                # L2 between them, and a rail's hosts behind different ToRs could not reach each other.
                raise _err("%s[%d].rails" % (field, b), list(tors[b].rails),
                           "puts rail %d of a shared-mode fabric on a second ToR (%s serves it already); shared "
                           "mode gives a rail one subnet and one gateway, which one ToR holds"
                           % (min(shared), tors[a].name),
                           "use one ToR per rail, or addressing.mode exclusive or p2p (each node's subnet is "
                           "routed by its own ToR, so a rail may span several ToRs)")
            ra = tors[a].ranges or [(1, fabric.max_node_id)]
            rb = tors[b].ranges or [(1, fabric.max_node_id)]
            for fa, la in ra:
                for fb, lb in rb:
                    if fa <= lb and fb <= la:
                        raise _err("%s[%d].nodes" % (field, b), tors[b].name,
                                   "serves node %d on rail %d, which %s already serves"
                                   % (max(fa, fb), min(shared), tors[a].name),
                                   "give ToRs on the same rail disjoint node ranges")


def _check_overlaps(cluster):
    """Fabrics' supernets stay clear of each other and of the management, pod and service networks."""
    for i, fabric in enumerate(cluster.fabrics):
        supernet = fabric.supernet
        for other in cluster.fabrics[:i]:
            if other.supernet.version == supernet.version and other.supernet.overlaps(supernet):
                raise _err(fabric.field("addressing.supernet"), str(supernet),
                           "overlaps the supernet %s of fabric %s" % (other.supernet, other.name),
                           "give every fabric a supernet of its own")
        for key in ("management_networks", "pod_networks", "service_networks"):
            for j, net in enumerate(getattr(cluster, key)):
                if net.version == supernet.version and net.overlaps(supernet):
                    raise _err("%s.%s[%d]" % (ROOT, key, j), str(net),
                               "overlaps the RDMA supernet %s%s" % (
                                   supernet, "" if fabric.name == DEFAULT_FABRIC else " of fabric %s" % fabric.name),
                               "move the RDMA supernet or this network so that they do not overlap")


def _check_fabrics_apart(cluster):
    """Two fabrics on one host never share a routing table, a rule priority or a ToR name."""
    tables, priorities, tors = {}, {}, {}
    for fabric in cluster.fabrics:
        for tor in fabric.tors:
            if tor.name in tors:
                raise _err(fabric.field("tors"), tor.name, "is also a ToR of fabric %s" % tors[tor.name],
                           "give every switch one name and one fabric")
            tors[tor.name] = fabric.name
        if not fabric.policy_routing:
            continue
        for rail in range(1, fabric.rails + 1):
            for number, seen, key in ((fabric.table_base + rail, tables, "routing.table_base"),
                                      (fabric.rule_priority + rail, priorities, "routing.rule_priority")):
                if number in seen:
                    value = fabric.table_base if key.endswith("table_base") else fabric.rule_priority
                    what = "table" if key.endswith("table_base") else "rule priority"
                    raise _err(fabric.field(key), value,
                               "gives rail %d the %s %d that fabric %s uses" % (rail, what, number, seen[number]),
                               "give each fabric its own range (rails of a fabric use base+1 .. base+rails)")
                seen[number] = fabric.name


def _load_fabric(cluster, name, raw, index):
    """``raw``: one fabric's normalised keys."""
    fabric = Fabric(name, cluster.name)
    here = fabric.field
    fabric.rails = raw["rails"]
    _load_addressing(fabric, raw["addressing"])
    kind = "infiniband" if fabric.mode == "infiniband" else "roce"
    key = FABRIC["mtu"]
    min_mtu = max(key.minimum, IPV6_MIN_MTU) if fabric.family == 6 else key.minimum
    max_mtu = key.maximum if kind == "infiniband" else ROCE_MAX_MTU
    fabric.mtu = to_int(given(raw, "mtu", DEFAULTS["mtu"][kind]), here("mtu"), min_mtu, max_mtu,
                        "use an MTU between %d and %d" % (min_mtu, max_mtu))
    _load_routing(fabric, raw.get("routing"), index)
    _load_tors(fabric, raw.get("tors"))
    fabric.qos = qos_profile.profile(raw.get("qos"), here("qos"), kind)
    fabric.cni = rdma_host.resolve_cni(raw.get("cni"), here("cni"), kind)
    fabric.sriov = rdma_host.sriov_settings(raw.get("sriov"), here("sriov"), fabric.cni)
    if raw.get("kubernetes") is not None:
        if fabric.cni == "host":
            raise _err(here("kubernetes"), raw["kubernetes"], "is set while the fabric's cni is host (no pod attaches "
                       "to its rail NICs)", "remove kubernetes, or set the fabric's cni")
        fabric.kubernetes = dict(raw["kubernetes"])
    fabric.infiniband = _load_infiniband(fabric, raw.get("infiniband"))
    if kind == "roce":
        headroom = fabric.qos["switch_mtu_headroom"] if fabric.qos else 0
        for i, tor in enumerate(fabric.tors):
            # Only a ToR that is rendered (has a platform) is held to it; the lossless check
            # reports the others from their real configuration.
            if tor.platform and tor.port_mtu < fabric.mtu + headroom:
                raise _err("%s[%d].port_mtu" % (here("tors"), i), tor.port_mtu,
                           "is below the fabric MTU %d plus the switch headroom %d" % (fabric.mtu, headroom),
                           "raise port_mtu to at least %d (9216 is usual) or lower the fabric mtu"
                           % (fabric.mtu + headroom))
    return fabric


def _load_infiniband(fabric, raw):
    """The fabric's ``infiniband`` (normalised by the schema): only on an infiniband fabric; the partitions' keys
    unique, in range, and the broadcast group's codes only with ``ipoib``. Returns None when not given."""
    if raw is None:
        return None
    field = fabric.field("infiniband")
    if fabric.mode != "infiniband":
        raise _err(field, raw, "is set on a fabric in %s mode (no subnet manager)" % fabric.mode,
                   "remove infiniband, or set addressing.mode infiniband")
    partitions, names, pkeys = [], {}, {}
    for index, part in enumerate(raw.get("partitions") or ()):
        where = "%s.partitions[%d]" % (field, index)
        if part["name"] == "Default" or part["name"] in names:
            raise _err(where + ".name", part["name"], "is OpenSM's default partition" if part["name"] == "Default"
                       else "is already partitions[%d]'s" % names[part["name"]], "give each partition its own name")
        names[part["name"]] = index
        pkey = int(part["pkey"], 16)
        if not 0x0001 <= pkey <= 0x7ffe:
            raise _err(where + ".pkey", part["pkey"], "is not a partition key 0x0001..0x7ffe (0x7fff is the "
                       "default partition, 0x0000 invalid; the membership bit 0x8000 comes from membership)",
                       "use 0x0001 to 0x7ffe")
        if pkey in pkeys:
            raise _err(where + ".pkey", part["pkey"], "is already partitions[%d]'s" % pkeys[pkey],
                       "give each partition its own key")
        pkeys[pkey] = index
        ipoib = given(part, "ipoib", True)
        for key in ("mtu", "rate", "sl"):
            if part.get(key) is not None and not ipoib:
                raise _err(where + "." + key, part[key], "sets the IPoIB broadcast group, but ipoib is false",
                           "remove %s or set ipoib true" % key)
        out = {"name": part["name"], "pkey": "0x%04x" % pkey, "membership": given(part, "membership", "full"),
               "ipoib": ipoib}
        if part.get("hosts") is not None:
            out["hosts"] = list(part["hosts"])
        out.update((k, part[k]) for k in ("mtu", "rate", "sl") if part.get(k) is not None)
        partitions.append(out)
    return {"partitions": partitions}


def load_cluster(raw):
    """Validate ``fabric_cluster`` and return a :class:`Cluster`.

    Two forms: ``fabrics: {compute: {...}, storage: {...}}`` with several named fabrics, or
    the single-fabric form with ``rails``, ``addressing`` ... at the top, which is one fabric
    named ``default``.
    """
    # The shape first (every problem at once, from the schema), then the rules that relate several keys.
    values = model_schema.normalized(raw)
    cluster = Cluster()
    cluster.name = values["name"]
    for key in ("management_networks", "pod_networks", "service_networks"):
        setattr(cluster, key, list(values.get(key) or []))
    if values.get("fabrics") is not None:
        single = sorted(k for k in FABRIC if k != "description" and k in values)
        if single:
            raise _err(ROOT + "." + single[0], values[single[0]],
                       "belongs inside a fabric when fabric_cluster.fabrics is used",
                       "move it to fabric_cluster.fabrics.<name>.%s" % single[0])
        for index, (fname, fvalues) in enumerate(values["fabrics"].items()):
            cluster.fabrics.append(_load_fabric(cluster, fname, fvalues, index))
    else:
        cluster.fabrics.append(_load_fabric(cluster, DEFAULT_FABRIC, values, 0))
    _check_overlaps(cluster)
    _check_fabrics_apart(cluster)
    cluster.rdma_netns = rdma_host.resolve_netns(values.get("rdma_netns"), ROOT + ".rdma_netns",
                                                 [(f.name, f.field("cni"), f.cni) for f in cluster.fabrics])
    cluster.pcie_acs = rdma_host.acs_settings(values.get("pcie_acs"), ROOT + ".pcie_acs")
    return cluster


def check_node_id(cluster, node_id, field="fabric_node_id"):
    """Validate one node id against the addressing capacity of every fabric (a Cluster or a Fabric)."""
    fabrics = getattr(cluster, "fabrics", None) or [cluster]
    smallest = min(fabrics, key=lambda f: f.max_node_id)
    where = "" if smallest.name == DEFAULT_FABRIC else "fabric %s, " % smallest.name
    return to_int(node_id, field, 1, smallest.max_node_id,
                  "node ids run from 1 to %d in this addressing plan (%smode %s)"
                  % (smallest.max_node_id, where, smallest.mode))
