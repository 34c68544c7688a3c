# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One entry point for every RDMA parser: ``parse_rdma(text, fmt)`` -> RDMA facts (:mod:`rdma_facts`).

The RDMA tools (``rdma system``, ``rdma link``, ``show_gids`` and the GID sysfs files, ``ibstat`` /
``ibv_devinfo``, ``ofed_info -s``, ``lsmod``, the ``ib_core`` ``netns_mode`` parameter) are parsed in
:mod:`rdma_parse_host`; the PCI and firmware views (``lspci -vvv``, ``mlxconfig``, ``nvidia-smi topo
-m``) in :mod:`rdma_parse_pci`. Both are imported statically: a module that runs on a host is packed
by AnsiballZ from its static imports only, and a parser imported by name at run time would be missing
there.

Every parser takes the tool's text (stdout, stderr appended is fine) and never raises on what it
reads: a missing tool, an error message or garbage give ``available: False`` and a ``problems``
line. Only an unknown ``fmt`` raises ValueError.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.rdma import rdma_parse_host
from ansible_collections.ainet.fabric.plugins.module_utils.rdma import rdma_parse_pci
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_facts import new_facts

PARSERS = {
    "rdma_system": rdma_parse_host.parse_rdma_system,
    "rdma_link": rdma_parse_host.parse_rdma_link,
    "show_gids": rdma_parse_host.parse_show_gids,
    "ibstat": rdma_parse_host.parse_ibstat,
    "ofed_info": rdma_parse_host.parse_ofed_info,
    "lsmod": rdma_parse_host.parse_lsmod,
    "netns_mode": rdma_parse_host.parse_netns_mode,
    "lspci_vvv": rdma_parse_pci.parse_lspci_vvv,
    "mlxconfig": rdma_parse_pci.parse_mlxconfig,
    "nvidia_smi_topo": rdma_parse_pci.parse_nvidia_smi_topo,
}


def parser(fmt):
    """The parse function of ``fmt``; ValueError naming the formats when unknown."""
    if fmt not in PARSERS:
        raise ValueError("%r is not an RDMA format; use one of: %s" % (fmt, ", ".join(sorted(PARSERS))))
    return PARSERS[fmt]


def parse_rdma(text, fmt):
    """Parse the output ``text`` of the tool of format ``fmt`` into RDMA facts."""
    func = parser(fmt)
    if text is None:
        facts = new_facts(fmt, problems=["no %s output to parse" % fmt])
        facts["available"] = False
        return facts
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        facts = new_facts(fmt, problems=["%s: expected text, got %s" % (fmt, type(text).__name__)])
        facts["available"] = False
        return facts
    return func(text)
