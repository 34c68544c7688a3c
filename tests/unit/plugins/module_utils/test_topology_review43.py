# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Review 43 (docs/reviews/43-topology.md): the defects found in workload/topology.py, each a case with one thing
wrong beside a control (each case was a strict xfail until its defect was fixed; see the review's "fixed" lines).

Oracles: volcano-sh/volcano @ ed72c7c815a9 ``installer/helm/chart/volcano/policy/hypernodes-validating.yaml`` (the
ValidatingAdmissionPolicy that admits HyperNodes: every exactMatch name must pass ``format.qualifiedName()``) and
``pkg/util/hypernode/member_selector.go`` (a labelMatch member is every node of the Kubernetes cluster whose labels
match); NVIDIA/topograph @ e2b625071e32 ``pkg/engines/k8s/labeler.go`` ``checkLabel`` (``fmt.Sprintf("x%x", ...)``
of FNV-64a for values over 63 characters).
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.workload import topology as T

# k8s.io/apimachinery validation.IsQualifiedName, without a prefix: 1-63 characters, alphanumeric at both ends.
QUALIFIED_NAME = re.compile(r"^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?\Z")


def rv43_plan(cluster_name, groups=2, per_group=2, rails=2, spine_block="sb1"):
    """``groups`` rail groups of ``per_group`` nodes (hosts ``<cluster>-n<i>``), one ToR per rail each."""
    tors = []
    for group in range(groups):
        first = group * per_group + 1
        for rail in range(1, rails + 1):
            tor = {"name": "rv43-g%d-r%d" % (group + 1, rail), "rails": [rail], "port_template": "swp{local}",
                   "nodes": "%d-%d" % (first, first + per_group - 1)}
            if spine_block:
                tor["spine_block"] = spine_block
            tors.append(tor)
    cluster = {"name": cluster_name, "rails": rails, "tors": tors,
               "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 20, "node_prefix": 28}}
    count = groups * per_group
    return rail_plan(cluster, dict(("%s-n%d" % (cluster_name, i), i) for i in range(1, count + 1)))


def exact_match_names(objects):
    return [m["selector"]["exactMatch"]["name"] for o in objects if o["kind"] == "HyperNode"
            for m in o["spec"]["members"] if "exactMatch" in m["selector"]]


# -- D1: HyperNode exactMatch names Volcano's admission policy refuses ---------------------------------------------

def test_hypernode_member_names_are_qualified_names_control():
    names = exact_match_names(T.render(rv43_plan("rv43"))["objects"]["volcano"])
    assert names and all(QUALIFIED_NAME.match(n) for n in names)


def test_hypernode_member_names_over_63_are_refused_before_publishing():
    # review 43 D1 (fixed): a valid cluster name of 58 characters made exactMatch names of up to 66.
    plan = rv43_plan("rv43-" + "c" * 53)        # a valid cluster name (1-63 characters): 58
    try:
        out = T.render(plan)
    except FabricError:
        return                                  # refused with one clear error: what a fix may do
    names = exact_match_names(out["objects"]["volcano"])
    assert all(QUALIFIED_NAME.match(n) for n in names), [n for n in names if not QUALIFIED_NAME.match(n)]


# -- D2: tier-1 HyperNodes select nodes of every cluster -----------------------------------------------------------

def selects(member, labels):
    """Whether a Volcano labelMatch member selects a node with ``labels`` (member_selector.go: LabelSelectorAsSelector
    over every node of the Kubernetes cluster; this collection writes matchLabels only)."""
    match = member["selector"]["labelMatch"]
    assert set(match) == {"matchLabels"}
    return all(labels.get(k) == v for k, v in match["matchLabels"].items())


def tier1_members(out):
    return [m for o in out["objects"]["volcano"] if o["spec"]["tier"] == 1 for m in o["spec"]["members"]]


def test_tier1_hypernode_selects_its_own_nodes_control():
    out = T.render(rv43_plan("rv43a", groups=1))
    members = tier1_members(out)
    assert members and all(selects(m, labels) for m in members for labels in out["labels"].values())


def test_tier1_hypernode_never_selects_another_clusters_nodes():
    # review 43 D2 (fixed): the selector named the rail group (sb1.rg1) alone, not the cluster.
    one, two = T.render(rv43_plan("rv43a", groups=1)), T.render(rv43_plan("rv43b", groups=1))
    assert set(one["labels"]).isdisjoint(two["labels"])     # two clusters, no node in common
    wrongly = [(m["selector"], node) for m in tier1_members(one) for node, labels in two["labels"].items()
               if selects(m, labels)]
    assert wrongly == []


# -- D3: the long label value form is not topograph's ----------------------------------------------------------------

def long_value_with_leading_zero_hash():
    """A value over 63 characters whose FNV-64a has a zero first hex digit (found by counting; deterministic)."""
    index = 0
    while T.fnv64a("rv43-" + "v" * 60 + str(index)) >= 1 << 60:
        index += 1
    return "rv43-" + "v" * 60 + str(index)


def test_long_label_value_matches_topograph_control():
    # A hash whose first hex digit is not zero: both forms agree.
    index = 0
    while T.fnv64a("rv43-" + "w" * 60 + str(index)) < 1 << 60:
        index += 1
    value = "rv43-" + "w" * 60 + str(index)
    assert T.label_value(value) == "x%x" % T.fnv64a(value)
    assert T.label_value("v" * 63) == "v" * 63


def test_long_label_value_is_topographs_form():
    # review 43 D3 (fixed): label_value padded the hash to 16 hex digits (x%016x).
    value = long_value_with_leading_zero_hash()
    assert T.label_value(value) == "x%x" % T.fnv64a(value)
