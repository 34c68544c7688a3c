# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Linux switch: what this collection knows about it, in one module (see :mod:`platforms`).

``platform: linux`` is a ToR whose ports are Linux network devices managed with iproute2 and no NOS CLI on top: a
software bridge (a lab, a hypervisor's bridge, a ToR emulated in a network namespace) or a switchdev ASIC driven by
the upstream kernel (mlxsw on NVIDIA Spectrum). On mlxsw the netdev's statistics are the ASIC port's IEEE 802.3
counters (frames, octets, FCS, alignment and length errors: ``mlxsw_sp_port_get_hw_stats``), with no buffer discard
among them, and a qdisc's statistics are the ASIC's only where that qdisc is offloaded (prio, ets, red, tbf...: the
traffic class's tail and WRED drops, ``spectrum_qdisc.c``); the ASIC's congestion drops of a port without an offloaded
qdisc are in neither read but in ``ethtool -S <port>`` (``tc_no_buffer_discard_uc_tc_<n>``, read below), and the driver
refreshes these statistics once a second (``MLXSW_HW_STATS_UPDATE_TIME``).

It is **read-only** and **counters only** here: nothing renders, diffs or pushes its configuration (``EXTENSION``,
``PUSH`` None), and the lossless check does not read its QoS configuration (``QOS_FORMAT`` None, no ``READ``): its
links are "not checked" in the agreement report unless a configuration is given. The load test reads its counters
over its own Ansible connection (SSH, or any connection that runs a command on it), read-only:

* ``ip -s -s -j link show`` (format ``linux_link``): every interface's ``rtnl_link_stats64`` (drops, errors, packets);
* ``tc -s -j qdisc show`` (format ``linux_qdisc``): every queueing discipline's statistics. A frame the port's qdisc
  drops (a full queue, a policer, a filter's drop) never reaches the device, so the link's ``tx_dropped`` misses it;
  the qdisc's ``drops`` counts it;
* ``ethtool -S <port>`` for each port of the step's links (format ``linux_ethtool``): on mlxsw the ASIC's per traffic
  class no-buffer discards, per-priority PFC pauses and the port's discard group (``qos/counters_parse_nos.py``); a
  port whose driver prints no statistics is read as its error line, reported, never judged clean.

The first two tell no priorities apart (a qdisc per priority would, where a switchdev offloads one; not read here):
their drops count against every class of the port. Both print every port; the verdict keeps the link's.

**Ports.** Any Linux interface name (``IFNAMSIZ``: at most 15 bytes; not ``.`` or ``..``; no ``/``, ``:`` or
whitespace: ``dev_valid_name`` in ``net/core/dev.c``, whose ``isspace`` is the kernel's own, byte by byte:
``lib/ctype.c`` counts bytes 9-13, 32 and 160, and 0xA0 is the second byte of UTF-8 letters such as U+00E0; and no
``%``, which makes the name a template the kernel numbers, ``swp%d`` -> ``swp0``: ``dev_get_valid_name``); switchdev
ports are usually ``swp<n>`` (the default template).
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.common import linux_names
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import PushError, read_command

NAME = "linux"
TITLE = "Linux (bridge or switchdev)"
QOS_FORMAT = None
EXTENSION = None
RUNNING_EXTENSIONS = ()
PORT_TEMPLATE = "swp{node}"
PORT_MTU = 9216
PORT_MTU_MAX = 9216
PORT_NAME = "a Linux interface name (1-15 bytes; no '/', ':', '%' or whitespace)"
PORT_NAME_RE = re.compile(r"^[^/:%\s]{1,15}\Z")
PUSH = None
HTTP_PORT = None


def invalid_ports(names):
    """The names in ``names`` that the kernel refuses as an interface name."""
    return [name for name in names if not PORT_NAME_RE.match(name) or not linux_names.kernel_ifname_ok(name)]


# ----------------------------------------------------------------------------- counters (the load test)

COUNTER_READ = ("ssh",)
# A software bridge counts as it forwards; a switchdev driver may cache the ASIC's counters (mlxsw refreshes its port
# statistics once a second): the load test waits this long before its read after the load.
COUNTER_SETTLE = 1
COUNTER_COMMANDS = (("linux_link", ("ip", "-s", "-s", "-j", "link", "show")),
                    ("linux_qdisc", ("tc", "-s", "-j", "qdisc", "show")),
                    ("linux_ethtool", ("ethtool", "-S", "{port}")))

# The reads that count a port's drops (load_verdict: one not read leaves the class inconclusive). ``ethtool -S`` of a
# port that prints no per-class discard counter (a veth of a software bridge) was read: the port has no such stage,
# its drops are the qdisc's and the link's; an ethtool that fails is an unread stage.
DROP_STAGES = {"linux_link": "`ip -s -s -j link show` (iproute2 with JSON)",
               "linux_qdisc": "`tc -s -j qdisc show` (iproute2 4.15 or later)",
               "linux_ethtool": "`ethtool -S <port>` on the switch (a driver that prints statistics)"}


def read_counters(connection, via, ports=None):
    """``{format: output}`` of the switch's interface and qdisc statistics (JSON text) and of each of ``ports``'s
    ``ethtool -S`` (``{port: text}``, absent without ports) (``COUNTER_COMMANDS``) over its connection (``via``
    ``"ssh"``, ``connection`` ``run(argv, data=None) -> (rc, stdout, stderr)``). Reads only; ValueError before anything
    runs on a port name the kernel refuses; :class:`PushError` naming the command when ``ip`` or ``tc`` fails."""
    if via != "ssh":
        raise ValueError("Linux switch counters are read over its connection (ssh), not %r" % (via,))
    bad = invalid_ports(ports or ())
    if bad:
        raise ValueError("%s: not a Linux interface name (%s)" % (", ".join(bad), PORT_NAME))
    out = {}
    for fmt, command in COUNTER_COMMANDS:
        if "{port}" not in command:
            out[fmt] = read_command(connection, command)
            continue
        # one port a command (ethtool -S); a port whose driver has no statistics (ethtool fails) is that line,
        # which the parser reports: the ASIC's per-class discards are then not reported for it, never 0
        if not ports:
            continue
        out[fmt] = {}
        for port in sorted(set(ports or ())):
            try:
                out[fmt][port] = read_command(connection, tuple(port if w == "{port}" else w for w in command))
            except PushError as exc:
                out[fmt][port] = str(exc)
    return out
