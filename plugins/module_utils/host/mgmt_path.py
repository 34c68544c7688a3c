# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The management path of a host: the network devices, and the PCI functions under them, that carry the
default routes and the connection Ansible came in on. A step that takes a NIC down (a firmware reset, a
driver restart) must never touch them: the node would drop off the network with the job half done
(NVIDIA network-operator issue 2176: a ConnectX port carrying the management network goes NotReady on
every driver reload).

:func:`management_devices` is pure: from ``ip -j route show default`` (both families), ``ip -j addr show``,
the address the session arrived on (``SSH_CONNECTION``'s third field, or the inventory's ``ansible_host``)
and a view of sysfs it returns ``{netdev: why}`` for every device on the path, lower devices included (the
members of a bond or team, the parent of a VLAN or macvlan, the ports of a bridge), and :func:`pci_functions`
maps those to their PCI functions (a VF's PF too).
"""

from __future__ import annotations

import ipaddress
import os
import re

BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-1][0-9a-f]\.[0-7]$")


def _address(text):
    try:
        return ipaddress.ip_address(str(text).split("%", 1)[0])
    except ValueError:
        return None


def management_devices(routes, addrs, session_addresses, lowers):
    """``{netdev: why}`` of the management path.

    ``routes``: the entries of ``ip -j route show default`` (and ``ip -j -6 ...``); ``addrs``: ``ip -j addr show``;
    ``session_addresses``: this host's addresses the controller reached it on; ``lowers(dev)``: the devices
    directly below ``dev`` (sysfs ``lower_*`` links, a bridge's ``brif``)."""
    found = {}
    for route in routes or []:
        if route.get("dst", "default") != "default":
            continue
        for hop in [route] + list(route.get("nexthops") or []):  # a multipath default names its devices per hop
            if hop.get("dev"):
                via = " via %s" % hop["gateway"] if hop.get("gateway") else ""
                found.setdefault(hop["dev"], "the default route%s" % via)
    wanted = [a for a in (_address(s) for s in session_addresses or []) if a is not None]
    for link in addrs or []:
        for info in link.get("addr_info") or []:
            local = _address(info.get("local"))
            if local is not None and local in wanted:
                found.setdefault(link.get("ifname"), "holds %s, the address this session came in on" % local)
    pending = list(found)
    while pending:
        dev = pending.pop()
        for lower in lowers(dev):
            if lower not in found:
                found[lower] = "below %s (%s)" % (dev, found[dev])
                pending.append(lower)
    return found


def sysfs_lowers(sys_class_net):
    """A ``lowers(dev)`` over a sysfs ``/sys/class/net`` directory."""

    def lowers(dev):
        base = os.path.join(sys_class_net, dev)
        names = []
        try:
            entries = sorted(os.listdir(base))
        except OSError:
            return names
        names.extend(name[len("lower_"):] for name in entries if name.startswith("lower_"))
        try:
            names.extend(sorted(os.listdir(os.path.join(base, "brif"))))
        except OSError:
            pass
        return names

    return lowers


def pci_functions(devices, sys_class_net):
    """``{pci function: why}`` of the PCI-backed devices among ``devices`` (``{netdev: why}``); a VF also names
    its PF (resetting the PF takes the VF down)."""
    out = {}
    for dev, why in devices.items():
        device = os.path.join(sys_class_net, dev, "device")
        if not os.path.exists(device):
            continue
        pci = os.path.basename(os.path.realpath(device))
        if BDF.match(pci):
            out.setdefault(pci, "%s: %s" % (dev, why))
        physfn = os.path.join(device, "physfn")
        if os.path.exists(physfn):
            parent = os.path.basename(os.path.realpath(physfn))
            if BDF.match(parent):
                out.setdefault(parent, "%s (a VF of it): %s" % (dev, why))
    return out


def session_addresses(environ, extra=None):
    """This host's addresses the session came in on: ``SSH_CONNECTION``'s server address, and ``extra``
    (the inventory's ``ansible_host`` when it is an address)."""
    found = []
    fields = (environ.get("SSH_CONNECTION") or "").split()
    if len(fields) == 4:
        found.append(fields[2])
    for value in extra or []:
        if value and _address(value) is not None:
            found.append(str(value))
    return found


def read_management(runner, extra=None):
    """``({netdev: why}, {pci function: why})`` of this host's management path, read through a
    :class:`host.runner.Runner` (``ip -j``, sysfs under its ``sysfs_root``)."""
    routes = []
    for argv in (["ip", "-j", "route", "show", "default"], ["ip", "-j", "-6", "route", "show", "default"]):
        routes.extend(runner.json(argv) or [])
    addrs = runner.json(["ip", "-j", "addr", "show"]) or []
    net = runner.sys("/sys/class/net")
    devices = management_devices(routes, addrs, session_addresses(os.environ, extra), sysfs_lowers(net))
    return devices, pci_functions(devices, net)
