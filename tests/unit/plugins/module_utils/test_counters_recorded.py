# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The counter parsers on outputs recorded verbatim from public sources (data/counters/recorded, each file's source in
data/counters/ORIGIN.md, "Recorded verbatim"). Every expected value below is one a reader of the capture can check by
eye in it; nothing here is written from the parser's own output."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import describe, parse_counters
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import load_verdict, read_deltas

RECORDED = os.path.join(os.path.dirname(__file__), "data", "counters", "recorded")

# Every recorded file and the format it is read in: the inventory test below fails on a file added without a row.
FORMATS = {
    "ethtool-cx5-byteps179-before.txt": "ethtool_mlx5",
    "ethtool-cx5-byteps179-after.txt": "ethtool_mlx5",
    "rdma-stat-show-mlx5-netdev-2019.txt": "rdma_mlx5",
    "rdma-stat-show-p-mlx5-netdev-2019.txt": "rdma_mlx5",
    "hw_counters-mlx5-procfs-fixture.ttar": "rdma_mlx5",
    "sonic-pfc-tx-z9332-th3.txt": "sonic_pfc",
    "sonic-pfcstat-rx-5540.txt": "sonic_pfc",
    "sonic-queue-7050cx3-td3-6290.txt": "sonic_queue",
    "sonic-queue-ethernet196-2393.txt": "sonic_queue",
    "sonic-queue-dnx-nonzero-20913.txt": "sonic_queue",
    "sonic-queue-dnx-nonzero-20913-later.txt": "sonic_queue",
    "nvue-roce-counters-swp16-cl510-docs.txt": "nvue_roce",
    # issue 40 (test_counters_lossless_sources.py)
    "sonic-pfcwd-z9332-8483-1.txt": "sonic_pfcwd",
    "sonic-pfcwd-z9332-8483-2.txt": "sonic_pfcwd",
    "sonic-pfcwd-z9332-8483-3.txt": "sonic_pfcwd",
    "sonic-pg-drop-cisco-lc-3782.txt": "sonic_pg_drop",
    "ethtool-mlxsw-swp31-snmpd-fixture.txt": "linux_ethtool",
    "nxos-pfcwd-detail-otel-fixture.txt": "nxos_pfcwd",
    "os10-queuing-hound-dirt-cleared-netdev-2022.txt": "os10_queuing",
    "os10-queuing-hound-dirt-cubic-netdev-2022.txt": "os10_queuing",
    "os10-queuing-fox-dirt-cubic-netdev-2022.txt": "os10_queuing",
}
# Recorded settings, not counters: the poll intervals the wait before the read after the load follows.
SETTINGS = ("sonic-counterpoll-show-4106.txt", "cumulus-switchd-conf-cl51-docs.txt")


def raw(name):
    with open(os.path.join(RECORDED, name)) as handle:
        return handle.read()


def ttar(text):
    """A ttar archive (prometheus/procfs test fixtures): {path: content} of its files."""
    files, lines, i = {}, text.split("\n"), 0
    while i < len(lines):
        if lines[i].startswith("Path: ") and i + 1 < len(lines) and lines[i + 1].startswith("Lines: "):
            count = int(lines[i + 1].split()[1])
            files[lines[i][len("Path: "):]] = "\n".join(lines[i + 2:i + 2 + count])
            i += 2 + count
        else:
            i += 1
    return files


def procfs_hw_counters():
    return {path: value for path, value in ttar(raw("hw_counters-mlx5-procfs-fixture.ttar")).items()
            if "/hw_counters/" in path}


def read(name, port=None):
    data = procfs_hw_counters() if name.endswith(".ttar") else raw(name)
    return parse_counters(data, FORMATS[name], port=port)


def test_every_recorded_file_has_a_format_and_parses_without_a_problem():
    assert sorted(os.listdir(RECORDED)) == sorted(list(FORMATS) + list(SETTINGS))
    for name in FORMATS:
        facts = read(name)
        assert facts["problems"] == [], (name, facts["problems"])
        assert facts["ports"] and all(facts["ports"].values()), name


# --- ethtool -S of mlx5: ConnectX-5, bytedance/byteps#179 (grep prio, before and after a benchmark) ---------------

