# -*- coding: utf-8 -*-
"""A vault-encrypted inventory value (``!vault``) is what ``hostvars[host][name]`` gives: the decrypted
string (ansible-core 2.19 ``Templar.template`` transforms an ``EncryptedString``:
``ansible/_internal/_templating/_transform.py`` ``_type_transform_mapping``, used in ``_engine.py``). The control: the
same value in clear text."""

from __future__ import annotations

import pytest

from ansible import context
from ansible.inventory.manager import InventoryManager
from ansible.module_utils.common.collections import ImmutableDict
from ansible.parsing.dataloader import DataLoader
from ansible.parsing.vault import VaultLib, VaultSecret, VaultSecretsContext
from ansible.utils import vars as ansible_vars
from ansible.vars.hostvars import HostVars
from ansible.vars.manager import VariableManager

from ansible_collections.ainet.fabric.plugins.plugin_utils import inventory_vars

NAMES = ("fabric_node_id", "fabric_rail_interfaces")


def _hostvars(tmp_path, monkeypatch, node_id_yaml):
    monkeypatch.setattr(context, "CLIARGS", ImmutableDict(extra_vars=()))
    monkeypatch.setattr(ansible_vars.load_extra_vars, "extra_vars", None, raising=False)
    (tmp_path / "inv" / "host_vars").mkdir(parents=True)
    (tmp_path / "pb").mkdir()
    (tmp_path / "inv" / "hosts.yml").write_text(
        "all:\n  children:\n    gpu_nodes:\n      vars:\n        fabric_rail_interfaces: [ens1]\n"
        "      hosts:\n        gpu01: {fabric_node_id: 1}\n        gpu04:\n")
    (tmp_path / "inv" / "host_vars" / "gpu04.yml").write_text("fabric_node_id: %s\n" % node_id_yaml)
    secrets = [("default", VaultSecret(b"unit-test-secret"))]
    loader = DataLoader()
    loader.set_vault_secrets(secrets)
    # as the CLI does once per process (VaultSecretsContext.initialize); undone after the test
    monkeypatch.setattr(VaultSecretsContext, "_current", VaultSecretsContext(secrets))
    loader.set_basedir(str(tmp_path / "pb"))
    inventory = InventoryManager(loader=loader, sources=[str(tmp_path / "inv")])
    manager = VariableManager(loader=loader, inventory=inventory)
    manager.safe_basedir = True
    return HostVars(inventory=inventory, variable_manager=manager, loader=loader)


def _vaulted(text):
    cipher = VaultLib([("default", VaultSecret(b"unit-test-secret"))]).encrypt(text).decode()
    return "!vault |\n" + "".join("  " + line + "\n" for line in cipher.splitlines())


@pytest.mark.parametrize("node_id_yaml", ['"4"', _vaulted("4")], ids=["clear", "vault"])
def test_same_as_hostvars(tmp_path, monkeypatch, node_id_yaml):
    hostvars = _hostvars(tmp_path, monkeypatch, node_id_yaml)
    truth = {h: {n: hostvars[h][n] for n in NAMES} for h in ("gpu01", "gpu04")}
    assert truth["gpu04"]["fabric_node_id"] == "4"
    got = inventory_vars.InventoryVars(hostvars, NAMES).get(["gpu01", "gpu04"])
    assert got == truth
    assert type(got["gpu04"]["fabric_node_id"]) is type(truth["gpu04"]["fabric_node_id"])
