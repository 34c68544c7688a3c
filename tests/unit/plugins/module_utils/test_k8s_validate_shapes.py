# -*- coding: utf-8 -*-
"""The CRD check once per shape (workload/k8s_validate): the violations are those of checking every object on its
own with openapi-schema-validator (the library run here directly, object by object, is the reference), on the real
CRDs of ../shared/validators/k8s and on a schema made here whose strings count (a pattern, an enum, a format, a
length, anyOf, uniqueItems); free_values names only strings that a structure-only schema says are strings."""

from __future__ import annotations

import copy
import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_objects, k8s_shapes, k8s_validate

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
CRDS = os.environ.get("AINET_K8S_CRD_DIR") or os.path.join(os.path.dirname(ROOT), "shared", "validators", "k8s")

API = "example.com/v1"
STRING = {"type": "string"}
# A CRD-like schema: structure only down to some strings (free), and strings that count below a pattern, an enum, a
# format, a length, anyOf and uniqueItems.
SCHEMA = k8s_validate._strict({  # pylint: disable=protected-access
    "type": "object", "required": ["spec"],
    "properties": {
        "apiVersion": STRING, "kind": STRING, "metadata": {"type": "object"},
        "spec": {"type": "object", "required": ["free"], "properties": {
            "free": STRING,
            "items": {"type": "array", "maxItems": 3, "items": STRING},
            "named": {"type": "string", "pattern": "^[a-z]+$"},
            "choice": {"type": "string", "enum": ["a", "b"]},
            "address": {"type": "string", "format": "ipv4"},
            "short": {"type": "string", "maxLength": 3},
            "either": {"anyOf": [{"type": "string", "pattern": "^x"}, {"type": "string", "pattern": "^y"}]},
            "set": {"type": "array", "uniqueItems": True, "items": STRING},
            "map": {"type": "object", "additionalProperties": STRING},
            "closed": {"type": "object", "properties": {"k": STRING}, "additionalProperties": False},
            "count": {"type": "integer", "minimum": 1},
        }}}})
SCHEMAS = {(API, "Thing"): SCHEMA}


def thing(n, **spec):
    body = {"free": "f%d" % n, "items": ["i%d" % n], "named": "abc", "choice": "a", "address": "10.0.0.%d" % n,
            "short": "abc", "either": "x%d" % n, "set": ["s%d" % n, "t%d" % n], "map": {"m": "v%d" % n},
            "closed": {"k": "k%d" % n}, "count": 2}
    body.update(spec)
    return {"apiVersion": API, "kind": "Thing", "metadata": {"name": "t%d" % n, "labels": {"x": "%d" % n}},
            "spec": body}


def one_by_one(objects, schemas):
    """The reference: every object checked on its own by the library, in order (the lines as validate writes them)."""
    validator_class = k8s_validate._validator()  # pylint: disable=protected-access
    out = []
    for obj in objects:
        schema = schemas.get((obj["apiVersion"], obj["kind"]))
        if schema is None or obj["apiVersion"] == "v1":
            continue
        for error in sorted(validator_class(schema).iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path]):
            out.append("%s %s: %s: %s" % (obj["kind"], obj["metadata"]["name"],
                                          ".".join(str(p) for p in error.absolute_path) or "(object)", error.message))
    return out


# Each: one object of six made wrong in one way, the other five right (the first of its shape among them).
BROKEN = [
    {"named": "ABC"}, {"choice": "c"}, {"short": "abcd"}, {"either": "z"},
    {"set": ["s", "s"]}, {"items": ["a", "b", "c", "d"]}, {"closed": {"k": "v", "other": "w"}}, {"count": 0},
    {"map": {"m": 1}}, {"free": 1}, {"free": None},
]


@pytest.mark.parametrize("wrong", BROKEN, ids=[",".join(w) + "=" + str(list(w.values())[0]) for w in BROKEN])
@pytest.mark.parametrize("at", [0, 3, 5])
def test_one_wrong_object_among_its_shape_is_found(wrong, at):
    pytest.importorskip("openapi_schema_validator")
    objects = [thing(n) for n in range(6)]
    objects[at] = thing(at, **wrong)
    violations, unchecked = k8s_validate.validate(objects, SCHEMAS)
    assert violations == one_by_one(objects, SCHEMAS) and unchecked == []
    assert violations and all(v.startswith("Thing t%d: " % at) for v in violations)


def test_the_control_has_no_violation():
    pytest.importorskip("openapi_schema_validator")
    objects = [thing(n) for n in range(6)]
    assert k8s_validate.validate(objects, SCHEMAS) == ([], []) and one_by_one(objects, SCHEMAS) == []


def test_several_wrong_objects_each_named_in_order():
    pytest.importorskip("openapi_schema_validator")
    objects = [thing(n, **(BROKEN[n % len(BROKEN)] if n % 2 else {})) for n in range(24)]
    violations, _unchecked = k8s_validate.validate(objects, SCHEMAS, k8s_shapes.Shapes())
    assert violations == one_by_one(objects, SCHEMAS) and len(violations) >= 12


def test_free_values_are_the_strings_of_structure_only():
    shape, values = k8s_shapes.split(thing(1))
    free = set(values[i] for i in k8s_validate.free_values(shape, SCHEMA))
    # apiVersion and kind (type string), everything under metadata (type object, nothing more), spec.free, the items
    # of a list with maxItems (a count, fixed by the shape), a map's values, a closed map's listed key
    assert free == {API, "Thing", "t1", "1", "f1", "i1", "v1", "k1"}
    # a string under a pattern, an enum, a format, a length, anyOf or uniqueItems counts
    assert not free & {"abc", "a", "10.0.0.1", "x1", "s1", "t1x"}


@pytest.mark.skipif(not os.path.isdir(CRDS), reason="no CRDs: set AINET_K8S_CRD_DIR (../shared/validators/k8s in CI)")
@pytest.mark.parametrize("cni,mode,k8s", [
    ("sriov", "exclusive", {}),
    ("sriov", "exclusive", {"ipam": "nv-ipam", "sriov_operator": True, "namespace": "nvidia-network-operator"}),
    ("macvlan", "shared", {"ipam": "whereabouts"}),
    ("host-device", "exclusive", {}),
])
def test_rendered_objects_broken_on_purpose_as_one_by_one(cni, mode, k8s):
    pytest.importorskip("openapi_schema_validator")
    schemas = k8s_validate.load_crds(CRDS)
    addressing = {"mode": mode, "supernet": "172.17.0.0/16", "rail_prefix": 24}
    if mode == "exclusive":
        addressing["node_prefix"] = 27
    model = {"name": "c", "rails": 2, "addressing": addressing, "cni": cni}
    if cni == "sriov":
        model["sriov"] = {"vfs": 4}
    if k8s:
        model["kubernetes"] = k8s
    objects = k8s_objects.render(rail_plan(model, dict(("gpu%02d" % n, {"node_id": n, "rail_interfaces": ["e1", "e2"]})
                                                       for n in range(1, 6))))
    assert k8s_validate.validate(objects, schemas) == ([], [])  # the control
    for index, obj in enumerate(objects):
        if obj["apiVersion"] == "v1":
            continue
        for change in ({"ipVersion": 5}, {"unknown": "x"}, {"cidr": 7}, {"resourceName": ["x"]}):
            broken = copy.deepcopy(objects)
            broken[index]["spec"].update(change)
            violations, _unchecked = k8s_validate.validate(broken, schemas)
            assert violations == one_by_one(broken, schemas), (index, change)
            assert violations and all(v.startswith("%s %s: " % (obj["kind"], obj["metadata"]["name"]))
                                      for v in violations)
