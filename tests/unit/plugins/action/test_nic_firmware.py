# -*- coding: utf-8 -*-
"""nic_firmware end to end, in-process through its action plugin, against a sysfs tree and the stand-in tools of
nic_firmware_standin.py (whose refusals are mstflint's, cited there): a fleet node with two pinned card models
(ConnectX-7 behind its pin, ConnectX-6 Dx at its pin) and one unpinned card (ConnectX-6 Lx)."""

from __future__ import annotations

import copy
import json
import os
import subprocess

import pytest
from ansible_collections.ainet.fabric.tests.unit.plugins.action.task_runner import run_task
from ansible_collections.ainet.fabric.tests.unit.plugins.action import nic_firmware_standin as standin

from ansible_collections.ainet.fabric.plugins.module_utils.host.nic_firmware_state import sha256_of

CX7, CX6DX, CX6LX = "0000:1a:00", "0000:3b:00", "0000:5e:00"
NICS = {CX7: "ens1f0np0", CX6DX: "ens3f0np0", CX6LX: "ens5f0np0"}
CLUSTER = {"name": "t", "rails": 3, "mtu": 9000, "cni": "sriov", "sriov": {"vfs": 4, "firmware_vfs": 8},
           "addressing": {"mode": "shared", "supernet": "172.16.0.0/16", "rail_prefix": 24}}
NV = {"SRIOV_EN": ["False(0)", "False(0)", "False(0)"], "NUM_OF_VFS": ["0", "0", "0"],
      "LINK_TYPE_P1": ["IB(1)", "ETH(2)", "ETH(2)"], "ROCE_CC_PRIO_MASK_P1": ["255", "255", "255"],
      "CNP_DSCP_P1": ["48", "48", "48"], "CNP_802P_PRIO_P1": ["6", "6", "6"],
      "ATS_ENABLED": ["False(0)", "True(1)", "True(1)"], "ADVANCED_PCI_SETTINGS": ["False(0)", "False(0)", "False(0)"]}
CARDS = {
    CX7: {"type": "ConnectX7", "part": "MCX75310AAS-NEA_Ax", "psid": "MT_0000000838", "fw": "28.39.1002",
          "fw_running": "28.39.1002", "levels": [3, 4]},
    CX6DX: {"type": "ConnectX6DX", "part": "MCX623106AC-CDA_Ax", "psid": "MT_0000000436", "fw": "22.41.1000",
            "fw_running": "22.41.1000", "levels": [3, 4]},
    CX6LX: {"type": "ConnectX6LX", "part": "MCX631102AN-ADA_Ax", "psid": "MT_0000000531", "fw": "26.36.1010",
            "fw_running": "26.36.1010", "levels": [3, 4]},
}
CX7_IMAGE = "fw-ConnectX7-rel-28_43_1014.bin"


@pytest.fixture
def host(tmp_path, monkeypatch):
    root = tmp_path / "root"
    cards = {}
    for slot, nic in sorted(NICS.items()):
        pci = slot + ".0"
        dev = root / "sys/bus/pci/devices" / pci
        os.makedirs(str(dev))
        (dev / "vendor").write_text("0x15b3\n")
        (dev / "device").write_text("0x1021\n")
        (dev / "sriov_numvfs").write_text("0\n")
        net = root / "sys/class/net" / nic
        os.makedirs(str(net))
        os.symlink(str(dev), str(net / "device"))
        cards[slot] = dict(copy.deepcopy(CARDS[slot]), nv={pci: copy.deepcopy(NV)}, devctl=0x2936)
    eno = root / "sys/bus/pci/devices/0000:01:00.0"
    os.makedirs(str(eno))
    (eno / "vendor").write_text("0x8086\n")
    os.makedirs(str(root / "sys/class/net/eno1"))
    os.symlink(str(eno), str(root / "sys/class/net/eno1/device"))
    (tmp_path / "fw.json").write_text(json.dumps(cards))
    mirror = tmp_path / "mirror"
    os.makedirs(str(mirror))
    standin.write_image(mirror / CX7_IMAGE, "MT_0000000838", "28.43.1014")
    bin_dir = tmp_path / "bin"
    os.makedirs(str(bin_dir))
    standin.install(bin_dir)
    ip = bin_dir / "ip"
    routes = json.dumps([{"dst": "default", "gateway": "10.0.0.1", "dev": "eno1"}])
    ip.write_text("#!/bin/sh\ncase \"$*\" in *route*) echo '%s';; *) echo '[]';; esac\n" % routes)
    os.chmod(str(ip), 0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("STANDIN_FW", str(tmp_path / "fw.json"))
    monkeypatch.setenv("STANDIN_LOG", str(tmp_path / "tools.log"))
    monkeypatch.setenv("STANDIN_SYS", str(root))
    monkeypatch.delenv("SSH_CONNECTION", raising=False)
    return tmp_path


def pins(tmp_path):
    return {"MT_0000000838": {"version": "28.43.1014", "image": CX7_IMAGE,
                              "sha256": sha256_of(str(tmp_path / "mirror" / CX7_IMAGE))},
            "MT_0000000436": {"version": "22.41.1000", "image": "fw-ConnectX6Dx-rel-22_41_1000.bin",
                              "sha256": "b" * 64}}


def changes(tmp_path):
    """The tool calls that change something (queries left out)."""
    path = tmp_path / "tools.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return [line for line in lines if not (line.endswith(" q") or line.endswith(" query") or " query " in line
                                           or "--query" in line
                                           or line.endswith("CAP_EXP+08.w"))]


