# -*- coding: utf-8 -*-
"""The maintenance role with maintenance_backend: kubernetes, end to end through ansible-playbook and the
maintenance_k8s module, against a kubectl stand-in (files/kubectl_standin.py) that answers as the API server
documents: merge patches on nodes, pods listed by node and label, the Eviction API refusing with 429 while a
PodDisruptionBudget allows no disruption, a NodeMaintenance that turns Ready once its waited-for pods finished. No
API server runs in this project's tests; the module's kubectl calls and the role's sequence are what is proven.

* Own drain: an idle node goes first; the busy node's training pod is waited for, never evicted; its other pod is
  refused (429) until the budget allows, then evicted; the DaemonSet pod stays; both nodes uncordoned, the
  annotation gone; a node cordoned by someone else is left cordoned and never stepped.
* NVIDIA's maintenance operator: a NodeMaintenance per window (valid against the operator's CRD where
  AINET_K8S_CRD_DIR and openapi-schema-validator are there), the step only once it is Ready, deleted at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
CRDS = os.environ.get("AINET_K8S_CRD_DIR") or os.path.join(os.path.dirname(ROOT), "shared", "validators", "k8s")
STANDIN = os.path.join(ROOT, "tests", "integration", "files", "kubectl_standin.py")
ANNOTATION = "ainet.fabric/maintenance"
STEP = """import json, sys, time
state = json.load(open(%(state)r))
node = sys.argv[1]
on = [p["metadata"]["name"] for p in state["pods"] if p["spec"]["nodeName"] == node
      and p["status"]["phase"] == "Running" and p["metadata"]["name"] != "cni-" + node]
