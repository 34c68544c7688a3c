# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drops a lossless fabric makes outside the egress queue counters (issue 40): SONiC's PFC watchdog (``show pfcwd
stats``) and ingress priority-group drops (``show priority-group drop counters``), the per traffic class discards of a
Spectrum port under mlxsw (``ethtool -S``), and the poll intervals configured on the switch (``counterpoll show``,
switchd's ``stats.poll_interval``) that the wait before the read after the load follows.

Samples: data/counters/recorded (ORIGIN.md, "Recorded verbatim"). Each verdict case moves exactly one counter of a
recorded read (the rest as recorded) and has a control: the same reads with that counter left as it was."""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.fleet.incast_results import tor_reads
from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import describe, parse_counters
from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse_nos import (
    parse_sonic_counterpoll, parse_switchd_poll)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import load_verdict
from ansible_collections.ainet.fabric.plugins.module_utils.tor import nos_sonic, platforms
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import PushError

RECORDED = os.path.join(os.path.dirname(__file__), "data", "counters", "recorded")


def raw(name):
    with open(os.path.join(RECORDED, name)) as handle:
        return handle.read()


def cell(text, row, old, new):
    """``text`` with ``old`` replaced by ``new`` (right-aligned to its width, as tabulate prints) on the one line that
    starts, after spaces, with ``row``; fails when the line or the value is not there."""
    lines = text.split("\n")
    index = next(i for i, line in enumerate(lines) if line.strip().startswith(row))
    assert old in lines[index] and len(new) <= len(old), (row, old, new)
    lines[index] = lines[index].replace(old, new.rjust(len(old)), 1)
    return "\n".join(lines)


def pfc_pause_pair():
    """The Z9332's recorded `show pfc counters` Tx table (sonic-buildimage#9430) before, and with Ethernet4's PFC3
    moved: the congestion a load reaches (the switch paused the sender)."""
    before = raw("sonic-pfc-tx-z9332-th3.txt")
    return (parse_counters(before, "sonic_pfc", port="Ethernet4"),
            parse_counters(cell(before, "Ethernet4", "0       0       0       0", "0       0       0    5500"),
                           "sonic_pfc", port="Ethernet4"))


def judge(read, fmt, before, after, port, priority=3, with_pause=True):
    reads_b, reads_a = {read: parse_counters(before, fmt, port=port)}, {read: parse_counters(after, fmt, port=port)}
    if with_pause:
        reads_b["tor_pfc"], reads_a["tor_pfc"] = pfc_pause_pair()
    verdict = load_verdict(reads_b, reads_a, priorities=[priority], port=port)
    return verdict["classes"][0]


# ---- show pfcwd stats ----------------------------------------------------------------------------------------

PFCWD = ["sonic-pfcwd-z9332-8483-%d.txt" % i for i in (1, 2, 3)]


def test_pfcwd_recorded_reads_keep_the_cumulative_columns_not_the_last_storm():
    first, second, third = (parse_counters(raw(name), "sonic_pfcwd") for name in PFCWD)
    for facts in (first, second, third):
        assert facts["problems"] == [] and sorted(facts["ports"]) == ["Ethernet4"]
    assert first["ports"]["Ethernet4"] == {"q3_storm_detected": 1, "q3_storm_restored": 0, "q3_tx_ok": 0,
                                           "q3_tx_drop": 41507426, "q3_rx_ok": 0, "q3_rx_drop": 0}
    assert second["ports"]["Ethernet4"]["q3_storm_restored"] == 1
    # the third read's LAST column restarted with the second storm (0/666293); the cumulative one did not
    assert third["ports"]["Ethernet4"]["q3_tx_drop"] == 46497254
    assert 666293 not in third["ports"]["Ethernet4"].values()
    assert describe("sonic_pfcwd", "q3_storm_detected") == {"fact": "pause_storm", "priority": None, "queue": 3,
                                                            "width": 64, "direction": None}
    assert describe("sonic_pfcwd", "q3_tx_drop")["fact"] == "drop"
    assert describe("sonic_pfcwd", "q3_tx_ok")["fact"] == "info"


def test_pfcwd_two_recorded_reads_around_a_second_storm_are_dropped_with_the_storm_named():
    got = judge("tor_pfcwd", "sonic_pfcwd", raw(PFCWD[0]), raw(PFCWD[2]), "Ethernet4")
    assert got["verdict"] == "dropped"
    assert [(r["counter"], r["delta"]) for r in got["moved"]["drop"]] == [("q3_tx_drop", 46497254 - 41507426)]
    assert [(r["counter"], r["delta"]) for r in got["moved"]["storm"]] == [("q3_storm_detected", 1)]
    assert "Pause storm as well: switch Ethernet4 q3_storm_detected +1" in got["message"]


def test_pfcwd_control_no_watchdog_counter_moved_is_lossless():
    got = judge("tor_pfcwd", "sonic_pfcwd", raw(PFCWD[0]), raw(PFCWD[0]), "Ethernet4")
    assert got["verdict"] == "lossless_under_load", got["message"]


def test_pfcwd_only_a_storm_detected_is_a_pause_storm():
    after = cell(raw(PFCWD[0]), "Ethernet4:3", "1/0", "2/0")
    got = judge("tor_pfcwd", "sonic_pfcwd", raw(PFCWD[0]), after, "Ethernet4")
    assert got["verdict"] == "pause_storm"
    assert got["moved"]["drop"] == [] and "switch Ethernet4 q3_storm_detected +1" in got["message"]


@pytest.mark.parametrize("old,new,counter", [("0/41507426", "0/41507526", "q3_tx_drop"),
                                             ("   0/0         0/41507426", "  0/17         0/41507426",
                                              "q3_rx_drop")])
def test_pfcwd_only_a_watchdog_drop_is_dropped_on_that_port(old, new, counter):
    after = cell(raw(PFCWD[0]), "Ethernet4:3", old, new)
    got = judge("tor_pfcwd", "sonic_pfcwd", raw(PFCWD[0]), after, "Ethernet4")
    assert got["verdict"] == "dropped"
    assert [r["counter"] for r in got["moved"]["drop"]] == [counter]
    assert got["moved"]["storm"] == []


def test_pfcwd_the_last_storm_columns_moving_alone_judge_nothing():
    text = raw(PFCWD[0])
    line = next(one for one in text.splitlines() if one.startswith("Ethernet4:3"))
    last = line.rindex("0/41507426")  # TX LAST OK/DROP, after the cumulative TX OK/DROP
    moved = text.replace(line, line[:last] + "0/41599999" + line[last + len("0/41599999"):])
    assert moved != text
    got = judge("tor_pfcwd", "sonic_pfcwd", text, moved, "Ethernet4")
    assert got["verdict"] == "lossless_under_load"


def test_pfcwd_queue_4_storm_does_not_judge_priority_3():
    after = raw(PFCWD[0]).replace("Ethernet4:3", "Ethernet4:4")
    before = after
    after = cell(after, "Ethernet4:4", "1/0", "2/0")
    three = judge("tor_pfcwd", "sonic_pfcwd", before, after, "Ethernet4")
    # the watchdog watches queue 4 only: priority 3 has no drop counter in this read, so it is not shown lossless
    assert three["verdict"] == "inconclusive" and three["moved"]["storm"] == []
    assert "no drop, retransmission or sequence-error counter of it was reported" in three["message"]
    assert judge("tor_pfcwd", "sonic_pfcwd", before, after, "Ethernet4", priority=4,
                 with_pause=False)["verdict"] == "pause_storm"


def test_pfcwd_without_the_watchdog_on_the_port_is_not_reported_never_zero():
    """A printed table without the port: the port was read (a row of zeros is left out without -e, review 40 D1),
    but no counter of it is named, so none reads 0; the problem says which two things it can mean."""
    facts = parse_counters(raw(PFCWD[0]), "sonic_pfcwd", port="Ethernet8")
    assert facts["ports"] == {"Ethernet8": {}}
    assert facts["problems"] == ["sonic_pfcwd: port Ethernet8 is not in the output: without -e none of its queues "
                                 "counted anything, or the port has no queue"]


def test_pfcwd_an_error_instead_of_the_table_is_quoted():
    facts = parse_counters("show pfcwd stats failed (rc 2): Error: No such command \"pfcwd\".", "sonic_pfcwd")
    assert facts["ports"] == {}
    assert facts["problems"] == ["sonic_pfcwd: no table in the output (not `show pfcwd stats`?): 'show pfcwd stats "
                                 "failed (rc 2): Error: No such command \"pfcwd\".'"]


# ---- show priority-group drop counters -----------------------------------------------------------------------

PG = "sonic-pg-drop-cisco-lc-3782.txt"


def test_pg_drop_recorded_read():
    facts = parse_counters(raw(PG), "sonic_pg_drop")
    assert facts["problems"] == []
    assert len(facts["ports"]) == 10 and all(len(c) == 8 for c in facts["ports"].values())
    assert facts["ports"]["Ethernet112"]["pg3_drop_pkts"] == 13681484
    assert sum(v for c in facts["ports"].values() for v in c.values()) == 13681484
    assert describe("sonic_pg_drop", "pg3_drop_pkts") == {"fact": "drop", "priority": None, "queue": None,
                                                          "width": 64, "direction": None}


@pytest.mark.parametrize("priority", [3, 4])
def test_pg_drop_one_pg_moved_is_dropped_on_that_port_for_every_class(priority):
    pause_b, pause_a = pfc_pause_pair()
    before = raw(PG).replace("Ethernet112", "Ethernet4  ").replace("  Ethernet4  ", "    Ethernet4")
    after = cell(before, "Ethernet4", "13681484", "13681999")
    reads_b = {"tor_pg_drop": parse_counters(before, "sonic_pg_drop", port="Ethernet4"), "tor_pfc": pause_b}
    reads_a = {"tor_pg_drop": parse_counters(after, "sonic_pg_drop", port="Ethernet4"), "tor_pfc": pause_a}
    got = load_verdict(reads_b, reads_a, priorities=[priority], port="Ethernet4")["classes"][0]
    assert got["verdict"] == "dropped"
    assert [(r["counter"], r["delta"]) for r in got["moved"]["drop"]] == [("pg3_drop_pkts", 515)]


def test_pg_drop_control_and_a_drop_on_another_port_is_not_this_link_s():
    pause_b, pause_a = pfc_pause_pair()
    before = raw(PG).replace("Ethernet112", "Ethernet4  ").replace("  Ethernet4  ", "    Ethernet4")
    other = cell(before, "Ethernet120", "0      0      0         0", "0      0      0        99")
    for after in (before, other):
        reads_b = {"tor_pg_drop": parse_counters(before, "sonic_pg_drop", port="Ethernet4"), "tor_pfc": pause_b}
        reads_a = {"tor_pg_drop": parse_counters(after, "sonic_pg_drop", port="Ethernet4"), "tor_pfc": pause_a}
        got = load_verdict(reads_b, reads_a, priorities=[3], port="Ethernet4")["classes"][0]
        assert got["verdict"] == "lossless_under_load", got["message"]


def test_pg_drop_disabled_warning_is_a_problem_quoting_it():
    warning = "Warning: PG counters are disabled. Use 'counterpoll pg-drop enable' to enable polling\n"
    facts = parse_counters(warning, "sonic_pg_drop")
    assert facts["ports"] == {} and facts["problems"] == [
        "sonic_pg_drop: no table in the output (not `show priority-group drop counters`?): %r" % warning.strip()]


def test_pg_drop_na_is_not_reported():
    text = cell(raw(PG), "Ethernet96", "0      0      0         0", "0      0      0       N/A")
    facts = parse_counters(text, "sonic_pg_drop", port="Ethernet96")
    assert facts["problems"] == [] and "pg3_drop_pkts" not in facts["ports"]["Ethernet96"]
    assert len(facts["ports"]["Ethernet96"]) == 7


# ---- show priority-group persistent-watermark headroom: names the cause beside a PG drop ------------------------

HEADROOM = "sonic-pg-headroom-persistent-wm-masic.txt"  # sonic-utilities tests/wm_input/wm_test_vectors.py


def test_pg_headroom_multi_asic_tables_are_read_apart_under_their_titles():
    facts = parse_counters(written(HEADROOM), "sonic_pg_headroom")
    assert facts["problems"] == []
    assert sorted(facts["ports"]) == ["Ethernet-BP0", "Ethernet-BP256", "Ethernet-BP260", "Ethernet-BP4", "Ethernet0",
                                      "Ethernet4"]
    assert facts["ports"]["Ethernet0"]["pg3_headroom_bytes"] == 203
    assert facts["ports"]["Ethernet-BP256"]["pg15_headroom_bytes"] == 507
    assert facts["ports"]["Ethernet4"] == {}  # N/A everywhere: not reported
    assert describe("sonic_pg_headroom", "pg3_headroom_bytes")["fact"] == "headroom_watermark"


def headroom_verdict(port, drop_moved):
    drops = raw(PG).replace("   Ethernet112", port.rjust(len("   Ethernet112")))
    after = cell(drops, port, "13681484", "13681999") if drop_moved else drops
    reads_b = {"tor_pg_drop": parse_counters(drops, "sonic_pg_drop", port=port),
               "tor_pg_headroom": parse_counters(written(HEADROOM), "sonic_pg_headroom", port=port)}
    reads_a = {"tor_pg_drop": parse_counters(after, "sonic_pg_drop", port=port),
               "tor_pg_headroom": parse_counters(written(HEADROOM), "sonic_pg_headroom", port=port)}
    return load_verdict(reads_b, reads_a, priorities=[3], port=port)["classes"][0]


def test_a_pg_drop_names_the_port_s_headroom_high_water_marks():
    got = headroom_verdict("Ethernet0", drop_moved=True)
    assert got["verdict"] == "dropped"
    assert "Ingress headroom held at most (persistent watermark, since it was last cleared): switch Ethernet0 " \
           "pg0_headroom_bytes 200 bytes" in got["message"]
    assert "switch Ethernet0 pg3_headroom_bytes 203 bytes" in got["message"]
    assert "Where it reaches the PG's headroom size, the headroom is too small for the cable and the pause response, " \
           "or PFC is sent too late." in got["message"]


def test_headroom_is_never_judged_and_not_named_without_a_pg_drop_or_a_mark():
    quiet = headroom_verdict("Ethernet0", drop_moved=False)
    assert quiet["verdict"] == "inconclusive" and "headroom" not in quiet["message"]
    unreported = headroom_verdict("Ethernet4", drop_moved=True)  # its watermarks are N/A
    assert unreported["verdict"] == "dropped" and "headroom" not in unreported["message"]


# ---- ethtool -S of a Spectrum port under mlxsw ---------------------------------------------------------------

MLXSW = "ethtool-mlxsw-swp31-snmpd-fixture.txt"


def mlxsw_judge(after, priority=3):
    before = raw(MLXSW)
    reads_b = {"tor_ethtool": parse_counters({"swp31": before}, "linux_ethtool", port="swp31")}
    reads_a = {"tor_ethtool": parse_counters({"swp31": after}, "linux_ethtool", port="swp31")}
    return load_verdict(reads_b, reads_a, priorities=[priority], port="swp31")["classes"][0]


def test_mlxsw_recorded_read_names_the_per_class_discards():
    facts = parse_counters({"swp31": raw(MLXSW)}, "linux_ethtool")
    assert facts["problems"] == [] and list(facts["ports"]) == ["swp31"]
    counters = facts["ports"]["swp31"]
    assert [n for n in counters if n.startswith("tc_no_buffer_discard_uc_tc_")] == [
        "tc_no_buffer_discard_uc_tc_%d" % tc for tc in range(16)]
    assert counters["tx_frames_prio_3"] == 6998434690 and counters["ecn_marked"] == 10
    assert describe("linux_ethtool", "tc_no_buffer_discard_uc_tc_3") == {
        "fact": "drop", "priority": None, "queue": 3, "width": 64, "direction": None}
    assert describe("linux_ethtool", "tx_pause_prio_3")["fact"] == "pfc_pause"
    assert describe("linux_ethtool", "tc_transmit_queue_tc_3")["fact"] == "info"
    assert describe("linux_ethtool", "discard_ingress_vlan_membership")["fact"] == "info"


def test_mlxsw_control_a_pause_only_is_lossless():
    after = raw(MLXSW).replace("tx_pause_prio_3: 0", "tx_pause_prio_3: 812")
    got = mlxsw_judge(after)
    assert got["verdict"] == "lossless_under_load", got["message"]


def test_mlxsw_only_the_class_s_no_buffer_discard_moved_is_dropped():
    after = raw(MLXSW).replace("tx_pause_prio_3: 0", "tx_pause_prio_3: 812").replace(
        "tc_no_buffer_discard_uc_tc_3: 0", "tc_no_buffer_discard_uc_tc_3: 41")
    got = mlxsw_judge(after)
    assert got["verdict"] == "dropped"
    assert [(r["counter"], r["delta"]) for r in got["moved"]["drop"]] == [("tc_no_buffer_discard_uc_tc_3", 41)]


def test_mlxsw_another_class_s_discard_does_not_judge_priority_3():
    after = raw(MLXSW).replace("tx_pause_prio_3: 0", "tx_pause_prio_3: 812").replace(
        "tc_no_buffer_discard_uc_tc_5: 0", "tc_no_buffer_discard_uc_tc_5: 41")
    assert mlxsw_judge(after)["verdict"] == "lossless_under_load"


@pytest.mark.parametrize("counter, verdict", [("discard_egress_hoq", "dropped"), ("if_out_discards", "dropped"),
                                              ("discard_ingress_vlan_membership", "lossless_under_load")])
def test_mlxsw_a_port_discard_judges_every_class_a_filter_discard_none(counter, verdict):
    after = raw(MLXSW).replace("tx_pause_prio_3: 0", "tx_pause_prio_3: 812").replace(
        "%s: 0" % counter, "%s: 5" % counter)
    got = mlxsw_judge(after)
    assert got["verdict"] == verdict
    assert [r["counter"] for r in got["moved"]["drop"]] == ([counter] if verdict == "dropped" else [])


def test_mlxsw_a_port_without_statistics_is_a_problem_not_a_clean_port():
    facts = parse_counters({"swp1": "ethtool -S swp1 failed (rc 94): no stats available"}, "linux_ethtool")
    assert facts["ports"] == {}
    assert facts["problems"] and facts["problems"][-1] == (
        "swp1: linux_ethtool: no counter in the output (not `ethtool -S <interface>`?)")


# ---- the reads: SONiC's commands, the Linux switch's ethtool per port ---------------------------------------------

def switch(outputs, ran):
    def run(argv, data=None):
        ran.append(" ".join(argv))
        return outputs.get(" ".join(argv), (2, "", "Error: No such command"))
    return run


def test_sonic_reads_the_watchdog_and_pg_drops_and_a_release_without_them_still_reads_the_rest():
    ran = []
    outputs = {"show pfc counters": (0, raw("sonic-pfc-tx-z9332-th3.txt"), ""),
               "show queue counters": (0, raw("sonic-queue-7050cx3-td3-6290.txt"), ""),
               "show pfcwd stats -e": (0, raw(PFCWD[0]), "")}
    got = platforms.read_counters("sonic", "ssh", switch(outputs, ran))
    assert ran == ["show pfc counters", "show queue counters", "show pfcwd stats -e", "show priority-group drop counters",
                   "show priority-group persistent-watermark headroom"]
    assert got["sonic_pfcwd"] == raw(PFCWD[0])
    assert got["sonic_pg_drop"] == "show priority-group drop counters failed (rc 2): Error: No such command"
    assert parse_counters(got["sonic_pg_drop"], "sonic_pg_drop")["problems"] == [
        "sonic_pg_drop: no table in the output (not `show priority-group drop counters`?): "
        "'show priority-group drop counters failed (rc 2): Error: No such command'"]


def test_sonic_a_failed_queue_read_still_fails_the_read():
    outputs = {"show pfc counters": (0, raw("sonic-pfc-tx-z9332-th3.txt"), "")}
    with pytest.raises(PushError, match="show queue counters failed"):
        platforms.read_counters("sonic", "ssh", switch(outputs, []))


def test_linux_reads_ethtool_for_the_step_s_ports_only_and_keeps_a_failure_as_its_line():
    ran = []
    outputs = {"ip -s -s -j link show": (0, "[]", ""), "tc -s -j qdisc show": (0, "[]", ""),
               "ethtool -S swp31": (0, raw(MLXSW), "")}
    got = platforms.read_counters("linux", "ssh", switch(outputs, ran), ports=["swp31", "swp2", "swp31"])
    assert ran == ["ip -s -s -j link show", "tc -s -j qdisc show", "ethtool -S swp2", "ethtool -S swp31"]
    assert got["linux_ethtool"] == {"swp2": "ethtool -S swp2 failed (rc 2): Error: No such command",
                                    "swp31": raw(MLXSW)}
    without = platforms.read_counters("linux", "ssh", switch(outputs, []))
    assert sorted(without) == ["linux_link", "linux_qdisc"]


def test_linux_a_port_name_the_kernel_refuses_runs_nothing():
    ran = []
    with pytest.raises(ValueError, match="sw p1: not a Linux interface name"):
        platforms.read_counters("linux", "ssh", switch({}, ran), ports=["sw p1"])
    assert ran == []


# ---- the configured poll intervals ---------------------------------------------------------------------------

def test_counterpoll_recorded_defaults_give_the_default_wait():
    groups, problems = parse_sonic_counterpoll(raw("sonic-counterpoll-show-4106.txt"))
    assert problems == []
    assert groups["QUEUE_STAT"] == {"interval_ms": 10000, "configured": False, "enabled": True}
    assert groups["ACL"] == {"interval_ms": 10000, "configured": True, "enabled": True}
    seconds, source = nos_sonic.counter_settle(raw("sonic-counterpoll-show-4106.txt"))
    assert seconds == 10 == nos_sonic.COUNTER_SETTLE
    assert source == "counterpoll show: PORT_STAT 1000 ms, QUEUE_STAT 10000 ms, PG_DROP_STAT 10000 ms"


def test_counterpoll_a_configured_queue_interval_sets_the_wait():
    text = raw("sonic-counterpoll-show-4106.txt").replace("QUEUE_STAT                  default (10000)",
                                                          "QUEUE_STAT                  30500          ")
    assert nos_sonic.counter_settle(text)[0] == 31  # rounded up: a read 30 s after would miss the last 0.5 s


def test_counterpoll_a_disabled_group_does_not_set_the_wait():
    text = raw("sonic-counterpoll-show-4106.txt").replace(
        "PG_DROP_STAT                default (10000)     enable", "PG_DROP_STAT                60000               disable")
    assert nos_sonic.counter_settle(text) == (10, "counterpoll show: PORT_STAT 1000 ms, QUEUE_STAT 10000 ms")


def test_settle_read_falls_back_to_the_default_naming_why():
    ran = []
    outputs = {"counterpoll show": (0, raw("sonic-counterpoll-show-4106.txt").replace("(10000)", "(20000)"), "")}
    assert platforms.read_counter_settle("sonic", "ssh", switch(outputs, ran)) == (
        20, "counterpoll show: PORT_STAT 1000 ms, QUEUE_STAT 20000 ms, PG_DROP_STAT 20000 ms")
    assert ran == ["counterpoll show"]
    seconds, source = platforms.read_counter_settle("sonic", "ssh", switch({}, []))
    assert seconds == 10 and source == ("the NOS's default poll interval (counterpoll show failed (rc 2): Error: No "
                                        "such command)")
    assert platforms.read_counter_settle("eos", "http", None) == (
        0, "the NOS's default poll interval (the configured one is not read)")


def test_switchd_conf_documented_default_and_a_setting():
    documented = raw("cumulus-switchd-conf-cl51-docs.txt")
    assert parse_switchd_poll(documented) == (None, [])
    outputs = {"cat /etc/cumulus/switchd.conf": (0, documented, "")}
    assert platforms.read_counter_settle("cumulus", "ssh", switch(outputs, [])) == (
        2, "the NOS's default poll interval (switchd.conf sets no stats.poll_interval (the default))")
    configured = documented.replace("#stats.poll_interval = 2000", "stats.poll_interval = 5000")
    outputs["cat /etc/cumulus/switchd.conf"] = (0, configured, "")
    assert platforms.read_counter_settle("cumulus", "ssh", switch(outputs, [])) == (
        5, "switchd.conf: stats.poll_interval = 5000 ms")


# ---- Cisco NX-OS: show queuing interface <port>, show interface priority-flow-control detail ---------------------

COUNTERS = os.path.join(os.path.dirname(__file__), "data", "counters")


def written(name):
    with open(os.path.join(COUNTERS, name)) as handle:
        return handle.read()


def nxos_queuing():
    """One port's `show queuing interface` as the capture's two greps print it: the QOS GROUP 5 box, then the
    ingress part (ORIGIN.md: the line breaks of the stored copy are lost; the parser reads words)."""
    return written("nxos-queuing-egress-qos5-n9k-roce-blog.txt") + written("nxos-queuing-ingress-n9k-roce-blog.txt")


NXOS_PAUSED = ("|150          |0            |0Ethernet1/52", "|950          |0            |0Ethernet1/52")


def nxos_judge(queuing_after, pfc_after=None, priority=5):
    pfc = written("nxos-pfc-detail-n9k-roce-blog.txt")
    pfc_after = pfc.replace(*NXOS_PAUSED) if pfc_after is None else pfc_after
    port = "Ethernet1/51"
    reads_b = {"tor_queuing": parse_counters({port: nxos_queuing()}, "nxos_queuing", port=port),
               "tor_pfc": parse_counters(pfc, "nxos_pfc", port=port)}
    reads_a = {"tor_queuing": parse_counters({port: queuing_after}, "nxos_queuing", port=port),
               "tor_pfc": parse_counters(pfc_after, "nxos_pfc", port=port)}
    return load_verdict(reads_b, reads_a, priorities=[priority], port=port)["classes"][0]


def test_nxos_pfc_detail_per_priority_from_the_capture():
    facts = parse_counters(written("nxos-pfc-detail-n9k-roce-blog.txt"), "nxos_pfc")
    assert facts["problems"] == []
    assert sorted(facts["ports"]) == ["Ethernet1/51", "Ethernet1/52", "Ethernet1/53", "Ethernet1/54"]
    assert [facts["ports"][p]["pfc5_tx_frames"] for p in sorted(facts["ports"])] == [150, 143, 101, 4]
    assert [facts["ports"][p]["tx_pfc_frames"] for p in sorted(facts["ports"])] == [150, 143, 101, 4]
    assert all(v == 0 for c in facts["ports"].values() for n, v in c.items() if n.startswith("pfc") and "pfc5_tx" not in n)
    assert len(facts["ports"]["Ethernet1/54"]) == 18
    assert describe("nxos_pfc", "pfc5_tx_frames") == {"fact": "pfc_pause", "priority": 5, "queue": None, "width": None,
                                                      "direction": None}
    assert describe("nxos_pfc", "tx_pfc_frames")["fact"] == "info"


def test_nxos_queuing_from_the_capture():
    facts = parse_counters({"Ethernet1/51": nxos_queuing()}, "nxos_queuing")
    assert facts["problems"] == []
    got = facts["ports"]["Ethernet1/51"]
    assert got["qg5_uc_tx_pkts"] == 202328436 and got["qg5_uc_tx_byts"] == 203884632744
    assert got["qg5_uc_wred_afd_tail_drop_pkts"] == 0 and got["qg5_uc_wd_tail_drop_pkts"] == 0
    assert got["port_ingress_overflow_drop_pkts"] == 19490 and got["slice_ingress_overflow_drop_pkts"] == 71206
    assert (got["tx_ppp"], got["cos5_tx_pause"]) == (150, 150)
    # the ingress thresholds (Buff Size, Pause Th: 348608 77376 75712) are settings, not counters
    assert 348608 not in got.values() and 77376 not in got.values()
    assert describe("nxos_queuing", "qg5_uc_wd_tail_drop_pkts")["fact"] == "drop"
    assert describe("nxos_queuing", "qg5_uc_wd_tail_drop_pkts")["queue"] == 5
    assert describe("nxos_queuing", "port_ingress_overflow_drop_pkts")["fact"] == "drop"
    assert describe("nxos_queuing", "slice_ingress_overflow_drop_pkts")["fact"] == "info"
    assert describe("nxos_queuing", "cos5_tx_pause")["fact"] == "info"  # nxos_pfc is the PFC read


def test_nxos_a_control_qos_group_box_is_not_a_data_class():
    box = written("nxos-queuing-egress-qos5-n9k-roce-blog.txt")
    control = box.replace("QOS GROUP 5       ", "CONTROL QOS GROUP 8")
    assert control.count("CONTROL QOS GROUP 8") == 1
    got = parse_counters({"Ethernet1/51": control}, "nxos_queuing")["ports"]["Ethernet1/51"]
    assert "qg8_uc_tx_pkts" not in got and got["cont_qg8_uc_tx_pkts"] == 202328436
    assert describe("nxos_queuing", "cont_qg8_uc_wd_tail_drop_pkts")["fact"] == "info"


def test_nxos_control_pauses_only_is_lossless():
    got = nxos_judge(nxos_queuing())
    assert got["verdict"] == "lossless_under_load", got["message"]
    assert [(r["counter"], r["delta"]) for r in got["moved"]["pause"]] == [("pfc5_tx_frames", 800)]


@pytest.mark.parametrize("old,new,counter", [
    ("| WRED/AFD & Tail Drop Pkts |               0|", "| WRED/AFD & Tail Drop Pkts |              12|",
     "qg5_uc_wred_afd_tail_drop_pkts"),
    ("|       WD & Tail Drop Pkts |               0|", "|       WD & Tail Drop Pkts |               7|",
     "qg5_uc_wd_tail_drop_pkts"),
    ("Ingress Overflow Drop Pkts                       19490", "Ingress Overflow Drop Pkts                       19500",
     "port_ingress_overflow_drop_pkts"),
])
def test_nxos_one_drop_moved_is_dropped(old, new, counter):
    after = nxos_queuing()
    assert after.count(old) == 1
    got = nxos_judge(after.replace(old, new))
    assert got["verdict"] == "dropped"
    assert [r["counter"] for r in got["moved"]["drop"]] == [counter]


def test_nxos_the_slice_s_overflow_is_not_this_port_s():
    after = nxos_queuing().replace("71206", "71999")
    assert nxos_judge(after)["verdict"] == "lossless_under_load"


class NxApi(object):
    """NX-API (``POST /ins``): answers each command of ``input`` with its text from ``outputs``; a command it has no
    text for fails as NX-API reports a refused command (``code`` 400, ``clierror``)."""

    def __init__(self, outputs):
        self.outputs = outputs
        self.sent = []

    def request(self, method, path, body=None, params=None):
        self.sent.append((method, path, body))
        commands = body["ins_api"]["input"].split(" ;")
        return 200, {"ins_api": {"outputs": {"output": [
            {"code": "200", "msg": "Success", "body": self.outputs[c]} if c in self.outputs else
            {"code": "400", "msg": "Input CLI command error", "clierror": "% Invalid command at '^' marker.\n"}
            for c in commands]}}}


PFCWD_NXOS = "nxos-pfcwd-detail-otel-fixture.txt"


def test_nxos_counters_over_nxapi_are_one_cli_show_ascii_request_and_the_watchdog_s_own():
    outputs = {"show queuing interface Ethernet1/51": nxos_queuing(),
               "show queuing interface Ethernet1/52": nxos_queuing().replace("Ethernet1/51", "Ethernet1/52"),
               "show interface priority-flow-control detail": written("nxos-pfc-detail-n9k-roce-blog.txt"),
               "show queuing pfc-queue detail": raw(PFCWD_NXOS)}
    api = NxApi(outputs)
    got = platforms.read_counters("nxos", "http", api, ports=["Ethernet1/52", "Ethernet1/51"])
    assert len(api.sent) == 2 and all(sent[:2] == ("POST", "/ins") for sent in api.sent)
    request = api.sent[0][2]["ins_api"]
    assert request["type"] == "cli_show_ascii"
    assert request["input"] == ("show queuing interface Ethernet1/51 ;show queuing interface Ethernet1/52 ;"
                                "show interface priority-flow-control detail")
    assert api.sent[1][2]["ins_api"]["input"] == "show queuing pfc-queue detail"
    assert sorted(got["nxos_queuing"]) == ["Ethernet1/51", "Ethernet1/52"]
    assert got["nxos_pfc"] == outputs["show interface priority-flow-control detail"]
    assert got["nxos_pfcwd"] == raw(PFCWD_NXOS)


def test_nxos_a_refused_watchdog_read_is_its_problem_and_the_rest_is_read():
    outputs = {"show queuing interface Ethernet1/51": nxos_queuing(),
               "show interface priority-flow-control detail": written("nxos-pfc-detail-n9k-roce-blog.txt")}
    got = platforms.read_counters("nxos", "http", NxApi(outputs), ports=["Ethernet1/51"])
    assert got["nxos_queuing"]["Ethernet1/51"] == nxos_queuing()
    facts = parse_counters(got["nxos_pfcwd"], "nxos_pfcwd", port="Ethernet1/51")
    assert facts["ports"] == {} and "'show queuing pfc-queue detail' failed: % Invalid command" in facts["problems"][0]
    # a required read that fails still fails the read
    del outputs["show interface priority-flow-control detail"]
    with pytest.raises(PushError, match="'show interface priority-flow-control detail' failed"):
        platforms.read_counters("nxos", "http", NxApi(outputs), ports=["Ethernet1/51"])


def test_nxos_counters_over_its_connection_and_bad_ports_run_nothing():
    ran = []
    outputs = {"show queuing interface Ethernet1/51": (0, nxos_queuing(), ""),
               "show interface priority-flow-control detail": (0, written("nxos-pfc-detail-n9k-roce-blog.txt"), "")}
    got = platforms.read_counters("nxos", "ssh", switch(outputs, ran), ports=["Ethernet1/51"])
    assert ran == ["show queuing interface Ethernet1/51", "show interface priority-flow-control detail",
                   "show queuing pfc-queue detail"]
    assert parse_counters(got["nxos_queuing"], "nxos_queuing", port="Ethernet1/51")["problems"] == []
    assert got["nxos_pfcwd"] == "show queuing pfc-queue detail failed (rc 2): Error: No such command"
    ran = []
    with pytest.raises(ValueError, match="Ethernet1/51; show: not a Cisco NX-OS port name"):
        platforms.read_counters("nxos", "ssh", switch(outputs, ran), ports=["Ethernet1/51; show"])
    with pytest.raises(ValueError, match="give the ports to read"):
        platforms.read_counters("nxos", "ssh", switch(outputs, ran))
    assert ran == []


def test_a_sonic_read_reaches_the_run_as_one_read_per_format_and_a_disabled_one_says_why():
    read = {"sonic_pfc": raw("sonic-pfc-tx-z9332-th3.txt"), "sonic_queue": raw("sonic-queue-7050cx3-td3-6290.txt"),
            "sonic_pfcwd": raw(PFCWD[0]),
            "sonic_pg_drop": "Warning: PG counters are disabled. Use 'counterpoll pg-drop enable' to enable polling\n"}
    got = tor_reads(read, "Ethernet4")
    assert sorted(got) == ["tor_pfc", "tor_pfcwd", "tor_pg_drop", "tor_queue"]  # no headroom read given: none
    assert got["tor_pfcwd"]["ports"]["Ethernet4"]["q3_tx_drop"] == 41507426
    # not read is not clean: no port, and the switch's own words
    assert got["tor_pg_drop"]["ports"] == {}
    assert "PG counters are disabled" in got["tor_pg_drop"]["problems"][0]


# ---- Dell OS10: show queuing statistics interface ethernet <port> (recorded, netdev 2022) --------------------------

OS10_CLEARED = "os10-queuing-hound-dirt-cleared-netdev-2022.txt"  # after `clear qos statistics`, before the load
OS10_AFTER = "os10-queuing-hound-dirt-cubic-netdev-2022.txt"  # the same port after the cubic incast: queue 5 dropped
OS10_PORT = "ethernet1/1/4"


def os10_read(text):
    return parse_counters({OS10_PORT: text}, "os10_queuing", port=OS10_PORT)


def os10_row(text, queue, column, value):
    """``text`` with one cell of queue ``queue``'s row set (``column`` 1-4: Packets, Bytes, Dropped-Packets,
    Dropped-Bytes), the recorded column widths kept."""
    lines = text.splitlines(True)
    index = next(i for i, line in enumerate(lines) if line.split()[:1] == [str(queue)])
    cells = lines[index].split()
    cells[column] = value
    lines[index] = "%-6s%-25s%-25s%-25s%-25s\n" % tuple(cells)
    return "".join(lines)


def test_os10_recorded_reads_per_queue():
    for name in (OS10_CLEARED, OS10_AFTER, "os10-queuing-fox-dirt-cubic-netdev-2022.txt"):
        facts = os10_read(raw(name))
        assert facts["problems"] == [] and facts["side"] == "switch", name
        assert len(facts["ports"][OS10_PORT]) == 32, name  # 8 queues x packets, bytes, dropped packets and bytes
    got = os10_read(raw(OS10_AFTER))["ports"][OS10_PORT]
    assert (got["q5_packets"], got["q5_dropped_packets"], got["q5_dropped_bytes"]) == (21377065, 1263665, 11321730380)
    assert got["q1_packets"] == 9 and got["q0_dropped_packets"] == 0
    assert describe("os10_queuing", "q5_dropped_packets") == {"fact": "drop", "priority": None, "queue": 5,
                                                              "width": None, "direction": None}
    assert describe("os10_queuing", "q5_bytes")["fact"] == "traffic"


def test_os10_the_recorded_incast_is_dropped_on_queue_5():
    got = load_verdict({"tor_queuing": os10_read(raw(OS10_CLEARED))}, {"tor_queuing": os10_read(raw(OS10_AFTER))},
                       priorities=[5], port=OS10_PORT)["classes"][0]
    assert got["verdict"] == "dropped"
    moved = [(r["counter"], r["delta"]) for r in got["moved"]["drop"]]
    assert moved == [("q5_dropped_bytes", 11321730380), ("q5_dropped_packets", 1263665)]


def os10_judge(after, priority=3):
    """The hosts' recorded pair (the NIC paused on priority 3, no drop) with the OS10 port read before and ``after``."""
    from test_load_counters_nos import host_reads  # noqa: E402 (pytest puts this directory on sys.path)
    before_r, after_r = host_reads()
    before_r["tor_queuing"], after_r["tor_queuing"] = os10_read(raw(OS10_CLEARED)), os10_read(after)
    return load_verdict(before_r, after_r, priorities=[priority], port=OS10_PORT)["classes"][0]


