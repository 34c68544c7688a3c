# -*- coding: utf-8 -*-
"""The collection as AWX runs it: ansible-runner over an AWX-style private data dir.

AWX hands ansible-runner a private data dir: ``project/`` (the synced project), ``inventory/hosts``
(an executable script that prints the job's inventory as JSON: for a sliced job only the slice's
hosts), ``env/extravars`` (the template's and the workflow's variables, among them the artifacts
that earlier workflow jobs published with set_stats) and ``env/envvars``. The collection comes from
the execution environment's collections path, here the built tarball installed into an empty
directory. Where the test runs as root, the jobs run as an unprivileged uid with their own HOME, as
AWX's job user does.

The verdicts come from what AWX would store: the job events and the artifacts in
``artifacts/<ident>/``, and the hosts' live state in the container-lab test.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
JOB_UID = 1000  # AWX's job user in the execution environment

sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))

CLUSTER = {"name": "awx", "rails": 4, "mtu": 9000, "management_networks": ["10.250.0.0/24"],
           "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27}}
NICS = ["ens6f0np0", "ens6f1np1", "ens7f0np0", "ens7f1np1"]


@pytest.fixture(scope="module")
def base():
    """A directory the job uid can enter (pytest's own are private to root)."""
    path = tempfile.mkdtemp(prefix="awx")
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture()
def tmp_path(base, request):
    # short: HOME is the job's dir, and ssh's control sockets under it have a length limit
    path = tempfile.mkdtemp(prefix="t", dir=base)
    os.chmod(path, 0o755)
    return path


@pytest.fixture(scope="module")
def collections(base):
    """The built tarball installed into an empty collections path, as in the execution environment."""
    import pathlib
    out = pathlib.Path(base) / "ee"
    out.mkdir()
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"])
    env.pop("ANSIBLE_CONFIG", None)
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--force", "--output-path",
                    str(out), ROOT], check=True, capture_output=True, env=env, cwd=str(out))
    tarball = glob.glob(str(out / "ainet-fabric-*.tar.gz"))[0]
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--offline", "-p",
                    str(out / "collections"), tarball], check=True, capture_output=True, env=env, cwd=str(out))
    return str(out / "collections")


def inventory_script(hosts, group_vars, host_vars):
    """AWX's inventory: an executable printing the job's hosts (a slice's only) as JSON."""
    data = {"all": {"children": ["gpu_nodes"], "vars": group_vars},
            "gpu_nodes": {"hosts": sorted(hosts)},
            "_meta": {"hostvars": {h: host_vars[h] for h in hosts}}}
    return "#!/bin/sh\ncat <<'JSON'\n%s\nJSON\n" % json.dumps(data)


def slices(hosts, count):
    """AWX's job slicing: slice n of count gets hosts[n-1::count] of the sorted host list."""
    ordered = sorted(hosts)
    return [ordered[n::count] for n in range(count)]


def _job_user_can_run():
    """Whether the job uid can run this venv's Python (not when it lives under a private /root)."""
    if os.geteuid() != 0:
        return False
    # through env: a second exec, after which no capability of root's is left (setpriv's own exec
    # may still traverse a private /root, where a pyenv Python may live)
    probe = subprocess.run(["setpriv", "--reuid=%d" % JOB_UID, "--regid=%d" % JOB_UID, "--clear-groups", "--",
                            "/usr/bin/env", os.path.join(BIN, "ansible-runner"), "--version"],
                           capture_output=True, check=False)
    return probe.returncode == 0


AS_JOB_USER = _job_user_can_run()


