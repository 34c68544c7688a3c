# -*- coding: utf-8 -*-
"""Wrap or reset (issue 40): a counter that went down is a wrap only by its width (COUNTERS, from the driver) and
the rest of its read, never by a fixed bound. Recorded ConnectX-7 reads (data/counters/ORIGIN.md), one value edited
per case; ``rx_out_of_buffer`` is the 32-bit Q counter (en_stats.c MLX5E_READ_CTR32), ``rx_discards_phy`` and the
``*_phy`` siblings 64-bit PPCNT counters."""
from __future__ import annotations

import os
import re

from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import describe, parse_counters
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import counter_delta, load_verdict, read_deltas

DATA = os.path.join(os.path.dirname(__file__), "data", "counters")
TOP = 1 << 32


def text(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def edit(raw, counter, value):
    out, n = re.subn(r"(?m)^(\s*%s:\s*)\d+$" % re.escape(counter), lambda m: m.group(1) + str(value), raw)
    assert n == 1, counter
    return out


def records(before, after):
    b, a = parse_counters(before, "ethtool_mlx5"), parse_counters(after, "ethtool_mlx5")
    return dict((r["counter"], r) for r in read_deltas("nic", b, a, "port"))


def test_the_widths_come_from_the_driver():
    assert describe("ethtool_mlx5", "rx_out_of_buffer")["width"] == 32
    assert describe("ethtool_mlx5", "rx_discards_phy")["width"] == 64


def test_a_wrap_above_two_to_the_31_with_siblings_that_kept_counting_is_a_wrap():
    # the wrapped delta (3,294,967,301) is above 2**31: the old fixed bound called it a reset although every
    # sibling of the read kept counting
    before = edit(text("ethtool-cx7-multihost-before.txt"), "rx_out_of_buffer", 1000000000)
    after = edit(text("ethtool-cx7-multihost-after.txt"), "rx_out_of_buffer", 5)
    got = records(before, after)["rx_out_of_buffer"]
    assert (got["state"], got["delta"]) == ("wrapped", 5 + TOP - 1000000000)
    assert got["delta"] > 1 << 31
    assert records(before, after)["rx_packets_phy"]["state"] == "counted"  # the sibling that shows it


def test_the_control_without_a_decrease_is_counted():
    before = edit(text("ethtool-cx7-multihost-before.txt"), "rx_out_of_buffer", 5)
    after = edit(text("ethtool-cx7-multihost-after.txt"), "rx_out_of_buffer", 1000000000)
    got = records(before, after)["rx_out_of_buffer"]
    assert (got["state"], got["delta"]) == ("counted", 1000000000 - 5)


def test_a_real_reset_where_every_counter_went_down_is_a_reset_never_a_wrap():
    # a driver reload: every counter restarted; the 32-bit one's decrease is that reset too
    got = records(text("ethtool-cx7-multihost-after.txt"), text("ethtool-cx7-multihost-reloaded.txt"))
    assert got["rx_out_of_buffer"]["before"] > got["rx_out_of_buffer"]["after"]
    assert (got["rx_out_of_buffer"]["state"], got["rx_out_of_buffer"]["delta"]) == ("reset", None)
    assert not [r for r in got.values() if r["state"] == "wrapped"]


def test_a_64bit_counter_going_down_is_a_reset_never_a_wrap():
    before = edit(text("ethtool-cx7-multihost-before.txt"), "rx_discards_phy", 4294967290)
    after = edit(text("ethtool-cx7-multihost-after.txt"), "rx_discards_phy", 4)
    assert counter_delta(4294967290, 4, 64) == (None, "reset")
    got = records(before, after)
    assert (got["rx_discards_phy"]["state"], got["rx_discards_phy"]["delta"]) == ("reset", None)


def test_a_64bit_counter_that_went_down_makes_a_32bit_decrease_of_its_read_a_reset():
    before = edit(edit(text("ethtool-cx7-multihost-before.txt"), "rx_discards_phy", 100), "rx_out_of_buffer", 1000)
    after = edit(edit(text("ethtool-cx7-multihost-after.txt"), "rx_discards_phy", 4), "rx_out_of_buffer", 5)
    assert records(before, after)["rx_out_of_buffer"]["state"] == "reset"
    control = edit(text("ethtool-cx7-multihost-after.txt"), "rx_out_of_buffer", 5)
    assert records(before.replace("rx_discards_phy: 100", "rx_discards_phy: 0"), control)["rx_out_of_buffer"]["state"] \
        == "wrapped"


def test_a_32bit_counter_alone_in_its_read_is_a_reset():
    # nothing in the read shows it kept counting: a reset claims nothing, a wrap would invent a delta
    assert records("rx_out_of_buffer: 1000\n", "rx_out_of_buffer: 5\n")["rx_out_of_buffer"]["state"] == "reset"
    got = records("rx_out_of_buffer: 1000\nrx_packets_phy: 70\n", "rx_out_of_buffer: 5\nrx_packets_phy: 90\n")
    assert (got["rx_out_of_buffer"]["state"], got["rx_out_of_buffer"]["delta"]) == ("wrapped", 5 + TOP - 1000)


def test_a_wrapped_drop_counter_drops_the_class_and_a_reset_leaves_it_inconclusive():
    before = edit(text("ethtool-cx7-multihost-before.txt"), "rx_out_of_buffer", 1000000000)
    wrap = load_verdict({"nic": parse_counters(before, "ethtool_mlx5")},
                        {"nic": parse_counters(edit(text("ethtool-cx7-multihost-after.txt"), "rx_out_of_buffer", 5),
                                               "ethtool_mlx5")}, priorities=[3])
    assert wrap["verdict"] == "dropped" and "(wrapped)" in wrap["classes"][0]["message"]
    reset = load_verdict({"nic": parse_counters(text("ethtool-cx7-multihost-after.txt"), "ethtool_mlx5")},
                         {"nic": parse_counters(text("ethtool-cx7-multihost-reloaded.txt"), "ethtool_mlx5")},
                         priorities=[3])
    assert reset["verdict"] == "inconclusive" and "reset" in reset["classes"][0]["message"]
