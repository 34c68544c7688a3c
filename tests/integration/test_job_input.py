# -*- coding: utf-8 -*-
"""Bad input fails every job (playbooks/*.yml) with one line naming the field, the value and the fix, before any host
is touched and before anything is written: ansible-playbook for real on a copy of the lab inventory (issue 32).

Every job's first play (on all:localhost, connecting to no host) checks the job's node groups and the cluster model with
the rail_plan action; a host job's second play checks its hosts against the plan lock. The control runs are the plan
job on the untouched copy."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
LAB = os.path.join(ROOT, "inventories", "lab")
# new_cluster writes a new inventory directory: it has no node group (its own input check is in test_scaffold.py)
SCAFFOLDS = ("new_cluster",)
PLAYBOOKS = sorted(os.path.splitext(n)[0] for n in os.listdir(os.path.join(ROOT, "playbooks"))
                   if n.endswith(".yml") and os.path.splitext(n)[0] not in SCAFFOLDS)
# The lines ansible-playbook may print above a job's one error line: play and task banners, the first play's result.
BANNER = re.compile(r"^(PLAY \[.*|TASK \[.*|ok: \[[^]]+\]|skipping: \[[^]]+\]|)$")


def run_job(inv, playbook, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_TIMEOUT="3",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", str(inv), os.path.join(ROOT, "playbooks", playbook + ".yml")]
    return subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture
def inv(tmp_path):
    """A copy of the lab inventory (hosts, group_vars, the constructed rails.yml source and the plan lock)."""
    path = tmp_path / "inv"
    shutil.copytree(LAB, path, ignore=shutil.ignore_patterns(".ainet-fabric"))
    return path


def edit_model(inv, change):
    path = inv / "group_vars" / "all" / "fabric.yml"
    data = yaml.safe_load(path.read_text())
    change(data["fabric_cluster"])
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def lock_as_in_lab(inv):
    with open(os.path.join(LAB, "rail_plan_lock.json")) as handle, open(inv / "rail_plan_lock.json") as copy:
        return handle.read() == copy.read()


def nothing_written(inv):
    """No plan file and the lock as it was."""
    return not (inv / ".ainet-fabric").exists() and lock_as_in_lab(inv)


def one_error(result, expected):
    """The job failed with exactly one error, on one line that holds ``expected`` and a Fix, printed for one host,
    with nothing above it but the banners; the text of that error."""
    assert result.returncode != 0, result.stdout
    assert result.stderr.strip() == "", result.stderr  # no warning (the constructed inventory source stays quiet)
    lines = result.stdout.splitlines()
    fatal = [i for i, line in enumerate(lines) if line.startswith("fatal: [")]
    assert len(fatal) == 1, result.stdout  # once, not per host
    msg = json.loads(lines[fatal[0]].split(" => ", 1)[1])["msg"]
    assert expected in msg and ". Fix: " in msg and "\n" not in msg, msg
    # ansible-core 2.19 also prints a failed task's msg as "[ERROR]: Task failed: Action failed: <msg>" followed by the
    # task's origin; 2.16 prints only the fatal line. Either way: the same line, and no other error.
    first = fatal[0]
    errors = [i for i, line in enumerate(lines) if line.startswith("[ERROR]")]
    if errors:
        assert errors == [errors[0]] and lines[errors[0]] == "[ERROR]: Task failed: Action failed: " + msg, result.stdout
        first = errors[0]
    assert [line for line in lines[:first] if not BANNER.match(line)] == [], result.stdout
    assert sum(line.count("Fix:") for line in lines) == (2 if errors else 1), result.stdout
    return msg


def test_control_the_plan_job_on_the_lab_copy_succeeds_quietly(inv):
    result = run_job(inv, "plan")
    assert result.returncode == 0, result.stdout
    assert result.stderr.strip() == "" and "Fix:" not in result.stdout
    assert (inv / ".ainet-fabric" / "lab" / "plan.json").exists()
    assert lock_as_in_lab(inv)  # the lab's lock is the plan of the lab


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_a_missing_node_group_fails_every_job(inv, playbook):
    # the k8s job reads k8s_objects_node_group (which defaults to rail_plan_node_group) and names it
    variable = "k8s_objects_node_group" if playbook == "k8s" else "rail_plan_node_group"
    msg = one_error(run_job(inv, playbook, "-e", "rail_plan_node_group=gpu_node"),
                    "%s: 'gpu_node' is not an inventory group (close: gpu_nodes). Fix: put the GPU nodes in group "
                    "'gpu_node' or name their group with -e %s=<group>" % (variable, variable))
    assert "Could not match supplied host pattern" not in msg
    assert nothing_written(inv)


@pytest.mark.parametrize("playbook,variable", [("plan", "rail_plan_node_group"), ("links", "link_test_node_group")])
def test_an_empty_node_group_fails_naming_the_variable_the_job_reads(inv, playbook, variable):
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    hosts["all"]["children"]["spare_nodes"] = {"hosts": {}}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    one_error(run_job(inv, playbook, "-e", "%s=spare_nodes" % variable),
              "%s: 'spare_nodes' is an inventory group without hosts. Fix: " % variable)
    assert nothing_written(inv)


def test_the_role_specific_node_groups_default_to_rail_plan_node_group(inv):
    """One variable for every job: the cabling job, which reads cabling_check_node_group, fails on rail_plan_node_group
    set alone (the first problem named is rail_plan_node_group's, checked first)."""
    one_error(run_job(inv, "cabling", "-e", "rail_plan_node_group=nodes"), "rail_plan_node_group: 'nodes' is not an")
    one_error(run_job(inv, "k8s", "-e", "rail_plan_node_group=nodes"), "k8s_objects_node_group: 'nodes' is not an")


def mistype_mtu(cluster):
    cluster["mtuu"] = cluster.pop("mtu")


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_a_mistyped_model_key_fails_every_job_with_one_line(inv, playbook):
    edit_model(inv, mistype_mtu)
    msg = one_error(run_job(inv, playbook), "fabric_cluster.mtuu: 9000 is not a known key. Fix: use one of: ")
    assert "Supported parameters" not in msg
    assert nothing_written(inv)


BAD_MODELS = {
    "nested key": (lambda c: c["addressing"].update(node_prefx=c["addressing"].pop("node_prefix")),
                   "fabric_cluster.addressing.node_prefx: 27 is not a known key. Fix: use one of: gateway_offset, "),
    "key in a list": (lambda c: c["tors"][1].update(port_templat=c["tors"][1].pop("port_template")),
                      "fabric_cluster.tors[1].port_templat: 'swp{node}' is not a known key. Fix: "),
    "bad value": (lambda c: c["addressing"].update(supernet="172.17.0.1/16"),
                  "fabric_cluster.addressing.supernet: '172.17.0.1/16' has host bits set. Fix: use the network address "
                  "172.17.0.0/16"),
}


@pytest.mark.parametrize("playbook", ["plan", "tors"])
@pytest.mark.parametrize("case", sorted(BAD_MODELS))
def test_bad_model_fails_with_one_line(inv, playbook, case):
    change, expected = BAD_MODELS[case]
    edit_model(inv, change)
    msg = one_error(run_job(inv, playbook), expected)
    assert "Finalization of task args" not in msg
    assert nothing_written(inv)


@pytest.mark.parametrize("playbook", ["hosts"])
def test_a_lock_from_another_model_stops_a_host_job_naming_the_plan_job(inv, playbook):
    lock = inv / "rail_plan_lock.json"
    text = lock.read_text()
    digest = re.search(r'"model": "([0-9a-f]+)"', text).group(1)
    lock.write_text(text.replace(digest, "0" * len(digest)))
    one_error(run_job(inv, playbook),
              "fabric_cluster: 'model %s' differs from the model the published plan %s was made from (model %s). "
              "Fix: publish the plan of the whole inventory first (the plan job, ansible-playbook ainet.fabric.plan, "
              % (digest, lock, "0" * len(digest)))
    assert lock.read_text() == text.replace(digest, "0" * len(digest))
    assert not (inv / ".ainet-fabric").exists()


def test_every_job_starts_with_the_check_of_its_node_groups():
    """Every job's first play is the one of playbooks/check_input.yml (imported, with the job's node groups): it runs on
    all:localhost (a play on a missing group is skipped) and checks each *_node_group the later plays target; no play
    names a group itself, and no job repeats the check's play."""
    with open(os.path.join(ROOT, "playbooks", "check_input.yml")) as handle:
        (check,) = yaml.safe_load(handle)
    assert check["hosts"] == "all:localhost" and check["any_errors_fatal"] is True and check["tags"] == ["always"]
    (task,) = check["tasks"]
    assert task["ainet.fabric.rail_plan"]["mode"] == "validate" and task["run_once"] is True
    assert task["ainet.fabric.rail_plan"]["node_groups"].startswith("{{ __ainet_job_node_groups | default(")
    for name in PLAYBOOKS:
        if name == "check_input":
            continue
        with open(os.path.join(ROOT, "playbooks", name + ".yml")) as handle:
            plays = yaml.safe_load(handle)
        first = plays[0]
        assert first["ansible.builtin.import_playbook"] == "check_input.yml", name
        groups = first["vars"]["__ainet_job_node_groups"]
        # each variable defaults as its play's hosts do: to rail_plan_node_group, then gpu_nodes
        for variable, value in groups.items():
            end = "default('gpu_nodes') }}" if variable == "rail_plan_node_group" else "default('gpu_nodes')) }}"
            assert value.startswith("{{ %s | default(" % variable) and value.endswith(end), (name, value)
        checked = set(groups)
        for play in plays[1:]:
            assert "import_playbook" not in str(play) and play.get("tasks", [{}])[0].get("ainet.fabric.rail_plan", {})\
                .get("mode") != "validate", name
            targets = set(re.findall(r"(\w+_node_group) \|", play["hosts"]))
            assert targets or play["hosts"].startswith("{{ tor_config_switch_group"), (name, play["hosts"])
            # the variable the play reads first is checked (the others are what it defaults to)
            assert not targets or re.match(r"\{\{ (\w+)", play["hosts"]).group(1) in checked, (name, play["hosts"])
