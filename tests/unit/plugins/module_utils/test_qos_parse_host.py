"""Host QoS parsers on recorded outputs (data/qos/host/ORIGIN.md); expected facts read off each sample by eye."""

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import FIELDS
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse_host import (
    parse_cma_roce_tos, parse_dcb, parse_mlnx_qos, parse_sysfs,
)

DATA = os.path.join(os.path.dirname(__file__), "data", "qos", "host")
DEFAULT_MAP = dict((d, d // 8) for d in range(64))
ONE_TO_ONE_BUT_01 = {0: 1, 1: 0, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}
VENDOR = {"mode": "vendor", "weight": None}


def sample(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def port(facts, name=""):
    assert set(facts["ports"]) == {name}
    assert set(facts["ports"][name]) == set(FIELDS)
    return facts["ports"][name]


# --- mlnx_qos, real outputs -------------------------------------------------------------------


def test_mlnx_qos_ofed42_from_the_community_post():
    facts = parse_mlnx_qos(sample("mlnx_qos-ofed42-eth2.txt"), port="eth2")
    s = port(facts, "eth2")
    assert facts["format"] == "mlnx_qos" and facts["problems"] == []
    assert (s["dcbx"], s["trust"], s["pfc"]) == ("OS controlled", "dscp", [0, 2, 6, 7])
    assert s["dscp_to_priority"] == DEFAULT_MAP
    assert s["ets"][6] == {"mode": "strict", "weight": None}
    assert s["ets"][7] == {"mode": "ets", "weight": 40} and s["ets"][0] == {"mode": "ets", "weight": 10}
    assert s["priority_to_queue"] == ONE_TO_ONE_BUT_01
    assert s["buffer_lossless"] is None  # no buffer rows in this version


def test_mlnx_qos_netarbiter_eth4_trust_dscp_pfc3_vendor_tsa():
    facts = parse_mlnx_qos(sample("mlnx_qos-netarbiter-eth4.txt"), port="eth4")
    s = port(facts, "eth4")
    assert facts["problems"] == []
    assert (s["dcbx"], s["trust"], s["pfc"]) == ("OS controlled", "dscp", [3])
    assert s["dscp_to_priority"][26] == 3 and s["dscp_to_priority"][48] == 6 and len(s["dscp_to_priority"]) == 64
    assert s["ets"] == dict((tc, VENDOR) for tc in range(8))
    assert s["priority_to_queue"] == ONE_TO_ONE_BUT_01
    assert s["buffer_lossless"] is None and s["pfc_capable"] is None


def test_mlnx_qos_ens14f0_remapped_dscps_and_buffers():
    s = port(parse_mlnx_qos(sample("mlnx_qos-ens14f0-remapped-buffers.txt")))
    dmap = s["dscp_to_priority"]
    assert len(dmap) == 64
    assert dmap[26] == 3 and dmap[30] == 6 and dmap[48] == 6 and dmap[49] == 6 and dmap[31] == 3
    assert s["pfc"] == [3]
    # priority 3 -> buffer 7, whose size is 896 bytes (non-zero): lossless by the documented rule
    assert s["buffer_lossless"] == [3]
    assert s["ets"][3] == VENDOR


def test_mlnx_qos_ens14f0_trust_pcp_has_no_dscp_table():
    s = port(parse_mlnx_qos(sample("mlnx_qos-ens14f0-trust-pcp.txt")))
    assert (s["trust"], s["pfc"], s["buffer_lossless"]) == ("pcp", [3], [3])
    assert s["dscp_to_priority"] is None
    assert s["priority_to_queue"] == ONE_TO_ONE_BUT_01


def test_mlnx_qos_mce0_firmware_dcbx_ets_and_buffers():
    facts = parse_mlnx_qos(sample("mlnx_qos-mce0-firmware-dcbx.txt"), port="mce0")
    s = port(facts, "mce0")
    assert facts["problems"] == []
    assert (s["dcbx"], s["trust"], s["pfc"]) == ("Firmware controlled", "dscp", [3])
    assert s["buffer_lossless"] == [3]  # buffer 1 = 130944 bytes; "max_buffer_size=262016" not a buffer
    assert s["ets"] == {0: {"mode": "ets", "weight": 50}, 3: {"mode": "ets", "weight": 50}, 6: VENDOR}
    assert s["priority_to_queue"] == {0: 0, 1: 0, 2: 0, 4: 0, 5: 0, 7: 0, 3: 3, 6: 6}
    assert s["dscp_to_priority"] == DEFAULT_MAP


def test_mlnx_qos_old_ofed_with_skprio_lines():
    facts = parse_mlnx_qos(sample("mlnx_qos-eth35-ofed3-skprio.txt"), port="eth35")
    s = port(facts, "eth35")
    assert facts["problems"] == []
    assert s["pfc"] == [] and s["trust"] is None and s["dcbx"] is None and s["dscp_to_priority"] is None
    assert s["priority_to_queue"] == ONE_TO_ONE_BUT_01  # the skprio lines are not priorities
    assert s["ets"][1] == VENDOR and len(s["ets"]) == 8


def test_mlnx_qos_flattened_blog_output_yields_problems_only():
    facts = parse_mlnx_qos(sample("mlnx_qos-enp4s0f1-flattened.txt"))
    s = port(facts)
    assert facts["problems"]
    assert s["pfc"] is None and s["trust"] is None and s["ets"] is None


def test_mlnx_qos_part_of_a_script_report():
    # rdma-qos.sh q greps the trust and PFC rows out of mlnx_qos and adds its own lines
    facts = parse_mlnx_qos(sample("rdma-qos-q-spiderpool.txt"), port="eth0")
    s = port(facts, "eth0")
    assert (s["trust"], s["pfc"]) == ("dscp", [5])
    assert s["buffer_lossless"] is None  # buffer row without the receive buffer sizes
    assert s["ets"] is None and s["dscp_to_priority"] is None


def test_mlnx_qos_synthetic_new_layout_with_buffers():
    s = port(parse_mlnx_qos(sample("mlnx_qos-buffers-synthetic.txt")))
    assert (s["trust"], s["pfc"], s["buffer_lossless"]) == ("dscp", [3], [3])
    assert s["ets"][3] == VENDOR
    assert s["dscp_to_priority"][26] == 3 and s["dscp_to_priority"][48] == 6


def test_mlnx_qos_pfc_on_a_zero_size_buffer_is_not_lossless():
    text = sample("mlnx_qos-mce0-firmware-dcbx.txt").replace(
        "buffer      0   0   0   1", "buffer      0   0   0   2")
    assert port(parse_mlnx_qos(text))["buffer_lossless"] == []


def test_mlnx_qos_old_trust_mode_wording():
    text = "Priority trust mode: pcp\nPFC configuration:\n\tpriority 0 1 2 3 4 5 6 7\n\tenabled 0 0 0 1 0 0 0 1\n"
    s = port(parse_mlnx_qos(text))
    assert (s["trust"], s["pfc"]) == ("pcp", [3, 7])


# --- mlnx_qos tolerance ------------------------------------------------------------------------


def test_mlnx_qos_crlf_and_extra_blank_lines():
    text = sample("mlnx_qos-mce0-firmware-dcbx.txt").replace("\n", "\r\n\r\n\r\n")
    s = port(parse_mlnx_qos(text))
    assert (s["pfc"], s["buffer_lossless"], s["ets"][0]["weight"]) == ([3], [3], 50)


def test_mlnx_qos_unknown_lines_ignored():
    text = "Some future line: 42\n" + sample("mlnx_qos-netarbiter-eth4.txt") + "\nsomething else entirely\n"
    facts = parse_mlnx_qos(text)
    assert facts["problems"] == [] and port(facts)["pfc"] == [3]


def test_mlnx_qos_truncated_output_gives_none_fields():
    truncated = sample("mlnx_qos-ofed42-eth2.txt").split("PFC configuration")[0]
    s = port(parse_mlnx_qos(truncated))
    assert s["trust"] == "dscp" and s["pfc"] is None and s["ets"] is None and s["priority_to_queue"] is None
    half = sample("mlnx_qos-netarbiter-eth4.txt").split("prio:4")[0]
    s = port(parse_mlnx_qos(half))
    assert s["dscp_to_priority"][26] == 3 and 40 not in s["dscp_to_priority"] and s["pfc"] is None


@pytest.mark.parametrize("garbage", ["Segmentation fault\n", "\x00\x01\x02", "tc: x ratelimit\npriority: a b\n",
                                     "PFC configuration:\n enabled 0 1 x\n", b"\xff\xfe binary"])
def test_mlnx_qos_garbage_gives_problems_not_exceptions(garbage):
    facts = parse_mlnx_qos(garbage)
    assert facts["problems"]
    assert port(facts)["pfc"] is None


def test_mlnx_qos_empty():
    assert parse_mlnx_qos("")["problems"] == ["mlnx_qos: empty output"]
    assert parse_mlnx_qos(None)["problems"] == ["mlnx_qos: empty output"]


# --- dcb ---------------------------------------------------------------------------------------


def test_dcb_man_page_outputs_concatenated():
    names = ("dcb-pfc-man.txt", "dcb-ets-man.txt", "dcb-app-numeric-man.txt", "dcb-buffer-man.txt")
    text = "\n".join(sample(n) for n in names)
    facts = parse_dcb(text, port="eth0")
    s = port(facts, "eth0")
    assert facts["format"] == "dcb"
    assert (s["pfc_capable"], s["pfc"]) == (8, [6, 7])
    assert s["ets"][0] == {"mode": "ets", "weight": 33} and s["ets"][2] == {"mode": "ets", "weight": 34}
    assert s["ets"][5] == {"mode": "strict", "weight": None}
    assert s["priority_to_queue"] == dict((p, p) for p in range(8))
    assert s["dscp_to_priority"] == {0: 0, 24: 3, 48: 6}
    assert s["buffer_lossless"] == [6, 7]  # 1Mb and 10Kb buffers
    assert s["trust"] is None  # no apptrust output in the set
    assert any("DSCP 24 has several APP entries" in p for p in facts["problems"])


def test_dcb_symbolic_and_numeric_dscp_agree():
    symbolic = port(parse_dcb(sample("dcb-app-symbolic-man.txt")))["dscp_to_priority"]
    numeric = port(parse_dcb(sample("dcb-app-numeric-man.txt")))["dscp_to_priority"]
    assert symbolic == numeric == {0: 0, 24: 3, 48: 6}


def test_dcb_dscp_names():
    s = port(parse_dcb("dscp-prio AF31:3 EF:5 CS6:6 af41:4 VA:5 LE:1 CS0:0 AF11:1 AF43:4"))
    assert s["dscp_to_priority"] == {26: 3, 46: 5, 48: 6, 34: 4, 44: 5, 1: 1, 0: 0, 10: 1, 38: 4}


def test_dcb_apptrust_man_page():
    assert port(parse_dcb(sample("dcb-apptrust-man.txt")))["trust"] == "pcp"


@pytest.mark.parametrize("order, trust", [("order dscp", "dscp"), ("order: pcp dscp", "pcp,dscp"),
                                          ("order: dscp pcp", "pcp,dscp"), ("order pcp", "pcp"),
                                          ("order:", "none"), ("trust-order: eth stream pcp", "pcp")])
def test_dcb_apptrust(order, trust):
    assert port(parse_dcb(order))["trust"] == trust


def test_dcb_json_objects_synthetic():
    facts = parse_dcb(sample("dcb-json-synthetic.txt"), port="ens1f0np0")
    s = port(facts, "ens1f0np0")
    assert facts["problems"] == []
    assert (s["pfc_capable"], s["pfc"], s["trust"]) == (8, [3], "pcp,dscp")
    assert s["dscp_to_priority"] == {24: 3, 26: 3, 48: 6}
    assert s["priority_to_queue"] == ONE_TO_ONE_BUT_01
    assert s["ets"][3] == {"mode": "ets", "weight": 50} and s["ets"][7] == {"mode": "strict", "weight": None}
    assert s["buffer_lossless"] == [3]


def test_dcb_json_object_keyed_by_strings():
    s = port(parse_dcb('{"pfc_cap":8,"prio_pfc":{"0":false,"3":true}}\n{"dscp_prio":[[26,3],[48,6]]}'))
    assert (s["pfc"], s["dscp_to_priority"]) == ([3], {26: 3, 48: 6})


def test_dcb_tolerance():
    text = "\r\n\r\n" + sample("dcb-pfc-man.txt").replace("\n", "\r\n") + "\r\nunknown-key 1:2\r\n"
    facts = parse_dcb(text)
    assert facts["problems"] == [] and port(facts)["pfc"] == [6, 7]
    truncated = parse_dcb("pfc-cap 8 macsec-bypass off delay 4096\n")
    assert port(truncated)["pfc"] is None and port(truncated)["pfc_capable"] == 8
    for garbage in ("Segmentation fault", "{not json", "dscp-prio XX9:3 26:9", "[1, 2]"):
        facts = parse_dcb(garbage)
        assert facts["problems"], garbage
    assert parse_dcb("")["problems"] == ["dcb: empty output"]


# --- sysfs -------------------------------------------------------------------------------------


def test_sysfs_spiderpool_script_report():
    facts = parse_sysfs(sample("rdma-qos-q-spiderpool.txt"))
    s = port(facts, "eth0")
    assert facts["format"] == "sysfs" and facts["problems"] == []
    assert s["ecn_np"] == list(range(8)) and s["ecn_rp"] == list(range(8))
    assert (s["cnp_dscp"], s["cnp_priority"], s["roce_tos"], s["traffic_class"]) == (48, None, 160, 160)
    assert s["mtu"] is None and s["pfc"] is None


def test_sysfs_traffic_class_global_form_from_cat():
    facts = parse_sysfs({"/sys/class/infiniband/mlx5_3/tc/1/traffic_class": sample("traffic_class-mlx5_3-global.txt")},
                        port="ens14f0")
    assert port(facts, "ens14f0")["traffic_class"] == 106 and facts["problems"] == []


def test_sysfs_from_grep_synthetic():
    facts = parse_sysfs(sample("sysfs-grep-synthetic.txt"))
    s = port(facts, "ens1f0np0")
    assert (s["ecn_rp"], s["ecn_np"], s["cnp_dscp"], s["cnp_priority"]) == ([3, 5], [3], 48, 6)
    assert (s["mtu"], s["traffic_class"], s["roce_tos"]) == (9000, 106, 106)


def test_sysfs_traffic_class_forms():
    path = "/sys/class/infiniband/mlx5_0/tc/1/traffic_class"
    assert port(parse_sysfs({path: "106\n"}))["traffic_class"] == 106
    assert port(parse_sysfs({path: "Global tclass=106\ntclass=96, dst_ip=10.0.0.0/8\n"}))["traffic_class"] == 106
    unset = parse_sysfs({path: ""})
    assert port(unset)["traffic_class"] is None and unset["problems"] == []
    assert parse_sysfs({path: "what?"})["problems"]


def test_sysfs_mapping_with_the_port_from_the_paths():
    bare = parse_sysfs({"/sys/class/net/eth2/ecn/roce_np/enable/3": "1\n",
                        "/sys/class/net/eth2/ecn/roce_rp/enable/3": "0\n",
                        "/sys/class/net/eth2/mtu": "4200\n",
                        "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos": "106\n"})
    s = port(bare, "eth2")
    assert (s["ecn_np"], s["ecn_rp"], s["mtu"], s["roce_tos"]) == ([3], [], 4200, 106)


def test_sysfs_tolerance():
    text = sample("sysfs-grep-synthetic.txt").replace("\n", "\r\n\r\n") + "grep: /sys/x: No such file\r\n"
    assert port(parse_sysfs(text), "ens1f0np0")["cnp_dscp"] == 48
    assert parse_sysfs({"/sys/class/net/eth2/ecn/roce_np/enable/3": "x"})["problems"]
    assert parse_sysfs({"/sys/class/net/eth2/mtu": "lots"})["problems"]
    two = parse_sysfs({"/sys/class/net/eth2/mtu": "9000", "/sys/class/net/eth3/mtu": "1500"})
    assert two["problems"] and "" in two["ports"]
    assert parse_sysfs("total garbage")["problems"]
    assert parse_sysfs({})["problems"]


# --- cma_roce_tos ------------------------------------------------------------------------------


def test_cma_roce_tos_output():
    assert port(parse_cma_roce_tos(sample("cma_roce_tos-netarbiter.txt")))["roce_tos"] == 106
    assert parse_cma_roce_tos("")["problems"]
