# -*- coding: utf-8 -*-
"""The pcie_acs module in-process, with stand-in ``lspci`` and ``setpci`` on PATH (written here, at test time)
that print recorded real outputs: the VM tier's q35 root port with ACS on (``tests/vm/recorded/
lspci_vvv_rootport_acs_on.txt``) until ``setpci`` has run, then the same port with ACS off (``..._acs_off.txt``);
``setpci`` records its arguments. For ``gpu_nic`` the H100 + PEX890xx + ConnectX-7 excerpt (data/rdma/lspci_vvv)
with the switch ports' ACSCtl bits turned on here, and a sysfs tree that puts the rail NIC at 0000:1a:00.0.
Proves the command level: check mode runs nothing, refusals come before any change, a second run changes
nothing, the unit is the only file written. ACS really changing on a kernel is proven on the VM tier."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ainet.fabric.tests.unit.plugins.modules.host_task import run_module
from ansible_collections.ainet.fabric.tests.unit.plugins.action.task_runner import run_task

HERE = os.path.dirname(os.path.dirname(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
VM = os.path.join(ROOT, "tests", "vm", "recorded")
H100 = os.path.join(HERE, "module_utils", "data", "rdma", "lspci_vvv", "gpud-h100-pex890xx-cx7-excerpt.txt")
UNIT = "etc-root/etc/systemd/system/ainet-pcie-acs.service"
ON_BITS = "ACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-"
OFF_BITS = "ACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-"

LSPCI = """#!/bin/sh
[ "$*" = "-D -vvv" ] || { echo "unexpected lspci arguments: $*" >&2; exit 2; }
if [ -e "$STANDIN_DIR/acs-written" ]; then /bin/cat "$STANDIN_DIR/lspci-off.txt"; else /bin/cat "$STANDIN_DIR/lspci-on.txt"; fi
"""
SETPCI = """#!/bin/sh
echo "$*" >> "$STANDIN_DIR/setpci.log"
[ -z "$STANDIN_SETPCI_FAILS" ] || { echo "setpci: no such device" >&2; exit 1; }
[ -n "$STANDIN_SETPCI_IGNORED" ] || /bin/touch "$STANDIN_DIR/acs-written"
"""

LISTED = {"name": "t", "rails": 2, "mtu": 9000,
          "addressing": {"mode": "shared", "supernet": "172.16.0.0/16", "rail_prefix": 24},
          "pcie_acs": {"disable": "listed", "bridges": ["0000:00:03.0"]}}
NICS = ["enp1s0", "enp2s0"]


def write(path, text):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), "w") as handle:
        handle.write(text)


def read(path):
    with open(path) as handle:
        return handle.read()


def path_only(_module, name, *_args, **_kwargs):
    """get_bin_path without the sbin directories Ansible adds: only the stand-ins count."""
    return shutil.which(name)


@pytest.fixture
def host(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    for name, text in (("lspci", LSPCI), ("setpci", SETPCI)):
        write(bin_dir / name, text)
        os.chmod(str(bin_dir / name), 0o755)
    write(tmp_path / "lspci-on.txt", read(os.path.join(VM, "lspci_vvv_rootport_acs_on.txt")))
    write(tmp_path / "lspci-off.txt", read(os.path.join(VM, "lspci_vvv_rootport_acs_off.txt")))
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("STANDIN_DIR", str(tmp_path))
    monkeypatch.setattr(AnsibleModule, "get_bin_path", path_only)
    return tmp_path


def setpci_calls(tmp_path):
    path = tmp_path / "setpci.log"
    return path.read_text().splitlines() if path.exists() else []


def run(capsys, tmp_path, check=False, cluster=None, **args):
    """The task with the model, as roles write it: through the action plugin (controller), then the module."""
    params = dict(cluster=cluster or LISTED, interfaces=NICS, config_root=str(tmp_path / "etc-root"),
                  sysfs_root=str(tmp_path / "root"))
    params.update(args)
    return run_task(capsys, "pcie_acs", params, check=check)[0]


def test_check_mode_then_apply_then_nothing(host, capsys):
    checked = run(capsys, host, check=True)
    assert checked["changed"] and not checked.get("failed"), checked
    assert checked["commands"] == ["setpci -s 0000:00:03.0 ECAP_ACS+0x6.w=0000"]
    assert setpci_calls(host) == [] and not (host / "etc-root").exists()
    assert checked["bridges"] == [{"address": "0000:00:03.0", "reason": "listed in fabric_cluster.pcie_acs.bridges",
                                   "acs_ctl_before": ["SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd"],
                                   "changed": True}]
    assert checked["reboot_pending"] == []
    assert checked["diff"][0]["before"] == \
        "0000:00:03.0 ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n"
    assert checked["diff"][0]["after"] == \
        "0000:00:03.0 ACSCtl: SrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-\n"
    assert checked["diff"][1]["before"] == "" and "ECAP_ACS+0x6.w=0000" in checked["diff"][1]["after"]
    assert checked["unit"] == {"path": "/etc/systemd/system/ainet-pcie-acs.service", "changed": True,
                               "enabled": False, "present": True}

    done = run(capsys, host)
    assert done["changed"] and not done.get("failed"), done
    assert setpci_calls(host) == ["-s 0000:00:03.0 ECAP_ACS+0x6.w=0000"]
    unit = (host / UNIT).read_text()
    assert unit == checked["diff"][1]["after"]
    assert unit.startswith("# Managed by ainet.fabric (pcie_acs); changes here are overwritten.\n")
    assert "\nExecStart=%s -s 0000:00:03.0 ECAP_ACS+0x6.w=0000\n" % (host / "bin" / "setpci") in unit
    assert len(re.findall("^ExecStart=", unit, re.M)) == 1
    assert "\nDefaultDependencies=no\n" in unit and "\nAfter=" not in unit
    assert "\nBefore=kubelet.service containerd.service crio.service docker.service nvidia-fabricmanager.service " \
           "nvidia-persistenced.service shutdown.target\n" in unit
    assert "\nWantedBy=multi-user.target\n" in unit
    assert done["unit"]["present"] and done["unit"]["changed"]

    again = run(capsys, host)
    assert not again["changed"] and again["commands"] == [], again
    assert again["bridges"][0]["acs_ctl_before"] == [] and not again["bridges"][0]["changed"]
    assert again["unit"]["present"] and not again["unit"]["changed"]
    assert setpci_calls(host) == ["-s 0000:00:03.0 ECAP_ACS+0x6.w=0000"]
    assert sorted(os.listdir(str(host / "etc-root/etc/systemd/system"))) == ["ainet-pcie-acs.service"]


def test_the_unit_names_every_selected_bridge_even_one_already_off(host, capsys):
    shutil.copy(os.path.join(VM, "lspci_vvv_iommu_on_with_vfs.txt"), str(host / "lspci-on.txt"))
    shutil.copy(os.path.join(VM, "lspci_vvv.txt"), str(host / "lspci-off.txt"))
    done = run(capsys, host, bridges=["0000:00:04.0", "00:03.0"])
    assert setpci_calls(host) == ["-s 0000:00:03.0 ECAP_ACS+0x6.w=0000", "-s 0000:00:04.0 ECAP_ACS+0x6.w=0000"]
    assert [b["reason"] for b in done["bridges"]] == ["listed in pcie_acs_bridges"] * 2
    unit = (host / UNIT).read_text()
    assert re.findall(r"^ExecStart=\S+ -s (\S+) ", unit, re.M) == ["0000:00:03.0", "0000:00:04.0"]
    # already off (no IOMMU): no command, the unit still names both
    (host / "acs-written").unlink()
    shutil.copy(os.path.join(VM, "lspci_vvv.txt"), str(host / "lspci-on.txt"))
    again = run(capsys, host, bridges=["0000:00:04.0", "00:03.0"])
    assert not again["changed"] and again["commands"] == [] and len(setpci_calls(host)) == 2


def test_gpu_nic_finds_the_switch_ports_above_the_gpu_and_the_rail_nic(host, capsys):
    stanzas = read(H100).split("\n\n")
    on = "\n\n".join(s.replace(OFF_BITS, ON_BITS) if re.match(r"(15|17):0", s) else s for s in stanzas)
    assert on.count(ON_BITS) == 5
    write(host / "lspci-on.txt", on)
    write(host / "lspci-off.txt", read(H100))
    device = host / "root/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:02.0/0000:1a:00.0"
    os.makedirs(str(device))
    os.makedirs(str(host / "root/sys/class/net/ens6f0np0"))
    os.symlink(str(device), str(host / "root/sys/class/net/ens6f0np0/device"))
    cluster = dict(LISTED, rails=1, pcie_acs={"disable": "gpu_nic"})
    done = run(capsys, host, cluster=cluster, interfaces=["ens6f0np0"])
    assert not done.get("failed"), done
    assert [(b["address"], b["reason"]) for b in done["bridges"]] == [
        ("0000:15:01.0", "above GPU 0000:19:00.0; above rail NIC ens6f0np0 (0000:1a:00.0)"),
        ("0000:17:01.0", "above GPU 0000:19:00.0"),
        ("0000:17:02.0", "above rail NIC ens6f0np0 (0000:1a:00.0)")]
    assert setpci_calls(host) == ["-s 0000:15:01.0 ECAP_ACS+0x6.w=0000", "-s 0000:17:01.0 ECAP_ACS+0x6.w=0000",
                                  "-s 0000:17:02.0 ECAP_ACS+0x6.w=0000"]
    again = run(capsys, host, cluster=cluster, interfaces=["ens6f0np0"])
    assert not again["changed"], again


def test_no_gpu_selects_nothing_removes_the_unit_and_says_why(host, capsys):
    run(capsys, host)
    assert (host / UNIT).exists()
    done = run(capsys, host, cluster=dict(LISTED, pcie_acs={"disable": "gpu_nic"}))
    assert done["changed"] and not done.get("failed"), done
    assert done["bridges"] == [] and done["commands"] == []
    assert "no GPU on this node" in done["msg"]
    assert done["unit"] == {"path": "/etc/systemd/system/ainet-pcie-acs.service", "changed": True,
                            "enabled": False, "present": False}
    assert not (host / UNIT).exists()


def test_none_removes_the_unit_without_needing_pciutils(host, capsys, monkeypatch):
    run(capsys, host)
    monkeypatch.setenv("PATH", str(host / "nothing"))
    done = run(capsys, host, cluster=dict(LISTED, pcie_acs={"disable": "none"}))
    assert done["changed"] and not done.get("failed") and not (host / UNIT).exists(), done
    assert "disable is none" in done["msg"]


def test_persist_false_changes_acs_and_removes_the_unit(host, capsys):
    run(capsys, host, check=False, persist=True)
    (host / "acs-written").unlink()
    done = run(capsys, host, persist=False)
    assert done["changed"] and not (host / UNIT).exists() and len(setpci_calls(host)) == 2
    assert not done["unit"]["present"]


def test_a_foreign_acs_unit_fails_the_run_naming_it_before_any_change(host, capsys, monkeypatch):
    write(host / "etc-root/etc/systemd/system/acs-off.service",
          "[Service]\nType=oneshot\nExecStart=/usr/bin/setpci -s 0000:00:03.0 ECAP_ACS+6.w=0000\n")
    write(host / "etc-root/etc/systemd/system/other.service", "[Service]\nExecStart=/bin/true\n")
    failed = run(capsys, host)
    assert failed["failed"] and "/etc/systemd/system/acs-off.service" in failed["msg"], failed
    assert "other.service" not in failed["msg"] and "\n" not in failed["msg"]
    assert setpci_calls(host) == [] and not (host / UNIT).exists()
    # recorded here: where Ansible puts a module's warnings depends on what else the test process imported
    warnings = []
    monkeypatch.setattr(AnsibleModule, "warn", lambda _module, text, **_kwargs: warnings.append(text))
    warned = run(capsys, host, foreign_units="warn")
    assert warned["changed"] and not warned.get("failed"), warned
    assert warnings == ["another tool's unit also writes PCIe ACS: /etc/systemd/system/acs-off.service"]


@pytest.mark.parametrize("exec_line", ["ExecStart=setpci -s 00:03.0 ECAP0d+6.w=0",
                                       "ExecStartPre=/sbin/setpci -s 0000:00:03.0 ecap_acs+0x6.w=0000"])
def test_the_other_ways_to_write_acs_count_as_foreign(host, capsys, exec_line):
    write(host / "etc-root/etc/systemd/system/x.service", "[Service]\n%s\n" % exec_line)
    assert run(capsys, host)["failed"]


@pytest.mark.parametrize("bridges, message", [
    (["0000:00:03.0", "0000:99:00.0"], "pcie_acs_bridges[1] '0000:99:00.0' is not a PCI device on this host"),
    (["not-a-bdf"], "pcie_acs_bridges[0] 'not-a-bdf' is not a PCI address"),
])
def test_a_bad_bridge_fails_with_one_line_and_changes_nothing(host, capsys, bridges, message):
    failed = run(capsys, host, bridges=bridges)
    assert failed["failed"] and failed["msg"].startswith(message), failed
    assert "\n" not in failed["msg"] and "Traceback" not in json.dumps(failed)
    assert setpci_calls(host) == [] and not (host / "etc-root").exists()


def test_a_bridge_the_model_lists_that_is_not_on_this_host(host, capsys):
    failed = run(capsys, host, cluster=dict(LISTED, pcie_acs={"disable": "listed", "bridges": ["0000:00:04.0"]}))
    assert failed["msg"].startswith("fabric_cluster.pcie_acs.bridges[0] '0000:00:04.0' is not a PCI device on "
                                    "this host"), failed
    assert setpci_calls(host) == []


def test_missing_pciutils_is_one_clear_line(host, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(host / "nothing"))
    failed = run(capsys, host)
    assert failed["failed"] and failed["msg"] == "lspci and setpci not found: install the package pciutils on this host"


def test_setpci_failing_or_not_taking_effect_fails(host, capsys, monkeypatch):
    monkeypatch.setenv("STANDIN_SETPCI_FAILS", "1")
    failed = run(capsys, host)
    assert failed["failed"] and "ECAP_ACS+0x6.w=0000 failed (rc 1): setpci: no such device" in failed["msg"], failed
    monkeypatch.delenv("STANDIN_SETPCI_FAILS")
    monkeypatch.setenv("STANDIN_SETPCI_IGNORED", "1")
    failed = run(capsys, host)
    assert failed["failed"] and failed["msg"] == "setpci ran, but lspci still shows ACS on: 0000:00:03.0 SrcValid " \
                                                 "ReqRedir CmpltRedir UpstreamFwd", failed


def test_a_bad_model_fails_without_a_traceback(host, capsys):
    failed = run(capsys, host, cluster=dict(LISTED, pcie_acs={"disable": "some"}))
    assert failed["failed"] and failed["msg"].startswith("fabric_cluster.pcie_acs.disable"), failed


def test_the_action_sends_the_host_only_its_policy_nics_and_bridges(host, capsys):
    base = dict(interfaces=NICS, config_root=str(host / "etc-root"), sysfs_root=str(host / "root"))
    _result, sent = run_task(capsys, "pcie_acs", dict(base, cluster=LISTED), check=True)
    assert sent == dict(disable="listed", nics=[], bridges=["0000:00:03.0"], source="fabric_cluster.pcie_acs.bridges",
                        config_root=base["config_root"], sysfs_root=base["sysfs_root"])
    _result, sent = run_task(capsys, "pcie_acs", dict(base, cluster=dict(LISTED, pcie_acs={"disable": "gpu_nic"})),
                             check=True)
    assert (sent["disable"], sent["nics"], sent["bridges"]) == ("gpu_nic", NICS, [])
    _result, sent = run_task(capsys, "pcie_acs", dict(base, cluster=LISTED, bridges=["00:04.0"]), check=True)
    assert (sent["disable"], sent["bridges"], sent["source"]) == ("listed", ["00:04.0"], "pcie_acs_bridges")


def test_the_flat_options_work_without_the_model(host, capsys):
    params = dict(disable="listed", bridges=["0000:00:03.0"], config_root=str(host / "etc-root"),
                  sysfs_root=str(host / "root"))
    done = run_module(capsys, "pcie_acs", params)
    assert done["changed"] and setpci_calls(host) == ["-s 0000:00:03.0 ECAP_ACS+0x6.w=0000"], done
    assert done["bridges"][0]["reason"] == "listed in bridges"
    failed = run_module(capsys, "pcie_acs", dict(params, bridges=["0000:00:09.0"]))
    assert failed["failed"] and failed["msg"].startswith("bridges[0] '0000:00:09.0' is not a PCI device on this host")
    failed = run_module(capsys, "pcie_acs", dict(params, bridges=[]))
    assert failed["failed"] and failed["msg"].startswith("disable is listed but bridges is empty")
    failed = run_module(capsys, "pcie_acs", dict(params, disable="none"))
    assert failed["failed"] and failed["msg"].startswith("bridges 0000:00:03.0 is set while disable is none")
    refused = run_module(capsys, "pcie_acs", dict(params, cluster=LISTED, interfaces=NICS))
    assert refused["failed"] and "cluster, interfaces are handled on the controller" in refused["msg"]
    assert len(setpci_calls(host)) == 1
