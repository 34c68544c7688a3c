# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Switch counter reads beyond the egress queue and PFC tables: the places a lossless fabric drops packets that
:mod:`counters_parse`'s first formats do not see. Registered in :mod:`counters_parse`'s format table
(:data:`NOS_SIDES`, :data:`NOS_COUNTERS`, :data:`NOS_PARSERS`, :data:`NOS_ONE_PORT_FORMATS`), read through
``parse_counters`` like every other format.

* ``sonic_pfcwd`` -- SONiC ``show pfcwd stats`` (sonic-net/sonic-utilities ``pfcwd/main.py``, ``show stats``; the
  PFC watchdog's per-queue statistics that orchagent's ``pfcwdorch`` writes to COUNTERS_DB): one row per watched
  queue, ``<port>:<queue>``, with ``STATUS`` and the cumulative columns ``STORM DETECTED/RESTORED``, ``TX OK/DROP``
  and ``RX OK/DROP`` (``PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED``/``_RESTORED``, ``..._TX_PACKETS``/``_TX_DROPPED_PACKETS``,
  ``..._RX_PACKETS``/``_RX_DROPPED_PACKETS``). The ``LAST`` columns count the latest storm only (they restart at
  each storm) and are not read. Named ``q<queue>_storm_detected``, ``q<queue>_storm_restored``, ``q<queue>_tx_drop``,
  ``q<queue>_rx_drop``, ``q<queue>_tx_ok``, ``q<queue>_rx_ok``. A storm the watchdog detected is ``pause_storm`` of
  that queue; the packets its drop action discarded are ``drop``. The collection runs ``show pfcwd stats -e``: every
  queue of every port is printed, an unwatched one ``N/A`` and ``0/0``. Without ``-e`` (a pasted read) the tool
  leaves out a queue whose five columns are all ``0/0`` (``collect_stats``): the format is in
  :data:`NOS_ZERO_ROWS_OMITTED`, so a queue absent from a read that printed its table reads 0 there
  (``load_verdict.read_deltas``), and a first storm during the run is judged.
* ``sonic_pg_drop`` -- SONiC ``show priority-group drop counters`` (``scripts/pg-drop``: ``Ingress PG dropped
  packets:`` then a table ``Port``, ``PG0``..``PG7``; ``SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS``, ``N/A``
  where COUNTERS_DB has none). Named ``pg<n>_drop_pkts``: packets the switch dropped at *ingress* for want of buffer
  (headroom too small for the cable and the pause response, PFC sent too late), which the egress queue counters
  never see. A priority group is not a switch priority (the ``PFC_PRIORITY_TO_PRIORITY_GROUP_MAP`` decides, not
  read here): a PG drop counts against every class of the port.
* ``sonic_pg_headroom`` -- SONiC ``show priority-group persistent-watermark headroom`` (``scripts/watermarkstat``;
  ``Ingress headroom per PG:``, the same table): ``pg<n>_headroom_bytes``, the most headroom the PG has held since
  the watermark was last cleared. A high-water mark, not a counter (fact ``headroom_watermark``, never judged): the
  verdict names it beside an ingress PG drop, where it tells an exhausted headroom from another cause.
