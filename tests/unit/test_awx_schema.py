# -*- coding: utf-8 -*-
"""extensions/awx/configs/controller_config.yml against the object schema AWX's own modules declare.

infra.aap_configuration applies each ``controller_*`` list by calling one module of the controller
collection per item (``awx.awx`` / ``ansible.controller``), passing each key of the item as the
module option of the same name. The option schema (names, aliases, types, choices, list elements,
required options) is the ``DOCUMENTATION`` of those modules in ``awx.awx``, which the ``ansible``
package of requirements-dev.txt installs; every object is validated against it with ansible-core's
own argument-spec validator (with the rules between options that each module's ``AnsibleModule`` call
adds: ``mutually_exclusive``, ``required_if``...), so a misspelled key, a wrong type or an unknown choice fails here
instead of being dropped (or refused) when AWX is configured.

Where infra.aap_configuration reads a key under another name than the module option it feeds, the
renames are listed below (from its roles' tasks/main.yml, redhat-cop/infra.aap_configuration at
f2302146, 2024-10): ``simplified_workflow_nodes`` of a workflow become
``workflow_job_template_node`` calls, one per node, for the workflow of the item.
"""

from __future__ import annotations

import ast
import copy
import os

import pytest
import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.ainet.fabric.tests.unit.awx_config import load_config

# infra.aap_configuration variable -> the awx.awx module its role calls for each item
MODULE_OF = {
    "controller_credential_types": "credential_type",
    "controller_credentials": "credential",
    "controller_execution_environments": "execution_environment",
    "controller_projects": "project",
    "controller_inventories": "inventory",
    "controller_inventory_sources": "inventory_source",
    "controller_templates": "job_template",
    "controller_workflows": "workflow_job_template",
}
# keys infra.aap_configuration reads under a name of its own: key -> module option
RENAMED = {
    "project": {"scm_credential": "credential", "job_timeout": "timeout"},
    "job_template": {"ask_tags": "ask_tags_on_launch", "ask_skip_tags": "ask_skip_tags_on_launch",
                     "survey": "survey_spec"},
    "workflow_job_template": {"ask_tags": "ask_tags_on_launch", "ask_skip_tags": "ask_skip_tags_on_launch",
                              "survey": "survey_spec", "destroy_current_schema": "destroy_current_nodes"},
}
NODES_KEY = "simplified_workflow_nodes"


def _awx_modules_dir():
    try:
        from ansible_collections.awx import awx  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    for top in awx.__path__:
        path = os.path.join(top, "plugins", "modules")
        if os.path.isfile(os.path.join(path, "job_template.py")):
            return path
    return None


AWX_MODULES = _awx_modules_dir()
pytestmark = pytest.mark.skipif(AWX_MODULES is None, reason="awx.awx is not installed (the ansible package of "
                                "requirements-dev.txt carries it)")


def _module_tree(module):
    with open(os.path.join(AWX_MODULES, module + ".py"), encoding="utf-8") as handle:
        return ast.parse(handle.read())


def _documentation(module):
    for node in _module_tree(module).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DOCUMENTATION" for t in node.targets):
            return yaml.safe_load(node.value.value)
    raise AssertionError("awx.awx.%s has no DOCUMENTATION" % module)


RULES = ("mutually_exclusive", "required_if", "required_one_of", "required_together", "required_by")


def _rules(module):
    """The rules between options the module's main() hands to AnsibleModule (``mutually_exclusive = [...]``)."""
    found = {}
    for node in ast.walk(_module_tree(module)):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and getattr(node.targets[0], "id", None) in RULES:
            found[node.targets[0].id] = ast.literal_eval(node.value)
    return found


def _spec(options):
    """DOCUMENTATION options -> an argument spec (what the module's own argument_spec declares)."""
    spec = {}
    for name, doc in options.items():
        entry = {"type": doc.get("type", "str")}
        for key in ("choices", "aliases", "elements", "required", "default"):
            if key in doc:
                entry[key] = doc[key]
        if "suboptions" in doc:
            entry["options"] = _spec(doc["suboptions"])
        spec[name] = entry
    return spec


_SPECS = {}


def module_spec(module):
    if module not in _SPECS:
        _SPECS[module] = (_spec(_documentation(module)["options"]), _rules(module))
    return _SPECS[module]


