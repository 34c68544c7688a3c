# -*- coding: utf-8 -*-
"""nic_firmware_state and desired.nic_firmware on real-format outputs (data/nic_firmware, origins in its ORIGIN.md;
data/rdma/mlxconfig and data/firmware/mlxfwreset, origins in theirs): the readers, the pin table, the firmware plan
of a fleet with two card models and one unpinned card, the nvconfig plan and the reset choice."""

from __future__ import annotations

import copy
import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.desired import nic_firmware as desired
from ansible_collections.ainet.fabric.plugins.module_utils.desired import sriov as sriov_desired
from ansible_collections.ainet.fabric.plugins.module_utils.desired import roce_qos as roce_desired
from ansible_collections.ainet.fabric.plugins.module_utils.host import nic_firmware_state as fw
from ansible_collections.ainet.fabric.plugins.module_utils.host.nic_link_type_state import parse_fwreset_query
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster

HERE = os.path.dirname(__file__)
DATA = os.path.join(HERE, "data", "nic_firmware")
MLXCONFIG = os.path.join(HERE, "data", "rdma", "mlxconfig")
FWRESET = os.path.join(HERE, "data", "firmware", "mlxfwreset")
SHA = "a" * 64
PINS = {"MT_0000000838": {"version": "28.43.1014", "image": "fw-ConnectX7-rel-28_43_1014-MCX75310AAS-NEA.bin",
                          "sha256": SHA},
        "MT_0000000436": {"version": "22.41.1000", "image": "fw-ConnectX6Dx-rel-22_41_1000.bin", "sha256": "b" * 64}}


def read(*parts):
    with open(os.path.join(*parts)) as handle:
        return handle.read()


# --- readers ---------------------------------------------------------------------------------------------


def test_nvconfig_operator_fixture_columns_stars_values_and_array_placeholder():
    got = fw.parse_nvconfig(read(DATA, "operator-cx4-e-query.txt"))
    assert got["problems"] == [] and got["device_type"] == "ConnectX4"
    assert got["columns"] == ["default", "current", "next_boot"]
    assert set(got["params"]) == {"KEEP_IB_LINK_UP_P2", "KEEP_LINK_UP_ON_BOOT_P2", "ESWITCH_HAIRPIN_DESCRIPTORS",
                                  "MEMIC_SIZE_LIMIT"}
    memic = got["params"]["MEMIC_SIZE_LIMIT"]
    assert (memic["default"], memic["current"], memic["next_boot"], memic["changed"]) == (
        "_256KB(1)", "_256KB(1)", "DISABLED(0)", True)
    assert got["params"]["KEEP_LINK_UP_ON_BOOT_P2"]["changed"] is False
    assert got["params"]["ESWITCH_HAIRPIN_DESCRIPTORS"]["array"] == (0, 7)
    assert got["params"]["MEMIC_SIZE_LIMIT"]["array"] is None
    assert (fw.number("_256KB(1)"), fw.symbol("_256KB(1)"), fw.number("128"), fw.number("HOST_0")) == (
        "1", "_256KB", "128", "HOST_0")


def test_nvconfig_array_elements_without_a_device_block():
    got = fw.parse_nvconfig(read(DATA, "operator-array-elements.txt"))
    assert got["problems"] == []
    assert sorted(got["params"]) == ["ESWITCH_HAIRPIN_DESCRIPTORS[%d]" % i for i in range(8)]
    assert got["params"]["ESWITCH_HAIRPIN_DESCRIPTORS[5]"]["current"] == "128"


def test_nvconfig_a_row_with_a_missing_column_is_a_problem_not_a_guess():
    text = read(DATA, "operator-cx4-e-query.txt").replace("False(0)        False(0)        False(0)",
                                                          "False(0)        False(0)")
    got = fw.parse_nvconfig(text)
    assert "KEEP_LINK_UP_ON_BOOT_P2" not in got["params"]
    assert len(got["problems"]) == 1 and "KEEP_LINK_UP_ON_BOOT_P2 has 2 values for the 3 columns" in got["problems"][0]


def test_nvconfig_existing_recorded_outputs_parse_and_an_error_output_is_no_configuration():
    got = fw.parse_nvconfig(read(MLXCONFIG, "synthetic-cx7-doca-e-q.txt"))
    assert got["problems"] == [] and got["device"] == "0000:3b:00.0"
    assert got["params"]["NUM_OF_VFS"]["current"] == "8" and got["params"]["NUM_OF_VFS"]["next_boot"] == "16"
    bad = fw.parse_nvconfig(read(MLXCONFIG, "synthetic-error-failed-to-open.txt"))
    assert bad["params"] == {} and bad["problems"]


