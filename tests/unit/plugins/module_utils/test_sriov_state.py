# -*- coding: utf-8 -*-
"""sriov_state (and desired.sriov): desired VFs from the model and host overrides, refusals, the actions and the
boot unit."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.desired import sriov as desired_sriov
from ansible_collections.ainet.fabric.plugins.module_utils.host import sriov_state as sp
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.common.file_formats import unit_dump
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import fabric_interfaces

BASE = {"name": "t", "rails": 2, "mtu": 9000,
        "addressing": {"mode": "shared", "supernet": "172.16.0.0/16", "rail_prefix": 24},
        "cni": "sriov", "sriov": {"vfs": 4, "trust": True, "spoof_check": False}}
NICS = ["ens1f0np0", "ens1f1np1"]


def cluster(**changes):
    raw = copy.deepcopy(BASE)
    raw.update(changes)
    return load_cluster(raw)


def want(overrides=None, **changes):
    c = cluster(**changes)
    return desired_sriov.desired(c, fabric_interfaces(c, NICS), overrides)


def pf(name="ens1f0np0", total=8, num=0, vfs=None, vfinfo=None, firmware=None, driver="mlx5_core"):
    return {"name": name, "exists": True, "pci": "0000:17:00.0", "driver": driver, "mac": "b8:3f:d2:00:00:01",
            "total_vfs": total, "num_vfs": num, "vfs": vfs or [], "vfinfo": vfinfo or {}, "firmware": firmware}


def test_desired_per_rail_nic_from_the_fabric():
    got = want()
    assert sorted(got) == NICS
    assert got["ens1f0np0"]["vfs"] == 4 and got["ens1f0np0"]["trust"] is True
    assert got["ens1f0np0"]["spoof_check"] is False and got["ens1f0np0"]["link_state"] == "auto"
    assert got["ens1f0np0"]["firmware_vfs"] == 4


def test_no_vfs_without_cni_sriov():
    assert want(cni="macvlan", sriov=None) == {}


def test_host_override_changes_one_nic_and_is_validated():
    got = want({"ens1f1np1": {"vfs": 2, "trust": False}})
    assert got["ens1f1np1"]["vfs"] == 2 and got["ens1f1np1"]["trust"] is False
    assert got["ens1f1np1"]["spoof_check"] is False and got["ens1f1np1"]["firmware_vfs"] == 4
    assert got["ens1f0np0"]["vfs"] == 4
    with pytest.raises(FabricError, match=r"sriov_overrides\.ens1f0np0\.vfs.*out of range"):
        want({"ens1f0np0": {"vfs": 500}})
    with pytest.raises(FabricError, match=r"sriov_overrides\.ens1f0np0\.colour"):
        want({"ens1f0np0": {"colour": "red"}})
    with pytest.raises(FabricError, match=r"sriov_overrides\.eth9: eth9 is not a rail NIC"):
        want({"eth9": {"vfs": 2}})


def test_override_on_a_fabric_without_sriov_is_refused():
    c = load_cluster({"name": "t", "fabrics": {
        "compute": dict(rails=1, addressing=BASE["addressing"], cni="sriov", sriov={"vfs": 2}),
        "storage": dict(rails=1, addressing={"mode": "shared", "supernet": "172.18.0.0/16", "rail_prefix": 24}, qos={"preset": "none"},
                        cni="host-device")}})
    nics = fabric_interfaces(c, {"compute": ["ens1f0np0"], "storage": ["ens2f0np0"]})
    assert sorted(desired_sriov.desired(c, nics)) == ["ens1f0np0"]
    with pytest.raises(FabricError, match=r"ens2f0np0 is a rail NIC of fabric storage, whose cni is host-device"):
        desired_sriov.desired(c, nics, {"ens2f0np0": {"vfs": 2}})


def test_derived_macs_are_stable_local_unicast_and_distinct():
    macs = [sp.derived_mac("B8:3F:D2:00:00:01", i) for i in range(64)]
    assert macs[0] == sp.derived_mac("b8:3f:d2:00:00:01", 0)
    assert len(set(macs)) == 64
    assert all(int(m[:2], 16) == 0x02 for m in macs)
    assert sp.derived_mac("b8:3f:d2:00:00:02", 0) != macs[0]


def test_fresh_pf_gets_vfs_and_every_setting():
    w = want()["ens1f0np0"]
    actions = sp.pf_actions(pf(), w, "derived")
    assert [sp.command_line(a) for a in actions][0] == "echo 4 > /sys/class/net/ens1f0np0/device/sriov_numvfs"
    lines = [sp.command_line(a) for a in actions][1:]
    assert len(lines) == 4
    assert lines[0] == "ip link set dev ens1f0np0 vf 0 mac %s trust on spoofchk off" % sp.derived_mac("b8:3f:d2:00:00:01", 0)
    assert all("state" not in line for line in lines)  # auto is what a new VF has; igb cannot set it at all


def test_count_change_goes_through_zero():
    w = want()["ens1f0np0"]
    current = pf(num=2, vfs=[{"index": i, "pci": "x", "netdev": "v%d" % i, "driver": "mlx5_core", "in_use": None}
                             for i in range(2)])
    assert sp.check_pf(current, w, {"ens1f0np0"}, False, False, False) == "ok"
    lines = [sp.command_line(a) for a in sp.pf_actions(current, w, "derived")]
    assert lines[:2] == ["echo 0 > /sys/class/net/ens1f0np0/device/sriov_numvfs",
                         "echo 4 > /sys/class/net/ens1f0np0/device/sriov_numvfs"]


def test_only_what_differs_on_existing_vfs():
    w = want()["ens1f0np0"]
    vfinfo = dict((i, {"mac": sp.derived_mac("b8:3f:d2:00:00:01", i), "trust": True, "spoof_check": False,
                       "link_state": "auto"}) for i in range(4))
    vfinfo[2]["trust"] = False
    vfinfo[3]["link_state"] = "disable"
    current = pf(num=4, vfinfo=vfinfo)
    assert [sp.command_line(a) for a in sp.pf_actions(current, w, "derived")] == [
        "ip link set dev ens1f0np0 vf 2 trust on", "ip link set dev ens1f0np0 vf 3 state auto"]
    vfinfo[2]["trust"], vfinfo[3]["link_state"] = True, "auto"
    assert sp.pf_actions(pf(num=4, vfinfo=vfinfo), w, "derived") == []
    # keep: MACs are not ours to set
    vfinfo[1]["mac"] = "00:00:00:00:00:00"
    assert sp.pf_actions(pf(num=4, vfinfo=vfinfo), w, "keep") == []


def test_refusals_name_the_field_the_value_and_the_fix():
    w = want()["ens1f0np0"]
    with pytest.raises(FabricError, match=r"fabric_cluster.*sriov\.vfs 4 is above the 2 VFs rail NIC ens1f0np0 .*"
                                          r"set at most 2"):
        sp.check_pf(pf(total=2), w, set(), False, False, False)
    with pytest.raises(FabricError, match=r"ens1f0np0 .*has no SR-IOV capability"):
        sp.check_pf(pf(total=None, driver="virtio_net"), w, set(), False, False, False)
    gone = dict(pf(), exists=False)
    with pytest.raises(FabricError, match=r"rail NIC ens1f0np0 does not exist"):
        sp.check_pf(gone, w, set(), False, False, False)


def test_vfs_of_another_tool_and_vfs_in_use_are_not_renumbered():
    w = want()["ens1f0np0"]
    busy = [{"index": 0, "pci": "0000:17:00.2", "netdev": None, "driver": "mlx5_core",
             "in_use": "its netdev is in another network namespace (a pod?)"},
            {"index": 1, "pci": "0000:17:00.3", "netdev": "v1", "driver": "mlx5_core", "in_use": None}]
    with pytest.raises(FabricError, match=r"2 VFs that ainet.fabric did not create.*sriov_takeover: true"):
        sp.check_pf(pf(num=2, vfs=busy), w, set(), False, False, False)
    with pytest.raises(FabricError, match=r"VF 0 \(0000:17:00.2\): its netdev is in another network namespace.*"
                                          r"sriov_allow_in_use: true"):
        sp.check_pf(pf(num=2, vfs=busy), w, {"ens1f0np0"}, False, False, False)
    assert sp.check_pf(pf(num=2, vfs=busy), w, {"ens1f0np0"}, True, False, False) == "ok"
    assert sp.check_pf(pf(num=2, vfs=busy), w, set(), True, True, False) == "ok"


def test_released_pf_loses_its_vfs_unless_in_use():
    current = pf(num=2, vfs=[{"index": 0, "pci": "p", "netdev": "v0", "driver": "igbvf", "in_use": "is up"}])
    with pytest.raises(FabricError, match=r"no longer in the model.*VF 0 \(v0\): is up"):
        sp.release_actions(current, False)
    assert [sp.command_line(a) for a in sp.release_actions(current, True)] == [
        "echo 0 > /sys/class/net/ens1f0np0/device/sriov_numvfs"]
    assert sp.release_actions(pf(num=0), False) == []


def test_mellanox_firmware_set_only_with_opt_in_then_pending():
    w = want(sriov={"vfs": 4, "firmware_vfs": 16})["ens1f0np0"]
    short = {"sriov_en": False, "num_of_vfs": 0, "current": {"sriov_en": False, "num_of_vfs": 0}}
    with pytest.raises(FabricError, match=r"SRIOV_EN=False NUM_OF_VFS=0.*sriov_firmware: true"):
        sp.check_pf(pf(total=0, firmware=short), w, set(), False, False, False)
    assert sp.check_pf(pf(total=0, firmware=short), w, set(), False, False, True) == "set"
    assert [sp.command_line(a) for a in sp.pf_actions(pf(total=0, firmware=short), w, "derived")] == [
        "mlxconfig -y -d 0000:17:00.0 set SRIOV_EN=1 NUM_OF_VFS=16"]
    next_boot = {"sriov_en": True, "num_of_vfs": 16, "current": {"sriov_en": False, "num_of_vfs": 0}}
    assert sp.check_pf(pf(total=0, firmware=next_boot), w, set(), False, False, False) == "pending"
    assert sp.pf_actions(pf(total=0, firmware=next_boot), w, "derived") == []
    fine = {"sriov_en": True, "num_of_vfs": 16, "current": {"sriov_en": True, "num_of_vfs": 16}}
    assert sp.check_pf(pf(total=16, firmware=fine), w, set(), False, False, False) == "ok"


def test_boot_unit_creates_every_vf_with_its_settings():
    wanted = want()
    text = unit_dump(sp.unit_sections([(pf(name=n), wanted[n], "derived") for n in NICS], "/usr/sbin/ip"), "h")
    assert "ExecStart=/bin/sh -c \"echo 4 > /sys/class/net/ens1f1np1/device/sriov_numvfs\"" in text
    assert text.count("ExecStart=/usr/sbin/ip link set dev ens1f0np0 vf ") == 4
    assert "Before=network-pre.target kubelet.service ainet-roce-qos.service" in text
    assert "Wants=network-pre.target" in text
    assert "sys-subsystem-net-devices-ens1f0np0.device" in text
    assert "RemainAfterExit=yes" in text and "WantedBy=multi-user.target" in text


def test_vfs_in_use_keep_their_settings_unless_allowed():
    w = want()["ens1f0np0"]
    vfinfo = dict((i, {"mac": "00:00:00:00:00:00", "trust": False, "spoof_check": True, "link_state": "auto"})
                  for i in range(4))
    vfs = [{"index": i, "pci": "p%d" % i, "netdev": None if i == 1 else "v%d" % i, "driver": "mlx5_core",
            "in_use": "its netdev is in another network namespace (a pod?)" if i == 1 else None} for i in range(4)]
    current = pf(num=4, vfs=vfs, vfinfo=vfinfo)
    assert sp.busy_vfs(current) == {1: "its netdev is in another network namespace (a pod?)"}
    touched = [a["argv"][6] for a in sp.pf_actions(current, w, "derived")]
    assert touched == ["0", "2", "3"]
    assert [a["argv"][6] for a in sp.pf_actions(current, w, "derived", allow_in_use=True)] == ["0", "1", "2", "3"]


def test_fields_a_driver_does_not_report_are_not_differences():
    settings = {"trust": True, "spoof_check": False, "link_state": "auto"}
    assert sp.vf_argv("p", 0, settings, {"mac": "00:00:00:00:00:00"}) is None
    assert sp.vf_argv("p", 0, settings, {"trust": False}) == ["ip", "link", "set", "dev", "p", "vf", "0", "trust", "on"]


def test_vfs_another_tool_made_are_refused_whatever_the_count_and_before_the_firmware():
    w = want()["ens1f0np0"]
    theirs = pf(num=4)
    with pytest.raises(FabricError, match=r"4 VFs that ainet.fabric did not create.*sriov_takeover"):
        sp.check_pf(theirs, w, set(), False, False, False)
    fw_short = pf(num=4, total=4, firmware={"sriov_en": False, "num_of_vfs": 0, "current": {}})
    with pytest.raises(FabricError, match=r"did not create"):
        sp.check_pf(fw_short, w, set(), False, False, True)
    assert sp.check_pf(theirs, w, set(), False, True, False) == "ok"


def test_override_not_a_mapping():
    with pytest.raises(FabricError, match=r"^sriov_overrides\.ens1f0np0: 4 is not a mapping"):
        want({"ens1f0np0": 4})
