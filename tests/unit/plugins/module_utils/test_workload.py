# -*- coding: utf-8 -*-
"""The fabrics' Kubernetes objects (workload/k8s_objects): every CNI and IPAM the model allows rendered from a real
plan, checked against the plan by check_against_plan and - for what the plan says - here with ipaddress; the checker
fed objects broken on purpose; the CRD check (workload/k8s_validate) against the CRDs of ../shared/validators/k8s
(AINET_K8S_CRD_DIR), strict about unknown keys; NCCL settings (workload/nccl) from recorded show_gids and
nvidia-smi topo -m outputs (data/rdma, with their ORIGIN.md)."""

from __future__ import annotations

import copy
import ipaddress
import json
import os
import re

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError, FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_facts import merge
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse import parse_rdma
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_objects, k8s_validate, nccl

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
CRDS = os.environ.get("AINET_K8S_CRD_DIR") or os.path.join(os.path.dirname(ROOT), "shared", "validators", "k8s")
NICS = ("ens6f0np0", "ens6f1np1")


def data(*parts):
    with open(os.path.join(HERE, "data", *parts)) as handle:
        return handle.read()


def cluster(cni="sriov", mode="exclusive", family=4, **k8s):
    supernet, rail_prefix, node_prefix = ("172.17.0.0/16", 24, 27) if family == 4 else ("fd00:17::/48", 64, 120)
    addressing = {"mode": mode, "supernet": supernet, "rail_prefix": rail_prefix}
    if mode == "exclusive":
        addressing["node_prefix"] = node_prefix
    out = {"name": "Prop_1", "rails": 2, "addressing": addressing, "cni": cni}
    if mode == "infiniband":
        out.pop("cni")
        out["cni"] = cni
    if cni == "sriov":
        out["sriov"] = {"vfs": 4}
    if k8s:
        out["kubernetes"] = k8s
    return out


def plan_of(model, nodes=3, nics=NICS):
    return rail_plan(model, dict(("gpu%02d" % n, {"node_id": n, "rail_interfaces": list(nics)}) for n in range(1, nodes + 1)))


CASES = [
    ("sriov", "exclusive", 4, {}),
    ("sriov", "exclusive", 6, {}),
    ("sriov", "exclusive", 4, {"sriov_operator": True, "namespace": "sriov-network-operator"}),
    ("macvlan", "exclusive", 4, {}),
    ("ipvlan", "shared", 4, {"pod_offset": 128, "pod_count": 64}),
    ("macvlan", "shared", 6, {"ipam": "whereabouts"}),
    ("macvlan", "shared", 4, {"ipam": "host-local"}),
    ("host-device", "exclusive", 4, {}),
    ("ipoib", "infiniband", 4, {}),
    ("ipoib", "infiniband", 4, {"ipam": "whereabouts", "pod_offset": 200, "pod_count": 20}),
    ("sriov", "p2p", 4, {"ipam": "none"}),
    ("sriov", "exclusive", 4, {"ipam": "nv-ipam", "sriov_operator": True, "namespace": "nvidia-network-operator"}),
    ("macvlan", "exclusive", 6, {"ipam": "nv-ipam"}),
    ("sriov", "infiniband", 4, {}),
    ("sriov", "infiniband", 4, {"sriov_operator": True, "ipam": "whereabouts", "pod_offset": 200, "pod_count": 20}),
    ("sriov", "shared", 4, {"sriov_operator": True, "resource_prefix": "openshift.io", "ipam": "whereabouts"}),
]


def nodes_of(k8s):
    """host-local keeps its allocations per node: one node is all it can serve."""
    return 1 if k8s.get("ipam") == "host-local" else 3


