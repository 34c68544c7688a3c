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

One list, two uses: :func:`pending` decides every object (its kind, name, namespace and labels, every check done) and
how to build it; :func:`render` builds them, :func:`count_objects` counts them without building one (the plan
report's table, :func:`summary_markdown`). Linear in nodes x rails: the plan's entries are indexed in one pass for
every rail (:func:`_rail_members`), and the check compares addresses as integers (16,384 nodes x 8 rails: 131,072
node pools).
"""

from __future__ import annotations

import bisect
import collections
import ipaddress
import json
import re
import socket

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.common.report_escape import md_text
from ansible_collections.ainet.fabric.plugins.module_utils.workload import nccl

# Pod CNIs -> the device plugin that hands out the rail NIC (or its VFs) to pods.
SRIOV_DP = ("sriov", "host-device")
SHARED_DP = ("macvlan", "ipvlan", "ipoib")
POD_CNIS = SRIOV_DP + SHARED_DP
DEFAULTS = {"ipam": "spiderpool", "namespace": "kube-system", "resource_prefix": "nvidia.com", "pod_offset": None,
            "pod_count": None, "rdma_hca_max": 100, "sriov_operator": False, "operator_namespace": None,
            "ipam_namespace": "nvidia-network-operator", "device_plugin_namespace": "kube-system",
            "workload_namespace": "default"}
# The SR-IOV network operator writes a SriovNetwork's NetworkAttachmentDefinition with its own RESOURCE_PREFIX
# (api/v1/helper.go RenderNetAttDef): openshift.io upstream (hack/env.sh, the chart's values.yaml), nvidia.com in
# NVIDIA's network operator. Each with the namespace its install docs put it in (the webhook ignores policies in any
# other namespace: pkg/webhook/validate.go).
OPERATOR_NAMESPACES = {"openshift.io": "sriov-network-operator", "nvidia.com": "nvidia-network-operator"}
# Resource names every SR-IOV operator webhook accepts (`^[a-zA-Z0-9_]+$` until sriov-network-operator f900cbc,
# pkg/webhook/validate.go; later ones also take an inner '-').
RESOURCE_RE = re.compile(r"^[A-Za-z0-9_]+\Z")
PCI_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\Z")
DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
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
    ("SriovIBNetwork", "40-sriovibnetworks.yaml"),
    ("NetworkAttachmentDefinition", "40-networkattachmentdefinitions.yaml"),
)
KIND_ORDER = dict((kind, index) for index, (kind, _name) in enumerate(FILES))
LABEL = "ainet.fabric/"
LABEL_CLUSTER, LABEL_FABRIC, LABEL_RAIL, LABEL_NODE = (LABEL + key for key in ("cluster", "fabric", "rail", "node"))
HOSTNAME_LABEL = "kubernetes.io/hostname"
FIELD_MANAGER = "ainet-fabric"  # kubectl apply --server-side: the objects this collection applies


# A name dns_name leaves as it is: lower-case letters, digits, '.' and '-', a letter or digit at each end.
_DNS_KEPT_RE = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?\Z")


def dns_name(*parts):
    """A DNS-1123 name from ``parts`` (lower case; other characters become ``-``)."""
    text = "-".join(str(p) for p in parts if p not in (None, "")).lower()
    if len(text) <= 253 and "--" not in text and _DNS_KEPT_RE.match(text):
        return text  # what the substitutions below would leave (every name of a node's pool)
    text = re.sub(r"[^a-z0-9.-]+", "-", text)
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
    """A rail's device-plugin resource (without its prefix): ``[<fabric>_]rail<r>``, every character the device
    plugins refuse (``-`` of a fabric name) as ``_``."""
    return ("rail%d" % rail) if fabric == "default" else re.sub(r"[^A-Za-z0-9_]", "_", "%s_rail%d" % (fabric, rail))


def node_name(host, node_names=None):
    """The Kubernetes node name of an inventory host: ``node_names[host]`` where given, else the host name in lower
    case (kubelet registers the lower-cased host name). Raises :class:`FabricModelError` where it is no DNS
    subdomain (a node name has to be one)."""
    name = (node_names or {}).get(host)
    name = str(name) if name is not None else str(host).lower()
    if len(name) > 253 or not DNS_SUBDOMAIN_RE.match(name):
        raise FabricModelError("k8s_objects_node_names.%s" % host, name, "is not a Kubernetes node name (a DNS "
                               "subdomain: lower-case letters, digits, '-' and '.')",
                               "map the host to the name its kubelet registers in k8s_objects_node_names")
    return name


def _node_names(plan, node_names):
    """``{host: node name}`` of every node of the plan; two hosts on one node name are refused."""
    out, seen = {}, {}
    unknown = sorted(set(node_names or {}) - set(plan["nodes"]))
    if unknown:
        raise FabricModelError("k8s_objects_node_names.%s" % unknown[0], (node_names or {})[unknown[0]],
                               "maps a host that is not a node of the plan", "map only the hosts of the node group")
    for host in sorted(plan["nodes"]):
        name = node_name(host, node_names)
        if name in seen:
            raise FabricModelError("k8s_objects_node_names.%s" % host, name, "is also the node name of %s" % seen[name],
                                   "give every host its own node name")
        seen[name] = host
        out[host] = name
    return out


class Pending(collections.namedtuple("Pending", "kind namespace name fabric rail node build args")):
    """An object that :func:`render` makes, decided but not built yet: its kind, namespace and name (what makes it
    one object once applied), the fabric, rail and node its labels name (None: no such label), and how it is built
    (``build(pending, cluster label, *args)``). :func:`pending` decides them all, every check done, in apply order;
    :func:`render` builds them and :func:`count_objects` counts them, so the objects and their counts are one list."""

    __slots__ = ()


def _meta(item, cluster_label):
    labels = {LABEL_CLUSTER: cluster_label, LABEL_FABRIC: item.fabric, LABEL_RAIL: str(item.rail)}
    if item.node is not None:
        labels[LABEL_NODE] = item.node
    meta = {"name": item.name, "labels": labels}
    if item.namespace:
        meta["namespace"] = item.namespace
    return meta


def _build(item, cluster_label, api_version, body, annotations=None):
    """The object of ``item``: its metadata (labels, then ``annotations``), then ``body`` (its ``spec``)."""
    meta = _meta(item, cluster_label)
    if annotations:
        meta["annotations"] = annotations
    out = {"apiVersion": api_version, "kind": item.kind, "metadata": meta}
    out.update(body)
    return out


def _build_configmap(item, cluster_label, data):
    """A ConfigMap: labelled with the cluster, and with its fabric where it has one (the NCCL env)."""
    labels = {LABEL_CLUSTER: cluster_label}
    if item.fabric is not None:
        labels[LABEL_FABRIC] = item.fabric
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": item.name, "namespace": item.namespace, "labels": labels}, "data": data}


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


def _rail_members(plan):
    """``{(fabric, rail): [(host, the plan's entry of that rail)]}``, nodes in node id order: one pass over the plan
    for every rail of every fabric."""
    out = {}
    for host, node in sorted(plan["nodes"].items(), key=lambda item: item[1]["node_id"]):
        for entry in node["rails"]:
            key = (entry["fabric"], entry["rail"])
            members = out.get(key)
            if members is None:
                members = out[key] = []
            members.append((host, entry))
    return out


def _interfaces(members, fabric, rail):
    """``{interface name: [hosts]}`` of a rail's NICs (``members``: the rail's :func:`_rail_members`)."""
    names = {}
    missing = []
    for host, entry in members:
        if entry["interface"]:
            names.setdefault(entry["interface"], []).append(host)
        else:
            missing.append(host)
    if missing:
        missing.sort()
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


def _cni_config(cni, name, master, mtu, ipam, ib=False):
    """The CNI configuration list of a NetworkAttachmentDefinition (as JSON text). ``sriov`` on InfiniBand is
    Mellanox's ``ib-sriov``. sriov-cni does not set a VF's MTU from its configuration (it reports the VF's own:
    pkg/sriov/sriov.go), so an Ethernet VF gets the fabric MTU from a chained ``tuning`` plugin."""
    plugin = {"type": "ib-sriov" if cni == "sriov" and ib else cni}
    chained = []
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
    elif cni == "sriov" and not ib:
        chained.append({"type": "tuning", "mtu": mtu})
    if ipam:
        plugin["ipam"] = ipam
    plugins = [plugin] + chained
    if cni in SRIOV_DP:
        plugins.append({"type": "rdma"})  # the netdev's RDMA device moves with it (exclusive netns mode)
    return json.dumps({"cniVersion": CNI_VERSION, "name": name, "plugins": plugins}, sort_keys=True)


def rail_pci(plan, given=None, hostvars=None):
    """``{host: {nic: PCI address}}`` of the plan's rail NICs: ``given[host][nic]`` (``k8s_objects_rail_pci``), else the
    ``pciid`` that Ansible's Linux network facts record per interface (the ``device`` link under /sys/class/net;
    ``ansible_facts[<nic with '-' as '_'>].pciid``) where the host's facts were gathered. Addresses are written in
    their full lower-case form (``0000:3b:00.0``); one that is not a PCI address is refused."""
    out = {}
    for host, node in plan["nodes"].items():
        mine = dict((given or {}).get(host) or {})
        facts = ((hostvars or {}).get(host) or {}).get("ansible_facts") or {}
        found = {}
        for entry in node["rails"]:
            nic = entry["interface"]
            if not nic:
                continue
            value = mine.get(nic)
            field = "k8s_objects_rail_pci.%s.%s" % (host, nic)
            if value is None:
                value = (facts.get(nic.replace("-", "_").replace(":", "_")) or {}).get("pciid") if isinstance(facts, dict) else None
                field = "hostvars[%s].ansible_facts.%s.pciid" % (host, nic)
            if value is None:
                continue
            text = str(value).strip().lower()
            text = "0000:" + text if len(text) == 7 else text
            if not PCI_RE.match(text):
                raise FabricModelError(field, value, "is not a PCI address", "write it as 0000:3b:00.0")
            found[nic] = text
        if found:
            out[host] = found
    return out


def _conflicts(per_node):
    """``per_node``: ``{host: [selector value per rail]}``. The values that select one rail's NIC on a node and another
    rail's on another node, as ``(value, (host, rail), (host, rail))``; None when there is none."""
    owner = {}
    for host in sorted(per_node):
        for index, value in enumerate(per_node[host]):
            if value is None:
                continue
            first = owner.setdefault(value, (host, index + 1))
            if first[1] != index + 1:
                return value, first, (host, index + 1)
    return None


def _pf_selection(plan, fname, rails, pci):
    """How each rail's PFs are selected: ``("rootDevices" | "pfNames", {rail: [values]}, conflict)``. PCI addresses
    (``pci``: ``{host: {nic: address}}``) where every node of the fabric has them, else NIC names; ``conflict`` is
    the first value that would select two rails' PFs (node models naming or placing their NICs differently), None
    when the union per rail is safe cluster-wide."""
    names = {}
    for host, node in plan["nodes"].items():
        entries = sorted((e for e in node["rails"] if e["fabric"] == fname), key=lambda e: e["rail"])
        names[host] = [e["interface"] for e in entries]
    addresses = dict((host, [((pci or {}).get(host) or {}).get(nic) for nic in nics]) for host, nics in names.items())
    choices = []
    if addresses and all(None not in values for values in addresses.values()):
        choices.append(("rootDevices", addresses))
    choices.append(("pfNames", names))
    ranked = [(key, per_node, _conflicts(per_node)) for key, per_node in choices]
    key, per_node, conflict = ([c for c in ranked if c[2] is None] or ranked)[0]
    union = dict((r, sorted(set(values[r - 1] for values in per_node.values()))) for r in rails)
    return key, union, per_node, conflict


def render(plan, node_names=None, pci=None):
    """The objects of every fabric whose ``cni`` attaches pods: a list in apply order (see :data:`FILES`).

    ``node_names``: ``{inventory host: Kubernetes node name}`` where they differ by more than case (see
    :func:`node_name`); ``pci``: ``{host: {nic: PCI address}}`` (the hosts' facts): the SR-IOV selectors pick PFs by
    PCI address where every node has them.

    Raises :class:`FabricModelError` (one line, naming the field) where the model cannot give pods a network:
    ``p2p`` addressing, whereabouts or host-local in ``exclusive`` (a cluster-wide range cannot follow a node's
    own subnet), host-local on more than one node, a master NIC without one name on every node, PF selectors
    that would cross rails in a device-plugin ConfigMap, a resource prefix the SR-IOV operator does not write."""
    cluster_label = dns_name(plan["cluster"]["name"])
    return [item.build(item, cluster_label, *item.args) for item in pending(plan, node_names, pci)]


def count_objects(plan, node_names=None, pci=None):
    """``{fabric: {kind: number}}`` of the objects :func:`render` makes, from the same :func:`pending` list (no
    object built); an object that names no fabric (a device plugin's ConfigMap) counts under ``None``. Raises what
    :func:`render` raises."""
    out = {}
    for item in pending(plan, node_names, pci):
        kinds = out.setdefault(item.fabric, {})
        kinds[item.kind] = kinds.get(item.kind, 0) + 1
    return out


def pending(plan, node_names=None, pci=None):
    """What :func:`render` makes, as :class:`Pending` objects in apply order, every check done (it raises what
    :func:`render` raises)."""
    cluster = plan["cluster"]["name"]
    k8s_nodes = _node_names(plan, node_names)
    members_of = _rail_members(plan)
    items = []
    configmaps = {}
    resources = {}
    for fname, fabric in plan["cluster"]["fabrics"].items():
        cni = fabric["cni"]
        if cni not in POD_CNIS:
            continue
        k8s = settings(fabric)
        field = _field(fabric, "kubernetes")
        mode = fabric["addressing"]["mode"]
        ib = mode == "infiniband"
        ipam = k8s["ipam"]
        namespace = k8s["namespace"]
        rails = [r for r in plan["rails"] if r["fabric"] == fname]
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
        rail_hosts = set(host for r in rails for host, _entry in members_of.get((fname, r["rail"]), ())) \
            if ipam == "host-local" else ()
        if len(rail_hosts) > 1:
            raise FabricModelError(field + ".ipam", ipam, "keeps its allocations on each node (one store per node), so "
                                   "the %d nodes of fabric %s would give their pods the same addresses from the one "
                                   "range of each rail" % (len(rail_hosts), fname),
                                   "use ipam whereabouts or spiderpool (one allocation store for the cluster)")
        if k8s["sriov_operator"] and cni != "sriov":
            raise FabricModelError(field + ".sriov_operator", True, "is for cni sriov (the fabric's cni is %s)" % cni,
                                   "remove sriov_operator, or set cni: sriov")
        operator_namespace = k8s["operator_namespace"]
        if k8s["sriov_operator"]:
            if k8s["resource_prefix"] not in OPERATOR_NAMESPACES:
                raise FabricModelError(field + ".resource_prefix", k8s["resource_prefix"], "is not the SR-IOV "
                                       "operator's: it names the resources pods request with its own RESOURCE_PREFIX "
                                       "(openshift.io upstream, nvidia.com in NVIDIA's network operator)",
                                       "set resource_prefix to the prefix of the operator you run")
            operator_namespace = operator_namespace or OPERATOR_NAMESPACES[k8s["resource_prefix"]]
        version = 6 if fabric["family"] == 6 else 4
        selection = None
        names_of = {}  # rail -> _interfaces
        if cni in SRIOV_DP:
            for rail_entry in rails:  # every node names its rail NICs
                rail = rail_entry["rail"]
                names_of[rail] = _interfaces(members_of.get((fname, rail), ()), fname, rail)
            selection = _pf_selection(plan, fname, [r["rail"] for r in rails], pci)
            key, _union, _per_node, conflict = selection
            if conflict and not k8s["sriov_operator"]:
                value, (host_a, rail_a), (host_b, rail_b) = conflict
                raise FabricModelError("fabric_rail_interfaces" if key == "pfNames" else "k8s_objects_rail_pci",
                                       value, "is rail %d's PF on %s and rail %d's on %s: the device plugin's "
                                       "selector of each rail (one ConfigMap for every node) would take both"
                                       % (rail_a, host_a, rail_b, host_b),
                                       "name the rail NICs alike on every node (a udev rule), or set "
                                       "kubernetes.sriov_operator (a policy per node)")
        for rail_entry in rails:
            rail = rail_entry["rail"]
            members = members_of.get((fname, rail), ())
            name = rail_name(cluster, fname, rail)
            resource = resource_name(fname, rail)
            if not RESOURCE_RE.match(resource) or resources.setdefault(resource, fname) != fname:
                raise FabricModelError("fabric_cluster.fabrics", fname, "gives the resource name %s, %s" % (
                    resource, "which the device plugins refuse" if not RESOURCE_RE.match(resource) else
                    "which is also fabric %s's" % resources[resource]),
                    "rename the fabric so its resource names differ (letters, digits, '_')")
            full_resource = "%s/%s" % (k8s["resource_prefix"], resource)
            names = names_of.get(rail)
            if names is None:
                names = _interfaces(members, fname, rail)
            pf_names = sorted(names)
            # -- the device plugin's share of the rail NIC
            if cni in SRIOV_DP:
                key, union, per_node, conflict = selection
                if k8s["sriov_operator"]:
                    items.extend(_node_policies(fabric, rail, name, resource, operator_namespace, key, union[rail],
                                                per_node, conflict, k8s_nodes, ib))
                else:
                    configmaps.setdefault(("sriovdp-config", k8s["device_plugin_namespace"]), []).append({
                        "resourceName": resource, "resourcePrefix": k8s["resource_prefix"],
                        "selectors": {"vendors": [VENDOR_MELLANOX], key: union[rail], "isRdma": True}})
            else:
                configmaps.setdefault(("rdma-devices", k8s["device_plugin_namespace"]), []).append({
                    "resourceName": resource, "resourcePrefix": k8s["resource_prefix"],
                    "rdmaHcaMax": k8s["rdma_hca_max"], "selectors": {"ifNames": pf_names}})
            master = _one_interface(names, rail, cni, _field(fabric, "cni")) \
                if cni in ("macvlan", "ipvlan", "ipoib", "host-device") else None
            # -- addresses
            if ipam == "nv-ipam":
                items.append(Pending("CIDRPool", k8s["ipam_namespace"], name, fname, rail, None, _build_cidr_pool,
                                     (fabric, rail_entry, members, k8s_nodes)))
                ipam_conf = {"type": "nv-ipam", "poolName": name, "poolType": "cidrpool"}
                if cni == "sriov" and k8s["sriov_operator"]:
                    items.append(_operator_network(fabric, rail, name, resource, operator_namespace, namespace,
                                                   ipam_conf, ib))
                else:
                    items.append(Pending("NetworkAttachmentDefinition", namespace, name, fname, rail, None, _build, (
                        "k8s.cni.cncf.io/v1",
                        {"spec": {"config": _cni_config(cni, name, master, fabric["mtu"], ipam_conf, ib)}},
                        {"k8s.v1.cni.cncf.io/resourceName": full_resource})))
            elif ipam == "spiderpool":
                pools = _spider_pools(fabric, rail_entry, members, k8s, field, name, k8s_nodes)
                items.extend(pools)
                items.append(_multus_config(cni, name, namespace, fname, rail, master, fabric["mtu"], full_resource,
                                            [p.name for p in pools], version, ib))
            else:
                first = last = gateway = None
                if ipam != "none":
                    first, last = shared_pod_range(fabric, rail_entry["block"], k8s, field)
                    gateway = rail_entry["gateway"]
                ipam_conf = _ipam_config(ipam, rail_entry["block"], first, last, gateway)
                if cni == "sriov" and k8s["sriov_operator"]:  # the operator writes the NAD (SriovIBNetwork: ib-sriov)
                    items.append(_operator_network(fabric, rail, name, resource, operator_namespace, namespace,
                                                   ipam_conf, ib))
                    continue
                items.append(Pending("NetworkAttachmentDefinition", namespace, name, fname, rail, None, _build, (
                    "k8s.cni.cncf.io/v1",
                    {"spec": {"config": _cni_config(cni, name, master, fabric["mtu"], ipam_conf, ib)}},
                    {"k8s.v1.cni.cncf.io/resourceName": full_resource})))
        items.append(_nccl_env(cluster, fname, fabric, k8s["workload_namespace"]))
    for (cm_name, namespace), entries in sorted(configmaps.items()):
        if cm_name == "sriovdp-config":
            data = {"resourceList": entries}
        else:
            data = {"periodicUpdateInterval": 300, "configList": entries}
        items.append(Pending("ConfigMap", namespace, cm_name, None, None, None, _build_configmap,
                             ({"config.json": json.dumps(data, indent=2, sort_keys=True) + "\n"},)))
    items.sort(key=lambda item: KIND_ORDER[item.kind])
    keys = [(item.kind, item.namespace, item.name) for item in items]
    for name, problem in () if len(set(keys)) == len(keys) else _collisions(
            (item.kind, item.namespace, item.name, item.fabric, item.rail, item.node) for item in items):
        raise FabricModelError("k8s objects", name, problem, "give every host its own node name in "
                               "k8s_objects_node_names")
    return items


def _owner(fabric, rail, node):
    """What an object was made for, from its labels (``rail`` as its label gives it, or None)."""
    if node:
        return "node %s" % node
    if fabric:
        return "fabric %s rail %s" % (fabric, rail)
    return "the cluster"


def _collisions(heads):
    """``(name, problem)`` per object that has the kind, namespace and name of an earlier one (after ``kubectl
    apply`` they are one object), naming what each was made for (the hosts, for a node's pool). ``heads``: per
    object ``(kind, namespace, name, fabric, rail, node)``."""
    seen, out = {}, []
    for head in heads:
        key = head[:3]
        if key in seen:
            out.append((key[2], "is the name of the %s of both %s and %s (one object once applied)"
                        % (key[0], _owner(*seen[key][3:]), _owner(*head[3:]))))
        else:
            seen[key] = head
    return out


def name_collisions(objects):
    """One line per object named like an earlier one of its kind and namespace (:func:`_collisions`), read from the
    objects themselves."""
    keys = [(obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"]) for obj in objects]
    if len(set(keys)) == len(keys):
        return []  # no two alike (the common case, told by a set)
    heads = []
    for key, obj in zip(keys, objects):
        labels = obj["metadata"].get("labels") or {}
        heads.append(key + (labels.get(LABEL_FABRIC), labels.get(LABEL_RAIL), labels.get(LABEL_NODE)))
    return ["%s %s" % (name, problem) for name, problem in _collisions(heads)]


def _node_policies(fabric, rail, name, resource, namespace, key, union, per_node, conflict, k8s_nodes, ib):
    """The SR-IOV operator's ``SriovNetworkNodePolicy`` of a rail: one for every node when the union of the rail's
    PF selectors is safe (:func:`_pf_selection`), else one per node (``nodeSelector`` on its hostname label,
    ``nicSelector`` its own PF of the rail): the operator merges the policies of one resource name per node."""
    fname = fabric["name"]
    base = {"resourceName": resource, "numVfs": (fabric.get("sriov") or {}).get("vfs", 0),
            "deviceType": "netdevice", "isRdma": True, "mtu": fabric["mtu"]}
    if ib:
        base["linkType"] = "ib"
    if conflict is None:
        spec = dict(base, nicSelector={"vendor": VENDOR_MELLANOX, key: union},
                    nodeSelector={"feature.node.kubernetes.io/network-sriov.capable": "true"})
        return [Pending("SriovNetworkNodePolicy", namespace, name, fname, rail, None, _build,
                        ("sriovnetwork.openshift.io/v1", {"spec": spec}))]
    return [Pending("SriovNetworkNodePolicy", namespace, dns_name(name, k8s_nodes[host]), fname, rail, host,
                    _build_node_policy, (base, key, per_node[host][rail - 1], k8s_nodes[host]))
            for host in sorted(per_node)]


def _build_node_policy(item, cluster_label, base, key, value, k8s_node):
    spec = dict(base, nicSelector={"vendor": VENDOR_MELLANOX, key: [value]}, nodeSelector={HOSTNAME_LABEL: k8s_node})
    return {"apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkNodePolicy",
            "metadata": _meta(item, cluster_label), "spec": spec}


def _operator_network(fabric, rail, name, resource, namespace, network_namespace, ipam_conf, ib):
    """The SR-IOV operator's network of a rail (it writes the NetworkAttachmentDefinition into ``networkNamespace``):
    ``SriovIBNetwork`` on InfiniBand (ib-sriov), else ``SriovNetwork``."""
    return Pending("SriovIBNetwork" if ib else "SriovNetwork", namespace, name, fabric["name"], rail, None, _build, (
        "sriovnetwork.openshift.io/v1",
        {"spec": {"resourceName": resource, "networkNamespace": network_namespace,
                  "ipam": json.dumps(ipam_conf or {}, sort_keys=True),
                  "metaPlugins": json.dumps({"type": "rdma"}, sort_keys=True)}}))


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
    # NCCL's own GID choice: AF_INET6 on an IPv6 fabric (its AF_INET default keeps an IPv6 rail on GID 0)
    data.update(nccl.gid_selection_env(fabric))
    name = dns_name(cluster, None if fname == "default" else fname, "nccl-env")
    return Pending("ConfigMap", namespace, name, fname, None, None, _build_configmap, (data,))


def _spider_pools(fabric, rail_entry, members, k8s, field, name, k8s_nodes):
    """A rail's SpiderIPPools: one for the rail (``shared``, ``infiniband``: the pods' range of the rail block), or
    one per node of the rail (``exclusive``: the node's pod ranges, bound to the node)."""
    fname, rail = fabric["name"], rail_entry["rail"]
    version = 6 if fabric["family"] == 6 else 4
    mode = fabric["addressing"]["mode"]
    if mode in ("shared", "infiniband"):
        first, last = shared_pod_range(fabric, rail_entry["block"], k8s, field)
        spec = {"ipVersion": version, "subnet": rail_entry["block"], "ips": ["%s-%s" % (first, last)]}
        if rail_entry["gateway"]:
            spec["gateway"] = rail_entry["gateway"]
        return [Pending("SpiderIPPool", None, name, fname, rail, None, _build,
                        ("spiderpool.spidernet.io/v2beta1", {"spec": spec}))]
    pools = []
    block, rail_text = rail_entry["block"], str(rail)
    for host, entry in members:
        if not entry["pod_ranges"]:
            raise FabricModelError(_field(fabric, "addressing.node_prefix"), fabric["addressing"]["node_prefix"],
                                   "leaves no pod address in a node's subnet (%s)" % entry["subnet"],
                                   "use a shorter node_prefix")
        # named from the Kubernetes node name (unique, _node_names), never the inventory name: gpu_1 (mapped) and
        # gpu-1 would both give <rail>-gpu-1
        node = k8s_nodes[host]
        pools.append(Pending("SpiderIPPool", None, dns_name(name, node), fname, rail, host, _build_node_pool,
                             (version, entry, block, node, rail_text)))
    return pools


def _build_node_pool(item, cluster_label, version, entry, block, k8s_node, rail_text):
    """A node's SpiderIPPool of a rail (``exclusive``): the node's subnet and pod ranges, the ToR as gateway and
    the route to the rail block via it, a ``nodeAffinity`` on the node (its metadata :func:`_meta`'s, written out:
    131,072 of them at 16,384 nodes)."""
    gateway = entry["gateway"]
    return {"apiVersion": "spiderpool.spidernet.io/v2beta1", "kind": "SpiderIPPool",
            "metadata": {"name": item.name, "labels": {LABEL_CLUSTER: cluster_label, LABEL_FABRIC: item.fabric,
                                                       LABEL_RAIL: rail_text, LABEL_NODE: item.node}},
            "spec": {"ipVersion": version, "subnet": entry["subnet"], "ips": list(entry["pod_ranges"]),
                     "gateway": gateway, "routes": [{"dst": block, "gw": gateway}],
                     "nodeAffinity": {"matchExpressions": [{"key": HOSTNAME_LABEL, "operator": "In",
                                                            "values": [k8s_node]}]}}}


def _build_cidr_pool(item, cluster_label, fabric, rail_entry, members, k8s_nodes):
    """The NVIDIA network operator's nv-ipam ``CIDRPool`` of a rail (``exclusive``): the rail block, each node's
    subnet as its static allocation with the ToR as gateway, the ToR's and the host's indexes excluded in every
    node's prefix, a route to the rail block; its ``nodeSelector`` the rail's nodes (without one the controller
    hands a prefix to every node of the cluster: pkg/ipam-controller/controllers/cidrpool/cidrpool.go)."""
    addressing = fabric["addressing"]
    allocations = [{"nodeName": k8s_nodes[host], "prefix": entry["subnet"], "gateway": entry["gateway"]}
                   for host, entry in members]
    size = 1 << ((128 if fabric["family"] == 6 else 32) - addressing["node_prefix"])
    last = size - (1 if fabric["family"] == 6 else 2)
    gateway_index = addressing["gateway_offset"] % (last + 1) if addressing["gateway_offset"] < 0 else \
        addressing["gateway_offset"]
    host_index = addressing["host_offset"]
    return _build(item, cluster_label, "nv-ipam.nvidia.com/v1alpha1", {
        "spec": {"cidr": rail_entry["block"], "perNodeNetworkPrefix": addressing["node_prefix"],
                 "gatewayIndex": gateway_index,
                 "perNodeExclusions": [{"startIndex": host_index, "endIndex": host_index}],
                 "staticAllocations": allocations, "routes": [{"dst": rail_entry["block"]}],
                 "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{
                     "key": HOSTNAME_LABEL, "operator": "In", "values": [a["nodeName"] for a in allocations]}]}]}}})


