# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RDMA host parsers on recorded outputs (data/rdma/*/ORIGIN.md); expected facts read off each sample by eye."""

from __future__ import annotations

import glob
import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_facts import (
    PORT_FIELDS, device_of_netdev, merge, roce_v2_gid_index,
)
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse import PARSERS, parse_rdma

DATA = os.path.join(os.path.dirname(__file__), "data", "rdma")
KEYS = {"format", "available", "system", "devices", "pci", "firmware", "topology", "ofed", "modules", "problems"}


def sample(fmt, name):
    with open(os.path.join(DATA, fmt, name)) as handle:
        return handle.read()


def parse(fmt, name):
    return parse_rdma(sample(fmt, name), fmt)


def link(facts, dev, number=1):
    entry = facts["devices"][dev]["ports"][number]
    return entry["state"], entry["physical_state"], entry["netdev"], entry["link_layer"]


# --- every sample ------------------------------------------------------------------------------------

ALL = sorted((os.path.basename(os.path.dirname(path)), os.path.basename(path))
             for path in glob.glob(os.path.join(DATA, "*", "*.txt")))


@pytest.mark.parametrize("fmt,name", ALL)
def test_every_sample_gives_well_formed_facts(fmt, name):
    facts = parse(fmt, name)
    assert set(facts) == KEYS and facts["format"] == fmt
    assert isinstance(facts["problems"], list) and all(isinstance(p, str) for p in facts["problems"])
    for dev in facts["devices"].values():
        assert dev["netdevs"] == sorted(set(dev["netdevs"]))
        for entry in dev["ports"].values():
            assert set(entry) == set(PORT_FIELDS)
        for gid in dev["gids"]:
            assert gid["type"] in ("RoCE v1", "RoCE v2", "IB", None)
    if not facts["available"]:
        assert facts["problems"]


def test_the_data_folders_are_the_formats_and_each_has_an_origin():
    folders = set(os.listdir(DATA))
    assert folders <= set(PARSERS)
    for folder in folders:
        assert os.path.isfile(os.path.join(DATA, folder, "ORIGIN.md"))


@pytest.mark.parametrize("fmt", sorted(PARSERS))
@pytest.mark.parametrize("text", ["", "   \n", "garbage\x00 line\n{not json", "Command 'rdma' not found\n",
                                  "-E- Failed to open device\n", "[1, 2", "{}"])
def test_garbage_empty_and_error_lines_are_not_available_never_an_exception(fmt, text):
    facts = parse_rdma(text, fmt)
    assert facts["available"] is False and facts["problems"]


def test_none_and_non_text_are_not_available():
    assert parse_rdma(None, "rdma_link")["problems"] == ["no rdma_link output to parse"]
    assert parse_rdma(42, "rdma_link")["available"] is False
    assert parse_rdma(b"link rxe0/1 state ACTIVE physical_state LINK_UP netdev eth1\n", "rdma_link")["available"]


def test_unknown_format_raises_value_error_naming_the_formats():
    with pytest.raises(ValueError, match="rdma_link"):
        parse_rdma("x", "rdma_links")


def test_error_text_names_the_line():
    facts = parse_rdma("Command 'rdma' not found, but can be installed with:\n", "rdma_system")
    assert facts["problems"] == ["rdma_system not available: Command 'rdma' not found, but can be installed with:"]


# --- rdma system -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,netns,cof,pqkey,monitor", [
    ("spiderpool-shared-indented.txt", "shared", True, None, None),
    ("spiderpool-exclusive-indented.txt", "exclusive", True, None, None),
    ("k8s-rdma-shared-dev-plugin-84-shared.txt", "shared", True, None, None),
    ("iproute2-pqkey-off.txt", "shared", True, False, None),
    ("iproute2-pqkey-on.txt", "shared", True, True, None),
    ("iproute2-monitor-on.txt", "shared", True, False, True),
    ("synthetic-old-iproute2-netns-only.txt", "shared", None, None, None),
    ("synthetic-json-exclusive.txt", "exclusive", True, False, None),
])
def test_rdma_system(name, netns, cof, pqkey, monitor):
    facts = parse("rdma_system", name)
    assert facts["available"] and facts["problems"] == []
    assert facts["system"] == {"netns": netns, "copy_on_fork": cof, "privileged_qkey": pqkey, "monitor": monitor}


