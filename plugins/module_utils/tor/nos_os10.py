# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Dell OS10: what this collection knows about the NOS, in one module (see :mod:`platforms`).

OS10 is **read-only** here: the lossless check reads an OS10 running configuration with ``parse_qos``
format ``os10`` (:mod:`qos_parse_os10`), nothing renders, diffs or pushes one (``EXTENSION`` None,
``PUSH`` None). A ToR with ``platform: os10`` is listed as skipped by ``tor_config``.

**Read** (the lossless check, :mod:`tor_read`): ``show running-configuration`` over the switch's own Ansible
connection (``ansible.netcommon.network_cli`` with ``ansible_network_os: dellemc.os10.os10``, or SSH where the
login lands in the OS10 CLI); OS10 has no API this collection uses.

**Counters** (the load test, :func:`read_counters`): ``show queuing statistics interface ethernet <port>`` once per
port of the step's links, over the same connection (format ``os10_queuing`` in ``qos/counters_parse_nos.py``: packets,
bytes and drops per egress queue). OS10's per-priority PFC counters are not read (no sample of their layout was
found; docs/lossless-qos.md, "Every drop and pause counter, per NOS").

**Ports.** OS10 names front-panel ports ``ethernet<node>/<slot>/<port>`` and breakout ports
``ethernet<node>/<slot>/<port>:<n>`` (Dell OS10 user guide, "Interfaces"; the names the OS10 parser
reads); port MTU up to 9216.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import read_command

NAME = "os10"
TITLE = "Dell OS10"
QOS_FORMAT = "os10"
EXTENSION = None
RUNNING_EXTENSIONS = (".cfg", ".conf", ".txt")
PORT_TEMPLATE = "ethernet1/1/{node}"
PORT_MTU = 9216
PORT_MTU_MAX = 9216
PORT_NAME = "ethernet<n>/<n>/<n>[:<n>]"
PORT_NAME_RE = re.compile(r"^ethernet[0-9]+/[0-9]+/[0-9]+(:[0-9]+)?\Z")
PUSH = None
HTTP_PORT = None


def invalid_ports(names):
    """The names in ``names`` that are not OS10 Ethernet port names."""
    return [name for name in names if not PORT_NAME_RE.match(name)]


# ----------------------------------------------------------------------------- read (the lossless check)

# How the lossless check reads the switch (tor/tor_read.py): over its own connection.
READ = ("ssh",)
READ_COMMAND = ("show", "running-configuration")


def read(connection, via):
    """The running configuration (CLI text, what ``parse_qos`` reads as ``os10``): ``show running-configuration``;
    ``via`` ``"ssh"``, ``connection`` ``run(argv, data=None) -> (rc, stdout, stderr)`` on the switch. Reads only;
    :class:`PushError` when it fails."""
    if via != "ssh":
        raise ValueError("OS10 is read over its connection (ssh), not %r" % (via,))
    return read_command(connection, READ_COMMAND)


# ----------------------------------------------------------------------------- counters (the load test)

# The load test's counters (qos/counters_parse_nos.py format ``os10_queuing``), read-only, over the connection the
# configuration is read on. ``show queuing statistics interface ethernet <n>/<n>/<n>`` prints one port's egress queues
# (packets, bytes, dropped packets and bytes); it runs once per port of the step's links, the port given as the CLI
# takes it, ``ethernet`` then its number (``{port}`` below stands for those two words). Layout and command: a recorded
# read of two OS10 switches (tests/unit/plugins/module_utils/data/counters/ORIGIN.md). How often OS10 refreshes them
# is not documented: no settle (0).
COUNTER_READ = ("ssh",)
COUNTER_COMMANDS = (("os10_queuing", ("show", "queuing", "statistics", "interface", "{port}")),)
# The reads that count drops (load_verdict: one not read leaves the class inconclusive), with how to read them.
DROP_STAGES = {"os10_queuing": "`show queuing statistics interface ethernet <port>`"}


def _port_words(port):
    """``ethernet1/1/4`` as the two words the CLI takes, ``("ethernet", "1/1/4")``."""
    return ("ethernet", port[len("ethernet"):])


def read_counters(connection, via, ports=None):
    """``{"os10_queuing": {port: text}}`` of each of ``ports`` (``COUNTER_COMMANDS``, one run per port) over the
    switch's connection (``via`` ``"ssh"``, ``connection`` as for :func:`read`). ValueError before anything runs when
    no port is given or one is not an OS10 port name; :class:`PushError` naming the command when one fails. Reads
    only."""
    if via not in COUNTER_READ:
        raise ValueError("OS10 counters are read over its connection (ssh), not %r" % (via,))
    ports = sorted(set(ports or ()))
    if not ports:
        raise ValueError("OS10 prints a port's queuing counters a command: give the ports to read")
    bad = invalid_ports(ports)
    if bad:
        raise ValueError("%s: not a %s port name (%s)" % (", ".join(bad), TITLE, PORT_NAME))
    out = {}
    for fmt, command in COUNTER_COMMANDS:
        out[fmt] = dict((port, read_command(connection, tuple(
            word for w in command for word in (_port_words(port) if w == "{port}" else (w,))))) for port in ports)
    return out
