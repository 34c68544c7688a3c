# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster model's schema: one declarative description of every key of ``fabric_cluster``.

From :data:`CLUSTER` come (1) the shape validation and normalisation - unknown keys, types,
required keys, choices, ranges and formats, every problem of a model reported at once, each as
one line naming the field, the value and the fix; (2) the key table of ``docs/cluster-model.md``;
(3) the ``fabric_cluster`` entry of the roles' ``meta/argument_specs.yml`` (its keys in the description).  A unit test fails
when the docs or the argument specs drift from it (``tests/schema/regen.py`` rewrites them).

This module is the only place that names the model's keys, types, choices and ranges, and the only
place that converts inventory values: :func:`normalize` returns the tree with every value in its
Python form (``"12"`` -> 12, ``"yes"`` -> True, ``"172.17.0.0/16"`` -> an ``ip_network``,
``"1-32"`` -> ``(1, 32)``, ``"3A:00.0"`` -> ``"0000:3a:00.0"``), and the loaders
(:mod:`cluster_model`, :mod:`qos_profile`, :mod:`rdma_host`) read only that tree.  Rules that
relate several keys (capacity, overlaps, collisions between fabrics, offsets inside a subnet,
defaults that depend on other keys) stay in the loaders, which run them once the shape is right.

Why not ansible-core's ArgumentSpecValidator: it cannot express ranges, list uniqueness or
rules across fields, its messages name options but not list indexes, and it is not
importable without Ansible (the planner runs in plain Python too). Why not a JSON-schema
library: one more dependency on every managed host and controller for about 150 lines.
"""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError, FabricModelErrors

ROOT = "fabric_cluster"


class Key(object):
    """One key: its type, whether it is required, its documented default, limits and meaning.

    ``type``: ``int``, ``bool``, ``str``, ``cidr``, ``dict``, ``list`` or ``raw`` (not checked).
    ``elements``: the type of a list's items (``int``, ``str``, ``cidr``, ``dict``, ``pci``: a PCI
    address, ``range``: a node id or ``FIRST-LAST``), or of a mapping's values.
    ``minimum``/``maximum``: of an ``int``, or of each number of a list's or mapping's elements.
    ``choices``: the values allowed.  ``pattern``: a regular expression a ``str`` must match.
    ``noun``: what a value is called in messages ("is not a valid <noun>", "is not a known <noun>").
    ``fix``: the fix of a pattern, emptiness or exclusion problem.
    ``options``: the keys of a mapping (or of each mapping of a list).  ``values``: the keys of
    each value of a mapping (the fabrics).  ``keys``: a Key every key of a mapping must satisfy.
    ``unique``: no element twice (after normalisation).  ``single``: a single element stands for a
    list of one.  ``nonempty``: an empty list or mapping is refused.  ``exclude``: ``((network,
    what), ...)`` a ``cidr`` must not overlap.  ``removed``: the release that removed the key.
    """

    __slots__ = ("type", "description", "required", "default", "minimum", "maximum", "choices", "elements",
                 "options", "values", "removed", "keys", "pattern", "noun", "fix", "unique", "single", "nonempty",
                 "exclude")

    def __init__(self, type_, description, required=False, default=None, minimum=None, maximum=None,
                 choices=None, elements=None, options=None, values=None, removed=None, keys=None, pattern=None,
                 noun=None, fix=None, unique=False, single=False, nonempty=False, exclude=None):
        self.type = type_
        self.description = description
        self.required = required
        self.default = default
        self.minimum = minimum
        self.maximum = maximum
        self.choices = choices
        self.elements = elements
        self.options = options
        self.values = values
        self.removed = removed
        self.keys = keys
        self.pattern = pattern
        self.noun = noun
        self.fix = fix
        self.unique = unique
        self.single = single
        self.nonempty = nonempty
        self.exclude = exclude


MAX_RAILS = 64
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}\Z")
FABRIC_NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,15}\Z")
# An inventory host name that may reach a configuration grammar (a ToR port description, a plan key, a report): a
# host name of RFC 952 as RFC 1123 section 2.1 relaxes it (a label may start with a digit; labels of 1-63 characters,
# 253 in all), with '_' allowed in a label since Ansible inventories use it in aliases (gpu_01); or an IPv6 address
# literal (Ansible takes one as a host). No whitespace, no control character, no ';', '!', '#', '|', '/'.
_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
HOST_NAME_RE = re.compile(r"^(?=[^\n]{1,253}\Z)%s(?:\.%s)*\Z" % (_LABEL, _LABEL))
HOST_NAME = ("an RFC 1123 host name (dot-separated labels of 1-63 letters, digits, '-' or '_', not starting or "
             "ending with '-'; 253 characters at most) or an IPv6 address")
# A port template: the characters NOS port names use (Ethernet1/1, swp1s0, ethernet1/1/1) and the {fields}; no
# whitespace, ';', '|' or control character can reach a port name, a CLI line or a config_db key.
# A spine block (pod) name: a DNS label of at most 16 characters, so that it is a Kubernetes label value, a DNS name, a
# Slurm switch or block name (no hostlist bracket or comma) and a part of longer names, unchanged.
SPINE_BLOCK_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,14}[a-z0-9])?\Z")
PORT_TEMPLATE_RE = re.compile(r"^[A-Za-z0-9_./{}-]{1,64}\Z")
# Characters that end, split or hide a line in some output grammar: C0 and C1 controls (tab, CR, LF, U+0085 among
# them), the Unicode line and paragraph separators, and the invisible format characters (bidirectional overrides,
# zero-width characters) that make a text read otherwise than it is.
LINE_BREAKING = (r"\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
                 r"\ufeff\ufff9-\ufffb")
_BREAKING = re.compile("[%s]" % LINE_BREAKING)
# Free text (descriptions): one line of at most 255 printable characters.
TEXT_RE = re.compile(r"^[^%s]{0,255}\Z" % LINE_BREAKING)

# The descriptions (cluster, fabric, ToR): stored in the plan, placed in no configuration.
FREE_TEXT = Key("str", "free text: one line of at most 255 characters, no control characters", pattern=TEXT_RE,
                noun="one-line text", fix="write one line of at most 255 characters without control characters")


def breaking_character(text):
    """The first character of ``text`` that ends, splits or hides a line (:data:`LINE_BREAKING`), or None."""
    found = _BREAKING.search(text)
    return found.group(0) if found else None


def is_host_name(name):
    """Whether ``name`` is a host name a node may have (:data:`HOST_NAME`)."""
    if not isinstance(name, str):
        return False
    if HOST_NAME_RE.match(name):
        return True
    if ":" not in name or "%" in name:
        return False
    try:
        ipaddress.IPv6Address(name)
    except ValueError:
        return False
    return True


def check_host_name(name, field="inventory_hostname"):
    """``name`` when it is a host name a node may have (:data:`HOST_NAME`), else one-line FabricModelError naming
    ``field`` (the value is printed with repr, so a line break in it shows as ``\\n``)."""
    if is_host_name(name):
        return name
    raise FabricModelError(field, name, "is not a host name a node may have: it must be %s" % HOST_NAME,
                           "rename the inventory host (its address can stay in ansible_host)")


BDF = re.compile(r"^(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\Z")
# Ranges no fabric may touch: a supernet overlapping one (0.0.0.0/0 or ::/0 included) would
# route the host's default, loopback, link-local or multicast traffic through a rail.
NOT_A_FABRIC = tuple((ipaddress.ip_network(net), what) for net, what in (
    ("0.0.0.0/8", "this-network"), ("127.0.0.0/8", "loopback"), ("169.254.0.0/16", "link-local"),
    ("224.0.0.0/4", "multicast"), ("240.0.0.0/4", "reserved and broadcast"),
    ("::/8", "unspecified, loopback and IPv4-mapped"), ("fe80::/10", "link-local"), ("ff00::/8", "multicast")))

MODES = ("shared", "exclusive", "p2p", "infiniband")
ADDRESSING = {
    "mode": Key("str", "`shared` (one subnet per rail), `exclusive` (a subnet per node per rail), `p2p` (a /31 or "
                "/127 per node per rail) or `infiniband` (IPoIB, no gateways)", required=True, choices=MODES),
    "supernet": Key("cidr", "the fabric's RDMA supernet, IPv4 or IPv6; host bits must be zero; not in the "
                    "this-network, loopback, link-local, multicast or reserved ranges", required=True,
                    exclude=NOT_A_FABRIC, fix="use a private unicast range, e.g. 172.17.0.0/16 or fd00:17::/48"),
    "rail_prefix": Key("int", "prefix of each rail's block, carved from the supernet in rail order (rail 1 first)",
                       required=True, minimum=0, maximum=128),
    "node_prefix": Key("int", "prefix of each node's subnet inside its rail block; required in `exclusive`, "
                       "refused elsewhere", minimum=0, maximum=128),
    "gateway_offset": Key("int", "index of the ToR/gateway address inside each subnet; negative counts from the "
                          "end (-1 = last usable). Not in `p2p`/`infiniband`", default="1"),
    "host_offset": Key("int", "index of the (first) host address; not in `p2p`", default="gateway_offset + 1 (or 1)"),
}
ROUTING = {
    "table_base": Key("int", "rail r uses policy-routing table `table_base + r`; must avoid 253-255",
                      default="150, then +100 per fabric", minimum=1, maximum=2 ** 31 - 1),
    "rule_priority": Key("int", "rail r's `from <address> lookup <table>` rule sits at `rule_priority + r` (the band "
                         "the fabric owns on every host); must stay below 32766", default="1000, then +100 per fabric",
                         minimum=1, maximum=32765),
    "aggregate_route": Key("bool", "add a route for the whole supernet via the rail-1 gateway to `main`",
                           default="true in `exclusive`/`p2p`"),
    "keep_off_rule": Key("raw", "the rail tables now route only the fabric's own prefixes, so traffic from a rail "
                         "address to anything else falls through to the next rule without a keep-off rule",
                         removed="0.2.0"),
}
TOR = {
    "name": Key("str", "switch name (unique in the cluster): letters, digits, `-`, `_`, `.`", required=True,
                pattern=NAME_RE, noun="switch name", fix="use letters, digits, '-', '_' and '.'"),
    "rails": Key("list", "the rails it serves: a rail id or a list of them", required=True, elements="int",
                 minimum=1, maximum=MAX_RAILS, single=True, nonempty=True,
                 fix="list the rails this ToR serves, e.g. [1]"),
    "nodes": Key("list", "the node ids it serves: `1-32`, an id, or a list of both", default="every node",
                 elements="range", minimum=1, single=True),
    "port_template": Key("str", "port name per node: `{node}`, `{local}` (1-based position in the node range), "
                         "`{rail}`; letters, digits, `_`, `.`, `/`, `-` and the fields, 64 characters at most",
                         default="swp{node}", pattern=PORT_TEMPLATE_RE, noun="port template",
                         fix="use letters, digits, '_', '.', '/', '-' and {node}, {local} or {rail}, e.g. "
                             "Ethernet1/{node}"),
    "platform": Key("str", "the switch's NOS: `sonic` (config_db), `cumulus` (NVUE), `eos` (Arista EOS), `nxos` "
                    "(Cisco NX-OS) are rendered by `tor_config`; `os10` is only read by the lossless check; `linux` (a "
                    "Linux bridge or switchdev switch) only has its counters read by the load test; unset: not "
                    "rendered",
                    choices=("sonic", "cumulus", "eos", "nxos", "os10", "linux")),
    "port_mtu": Key("int", "MTU of the rail ports (and SVIs); at least the fabric MTU plus the lossless profile's "
                    "`switch_mtu_headroom`; at most 9214 on `eos`", default="9216 (`eos`: 9214)", minimum=1280,
                    maximum=9216),
    "port_speed": Key("str", "speed of the rail ports, written into the rendered config when set",
                      choices=("10G", "25G", "40G", "50G", "100G", "200G", "400G", "800G")),
    "port_fec": Key("str", "forward error correction of the rail ports when set: `rs` (Reed-Solomon), `fc` "
                    "(Fire Code / BASE-R), `none`; with `port_speed`, only what IEEE 802.3 defines at that speed "
                    "(200G and up: `rs` only; 100G: `rs` or `none`; `fc` up to 50G)", choices=("rs", "fc", "none")),
    "spine_block": Key("str", "the spine block (pod) the ToR's uplinks reach: the ToRs of one spine block share its "
                       "spines, so nodes behind them are nearer to each other than to the rest of the fabric. The "
                       "schedulers' topologies (playbooks/topology.yml) put a rail group under it. Set on every ToR of "
                       "the fabric or on none (then the whole fabric is one spine block, `sb1`); 1-16 lower-case "
                       "letters, digits and `-`", default="sb1", pattern=SPINE_BLOCK_RE, noun="spine block name",
                       fix="use 1-16 lower-case letters, digits and '-', starting and ending with a letter or digit"),
    "description": FREE_TEXT,
}
QOS = {
    "preset": Key("str", "`nvidia` (DSCP 26 -> priority 3, CNP DSCP 48 -> 6 strict, ToS 106), `sonic` (SONiC's "
                  "stock template: DSCP 3/4 lossless), `spiderpool` (DSCP 40 -> priority 5), `custom` (nothing "
                  "preset) or `none` (no lossless class)", default="nvidia",
                  choices=("nvidia", "sonic", "spiderpool", "custom", "none"), noun="preset"),
    "trust": Key("str", "the switch ports' trust mode (hosts always trust DSCP)", default="by preset",
                 choices=("dscp", "pcp,dscp")),
    "roce_dscp": Key("int", "DSCP of RoCE traffic", default="by preset", minimum=0, maximum=63),
    "roce_priority": Key("int", "priority (and queue) that carries RoCE", default="by preset", minimum=0, maximum=7),
    "cnp_dscp": Key("int", "DSCP of congestion notification packets", default="by preset", minimum=0, maximum=63),
    "cnp_priority": Key("int", "priority (and queue) of CNPs; must not be a PFC priority", default="by preset",
                        minimum=0, maximum=7),
    "cnp_strict": Key("bool", "CNPs go to a strict-priority queue", default="by preset"),
    "pfc_priorities": Key("list", "priorities with PFC (must include roce_priority)", elements="int",
                          default="[roce_priority] (sonic: [3, 4])", minimum=0, maximum=7, unique=True),
    "dscp_priorities": Key("dict", "further DSCPs and the priority each lands in, beside roce_dscp and cnp_dscp "
                           "(every PFC priority needs one; sonic: {4: 4})", default="by preset",
                           keys=Key("int", "DSCP", minimum=0, maximum=63), elements="int", minimum=0, maximum=7),
    "dcqcn_priorities": Key("list", "priorities with DCQCN (ECN reaction and notification point) on the hosts",
                            elements="int", default="[roce_priority]", minimum=0, maximum=7, unique=True),
    "ecn_queues": Key("list", "switch queues that mark ECN", elements="int", default="by preset", minimum=0,
                      maximum=7, unique=True),
    "ecn_min_bytes": Key("int", "ECN minimum threshold in bytes", default="by preset", minimum=1,
                         maximum=2 ** 31 - 1),
    "ecn_max_bytes": Key("int", "ECN maximum threshold in bytes", default="by preset", minimum=1,
                         maximum=2 ** 31 - 1),
    "ecn_probability": Key("int", "ECN marking probability at the maximum threshold, percent", default="by preset",
                           minimum=1, maximum=100),
    "ets_weights": Key("dict", "ETS bandwidth percent per queue 0..7 (sum 100; the CNP queue is strict and not "
                       "listed)", default="by preset", keys=Key("int", "queue", minimum=0, maximum=7),
                       elements="int", minimum=1, maximum=100),
    "pfc_watchdog": Key("bool", "the switch ports run the PFC watchdog on the lossless priorities",
                        default="by preset"),
    "roce_tos": Key("int", "ToS for `cma_roce_tos` and `traffic_class`", default="roce_dscp << 2 | 2",
                    minimum=0, maximum=255),
    "switch_mtu_headroom": Key("int", "bytes the switch port MTU must exceed the host MTU by", default="18",
                               minimum=0, maximum=256),
    "share_priority": Key("bool", "no effect (kept so inventories that set it stay valid): fabrics have their "
                          "own NICs and ToRs, so several fabrics may always use the same lossless class",
                          default="false"),
}
SRIOV = {
    "vfs": Key("int", "VFs on every rail PF", required=True, minimum=1, maximum=127),
    "trust": Key("bool", "VF trust on (lets a pod set its VF's MAC and multicast, as some CNIs need)",
                 default="false"),
    "spoof_check": Key("bool", "VF MAC spoof checking", default="true"),
    "link_state": Key("str", "VF link state", default="auto", choices=("auto", "enable", "disable")),
    "firmware_vfs": Key("int", "the VFs Mellanox firmware must allow (mlxconfig `NUM_OF_VFS`, `SRIOV_EN`); "
                        "raised only with the sriov role's opt-in, then a reboot is pending", default="vfs",
                        minimum=1, maximum=127),
}
PCIE_ACS = {
    "disable": Key("str", "`gpu_nic`: ACS off on the PCIe bridges between a GPU and an RDMA NIC (found on each "
                   "node), so GPUDirect RDMA traffic stays below the root complex; `listed`: only `bridges`; `none`",
                   default="gpu_nic", choices=("gpu_nic", "listed", "none")),
    "bridges": Key("list", "PCI addresses of the bridges (`0000:3a:00.0`) for `listed`", elements="pci"),
}
_NAMESPACE_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")
KUBERNETES = {
    "ipam": Key("str", "how pods on the fabric get addresses: `spiderpool` (a SpiderIPPool per rail, or per node and "
                "rail in `exclusive`, and a SpiderMultusConfig per rail), `nv-ipam` (NVIDIA network operator: a "
                "CIDRPool per rail with each node's subnet as a static allocation, `exclusive` only), `whereabouts` or "
                "`host-local` (in a NetworkAttachmentDefinition per rail; `shared` and `infiniband` only), `none` (the "
                "objects without IPAM)", default="spiderpool",
                choices=("spiderpool", "nv-ipam", "whereabouts", "host-local", "none")),
    "namespace": Key("str", "namespace of the networks pods attach to (NetworkAttachmentDefinitions, SpiderMultusConfigs; "
                     "the SR-IOV operator's networkNamespace); a pod in another namespace names them "
                     "`<namespace>/<name>`", default="kube-system",
                     pattern=_NAMESPACE_RE, noun="namespace", fix="use a DNS label: lower-case letters, digits and '-'"),
    "workload_namespace": Key("str", "namespace of the NCCL env ConfigMap: the namespace the training pods run in (a pod's "
                              "`envFrom` reads ConfigMaps of its own namespace only)", default="default",
                              pattern=_NAMESPACE_RE, noun="namespace",
                              fix="use a DNS label: lower-case letters, digits and '-'"),
    "operator_namespace": Key("str", "namespace of the SR-IOV operator's policies and networks (the operator reads only "
                              "its own)", default="`sriov-network-operator` (prefix openshift.io), "
                              "`nvidia-network-operator` (prefix nvidia.com)", pattern=_NAMESPACE_RE, noun="namespace",
                              fix="use a DNS label: lower-case letters, digits and '-'"),
    "ipam_namespace": Key("str", "namespace of nv-ipam's CIDRPools (the namespace nv-ipam watches)",
                          default="nvidia-network-operator", pattern=_NAMESPACE_RE, noun="namespace",
                          fix="use a DNS label: lower-case letters, digits and '-'"),
    "device_plugin_namespace": Key("str", "namespace of the device plugins' ConfigMaps (sriovdp-config, rdma-devices)",
                                   default="kube-system", pattern=_NAMESPACE_RE, noun="namespace",
                                   fix="use a DNS label: lower-case letters, digits and '-'"),
    "resource_prefix": Key("str", "prefix of the device plugins' resources (`<prefix>/<fabric>_rail<r>`); with "
                           "`sriov_operator` the operator's RESOURCE_PREFIX: `openshift.io` (upstream) or `nvidia.com` "
                           "(NVIDIA network operator)",
                           default="nvidia.com", pattern=re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\Z"),
                           noun="resource prefix", fix="use a DNS name such as nvidia.com or rdma"),
    "pod_offset": Key("int", "index in each rail block of the first pod address (`shared`, `infiniband`)",
                      default="the middle of the rail block", minimum=1),
    "pod_count": Key("int", "pod addresses per rail from `pod_offset` (`shared`, `infiniband`)",
                     default="to the end of the rail block", minimum=1),
    "rdma_hca_max": Key("int", "pods that may share one rail NIC (the RDMA shared device plugin's `rdmaHcaMax`; "
                        "`macvlan`, `ipvlan`, `ipoib`)", default="100", minimum=1, maximum=10000),
    "sriov_operator": Key("bool", "render the SR-IOV network operator's SriovNetworkNodePolicy per rail instead of "
                          "the SR-IOV device plugin's ConfigMap (`sriov`, `host-device`)", default="false"),
}
# OpenSM's partitions.conf grammar (opensm osm_prtn_config.c): a partition name ends at '=' ',' ':' ';' or a
# blank; this subset keeps it one token that OpenSM logs as given.
PARTITION_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
PKEY_RE = re.compile(r"^0x[0-9a-fA-F]{1,4}\Z")
PARTITION = {
    "name": Key("str", "the partition's name in OpenSM's partitions.conf (not `Default`, OpenSM's own); 1-64 "
                "letters, digits, `_`, `.`, `-`", required=True, pattern=PARTITION_NAME_RE, noun="partition name",
                fix="use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit"),
    "pkey": Key("str", "the partition key, 0x0001-0x7ffe (0x7fff is the default partition; the full-membership "
                "bit 0x8000 is set from `membership`), unique in the fabric", required=True, pattern=PKEY_RE,
                noun="partition key", fix="write it in hex, 0x0001 to 0x7ffe, e.g. 0x0101"),
    "hosts": Key("list", "the member nodes (every rail of each): all of the fabric's nodes when left out",
                 elements="str", default="every node of the fabric", unique=True, pattern=HOST_NAME_RE,
                 noun="node name", fix="name nodes by their inventory host names"),
    "membership": Key("str", "`full` (members reach each other), `limited` (members reach full members only) or "
                      "`both` (a full and a limited PKey on each port; OpenSM then runs with allow_both_pkeys)",
                      default="full", choices=("full", "limited", "both")),
    "ipoib": Key("bool", "OpenSM creates the partition's IPoIB broadcast group", default="true"),
    "mtu": Key("int", "the IPoIB broadcast group's IBTA MTU code (1=256 .. 5=4096); only with `ipoib`",
               minimum=1, maximum=5),
    "rate": Key("int", "the IPoIB broadcast group's IBTA rate code (2=2.5 Gb/s ..); only with `ipoib`",
                minimum=2, maximum=21),
    "sl": Key("int", "the IPoIB broadcast group's service level; only with `ipoib`", minimum=0, maximum=15),
}
INFINIBAND = {
    "partitions": Key("list", "the fabric's partitions, rendered into OpenSM's partitions.conf by the "
                      "subnet_manager role (docs/infiniband.md); every port stays a limited member of the default "
                      "partition 0x7fff", elements="dict", options=PARTITION, default="none (the default "
                      "partition only)"),
}
FABRIC = {
    "rails": Key("int", "number of rails (rail NICs per node); rail ids are 1..rails", required=True,
                 minimum=1, maximum=MAX_RAILS),
    "mtu": Key("int", "rail NIC MTU; RoCE 576/1280 (IPv6) to 9216, IPoIB up to 65520",
               default="9000 (RoCE), 4092 (infiniband)", minimum=576, maximum=65520),
    "addressing": Key("dict", "how the fabric's addresses are planned", required=True, options=ADDRESSING),
    "routing": Key("dict", "the fabric's policy-routing numbers (not in `infiniband`)", options=ROUTING),
    "tors": Key("list", "the fabric's ToR switches", elements="dict", options=TOR,
                default="one per rail, `<cluster>[-<fabric>]-rail<r>-tor`, ports `swp{node}`", nonempty=True,
                fix="list the ToRs, or remove the key to get one ToR per rail"),
    "qos": Key("dict", "the fabric's lossless RoCE class: a preset and overrides (docs/lossless-qos.md)",
               default="preset nvidia (RoCE), none (infiniband)", options=QOS),
    "cni": Key("str", "how pods attach to the fabric's rail NICs: `host` (no CNI), `sriov` (a VF per pod), "
               "`host-device` (a whole NIC per pod), `macvlan`/`ipvlan` (shared RDMA), `ipoib` (InfiniBand "
               "children); sets the RDMA netns mode (docs/rdma-host.md)", default="host",
               choices=("host", "sriov", "host-device", "macvlan", "ipvlan", "ipoib")),
    "sriov": Key("dict", "SR-IOV VFs on each rail PF (only with `cni: sriov`)", options=SRIOV),
    "kubernetes": Key("dict", "the Kubernetes objects of the fabric's `cni` (playbooks/k8s.yml, docs/workloads.md)",
                      default="spiderpool IPAM, namespace kube-system", options=KUBERNETES),
    "infiniband": Key("dict", "the subnet manager's settings of an `infiniband` fabric (only there)",
                      options=INFINIBAND),
    "description": FREE_TEXT,
}
CLUSTER = {
    "name": Key("str", "cluster name; the jobs write to `<inventory dir>/.ainet-fabric/<name>/`. Letters, digits, `-`, `_`, `.`",
                required=True, pattern=NAME_RE, noun="cluster name",
                fix="use 1-63 letters, digits, '-', '_' or '.', starting with a letter or digit"),
    "description": FREE_TEXT,
    "fabrics": Key("dict", "several named RDMA fabrics (`compute`, `storage` ...), each with the fabric keys "
                   "below; without it the fabric keys sit at the top (one fabric named `default`)", values=FABRIC,
                   keys=Key("str", "fabric name", pattern=FABRIC_NAME_RE, noun="fabric name",
                            fix="use 1-16 lower-case letters, digits, '-' or '_', starting with a letter"),
                   nonempty=True, fix="e.g. fabrics: {compute: {rails: 8, addressing: ...}, storage: {rails: 2, ...}}"),
    "management_networks": Key("list", "networks the fabrics must not overlap (checked)", elements="cidr",
                               default="[]", single=True),
    "pod_networks": Key("list", "Kubernetes pod CIDRs; must not overlap a fabric", elements="cidr", default="[]",
                        single=True),
    "service_networks": Key("list", "Kubernetes service CIDRs; must not overlap a fabric", elements="cidr",
                            default="[]", single=True),
    "rdma_netns": Key("str", "the RDMA subsystem's netns mode on every node; must agree with every fabric's `cni`",
                      default="what the fabrics' `cni` need (`sriov`, `host-device`: exclusive; `macvlan`, "
                      "`ipvlan`, `ipoib`: shared; `host` only: unchanged)", choices=("exclusive", "shared")),
    "pcie_acs": Key("dict", "PCIe Access Control Services on the nodes (docs/rdma-host.md)", options=PCIE_ACS,
                    default="disable gpu_nic"),
}
CLUSTER.update(FABRIC)
CLUSTER["description"] = FREE_TEXT
_FIX = {"int": "give a whole number", "bool": "use true or false", "str": "give a text value",
        "cidr": "write it as address/prefix, e.g. 172.17.0.0/16 or fd00:17::/48",
        "dict": "give a YAML mapping (key: value)", "list": "give a YAML list",
        "pci": "write it as 0000:3a:00.0", "range": "give node ids or FIRST-LAST ranges, e.g. 1-32"}
_INT = re.compile(r"^ *[+-]?[0-9]+ *\Z")
_TRUE = ("yes", "true", "on", "1")
_FALSE = ("no", "false", "off", "0")


class _Refused(Exception):
    """A value a converter does not take: the problem and the fix of its message."""

    def __init__(self, problem, fix):
        super().__init__(problem)
        self.problem = problem
        self.fix = fix


def _to_int(value, fix=None):
    if isinstance(value, bool):
        raise _Refused("is a boolean, not an integer", fix or _FIX["int"])
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INT.match(value):
        return int(value)
    raise _Refused("is not an integer", fix or _FIX["int"])


def _to_bool(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise _Refused("is not a boolean", _FIX["bool"])


def _to_str(value):
    if isinstance(value, str):
        return value
    raise _Refused("is not a string", _FIX["str"])


def _to_cidr(value):
    """A network, strictly: host bits must be zero."""
    if not isinstance(value, str) or "/" not in value:
        raise _Refused("is not a network in CIDR notation", _FIX["cidr"])
    try:
        return ipaddress.ip_network(value.strip(), strict=True)
    except ValueError as exc:
        try:
            loose = ipaddress.ip_network(value.strip(), strict=False)
        except ValueError:
            raise _Refused("is not a valid network (%s)" % exc,
                           "write it as address/prefix, e.g. 172.17.0.0/16") from None
        raise _Refused("has host bits set", "use the network address %s" % loose) from None


def _to_pci(value):
    """A PCI address in its full lower-case form, ``0000:3a:00.0``."""
    text = value.strip().lower() if isinstance(value, str) else None
    if text is None or not BDF.match(text):
        raise _Refused("is not a PCI address", _FIX["pci"])
    return text if text.count(":") == 2 else "0000:" + text


def _to_range(value):
    """``(first, last)`` from a node id (7, "7") or a range ("1-32")."""
    if isinstance(value, str) and "-" in value.strip().lstrip("-"):
        first, _sep, last = value.partition("-")
        fix = "write a node id range as FIRST-LAST, e.g. 1-32"
        first, last = _to_int(first, fix), _to_int(last, fix)
        if last < first:
            raise _Refused("ends before it starts", "write FIRST-LAST with FIRST <= LAST")
        return (first, last)
    number = _to_int(value, _FIX["range"])
    return (number, number)


_CONVERT = {"int": _to_int, "bool": _to_bool, "str": _to_str, "cidr": _to_cidr, "pci": _to_pci, "range": _to_range}


def _span(minimum, maximum):
    if minimum is not None and maximum is not None:
        return "use %d..%d" % (minimum, maximum)
    if minimum is not None:
        return "use %d or more" % minimum
    return "use %d or less" % maximum


def _range_problem(number, minimum, maximum, part=False):
    """The problem text of ``number`` outside minimum..maximum (None when inside)."""
    if minimum is not None and number < minimum:
        return "is out of range" if part else "is below the minimum %d" % minimum
    if maximum is not None and number > maximum:
        return "is out of range" if part else "is above the maximum %d" % maximum
    return None


def to_int(value, field, minimum=None, maximum=None, fix=None):
    """``value`` as an int within minimum..maximum (inventory strings such as "3" are accepted), or raise
    FabricModelError. For values outside ``fabric_cluster`` (a node id) and for the loaders' bounds that
    depend on other keys; ``fix`` replaces the default fix of every problem."""
    try:
        number = _to_int(value, fix)
    except _Refused as exc:
        raise FabricModelError(field, value, exc.problem, exc.fix) from None
    problem = _range_problem(number, minimum, maximum)
    if problem:
        raise FabricModelError(field, value, problem, fix or _span(minimum, maximum))
    return number


def given(values, name, default=None):
    """``values[name]``, or ``default`` when the key is absent or null (null is "not set" in the model)."""
    value = (values or {}).get(name)
    return default if value is None else value


class _Run(object):
    __slots__ = ("errors", "part")

    def __init__(self, part):
        self.errors = []
        self.part = part

    def refuse(self, field, value, problem, fix=None):
        self.errors.append(FabricModelError(field, value, problem, fix))


def normalize(raw, schema=None, path=ROOT, part=False):
    """``(tree, errors)``: ``raw`` with every value converted to its Python form, and every shape problem
    of ``raw`` as a list of :class:`FabricModelError` (empty when fine; the tree is only meaningful then).

    Keys set to null count as not set; they stay in the tree (as None), so that the loaders can tell a
    key that is given from one that is not.  ``part``: ``raw`` is a fragment handed to a resolver on its
    own (a ``qos`` mapping, a host's ``sriov_overrides`` entry); a number outside its range then reads
    "is out of range"."""
    run = _Run(part)
    schema = CLUSTER if schema is None else schema
    return _mapping(run, raw, schema, path), run.errors


def normalized(raw, schema=None, path=ROOT, part=False):
    """The normalised tree of ``raw``, or raise: its one problem as FabricModelError, several as
    FabricModelErrors (one line each)."""
    tree, errors = normalize(raw, schema, path, part)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise FabricModelErrors(errors)
    return tree


def check(raw, schema=None, path=ROOT):
    """Every shape problem of ``raw`` as a list of :class:`FabricModelError` (empty when fine)."""
    return normalize(raw, schema, path)[1]


def _mapping(run, raw, schema, path):
    if not isinstance(raw, dict):
        top = schema is CLUSTER and path == ROOT
        run.refuse(path, raw, "is not a mapping", "define fabric_cluster in group_vars/all" if top else _FIX["dict"])
        return None
    for name in raw:
        if name not in schema:
            run.refuse("%s.%s" % (path, name), raw[name], "is not a known key",
                       "use one of: %s" % ", ".join(sorted(schema)))
    out = {}
    for name, key in schema.items():
        value = raw.get(name)
        field = "%s.%s" % (path, name)
        if value is None:
            # The fabric keys at the top are the single-fabric form: not required next to `fabrics`.
            if key.required and not (schema is CLUSTER and name in FABRIC and raw.get("fabrics") is not None):
                run.refuse(field, None, "is missing", "set %s: %s" % (name, key.description))
            if name in raw:
                out[name] = None
            continue
        out[name] = _value(run, key, value, field)
    return out


def _value(run, key, value, field):
    if key.removed:
        run.refuse(field, value, "was removed in %s: %s" % (key.removed, key.description),
                   "remove the key (what it configured is removed from the hosts on the next run)")
        return None
    if key.type == "list":
        return _list(run, key, value, field)
    if key.type == "dict":
        return _dict(run, key, value, field)
    return _scalar(run, key, key.type, value, field)


def _scalar(run, key, kind, value, field):
    """One value of type ``kind`` with ``key``'s limits (``key`` is the list's or mapping's for elements)."""
    if kind == "raw":
        return value
    if kind == "dict":
        return _mapping(run, value, key.options, field) if key.options else value
    try:
        out = _CONVERT[kind](value)
    except _Refused as exc:
        run.refuse(field, value, exc.problem, exc.fix)
        return None
    for number in (out if kind == "range" else (out,) if kind == "int" else ()):
        problem = _range_problem(number, key.minimum, key.maximum, run.part)
        if problem:
            run.refuse(field, value, problem, _span(key.minimum, key.maximum))
            return None
    if key.choices and out not in key.choices:
        run.refuse(field, value, "is not a known %s" % key.noun if key.noun else "is not one of the choices",
                   "use one of: %s" % ", ".join(key.choices))
        return None
    if key.pattern and not key.pattern.match(out):
        run.refuse(field, value, "is not a valid %s" % key.noun, key.fix)
        return None
    for special, what in key.exclude or ():
        if special.version == out.version and special.overlaps(out):
            run.refuse(field, value, "overlaps %s (%s), which can never carry a fabric" % (special, what), key.fix)
            return None
    return out


def _list(run, key, value, field):
    single = key.single and not isinstance(value, (list, dict))
    if single:
        value = [value]
    if not isinstance(value, list):
        run.refuse(field, value, "is not a list", _FIX["list"])
        return None
    if key.nonempty and not value:
        run.refuse(field, value, "is empty", key.fix)
        return None
    out = []
    for i, item in enumerate(value):
        where = field if single else "%s[%d]" % (field, i)
        if key.options:
            out.append(_mapping(run, item, key.options, where))
            continue
        before = len(run.errors)
        item_out = _scalar(run, key, key.elements, item, where)
        if key.unique and len(run.errors) == before and item_out in out:
            run.refuse(where, item, "is listed twice", "list each value once")
        out.append(item_out)
    return out


def _dict(run, key, value, field):
    if not isinstance(value, dict):
        run.refuse(field, value, "is not a mapping", _FIX["dict"])
        return None
    if key.nonempty and not value:
        run.refuse(field, value, "is empty", key.fix)
        return None
    if key.options:
        return _mapping(run, value, key.options, field)
    out = {}
    for name, sub in value.items():
        norm = name
        if key.keys is not None:
            before = len(run.errors)
            norm = _scalar(run, key.keys, key.keys.type, name, field)
            if len(run.errors) > before:
                continue
            if norm in out:
                run.refuse(field, name, "is listed twice", "list each key once")
                continue
        where = "%s.%s" % (field, name)
        if key.values:
            out[norm] = _mapping(run, sub, key.values, where)
        elif key.elements:
            out[norm] = _scalar(run, key, key.elements, sub, where)
        else:
            out[norm] = sub
    return out


# -- generated views -------------------------------------------------------------------

_ELEMENT_DOC = {"cidr": "CIDR", "pci": "PCI address", "range": "id or FIRST-LAST"}


def _type_doc(key):
    text = {"cidr": "CIDR", "raw": "any"}.get(key.type, key.type)
    if key.type in ("list", "dict") and key.elements:
        text = "%s of %s" % (key.type, _ELEMENT_DOC.get(key.elements, key.elements))
    if key.minimum is not None and key.maximum is not None and key.maximum < 1000:
        text += " %d..%d" % (key.minimum, key.maximum)
    return text


def rows(schema=None, prefix=""):
    """(key path, type, default, meaning) for every key, depth first, as the docs table shows them."""
    schema = CLUSTER if schema is None else schema
    out = []
    for name, key in schema.items():
        path = prefix + name
        default = "required" if key.required else (key.default or "")
        if key.removed:
            default = "refused since %s" % key.removed
        meaning = key.description
        if key.choices:
            meaning += " (one of: %s)" % ", ".join("`%s`" % c for c in key.choices)
        out.append((path, _type_doc(key), default, meaning))
        if key.options:
            out += rows(key.options, path + ("[]." if key.type == "list" else "."))
    return out


def markdown_table():
    lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for path, kind, default, meaning in rows():
        lines.append("| `%s` | %s | %s | %s |" % (path, kind, default, meaning.replace("|", "\\|")))
    return "\n".join(lines) + "\n"


# The first line of the model's description in a role's argument spec (tests/schema/regen.py finds it there).
ROLE_DESCRIPTION_HEAD = (
    "The cluster model C(fabric_cluster) (docs/cluster-model.md) is required; the role's tasks read it. It is not an "
    "option of this argument spec: ansible-core's check of a role's arguments renders and copies every option whole "
    "before the role's first task, on every host of the play, and the model grows with the fleet (a ToR per 64 nodes "
    "and rail: 1.4 s of CPU per host at 16,384 nodes x 8 rails). The collection's own schema checks it when the role's "
    "first task runs (one line per problem, naming the key, the value and the fix). Its keys (type; default):")


def role_description():
    """The lines a role's argument spec gives the model, at the end of its entry point's ``description``: what
    ``ansible-doc`` shows of it (each key, its type, default and meaning), where an option would make ansible-core
    render and deep-copy the whole model before the role's first task, for every host of a play (docs/performance.md,
    "The rules"). The collection's own validator (this schema), which the role's first task runs, checks it: one line
    naming the key, the value and the fix, where ansible-core would list every supported parameter."""
    lines = [ROLE_DESCRIPTION_HEAD]
    for path, kind, default, meaning in rows():
        lines.append(("C(%s) (%s%s): %s" % (path, kind, "; %s" % default if default else "", meaning)).replace("`", "'"))
    return lines
