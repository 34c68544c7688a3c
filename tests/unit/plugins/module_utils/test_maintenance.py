# -*- coding: utf-8 -*-
"""The maintenance layer (module_utils/maintenance): the window's mark and state machine, the refusal without a
scheduler, Slurm's outputs (data/slurm, layout from SchedMD/slurm: ORIGIN.md) and argv, the fabric-aware batches
on a real plan, the checks before a node goes back, and the Kubernetes sequence against a fake API server that
answers as the Eviction API documents (429 under a PodDisruptionBudget, 200 otherwise); the NodeMaintenance object
against the maintenance operator's CRD (AINET_K8S_CRD_DIR)."""

from __future__ import annotations

import datetime
import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.maintenance import batches as mb
from ansible_collections.ainet.fabric.plugins.module_utils.maintenance import checks as mc
from ansible_collections.ainet.fabric.plugins.module_utils.maintenance import k8s as mk
from ansible_collections.ainet.fabric.plugins.module_utils.maintenance import slurm as ms
from ansible_collections.ainet.fabric.plugins.module_utils.maintenance import window as mw
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
CRDS = os.environ.get("AINET_K8S_CRD_DIR") or os.path.join(os.path.dirname(ROOT), "shared", "validators", "k8s")
BOOT_A = "3f2c9a1e-8d4b-4a57-9c1e-2b6f0d7e5a11"
BOOT_B = "9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"


def data(name):
    with open(os.path.join(HERE, "data", "slurm", name)) as handle:
        return handle.read()


# ---- the mark -------------------------------------------------------------------------------------------------

def test_a_mark_round_trips_with_every_field():
    text = mw.format_mark(["reboot", "firmware-reset"], "reboot", boot=BOOT_A, tries=1, run="awx-4711")
    assert text == "ainet.fabric: firmware-reset+reboot reboot run=awx-4711 boot=%s try=1" % BOOT_A
    assert mw.parse_mark(text) == {"steps": ["firmware-reset", "reboot"], "phase": "reboot", "run": "awx-4711",
                                   "boot": BOOT_A, "tries": 1, "check": None}


def test_a_mark_survives_what_slurm_appends():
    text = mw.format_mark(["reboot"], "reboot", boot=BOOT_A, tries=1)
    parsed = mw.parse_mark(text + " : reboot issued : reboot complete [slurm@2026-11-28T18:20:05]")
    assert parsed["phase"] == "reboot" and parsed["boot"] == BOOT_A and parsed["tries"] == 1


@pytest.mark.parametrize("reason", ["", None, "bad DIMM", "ainet.fabric:", "ainet.fabric: reboot sleeping",
                                    "ainet.fabric: rm-rf drain", "ainet.fabric: reboot drain try=x",
                                    "ainet.fabric: reboot drain boot=$(id)", "xainet.fabric: reboot drain"])
def test_what_is_not_our_mark_is_not_ours(reason):
    assert mw.parse_mark(reason) is None


def test_a_mark_refuses_what_is_no_step_phase_or_boot_id():
    with pytest.raises(mw.MaintenanceError, match="maintenance_steps: 'shutdown'"):
        mw.format_mark(["shutdown"], "drain")
    with pytest.raises(mw.MaintenanceError, match="phase"):
        mw.format_mark(["reboot"], "later")
    with pytest.raises(mw.MaintenanceError, match="boot id"):
        mw.format_mark(["reboot"], "reboot", boot="x y; reboot")
    with pytest.raises(mw.MaintenanceError, match="at least one step"):
        mw.format_mark([], "drain")
    assert mw.format_mark(["reboot"], "drain") == "ainet.fabric: reboot drain"  # control


def test_steps_come_in_their_order_with_the_reboot_last():
    assert mw.check_steps(["reboot", "driver-restart", "firmware-reset"]) == [
        "firmware-reset", "driver-restart", "reboot"]


# ---- the state machine ----------------------------------------------------------------------------------------

def rec(out=False, idle=True, reason=""):
    return {"out": out, "idle": idle, "reason": reason}


def test_a_node_with_nothing_pending_and_no_window_is_never_touched():
    assert mw.next_action(rec(), []) == ("none", None)
    assert mw.next_action(rec(idle=False), []) == ("none", None)
    assert mw.next_action(rec(), ["reboot"]) == ("drain", None)  # control


def test_a_node_drained_by_someone_else_is_left_as_it_is():
    action, why = mw.next_action(rec(out=True, reason="bad DIMM B2"), ["reboot"])
    assert action == "skip" and "bad DIMM B2" in why
    assert mw.next_action(rec(out=True, reason=""), [])[0] == "skip"


