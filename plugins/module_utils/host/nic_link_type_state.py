# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ``nic_link_type`` role does to a NIC port: the firmware link type (Ethernet or InfiniBand) it wants,
what the port runs now and at the next boot, and the ``mlxconfig`` command between them.

Pure functions; the module (``ainet.fabric.nic_link_type``) reads the host and runs the commands.

**Desired state**: the module's flat ``ports`` option, derived on the controller from the model (an
``infiniband`` fabric's rail NICs want ``IB``, every other fabric's ``ETH``; :mod:`desired.nic_link_type`)::

    [{"nic": "ens6f0np0", "pci": None | "0000:3b:00.0", "link_type": "ETH", "source": "fabric compute"}]

**Current state** of one port, as the module reads it (:func:`port_reading`)::

    {"nic": "ens6f0np0", "pci": "0000:3b:00.0", "vendor": "0x15b3", "link_layer": "ETH" | "IB" | None,
     "firmware": None | parse_mlxconfig()'s entry of the device}

**Port number**: ConnectX-4 and later expose every port as a PCI function of its own, and the firmware names
the ports' link types ``LINK_TYPE_P1`` (function .0) and ``LINK_TYPE_P2`` (function .1) on either function
(NVIDIA MFT documentation, mlxconfig; a device whose query has no ``LINK_TYPE_P<n>`` has a fixed protocol,
an EN or an IB-only card). Values: ``IB(1)``, ``ETH(2)`` (``VPI(3)`` on ConnectX-3, never wanted here).

**Actions**: ``ok`` (the port runs the wanted type and boots with it), ``set`` (``mlxconfig -y -d <pci> set
LINK_TYPE_P<n>=<1|2>``; the port runs the new type after a reboot or a firmware reset), ``pending`` (the
firmware already holds the wanted type for the next boot). Nothing is written outside the NIC's firmware,
so the role owns no file; a port another tool set differently is simply set as the model says, since the
model is the one description of what the port carries.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host.runner import VENDOR_MELLANOX

LINK_TYPES = ("ETH", "IB")
# mlxconfig's numeric values of LINK_TYPE_P<n> (MFT: IB(1), ETH(2), VPI(3))
VALUE = {"IB": 1, "ETH": 2}
NAMES = {"ETH": "Ethernet", "IB": "InfiniBand"}
MELLANOX = VENDOR_MELLANOX
BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-1][0-9a-f]\.[0-7]$")
# sysfs link_layer of an RDMA port, and ARPHRD types of /sys/class/net/<nic>/type
LINK_LAYERS = {"ethernet": "ETH", "infiniband": "IB"}
ARPHRD = {"1": "ETH", "32": "IB"}


class LinkTypeError(FabricError):
    """A refusal: one line that names the port, what is wrong and how to fix it."""


def check_ports(ports):
    """The module's flat ``ports`` option, checked (one error line naming the entry); returns a normalised copy."""
    if not isinstance(ports, list):
        raise LinkTypeError("nic_link_type: ports must be a list of {nic, link_type}, got %r" % (ports,))
    seen = {}
    result = []
    for index, port in enumerate(ports):
        if not isinstance(port, dict) or not (port.get("nic") or port.get("pci")):
            raise LinkTypeError("nic_link_type: ports[%d] %r names no NIC (give nic, or pci)" % (index, port))
        want = str(port.get("link_type", "")).upper()
        if want not in LINK_TYPES:
            raise LinkTypeError("nic_link_type: ports[%d] (%s) link_type %r is not one of %s"
                                % (index, port.get("nic") or port.get("pci"), port.get("link_type"),
                                   ", ".join(LINK_TYPES)))
        pci = port.get("pci")
        if pci is not None:
            pci = str(pci).strip().lower()
            if len(pci) == 7:
                pci = "0000:" + pci
            if not BDF.match(pci):
                raise LinkTypeError("nic_link_type: ports[%d] (%s) pci %r is not a PCI address (write it as "
                                    "0000:3b:00.0)" % (index, port.get("nic") or "", port.get("pci")))
        key = port.get("nic") or pci
        if key in seen and seen[key] != want:
            raise LinkTypeError("nic_link_type: %s is wanted as %s (%s) and as %s (%s)"
                                % (key, seen[key], result[[p["nic"] or p["pci"] for p in result].index(key)]["source"],
                                   want, port.get("source") or "ports[%d]" % index))
        if key in seen:
            continue
        seen[key] = want
        result.append({"nic": port.get("nic"), "pci": pci, "link_type": want,
                       "source": port.get("source") or "ports[%d]" % index})
    return result


