# -*- coding: utf-8 -*-
"""plugin_utils/inventory_vars gives what ``hostvars[host][name]`` gives, on a real inventory that exercises every
layer of ``VariableManager.get_vars``: inline host and group vars of a YAML inventory, group_vars and host_vars files
(a file and a directory) beside the inventory and beside the playbook, a constructed inventory plugin that composes a
node id and makes groups, nested groups with priorities, templated values, gathered and cacheable facts,
``include_vars`` and ``set_fact`` (``set_host_variable`` / ``set_nonpersistent_facts``), extra vars, both hash
behaviours and a reordered ``VARIABLE_PRECEDENCE``. The hosts that must go through hostvars are named, so a reader
that always fell back could not pass."""

from __future__ import annotations

import textwrap

import pytest

from ansible import constants as C
from ansible import context
from ansible.inventory.manager import InventoryManager
from ansible.module_utils.common.collections import ImmutableDict
from ansible.parsing.dataloader import DataLoader
from ansible.utils import vars as ansible_vars
from ansible.vars.hostvars import HostVars
from ansible.vars.manager import VariableManager

from ansible_collections.ainet.fabric.plugins.plugin_utils import inventory_vars

NAMES = ("fabric_node_id", "fabric_rail_interfaces", "fabric_dict", "ansible_facts")

FILES = {
    "inv/hosts.yml": """
        all:
          vars:
            fabric_dict: {a: 1, b: {x: 1}}
          children:
            gpu_nodes:
              vars:
                fabric_rail_interfaces: [ens1, ens2]
              children:
                rack1:
                  hosts:
                    gpu01: {fabric_node_id: 1}
                    gpu02: {fabric_node_id: 2, fabric_dict: {b: {y: 2}}}
                    gpu05: {fabric_node_id: "{{ 2 + 3 }}"}
                rack2:
                  vars:
                    ansible_group_priority: 5
                    fabric_rail_interfaces: [ens3, ens4]
                  hosts:
                    gpu03: {fabric_node_id: 30}
                    gpu04: {}
                    gpu06: {fabric_node_id: 6}
                    gpu07: {fabric_node_id: 7}
                    gpu08: {fabric_node_id: 8}
                    gpu09: {fabric_node_id: 9, node_seed: 40}
        """,
    "inv/group_vars/all.yml": "fabric_dict: {c: 3}\n",
    "inv/group_vars/rack1.yml": "fabric_dict: {b: {z: 3}}\n",
    "inv/host_vars/gpu03.yml": "fabric_node_id: 3\n",
    "inv/host_vars/gpu04/main.yml": "fabric_node_id: 4\nfabric_rail_interfaces: [ens9, ens10]\n",
    # a constructed source after the YAML one: a composed node id, and a group of its own making
    "inv/zz.constructed.yml": """
        plugin: constructed
        strict: false
        compose:
          fabric_node_id: "node_seed + 1"
        groups:
          big_ids: "fabric_node_id | int > 7"
        """,
    "pb/group_vars/big_ids.yml": "fabric_dict: {big: true}\n",
    "pb/host_vars/gpu08.yml": "fabric_rail_interfaces: [ens7, ens8]\n",
}


@pytest.fixture
def world(tmp_path, monkeypatch):
    for name, text in FILES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))

    def make(extra_vars=()):
        monkeypatch.setattr(context, "CLIARGS", ImmutableDict(extra_vars=tuple(extra_vars)))
        # ansible-core keeps the extra vars it parsed on load_extra_vars itself: forgotten after the test, or a later
        # test's VariableManager would get this one's
        monkeypatch.setattr(ansible_vars.load_extra_vars, "extra_vars", None, raising=False)
        monkeypatch.setattr(C, "INVENTORY_ENABLED", list(C.INVENTORY_ENABLED) + ["constructed"])
        loader = DataLoader()
        loader.set_basedir(str(tmp_path / "pb"))
        inventory = InventoryManager(loader=loader, sources=[str(tmp_path / "inv")])
        manager = VariableManager(loader=loader, inventory=inventory)
        manager.safe_basedir = True  # as ansible-playbook sets it: vars beside the playbook count
        gpu06, gpu07 = inventory.get_host("gpu06"), inventory.get_host("gpu07")
        manager.set_host_facts("gpu01", {"ansible_ens1": {"pciid": "0000:3b:00.0"}, "ansible_hostname": "gpu01"})
        manager.set_host_facts(gpu06.name, {"fabric_node_id": 16})  # set_fact cacheable: a fact at top level
        manager.set_host_variable(gpu07, "fabric_dict", {"d": 4})  # include_vars
        manager.set_nonpersistent_facts(gpu07.name, {"fabric_rail_interfaces": ["ens11", "ens12"]})  # set_fact
        return inventory, HostVars(inventory=inventory, variable_manager=manager, loader=loader)
    return make


