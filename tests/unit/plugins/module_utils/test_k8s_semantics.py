# -*- coding: utf-8 -*-
"""What the rendered Kubernetes objects do in the programs that read them (workload/k8s_objects), each behaviour with
a control that is right and a case where one thing is wrong; the cluster models are made here. The programs' source
for each behaviour is named in docs/workloads.md ("What the objects do")."""

from __future__ import annotations

import json

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_objects

NICS = ["ens6f0np0", "ens6f1np1"]


def model(cni="sriov", mode="shared", family=4, name="Lab", **k8s):
    supernet, rail_prefix = ("172.17.0.0/16", 24) if family == 4 else ("fd00:17::/48", 64)
    addressing = {"mode": mode, "supernet": supernet, "rail_prefix": rail_prefix}
    if mode == "exclusive":
        addressing["node_prefix"] = 27 if family == 4 else 120
    out = {"name": name, "rails": 2, "addressing": addressing, "cni": cni}
    if cni == "sriov":
        out["sriov"] = {"vfs": 4}
    if k8s:
        out["kubernetes"] = k8s
    return out


def plan(raw, nodes=None):
    nodes = nodes or {"gpu01": NICS, "gpu02": NICS}
    return rail_plan(raw, dict((h, {"node_id": i + 1, "rail_interfaces": nics})
                               for i, (h, nics) in enumerate(sorted(nodes.items()))))


def kind(objects, name):
    return [o for o in objects if o["kind"] == name]


def refused(raw, nodes=None, **kwargs):
    with pytest.raises(FabricModelError) as info:
        k8s_objects.render(plan(raw, nodes), **kwargs)
    assert "\n" not in str(info.value)
    return info.value


# 1. host-local keeps its allocations per node ---------------------------------------------------------------------

def test_host_local_serves_one_node_and_is_refused_on_two():
    one = plan(model("macvlan", ipam="host-local"), {"gpu01": NICS})
    nad = kind(k8s_objects.render(one), "NetworkAttachmentDefinition")[0]
    assert json.loads(nad["spec"]["config"])["plugins"][0]["ipam"]["type"] == "host-local"
    error = refused(model("macvlan", ipam="host-local"))
    assert error.field == "fabric_cluster.kubernetes.ipam" and error.value == "host-local"
    assert "keeps its allocations on each node" in str(error) and "whereabouts or spiderpool" in str(error)
    # whereabouts (one store for the cluster) on the same two nodes is fine
    assert kind(k8s_objects.render(plan(model("macvlan", ipam="whereabouts"))), "NetworkAttachmentDefinition")


# 2. host-device + Spiderpool names its pools -----------------------------------------------------------------------

@pytest.mark.parametrize("mode,family", [("exclusive", 4), ("shared", 6)])
def test_host_device_names_its_spiderpool_pools(mode, family):
    objects = k8s_objects.render(plan(model("host-device", mode, family)))
    config = kind(objects, "SpiderMultusConfig")[0]
    ipam = json.loads(config["spec"]["customCNI"])["plugins"][0]["ipam"]
    pools = [p["metadata"]["name"] for p in kind(objects, "SpiderIPPool")
             if p["metadata"]["labels"]["ainet.fabric/rail"] == "1"]
    assert pools and ipam == {"type": "spiderpool", "default_ipv%d_ippool" % family: pools, "clean_gateway": True}
    other = "default_ipv%d_ippool" % (10 - family)
    assert other not in ipam


# 3. an Ethernet VF gets its MTU from tuning ------------------------------------------------------------------------

