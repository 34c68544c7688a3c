# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Field review of issue 33 (lossless under load): each behaviour checked against the program on the other side
(docs/reviews/33-lossless-under-load.md). Every case starts from the recorded samples of data/counters/ (their
ORIGIN.md) in their real layout, changes exactly one stage, and says what the verdict must then be; each control is
the recorded pair with nothing changed.

Attribution (question 1): which side counts which RDMA counter (the kernel's mlx5 counters.rst; rxe_resp.c
check_psn: ``out_of_seq_request`` when a PSN is ahead of the expected one, ``duplicate_request`` when behind;
rxe_comp.c check_ack: ``rcvd_seq_err`` on a PSN sequence NAK) decides which links a moved counter can point at."""

from __future__ import annotations

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.fleet import incast_results as r
from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import describe, parse_counters
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_report import COLOURS, LABELS, STATES, load_report
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import VERDICTS, counter_delta, load_verdict
from ansible_collections.ainet.fabric.plugins.action.lossless_test import FAIL_CHOICES, ARGUMENT_SPEC, perftest_argv
from test_incast_results import INCAST, NIC, NVIDIA, host_read, tor  # noqa: E402 (pytest puts this directory on sys.path)
from test_load_counters import edit, judge, sonic_cell, text  # noqa: E402


def mlx5_value(name, when="before"):
    """A counter of the recorded mlx5 hw_counters read."""
    for line in text("hw_counters-mlx5-%s.txt" % when).splitlines():
        path, value = line.rsplit(":", 1)
        if path.rsplit("/", 1)[-1] == name:
            return int(value)
    raise AssertionError(name)


def sender(tmp_path, name, changes=None, device="mlx5_0", driver="mlx5_core", ethtool_file=None):
    """A sender's reads (its host read before and after the load, the recorded pair), ``changes`` in the after."""
    base = tmp_path / name
    return {"interface": NIC,
            "before": host_read(base, "before", device=device, driver=driver, ethtool_file=ethtool_file),
            "after": host_read(base / "a", "after", device=device, driver=driver, changes=changes,
                               ethtool_file=ethtool_file)}


def incast_run(tmp_path, receiver_changes=None, senders=None, with_tor=True, tor_after=None):
    before = host_read(tmp_path / "rx", "before")
    after = host_read(tmp_path / "rx" / "a", "after", changes=receiver_changes)
    return r.judge(INCAST, 3, 1, 10, NVIDIA, before, after, tor("before") if with_tor else None,
                   (tor_after or tor("after")) if with_tor else None, senders=senders)


def klass(run):
    return run["verdict"]["classes"][0]


# ---- 1. attribution: which counters, on which side, point at which link -------------------------------------------

def test_control_clean_receiver_and_senders_is_lossless(tmp_path):
    run = incast_run(tmp_path, senders={"gpu02": sender(tmp_path, "gpu02"), "gpu03": sender(tmp_path, "gpu03")})
    assert run["verdict"]["verdict"] == "lossless_under_load", klass(run)["message"]
    assert klass(run)["senders_moved"] == []


def test_receiver_duplicate_request_alone_is_lost_not_the_receivers_drop(tmp_path):
    # The VM tier's finding: a sender's downlink loses the receiver's ACKs, the sender retransmits, the receiver
    # counts duplicate_request. Before the review: "dropped" on the receiver's link.
    run = incast_run(tmp_path, {"duplicate_request": mlx5_value("duplicate_request") + 3},
                     senders={"gpu02": sender(tmp_path, "gpu02"), "gpu03": sender(tmp_path, "gpu03")})
    assert run["verdict"]["verdict"] == "lost"
    message = klass(run)["message"]
    assert "lost under load between gpu02, gpu03 and gpu01, not placed" in message
    assert "ACKs or read responses lost on their way back (gpu01's uplink or a sender's downlink)" in message
    assert "duplicate_request +3" in message


def test_receiver_out_of_sequence_and_a_senders_packet_seq_err_are_lost_on_the_data_path(tmp_path):
    # Data lost toward the receiver: a sender's uplink or the receiver's downlink; host counters cannot tell which.
    run = incast_run(tmp_path, {"out_of_sequence": mlx5_value("out_of_sequence") + 5}, senders={
        "gpu02": sender(tmp_path, "gpu02", {"packet_seq_err": mlx5_value("packet_seq_err", "after") + 5}),
        "gpu03": sender(tmp_path, "gpu03")})
    assert run["verdict"]["verdict"] == "lost"
    message = klass(run)["message"]
    assert "data lost on its way to gpu01 (a sender's uplink or gpu01's downlink)" in message
    assert "gpu02 RDMA %s packet_seq_err +5" % NIC in message and "gpu01 RDMA %s out_of_sequence +5" % NIC in message
    # The ToR was read and counted no drop on the receiver's port: said, so the operator looks at the senders' ports.
    assert "the switch counted no drop on Ethernet8" in message


