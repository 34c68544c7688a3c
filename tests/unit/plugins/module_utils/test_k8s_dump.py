# -*- coding: utf-8 -*-
"""The Kubernetes objects' files (plugin_utils/k8s_dump): libyaml's C emitter writes the same bytes as PyYAML's
pure-Python one, and both the same bytes as PyYAML's own representer path (``yaml.dump_all`` with a
``SafeDumper`` after a JSON round trip - how the files were written before), for every CNI and IPAM the model
allows; Ansible's tagged string subclasses and floats come out as their plain values."""

from __future__ import annotations

import json

import pytest
import yaml

from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_objects
from ansible_collections.ainet.fabric.plugins.plugin_utils import k8s_dump

from ansible_collections.ainet.fabric.tests.unit.plugins.module_utils.test_workload import (  # noqa: E402
    CASES, cluster, nodes_of, plan_of)


class _Dumper(yaml.SafeDumper):
    """The reference: PyYAML's representer and pure-Python emitter, multi-line strings as literal blocks."""


_Dumper.add_representer(str, lambda dumper, value: dumper.represent_scalar(
    "tag:yaml.org,2002:str", value, style="|" if "\n" in value else None))


def reference(kind, cluster_name, objects):
    objects = json.loads(json.dumps(objects))
    return k8s_dump.HEADER % (kind, cluster_name) + yaml.dump_all(
        objects, Dumper=_Dumper, sort_keys=False, explicit_start=True, default_flow_style=False, width=120)


def files(cni, mode, family, k8s, pure):
    plan = plan_of(cluster(cni, mode, family, **k8s), nodes=5 if nodes_of(k8s) > 1 else 1)
    name = plan["cluster"]["name"]
    return dict((path, k8s_dump.dump(items[0]["kind"], name, items, pure=pure))
                for path, items in k8s_objects.by_file(k8s_objects.render(plan)).items())


@pytest.mark.parametrize("cni,mode,family,k8s", CASES, ids=["-".join(str(x) for x in c[:3]) + str(c[3]) for c in CASES])
def test_the_c_emitter_writes_the_pure_pythons_bytes(cni, mode, family, k8s):
    if k8s_dump.C_DUMPER is None:
        pytest.skip("PyYAML was built without libyaml: only the pure-Python emitter runs")
    pure = files(cni, mode, family, k8s, pure=True)
    assert pure and files(cni, mode, family, k8s, pure=False) == pure


@pytest.mark.parametrize("cni,mode,family,k8s", CASES, ids=["-".join(str(x) for x in c[:3]) + str(c[3]) for c in CASES])
def test_the_events_are_the_representers(cni, mode, family, k8s):
    plan = plan_of(cluster(cni, mode, family, **k8s), nodes=5 if nodes_of(k8s) > 1 else 1)
    for path, items in k8s_objects.by_file(k8s_objects.render(plan)).items():
        expected = reference(items[0]["kind"], "c", items)
        assert k8s_dump.dump(items[0]["kind"], "c", items, pure=True) == expected, path
        assert k8s_dump.dump(items[0]["kind"], "c", items) == expected, path


class Tagged(str):
    """Like Ansible's tagged strings: a str subclass PyYAML's safe representer does not know."""


SCALARS = {"kind": "ConfigMap", "metadata": {"name": Tagged("a"), "labels": {"x": Tagged("true"), "y": "0x10"}},
           "data": {"config.json": Tagged('{\n  "a": 1\n}\n'), "n": 3, "on": True, "off": None, "f": 1.5,
                    "empty": [], "none": {}, "list": [Tagged("yes"), 1, [2, {"k": "v: w"}]], "t": (1, "2")},
           "long": "x " * 80}


@pytest.mark.parametrize("pure", [True, False])
def test_scalars_and_subclasses_read_back_as_written(pure):
    text = k8s_dump.dump("ConfigMap", "c", [SCALARS, SCALARS], pure=pure)
    assert text == reference("ConfigMap", "c", [SCALARS, SCALARS])
    assert "&id" not in text and "!!" not in text  # no anchors for the repeated object, no tags for subclasses
    assert list(yaml.safe_load_all(text)) == json.loads(json.dumps([SCALARS, SCALARS]))


# -- one emitter run per shape (by_shape, the default): the same bytes as one emitter run per object ----------------

# Strings that PyYAML writes quoted, as a block, or tagged, wherever they are: each must stay out of the slots.
NOT_PLAIN = ["true", "True", "no", "on", "null", "~", "", "1", "042", "0x1f", "0b101", "1.5e+3", "1.5", "1_000", "12:30",
             "190:20:30.15", ".inf", "-.nan", "2024-01-01", "2001-12-14t21:59:43.10-05:00", "=", "<<", "=eth0",
             "fd00:17::", "a: b", "a:", "# x", "a #b", "-x", "- x", "?x", "x ", " x", "a b", "a\nb", "a\tb", "é",
             "[x]", "{x}", "x,y", "*x", "&x", "!x", "|x", ">x", "'x", '"x', "%x", "@x", "`x", "---", "...",
             "x" * 130 + " y", "\u2028", "a\x85b"]
# Strings that go into slots: plain, read back as strings.
PLAIN = ["gpu01", "c-rail1-gpu01", "10.0.0.3-10.0.0.30", "10.0.0.0/27", "fd00:17::1-fd00:17::fe", "fd00:17::/120",
         "kubernetes.io/hostname", "In", "a.b_c/d-e", "1a", "0.0.0.0", "x" * 300, "n" * 253 + "." + "m" * 40,
         "ainetfabricslots", "Yes-no", "a:b", "a::b", "1e3"]


