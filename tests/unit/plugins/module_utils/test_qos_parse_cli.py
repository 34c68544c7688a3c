# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared running-config helpers: block splitting, interface names and ranges, units."""

from __future__ import annotations

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos import qos_parse_cli as cli
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import unique


def test_split_blocks_nests_by_indent_and_skips_comments():
    text = ("!\nqos profile P\n   qos trust dscp\n   !\n   tx-queue 3\n      !! comment\n      no priority\n"
            "!\ninterface Ethernet1\n   mtu 9214\n   exit\nend\n")
    blocks = cli.split_blocks(text)
    assert [b.text for b in blocks] == ["qos profile P", "interface Ethernet1"]
    profile = blocks[0]
    assert [c.text for c in profile.children] == ["qos trust dscp", "tx-queue 3"]
    assert [c.text for c in profile.children[1].children] == ["no priority"]
    assert profile.children[1].children[0].lineno == 7
    assert [c.text for c in blocks[1].children] == ["mtu 9214"]


def test_split_blocks_tolerates_odd_input():
    assert cli.split_blocks(None) == []
    assert cli.split_blocks("") == []
    blocks = cli.split_blocks("  indented first\nnext\n\tchild by tab   \n")
    assert [b.text for b in blocks] == ["indented first", "next"]
    assert [c.text for c in blocks[1].children] == ["child by tab"]


@pytest.mark.parametrize("spec,style,names", [
    ("Ethernet1/1-4", "nxos", ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3", "Ethernet1/4"]),
    ("Ethernet 1/1-1/3", "nxos", ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"]),
    ("ethernet 1/1/1-1/1/3", "os10", ["ethernet1/1/1", "ethernet1/1/2", "ethernet1/1/3"]),
    ("range ethernet 1/1/1-1/1/2,1/1/10", "os10", ["ethernet1/1/1", "ethernet1/1/2", "ethernet1/1/10"]),
    ("Ethernet1-4,7", "eos", ["Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4", "Ethernet7"]),
    ("Et1, Et3", "eos", ["Ethernet1", "Ethernet3"]),
    ("Ethernet1/1-4, Ethernet1/7", "nxos", ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3", "Ethernet1/4",
                                            "Ethernet1/7"]),
    ("Eth1/5", "nxos", ["Ethernet1/5"]),
    ("ethernet1/1/1:1-1/1/1:2", "os10", ["ethernet1/1/1:1", "ethernet1/1/1:2"]),
    ("Ethernet 1/1/44", "os10", ["ethernet1/1/44"]),
])
def test_expand_interfaces(spec, style, names):
    assert cli.expand_interfaces(spec, style) == names


@pytest.mark.parametrize("spec", ["Port-Channel3", "vlan100", "Management1", "loopbackloopback0", "Ethernet8.101"])
def test_other_interfaces_are_not_ports(spec):
    assert cli.expand_interfaces(spec, "eos") is None


@pytest.mark.parametrize("spec", ["Ethernetx/1", "Ethernet1/9-x", "Ethernet1/4-1", "Ethernet1/1-2/4", ""])
def test_bad_ranges_raise_value_error(spec):
    with pytest.raises(ValueError):
        cli.expand_interfaces(spec, "nxos")


def test_normalize_interface():
    assert cli.normalize_interface("Et7", "eos") == "Ethernet7"
    assert cli.normalize_interface("ethernet 1/1/3", "os10") == "ethernet1/1/3"
    assert cli.normalize_interface("port-channel50", "nxos") is None
    with pytest.raises(ValueError):
        cli.normalize_interface("Ethernet1-2", "eos")


def test_interface_lines_merge_later_blocks_and_report_bad_names():
    text = ("interface Ethernet1/1-2\n  mtu 9216\n  priority-flow-control mode on\n"
            "interface Ethernet1/2\n  priority-flow-control mode off\n"
            "interface port-channel5\n  mtu 9216\n"
            "interface Ethernet1/x\n  mtu 1\n")
    problems = []
    ports = cli.interface_lines(cli.split_blocks(text), "nxos", problems)
    assert sorted(ports) == ["Ethernet1/1", "Ethernet1/2"]
    assert [b.text for b in ports["Ethernet1/1"]] == ["mtu 9216", "priority-flow-control mode on"]
    assert [b.text for b in ports["Ethernet1/2"]][-1] == "priority-flow-control mode off"
    assert len(problems) == 1 and "Ethernet1/x" in problems[0] and "line 8" in problems[0]


def test_units_and_dscp_names():
    assert cli.to_bytes("150", "kbytes") == 153600
    assert cli.to_bytes(2, "mbytes") == 2 * 1024 * 1024
    assert cli.to_bytes(500, "bytes") == 500
    assert cli.to_bytes(320, "segments") is None
    with pytest.raises(ValueError):
        cli.to_bytes("lots", "kbytes")
    assert cli.dscp_list(["24-26,", "af41", "ef", "cs3"]) == [24, 25, 26, 34, 46]
    with pytest.raises(ValueError):
        cli.dscp_list(["64"])
    assert cli.sort_key("Ethernet2") < cli.sort_key("Ethernet10")
    assert unique(["a", "b", "a"]) == ["a", "b"]  # the shared helper of qos_facts


@pytest.mark.parametrize("header, partial", [
    ("! Command: show running-config", False),                      # EOS, the whole running-config
    ("!Command: show running-config", False),                       # NX-OS
    ("! Command: show running-config all | no-more", False),
    ("! Command: show running-config interfaces Ethernet2", True),  # EOS section
    ("!Command: show running-config interface Ethernet1/1", True),  # NX-OS section
    ("! Command: show running-config | section qos", True),
    ("interface Ethernet1", False),                                 # no header: a saved or rendered file
])
def test_partial_reason_reads_the_command_header(header, partial):
    reason = cli.partial_reason(header + "\n!\ninterface Ethernet1\n")
    assert (reason is not None) is partial
    if partial:
        assert "a part of the running-config" in reason
