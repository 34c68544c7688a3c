# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Field review of issue 40 (every drop a switch counts is read; no API reads an unread stage as agree), checked
against the programs on the other side: sonic-net/sonic-utilities 691b1bbc4fd2 (``pfcwd/main.py``,
``scripts/pg-drop``, ``scripts/pfcstat``, ``scripts/queuestat``, ``utilities_common/netstat.py``,
``utilities_common/cli.py`` ``UserCache``) and sonic-net/sonic-swss e6b0c5b5d2ab (``orchagent/pfcactionhandler.cpp``,
``pfcwdsworch.cpp``). docs/reviews/40-counters.md has each finding with its oracle.

Samples: data/counters/review40 (its ORIGIN.md: the SONiC tables are printed by sonic-utilities' own ``tabulate``
calls from COUNTERS_DB contents that the orchagent code above writes). Each case changes one stage and has a
control. A defect is ``xfail(strict=True)``: it passes once the lead fixes it, and then must be flipped."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.ainet.fabric.plugins.filter.qos import FilterModule
from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import COUNTERS, describe, parse_counters
from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_check import lossless_check
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import ROLES, load_verdict, role_evidence
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse import parse_qos
from ansible_collections.ainet.fabric.plugins.module_utils.tor import nos_sonic
from test_load_counters import reads, text  # noqa: E402 (pytest puts this directory on sys.path)

try:  # Python 3.11 on: the regex parser's own modules (sre_parse and sre_constants are deprecated aliases)
    from re import _constants as sre_constants, _parser as sre_parse  # pylint: disable=no-name-in-module
except ImportError:  # pragma: no cover
    import sre_constants  # pylint: disable=deprecated-module
    import sre_parse  # pylint: disable=deprecated-module

HERE = os.path.dirname(__file__)
REVIEW = os.path.join(HERE, "data", "counters", "review40")
RECORDED = os.path.join(HERE, "data", "counters", "recorded")
QOS = os.path.join(HERE, "data", "qos")
FILTERS = FilterModule().filters()


def sample(name, where=REVIEW):
    with open(os.path.join(where, name), newline="") as handle:
        return handle.read()


def mailed(name):
    """A mailed sample as the mail client sent it: CRLF line ends (kept as LF in the repository, whose sanity test
    refuses CRLF files; see ORIGIN.md)."""
    return sample(name).replace("\n", "\r\n")


def with_tor_read(name, fmt, before, after, role=None, priorities=None):
    """The recorded SONiC link of test_load_counters (Ethernet8: the host NIC paused, switch pfc3_tx moved, queues
    clean: lossless_under_load) with one more ToR read ``name`` in format ``fmt``."""
    reads_b, reads_a = reads()
    reads_b[name], reads_a[name] = parse_counters(before, fmt), parse_counters(after, fmt)
    opts = {"priorities": priorities} if priorities else {"profile": "nvidia"}
    return load_verdict(reads_b, reads_a, port="Ethernet8", seconds=10, role=role, **opts)


# ---- SONiC `show pfcwd stats`: cumulative, and what it leaves out -------------------------------------------------

def test_pfcwd_columns_are_cumulative_and_a_storm_on_a_queue_with_history_is_judged():
    """Control (`-e` reads print every watched queue): Ethernet8:3, armed and never stormed, stormed during the run
    (orchagent initCounters: DEADLOCK_DETECTED 0 -> 1) -> pause_storm; the same read twice -> lossless."""
    before, after = sample("sonic-pfcwd-stats-e-before.txt"), sample("sonic-pfcwd-stats-e-after.txt")
    assert parse_counters(before, "sonic_pfcwd", port="Ethernet8")["ports"]["Ethernet8"]["q3_storm_detected"] == 0
    assert with_tor_read("tor_pfcwd", "sonic_pfcwd", before, after)["classes"][0]["verdict"] == "pause_storm"
    assert with_tor_read("tor_pfcwd", "sonic_pfcwd", before, before)["verdict"] == "lossless_under_load"


def test_pfcwd_first_storm_of_a_queue_during_the_run_is_a_pause_storm():
    before, after = sample("sonic-pfcwd-stats-before.txt"), sample("sonic-pfcwd-stats-after.txt")
    assert "Ethernet8" not in before and "Ethernet8:3" in after  # the real CLI's layout: the row appears with the storm
    got = with_tor_read("tor_pfcwd", "sonic_pfcwd", before, after)
    assert got["classes"][0]["verdict"] == "pause_storm", got["classes"][0]["message"]


