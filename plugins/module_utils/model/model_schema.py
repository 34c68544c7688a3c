# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster model's schema: one declarative description of every key of ``fabric_cluster``.

From :data:`CLUSTER` come (1) the shape validation - unknown keys, types, required keys,
choices and ranges, every problem of a model reported at once, each as one line naming the
field, the value and the fix; (2) the key table of ``docs/cluster-model.md``; (3) the
``fabric_cluster`` options of the roles' ``meta/argument_specs.yml``.  A unit test fails when
the docs or the argument specs drift from it (``tests/schema/regen.py`` rewrites them).

Rules that relate several keys (capacity, overlaps, collisions between fabrics, offsets
inside a subnet) stay in :mod:`cluster_model`, which runs them once the shape is right.

Why not ansible-core's ArgumentSpecValidator: it cannot express ranges, list uniqueness or
rules across fields, its messages name options but not list indexes, and it is not
importable without Ansible (the planner runs in plain Python too). Why not a JSON-schema
library: one more dependency on every managed host and controller for about 150 lines.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError


class Key(object):
    """One key: its type, whether it is required, its documented default, limits and meaning."""

    __slots__ = ("type", "description", "required", "default", "minimum", "maximum", "choices", "elements",
                 "options", "values", "removed")

    def __init__(self, type_, description, required=False, default=None, minimum=None, maximum=None,
                 choices=None, elements=None, options=None, values=None, removed=None):
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