def test_connectx5_prio_counters_read_as_published_and_no_pause_line_is_made_up():
    counters = read("ethtool-cx5-byteps179-before.txt", port="enp178s0f0")["ports"]["enp178s0f0"]
    assert len(counters) == 32  # rx/tx bytes and packets for each of the eight priorities
    assert {int(re.match(r"^(rx|tx)_prio(\d)_", n).group(2)) for n in counters} == set(range(8))
    assert counters["rx_prio0_bytes"] == 88034564921216
    assert counters["rx_prio0_packets"] == 419873392068
    assert counters["tx_prio0_bytes"] == 13906677385186
    assert counters["tx_prio0_packets"] == 40177770079
    assert counters["rx_prio3_packets"] == 0 and counters["tx_prio3_packets"] == 0
    # PFC is on no priority of this port: mlx5 prints no prio pause line, and none is reported (absent, never 0)
    assert not [n for n in counters if "pause" in n]
    assert describe("ethtool_mlx5", "rx_prio0_packets") == dict(fact="traffic", priority=0, queue=None, width=64,
                                                                direction=None)


def test_connectx5_before_and_after_a_benchmark_count_the_traffic_on_priority_0():
    before = read("ethtool-cx5-byteps179-before.txt", port="enp178s0f0")
    after = read("ethtool-cx5-byteps179-after.txt", port="enp178s0f0")
    records = {r["counter"]: r for r in read_deltas("nic", before, after, "enp178s0f0")}
    assert records["rx_prio0_packets"]["delta"] == 420000128479 - 419873392068 == 126736411
    assert records["rx_prio0_bytes"]["delta"] == 88171136852706 - 88034564921216
    assert records["tx_prio0_packets"]["delta"] == 40304494275 - 40177770079
    assert records["rx_prio3_packets"] == dict(records["rx_prio3_packets"], delta=0, state="counted")
    # the stored copy of the "after" read ends at rx_prio4_packets: what follows was not read, and says so
    assert records["tx_prio4_bytes"]["state"] == "not_reported" and records["tx_prio4_bytes"]["delta"] is None
    assert records["rx_prio7_packets"]["state"] == "not_reported"
    assert not [r for r in records.values() if r["state"] in ("reset", "wrapped")]
    # per-priority traffic alone proves nothing about loss: the verdict says so instead of passing the class
    verdict = load_verdict({"nic": before}, {"nic": after}, priorities=[3], host_port="enp178s0f0", seconds=10)
    assert verdict["verdict"] == "inconclusive" and verdict["problems"] == []
    assert "no drop, retransmission or sequence-error counter" in verdict["classes"][0]["message"]


# --- RDMA counters: rdma statistic show (netdev, 2019-07-10) and a prometheus/procfs hw_counters fixture -----------

RDMA_STAT_NAMES = [
    "rx_write_requests", "rx_read_requests", "rx_atomic_requests", "out_of_buffer", "duplicate_request",
    "rnr_nak_retry_err", "packet_seq_err", "implied_nak_seq_err", "local_ack_timeout_err", "resp_local_length_error",
    "resp_cqe_error", "req_cqe_error", "req_remote_invalid_request", "req_remote_access_errors",
    "resp_remote_access_errors", "resp_cqe_flush_error", "req_cqe_flush_error", "rp_cnp_ignored", "rp_cnp_handled",
    "np_ecn_marked_roce_packets", "np_cnp_sent"]


@pytest.mark.parametrize("name", ["rdma-stat-show-mlx5-netdev-2019.txt", "rdma-stat-show-p-mlx5-netdev-2019.txt"])
def test_rdma_statistic_show_reads_the_link_and_every_pair(name):
    facts = read(name)
    assert list(facts["ports"]) == ["mlx5_0/1"]  # the link the output names is the port
    counters = facts["ports"]["mlx5_0/1"]
    assert list(counters) == RDMA_STAT_NAMES and set(counters.values()) == {0}
    # the mail's 72-column wrap split "rx_atomic_requests" from its value: still one counter, no stray "0" name
    assert "0" not in counters
    # this kernel printed no out_of_sequence: absent, not 0
    assert "out_of_sequence" not in counters
    assert describe("rdma_mlx5", "np_ecn_marked_roce_packets")["fact"] == "ecn_mark"
    assert describe("rdma_mlx5", "rp_cnp_handled")["fact"] == "cnp"


def test_rdma_statistic_show_one_line_and_pretty_forms_agree_and_a_missing_link_is_named():
    one_line = read("rdma-stat-show-mlx5-netdev-2019.txt")
    pretty = read("rdma-stat-show-p-mlx5-netdev-2019.txt")
    assert one_line["ports"] == pretty["ports"]
    other = read("rdma-stat-show-mlx5-netdev-2019.txt", port="mlx5_1/1")
    assert other["ports"] == {}
    assert other["problems"] == ["rdma_mlx5: port mlx5_1/1 is not in the output (ports: mlx5_0/1)"]