def test_without_tor_reads_the_message_says_the_switch_would_place_it(tmp_path):
    run = incast_run(tmp_path, {"out_of_sequence": mlx5_value("out_of_sequence") + 5}, with_tor=False)
    assert run["verdict"]["verdict"] == "lost"
    assert "the ToR's drop counters of the ports would place it" in klass(run)["message"]


def test_switch_egress_drop_on_the_receivers_port_places_it_dropped(tmp_path):
    # The ToR's queue 3 drops on Ethernet8 (its egress toward gpu01): evidence that points at gpu01's link.
    queue = sonic_cell(text("sonic-queue-after.txt"), "Ethernet8 UC3", "Drop/pkts", 120)
    run = incast_run(tmp_path, {"out_of_sequence": mlx5_value("out_of_sequence") + 5},
                     tor_after={"sonic_pfc": text("sonic-pfc-after.txt"), "sonic_queue": queue})
    assert run["verdict"]["verdict"] == "dropped"
    assert "switch Ethernet8 uc3_drop_pkts +120" in klass(run)["message"]


def test_a_senders_own_nic_drop_places_the_loss_on_its_link_not_the_receivers(tmp_path):
    # Before the review the senders' reads were not judged: the receiver's link came out lossless.
    run = incast_run(tmp_path, senders={"gpu02": sender(tmp_path, "gpu02"),
                                        "gpu03": sender(tmp_path, "gpu03", ethtool_file=None)})
    assert run["verdict"]["verdict"] == "lossless_under_load"
    nic = edit(text("ethtool-cx6dx-after.txt"), "rx_discards_phy", 77)
    s3 = sender(tmp_path, "gpu03x")
    s3["after"]["interfaces"][NIC]["ethtool"] = nic
    run = incast_run(tmp_path, senders={"gpu02": sender(tmp_path, "gpu02"), "gpu03": s3})
    assert run["verdict"]["verdict"] == "lost" and klass(run)["placed_on"] == ["gpu03"]
    assert "on the senders' side, not on this link: gpu03 host NIC %s rx_discards_phy +77" % NIC in klass(run)["message"]


def test_a_senders_ack_timeout_alone_is_never_lossless(tmp_path):
    run = incast_run(tmp_path, senders={"gpu02": sender(tmp_path, "gpu02", {
        "local_ack_timeout_err": mlx5_value("local_ack_timeout_err", "after") + 2})})
    assert run["verdict"]["verdict"] == "lost"
    assert "gpu02 RDMA %s local_ack_timeout_err +2" % NIC in klass(run)["message"]
    # an ACK timeout is a lost ACK or a lost last packet: no direction is claimed
    assert "on its way" not in klass(run)["message"] and "way back" not in klass(run)["message"]


def test_vm_tier_shape_rxe_loss_toward_vm1_is_lost_on_vm1s_run_only(tmp_path):
    """The VM test's loss (data frames out of the ToR port toward vm1): vm1's run counts out_of_seq_request and its
    sender's rcvd_seq_err; vm2's run (vm1 sending, its data up a clean link) counts nothing."""
    lan = "ethtool-cx4lx.txt"
    incast = dict(INCAST, receiver="vm1", senders=["vm2"], tor_port="swp1")

    def rxe(base, changes=None):
        return {"interface": NIC,
                "before": host_read(base, "before", device="rxe0", driver=None, ethtool_file=lan),
                "after": host_read(base / "a", "after", device="rxe0", driver=None, ethtool_file=lan, changes=changes)}

    me = rxe(tmp_path / "vm1", {"out_of_seq_request": 23})
    lossy = r.judge(incast, 3, 1, 5, NVIDIA, me["before"], me["after"],
                    senders={"vm2": rxe(tmp_path / "vm2", {"rcvd_seq_err": 9})})
    assert lossy["verdict"]["verdict"] == "lost"
    assert klass(lossy)["message"].startswith("Priority 3 lost under load between vm2 and vm1, not placed: vm1 RDMA")
    other = rxe(tmp_path / "vm2b")
    clean = r.judge(dict(incast, receiver="vm2", senders=["vm1"]), 3, 1, 5, NVIDIA, other["before"], other["after"],
                    senders={"vm1": rxe(tmp_path / "vm1b")})
    assert clean["verdict"]["verdict"] == "inconclusive"
    assert "vm1 enp1s0" not in r.finding(clean)