def test_our_drain_waits_while_jobs_run_then_steps():
    mark = mw.format_mark(["reboot"], "drain")
    assert mw.next_action(rec(out=True, idle=False, reason=mark), ["reboot"]) == ("wait", None)
    assert mw.next_action(rec(out=True, idle=True, reason=mark), ["reboot"]) == ("step", ["reboot"])


def test_a_window_a_killed_run_left_is_finished_even_with_nothing_pending_now():
    mark = mw.format_mark(["driver-restart"], "check")
    assert mw.next_action(rec(out=True, reason=mark), []) == ("check", None)
    mark = mw.format_mark(["driver-restart"], "step")
    assert mw.next_action(rec(out=True, reason=mark), []) == ("step", [])


def test_a_recorded_reboot_is_judged_by_the_boot_id():
    mark = mw.format_mark(["reboot"], "reboot", boot=BOOT_A, tries=1)
    assert mw.next_action(rec(out=True, reason=mark), ["reboot"], boot_id=BOOT_B) == ("rebooted", None)
    assert mw.next_action(rec(out=True, reason=mark), ["reboot"], boot_id=BOOT_A) == ("reboot", 1)


def test_a_reboot_loop_holds_the_node():
    mark = mw.format_mark(["reboot"], "reboot", boot=BOOT_A, tries=2)
    assert mw.next_action(rec(out=True, reason=mark), ["reboot"], boot_id=BOOT_A) == ("held", "reboot-loop")
    mark = mw.format_mark(["reboot"], "failed", tries=2, check="still-pending")
    assert mw.next_action(rec(out=True, reason=mark), ["reboot"]) == ("held", "reboot-loop")
    mark = mw.format_mark(["reboot"], "failed", tries=1, check="still-pending")
    assert mw.next_action(rec(out=True, reason=mark), ["reboot"]) == ("step", ["reboot"])  # control


def test_without_a_backend_a_scheduler_node_is_refused_naming_the_backend():
    line = mw.backend_refusal("", False, ["slurmd", "sshd"], "gpu01")
    assert line.startswith("gpu01: slurmd runs here") and "maintenance_backend: slurm" in line
    line = mw.backend_refusal("", False, ["kubelet"], "gpu01")
    assert "maintenance_backend: kubernetes" in line
    assert "maintenance_no_scheduler_ack" in mw.backend_refusal("", False, [], "gpu01")
    assert "maintenance_no_scheduler_ack" in mw.backend_refusal("none", False, [], "gpu01")
    assert mw.backend_refusal("none", True, [], "gpu01") is None
    assert mw.backend_refusal("slurm", False, ["slurmd"], "gpu01") is None
    with pytest.raises(mw.MaintenanceError, match="maintenance_backend: 'lsf'"):
        mw.backend_refusal("lsf", False, [], "gpu01")


# ---- Slurm ----------------------------------------------------------------------------------------------------

def test_scontrol_one_liners_of_22_05():
    nodes = ms.parse_show_node(data("show-node-o-22.05.txt"))
    assert sorted(nodes) == ["gpu%02d" % n for n in range(1, 11)]
    summary = dict((n, (r["sinfo"], r["out"], r["idle"])) for n, r in nodes.items())
    assert summary == {
        "gpu01": ("mixed", False, False),
        "gpu02": ("idle", False, True),
        "gpu03": ("draining", True, False),
        "gpu04": ("draining", True, False),  # IDLE+COMPLETING+DRAIN: a job is still finishing
        "gpu05": ("drained", True, True),
        "gpu06": ("drained", True, True),
        "gpu07": ("down", True, True),
        "gpu08": ("down*", True, True),
        "gpu09": ("drained", True, True),
        "gpu10": ("draining@", True, False),
    }
    assert nodes["gpu03"]["reason"] == "ainet.fabric: reboot drain"
    assert nodes["gpu06"]["reason"] == "bad DIMM B2, ticket=INC-4411"
    assert mw.parse_mark(nodes["gpu07"]["reason"])["boot"] == BOOT_A
    assert nodes["gpu02"]["reason"] == "" and nodes["gpu10"]["flags"] == ["DRAIN", "REBOOT_REQUESTED"]


RECORDED = os.path.join(HERE, "maintenance", "data", "slurm-22.05")


