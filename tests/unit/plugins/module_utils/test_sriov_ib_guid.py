# -*- coding: utf-8 -*-
"""InfiniBand SR-IOV VFs get a GUID (REVIEW-31 D1): the scheme (desired.sriov.vf_guid), the flat options the
controller sends, the host's reading of ``ip -j -d link show`` (samples written from iproute2's print_vfinfo, see
data/sriov_ib/ORIGIN.md), the actions for a new PF and for one VF whose GUID is wrong, and the boot unit."""

from __future__ import annotations

import copy
import itertools
import json
import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.common.file_formats import unit_dump
from ansible_collections.ainet.fabric.plugins.module_utils.desired import sriov as desired_sriov
from ansible_collections.ainet.fabric.plugins.module_utils.host import sriov_state as sp
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster

DATA = os.path.join(os.path.dirname(__file__), "data", "sriov_ib")
IB = {"name": "ibc", "rails": 2, "addressing": {"mode": "infiniband", "supernet": "172.20.0.0/16", "rail_prefix": 24},
      "cni": "sriov", "sriov": {"vfs": 4}}
ETH = {"name": "ibc", "rails": 2, "mtu": 9000,
       "addressing": {"mode": "shared", "supernet": "172.16.0.0/16", "rail_prefix": 24},
       "cni": "sriov", "sriov": {"vfs": 4, "trust": True}}
NICS = ["ibp24s0", "ibp41s0"]
NEW = "00:00:00:00:00:00:00:00"


def sample(name):
    with open(os.path.join(DATA, name)) as handle:
        return json.load(handle)


def options(raw=None, node_id=3, overrides=None, interfaces=None):
    return desired_sriov.options(load_cluster(copy.deepcopy(raw or IB)), interfaces or NICS, overrides, node_id)


def fields(guid):
    octets = [int(o, 16) for o in guid.split(":")]
    return {"first": octets[0], "tag": octets[1] << 8 | octets[2],
            "node": octets[3] << 16 | octets[4] << 8 | octets[5], "rail": octets[6], "vf": octets[7]}


def pf_state(link, num=4):
    """The module's pf_state of the sample's PF (what Pfs.states builds), its VFs bound to mlx5_core."""
    entry = link[0]
    return {"name": entry["ifname"], "exists": True, "pci": entry["parentdev"], "driver": "mlx5_core", "mac": None,
            "total_vfs": 8, "num_vfs": num, "firmware": None, "vfinfo": sp.vfinfo(entry),
            "vfs": [{"index": i, "pci": "0000:18:00.%d" % (i + 1), "driver": "mlx5_core", "netdev": "ibp24s0v%d" % i,
                     "in_use": None} for i in range(num)]}


# -- the scheme -----------------------------------------------------------------------------------------------------

def test_the_guid_holds_tag_node_rail_and_vf_in_a_local_individual_aai_eui64():
    guid = desired_sriov.vf_guid("ibc", "default", 70000, 3, 5)
    got = fields(guid)
    assert got == {"first": 0x02, "tag": desired_sriov.fabric_tag("ibc", "default"), "node": 70000, "rail": 3, "vf": 5}
    # U/L set (locally administered), I/G clear (individual), SLAP quadrant AAI (Y=Z=0): no OUI (U/L clear) and
    # no CID (quadrant SAI, second nibble a) can be equal to it
    assert got["first"] & 0x02 and not got["first"] & 0x01 and got["first"] & 0x0c == 0
    assert sp.GUID_RE.match(guid)
    # stable across runs and releases: the value for this input is recorded (a change of the scheme renames every
    # VF on every node of every InfiniBand cluster, so it must show up here)
    assert desired_sriov.vf_guid("ibc", "default", 3, 1, 0) == "02:25:26:00:00:03:01:00"


def test_guids_are_distinct_across_nodes_rails_vfs_fabrics_and_clusters():
    grid = list(itertools.product(("prod-a", "prod-b"), ("default", "compute"), (1, 2, 255, 256, 65536),
                                  (1, 2, 64), (0, 1, 126)))
    guids = [desired_sriov.vf_guid(*key) for key in grid]
    assert len(set(guids)) == len(grid)
    # the one stage wrong: without the node id in it, two nodes' VF 0 on rail 1 would share a GUID
    assert len(set(g[:9] + g[17:] for g in guids)) < len(grid)


