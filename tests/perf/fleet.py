# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A generated fleet of any size for the benchmarks: a cluster model whose addressing fits the node count, and an
inventory directory of that many GPU nodes (not a test: the benchmarks' input).

The addressing is derived from the size, so that no benchmark refuses its own node ids: exclusive mode, each node a
/``node_prefix`` per rail, each rail the smallest prefix that holds ``nodes`` of them (``max_node_id`` is
2^(node_prefix - rail_prefix): docs/cluster-model.md), the supernet the smallest that holds the rails.
16,384 nodes x 8 rails with /27 per node: rails /13, supernet 10.0.0.0/10, as issue 42 measured.
"""

from __future__ import annotations

import ipaddress
import os

import yaml

PORTS_PER_TOR = 64  # rail-optimised leaves: one rail per ToR, 64 node ports each


def bits_for(count):
    """The fewest bits that number ``count`` ids (1..count)."""
    return max(0, (count - 1).bit_length())


def addressing(nodes, rails=8, node_prefix=27):
    """Exclusive addressing for ``nodes`` x ``rails``: ``{"mode", "supernet", "rail_prefix", "node_prefix"}``."""
    rail_prefix = node_prefix - bits_for(nodes)
    supernet_prefix = rail_prefix - bits_for(rails)
    if supernet_prefix < 5:  # 8.0.0.0/5 at most: clear of the management network 192.168.0.0/16
        raise ValueError("%d nodes x %d rails do not fit in IPv4 with /%d per node" % (nodes, rails, node_prefix))
    supernet = ipaddress.ip_network("10.0.0.0/%d" % supernet_prefix, strict=False)
    return {"mode": "exclusive", "supernet": str(supernet), "rail_prefix": rail_prefix, "node_prefix": node_prefix}


def interfaces(rails):
    """Rail NIC names, rail 1 first (ConnectX-7 style)."""
    return ["ens%df%dnp%d" % (6 + r // 2, r % 2, r % 2) for r in range(rails)]


def tors(nodes, rails, ports=PORTS_PER_TOR, platform="cumulus"):
    """One ToR per rail and block of ``ports`` nodes (ports ``swp{local}``)."""
    out = []
    for rail in range(1, rails + 1):
        for first in range(1, nodes + 1, ports):
            last = min(nodes, first + ports - 1)
            out.append({"name": "r%d-leaf%d" % (rail, (first - 1) // ports + 1), "rails": [rail],
                        "nodes": ["%d-%d" % (first, last)], "port_template": "swp{local}", "platform": platform})
    return out


def cluster(nodes, rails=8, with_tors=True, name="bench"):
    """The cluster model of a generated fleet."""
    # SR-IOV with Spiderpool (the default IPAM of exclusive addressing): a SpiderIPPool per node and rail, the largest
    # set of Kubernetes objects the k8s job renders.
    model = {"name": name, "rails": rails, "mtu": 9000, "addressing": addressing(nodes, rails),
             "cni": "sriov", "sriov": {"vfs": 8},
             "routing": {"table_base": 150, "rule_priority": 1000},
             "management_networks": ["192.168.0.0/16"], "qos": {"preset": "none"}}
    if with_tors:
        model["tors"] = tors(nodes, rails)
    return model


def host_name(node_id):
    return "gpu%05d" % node_id


def write_inventory(directory, nodes, rails=8, with_tors=True):
    """``directory``/hosts.yml (the nodes, each its fabric_node_id), group_vars/all.yml (the model) and
    group_vars/gpu_nodes.yml (the rail NICs); returns ``directory``."""
    os.makedirs(os.path.join(directory, "group_vars"), exist_ok=True)
    with open(os.path.join(directory, "group_vars", "all.yml"), "w", encoding="utf-8") as handle:
        yaml.safe_dump({"fabric_cluster": cluster(nodes, rails, with_tors)}, handle, sort_keys=False)
    with open(os.path.join(directory, "group_vars", "gpu_nodes.yml"), "w", encoding="utf-8") as handle:
        yaml.safe_dump({"fabric_rail_interfaces": interfaces(rails)}, handle)
    with open(os.path.join(directory, "hosts.yml"), "w", encoding="utf-8") as handle:
        handle.write("all:\n  children:\n    gpu_nodes:\n      hosts:\n")
        handle.writelines("        %s: {fabric_node_id: %d}\n" % (host_name(i), i) for i in range(1, nodes + 1))
    return directory
