"""What a running ToR configuration lacks of the rendered one: only the rendered subset is compared, and
nothing the switch holds beyond it (other tools' ports, uplinks, users) is ever listed."""

import copy
import json

from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_eos import eos_diff
from ansible_collections.ainet.fabric.plugins.module_utils.tor.platforms import running_diff
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_diff import diff_text, tree_diff
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_render import render_tor


def rendered(platform):
    port = "swp{node}" if platform == "cumulus" else "Ethernet{node}"
    cluster = {"name": "r", "rails": 1, "addressing": {"mode": "p2p", "supernet": "172.17.0.0/16", "rail_prefix": 24},
               "tors": [{"name": "leaf1", "rails": [1], "platform": platform, "port_template": port}]}
    return render_tor(rail_plan(cluster, {"gpu01": {"node_id": 1}, "gpu02": {"node_id": 2}}), "leaf1")


def test_tree_diff_lists_missing_and_different_leaves_only():
    desired = {"PORT": {"Ethernet1": {"mtu": "9216", "admin_status": "up"}}, "FEATURE": {"lldp": {"state": "enabled"}}}
    running = {"PORT": {"Ethernet1": {"mtu": "9100", "lanes": "1,2"}, "Ethernet9": {"mtu": "1500"}},
               "BGP_NEIGHBOR": {"10.0.0.1": {}}}
    assert tree_diff(desired, running) == [
        {"path": ("FEATURE", "lldp", "state"), "before": None, "after": "enabled"},
        {"path": ("PORT", "Ethernet1", "admin_status"), "before": None, "after": "up"},
        {"path": ("PORT", "Ethernet1", "mtu"), "before": "9100", "after": "9216"},
    ]


def test_tree_diff_compares_numbers_as_config_db_and_nvue_print_them():
    assert tree_diff({"link": {"mtu": 9216}}, {"link": {"mtu": "9216"}}) == []
    assert tree_diff({"a": {"b": {}}}, {"a": {}}) == [{"path": ("a", "b"), "before": None, "after": {}}]


def test_sonic_running_with_the_fragment_and_foreign_tables_is_in_sync():
    item = rendered("sonic")
    running = copy.deepcopy(item["data"])
    running["PORT"]["Ethernet48"] = {"admin_status": "up", "description": "uplink spine1"}
    running["DEVICE_METADATA"] = {"localhost": {"hostname": "leaf1"}}
    assert running_diff("sonic", json.dumps(running), item) == []
    running["PORT"]["Ethernet1"]["mtu"] = "1500"
    del running["INTERFACE"]["Ethernet2|172.17.0.2/31"]
    items = running_diff("sonic", json.dumps(running), item)
    assert diff_text(items) == ("+ INTERFACE Ethernet2|172.17.0.2/31: {}\n"
                                "~ PORT Ethernet1 mtu: 1500 -> 9216\n")


def test_nvue_running_from_nv_config_show_is_compared_as_a_tree():
    item = rendered("cumulus")
    running = ("- header:\n    model: VX\n    version: cumulus-linux-5.14.0\n"
               "- set:\n    interface:\n      swp1:\n        type: swp\n        link:\n          mtu: 9000\n"
               "      eth0:\n        ip:\n          vrf: mgmt\n    system:\n      hostname: leaf1\n")
    items = running_diff("cumulus", running, item)
    paths = [" ".join(i["path"]) for i in items]
    assert "interface swp1 link mtu" in paths and "interface swp2 type" in paths
    assert not [p for p in paths if "eth0" in p or "system" in p]
    assert [i for i in items if i["path"] == ("interface", "swp1", "link", "mtu")][0]["before"] == 9000
    from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_cumulus import nvue_text
    assert running_diff("cumulus", nvue_text(item["data"]), item) == []


def test_eos_diff_per_block_with_the_running_value():
    item = rendered("eos")
    assert eos_diff(item["text"], item["text"]) == []
    running = item["text"].replace("   mtu 9214\n", "   mtu 9000\n", 1)
    running += "interface Ethernet49/1\n   description uplink\n   mtu 1500\n!\nrouter bgp 65001\n   router-id 1.1.1.1\n"
    items = eos_diff(running, item["text"])
    assert items == [{"path": ("interface Ethernet1",), "before": "mtu 9000", "after": "mtu 9214"}]


