"""The host-ToR agreement check on hand-written settings: every code, and silence when they agree.

The settings here are written by hand from the vendor defaults in ../shared notes (Cumulus/NVIDIA
RoCE defaults, SONiC's stock template); the parsers' own tests prove that real outputs give them.
"""

import copy
import json
from os.path import dirname, join

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_check import (
    CODES, TOPICS, link_rows, lossless_check, lossless_diff)
from ansible_collections.ainet.fabric.plugins.module_utils.model.qos_profile import resolve_profile
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse import parse_qos


def disagreements(*args, **kwargs):
    """The disagreements alone (lossless_check), for the round trips that judge them, not the unchecked topics."""
    return lossless_check(*args, **kwargs)["disagreements"]


NVIDIA = resolve_profile({}, "q")
# mlnx_qos default dscp2prio: priority n <- DSCP 8n..8n+7.
DEFAULT_MAP = {d: d // 8 for d in range(64)}
HOST = {"trust": "dscp", "dscp_to_priority": {**DEFAULT_MAP, **{26: 3, 48: 6}}, "pfc": [3],
        "priority_to_queue": {p: p for p in range(8)},
        "ets": {0: {"mode": "ets", "weight": 50}, 3: {"mode": "ets", "weight": 50}, 6: {"mode": "strict"}},
        "ecn_rp": [3], "ecn_np": [3], "cnp_dscp": 48, "cnp_priority": 6, "mtu": 9000, "buffer_lossless": [3],
        "roce_tos": 106, "traffic_class": 106}
CUMULUS = {"format": "nvue", "problems": [], "ports": {"swp8": {
    "trust": "pcp,dscp", "dscp_to_priority": {**DEFAULT_MAP, **{26: 3, 48: 6}}, "pfc": [3],
    "priority_to_queue": {p: p for p in range(8)},
    "ecn": {0: {"enabled": True, "min_bytes": 150000, "max_bytes": 1500000, "probability": 100},
            3: {"enabled": True, "min_bytes": 150000, "max_bytes": 1500000, "probability": 100}},
    "ets": {0: {"mode": "ets", "weight": 50}, 3: {"mode": "ets", "weight": 50}, 6: {"mode": "strict"}},
    "mtu": 9216, "pfc_watchdog": None, "buffer_lossless": [3]}}}
# SONiC's stock template: DSCP 3/4 lossless, everything else (26 included) in TC1; queue 6 DWRR.
SONIC_MAP = {**{d: 1 for d in range(64)}, **{3: 3, 4: 4, 8: 0, 46: 5, 48: 6}}
SONIC = {"format": "sonic_config_db", "problems": [], "ports": {"Ethernet8": {
    "trust": "dscp", "dscp_to_priority": SONIC_MAP, "pfc": [3, 4], "priority_to_queue": {p: p for p in range(8)},
    "ecn": {3: {"enabled": True, "min_bytes": 1048576, "max_bytes": 2097152, "probability": 5},
            4: {"enabled": True, "min_bytes": 1048576, "max_bytes": 2097152, "probability": 5}},
    "ets": {q: {"mode": "ets", "weight": 14 if q not in (3, 4) else 15} for q in range(8)},
    "mtu": 9100, "pfc_watchdog": [3, 4], "buffer_lossless": [3, 4]}}}


def codes(items):
    return sorted(i["code"] for i in items)


def test_nvidia_host_and_cumulus_port_agree():
    assert disagreements(HOST, CUMULUS, "swp8") == []
    assert disagreements(HOST, CUMULUS, "swp8", NVIDIA) == []


def test_nvidia_host_on_a_stock_sonic_port_says_what_a_network_engineer_needs():
    items = disagreements(HOST, SONIC, "Ethernet8")
    lossy = [i for i in items if i["code"] == "roce_dscp_lossy_on_switch"][0]
    assert lossy["message"] == ("DSCP 26 is lossless priority 3 on the host but lands in lossy TC1 on the switch port "
                                "Ethernet8 (PFC there: 3,4).")
    assert (lossy["host"], lossy["switch"]) == (3, 1)
    assert codes(items) == ["cnp_not_strict_on_switch", "ecn_off_on_switch", "pfc_mismatch",
                            "roce_dscp_lossy_on_switch", "roce_priority_mismatch"]


@pytest.mark.parametrize("side, change, code", [
    ("host", {"trust": "pcp"}, "trust_mismatch"),
    ("host", {"dscp_to_priority": {**DEFAULT_MAP, **{26: 0}}}, "roce_dscp_not_lossless_on_host"),
    ("host", {"pfc": [3, 4]}, "pfc_mismatch"),
    ("host", {"ecn_rp": []}, "ecn_off_on_host"),
    ("host", {"ecn_np": [0]}, "ecn_off_on_host"),
    ("host", {"ets": {0: {"mode": "ets", "weight": 50}, 3: {"mode": "ets", "weight": 50},
                      6: {"mode": "ets", "weight": 0}}}, "cnp_not_strict_on_host"),
    ("host", {"mtu": 9216}, "mtu_too_small"),
    ("host", {"buffer_lossless": []}, "no_lossless_buffer_on_host"),
    ("host", {"traffic_class": 96}, "tos_mismatch"),
    ("switch", {"dscp_to_priority": {**DEFAULT_MAP, **{26: 4, 48: 6}}, "pfc": [3, 4]}, "roce_priority_mismatch"),
    ("switch", {"ecn": {3: {"enabled": False}}}, "ecn_off_on_switch"),
    ("switch", {"ets": {6: {"mode": "ets", "weight": 10}}}, "cnp_not_strict_on_switch"),
    ("switch", {"mtu": 9000}, "mtu_too_small"),
    ("switch", {"pfc_watchdog": []}, "pfc_watchdog_off"),
    ("switch", {"buffer_lossless": []}, "no_lossless_buffer_on_switch"),
])
def test_each_disagreement_is_found_alone(side, change, code):
    host, switch = copy.deepcopy(HOST), copy.deepcopy(CUMULUS)
    (host if side == "host" else switch["ports"]["swp8"]).update(change)
    items = disagreements(host, switch, "swp8")
    assert code in codes(items)
    assert all(i["code"] in CODES and i["message"].endswith(".") for i in items)


def test_unknown_fields_are_skipped_not_guessed():
    assert disagreements({"mtu": 9000}, {"ports": {"swp1": {"pfc": [3]}}}, "swp1") == []


def test_roce_dscp_from_the_hosts_tos_without_a_profile():
    host = dict(HOST, roce_tos=162, traffic_class=162)  # DSCP 40
    items = disagreements(host, CUMULUS, "swp8")
    assert "roce_dscp_not_lossless_on_host" in codes(items)
    assert "DSCP 40 is priority 5 on the host" in items[0]["message"]


def test_each_side_against_the_profile():
    sonic_profile = resolve_profile({"preset": "sonic"}, "q")
    items = disagreements(HOST, CUMULUS, "swp8", sonic_profile)
    host_items = [i["message"] for i in items if i["code"] == "profile_mismatch_host"]
    assert "The host has PFC on priorities 3; the sonic profile wants 3,4." in host_items
    assert "The host has cma_roce_tos 106; the sonic profile wants 14." in host_items
    switch_items = [i["message"] for i in items if i["code"] == "profile_mismatch_switch"]
    assert "The switch port swp8 has ECN min bytes on queue 3 150000; the sonic profile wants 1048576." in switch_items
    assert "The switch port swp8 has ECN on queue 4 off; the sonic profile wants on." in switch_items


def test_a_port_missing_from_the_switch_facts_names_the_ports_there():
    with pytest.raises(KeyError, match="port swp9 is not in the nvue facts"):
        disagreements(HOST, CUMULUS, "swp9")


def test_link_rows_join_the_plan_with_the_facts():
    plan = {"cluster": {"fabrics": {"compute": {"qos": NVIDIA}, "storage": {"qos": None}}},
            "nodes": {"gpu01": {"rails": [
                {"fabric": "compute", "rail": 1, "interface": "ens1", "tor": "t1", "tor_port": "swp8"},
                {"fabric": "compute", "rail": 2, "interface": "ens2", "tor": "t2", "tor_port": "Ethernet8"},
                {"fabric": "compute", "rail": 3, "interface": "ens3", "tor": "t3", "tor_port": "swp3"},
                {"fabric": "storage", "rail": 1, "interface": "ens9", "tor": "s1", "tor_port": "swp1"}]}}}
    facts = {"gpu01": {"format": "mlnx_qos", "problems": [], "ports": {"ens1": HOST, "ens2": HOST, "ens3": HOST}}}
    rows = link_rows(plan, facts, {"t1": CUMULUS, "t2": SONIC})
    # CUMULUS states neither the PFC direction nor the pause-to-queue map: nothing disagrees on swp8, but those
    # stages were not compared
    assert [r["status"] for r in rows] == ["unchecked", "disagree", "error"]
    assert rows[0]["disagreements"] == [] and {"pfc_direction", "pfc_queue"} <= {u["topic"] for u in rows[0]["unchecked"]}
    assert rows[2]["error"] == "no configuration of ToR t3 was read"
    assert "roce_dscp_lossy_on_switch" in codes(rows[1]["disagreements"])


def test_every_code_is_documented_with_its_meaning():
    import os
    doc = open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "docs", "lossless-qos.md")).read()
    for code, meaning in CODES.items():
        assert "| `%s` | %s |" % (code, meaning) in doc


