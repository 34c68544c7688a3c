# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""lspci -vvv, mlxconfig and nvidia-smi topo -m parsers on recorded outputs (data/rdma/*/ORIGIN.md);
expected facts read off each sample by eye."""

from __future__ import annotations

import os

from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse import parse_rdma

DATA = os.path.join(os.path.dirname(__file__), "data", "rdma")
OFF = dict.fromkeys(("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans"),
                    False)


def parse(fmt, name):
    with open(os.path.join(DATA, fmt, name)) as handle:
        return parse_rdma(handle.read(), fmt)


# --- lspci -vvv --------------------------------------------------------------------------------------


def test_lspci_h100_pex890xx_switch_with_cx7_and_gpu():
    facts = parse("lspci_vvv", "gpud-h100-pex890xx-cx7-excerpt.txt")
    pci = facts["pci"]
    assert facts["problems"] == [] and len(pci) == 10
    assert pci["15:01.0"]["acs"]["cap"] == dict(OFF, SrcValid=True, TransBlk=True, ReqRedir=True, CmpltRedir=True,
                                                UpstreamFwd=True)
    assert pci["15:01.0"]["acs"]["ctl"] == OFF
    assert pci["17:00.0"]["acs"]["cap"]["DirectTrans"] is True
    assert pci["16:00.0"]["acs"] is None  # the switch's upstream port has no ACS capability
    gpu, nic = pci["19:00.0"], pci["1a:00.0"]
    assert (gpu["kind"], gpu["numa_node"], gpu["driver"]) == ("gpu", 0, "nvidia")
    assert (nic["kind"], nic["driver"], nic["class"]) == ("rdma_nic", "mlx5_core", "Ethernet controller")
    assert nic["sriov"] == {"initial_vfs": 16, "total_vfs": 16, "num_vfs": 0, "vf_offset": 1, "vf_stride": 1,
                            "vf_device_id": "101e"}
    assert gpu["upstream"] == ["17:01.0", "16:00.0", "15:01.0"] and gpu["parent"] == "17:01.0"
    assert nic["upstream"] == ["17:02.0", "16:00.0", "15:01.0"]
    assert pci["1b:00.1"]["sriov"]["total_vfs"] == 8 and pci["1b:00.1"]["acs"]["ctl"] == OFF
    assert pci["17:03.0"]["bus"] == {"primary": "17", "secondary": "1b", "subordinate": "1b"}
    assert pci["15:01.0"]["upstream"] == [] and pci["15:01.0"]["kind"] == "bridge"


def test_lspci_single_cx4lx_on_vfio():
    facts = parse("lspci_vvv", "cx4lx-vfio-single-device.txt")
    dev = facts["pci"]["08:00.0"]
    assert (dev["kind"], dev["driver"], dev["numa_node"]) == ("rdma_nic", "vfio-pci", None)
    assert dev["acs"] == {"cap": OFF, "ctl": OFF}
    assert dev["sriov"]["total_vfs"] == 8 and dev["sriov"]["vf_offset"] == 2
    assert facts["problems"] == []


def test_lspci_nn_with_domain_wrapped_and_short_acs_lines():
    facts = parse("lspci_vvv", "synthetic-vvvnn-D-q35-bluefield.txt")
    pci = facts["pci"]
    root = pci["0000:00:1c.0"]
    assert (root["class_id"], root["vendor_id"], root["device_id"]) == ("0604", "1b36", "000c")
    assert root["acs"]["ctl"] == dict(OFF, SrcValid=True, ReqRedir=True, CmpltRedir=True, UpstreamFwd=True)
    igb = pci["0000:01:00.0"]
    assert igb["sriov"]["num_vfs"] == 4 and igb["sriov"]["vf_stride"] == 2 and igb["parent"] == "0000:00:1c.0"
    bf = pci["0000:e2:00.0"]
    assert (bf["kind"], bf["vendor_id"], bf["numa_node"]) == ("rdma_nic", "15b3", 1)
    assert bf["acs"]["cap"] == OFF  # wrapped line joined again
    assert bf["acs"]["ctl"] == dict((k, v) for k, v in OFF.items() if k != "DirectTrans")
    assert facts["problems"] == ["lspci_vvv: 0000:e2:00.0 ACSCtl: ACS line without DirectTrans: "
                                 "'SrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl-'"]
    assert pci["0000:e3:00.0"]["kind"] == "gpu" and pci["0000:e3:00.0"]["upstream"] == []


# --- mlxconfig ---------------------------------------------------------------------------------------


def fw(facts, key):
    return facts["firmware"][key]


def test_mlxconfig_cx3_next_boot_column():
    facts = parse("mlxconfig", "truenas-cx3-mstconfig-ib-eth.txt")
    item = fw(facts, "09:00.0")
    assert (item["device_type"], item["link_type_p1"], item["link_type_p2"]) == ("ConnectX3", "IB", "ETH")
    assert (item["sriov_en"], item["num_of_vfs"], item["pending"]) == (True, 8, [])
    assert item["configs"]["CQ_TIMESTAMP"] == {"default": None, "current": None, "next_boot": "True(1)",
                                               "read_only": False}
    assert item["current"]["link_type_p1"] is None


def test_mlxconfig_cx4_trailing_spaces():
    item = fw(parse("mlxconfig", "tianhe2-cx4-single-column-trailing-spaces.txt"), "/dev/mst/mt4115_pciconf0")
    assert (item["device_type"], item["name"], item["sriov_en"], item["num_of_vfs"]) == ("ConnectX4", "N/A", False, 0)
    assert item["configs"]["MEMIC_SIZE_LIMIT"]["next_boot"] == "_256KB(1)" and len(item["configs"]) == 9


def test_mlxconfig_bluefield2_eth():
    item = fw(parse("mlxconfig", "bluefield2-embedded-cpu.txt"), "/dev/mst/mt41686_pciconf0")
    assert (item["device_type"], item["link_type_p1"], item["link_type_p2"]) == ("BlueField2", "ETH", "ETH")
    assert item["configs"]["INTERNAL_CPU_MODEL"]["next_boot"] == "EMBEDDED_CPU(1)"
    assert item["sriov_en"] is None and item["num_of_vfs"] is None


def test_mlxconfig_read_only_rows_of_mstflint_4_25_are_flagged():
    # mstflint mlxconfig/mlxcfg_ui.cpp printSingleParam: printf("%s%s     %-48s", diff, readOnly, name)
    text = ("Device #1:\n----------\n\nDevice type:    ConnectX6DX\nDevice:         0000:3b:00.0\n\n"
            "Configurations:                              Default         Current         Next Boot\n"
            "         LINK_TYPE_P1                        ETH(2)          ETH(2)          ETH(2)\n"
            " RO     PCI_ATOMIC_MODE                      X(1)            X(1)            X(1)\n"
            "*RO     NUM_OF_VFS                           0               0               8\n")
    facts = parse_rdma(text, "mlxconfig")
    item = fw(facts, "0000:3b:00.0")
    assert facts["problems"] == [] and sorted(item["configs"]) == ["LINK_TYPE_P1", "NUM_OF_VFS", "PCI_ATOMIC_MODE"]
    assert [item["configs"][n]["read_only"] for n in ("LINK_TYPE_P1", "NUM_OF_VFS", "PCI_ATOMIC_MODE")] == [
        False, True, True]
    assert item["num_of_vfs"] == 8 and item["pending"] == ["NUM_OF_VFS"]


def test_mlxconfig_three_columns_and_pending():
    facts = parse("mlxconfig", "slingshot-cx5-three-columns-elided.txt")
    item = fw(facts, "/dev/mst/mt4119_pciconf0")
    assert item["configs"]["ADVANCED_PCI_SETTINGS"] == {"default": "False(0)", "current": "True(1)",
                                                        "next_boot": "True(1)", "read_only": False}
    assert item["pending"] == [] and facts["problems"] == []
    facts = parse("mlxconfig", "ibdiagnet-sriov-ib-routing-pending.txt")
    assert fw(facts, "device1")["pending"] == ["SRIOV_IB_ROUTING_MODE_P1"]


def test_mlxconfig_grep_with_header_after_the_row():
    item = fw(parse("mlxconfig", "dgx-cx7-grep-num-of-vfs-pending.txt"), "device1")
    assert (item["num_of_vfs"], item["current"]["num_of_vfs"], item["pending"]) == (8, 16, ["NUM_OF_VFS"])


def test_mlxconfig_grep_one_line():
    item = fw(parse("mlxconfig", "spiderpool-grep-link-type-ib.txt"), "device1")
    assert item["link_type_p1"] == "IB" and item["device_type"] is None


def test_mlxconfig_doca_e_q():
    item = fw(parse("mlxconfig", "synthetic-cx7-doca-e-q.txt"), "0000:3b:00.0")
    assert (item["link_type_p1"], item["sriov_en"], item["num_of_vfs"]) == ("ETH", True, 16)
    assert item["current"] == {"link_type_p1": "ETH", "link_type_p2": "IB", "sriov_en": True, "num_of_vfs": 8}
    assert item["pending"] == ["NUM_OF_VFS"]


def test_mlxconfig_error():
    facts = parse("mlxconfig", "synthetic-error-failed-to-open.txt")
    assert facts["available"] is False and facts["firmware"] == {}
    assert facts["problems"] == ["mlxconfig not available: -E- Failed to open device: 0000:3b:00.0. "
                                 "No such file or directory"]


# --- nvidia-smi topo -m -----------------------------------------------------------------------------


def test_topo_h100_8_gpus_8_nics_with_trailing_space():
    facts = parse("nvidia_smi_topo", "sglang-h100-8gpu-8nic-nv18.txt")
    topo = facts["topology"]
    assert facts["problems"] == [] and len(topo["gpus"]) == 8 and len(topo["nics"]) == 8
    assert topo["gpus"]["GPU4"] == {"cpu_affinity": "48-95,144-191", "numa_affinity": "1", "gpu_numa_id": None}
    assert topo["links"]["GPU0"]["GPU1"] == "NV18" and topo["links"]["NIC7"]["NIC7"] == "X"
    assert topo["gpu_nic"]["GPU5"]["mlx5_5"] == "PIX" and topo["gpu_nic"]["GPU5"]["mlx5_0"] == "SYS"
    assert topo["nics"]["NIC3"] == {"device": "mlx5_3"}


def test_topo_one_gpu_one_nic_in_a_vm():
    topo = parse("nvidia_smi_topo", "sglang-h100-pcie-kvm-1gpu-1nic.txt")["topology"]
    assert topo["gpu_nic"] == {"GPU0": {"mlx5_0": "PHB"}} and topo["gpus"]["GPU0"]["cpu_affinity"] == "0-251"


def test_topo_four_gpus_two_numa_nodes():
    topo = parse("nvidia_smi_topo", "coyote2-rtx6000ada-4gpu-4nic.txt")["topology"]
    assert topo["gpu_nic"]["GPU2"] == {"mlx5_0": "SYS", "mlx5_1": "SYS", "mlx5_2": "NODE", "mlx5_3": "NODE"}
    assert topo["gpus"]["GPU3"]["numa_affinity"] == "1" and topo["links"]["NIC0"]["NIC1"] == "PIX"


def test_topo_tabs_without_nics_and_without_legend():
    topo = parse("nvidia_smi_topo", "rtx5090-2gpu-no-nic-tabs.txt")["topology"]
    assert topo["nics"] == {} and topo["links"]["GPU1"] == {"GPU0": "PHB", "GPU1": "X"}
    assert topo["gpus"]["GPU1"] == {"cpu_affinity": "0-63", "numa_affinity": "0", "gpu_numa_id": None}
    facts = parse("nvidia_smi_topo", "gpuallocator-17-4090-tabs-no-legend.txt")
    topo = facts["topology"]
    assert topo["links"]["GPU6"]["NIC0"] == "PHB" and topo["nics"]["NIC1"] == {"device": None}
    assert topo["gpu_nic"] == {} and facts["problems"] == []


def test_topo_old_driver_names_nic_columns_by_device():
    topo = parse("nvidia_smi_topo", "synthetic-old-driver-mlx5-headers.txt")["topology"]
    assert topo["gpu_nic"] == {"GPU0": {"mlx5_0": "PXB", "mlx5_1": "SYS"}, "GPU1": {"mlx5_0": "SYS", "mlx5_1": "PXB"}}
    assert "gpu_numa_id" in topo["gpus"]["GPU1"] and topo["gpus"]["GPU1"]["numa_affinity"] == "1"


def test_topo_driver_error():
    facts = parse("nvidia_smi_topo", "synthetic-nvml-error.txt")
    assert facts["available"] is False and facts["problems"][0].startswith("nvidia_smi_topo not available: NVIDIA-SMI")


def test_topo_bad_code_is_a_problem():
    text = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tFOO\t0-7\t0\nGPU1\tPHB\t X \t0-7\t0\n"
    facts = parse_rdma(text, "nvidia_smi_topo")
    assert facts["problems"] == ["nvidia_smi_topo: GPU0/GPU1 relation 'FOO' is not a topology code"]