json.dump({"time": time.time(), "node": state["nodes"][node], "running": on}, open(%(dir)r + "/stepped-" + node, "w"))
"""


def pod(name, node, app, finish=None, owner=None):
    meta = {"name": name, "namespace": "ml", "labels": {"app": app}}
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": "cni", "controller": True}]
    out = {"metadata": meta, "spec": {"nodeName": node}, "status": {"phase": "Running"}}
    if finish:
        out["finishAt"] = finish
    return out


def node(name, cordoned=False):
    out = {"metadata": {"name": name, "annotations": {}}, "spec": {}}
    if cordoned:
        out["spec"]["unschedulable"] = True
    return out


@pytest.fixture
def work(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    kubectl = bindir / "kubectl"
    kubectl.write_text("#!/bin/sh\nexec %s %s \"$@\"\n" % (sys.executable, STANDIN))
    kubectl.chmod(0o755)
    (tmp_path / "step.py").write_text(STEP % {"state": str(tmp_path / "state.json"), "dir": str(tmp_path)})
    (tmp_path / "play.yml").write_text("- hosts: gpu_nodes\n  gather_facts: false\n  roles:\n"
                                       "    - role: ainet.fabric.maintenance\n")
    return tmp_path


def write_state(work, state):
    (work / "state.json").write_text(json.dumps(state))


def read_state(work):
    return json.loads((work / "state.json").read_text())


def run(work, **extra):
    tors = [{"name": "r%d-a" % r, "rails": [r], "nodes": ["1-2"]} for r in (1, 2)] + [
        {"name": "r%d-b" % r, "rails": [r], "nodes": [3]} for r in (1, 2)]
    variables = {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
        "fabric_rail_interfaces": ["e0", "e1"],
        "fabric_cluster": {"name": "k8slab", "rails": 2, "tors": tors, "addressing": {
            "mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27}},
        "maintenance_backend": "kubernetes", "maintenance_k8s_kubeconfig": str(work / "kubeconfig"),
        "maintenance_k8s_job_selector": "app=training", "maintenance_wait_interval": 1,
        "maintenance_max_nodes": 2, "maintenance_max_per_group": 1, "maintenance_checks": [],
        "maintenance_steps": ["command"],
        "maintenance_step_command": [sys.executable, str(work / "step.py"), "{{ inventory_hostname }}"],
    }
    variables.update(extra)
    hosts = dict((n, {"fabric_node_id": i}) for i, n in enumerate(["n1", "n2", "n3"], 1))
    inv = work / "inventory.json"
    inv.write_text(json.dumps({"all": {"children": {"gpu_nodes": {"hosts": hosts}}, "vars": variables}}))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               FAKE_K8S_STATE=str(work / "state.json"),
               PATH=str(work / "bin") + os.pathsep + BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", str(inv), str(work / "play.yml")]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


def stepped(work, name):
    path = work / ("stepped-" + name)
    return json.loads(path.read_text()) if path.exists() else None


def test_own_drain_waits_for_the_job_and_respects_the_budget(work):
    now = time.time()
    write_state(work, {
        "nodes": {"n1": node("n1"), "n2": node("n2"), "n3": node("n3", cordoned=True)},
        "pods": [pod("train-0", "n1", "training", finish=now + 8), pod("web-1", "n1", "web", owner="ReplicaSet"),
                 pod("cni-n1", "n1", "cni", owner="DaemonSet"), pod("web-2", "n2", "other", owner="ReplicaSet"),
                 pod("web-3", "n3", "other", owner="ReplicaSet")],
        "pdbs": {"web": 0}, "pdbRefillAfter": 3})
    result = run(work)
    assert result.returncode == 0, result.stdout[-3000:]
    n1, n2 = stepped(work, "n1"), stepped(work, "n2")
    assert n2["time"] < n1["time"] and n1["time"] >= now + 8
    assert n1["running"] == [] and n1["node"]["spec"]["unschedulable"] is True
    assert n1["node"]["metadata"]["annotations"][ANNOTATION].startswith("ainet.fabric: command step run=")
    state = read_state(work)
    assert "train-0" not in state["evicted"] and "web-1" in state["evicted"] and "web-1" in state["refused"]
    # retried after the refusal, never forced: evicted only once the budget came back
    assert state["firstRefusal"]["web"] + 3 <= n1["time"]
    assert [p["metadata"]["name"] for p in state["pods"] if p["spec"]["nodeName"] == "n1"] == ["train-0", "cni-n1"]
    for name in ("n1", "n2"):
        assert "unschedulable" not in state["nodes"][name]["spec"]
        assert ANNOTATION not in state["nodes"][name]["metadata"]["annotations"]
    # cordoned by someone else: left cordoned, its pod not evicted, never stepped
    assert state["nodes"]["n3"]["spec"]["unschedulable"] is True and stepped(work, "n3") is None
    assert "web-3" not in state["evicted"] and "n3: out of service for another reason" in result.stdout


def test_nvidias_maintenance_operator_drains_and_its_object_is_deleted(work):
    now = time.time()
    write_state(work, {"nodes": {"n1": node("n1"), "n2": node("n2"), "n3": node("n3")},
                       "pods": [pod("train-0", "n1", "training", finish=now + 5)]})
    result = run(work, maintenance_k8s_operator=True, maintenance_k8s_namespace="maintenance",
                 maintenance_steps="{{ ['command'] if inventory_hostname == 'n1' else [] }}")
    assert result.returncode == 0, result.stdout[-3000:]
    n1 = stepped(work, "n1")
    assert n1["time"] >= now + 5 and n1["running"] == []
    state = read_state(work)
    assert state["deleted"] == ["ainet-fabric-n1"] and state["nodemaintenances"] == {}
    assert "unschedulable" not in state["nodes"]["n1"]["spec"]
    assert ANNOTATION not in state["nodes"]["n1"]["metadata"]["annotations"]
    assert stepped(work, "n2") is None and stepped(work, "n3") is None
    assert [o["spec"]["nodeName"] for o in state["applied"]] == ["n1"]
    spec = state["applied"][0]["spec"]
    assert spec["requestorID"] == "ainet.fabric" and spec["waitForPodCompletion"] == {
        "podSelector": "app=training", "timeoutSeconds": 0} and spec["drainSpec"]["force"] is False
    if os.path.isdir(os.path.join(CRDS, "crds-maintenance")):
        pytest.importorskip("openapi_schema_validator")
        from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_validate
        schemas = k8s_validate.load_crds(os.path.join(CRDS, "crds-maintenance"))
        assert k8s_validate.validate(state["applied"], schemas) == ([], [])