* ``linux_ethtool`` -- ``ethtool -S <port>`` of a Linux switch's port (one port a command, read port by port). On
  NVIDIA Spectrum under the upstream driver (mlxsw, ``drivers/net/ethernet/mellanox/mlxsw/spectrum_ethtool.c``):
  per traffic class ``tc_no_buffer_discard_uc_tc_<n>`` (unicast packets discarded for want of buffer: the ASIC's
  congestion drop of a port whose qdisc is not offloaded, which neither ``ip -s link`` nor ``tc -s qdisc`` counts),
  ``tc_transmit_queue_tc_<n>`` (the queue's current depth, a gauge: read, not judged); per priority
  ``rx/tx_pause_prio_<p>``, ``rx/tx_pause_duration_prio_<p>``, ``rx/tx_frames_prio_<p>``, ``rx/tx_octets_prio_<p>``
  (PPCNT's per-priority group); per port ``ecn_marked``, the discard group (``discard_ingress_general``,
  ``discard_egress_general``, ``discard_egress_hoq``...) and the IEEE 802.3 group (``a_frame_check_sequence_errors``,
  ``a_pause_mac_ctrl_frames_*``). PPCNT counters are 64-bit (``mlxsw_reg_ppcnt_*`` getters are ``u64``). A port of
  another driver (a veth of a software bridge) prints its own names, read and judged ``info``.

* ``nxos_queuing`` -- Cisco NX-OS ``show queuing interface <port>`` (Nexus 9000; one port a command, read port by
  port): per ``QOS GROUP <g>`` box, unicast and multicast, ``Tx Pkts`` (traffic), ``WRED/AFD & Tail Drop Pkts`` and
  ``WD & Tail Drop Pkts`` (the queue's drops, the PFC watchdog's included: ``drop`` of queue g; this collection maps
  priority p to qos-group p), ``Q Depth Byts`` (a depth: read); the ingress part's ``Per Port Ingress Statistics``
  (``Ingress Overflow Drop Pkts``: headroom exhausted; ``Hi``/``Low Priority Drop Pkts``: port-wide ``drop``),
  ``Per Slice`` (every port of the slice: read, not judged), ``TxPPP``/``RxPPP`` and the per-CoS PFC table (read:
  ``nxos_pfc`` is the PFC read).
* ``nxos_pfc`` -- NX-OS ``show interface priority-flow-control detail``: per port the ``Rx``/``Tx`` rows of the
  ``Priority0``..``Priority7`` table (``pfc<p>_rx_frames``, ``pfc<p>_tx_frames``: ``pfc_pause`` of p) and the totals.
  NX-OS prints no counter width (None). Layouts: a published Nexus 9000 capture (tests/.../data/counters/ORIGIN.md).
* ``nxos_pfcwd`` -- NX-OS ``show queuing pfc-queue detail`` (the PFC watchdog, every port it watches): per port
  (``<port> Interface PFC watchdog: [Enabled]``) a box per no-drop ``QOS GROUP <g>`` of ``label|value`` rows, named
  ``qg<g>_<label>``: ``qg<g>_shutdown`` (the times the watchdog shut the queue on a PFC storm: ``pause_storm`` of queue
  g), ``qg<g>_restored`` (read), and the packets it drained from and dropped at the shut queue, egress and ingress
  (``total_pkts_drained``, ``total_pkts_dropped``, ``total_pkts_drained_dropped``, ``aggregate_pkts_dropped``,
  ``total_ingress_pkts_dropped``, ``aggregate_ingress_pkts_dropped``: ``drop`` of queue g; whether a ``Total`` row
  counts since the last clear or the latest shutdown is not documented in the sources found, and either moving is a
  loss). A port the watchdog does not watch prints no box: not reported. Layout: a receiver's test fixture and Cisco's
  NX-API schema of the command (ORIGIN.md).

* ``eos_pfc_detail`` -- Arista EOS ``show interface <port> priority-flow-control counters detail | json`` (one port a
  command, read port by port): ``interfaces`` -> port -> ``priorities`` -> priority -> ``rxFrames``/``txFrames``, the
  port's PFC frames **per priority** (``eos_pfc`` has them for the whole port), named ``prio<p>.rxFrames``,
  ``prio<p>.txFrames`` (``pfc_pause`` of p); another whole-number key under a priority is kept as ``prio<p>.<key>``
  and read. Layout: a reader of the command (facebook/DNE-TaaC; ORIGIN.md), partial: only those two keys.
* ``nvue_qos`` in JSON -- ``nv show interface <if> counters qos -o json`` (:func:`parse_nvue_qos_json`, which
  :func:`counters_parse.parse_nvue_qos` hands a JSON document to): ``{section: {row: {column: value}}}`` with the text
  form's section names (``ingress-buffer-stats``, ``egress-queue-stats``, ``pfc-stats``, ``port-stats``), rows
  (priority group, traffic class, switch priority, counter) and column names, read to the text form's counter names
  (``pfc-stats.3.tx-pause-frames``); ``egress-queue-stats.<tc>.ecn-marked-frames`` (ECN marks of traffic class tc) is
  read where printed. A value is a whole number, or a cell as the text prints it (``0 Bytes``, ``7.29 MB``). Layout:
  two readers of the command's JSON, NVIDIA's own switch tests and an LLDP/PFC monitor (ORIGIN.md); no NVIDIA page
  prints it.
* ``os10_queuing`` -- Dell OS10 ``show queuing statistics interface ethernet <n>/<n>/<n>`` (one port a command, read
  port by port): ``Interface ethernet<n>/<n>/<n>``, then a ``Queue``, ``Packets``, ``Bytes``, ``Dropped-Packets``,
  ``Dropped-Bytes`` table, one row per egress queue. Named ``q<q>_packets``, ``q<q>_bytes`` (traffic of queue q),
  ``q<q>_dropped_packets``, ``q<q>_dropped_bytes`` (``drop`` of queue q: the queue's tail and WRED drops). OS10 prints
  no counter width (None). The CLI's prompt lines (``host#``, with the command it echoes) are skipped. Layout: a
  recorded read of two OS10 switches in a netdev thread (tests/.../data/counters/ORIGIN.md). OS10's per-priority PFC
  counters are not read: no sample of their layout was found.

Every counter keeps its source's name, and one the source does not print is absent (*not reported*).
"""

from __future__ import annotations

import json
import re

from ansible_collections.ainet.fabric.plugins.module_utils.qos import counters_text as base

NOS_SIDES = {"sonic_pfcwd": "switch", "sonic_pg_drop": "switch", "sonic_pg_headroom": "switch", "linux_ethtool": "switch",
             "nxos_queuing": "switch", "nxos_pfc": "switch", "nxos_pfcwd": "switch", "os10_queuing": "switch",
             "eos_pfc_detail": "switch"}
base.SIDES.update(NOS_SIDES)
NOS_ONE_PORT_FORMATS = ("linux_ethtool", "nxos_queuing", "os10_queuing", "eos_pfc_detail")
# Formats whose tool leaves out a row whose counters are all 0 (the oracle that says so): a counter absent from such
# a read that printed its table was 0, not "not reported" (load_verdict.read_deltas). Only where the tool's code
# shows it; NX-OS `show queuing pfc-queue detail` and OS10's tables are not known to (no source shows them omitting).
NOS_ZERO_ROWS_OMITTED = {
    "sonic_pfcwd": "sonic-utilities pfcwd/main.py collect_stats: a queue whose columns are all 0/0 is printed only "
                   "with -e",
}
NOS_COUNTERS = {
    "sonic_pfcwd": (
        # orchagent's pfcwdorch counts storms and the watchdog's drops per queue in COUNTERS_DB (uint64 strings)
        (r"q(?P<q>\d+)_storm_detected", "pause_storm", None, 64),
        (r"q(?P<q>\d+)_storm_restored", "info", None, 64),
        (r"q(?P<q>\d+)_(tx|rx)_drop", "drop", None, 64),
        (r"q(?P<q>\d+)_(tx|rx)_ok", "info", None, 64),
    ),
    "sonic_pg_drop": (
        # no priority group index is a priority: port-wide, against every class
        (r"pg\d+_drop_pkts", "drop", None, 64),
    ),
    "sonic_pg_headroom": (
        # a high-water mark, not a counter: never judged; the verdict names it beside an ingress PG drop
        (r"pg\d+_headroom_bytes", "headroom_watermark", None, None),
    ),
    "linux_ethtool": (
        (r"tc_no_buffer_discard_uc_tc_(?P<q>\d+)", "drop", None, 64),
        (r"tc_transmit_queue_tc_\d+", "info", None, 64),
        (r"(rx|tx)_pause_prio_(?P<p>[0-7])", "pfc_pause", None, 64),
        (r"(rx|tx)_pause_duration_prio_(?P<p>[0-7])", "pfc_pause_duration", None, 64),
        (r"(rx|tx)_(frames|octets)_prio_(?P<p>[0-7])", "traffic", None, 64),
        (r"ecn_marked", "ecn_mark", None, 64),
        # buffer and forwarding-pipeline drops; the filtering discards (VLAN membership, STP, loopback, policy
        # engine) drop what the switch is told to drop, not what congestion loses: read, not judged
        (r"discard_(ingress_general|egress_general|egress_hoq|ingress_tx_link_down)|if_out_discards", "drop", None, 64),
        (r"a_frame_check_sequence_errors|a_alignment_errors|a_symbol_error_during_carrier|dot3stats_(fcs|symbol)_errors",
         "drop", None, 64),
        (r"a_pause_mac_ctrl_frames_(received|xmitted)|dot3in_pause_frames", "link_pause", None, 64),
    ),
    # NX-OS prints no counter width: None (a decrease is a reset)
    "nxos_queuing": (
        (r"qg(?P<q>\d+)_uc_tx_pkts", "traffic", None, None),
        # WRED/AFD and tail drops, and the PFC watchdog's ("WD & Tail Drop") of the queue of qos-group q
        (r"qg(?P<q>\d+)_uc_(wred_afd_tail_drop|wd_tail_drop)_pkts", "drop", None, None),
        (r"port_(ingress_overflow|hi_priority|low_priority)_drop_pkts", "drop", None, None),
        # the slice's drops are of every port on it; the per-CoS PFC counts repeat `show interface
        # priority-flow-control detail` (nxos_pfc), which is the PFC read
        (r"qg\d+_.*|(cont|span)_qg\d+_.*|slice_.*|cos[0-7]_(tx|rx)_pause|(tx|rx)_ppp", "info", None, None),
    ),
    "nxos_pfc": (
        (r"pfc(?P<p>[0-7])_(rx|tx)_frames", "pfc_pause", None, None),
        (r"(rx|tx)_pfc_frames", "info", None, None),
    ),
    # EOS prints no counter width (None)
    "eos_pfc_detail": (
        (r"prio(?P<p>[0-7])\.(rx|tx)Frames", "pfc_pause", None, None),
    ),
    "nxos_pfcwd": (
        (r"qg(?P<q>\d+)_shutdown", "pause_storm", None, None),
        (r"qg(?P<q>\d+)_(total|aggregate)_(ingress_)?pkts_(drained|dropped|drained_dropped)", "drop", None, None),
        (r"qg\d+_.*", "info", None, None),
    ),
    # OS10 prints no counter width: None (a decrease is a reset)
    "os10_queuing": (
        (r"q(?P<q>\d+)_dropped_(packets|bytes)", "drop", None, None),
        (r"q(?P<q>\d+)_(packets|bytes)", "traffic", None, None),
    ),
}


def _no_table(fmt, command, text):
    """The problem of an output without the command's table, quoting its first line (a warning, an error)."""
    first = next((line.strip() for line in str(text).splitlines() if line.strip()), "")
    return "%s: no table in the output (not `%s`?)%s" % (fmt, command, ": %r" % first[:160] if first else "")


def _pair(cell):
    """``"12/3"`` as (12, 3); None where a side is not a whole number (``N/A``)."""
    left, sep, right = str(cell).partition("/")
    a, b = base.whole(left), base.whole(right)
    return (a, b) if sep and a is not None and b is not None else None


_PFCWD_COLUMNS = {"STORM DETECTED/RESTORED": ("storm_detected", "storm_restored"),
                  "TX OK/DROP": ("tx_ok", "tx_drop"), "RX OK/DROP": ("rx_ok", "rx_drop")}


def parse_sonic_pfcwd(text, port=None):
    """``show pfcwd stats``: one row per watched queue (``<port>:<queue>``), the cumulative ``a/b`` columns."""
    ports, problems = {}, []
    tables = base.tables(str(text))
    for headers, rows in tables:
        if headers[:1] != ["QUEUE"]:
            problems.append("sonic_pfcwd: a table headed %r is not QUEUE, STATUS..." % headers[0])
            continue
        for row in rows:
            where = re.match(r"^(\S+):(\d+)$", row[0])
            if not where:
                problems.append("sonic_pfcwd: %r is not <port>:<queue>" % row[0][:80])
                continue
            counters = ports.setdefault(where.group(1), {})
            for head, cell in zip(headers[1:], row[1:]):
                names = _PFCWD_COLUMNS.get(" ".join(head.split()))
                if names is None:
                    continue  # STATUS, and the LAST columns: the latest storm only
                values = _pair(cell)
                if values is None:
                    problems.append("sonic_pfcwd: %s %s holds %r, not two counters" % (row[0], head, cell[:40]))
                    continue
                for name, value in zip(names, values):
                    counters["q%s_%s" % (where.group(2), name)] = value
    if not tables:
        problems.append(_no_table("sonic_pfcwd", "show pfcwd stats", text))
    elif port is not None and port not in ports:
        # the table was printed without the port: each of its queues read 0/0 (left out without -e), or it has none
        problems.append("sonic_pfcwd: port %s is not in the output: without -e none of its queues counted anything, "
                        "or the port has no queue" % port)
        ports[port] = {}
    return base.new_counters("sonic_pfcwd", base.only_port(ports, port, "sonic_pfcwd", problems),
                             problems)


def _pg_table(text, port, fmt, command, suffix, number=base.whole):
    """A SONiC per-PG table (``Port`` then ``PG<n>`` columns; ``N/A``: not reported) as ``pg<n>_<suffix>``. A multi-ASIC
    read prints one table a namespace, each under its title line (``... per PG: (Namespace asic1)``) with no blank
    line between: the text is cut at each title, so no title, header or dashes line is read as a row of the table
    above it."""
    ports, problems, below = {}, [], []
    # one table a title (``Ingress PG dropped packets:``, ``Ingress headroom per PG: (Namespace asic1)``): read apart
    sections = re.split(r"(?m)^(?=[A-Za-z][^\n]*:(?: \(Namespace [^)\n]*\))?[ \t]*$)", str(text))
    tables = [table for section in sections for table in base.tables(section)]
    for headers, rows in tables:
        if headers[:1] != ["Port"] or not all(re.match(r"^PG\d+$", h) for h in headers[1:]):
            problems.append("%s: a table headed %r is not Port, PG0..." % (fmt, " ".join(headers[:2])))
            continue
        for row in rows:
            counters = ports.setdefault(row[0], {})
            for head, cell in zip(headers[1:], row[1:]):
                value = number(cell)
                if value is not None:
                    counters["%s_%s" % (head.lower(), suffix)] = value
                    below.extend([(row[0], head, value)] if value < 0 else [])
                elif cell.strip() != "N/A":
                    problems.append("%s: %s %s holds %r, not a counter" % (fmt, row[0], head, cell[:40]))
    if below:
        problems.append("%s: %s read below 0: the tool's baseline (the last `sonic-clear`, per user) is newer than "
                        "the counter, which restarted since (a config reload, a syncd restart); read as printed, "
                        "the delta between two reads still counts, and a read that goes lower is a reset"
                        % (fmt, ", ".join("%s %s %s" % (p, h, format(v, ",")) for p, h, v in below[:4])))
    if not tables:
        problems.append(_no_table(fmt, command, text))
    return base.new_counters(fmt, base.only_port(ports, port, fmt, problems), problems)


def parse_sonic_pg_drop(text, port=None):
    """``show priority-group drop counters``: ``Port`` then ``PG<n>`` columns, dropped packets. ``scripts/pg-drop``
    prints ``counter - baseline`` (the baseline ``-c`` saved per user in ``UserCache``) without clamping at 0, unlike
    ``netstat.ns_diff`` of pfcstat and queuestat: a baseline saved before the counter restarted (a config reload
    keeps /tmp) prints below 0. Such a cell is read as the signed value it is (one problem line names it): it still
    moves by the packets dropped, and one that went lower between the reads is a reset (``load_verdict``)."""
    return _pg_table(text, port, "sonic_pg_drop", "show priority-group drop counters", "drop_pkts", base.signed)


def parse_sonic_pg_headroom(text, port=None):
    """``show priority-group persistent-watermark headroom`` (``scripts/watermarkstat``, ``Ingress headroom per
    PG:``): the most headroom bytes each PG has held since the watermark was last cleared (never by this
    collection), ``SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_WATERMARK_BYTES``."""
    return _pg_table(text, port, "sonic_pg_headroom", "show priority-group persistent-watermark headroom",
                     "headroom_bytes")


def parse_linux_ethtool(text, port=None):
    """``ethtool -S <port>`` of a switch port: the ``name: value`` lines as :func:`counters_parse.parse_ethtool`
    reads them, under this format."""
    facts = base.parse_ethtool(str(text), port=port)
    return base.new_counters("linux_ethtool", facts["ports"],
                             [p.replace("ethtool_mlx5:", "linux_ethtool:", 1) for p in facts["problems"]])


# ----------------------------------------------------------------------------- Cisco NX-OS
# Read as words, not lines: the one published capture found (ORIGIN.md) is stored with its line breaks lost, and the
# layout's boxes and tables are told apart by their labels (``QOS GROUP <g>``, ``Per Port Ingress Statistics``,
# ``PFC_COS``...), wherever the lines break.

_NUM = r"(\d[\d,]*)"


def _slug(label):
    return "_".join(re.sub(r"[^a-z0-9]+", " ", label.lower()).split())


def parse_nxos_queuing(text, port=None):
    """``show queuing interface <port>`` (Nexus 9000, one port a command): per ``QOS GROUP <g>`` box the unicast and
    multicast columns of each row (``Tx Pkts``, ``WRED/AFD & Tail Drop Pkts``, ``WD & Tail Drop Pkts``...) as
    ``qg<g>_uc_<row>``/``qg<g>_mc_<row>``; the ingress part's ``Per Port Ingress Statistics`` (``port_<row>``) and
    ``Per Slice`` (``slice_<row>``); its PFC table per CoS (``cos<c>_tx_pause``, ``cos<c>_rx_pause``) and ``TxPPP``,
    ``RxPPP``."""
    text = str(text)
    counters, problems = {}, []
    ingress = re.search(r"Ingress Queuing for", text)
    egress = text[:ingress.start()] if ingress else text
    # a box titled CONTROL or SPAN QOS GROUP is the switch's own traffic or a mirror's, not a data class
    boxes = re.split(r"(CONTROL |SPAN )?QOS GROUP (\d+)", egress)
    for kind, group, box in zip(boxes[1::3], boxes[2::3], boxes[3::3]):
        prefix = "%sqg%s" % ((kind or "").strip().lower()[:4] + "_" if kind else "", group)
        for label, ucast, mcast in re.findall(r"\|\s*([A-Za-z][A-Za-z/& ]*?)\s*\|\s*%s\s*\|\s*%s\s*\|" % (_NUM, _NUM), box):
            counters["%s_uc_%s" % (prefix, _slug(label))] = base.whole(ucast)
            counters["%s_mc_%s" % (prefix, _slug(label))] = base.whole(mcast)
    rest = text[ingress.start():] if ingress else ""
    for scope, start, end in (("port", "Per Port Ingress Statistics", "Per Slice"),
                              ("slice", "Per Slice Ingress Statistics", "PFC Statistics")):
        part = re.search(r"%s(.*?)(?=%s|$)" % (re.escape(start), re.escape(end)), rest, re.S)
        for label, value in re.findall(r"([A-Za-z][A-Za-z ]*?Drop Pkts)\s+%s" % _NUM, part.group(1) if part else ""):
            counters["%s_%s" % (scope, _slug(label))] = base.whole(value)
    ppp = re.search(r"TxPPP:\s*%s,\s*RxPPP:\s*%s" % (_NUM, _NUM), rest)
    if ppp:
        counters["tx_ppp"], counters["rx_ppp"] = base.whole(ppp.group(1)), base.whole(ppp.group(2))
    for cos, _group, _tx_state, tx, _rx_state, rx in re.findall(
            r"(?<![\d,])([0-7])\s+(\d+)\s+(Active|Inactive)\s+%s\s+(Active|Inactive)\s+%s" % (_NUM, _NUM), rest):
        counters["cos%s_tx_pause" % cos] = base.whole(tx)
        counters["cos%s_rx_pause" % cos] = base.whole(rx)
    if not counters:
        problems.append("nxos_queuing: no QOS GROUP box and no ingress statistics in the output (not `show queuing "
                        "interface <port>`?)%s" % (": %r" % text.strip()[:160] if text.strip() else ""))
        return base.new_counters("nxos_queuing", problems=problems)
    return base.new_counters("nxos_queuing", {port or base.DEFAULT_PORT: counters}, problems)


def parse_nxos_pfc(text, port=None):
    """``show interface priority-flow-control detail``: per port (``Ethernet<s>/<p>``, then ``Admin Mode:``) the
    ``Total Rx/Tx PFC Frames`` and the ``Rx``/``Tx`` rows of the ``Priority0``..``Priority7`` table."""
    text = str(text)
    ports, problems = {}, []
    heads = list(re.finditer(r"(Ethernet\d+/\d+(?:/\d+)?)\s+Admin Mode:", text))
    for index, head in enumerate(heads):
        block = text[head.end():heads[index + 1].start() if index + 1 < len(heads) else len(text)]
        counters = ports.setdefault(head.group(1), {})
        for direction in ("Rx", "Tx"):
            total = re.search(r"Total %s PFC Frames:\s*%s" % (direction, _NUM), block)
            if total:
                counters["%s_pfc_frames" % direction.lower()] = base.whole(total.group(1))
            row = re.search(r"(?<![A-Za-z])%s\s*\|(.*?)(?=-{5}|(?<![A-Za-z])[RT]x\s*\||$)" % direction, block, re.S)
            cells = row.group(1).split("|") if row else []
            for prio, cell in enumerate(cells[:8]):
                value = re.match(r"\s*(\d[\d,]*)", cell)
                if value:
                    counters["pfc%d_%s_frames" % (prio, direction.lower())] = base.whole(value.group(1))
                elif cell.strip():
                    problems.append("nxos_pfc: %s %s priority %d holds %r, not a counter" % (
                        head.group(1), direction, prio, cell.strip()[:40]))
    if not heads:
        problems.append("nxos_pfc: no port in the output (not `show interface priority-flow-control detail`?)%s"
                        % (": %r" % text.strip()[:160] if text.strip() else ""))
    return base.new_counters("nxos_pfc", base.only_port(ports, port, "nxos_pfc", problems), problems)


def parse_nxos_pfcwd(text, port=None):
    """``show queuing pfc-queue detail``: per ``<port> Interface PFC watchdog:`` line, each ``| QOS GROUP <g> ...``
    box's ``| <label>| <value>|`` rows as ``qg<g>_<label>``. A port without a box (the watchdog off on it) is not
    reported."""
    ports, problems = {}, []
    current, group, seen = None, None, False
    for line in str(text).splitlines():
        head = re.match(r"^\s*(\S+)\s+Interface PFC watchdog:", line)
        if head:
            current, group, seen = head.group(1), None, True
            continue
        box = re.match(r"^\|\s*QOS GROUP\s+(\d+)\b", line)
        if box and current is not None:
            group = box.group(1)
            continue
        row = re.match(r"^\|([^|]*)\|([^|]*)\|\s*$", line)
        if not row or current is None or group is None or not row.group(1).strip():
            continue
        value = base.whole(row.group(2))
        if value is None:
            if row.group(2).strip() and row.group(2).strip() != "Stats":
                problems.append("nxos_pfcwd: %s QOS GROUP %s %s holds %r, not a counter" % (
                    current, group, row.group(1).strip(), row.group(2).strip()[:40]))
            continue
        ports.setdefault(current, {})["qg%s_%s" % (group, _slug(row.group(1)))] = value
    if not seen:
        problems.append("nxos_pfcwd: no port in the output (not `show queuing pfc-queue detail`?)%s"
                        % (": %r" % str(text).strip()[:160] if str(text).strip() else ""))
    return base.new_counters("nxos_pfcwd", base.only_port(ports, port, "nxos_pfcwd", problems), problems)


# ----------------------------------------------------------------------------- Arista EOS

def parse_eos_pfc_detail(data, port=None):
    """``show interface <port> priority-flow-control counters detail | json`` (text, the mapping, or eAPI's
    one-element result list): ``interfaces`` -> port -> ``priorities`` -> priority -> counters, as ``prio<p>.<key>``."""
    problems, ports = [], {}
    if isinstance(data, str) and not data.lstrip().startswith(("{", "[")):
        # not the command's JSON: the switch's own line (an error, a refused command), quoted
        return base.new_counters("eos_pfc_detail", problems=["eos_pfc_detail: not JSON: %r" % (
            next((line.strip() for line in data.splitlines() if line.strip()), "")[:200])])
    doc = base.json_doc(data, "eos_pfc_detail", problems)
    if doc is not None:
        table = doc.get("interfaces")
        if not isinstance(table, dict):
            problems.append("eos_pfc_detail: no interfaces (not `show interface <port> priority-flow-control counters "
                            "detail | json`?)")
        else:
            for name, intf in table.items():
                counters = ports.setdefault(name, {})
                for prio, values in ((intf or {}).get("priorities") or {}).items():
                    base.flat(values if isinstance(values, dict) else {}, "prio%s" % prio, counters)
    return base.new_counters("eos_pfc_detail", base.only_port(ports, port, "eos_pfc_detail", problems), problems)


# ----------------------------------------------------------------------------- NVIDIA Cumulus (NVUE) JSON

NV_JSON_SECTIONS = ("ingress-buffer-stats", "egress-queue-stats", "pfc-stats", "port-stats")


def parse_nvue_qos_json(data, port=None):
    """``nv show interface <if> counters qos -o json`` (text or the parsed mapping): ``{section: {row: {column:
    value}}}``, read to the names of the text form (``<section>.<row>.<column>``); ``n/a``, ``-`` or an empty value
    is not reported."""
    problems, counters = [], {}
    doc = data
    if not isinstance(doc, dict):
        try:
            doc = json.loads(str(data))
        except ValueError as exc:
            problems.append("nvue_qos: not JSON (%s); run the command with -o json" % str(exc).split(":", maxsplit=1)[0])
            return base.new_counters("nvue_qos", problems=problems)
    if not isinstance(doc, dict):
        what = type(doc).__name__
        return base.new_counters("nvue_qos", problems=["nvue_qos: the JSON is a %s, not the command's object" % what])
    for section, rows in sorted(doc.items()):
        if section not in NV_JSON_SECTIONS or not isinstance(rows, dict):
            problems.append("nvue_qos: %r is not a QoS counters section (%s)" % (str(section)[:40], ", ".join(
                NV_JSON_SECTIONS)))
            continue
        for row, columns in sorted(rows.items()):
            for column, value in sorted((columns if isinstance(columns, dict) else {}).items()):
                number = base.number(value) if not isinstance(value, str) else base.nv_value(value)
                if number is not None:
                    counters["%s.%s.%s" % (section, base.nv_name(str(row)), base.nv_name(str(column)))] = number
                elif str(value).strip().lower() not in ("n/a", "", "-", "none"):
                    problems.append("nvue_qos: %s %s %s holds %r, not a counter" % (section, row, column, str(value)[:40]))
    if not counters:
        problems.append("nvue_qos: no counter in the JSON (not `nv show interface <if> counters qos -o json`?)")
        return base.new_counters("nvue_qos", problems=problems)
    return base.new_counters("nvue_qos", {port or base.DEFAULT_PORT: counters}, problems)


# ----------------------------------------------------------------------------- Dell OS10

_OS10_PROMPT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\([^)\s]*\))?#(\s.*)?$")  # host# or host(conf)#, the echo after it