def test_os10_control_only_the_class_s_packets_moved_is_lossless():
    got = os10_judge(os10_row(raw(OS10_CLEARED), 3, 1, "5000"))
    assert got["verdict"] == "lossless_under_load", got["message"]
    assert got["moved"]["drop"] == [] and got["not_reported"] == []


@pytest.mark.parametrize("column", [3, 4])
def test_os10_only_the_class_s_dropped_column_moved_is_dropped(column):
    got = os10_judge(os10_row(raw(OS10_CLEARED), 3, column, "12"))
    assert got["verdict"] == "dropped"
    assert [r["counter"] for r in got["moved"]["drop"]] == [["q3_dropped_packets", "q3_dropped_bytes"][column - 3]]


def test_os10_another_queue_s_drop_does_not_judge_the_class():
    got = os10_judge(raw(OS10_AFTER))  # queue 5 dropped; the class is priority 3, queue 3
    assert got["verdict"] == "lossless_under_load", got["message"]


def test_os10_an_error_or_another_port_s_output_is_a_problem_never_a_clean_port():
    facts = os10_read("% Error: Invalid input detected at '^' marker.\n")
    assert facts["ports"] == {} and "no queue table" in facts["problems"][-1]
    other = os10_read(raw(OS10_AFTER).replace("ethernet1/1/4", "ethernet1/1/9"))
    assert other["ports"] == {} and other["problems"] == [
        "os10_queuing: the output is of ethernet1/1/9, not of ethernet1/1/4"]


