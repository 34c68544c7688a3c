# -*- coding: utf-8 -*-
"""The rollout workflow of extensions/awx/configs/controller_config.yml as a graph, and what it refers to.

AWX follows a node's ``success_nodes`` when its job succeeds and its ``failure_nodes`` when it fails
(an approval node fails when denied or timed out); a node with several parents runs when one of them
leads to it (``all_parents_must_converge`` false: ansible/awx@e21dd0a awx/main/scheduler/dag_workflow.py).
Each rule below is checked on the shipped workflow (the control) and on a copy with one thing wrong.
"""

from __future__ import annotations

import copy
import os
import re

import jinja2
import pytest

from ansible_collections.ainet.fabric.tests.unit.awx_config import (
    NO_PROJECT, NO_PROJECT_REASON, CONFIGS_DIR, PROJECT_PLAYBOOKS, ROOT, load_config, load_yaml)

CONFIG = load_config()
NODES_KEY = "simplified_workflow_nodes"
LINKS = ("success_nodes", "failure_nodes", "always_nodes")
# The playbooks whose "run" jobs change hosts (validate.yml runs its roles in check mode underneath).
HOST_CHANGING = {"playbooks/site.yml", "playbooks/hosts.yml", "playbooks/qos.yml"}
GATE_PLAYBOOK = "playbooks/plan_lock_gate.yml"
# Disruptive steps (reboots, driver restarts, firmware resets) run in maintenance windows: a job that runs them comes
# after the maintenance job on every path, which finishes the windows an earlier run left (issue 41).
DISRUPTIVE = {"playbooks/site.yml"}
MAINTENANCE_PLAYBOOK = "playbooks/maintenance.yml"
# AWX's built-in credential kinds ssh, scm, registry (awx/main/models/credential.py, CredentialType.KIND_CHOICES)
BUILTIN_CREDENTIAL_TYPES = {"Machine", "Source Control", "Container Registry"}
DOC = os.path.join(ROOT, "docs", "awx.md")


def render(config, value):
    """A name as configure_aap renders it: a template over the file's own variables."""
    return jinja2.Template(value, undefined=jinja2.StrictUndefined).render(**config)


def edges(workflow):
    for node in workflow[NODES_KEY]:
        for link in LINKS:
            for child in node.get(link, []):
                yield node["identifier"], link, child


def paths(workflow):
    """Every path from the root nodes: a list of (identifier, link taken to the next node or None)."""
    nodes = {n["identifier"]: n for n in workflow[NODES_KEY]}
    children = {c for _p, _l, c in edges(workflow)}
    found = []

    def walk(ident, path):
        outgoing = [(link, child) for p, link, child in edges(workflow) if p == ident]
        assert all(child not in [i for i, _l in path] for _l, child in outgoing), "cycle at %s" % ident
        if not outgoing:
            found.append(path + [(ident, None)])
        for link, child in outgoing:
            walk(child, path + [(ident, link)])

    for root in sorted(set(nodes) - children):
        walk(root, [])
    return found


