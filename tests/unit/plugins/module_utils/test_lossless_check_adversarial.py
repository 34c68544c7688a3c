"""Inputs from an adversarial review of the lossless check (issue 18) on which it broke its promise
(docs/lossless-qos.md: nothing unread is counted as agreement, a parser never raises). Each test failed
before its fix: a sanitized NX-OS running-config read as a part; a stated DSCP map without the RoCE DSCP
skipped silently (SONiC now fills the port's default TC, SAI_PORT_ATTR_QOS_DEFAULT_TC; elsewhere the topic
is unchecked); a queue the scheduler does not name called "not strict"; a traceback from NVUE.
"""

import json
from os.path import dirname, join

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_check import lossless_check
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse import parse_qos

# a host with the nvidia preset, a Cumulus port agreeing
from ansible_collections.ainet.fabric.tests.unit.plugins.module_utils.test_lossless_check import (  # noqa: E402
    CUMULUS, HOST)

DATA = join(dirname(__file__), "data", "qos")


def _codes(verdict):
    return sorted(item["code"] for item in verdict["disagreements"])


def _topics(verdict):
    return {item["topic"] for item in verdict["unchecked"]}


# -- 1. NX-OS "show running-config sanitized" is a whole running-config, read as a partial section ---------------

def test_nxos_sanitized_running_config_is_whole_so_a_bare_port_disagrees():
    # Cisco Nexus 9000 NX-OS Fundamentals Configuration Guide 10.6(x), "Verifying the Device Configuration":
    # "show running-config sanitized" prints the whole running-config (headed "!Command: show running-config
    # sanitized") with secrets masked as <removed>. Ethernet1/2 has no QoS at all.
    with open(join(DATA, "nxos", "leaf_no_qos.cfg")) as handle:
        text = handle.read()
    whole = parse_qos(text, "nxos")
    sanitized = parse_qos(text.replace("!Command: show running-config\n",
                                       "!Command: show running-config sanitized\n", 1), "nxos")
    assert _codes(lossless_check(HOST, whole, "Ethernet1/2")) != []          # the plain header: disagrees
    verdict = lossless_check(HOST, sanitized, "Ethernet1/2")
    assert "pfc_mismatch" in _codes(verdict), verdict                       # reviewed code: [] and pfc unchecked
    assert "trust_mismatch" in _codes(verdict), verdict


# -- 2. A stated DSCP map that does not place the RoCE DSCP: neither a disagreement nor "unchecked" -------------

def _sonic_port(dscp_map):
    return {
        "DEVICE_METADATA": {"localhost": {"hostname": "tor1", "hwsku": "ACS-MSN2700", "buffer_model": "traditional"}},
        "PORT": {"Ethernet0": {"mtu": "9100", "speed": "100000", "admin_status": "up"}},
        "DSCP_TO_TC_MAP": {"AINET": dscp_map},
        "TC_TO_QUEUE_MAP": {"AINET": {str(t): str(t) for t in range(8)}},
        # pfcwd_sw_enable: without it current orchagent arms no watchdog queue (issue 29), the "good" port wants it
        "PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "AINET", "tc_to_queue_map": "AINET", "pfc_enable": "3",
                                       "pfcwd_sw_enable": "3"}},
        "WRED_PROFILE": {"AINET_LOSSLESS": {"ecn": "ecn_all", "green_min_threshold": "150000",
                                            "green_max_threshold": "1500000", "green_drop_probability": "100"}},
        "SCHEDULER": {"STRICT": {"type": "STRICT"}, "DWRR": {"type": "DWRR", "weight": "50"}},
        "QUEUE": {"Ethernet0|0": {"scheduler": "DWRR", "wred_profile": "AINET_LOSSLESS"},
                  "Ethernet0|3": {"scheduler": "DWRR", "wred_profile": "AINET_LOSSLESS"},
                  "Ethernet0|6": {"scheduler": "STRICT"}},
        "BUFFER_PG": {"Ethernet0|3": {"profile": "NULL"}},
        "PFC_WD": {"Ethernet0": {"action": "drop", "detection_time": "200", "restoration_time": "200"}},
    }


@pytest.mark.parametrize("profile", [None, "nvidia"])
def test_sonic_dscp_map_without_the_roce_dscp_is_not_agreement(profile):
    # (control: the same port with DSCP 26 -> TC 3 agrees with the host: see the first assertion)
    good = _sonic_port(dict({str(d): "0" for d in range(64)}, **{"26": "3", "48": "6"}))
    assert _codes(lossless_check(HOST, parse_qos(json.dumps(good), "sonic_config_db"), "Ethernet0", profile)) == []
    # DSCP_TO_TC_MAP names 3 and 48 but not 26 (the nvidia RoCE DSCP): on the switch DSCP 26 is not in
    # TC 3 (SAI: the port's default TC, 0). The reviewed check returns no disagreement and does not list
    # roce_dscp as unchecked, so "assert disagreements | length == 0" passes on a lossy port.
    config = _sonic_port({"3": "3", "48": "6"})
    verdict = lossless_check(HOST, parse_qos(json.dumps(config), "sonic_config_db"), "Ethernet0", profile)
    assert _codes(verdict) or "roce_dscp" in _topics(verdict), verdict


