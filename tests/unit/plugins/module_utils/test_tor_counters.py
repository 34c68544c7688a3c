# -*- coding: utf-8 -*-
"""The load test's ToR counter reads (tor/nos_sonic.py read_counters, tor/platforms.py): the commands run over the
switch's connection, what they print reaches the parsers as it is, and a failure names the command."""
from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import parse_counters
from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import PushError

DATA = os.path.join(os.path.dirname(__file__), "data", "counters")


def recorded(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def switch(outputs, ran):
    """A switch's connection, ``run(argv) -> (rc, out, err)``, printing the recorded outputs of its commands."""
    def run(argv, data=None):
        ran.append(" ".join(argv))
        return outputs.get(" ".join(argv), (127, "", "%s: command not found" % argv[0]))
    return run


def test_sonic_counters_are_read_with_its_show_commands_and_parse_per_port():
    ran = []
    outputs = {"show pfc counters": (0, recorded("sonic-pfc-after.txt"), ""),
               "show queue counters": (0, recorded("sonic-queue-after.txt"), "")}
    got = platforms.read_counters("sonic", "ssh", switch(outputs, ran))
    assert ran == ["show pfc counters", "show queue counters"]
    assert sorted(got) == ["sonic_pfc", "sonic_queue"]
    assert parse_counters(got["sonic_pfc"], "sonic_pfc", port="Ethernet8")["ports"]["Ethernet8"]["pfc3_tx_pkts"] == 23740
    assert parse_counters(got["sonic_queue"], "sonic_queue", port="Ethernet8")["ports"]["Ethernet8"]["uc3_drop_pkts"] == 0


def test_a_failing_counter_command_names_it():
    ran = []
    with pytest.raises(PushError, match="show queue counters failed \\(rc 127\\)"):
        platforms.read_counters("sonic", "ssh", switch({"show pfc counters": (0, "x", "")}, ran))


def test_only_a_nos_with_a_counter_reader_is_read():
    assert platforms.counters_readable("sonic") and not platforms.counters_readable("cumulus")
    assert not platforms.counters_readable(None)
    with pytest.raises(ValueError, match="platform 'eos' has no counter reader \\(readable: sonic\\)"):
        platforms.read_counters("eos", "ssh", switch({}, []))
    with pytest.raises(ValueError, match="cannot be read over 'http'"):
        platforms.read_counters("sonic", "http", switch({}, []))