# -- issue 18: disagreements only; unchecked apart; profile by preset name; units --------------------------

def test_a_pair_that_agrees_without_a_profile_or_a_tos_gives_no_disagreement():
    host = dict(HOST, roce_tos=None, traffic_class=None)  # mlnx_qos/dcb alone print no ToS
    verdict = lossless_check(host, CUMULUS, "swp8")
    assert verdict["disagreements"] == []
    assert {"topic": "roce_dscp", "reason": "no profile was given and the host's RoCE ToS was not read"} in \
        verdict["unchecked"]
    assert disagreements(host, CUMULUS, "swp8") == []


def test_without_a_profile_or_tos_the_lossless_dscps_of_both_sides_are_compared():
    host = dict(HOST, roce_tos=None, traffic_class=None)
    items = disagreements(host, SONIC, "Ethernet8")
    lossless = [i for i in items if i["code"] == "lossless_dscp_mismatch"]
    assert [i["message"] for i in lossless] == [
        "DSCP 24,25,26,27,28,29,30,31 are lossless on the host (priority 3) but lossy on the switch port Ethernet8 "
        "(priority 1; PFC there: 3,4).",
        "DSCP 3,4 are lossless on the switch port Ethernet8 (priority 3,4) but lossy on the host (priority 0; PFC "
        "there: 3)."]
    assert "pfc_mismatch" in codes(items)


def test_unread_inputs_are_listed_as_unchecked_never_as_agreement():
    switch = {"ports": {"swp1": {"pfc": [3]}}}
    verdict = lossless_check({"mtu": 9000, "pfc": [3]}, switch, "swp1", "nvidia")
    topics = [u["topic"] for u in verdict["unchecked"]]
    for topic in ("trust", "mtu", "ecn_switch", "buffer_switch", "buffer_host"):
        assert topic in topics, topic
    assert [u for u in verdict["unchecked"] if u["topic"] == "mtu"][0]["reason"] == \
        "the MTU of the switch port swp1 was not read"
    assert all(set(u) == {"topic", "reason"} and u["topic"] in TOPICS for u in verdict["unchecked"])


def test_profile_by_preset_name_and_one_line_errors():
    assert disagreements(HOST, CUMULUS, "swp8", "nvidia") == []
    assert disagreements(HOST, CUMULUS, "swp8", "nvidia") == disagreements(HOST, CUMULUS, "swp8", NVIDIA)
    for bad, needle in ((42, "neither a preset name nor a resolved profile"), ("nvidea", "is not a preset"),
                        ({"preset": "nvidia"}, "is not a resolved profile"), (["nvidia"], "neither a preset")):
        with pytest.raises(ValueError, match=needle) as info:
            disagreements(HOST, CUMULUS, "swp8", bad)
        assert "\n" not in str(info.value)


@pytest.mark.parametrize("have, agrees", [(150000, True), (153600, True), (146 * 1024, True), (160000, False),
                                          (150 * 1000 * 1024, False)])
def test_ecn_thresholds_compare_in_the_switchs_unit(have, agrees):
    switch = copy.deepcopy(CUMULUS)
    switch["ports"]["swp8"]["ecn"][3]["min_bytes"] = have
    items = [i for i in disagreements(HOST, switch, "swp8", "nvidia") if "ECN min bytes" in i["message"]]
    assert (items == []) is agrees


def test_a_host_only_profile_still_wants_ecn_on_its_lossless_queue():
    spiderpool = resolve_profile({"preset": "spiderpool"}, "q")
    assert spiderpool["ecn_queues"] is None
    switch = copy.deepcopy(CUMULUS)
    port = switch["ports"]["swp8"]
    port["dscp_to_priority"] = {**port["dscp_to_priority"], 40: 5}
    port["pfc"] = [5]
    port["ecn"] = {5: {"enabled": False}}
    items = disagreements(dict(HOST, pfc=[5]), switch, "swp8", spiderpool)
    assert "The switch port swp8 has ECN on queue 5 off; the spiderpool profile wants on." in \
        [i["message"] for i in items]


# -- issue 18: defaults by omission ---------------------------------------------------------------------------
# A whole configuration states the NOS defaults by leaving commands out (docs/lossless-qos.md, "Defaults by
# omission"); the parsers fill them, so a port with no QoS at all disagrees with a lossless host instead of
# being "unchecked". Samples: data/qos/<nos>/ORIGIN.md.

