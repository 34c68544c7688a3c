"""Host QoS parsers on recorded outputs (data/qos/host/ORIGIN.md); expected facts read off each sample."""

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos_parse_host import (
    parse_cma_roce_tos, parse_dcb, parse_mlnx_qos, parse_sysfs,
)

DATA = os.path.join(os.path.dirname(__file__), "data", "qos", "host")
DEFAULT_MAP = {d: d // 8 for d in range(64)}


def sample(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def port(facts, name=""):
    return facts["ports"][name]


def test_mlnx_qos_ofed42_from_the_community_post():
    facts = parse_mlnx_qos(sample("mlnx_qos-ofed42-eth2.txt"), port="eth2")
    s = port(facts, "eth2")
    assert facts["problems"] == []
    assert (s["dcbx"], s["trust"], s["pfc"]) == ("OS controlled", "dscp", [0, 2, 6, 7])
    assert s["dscp_to_priority"] == DEFAULT_MAP
    assert s["ets"][6] == {"mode": "strict", "weight": None}
    assert s["ets"][7] == {"mode": "ets", "weight": 40} and s["ets"][0] == {"mode": "ets", "weight": 10}
    assert s["priority_to_queue"][0] == 1 and s["priority_to_queue"][1] == 0 and s["priority_to_queue"][3] == 3
    assert s["buffer_lossless"] is None  # no buffer rows in this version


def test_mlnx_qos_new_layout_with_buffers():
    s = port(parse_mlnx_qos(sample("mlnx_qos-buffers-synthetic.txt")))
    assert (s["trust"], s["pfc"], s["buffer_lossless"]) == ("dscp", [3], [3])
    assert s["ets"][3] == {"mode": "vendor", "weight": None}
    assert s["dscp_to_priority"][26] == 3 and s["dscp_to_priority"][48] == 6


def test_mlnx_qos_tolerates_crlf_truncation_and_garbage():
    text = sample("mlnx_qos-buffers-synthetic.txt").replace("\n", "\r\n")
    assert port(parse_mlnx_qos(text))["pfc"] == [3]
    truncated = sample("mlnx_qos-ofed42-eth2.txt").split("PFC configuration")[0]
    s = port(parse_mlnx_qos(truncated))
    assert s["trust"] == "dscp" and s["pfc"] is None and s["ets"] is None
    garbage = parse_mlnx_qos("Segmentation fault\n")
    assert garbage["problems"] and port(garbage)["trust"] is None
    assert parse_mlnx_qos("")["problems"] == ["mlnx_qos: empty output"]


def test_dcb_man_page_outputs_concatenated():
    names = ("dcb-pfc-man.txt", "dcb-ets-man.txt", "dcb-app-numeric-man.txt", "dcb-buffer-man.txt")
    text = "\n".join(sample(n) for n in names)
    facts = parse_dcb(text, port="eth0")
    s = port(facts, "eth0")
    assert (s["pfc_capable"], s["pfc"]) == (8, [6, 7])
    assert s["ets"][0] == {"mode": "ets", "weight": 33} and s["ets"][2] == {"mode": "ets", "weight": 34}
    assert s["ets"][5] == {"mode": "strict", "weight": None}
    assert s["priority_to_queue"] == {p: p for p in range(8)}
    assert s["dscp_to_priority"] == {0: 0, 24: 3, 48: 6}
    assert s["buffer_lossless"] == [6, 7]  # 1Mb and 10Kb buffers
    assert s["trust"] is None  # iproute2 6.1 has no apptrust
    assert any("DSCP 24 has several APP entries" in p for p in facts["problems"])


def test_dcb_symbolic_and_numeric_dscp_agree():
    symbolic = port(parse_dcb(sample("dcb-app-symbolic-man.txt")))["dscp_to_priority"]
    numeric = port(parse_dcb(sample("dcb-app-numeric-man.txt")))["dscp_to_priority"]
    assert symbolic == numeric == {0: 0, 24: 3, 48: 6}
    assert port(parse_dcb("dscp-prio AF31:3 EF:5 CS6:6"))["dscp_to_priority"] == {26: 3, 46: 5, 48: 6}


@pytest.mark.parametrize("order, trust", [("order dscp", "dscp"), ("order pcp dscp", "pcp,dscp"),
                                          ("order pcp", "pcp"), ("order", "none")])
def test_dcb_apptrust(order, trust):
    assert port(parse_dcb(order))["trust"] == trust


def test_dcb_json_objects():
    text = '{"pfc_cap":8,"prio_pfc":{"0":false,"3":true}}\n{"dscp_prio":[[26,3],[48,6]]}'
    s = port(parse_dcb(text))
    assert (s["pfc"], s["dscp_to_priority"]) == ([3], {26: 3, 48: 6})


def test_sysfs_from_grep_and_from_files():
    facts = parse_sysfs(sample("sysfs-grep-synthetic.txt"))
    s = port(facts, "ens1f0np0")
    assert (s["ecn_rp"], s["ecn_np"], s["cnp_dscp"], s["cnp_priority"]) == ([3, 5], [3], 48, 6)
    assert (s["mtu"], s["traffic_class"], s["roce_tos"]) == (9000, 106, 106)
    bare = parse_sysfs({"/sys/class/infiniband/mlx5_0/tc/1/traffic_class": "106\n",
                        "/sys/class/net/eth2/ecn/roce_np/enable/3": "1\n"})
    assert port(bare, "eth2")["traffic_class"] == 106 and port(bare, "eth2")["ecn_np"] == [3]
    assert parse_sysfs({"/sys/class/net/eth2/ecn/roce_np/enable/3": "x"})["problems"]


def test_cma_roce_tos_output():
    assert port(parse_cma_roce_tos("106\n"))["roce_tos"] == 106
    assert parse_cma_roce_tos("")["problems"]
