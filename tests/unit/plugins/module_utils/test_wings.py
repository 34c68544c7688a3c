# -*- coding: utf-8 -*-
"""The wings of module_utils (docs/architecture.md): every import between them goes down the layers, never
up, and no import cycle exists between modules. Read from the source (ast), so a new file is covered at once."""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
MU = os.path.join(ROOT, "plugins", "module_utils")
PREFIX = "ansible_collections.ainet.fabric.plugins.module_utils"
# A wing may import from wings of a lower layer and from its own wing, nothing else.
# ``desired`` (the model -> one host's flat desired state, run on the controller by the host modules'
# action plugins) sits beside ``tor``: both read the model and the plan, neither is read by a host.
# ``workload`` (Kubernetes objects, NCCL), ``cabling`` (LLDP against the plan) and ``fleet`` (the link tests'
# schedule and verdict) read the plan (and the RDMA facts) beside them.
LAYERS = {"common": 0, "model": 1, "plan": 2, "rdma": 3, "qos": 3, "host": 4, "desired": 5, "tor": 5, "workload": 5,
          "cabling": 5, "fleet": 5, "maintenance": 5, "ib": 6}
# ``ib`` (the InfiniBand subnet manager's configuration) names its members by the port GUIDs the subnet's own read
# (``cabling.ib_parse``) spells: above ``cabling``.


def modules():
    out = {}
    for wing in sorted(os.listdir(MU)):
        folder = os.path.join(MU, wing)
        if os.path.isdir(folder) and not wing.startswith("__"):
            for name in sorted(os.listdir(folder)):
                if name.endswith(".py") and name != "__init__.py":
                    out["%s.%s" % (wing, name[:-3])] = os.path.join(folder, name)
    return out


MODULES = modules()


def edges(path):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX + "."):
            base = node.module[len(PREFIX) + 1:]
            if base in MODULES:
                found.add(base)
            else:
                found.update("%s.%s" % (base, alias.name) for alias in node.names)
    return found


def test_every_module_utils_file_is_in_a_wing():
    loose = [n for n in os.listdir(MU) if n.endswith(".py") and n != "__init__.py"]
    assert not loose, "module_utils files outside a wing: %s" % loose
    wings = set(n for n in os.listdir(MU) if os.path.isdir(os.path.join(MU, n)) and not n.startswith("__"))
    assert wings == set(LAYERS), "wings on disk %s, layers known %s" % (sorted(wings), sorted(LAYERS))


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_go_down_the_layers(name):
    wing = name.split(".")[0]
    for target in sorted(edges(MODULES[name])):
        assert target in MODULES, "%s imports %s, which is not a module_utils module" % (name, target)
        other = target.split(".")[0]
        assert other == wing or LAYERS[other] < LAYERS[wing], \
            "%s (layer %d) imports %s (layer %d): an upward or sideways import" % (
                name, LAYERS[wing], target, LAYERS[other])


def test_no_import_cycles():
    graph = dict((name, edges(path)) for name, path in MODULES.items())
    state = {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                pytest.fail("import cycle: %s" % " -> ".join(stack[stack.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