def test_a_vf_gets_its_mtu_from_a_tuning_plugin():
    raw = model("sriov", ipam="whereabouts")
    raw["mtu"] = 4200
    nad = kind(k8s_objects.render(plan(raw)), "NetworkAttachmentDefinition")[0]
    plugins = json.loads(nad["spec"]["config"])["plugins"]
    assert [p["type"] for p in plugins] == ["sriov", "tuning", "rdma"]
    assert plugins[1] == {"type": "tuning", "mtu": 4200} and "mtu" not in plugins[0]
    # macvlan sets the MTU itself: no tuning plugin there
    nad = kind(k8s_objects.render(plan(dict(raw, cni="macvlan", sriov=None))), "NetworkAttachmentDefinition")[0]
    assert [p["type"] for p in json.loads(nad["spec"]["config"])["plugins"]] == ["macvlan"]


# 4. InfiniBand SR-IOV is ib-sriov ----------------------------------------------------------------------------------

def test_infiniband_sriov_is_ib_sriov_and_ethernet_is_not():
    ib = k8s_objects.render(plan(model("sriov", "infiniband")))
    assert kind(ib, "SpiderMultusConfig")[0]["spec"]["cniType"] == "ib-sriov"
    assert kind(ib, "SpiderMultusConfig")[0]["spec"]["ibsriov"]["resourceName"] == "nvidia.com/rail1"
    ib_op = k8s_objects.render(plan(model("sriov", "infiniband", sriov_operator=True, ipam="whereabouts",
                                          pod_offset=200, pod_count=20)))
    assert [p["spec"]["linkType"] for p in kind(ib_op, "SriovNetworkNodePolicy")] == ["ib", "ib"]
    assert len(kind(ib_op, "SriovIBNetwork")) == 2 and not kind(ib_op, "SriovNetwork")
    nad = kind(k8s_objects.render(plan(model("sriov", "infiniband", ipam="whereabouts", pod_offset=200,
                                             pod_count=20))), "NetworkAttachmentDefinition")[0]
    assert [p["type"] for p in json.loads(nad["spec"]["config"])["plugins"]] == ["ib-sriov", "rdma"]
    # the control: Ethernet
    eth = k8s_objects.render(plan(model("sriov", "shared", sriov_operator=True, ipam="whereabouts")))
    assert all("linkType" not in p["spec"] for p in kind(eth, "SriovNetworkNodePolicy"))
    assert len(kind(eth, "SriovNetwork")) == 2 and not kind(eth, "SriovIBNetwork")
    assert kind(k8s_objects.render(plan(model("sriov", "shared"))), "SpiderMultusConfig")[0]["spec"]["cniType"] == "sriov"


# 5. PF selectors never cross rails ---------------------------------------------------------------------------------

SWAPPED = {"gpu01": NICS, "gpu02": list(reversed(NICS))}  # two node models, the PFs named in opposite order


def sriovdp(objects):
    return json.loads([o for o in objects if o["metadata"]["name"] == "sriovdp-config"][0]["data"]["config.json"])


def test_pf_names_that_cross_rails_are_refused_without_pci_addresses():
    # control: the same order on every node, one name per rail
    config = sriovdp(k8s_objects.render(plan(model("sriov"))))
    assert [r["selectors"]["pfNames"] for r in config["resourceList"]] == [[NICS[0]], [NICS[1]]]
    error = refused(model("sriov"), SWAPPED)
    assert error.field == "fabric_rail_interfaces" and error.value == NICS[1]
    assert "is rail 2's PF on gpu01 and rail 1's on gpu02" in str(error)


def test_pci_addresses_select_each_rails_pf():
    pci = {"gpu01": {NICS[0]: "0000:3b:00.0", NICS[1]: "0000:3b:00.1"},
           "gpu02": {NICS[1]: "0000:86:00.0", NICS[0]: "0000:86:00.1"}}
    config = sriovdp(k8s_objects.render(plan(model("sriov"), SWAPPED), pci=pci))
    assert [r["selectors"] for r in config["resourceList"]] == [
        {"vendors": ["15b3"], "rootDevices": ["0000:3b:00.0", "0000:86:00.0"], "isRdma": True},
        {"vendors": ["15b3"], "rootDevices": ["0000:3b:00.1", "0000:86:00.1"], "isRdma": True}]
    # PCI addresses that cross rails (the same slot is rail 1 on one model, rail 2 on the other) are no better
    crossed = {"gpu01": {NICS[0]: "0000:3b:00.0", NICS[1]: "0000:3b:00.1"},
               "gpu02": {NICS[1]: "0000:3b:00.1", NICS[0]: "0000:3b:00.0"}}
    with pytest.raises(FabricModelError) as info:
        k8s_objects.render(plan(model("sriov"), SWAPPED), pci=crossed)
    assert info.value.field == "k8s_objects_rail_pci" and info.value.value == "0000:3b:00.1"


