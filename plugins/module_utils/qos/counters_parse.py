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
  ``drivers/net/ethernet/mellanox/mlx5/core/en_stats.c`` (PPCNT groups read 64-bit, ``MLX5E_READ_CTR64_BE``; the
  Q counters ``rx_out_of_buffer``/``rx_if_down_packets`` and ``dev_internal_queue_oob`` 32-bit).
* ``rdma_mlx5`` -- ``/sys/class/infiniband/<dev>/ports/<n>/hw_counters/*`` of mlx5_ib
  (``drivers/infiniband/hw/mlx5/counters.c``: Q counters read with ``be32_to_cpu``, 32-bit; congestion counters
  ``*_high``, 64-bit).
* ``rdma_rxe`` -- the same directory of soft-RoCE (``drivers/infiniband/sw/rxe/rxe_hw_counters.c``: ``atomic64``).
* ``sonic_pfc`` / ``sonic_queue`` -- SONiC ``show pfc counters`` (``scripts/pfcstat``) and ``show queue counters``
  (``scripts/queuestat``) of sonic-net/sonic-utilities: SAI statistics (uint64), printed with thousands separators,
  ``N/A`` when the counter is not in COUNTERS_DB. Named here ``pfc<p>_rx_pkts``/``pfc<p>_tx_pkts``
  (``SAI_PORT_STAT_PFC_<p>_RX_PKTS``/``_TX_PKTS``) and ``uc<q>_pkts``, ``uc<q>_bytes``, ``uc<q>_drop_pkts``,
  ``uc<q>_drop_bytes`` (``SAI_QUEUE_STAT_PACKETS``, ``_BYTES``, ``_DROPPED_PACKETS``, ``_DROPPED_BYTES``; ``mc``
  for multicast queues).
"""

from __future__ import annotations

import re

SIDES = {"ethtool_mlx5": "host NIC", "rdma_mlx5": "RDMA", "rdma_rxe": "RDMA", "sonic_pfc": "switch",
         "sonic_queue": "switch"}
FORMATS = tuple(sorted(SIDES))
DEFAULT_PORT = "port"

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
#   info               read, not judged
# Each row: (regex on the name, fact, direction, width in bits). A named group ``p`` is the priority, ``q`` the
# queue. Unknown names are ``info``; an unknown width is None (a decrease is then a reset, never a wrap).
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
        (r"rx_(crc_errors|symbol_err|in_range_len_errors|out_of_range_len|oversize_pkts|undersize_pkts|fragments|"
         r"jabbers)_phy", "drop", None, 64),
        (r"link_down_events_phy", "drop", None, 64),
        (r".*_phy", "info", None, 64),
    ),
    "rdma_mlx5": (
        (r"np_ecn_marked_roce_packets", "ecn_mark", None, 64),
        (r"np_cnp_sent|rp_cnp_handled", "cnp", None, 64),
        (r"rp_cnp_ignored", "info", None, 64),
        (r"out_of_sequence|packet_seq_err|implied_nak_seq_err|local_ack_timeout_err|duplicate_request|"
         r"rnr_nak_retry_err|req_transport_retries_exceeded|req_rnr_retries_exceeded|roce_adp_retrans|"
         r"roce_adp_retrans_to", "transport_error", None, 32),
        (r"out_of_buffer", "drop", None, 32),
        (r"rx_(write|read|atomic)_requests|rx_dct_connect|resp_.*|req_.*|roce_slow_restart.*", "info", None, 32),
        (r"rx_icrc_encapsulated", "info", None, 64),
        (r"cc_rx_ce_pkts", "ecn_mark", None, 64),
        (r"cc_(rx|tx)_cnp_pkts", "cnp", None, 64),
        (r"rdma_(tx|rx)_(packets|bytes)", "traffic", None, 64),
    ),
    "rdma_rxe": (
        (r"duplicate_request|out_of_seq_request|rcvd_seq_err|retry_exceeded_err|retry_rnr_exceeded_err|"
         r"completer_retry_err|send_err", "transport_error", None, 64),
        (r"link_downed", "drop", None, 64),
        (r"sent_pkts|rcvd_pkts", "traffic", None, 64),
        (r"rcvd_rnr_err|send_rnr_err|ack_deferred|rdma_sends|rdma_recvs", "info", None, 64),
    ),
    "sonic_pfc": (
        (r"pfc(?P<p>[0-7])_(rx|tx)_pkts", "pfc_pause", None, 64),
    ),
    "sonic_queue": (
        (r"uc(?P<q>\d+)_(pkts|bytes)", "traffic", None, 64),
        (r"uc(?P<q>\d+)_drop_(pkts|bytes)", "drop", None, 64),
        (r"(mc|all)\d+_.*", "info", None, 64),
    ),
}
_COMPILED = {fmt: [(re.compile(r"^(?:%s)$" % rx), fact, width) for rx, fact, _queue, width in rows]
             for fmt, rows in COUNTERS.items()}


def describe(fmt, name):
    """What counter ``name`` of format ``fmt`` is: ``{fact, priority, queue, width}`` (``info`` and width None when
    the format does not know it)."""
    for rx, fact, width in _COMPILED.get(fmt, ()):
        match = rx.match(name)
        if match:
            groups = match.groupdict()
            return {"fact": fact, "priority": int(groups["p"]) if groups.get("p") else None,
                    "queue": int(groups["q"]) if groups.get("q") else None, "width": width}
    return {"fact": "info", "priority": None, "queue": None, "width": None}


def new_counters(fmt, ports=None, problems=None):
    return {"format": fmt, "side": SIDES.get(fmt), "ports": ports or {}, "problems": problems or []}


def _int(text):
    text = str(text).strip().replace(",", "")
    return int(text) if re.match(r"^\d+$", text) else None


def parse_ethtool(text, port=None):
    """``ethtool -S <if>``: ``NIC statistics:`` then one ``name: value`` a line."""
    counters, problems = {}, []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.endswith("statistics:"):
            continue
        name, sep, value = stripped.rpartition(":")
        number = _int(value)
        if not sep or number is None or not name.strip():
            problems.append("ethtool_mlx5: cannot read the line %r" % stripped[:120])
            continue
        counters[name.strip()] = number
    if not counters:
        problems.append("ethtool_mlx5: no counter in the output (not `ethtool -S <interface>`?)")
        return new_counters("ethtool_mlx5", problems=problems)
    return new_counters("ethtool_mlx5", {port or DEFAULT_PORT: counters}, problems)


def parse_hw_counters(data, fmt, port=None):
    """A ``hw_counters`` directory: a mapping {name or path: content}, or text of ``grep -H . <dir>/*``
    (``path:value``) or of ``name value`` / ``name: value`` lines."""
    counters, problems = {}, []
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


def _tables(text):
    """The tabulate tables of a SONiC show command: [(headers, rows)], columns cut at the dashes line."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if i == 0 or not re.match(r"^-+(\s+-+)+\s*$", line):
            continue
        spans = [m.span() for m in re.finditer(r"-+", line)]
        cut = [(spans[j][0] if j == 0 else spans[j - 1][1], spans[j][1]) for j in range(len(spans))]
        cut[0] = (0, cut[0][1])

        def cells(row):
            return [row[a:b].strip() for a, b in cut[:-1]] + [row[cut[-1][0]:].strip()]

        headers = cells(lines[i - 1])
        rows = []
        for row in lines[i + 1:]:
            if not row.strip() or row.startswith("For namespace"):
                break
            rows.append(cells(row))
        out.append((headers, rows))
    return out


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


def _only(ports, port, fmt, problems):
    if port is None:
        return ports
    if port not in ports:
        problems.append("%s: port %s is not in the output (ports: %s)" % (fmt, port, ", ".join(sorted(ports)) or "none"))
        return {}
    return {port: ports[port]}


PARSERS = {
    "ethtool_mlx5": parse_ethtool,
    "rdma_mlx5": lambda data, port=None: parse_hw_counters(data, "rdma_mlx5", port),
    "rdma_rxe": lambda data, port=None: parse_hw_counters(data, "rdma_rxe", port),
    "sonic_pfc": parse_sonic_pfc,
    "sonic_queue": parse_sonic_queue,
}


def parse_counters(data, fmt, port=None):
    """Parse one read in format ``fmt`` (ValueError naming the formats when unknown). ``port``: the interface or
    RDMA device port a host read belongs to, or the one switch port to keep. Never raises on bad input: what cannot
    be read is a line in ``problems``."""
    if fmt not in PARSERS:
        raise ValueError("%r is not a counter format; use one of: %s" % (fmt, ", ".join(FORMATS)))
    if data is None:
        return new_counters(fmt, problems=["no %s output to parse" % fmt])
    try:
        return PARSERS[fmt](data, port=port)
    except Exception as exc:  # pylint: disable=broad-except  # a parser reports, it never crashes the play
        return new_counters(fmt, problems=["%s: cannot parse the input (%s: %s)" % (fmt, type(exc).__name__, exc)])
