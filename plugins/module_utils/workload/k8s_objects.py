# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes objects of the fabrics, from the rail plan: what pods on the rail NICs need, with the addresses
the host and the ToR were given.

The fabric's ``cni`` (the model) decides which objects there are; its ``kubernetes`` mapping tunes them
(``docs/workloads.md``):

* **Device plugins** - ``sriov`` and ``host-device``: the SR-IOV network device plugin's ConfigMap
  (``sriovdp-config``, a resource per rail selecting the rail PFs by name, ``isRdma``), or with
  ``sriov_operator`` a ``SriovNetworkNodePolicy`` per rail (``sriov`` only); ``macvlan``, ``ipvlan``, ``ipoib``:
  the RDMA shared device plugin's ConfigMap (``rdma-devices``, a resource per rail selecting the rail NIC by
  ``ifNames``, ``rdmaHcaMax``).
* **NCCL** - a ConfigMap ``<cluster>[-<fabric>]-nccl-env`` for pods' ``envFrom``: ``NCCL_IB_TC``/``NCCL_IB_SL`` from
  the lossless profile, ``NCCL_CROSS_NIC=0``, ``NCCL_SOCKET_IFNAME==eth0``.
* **IPAM** - ``nv-ipam`` (``exclusive``): a ``CIDRPool`` per rail with every node's subnet as a static allocation
  and the ToR as its gateway, and a ``SriovNetwork`` (with ``sriov_operator``) or a NetworkAttachmentDefinition
  naming it; ``spiderpool``: a ``SpiderIPPool`` per rail (``shared``, ``infiniband``: the pod range of the rail
  block) or per node and rail (``exclusive``: the node's subnet less the ToR's and the host's addresses, with a
  ``nodeAffinity`` on the node and a route to the rail block via the ToR), and a ``SpiderMultusConfig`` per rail
  (Spiderpool writes the NetworkAttachmentDefinition from it); ``whereabouts``, ``host-local``, ``none``: a
  ``NetworkAttachmentDefinition`` per rail with that IPAM in its CNI configuration (``shared``, ``infiniband``).
  ``p2p`` leaves no address for a pod (a /31 per node and rail) and is refused.

