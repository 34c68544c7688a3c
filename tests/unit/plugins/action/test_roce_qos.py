# -*- coding: utf-8 -*-
"""roce_qos end to end without root: a sysfs tree in a temporary directory and the recording
mlnx_qos stand-in (tests/unit/plugins/modules/fixtures/mlnx_qos_standin.py) on PATH.

The module runs in-process with its real reads, writes and commands; the verdict is the files
it leaves, the stand-in's state and log, and a second run.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from ansible_collections.ainet.fabric.tests.unit.plugins.modules.host_task import run_module
from ansible_collections.ainet.fabric.tests.unit.plugins.action.task_runner import run_task

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
STANDIN = os.path.join(ROOT, "tests", "unit", "plugins", "modules", "fixtures", "mlnx_qos_standin.py")
NICS = ["ens1f0np0", "ens1f1np1"]
CLUSTER = {"name": "q", "rails": 2, "addressing": {"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24}}


def install_standin(target):
    """The stand-in as an executable ``mlnx_qos`` (kept without a shebang in the repository)."""
    with open(STANDIN) as src, open(target, "w") as dst:
        dst.write("#!/usr/bin/python3\n" + src.read())
    os.chmod(target, 0o755)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


def read(path):
    with open(path) as handle:
        return handle.read()


@pytest.fixture
def node(tmp_path, monkeypatch):
    """A node with two ConnectX ports as they come: DCQCN on for every priority, CNP DSCP 48 on 6."""
    sysroot = tmp_path / "sysroot"
    for index, nic in enumerate(NICS):
        net = sysroot / "sys" / "class" / "net" / nic
        write(str(net / "mtu"), "9000\n")
        for point in ("rp", "np"):
            for prio in range(8):
                write(str(net / "ecn" / ("roce_" + point) / "enable" / str(prio)), "1\n")
        write(str(net / "ecn" / "roce_np" / "cnp_dscp"), "48\n")
        write(str(net / "ecn" / "roce_np" / "cnp_802p_prio"), "6\n")
        os.makedirs(str(net / "device" / "infiniband" / ("mlx5_%d" % index)))
        write(str(sysroot / "sys" / "class" / "infiniband" / ("mlx5_%d" % index) / "tc" / "1" / "traffic_class"),
              "0\n")
        # configfs creates ports/1/default_roce_tos when the device's directory is made; a plain
        # directory tree cannot, so the entry is there from the start (as after an earlier cma_roce_tos).
        write(str(sysroot / "sys" / "kernel" / "config" / "rdma_cm" / ("mlx5_%d" % index) / "ports" / "1" /
                  "default_roce_tos"), "0\n")
    bindir = tmp_path / "bin"
    os.makedirs(str(bindir))
    install_standin(str(bindir / "mlnx_qos"))
    monkeypatch.setenv("PATH", "%s%s%s" % (bindir, os.pathsep, os.environ.get("PATH", "")))
    monkeypatch.setenv("MLNX_QOS_STANDIN_ROOT", str(sysroot))
    return tmp_path


def run(capsys, base, check=False, **extra):
    """The task with the model, as roles write it: through the action plugin (controller), then the module."""
    args = dict(cluster=CLUSTER, interfaces=NICS, tool="mlnx_qos", config_root=str(base / "etc-root"),
                sysfs_root=str(base / "sysroot"))
    args.update(extra)
    return run_task(capsys, "roce_qos", args, check=check)[0]


def standin_calls(base):
    path = base / "sysroot" / "var" / "log" / "mlnx_qos-standin.log"
    return [line.split(" ", 1)[1] for line in read(str(path)).splitlines()] if path.exists() else []


def expected(nic, dev):
    return ["mlnx_qos -i %s --trust dscp" % nic, "mlnx_qos -i %s --pfc 0,0,0,1,0,0,0,0" % nic,
            "mlnx_qos -i %s --tsa ets,ets,ets,ets,ets,ets,strict,ets --tcbw 50,0,0,50,0,0,0,0" % nic,
            "echo 106 > /sys/class/infiniband/%s/tc/1/traffic_class" % dev,
            "mkdir -p /sys/kernel/config/rdma_cm/%s" % dev,
            "echo 106 > /sys/kernel/config/rdma_cm/%s/ports/1/default_roce_tos" % dev]


def test_check_mode_reads_and_changes_nothing(node, capsys):
    result = run(capsys, node, check=True)
    assert result["changed"] is True
    assert result["commands"] == expected("ens1f0np0", "mlx5_0") + expected("ens1f1np1", "mlx5_1")
    assert all(len(call.split()) == 2 for call in standin_calls(node))  # only "-i <nic>" reads
    assert read(str(node / "sysroot/sys/class/infiniband/mlx5_0/tc/1/traffic_class")) == "0\n"
    assert not (node / "etc-root" / "etc/systemd/system/ainet-roce-qos.service").exists()
    assert "ExecStart=" in result["diff"][1]["after"]


def test_apply_converges_then_a_second_run_changes_nothing(node, capsys):
    result = run(capsys, node)
    assert result["changed"] is True and result["tool"] == "mlnx_qos"
    assert result["commands"] == expected("ens1f0np0", "mlx5_0") + expected("ens1f1np1", "mlx5_1")
    assert read(str(node / "sysroot/sys/class/infiniband/mlx5_1/tc/1/traffic_class")).strip() == "106"
    assert read(str(node / "sysroot/sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos")).strip() == "106"
    state = json.loads(read(str(node / "sysroot/run/mlnx_qos-standin/ens1f0np0.json")))
    assert (state["trust"], state["pfc"], state["tsa"][6]) == ("dscp", [0, 0, 0, 1, 0, 0, 0, 0], "strict")
    unit = read(str(node / "etc-root/etc/systemd/system/ainet-roce-qos.service"))
    assert "ExecStart=%s -i ens1f1np1 --dscp2prio set,26,3" % shutil.which("mlnx_qos") in unit
    assert unit.count("ExecStart=") == 2 * 12  # every setting of both NICs, not only the missing ones
    port = result["facts"]["ports"]["ens1f0np0"]
    assert (port["trust"], port["pfc"], port["roce_tos"], port["traffic_class"]) == ("dscp", [3], 106, 106)
    again = run(capsys, node)
    assert (again["changed"], again["commands"]) == (False, [])


def test_gathered_reads_every_nic(node, capsys):
    result = run(capsys, node, state="gathered")
    assert result["changed"] is False
    assert sorted(result["facts"]["ports"]) == NICS
    port = result["facts"]["ports"]["ens1f1np1"]
    assert (port["trust"], port["pfc"], port["cnp_dscp"], port["ecn_rp"]) == ("pcp", [], 48, list(range(8)))


def test_another_tools_qos_unit_fails_before_any_change(node, capsys):
    write(str(node / "etc-root/etc/systemd/system/rdma-qos.service"),
          "[Service]\nExecStart=/usr/bin/mlnx_qos -i ens1f0np0 --trust pcp\n")
    result = run(capsys, node)
    assert result["failed"] is True
    assert "rdma-qos.service" in result["msg"] and "would fight" in result["msg"]
    assert all(len(call.split()) == 2 for call in standin_calls(node))


def test_no_lossless_class_removes_the_unit(node, capsys):
    run(capsys, node)
    unit = node / "etc-root/etc/systemd/system/ainet-roce-qos.service"
    assert unit.exists()
    result = run(capsys, node, cluster=dict(CLUSTER, qos={"preset": "none"}))
    assert result["changed"] is True and not unit.exists() and result["unit"]["present"] is False


def test_a_missing_nic_is_named(node, capsys):
    result = run(capsys, node, interfaces=["ens1f0np0", "ens9f9np9"])
    assert result["failed"] is True and "rail NIC ens9f9np9 does not exist" in result["msg"]


def test_the_action_sends_the_host_only_each_nics_settings(node, capsys):
    result, sent = run_task(capsys, "roce_qos", dict(cluster=CLUSTER, interfaces=NICS, tool="mlnx_qos",
                                                     config_root=str(node / "etc-root"),
                                                     sysfs_root=str(node / "sysroot")), check=True)
    assert result["changed"] and sorted(sent) == ["config_root", "nics", "sysfs_root", "tool"]
    assert [n["name"] for n in sent["nics"]] == NICS
    assert sent["nics"][0]["dscp_to_priority"] == {"26": 3, "48": 6} and sent["nics"][0]["roce_tos"] == 106
    bad, sent = run_task(capsys, "roce_qos", dict(cluster=dict(CLUSTER, qos={"preset": "nvidia", "roce_dscp": 99}),
                                                  interfaces=NICS))
    assert sent is None and bad["failed"] and bad["msg"].startswith("fabric_cluster.qos.roce_dscp")


def test_the_flat_options_work_without_the_model(node, capsys):
    nic = {"name": "ens1f0np0", "pfc": [3], "dscp_to_priority": {"26": 3, "48": 6}, "ecn_rp": [3], "ecn_np": [3],
           "cnp_dscp": 48, "cnp_priority": 6, "roce_tos": 106}
    params = dict(nics=[nic], tool="mlnx_qos", config_root=str(node / "etc-root"), sysfs_root=str(node / "sysroot"))
    done = run_module(capsys, "roce_qos", params)
    assert done["commands"] == [c for c in expected("ens1f0np0", "mlx5_0") if "--tsa" not in c]  # no ets: left alone
    assert not run_module(capsys, "roce_qos", params)["changed"]
    gone = run_module(capsys, "roce_qos", dict(params, nics=[]))
    assert gone["changed"] and not gone["unit"]["present"]
    bad = run_module(capsys, "roce_qos", dict(params, nics=[dict(nic, pfc=[8])]))
    assert bad["failed"] and bad["msg"] == "nics[ens1f0np0].pfc: 8 is not an integer in 0..7"
    refused = run_module(capsys, "roce_qos", dict(params, cluster=CLUSTER))
    assert refused["failed"] and "cluster is handled on the controller by the action plugin" in refused["msg"]