def test_pci_addresses_come_from_gathered_facts_or_the_variable():
    p = plan(model("sriov"), SWAPPED)
    hostvars = {"gpu01": {"ansible_facts": {NICS[0]: {"pciid": "0000:3B:00.0"}, NICS[1]: {"pciid": "0000:3b:00.1"}}},
                "gpu02": {"ansible_facts": {NICS[0]: {"pciid": "86:00.1"}}}}
    got = k8s_objects.rail_pci(p, {"gpu02": {NICS[1]: "0000:86:00.0"}}, hostvars)
    assert got == {"gpu01": {NICS[0]: "0000:3b:00.0", NICS[1]: "0000:3b:00.1"},
                   "gpu02": {NICS[0]: "0000:86:00.1", NICS[1]: "0000:86:00.0"}}
    with pytest.raises(FabricModelError) as info:
        k8s_objects.rail_pci(p, {"gpu02": {NICS[1]: "slot 3"}}, {})
    assert info.value.field == "k8s_objects_rail_pci.gpu02.%s" % NICS[1]


def test_the_operator_gets_a_policy_per_node_where_names_cross():
    control = kind(k8s_objects.render(plan(model("sriov", sriov_operator=True))), "SriovNetworkNodePolicy")
    assert [p["spec"]["nicSelector"]["pfNames"] for p in control] == [[NICS[0]], [NICS[1]]]
    policies = kind(k8s_objects.render(plan(model("sriov", sriov_operator=True), SWAPPED)), "SriovNetworkNodePolicy")
    got = sorted((p["spec"]["resourceName"], p["spec"]["nodeSelector"]["kubernetes.io/hostname"],
                  p["spec"]["nicSelector"]["pfNames"][0]) for p in policies)
    assert got == [("rail1", "gpu01", NICS[0]), ("rail1", "gpu02", NICS[1]),
                   ("rail2", "gpu01", NICS[1]), ("rail2", "gpu02", NICS[0])]


# 6. names and scopes ----------------------------------------------------------------------------------------------

