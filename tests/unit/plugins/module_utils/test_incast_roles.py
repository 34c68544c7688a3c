# -*- coding: utf-8 -*-
"""A link's role in an incast (issue 40): only the counters that count the incast's direction are its congestion.

The recorded pair (data/counters/ORIGIN.md) counts a host the switch held back: its NIC received PFC pauses
(``rx_prio3_pause`` +5,500), the ToR sent them out of its port (``pfc3_tx_pkts`` +5,500) and its RDMA device handled
CNPs (``rp_cnp_handled`` +12,000): a sender's congestion, the other way for a receiver. Each case changes one
counter of the pair or the role."""
from __future__ import annotations

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import ROLE_CONGESTION, role_evidence
from ansible_collections.ainet.fabric.tests.unit.plugins.module_utils.test_load_counters import (
    edit, judge, sonic_cell, text)


def test_without_a_role_both_directions_count_the_control():
    assert judge()[0]["verdict"] == "lossless_under_load"


def test_as_a_sender_the_pair_is_congestion_reached():
    result, classes = judge(role="sender")
    assert result["verdict"] == "lossless_under_load", classes[3]["message"]
    assert {r["counter"] for r in classes[3]["moved"]["pause"] + classes[3]["moved"]["ecn"]} == {
        "rx_prio3_pause", "pfc3_tx_pkts", "rp_cnp_handled"}
    assert classes[3]["other_way"] == []


def test_as_a_receiver_the_pair_moved_only_the_other_way_and_proves_nothing():
    result, classes = judge(role="receiver")
    assert result["verdict"] == "inconclusive"
    assert {r["counter"] for r in classes[3]["other_way"]} == {"rx_prio3_pause", "pfc3_tx_pkts", "rp_cnp_handled"}
    assert "Moved the other way, not the receiver's evidence: host NIC ens1f0np0 rx_prio3_pause +5,500" in \
        classes[3]["message"]


def test_a_receiver_whose_notification_point_sent_cnps_reached_congestion():
    rdma = edit(text("hw_counters-mlx5-after.txt"), "np_cnp_sent", 700)  # 0 before: marked packets reached it
    result, classes = judge(role="receiver", rdma_a=rdma)
    assert result["verdict"] == "lossless_under_load", classes[3]["message"]
    assert [r["counter"] for r in classes[3]["moved"]["ecn"]] == ["np_cnp_sent"]


def test_a_receiver_whose_nic_paused_the_switch_reached_congestion():
    before = text("ethtool-cx6dx-before.txt")
    nic_b = edit(before, "tx_prio3_pause", 100)
    nic_a = edit(text("ethtool-cx6dx-after.txt"), "tx_prio3_pause", 900)
    result, classes = judge(role="receiver", nic_b=nic_b, nic_a=nic_a, priorities=[3])
    assert [r["counter"] for r in classes[3]["moved"]["pause"]] == ["tx_prio3_pause"]
    # DCQCN's counters did not move the receiver's way: ECN not acting
    assert result["verdict"] == "ecn_inactive", classes[3]["message"]


def test_a_drop_counts_in_either_role():
    queue = sonic_cell(text("sonic-queue-after.txt"), "Ethernet8 UC3", "Drop/pkts", 120)
    for role in ("receiver", "sender"):
        assert judge(role=role, queue_a=queue)[0]["verdict"] == "dropped"


def test_an_unknown_role_is_one_line():
    with pytest.raises(ValueError, match="role: 'listener' is not a role of an incast; use one of: receiver, sender"):
        judge(role="listener")


@pytest.mark.parametrize("counter", ["rx_prio3_pause", "pfc3_tx_pkts", "txFrames", "pfc-stats.3.tx-pause-frames",
                                     "tx-stats.tx-pfc-stats.pause-packets", "rp_cnp_handled", "cc_rx_cnp_pkts",
                                     "tx-stats.tx-cnp-stats.cnp-packets"])
def test_every_counter_is_one_role_s_evidence_never_both(counter):
    twin = {"rx_prio3_pause": "tx_prio3_pause", "pfc3_tx_pkts": "pfc3_rx_pkts", "txFrames": "rxFrames",
            "pfc-stats.3.tx-pause-frames": "pfc-stats.3.rx-pause-frames",
            "tx-stats.tx-pfc-stats.pause-packets": "rx-stats.rx-pfc-stats.pause-packets",
            "rp_cnp_handled": "np_cnp_sent", "cc_rx_cnp_pkts": "cc_tx_cnp_pkts",
            "tx-stats.tx-cnp-stats.cnp-packets": "tx-stats.tx-ecn-stats.ecn-marked-packets"}[counter]
    assert role_evidence({"counter": counter}, "sender") and not role_evidence({"counter": counter}, "receiver")
    assert role_evidence({"counter": twin}, "receiver") and not role_evidence({"counter": twin}, "sender")
    assert role_evidence({"counter": counter}, None) and sorted(ROLE_CONGESTION) == ["receiver", "sender"]
