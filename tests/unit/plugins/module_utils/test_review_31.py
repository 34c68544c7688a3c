# -*- coding: utf-8 -*-
"""REVIEW-31: field review of issue 31 (workload objects), see docs/reviews/31-workload-objects.md.

Each behaviour is checked against the program on the other side: the part of that program that decides is
transcribed here as a small pure function (its repository, commit and file named at the function), fed with the
objects, environment or outputs the collection renders, in the real layout, on cluster models made here. Each test
has the control where every stage is right and a case where exactly one stage is wrong.

Oracles (read with ``git show`` on the snapshots named):
spidernet-io/spiderpool@a7fbd3b2, k8snetworkplumbingwg/sriov-cni@1b7acc5b, k8snetworkplumbingwg/sriov-network-operator
@249e2001, Mellanox/ib-sriov-cni@d0ca31b, containernetworking/plugins@3d27709f, Mellanox/nvidia-k8s-ipam@3ce4a34,
NVIDIA/nccl@5067397c, sonic-net/sonic-buildimage@086b03bd70, linux-rdma/perftest@00b55b6.
"""

from __future__ import annotations

import getopt
import ipaddress
import json
import re

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.cabling import lldp_parse, port_names
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.desired import sriov as desired_sriov
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.fleet import link_results
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.rdma import rdma_facts, rdma_gather, rdma_parse_host
from ansible_collections.ainet.fabric.plugins.module_utils.tor import nos_sonic, platforms
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_objects, nccl

NICS = ["ens6f0np0", "ens6f1np1"]
HOSTNAME = "kubernetes.io/hostname"


def model(cni="sriov", mode="shared", family=4, **k8s):
    supernet, rail_prefix = ("172.17.0.0/16", 24) if family == 4 else ("fd00:17::/48", 64)
    addressing = {"mode": mode, "supernet": supernet, "rail_prefix": rail_prefix}
    if mode == "exclusive":
        addressing["node_prefix"] = 27 if family == 4 else 120
    out = {"name": "Lab", "rails": 2, "addressing": addressing, "cni": cni}
    if cni == "sriov":
        out["sriov"] = {"vfs": 4}
    if k8s:
        out["kubernetes"] = k8s
    return out


def plan(raw, hosts=("GPU01", "gpu02")):
    return rail_plan(raw, dict((h, {"node_id": i + 1, "rail_interfaces": NICS}) for i, h in enumerate(hosts)))


def kind(objects, name):
    return [o for o in objects if o["kind"] == name]


# -- Spiderpool: SpiderMultusConfig -> NetworkAttachmentDefinition -> the spiderpool IPAM's pool ----------------------

def spiderpool_nad(smc):
    """The NAD Spiderpool writes from a SpiderMultusConfig: ``(annotations, CNI config)``. spiderpool@a7fbd3b2
    pkg/multuscniconfig/multusconfig_informer.go ``generateNetAttachDef`` and ``generate*CNIConf``: ``custom`` is the
    ``customCNI`` text verbatim; every other type gets ``{"type": "spiderpool", "default_ipv4_ippool":
    ippools.ipv4, ...}`` as IPAM (cmd/spiderpool/cmd/cni_types.go tags), ``rdma`` after sriov with
    ``rdmaIsolation``, the coordinator (``enableCoordinator`` defaults to true), then ``tuning`` when
    ``sriov.mtu`` > 0; the SR-IOV types put their ``resourceName`` on the NAD's resourceName annotation; the JSON
    keys of the spec are the struct tags of spidermultus_types.go."""
    spec = smc["spec"]
    annotations = dict(smc["metadata"].get("annotations") or {})
    cni = spec["cniType"]
    if cni == "custom":
        return annotations, json.loads(spec["customCNI"])
    sub = spec[{"ib-sriov": "ibsriov"}.get(cni, cni)]
    plugin = {"type": cni}
    if cni == "ipoib":
        plugin["master"] = sub["master"]
    ipam = {"type": "spiderpool"}
    for version in ("ipv4", "ipv6"):
        if (sub.get("ippools") or {}).get(version):
            ipam["default_%s_ippool" % version] = list(sub["ippools"][version])
    plugin["ipam"] = ipam
    plugins = [plugin]
    if cni == "ib-sriov" and sub.get("rdmaIsolation") is not None:
        plugin["rdmaIsolation"] = sub["rdmaIsolation"]
    if cni == "sriov" and sub.get("rdmaIsolation"):
        plugins.append({"type": "rdma"})
    if spec.get("enableCoordinator", True):
        plugins.append({"type": "coordinator"})
    if cni == "sriov" and (sub.get("mtu") or 0) > 0:
        plugins.append({"type": "tuning", "mtu": sub["mtu"]})
    if cni in ("sriov", "ib-sriov"):
        annotations["k8s.v1.cni.cncf.io/resourceName"] = sub["resourceName"]
    return annotations, {"cniVersion": "0.3.1", "name": smc["metadata"]["name"], "plugins": plugins}