def check_one_want_per_port(ports, readings):
    """One line when one firmware port is wanted twice with different link types (by name and by PCI address)."""
    seen = {}
    for port, reading in zip(ports, readings):
        key = (reading["pci"], reading.get("port") or port_number(reading["pci"]))
        if key in seen and seen[key]["link_type"] != port["link_type"]:
            other = seen[key]
            raise LinkTypeError("nic_link_type: port %d of %s is wanted as %s (%s, %s) and as %s (%s, %s); fix: "
                                "keep one of them" % (key[1], key[0], other["link_type"], other["nic"] or other["pci"],
                                                      other["source"], port["link_type"], port["nic"] or port["pci"],
                                                      port["source"]))
        seen.setdefault(key, port)


def port_number(pci):
    """The firmware's port number of a PCI function: .0 is port 1, .1 is port 2."""
    return int(pci.rsplit(".", 1)[1]) + 1


def device_of(pci):
    """The PCI device (slot) a function belongs to: its functions are reset together."""
    return pci.rsplit(".", 1)[0]


def link_layer(value, arphrd=None):
    """``ETH``/``IB`` from an RDMA port's sysfs ``link_layer`` (or, without one, the netdev's ARPHRD type)."""
    if value:
        return LINK_LAYERS.get(value.strip().lower())
    return ARPHRD.get((arphrd or "").strip())


def port_actions(port, reading, tool="mlxconfig"):
    """The outcome for one port: ``{"nic", "pci", "port", "link_type", "current", "next_boot", "action", "argv",
    "reboot"}``. ``current``/``next_boot`` are ``ETH``/``IB``/``VPI`` (None where unknown); ``action`` is ``ok``,
    ``set`` or ``pending``; ``argv`` is the mlxconfig command of ``set``; ``reboot`` says why a reboot (or a
    firmware reset) is due. Raises LinkTypeError (one line) when the port cannot be given the wanted type."""
    want = port["link_type"]
    pci = reading["pci"]
    name = port["nic"] or pci
    number = reading.get("port") or port_number(pci)
    field = "link_type_p%d" % number
    config = "LINK_TYPE_P%d" % number
    firmware = reading.get("firmware")
    live = reading.get("link_layer")
    result = {"nic": port["nic"], "pci": pci, "port": number, "link_type": want, "current": live,
              "next_boot": live, "action": "ok", "argv": None, "reboot": None}
    settable = firmware is not None and config in firmware.get("configs", {})
    if not settable:
        if live == want:
            return result
        if reading.get("vendor") != MELLANOX:
            raise LinkTypeError("nic_link_type: %s (%s) runs %s and is not an NVIDIA/Mellanox NIC: its link type "
                                "cannot be changed; %s wants %s. Fix: cable the fabric to a NIC that runs %s"
                                % (name, pci, NAMES.get(live, "an unknown link type"), port["source"], NAMES[want],
                                   NAMES[want]))
        if firmware is None:
            raise LinkTypeError("nic_link_type: %s (%s) runs %s, %s wants %s, and the firmware could not be read: "
                                "%s. Fix: install mlxconfig (DOCA's mft) or mstconfig (mstflint)"
                                % (name, pci, NAMES.get(live, "an unknown link type"), port["source"], NAMES[want],
                                   reading.get("firmware_error") or "no mlxconfig or mstconfig on this host"))
        raise LinkTypeError("nic_link_type: %s (%s) runs %s and its firmware has no %s (a NIC with a fixed "
                            "protocol); %s wants %s. Fix: use a VPI NIC, or correct the fabric's addressing mode"
                            % (name, pci, NAMES.get(live, "an unknown link type"), config, port["source"],
                               NAMES[want]))
    next_boot = firmware.get(field)
    current = firmware.get("current", {}).get(field) or live
    result.update(current=current, next_boot=next_boot)
    if next_boot != want:
        result.update(action="set", argv=[tool, "-y", "-d", pci, "set", "%s=%d" % (config, VALUE[want])],
                      next_boot=want)
    elif current == want:
        return result
    else:
        result["action"] = "pending"
    result["reboot"] = ("%s of %s (%s): %s now, %s from the next boot (NIC firmware)"
                        % (config, pci, name, current or "unknown", want))
    return result


def reset_argv(pci, tool="mlxfwreset"):
    """The firmware reset that makes a set link type run without a reboot (MFT ``mlxfwreset``; level chosen by the
    tool for the device, which restarts its driver: every netdev of the device goes down and comes back)."""
    return [tool, "-d", pci, "-y", "reset"]


def reset_refusal(pcis, management):
    """One line when a firmware reset of the PCI devices of ``pcis`` would take down the management path
    (``management``: {pci function: why}, from :mod:`host.mgmt_path`), else None."""
    devices = {device_of(pci) for pci in pcis}
    hit = sorted((pci, why) for pci, why in management.items() if device_of(pci) in devices)
    if not hit:
        return None
    return ("nic_link_type: a firmware reset of %s would take down the management path (%s); not reset. Fix: "
            "reboot the node instead (fabric_reboot), or move the management path off this NIC"
            % (", ".join(sorted(devices)), "; ".join("%s: %s" % item for item in hit)))
