# -*- coding: utf-8 -*-
"""Bad input fails every job (playbooks/*.yml) with one line naming the field, the value and the fix, before any host
is touched and before anything is written: ansible-playbook for real on a copy of the lab inventory (issue 32), on
both ends of the ansible-core releases the collection supports (2.19, this venv's, and 2.16: ansible_cores.py).

Every job's first play (on all:localhost, connecting to no host) checks the job's node groups and the cluster model with
the rail_plan action (the plan, tors, k8s and topology jobs: the first task of their one play, the plan, render,
k8s_objects or topology action); a host
job's host play checks its hosts against the plan lock first. A user's own play that includes a role taking the model,
without that first play, gets the same one line (the roles declare the model as a plain dict; the collection's own
schema checks its keys). The control runs are the plan job on the untouched copy.

The threat model this file proves part of: docs/security.md (trust boundaries: inventory host names refused by every job).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from ansible.release import __version__ as CORE_VERSION

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ansible_cores import CORES, core_venv  # noqa: E402  pylint: disable=wrong-import-position

LAB = os.path.join(ROOT, "inventories", "lab")
# new_cluster writes a new inventory directory: it has no node group (its own input check is in test_scaffold.py)
SCAFFOLDS = ("new_cluster",)
PLAYBOOKS = sorted(os.path.splitext(n)[0] for n in os.listdir(os.path.join(ROOT, "playbooks"))
                   if n.endswith(".yml") and os.path.splitext(n)[0] not in SCAFFOLDS)
# The lines ansible-playbook may print above a job's one error line: play and task banners, the first play's result,
# the include of a role (the host jobs' check of their hosts, which includes rail_plan once; the plan job's one play
# refuses in the role's first task).
BANNER = re.compile(r"^(PLAY \[.*|TASK \[.*|ok: \[[^]]+\]|skipping: \[[^]]+\]|included: ainet\.fabric\.\w+ for \S+|)$")


@pytest.fixture(scope="session", params=sorted(CORES), ids=lambda core: "ansible-core-" + core)
def core(request):
    """The bin directory of an ansible-core the jobs run with: this venv's (2.19), and 2.16's venv."""
    if CORES[request.param] == "ansible-core==" + CORE_VERSION:
        return BIN
    path = os.path.join(core_venv(request.param), "bin")
    version = subprocess.run([os.path.join(path, "ansible-playbook"), "--version"], capture_output=True, text=True,
                             check=True).stdout
    assert "[core %s." % request.param in version, version
    return path


def run_job(core, inv, playbook, *extra):
    """``ansible-playbook -i inv <playbook> extra`` with the ansible-core of ``core`` (a bin directory); ``playbook``
    is a job's name (playbooks/<name>.yml) or a playbook's path."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_TIMEOUT="3",
               PATH=core + os.pathsep + os.environ.get("PATH", ""))
    path = playbook if os.path.isabs(playbook) else os.path.join(ROOT, "playbooks", playbook + ".yml")
    cmd = [os.path.join(core, "ansible-playbook"), "-i", str(inv), path]
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
    with open(os.path.join(LAB, "rail_plan_lock.yml")) as handle, open(inv / "rail_plan_lock.yml") as copy:
        return handle.read() == copy.read() and not (inv / "rail_plan_lock.json").exists()


def nothing_written(inv):
    """No plan file and the lock as it was."""
    return not (inv / ".ainet-fabric").exists() and lock_as_in_lab(inv)


def one_error(result, expected):
    """The job failed with exactly one error, on one line that holds ``expected`` and a Fix, printed once (for one
    host), with nothing above it but the banners, on every ansible-core (2.19 prints a failed task's msg a second
    time, as "[ERROR]: Task failed: Action failed: <msg>" with the task's origin, unless the action leaves the error
    summary out: plugins/plugin_utils/one_line.py); the text of that error."""
    assert result.returncode != 0, result.stdout
    assert result.stderr.strip() == "", result.stderr  # no warning (the constructed inventory source stays quiet)
    lines = result.stdout.splitlines()
    fatal = [i for i, line in enumerate(lines) if line.startswith("fatal: [")]
    assert len(fatal) == 1, result.stdout  # once, not per host
    msg = json.loads(lines[fatal[0]].split(" => ", 1)[1])["msg"]
    assert expected in msg and ". Fix: " in msg and "\n" not in msg, msg
    assert [line for line in lines[:fatal[0]] if not BANNER.match(line)] == [], result.stdout
    assert not [line for line in lines if re.match(r"\[ERROR\]|Origin: |ERROR!", line)], result.stdout
    assert sum(line.count("Fix:") for line in lines) == 1, result.stdout
    return msg