def cards(tmp_path):
    return json.loads((tmp_path / "fw.json").read_text())


def task(capsys, tmp_path, check=False, **args):
    params = dict(cluster=CLUSTER, interfaces=[NICS[CX7], NICS[CX6DX], NICS[CX6LX]], pins=pins(tmp_path),
                  mirror=str(tmp_path / "mirror"), cache_dir=str(tmp_path / "cache"), gpudirect="baremetal",
                  max_read_request=4096, sysfs_root=str(tmp_path / "root"), management_addresses=["10.0.0.5"])
    params.update(args)
    return run_task(capsys, "nic_firmware", params, check=check)


SETS = "-y -d {0}.0 set ATS_ENABLED=0 NUM_OF_VFS=8 ROCE_CC_PRIO_MASK_P1=8 SRIOV_EN=1"


def test_fleet_check_mode_plan_burn_list_and_unpinned_report(capsys, host):
    result, sent = task(capsys, host, check=True)
    assert sent["nics"][0] == {"nic": "ens1f0np0", "pci": None, "fabric": "default", "link_type": "ETH", "sriov_vfs": 8,
                               "roce": {"cc_prio_mask": 8, "cnp_dscp": 48, "cnp_priority": 6}}
    assert "cluster" not in sent and sent["params"] == {"ATS_ENABLED": "0"}
    assert [(c["pci"], c["action"]) for c in result["cards"]] == [
        (CX7 + ".0", "burn"), (CX6DX + ".0", "ok"), (CX6LX + ".0", "unpinned")]
    assert result["unpinned"] == ["nic_firmware: %s: %s.0 (PSID MT_0000000531, firmware 26.36.1010) has no pin in "
                                  "nic_firmware_pins: reported, not flashed" % (os.uname()[1], CX6LX)]
    burn = "flint -d %s.0 -i %s/cache/%s -y burn" % (CX7, host, CX7_IMAGE)
    assert result["commands"] == [burn] + ["mlxconfig " + SETS.format(s) for s in sorted(NICS)] + [
        "setpci -s %s.0 CAP_EXP+08.w=5000:7000" % s for s in sorted(NICS)]
    assert result["changed"] and changes(host) == [] and not (host / "cache").exists()