def _multus_config(cni, name, namespace, fabric, rail, master, mtu, resource, pools, version, ib=False):
    """A rail's SpiderMultusConfig. Its pools are named in the CNI configuration Spiderpool writes (the
    ``default_ipv4_ippool``/``default_ipv6_ippool`` of the spiderpool IPAM, in order: a pod takes the first whose
    node affinity holds its node; pkg/ipam/pool_selections.go getPoolFromNetConf), never left to the namespace's or
    cluster's default pools. ``sriov`` on InfiniBand is ``ib-sriov``."""
    ippools = {"ipv%d" % version: pools}
    spec = {}
    if cni == "sriov" and ib:
        spec = {"cniType": "ib-sriov", "ibsriov": {"resourceName": resource, "rdmaIsolation": True,
                                                   "ippools": ippools}}
    elif cni == "sriov":
        spec = {"cniType": "sriov", "sriov": {"resourceName": resource, "rdmaIsolation": True, "mtu": mtu,
                                              "ippools": ippools}}
    elif cni in ("macvlan", "ipvlan"):
        spec = {"cniType": cni, cni: {"master": [master], "mtu": mtu, "rdmaResourceName": resource,
                                      "ippools": ippools}}
    elif cni == "ipoib":
        spec = {"cniType": "ipoib", "ipoib": {"master": master, "ippools": ippools}}
    elif cni == "host-device":
        # A custom CNI gets no coordinator, which moves a secondary NIC's routes out of the pod's main table; without
        # clean_gateway the spiderpool IPAM returns a default route via the pool's gateway (spiderpool
        # pkg/utils/convert/convert.go ConvertResultsToIPConfigsAndAllRoutes) and host-device installs it there
        # (an ECMP default over eth0 and the rail on IPv6). The pools' route to the rail block stays.
        ipam = {"type": "spiderpool", "default_ipv%d_ippool" % version: list(pools), "clean_gateway": True}
        plugin = {"cniVersion": CNI_VERSION, "name": name, "plugins": [
            {"type": "host-device", "device": master, "ipam": ipam}, {"type": "rdma"}]}
        spec = {"cniType": "custom", "customCNI": json.dumps(plugin, sort_keys=True)}
    annotations = {"k8s.v1.cni.cncf.io/resourceName": resource} if cni == "host-device" else None
    return Pending("SpiderMultusConfig", namespace, name, fabric, rail, None, _build,
                   ("spiderpool.spidernet.io/v2beta1", {"spec": spec}, annotations))


