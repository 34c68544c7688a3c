# -*- coding: utf-8 -*-
"""The AWX objects in extensions/awx/configs/controller_config.yml agree with the playbooks and roles."""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.tests.unit.awx_config import (
    NO_PROJECT, NO_PROJECT_REASON, PROJECT_PLAYBOOKS, ROOT, load_config, load_yaml)


def load(*parts):
    return load_yaml(os.path.join(ROOT, *parts))


CONFIG = load_config()
TEMPLATES = {t["name"]: t for t in CONFIG["controller_templates"]}


def role_options(role):
    return load("roles", role, "meta", "argument_specs.yml")["argument_specs"]["main"]["options"]


@pytest.mark.skipif(NO_PROJECT, reason=NO_PROJECT_REASON)
def test_every_template_runs_a_playbook_the_project_ships():
    # the project's playbooks/ is extensions/awx/project/playbooks/ (docs/awx.md)
    for template in TEMPLATES.values():
        directory, name = os.path.split(template["playbook"])
        assert directory == "playbooks" and os.path.isfile(os.path.join(PROJECT_PLAYBOOKS, name)), template["name"]


@pytest.mark.skipif(NO_PROJECT, reason=NO_PROJECT_REASON)
def test_the_thin_playbooks_import_the_collection_playbook_of_their_name():
    for name in sorted(os.listdir(PROJECT_PLAYBOOKS)):
        plays = load_yaml(os.path.join(PROJECT_PLAYBOOKS, name))
        imports = [play["ansible.builtin.import_playbook"] for play in plays if "ansible.builtin.import_playbook" in play]
        job = name[:-len(".yml")]
        assert imports == ["ainet.fabric." + job], name
        assert os.path.isfile(os.path.join(ROOT, "playbooks", name)), name


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


def test_the_lossless_job_is_never_sliced_or_limited_and_asks_role_options_within_their_bounds():
    template = TEMPLATES["ainet-fabric lossless"]
    assert template["playbook"] == "playbooks/lossless.yml" and template["job_slice_count"] == 1
    assert template["ask_limit_on_launch"] is False   # an incast needs its senders and receiver in one job
    assert len(template["credentials"]) == 2           # the nodes, and the ToRs whose counters are read
    options = role_options("lossless_test")
    for question in template["survey_spec"]["spec"]:
        option = options[question["variable"]]
        assert option["type"] == "int" and question["type"] == "integer", question["variable"]
        assert question["min"] <= question["default"] <= question["max"]
        assert question["default"] == option["default"], question["variable"]


def test_the_maintenance_job_is_never_sliced_and_runs_the_maintenance_role():
    template = TEMPLATES["ainet-fabric maintenance"]
    assert template["playbook"] == "playbooks/maintenance.yml" and template["job_slice_count"] == 1
    plays = load("playbooks", "maintenance.yml")
    assert [r["role"] for p in plays for r in p.get("roles", [])] == ["ainet.fabric.maintenance"]
    # the check of the hosts against the published plan is the maintenance play's first task
    check = plays[-1]["pre_tasks"][0]["block"][0]
    assert check["ansible.builtin.include_role"]["name"] == "ainet.fabric.rail_plan" and check["run_once"] is True


def test_the_tor_job_is_never_sliced_and_asks_only_whether_to_push():
    template = TEMPLATES["ainet-fabric tors"]
    assert template["playbook"] == "playbooks/tors.yml" and template["job_slice_count"] == 1
    options = role_options("tor_config")
    for question in template["survey_spec"]["spec"]:
        assert options[question["variable"]]["type"] == "bool"
        assert set(question["choices"]) == {"true", "false"} and question["default"] == "false"


def test_the_rdma_host_job_runs_the_host_roles_of_site_yml_and_asks_only_opt_ins():
    template = TEMPLATES["ainet-fabric rdma host"]
    assert template["playbook"] == "playbooks/site.yml" and template["job_slice_count"] == 1  # reboots roll
    with open(os.path.join(ROOT, "playbooks", "site.yml"), encoding="utf-8") as handle:
        site = handle.read()
    plays = load("playbooks", "site.yml")
    tags = {tag for play in plays for role in play.get("roles", []) for tag in role.get("tags", [])}
    assert set(template["job_tags"].split(",")) <= tags
    sriov, doca = role_options("sriov"), role_options("doca_ofed")
    for question in template["survey_spec"]["spec"]:
        if question["type"] == "text":
            # no default: unanswered, the inventory's value stays (AWX passes every survey default)
            assert question["variable"] in doca and "default" not in question and not question["required"]
            continue
        assert set(question["choices"]) == {"true", "false"} and question["default"] == "false"
        assert question["variable"] in sriov or "%s | default(false) | bool" % question["variable"] in site


def test_inventory_source_is_the_directory_with_the_lock_and_the_constructed_groups():
    source = CONFIG["controller_inventory_sources"][0]
    assert source["source_path"] == "{{ ainet_awx_inventory_path }}"
    # the project's inventory/ is a copy of the example inventory (docs/awx.md, getting-started step 2)
    assert CONFIG["ainet_awx_inventory_path"] == "inventory"
    assert os.path.isfile(os.path.join(ROOT, "inventories", "lab", "rail_plan_lock.yml"))
    assert load("inventories", "lab", "rails.yml")["plugin"] == "ansible.builtin.constructed"


def test_the_topology_job_runs_once_and_asks_role_options_with_their_choices():
    template = TEMPLATES["ainet-fabric topology"]
    assert template["playbook"] == "playbooks/topology.yml" and template["job_slice_count"] == 1
    assert template["ask_limit_on_launch"] is False    # the rail groups need the whole node group
    options = role_options("topology")
    for question in template["survey_spec"]["spec"]:
        option = options[question["variable"]]
        assert question["default"] in question["choices"]
        if option["type"] == "bool":
            assert set(question["choices"]) == {"true", "false"}
            assert question["default"] == str(option["default"]).lower()
        else:
            assert set(question["choices"]) == set(option["choices"]), question["variable"]
            assert question["default"] == option["default"]
