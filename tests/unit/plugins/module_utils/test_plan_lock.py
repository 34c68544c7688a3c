# -*- coding: utf-8 -*-
"""The plan lock: what the plan job publishes and what a limited or sliced host job checks; its file (format 2, and
format 1 still read) as Ansible's own loaders read it."""

from __future__ import annotations

import copy
import json
import os

import pytest
import yaml
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.vars.manager import VariableManager

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
DATA = os.path.join(os.path.dirname(__file__), "data", "plan_lock")
NICS = {"compute": ["ens6f0np0", "ens6f1np1"], "storage": ["ens8f0np0"]}
INVENTORY = {"gpu%02d" % n: {"node_id": n, "rail_interfaces": NICS} for n in (1, 2, 3, 5)}


def published():
    return plan_lock.plan_lock(rail_plan(CLUSTER, INVENTORY))


def check(nodes, cluster=None, lock=None):
    plan_lock.check_plan(lock or published(), rail_plan(cluster or CLUSTER, nodes), "rail_plan_lock.yml")


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


def test_file_is_yaml_of_four_scalars_with_one_host_per_line_and_loads_back():
    lock = published()
    text = plan_lock.lock_dump(lock)
    assert yaml.safe_load(text) == {"all": {"vars": {"rail_plan_lock": plan_lock.lock_variable(lock)}}}
    variable = plan_lock.lock_variable(lock)
    assert sorted(variable) == ["cluster", "model", "nodes", "version"] and variable["version"] == 2
    assert variable["nodes"].splitlines() == [
        "gpu01 1: compute 1 ens6f0np0 172.17.0.2/29, compute 2 ens6f1np1 172.17.1.2/29, storage 1 ens8f0np0 fd00:70::2/64",
        "gpu02 2: compute 1 ens6f0np0 172.17.0.10/29, compute 2 ens6f1np1 172.17.1.10/29, storage 1 ens8f0np0 fd00:70::3/64",
        "gpu03 3: compute 1 ens6f0np0 172.17.0.18/29, compute 2 ens6f1np1 172.17.1.18/29, storage 1 ens8f0np0 fd00:70::4/64",
        "gpu05 5: compute 1 ens6f0np0 172.17.0.34/29, compute 2 ens6f1np1 172.17.1.34/29, storage 1 ens8f0np0 fd00:70::6/64"]
    # each host's line is a line of the file (what a diff of it shows)
    assert "        gpu02 2: compute 1 ens6f0np0 172.17.0.10/29," in text.splitlines()[text.splitlines().index(
        "      nodes: |") + 2]
    assert plan_lock.lock_load(text, "f") == lock
    assert plan_lock.lock_load(variable, "f") == lock


def test_ansible_reads_the_file_as_an_inventory_source_setting_the_variable_of_every_host(tmp_path):
    """ansible-core's own inventory loading (the auto and yaml plugins, as ansible-playbook -i <dir>) sets
    rail_plan_lock from the file: the four scalars, which the lock reads back as the plan's lock."""
    lock = published()
    (tmp_path / "hosts.yml").write_text("all:\n  children:\n    gpu_nodes:\n      hosts:\n        gpu01:\n        gpu05:\n")
    (tmp_path / plan_lock.LOCK_FILE).write_text(plan_lock.lock_dump(lock))
    loader = DataLoader()
    inventory = InventoryManager(loader=loader, sources=[str(tmp_path)])
    variables = VariableManager(loader=loader, inventory=inventory).get_vars(host=inventory.get_host("gpu05"))
    assert dict(variables["rail_plan_lock"]) == plan_lock.lock_variable(lock)
    assert plan_lock.lock_load(variables["rail_plan_lock"], plan_lock.LOCK_VAR) == lock


def test_a_lock_of_format_1_is_still_read():
    """The lab's lock as the plan job wrote it before format 2 (data/plan_lock/ORIGIN.md), as a file's text and as the
    variable (an AWX inventory synced from it, or an artifact of that plan job)."""
    with open(os.path.join(DATA, "rail_plan_lock.v1.json"), encoding="utf-8") as handle:
        text = handle.read()
    lock = plan_lock.lock_load(text, "f")
    assert lock["version"] == 1 and lock["cluster"] == "lab" and list(lock["nodes"]) == ["gpu01", "gpu02", "gpu03", "gpu04"]
    assert lock["nodes"]["gpu03"] == {"node_id": 3, "rails": [
        "default 1 ens6f0np0 172.17.0.66/27", "default 2 ens6f1np1 172.17.1.66/27", "default 3 ens7f0np0 172.17.2.66/27",
        "default 4 ens7f1np1 172.17.3.66/27"]}
    assert plan_lock.lock_load(json.loads(text)["all"]["vars"]["rail_plan_lock"], "f") == lock
    # written again, it is format 2 with the same hosts
    assert plan_lock.lock_load(plan_lock.lock_dump(lock), "f")["nodes"] == lock["nodes"]
    assert plan_lock.legacy_lock(text, "old") == lock