def test_the_job_reads_every_watched_queue():
    assert dict(nos_sonic.COUNTER_COMMANDS)["sonic_pfcwd"] in (("show", "pfcwd", "stats", "-e"),
                                                               ("show", "pfcwd", "stats", "--empty"))


# ---- SONiC `show priority-group drop counters`: deltas from a per-user baseline, never clamped ------------------

def test_pg_drop_only_the_ingress_pg_dropped_while_egress_queues_are_clean_is_dropped():
    got = with_tor_read("tor_pg", "sonic_pg_drop", sample("sonic-pg-drop-before.txt"), sample("sonic-pg-drop-after.txt"))
    assert got["verdict"] == "dropped" and "pg3_drop_pkts +100" in got["classes"][0]["message"]
    control = with_tor_read("tor_pg", "sonic_pg_drop", sample("sonic-pg-drop-before.txt"),
                            sample("sonic-pg-drop-before.txt"))
    assert control["verdict"] == "lossless_under_load"


def test_pg_drop_a_clear_between_the_reads_is_a_reset_never_a_drop_or_lossless():
    """`sonic-clear priority-group drop counters` between the reads: pg-drop prints counter - new baseline (0 here),
    lower than before: a reset (64-bit), so the class cannot be judged."""
    before = sample("sonic-pg-drop-after.txt")  # 100 on Ethernet8 PG3 before the clear
    got = with_tor_read("tor_pg", "sonic_pg_drop", before, sample("sonic-pg-drop-before.txt"))
    assert got["verdict"] == "inconclusive" and "reset" in got["classes"][0]["message"]


def test_pg_drop_under_a_stale_baseline_still_judges_the_ingress_drop():
    before = sample("sonic-pg-drop-stale-baseline-before.txt")
    after = sample("sonic-pg-drop-stale-baseline-after.txt")
    assert "-13681484" in before and "-13681384" in after  # 100 drops during the run, printed below 0
    got = with_tor_read("tor_pg", "sonic_pg_drop", before, after)
    assert got["verdict"] != "lossless_under_load", got["classes"][0]["message"]


# ---- widths: a wrap only where the driver's counter is narrower than 64 bits ---------------------------------------

def _hw(when, **values):
    raw = text("hw_counters-mlx5-%s.txt" % when)
    for name, value in values.items():
        raw, n = re.subn(r"(?m)^(\S*/%s:)\d+$" % name, lambda m, v=value: m.group(1) + str(v), raw)
        assert n == 1, name
    return raw


def _rdma_verdict(before, after):
    reads_b, reads_a = reads(rdma_b=before), reads(rdma_a=after)
    return load_verdict(reads_b[0], reads_a[1], profile="nvidia", port="Ethernet8", seconds=10)


def test_a_32_bit_q_counter_wrapped_while_a_sibling_counted_is_its_delta_through_the_top():
    got = _rdma_verdict(_hw("before", out_of_sequence=(1 << 32) - 6, rx_write_requests=412),
                        _hw("after", out_of_sequence=5, rx_write_requests=900))
    record = next(r for r in got["counters"] if r["counter"] == "out_of_sequence")
    assert (record["state"], record["delta"]) == ("wrapped", 11) and got["verdict"] == "lost"


def _reloaded(raw):
    """``raw`` after a driver reload: every counter of the hw_counters directory back at 0, except ``lifespan``, which
    is not a counter but the stats cache's lifetime in ms (drivers/infiniband/core/sysfs.c show_stats_lifespan, a
    0644 setting of the same directory), unchanged."""
    return re.sub(r"(?m)^(\S*/(\w+):)(\d+)$", lambda m: m.group(0) if m.group(2) == "lifespan" else m.group(1) + "0", raw)


def test_a_real_reset_with_a_64_bit_sibling_that_went_down_is_never_a_wrap():
    before = _hw("before", out_of_sequence=7, rx_write_requests=412)  # rp_cnp_handled 40,211 as recorded
    got = _rdma_verdict(before, _reloaded(before))
    states = dict((r["counter"], r["state"]) for r in got["counters"] if r["read"] == "rdma" and r["before"])
    assert states["out_of_sequence"] == states["rp_cnp_handled"] == "reset" and got["verdict"] == "inconclusive"