def reference(hostvars, hosts):
    out = {}
    for host in hosts:
        variables = hostvars[host]
        out[host] = dict((name, variables[name]) for name in NAMES if name in variables)
    return out


@pytest.mark.parametrize("behaviour", ["replace", "merge"])
@pytest.mark.parametrize("precedence", ["default", "reversed"])
def test_same_as_hostvars(world, monkeypatch, behaviour, precedence):
    monkeypatch.setattr(C, "DEFAULT_HASH_BEHAVIOUR", behaviour)
    if precedence == "reversed":
        monkeypatch.setattr(C, "VARIABLE_PRECEDENCE", list(reversed(C.VARIABLE_PRECEDENCE)))
    inventory, hostvars = world()
    hosts = sorted(h.name for h in inventory.get_hosts())
    reader = inventory_vars.InventoryVars(hostvars, NAMES)
    got = reader.get(hosts)
    assert got == reference(hostvars, hosts)
    # hostvars had to answer only for the templated id and the cached fact; every other host was read from the layers
    assert reader.fallbacks == ["gpu05", "gpu06"]
    # the layers really differ per host (else the comparison would prove little)
    ids = dict((h, int(got[h]["fabric_node_id"])) for h in hosts)  # 2.16 renders templates to strings, 2.19 to ints
    assert ids == {"gpu01": 1, "gpu02": 2, "gpu03": 3, "gpu04": 4, "gpu05": 5, "gpu06": 16, "gpu07": 7, "gpu08": 8,
                   "gpu09": 41}
    assert got["gpu04"]["fabric_rail_interfaces"] == ["ens9", "ens10"]
    assert got["gpu07"]["fabric_rail_interfaces"] == ["ens11", "ens12"]
    assert got["gpu08"]["fabric_rail_interfaces"] == ["ens7", "ens8"]
    assert got["gpu01"]["ansible_facts"]["ens1"]["pciid"] == "0000:3b:00.0"
    if behaviour == "merge":
        assert got["gpu02"]["fabric_dict"]["b"] == {"x": 1, "y": 2, "z": 3}
        assert got["gpu09"]["fabric_dict"]["big"] is True


def test_extra_vars_win(world, tmp_path):
    inventory, hostvars = world(extra_vars=['{"fabric_rail_interfaces": ["ens21", "ens22"]}'])
    hosts = sorted(h.name for h in inventory.get_hosts())
    reader = inventory_vars.InventoryVars(hostvars, NAMES)
    got = reader.get(hosts)
    assert got == reference(hostvars, hosts)
    assert set(tuple(v["fabric_rail_interfaces"]) for v in got.values()) == {("ens21", "ens22")}


def test_plain_mapping():
    """Without Ansible's HostVars (the unit tests' dicts), the names are read from the mapping as given."""
    hostvars = {"a": {"fabric_node_id": 1, "other": 2}, "b": {}}
    assert inventory_vars.host_variables({"hostvars": hostvars}, ["a", "b"], NAMES) == {
        "a": {"fabric_node_id": 1}, "b": {}}


@pytest.mark.parametrize("text", ["swp{local}", "Ethernet{rail}{node}", "{ {", "{", "}}", "plain", "{{ x }}", "a {% if x %}",
                                  "{# note #}", "#jinja2:variable_start_string:'[['\n[[ x ]]", " #jinja2:x"])
def test_a_template_is_what_ansible_core_takes_for_one(text):
    """A value is read from the layers unless ansible-core might render it: a model's port templates (a ``{`` alone)
    are plain strings to it, as to this reader (the model is then read without being rendered whole)."""
    from ansible.template import Templar

    ansible_says = Templar(loader=DataLoader()).is_possibly_template(text)
    assert inventory_vars.maybe_template(text) is ansible_says
    assert inventory_vars.maybe_template({"tors": [{"port_template": text}]}) is ansible_says
    assert inventory_vars.maybe_template({text: 1}) is ansible_says
