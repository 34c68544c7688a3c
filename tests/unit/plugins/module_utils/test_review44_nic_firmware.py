# -*- coding: utf-8 -*-
"""Review 44 (nic_firmware): cases with exactly one thing wrong, checked against the oracles' code
(Mellanox/mstflint@b9d9e844a14ae1c85cb90c76ccd4a56a0eccd599, Mellanox/nic-configuration-operator@
8bfbeb34bba25215dd06402cd01bae0108341a8d4); see docs/reviews/44-nic-firmware.md. Defects are strict xfails
named ``review 44 D<n>``; the other tests are the controls and the behaviours that held."""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.host import nic_firmware_state as fw

DATA = os.path.join(os.path.dirname(__file__), "data", "nic_firmware")
PCI = "0000:3b:00.0"
PIN = {"MT_0000000436": {"version": "22.41.1000", "image": "fw-ConnectX6Dx-rel-22_41_1000.bin", "sha256": "b" * 64}}
# mlxconfig -e query rows in the layout of mstflint mlxconfig/mlxcfg_ui.cpp MlxCfg::printSingleParam:
# printf("%s%s     %-48s", diff, readOnly, name), then Default, Current, Next Boot
HEADER = ("\nDevice #1:\n----------\n\nDevice type:        ConnectX6DX\nDevice:             %s\n\n"
          "Configurations:                                          Default             Current             Next Boot\n"
          % PCI)
TRAILER = "The '*' shows parameters with next value different from default/current value.\n"


def row(name, default, current, next_boot, ro=False):
    diff = "*" if next_boot != default or next_boot != current else " "
    return "%s%s     %-48s%-20s%-20s%s\n" % (diff, "RO" if ro else "  ", name, default, current, next_boot)


def query(*rows):
    return fw.parse_nvconfig(HEADER + "".join(rows) + TRAILER)