class Job(object):
    """One ansible-runner job in an AWX-style private data dir; runs as the job uid where possible."""

    def __init__(self, base, name, collections, playbook, hosts, group_vars, host_vars, extravars=None,
                 cmdline=""):
        self.dir = os.path.join(str(base), name)
        project = os.path.join(self.dir, "project")
        shutil.copytree(os.path.join(ROOT, "playbooks"), os.path.join(project, "playbooks"))
        os.makedirs(os.path.join(self.dir, "inventory"))
        os.makedirs(os.path.join(self.dir, "env"))
        script = os.path.join(self.dir, "inventory", "hosts")
        with open(script, "w") as handle:
            handle.write(inventory_script(hosts, group_vars, host_vars))
        os.chmod(script, 0o755)
        env = {"ANSIBLE_COLLECTIONS_PATH": collections, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0",
               "HOME": self.dir, "ANSIBLE_LOCAL_TEMP": os.path.join(self.dir, "tmp"),
               "ANSIBLE_HOST_KEY_CHECKING": "False"}
        with open(os.path.join(self.dir, "env", "envvars"), "w") as handle:
            json.dump(env, handle)
        with open(os.path.join(self.dir, "env", "extravars"), "w") as handle:
            json.dump(extravars or {}, handle)
        if cmdline:
            with open(os.path.join(self.dir, "env", "cmdline"), "w") as handle:
                handle.write(cmdline)
        self.playbook = "playbooks/" + playbook

    def run(self, as_job_user=True):
        cmd = [os.path.join(BIN, "ansible-runner"), "run", self.dir, "-p", self.playbook, "--ident", "job"]
        env = dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"])
        env.pop("ANSIBLE_CONFIG", None)
        if as_job_user and AS_JOB_USER:
            subprocess.run(["chown", "-R", "%d:%d" % (JOB_UID, JOB_UID), self.dir], check=True)
            cmd = ["setpriv", "--reuid=%d" % JOB_UID, "--regid=%d" % JOB_UID, "--clear-groups", "--"] + cmd
        self.result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False,
                                     cwd=self.dir)
        return self

    @property
    def artifacts(self):
        return os.path.join(self.dir, "artifacts", "job")

    @property
    def rc(self):
        path = os.path.join(self.artifacts, "rc")
        assert os.path.exists(path), "ansible-runner failed: %s%s" % (self.result.stdout, self.result.stderr)
        with open(path) as handle:
            return int(handle.read())

    @property
    def stdout(self):
        with open(os.path.join(self.artifacts, "stdout")) as handle:
            return handle.read()

    def events(self):
        found = []
        for path in glob.glob(os.path.join(self.artifacts, "job_events", "*.json")):
            with open(path) as handle:
                found.append((os.path.getsize(path), json.load(handle)))
        return sorted(found, key=lambda item: item[1]["counter"])

    def stats(self):
        return [e for _size, e in self.events() if e["event"] == "playbook_on_stats"][0]["event_data"]

    def failures(self):
        return [e["event_data"]["res"].get("msg", "") for _size, e in self.events() if e["event"] == "runner_on_failed"]


def host_vars_for(node_ids):
    return {h: {"fabric_node_id": n} for h, n in node_ids.items()}


GROUP_VARS = {"fabric_cluster": CLUSTER, "fabric_rail_interfaces": NICS}
NODES = {"gpu01": 1, "gpu02": 2, "gpu03": 3, "gpu04": 4}


def test_plan_job_publishes_the_lock_as_artifacts_and_is_idempotent(tmp_path, collections):
    job = Job(tmp_path, "plan", collections, "plan.yml", NODES, GROUP_VARS, host_vars_for(NODES)).run()
    assert job.rc == 0, job.stdout
    lock = job.stats()["artifact_data"]["rail_plan_lock"]
    # format 2: four scalars, the hosts one line each (<host> <node id>: <rails>)
    assert sorted(lock) == ["cluster", "model", "nodes", "version"] and lock["version"] == 2
    lines = lock["nodes"].splitlines()
    assert {line.split()[0]: int(line.split()[1].rstrip(":")) for line in lines} == NODES
    assert lines[1].startswith("gpu02 2: default 1 ens6f0np0 172.17.0.34/27, ")
    assert job.stats()["changed"] == {"gpu01": 1}
    # The files went beside the job's inventory, never into the project or the collection.
    assert os.path.exists(os.path.join(job.dir, "inventory", ".ainet-fabric", "awx", "plan.json"))
    assert os.path.exists(os.path.join(job.dir, "inventory", "rail_plan_lock.yml"))
    assert sorted(os.listdir(os.path.join(job.dir, "project"))) == ["playbooks"]
    # Under --limit the plan still covers the whole inventory (no "no hosts matched").
    limited = Job(tmp_path, "plan-limit", collections, "plan.yml", NODES, GROUP_VARS, host_vars_for(NODES),
                  cmdline="--limit gpu03").run()
    assert limited.rc == 0, limited.stdout
    assert limited.stats()["artifact_data"]["rail_plan_lock"] == lock
    # As the AWX template runs it: no files in the throwaway project copy, and changed only when
    # the plan differs from the lock committed with the inventory (synced as rail_plan_lock).
    awx_vars = {"rail_plan_write_files": False}
    synced = dict(GROUP_VARS, rail_plan_lock=lock)
    same = Job(tmp_path, "plan-awx", collections, "plan.yml", NODES, synced, host_vars_for(NODES), awx_vars).run()
    assert same.rc == 0, same.stdout
    assert not same.stats()["changed"] and same.stats()["artifact_data"]["rail_plan_lock"] == lock
    assert sorted(os.listdir(os.path.join(same.dir, "project"))) == ["playbooks"]
    assert sorted(os.listdir(os.path.join(same.dir, "inventory"))) == ["hosts"]
    grown = dict(NODES, gpu05=5)
    more = Job(tmp_path, "plan-awx-grown", collections, "plan.yml", grown, synced, host_vars_for(grown), awx_vars,
               cmdline="--diff").run()
    assert more.rc == 0, more.stdout
    assert more.stats()["changed"] == {"gpu01": 1}
    assert "+        gpu05 5: default 1 ens6f0np0 172.17.0.130/27, " in more.stdout
    assert "1 added, 0 removed, 0 changed" in more.stdout