@pytest.mark.parametrize("cni,mode,family,k8s", CASES, ids=["-".join(str(x) for x in c[:3]) + str(c[3]) for c in CASES])
def test_every_cni_and_ipam_agrees_with_the_plan(cni, mode, family, k8s):
    plan = plan_of(cluster(cni, mode, family, **k8s), nodes=nodes_of(k8s))
    objects = k8s_objects.render(plan)
    assert k8s_objects.check_against_plan(plan, objects) == []
    kinds = [o["kind"] for o in objects]
    assert kinds == sorted(kinds, key=lambda k: k8s_objects.KIND_ORDER[k])  # apply order
    # what the plan says, checked here with ipaddress
    for pool in [o for o in objects if o["kind"] == "SpiderIPPool"]:
        labels = pool["metadata"]["labels"]
        rail = int(labels["ainet.fabric/rail"])
        if "ainet.fabric/node" in labels:
            entry = plan["nodes"][labels["ainet.fabric/node"]]["rails"][rail - 1]
            subnet = ipaddress.ip_network(entry["subnet"])
            assert pool["spec"]["gateway"] == entry["gateway"]
            hosts = [ipaddress.ip_address(entry["ip"])]
        else:
            subnet = ipaddress.ip_network(plan["rails"][rail - 1]["block"])
            hosts = [ipaddress.ip_address(n["rails"][rail - 1]["ip"]) for n in plan["nodes"].values()]
        assert pool["spec"]["subnet"] == str(subnet)
        for text in pool["spec"]["ips"]:
            first, last = (ipaddress.ip_address(x) for x in text.split("-"))
            assert first in subnet and last in subnet and first <= last
            assert not any(first <= h <= last for h in hosts)
    nccl_env = [o for o in objects if o["metadata"]["name"] == "prop-1-nccl-env"][0]["data"]
    assert nccl_env["NCCL_CROSS_NIC"] == "0" and nccl_env["NCCL_SOCKET_IFNAME"] == "=eth0"
    if mode == "infiniband":
        assert "NCCL_IB_TC" not in nccl_env
    else:  # the nvidia preset: DSCP 26 -> ToS 106, priority 3
        assert (nccl_env["NCCL_IB_TC"], nccl_env["NCCL_IB_SL"]) == ("106", "3")
    if cni in ("macvlan", "ipvlan", "ipoib"):
        config = json.loads([o for o in objects if o["kind"] == "ConfigMap"
                             and "config.json" in o["data"]][0]["data"]["config.json"])
        assert [c["selectors"]["ifNames"] for c in config["configList"]] == [[NICS[0]], [NICS[1]]]


@pytest.mark.skipif(not os.path.isdir(CRDS), reason="no CRDs: set AINET_K8S_CRD_DIR to a directory of Spiderpool's and "
                    "the SR-IOV operator's CRDs (../shared/validators/k8s in CI)")
@pytest.mark.parametrize("cni,mode,family,k8s", CASES, ids=["-".join(str(x) for x in c[:3]) + str(c[3]) for c in CASES])
def test_every_object_passes_its_crd(cni, mode, family, k8s):
    pytest.importorskip("openapi_schema_validator")
    schemas = k8s_validate.load_crds(CRDS)
    objects = k8s_objects.render(plan_of(cluster(cni, mode, family, **k8s), nodes=nodes_of(k8s)))
    violations, unchecked = k8s_validate.validate(objects, schemas)
    # nv-ipam's CIDRPool is checked where the directory has nv-ipam's CRDs (../shared/validators/k8s/crds-nvipam),
    # and named as unchecked where it has not; every other kind always has its CRD there.
    nvipam_crd = any(kind == "CIDRPool" for _version, kind in schemas)
    assert violations == [] and unchecked == (["CIDRPool"] if k8s.get("ipam") == "nv-ipam" and not nvipam_crd else [])
    if k8s.get("ipam") == "nv-ipam" and os.path.isdir(os.path.join(CRDS, "crds-nvipam")):
        assert nvipam_crd and any(o["kind"] == "CIDRPool" for o in objects)


@pytest.mark.skipif(not os.path.isdir(CRDS), reason="no CRDs: set AINET_K8S_CRD_DIR (../shared/validators/k8s in CI)")
def test_the_crd_check_is_strict():
    pytest.importorskip("openapi_schema_validator")
    schemas = k8s_validate.load_crds(CRDS)
    objects = k8s_objects.render(plan_of(cluster("macvlan", "shared")))
    config = [o for o in objects if o["kind"] == "SpiderMultusConfig"][0]
    config["spec"]["macvlan"]["enableRdma"] = True  # an older Spiderpool's key, gone from chart 1.2
    pool = [o for o in objects if o["kind"] == "SpiderIPPool"][0]
    pool["spec"]["ipVersion"] = 5
    violations, _unchecked = k8s_validate.validate(objects, schemas)
    assert any("SpiderMultusConfig prop-1-rail1: spec.macvlan: Additional properties are not allowed ('enableRdma'"
               in v for v in violations), violations
    assert any(v.startswith("SpiderIPPool prop-1-rail1: spec.ipVersion: 5 is not one of [4, 6]") for v in violations)


