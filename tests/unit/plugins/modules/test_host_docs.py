# -*- coding: utf-8 -*-
"""The RDMA host modules' documentation: the shared options come from the doc fragment ainet.fabric.host, and the
return values they share (which ansible-core cannot share through a fragment) have the same text everywhere."""

from __future__ import annotations

import ast
import os

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
MODULES = ("sriov", "rdma_netns", "pcie_acs", "roce_qos")
# host modules that take part of the shared options: the fragment each must extend instead of writing them out
PARTIAL = {"nic_link_type": "ainet.fabric.host.model", "gpu_host": "ainet.fabric.host.roots",
           "doca_ofed": "ainet.fabric.host.roots"}
SHARED_RETURNS = ("commands", "reboot_pending", "unit")


def docs(name):
    with open(os.path.join(ROOT, "plugins", "modules", name + ".py"), encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    return dict((node.targets[0].id, yaml.safe_load(node.value.value)) for node in tree.body
                if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) in ("DOCUMENTATION", "RETURN"))


@pytest.mark.parametrize("name", MODULES)
def test_the_shared_options_come_from_the_fragment(name):
    doc = docs(name)["DOCUMENTATION"]
    assert "ainet.fabric.host" in doc["extends_documentation_fragment"]
    assert not set(doc["options"]) & {"cluster", "config_root", "sysfs_root", "persist", "foreign_units"}
    assert os.path.exists(os.path.join(ROOT, "plugins", "action", name + ".py")), "the action plugin fills the options"


@pytest.mark.parametrize("name", sorted(PARTIAL))
def test_the_other_host_modules_take_the_shared_options_from_a_fragment_too(name):
    doc = docs(name)["DOCUMENTATION"]
    assert PARTIAL[name] in doc["extends_documentation_fragment"]
    assert not set(doc["options"]) & {"cluster", "config_root", "sysfs_root", "persist", "foreign_units"}


@pytest.mark.parametrize("key", SHARED_RETURNS)
def test_the_shared_return_values_read_the_same_in_every_module(key):
    texts = dict((name, docs(name)["RETURN"].get(key)) for name in MODULES + tuple(sorted(PARTIAL)))
    given = [text for text in texts.values() if text is not None]
    assert len(given) >= 2 and all(text == given[0] for text in given), texts


def test_an_option_reads_the_same_in_every_host_fragment():
    from ansible_collections.ainet.fabric.plugins.doc_fragments.host import ModuleDocFragment
    texts = {}
    for name in ("DOCUMENTATION", "MODEL", "ROOTS"):
        for option, doc in yaml.safe_load(getattr(ModuleDocFragment, name))["options"].items():
            texts.setdefault(option, []).append(doc)
    assert set(texts) == {"cluster", "config_root", "sysfs_root", "persist"}
    for option, docs_of in texts.items():
        assert all(doc == docs_of[0] for doc in docs_of), option
