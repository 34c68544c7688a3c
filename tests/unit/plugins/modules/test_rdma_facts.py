# -*- coding: utf-8 -*-
"""rdma_facts in-process on a sysfs tree in a temporary directory, with a stand-in `rdma` on PATH that prints
recorded real outputs (data/rdma, origins in their ORIGIN.md); the other tools are absent, as on a host
without them, and must be reported as not available, never fail the module."""

from __future__ import annotations

import json
import os

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.ainet.fabric.plugins.modules import rdma_facts

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "module_utils", "data", "rdma")
GID = "0000:0000:0000:0000:0000:ffff:ac11:0002"   # ::ffff:172.17.0.2


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


@pytest.fixture
def host(tmp_path, monkeypatch):
    root = tmp_path / "root"
    pci = root / "sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0"
    vf = root / "sys/devices/pci0000:00/0000:00:02.0/0000:01:10.0"
    write(str(pci / "numa_node"), "1\n")
    write(str(pci / "sriov_totalvfs"), "7\n")
    write(str(pci / "sriov_numvfs"), "1\n")
    os.makedirs(str(pci / "infiniband" / "rxe_0"))
    os.makedirs(str(vf / "net" / "p1p1v0"))
    os.symlink(str(vf), str(pci / "virtfn0"))
    os.makedirs(str(root / "sys/class/net/p1p1"))
    os.symlink(str(pci), str(root / "sys/class/net/p1p1/device"))
    ports = root / "sys/class/infiniband/rxe_0/ports/1"
    write(str(ports / "gids/0"), "fe80:0000:0000:0000:5054:00ff:fe12:3456\n")
    write(str(ports / "gid_attrs/types/0"), "IB/RoCE v1\n")
    write(str(ports / "gid_attrs/ndevs/0"), "p1p1\n")
    write(str(ports / "gids/1"), "fe80:0000:0000:0000:5054:00ff:fe12:3456\n")
    write(str(ports / "gid_attrs/types/1"), "RoCE v2\n")
    write(str(ports / "gid_attrs/ndevs/1"), "p1p1\n")
    write(str(ports / "gids/3"), GID + "\n")
    write(str(ports / "gid_attrs/types/3"), "RoCE v2\n")
    write(str(ports / "gid_attrs/ndevs/3"), "p1p1\n")
    write(str(ports / "gids/4"), "0000:0000:0000:0000:0000:0000:0000:0000\n")
    write(str(root / "sys/module/ib_core/parameters/netns_mode"), "N\n")
    bin_dir = tmp_path / "bin"
    link = os.path.join(DATA, "rdma_link", "3fs-263-soft-roce-rxe.txt")
    system = os.path.join(DATA, "rdma_system", "spiderpool-exclusive-indented.txt")
    write(str(bin_dir / "rdma"), "#!/bin/sh\ncase \"$1\" in link) /bin/cat '%s';; system) /bin/cat '%s';; esac\n" % (link, system))
    os.chmod(str(bin_dir / "rdma"), 0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    return root


def run(capsys, root, **args):
    with patch_module_args(dict({"sysfs_root": str(root)}, **args)):
        with pytest.raises(SystemExit):
            rdma_facts.main()
    return json.loads(capsys.readouterr().out)


def test_facts_from_the_tools_and_sysfs_map_the_rail_nic_to_its_device_and_gid(host, capsys):
    result = run(capsys, host, interfaces=["p1p1"], addresses={"p1p1": "172.17.0.2/31"})
    assert result["changed"] is False
    facts = result["facts"]
    assert facts["system"]["netns"] == "exclusive"
    assert facts["devices"]["rxe_0"]["ports"]["1"]["state"] == "ACTIVE"
    assert [(g["index"], g["type"], g["ipv4"]) for g in facts["devices"]["rxe_0"]["gids"]] == [
        (0, "RoCE v1", None), (1, "RoCE v2", None), (3, "RoCE v2", "172.17.0.2")]
    assert result["rails"] == [{"netdev": "p1p1", "rdma_device": "rxe_0", "port": 1, "gid_index": 3,
                                "address": "172.17.0.2/31", "problem": None}]
    nic = result["netdevs"]["p1p1"]
    assert nic["pci"] == "0000:01:00.0" and nic["numa_node"] == 1 and nic["rdma_devices"] == ["rxe_0"]
    assert nic["sriov"] == {"total_vfs": 7, "num_vfs": 1, "vfs": [{"index": 0, "pci": "0000:01:10.0",
                                                                   "netdev": "p1p1v0"}]}


def test_missing_tools_are_not_available_with_the_reason_and_never_fail(host, capsys):
    result = run(capsys, host, firmware=True, interfaces=["p1p1", "ens9"])
    sources = result["sources"]
    assert sources["rdma_link"]["available"] is True
    assert sources["lspci_vvv"] == {"available": False, "reason": "lspci is not installed"}
    assert sources["nvidia_smi_topo"]["available"] is False
    assert sources["mlxconfig"] == {"available": False, "reason": "neither mlxconfig nor mstconfig is installed"}
    assert result["netdevs"]["ens9"] is None
    assert result["rails"][1] == {"netdev": "ens9", "rdma_device": None, "port": None, "gid_index": None,
                                  "address": None, "problem": None}


def test_a_host_without_rdma_at_all(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    result = run(capsys, tmp_path, interfaces=["eth0"])
    assert result["facts"]["devices"] == {} and result["sources"]["gids"]["available"] is False
    assert result["rails"] == [{"netdev": "eth0", "rdma_device": None, "port": None, "gid_index": None, "address": None,
                                "problem": None}]


V6 = "2001:0db8:0017:0000:0000:0000:0000:0002"   # 2001:db8:17::2, as the kernel writes it in gids/<i>


def test_an_ipv6_rail_address_finds_its_own_roce_v2_gid(host, capsys):
    ports = host / "sys/class/infiniband/rxe_0/ports/1"
    for index, kind in ((5, "IB/RoCE v1"), (6, "RoCE v2")):
        write(str(ports / "gids" / str(index)), V6 + "\n")
        write(str(ports / "gid_attrs/types" / str(index)), kind + "\n")
        write(str(ports / "gid_attrs/ndevs" / str(index)), "p1p1\n")
    result = run(capsys, host, interfaces=["p1p1"], addresses={"p1p1": "2001:db8:17::2/64"})
    assert result["rails"][0]["gid_index"] == 6 and result["rails"][0]["address"] == "2001:db8:17::2/64"
    # one thing wrong: the address the NIC does not hold has no GID
    result = run(capsys, host, interfaces=["p1p1"], addresses={"p1p1": "2001:db8:17::3/64"})
    assert result["rails"][0]["gid_index"] is None