def test_an_ib_sriov_fabric_sends_one_guid_per_vf_and_ethernet_none():
    pfs = options()["pfs"]
    assert [p["link_layer"] for p in pfs] == ["infiniband", "infiniband"]
    assert pfs[0]["vf_guids"] == [desired_sriov.vf_guid("ibc", "default", 3, 1, i) for i in range(4)]
    assert pfs[1]["vf_guids"] == [desired_sriov.vf_guid("ibc", "default", 3, 2, i) for i in range(4)]
    # the rail is the NIC's position in the node's list, not its name: a node whose NICs are named otherwise
    other = options(interfaces=["mlx0", "mlx1"], node_id=4)["pfs"]
    assert [fields(g)["rail"] for g in other[0]["vf_guids"]] == [1] * 4 and fields(other[0]["vf_guids"][0])["node"] == 4
    # an override of the VF count changes the number of GUIDs, not the GUIDs of the VFs kept
    fewer = options(overrides={"ibp41s0": {"vfs": 2}})["pfs"][1]
    assert fewer["vf_guids"] == pfs[1]["vf_guids"][:2]
    # Ethernet: the flat options carry no link layer and no GUID, and need no node id
    eth = desired_sriov.options(load_cluster(copy.deepcopy(ETH)), ["ens1f0np0", "ens1f1np1"])["pfs"]
    assert all("vf_guids" not in p and "link_layer" not in p for p in eth)


def test_ib_without_a_node_id_or_with_one_out_of_range_is_one_line():
    with pytest.raises(FabricError, match=r"^fabric_node_id: is missing; the GUIDs of the InfiniBand VFs of fabric "
                                          r"default are derived from it \(fix: set fabric_node_id"):
        options(node_id=None)
    with pytest.raises(FabricError, match=r"^fabric_node_id: 0 .*"):
        options(node_id=0)
    big = copy.deepcopy(IB)
    big["addressing"] = {"mode": "infiniband", "supernet": "fd00:20::/48", "rail_prefix": 64}
    with pytest.raises(FabricError, match=r"^fabric_node_id: 16777216 is above 16777215"):
        options(big, node_id=1 << 24)
    assert fields(options(big, node_id=(1 << 24) - 1)["pfs"][0]["vf_guids"][0])["node"] == (1 << 24) - 1


# -- the host: what ip -j -d link show says ----------------------------------------------------------------------------

def test_vfinfo_reads_node_and_port_guid_of_the_real_layout():
    new = sp.vfinfo(sample("ip_j_d_link_ib_pf_new_vfs.json")[0])
    assert sorted(new) == [0, 1, 2, 3]
    assert new[0] == {"mac": "00:00:10:29:fe:80:00:00:00:00:00:00:b8:59:9f:03:00:c1:2a:3e", "trust": False,
                      "spoof_check": False, "link_state": "auto", "node_guid": NEW, "port_guid": NEW}
    # an Ethernet PF (the VM tier's igb recording) reports no GUID at all
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "vm", "recorded",
                           "ip_j_d_link_pf_with_vfs.txt")) as handle:
        eth = sp.vfinfo(json.load(handle)[0])
    assert eth[0]["node_guid"] is None and eth[0]["port_guid"] is None and eth[0]["trust"] is True


def wanted(pf_name="ibp24s0", node_id=3):
    pfs = options(node_id=node_id)["pfs"]
    return sp.check_wanted(pfs)[pf_name]