def test_fleet_apply_then_idempotent_then_reset_through_level_3(capsys, host):
    result, _sent = task(capsys, host)
    assert result["changed"] and not result.get("failed"), result.get("msg")
    assert changes(host)[0] == "flint -d %s.0 -i %s/cache/%s -y burn" % (CX7, host, CX7_IMAGE)
    state = cards(host)
    assert (state[CX7]["fw"], state[CX7]["fw_running"]) == ("28.43.1014", "28.39.1002")
    assert state[CX6DX]["fw"] == "22.41.1000" and state[CX6LX]["fw"] == "26.36.1010"  # at its pin; unpinned
    assert all(c["devctl"] == 0x5936 for c in state.values())
    assert state[CX6LX]["nv"][CX6LX + ".0"]["NUM_OF_VFS"] == ["0", "0", "8"]
    pending = result["reboot_pending"]
    assert "firmware of %s.0 (PSID MT_0000000838): 28.39.1002 running, 28.43.1014 from the next boot or reset " \
           "(NIC firmware)" % CX7 in pending
    assert "NUM_OF_VFS of %s.0 (ens5f0np0): 0 now, 8 from the next boot (NIC nvconfig)" % CX6LX in pending
    assert len(pending) == 1 + 4 * 3
    # again: nothing to burn or set, still pending (never forced)
    before = len(changes(host))
    again, _sent = task(capsys, host)
    assert not again["changed"] and again["commands"] == [] and len(changes(host)) == before
    assert again["reboot_pending"] == pending
    assert [c["action"] for c in again["cards"]] == ["pending", "ok", "unpinned"]
    # reset asked for: level 3 is supported, no VFs, eno1 carries the management path: reset, read back
    reset, _sent = task(capsys, host, reset=True)
    assert reset["changed"] and reset["reset_devices"] == [s + ".0" for s in sorted(NICS)]
    assert changes(host)[before:] == ["mlxfwreset -d %s.0 -l 3 -y reset" % s for s in sorted(NICS)]
    assert reset["reboot_pending"] == [] and cards(host)[CX7]["fw_running"] == "28.43.1014"
    final, _sent = task(capsys, host, reset=True)
    assert not final["changed"] and final["reboot_pending"] == [] and final["commands"] == []


def test_an_image_of_another_psid_is_refused_before_any_change(capsys, host):
    standin.write_image(host / "mirror" / CX7_IMAGE, "MT_0000000436", "28.43.1014")
    result, _sent = task(capsys, host)
    assert result["failed"] and "its PSID is MT_0000000436, the card's MT_0000000838; not burned" in result["msg"]
    assert changes(host) == []
    # control: the stand-in flint itself refuses that burn as mstflint does
    run = subprocess.run(["flint", "-d", CX7 + ".0", "-i", str(host / "mirror" / CX7_IMAGE), "-y", "burn"],
                         capture_output=True, text=True, env=os.environ, check=False)
    assert run.returncode == 1 and "PSID mismatch. Device PSID (MT_0000000838) differs from image PSID " \
                                   "(MT_0000000436)." in run.stderr


def test_an_image_flint_cannot_read_is_refused_with_its_message(capsys, host):
    (host / "mirror" / CX7_IMAGE).write_text("not an image\n")
    bad = pins(host)
    bad["MT_0000000838"]["sha256"] = sha256_of(str(host / "mirror" / CX7_IMAGE))
    result, _sent = task(capsys, host, pins=bad)
    assert result["failed"] and "the image %s could not be read (flint -i <image> q, rc 1)" % CX7_IMAGE in result["msg"]
    assert changes(host) == []


def test_an_image_whose_sha256_differs_from_the_pin_is_refused(capsys, host):
    bad = pins(host)
    bad["MT_0000000838"]["sha256"] = "c" * 64
    result, _sent = task(capsys, host, pins=bad)
    assert result["failed"] and "has SHA-256 %s, the pin says %s: not burned" % (
        pins(host)["MT_0000000838"]["sha256"], "c" * 64) in result["msg"]
    assert changes(host) == [] and os.listdir(str(host / "cache")) == []


def test_an_unsupported_reset_level_is_refused_before_any_change(capsys, host):
    state = cards(host)
    state[CX7]["levels"] = [4]
    (host / "fw.json").write_text(json.dumps(state))
    result, _sent = task(capsys, host, reset=True)
    assert result["failed"] and "does not support firmware reset level 3" in result["msg"]
    assert changes(host) == []
    # with a reboot to follow: burned and set, the reset refused, the reboot named
    result, _sent = task(capsys, host, reset=True, reset_refused="reboot")
    assert not result.get("failed") and "mlxfwreset -d %s.0 -l 3 -y reset" % CX7 not in result["commands"]
    assert any(line.endswith("applied by the reboot") and line.startswith("firmware of %s.0" % CX7)
               for line in result["reboot_pending"])
    # control: the stand-in refuses level 3 with mstflint's words
    run = subprocess.run(["mlxfwreset", "-d", CX7 + ".0", "-l", "3", "-y", "reset"], capture_output=True, text=True,
                         env=os.environ, check=False)
    assert run.returncode == 1 and "Failed to send MFRL! reset-level 3 is not supported!" in run.stderr