def workflow_problems(config):
    """One line per broken rule of the rollout workflow."""
    templates = {t["name"]: t for t in config["controller_templates"]}
    workflow = config["controller_workflows"][0]
    nodes = {n["identifier"]: n for n in workflow[NODES_KEY]}
    problems = []
    for node in nodes.values():
        if ("approval_node" in node) == ("unified_job_template" in node):
            problems.append("%s: neither or both of a template and an approval" % node["identifier"])
        elif "unified_job_template" in node and node["unified_job_template"] not in templates:
            problems.append("%s: no template %r" % (node["identifier"], node["unified_job_template"]))
    for parent, link, child in edges(workflow):
        if child not in nodes:
            problems.append("%s: %s names no node %r" % (parent, link, child))
    if problems:
        return problems

    def template(ident):
        return templates.get(nodes[ident].get("unified_job_template"), {})

    def changes_hosts(ident):
        return template(ident).get("job_type") == "run" and template(ident).get("playbook") in HOST_CHANGING

    def check_twin(ident, other):
        """``other`` is the check-mode run of what ``ident`` runs."""
        mine, theirs = template(ident), template(other)
        return theirs.get("job_type") == "check" and all(theirs.get(k) == mine.get(k) for k in ("playbook", "job_tags"))

    roots = [p[0][0] for p in paths(workflow)]
    if set(roots) != {"plan"}:
        problems.append("roots %s: the workflow must start with the plan" % sorted(set(roots)))
    for path in paths(workflow):
        seen = []
        for index, (ident, link) in enumerate(path):
            if changes_hosts(ident):
                # approval before host changes when the lock changed: the gate passed, or a person approved
                cleared = any(template(i).get("playbook") == GATE_PLAYBOOK and lk == "success_nodes" for i, lk in seen) or \
                    any("approval_node" in nodes[i] and lk == "success_nodes" for i, lk in seen)
                if not cleared:
                    problems.append("%s: reached without the lock gate or an approval (%s)"
                                    % (ident, " -> ".join(i for i, _l in path[:index + 1])))
                # check before apply: the first host change on every path, and every job whose check-mode
                # template exists, runs only after that check succeeded on the same path
                first = not any(changes_hosts(i) for i, _l in seen)
                twin_defined = any(t.get("job_type") == "check" and all(t.get(k) == template(ident).get(k)
                                   for k in ("playbook", "job_tags")) for t in templates.values())
                checked = any(check_twin(ident, i) and lk == "success_nodes" for i, lk in seen)
                if (first or twin_defined) and not checked:
                    problems.append("%s: no check-mode run of the same playbook and tags before it" % ident)
            if changes_hosts(ident) and template(ident).get("playbook") in DISRUPTIVE and not any(
                    template(i).get("playbook") == MAINTENANCE_PLAYBOOK and template(i).get("job_type") == "run"
                    and lk == "success_nodes" for i, lk in seen):
                problems.append("%s: a disruptive job without the maintenance job before it" % ident)
            if "approval_node" in nodes[ident] and not (
                    seen and template(seen[-1][0]).get("playbook") == GATE_PLAYBOOK and seen[-1][1] == "failure_nodes"):
                problems.append("%s: an approval reached otherwise than by the lock gate's failure" % ident)
            if template(ident).get("playbook") == GATE_PLAYBOOK and not any(
                    template(i).get("playbook") == "playbooks/plan.yml" for i, _l in seen):
                problems.append("%s: the lock gate before the plan" % ident)
            seen.append((ident, link))
    return problems


def test_the_rollout_workflow_keeps_its_rules():
    assert workflow_problems(CONFIG) == []


def _nodes(config):
    return {n["identifier"]: n for n in config["controller_workflows"][0][NODES_KEY]}


def _old_workflow(config):
    """The workflow before issue 32: plan -> rdma host -> check -> apply -> qos -> validate."""
    nodes = _nodes(config)
    nodes["plan"]["success_nodes"] = ["rdma"]
    kept = [n for i, n in nodes.items() if i not in ("lock-gate", "approve-lock", "rdma-check")]
    config["controller_workflows"][0][NODES_KEY] = kept


def _gate_straight_through(config):
    _nodes(config)["lock-gate"]["failure_nodes"] = ["rdma-check"]
    kept = [n for n in config["controller_workflows"][0][NODES_KEY] if n["identifier"] != "approve-lock"]
    config["controller_workflows"][0][NODES_KEY] = kept


def _check_after_change(config):
    nodes = _nodes(config)
    nodes["lock-gate"]["success_nodes"] = ["rdma"]
    nodes["approve-lock"]["success_nodes"] = ["rdma"]
    nodes["rdma"]["success_nodes"] = ["rdma-check"]
    nodes["rdma-check"]["success_nodes"] = ["check"]


def _check_of_other_tags(config):
    next(t for t in config["controller_templates"] if t["name"] == "ainet-fabric rdma host check")["job_tags"] = "sriov"


def _apply_without_check(config):
    _nodes(config)["rdma"]["success_nodes"] = ["apply"]
    kept = [n for n in config["controller_workflows"][0][NODES_KEY] if n["identifier"] != "check"]
    config["controller_workflows"][0][NODES_KEY] = kept


def _rdma_without_maintenance(config):
    _nodes(config)["rdma-check"]["success_nodes"] = ["rdma"]
    kept = [n for n in config["controller_workflows"][0][NODES_KEY] if n["identifier"] != "maintenance"]
    config["controller_workflows"][0][NODES_KEY] = kept


def _unknown_template(config):
    _nodes(config)["qos"]["unified_job_template"] = "ainet-fabric burn-in"