# ---- Cisco NX-OS PFC watchdog: show queuing pfc-queue detail (a receiver's test fixture, ORIGIN.md) ---------------

def pfcwd_row(text, label, value):
    """``text`` with the row ``label`` set to ``value`` (the fixture's column widths kept)."""
    old = next(line for line in text.splitlines() if line.split("|")[1:2] == [label.rjust(31)])
    new = "|%s|%s|" % (label.rjust(31), str(value).rjust(20))
    assert text.count(old) == 1
    return text.replace(old, new)


def pfcwd_judge(after, priority=3):
    """The hosts' recorded pair (the NIC paused on priority 3, no drop) with the switch's watchdog read before (the
    fixture) and ``after``."""
    from test_load_counters_nos import host_reads  # noqa: E402 (pytest puts this directory on sys.path)
    before_r, after_r = host_reads()
    before_r["tor_pfcwd"] = parse_counters(raw(PFCWD_NXOS), "nxos_pfcwd", port="Ethernet1/23")
    after_r["tor_pfcwd"] = parse_counters(after, "nxos_pfcwd", port="Ethernet1/23")
    return load_verdict(before_r, after_r, priorities=[priority], port="Ethernet1/23")["classes"][0]


def test_nxos_pfcwd_fixture_reads_every_row_of_the_qos_group_box():
    facts = parse_counters(raw(PFCWD_NXOS), "nxos_pfcwd")
    assert facts["problems"] == []
    assert facts["ports"] == {"Ethernet1/23": {
        "qg3_shutdown": 1, "qg3_restored": 2, "qg3_total_pkts_drained": 3, "qg3_total_pkts_dropped": 4,
        "qg3_total_pkts_drained_dropped": 5, "qg3_aggregate_pkts_dropped": 6, "qg3_total_ingress_pkts_dropped": 1924,
        "qg3_aggregate_ingress_pkts_dropped": 1925}}
    assert describe("nxos_pfcwd", "qg3_shutdown") == {"fact": "pause_storm", "priority": None, "queue": 3,
                                                      "width": None, "direction": None}
    assert describe("nxos_pfcwd", "qg3_aggregate_ingress_pkts_dropped")["fact"] == "drop"
    assert describe("nxos_pfcwd", "qg3_restored")["fact"] == "info"