MODES = ("shared", "exclusive", "p2p", "infiniband")
ADDRESSING = {
    "mode": Key("str", "`shared` (one subnet per rail), `exclusive` (a subnet per node per rail), `p2p` (a /31 or "
                "/127 per node per rail) or `infiniband` (IPoIB, no gateways)", required=True, choices=MODES),
    "supernet": Key("cidr", "the fabric's RDMA supernet, IPv4 or IPv6; host bits must be zero", required=True),
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
    "name": Key("str", "switch name (unique in the cluster): letters, digits, `-`, `_`, `.`", required=True),
    "rails": Key("raw", "the rails it serves: a rail id or a list of them", required=True),
    "nodes": Key("raw", "the node ids it serves: `1-32`, an id, or a list of both", default="every node"),
    "port_template": Key("str", "port name per node: `{node}`, `{local}` (1-based position in the node range), "
                         "`{rail}`", default="swp{node}"),
    "platform": Key("str", "the switch's NOS: `sonic` (config_db), `cumulus` (NVUE), `eos` (Arista EOS) are rendered "
                    "by `tor_config`; `nxos` and `os10` are only read by the lossless check; unset: not rendered",
                    choices=("sonic", "cumulus", "eos", "nxos", "os10")),
    "port_mtu": Key("int", "MTU of the rail ports (and SVIs); at least the fabric MTU plus the lossless profile's "
                    "`switch_mtu_headroom`; at most 9214 on `eos`", default="9216 (`eos`: 9214)", minimum=1280, maximum=9216),
    "port_speed": Key("str", "speed of the rail ports, written into the rendered config when set",
                      choices=("10G", "25G", "40G", "50G", "100G", "200G", "400G", "800G")),
    "port_fec": Key("str", "forward error correction of the rail ports when set: `rs` (Reed-Solomon), `fc` "
                    "(Fire Code / BASE-R), `none`", choices=("rs", "fc", "none")),
    "description": Key("str", "free text"),
}
QOS = {
    "preset": Key("str", "`nvidia` (DSCP 26 -> priority 3, CNP DSCP 48 -> 6 strict, ToS 106), `sonic` (SONiC's "
                  "stock template: DSCP 3/4 lossless), `spiderpool` (DSCP 40 -> priority 5), `custom` (nothing "
                  "preset) or `none` (no lossless class)", default="nvidia",
                  choices=("nvidia", "sonic", "spiderpool", "custom", "none")),
    "trust": Key("str", "the switch ports' trust mode (hosts always trust DSCP)", default="by preset",
                 choices=("dscp", "pcp,dscp")),
    "roce_dscp": Key("int", "DSCP of RoCE traffic", default="by preset", minimum=0, maximum=63),
    "roce_priority": Key("int", "priority (and queue) that carries RoCE", default="by preset", minimum=0, maximum=7),
    "cnp_dscp": Key("int", "DSCP of congestion notification packets", default="by preset", minimum=0, maximum=63),
    "cnp_priority": Key("int", "priority (and queue) of CNPs; must not be a PFC priority", default="by preset",
                        minimum=0, maximum=7),
    "cnp_strict": Key("bool", "CNPs go to a strict-priority queue", default="by preset"),
    "pfc_priorities": Key("list", "priorities with PFC (must include roce_priority)", elements="int",
                          default="[roce_priority] (sonic: [3, 4])"),
    "dcqcn_priorities": Key("list", "priorities with DCQCN (ECN reaction and notification point) on the hosts",
                            elements="int", default="[roce_priority]"),
    "ecn_queues": Key("list", "switch queues that mark ECN", elements="int", default="by preset"),
    "ecn_min_bytes": Key("int", "ECN minimum threshold in bytes", default="by preset", minimum=1,
                         maximum=2 ** 31 - 1),
    "ecn_max_bytes": Key("int", "ECN maximum threshold in bytes", default="by preset", minimum=1,
                         maximum=2 ** 31 - 1),
    "ecn_probability": Key("int", "ECN marking probability at the maximum threshold, percent", default="by preset",
                           minimum=1, maximum=100),
    "ets_weights": Key("dict", "ETS bandwidth percent per queue (sum 100; the CNP queue is strict and not listed)",
                       default="by preset"),
    "pfc_watchdog": Key("bool", "the switch ports run the PFC watchdog on the lossless priorities",
                        default="by preset"),
    "roce_tos": Key("int", "ToS for `cma_roce_tos` and `traffic_class`", default="roce_dscp << 2 | 2",
                    minimum=0, maximum=255),
    "switch_mtu_headroom": Key("int", "bytes the switch port MTU must exceed the host MTU by", default="18",
                               minimum=0, maximum=256),
    "share_priority": Key("bool", "allow another fabric with the same priority or DSCP (both must say so)",
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
    "bridges": Key("list", "PCI addresses of the bridges (`0000:3a:00.0`) for `listed`", elements="str"),
}
FABRIC = {
    "rails": Key("int", "number of rails (rail NICs per node); rail ids are 1..rails", required=True,
                 minimum=1, maximum=64),
    "mtu": Key("int", "rail NIC MTU; RoCE 576/1280 (IPv6) to 9216, IPoIB up to 65520",
               default="9000 (RoCE), 4092 (infiniband)"),
    "addressing": Key("dict", "how the fabric's addresses are planned", required=True, options=ADDRESSING),
    "routing": Key("dict", "the fabric's policy-routing numbers (not in `infiniband`)", options=ROUTING),
    "tors": Key("list", "the fabric's ToR switches", elements="dict", options=TOR,
                default="one per rail, `<cluster>[-<fabric>]-rail<r>-tor`, ports `swp{node}`"),
    "qos": Key("dict", "the fabric's lossless RoCE class: a preset and overrides (docs/lossless-qos.md)",
               default="preset nvidia (RoCE), none (infiniband)", options=QOS),
    "cni": Key("str", "how pods attach to the fabric's rail NICs: `host` (no CNI), `sriov` (a VF per pod), "
               "`host-device` (a whole NIC per pod), `macvlan`/`ipvlan` (shared RDMA), `ipoib` (InfiniBand "
               "children); sets the RDMA netns mode (docs/rdma-host.md)", default="host",
               choices=("host", "sriov", "host-device", "macvlan", "ipvlan", "ipoib")),
    "sriov": Key("dict", "SR-IOV VFs on each rail PF (only with `cni: sriov`)", options=SRIOV),
    "description": Key("str", "free text"),
}
CLUSTER = {
    "name": Key("str", "cluster name; plan files go to `build/<name>/`. Letters, digits, `-`, `_`, `.`",
                required=True),
    "description": Key("str", "free text"),
    "fabrics": Key("dict", "several named RDMA fabrics (`compute`, `storage` ...), each with the fabric keys "
                   "below; without it the fabric keys sit at the top (one fabric named `default`)", values=FABRIC),
    "management_networks": Key("list", "networks the fabrics must not overlap (checked)", elements="cidr",
                               default="[]"),
    "pod_networks": Key("list", "Kubernetes pod CIDRs; must not overlap a fabric", elements="cidr", default="[]"),
    "service_networks": Key("list", "Kubernetes service CIDRs; must not overlap a fabric", elements="cidr",
                            default="[]"),
    "rdma_netns": Key("str", "the RDMA subsystem's netns mode on every node; must agree with every fabric's `cni`",
                      default="what the fabrics' `cni` need (`sriov`, `host-device`: exclusive; `macvlan`, "
                      "`ipvlan`, `ipoib`: shared; `host` only: unchanged)", choices=("exclusive", "shared")),
    "pcie_acs": Key("dict", "PCIe Access Control Services on the nodes (docs/rdma-host.md)", options=PCIE_ACS,
                    default="disable gpu_nic"),
}
CLUSTER.update(FABRIC)
CLUSTER["description"] = Key("str", "free text")
_FIX = {"int": "give a whole number", "bool": "use true or false", "str": "give a text value",
        "cidr": "write it as address/prefix, e.g. 172.17.0.0/16 or fd00:17::/48",
        "dict": "give a YAML mapping (key: value)", "list": "give a YAML list"}
_INT = re.compile(r"^ *[+-]?[0-9]+ *\Z")


def _type_ok(key, value):
    kind = key.type
    if kind == "raw":
        return True
    if kind == "int":
        return (isinstance(value, int) and not isinstance(value, bool)) or \
            (isinstance(value, str) and bool(_INT.match(value)))
    if kind == "bool":
        return isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in
                                           ("yes", "true", "on", "1", "no", "false", "off", "0"))
    if kind in ("str", "cidr"):
        return isinstance(value, str) and (kind == "str" or "/" in value)
    if kind == "dict":
        return isinstance(value, dict)
    if kind == "list":
        return isinstance(value, list) or (key.elements == "cidr" and isinstance(value, str))
    raise ValueError("unknown schema type %r" % kind)