def test_duplicate_node_id_fails_the_plan_and_every_slice(tmp_path, collections):
    good = Job(tmp_path, "plan", collections, "plan.yml", NODES, GROUP_VARS, host_vars_for(NODES)).run()
    published = good.stats()["artifact_data"]["rail_plan_lock"]
    broken = dict(NODES, gpu04=1)
    plan = Job(tmp_path, "plan-dup", collections, "plan.yml", broken, GROUP_VARS, host_vars_for(broken)).run()
    assert plan.rc != 0
    assert plan.failures() == ["hostvars[gpu04].fabric_node_id: 1 is already the node id of gpu01. "
                               "Fix: give every node a unique fabric_node_id"]
    assert "artifact_data" not in plan.stats() or not plan.stats()["artifact_data"]
    # The failed plan published nothing: every slice of the host job refuses, without a lock.
    for number, hosts in enumerate(slices(broken, 2), 1):
        job = Job(tmp_path, "apply-%d" % number, collections, "hosts.yml", hosts, GROUP_VARS,
                  host_vars_for({h: broken[h] for h in hosts})).run()
        assert job.rc != 0, job.stdout
        assert len(job.failures()) == 1 and "no published plan (rail_plan_lock) was passed" in job.failures()[0]
        assert job.stats()["ok"].keys() <= set(hosts) and not job.stats()["changed"]
    # With the last good plan passed on (a stale workflow artifact), the slice holding the
    # newcomer refuses, naming the host the plan gave that id to; no slice reaches a host.
    for number, hosts in enumerate(slices(broken, 2), 1):
        job = Job(tmp_path, "apply-stale-%d" % number, collections, "hosts.yml", hosts, GROUP_VARS,
                  host_vars_for({h: broken[h] for h in hosts}), extravars={"rail_plan_lock": published}).run()
        if "gpu04" in hosts:
            assert job.rc != 0
            assert job.failures()[0].startswith("hostvars[gpu04].fabric_node_id: 1 disagrees with the published plan "
                                                "rail_plan_lock, which gives gpu04 node id 4 and node id 1 to gpu01")
        else:
            # gpu01 and gpu03 are exactly as the published plan has them; the lab-less hosts
            # are then unreachable, which shows the gate let them through.
            assert "no published plan" not in job.stdout and "disagrees" not in job.stdout


def test_check_mode_plan_of_a_large_cluster_keeps_job_events_small(tmp_path, collections):
    nodes = {"gpu%04d" % n: n for n in range(1, 1025)}
    addressing = {"mode": "exclusive", "supernet": "172.16.0.0/12", "rail_prefix": 16, "node_prefix": 27}
    cluster = dict(CLUSTER, rails=8, addressing=addressing)
    group_vars = {"fabric_cluster": cluster, "fabric_rail_interfaces": ["ens%df0np0" % i for i in range(8)]}
    for name, cmdline in (("check", "--check --diff"), ("real", "--diff")):
        job = Job(tmp_path, "plan-" + name, collections, "plan.yml", nodes, group_vars, host_vars_for(nodes),
                  cmdline=cmdline).run()
        assert job.rc == 0, (job.failures(), job.stdout[:3000])
        biggest = max(size for size, _event in job.events())
        # the lock of 1,024 x 8 is about 350 kB and travels once in the task result; the
        # 15 MB diff of the whole plan.json is gone (the diff names the rewritten files)
        assert biggest < 1000000, (name, biggest)