def test_rdma_statistic_show_a_value_that_is_not_a_number_is_one_problem_line():
    broken = raw("rdma-stat-show-p-mlx5-netdev-2019.txt").replace("\tout_of_buffer 0", "\tout_of_buffer N/A")
    facts = parse_counters(broken, "rdma_mlx5")
    assert facts["problems"] == ["rdma_mlx5: out_of_buffer holds 'N/A', not a counter"]
    assert "out_of_buffer" not in facts["ports"]["mlx5_0/1"] and len(facts["ports"]["mlx5_0/1"]) == 20


def test_procfs_fixture_hw_counters_values_and_what_the_device_does_not_print():
    files = ttar(raw("hw_counters-mlx5-procfs-fixture.ttar"))
    assert files["fixtures/sys/class/infiniband/mlx5_0/fw_ver"] == "14.28.2006"
    assert files["fixtures/sys/class/infiniband/mlx5_0/hca_type"] == "MT4118"
    counters = read("hw_counters-mlx5-procfs-fixture.ttar", port="mlx5_0/1")["ports"]["mlx5_0/1"]
    assert len(counters) == 25
    assert counters["duplicate_request"] == 41
    assert counters["local_ack_timeout_err"] == 131
    assert counters["out_of_sequence"] == 1 and counters["packet_seq_err"] == 1
    assert counters["roce_adp_retrans"] == 99 and counters["roce_adp_retrans_to"] == 4
    assert counters["rx_read_requests"] == 175528982 and counters["rx_write_requests"] == 742114
    assert counters["req_cqe_error"] == 3481 and counters["resp_cqe_error"] == 8109
    # no congestion counters in this directory: not reported, never 0
    assert not [n for n in counters if n.startswith(("np_", "rp_"))]
    oos = dict(fact="transport_error", priority=None, queue=None, width=32, direction="data")
    assert describe("rdma_mlx5", "out_of_sequence") == oos
    assert describe("rdma_mlx5", "duplicate_request") == dict(oos, direction="acks")
    assert describe("rdma_mlx5", "local_ack_timeout_err") == dict(oos, direction=None)
    assert describe("rdma_mlx5", "roce_adp_retrans")["fact"] == "transport_error"


# --- SONiC show pfc counters / pfcstat ------------------------------------------------------------------------------

def test_sonic_pfc_tx_table_z9332_th3_reads_the_pauses_on_priority_3():
    ports = read("sonic-pfc-tx-z9332-th3.txt")["ports"]
    assert sorted(ports, key=lambda p: int(p[len("Ethernet"):])) == ["Ethernet%d" % i for i in range(0, 12, 2)]
    assert ports["Ethernet6"]["pfc3_tx_pkts"] == 15437  # printed "15,437"
    assert sum(v for p in ports.values() for v in p.values()) == 15437
    assert all(len(p) == 8 for p in ports.values())
    # `| grep Tx -A10` kept only the Tx table: no rx counter is made up
    assert not [n for p in ports.values() for n in p if "_rx_" in n]
    assert describe("sonic_pfc", "pfc3_tx_pkts")["fact"] == "pfc_pause"


def test_sonic_pfcstat_with_the_last_cached_time_line_reads_the_rx_table():
    facts = read("sonic-pfcstat-rx-5540.txt")
    assert sorted(facts["ports"]) == ["Ethernet0", "Ethernet4"]
    # the point: 1234 frames were injected and pfcstat shows none; the parser reports what was printed
    assert facts["ports"]["Ethernet0"] == {"pfc%d_rx_pkts" % p: 0 for p in range(8)}


# --- SONiC show queue counters --------------------------------------------------------------------------------------

def test_sonic_queue_7050cx3_unicast_and_multicast_queues():
    counters = read("sonic-queue-7050cx3-td3-6290.txt", port="Ethernet4")["ports"]["Ethernet4"]
    assert len(counters) == 14 * 4  # UC0..UC9 and MC10..MC13, four columns each
    assert counters["uc0_pkts"] == 419 and counters["uc0_bytes"] == 78729
    assert counters["uc1_pkts"] == 1 and counters["uc1_bytes"] == 126
    assert counters["mc10_drop_pkts"] == 48 and counters["mc10_drop_bytes"] == 3072
    assert counters["mc11_drop_pkts"] == 260 and counters["mc11_drop_bytes"] == 26992
    assert describe("sonic_queue", "mc10_drop_pkts")["fact"] == "info"  # multicast drops judge no unicast class
    assert describe("sonic_queue", "uc3_drop_pkts") == {"fact": "drop", "priority": None, "queue": 3, "width": 64,
                                                        "direction": None}
    assert sum(v for n, v in counters.items() if n.startswith("uc") and "_drop_" in n) == 0


