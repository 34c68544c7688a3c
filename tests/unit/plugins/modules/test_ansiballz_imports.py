# -*- coding: utf-8 -*-
"""What a module carries to a host. A module runs there from an AnsiballZ payload, which holds only the
module_utils that the module imports statically (transitively):

- a module_utils imported by name at run time (importlib) would be missing on the host and fail there, while
  every in-process unit test passes: no module reaches one;
- the host modules (those whose action plugin derives their flat desired state on the controller, through
  ``plugin_utils.host_action``) must not carry the model, the planner or the derivation (module_utils
  ``model``, ``plan`` and ``desired``), and run their tools through ``host/runner.py``.

Modules whose action plugin never ships a module (``rail_plan``, ``tor_config``, ``lossless_report``) run on
the controller only; their module file is their documentation, and they are not walked here."""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
PREFIX = "ansible_collections.ainet.fabric.plugins.module_utils"
CONTROLLER_WINGS = ("model", "plan", "desired", "workload", "fleet", "cabling")


def _action_source(name):
    path = os.path.join(ROOT, "plugins", "action", name + ".py")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _ships_module(source):
    return source is None or "_execute_module" in source or "HostModuleAction" in source


NAMES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "plugins", "modules")) if f.endswith(".py"))
# Every module that runs on a host (no action plugin, or one that executes the module).
MODULES = [name for name in NAMES if _ships_module(_action_source(name))]
# The host modules: the model stays on the controller.
HOST_MODULES = [name for name in NAMES if "HostModuleAction" in (_action_source(name) or "")]


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
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in (
                "import_module", "__import__"):
            dynamic = True
    return names, dynamic


def closure(module):
    """Every module_utils that ``module``'s payload holds (dotted below module_utils)."""
    todo, seen = [os.path.join(ROOT, "plugins", "modules", module + ".py")], set()
    while todo:
        current = todo.pop()
        names, dynamic = imports(current)
        assert not dynamic, "%s (reached from module %s) imports by name at run time" % (current, module)
        for name in names - seen:
            path = module_path(name)
            assert path, "%s imports a module_utils that does not exist: %s" % (module, name)
            seen.add(name)
            todo.append(path)
    return seen


def test_the_sets_are_what_the_collection_has():
    assert set(HOST_MODULES) == {"rail_interfaces", "sriov", "rdma_netns", "pcie_acs", "roce_qos",
                                 "nic_link_type", "nic_firmware"}
    assert set(NAMES) - set(MODULES) == {"rail_plan", "tor_config", "lossless_report", "k8s_objects", "cabling_check", "link_test", "topology",
                                         "lossless_test", "subnet_manager"}


@pytest.mark.parametrize("module", MODULES)
def test_module_utils_reached_from_a_module_are_imported_statically(module):
    assert closure(module), module


@pytest.mark.parametrize("module", HOST_MODULES)
def test_a_host_module_carries_no_model_planner_or_derivation(module):
    reached = closure(module)
    assert not [n for n in sorted(reached) if n.split(".")[0] in CONTROLLER_WINGS], sorted(reached)
    assert "host.runner" in reached, "the host modules run their tools through host/runner.py"