Every object carries the labels ``ainet.fabric/cluster``, ``ainet.fabric/fabric`` and ``ainet.fabric/rail``
(and ``ainet.fabric/node`` on a node's pool): :func:`check_against_plan` reads them back to check the objects
against the plan. Pure functions; the action plugin ``k8s_objects`` writes the files.
"""

from __future__ import annotations

import bisect
import ipaddress
import json
import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError

# Pod CNIs -> the device plugin that hands out the rail NIC (or its VFs) to pods.
SRIOV_DP = ("sriov", "host-device")
SHARED_DP = ("macvlan", "ipvlan", "ipoib")
POD_CNIS = SRIOV_DP + SHARED_DP
DEFAULTS = {"ipam": "spiderpool", "namespace": "kube-system", "resource_prefix": "nvidia.com", "pod_offset": None,
            "pod_count": None, "rdma_hca_max": 100, "sriov_operator": False}
VENDOR_MELLANOX = "15b3"
CNI_VERSION = "0.4.0"
# Files, one per kind, in the order they are applied (device plugins before the networks that name their
# resources, pools before the configurations that name them).
FILES = (
    ("ConfigMap", "10-configmaps.yaml"),
    ("SriovNetworkNodePolicy", "20-sriovnetworknodepolicies.yaml"),
    ("SpiderIPPool", "30-spiderippools.yaml"),
    ("CIDRPool", "30-cidrpools.yaml"),
    ("SpiderMultusConfig", "40-spidermultusconfigs.yaml"),
    ("SriovNetwork", "40-sriovnetworks.yaml"),
    ("NetworkAttachmentDefinition", "40-networkattachmentdefinitions.yaml"),
)
KIND_ORDER = dict((kind, index) for index, (kind, _name) in enumerate(FILES))
LABEL = "ainet.fabric/"
HOSTNAME_LABEL = "kubernetes.io/hostname"


def dns_name(*parts):
    """A DNS-1123 name from ``parts`` (lower case; other characters become ``-``)."""
    text = re.sub(r"[^a-z0-9.-]+", "-", "-".join(str(p) for p in parts if p not in (None, "")).lower())
    text = re.sub(r"-{2,}", "-", text).strip("-.")
    return text[:253]


def _field(fabric, key):
    prefix = "fabric_cluster" if fabric["name"] == "default" else "fabric_cluster.fabrics.%s" % fabric["name"]
    return "%s.%s" % (prefix, key)


def settings(fabric):
    """A fabric's ``kubernetes`` mapping with its defaults."""
    out = dict(DEFAULTS)
    out.update(dict((k, v) for k, v in (fabric.get("kubernetes") or {}).items() if v is not None))
    return out


def rail_name(cluster, fabric, rail):
    """The name of a rail's objects: ``<cluster>[-<fabric>]-rail<r>``."""
    return dns_name(cluster, None if fabric == "default" else fabric, "rail%d" % rail)


def resource_name(fabric, rail):
    """A rail's device-plugin resource (without its prefix): ``[<fabric>_]rail<r>``."""
    return ("rail%d" % rail) if fabric == "default" else "%s_rail%d" % (fabric, rail)


def _meta(name, namespace, cluster, fabric, rail, node=None):
    labels = {LABEL + "cluster": dns_name(cluster), LABEL + "fabric": fabric, LABEL + "rail": str(rail)}
    if node is not None:
        labels[LABEL + "node"] = node
    meta = {"name": name, "labels": labels}
    if namespace:
        meta["namespace"] = namespace
    return meta


def shared_pod_range(plan_fabric, block, k8s, field):
    """(first, last) addresses of the pods of one rail block (``shared``, ``infiniband``): ``pod_offset`` and
    ``pod_count``, by default the upper half of the block (the lower half is the nodes')."""
    net = ipaddress.ip_network(block)
    last_usable = net.num_addresses - (2 if net.version == 4 else 1)
    offset = k8s["pod_offset"] if k8s["pod_offset"] is not None else net.num_addresses // 2
    count = k8s["pod_count"] if k8s["pod_count"] is not None else last_usable - offset + 1
    if offset < 1 or offset > last_usable or count < 1 or offset + count - 1 > last_usable:
        raise FabricModelError(field + ".pod_offset", offset,
                               "with pod_count %d leaves the rail block %s (usable offsets 1-%d)"
                               % (count, block, last_usable),
                               "give pod_offset and pod_count inside the rail block")
    addressing = plan_fabric["addressing"]
    taken = [o for o in (addressing.get("gateway_offset"),) if o is not None]
    for index in taken:
        index = index if index >= 0 else last_usable + 1 + index
        if offset <= index <= offset + count - 1:
            raise FabricModelError(field + ".pod_offset", offset, "puts the rail gateway (offset %d) among the pods"
                                   % index, "move the pod range off the gateway")
    return net[offset], net[offset + count - 1]


def _interfaces(plan, fabric, rail):
    """``{interface name: [hosts]}`` of a rail's NICs."""
    names = {}
    for host, node in sorted(plan["nodes"].items(), key=lambda item: item[1]["node_id"]):
        for entry in node["rails"]:
            if entry["fabric"] == fabric and entry["rail"] == rail and entry["interface"]:
                names.setdefault(entry["interface"], []).append(host)
    missing = sorted(host for host, node in plan["nodes"].items() for entry in node["rails"]
                     if entry["fabric"] == fabric and entry["rail"] == rail and not entry["interface"])
    if missing:
        raise FabricModelError("fabric_rail_interfaces", None,
                               "is not set on %s (the Kubernetes objects of fabric %s select rail %d's NIC by name)"
                               % (", ".join(missing[:5]) + (" ..." if len(missing) > 5 else ""), fabric, rail),
                               "set fabric_rail_interfaces for every node")
    return names


def _one_interface(names, rail, cni, field):
    if len(names) != 1:
        seen = "; ".join("%s on %s" % (name, ", ".join(hosts[:3]) + (" ..." if len(hosts) > 3 else ""))
                         for name, hosts in sorted(names.items(), key=lambda item: -len(item[1])))
        raise FabricModelError(field, cni, "needs one interface name for rail %d on every node (a %s network names "
                               "its master NIC once, cluster-wide), the nodes have %s" % (rail, cni, seen),
                               "give rail %d's NIC the same name on every node (a udev rule), or use cni sriov"
                               % rail)
    return list(names)[0]


def _ipam_config(kind, block, first, last, gateway):
    if kind == "whereabouts":
        out = {"type": "whereabouts", "range": block, "range_start": str(first), "range_end": str(last)}
    elif kind == "host-local":
        out = {"type": "host-local", "ranges": [[{"subnet": block, "rangeStart": str(first),
                                                  "rangeEnd": str(last)}]]}
        if gateway:
            out["ranges"][0][0]["gateway"] = gateway
        return out
    else:
        return {}
    if gateway:
        out["gateway"] = gateway
    return out


def _cni_config(cni, name, master, mtu, ipam):
    """The CNI configuration list of a NetworkAttachmentDefinition (as JSON text)."""
    plugin = {"type": cni}
    if cni in ("macvlan", "ipvlan"):
        plugin.update(master=master, mtu=mtu)
        if cni == "macvlan":
            plugin["mode"] = "bridge"
        else:
            plugin["mode"] = "l2"
    elif cni == "ipoib":
        plugin.update(master=master)
    elif cni == "host-device":
        plugin.update(device=master)
    elif cni == "sriov":
        plugin.update(mtu=mtu)
    if ipam:
        plugin["ipam"] = ipam
    plugins = [plugin]
    if cni in SRIOV_DP:
        plugins.append({"type": "rdma"})  # the netdev's RDMA device moves with it (exclusive netns mode)
    return json.dumps({"cniVersion": CNI_VERSION, "name": name, "plugins": plugins}, sort_keys=True)


def render(plan):
    """The objects of every fabric whose ``cni`` attaches pods: a list in apply order (see :data:`FILES`).

    Raises :class:`FabricModelError` (one line, naming the field) where the model cannot give pods a network:
    ``p2p`` addressing, whereabouts or host-local in ``exclusive`` (a cluster-wide range cannot follow a node's
    own subnet), a master NIC without one name on every node."""
    cluster = plan["cluster"]["name"]
    objects = []
    configmaps = {}
    for fname, fabric in plan["cluster"]["fabrics"].items():
        cni = fabric["cni"]
        if cni not in POD_CNIS:
            continue
        k8s = settings(fabric)
        field = _field(fabric, "kubernetes")
        mode = fabric["addressing"]["mode"]
        ipam = k8s["ipam"]
        namespace = k8s["namespace"]
        if mode == "p2p" and ipam != "none":
            raise FabricModelError(field + ".ipam", ipam, "cannot give pods addresses in p2p addressing (each node "
                                   "and rail has a /31 or /127: no address is left)",
                                   "use exclusive addressing, or ipam none")
        if ipam == "nv-ipam" and mode != "exclusive":
            raise FabricModelError(field + ".ipam", ipam, "gives each node a prefix of the rail block, which only "
                                   "exclusive addressing plans (the fabric's mode is %s)" % mode,
                                   "use ipam spiderpool or whereabouts, or exclusive addressing")
        if mode == "exclusive" and ipam in ("whereabouts", "host-local"):
            raise FabricModelError(field + ".ipam", ipam, "hands out one cluster-wide range per network, while in "
                                   "exclusive addressing every node has its own subnet per rail",
                                   "use ipam spiderpool (a pool per node and rail), or shared addressing")
        if k8s["sriov_operator"] and cni != "sriov":
            raise FabricModelError(field + ".sriov_operator", True, "is for cni sriov (the fabric's cni is %s)" % cni,
                                   "remove sriov_operator, or set cni: sriov")
        version = 6 if fabric["family"] == 6 else 4
        rails = [r for r in plan["rails"] if r["fabric"] == fname]
        for rail_entry in rails:
            rail = rail_entry["rail"]
            name = rail_name(cluster, fname, rail)
            resource = resource_name(fname, rail)
            full_resource = "%s/%s" % (k8s["resource_prefix"], resource)
            names = _interfaces(plan, fname, rail)
            pf_names = sorted(names)
            # -- the device plugin's share of the rail NIC
            if cni in SRIOV_DP and k8s["sriov_operator"]:
                objects.append({
                    "apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkNodePolicy",
                    "metadata": _meta(name, namespace, cluster, fname, rail),
                    "spec": {"resourceName": resource, "numVfs": (fabric.get("sriov") or {}).get("vfs", 0),
                             "nicSelector": {"vendor": VENDOR_MELLANOX, "pfNames": pf_names},
                             "nodeSelector": {"feature.node.kubernetes.io/network-sriov.capable": "true"},
                             "deviceType": "netdevice", "isRdma": True, "mtu": fabric["mtu"]}})
            elif cni in SRIOV_DP:
                configmaps.setdefault(("sriovdp-config", namespace), []).append({
                    "resourceName": resource, "resourcePrefix": k8s["resource_prefix"],
                    "selectors": {"vendors": [VENDOR_MELLANOX], "pfNames": pf_names, "isRdma": True}})
            else:
                configmaps.setdefault(("rdma-devices", namespace), []).append({
                    "resourceName": resource, "resourcePrefix": k8s["resource_prefix"],
                    "rdmaHcaMax": k8s["rdma_hca_max"], "selectors": {"ifNames": pf_names}})
            master = _one_interface(names, rail, cni, _field(fabric, "cni")) \
                if cni in ("macvlan", "ipvlan", "ipoib", "host-device") else None
            # -- addresses
            pools = []
            if ipam == "nv-ipam":
                objects.append(_cidr_pool(plan, fabric, rail_entry, name, namespace, cluster))
                ipam_conf = {"type": "nv-ipam", "poolName": name, "poolType": "cidrpool"}
                if cni == "sriov" and k8s["sriov_operator"]:
                    meta = _meta(name, namespace, cluster, fname, rail)
                    objects.append({"apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetwork",
                                    "metadata": meta,
                                    "spec": {"resourceName": resource, "networkNamespace": namespace,
                                             "ipam": json.dumps(ipam_conf, sort_keys=True),
                                             "metaPlugins": json.dumps({"type": "rdma"}, sort_keys=True)}})
                else:
                    meta = _meta(name, namespace, cluster, fname, rail)
                    meta["annotations"] = {"k8s.v1.cni.cncf.io/resourceName": full_resource}
                    objects.append({"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
                                    "metadata": meta,
                                    "spec": {"config": _cni_config(cni, name, master, fabric["mtu"], ipam_conf)}})
            elif ipam == "spiderpool":
                pools = _spider_pools(plan, fabric, rail_entry, k8s, field, cluster, name)
                objects.extend(pools)
                objects.append(_multus_config(cni, name, namespace, cluster, fname, rail, master, fabric["mtu"],
                                              full_resource, [p["metadata"]["name"] for p in pools], version))
            else:
                first = last = gateway = None
                if ipam != "none":
                    first, last = shared_pod_range(fabric, rail_entry["block"], k8s, field)
                    gateway = rail_entry["gateway"]
                conf = _cni_config(cni, name, master, fabric["mtu"],
                                   _ipam_config(ipam, rail_entry["block"], first, last, gateway))
                meta = _meta(name, namespace, cluster, fname, rail)
                meta["annotations"] = {"k8s.v1.cni.cncf.io/resourceName": full_resource}
                objects.append({"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
                                "metadata": meta, "spec": {"config": conf}})
        objects.append(_nccl_env(plan["cluster"]["name"], fname, fabric, namespace))
    for (cm_name, namespace), entries in sorted(configmaps.items()):
        if cm_name == "sriovdp-config":
            data = {"resourceList": entries}
        else:
            data = {"periodicUpdateInterval": 300, "configList": entries}
        objects.append({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": cm_name, "namespace": namespace,
                                     "labels": {LABEL + "cluster": dns_name(cluster)}},
                        "data": {"config.json": json.dumps(data, indent=2, sort_keys=True) + "\n"}})
    objects.sort(key=lambda o: KIND_ORDER[o["kind"]])
    return objects


