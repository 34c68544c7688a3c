# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Linux switch's counters (platform ``linux``: formats ``linux_link`` and ``linux_qdisc``) on reads recorded from a
real kernel (data/counters/ORIGIN.md, tests/lab/record_linux_tor.sh): a bridge whose port swp1 leads to the
receiver of an incast, with a token-bucket root qdisc that overflows and a filter that drops one frame in ten; swp2
and swp3 lead to the senders and drop nothing. The verdict must place the drops on swp1's link, and only there."""

from __future__ import annotations

import json

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import describe, parse_counters
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import load_verdict
from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms
from test_load_counters import text  # noqa: E402 (pytest puts this directory on sys.path)
from test_tor_counters import switch  # noqa: E402


def reads(when):
    return {"tor_link": parse_counters(text("linux-link-%s.json" % when), "linux_link"),
            "tor_qdisc": parse_counters(text("linux-qdisc-%s.json" % when), "linux_qdisc")}


def recorded(when, kind, dev, key):
    """The value the kernel printed, read here with json alone (not through the parser under test)."""
    for item in json.loads(text("linux-%s-%s.json" % (kind, when))):
        root = item.get("root") and key.startswith("qdisc_")
        if kind == "qdisc" and item["dev"] == dev and (root or item["kind"] == key.split("_")[0]):
            return item[key.split("_", 1)[1]]
        if kind == "link" and item["ifname"] == dev:
            direction, name = key.split("_", 1)
            return item["stats64"][direction][name]
    raise KeyError((when, kind, dev, key))


def test_the_link_read_names_every_interface_s_counters_by_direction():
    facts = parse_counters(text("linux-link-after.json"), "linux_link")
    assert facts["problems"] == [] and facts["side"] == "switch"
    assert sorted(facts["ports"]) == ["br-rail1", "lo", "swp1", "swp2", "swp3"]
    swp1 = facts["ports"]["swp1"]
    for key in ("rx_packets", "tx_packets", "tx_dropped", "rx_crc_errors", "tx_carrier_changes"):
        assert swp1[key] == recorded("after", "link", "swp1", key), key
    assert "tx_backlog" not in swp1 and "ifindex" not in swp1


def test_the_qdisc_read_names_root_and_clsact_counters_and_leaves_gauges_out():
    facts = parse_counters(text("linux-qdisc-after.json"), "linux_qdisc")
    assert facts["problems"] == []
    swp1 = facts["ports"]["swp1"]
    assert swp1["qdisc_drops"] == recorded("after", "qdisc", "swp1", "qdisc_drops") > 0   # the tbf overflowed
    assert swp1["clsact_drops"] == recorded("after", "qdisc", "swp1", "clsact_drops") > 0  # the filter dropped
    assert "qdisc_backlog" not in swp1 and "qdisc_qlen" not in swp1   # gauges, not counters
    assert facts["ports"]["swp2"] == {"qdisc_bytes": 0, "qdisc_packets": 0, "qdisc_drops": 0,
                                      "qdisc_overlimits": 0, "qdisc_requeues": 0,
                                      "qdisc_handle": 0}  # noqueue (handle 0:): nothing to count
    # the root's handle, as a number: which qdisc the counters are of
    tbf = [q for q in json.loads(text("linux-qdisc-after.json")) if q["dev"] == "swp1" and q.get("root")][0]
    assert swp1["qdisc_handle"] == int(tbf["handle"].rstrip(":"), 16) and describe(
        "linux_qdisc", "qdisc_handle")["fact"] == "instance"


def test_what_each_linux_counter_is():
    assert describe("linux_qdisc", "qdisc_drops") == {"fact": "drop", "priority": None, "queue": None, "width": 32,
                                                      "direction": None}
    assert describe("linux_qdisc", "clsact_drops")["fact"] == "drop"
    assert describe("linux_qdisc", "child_1:4_drops")["fact"] == "info"   # the root counts it already
    assert describe("linux_qdisc", "qdisc_overlimits")["fact"] == "info"  # throttled, not dropped
    assert describe("linux_link", "tx_dropped") == {"fact": "drop", "priority": None, "queue": None, "width": 64,
                                                    "direction": None}
    assert describe("linux_link", "rx_packets")["fact"] == "traffic"
    assert describe("linux_link", "tx_collisions")["fact"] == "info"