def test_control_the_plan_job_on_the_lab_copy_succeeds_quietly(core, inv):
    result = run_job(core, inv, "plan")
    assert result.returncode == 0, result.stdout
    assert result.stderr.strip() == "" and "Fix:" not in result.stdout
    assert (inv / ".ainet-fabric" / "lab" / "plan.json").exists()
    assert lock_as_in_lab(inv)  # the lab's lock is the plan of the lab


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_a_missing_node_group_fails_every_job(core, inv, playbook):
    # the k8s and topology jobs read their role's node group (which defaults to rail_plan_node_group) and name it
    variable = {"k8s": "k8s_objects_node_group", "topology": "topology_node_group"}.get(playbook, "rail_plan_node_group")
    msg = one_error(run_job(core, inv, playbook, "-e", "rail_plan_node_group=gpu_node"),
                    "%s: 'gpu_node' is not an inventory group (close: gpu_nodes). Fix: put the GPU nodes in group "
                    "'gpu_node' or name their group with -e %s=<group>" % (variable, variable))
    assert "Could not match supplied host pattern" not in msg
    assert nothing_written(inv)


@pytest.mark.parametrize("job", ["plan", "tors", "k8s", "topology", "plan_lock_gate", "links"])
def test_a_missing_node_group_fails_a_job_whatever_its_tags(core, inv, job):
    """--tags (an AWX job template's job tags) naming no task of the job: the input check still runs (the one-play
    jobs' play and the host jobs' check are tagged always, as check_input.yml's play is), so the job fails in one line
    instead of succeeding with nothing done (field review of issue 42: the lock gate let a workflow through so)."""
    variable = {"k8s": "k8s_objects_node_group", "topology": "topology_node_group"}.get(job, "rail_plan_node_group")
    one_error(run_job(core, inv, job, "--tags", "no_such_tag", "-e", "rail_plan_node_group=gpu_node"),
              "%s: 'gpu_node' is not an inventory group (close: gpu_nodes). Fix: " % variable)
    assert nothing_written(inv)


@pytest.mark.parametrize("playbook", ["links", "tors"])
@pytest.mark.parametrize("limit", ["gpu03", "gpu02:gpu04"])
def test_a_missing_node_group_fails_a_job_under_a_limit(core, inv, playbook, limit):
    """The first play runs on the inventory's first host and localhost, both of which a limit may leave out: under
    --limit it runs on the limit's hosts instead, so the check still runs (a play without hosts is skipped). The tors
    job's one render play targets all:localhost where the group is missing: the limit's hosts, there."""
    one_error(run_job(core, inv, playbook, "-e", "rail_plan_node_group=gpu_node", "--limit", limit),
              "rail_plan_node_group: 'gpu_node' is not an inventory group (close: gpu_nodes). Fix: ")
    assert nothing_written(inv)


def test_a_missing_node_group_fails_a_host_job_under_tags(core, inv):
    """The host job's check is its first task, not check_input.yml's play (tagged always): it is tagged always too, so
    that a run of some of the job's roles (site.yml --tags rail_network) still refuses the group before any host."""
    one_error(run_job(core, inv, "site", "-e", "rail_plan_node_group=gpu_node", "--tags", "rail_network"),
              "rail_plan_node_group: 'gpu_node' is not an inventory group (close: gpu_nodes). Fix: ")
    assert nothing_written(inv)


@pytest.mark.parametrize("playbook,variable", [("plan", "rail_plan_node_group"), ("links", "link_test_node_group"),
                                               ("tors", "rail_plan_node_group"), ("tors", "tor_config_node_group"),
                                               ("k8s", "k8s_objects_node_group"),
                                               ("topology", "topology_node_group"),
                                               ("plan_lock_gate", "rail_plan_node_group")])
