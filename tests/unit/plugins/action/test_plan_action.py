# -*- coding: utf-8 -*-
"""The opening the controller-side plan actions share (plugins/plugin_utils/plan_action.py), run through the actions
themselves on a real inventory (InventoryManager, VariableManager, HostVars, as ansible-playbook builds them): the
node group read once gives the plan and the verdicts that ``nodes: "{{ groups[g] | node_map(hostvars) }}"`` gave,
a missing or empty group and bad input are refused in one line naming the role's variable, and the arguments are
checked before anything is read."""

from __future__ import annotations

import gc
import importlib
import json
import os
import re
import shutil
import textwrap
from unittest import mock

import pytest

from ansible.errors import AnsibleAction
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.vars.hostvars import HostVars
from ansible.vars.manager import VariableManager

from ansible_collections.ainet.fabric.plugins.filter.rail import node_map as node_map_filter
from ansible_collections.ainet.fabric.plugins.module_utils.plan import plan_lock
from ansible_collections.ainet.fabric.plugins.plugin_utils import plan_action

COLLECTION = "ansible_collections.ainet.fabric.plugins"
LLDP = os.path.join(os.path.dirname(os.path.dirname(__file__)), "module_utils", "data", "lldp")
RAILS = ["ens6f0np0", "ens6f1np1", "ens7f0np0", "ens7f1np1"]
GPU03 = ["ens1f0np0", "ens1f1np1", "ens2f0np0", "ens2f1np1"]
# the container lab's model, as data/lldp/ORIGIN.md recorded its gpu02 with rails 3 and 4 crossed
LAB = {"name": "t-exclusive-v4", "rails": 4, "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16",
                                                            "rail_prefix": 24, "node_prefix": 27}}
