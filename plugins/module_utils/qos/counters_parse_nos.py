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
  that queue; the packets its drop action discarded are ``drop``. Only queues with the watchdog on are printed: a
  port without it is not in the output (its storms are *not reported*, never 0).
* ``sonic_pg_drop`` -- SONiC ``show priority-group drop counters`` (``scripts/pg-drop``: ``Ingress PG dropped
  packets:`` then a table ``Port``, ``PG0``..``PG7``; ``SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS``, ``N/A``
  where COUNTERS_DB has none). Named ``pg<n>_drop_pkts``: packets the switch dropped at *ingress* for want of buffer
  (headroom too small for the cable and the pause response, PFC sent too late), which the egress queue counters
  never see. A priority group is not a switch priority (the ``PFC_PRIORITY_TO_PRIORITY_GROUP_MAP`` decides, not
  read here): a PG drop counts against every class of the port.
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

Every counter keeps its source's name, and one the source does not print is absent (*not reported*).
"""

from __future__ import annotations

import re

NOS_SIDES = {"sonic_pfcwd": "switch", "sonic_pg_drop": "switch", "linux_ethtool": "switch"}
NOS_ONE_PORT_FORMATS = ("linux_ethtool",)
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
}


def _no_table(fmt, command, text):
    """The problem of an output without the command's table, quoting its first line (a warning, an error)."""
    first = next((line.strip() for line in str(text).splitlines() if line.strip()), "")
    return "%s: no table in the output (not `%s`?)%s" % (fmt, command, ": %r" % first[:160] if first else "")


def _pair(cell):
    """``"12/3"`` as (12, 3); None where a side is not a whole number (``N/A``)."""
    left, sep, right = str(cell).partition("/")
    a, b = base._int(left), base._int(right)  # pylint: disable=protected-access
    return (a, b) if sep and a is not None and b is not None else None


_PFCWD_COLUMNS = {"STORM DETECTED/RESTORED": ("storm_detected", "storm_restored"),
                  "TX OK/DROP": ("tx_ok", "tx_drop"), "RX OK/DROP": ("rx_ok", "rx_drop")}


def parse_sonic_pfcwd(text, port=None):
    """``show pfcwd stats``: one row per watched queue (``<port>:<queue>``), the cumulative ``a/b`` columns."""
    ports, problems = {}, []
    tables = base._tables(str(text))  # pylint: disable=protected-access
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
    return base.new_counters("sonic_pfcwd", base._only(ports, port, "sonic_pfcwd", problems),  # pylint: disable=protected-access
                             problems)


def parse_sonic_pg_drop(text, port=None):
    """``show priority-group drop counters``: ``Port`` then ``PG<n>`` columns (``N/A``: not reported)."""
    ports, problems = {}, []
    tables = base._tables(str(text))  # pylint: disable=protected-access
    for headers, rows in tables:
        if headers[:1] != ["Port"] or not all(re.match(r"^PG\d+$", h) for h in headers[1:]):
            problems.append("sonic_pg_drop: a table headed %r is not Port, PG0..." % " ".join(headers[:2]))
            continue
        for row in rows:
            counters = ports.setdefault(row[0], {})
            for head, cell in zip(headers[1:], row[1:]):
                value = base._int(cell)  # pylint: disable=protected-access
                if value is not None:
                    counters["%s_drop_pkts" % head.lower()] = value
                elif cell.strip() != "N/A":
                    problems.append("sonic_pg_drop: %s %s holds %r, not a counter" % (row[0], head, cell[:40]))
    if not tables:
        problems.append(_no_table("sonic_pg_drop", "show priority-group drop counters", text))
    return base.new_counters("sonic_pg_drop", base._only(ports, port, "sonic_pg_drop", problems),  # pylint: disable=protected-access
                             problems)


def parse_linux_ethtool(text, port=None):
    """``ethtool -S <port>`` of a switch port: the ``name: value`` lines as :func:`counters_parse.parse_ethtool`
    reads them, under this format."""
    facts = base.parse_ethtool(str(text), port=port)
    return base.new_counters("linux_ethtool", facts["ports"],
                             [p.replace("ethtool_mlx5:", "linux_ethtool:", 1) for p in facts["problems"]])


# ----------------------------------------------------------------------------- configured poll intervals

def parse_sonic_counterpoll(text):
    """``counterpoll show`` (sonic-utilities ``counterpoll/main.py``): ``Type``, ``Interval (in ms)``, ``Status``, one
    flex counter group a row; the interval a number when configured, ``default (<ms>)`` when not. Returns
    ``({group: {"interval_ms", "configured", "enabled"}}, problems)``."""
    groups, problems = {}, []
    tables = base._tables(str(text))  # pylint: disable=protected-access
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


def parse_switchd_poll(text):
    """``stats.poll_interval`` (milliseconds) of Cumulus's ``/etc/cumulus/switchd.conf`` (``key = value`` lines, ``#``
    comments: a commented line is the default, not a setting). Returns ``(milliseconds or None, problems)``."""
    value, problems = None, []
    for line in str(text).splitlines():
        match = re.match(r"^\s*stats\.poll_interval\s*=\s*(\S+)\s*$", line)
        if match:
            number = base._int(match.group(1))  # pylint: disable=protected-access
            if number is None:
                problems.append("switchd.conf: stats.poll_interval = %r is not milliseconds" % match.group(1)[:40])
            else:
                value = number
    return value, problems


NOS_PARSERS = {
    "sonic_pfcwd": parse_sonic_pfcwd,
    "sonic_pg_drop": parse_sonic_pg_drop,
    "linux_ethtool": parse_linux_ethtool,
}

# Last: counters_parse imports this module (above it) to register the formats, and this one uses its helpers when a
# parser runs; imported here, either module can be imported first.
from ansible_collections.ainet.fabric.plugins.module_utils.qos import counters_parse as base  # noqa: E402  pylint: disable=wrong-import-position
