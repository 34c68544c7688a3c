# -*- coding: utf-8 -*-
"""NCCL's GID choice on IPv6 and dual-stack rails, NCCL_IB_ADDR_RANGE, and GPUs far from every rail NIC
(workload/nccl), on recorded show_gids and nvidia-smi topo -m outputs (data/rdma, with their ORIGIN.md).

The oracle for "which GID does NCCL take" is ``nccl_pick`` below: NCCL's automatic GID choice as NVIDIA/nccl
src/transport/net_ib/connect.cc (commit 5067397, ``ncclIbGetGidIndex``/``ncclUpdateGidIndex``, NCCL >= 2.21)
describes it, re-expressed here over the parsed GID table - the code under test does not model NCCL, it only emits
the variables."""

from __future__ import annotations

import ipaddress
import os

from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_facts import merge
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse import parse_rdma
from ansible_collections.ainet.fabric.plugins.module_utils.workload import nccl

HERE = os.path.dirname(os.path.abspath(__file__))


def data(*parts):
    with open(os.path.join(HERE, "data", "rdma", *parts)) as handle:
        return handle.read()


def gids(name):
    return parse_rdma(data("show_gids", name), "show_gids")


def topo(name):
    return merge(parse_rdma(data("nvidia_smi_topo", name), "nvidia_smi_topo"))


# -- NCCL's choice, from connect.cc ------------------------------------------------------------------------------

def _family(gid):
    address = ipaddress.IPv6Address(gid)
    return 4 if address.ipv4_mapped or (int(address) >> 32) == 0xff0e0000_00000000_0000ffff else 6


def _valid(gid):
    """configured (not all zero, not bare fe80::) and not link-local (fe80:0000::/64)."""
    value = int(ipaddress.IPv6Address(gid))
    return value != 0 and (value >> 64) != 0xfe80_0000_0000_0000


def _in_range(gid, network):
    if network is None:
        return True
    address = ipaddress.IPv6Address(gid)
    if network.version == 4:
        return ipaddress.IPv4Address(int(address) & 0xffffffff) in network
    return address in network


def nccl_pick(facts, device, env):
    """The GID index NCCL takes on ``device`` (port 1) under ``env``: NCCL_IB_GID_INDEX when set; else start at 0
    and walk 1.. - a candidate of another family than the current one, of the wanted family and in range, wins
    outright; otherwise it must be of the wanted family, valid and in range, and wins when its RoCE version is the
    wanted one (2) and differs from the current's or the current is not valid."""
    if "NCCL_IB_GID_INDEX" in env:
        return int(env["NCCL_IB_GID_INDEX"])
    want = 6 if env.get("NCCL_IB_ADDR_FAMILY") == "AF_INET6" else 4
    network = ipaddress.ip_network(env["NCCL_IB_ADDR_RANGE"]) if "NCCL_IB_ADDR_RANGE" in env else None
    table = dict((g["index"], g) for g in facts["devices"][device]["gids"] if g.get("port", 1) == 1)
    version = dict((i, 2 if g["type"] == "RoCE v2" else 1) for i, g in table.items())
    current = 0
    for candidate in range(1, max(table) + 1):
        if candidate not in table:
            continue
        gid, cand = table[current]["gid"], table[candidate]["gid"]
        if _family(cand) != _family(gid) and _family(cand) == want and _in_range(cand, network):
            current = candidate
        elif _family(cand) == want and _valid(cand) and _in_range(cand, network):
            if (version[current] != version[candidate] or not _valid(gid)) and version[candidate] == 2:
                current = candidate
    return current


def one_rail_plan(supernet, rail_prefix, netdev, ip, host_offset=2):
    model = {"name": "v6", "rails": 1, "addressing": {"mode": "shared", "supernet": supernet,
                                                      "rail_prefix": rail_prefix, "host_offset": host_offset}}
    plan = rail_plan(model, {"h1": {"node_id": 1, "rail_interfaces": [netdev]}})
    plan["nodes"]["h1"]["rails"][0]["ip"] = ip  # the address the recorded host has
    return plan


# -- 1. the address family and range -----------------------------------------------------------------------------