def test_a_driver_reload_with_only_32_bit_counters_nonzero_is_a_reset_not_a_wrap():
    before = _hw("before", out_of_sequence=7, rx_write_requests=412, rp_cnp_handled=0)
    got = _rdma_verdict(before, _reloaded(before))
    record = next(r for r in got["counters"] if r["read"] == "rdma" and r["counter"] == "out_of_sequence")
    assert (record["state"], record["delta"]) == ("reset", None), record
    assert got["verdict"] != "lost"


def test_sai_and_orchagent_counters_are_64_bit_never_wrapped():
    for fmt, name in (("sonic_pfc", "pfc3_rx_pkts"), ("sonic_queue", "uc3_drop_pkts"), ("sonic_pfcwd", "q3_tx_drop"),
                      ("sonic_pfcwd", "q3_storm_detected"), ("sonic_pg_drop", "pg3_drop_pkts")):
        assert describe(fmt, name)["width"] == 64, (fmt, name)


def test_mlx5_link_down_events_phy_is_32_bit():
    assert describe("ethtool_mlx5", "link_down_events_phy")["width"] == 32


# ---- ROLE_CONGESTION: every pause, ECN and CNP counter of every format is one role's evidence ---------------------

def _names(pattern):
    """Every name ``pattern`` (a COUNTERS row) accepts, each alternative taken once, a digit class as its first
    value, ``.*`` as ``x``: enough names to reach every branch of the row."""
    def walk(items):
        out = [""]
        for op, arg in items:
            if op == sre_constants.LITERAL:
                choices = [chr(arg)]
            elif op == sre_constants.IN:
                choices = [_first(arg)]
            elif op == sre_constants.ANY:
                choices = ["x"]
            elif op == sre_constants.BRANCH:
                choices = [n for branch in arg[1] for n in walk(branch)]
            elif op == sre_constants.SUBPATTERN:
                choices = walk(arg[-1])
            elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
                low, _high, body = arg
                choices = [n * max(low, 1) for n in walk(body)] + ([""] if low == 0 else [])
            else:
                raise AssertionError("cannot sample %s in %r" % (op, pattern))
            out = [a + b for a in out for b in choices]
        return out
    return walk(sre_parse.parse(pattern))


def _first(items):
    for op, arg in items:
        if op == sre_constants.LITERAL:
            return chr(arg)
        if op == sre_constants.RANGE:
            return chr(arg[0] + 3 if arg[1] - arg[0] >= 3 else arg[0])
        if op == sre_constants.CATEGORY:
            return "3"
    raise AssertionError(items)


def _congestion_names():
    out = []
    for fmt, rows in sorted(COUNTERS.items()):
        for pattern, fact, _direction, _width in rows:
            if fact not in ("pfc_pause", "ecn_mark", "cnp"):
                continue
            for name in _names(pattern):
                if describe(fmt, name)["fact"] != fact:
                    continue  # an earlier row of the format takes the name (COUNTERS is first match)
                # NVUE's (rx|tx)-stats.(rx|tx)-... rows: a name mixing the two directions is not one NVUE prints
                if re.match(r"^(rx-stats\.tx-|tx-stats\.rx-)", name):
                    continue
                out.append((fmt, name))
    return sorted(set(out))


def test_the_sampler_reaches_every_congestion_row():
    names = _congestion_names()
    assert ("ethtool_mlx5", "tx_prio3_pause") in names and ("nvue_roce", "tx-stats.tx-cnp-stats.cnp-packets") in names
    rows = [(fmt, pattern) for fmt, table in COUNTERS.items() for pattern, fact, _d, _w in table
            if fact in ("pfc_pause", "ecn_mark", "cnp")]
    reached = {(fmt, pattern) for fmt, pattern in rows
               if any(f == fmt and re.match("^(?:%s)$" % pattern, n) for f, n in names)}
    assert reached == set(rows)


@pytest.mark.parametrize("fmt, name", _congestion_names())
def test_every_pause_ecn_and_cnp_counter_of_every_format_is_exactly_one_role_s_evidence(fmt, name):
    assert [role for role in ROLES if role_evidence({"counter": name}, role)] in (["receiver"], ["sender"]), (fmt, name)


# ---- NX-OS: one priority paused only ------------------------------------------------------------------------------

def _nxos(after, role):
    host_b, host_a = reads()  # the host's recorded reads, the before twice: nothing moved on the host
    before = {"nic": host_b["nic"], "rdma": host_b["rdma"],
              "tor_pfc": parse_counters(sample("nxos-pfc-detail-before.txt"), "nxos_pfc")}
    moved = {"nic": host_b["nic"], "rdma": host_b["rdma"], "tor_pfc": parse_counters(sample(after), "nxos_pfc")}
    del host_a
    return load_verdict(before, moved, priorities=[3], port="Ethernet1/51", role=role)["classes"][0]