DATA = join(dirname(__file__), "data", "qos")
# The switch-side topics of TOPICS and the codes that disagree on each (the watchdog and lossless buffers are
# only compared for PFC priorities, which a port without QoS has none of).
SWITCH_TOPICS = {
    "trust": {"trust_mismatch"},
    "roce_dscp": {"roce_dscp_lossy_on_switch", "roce_priority_mismatch"},
    "pfc": {"pfc_mismatch"},
    "ecn_switch": {"ecn_off_on_switch"},
    "cnp_switch": {"cnp_not_strict_on_switch"},
    "mtu": {"mtu_too_small"},
}
# (format, sample, port with no QoS, topics whose default no vendor documentation states (unchecked), topics
# where the NOS default happens to agree with the host)
BARE_PORTS = [
    ("eos", "eos/leaf_whole_running_config.cfg", "Ethernet2", {"cnp_switch", "mtu"}, set()),
    ("eos", "eos/leaf_whole_running_config.cfg", "Ethernet3", {"cnp_switch"}, {"trust"}),  # routed: trusts DSCP
    ("nxos", "nxos/leaf_no_qos.cfg", "Ethernet1/2", {"cnp_switch", "mtu"}, set()),
    ("nxos", "nxos/leaf_no_qos.cfg", "Ethernet1/1", {"cnp_switch"}, {"mtu"}),  # mtu 9216 stated
    ("os10", "os10/leaf_no_qos.cfg", "ethernet1/1/2", {"cnp_switch"}, set()),
    ("nvue", "nvue/nv-config-no-qos.yaml.txt", "swp2", set(), {"mtu"}),  # MTU 9216 by default
    ("sonic_config_db", "sonic/filter_fdb_config_db.json", "Ethernet0", {"cnp_switch"}, {"mtu"}),  # mtu 9100
]


def read_sample(name):
    with open(join(DATA, name)) as handle:
        return handle.read()


def parsed(fmt, name):
    if fmt == "nvue":
        pytest.importorskip("yaml")
    facts = parse_qos(read_sample(name), fmt)
    assert facts["problems"] == []
    return facts


@pytest.mark.parametrize("fmt, sample, port, unchecked, agree", BARE_PORTS,
                         ids=["%s-%s" % (b[0], b[2]) for b in BARE_PORTS])
def test_a_port_with_nothing_configured_disagrees_on_every_lossless_topic(fmt, sample, port, unchecked, agree):
    verdict = lossless_check(HOST, parsed(fmt, sample), port)
    found = set(codes(verdict["disagreements"]))
    for topic, topic_codes in SWITCH_TOPICS.items():
        if topic in unchecked or topic in agree:
            assert not topic_codes & found, (topic, found)
        else:
            assert topic_codes & found, (topic, found)
    # defaults answered everything else: only the undocumented defaults stay unchecked
    assert {u["topic"] for u in verdict["unchecked"]} == unchecked
    # and against the fabric's profile, the switch port is what differs
    assert "profile_mismatch_switch" in codes(disagreements(HOST, parsed(fmt, sample), port, "nvidia"))


@pytest.mark.parametrize("fmt, sample, port, profile", [
    ("eos", "eos/leaf_whole_running_config.cfg", "Ethernet1", None),       # qos profile ROCE-LEAF, watchdog on
    ("nvue", "nvue/nv-config-roce-lossless.yaml.txt", "swp1", "nvidia"),   # the RoCE defaults; nvidia: no watchdog
])
def test_a_fully_configured_port_of_a_whole_configuration_still_agrees(fmt, sample, port, profile):
    assert disagreements(HOST, parsed(fmt, sample), port, profile) == []


def test_cumulus_roce_defaults_leave_the_pfc_watchdog_off():
    # nv config show states no pfc-watchdog: off by default, which a fabric that wants the watchdog hears about
    items = disagreements(HOST, parsed("nvue", "nvue/nv-config-roce-lossless.yaml.txt"), "swp1")
    assert codes(items) == ["pfc_watchdog_off"]


@pytest.mark.parametrize("fmt, sample, port, topics", [
    # nv show qos roce: a show output, no MTU and no watchdog in it
    ("nvue_roce", "nvue/nv-show-qos-roce-cl56.txt", "", {"mtu", "pfc_watchdog"}),
    # an interface section of the running-config: nothing global, nothing it omits is known
    ("eos", "eos/show_running_config_interfaces_ethernet2.txt", "Ethernet2",
     {"trust", "roce_dscp", "pfc", "ecn_switch", "cnp_switch", "mtu"}),
])
def test_a_partial_source_leaves_what_it_omits_unchecked(fmt, sample, port, topics):
    verdict = lossless_check(HOST, parsed(fmt, sample), port)
    assert verdict["disagreements"] == []
    assert topics <= {u["topic"] for u in verdict["unchecked"]}


def test_a_config_db_fragment_is_not_read_as_a_whole_config_db():
    # the same real config_db without DEVICE_METADATA (a fragment, as a qos.json render or this collection's patch)
    data = json.loads(read_sample("sonic/filter_fdb_config_db.json"))
    del data["DEVICE_METADATA"]
    verdict = lossless_check(HOST, parse_qos(json.dumps(data), "sonic_config_db"), "Ethernet0")
    assert verdict["disagreements"] == []
    assert {"trust", "pfc", "ecn_switch"} <= {u["topic"] for u in verdict["unchecked"]}


# -- issue 29: the check follows one RoCE packet (and one CNP) through the switch pipeline ----------------------
# Each case below changes exactly one stage of a real-layout configuration; its control (all stages right) agrees.

def _sonic_whole(**port):
    """A whole config_db from the real sonic-utilities sample data/qos/sonic/filter_fdb_config_db.json (ORIGIN.md):
    its stock AZURE maps (TC_TO_PRIORITY_GROUP_MAP 3 -> 3, 4 -> 4, the rest -> 0/7; MAP_PFC_PRIORITY_TO_QUEUE
    identity), PORT_QOS_MAP|Ethernet4 with pfc_enable 3,4, WRED on queues 3-4, PFC_WD per port; plus what a
    running switch also has: pfcwd_sw_enable and the config_db version db_migrator leaves with it (version_3_0_4 ->
    version_3_0_5 copies pfc_enable into it; the sample is at version_1_0_1) and the lossless PGs 3-4 (dynamic
    model)."""
    data = json.loads(read_sample("sonic/filter_fdb_config_db.json"))
    data["PORT_QOS_MAP"]["Ethernet4"]["pfcwd_sw_enable"] = "3,4"
    data["VERSIONS"]["DATABASE"]["VERSION"] = "version_3_0_6"
    data["BUFFER_PG"]["Ethernet4|3-4"] = {"profile": "NULL"}
    for key, value in port.items():
        if value is None:
            data["PORT_QOS_MAP"]["Ethernet4"].pop(key)
        else:
            data["PORT_QOS_MAP"]["Ethernet4"][key] = value
    return data


def _sonic_verdict(data):
    from ansible_collections.ainet.fabric.plugins.module_utils.desired.roce_qos import desired
    # the host as roce_qos leaves it for the sonic preset (DSCP 3, PFC 3,4), with its receive buffers read
    host = dict(desired(resolve_profile({"preset": "sonic"}, "q")), mtu=9000, buffer_lossless=[3, 4])
    facts = parse_qos(json.dumps(data), "sonic_config_db")
    assert facts["problems"] == []
    return lossless_check(host, facts, "Ethernet4", "sonic")