def kubectl_argv(kubeconfig, verb, path):
    """The argv of ``kubectl <verb>`` (``diff`` or ``apply``) of one file, server-side, with this collection as the
    field manager (the objects it applies are its own: ``ainet-fabric``)."""
    if verb not in ("diff", "apply"):
        raise ValueError("kubectl verb %r" % (verb,))
    return ["kubectl", "--kubeconfig", kubeconfig, verb, "--server-side", "--field-manager", FIELD_MANAGER, "-f", path]


def by_file(objects):
    """``{file name: [objects]}`` in apply order (see :data:`FILES`); kinds without objects have no file."""
    of_kind = {}
    for obj in objects:  # one pass (a list per kind)
        items = of_kind.get(obj["kind"])
        if items is None:
            items = of_kind[obj["kind"]] = []
        items.append(obj)
    return dict((name, of_kind[kind]) for kind, name in FILES if kind in of_kind)


# -- the objects against the plan ------------------------------------------------------------------------------
# Addresses are compared as (IP version, integer): parsed by the C library's inet_pton (strict dotted quads, no
# leading zeros), or where it refuses a text by ipaddress (its error, or a form only it takes, such as a scope id);
# a message names them as ipaddress writes them.

def _address(text):
    """``(version, integer)`` of an IP address text; ValueError where it is none."""
    try:
        if ":" in text:
            return 6, int.from_bytes(socket.inet_pton(socket.AF_INET6, text), "big")
        return 4, int.from_bytes(socket.inet_pton(socket.AF_INET, text), "big")
    except (OSError, TypeError, ValueError):
        address = ipaddress.ip_address(text)
        return address.version, int(address)


