# -*- coding: utf-8 -*-
"""Property tests: the schema and the loaders agree on every single key.

The schema (model_schema) is the one authority for the shape of ``fabric_cluster``: keys, types,
choices, ranges and formats, and the conversion of inventory values. The loaders (cluster_model,
qos_profile, rdma_host) keep only rules that relate several keys. So, for a valid model in which
one leaf key at a time takes a generated value (ints, numeric strings, bools, bool words, wrong
types, values out of range, off the choices, malformed networks, PCI addresses and node ranges):

* a value the schema accepts is never refused by the loader for its type, choice, range or format
  (a refusal naming the varied key must be a rule across keys, and a range refusal never the
  schema's own bound), and the loaded model holds the schema's normalised value;
* a value the schema refuses is refused by the loader with exactly the schema's lines, all of them
  naming the varied key;
* the resolvers that take a fragment on its own (qos, sriov, pcie_acs) accept and refuse the same
  values, and resolve them as ``load_cluster`` does;
* the loader never fails with anything but FabricModelError, and the ToR ports of what it took render.
"""

from __future__ import annotations

import copy
import ipaddress
import re

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from ansible_collections.ainet.fabric.plugins.module_utils.model import model_schema
from ansible_collections.ainet.fabric.plugins.module_utils.model import qos_profile
from ansible_collections.ainet.fabric.plugins.module_utils.model import rdma_host
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError

# Most leaf keys set (the ones that would tie others down are left to their defaults); it loads.
BASE = {
    "name": "prop", "description": "property base",
    "management_networks": ["10.0.0.0/16"], "pod_networks": ["10.244.0.0/16"], "service_networks": ["10.96.0.0/12"],
    "rdma_netns": "exclusive", "pcie_acs": {"disable": "listed", "bridges": ["0000:3a:00.0"]},
    "rails": 2, "mtu": 9000,
    "addressing": {"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24, "gateway_offset": 1,
                   "host_offset": 2},
    "routing": {"table_base": 150, "rule_priority": 1000, "aggregate_route": True},
    "tors": [{"name": "tor1", "rails": [1], "nodes": "1-32", "port_template": "swp{node}",
              "platform": "sonic", "port_mtu": 9216, "port_speed": "400G", "port_fec": "rs", "spine_block": "sb1",
              "description": "t"}],
    "qos": {"preset": "custom", "trust": "dscp", "roce_dscp": 26, "roce_priority": 3, "cnp_dscp": 48,
            "cnp_priority": 6, "cnp_strict": True, "ecn_queues": [3], "ecn_min_bytes": 150000,
            "ecn_max_bytes": 1500000, "ecn_probability": 100, "ets_weights": {0: 50, 3: 50}, "pfc_watchdog": True,
            "switch_mtu_headroom": 18, "share_priority": False},
    "cni": "sriov", "sriov": {"vfs": 4, "trust": False, "spoof_check": True, "link_state": "auto", "firmware_vfs": 8},
    "kubernetes": {"ipam": "spiderpool", "namespace": "kube-system", "resource_prefix": "nvidia.com",
                   "pod_offset": 128, "pod_count": 64, "rdma_hca_max": 100, "sriov_operator": False,
                   "operator_namespace": "sriov-network-operator", "ipam_namespace": "nvidia-network-operator",
                   "device_plugin_namespace": "kube-system", "workload_namespace": "default"},
}
# The InfiniBand-only keys are varied on an InfiniBand fabric (the loader refuses them on any other).
IB_BASE = {
    "name": "propib", "rails": 2, "mtu": 4092,
    "addressing": {"mode": "infiniband", "supernet": "172.18.0.0/16", "rail_prefix": 24},
    "infiniband": {"partitions": [{"name": "compute", "pkey": "0x0101", "hosts": ["gpu01"], "membership": "full",
                                   "ipoib": True, "mtu": 5, "rate": 7, "sl": 0}]},
}
EXAMPLES = 60


