# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Review 45 (docs/reviews/45-infiniband.md): InfiniBand cabling and OpenSM partitions checked against the oracles'
code (rdma-core infiniband-diags/ibnetdiscover.c and smpquery.c, opensm/osm_prtn_config.c and osm_prtn.c, ibsim
sim_net.c). The defects D<n> were strict xfails until fixed (the review doc names the commit); the cases that held are plain tests. Samples recorded from the
ibsim lab with the real OpenSM 3.3.23 and infiniband-diags 44.0 (data/ib/ORIGIN.md, "review 45" rows)."""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.cabling.ib_cabling import check_ib_cabling
from ansible_collections.ainet.fabric.plugins.module_utils.cabling.ib_parse import parse_ibnetdiscover, \
    parse_smpquery_pkeys
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.ib import opensm

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "ib")
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "lab"))
import ib_plans  # noqa: E402  pylint: disable=wrong-import-position

GPU01_R1 = "0x0002c90300100011"
GPU01_R2 = "0x0002c90300200011"


def sample(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


@pytest.fixture(name="plan", scope="module")
def plan_fixture():
    return ib_plans.lab_plan()


@pytest.fixture(name="guids", scope="module")
def guids_fixture(plan):
    return ib_plans.port_guids(plan, parse_ibnetdiscover(sample("ibnetdiscover-good.txt")))


def _port(desired, guid):
    return {guid: desired[guid]}


# D1: "both" membership. osm_prtn_config.c partition_add_port: the limited entry is added only when
# allow_both_pkeys is set (default FALSE, and options_text never sets it), so OpenSM programs the full PKey alone.
def test_d1_both_membership_as_opensm_applies_it_agrees(plan, guids):
    parts = [dict(ib_plans.PARTITIONS[0], membership="both"), ib_plans.PARTITIONS[1]]
    desired = _port(opensm.desired_pkeys(plan, parts, guids), GPU01_R2)
    seen = {GPU01_R2: parse_smpquery_pkeys(sample("smpquery-pkeys-gpu01-mlx5_1-both.txt"))["pkeys"]}
    assert opensm.compare_pkeys(desired, seen)["findings"] == []


def test_d1_control_full_membership_on_the_same_table_agrees(plan, guids):
    desired = _port(opensm.desired_pkeys(plan, ib_plans.PARTITIONS, guids), GPU01_R2)
    seen = {GPU01_R2: parse_smpquery_pkeys(sample("smpquery-pkeys-gpu01-mlx5_1-both.txt"))["pkeys"]}
    assert opensm.compare_pkeys(desired, seen)["summary"]["ok"] == 1


# D2: the default partition. The rendered file says ALL=limited (0x7fff); a port that OpenSM made a full member
# (0xffff: the Default rule edited to ALL=full, recorded) is reported as agreeing.
def test_d2_full_member_of_the_default_partition_is_a_finding(plan, guids):
    desired = _port(opensm.desired_pkeys(plan, ib_plans.PARTITIONS, guids), GPU01_R1)
    seen = {GPU01_R1: parse_smpquery_pkeys(sample("smpquery-pkeys-gpu01-mlx5_0-default-full.txt"))["pkeys"]}
    assert seen[GPU01_R1][0] == "0xffff"
    assert opensm.compare_pkeys(desired, seen)["findings"] != []


def test_d2_port_without_the_default_partition_is_a_finding(plan, guids):
    desired = _port(opensm.desired_pkeys(plan, ib_plans.PARTITIONS, guids), GPU01_R1)
    assert opensm.compare_pkeys(desired, {GPU01_R1: ["0x8101", "0x0202"]})["findings"] != []


def test_d2_control_limited_default_agrees(plan, guids):
    desired = _port(opensm.desired_pkeys(plan, ib_plans.PARTITIONS, guids), GPU01_R1)
    seen = {GPU01_R1: parse_smpquery_pkeys(sample("smpquery-pkeys-gpu01-mlx5_0.txt"))["pkeys"]}
    assert opensm.compare_pkeys(desired, seen)["summary"]["ok"] == 1


# D3: a rail link at 1x while every other rail runs 4x (ibsim sim_net.c honours "lid N 1xSDR" on a port line).
def test_d3_degraded_width_is_a_finding_by_default(plan):
    result = check_ib_cabling(plan, sample("ibnetdiscover-1x-gpu01-rail1.txt"))
    assert [(f["host"], f["rail"], f["kind"]) for f in result["findings"]] == [("gpu01", 1, "slow_link")]


def test_d3_control_degraded_width_with_expect(plan):
    result = check_ib_cabling(plan, sample("ibnetdiscover-1x-gpu01-rail1.txt"), expect={"width": "4x"})
    assert [(f["host"], f["rail"], f["kind"]) for f in result["findings"]] == [("gpu01", 1, "slow_link")]
    assert check_ib_cabling(plan, sample("ibnetdiscover-good.txt"), expect={"width": "4x"})["findings"] == []


# D4: the broadcast group's mtu/rate/sl accepted on a partition without ipoib, then left out of the file.
def test_d4_flags_without_ipoib_are_refused(plan, guids):
    part = dict(ib_plans.PARTITIONS[1], mtu=5)
    with pytest.raises(FabricError, match="mtu"):
        opensm.partitions_text(plan, [part], guids)


def test_d4_control_flags_with_ipoib_are_written(plan, guids):
    assert "compute=0x0101, ipoib, mtu=5 :" in opensm.partitions_text(plan, [ib_plans.PARTITIONS[0]], guids)


# Held: cases with one thing wrong that the check catches.
def _kinds(result):
    return [(f["host"], f["rail"], f["kind"], f.get("seen")) for f in result["findings"]]


def test_two_hcas_of_one_node_on_the_same_leaf(plan):
    good = sample("ibnetdiscover-good.txt")
    text = good.replace('[1]\t"H-0002c90300200010"[1](2c90300200011) \t\t# "gpu01 mlx5_1" lid 8 4xSDR\n', '')
    line = '[2]\t"H-0002c90300100020"[1](2c90300100021) \t\t# "gpu02 mlx5_0" lid 9 4xSDR\n'
    text = text.replace(line, line + '[3]\t"H-0002c90300200010"[1](2c90300200011) \t\t# "gpu01 mlx5_1" lid 8 4xSDR\n')
    text = text.replace('[1](2c90300200011) \t"S-0002c90400000200"[1]', '[1](2c90300200011) \t"S-0002c90400000100"[3]')
    assert text != good
    assert _kinds(check_ib_cabling(plan, text)) == [("gpu01", 2, "wrong_tor", {"tor": "su1-r1", "port": "3"})]


def test_unnamed_leaf_is_never_agreeing(plan):
    text = sample("ibnetdiscover-good.txt").replace('# "su1-r2" base port 0', '# "" base port 0')
    assert _kinds(check_ib_cabling(plan, text)) == [("gpu01", 2, "missing", None), ("gpu02", 2, "missing", None)]


def test_quoted_description_is_data(plan):
    text = sample("ibnetdiscover-good.txt").replace('# "gpu01 mlx5_0"\n', '# "gpu01 "mlx5_0""\n')
    topo = parse_ibnetdiscover(text)
    assert topo["nodes"]["0x0002c90300100010"]["description"] == 'gpu01 "mlx5_0"'
    assert sorted(f["kind"] for f in check_ib_cabling(plan, topo)["findings"]) == ["extra", "missing"]


def test_unread_subnet_is_every_rail_missing(plan):
    result = check_ib_cabling(plan, None, unread_why="ibnetdiscover failed")
    assert result["summary"]["ok"] == 0 and result["summary"]["by_kind"] == {"missing": 8}


# ibnetdiscover.c out_switch_port/out_ca_port/out_ca_detail layouts: [ext N] (-g), s= w= v= (-f), a router (Rt),
# a CA-to-CA link (" (guid) " after the peer), ??-width, quotes inside descriptions. Written from the format strings.
EDGE = '''
switchguid=0x2c90400000100(2c90400000100)
Switch\t36 "S-0002c90400000100"\t\t# "su1-r1 "q" " enhanced port 0 lid 1 lmc 0
[1][ext 3]\t"H-0002c90300100010"[1](2c90300100011) \t\t# "gpu01 "x" mlx5_0" lid 7 4xHDR s=1 w=2 v=3
[2]\t"R-0002c90300100099"[1](2c90300100099) \t\t# "rtr" lid 9 4xNDR
[3]\t"S-0002c90400000200"[2]\t\t# "" lid 2 ??XDR

caguid=0x2c90300100010
Ca\t2 "H-0002c90300100010"\t\t# "gpu01 "x" mlx5_0"
[1](2c90300100011) \t"S-0002c90400000100"[1][ext 3]\t\t# lid 7 lmc 2 "su1-r1 "q" " lid 1 4xHDR
[2](2c90300100012) \t"H-0002c90300100077"[1] (2c90300100078) \t\t# lid 8 lmc 0 "peer" lid 11 2xFDR10

rtguid=0x2c90300100099
Rt\t1 "R-0002c90300100099"\t\t# "rtr"
[1](2c90300100099) \t"S-0002c90400000100"[2]\t\t# lid 9 lmc 0 "su1-r1 "q" " lid 1 4xNDR
'''


def test_ibnetdiscover_layouts_from_the_format_strings():
    topo = parse_ibnetdiscover(EDGE)
    assert topo["nodes"]["0x0002c90400000100"]["description"] == 'su1-r1 "q" '
    assert topo["nodes"]["0x0002c90300100099"]["type"] == "router"
    links = [(k["a"]["port"], k["b"]["guid"], k["width"], k["speed"]) for k in topo["links"]]
    assert links == [(1, "0x0002c90300100010", "4x", "HDR"), (2, "0x0002c90300100099", "4x", "NDR"),
                     (3, "0x0002c90400000200", None, "XDR"), (2, "0x0002c90300100077", "2x", "FDR10")]
    assert topo["links"][3]["b"]["port_guid"] == "0x0002c90300100078"


# The fixes' other side: each with one thing changed from the reviewed case.
def test_d1_both_with_allow_both_pkeys_wants_both_and_the_option_is_written(plan, guids):
    parts = [dict(ib_plans.PARTITIONS[0], membership="both"), ib_plans.PARTITIONS[1]]
    both = opensm.allow_both_pkeys(parts)
    assert both and not opensm.allow_both_pkeys(ib_plans.PARTITIONS)
    assert "allow_both_pkeys TRUE\n" in opensm.options_text("/etc/opensm/partitions.conf", both_pkeys=both)
    assert "allow_both_pkeys" not in opensm.options_text("/etc/opensm/partitions.conf")
    desired = _port(opensm.desired_pkeys(plan, parts, guids, both_pkeys=both), GPU01_R2)
    seen = {GPU01_R2: parse_smpquery_pkeys(sample("smpquery-pkeys-gpu01-mlx5_1-both.txt"))["pkeys"]}
    result = opensm.compare_pkeys(desired, seen)
    assert [(f["kind"], f["pkey"]) for f in result["findings"]] == [("wrong_membership", "0x0101")]


def test_d2_the_sm_port_is_the_full_member_of_the_default_partition(plan, guids):
    seen = {GPU01_R1: parse_smpquery_pkeys(sample("smpquery-pkeys-gpu01-mlx5_0-default-full.txt"))["pkeys"]}
    as_sm = _port(opensm.desired_pkeys(plan, ib_plans.PARTITIONS, guids, sm_port_guid=GPU01_R1), GPU01_R1)
    assert opensm.compare_pkeys(as_sm, seen)["findings"] == []
    limited = {GPU01_R1: parse_smpquery_pkeys(sample("smpquery-pkeys-gpu01-mlx5_0.txt"))["pkeys"]}
    kinds = [(f["kind"], f["pkey"]) for f in opensm.compare_pkeys(as_sm, limited)["findings"]]
    assert kinds == [("wrong_membership", "0xffff")]


def test_d2_missing_default_partition_says_why(plan, guids):
    desired = _port(opensm.desired_pkeys(plan, ib_plans.PARTITIONS, guids), GPU01_R1)
    finding = opensm.compare_pkeys(desired, {GPU01_R1: ["0x8101", "0x0202"]})["findings"]
    assert [(f["kind"], f["pkey"]) for f in finding] == [("missing_pkey", "0x7fff")]
    assert "cannot reach the SA" in finding[0]["detail"]


def test_d3_peer_finding_names_what_the_peers_run(plan):
    result = check_ib_cabling(plan, sample("ibnetdiscover-1x-gpu01-rail1.txt"))
    assert "runs 1xSDR, most rail links of the fabric run 4xSDR" in result["findings"][0]["detail"]
    # An explicit expectation still wins over the peers (every link 4xSDR, below NDR).
    slow = check_ib_cabling(plan, sample("ibnetdiscover-good.txt"), expect={"speed": "NDR"})
    assert slow["summary"]["by_kind"] == {"slow_link": 8}
    assert "planned at least 4xNDR" in slow["findings"][0]["detail"]


@pytest.mark.parametrize("key,value", [("rate", 7), ("sl", 1)])
def test_d4_each_flag_without_ipoib_is_refused(plan, guids, key, value):
    with pytest.raises(FabricError, match=r"partitions\[0\]\.%s .*ipoib is false" % key):
        opensm.partitions_text(plan, [dict(ib_plans.PARTITIONS[1], **{key: value})], guids)
