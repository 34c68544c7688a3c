# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rendered ToR configurations checked against the vendors' own schemas.

Each validator returns a list of ``"path: message"`` strings (empty: valid) or raises
:class:`ValidatorUnavailable` naming what is missing; none of them is needed to render.

* ``validate_eos(structured)``: pyavd's ``validate_structured_config`` (Arista's AVD schema).
* ``validate_nvue(body, release)``: the NVUE object model of a Cumulus Linux release from the
  ``nvueschema`` package (Pydantic models generated from NVIDIA's NVUE OpenAPI), made strict:
  every model forbids unknown keys, as ``nv config apply`` does.
* ``validate_sonic(config_db, models_dir)``: the SONiC YANG models (``sonic-buildimage``
  ``src/sonic-yang-models/yang-models``; no registry packages them, so the directory is given)
  through libyang: config_db is translated to YANG JSON (:func:`sonic_yang_json`) and parsed
  strictly, which rejects unknown tables and fields, bad enums and ranges, and map or profile
  references that point nowhere.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re

from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_render_eos import validate_eos

__all__ = ["ValidatorUnavailable", "validate_eos", "validate_nvue", "validate_sonic", "sonic_yang_json"]

NVUESCHEMA = "nvueschema==0.1.0"
LIBYANG = "libyang==2.7.1 (with the Debian packages libyang2-dev and libpcre2-dev)"
_NVUE_MODELS = {}


class ValidatorUnavailable(RuntimeError):
    """A validator's package or schema files are missing."""


def _strict_nvue_model(release):
    if release in _NVUE_MODELS:
        return _NVUE_MODELS[release]
    try:
        from pydantic import BaseModel  # pylint: disable=import-outside-toplevel
        module = importlib.import_module("nvueschema.models.v%s" % release.replace(".", "_"))
    except ImportError as exc:
        raise ValidatorUnavailable("validating NVUE needs %s for Cumulus Linux %s (%s)"
                                   % (NVUESCHEMA, release, exc)) from None
    classes = [c for c in vars(module).values()
               if inspect.isclass(c) and issubclass(c, BaseModel) and c.__module__ == module.__name__]
    for cls in classes:
        cls.model_config["extra"] = "forbid"
    for cls in classes:
        cls.model_rebuild(force=True)
    _NVUE_MODELS[release] = module.NvueConfig
    return module.NvueConfig


def validate_nvue(body, release):
    """Violations of an NVUE ``set`` body against Cumulus Linux ``release``'s object model."""
    model = _strict_nvue_model(release)
    try:
        model.model_validate(body)
    except ValueError as exc:  # pydantic.ValidationError is a ValueError
        errors = getattr(exc, "errors", None)
        if not callable(errors):
            raise
        return ["%s: %s (got %r)" % (".".join(str(p) for p in err["loc"]), err["msg"], err.get("input"))
                for err in errors()]
    return []


# ----------------------------------------------------------------------------- SONiC YANG

_INTS = frozenset(range(2, 5)) | frozenset((16, 17, 18))   # libyang Type.UINT8..UINT32, INT8..INT32
_BOOL = 8
_LEAFREF = 14
_CONTEXTS = {}


def _libyang():
    try:
        import libyang  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise ValidatorUnavailable("validating SONiC config_db needs the Python package %s" % LIBYANG) from None
    return libyang


def _sonic_context(models_dir):
    if models_dir in _CONTEXTS:
        return _CONTEXTS[models_dir]
    if not models_dir or not os.path.isdir(models_dir):
        raise ValidatorUnavailable("validating SONiC config_db needs the SONiC YANG models: a directory with "
                                   "sonic-buildimage's src/sonic-yang-models/yang-models/*.yang and its rendered "
                                   "yang-templates (got %r)" % (models_dir,))
    libyang = _libyang()
    ctx = libyang.Context(models_dir)
    names = sorted(f[:-5] for f in os.listdir(models_dir) if f.endswith(".yang"))
    for name in names:
        ctx.load_module(name)
    tables = {}
    for name in names:
        for node in ctx.find_path("/%s:%s/*" % (name, name)) if _has_top(ctx, name) else ():
            tables[node.name()] = (name, node)
    _CONTEXTS[models_dir] = (ctx, tables)
    return ctx, tables


def _has_top(ctx, name):
    try:
        return next(iter(ctx.find_path("/%s:%s" % (name, name))), None) is not None
    except Exception:  # pylint: disable=broad-except
        return False


def _value(leaf, text):
    """A config_db string as the JSON value libyang wants for ``leaf``."""
    kind = leaf.type()
    base = kind.base()
    if base == _LEAFREF:
        base = kind.leafref_type().base()
    if type(leaf).__name__ == "SLeafList":
        return [_scalar(base, item) for item in str(text).split(",") if item != ""]
    return _scalar(base, text)


def _scalar(base, text):
    if base in _INTS and re.match(r"^-?[0-9]+$", str(text)):
        return int(text)
    if base == _BOOL and str(text).lower() in ("true", "false"):
        return str(text).lower() == "true"
    return str(text)


def sonic_yang_json(config_db, tables):
    """config_db (``{TABLE: {key: {field: value}}}``) as YANG JSON, and the tables no model knows."""
    out, unknown = {}, []
    for table, entries in sorted(config_db.items()):
        if table not in tables:
            unknown.append(table)
            continue
        module, container = tables[table]
        lists = [c for c in container.children() if type(c).__name__ == "SList"]
        groups = {c.name(): c for c in container.children() if type(c).__name__ == "SContainer"}
        body = {}
        for key, fields in sorted(entries.items()):
            if key in groups:
                # A table of fixed entries (DEVICE_METADATA|localhost): a container per key.
                children = {c.name(): c for c in groups[key].children()}
                body[key] = {field: _value(children[field], value) if field in children else value
                             for field, value in sorted((fields or {}).items())}
                continue
            parts = key.split("|")
            slist = next((c for c in lists if len(list(c.keys())) == len(parts)), None)
            if slist is None:
                unknown.append("%s|%s (no list of %s has %d keys)" % (table, key, table, len(parts)))
                continue
            children = {c.name(): c for c in slist.children()}
            entry = {name: _value(children[name], part)
                     for name, part in zip([k.name() for k in slist.keys()], parts)}
            inner = children.get(table)
            for field, value in sorted((fields or {}).items()):
                if inner is not None and type(inner).__name__ == "SList" and field not in children:
                    # A map table: {"0": "1"} -> a list of {key leaf, value leaf}.
                    leaves = list(inner.children())
                    entry.setdefault(table, []).append({leaves[0].name(): _value(leaves[0], field),
                                                        leaves[1].name(): _value(leaves[1], value)})
                elif field in children and type(children[field]).__name__ in ("SLeaf", "SLeafList"):
                    entry[field] = _value(children[field], value)
                else:
                    entry[field] = value   # libyang names the unknown field
            body.setdefault(slist.name(), []).append(entry)
        out.setdefault("%s:%s" % (module, module), {})[table] = body
    return out, unknown


def validate_sonic(config_db, models_dir):
    """Violations of a config_db (a whole one, or a fragment merged into the running config) against the
    SONiC YANG models in ``models_dir``."""
    ctx, tables = _sonic_context(models_dir)
    data, unknown = sonic_yang_json(config_db, tables)
    problems = ["%s: no SONiC YANG model has this table" % name for name in unknown]
    try:
        tree = ctx.parse_data_mem(json.dumps(data), "json", strict=True, validate_present=True)
    except Exception as exc:  # libyang.LibyangError; its message names the path
        return problems + [str(exc)]
    if tree is not None:
        tree.free()
    return problems