def _network(text):
    """``(version, first, last)`` (integers) of a network text such as ``10.0.0.0/27``; ValueError where it is none
    or has host bits set (as ipaddress.ip_network)."""
    base, _sep, length = text.partition("/")
    try:
        version, first = _address(base)
    except ValueError:
        version, first = None, None
    bits = 32 if version == 4 else 128
    if version is not None and length.isascii() and length.isdigit() and int(length) <= bits:
        size = 1 << (bits - int(length))
        if not first % size:
            return version, first, first + size - 1
    net = ipaddress.ip_network(text)  # its error; or a form only it reads (a netmask, no length)
    return net.version, int(net.network_address), int(net.broadcast_address)


def _text(address):
    """An address ``(version, integer)`` as ipaddress writes it."""
    version, value = address
    return str(ipaddress.IPv4Address(value) if version == 4 else ipaddress.IPv6Address(value))


def _ranges(text_ranges):
    out = []
    for text in text_ranges:
        first, _sep, last = text.partition("-")
        first = _address(first.strip())
        last = _address(last.strip()) if last else first
        out.append((first, last))
    return out


def _check_cidr_pool(obj, what, fabric, rail, rail_entry, entries, seen, k8s_nodes):
    """A CIDRPool against the plan: the rail block, every planned node of the rail with its own subnet and ToR
    gateway, no other node, the host's index excluded in each node's prefix (its ranges join the overlap check).
    ``entries``: ``{(host, fabric, rail): the plan's entry}``."""
    problems = []
    spec = obj["spec"]
    if spec.get("cidr") != rail_entry["block"]:
        problems.append("%s: cidr %s, the plan's rail block is %s" % (what, spec.get("cidr"), rail_entry["block"]))
    excluded = set()
    for item in spec.get("perNodeExclusions") or []:
        excluded.update(range(int(item.get("startIndex", 0)), int(item.get("endIndex", -1)) + 1))
    given = dict((a.get("nodeName"), a) for a in spec.get("staticAllocations") or [])
    for host in sorted(k8s_nodes):
        entry = entries.get((host, fabric, rail))
        if entry is None:
            continue
        allocation = given.pop(k8s_nodes[host], None)
        if allocation is None:
            problems.append("%s: %s has no static allocation (the plan gives it %s)" % (what, host, entry["subnet"]))
            continue
        if allocation.get("prefix") != entry["subnet"] or allocation.get("gateway") != entry["gateway"]:
            problems.append("%s: %s gets %s via %s, the plan has %s via %s" % (
                what, host, allocation.get("prefix"), allocation.get("gateway"), entry["subnet"], entry["gateway"]))
            continue
        version, first, last = _network(entry["subnet"])
        index = _address(entry["ip"])[1] - first
        if index not in excluded:
            problems.append("%s: %s's address %s (index %d of its prefix) is not excluded" % (
                what, host, entry["ip"], index))
        seen.setdefault((fabric, rail), []).append(((version, first), (version, last), "%s (%s)" % (what, host)))
    for host in sorted(given):
        problems.append("%s: %s is not a node of rail %d in the plan" % (what, host, rail))
    return problems


