# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A new cluster's inventory from a host list and the rail NIC names (the new_cluster role).

What the role writes is decided here, once: the cluster model (one fabric, one rail per NIC), every
node's ``fabric_node_id`` and the NIC list. Node ids are given once: a host already in the
directory's ``hosts.yml`` keeps its id, a new host takes the next free one (ids are a node's stable
identity; the plan lock holds them). The result is checked by the planner itself before the role
writes a file, so a scaffold that the plan job would refuse is never written.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import fabric_interfaces, rail_plan

# Where the GPU nodes live in every inventory of this collection (the jobs' default node group).
NODE_GROUP = "gpu_nodes"
# An inventory host name, and an ansible_host (a name or an address): no whitespace, no separator
# that the INI/host-list parsers or a `-e key=value` line would split on.
HOST_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*\Z")
DEFAULT_ADDRESSING = {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27}


def _hosts(hosts, field):
    """``name`` or ``name=address`` entries (a list, or a comma-separated string) as [(name, address)]."""
    if isinstance(hosts, str):
        hosts = [h.strip() for h in hosts.split(",") if h.strip()]
    if not isinstance(hosts, list) or not hosts:
        raise FabricModelError(field, hosts, "is not a non-empty list of host names",
                               "list the GPU nodes, e.g. gpu01,gpu02 or gpu01=10.0.0.11,gpu02=10.0.0.12")
    result, seen = [], set()
    for i, entry in enumerate(hosts):
        name, sep, address = str(entry).partition("=") if isinstance(entry, str) else (entry, "", "")
        if not isinstance(name, str) or not HOST_RE.match(name) or (sep and not HOST_RE.match(address)):
            raise FabricModelError("%s[%d]" % (field, i), entry, "is not a host name or name=address",
                                   "use letters, digits, '-', '_', '.' (and ':' in an address), e.g. gpu01=10.0.0.11")
        if name in seen:
            raise FabricModelError("%s[%d]" % (field, i), name, "is listed twice", "list every GPU node once")
        seen.add(name)
        result.append((name, address or None))
    return result


def existing_node_ids(inventory):
    """``{host: fabric_node_id}`` of a hosts.yml already in the directory (parsed YAML; None: no file)."""
    if not inventory:
        return {}
    try:
        nodes = inventory["all"]["children"][NODE_GROUP]["hosts"] or {}
    except (KeyError, TypeError):
        return {}
    return {host: vars_["fabric_node_id"] for host, vars_ in nodes.items()
            if isinstance(vars_, dict) and isinstance(vars_.get("fabric_node_id"), int)}


def number_nodes(names, existing):
    """Each host's node id: its id in ``existing`` where it has one, else the next id above all ids."""
    taken = set(existing.values())
    next_id = max(taken, default=0) + 1
    ids = {}
    for name in names:
        if name in existing:
            ids[name] = existing[name]
        else:
            while next_id in taken:
                next_id += 1
            ids[name] = next_id
            taken.add(next_id)
    return ids


def new_cluster(name, hosts, rail_interfaces, existing=None, addressing=None, tor_platform=None,
                tor_port_template=None, mtu=9000, field="new_cluster"):
    """The inventory of a new cluster, checked by the planner.

    Returns ``{"cluster": <fabric_cluster>, "nodes": [{"name", "node_id", "ansible_host"}],
    "rail_interfaces": [...]}``; raises FabricModelError naming the role variable at fault.
    """
    entries = _hosts(hosts, "%s_hosts" % field)
    if isinstance(rail_interfaces, str):
        rail_interfaces = [n.strip() for n in rail_interfaces.split(",") if n.strip()]
    if not isinstance(rail_interfaces, list) or not rail_interfaces:
        raise FabricModelError("%s_rail_interfaces" % field, rail_interfaces, "is not a non-empty list of NIC names",
                               "list the rail NICs of a node, rail 1 first, e.g. ens6f0np0,ens6f1np1")
    cluster = {"name": name, "rails": len(rail_interfaces), "mtu": mtu,
               "addressing": dict(addressing or DEFAULT_ADDRESSING)}
    if tor_platform:
        template = tor_port_template or "swp{node}"
        cluster["tors"] = [{"name": "%s-rail%d-tor" % (name, rail), "rails": [rail], "port_template": template,
                            "platform": tor_platform} for rail in range(1, len(rail_interfaces) + 1)]
    try:
        fabric_interfaces(load_cluster(cluster), rail_interfaces, "%s_rail_interfaces" % field)
        ids = number_nodes([n for n, _a in entries], existing_node_ids(existing))
        nodes = [{"name": n, "node_id": ids[n], "ansible_host": a} for n, a in entries]
        # The planner's own checks: node ids against the addressing's capacity, the ToRs' ports.
        rail_plan(cluster, {n["name"]: {"node_id": n["node_id"], "rail_interfaces": rail_interfaces} for n in nodes})
    except FabricModelError as exc:
        # the model's field as the role variable that gave it
        for key, var in (("fabric_cluster.name", "name"), ("fabric_cluster.addressing", "addressing"),
                         ("fabric_cluster.tors", "tor_platform"), ("fabric_cluster.mtu", "mtu")):
            if str(exc.field).startswith(key):
                raise FabricModelError("%s_%s (%s)" % (field, var, exc.field), exc.value, exc.problem, exc.fix) from None
        raise
    return {"cluster": cluster, "nodes": nodes, "rail_interfaces": list(rail_interfaces)}