def test_vfs_on_a_card_refuse_its_reset(capsys, host):
    dev = host / "root/sys/bus/pci/devices" / (CX6DX + ".0")
    (dev / "sriov_numvfs").write_text("1\n")
    vf = host / "root/sys/bus/pci/devices" / (CX6DX + ".2")
    os.makedirs(str(vf / "driver_dir" / "vfio-pci"))
    os.symlink(str(vf / "driver_dir" / "vfio-pci"), str(vf / "driver"))
    os.symlink(str(vf), str(dev / "virtfn0"))
    result, _sent = task(capsys, host, reset=True)
    assert result["failed"] and "would remove its VFs" in result["msg"] and "1 bound to vfio-pci" in result["msg"]
    assert changes(host) == []
    # control: the stand-in mlxfwreset fails on the held VF as mstflint's driver stop does
    run = subprocess.run(["mlxfwreset", "-d", CX6DX + ".0", "-l", "3", "-y", "reset"], capture_output=True,
                         text=True, env=os.environ, check=False)
    assert run.returncode == 1 and "Reset virtual functions failed!" in run.stderr


def test_a_raw_parameter_the_card_lacks_is_refused_before_any_change(capsys, host):
    result, _sent = task(capsys, host, raw=[{"name": "KEEP_ETH_LINK_UP_P1", "value": 1}])
    assert result["failed"] and "does not list the nvconfig parameter KEEP_ETH_LINK_UP_P1" in result["msg"]
    assert changes(host) == []


def test_a_bluefield_without_its_mode_is_refused(capsys, host):
    (host / "root/sys/bus/pci/devices" / (CX6LX + ".0") / "device").write_text("0xa2dc\n")
    result, _sent = task(capsys, host, check=True)
    assert result["failed"] and "is a BlueField-3; its mode is unread" in result["msg"]


def test_bad_input_fails_on_the_controller(capsys, host):
    result, sent = task(capsys, host, raw={"NUM_OF_VFS": 4})
    assert sent is None and "nic_firmware_nvconfig.NUM_OF_VFS: is derived from the model" in result["msg"]
    result, sent = task(capsys, host, mirror="https://user:pw@mirror/fw")
    assert sent is None and result["msg"].startswith("nic_firmware_mirror: ")


def test_a_rail_nic_named_otherwise_today_is_found_by_its_pci_address(capsys, host):
    os.unlink(str(host / "root/sys/class/net" / NICS[CX6LX] / "device"))
    result, _sent = task(capsys, host, check=True)
    assert result["failed"] and "give its PCI address in nic_link_type_pci" in result["msg"]
    result, sent = task(capsys, host, check=True, pci={NICS[CX6LX]: CX6LX[5:] + ".0"})
    assert sent["nics"][2]["pci"] == CX6LX + ".0" and not result.get("failed")
    assert result["cards"][2]["action"] == "unpinned"
    result, sent = task(capsys, host, check=True, pci={"eth9": "0000:01:00.0"})
    assert sent is None and result["msg"].startswith("nic_link_type_pci.eth9: ")