def edited(text, old, new):
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize("old, new, problem", [
    ("gpu02 2: compute", "gpu02  2: compute", "is not '<host> <node id>: <fabric> <rail> <nic> <address>, ...'"),
    ("gpu02 2: compute", "gpu02 2 compute", "is not '<host>"),
    ("gpu02 2: compute", "gpu02 02: compute", "is not '<host>"),
    ("gpu02 2: compute", "gpu02 x: compute", "is not '<host>"),
    ("ens6f0np0 172.17.0.10/29,", "172.17.0.10/29,", "is not '<host>"),
    ("fd00:70::3/64\n", "fd00:70::3/64 \n", "is not '<host>"),
    ("fd00:70::3/64\n", "fd00:70::3/64,\n", "is not '<host>"),
    ("172.17.0.10/29, compute 2", "172.17.0.10/29,compute 2", "is not '<host>"),
    ("gpu02 2: compute", "gpu01 2: compute", "names host gpu01 a second time"),
    ("gpu02 2: compute", "gpu02 1: compute", "gives node id 1 to gpu01 as well"),
])
def test_a_hand_edited_line_is_refused_naming_its_line_in_the_file(old, new, problem):
    text = plan_lock.lock_dump(published())
    line = text.splitlines().index([x for x in text.splitlines() if x.startswith("        gpu02 ")][0]) + 1
    bad = edited(text, old, new)
    with pytest.raises(FabricModelError) as info:
        plan_lock.lock_load(bad, "inv/rail_plan_lock.yml")
    message = str(info.value)
    assert message.startswith("inv/rail_plan_lock.yml line %d: %r %s" % (line, bad.splitlines()[line - 1][8:], problem))
    assert message.endswith("Fix: write it with the plan job (ansible-playbook ainet.fabric.plan), do not edit it by hand")
    assert "\n" not in message
    # the variable (the inventory's copy) is refused naming the line within nodes
    with pytest.raises(FabricModelError) as info:
        plan_lock.lock_load(yaml.safe_load(bad)["all"]["vars"]["rail_plan_lock"], "rail_plan_lock")
    assert str(info.value).startswith("rail_plan_lock.nodes line 2: ")
    plan_lock.lock_load(text, "inv/rail_plan_lock.yml")  # the control: the file as written


def test_every_slice_and_every_limit_of_the_planned_inventory_agrees():
    hosts = sorted(INVENTORY)
    for count in (1, 2, 3):
        for number in range(count):
            check({h: INVENTORY[h] for h in hosts[number::count]})


def test_duplicate_node_id_in_a_slice_is_refused_naming_the_planned_owner():
    message = refused({"gpu04": {"node_id": 1, "rail_interfaces": NICS}})
    assert message.startswith("hostvars[gpu04].fabric_node_id: 1 is not in the published plan rail_plan_lock.yml: "
                              "the plan gives node id 1 to gpu01")
    assert "Fix: publish the plan of the whole inventory first" in message


def test_renumbered_host_is_refused():
    message = refused({"gpu02": {"node_id": 5, "rail_interfaces": NICS}})
    assert "hostvars[gpu02].fabric_node_id: 5 disagrees with the published plan rail_plan_lock.yml, which gives " \
           "gpu02 node id 2 and node id 5 to gpu05" in message


def test_changed_nic_is_refused_naming_the_rail():
    nics = copy.deepcopy(NICS)
    nics["compute"][1] = "ens9f0"
    message = refused({"gpu02": {"node_id": 2, "rail_interfaces": nics}})
    assert message.startswith("hostvars[gpu02].fabric_rail_interfaces: ['compute 2 ens9f0 172.17.1.10/29'] disagrees "
                              "with the published plan rail_plan_lock.yml, which has ['compute 2 ens6f1np1 172.17.1.10/29']")


def test_changed_model_is_refused_even_when_the_addresses_stay():
    cluster = copy.deepcopy(CLUSTER)
    cluster["fabrics"]["compute"]["mtu"] = 4200
    message = refused({"gpu01": INVENTORY["gpu01"]}, cluster)
    assert message.startswith("fabric_cluster: 'model ") and "differs from the model the published plan" in message


def test_other_cluster_is_refused():
    cluster = dict(copy.deepcopy(CLUSTER), name="other")
    assert refused({"gpu01": INVENTORY["gpu01"]}, cluster).startswith(
        "fabric_cluster.name: 'other' is not the cluster of the published plan rail_plan_lock.yml (lock)")


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
    assert lines[-1].startswith("rail_plan_lock.yml: '...' and 10 more hosts disagree with it. Fix:")