def _nccl_env(cluster, fname, fabric, namespace):
    """The pod env of NCCL on the fabric (``envFrom`` this ConfigMap): the lossless class the hosts and ToRs were
    given, one rail per channel, the pod's cluster interface for NCCL's sockets. ``NCCL_IB_HCA`` is left to the
    pod (it sees only its own devices in exclusive netns mode), the GID index to the node facts (the ``nccl``
    role reports it)."""
    qos = fabric.get("qos") or {}
    data = {"NCCL_CROSS_NIC": "0", "NCCL_SOCKET_IFNAME": "=eth0"}
    if fabric["addressing"]["mode"] != "infiniband":
        if qos.get("roce_tos") is not None:
            data["NCCL_IB_TC"] = str(qos["roce_tos"])
        if qos.get("roce_priority") is not None:
            data["NCCL_IB_SL"] = str(qos["roce_priority"])
    name = dns_name(cluster, None if fname == "default" else fname, "nccl-env")
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {LABEL + "cluster": dns_name(cluster), LABEL + "fabric": fname}},
            "data": data}


def _spider_pools(plan, fabric, rail_entry, k8s, field, cluster, name):
    fname, rail = fabric["name"], rail_entry["rail"]
    version = 6 if fabric["family"] == 6 else 4
    mode = fabric["addressing"]["mode"]
    if mode in ("shared", "infiniband"):
        first, last = shared_pod_range(fabric, rail_entry["block"], k8s, field)
        spec = {"ipVersion": version, "subnet": rail_entry["block"], "ips": ["%s-%s" % (first, last)]}
        if rail_entry["gateway"]:
            spec["gateway"] = rail_entry["gateway"]
        return [{"apiVersion": "spiderpool.spidernet.io/v2beta1", "kind": "SpiderIPPool",
                 "metadata": _meta(name, None, cluster, fname, rail), "spec": spec}]
    pools = []
    for host in sorted(plan["nodes"], key=lambda h: plan["nodes"][h]["node_id"]):
        for entry in plan["nodes"][host]["rails"]:
            if entry["fabric"] != fname or entry["rail"] != rail:
                continue
            if not entry["pod_ranges"]:
                raise FabricModelError(_field(fabric, "addressing.node_prefix"), fabric["addressing"]["node_prefix"],
                                       "leaves no pod address in a node's subnet (%s)" % entry["subnet"],
                                       "use a shorter node_prefix")
            spec = {"ipVersion": version, "subnet": entry["subnet"], "ips": list(entry["pod_ranges"]),
                    "gateway": entry["gateway"],
                    "routes": [{"dst": rail_entry["block"], "gw": entry["gateway"]}],
                    "nodeAffinity": {"matchExpressions": [{"key": HOSTNAME_LABEL, "operator": "In",
                                                           "values": [host]}]}}
            pools.append({"apiVersion": "spiderpool.spidernet.io/v2beta1", "kind": "SpiderIPPool",
                          "metadata": _meta(dns_name(name, host), None, cluster, fname, rail, node=host),
                          "spec": spec})
    return pools