def test_mlxfwmanager_burned_and_running_from_the_operator_fixture():
    got = fw.parse_mlxfwmanager(read(DATA, "operator-cx6dx-burned-not-running.txt"))
    assert got["problems"] == []
    (dev,) = got["devices"]
    assert (dev["psid"], dev["pci"], dev["fw"], dev["fw_running"], dev["device_type"]) == (
        "MT_0000000436", "03:00.0", "22.45.3608", "22.43.1020", "ConnectX6DX")
    assert dev["part_number"] == "MCX623106AC-CDA_Ax" and dev["available"] is None


def test_mlxfwmanager_three_devices_running_equals_burned_without_a_running_row():
    got = fw.parse_mlxfwmanager(read(DATA, "fleet-two-models-one-unpinned.txt"))
    assert got["problems"] == []
    assert [(d["pci"], d["psid"], d["fw"], d["fw_running"]) for d in got["devices"]] == [
        ("0000:1a:00.0", "MT_0000000838", "28.39.1002", "28.39.1002"),
        ("0000:3b:00.0", "MT_0000000436", "22.41.1000", "22.41.1000"),
        ("0000:5e:00.0", "MT_0000000531", "26.36.1010", "26.36.1010")]
    assert got["devices"][0]["status"] == "No matching image found"


def test_mlxfwmanager_a_device_without_psid_is_a_problem():
    text = read(DATA, "operator-cx6dx-burned-not-running.txt").replace("  PSID:             MT_0000000436\n", "")
    got = fw.parse_mlxfwmanager(text)
    assert got["problems"] == ["mlxfwmanager: device 03:00.0: no PSID in the output"]


def test_flint_device_and_image_queries():
    dev = fw.parse_flint_query(read(DATA, "flint-device-cx6dx-running-older.txt"))
    assert (dev["fw"], dev["fw_running"], dev["psid"], dev["image_type"], dev["problems"]) == (
        "22.45.3608", "22.43.1020", "MT_0000000436", "FS4", [])
    img = fw.parse_flint_query(read(DATA, "flint-image-cx7.txt"))
    assert (img["fw"], img["fw_running"], img["psid"]) == ("28.43.1014", "28.43.1014", "MT_0000000838")
    none = fw.parse_flint_query(read(DATA, "flint-image-cx7.txt").replace("PSID:  ", "PSIX:  "))
    assert none["psid"] is None and none["problems"] == ["flint: no PSID in the output"]


def test_recorded_mstflint_errors_without_a_device_are_no_reading():
    # Debian mstflint 4.21 on a machine without the device (or with a file that is no image): data/nic_firmware
    image = fw.parse_flint_query(read(DATA, "mstflint-4.21-image-query-not-an-image.txt"))
    assert (image["fw"], image["psid"]) == (None, None)
    assert image["problems"] == ["flint: no FW Version in the output", "flint: no PSID in the output"]
    assert fw.parse_flint_query(read(DATA, "mstflint-4.21-device-query-no-device.txt"))["problems"]
    nv = fw.parse_nvconfig(read(DATA, "mstconfig-4.21-e-query-no-device.txt"))
    assert nv["params"] == {} and nv["problems"] == ["mlxconfig: no configuration rows in the output"]
    levels = parse_fwreset_query(read(DATA, "mstfwreset-4.21-query-no-device.txt"))
    assert levels["levels"] == {}
    assert fw.reset_plan("0000:3b:00.0", levels, {}, {})["how"] == "pending"


# --- pins ------------------------------------------------------------------------------------------------


def test_pins_checked_one_thing_wrong_at_a_time():
    assert fw.check_pins(PINS)["MT_0000000838"]["version"] == "28.43.1014"
    for field, value, message in (
            ("version", "28.43", r"\.version: '28\.43' is not a firmware version"),
            ("image", "../etc/shadow", r"\.image: '\.\./etc/shadow' is not a file name"),
            ("image", "sub/dir.bin", r"\.image: 'sub/dir\.bin' is not a file name"),
            ("sha256", "abc", r"\.sha256: 'abc' is not a SHA-256")):
        pins = copy.deepcopy(PINS)
        pins["MT_0000000838"][field] = value
        with pytest.raises(fw.NicFirmwareError, match=r"^nic_firmware_pins\.MT_0000000838" + message):
            fw.check_pins(pins)
    with pytest.raises(fw.NicFirmwareError, match="the PSID 'MT 1; rm' is not a PSID"):
        fw.check_pins({"MT 1; rm": PINS["MT_0000000838"]})