def test_new_ib_vfs_get_guid_and_link_state_only_then_a_rebind():
    pf = pf_state(sample("ip_j_d_link_ib_pf_new_vfs.json"), num=0)
    lines = [sp.command_line(a) for a in sp.pf_actions(pf, wanted(), "derived")]
    assert lines[0] == "echo 4 > /sys/class/net/ibp24s0/device/sriov_numvfs"
    assert lines[1] == "ip link set dev ibp24s0 vf 0 node_guid 02:25:26:00:00:03:01:00 port_guid 02:25:26:00:00:03:01:00"
    assert lines[2] == ("vf=$(basename $(readlink -f /sys/class/net/ibp24s0/device/virtfn0)); if [ -e "
                        "/sys/bus/pci/devices/$vf/driver ]; then echo $vf > /sys/bus/pci/devices/$vf/driver/unbind; fi; "
                        "echo $vf > /sys/bus/pci/drivers_probe")
    assert len(lines) == 1 + 2 * 4
    # no VF MAC, trust or spoof check on an IPoIB PF (its driver has no ndo_set_vf_mac/trust/spoofchk)
    assert not any(word in line.split() for line in lines for word in ("mac", "trust", "spoofchk"))


def test_vfs_with_zero_guids_get_theirs_and_a_pf_as_wanted_gets_nothing():
    pf = pf_state(sample("ip_j_d_link_ib_pf_new_vfs.json"))
    actions = sp.pf_actions(pf, wanted(), "derived")
    assert [a["what"] for a in actions if "rebind" in a] == [
        "rebind VF %d of ibp24s0 so that its driver takes the new GUID" % i for i in range(4)]
    done = copy.deepcopy(pf)
    for index in range(4):
        guid = wanted()["vf_guids"][index]
        done["vfinfo"][index].update(node_guid=guid, port_guid=guid)
    assert sp.pf_actions(done, wanted(), "derived") == []


def test_exactly_one_vf_with_a_wrong_guid_is_the_only_one_changed():
    pf = pf_state(sample("ip_j_d_link_ib_pf_one_vf_guid_wrong.json"))
    assert pf["vfinfo"][2]["node_guid"] == "5a:3e:01:9c:00:12:7f:01"
    actions = sp.pf_actions(pf, wanted(), "derived")
    assert [sp.command_line(a) for a in actions] == [
        "ip link set dev ibp24s0 vf 2 node_guid 02:25:26:00:00:03:01:02 port_guid 02:25:26:00:00:03:01:02",
        sp.rebind_script("ibp24s0", 2)]
    assert actions[1]["rebind"] == {"pf": "ibp24s0", "index": 2}
    # a port GUID alone differing is a difference too; an upper-case report of the same GUID is not
    pf["vfinfo"][2].update(node_guid="02:25:26:00:00:03:01:02", port_guid="02:25:26:00:00:03:01:03")
    assert len(sp.pf_actions(pf, wanted(), "derived")) == 2
    link = sample("ip_j_d_link_ib_pf_one_vf_guid_wrong.json")
    link[0]["vfinfo_list"][2].update({"node guid": "02:25:26:00:00:03:01:02".upper(),
                                      "port guid": "02:25:26:00:00:03:01:02".upper()})
    assert sp.pf_actions(pf_state(link), wanted(), "derived") == []
    # the same VF in a pod keeps the GUID it has (ib-sriov-cni may have set one): no change, no rebind
    busy = pf_state(sample("ip_j_d_link_ib_pf_one_vf_guid_wrong.json"))
    busy["vfs"][2]["in_use"] = "its netdev is in another network namespace (a pod?)"
    assert sp.pf_actions(busy, wanted(), "derived") == []