def test_site_runs_the_role_on_opt_in_defers_its_reset_and_the_window_runs_it():
    import yaml
    root = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..")
    with open(os.path.join(root, "playbooks", "site.yml")) as handle:
        plays = yaml.safe_load(handle)
    prepare = next(p for p in plays if any(r.get("role") == "ainet.fabric.nic_firmware" for r in p.get("roles", [])))
    entry = next(r for r in prepare["roles"] if r.get("role") == "ainet.fabric.nic_firmware")
    assert entry["vars"] == {"__nic_firmware_defer_reset": True}
    assert entry["when"] == "nic_firmware_manage | default(false) | bool"
    collect = [t["ansible.builtin.set_fact"] for t in prepare["tasks"] if "ansible.builtin.set_fact" in t]
    assert "nic_firmware_result.reboot_pending" in collect[0]["__site_reboot_pending"]
    assert "nic_firmware_result.reset_devices" in collect[1]["__site_maintenance_steps"]
    with open(os.path.join(root, "roles", "maintenance", "tasks", "steps.yml")) as handle:
        tasks = yaml.safe_load(handle)
    names = [t["name"] for t in tasks]
    reset = next(t for t in tasks if t.get("ansible.builtin.include_role", {}).get("name") == "ainet.fabric.nic_firmware")
    assert reset["ansible.builtin.include_role"]["tasks_from"] == "reset"
    leave = next(t for t in tasks if "nic_firmware_reset_result" in str(t.get("ansible.builtin.set_fact")))
    assert names.index(reset["name"]) < names.index(leave["name"]) < names.index(
        "Restart the driver so that the installed one runs (doca_ofed)")
    with open(os.path.join(root, "roles", "nic_firmware", "tasks", "reset.yml")) as handle:
        again = yaml.safe_load(handle)[0]
    assert again["ainet.fabric.nic_firmware"]["reset"] is True and again["ainet.fabric.nic_firmware"]["burn"] is False
    assert again["ainet.fabric.nic_firmware"]["reset_refused"] == \
        "{{ (fabric_reboot | default(false) | bool) | ternary('reboot', 'fail') }}"


# --- review 44 (docs/reviews/44-nic-firmware.md): hex values, read-only rows, the cache directory

def with_params(tmp_path, **rows):
    state = cards(tmp_path)
    for card in state.values():
        for nv in card["nv"].values():
            nv.update(rows)
    (tmp_path / "fw.json").write_text(json.dumps(state))


def test_a_hex_raw_value_is_set_once_then_the_second_run_is_unchanged(capsys, host):
    with_params(host, LOG_MAX_QUEUE=["17", "17", "17"])
    result, _sent = task(capsys, host, raw=[{"name": "LOG_MAX_QUEUE", "value": "0x10"}])
    assert not result.get("failed"), result.get("msg")
    assert all(line.endswith("LOG_MAX_QUEUE=0x10 NUM_OF_VFS=8 ROCE_CC_PRIO_MASK_P1=8 SRIOV_EN=1")
               for line in result["commands"] if line.startswith("mlxconfig "))
    assert cards(host)[CX7]["nv"][CX7 + ".0"]["LOG_MAX_QUEUE"] == ["17", "17", "16"]  # printed in decimal
    again, _sent = task(capsys, host, raw=[{"name": "LOG_MAX_QUEUE", "value": "0x10"}])
    assert not again["changed"] and again["commands"] == []


def test_a_read_only_parameter_that_differs_is_refused_before_any_change(capsys, host):
    with_params(host, PCI_ATOMIC_MODE=["X(1)", "X(1)", "X(1)", "RO"])
    result, _sent = task(capsys, host, raw=[{"name": "PCI_ATOMIC_MODE", "value": 2}])
    assert result["failed"] and "PCI_ATOMIC_MODE is read-only (mlxconfig marks it RO) and is X(1), not 2: not set" \
        in result["msg"]
    assert changes(host) == []


def test_control_a_read_only_parameter_already_wanted_is_no_change(capsys, host):
    with_params(host, PCI_ATOMIC_MODE=["X(1)", "X(1)", "X(1)", "RO"])
    result, _sent = task(capsys, host, check=True, raw=[{"name": "PCI_ATOMIC_MODE", "value": 1}])
    assert not result.get("failed"), result.get("msg")
    assert not any("PCI_ATOMIC_MODE" in line for line in result["commands"])


@pytest.mark.parametrize("check", [False, True])
def test_an_existing_cache_dir_others_may_write_is_refused(capsys, host, check):
    os.makedirs(str(host / "cache"))
    os.chmod(str(host / "cache"), 0o777)
    result, _sent = task(capsys, host, check=check)
    assert result["failed"] and "cache_dir: %s is writable by others (mode 0777)" % (host / "cache") in result["msg"]
    assert changes(host) == []


def test_control_an_existing_cache_dir_of_mode_0700_is_used(capsys, host):
    os.makedirs(str(host / "cache"), 0o700)
    result, _sent = task(capsys, host)
    assert not result.get("failed"), result.get("msg")
    assert changes(host)[0].startswith("flint -d %s.0 -i %s/cache/" % (CX7, host))
