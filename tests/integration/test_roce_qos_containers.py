# -*- coding: utf-8 -*-
"""roce_qos on a real host that reboots (a podman system container with systemd, needs root).

The lab's veth NICs cannot do DCB, so the node gets a recording stand-in for mlnx_qos
(tests/unit/plugins/modules/fixtures/mlnx_qos_standin.py): it keeps the NIC's QoS in /run (gone at reboot, as a
NIC's settings are), prints it the way mlnx_qos does and logs every call with the boot id.
The verdict is the stand-in's log and state, and systemd's: check mode runs no setter; the
first run runs exactly the missing settings; the second changes nothing; after a reboot the
boot unit alone runs every setting once (no loop) and the node is converged; another tool's
QoS unit fails the run before any change; a model without a lossless class removes the unit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_rail_network_lab as t  # noqa: E402  pylint: disable=wrong-import-position
from test_rail_network_lab import lab  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the container lab needs root"),
    pytest.mark.skipif(not all(shutil.which(c) for c in ("podman", "runc", "mmdebstrap")),
                       reason="the container lab needs podman, runc and mmdebstrap (tests/molecule.sh installs them)"),
]
ROOT = os.path.dirname(os.path.dirname(HERE))
STANDIN = os.path.join(ROOT, "tests", "unit", "plugins", "modules", "fixtures", "mlnx_qos_standin.py")
NODES = {"gpu01": 1}
NICS = t.INTERFACES
SETTERS = {nic: ["-i %s --trust dscp" % nic, "-i %s --pfc 0,0,0,1,0,0,0,0" % nic,
                 "-i %s --tsa ets,ets,ets,ets,ets,ets,strict,ets --tcbw 50,0,0,50,0,0,0,0" % nic] for nic in NICS}
BOOT = {nic: ["-i %s --trust dscp" % nic, "-i %s --pfc 0,0,0,1,0,0,0,0" % nic, "-i %s --dscp2prio set,26,3" % nic,
              "-i %s --dscp2prio set,48,6" % nic,
              "-i %s --tsa ets,ets,ets,ets,ets,ets,strict,ets --tcbw 50,0,0,50,0,0,0,0" % nic] for nic in NICS}
FOREIGN = """[Unit]
Description=Another tool's RDMA QoS (test)
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/mlnx_qos -i ens6f0np0 --trust pcp
[Install]
WantedBy=multi-user.target
"""


def qos(inventory, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=t.BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(t.BIN, "ansible-playbook"), "-i", inventory, os.path.join(ROOT, "playbooks", "qos.yml")]
    return subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


def on_node(lab_dir, *argv, check=True):
    return lab.podman(lab_dir, "exec", lab.node_ns("gpu01"), *argv, check=check)


def unit_state(lab_dir, unit, seconds=120):
    """The unit's ActiveState and Result once it has left "activating": the container's boot runs
    on its own clock, and a loaded machine may still be running the oneshot unit when SSH answers."""
    deadline = time.monotonic() + seconds
    while True:
        state = on_node(lab_dir, "systemctl", "show", "-p", "ActiveState", "-p", "Result", unit)
        if "ActiveState=activating" not in state or time.monotonic() > deadline:
            return state
        time.sleep(0.5)


def log(rootfs):
    """[(boot id, arguments)] of every stand-in call so far."""
    path = os.path.join(rootfs, "var", "log", "mlnx_qos-standin.log")
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        return [tuple(line.rstrip("\n").split(" ", 1)) for line in handle]


def setters(entries):
    return [args for _boot, args in entries if len(args.split()) > 2]


def recap_changed(result):
    line = [x for x in result.stdout.splitlines() if x.startswith("gpu01")][-1]
    return int(line.split("changed=")[1].split()[0])


def test_roce_qos_applies_only_what_differs_and_comes_back_from_the_boot_unit(tmp_path):
    lab_dir = str(tmp_path / "lab")
    try:
        inventory, _plan = lab.build(t.cluster_for("exclusive"), NODES, NICS, lab_dir, kind="containers")
        rootfs = os.path.join(lab_dir, "hosts", "gpu01", "rootfs")
        target = os.path.join(rootfs, "usr", "local", "sbin", "mlnx_qos")
        with open(STANDIN) as src, open(target, "w") as dst:
            dst.write("#!/usr/bin/python3\n" + src.read())
        os.chmod(target, 0o755)

        checked = qos(inventory, "--check", "--diff")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert recap_changed(checked) == 1
        assert setters(log(rootfs)) == []  # check mode read the NICs and set nothing
        assert "mlnx_qos -i ens6f0np0 --trust dscp" in checked.stdout

        first = qos(inventory)
        assert first.returncode == 0, first.stdout + first.stderr
        assert setters(log(rootfs)) == [c for nic in NICS for c in SETTERS[nic]]
        assert "has no DCQCN/CNP files" in first.stdout + first.stderr  # veths: skipped, said so
        unit = os.path.join(rootfs, "etc", "systemd", "system", "ainet-roce-qos.service")
        assert os.path.islink(os.path.join(rootfs, "etc", "systemd", "system", "multi-user.target.wants",
                                           "ainet-roce-qos.service"))

        before = len(log(rootfs))
        second = qos(inventory)
        assert second.returncode == 0 and recap_changed(second) == 0, second.stdout
        assert setters(log(rootfs)[before:]) == []

        boots_before = {boot for boot, _args in log(rootfs)}
        lab.reboot(lab_dir, "gpu01")
        lab.settle(NODES)
        state = unit_state(lab_dir, "ainet-roce-qos.service")
        assert "ActiveState=active" in state and "Result=success" in state, state
        booted = [(boot, args) for boot, args in log(rootfs) if boot not in boots_before]
        assert setters(booted) == [c for nic in NICS for c in BOOT[nic]]  # every setting, once, at boot
        after_boot = qos(inventory, "--check")
        assert after_boot.returncode == 0 and recap_changed(after_boot) == 0, after_boot.stdout

        # Another tool's QoS unit: refused before any change, named.
        foreign = os.path.join(rootfs, "etc", "systemd", "system", "other-rdma-qos.service")
        with open(foreign, "w") as handle:
            handle.write(FOREIGN)
        before = len(log(rootfs))
        refused = qos(inventory, "-e", t.with_vars(lab_dir, "tos", fabric_cluster=t.cluster_for("exclusive", qos={
            "roce_dscp": 24, "roce_tos": 98})))
        assert refused.returncode != 0
        assert "/etc/systemd/system/other-rdma-qos.service" in refused.stdout
        assert setters(log(rootfs)[before:]) == []
        os.remove(foreign)

        # No lossless class any more: the unit and its link go; the NICs are left as they are.
        gone = qos(inventory, "-e", t.with_vars(lab_dir, "none", fabric_cluster=t.cluster_for("exclusive", qos={
            "preset": "none"})))
        assert gone.returncode == 0, gone.stdout + gone.stderr
        assert not os.path.exists(unit)
        assert not os.path.lexists(os.path.join(rootfs, "etc", "systemd", "system", "multi-user.target.wants",
                                                "ainet-roce-qos.service"))
    finally:
        lab.down()


def validate(inventory, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=t.BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(t.BIN, "ansible-playbook"), "-i", inventory, os.path.join(ROOT, "playbooks", "validate.yml")]
    return subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


def test_validate_reads_the_nics_and_the_tor_configs_and_reports_each_link(tmp_path):
    """Node 8 behind four ToRs: Cumulus with its RoCE defaults (rail 1), SONiC's stock template (rail 2), and
    two whose configurations are missing (rails 3, 4). The NICs are read on the host (mlnx_qos stand-in)."""
    lab_dir = str(tmp_path / "lab")
    data = os.path.join(ROOT, "tests", "unit", "plugins", "module_utils", "data", "qos")
    tors = [{"name": "leaf1", "rails": [1], "platform": "cumulus", "port_template": "swp{node}"},
            {"name": "leaf2", "rails": [2], "platform": "sonic", "port_template": "Ethernet{node}"},
            {"name": "leaf3", "rails": [3], "platform": "sonic", "port_template": "Ethernet{node}"},
            {"name": "leaf4", "rails": [4], "platform": "eos", "port_template": "Ethernet{node}"}]
    cluster = t.cluster_for("exclusive", tors=tors)
    try:
        inventory, _plan = lab.build(cluster, {"gpu01": 8}, NICS, lab_dir, kind="containers")
        rootfs = os.path.join(lab_dir, "hosts", "gpu01", "rootfs")
        with open(STANDIN) as src, open(os.path.join(rootfs, "usr", "local", "sbin", "mlnx_qos"), "w") as dst:
            dst.write("#!/usr/bin/python3\n" + src.read())
        os.chmod(os.path.join(rootfs, "usr", "local", "sbin", "mlnx_qos"), 0o755)
        configs = os.path.join(inventory, "switch-configs")
        os.makedirs(configs)
        shutil.copy(os.path.join(data, "nvue", "nv-config-roce-lossless.yaml.txt"), os.path.join(configs, "leaf1.yaml"))
        shutil.copy(os.path.join(data, "sonic", "qos-arista7050.json"), os.path.join(configs, "leaf2.json"))
        rails = t.playbook(inventory)
        assert rails.returncode == 0, rails.stdout + rails.stderr
        applied = qos(inventory)
        assert applied.returncode == 0, applied.stdout + applied.stderr
        report_dir = os.path.join(lab_dir, "report")
        result = validate(inventory, "-e", "lossless_check_report_dir=" + report_dir)
        assert result.returncode == 0, result.stdout + result.stderr
        # the mlnx_qos stand-in states no host buffers, DCQCN or RoCE ToS: link 1 is not shown to agree (issue 40)
        assert "4 host-ToR links: 0 agree, 1 disagree, 1 not all checked, 2 not checked" in result.stdout
        with open(os.path.join(report_dir, "lossless-report.md")) as handle:
            rows = {line.split(" | ")[1]: line for line in handle if line.startswith("| default |")}
        assert "| not all checked |" in rows["1"] and "`buffer_host`" in rows["1"]
        assert ("DSCP 26 is lossless priority 3 on the host but lands in lossy TC1 on the switch port Ethernet8 "
                "(PFC there: 3,4).") in rows["2"]
        assert "no configuration of ToR leaf3 was read" in rows["3"]
        assert os.path.exists(os.path.join(report_dir, "lossless-report.html"))
        strict = validate(inventory, "-e", "lossless_check_report_dir=" + report_dir, "-e", "lossless_check_fail=true")
        assert strict.returncode != 0 and "4 of 4 host-ToR links disagree or could not be checked in full" in strict.stdout
    finally:
        lab.down()