@pytest.mark.skipif(not os.path.isdir(RECORDED), reason="no recorded Slurm 22.05 outputs (tests/lab/record_slurm.py)")
def test_recorded_scontrol_agrees_with_the_recorded_sinfo_of_the_same_moment():
    # the Slurm lab's recordings: sinfo -N -h -o '%N %T %E' is Slurm's own judgement of each node's state, the
    # oracle for ours (read from scontrol show node -o of the same moment)
    pairs = 0
    for name in sorted(os.listdir(RECORDED)):
        if not name.endswith(".scontrol-show-node-o.txt"):
            continue
        sinfo = os.path.join(RECORDED, name.replace(".scontrol-show-node-o.txt", ".sinfo-N.txt"))
        if not os.path.isfile(sinfo) or os.path.isfile(sinfo.replace(".txt", ".stderr")):
            continue
        with open(os.path.join(RECORDED, name)) as handle:
            nodes = ms.parse_show_node(handle.read())
        with open(sinfo) as handle:
            for line in handle.read().splitlines():
                node, state, reason = (line.split(None, 2) + [""])[:3]
                assert nodes[node]["sinfo"] == state, (name, node, nodes[node]["state"])
                assert (nodes[node]["reason"] or "none") == reason, (name, node)
                pairs += 1
    assert pairs >= 10


def test_scontrol_without_o_and_a_comment_after_the_reason():
    nodes = ms.parse_show_node(data("show-node-master.txt"))
    assert nodes["gpu03"]["sinfo"] == "draining" and nodes["gpu03"]["reason"] == "ainet.fabric: reboot drain"
    assert nodes["gpu04"]["sinfo"] == "drained" and nodes["gpu04"]["reason"] == "cable check: port=swp12 flaps"
    assert mw.owner(nodes["gpu04"]) == "foreign" and mw.owner(nodes["gpu03"]) == "ours"


def test_the_state_machine_on_parsed_slurm_records():
    nodes = ms.parse_show_node(data("show-node-o-22.05.txt"))
    assert mw.next_action(nodes["gpu01"], ["reboot"])[0] == "drain"
    assert mw.next_action(nodes["gpu03"], ["reboot"])[0] == "wait"
    assert mw.next_action(nodes["gpu04"], ["reboot"])[0] == "wait"
    assert mw.next_action(nodes["gpu05"], ["reboot"]) == ("step", ["reboot"])
    assert mw.next_action(nodes["gpu06"], ["reboot"])[0] == "skip"
    assert mw.next_action(nodes["gpu07"], ["reboot"], boot_id=BOOT_B)[0] == "rebooted"
    assert mw.next_action(nodes["gpu08"], ["reboot"])[0] == "skip"
    assert mw.next_action(nodes["gpu09"], ["driver-restart"]) == ("step", ["driver-restart"])


def test_a_state_without_state_is_refused():
    with pytest.raises(ms.SlurmError, match="State="):
        ms.parse_show_node("NodeName=gpu01 Arch=x86_64\n")


def test_reboot_program_from_show_config():
    assert ms.reboot_program(ms.parse_show_config(data("show-config-22.05.txt"))) == "/usr/sbin/reboot"
    assert ms.reboot_program(ms.parse_show_config(data("show-config-no-reboot.txt"))) is None


@pytest.mark.parametrize("name", ["gpu[01-04]", "gpu01,gpu02", "gpu01 gpu02", "NodeName=x", "-gpu", "gpu01;id",
                                  "", "a" * 70, None])
def test_a_node_name_that_would_be_other_syntax_is_refused(name):
    with pytest.raises(ms.SlurmError, match="maintenance_slurm_node_name"):
        ms.drain_argv("scontrol", name, "ainet.fabric: reboot drain")


def test_the_argv_are_lists_with_one_word_per_field():
    mark = mw.format_mark(["reboot"], "drain")
    assert ms.drain_argv("scontrol", "gpu01", mark) == [
        "scontrol", "update", "NodeName=gpu01", "State=DRAIN", "Reason=ainet.fabric: reboot drain"]
    assert ms.resume_argv("scontrol", "gpu01.lab") == ["scontrol", "update", "NodeName=gpu01.lab", "State=RESUME"]
    assert ms.reboot_argv("/usr/bin/scontrol", "gpu01", mark)[:3] == ["/usr/bin/scontrol", "reboot", "nextstate=DOWN"]
    assert ms.show_node_argv("scontrol", ["gpu01", "gpu02"])[-1] == "gpu01,gpu02"
    with pytest.raises(ms.SlurmError, match="reason"):
        ms.drain_argv("scontrol", "gpu01", "x\nNodeName=gpu02")


# ---- batches --------------------------------------------------------------------------------------------------

def plan_of(count, per_tor=4, rails=2):
    tors = []
    for rail in range(1, rails + 1):
        for first in range(1, count + 1, per_tor):
            tors.append({"name": "r%d-t%d" % (rail, first), "rails": [rail],
                         "nodes": ["%d-%d" % (first, min(count, first + per_tor - 1))]})
    addressing = {"mode": "exclusive", "supernet": "10.0.0.0/8", "rail_prefix": 12, "node_prefix": 29}
    return rail_plan({"name": "t", "rails": rails, "addressing": addressing, "tors": tors},
                     dict(("gpu%05d" % n, {"node_id": n, "rail_interfaces": ["e%d" % r for r in range(rails)]})
                          for n in range(1, count + 1)))