def two_fabrics(first="be-east", second="storage"):
    return {"name": "lab", "fabrics": {
        first: {"rails": 1, "cni": "sriov", "sriov": {"vfs": 2},
                "addressing": {"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24}},
        second: {"rails": 1, "cni": "sriov", "sriov": {"vfs": 2}, "qos": {"preset": "none"},
                 "addressing": {"mode": "shared", "supernet": "172.18.0.0/16", "rail_prefix": 24}}}}


def test_resource_names_are_what_the_device_plugins_take():
    nodes = {"gpu01": {"be-east": ["ens6f0np0"], "storage": ["ens7f0np0"]}}
    objects = k8s_objects.render(plan(two_fabrics(), nodes))
    assert [r["resourceName"] for r in sriovdp(objects)["resourceList"]] == ["be_east_rail1", "storage_rail1"]
    nodes = {"gpu01": {"a-b": ["ens6f0np0"], "a_b": ["ens7f0np0"]}}
    error = refused(two_fabrics("a-b", "a_b"), nodes)
    assert error.field == "fabric_cluster.fabrics" and "gives the resource name a_b_rail1" in str(error)


def test_each_kind_in_its_projects_namespace():
    objects = k8s_objects.render(plan(model("sriov", "exclusive", namespace="rdma", ipam="nv-ipam",
                                            sriov_operator=True)))
    spaces = dict((o["kind"], o["metadata"].get("namespace")) for o in objects)
    # the NCCL env is in the pods' own namespace (envFrom reads no other), not in the networks' one
    assert spaces == {"SriovNetworkNodePolicy": "nvidia-network-operator", "CIDRPool": "nvidia-network-operator",
                      "SriovNetwork": "nvidia-network-operator", "ConfigMap": "default"}
    assert kind(objects, "SriovNetwork")[0]["spec"]["networkNamespace"] == "rdma"
    training = k8s_objects.render(plan(model("macvlan", workload_namespace="llm-train")))
    assert [(o["kind"], o["metadata"]["namespace"]) for o in training if o["metadata"]["name"].endswith("nccl-env")] \
        == [("ConfigMap", "llm-train")]
    assert set(o["metadata"]["namespace"] for o in training if o["kind"] == "SpiderMultusConfig") == {"kube-system"}
    upstream = k8s_objects.render(plan(model("sriov", resource_prefix="openshift.io", sriov_operator=True)))
    assert kind(upstream, "SriovNetworkNodePolicy")[0]["metadata"]["namespace"] == "sriov-network-operator"
    assert kind(upstream, "SpiderMultusConfig")[0]["spec"]["sriov"]["resourceName"] == "openshift.io/rail1"
    plugins = k8s_objects.render(plan(model("macvlan", namespace="rdma")))
    assert [o["metadata"]["namespace"] for o in plugins if o["metadata"]["name"] == "rdma-devices"] == ["kube-system"]
    error = refused(model("sriov", resource_prefix="example.com", sriov_operator=True))
    assert error.field == "fabric_cluster.kubernetes.resource_prefix" and error.value == "example.com"
    assert "openshift.io upstream, nvidia.com in NVIDIA's network operator" in str(error)
    # without the operator the prefix is the device plugin's own: any is fine
    assert sriovdp(k8s_objects.render(plan(model("sriov", resource_prefix="example.com"))))


def test_a_cidr_pool_selects_its_nodes():
    p = plan(model("sriov", "exclusive", ipam="nv-ipam"), {"gpu01": NICS, "gpu02": NICS, "gpu03": NICS})
    pool = kind(k8s_objects.render(p), "CIDRPool")[0]
    assert pool["spec"]["nodeSelector"] == {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["gpu01", "gpu02", "gpu03"]}]}]}


def test_inventory_hosts_become_kubernetes_node_names():
    p = plan(model("sriov", "exclusive"), {"GPU01": NICS, "gpu02.lab.example": NICS})
    objects = k8s_objects.render(p, node_names={"gpu02.lab.example": "gpu02"})
    bound = sorted(v for pool in kind(objects, "SpiderIPPool")
                   for v in pool["spec"]["nodeAffinity"]["matchExpressions"][0]["values"])
    assert bound == ["gpu01", "gpu01", "gpu02", "gpu02"]
    assert k8s_objects.check_against_plan(p, objects, node_names={"gpu02.lab.example": "gpu02"}) == []
    assert any("is bound to ['gpu02']" in line for line in k8s_objects.check_against_plan(p, objects))
    with pytest.raises(FabricModelError) as info:
        k8s_objects.render(p, node_names={"gpu02.lab.example": "GPU_02"})
    assert info.value.field == "k8s_objects_node_names.gpu02.lab.example" and info.value.value == "GPU_02"


@pytest.mark.parametrize("family,want", [(4, None), (6, "AF_INET6")])
def test_the_pods_nccl_env_names_the_address_family_of_an_ipv6_fabric(family, want):
    # NCCL's GID choice defaults to AF_INET: on an IPv6 rail it keeps GID 0 (RoCE v1, link-local) unless told
    env = [o for o in k8s_objects.render(plan(model("sriov", "exclusive", family)))
           if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("nccl-env")]
    assert env and {o["data"].get("NCCL_IB_ADDR_FAMILY") for o in env} == {want}