def test_the_plan_check_finds_objects_broken_on_purpose():
    plan = plan_of(cluster("sriov", "exclusive"))
    objects = k8s_objects.render(plan)
    pools = [o for o in objects if o["kind"] == "SpiderIPPool"]
    broken = copy.deepcopy(objects)
    bpools = [o for o in broken if o["kind"] == "SpiderIPPool"]
    bpools[0]["spec"]["ips"] = ["172.17.0.2-172.17.0.10"]  # gpu01's own rail-1 address
    bpools[1]["spec"]["gateway"] = "172.17.0.33"  # not the ToR's address
    bpools[2]["spec"]["ips"] = ["172.17.0.35-172.17.0.40"]  # gpu02's subnet in gpu03's pool
    bpools[3]["spec"]["nodeAffinity"]["matchExpressions"][0]["values"] = ["gpu02"]
    broken = [o for o in broken if not (o["kind"] == "SpiderMultusConfig" and o["metadata"]["name"] == "prop-1-rail2")]
    problems = k8s_objects.check_against_plan(plan, broken)
    assert "SpiderIPPool %s: 172.17.0.2-172.17.0.10 holds 172.17.0.2, the address of gpu01" \
        % pools[0]["metadata"]["name"] in problems
    assert "SpiderIPPool %s: gateway 172.17.0.33, the ToR's address in the plan is 172.17.0.33" \
        % pools[1]["metadata"]["name"] not in problems  # gpu02's gateway is .33: that one is right
    assert any(p.startswith("SpiderIPPool %s: 172.17.0.35-172.17.0.40 is not inside 172.17.0.64/27"
                            % pools[2]["metadata"]["name"]) for p in problems), problems
    assert "SpiderIPPool %s: the pool of gpu01 is bound to ['gpu02']" % pools[3]["metadata"]["name"] in problems
    assert "fabric default rail 2 (cni sriov) has no network object" in problems
    wrong_gateway = copy.deepcopy(objects)
    [o for o in wrong_gateway if o["kind"] == "SpiderIPPool"][0]["spec"]["gateway"] = "172.17.0.30"
    assert k8s_objects.check_against_plan(plan, wrong_gateway) == [
        "SpiderIPPool %s: gateway 172.17.0.30, the ToR's address in the plan is 172.17.0.1" % pools[0]["metadata"]["name"]]
    overlap = copy.deepcopy(objects)
    shared = plan_of(cluster("macvlan", "shared"))
    overlap = k8s_objects.render(shared)
    extra = copy.deepcopy([o for o in overlap if o["kind"] == "SpiderIPPool"][0])
    extra["metadata"]["name"] = "extra"
    extra["spec"]["ips"] = ["172.17.0.200-172.17.0.210"]
    assert any("overlaps" in p for p in k8s_objects.check_against_plan(shared, overlap + [extra]))


def test_a_cidr_pool_is_the_plan_node_by_node():
    plan = plan_of(cluster("sriov", "exclusive", ipam="nv-ipam"))
    objects = k8s_objects.render(plan)
    pool = [o for o in objects if o["kind"] == "CIDRPool"][0]
    # the plan's layout, computed here: rail 1 block 172.17.0.0/24, node n the n-th /27, ToR .1, host .2
    assert pool["spec"]["cidr"] == "172.17.0.0/24" and pool["spec"]["perNodeNetworkPrefix"] == 27
    assert pool["spec"]["staticAllocations"] == [
        {"nodeName": "gpu%02d" % n, "prefix": "172.17.0.%d/27" % ((n - 1) * 32),
         "gateway": "172.17.0.%d" % ((n - 1) * 32 + 1)} for n in (1, 2, 3)]
    assert pool["spec"]["gatewayIndex"] == 1
    assert pool["spec"]["perNodeExclusions"] == [{"startIndex": 2, "endIndex": 2}]
    nad = json.loads([o for o in objects if o["kind"] == "NetworkAttachmentDefinition"][0]["spec"]["config"])
    assert nad["plugins"][0]["ipam"] == {"type": "nv-ipam", "poolName": "prop-1-rail1", "poolType": "cidrpool"}
    broken = copy.deepcopy(objects)
    bpool = [o for o in broken if o["kind"] == "CIDRPool"][0]
    bpool["spec"]["staticAllocations"][1]["gateway"] = "172.17.0.62"
    bpool["spec"]["perNodeExclusions"] = []
    del bpool["spec"]["staticAllocations"][2]
    problems = k8s_objects.check_against_plan(plan, broken)
    assert "CIDRPool prop-1-rail1: gpu02 gets 172.17.0.32/27 via 172.17.0.62, the plan has 172.17.0.32/27 via " \
        "172.17.0.33" in problems
    assert "CIDRPool prop-1-rail1: gpu03 has no static allocation (the plan gives it 172.17.0.64/27)" in problems
    assert "CIDRPool prop-1-rail1: gpu01's address 172.17.0.2 (index 2 of its prefix) is not excluded" in problems