def test_mirror_a_directory_or_a_plain_url():
    assert fw.check_mirror("/srv/nic-firmware/") == "/srv/nic-firmware"
    assert fw.check_mirror("https://mirror.example:8443/nic") == "https://mirror.example:8443/nic"
    for bad in ("srv/fw", "/srv/../etc", "https://user:pw@mirror/x", "https://m/x?y=1", "ftp://m/x"):
        with pytest.raises(fw.NicFirmwareError, match="^nic_firmware_mirror: "):
            fw.check_mirror(bad)


# --- firmware plan: the fleet ------------------------------------------------------------------------------


def fleet():
    cards = fw.parse_mlxfwmanager(read(DATA, "fleet-two-models-one-unpinned.txt"))["devices"]
    for card in cards:
        card["device_id"] = "0x1021"
    return cards


def test_fleet_plan_burns_the_old_card_skips_the_current_one_and_reports_the_unpinned():
    pins = fw.check_pins(PINS)
    image = fw.parse_flint_query(read(DATA, "flint-image-cx7.txt"))
    plans = [fw.firmware_plan(card, pins, image=image if card["psid"] == "MT_0000000838" else None, host="gpu01")
             for card in fleet()]
    assert [(p["pci"], p["action"], p["reset"]) for p in plans] == [
        ("0000:1a:00.0", "burn", True), ("0000:3b:00.0", "ok", False), ("0000:5e:00.0", "unpinned", False)]
    burn_list = [p["pci"] for p in plans if p["action"] == "burn"]
    assert burn_list == ["0000:1a:00.0"]
    assert plans[2]["refusal"] == ("nic_firmware: gpu01: 0000:5e:00.0 (PSID MT_0000000531, firmware 26.36.1010) has "
                                   "no pin in nic_firmware_pins: reported, not flashed")
    assert fw.burn_argv("0000:1a:00.0", "/var/cache/nic-firmware/" + plans[0]["image"]) == [
        "flint", "-d", "0000:1a:00.0", "-i",
        "/var/cache/nic-firmware/fw-ConnectX7-rel-28_43_1014-MCX75310AAS-NEA.bin", "-y", "burn"]


def test_burn_refused_when_the_image_psid_or_version_does_not_fit():
    pins = fw.check_pins(PINS)
    card = fleet()[0]
    good = fw.parse_flint_query(read(DATA, "flint-image-cx7.txt"))
    wrong_psid = dict(good, psid="MT_0000000436")
    got = fw.firmware_plan(card, pins, image=wrong_psid)
    assert got["action"] == "refused" and "its PSID is MT_0000000436, the card's MT_0000000838" in got["refusal"]
    wrong_version = dict(good, fw="28.42.1000")
    got = fw.firmware_plan(card, pins, image=wrong_version)
    assert got["action"] == "refused" and "its version is 28.42.1000, the pin's 28.43.1014" in got["refusal"]
    assert fw.firmware_plan(card, pins, image=good)["action"] == "burn"  # control
    assert fw.firmware_plan(card, pins)["image_check"] == "needed"


def test_burned_but_not_running_is_pending_not_burned_again():
    pins = fw.check_pins({"MT_0000000436": dict(PINS["MT_0000000436"], version="22.45.3608")})
    (card,) = fw.parse_mlxfwmanager(read(DATA, "operator-cx6dx-burned-not-running.txt"))["devices"]
    got = fw.firmware_plan(dict(card, pci="0000:03:00.0"), pins)
    assert (got["action"], got["reset"], got["argv"]) == ("pending", True, None)


@pytest.mark.parametrize("given,read_mode,action", [
    (None, "dpu", "refused"), ("nic", "dpu", "refused"), ("dpu", None, "refused"), ("dpu", "dpu", "unpinned"),
    ("nic", "nic", "unpinned")])