def test_rdma_system_old_iproute2_without_the_object_is_not_available():
    facts = parse("rdma_system", "k8s-rdma-shared-dev-plugin-84-unknown-object.txt")
    assert facts["available"] is False and facts["system"]["netns"] is None
    assert facts["problems"] == ["rdma_system not available: Unknown object 'system'."]


def test_rdma_system_unknown_mode_is_a_problem():
    facts = parse_rdma("netns private copy-on-fork maybe\n", "rdma_system")
    assert facts["available"] is False and "unknown netns mode" in facts["problems"][-1]


@pytest.mark.parametrize("text,mode", [("Y\n", "shared"), ("N\n", "exclusive"),
                                       ("/sys/module/ib_core/parameters/netns_mode:0\n", "exclusive")])
def test_netns_mode_parameter(text, mode):
    assert parse_rdma(text, "netns_mode")["system"]["netns"] == mode


# --- rdma link ---------------------------------------------------------------------------------------


def test_rdma_link_cx6dx_with_trailing_spaces():
    facts = parse("rdma_link", "3fs-283-cx6dx-trailing-space.txt")
    assert facts["problems"] == []
    assert link(facts, "mlx5_0") == ("ACTIVE", "LINK_UP", "p1p1", None)
    assert link(facts, "mlx5_1") == ("ACTIVE", "LINK_UP", "p1p2", None)
    assert device_of_netdev(facts, "p1p2") == "mlx5_1"


def test_rdma_link_soft_roce():
    facts = parse("rdma_link", "3fs-263-soft-roce-rxe.txt")
    assert list(facts["devices"]) == ["rxe_0"] and link(facts, "rxe_0") == ("ACTIVE", "LINK_UP", "p1p1", None)


def test_rdma_link_infiniband_polling_without_netdev():
    facts = parse("rdma_link", "rccl-1423-ib-polling.txt")
    entry = facts["devices"]["mlx5_7"]["ports"][1]
    assert link(facts, "mlx5_7") == ("DOWN", "POLLING", None, "InfiniBand")
    assert (entry["lid"], entry["sm_lid"], entry["subnet_prefix"]) == (3403, 1, "fe80:0000:0000:0000")
    assert facts["devices"]["mlx5_7"]["netdevs"] == []


def test_rdma_link_spiderpool_elided_lines_ignored():
    facts = parse("rdma_link", "spiderpool-ai-index-elided.txt")
    assert sorted(facts["devices"]) == ["mlx5_0", "mlx5_1"] and facts["problems"] == []
    assert link(facts, "mlx5_1") == ("ACTIVE", "LINK_UP", "ens6f1np1", None)


def test_rdma_link_ipoib_port_and_wrapped_netdev():
    assert link(parse("rdma_link", "spiderpool-ipoib-ib-no-netdev.txt"), "mlx5_0") == \
        ("ACTIVE", "LINK_UP", None, "InfiniBand")
    facts = parse("rdma_link", "kernel-nldev-ipoib-netdev-wrapped.txt")
    assert link(facts, "mlx5_0") == ("ACTIVE", "LINK_UP", "ibp196s0f0", "InfiniBand")
    assert facts["devices"]["mlx5_0"]["ports"][1]["lid"] == 66


def test_rdma_link_old_iproute2_format():
    facts = parse("rdma_link", "old-iproute2-i40iw-cx4.txt")
    assert sorted(facts["devices"]) == ["i40iw0", "i40iw1", "mlx5_0", "mlx5_1"]
    assert link(facts, "i40iw1") == ("ACTIVE", "NOP", None, None)
    assert link(facts, "mlx5_0") == ("DOWN", "DISABLED", "ens803f0", None)
    facts = parse("rdma_link", "old-iproute2-no-netdev-mixed-ib.txt")
    assert len(facts["devices"]) == 6
    assert link(facts, "mlx5_5") == ("ACTIVE", "LINK_UP", None, "InfiniBand")
    assert link(facts, "mlx5_4") == ("DOWN", "DISABLED", None, None)
    facts = parse("rdma_link", "old-iproute2-cx6dx-eth.txt")
    assert [facts["devices"]["mlx5_%d" % n]["netdevs"] for n in range(4)] == [["eth0"], ["eth1"], ["eth2"], ["eth3"]]