def pool(name, node, subnet="10.0.0.0/27", rail="1", extra=None):
    out = {"apiVersion": "spiderpool.spidernet.io/v2beta1", "kind": "SpiderIPPool",
           "metadata": {"name": name, "labels": {"ainet.fabric/rail": rail, "ainet.fabric/node": node}},
           "spec": {"ipVersion": 4, "subnet": subnet, "ips": ["10.0.0.3-10.0.0.30"], "gateway": "10.0.0.1",
                    "nodeAffinity": {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                           "values": [node]}]}}}
    if extra is not None:
        out["spec"]["extra"] = extra
    return out


def same_three_ways(objects):
    """The file by shape, with the C emitter and the pure-Python one, is the file one object at a time, and the
    file PyYAML's own representer writes; it reads back as the objects."""
    by_shape = k8s_dump.dump("SpiderIPPool", "c", objects)
    assert by_shape == k8s_dump.dump("SpiderIPPool", "c", objects, by_shape=False)
    assert by_shape == k8s_dump.dump("SpiderIPPool", "c", objects, pure=True)
    assert by_shape == reference("SpiderIPPool", "c", objects)
    assert list(yaml.safe_load_all(by_shape)) == json.loads(json.dumps(objects))
    return by_shape


@pytest.mark.parametrize("text", NOT_PLAIN)
def test_a_string_the_emitter_would_quote_is_part_of_the_shape(text):
    # one object of the shape has the string where the others have plain ones, in a value and as a list item
    assert not k8s_dump._SLOT.match(text)  # pylint: disable=protected-access
    objects = [pool("p%d" % n, "gpu%02d" % n) for n in range(3)]
    objects.insert(1, pool(text, text, extra=[text, "x"]))
    objects.append(pool("p9", "gpu09", extra=["y", text]))
    same_three_ways(objects)


def test_plain_strings_go_into_slots_of_one_template():
    assert all(k8s_dump._SLOT.match(text) for text in PLAIN)  # pylint: disable=protected-access
    objects = [pool(text, text, extra=[text]) for text in PLAIN]
    written = same_three_ways(objects)
    assert all("\n  name: %s\n" % text in written for text in PLAIN)  # written as they are


@pytest.mark.parametrize("text", ["true", "1", "a: b"])
def test_a_column_of_strings_seen_in_an_earlier_column_is_still_asked_where_one_is_new(text):
    """A column whose strings were all found slots in an earlier column is not asked again (a pool's gateway and its
    route's); one that holds a further string is: here the node names again, and in one object a string the
    emitter quotes (the control: the names alone, slots in both columns)."""
    names = ["gpu%02d" % n for n in range(4)]
    control = [pool("p%d" % n, node, extra=[node]) for n, node in enumerate(names)]
    assert "\n  - gpu03\n" in same_three_ways(control)
    objects = [pool("p%d" % n, node, extra=[node if n != 2 else text]) for n, node in enumerate(names)]
    written = same_three_ways(objects)
    assert "\n  - gpu03\n" in written and "\n  - gpu02\n" not in written


def test_the_mark_inside_a_value_or_a_key_falls_back_to_the_emitter():
    marked = pool("ainetfabricslot", "gpu01")
    marked["spec"]["ainetfabricslot"] = "x ainetfabricslot"
    same_three_ways([pool("p1", "gpu02"), marked, pool("p3", "gpu03")])


def test_a_document_does_not_depend_on_its_neighbours():
    objects = [pool("p%d" % n, "gpu%02d" % n, rail=str(n)) for n in range(5)] + [SCALARS, pool("x", "y", extra="|")]
    forward = same_three_ways(objects)
    backward = same_three_ways(list(reversed(objects)))
    header = k8s_dump.HEADER % ("SpiderIPPool", "c")
    assert sorted(forward[len(header):].split("---\n")) == sorted(backward[len(header):].split("---\n"))


@pytest.mark.parametrize("ending", ["a\n\n", "a\n\n\n", "a\n", "a", "a\n "])
def test_the_stream_end_follows_the_last_document(ending):
    # a literal block kept with its trailing line breaks (|+) leaves the stream open-ended: the end marker PyYAML and
    # libyaml write after it belongs after the last document only
    objects = [pool("p1", "gpu01", extra=ending), pool("p2", "gpu02", extra=ending), pool("p3", "gpu03")]
    same_three_ways(objects)
    same_three_ways(objects[:2])


def test_floats_and_subclasses_take_the_long_way():
    objects = [pool("p1", "gpu01", extra=1.5), dict(pool(Tagged("p2"), Tagged("gpu02")), kind=Tagged("SpiderIPPool"))]
    text = k8s_dump.dump("SpiderIPPool", "c", objects)
    assert text == k8s_dump.dump("SpiderIPPool", "c", objects, by_shape=False) == reference("SpiderIPPool", "c", objects)


def test_no_object_no_document():
    assert k8s_dump.dump("SpiderIPPool", "c", []) == k8s_dump.HEADER % ("SpiderIPPool", "c")
    assert k8s_dump.dump("SpiderIPPool", "c", [], by_shape=False) == k8s_dump.HEADER % ("SpiderIPPool", "c")