def test_bluefield_refused_unless_its_mode_is_given_and_read_the_same(given, read_mode, action):
    card = dict(fleet()[2], device_id="0xa2dc", mode=read_mode)
    modes = {card["pci"]: given} if given else {}
    got = fw.firmware_plan(card, fw.check_pins(PINS), bluefield_modes=modes)
    assert got["action"] == action
    if action == "refused":
        assert "is a BlueField-3" in got["refusal"]


# --- nvconfig ----------------------------------------------------------------------------------------------


def cx7_query():
    return fw.parse_nvconfig(read(MLXCONFIG, "synthetic-cx7-doca-e-q.txt"))


def test_nvconfig_plan_sets_only_what_next_boot_lacks_and_reboots_what_current_lacks():
    wanted = {"SRIOV_EN": "1", "NUM_OF_VFS": "16", "LINK_TYPE_P1": "2", "ROCE_CC_PRIO_MASK_P1": "8"}
    got = fw.nvconfig_plan("0000:3b:00.0", wanted, cx7_query())
    assert got["set"] == {"ROCE_CC_PRIO_MASK_P1": "8"}
    assert got["argv"] == ["mlxconfig", "-y", "-d", "0000:3b:00.0", "set", "ROCE_CC_PRIO_MASK_P1=8"]
    # NUM_OF_VFS: next boot 16 already, running 8: a reboot, no set; ROCE mask: set and reboot
    assert got["reboot"] == ["NUM_OF_VFS", "ROCE_CC_PRIO_MASK_P1"]
    control = fw.nvconfig_plan("0000:3b:00.0", {"SRIOV_EN": "1", "LINK_TYPE_P1": "ETH"}, cx7_query())
    assert (control["set"], control["reboot"], control["argv"]) == ({}, [], None)


def test_nvconfig_plan_refuses_a_parameter_the_card_does_not_list_and_arrays():
    with pytest.raises(fw.NicFirmwareError, match=r"does not list the nvconfig parameter CNP_DSCP_P1"):
        fw.nvconfig_plan("0000:3b:00.0", {"CNP_DSCP_P1": "48"}, cx7_query())
    query = fw.parse_nvconfig(read(DATA, "operator-cx4-e-query.txt"))
    with pytest.raises(fw.NicFirmwareError, match=r"ESWITCH_HAIRPIN_DESCRIPTORS is an array"):
        fw.nvconfig_plan("0000:3b:00.0", {"ESWITCH_HAIRPIN_DESCRIPTORS": "1"}, query)
    with pytest.raises(fw.NicFirmwareError, match="the nvconfig could not be read"):
        fw.nvconfig_plan("0000:3b:00.0", {"SRIOV_EN": "1"},
                         fw.parse_nvconfig(read(MLXCONFIG, "synthetic-error-failed-to-open.txt")))


def test_nvconfig_plan_defers_an_advanced_pci_parameter_until_the_setting_is_on():
    got = fw.nvconfig_plan("0000:3b:00.0", {"ADVANCED_PCI_SETTINGS": "1", "MAX_ACC_OUT_READ": "44"}, cx7_query())
    assert got["set"] == {"ADVANCED_PCI_SETTINGS": "1"} and got["deferred"] == ["MAX_ACC_OUT_READ"]
    with pytest.raises(fw.NicFirmwareError, match="MAX_ACC_OUT_READ"):
        fw.nvconfig_plan("0000:3b:00.0", {"MAX_ACC_OUT_READ": "44"}, cx7_query())


def test_raw_list_validated():
    assert fw.check_raw([{"name": "KEEP_ETH_LINK_UP_P1", "value": True}]) == {"KEEP_ETH_LINK_UP_P1": "1"}
    assert fw.check_raw({"ESWITCH_HAIRPIN_DESCRIPTORS[3]": 128}) == {"ESWITCH_HAIRPIN_DESCRIPTORS[3]": "128"}
    for raw, message in (({"keep_eth": 1}, "is not an nvconfig parameter"),
                         ({"A[1;x]": 1}, "is not an nvconfig parameter"),
                         ({"KEEP_ETH_LINK_UP_P1": "1 -y"}, "is not a number or a symbol"),
                         ({"NUM_OF_VFS": 8}, "NUM_OF_VFS: is derived from the model"),
                         ([{"name": "X"}], r"\[0\]: .* is not \{name, value\}")):
        with pytest.raises(fw.NicFirmwareError, match=message):
            fw.check_raw(raw)


