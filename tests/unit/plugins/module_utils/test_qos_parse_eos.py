# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_eos on the samples in data/qos/eos (origins in data/qos/eos/ORIGIN.md). Every expected value is
read off the sample text by eye."""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import FIELDS
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse_eos import parse_eos

DATA = os.path.join(os.path.dirname(__file__), "data", "qos", "eos")


def facts(name):
    with open(os.path.join(DATA, name)) as handle:
        return parse_eos(handle.read())


@pytest.mark.parametrize("name", sorted(n for n in os.listdir(DATA) if n.endswith(".cfg")))
def test_every_sample_gives_well_formed_facts(name):
    result = facts(name)
    assert result["format"] == "eos"
    assert result["ports"]
    for port, settings in result["ports"].items():
        assert port.startswith("Ethernet")
        assert set(settings) == set(FIELDS)
        assert len(settings["dscp_to_priority"]) == 64


def test_avd_qos_profiles_are_inherited_and_interface_lines_win():
    result = facts("avd_qos.cfg")
    ports = result["ports"]
    assert sorted(ports) == ["Ethernet1", "Ethernet3", "Ethernet4", "Ethernet6", "Ethernet7"]
    eth1 = ports["Ethernet1"]  # service-profile test + qos trust dscp, mtu 1500
    assert eth1["trust"] == "dscp"
    assert eth1["mtu"] == 1500
    assert eth1["ets"][1] == {"mode": "ets", "weight": 50}  # no priority, bandwidth percent 50
    assert eth1["ets"][2] == {"mode": "strict", "weight": 10}  # priority strict, bandwidth percent 10
    assert eth1["ecn"][2] == {"enabled": True, "min_bytes": 320 * 1024, "max_bytes": 320 * 1024, "probability": 90}
    assert eth1["ecn"][4]["enabled"] is True and eth1["ecn"][4]["min_bytes"] is None  # 320 segments
    eth6 = ports["Ethernet6"]  # service-profile experiment (qos trust cos; tx-queue 3 no priority, 30%)
    assert eth6["trust"] == "pcp"
    assert eth6["ets"][3] == {"mode": "ets", "weight": 30}
    assert eth6["ets"][5]["weight"] == 40
    # "random-detect ecn count" only counts; a whole running-config: no queue marks (defaults by omission)
    assert all(not v["enabled"] for v in eth6["ecn"].values()) and sorted(eth6["ecn"]) == list(range(8))
    eth7 = ports["Ethernet7"]  # service-profile qprof_testwithpolicy
    assert eth7["ets"][5] == {"mode": "ets", "weight": 19}
    assert eth7["ets"][1]["weight"] == 80
    assert ports["Ethernet3"]["ets"] is None and ports["Ethernet3"]["trust"] == "pcp"
    assert result["problems"] == []


def test_avd_qos_global_maps_and_all_off():
    ports = facts("avd_qos.cfg")["ports"]
    dscp = ports["Ethernet1"]["dscp_to_priority"]
    assert dscp[8] == 1 and dscp[63] == 1  # qos map dscp 8 9 ... 63 to traffic-class 1
    assert dscp[26] == 4 and dscp[18] == 4  # ... to traffic-class 4 drop-precedence 2
    assert dscp[46] == 5
    assert dscp[48] == 6 and dscp[56] == 7 and dscp[0] == 1  # not mapped: EOS defaults
    assert ports["Ethernet1"]["priority_to_queue"][6] == 2  # qos map traffic-class 6 to tx-queue 2
    assert ports["Ethernet1"]["priority_to_queue"][3] == 3
    # priority-flow-control all off: no port has PFC
    assert all(p["pfc"] == [] for p in ports.values())


def test_avd_ethernet_interfaces_pfc_trust_mtu():
    result = facts("avd_ethernet_interfaces.cfg")
    ports = result["ports"]
    assert ports["Ethernet2"]["pfc"] == [5]  # on + priority 5 no-drop
    assert ports["Ethernet1"]["pfc"] == []  # on + priority 5 drop
    assert ports["Ethernet3"]["pfc"] == []  # no priority-flow-control
    assert ports["Ethernet4"]["pfc"] == []  # on, no no-drop priority
    assert ports["Ethernet5"]["pfc"] == []  # silent: PFC off by omission (a whole running-config)
    assert ports["Ethernet1"]["trust"] == "dscp"  # no switchport (routed)
    assert ports["Ethernet2"]["trust"] == "pcp"  # switchport
    assert ports["Ethernet21"]["trust"] == "none"  # no qos trust
    assert ports["Ethernet7"]["trust"] == "pcp"  # qos trust cos
    assert ports["Ethernet4"]["mtu"] == 9100 and ports["Ethernet7"]["mtu"] == 7000
    assert ports["Ethernet2"]["dscp_to_priority"][26] == 3  # default map, no qos map in this file
    assert ports["Ethernet2"]["dscp_to_priority"][5] == 1 and ports["Ethernet2"]["dscp_to_priority"][10] == 0
    assert "Ethernet8.101" not in ports and "Management1" not in ports
    assert any("service-profile QoS" in p and "Ethernet7" in p for p in result["problems"])


def test_arista_roce_leaf_profile():
    result = facts("arista_roce_blog_leaf.cfg")
    eth1 = result["ports"]["Ethernet1"]
    assert eth1["pfc"] == [3]
    assert eth1["pfc_watchdog"] == [3]  # global watchdog default timeout
    assert eth1["trust"] == "dscp"
    assert eth1["mtu"] == 9214
    assert eth1["dscp_to_priority"][26] == 3 and eth1["dscp_to_priority"][48] == 6
    assert eth1["priority_to_queue"][3] == 3
    assert eth1["ecn"][3] == {"enabled": True, "min_bytes": 256 * 1024, "max_bytes": 512 * 1024, "probability": 100}
    assert [q for q, v in eth1["ecn"].items() if v["enabled"]] == [3]  # the other queues: off by omission
    assert eth1["ets"] == {1: {"mode": "ets", "weight": 5}, 3: {"mode": "ets", "weight": 95},
                           6: {"mode": "strict", "weight": None}}
    assert result["problems"] == []


def test_synthetic_ranges_overrides_profile():
    result = facts("synthetic_ranges_override.cfg")
    ports = result["ports"]
    assert set(ports) == {"Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4", "Ethernet7", "Ethernet9/1",
                          "Ethernet9/2", "Ethernet9/3", "Ethernet9/4", "Ethernet10"}
    eth1 = ports["Ethernet1"]
    assert eth1["trust"] == "dscp" and eth1["pfc"] == [3] and eth1["pfc_watchdog"] == [3]
    assert eth1["mtu"] == 9214
    assert eth1["ecn"][3] == {"enabled": True, "min_bytes": 150 * 1024, "max_bytes": 1500 * 1024, "probability": 100}
    assert eth1["ets"] == {3: {"mode": "ets", "weight": 60}, 6: {"mode": "strict", "weight": None}}
    assert eth1["dscp_to_priority"][24] == 3 and eth1["dscp_to_priority"][46] == 5
    assert eth1["priority_to_queue"][5] == 6
    assert ports["Ethernet2"] == eth1
    eth3 = ports["Ethernet3"]  # a later block overrides trust and the queue's ECN
    assert eth3["trust"] == "none"
    assert eth3["ecn"][3] == {"enabled": True, "min_bytes": 1024 * 1024, "max_bytes": 2 * 1024 * 1024,
                              "probability": 50}
    assert eth3["ets"][3] == {"mode": "ets", "weight": 60}
    assert ports["Ethernet4"]["pfc"] == [] and ports["Ethernet4"]["pfc_watchdog"] == []
    assert ports["Ethernet7"]["pfc"] == [3, 4] and ports["Ethernet7"]["pfc_watchdog"] == []
    assert ports["Ethernet9/2"]["pfc"] == [] and ports["Ethernet9/2"]["trust"] == "pcp"
    problems = "\n".join(result["problems"])
    assert "service-profile MISSING" in problems
    assert "no-drop without priority-flow-control on" in problems
    assert "mtu jumbo" in problems
    assert "Ethernetx/1" in problems
    assert ports["Ethernet10"]["mtu"] is None


@pytest.mark.parametrize("text", [None, 42, "", "}}}\n\x00\x01 garbage\ninterface\n  tx-queue x\n",
                                  "interface Ethernet1\n   tx-queue\n      bandwidth percent lots\n"
                                  "   priority-flow-control priority 9 no-drop\n"
                                  "qos map dscp 99 to traffic-class 3\nqos map dscp to\n"])
def test_garbage_gives_problems_not_exceptions(text):
    result = parse_eos(text)
    assert result["format"] == "eos"
    if text:
        assert result["problems"]


# -- defaults by omission (docs/lossless-qos.md); samples in data/qos/eos/ORIGIN.md --------------------------

def test_whole_running_config_states_the_defaults_by_omission():
    result = facts("leaf_whole_running_config.cfg")
    assert result["problems"] == []
    bare = result["ports"]["Ethernet2"]  # description only: a switched port with no QoS
    assert bare["trust"] == "pcp"
    assert bare["pfc"] == [] and bare["pfc_watchdog"] == []
    assert bare["ecn"] == {q: {"enabled": False, "min_bytes": None, "max_bytes": None, "probability": None}
                           for q in range(8)}
    assert bare["dscp_to_priority"][26] == 3  # the global qos map
    assert bare["mtu"] is None  # EOS's mtu is the layer 3 MTU: no default for a switched port
    assert bare["ets"] is None  # tx-queue scheduling default: not documented, not filled
    routed = result["ports"]["Ethernet3"]  # no switchport, no mtu, no QoS
    assert routed["trust"] == "dscp" and routed["mtu"] == 1500 and routed["pfc"] == []
    roce = result["ports"]["Ethernet1"]
    assert roce["pfc"] == [3] and roce["pfc_watchdog"] == [3] and roce["mtu"] == 9214
    assert [q for q, v in roce["ecn"].items() if v["enabled"]] == [3]


def test_a_running_config_section_states_nothing_it_omits():
    with open(os.path.join(DATA, "show_running_config_interfaces_ethernet2.txt")) as handle:
        result = parse_eos(handle.read())
    port = result["ports"]["Ethernet2"]
    for field in ("trust", "dscp_to_priority", "priority_to_queue", "pfc", "ecn", "mtu", "pfc_watchdog"):
        assert port[field] is None, field


def test_switchport_default_mode_and_interface_defaults_mtu():
    text = ("switchport default mode routed\n!\ninterface defaults\n   mtu 9214\n!\n"
            "interface Ethernet1\n   description bare\n!\ninterface Ethernet2\n   switchport\n!\n"
            "interface Ethernet3\n   mtu 1500\n!\n")
    ports = parse_eos(text)["ports"]
    assert ports["Ethernet1"]["trust"] == "dscp" and ports["Ethernet1"]["mtu"] == 9214
    assert ports["Ethernet2"]["trust"] == "pcp" and ports["Ethernet2"]["mtu"] is None
    assert ports["Ethernet3"]["mtu"] == 1500
    # an mtu the config states but that cannot be read is not replaced by the default
    broken = parse_eos("interface Ethernet1\n   no switchport\n   mtu jumbo\n")
    assert broken["ports"]["Ethernet1"]["mtu"] is None and broken["problems"]