def test_eos_diff_names_the_nested_block_of_a_missing_line():
    item = rendered("eos")
    running = item["text"].replace("      priority strict\n", "")
    items = eos_diff(running, item["text"])
    assert items == [{"path": ("qos profile AINET_ROCE / tx-queue 6",), "before": None, "after": "priority strict"}]
    assert diff_text(items) == "+ qos profile AINET_ROCE / tx-queue 6: priority strict\n"


def test_eos_diff_against_an_empty_switch_lists_every_rendered_line():
    item = rendered("eos")
    lines = [line for line in item["text"].splitlines() if line.strip() and not line.lstrip().startswith("!")]
    assert len(eos_diff("", item["text"])) == len(lines)


def test_ports_still_marked_but_no_longer_planned_are_stale_and_foreign_ones_are_not():
    from ansible_collections.ainet.fabric.plugins.module_utils.tor.platforms import stale_ports
    sonic = rendered("sonic")
    running = copy.deepcopy(sonic["data"])
    running["PORT"]["Ethernet7"] = {"description": "gpu07 ens1 rail1 [ainet]", "mtu": "9216"}
    running["PORT"]["Ethernet8"] = {"description": "storage01 (by the storage team)"}
    assert stale_ports("sonic", json.dumps(running), sonic) == ["Ethernet7"]
    eos = rendered("eos")
    text = eos["text"] + "interface Ethernet12\n   description gpu12 ens1 rail1 [ainet]\n   mtu 9214\n!\n" \
        "interface Ethernet13\n   description uplink spine1\n!\n"
    assert stale_ports("eos", text, eos) == ["Ethernet12"]
    nvue = rendered("cumulus")
    text = ("- set:\n    interface:\n      swp1:\n        description: gpu01 ens1 rail1 [ainet]\n"
            "      swp10:\n        description: gpu10 ens1 rail1 [ainet]\n      swp2:\n        description: other\n")
    assert stale_ports("cumulus", text, nvue) == ["swp10"]
    assert stale_ports("sonic", "", sonic) == []


def rendered_nxos():
    cluster = {"name": "r", "rails": 1, "addressing": {"mode": "p2p", "supernet": "172.17.0.0/16", "rail_prefix": 24},
               "tors": [{"name": "leaf1", "rails": [1], "platform": "nxos", "port_template": "Ethernet1/{node}"}]}
    return render_tor(rail_plan(cluster, {"gpu01": {"node_id": 1}, "gpu02": {"node_id": 2}}), "leaf1")


def test_nxos_diff_per_block_leaves_out_the_defaults_nxos_does_not_print():
    item = rendered_nxos()
    assert running_diff("nxos", item["text"], item) == []
    # NX-OS prints neither `no switchport` on a routed port of a routed-default switch nor `no shutdown`
    # when the port is up by default; foreign blocks are not compared.
    running = item["text"].replace("  no switchport\n", "").replace("  no shutdown\n", "")
    running = running.replace("  mtu 9216\n  ip address 172.17.0.0/31", "  mtu 9000\n  ip address 172.17.0.0/31")
    running += "interface Ethernet1/49\n  description uplink\n  mtu 1500\n\nrouter bgp 65001\n  router-id 1.1.1.1\n"
    assert running_diff("nxos", running, item) == [
        {"path": ("interface Ethernet1/1",), "before": "mtu 9000", "after": "mtu 9216"}]
    running = running.replace("interface Ethernet1/2\n", "interface Ethernet1/2\n  switchport\n  shutdown\n")
    assert diff_text(running_diff("nxos", running, item)[1:]) == (
        "~ interface Ethernet1/2: switchport -> no switchport\n~ interface Ethernet1/2: shutdown -> no shutdown\n")


def test_nxos_ports_still_marked_but_no_longer_planned_are_stale():
    from ansible_collections.ainet.fabric.plugins.module_utils.tor.platforms import stale_ports
    item = rendered_nxos()
    text = item["text"] + ("interface Ethernet1/12\n  description gpu12 ens1 rail1 [ainet]\n  mtu 9216\n"
                           "interface Ethernet1/13\n  description uplink spine1\n")
    assert stale_ports("nxos", text, item) == ["Ethernet1/12"]
