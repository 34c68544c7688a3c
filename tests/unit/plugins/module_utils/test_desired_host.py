# -*- coding: utf-8 -*-
"""desired/{sriov,rdma_netns,pcie_acs,roce_qos}: from the validated model (and a host's inventory inputs) to the
flat options the host modules receive. The modules' own tests (tests/unit/plugins/modules/) run the same
derivations through the action plugins; these pin the shapes, the defaults and the one-line refusals."""

from __future__ import annotations

import copy
import json

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.desired import pcie_acs, rdma_netns, roce_qos, sriov
from ansible_collections.ainet.fabric.plugins.module_utils.host import roce_qos_state, sriov_state
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster

ADDRESSING = {"mode": "shared", "supernet": "172.16.0.0/16", "rail_prefix": 24}
ONE = {"name": "t", "rails": 2, "mtu": 9000, "addressing": ADDRESSING}
NICS = ["ens1f0np0", "ens1f1np1"]


def cluster(**changes):
    raw = copy.deepcopy(ONE)
    raw.update(changes)
    return load_cluster(raw)


def two_fabrics(compute=None, storage=None, **top):
    raw = {"name": "t", "fabrics": {
        "compute": dict(rails=2, addressing=ADDRESSING, **(compute or {})),
        "storage": dict(dict(rails=1, addressing={"mode": "shared", "supernet": "172.18.0.0/16", "rail_prefix": 24},
                             qos={"preset": "none"}), **(storage or {}))}}
    raw.update(top)
    return load_cluster(raw)


TWO_NICS = {"compute": ["ens1f0np0", "ens1f1np1"], "storage": ["ens2f0np0"]}


# sriov


def test_sriov_pfs_carry_every_setting_the_fabric_and_where_they_come_from():
    got = sriov.options(cluster(cni="sriov", sriov={"vfs": 4, "trust": True}), NICS)
    assert got == {"pfs": [
        {"name": nic, "vfs": 4, "trust": True, "spoof_check": True, "link_state": "auto", "firmware_vfs": 4,
         "fabric": "default", "source": "fabric_cluster.sriov"} for nic in NICS]}
    json.dumps(got)  # what the action sends must be plain JSON


def test_sriov_only_the_nics_of_sriov_fabrics_and_overrides_validated():
    c = two_fabrics(compute={"cni": "sriov", "sriov": {"vfs": 8, "firmware_vfs": 16}}, storage={"cni": "host-device"})
    got = sriov.options(c, TWO_NICS, {"ens1f1np1": {"vfs": 2, "link_state": "enable"}})["pfs"]
    assert [p["name"] for p in got] == ["ens1f0np0", "ens1f1np1"]
    assert got[0]["source"] == "fabric_cluster.fabrics.compute.sriov" and got[0]["fabric"] == "compute"
    assert (got[1]["vfs"], got[1]["link_state"], got[1]["firmware_vfs"]) == (2, "enable", 16)
    assert got[1]["source"] == "sriov_overrides.ens1f1np1"
    with pytest.raises(FabricError, match=r"^sriov_overrides\.ens2f0np0: ens2f0np0 is a rail NIC of fabric storage, "
                                          r"whose cni is host-device"):
        sriov.options(c, TWO_NICS, {"ens2f0np0": {"vfs": 2}})
    with pytest.raises(FabricError, match=r"^sriov_overrides\.ens1f0np0\.vfs: 0 is out of range"):
        sriov.options(c, TWO_NICS, {"ens1f0np0": {"vfs": 0}})


def test_sriov_without_a_sriov_fabric_wants_no_pf_and_bad_interfaces_are_one_line():
    assert sriov.options(cluster(), NICS) == {"pfs": []}
    with pytest.raises(FabricError) as err:
        sriov.options(cluster(cni="sriov", sriov={"vfs": 2}), {"nope": NICS})
    assert str(err.value).startswith("fabric_rail_interfaces.nope") and "\n" not in str(err.value)


def test_sriov_the_host_accepts_what_the_controller_sends_and_refuses_a_bad_flat_entry():
    pfs = sriov.options(cluster(cni="sriov", sriov={"vfs": 4, "spoof_check": False}), NICS)["pfs"]
    wanted = sriov_state.check_wanted(pfs)
    assert wanted["ens1f0np0"] == dict((k, v) for k, v in pfs[0].items() if k != "name")
    # given directly, without the model: defaults, and the entry named in refusals
    assert sriov_state.check_wanted([{"name": "p", "vfs": 2}])["p"] == {
        "vfs": 2, "trust": False, "spoof_check": True, "link_state": "auto", "firmware_vfs": 2,
        "fabric": "default", "source": "pfs[0]"}
    with pytest.raises(FabricError, match=r"^pfs\[1\]\.vfs: 200 is out of range"):
        sriov_state.check_wanted([{"name": "p", "vfs": 2}, {"name": "q", "vfs": 200}])
    with pytest.raises(FabricError, match=r"^pfs\[0\]\.firmware_vfs: 2 is out of range \(use 4\.\.127"):
        sriov_state.check_wanted([{"name": "p", "vfs": 4, "firmware_vfs": 2}])
    with pytest.raises(FabricError, match=r"^pfs\[1\]: PF p is listed twice"):
        sriov_state.check_wanted([{"name": "p", "vfs": 2}, {"name": "p", "vfs": 3}])


# rdma_netns


@pytest.mark.parametrize("cni, mode", [("sriov", "exclusive"), ("host-device", "exclusive"), ("macvlan", "shared"),
                                       ("host", "none")])
