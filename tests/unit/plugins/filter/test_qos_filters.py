# -*- coding: utf-8 -*-
"""The filters parse_qos and lossless_diff on recorded real configurations (data/qos/*/ORIGIN.md)."""
from __future__ import annotations

import os

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ainet.fabric.plugins.filter.qos import FilterModule
from ansible_collections.ainet.fabric.plugins.module_utils.model.qos_profile import resolve_profile

FILTERS = FilterModule().filters()
DATA = os.path.join(os.path.dirname(__file__), "..", "module_utils", "data", "qos")
NVIDIA = resolve_profile({}, "q")
# A ConnectX NIC set up the NVIDIA way (what roce_qos leaves behind).
HOST = {"trust": "dscp", "dscp_to_priority": {**{d: d // 8 for d in range(64)}, **{26: 3, 48: 6}}, "pfc": [3],
        "ecn_rp": [3], "ecn_np": [3], "cnp_dscp": 48, "cnp_priority": 6, "mtu": 9000, "roce_tos": 106,
        "traffic_class": 106}


def text(*parts):
    with open(os.path.join(DATA, *parts)) as handle:
        return handle.read()


def codes(items):
    return sorted({i["code"] for i in items})


def test_stock_sonic_port_makes_dscp26_lossy():
    switch = FILTERS["parse_qos"](text("sonic", "qos-arista7050.json"), "sonic_config_db")
    items = FILTERS["lossless_diff"](HOST, switch, port="Ethernet8")
    assert items[0]["message"] == ("DSCP 26 is lossless priority 3 on the host but lands in lossy TC1 on the switch "
                                   "port Ethernet8 (PFC there: 3,4).")
    assert {"roce_dscp_lossy_on_switch", "pfc_mismatch", "ecn_off_on_switch"} <= set(codes(items))


def test_cumulus_roce_lossless_defaults_have_no_disagreement_with_an_nvidia_host_but_an_unread_mtu_is_listed():
    switch = FILTERS["parse_qos"](text("nvue", "nv-config-roce-lossless.yaml.txt"), "nvue")
    port = sorted(switch["ports"])[0]
    items = FILTERS["lossless_diff"](dict(HOST, mtu=None), switch, port=port, profile=NVIDIA)
    assert items and codes(items) == ["unchecked"]  # nothing disagrees; what was not read is not agreement
    assert "mtu" in [i["topic"] for i in items]
    check = FILTERS["lossless_check"](dict(HOST, mtu=None), switch, port=port, profile=NVIDIA)
    assert check["verdict"] == "unchecked" and check["disagreements"] == []
    assert [i["topic"] for i in items] == [u["topic"] for u in check["unchecked"]]


def test_arista_leaf_from_a_public_roce_config_agrees_on_the_roce_class():
    switch = FILTERS["parse_qos"](text("eos", "arista_roce_blog_leaf.cfg"), "eos")
    items = FILTERS["lossless_diff"](HOST, switch, port="Ethernet1")
    assert not {"roce_dscp_lossy_on_switch", "pfc_mismatch", "cnp_not_strict_on_switch",
                "mtu_too_small"} & set(codes(items)), items


def test_unknown_format_and_port_are_filter_errors():
    with pytest.raises(AnsibleFilterError, match="'junos' is not a QoS format; use one of: dcb, eos"):
        FILTERS["parse_qos"]("", "junos")
    switch = FILTERS["parse_qos"](text("sonic", "qos-arista7050.json"), "sonic_config_db")
    with pytest.raises(AnsibleFilterError, match="port Ethernet999 is not in the sonic_config_db facts"):
        FILTERS["lossless_diff"](HOST, switch, port="Ethernet999")


COUNTERS = os.path.join(os.path.dirname(__file__), "..", "module_utils", "data", "counters")


def counters_text(name):
    with open(os.path.join(COUNTERS, name)) as handle:
        return handle.read()


def test_parse_counters_and_load_verdict_filters_on_recorded_reads():
    reads = {}
    for when in ("before", "after"):
        reads[when] = {
            "nic": FILTERS["parse_counters"](counters_text("ethtool-cx6dx-%s.txt" % when), "ethtool_mlx5", port="ens1f0np0"),
            "tor_pfc": FILTERS["parse_counters"](counters_text("sonic-pfc-%s.txt" % when), "sonic_pfc"),
            "tor_queue": FILTERS["parse_counters"](counters_text("sonic-queue-%s.txt" % when), "sonic_queue")}
    verdict = FILTERS["load_verdict"](reads["before"], reads["after"], profile="nvidia", port="Ethernet8")
    assert verdict["verdict"] == "lossless_under_load"


def test_counter_filters_fail_with_one_line():
    with pytest.raises(AnsibleFilterError, match="is not a counter format"):
        FILTERS["parse_counters"]("", "eos")
    tor = FILTERS["parse_counters"](counters_text("sonic-pfc-after.txt"), "sonic_pfc")
    with pytest.raises(AnsibleFilterError, match="name the link's with port="):
        FILTERS["load_verdict"]({"tor": tor}, {"tor": tor}, profile="nvidia")


def test_load_report_filter_renders_runs_and_fails_with_one_line():
    reads = {}
    for when in ("before", "after"):
        reads[when] = {
            "nic": FILTERS["parse_counters"](counters_text("ethtool-cx6dx-%s.txt" % when), "ethtool_mlx5", port="ens1f0np0"),
            "tor_pfc": FILTERS["parse_counters"](counters_text("sonic-pfc-%s.txt" % when), "sonic_pfc"),
            "tor_queue": FILTERS["parse_counters"](counters_text("sonic-queue-%s.txt" % when), "sonic_queue")}
    verdict = FILTERS["load_verdict"](reads["before"], reads["after"], profile="nvidia", port="Ethernet8")
    runs = [{"tor": "t1", "rail": 1, "fabric": "compute", "port": "Ethernet8", "host": "gpu-001",
             "host_nic": "ens1f0np0", "senders": ["gpu-002"], "round": 1, "priority": 3, "seconds": 10.0,
             "verdict": verdict, "skipped": None}]
    report = FILTERS["load_report"](runs, cluster="c1", generated="2026-11-27")
    assert report["summary"]["verdict"] == "lossless_under_load"
    assert "switch Ethernet8 pfc3_tx_pkts +5,500" in report["markdown"] and report["html"].startswith("<!DOCTYPE html>")
    with pytest.raises(AnsibleFilterError, match=r"runs\[0\]\.tor"):
        FILTERS["load_report"]([{"host": "gpu-001"}])