def test_an_empty_node_group_fails_naming_the_variable_the_job_reads(core, inv, playbook, variable):
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    hosts["all"]["children"]["spare_nodes"] = {"hosts": {}}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    one_error(run_job(core, inv, playbook, "-e", "%s=spare_nodes" % variable),
              "%s: 'spare_nodes' is an inventory group without hosts. Fix: " % variable)
    assert nothing_written(inv)


def test_the_role_specific_node_groups_default_to_rail_plan_node_group(core, inv):
    """One variable for every job: the cabling job, which reads cabling_check_node_group, fails on rail_plan_node_group
    set alone (the first problem named is rail_plan_node_group's, checked first)."""
    one_error(run_job(core, inv, "cabling", "-e", "rail_plan_node_group=nodes"), "rail_plan_node_group: 'nodes' is not an")
    one_error(run_job(core, inv, "k8s", "-e", "rail_plan_node_group=nodes"), "k8s_objects_node_group: 'nodes' is not an")
    one_error(run_job(core, inv, "topology", "-e", "rail_plan_node_group=nodes"), "topology_node_group: 'nodes' is not an")


def mistype_mtu(cluster):
    cluster["mtuu"] = cluster.pop("mtu")


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_a_mistyped_model_key_fails_every_job_with_one_line(core, inv, playbook):
    edit_model(inv, mistype_mtu)
    msg = one_error(run_job(core, inv, playbook), "fabric_cluster.mtuu: 9000 is not a known key. Fix: use one of: ")
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


@pytest.mark.parametrize("playbook", ["plan", "tors", "k8s", "topology"])
@pytest.mark.parametrize("case", sorted(BAD_MODELS))
def test_bad_model_fails_with_one_line(core, inv, playbook, case):
    change, expected = BAD_MODELS[case]
    edit_model(inv, change)
    msg = one_error(run_job(core, inv, playbook), expected)
    assert "Finalization of task args" not in msg
    assert nothing_written(inv)


def test_the_topology_job_with_a_kubeconfig_refuses_bad_input_before_it_reads_the_cluster(core, inv):
    """With a kubeconfig the topology role reads the cluster's nodes before its action runs: rail_plan's validate checks
    the node group and the model first, so bad input is the one line and kubectl never runs (a kubeconfig that does not
    exist: its read would fail otherwise, with kubectl's error or without kubectl)."""
    change, expected = BAD_MODELS["bad value"]
    edit_model(inv, change)
    one_error(run_job(core, inv, "topology", "-e", "topology_kubeconfig=%s" % (inv / "no-such-kubeconfig")), expected)
    one_error(run_job(core, inv, "topology", "-e", "topology_node_group=gpu_node", "-e",
                      "topology_kubeconfig=%s" % (inv / "no-such-kubeconfig")),
              "topology_node_group: 'gpu_node' is not an inventory group (close: gpu_nodes). Fix: ")
    assert nothing_written(inv)


@pytest.mark.parametrize("playbook", ["plan", "tors", "k8s", "topology", "links"])
def test_a_template_in_the_model_that_does_not_render_fails_with_one_line(core, inv, playbook):
    """The model read through ansible-core's templating (hostvars, or the task's variables where the action reads
    fabric_cluster itself): an undefined variable in it is the model's one line naming ansible-core's first line of the
    error, and no value (there is none to show); a model whose template renders is the control (the lab's model).
    ansible-core 2.16's hostvars leave an undefined variable's template as it is (``HostVarsVars.__getitem__``:
    ``fail_on_undefined=False``), so where the model is read through hostvars (the other jobs' first play) the line
    is the model check's, naming the field and the unrendered template."""
    edit_model(inv, lambda c: c.update(mtu="{{ no_such_variable }}"))
    msg = one_error(run_job(core, inv, playbook), "fabric_cluster")
    unread = msg.startswith("fabric_cluster: could not be read: ") and "no_such_variable" in msg \
        and msg.endswith(". Fix: correct the cluster model (docs/cluster-model.md)")
    unrendered = msg.startswith("fabric_cluster.mtu: '{{ no_such_variable }}' is not an integer. Fix: ")
    assert unread or (unrendered and core != BIN), msg
    assert nothing_written(inv)