def errors(module, item):
    """One line per way in which ``item`` does not fit the module's options, as the module would say it."""
    params = {RENAMED.get(module, {}).get(key, key): value for key, value in item.items()}
    spec, rules = module_spec(module)
    result = ArgumentSpecValidator(spec, **rules).validate(params)
    return ["%s %r: %s" % (module, item.get("name", item.get("identifier")), msg) for msg in result.error_messages]


def config_errors(config):
    found = []
    for variable, module in MODULE_OF.items():
        for item in config.get(variable) or []:
            item = dict(item)
            nodes = item.pop(NODES_KEY, None) if module == "workflow_job_template" else None
            found += errors(module, item)
            for node in nodes or []:
                found += errors("workflow_job_template_node", dict(node, workflow_job_template=item["name"]))
    return found


CONFIG = load_config()


def test_every_object_fits_its_awx_module():
    assert config_errors(CONFIG) == []


def test_every_object_list_is_one_that_infra_aap_configuration_applies():
    lists = sorted(key for key in CONFIG if key.startswith("controller_"))
    assert lists and set(lists) <= set(MODULE_OF), lists


def test_workflow_nodes_name_templates_and_nodes_that_exist():
    templates = {t["name"] for t in CONFIG["controller_templates"]}
    for workflow in CONFIG["controller_workflows"]:
        nodes = workflow[NODES_KEY]
        identifiers = [n["identifier"] for n in nodes]
        assert len(identifiers) == len(set(identifiers)), identifiers
        for node in nodes:
            assert "approval_node" in node or node["unified_job_template"] in templates, node
            for link in ("success_nodes", "failure_nodes", "always_nodes"):
                assert set(node.get(link, [])) <= set(identifiers), (node, link)


def test_other_objects_name_what_the_file_defines():
    projects = {p["name"] for p in CONFIG["controller_projects"]}
    inventories = {i["name"] for i in CONFIG["controller_inventories"]}
    for template in CONFIG["controller_templates"]:
        assert template["project"] in projects and template["inventory"] in inventories, template["name"]
    for source in CONFIG["controller_inventory_sources"]:
        assert source["source_project"] in projects and source["inventory"] in inventories, source["name"]


@pytest.mark.parametrize("variable,index,change,expected", [
    # a misspelled key, which AWX would never see
    ("controller_templates", 0, {"job_slices": 4}, "job_slices"),
    # a choice the module refuses
    ("controller_templates", 1, {"job_type": "apply"}, "job_type"),
    # a wrong type
    ("controller_templates", 2, {"forks": "many"}, "forks"),
    ("controller_projects", 0, {"scm_type": "svnx"}, "scm_type"),
    ("controller_inventory_sources", 0, {"overwrite": "sometimes"}, "overwrite"),
])
def test_the_check_catches_a_bad_object(variable, index, change, expected):
    config = copy.deepcopy(CONFIG)
    config[variable][index].update(change)
    found = config_errors(config)
    assert len(found) == 1 and expected in found[0], found


def test_the_check_catches_a_bad_workflow_node():
    config = copy.deepcopy(CONFIG)
    config["controller_workflows"][0][NODES_KEY][0]["sucess_nodes"] = ["rdma"]
    found = config_errors(config)
    assert len(found) == 1 and "sucess_nodes" in found[0] and "workflow_job_template_node" in found[0], found


def test_renamed_keys_are_checked_under_the_option_they_feed():
    config = copy.deepcopy(CONFIG)
    config["controller_projects"][0]["job_timeout"] = "long"
    found = config_errors(config)
    assert len(found) == 1 and "timeout" in found[0], found


def test_the_check_applies_the_rules_between_options():
    # a node is either a template or an approval (workflow_job_template_node's mutually_exclusive)
    config = copy.deepcopy(CONFIG)
    node = next(n for n in config["controller_workflows"][0][NODES_KEY] if "approval_node" in n)
    node["unified_job_template"] = "ainet-fabric plan"
    found = config_errors(config)
    assert len(found) == 1 and "mutually exclusive" in found[0] and "approval_node" in found[0], found


def test_the_check_catches_a_bad_approval_node():
    config = copy.deepcopy(CONFIG)
    node = next(n for n in config["controller_workflows"][0][NODES_KEY] if "approval_node" in n)
    node["approval_node"]["timeout"] = "a day"
    found = config_errors(config)
    assert len(found) == 1 and "timeout" in found[0], found


def test_the_check_catches_a_bad_credential():
    config = copy.deepcopy(CONFIG)
    del config["controller_credentials"][0]["credential_type"]
    found = config_errors(config)
    assert len(found) == 1 and "credential_type" in found[0], found