def test_the_receiver_s_port_is_dropped_named_with_the_qdisc_counters_and_the_senders_ports_are_not():
    before, after = reads("before"), reads("after")
    swp1 = load_verdict(before, after, profile="nvidia", port="swp1", priorities=[3])
    assert swp1["verdict"] == "dropped", swp1
    moved = dict((r["counter"], r["delta"]) for r in swp1["classes"][0]["moved"]["drop"])
    assert moved == {"qdisc_drops": recorded("after", "qdisc", "swp1", "qdisc_drops")
                     - recorded("before", "qdisc", "swp1", "qdisc_drops"),
                     "clsact_drops": recorded("after", "qdisc", "swp1", "clsact_drops")
                     - recorded("before", "qdisc", "swp1", "clsact_drops")}
    message = swp1["classes"][0]["message"]
    assert message.startswith("Priority 3 dropped under load: switch swp1 ") and "qdisc_drops +" in message
    for port in ("swp2", "swp3"):
        clean = load_verdict(before, after, profile="nvidia", port=port, priorities=[3])
        # the senders' ports dropped nothing; a Linux bridge has no PFC or ECN counter: no congestion is shown
        assert clean["verdict"] == "inconclusive" and not clean["classes"][0]["moved"]["drop"], clean


def test_a_port_wide_drop_counts_against_every_class_judged():
    result = load_verdict(reads("before"), reads("after"), profile="nvidia", port="swp1", priorities=[3, 6])
    assert [c["verdict"] for c in result["classes"]] == ["dropped", "dropped"]


def test_a_qdisc_replaced_between_the_reads_is_a_reset_never_a_negative_delta():
    before, after = reads("after"), reads("before")   # the counters went down: the qdisc was replaced
    result = load_verdict(before, after, profile="nvidia", port="swp1", priorities=[3])
    assert result["verdict"] == "inconclusive" and "reset" in result["classes"][0]["message"], result
    assert all(r["delta"] is None or r["delta"] >= 0 for r in result["counters"])


def test_a_32_bit_qdisc_drop_counter_wraps():
    before, after = reads("before"), reads("after")
    before["tor_qdisc"]["ports"]["swp1"]["qdisc_drops"] = (1 << 32) - 5
    after["tor_qdisc"]["ports"]["swp1"]["qdisc_drops"] = 7
    result = load_verdict(before, after, profile="nvidia", port="swp1", priorities=[3])
    wrapped = [r for r in result["counters"] if r["read"] == "tor_qdisc" and r["counter"] == "qdisc_drops"][0]
    assert (wrapped["delta"], wrapped["state"]) == (12, "wrapped")


@pytest.mark.parametrize("fmt, data, problem", [
    ("linux_link", "Device \"x\" does not exist.", "linux_link: not JSON"),
    ("linux_link", "{}", "linux_link: the JSON is a dict, not iproute2's list"),
    ("linux_link", "[]", "linux_link: no interface with statistics"),
    ("linux_qdisc", "[{\"kind\": \"noqueue\"}]", "linux_qdisc: no queueing discipline"),
])
def test_what_is_not_the_command_s_output_is_a_problem_never_a_crash(fmt, data, problem):
    facts = parse_counters(data, fmt)
    assert facts["ports"] == {} and facts["problems"][0].startswith(problem), facts


def test_older_iproute2_layouts_are_read_the_same():
    # ``stats`` where a kernel has no 64-bit block; qdisc statistics nested under ``stats``
    link = parse_counters([{"ifname": "swp1", "stats": {"rx": {"dropped": 4}, "tx": {"dropped": 2}}}], "linux_link")
    assert link["ports"] == {"swp1": {"rx_dropped": 4, "tx_dropped": 2}}
    qdisc = parse_counters([{"kind": "pfifo_fast", "dev": "swp1", "root": True, "stats": {"drops": 9}},
                            {"kind": "pfifo", "dev": "swp1", "parent": "1:4", "drops": 3}], "linux_qdisc")
    assert qdisc["ports"] == {"swp1": {"qdisc_drops": 9, "child_1:4_drops": 3}}


def test_the_linux_switch_is_read_with_ip_and_tc_over_its_connection_only():
    ran = []
    outputs = {"ip -s -s -j link show": (0, text("linux-link-after.json"), ""),
               "tc -s -j qdisc show": (0, text("linux-qdisc-after.json"), "")}
    got = platforms.read_counters("linux", "ssh", switch(outputs, ran), ports=["swp1"])
    # and ethtool -S of the step's port (mlxsw's per-class discards; a veth prints none: its line is kept, reported)
    assert ran == ["ip -s -s -j link show", "tc -s -j qdisc show", "ethtool -S swp1"]
    assert parse_counters(got["linux_qdisc"], "linux_qdisc", port="swp1")["ports"]["swp1"]["qdisc_drops"] > 0
    with pytest.raises(ValueError, match="cannot be read over 'http'"):
        platforms.read_counters("linux", "http", switch(outputs, []))
    assert platforms.read_ways("linux") == () and platforms.qos_format("linux") is None   # configuration not read