@pytest.mark.parametrize("playbook", ["hosts", "validate", "cabling", "links", "lossless", "nccl", "maintenance", "site"])
def test_a_lock_from_another_model_stops_a_host_job_naming_the_plan_job(core, inv, playbook):
    lock = inv / "rail_plan_lock.yml"
    text = lock.read_text()
    digest = re.search(r'\n      model: "([0-9a-f]+)"\n', text).group(1)
    lock.write_text(text.replace(digest, "0" * len(digest)))
    one_error(run_job(core, inv, playbook),
              "fabric_cluster: 'model %s' differs from the model the published plan %s was made from (model %s). "
              "Fix: publish the plan of the whole inventory first (the plan job, ansible-playbook ainet.fabric.plan, "
              % (digest, lock, "0" * len(digest)))
    assert lock.read_text() == text.replace(digest, "0" * len(digest))
    assert not (inv / ".ainet-fabric").exists()


def test_the_lock_gate_compares_the_committed_lock_file_alone(core, inv):
    """The AWX workflow's lock gate (docs/awx.md) passes where the committed lock is the plan (the control: the lab's);
    where the file is missing it stops, counting every host as added, though the plan job's artifact rail_plan_lock,
    which AWX passes to the gate as an extra variable, holds the same plan; without ainet_awx_inventory_path it is
    refused naming it. Nothing is written."""
    lock = inv / "rail_plan_lock.yml"
    published = yaml.safe_load(lock.read_text())["all"]["vars"]["rail_plan_lock"]
    gate = ("plan_lock_gate", "-e", "ainet_awx_inventory_path=%s" % inv)
    passed = run_job(core, inv, *gate)
    assert passed.returncode == 0 and "FAILED" not in passed.stdout, passed.stdout
    assert nothing_written(inv)
    lock.unlink()
    stopped = run_job(core, inv, *gate, "-e", json.dumps({"rail_plan_lock": published}))
    assert stopped.returncode == 2, stopped.stdout
    assert "The plan differs from the lock committed in %s (%d added, 0 removed, 0 changed, model changed; see the " \
        "diff above)" % (os.path.realpath(lock), len(published["nodes"].splitlines())) in stopped.stdout, stopped.stdout
    refused = run_job(core, inv, "plan_lock_gate", "-e", json.dumps({"rail_plan_lock": published}))
    assert refused.returncode == 2 and "The plan differs" not in refused.stdout, refused.stdout
    assert '"msg": "ainet_awx_inventory_path: None is not defined. Fix: pass the directory of the inventory ' \
        in refused.stdout, refused.stdout
    assert not lock.exists() and not (inv / ".ainet-fabric").exists()


# The jobs whose first play checks the input in its first task instead of check_input.yml's play (a second play over
# every node costs a job 1.6 to 3 s at 16,384 nodes, docs/performance.md): that play's role.
OWN_CHECK = {"plan": "rail_plan", "tors": "tor_config", "k8s": "k8s_objects", "topology": "topology",
             "plan_lock_gate": "rail_plan"}
# The node group a job's first play targets, where it is not rail_plan_node_group's (default gpu_nodes).
GROUP_OF = {"k8s": "k8s_objects_node_group | default(rail_plan_node_group | default('gpu_nodes'))",
            "topology": "topology_node_group | default(rail_plan_node_group | default('gpu_nodes'))"}


def assert_job_node_groups(name, groups):
    """The node groups a job checks (check_input.yml's __ainet_job_node_groups, as the job passes it): each variable
    defaults as the plays' hosts do, to rail_plan_node_group, then gpu_nodes."""
    for variable, value in groups.items():
        end = "default('gpu_nodes') }}" if variable == "rail_plan_node_group" else "default('gpu_nodes')) }}"
        assert value.startswith("{{ %s | default(" % variable) and value.endswith(end), (name, value)