def test_nxos_pfcwd_control_only_a_restore_moved_is_lossless():
    got = pfcwd_judge(pfcwd_row(raw(PFCWD_NXOS), "Restored", 3))
    assert got["verdict"] == "lossless_under_load", got["message"]
    assert got["moved"]["storm"] == [] and got["moved"]["drop"] == []


def test_nxos_pfcwd_only_a_shutdown_is_a_pause_storm():
    got = pfcwd_judge(pfcwd_row(raw(PFCWD_NXOS), "Shutdown", 2))
    assert got["verdict"] == "pause_storm"
    assert [(r["counter"], r["delta"]) for r in got["moved"]["storm"]] == [("qg3_shutdown", 1)]


@pytest.mark.parametrize("label, counter", [
    ("Total pkts drained", "qg3_total_pkts_drained"),
    ("Aggregate pkts dropped", "qg3_aggregate_pkts_dropped"),
    ("Aggregate Ingress pkts dropped", "qg3_aggregate_ingress_pkts_dropped"),
])
def test_nxos_pfcwd_only_one_watchdog_drop_moved_is_dropped(label, counter):
    text = raw(PFCWD_NXOS)
    value = parse_counters(text, "nxos_pfcwd")["ports"]["Ethernet1/23"][counter]
    got = pfcwd_judge(pfcwd_row(text, label, value + 50))
    assert got["verdict"] == "dropped"
    assert [(r["counter"], r["delta"]) for r in got["moved"]["drop"]] == [(counter, 50)]


