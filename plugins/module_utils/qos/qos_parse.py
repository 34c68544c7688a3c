# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One entry point for every QoS parser: ``parse_qos(text, fmt)`` -> QoS facts (:mod:`qos_facts`).

Each parser lives in its own module (``qos_parse_host``, ``qos_parse_sonic``, ``qos_parse_nvue``,
``qos_parse_eos``, ``qos_parse_nxos``, ``qos_parse_os10``); they are imported statically, so that
every import edge is visible (AnsiballZ packs only what it sees, and the import-graph test reads it).
Which format a ToR's ``platform`` is read with is the ToR platform registry's (``tor/platforms.py``,
``qos_format``): the qos wing sits below the tor wing and does not know platforms.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.qos import (
    qos_parse_eos, qos_parse_host, qos_parse_nvue, qos_parse_nxos, qos_parse_os10, qos_parse_sonic)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import new_facts

PARSERS = {
    "mlnx_qos": qos_parse_host.parse_mlnx_qos,
    "dcb": qos_parse_host.parse_dcb,
    "sysfs": qos_parse_host.parse_sysfs,
    "sonic_config_db": qos_parse_sonic.parse_sonic_config_db,
    "nvue": qos_parse_nvue.parse_nvue,
    "nvue_roce": qos_parse_nvue.parse_nvue_roce,
    "eos": qos_parse_eos.parse_eos,
    "nxos": qos_parse_nxos.parse_nxos,
    "os10": qos_parse_os10.parse_os10,
}
HOST_FORMATS = ("mlnx_qos", "dcb", "sysfs")


def parser(fmt):
    """The parse function of ``fmt``; ValueError naming the formats when unknown."""
    if fmt not in PARSERS:
        raise ValueError("%r is not a QoS format; use one of: %s" % (fmt, ", ".join(sorted(PARSERS))))
    return PARSERS[fmt]


def parse_qos(text, fmt, port=None):
    """Parse ``text`` (or, for ``sysfs``, a {path: content} mapping) in format ``fmt``.

    ``port`` names the one port of a host tool's output (its interface). Never raises on bad input: what a
    parser could not read is a line in the facts' ``problems``, with no ports."""
    func = parser(fmt)
    if text is None:
        return new_facts(fmt, problems=["no %s output to parse" % fmt])
    try:
        if fmt in HOST_FORMATS:
            return func(text, port=port)
        return func(text)
    except Exception as exc:  # pylint: disable=broad-except  # a parser reports, it never crashes the play
        return new_facts(fmt, problems=["%s: cannot parse the input (%s: %s)" % (fmt, type(exc).__name__, exc)])
