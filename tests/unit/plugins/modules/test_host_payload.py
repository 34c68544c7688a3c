# -*- coding: utf-8 -*-
"""What the RDMA host modules carry to a host: their AnsiballZ payload holds the module_utils they import
statically (transitively). With the model validated and the desired state derived on the controller (the action
plugins, module_utils/desired), none of them may reach module_utils/model, plan or desired, and none may import
our module_utils by name at run time (it would be missing from the payload)."""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
PREFIX = "ansible_collections.ainet.fabric.plugins.module_utils"
MODULES = ("sriov", "rdma_netns", "pcie_acs", "roce_qos")
CONTROLLER_WINGS = ("model", "plan", "desired")


def utils_path(name):
    path = os.path.join(ROOT, "plugins", "module_utils", *name.split(".")) + ".py"
    return path if os.path.isfile(path) else None


def static_imports(path):
    """(module_utils names imported, dotted below module_utils; whether anything is imported by name at run time)."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    names, dynamic = set(), False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX + "."):
            base = node.module[len(PREFIX) + 1:]
            names.update([base] if utils_path(base) else ["%s.%s" % (base, alias.name) for alias in node.names])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in (
                "import_module", "__import__"):
            dynamic = True
    return names, dynamic


def closure(module):
    todo, seen = [os.path.join(ROOT, "plugins", "modules", module + ".py")], set()
    while todo:
        names, dynamic = static_imports(todo.pop())
        assert not dynamic, "%s imports by name at run time" % module
        for name in names - seen:
            assert utils_path(name), "%s reaches a module_utils that does not exist: %s" % (module, name)
            seen.add(name)
            todo.append(utils_path(name))
    return seen


@pytest.mark.parametrize("module", MODULES)
def test_the_payload_holds_no_model_planner_or_derivation(module):
    reached = closure(module)
    assert reached and not [n for n in sorted(reached) if n.split(".")[0] in CONTROLLER_WINGS], sorted(reached)
    assert "host.runner" in reached, "the host modules run their tools through host/runner.py"
