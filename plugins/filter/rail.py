# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja2 filters over the rail planner; all logic lives in module_utils."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.plan.plan_report import render
from ansible_collections.ainet.fabric.plugins.module_utils.plan.scaffold import new_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import (
    fabric_interfaces,
    node_map as _node_map,
    rail_addresses as _rail_addresses,
    rail_plan as _rail_plan,
)


def _call(func, *args):
    try:
        return func(*args)
    except FabricError as exc:
        raise AnsibleFilterError(str(exc)) from None


def rail_addresses(cluster, node_id, interfaces=None, fabric=None):
    """One host's rails (every fabric's, or ``fabric``'s); with ``interfaces`` each entry also names its NIC."""
    rails = _call(_rail_addresses, cluster, node_id, "fabric_node_id", fabric)
    if interfaces is not None:
        nics = _call(fabric_interfaces, load_cluster(cluster), interfaces)
        for entry in rails:
            entry["interface"] = nics[entry["fabric"]][entry["rail"] - 1]
    return rails


def rail_plan(cluster, nodes):
    return _call(_rail_plan, cluster, nodes)


def cluster_model(cluster):
    return _call(lambda raw: load_cluster(raw).to_dict(), cluster)


def node_map(hosts, hostvars):
    """Map each host to its fabric_node_id and fabric_rail_interfaces (None where unset)."""
    return _node_map(hosts, hostvars)


def cluster_scaffold(hosts, name, rail_interfaces, existing=None, addressing=None, tor_platform=None,
                     tor_port_template=None, mtu=9000):
    """A new cluster's model, node ids and NIC list (the new_cluster role writes them)."""
    return _call(new_cluster, name, hosts, rail_interfaces, existing, addressing, tor_platform, tor_port_template, mtu)


def plan_report(plan, fmt, max_nodes=64):
    return _call(render, plan, fmt, max_nodes)


class FilterModule(object):
    """ainet.fabric rail planning filters."""

    def filters(self):
        return {
            "rail_addresses": rail_addresses,
            "rail_plan": rail_plan,
            "cluster_model": cluster_model,
            "plan_report": plan_report,
            "node_map": node_map,
            "cluster_scaffold": cluster_scaffold,
        }
