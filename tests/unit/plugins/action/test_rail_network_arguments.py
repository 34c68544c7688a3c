# -*- coding: utf-8 -*-
"""The rail_network role's arguments are validated on the controller by rail_interfaces' action plugin.

``playbooks/hosts.yml`` and ``site.yml`` import the role with ``rolespec_validate: false`` (the role's
implicit argument-spec task would be a second task per host). That is safe only while every variable of
the role's ``meta/argument_specs.yml`` reaches a check that runs before the host is touched:

- ``fabric_cluster``, ``fabric_node_id``, ``fabric_rail_interfaces``: the model validation and the node's plan
  in the action (``MODEL_SPEC`` and ``desired.rail``);
- every ``rail_network_*`` option passed to the module: the module's argument spec
  (``host.rail_intent.ARGUMENT_SPEC``), which the action checks before it ships the module, with the same
  type and choices as the role declares;
- the rest (``rail_network_verify_connection``) is read through ``| bool`` only.

The playbook-level proof (a wrong value fails with one line naming it, no host changed) is in
tests/integration/test_rail_network_lab.py::test_bad_input_fails_before_any_change.
"""

from __future__ import annotations

import os
import re

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.ainet.fabric.plugins.action.rail_interfaces import ActionModule
from ansible_collections.ainet.fabric.plugins.module_utils.host import rail_intent

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
ROLE = os.path.join(ROOT, "roles", "rail_network")
TEMPLATE = re.compile(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")
ONLY_AS_BOOL = {"rail_network_verify_connection"}


def _load(*parts):
    with open(os.path.join(ROLE, *parts), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _role_options():
    return _load("meta", "argument_specs.yml")["argument_specs"]["main"]["options"]


def _task_args():
    """{role variable: module option} of the role's one module task."""
    tasks = _load("tasks", "main.yml")
    assert len(tasks) == 1, "rail_network is one module call per host"
    args = tasks[0]["ainet.fabric.rail_interfaces"]
    return {TEMPLATE.match(value).group(1): option for option, value in args.items()}


def test_every_role_variable_reaches_a_controller_side_check():
    passed = _task_args()
    unchecked = set(_role_options()) - set(passed) - ONLY_AS_BOOL
    assert not unchecked, "role variables no controller-side check sees: %s" % sorted(unchecked)
    for option in passed.values():
        assert option in ActionModule.MODEL_SPEC or option in rail_intent.ARGUMENT_SPEC, option


ROLE_OPTIONS = sorted(v for v in _role_options() if v.startswith("rail_network_") and v not in ONLY_AS_BOOL)


@pytest.mark.parametrize("variable", ROLE_OPTIONS)
def test_role_and_module_declare_the_same_type_and_choices(variable):
    declared = _role_options()[variable]
    spec = rail_intent.ARGUMENT_SPEC[_task_args()[variable]]
    assert declared["type"] == spec["type"], variable
    assert declared.get("elements") == spec.get("elements"), variable
    assert sorted(declared.get("choices", [])) == sorted(spec.get("choices", [])), variable
    defaults = _load("defaults", "main.yml")
    assert defaults[variable] == spec["default"], variable


@pytest.mark.parametrize("option,value,message", [
    ("persist", "bogus", "value of persist must be one of: auto, networkd, netplan, nm, none, got: bogus"),
    ("lock_timeout", "soon", "lock_timeout"),
    ("protect_interfaces", {"a": 1}, "protect_interfaces"),
    ("prune", "maybe", "prune"),
])
def test_a_wrong_role_value_is_refused_by_the_module_spec(option, value, message):
    errors = ArgumentSpecValidator(rail_intent.ARGUMENT_SPEC).validate({option: value}).error_messages
    assert any(message in error for error in errors), errors
