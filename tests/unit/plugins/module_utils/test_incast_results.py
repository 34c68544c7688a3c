# -*- coding: utf-8 -*-
"""The lossless load test's reads and runs (qos/counters_read.py, fleet/incast_results.py): a node's counters read
from a sysfs tree laid out as the kernel's (the recorded hw_counters of data/counters/, one file per counter) and
``ethtool -S`` as recorded, then judged per receiver link and class with load_verdict. Each verdict has its control
(the recorded pair) and a case where exactly one counter differs."""
from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.fleet import incast_results as r
from ansible_collections.ainet.fabric.plugins.module_utils.model.qos_profile import resolve_profile
from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import describe
from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_read import read_links
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms

DATA = os.path.join(os.path.dirname(__file__), "data", "counters")
NIC = "ens1f0np0"
NVIDIA = resolve_profile({"preset": "nvidia"}, "qos")


def text(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def sysfs(root, device, recorded, driver=None, changes=None):
    """A sysfs tree under ``root`` with ``device``'s port 1 hw_counters from a recorded ``grep -H`` file, one file per
    counter as the kernel has them; ``driver`` links device/driver, else a ``parent`` file (soft-RoCE)."""
    base = root / "sys" / "class" / "infiniband" / device
    counters = base / "ports" / "1" / "hw_counters"
    counters.mkdir(parents=True, exist_ok=True)
    for line in text(recorded).splitlines():
        path, value = line.rsplit(":", 1)
        name = path.rsplit("/", 1)[-1]
        (counters / name).write_text("%s\n" % (changes or {}).get(name, value))
    if driver:
        (root / "bus" / driver).mkdir(parents=True, exist_ok=True)
        (base / "device").mkdir(exist_ok=True)
        if not (base / "device" / "driver").exists():
            (base / "device" / "driver").symlink_to(root / "bus" / driver)
    else:
        (base / "parent").write_text("enp1s0\n")
    return str(root)


def ethtool(recorded):
    return lambda argv: (0, text(recorded), "") if argv[:2] == ["ethtool", "-S"] else (1, "", "unexpected")


def host_read(tmp_path, when, device="mlx5_0", driver="mlx5_core", changes=None, ethtool_file=None):
    kind = "mlx5" if device.startswith("mlx5") else "rxe"
    root = tmp_path / when
    sysfs(root, device, "hw_counters-%s-%s.txt" % (kind, when), driver, changes)
    runner = ethtool(ethtool_file or "ethtool-cx6dx-%s.txt" % when)
    return read_links([{"interface": NIC, "rdma_device": device, "rdma_port": 1}], runner, str(root))


INCAST = {"fabric": "default", "tor": "leaf1", "rail": 1, "tor_port": "Ethernet8", "receiver": "gpu01",
          "interface": NIC, "senders": ["gpu02", "gpu03"], "skipped": None}


def tor(when):
    return {"sonic_pfc": text("sonic-pfc-%s.txt" % when), "sonic_queue": text("sonic-queue-%s.txt" % when)}


def run_of(tmp_path, before_changes=None, after_changes=None, **kw):
    """The incast of INCAST judged on the recorded pair. The pair counts a host the switch paused (``rx_prio3_pause``,
    ``pfc3_tx_pkts``) and whose own sends were slowed (``rp_cnp_handled``): a sender's congestion, so it is gpu02's
    read too - the receiver's link alone moved only the other way (issue 40, load_verdict.ROLE_CONGESTION)."""
    before = host_read(tmp_path, "before", changes=before_changes)
    after = host_read(tmp_path, "after", changes=after_changes)
    senders = kw.get("senders", {"gpu02": {"interface": NIC, "before": host_read(tmp_path / "gpu02", "before"),
                                           "after": host_read(tmp_path / "gpu02", "after")}})
    return r.judge(INCAST, 3, 1, 10, NVIDIA, before, after, kw.get("tor_b", tor("before")),
                   kw.get("tor_a", tor("after")), senders=senders, drop_stages=platforms.drop_stages())


# ---- reading ---------------------------------------------------------------------------------------------------

def test_a_node_read_holds_ethtool_and_every_hw_counter_file_with_the_driver(tmp_path):
    read = host_read(tmp_path, "after")["interfaces"][NIC]
    assert read["rdma_driver"] == "mlx5_core" and read["ethtool"].startswith("NIC statistics:")
    assert read["hw_counters"]["rp_cnp_handled"] == "52211" and read["rdma_error"] is None
    soft = host_read(tmp_path, "after", device="rxe0", driver=None)["interfaces"][NIC]
    assert soft["rdma_driver"] == "rxe" and soft["hw_counters"]["rcvd_pkts"] == "1512044"


def test_a_missing_device_or_tool_is_a_line_not_a_failure(tmp_path):
    out = read_links([{"interface": "eth9", "rdma_device": "mlx5_9", "rdma_port": 1},
                      {"interface": "eth8", "rdma_device": None, "rdma_port": None}],
                     lambda argv: (127, "", "ethtool is not installed"), str(tmp_path))["interfaces"]
    assert out["eth9"]["hw_counters"] is None and "mlx5_9 port 1 has no hw_counters directory" in out["eth9"]["rdma_error"]
    assert out["eth9"]["ethtool_error"] == "eth9: ethtool -S failed (rc 127): ethtool is not installed"
    assert out["eth8"]["rdma_error"] == "eth8 has no RDMA device"


# ---- runs ------------------------------------------------------------------------------------------------------

def test_control_the_recorded_pair_is_lossless_under_load_for_the_receiver_link(tmp_path):
    run = run_of(tmp_path)
    assert {k: run[k] for k in ("tor", "rail", "fabric", "port", "host", "host_nic", "senders", "round", "priority",
                                "seconds", "skipped")} == {
        "tor": "leaf1", "rail": "1", "fabric": "default", "port": "Ethernet8", "host": "gpu01", "host_nic": NIC,
        "senders": ["gpu02", "gpu03"], "round": 1, "priority": 3, "seconds": 10.0, "skipped": None}
    assert run["verdict"]["verdict"] == "lossless_under_load", run["verdict"]["classes"][0]["message"]
    sides = {c["read"] for c in run["verdict"]["counters"]}
    assert sides == {"nic", "rdma", "tor_pfc", "tor_queue"}


def test_one_receiver_rdma_sequence_error_makes_the_run_lost_and_names_it(tmp_path):
    before = host_read(tmp_path, "before")["interfaces"][NIC]["hw_counters"]
    run = run_of(tmp_path, after_changes={"out_of_sequence": int(before["out_of_sequence"]) + 17})
    assert run["verdict"]["verdict"] == "lost"  # end to end: not placed on the receiver's link (review 33)
    assert "RDMA %s out_of_sequence +17" % NIC in run["verdict"]["classes"][0]["message"]
    assert r.finding(run).startswith("gpu01 %s (leaf1 Ethernet8, default rail 1) priority 3 round 1: lost: " % NIC)


def test_a_read_missing_after_the_load_is_not_judged_and_says_so(tmp_path):
    before = host_read(tmp_path, "before")
    after = host_read(tmp_path, "after")
    after["interfaces"][NIC]["hw_counters"], after["interfaces"][NIC]["rdma_error"] = None, "mlx5_0 gone"
    run = r.judge(INCAST, 3, 1, 10, NVIDIA, before, after)
    assert {c["read"] for c in run["verdict"]["counters"]} == {"nic"}
    assert "after: mlx5_0 gone" in run["verdict"]["problems"] and "rdma: read only before the load, not judged" in \
        run["verdict"]["problems"]


def test_nothing_read_is_a_skipped_run_naming_why(tmp_path):
    run = r.judge(INCAST, 3, 1, 10, NVIDIA, {"interfaces": {}}, {"interfaces": {}})
    assert run["verdict"] is None and run["skipped"].startswith("no counter of gpu01 %s was read" % NIC)


def test_soft_roce_without_congestion_counters_is_inconclusive_and_a_lost_packet_is_lost(tmp_path):
    incast = dict(INCAST, tor_port="swp1")
    # the NIC under soft-RoCE has no PFC: a read without per-priority pause counters (the same before and after)
    lan = "ethtool-cx4lx.txt"
    before = host_read(tmp_path, "before", device="rxe0", driver=None, ethtool_file=lan)
    after = host_read(tmp_path, "after", device="rxe0", driver=None, ethtool_file=lan)
    clean = r.judge(incast, 3, 1, 5, NVIDIA, before, after)
    assert clean["verdict"]["verdict"] == "inconclusive"
    assert "No congestion reached on priority 3" in clean["verdict"]["classes"][0]["message"]
    lossy = r.judge(incast, 3, 1, 5, NVIDIA, before,
                    host_read(tmp_path / "x", "after", device="rxe0", driver=None, ethtool_file=lan,
                              changes={"out_of_seq_request": 41}))
    assert lossy["verdict"]["verdict"] == "lost"
    assert "RDMA %s out_of_seq_request +41" % NIC in lossy["verdict"]["classes"][0]["message"]


def test_a_device_without_a_parser_is_not_judged_and_said(tmp_path):
    before = host_read(tmp_path, "before", driver="bnxt_en")
    after = host_read(tmp_path, "after", driver="bnxt_en")
    run = r.judge(INCAST, 3, 1, 10, NVIDIA, before, after)
    assert "rdma" not in {c["read"] for c in run["verdict"]["counters"]}
    assert any("driver bnxt_en) has no counter parser" in p for p in run["verdict"]["problems"])


# ---- inputs and refusals ---------------------------------------------------------------------------------------

def test_traffic_class_of_each_lossless_class():
    assert r.traffic_class(NVIDIA, 3) == 106  # the profile's RoCE ToS: DSCP 26 with ECT(0)
    sonic = resolve_profile({"preset": "sonic"}, "qos")
    assert r.classes({"default": sonic}) == [3, 4]
    assert r.traffic_class(sonic, 3) == 3 << 2 | 2 and r.traffic_class(sonic, 4) == 4 << 2 | 2
    assert r.traffic_class(NVIDIA, 5) is None


def plan(qos):
    model = {"name": "t", "rails": 1, "mtu": 9000, "management_networks": ["10.0.0.0/16"],
             "addressing": {"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24}, "qos": qos}
    return rail_plan(model, {"a": {"node_id": 1, "rail_interfaces": ["eth0"]}})


def test_without_a_lossless_profile_the_test_refuses_naming_the_fix():
    with pytest.raises(r.RefusedError, match=r"no fabric has a lossless profile .* Fix: give the fabric a qos preset"):
        r.lossless_fabrics(plan({"preset": "none"}))
    assert r.lossless_fabrics(plan({"preset": "nvidia"}))["default"]["roce_priority"] == 3
    with pytest.raises(r.RefusedError, match="lossless_test_fabric: 'other' is not a fabric of the cluster"):
        r.lossless_fabrics(plan({"preset": "nvidia"}), "other")


def test_options_out_of_bounds_are_each_one_line():
    assert r.check_bounds(10, 4, 0, 16, 65536) == []
    problems = r.check_bounds(3600, 0, -1, 100, 8)
    assert [p.split(":")[0] for p in problems] == ["lossless_test_seconds", "lossless_test_qps",
                                                   "lossless_test_rate_gbps", "lossless_test_max_senders",
                                                   "lossless_test_message_size"]


def test_a_rail_with_disagreements_is_refused_naming_the_links_and_codes():
    rows = [{"fabric": "default", "rail": 1, "host": "gpu01", "host_port": "eth0", "tor": "leaf1",
             "switch_port": "Ethernet0", "status": "disagree",
             "disagreements": [{"code": "roce_dscp_lossy_on_switch"}, {"code": "pfc_priorities"}]},
            {"fabric": "default", "rail": 2, "host": "gpu01", "status": "agree", "disagreements": []},
            {"fabric": "default", "rail": 3, "host": "gpu01", "status": "error", "error": "no configuration"}]
    refused = r.refused_rails(rows)
    assert list(refused) == [("default", 1)]
    assert refused[("default", 1)] == (
        "default rail 1 is not loaded: its agreement check found 1 link(s) that disagree (gpu01 eth0 / leaf1 "
        "Ethernet0: pfc_priorities, roce_dscp_lossy_on_switch); fix them (playbooks/qos.yml, playbooks/tors.yml) and "
        "run playbooks/validate.yml")


def test_summary_counts_verdicts_and_names_the_worst(tmp_path):
    good = run_of(tmp_path)
    skipped = r.refused_run(INCAST, 3, 2, 10, "default rail 1 is not loaded")
    assert skipped["verdict"] is None and skipped["skipped"] == "default rail 1 is not loaded"
    assert r.summary([good, skipped]) == {"runs": 2, "skipped": 1, "lossless_under_load": 1,
                                          "worst": "lossless_under_load"}


def test_which_way_a_transport_counter_points_is_its_row_s_direction_in_counters():
    """The placing hint (data toward the receiver, ACKs back) reads counters_parse.COUNTERS' direction column: per
    format, with the fact and the width of the row the name always had."""
    expected = {
        ("rdma_mlx5", "out_of_sequence"): "data", ("rdma_mlx5", "packet_seq_err"): "data",
        ("rdma_mlx5", "implied_nak_seq_err"): "acks", ("rdma_mlx5", "duplicate_request"): "acks",
        ("rdma_mlx5", "local_ack_timeout_err"): None, ("rdma_mlx5", "req_transport_retries_exceeded"): None,
        ("rdma_mlx5", "roce_adp_retrans"): None,
        ("rdma_rxe", "out_of_seq_request"): "data", ("rdma_rxe", "rcvd_seq_err"): "data",
        ("rdma_rxe", "duplicate_request"): "acks", ("rdma_rxe", "retry_exceeded_err"): None,
        ("rdma_rxe", "send_err"): None,
    }
    for (fmt, name), direction in expected.items():
        meaning = describe(fmt, name)
        assert (meaning["fact"], meaning["direction"]) == ("transport_error", direction), (fmt, name)
        assert meaning["width"] == (32 if fmt == "rdma_mlx5" else 64), (fmt, name)
    assert describe("rdma_mlx5", "req_cqe_error")["direction"] is None  # info: no direction
    assert describe("ethtool_mlx5", "rx_prio3_discards")["direction"] is None
    assert describe("no_such_format", "out_of_sequence")["direction"] is None