def test_rdma_netns_mode_follows_the_cnis(cni, mode):
    extra = {"sriov": {"vfs": 2}} if cni == "sriov" else {}
    assert rdma_netns.options(cluster(cni=cni, **extra)) == {"mode": mode}


def test_rdma_netns_pinned_mode_and_a_contradiction_refused_when_the_model_loads():
    assert rdma_netns.options(two_fabrics(rdma_netns="shared")) == {"mode": "shared"}
    with pytest.raises(FabricError, match=r"fabric_cluster\.rdma_netns"):
        cluster(cni="sriov", sriov={"vfs": 2}, rdma_netns="shared")


# pcie_acs


def test_pcie_acs_gpu_nic_sends_every_rail_nic_of_every_fabric():
    assert pcie_acs.options(two_fabrics(), TWO_NICS) == {
        "disable": "gpu_nic", "nics": ["ens1f0np0", "ens1f1np1", "ens2f0np0"], "bridges": [],
        "source": "fabric_cluster.pcie_acs.bridges"}


def test_pcie_acs_listed_and_none_from_the_model():
    listed = cluster(pcie_acs={"disable": "listed", "bridges": ["3a:00.0", "0000:17:01.0"]})
    assert pcie_acs.options(listed, NICS) == {"disable": "listed", "nics": [],
                                              "bridges": ["0000:3a:00.0", "0000:17:01.0"],
                                              "source": "fabric_cluster.pcie_acs.bridges"}
    assert pcie_acs.options(cluster(pcie_acs={"disable": "none"}), NICS)["disable"] == "none"


def test_pcie_acs_host_list_replaces_the_model_and_is_checked_here():
    got = pcie_acs.options(cluster(pcie_acs={"disable": "none"}), NICS, ["00:03.0"])
    assert got == {"disable": "listed", "nics": [], "bridges": ["00:03.0"], "source": "pcie_acs_bridges"}
    assert pcie_acs.options(cluster(), NICS, "0000:00:03.0")["bridges"] == ["0000:00:03.0"]
    with pytest.raises(FabricError) as err:
        pcie_acs.options(cluster(), NICS, ["0000:00:03.0", "not-a-bdf"])
    assert str(err.value) == "pcie_acs_bridges[1] 'not-a-bdf' is not a PCI address (write it as 0000:3a:00.0)"


# roce_qos


NVIDIA_NIC = {"trust": "dscp", "pfc": [3], "dscp_to_priority": {"26": 3, "48": 6}, "ecn_rp": [3], "ecn_np": [3],
              "cnp_dscp": 48, "cnp_priority": 6, "roce_tos": 106,
              "ets": {"tsa": ["ets"] * 6 + ["strict", "ets"], "bw": [50, 0, 0, 50, 0, 0, 0, 0]}}


def test_roce_qos_every_nic_gets_its_fabric_profile_settings():
    got = roce_qos.options(cluster(), NICS)
    assert got == {"nics": [dict(NVIDIA_NIC, name=nic) for nic in NICS]}
    assert json.loads(json.dumps(got)) == got  # JSON-safe: string DSCP keys


def test_roce_qos_fabrics_without_a_lossless_class_are_left_out():
    c = two_fabrics(compute={"qos": {"preset": "spiderpool"}}, storage={"qos": {"preset": "none"}})
    got = roce_qos.options(c, TWO_NICS)["nics"]
    assert [n["name"] for n in got] == ["ens1f0np0", "ens1f1np1"]
    assert got[0]["dscp_to_priority"] == {"40": 5, "48": 6} and got[0]["pfc"] == [5] and got[0]["ets"] is None
    assert got[0]["roce_tos"] == 162
    assert roce_qos.options(cluster(qos={"preset": "none"}), NICS) == {"nics": []}


def test_roce_qos_ets_layout_without_weights_shares_the_rest_evenly():
    c = cluster(qos={"preset": "custom", "roce_dscp": 18, "roce_priority": 2, "cnp_dscp": 48, "cnp_priority": 6})
    ets = roce_qos.options(c, NICS)["nics"][0]["ets"]
    assert ets["tsa"][6] == "strict" and ets["bw"][6] == 0 and sum(ets["bw"]) == 100


def test_roce_qos_the_host_reads_the_settings_back_as_the_profile_wants_them():
    """What the host compares (roce_qos_state.wanted) is what the profile wants (desired.roce_qos.desired)."""
    profile = cluster().fabrics[0].qos
    settings = roce_qos_state.check_settings(roce_qos.options(cluster(), NICS)["nics"][0])
    assert roce_qos_state.wanted(settings) == roce_qos.desired(profile)


def test_roce_qos_the_host_refuses_a_bad_flat_entry_with_one_line():
    bad = dict(NVIDIA_NIC, name="eth0", pfc=[3, 9])
    with pytest.raises(FabricError, match=r"^nics\[eth0\]\.pfc: 9 is not an integer in 0\.\.7$"):
        roce_qos_state.check_settings(bad)
    with pytest.raises(FabricError, match=r"^nics\[eth0\]\.ets: .* is not 8 traffic classes"):
        roce_qos_state.check_settings(dict(NVIDIA_NIC, name="eth0", ets={"tsa": ["ets"], "bw": [100]}))
    with pytest.raises(FabricError, match=r"^nics\[eth0\]\.ets\.bw: .* does not give the ETS classes 100 %"):
        roce_qos_state.check_settings(dict(NVIDIA_NIC, name="eth0", ets={"tsa": ["ets"] * 8, "bw": [10] * 8}))