def _cidr_pool(plan, fabric, rail_entry, name, namespace, cluster):
    """The NVIDIA network operator's nv-ipam ``CIDRPool`` of a rail (``exclusive``): the rail block, each node's
    subnet as its static allocation with the ToR as gateway, the ToR's and the host's indexes excluded in every
    node's prefix, a route to the rail block."""
    fname, rail = fabric["name"], rail_entry["rail"]
    addressing = fabric["addressing"]
    allocations = []
    for host in sorted(plan["nodes"], key=lambda h: plan["nodes"][h]["node_id"]):
        for entry in plan["nodes"][host]["rails"]:
            if entry["fabric"] == fname and entry["rail"] == rail:
                allocations.append({"nodeName": host, "prefix": entry["subnet"], "gateway": entry["gateway"]})
    size = 1 << ((128 if fabric["family"] == 6 else 32) - addressing["node_prefix"])
    last = size - (1 if fabric["family"] == 6 else 2)
    gateway_index = addressing["gateway_offset"] % (last + 1) if addressing["gateway_offset"] < 0 else \
        addressing["gateway_offset"]
    host_index = addressing["host_offset"]
    return {"apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "CIDRPool",
            "metadata": _meta(name, namespace, cluster, fname, rail),
            "spec": {"cidr": rail_entry["block"], "perNodeNetworkPrefix": addressing["node_prefix"],
                     "gatewayIndex": gateway_index,
                     "perNodeExclusions": [{"startIndex": host_index, "endIndex": host_index}],
                     "staticAllocations": allocations, "routes": [{"dst": rail_entry["block"]}]}}