def test_nxos_pfcwd_another_qos_group_s_storm_does_not_judge_priority_3():
    before = raw(PFCWD_NXOS).replace("QOS GROUP 3 ", "QOS GROUP 4 ")
    after = pfcwd_row(before, "Shutdown", 5)
    from test_load_counters_nos import host_reads  # noqa: E402
    before_r, after_r = host_reads()
    before_r["tor_pfcwd"] = parse_counters(before, "nxos_pfcwd", port="Ethernet1/23")
    after_r["tor_pfcwd"] = parse_counters(after, "nxos_pfcwd", port="Ethernet1/23")
    got = load_verdict(before_r, after_r, priorities=[3], port="Ethernet1/23")["classes"][0]
    assert got["verdict"] == "lossless_under_load", got["message"]


def test_nxos_pfcwd_a_port_it_does_not_watch_is_not_reported_never_zero():
    facts = parse_counters(raw(PFCWD_NXOS), "nxos_pfcwd", port="Ethernet1/51")
    assert facts["ports"] == {} and "port Ethernet1/51 is not in the output" in facts["problems"][0]
    unwatched = "\n".join(raw(PFCWD_NXOS).splitlines()[:3]) + "\n"  # the port's lines, no QOS GROUP box
    facts = parse_counters(unwatched, "nxos_pfcwd", port="Ethernet1/23")
    assert facts["ports"] == {} and facts["problems"]