@pytest.mark.skipif(os.geteuid() != 0, reason="the container lab needs root")
@pytest.mark.skipif(not all(shutil.which(c) for c in ("podman", "runc", "mmdebstrap")),
                    reason="the container lab needs podman, runc and mmdebstrap (tests/molecule.sh installs them)")
def test_workflow_plan_check_sliced_apply_validate_on_the_container_lab(tmp_path, collections):
    """The rollout workflow of extensions/awx on three rebootable nodes, in two slices.

    The jobs reach the nodes through the lab's namespace relay, which needs root, so they run
    as root here (the uid of AWX's job user is exercised by the jobs above); the login on the
    nodes is the unprivileged user ops, and the host play becomes root with sudo.
    """
    sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
    import test_rail_network_lab as t  # pylint: disable=import-outside-toplevel
    from test_rail_network_lab import lab  # pylint: disable=import-outside-toplevel
    nodes = {"gpu01": 1, "gpu02": 2, "gpu05": 5}
    lab_dir = os.path.join(tmp_path, "lab")
    cluster = t.cluster_for("exclusive")
    try:
        inventory, plan = lab.build(cluster, nodes, t.INTERFACES, lab_dir, kind="containers")
        with open(os.path.join(inventory, "hosts.yml")) as handle:
            import yaml  # pylint: disable=import-outside-toplevel
            group = yaml.safe_load(handle)["all"]["children"]["gpu_nodes"]
        group_vars = dict(group["vars"], fabric_cluster=cluster)
        host_vars = group["hosts"]

        def job(name, playbook, hosts, extravars=None, cmdline=""):
            return Job(tmp_path, name, collections, playbook, hosts, group_vars, host_vars, extravars,
                       cmdline).run(as_job_user=False)

        planned = job("plan", "plan.yml", nodes)
        assert planned.rc == 0, planned.stdout
        # what the workflow passes on: the plan job's artifacts, as extra vars
        artifacts = planned.stats()["artifact_data"]
        check = job("check", "hosts.yml", nodes, artifacts, "--check --diff")
        assert check.rc == 0, check.stdout
        assert check.stats()["changed"] == {h: 1 for h in nodes}
        assert "172.17.0.130/27" not in lab.ip("addr", "show", ns=lab.node_ns("gpu05"))  # check mode left it alone
        parts = slices(nodes, 2)
        assert parts == [["gpu01", "gpu05"], ["gpu02"]]
        for number, hosts in enumerate(parts, 1):
            applied = job("apply-%d" % number, "hosts.yml", hosts, artifacts)
            assert applied.rc == 0, applied.stdout
            assert applied.stats()["changed"] == {h: 1 for h in hosts}
        t.ping_matrix(plan, cluster["mtu"], 4)
        for number, hosts in enumerate(parts, 1):
            again = job("again-%d" % number, "hosts.yml", hosts, artifacts)
            assert again.rc == 0, again.stdout
            assert not again.stats()["changed"], again.stdout
            valid = job("validate-%d" % number, "validate.yml", hosts, artifacts)
            assert valid.rc == 0, valid.stdout
        # a node renumbered in the inventory after the plan was published: refused in its slice,
        # before the node is touched (its address stays)
        moved = dict(host_vars, gpu05=dict(host_vars["gpu05"], fabric_node_id=6))
        refused = Job(tmp_path, "apply-moved", collections, "hosts.yml", ["gpu05"], group_vars, moved,
                      artifacts).run(as_job_user=False)
        assert refused.rc != 0
        assert refused.failures()[0].startswith("hostvars[gpu05].fabric_node_id: 6 disagrees with the published plan")
        assert "172.17.0.130/27" in lab.ip("addr", "show", ns=lab.node_ns("gpu05"))
    finally:
        lab.down()
