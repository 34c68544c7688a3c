# -*- coding: utf-8 -*-
"""The cabling check against SONiC ToRs: lldpmgrd makes lldpd announce each port's alias (Port ID subtype local),
which the check maps to the plan's EthernetN through the ToR's config_db PORT table. Samples and their origin:
data/lldp/ORIGIN.md."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.ainet.fabric.plugins.action import cabling_check as action
from ansible_collections.ainet.fabric.plugins.module_utils.cabling.cabling_check import (
    check_cabling, findings_markdown,
)
from ansible_collections.ainet.fabric.plugins.module_utils.cabling.lldp_parse import parse_lldpcli_json
from ansible_collections.ainet.fabric.plugins.module_utils.cabling.port_names import planned_name
from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_sonic import lldp_port_aliases as sonic_port_aliases
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

DATA = os.path.join(os.path.dirname(__file__), "..", "module_utils", "data", "lldp")


def sample(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def aliases():
    return {"su1-leaf1": sonic_port_aliases(sample("sonic-config_db-t1-smartswitch.json")),
            "su1-leaf2": sonic_port_aliases(sample("sonic-config_db-sn4600c-d112c8-breakout.json"))}


def plan(port1="Ethernet8", port2="Ethernet2", platform="sonic"):
    rails = [{"fabric": "compute", "rail": 1, "interface": "ens1f0np0", "tor": "su1-leaf1", "tor_port": port1},
             {"fabric": "compute", "rail": 2, "interface": "ens2f0np0", "tor": "su1-leaf2", "tor_port": port2}]
    return {"nodes": {"gpu01": {"node_id": 1, "rails": rails}},
            "tors": {"su1-leaf1": {"platform": platform}, "su1-leaf2": {"platform": platform}}}


def neighbours():
    return {"gpu01": parse_lldpcli_json(sample("lldpcli-json0-sonic-alias-synthetic.json"))}


# --- the PORT table -------------------------------------------------------------------------------------------


def test_port_table_of_a_real_config_db_maps_every_alias():
    table = sonic_port_aliases(sample("sonic-config_db-t1-smartswitch.json"))
    assert len(table) == 32
    assert (table["etp1"], table["etp2"], table["etp32"]) == ("Ethernet0", "Ethernet8", "Ethernet248")
    breakout = sonic_port_aliases(json.loads(sample("sonic-config_db-sn4600c-d112c8-breakout.json")))
    assert (breakout["etp1a"], breakout["etp1b"], breakout["etp3b"]) == ("Ethernet0", "Ethernet2", "Ethernet10")


def test_a_port_without_alias_maps_its_own_name_and_no_port_table_is_empty():
    assert sonic_port_aliases({"PORT": {"Ethernet0": {"lanes": "0"}}}) == {"ethernet0": "Ethernet0"}
    assert sonic_port_aliases('{"DEVICE_METADATA": {}}') == {}


@pytest.mark.parametrize("text, words", [
    ('{"PORT": {', "is not JSON"),
    ("[1]", "is a list"),
    ('{"PORT": ["Ethernet0"]}', "PORT of the config_db of ToR x is a list"),
    ('{"PORT": {"Ethernet0": {"alias": "etp1"}, "Ethernet8": {"alias": "ETP1"}}}', "the same alias 'ETP1'"),
])
def test_a_bad_config_db_is_one_line_naming_the_tor(text, words):
    with pytest.raises(FabricError) as info:
        sonic_port_aliases(text, "ToR x")
    assert words in str(info.value) and "\n" not in str(info.value)


# --- the check ------------------------------------------------------------------------------------------------


def test_control_sonic_aliases_with_their_port_tables_are_the_planned_ports():
    result = check_cabling(plan(), neighbours(), port_aliases=aliases())
    assert result["findings"] == []
    assert [(e["rail"], e["port"], e["port_verified"]) for e in result["ok"]] == [
        (1, "Ethernet8", True), (2, "Ethernet2", True)]


def test_a_sonic_rail_on_another_port_is_wrong_port_with_its_ethernet_name():
    result = check_cabling(plan(port1="Ethernet16"), neighbours(), port_aliases=aliases())
    assert [(f["rail"], f["kind"], f["seen"]["port"]) for f in result["findings"]] == [(1, "wrong_port", "Ethernet8")]
    assert "move gpu01 ens1f0np0 from su1-leaf1 Ethernet8 to Ethernet16" in result["findings"][0]["message"]


def test_crossed_sonic_rails_on_one_tor_are_swapped():
    data = neighbours()
    data["gpu01"][1].update(system_name="su1-leaf1", port_id="etp3", port_descr="etp3")
    both_on_leaf1 = plan(port1="Ethernet16")
    both_on_leaf1["nodes"]["gpu01"]["rails"][1].update(tor="su1-leaf1", tor_port="Ethernet8")
    result = check_cabling(both_on_leaf1, data, port_aliases=aliases())
    assert [(f["kind"], f["rail"], f["pair"]["rail"]) for f in result["findings"]] == [("swapped", 1, 2)]


def test_without_the_port_table_a_sonic_alias_is_unverified_not_wrong_port(tmp_path):
    # the action says which ToRs announce aliases (the platform registry) and finds no config_db for them
    tables = action.tor_port_aliases(plan(), str(tmp_path), {})
    assert tables == {"su1-leaf1": None, "su1-leaf2": None}
    result = check_cabling(plan(), neighbours(), port_aliases=tables)
    assert result["findings"] == []
    assert [(e["port"], e["port_verified"]) for e in result["ok"]] == [(None, False), (None, False)]
    assert "alias 'etp2'" in result["ok"][0]["why"] and "config_db" in result["ok"][0]["why"]
    assert result["summary"]["unverified_ports"] == 2
    text = findings_markdown(result)
    assert "2 rail(s) reach their planned ToR but the port was not verified" in text
    assert "- gpu01 ens1f0np0 (rail 1, su1-leaf1): the ToR announces the port alias 'etp2'" in text


def test_an_alias_missing_from_the_port_table_is_unverified_with_why():
    tables = aliases()
    del tables["su1-leaf2"]["etp1b"]
    result = check_cabling(plan(), neighbours(), port_aliases=tables)
    assert result["findings"] == []
    assert result["ok"][1]["port_verified"] is False
    assert result["ok"][1]["why"] == "the port alias 'etp1b' is in no PORT entry of the ToR's config_db"


def test_a_local_port_id_of_a_non_sonic_tor_is_compared_as_announced():
    # Control for the platform: the same frames from a ToR the plan calls cumulus are not alias-mapped.
    cumulus = plan(port1="etp2", platform="cumulus")
    result = check_cabling(cumulus, neighbours(), port_aliases=action.tor_port_aliases(cumulus, None, {}))
    assert [(e["rail"], e["port"], e["port_verified"]) for e in result["ok"]] == [(1, "etp2", True), (2, None, False)]


def test_planned_name_keeps_ifname_of_a_sonic_port_not_yet_configured_by_lldpmgrd():
    # lldpd.conf.j2 sets portidsubtype ifname before lldpmgrd configures each port: EthernetN, ifname.
    entry = {"port_id": "Ethernet8", "port_id_type": "ifname", "port_descr": None}
    assert planned_name(entry, True, {}) == ("Ethernet8", None)


def test_the_action_reads_the_sonic_tors_config_db_from_the_directory_and_given_text_wins(tmp_path):
    with open(str(tmp_path / "su1-leaf1.json"), "w") as handle:
        handle.write(sample("sonic-config_db-t1-smartswitch.json"))
    with open(str(tmp_path / "su1-leaf2.json"), "w") as handle:
        handle.write("not json")
    given = {"su1-leaf2": sample("sonic-config_db-sn4600c-d112c8-breakout.json")}
    tables = action.tor_port_aliases(plan(), str(tmp_path), given)
    assert tables["su1-leaf1"]["etp2"] == "Ethernet8" and tables["su1-leaf2"]["etp1b"] == "Ethernet2"
    assert action.tor_port_aliases(plan(platform="cumulus"), str(tmp_path), {}) == {}
    with pytest.raises(FabricError, match="ToR su1-leaf2 is not JSON"):
        action.tor_port_aliases(plan(), str(tmp_path), {})
