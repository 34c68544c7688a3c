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
