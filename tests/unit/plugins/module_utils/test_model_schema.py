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
    assert regen.argspec_data(yaml.safe_load(yaml.safe_dump(data))) == data, "run tests/schema/regen.py"
    main = data["argument_specs"]["main"]
    # the model is described (ansible-doc shows its keys) at the end of the description, never an option: ansible-core
    # would render and copy it whole before the role's first task, on every host of a play; its keys are the
    # collection's schema's to check (one line), never ansible-core's
    assert main["description"][-len(model_schema.rows()) - 1:] == model_schema.role_description()
    assert sum(line.startswith("C(") for line in model_schema.role_description()) == len(model_schema.rows())


def test_every_role_that_reads_the_model_is_generated_and_no_spec_names_a_variable_of_the_fleets_size():
    """A role's argument spec never names the model, the published lock or the plan: ansible-core renders each option
    whole and deep-copies all of them before the role's first task, on every host of the play (1.4 s of CPU per host
    at 16,384 nodes x 8 rails for the model alone); the roles' actions read them from the task's variables and check
    them in one line (docs/performance.md, "The rules")."""
    roles = sorted(os.listdir(os.path.join(ROOT, "roles")))
    reading = set()
    for role in roles:
        path = os.path.join(ROOT, "roles", role)
        text = ""
        for directory, _dirs, files in os.walk(os.path.join(path, "tasks")):
            for name in files:
                with open(os.path.join(directory, name)) as handle:
                    text += handle.read()
        if "fabric_cluster" in text:
            reading.add(role)
        with open(os.path.join(path, "meta", "argument_specs.yml")) as handle:
            specs = yaml.safe_load(handle)["argument_specs"]
        for entry, spec in specs.items():
            named = set(spec.get("options") or {}) & {"fabric_cluster", "rail_plan_lock", "rail_plan_result"}
            assert not named, (role, entry, named)
    assert reading <= set(regen.ROLES), sorted(reading - set(regen.ROLES))
    assert len(reading) > 10  # not vacuous: most roles read the model


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
        "fabric_cluster.fabrics.storage.mtux: 1 is not a known key. Fix: use one of: addressing, cni, description, "
        "infiniband, kubernetes, mtu, qos, rails, routing, sriov, tors"]


def test_normalize_returns_the_values_the_loaders_read():
    raw = {"name": "x", "rails": " 2 ", "mtu": "9000", "management_networks": "10.1.0.0/16",
           "addressing": {"mode": "shared", "supernet": "10.60.0.0/16", "rail_prefix": "+24", "gateway_offset": "-1"},
           "routing": {"aggregate_route": "Yes"}, "tors": [{"name": "t", "rails": "1", "nodes": ["1-4", "7"]}],
           "qos": {"cnp_strict": "0", "pfc_priorities": ["3"], "ets_weights": {"0": "40", 3: 60}},
           "pcie_acs": {"disable": "listed", "bridges": ["3A:00.0"]}, "description": None}
    tree, errors = model_schema.normalize(raw)
    assert errors == []
    assert (tree["rails"], tree["mtu"], tree["routing"]["aggregate_route"]) == (2, 9000, True)
    assert [str(n) for n in tree["management_networks"]] == ["10.1.0.0/16"]
    assert (tree["addressing"]["rail_prefix"], tree["addressing"]["gateway_offset"]) == (24, -1)
    assert tree["tors"] == [{"name": "t", "rails": [1], "nodes": [(1, 4), (7, 7)]}]
    assert tree["qos"] == {"cnp_strict": False, "pfc_priorities": [3], "ets_weights": {0: 40, 3: 60}}
    assert tree["pcie_acs"] == {"disable": "listed", "bridges": ["0000:3a:00.0"]}
    assert "description" in tree and tree["description"] is None  # set to null: kept, as not set


@pytest.mark.parametrize("raw,line", [
    ({"name": "a b"}, "fabric_cluster.name: 'a b' is not a valid cluster name. Fix: use 1-63 letters, digits, '-', "
                      "'_' or '.', starting with a letter or digit"),
    ({"qos": {"pfc_priorities": [3, "3"]}}, "fabric_cluster.qos.pfc_priorities[1]: '3' is listed twice. Fix: list "
                                            "each value once"),
    ({"qos": {"ecn_queues": [8]}}, "fabric_cluster.qos.ecn_queues[0]: 8 is above the maximum 7. Fix: use 0..7"),
    ({"qos": {"ets_weights": {9: 100}}}, "fabric_cluster.qos.ets_weights: 9 is above the maximum 7. Fix: use 0..7"),
    ({"qos": {"ets_weights": {0: 0}}}, "fabric_cluster.qos.ets_weights.0: 0 is below the minimum 1. Fix: use 1..100"),
    ({"qos": {"preset": "arista"}}, "fabric_cluster.qos.preset: 'arista' is not a known preset. Fix: use one of: "
                                    "nvidia, sonic, spiderpool, custom, none"),
    ({"tors": []}, "fabric_cluster.tors: [] is empty. Fix: list the ToRs, or remove the key to get one ToR per rail"),
    ({"tors": [{"name": "t", "rails": "x"}]}, "fabric_cluster.tors[0].rails: 'x' is not an integer. Fix: give a "
                                              "whole number"),
    ({"tors": [{"name": "t", "rails": [1], "nodes": "1-x"}]}, "fabric_cluster.tors[0].nodes: '1-x' is not an integer. "
                                                              "Fix: write a node id range as FIRST-LAST, e.g. 1-32"),
    ({"pcie_acs": {"bridges": [3]}}, "fabric_cluster.pcie_acs.bridges[0]: 3 is not a PCI address. Fix: write it as "
                                     "0000:3a:00.0"),
    ({"addressing": {"mode": "shared", "supernet": "127.0.0.0/16", "rail_prefix": 24}},
     "fabric_cluster.addressing.supernet: '127.0.0.0/16' overlaps 127.0.0.0/8 (loopback), which can never carry a "
     "fabric. Fix: use a private unicast range, e.g. 172.17.0.0/16 or fd00:17::/48"),
    ({"fabrics": {}}, "fabric_cluster.fabrics: {} is empty. Fix: e.g. fabrics: {compute: {rails: 8, addressing: ...}, "
                      "storage: {rails: 2, ...}}"),
])
def test_single_key_rules_are_the_schemas(raw, line):
    base = {"name": "x", "rails": 1, "addressing": {"mode": "shared", "supernet": "10.60.0.0/16", "rail_prefix": 24}}
    base.update(raw)
    assert [str(e) for e in model_schema.check(base)] == [line]


def test_a_fragment_on_its_own_says_out_of_range():
    errors = model_schema.normalize({"roce_dscp": 64}, model_schema.QOS, "q", part=True)[1]
    assert [str(e) for e in errors] == ["q.roce_dscp: 64 is out of range. Fix: use 0..63"]
    with pytest.raises(FabricModelError, match=r"^q\.vfs: '128' is out of range. Fix: use 1\.\.127$"):
        model_schema.normalized({"vfs": "128"}, model_schema.SRIOV, "q", part=True)


def test_to_int_is_the_one_int_converter_for_values_outside_the_model():
    assert model_schema.to_int(" 7 ", "f", 1, 8) == 7
    for bad, problem in ((True, "is a boolean, not an integer"), ("7.0", "is not an integer"),
                         (0, "is below the minimum 1"), (9, "is above the maximum 8")):
        with pytest.raises(FabricModelError) as err:
            model_schema.to_int(bad, "f", 1, 8)
        assert err.value.problem == problem