def _leaves(schema, prefix=()):
    for name, key in schema.items():
        path = prefix + (name,)
        if key.type == "dict" and key.options:
            yield from _leaves(key.options, path)
        elif key.type == "list" and key.options:
            yield from _leaves(key.options, path + (0,))
        elif key.values is None:  # `fabrics`: its values are the fabric keys, varied at the top
            yield path, key


LEAVES = list(_leaves(model_schema.CLUSTER))


def _field(path):
    return "fabric_cluster" + "".join("[%d]" % p if isinstance(p, int) else "." + p for p in path)


def _set(model, path, value):
    target = model
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value


def _get(tree, path):
    for step in path:
        tree = tree[step]
    return tree


# -- generated values ----------------------------------------------------------------------

BOOL_WORDS = ("yes", "no", "true", "false", "on", "off", "1", "0", "True", " YES ", "Off", "y", "n", "2", "enable",
              "")
ODD_TEXT = ("", "x", "3.0", "0x3", "1e3", "3\n", "\uff13", "\u0663", "1_0", " 12 ", "+3", "-1", "- 1", "None",
            "null", "[1]", "3,4")
GARBAGE = st.one_of(
    st.floats(allow_nan=False), st.text(max_size=6), st.sampled_from(ODD_TEXT), st.booleans(),
    st.sampled_from(BOOL_WORDS), st.dictionaries(st.text(max_size=3), st.integers(-3, 3), max_size=2),
    st.lists(st.integers(-3, 300), max_size=2), st.integers(-3, 300))


# Port templates (any text key gets them): fields known and unknown, stray braces.
TEMPLATES = st.lists(st.sampled_from(["swp", "{node}", "{node}", "{local}", "{rail}", "{slot}", "{", "}", "{}", "/"]),
                     max_size=4).map("".join)


def _weighted(*pairs):
    """One of the strategies, each drawn ``weight`` times as often."""
    return st.sampled_from([strategy for weight, strategy in pairs for _i in range(weight)]).flatmap(lambda s: s)


def _numbers(key):
    """Ints inside the key's range, near its bounds and anywhere, as ints and as inventory strings."""
    bounds = [b for b in (key.minimum, key.maximum) if b is not None]
    inside = st.integers(key.minimum if key.minimum is not None else -300,
                         key.maximum if key.maximum is not None else 70000)
    ints = _weighted((3, inside), (2, st.sampled_from([b + d for b in bounds for d in (-1, 0, 1)] or [0, 1, -1])),
                     (1, st.integers(-300, 70000)), (1, st.integers(-2 ** 64, 2 ** 64)))
    return _weighted((3, ints), (2, ints.map(str)), (1, ints.map(lambda n: " %+d " % n)))


def _words(key):
    """Choices and near misses, names that do and do not fit the key's pattern, any text."""
    out = [(1, st.text(max_size=10)), (1, st.text(alphabet="abcAB09_-.{} !", max_size=12)), (2, TEMPLATES)]
    if key.choices:
        choice = st.sampled_from(key.choices)
        out += [(4, choice), (1, choice.map(lambda c: c.upper())), (1, choice.map(lambda c: c + "x")),
                (1, choice.map(lambda c: " " + c))]
    if key.pattern is not None:
        out += [(3, st.from_regex(key.pattern, fullmatch=True)), (1, st.text(alphabet="abcXY09_-. /\n", max_size=70))]
    return _weighted(*out)


@st.composite
def _networks(draw):
    version = draw(st.sampled_from([4, 6]))
    bits = 32 if version == 4 else 128
    prefix = draw(st.integers(0, bits + 1))
    address = draw(st.integers(0, 2 ** bits - 1))
    if draw(st.booleans()) and prefix <= bits:  # mostly without host bits
        address &= ~((1 << (bits - prefix)) - 1) & (2 ** bits - 1)
    text = str(ipaddress.IPv4Address(address) if version == 4 else ipaddress.IPv6Address(address))
    return "%s/%d" % (text, prefix)