def test_the_host_refuses_bad_flat_ib_entries_with_one_line():
    entry = dict(options()["pfs"][0])
    for change, message in (
            ({"vf_guids": None}, r"^pfs\[0\]\.vf_guids: None is not a list of 4 GUIDs, one per VF"),
            ({"vf_guids": entry["vf_guids"][:3]}, r"^pfs\[0\]\.vf_guids: .* is not a list of 4 GUIDs"),
            ({"vf_guids": entry["vf_guids"][:3] + [NEW]}, r"^pfs\[0\]\.vf_guids\[3\]: .* not a usable GUID"),
            ({"vf_guids": entry["vf_guids"][:3] + ["ff:ff:ff:ff:ff:ff:ff:ff"]}, r"^pfs\[0\]\.vf_guids\[3\]: "),
            ({"vf_guids": entry["vf_guids"][:3] + ["02:25:26:00:00:03:01"]}, r"^pfs\[0\]\.vf_guids\[3\]: "),
            ({"vf_guids": entry["vf_guids"][:3] + [entry["vf_guids"][0]]}, r"^pfs\[0\]\.vf_guids\[3\]: .* also VF 0"),
            ({"link_layer": "ethernet"}, r"^pfs\[0\]\.vf_guids: is set on an Ethernet PF"),
            ({"link_layer": "token-ring"}, r"^pfs\[0\]\.link_layer: 'token-ring' is not one of")):
        with pytest.raises(FabricError, match=message) as info:
            sp.check_wanted([dict(entry, **change)])
        assert "\n" not in str(info.value)
    # two PFs of the host with one GUID between them
    other = dict(options()["pfs"][1], vf_guids=entry["vf_guids"])
    with pytest.raises(FabricError, match=r"^pfs\[1\]\.vf_guids\[0\]: .* also the GUID of VF 0 of ibp24s0"):
        sp.check_wanted([entry, other])


def test_the_boot_unit_sets_every_guid_then_rebinds_with_systemd_escaped_dollars():
    pf = pf_state(sample("ip_j_d_link_ib_pf_new_vfs.json"))
    text = unit_dump(sp.unit_sections([(pf, wanted(), "derived")]))
    starts = [line for line in text.splitlines() if line.startswith("ExecStart=")]
    assert starts[0] == 'ExecStart=/bin/sh -c "echo 4 > /sys/class/net/ibp24s0/device/sriov_numvfs"'
    assert starts[1] == ("ExecStart=/sbin/ip link set dev ibp24s0 vf 0 node_guid 02:25:26:00:00:03:01:00 "
                         "port_guid 02:25:26:00:00:03:01:00")
    assert starts[2] == 'ExecStart=/bin/sh -c "%s"' % sp.rebind_script("ibp24s0", 0).replace("$", "$$")
    assert len(starts) == 1 + 2 * 4 and "$vf" not in text.replace("$$vf", "")
    assert not any(" mac " in line or "trust" in line for line in starts)


def two_ib_fabrics(first, second):
    ib = {"rails": 1, "cni": "sriov", "sriov": {"vfs": 2}}
    return load_cluster({"name": "ibc", "fabrics": {
        first: dict(ib, addressing={"mode": "infiniband", "supernet": "172.20.0.0/16", "rail_prefix": 24}),
        second: dict(ib, addressing={"mode": "infiniband", "supernet": "172.21.0.0/16", "rail_prefix": 24})}})


def test_two_ib_fabrics_of_one_cluster_get_distinct_tags_or_a_refusal():
    nics = {"compute": ["ibp24s0"], "storage": ["ibp41s0"]}
    pfs = desired_sriov.options(two_ib_fabrics("compute", "storage"), nics, None, 7)["pfs"]
    assert fields(pfs[0]["vf_guids"][0])["tag"] != fields(pfs[1]["vf_guids"][0])["tag"]
    assert [fields(p["vf_guids"][1]) for p in pfs] == [
        {"first": 2, "tag": desired_sriov.fabric_tag("ibc", f), "node": 7, "rail": 1, "vf": 1}
        for f in ("compute", "storage")]
    # the one stage wrong: two fabric names whose 16-bit tags collide (found by search) would share every GUID
    seen, pair = {}, None
    for number in range(100000):
        name = "f%d" % number
        tag = desired_sriov.fabric_tag("ibc", name)
        if tag in seen:
            pair = (seen[tag], name)
            break
        seen[tag] = name
    with pytest.raises(FabricError, match=r"the VF GUID tag of InfiniBand fabric .* equals fabric .*'s in cluster ibc "
                                          r"\(fix: rename one of the two fabrics\)"):
        desired_sriov.options(two_ib_fabrics(*pair), {pair[0]: ["ibp24s0"], pair[1]: ["ibp41s0"]}, None, 7)
