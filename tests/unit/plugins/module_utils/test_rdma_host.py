"""The host-RDMA part of the cluster model: CNI per fabric, SR-IOV VFs, the one RDMA netns mode every node
runs, PCIe ACS; every contradiction refused with one line naming the field."""

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError

ROCE = {"rails": 2, "addressing": {"mode": "p2p", "supernet": "172.17.0.0/16", "rail_prefix": 24}}
IB = {"rails": 2, "addressing": {"mode": "infiniband", "supernet": "10.20.0.0/16", "rail_prefix": 24}}


def two(compute, storage, **top):
    return load_cluster(dict({"name": "c", "fabrics": {"compute": dict(ROCE, **compute), "storage": dict(
        ROCE, addressing={"mode": "shared", "supernet": "172.18.0.0/16", "rail_prefix": 24},
        qos={"preset": "spiderpool"}, **storage)}}, **top))


def test_defaults_leave_the_netns_mode_alone_and_disable_acs_between_gpus_and_nics():
    cluster = load_cluster(dict(ROCE, name="c"))
    assert cluster.fabrics[0].cni == "host" and cluster.fabrics[0].sriov is None
    assert cluster.rdma_netns is None
    assert cluster.pcie_acs == {"disable": "gpu_nic", "bridges": []}
    assert cluster.to_dict()["fabrics"]["default"]["cni"] == "host"


def test_sriov_resolves_with_defaults_and_makes_the_mode_exclusive():
    cluster = two({"cni": "sriov", "sriov": {"vfs": 8}}, {"cni": "host"})
    want = {"vfs": 8, "trust": False, "spoof_check": True, "link_state": "auto", "firmware_vfs": 8}
    assert cluster.fabric("compute").sriov == want
    assert cluster.rdma_netns == "exclusive"


def test_macvlan_storage_makes_it_shared():
    assert two({}, {"cni": "macvlan"}).rdma_netns == "shared"


def test_sriov_compute_and_macvlan_storage_contradict_naming_both():
    with pytest.raises(FabricModelError) as err:
        two({"cni": "sriov", "sriov": {"vfs": 4}}, {"cni": "macvlan"})
    assert str(err.value) == (
        "fabric_cluster.fabrics.storage.cni: 'macvlan' needs RDMA netns mode shared, but "
        "fabric_cluster.fabrics.compute.cni (cni sriov, fabric compute) needs exclusive; the mode is one setting per "
        "node. Fix: use one kind of CNI on every fabric (sriov/host-device, or macvlan/ipvlan/ipoib)")


def test_an_explicit_mode_against_a_cni_is_refused():
    message = r"fabric_cluster\.rdma_netns: 'shared' contradicts fabric_cluster\.fabrics\.compute\.cni: cni sriov"
    with pytest.raises(FabricModelError, match=message):
        two({"cni": "sriov", "sriov": {"vfs": 4}}, {}, rdma_netns="shared")
    assert two({}, {}, rdma_netns="exclusive").rdma_netns == "exclusive"


@pytest.mark.parametrize("fabric,message", [
    ({"cni": "sriov"}, r"sriov\.vfs: None is missing"),
    ({"cni": "sriov", "sriov": {"vfs": 200}}, r"sriov\.vfs: 200 is above the maximum 127"),
    ({"cni": "sriov", "sriov": {"vfs": 8, "firmware_vfs": 4}}, r"sriov\.firmware_vfs: 4 is below sriov\.vfs 8"),
    ({"cni": "macvlan", "sriov": {"vfs": 8}}, r"fabric_cluster\.sriov: .* is set while the fabric's cni is macvlan"),
    ({"cni": "ipoib"}, r"fabric_cluster\.cni: 'ipoib' cannot attach pods to an Ethernet \(RoCE\) fabric"),
    ({"cni": "calico"}, r"fabric_cluster\.cni: 'calico' is not one of the choices"),
    ({"cni": "sriov", "sriov": {"vfs": 2, "link_state": "up"}}, r"sriov\.link_state: 'up' is not one of the choices"),
])
def test_bad_sriov_and_cni_input_is_refused_naming_the_field(fabric, message):
    with pytest.raises(FabricModelError, match=message):
        load_cluster(dict(ROCE, name="c", **fabric))


def test_macvlan_cannot_attach_to_infiniband_but_ipoib_can():
    with pytest.raises(FabricModelError, match=r"'macvlan' cannot attach pods to an InfiniBand fabric"):
        load_cluster(dict(IB, name="c", cni="macvlan"))
    assert load_cluster(dict(IB, name="c", cni="ipoib")).rdma_netns == "shared"


@pytest.mark.parametrize("acs,message", [
    ({"disable": "listed"}, r"pcie_acs\.bridges: .* is empty while disable is listed"),
    ({"disable": "listed", "bridges": ["3a:00"]}, r"pcie_acs\.bridges\[0\]: '3a:00' is not a PCI address"),
    ({"disable": "gpu_nic", "bridges": ["0000:3a:00.0"]}, r"pcie_acs\.bridges: .* is set while disable is gpu_nic"),
    ({"disable": "all"}, r"pcie_acs\.disable: 'all' is not one of the choices"),
])
def test_bad_acs_input_is_refused(acs, message):
    with pytest.raises(FabricModelError, match=message):
        load_cluster(dict(ROCE, name="c", pcie_acs=acs))


def test_listed_bridges_are_normalised_to_full_pci_addresses():
    cluster = load_cluster(dict(ROCE, name="c", pcie_acs={"disable": "listed", "bridges": ["3A:00.0", "0000:5d:02.0"]}))
    assert cluster.pcie_acs == {"disable": "listed", "bridges": ["0000:3a:00.0", "0000:5d:02.0"]}