LOSSLESS = {"name": "t", "rails": 4, "mtu": 9000, "management_networks": ["10.0.0.0/16"],
            "addressing": {"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24},
            "tors": [{"name": "leaf1", "rails": [1, 2], "port_template": "Ethernet{rail}{node}", "platform": "sonic"},
                     {"name": "leaf2", "rails": [3, 4], "port_template": "Ethernet{rail}{node}", "platform": "sonic"}],
            "qos": {"preset": "nvidia"}}
# The node ids and NICs come from different layers: the group's vars, a host's inline vars, a host_vars file, and
# a set_fact (the fixture's), so that a reader of one layer only could not pass.
HOSTS = """
    all:
      children:
        gpu_nodes:
          vars:
            fabric_rail_interfaces: [ens6f0np0, ens6f1np1, ens7f0np0, ens7f1np1]
          hosts:
            gpu01: {fabric_node_id: 1}
            gpu02: {}
            gpu03: {fabric_node_id: 3}
        spare_nodes:
          hosts: {}
        mgmt:
          hosts:
            ctl01: {}
    """


@pytest.fixture
def world(tmp_path):
    (tmp_path / "inv" / "host_vars").mkdir(parents=True)
    (tmp_path / "inv" / "hosts.yml").write_text(textwrap.dedent(HOSTS))
    (tmp_path / "inv" / "host_vars" / "gpu02.yml").write_text("fabric_node_id: 2\n")
    loader = DataLoader()
    inventory = InventoryManager(loader=loader, sources=[str(tmp_path / "inv")])
    manager = VariableManager(loader=loader, inventory=inventory)
    manager.set_nonpersistent_facts("gpu03", {"fabric_rail_interfaces": GPU03})  # set_fact
    hostvars = HostVars(inventory=inventory, variable_manager=manager, loader=loader)
    task_vars = {"groups": inventory.get_groups_dict(), "hostvars": hostvars}
    return manager, task_vars


def act(name, args, task_vars, check_mode=False, diff=False):
    """The task result of ``ainet.fabric.<name>: args`` (a refusal raised on ansible-core 2.19 is its result)."""
    module = importlib.import_module("%s.action.%s" % (COLLECTION, name))
    task = mock.MagicMock(args=dict(args), async_val=0, check_mode=check_mode, diff=diff, action="ainet.fabric." + name,
                          failed_when=[], until=[])
    plugin = module.ActionModule(task, mock.MagicMock(), mock.MagicMock(), None, None)
    try:
        return plugin.run(task_vars=task_vars)
    except AnsibleAction as exc:
        return exc.result


def node_map(task_vars, group="gpu_nodes"):
    """What the roles passed before: ``groups[group] | ainet.fabric.node_map(hostvars)``."""
    return node_map_filter(task_vars["groups"][group], task_vars["hostvars"])


def test_the_node_group_read_once_is_the_node_map_of_hostvars(world):
    _manager, task_vars = world
    nodes, variables = plan_action.group_nodes(task_vars, "cabling_check_node_group", "gpu_nodes")
    assert nodes == node_map(task_vars)
    assert nodes == {"gpu01": {"node_id": 1, "rail_interfaces": RAILS}, "gpu02": {"node_id": 2, "rail_interfaces": RAILS},
                     "gpu03": {"node_id": 3, "rail_interfaces": GPU03}}
    assert sorted(variables) == ["gpu01", "gpu02", "gpu03"]


def test_cabling_check_from_the_node_group_gives_the_verdict_of_the_node_map(world, tmp_path):
    manager, task_vars = world
    with open(os.path.join(LLDP, "lab-lldpd-1.0.16-json-crossed.json")) as handle:
        manager.set_nonpersistent_facts("gpu02", {"__cabling_check_lldpcli": {"rc": 0, "stdout": handle.read()}})
    common = {"cluster": LAB, "hosts": ["gpu01", "gpu02"], "fail_on_findings": False}
    by_group = act("cabling_check", dict(common, node_group="gpu_nodes", report=str(tmp_path / "a.md")), task_vars)
    by_map = act("cabling_check", dict(common, nodes=node_map(task_vars), report=str(tmp_path / "b.md")), task_vars)
    assert not by_group.get("failed"), by_group
    assert [(f["host"], f["kind"], f["rail"]) for f in by_group["findings"]] == [
        ("gpu01", "missing", 1), ("gpu01", "missing", 2), ("gpu01", "missing", 3), ("gpu01", "missing", 4),
        ("gpu02", "swapped", 3)]
    assert sorted(by_group["unread"]) == ["gpu01"]
    assert dict(by_group, report=None) == dict(by_map, report=None)
    assert (tmp_path / "a.md").read_text() == (tmp_path / "b.md").read_text()
    assert json.loads((tmp_path / "a.json").read_text())["summary"] == by_group["summary"]


def test_lossless_test_from_the_node_group_schedules_and_steps_as_from_the_node_map(world):
    manager, task_vars = world
    for host, nics in (("gpu01", RAILS), ("gpu02", RAILS), ("gpu03", GPU03)):  # rdma_facts, registered
        manager.set_nonpersistent_facts(host, {"__lossless_test_rdma": {"rails": [
            {"netdev": nic, "rdma_device": "mlx5_%d" % i, "port": 1, "gid_index": 3} for i, nic in enumerate(nics)]}})
    common = {"cluster": LOSSLESS, "hosts": ["gpu01", "gpu02", "gpu03"]}
    for mode in ({"mode": "schedule"}, {"mode": "step", "step": 1}):
        by_group = act("lossless_test", dict(common, node_group="gpu_nodes", **mode), task_vars)
        by_map = act("lossless_test", dict(common, nodes=node_map(task_vars), **mode), task_vars)
        assert not by_group.get("failed"), by_group
        assert by_group == by_map
    # leaf1 serves rails 1 and 2: they take turns, one incast per ToR per step (3 rounds each, 6 steps)
    assert (by_group["steps"], by_group["loaded"]) == (6, 2)
    assert sorted(by_group["hosts"]) == ["gpu01", "gpu02", "gpu03"]
    assert by_group["hosts"]["gpu03"]["links"][0] == {"interface": "ens1f0np0", "rdma_device": "mlx5_0", "rdma_port": 1}


@pytest.mark.parametrize("name, variable, extra", [
    ("cabling_check", "cabling_check_node_group", {}),
    ("lossless_test", "lossless_test_node_group", {"mode": "schedule"}),
    ("link_test", "link_test_node_group", {"mode": "schedule"}),
    ("k8s_objects", "k8s_objects_node_group", {}),
    ("topology", "topology_node_group", {"dest": "/nonexistent/topology"}),
])
def test_a_missing_or_empty_node_group_is_one_line_naming_the_roles_variable(world, name, variable, extra):
    _manager, task_vars = world
    cluster = LOSSLESS if name == "lossless_test" else LAB
    args = dict(extra, cluster=cluster, node_group="gpu_node", hosts=["gpu01"])
    if name in ("k8s_objects", "topology"):
        del args["hosts"]
    result = act(name, args, task_vars)
    assert result["failed"] and result["changed"] is False
    assert result["msg"] == (
        "%s: 'gpu_node' is not an inventory group (close: gpu_nodes, spare_nodes). Fix: put the GPU nodes in group 'gpu_node' or "
        "name their group with -e %s=<group> (or rail_plan_node_group: every job's node group defaults to it)"
        % (variable, variable))
    result = act(name, dict(args, node_group="spare_nodes"), task_vars)
    assert result["msg"].startswith("%s: 'spare_nodes' is an inventory group without hosts. Fix:" % variable)


@pytest.mark.parametrize("name, extra", [("cabling_check", {}), ("lossless_test", {"mode": "schedule"})])
def test_nodes_and_node_group_are_one_or_the_other(world, name, extra):
    _manager, task_vars = world
    args = dict(extra, cluster=LAB, hosts=["gpu01"])
    both = act(name, dict(args, node_group="gpu_nodes", nodes=node_map(task_vars)), task_vars)
    assert both["failed"] and "mutually exclusive: nodes|node_group" in both["msg"]
    neither = act(name, args, task_vars)
    assert neither["failed"] and "one of the following is required: nodes, node_group" in neither["msg"]


def test_rail_plan_reads_the_node_groups_and_refuses_a_bad_model_in_one_line(world):
    _manager, task_vars = world
    result = act("rail_plan", {"mode": "validate", "cluster": LAB, "node_groups": {"rail_plan_node_group": "gpu_nodes"}},
                 task_vars)
    assert not result.get("failed"), result
    given = act("rail_plan", {"mode": "validate", "cluster": LAB, "nodes": node_map(task_vars)}, task_vars)
    assert result["summary"] == given["summary"] and result["summary"]["nodes"] == 3
    bad = act("rail_plan", {"mode": "validate", "cluster": dict(LAB, rails=0),
                            "node_groups": {"rail_plan_node_group": "gpu_nodes"}}, task_vars)
    assert bad["failed"] and bad["changed"] is False
    assert bad["msg"] == "fabric_cluster.rails: 0 is below the minimum 1. Fix: use 1..64"
    empty = act("rail_plan", {"mode": "validate", "cluster": LAB, "node_groups": {"rail_plan_node_group": "spare_nodes"}},
                task_vars)
    assert empty["msg"].startswith("rail_plan_node_group: 'spare_nodes' is an inventory group without hosts. Fix:")


class Probe(plan_action.PlanAction):
    """The smallest action over the opening: the plan's summary, or whatever ``raise`` names."""
    ARGUMENT_SPEC = dict(cluster=dict(type="dict", required=True), nodes=dict(type="dict"),
                         node_group=dict(type="str"), raise_=dict(type="str"))
    NODE_GROUP_VARIABLE = "probe_node_group"
    REFUSED = (plan_action.FabricError, KeyError)

    def act(self, result, args, task_vars):
        if args["raise_"] == "key":
            raise KeyError("probe: one line")
        if args["raise_"] == "type":
            raise TypeError("not a refusal")
        return dict(result, summary=self.plan(args, task_vars)["summary"], gc=gc.isenabled())


def probe(args, task_vars, pause_gc=False):
    task = mock.MagicMock(args=dict(args), async_val=0, check_mode=False, diff=False, action="probe",
                          failed_when=[], until=[])
    plugin = Probe(task, mock.MagicMock(), mock.MagicMock(), None, None)
    plugin.PAUSE_GC = pause_gc
    try:
        return plugin.run(task_vars=task_vars)
    except AnsibleAction as exc:
        return exc.result


def test_the_opening_refuses_what_refused_names_and_lets_the_rest_through(world):
    _manager, task_vars = world
    ok = probe({"cluster": LAB, "node_group": "gpu_nodes"}, task_vars)
    assert ok["summary"]["nodes"] == 3 and ok["gc"] is True
    assert probe({"cluster": LAB, "node_group": "gpu_nodes"}, task_vars, pause_gc=True)["gc"] is False
    assert gc.isenabled()
    refused = probe({"cluster": LAB, "node_group": "gpu_nodes", "raise_": "key"}, task_vars)
    assert refused["failed"] and refused["msg"] == "'probe: one line'"
    with pytest.raises(TypeError):
        probe({"cluster": LAB, "node_group": "gpu_nodes", "raise_": "type"}, task_vars)
    bad = probe({"cluster": "not a model", "node_group": "gpu_nodes"}, task_vars)
    assert bad["failed"] and "cluster" in bad["msg"]


@pytest.mark.parametrize("name, extra", [("cabling_check", {}), ("lossless_test", {"mode": "schedule"}),
                                         ("link_test", {"mode": "schedule"}), ("k8s_objects", {}),
                                         ("topology", {"dest": "/nonexistent/topology"})])
def test_a_host_name_that_would_be_a_switch_command_is_one_line_from_every_plan_action(tmp_path, name, extra):
    """Issue 39: a node group holding a host named with a line break (an EOS command of its own) or ' ;' (NX-API's
    separator) is refused by the plan, before any report, schedule or object: one line naming the host."""
    for hostile in ("gpu02\nusername evil privilege 15", "gpu02 ;username evil"):
        inv = tmp_path / hostile.split()[-1]
        inv.mkdir()
        (inv / "hosts.yml").write_text(textwrap.dedent(HOSTS).replace("gpu02: {}", "%s: {fabric_node_id: 2}"
                                                                      % json.dumps(hostile)))
        loader = DataLoader()
        inventory = InventoryManager(loader=loader, sources=[str(inv / "hosts.yml")])
        manager = VariableManager(loader=loader, inventory=inventory)
        hostvars = HostVars(inventory=inventory, variable_manager=manager, loader=loader)
        task_vars = {"groups": inventory.get_groups_dict(), "hostvars": hostvars}
        assert hostile in task_vars["groups"]["gpu_nodes"]          # the inventory took the name as it is
        args = dict(extra, cluster=LOSSLESS if name == "lossless_test" else LAB, node_group="gpu_nodes",
                    hosts=["gpu01"])
        if name in ("k8s_objects", "topology"):
            del args["hosts"]
        result = act(name, args, task_vars)
        assert result["failed"] and result["changed"] is False
        assert result["msg"].startswith("inventory_hostname: %r is not a host name a node may have" % hostile)
        assert "\n" not in result["msg"] and ". Fix: " in result["msg"]


def test_rail_plan_check_reads_the_published_lock_from_the_hosts_variable(world):
    """Without a lock argument the check reads rail_plan_lock from the task's variables (as the inventory source or an
    AWX artifact sets it): a lock that agrees passes, one that gives a host another node id is refused, none is
    refused as unpublished."""
    _manager, task_vars = world
    groups = {"rail_plan_node_group": "gpu_nodes"}
    published = act("rail_plan", {"mode": "plan", "cluster": LAB, "node_groups": groups}, task_vars)
    lock = published["ansible_stats"]["data"]["rail_plan_lock"]
    assert lock["version"] == 2 and isinstance(lock["nodes"], str)  # the artifact: format 2, a few scalars
    check = {"mode": "check", "cluster": LAB, "node_groups": groups, "check_hosts": ["gpu01", "gpu02"]}
    agreed = act("rail_plan", check, dict(task_vars, rail_plan_lock=lock))
    assert not agreed.get("failed"), agreed
    assert agreed["checked"] == ["gpu01", "gpu02"] and agreed["lock_source"] == "rail_plan_lock"
    assert agreed["msg"].endswith("; 2 host(s) agree with the published plan (rail_plan_lock)")
    moved = dict(lock, nodes=lock["nodes"].replace("gpu02 2:", "gpu02 7:"))
    refused = act("rail_plan", check, dict(task_vars, rail_plan_lock=moved))
    assert refused["failed"] and "gpu02" in refused["msg"] and "\n" not in refused["msg"]
    unpublished = act("rail_plan", dict(check, lock_file="/nonexistent/rail_plan_lock.yml"), task_vars)
    assert unpublished["failed"] and "no published plan (rail_plan_lock) was passed" in unpublished["msg"]


def test_rail_plan_reads_the_model_and_the_plays_hosts_from_the_tasks_variables(world):
    """The role passes neither the model nor the play's hosts (templated whole, a second at 16,384 nodes): without
    ``cluster`` the plan and the check read the task's host's fabric_cluster; with ``check_play_hosts`` the check
    takes ansible_play_hosts_all. The same results as with the arguments; both ways of naming the hosts at once is
    refused in one line."""
    _manager, task_vars = world
    groups = {"rail_plan_node_group": "gpu_nodes"}
    task_vars = dict(task_vars, fabric_cluster=LAB, ansible_play_hosts_all=["gpu01", "gpu03"], inventory_hostname="gpu01")
    given = act("rail_plan", {"mode": "plan", "cluster": LAB, "node_groups": groups}, task_vars)
    read = act("rail_plan", {"mode": "plan", "node_groups": groups}, task_vars)
    assert not read.get("failed") and read["summary"] == given["summary"]
    assert read["ansible_stats"] == given["ansible_stats"]
    task_vars["rail_plan_lock"] = given["ansible_stats"]["data"]["rail_plan_lock"]
    checked = act("rail_plan", {"mode": "check", "node_groups": groups, "check_play_hosts": True}, task_vars)
    assert not checked.get("failed") and checked["checked"] == ["gpu01", "gpu03"], checked
    listed = act("rail_plan", {"mode": "check", "node_groups": groups, "check_hosts": ["gpu01", "gpu03"]}, task_vars)
    assert listed["checked"] == checked["checked"] and listed["msg"] == checked["msg"]
    both = act("rail_plan", {"mode": "check", "node_groups": groups, "check_play_hosts": True,
                             "check_hosts": ["gpu01"]}, task_vars)
    assert both["failed"] and both["msg"] == ("check_play_hosts: True and check_hosts are given both. Fix: give the "
                                              "hosts to check, or check the play's hosts")


def test_rail_plan_check_of_a_slice_reads_a_format_1_file_until_the_plan_job_replaces_it(world, tmp_path):
    """A host job (check mode of the role) before the plan job has written format 2: the lock file's default name does
    not exist, the format 1 file beside it is the published plan; a host it gives another node id is refused naming
    that file."""
    _manager, task_vars = world
    groups = {"rail_plan_node_group": "gpu_nodes"}
    lock = plan_lock.lock_load(act("rail_plan", {"mode": "plan", "cluster": LAB, "node_groups": groups},
                                   task_vars)["ansible_stats"]["data"]["rail_plan_lock"], "artifact")
    old = tmp_path / "rail_plan_lock.json"
    old.write_text(json.dumps({"all": {"vars": {"rail_plan_lock": dict(lock, version=1)}}}))
    check = {"mode": "check", "cluster": LAB, "node_groups": groups, "check_hosts": ["gpu01", "gpu02", "gpu03"],
             "lock_file": str(tmp_path / "rail_plan_lock.yml")}
    agreed = act("rail_plan", check, task_vars)
    assert not agreed.get("failed") and agreed["lock_source"] == str(old), agreed
    lock["nodes"]["gpu03"]["node_id"] = 9
    old.write_text(json.dumps({"all": {"vars": {"rail_plan_lock": dict(lock, version=1)}}}))
    refused = act("rail_plan", check, task_vars)
    assert refused["failed"] and refused["msg"].startswith(
        "hostvars[gpu03].fabric_node_id: 3 disagrees with the published plan %s, which gives gpu03 node id 9" % old)


def lock_files(tmp_path):
    return sorted(path.name for path in tmp_path.iterdir() if path.name.startswith("rail_plan_lock"))


def test_rail_plan_replaces_the_format_1_lock_it_wrote_and_refuses_a_foreign_file_before_any_change(world, tmp_path):
    """The plan job writes rail_plan_lock.yml and removes rail_plan_lock.json beside it where that file is a lock this
    collection wrote (format 1), diffing the plan against it in format 2 (no host line when the plan is the same);
    check mode only reports it; any other rail_plan_lock.json fails the job naming it, before anything is written."""
    _manager, task_vars = world
    new, old = tmp_path / "rail_plan_lock.yml", tmp_path / "rail_plan_lock.json"
    args = {"mode": "plan", "cluster": LAB, "node_groups": {"rail_plan_node_group": "gpu_nodes"}, "lock_file": str(new),
            "output_dir": str(tmp_path / "plan")}
    lock = plan_lock.lock_load(act("rail_plan", dict(args, lock_file=None, output_dir=None),
                                   task_vars)["ansible_stats"]["data"]["rail_plan_lock"], "artifact")
    v1 = json.dumps({"all": {"vars": {"rail_plan_lock": dict(lock, version=1)}}})
    old.write_text(v1)

    checked = act("rail_plan", args, task_vars, check_mode=True, diff=True)
    assert checked["changed"] and sorted(checked["files"])[-2:] == [str(old), str(new)], checked
    assert lock_files(tmp_path) == ["rail_plan_lock.json"] and old.read_text() == v1  # nothing written in check mode

    done = act("rail_plan", args, task_vars, diff=True)
    assert done["changed"] and not done.get("failed"), done
    assert lock_files(tmp_path) == ["rail_plan_lock.yml"] and new.read_text() == plan_lock.lock_dump(lock)
    diff = done["diff"]["prepared"]
    assert diff.startswith("%s: removed, replaced by %s (format 2)\n" % (old, new))
    assert "gpu0" not in diff.split("plan.json")[0]  # the same plan: no host line of the lock in the diff
    assert done["lock_changes"] == {"added": [], "removed": [], "changed": [], "model": False}
    assert not act("rail_plan", args, task_vars)["changed"]  # the second run

    new.unlink()
    shutil.rmtree(tmp_path / "plan")
    old.write_text(v1.replace('"all": {"vars": {', '"all": {"vars": {"ntp_server": "ntp1", '))
    refused = act("rail_plan", args, task_vars)
    assert refused["failed"] and refused["msg"].startswith(
        "%s: None is in the way of the plan lock rail_plan_lock.yml and is not a plan lock of format 1 that this "
        "collection wrote. Fix: " % old) and "\n" not in refused["msg"]
    assert lock_files(tmp_path) == ["rail_plan_lock.json"] and not (tmp_path / "plan").exists()
    old.write_text(v1)  # the control: the same file without the foreign variable is replaced
    assert act("rail_plan", args, task_vars)["changed"] and lock_files(tmp_path) == ["rail_plan_lock.yml"]


def test_tor_config_from_the_node_group_renders_what_the_node_map_renders(world):
    _manager, task_vars = world
    args = {"cluster": LOSSLESS, "validate": False}
    by_group = act("tor_config", dict(args, node_group="gpu_nodes"), task_vars)
    given = act("tor_config", dict(args, nodes=node_map(task_vars)), task_vars)
    assert not by_group.get("failed"), by_group
    assert [t["name"] for t in by_group["tors"]] == ["leaf1", "leaf2"]
    assert by_group["tors"] == given["tors"]
    missing = act("tor_config", dict(args, node_group="gpu_node"), task_vars)
    assert missing["failed"] and missing["msg"].startswith("tor_config_node_group: 'gpu_node' is not an inventory group")
    both = act("tor_config", dict(args, node_group="gpu_nodes", nodes=node_map(task_vars)), task_vars)
    assert both["failed"] and "mutually exclusive: nodes|node_group" in both["msg"]


def act_templated(name, args, task_vars):
    """:func:`act` with ansible-core's own templar (a template in a variable the action reads is rendered)."""
    from ansible.template import Templar  # pylint: disable=import-outside-toplevel
    module = importlib.import_module("%s.action.%s" % (COLLECTION, name))
    task = mock.MagicMock(args=dict(args), async_val=0, check_mode=False, diff=False, action="ainet.fabric." + name,
                          failed_when=[], until=[])
    plugin = module.ActionModule(task, mock.MagicMock(), mock.MagicMock(), DataLoader(),
                                 Templar(loader=DataLoader(), variables=task_vars), None)
    try:
        return plugin.run(task_vars=task_vars)
    except AnsibleAction as exc:
        return exc.result


def test_tor_config_reads_the_model_from_fabric_cluster_when_no_cluster_is_given(world):
    """The role passes no cluster: the action reads fabric_cluster itself (untemplated unless it holds a template) and
    renders what the model passed as an argument renders; a missing model is one line naming fabric_cluster."""
    _manager, task_vars = world
    args = {"node_group": "gpu_nodes", "validate": False}
    given = act_templated("tor_config", dict(args, cluster=LOSSLESS), task_vars)
    assert not given.get("failed"), given
    from_variable = act_templated("tor_config", args, dict(task_vars, fabric_cluster=LOSSLESS))
    assert not from_variable.get("failed"), from_variable
    assert from_variable["tors"] == given["tors"] and from_variable["summary"] == given["summary"]
    assert from_variable["summary"] == "2 ToR configuration(s) rendered (not written), 0 changed; vendor schema check " \
        "off (tor_config_validate false)"
    # a template in the model is rendered, as "{{ fabric_cluster }}" rendered it
    import ansible.template  # pylint: disable=import-outside-toplevel
    trusted = getattr(ansible.template, "trust_as_template", lambda text: text)  # 2.19: as an inventory file's text
    templated = json.loads(json.dumps(LOSSLESS))
    templated["tors"][1]["name"] = trusted("{{ 'leaf' ~ 2 }}")
    rendered = act_templated("tor_config", args, dict(task_vars, fabric_cluster=templated))
    assert rendered.get("tors") == given["tors"], rendered
    missing = act_templated("tor_config", args, task_vars)
    assert missing["failed"] and missing["msg"] == (
        "fabric_cluster: None is not defined. Fix: describe the cluster in the inventory's group_vars "
        "(docs/cluster-model.md)")


# The tors job's input check (the render task's first step) against check_input.yml's (the rail_plan action in validate
# mode, over the job's node groups): each case has one thing wrong, or two where the order decides which is named.
JOB_INPUT = {
    "missing node group, bad model": ({"rail_plan_node_group": "gpu_node"}, dict(LOSSLESS, rails=0), None,
                                      "rail_plan_node_group: 'gpu_node' is not an inventory group (close: gpu_nodes, "),
    "empty node group": ({"rail_plan_node_group": "spare_nodes"}, LOSSLESS, None,
                         "rail_plan_node_group: 'spare_nodes' is an inventory group without hosts. Fix: "),
    "missing tor_config_node_group, bad model": ({"tor_config_node_group": "gpu_node"}, dict(LOSSLESS, rails=0), None,
                                                 "tor_config_node_group: 'gpu_node' is not an inventory group "),
    "no model": ({}, None, None, "fabric_cluster: None is not defined. Fix: describe the cluster in the inventory's "),
    "bad model": ({}, dict(LOSSLESS, rails=0), None, "fabric_cluster.rails: 0 is below the minimum 1. Fix: use 1..64"),
    "bad node": ({}, LOSSLESS, {"fabric_node_id": 0}, "hostvars[gpu02].fabric_node_id: 0 is "),
    "control": ({}, LOSSLESS, None, None),
}


@pytest.mark.parametrize("case", sorted(JOB_INPUT))
def test_tor_config_checks_the_jobs_node_groups_and_the_model_first_with_check_inputs_lines(world, case):
    """The tors job has no check_input.yml play: the render task checks the job's node groups (node_groups, in that
    order), then its node group, the model and the nodes, each refused with the line check_input.yml's task gives for
    the same inventory (the model of the task's host, the first node's)."""
    manager, task_vars = world
    changed, model, gpu02, expected = JOB_INPUT[case]
    groups = dict({"rail_plan_node_group": "gpu_nodes", "tor_config_node_group": "gpu_nodes"}, **changed)
    if model is not None:
        manager.set_nonpersistent_facts("gpu01", {"fabric_cluster": model})
        task_vars = dict(task_vars, fabric_cluster=model)
    if gpu02:
        manager.set_nonpersistent_facts("gpu02", gpu02)
    checked = act("rail_plan", {"mode": "validate", "node_groups": groups}, task_vars)
    rendered = act("tor_config", {"node_groups": groups, "node_group": groups["tor_config_node_group"],
                                  "validate": False}, task_vars)
    if expected is None:
        assert not checked.get("failed") and not rendered.get("failed"), (checked, rendered)
        assert [t["name"] for t in rendered["tors"]] == ["leaf1", "leaf2"]
        return
    assert checked["failed"] and checked["msg"].startswith(expected), checked["msg"]
    assert rendered["failed"] and rendered["changed"] is False and rendered["msg"] == checked["msg"]
    assert "tors" not in rendered


@pytest.mark.parametrize("name, args", [
    ("rail_plan", {"mode": "plan", "node_groups": {"rail_plan_node_group": "gpu_nodes"}}),
    ("tor_config", {"node_group": "gpu_nodes", "validate": False}),
])
def test_a_model_whose_template_does_not_render_is_one_line(world, name, args):
    """A template in fabric_cluster that does not render (an undefined variable) is refused naming fabric_cluster,
    by every reader of the task's model (plan_action.reading_model), not raised as the templar's error."""
    _manager, task_vars = world
    import ansible.template  # pylint: disable=import-outside-toplevel
    trusted = getattr(ansible.template, "trust_as_template", lambda text: text)
    model = json.loads(json.dumps(LOSSLESS))
    model["tors"][1]["name"] = trusted("{{ no_such_variable }}")
    task_vars = dict(task_vars, inventory_hostname="gpu01")  # the task's host: a node (rail_plan reads its model)
    result = act_templated(name, args, dict(task_vars, fabric_cluster=model))
    assert result["failed"] and result["msg"].startswith("fabric_cluster: could not be read: "), result
    assert "no_such_variable" in result["msg"] and "\n" not in result["msg"]
    control = act_templated(name, args, dict(task_vars, fabric_cluster=LOSSLESS))
    assert not control.get("failed"), control


def test_tor_config_push_reads_the_published_lock_from_the_hosts_variable(world):
    """A push without a lock argument reads rail_plan_lock from the ToR host's variables, as the rail_plan check does:
    a lock that gives a node another id stops the push naming the node, none is refused as unpublished, and one that
    agrees lets the push go on to the switch's API (here refused for a setting of the ToR host, before any request)."""
    _manager, task_vars = world
    cumulus = json.loads(json.dumps(LOSSLESS))
    for tor in cumulus["tors"]:
        tor.update(platform="cumulus", port_template="swp{rail}{node}")
    published = act("rail_plan", {"mode": "plan", "cluster": cumulus,
                                  "node_groups": {"rail_plan_node_group": "gpu_nodes"}}, task_vars)
    lock = published["ansible_stats"]["data"]["rail_plan_lock"]
    args = {"node_group": "gpu_nodes", "push": True, "validate": False}
    leaf1 = dict(task_vars, inventory_hostname="leaf1", fabric_cluster=cumulus, ansible_httpapi_use_ssl="maybe")
    agreed = act_templated("tor_config", args, dict(leaf1, rail_plan_lock=lock))
    assert agreed["failed"] and agreed["msg"] == "ToR leaf1: ansible_httpapi_use_ssl: 'maybe' is not a boolean", agreed
    moved = json.loads(json.dumps(lock))  # format 2: one line per host in "nodes"
    assert re.search(r"^gpu02 2:", moved["nodes"], re.M), moved["nodes"]
    moved["nodes"] = re.sub(r"^gpu02 2:", "gpu02 7:", moved["nodes"], flags=re.M)
    refused = act_templated("tor_config", args, dict(leaf1, rail_plan_lock=moved))
    assert refused["failed"] and "gpu02" in refused["msg"] and "\n" not in refused["msg"], refused
    unpublished = act_templated("tor_config", args, leaf1)
    assert unpublished["failed"] and unpublished["msg"].startswith("no published plan (None, or the variable "
                                                                   "rail_plan_lock)"), unpublished


class Checked(plan_action.PlanAction):
    """Options of every kind the plan actions take, with the rules they use."""
    ARGUMENT_SPEC = dict(cluster=dict(type="dict", required=True), nodes=dict(type="dict"), node_group=dict(type="str"),
                         hosts=dict(type="list", elements="str"), lines=dict(type="list", elements="int"),
                         anything=dict(type="raw"), rounds=dict(type="int", default=3), full=dict(type="bool"),
                         mode=dict(type="str", choices=["a", "b"], default="a"),
                         ports=dict(type="list", elements="dict", options=dict(name=dict(type="str", default="p"))))
    ARGUMENT_RULES = dict(mutually_exclusive=[["nodes", "node_group"]], required_one_of=[["nodes", "node_group"]])


def checked(args, how):
    """``(arguments, failure)`` of ``args`` as PlanAction checks them (how="plan") or as ActionBase does ("core")."""
    task = mock.MagicMock(args=dict(args), action="ainet.fabric.checked")
    plugin = Checked(task, mock.MagicMock(), mock.MagicMock(), None, None)
    plugin._load_name = "ainet.fabric.checked"
    try:
        if how == "plan":
            return plugin.validate_arguments(), None
        return plugin.validate_argument_spec(argument_spec=Checked.ARGUMENT_SPEC, **Checked.ARGUMENT_RULES)[1], None
    except AnsibleAction as exc:
        return None, str(exc)


@pytest.mark.parametrize("case", [
    {"cluster": LAB, "node_group": "gpu_nodes", "hosts": ["gpu01", "gpu02"]},
    {"cluster": LAB, "nodes": {"gpu01": {"node_id": 1}}, "rounds": "5", "full": "yes", "mode": "b", "anything": [1]},
    {"cluster": LAB, "node_group": "g", "hosts": ["gpu01", 7], "lines": ["1", 2], "anything": {"a": 1}},
    {"cluster": LAB, "node_group": "g", "ports": [{}, {"name": "x"}]},
    {"cluster": "a=1 b=2", "node_group": "g"},
    # one thing wrong each
    {"cluster": 7, "node_group": "g"}, {"cluster": LAB}, {"cluster": LAB, "nodes": {}, "node_group": "g"},
    {"node_group": "g"}, {"cluster": LAB, "node_group": "g", "mode": "c"}, {"cluster": LAB, "node_group": "g", "x": 1},
    {"cluster": LAB, "node_group": "g", "hosts": "gpu01"}, {"cluster": LAB, "node_group": "g", "lines": ["one"]},
])
def test_the_arguments_are_checked_as_ansible_core_checks_them(case):
    assert checked(case, "plan") == checked(case, "core")


def test_the_large_arguments_are_checked_without_a_copy():
    """ansible-core's validator deep-copies every argument first: the model and 16,384 host names (tagged strings on
    2.19) cost a second per task; the opening checks them as empty ones of their type and keeps them as they are."""
    cluster, hosts = dict(LAB), ["gpu%05d" % n for n in range(1, 100)]
    given = {"cluster": cluster, "node_group": "g", "hosts": hosts, "lines": [1]}
    args, _failure = checked(given, "plan")
    assert args["cluster"] is cluster and args["hosts"] is hosts
    core, _failure = checked(given, "core")
    assert core == args and core["cluster"] is not cluster and core["hosts"] is not hosts  # the control: copies
    converted, _failure = checked({"cluster": cluster, "node_group": "g", "hosts": hosts + [7]}, "plan")
    assert converted["hosts"] == hosts + ["7"]  # not all strings: checked (and converted) as ansible-core does
