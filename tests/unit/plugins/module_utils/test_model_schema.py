# -*- coding: utf-8 -*-
"""The schema is the one description of the model: the docs table and the roles' argument specs
must be what it generates, and a model with several problems reports all of them."""

from __future__ import annotations

import os
import sys

import pytest
import yaml

from ansible_collections.ainet.fabric.plugins.module_utils.model import model_schema
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "schema"))
import regen  # noqa: E402  pylint: disable=wrong-import-position


def test_docs_key_table_is_generated_from_the_schema():
    with open(regen.DOC) as handle:
        text = handle.read()
    assert regen.BEGIN in text, "docs/cluster-model.md lacks the generated table's markers"
    assert regen.docs_text(text) == text, "run tests/schema/regen.py"


@pytest.mark.parametrize("role", regen.ROLES)
def test_role_argument_specs_are_generated_from_the_schema(role):
    with open(regen.argspec_path(role)) as handle:
        data = yaml.safe_load(handle)
    entry = data["argument_specs"]["main"]["options"]["fabric_cluster"]
    assert entry.get("options") == model_schema.argspec(), "run tests/schema/regen.py"
    assert entry["type"] == "dict" and entry["required"] is True


def test_every_problem_of_a_model_is_reported_at_once():
    addressing = {"mode": "mesh", "supernet": "10.0.0.0", "rail_prefix": 24, "colour": "red"}
    raw = {"name": "x", "rails": "eight", "mtu": True, "addressing": addressing,
           "routing": {"table_base": 0}, "tors": [{"rails": [1]}], "management_networks": ["10.1.0.0/16", 7]}
    with pytest.raises(FabricModelError) as err:
        load_cluster(raw)
    assert str(err.value).splitlines() == [
        "fabric_cluster.management_networks[1]: 7 is not a network in CIDR notation. Fix: write it as "
        "address/prefix, e.g. 172.17.0.0/16 or fd00:17::/48",
        "fabric_cluster.rails: 'eight' is not an integer. Fix: give a whole number",
        "fabric_cluster.mtu: True is a boolean, not an integer. Fix: give a whole number",
        "fabric_cluster.addressing.colour: 'red' is not a known key. Fix: use one of: gateway_offset, host_offset, "
        "mode, node_prefix, rail_prefix, supernet",
        "fabric_cluster.addressing.mode: 'mesh' is not one of the choices. Fix: use one of: shared, exclusive, p2p, "
        "infiniband",
        "fabric_cluster.addressing.supernet: '10.0.0.0' is not a network in CIDR notation. Fix: write it as "
        "address/prefix, e.g. 172.17.0.0/16 or fd00:17::/48",
        "fabric_cluster.routing.table_base: 0 is below the minimum 1. Fix: use 1..2147483647",
        "fabric_cluster.tors[0].name: None is missing. Fix: set name: switch name (unique in the cluster): letters, "
        "digits, `-`, `_`, `.`",
    ]


def test_fabric_keys_are_checked_inside_each_fabric():
    raw = {"name": "x", "fabrics": {"compute": {"rails": 2}, "storage": {"rails": 1, "addressing": {
        "mode": "shared", "supernet": "10.70.0.0/16", "rail_prefix": 24}, "mtux": 1}}}
    with pytest.raises(FabricModelError) as err:
        load_cluster(raw)
    assert str(err.value).splitlines() == [
        "fabric_cluster.fabrics.compute.addressing: None is missing. Fix: set addressing: how the fabric's addresses "
        "are planned",
        "fabric_cluster.fabrics.storage.mtux: 1 is not a known key. Fix: use one of: addressing, cni, description, mtu, "
        "qos, rails, routing, sriov, tors"]
