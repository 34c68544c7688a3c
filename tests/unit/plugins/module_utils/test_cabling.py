# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""LLDP parsers on recorded outputs (data/lldp/ORIGIN.md; expected values read off each file by
eye) and the cabling check against a small hand-written rail plan."""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.cabling.cabling_check import (
    check_cabling, findings_markdown, same_port, same_switch,
)
from ansible_collections.ainet.fabric.plugins.module_utils.cabling.lldp_parse import (
    FIELDS, looks_like_port, neighbour_port, neighbours_by_interface, parse_lldpcli_json, parse_lldptool,
)
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

DATA = os.path.join(os.path.dirname(__file__), "data", "lldp")


def sample(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def nb(interface, system_name, chassis_id, port_id, port_id_type, port_descr):
    return {"interface": interface, "system_name": system_name, "chassis_id": chassis_id,
            "port_id": port_id, "port_id_type": port_id_type, "port_descr": port_descr}


# --- lldpcli -f json / json0, recorded outputs ----------------------------------------------------


def test_sonic_dbsyncd_list_form_two_interfaces():
    got = parse_lldpcli_json(sample("lldpctl-json-sonic-two-neighbours.json"))
    assert got == [
        nb("eth0", "switch218ad08", "00:11:22:33:44:55", "ge-0/0/17", "ifname", "TPS report vending machine"),
        nb("Ethernet0", "switch13", "00:11:22:33:44:55", "Ethernet1", "ifname", None),
    ]
    assert [neighbour_port(e) for e in got] == ["ge-0/0/17", "Ethernet1"]
    assert all(set(e) == set(FIELDS) for e in got)


def test_sonic_dbsyncd_single_interface_is_an_object_local_port_id():
    got = parse_lldpcli_json(sample("lldpctl-json-sonic-mgmt-only.json"))
    assert got == [nb("eth0", "switchad11", "00:11:22:33:44:55", "535", "local", "ge-0/0/15.0")]
    # "535" is a number, not a port name: the Juniper description names the port.
    assert neighbour_port(got[0]) == "ge-0/0/15.0"


def test_sonic_dbsyncd_chassis_without_system_name():
    got = parse_lldpcli_json(sample("lldpctl-json-sonic-unnamed-chassis.json"))
    assert got == [
        nb("Ethernet0", None, "00:11:22:33:44:55", "Ethernet1", "ifname", None),
        nb("Ethernet100", "switch13", "00:11:22:33:44:55", "Ethernet26", "ifname", None),
    ]


def test_sonic_dbsyncd_no_neighbour():
    assert parse_lldpcli_json(sample("lldpctl-json-sonic-empty.json")) == []


def test_sonic_suzieq_issue_cisco_neighbour():
    got = parse_lldpcli_json(sample("lldpctl-json-sonic-suzieq259-trimmed.json"))
    assert got == [nb("eth0", "c6500-vxlan", "00:1c:0f:5f:c7:c0", "Gi3/36", "ifname", "GigabitEthernet3/36")]
    assert neighbour_port(got[0]) == "Gi3/36"


def test_lldpd_issue_one_neighbour_mac_port_id_descr_names_the_port():
    got = parse_lldpcli_json(sample("lldpcli-json-one-neighbour-lldpd369.json"))
    assert got == [nb("ens1", "my-pc", "1a:10:0d:22:d0:f6", "fe:34:45:00:21:01", "mac", "eth10")]
    assert neighbour_port(got[0]) == "eth10"


def test_lldpd_integration_json_and_json0_agree():
    expected = [nb("eth0", "ns-2.example.com", "00:00:00:00:00:02", "00:00:00:00:00:02", "mac", "eth1")]
    assert parse_lldpcli_json(sample("lldpcli-json-lldpd-integration.json")) == expected
    assert parse_lldpcli_json(sample("lldpcli-json0-lldpd-integration.json")) == expected


GPU017 = [
    nb("ens7f0np0", "su1-leaf3", "1c:34:da:10:00:03", "swp17", "ifname", "swp17"),
    nb("ens8f0np0", "su1-leaf4", "98:03:9b:20:00:04", "etp1", "local", "gpu017 ens8f0np0 rail4 [ainet]"),
    nb("ens9f0np0", "su1-leaf5.example.net", "44:4c:a8:30:00:05", "Ethernet17/1", "ifname", "gpu017 rail 5"),
    nb("ens10f0np0", "su1-leaf6", "1c:34:da:10:00:06", "swp17", "ifname", None),
    nb("ens10f0np0", None, "b8:3f:d2:40:00:10", "b8:3f:d2:40:00:10", "mac", None),
]


@pytest.mark.parametrize("name", ["lldpcli-json0-gpu-synthetic.json", "lldpcli-json-gpu-synthetic.json"])
def test_gpu_host_json_and_json0(name):
    got = parse_lldpcli_json(sample(name))
    assert got == GPU017
    # Cumulus ifname, SONiC's alias (local; as announced here, mapped by port_names), EOS ifname, none for a
    # MAC-only speaker.
    assert [neighbour_port(e) for e in got] == ["swp17", "etp1", "Ethernet17/1", "swp17", None]
    grouped = neighbours_by_interface(got)
    assert list(grouped) == ["ens7f0np0", "ens8f0np0", "ens9f0np0", "ens10f0np0"]
    assert len(grouped["ens10f0np0"]) == 2


def test_lldpcli_accepts_parsed_object_and_bytes():
    text = sample("lldpcli-json-lldpd-integration.json")
    assert parse_lldpcli_json(text.encode()) == parse_lldpcli_json(text)
    assert parse_lldpcli_json({"lldp": [{}]}) == []


@pytest.mark.parametrize("text", ["", "  \n", None])
def test_lldpcli_empty_output_is_no_neighbour(text):
    assert parse_lldpcli_json(text) == []


@pytest.mark.parametrize("text, words", [
    ("Interface: eth0, via: LLDP", "not JSON"),
    ('{"lldp": {"interface": [', "not JSON"),
    ('{"neighbors": []}', "no top-level"),
    ('[1, 2]', "no top-level"),
    ('{"lldp": "eth0"}', "is a str"),
])
def test_lldpcli_not_its_output_raises_one_line(text, words):
    with pytest.raises(FabricError) as info:
        parse_lldpcli_json(text)
    message = str(info.value)
    assert message.startswith("lldpcli -f json: ") and words in message and "\n" not in message


# --- lldptool -t -n -i <if>, recorded outputs -----------------------------------------------------


def test_lldptool_dell_vrtx():
    got = parse_lldptool(sample("lldptool-dell-vrtx.txt"), "eth0")
    assert got == [nb("eth0", "Switch POD", "f8:b1:56:15:e6:c6", "gi1/1", "ifname", "gigabitethernet1/1")]
    assert neighbour_port(got[0]) == "gi1/1"


def test_lldptool_nexus_unindented_description_lines():
    got = parse_lldptool(sample("lldptool-nexus.txt"), "ens7f0np0")
    assert got == [nb("ens7f0np0", "AC3K-51D4-05.local.odcnoord.nl", "58:f3:9c:81:ad:95", "Ethernet1/14", "ifname",
                      "SRV-51D4-14")]
    assert neighbour_port(got[0]) == "Ethernet1/14"


def test_lldptool_nexus_with_crlf():
    text = sample("lldptool-nexus.txt").replace("\n", "\r\n")
    assert parse_lldptool(text, "eth0") == parse_lldptool(sample("lldptool-nexus.txt"), "eth0")


def test_lldptool_huawei_no_port_description():
    got = parse_lldptool(sample("lldptool-huawei-ce6855.txt"), "eth01")
    assert got == [nb("eth01", "HB.LF-RZ.M1.102-HW-CE6855-U1-A2-In-254.79-DPVS-Test", "18:cf:24:3c:72:c1",
                      "10GE1/0/15", "ifname", None)]
    assert neighbour_port(got[0]) == "10GE1/0/15"


def test_lldptool_slingshot_without_indentation_mac_port_id():
    got = parse_lldptool(sample("lldptool-slingshot-noindent.txt"), "hsn0")
    assert got == [nb("hsn0", "x3000c0r24b0", "02:fe:00:00:00:1f", "02:fe:00:00:00:1f", "mac",
                      "Interface 36 as ros0p31")]
    assert neighbour_port(got[0]) is None


def test_lldptool_unifi_local_port_id():
    got = parse_lldptool(sample("lldptool-unifi-local.txt"), "eth0")
    assert got == [nb("eth0", "UBNT", "f0:9f:c2:18:4c:27", "0/4", "local", "Port 4")]
    assert neighbour_port(got[0]) is None


def test_lldptool_empty_and_end_only():
    assert parse_lldptool("", "eth0") == []
    assert parse_lldptool("End of LLDPDU TLV\n", "eth0") == []


def test_lldptool_not_its_output_raises_one_line():
    with pytest.raises(FabricError) as info:
        parse_lldptool("Agent instance for device not found\n", "ens7f0np0")
    message = str(info.value)
    assert message.startswith("lldptool -t -n -i ens7f0np0: no TLV block") and "\n" not in message


@pytest.mark.parametrize("name, expected", [
    ("swp17", True), ("swp1s0", True), ("Ethernet17/1", True), ("Ethernet0", True), ("10GE1/0/15", True),
    ("ge-0/0/15.0", True), ("xe-0/0/1:0", True), ("eth10", True), ("Port-Channel1", True),
    ("535", False), ("0/4", False), ("Port 4", False), ("SRV-51D4-14", False), ("to-server-41-p0", False),
    ("fe:34:45:00:21:01", False), ("1c34.da10.0003", False), ("", False), (None, False),
])
def test_looks_like_port(name, expected):
    assert looks_like_port(name) is expected


def test_name_comparison():
    assert same_switch("SU1-LEAF1.example.net", "su1-leaf1")
    assert same_switch("su1-leaf1", "su1-leaf1.example.net.")
    assert not same_switch("su1-leaf1.pod2", "su1-leaf1.pod1")
    assert not same_switch("su1-leaf10", "su1-leaf1")
    assert not same_switch(None, "su1-leaf1")
    assert same_port("Ethernet17/1", "ethernet17/1 ")
    assert not same_port("Eth17/1", "Ethernet17/1")  # no mapping between naming schemes


# --- the cabling check ----------------------------------------------------------------------------

IFACES = {1: "ens5f0np0", 2: "ens6f0np0", 3: "ens7f0np0", 4: "ens8f0np0"}


def make_plan():
    """2 hosts x 4 rails: rail r of node n on su1-leaf<r> port swp<n>."""
    nodes = {}
    for host, node_id in (("gpu017", 17), ("gpu018", 18)):
        nodes[host] = {"node_id": node_id, "rails": [
            {"fabric": "compute", "rail": rail, "interface": IFACES[rail], "tor": "su1-leaf%d" % rail,
             "tor_port": "swp%d" % node_id} for rail in (1, 2, 3, 4)]}
    return {"nodes": nodes}


def lldp(iface, tor, port):
    """A Cumulus-style neighbour: ifname Port ID, the same name as description."""
    return nb(iface, tor, "1c:34:da:00:00:01", port, "ifname", port)


def good_neighbours():
    result = {}
    for host, node_id in (("gpu017", 17), ("gpu018", 18)):
        result[host] = dict((IFACES[rail], [lldp(IFACES[rail], "su1-leaf%d" % rail, "swp%d" % node_id)])
                            for rail in (1, 2, 3, 4))
    return result


def test_all_good_no_findings():
    result = check_cabling(make_plan(), good_neighbours())
    assert result["findings"] == []
    assert len(result["ok"]) == 8 and all(entry["port_verified"] for entry in result["ok"])
    assert result["ok"][0] == {"host": "gpu017", "fabric": "compute", "rail": 1, "interface": "ens5f0np0",
                               "tor": "su1-leaf1", "port": "swp17", "port_verified": True}
    assert result["summary"] == {"hosts": 2, "rails": 8, "ok": 8, "findings": 0, "by_kind": {},
                                 "unverified_ports": 0}
    assert findings_markdown(result) == "No cabling findings: 8 rails on 2 hosts match the plan.\n"


def test_crossed_rails_give_one_swapped_finding():
    seen = good_neighbours()
    seen["gpu017"]["ens7f0np0"] = [lldp("ens7f0np0", "su1-leaf4", "swp17")]
    seen["gpu017"]["ens8f0np0"] = [lldp("ens8f0np0", "su1-leaf3", "swp17")]
    result = check_cabling(make_plan(), seen)
    assert len(result["findings"]) == 1
    finding = result["findings"][0]
    assert finding["kind"] == "swapped"
    assert (finding["host"], finding["fabric"], finding["rail"], finding["interface"]) == \
        ("gpu017", "compute", 3, "ens7f0np0")
    assert finding["expected"] == {"tor": "su1-leaf3", "port": "swp17"}
    assert finding["seen"] == {"tor": "su1-leaf4", "port": "swp17"}
    assert finding["message"] == ("gpu017: ens7f0np0 (rail 3) and ens8f0np0 (rail 4) are crossed: ens7f0np0 "
                                  "reaches su1-leaf4 swp17, planned su1-leaf3 swp17; swap the two cables")
    assert finding["pair"] == {"fabric": "compute", "rail": 4, "interface": "ens8f0np0",
                               "expected": {"tor": "su1-leaf4", "port": "swp17"},
                               "seen": {"tor": "su1-leaf3", "port": "swp17"}}
    assert result["summary"]["ok"] == 6 and result["summary"]["by_kind"] == {"swapped": 1}
    assert findings_markdown(result) == (
        "| host | interface | rail | finding | fix |\n"
        "|---|---|---|---|---|\n"
        "| gpu017 | ens7f0np0, ens8f0np0 | 3, 4 | swapped: crossed with ens8f0np0 (rail 4) | swap the two cables |\n")


def test_crossed_rails_given_as_the_parsers_flat_list():
    seen = good_neighbours()
    flat = [entry for entries in seen["gpu017"].values() for entry in entries]
    flat[2] = lldp("ens7f0np0", "su1-leaf4", "swp17")
    flat[3] = lldp("ens8f0np0", "su1-leaf3", "swp17")
    seen["gpu017"] = flat
    kinds = [f["kind"] for f in check_cabling(make_plan(), seen)["findings"]]
    assert kinds == ["swapped"]


def test_rotation_of_three_is_not_a_swap():
    seen = good_neighbours()
    seen["gpu018"]["ens5f0np0"] = [lldp("ens5f0np0", "su1-leaf2", "swp18")]
    seen["gpu018"]["ens6f0np0"] = [lldp("ens6f0np0", "su1-leaf3", "swp18")]
    seen["gpu018"]["ens7f0np0"] = [lldp("ens7f0np0", "su1-leaf1", "swp18")]
    findings = check_cabling(make_plan(), seen)["findings"]
    assert [(f["rail"], f["kind"]) for f in findings] == [(1, "wrong_tor"), (2, "wrong_tor"), (3, "wrong_tor")]


def test_wrong_tor():
    seen = good_neighbours()
    seen["gpu018"]["ens6f0np0"] = [lldp("ens6f0np0", "su1-leaf1", "swp18")]
    findings = check_cabling(make_plan(), seen)["findings"]
    assert len(findings) == 1
    finding = findings[0]
    assert (finding["kind"], finding["host"], finding["rail"]) == ("wrong_tor", "gpu018", 2)
    assert finding["seen"] == {"tor": "su1-leaf1", "port": "swp18"}
    assert finding["message"] == ("gpu018 ens6f0np0 (rail 2) reaches su1-leaf1 swp18, planned su1-leaf2 swp18; "
                                  "move gpu018 ens6f0np0 from su1-leaf1 swp18 to su1-leaf2 swp18")


def test_wrong_port():
    seen = good_neighbours()
    seen["gpu017"]["ens5f0np0"] = [lldp("ens5f0np0", "su1-leaf1", "swp18")]
    findings = check_cabling(make_plan(), seen)["findings"]
    assert [(f["kind"], f["host"], f["rail"], f["interface"]) for f in findings] == \
        [("wrong_port", "gpu017", 1, "ens5f0np0")]
    assert findings[0]["message"] == ("gpu017 ens5f0np0 (rail 1) reaches su1-leaf1 swp18, planned su1-leaf1 swp17; "
                                      "move gpu017 ens5f0np0 from su1-leaf1 swp18 to swp17")
    assert findings[0]["fix"] == "move gpu017 ens5f0np0 from su1-leaf1 swp18 to swp17"


def test_names_compare_ignoring_case_and_domain():
    seen = good_neighbours()
    seen["gpu017"]["ens5f0np0"] = [lldp("ens5f0np0", "SU1-LEAF1.example.net", "SWP17")]
    assert check_cabling(make_plan(), seen)["findings"] == []


def test_missing_neighbour_and_missing_data():
    seen = good_neighbours()
    seen["gpu017"]["ens6f0np0"] = []
    del seen["gpu017"]["ens8f0np0"]
    del seen["gpu018"]
    result = check_cabling(make_plan(), seen)
    got = [(f["host"], f["rail"], f["kind"], f["seen"]) for f in result["findings"]]
    assert got == [("gpu017", 2, "missing", None), ("gpu017", 4, "missing", None)] + \
        [("gpu018", rail, "missing", None) for rail in (1, 2, 3, 4)]
    messages = [f["message"] for f in result["findings"]]
    assert messages[0] == ("gpu017 ens6f0np0 (rail 2) sees no LLDP neighbour, planned su1-leaf2 swp17; plug gpu017 "
                           "ens6f0np0 into su1-leaf2 swp17 (check the cable, the optics and that LLDP is on at the "
                           "switch port)")
    assert messages[1].startswith("gpu017 ens8f0np0 (rail 4): no LLDP data for ens8f0np0, planned su1-leaf4 swp17; ")
    assert messages[2].startswith("gpu018 ens5f0np0 (rail 1): no LLDP data from gpu018, planned su1-leaf1 swp18; ")
    assert result["summary"]["by_kind"] == {"missing": 6}


def test_several_neighbours_on_a_rail():
    seen = good_neighbours()
    seen["gpu018"]["ens8f0np0"].append(nb("ens8f0np0", None, "b8:3f:d2:40:00:10", "b8:3f:d2:40:00:10", "mac", None))
    findings = check_cabling(make_plan(), seen)["findings"]
    assert [(f["kind"], f["host"], f["rail"]) for f in findings] == [("unexpected", "gpu018", 4)]
    assert findings[0]["message"].startswith(
        "gpu018 ens8f0np0 (rail 4) sees 2 LLDP neighbours (su1-leaf4 swp18, an unnamed switch (chassis id "
        "b8:3f:d2:40:00:10) (port id mac b8:3f:d2:40:00:10)), planned su1-leaf4 swp18 only; find the extra LLDP")


def test_rail_without_interface_name():
    plan = make_plan()
    plan["nodes"]["gpu018"]["rails"][2]["interface"] = None
    findings = check_cabling(plan, good_neighbours())["findings"]
    assert [(f["kind"], f["host"], f["rail"], f["interface"]) for f in findings] == \
        [("unknown_interface", "gpu018", 3, None)]
    assert "no interface name in the inventory" in findings[0]["message"]


def test_right_tor_without_port_name_is_ok_but_unverified():
    seen = good_neighbours()
    seen["gpu017"]["ens5f0np0"] = [nb("ens5f0np0", "su1-leaf1", "1c:34:da:00:00:01", "1c:34:da:00:00:01", "mac",
                                      None)]
    result = check_cabling(make_plan(), seen)
    assert result["findings"] == []
    assert result["ok"][0]["port_verified"] is False and result["summary"]["unverified_ports"] == 1


def test_findings_sorted_and_markdown_table():
    seen = good_neighbours()
    seen["gpu018"]["ens5f0np0"] = [lldp("ens5f0np0", "su1-leaf2", "swp18")]
    seen["gpu017"]["ens8f0np0"] = [lldp("ens8f0np0", "su1-leaf4", "swp1|7")]
    seen["gpu017"]["ens5f0np0"] = []
    result = check_cabling(make_plan(), seen)
    assert [(f["host"], f["rail"], f["kind"]) for f in result["findings"]] == \
        [("gpu017", 1, "missing"), ("gpu017", 4, "wrong_port"), ("gpu018", 1, "wrong_tor")]
    table = findings_markdown(result).splitlines()
    assert len(table) == 5
    assert table[3] == ("| gpu017 | ens8f0np0 | 4 | wrong port: reaches su1-leaf4 swp1\\|7, planned su1-leaf4 swp17 "
                        "| move gpu017 ens8f0np0 from su1-leaf4 swp1\\|7 to swp17 |")


def test_hosts_filter():
    seen = good_neighbours()
    seen["gpu017"]["ens5f0np0"] = []
    result = check_cabling(make_plan(), seen, hosts=["gpu018"])
    assert result["findings"] == [] and result["summary"]["hosts"] == 1 and result["summary"]["rails"] == 4
    with pytest.raises(FabricError, match="host 'gpu099' is not in the rail plan"):
        check_cabling(make_plan(), seen, hosts=["gpu099"])


def test_parsed_gpu_output_against_a_plan():
    plan = {"nodes": {"gpu017": {"rails": [
        {"fabric": "compute", "rail": 1, "interface": "ens7f0np0", "tor": "su1-leaf3", "tor_port": "swp17"},
        {"fabric": "compute", "rail": 2, "interface": "ens8f0np0", "tor": "su1-leaf4", "tor_port": "Ethernet0"},
        {"fabric": "compute", "rail": 3, "interface": "ens9f0np0", "tor": "su1-leaf5", "tor_port": "Ethernet17/1"},
        {"fabric": "compute", "rail": 4, "interface": "ens10f0np0", "tor": "su1-leaf6", "tor_port": "swp17"},
    ]}}, "tors": {"su1-leaf3": {"platform": "cumulus"}, "su1-leaf4": {"platform": "sonic"},
                  "su1-leaf5": {"platform": "eos"}, "su1-leaf6": {"platform": "cumulus"}}}
    entries = parse_lldpcli_json(sample("lldpcli-json0-gpu-synthetic.json"))
    # su1-leaf4 is SONiC: its Port ID is the alias etp1, Ethernet0 in its PORT table.
    result = check_cabling(plan, {"gpu017": entries}, port_aliases={"su1-leaf4": {"etp1": "Ethernet0"}})
    assert [(e["rail"], e["port"]) for e in result["ok"]] == [(1, "swp17"), (2, "Ethernet0"), (3, "Ethernet17/1")]
    assert [(f["rail"], f["kind"]) for f in result["findings"]] == [(4, "unexpected")]


@pytest.mark.parametrize("plan, neighbours, words", [
    ({}, {}, "no \"nodes\" mapping"),
    ({"nodes": {"gpu017": {"rails": "x"}}}, {}, "has no \"rails\" list"),
    ({"nodes": {"gpu017": {"rails": [{"rail": 1}]}}}, {}, "lacks \"rail\" or \"tor\""),
    ({"nodes": {}}, [], "expected a mapping of host"),
    ({"nodes": {"gpu017": {"rails": []}}}, {"gpu017": "swp17"}, "neighbours of gpu017 are a str"),
])
def test_bad_input_raises_one_line(plan, neighbours, words):
    with pytest.raises(FabricError) as info:
        check_cabling(plan, neighbours)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_lab_recording_of_two_crossed_cables():
    """lldpd 1.0.16 on the container lab's gpu02, rail 3 and rail 4 crossed (data/lldp/ORIGIN.md)."""
    from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
    plan = rail_plan({"name": "t-exclusive-v4", "rails": 4, "addressing": {
        "mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27}},
        {"gpu01": {"node_id": 1, "rail_interfaces": ["ens6f0np0", "ens6f1np1", "ens7f0np0", "ens7f1np1"]},
         "gpu02": {"node_id": 2, "rail_interfaces": ["ens6f0np0", "ens6f1np1", "ens7f0np0", "ens7f1np1"]}})
    for name in ("lab-lldpd-1.0.16-json0-crossed.json", "lab-lldpd-1.0.16-json-crossed.json"):
        with open(os.path.join(DATA, name)) as handle:
            entries = parse_lldpcli_json(handle.read())
        assert [(e["interface"], e["system_name"], neighbour_port(e)) for e in entries] == [
            ("ens6f0np0", "t-exclusive-v4-rail1-tor", "swp2"), ("ens6f1np1", "t-exclusive-v4-rail2-tor", "swp2"),
            ("ens7f0np0", "t-exclusive-v4-rail4-tor", "swp2"), ("ens7f1np1", "t-exclusive-v4-rail3-tor", "swp2")]
        verdict = check_cabling(plan, {"gpu02": entries}, ["gpu02"])
        assert [(f["kind"], f["rail"]) for f in verdict["findings"]] == [("swapped", 3)]
        assert verdict["findings"][0]["message"].startswith(
            "gpu02: ens7f0np0 (rail 3) and ens7f1np1 (rail 4) are crossed: ens7f0np0 reaches t-exclusive-v4-rail4-tor "
            "swp2, planned t-exclusive-v4-rail3-tor swp2")


def test_the_plan_report_section_on_the_cabling():
    from ansible_collections.ainet.fabric.plugins.module_utils.cabling.cabling_check import status_markdown
    assert "Not checked yet" in status_markdown(None)
    text = status_markdown({"summary": {"hosts": 2, "rails": 8, "ok": 6, "findings": 1}, "findings": [
        {"host": "gpu02", "interface": "ens7f0np0", "rail": 3, "kind": "swapped", "detail": "crossed with rail 4",
         "fix": "swap the two cables", "fabric": "default"}]})
    assert "Last check: 2 hosts, 8 rails, 6 as planned, 1 finding(s)." in text and "gpu02" in text, text


def test_findings_are_drawn_dotted_in_the_plan_diagram():
    from ansible_collections.ainet.fabric.plugins.module_utils.cabling.cabling_check import finding_marks
    from ansible_collections.ainet.fabric.plugins.module_utils.plan.plan_report import render
    from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
    plan = rail_plan({"name": "d", "rails": 2, "addressing": {"mode": "shared", "supernet": "172.17.0.0/16",
                                                              "rail_prefix": 24}},
                     {"gpu01": {"node_id": 1, "rail_interfaces": ["ens6f0np0", "ens6f1np1"]}})
    marks = finding_marks({"findings": [{"host": "gpu01", "fabric": "default", "rail": 2, "kind": "wrong_port"}]})
    assert marks == {("gpu01", "default", 2): "cable wrong port"}
    lines = render(plan, "mermaid", 64, marks).splitlines()
    assert '  node1 -. "ens6f1np1 default r2 172.17.1.2/24#58; cable wrong port" .- tor2' in lines, lines
    assert '  node1 -- "ens6f0np0 default r1 172.17.0.2/24" --- tor1' in lines, lines
    assert render(plan, "mermaid") == render(plan, "mermaid", 64, {})