def test_sonic_control_every_stage_right_agrees():
    assert _sonic_verdict(_sonic_whole()) == {"verdict": "agree", "disagreements": [], "unchecked": [], "advice": []}


def test_sonic_roce_tc_mapped_to_a_lossy_priority_group_has_no_lossless_buffer():
    # BUFFER_PG names PGs 3-4 lossless, but the port's TC -> PG map sends TC 3 to PG 0 (the stock map's lossy PG)
    data = _sonic_whole(tc_to_pg_map="LOSSY3")
    data["TC_TO_PRIORITY_GROUP_MAP"]["LOSSY3"] = dict(data["TC_TO_PRIORITY_GROUP_MAP"]["AZURE"], **{"3": "0"})
    verdict = _sonic_verdict(data)
    assert [(i["code"], i["message"]) for i in verdict["disagreements"]] == [(
        "no_lossless_buffer_on_switch",
        "Priority 3 has PFC but is buffered in priority group 0 on the switch port Ethernet4, which has no lossless "
        "buffer (lossless groups: 3,4): pause frames come too late to prevent drops.")]


def test_sonic_without_a_tc_to_pg_map_the_buffer_is_unchecked_not_agreed():
    # SAI: "Default no map" and not which PG a TC lands in: PG numbers are not priorities
    verdict = _sonic_verdict(_sonic_whole(tc_to_pg_map=None))
    assert verdict["disagreements"] == []
    assert [u["topic"] for u in verdict["unchecked"]] == ["buffer_switch"]
    assert "no TC -> priority group map" in verdict["unchecked"][0]["reason"]


def test_sonic_pfc_priority_pausing_another_queue_disagrees():
    data = _sonic_whole(pfc_to_queue_map="SWAP")
    data["MAP_PFC_PRIORITY_TO_QUEUE"]["SWAP"] = dict(data["MAP_PFC_PRIORITY_TO_QUEUE"]["AZURE"], **{"3": "4", "4": "3"})
    items = _sonic_verdict(data)["disagreements"]
    assert codes(items) == ["pfc_pauses_other_queue", "pfc_pauses_other_queue"]
    assert items[0]["message"] == ("A pause frame for PFC priority 3 stops queue 4 on the switch port Ethernet4, but "
                                   "priority 3 leaves on queue 3: the host's pauses do not hold back the traffic that "
                                   "fills its buffer.")
    assert _sonic_verdict(_sonic_whole(pfc_to_queue_map=None))["unchecked"][0]["topic"] == "pfc_queue"


def test_sonic_port_without_pfcwd_sw_enable_has_the_watchdog_off():
    # sonic-swss qosorch.cpp: pfcwd_sw_enable absent -> bit mask 0 -> pfcwdorch arms no queue (not pfc_enable's)
    verdict = _sonic_verdict(_sonic_whole(pfcwd_sw_enable=None))
    assert codes(verdict["disagreements"]) == ["pfc_watchdog_off"]


NVUE_RX_OFF = "nvue/nv-config-roce-pfc-rx-disabled.yaml.txt"


def test_nvue_control_roce_lossless_agrees():
    verdict = lossless_check(HOST, parsed("nvue", "nvue/nv-config-roce-lossless.yaml.txt"), "swp1", "nvidia")
    assert verdict["disagreements"] == [] and verdict["advice"] == []


@pytest.mark.parametrize("direction, code, says", [
    ("rx", "pfc_rx_off_on_switch", "PFC priority 3 on the switch port swp1 has PFC rx disabled: the port ignores "
                                   "the host's pause frames"),
    ("tx", "pfc_tx_off_on_switch", "PFC priority 3 on the switch port swp1 has PFC tx disabled: the port never "
                                   "sends pause frames"),
])
def test_nvue_pfc_profile_with_one_direction_disabled_disagrees(direction, code, says):
    text = read_sample(NVUE_RX_OFF)
    if direction == "tx":
        text = text.replace("rx: disable", "rx: enable").replace("tx: enable", "tx: disable")
    pytest.importorskip("yaml")
    facts = parse_qos(text, "nvue")
    assert facts["problems"] == []
    items = disagreements(HOST, facts, "swp1", "nvidia")
    assert codes(items) == [code]
    assert items[0]["message"].startswith(says)


EOS_ECN = "random-detect ecn minimum-threshold 256 kbytes maximum-threshold 512 kbytes"


@pytest.mark.parametrize("minimum, maximum, wrong", [
    ("150 kbytes", "1500 kbytes", []),                      # control: the decimal count in kbytes
    ("146 kbytes", "1465 kbytes", []),                      # the profile's bytes rounded to kbytes
    ("150000 bytes", "1500000 bytes", []),                  # bytes, exact
    ("0 mbytes", "1500 kbytes", ["min"]),                   # counts to 0: marks from the first byte
    ("150 kbytes", "1 mbytes", ["max"]),                    # 1,048,576 B is 30 % off 1,500,000 B
    ("140 kbytes", "1500 kbytes", ["min"]),                 # 143,360 B: rounds to 146 kbytes, not 140
])
def test_eos_ecn_thresholds_compare_in_eos_units(minimum, maximum, wrong):
    # the real-layout EOS running-config of data/qos/eos (ORIGIN.md), its qos profile's RoCE queue thresholds set
    text = read_sample("eos/leaf_whole_running_config.cfg")
    assert EOS_ECN in text
    text = text.replace(EOS_ECN, "random-detect ecn minimum-threshold %s maximum-threshold %s" % (minimum, maximum))
    profile = resolve_profile({"preset": "nvidia"}, "q")
    assert (profile["ecn_min_bytes"], profile["ecn_max_bytes"]) == (150000, 1500000)
    facts = parse_qos(text, "eos")
    assert facts["problems"] == []
    items = [i["message"] for i in disagreements(HOST, facts, "Ethernet1", profile) if "ECN m" in i["message"]]
    assert sorted(m.split("ECN ")[1].split(" bytes")[0] for m in items) == wrong


