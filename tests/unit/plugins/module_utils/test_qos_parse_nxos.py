# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_nxos on the samples in data/qos/nxos (origins in data/qos/nxos/ORIGIN.md). Every expected value is
read off the sample text by eye."""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import FIELDS
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse_nxos import parse_nxos

DATA = os.path.join(os.path.dirname(__file__), "data", "qos", "nxos")
KB = 1024


def facts(name):
    with open(os.path.join(DATA, name)) as handle:
        return parse_nxos(handle.read())


@pytest.mark.parametrize("name", sorted(n for n in os.listdir(DATA) if n.endswith(".cfg")))
def test_every_sample_gives_well_formed_facts(name):
    result = facts(name)
    assert result["format"] == "nxos"
    assert result["ports"]
    for port, settings in result["ports"].items():
        assert port.startswith("Ethernet")
        assert set(settings) == set(FIELDS)
        assert settings["priority_to_queue"] == dict((n, n) for n in range(8))


def test_azure_local_tor_policy():
    result = facts("azurelocal_tor_qos_policy.cfg")
    assert list(result["ports"]) == ["Ethernet1/17"]
    port = result["ports"]["Ethernet1/17"]
    assert port["pfc"] == [3]  # mode on send-tlv + pause pfc-cos 3 in the system network-qos policy
    assert port["buffer_lossless_pg"] == [3]
    assert port["trust"] == "pcp"  # AZLocal_SERVICES matches cos 3 / cos 7
    assert port["dscp_to_priority"] is None
    assert port["mtu"] == 9216
    assert port["ecn"][3] == {"enabled": True, "min_bytes": 300 * KB, "max_bytes": 300 * KB, "probability": 100}
    assert port["ecn_unit"][3] == {"min_bytes": KB, "max_bytes": KB}  # issue 29: kbytes, compared in that unit
    assert [q for q, v in port["ecn"].items() if v["enabled"]] == [3]  # other queues: no WRED ECN, off
    assert port["ets"][3] == {"mode": "ets", "weight": 50}
    assert port["ets"][0] == {"mode": "ets", "weight": 48}  # c-out-8q-q-default
    assert port["ets"][7] == {"mode": "ets", "weight": 1}  # bandwidth percent 1
    assert port["ets"][5] == {"mode": "ets", "weight": 0}
    assert port["pfc_watchdog"] is None
    assert result["problems"] == []


def test_generator_ranges_and_later_blocks():
    result = facts("azurestack_generator_switched.cfg")
    ports = result["ports"]
    assert len([p for p in ports if p.startswith("Ethernet1/")]) == 54  # interface Ethernet 1/1-1/54
    # later block Ethernet 1/1-1/16: mode on send-tlv, but the no-drop class AZLOCAL-NWQOS-RDMA is a class-map the
    # config never defines, so which qos-group is lossless is not known (issue 29: it used to read its pfc-cos 3)
    assert ports["Ethernet1/5"]["pfc"] is None and ports["Ethernet1/5"]["pfc_mode"] == "on"
    assert ports["Ethernet1/20"]["pfc"] is None
    assert ports["Ethernet1/20"]["trust"] == "pcp"  # AZLOCAL-QOS-MAP: match cos 3 / cos 7
    # no qos input policy on 1/1-1/16: every packet in qos-group 0 (defaults by omission)
    assert ports["Ethernet1/5"]["trust"] == "none"
    assert set(ports["Ethernet1/5"]["dscp_to_priority"].values()) == {0}
    assert ports["Ethernet1/40"]["pfc"] is None  # only the "Unused" block
    assert ports["Ethernet1/40"]["pfc_mode"] == "auto"
    assert ports["Ethernet1/40"]["mtu"] == 9216
    assert ports["Ethernet1/49"]["pfc"] is None and ports["Ethernet1/49"]["pfc_mode"] == "on"
    assert ports["Ethernet1/20"]["ets"][7] == {"mode": "ets", "weight": 2}
    assert ports["Ethernet1/20"]["ecn"][3]["max_bytes"] == 300 * KB
    problems = "\n".join(result["problems"])
    # the network-qos classes are user names that no class-map type network-qos defines
    for name in ("AZLOCAL-NWQOS-RDMA", "AZLOCAL-NWQOS-DEFAULT", "AZLOCAL-NWQOS-CLUSTER"):
        assert name in problems


def test_undefined_policy_on_range():
    result = facts("azurelocal_fully_converged_tor1.cfg")
    assert sorted(result["ports"]) == ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"]
    assert result["ports"]["Ethernet1/2"]["pfc"] == []  # mode on, but no network-qos policy pauses anything
    assert result["ports"]["Ethernet1/2"]["trust"] is None
    assert len(result["problems"]) == 1
    assert "AZS_SERVICES" in result["problems"][0] and "line 33" in result["problems"][0]


def test_synthetic_dscp_classification():
    result = facts("synthetic_roce_dscp.cfg")
    ports = result["ports"]
    assert sorted(ports) == ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3", "Ethernet1/4", "Ethernet1/7", "Ethernet1/8"]
    port = ports["Ethernet1/1"]
    # no class-default in ROCE-IN: every other DSCP goes to qos-group 0 (defaults by omission)
    assert port["dscp_to_priority"] == {**{d: 0 for d in range(64)}, **{24: 3, 26: 3, 48: 7, 34: 4, 46: 4}}
    assert port["trust"] == "pcp,dscp"  # LEGACY also matches cos 4
    assert port["pfc"] == [3] and port["pfc_watchdog"] == [3] and port["buffer_lossless_pg"] == [3]
    assert port["ecn"][3] == {"enabled": True, "min_bytes": 150 * KB, "max_bytes": 3000 * KB, "probability": 7}
    assert port["ecn"][0] == {"enabled": False, "min_bytes": 1024 * KB, "max_bytes": 2048 * KB, "probability": 10}
    assert [q for q, v in port["ecn"].items() if v["enabled"]] == [3]
    assert port["ets"] == {3: {"mode": "ets", "weight": 50}, 7: {"mode": "strict", "weight": None},
                           0: {"mode": "ets", "weight": 50}}
    assert port["mtu"] == 9216
    assert ports["Ethernet1/2"]["pfc"] == [] and ports["Ethernet1/2"]["pfc_watchdog"] == []
    assert ports["Ethernet1/3"]["ets"] == {3: {"mode": "ets", "weight": 90}}
    assert not any(v["enabled"] for v in ports["Ethernet1/3"]["ecn"].values())  # no random-detect: off
    assert ports["Ethernet1/3"]["pfc_watchdog"] == []  # watch-dog-interval off on the port
    assert ports["Ethernet1/4"]["dscp_to_priority"] is None  # its policy is not defined: no default replaces it
    assert ports["Ethernet1/4"]["trust"] is None
    # mode auto: PFC on the no-drop qos-group once DCBX negotiates it; the mode says so (issue 29: pfc was None)
    assert ports["Ethernet1/7"]["pfc"] == [3] and ports["Ethernet1/7"]["pfc_mode"] == "auto"
    assert port["pfc_mode"] == "on" and ports["Ethernet1/2"]["pfc_mode"] == "off"
    assert ports["Ethernet1/8"]["mtu"] is None
    problems = "\n".join(result["problems"])
    assert "NOT-DEFINED" in problems and "ROCE-IN" in problems
    assert "NO-SUCH-POLICY" in problems
    assert "mtu abc" in problems
    assert "Ethernet1/9-x" in problems


BAD_QUEUING = ("policy-map type queuing Q\n  class type queuing c-out-8q-q3\n    bandwidth percent x\n"
               "system qos\n  service-policy type queuing output Q\ninterface Ethernet1/1\n")


@pytest.mark.parametrize("text", [None, b"bytes", "interface\n", "system qos\n  service-policy type network-qos\n",
                                  BAD_QUEUING])
def test_garbage_gives_problems_not_exceptions(text):
    result = parse_nxos(text)
    assert result["format"] == "nxos"
    if text not in ("system qos\n  service-policy type network-qos\n",):
        assert result["problems"]


def test_a_stated_class_default_sends_every_unmatched_dscp_to_its_qos_group():
    # Cisco's RoCE templates state class-default; unmatched traffic goes there (NX-OS QoS guide, Classification).
    text = ("class-map type qos match-all ROCE\n  match dscp 26\n"
            "policy-map type qos P\n  class ROCE\n    set qos-group 3\n  class class-default\n    set qos-group %d\n"
            "interface Ethernet1/1\n  service-policy type qos input P\n")
    port = parse_nxos(text % 0)["ports"]["Ethernet1/1"]
    assert port["dscp_to_priority"] == {d: 3 if d == 26 else 0 for d in range(64)}
    assert parse_nxos(text % 1)["ports"]["Ethernet1/1"]["dscp_to_priority"][40] == 1
    # without class-default: unmatched DSCPs go to qos-group 0 in a whole config, are not stated in a section
    whole = text.replace("  class class-default\n    set qos-group %d\n", "")
    assert parse_nxos(whole)["ports"]["Ethernet1/1"]["dscp_to_priority"] == {d: 3 if d == 26 else 0 for d in range(64)}
    section = "!Command: show running-config ipqos\n" + whole
    assert parse_nxos(section)["ports"]["Ethernet1/1"]["dscp_to_priority"] == {26: 3}


# -- defaults by omission (docs/lossless-qos.md); samples in data/qos/nxos/ORIGIN.md --------------------------

def test_whole_running_config_without_qos_states_the_defaults_by_omission():
    result = facts("leaf_no_qos.cfg")
    assert result["problems"] == []
    assert sorted(result["ports"]) == ["Ethernet1/1", "Ethernet1/2"]
    port = result["ports"]["Ethernet1/2"]
    assert port["trust"] == "none"  # no type qos policy: every packet in qos-group 0
    assert port["dscp_to_priority"] == {d: 0 for d in range(64)}
    assert port["pfc"] == [] and port["buffer_lossless_pg"] == [] and port["pfc_watchdog"] == []
    assert not any(v["enabled"] for v in port["ecn"].values()) and len(port["ecn"]) == 8
    assert port["mtu"] is None and port["ets"] is None  # no documented default found: not filled
    assert result["ports"]["Ethernet1/1"]["mtu"] == 9216


def test_mode_auto_is_stated_as_pfc_mode():
    pausing = ("policy-map type network-qos NQ\n  class type network-qos c-8q-nq3\n    pause pfc-cos 3\n"
               "system qos\n  service-policy type network-qos NQ\ninterface Ethernet1/1\n  no shutdown\n")
    port = parse_nxos(pausing)["ports"]["Ethernet1/1"]
    assert port["pfc"] == [3] and port["pfc_mode"] == "auto"  # the default mode: DCBX decides (the check judges it)
    assert parse_nxos("interface Ethernet1/1\n  no shutdown\n")["ports"]["Ethernet1/1"]["pfc"] == []
    section = "!Command: show running-config interface Ethernet1/1\n\ninterface Ethernet1/1\n  no shutdown\n"
    port = parse_nxos(section)["ports"]["Ethernet1/1"]
    assert port["pfc"] is None and port["trust"] is None and port["ecn"] is None and port["pfc_mode"] is None
    # a network-qos policy the config names but does not define: unread, not "pauses nothing"
    undefined = parse_nxos("system qos\n  service-policy type network-qos NOPE\ninterface Ethernet1/1\n  no shutdown\n")
    assert undefined["ports"]["Ethernet1/1"]["pfc"] is None and undefined["problems"]
    assert undefined["ports"]["Ethernet1/1"]["buffer_lossless_pg"] is None