def check_against_plan(plan, objects, node_names=None):
    """Problems (one line each) of rendered objects against the plan, read back from the objects themselves: every
    pool (a SpiderIPPool's ``ips``, an IPAM range of a NetworkAttachmentDefinition) inside its rail's subnet
    (the node's, in ``exclusive``), holding no node's host address and no gateway; no two pools of a rail
    overlapping; every gateway the ToR's address of that rail (and node); a node's pool bound to that node; every
    pod rail of the plan with its network."""
    problems = name_collisions(objects)
    seen = {}
    networks = set()
    k8s_nodes = _node_names(plan, node_names)
    rails = dict(((entry["fabric"], entry["rail"]), entry) for entry in reversed(plan["rails"]))  # the first wins
    entries = {}  # (host, fabric, rail) -> the plan's entry
    host_addresses = {}  # (fabric, rail) -> sorted [(address as an integer, host)]
    for host, node in plan["nodes"].items():
        for entry in node["rails"]:
            entries.setdefault((host, entry["fabric"], entry["rail"]), entry)
            host_addresses.setdefault((entry["fabric"], entry["rail"]), []).append((_address(entry["ip"])[1], host))
    for addresses in host_addresses.values():
        addresses.sort()
    network_kinds = ("SpiderMultusConfig", "NetworkAttachmentDefinition", "SriovNetworkNodePolicy", "SriovNetwork",
                     "SriovIBNetwork")
    for obj in objects:
        kind = obj["kind"]
        if kind == "ConfigMap":
            continue
        meta = obj["metadata"]
        labels = meta.get("labels", {})
        what = "%s %s" % (kind, meta["name"])
        fabric, rail = labels.get(LABEL_FABRIC), int(labels.get(LABEL_RAIL, 0))
        rail_entry = rails.get((fabric, rail))
        if rail_entry is None:
            problems.append("%s: fabric %s rail %s is not in the plan" % (what, fabric, rail))
            continue
        if kind in network_kinds:
            networks.add((fabric, rail))
        if kind == "CIDRPool":
            problems.extend(_check_cidr_pool(obj, what, fabric, rail, rail_entry, entries, seen, k8s_nodes))
            continue
        ranges, subnet, gateway, node = [], None, None, labels.get(LABEL_NODE)
        if kind == "SpiderIPPool":
            spec = obj["spec"]
            ranges, subnet, gateway = _ranges(spec.get("ips", [])), spec.get("subnet"), spec.get("gateway")
            affinity = [v for e in (spec.get("nodeAffinity") or {}).get("matchExpressions", [])
                        if e.get("key") == HOSTNAME_LABEL and e.get("operator") == "In" for v in e.get("values", [])]
            if node is not None and affinity != [k8s_nodes.get(node, node)]:
                problems.append("%s: the pool of %s is bound to %s" % (what, node, affinity or "every node"))
        elif kind in ("NetworkAttachmentDefinition", "SriovNetwork", "SriovIBNetwork"):
            if kind == "NetworkAttachmentDefinition":
                ipam = json.loads(obj["spec"]["config"])["plugins"][0].get("ipam") or {}
            else:
                ipam = json.loads(obj["spec"].get("ipam") or "{}")
            if ipam.get("type") == "whereabouts":
                ranges = [(_address(ipam["range_start"]), _address(ipam["range_end"]))]
                subnet, gateway = ipam.get("range"), ipam.get("gateway")
            elif ipam.get("type") == "host-local":
                item = ipam["ranges"][0][0]
                ranges = [(_address(item["rangeStart"]), _address(item["rangeEnd"]))]
                subnet, gateway = item.get("subnet"), item.get("gateway")
        if not ranges:
            continue
        if node is not None:
            entry = entries.get((node, fabric, rail))
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
        version, net_first, net_last = _network(want_subnet)
        gateway_at = _address(want_gateway)[1] if want_gateway else None
        for first, last in ranges:
            if first > last or first[0] != version or last[0] != version or not \
                    net_first <= first[1] <= last[1] <= net_last:
                problems.append("%s: %s-%s is not inside %s" % (what, _text(first), _text(last), want_subnet))
                continue
            if gateway_at is not None and first[1] <= gateway_at <= last[1]:
                problems.append("%s: %s-%s holds the gateway %s" % (what, _text(first), _text(last), want_gateway))
            addresses = host_addresses.get((fabric, rail), [])
            index = bisect.bisect_left(addresses, (first[1], ""))
            while index < len(addresses) and addresses[index][0] <= last[1]:
                problems.append("%s: %s-%s holds %s, the address of %s" % (
                    what, _text(first), _text(last), _text((version, addresses[index][0])), addresses[index][1]))
                index += 1
            seen.setdefault((fabric, rail), []).append((first, last, what))
    for ranges in seen.values():
        ranges.sort()
        for (first, last, what), (o_first, o_last, other) in zip(ranges, ranges[1:]):
            if o_first <= last:
                problems.append("%s: %s-%s overlaps %s (%s-%s)" % (
                    other, _text(o_first), _text(o_last), what, _text(first), _text(last)))
    for fname, fabric in plan["cluster"]["fabrics"].items():
        if fabric["cni"] in POD_CNIS:
            for entry in plan["rails"]:
                if entry["fabric"] == fname and (fname, entry["rail"]) not in networks:
                    problems.append("fabric %s rail %d (cni %s) has no network object"
                                    % (fname, entry["rail"], fabric["cni"]))
    return problems