def test_nxos_only_priority_3_paused_by_the_receiver_is_its_congestion_and_never_a_sender_s():
    got = _nxos("nxos-pfc-detail-after-prio3-rx.txt", "receiver")
    assert got["verdict"] == "lossless_under_load" and "pfc3_rx_frames +12,345" in got["message"]
    sender = _nxos("nxos-pfc-detail-after-prio3-rx.txt", "sender")
    assert sender["verdict"] == "inconclusive" and [r["counter"] for r in sender["other_way"]] == ["pfc3_rx_frames"]
    control = _nxos("nxos-pfc-detail-before.txt", "receiver")
    assert control["verdict"] == "inconclusive" and "No congestion" in control["message"]


def test_nxos_another_priority_paused_is_not_priority_3_s():
    got = _nxos("nxos-pfc-detail-after-prio5-rx.txt", "receiver")
    assert got["verdict"] == "inconclusive" and got["moved"]["pause"] == []


# ---- a pasted read: prompt, CRLF, "> " quoting and lines broken at 72 columns --------------------------------------

def test_os10_queuing_mailed_with_its_prompt_reads_as_recorded():
    text = mailed("os10-queuing-hound-dirt-cubic-mailed.txt")
    assert "\r\n> Dropped-Bytes\r\n" in text  # the header broke at 72 columns
    got = parse_counters(text, "os10_queuing", port="ethernet1/1/4")
    recorded = parse_counters(sample("os10-queuing-hound-dirt-cubic-netdev-2022.txt", RECORDED), "os10_queuing",
                              port="ethernet1/1/4")
    assert got == recorded and got["ports"]["ethernet1/1/4"]["q5_dropped_packets"] == 1263665


def test_pfcwd_stats_mailed_with_its_prompt_reads_as_printed():
    got = parse_counters(mailed("sonic-pfcwd-stats-after-mailed.txt"), "sonic_pfcwd")
    assert got == parse_counters(sample("sonic-pfcwd-stats-after.txt"), "sonic_pfcwd")


# ---- an unread lossless stage, through the filters ------------------------------------------------------------------

HOST = {"trust": "dscp", "dscp_to_priority": {26: 5, 48: 6}, "pfc": [5], "ecn_rp": [5], "ecn_np": [5],
        "cnp_priority": 6, "cnp_dscp": 48,
        "ets": dict((q, {"mode": "strict"} if q == 6 else {"mode": "ets", "weight": 50 if q in (0, 5) else 0})
                    for q in range(8)),
        "priority_to_queue": dict((p, p) for p in range(8)), "mtu": 9000, "roce_tos": 106, "traffic_class": 106,
        "buffer_lossless": [5], "dcbx": "OS controlled"}


def _nxos_config(partial=False, mode_line=True):
    with open(os.path.join(QOS, "nxos", "roce_pipeline_qos_group.cfg")) as handle:
        cfg = handle.read()
    if not mode_line:
        cfg = cfg.replace("  priority-flow-control mode on\n", "")
    if partial:
        cfg = cfg.replace("!Command: show running-config\n", "!Command: show running-config ipqos\n")
    return parse_qos(cfg, "nxos")


def test_nxos_control_the_whole_config_agrees_and_its_default_mode_auto_disagrees():
    assert FILTERS["lossless_diff"](HOST, _nxos_config(), port="Ethernet1/51") == []
    codes = [f["code"] for f in FILTERS["lossless_diff"](HOST, _nxos_config(mode_line=False), port="Ethernet1/51")]
    assert codes == ["pfc_not_negotiated"]


def test_nxos_partial_config_without_the_port_s_pfc_mode_is_not_agree():
    facts = _nxos_config(partial=True, mode_line=False)
    assert facts["ports"]["Ethernet1/51"]["pfc_mode"] is None and facts["ports"]["Ethernet1/51"]["pfc"] == [5]
    assert FILTERS["lossless_diff"](HOST, facts, port="Ethernet1/51") != []
    assert lossless_check(HOST, facts, "Ethernet1/51")["verdict"] != "agree"


