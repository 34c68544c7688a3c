# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Counter reads of a lossless load test: parsers and what each counter means.

``parse_counters(text, fmt, port=None)`` returns the **counter facts** of one read::

    {"format": "ethtool_mlx5", "side": "host NIC", "ports": {"ens1f0np0": {"rx_prio3_pause": 1200, ...}},
     "problems": []}

A counter keeps the name its source gives it (SONiC's tables are named after the SAI statistic they print, see
below). A counter the source does not print is absent from the mapping: *not reported*, never 0 (mlx5 prints the
per-priority pause counters only for priorities with PFC on; SONiC prints ``N/A``).

:data:`COUNTERS` says, per format, what each counter is a fact of (pause, drop, ECN mark...), for which priority or
queue, and how wide the device's counter is (:func:`describe`). The verdict (:mod:`load_verdict`) reads only that.

Sources (see ``docs/lossless-qos.md``, "Proven under load"):

* ``ethtool_mlx5`` -- ``ethtool -S <if>`` of mlx5_core. Names and meaning: the kernel's
  ``Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst``; widths:
  ``drivers/net/ethernet/mellanox/mlx5/core/en_stats.c`` (PPCNT groups read 64-bit, ``MLX5E_READ_CTR64_BE``, but
  ``link_down_events_phy``, "not stored in __be64 format", ``MLX5E_READ_CTR32_BE``; the Q counters
  ``rx_out_of_buffer``/``rx_if_down_packets`` and ``dev_internal_queue_oob`` 32-bit).
