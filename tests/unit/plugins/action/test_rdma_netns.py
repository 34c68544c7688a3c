# -*- coding: utf-8 -*-
"""rdma_netns: the plan (pure) and the module in-process with a stand-in ``rdma`` on PATH that prints the
VM tier's recorded ``rdma system show`` outputs (tests/vm/recorded/rdma_system_show*.txt, iproute2 6.1)
and, like the kernel, refuses ``rdma system set netns`` with EBUSY while other network namespaces exist
(the refusal text is the one iproute2 prints for EBUSY). The kernel's side (the live change, the option
at boot, the initramfs) is proven on the VM tier (molecule/rdma_vm)."""

from __future__ import annotations

import copy
import os
import sys

import pytest
from ansible_collections.ainet.fabric.tests.unit.plugins.modules.host_task import run_module
from ansible_collections.ainet.fabric.tests.unit.plugins.action.task_runner import run_task

from ansible_collections.ainet.fabric.plugins.module_utils.host import rdma_netns_state as plan
from ansible_collections.ainet.fabric.plugins.modules import rdma_netns

RECORDED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "vm", "recorded")
STANDIN = r'''
import os, sys
mode_file = os.environ["STANDIN_MODE"]
with open(os.environ["STANDIN_LOG"], "a") as h:
    h.write(" ".join(sys.argv[1:]) + "\n")
mode = open(mode_file).read().strip()
if sys.argv[1:3] == ["system", "show"]:
    sys.stdout.write(open(os.path.join(os.environ["STANDIN_RECORDED"],
                                       "rdma_system_show%s.txt" % ("_exclusive" if mode == "exclusive" else ""))).read())
    sys.exit(0)
if sys.argv[1:4] == ["system", "set", "netns"]:
    if os.environ.get("STANDIN_BUSY"):
        sys.stderr.write("error: Device or resource busy\n")
        sys.exit(1)
    open(mode_file, "w").write(sys.argv[4])
    sys.exit(0)
sys.exit(255)
'''
SRIOV = {"name": "t", "rails": 1, "addressing": {"mode": "shared", "supernet": "172.16.0.0/16", "rail_prefix": 24},
         "cni": "sriov", "sriov": {"vfs": 2}}
OWN = "etc/modprobe.d/ainet-rdma-netns.conf"


