# -*- coding: utf-8 -*-
"""The plan lock: what the plan job publishes and what a limited or sliced host job checks."""

from __future__ import annotations

import copy
import json

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.plan import plan_lock
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan

CLUSTER = {
    "name": "lock",
    "fabrics": {
        "compute": {"rails": 2, "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16",
                                               "rail_prefix": 24, "node_prefix": 29}},
        "storage": {"rails": 1, "addressing": {"mode": "shared", "supernet": "fd00:70::/48", "rail_prefix": 64},
                    "qos": {"preset": "spiderpool"}},
    },
}
NICS = {"compute": ["ens6f0np0", "ens6f1np1"], "storage": ["ens8f0np0"]}
INVENTORY = {"gpu%02d" % n: {"node_id": n, "rail_interfaces": NICS} for n in (1, 2, 3, 5)}


def published():
    return plan_lock.plan_lock(rail_plan(CLUSTER, INVENTORY))


def check(nodes, cluster=None, lock=None):
    plan_lock.check_plan(lock or published(), rail_plan(cluster or CLUSTER, nodes), "rail_plan_lock.json")


def refused(nodes, cluster=None, lock=None):
    with pytest.raises(FabricModelError) as info:
        check(nodes, cluster, lock)
    return str(info.value)


def test_lock_names_every_rail_of_every_host_in_node_id_order():
    lock = published()
    assert list(lock["nodes"]) == ["gpu01", "gpu02", "gpu03", "gpu05"]
    assert lock["nodes"]["gpu02"] == {"node_id": 2, "rails": [
        "compute 1 ens6f0np0 172.17.0.10/29", "compute 2 ens6f1np1 172.17.1.10/29", "storage 1 ens8f0np0 fd00:70::3/64"]}
    assert lock["cluster"] == "lock" and len(lock["model"]) == 16


def test_file_is_json_with_one_host_per_line_and_loads_back():
    lock = published()
    text = plan_lock.lock_dump(lock)
    assert json.loads(text) == {"all": {"vars": {"rail_plan_lock": lock}}}
    host_lines = [line for line in text.splitlines() if line.startswith('    "gpu')]
    assert [json.loads("{%s}" % line.rstrip(",")) for line in host_lines] == [{h: e} for h, e in lock["nodes"].items()]
    assert plan_lock.lock_load(text, "f") == lock


def test_every_slice_and_every_limit_of_the_planned_inventory_agrees():
    hosts = sorted(INVENTORY)
    for count in (1, 2, 3):
        for number in range(count):
            check({h: INVENTORY[h] for h in hosts[number::count]})


def test_duplicate_node_id_in_a_slice_is_refused_naming_the_planned_owner():
    message = refused({"gpu04": {"node_id": 1, "rail_interfaces": NICS}})
    assert message.startswith("hostvars[gpu04].fabric_node_id: 1 is not in the published plan rail_plan_lock.json: "
                              "the plan gives node id 1 to gpu01")
    assert "Fix: publish the plan of the whole inventory first" in message


def test_renumbered_host_is_refused():
    message = refused({"gpu02": {"node_id": 5, "rail_interfaces": NICS}})
    assert "hostvars[gpu02].fabric_node_id: 5 disagrees with the published plan rail_plan_lock.json, which gives " \
           "gpu02 node id 2 and node id 5 to gpu05" in message


def test_changed_nic_is_refused_naming_the_rail():
    nics = copy.deepcopy(NICS)
    nics["compute"][1] = "ens9f0"
    message = refused({"gpu02": {"node_id": 2, "rail_interfaces": nics}})
    assert message.startswith("hostvars[gpu02].fabric_rail_interfaces: ['compute 2 ens9f0 172.17.1.10/29'] disagrees "
                              "with the published plan rail_plan_lock.json, which has ['compute 2 ens6f1np1 172.17.1.10/29']")


def test_changed_model_is_refused_even_when_the_addresses_stay():
    cluster = copy.deepcopy(CLUSTER)
    cluster["fabrics"]["compute"]["mtu"] = 4200
    message = refused({"gpu01": INVENTORY["gpu01"]}, cluster)
    assert message.startswith("fabric_cluster: 'model ") and "differs from the model the published plan" in message


def test_other_cluster_is_refused():
    cluster = dict(copy.deepcopy(CLUSTER), name="other")
    assert refused({"gpu01": INVENTORY["gpu01"]}, cluster).startswith(
        "fabric_cluster.name: 'other' is not the cluster of the published plan rail_plan_lock.json (lock)")


def test_added_host_is_refused_until_the_plan_is_published_again():
    nodes = {"gpu04": {"node_id": 4, "rail_interfaces": NICS}}
    assert "(a host added since)" in refused(nodes)
    lock = plan_lock.plan_lock(rail_plan(CLUSTER, dict(INVENTORY, **nodes)))
    check(nodes, lock=lock)


def test_many_problems_are_listed_up_to_a_limit_then_counted():
    big = {"n%03d" % n: n for n in range(1, 31)}
    lock = plan_lock.plan_lock(rail_plan(CLUSTER, {"other": 31}))
    lines = refused(big, lock=lock).splitlines()
    assert len(lines) == plan_lock.MAX_PROBLEMS + 1
    assert lines[-1].startswith("rail_plan_lock.json: '...' and 10 more hosts disagree with it. Fix:")


@pytest.mark.parametrize("data, message", [
    ("{", "f: None is not JSON"),
    ('{"all": {}}', "f: None does not set all.vars.rail_plan_lock"),
    ({"version": 2}, "f.version: 2 is not a plan lock of version 1"),
    ([], "f.version: [] is not a plan lock of version 1"),
    ({"version": 1, "cluster": "x", "model": "m"}, "f.nodes: None is missing or not a dict"),
    ({"version": 1, "cluster": "x", "model": "m", "nodes": {"a": {"node_id": "1", "rails": []}}},
     "f.nodes.a: {'node_id': '1', 'rails': []} is not {node_id: <int>"),
    ({"version": 1, "cluster": "x", "model": "m", "nodes": {"a": {"node_id": True, "rails": []}}}, "f.nodes.a:"),
])
def test_malformed_lock_is_refused_with_its_field(data, message):
    with pytest.raises(FabricModelError) as info:
        plan_lock.lock_load(data, "f")
    assert str(info.value).startswith(message)


def test_changes_name_added_removed_and_changed_hosts():
    before = published()
    after = plan_lock.plan_lock(rail_plan(CLUSTER, {"gpu01": 1, "gpu02": 4, "gpu09": 9}))
    assert plan_lock.lock_changes(before, after) == {
        "added": ["gpu09"], "removed": ["gpu03", "gpu05"], "changed": ["gpu01", "gpu02"], "model": False}
    assert plan_lock.lock_changes(None, after)["model"] is True


def test_short_diff_shows_only_changed_lines_and_is_cut():
    before = plan_lock.lock_dump(published())
    after = before.replace("172.17.0.10/29", "172.17.0.99/27")
    diff = plan_lock.short_diff(before, after, "p").splitlines()
    assert diff[:3] == ["--- p", "+++ p", diff[2]] and diff[2].startswith("@@")
    assert len(diff) == 5 and diff[3].startswith('-    "gpu02"') and diff[4].startswith('+    "gpu02"')
    assert plan_lock.short_diff(before, before, "p") == ""
    cut = plan_lock.short_diff("", "\n".join(str(i) for i in range(500)), "p", max_lines=10).splitlines()
    assert len(cut) == 11 and cut[-1] == "... 493 more diff lines (see the file itself)"