def test_rdma_link_json_with_details():
    facts = parse("rdma_link", "synthetic-json-detail.txt")
    assert facts["devices"]["mlx5_0"]["ports"][1]["netdev_index"] == 4
    assert link(facts, "mlx5_1") == ("ACTIVE", "LINK_UP", "ibp65s0", "InfiniBand")
    assert link(facts, "mlx5_2") == ("DOWN", "DISABLED", None, None)


def test_rdma_link_line_without_state_is_a_problem():
    facts = parse_rdma("link mlx5_0/1 netdev eth0\n", "rdma_link")
    assert facts["available"] and facts["problems"] == ["rdma_link: no state in 'link mlx5_0/1 netdev eth0'"]


# --- show_gids ---------------------------------------------------------------------------------------


def gids(facts, dev):
    return [(g["index"], g["ipv4"], g["type"], g["netdev"]) for g in facts["devices"][dev]["gids"]]


def test_show_gids_tabs_three_devices():
    facts = parse("show_gids", "three-devices-tabs.txt")
    assert facts["problems"] == []
    assert gids(facts, "mlx5_1") == [(0, None, "RoCE v1", "eth02"), (1, None, "RoCE v2", "eth02"),
                                     (2, "26.110.177.29", "RoCE v1", "eth02"), (3, "26.110.177.29", "RoCE v2", "eth02")]
    assert roce_v2_gid_index(facts, "mlx5_0", "10.110.0.33") == 3
    assert roce_v2_gid_index(facts, "eth03", "26.110.178.29") == 3
    assert roce_v2_gid_index(facts, "eth03", "10.110.0.33") is None


def test_show_gids_bond_and_vxlan_share_an_address():
    facts = parse("show_gids", "ucx-9484-bond-vxlan-spaces.txt")
    assert facts["devices"]["mlx5_bond_0"]["netdevs"] == ["b3.vxlan.30100", "bond1"]
    assert roce_v2_gid_index(facts, "bond1", "30.153.10.175") == 5
    assert roce_v2_gid_index(facts, "b3.vxlan.30100", "30.153.10.175") == 3
    assert roce_v2_gid_index(facts, "mlx5_bond_0", "30.153.10.175") == 3


def test_show_gids_huawei_hrn3_has_only_v2():
    facts = parse("show_gids", "bond-and-hrn3-huawei-tabs.txt")
    assert gids(facts, "hrn3_bond_0") == [(0, None, "RoCE v2", "bond0"), (1, "27.105.180.3", "RoCE v2", "bond0")]
    assert roce_v2_gid_index(facts, "bond0", "27.105.180.3") == 1
    facts = parse("show_gids", "mlx5-bond-tabs.txt")
    assert roce_v2_gid_index(facts, "mlx5_bond_0", "10.96.83.26") == 3


def test_show_gids_ib_port_without_netdev_is_ib():
    facts = parse("show_gids", "ib-port-and-roce-spaces.txt")
    assert gids(facts, "mlx5_1") == [(0, None, "IB", None)]
    assert gids(facts, "mlx5_0")[1] == (1, None, "RoCE v2", "ens11f0")


def test_show_gids_spaces_and_ipv6_gids():
    facts = parse("show_gids", "ibp13s0f0-spaces.txt")
    assert roce_v2_gid_index(facts, "ibp13s0f0", "10.31.4.2") == 3
    facts = parse("show_gids", "mooncake-1617-ionic-ipv6-spaces.txt")
    assert facts["devices"]["rocep105s0"]["gids"][1]["gid"] == "fd93:16d3:59b6:010d:0690:81ff:fe39:e3e8"
    assert gids(facts, "rocep105s0")[1] == (1, None, "RoCE v2", "enp105s0")
    assert gids(facts, "rocep193s0f0")[0] == (0, None, "RoCE v1", "enp193s0f0np0")


def test_show_gids_masked_gids_are_problems_but_rows_kept():
    facts = parse("show_gids", "gb10-cx7-masked-gids.txt")
    assert len(facts["problems"]) == 8 and all("xxxx" in p for p in facts["problems"])
    assert roce_v2_gid_index(facts, "enP2p1s0f0np0", "192.168.100.14") == 3
    assert roce_v2_gid_index(facts, "rocep1s0f0", "192.168.100.10") == 3


