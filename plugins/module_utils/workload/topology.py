# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric as the schedulers see it: rail groups and spine blocks, from the plan, for Slurm, Kubernetes labels,
Kueue and Volcano.

In a rail-optimised fabric every node reaches one ToR per rail, so no single switch is "the node's switch". What
places nodes near each other is their **rail group**: the nodes that reach the same ToR on every rail (NVIDIA's
scalable unit). Rail groups sit in **spine blocks** (the ToR key ``spine_block``: the ToRs whose uplinks share one
set of spines), and the spine blocks make the fabric. :func:`topologies` finds them in a plan, per fabric:

* a rail group is the set of nodes whose tuple of ToRs (rail 1 first) is the same; it is named
  ``<spine block>.rg<k>``, ``k`` counting the spine block's groups in the order of their first ToR in the model's
  ``tors`` (then their lowest node id), so adding nodes to a group renames nothing;
* a rail group whose ToRs name two spine blocks is refused (no tree holds it);
* a ToR that serves nodes of two rail groups is noted (the model's ToR ranges do not cut the nodes the same way on
  every rail).

Names are made so that each is, unchanged, a Slurm switch or block name (no hostlist ``[``, ``]`` or ``,``; at most
64 characters, ``HOST_NAME_MAX`` of ``switch_record.c``), a Kubernetes label value (63 characters, alphanumeric at
both ends) and part of a DNS subdomain: spine blocks are DNS labels of at most 16 characters (the schema), rail
groups ``<spine block>.rg<k>``, padding blocks ``<spine block>.pad<k>``, the tree's root ``<fabric>.all``; the dot
keeps the three apart. Slurm node names come from the inventory host names (or ``node_names``) and are checked
against what a Slurm hostlist can carry (:func:`slurm_node_name`): never written raw when they could split a list.

Outputs (pure text or objects; the action writes them):

* Slurm ``topology.conf`` for ``topology/tree`` (one leaf switch per rail group, one switch per spine block, one root;
  never a leaf per rail, which puts every node on several leaves) and for ``topology/block`` (blocks in spine block
  order, each spine block padded with empty blocks to a power of two so that Slurm's aggregation by block index never
  mixes two spine blocks below the spine block level; ``BlockSizes`` from the smallest rail group, doubling), and the
  ``topology.yaml`` of Slurm 25.05 with one topology per fabric;
* node labels: the collection's keys (``ainet.fabric/rail-group``, ``ainet.fabric/spine-block``, per fabric
  ``ainet.fabric/<fabric>.rail-group`` ...), or NVIDIA topograph's ``fabric.topograph.run/tier-0`` (rail group) and
  ``tier-1`` (spine block) for one fabric; values of more than 63 characters become topograph's FNV-64a form;
* Kueue ``Topology`` (levels spine block, rail group, ``kubernetes.io/hostname``) and a ``ResourceFlavor`` naming it,
  for the Topology API versions ``v1alpha1`` (Kueue up to 0.13, ResourceFlavor ``v1beta1``), ``v1beta1`` and
  ``v1beta2``; the CRDs' CEL rules are checked here (:func:`cel_violations`), since the schema check does not run
  CEL;
* Volcano ``HyperNode``s: tier 1 a rail group (its nodes by the cluster label and the rail group label: a
  ``labelMatch`` selects across the whole Kubernetes cluster), tier 2 a spine block, tier 3 the fabric
  (``<cluster>[-<fabric>].all``); names over 63 characters are shortened with a hash (:func:`bounded_name`), since
  a parent names its children by ``exactMatch`` and Volcano's admission policy wants a qualified name there.

