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
import socket

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


def session_addresses(environ, extra=None, resolve=None):
    """This host's addresses the session came in on: ``SSH_CONNECTION``'s server address (gone under sudo's
    env_reset), and ``extra`` (the inventory's ``ansible_host``): an address, or a name ``resolve(name)`` turns into
    addresses. Loopback addresses are left out (no NIC carries them)."""
    found = []
    fields = (environ.get("SSH_CONNECTION") or "").split()
    if len(fields) == 4:
        found.append(fields[2])
    for value in extra or []:
        if not value:
            continue
        if _address(value) is not None:
            found.append(str(value))
        elif resolve is not None:
            found.extend(resolve(str(value)))
    return [a for a in found if _address(a) is not None and not _address(a).is_loopback]


def resolve_name(name):
    """The addresses ``name`` resolves to on this host ([] when it does not)."""
    try:
        return sorted(set(info[4][0] for info in socket.getaddrinfo(name, None)))
    except (OSError, UnicodeError):
        return []


def unresolved(devices, sys_class_net, lowers):
    """The devices of the path whose NICs cannot be told: neither a PCI device nor anything below them in sysfs
    (Open vSwitch's internal ports, tunnels): a reset cannot be proven to spare them."""
    out = []
    for dev in sorted(devices):
        if dev == "lo" or os.path.exists(os.path.join(sys_class_net, dev, "device")) or lowers(dev):
            continue
        out.append(dev)
    return out


def read_management(runner, extra=None):
    """``({netdev: why}, {pci function: why}, problem)`` of this host's management path, read through a
    :class:`host.runner.Runner` (``ip -j``, sysfs under its ``sysfs_root``). The default routes of every routing
    table count (a management VRF, policy routing). ``problem`` says why the path cannot be known for sure (the
    session's address is unknown, a device on it cannot be traced to its NICs), else None."""
    routes = []
    for argv in (["ip", "-j", "route", "show", "default", "table", "all"],
                 ["ip", "-j", "-6", "route", "show", "default", "table", "all"]):
        routes.extend(runner.json(argv) or [])
    addrs = runner.json(["ip", "-j", "addr", "show"]) or []
    net = runner.sys("/sys/class/net")
    lowers = sysfs_lowers(net)
    session = session_addresses(os.environ, extra, resolve_name)
    devices = management_devices(routes, addrs, session, lowers)
    problem = None
    if not session:
        problem = ("the address this session came in on is not known (no SSH_CONNECTION, and %s does not resolve "
                   "to an address on this host)" % (", ".join(extra or []) or "no ansible_host was given"))
    else:
        hidden = unresolved(devices, net, lowers)
        if hidden:
            problem = ("the management path runs over %s, which cannot be traced to its NICs (not a PCI device, "
                       "nothing below it in sysfs: Open vSwitch, a tunnel)" % ", ".join(hidden))
    return devices, pci_functions(devices, net), problem