CIDRS = st.one_of(_networks(), st.sampled_from([
    "10.20.0.0/16", "fd00:20::/48", "10.0.0.0", "10.0.0.0/33", "banana/3", "::/0", "0.0.0.0/0", "127.0.0.0/8",
    "10.0.0.1/8", " 10.30.0.0/16 ", "10.0.0.0/8/8", "/16"]))
PCIS = st.one_of(st.sampled_from(["0000:3a:00.0", "3A:00.0", "3a:00", "0000:3a:00.8", "00:04.0", " 0000:5D:02.7 ",
                                  "0000:3a:00.0\n", "1:3a:00.0"]),
                 st.from_regex(model_schema.BDF, fullmatch=True))
RANGES = st.one_of(st.integers(-2, 300), st.integers(-2, 300).map(str),
                   st.tuples(st.integers(-2, 300), st.integers(-2, 300)).map(lambda r: "%d-%d" % r),
                   st.sampled_from(["1 - 4", "x-3", "3-", "-3", "1--3", "+1-+3", "5-2", "1-2-3"]))


def _scalar(kind, key):
    if kind == "int":
        return _numbers(key)
    if kind == "bool":
        return _weighted((1, st.booleans()), (2, st.sampled_from(BOOL_WORDS)))
    if kind == "str":
        return _words(key)
    if kind == "cidr":
        return CIDRS
    if kind == "pci":
        return PCIS
    if kind == "range":
        return RANGES
    return GARBAGE


@st.composite
def _weights(draw, key):
    """ETS weights: queues (some off the range) whose weights (some off the range) mostly sum to 100."""
    queues = draw(st.lists(_weighted((3, st.integers(0, 7)), (1, st.integers(-1, 8)), (1, st.integers(-1, 8).map(str))),
                           min_size=1, max_size=4))
    weights = [draw(_numbers(key))] * (len(queues) - 1) if draw(st.booleans()) else []
    if not weights:
        cuts = sorted(draw(st.lists(st.integers(1, 99), min_size=len(queues) - 1, max_size=len(queues) - 1)))
        weights = [b - a for a, b in zip([0] + cuts, cuts + [100])]
    else:
        weights.append(draw(_numbers(key)))
    return dict(zip(queues, weights))


def values_for(key):
    """Values of the key's own kind (3 in 4) and anything else."""
    if key.type == "list":
        element = _weighted((3, _scalar(key.elements, key)), (1, GARBAGE))
        own = _weighted((3, st.lists(element, min_size=1, max_size=3)), (1, st.lists(element, max_size=3)),
                        (1, _scalar(key.elements, key)))
    elif key.type == "dict" and key.keys is not None:
        own = _weighted((3, _weights(key)), (1, st.dictionaries(
            _weighted((3, _numbers(key.keys)), (1, GARBAGE.filter(_hashable))),
            _weighted((3, _numbers(key)), (1, GARBAGE)), max_size=3)))
    else:
        own = _scalar(key.type, key)
    return _weighted((3, own), (1, GARBAGE))


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


# -- what a loader's refusal is ----------------------------------------------------------------

# The problems the schema states for a single key: a loader never states one of these itself.
SHAPE_PROBLEM = re.compile(
    r"^(is not an integer|is a boolean, not an integer|is not a boolean|is not a string|is not a mapping|is not a list"
    r"|is not a network in CIDR notation|is not a valid .*|has host bits set|is not a PCI address|is empty"
    r"|is not one of the choices|is not a known .*|is listed twice|was removed in .*|ends before it starts"
    r"|is out of range|overlaps .*, which can never carry a fabric)\Z")
RANGE = re.compile(r"^is (below the minimum|above the maximum) (-?[0-9]+)\Z")


def _lines(exc):
    return getattr(exc, "errors", [exc])


def _under(field, base):
    return field == base or field.startswith(base + ".") or field.startswith(base + "[")