def summary_markdown(plan):
    """The plan report's section on the Kubernetes objects: per fabric its CNI, IPAM and objects per kind (counted
    from :func:`count_objects`: no object built), or why its objects cannot be rendered."""
    lines = ["## Kubernetes objects", ""]
    pods = [(name, f) for name, f in plan["cluster"]["fabrics"].items() if f["cni"] in POD_CNIS]
    if not pods:
        return "\n".join(lines + ["No fabric attaches pods (every fabric's cni is host).", ""])
    try:
        per_fabric = count_objects(plan)
    except FabricModelError as exc:
        return "\n".join(lines + ["Not rendered: %s" % md_text(exc), ""])
    lines += ["| fabric | cni | ipam | objects (playbooks/k8s.yml) |", "|---|---|---|---|"]
    for name, fabric in pods:
        counts = dict(per_fabric.get(None, {}))  # the device plugins' ConfigMaps serve every fabric
        for kind, number in per_fabric.get(name, {}).items():
            counts[kind] = counts.get(kind, 0) + number
        lines.append("| %s | %s | %s | %s |" % (md_text(name), md_text(fabric["cni"]), md_text(settings(fabric)["ipam"]),
                                                ", ".join("%d %s" % (counts[kind], kind) for kind, _file in FILES
                                                          if kind in counts)))
    return "\n".join(lines + [""])