def test_nvidia_default_host_table_against_a_switch_mapping_only_the_roce_dscp_is_advice():
    # host: the real `mlnx_qos -i eth4 --trust dscp` output of data/qos/host (NVIDIA's default table, DSCP d -> d // 8,
    # PFC on 3: DSCP 24-31 lossless); no ToS read, no profile. Switch: the real whole config_db with a DSCP map that
    # places only the RoCE DSCP 26 (TC 3) and the CNP DSCP 48 (TC 6): every other DSCP is TC 0 (SAI default TC).
    host = parse_qos(read_sample("host/mlnx_qos-netarbiter-eth4.txt"), "mlnx_qos")
    data = _sonic_whole(pfc_enable="3", pfcwd_sw_enable="3")
    data["DSCP_TO_TC_MAP"]["AZURE"] = {"26": "3", "48": "6"}
    verdict = lossless_check(host, parse_qos(json.dumps(data), "sonic_config_db"), "Ethernet4")
    assert "lossless_dscp_mismatch" not in codes(verdict["disagreements"])
    assert "roce_dscp" in [u["topic"] for u in verdict["unchecked"]]   # which DSCP RoCE uses is still not known
    assert [a["message"] for a in verdict["advice"]] == [
        "DSCP 24,25,27,28,29,30,31 are lossless on the host (priority 3) but lossy on the switch port Ethernet4 "
        "(priority 0; PFC there: 3); only DSCP 26 is lossless on both ends, so RoCE must use it (read the host's RoCE "
        "ToS or name a profile to have it judged)."]
    # one stage wrong: the switch's one lossless code point on another PFC priority (TC 4) than the host's
    data["DSCP_TO_TC_MAP"]["AZURE"] = {"26": "4", "48": "6"}
    data["PORT_QOS_MAP"]["Ethernet4"].update(pfc_enable="4", pfcwd_sw_enable="4")
    items = disagreements(host, parse_qos(json.dumps(data), "sonic_config_db"), "Ethernet4")
    assert "roce_priority_mismatch" in codes(items)
    # or in a lossy TC: no code point is lossless on both ends, whatever DSCP RoCE uses
    data["DSCP_TO_TC_MAP"]["AZURE"] = {"26": "1", "48": "6"}
    data["PORT_QOS_MAP"]["Ethernet4"].update(pfc_enable="3", pfcwd_sw_enable="3")
    items = disagreements(host, parse_qos(json.dumps(data), "sonic_config_db"), "Ethernet4")
    assert codes(items) == ["lossless_dscp_mismatch"]


# -- issue 29, NX-OS: which qos-group the no-drop class covers, which class RoCE reaches, and PFC mode auto ----------
# data/qos/nxos/roce_pipeline_qos_group.cfg (ORIGIN.md): a whole running-config in the layout of a public Nexus 9000
# RoCEv2 configuration (RoCE DSCP 26 -> qos-group 5, CNP DSCP 48 -> qos-group 6, c-8q-nq5 pausing pfc-cos 5, WRED ECN
# on queue 5, queue 6 strict). The host: NVIDIA's RoCE ToS 106 (DSCP 26) on priority 5, PFC on 5, CNPs on strict 6.
NXOS_SAMPLE = "nxos/roce_pipeline_qos_group.cfg"
NXOS_HOST = {"trust": "dscp", "dscp_to_priority": {**DEFAULT_MAP, **{26: 5, 48: 6}}, "pfc": [5],
             "priority_to_queue": {p: p for p in range(8)},
             "ets": {0: {"mode": "ets", "weight": 50}, 5: {"mode": "ets", "weight": 50}, 6: {"mode": "strict"}},
             "ecn_rp": [5], "ecn_np": [5], "cnp_dscp": 48, "cnp_priority": 6, "mtu": 9000, "buffer_lossless": [5],
             "roce_tos": 106, "traffic_class": 106, "dcbx": "OS controlled"}


def _nxos_verdict(old=None, new=None, **host):
    text = read_sample(NXOS_SAMPLE)
    if old is not None:
        assert old in text
        text = text.replace(old, new)
    facts = parse_qos(text, "nxos")
    assert facts["problems"] == []
    return lossless_check(dict(NXOS_HOST, **host), facts, "Ethernet1/51")


def test_nxos_control_every_stage_right_agrees():
    assert _nxos_verdict() == {"verdict": "agree", "disagreements": [], "unchecked": [], "advice": []}


def test_nxos_pause_in_a_class_whose_qos_group_roce_does_not_reach_is_lossy():
    # pfc-cos 5 is still paused, but in c-8q-nq4: qos-group 4 is the no-drop buffer, RoCE is set to qos-group 5.
    # (Issue 29 review: PFC runs per pfc-cos, so PFC 5 agrees; the disagreement is the buffer stage: qos-group 5 is
    # lossy and CoS 5's pauses are sent by, and stop, qos-group 4. Was pfc_mismatch + roce_dscp_lossy_on_switch.)
    verdict = _nxos_verdict("class type network-qos c-8q-nq5\n    pause pfc-cos 5",
                            "class type network-qos c-8q-nq4\n    pause pfc-cos 5")
    assert codes(verdict["disagreements"]) == ["no_lossless_buffer_on_switch", "pfc_pauses_other_queue"]
    lossy = [i for i in verdict["disagreements"] if i["code"] == "no_lossless_buffer_on_switch"][0]
    assert lossy["switch"] == {"priority": [5], "priority_group": [5]}


def test_nxos_pfc_is_the_pfc_cos_of_the_no_drop_class_not_its_qos_group():
    # issue 29 field review N1 (nxos_n1_pfccos4.cfg): the no-drop class of RoCE's qos-group pauses CoS 4, so the
    # port's pause frames name priority 4 while the host's RoCE is priority 5 (show queuing interface: PFC_COS 4 ->
    # QOS_Group 5). Control: test_nxos_control_every_stage_right_agrees (pause pfc-cos 5).
    verdict = _nxos_verdict("class type network-qos c-8q-nq5\n    pause pfc-cos 5",
                            "class type network-qos c-8q-nq5\n    pause pfc-cos 4")
    found = codes(verdict["disagreements"])
    assert "pfc_mismatch" in found
    item = [i for i in verdict["disagreements"] if i["code"] == "pfc_mismatch"][0]
    assert (item["host"], item["switch"]) == ([5], [4])
    facts = parse_qos(read_sample(NXOS_SAMPLE).replace("pause pfc-cos 5", "pause pfc-cos 4"), "nxos")
    port = facts["ports"]["Ethernet1/51"]
    stages = (port["pfc"], port["buffer_lossless_pg"], port["pfc_to_pg"], port["pfc_to_queue"])
    assert stages == ([4], [5], {4: 5}, {4: 5})


@pytest.mark.parametrize("condition", ["", "  match access-group name ONLY_TCP\n", "  match precedence 3\n"])
def test_nxos_match_all_with_a_condition_not_read_leaves_roce_unchecked(condition):
    # issue 29 field review N4 (nxos_n4_matchall_acl.cfg): a match-all class with a condition the parser does not
    # read may not hold RoCE; DSCP 26 is then left out of the map (one problem line), so roce_dscp is unchecked, never
    # agreed. Control: the empty condition (roce_pipeline_qos_group.cfg as it is).
    old = "class-map type qos match-all RoCEv2-DATA\n  match dscp 26\n"
    text = read_sample(NXOS_SAMPLE)
    assert old in text
    facts = parse_qos(text.replace(old, old + condition), "nxos")
    verdict = lossless_check(NXOS_HOST, facts, "Ethernet1/51")
    if not condition:
        assert facts["problems"] == [] and verdict == {"verdict": "agree", "disagreements": [], "unchecked": [], "advice": []}
        return
    assert facts["problems"] == ["policy-map type qos QOS_MARKING (line 20): match-all class-map type qos RoCEv2-DATA "
                                 "also matches '%s', which is not read: DSCP 26 left out of dscp_to_priority"
                                 % condition.strip()[len("match "):]]
    assert 26 not in facts["ports"]["Ethernet1/51"]["dscp_to_priority"]
    assert "roce_dscp" in [u["topic"] for u in verdict["unchecked"]]
    assert codes(verdict["disagreements"]) == []