def _multus_config(cni, name, namespace, cluster, fabric, rail, master, mtu, resource, pools, version):
    ippools = {"ipv%d" % version: pools}
    spec = {}
    if cni == "sriov":
        spec = {"cniType": "sriov", "sriov": {"resourceName": resource, "rdmaIsolation": True, "mtu": mtu,
                                              "ippools": ippools}}
    elif cni in ("macvlan", "ipvlan"):
        spec = {"cniType": cni, cni: {"master": [master], "mtu": mtu, "rdmaResourceName": resource,
                                      "ippools": ippools}}
    elif cni == "ipoib":
        spec = {"cniType": "ipoib", "ipoib": {"master": master, "ippools": ippools}}
    elif cni == "host-device":
        plugin = {"cniVersion": CNI_VERSION, "name": name, "plugins": [
            {"type": "host-device", "device": master, "ipam": {"type": "spiderpool"}}, {"type": "rdma"}]}
        spec = {"cniType": "custom", "customCNI": json.dumps(plugin, sort_keys=True)}
    meta = _meta(name, namespace, cluster, fabric, rail)
    if cni == "host-device":
        meta["annotations"] = {"k8s.v1.cni.cncf.io/resourceName": resource}
    return {"apiVersion": "spiderpool.spidernet.io/v2beta1", "kind": "SpiderMultusConfig", "metadata": meta,
            "spec": spec}