def _approval_on_success(config):
    nodes = _nodes(config)
    nodes["lock-gate"]["success_nodes"] = ["approve-lock"]
    nodes["lock-gate"]["failure_nodes"] = ["rdma-check"]


@pytest.mark.parametrize("breaking,expected", [
    (_old_workflow, "rdma: reached without the lock gate or an approval"),
    (_gate_straight_through,
     "reached without the lock gate or an approval (plan -> lock-gate -> rdma-check -> maintenance -> rdma)"),
    (_rdma_without_maintenance, "rdma: a disruptive job without the maintenance job before it"),
    (_check_after_change, "rdma: no check-mode run of the same playbook and tags before it"),
    (_check_of_other_tags, "rdma: no check-mode run of the same playbook and tags before it"),
    (_apply_without_check, "apply: no check-mode run of the same playbook and tags before it"),
    (_unknown_template, "qos: no template 'ainet-fabric burn-in'"),
    (_approval_on_success, "approve-lock: an approval reached otherwise than by the lock gate's failure"),
])
def test_a_workflow_that_breaks_one_rule_is_refused(breaking, expected):
    config = copy.deepcopy(CONFIG)
    breaking(config)
    found = workflow_problems(config)
    assert any(expected in line for line in found), found


def referenced_credentials(config):
    """(where, name) of every credential an object names, rendered as configure_aap renders it."""
    found = []
    for template in config["controller_templates"]:
        found += [(template["name"], c) for c in template.get("credentials", [])]
    for kind, key in (("controller_projects", "scm_credential"), ("controller_execution_environments", "credential"),
                      ("controller_inventory_sources", "credential")):
        found += [(item["name"], item[key]) for item in config.get(kind, []) if key in item]
    for node in config["controller_workflows"][0][NODES_KEY]:
        found += [(node["identifier"], c) for c in node.get("credentials", [])]
    return [(render(config, where), render(config, name)) for where, name in found]


def credential_problems(config):
    defined = {render(config, c["name"]): c for c in config.get("controller_credentials", [])}
    types = {t["name"] for t in config.get("controller_credential_types", [])} | BUILTIN_CREDENTIAL_TYPES
    problems = ["%s: credential %r is not defined" % (where, name)
                for where, name in referenced_credentials(config) if name not in defined]
    problems += ["%s: credential type %r is neither AWX's nor defined" % (name, c["credential_type"])
                 for name, c in defined.items() if c["credential_type"] not in types]
    return problems


def test_every_credential_an_object_names_is_defined():
    assert len(referenced_credentials(CONFIG)) == 12 and credential_problems(CONFIG) == []


@pytest.mark.parametrize("breaking,expected", [
    (lambda c: c["controller_credentials"].pop(0), "ainet-fabric check: credential 'gpu-nodes-ssh' is not defined"),
    (lambda c: c["controller_credentials"].pop(2),
     "ainet-fabric-ee: credential 'ainet-fabric-ee-registry' is not defined"),
    (lambda c: c["controller_credential_types"].pop(0),
     "tor-switches-api: credential type 'ainet-fabric ToR API' is neither AWX's nor defined"),
])
def test_a_missing_credential_is_named(breaking, expected):
    config = copy.deepcopy(CONFIG)
    breaking(config)
    assert expected in credential_problems(config)


def secret_variables(config):
    """The variables the credentials' inputs read that the file does not define: the user's secrets."""
    names = set()
    for credential in config["controller_credentials"]:
        for value in credential.get("inputs", {}).values():
            names |= set(re.findall(r"\b(ainet_awx_\w+)", str(value)))
    return sorted(names - set(config))


def test_every_secret_is_listed_in_the_config_and_the_guide():
    secrets = secret_variables(CONFIG)
    assert len(secrets) == 8, secrets
    with open(os.path.join(CONFIGS_DIR, "controller_config.yml"), encoding="utf-8") as handle:
        comments = "".join(line for line in handle if line.lstrip().startswith("#"))
    with open(DOC, encoding="utf-8") as handle:
        table = re.findall(r"^\| `(ainet_awx_\w+)` \|", handle.read(), re.M)
    assert [s for s in secrets if s not in comments] == []
    assert sorted(table) == secrets


def test_the_injector_templates_reach_awx_unrendered():
    injected = CONFIG["controller_credential_types"][0]["injectors"]["extra_vars"]
    assert injected == {"ansible_httpapi_user": "{{ username }}", "ansible_httpapi_password": "{{ password }}"}
    assert all(type(v).__name__ == "Unsafe" for v in injected.values())  # !unsafe: Ansible leaves them alone


