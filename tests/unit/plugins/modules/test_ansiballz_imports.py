# -*- coding: utf-8 -*-
"""Every module runs on a host from an AnsiballZ payload, which holds only the module_utils that the module
imports statically (transitively). A module_utils reached from a module that imports another collection
module_utils by name at run time (importlib) would be missing on the host and fail there, while every
in-process unit test passes. This walks the static imports of each module and refuses dynamic ones."""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
PREFIX = "ansible_collections.ainet.fabric.plugins.module_utils"
# Modules with an action plugin of the same name run on the controller (the module file is their documentation).
ACTIONS = set(f[:-3] for f in os.listdir(os.path.join(ROOT, "plugins", "action")) if f.endswith(".py"))
MODULES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "plugins", "modules"))
                 if f.endswith(".py") and f[:-3] not in ACTIONS)


def module_path(name):
    """The file of module_utils ``name`` (dotted below module_utils), or None."""
    path = os.path.join(ROOT, "plugins", "module_utils", *name.split("."))
    return path + ".py" if os.path.isfile(path + ".py") else None


def imports(path):
    """(static module_utils names, dotted below module_utils, and whether it uses importlib) of one file."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    names, dynamic = set(), False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and \
                (node.module == PREFIX or node.module.startswith(PREFIX + ".")):
            base = node.module[len(PREFIX) + 1:]
            if module_path(base):  # from ...module_utils.wing.name import function
                names.add(base)
                continue
            for alias in node.names:  # from ...module_utils.wing import name
                names.add(("%s.%s" % (base, alias.name)).lstrip("."))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("import_module", "__import__"):
            # importlib.import_module("ansible_collections.ainet.fabric..." + name) and the like
            dynamic |= any(isinstance(n, ast.Constant) and isinstance(n.value, str) and
                           n.value.startswith("ansible_collections") for n in ast.walk(node))
    return names, dynamic


@pytest.mark.parametrize("module", MODULES)
def test_module_utils_reached_from_a_module_are_imported_statically(module):
    todo, seen = [os.path.join(ROOT, "plugins", "modules", module + ".py")], set()
    while todo:
        names, dynamic = imports(todo.pop())
        for name in names - seen:
            path = module_path(name)
            assert path, "%s imports a module_utils that does not exist: %s" % (module, name)
            seen.add(name)
            todo.append(path)
            assert not imports(path)[1], "%s (reached from module %s) imports by name at run time" % (name, module)
    assert seen, module