def by_file(objects):
    """``{file name: [objects]}`` in apply order (see :data:`FILES`); kinds without objects have no file."""
    out = {}
    for kind, name in FILES:
        items = [o for o in objects if o["kind"] == kind]
        if items:
            out[name] = items
    return out


# -- the objects against the plan ------------------------------------------------------------------------------

def _ranges(text_ranges):
    out = []
    for text in text_ranges:
        first, _sep, last = text.partition("-")
        first = ipaddress.ip_address(first.strip())
        last = ipaddress.ip_address(last.strip()) if last else first
        out.append((first, last))
    return out


def _plan_rail(plan, fabric, rail):
    for entry in plan["rails"]:
        if entry["fabric"] == fabric and entry["rail"] == rail:
            return entry
    return None


def _plan_entry(plan, host, fabric, rail):
    node = plan["nodes"].get(host)
    for entry in (node or {}).get("rails", ()):
        if entry["fabric"] == fabric and entry["rail"] == rail:
            return entry
    return None


def _check_cidr_pool(plan, obj, what, fabric, rail, rail_entry, seen):
    """A CIDRPool against the plan: the rail block, every planned node of the rail with its own subnet and ToR
    gateway, no other node, the host's index excluded in each node's prefix (its ranges join the overlap check)."""
    problems = []
    spec = obj["spec"]
    if spec.get("cidr") != rail_entry["block"]:
        problems.append("%s: cidr %s, the plan's rail block is %s" % (what, spec.get("cidr"), rail_entry["block"]))
    excluded = set()
    for item in spec.get("perNodeExclusions") or []:
        excluded.update(range(int(item.get("startIndex", 0)), int(item.get("endIndex", -1)) + 1))
    given = dict((a.get("nodeName"), a) for a in spec.get("staticAllocations") or [])
    for host in sorted(plan["nodes"]):
        entry = _plan_entry(plan, host, fabric, rail)
        if entry is None:
            continue
        allocation = given.pop(host, None)
        if allocation is None:
            problems.append("%s: %s has no static allocation (the plan gives it %s)" % (what, host, entry["subnet"]))
            continue
        if allocation.get("prefix") != entry["subnet"] or allocation.get("gateway") != entry["gateway"]:
            problems.append("%s: %s gets %s via %s, the plan has %s via %s" % (
                what, host, allocation.get("prefix"), allocation.get("gateway"), entry["subnet"], entry["gateway"]))
            continue
        net = ipaddress.ip_network(entry["subnet"])
        index = int(ipaddress.ip_address(entry["ip"])) - int(net.network_address)
        if index not in excluded:
            problems.append("%s: %s's address %s (index %d of its prefix) is not excluded" % (
                what, host, entry["ip"], index))
        seen.setdefault((fabric, rail), []).append((net[0], net[-1], "%s (%s)" % (what, host)))
    for host in sorted(given):
        problems.append("%s: %s is not a node of rail %d in the plan" % (what, host, rail))
    return problems


