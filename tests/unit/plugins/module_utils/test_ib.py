# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""InfiniBand: the infiniband-diags parsers (cabling/ib_parse.py), the cabling check against the plan
(cabling/ib_cabling.py) and OpenSM's partitions (ib/opensm.py), on outputs recorded from the ibsim lab with the
real tools (data/ib/ORIGIN.md). The same checks run live in tests/integration/test_ib_lab.py. Each behaviour: a
case with one thing wrong, and a control."""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.ainet.fabric.plugins.action import cabling_check as action
from ansible_collections.ainet.fabric.plugins.module_utils.cabling import ib_cabling
from ansible_collections.ainet.fabric.plugins.module_utils.cabling.cabling_check import check_cabling, findings_markdown
from ansible_collections.ainet.fabric.plugins.module_utils.cabling.ib_cabling import check_ib_cabling
from ansible_collections.ainet.fabric.plugins.module_utils.cabling.ib_parse import guid_text, parse_ibnetdiscover, \
    parse_smpquery_pkeys
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.ib import opensm
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "ib")
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "lab"))
import ib_plans  # noqa: E402  pylint: disable=wrong-import-position


def sample(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


@pytest.fixture(name="plan", scope="module")
def plan_fixture():
    return ib_plans.lab_plan()


# --- parsers ------------------------------------------------------------------------------------------------


def test_ibnetdiscover_nodes_links_width_speed():
    topo = parse_ibnetdiscover(sample("ibnetdiscover-good.txt"))
    kinds = sorted(n["type"] for n in topo["nodes"].values())
    assert kinds.count("ca") == 8 and kinds.count("switch") == 6
    hca = topo["nodes"]["0x0002c90300100010"]
    assert hca["description"] == "gpu01 mlx5_0" and hca["type"] == "ca" and hca["ports"] == 1
    assert hca["port_guids"] == {1: "0x0002c90300100011"}
    leaf = topo["nodes"]["0x0002c90400000100"]
    assert leaf["description"] == "su1-r1" and leaf["lid"] == 1 and leaf["ports"] == 36
    # 8 HCA links and 4 leaves x 2 spines x 2 uplinks, each once although printed from both ends.
    assert len(topo["links"]) == 8 + 16
    first = [link for link in topo["links"] if link["b"]["guid"] == "0x0002c90300100010"]
    assert len(first) == 1
    assert first[0]["a"] == {"guid": "0x0002c90400000100", "port": 1}
    assert first[0]["b"]["port_guid"] == "0x0002c90300100011"
    assert (first[0]["width"], first[0]["speed"]) == ("4x", "SDR")


def test_ibnetdiscover_dropped_cable_loses_the_hca():
    good = parse_ibnetdiscover(sample("ibnetdiscover-good.txt"))
    dropped = parse_ibnetdiscover(sample("ibnetdiscover-dropped.txt"))
    assert set(good["nodes"]) - set(dropped["nodes"]) == {"0x0002c90300200030"}
    assert len(dropped["links"]) == len(good["links"]) - 1


def test_ibnetdiscover_description_from_the_wire_stays_data():
    # A node may describe itself with quotes and words that look like the rest of the line.
    text = sample("ibnetdiscover-good.txt").replace('"gpu01 mlx5_0"', '"gpu01 mlx5_0\\" lid 9 4xNDR"')
    topo = parse_ibnetdiscover(text)
    assert topo["nodes"]["0x0002c90300100010"]["description"] == 'gpu01 mlx5_0\\" lid 9 4xNDR'
    link = next(item for item in topo["links"] if item["b"]["guid"] == "0x0002c90300100010")
    assert (link["width"], link["speed"]) == ("4x", "SDR")
    assert link["b_description"] == 'gpu01 mlx5_0\\" lid 9 4xNDR'


@pytest.mark.parametrize("text", ["", "ibwarn: cannot open umad port\n", "Switch 8 nothing\n"])
def test_ibnetdiscover_not_its_output_raises(text):
    with pytest.raises(FabricError, match="not ibnetdiscover output"):
        parse_ibnetdiscover(text)


def test_smpquery_pkeys_recorded():
    table = parse_smpquery_pkeys(sample("smpquery-pkeys-gpu01-mlx5_0.txt"))
    assert table == {"pkeys": ["0x7fff", "0x8101", "0x0202"], "capacity": 64}


def test_smpquery_pkeys_not_its_output_raises():
    with pytest.raises(FabricError, match="not smpquery pkeys output"):
        parse_smpquery_pkeys("smpquery: iberror: failed: operation pkey_table: node info query failed\n")


@pytest.mark.parametrize("value, expected", [("0x2c90300100011", "0x0002c90300100011"),
                                             ("00:02:c9:03:00:10:00:11", "0x0002c90300100011"),
                                             ("0002C90300100011", "0x0002c90300100011")])
def test_guid_text(value, expected):
    assert guid_text(value) == expected


@pytest.mark.parametrize("value", ["0x1234567890abcdef0", "gpu01", "00:02:c9:03"])
def test_guid_text_rejects(value):
    with pytest.raises(FabricError):
        guid_text(value)


# --- cabling -------------------------------------------------------------------------------------------------


def test_cabling_agrees(plan):
    result = check_ib_cabling(plan, sample("ibnetdiscover-good.txt"))
    assert result["findings"] == []
    assert result["summary"] == {"hosts": 4, "rails": 8, "ok": 8, "findings": 0, "by_kind": {}, "unverified_ports": 0}
    assert result["ok"][0] == {"host": "gpu01", "fabric": "default", "rail": 1, "interface": "mlx5_0", "tor": "su1-r1",
                               "port": "1", "port_verified": True, "guid": "0x0002c90300100010",
                               "port_guid": "0x0002c90300100011"}


def test_one_swapped_cable_is_named_exactly(plan):
    result = check_ib_cabling(plan, sample("ibnetdiscover-swapped.txt"))
    assert result["summary"]["by_kind"] == {"swapped": 1} and result["summary"]["ok"] == 6
    finding = result["findings"][0]
    assert (finding["host"], finding["rail"], finding["interface"]) == ("gpu02", 1, "mlx5_0")
    assert finding["pair"]["rail"] == 2 and finding["pair"]["interface"] == "mlx5_1"
    assert finding["seen"] == {"tor": "su1-r2", "port": "2"} and finding["expected"] == {"tor": "su1-r1", "port": "2"}
    assert "gpu02: mlx5_0 (rail 1) and mlx5_1 (rail 2) are crossed" in finding["message"]


def test_a_removed_link_is_named(plan):
    result = check_ib_cabling(plan, sample("ibnetdiscover-dropped.txt"))
    assert result["summary"]["by_kind"] == {"missing": 1}
    finding = result["findings"][0]
    assert (finding["host"], finding["rail"], finding["kind"]) == ("gpu03", 2, "missing")
    assert finding["expected"] == {"tor": "su2-r2", "port": "1"}
    assert "gpu03 mlx5_1" in finding["detail"]


def test_slow_link_below_the_expected_speed_and_control(plan):
    slow = check_ib_cabling(plan, sample("ibnetdiscover-good.txt"), expect={"width": "4x", "speed": "HDR"})
    assert slow["summary"]["by_kind"] == {"slow_link": 8}
    assert "runs 4xSDR, planned at least 4xHDR" in slow["findings"][0]["detail"]
    wide = check_ib_cabling(plan, sample("ibnetdiscover-good.txt"), expect={"width": "12x"})
    assert wide["summary"]["by_kind"] == {"slow_link": 8}
    control = check_ib_cabling(plan, sample("ibnetdiscover-good.txt"), expect={"width": "4x", "speed": "SDR"})
    assert control["findings"] == []


def test_expect_is_validated(plan):
    with pytest.raises(FabricError, match="expect.speed 'HDR200'"):
        check_ib_cabling(plan, sample("ibnetdiscover-good.txt"), expect={"speed": "HDR200"})


def test_extra_links_of_hosts_not_in_the_plan():
    hosts = dict(ib_plans.HOSTS)
    del hosts["gpu04"]
    plan = rail_plan(ib_plans.lab_model(), hosts)
    result = check_ib_cabling(plan, sample("ibnetdiscover-good.txt"))
    assert result["summary"]["by_kind"] == {"extra": 2} and result["summary"]["ok"] == 6
    assert sorted((f["seen"]["tor"], f["seen"]["port"]) for f in result["findings"]) == [("su2-r1", "2"), ("su2-r2", "2")]
    assert "gpu04 mlx5_0" in result["findings"][0]["detail"] or "gpu04 mlx5_1" in result["findings"][0]["detail"]


def test_guids_from_the_inventory_and_a_wrong_one(plan):
    guids = {"gpu01": {1: "0x0002c90300100011", 2: "00:02:c9:03:00:20:00:10"}}
    result = check_ib_cabling(plan, sample("ibnetdiscover-good.txt"), hca_guids=guids)
    assert result["findings"] == []
    wrong = check_ib_cabling(plan, sample("ibnetdiscover-good.txt"),
                             hca_guids={"gpu01": {1: "0x0002c90300100099"}})
    # The GUID names no HCA: the rail is missing, and the HCA on its port is no rail's any more.
    assert wrong["summary"]["by_kind"] == {"missing": 1, "extra": 1}
    missing = [f for f in wrong["findings"] if f["kind"] == "missing"][0]
    assert (missing["host"], missing["rail"]) == ("gpu01", 1) and "GUID 0x0002c90300100099" in missing["detail"]


def test_switch_found_by_guid_when_its_description_is_the_default(plan):
    text = sample("ibnetdiscover-good.txt").replace('"su1-r1"', '"MF0;sw01:MQM9700/U1"')
    unnamed = check_ib_cabling(plan, text)
    assert unnamed["summary"]["by_kind"] == {"missing": 2}
    assert "leaf su1-r1 not in the subnet" in unnamed["findings"][0]["detail"]
    named = check_ib_cabling(plan, text, switch_guids={"su1-r1": "0x0002c90400000100"})
    assert named["findings"] == []


def test_two_hcas_with_one_description_are_not_guessed(plan):
    text = sample("ibnetdiscover-good.txt").replace('"gpu02 mlx5_0"', '"gpu01 mlx5_0"')
    result = check_ib_cabling(plan, text)
    kinds = dict(((f["host"], f["rail"]), f["kind"]) for f in result["findings"])
    assert kinds == {("gpu01", 1): "unexpected", ("gpu02", 1): "missing"}


def test_markdown_escapes_descriptions():
    hosts = dict(ib_plans.HOSTS)
    del hosts["gpu04"]
    plan = rail_plan(ib_plans.lab_model(), hosts)
    text = sample("ibnetdiscover-good.txt").replace('"gpu04 mlx5_0"', '"x | y\n[link](http://a)"')
    table = findings_markdown(check_ib_cabling(plan, text))
    assert "| y" not in table and "](http" not in table


# --- OpenSM partitions -------------------------------------------------------------------------------------


def good_port_guids(plan):
    return ib_plans.port_guids(plan, parse_ibnetdiscover(sample("ibnetdiscover-good.txt")))


def test_partitions_text_is_what_opensm_was_given(plan):
    # data/ib/partitions.conf is what the lab's OpenSM parsed without a PARSE ERROR and applied (smpquery below).
    assert opensm.partitions_text(plan, ib_plans.PARTITIONS, good_port_guids(plan)) == sample("partitions.conf")


def test_opensm_parse_error_is_what_a_bad_file_gives():
    log = sample("opensm-parse-error.log")
    assert "PARSE ERROR: line 3" in log and "retrying with default config" in log


def test_pkeys_served_are_the_models(plan):
    desired = opensm.desired_pkeys(plan, ib_plans.PARTITIONS, good_port_guids(plan))
    assert desired["0x0002c90300100011"] == {
        "host": "gpu01", "rail": 1, "pkeys": ["0x0202", "0x8101"], "default": "0x7fff"}
    assert desired["0x0002c90300100041"]["pkeys"] == ["0x8101"]
    seen = {"0x0002c90300100011": parse_smpquery_pkeys(sample("smpquery-pkeys-gpu01-mlx5_0.txt"))["pkeys"]}
    one = dict((g, d) for g, d in desired.items() if g in seen)
    result = opensm.compare_pkeys(one, seen)
    assert result["findings"] == [] and result["summary"]["ok"] == 1


def test_wrong_pkey_membership_and_unread(plan):
    seen = {"0x0002c90300100011": parse_smpquery_pkeys(sample("smpquery-pkeys-gpu01-mlx5_0.txt"))["pkeys"]}
    parts = [dict(ib_plans.PARTITIONS[0], pkey="0x0102"), ib_plans.PARTITIONS[1]]
    desired = opensm.desired_pkeys(plan, parts, good_port_guids(plan))
    result = opensm.compare_pkeys({"0x0002c90300100011": desired["0x0002c90300100011"]}, seen)
    kinds = sorted((f["kind"], f["pkey"]) for f in result["findings"])
    assert kinds == [("extra_pkey", "0x8101"), ("missing_pkey", "0x8102")]
    parts = [ib_plans.PARTITIONS[0], dict(ib_plans.PARTITIONS[1], membership="full")]
    desired = opensm.desired_pkeys(plan, parts, good_port_guids(plan))
    result = opensm.compare_pkeys({"0x0002c90300100011": desired["0x0002c90300100011"]}, seen)
    assert [(f["kind"], f["pkey"]) for f in result["findings"]] == [("wrong_membership", "0x8202")]
    unread = opensm.compare_pkeys({"0x0002c90300100011": desired["0x0002c90300100011"]}, {})
    assert [f["kind"] for f in unread["findings"]] == ["unread"] and unread["ok"] == []


@pytest.mark.parametrize("change, words", [
    ({"pkey": "0x7fff"}, "partitions[0].pkey '0x7fff'"),
    ({"pkey": "0x0202"}, "partitions[1].pkey '0x0202' is already partition compute's"),
    ({"pkey": "vlan7"}, "is not a number"),
    ({"name": "a b"}, "partitions[0].name 'a b'"),
    ({"membership": "member"}, "partitions[0].membership 'member'"),
    ({"hosts": ["gpu09"]}, "partitions[0].hosts 'gpu09'"),
    ({"fabric": "storage"}, "partitions[0].fabric 'storage'"),
    ({"mtu": 9}, "partitions[0].mtu 9"),
    ({"qos": 1}, "partitions[0].qos 1"),
])
def test_partitions_validated(plan, change, words):
    parts = [dict(ib_plans.PARTITIONS[0], **change), ib_plans.PARTITIONS[1]]
    with pytest.raises(FabricError) as err:
        opensm.partitions_text(plan, parts, good_port_guids(plan))
    assert words in str(err.value)


def test_member_without_a_guid_fails(plan):
    guids = good_port_guids(plan)
    del guids["gpu03"][2]
    with pytest.raises(FabricError, match="no port GUID for gpu03 rail 2"):
        opensm.partitions_text(plan, ib_plans.PARTITIONS, guids)


def test_options_text():
    text = opensm.options_text("/etc/opensm/partitions.conf", "/etc/opensm/root-guids.conf")
    assert "routing_engine ftree,updn\n" in text and "root_guid_file /etc/opensm/root-guids.conf\n" in text
    with pytest.raises(FabricError, match="partitions_file"):
        opensm.options_text("partitions.conf")
    assert opensm.root_guids_text(["0x2c90400006500"]) == "0x0002c90400006500\n"


# --- the cabling_check action's InfiniBand side ----------------------------------------------------------------


def test_action_reads_the_registered_runs_and_merges_them(plan):
    good = sample("ibnetdiscover-good.txt")
    hostvars = {"gpu01": {"__ib": {"results": [{"rc": 0, "stdout": good, "item": "mlx5_0"},
                                               {"rc": 0, "stdout": good, "item": "mlx5_1"}]}}}
    topo, why = action.subnet_topology(hostvars, ["gpu01", "gpu02"], "__ib")
    assert why is None and len(topo["links"]) == 24 and len(topo["nodes"]) == 14
    assert check_ib_cabling(plan, topo)["findings"] == []
    failed = {"gpu01": {"__ib": {"results": [{"rc": 255, "stdout": "", "stderr": "ibwarn: can't open UMAD port"}]}},
              "gpu02": {"__ib": {"skipped": True}}}
    topo, why = action.subnet_topology(failed, ["gpu01", "gpu02"], "__ib")
    assert topo is None and why == "gpu01: ibwarn: can't open UMAD port"


def test_subnet_not_read_is_never_agreeing(plan):
    result = check_ib_cabling(plan, None, unread_why="gpu01: ibnetdiscover failed")
    assert result["summary"]["by_kind"] == {"missing": 8} and result["ok"] == []
    assert "the subnet was not read: gpu01: ibnetdiscover failed" in result["findings"][0]["detail"]


def test_a_mixed_cluster_checks_each_fabric_from_its_own_source(plan):
    mixed = dict(plan, fabrics=dict(plan["fabrics"], eth={"mode": "shared"}))
    mixed["nodes"] = {}
    for host, node in plan["nodes"].items():
        eth = {"fabric": "eth", "rail": 1, "interface": "ens9f0np0", "tor": "eth-leaf", "tor_port": "swp%d" % node["node_id"]}
        mixed["nodes"][host] = dict(node, rails=node["rails"] + [eth])
    assert ib_cabling.infiniband_fabrics(mixed) == ["default"]
    ib_only = ib_cabling.fabric_plan(mixed, ["default"])
    assert all(e["fabric"] == "default" for n in ib_only["nodes"].values() for e in n["rails"])
    eth_only = ib_cabling.fabric_plan(mixed, ["eth"])
    ib_result = check_ib_cabling(ib_only, sample("ibnetdiscover-swapped.txt"))
    eth_result = check_cabling(eth_only, {})
    verdict = action.combine([eth_result, ib_result])
    assert verdict["summary"]["rails"] == 12 and verdict["summary"]["by_kind"] == {"missing": 4, "swapped": 1}
    assert [f["fabric"] for f in verdict["findings"] if f["kind"] == "missing"] == ["eth"] * 4
