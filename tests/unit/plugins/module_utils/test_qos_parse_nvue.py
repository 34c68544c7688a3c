# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the Cumulus NVUE QoS parsers (see data/qos/nvue/ORIGIN.md for every sample).

Every expected value was read off the sample (or the documented RoCE defaults) by eye."""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import FIELDS
from ansible_collections.ainet.fabric.plugins.module_utils.qos import qos_parse_nvue
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse_nvue import (
    expand_interfaces, parse_nvue, parse_nvue_roce)

DATA = os.path.join(os.path.dirname(__file__), "data", "qos", "nvue")


def read(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def test_module_imports_without_yaml_at_top():
    assert "yaml" not in vars(qos_parse_nvue)


# ------------------------------------------------------------------ nv show qos roce (real)

def test_nv_show_qos_roce_cl56():
    facts = parse_nvue_roce(read("nv-show-qos-roce-cl56.txt"))
    assert facts["format"] == "nvue_roce"
    assert facts["problems"] == []
    assert list(facts["ports"]) == [""]
    s = facts["ports"][""]
    assert set(s) == set(FIELDS)
    assert s["trust"] == "pcp,dscp"
    assert s["pfc"] == [3]
    assert s["dscp_to_priority"][26] == 3
    assert s["dscp_to_priority"][48] == 6
    assert s["dscp_to_priority"][0] == 0
    assert len(s["dscp_to_priority"]) == 64
    assert s["priority_to_queue"] == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 6, 7: 0}
    assert s["ets"][6] == {"mode": "strict", "weight": None}
    assert s["ets"][3] == {"mode": "ets", "weight": 50}
    assert s["ets"][0] == {"mode": "ets", "weight": 50}
    assert sorted(s["ecn"]) == [0, 3]
    assert s["ecn"][3]["enabled"] is True
    assert s["ecn"][3]["probability"] == 100
    assert abs(s["ecn"][3]["min_bytes"] - 150000) < 100          # "146.48 KB"
    assert abs(s["ecn"][3]["max_bytes"] - 1500000) < 6000        # "1.43 MB"
    assert s["buffer_lossless"] == [3]                            # roce-reserved-ingress
    assert s["mtu"] is None


def test_nv_show_qos_roce_cl514_single_ipool():
    s = parse_nvue_roce(read("nv-show-qos-roce-cl514.txt"))["ports"][""]
    assert s["pfc"] == [3]
    assert s["trust"] == "pcp,dscp"
    assert s["dscp_to_priority"][26] == 3
    assert s["priority_to_queue"][6] == 6
    assert sorted(s["ecn"]) == [0, 3]
    assert s["buffer_lossless"] == [3]


def test_nv_show_interface_qos_roce_status():
    facts = parse_nvue_roce(read("nv-show-interface-qos-roce-status-cl56.txt"))
    assert facts["problems"] == []
    s = facts["ports"][""]
    assert s["dscp_to_priority"] == {26: 3, 48: 6}
    assert s["priority_to_queue"] == {3: 3, 6: 6}
    assert s["ets"][6]["mode"] == "strict"
    assert s["ets"][3] == {"mode": "ets", "weight": 50}
    assert s["pfc"] == [3]
    assert s["trust"] == "pcp,dscp"
    assert abs(s["ecn"][3]["min_bytes"] - 153 * 1024) < 10       # "153.00 KB"
    assert s["buffer_lossless"] == [3]


def test_nv_show_qos_roce_garbage():
    assert parse_nvue_roce("")["problems"]
    facts = parse_nvue_roce("Error: command not found\n")
    assert facts["ports"] == {} and facts["problems"]


# ------------------------------------------------------------------ nv config show (synthetic)

def test_roce_lossless_defaults_apply_to_every_port():
    pytest.importorskip("yaml")
    facts = parse_nvue(read("nv-config-roce-lossless.yaml.txt"))
    assert facts["format"] == "nvue"
    assert facts["problems"] == []
    assert sorted(facts["ports"], key=lambda p: int(p[3:])) == ["swp%d" % n for n in range(1, 33)]
    s = facts["ports"]["swp17"]
    assert s["trust"] == "pcp,dscp"
    assert s["dscp_to_priority"][26] == 3
    assert s["dscp_to_priority"][48] == 6
    assert s["pfc"] == [3]
    assert s["priority_to_queue"][3] == 3 and s["priority_to_queue"][6] == 6 and s["priority_to_queue"][1] == 0
    assert s["ets"][6] == {"mode": "strict", "weight": None}
    assert s["ets"][3] == {"mode": "ets", "weight": 50}
    assert s["ecn"][3] == {"enabled": True, "min_bytes": 150000, "max_bytes": 1500000, "probability": 100}
    assert s["ecn"][0]["enabled"] is True
    assert s["buffer_lossless"] == [3]
    assert s["mtu"] == 9216
    assert s["pfc_watchdog"] == []  # nv config show: no interface enables it, so it is off (defaults by omission)
    assert [tc for tc, v in s["ecn"].items() if v["enabled"]] == [0, 3]  # the RoCE ECN TCs, the others off
    assert "lo" not in facts["ports"]


def test_roce_overrides_from_documented_commands():
    pytest.importorskip("yaml")
    facts = parse_nvue(read("nv-config-roce-overrides.yaml.txt"))
    assert facts["problems"] == []
    assert sorted(facts["ports"]) == ["swp1", "swp10", "swp2", "swp3", "swp4"]
    s = facts["ports"]["swp10"]
    assert s["dscp_to_priority"][26] == 4
    assert s["dscp_to_priority"][48] == 6
    assert s["priority_to_queue"][4] == 3
    assert s["priority_to_queue"][3] == 0
    assert s["trust"] == "pcp,dscp"
    assert s["pfc"] == [3]
    assert s["mtu"] == 9000


def test_profiles_without_roce():
    pytest.importorskip("yaml")
    facts = parse_nvue(read("nv-config-profiles.yaml.txt"))
    assert sorted(facts["ports"]) == ["swp1", "swp2", "swp3"]
    # nv config show (a header document): what it omits is the Cumulus default (defaults by omission)
    swp1 = facts["ports"]["swp1"]
    assert swp1["trust"] == "dscp"
    assert swp1["dscp_to_priority"] == {**{d: d // 8 for d in range(64)}, 26: 3, 48: 6}  # the default DSCP table
    assert swp1["pfc"] == [3, 4]
    # default-global congestion-control replaces the default ECN on TC 0
    assert swp1["ecn"][3] == {"enabled": True, "min_bytes": 150000, "max_bytes": 1500000, "probability": 100}
    assert [tc for tc, v in swp1["ecn"].items() if v["enabled"]] == [3]
    assert swp1["ets"] == {0: {"mode": "ets", "weight": 40}, 3: {"mode": "ets", "weight": 60},
                           6: {"mode": "strict", "weight": None}}
    assert swp1["mtu"] == 9216
    assert swp1["pfc_watchdog"] == [3, 4]
    assert swp1["priority_to_queue"] == {sp: sp for sp in range(8)} and swp1["buffer_lossless"] is None
    swp2 = facts["ports"]["swp2"]
    assert swp2["dscp_to_priority"][24] == 4 and swp2["dscp_to_priority"][26] == 3
    assert swp2["ecn"][4] == {"enabled": True, "min_bytes": 40000, "max_bytes": 200000, "probability": 50}
    assert [tc for tc, v in swp2["ecn"].items() if v["enabled"]] == [4]
    assert swp2["ets"][4] == {"mode": "ets", "weight": 90}
    assert swp2["pfc"] == [3, 4]
    assert swp2["mtu"] == 1500
    assert swp2["pfc_watchdog"] == []
    swp3 = facts["ports"]["swp3"]
    assert swp3["pfc"] is None
    assert any("swp3" in p and "missing-pfc" in p and "qos pfc" in p for p in facts["problems"])


def test_invalid_yaml_is_a_problem_not_an_exception():
    pytest.importorskip("yaml")
    facts = parse_nvue(read("nv-config-invalid.yaml.txt"))
    assert facts["ports"] == {}
    assert facts["problems"] and "invalid YAML" in facts["problems"][0]
    assert parse_nvue("")["problems"]
    assert parse_nvue("just a string")["problems"]


def test_global_only_config_and_unquoted_on():
    pytest.importorskip("yaml")
    facts = parse_nvue("- set:\n    qos:\n      roce:\n        enable: on\n        mode: lossy\n    system: {}\n")
    s = facts["ports"][""]
    assert s["pfc"] == [] and s["buffer_lossless"] == []
    assert s["ecn"][3]["enabled"] is True
    off = parse_nvue("- set:\n    qos:\n      roce:\n        enable: off\n    interface:\n      swp1: {}\n")
    assert off["ports"]["swp1"]["pfc"] is None and off["ports"]["swp1"]["trust"] is None


def test_expand_interfaces():
    assert expand_interfaces("swp1-4,swp10") == ["swp1", "swp2", "swp3", "swp4", "swp10"]
    assert expand_interfaces("swp1s0-3") == ["swp1s0", "swp1s1", "swp1s2", "swp1s3"]
    assert expand_interfaces("swp7") == ["swp7"]


# -- defaults by omission (docs/lossless-qos.md); samples in data/qos/nvue/ORIGIN.md --------------------------

def test_nv_config_show_without_qos_states_the_cumulus_defaults():
    pytest.importorskip("yaml")
    facts = parse_nvue(read("nv-config-no-qos.yaml.txt"))
    assert facts["problems"] == []
    assert sorted(facts["ports"]) == ["swp1", "swp2"]
    s = facts["ports"]["swp2"]
    assert s["trust"] == "pcp"  # traffic.packet_priority_source_set = [802.1p]
    assert s["dscp_to_priority"] == {d: d // 8 for d in range(64)}
    assert s["priority_to_queue"] == {sp: sp for sp in range(8)}
    assert s["pfc"] == [] and s["pfc_watchdog"] == []
    assert s["ecn"][0] == {"enabled": True, "min_bytes": 150000, "max_bytes": 1500000, "probability": 100}
    assert [tc for tc, v in s["ecn"].items() if v["enabled"]] == [0]
    assert s["ets"] == {tc: {"mode": "ets", "weight": 12 if tc % 2 == 0 else 13} for tc in range(8)}
    assert s["mtu"] == 9216
    assert s["buffer_lossless"] is None  # not documented for PFC ports without a pool: not filled


def test_a_set_body_without_the_header_states_nothing_it_omits():
    pytest.importorskip("yaml")
    body = read("nv-config-no-qos.yaml.txt").split("- set:", 1)[1]
    s = parse_nvue("- set:" + body)["ports"]["swp2"]
    assert all(s[field] is None for field in FIELDS)


def test_pfc_profile_directions_are_read():
    # issue 29: data/qos/nvue/nv-config-roce-pfc-rx-disabled.yaml.txt (ORIGIN.md): qos roce lossless, PFC profile
    # default-global with rx disable / tx enable on switch-priority 3
    pytest.importorskip("yaml")
    facts = parse_nvue(read("nv-config-roce-pfc-rx-disabled.yaml.txt"))
    assert facts["problems"] == []
    s = facts["ports"]["swp1"]
    assert (s["pfc"], s["pfc_rx"], s["pfc_tx"]) == ([3], [], [3])
    assert s["pfc_to_queue"] == s["priority_to_queue"]
    roce = parse_nvue(read("nv-config-roce-lossless.yaml.txt"))["ports"]["swp1"]
    assert (roce["pfc"], roce["pfc_rx"], roce["pfc_tx"]) == ([3], [3], [3])


# -- issue 29, field review ---------------------------------------------------------------------------------------

def test_nv_show_qos_roce_pfc_directions_and_print_resolution():
    # the real 5.14 output prints rx-enabled / tx-enabled under pfc; the review flipped one (sample nvue_roce_R1)
    text = read("nv-show-qos-roce-cl514.txt")
    s = parse_nvue_roce(text)["ports"][""]
    assert (s["pfc_rx"], s["pfc_tx"]) == ([3], [3])
    assert s["ecn_unit"][3] == {"min_bytes": 0.01 * 1024, "max_bytes": 0.01 * 1024 ** 2}  # 146.48 KB, 1.43 MB
    s = parse_nvue_roce(text.replace("  rx-enabled        enabled", "  rx-enabled        disabled"))["ports"][""]
    assert (s["pfc_rx"], s["pfc_tx"]) == ([], [3])
    # an output without the rows (synthetic: the same with both lines left out) does not say: None, never "both"
    lines = [line for line in text.splitlines() if "x-enabled" not in line]
    s = parse_nvue_roce("\n".join(lines))["ports"][""]
    assert s["pfc"] == [3] and (s["pfc_rx"], s["pfc_tx"]) == (None, None)