def batches(*args, **kwargs):
    out = mb.batches(*args, **kwargs)
    assert out["blocked"] == {}
    return out["batches"]


def test_batches_keep_each_rail_group_under_its_limit():
    plan = plan_of(8)  # rail groups: nodes 1-4 and 5-8
    out = batches(plan, ["gpu%05d" % n for n in range(1, 9)], max_nodes=3, max_per_group=1)
    assert out == [["gpu00001", "gpu00005"], ["gpu00002", "gpu00006"], ["gpu00003", "gpu00007"],
                   ["gpu00004", "gpu00008"]]
    out = batches(plan, ["gpu%05d" % n for n in range(1, 9)], max_nodes=3, max_per_group=2)
    assert [len(b) for b in out] == [3, 3, 2] and out[0] == ["gpu00001", "gpu00002", "gpu00005"]


def test_nodes_already_out_of_service_count_against_the_limits():
    plan = plan_of(8)
    # gpu00003 fills the first group's one place: its nodes cannot open a window while it is out
    out = mb.batches(plan, ["gpu00001", "gpu00002", "gpu00005"], unavailable=["gpu00003"], max_nodes=2,
                     max_per_group=1)
    assert out["batches"] == [["gpu00005"]]
    assert sorted(out["blocked"]) == ["gpu00001", "gpu00002"]
    assert "r1-t1+r2-t1 already has" in out["blocked"]["gpu00001"]
    out = batches(plan, ["gpu00001", "gpu00005", "gpu00006"], unavailable=["gpu00003"], max_nodes=2,
                  max_per_group=2)
    assert out == [["gpu00001"], ["gpu00005"], ["gpu00006"]]  # one place left overall
    out = mb.batches(plan, ["gpu00001"], unavailable=["gpu00007"], max_nodes=1, max_per_group=4)
    assert out["batches"] == [] and "maintenance_max_nodes is 1 and 1 nodes" in out["blocked"]["gpu00001"]
    assert batches(plan, ["gpu00001"], unavailable=["gpu00007"], max_nodes=2, max_per_group=4) == [["gpu00001"]]


def test_batches_order_resumed_then_idle_then_busy():
    plan = plan_of(8)
    out = batches(plan, ["gpu00001", "gpu00002", "gpu00003"], busy=["gpu00001"], resumed=["gpu00003"],
                  max_nodes=1, max_per_group=1)
    assert out == [["gpu00003"], ["gpu00002"], ["gpu00001"]]


def test_per_tor_counts_a_node_against_each_of_its_tors():
    plan = plan_of(4, per_tor=2, rails=2)
    out = batches(plan, ["gpu00001", "gpu00002", "gpu00003"], max_nodes=4, max_per_group=1, group_by="tor")
    assert out == [["gpu00001", "gpu00003"], ["gpu00002"]]
    # a ToR shared by two rail groups: per ToR, the groups' nodes wait for each other; per rail group they do not
    plan = plan_of(4, per_tor=2, rails=2)
    plan["nodes"]["gpu00003"]["rails"][1]["tor"] = "r2-t1"
    assert batches(plan, ["gpu00001", "gpu00003"], max_nodes=4, max_per_group=1, group_by="tor") == [
        ["gpu00001"], ["gpu00003"]]
    assert batches(plan, ["gpu00001", "gpu00003"], max_nodes=4, max_per_group=1) == [["gpu00001", "gpu00003"]]


def test_batches_refuse_bad_limits_and_unplanned_hosts():
    plan = plan_of(4)
    with pytest.raises(mb.BatchError, match="maintenance_max_nodes: '0'"):
        mb.batches(plan, ["gpu00001"], max_nodes="0")
    with pytest.raises(mb.BatchError, match="maintenance_max_per_group: 'x'"):
        mb.batches(plan, ["gpu00001"], max_per_group="x")
    with pytest.raises(mb.BatchError, match="maintenance_group_by"):
        mb.batches(plan, ["gpu00001"], group_by="rack")
    with pytest.raises(mb.BatchError, match="gpu99 is not in the plan"):
        mb.batches(plan, ["gpu99"])
    assert batches(plan, []) == []


