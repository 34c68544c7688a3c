# -*- coding: utf-8 -*-
"""Objects by shape (workload/k8s_shapes): split and join are each other's inverse; objects that differ only in
their strings share a shape, and anything else - a key, a list's length, an integer, a boolean where an integer was,
None - gives another; what a shape cannot describe is refused; Shapes splits each object once."""

from __future__ import annotations

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_shapes


class Tagged(str):
    """Like Ansible's tagged strings: a str subclass."""


class TaggedDict(dict):
    """Like Ansible's tagged dicts."""


POOL = {"apiVersion": "spiderpool.spidernet.io/v2beta1", "kind": "SpiderIPPool",
        "metadata": {"name": "c-rail1-gpu01", "labels": {"ainet.fabric/rail": "1", "ainet.fabric/node": "gpu01"}},
        "spec": {"ipVersion": 4, "subnet": "10.0.0.0/27", "ips": ["10.0.0.3-10.0.0.30"], "default": False,
                 "gateway": None, "routes": [{"dst": "10.0.0.0/16", "gw": "10.0.0.1"}],
                 "nodeAffinity": {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                        "values": ["gpu01"]}]}}}


def with_(obj, path, value):
    """A copy of ``obj`` (dicts and lists copied along ``path``) with ``value`` at ``path``."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    out = dict(obj) if isinstance(obj, dict) else list(obj)
    out[head] = with_(obj[head], rest, value)
    return out


def test_split_and_join_are_inverse():
    shape, values = k8s_shapes.split(POOL)
    assert values == ["spiderpool.spidernet.io/v2beta1", "SpiderIPPool", "c-rail1-gpu01", "1", "gpu01", "10.0.0.0/27",
                      "10.0.0.3-10.0.0.30", "10.0.0.0/16", "10.0.0.1", "kubernetes.io/hostname", "In", "gpu01"]
    assert k8s_shapes.join(shape, values) == POOL
    odd = {"": [[], {}, [1, [True, None]], ""], "k": {"": ""}, "t": (1, "2")}
    shape, values = k8s_shapes.split(odd)
    assert k8s_shapes.join(shape, values) == dict(odd, t=[1, "2"])  # a tuple comes back as a list
    assert k8s_shapes.split("top") == ((k8s_shapes.SLOT,), ["top"]) and k8s_shapes.join((k8s_shapes.SLOT,), ["x"]) == "x"


def test_subclasses_split_as_their_plain_types():
    tagged = TaggedDict(a=Tagged("x"), b=[Tagged("y")])
    shape, values = k8s_shapes.split(tagged)
    assert shape == k8s_shapes.split({"a": "x", "b": ["y"]})[0]
    assert values == ["x", "y"] and [type(v) for v in values] == [str, str]


def test_objects_that_differ_in_strings_only_share_a_shape():
    renamed = with_(POOL, ["metadata", "name"], "c-rail8-gpu99")
    other = with_(renamed, ["spec", "nodeAffinity", "matchExpressions", 0, "values", 0], "true")
    assert k8s_shapes.split(other)[0] == k8s_shapes.split(POOL)[0]
    assert k8s_shapes.split(other)[1] != k8s_shapes.split(POOL)[1]


@pytest.mark.parametrize("path,value", [
    (["spec", "ipVersion"], 6),  # another integer
    (["spec", "ipVersion"], True),  # a boolean equal to 1 in Python
    (["spec", "ipVersion"], "4"),  # a string where an integer was
    (["spec", "default"], 0),  # 0 == False in Python
    (["spec", "gateway"], "10.0.0.1"),  # None -> a string
    (["spec", "ips"], ["10.0.0.3-10.0.0.10", "10.0.0.12-10.0.0.30"]),  # a longer list
    (["spec", "routes", 0], {"gw": "10.0.0.1", "dst": "10.0.0.0/16"}),  # the keys in another order
    (["metadata", "labels"], {"ainet.fabric/rail": "1"}),  # a key less
])
def test_anything_but_a_string_changes_the_shape(path, value):
    assert k8s_shapes.split(with_(POOL, path, value))[0] != k8s_shapes.split(POOL)[0]
    assert k8s_shapes.join(*k8s_shapes.split(with_(POOL, path, value))) == with_(
        POOL, path, list(value) if isinstance(value, tuple) else value)


@pytest.mark.parametrize("obj", [{"a": 1.5}, {1: "a"}, {"a": [object()]}, {"a": {b"k": "v"}}])
def test_what_a_shape_cannot_describe_is_refused(obj):
    with pytest.raises(k8s_shapes.Unsplittable):
        k8s_shapes.split(obj)


def test_shapes_splits_each_object_once():
    shapes = k8s_shapes.Shapes()
    first = shapes.split(POOL)
    assert shapes.split(POOL)[1] is first[1]  # the same object: the cached split
    twin = with_(POOL, ["metadata", "name"], "c-rail1-gpu02")
    shape, values = shapes.split(twin)
    assert shape is first[0]  # one shape kept once
    assert values[2] == "c-rail1-gpu02" and first[1][2] == "c-rail1-gpu01"
    equal = with_(POOL, ["metadata", "name"], "c-rail1-gpu01")  # equal content, another object: split on its own
    assert shapes.split(equal)[1] is not first[1] and shapes.split(equal)[1] == first[1]
