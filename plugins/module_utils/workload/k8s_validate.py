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
"""

from __future__ import annotations

import copy
import json
import os

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

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


def validate(objects, schemas):
    """``(violations, unchecked)``: one line per violation (``Kind name: path: message``), and the kinds that
    have no CRD among ``schemas`` (core kinds such as ConfigMap are never listed)."""
    validator_class = _validator()
    violations, unchecked = [], []
    validators = {}
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
        for error in sorted(validators[key].iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path]):
            path = ".".join(str(p) for p in error.absolute_path) or "(object)"
            violations.append("%s: %s: %s" % (what, path, error.message))
    return violations, unchecked