def test_show_gids_empty_table():
    facts = parse("show_gids", "empty-in-pod-calico.txt")
    assert facts["devices"] == {} and facts["problems"] == ["show_gids: no GIDs (n_gids_found=0)"]


def test_gid_sysfs_files():
    facts = parse("show_gids", "sysfs-grep-synthetic.txt")
    assert gids(facts, "rxe0") == [(0, None, "RoCE v2", "ens4"), (1, "10.10.1.2", "RoCE v2", "ens4")]
    assert gids(facts, "mlx5_0")[2] == (2, "10.110.0.33", "RoCE v1", "eth05")
    assert roce_v2_gid_index(facts, "ens4", "10.10.1.2") == 1
    assert facts["problems"] == ["show_gids: error line in the output: grep: "
                                 "/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/4: Invalid argument"]


# --- ibstat / ibv_devinfo ----------------------------------------------------------------------------


def test_ibstat_h100_cx7_roce_with_polling_port():
    facts = parse("ibstat", "gpud-h100-cx7-roce-polling.txt")
    assert len(facts["devices"]) == 12
    dev = facts["devices"]["mlx5_0"]
    assert (dev["ca_type"], dev["fw_ver"], dev["node_guid"]) == ("MT4129", "28.39.1002", "0xa088c20300adeab8")
    assert link(facts, "mlx5_0") == ("ACTIVE", "LINK_UP", None, "Ethernet")
    assert dev["ports"][1]["rate"] == 400
    assert link(facts, "mlx5_11") == ("DOWN", "POLLING", None, "Ethernet")
    assert facts["devices"]["mlx5_1"]["ca_type"] == "MT4125"


def test_ibstat_a100_ib_with_ibpanic_at_the_end():
    facts = parse("ibstat", "gpud-a100-cx6-ibpanic.txt")
    assert len(facts["devices"]) == 8 and facts["available"]
    assert facts["devices"]["mlx5_0"]["ports"][1]["lid"] == 13247
    assert link(facts, "mlx5_0") == ("ACTIVE", "LINK_UP", None, "InfiniBand")
    assert facts["problems"] == ["ibstat: error line in the output: ibpanic: [1400444] main: stat of IB device "
                                 "'mlx5_8' failed: No such file or directory"]


def test_ibstat_cx8_and_cx7_mixed():
    facts = parse("ibstat", "dell-b300-cx8-cx7-ib.txt")
    assert facts["devices"]["mlx5_0"]["ca_type"] == "MT4131" and facts["devices"]["mlx5_0"]["fw_ver"] == "40.46.5500"
    assert link(facts, "mlx5_10") == ("DOWN", "DISABLED", None, "InfiniBand")
    assert facts["devices"]["mlx5_3"]["ports"][1]["rate"] == 100
    assert facts["devices"]["mlx5_3"]["sys_image_guid"] == "0x7425540300353de9"


def test_ibstat_mlx4_two_ports_after_ibwarn_lines_and_cut_short():
    facts = parse("ibstat", "rdma-core-847-mlx4-ibwarn.txt")
    ports = facts["devices"]["mlx4_0"]["ports"]
    assert link(facts, "mlx4_0", 1) == ("DOWN", "DISABLED", None, "InfiniBand")
    assert (ports[2]["state"], ports[2]["physical_state"], ports[2]["rate"], ports[2]["link_layer"]) == \
        ("ACTIVE", "LINK_UP", 56, None)
    assert facts["problems"] == []


def test_ibv_devinfo():
    facts = parse("ibstat", "ibv_devinfo-cx6-ib.txt")
    dev = facts["devices"]["mlx5_0"]
    assert (dev["fw_ver"], dev["node_guid"], dev["vendor_part_id"], dev["board_id"], dev["transport"]) == \
        ("20.41.1000", "a088:c203:0096:05fc", "4123", "MT_0000000222", "InfiniBand")
    assert link(facts, "mlx5_0") == ("ACTIVE", None, None, "InfiniBand") and dev["ports"][1]["lid"] == 35
    facts = parse("ibstat", "ibv_devinfo-azure-vf-ib-and-eth.txt")
    assert link(facts, "mlx5_1") == ("ACTIVE", None, None, "Ethernet")
    assert facts["devices"]["mlx5_1"]["fw_ver"] == "14.30.1284"