def assert_not_a_shape_refusal(error, path, key):
    """``error``, raised for a model the schema accepts, comes from a rule across keys."""
    if not _under(error.field, _field(path)):
        return  # another key refused because of the varied one: a rule across keys by definition
    assert not SHAPE_PROBLEM.match(error.problem), "the loader refused what the schema accepts: %s" % error
    match = RANGE.match(error.problem)
    if match:
        bound = key.minimum if match.group(1).startswith("below") else key.maximum
        assert int(match.group(2)) != bound, "the loader holds the schema's range itself: %s" % error


def _loaded(cluster, path, norm):
    """(the value the loaded cluster holds for ``path``, what the schema's normalised value makes of it),
    or None where the loader derives something else from it."""
    fabric = cluster.fabrics[0]
    head, name = path[0], path[-1]
    if head == "qos" and fabric.qos is not None:
        if name in ("ets_weights", "dscp_priorities"):
            return fabric.qos[name], {str(q): w for q, w in sorted(norm.items())}
        return fabric.qos[name], sorted(norm) if isinstance(norm, list) else norm
    if head == "sriov" and fabric.sriov is not None:
        return fabric.sriov[name], norm
    if head == "kubernetes" and fabric.kubernetes is not None:
        return fabric.kubernetes[name], norm
    if head == "routing" and name != "keep_off_rule":
        return getattr(fabric, name), norm
    if head in ("rails", "mtu", "cni"):
        return getattr(fabric, head), norm
    if head == "addressing" and name in ("mode", "supernet", "rail_prefix"):
        return getattr(fabric, name), norm
    if head == "tors" and name != "description":
        tor = fabric.tors[0]
        if name == "rails":
            return tor.rails, tuple(sorted(set(norm)))
        return getattr(tor, {"nodes": "ranges"}.get(name, name)), norm
    if head == "pcie_acs":
        return cluster.pcie_acs[name], norm
    if head == "infiniband":
        part = fabric.infiniband["partitions"][0]
        return part[name], "0x%04x" % int(norm, 16) if name == "pkey" else norm
    if head in ("name", "rdma_netns", "management_networks", "pod_networks", "service_networks"):
        return getattr(cluster, head), norm
    return None


def _fragment(path):
    """The resolver that takes the fragment ``path`` is in on its own, with its schema."""
    if path[0] == "qos":
        return model_schema.QOS, qos_profile.resolve_profile
    if path[0] == "sriov":
        return model_schema.SRIOV, lambda raw, field: rdma_host.resolve_sriov(raw, field, "sriov")
    if path[0] == "pcie_acs":
        return model_schema.PCIE_ACS, rdma_host.resolve_acs
    return None, None


def _load(model):
    try:
        return load_cluster(model), None
    except FabricModelError as exc:
        return None, exc


@pytest.mark.parametrize("path,key", LEAVES, ids=[_field(p) for p, _k in LEAVES])
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_schema_and_loaders_agree_on_every_leaf(path, key, data):
    value = data.draw(values_for(key), label=_field(path))
    model = copy.deepcopy(IB_BASE if path[0] == "infiniband" else BASE)
    _set(model, path, value)
    norm, errors = model_schema.normalize(model)
    cluster, refusal = _load(model)
    event("schema refuses" if errors else "schema accepts, loader refuses" if refusal else "both accept")
    if errors:
        assert refusal is not None, "the schema refuses %r, the loader took it" % (value,)
        assert str(refusal) == "\n".join(str(e) for e in errors)
        assert all(_under(e.field, _field(path)) for e in errors), errors
    elif refusal is not None:
        for error in _lines(refusal):
            assert_not_a_shape_refusal(error, path, key)
    else:
        if value is not None:
            pair = _loaded(cluster, path, _get(norm, path))
            if pair is not None:
                assert pair[0] == pair[1]
        for tor in cluster.fabrics[0].tors:  # what the loader took, the planner can use
            assert isinstance(tor.port(tor.rails[0], 1), str)
    # A fragment handed to its resolver on its own: the same verdict, the same result.
    schema, resolve = _fragment(path)
    if schema is None:
        return
    part_errors = model_schema.normalize(model[path[0]], schema, "f", part=True)[1]
    top = len(_field(path[:1]))
    assert [e.field for e in part_errors] == ["f" + e.field[top:] for e in errors]
    try:
        resolved = resolve(model[path[0]], "f")
    except FabricModelError as exc:
        if part_errors:
            assert str(exc) == "\n".join(str(e) for e in part_errors)
        else:
            assert cluster is None, "the resolver refuses what load_cluster took: %s" % exc
            assert not SHAPE_PROBLEM.match(exc.problem), exc
        return
    assert not part_errors, "the resolver took what the schema refuses: %r" % (value,)
    if cluster is not None:
        want = {"qos": cluster.fabrics[0].qos, "sriov": cluster.fabrics[0].sriov, "pcie_acs": cluster.pcie_acs}
        assert resolved == want[path[0]]