def parse_os10_queuing(text, port=None):
    """``show queuing statistics interface ethernet <port>`` (one port a command): ``Interface <port>``, the header
    ``Queue Packets Bytes Dropped-Packets Dropped-Bytes`` and one row of whole numbers per queue, columns apart by
    spaces. A port named in the output that is not ``port`` (when given) is a problem, not read under ``port``."""
    ports, problems = {}, []
    current, columns = None, None
    for line in str(text).splitlines():
        words = line.split()
        if not words or _OS10_PROMPT.match(line.strip()):
            continue
        if words[0] == "Interface" and len(words) == 2:
            current, columns = ports.setdefault(words[1], {}), None
            continue
        if words[0] == "Queue" and current is not None:
            columns = [_slug(word) for word in words[1:]]
            continue
        values = [base.whole(word) for word in words]
        if columns is None or len(words) != len(columns) + 1 or None in values:
            problems.append("os10_queuing: cannot read the line %r" % line.strip()[:120])
            continue
        for column, value in zip(columns, values[1:]):
            current["q%d_%s" % (values[0], column)] = value
    if not any(ports.values()):
        problems.append("os10_queuing: no queue table in the output (not `show queuing statistics interface ethernet "
                        "<port>`?)%s" % (": %r" % str(text).strip()[:160] if str(text).strip() else ""))
        return base.new_counters("os10_queuing", problems=problems)
    if port is not None and list(ports) != [port]:
        problems.append("os10_queuing: the output is of %s, not of %s" % (", ".join(sorted(ports)), port))
        return base.new_counters("os10_queuing", problems=problems)
    return base.new_counters("os10_queuing", ports, problems)


