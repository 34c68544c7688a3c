# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster model: validation and normalisation of ``fabric_cluster``.

``load_cluster()`` turns the inventory variable into a :class:`Cluster`, or
raises :class:`FabricModelError` naming the field, the value and the fix.
Nothing here touches a host; everything is pure Python.

The schema is documented in ``docs/cluster-model.md``.
"""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.ainet.fabric.plugins.module_utils.model import model_schema
from ansible_collections.ainet.fabric.plugins.module_utils.model import qos_profile
from ansible_collections.ainet.fabric.plugins.module_utils.model import rdma_host
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError, FabricModelErrors

MODES = ("shared", "exclusive", "p2p", "infiniband")
ROOT = "fabric_cluster"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
MAX_RAILS = 64
# Rule priorities must stay below the kernel's "main" rule (32766).
MAX_RULE_PRIORITY = 32765
MAX_TABLE = 2 ** 31 - 1
RESERVED_TABLES = (0, 253, 254, 255)
DEFAULTS = {
    "mtu": {"roce": 9000, "infiniband": 4092},
    "table_base": 150,
    "rule_priority": 1000,
}
FABRIC_KEYS = frozenset(("rails", "mtu", "addressing", "routing", "tors", "qos", "cni", "sriov", "description"))
KNOWN_TOP = frozenset(("name", "description", "fabrics", "management_networks", "pod_networks",
                       "service_networks", "rdma_netns", "pcie_acs")) | FABRIC_KEYS
DEFAULT_FABRIC = "default"
# Ranges no fabric may touch: a supernet overlapping one (0.0.0.0/0 or ::/0 included) would
# route the host's default, loopback, link-local or multicast traffic through a rail.
NOT_A_FABRIC = tuple((ipaddress.ip_network(net), what) for net, what in (
    ("0.0.0.0/8", "this-network"), ("127.0.0.0/8", "loopback"), ("169.254.0.0/16", "link-local"),
    ("224.0.0.0/4", "multicast"), ("240.0.0.0/4", "reserved and broadcast"),
    ("::/8", "unspecified, loopback and IPv4-mapped"), ("fe80::/10", "link-local"), ("ff00::/8", "multicast")))
FABRIC_NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,15}\Z")
KNOWN_ADDRESSING = frozenset((
    "mode", "supernet", "rail_prefix", "node_prefix", "gateway_offset", "host_offset",
))
KNOWN_ROUTING = frozenset(("table_base", "rule_priority", "aggregate_route"))
KNOWN_TOR = frozenset(("name", "rails", "nodes", "port_template", "platform", "port_mtu", "port_speed", "port_fec",
                       "description"))
PORT_FIELDS = frozenset(("node", "rail", "local"))
# Switch NOSes a ToR's `platform` may name (tor_config renders the first three).
PLATFORMS = ("sonic", "cumulus", "eos", "nxos", "os10")
DEFAULT_PORT_MTU = 9216


def _err(field, value, problem, fix=None):
    return FabricModelError(field, value, problem, fix)


def as_int(value, field, minimum=None, maximum=None, fix=None):
    """Return ``value`` as an int; inventory strings such as "3" are accepted."""
    fix = fix or "give a whole number"
    if isinstance(value, bool):
        raise _err(field, value, "is a boolean, not an integer", fix)
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and re.match(r"^ *[+-]?[0-9]+ *\Z", value):
        number = int(value)
    else:
        raise _err(field, value, "is not an integer", fix)
    if minimum is not None and number < minimum:
        raise _err(field, value, "is below the minimum %d" % minimum, fix)
    if maximum is not None and number > maximum:
        raise _err(field, value, "is above the maximum %d" % maximum, fix)
    return number


def _as_bool(value, field):
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "true", "on", "1"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("no", "false", "off", "0"):
        return False
    raise _err(field, value, "is not a boolean", "use true or false")


def _as_mapping(value, field, known):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _err(field, value, "is not a mapping", "give a YAML mapping (key: value)")
    unknown = sorted(str(k) for k in value if k not in known)
    if unknown:
        raise _err("%s.%s" % (field, unknown[0]), value[unknown[0]],
                   "is not a known key", "use one of: %s" % ", ".join(sorted(known)))
    return value


def parse_network(value, field, fix=None):
    """Parse a CIDR string strictly: host bits must be zero."""
    if not isinstance(value, str) or "/" not in value:
        raise _err(field, value, "is not a network in CIDR notation",
                   fix or "write it as address/prefix, e.g. 172.17.0.0/16 or fd00:17::/48")
    try:
        return ipaddress.ip_network(value.strip(), strict=True)
    except ValueError as exc:
        try:
            loose = ipaddress.ip_network(value.strip(), strict=False)
        except ValueError:
            raise _err(field, value, "is not a valid network (%s)" % exc,
                       fix or "write it as address/prefix, e.g. 172.17.0.0/16") from None
        raise _err(field, value, "has host bits set",
                   "use the network address %s" % loose) from None


def _network_list(raw, field):
    if raw is None:
        return []
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise _err(field, raw, "is not a list of networks", "give a list of CIDRs")
    return [parse_network(item, "%s[%d]" % (field, i)) for i, item in enumerate(raw)]


def parse_node_range(raw, field):
    """Parse a ToR's ``nodes`` value: "1-32", 7, [1, 2, "5-8"] -> list of (first, last)."""
    items = raw if isinstance(raw, list) else [raw]
    ranges = []
    for item in items:
        if isinstance(item, str) and "-" in item.strip().lstrip("-"):
            first, _sep, last = item.partition("-")
            first = as_int(first, field, 1, fix="write a node id range as FIRST-LAST, e.g. 1-32")
            last = as_int(last, field, 1, fix="write a node id range as FIRST-LAST, e.g. 1-32")
            if last < first:
                raise _err(field, item, "ends before it starts", "write FIRST-LAST with FIRST <= LAST")
        else:
            first = last = as_int(item, field, 1, fix="give node ids or FIRST-LAST ranges")
        ranges.append((first, last))
    return ranges