@pytest.mark.parametrize("model,field,words", [
    (cluster("sriov", "p2p"), "fabric_cluster.kubernetes.ipam", "cannot give pods addresses in p2p"),
    (cluster("macvlan", "exclusive", ipam="host-local"), "fabric_cluster.kubernetes.ipam", "hands out one cluster-wide"),
    (cluster("macvlan", "shared", pod_offset=250, pod_count=10), "fabric_cluster.kubernetes.pod_offset",
     "with pod_count 10 leaves the rail block 172.17.0.0/24"),
    (cluster("macvlan", "shared", pod_offset=1, pod_count=10), "fabric_cluster.kubernetes.pod_offset",
     "puts the rail gateway (offset 1) among the pods"),
    (cluster("macvlan", "shared", sriov_operator=True), "fabric_cluster.kubernetes.sriov_operator", "is for cni sriov"),
    (cluster("macvlan", "shared", ipam="nv-ipam"), "fabric_cluster.kubernetes.ipam",
     "gives each node a prefix of the rail block, which only exclusive addressing plans"),
])
def test_what_pods_cannot_have_is_refused_with_one_line(model, field, words):
    with pytest.raises(FabricModelError) as info:
        k8s_objects.render(plan_of(model))
    assert info.value.field == field and words in str(info.value) and "\n" not in str(info.value)


def test_a_master_nic_needs_one_name_on_every_node():
    model = cluster("macvlan", "shared")
    plan = rail_plan(model, {"gpu01": {"node_id": 1, "rail_interfaces": list(NICS)},
                             "gpu02": {"node_id": 2, "rail_interfaces": ["eth2", "eth3"]}})
    with pytest.raises(FabricModelError) as info:
        k8s_objects.render(plan)
    assert "needs one interface name for rail 1 on every node" in str(info.value)
    assert "the nodes have ens6f0np0 on gpu01; eth2 on gpu02" in str(info.value)
    # SR-IOV selects PFs by name per rail: several names are fine
    objects = k8s_objects.render(rail_plan(cluster("sriov", "exclusive"), {
        "gpu01": {"node_id": 1, "rail_interfaces": list(NICS)}, "gpu02": {"node_id": 2, "rail_interfaces": ["eth2", "eth3"]}}))
    config = json.loads([o for o in objects if o["metadata"]["name"] == "sriovdp-config"][0]["data"]["config.json"])
    assert config["resourceList"][0]["selectors"]["pfNames"] == ["ens6f0np0", "eth2"]


def test_a_model_without_kubernetes_keeps_its_lock_digest():
    assert "kubernetes" not in plan_of(cluster("sriov"))["cluster"]["fabrics"]["default"]
    assert plan_of(cluster("sriov", namespace="x"))["cluster"]["fabrics"]["default"]["kubernetes"] == {"namespace": "x"}


# -- NCCL -------------------------------------------------------------------------------------------------------

def gb10_plan():
    """Two rails on the GB10's ConnectX-7 (show_gids gb10-cx7-masked-gids.txt: 192.168.100.10 and .14)."""
    model = {"name": "gb10", "rails": 2, "addressing": {"mode": "shared", "supernet": "192.168.96.0/20",
                                                        "rail_prefix": 21, "host_offset": 1034}}
    plan = rail_plan(model, {"spark": {"node_id": 1, "rail_interfaces": ["enp1s0f0np0", "enP2p1s0f0np0"]}})
    # the lab's addresses as the recorded host has them
    plan["nodes"]["spark"]["rails"][0]["ip"] = "192.168.100.10"
    plan["nodes"]["spark"]["rails"][1]["ip"] = "192.168.100.14"
    return plan