def test_the_inventory_sync_and_every_job_run_in_the_ee_that_carries_the_collection():
    ee = {render(CONFIG, e["name"]) for e in CONFIG["controller_execution_environments"]}
    for item in CONFIG["controller_inventory_sources"] + CONFIG["controller_templates"]:
        assert render(CONFIG, item.get("execution_environment", "")) in ee, item["name"]
    source = copy.deepcopy(CONFIG["controller_inventory_sources"][0])
    del source["execution_environment"]  # the default EE has no ainet.fabric: tor_*/rail_* groups vanish
    assert render(CONFIG, source.get("execution_environment", "")) not in ee


def test_the_rollout_asks_for_the_opt_ins_of_every_job():
    workflow = CONFIG["controller_workflows"][0]
    assert workflow["ask_variables_on_launch"] is True and workflow["survey_enabled"] is True
    asked = {q["variable"] for q in workflow["survey_spec"]["spec"]}
    assert {"fabric_reboot", "sriov_firmware", "doca_ofed_version", "rail_network_takeover"} <= asked
    # every question of the node templates' surveys is asked by the workflow too (its variables win:
    # awx/main/models/workflow.py, WorkflowJobNode.get_job_kwargs), except what is per job by nature
    templates = {t["name"]: t for t in CONFIG["controller_templates"]}
    for node in workflow[NODES_KEY]:
        spec = templates.get(node.get("unified_job_template"), {}).get("survey_spec", {}).get("spec", [])
        missing = {q["variable"] for q in spec} - asked - {"rail_network_persist"}
        assert missing == set(), (node["identifier"], missing)


def test_the_configs_directory_holds_only_what_include_vars_loads():
    # configure_aap: include_vars dir=aap_configs_dir, extensions [yml], every depth; any other file
    # fails it ("Invalid file extension"), and a file that is not a mapping is refused
    for top, _dirs, files in os.walk(CONFIGS_DIR):
        for name in files:
            assert name.endswith(".yml"), os.path.join(top, name)
            assert isinstance(load_yaml(os.path.join(top, name)), dict), name


def _guide():
    with open(DOC, encoding="utf-8") as handle:
        return handle.read()


def test_the_guide_runs_configure_aap_with_the_configs_directory_and_the_connection():
    guide = _guide()
    command = re.search(r"^ansible-playbook infra\.aap_configuration\.(\w+) (.*?)$(?<!\\)", guide, re.M | re.S)
    assert command and command.group(1) == "configure_aap"
    for variable in ("aap_configs_dir", "aap_hostname", "aap_username", "aap_password", "aap_token",
                     "aap_validate_certs"):
        assert variable in guide, variable
    assert "configure_controller" not in guide.replace("`infra.aap_configuration.configure_controller`", "")


def layout_tree(block):
    """A ``tree``-style listing -> {path: depth}, each path from the repository's root (``inventory/hosts.yml``)."""
    paths, stack = {}, []
    for line in block.splitlines():
        name = re.search(r"[\w.-][^ ]*$", line).group(0)
        depth = re.search(r"[\w.-]", line).start() // 4
        del stack[depth:]
        stack.append(name)
        if depth:
            paths["".join(stack[1:])] = depth
    return paths


@pytest.mark.skipif(NO_PROJECT, reason=NO_PROJECT_REASON)
def test_the_guide_lays_out_the_project_the_config_points_at():
    layout = layout_tree(re.search(r"^```text\n(.*?)^```", _guide(), re.M | re.S).group(1))
    assert CONFIG["ainet_awx_inventory_path"] + "/rail_plan_lock.yml" in layout
    assert CONFIG["ainet_awx_inventory_path"] + "/rails.yml" in layout
    assert sorted(p for p in layout if p.startswith("playbooks/") and p != "playbooks/") == \
        sorted("playbooks/" + name for name in os.listdir(PROJECT_PLAYBOOKS))
    tors = load_yaml(os.path.join(PROJECT_PLAYBOOKS, "tors.yml"))[0]["vars"]["tor_config_running_dir"]
    running = re.match(r"\{\{ '([\w-]+)' \| ansible\.builtin\.realpath \}\}$", tors).group(1)
    assert layout.get(running + "/") == 1
