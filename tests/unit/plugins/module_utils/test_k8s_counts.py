# -*- coding: utf-8 -*-
"""The objects counted without building them (workload/k8s_objects.count_objects, summary_markdown's table) are the
objects render builds, per fabric and kind, on every CNI and IPAM, several fabrics, per-node SR-IOV policies and
mapped node names; where render refuses, the count refuses with the same line. The plan report's section is checked
against the table the rendered objects give (their labels counted here)."""

from __future__ import annotations

import collections
import copy

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.common.report_escape import md_text
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_objects

from ansible_collections.ainet.fabric.tests.unit.plugins.module_utils.test_workload import (  # noqa: E402
    CASES, NICS, cluster, nodes_of, plan_of)

TWO = {"name": "Two", "fabrics": {
    "compute": {"rails": 4, "cni": "sriov", "sriov": {"vfs": 8}, "kubernetes": {"device_plugin_namespace": "dp"},
                "addressing": {"mode": "exclusive", "supernet": "10.56.0.0/13", "rail_prefix": 16, "node_prefix": 27}},
    "storage": {"rails": 2, "cni": "host-device", "kubernetes": {"ipam": "whereabouts"},
                "addressing": {"mode": "shared", "supernet": "10.70.0.0/15", "rail_prefix": 16}},
    "ib": {"rails": 2, "cni": "sriov", "sriov": {"vfs": 2},
           "addressing": {"mode": "infiniband", "supernet": "10.80.0.0/15", "rail_prefix": 16}},
    "mgmt": {"rails": 1, "addressing": {"mode": "shared", "supernet": "10.90.0.0/15", "rail_prefix": 16}}}}
TWO_NICS = {"compute": ["c0", "c1", "c2", "c3"], "storage": ["s0", "s1"], "ib": ["ib0", "ib1"], "mgmt": ["m0"]}


def two(nodes=4, swapped=(), **compute):
    model = copy.deepcopy(TWO)
    model["fabrics"]["compute"]["kubernetes"].update(compute)
    nics = dict((host, copy.deepcopy(TWO_NICS)) for host in ("gpu%02d" % n for n in range(1, nodes + 1)))
    for host in swapped:
        nics[host]["compute"].reverse()
    return rail_plan(model, dict((host, {"node_id": n + 1, "rail_interfaces": nics[host]})
                                 for n, host in enumerate(sorted(nics))))


def swapped_plan():
    nodes = {"gpu01": NICS, "gpu02": list(reversed(NICS)), "gpu03": NICS}
    return rail_plan(cluster("sriov", "exclusive", sriov_operator=True),
                     dict((h, {"node_id": i + 1, "rail_interfaces": list(n)}) for i, (h, n) in enumerate(sorted(nodes.items()))))


FLEETS = [(plan_of(cluster(cni, mode, family, **k8s), nodes=nodes_of(k8s)), {}) for cni, mode, family, k8s in CASES]
FLEETS += [(plan_of(cluster("sriov", "exclusive"), nodes=7), {}), (two(), {}), (two(6, swapped=["gpu02"], sriov_operator=True), {}),
           (swapped_plan(), {}), (plan_of(cluster("macvlan", "exclusive"), nodes=3), {"node_names": {"gpu02": "node-b"}}),
           (plan_of(cluster("sriov", "p2p")), {}), (plan_of(cluster("macvlan", "shared", pod_offset=250, pod_count=10)), {}),
           (rail_plan(cluster("sriov", "shared"), {"gpu01": {"node_id": 1, "rail_interfaces": list(NICS)},
                                                   "gpu02": {"node_id": 2, "rail_interfaces": list(reversed(NICS))}}), {})]


def rendered_counts(objects):
    out = collections.defaultdict(collections.Counter)
    for obj in objects:
        out[obj["metadata"].get("labels", {}).get(k8s_objects.LABEL + "fabric")][obj["kind"]] += 1
    return dict((fabric, dict(kinds)) for fabric, kinds in out.items())


def summary_of_rendered(plan, objects):
    """The plan report's table as the rendered objects give it (each pod fabric: its objects and those of no
    fabric, by their labels)."""
    lines = ["## Kubernetes objects", "", "| fabric | cni | ipam | objects (playbooks/k8s.yml) |", "|---|---|---|---|"]
    for name, fabric in plan["cluster"]["fabrics"].items():
        if fabric["cni"] not in k8s_objects.POD_CNIS:
            continue
        kinds = collections.Counter(o["kind"] for o in objects
                                    if o["metadata"].get("labels", {}).get(k8s_objects.LABEL + "fabric") in (name, None))
        lines.append("| %s | %s | %s | %s |" % (md_text(name), md_text(fabric["cni"]), md_text(k8s_objects.settings(fabric)["ipam"]),
                                                ", ".join("%d %s" % (kinds[kind], kind) for kind, _file in k8s_objects.FILES
                                                          if kinds[kind])))
    return "\n".join(lines + [""])


@pytest.mark.parametrize("plan,kwargs", FLEETS, ids=["fleet%d" % i for i in range(len(FLEETS))])
def test_the_count_is_the_rendered_objects(plan, kwargs):
    try:
        objects = k8s_objects.render(plan, **kwargs)
    except FabricModelError as exc:
        with pytest.raises(FabricModelError) as info:
            k8s_objects.count_objects(plan, **kwargs)
        assert str(info.value) == str(exc)
        if not kwargs:
            assert k8s_objects.summary_markdown(plan).endswith("Not rendered: %s\n" % md_text(exc))
        return
    assert k8s_objects.count_objects(plan, **kwargs) == rendered_counts(objects)
    if not kwargs and any(f["cni"] in k8s_objects.POD_CNIS for f in plan["cluster"]["fabrics"].values()):
        assert k8s_objects.summary_markdown(plan) == summary_of_rendered(plan, objects)


def test_the_fleets_cover_refusals_policies_per_node_and_several_fabrics():
    # the control of the cases above: each kind of fleet is there
    counts = []
    for plan, kwargs in FLEETS:
        try:
            counts.append(k8s_objects.count_objects(plan, **kwargs))
        except FabricModelError:
            counts.append(None)
    assert counts.count(None) == 3  # p2p with spiderpool, a pod range off the block, PF names that cross rails
    assert any(c and c.get("compute", {}).get("SriovNetworkNodePolicy", 0) > 4 for c in counts)  # one per node
    assert any(c and {"compute", "storage", "ib", None} <= set(c) for c in counts)
    assert any(c and c.get("default", {}).get("SpiderIPPool") == 14 for c in counts)  # 7 nodes x 2 rails


def test_a_collision_is_refused_by_the_count_too():
    plan = rail_plan(cluster("macvlan", "exclusive"), {"gpu--1": {"node_id": 1, "rail_interfaces": list(NICS)},
                                                       "gpu-1": {"node_id": 2, "rail_interfaces": list(NICS)}})
    with pytest.raises(FabricModelError) as rendered:
        k8s_objects.render(plan)
    with pytest.raises(FabricModelError) as counted:
        k8s_objects.count_objects(plan)
    assert str(counted.value) == str(rendered.value) and "is the name of the SpiderIPPool of both" in str(rendered.value)
    # the control: the two hosts mapped to names of their own
    names = {"gpu--1": "node-a"}
    assert k8s_objects.count_objects(plan, node_names=names) == rendered_counts(k8s_objects.render(plan, node_names=names))