@pytest.mark.parametrize("host, switch", [
    (dict(HOST, pfc=None), None),                      # the host's PFC read failed
    (HOST, {"format": "nxos", "ports": {}, "problems": ["could not fetch"]}),  # the ToR's config was not read
    (HOST, None),
])
def test_an_unread_stage_is_never_an_empty_diff_nor_agree(host, switch):
    switch = _nxos_config() if switch is None and host is not HOST else switch
    port = "Ethernet1/51" if switch and switch.get("ports") else None
    diff = FILTERS["lossless_diff"](host, switch, port=port)
    assert diff and any(f["code"] == "unchecked" for f in diff)
    assert FILTERS["lossless_check"](host, switch, port=port)["verdict"] == "unchecked"


def test_a_port_not_in_the_facts_is_one_line_not_an_empty_diff():
    with pytest.raises(Exception, match="port Ethernet1/99 is not in the nxos facts"):
        FILTERS["lossless_diff"](HOST, _nxos_config(), port="Ethernet1/99")


# ---- a ToR stage that was not read, in the load verdict ----------------------------------------------------------

PG_DROP_DISABLED = "Warning: PG counters are disabled. Use 'counterpoll pg-drop enable' to enable polling\n"


def test_an_unread_ingress_pg_stage_is_not_lossless_under_load(tmp_path):
    """Through the job's own judging (fleet/incast_results.judge), whose ToR reads are {format: text}: the control
    (the recorded SONiC pair with a pg-drop table) is lossless; the same with the pg-drop read disabled must not be."""
    from test_incast_results import run_of, tor
    with_pg = dict(tor("before"), sonic_pg_drop=sample("sonic-pg-drop-before.txt"))
    control = run_of(tmp_path / "c", tor_b=with_pg, tor_a=dict(tor("after"), sonic_pg_drop=sample("sonic-pg-drop-before.txt")))
    assert control["verdict"]["verdict"] == "lossless_under_load", control["verdict"]["classes"][0]["message"]
    got = run_of(tmp_path / "d", tor_b=dict(tor("before"), sonic_pg_drop=PG_DROP_DISABLED),
                 tor_a=dict(tor("after"), sonic_pg_drop=PG_DROP_DISABLED))
    assert any("PG counters are disabled" in p for p in got["verdict"]["problems"])
    assert got["verdict"]["verdict"] != "lossless_under_load", got["verdict"]["classes"][0]["message"]


# ---- the per-NOS table lists every drop and pause counter ---------------------------------------------------------

def test_the_sonic_table_names_every_pause_and_drop_counter_the_cli_prints():
    with open(os.path.join(HERE, "..", "..", "..", "..", "docs", "lossless-qos.md")) as handle:
        doc = handle.read()
    section = doc[doc.index("### Every drop and pause counter, per NOS"):doc.index("**NVIDIA Cumulus Linux (NVUE)**")]
    for needle in ("show pfc counters --history", "TrimDrop", "--voq"):
        assert needle in section, needle


# ---- the fixes' controls: what the new rules must not claim ---------------------------------------------------------

def test_pfcwd_a_failed_read_before_is_never_taken_for_a_table_of_zeros():
    """D1's rule (a row absent from a read that printed its table was 0) needs the table: an error in its place
    leaves the storm not reported, never counted from 0."""
    failed = "show pfcwd stats failed (rc 2): Error: No such command \"pfcwd\"."
    got = with_tor_read("tor_pfcwd", "sonic_pfcwd", failed, sample("sonic-pfcwd-stats-after.txt"))
    storm = next(r for r in got["counters"] if r["counter"] == "q3_storm_detected" and r["read"] == "tor_pfcwd")
    assert (storm["before"], storm["state"]) == (None, "not_reported") and got["classes"][0]["verdict"] != "pause_storm"


def test_pg_drop_below_zero_is_named_and_a_read_that_goes_lower_is_a_reset():
    before = sample("sonic-pg-drop-stale-baseline-before.txt")
    facts = parse_counters(before, "sonic_pg_drop", port="Ethernet8")
    assert facts["ports"]["Ethernet8"]["pg3_drop_pkts"] == -13681484
    assert any("below 0" in p and "baseline" in p for p in facts["problems"])
    assert parse_counters(sample("sonic-pg-drop-before.txt"), "sonic_pg_drop")["problems"] == []  # control
    got = with_tor_read("tor_pg", "sonic_pg_drop", sample("sonic-pg-drop-before.txt"), before)
    assert got["verdict"] == "inconclusive" and "reset" in got["classes"][0]["message"]


