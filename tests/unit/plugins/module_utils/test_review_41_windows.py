# -*- coding: utf-8 -*-
"""Field review of issue 41 (docs/reviews/41-maintenance.md), the cases that need no Slurm lab: the Kubernetes
drain against kubectl's drain (k8s.io/kubectl pkg/drain/filters.go), the NodeMaintenance object against the
API server's name rules, and Slurm states read as the oracle (SchedMD/slurm node_mgr.c) derives them.

Each case has exactly one thing wrong and a control; defects are strict xfails ("review 41 D<n>")."""

from __future__ import annotations

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.maintenance import k8s as mk
from ansible_collections.ainet.fabric.plugins.module_utils.maintenance import slurm as ms
from ansible_collections.ainet.fabric.plugins.module_utils.maintenance import window as mw

from test_maintenance import FakeApi, pod  # noqa: E402 (pytest puts this directory on sys.path)

MARK = mw.format_mark(["driver-restart", "reboot"], "drain")
TRAINING = mk.parse_selector("app=training")


def managed(name, app, **spec):
    out = pod(name, {"app": app}, owner="ReplicaSet")
    out["metadata"]["ownerReferences"][0]["controller"] = True
    out["spec"] = spec
    return out


# ---- Kubernetes: the collection's own drain against kubectl drain's filters -----------------------------------

def test_control_a_managed_pod_without_local_storage_is_evicted():
    api = FakeApi([managed("web-1", "web")])
    assert mk.enter(api, "gpu01", MARK, TRAINING, timeout=60, interval=10) == "drained"
    assert ("evict", "web-1") in api.calls


def test_a_pod_without_a_controller_is_not_evicted_silently():
    api = FakeApi([pod("notebook", {"app": "jupyter"})])  # one thing differs from the control: no ownerReference
    try:
        mk.enter(api, "gpu01", MARK, TRAINING, timeout=60, interval=10)
    except mw.MaintenanceError:
        pass
    assert ("evict", "notebook") not in api.calls


def test_a_pod_with_local_storage_is_not_evicted_silently():
    api = FakeApi([managed("cache-1", "cache", volumes=[{"name": "scratch", "emptyDir": {}}])])
    try:
        mk.enter(api, "gpu01", MARK, TRAINING, timeout=60, interval=10)
    except mw.MaintenanceError:
        pass
    assert ("evict", "cache-1") not in api.calls


def test_a_budget_that_never_allows_an_eviction_is_waited_on_then_stops_without_force():
    """Held: 429 forever (a PodDisruptionBudget with no disruption left): retried each pass, then one line at the
    timeout; the pod is still there and nothing but evictions was tried (no delete)."""
    api = FakeApi([managed("db-0", "db")], pdb_budget={"db": 0})
    api.sleep = lambda seconds: setattr(api, "clock", api.clock + seconds)  # the budget never comes back
    with pytest.raises(mw.MaintenanceError, match="refused by a PodDisruptionBudget.*nothing was killed"):
        mk.enter(api, "gpu01", MARK, TRAINING, timeout=120, interval=10)
    assert [c for c in api.calls if c[0] == "evict"].count(("evict", "db-0")) >= 10
    assert [p["metadata"]["name"] for p in api.pods] == ["db-0"] and api.node["spec"]["unschedulable"] is True


# ---- the NodeMaintenance object ---------------------------------------------------------------------------------

def test_control_the_nodemaintenance_name_of_a_usual_node():
    obj = mk.node_maintenance("gpu01", "app=training")
    assert obj["metadata"]["name"] == "ainet-fabric-gpu01" and obj["spec"]["nodeName"] == "gpu01"


def test_a_long_node_name_gives_a_valid_object_name_or_one_clear_error():
    node = "gpu-" + "a" * 245  # a valid node name (DNS subdomain, 249 characters)
    assert mk.check_node_name(node) == node
    try:
        obj = mk.node_maintenance(node, "app=training")
    except mw.MaintenanceError:
        return
    assert len(obj["metadata"]["name"]) <= 253


# ---- Slurm states as node_mgr.c leaves them ---------------------------------------------------------------------

def line(state, reason=None):
    text = "NodeName=n1 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 State=%s ThreadsPerCore=1 BootTime=2026-11-28T19:00:00" % state
    if reason is not None:
        text += " Reason=%s [root@2026-11-28T19:01:00]" % reason
    return ms.parse_show_node(text)["n1"]


def test_a_node_down_and_not_responding_at_start_is_left_alone_and_counts():
    """Held: DOWN* (Slurm's "Not responding") is someone else's; steps stay pending."""
    record = line("DOWN+NOT_RESPONDING", "Not responding")
    assert record["sinfo"] == "down*" and mw.next_action(record, ["reboot"])[0] == "skip"
    assert mw.next_action(line("IDLE"), ["reboot"])[0] == "drain"  # control


def test_a_node_completing_or_draining_with_a_job_is_waited_on():
    """Held: IDLE+COMPLETING+DRAIN and MIXED+DRAIN (node_state_string: draining) are not free of jobs."""
    assert mw.next_action(line("IDLE+COMPLETING+DRAIN", MARK), ["reboot"])[0] == "wait"
    assert mw.next_action(line("MIXED+DRAIN", MARK), ["reboot"])[0] == "wait"
    assert mw.next_action(line("IDLE+DRAIN", MARK), ["reboot"])[0] == "step"  # control


def test_a_pending_reboot_request_is_not_taken_for_a_free_node():
    record = line("IDLE+DRAIN+REBOOT_REQUESTED", MARK)  # our drain, the administrator's pending reboot
    assert mw.next_action(record, ["driver-restart"])[0] != "step"