* ``rdma_mlx5`` -- ``/sys/class/infiniband/<dev>/ports/<n>/hw_counters/*`` of mlx5_ib
  (``drivers/infiniband/hw/mlx5/counters.c``: Q counters read with ``be32_to_cpu``, 32-bit; congestion counters
  ``*_high``, 64-bit).
* ``rdma_rxe`` -- the same directory of soft-RoCE (``drivers/infiniband/sw/rxe/rxe_hw_counters.c``: ``atomic64``).
  Both also read ``rdma statistic show`` (iproute2 ``rdma/stat.c``): the same counters by name, per ``link
  <dev>/<port>``, which names the port.
* ``sonic_pfc`` / ``sonic_queue`` -- SONiC ``show pfc counters`` (``scripts/pfcstat``) and ``show queue counters``
  (``scripts/queuestat``) of sonic-net/sonic-utilities: SAI statistics (uint64), printed with thousands separators,
  ``N/A`` when the counter is not in COUNTERS_DB. Named here ``pfc<p>_rx_pkts``/``pfc<p>_tx_pkts``
  (``SAI_PORT_STAT_PFC_<p>_RX_PKTS``/``_TX_PKTS``) and ``uc<q>_pkts``, ``uc<q>_bytes``, ``uc<q>_drop_pkts``,
  ``uc<q>_drop_bytes`` (``SAI_QUEUE_STAT_PACKETS``, ``_BYTES``, ``_DROPPED_PACKETS``, ``_DROPPED_BYTES``; ``mc``
  for multicast queues).
* ``eos_pfc`` / ``eos_queue`` / ``eos_ecn`` -- Arista EOS, the JSON of ``show priority-flow-control counters``
  (``interfaceCounters``: ``rxFrames``/``txFrames`` per port, **not** per priority), ``show interfaces counters queue
  detail`` (``egressQueueCounters``: per unicast/multicast traffic class and drop precedence) or ``show interfaces
  counters queue drops`` (VOQ platforms: per traffic class, ingress VOQ and egress queue drops), and ``show qos
  interfaces ecn counters queue`` (``intfQueueCounters``: ECN-marked packets per tx-queue, ``-`` where ECN is off).
  Layouts as aristanetworks/anta's tests read them (``VerifyInterfacesPFCCounters``,
  ``VerifyInterfacesEgressQueueDrops``, ``VerifyInterfacesVoqAndEgressQueueDrops``, ``VerifyInterfacesECNCounters``);
  a counter is named by its path below the port: ``txFrames``, ``ucast.TC3.DP0.droppedPackets``,
  ``voq.TC3.droppedPackets``, ``egress.TC3.droppedPackets``, ``queueCounters.3``. Widths are not documented (None).
* ``nvue_qos`` / ``nvue_roce`` -- NVIDIA Cumulus Linux (NVUE) text of ``nv show interface <if> counters qos`` (or
  one of its sections: ``ingress-buffer-stats``, ``egress-queue-stats``, ``pfc-stats``, ``port-stats``) and of ``nv show
  interface <if> qos roce counters``. The output is one port's: ``port`` names it. A table counter is named
  ``<section>.<row>.<column>`` (``pfc-stats.3.tx-pause-frames``, ``egress-queue-stats.3.tx-uc-buffer-discards``,
  ``port-stats.ecn-marked-packets.transmit``), a RoCE counter by its path (``tx-stats.tx-ecn-stats.ecn-marked-packets``).
  Byte values are printed rounded with a unit (``7.29 MB``: binary units, 1 MB = 2**20 bytes, as ``1.43 MB`` is the RoCE
  page's 1501500-byte threshold); they are read as that many bytes, so their deltas are approximate. ``n/a`` is not
  reported. Layouts: the Cumulus Linux 5.10 user guide ("Quality of Service", "Show Qos Counters"; "RDMA over
  Converged Ethernet - RoCE") and the NVUE command reference (``Show-Commands/QoS.md``).
* ``linux_link`` / ``linux_qdisc`` -- a Linux switch (a software bridge, or a switchdev ASIC whose ports are
  netdevs): the JSON of iproute2's ``ip -s -s -j link show`` (per interface ``stats64`` -> ``rx``/``tx``, the
  kernel's ``struct rtnl_link_stats64``, 64-bit; ``stats`` where an old kernel has no 64-bit block) and of ``tc -s
  -j qdisc show`` (per queueing discipline ``bytes``, ``packets``, ``drops``, ``overlimits``, ``requeues``; the
  kernel's ``struct gnet_stats_queue`` counts drops, requeues and overlimits in 32 bits). A link counter is named
  ``<rx|tx>_<key>`` (``tx_dropped``, ``rx_crc_errors``); a qdisc counter by where the qdisc sits: the port's root
  qdisc ``qdisc_<key>`` (a classful root counts its children's drops), its ``clsact``/``ingress`` qdisc
  ``clsact_<key>`` (a filter's drop, TC_ACT_SHOT, in either direction), a child ``child_<parent>_<key>`` (read, not
  judged: the root counts it). A frame the qdisc drops never reaches the device, so ``tx_dropped`` does not count it:
  both reads are needed. Neither tells priorities apart: their drops count against every class of the port.
"""

from __future__ import annotations

import json
import re

from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_text import (  # noqa: F401 (public names)
    DEFAULT_PORT, SIDES, new_counters, parse_ethtool)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_text import (
    flat as _flat, json_doc as _json, nv_name as _nv_name, nv_value as _nv_value, number as _number, only_port as _only,
    tables as _tables, whole as _int)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse_nos import (
    NOS_COUNTERS, NOS_ONE_PORT_FORMATS, NOS_PARSERS, NOS_SIDES, NOS_ZERO_ROWS_OMITTED, parse_nvue_qos_json)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.pasted_text import readings

SIDES.update({"ethtool_mlx5": "host NIC", "rdma_mlx5": "RDMA", "rdma_rxe": "RDMA", "sonic_pfc": "switch",
              "sonic_queue": "switch", "eos_pfc": "switch", "eos_queue": "switch", "eos_ecn": "switch",
              "nvue_qos": "switch", "nvue_roce": "switch", "linux_link": "switch", "linux_qdisc": "switch"})
SIDES.update(NOS_SIDES)  # the formats of counters_parse_nos: watchdog, ingress PG drops, switch ports' ethtool
FORMATS = tuple(sorted(SIDES))

# What a counter is a fact of. Facts the verdict reads:
#   pfc_pause          PFC pause frames of a priority (congestion reached)
#   pfc_pause_duration microseconds of PFC pause of a priority
#   link_pause         802.3x link-level pause frames: NOT PFC, never proof of a lossless class
#   pause_storm        the NIC's pause-storm (stall) events
#   drop               a packet dropped (per priority, per queue or for the whole port)
#   transport_error    RDMA retransmission or sequence error (a drop seen end to end)
#   ecn_mark           packets seen with ECN CE, or marked by the device
#   cnp                congestion notification packets sent (notification point) or handled (reaction point)
#   traffic            packets of the class (shows the load reached it)
#   headroom_watermark the most ingress headroom a priority group held (a high-water mark, not a counter): never
#                      judged, named beside an ingress PG drop (counters_parse_nos, SONiC)
#   instance           which object the read counted (a qdisc's handle): when it differs between the reads,
#                      the counters of that object were reset (:func:`load_verdict.read_deltas`)
#   setting            a value the device is set to, not a count (the hw_counters directory's ``lifespan``, the
#                      stats cache's lifetime in ms: drivers/infiniband/core/sysfs.c): never judged, and never
#                      evidence that the read kept counting
#   info               read, not judged (a count of events: evidence that the read kept counting)
# :data:`NOT_COUNTING` names the facts that do not count events.
NOT_COUNTING = ("headroom_watermark", "instance", "setting")
# Each row: (regex on the name, fact, direction, width in bits). A named group ``p`` is the priority, ``q`` the
# queue. Unknown names are ``info``; an unknown width is None (a decrease is then a reset, never a wrap).
# The direction of an RDMA transport counter is that of the packets whose loss moves it (mlx5 counters.rst;
# rxe_resp.c check_psn, rxe_comp.c check_ack): "data" toward the responder, "acks" (ACKs, read responses) back
# toward the requester; None where it is not known or not one (a requester's local_ack_timeout_err is either: a
# lost ACK, or a lost last packet that no later packet reveals with a NAK).
COUNTERS = {
    "ethtool_mlx5": (
        (r"(rx|tx)_prio(?P<p>[0-7])_pause", "pfc_pause", None, 64),
        (r"(rx|tx)_prio(?P<p>[0-7])_pause_duration", "pfc_pause_duration", None, 64),
        (r"rx_prio(?P<p>[0-7])_pause_transition", "info", None, 64),
        (r"(rx|tx)_prio(?P<p>[0-7])_(packets|bytes)", "traffic", None, 64),
        (r"rx_prio(?P<p>[0-7])_(discards|buf_discard|cong_discard)", "drop", None, 64),
        # Marked by the NIC itself for per-host congestion (multi-host adapters), not by the fabric: not DCQCN's.
        (r"rx_prio(?P<p>[0-7])_marked", "info", None, 64),
        (r"(rx|tx)_pause_ctrl_phy", "link_pause", None, 64),
        (r"(rx|tx)_global_pause(_duration|_transition)?", "link_pause", None, 64),
        (r"tx_pause_storm_(warning|error)_events", "pause_storm", None, 64),
        (r"(rx|tx)_discards_phy", "drop", None, 64),
        (r"rx_out_of_buffer", "drop", None, 32),
        (r"rx_if_down_packets", "info", None, 32),
        (r"dev_internal_queue_oob", "info", None, 32),
        (r"rx_(crc_errors|symbol_err|pcs_symbol_err|in_range_len_errors|out_of_range_len|oversize_pkts|"
         r"undersize_pkts|fragments|jabbers)_phy", "drop", None, 64),
        # PPCNT's phy group, but not a __be64 field: read with MLX5E_READ_CTR32_BE (en_stats.c)
        (r"link_down_events_phy", "drop", None, 32),
        (r".*_phy", "info", None, 64),
    ),
    "rdma_mlx5": (
        (r"np_ecn_marked_roce_packets", "ecn_mark", None, 64),
        (r"np_cnp_sent|rp_cnp_handled", "cnp", None, 64),
        (r"rp_cnp_ignored", "info", None, 64),
        (r"out_of_sequence|packet_seq_err", "transport_error", "data", 32),
        (r"implied_nak_seq_err|duplicate_request", "transport_error", "acks", 32),
        (r"local_ack_timeout_err|rnr_nak_retry_err|req_transport_retries_exceeded|req_rnr_retries_exceeded|"
         r"roce_adp_retrans|roce_adp_retrans_to", "transport_error", None, 32),
        (r"out_of_buffer", "drop", None, 32),
        (r"rx_(write|read|atomic)_requests|rx_dct_connect|resp_.*|req_.*|roce_slow_restart.*", "info", None, 32),
        (r"rx_icrc_encapsulated", "info", None, 64),
        (r"lifespan", "setting", None, None),
        (r"cc_rx_ce_pkts", "ecn_mark", None, 64),
        (r"cc_(rx|tx)_cnp_pkts", "cnp", None, 64),
        (r"rdma_(tx|rx)_(packets|bytes)", "traffic", None, 64),
    ),
    "rdma_rxe": (
        (r"out_of_seq_request|rcvd_seq_err", "transport_error", "data", 64),
        (r"duplicate_request", "transport_error", "acks", 64),
        (r"retry_exceeded_err|retry_rnr_exceeded_err|completer_retry_err|send_err", "transport_error", None, 64),
        (r"link_downed", "drop", None, 64),
        (r"sent_pkts|rcvd_pkts", "traffic", None, 64),
        (r"rcvd_rnr_err|send_rnr_err|ack_deferred|rdma_sends|rdma_recvs", "info", None, 64),
        # the core's file of every hw_counters directory (drivers/infiniband/core/sysfs.c), not the driver's
        (r"lifespan", "setting", None, None),
    ),
    "sonic_pfc": (
        (r"pfc(?P<p>[0-7])_(rx|tx)_pkts", "pfc_pause", None, 64),
    ),
    "sonic_queue": (
        (r"uc(?P<q>\d+)_(pkts|bytes)", "traffic", None, 64),
        (r"uc(?P<q>\d+)_drop_(pkts|bytes)", "drop", None, 64),
        (r"(mc|all)\d+_.*", "info", None, 64),
    ),
    # Port-wide PFC frames: they prove a class paused only when one class is judged (load_verdict).
    "eos_pfc": (
        (r"(rx|tx)Frames", "pfc_pause", None, None),
    ),
    "eos_queue": (
        (r"(ucast\.TC(?P<q>\d+)\.DP\d+|(voq|egress)\.TC(?P<q2>\d+))\.dropped(Packets|Bytes)", "drop", None, None),
        (r"(ucast\.TC(?P<q>\d+)\.DP\d+|(voq|egress)\.TC(?P<q2>\d+))\.enqueued(Packets|Bytes)", "traffic", None, None),
        # A range of classes (TC0-3) tells no class apart: its drops count against every class.
        (r"(ucast\.TC[0-9-]+\.DP\d+|(voq|egress)\.TC[0-9-]+)\.dropped(Packets|Bytes)", "drop", None, None),
        (r"mcast\..*", "info", None, None),
    ),
    "eos_ecn": (
        (r"queueCounters\.(?P<q>\d+)", "ecn_mark", None, None),
    ),
    "nvue_qos": (
        (r"pfc-stats\.(?P<p>[0-7])\.(rx|tx)-pause-frames", "pfc_pause", None, None),
        (r"pfc-stats\.(?P<p>[0-7])\.(rx|tx)-pause-duration", "pfc_pause_duration", None, None),
        (r"egress-queue-stats\.(?P<q>\d+)\.(tx-uc-buffer-discards|wred-discards)", "drop", None, None),
        (r"egress-queue-stats\.(?P<q>\d+)\.tx-(frames|bytes)", "traffic", None, None),
        # printed in the JSON form (counters_parse_nos.parse_nvue_qos_json): ECN-marked frames of traffic class q
        (r"egress-queue-stats\.(?P<q>\d+)\.ecn-marked-frames", "ecn_mark", None, None),
        # Ingress priority groups are not switch priorities (no source ties PG n to priority n): their discards
        # count against every class.
        (r"ingress-buffer-stats\.\d+\.(rx-buffer-discards|rx-shared-buffer-discards)", "drop", None, None),
        (r"port-stats\.ecn-marked-packets\.transmit", "ecn_mark", None, None),
    ),
    "nvue_roce": (
        (r"(rx|tx)-stats\.(rx|tx)-pfc-stats\.pause-packets", "pfc_pause", None, None),
        (r"(rx|tx)-stats\.(rx|tx)-pfc-stats\.pause-duration", "pfc_pause_duration", None, None),
        (r"rx-stats\.rx-roce-stats\.no-buffer-discard|tx-stats\.tx-roce-stats\.unicast-no-buffer-discard", "drop",
         None, None),
        (r"tx-stats\.tx-ecn-stats\.ecn-marked-packets", "ecn_mark", None, None),
        (r"tx-stats\.tx-cnp-stats\.cnp-packets", "cnp", None, None),
        (r"(rx|tx)-stats\.(rx|tx)-roce-stats\.roce-(packets|bytes)", "traffic", None, None),
    ),
    "linux_link": (
        (r"(rx|tx)_dropped", "drop", None, 64),
        (r"rx_(errors|crc_errors|frame_errors|length_errors|fifo_errors|missed_errors|over_errors)", "drop", None, 64),
        (r"tx_(errors|aborted_errors|fifo_errors|carrier_errors|window_errors|heartbeat_errors)", "drop", None, 64),
        # the link went down or up during the load (iproute2 prints it under tx, -s -s only); IFLA_CARRIER_CHANGES
        # is a u32 (rta_getattr_u32 in ip/ipaddress.c print_stats64)
        (r"tx_carrier_changes", "drop", None, 32),
        (r"(rx|tx)_(packets|bytes)", "traffic", None, 64),
    ),
    "linux_qdisc": (
        (r"(qdisc|clsact|ingress)_drops", "drop", None, 32),
        (r"(qdisc|clsact|ingress)_(packets|bytes)", "traffic", None, 64),
        (r"(qdisc|clsact|ingress)_(overlimits|requeues)", "info", None, 32),
        # the root qdisc's handle (its major number): another value is another qdisc, whose counters began at 0
        (r"qdisc_handle", "instance", None, None),
    ),
}
# Formats whose command prints one port's counters (NVUE's ``nv show interface <if> ...``): a switch reads them per
# port, and such a read is ``{port: output}`` (:func:`parse_counters`). Which commands each NOS runs is its own
# (``tor/nos_<platform>.py``: ``COUNTER_COMMANDS``, ``read_counters``).
COUNTERS.update(NOS_COUNTERS)
ONE_PORT_FORMATS = ("nvue_qos", "nvue_roce") + NOS_ONE_PORT_FORMATS
# Formats whose tool leaves out a row of zeros, and the oracle that shows it: a counter absent from such a read that
# printed its table (:func:`printed`) was 0 (``load_verdict.read_deltas``). Every other format prints what it counts
# (SONiC's pfcstat and queuestat print N/A, mlx5 leaves out the pause counters of a priority without PFC): absent is
# *not reported* there.
ZERO_ROWS_OMITTED = dict(NOS_ZERO_ROWS_OMITTED)


def printed(facts):
    """Whether a read printed its output (a port, or no problem: a table without rows), as opposed to a failed read
    or a warning in its place."""
    return bool(facts["ports"]) or not facts["problems"]


_COMPILED = {fmt: [(re.compile(r"^(?:%s)$" % rx), fact, direction, width) for rx, fact, direction, width in rows]
             for fmt, rows in COUNTERS.items()}


def describe(fmt, name):
    """What counter ``name`` of format ``fmt`` is: ``{fact, priority, queue, width, direction}`` (``info``, width
    and direction None when the format does not know it)."""
    for rx, fact, direction, width in _COMPILED.get(fmt, ()):
        match = rx.match(name)
        if match:
            groups = match.groupdict()
            queue = groups.get("q") or groups.get("q2")
            return {"fact": fact, "priority": int(groups["p"]) if groups.get("p") else None,
                    "queue": int(queue) if queue else None, "width": width, "direction": direction}
    return {"fact": "info", "priority": None, "queue": None, "width": None, "direction": None}


_RDMA_LINK = re.compile(r"^[^\s/]+/\d+$")


def _rdma_statistic(text, fmt, port):
    """``rdma statistic show [link <dev>/<port>]`` (iproute2): ``link <dev>/<port>`` then ``name value`` pairs, all on
    one line, or one pair a line with ``-p``. Read as a stream of words, so a line broken anywhere between two words
    (the tool's one-line output pasted into a mail wrapped at 72 columns) reads the same. Each link is a port."""
    ports, problems, current = {}, [], None
    words = text.split()
    i = 0
    while i < len(words):
        if words[i] == "link" and i + 1 < len(words) and _RDMA_LINK.match(words[i + 1]):
            current = ports.setdefault(words[i + 1], {})
            i += 2
            continue
        if current is None or i + 1 >= len(words):
            problems.append("%s: %r is not a `name value` pair of a link" % (fmt, " ".join(words[i:i + 2])[:80]))
            i += 2
            continue
        number = _int(words[i + 1])
        if number is None:
            problems.append("%s: %s holds %r, not a counter" % (fmt, words[i], words[i + 1][:40]))
        else:
            current[words[i]] = number
        i += 2
    if not any(ports.values()):
        problems.append("%s: no counter in the `rdma statistic show` output" % fmt)
        return new_counters(fmt, problems=problems)
    return new_counters(fmt, _only(ports, port, fmt, problems), problems)


def parse_hw_counters(data, fmt, port=None):
    """A ``hw_counters`` directory: a mapping {name or path: content}, or text of ``grep -H . <dir>/*``
    (``path:value``) or of ``name value`` / ``name: value`` lines; or the same counters as ``rdma statistic show``
    prints them (:func:`_rdma_statistic`: the link names the port)."""
    counters, problems = {}, []
    if not isinstance(data, dict) and str(data).split()[:1] == ["link"]:
        return _rdma_statistic(str(data), fmt, port)
    if isinstance(data, dict):
        items = [(str(k), str(v)) for k, v in data.items()]
    else:
        items = []
        for line in str(data).splitlines():
            stripped = line.strip()
            if not stripped:
                continue
            match = re.match(r"^(\S+?)(?::\s*|\s+)(\S+)$", stripped)
            if not match:
                problems.append("%s: cannot read the line %r" % (fmt, stripped[:120]))
                continue
            items.append(match.groups())
    for key, value in items:
        name = key.rstrip("/").rsplit("/", 1)[-1]
        number = _int(value)
        if number is None:
            problems.append("%s: %s holds %r, not a counter" % (fmt, key, value.strip()[:40]))
            continue
        counters[name] = number
    if not counters:
        problems.append("%s: no counter in the input (not the hw_counters directory?)" % fmt)
        return new_counters(fmt, problems=problems)
    return new_counters(fmt, {port or DEFAULT_PORT: counters}, problems)


def parse_sonic_pfc(text, port=None):
    """``show pfc counters``: a ``Port Rx`` and a ``Port Tx`` table, columns PFC0..PFC7."""
    ports, problems = {}, []
    tables = _tables(text)
    for headers, rows in tables:
        direction = {"Port Rx": "rx", "Port Tx": "tx"}.get(headers[0])
        if direction is None:
            problems.append("sonic_pfc: a table headed %r is neither Port Rx nor Port Tx" % headers[0])
            continue
        for row in rows:
            counters = ports.setdefault(row[0], {})
            for head, cell in zip(headers[1:], row[1:]):
                prio = re.match(r"^PFC([0-7])$", head)
                value = _int(cell)
                if prio and value is not None:  # N/A: not reported
                    counters["pfc%s_%s_pkts" % (prio.group(1), direction)] = value
    if not tables:
        problems.append("sonic_pfc: no table in the output (not `show pfc counters`?)")
    return new_counters("sonic_pfc", _only(ports, port, "sonic_pfc", problems), problems)


_QUEUE_COLUMNS = {"Counter/pkts": "pkts", "Counter/bytes": "bytes", "Drop/pkts": "drop_pkts", "Drop/bytes": "drop_bytes"}


def parse_sonic_queue(text, port=None):
    """``show queue counters``: Port, TxQ (UC<n>/MC<n>/ALL<n>) and packets, bytes, drops per queue."""
    ports, problems = {}, []
    tables = _tables(text)
    for headers, rows in tables:
        if headers[:2] != ["Port", "TxQ"]:
            problems.append("sonic_queue: a table headed %r is not Port, TxQ" % " ".join(headers[:2]))
            continue
        for row in rows:
            queue = row[1].lower()
            counters = ports.setdefault(row[0], {})
            for head, cell in zip(headers[2:], row[2:]):
                value = _int(cell)
                if head in _QUEUE_COLUMNS and value is not None:
                    counters["%s_%s" % (queue, _QUEUE_COLUMNS[head])] = value
    if not tables:
        problems.append("sonic_queue: no table in the output (not `show queue counters`?)")
    return new_counters("sonic_queue", _only(ports, port, "sonic_queue", problems), problems)


def parse_eos_pfc(data, port=None):
    """``show priority-flow-control counters | json``: ``interfaceCounters`` -> port -> ``rxFrames``/``txFrames``."""
    problems = []
    doc = _json(data, "eos_pfc", problems)
    ports = {}
    if doc is not None:
        table = doc.get("interfaceCounters")
        if not isinstance(table, dict):
            problems.append("eos_pfc: no interfaceCounters (not `show priority-flow-control counters | json`?)")
        else:
            for name, row in table.items():
                ports[name] = {}
                _flat(row if isinstance(row, dict) else {}, "", ports[name])
    return new_counters("eos_pfc", _only(ports, port, "eos_pfc", problems), problems)


def parse_eos_queue(data, port=None):
    """``show interfaces counters queue detail | json`` (``egressQueueCounters``: ucastQueues/mcastQueues ->
    trafficClasses -> dropPrecedences) or ``show interfaces counters queue drops | json`` (VOQ platforms:
    ``interfaces`` -> trafficClasses -> ingressVoqCounters/egressQueueCounters -> countersSum)."""
    problems = []
    doc = _json(data, "eos_queue", problems)
    ports = {}
    if doc is not None and isinstance((doc.get("egressQueueCounters") or {}).get("interfaces"), dict):
        for name, intf in doc["egressQueueCounters"]["interfaces"].items():
            counters = ports.setdefault(name, {})
            for kind, short in (("ucastQueues", "ucast"), ("mcastQueues", "mcast")):
                for tc, detail in ((intf.get(kind) or {}).get("trafficClasses") or {}).items():
                    for dp, values in ((detail or {}).get("dropPrecedences") or {}).items():
                        _flat(values if isinstance(values, dict) else {}, "%s.%s.%s" % (short, tc, dp), counters)
    elif doc is not None and isinstance(doc.get("interfaces"), dict):
        for name, intf in doc["interfaces"].items():
            counters = ports.setdefault(name, {})
            for tc, detail in ((intf or {}).get("trafficClasses") or {}).items():
                for kind, short in (("ingressVoqCounters", "voq"), ("egressQueueCounters", "egress")):
                    sums = ((detail or {}).get(kind) or {}).get("countersSum")
                    _flat(sums if isinstance(sums, dict) else {}, "%s.%s" % (short, tc), counters)
    elif doc is not None:
        problems.append("eos_queue: neither egressQueueCounters nor interfaces (not `show interfaces counters queue "
                        "detail | json` or `... queue drops | json`?)")
    return new_counters("eos_queue", _only(ports, port, "eos_queue", problems), problems)


def parse_eos_ecn(data, port=None):
    """``show qos interfaces ecn counters queue | json``: ``intfQueueCounters`` -> port -> ``queueCounters`` ->
    tx-queue -> marked packets (text; ``-``: ECN is not configured on the queue, not reported)."""
    problems = []
    doc = _json(data, "eos_ecn", problems)
    ports = {}
    if doc is not None:
        table = doc.get("intfQueueCounters")
        if not isinstance(table, dict):
            problems.append("eos_ecn: no intfQueueCounters (not `show qos interfaces ecn counters queue | json`?)")
        else:
            for name, row in table.items():
                ports[name] = {}
                _flat({"queueCounters": (row or {}).get("queueCounters") or {}}, "", ports[name])
    return new_counters("eos_ecn", _only(ports, port, "eos_ecn", problems), problems)


_NV_SECTIONS = {"priority-group": "ingress-buffer-stats", "traffic-class": "egress-queue-stats",
                "switch-priority": "pfc-stats", "counter": "port-stats"}


def parse_nvue_qos(text, port=None):
    """``nv show interface <if> counters qos`` (or one of its sections): tables keyed by their first column. Its JSON
    (``-o json``, text or a mapping) is read by :func:`counters_parse_nos.parse_nvue_qos_json`."""
    if isinstance(text, dict) or str(text).lstrip().startswith("{"):
        return parse_nvue_qos_json(text, port=port)
    counters, problems = {}, []
    tables = _tables(str(text))
    for headers, rows in tables:
        section = _NV_SECTIONS.get(headers[0].strip().lower())
        if section is None:
            problems.append("nvue_qos: a table headed %r is not a QoS counters table" % headers[0])
            continue
        columns = [_nv_name(h) for h in headers[1:]]
        for row in rows:
            if not row or not row[0]:
                continue
            for column, cell in zip(columns, row[1:]):
                value = _nv_value(cell)
                if value is not None:
                    counters["%s.%s.%s" % (section, _nv_name(row[0]), column)] = value
                elif cell.strip().lower() not in ("n/a", "", "-"):
                    problems.append("nvue_qos: %s %s %s holds %r, not a counter" % (section, row[0], column, cell))
    if not tables:
        problems.append("nvue_qos: no table in the output (not `nv show interface <if> counters qos`?)")
    if not counters:
        return new_counters("nvue_qos", problems=problems)
    return new_counters("nvue_qos", {port or DEFAULT_PORT: counters}, problems)


def parse_nvue_roce(data, port=None):
    """``nv show interface <if> qos roce counters``: a tree by indentation (two spaces a level), the value in the
    ``operational`` column. A mapping (its JSON, ``-o json``) is read as the same tree; that layout is inferred from
    the text's, not confirmed from a source."""
    counters, problems = {}, []
    if isinstance(data, dict):
        _flat(data, "", counters)
    else:
        lines = str(data).splitlines()
        dashes = next((i for i, line in enumerate(lines) if re.match(r"^-+(\s+-+)+\s*$", line)), None)
        if dashes is None:
            problems.append("nvue_roce: no table in the output (not `nv show interface <if> qos roce counters`?)")
            return new_counters("nvue_roce", problems=problems)
        spans = [m.span() for m in re.finditer(r"-+", lines[dashes])]
        value_at = (spans[0][1], spans[2][0] if len(spans) > 2 else None)
        path = []
        for line in lines[dashes + 1:]:
            if not line.strip():
                continue
            name_part = line[:value_at[0]]
            name = name_part.strip()
            depth = (len(name_part) - len(name_part.lstrip(" "))) // 2
            del path[depth:]
            cell = line[value_at[0]:value_at[1]].strip() if value_at[1] else line[value_at[0]:].strip()
            if not cell:
                path.append(name)
                continue
            value = _nv_value(cell)
            full = ".".join(path + [name])
            if value is None:
                problems.append("nvue_roce: %s holds %r, not a counter" % (full, cell))
                continue
            counters[full] = value
    if not counters:
        problems.append("nvue_roce: no counter in the input")
        return new_counters("nvue_roce", problems=problems)
    return new_counters("nvue_roce", {port or DEFAULT_PORT: counters}, problems)


def _linux_doc(data, fmt, problems):
    """The JSON list iproute2 prints with ``-j`` (text or the parsed list), or None with a problem."""
    if isinstance(data, (bytes, str)):
        try:
            data = json.loads(data)
        except ValueError as exc:
            problems.append("%s: not JSON (%s); run the command with -j" % (fmt, str(exc).split(":", maxsplit=1)[0]))
            return None
    if not isinstance(data, list):
        problems.append("%s: the JSON is a %s, not iproute2's list" % (fmt, type(data).__name__))
        return None
    return [item for item in data if isinstance(item, dict)]


def parse_linux_link(data, port=None):
    """``ip -s -s -j link show``: per interface (``ifname``) the ``stats64`` (or ``stats``) ``rx`` and ``tx`` blocks."""
    problems, ports = [], {}
    doc = _linux_doc(data, "linux_link", problems)
    for item in doc or ():
        name = item.get("ifname")
        stats = item.get("stats64") if isinstance(item.get("stats64"), dict) else item.get("stats")
        if not isinstance(name, str) or not isinstance(stats, dict):
            continue
        counters = ports.setdefault(name, {})
        for direction in ("rx", "tx"):
            for key, value in (stats.get(direction) or {}).items():
                if _number(value) is not None:
                    counters["%s_%s" % (direction, key)] = _number(value)
    if doc is not None and not ports:
        problems.append("linux_link: no interface with statistics (not `ip -s -s -j link show`?)")
    return new_counters("linux_link", _only(ports, port, "linux_link", problems), problems)


_QDISC_KEYS = ("bytes", "packets", "drops", "overlimits", "requeues")


def parse_linux_qdisc(data, port=None):
    """``tc -s -j qdisc show``: per queueing discipline its ``dev``, ``kind``, ``root`` or ``parent`` and statistics at
    the top of the object (iproute2 ``tc/tc_qdisc.c`` ``print_qdisc``, every release with JSON, 4.15 on; a nested
    ``stats`` is read too, though only ``tc class show`` and actions print one)."""
    problems, ports = [], {}
    doc = _linux_doc(data, "linux_qdisc", problems)
    for item in doc or ():
        dev, kind = item.get("dev"), item.get("kind")
        if not isinstance(dev, str) or not isinstance(kind, str):
            continue
        stats = item.get("stats") if isinstance(item.get("stats"), dict) else item
        if item.get("root"):
            prefix = "qdisc"
        elif kind in ("clsact", "ingress"):
            prefix = kind
        else:
            prefix = "child_%s" % item.get("parent", item.get("handle", "?"))
        counters = ports.setdefault(dev, {})
        for key in _QDISC_KEYS:
            if _number(stats.get(key)) is not None:
                counters["%s_%s" % (prefix, key)] = _number(stats[key])
        handle = re.match(r"^([0-9a-fA-F]{1,4}):", str(item.get("handle") or ""))
        if prefix == "qdisc" and handle:
            counters["qdisc_handle"] = int(handle.group(1), 16)
    if doc is not None and not ports:
        problems.append("linux_qdisc: no queueing discipline in the output (not `tc -s -j qdisc show`?)")
    return new_counters("linux_qdisc", _only(ports, port, "linux_qdisc", problems), problems)


PARSERS = {
    "ethtool_mlx5": parse_ethtool,
    "rdma_mlx5": lambda data, port=None: parse_hw_counters(data, "rdma_mlx5", port),
    "rdma_rxe": lambda data, port=None: parse_hw_counters(data, "rdma_rxe", port),
    "sonic_pfc": parse_sonic_pfc,
    "sonic_queue": parse_sonic_queue,
    "eos_pfc": parse_eos_pfc,
    "eos_queue": parse_eos_queue,
    "eos_ecn": parse_eos_ecn,
    "nvue_qos": parse_nvue_qos,
    "nvue_roce": parse_nvue_roce,
    "linux_link": parse_linux_link,
    "linux_qdisc": parse_linux_qdisc,
}
PARSERS.update(NOS_PARSERS)


def per_port(data, fmt):
    """Whether ``data`` is a read of one-port format ``fmt`` taken port by port: ``{port: output}``, every output
    text (a JSON tree of ``nvue_roce`` holds mappings, never only text, so it is not taken for one)."""
    return (fmt in ONE_PORT_FORMATS and isinstance(data, dict) and bool(data)
            and all(isinstance(key, str) and isinstance(value, str) for key, value in data.items()))


def _parse_text(data, fmt, port):
    try:
        return PARSERS[fmt](data, port=port)
    except Exception as exc:  # pylint: disable=broad-except  # a parser reports, it never crashes the play
        return new_counters(fmt, problems=["%s: cannot parse the input (%s: %s)" % (fmt, type(exc).__name__, exc)])


def _parse_one(data, fmt, port):
    """One read: a text goes through the shared paste pre-pass (:mod:`pasted_text`) first; of its readings (as
    cleaned, and joined back where a mail wrapped it) the one with the most counters wins, then the fewest problems;
    where none holds a counter, the text as it came is parsed for its problems."""
    if data is None:
        return new_counters(fmt, problems=["no %s output to parse" % fmt])
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    if not isinstance(data, str):
        return _parse_text(data, fmt, port)
    best = None
    for text in readings(data):
        out = _parse_text(text, fmt, port)
        score = (sum(len(c) for c in out["ports"].values()), -len(out["problems"]))
        if best is None or score > best[0]:
            best = (score, out)
    if not best[0][0]:
        # no reading held a counter: the problems quote the text as it came (an error in place of the table is
        # reported as the switch printed it, not as the pre-pass left it)
        return _parse_text(data, fmt, port)
    return best[1]


def parse_counters(data, fmt, port=None):
    """Parse one read in format ``fmt`` (ValueError naming the formats when unknown). ``port``: the interface or
    RDMA device port a host read belongs to, or the one switch port to keep. A read of a one-port format taken port
    by port (``{port: output}``, :func:`per_port`) is parsed for ``port`` (a problem when that port was not read),
    or without ``port`` every port's. Never raises on bad input: what cannot be read is a line in ``problems``."""
    if fmt not in PARSERS:
        raise ValueError("%r is not a counter format; use one of: %s" % (fmt, ", ".join(FORMATS)))
    if not per_port(data, fmt):
        return _parse_one(data, fmt, port)
    if port is not None:
        if port not in data:
            return new_counters(fmt, problems=["%s: port %s was not read (read: %s)"
                                               % (fmt, port, ", ".join(sorted(data)))])
        return _parse_one(data[port], fmt, port)
    out = new_counters(fmt)
    for name in sorted(data):
        one = _parse_one(data[name], fmt, name)
        out["ports"].update(one["ports"])
        out["problems"] += ["%s: %s" % (name, line) for line in one["problems"]]
    return out