def test_an_unread_pg_stage_through_the_filter_s_own_judging_is_inconclusive_and_a_drop_elsewhere_still_decides():
    """load_verdict alone (the filter): the pg-drop warning both times is an unread drop stage, named with how to
    read it; the control (the table read) is lossless; a drop elsewhere (the egress queue) still decides dropped."""
    got = with_tor_read("tor_pg", "sonic_pg_drop", PG_DROP_DISABLED, PG_DROP_DISABLED)
    assert got["verdict"] == "inconclusive" and "counterpoll pg-drop enable" in got["classes"][0]["message"]
    assert [line.split(" ")[0] for line in got["classes"][0]["unread"]] == ["tor_pg"]
    control = with_tor_read("tor_pg", "sonic_pg_drop", sample("sonic-pg-drop-before.txt"),
                            sample("sonic-pg-drop-before.txt"))
    assert control["verdict"] == "lossless_under_load" and control["classes"][0]["unread"] == []
    reads_b, reads_a = reads()
    reads_b["tor_pg"] = reads_a["tor_pg"] = parse_counters(PG_DROP_DISABLED, "sonic_pg_drop")
    reads_b["tor_pg_2"] = parse_counters(sample("sonic-pg-drop-before.txt"), "sonic_pg_drop")
    reads_a["tor_pg_2"] = parse_counters(sample("sonic-pg-drop-after.txt"), "sonic_pg_drop")
    dropped = load_verdict(reads_b, reads_a, port="Ethernet8", seconds=10, profile="nvidia")
    assert dropped["verdict"] == "dropped" and "Not read (drop stages): tor_pg" in dropped["classes"][0]["message"]


def test_a_linux_tor_port_whose_ethtool_prints_no_class_counters_was_read_and_a_failed_ethtool_was_not():
    """A veth of a software bridge: `ethtool -S` succeeds and prints no tc_ counter (the port has no per-class
    discard stage; its drops are the qdisc's and the link's): not an unread stage. ethtool failing is one."""
    from test_load_counters_linux import reads as linux_reads
    veth = "NIC statistics:\n     peer_ifindex: 7\n     rx_queue_0_xdp_packets: 0\n"
    failed = "ethtool -S swp2 failed (rc 94): no stats available"
    for output, unread in ((veth, False), (failed, True)):
        before, after = linux_reads("before"), linux_reads("after")
        before["tor_ethtool"] = parse_counters({"swp2": output}, "linux_ethtool", port="swp2")
        after["tor_ethtool"] = parse_counters({"swp2": output}, "linux_ethtool", port="swp2")
        got = load_verdict(before, after, profile="nvidia", port="swp2", priorities=[3])["classes"][0]
        assert bool(got["unread"]) is unread and got["verdict"] == "inconclusive", got


def test_a_tor_whose_read_failed_leaves_the_class_inconclusive_and_one_never_read_is_judged_from_the_hosts(tmp_path):
    """The whole ToR read tried and failed (unreachable) is every drop stage of it unread; a ToR that is not read at
    all (no tor_error: not an inventory host) is judged from the hosts' counters alone, as before."""
    from test_incast_results import INCAST, NVIDIA, host_read, run_of
    from ansible_collections.ainet.fabric.plugins.module_utils.fleet import incast_results
    control = run_of(tmp_path / "c")
    assert control["verdict"]["verdict"] == "lossless_under_load", control["verdict"]["classes"][0]["message"]
    senders = {"gpu02": {"interface": INCAST["interface"], "before": host_read(tmp_path / "s", "before"),
                         "after": host_read(tmp_path / "s", "after")}}
    args = (INCAST, 3, 1, 10, NVIDIA, host_read(tmp_path / "b", "before"), host_read(tmp_path / "a", "after"))
    alone = incast_results.judge(*args, senders=senders)
    failed = incast_results.judge(*args, senders=senders, tor_error="ToR leaf1 could not be reached")
    assert alone["verdict"]["classes"][0]["unread"] == [] and alone["verdict"]["verdict"] == "lossless_under_load"
    got = failed["verdict"]["classes"][0]
    assert got["verdict"] == "inconclusive" and "ToR leaf1 could not be reached" in got["message"], got["message"]


def test_each_nos_declares_exactly_its_reads_that_count_drops_as_drop_stages():
    from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import drop_stage
    from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms
    for name, module in platforms.PLATFORMS.items():
        formats = {fmt for fmt, _command in getattr(module, "COUNTER_COMMANDS", ())}
        assert set(getattr(module, "DROP_STAGES", {})) == {fmt for fmt in formats if drop_stage(fmt)}, name
    assert "sonic_pg_drop" in platforms.drop_stages() and "sonic_pfc" not in platforms.drop_stages()  # control