def test_sonic_queue_without_thousands_separators_reads_the_large_drops():
    counters = read("sonic-queue-ethernet196-2393.txt", port="Ethernet196")["ports"]["Ethernet196"]
    assert counters["uc1_pkts"] == 32025737389 and counters["uc1_bytes"] == 13638863007480
    assert counters["uc1_drop_pkts"] == 6841131615 and counters["uc1_drop_bytes"] == 2893444514176
    assert counters["uc3_pkts"] == 13574181122 and counters["uc3_drop_pkts"] == 0
    assert counters["uc4_bytes"] == 14941587190140


def test_sonic_queue_nonzero_prints_only_some_queues_and_the_rest_are_not_reported():
    first = read("sonic-queue-dnx-nonzero-20913.txt", port="Ethernet0")["ports"]["Ethernet0"]
    assert sorted({n.split("_")[0] for n in first}) == ["uc0", "uc2", "uc3", "uc4"]
    assert first["uc3_drop_pkts"] == 198233784 and first["uc4_drop_bytes"] == 194294085580
    later = read("sonic-queue-dnx-nonzero-20913-later.txt", port="Ethernet0")["ports"]["Ethernet0"]
    assert len(later) == 8 * 4
    assert later["uc7_pkts"] == 215 and later["uc7_bytes"] == 17244  # "17,244" in a column printed without commas


def test_sonic_queue_two_reads_of_one_dnx_port_ten_days_apart():
    before = read("sonic-queue-dnx-nonzero-20913.txt", port="Ethernet0")
    after = read("sonic-queue-dnx-nonzero-20913-later.txt", port="Ethernet0")
    records = {r["counter"]: r for r in read_deltas("tor", before, after, "Ethernet0")}
    assert records["uc3_drop_pkts"]["delta"] == 830694313 - 198233784
    assert records["uc3_drop_pkts"]["fact"] == "drop" and records["uc3_drop_pkts"]["queue"] == 3
    assert records["uc0_pkts"]["delta"] == 3119801769 - 199028410
    # UC1 was all zero at the first read, so --nonzero left it out: no delta is invented for it
    assert records["uc1_pkts"]["state"] == "not_reported" and records["uc1_pkts"]["delta"] is None
    verdict = load_verdict({"tor": before}, {"tor": after}, priorities=[3], port="Ethernet0", seconds=10)
    # queue 3 counted 632,460,529 more dropped packets at the second read: class 3 is judged dropped
    assert verdict["verdict"] == "dropped"
    assert [r["counter"] for r in verdict["classes"][0]["moved"]["drop"]] == ["uc3_drop_bytes", "uc3_drop_pkts"]
    assert "uc3_drop_pkts +632,460,529" in verdict["classes"][0]["message"]


# --- NVIDIA Cumulus Linux: nv show interface swp16 qos roce counters (Cumulus Linux 5.10 user guide) ----------------

def test_nvue_roce_counters_from_the_user_guide():
    counters = read("nvue-roce-counters-swp16-cl510-docs.txt")["ports"]["port"]
    assert len(counters) == 33
    assert counters["tx-stats.tx-ecn-stats.ecn-marked-packets"] == 693777677344
    assert counters["tx-stats.tx-roce-stats.roce-packets"] == 803785675319
    assert counters["tx-stats.tx-roce-stats.unicast-no-buffer-discard"] == 663060754115
    assert counters["rx-stats.rx-non-roce-stats.no-buffer-discard"] == 55
    assert counters["rx-stats.rx-pfc-stats.pause-packets"] == 0 and counters["tx-stats.tx-pfc-stats.pause-packets"] == 0
    # printed rounded with a binary unit: read as that many bytes
    assert counters["tx-stats.tx-roce-stats.roce-bytes"] == int(round(92824.38 * (1 << 30)))
    assert counters["rx-stats.rx-non-roce-stats.non-roce-bytes"] == int(round(56.52 * (1 << 20)))
    assert counters["rx-stats.rx-non-roce-stats.buffer-max-usage"] == 144
    assert describe("nvue_roce", "tx-stats.tx-roce-stats.unicast-no-buffer-discard")["fact"] == "drop"
    assert describe("nvue_roce", "tx-stats.tx-ecn-stats.ecn-marked-packets")["fact"] == "ecn_mark"
    assert describe("nvue_roce", "rx-stats.rx-pfc-stats.pause-packets")["fact"] == "pfc_pause"
    # discards of lossy (non-RoCE) traffic are read, not judged against the lossless class
    assert describe("nvue_roce", "rx-stats.rx-non-roce-stats.no-buffer-discard")["fact"] == "info"
