# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Field review of issue 33, the senders' side of an incast and the counters' settling (docs/reviews/
33-senders-settle.md). Every case starts from the recorded samples of data/counters/ (their ORIGIN.md) in their real
layout, read the way the job reads them (``counters_read.read_links`` on a sysfs tree, the NOS's show output), and
changes exactly one stage; each control is the recorded pair.

The shape of every case: a 2:1 incast on priority 3 whose receiver's link shows nothing (its NIC, RDMA device and ToR
port read the same twice), so whatever decides the run comes from the senders' reads.

Oracles (cited again where used):

* mlx5 ``ethtool -S``: torvalds/linux@16f448d Documentation/networking/device_drivers/ethernet/mellanox/mlx5/
  counters.rst - ``rx_prio[p]_pause`` "pause packets received ... the network is congested and cannot absorb the
  traffic coming from the adapter"; ``tx_prio[p]_pause`` "pause packets transmitted ... the adapter is congested and
  cannot absorb the traffic coming from the network".
* DCQCN roles of mlx5 ``hw_counters`` (torvalds/linux@10d4de4 drivers/infiniband/hw/mlx5/counters.c, the congestion
  counters ``np_*`` of the notification point, ``rp_*`` of the reaction point): the receiver of marked packets is the
  NP (``np_ecn_marked_roce_packets``, ``np_cnp_sent``), the sender that slows down is the RP (``rp_cnp_handled``).
* SONiC ``show pfc counters``: sonic-net/sonic-utilities@7eef69b scripts/pfcstat - ``Port Rx`` is
  SAI_PORT_STAT_PFC_<p>_RX_PKTS, ``Port Tx`` SAI_PORT_STAT_PFC_<p>_TX_PKTS (frames the port received / sent).
* SONiC polling: sonic-net/sonic-swss@00190d7 orchagent/portsorch.cpp - PORT_STAT_FLEX_COUNTER_POLLING_INTERVAL_MS
  1000 (``port_stat_ids`` holds SAI_PORT_STAT_PFC_<p>_RX/TX_PKTS), QUEUE_STAT_FLEX_COUNTER_POLLING_INTERVAL_MS 10000
  (SAI_QUEUE_STAT_DROPPED_PACKETS), PG_DROP_STAT_FLEX_COUNTER_POLLING_INTERVAL_MS 10000.
