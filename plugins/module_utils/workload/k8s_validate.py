# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rendered Kubernetes objects against the CustomResourceDefinitions of the projects that define them.

The CRDs are not in any registry: they live in the projects' repositories (Spiderpool's
``charts/spiderpool/crds/``, the SR-IOV network operator's ``config/crd/bases/``, the NetworkAttachmentDefinition
CRD of the Network Plumbing Working Group). Given a directory that holds them (``*.yaml``, searched recursively),
each custom resource is validated against the ``openAPIV3Schema`` of its group, version and kind with
``openapi-schema-validator`` (an optional controller package), strictly: where a schema lists an object's
properties and does not preserve unknown fields, an unknown key is a violation, as ``kubectl
--validate=strict`` makes it. CEL rules (``x-kubernetes-validations``) are not checked. A NetworkAttachmentDefinition's
``spec.config`` must be a JSON CNI configuration. Core objects (ConfigMaps) have no CRD and are not checked here.

Once per shape: objects of one kind and one shape (``workload/k8s_shapes``) that differ only in strings the schema
cannot tell apart are checked once. A string is such a *free* value where the schema on its way from the root
describes structure only (``type``, ``properties``, ``additionalProperties``, ``items``, ``required``, the
``min``/``max`` counts of items and properties, annotations) and at the string itself says no more than ``type:
string`` (no ``pattern``, ``format``, ``enum``, length...): the verdict for such an object cannot depend on those
strings, so the first object of each group is checked and the group shares its verdict. A group whose first object
has a violation is checked object by object (each line names its own object). 131,072 node pools of one shape are
one check.
"""

from __future__ import annotations

import copy
import json
import os

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_shapes

PACKAGE = "openapi-schema-validator"
# The pin the message names (requirements.txt, requirements-dev.txt and the execution environment carry the same).
OPENAPI_SCHEMA_VALIDATOR = PACKAGE + "==0.9.0"


class ValidatorUnavailable(FabricError):
    """The schema check cannot run here (the package or the CRDs are missing): say so, do not fail."""


def _strict(schema):
    """A copy of ``schema`` where every object with listed properties refuses unknown keys."""
    if isinstance(schema, dict):
        out = dict((k, _strict(v)) for k, v in schema.items())
        if ("properties" in out and "additionalProperties" not in out
                and not out.get("x-kubernetes-preserve-unknown-fields")):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def load_crds(directory):
    """``{(apiVersion, kind): strict openAPIV3Schema}`` of every CRD under ``directory``."""
    import yaml  # PyYAML comes with ansible-core

    if not directory or not os.path.isdir(directory):
        raise ValidatorUnavailable("no CRD directory (%s)" % (directory or "not given"))
    schemas = {}
    for base, _dirs, files in sorted(os.walk(directory)):
        for name in sorted(files):
            if not name.endswith((".yaml", ".yml")):
                continue
            with open(os.path.join(base, name), encoding="utf-8") as handle:
                for doc in yaml.safe_load_all(handle):
                    if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                        continue
                    spec = doc.get("spec") or {}
                    group, kind = spec.get("group"), (spec.get("names") or {}).get("kind")
                    for version in spec.get("versions") or []:
                        schema = ((version.get("schema") or {}).get("openAPIV3Schema"))
                        if group and kind and schema:
                            schemas[("%s/%s" % (group, version["name"]), kind)] = _strict(copy.deepcopy(schema))
    if not schemas:
        raise ValidatorUnavailable("no CustomResourceDefinition under %s" % directory)
    return schemas


def _validator():
    try:
        from openapi_schema_validator import OAS30Validator
    except ImportError:
        raise ValidatorUnavailable("the Python package %s is not installed on the controller (pip install '%s')"
                                   % (PACKAGE, OPENAPI_SCHEMA_VALIDATOR)) from None
    return OAS30Validator


# Keywords of a schema that describe structure only (what a shape fixes: keys, lengths, non-string values), and of
# one that says of a string no more than that it is one; any other keyword (pattern, format, enum, allOf...) makes the
# strings under it count (and "x-" annotations, which the validator ignores, never do).
STRUCTURE = frozenset(("type", "properties", "additionalProperties", "items", "required", "minItems", "maxItems",
                       "minProperties", "maxProperties", "description", "title", "default", "nullable"))
ANY_STRING = frozenset(("type", "description", "title", "default", "nullable"))


def _only(schema, keywords):
    return isinstance(schema, dict) and all(k in keywords or k.startswith("x-") for k in schema)


def free_values(shape, schema):
    """The indexes (in :func:`k8s_shapes.split`'s order) of the values of ``shape`` that ``schema`` cannot tell
    apart: a string whose schema, and every schema on its way from the root, is one of the module's doc."""
    free, slot, index = set(), 0, 0

    def walk(sub, structural):
        """``sub``: the schema at shape[index] (None: unknown); ``structural``: every schema above says structure
        only."""
        nonlocal slot, index
        tok = shape[index]
        index += 1
        if tok is k8s_shapes.SLOT:
            if structural and _only(sub, ANY_STRING) and sub.get("type", "string") == "string":
                free.add(slot)
            slot += 1
            return
        if tok is not k8s_shapes.MAP and tok is not k8s_shapes.SEQ:
            return
        inner = structural and _only(sub, STRUCTURE)
        while shape[index] is not k8s_shapes.END:
            if tok is k8s_shapes.MAP:
                key = shape[index]
                index += 1
                walk(_property(sub, key), inner)
            else:
                items = sub.get("items", {}) if isinstance(sub, dict) else None
                walk(items if isinstance(items, dict) else None, inner)
        index += 1

    walk(schema, True)
    return free


def _property(schema, key):
    """The schema of a mapping's ``key`` (None where the mapping may not have it, or the schema is unknown)."""
    if not isinstance(schema, dict):
        return None
    properties = schema.get("properties") or {}
    if key in properties:
        return properties[key]
    extra = schema.get("additionalProperties", True)
    if extra is True:
        return {}
    return extra if isinstance(extra, dict) else None


def validate(objects, schemas, shapes=None):
    """``(violations, unchecked)``: one line per violation (``Kind name: path: message``), and the kinds that
    have no CRD among ``schemas`` (core kinds such as ConfigMap are never listed). Objects that only free values
    tell apart share one check (see the module's doc); ``shapes``: a :class:`k8s_shapes.Shapes` shared with the
    YAML files (each object split once)."""
    validator_class = _validator()
    violations, unchecked = [], []
    validators = {}
    verdicts = {}  # (apiVersion, kind, shape, the values that count) -> whether the group's first object passed
    split = shapes.split if shapes is not None else k8s_shapes.split
    counted_of = {}  # (apiVersion, kind, shape) -> the indexes of the values that count (not free_values)
    for obj in objects:
        key = (obj.get("apiVersion"), obj.get("kind"))
        what = "%s %s" % (obj.get("kind"), (obj.get("metadata") or {}).get("name"))
        if obj.get("apiVersion") == "v1":
            continue
        if obj.get("kind") == "NetworkAttachmentDefinition":
            try:
                json.loads((obj.get("spec") or {}).get("config") or "")
            except ValueError as exc:
                violations.append("%s: spec.config: not a JSON CNI configuration (%s)" % (what, exc))
        schema = schemas.get(key)
        if schema is None:
            if key[1] not in unchecked:
                unchecked.append(key[1])
            continue
        if key not in validators:
            validators[key] = validator_class(schema)
        try:
            shape, values = split(obj)
        except k8s_shapes.Unsplittable:
            group = None
        else:
            counted = counted_of.get(key + (shape,))
            if counted is None:
                free = free_values(shape, schema)
                counted = counted_of[key + (shape,)] = [i for i in range(len(values)) if i not in free]
            group = key + (shape, tuple(map(values.__getitem__, counted)))
            if verdicts.get(group):
                continue  # its group's first object passed: so does this one
        errors = sorted(validators[key].iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path])
        if group is not None and group not in verdicts:
            verdicts[group] = not errors
        for error in errors:
            path = ".".join(str(p) for p in error.absolute_path) or "(object)"
            violations.append("%s: %s: %s" % (what, path, error.message))
    return violations, unchecked