def test_an_ipv6_rail_gets_af_inet6_and_nccl_then_takes_its_gid():
    """mooncake#1617's ionic NICs: link-local RoCE v2 at 0, the ULA rail address at 1 (RoCE v2)."""
    facts = gids("mooncake-1617-ionic-ipv6-spaces.txt")
    plan = one_rail_plan("fd93:16d3:59b6::/48", 64, "enp105s0", "fd93:16d3:59b6:10d:690:81ff:fe39:e3e8")
    found = nccl.nccl_settings(plan, "h1", facts, "eno1")
    assert found["problems"] == []
    env = found["env"]
    assert env["NCCL_IB_ADDR_FAMILY"] == "AF_INET6" and env["NCCL_IB_GID_INDEX"] == "1"
    # where no index is given (a pod's env), NCCL's own choice: the rail GID with AF_INET6, GID 0 without
    pod = dict((k, v) for k, v in env.items() if k != "NCCL_IB_GID_INDEX")
    assert nccl_pick(facts, "rocep105s0", pod) == 1
    pod.pop("NCCL_IB_ADDR_FAMILY")
    assert nccl_pick(facts, "rocep105s0", pod) == 0  # fe80:: - what the issue saw


def test_a_dual_stack_rail_gets_the_family_of_its_fabric():
    """Juniper JVD's gpu1_eth: IPv4 10.200.1.10 (RoCE v2 at 3) and global IPv6 (RoCE v2 at 5) on one NIC."""
    facts = gids("juniper-jvd-dual-stack-tabs.txt")
    v6 = nccl.nccl_settings(one_rail_plan("2010:200::/32", 64, "gpu1_eth", "2010:200:0:2:a288:c2ff:fe3b:506a"),
                            "h1", facts, "eno1")["env"]
    assert (v6["NCCL_IB_ADDR_FAMILY"], v6["NCCL_IB_GID_INDEX"]) == ("AF_INET6", "5")
    assert nccl_pick(facts, "mlx5_6", {"NCCL_IB_ADDR_FAMILY": "AF_INET6"}) == 5
    assert nccl_pick(facts, "mlx5_6", {}) == 3  # NCCL's default family on the same NIC: the IPv4 GID
    # control: an IPv4 fabric on the same NIC keeps NCCL's default AF_INET, which takes the IPv4 RoCE v2 GID
    v4 = nccl.nccl_settings(one_rail_plan("10.200.0.0/16", 24, "gpu1_eth", "10.200.1.10"), "h1", facts, "eno1")["env"]
    assert "NCCL_IB_ADDR_FAMILY" not in v4 and "NCCL_IB_ADDR_RANGE" not in v4 and v4["NCCL_IB_GID_INDEX"] == "3"


def two_device_plan():
    """sysfs-grep-synthetic: rxe0 (ens4) holds 10.10.1.2 at index 1, mlx5_0 (eth05) 10.110.0.33 at index 3."""
    model = {"name": "r", "rails": 2, "addressing": {"mode": "shared", "supernet": "10.0.0.0/8", "rail_prefix": 16}}
    plan = rail_plan(model, {"h1": {"node_id": 1, "rail_interfaces": ["ens4", "eth05"]}})
    plan["nodes"]["h1"]["rails"][0]["ip"] = "10.10.1.2"
    plan["nodes"]["h1"]["rails"][1]["ip"] = "10.110.0.33"
    return plan


def test_gid_indexes_that_differ_need_the_address_range():
    facts = parse_rdma(data("show_gids", "sysfs-grep-synthetic.txt"), "show_gids")
    by_index = nccl.nccl_settings(two_device_plan(), "h1", facts, "eno1")
    assert "NCCL_IB_GID_INDEX" not in by_index["env"]
    assert len(by_index["problems"]) == 1 and "different indexes (1: rails 1; 3: rails 2)" in by_index["problems"][0]
    assert "Fix: nccl_addr_range: true" in by_index["problems"][0]
    ranged = nccl.nccl_settings(two_device_plan(), "h1", facts, "eno1", addr_range=True)
    assert ranged["problems"] == []
    env = ranged["env"]
    assert "NCCL_IB_GID_INDEX" not in env  # it would override the range (connect.cc returns it first)
    assert (env["NCCL_IB_ADDR_FAMILY"], env["NCCL_IB_ADDR_RANGE"]) == ("AF_INET", "10.0.0.0/8")
    assert (nccl_pick(facts, "rxe0", env), nccl_pick(facts, "mlx5_0", env)) == (1, 3)