def test_every_job_starts_with_the_check_of_its_node_groups():
    """Every job's first play is the one of playbooks/check_input.yml (imported, with the job's node groups): it runs on
    all:localhost (a play on a missing group is skipped) and checks each *_node_group the later plays target; no play
    names a group itself, and no job repeats the check's play. The plan, tors, k8s and topology jobs (whose first play's
    first task, the plan, render, k8s_objects or topology action, checks the same groups and model first) instead target
    all:localhost
    where the group is missing or empty (test_the_jobs_that_check_in_their_first_task_never_match_no_host), and so do
    the host jobs, whose host play's first task checks their node groups and model
    (test_a_host_job_checks_its_input_and_hosts_in_its_host_play_s_first_task)."""
    with open(os.path.join(ROOT, "playbooks", "check_input.yml")) as handle:
        (check,) = yaml.safe_load(handle)
    # one host and localhost; under --limit every host of the limit and localhost (test_..._under_a_limit)
    assert check["hosts"] == "{{ 'all:localhost' if ansible_limit is defined else 'all[0]:localhost' }}"
    assert check["any_errors_fatal"] is True and check["tags"] == ["always"]
    (task,) = check["tasks"]
    assert task["ainet.fabric.rail_plan"]["mode"] == "validate" and task["run_once"] is True
    assert task["ainet.fabric.rail_plan"]["node_groups"].startswith("{{ __ainet_job_node_groups | default(")
    for name in PLAYBOOKS:
        if name == "check_input" or name in OWN_CHECK or name in HOST_JOBS:
            continue
        with open(os.path.join(ROOT, "playbooks", name + ".yml")) as handle:
            plays = yaml.safe_load(handle)
        first = plays[0]
        assert first["ansible.builtin.import_playbook"] == "check_input.yml", name
        groups = first["vars"]["__ainet_job_node_groups"]
        assert_job_node_groups(name, groups)
        checked = set(groups)
        for play in plays[1:]:
            assert "import_playbook" not in str(play) and play.get("tasks", [{}])[0].get("ainet.fabric.rail_plan", {})\
                .get("mode") != "validate", name
            targets = set(re.findall(r"(\w+_node_group) \|", play["hosts"]))
            assert targets or play["hosts"].startswith("{{ tor_config_switch_group"), (name, play["hosts"])
            # the variable the play reads first is checked (the others are what it defaults to)
            assert not targets or re.match(r"\{\{ (\w+)", play["hosts"]).group(1) in checked, (name, play["hosts"])


HOST_JOBS = ("validate", "cabling", "links", "lossless", "hosts", "nccl", "maintenance", "site")


# Each host job's node groups (the groups its plays target, or its roles read), each defaulting to rail_plan_node_group.
HOST_JOB_NODE_GROUPS = {"validate": ["lossless_check_node_group"], "cabling": ["cabling_check_node_group"],
                        "links": ["link_test_node_group"], "lossless": ["lossless_test_node_group"], "hosts": [],
                        "nccl": [], "maintenance": [], "site": []}


