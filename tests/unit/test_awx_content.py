# -*- coding: utf-8 -*-
"""The AWX objects in extensions/awx/controller_config.yml agree with the playbooks and roles."""

from __future__ import annotations

import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


CONFIG = load("extensions", "awx", "controller_config.yml")
TEMPLATES = {t["name"]: t for t in CONFIG["controller_templates"]}


def role_options(role):
    return load("roles", role, "meta", "argument_specs.yml")["argument_specs"]["main"]["options"]


def test_every_template_runs_a_playbook_of_the_collection():
    for template in TEMPLATES.values():
        assert os.path.isfile(os.path.join(ROOT, template["playbook"])), template["name"]


def test_the_plan_job_is_never_sliced_and_the_host_jobs_are():
    assert TEMPLATES["ainet-fabric plan"]["playbook"] == "playbooks/plan.yml"
    assert TEMPLATES["ainet-fabric plan"]["job_slice_count"] == 1
    assert TEMPLATES["ainet-fabric plan"]["ask_limit_on_launch"] is False
    assert TEMPLATES["ainet-fabric apply"]["job_slice_count"] > 1
    assert TEMPLATES["ainet-fabric check"]["job_type"] == "check"


def test_survey_variables_are_documented_role_variables_with_valid_choices():
    options = role_options("rail_network")
    for name in ("ainet-fabric check", "ainet-fabric apply"):
        for question in TEMPLATES[name]["survey_spec"]["spec"]:
            option = options[question["variable"]]
            assert question["default"] in question["choices"]
            if "choices" in option:
                assert set(question["choices"]) == set(option["choices"]), question["variable"]
            elif option["type"] == "bool":
                assert set(question["choices"]) == {"true", "false"}


def test_the_tor_job_is_never_sliced_and_asks_only_whether_to_push():
    template = TEMPLATES["ainet-fabric tors"]
    assert template["playbook"] == "playbooks/tors.yml" and template["job_slice_count"] == 1
    options = role_options("tor_config")
    for question in template["survey_spec"]["spec"]:
        assert options[question["variable"]]["type"] == "bool"
        assert set(question["choices"]) == {"true", "false"} and question["default"] == "false"


def test_workflow_is_plan_check_apply_qos_validate():
    nodes = {n["identifier"]: n for n in CONFIG["controller_workflows"][0]["simplified_workflow_nodes"]}
    order, node = [], "plan"
    while node:
        order.append(nodes[node]["unified_job_template"])
        node = (nodes[node].get("success_nodes") or [None])[0]
    assert order == ["ainet-fabric plan", "ainet-fabric rdma host", "ainet-fabric check", "ainet-fabric apply",
                     "ainet-fabric qos", "ainet-fabric validate"]


def test_the_rdma_host_job_runs_the_host_roles_of_site_yml_and_asks_only_opt_ins():
    template = TEMPLATES["ainet-fabric rdma host"]
    assert template["playbook"] == "playbooks/site.yml" and template["job_slice_count"] == 1  # reboots roll
    with open(os.path.join(ROOT, "playbooks", "site.yml"), encoding="utf-8") as handle:
        site = handle.read()
    plays = load("playbooks", "site.yml")
    tags = {tag for play in plays for role in play.get("roles", []) for tag in role.get("tags", [])}
    assert set(template["job_tags"].split(",")) <= tags
    sriov = role_options("sriov")
    for question in template["survey_spec"]["spec"]:
        assert set(question["choices"]) == {"true", "false"} and question["default"] == "false"
        assert question["variable"] in sriov or "%s | default(false) | bool" % question["variable"] in site


def test_inventory_source_is_the_directory_with_the_lock_and_the_constructed_groups():
    source = CONFIG["controller_inventory_sources"][0]
    assert source["source_path"] == "{{ ainet_awx_inventory_path }}"
    path = CONFIG["ainet_awx_inventory_path"]
    assert os.path.isfile(os.path.join(ROOT, path, "rail_plan_lock.json"))
    assert load(path, "rails.yml")["plugin"] == "ansible.builtin.constructed"