def test_the_standalone_filter_calls_an_rdma_only_loss_lost():
    result, classes = judge(rdma_a=edit(text("hw_counters-mlx5-after.txt"), "duplicate_request", 6))
    assert result["verdict"] == "lost" and classes[3]["placed"] == []
    result, classes = judge(nic_a=edit(text("ethtool-cx6dx-after.txt"), "rx_discards_phy", 6))
    assert result["verdict"] == "dropped" and [r_["counter"] for r_ in classes[3]["placed"]] == ["rx_discards_phy"]


# ---- 2. widths and wraps ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt, name, width", [
    ("rdma_mlx5", "out_of_sequence", 32),          # Q counter: be32_to_cpu (counters.c mlx5_ib_query_q_counters)
    ("rdma_mlx5", "duplicate_request", 32),
    ("rdma_mlx5", "local_ack_timeout_err", 32),
    ("rdma_mlx5", "out_of_buffer", 32),
    ("rdma_mlx5", "np_cnp_sent", 64),               # congestion counters: 64-bit (query_cong_statistics *_high/low)
    ("rdma_mlx5", "rp_cnp_handled", 64),
    ("rdma_mlx5", "np_ecn_marked_roce_packets", 64),
    ("rdma_rxe", "duplicate_request", 64),          # rxe_hw_counters.c: atomic64_read
    ("rdma_rxe", "out_of_seq_request", 64),
    ("ethtool_mlx5", "rx_out_of_buffer", 32),       # en_stats.c: the Q counter, MLX5E_READ_CTR32
    ("ethtool_mlx5", "rx_discards_phy", 64),        # PPCNT, MLX5E_READ_CTR64_BE
])
def test_widths_follow_the_driver(fmt, name, width):
    assert describe(fmt, name)["width"] == width


def test_a_32bit_queue_counter_wraps_and_a_64bit_one_resets():
    assert counter_delta(4294967290, 5, 32) == (11, "wrapped")
    assert counter_delta(4294967290, 5, 64) == (None, "reset")
    assert counter_delta(3000000000, 5, 32) == (1294967301, "wrapped")
    # no fixed bound (issue 40): the read decides whether it wrapped (test_counter_wrap.py)
    assert counter_delta(1000000000, 5, 32) == (3294967301, "wrapped")
    wrapped = edit(edit(text("hw_counters-mlx5-before.txt"), "out_of_sequence", 4294967290),
                   "rp_cnp_handled", mlx5_value("rp_cnp_handled"))
    result, classes = judge(rdma_b=wrapped, rdma_a=edit(text("hw_counters-mlx5-after.txt"), "out_of_sequence", 5))
    assert result["verdict"] == "lost" and "out_of_sequence +11 (wrapped)" in classes[3]["message"]


# ---- 3. absent vs zero --------------------------------------------------------------------------------------------

def test_a_counter_absent_from_one_read_is_not_reported_never_zero():
    assert counter_delta(None, 5, 64) == (None, "not_reported")
    rdma = "\n".join(line for line in text("hw_counters-mlx5-after.txt").splitlines()
                     if not line.rsplit("/", 1)[-1].startswith(("np_", "rp_")))
    rdma_b = "\n".join(line for line in text("hw_counters-mlx5-before.txt").splitlines()
                       if not line.rsplit("/", 1)[-1].startswith(("np_", "rp_")))
    # no congestion-control capability: no np_/rp_ counters at all -> ECN not judged, never "ECN inactive"
    result, classes = judge(rdma_b=rdma_b, rdma_a=rdma)
    assert result["verdict"] == "lossless_under_load" and "ECN was not judged" in classes[3]["message"]


# ---- 4. link-level pause ------------------------------------------------------------------------------------------

def test_link_level_pause_with_ecn_marks_is_not_lossless():
    """802.3x pause held the link (PFC off: no per-priority pause counter) while ECN marks moved: the class was not
    kept lossless by PFC; before the review this was lossless_under_load."""
    base = text("ethtool-cx7-global-pause.txt")
    after = edit(edit(base, "tx_pause_ctrl_phy", 1366552), "tx_global_pause", 1366552)
    rdma_b = text("hw_counters-mlx5-before.txt")
    before = {"nic": parse_counters(base, "ethtool_mlx5"), "rdma": parse_counters(rdma_b, "rdma_mlx5")}
    after_ = {"nic": parse_counters(after, "ethtool_mlx5"),
              "rdma": parse_counters(text("hw_counters-mlx5-after.txt"), "rdma_mlx5")}
    result = load_verdict(before, after_, profile="nvidia")
    assert result["verdict"] == "inconclusive", result["classes"][0]["message"]
    assert "802.3x flow control, not PFC" in result["classes"][0]["message"]
    control = load_verdict(before, dict(after_, nic=parse_counters(base, "ethtool_mlx5")), profile="nvidia")
    assert control["verdict"] == "lossless_under_load"  # ECN alone, no link pause: congestion reached, no drop