def test_a_host_job_checks_its_input_and_hosts_in_its_host_play_s_first_task():
    """A host job does not import check_input.yml (its play planned the same nodes once more, and every play over the
    node group costs each host a step per task and two more: docs/performance.md, "The rules"). Its first play is the
    host play, on its node group, or on all:localhost where that group is missing or has no hosts (a play on a missing
    group would be skipped and the job succeed; test_a_missing_node_group_fails_every_job,
    test_an_empty_node_group_fails_naming_the_variable_the_job_reads, test_a_missing_node_group_fails_a_job_under_a_limit).
    Its first task is the rail_plan role's check entry point, included once (run_once), connecting to no host (become:
    false), stopping every host on a refusal (any_errors_fatal) and run under any --tags (always): the job's node
    groups and the model first, then the play's hosts against the published plan."""
    for name in HOST_JOBS:
        with open(os.path.join(ROOT, "playbooks", name + ".yml")) as handle:
            plays = yaml.safe_load(handle)
        assert "import_playbook" not in json.dumps(plays), name
        first = plays[0]
        target = re.match(r"\{\{ 'all:localhost' if not groups\[(.+?)\] \| default\(\[\]\) else (.+?) \}\}$",
                          " ".join(first["hosts"].split()))
        assert target and target.group(1) == target.group(2), (name, first["hosts"])
        (check, *_rest) = first.get("pre_tasks") or first["tasks"]
        assert check["become"] is False and check["any_errors_fatal"] is True and check["tags"] == ["always"], name
        (include,) = check["block"]
        assert include["ansible.builtin.include_role"] == {"name": "ainet.fabric.rail_plan", "tasks_from": "check"}
        assert include["run_once"] is True, name
        groups = (include.get("vars") or {}).get("rail_plan_job_node_groups", {})
        assert sorted(groups) == HOST_JOB_NODE_GROUPS[name], name
        for variable, value in groups.items():
            assert value == "{{ %s | default(rail_plan_node_group | default('gpu_nodes')) }}" % variable, (name, value)
        # the group the play targets is one the check checks
        variable = re.match(r"(\w+) \|", target.group(1)).group(1)
        assert variable == "rail_plan_node_group" or variable in groups, (name, first["hosts"])
        assert "pre_tasks" in first or not first.get("roles"), name  # before the play's roles
        for play in plays[1:]:  # no other play checks, or includes rail_plan
            assert "ainet.fabric.rail_plan" not in json.dumps(play), (name, play["name"])
    with open(os.path.join(ROOT, "roles", "rail_plan", "tasks", "check.yml")) as handle:
        (task, summary) = yaml.safe_load(handle)  # the check and its summary line: each costs every host a step
    assert summary["ansible.builtin.debug"] == {"msg": "{{ %s.msg }}" % task["register"]}
    assert task["ainet.fabric.rail_plan"]["mode"] == "check" and task["ainet.fabric.rail_plan"]["check_play_hosts"] is True
    assert task["ainet.fabric.rail_plan"]["node_groups"] == (
        "{{ {'rail_plan_node_group': rail_plan_node_group} | combine(rail_plan_job_node_groups) }}")


@pytest.mark.parametrize("name", sorted(OWN_CHECK))
def test_the_jobs_that_check_in_their_first_task_never_match_no_host(name):
    """The plan, tors, k8s and topology jobs and the AWX workflow's lock gate do not import check_input.yml (a second
    play over 16,384 nodes costs a job 1.6 to 3 s, docs/performance.md): their first play targets the group's first node, or all:localhost where that group is
    missing or has no hosts, so that the play always has a host and its first task, the role's action (after the
    role's argument check), refuses the group in one line (test_a_missing_node_group_fails_every_job,
    test_an_empty_node_group_fails_naming_the_variable_the_job_reads); the topology role's tasks before its action run
    only with a kubeconfig, and the first of them is rail_plan's validate of the same group (check_input.yml's check),
    before the cluster is read. Under --limit the plan, k8s and topology jobs' play is the group and then every other
    host (any limit plans, renders: test_plan_limit, test_k8s_playbook, test_topology_playbook), the tors
    job's the group (a limit without a node of it renders nothing: test_tor_config_playbook). A refusal ends the job
    (any_errors_fatal; the tors job's push play never starts: test_tor_config_playbook). No later play checks the
    input again or targets a node group. The lock gate's play is the plan job's, its first task the rail_plan action
    itself (assert_the_lock_gate_reads_its_inputs)."""
    role = OWN_CHECK[name]
    limited = {"plan": ":all", "tors": "", "k8s": ":all", "topology": ":all", "plan_lock_gate": ":all"}[name]
    group = GROUP_OF.get(name, "rail_plan_node_group | default('gpu_nodes')")
    with open(os.path.join(ROOT, "playbooks", name + ".yml")) as handle:
        (play, *rest) = yaml.safe_load(handle)
    assert " ".join(play["hosts"].split()) == ("{{ 'all:localhost' if not groups[%s] | default([]) else (%s) ~ ('%s' "
                                               "if ansible_limit is defined else '[0]') }}" % (group, group, limited))
    assert play["any_errors_fatal"] is True
    if name == "plan_lock_gate":
        assert_the_lock_gate_reads_its_inputs(play["tasks"])
        assert not rest
        return
    (task,) = play["tasks"]
    assert task["ansible.builtin.include_role"]["name"] == "ainet.fabric." + role and task["run_once"] is True
    entry = task["ansible.builtin.include_role"].get("tasks_from", "main")
    with open(os.path.join(ROOT, "roles", role, "tasks", entry + ".yml")) as handle:
        tasks = yaml.safe_load(handle)
    if name == "topology":  # with a kubeconfig only: rail_plan's validate of the group, then the read of the nodes
        (check, read, first) = tasks[:3]
        assert check["ainet.fabric.rail_plan"] == {"mode": "validate",
                                                   "node_groups": {"topology_node_group": "{{ topology_node_group }}"}}
        assert "ansible.builtin.command" in read
        assert check["when"] == read["when"] == "topology_kubeconfig | length > 0"
    else:
        first = tasks[0]
    assert "when" not in first, name
    if name == "plan":
        assert first["ainet.fabric.rail_plan"]["mode"] == "{{ rail_plan_mode }}"
    elif name in ("k8s", "topology"):  # its one node group, the role's own variable
        assert first["ainet.fabric." + role]["node_group"] == "{{ %s_node_group }}" % role and not rest
        assert "cluster" not in first["ainet.fabric." + role], name  # the model read by the action
    else:  # the job's node groups, in check_input.yml's form and order
        groups = task["vars"]["__ainet_job_node_groups"]
        assert_job_node_groups(name, groups)
        assert list(groups) == ["rail_plan_node_group", "tor_config_node_group"]
        assert first["ainet.fabric.tor_config"]["node_groups"] == "{{ __ainet_job_node_groups | default(omit) }}"
    for other in rest:
        assert "import_playbook" not in str(other) and "_node_group" not in other["hosts"], (name, other)


