# -*- coding: utf-8 -*-
"""Review 44 (nic_firmware) through the action with the stand-in tools of nic_firmware_standin.py: a raw array
element on cards whose mlxconfig lists the array (docs/reviews/44-nic-firmware.md, D2)."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.ainet.fabric.tests.unit.plugins.action import nic_firmware_standin as standin
from ansible_collections.ainet.fabric.tests.unit.plugins.action.test_nic_firmware import (  # noqa: F401 (fixture)
    NICS, cards, host, task)

ARRAY = "ESWITCH_HAIRPIN_DESCRIPTORS"
# mlxconfig as the stand-in, plus what mstflint's mlxcfg_ui.cpp does with arrays: a plain query prints one
# "Array[0..7]" row for the array; "query NAME[a..b]" prints the element rows NAME[i]
# (the operator's pkg/nvconfig/utils.go queryMLXConfig queries them so)
ELEMENTS = standin.COMMON + r'''
import re
dev = args[args.index("-d") + 1]
slot = slot_of(dev)
nv = fw[slot]["nv"][dev]
names = args[args.index("query") + 1:] if "query" in args else []
if "query" in args:
    rows = sorted(n for n in nv if "[" not in n)
    for name in names:
        m = re.match(r"^(\w+)\[(\d+)\.\.(\d+)\]$", name)
        rows = ["%s[%d]" % (m.group(1), i) for i in range(int(m.group(2)), int(m.group(3)) + 1)] if m else [name]
    print("\nDevice #1:\n----------\n\nDevice type:        %s\nDevice:             %s\n" % (fw[slot]["type"], dev))
    print("Configurations:                                          Default             Current             Next Boot")
    for name in rows:
        d, cur, nxt = nv[name]
        print("%s        %-48s%-20s%-20s%s" % ("*" if cur != nxt else " ", name, d, cur, nxt))
    sys.exit(0)
if "set" in args:
    for name, value in [a.split("=", 1) for a in args[args.index("set") + 1:]]:
        if name not in nv or nv[name][2].startswith("Array"):
            sys.stderr.write("-E- The Device doesn't support %s parameter\n" % name)
            sys.exit(1)
        nv[name][2] = nv[name][2].split("(")[0] + "(" + value + ")" if "(" in nv[name][2] else value
    save()
    sys.exit(0)
sys.exit(255)
'''


def with_array(tmp_path):
    state = cards(tmp_path)
    for card in state.values():
        for nv in card["nv"].values():
            nv[ARRAY] = ["Array[0..7]"] * 3
            nv.update(("%s[%d]" % (ARRAY, i), ["64", "64", "64"]) for i in range(8))
    (tmp_path / "fw.json").write_text(json.dumps(state))
    path = tmp_path / "bin" / "mlxconfig"
    path.write_text(standin.HEAD + ELEMENTS)
    os.chmod(str(path), 0o755)


def test_control_the_element_stand_in_serves_the_fleet_without_a_raw_list(capsys, host):
    with_array(host)
    result, _sent = task(capsys, host, check=True)
    assert not result.get("failed"), result.get("msg")
    assert not any(ARRAY in line for line in result["commands"])


@pytest.mark.xfail(strict=True, reason="review 44 D2: a raw array element (ESWITCH_HAIRPIN_DESCRIPTORS[1]) on cards "
                   "whose mlxconfig lists the array fails the run as 'does not list': the module never queries "
                   "NAME[a..b] for the element rows")
def test_a_raw_array_element_is_planned_on_cards_that_list_the_array(capsys, host):
    with_array(host)
    result, _sent = task(capsys, host, check=True, raw=[{"name": ARRAY + "[1]", "value": 128}])
    assert not result.get("failed"), result.get("msg")
    sets = [line for line in result["commands"] if line.startswith("mlxconfig ")]
    assert len(sets) == len(NICS) and all(ARRAY + "[1]=128" in line for line in sets)