FABRIC_NAMES = st.one_of(st.from_regex(model_schema.FABRIC_NAME_RE, fullmatch=True), st.text(max_size=20),
                         st.text(alphabet="abzAZ09_-.", max_size=18), st.integers(-3, 3), st.booleans())


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(name=FABRIC_NAMES)
def test_fabric_names_schema_and_loader_agree(name):
    storage = {"rails": 1, "addressing": {"mode": "shared", "supernet": "10.70.0.0/16", "rail_prefix": 24},
               "qos": {"preset": "spiderpool"}}
    compute = {"rails": 2, "addressing": {"mode": "shared", "supernet": "10.60.0.0/16", "rail_prefix": 24}}
    model = {"name": "c", "fabrics": {"compute": compute, name: storage}}
    errors = model_schema.check(model)
    cluster, refusal = _load(model)
    if errors:
        assert refusal is not None and str(refusal) == "\n".join(str(e) for e in errors)
        assert [e.field for e in errors] == ["fabric_cluster.fabrics"]
    elif name == "compute":  # the same key twice in a mapping is one key
        assert [f.name for f in cluster.fabrics] == ["compute"]
    else:
        assert refusal is None, refusal
        assert [f.name for f in cluster.fabrics] == ["compute", name]


def _with_qos(**qos):
    model = copy.deepcopy(BASE)
    model["qos"].update(qos)
    return model


@pytest.mark.parametrize("word,want", [("1", True), ("0", False), ("yes", True), (" Off ", False)])
def test_cnp_strict_as_a_string_is_taken_by_schema_and_loader(word, want):
    """`qos.cnp_strict: "1"` once passed the schema's check and was refused by the loader."""
    model = _with_qos(cnp_strict=word)
    assert model_schema.check(model) == []
    assert load_cluster(model).fabrics[0].qos["cnp_strict"] is want
    assert qos_profile.resolve_profile({"cnp_strict": word}, "q")["cnp_strict"] is want


def test_cnp_strict_as_a_number_is_refused_by_both():
    model = _with_qos(cnp_strict=1)
    errors = model_schema.check(model)
    assert [str(e) for e in errors] == ["fabric_cluster.qos.cnp_strict: 1 is not a boolean. Fix: use true or false"]
    with pytest.raises(FabricModelError, match=r"^fabric_cluster\.qos\.cnp_strict: 1 is not a boolean"):
        load_cluster(model)


def test_the_loaders_relation_tables_cover_the_schemas_choices():
    """The loaders name choices only where they relate them to other keys; those tables cover the schema's."""
    cnis = set(model_schema.FABRIC["cni"].choices)
    assert set(rdma_host.NETNS) == cnis
    assert set().union(*rdma_host.CNI_BY_MODE.values()) == cnis
    assert set(rdma_host.NETNS.values()) - {None} == set(model_schema.CLUSTER["rdma_netns"].choices)
    assert set(qos_profile.PRESETS) | {"none"} == set(model_schema.QOS["preset"].choices)
    assert qos_profile.PROFILE_KEYS == tuple(model_schema.QOS)


def test_every_leaf_is_varied():
    fields = [_field(p) for p, _k in LEAVES]
    assert "fabric_cluster.qos.cnp_strict" in fields and "fabric_cluster.tors[0].nodes" in fields
    assert len(fields) == len(set(fields)) == 74