def assert_the_lock_gate_reads_its_inputs(tasks):
    """The AWX workflow's lock gate: the rail_plan action itself, its first task, checks the node group (check_input.yml's
    form) and reads the model and the nodes untemplated (no cluster or nodes argument: "{{ fabric_cluster }}" and a
    node_map(hostvars) template the whole model and every node's variables); the assert after it reads a few scalars of
    the result (the lock's file, the counts of the hosts it changes), never the lock or the plan themselves."""
    (gate, ask) = tasks
    action = gate["ainet.fabric.rail_plan"]
    assert action["mode"] == "plan" and gate["check_mode"] is True and gate["run_once"] is True and "when" not in gate
    assert action["node_groups"] == {"rail_plan_node_group": "{{ rail_plan_node_group | default('gpu_nodes') }}"}
    assert "cluster" not in action and "nodes" not in action and action["lock"] == {}
    templates = re.findall(r"\{[{%](.*?)[}%]\}", json.dumps(tasks))
    assert templates and not re.search(r"fabric_cluster|hostvars|node_map|rail_plan_lock(?![.\w])", " ".join(templates)), templates
    assert ask["run_once"] is True and ask["ansible.builtin.assert"]["that"] == [
        "ainet_awx_inventory_path is defined", "%s is not changed" % gate["register"]]
    used = re.findall(re.escape(gate["register"]) + r"([.\w]*(?: \| \w+)?)", ask["ansible.builtin.assert"]["fail_msg"])
    assert sorted(set(used)) == [".lock_changes.added | length", ".lock_changes.changed | length", ".lock_changes.model",
                                 ".lock_changes.removed | length", ".lock_file"], used


def own_play(tmp_path, role, hosts="gpu_nodes"):
    """A user's own playbook that includes ``role`` on ``hosts``, without the jobs' first play."""
    path = tmp_path / "own.yml"
    path.write_text(yaml.safe_dump([{"name": "My own play", "hosts": hosts, "gather_facts": False,
                                     "roles": [{"role": "ainet.fabric." + role}]}], sort_keys=False))
    return str(path)


@pytest.mark.parametrize("role", ["rail_plan", "tor_config", "lossless_check"])
@pytest.mark.parametrize("case", ["nested key", "key in a list"])
def test_a_users_own_play_with_a_role_gets_the_one_line(core, inv, tmp_path, role, case):
    """The role's argument spec takes the model as a plain dict, so a mistyped key at any depth reaches the role's
    first task (the rail_plan action), not ansible-core's check of the role's arguments with its list of every
    supported parameter."""
    change, expected = BAD_MODELS[case]
    edit_model(inv, change)
    msg = one_error(run_job(core, inv, own_play(tmp_path, role)), expected)
    assert "Supported parameters" not in msg
    assert nothing_written(inv)