def test_nccl_settings_from_recorded_gids():
    facts = parse_rdma(data("rdma", "show_gids", "gb10-cx7-masked-gids.txt"), "show_gids")
    found = nccl.nccl_settings(gb10_plan(), "spark", facts, "eno1")
    assert found["problems"] == []
    assert found["env"] == {"NCCL_IB_HCA": "=rocep1s0f0:1,roceP2p1s0f0:1", "NCCL_IB_GID_INDEX": "3",
                            "NCCL_SOCKET_IFNAME": "=eno1", "NCCL_CROSS_NIC": "0", "NCCL_IB_TC": "106",
                            "NCCL_IB_SL": "3", "UCX_NET_DEVICES": "rocep1s0f0:1,roceP2p1s0f0:1"}
    text = nccl.nccl_conf(found)
    assert text.splitlines()[0] == nccl.MARKER and "NCCL_IB_GID_INDEX=3" in text and "UCX_NET_DEVICES" not in text
    with pytest.raises(FabricError) as info:
        nccl.nccl_settings(gb10_plan(), "spark", facts, "enp1s0f0np0")
    assert "is a rail NIC" in str(info.value)
    plan = gb10_plan()
    plan["nodes"]["spark"]["rails"][1]["ip"] = "192.168.100.99"
    assert nccl.nccl_settings(plan, "spark", facts, "eno1")["problems"] == [
        "rail 2 (enP2p1s0f0np0, roceP2p1s0f0): no RoCE v2 GID holds 192.168.100.99"]


def test_gpu_nic_affinity_from_recorded_topology():
    facts = merge(parse_rdma(data("rdma", "nvidia_smi_topo", "sglang-h100-8gpu-8nic-nv18.txt"), "nvidia_smi_topo"))
    rail_devices = dict(("mlx5_%d" % i, ("ens%dnp0" % i, i + 1)) for i in range(8))
    table = nccl.gpu_nic_table(facts, rail_devices)
    assert [(r["gpu"], r["device"], r["relation"]) for r in table] == [
        ("GPU%d" % i, "mlx5_%d" % i, "PIX") for i in range(8)]
    # without mlx5_0 among the rails GPU0's nearest rail NIC is on its NUMA node (NODE), the lowest rail first
    del rail_devices["mlx5_0"]
    assert nccl.gpu_nic_table(facts, rail_devices)[0] == {"gpu": "GPU0", "device": "mlx5_1", "netdev": "ens1np0",
                                                          "rail": 2, "relation": "NODE"}


def test_the_plan_report_section_on_the_objects():
    text = k8s_objects.summary_markdown(plan_of(cluster("sriov", "exclusive")))
    assert "| default | sriov | spiderpool | 2 ConfigMap, 6 SpiderIPPool, 2 SpiderMultusConfig |" in text, text
    assert "every fabric's cni is host" in k8s_objects.summary_markdown(plan_of(
        {"name": "h", "rails": 2, "addressing": {"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24}}))
    assert "Not rendered: fabric_cluster.kubernetes.ipam: 'spiderpool' cannot give pods addresses in p2p" in \
        k8s_objects.summary_markdown(plan_of(cluster("sriov", "p2p")))


def test_a_range_of_the_other_ip_version_is_a_problem_line():
    plan = plan_of(cluster("macvlan", "shared", ipam="whereabouts"))
    objects = k8s_objects.render(plan)
    assert k8s_objects.check_against_plan(plan, objects) == []  # the control
    broken = copy.deepcopy(objects)
    nad = [o for o in broken if o["kind"] == "NetworkAttachmentDefinition"][0]
    config = json.loads(nad["spec"]["config"])
    config["plugins"][0]["ipam"]["range_start"] = "fd00:17::1"  # an IPv6 start of an IPv4 range
    nad["spec"]["config"] = json.dumps(config)
    assert k8s_objects.check_against_plan(plan, broken) == [
        "NetworkAttachmentDefinition %s: fd00:17::1-%s is not inside %s" % (
            nad["metadata"]["name"], config["plugins"][0]["ipam"]["range_end"], plan["rails"][0]["block"])]


@pytest.mark.parametrize("parts", [("c", "default", "rail1"), ("Prop_1", None, "rail2"), ("c-rail1", "gpu--1"),
                                   ("c-rail1", "gpu.-1"), ("-a", "b-"), ("a" * 200, "b" * 60), ("", None),
                                   ("a..b", "c"), ("ÄÖ", "x"), ("c", "n" * 253), ("a", 1, "b")])
def test_dns_name_as_its_substitutions_make_it(parts):
    # the definition: lower case, other characters '-', no '--', no '-' or '.' at the ends, 253 at most
    text = re.sub(r"[^a-z0-9.-]+", "-", "-".join(str(p) for p in parts if p not in (None, "")).lower())
    assert k8s_objects.dns_name(*parts) == re.sub(r"-{2,}", "-", text).strip("-.")[:253]
