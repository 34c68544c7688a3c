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

**Firmware reset** (``reset``): ``mlxfwreset -d <pci> -l <level> -y reset`` with an explicit level (only 3, "Driver
restart and PCI reset"), after ``mlxfwreset -d <pci> q`` (:func:`parse_fwreset_query`) says the device supports it:
without ``-l`` the tool takes the minimal supported level, which can be 4, a warm reboot of the node (mstflint
``mlxfwresetlib/cmd_reg_mfrl.py``, ``default_reset_level``). Refused on a device with VFs (:func:`vf_refusal`): the
tool's driver stop writes 0 to ``sriov_numvfs`` of the device's functions .0 and .1 without asking (mstflint
``mlxfwresetlib/mlxfwreset_mlnxdriver.py``, ``MlnxDriverLinux``).

**BlueField** (PCI device ids :data:`BLUEFIELD`): in DPU mode (``INTERNAL_CPU_OFFLOAD_ENGINE`` ``ENABLED(0)``, read
with ``mlxconfig -d <pci> -e q INTERNAL_CPU_OFFLOAD_ENGINE``) the host's firmware settings are not loaded by a host
reboot (a power cycle is needed), so a port that needs another link type there is refused; in NIC mode
(``DISABLED(1)``) it is handled as a ConnectX.
"""

from __future__ import annotations

import glob
import os
import re

from ansible_collections.ainet.fabric.plugins.module_utils.common import linux_names
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
# mlxfwreset reset levels (mstflint mlxfwresetlib/cmd_reg_mfrl.py, reset_levels_db); only 3 is run here: 0 keeps the
# driver, PCI link and network link up, 1 resets only a BlueField's Arm side, 4 is a warm reboot of the whole node
# (fabric_reboot's job: batched, with the node read back)
RESET_LEVELS = {0: "live-patch", 1: "immediate reset (Arm side only)", 3: "driver restart and PCI reset",
                4: "warm reboot of the node"}
RESET_LEVEL_CHOICES = (3,)
QUERY_ROW = re.compile(r"^(?P<num>\d+):\s+(?P<text>.*?)\s*-(?P<state>Supported|Not [Ss]upported)\b\s*(?P<rest>.*)$")
# PCI device ids of BlueField NIC functions (Mellanox/nic-configuration-operator pkg/consts/consts.go; mstflint
# mtcr_ul/mtcr_ul_com.c names a2d6 and a2dc)
BLUEFIELD = {"0xa2d6": "BlueField-2", "0xa2dc": "BlueField-3", "0xa2d9": "BlueField-3 Lx", "0xa2df": "BlueField-4"}
# INTERNAL_CPU_OFFLOAD_ENGINE: ENABLED(0) = DPU mode, DISABLED(1) = NIC mode (nic-configuration-operator
# NvParamBF3DpuMode/NvParamBF3NicMode; sriov-network-operator pkg/vendors/mellanox/mellanox.go)
MODE_PARAM = "INTERNAL_CPU_OFFLOAD_ENGINE"
MODES = {"0": "dpu", "1": "nic"}


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
        problem = port.get("nic") is not None and linux_names.host_ifname_problem(port["nic"], "ports[%d].nic" % index)
        if problem:
            raise LinkTypeError("nic_link_type: %s" % problem)
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


def bluefield_mode(firmware):
    """``dpu``, ``nic`` or None (unknown) from a parsed ``mlxconfig -e q INTERNAL_CPU_OFFLOAD_ENGINE`` entry
    (:func:`parse_mlxconfig`'s device entry): the value running now (``Current``; ``Next Boot`` without ``-e``)."""
    row = (firmware or {}).get("configs", {}).get(MODE_PARAM) or {}
    value = row.get("current") or row.get("next_boot") or ""
    match = re.search(r"\((\d+)\)\s*$", value)
    return MODES.get(match.group(1)) if match else None


def _bluefield_refusal(port, reading, result):
    """One line when a BlueField that is not known to be in NIC mode would need another link type."""
    model = BLUEFIELD.get((reading.get("device_id") or "").lower())
    if model is None or reading.get("mode") == "nic":
        return None
    pci = reading["pci"]
    host = reading.get("host") or "this host"
    what = ("%s: %s (%s) runs %s and %s wants %s"
            % (host, port["nic"] or pci, pci, NAMES.get(result["current"], "an unknown link type"), port["source"],
               NAMES[port["link_type"]]))
    if reading.get("mode") == "dpu":
        return ("nic_link_type: %s, but it is a %s in DPU mode (%s ENABLED(0)): its firmware does not take the "
                "host's configuration and a host reboot does not load it, so rebooting would never converge; not set. "
                "Fix: set LINK_TYPE_P%d on the DPU side (its Arm OS) and power-cycle the node, or switch the %s to NIC "
                "mode" % (what, model, MODE_PARAM, result["port"], model))
    return ("nic_link_type: %s, but it is a %s whose mode (DPU or NIC) could not be read: %s. Fix: check "
            "'mlxconfig -d %s -e q %s' on the host (DISABLED(1) is NIC mode, which this role can configure)"
            % (what, model, reading.get("mode_error") or "no %s in the query" % MODE_PARAM, pci, MODE_PARAM))


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
    refusal = _bluefield_refusal(port, reading, result)
    if refusal:
        raise LinkTypeError(refusal)
    result["reboot"] = ("%s of %s (%s): %s now, %s from the next boot (NIC firmware)"
                        % (config, pci, name, current or "unknown", want))
    return result


def check_reset_level(level):
    """The reset level asked for (``nic_link_type_reset_level``), checked: one line naming the value otherwise."""
    if isinstance(level, bool) or not isinstance(level, int) or level not in RESET_LEVEL_CHOICES:
        raise LinkTypeError("nic_link_type_reset_level: %r is not a reset level this role runs. Fix: use 3 (driver "
                            "restart and PCI reset); level 4 is a warm reboot of the node: leave the reset off and "
                            "reboot with fabric_reboot instead" % (level,))
    return level


def query_argv(pci, tool="mlxfwreset"):
    """``mlxfwreset -d <pci> q``: the reset levels the device supports now."""
    return [tool, "-d", pci, "q"]


def reset_argv(pci, tool="mlxfwreset", level=3):
    """The firmware reset that makes a set link type run without a reboot, at an explicit level (3: the device's
    driver restarts and its PCI link is reset; every netdev of the device goes down and comes back)."""
    return [tool, "-d", pci, "-l", str(level), "-y", "reset"]


def parse_fwreset_query(text):
    """``mlxfwreset``/``mstfwreset -d <dev> q``: ``{"levels": {3: {"text", "supported", "default"}}, "types": {...},
    "sync": {...}}``. Rows are ``<n>: <text padded> -Supported|-Not Supported [(default)]`` under the section lines
    ``Reset-levels:``, ``Reset-types ...``, ``Reset-sync ...``/``Reset sync ...``; other sections are skipped."""
    result = {"levels": {}, "types": {}, "sync": {}}
    section = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        lower = line.lower()
        if lower.startswith("reset-levels"):
            section = "levels"
            continue
        if lower.startswith("reset-types"):
            section = "types"
            continue
        if lower.startswith("reset-sync") or lower.startswith("reset sync"):
            section = "sync"
            continue
        if not line or lower.startswith("reset") or line.startswith("The following"):
            section = None if line else section
            continue
        match = QUERY_ROW.match(line)
        if match and section:
            result[section][int(match.group("num"))] = {
                "text": match.group("text"), "supported": match.group("state") == "Supported",
                "default": "(default)" in match.group("rest")}
    return result


def reset_level_refusal(pci, level, query, host=None):
    """One line when the device (``pci``) cannot be reset at ``level`` by its ``mlxfwreset q`` output (parsed by
    :func:`parse_fwreset_query`), else None."""
    levels = query.get("levels") or {}
    where = "%s: %s" % (host, pci) if host else pci
    if not levels:
        return ("nic_link_type: %s: 'mlxfwreset -d %s q' lists no reset levels; not reset. Fix: reboot the node "
                "instead (fabric_reboot)" % (where, pci))
    row = levels.get(level)
    if row and row["supported"]:
        return None
    supported = ", ".join("%d (%s)" % (n, RESET_LEVELS.get(n, levels[n]["text"])) for n in sorted(levels)
                          if levels[n]["supported"]) or "none"
    return ("nic_link_type: %s does not support firmware reset level %d (%s) now; supported: %s; not reset. Fix: "
            "reboot the node instead (fabric_reboot), leaving nic_link_type_reset off"
            % (where, level, RESET_LEVELS.get(level, "unknown"), supported))


def vf_refusal(device, functions, host=None):
    """One line when the PCI device (``0000:3b:00``) has VFs, else None. ``functions``: ``{pf: {"numvfs": n, "vfs":
    {vf: driver or None}}}`` read from sysfs. Every VF counts as in use: the reset's driver stop writes 0 to
    ``sriov_numvfs`` (mstflint ``MlnxDriverLinux``), removing each VF with whatever holds it (a pod's netdev, which
    the host's sysfs does not show once it is in the pod's network namespace; a VM or DPDK through ``vfio-pci``),
    and nothing creates them again until the sriov role or operator runs."""
    held = []
    for pf in sorted(functions):
        entry = functions[pf]
        if not entry.get("numvfs"):
            continue
        drivers = {}
        for vf in sorted(entry.get("vfs") or {}):
            driver = entry["vfs"][vf] or "no driver"
            drivers[driver] = drivers.get(driver, 0) + 1
        held.append("%s has %d VFs (%s)" % (pf, entry["numvfs"], ", ".join(
            "%d %s" % (n, d if d == "no driver" else "bound to " + d) for d, n in sorted(drivers.items()))
            or "none listed"))
    if not held:
        return None
    return ("nic_link_type: %sa firmware reset of %s would remove its VFs (the reset sets sriov_numvfs to 0): %s; "
            "not reset. Fix: stop their users and set sriov_numvfs to 0, or reboot the node instead (fabric_reboot)"
            % ("%s: " % host if host else "", device, "; ".join(held)))


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


def refused_reset(refusal, reboot_follows):
    """What a refused firmware reset comes to: ``(error, note)``, both None when nothing refused it.

    ``refusal``: one of the refusal lines above (management path, level, VFs, no tool); ``reboot_follows``: the
    caller reboots the node anyway when something is pending (``playbooks/site.yml``'s rolling play with
    ``fabric_reboot``). The reset is only the faster path to the new link type: a reboot loads what ``mlxconfig``
    wrote for the next boot as well (mlxconfig ends its ``set`` with "Please reboot machine to load new
    configurations", and on ConnectX-4 to 6 Lx and BlueField(-2) arms the firmware to reload on the warm boot,
    mstflint ``mlxconfig/mlxcfg_generic_commander.cpp`` ``loadConfigurationGetStr``). So with a reboot to follow the
    refusal is no error: ``note`` (``reset refused (<reason>); applied by the reboot``) goes onto the ports that
    stay pending. Without one, ``error`` is the refusal itself and nothing is changed."""
    if not refusal:
        return None, None
    if not reboot_follows:
        return refusal, None
    reason = re.sub(r"(; not reset)?\.? Fix: .*$", "", re.sub(r"^nic_link_type: ", "", refusal))
    return None, "reset refused (%s); applied by the reboot" % reason


def device_vfs(runner, device):
    """``{pf: {"numvfs": n, "vfs": {vf: driver or None}}}`` of the PCI device's (``0000:3b:00``) functions, read
    from sysfs through a :class:`host.runner.Runner` (under its ``sysfs_root``): what :func:`vf_refusal` judges."""
    functions = {}
    base = runner.sys("/sys/bus/pci/devices")
    for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        if device_of(name) != device:
            continue
        numvfs = runner.read_sys("/sys/bus/pci/devices/%s/sriov_numvfs" % name)
        if not (numvfs or "").isdigit():
            continue
        path = os.path.join(base, name)
        vfs = {}
        for link in sorted(glob.glob(os.path.join(path, "virtfn*"))):
            driver = os.path.join(link, "driver")
            vfs[os.path.basename(os.path.realpath(link))] = \
                os.path.basename(os.path.realpath(driver)) if os.path.exists(driver) else None
        functions[name] = {"numvfs": int(numvfs), "vfs": vfs}
    return functions
