# -*- coding: utf-8 -*-
"""Counter parsers and the lossless-under-load verdict, on recorded layouts (data/counters/ORIGIN.md).

Each verdict has a control (the recorded pair, judged lossless) and a case where exactly one line of one read
differs from it."""
from __future__ import annotations

import os
import re

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import describe, parse_counters
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import counter_delta, load_verdict

DATA = os.path.join(os.path.dirname(__file__), "data", "counters")
NIC, RDMA = "ens1f0np0", "mlx5_0/1"


def text(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def edit(raw, counter, value):
    """``raw`` with the one line of ``counter`` given ``value`` (ethtool ``name: v``, hw_counters ``path:v``)."""
    out, n = re.subn(r"(?m)^(\s*(?:\S*/)?%s:\s*)\d+$" % re.escape(counter), lambda m: m.group(1) + str(value), raw)
    assert n == 1, counter
    return out


def drop_line(raw, counter):
    out, n = re.subn(r"(?m)^\s*(?:\S*/)?%s:\s*\d+\n" % re.escape(counter), "", raw)
    assert n == 1, counter
    return out


def sonic_cell(raw, port, column, value):
    """``raw`` (a SONiC table) with ``port``'s cell under header ``column`` replaced, right-aligned in place."""
    lines = raw.split("\n")
    for i, line in enumerate(lines):
        if column in line.split() and i + 2 < len(lines):
            end = line.index(column) + len(column)
            for j in range(i + 2, len(lines)):
                if lines[j].split()[:1] == [port] or (lines[j].split()[:2] == port.split()):
                    start = lines[i + 1].rfind(" ", 0, end) + 1  # the column's dashes
                    lines[j] = lines[j][:start] + str(value).rjust(end - start) + lines[j][end:]
                    return "\n".join(lines)
    raise AssertionError((port, column))


def reads(nic_a=None, rdma_a=None, pfc_a=None, queue_a=None, nic_b=None, rdma_b=None):
    before = {"nic": parse_counters(nic_b or text("ethtool-cx6dx-before.txt"), "ethtool_mlx5", port=NIC),
              "rdma": parse_counters(rdma_b or text("hw_counters-mlx5-before.txt"), "rdma_mlx5", port=RDMA),
              "tor_pfc": parse_counters(text("sonic-pfc-before.txt"), "sonic_pfc"),
              "tor_queue": parse_counters(text("sonic-queue-before.txt"), "sonic_queue")}
    after = {"nic": parse_counters(nic_a or text("ethtool-cx6dx-after.txt"), "ethtool_mlx5", port=NIC),
             "rdma": parse_counters(rdma_a or text("hw_counters-mlx5-after.txt"), "rdma_mlx5", port=RDMA),
             "tor_pfc": parse_counters(pfc_a or text("sonic-pfc-after.txt"), "sonic_pfc"),
             "tor_queue": parse_counters(queue_a or text("sonic-queue-after.txt"), "sonic_queue")}
    return before, after


READS = ("nic_a", "rdma_a", "pfc_a", "queue_a", "nic_b", "rdma_b")


def judge(**kw):
    before, after = reads(**{k: v for k, v in kw.items() if k in READS})
    opts = {k: v for k, v in kw.items() if k not in READS}
    opts.setdefault("profile", "nvidia")
    opts.setdefault("port", "Ethernet8")
    opts.setdefault("seconds", 10)
    result = load_verdict(before, after, **opts)
    return result, {c["priority"]: c for c in result["classes"]}


# ---- parsers -------------------------------------------------------------------------------------------------

def test_ethtool_mlx5_reads_every_line_with_the_interface_as_port():
    facts = parse_counters(text("ethtool-cx6dx-after.txt"), "ethtool_mlx5", port=NIC)
    counters = facts["ports"][NIC]
    assert facts["problems"] == [] and facts["side"] == "host NIC"
    assert counters["rx_prio3_pause"] == 23734 and counters["rx_prio3_pause_duration"] == 3412345
    assert counters["tx_pause_storm_error_events"] == 0 and counters["rx_out_of_buffer"] == 0
    assert len(counters) == text("ethtool-cx6dx-after.txt").count("\n") - 1


def test_ethtool_without_pfc_does_not_report_priority_pause_as_zero():
    counters = parse_counters(text("ethtool-cx4lx.txt"), "ethtool_mlx5")["ports"]["port"]
    assert "rx_prio3_pause" not in counters and counters["rx_prio3_packets"] == 0
    assert counters["rx_discards_phy"] == 41


def test_ethtool_garbage_is_a_problem_not_a_traceback():
    facts = parse_counters("ethtool: bad command line argument(s)\n", "ethtool_mlx5")
    assert facts["ports"] == {} and facts["problems"]


def test_hw_counters_from_grep_lines_name_lines_and_a_mapping_agree():
    grep = parse_counters(text("hw_counters-mlx5-after.txt"), "rdma_mlx5", port=RDMA)["ports"][RDMA]
    lines = "\n".join("%s %d" % kv for kv in grep.items())
    mapping = {"/sys/class/infiniband/mlx5_0/ports/1/hw_counters/" + k: "%d\n" % v for k, v in grep.items()}
    assert parse_counters(lines, "rdma_mlx5", port=RDMA)["ports"][RDMA] == grep
    assert parse_counters(mapping, "rdma_mlx5", port=RDMA)["ports"][RDMA] == grep
    assert grep["rp_cnp_handled"] == 52211 and grep["lifespan"] == 10


def test_rxe_names_are_its_own():
    counters = parse_counters(text("hw_counters-rxe-after.txt"), "rdma_rxe")["ports"]["port"]
    assert set(counters) >= {"rcvd_pkts", "sent_pkts", "out_of_seq_request", "rcvd_seq_err", "retry_rnr_exceeded_err"}
    assert describe("rdma_rxe", "duplicate_request")["width"] == 64
    assert describe("rdma_mlx5", "duplicate_request")["width"] == 32


def test_sonic_pfc_counters_with_thousands_separators_and_na():
    ports = parse_counters(text("sonic-pfc-after.txt"), "sonic_pfc")["ports"]
    assert ports["Ethernet8"]["pfc3_tx_pkts"] == 23740 and ports["Ethernet4"]["pfc3_rx_pkts"] == 12
    assert ports["Ethernet12"] == {}  # N/A everywhere: nothing reported, not zeros
    assert parse_counters(text("sonic-pfc-after.txt"), "sonic_pfc", port="Ethernet4")["ports"].keys() == {"Ethernet4"}


def test_sonic_queue_counters_with_and_without_the_namespace_line():
    new = parse_counters(text("sonic-queue-after.txt"), "sonic_queue")["ports"]["Ethernet8"]
    old = parse_counters(text("sonic-queue-no-namespace.txt"), "sonic_queue")["ports"]["Ethernet4"]
    assert new["uc3_pkts"] == 1004170021 and new["uc3_drop_pkts"] == 0 and new["mc10_pkts"] == 0
    assert old["uc3_drop_pkts"] == 7 and old["uc3_drop_bytes"] == 28952


def test_unknown_format_names_the_formats():
    with pytest.raises(ValueError, match="eos_ecn, eos_pfc, eos_pfc_detail, eos_queue, ethtool_mlx5, linux_ethtool, linux_link, linux_qdisc, nvue_qos, "
                                         "nvue_roce, nxos_pfc, nxos_pfcwd, nxos_queuing, os10_queuing, rdma_mlx5, rdma_rxe, sonic_pfc, sonic_pfcwd, "
                                         "sonic_pg_drop, sonic_pg_headroom, sonic_queue"):
        parse_counters("", "eos")


# ---- widths, wraps and resets ---------------------------------------------------------------------------------

def test_counter_delta_by_width():
    assert counter_delta(10, 25, 32) == (15, "counted")
    assert counter_delta(4294967290, 4, 32) == (10, "wrapped")
    assert counter_delta(4294967290, 4, 64) == (None, "reset")  # a 64-bit counter never wraps in a run
    # alone, a 32-bit decrease only may be a wrap: its read decides (read_deltas, test_counter_wrap.py)
    assert counter_delta(100, 50, 32) == ((1 << 32) - 50, "wrapped")
    assert counter_delta(None, 5, 64) == (None, "not_reported")


# ---- verdicts -------------------------------------------------------------------------------------------------

def test_control_is_lossless_under_load():
    result, classes = judge()
    assert result["verdict"] == "lossless_under_load", classes[3]["message"]
    moved = {r["counter"] for r in classes[3]["moved"]["pause"] + classes[3]["moved"]["ecn"]}
    assert moved == {"rx_prio3_pause", "pfc3_tx_pkts", "rp_cnp_handled"}
    assert "switch Ethernet8 pfc3_tx_pkts +5,500" in classes[3]["message"]


def test_a_switch_queue_drop_is_dropped_and_named():
    queue = sonic_cell(text("sonic-queue-after.txt"), "Ethernet8 UC3", "Drop/pkts", 120)
    result, classes = judge(queue_a=queue)
    assert result["verdict"] == "dropped"
    assert classes[3]["message"] == "Priority 3 dropped under load: switch Ethernet8 uc3_drop_pkts +120."


def test_a_drop_on_another_queue_is_not_the_lossless_class():
    queue = sonic_cell(text("sonic-queue-after.txt"), "Ethernet8 UC0", "Drop/pkts", 120)
    assert judge(queue_a=queue)[0]["verdict"] == "lossless_under_load"


def test_an_rdma_sequence_error_is_lost_not_placed_on_the_link():
    # out_of_sequence counts a gap anywhere between the ends of the QP (review 33): lost, not this link's drop
    result, classes = judge(rdma_a=edit(text("hw_counters-mlx5-after.txt"), "out_of_sequence", 4))
    assert result["verdict"] == "lost"
    assert "RDMA mlx5_0/1 out_of_sequence +4" in classes[3]["message"] and "not placed" in classes[3]["message"]


def test_ecn_inactive_when_paused_without_cnp():
    result, classes = judge(rdma_a=edit(text("hw_counters-mlx5-after.txt"), "rp_cnp_handled", 40211))
    assert result["verdict"] == "ecn_inactive"
    assert "no ECN mark or CNP moved" in classes[3]["message"]


def test_no_ecn_expected_without_dcqcn_on_the_class():
    rdma = edit(text("hw_counters-mlx5-after.txt"), "rp_cnp_handled", 40211)
    assert judge(rdma_a=rdma, profile=None, priorities=[3])[0]["verdict"] == "lossless_under_load"


def test_pause_storm_events():
    result, classes = judge(nic_a=edit(text("ethtool-cx6dx-after.txt"), "tx_pause_storm_error_events", 1))
    assert result["verdict"] == "pause_storm"
    assert "host NIC ens1f0np0 tx_pause_storm_error_events +1" in classes[3]["message"]


def test_pause_storm_by_duration_needs_the_run_length():
    nic = edit(text("ethtool-cx6dx-after.txt"), "tx_prio3_pause_duration", 9100000)  # 9.1 s of a 10 s run
    assert judge(nic_a=nic)[0]["verdict"] == "pause_storm"
    assert judge(nic_a=nic, seconds=None)[0]["verdict"] == "lossless_under_load"


def test_inconclusive_without_congestion_says_what_to_raise():
    nic = edit(text("ethtool-cx6dx-after.txt"), "rx_prio3_pause", 18234)
    pfc = sonic_cell(text("sonic-pfc-after.txt").split("\n\n")[0], "Ethernet8", "PFC3", "0") + "\n\n" + \
        sonic_cell(text("sonic-pfc-after.txt").split("\n\n")[1], "Ethernet8", "PFC3", "18,240")
    rdma = edit(text("hw_counters-mlx5-after.txt"), "rp_cnp_handled", 40211)
    result, classes = judge(nic_a=nic, pfc_a=pfc, rdma_a=rdma)
    assert result["verdict"] == "inconclusive"
    assert "No congestion reached on priority 3" in classes[3]["message"]
    assert "incast fan-in" in classes[3]["message"]


def test_a_32bit_wrap_is_counted_through_the_top():
    rdma_b = edit(text("hw_counters-mlx5-before.txt"), "out_of_buffer", 4294967290)
    rdma_a = edit(text("hw_counters-mlx5-after.txt"), "out_of_buffer", 4)
    result, classes = judge(rdma_b=rdma_b, rdma_a=rdma_a)
    assert result["verdict"] == "dropped"
    assert "RDMA mlx5_0/1 out_of_buffer +10 (wrapped)" in classes[3]["message"]


def test_the_same_decrease_on_a_64bit_counter_is_a_reset_never_negative():
    nic_b = edit(text("ethtool-cx6dx-before.txt"), "rx_prio3_discards", 4294967290)
    nic_a = edit(text("ethtool-cx6dx-after.txt"), "rx_prio3_discards", 4)
    result, classes = judge(nic_b=nic_b, nic_a=nic_a)
    assert result["verdict"] == "inconclusive"
    assert "reset between the reads (host NIC ens1f0np0 rx_prio3_discards" in classes[3]["message"]
    assert all(r["delta"] is None or r["delta"] >= 0 for r in result["counters"])


def test_a_reset_read_turns_its_32bit_decreases_into_resets_too():
    rdma_b = edit(edit(text("hw_counters-mlx5-before.txt"), "out_of_buffer", 4294967290), "rp_cnp_handled", 90000)
    rdma_a = edit(text("hw_counters-mlx5-after.txt"), "out_of_buffer", 4)
    result, classes = judge(rdma_b=rdma_b, rdma_a=rdma_a)
    states = {r["counter"]: r["state"] for r in result["counters"] if r["read"] == "rdma"}
    assert states["out_of_buffer"] == "reset" and states["rp_cnp_handled"] == "reset"
    assert result["verdict"] == "inconclusive"


def test_an_absent_counter_is_not_reported_not_zero():
    nic = drop_line(text("ethtool-cx6dx-after.txt"), "rx_prio3_pause")
    result, classes = judge(nic_a=nic)
    assert [r["counter"] for r in classes[3]["not_reported"]] == ["rx_prio3_pause"]
    assert result["verdict"] == "lossless_under_load"  # the switch's Tx PFC3 still shows the pauses


def test_no_drop_counter_reported_is_inconclusive():
    before, after = reads()
    keep = ("nic",)
    before = {k: v for k, v in before.items() if k in keep}
    after = {k: v for k, v in after.items() if k in keep}
    for facts in (before["nic"], after["nic"]):
        counters = facts["ports"][NIC]
        for name in [n for n in counters if describe("ethtool_mlx5", n)["fact"] == "drop"]:
            del counters[name]
    result = load_verdict(before, after, profile="nvidia")
    assert result["verdict"] == "inconclusive"
    assert "no drop, retransmission or sequence-error counter" in result["classes"][0]["message"]


def test_link_level_pause_never_makes_a_class_lossless():
    base = text("ethtool-cx7-global-pause.txt")
    after = edit(edit(base, "tx_pause_ctrl_phy", 1366552), "tx_global_pause", 1366552)
    result = load_verdict({"nic": parse_counters(base, "ethtool_mlx5")},
                          {"nic": parse_counters(after, "ethtool_mlx5")}, profile="nvidia")
    klass = result["classes"][0]
    assert result["verdict"] == "inconclusive"
    assert "802.3x flow control, not PFC" in klass["message"]
    assert {r["counter"] for r in klass["moved"]["link_pause"]} == {"tx_pause_ctrl_phy", "tx_global_pause"}


def test_soft_roce_alone_cannot_reach_congestion():
    result = load_verdict({"rdma": parse_counters(text("hw_counters-rxe-before.txt"), "rdma_rxe")},
                          {"rdma": parse_counters(text("hw_counters-rxe-after.txt"), "rdma_rxe")}, priorities=[3])
    assert result["verdict"] == "inconclusive"
    assert "No congestion reached" in result["classes"][0]["message"]
    seq = edit(text("hw_counters-rxe-after.txt"), "rcvd_seq_err", 3)
    result = load_verdict({"rdma": parse_counters(text("hw_counters-rxe-before.txt"), "rdma_rxe")},
                          {"rdma": parse_counters(seq, "rdma_rxe")}, priorities=[3])
    assert result["verdict"] == "lost"


def test_sonic_profile_judges_both_lossless_classes():
    result, classes = judge(profile="sonic")
    assert sorted(classes) == [3, 4]
    assert classes[4]["verdict"] == "inconclusive" and classes[3]["verdict"] == "lossless_under_load"
    assert result["verdict"] == "inconclusive"
    # The RDMA CNP counters count the whole device: with two classes in one run they prove neither.
    assert classes[3]["moved"]["ecn"] == [] and "judge one class per run" in classes[3]["message"]
    assert judge(profile="sonic", priorities=[4])[1][4]["verdict"] == "lossless_under_load"  # one class: they count


@pytest.mark.parametrize("bad, message", [
    ({"port": None}, "holds the ports Ethernet0, Ethernet12, Ethernet4, Ethernet8; name the link's with port="),
    ({"port": "Ethernet99"}, "port Ethernet99 is in neither read"),
    ({"profile": None}, "profile: give the fabric's lossless profile"),
    ({"profile": "lossless"}, "is not a preset"),
])
def test_misuse_is_one_line(bad, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        judge(**bad)


def test_reads_must_pair_up():
    before, after = reads()
    del after["rdma"]
    with pytest.raises(ValueError, match="reads rdma: in only one of before and after"):
        load_verdict(before, after, profile="nvidia", port="Ethernet8")
    with pytest.raises(ValueError, match=r"before\[x\]: is not counter facts"):
        load_verdict({"x": "text"}, {"x": "text"}, profile="nvidia")