@pytest.mark.parametrize("match, lossy", [("match-all", True), ("match-any", False)])
def test_nxos_match_all_with_a_cos_condition_does_not_classify_untagged_roce(match, lossy):
    # match-all: DSCP 26 and CoS 5 must both hold; routed RoCE carries no CoS, so it falls into class-default
    verdict = _nxos_verdict("class-map type qos match-all RoCEv2-DATA\n  match dscp 26\n",
                            "class-map type qos %s RoCEv2-DATA\n  match dscp 26\n  match cos 5\n" % match)
    found = codes(verdict["disagreements"])
    if lossy:
        assert "roce_dscp_lossy_on_switch" in found and "roce_priority_mismatch" in found
        item = [i for i in verdict["disagreements"] if i["code"] == "roce_priority_mismatch"][0]
        assert (item["host"], item["switch"]) == (5, 0)
    else:
        assert verdict == {"verdict": "agree", "disagreements": [], "unchecked": [], "advice": []}


@pytest.mark.parametrize("dcbx, code, topic", [
    ("OS controlled", "pfc_not_negotiated", None),   # the firmware does not negotiate: PFC never turns on
    (None, None, "pfc"),                             # not read: unchecked, with the reason
    ("Firmware controlled", None, None),             # the NIC negotiates DCBX with the port
])
def test_nxos_pfc_mode_auto_is_judged_against_the_hosts_dcbx(dcbx, code, topic):
    verdict = _nxos_verdict("  priority-flow-control mode on\n", "", dcbx=dcbx)
    assert codes(verdict["disagreements"]) == ([code] if code else [])
    assert [u["topic"] for u in verdict["unchecked"]] == ([topic] if topic else [])
    if code:
        assert verdict["disagreements"][0]["message"].startswith(
            "The switch port Ethernet1/51 runs priority-flow-control mode auto, which turns PFC on priority 5 on only "
            "when DCBX negotiates it, but the host NIC's DCBX mode is OS controlled")
    if topic:
        assert "DCBX mode was not read" in verdict["unchecked"][0]["reason"]


@pytest.mark.parametrize("group, agrees", [(3, True), (5, False)])
def test_os10_no_drop_class_whose_qos_group_is_not_the_pfc_cos_has_no_lossless_buffer(group, agrees):
    # Dell's real AX/Azure Local TOR1 config (data/qos/os10/ORIGIN.md): class SmbStorage matches qos-group 3 and pauses
    # pfc-cos 3; with it matching qos-group 5 instead, PFC still runs on CoS 3 but the lossless buffer is traffic class
    # 5, not the class 3 the SMB/RDMA traffic is in. (Issue 29 review: was pfc_mismatch, PFC taken as the qos-group.)
    text = read_sample("os10/dell_ax_azurelocal_s4148f_tor1.cfg")
    old = "class-map type network-qos SmbStorage\n match qos-group 3\n"
    assert old in text
    facts = parse_qos(text.replace(old, old.replace("3", str(group))), "os10")
    host = {"trust": "pcp", "pfc": [3], "buffer_lossless": [3], "mtu": 9000}
    verdict = lossless_check(host, facts, "ethernet1/1/1")
    assert ("no_lossless_buffer_on_switch" in codes(verdict["disagreements"])) is not agrees
    if agrees:
        assert codes(verdict["disagreements"]) == []


@pytest.mark.parametrize("cos, agrees", [(3, True), (4, False)])
def test_os10_pfc_is_the_pfc_cos_of_the_pause_class(cos, agrees):
    # issue 29 field review O1 (os10_o1_pfccos4.cfg) on Dell's real AX/Azure Local TOR1 config: class SmbStorage
    # (qos-group 3) pauses pfc-cos 4, so the port's pause frames name priority 4 while the host's is 3. Control: 3.
    text = read_sample("os10/dell_ax_azurelocal_s4148f_tor1.cfg")
    old = " class SmbStorage\n  pause\n  pfc-cos 3\n"
    assert old in text
    facts = parse_qos(text.replace(old, old.replace("pfc-cos 3", "pfc-cos %d" % cos)), "os10")
    port = facts["ports"]["ethernet1/1/1"]
    assert (port["pfc"], port["buffer_lossless_pg"], port["pfc_to_pg"]) == ([cos], [3], {cos: 3})
    host = {"trust": "pcp", "pfc": [3], "buffer_lossless": [3], "mtu": 9000}
    verdict = lossless_check(host, facts, "ethernet1/1/1")
    if agrees:
        assert codes(verdict["disagreements"]) == []
    else:
        item = [i for i in verdict["disagreements"] if i["code"] == "pfc_mismatch"][0]
        assert (item["host"], item["switch"]) == ([3], [4])


# -- issue 29, field review: each sample changes one stage of a real layout (the reviewer's, named per case) -------

def _sonic_facts(data):
    facts = parse_qos(json.dumps(data), "sonic_config_db")
    return facts, facts["ports"]["Ethernet4"]


def _with_pfc_to_pg(data, mapping):
    # sonic-buildimage qos_config.j2 (asic_type mellanox/barefoot): PFC_PRIORITY_TO_PRIORITY_GROUP_MAP AZURE bound by
    # pfc_to_pg_map on the PFC ports
    data["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"] = {"AZURE": mapping}
    data["PORT_QOS_MAP"]["Ethernet4"]["pfc_to_pg_map"] = "AZURE"
    return data


def test_sonic_pfc_priority_whose_pauses_another_priority_group_sends_disagrees():
    # review sample sonic_S1_pfc_to_pg_wrong: the Mellanox map sends priority 3's pauses from lossy PG 0
    verdict = _sonic_verdict(_with_pfc_to_pg(_sonic_whole(), {"3": "0", "4": "4"}))
    assert [(i["code"], i["message"]) for i in verdict["disagreements"]] == [(
        "pfc_pause_from_other_pg",
        "Priority 3 is buffered in lossless priority group 3 on the switch port Ethernet4, but its pause frames are "
        "sent by priority group 0 (PFC priority -> priority group map): the buffer that fills never pauses the host.")]
    # control: the stock map (3 -> 3, 4 -> 4)
    assert _sonic_verdict(_with_pfc_to_pg(_sonic_whole(), {"3": "3", "4": "4"}))["disagreements"] == []