def check(raw, schema=None, path="fabric_cluster"):
    """Every shape problem of ``raw`` as a list of :class:`FabricModelError` (empty when fine)."""
    schema = CLUSTER if schema is None else schema
    if not isinstance(raw, dict):
        return [FabricModelError(path, raw, "is not a mapping", _FIX["dict"])]
    errors = []
    for name in raw:
        if name not in schema:
            errors.append(FabricModelError("%s.%s" % (path, name), raw[name], "is not a known key",
                                           "use one of: %s" % ", ".join(sorted(schema))))
    for name, key in schema.items():
        value = raw.get(name)
        field = "%s.%s" % (path, name)
        if value is None:
            # The fabric keys at the top are the single-fabric form: not required next to `fabrics`.
            if key.required and not (schema is CLUSTER and name in FABRIC and raw.get("fabrics") is not None):
                errors.append(FabricModelError(field, None, "is missing", "set %s: %s" % (name, key.description)))
            continue
        errors += _check_value(key, value, field)
    return errors


def _check_value(key, value, field):
    if key.removed:
        return [FabricModelError(field, value, "was removed in %s: %s" % (key.removed, key.description),
                                 "remove the key (what it configured is removed from the hosts on the next run)")]
    if key.type == "int" and isinstance(value, bool):
        return [FabricModelError(field, value, "is a boolean, not an integer", _FIX["int"])]
    if not _type_ok(key, value):
        return [FabricModelError(field, value, "is not %s" % _type_text(key), _FIX.get(key.type))]
    errors = []
    if key.type == "int":
        number = int(value)
        if key.minimum is not None and number < key.minimum:
            errors.append(FabricModelError(field, value, "is below the minimum %d" % key.minimum,
                                           "use %d..%d" % (key.minimum, key.maximum)))
        if key.maximum is not None and number > key.maximum:
            errors.append(FabricModelError(field, value, "is above the maximum %d" % key.maximum,
                                           "use %d..%d" % (key.minimum, key.maximum)))
    if key.choices and value not in key.choices:
        errors.append(FabricModelError(field, value, "is not one of the choices",
                                       "use one of: %s" % ", ".join(key.choices)))
    if key.options and key.type == "dict":
        errors += check(value, key.options, field)
    if key.values:
        for name, sub in value.items():
            errors += check(sub, key.values, "%s.%s" % (field, name))
    if key.type == "list" and isinstance(value, list):
        for i, item in enumerate(value):
            if key.options:
                errors += check(item, key.options, "%s[%d]" % (field, i))
            elif key.elements == "cidr" and not _type_ok(Key("cidr", ""), item):
                errors.append(FabricModelError("%s[%d]" % (field, i), item, "is not a network in CIDR notation",
                                               _FIX["cidr"]))
    return errors


def _type_text(key):
    return {"int": "an integer", "bool": "a boolean", "str": "a string", "cidr": "a network in CIDR notation",
            "dict": "a mapping", "list": "a list"}[key.type]


# -- generated views -------------------------------------------------------------------

def _type_doc(key):
    text = {"cidr": "CIDR", "raw": "any"}.get(key.type, key.type)
    if key.type == "list" and key.elements:
        text = "list of %s" % ("CIDR" if key.elements == "cidr" else key.elements)
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


def argspec(schema=None):
    """``fabric_cluster``'s options for a role's argument_specs. Leaf types are ``raw`` so that the
    collection's own validator, which runs next, gives the one-line messages; mappings and lists
    of mappings keep their structure, so that ansible-doc shows every key."""
    schema = CLUSTER if schema is None else schema
    out = {}
    for name, key in schema.items():
        entry = {"description": key.description.replace("`", "'")}
        if key.options and key.type == "dict":
            entry.update(type="dict", options=argspec(key.options))
        elif key.options and key.type == "list":
            entry.update(type="list", elements="dict", options=argspec(key.options))
        elif key.type == "dict":
            entry["type"] = "dict"
        else:
            entry["type"] = "raw"
        out[name] = entry
    return out
