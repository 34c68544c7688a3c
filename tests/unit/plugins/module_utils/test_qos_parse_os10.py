# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_os10 on the samples in data/qos/os10 (origins in data/qos/os10/ORIGIN.md). Every expected value is
read off the sample text by eye."""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import FIELDS
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse_os10 import parse_os10

DATA = os.path.join(os.path.dirname(__file__), "data", "qos", "os10")
KB = 1024


def facts(name):
    with open(os.path.join(DATA, name)) as handle:
        return parse_os10(handle.read())


@pytest.mark.parametrize("name", sorted(n for n in os.listdir(DATA) if n.endswith(".cfg")))
def test_every_sample_gives_well_formed_facts(name):
    result = facts(name)
    assert result["format"] == "os10"
    assert result["ports"]
    for port, settings in result["ports"].items():
        assert port.startswith("ethernet1/1/")
        assert set(settings) == set(FIELDS)


def test_generator_config_ranges_and_undefined_policy():
    result = facts("azurestack_generator_os10_fc.cfg")
    ports = result["ports"]
    assert len(ports) == 56  # interface range Ethernet 1/1/1-1/1/56
    assert "ethernet1/1/56" in ports and "ethernet1/1/57" not in ports
    assert ports["ethernet1/1/3"]["trust"] == "pcp"  # system qos: trust-map dot1p AZLOCAL_DOT1P_TRUST
    assert ports["ethernet1/1/3"]["dscp_to_priority"] is None
    assert ports["ethernet1/1/3"]["pfc"] == []  # no priority-flow-control line: off (defaults by omission)
    assert ports["ethernet1/1/44"]["mtu"] == 9216
    assert ports["ethernet1/1/44"]["priority_to_queue"] == dict((n, n) for n in range(8))
    # AZLOCAL-QOS-MAP is the name of a qos-map/NX-OS policy, not of a network-qos policy here
    assert result["problems"] == [
        "policy-map type network-qos AZLOCAL-QOS-MAP (interface config line 393) is referenced but not defined"]


def test_azure_local_rack_aware_dell():
    result = facts("azurelocal_rackaware_dell_s5248.cfg")
    port = result["ports"]["ethernet1/1/18"]
    assert port["pfc"] == [3] and port["buffer_lossless_pg"] == [3]
    assert port["trust"] == "pcp"  # system qos: trust-map dot1p
    assert port["mtu"] == 9216
    assert port["priority_to_queue"] == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 0, 7: 7}
    assert port["ets"] == {0: {"mode": "ets", "weight": 48}, 3: {"mode": "ets", "weight": 50},
                           7: {"mode": "ets", "weight": 2}}
    assert port["ecn"] is None  # "random-detect ecn" names a WRED profile "ecn" that is not in the sample
    assert any("wred profile ecn" in p for p in result["problems"])


def test_synthetic_dscp_range_override():
    result = facts("synthetic_roce_dscp.cfg")
    ports = result["ports"]
    assert set(ports) == {"ethernet1/1/1", "ethernet1/1/2", "ethernet1/1/3", "ethernet1/1/4", "ethernet1/1/5",
                          "ethernet1/1/6", "ethernet1/1/10"}
    port = ports["ethernet1/1/1"]
    assert port["trust"] == "dscp"
    assert port["dscp_to_priority"][26] == 3 and port["dscp_to_priority"][24] == 3
    assert port["dscp_to_priority"][48] == 6 and port["dscp_to_priority"][46] == 0  # unlisted: TC 0
    assert port["priority_to_queue"] == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 6, 7: 0}
    assert port["pfc"] == [3]
    assert port["ecn"][3] == {"enabled": True, "min_bytes": 150 * KB, "max_bytes": 1500 * KB, "probability": 100}
    assert port["ecn_unit"][3] == {"min_bytes": KB, "max_bytes": KB}  # issue 29: kbytes, compared in that unit
    assert [q for q, v in port["ecn"].items() if v["enabled"]] == [3]  # no WRED ECN elsewhere: off
    assert port["ets"] == {3: {"mode": "ets", "weight": 60}, 6: {"mode": "strict", "weight": None}}
    assert port["mtu"] == 9216
    assert ports["ethernet1/1/10"] == port
    assert ports["ethernet1/1/2"]["pfc"] == []  # the later block turns PFC off
    # its network-qos policy does not exist: unread, not "pauses nothing" (issue 29; docs: an undefined policy stays
    # null, as on NX-OS; it used to read as [])
    assert ports["ethernet1/1/3"]["pfc"] is None and ports["ethernet1/1/3"]["pfc_mode"] == "on"
    assert ports["ethernet1/1/3"]["dscp_to_priority"] is None
    five = ports["ethernet1/1/5"]  # only system qos applies: trust-map dscp default
    assert five["dscp_to_priority"][26] == 3 and five["dscp_to_priority"][8] == 1 and five["dscp_to_priority"][63] == 7
    assert five["pfc"] == [] and five["mtu"] == 1500  # PFC: off by omission
    assert five["ets"][3] == {"mode": "ets", "weight": 60}
    problems = "\n".join(result["problems"])
    for name in ("NO-SUCH-MAP", "NO-SUCH-PFC", "Q-MISSING", "mtu 'big'", "ethernet1/1/x"):
        assert name in problems


@pytest.mark.parametrize("text", [None, 3.5, "interface range\n", "trust dscp-map M\n qos-group x dscp 1\n",
                                  "wred W\n random-detect color green minimum-threshold lots\n"])
def test_garbage_gives_problems_not_exceptions(text):
    result = parse_os10(text)
    assert result["format"] == "os10"
    assert result["problems"]


def test_dell_ax_guide_s4148f_later_range_blocks_add():
    result = facts("dell_ax_azurelocal_s4148f_tor1.cfg")
    ports = result["ports"]
    assert len(ports) == 18  # 1/1/1-1/1/16 (converged block) and 1/1/30-1/1/31 (two range blocks)
    assert list(ports)[:3] == ["ethernet1/1/1", "ethernet1/1/2", "ethernet1/1/3"]
    # the second "interface range ethernet1/1/30-1/1/31" block (CUSTOMER.UPLINK) adds lines, it does not
    # undo PFC from the first (VLTiLink)
    vlti = ports["ethernet1/1/31"]
    assert vlti["pfc"] == [3] and vlti["mtu"] == 9216
    node = ports["ethernet1/1/8"]
    assert node["pfc"] == [3] and node["buffer_lossless_pg"] == [3]
    assert node["trust"] == "pcp" and node["dscp_to_priority"] is None  # trust-map dot1p only
    assert node["priority_to_queue"] == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 5, 6: 0, 7: 0}
    assert node["ets"] == {0: {"mode": "ets", "weight": 48}, 3: {"mode": "ets", "weight": 50},
                           5: {"mode": "ets", "weight": 2}}
    assert not any(v["enabled"] for v in node["ecn"].values())  # no WRED profile on any queue: ECN off
    assert "mgmt1/1/1" not in ports
    assert result["problems"] == []


# -- defaults by omission (docs/lossless-qos.md); samples in data/qos/os10/ORIGIN.md --------------------------

def test_whole_running_config_without_qos_states_the_defaults_by_omission():
    result = facts("leaf_no_qos.cfg")
    assert result["problems"] == []
    assert sorted(result["ports"]) == ["ethernet1/1/1", "ethernet1/1/2"]
    for port in result["ports"].values():
        assert port["trust"] == "none"  # no trust map: every data packet in traffic class 0
        assert port["dscp_to_priority"] == {d: 0 for d in range(64)}
        assert port["pfc"] == [] and port["buffer_lossless_pg"] == [] and port["pfc_watchdog"] == []
        assert not any(v["enabled"] for v in port["ecn"].values()) and len(port["ecn"]) == 8
        assert port["mtu"] == 1532
        assert port["ets"] is None  # no documented default found: not filled


def test_an_unreadable_wred_profile_keeps_the_ecn_table_as_stated():
    # rack-aware sample: a queue names a WRED profile that is not defined; its ECN cannot be read, so no
    # default turns it into "off"
    assert facts("azurelocal_rackaware_dell_s5248.cfg")["ports"]["ethernet1/1/18"]["ecn"] is None