def test_max_read_request_through_setpci():
    assert fw.parse_devctl("2936") == 512  # bits 14:12 = 2
    assert fw.parse_devctl("5936") == 4096
    assert fw.parse_devctl("zz") is None
    assert fw.devctl_argv("3b:00.0", 4096) == ["setpci", "-s", "0000:3b:00.0", "CAP_EXP+08.w=5000:7000"]
    assert fw.devctl_argv("0000:3b:00.0") == ["setpci", "-s", "0000:3b:00.0", "CAP_EXP+08.w"]
    with pytest.raises(fw.NicFirmwareError, match="nic_firmware_max_read_request: 3000 is not"):
        fw.check_max_read_request(3000)


# --- reset -------------------------------------------------------------------------------------------------


def test_reset_at_level_3_when_supported_else_reboot_through_the_maintenance_layer():
    ok = parse_fwreset_query(read(FWRESET, "mstflint-layout-cx7-level3-default.txt"))
    legacy = parse_fwreset_query(read(FWRESET, "mstflint-layout-level4-only-legacy.txt"))
    got = fw.reset_plan("0000:3b:00.0", ok, {}, {})
    assert got == {"how": "reset", "argv": ["mlxfwreset", "-d", "0000:3b:00.0", "-l", "3", "-y", "reset"],
                   "why": None}
    got = fw.reset_plan("0000:3b:00.0", legacy, {}, {}, reboot_allowed=True)
    assert got["how"] == "reboot" and "does not support firmware reset level 3" in got["why"]
    assert fw.reset_plan("0000:3b:00.0", legacy, {}, {})["how"] == "pending"
    vfs = {"0000:3b:00.0": {"numvfs": 2, "vfs": {"0000:3b:00.2": "mlx5_core", "0000:3b:00.3": None}}}
    got = fw.reset_plan("0000:3b:00.0", ok, vfs, {}, reboot_allowed=True)
    assert got["how"] == "reboot" and "would remove its VFs" in got["why"]


# --- desired state from the model ------------------------------------------------------------------------

ADDRESSING = {"mode": "shared", "supernet": "172.16.0.0/16", "rail_prefix": 24}
NICS = ["ens1f0np0", "ens1f1np1"]


def test_desired_derives_sriov_link_type_and_roce_from_their_owners():
    cluster = load_cluster({"name": "t", "rails": 2, "mtu": 9000, "addressing": ADDRESSING, "cni": "sriov",
                            "sriov": {"vfs": 4, "firmware_vfs": 8}})
    got = desired.options(cluster, NICS, pins=PINS, mirror="/srv/fw", gpudirect="baremetal")
    pfs = {pf["name"]: pf for pf in sriov_desired.options(cluster, NICS)["pfs"]}
    qos = {n["name"]: n for n in roce_desired.options(cluster, NICS)["nics"]}
    nic = got["nics"][0]
    assert nic["sriov_vfs"] == pfs["ens1f0np0"]["firmware_vfs"] == 8
    assert nic["roce"]["cnp_dscp"] == qos["ens1f0np0"]["cnp_dscp"]
    assert nic["roce"]["cnp_priority"] == qos["ens1f0np0"]["cnp_priority"]
    assert nic["roce"]["cc_prio_mask"] == sum(1 << p for p in qos["ens1f0np0"]["ecn_rp"])
    params = fw.wanted_params(nic, 2, got["params"])
    assert params == {"ATS_ENABLED": "0", "LINK_TYPE_P2": "2", "SRIOV_EN": "1", "NUM_OF_VFS": "8",
                      "ROCE_CC_PRIO_MASK_P2": "8", "CNP_DSCP_P2": "48", "CNP_802P_PRIO_P2": "6"}


def test_desired_infiniband_wants_ib_and_no_roce_and_no_sriov_without_the_cni():
    cluster = load_cluster({"name": "t", "rails": 2, "mtu": 4092,
                            "addressing": {"mode": "infiniband", "supernet": "172.16.0.0/16", "rail_prefix": 24}})
    got = desired.options(cluster, NICS)
    assert [(n["link_type"], n["roce"], n["sriov_vfs"]) for n in got["nics"]] == [("IB", None, None)] * 2
    assert fw.wanted_params(got["nics"][0], 1, {}) == {"LINK_TYPE_P1": "1"}