def test_host_dcb_without_an_app_entry_for_the_roce_dscp_is_not_agreement():
    # dcb apptrust dscp, PFC on 3, but no dscp-prio entry for DSCP 26: the host's priority of RoCE is not the
    # one the output states. Nothing is reported and roce_dscp is not listed as unchecked.
    dcb = ("pfc-cap 8 macsec-bypass off delay 4096\n"
           "prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n"
           "prio-tc 0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7\n"
           "tc-tsa 0:ets 1:ets 2:ets 3:ets 4:ets 5:ets 6:strict 7:ets\n"
           "tc-bw 0:50 1:0 2:0 3:50 4:0 5:0 6:0 7:0\n"
           "dscp-prio 48:6\n"
           "order: dscp\n")
    host = parse_qos(dcb, "dcb", port="eth2")
    assert host["problems"] == []
    verdict = lossless_check(host, CUMULUS, "swp8", "nvidia")
    assert _codes(verdict) or "roce_dscp" in _topics(verdict), verdict


# -- 3. A queue the scheduler config does not name is reported as "not scheduled, not strict" ---------------------

EOS_ROCE = """qos map dscp 26 to traffic-class 3
qos map dscp 48 to traffic-class 6
!
qos profile ROCE
   qos trust dscp
   priority-flow-control on
   priority-flow-control priority 3 no-drop
   priority-flow-control pause watchdog
   tx-queue 0
      no priority
      bandwidth percent 50
   tx-queue 3
      no priority
      bandwidth percent 50
      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100
!
interface Ethernet1
   no switchport
   mtu 9214
   service-profile ROCE
!
"""


def test_eos_unconfigured_tx_queue_is_strict_not_a_cnp_disagreement():
    # tx-queue 6 (the CNP queue) is not configured: EOS keeps it strict priority, its default (the parser's own
    # docstring: "tx-queue scheduling: strict priority unless no priority"; docs/lossless-qos.md, "a tx-queue
    # without `no priority` stays strict priority, EOS's default (Arista EOS User Manual, Quality of Service,
    # Transmit Queues and Port Shaping)"). At worst it is "not filled" (the defaults table), i.e. unchecked.
    verdict = lossless_check(HOST, parse_qos(EOS_ROCE, "eos"), "Ethernet1")
    assert "cnp_not_strict_on_switch" not in _codes(verdict), verdict


def test_sonic_queue_without_scheduler_is_unchecked_not_a_cnp_disagreement():
    # docs/lossless-qos.md, SONiC: "scheduler of a queue without `scheduler` ... not filled (vendor SAI default)";
    # "Where a default is 'not filled' the field stays null and the check lists the topic as unchecked".
    config = _sonic_port(dict({str(d): "0" for d in range(64)}, **{"26": "3", "48": "6"}))
    del config["QUEUE"]["Ethernet0|6"]  # no QUEUE entry (so no scheduler) for the CNP queue
    verdict = lossless_check(HOST, parse_qos(json.dumps(config), "sonic_config_db"), "Ethernet0")
    assert "cnp_not_strict_on_switch" not in _codes(verdict), verdict
    assert "cnp_switch" in _topics(verdict), verdict


# -- 4. Tracebacks instead of a one-line problem ----------------------------------------------------------------

def test_nvue_profile_reference_of_the_wrong_type_is_a_problem_not_a_traceback():
    pytest.importorskip("yaml")
    text = ("- header:\n    model: VX\n    nvue-api-version: nvue_v1\n    rev-id: 1.0\n"
            "    version: Cumulus Linux 5.14.0\n- set:\n    interface:\n      swp1:\n        qos:\n"
            "          pfc:\n            profile: [lossless]\n")
    facts = parse_qos(text, "nvue")  # reviewed code: TypeError: unhashable type: 'list'
    assert facts["problems"]


def test_nvue_interface_range_beyond_any_switch_is_a_problem_not_a_hang():
    pytest.importorskip("yaml")
    text = ("- header:\n    model: VX\n    nvue-api-version: nvue_v1\n    rev-id: 1.0\n"
            "    version: Cumulus Linux 5.14.0\n- set:\n    interface:\n      swp1-99999999:\n        link:\n"
            "          mtu: 9216\n      swp2:\n        link:\n          mtu: 9000\n")
    facts = parse_qos(text, "nvue")
    assert any("swp1-99999999" in p and "too large" in p for p in facts["problems"]), facts["problems"]
    assert facts["ports"]["swp2"]["mtu"] == 9000


def test_parse_qos_turns_any_parser_exception_into_one_problem(monkeypatch):
    from ansible_collections.ainet.fabric.plugins.module_utils.qos import qos_parse

    def broken(text):
        raise TypeError("unhashable type: 'list'")

    monkeypatch.setitem(qos_parse.PARSERS, "eos", broken)
    facts = parse_qos("interface Ethernet1\n", "eos")
    assert facts["ports"] == {} and facts["problems"] == ["eos: cannot parse the input (TypeError: unhashable type: "
                                                          "'list')"]
