# -*- coding: utf-8 -*-
"""plan/scaffold.py: what ainet.fabric.new_cluster writes (model, node ids, NICs), checked by the planner."""

from __future__ import annotations

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.plan.scaffold import (
    existing_node_ids,
    new_cluster,
    number_nodes,
)

NICS = ["ens6f0np0", "ens6f1np1"]


def _inventory(**ids):
    return {"all": {"children": {"gpu_nodes": {"hosts": {h: {"fabric_node_id": i} for h, i in ids.items()}}}}}


def test_fresh_cluster_numbers_nodes_in_order_and_plans():
    result = new_cluster("prod", "gpu01,gpu02=10.0.0.2,gpu03", ",".join(NICS), tor_platform="cumulus")
    assert [(n["name"], n["node_id"], n["ansible_host"]) for n in result["nodes"]] == [
        ("gpu01", 1, None), ("gpu02", 2, "10.0.0.2"), ("gpu03", 3, None)]
    cluster = result["cluster"]
    assert cluster["name"] == "prod" and cluster["rails"] == 2 and result["rail_interfaces"] == NICS
    assert [t["name"] for t in cluster["tors"]] == ["prod-rail1-tor", "prod-rail2-tor"]
    assert [t["rails"] for t in cluster["tors"]] == [[1], [2]]
    # what the role writes is what the plan job accepts
    plan = rail_plan(cluster, {n["name"]: {"node_id": n["node_id"], "rail_interfaces": NICS} for n in result["nodes"]})
    assert sorted(plan["nodes"]) == ["gpu01", "gpu02", "gpu03"]


def test_without_a_platform_no_tor_is_listed():
    assert "tors" not in new_cluster("prod", ["gpu01"], NICS)["cluster"]


def test_existing_hosts_keep_their_ids_and_new_ones_take_the_next_free():
    existing = _inventory(gpu02=5, gpu01=1)
    result = new_cluster("prod", ["gpu01", "gpu02", "gpu05", "gpu06"], NICS, existing=existing)
    assert {n["name"]: n["node_id"] for n in result["nodes"]} == {"gpu01": 1, "gpu02": 5, "gpu05": 6, "gpu06": 7}


def test_number_nodes_skips_taken_ids_and_ignores_order():
    assert number_nodes(["b", "a"], {}) == {"b": 1, "a": 2}
    assert number_nodes(["x", "a"], {"a": 1, "b": 2}) == {"x": 3, "a": 1}


def test_existing_node_ids_reads_only_the_node_group():
    assert existing_node_ids(None) == {}
    assert existing_node_ids({"all": {"hosts": {"x": {"fabric_node_id": 1}}}}) == {}
    assert existing_node_ids(_inventory(gpu01=3)) == {"gpu01": 3}
    assert existing_node_ids({"all": {"children": {"gpu_nodes": {"hosts": {"gpu01": None}}}}}) == {}


@pytest.mark.parametrize("args, field, value", [
    (("prod", "gpu01,gpu01", NICS), "new_cluster_hosts[1]", "gpu01"),
    (("prod", "gpu01,gpu 2", NICS), "new_cluster_hosts[1]", "gpu 2"),
    (("prod", "gpu01=10.0.0.1 x", NICS), "new_cluster_hosts[0]", "gpu01=10.0.0.1 x"),
    (("prod", [], NICS), "new_cluster_hosts", []),
    (("prod", "gpu01", []), "new_cluster_rail_interfaces", []),
    (("prod", "gpu01", ["ens6f0np0", "ens6f0np0"]), "new_cluster_rail_interfaces[1]", "ens6f0np0"),
    (("prod", "gpu01", ["a/b"]), "new_cluster_rail_interfaces[0]", "a/b"),
    (("bad name", "gpu01", NICS), "new_cluster_name (fabric_cluster.name)", "bad name"),
])
def test_bad_input_names_the_role_variable(args, field, value):
    with pytest.raises(FabricModelError) as err:
        new_cluster(*args)
    assert err.value.field == field and err.value.value == value and err.value.fix, str(err.value)


def test_more_nodes_than_the_addressing_holds_is_refused_before_writing():
    # exclusive /24 rails of /27 nodes: 8 nodes; the ninth is refused (control: eight pass)
    assert len(new_cluster("prod", ["n%d" % i for i in range(8)], NICS)["nodes"]) == 8
    with pytest.raises(FabricModelError) as err:
        new_cluster("prod", ["n%d" % i for i in range(9)], NICS)
    assert "fabric_node_id" in err.value.field and err.value.value == 9, str(err.value)


def test_bad_addressing_names_the_role_variable():
    with pytest.raises(FabricModelError) as err:
        new_cluster("prod", "gpu01", NICS, addressing={"mode": "exclusive", "supernet": "10.0.0.0/16",
                                                       "rail_prefix": 24, "node_prefix": 20})
    assert err.value.field.startswith("new_cluster_addressing (fabric_cluster.addressing"), str(err.value)


def test_the_scaffolds_constructed_groups_are_the_examples():
    """rails.yml has one source of truth for both layouts: the role copies the example inventory's file."""
    import os
    import yaml
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
    with open(os.path.join(root, "roles", "new_cluster", "tasks", "main.yml")) as handle:
        tasks = yaml.safe_load(handle)
    copies = [t["ansible.builtin.copy"] for t in tasks if "ansible.builtin.copy" in t
              and str(t["ansible.builtin.copy"].get("dest", "")).endswith("/rails.yml")]
    assert [c["src"] for c in copies] == ["{{ role_path }}/../../inventories/lab/rails.yml"]
    assert os.path.isfile(os.path.join(root, "roles", "new_cluster", "..", "..", "inventories", "lab", "rails.yml"))
    assert not os.path.exists(os.path.join(root, "roles", "new_cluster", "files", "rails.yml"))
