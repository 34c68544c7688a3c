# -*- coding: utf-8 -*-
"""pcie_acs_state on recorded real ``lspci -vvv`` outputs: the H100 + Broadcom PEX890xx switch + ConnectX-7 excerpt
(data/rdma/lspci_vvv, origins in its ORIGIN.md) and the VM tier's q35 root ports above igb NICs
(tests/vm/recorded, ACS off without an IOMMU, on with one)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.host import pcie_acs_state as plan
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.common.file_formats import unit_dump
from ansible_collections.ainet.fabric.plugins.module_utils.model.rdma_host import resolve_acs
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse_pci import parse_lspci_vvv

HERE = os.path.dirname(__file__)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
LSPCI = os.path.join(HERE, "data", "rdma", "lspci_vvv")
VM = os.path.join(ROOT, "tests", "vm", "recorded")
GPU_NIC = {"disable": "gpu_nic", "bridges": []}


def pci_of(path):
    with open(path) as handle:
        facts = parse_lspci_vvv(handle.read())
    assert facts["available"] and not facts["problems"], facts["problems"]
    return plan.normalize(facts["pci"])


@pytest.fixture(scope="module")
def h100():
    return pci_of(os.path.join(LSPCI, "gpud-h100-pex890xx-cx7-excerpt.txt"))


@pytest.fixture(scope="module")
def vm_off():
    return pci_of(os.path.join(VM, "lspci_vvv.txt"))


@pytest.fixture(scope="module")
def vm_on():
    return pci_of(os.path.join(VM, "lspci_vvv_iommu_on_with_vfs.txt"))


def test_addresses_without_a_domain_get_0000_and_so_do_their_chains(h100):
    assert "0000:19:00.0" in h100 and "19:00.0" not in h100
    assert h100["0000:19:00.0"]["upstream"] == ["0000:17:01.0", "0000:16:00.0", "0000:15:01.0"]
    assert h100["0000:19:00.0"]["parent"] == "0000:17:01.0"


def test_gpu_nic_selects_the_acs_bridges_above_the_gpu_and_the_rail_nics(h100):
    # 19:00.0 is the H100 (below switch port 17:01.0), 1a:00.0 the ConnectX-7 (below 17:02.0), 1b:00.0 a
    # ConnectX-6 Dx (below 17:03.0); the switch's upstream port 16:00.0 has no ACS capability.
    selected, messages = plan.select_bridges(h100, GPU_NIC, [("ens6f0np0", "0000:1a:00.0")])
    assert messages == []
    assert selected == [
        {"address": "0000:15:01.0", "reason": "above GPU 0000:19:00.0; above rail NIC ens6f0np0 (0000:1a:00.0)"},
        {"address": "0000:17:01.0", "reason": "above GPU 0000:19:00.0"},
        {"address": "0000:17:02.0", "reason": "above rail NIC ens6f0np0 (0000:1a:00.0)"},
    ]
    assert "0000:16:00.0" not in [s["address"] for s in selected]
    assert "0000:17:03.0" not in [s["address"] for s in selected], "not above a rail NIC nor a GPU"


def test_gpu_nic_takes_every_rail_nic_and_reports_one_without_a_pci_device(h100):
    selected, messages = plan.select_bridges(h100, GPU_NIC, [("ens6f0np0", "1a:00.0"), ("ens7f1np1", "0000:1b:00.1"),
                                                             ("veth1", None)])
    assert [s["address"] for s in selected] == ["0000:15:01.0", "0000:17:01.0", "0000:17:02.0", "0000:17:03.0"]
    assert selected[3]["reason"] == "above rail NIC ens7f1np1 (0000:1b:00.1)"
    assert messages == ["rail NIC veth1 has no PCI device (missing or virtual): no bridge above it is selected"]


def test_the_recorded_h100_bridges_are_already_off_so_nothing_to_run(h100):
    selected, _messages = plan.select_bridges(h100, GPU_NIC, [("ens6f0np0", "0000:1a:00.0")])
    assert plan.actions(h100, selected) == []
    assert plan.left_on(h100, [s["address"] for s in selected]) == {}


@pytest.mark.parametrize("name", ["lspci_vvv.txt", "lspci_vvv_iommu_on_with_vfs.txt", "lspci_vvv_with_vfs.txt"])
def test_gpu_nic_on_a_node_without_a_gpu_selects_nothing_and_says_why(name):
    pci = pci_of(os.path.join(VM, name))
    selected, messages = plan.select_bridges(pci, GPU_NIC, [("enp1s0", "0000:01:00.0")])
    assert selected == []
    assert messages == ["no GPU on this node (lspci shows no NVIDIA 3D/VGA controller): no bridge is selected"]


def test_listed_on_the_vm_root_ports_with_acs_on_gives_one_setpci_each(vm_on):
    acs = resolve_acs({"disable": "listed", "bridges": ["0000:00:03.0", "00:04.0"]}, "fabric_cluster.pcie_acs")
    selected, messages = plan.select_bridges(vm_on, acs, [("enp1s0", "0000:01:00.0")])
    assert messages == []
    assert selected == [{"address": "0000:00:03.0", "reason": "listed in fabric_cluster.pcie_acs.bridges"},
                        {"address": "0000:00:04.0", "reason": "listed in fabric_cluster.pcie_acs.bridges"}]
    assert plan.bits_on(vm_on["0000:00:03.0"]) == ["SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd"]
    actions = plan.actions(vm_on, selected, "/usr/bin/setpci")
    assert [plan.command_line(a["argv"]) for a in actions] == [
        "/usr/bin/setpci -s 0000:00:03.0 ECAP_ACS+0x6.w=0000", "/usr/bin/setpci -s 0000:00:04.0 ECAP_ACS+0x6.w=0000"]
    assert plan.left_on(vm_on, ["0000:00:03.0"]) == {"0000:00:03.0": ["SrcValid", "ReqRedir", "CmpltRedir",
                                                                      "UpstreamFwd"]}


def test_no_command_for_a_bridge_already_off(vm_off):
    acs = {"disable": "listed", "bridges": ["0000:00:03.0", "0000:00:04.0"]}
    selected, _messages = plan.select_bridges(vm_off, acs)
    assert len(selected) == 2 and plan.actions(vm_off, selected) == []


def test_only_the_bridges_with_bits_on_get_a_command():
    on = pci_of(os.path.join(VM, "lspci_vvv_rootport_acs_on.txt"))
    off = pci_of(os.path.join(VM, "lspci_vvv_rootport_acs_off.txt"))
    selected = [{"address": "0000:00:03.0", "reason": "x"}]
    assert [a["argv"] for a in plan.actions(on, selected)] == [["setpci", "-s", "0000:00:03.0", "ECAP_ACS+0x6.w=0000"]]
    assert plan.actions(off, selected) == []
    assert plan.ctl_text(on["0000:00:03.0"]) == \
        "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-"


def test_the_host_list_replaces_the_model_choice(vm_on):
    selected, _messages = plan.select_bridges(vm_on, {"disable": "none", "bridges": []}, override=["0000:00:04.0"])
    assert selected == [{"address": "0000:00:04.0", "reason": "listed in pcie_acs_bridges"}]
    selected, _messages = plan.select_bridges(vm_on, GPU_NIC, override=["00:03.0", "0000:00:03.0"])
    assert selected == [{"address": "0000:00:03.0", "reason": "listed in pcie_acs_bridges"}]


def test_none_selects_nothing(vm_on):
    selected, messages = plan.select_bridges(vm_on, {"disable": "none", "bridges": []})
    assert selected == [] and "disable is none" in messages[0]


@pytest.mark.parametrize("bridges, message", [
    (["0000:00:03.0", "0000:99:00.0"], "pcie_acs_bridges[1] '0000:99:00.0' is not a PCI device on this host"),
    (["0000:01:00.0"], "pcie_acs_bridges[0] '0000:01:00.0' is not a PCI bridge (lspci: Ethernet controller"),
    (["0000:00:00.0"], "pcie_acs_bridges[0] '0000:00:00.0' is not a PCI bridge (lspci: Host bridge"),
    (["0000:00:1f.0"], "pcie_acs_bridges[0] '0000:00:1f.0' is not a PCI bridge (lspci: ISA bridge"),
    (["bridge0"], "pcie_acs_bridges[0] 'bridge0' is not a PCI address"),
])
def test_host_list_refusals_name_the_field_and_the_value(vm_on, bridges, message):
    with pytest.raises(plan.AcsError) as err:
        plan.select_bridges(vm_on, GPU_NIC, override=bridges)
    assert str(err.value).startswith(message), str(err.value)
    assert "\n" not in str(err.value)
    assert isinstance(err.value, FabricError)


def test_a_bridge_without_acs_is_refused_in_the_model_list(h100):
    with pytest.raises(plan.AcsError) as err:
        plan.select_bridges(h100, {"disable": "listed", "bridges": ["0000:17:01.0", "0000:16:00.0"]})
    assert str(err.value).startswith("fabric_cluster.pcie_acs.bridges[1] '0000:16:00.0' has no ACS capability")


def test_a_short_acsctl_line_is_unknown_and_gets_the_command():
    pci = pci_of(os.path.join(VM, "lspci_vvv_rootport_acs_off.txt"))
    entry = pci["0000:00:03.0"]
    entry["acs"] = {"cap": entry["acs"]["cap"], "ctl": dict((k, v) for k, v in entry["acs"]["ctl"].items()
                                                            if k != "DirectTrans")}
    actions = plan.actions(pci, [{"address": "0000:00:03.0", "reason": "x"}])
    assert len(actions) == 1 and "unknown: DirectTrans" in actions[0]["what"]
    assert plan.left_on(pci, ["0000:00:03.0"]) == {"0000:00:03.0": ["DirectTrans?"]}


def test_the_boot_unit_runs_every_selected_bridge_early():
    text = unit_dump(plan.unit_sections(["0000:00:03.0", "0000:00:04.0"], "/usr/bin/setpci"), "header")
    assert "ExecStart=/usr/bin/setpci -s 0000:00:03.0 ECAP_ACS+0x6.w=0000\n" \
           "ExecStart=/usr/bin/setpci -s 0000:00:04.0 ECAP_ACS+0x6.w=0000\n" in text
    assert "DefaultDependencies=no\n" in text and "After=" not in text
    assert "Before=kubelet.service containerd.service crio.service docker.service nvidia-fabricmanager.service " \
           "nvidia-persistenced.service shutdown.target\n" in text
    assert "Type=oneshot\n" in text and "RemainAfterExit=yes\n" in text and "WantedBy=multi-user.target\n" in text