class Tor(object):
    """One top-of-rack switch of the model."""

    __slots__ = ("name", "rails", "ranges", "port_template", "platform", "port_mtu", "port_speed", "port_fec")

    def __init__(self, name, rails, ranges, port_template, platform, port_mtu=DEFAULT_PORT_MTU, port_speed=None,
                 port_fec=None):
        self.name = name
        self.rails = rails
        self.ranges = ranges
        self.port_template = port_template
        self.platform = platform
        self.port_mtu = port_mtu
        self.port_speed = port_speed
        self.port_fec = port_fec

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
        return {
            "name": self.name,
            "rails": list(self.rails),
            "nodes": None if self.ranges is None else ["%d-%d" % r for r in self.ranges],
            "port_template": self.port_template,
            "platform": self.platform,
            "port_mtu": self.port_mtu,
            "port_speed": self.port_speed,
            "port_fec": self.port_fec,
        }


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
        self.max_node_id = 0

    @property
    def has_gateway(self):
        return self.mode != "infiniband"

    @property
    def policy_routing(self):
        return self.mode != "infiniband"

    def field(self, key):
        """The inventory path of one of this fabric's keys, for messages."""
        if self.name == DEFAULT_FABRIC:
            return "%s.%s" % (ROOT, key)
        return "%s.fabrics.%s.%s" % (ROOT, self.name, key)

    def to_dict(self):
        return {
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


def _load_addressing(cluster, raw):
    """``cluster`` is the Fabric being loaded."""
    field = cluster.field("addressing")
    if raw is None:
        raise _err(field, raw, "is missing", "set addressing.mode and addressing.supernet")
    raw = _as_mapping(raw, field, KNOWN_ADDRESSING)
    mode = raw.get("mode")
    if mode not in MODES:
        raise _err(field + ".mode", mode, "is not an addressing mode", "use one of: %s" % ", ".join(MODES))
    cluster.mode = mode
    if raw.get("supernet") is None:
        raise _err(field + ".supernet", None, "is missing", "set the RDMA supernet, e.g. 172.17.0.0/16")
    supernet = parse_network(raw["supernet"], field + ".supernet")
    for special, what in NOT_A_FABRIC:
        if special.version == supernet.version and special.overlaps(supernet):
            raise _err(field + ".supernet", str(supernet), "overlaps %s (%s), which can never carry a fabric"
                       % (special, what), "use a private unicast range, e.g. 172.17.0.0/16 or fd00:17::/48")
    cluster.supernet = supernet
    cluster.family = supernet.version
    bits = supernet.max_prefixlen
    family_hint = ("it must be between %d and %d for an IPv%d supernet"
                   % (supernet.prefixlen, bits, supernet.version))
    if raw.get("rail_prefix") is None:
        raise _err(field + ".rail_prefix", None, "is missing",
                   "set the prefix length of each rail's block, e.g. 24")
    rail_prefix = as_int(raw["rail_prefix"], field + ".rail_prefix")
    if rail_prefix > bits:
        other = 6 if supernet.version == 4 else 4
        raise _err(field + ".rail_prefix", rail_prefix,
                   "is longer than an IPv%d address (%d bits)" % (supernet.version, bits),
                   "%s; or did you mean an IPv%d supernet?" % (family_hint, other))
    if rail_prefix < supernet.prefixlen:
        raise _err(field + ".rail_prefix", rail_prefix,
                   "is shorter than the supernet prefix /%d" % supernet.prefixlen, family_hint)
    spare = rail_prefix - supernet.prefixlen
    if spare < 32 and cluster.rails > (1 << spare):
        raise _err(field + ".supernet", str(supernet),
                   "is too small for %d rails of /%d (it holds %d)"
                   % (cluster.rails, rail_prefix, 1 << spare),
                   "use a supernet of /%d or shorter, or a longer rail_prefix"
                   % (rail_prefix - (cluster.rails - 1).bit_length()))
    cluster.rail_prefix = rail_prefix
    p2p_len = bits - 1
    host_len = p2p_len if mode == "p2p" else rail_prefix

    if mode == "exclusive":
        if raw.get("node_prefix") is None:
            raise _err(field + ".node_prefix", None, "is missing",
                       "exclusive mode needs the per-node subnet prefix, e.g. 27")
        node_prefix = as_int(raw["node_prefix"], field + ".node_prefix")
        if node_prefix > bits:
            raise _err(field + ".node_prefix", node_prefix,
                       "is longer than an IPv%d address (%d bits)" % (supernet.version, bits),
                       "use a prefix between %d and %d" % (rail_prefix + 1, bits - 2))
        if node_prefix <= rail_prefix:
            raise _err(field + ".node_prefix", node_prefix,
                       "must be longer than rail_prefix /%d" % rail_prefix,
                       "use a prefix between %d and %d" % (rail_prefix + 1, bits - 2))
        cluster.node_prefix = node_prefix
        host_len = node_prefix
    elif raw.get("node_prefix") is not None:
        raise _err(field + ".node_prefix", raw["node_prefix"],
                   "is only used in exclusive mode", "remove it, or set mode: exclusive")

    if mode == "p2p":
        for key in ("gateway_offset", "host_offset"):
            if raw.get(key) is not None:
                raise _err(field + "." + key, raw[key],
                           "does not apply to p2p mode (the ToR takes the first address of each "
                           "/%d, the host the second)" % p2p_len, "remove it")
        cluster.gateway_offset = 0
        cluster.host_offset = 1
        if rail_prefix > p2p_len:
            raise _err(field + ".rail_prefix", rail_prefix,
                       "leaves no room for a /%d link" % p2p_len, "use a prefix of /%d or shorter" % (p2p_len - 1))
        spare = p2p_len - rail_prefix
        cluster.max_node_id = (1 << spare) if spare < 63 else (1 << 63)
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
        offset = as_int(raw.get("gateway_offset", 1), field + ".gateway_offset")
        gateway = resolve("gateway_offset", offset)
    elif raw.get("gateway_offset") is not None:
        raise _err(field + ".gateway_offset", raw["gateway_offset"],
                   "does not apply to infiniband mode (IPoIB has no gateways)", "remove it")
    if raw.get("host_offset") is not None:
        host = resolve("host_offset", as_int(raw["host_offset"], field + ".host_offset"))
    elif gateway is not None and gateway < last_usable:
        host = gateway + 1
    else:
        host = 1
    if host == gateway:
        raise _err(field + ".host_offset", raw.get("host_offset", host),
                   "is the gateway's address", "give the host a different offset than the gateway")
    cluster.gateway_offset = gateway
    cluster.host_offset = host

    if mode == "exclusive":
        spare = node_prefix - rail_prefix
        cluster.max_node_id = (1 << spare) if spare < 63 else (1 << 63)
    else:
        # Node n takes index host + n - 1; the run must stay below the gateway
        # when the gateway sits above the first host address.
        if gateway is not None and gateway > host:
            cluster.max_node_id = gateway - host
        else:
            cluster.max_node_id = last_usable - host + 1
        if cluster.max_node_id < 1:
            raise _err(field + ".host_offset", host, "leaves no room for any node",
                       "lower host_offset or move the gateway")


def _load_routing(cluster, raw, index=0):
    """``cluster`` is the Fabric being loaded, ``index`` its position (defaults of later fabrics
    move up by 100 tables and priorities, so that fabrics never share them)."""
    field = cluster.field("routing")
    if isinstance(raw, dict) and "keep_off_rule" in raw:
        raise _err(field + ".keep_off_rule", raw["keep_off_rule"],
                   "was removed in 0.2.0: the rail tables now route only the fabric's own prefixes, so traffic "
                   "from a rail address to anything else falls through to the next rule without a keep-off rule",
                   "remove the key (the old rule is deleted from the hosts on the next run)")
    raw = _as_mapping(raw, field, KNOWN_ROUTING)
    if cluster.mode == "infiniband":
        cluster.table_base = None
        cluster.rule_priority = None
        cluster.aggregate_route = False
        return
    base = as_int(raw.get("table_base", DEFAULTS["table_base"] + 100 * index), field + ".table_base", 1,
                  MAX_TABLE - cluster.rails, "use a table number between 1 and 2147483000")
    for rail in range(1, cluster.rails + 1):
        if base + rail in RESERVED_TABLES:
            raise _err(field + ".table_base", base,
                       "gives rail %d the reserved table %d" % (rail, base + rail),
                       "choose a base so that base+1..base+rails avoids 253, 254 and 255")
    cluster.table_base = base
    cluster.rule_priority = as_int(
        raw.get("rule_priority", DEFAULTS["rule_priority"] + 100 * index), field + ".rule_priority", 1,
        MAX_RULE_PRIORITY - cluster.rails,
        "use a value so that priority+rails stays below 32766 (the main table's rule)")
    cluster.aggregate_route = _as_bool(raw.get("aggregate_route", cluster.mode in ("exclusive", "p2p")),
                                       field + ".aggregate_route")


def _load_tors(cluster, raw):
    """``cluster`` is the Fabric being loaded."""
    field = cluster.field("tors")
    if raw is None:
        # One ToR per rail, serving every node.
        prefix = cluster.cluster_name
        if cluster.name != DEFAULT_FABRIC:
            prefix = "%s-%s" % (cluster.cluster_name, cluster.name)
        cluster.tors = [Tor("%s-rail%d-tor" % (prefix, rail), (rail,), None, "swp{node}", None)
                        for rail in range(1, cluster.rails + 1)]
        return
    if not isinstance(raw, list) or not raw:
        raise _err(field, raw, "is not a non-empty list of ToR switches",
                   "list the ToRs, or remove the key to get one ToR per rail")
    names = set()
    tors = []
    for i, item in enumerate(raw):
        tfield = "%s[%d]" % (field, i)
        item = _as_mapping(item, tfield, KNOWN_TOR)
        name = item.get("name")
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise _err(tfield + ".name", name, "is not a valid switch name",
                       "use letters, digits, '-', '_' and '.'")
        if name in names:
            raise _err(tfield + ".name", name, "is used by two ToRs", "give every ToR its own name")
        names.add(name)
        rails_raw = item.get("rails")
        if isinstance(rails_raw, (int, str)):
            rails_raw = [rails_raw]
        if not isinstance(rails_raw, list) or not rails_raw:
            raise _err(tfield + ".rails", item.get("rails"), "is missing or empty",
                       "list the rails this ToR serves, e.g. [1]")
        rails = tuple(sorted(set(as_int(r, tfield + ".rails", 1, cluster.rails,
                                        "rails are numbered 1..%d" % cluster.rails) for r in rails_raw)))
        ranges = None
        if item.get("nodes") is not None:
            ranges = parse_node_range(item["nodes"], tfield + ".nodes")
            for first, last in ranges:
                if last > cluster.max_node_id:
                    raise _err(tfield + ".nodes", item["nodes"],
                               "goes past the largest node id this addressing plan allows (%d)"
                               % cluster.max_node_id, "shorten the range")
        template = item.get("port_template", "swp{node}")
        if not isinstance(template, str):
            raise _err(tfield + ".port_template", template, "is not a string", "e.g. swp{node}")
        for fname in re.findall(r"{([^{}]*)}", template):
            if fname not in PORT_FIELDS:
                raise _err(tfield + ".port_template", template, "uses the unknown field {%s}" % fname,
                           "use {node}, {rail} or {local}")
        if "{node}" not in template and "{local}" not in template:
            raise _err(tfield + ".port_template", template, "gives every node the same port",
                       "include {node} or {local}, e.g. swp{node}")
        if len(rails) > 1 and "{rail}" not in template:
            raise _err(tfield + ".port_template", template,
                       "gives a node the same port on each of the ToR's %d rails" % len(rails),
                       "include {rail} when one ToR serves several rails, e.g. swp{rail}s{node}")
        platform = item.get("platform")
        if platform is not None and platform not in PLATFORMS:
            raise _err(tfield + ".platform", platform, "is not a known switch platform",
                       "use one of: %s" % ", ".join(PLATFORMS))
        if platform is not None and cluster.mode == "infiniband":
            raise _err(tfield + ".platform", platform, "is an Ethernet NOS on an InfiniBand fabric",
                       "remove platform (InfiniBand switches are not rendered)")
        # Arista EOS ports take at most 9214; the others 9216.
        top = 9214 if platform == "eos" else DEFAULT_PORT_MTU
        port_mtu = as_int(item.get("port_mtu", top), tfield + ".port_mtu", 1280, top,
                          "use the switch port MTU, 1280..%d (usually %d on %s)" % (top, top, platform or "a switch"))
        tors.append(Tor(name, rails, ranges, template, platform, port_mtu, item.get("port_speed"),
                        item.get("port_fec")))
    # Two ToRs must never claim the same (rail, node).
    for a in range(len(tors)):
        for b in range(a + 1, len(tors)):
            shared = set(tors[a].rails) & set(tors[b].rails)
            if not shared:
                continue
            ra = tors[a].ranges or [(1, cluster.max_node_id)]
            rb = tors[b].ranges or [(1, cluster.max_node_id)]
            for fa, la in ra:
                for fb, lb in rb:
                    if fa <= lb and fb <= la:
                        raise _err("%s[%d].nodes" % (field, b), tors[b].name,
                                   "serves node %d on rail %d, which %s already serves"
                                   % (max(fa, fb), min(shared), tors[a].name),
                                   "give ToRs on the same rail disjoint node ranges")
    cluster.tors = tors


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
                    raise _err(fabric.field(key), value,
                               "gives rail %d the %s %d that fabric %s uses"
                               % (rail, "table" if key.endswith("table_base") else "rule priority", number, seen[number]),
                               "give each fabric its own range (rails of a fabric use base+1 .. base+rails)")
                seen[number] = fabric.name


def _load_fabric(cluster, name, raw, index):
    fabric = Fabric(name, cluster.name)
    here = fabric.field
    if raw.get("rails") is None:
        raise _err(here("rails"), None, "is missing", "set the number of rails, e.g. 8")
    fabric.rails = as_int(raw["rails"], here("rails"), 1, MAX_RAILS,
                          "use the number of rail NICs per node (1..%d)" % MAX_RAILS)
    _load_addressing(fabric, raw.get("addressing"))
    kind = "infiniband" if fabric.mode == "infiniband" else "roce"
    min_mtu = 1280 if fabric.family == 6 else 576
    max_mtu = 65520 if kind == "infiniband" else 9216
    fabric.mtu = as_int(raw.get("mtu", DEFAULTS["mtu"][kind]), here("mtu"), min_mtu, max_mtu,
                        "use an MTU between %d and %d" % (min_mtu, max_mtu))
    _load_routing(fabric, raw.get("routing"), index)
    _load_tors(fabric, raw.get("tors"))
    qos = raw.get("qos") or {}
    if not isinstance(qos, dict):
        raise _err(here("qos"), qos, "is not a mapping", "e.g. qos: {preset: nvidia}")
    fabric.qos = qos_profile.resolve_profile(qos, here("qos"), kind)
    fabric.cni = rdma_host.resolve_cni(raw.get("cni"), here("cni"), kind)
    fabric.sriov = rdma_host.resolve_sriov(raw.get("sriov"), here("sriov"), fabric.cni)
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


def load_cluster(raw):
    """Validate ``fabric_cluster`` and return a :class:`Cluster`.

    Two forms: ``fabrics: {compute: {...}, storage: {...}}`` with several named fabrics, or
    the single-fabric form with ``rails``, ``addressing`` ... at the top, which is one fabric
    named ``default``.
    """
    if not isinstance(raw, dict):
        raise _err(ROOT, raw, "is not a mapping", "define fabric_cluster in group_vars/all")
    # The shape first (every problem at once), then the rules that relate several keys.
    errors = model_schema.check(raw)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise FabricModelErrors(errors)
    raw = _as_mapping(raw, ROOT, KNOWN_TOP)
    cluster = Cluster()
    name = raw.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise _err(ROOT + ".name", name, "is not a valid cluster name",
                   "use 1-63 letters, digits, '-', '_' or '.', starting with a letter or digit")
    cluster.name = name
    cluster.management_networks = _network_list(raw.get("management_networks"), ROOT + ".management_networks")
    cluster.pod_networks = _network_list(raw.get("pod_networks"), ROOT + ".pod_networks")
    cluster.service_networks = _network_list(raw.get("service_networks"), ROOT + ".service_networks")
    single = sorted(k for k in FABRIC_KEYS - {"description"} if k in raw)
    if raw.get("fabrics") is not None:
        if single:
            raise _err(ROOT + "." + single[0], raw[single[0]],
                       "belongs inside a fabric when fabric_cluster.fabrics is used",
                       "move it to fabric_cluster.fabrics.<name>.%s" % single[0])
        fabrics = raw["fabrics"]
        if not isinstance(fabrics, dict) or not fabrics:
            raise _err(ROOT + ".fabrics", fabrics, "is not a non-empty mapping of fabric name to fabric",
                       "e.g. fabrics: {compute: {rails: 8, addressing: ...}, storage: {rails: 2, ...}}")
        for index, (fname, fraw) in enumerate(fabrics.items()):
            if not isinstance(fname, str) or not FABRIC_NAME_RE.match(fname):
                raise _err(ROOT + ".fabrics", fname, "is not a valid fabric name",
                           "use 1-16 lower-case letters, digits, '-' or '_', starting with a letter")
            fraw = _as_mapping(fraw, "%s.fabrics.%s" % (ROOT, fname), FABRIC_KEYS)
            cluster.fabrics.append(_load_fabric(cluster, fname, fraw, index))
    else:
        cluster.fabrics.append(_load_fabric(cluster, DEFAULT_FABRIC, raw, 0))
    _check_overlaps(cluster)
    _check_fabrics_apart(cluster)
    qos_profile.check_fabric_priorities([(f.name, f.field("qos"), f.qos) for f in cluster.fabrics])
    cluster.rdma_netns = rdma_host.resolve_netns(raw.get("rdma_netns"), ROOT + ".rdma_netns",
                                                 [(f.name, f.field("cni"), f.cni) for f in cluster.fabrics])
    cluster.pcie_acs = rdma_host.resolve_acs(raw.get("pcie_acs"), ROOT + ".pcie_acs")
    return cluster


def check_node_id(cluster, node_id, field="fabric_node_id"):
    """Validate one node id against the addressing capacity of every fabric (a Cluster or a Fabric)."""
    fabrics = getattr(cluster, "fabrics", None) or [cluster]
    smallest = min(fabrics, key=lambda f: f.max_node_id)
    where = "" if smallest.name == DEFAULT_FABRIC else "fabric %s, " % smallest.name
    return as_int(node_id, field, 1, smallest.max_node_id,
                  "node ids run from 1 to %d in this addressing plan (%smode %s)"
                  % (smallest.max_node_id, where, smallest.mode))