def test_a_users_own_play_with_a_host_role_gets_the_one_line_per_host(core, inv, tmp_path):
    """A host role (rail_network) refuses the model on the controller, before its host is contacted: one line per
    host of the play, each the collection's own, nothing else (no host is reachable: an attempt would say so)."""
    change, expected = BAD_MODELS["nested key"]
    edit_model(inv, change)
    result = run_job(core, inv, own_play(tmp_path, "rail_network"))
    assert result.returncode != 0 and result.stderr.strip() == "", result.stdout + result.stderr
    lines = result.stdout.splitlines()
    fatal = [line for line in lines if line.startswith("fatal: [")]
    assert len(fatal) == len(yaml.safe_load((inv / "hosts.yml").read_text())["all"]["children"]["gpu_nodes"]
                             ["hosts"]), result.stdout
    for line in fatal:
        assert json.loads(line.split(" => ", 1)[1])["msg"].startswith(expected), line
    assert [line for line in lines[:lines.index(fatal[0])] if not BANNER.match(line)] == [], result.stdout
    assert not [line for line in lines if re.match(r"\[ERROR\]|Origin: |ERROR!|.*UNREACHABLE", line)], result.stdout
    assert sum(line.count("Fix:") for line in lines) == len(fatal), result.stdout


def test_a_refusal_still_meets_rescue_ignore_errors_and_failed_when(core, tmp_path):
    """On 2.19 the refusal is raised with its result (one_line.py), which the task executor turns into the failed
    result: register, rescue and ignore_errors see it as they see a returned one, and failed_when still decides (the
    action returns the result where the task has failed_when)."""
    addressing = {"mode": "shared", "supernet": "10.9.0.0/16", "rail_prefix": 24}
    task = {"ainet.fabric.rail_plan": {"mode": "validate", "nodes": {}, "cluster": {
        "name": "x", "rails": 1, "mtuu": 1, "addressing": addressing}}}
    expected = "fabric_cluster.mtuu: 1 is not a known key. Fix: "
    play = {"name": "Refusals", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "Rescued", "block": [dict(task, name="Refused")],
         "rescue": [{"name": "Seen by rescue", "ansible.builtin.assert": {
             "that": ["ansible_failed_result.msg is search('%s')" % re.escape(expected)]}}]},
        dict(task, name="Ignored", register="ignored", ignore_errors=True),
        dict(task, name="Not failed", register="judged", failed_when="'mtuu' not in judged.msg"),
        {"name": "Registered", "ansible.builtin.assert": {"that": [
            "ignored is failed", "ignored.msg is search('%s')" % re.escape(expected),
            "judged is not failed", "judged.msg is search('%s')" % re.escape(expected)]}}]}
    path = tmp_path / "refusals.yml"
    path.write_text(yaml.safe_dump([play], sort_keys=False))
    result = run_job(core, "localhost,", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok=4 " in result.stdout and "failed=0" in result.stdout and "rescued=1" in result.stdout and "ignored=1" in result.stdout, result.stdout
    assert not [line for line in result.stdout.splitlines() if re.match(r"\[ERROR\]|Origin: ", line)], result.stdout


@pytest.mark.parametrize("playbook", ["plan", "tors", "k8s", "topology"])
@pytest.mark.parametrize("hostile", ["gpu02\\nusername evil privilege 15 secret 0 x", "gpu02 ;username evil"])
def test_a_host_name_that_would_add_a_switch_command_fails_the_job_before_anything_is_written(core, inv, playbook,
                                                                                              hostile):
    """Issue 39: an inventory host name is placed in every ToR port description; one holding a line break (a new EOS
    command) or ' ;' (NX-API's command separator) is refused where the node group is read, in one line."""
    hosts = inv / "hosts.yml"
    hosts.write_text(hosts.read_text().replace("        gpu02:\n", '        "%s":\n' % hostile))
    msg = one_error(run_job(core, inv, playbook), "inventory_hostname: %r is not a host name a node may have"
                    % hostile.replace("\\n", "\n"))
    assert "RFC 1123" in msg
    assert nothing_written(inv)