def test_desired_raw_parameter_needing_advanced_pci_turns_it_on_and_bad_values_are_one_line():
    cluster = load_cluster({"name": "t", "rails": 2, "mtu": 9000, "addressing": ADDRESSING})
    got = desired.options(cluster, NICS, raw={"MAX_ACC_OUT_READ": 44})
    assert got["params"] == {"MAX_ACC_OUT_READ": "44", "ADVANCED_PCI_SETTINGS": "1"}
    assert desired.options(cluster, NICS, raw={"KEEP_ETH_LINK_UP_P1": 1})["params"] == {"KEEP_ETH_LINK_UP_P1": "1"}
    with pytest.raises(fw.NicFirmwareError, match="nic_firmware_gpudirect: 'vm' is not one of none, baremetal"):
        desired.options(cluster, NICS, gpudirect="vm")
    with pytest.raises(fw.NicFirmwareError, match=r"nic_firmware_bluefield_modes\.0000:3b:00\.0: 'auto'"):
        desired.options(cluster, NICS, bluefield_modes={"0000:3b:00.0": "auto"})


# --- review 44 (docs/reviews/44-nic-firmware.md D1-D3)

PCI = "0000:3b:00.0"


def test_numbers_compare_whatever_their_base_and_names_as_names():
    assert [fw.number(v) for v in ("0x10", "0X10", "16", "016", "X(0x2)", "ETH(2)", "HOST_0")] == [
        "16", "16", "16", "16", "2", "2", "HOST_0"]
    assert fw._equal("0x10", "16") and fw._equal("0X10", "16") and fw._equal("ETH", "ETH(2)")
    assert not fw._equal("0x11", "16") and not fw._equal("IB", "ETH(2)")


def test_array_elements_are_queried_merged_compared_and_set_element_by_element():
    placeholder = fw.parse_nvconfig(read(DATA, "operator-cx4-e-query.txt"))
    wanted = {"ESWITCH_HAIRPIN_DESCRIPTORS[5]": "128", "ESWITCH_HAIRPIN_DESCRIPTORS[6]": "64"}
    assert fw.element_queries(wanted, placeholder) == ["ESWITCH_HAIRPIN_DESCRIPTORS[0..7]"]
    with pytest.raises(fw.NicFirmwareError, match=r"element rows of the array ESWITCH_HAIRPIN_DESCRIPTORS\[0..7\] "
                                                  r"were not read"):
        fw.nvconfig_plan(PCI, wanted, placeholder)
    query = fw.merge_nvconfig(placeholder, fw.parse_nvconfig(read(DATA, "operator-array-elements.txt")))
    assert fw.element_queries(wanted, query) == []
    current6 = query["params"]["ESWITCH_HAIRPIN_DESCRIPTORS[6]"]["next_boot"]
    plan = fw.nvconfig_plan(PCI, dict(wanted, **{"ESWITCH_HAIRPIN_DESCRIPTORS[6]": current6}), query)
    assert plan["set"] == {} and plan["reboot"] == []
    plan = fw.nvconfig_plan(PCI, {"ESWITCH_HAIRPIN_DESCRIPTORS[6]": "4"}, query)
    assert plan["argv"] == ["mlxconfig", "-y", "-d", PCI, "set", "ESWITCH_HAIRPIN_DESCRIPTORS[6]=4"]
    with pytest.raises(fw.NicFirmwareError, match=r"ESWITCH_HAIRPIN_DESCRIPTORS\[9\] is outside the array"):
        fw.nvconfig_plan(PCI, {"ESWITCH_HAIRPIN_DESCRIPTORS[9]": "4"}, query)


def test_a_read_only_row_is_refused_only_when_it_would_need_a_set():
    text = ("Device type:    ConnectX6DX\n\nConfigurations:          Default         Current         Next Boot\n"
            " RO     PCI_ATOMIC_MODE        X(1)            X(1)            X(1)\n")
    query = fw.parse_nvconfig(text)
    assert query["params"]["PCI_ATOMIC_MODE"]["read_only"] and query["problems"] == []
    assert fw.nvconfig_plan(PCI, {"PCI_ATOMIC_MODE": "1"}, query)["set"] == {}
    with pytest.raises(fw.NicFirmwareError, match=r"^nic_firmware: 0000:3b:00.0 \(ConnectX6DX\): PCI_ATOMIC_MODE is "
                                                  r"read-only \(mlxconfig marks it RO\) and is X\(1\), not 2: not set"):
        fw.nvconfig_plan(PCI, {"PCI_ATOMIC_MODE": "2"}, query)