Declared against discovered: ``cabling.rail_group_check.agreement`` reads the cabling check's result (LLDP) and gives
each rail group a verdict; a group that the cabling splits (a member reaches a ToR outside its group's) or fuses (a
member reaches another group's ToR), or whose cabling was not read, is reported and left out of every output
(:func:`withhold`, :func:`render`).

Oracles: SchedMD/slurm ``src/plugins/topology/tree/switch_record.c``, ``src/plugins/topology/block/block_record.c``,
``doc/man/man5/topology.conf.5`` and ``topology.yaml.5``; NVIDIA/topograph ``pkg/translate/block.go`` and
``docs/reference/node-labels.md``; kubernetes-sigs/kueue ``apis/kueue/*/topology_types.go``; volcano-sh/volcano
``config/crd`` (HyperNode), ``installer/helm/chart/volcano/policy/hypernodes-validating.yaml`` and
``pkg/util/hypernode/member_selector.go``.
"""

from __future__ import annotations

import json
import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError, FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.common.file_formats import yaml_dump
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import DEFAULT_FABRIC, \
    DEFAULT_SPINE_BLOCK
from ansible_collections.ainet.fabric.plugins.module_utils.workload.k8s_objects import (
    DNS_SUBDOMAIN_RE, HOSTNAME_LABEL, LABEL, _field, dns_name, node_name)

LABEL_KEYS = ("ainet", "topograph")
TOPOGRAPH_TIER = "fabric.topograph.run/tier-%d"
# topograph's own node annotation (docs/reference/node-labels.md, Annotations): a node carrying it has topograph as
# the writer of the tier labels, and this collection must not write them too.
TOPOGRAPH_INSTANCE = "topograph.run/instance"
KUEUE_APIS = ("v1alpha1", "v1beta1", "v1beta2")
# Kueue up to 0.13 served Topology as v1alpha1 beside ResourceFlavor v1beta1.
RESOURCE_FLAVOR_API = {"v1alpha1": "v1beta1", "v1beta1": "v1beta1", "v1beta2": "v1beta2"}
VOLCANO_API = "topology.volcano.sh/v1alpha1"
SLURM_TYPES = ("tree", "block")
# switch_record.c: a SwitchName longer than HOST_NAME_MAX (64 on Linux) is refused; topology.yaml.5: "cannot be
# longer than 64 characters".
SLURM_NAME_MAX = 64
# block_record.h MAX_BLOCK_LEVELS: BlockSizes levels 0..15.
SLURM_BLOCK_LEVELS = 16
# A Slurm node name this collection writes: what a hostlist (hostlist.c) reads back as one name. No ',', '[', ']'
# (list and range syntax), no whitespace, '=' or '#' (the config line parser), nothing but letters, digits and
# '-', '_', '.'; a letter or digit first.
SLURM_NODE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
# k8s.io/apimachinery validation.IsQualifiedName: an optional DNS subdomain prefix and '/', then a name part of 1-63
# characters, alphanumeric at both ends (CEL's format.qualifiedName() of Volcano's admission policy).
QUALIFIED_NAME_MAX = 63
QUALIFIED_NAME_RE = re.compile(r"^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
                               r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?\Z")
# The pairs whose counts Volcano's admission policy compares in a regexMatch pattern.
BRACKETS = (("(", ")", "parentheses"), ("[", "]", "square brackets"), ("{", "}", "curly braces"))
LABEL_VALUE_RE = re.compile(r"^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?\Z")
_TAIL_NUMBER = re.compile(r"^(.*?)([0-9]{1,9})\Z")
HEADER = "Written by ainet.fabric (playbooks/topology.yml) from the rail plan; changes are overwritten."


# -- rail groups -------------------------------------------------------------------


def _fabric_names(plan):
    names = (plan.get("summary") or {}).get("fabrics")
    if not names:
        names = list((plan.get("cluster") or {}).get("fabrics") or {})
    return names


def _model_tors(plan, fabric):
    """``[(name, spine block)]`` of a fabric's ToRs in model order."""
    model = ((plan.get("cluster") or {}).get("fabrics") or {}).get(fabric)
    if not isinstance(model, dict):
        raise FabricError("topology: the plan has no model of fabric %r (pass the rail plan)" % (fabric,))
    return [(t["name"], t.get("spine_block") or DEFAULT_SPINE_BLOCK) for t in model.get("tors") or []]


def fabric_topology(plan, fabric):
    """One fabric's rail groups and spine blocks (see the module docstring)::

        {"fabric", "spine_blocks": [{"name", "groups": [group, ...]}], "groups": {name: group}, "notes": [...]}
        group = {"name", "spine_block", "tors": [ToR per rail], "hosts": [host in node id order],
                 "node_ids": [...]}
    """
    tors = _model_tors(plan, fabric)
    order = dict((name, index) for index, (name, _sb) in enumerate(tors))
    block_of = dict(tors)
    signatures = {}
    nodes = plan.get("nodes")
    if not isinstance(nodes, dict):
        raise FabricError("topology: the plan has no \"nodes\" mapping (pass the rail plan)")
    members = sorted(((n.get("node_id"), host) for host, n in nodes.items()), key=lambda m: (m[0], str(m[1])))
    for node_id, host in members:
        rails = [e for e in nodes[host].get("rails") or () if e.get("fabric") == fabric]
        if not rails:
            raise FabricError("topology: plan.nodes[%s] has no rail of fabric %s" % (host, fabric))
        rails.sort(key=lambda e: e["rail"])
        signature = tuple(e["tor"] for e in rails)
        signatures.setdefault(signature, []).append((node_id, host))
    blocks = {}
    for signature, hosts in signatures.items():
        named = sorted(set(block_of.get(t, DEFAULT_SPINE_BLOCK) for t in signature))
        if len(named) > 1:
            by_block = ", ".join("%s (%s)" % (t, block_of.get(t)) for t in dict.fromkeys(signature))
            raise FabricModelError(_field({"name": fabric}, "tors"), by_block,
                                   "puts the ToRs of one rail group (the nodes %s reach all of them) in %d spine "
                                   "blocks" % (_few([h for _i, h in hosts]), len(named)),
                                   "give every ToR of a rail group the same spine_block")
        key = (min(order.get(t, len(order)) for t in signature), hosts[0][0])
        blocks.setdefault(named[0], []).append((key, signature, hosts))
    block_order = list(dict.fromkeys(sb for _t, sb in tors))
    for name in blocks:
        if name not in block_order:
            block_order.append(name)
    out_blocks, groups, tor_groups = [], {}, {}
    for sb in block_order:
        if sb not in blocks:
            continue
        entries = []
        for index, (_key, signature, hosts) in enumerate(sorted(blocks[sb], key=lambda b: b[0]), 1):
            group = {"name": "%s.rg%d" % (sb, index), "spine_block": sb, "tors": list(signature),
                     "hosts": [h for _i, h in hosts], "node_ids": [i for i, _h in hosts]}
            entries.append(group)
            groups[group["name"]] = group
            for tor in dict.fromkeys(signature):
                tor_groups.setdefault(tor, []).append(group["name"])
        out_blocks.append({"name": sb, "groups": entries})
    notes = ["ToR %s serves nodes of %d rail groups (%s): its node ranges cut the nodes otherwise than the other "
             "rails' ToRs" % (tor, len(names), ", ".join(names))
             for tor, names in sorted(tor_groups.items(), key=lambda kv: order.get(kv[0], 0)) if len(names) > 1]
    return {"fabric": fabric, "spine_blocks": out_blocks, "groups": groups, "notes": notes}


def _few(items, count=3):
    items = list(items)
    text = ", ".join(str(i) for i in items[:count])
    return text + (" and %d more" % (len(items) - count) if len(items) > count else "")


def topologies(plan):
    """``{fabric: fabric_topology(plan, fabric)}`` for every fabric of the plan, in model order."""
    return dict((fabric, fabric_topology(plan, fabric)) for fabric in _fabric_names(plan))


# -- declared against discovered ---------------------------------------------------


def withhold(topos, agreement):
    """``topos`` without the rail groups whose verdict is not ``agrees`` (spine blocks left empty are dropped)."""
    out = {}
    for fabric, topo in topos.items():
        verdicts = (agreement or {}).get(fabric) or {}
        kept_blocks, kept = [], {}
        for block in topo["spine_blocks"]:
            groups = [g for g in block["groups"] if (verdicts.get(g["name"]) or {}).get("verdict") == "agrees"]
            if groups:
                kept_blocks.append({"name": block["name"], "groups": groups})
                kept.update((g["name"], g) for g in groups)
        out[fabric] = dict(topo, spine_blocks=kept_blocks, groups=kept)
    return out


# -- Slurm ------------------------------------------------------------------------


def slurm_node_name(host, node_names=None):
    """The Slurm node name of an inventory host (``node_names[host]`` where given), or FabricModelError where a
    hostlist could read it otherwise (``,``, ``[``, ``]``, whitespace, ``=``, ``#``, ``:`` of an IPv6 literal) or it is
    longer than 64 characters."""
    name = (node_names or {}).get(host)
    name = host if name is None else name
    if not isinstance(name, str) or not SLURM_NODE_RE.match(name):
        raise FabricModelError("topology_node_names.%s" % host, name,
                               "is not a Slurm node name this collection writes into a hostlist (1-64 letters, digits, "
                               "'-', '_' or '.', starting with a letter or digit; ',', '[' and ']' would split or "
                               "expand the list)", "map the host to its Slurm NodeName in topology_node_names")
    return name


def slurm_names(plan, node_names=None):
    """``{host: Slurm node name}`` of every node of the plan; two hosts on one name are refused."""
    unknown = sorted(set(node_names or {}) - set(plan["nodes"]))
    if unknown:
        raise FabricModelError("topology_node_names.%s" % unknown[0], (node_names or {})[unknown[0]],
                               "maps a host that is not a node of the plan", "map only the hosts of the node group")
    return _names_per_host(plan, lambda host: slurm_node_name(host, node_names), "topology_node_names",
                           "Slurm node name")


def hostlist(names):
    """A Slurm hostlist expression of ``names`` (each a :data:`SLURM_NODE_RE` name): names that end in a number of
    at most 9 digits are folded into ``prefix[lo-hi,...]`` ranges per prefix and digit width (a zero-padded number
    keeps its width, as ``hostlist.c`` reads it back); the others are listed as they are. Sorted, no duplicates."""
    numbered, plain, padded = [], [], {}
    for name in dict.fromkeys(names):
        match = _TAIL_NUMBER.match(name)
        if not match:
            plain.append(name)
            continue
        prefix, digits = match.group(1), match.group(2)
        numbered.append((prefix, digits))
        if len(digits) > 1 and digits[0] == "0":
            padded.setdefault(prefix, set()).add(len(digits))
    groups = {}
    for prefix, digits in numbered:
        widths = padded.get(prefix, ())
        if len(digits) > 1 and digits[0] == "0":
            width = len(digits)
        elif len(widths) == 1 and len(digits) >= min(widths):
            # gpu09 and gpu10 under one width: "%02d" % 10 is "10", as hostlist.c prints gpu[09-10].
            width = min(widths)
        else:
            width = 0
        groups.setdefault((prefix, width), []).append(int(digits))
    parts = []
    for (prefix, width), numbers in sorted(groups.items()):
        numbers.sort()
        ranges, first, last = [], numbers[0], numbers[0]
        for number in numbers[1:]:
            if number == last + 1:
                last = number
                continue
            ranges.append((first, last))
            first = last = number
        ranges.append((first, last))
        if len(numbers) == 1:
            parts.append("%s%0*d" % (prefix, width, numbers[0]))
            continue
        text = ",".join("%0*d" % (width, a) if a == b else "%0*d-%0*d" % (width, a, width, b) for a, b in ranges)
        parts.append("%s[%s]" % (prefix, text))
    return ",".join(parts + sorted(plain))


def _root(fabric):
    return "%s.all" % fabric


def _check_switch_name(name):
    if len(name) > SLURM_NAME_MAX:
        raise FabricError("topology: Slurm switch or block name %r is longer than %d characters" % (name, SLURM_NAME_MAX))
    return name


def slurm_tree(topo, names):
    """``[(switch, "nodes" | "switches", hostlist)]`` of a fabric's tree: a leaf per rail group, a switch per spine
    block, the root; ``names``: ``{host: Slurm node name}``."""
    lines = []
    for block in topo["spine_blocks"]:
        for group in block["groups"]:
            lines.append((_check_switch_name(group["name"]), "nodes", hostlist(names[h] for h in group["hosts"])))
    for block in topo["spine_blocks"]:
        lines.append((_check_switch_name(block["name"]), "switches", hostlist(g["name"] for g in block["groups"])))
    if topo["spine_blocks"]:
        lines.append((_check_switch_name(_root(topo["fabric"])), "switches",
                      hostlist(b["name"] for b in topo["spine_blocks"])))
    return lines


def _comment(topo, kind):
    return ["# Slurm topology/%s of fabric %s, %d rail group(s) in %d spine block(s). %s"
            % (kind, topo["fabric"], len(topo["groups"]), len(topo["spine_blocks"]), HEADER)]


def tree_conf(topo, names):
    """``topology.conf`` text for ``TopologyPlugin=topology/tree``."""
    lines = _comment(topo, "tree")
    for switch, kind, members in slurm_tree(topo, names):
        lines.append("SwitchName=%s %s=%s" % (switch, "Nodes" if kind == "nodes" else "Switches", members))
    return "\n".join(lines) + "\n"


def _pow2(number):
    size = 1
    while size < number:
        size *= 2
    return size


def slurm_blocks(topo, names):
    """``(blocks, block_sizes)`` of a fabric for ``topology/block``: ``blocks`` ``[(name, hostlist or None)]`` in spine
    block order, each spine block padded with empty blocks to the same power of two (Slurm aggregates blocks by
    their index, ``block_record.c``: the padding keeps every aggregate up to a spine block's size inside one spine
    block); ``block_sizes``: the smallest rail group's node count, doubled up to the largest power of two not above
    the block count (topograph's ``getBlockSizes``)."""
    if not topo["groups"]:
        return [], []
    per_block = _pow2(max(len(b["groups"]) for b in topo["spine_blocks"]))
    blocks = []
    for block in topo["spine_blocks"]:
        for group in block["groups"]:
            blocks.append((_check_switch_name(group["name"]), hostlist(names[h] for h in group["hosts"])))
        for index in range(len(block["groups"]) + 1, per_block + 1):
            blocks.append((_check_switch_name("%s.pad%d" % (block["name"], index)), None))
    base = min(len(g["hosts"]) for g in topo["groups"].values())
    sizes, level = [], 0
    while (1 << level) <= len(blocks) and level < SLURM_BLOCK_LEVELS:
        sizes.append(base << level)
        level += 1
    return blocks, sizes


def block_conf(topo, names):
    """``topology.conf`` text for ``TopologyPlugin=topology/block``."""
    blocks, sizes = slurm_blocks(topo, names)
    lines = _comment(topo, "block")
    for name, members in blocks:
        lines.append("BlockName=%s Nodes=%s" % (name, members) if members else "BlockName=%s" % name)
    lines.append("BlockSizes=%s" % ",".join(str(s) for s in sizes))
    return "\n".join(lines) + "\n"


def topology_yaml(topos, names, kinds=None):
    """The ``topology.yaml`` of Slurm 25.05 (``topology.yaml.5``): one topology per fabric named after it, of the kind
    ``kinds[fabric]`` (``tree`` by default); the first is ``cluster_default``."""
    doc = []
    for index, (fabric, topo) in enumerate(topos.items()):
        kind = (kinds or {}).get(fabric, "tree")
        if kind not in SLURM_TYPES:
            raise FabricModelError("topology_slurm_yaml_types.%s" % fabric, kind, "is not a Slurm topology kind this "
                                   "collection writes", "use tree or block")
        entry = {"topology": fabric, "cluster_default": index == 0}
        if kind == "tree":
            switches = []
            for switch, what, members in slurm_tree(topo, names):
                switches.append({"switch": switch, "nodes" if what == "nodes" else "children": members})
            entry["tree"] = {"switches": switches}
        else:
            blocks, sizes = slurm_blocks(topo, names)
            entry["block"] = {"block_sizes": sizes,
                              "blocks": [dict({"block": n}, **({"nodes": m} if m else {})) for n, m in blocks]}
        doc.append(entry)
    return yaml_dump(doc, header=HEADER, plain=True)


# -- Kubernetes node labels ---------------------------------------------------------


def fnv64a(text):
    """FNV-1a, 64 bits, of ``text``'s UTF-8 bytes."""
    value = 0xcbf29ce484222325
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * 0x100000001b3) & 0xffffffffffffffff
    return value


def label_value(text):
    """``text`` as a label value: unchanged when it is one (63 characters at most), else topograph's form for long
    values: ``x`` and the FNV-64a hash in lower-case hex, not padded (``fmt.Sprintf("x%x", h.Sum64())`` of
    ``checkLabel`` in topograph's ``pkg/engines/k8s/labeler.go``; its ``labeler_test.go`` expects
    ``xf946c4acef2d5939``)."""
    if LABEL_VALUE_RE.match(text):
        return text
    return "x%x" % fnv64a(text)


def bounded_name(name, limit=QUALIFIED_NAME_MAX):
    """``name`` (a DNS subdomain) unchanged when it has at most ``limit`` characters, else its head cut to leave room
    for ``-`` and the FNV-64a hash of the whole name in 16 hex digits: deterministic, still a DNS subdomain and a
    qualified name, and two long names that share their head keep apart by the hash."""
    if len(name) <= limit:
        return name
    head = name[:limit - 17].rstrip("-.")
    return "%s-%016x" % (head, fnv64a(name))


def label_keys(fabric, keys="ainet"):
    """``(rail group key, spine block key)`` of a fabric's labels."""
    if keys == "topograph":
        return TOPOGRAPH_TIER % 0, TOPOGRAPH_TIER % 1
    if fabric == DEFAULT_FABRIC:
        return LABEL + "rail-group", LABEL + "spine-block"
    return LABEL + fabric + ".rail-group", LABEL + fabric + ".spine-block"


def cluster_label(plan):
    """The label every node of the cluster carries (the ResourceFlavors select the nodes by it)."""
    return LABEL + "cluster", label_value(dns_name(plan["cluster"]["name"]))


def node_labels(plan, topos, k8s_names, keys="ainet", topograph_fabric=None):
    """``{node name: {key: value}}``: the cluster label and, per fabric, the rail group and spine block. With
    ``keys="topograph"`` only ``topograph_fabric``'s (default: the first fabric) under topograph's tier keys: one
    fabric, since topograph's keys are not per fabric."""
    if keys not in LABEL_KEYS:
        raise FabricModelError("topology_label_keys", keys, "is not a label key family", "use ainet or topograph")
    fabrics = list(topos)
    if keys == "topograph":
        chosen = topograph_fabric or fabrics[0]
        if chosen not in topos:
            raise FabricModelError("topology_topograph_fabric", chosen, "is not a fabric of the cluster",
                                   "use one of: %s" % ", ".join(fabrics))
        fabrics = [chosen]
    key, value = cluster_label(plan)
    out = dict((k8s_names[h], {key: value}) for h in sorted(plan["nodes"]))
    for fabric in fabrics:
        group_key, block_key = label_keys(fabric, keys)
        for group in topos[fabric]["groups"].values():
            for host in group["hosts"]:
                labels = out[k8s_names[host]]
                labels[group_key] = label_value(group["name"])
                labels[block_key] = label_value(group["spine_block"])
    return out


def k8s_node_names(plan, node_names=None):
    """``{host: Kubernetes node name}`` (k8s_objects' rule: ``node_names`` or the lower-cased host name)."""
    return _names_per_host(plan, lambda host: node_name(host, node_names), "k8s_objects_node_names", "node name")


def _names_per_host(plan, name_of, variable, what):
    """``{host: name_of(host)}`` of every node of the plan; a name that two hosts would share is refused, naming
    ``variable``'s entry of the second host and the first."""
    out, seen = {}, {}
    for host in sorted(plan["nodes"]):
        name = name_of(host)
        if name in seen:
            raise FabricModelError("%s.%s" % (variable, host), name, "is also the %s of %s" % (what, seen[name]),
                                   "give every host its own node name")
        seen[name] = host
        out[host] = name
    return out


def node_objects(labels):
    """Node objects that carry only the labels, for ``kubectl apply --server-side`` (the field manager then owns these
    keys and no others)."""
    return [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict(sorted(values.items()))}}
            for name, values in sorted(labels.items())]


def owned_key(key, keys="ainet"):
    """Whether ``key`` belongs to the label family this collection writes with ``keys``."""
    if keys == "topograph":
        return key.startswith("fabric.topograph.run/tier-")
    return key.startswith(LABEL) and (key.endswith("rail-group") or key.endswith("spine-block") or
                                      key == LABEL + "cluster")


def label_diff(desired, nodes_read, keys="ainet"):
    """The difference between the wanted labels and the nodes as read (``kubectl get nodes -o json``'s ``items``)::

        {"set": {node: {key: (old or None, new)}}, "stale": {node: [key, ...]}, "absent": [node, ...],
         "unchanged": count}

    ``stale``: keys of the family on nodes the plan does not label, or on planned nodes with a key the plan does not
    write (reported; removed by the apply only where this collection's field manager set them). ``absent``: nodes of
    the plan not in the cluster (never created). With topograph's keys, a node annotated by topograph itself
    (``topograph.run/instance``) is refused: two writers of one key would undo each other."""
    read = {}
    for item in nodes_read or ():
        meta = (item or {}).get("metadata") or {}
        if meta.get("name") is not None:
            read[meta["name"]] = meta
    if keys == "topograph":
        managed = sorted(n for n, m in read.items() if TOPOGRAPH_INSTANCE in (m.get("annotations") or {}))
        if managed:
            raise FabricError("topology: node %s carries the annotation %s: topograph writes the tier labels there; "
                              "label with topology_label_keys=ainet, or let topograph write them alone"
                              % (_few(managed), TOPOGRAPH_INSTANCE))
    changes, stale, absent, unchanged = {}, {}, [], 0
    for name, labels in sorted(desired.items()):
        if name not in read:
            absent.append(name)
            continue
        have = read[name].get("labels") or {}
        diff = dict((k, (have.get(k), v)) for k, v in sorted(labels.items()) if have.get(k) != v)
        if diff:
            changes[name] = diff
        else:
            unchanged += 1
        extra = sorted(k for k in have if owned_key(k, keys) and k not in labels)
        if extra:
            stale[name] = extra
    for name, meta in sorted(read.items()):
        if name not in desired:
            extra = sorted(k for k in (meta.get("labels") or {}) if owned_key(k, keys))
            if extra:
                stale[name] = extra
    return {"set": changes, "stale": stale, "absent": absent, "unchanged": unchanged}


def labels_summary(diff):
    """The one line that reports a :func:`label_diff`: the nodes whose labels change (the first of them shown with its
    ``{key: [old, new]}``), those already as planned, those carrying stale keys of the family and the planned nodes
    the cluster lacks."""
    first = ""
    if diff["set"]:
        name, change = next(iter(diff["set"].items()))
        first = " (%s: %s ...)" % (name, json.dumps(change))
    return ("node labels: %d node(s) to change%s, %d as planned, stale keys of ours on %d node(s), %d planned node(s) "
            "not in the cluster" % (len(diff["set"]), first, diff["unchanged"], len(diff["stale"]), len(diff["absent"])))


def summary(dest, files, groups, withheld, cabling_checked, validated, notes):
    """The job's one summary line: how many ``files`` were written in ``dest``, each fabric's count of rail
    ``groups`` (``{fabric: count}``), the groups withheld (``{fabric: {group: verdict}}``, shown as a mapping) and
    whether a cabling result judged them, and the schema check (passed where ``validated``, else the ``notes``)."""
    counts = ", ".join("%s: %s" % item for item in sorted(groups.items(), key=lambda item: item[0].lower()))
    return "%d files in %s; rail groups %s; withheld %s (%s); schema check %s" % (
        len(files), dest, counts, withheld if withheld else "none",
        "cabling checked" if cabling_checked else "no cabling result",
        "passed" if validated else ("; ".join(notes) or "no objects"))

# -- Kueue and Volcano ---------------------------------------------------------------


def object_name(plan, fabric, *parts):
    """``<cluster>[-<fabric>][-<part>...]`` as a DNS subdomain."""
    name = dns_name(plan["cluster"]["name"], None if fabric == DEFAULT_FABRIC else fabric, *parts)
    if not DNS_SUBDOMAIN_RE.match(name):
        raise FabricError("topology: no Kubernetes object name can be made of %r" % (name,))
    return name


def _meta(plan, fabric, name):
    return {"name": name, "labels": {LABEL + "cluster": label_value(dns_name(plan["cluster"]["name"])),
                                     LABEL + "fabric": label_value(fabric)}}


def kueue_objects(plan, fabric, api="v1beta2", keys="ainet"):
    """A fabric's Kueue ``Topology`` (levels: spine block, rail group, hostname) and the ``ResourceFlavor`` that names
    it, selecting the cluster's nodes by the cluster label."""
    if api not in KUEUE_APIS:
        raise FabricModelError("topology_kueue_api", api, "is not a Kueue Topology API version",
                               "use one of: %s" % ", ".join(KUEUE_APIS))
    group_key, block_key = label_keys(fabric, keys)
    name = object_name(plan, fabric)
    key, value = cluster_label(plan)
    topology = {"apiVersion": "kueue.x-k8s.io/%s" % api, "kind": "Topology", "metadata": _meta(plan, fabric, name),
                "spec": {"levels": [{"nodeLabel": block_key}, {"nodeLabel": group_key},
                                    {"nodeLabel": HOSTNAME_LABEL}]}}
    flavor = {"apiVersion": "kueue.x-k8s.io/%s" % RESOURCE_FLAVOR_API[api], "kind": "ResourceFlavor",
              "metadata": _meta(plan, fabric, name),
              "spec": {"nodeLabels": {key: value}, "topologyName": name}}
    return [topology, flavor]


def hypernode_name(plan, fabric, *parts):
    """A HyperNode's name: :func:`object_name`, bounded to a qualified name (:func:`bounded_name`, 63 characters),
    since a HyperNode names its child HyperNodes by ``exactMatch`` and Volcano's admission policy
    (``hypernode-validation-policy``) demands ``format.qualifiedName()`` of every such name."""
    return bounded_name(object_name(plan, fabric, *parts))


def volcano_hypernodes(plan, topo, keys="ainet"):
    """A fabric's HyperNodes: tier 1 per rail group (its nodes by the cluster label and the rail group label), tier 2
    per spine block (its rail groups by name), tier 3 the fabric (its spine blocks).

    A ``labelMatch`` member selects every node of the Kubernetes cluster whose labels match (Volcano's
    ``pkg/util/hypernode/member_selector.go``), and rail group names (``sb1.rg1``) repeat from one planned cluster to
    the next: the cluster label (:func:`cluster_label`, the one Kueue's ResourceFlavor selects by) keeps a rail group
    to its own cluster's nodes."""
    fabric = topo["fabric"]
    group_key, _block_key = label_keys(fabric, keys)
    cluster_key, cluster_value = cluster_label(plan)
    out = []

    def hypernode(name, tier, tier_name, members):
        return {"apiVersion": VOLCANO_API, "kind": "HyperNode", "metadata": _meta(plan, fabric, name),
                "spec": {"tier": tier, "tierName": tier_name, "members": members}}

    block_names = []
    for block in topo["spine_blocks"]:
        group_names = []
        for group in block["groups"]:
            name = hypernode_name(plan, fabric, group["name"])
            group_names.append(name)
            out.append(hypernode(name, 1, "rail-group", [{"type": "Node", "selector": {"labelMatch": {
                "matchLabels": {cluster_key: cluster_value, group_key: label_value(group["name"])}}}}]))
        name = hypernode_name(plan, fabric, block["name"])
        block_names.append(name)
        members = [{"type": "HyperNode", "selector": {"exactMatch": {"name": n}}} for n in group_names]
        out.append(hypernode(name, 2, "spine-block", members))
    if block_names:
        # "<prefix>.all": a spine block (no dot), a rail group ("-<block>.rg<k>") or a shortened name (hex digits)
        # never ends so.
        out.append(hypernode(bounded_name(object_name(plan, fabric) + ".all"), 3, "fabric",
                             [{"type": "HyperNode", "selector": {"exactMatch": {"name": n}}} for n in block_names]))
    return out


def _levels_rules(what, levels, old_levels, api):
    problems = []
    labels = [(lv or {}).get("nodeLabel") for lv in levels or ()]
    if any(labels.count(label) > 1 for label in labels):
        problems.append("%s: spec.levels: must be unique" % what)
    if HOSTNAME_LABEL in labels and labels[-1] != HOSTNAME_LABEL:
        problems.append("%s: spec.levels: the kubernetes.io/hostname label can only be used at the lowest level of "
                        "topology" % what)
    if old_levels is not None and old_levels != levels:
        old = [(lv or {}).get("nodeLabel") for lv in old_levels]
        if api in ("v1alpha1", "v1beta1"):
            problems.append("%s: spec.levels: field is immutable" % what)
        elif not (labels and old and labels[-1] == HOSTNAME_LABEL and old[-1] == HOSTNAME_LABEL):
            problems.append("%s: spec.levels: levels are mutable only when kubernetes.io/hostname is the lowest level "
                            "both before and after the change" % what)
    return problems


def cel_violations(objects, old_objects=None):
    """The CEL rules (``x-kubernetes-validations``) of the Kueue Topology and ResourceFlavor CRDs and the Volcano
    HyperNode CRD, and Volcano's HyperNode admission policy (:func:`_hypernode_rules`), as checks: one line per
    violation. ``old_objects``: the objects as the cluster has them (for the
    transition rules: ``self == oldSelf``)."""
    old = dict(((o.get("kind"), (o.get("metadata") or {}).get("name")), o) for o in old_objects or ())
    problems = []
    for obj in objects:
        kind, name = obj.get("kind"), (obj.get("metadata") or {}).get("name")
        what, spec = "%s %s" % (kind, name), obj.get("spec") or {}
        before = old.get((kind, name))
        api = str(obj.get("apiVersion", "")).rpartition("/")[2]
        if kind == "Topology":
            old_levels = ((before or {}).get("spec") or {}).get("levels") if before else None
            problems += _levels_rules(what, spec.get("levels"), old_levels, api)
        elif kind == "ResourceFlavor":
            if "topologyName" in spec and len(spec.get("nodeLabels") or {}) < 1:
                problems.append("%s: spec: at least one nodeLabel is required when topology is set" % what)
            old_topology = ((before or {}).get("spec") or {}).get("topologyName") if before else None
            if old_topology is not None and spec.get("topologyName") != old_topology:
                problems.append("%s: spec: topologyName is immutable when topologyName is set" % what)
        elif kind == "HyperNode":
            problems += _hypernode_rules(what, spec)
    return problems


def _hypernode_rules(what, spec):
    """The HyperNode CRD's CEL rule (one selector kind per member) and the validations of Volcano's admission policy
    ``hypernode-validation-policy`` (volcano-sh/volcano ``installer/helm/chart/volcano/policy/
    hypernodes-validating.yaml``): at least one member, an exactMatch name that is not empty and is a qualified name
    (``format.qualifiedName()``: at most 63 characters in its name part), a regexMatch pattern that is not empty and
    whose parentheses, brackets and braces are balanced in count. The policy is an admission check, not part of the
    CRD: a schema check alone never sees it."""
    problems = []
    members = spec.get("members") or ()
    if not members:
        problems.append("%s: spec.members: member must have at least one member" % what)
    for index, member in enumerate(members):
        selector = (member or {}).get("selector") or {}
        where = "%s: spec.members[%d].selector" % (what, index)
        given = sum(1 for k in ("exactMatch", "regexMatch", "labelMatch") if k in selector)
        if given == 0:
            problems.append("%s: Either ExactMatch or RegexMatch or LabelMatch must be specified" % where)
        elif given > 1:
            problems.append("%s: Only one of ExactMatch, RegexMatch, or LabelMatch can be specified" % where)
        if "exactMatch" in selector:
            name = (selector.get("exactMatch") or {}).get("name")
            if not name:
                problems.append("%s: member exactMatch name is required" % where)
            elif not isinstance(name, str) or not QUALIFIED_NAME_RE.match(name):
                problems.append("%s: member exactMatch validate failed (%r is not a qualified name: at most 63 "
                                "alphanumeric characters, '-', '_' or '.', alphanumeric at both ends)" % (where, name))
        if "regexMatch" in selector:
            pattern = str((selector.get("regexMatch") or {}).get("pattern") or "")
            if not pattern:
                problems.append("%s: member regexMatch pattern is required" % where)
            for left, right, brackets in BRACKETS:
                if left in pattern and pattern.count(left) != pattern.count(right):
                    problems.append("%s: member regexMatch pattern is invalid: unmatched %s" % (where, brackets))
    return problems


# -- everything, for the action ------------------------------------------------------


def render(plan, options=None, agreement=None, topos=None):
    """Every file of the schedulers' topology, from the plan and the rail groups' agreement with the cabling
    (``cabling.rail_group_check.agreement``; None: every group is published, as declared):
    ``{"files": {relative path: text}, "objects": {...}, "labels": {...}, "agreement": {...},
    "withheld": {fabric: {group: verdict}}, "topologies": {...}}``.

    ``options``: ``slurm_node_names``, ``k8s_node_names`` (host to name maps), ``label_keys`` (``ainet`` or
    ``topograph``), ``topograph_fabric``, ``kueue_api``, ``slurm_yaml_types`` (``{fabric: tree|block}``),
    ``existing_nodes`` (the Kubernetes nodes the cluster has: the node label file names no other, since a
    server-side apply of a missing Node would create one; None: every planned node)."""
    options = options or {}
    topos = topologies(plan) if topos is None else topos
    published = withhold(topos, agreement) if agreement is not None else topos
    withheld = {}
    for fabric, verdicts in (agreement or {}).items():
        bad = dict((g, v) for g, v in verdicts.items() if v["verdict"] != "agrees")
        if bad:
            withheld[fabric] = bad
    keys = options.get("label_keys", "ainet")
    slurm = slurm_names(plan, options.get("slurm_node_names"))
    k8s = k8s_node_names(plan, options.get("k8s_node_names"))
    files = {}
    kueue, volcano = [], []
    for fabric, topo in published.items():
        if not topo["groups"]:
            continue
        files["slurm/%s/topology.conf" % fabric] = tree_conf(topo, slurm)
        files["slurm/%s/topology-block.conf" % fabric] = block_conf(topo, slurm)
        if keys == "ainet" or fabric == (options.get("topograph_fabric") or list(published)[0]):
            kueue += kueue_objects(plan, fabric, options.get("kueue_api", "v1beta2"), keys)
            volcano += volcano_hypernodes(plan, topo, keys)
    nonempty = dict((f, t) for f, t in published.items() if t["groups"])
    if nonempty:
        files["slurm/topology.yaml"] = topology_yaml(nonempty, slurm, options.get("slurm_yaml_types"))
    labels = node_labels(plan, published, k8s, keys, options.get("topograph_fabric")) if published else {}
    labels = dict((n, v) for n, v in labels.items() if len(v) > 1)
    existing = options.get("existing_nodes")
    nodes = node_objects(labels if existing is None else dict((n, v) for n, v in labels.items() if n in existing))
    if nodes:
        files["k8s/10-node-labels.yaml"] = _docs(nodes)
    if kueue:
        files["k8s/20-kueue.yaml"] = _docs(kueue)
    if volcano:
        files["k8s/30-volcano.yaml"] = _docs(volcano)
    seen = {}
    for obj in kueue + volcano:
        key, fabric = (obj["kind"], obj["metadata"]["name"]), obj["metadata"]["labels"][LABEL + "fabric"]
        if key in seen:
            raise FabricError("topology: fabrics %s and %s both give the %s name %s (fabric names that differ only "
                              "in '_' and '-'); rename one" % (seen[key], fabric, key[0], key[1]))
        seen[key] = fabric
    problems = cel_violations(kueue + volcano)
    if problems:
        raise FabricError("topology: %s" % "; ".join(problems))
    return {"files": files, "objects": {"kueue": kueue, "volcano": volcano, "nodes": nodes}, "labels": labels,
            "agreement": agreement, "withheld": withheld, "topologies": topos}


def file_names(fabrics):
    """Every file :func:`render` may write for these fabrics (relative paths): a file of this list that a run does
    not render is stale (its groups all withheld, its fabric gone)."""
    names = ["slurm/topology.yaml", "k8s/10-node-labels.yaml", "k8s/20-kueue.yaml", "k8s/30-volcano.yaml"]
    for fabric in fabrics:
        names += ["slurm/%s/topology.conf" % fabric, "slurm/%s/topology-block.conf" % fabric]
    return names


def own_file(text):
    """Whether a file's text is one this module wrote (its header)."""
    return bool(text) and HEADER in text.split("\n", 1)[0]


def _docs(objects):
    """Several objects as one multi-document YAML file, the header first."""
    return "# %s\n" % HEADER + "".join("---\n" + yaml_dump(o, plain=True) for o in objects)