def test_batches_of_16384_nodes():
    # how long it takes is measured by tests/perf (timed tests are not tests), not here
    # the plan's shape (nodes -> node_id, rails[].tor) without the planner's own time: 512 rail groups of 32
    plan = {"nodes": dict(("gpu%05d" % n, {"node_id": n, "rails": [
        {"rail": r, "tor": "r%d-t%d" % (r, (n - 1) // 32)} for r in range(1, 9)]}) for n in range(1, 16385))}
    pending = sorted(plan["nodes"])
    out = batches(plan, pending, unavailable=[pending[0], pending[40], pending[80]], max_nodes=64, max_per_group=2)
    assert sum(len(b) for b in out) == len(pending) - 3 and all(len(b) <= 61 for b in out)
    out = batches(plan, pending, max_nodes=1, max_per_group=1)
    assert len(out) == 16384


# ---- checks ---------------------------------------------------------------------------------------------------

def rdma(state=("ACTIVE", "LINK_UP"), device="mlx5_0"):
    return {"rails": [{"netdev": "ens6f0np0", "rdma_device": device, "port": 1}],
            "facts": {"devices": {"mlx5_0": {"ports": {1: {"state": state[0], "physical_state": state[1]}}}}}}


ALL = ["rail-config", "rdma-devices", "rail-links", "boot-id", "still-pending"]


def test_a_node_in_plan_passes_every_check():
    assert mc.node_checks(ALL, rail_config={"changed": False}, rdma=rdma(), boot_before=BOOT_A, boot_after=BOOT_B,
                          rebooted=True, pending_after=[]) == []


@pytest.mark.parametrize("check,kwargs", [
    ("rail-config", {"rail_config": {"changed": True, "commands": ["ip addr add 172.17.1.2/27 dev ens6f0np0"]}}),
    ("rail-config", {"rail_config": None}),
    ("rail-config", {"rail_config": {"failed": True, "msg": "fabric_rail_interfaces[0]: 'e0' does not exist"}}),
    ("rdma-devices", {"rdma": rdma(device=None)}),
    ("rail-links", {"rdma": rdma(state=("DOWN", "POLLING"))}),
    ("boot-id", {"boot_after": BOOT_A}),
    ("boot-id", {"boot_after": None}),
    ("still-pending", {"pending_after": ["DOCA-OFED: mlx5_core 24.10 loaded, 25.04 installed"]}),
    ("still-pending", {"pending_after": None}),
])
def test_each_check_fails_on_its_one_fault(check, kwargs):
    args = dict(rail_config={"changed": False}, rdma=rdma(), boot_before=BOOT_A, boot_after=BOOT_B, rebooted=True,
                pending_after=[])
    args.update(kwargs)
    failed = mc.node_checks(ALL, **args)
    assert [f["check"] for f in failed] == [check] or (check == "rdma-devices" and [f["check"] for f in failed] == [
        "rdma-devices", "rail-links"])


def test_a_read_that_failed_says_so():
    failed = mc.node_checks(["rail-config"], rail_config={"failed": True, "msg": "'e0' does not exist on this host"})
    assert failed == [{"check": "rail-config", "detail": "could not be read: 'e0' does not exist on this host"}]


def test_the_boot_id_is_only_judged_after_a_reboot_and_lossless_only_when_asked():
    assert mc.node_checks(ALL, rail_config={"changed": False}, rdma=rdma(), boot_before=BOOT_A, boot_after=BOOT_A,
                          rebooted=False, pending_after=[]) == []
    assert mc.node_checks(["lossless"], lossless={"changed": True, "commands": ["mlnx_qos -i e --pfc 0,0,0,1"]})
    assert mc.node_checks(["lossless"], lossless={"changed": False}) == []
    assert mc.node_checks(["lossless"]) == [{"check": "lossless", "detail": "not read"}]


def test_a_sites_own_check_fails_on_a_non_zero_exit():
    assert mc.node_checks(["command"], command={"rc": 0, "stdout": "ok"}) == []
    assert mc.node_checks(["command"], command={"rc": 1, "stderr": "nhc: GPU 3 missing"}) == [
        {"check": "command", "detail": "exit 1: nhc: GPU 3 missing"}]
    assert mc.node_checks(["command"], command={"skipped": True}) == [{"check": "command", "detail": "not read"}]


# ---- Kubernetes -----------------------------------------------------------------------------------------------

class FakeApi(object):
    """The API server as documented: merge patches on the node, pods on the node, the Eviction API refusing
    (429) while a PodDisruptionBudget has no disruption left and deleting the pod (200) otherwise."""

    def __init__(self, pods, pdb_budget=None, unschedulable=False, annotation=None):
        self.node = {"metadata": {"name": "gpu01", "annotations": {}}, "spec": {}}
        if unschedulable:
            self.node["spec"]["unschedulable"] = True
        if annotation:
            self.node["metadata"]["annotations"][mk.ANNOTATION] = annotation
        self.pods = pods
        self.pdb_budget = dict(pdb_budget or {})  # label value of "app" -> disruptions allowed
        self.clock = 0
        self.calls = []
        self.finish_at = {}  # pod name -> time it completes on its own

    def get_node(self, name):
        return self.node

    def patch_node(self, name, patch):
        self.calls.append(("patch", patch))
        for section in ("spec", "metadata"):
            for key, value in (patch.get(section) or {}).items():
                if key == "annotations":
                    for akey, avalue in value.items():
                        if avalue is None:
                            self.node["metadata"]["annotations"].pop(akey, None)
                        else:
                            self.node["metadata"]["annotations"][akey] = avalue
                elif value is None:
                    self.node[section].pop(key, None)
                else:
                    self.node[section][key] = value

    def list_pods(self, node):
        for pod in self.pods:
            if self.finish_at.get(pod["metadata"]["name"], 1e9) <= self.clock:
                pod["status"]["phase"] = "Succeeded"
        return list(self.pods)

    def evict(self, namespace, name):
        self.calls.append(("evict", name))
        pod = next((p for p in self.pods if p["metadata"]["name"] == name), None)
        if pod is None:
            return 404
        app = pod["metadata"]["labels"].get("app")
        if app in self.pdb_budget:
            if self.pdb_budget[app] < 1:
                return 429
            self.pdb_budget[app] -= 1
        self.pods.remove(pod)
        return 200

    def now(self):
        return self.clock

    def sleep(self, seconds):
        self.clock += seconds
        # the PDB's budget comes back as the evicted replicas start elsewhere
        for app in self.pdb_budget:
            self.pdb_budget[app] = max(self.pdb_budget[app], 1) if self.clock >= 20 else self.pdb_budget[app]


def pod(name, labels, owner=None, phase="Running"):
    meta = {"name": name, "namespace": "ml", "labels": labels}
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": "x", "controller": True}]
    return {"metadata": meta, "status": {"phase": phase}}


def test_k8s_waits_for_the_jobs_then_evicts_the_rest_through_the_pdb():
    api = FakeApi([pod("train-0", {"app": "training"}), pod("web-1", {"app": "web"}, owner="ReplicaSet"),
                   pod("web-2", {"app": "web"}, owner="ReplicaSet"),
                   pod("cni", {"app": "cni"}, owner="DaemonSet"), pod("done", {"app": "batch"}, phase="Succeeded")],
                  pdb_budget={"web": 1})
    api.finish_at["train-0"] = 30
    mark = mw.format_mark(["reboot"], "drain")
    terms = mk.parse_selector("app=training")
    assert mk.enter(api, "gpu01", mark, terms, timeout=600, interval=10) == "drained"
    evictions = [c for c in api.calls if c[0] == "evict"]
    # nothing evicted while the job ran (until t=30); then web-1 evicted, web-2 refused (429) and retried
    assert evictions[0] == ("evict", "web-1") and api.clock >= 30
    assert ("evict", "web-2") in evictions and evictions.count(("evict", "web-2")) >= 1
    assert [p["metadata"]["name"] for p in api.pods] == ["train-0", "cni", "done"]
    assert api.node["spec"]["unschedulable"] is True and api.node["metadata"]["annotations"][mk.ANNOTATION] == mark
    assert mk.leave(api, "gpu01") is True
    assert "unschedulable" not in api.node["spec"] and mk.ANNOTATION not in api.node["metadata"]["annotations"]


def test_k8s_a_timeout_stops_the_wait_and_kills_nothing():
    api = FakeApi([pod("train-0", {"app": "training"}), pod("web-1", {"app": "web"}, owner="ReplicaSet")])
    with pytest.raises(mw.MaintenanceError, match="still waiting after 60s for job ml/train-0.*nothing was killed"):
        mk.enter(api, "gpu01", mw.format_mark(["reboot"], "drain"), mk.parse_selector("app=training"), timeout=60,
                 interval=10)
    assert not [c for c in api.calls if c[0] == "evict"] and len(api.pods) == 2
    assert api.node["spec"]["unschedulable"] is True


def test_k8s_a_node_cordoned_by_someone_else_is_left_alone():
    api = FakeApi([pod("web-1", {"app": "web"}, owner="ReplicaSet")], unschedulable=True)
    assert mk.enter(api, "gpu01", mw.format_mark(["reboot"], "drain"), mk.parse_selector("app=training"), 60) == "skip"
    assert api.calls == [] and mk.leave(api, "gpu01") is False and api.node["spec"]["unschedulable"] is True


def test_k8s_a_window_left_cordoned_is_taken_up_again():
    mark = mw.format_mark(["reboot"], "drain")
    api = FakeApi([pod("web-1", {"app": "web"}, owner="ReplicaSet")], unschedulable=True, annotation=mark)
    assert mk.enter(api, "gpu01", mark, mk.parse_selector("app=training"), 60) == "drained"
    assert not [c for c in api.calls if c[0] == "patch"]  # the mark stays, nothing re-cordoned


def test_k8s_an_eviction_error_other_than_429_stops_with_the_node_cordoned():
    api = FakeApi([pod("web-1", {"app": "web"}, owner="ReplicaSet")])
    api.evict = lambda namespace, name: 500
    with pytest.raises(mw.MaintenanceError, match="eviction of ml/web-1 answered 500"):
        mk.enter(api, "gpu01", mw.format_mark(["reboot"], "drain"), mk.parse_selector("app=training"), 60)


@pytest.mark.parametrize("selector", ["", "app in (a,b)", "app=training;rm", "app=a b"])
def test_k8s_selectors_other_than_equality_are_refused(selector):
    with pytest.raises(mw.MaintenanceError, match="maintenance_k8s_job_selector"):
        mk.parse_selector(selector)


def test_k8s_selector_terms():
    terms = mk.parse_selector("app=training, tier!=infra,gpu,!skip")
    assert mk.matches({"app": "training", "gpu": ""}, terms)
    assert not mk.matches({"app": "training", "gpu": "", "skip": "1"}, terms)
    assert not mk.matches({"app": "training", "gpu": "", "tier": "infra"}, terms)
    assert not mk.matches({"app": "web", "gpu": ""}, terms)


@pytest.mark.skipif(not os.path.isdir(os.path.join(CRDS, "crds-maintenance")),
                    reason="no maintenance operator CRD: set AINET_K8S_CRD_DIR (../shared/validators/k8s in CI)")
def test_the_node_maintenance_object_passes_the_operators_crd():
    pytest.importorskip("openapi_schema_validator")
    from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_validate
    schemas = k8s_validate.load_crds(os.path.join(CRDS, "crds-maintenance"))
    obj = mk.node_maintenance("gpu01", "app=training", namespace="maintenance")
    assert k8s_validate.validate([obj], schemas) == ([], [])
    assert obj["spec"]["requestorID"] == "ainet.fabric" and obj["spec"]["waitForPodCompletion"]["timeoutSeconds"] == 0
    broken = mk.node_maintenance("gpu01", "app=training")
    broken["spec"]["drainSpec"]["forceDelete"] = True  # one unknown key
    violations, unchecked = k8s_validate.validate([broken], schemas)
    assert len(violations) == 1 and "forceDelete" in violations[0] and unchecked == []


def test_node_maintenance_conditions():
    assert mk.nm_ready({"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready"}]}})
    assert not mk.nm_ready({"status": {"conditions": [{"type": "Ready", "status": "False",
                                                       "reason": "WaitForPodCompletion"}]}})
    assert not mk.nm_ready({})
    assert mk.nm_failed({"status": {"conditions": [{"type": "Ready", "status": "False",
                                                    "reason": "FailedMaintenance", "message": "drain timeout"}]}}) \
        == "drain timeout"


def test_kubectl_eviction_answers_map_to_the_http_status():
    # kubectl create --raw prints the API's status reason: "Error from server (TooManyRequests): Cannot evict pod as
    # it would violate the pod's disruption budget." (the message of k8s.io/kubernetes pkg/registry/core/pod/storage
    # eviction.go), "Error from server (NotFound): pods \"x\" not found"
    from ansible_collections.ainet.fabric.plugins.modules.maintenance_k8s import eviction_status
    assert eviction_status(1, "Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's "
                              "disruption budget.") == 429
    assert eviction_status(1, 'Error from server (NotFound): pods "web-1" not found') == 404
    assert eviction_status(0, "") == 201
    assert eviction_status(1, "Unable to connect to the server: dial tcp 10.0.0.1:6443: i/o timeout") == 500


# ---- review 41 (docs/reviews/41-maintenance.md): run ownership, pending reboots, drain filters, NM name --------

def held(run, age):
    return {"out": True, "idle": True, "reason": mw.format_mark(["reboot"], "drain", run=run), "mark_age": age}


def test_another_live_runs_window_is_left_to_it():
    assert mw.next_action(held("awx-1", 60), ["reboot"], run="awx-2", stale_after=3600)[0] == "skip"
    assert mw.next_action(held("awx-2", 60), ["reboot"], run="awx-2", stale_after=3600)[0] == "step"  # ours


def test_a_stale_runs_window_is_taken_over():
    assert mw.next_action(held("awx-1", 3600), ["reboot"], run="awx-2", stale_after=3600)[0] == "step"
    assert mw.next_action(held("awx-1", None), ["reboot"], run="awx-2", stale_after=3600)[0] == "skip"  # age unknown


def test_a_mark_of_an_earlier_version_without_a_run_is_taken_up():
    assert mw.next_action(rec(True, True, "ainet.fabric: reboot drain"), ["reboot"], run="awx-2")[0] == "step"


@pytest.mark.parametrize("run", ["", "a b", "x;y", "-a", "a" * 65])
def test_a_run_id_that_is_not_plain_is_refused(run):
    with pytest.raises(mw.MaintenanceError, match="maintenance_run_id"):
        mw.check_run(run)


def test_slurm_reboot_flags_and_reason_time_are_read():
    text = ("NodeName=n1 State=MIXED+REBOOT_REQUESTED BootTime=2026-11-28T19:00:00 "
            "Reason=ainet.fabric: reboot drain run=r1 [root@2026-11-28T19:01:00]")
    record = ms.parse_show_node(text)["n1"]
    assert record["reboot_pending"] and record["reason_time"] == "2026-11-28T19:01:00"
    assert mw.parse_mark(record["reason"])["run"] == "r1"
    now = datetime.datetime(2026, 11, 28, 19, 11, 0)
    assert ms.reason_age(record["reason_time"], now) == 600 and ms.reason_age(None, now) is None
    assert not ms.parse_show_node("NodeName=n1 State=IDLE+DRAIN Reason=x [root@2026-11-28T19:01:00]")["n1"][
        "reboot_pending"]  # control


def test_a_reboot_someone_else_asked_for_is_waited_on_before_the_drain():
    record = dict(rec(), reboot_pending=True, sinfo="mixed@")
    assert mw.next_action(record, ["reboot"])[0] == "reboot-wait"
    assert mw.next_action(record, [])[0] == "none"  # nothing pending: never touched
    assert mw.next_action(dict(rec(True), reboot_pending=True), ["reboot"])[0] == "skip"  # drained by them too


def test_our_own_recorded_reboot_is_not_taken_for_someone_elses():
    reason = mw.format_mark(["reboot"], "reboot", boot=BOOT_A, tries=1)
    record = {"out": True, "idle": True, "reason": reason, "reboot_pending": True}
    assert mw.next_action(record, ["reboot"], BOOT_A)[0] == "reboot"


def test_kubectl_drain_options_let_the_refused_pods_go():
    unmanaged = pod("notebook", {"app": "jupyter"})
    scratch = pod("cache-1", {"app": "cache"}, owner="ReplicaSet")
    scratch["spec"] = {"volumes": [{"name": "s", "emptyDir": {}}]}
    assert len(mk.refusals([unmanaged, scratch])) == 2
    assert mk.refusals([unmanaged], force=True) == [] and mk.refusals([scratch], delete_emptydir_data=True) == []
    assert mk.refusals([pod("done", {"app": "x"}, phase="Succeeded")]) == []  # finished pods always go
    api = FakeApi([unmanaged])
    assert mk.enter(api, "gpu01", mw.format_mark(["reboot"], "drain"), mk.parse_selector("app=training"), 60, 10,
                    force=True) == "drained" and ("evict", "notebook") in api.calls


def test_a_long_nodemaintenance_name_is_cut_with_a_hash():
    long_a, long_b = "gpu-" + "a" * 245, "gpu-" + "a" * 244 + "b"
    name_a, name_b = mk.nm_name(long_a), mk.nm_name(long_b)
    assert len(name_a) <= 253 and name_a != name_b and name_a == mk.nm_name(long_a)
    assert mk.check_node_name(name_a) == name_a  # still a DNS subdomain
    assert mk.nm_name("gpu01") == "ainet-fabric-gpu01"  # control


def test_k8s_the_cordon_carries_the_resource_version_and_the_mark_its_age():
    node = {"metadata": {"name": "gpu01", "resourceVersion": "4711", "annotations": {mk.ANNOTATION: "x"},
                         "managedFields": [
                             {"manager": "kubectl-patch", "time": "2026-11-28T19:00:00Z",
                              "fieldsV1": {"f:metadata": {"f:annotations": {"f:%s" % mk.ANNOTATION: {}}}}},
                             {"manager": "kubelet", "time": "2026-11-28T19:09:00Z",
                              "fieldsV1": {"f:status": {}}}]}}  # control: another field's newer write
    record = mk.node_record(node, datetime.datetime(2026, 11, 28, 19, 10, 0))
    assert record["resource_version"] == "4711" and record["mark_age"] == 600
    assert mk.cordon_patch("m", "4711")["metadata"]["resourceVersion"] == "4711"
    assert "resourceVersion" not in mk.cordon_patch("m")["metadata"]


def test_a_failed_window_of_another_run_is_taken_up_at_once():
    failed = {"out": True, "idle": True, "reason": mw.format_mark(["command"], "failed", check="command", run="awx-1"),
              "mark_age": 5}
    assert mw.holder(failed, "awx-2", 3600) is None and mw.next_action(failed, ["command"], run="awx-2")[0] == "step"
    assert mw.holder(held("awx-1", 5), "awx-2", 3600) == "awx-1"  # control: a live drain