* mlxsw: torvalds/linux@ee62593 drivers/net/ethernet/mellanox/mlxsw/spectrum.h ``MLXSW_HW_STATS_UPDATE_TIME HZ`` (the
  periodic_hw_stats cache behind ``ip -s link`` and the offloaded qdiscs' stats, refreshed once a second).
* Cumulus switchd: the Cumulus Linux 5.9 user guide, "Configuring switchd" (``stats.poll_interval = 2000`` msec;
  NVUE: physical interfaces 1 to 10 s, default 2 s).
"""

from __future__ import annotations

import os

import jinja2
import pytest
import yaml

from ansible_collections.ainet.fabric.plugins.module_utils.fleet import incast_results as r
from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_read import read_links
from ansible_collections.ainet.fabric.plugins.module_utils.tor import nos_cumulus, nos_eos, nos_linux, nos_sonic, platforms
from test_incast_results import NIC, NVIDIA, text  # noqa: E402 (pytest puts this directory on sys.path)
from test_load_counters import edit, sonic_cell  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
E_B, E_A = text("ethtool-cx6dx-before.txt"), text("ethtool-cx6dx-after.txt")      # rx_prio3_pause +5,500
H_B, H_A = text("hw_counters-mlx5-before.txt"), text("hw_counters-mlx5-after.txt")  # rp_cnp_handled +12,000
OTHER = "ens2f0np0"   # the same host's NIC on another rail


def node(tmp_path, name, ethtool, hw, other=None):
    """A host read as the ``lossless_counters`` module makes it (``read_links`` on a sysfs tree laid out as the
    kernel's, ``ethtool -S`` as recorded); ``other``: the ``ethtool -S`` of the host's NIC on another rail."""
    root = tmp_path / name
    base = root / "sys" / "class" / "infiniband" / "mlx5_0"
    counters = base / "ports" / "1" / "hw_counters"
    counters.mkdir(parents=True)
    for line in hw.splitlines():
        path, value = line.rsplit(":", 1)
        (counters / path.rsplit("/", 1)[-1]).write_text(value + "\n")
    (root / "bus" / "mlx5_core").mkdir(parents=True)
    (base / "device").mkdir()
    (base / "device" / "driver").symlink_to(root / "bus" / "mlx5_core")
    links = [{"interface": NIC, "rdma_device": "mlx5_0", "rdma_port": 1}]
    if other is not None:
        links.append({"interface": OTHER, "rdma_device": None, "rdma_port": None})
    texts = {NIC: ethtool, OTHER: other}
    return read_links(links, lambda argv: (0, texts[argv[2]], ""), str(root))


def host_pair(tmp_path, name, after_ethtool=E_B, after_hw=H_B, **kw):
    """``(before, after)`` of a host: the recorded before read, and ``after_ethtool``/``after_hw`` after the load."""
    before_other = kw.get("other") and E_B
    return (node(tmp_path, name + "-b", E_B, H_B, before_other),
            node(tmp_path, name + "-a", after_ethtool, after_hw, kw.get("other")))


def sender(tmp_path, name, **kw):
    before, after = host_pair(tmp_path, name, **kw)
    return {"interface": NIC, "before": before, "after": after}


QUIET = {}   # a sender whose reads did not move (the recorded before read twice)


def incast(tor_port="Ethernet0", ports=None):
    return {"fabric": "default", "tor": "leaf1", "rail": 1, "tor_port": tor_port, "receiver": "gpu01",
            "interface": NIC, "senders": ["gpu02", "gpu03"], "skipped": None,
            "sender_ports": ports if ports is not None else {"gpu02": "Ethernet4", "gpu03": "Ethernet8"}}


def run_of(tmp_path, senders, tor_before=None, tor_after=None, receiver_ethtool=E_B, **kw):
    before, after = host_pair(tmp_path, "gpu01", after_ethtool=receiver_ethtool)
    reads = dict((name, sender(tmp_path, name, **opts)) for name, opts in senders.items())
    return r.judge(kw.get("incast", incast()), 3, 1, 10, NVIDIA, before, after, tor_before, tor_after, senders=reads)


def klass(run):
    return run["verdict"]["classes"][0]


def at_senders(run):
    """The congestion records the senders' reads gave the run: ``{(sender, counter)}``."""
    cls = klass(run)
    return {(x["host"], x["counter"]) for x in cls["moved"]["pause"] + cls["moved"]["ecn"] if "host" in x}


def sonic_pfc(when):
    return {"sonic_pfc": text("sonic-pfc-%s.txt" % when)}


# ---- 1. the senders' NICs: which pause direction is the incast's ---------------------------------------------------

def test_control_a_sender_s_nic_received_pauses_and_its_rp_handled_cnps_the_class_is_lossless(tmp_path):
    """counters.rst: rx_prio3_pause counts pauses received - the switch paused the sender; rp_cnp_handled: the
    sender's reaction point slowed down on the receiver's CNPs. Both are the incast's congestion."""
    run = run_of(tmp_path, {"gpu02": dict(after_ethtool=E_A, after_hw=H_A), "gpu03": QUIET})
    assert klass(run)["verdict"] == "lossless_under_load", klass(run)["message"]
    assert at_senders(run) == {("gpu02", "rx_prio3_pause"), ("gpu02", "rp_cnp_handled")}
    assert "gpu02 host NIC %s rx_prio3_pause +5,500" % NIC in klass(run)["message"]
    assert not klass(run)["moved"]["drop"] and run["verdict"]["problems"] == []


def test_control_nothing_moved_at_the_senders_either_is_inconclusive(tmp_path):
    run = run_of(tmp_path, {"gpu02": QUIET, "gpu03": QUIET})
    assert klass(run)["verdict"] == "inconclusive" and at_senders(run) == set()


def test_a_sender_s_nic_that_sent_pauses_is_its_own_congestion_not_the_incast_s(tmp_path):
    """tx_prio3_pause: "the adapter is congested and cannot absorb the traffic coming from the network" - the
    sender's receive side (ACKs, or other traffic toward it), never proof that the receiver's port congested."""
    paused_switch = edit(E_B, "tx_prio3_pause", 5500)
    run = run_of(tmp_path, {"gpu02": dict(after_ethtool=paused_switch), "gpu03": QUIET})
    assert klass(run)["verdict"] == "inconclusive", klass(run)["message"]
    assert at_senders(run) == set()


def test_a_pause_on_the_sender_s_nic_of_another_rail_is_not_this_incast_s(tmp_path):
    """One receiver per ToR rail per step: the sender's other NIC may be paused by another rail's incast the same
    step; only the NIC of this incast's rail counts (host_reads by interface)."""
    run = run_of(tmp_path, {"gpu02": dict(other=E_A), "gpu03": QUIET})
    assert klass(run)["verdict"] == "inconclusive" and at_senders(run) == set()


# ---- 2. DCQCN roles: the reaction point at the sender, the notification point at the receiver ----------------------

def test_a_sender_acting_as_notification_point_is_not_the_incast_s_dcqcn(tmp_path):
    """np_ecn_marked_roce_packets / np_cnp_sent on a sender: packets marked on their way *to* the sender, CNPs it
    sent back. The incast's DCQCN shows as rp_cnp_handled at the sender; paused without it, DCQCN did not act."""
    np_only = edit(edit(H_B, "np_ecn_marked_roce_packets", 900), "np_cnp_sent", 900)
    run = run_of(tmp_path, {"gpu02": dict(after_ethtool=E_A, after_hw=np_only), "gpu03": QUIET})
    assert klass(run)["verdict"] == "ecn_inactive", klass(run)["message"]
    assert at_senders(run) == {("gpu02", "rx_prio3_pause")}


# ---- 3. the ToR at the senders' ports: Tx is the switch pausing the sender ----------------------------------------

def test_control_sonic_port_tx_pfc3_at_the_senders_ports_is_the_incast_s_pause(tmp_path):
    """pfcstat's Port Tx: SAI_PORT_STAT_PFC_3_TX_PKTS, PFC frames the switch sent the sender. No CNP moved at the
    senders although the profile runs DCQCN on priority 3: ecn_inactive, not inconclusive."""
    run = run_of(tmp_path, {"gpu02": QUIET, "gpu03": QUIET}, sonic_pfc("before"), sonic_pfc("after"))
    assert klass(run)["verdict"] == "ecn_inactive", klass(run)["message"]
    assert at_senders(run) == {("gpu02", "pfc3_tx_pkts"), ("gpu03", "pfc3_tx_pkts")}
    assert "gpu02 switch Ethernet4 pfc3_tx_pkts +5,500" in klass(run)["message"]


def test_sonic_port_rx_pfc3_at_a_sender_s_port_is_the_sender_pausing_the_switch(tmp_path):
    """Port Rx: SAI_PORT_STAT_PFC_3_RX_PKTS, frames the switch received - the sender's NIC paused the switch."""
    before = text("sonic-pfc-before.txt")
    after = sonic_cell(before, "Ethernet4", "PFC3", "5,512")   # the first table is Port Rx: 12 -> 5,512
    assert after != before
    run = run_of(tmp_path, {"gpu02": QUIET, "gpu03": QUIET}, {"sonic_pfc": before}, {"sonic_pfc": after})
    assert klass(run)["verdict"] == "inconclusive", klass(run)["message"]
    assert at_senders(run) == set()


def test_a_pause_of_another_priority_at_the_sender_s_port_is_not_the_class_s(tmp_path):
    after = text("sonic-pfc-before.txt").replace(
        " Ethernet4       0       0       0   9,001       0", " Ethernet4       0       0       0   9,001   5,500")
    assert after.count("5,500") == 1
    run = run_of(tmp_path, {"gpu02": QUIET, "gpu03": QUIET}, sonic_pfc("before"), {"sonic_pfc": after})
    assert klass(run)["verdict"] == "inconclusive" and at_senders(run) == set()


def test_eos_tx_frames_at_a_sender_s_port_count_rx_frames_do_not(tmp_path):
    """EOS ``show priority-flow-control counters`` per port (anta's rxFrames/txFrames; port-wide, one class per
    run): txFrames at the sender's port are the switch's pauses to it."""
    ports = {"gpu02": "Ethernet1/1", "gpu03": "Ethernet3/1"}
    tx = run_of(tmp_path / "tx", {"gpu02": QUIET, "gpu03": QUIET}, {"eos_pfc": text("eos-pfc-before.json")},
                {"eos_pfc": text("eos-pfc-after.json")}, incast=incast("Ethernet4/1", ports))
    assert at_senders(tx) == {("gpu02", "txFrames")} and klass(tx)["verdict"] == "ecn_inactive"
    swapped = text("eos-pfc-after.json").replace('"rxFrames": 0,\n      "txFrames": 23740',
                                                 '"rxFrames": 5500,\n      "txFrames": 18240')
    assert swapped != text("eos-pfc-after.json")
    rx = run_of(tmp_path / "rx", {"gpu02": QUIET, "gpu03": QUIET}, {"eos_pfc": text("eos-pfc-before.json")},
                {"eos_pfc": swapped}, incast=incast("Ethernet4/1", ports))
    assert at_senders(rx) == set() and klass(rx)["verdict"] == "inconclusive"


def test_eos_per_priority_tx_frames_at_a_sender_s_port_count_for_its_class(tmp_path):
    """EOS ``show interface <port> priority-flow-control counters detail``: ``prio3.txFrames`` at the sender's port
    is the switch pausing the sender on the class; ``prio3.rxFrames`` is the sender pausing the switch."""
    ports = {"gpu02": "Ethernet1/1", "gpu03": "Ethernet3/1"}

    def detail(when, swap=False):
        one = text("eos-pfc-detail-%s.json" % when)
        if swap:  # the after read with priority 3's frames received instead of sent
            one = one.replace('"rxFrames": 0,\n          "txFrames": 23740', '"rxFrames": 5500,\n          "txFrames": 18240')
        return {"eos_pfc_detail": {"Ethernet1/1": one, "Ethernet3/1": text("eos-pfc-detail-before.json").replace(
            "Ethernet1/1", "Ethernet3/1"), "Ethernet4/1": text("eos-pfc-detail-before.json").replace(
            "Ethernet1/1", "Ethernet4/1")}}

    tx = run_of(tmp_path / "tx", {"gpu02": QUIET, "gpu03": QUIET}, detail("before"), detail("after"),
                incast=incast("Ethernet4/1", ports))
    assert at_senders(tx) == {("gpu02", "prio3.txFrames")} and klass(tx)["verdict"] == "ecn_inactive"
    swapped = detail("after", swap=True)
    assert swapped["eos_pfc_detail"]["Ethernet1/1"] != text("eos-pfc-detail-after.json")
    rx = run_of(tmp_path / "rx", {"gpu02": QUIET, "gpu03": QUIET}, detail("before"), swapped,
                incast=incast("Ethernet4/1", ports))
    assert at_senders(rx) == set() and klass(rx)["verdict"] == "inconclusive"


NVUE_TX = "    3                0                0                  23740            3412345          "
NVUE_RX = "    3                23740            3412345            0                0                "


def nvue(when, port_text):
    """What nos_cumulus.read_counters returns for the receiver's port swp1 (quiet) and a sender's swp2."""
    quiet_qos, quiet_roce = text("nvue-qos-before.txt"), text("nvue-roce-before.txt")
    return {"nvue_qos": {"swp1": quiet_qos, "swp2": port_text.get("qos", text("nvue-qos-%s.txt" % when))},
            "nvue_roce": {"swp1": quiet_roce, "swp2": port_text.get("roce", text("nvue-roce-%s.txt" % when))}}


def test_nvue_at_a_sender_s_port_tx_pauses_and_the_cnps_sent_to_it_count_its_ecn_marks_do_not(tmp_path):
    """NVUE pfc-stats tx-pause-frames and the RoCE tx pause-packets: the switch pausing the sender; the RoCE Tx CNP
    packets leaving the sender's port carry the receiver's CNPs to it. port-stats ecn-marked-packets Transmit and
    the RoCE tx ECN marks count packets marked on their way *to* the sender: not this incast's."""
    inc = incast("swp1", {"gpu02": "swp2"})
    inc["senders"] = ["gpu02"]
    run = run_of(tmp_path, {"gpu02": QUIET}, nvue("before", {}), nvue("after", {}), incast=inc)
    assert at_senders(run) == {("gpu02", "pfc-stats.3.tx-pause-frames"),
                               ("gpu02", "tx-stats.tx-pfc-stats.pause-packets"),
                               ("gpu02", "tx-stats.tx-cnp-stats.cnp-packets")}, at_senders(run)
    assert klass(run)["verdict"] == "lossless_under_load", klass(run)["message"]
    assert NVUE_TX in text("nvue-qos-after.txt")
    received = text("nvue-qos-after.txt").replace(NVUE_TX, NVUE_RX)
    rx = run_of(tmp_path / "rx", {"gpu02": QUIET}, nvue("before", {}),
                nvue("after", {"qos": received, "roce": text("nvue-roce-before.txt")}), incast=inc)
    assert at_senders(rx) == set() and klass(rx)["verdict"] == "inconclusive", at_senders(rx)


# ---- 4. one stage wrong: the receiver dropped, a sender's port missing ---------------------------------------------

def test_senders_paused_but_the_receiver_s_nic_dropped_is_dropped_on_the_receiver_s_link(tmp_path):
    """The senders' pauses are evidence of congestion, never an excuse: a drop on the receiver's NIC decides."""
    dropped = edit(E_B, "rx_prio3_discards", 7)
    run = run_of(tmp_path, {"gpu02": dict(after_ethtool=E_A, after_hw=H_A), "gpu03": QUIET},
                 sonic_pfc("before"), sonic_pfc("after"), receiver_ethtool=dropped)
    assert klass(run)["verdict"] == "dropped", klass(run)["message"]
    assert "rx_prio3_discards +7" in klass(run)["message"]
    assert ("gpu02", "rx_prio3_pause") in at_senders(run)


def test_a_sender_s_tor_port_missing_from_the_read_is_a_line_and_the_others_still_judge(tmp_path):
    run = run_of(tmp_path, {"gpu02": QUIET, "gpu03": QUIET}, sonic_pfc("before"), sonic_pfc("after"),
                 incast=incast(ports={"gpu02": "Ethernet4", "gpu03": "Ethernet99"}))
    assert klass(run)["verdict"] == "ecn_inactive", klass(run)["message"]
    assert at_senders(run) == {("gpu02", "pfc3_tx_pkts")}
    lines = [p for p in run["verdict"]["problems"] if "Ethernet99" in p]
    assert [p.split(":")[0] for p in lines] == ["sender gpu03 before", "sender gpu03 after"], lines


def test_drops_at_a_sender_s_tor_port_make_the_run_lost_on_the_sender_s_side(tmp_path):
    """SONiC queue counters (queuestat: SAI_QUEUE_STAT_DROPPED_PACKETS) of the sender's port: its downlink."""
    before = text("sonic-queue-before.txt")
    after = sonic_cell(before, "Ethernet8 UC3", "Drop/pkts", 3)
    assert after != before
    run = run_of(tmp_path, {"gpu02": QUIET, "gpu03": QUIET}, dict(sonic_pfc("before"), sonic_queue=before),
                 dict(sonic_pfc("after"), sonic_queue=after))
    assert klass(run)["verdict"] == "lost" and klass(run)["placed_on"] == ["gpu03"], klass(run)["message"]


# ---- 5. settling: the read after the load waits the NOS's polling ---------------------------------------------------

def test_each_nos_s_settle_covers_its_documented_counter_polling():
    # sonic-swss portsorch.cpp: PFC in PORT_STAT (1000 ms), queue and PG drops every 10000 ms
    assert nos_sonic.COUNTER_SETTLE * 1000 >= max(1000, 10000, 10000)
    # mlxsw spectrum.h MLXSW_HW_STATS_UPDATE_TIME HZ: one second
    assert nos_linux.COUNTER_SETTLE >= 1
    # Cumulus switchd stats.poll_interval 2000 msec by default
    assert nos_cumulus.COUNTER_SETTLE * 1000 >= 2000
    # EOS: no interval found documented
    assert not hasattr(nos_eos, "COUNTER_SETTLE")
    assert [platforms.counter_settle(p) for p in ("sonic", "cumulus", "linux", "eos")] == [10, 2, 1, 0]


def test_the_step_waits_after_the_hosts_read_and_before_the_tors_read_after_the_load_never_before_it():
    with open(os.path.join(ROOT, "roles", "lossless_test", "tasks", "step.yml")) as handle:
        tasks = yaml.safe_load(handle)
    names = [t.get("name", "") for t in tasks]
    wait = [i for i, t in enumerate(tasks) if "ansible.builtin.pause" in t]
    tor_reads = [i for i, t in enumerate(tasks) if "read_tor" in (t.get("ainet.fabric.lossless_report") or {})]
    hosts_after = names.index("Read the counters after the load (every participant)")
    assert len(wait) == 1 and len(tor_reads) == 2, names
    assert tor_reads[0] < hosts_after < wait[0] < tor_reads[1], names
    pause = tasks[wait[0]]
    assert pause["ansible.builtin.pause"]["seconds"] == "{{ __lossless_test_settle }}"
    assert pause.get("run_once") is True
    # the seconds: auto, the longest settle the ToR reads before the load returned (the poll interval configured on
    # the switch), the plan's NOS default for a ToR read without one; a number given, that number (issue 40)
    env = jinja2.Environment()
    seconds = env.from_string(pause["vars"]["__lossless_test_settle"])

    def wait(auto, results, given=10):
        return int(seconds.render(__lossless_test_step={"tor_settle": given, "tor_settle_auto": auto},
                                  __lossless_test_tor_before={"results": results}).strip())

    assert wait(True, [{"settle": 31}, {"settle": 2}]) == 31
    assert wait(True, [{"settle": 1}, {"failed": True}]) == 10
    assert wait(True, [{"settle": 1}]) == 1
    assert wait(False, [{"settle": 31}], given=3) == 3


@pytest.mark.parametrize("stale", [True, False])
def test_a_tor_read_taken_before_the_queue_poll_misses_the_drop(tmp_path, stale):
    """Why the settle matters: COUNTERS_DB keeps the last poll's value. A read after the load but before the next
    queue poll prints the before value, and the run is judged without the drop at the sender's port."""
    before = text("sonic-queue-before.txt")
    polled = sonic_cell(before, "Ethernet8 UC3", "Drop/pkts", 3)
    run = run_of(tmp_path, {"gpu02": QUIET, "gpu03": QUIET}, dict(sonic_pfc("before"), sonic_queue=before),
                 dict(sonic_pfc("after"), sonic_queue=before if stale else polled))
    assert klass(run)["verdict"] == ("ecn_inactive" if stale else "lost"), klass(run)["message"]


# ---- 6. the receiver's own reads count only the incast's direction (review S2, fixed in issue 40) -------------------

def test_a_receiver_whose_only_movement_is_the_senders_side_direction_is_not_proven_congested(tmp_path):
    before, after = host_pair(tmp_path, "gpu01", after_ethtool=E_A, after_hw=H_A)
    run = r.judge(incast(), 3, 1, 10, NVIDIA, before, after, senders={})
    assert klass(run)["verdict"] == "inconclusive", klass(run)["message"]
    # rx_prio3_pause (the switch paused the receiver's uplink: its ACKs) and rp_cnp_handled (its own sends slowed)
    # moved the other way: listed, never counted
    assert {x["counter"] for x in klass(run)["other_way"]} >= {"rx_prio3_pause", "rp_cnp_handled"}
    assert "Moved the other way, not the receiver's evidence" in klass(run)["message"]