# --- ofed_info, lsmod --------------------------------------------------------------------------------


@pytest.mark.parametrize("name,version,flavour", [
    ("mlnx-ofed-5.0-in-pod.txt", "5.0-2.1.8.0", "mlnx_ofed"),
    ("mlnx-ofed-4.0-cx3.txt", "4.0-2.0.0.1", "mlnx_ofed"),
    ("mlnx-ofed-23.10-azure.txt", "23.10-1.1.9.0", "mlnx_ofed"),
    ("mlnx-ofed-5.4-short.txt", "5.4-3.6.8", "mlnx_ofed"),
    ("mlnx-ofed-24.10-no-colon.txt", "24.10-1.1.4.0", "mlnx_ofed"),
    ("doca-ofed-24.10-dgx.txt", "24.10-1.1.4.0.200", "doca"),
    ("doca-ofed-24.04.txt", "24.04-0.6.6", "doca"),
    ("doca-ofed-25.10.txt", "25.10-1.7.1", "doca"),
    ("ofed-internal-5.0-old.txt", "5.0-1.0.0.0", "ofed_internal"),
])
def test_ofed_info(name, version, flavour):
    facts = parse("ofed_info", name)
    assert (facts["ofed"]["version"], facts["ofed"]["flavour"]) == (version, flavour) and facts["problems"] == []


def test_ofed_info_missing():
    facts = parse("ofed_info", "synthetic-not-found.txt")
    assert facts["available"] is False
    assert facts["problems"] == ["ofed_info not available: bash: ofed_info: command not found"]


def test_lsmod():
    text = ("Module                  Size  Used by\nnvidia_peermem         16384  0\nmlx5_ib               458752  0\n"
            "ib_core               450560  2 mlx5_ib,nvidia_peermem\nmlx5_core            2084864  1 mlx5_ib\n")
    facts = parse_rdma(text, "lsmod")
    assert facts["modules"]["loaded"] == ["ib_core", "mlx5_core", "mlx5_ib", "nvidia_peermem"]
    assert facts["modules"]["rdma"]["nvidia_peermem"] is True and facts["modules"]["rdma"]["gdrdrv"] is False


# --- merge -------------------------------------------------------------------------------------------


def test_merge_link_gids_ibstat_and_system():
    link_facts = parse_rdma("link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev eth05\n", "rdma_link")
    gid_facts = parse("show_gids", "three-devices-tabs.txt")
    stat = parse_rdma("CA 'mlx5_0'\n\tFirmware version: 28.39.1002\n\tPort 1:\n\t\tLink layer: Ethernet\n", "ibstat")
    system = parse("rdma_system", "spiderpool-exclusive-indented.txt")
    facts = merge(link_facts, gid_facts, stat, system, None)
    assert facts["format"] == "rdma_link+show_gids+ibstat+rdma_system" and facts["available"]
    dev = facts["devices"]["mlx5_0"]
    assert link(facts, "mlx5_0") == ("ACTIVE", "LINK_UP", "eth05", "Ethernet")
    assert dev["fw_ver"] == "28.39.1002" and len(dev["gids"]) == 4 and dev["netdevs"] == ["eth05"]
    assert facts["system"]["netns"] == "exclusive"
    assert roce_v2_gid_index(facts, "eth05", "10.110.0.33") == 3
    again = merge(facts, gid_facts)
    assert len(again["devices"]["mlx5_0"]["gids"]) == 4


def test_roce_v2_gid_index_of_an_ipv6_address():
    """The GID of an IPv6 rail address is the address itself (mooncake-1617 recording, AMD ionic)."""
    facts = parse("show_gids", "mooncake-1617-ionic-ipv6-spaces.txt")
    assert roce_v2_gid_index(facts, "enp121s0", "fd93:16d3:59b6:10e:690:81ff:fe39:1c8") == 1
    assert roce_v2_gid_index(facts, "enp105s0", "fd93:16d3:59b6:10e:690:81ff:fe39:1c8") is None
    assert roce_v2_gid_index(facts, "enp121s0", "not-an-address:") is None
