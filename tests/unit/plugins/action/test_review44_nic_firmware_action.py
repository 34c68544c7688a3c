# -*- coding: utf-8 -*-
"""Review 44 (nic_firmware) through the action with the stand-in tools of nic_firmware_standin.py: a raw array
element on cards whose mlxconfig lists the array (docs/reviews/44-nic-firmware.md, D2). The stand-in mlxconfig
prints an array as mstflint's mlxcfg_ui.cpp does: one "Array[0..7]" row in a plain query, the element rows NAME[i]
for "query NAME[a..b]" (the operator's pkg/nvconfig/utils.go queryMLXConfig queries them so)."""

from __future__ import annotations

import json

from ansible_collections.ainet.fabric.tests.unit.plugins.action.test_nic_firmware import (  # noqa: F401 (host is a fixture) # pylint: disable=unused-import
    NICS, cards, host, task)

ARRAY = "ESWITCH_HAIRPIN_DESCRIPTORS"
NICS_FIRST = sorted(NICS)[0]


def with_array(tmp_path):
    state = cards(tmp_path)
    for card in state.values():
        for nv in card["nv"].values():
            nv[ARRAY] = ["Array[0..7]"] * 3
            nv.update(("%s[%d]" % (ARRAY, i), ["64", "64", "64"]) for i in range(8))
    (tmp_path / "fw.json").write_text(json.dumps(state))


def test_control_the_element_stand_in_serves_the_fleet_without_a_raw_list(capsys, host):
    with_array(host)
    result, _sent = task(capsys, host, check=True)
    assert not result.get("failed"), result.get("msg")
    assert not any(ARRAY in line for line in result["commands"])


def test_a_raw_array_element_is_planned_on_cards_that_list_the_array(capsys, host):
    with_array(host)
    result, _sent = task(capsys, host, check=True, raw=[{"name": ARRAY + "[1]", "value": 128}])
    assert not result.get("failed"), result.get("msg")
    sets = [line for line in result["commands"] if line.startswith("mlxconfig ")]
    assert len(sets) == len(NICS) and all(ARRAY + "[1]=128" in line for line in sets)


def test_a_raw_array_element_is_set_element_by_element_then_unchanged(capsys, host):
    with_array(host)
    result, _sent = task(capsys, host, raw=[{"name": ARRAY + "[1]", "value": 128}])
    assert not result.get("failed"), result.get("msg")
    nv = cards(host)[NICS_FIRST]["nv"][NICS_FIRST + ".0"]
    assert nv[ARRAY + "[1]"] == ["64", "64", "128"] and nv[ARRAY + "[2]"] == ["64", "64", "64"]
    again, _sent = task(capsys, host, raw=[{"name": ARRAY + "[1]", "value": 128}])
    assert not again["changed"] and again["commands"] == []
    assert any("%s[1] of %s.0" % (ARRAY, NICS_FIRST) in line for line in again["reboot_pending"])


def test_an_element_outside_the_array_is_refused(capsys, host):
    with_array(host)
    result, _sent = task(capsys, host, check=True, raw=[{"name": ARRAY + "[8]", "value": 128}])
    assert result["failed"] and "%s[8] is outside the array %s[0..7]" % (ARRAY, ARRAY) in result["msg"]
