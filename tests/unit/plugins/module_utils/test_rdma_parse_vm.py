# -*- coding: utf-8 -*-
"""The RDMA parsers on the VM tier's recorded real outputs (tests/vm/recorded, origin in its ORIGIN.md: qemu
10 q35 guests, kernel 6.1, iproute2 6.1, rdma-core 44, pciutils 3.9, soft-RoCE rxe0 on enp1s0, two igb PFs).
Expected facts read off each file by eye."""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_facts import roce_v2_gid_index
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse import parse_rdma

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
VM = os.path.join(ROOT, "tests", "vm", "recorded")


def parsed(name, fmt):
    with open(os.path.join(VM, name)) as handle:
        return parse_rdma(handle.read(), fmt)


@pytest.mark.parametrize("name, mode", [
    ("rdma_system_show.txt", "shared"),
    ("rdma_system_show_exclusive.txt", "exclusive"),
    ("rdma_j_system_show.txt", "shared"),            # iproute2 6.1 prints text even with -j
    ("rdma_j_system_show_exclusive.txt", "exclusive"),
])
def test_rdma_system(name, mode):
    facts = parsed(name, "rdma_system")
    assert facts["available"] and facts["system"]["netns"] == mode and facts["system"]["copy_on_fork"] is True


def test_netns_mode_parameter():
    assert parsed("ib_core_netns_mode.txt", "netns_mode")["system"]["netns"] == "shared"


@pytest.mark.parametrize("name", ["rdma_link_show.txt", "rdma_j_link_show.txt", "rdma_d_link_show.txt",
                                  "rdma_j_d_link_show.txt"])
def test_rdma_link(name):
    port = parsed(name, "rdma_link")["devices"]["rxe0"]["ports"][1]
    assert port["state"] == "ACTIVE" and port["physical_state"] == "LINK_UP" and port["netdev"] == "enp1s0"


def test_ibstat_of_soft_roce():
    dev = parsed("ibstat.txt", "ibstat")["devices"]["rxe0"]
    assert dev["node_guid"] in ("0x505400fffea10101", "505400fffea10101")
    port = dev["ports"][1]
    assert port["state"] == "ACTIVE" and port["physical_state"] == "LINK_UP" and port["link_layer"] == "Ethernet"


def test_lspci_acs_on_with_an_iommu_and_sriov_with_vfs():
    pci = parsed("lspci_vvv_iommu_on_with_vfs.txt", "lspci_vvv")["pci"]
    for bridge in ("00:03.0", "00:04.0"):
        ctl = pci[bridge]["acs"]["ctl"]
        assert ctl["SrcValid"] and ctl["ReqRedir"] and ctl["CmpltRedir"] and ctl["UpstreamFwd"]
        assert not ctl["TransBlk"] and not ctl["EgressCtrl"] and not ctl["DirectTrans"]
        assert pci[bridge]["kind"] == "bridge"
    assert pci["01:00.0"]["sriov"]["total_vfs"] == 8 and pci["01:00.0"]["sriov"]["num_vfs"] == 2
    assert pci["02:00.0"]["sriov"]["num_vfs"] == 0
    assert pci["01:00.0"]["parent"] == "00:03.0" and pci["02:00.0"]["parent"] == "00:04.0"


def test_lspci_acs_off_without_an_iommu():
    pci = parsed("lspci_vvv.txt", "lspci_vvv")["pci"]
    assert not any(pci["00:03.0"]["acs"]["ctl"].values())
    assert pci["00:03.0"]["acs"]["cap"]["SrcValid"]


def test_gid_table_printed_from_sysfs_with_the_sysfs_type_words():
    facts = parsed("gids_sysfs_table.txt", "show_gids")
    assert facts["available"] and facts["problems"] == []
    gids = facts["devices"]["rxe0"]["gids"]
    assert [(g["index"], g["type"], g["netdev"]) for g in gids] == [(0, "RoCE v2", "enp1s0"), (1, "RoCE v2", "enp1s0")]
    assert gids[1]["ipv4"] == "192.168.51.1"
    assert roce_v2_gid_index(facts, "enp1s0", "192.168.51.1") == 1