def test_sonic_mellanox_platform_without_a_pfc_to_pg_map_leaves_the_buffer_unchecked():
    data = _sonic_whole()
    data["DEVICE_METADATA"]["localhost"]["platform"] = "x86_64-mlnx_msn2700-r0"
    verdict = _sonic_verdict(data)
    assert verdict["disagreements"] == []
    assert [(u["topic"], u["reason"]) for u in verdict["unchecked"]] == [(
        "buffer_switch", "PORT_QOS_MAP|Ethernet4 binds no pfc_to_pg_map on a Mellanox/Barefoot platform: which "
                         "priority group sends the pauses of each priority is the ASIC's default")]
    # the Dell (Broadcom) platform of the sample has no such stage: pauses come from the PG the TC is buffered in
    assert _sonic_facts(_sonic_whole())[1]["pfc_to_pg"] == {0: 0, 1: 0, 2: 0, 3: 3, 4: 4, 5: 0, 6: 0, 7: 7}


@pytest.mark.parametrize("profile, lossless", [
    # review sample sonic_S2_pg_lossless_name_without_xoff: the name says lossless, the definition has no xoff
    ({"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "3"}, False),
    ({"pool": "ingress_lossless_pool", "size": "0", "xon": "18432", "dynamic_th": "3"}, False),  # xon alone
    ({"pool": "ingress_lossless_pool", "size": "0", "xon": "18432", "xoff": "38816", "dynamic_th": "3"}, True),
])
def test_sonic_lossless_buffer_profile_is_the_one_with_xoff_not_the_one_named_so(profile, lossless):
    data = _sonic_whole()
    data["BUFFER_PG"]["Ethernet4|3-4"] = {"profile": "pg_lossless_100000_5m_profile"}
    data["BUFFER_PROFILE"]["pg_lossless_100000_5m_profile"] = profile
    verdict = _sonic_verdict(data)
    assert codes(verdict["disagreements"]) == ([] if lossless else ["no_lossless_buffer_on_switch"])


def test_sonic_dynamic_headroom_profile_is_lossless():
    # review sample sonic_S3_headroom_type_dynamic_is_lossless (buffermgrdyn.cpp: headroom_type dynamic -> lossless)
    data = _sonic_whole()
    data["BUFFER_PG"]["Ethernet4|3-4"] = {"profile": "roce_lossless"}
    data["BUFFER_PROFILE"]["roce_lossless"] = {"pool": "ingress_lossless_pool", "headroom_type": "dynamic",
                                               "dynamic_th": "1"}
    assert _sonic_verdict(data) == {"verdict": "agree", "disagreements": [], "unchecked": [], "advice": []}


@pytest.mark.parametrize("version, codes_, topics", [
    ("version_3_0_6", ["pfc_watchdog_off"], []),   # after db_migrator's version_3_0_4: absent = off
    ("version_2_0_0", [], []),                     # review sample sonic_S5: before the split, pfc_enable arms it
    (None, [], ["pfc_watchdog"]),                  # no VERSIONS and no pfcwd_sw_enable anywhere: cannot tell
])
def test_sonic_watchdog_without_pfcwd_sw_enable_follows_the_config_db_version(version, codes_, topics):
    data = _sonic_whole(pfcwd_sw_enable=None)
    if version is None:
        del data["VERSIONS"]
    else:
        data["VERSIONS"]["DATABASE"]["VERSION"] = version
    verdict = _sonic_verdict(data)
    assert codes(verdict["disagreements"]) == codes_
    assert [u["topic"] for u in verdict["unchecked"]] == topics
    if topics:
        assert verdict["unchecked"][0]["reason"] == (
            "PORT_QOS_MAP|Ethernet4: no port states pfcwd_sw_enable and the config_db has no VERSIONS|DATABASE "
            "version: whether the watchdog follows pfc_enable (before version_3_0_5, SONiC 202111 and older) or "
            "pfcwd_sw_enable (absent: off) cannot be told")


def _queue5(data):
    """Review sample sonic_S7b_queue5_cnp_strict: TC 3 leaves on queue 5 (tc_to_queue_map and pfc_to_queue_map agree,
    WRED moved to queue 5, CNP queue 6 strict)."""
    data["PORT_QOS_MAP"]["Ethernet4"].update(tc_to_queue_map="Q5", pfc_to_queue_map="Q5")
    data["TC_TO_QUEUE_MAP"]["Q5"] = dict(data["TC_TO_QUEUE_MAP"]["AZURE"], **{"3": "5", "5": "3"})
    data["MAP_PFC_PRIORITY_TO_QUEUE"]["Q5"] = dict(data["MAP_PFC_PRIORITY_TO_QUEUE"]["AZURE"], **{"3": "5", "5": "3"})
    data["QUEUE"]["Ethernet4|5"] = dict(data["QUEUE"]["Ethernet4|3"])
    data["QUEUE"]["Ethernet4|3"] = {"scheduler": data["QUEUE"]["Ethernet4|3"]["scheduler"]}
    data["SCHEDULER"]["strict"] = {"type": "STRICT"}
    data["QUEUE"]["Ethernet4|6"] = {"scheduler": "strict"}
    return data


def test_sonic_watchdog_bit_watches_its_own_queue_not_the_one_roce_leaves_on():
    host = dict(_sonic_host(), cnp_priority=None)
    facts, port = _sonic_facts(_queue5(_sonic_whole()))
    assert port["pfc_watchdog_queue"] == {3: 3, 4: 4}  # pfcwdorch: bit i watches port.m_queue_ids[i]
    items = disagreements(host, facts, "Ethernet4")
    assert [(i["code"], i["message"]) for i in items] == [(
        "pfc_watchdog_off",
        "The PFC watchdog of lossless priority 3 on the switch port Ethernet4 watches queue 3, but priority 3 leaves "
        "on queue 5: a pause storm there is never detected nor broken.")]
    # control: the same port with TC 3 on queue 3
    control = _sonic_whole()
    control["SCHEDULER"]["strict"] = {"type": "STRICT"}
    control["QUEUE"]["Ethernet4|6"] = {"scheduler": "strict"}
    assert disagreements(host, parse_qos(json.dumps(control), "sonic_config_db"), "Ethernet4") == []


def _sonic_host():
    from ansible_collections.ainet.fabric.plugins.module_utils.desired.roce_qos import desired
    return dict(desired(resolve_profile({"preset": "sonic"}, "q")), mtu=9000, buffer_lossless=[3, 4])


def test_sonic_pfc_wd_entry_without_detection_time_is_no_watchdog():
    data = _sonic_whole()
    del data["PFC_WD"]["Ethernet4"]["detection_time"]
    facts, port = _sonic_facts(data)
    assert port["pfc_watchdog"] == []
    assert facts["problems"] == ["PFC_WD|Ethernet4: detection_time is missing; orchagent rejects the entry "
                                 "(pfcwdorch.cpp), so the watchdog is off on the port"]
    assert codes(disagreements(_sonic_host(), facts, "Ethernet4", "sonic")) == ["pfc_watchdog_off"]


def test_sonic_asymmetric_pfc_honours_pauses_on_every_priority_and_sends_them_on_pfc_enable():
    # portsorch.cpp setPortPfcAsym: pfc_asym on -> SEPARATE mode, TX = pfc_enable, RX = 0xff
    data = _sonic_whole()
    data["PORT"]["Ethernet4"]["pfc_asym"] = "on"
    port = _sonic_facts(data)[1]
    assert (port["pfc_rx"], port["pfc_tx"]) == (list(range(8)), [3, 4])
    assert _sonic_verdict(data)["disagreements"] == []


NV_ROCE = "nvue/nv-show-qos-roce-cl514.txt"


@pytest.mark.parametrize("row, code", [("rx-enabled", "pfc_rx_off_on_switch"), ("tx-enabled", "pfc_tx_off_on_switch")])
def test_nv_show_qos_roce_with_one_pfc_direction_disabled_disagrees(row, code):
    # review samples nvue_roce_R1_rx_disabled / R2: the real 5.14 output with one row flipped
    text = read_sample(NV_ROCE)
    old = "  %s        enabled" % row
    assert old in text
    items = disagreements(HOST, parse_qos(text.replace(old, old[:-len("enabled")] + "disabled"), "nvue_roce"), None,
                          "nvidia")
    assert codes(items) == [code]


def test_nv_show_qos_roce_stock_output_agrees_with_the_nvidia_preset():
    # NVIDIA's own defaults print 146.48 KB / 1.43 MB: within half a printed digit of 150,000 / 1,500,000 B
    for sample in (NV_ROCE, "nvue/nv-show-qos-roce-cl56.txt"):
        verdict = lossless_check(HOST, parse_qos(read_sample(sample), "nvue_roce"), None, "nvidia")
        assert verdict["disagreements"] == [], sample
        assert [u["topic"] for u in verdict["unchecked"]] == ["mtu"]
    text = read_sample(NV_ROCE).replace("146.48 KB", "150.00 KB")  # 153,600 B printed exactly: 2.4 % off
    assert codes(disagreements(HOST, parse_qos(text, "nvue_roce"), None, "nvidia")) == ["profile_mismatch_switch"] * 2


@pytest.mark.parametrize("unit", ["segments", "milliseconds"])
def test_eos_ecn_thresholds_not_in_bytes_are_unchecked_not_agreed(unit):
    # review samples eos_E1_segments / eos_E2_milliseconds (AVD schema ecn.threshold.units; Arista's guide: segments)
    text = read_sample("eos/leaf_whole_running_config.cfg").replace(
        EOS_ECN, "random-detect ecn minimum-threshold 1 %s maximum-threshold 2 %s" % (unit, unit))
    facts = parse_qos(text, "eos")
    assert facts["ports"]["Ethernet1"]["ecn_unit"][3] == {"min_bytes": unit, "max_bytes": unit}
    verdict = lossless_check(HOST, facts, "Ethernet1", "nvidia")
    assert not [i for i in verdict["disagreements"] if "queue 3" in i["message"] and "ECN m" in i["message"]]
    reasons = [u["reason"] for u in verdict["unchecked"] if u["topic"] == "ecn_switch"]
    assert reasons == ["the ECN min threshold of queue 3 on the switch port Ethernet1 is in %s, not bytes (its size "
                       "in bytes depends on the platform): not compared with the profile's 150000 bytes" % unit]


@pytest.mark.parametrize("minimum, maximum, wrong", [
    ("147 kbytes", "1464 kbytes", []),        # 0.35 % over and 0.06 % under: within 2.4 %, rounded either way
    ("153600 bytes", "1500 kbytes", ["min"]),  # bytes compare exactly (review sample eos_E3_bytes_153600)
    ("150 kbytes", "2 mbytes", ["max"]),       # review sample eos_E6: 40 % off
])
def test_eos_ecn_threshold_tolerance_follows_the_stated_unit(minimum, maximum, wrong):
    test_eos_ecn_thresholds_compare_in_eos_units(minimum, maximum, wrong)


def test_sonic_wred_bytes_compare_exactly():
    # review sample sonic_S6_wred_bytes_1000KiB: WRED_PROFILE thresholds are bytes; 1,024,000 is 2.3 % off 1,048,576
    data = _sonic_whole()
    data["WRED_PROFILE"]["AZURE_LOSSLESS"].update(green_min_threshold=str(1000 * 1024))
    items = _sonic_verdict(data)["disagreements"]
    assert [i["message"] for i in items] == [
        "The switch port Ethernet4 has ECN min bytes on queue %d 1024000; the sonic profile wants 1048576." % q
        for q in (3, 4)]


# ---- issue 40: an unread stage is never agreement, through any API --------------------------------------------------

OS10_PFC_POLICY = "policy-map type network-qos pfc-policy\n !\n class RoceData\n  pause\n  pfc-cos 3\n!\n"


def _os10(defined=True):
    text = read_sample("os10/roce_dscp_tor_layout_ax.cfg")
    assert OS10_PFC_POLICY in text
    return parse_qos(text if defined else text.replace(OS10_PFC_POLICY, ""), "os10")


def test_an_os10_port_whose_network_qos_policy_is_never_defined_is_unchecked_never_agree():
    facts = _os10(defined=False)
    assert facts["problems"] == ["policy-map type network-qos pfc-policy (interface config line 60) is referenced but "
                                 "not defined"]
    check = lossless_check(HOST, facts, "ethernet1/1/1", "nvidia")
    assert check["disagreements"] == [] and check["verdict"] == "unchecked"
    assert [u["topic"] for u in check["unchecked"]] == ["pfc"]
    assert lossless_diff(HOST, facts, "ethernet1/1/1", "nvidia") == [{
        "code": "unchecked", "topic": "pfc", "host": None, "switch": None,
        "message": "Not checked: the sets of PFC priorities (PFC of the switch port ethernet1/1/1 was not read)."}]


def test_the_os10_control_agrees_and_its_diff_is_empty():
    facts = _os10()
    assert lossless_check(HOST, facts, "ethernet1/1/1", "nvidia")["verdict"] == "agree"
    assert lossless_diff(HOST, facts, "ethernet1/1/1", "nvidia") == []


def test_disagreements_come_before_unchecked_entries_and_the_verdict_is_disagree():
    facts = _os10(defined=False)
    check = lossless_check(dict(HOST, mtu=9300), facts, "ethernet1/1/1", "nvidia")
    assert check["verdict"] == "disagree"
    assert [i["code"] for i in lossless_diff(dict(HOST, mtu=9300), facts, "ethernet1/1/1", "nvidia")] == \
        [d["code"] for d in check["disagreements"]] + ["unchecked"]


def test_link_rows_report_an_unread_stage_as_unchecked():
    plan = {"cluster": {"fabrics": {"compute": {"qos": NVIDIA}}}, "nodes": {"gpu01": {"rails": [
        {"fabric": "compute", "rail": 1, "interface": "ens1", "tor": "t1", "tor_port": "ethernet1/1/1"},
        {"fabric": "compute", "rail": 2, "interface": "ens1", "tor": "t2", "tor_port": "ethernet1/1/1"}]}}}
    host = {"gpu01": {"format": "mlnx_qos", "problems": [], "ports": {"ens1": HOST}}}
    rows = link_rows(plan, host, {"t1": _os10(defined=False), "t2": _os10()})
    assert [(r["status"], r["error"]) for r in rows] == [("unchecked", None), ("agree", None)]