@pytest.fixture
def host(tmp_path, monkeypatch):
    os.makedirs(str(tmp_path / "root/sys/module/ib_core/parameters"))
    (tmp_path / "mode").write_text("shared\n")
    bin_dir = tmp_path / "bin"
    os.makedirs(str(bin_dir))
    (bin_dir / "rdma").write_text("#!%s\n%s" % (sys.executable, STANDIN))
    os.chmod(str(bin_dir / "rdma"), 0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("STANDIN_MODE", str(tmp_path / "mode"))
    monkeypatch.setenv("STANDIN_LOG", str(tmp_path / "rdma.log"))
    monkeypatch.setenv("STANDIN_RECORDED", os.path.abspath(RECORDED))
    return tmp_path


def sets(tmp_path):
    log = tmp_path / "rdma.log"
    return [line for line in log.read_text().splitlines() if line.startswith("system set")] if log.exists() else []


def run(capsys, tmp_path, cluster=None, check=False, **args):
    """The task with the model, as roles write it: through the action plugin (controller), then the module."""
    params = dict(cluster=cluster or SRIOV, config_root=str(tmp_path / "cfg"), sysfs_root=str(tmp_path / "root"),
                  initramfs="never")
    params.update(args)
    return run_task(capsys, "rdma_netns", params, check=check)[0]


def test_option_modes_and_foreign_files():
    assert plan.option_modes("options ib_core netns_mode=0\n# options ib_core netns_mode=1\n") == ["exclusive"]
    assert plan.option_modes("options  ib_core send_queue_size=512 netns_mode=Y") == ["shared"]
    assert plan.option_modes("options mlx5_core prof_sel=2\n") == []
    conflicts, dups = plan.foreign_options({"/etc/modprobe.d/a.conf": "options ib_core netns_mode=1\n",
                                            "/etc/modprobe.d/b.conf": "options ib_core netns_mode=0\n"}, "exclusive")
    assert conflicts == ["/etc/modprobe.d/a.conf (netns_mode shared)"]
    assert dups == ["/etc/modprobe.d/b.conf (netns_mode exclusive)"]


def test_plan():
    assert plan.plan("exclusive", "shared", None)["live"] == ["rdma", "system", "set", "netns", "exclusive"]
    assert plan.plan("exclusive", None, None)["live"] is None  # ib_core not loaded: the option decides
    same = plan.plan("exclusive", "exclusive", plan.modprobe_text("exclusive"))
    assert same == {"live": None, "file": plan.modprobe_text("exclusive"), "file_changed": False}
    assert plan.plan(None, "shared", plan.modprobe_text("shared")) == {"live": None, "file": None, "file_changed": True}
    assert "options ib_core netns_mode=1\n" in plan.modprobe_text("shared")


def test_check_then_apply_then_nothing(host, capsys, monkeypatch):
    monkeypatch.setattr(rdma_netns, "other_netns", lambda: [])
    checked = run(capsys, host, check=True)
    assert checked["changed"] and checked["commands"] == ["rdma system set netns exclusive", "write /" + OWN]
    assert sets(host) == [] and not (host / "cfg").exists()
    done = run(capsys, host)
    assert done["changed"] and done["live_before"] == "shared" and done["live"] == "exclusive"
    assert (host / "cfg" / OWN).read_text().endswith("options ib_core netns_mode=0\n")
    assert sets(host) == ["system set netns exclusive"]
    again = run(capsys, host)
    assert not again["changed"] and sets(host) == ["system set netns exclusive"]


def test_busy_kernel_leaves_a_pending_reboot_and_the_option(host, capsys, monkeypatch):
    monkeypatch.setenv("STANDIN_BUSY", "1")
    monkeypatch.setattr(rdma_netns, "other_netns", lambda: ["net:[4026532281]"])
    checked = run(capsys, host, check=True)   # check mode says so before anything is tried
    assert checked["changed"] and "will refuse the live change while 1 other" in checked["reboot_pending"][0]
    assert sets(host) == []
    first = run(capsys, host)
    assert first["changed"] and first["live"] == "shared"
    assert len(first["reboot_pending"]) == 1 and "other network namespaces" in first["reboot_pending"][0]
    assert (host / "cfg" / OWN).exists()
    second = run(capsys, host)
    assert not second["changed"] and second["reboot_pending"] == first["reboot_pending"]


def test_a_conflicting_option_of_another_tool_is_refused_by_name(host, capsys):
    os.makedirs(str(host / "cfg/etc/modprobe.d"))
    (host / "cfg/etc/modprobe.d/k8s-rdma.conf").write_text("options ib_core netns_mode=1\n")
    (host / "cfg/etc/modprobe.d/other.conf").write_text("options ib_core recv_queue_size=256\n")
    result = run(capsys, host)
    assert result["failed"] and "/etc/modprobe.d/k8s-rdma.conf (netns_mode shared)" in result["msg"]
    assert "other.conf" not in result["msg"]
    assert sets(host) == [] and not (host / "cfg" / OWN).exists()
    assert (host / "cfg/etc/modprobe.d/k8s-rdma.conf").read_text() == "options ib_core netns_mode=1\n"


def test_model_without_a_mode_removes_only_its_own_file(host, capsys):
    run(capsys, host)
    (host / "cfg/etc/modprobe.d/other.conf").write_text("options ib_core recv_queue_size=256\n")
    hostnet = dict(copy.deepcopy(SRIOV), cni="host", sriov=None)
    result = run(capsys, host, cluster=hostnet)
    assert result["changed"] and result["mode"] is None and result["commands"] == ["remove /" + OWN]
    assert not (host / "cfg" / OWN).exists() and (host / "cfg/etc/modprobe.d/other.conf").exists()


def test_contradiction_in_the_model_is_refused_before_anything(host, capsys):
    bad = dict(copy.deepcopy(SRIOV), rdma_netns="shared")
    result = run(capsys, host, cluster=bad)
    assert result["failed"] and "fabric_cluster.rdma_netns" in result["msg"] and "sriov" in result["msg"]
    assert not (host / "rdma.log").exists()


def test_the_action_sends_the_host_only_the_mode(host, capsys, monkeypatch):
    monkeypatch.setattr(rdma_netns, "other_netns", lambda: [])
    result, sent = run_task(capsys, "rdma_netns", dict(cluster=SRIOV, config_root=str(host / "cfg"),
                                                       sysfs_root=str(host / "root"), initramfs="never"), check=True)
    assert sent == {"mode": "exclusive", "config_root": str(host / "cfg"), "sysfs_root": str(host / "root"),
                    "initramfs": "never"}
    assert result["changed"] and result["mode"] == "exclusive"
    hostnet = dict(copy.deepcopy(SRIOV), cni="host", sriov=None)
    assert run_task(capsys, "rdma_netns", dict(cluster=hostnet, initramfs="never", config_root=str(host / "cfg"),
                                               sysfs_root=str(host / "root")))[1]["mode"] == "none"


def test_a_contradiction_never_reaches_the_host(host, capsys):
    result, sent = run_task(capsys, "rdma_netns", dict(cluster=dict(copy.deepcopy(SRIOV), rdma_netns="shared")))
    assert sent is None and result["failed"] and result["msg"].startswith("fabric_cluster.rdma_netns: 'shared'")


def test_the_flat_mode_works_without_the_model_and_the_model_is_refused_by_the_module(host, capsys, monkeypatch):
    monkeypatch.setattr(rdma_netns, "other_netns", lambda: [])
    params = dict(mode="exclusive", config_root=str(host / "cfg"), sysfs_root=str(host / "root"), initramfs="never")
    done = run_module(capsys, "rdma_netns", params)
    assert done["changed"] and done["live"] == "exclusive" and sets(host) == ["system set netns exclusive"]
    gone = run_module(capsys, "rdma_netns", dict(params, mode="none"))
    assert gone["changed"] and gone["mode"] is None and not (host / "cfg" / OWN).exists()
    del params["mode"]
    refused = run_module(capsys, "rdma_netns", dict(params, cluster=SRIOV))
    assert refused["failed"] and "cluster is handled on the controller by the action plugin" in refused["msg"]
    neither = run_module(capsys, "rdma_netns", params)
    assert neither["failed"] and "one of the following is required: mode, cluster" in neither["msg"]