def check_against_plan(plan, objects):
    """Problems (one line each) of rendered objects against the plan, read back from the objects themselves: every
    pool (a SpiderIPPool's ``ips``, an IPAM range of a NetworkAttachmentDefinition) inside its rail's subnet
    (the node's, in ``exclusive``), holding no node's host address and no gateway; no two pools of a rail
    overlapping; every gateway the ToR's address of that rail (and node); a node's pool bound to that node; every
    pod rail of the plan with its network."""
    problems = []
    seen = {}
    networks = set()
    host_addresses = {}  # (fabric, rail) -> sorted [(address, host)]
    for host, node in plan["nodes"].items():
        for entry in node["rails"]:
            host_addresses.setdefault((entry["fabric"], entry["rail"]), []).append(
                (ipaddress.ip_address(entry["ip"]), host))
    for addresses in host_addresses.values():
        addresses.sort()
    for obj in objects:
        kind = obj["kind"]
        labels = obj["metadata"].get("labels", {})
        what = "%s %s" % (kind, obj["metadata"]["name"])
        if kind == "ConfigMap":
            continue
        fabric, rail = labels.get(LABEL + "fabric"), int(labels.get(LABEL + "rail", 0))
        rail_entry = _plan_rail(plan, fabric, rail)
        if rail_entry is None:
            problems.append("%s: fabric %s rail %s is not in the plan" % (what, fabric, rail))
            continue
        if kind in ("SpiderMultusConfig", "NetworkAttachmentDefinition", "SriovNetworkNodePolicy", "SriovNetwork"):
            networks.add((fabric, rail))
        if kind == "CIDRPool":
            problems.extend(_check_cidr_pool(plan, obj, what, fabric, rail, rail_entry, seen))
            continue
        ranges, subnet, gateway, node = [], None, None, labels.get(LABEL + "node")
        if kind == "SpiderIPPool":
            spec = obj["spec"]
            ranges, subnet, gateway = _ranges(spec.get("ips", [])), spec.get("subnet"), spec.get("gateway")
            affinity = [v for e in (spec.get("nodeAffinity") or {}).get("matchExpressions", [])
                        if e.get("key") == HOSTNAME_LABEL and e.get("operator") == "In" for v in e.get("values", [])]
            if node is not None and affinity != [node]:
                problems.append("%s: the pool of %s is bound to %s" % (what, node, affinity or "every node"))
        elif kind == "NetworkAttachmentDefinition":
            conf = json.loads(obj["spec"]["config"])
            ipam = conf["plugins"][0].get("ipam") or {}
            if ipam.get("type") == "whereabouts":
                ranges = [(ipaddress.ip_address(ipam["range_start"]), ipaddress.ip_address(ipam["range_end"]))]
                subnet, gateway = ipam.get("range"), ipam.get("gateway")
            elif ipam.get("type") == "host-local":
                item = ipam["ranges"][0][0]
                ranges = [(ipaddress.ip_address(item["rangeStart"]), ipaddress.ip_address(item["rangeEnd"]))]
                subnet, gateway = item.get("subnet"), item.get("gateway")
        if not ranges:
            continue
        if node is not None:
            entry = _plan_entry(plan, node, fabric, rail)
            if entry is None:
                problems.append("%s: %s has no rail %d of fabric %s in the plan" % (what, node, rail, fabric))
                continue
            want_subnet, want_gateway = entry["subnet"], entry["gateway"]
        else:
            want_subnet, want_gateway = rail_entry["block"], rail_entry["gateway"]
        if subnet != want_subnet:
            problems.append("%s: subnet %s, the plan has %s" % (what, subnet, want_subnet))
        if (gateway or None) != (want_gateway or None):
            problems.append("%s: gateway %s, the ToR's address in the plan is %s" % (what, gateway, want_gateway))
        net = ipaddress.ip_network(want_subnet)
        for first, last in ranges:
            if first > last or first not in net or last not in net:
                problems.append("%s: %s-%s is not inside %s" % (what, first, last, want_subnet))
                continue
            if want_gateway and first <= ipaddress.ip_address(want_gateway) <= last:
                problems.append("%s: %s-%s holds the gateway %s" % (what, first, last, want_gateway))
            addresses = host_addresses.get((fabric, rail), [])
            index = bisect.bisect_left(addresses, (first, ""))
            while index < len(addresses) and addresses[index][0] <= last:
                problems.append("%s: %s-%s holds %s, the address of %s" % ((what, first, last) + addresses[index]))
                index += 1
            seen.setdefault((fabric, rail), []).append((first, last, what))
    for ranges in seen.values():
        ranges.sort()
        for (first, last, what), (o_first, o_last, other) in zip(ranges, ranges[1:]):
            if o_first <= last:
                problems.append("%s: %s-%s overlaps %s (%s-%s)" % (other, o_first, o_last, what, first, last))
    for fname, fabric in plan["cluster"]["fabrics"].items():
        if fabric["cni"] in POD_CNIS:
            for entry in plan["rails"]:
                if entry["fabric"] == fname and (fname, entry["rail"]) not in networks:
                    problems.append("fabric %s rail %d (cni %s) has no network object"
                                    % (fname, entry["rail"], fabric["cni"]))
    return problems


def summary_markdown(plan):
    """The plan report's section on the Kubernetes objects: per fabric its CNI, IPAM and objects per kind, or why
    its objects cannot be rendered."""
    lines = ["## Kubernetes objects", ""]
    pods = [(name, f) for name, f in plan["cluster"]["fabrics"].items() if f["cni"] in POD_CNIS]
    if not pods:
        return "\n".join(lines + ["No fabric attaches pods (every fabric's cni is host).", ""])
    try:
        objects = render(plan)
    except FabricModelError as exc:
        return "\n".join(lines + ["Not rendered: %s" % exc, ""])
    lines += ["| fabric | cni | ipam | objects (playbooks/k8s.yml) |", "|---|---|---|---|"]
    for name, fabric in pods:
        counts = {}
        for obj in objects:
            if obj["metadata"].get("labels", {}).get(LABEL + "fabric") in (name, None):
                counts[obj["kind"]] = counts.get(obj["kind"], 0) + 1
        lines.append("| %s | %s | %s | %s |" % (name, fabric["cni"], settings(fabric)["ipam"], ", ".join(
            "%d %s" % (counts[kind], kind) for kind, _file in FILES if kind in counts)))
    return "\n".join(lines + [""])