# ----------------------------------------------------------------------------- configured poll intervals

def parse_sonic_counterpoll(text):
    """``counterpoll show`` (sonic-utilities ``counterpoll/main.py``): ``Type``, ``Interval (in ms)``, ``Status``, one
    flex counter group a row; the interval a number when configured, ``default (<ms>)`` when not. Returns
    ``({group: {"interval_ms", "configured", "enabled"}}, problems)``."""
    groups, problems = {}, []
    tables = base.tables(str(text))
    for headers, rows in tables:
        if headers[:1] != ["Type"]:
            problems.append("counterpoll: a table headed %r is not Type, Interval, Status" % headers[0])
            continue
        for row in rows:
            if len(row) < 3:
                continue
            cell = row[1].strip()
            match = re.match(r"^(?:(default)\s*\()?\s*(\d+)\s*\)?$", cell)
            if not match:
                problems.append("counterpoll: %s interval %r is not milliseconds" % (row[0], cell[:40]))
                continue
            groups[row[0]] = {"interval_ms": int(match.group(2)), "configured": match.group(1) is None,
                              "enabled": row[2].strip().lower() == "enable"}
    if not tables:
        problems.append(_no_table("counterpoll", "counterpoll show", text))
    return groups, problems


def whole_seconds(millis):
    """``millis`` milliseconds as whole seconds, rounded up: a wait shorter than the poll would read before it."""
    return -(-int(millis) // 1000)


def parse_switchd_poll(text):
    """``stats.poll_interval`` (milliseconds) of Cumulus's ``/etc/cumulus/switchd.conf`` (``key = value`` lines, ``#``
    comments: a commented line is the default, not a setting). Returns ``(milliseconds or None, problems)``."""
    value, problems = None, []
    for line in str(text).splitlines():
        match = re.match(r"^\s*stats\.poll_interval\s*=\s*(\S+)\s*$", line)
        if match:
            number = base.whole(match.group(1))
            if number is None:
                problems.append("switchd.conf: stats.poll_interval = %r is not milliseconds" % match.group(1)[:40])
            else:
                value = number
    return value, problems


NOS_PARSERS = {
    "sonic_pfcwd": parse_sonic_pfcwd,
    "sonic_pg_drop": parse_sonic_pg_drop,
    "sonic_pg_headroom": parse_sonic_pg_headroom,
    "linux_ethtool": parse_linux_ethtool,
    "nxos_queuing": parse_nxos_queuing,
    "nxos_pfc": parse_nxos_pfc,
    "nxos_pfcwd": parse_nxos_pfcwd,
    "eos_pfc_detail": parse_eos_pfc_detail,
    "os10_queuing": parse_os10_queuing,
}