def read(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


# --- nvconfig: next boot vs current vs wanted (operator pkg/configuration/manager.go validateTemplateParamsApplied)

def test_next_boot_already_wanted_current_differs_is_pending_not_set():
    plan = fw.nvconfig_plan(PCI, {"NUM_OF_VFS": "8"}, query(row("NUM_OF_VFS", "0", "0", "8")))
    assert plan["set"] == {} and plan["argv"] is None and plan["reboot"] == ["NUM_OF_VFS"]


def test_control_all_three_agree_nothing_set_nothing_pending():
    plan = fw.nvconfig_plan(PCI, {"NUM_OF_VFS": "8"}, query(row("NUM_OF_VFS", "0", "8", "8")))
    assert plan["set"] == {} and plan["reboot"] == [] and plan["diff"] == []


def test_current_wanted_next_boot_differs_is_set_without_a_reboot():
    plan = fw.nvconfig_plan(PCI, {"CNP_DSCP_P1": "48"}, query(row("CNP_DSCP_P1", "0", "48", "26")))
    assert plan["set"] == {"CNP_DSCP_P1": "48"} and plan["reboot"] == []


def test_num_of_vfs_above_the_wanted_count_is_never_lowered():
    # the sriov role's firmware_status accepts NUM_OF_VFS >= firmware_vfs; nic_firmware follows the same rule
    plan = fw.nvconfig_plan(PCI, {"NUM_OF_VFS": "8"}, query(row("NUM_OF_VFS", "0", "16", "16")))
    assert plan["set"] == {} and plan["reboot"] == []


def test_control_num_of_vfs_below_the_wanted_count_is_raised():
    plan = fw.nvconfig_plan(PCI, {"NUM_OF_VFS": "8"}, query(row("NUM_OF_VFS", "0", "4", "4")))
    assert plan["set"] == {"NUM_OF_VFS": "8"} and plan["reboot"] == ["NUM_OF_VFS"]


def test_named_value_compares_by_its_number_and_a_different_number_differs():
    same = fw.nvconfig_plan(PCI, {"LINK_TYPE_P1": "2"}, query(row("LINK_TYPE_P1", "ETH(2)", "ETH(2)", "ETH(2)")))
    other = fw.nvconfig_plan(PCI, {"LINK_TYPE_P1": "2"}, query(row("LINK_TYPE_P1", "ETH(2)", "IB(1)", "IB(1)")))
    assert same["set"] == {} and other["set"] == {"LINK_TYPE_P1": "2"} and other["reboot"] == ["LINK_TYPE_P1"]


def test_an_unknown_current_value_is_never_agreeing():
    plan = fw.nvconfig_plan(PCI, {"NUM_OF_VFS": "8"}, query(row("NUM_OF_VFS", "0", "N/A", "8")))
    assert plan["set"] == {} and plan["reboot"] == ["NUM_OF_VFS"]


def test_control_decimal_raw_value_is_idempotent():
    plan = fw.nvconfig_plan(PCI, {"LOG_MAX_QUEUE": "16"}, query(row("LOG_MAX_QUEUE", "17", "16", "16")))
    assert plan["set"] == {} and plan["reboot"] == []


def test_hex_raw_value_already_set_is_idempotent():
    # check_raw accepts 0x10; mlxconfig prints the number in decimal (mlxcfg_ui.cpp printValue: "%-*u")
    assert fw.check_raw({"LOG_MAX_QUEUE": "0x10"}) == {"LOG_MAX_QUEUE": "0x10"}
    plan = fw.nvconfig_plan(PCI, {"LOG_MAX_QUEUE": "0x10"}, query(row("LOG_MAX_QUEUE", "17", "16", "16")))
    assert plan["set"] == {} and plan["reboot"] == []


# --- arrays (operator pkg/nvconfig/utils.go queryMLXConfig: an Array[a..b] row is queried again as NAME[a..b])

def test_control_a_whole_array_name_is_refused_with_the_element_hint():
    with pytest.raises(fw.NicFirmwareError, match=r"set its elements as ESWITCH_HAIRPIN_DESCRIPTORS\[n\]"):
        fw.nvconfig_plan(PCI, {"ESWITCH_HAIRPIN_DESCRIPTORS": "128"}, fw.parse_nvconfig(read("operator-cx4-e-query.txt")))


def test_an_element_of_an_array_the_card_lists_is_not_refused_as_unlisted():
    placeholder = fw.parse_nvconfig(read("operator-cx4-e-query.txt"))
    assert placeholder["params"]["ESWITCH_HAIRPIN_DESCRIPTORS"]["array"] == (0, 7)
    try:
        fw.nvconfig_plan(PCI, {"ESWITCH_HAIRPIN_DESCRIPTORS[1]": "128"}, placeholder)
    except fw.NicFirmwareError as exc:
        assert "does not list" not in str(exc), str(exc)


# --- read-only rows (mstflint >= 4.25: mlxcfg_ui.cpp printSingleParam prints "RO" after the change mark)

def test_control_rows_without_the_ro_mark_parse():
    got = query(row("LINK_TYPE_P1", "ETH(2)", "ETH(2)", "IB(1)"), row("NUM_OF_VFS", "0", "0", "0"))
    assert got["problems"] == [] and sorted(got["params"]) == ["LINK_TYPE_P1", "NUM_OF_VFS"]


def test_read_only_rows_are_read_with_their_values():
    got = query(row("LINK_TYPE_P1", "ETH(2)", "ETH(2)", "ETH(2)"),
                row("PF_NUM_OF_VF_VALID", "False(0)", "False(0)", "False(0)", ro=True),
                row("PCI_ATOMIC_MODE", "X(1)", "X(1)", "Y(2)", ro=True))
    assert got["problems"] == []
    assert got["params"]["PF_NUM_OF_VF_VALID"]["next_boot"] == "False(0)"
    assert got["params"]["PCI_ATOMIC_MODE"]["next_boot"] == "Y(2)" and got["params"]["PCI_ATOMIC_MODE"]["changed"]


# --- firmware (operator pkg/firmware/manager.go: burn unless the burned version is the requested one; the file's
# version and PSID must match; flint subcommands.cpp: -y answers the same/older-version question)

CARD = {"pci": PCI, "psid": "MT_0000000436", "fw": "22.41.1000", "fw_running": "22.41.1000"}


def test_burned_at_pin_running_differs_is_a_reset_not_a_burn():
    plan = fw.firmware_plan(dict(CARD, fw_running="22.39.1002"), PIN)
    assert plan["action"] == "pending" and plan["reset"] and plan["argv"] is None


def test_control_burned_and_running_at_pin_is_ok():
    assert fw.firmware_plan(CARD, PIN)["action"] == "ok"


def test_image_of_right_psid_older_than_the_pin_is_refused():
    image = {"psid": "MT_0000000436", "fw": "22.39.1002"}
    plan = fw.firmware_plan(dict(CARD, fw="22.43.1000", fw_running="22.43.1000"), PIN, image=image)
    assert plan["action"] == "refused" and "its version is 22.39.1002" in plan["refusal"]


def test_pin_older_than_running_is_burned_as_pinned():
    # flint -y answers "The new FW version is older than the current FW version on flash" with yes; the operator
    # burns whatever version is requested: a pin is the wanted version, downgrade included
    image = {"psid": "MT_0000000436", "fw": "22.41.1000"}
    plan = fw.firmware_plan(dict(CARD, fw="22.43.1000", fw_running="22.43.1000"), PIN, image=image)
    assert plan["action"] == "burn" and plan["refusal"] is None


def test_image_of_another_psid_is_refused():
    image = {"psid": "MT_0000000437", "fw": "22.41.1000"}
    plan = fw.firmware_plan(dict(CARD, fw="22.39.1002", fw_running="22.39.1002"), PIN, image=image)
    assert plan["action"] == "refused" and "its PSID is MT_0000000437" in plan["refusal"]


# --- security: nothing from inventory becomes a path outside the cache or a shell word

@pytest.mark.parametrize("image", ["../etc/shadow", "a/b.bin", ".hidden", "x;rm -rf /", "a b.bin", "$(id).bin"])
def test_pin_image_names_that_would_leave_the_cache_or_split_are_refused(image):
    with pytest.raises(fw.NicFirmwareError, match="is not a file name in the mirror"):
        fw.check_pins({"MT_0000000436": dict(PIN["MT_0000000436"], image=image)})


@pytest.mark.parametrize("name, value", [("A;B", "1"), ("LINK_TYPE_P1 X", "1"), ("KEEP_ETH_LINK_UP_P1", "1 2"),
                                         ("KEEP_ETH_LINK_UP_P1", "$(id)"), ("KEEP_ETH_LINK_UP_P1", "1=2")])
def test_raw_parameter_names_and_values_that_are_not_words_are_refused(name, value):
    with pytest.raises(fw.NicFirmwareError):
        fw.check_raw({name: value})


@pytest.mark.parametrize("mirror", ["https://user:pw@m.example/fw", "https://m.example/fw?x=1", "/srv/../etc",
                                    "relative/dir", "file:///etc"])
def test_mirrors_with_login_query_dotdot_or_other_schemes_are_refused(mirror):
    with pytest.raises(fw.NicFirmwareError):
        fw.check_mirror(mirror)
