# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The schedulers' topology (workload/topology.py, cabling/rail_group_check.py).

Slurm files are judged by ``slurm_topology_judge`` (Slurm's parser rules, written apart from the code under test;
the tree also by a real slurmctld in tests/integration/test_topology_slurm_lab.py); Kueue and Volcano objects by
their CRDs (AINET_K8S_CRD_DIR, ../shared/validators/k8s; Kueue 0.13's v1alpha1 CRD in data/kueue-0.13). Each
behaviour: a case with one thing wrong, and a control.
"""

from __future__ import annotations

import os
import random

import pytest
import yaml

from ansible_collections.ainet.fabric.plugins.module_utils.cabling import rail_group_check
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError, FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.plan.plan_lock import model_digest
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_validate
from ansible_collections.ainet.fabric.plugins.module_utils.workload import topology as T

import slurm_topology_judge as judge  # noqa: E402 (pytest puts this directory on sys.path)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
CRDS = os.environ.get("AINET_K8S_CRD_DIR") or os.path.join(os.path.dirname(ROOT), "shared", "validators", "k8s")
KUEUE_013 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "kueue-0.13")


def model(blocks=(3, 2), per_group=4, rails=2, name="lab", spine=True):
    """Rail groups of ``per_group`` nodes, one ToR per rail each, ``blocks[i]`` groups in spine block sb<i+1>."""
    tors, first, group = [], 1, 0
    for index, count in enumerate(blocks, 1):
        for _k in range(count):
            group += 1
            for rail in range(1, rails + 1):
                tor = {"name": "su%d-r%d" % (group, rail), "rails": [rail], "port_template": "swp{local}",
                       "nodes": "%d-%d" % (first, first + per_group - 1)}
                if spine:
                    tor["spine_block"] = "sb%d" % index
                tors.append(tor)
            first += per_group
    cluster = {"name": name, "rails": rails, "tors": tors,
               "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 20, "node_prefix": 28}}
    return cluster, first - 1


def make_plan(blocks=(3, 2), per_group=4, rails=2, hosts="gpu%02d"):
    cluster, count = model(blocks, per_group, rails)
    return rail_plan(cluster, dict((hosts % i, i) for i in range(1, count + 1)))


@pytest.fixture(name="plan")
def plan_fixture():
    return make_plan()


def test_rail_groups_follow_the_tors_and_spine_blocks(plan):
    topo = T.topologies(plan)["default"]
    assert [b["name"] for b in topo["spine_blocks"]] == ["sb1", "sb2"]
    assert [g["name"] for g in topo["spine_blocks"][0]["groups"]] == ["sb1.rg1", "sb1.rg2", "sb1.rg3"]
    assert topo["groups"]["sb1.rg3"]["hosts"] == ["gpu09", "gpu10", "gpu11", "gpu12"]
    assert topo["groups"]["sb2.rg1"]["tors"] == ["su4-r1", "su4-r2"]
    assert topo["notes"] == []


def test_a_tor_across_two_rail_groups_is_noted():
    cluster, count = model(blocks=(2,), per_group=4)
    cluster["tors"][0]["nodes"] = "1-8"          # su1-r1 serves both groups' rail 1
    del cluster["tors"][2]                       # su2-r1 is gone
    plan = rail_plan(cluster, dict(("gpu%02d" % i, i) for i in range(1, count + 1)))
    topo = T.topologies(plan)["default"]
    assert len(topo["groups"]) == 2
    assert topo["notes"] and "su1-r1 serves nodes of 2 rail groups" in topo["notes"][0]
    control = T.topologies(make_plan(blocks=(2,)))["default"]
    assert control["notes"] == []


def test_a_rail_group_across_two_spine_blocks_is_refused():
    cluster, count = model(blocks=(2,), per_group=4)
    cluster["tors"][1]["spine_block"] = "other"   # rail 2 ToR of group 1
    plan = rail_plan(cluster, dict(("gpu%02d" % i, i) for i in range(1, count + 1)))
    with pytest.raises(FabricModelError, match="in 2 spine blocks"):
        T.topologies(plan)


def test_spine_block_on_every_tor_or_none():
    cluster, _count = model(blocks=(2,))
    del cluster["tors"][3]["spine_block"]
    with pytest.raises(FabricModelError, match=r"tors\[3\].spine_block.*set spine_block on every ToR"):
        load_cluster(cluster)
    none, _count = model(blocks=(2,), spine=False)
    assert all(t.spine_block is None for t in load_cluster(none).fabrics[0].tors)


@pytest.mark.parametrize("bad", ["SB1", "sb_1", "-sb", "sb.1", "a" * 17, "sb[1]", "sb,1"])
def test_spine_block_name_pattern(bad):
    cluster, _count = model(blocks=(1,))
    for tor in cluster["tors"]:
        tor["spine_block"] = bad
    with pytest.raises(FabricModelError, match="spine_block"):
        load_cluster(cluster)


def test_no_spine_block_keeps_the_model_digest():
    """A model that names no spine block keeps the digest its plan lock was written with."""
    without, _count = model(blocks=(1,), spine=False)
    digest = model_digest(load_cluster(without).to_dict())
    with_block, _count = model(blocks=(1,))
    assert "spine_block" not in load_cluster(without).to_dict()["fabrics"]["default"]["tors"][0]
    assert model_digest(load_cluster(with_block).to_dict()) != digest


def test_default_tors_make_one_group_in_one_spine_block():
    shared = {"mode": "shared", "supernet": "10.1.0.0/16", "rail_prefix": 20}
    plan = rail_plan({"name": "c", "rails": 4, "addressing": shared}, {"a1": 1, "a2": 2})
    topo = T.topologies(plan)["default"]
    assert [(g["name"], g["hosts"]) for g in topo["groups"].values()] == [("sb1.rg1", ["a1", "a2"])]


# -- Slurm ---------------------------------------------------------------------------


def known(plan):
    return set(T.slurm_names(plan).values())


def test_tree_is_one_leaf_per_rail_group_then_spine_blocks_then_root(plan):
    topo = T.topologies(plan)["default"]
    switches, violations = judge.judge_tree(T.tree_conf(topo, T.slurm_names(plan)), known(plan))
    assert violations == []
    leaves = dict((n, s["nodes"]) for n, s in switches.items() if s["nodes"])
    assert leaves == dict((g["name"], g["hosts"]) for g in topo["groups"].values())
    assert switches["sb1"]["switches"] == ["sb1.rg1", "sb1.rg2", "sb1.rg3"]
    assert switches["default.all"]["switches"] == ["sb1", "sb2"]


def test_the_judge_refuses_a_leaf_per_rail(plan):
    """The control of the tree: one leaf per ToR (per rail) puts every node on several leaves."""
    lines = ["SwitchName=%s Nodes=%s" % (t["name"], ",".join(p["host"] for p in t["ports"]))
             for t in plan["tors"].values()]
    _switches, violations = judge.judge_tree("\n".join(lines), known(plan))
    assert any(v.startswith("Multiple leaf switches contain nodes: gpu01,") for v in violations)


def test_block_pads_each_spine_block_to_a_power_of_two(plan):
    topo = T.topologies(plan)["default"]
    text = T.block_conf(topo, T.slurm_names(plan))
    blocks, sizes, violations = judge.judge_block(text, known(plan))
    assert violations == []
    assert sizes == [4, 8, 16, 32]
    assert [n for n, _nodes in blocks] == ["sb1.rg1", "sb1.rg2", "sb1.rg3", "sb1.pad4", "sb2.rg1", "sb2.rg2",
                                           "sb2.pad3", "sb2.pad4"]
    # Slurm's aggregates up to a spine block's size (4 blocks) never mix two spine blocks.
    for size, groups in judge.aggregates(blocks, sizes).items():
        if size <= 4:
            for names in groups:
                assert len(set(n.split(".")[0] for n in names)) == 1, (size, names)
    # The control: the same blocks without the padding mix sb1 and sb2 in an aggregate of 4.
    bare = [(n, nodes) for n, nodes in blocks if nodes]
    mixed = [names for names in judge.aggregates(bare, sizes)[4] if len(set(n.split(".")[0] for n in names)) > 1]
    assert mixed


def test_block_sizes_start_at_the_smallest_group():
    cluster, count = model(blocks=(2,), per_group=4)
    cluster["tors"][2]["nodes"] = cluster["tors"][3]["nodes"] = "5-6"   # group 2: 2 nodes
    plan = rail_plan(cluster, dict(("gpu%02d" % i, i) for i in range(1, count - 1)))
    blocks, sizes, violations = judge.judge_block(T.block_conf(T.topologies(plan)["default"], T.slurm_names(plan)),
                                                  known(plan))
    assert violations == [] and sizes == [2, 4] and len(blocks) == 2


def test_the_block_judge_refuses_bad_sizes():
    nodes = {"n1", "n2", "n3", "n4"}
    assert judge.judge_block("BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\nBlockSizes=2,4", nodes)[2] == []
    assert judge.judge_block("BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\nBlockSizes=2,6", nodes)[2]
    assert judge.judge_block("BlockName=b1 Nodes=n[1-2]\nBlockName=b1 Nodes=n[3-4]\nBlockSizes=2,4", nodes)[2]


@pytest.mark.parametrize("kinds", [None, {"default": "block"}])
def test_topology_yaml_holds_one_topology_per_fabric(kinds):
    plan = two_fabric_plan()
    topos = T.topologies(plan)
    doc = yaml.safe_load(T.topology_yaml(topos, T.slurm_names(plan), kinds))
    assert [t["topology"] for t in doc] == ["default", "storage"]
    assert [t["cluster_default"] for t in doc] == [True, False]
    assert judge.judge_yaml(doc, known(plan)) == []
    assert ("block" if kinds else "tree") in doc[0]
    # The control: the judge refuses a switch name Slurm refuses.
    doc[1]["tree"]["switches"][0]["switch"] = "s" * 65
    assert judge.judge_yaml(doc, known(plan))


def test_hostlist_reads_back_as_the_names():
    rng = random.Random(7)
    for _round in range(200):
        names = set()
        for _i in range(rng.randint(1, 30)):
            prefix = rng.choice(["gpu", "n", "a-1.b", "x", "rack2-node", ""])
            digits = rng.choice(["%d", "%02d", "%03d", "%05d"]) % rng.randint(0, 1200)
            names.add(prefix + digits if prefix or digits[0] != "0" or len(digits) == 1 else "z" + digits)
        names.add(rng.choice(["plain", "node-a", "n1a"]))
        text = T.hostlist(sorted(names))
        assert sorted(judge.expand(text)) == sorted(names), text


def test_hostlist_keeps_padding_and_folds_ranges():
    assert T.hostlist(["gpu09", "gpu10", "gpu11", "gpu01"]) == "gpu[01,09-11]"
    assert T.hostlist(["n9", "n10"]) == "n[9-10]"
    assert T.hostlist(["x001", "x01"]) == "x01,x001"          # two widths: two names, neither folded


@pytest.mark.parametrize("bad", ["a,b", "n[1]", "n 1", "a=b", "#a", "fe80::1", "-a", "a" * 65])
def test_slurm_names_that_a_hostlist_would_misread_are_refused(plan, bad):
    with pytest.raises(FabricModelError, match="topology_node_names.gpu01"):
        T.slurm_names(plan, {"gpu01": bad})
    assert T.slurm_names(plan, {"gpu01": "node-01.a_b"})["gpu01"] == "node-01.a_b"


def test_an_ipv6_host_needs_a_slurm_name():
    shared = {"mode": "shared", "supernet": "10.1.0.0/16", "rail_prefix": 20}
    plan = rail_plan({"name": "c", "rails": 1, "addressing": shared}, {"fd00::1": 1, "b": 2})
    with pytest.raises(FabricModelError, match=r"topology_node_names.fd00::1"):
        T.slurm_names(plan)
    assert T.slurm_names(plan, {"fd00::1": "a"}) == {"fd00::1": "a", "b": "b"}


def test_two_hosts_on_one_slurm_name_are_refused(plan):
    with pytest.raises(FabricModelError, match="is also the Slurm node name of gpu01"):
        T.slurm_names(plan, {"gpu02": "gpu01"})


# -- Kubernetes labels ----------------------------------------------------------------


def test_fnv64a_vectors():
    # FNV-1a 64-bit test vectors (Fowler, Noll, Vo: the reference test suite): "" and "a".
    assert T.fnv64a("") == 0xcbf29ce484222325
    assert T.fnv64a("a") == 0xaf63dc4c8601ec8c
    assert T.label_value("x" * 63) == "x" * 63
    # topograph's own vector (pkg/engines/k8s/labeler_test.go, TestApplyNodeLabels, the switch name of
    # pkg/translate GetTreeTestSet(true)): checkLabel writes fmt.Sprintf("x%x", ...), not padded.
    assert T.label_value("S3very-very-long-id-to-check-label-value-limits-of-63-characters") == "xf946c4acef2d5939"


def test_labels_own_keys_and_topograph_keys(plan):
    topos = T.topologies(plan)
    names = T.k8s_node_names(plan)
    own = T.node_labels(plan, topos, names)
    assert own["gpu05"] == {"ainet.fabric/cluster": "lab", "ainet.fabric/rail-group": "sb1.rg2",
                            "ainet.fabric/spine-block": "sb1"}
    topo = T.node_labels(plan, topos, names, "topograph")
    assert topo["gpu13"] == {"ainet.fabric/cluster": "lab", "fabric.topograph.run/tier-0": "sb2.rg1",
                             "fabric.topograph.run/tier-1": "sb2"}
    with pytest.raises(FabricModelError, match="topology_label_keys"):
        T.node_labels(plan, topos, names, "both")


def test_label_diff_reports_and_refuses_a_second_writer(plan):
    labels = T.node_labels(plan, T.topologies(plan), T.k8s_node_names(plan))
    read = [{"metadata": {"name": "gpu01", "labels": dict(labels["gpu01"])}},
            {"metadata": {"name": "gpu02", "labels": {"ainet.fabric/rail-group": "old", "other/key": "x"}}},
            {"metadata": {"name": "gpu03", "labels": dict(labels["gpu03"], **{"ainet.fabric/x.rail-group": "y"})}},
            {"metadata": {"name": "cpu1", "labels": {"ainet.fabric/spine-block": "sb9"}}}]
    diff = T.label_diff(labels, read)
    assert diff["unchanged"] == 2
    assert diff["set"]["gpu02"]["ainet.fabric/rail-group"] == ("old", "sb1.rg1")
    assert diff["stale"] == {"gpu03": ["ainet.fabric/x.rail-group"], "cpu1": ["ainet.fabric/spine-block"]}
    assert "gpu04" in diff["absent"]
    topo = T.node_labels(plan, T.topologies(plan), T.k8s_node_names(plan), "topograph")
    read[0]["metadata"]["annotations"] = {"topograph.run/instance": "i-1"}
    with pytest.raises(FabricError, match="topograph writes the tier labels"):
        T.label_diff(topo, read, "topograph")
    assert T.label_diff(labels, read)["unchanged"] == 2      # own keys: topograph's annotation is no conflict


def test_labels_summary_is_one_line_with_the_first_change(plan):
    labels = T.node_labels(plan, T.topologies(plan), T.k8s_node_names(plan))
    read = [{"metadata": {"name": "gpu01", "labels": dict(labels["gpu01"])}},
            {"metadata": {"name": "gpu02", "labels": {"ainet.fabric/rail-group": "old"}}},
            {"metadata": {"name": "cpu1", "labels": {"ainet.fabric/spine-block": "sb9"}}}]
    assert len(labels) == 20
    assert T.labels_summary(T.label_diff(labels, read)) == (
        'node labels: 1 node(s) to change (gpu02: {"ainet.fabric/cluster": [null, "lab"], "ainet.fabric/rail-group": '
        '["old", "sb1.rg1"], "ainet.fabric/spine-block": [null, "sb1"]} ...), 1 as planned, stale keys of ours on 1 '
        'node(s), 18 planned node(s) not in the cluster')
    # the control: every node read as planned, nothing to show
    read = [{"metadata": {"name": name, "labels": dict(value)}} for name, value in labels.items()]
    assert T.labels_summary(T.label_diff(labels, read)) == (
        "node labels: 0 node(s) to change, 20 as planned, stale keys of ours on 0 node(s), 0 planned node(s) not in "
        "the cluster")


def test_summary_names_the_withheld_groups_and_the_schema_check():
    line = T.summary("/inv/.ainet-fabric/lab/topology", ["slurm/topology.yaml"], {"storage": 2, "Compute": 3},
                     {"storage": {"sb1.rg2": "fused"}}, True, False, ["CRD schemas not checked: no crd_dir"])
    assert line == ("1 files in /inv/.ainet-fabric/lab/topology; rail groups Compute: 3, storage: 2; withheld "
                    "{'storage': {'sb1.rg2': 'fused'}} (cabling checked); schema check CRD schemas not checked: no crd_dir")
    # the control: nothing withheld, no cabling result, the schema check passed (the notes are then not shown)
    assert T.summary("/d", [], {"default": 1}, {}, False, True, ["a note"]) == (
        "0 files in /d; rail groups default: 1; withheld none (no cabling result); schema check passed")
    assert T.summary("/d", [], {"default": 1}, {}, False, False, []).endswith("; schema check no objects")

# -- Kueue and Volcano ------------------------------------------------------------------


def objects(plan, api="v1beta2", keys="ainet"):
    topos = T.topologies(plan)
    return T.kueue_objects(plan, "default", api, keys) + T.volcano_hypernodes(plan, topos["default"], keys)


@pytest.mark.skipif(not os.path.isdir(CRDS), reason="no CRDs: set AINET_K8S_CRD_DIR (../shared/validators/k8s)")
@pytest.mark.parametrize("api", ["v1beta1", "v1beta2"])
@pytest.mark.parametrize("keys", ["ainet", "topograph"])
def test_kueue_and_volcano_objects_pass_their_crds(plan, api, keys):
    schemas = k8s_validate.load_crds(CRDS)
    objs = objects(plan, api, keys)
    violations, unchecked = k8s_validate.validate(objs, schemas)
    assert violations == [] and unchecked == []
    assert T.cel_violations(objs) == []
    hyper = [o for o in objs if o["kind"] == "HyperNode"]
    assert [o["spec"]["tier"] for o in hyper].count(1) == 5 and [o["spec"]["tier"] for o in hyper].count(3) == 1
    # The control: a level without its label fails the schema.
    objs[0]["spec"]["levels"][0] = {}
    assert k8s_validate.validate(objs, schemas)[0]


def test_kueue_v1alpha1_passes_kueue_013s_crd(plan):
    schemas = k8s_validate.load_crds(KUEUE_013)
    objs = T.kueue_objects(plan, "default", "v1alpha1")
    assert [o["apiVersion"] for o in objs] == ["kueue.x-k8s.io/v1alpha1", "kueue.x-k8s.io/v1beta1"]
    assert k8s_validate.validate(objs, schemas) == ([], [])


def test_cel_rules_each_one_wrong(plan):
    base = objects(plan)
    assert T.cel_violations(base) == []

    def one(kind, change):
        objs = [dict(o, spec=yaml.safe_load(yaml.safe_dump(o["spec"]))) for o in base]
        target = next(o for o in objs if o["kind"] == kind)
        change(target["spec"])
        return T.cel_violations(objs)

    assert one("Topology", lambda s: s["levels"].insert(1, dict(s["levels"][0]))) == \
        ["Topology lab: spec.levels: must be unique"]
    assert one("Topology", lambda s: s["levels"].reverse()) == [
        "Topology lab: spec.levels: the kubernetes.io/hostname label can only be used at the lowest level of topology"]
    assert one("ResourceFlavor", lambda s: s.pop("nodeLabels")) == [
        "ResourceFlavor lab: spec: at least one nodeLabel is required when topology is set"]
    assert len(one("HyperNode", lambda s: s["members"][0]["selector"].update(exactMatch={"name": "a"}))) == 1
    assert len(one("HyperNode", lambda s: s["members"][0].update(selector={}))) == 1


def test_hypernode_admission_policy_each_one_wrong(plan):
    # Volcano's hypernode-validation-policy (installer/helm/chart/volcano/policy/hypernodes-validating.yaml): one
    # thing wrong per case; the control is the rendered objects (no violation).
    base = objects(plan)
    assert T.cel_violations(base) == []
    spine = next(o for o in base if o["kind"] == "HyperNode" and o["spec"]["tier"] == 2)

    def one(change):
        obj = dict(spine, spec=yaml.safe_load(yaml.safe_dump(spine["spec"])))
        change(obj["spec"])
        return T.cel_violations([obj])

    name = spine["metadata"]["name"]
    assert one(lambda s: s.update(members=[])) == ["HyperNode %s: spec.members: member must have at least one member"
                                                   % name]
    assert one(lambda s: s["members"][0]["selector"]["exactMatch"].update(name="")) == [
        "HyperNode %s: spec.members[0].selector: member exactMatch name is required" % name]
    assert one(lambda s: s["members"][0]["selector"]["exactMatch"].update(name="a" * 63)) == []
    too_long = one(lambda s: s["members"][0]["selector"]["exactMatch"].update(name="a" * 64))
    assert len(too_long) == 1 and "member exactMatch validate failed" in too_long[0]
    assert len(one(lambda s: s["members"][0]["selector"]["exactMatch"].update(name="a-"))) == 1
    assert one(lambda s: s["members"][0].update(selector={"regexMatch": {"pattern": "sb[0-9]+"}})) == []
    assert one(lambda s: s["members"][0].update(selector={"regexMatch": {"pattern": ""}})) == [
        "HyperNode %s: spec.members[0].selector: member regexMatch pattern is required" % name]
    assert one(lambda s: s["members"][0].update(selector={"regexMatch": {"pattern": "sb[0-9+"}})) == [
        "HyperNode %s: spec.members[0].selector: member regexMatch pattern is invalid: unmatched square brackets"
        % name]


def test_bounded_name():
    short = "c" * 63
    assert T.bounded_name(short) == short
    long_a, long_b = "c" * 60 + "-sb1.rg1", "c" * 60 + "-sb1.rg2"
    a, b = T.bounded_name(long_a), T.bounded_name(long_b)
    assert len(a) == 63 and a != b and a == T.bounded_name(long_a)
    assert a == "c" * 46 + "-%016x" % T.fnv64a(long_a)
    # A head that would end in '-' or '.' is cut back to an alphanumeric character.
    assert T.bounded_name("c" * 45 + "-" + "d" * 30).startswith("c" * 45 + "-")
    assert not T.bounded_name("c" * 45 + "-" + "d" * 30).startswith("c" * 45 + "--")


def test_long_cluster_name_gives_bounded_hypernode_names():
    plan = {"cluster": {"name": "k" * 58}}
    assert T.hypernode_name(plan, "default", "sb1.rg1") == T.bounded_name("k" * 58 + "-sb1.rg1")
    assert len(T.hypernode_name(plan, "default", "sb1.rg1")) == 63
    assert T.hypernode_name({"cluster": {"name": "lab"}}, "default", "sb1.rg1") == "lab-sb1.rg1"


def test_cel_transition_rules(plan):
    new = T.kueue_objects(plan, "default", "v1beta1")
    old = yaml.safe_load(yaml.safe_dump(new))
    assert T.cel_violations(new, old) == []
    old[0]["spec"]["levels"] = old[0]["spec"]["levels"][1:]
    assert T.cel_violations(new, old) == ["Topology lab: spec.levels: field is immutable"]
    # v1beta2: levels may change while kubernetes.io/hostname stays the lowest level.
    new2 = T.kueue_objects(plan, "default", "v1beta2")
    assert T.cel_violations(new2, old) == []
    old[0]["spec"]["levels"] = old[0]["spec"]["levels"][:1]
    assert T.cel_violations(new2, old)
    old[1]["spec"]["topologyName"] = "other"
    assert any("topologyName is immutable" in v for v in T.cel_violations(new2, old))


# -- declared against discovered ------------------------------------------------------


def cabling_ok(plan):
    return {"ok": [{"host": h, "fabric": e["fabric"], "rail": e["rail"], "tor": e["tor"], "port": e["tor_port"],
                    "port_verified": True} for h, n in plan["nodes"].items() for e in n["rails"]], "findings": []}


def with_finding(plan, host, rail, kind, seen_tor, pair=None):
    cabling = cabling_ok(plan)
    cabling["ok"] = [e for e in cabling["ok"] if not (e["host"] == host and e["rail"] in (rail, pair))]
    finding = {"host": host, "fabric": "default", "rail": rail, "kind": kind, "seen": {"tor": seen_tor, "port": "x"}}
    if pair:
        finding["pair"] = {"fabric": "default", "rail": pair, "seen": {"tor": "su1-r%d" % rail, "port": "y"}}
    cabling["findings"] = [finding]
    return cabling


@pytest.mark.parametrize("cabling, verdict", [
    (lambda p: with_finding(p, "gpu01", 1, "wrong_tor", "su2-r1"), "fused"),
    (lambda p: with_finding(p, "gpu01", 1, "wrong_tor", "leaf99.example.net"), "split"),
    (lambda p: with_finding(p, "gpu01", 1, "swapped", "su1-r2", pair=2), "crossed"),
    (lambda p: with_finding(p, "gpu01", 1, "missing", None), "unverified"),
    (lambda p: with_finding(p, "gpu01", 1, "wrong_port", "su1-r1"), "agrees"),
    (lambda p: with_finding(p, "gpu01", 1, "wrong_tor", "SU1-R1.example.net"), "agrees"),
    (lambda p: None, "unverified"),
])
def test_cabling_verdicts(plan, cabling, verdict):
    topos = T.topologies(plan)
    result = rail_group_check.agreement(topos, cabling(plan))["default"]
    assert result["sb1.rg1"]["verdict"] == verdict
    if verdict == "fused":       # the group whose ToR gpu01 reaches is fused with it
        assert result["sb1.rg2"]["verdict"] == "fused"
        assert result["sb1.rg2"]["why"] == ["fused with sb1.rg1: gpu01 rail 1 reaches su2-r1 of rail group sb1.rg2, "
                                            "planned su1-r1"]
    elif verdict != "unverified" or cabling(plan) is not None:
        assert result["sb1.rg2"]["verdict"] == "agrees"
    assert result["sb1.rg3"]["verdict"] == ("unverified" if cabling(plan) is None else "agrees")


def test_a_group_that_disagrees_is_withheld_from_every_output(plan):
    topos = T.topologies(plan)
    agreement = rail_group_check.agreement(topos, with_finding(plan, "gpu01", 1, "wrong_tor", "su2-r1"))
    out = T.render(plan, {}, agreement, topos)
    assert out["withheld"]["default"] == {"sb1.rg1": agreement["default"]["sb1.rg1"],
                                          "sb1.rg2": agreement["default"]["sb1.rg2"]}
    switches = judge.judge_tree(out["files"]["slurm/default/topology.conf"], known(plan))[0]
    assert sorted(n for n, s in switches.items() if s["nodes"]) == ["sb1.rg3", "sb2.rg1", "sb2.rg2"]
    text = "".join(out["files"].values())
    assert "gpu01" not in text and "sb1.rg1" not in text and "sb1.rg2" not in text
    control = T.render(plan, {}, rail_group_check.agreement(topos, cabling_ok(plan)), topos)
    assert control["withheld"] == {} and "sb1.rg1" in control["files"]["slurm/default/topology.conf"]


def two_fabric_plan(names=("default", "storage")):
    cluster, count = model(blocks=(2, 1))
    storage, _n = model(blocks=(1,), per_group=count)
    storage["addressing"]["supernet"] = "172.18.0.0/16"
    for tor in storage["tors"]:
        tor["name"] = "st-" + tor["name"]
    two = {"name": "lab", "fabrics": {names[0]: dict((k, v) for k, v in cluster.items() if k != "name"),
                                      names[1]: dict((k, v) for k, v in storage.items() if k != "name")}}
    return rail_plan(two, dict(("gpu%02d" % i, {"node_id": i}) for i in range(1, count + 1)))


def test_object_names_are_unique_across_fabrics():
    out = T.render(two_fabric_plan(("a_b", "c")))
    names = [(o["kind"], o["metadata"]["name"]) for o in out["objects"]["kueue"] + out["objects"]["volcano"]]
    assert len(names) == len(set(names)) and ("HyperNode", "lab-a-b.all") in names
    with pytest.raises(FabricError, match="fabrics a_b and a-b both give the Topology name lab-a-b"):
        T.render(two_fabric_plan(("a_b", "a-b")))


def test_several_fabrics_label_per_fabric_and_topograph_labels_one():
    plan = two_fabric_plan(("compute", "storage"))
    own = T.render(plan)["labels"]["gpu01"]
    assert own == {"ainet.fabric/cluster": "lab", "ainet.fabric/compute.rail-group": "sb1.rg1",
                   "ainet.fabric/compute.spine-block": "sb1", "ainet.fabric/storage.rail-group": "sb1.rg1",
                   "ainet.fabric/storage.spine-block": "sb1"}
    out = T.render(plan, {"label_keys": "topograph", "topograph_fabric": "storage"})
    assert sorted(out["labels"]["gpu09"]) == ["ainet.fabric/cluster", "fabric.topograph.run/tier-0",
                                              "fabric.topograph.run/tier-1"]
    assert set(o["metadata"]["labels"]["ainet.fabric/fabric"] for o in out["objects"]["kueue"]) == {"storage"}


def test_only_existing_nodes_get_a_node_object(plan):
    out = T.render(plan, {"existing_nodes": {"gpu01", "gpu02"}})
    assert [o["metadata"]["name"] for o in out["objects"]["nodes"]] == ["gpu01", "gpu02"]
    assert len(T.render(plan)["objects"]["nodes"]) == 20