def test_the_range_keeps_nccl_off_another_address_of_the_family():
    """On the dual-stack NIC a range that does not hold the IPv6 GID leaves NCCL nothing better than GID 0: the range
    is the fabric's supernet, so it holds every rail address the plan gives."""
    facts = gids("juniper-jvd-dual-stack-tabs.txt")
    env = nccl.nccl_settings(one_rail_plan("2010:200::/32", 64, "gpu1_eth", "2010:200:0:2:a288:c2ff:fe3b:506a"),
                             "h1", facts, "eno1", addr_range=True)["env"]
    assert env["NCCL_IB_ADDR_RANGE"] == "2010:200::/32" and nccl_pick(facts, "mlx5_6", env) == 5
    assert nccl_pick(facts, "mlx5_6", dict(env, NCCL_IB_ADDR_RANGE="fd00::/8")) == 0


def test_infiniband_gets_no_gid_variables():
    def fabric(mode):
        model = {"name": "ib", "rails": 1, "addressing": {"mode": mode, "supernet": "fd00:64::/48", "rail_prefix": 64}}
        return rail_plan(model, {"h1": {"node_id": 1, "rail_interfaces": ["ib0"]}})["cluster"]["fabrics"]["default"]
    assert nccl.gid_selection_env(fabric("shared"), addr_range=True) == {
        "NCCL_IB_ADDR_FAMILY": "AF_INET6", "NCCL_IB_ADDR_RANGE": "fd00:64::/48"}
    assert nccl.gid_selection_env(fabric("infiniband"), addr_range=True) == {}


# -- 2. GPUs far from every rail NIC -----------------------------------------------------------------------------

def test_no_warning_when_every_gpu_has_a_rail_nic_on_its_switch():
    facts = topo("sglang-h100-8gpu-8nic-nv18.txt")
    rails = dict(("mlx5_%d" % i, ("ens%dnp0" % i, i + 1)) for i in range(8))
    assert nccl.far_gpus(nccl.gpu_nic_table(facts, rails)) == []


def test_a_gpu_whose_nearest_rail_nic_is_node_or_sys_away_is_named():
    facts = topo("sglang-h100-8gpu-8nic-nv18.txt")
    rails = dict(("mlx5_%d" % i, ("ens%dnp0" % i, i + 1)) for i in range(8))
    del rails["mlx5_0"]  # GPU0's own NIC is not a rail: its nearest is mlx5_1 on the NUMA node (NODE)
    warnings = nccl.far_gpus(nccl.gpu_nic_table(facts, rails))
    assert len(warnings) == 1 and warnings[0].startswith("GPU0: its nearest rail NIC mlx5_1 (ens1np0, rail 2) is NODE")
    assert "host bridges within a NUMA node" in warnings[0] and "Fix:" in warnings[0]
    # only the second socket's NICs as rails: GPU0-3 cross the SMP interconnect
    rails = dict(("mlx5_%d" % i, ("ens%dnp0" % i, i + 1)) for i in range(4, 8))
    warnings = nccl.far_gpus(nccl.gpu_nic_table(facts, rails))
    assert [w.split(":")[0] for w in warnings] == ["GPU0", "GPU1", "GPU2", "GPU3"]
    assert all(" is SYS away" in w and "QPI/UPI" in w for w in warnings)


def test_nccl_settings_warns_for_a_real_node_without_pcie_affinity():
    """coyote2 (RTX 6000 Ada): every GPU's NICs hang off another host bridge (NODE) or the other socket (SYS). Its
    topology is merged with three-devices-tabs (mlx5_0/1 on eth05/eth02) for the rail GIDs."""
    facts = merge(parse_rdma(data("show_gids", "three-devices-tabs.txt"), "show_gids"),
                  parse_rdma(data("nvidia_smi_topo", "coyote2-rtx6000ada-4gpu-4nic.txt"), "nvidia_smi_topo"))
    model = {"name": "c", "rails": 2, "addressing": {"mode": "shared", "supernet": "10.0.0.0/8", "rail_prefix": 16}}
    plan = rail_plan(model, {"h1": {"node_id": 1, "rail_interfaces": ["eth05", "eth02"]}})
    plan["nodes"]["h1"]["rails"][0]["ip"] = "10.110.0.33"
    plan["nodes"]["h1"]["rails"][1]["ip"] = "26.110.177.29"
    found = nccl.nccl_settings(plan, "h1", facts, "eno1")
    assert found["problems"] == [] and found["env"]["NCCL_IB_GID_INDEX"] == "3"
    assert [(w.split(":")[0], w.split(" is ")[1].split()[0]) for w in found["warnings"]] == [
        ("GPU0", "NODE"), ("GPU1", "NODE"), ("GPU2", "SYS"), ("GPU3", "SYS")]