@pytest.mark.parametrize("data, message", [
    ("{", "f: None is not JSON"),
    ("all: [", "f: None is not YAML ("),
    ('{"all": {}}', "f: None does not set all.vars.rail_plan_lock"),
    ("all:\n  vars: {}\n", "f: None does not set all.vars.rail_plan_lock"),
    ({"version": 3}, "f.version: 3 is not a plan lock of version 2 or 1"),
    ({"version": True}, "f.version: True is not a plan lock of version 2 or 1"),
    ([], "f.version: [] is not a plan lock of version 2 or 1"),
    ({"version": 1, "cluster": "x", "model": "m"}, "f.nodes: None is missing or not a dict"),
    ({"version": 2, "cluster": "x", "model": "m", "nodes": {}}, "f.nodes: {} is missing or not a str"),
    ({"version": 2, "cluster": "x", "model": "m", "nodes": "", "hosts": 1}, "f.hosts: 1 is not a key of a plan lock"),
    ({"version": 2, "cluster": 1, "model": "m", "nodes": ""}, "f.cluster: 1 is missing or not a str"),
    ({"version": 1, "cluster": "x", "model": "m", "nodes": {"a": {"node_id": "1", "rails": []}}},
     "f.nodes.a: {'node_id': '1', 'rails': []} is not {node_id: <int>"),
    ({"version": 1, "cluster": "x", "model": "m", "nodes": {"a": {"node_id": True, "rails": []}}}, "f.nodes.a:"),
])
def test_malformed_lock_is_refused_with_its_field(data, message):
    with pytest.raises(FabricModelError) as info:
        plan_lock.lock_load(data, "f")
    assert str(info.value).startswith(message)


def test_a_lock_without_hosts_is_written_and_read_back():
    lock = dict(published(), nodes={})
    assert plan_lock.lock_variable(lock)["nodes"] == ""
    assert plan_lock.lock_load(plan_lock.lock_dump(lock), "f") == lock


V1 = {"all": {"vars": {"rail_plan_lock": {"version": 1, "cluster": "lab", "model": "m", "nodes": {
    "gpu01": {"node_id": 1, "rails": ["default 1 ens6f0np0 172.17.0.2/27"]}}}}}}


def foreign(change):
    data = copy.deepcopy(V1)
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize("text", [
    "not json",
    plan_lock.lock_dump(plan_lock.lock_load(json.dumps(V1), "f")),  # a format 2 lock under the old name
    foreign(lambda d: d.update(hosts={})),
    foreign(lambda d: d["all"].update(hosts={"gpu01": {}})),
    foreign(lambda d: d["all"]["vars"].update(ntp_server="ntp1")),
    foreign(lambda d: d["all"]["vars"]["rail_plan_lock"].update(note="kept")),
    foreign(lambda d: d["all"]["vars"]["rail_plan_lock"]["nodes"]["gpu01"].update(role="spare")),
    foreign(lambda d: d["all"]["vars"]["rail_plan_lock"].update(version=2)),
    foreign(lambda d: d["all"]["vars"]["rail_plan_lock"]["nodes"]["gpu01"].update(node_id="1")),
], ids=["not-json", "format-2", "hosts", "all-hosts", "other-var", "lock-key", "node-key", "version", "node-id"])
def test_a_file_in_the_way_of_the_old_name_is_not_ours_unless_exactly_a_format_1_lock(text):
    with pytest.raises(FabricModelError) as info:
        plan_lock.legacy_lock(text, "/inv/rail_plan_lock.json")
    assert str(info.value) == (
        "/inv/rail_plan_lock.json: None is in the way of the plan lock rail_plan_lock.yml and is not a plan lock of "
        "format 1 that this collection wrote. Fix: move or remove it yourself (the plan job replaces only the old lock "
        "it wrote), or name another lock file (rail_plan_lock_file)")
    assert plan_lock.legacy_lock(json.dumps(V1), "/inv/rail_plan_lock.json")["nodes"] == {  # the control
        "gpu01": {"node_id": 1, "rails": ["default 1 ens6f0np0 172.17.0.2/27"]}}


def test_published_reads_a_format_1_file_beside_the_new_name_until_the_plan_job_replaces_it(tmp_path):
    lock = published()
    new, old = tmp_path / plan_lock.LOCK_FILE, tmp_path / plan_lock.LEGACY_LOCK_FILE
    old.write_text(json.dumps({"all": {"vars": {"rail_plan_lock": dict(lock, version=1)}}}))
    source, found = plan_lock.published(None, str(new), None)
    assert source == str(old) and found["nodes"] == lock["nodes"]
    new.write_text(plan_lock.lock_dump(lock))  # the new file wins
    assert plan_lock.published(None, str(new), new.read_text())[0] == str(new)
    # a lock file of another name has no format 1 file beside it
    assert plan_lock.published(None, str(tmp_path / "lock.yml"), None) == (None, None)
    assert plan_lock.legacy_path(str(tmp_path / "lock.yml")) is None


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
    assert len(diff) == 5 and diff[3].startswith("-        gpu02 2: ") and diff[4].startswith("+        gpu02 2: ")
    assert plan_lock.short_diff(before, before, "p") == ""
    cut = plan_lock.short_diff("", "\n".join(str(i) for i in range(500)), "p", max_lines=10).splitlines()
    assert len(cut) == 11 and cut[-1] == "... 493 more diff lines (see the file itself)"