def _selector_matches(selector, labels):
    """metav1.LabelSelectorAsSelector(...).Matches(labels): matchLabels and matchExpressions (In, NotIn, Exists,
    DoesNotExist), all of them."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        op, key, values = expr["operator"], expr["key"], expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def spiderpool_pick(cni_config, pools, node, node_labels, version):
    """The pool the spiderpool IPAM takes for a pod on ``node`` (no pod or namespace annotations): spiderpool@a7fbd3b2
    pkg/ipam/pool_selections.go ``getPoolCandidates`` -> ``getPoolFromNetConf`` (the netconf's
    ``default_ipvX_ippool``; none there: the cluster default pools, ``spec.default``), then pkg/ipam/allocate.go
    ``filterPoolCandidates``/``selectByPod`` (IP version, ``nodeName``, else ``nodeAffinity`` as a LabelSelector on
    the node's labels); an error when every candidate is filtered out; the first one left is tried first."""
    ipam = cni_config["plugins"][0].get("ipam") or {}
    names = ipam.get("default_ipv%d_ippool" % version)
    if not names:
        names = [n for n, p in pools.items() if p["spec"].get("default")]
    if not names:
        raise LookupError("no IPPool candidate")
    left = []
    for name in names:
        spec = pools[name]["spec"]
        if spec["ipVersion"] != version:
            continue
        if spec.get("nodeName"):
            if node not in spec["nodeName"]:
                continue
        elif spec.get("nodeAffinity") is not None and not _selector_matches(spec["nodeAffinity"], node_labels):
            continue
        left.append(name)
    if not left:
        raise LookupError("all IPv%d IPPools %s filtered out" % (version, names))
    return left[0]


SPIDER_CASES = [("sriov", "exclusive", 4), ("sriov", "shared", 6), ("host-device", "exclusive", 6),
                ("macvlan", "exclusive", 4), ("ipoib", "infiniband", 4), ("sriov", "infiniband", 4)]


@pytest.mark.parametrize("cni,mode,family", SPIDER_CASES)
def test_spiderpool_pod_gets_its_nodes_subnet_through_the_nad_spiderpool_writes(cni, mode, family):
    p = plan(model(cni, mode, family))
    objects = k8s_objects.render(p)
    pools = dict((o["metadata"]["name"], o) for o in kind(objects, "SpiderIPPool"))
    for smc in kind(objects, "SpiderMultusConfig"):
        rail = int(smc["metadata"]["labels"]["ainet.fabric/rail"])
        annotations, config = spiderpool_nad(smc)
        if cni in ("sriov", "host-device"):
            assert annotations["k8s.v1.cni.cncf.io/resourceName"] == "nvidia.com/rail%d" % rail
        for host in p["nodes"]:
            node = k8s_objects.node_name(host)
            chosen = pools[spiderpool_pick(config, pools, node, {HOSTNAME: node}, family)]["spec"]
            entry = [e for e in p["nodes"][host]["rails"] if e["rail"] == rail][0]
            assert chosen["subnet"] == (entry["subnet"] if mode == "exclusive" else
                                        p["rails"][rail - 1]["block"])
            first, _sep, last = chosen["ips"][0].partition("-")
            net = ipaddress.ip_network(chosen["subnet"])
            assert ipaddress.ip_address(first) in net and ipaddress.ip_address(last) in net


def test_spiderpool_one_stage_wrong_a_pool_bound_to_another_node_or_no_pools_named():
    objects = k8s_objects.render(plan(model("sriov", "exclusive")))
    pools = dict((o["metadata"]["name"], o) for o in kind(objects, "SpiderIPPool"))
    smc = [o for o in kind(objects, "SpiderMultusConfig") if o["metadata"]["labels"]["ainet.fabric/rail"] == "1"][0]
    _annotations, config = spiderpool_nad(smc)
    mine = [n for n, o in pools.items() if o["metadata"]["labels"].get("ainet.fabric/node") == "GPU01"
            and o["metadata"]["labels"]["ainet.fabric/rail"] == "1"][0]
    assert spiderpool_pick(config, pools, "gpu01", {HOSTNAME: "gpu01"}, 4) == mine   # control
    # the inventory name as node affinity (kubelet registers "gpu01"): filtered out on its own node
    pools[mine]["spec"]["nodeAffinity"]["matchExpressions"][0]["values"] = ["GPU01"]
    with pytest.raises(LookupError, match="filtered out"):
        spiderpool_pick(config, pools, "gpu01", {HOSTNAME: "gpu01"}, 4)
    # a SpiderMultusConfig that names no pool: the IPAM falls to the cluster default pools (none here)
    smc["spec"]["sriov"].pop("ippools")
    with pytest.raises(LookupError, match="no IPPool candidate"):
        spiderpool_pick(spiderpool_nad(smc)[1], pools, "gpu01", {HOSTNAME: "gpu01"}, 4)


def pod_default_routes(config, pool, nic="net1"):
    """The default routes in the pod's main table after Multus set up ``eth0`` (the cluster network, first) and then
    ``nic`` with ``config`` and a spiderpool address from ``pool``. spiderpool@a7fbd3b2 pkg/utils/convert/convert.go
    ``ConvertResultsToIPConfigsAndAllRoutes``: a default route via the pool's gateway unless the IPAM's
    ``clean_gateway`` (cmd/spiderpool/cmd/cni_types.go, passed as CleanGateway by command_add.go), plus the pool's
    routes; the CNI installs them in the main table (plugins@3d27709f pkg/ipam/ipam_linux.go ``ConfigureIface``,
    RouteAddEcmp: on IPv6 an ECMP default over eth0 and the rail); the coordinator, when chained, moves every route of
    a NIC that is not the default-route NIC into that NIC's own table (cmd/coordinator/cmd/utils.go
    ``MoveRouteTable(moveRouteInterface, RT_TABLE_MAIN, currentRuleTable)``)."""
    main = [("default", "eth0")]
    ipam = config["plugins"][0].get("ipam") or {}
    if pool["spec"].get("gateway") and not ipam.get("clean_gateway"):
        main.append(("default", nic))
    main += [(r["dst"], nic) for r in pool["spec"].get("routes") or []]
    if any(p["type"] == "coordinator" for p in config["plugins"][1:]):
        main = [r for r in main if r[1] != nic]
    return [r for r in main if r[0] == "default"]


@pytest.mark.parametrize("cni,mode,family", SPIDER_CASES)
def test_spiderpool_rail_nic_never_takes_the_pods_default_route(cni, mode, family):
    objects = k8s_objects.render(plan(model(cni, mode, family)))
    pools = dict((o["metadata"]["name"], o) for o in kind(objects, "SpiderIPPool"))
    for smc in kind(objects, "SpiderMultusConfig"):
        config = spiderpool_nad(smc)[1]
        for name in config["plugins"][0]["ipam"]["default_ipv%d_ippool" % family]:
            assert pod_default_routes(config, pools[name]) == [("default", "eth0")]


def test_spiderpool_default_route_one_stage_wrong_custom_cni_without_clean_gateway():
    objects = k8s_objects.render(plan(model("host-device", "exclusive", 6)))
    pool = kind(objects, "SpiderIPPool")[0]
    config = spiderpool_nad(kind(objects, "SpiderMultusConfig")[0])[1]
    assert pod_default_routes(config, pool) == [("default", "eth0")]  # control
    config["plugins"][0]["ipam"].pop("clean_gateway", None)  # no coordinator in a custom CNI: the rail takes one
    assert pod_default_routes(config, pool) == [("default", "eth0"), ("default", "net1")]


# -- VF MTU: sriov-cni, tuning, the operator -------------------------------------------------------------------------

def run_chain(plugins, vf_mtu=1500, pf_mtu=9000):
    """The MTU of the pod's VF after a CNI ADD of ``plugins`` in order (libcni runs a conflist's plugins in order,
    each with the previous result). sriov-cni@1b7acc5b pkg/sriov/sriov.go ``SetupVF`` moves the VF into the netns
    as ``args.IfName`` and never calls LinkSetMTU: it stores the VF's own MTU in ``conf.MTU`` (a ``"mtu"`` key in
    the config is decoded into that field and overwritten; pkg/types/types.go ``MTU *int`` has no tag);
    ib-sriov-cni likewise. plugins@3d27709f plugins/meta/tuning/tuning.go ``cmdAdd``: "Required prevResult
    missing" without a previous result, then LinkSetMTU on ``args.IfName`` inside the netns (a VF cannot go above
    its PF's MTU)."""
    host, pod, prev = {"vf0": vf_mtu}, {}, None
    for plugin in plugins:
        kind_ = plugin["type"]
        if kind_ in ("sriov", "ib-sriov", "host-device"):
            pod["net1"] = host.pop("vf0")
            prev = {"interfaces": ["net1"]}
        elif kind_ == "tuning":
            if prev is None:
                raise RuntimeError("Required prevResult missing")
            if plugin.get("mtu"):
                if "net1" not in pod:
                    raise RuntimeError("Cannot find container link net1")
                if plugin["mtu"] > pf_mtu:
                    raise RuntimeError("invalid argument: VF MTU above the PF's")
                pod["net1"] = plugin["mtu"]
        elif kind_ in ("rdma", "coordinator") and prev is None:
            raise RuntimeError("%s: no previous result" % kind_)
    return pod["net1"]


def test_vf_mtu_reaches_the_pod_on_all_three_paths():
    raw = model("sriov", ipam="whereabouts")
    raw["mtu"] = 4200
    nad = kind(k8s_objects.render(plan(raw)), "NetworkAttachmentDefinition")[0]
    assert run_chain(json.loads(nad["spec"]["config"])["plugins"]) == 4200
    raw["kubernetes"] = {}
    smc = kind(k8s_objects.render(plan(raw)), "SpiderMultusConfig")[0]
    assert run_chain(spiderpool_nad(smc)[1]["plugins"]) == 4200
    # the SR-IOV operator: the config daemon sets every VF's MTU from the policy (sriov-network-operator@249e2001
    # pkg/host/internal/sriov/sriov.go configSriovVFDevices: SetNetdevMTU(addr, group.Mtu)); its sriov-cni NAD has
    # no tuning (bindata/manifests/cni-config/sriov/sriov-cni-config.yaml)
    raw["kubernetes"] = {"sriov_operator": True, "ipam": "whereabouts"}
    assert [p["spec"]["mtu"] for p in kind(k8s_objects.render(plan(raw)), "SriovNetworkNodePolicy")] == [4200, 4200]


def test_vf_mtu_one_stage_wrong_mtu_on_the_sriov_plugin_or_tuning_first():
    raw = model("sriov", ipam="whereabouts")
    raw["mtu"] = 4200
    plugins = json.loads(kind(k8s_objects.render(plan(raw)), "NetworkAttachmentDefinition")[0]["spec"]["config"])[
        "plugins"]
    assert run_chain(plugins) == 4200  # control
    sriov = dict(plugins[0], mtu=4200)  # the mtu on sriov-cni alone: recorded, never set
    assert run_chain([sriov] + [p for p in plugins[1:] if p["type"] != "tuning"]) == 1500
    with pytest.raises(RuntimeError, match="prevResult"):  # tuning before sriov-cni
        run_chain([plugins[1], plugins[0]] + plugins[2:])


# -- InfiniBand SR-IOV: ib-sriov, SriovIBNetwork, linkType ib --------------------------------------------------------

def operator_nad_config(network):
    """The CNI config the SR-IOV operator writes for a SriovNetwork / SriovIBNetwork: sriov-network-operator@249e2001
    api/v1/helper.go ``RenderNetAttDef`` (SriovIBNetwork: ``CniType ib-sriov``; IPAM with every blank removed;
    ``metaPlugins`` inserted raw after the plugin) and bindata/manifests/cni-config/sriov/sriov-cni-config.yaml."""
    spec = network["spec"]
    cni = "ib-sriov" if network["kind"] == "SriovIBNetwork" else "sriov"
    body = '"type":"%s",' % cni + ('"vlan":0,' if cni == "sriov" else "")
    body += '"ipam":' + "".join((spec.get("ipam") or "{}").split())
    if spec.get("metaPlugins"):
        text = '{"cniVersion":"1.0.0","name":"%s","plugins":[{%s},%s]}' % (
            network["metadata"]["name"], body, spec["metaPlugins"])
    else:
        text = '{"cniVersion":"1.0.0","name":"%s",%s}' % (network["metadata"]["name"], body)
    return json.loads(text)


def operator_policy_problems(policy):
    """sriov-network-operator@249e2001 pkg/webhook/validate.go ``staticValidateSriovNetworkNodePolicy`` (the rules
    that apply here) and the CRD's linkType enum."""
    spec, out = policy["spec"], []
    if not re.match(r"^[a-zA-Z0-9]([a-zA-Z0-9_-]*[a-zA-Z0-9])?$", spec["resourceName"]) or \
            len(spec["resourceName"]) > 63:
        out.append("resourceName")
    if not re.match(r"^[a-zA-Z0-9_]+$", spec["resourceName"]):  # the rule before f900cbc
        out.append("resourceName (before f900cbc)")
    if spec.get("linkType", "eth") not in ("eth", "ETH", "ib", "IB"):
        out.append("linkType")
    if spec.get("deviceType") == "vfio-pci" and spec.get("isRdma"):
        out.append("isRdma with vfio-pci")
    if not any(spec["nicSelector"].get(k) for k in ("vendor", "deviceID", "pfNames", "rootDevices", "netFilter")):
        out.append("nicSelector")
    return out


def test_infiniband_sriov_renders_what_ib_sriov_and_the_operator_take():
    raw = model("sriov", "infiniband", sriov_operator=True, ipam="whereabouts", pod_offset=200, pod_count=20)
    objects = k8s_objects.render(plan(raw))
    for policy in kind(objects, "SriovNetworkNodePolicy"):
        assert policy["spec"]["linkType"] == "ib" and operator_policy_problems(policy) == []
    networks = kind(objects, "SriovIBNetwork")
    assert len(networks) == 2 and not kind(objects, "SriovNetwork")
    config = operator_nad_config(networks[0])
    assert [p["type"] for p in config["plugins"]] == ["ib-sriov", "rdma"]
    assert config["plugins"][0]["ipam"]["type"] == "whereabouts"
    # Spiderpool: cniType ib-sriov under the key "ibsriov" (SpiderIBSriovCniConfig's fields only)
    smc = kind(k8s_objects.render(plan(model("sriov", "infiniband"))), "SpiderMultusConfig")[0]
    assert set(smc["spec"]) == {"cniType", "ibsriov"} and smc["spec"]["cniType"] == "ib-sriov"
    fields = {"resourceName", "pkey", "linkState", "rdmaIsolation", "enableIbKubernetes", "ippools"}
    assert set(smc["spec"]["ibsriov"]) <= fields
    assert spiderpool_nad(smc)[1]["plugins"][0]["type"] == "ib-sriov"
    # a NetworkAttachmentDefinition (no operator, whereabouts): ib-sriov, then rdma; no tuning (sriov-cni's MTU path)
    nad = kind(k8s_objects.render(plan(model("sriov", "infiniband", ipam="whereabouts", pod_offset=200,
                                             pod_count=20))), "NetworkAttachmentDefinition")[0]
    assert [p["type"] for p in json.loads(nad["spec"]["config"])["plugins"]] == ["ib-sriov", "rdma"]


def test_infiniband_one_stage_wrong_the_ethernet_fabric_gets_sriov_not_ib():
    eth = k8s_objects.render(plan(model("sriov", "shared", sriov_operator=True, ipam="whereabouts")))
    assert [p["type"] for p in operator_nad_config(kind(eth, "SriovNetwork")[0])["plugins"]] == ["sriov", "rdma"]
    assert all("linkType" not in p["spec"] for p in kind(eth, "SriovNetworkNodePolicy"))
    # a policy whose resource name kept the fabric's '-' is refused by the webhook before f900cbc
    policy = kind(eth, "SriovNetworkNodePolicy")[0]
    policy["spec"]["resourceName"] = "gpu-east_rail1"
    assert operator_policy_problems(policy) == ["resourceName (before f900cbc)"]


def ib_sriov_add(config, vf_guid):
    """Whether ib-sriov-cni@d0ca31b accepts the VF: cmd/ib-sriov-cni/main.go ``getGUIDFromConf`` (runtimeConfig
    ``infinibandGUID``, then CNI_ARGS ``guid``; Multus passes runtimeConfig only for a declared capability),
    ``IBKubernetesEnabled`` needs one; pkg/sriov/sriov.go ``applyVFGuid``: with none given the VF's own GUID must not
    be all zeros (a new VF's, as the file's comment says) or all ones."""
    plugin = config["plugins"][0]
    given = (plugin.get("capabilities") or {}).get("infinibandGUID")
    if plugin.get("ibKubernetesEnabled") and not given:
        return "GUID must be provided by ib-kubernetes"
    digits = vf_guid.replace(":", "").lower()
    if not given and (digits.strip("0") == "" or digits.strip("f") == ""):
        return "VF GUID is not valid"
    return None


# The SR-IOV operator's config daemon gives every IB VF a random GUID (doc/design/ib-vf-configuration.md, "Now the
# GUIDs are assigned by the sriov-network-config-daemon randomly"); without it the sriov role sets them (from the plan).
NEW_VF_GUID = "00:00:00:00:00:00:00:00"
OPERATOR_VF_GUID = "5a:3e:01:9c:00:12:7f:01"


def test_ib_sriov_with_the_operator_finds_a_guid_on_every_vf():
    raw = model("sriov", "infiniband", sriov_operator=True, ipam="whereabouts", pod_offset=200, pod_count=20)
    config = operator_nad_config(kind(k8s_objects.render(plan(raw)), "SriovIBNetwork")[0])
    assert ib_sriov_add(config, OPERATOR_VF_GUID) is None
    assert ib_sriov_add(config, NEW_VF_GUID) == "VF GUID is not valid"  # the one stage wrong: no GUID on the VF


def sriov_role_guids(raw, hosts=("GPU01", "gpu02")):
    """Every VF GUID the ``sriov`` role sets on the plan's nodes (desired.sriov, what its action sends the host):
    ``{(host, nic): [guid per VF]}``."""
    cluster = load_cluster(raw)
    return dict(((host, pf["name"]), pf["vf_guids"]) for node_id, host in enumerate(hosts, 1)
                for pf in desired_sriov.options(cluster, NICS, None, node_id)["pfs"])


def test_ib_sriov_without_the_operator_finds_the_guid_the_sriov_role_set():
    """D1 fixed: without the operator the VFs come from the ``sriov`` role, which gives every InfiniBand VF a node and
    port GUID from the plan. The render trusts it (the objects name no GUID source, as with the operator's random
    GUIDs): ib-sriov-cni then takes the VF's own GUID."""
    for k8s in ({}, {"ipam": "whereabouts", "pod_offset": 200, "pod_count": 20}):
        raw = model("sriov", "infiniband", **k8s)
        objects = k8s_objects.render(plan(raw))
        configs = [spiderpool_nad(o)[1] for o in kind(objects, "SpiderMultusConfig")] + \
            [json.loads(o["spec"]["config"]) for o in kind(objects, "NetworkAttachmentDefinition")]
        guids = sriov_role_guids(raw)
        every = [g for vfs in guids.values() for g in vfs]
        assert len(every) == 2 * 2 * 4 and len(set(every)) == len(every)  # 2 nodes x 2 rails x 4 VFs, all distinct
        assert configs and all(ib_sriov_add(c, g) is None for c in configs for g in every)
        # the one stage wrong: a VF the role did not reach (a new VF) is still refused
        assert all(ib_sriov_add(c, NEW_VF_GUID) == "VF GUID is not valid" for c in configs)
    # and on Ethernet the role sets no GUID at all
    assert all("vf_guids" not in pf for pf in desired_sriov.options(load_cluster(model("sriov")), NICS, None, 1)["pfs"])


# -- host-local and the SR-IOV device plugin's selectors, per node ---------------------------------------------------

def host_local_first(config, store):
    """plugins@3d27709f plugins/ipam/host-local: the allocator takes the first free address of the range from its
    store, a directory on the node that runs it (backend/disk, /var/lib/cni/networks/<name>)."""
    item = json.loads(config)["plugins"][0]["ipam"]["ranges"][0][0]
    address = ipaddress.ip_address(item["rangeStart"])
    while str(address) in store:
        address += 1
    store.add(str(address))
    return str(address)


def test_host_local_serves_one_node_only():
    one = plan(model("macvlan", ipam="host-local"), ("gpu01",))
    nad = kind(k8s_objects.render(one), "NetworkAttachmentDefinition")[0]
    store = set()
    assert host_local_first(nad["spec"]["config"], store) != host_local_first(nad["spec"]["config"], store)
    # the one stage wrong: two nodes, two stores, the same first address; the render refuses it
    assert host_local_first(nad["spec"]["config"], set()) == host_local_first(nad["spec"]["config"], set())
    with pytest.raises(FabricModelError, match="keeps its allocations on each node"):
        k8s_objects.render(plan(model("macvlan", ipam="host-local")))


def device_plugin_pick(config, node_pfs):
    """The PFs each resource of the SR-IOV network device plugin's ConfigMap takes on one node: every selector key
    given must match (``rootDevices``: the PF's PCI address, ``pfNames``: its netdev name), one ConfigMap for all
    nodes. ``node_pfs``: ``[(netdev, pci)]``."""
    out = {}
    for resource in json.loads(config)["resourceList"]:
        sel = resource["selectors"]
        out[resource["resourceName"]] = sorted(
            name for name, pci in node_pfs
            if ("rootDevices" not in sel or pci in sel["rootDevices"]) and
            ("pfNames" not in sel or name in sel["pfNames"]))
    return out


def test_sriov_device_plugin_takes_each_rails_own_pf_on_every_node():
    hosts = {"gpu01": NICS, "gpu02": list(reversed(NICS))}  # two node models naming the PFs in opposite order
    p = rail_plan(model("sriov"), dict((h, {"node_id": i + 1, "rail_interfaces": n})
                                       for i, (h, n) in enumerate(sorted(hosts.items()))))
    pci = {"gpu01": {NICS[0]: "0000:3b:00.0", NICS[1]: "0000:86:00.0"},
           "gpu02": {NICS[1]: "0000:3b:00.1", NICS[0]: "0000:86:00.1"}}
    config = [o for o in k8s_objects.render(p, pci=pci) if o["metadata"]["name"] == "sriovdp-config"][0]
    for host, nics in hosts.items():
        got = device_plugin_pick(config["data"]["config.json"], [(n, pci[host][n]) for n in nics])
        assert got == {"rail1": [nics[0]], "rail2": [nics[1]]}
    # the one stage wrong: the same ConfigMap by names would give each rail both PFs on one of the nodes; refused
    with pytest.raises(FabricModelError, match="would take both"):
        k8s_objects.render(p)


# -- resource names -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fabric", ["gpu-east", "a_b", "abcdefghijklmnop", "x-"])
def test_resource_names_pass_every_webhook_and_device_plugin_rule(fabric):
    name = k8s_objects.resource_name(fabric, 8)
    assert re.match(r"^[a-zA-Z0-9_]+$", name)  # the device plugins, the webhook before f900cbc
    assert re.match(r"^[a-zA-Z0-9]([a-zA-Z0-9_-]*[a-zA-Z0-9])?$", name) and len(name) <= 63  # since f900cbc
    raw = "%s_rail8" % fabric  # the one stage wrong: the fabric name as given
    assert ("-" in fabric) == (not re.match(r"^[a-zA-Z0-9_]+$", raw))


# -- nv-ipam CIDRPool: the gateway index, the host's exclusion, the nodes ------------------------------------------

def nv_ipam_gateway(prefix, index):
    """Mellanox/nvidia-k8s-ipam@3ce4a34 api/v1alpha1/helpers.go ``GetGatewayForSubnet``: subnet + index; index 0
    only on a /31, /32, /127, /128; above the usable count (IPv4: size - 2, IPv6: size - 1): none."""
    net = ipaddress.ip_network(prefix)
    bits = net.max_prefixlen
    usable = 1 if net.prefixlen == bits else 2 if net.prefixlen == bits - 1 else \
        net.num_addresses - (2 if net.version == 4 else 1)
    if net.prefixlen >= bits - 1:
        usable -= 1
    elif index == 0:
        return ""
    if usable < index:
        return ""
    return str(net.network_address + index)


def node_selector_matches(selector, labels):
    """A v1 NodeSelector: any term whose matchExpressions all hold (pkg/ipam-controller: the pool's nodes)."""
    return any(_selector_matches({"matchExpressions": t.get("matchExpressions")}, labels)
               for t in selector["nodeSelectorTerms"])


@pytest.mark.parametrize("offsets,family", [({}, 4), ({"gateway_offset": -1}, 4), ({}, 6)])
def test_cidrpool_gateway_index_exclusion_and_nodes_agree_with_the_plan(offsets, family):
    raw = model("sriov", "exclusive", family, ipam="nv-ipam")
    raw["addressing"].update(offsets)
    p = plan(raw)
    for pool in kind(k8s_objects.render(p), "CIDRPool"):
        spec = pool["spec"]
        rail = int(pool["metadata"]["labels"]["ainet.fabric/rail"])
        for alloc in spec["staticAllocations"]:
            host = [h for h in p["nodes"] if k8s_objects.node_name(h) == alloc["nodeName"]][0]
            entry = [e for e in p["nodes"][host]["rails"] if e["rail"] == rail][0]
            assert nv_ipam_gateway(alloc["prefix"], spec["gatewayIndex"]) == entry["gateway"] == alloc["gateway"]
            host_index = int(ipaddress.ip_address(entry["ip"])) - int(ipaddress.ip_network(entry["subnet"])[0])
            assert any(x["startIndex"] <= host_index <= x["endIndex"] for x in spec["perNodeExclusions"])
            assert node_selector_matches(spec["nodeSelector"], {HOSTNAME: alloc["nodeName"]})
        # a node of the cluster outside the plan (a control-plane or CPU node) takes no prefix
        assert not node_selector_matches(spec["nodeSelector"], {HOSTNAME: "cpu01"})
        # the one stage wrong: index 0 of a node prefix is no gateway for nv-ipam
        assert nv_ipam_gateway(spec["staticAllocations"][0]["prefix"], 0) == ""


# -- NCCL's own GID choice -------------------------------------------------------------------------------------------

def _range(env, family):
    """connect.cc ``envIbAddrRange``: ``addr/len`` parsed with inet_pton in the chosen family; anything else (no
    ``/``, an address of the other family, a length too long) is ignored."""
    text = env.get("NCCL_IB_ADDR_RANGE") or ""
    if "/" not in text:
        return None
    addr, _sep, length = text.partition("/")
    try:
        base = (ipaddress.IPv4Address if family == "AF_INET" else ipaddress.IPv6Address)(addr)
    except ValueError:
        return None
    if int(length) > (32 if family == "AF_INET" else 128):
        return None
    return ipaddress.ip_network("%s/%s" % (base, length), strict=False)


def _family(gid):
    return "AF_INET" if gid.ipv4_mapped is not None else "AF_INET6"


def _valid(gid):
    words = [(int(gid) >> (96 - 32 * i)) & 0xffffffff for i in range(4)]
    configured = not (words == [0, 0, 0, 0] or (words[0] == 0xfe800000 and words[1:] == [0, 0, 0]))
    return configured and not (words[0] == 0xfe800000 and words[1] == 0)


def _in_range(gid, family, prefix):
    if prefix is None:
        return True
    if family == "AF_INET":
        return ipaddress.IPv4Address(int(gid) & 0xffffffff) in prefix
    return gid in prefix


def nccl_gid_index(table, env, link_layer="Ethernet"):
    """NVIDIA/nccl@5067397c src/transport/net_ib/connect.cc ``ncclIbGetGidIndex`` and ``ncclUpdateGidIndex``.
    ``table``: ``[(GID as IPv6Address, RoCE version or None)]`` by index, unset slots all zero."""
    if link_layer == "InfiniBand":
        return 0
    if env.get("NCCL_IB_GID_INDEX") not in (None, "") and int(env["NCCL_IB_GID_INDEX"]) >= 0:
        return int(env["NCCL_IB_GID_INDEX"])
    family = env.get("NCCL_IB_ADDR_FAMILY") if env.get("NCCL_IB_ADDR_FAMILY") in ("AF_INET", "AF_INET6") else \
        "AF_INET"
    prefix = _range(env, family)
    roce = int(env.get("NCCL_IB_ROCE_VERSION_NUM", 2))
    index = 0
    for cand in range(1, len(table)):
        gid, gid_c = table[index][0], table[cand][0]
        match = _in_range(gid_c, family, prefix)
        if _family(gid_c) != _family(gid) and _family(gid_c) == family and match:
            index = cand
        elif _family(gid_c) == family and _valid(gid_c) and match:
            if (table[index][1] != table[cand][1] or not _valid(gid)) and table[cand][1] == roce:
                index = cand
    return index


SYSFS = "/sys/class/infiniband/mlx5_0/ports/1/"


def gid_table(rows, length=16):
    """A port's GID table in the real sysfs layout (``grep -H . gids/* gid_attrs/types/* gid_attrs/ndevs/*``, as
    rdma_gather.gid_sysfs_text writes it), parsed by the collection's parser, and the same table for
    :func:`nccl_gid_index` (unset slots zero)."""
    lines = []
    for index, gid, version in rows:
        full = ipaddress.IPv6Address(gid).exploded
        lines += ["%sgids/%d:%s" % (SYSFS, index, full), "%sgid_attrs/types/%d:%s" % (SYSFS, index, version),
                  "%sgid_attrs/ndevs/%d:ens6f0np0" % (SYSFS, index)]
    facts = rdma_parse_host.parse_show_gids("\n".join(lines) + "\n")
    table = [(ipaddress.IPv6Address(0), None)] * length
    for gid in facts["devices"]["mlx5_0"]["gids"]:
        table[gid["index"]] = (ipaddress.IPv6Address(gid["gid"]), {"RoCE v2": 2, "RoCE v1": 1}[gid["type"]])
    return facts, table


def rail_model(family=6, **extra):
    supernet = "fd00:17::/48" if family == 6 else "172.17.0.0/16"
    return dict({"family": family, "addressing": {"mode": "shared", "supernet": supernet}}, **extra)


LINK_LOCAL = "fe80::e42:a1ff:fe5c:1a2b"


def test_nccl_takes_the_rail_gid_on_an_ipv6_fabric_with_no_gid_index():
    facts, table = gid_table([(0, LINK_LOCAL, "IB/RoCE v1"), (1, LINK_LOCAL, "RoCE v2"),
                              (2, "fd00:17::12", "IB/RoCE v1"), (3, "fd00:17::12", "RoCE v2")])
    want = rdma_facts.roce_v2_gid_index(facts, "ens6f0np0", "fd00:17::12")
    assert want == 3
    assert nccl_gid_index(table, nccl.gid_selection_env(rail_model(6))) == want
    assert nccl_gid_index(table, {}) == 0  # the one stage wrong: NCCL's default AF_INET keeps GID 0 (RoCE v1, fe80::)
    # an IPv4 fabric: NCCL's default is right, and we leave it
    facts4, table4 = gid_table([(0, LINK_LOCAL, "IB/RoCE v1"), (1, LINK_LOCAL, "RoCE v2"),
                                (2, "::ffff:172.17.0.12", "IB/RoCE v1"), (3, "::ffff:172.17.0.12", "RoCE v2")])
    assert nccl.gid_selection_env(rail_model(4)) == {}
    assert nccl_gid_index(table4, {}) == rdma_facts.roce_v2_gid_index(facts4, "ens6f0np0", "172.17.0.12") == 3
    # NCCL_IB_GID_INDEX, when the nccl role writes one, wins over both
    assert nccl_gid_index(table, dict(nccl.gid_selection_env(rail_model(6)), NCCL_IB_GID_INDEX="3")) == 3
    # InfiniBand: GID 0 (or the routable FLID one) whatever the env says, and we say nothing
    assert nccl.gid_selection_env({"family": 4, "addressing": {"mode": "infiniband"}}) == {}


def test_nccl_addr_range_skips_a_second_global_address_and_needs_its_family():
    rows = [(0, LINK_LOCAL, "IB/RoCE v1"), (1, LINK_LOCAL, "RoCE v2"), (2, "2001:db8:5::12", "IB/RoCE v1"),
            (3, "2001:db8:5::12", "RoCE v2"), (4, "fd00:17::12", "IB/RoCE v1"), (5, "fd00:17::12", "RoCE v2")]
    _facts, table = gid_table(rows)
    env = nccl.gid_selection_env(rail_model(6), addr_range=True)
    assert env == {"NCCL_IB_ADDR_FAMILY": "AF_INET6", "NCCL_IB_ADDR_RANGE": "fd00:17::/48"}
    assert nccl_gid_index(table, env) == 5
    assert nccl_gid_index(table, {"NCCL_IB_ADDR_FAMILY": "AF_INET6"}) == 3  # no range: the SLAAC address first
    # the one stage wrong: the range without its family (NCCL parses it as AF_INET, ignores it, keeps GID 0)
    assert nccl_gid_index(table, {"NCCL_IB_ADDR_RANGE": env["NCCL_IB_ADDR_RANGE"]}) == 0
    # IPv4 with a range: the family spelled out, the IPv4 GID inside it
    rows4 = [(0, LINK_LOCAL, "IB/RoCE v1"), (1, "::ffff:10.9.0.5", "RoCE v2"), (2, "::ffff:172.17.0.12", "RoCE v2")]
    env4 = nccl.gid_selection_env(rail_model(4), addr_range=True)
    assert env4 == {"NCCL_IB_ADDR_FAMILY": "AF_INET", "NCCL_IB_ADDR_RANGE": "172.17.0.0/16"}
    assert nccl_gid_index(gid_table(rows4)[1], env4) == 2 and nccl_gid_index(gid_table(rows4)[1], {}) == 1


def test_pods_nccl_configmap_carries_the_family_on_ipv6_only():
    six = kind(k8s_objects.render(plan(model("sriov", "shared", 6))), "ConfigMap")
    env6 = [c for c in six if c["metadata"]["name"].endswith("nccl-env")][0]["data"]
    assert env6["NCCL_IB_ADDR_FAMILY"] == "AF_INET6" and "NCCL_IB_GID_INDEX" not in env6
    _facts, table = gid_table([(0, LINK_LOCAL, "IB/RoCE v1"), (1, "fd00:17::12", "IB/RoCE v1"),
                               (2, "fd00:17::12", "RoCE v2")])
    assert nccl_gid_index(table, env6) == 2
    four = kind(k8s_objects.render(plan(model("sriov", "shared", 4))), "ConfigMap")
    env4 = [c for c in four if c["metadata"]["name"].endswith("nccl-env")][0]["data"]
    assert "NCCL_IB_ADDR_FAMILY" not in env4
    assert nccl_gid_index(table, env4) == 0  # the IPv4 env on an IPv6 rail: the one stage wrong


def test_nccl_role_settings_on_an_ipv6_node_name_the_rail_gid():
    """The nccl role's path: nccl_settings from the node's sysfs GID table (the role's rdma_facts call passes only
    IPv4 addresses to the module, but nccl_settings looks the rail address up in the facts itself)."""
    p = plan(model("sriov", "shared", 6))
    entry = p["nodes"]["GPU01"]["rails"][0]
    p["nodes"]["GPU01"]["rails"] = [entry]
    rows = [(0, LINK_LOCAL, "IB/RoCE v1"), (1, LINK_LOCAL, "RoCE v2"), (2, entry["ip"], "IB/RoCE v1"),
            (3, entry["ip"], "RoCE v2")]
    facts, table = gid_table(rows)
    facts["devices"]["mlx5_0"]["netdevs"] = ["ens6f0np0"]
    found = nccl.nccl_settings(p, "GPU01", facts, "eno1")
    assert found["problems"] == [] and found["env"]["NCCL_IB_GID_INDEX"] == "3"
    assert found["env"]["NCCL_IB_ADDR_FAMILY"] == "AF_INET6" and nccl_gid_index(table, found["env"]) == 3
    # with addr_range the index goes and NCCL's own choice lands on the same GID
    ranged = nccl.nccl_settings(p, "GPU01", facts, "eno1", addr_range=True)["env"]
    assert "NCCL_IB_GID_INDEX" not in ranged and nccl_gid_index(table, ranged) == 3
    # the one stage wrong: the rail address only in a RoCE v1 GID (no RoCE v2 for it)
    facts_v1, _table = gid_table(rows[:3])
    facts_v1["devices"]["mlx5_0"]["netdevs"] = ["ens6f0np0"]
    assert "no RoCE v2 GID holds" in nccl.nccl_settings(p, "GPU01", facts_v1, "eno1")["problems"][0]


def test_a_phb_gpu_on_x86_is_warned_as_ncclTopoCheckGdr_disables_gdr_there():
    """D3 (fixed): a GPU whose nearest rail NIC is PHB away got no warning; on x86 NCCL's PATH_PHB (8) > PATH_PXB (5),
    so ncclTopoCheckGdr disables GPUDirect RDMA by default. On Grace the same relation is C2C (PATH_P2C)."""
    # NVIDIA/nccl@5067397c src/graph/topo.cc topoPathTypeStr: LOC NVL NVB C2C PIX PXB P2C PXN PHB SYS;
    # paths.cc: a PCI link to a CPU node is PATH_PHB, GDR only while distance <= NCCL_NET_GDR_LEVEL (PXB, or P2C
    # with NCCL_NET_GDR_C2C where the path crosses C2C: Grace)
    order = ["LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS"]
    table = [{"gpu": "GPU0", "device": "mlx5_0", "netdev": "ens6f0np0", "rail": 1, "relation": "PHB"}]
    assert order.index("PHB") > order.index("PXB") and order.index("P2C") < order.index("PXN")
    (warning,) = nccl.far_gpus(table, "x86_64")
    assert warning.startswith("GPU0: its nearest rail NIC mlx5_0 (ens6f0np0, rail 1) is PHB away")
    assert "PCIe host bridge" in warning and "Fix:" in warning
    # the one stage wrong each way: Grace (C2C) and an unknown architecture are not warned about; PXB never is
    assert nccl.far_gpus(table, "aarch64") == [] and nccl.far_gpus(table) == []
    assert nccl.far_gpus([dict(table[0], relation="PXB")], "x86_64") == []
    # through nccl_settings, to which the role passes uname -m
    p = plan(model("sriov", "shared", 4))
    p["nodes"]["GPU01"]["rails"] = p["nodes"]["GPU01"]["rails"][:1]
    facts, _table = gid_table([(3, "::ffff:" + p["nodes"]["GPU01"]["rails"][0]["ip"], "RoCE v2")])
    facts["devices"]["mlx5_0"]["netdevs"] = ["ens6f0np0"]
    facts["topology"] = {"gpu_nic": {"GPU0": {"mlx5_0": "PHB"}}}
    found = nccl.nccl_settings(p, "GPU01", facts, "eno1", architecture="x86_64")
    assert found["problems"] == [] and [w.split(" is ")[1].split()[0] for w in found["warnings"]] == ["PHB"]
    assert nccl.nccl_settings(p, "GPU01", facts, "eno1", architecture="aarch64")["warnings"] == []


# -- SONiC LLDP: what lldpmgrd makes lldpd announce -----------------------------------------------------------------

def lldpmgrd_command(port_name, port_entry):
    """sonic-buildimage@086b03bd70 dockers/docker-lldp/lldpmgrd ``generate_pending_lldp_config_cmd_for_port``: the
    PORT entry's alias (the port name when it has none or it is empty) as Port ID, subtype local; its description
    when it has one."""
    alias = port_entry.get("alias") or port_name
    cmd = ["lldpcli", "configure", "ports", port_name, "lldp", "portidsubtype", "local", alias]
    if port_entry.get("description"):
        cmd += ["description", port_entry["description"]]
    return cmd


def lldpcli_json0(host_nic, system_name, cmd):
    """The host's ``lldpcli -f json0 show neighbors`` for one neighbour configured by ``cmd`` (json0 layout as in
    lldpd tests/integration/test_lldpcli.py)."""
    port = {"id": [{"type": cmd[6], "value": cmd[7]}], "ttl": [{"value": "120"}]}
    if "description" in cmd:
        port["descr"] = [{"value": cmd[cmd.index("description") + 1]}]
    chassis = {"id": [{"type": "mac", "value": "b8:ce:f6:10:00:01"}], "name": [{"value": system_name}]}
    interface = {"name": host_nic, "via": "LLDP", "rid": "1", "chassis": [chassis], "port": [port]}
    return json.dumps({"lldp": [{"interface": [interface]}]})


CONFIG_DB = {"PORT": {"Ethernet0": {"alias": "etp1", "lanes": "0,1,2,3,4,5,6,7", "speed": "400000", "index": "1"},
                      "Ethernet8": {"alias": "etp2", "lanes": "8,9,10,11,12,13,14,15", "speed": "400000",
                                    "index": "2", "description": "gpu01 ens6f0np0 rail1 [ainet]"},
                      "Ethernet16": {"lanes": "16,17,18,19,20,21,22,23", "speed": "400000", "index": "3"},
                      "Ethernet24": {"alias": "", "lanes": "24,25,26,27,28,29,30,31", "speed": "400000",
                                     "index": "4"}}}


@pytest.mark.parametrize("port", ["Ethernet8", "Ethernet0", "Ethernet16", "Ethernet24"])
def test_sonic_port_id_maps_back_to_the_port_with_or_without_alias(port):
    assert platforms.lldp_announces_alias("sonic")
    aliases = platforms.lldp_port_aliases("sonic", json.dumps(CONFIG_DB), "ToR su1-leaf1")
    cmd = lldpmgrd_command(port, CONFIG_DB["PORT"][port])
    (neighbour,) = lldp_parse.parse_lldpcli_json(lldpcli_json0("ens6f0np0", "su1-leaf1", cmd))
    assert neighbour["port_id_type"] == "local"
    assert port_names.planned_name(neighbour, True, aliases) == (port, None)
    # before lldpmgrd has configured the port, lldpd announces its ifname: compared as announced
    early = dict(neighbour, port_id=port, port_id_type="ifname")
    assert port_names.planned_name(early, True, aliases) == (port, None)


def test_sonic_port_id_one_stage_wrong_another_tors_table_or_none():
    cmd = lldpmgrd_command("Ethernet8", CONFIG_DB["PORT"]["Ethernet8"])
    (neighbour,) = lldp_parse.parse_lldpcli_json(lldpcli_json0("ens6f0np0", "su1-leaf1", cmd))
    assert port_names.planned_name(neighbour, True, nos_sonic.lldp_port_aliases(CONFIG_DB))[0] == "Ethernet8"
    # a breakout SKU's table (etp2 is not there): unverified with the reason, never a port name
    breakout = {"PORT": {"Ethernet0": {"alias": "etp1a"}, "Ethernet2": {"alias": "etp1b"}}}
    port, why = port_names.planned_name(neighbour, True, nos_sonic.lldp_port_aliases(breakout))
    assert port is None and "'etp2'" in why
    # no table at all: unverified, the alias named
    port, why = port_names.planned_name(neighbour, True, None)
    assert port is None and "config_db" in why
    # read as if the NOS announced names: the alias would be compared with EthernetN (every rail wrong_port)
    assert port_names.planned_name(neighbour)[0] == "etp2"


# -- the link test on IPv6 rails: the GID and perftest's flags ------------------------------------------------------

PERFTEST_SHORT = "d:x:p:D:F"
PERFTEST_LONG = ("ipv6", "ipv6-addr", "report_gbits")  # perftest@00b55b6 src/perftest_parameters.c: has_arg = 0


def perftest_parse(argv, long_options=PERFTEST_LONG):
    """getopt_long as perftest calls it: the options and the server name (none: this end is the server);
    ``ai_family`` AF_INET6 with ``--ipv6-addr`` (parser_parameters: ``user_param->ai_family = AF_INET6``), else
    AF_INET; ``--ipv6`` steers only the automatic GID choice, unused with ``-x``."""
    opts, rest = getopt.gnu_getopt(argv[1:], PERFTEST_SHORT, list(long_options))
    names = [o for o, _v in opts]
    return {"ai_family": "AF_INET6" if "--ipv6-addr" in names else "AF_INET",
            "gid_index": dict(opts).get("-x"), "servername": rest[0] if rest else None}


def round_argv(rail, device, role):
    """``ib_write_bw``'s argv as roles/link_test/tasks/round.yml builds it (server and client)."""
    argv = ["ib_write_bw", "-d", device["rdma_device"], "-x", str(device["gid_index"]), "-p", str(rail["port"]),
            "-D", "2", "-F", "--report_gbits"] + list(rail["perftest_args"])
    return argv + ([rail["peer_ip"]] if role == "client" else [])


@pytest.mark.parametrize("family", [6, 4])
def test_link_test_ib_write_bw_on_ipv6_and_ipv4_rails(family):
    p = plan(model("sriov", "shared", family))
    rounds = link_results.round_assignments(p, sorted(p["nodes"]), 1)
    me = rounds["GPU01"]
    peer = rounds[me["peer"]]
    rail, peer_rail = me["rails"][0], peer["rails"][0]
    ip = rail["ip"]
    gid = ip if family == 6 else "::ffff:" + ip
    rows = [(0, LINK_LOCAL, "IB/RoCE v1"), (1, LINK_LOCAL, "RoCE v2"), (2, gid, "IB/RoCE v1"), (3, gid, "RoCE v2")]
    facts, _table = gid_table(rows)
    netdevs = {"ens6f0np0": {"rdma_devices": ["mlx5_0"]}}
    (device,) = rdma_gather.rails(facts, ["ens6f0np0"], netdevs, {"ens6f0np0": ip + "/24"})
    assert device["gid_index"] == 3
    server = perftest_parse(round_argv(rail if me["role"] == "server" else peer_rail, device, "server"))
    client = perftest_parse(round_argv(peer_rail if me["role"] == "server" else rail, device, "client"))
    assert server["servername"] is None and client["servername"] == (peer_rail if me["role"] == "server" else rail)[
        "peer_ip"]
    want = "AF_INET6" if family == 6 else "AF_INET"
    assert server["ai_family"] == client["ai_family"] == want and client["gid_index"] == "3"


def test_link_test_one_stage_wrong_an_option_that_took_a_value_or_a_v1_only_gid():
    p = plan(model("sriov", "shared", 6))
    rail = [r for a in link_results.round_assignments(p, sorted(p["nodes"]), 1).values()
            for r in a["rails"]][0]
    device = {"rdma_device": "mlx5_0", "gid_index": 3}
    assert perftest_parse(round_argv(rail, device, "client"))["servername"] == rail["peer_ip"]
    # were --ipv6-addr an option with a value, it would swallow the peer's address: the client would start as a server
    with_value = [o + "=" if o == "ipv6-addr" else o for o in PERFTEST_LONG]
    assert perftest_parse(round_argv(rail, device, "client"), with_value)["servername"] is None
    # the rail address only in a RoCE v1 GID: no index, ib_write_bw is not run (links.md says why)
    facts, _table = gid_table([(0, LINK_LOCAL, "IB/RoCE v1"), (2, rail["ip"], "IB/RoCE v1")])
    netdevs = {"ens6f0np0": {"rdma_devices": ["mlx5_0"]}}
    (found,) = rdma_gather.rails(facts, ["ens6f0np0"], netdevs, {"ens6f0np0": rail["ip"]})
    assert found["rdma_device"] == "mlx5_0" and found["gid_index"] is None
    host = [h for h, n in p["nodes"].items() if n["rails"][0]["ip"] == rail["ip"]][0]
    lines = link_results.not_run(p, [host], True, {host: [found, dict(found, netdev=NICS[1], gid_index=3)]})
    assert len(lines) == 1 and lines[0].startswith("ib_write_bw skipped on %s %s" % (host, NICS[0]))
    assert "no RoCE v2 GID holding %s" % rail["ip"] in lines[0]
