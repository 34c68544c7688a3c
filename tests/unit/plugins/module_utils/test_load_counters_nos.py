# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch side of a load test read from Arista EOS and NVIDIA Cumulus (NVUE): parsers on the recorded layouts
(data/counters/ORIGIN.md) and the verdict with those reads in place of SONiC's.

As in test_load_counters: a control (the recorded pair, judged lossless) and cases that change one value."""

from __future__ import annotations

import json
import re

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import (
    DEFAULT_PORT, describe, parse_counters,
)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import load_verdict
from test_load_counters import NIC, RDMA, text  # noqa: E402 (pytest puts this directory on sys.path)


def doc(name):
    return json.loads(text(name))


def host_reads():
    return ({"nic": parse_counters(text("ethtool-cx6dx-before.txt"), "ethtool_mlx5", port=NIC),
             "rdma": parse_counters(text("hw_counters-mlx5-before.txt"), "rdma_mlx5", port=RDMA)},
            {"nic": parse_counters(text("ethtool-cx6dx-after.txt"), "ethtool_mlx5", port=NIC),
             "rdma": parse_counters(text("hw_counters-mlx5-after.txt"), "rdma_mlx5", port=RDMA)})


# ---- EOS -----------------------------------------------------------------------------------------------------

def test_eos_pfc_json_text_mapping_and_eapi_list_agree():
    from_text = parse_counters(text("eos-pfc-after.json"), "eos_pfc")
    assert from_text["problems"] == [] and from_text["side"] == "switch"
    assert from_text["ports"]["Ethernet1/1"] == {"rxFrames": 0, "txFrames": 23740}
    assert parse_counters(doc("eos-pfc-after.json"), "eos_pfc") == from_text
    assert parse_counters([doc("eos-pfc-after.json")], "eos_pfc") == from_text
    assert describe("eos_pfc", "txFrames") == {"fact": "pfc_pause", "priority": None, "queue": None, "width": None,
                                               "direction": None}


def test_eos_queue_detail_per_traffic_class_and_drop_precedence():
    ports = parse_counters(text("eos-queue-detail-after.json"), "eos_queue")["ports"]
    assert ports["Ethernet2/1"]["ucast.TC0.DP0.droppedPackets"] == 57
    assert ports["Ethernet1/1"]["mcast.TC3.DP0.droppedPackets"] == 0
    assert describe("eos_queue", "ucast.TC3.DP0.droppedPackets")["queue"] == 3
    assert describe("eos_queue", "mcast.TC3.DP0.droppedPackets")["fact"] == "info"
    assert describe("eos_queue", "ucast.TC0-3.DP0.droppedPackets") == {"fact": "drop", "priority": None, "queue": None,
                                                                       "width": None, "direction": None}


def test_eos_queue_drops_on_voq_platforms():
    facts = parse_counters(text("eos-queue-drops.json"), "eos_queue", port="Ethernet2/1")
    assert list(facts["ports"]) == ["Ethernet2/1"]
    counters = facts["ports"]["Ethernet2/1"]
    assert counters["egress.TC0.droppedPackets"] == 4 and counters["voq.TC3.droppedPackets"] == 0
    assert describe("eos_queue", "voq.TC3.droppedPackets")["queue"] == 3


def test_eos_ecn_dash_is_not_reported():
    counters = parse_counters(text("eos-ecn-after.json"), "eos_ecn")["ports"]
    assert counters["Ethernet1/1"] == {"queueCounters.3": 0}  # the other queues print "-": ECN off, not 0
    assert counters["Ethernet2/1"]["queueCounters.3"] == 52211
    assert describe("eos_ecn", "queueCounters.3")["fact"] == "ecn_mark"


@pytest.mark.parametrize("data, problem", [
    ("% Invalid input", "eos_pfc: not JSON"),
    ('{"interfaces": {}}', "no interfaceCounters"),
    ("[1, 2]", "the JSON is a list"),
])
def test_eos_garbage_is_a_problem_not_a_traceback(data, problem):
    facts = parse_counters(data, "eos_pfc")
    assert facts["ports"] == {} and problem in facts["problems"][0]


def eos_reads(pfc_a=None, queue_a=None, ecn_a=None):
    before, after = host_reads()
    before.update(tor_pfc=parse_counters(text("eos-pfc-before.json"), "eos_pfc"),
                  tor_queue=parse_counters(text("eos-queue-detail-before.json"), "eos_queue"),
                  tor_ecn=parse_counters(text("eos-ecn-before.json"), "eos_ecn"))
    after.update(tor_pfc=parse_counters(pfc_a or text("eos-pfc-after.json"), "eos_pfc"),
                 tor_queue=parse_counters(queue_a or text("eos-queue-detail-after.json"), "eos_queue"),
                 tor_ecn=parse_counters(ecn_a or text("eos-ecn-after.json"), "eos_ecn"))
    return before, after


def set_json(name, path, value):
    data = doc(name)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(data)


def test_eos_control_is_lossless_with_the_switch_pauses_counted():
    result = load_verdict(*eos_reads(), profile="nvidia", port="Ethernet1/1", seconds=10)
    klass = result["classes"][0]
    assert result["verdict"] == "lossless_under_load", klass["message"]
    assert "switch Ethernet1/1 txFrames +5,500" in klass["message"]
    assert not result["problems"]


def test_eos_a_drop_in_the_lossless_traffic_class_is_dropped():
    queue = set_json("eos-queue-detail-after.json", ["egressQueueCounters", "interfaces", "Ethernet1/1", "ucastQueues",
                                                     "trafficClasses", "TC3", "dropPrecedences", "DP0",
                                                     "droppedPackets"], 7)
    result = load_verdict(*eos_reads(queue_a=queue), profile="nvidia", port="Ethernet1/1", seconds=10)
    assert result["verdict"] == "dropped"
    assert result["classes"][0]["message"] == ("Priority 3 dropped under load: switch Ethernet1/1 "
                                               "ucast.TC3.DP0.droppedPackets +7.")


def test_eos_a_drop_in_another_traffic_class_is_not_the_lossless_class():
    queue = set_json("eos-queue-detail-after.json", ["egressQueueCounters", "interfaces", "Ethernet1/1", "ucastQueues",
                                                     "trafficClasses", "TC0", "dropPrecedences", "DP0",
                                                     "droppedPackets"], 90)
    assert load_verdict(*eos_reads(queue_a=queue), profile="nvidia", port="Ethernet1/1")["verdict"] == \
        "lossless_under_load"


def test_eos_port_wide_pfc_frames_prove_nothing_when_two_classes_are_judged():
    result = load_verdict(*eos_reads(), profile="sonic", port="Ethernet1/1")
    by_prio = {c["priority"]: c for c in result["classes"]}
    assert "txFrames" not in by_prio[4]["message"] and by_prio[4]["verdict"] == "inconclusive"
    assert [r["counter"] for r in by_prio[3]["moved"]["pause"]] == ["rx_prio3_pause"]  # the NIC's own, per priority


def test_eos_switch_ecn_marks_count_for_their_queue():
    before, after = eos_reads()
    for reads in (before, after):
        del reads["rdma"]  # no CNP from the hosts: only the switch's ECN counter can show DCQCN acting
    ok = load_verdict(before, after, profile="nvidia", port="Ethernet2/1", host_port=NIC)
    assert [r["counter"] for r in ok["classes"][0]["moved"]["ecn"]] == ["queueCounters.3"]
    ecn = set_json("eos-ecn-after.json", ["intfQueueCounters", "Ethernet2/1", "queueCounters", "3"], "40211")
    _b, after = eos_reads(ecn_a=ecn)
    del after["rdma"]
    result = load_verdict(before, after, profile="nvidia", port="Ethernet2/1", host_port=NIC)
    assert result["verdict"] == "ecn_inactive", result["classes"][0]["message"]
    assert "switch Ethernet2/1 queueCounters.3 +0" in result["classes"][0]["message"]


# ---- NVUE ----------------------------------------------------------------------------------------------------

def test_nvue_qos_reads_every_section_of_the_whole_command():
    facts = parse_counters(text("nvue-qos-after.txt"), "nvue_qos", port="swp1")
    counters = facts["ports"]["swp1"]
    assert facts["problems"] == []
    assert counters["pfc-stats.3.tx-pause-frames"] == 23740 and counters["pfc-stats.3.tx-pause-duration"] == 3412345
    assert counters["egress-queue-stats.3.tx-uc-buffer-discards"] == 0
    assert counters["egress-queue-stats.3.tx-bytes"] == int(round(8263.70 * (1 << 30)))
    assert counters["egress-queue-stats.0.tx-bytes"] == int(round(3.53 * (1 << 20)))
    assert counters["ingress-buffer-stats.3.rx-buffer-discards"] == 0
    assert counters["port-stats.ecn-marked-packets.transmit"] == 52211
    assert "port-stats.ecn-marked-packets.receive" not in counters  # n/a: not reported
    assert len(counters) == 8 * 3 + 8 * 4 + 8 * 4 + 4


def test_nvue_one_section_commands_read_to_the_same_names():
    whole = parse_counters(text("nvue-qos-after.txt"), "nvue_qos")["ports"][DEFAULT_PORT]
    pfc = parse_counters(text("nvue-pfc-stats.txt"), "nvue_qos")["ports"][DEFAULT_PORT]
    port = parse_counters(text("nvue-port-stats.txt"), "nvue_qos")["ports"][DEFAULT_PORT]  # title-case rows
    assert pfc == {k: v for k, v in whole.items() if k.startswith("pfc-stats.")}
    assert port == {k: v for k, v in whole.items() if k.startswith("port-stats.")}


def test_nvue_roce_counters_tree():
    facts = parse_counters(text("nvue-roce-after.txt"), "nvue_roce", port="swp16")
    counters = facts["ports"]["swp16"]
    assert facts["problems"] == []
    assert counters["tx-stats.tx-roce-stats.unicast-no-buffer-discard"] == 0
    assert counters["rx-stats.rx-non-roce-stats.no-buffer-discard"] == 55
    assert counters["tx-stats.tx-pfc-stats.pause-packets"] == 23740
    assert counters["tx-stats.tx-ecn-stats.ecn-marked-packets"] == 52211
    assert counters["tx-stats.tx-roce-stats.buffer-usage"] == int(round(7.29 * (1 << 20)))
    assert describe("nvue_roce", "rx-stats.rx-non-roce-stats.no-buffer-discard")["fact"] == "info"
    tree = {"tx-stats": {"tx-ecn-stats": {"ecn-marked-packets": 52211}}}
    assert parse_counters(tree, "nvue_roce")["ports"][DEFAULT_PORT] == {"tx-stats.tx-ecn-stats.ecn-marked-packets": 52211}


def test_nvue_garbage_is_a_problem_not_a_traceback():
    assert parse_counters("Error: swp99 does not exist", "nvue_qos")["problems"]
    assert parse_counters("Error: swp99 does not exist", "nvue_roce")["ports"] == {}


def nvue_reads(qos_a=None, roce_a=None):
    before, after = host_reads()
    before.update(tor_qos=parse_counters(text("nvue-qos-before.txt"), "nvue_qos"),
                  tor_roce=parse_counters(text("nvue-roce-before.txt"), "nvue_roce"))
    after.update(tor_qos=parse_counters(qos_a or text("nvue-qos-after.txt"), "nvue_qos"),
                 tor_roce=parse_counters(roce_a or text("nvue-roce-after.txt"), "nvue_roce"))
    return before, after


def nv_cell(raw, section_row, column, value):
    """``raw`` with one table cell replaced in place (left-aligned like NVUE's)."""
    lines = raw.split("\n")
    header = next(i for i, line in enumerate(lines) if column in line.split())
    start = lines[header].index(column)
    dashes = lines[header + 1]
    end = dashes.find(" ", start) if dashes.find(" ", start) > 0 else len(dashes)
    for j in range(header + 2, len(lines)):
        if lines[j].split()[:1] == [section_row]:
            lines[j] = lines[j][:start] + str(value).ljust(end - start) + lines[j][end:]
            return "\n".join(lines)
    raise AssertionError((section_row, column))


def test_nvue_control_is_lossless():
    result = load_verdict(*nvue_reads(), profile="nvidia", port="swp1", seconds=10)
    klass = result["classes"][0]
    assert result["verdict"] == "lossless_under_load", klass["message"]
    moved = {r["counter"] for r in klass["moved"]["pause"] + klass["moved"]["ecn"]}
    assert {"pfc-stats.3.tx-pause-frames", "tx-stats.tx-pfc-stats.pause-packets",
            "tx-stats.tx-ecn-stats.ecn-marked-packets"} <= moved


def test_nvue_egress_buffer_discard_of_the_class_is_dropped():
    qos = nv_cell(text("nvue-qos-after.txt"), "3", "tx-uc-buffer-discards", "4.50 KB")
    result = load_verdict(*nvue_reads(qos_a=qos), profile="nvidia", port="swp1")
    assert result["verdict"] == "dropped"
    assert "switch egress-queue-stats.3.tx-uc-buffer-discards +4,608" in result["classes"][0]["message"]


def test_nvue_roce_buffer_discard_is_dropped():
    roce = re.sub(r"(?m)^(    unicast-no-buffer-discard\s+)0(\s+)(Tx buffer discards for RoCE)",
                  lambda m: m.group(1) + "3" + m.group(2) + m.group(3), text("nvue-roce-after.txt"))
    assert roce != text("nvue-roce-after.txt")
    result = load_verdict(*nvue_reads(roce_a=roce), profile="nvidia", port="swp1")
    assert result["verdict"] == "dropped"
    assert "switch tx-stats.tx-roce-stats.unicast-no-buffer-discard +3" in result["classes"][0]["message"]


def test_nvue_a_counter_reset_is_never_a_negative_delta():
    qos = nv_cell(text("nvue-qos-after.txt"), "3", "tx-pause-frames", "12")
    roce = edit_tree(text("nvue-roce-after.txt"), "pause-packets", "23740", "12")
    result = load_verdict(*nvue_reads(qos_a=qos, roce_a=roce), profile="nvidia", port="swp1")
    states = {r["counter"]: r["state"] for r in result["counters"] if r["read"] == "tor_qos"}
    assert states["pfc-stats.3.tx-pause-frames"] == "reset"
    assert result["verdict"] == "inconclusive" and "reset between the reads" in result["classes"][0]["message"]
    assert all(r["delta"] is None or r["delta"] >= 0 for r in result["counters"])


def edit_tree(raw, name, old, new):
    out, n = re.subn(r"(?m)^(\s+%s\s+)%s(\s)" % (re.escape(name), re.escape(old)),
                     lambda m: m.group(1) + new.ljust(len(old)) + m.group(2), raw)
    assert n == 1, name
    return out


# ---- NVUE JSON (`nv show interface <if> counters qos -o json`) ------------------------------------------------

def test_nvue_qos_json_reads_to_the_text_form_s_names():
    from_text = parse_counters(text("nvue-qos-after.txt"), "nvue_qos", port="swp1")["ports"]["swp1"]
    facts = parse_counters(text("nvue-qos-after.json"), "nvue_qos", port="swp1")
    assert facts["problems"] == [] and facts["side"] == "switch"
    got = facts["ports"]["swp1"]
    # the sections the JSON sample holds read to the same names and numbers (bytes: whole bytes in the JSON)
    assert {n: v for n, v in from_text.items() if n.startswith(("pfc-stats.", "egress-queue-stats."))} == \
        {n: v for n, v in got.items() if n in from_text}
    assert got["egress-queue-stats.3.ecn-marked-frames"] == 52211
    assert parse_counters(doc("nvue-qos-after.json"), "nvue_qos", port="swp1")["ports"] == facts["ports"]
    assert parse_counters({"swp1": text("nvue-qos-after.json")}, "nvue_qos", port="swp1")["ports"] == facts["ports"]
    assert describe("nvue_qos", "egress-queue-stats.3.ecn-marked-frames") == {
        "fact": "ecn_mark", "priority": None, "queue": 3, "width": None, "direction": None}


@pytest.mark.parametrize("data, problem", [
    ('{"egress-queue-stats": {"3": {"tx-frames": "many"}}}', "egress-queue-stats 3 tx-frames holds 'many'"),
    ('{"interface": {"swp1": {}}}', "'interface' is not a QoS counters section"),
    ("{not json", "nvue_qos: not JSON"),
    ("[1]", "no table in the output"),
])
def test_nvue_qos_json_garbage_is_a_problem_not_a_traceback(data, problem):
    facts = parse_counters(data, "nvue_qos", port="swp1")
    assert any(problem in p for p in facts["problems"]), facts["problems"]


def nvue_json_reads(after):
    before, after_r = host_reads()
    before["tor_qos"] = parse_counters(text("nvue-qos-before.json"), "nvue_qos", port="swp1")
    after_r["tor_qos"] = parse_counters(after, "nvue_qos", port="swp1")
    return before, after_r


def test_nvue_qos_json_control_is_lossless_with_the_class_s_ecn_marks():
    result = load_verdict(*nvue_json_reads(text("nvue-qos-after.json")), profile="nvidia", port="swp1", seconds=10)
    klass = result["classes"][0]
    assert result["verdict"] == "lossless_under_load", klass["message"]
    assert "switch swp1 egress-queue-stats.3.ecn-marked-frames +12,000" in klass["message"]
    assert "switch swp1 pfc-stats.3.tx-pause-frames +5,500" in klass["message"]


@pytest.mark.parametrize("column", ["tx-uc-buffer-discards", "wred-discards"])
def test_nvue_qos_json_one_discard_of_the_class_is_dropped(column):
    data = doc("nvue-qos-after.json")
    data["egress-queue-stats"]["3"][column] = 7
    result = load_verdict(*nvue_json_reads(json.dumps(data)), profile="nvidia", port="swp1")
    assert result["verdict"] == "dropped"
    assert [r["counter"] for r in result["classes"][0]["moved"]["drop"]] == ["egress-queue-stats.3.%s" % column]


def test_nvue_qos_json_another_class_s_discard_does_not_judge_priority_3():
    data = doc("nvue-qos-after.json")
    data["egress-queue-stats"]["0"]["tx-uc-buffer-discards"] = 7
    assert load_verdict(*nvue_json_reads(json.dumps(data)), profile="nvidia", port="swp1")["verdict"] == \
        "lossless_under_load"


# ---- EOS per-priority PFC frames (`show interface <port> priority-flow-control counters detail | json`) -------

def eos_detail_reads(after):
    before, after_r = eos_reads()
    before["tor_pfc_detail"] = parse_counters({"Ethernet1/1": text("eos-pfc-detail-before.json")}, "eos_pfc_detail",
                                              port="Ethernet1/1")
    after_r["tor_pfc_detail"] = parse_counters({"Ethernet1/1": after}, "eos_pfc_detail", port="Ethernet1/1")
    return before, after_r


def test_eos_pfc_detail_reads_per_priority_frames():
    facts = parse_counters(text("eos-pfc-detail-after.json"), "eos_pfc_detail")
    assert facts["problems"] == [] and facts["side"] == "switch"
    assert facts["ports"]["Ethernet1/1"]["prio3.txFrames"] == 23740
    assert len(facts["ports"]["Ethernet1/1"]) == 16
    assert parse_counters([doc("eos-pfc-detail-after.json")], "eos_pfc_detail")["ports"] == facts["ports"]
    assert describe("eos_pfc_detail", "prio3.txFrames") == {"fact": "pfc_pause", "priority": 3, "queue": None,
                                                            "width": None, "direction": None}


def test_eos_pfc_detail_tells_the_classes_apart_where_the_port_wide_frames_cannot():
    result = load_verdict(*eos_detail_reads(text("eos-pfc-detail-after.json")), profile="sonic", port="Ethernet1/1")
    by_prio = {c["priority"]: c for c in result["classes"]}
    assert "switch Ethernet1/1 prio3.txFrames +5,500" in by_prio[3]["message"]
    assert "prio3.txFrames" not in by_prio[4]["message"] and "txFrames" not in by_prio[4]["message"]


def test_eos_pfc_detail_only_another_priority_s_pause_moved_is_not_this_class_s():
    before, after = eos_detail_reads(set_json("eos-pfc-detail-before.json",
                                              ["interfaces", "Ethernet1/1", "priorities", "4", "txFrames"], 99))
    after["tor_pfc"] = before["tor_pfc"]  # the port-wide frames unchanged
    for name in ("nic", "rdma"):
        after[name] = before[name]  # the hosts saw nothing either
    got = load_verdict(before, after, priorities=[3], port="Ethernet1/1")["classes"][0]
    assert got["moved"]["pause"] == [] and got["verdict"] == "inconclusive"
    got4 = load_verdict(before, after, priorities=[4], port="Ethernet1/1")["classes"][0]
    assert [(r["counter"], r["delta"]) for r in got4["moved"]["pause"]] == [("prio4.txFrames", 99)]


def test_eos_pfc_detail_an_error_instead_of_json_is_quoted():
    facts = parse_counters({"Ethernet1/1": "% Invalid input (at token 2: 'interface')\n"}, "eos_pfc_detail",
                           port="Ethernet1/1")
    assert facts["ports"] == {} and facts["problems"] == [
        "eos_pfc_detail: not JSON: \"% Invalid input (at token 2: 'interface')\""]


@pytest.mark.parametrize("counter, role", [
    ("prio3.txFrames", "sender"),  # the ToR paused the sender on the class
    ("prio3.rxFrames", "receiver"),  # the receiver's NIC paused the ToR
    ("egress-queue-stats.3.ecn-marked-frames", "receiver"),  # marks out of the port, toward its host
])
def test_the_new_switch_counters_count_for_one_role_only(counter, role):
    from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import ROLES, role_evidence
    assert [r for r in ROLES if role_evidence({"counter": counter}, r)] == [role]
