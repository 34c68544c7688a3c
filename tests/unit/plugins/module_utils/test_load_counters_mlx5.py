# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``ethtool -S`` of mlx5 across ConnectX generations (data/counters/ORIGIN.md): which counters each name set has,
the verdict on each, and a 32-bit wrap and a driver reload on the ConnectX-7 layout."""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import describe, parse_counters
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import load_verdict
from test_load_counters import edit, text  # noqa: E402 (pytest puts this directory on sys.path)

PER_HOST = re.compile(r"^rx_prio\d_(buf_discard|cong_discard|marked)$")
STORM = {"tx_pause_storm_warning_events", "tx_pause_storm_error_events"}


def nic(name):
    facts = parse_counters(text(name), "ethtool_mlx5", port="ens1f0np0")
    assert facts["problems"] == [], facts["problems"]
    return facts


def judge(before, after, **kw):
    kw.setdefault("profile", "nvidia")
    kw.setdefault("seconds", 10)
    before = nic(before) if isinstance(before, str) and before.endswith(".txt") else before
    return load_verdict({"nic": before}, {"nic": after}, **kw)


def names(name):
    return set(nic(name)["ports"]["ens1f0np0"])


def test_connectx4_lx_has_no_per_host_discards_and_no_storm_counters():
    counters = parse_counters(text("ethtool-cx4lx.txt"), "ethtool_mlx5")["ports"]["port"]
    assert not [n for n in counters if PER_HOST.match(n)] and not STORM & set(counters)


def test_connectx5_has_storm_counters_but_no_per_host_discards():
    counters = names("ethtool-cx5-after.txt")
    assert STORM <= counters
    assert not [n for n in counters if PER_HOST.match(n)]
    # PFC on priority 3 only: the pause counters of no other priority are printed (not reported, never 0)
    assert {n for n in counters if re.match(r"^(rx|tx)_prio\d_pause$", n)} == {"rx_prio3_pause", "tx_prio3_pause"}
    assert "rx_err_lane_0_phy" not in counters


def test_connectx7_multihost_has_per_host_discards_for_every_priority_and_lane_errors():
    counters = names("ethtool-cx7-multihost-after.txt")
    assert len([n for n in counters if PER_HOST.match(n)]) == 8 * 3
    assert STORM <= counters
    assert {"rx_err_lane_%d_phy" % lane for lane in range(8)} <= counters
    assert describe("ethtool_mlx5", "rx_prio3_buf_discard") == {
        "fact": "drop", "priority": 3, "queue": None, "width": 64, "direction": None}
    assert describe("ethtool_mlx5", "rx_prio3_marked")["fact"] == "info"  # the NIC's own marking, not DCQCN's
    assert describe("ethtool_mlx5", "rx_pcs_symbol_err_phy")["fact"] == "drop"


def test_each_generation_alone_shows_congestion_and_no_drop():
    for pair, paused in (("cx5", ["rx_prio3_pause"]), ("cx7-multihost", ["rx_prio3_pause", "tx_prio3_pause"])):
        before, after = "ethtool-%s-before.txt" % pair, "ethtool-%s-after.txt" % pair
        result = judge(before, nic(after))
        klass = result["classes"][0]
        assert result["verdict"] == "lossless_under_load", (pair, klass["message"])
        assert [r["counter"] for r in klass["moved"]["pause"]] == paused
    cx5 = judge("ethtool-cx5-before.txt", nic("ethtool-cx5-after.txt"))["classes"][0]
    assert "host NIC ens1f0np0 rx_prio3_pause +3,710" in cx5["message"]


def test_connectx7_a_per_host_buffer_discard_of_the_class_is_dropped():
    after = parse_counters(edit(text("ethtool-cx7-multihost-after.txt"), "rx_prio3_buf_discard", 17),
                           "ethtool_mlx5", port="ens1f0np0")
    result = judge("ethtool-cx7-multihost-before.txt", after)
    assert result["verdict"] == "dropped"
    assert result["classes"][0]["message"] == ("Priority 3 dropped under load: host NIC ens1f0np0 "
                                               "rx_prio3_buf_discard +17.")


def test_connectx7_a_buffer_discard_of_another_priority_is_not_the_class():
    after = parse_counters(edit(text("ethtool-cx7-multihost-after.txt"), "rx_prio0_buf_discard", 17),
                           "ethtool_mlx5", port="ens1f0np0")
    assert judge("ethtool-cx7-multihost-before.txt", after)["verdict"] == "lossless_under_load"


def test_connectx7_rx_out_of_buffer_wraps_through_32_bits():
    # before: 4,294,967,001 (295 below 2**32); after: 90, everything else counting up: 385 drops, not a reset
    after = parse_counters(edit(text("ethtool-cx7-multihost-after.txt"), "rx_out_of_buffer", 90),
                           "ethtool_mlx5", port="ens1f0np0")
    result = judge("ethtool-cx7-multihost-before.txt", after)
    record = next(r for r in result["counters"] if r["counter"] == "rx_out_of_buffer")
    assert (record["delta"], record["state"]) == (385, "wrapped")
    assert result["verdict"] == "dropped"
    assert "host NIC ens1f0np0 rx_out_of_buffer +385 (wrapped)" in result["classes"][0]["message"]


def test_connectx7_driver_reload_between_the_reads_is_a_reset_never_a_negative_delta():
    reloaded = nic("ethtool-cx7-multihost-reloaded.txt")
    result = judge("ethtool-cx7-multihost-after.txt", reloaded)
    records = {r["counter"]: r for r in result["counters"]}
    assert records["rx_prio3_pause"]["state"] == "reset" and records["rx_prio3_pause"]["delta"] is None
    # the 32-bit counter also went down, but in a read that was reset: a reset too, not a wrap
    assert records["rx_out_of_buffer"]["state"] == "reset"
    assert all(r["delta"] is None or r["delta"] >= 0 for r in result["counters"])
    assert result["verdict"] == "inconclusive"
    assert "counters were reset between the reads" in result["classes"][0]["message"]