def test_global_pause_names_are_the_drivers():
    for name in ("rx_global_pause", "tx_global_pause", "rx_global_pause_duration", "tx_global_pause_duration",
                 "rx_global_pause_transition", "rx_pause_ctrl_phy", "tx_pause_ctrl_phy"):
        assert describe("ethtool_mlx5", name)["fact"] == "link_pause", name
    assert describe("ethtool_mlx5", "rx_prio3_pause")["fact"] == "pfc_pause"


# ---- 5. perftest --------------------------------------------------------------------------------------------------

def test_perftest_flags_are_the_gid_based_ones():
    device = {"rdma_device": "mlx5_0", "port": 1, "gid_index": 3}
    args = {"seconds": 10, "qps": 4, "message_size": 65536, "tx_depth": 16, "qp_timeout": 20, "rate_gbps": 25.0}
    client = perftest_argv(device, args, 106, 18515, peer="10.0.0.1", timeout=70)
    server = perftest_argv(device, args, 106, 18515, timeout=600)
    assert client[client.index("--tclass") + 1] == "106" and "-T" not in client and "-R" not in client
    assert client[client.index("-x") + 1] == "3" and client[client.index("-D") + 1] == "10"
    assert client[client.index("-t") + 1] == "16" and client[client.index("-u") + 1] == "20"
    assert "-t" not in server and "-u" not in server and "--rate_limit" not in server  # sender-side options only
    assert server[server.index("-q") + 1] == client[client.index("-q") + 1] == "4"  # both ends agree
    assert server[server.index("-s") + 1] == "65536"


# ---- 6. SONiC -----------------------------------------------------------------------------------------------------

def test_sonic_clamped_counters_after_a_clear_are_a_reset_not_a_drop():
    """pfcstat/queuestat print max(0, new - cached) since sonic-utilities d77c411 (#697): a `sonic-clear` between
    the reads makes the second read smaller: a reset (delta unknown), never a negative delta or a drop."""
    queue_a = sonic_cell(text("sonic-queue-after.txt"), "Ethernet8 UC3", "Counter/pkts", 0)
    queue_a = sonic_cell(queue_a, "Ethernet8 UC3", "Drop/pkts", 0)
    before_q = sonic_cell(text("sonic-queue-before.txt"), "Ethernet8 UC3", "Drop/pkts", 50)
    q_before = parse_counters(before_q, "sonic_queue", port="Ethernet8")
    q_after = parse_counters(queue_a, "sonic_queue", port="Ethernet8")
    assert counter_delta(q_before["ports"]["Ethernet8"]["uc3_drop_pkts"], q_after["ports"]["Ethernet8"]["uc3_drop_pkts"],
                         describe("sonic_queue", "uc3_drop_pkts")["width"]) == (None, "reset")


def test_sonic_na_is_not_reported():
    facts = parse_counters(text("sonic-pfc-before.txt"), "sonic_pfc")
    na = [line for line in text("sonic-pfc-before.txt").splitlines() if "N/A" in line]
    assert na, "the recorded sample has an N/A cell"
    port = na[0].split()[0]
    assert len(facts["ports"][port]) < 16  # the N/A cells are absent, not 0


# ---- 7. the report ------------------------------------------------------------------------------------------------

def test_report_has_a_colour_and_label_for_every_verdict_and_lost_is_not_red_or_green():
    assert set(STATES) == set(VERDICTS) | {"skipped"} and set(COLOURS) == set(STATES) == set(LABELS)
    assert len(set(COLOURS.values())) == len(COLOURS)
    assert COLOURS["lost"] not in (COLOURS["dropped"], COLOURS["lossless_under_load"])
    assert "lost" in FAIL_CHOICES and "lost" in ARGUMENT_SPEC["fail_on"]["default"]


def test_report_hover_lists_the_counters_of_a_lost_run(tmp_path):
    run = incast_run(tmp_path, {"duplicate_request": mlx5_value("duplicate_request") + 3})
    html = load_report([run], cluster="c1")["html"]
    assert 'class="v-lost"' in html or "v-lost" in html
    assert "duplicate_request +3" in html
