# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ``pcie_acs`` role does to a node: which PCIe bridges lose ACS, the commands, the boot unit.

Pure functions; the module (``ainet.fabric.pcie_acs``) reads the host (``lspci -D -vvv`` parsed by
:func:`rdma_parse_pci.parse_lspci_vvv`, the rail NICs' PCI addresses from sysfs) and runs the commands.

**Which bridges** (:func:`select_bridges`), from ``fabric_cluster.pcie_acs`` resolved by
:func:`rdma_host.resolve_acs` (``{"disable": mode, "bridges": [...]}``) and sent to the module as its flat
options by the action plugin (:mod:`desired.pcie_acs`):

* ``gpu_nic``: for every GPU (``kind`` gpu) and every rail NIC, the bridges of its upstream chain that
  have an ACS capability; their union, sorted by address, each with the reason(s) it was chosen
  (``above GPU 0000:19:00.0; above rail NIC ens6f0np0 (0000:1a:00.0)``). No GPU on the node: nothing.
* ``listed``: exactly ``fabric_cluster.pcie_acs.bridges``.
* ``none``: nothing (the boot unit is removed).

A host-local list (``pcie_acs_bridges``), when not empty, replaces the model's choice on that host.
A listed bridge must be a PCI bridge of the host with an ACS capability; anything else is refused
before any change, with one line naming the field and the value (:class:`AcsError`).

**Actions** (:func:`actions`): ``setpci -s <bdf> ECAP_ACS+0x6.w=0000`` (the ACS Control register, all
bits off) for each selected bridge whose ``ACSCtl`` has a bit on; none for a bridge already off.
The boot unit (:func:`unit_sections`, ``ainet-pcie-acs.service``) runs the same write for every
selected bridge once per boot, early (before the container runtimes, the kubelet and the NVIDIA
daemons), because the kernel turns ACS on again at every boot when an IOMMU is enabled.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.host import boot_unit
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_facts import ACS_BITS

ROLE = "pcie_acs"
MODES = ("gpu_nic", "listed", "none")
# A PCI address with or without its domain (the model's rdma_host.BDF; the host does not load the model)
BDF = re.compile(r"^(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\Z")
# Exec lines of another tool's unit that write ACS (boot_unit.foreign_units needles)
FOREIGN = (re.compile(r"\bECAP(_ACS|0*d)\b", re.I),)
REGISTER = "ECAP_ACS+0x6.w=0000"
MODEL_FIELD = "fabric_cluster.pcie_acs.bridges"
HOST_FIELD = "pcie_acs_bridges"
BEFORE = ("kubelet.service", "containerd.service", "crio.service", "docker.service", "nvidia-fabricmanager.service",
          "nvidia-persistenced.service")


class AcsError(FabricError):
    """A refusal: one line that names the field, the value and what is wrong."""


def full_address(addr):
    """``17:00.0`` -> ``0000:17:00.0`` (lspci without ``-D``); lower case."""
    addr = str(addr).strip().lower()
    return addr if addr.count(":") == 2 else "0000:" + addr


def normalize(pci):
    """The ``pci`` facts of :func:`parse_lspci_vvv` keyed by full address (``parent``/``upstream`` too)."""
    out = {}
    for addr, entry in pci.items():
        entry = dict(entry)
        entry["parent"] = full_address(entry["parent"]) if entry.get("parent") else None
        entry["upstream"] = [full_address(a) for a in entry.get("upstream") or []]
        out[full_address(addr)] = entry
    return out


def is_pci_bridge(entry):
    klass = (entry.get("class") or "").lower()
    return entry.get("kind") == "bridge" and (entry.get("class_id") == "0604" or klass.startswith("pci bridge"))


def has_acs(entry):
    return bool(entry.get("acs"))


def bits_on(entry):
    """The ACSCtl bits that are on, in the order of :data:`ACS_BITS`."""
    ctl = (entry.get("acs") or {}).get("ctl") or {}
    return [name for name in ACS_BITS if ctl.get(name)]


def unreadable(entry):
    """The ACSCtl bits lspci did not print (a short or missing line): the state is unknown."""
    ctl = (entry.get("acs") or {}).get("ctl") or {}
    return [name for name in ACS_BITS if name not in ctl]


def ctl_text(entry):
    """``SrcValid+ TransBlk- ...`` as lspci prints ``ACSCtl`` (``?`` for a bit it did not print)."""
    ctl = (entry.get("acs") or {}).get("ctl") or {}
    return " ".join("%s%s" % (name, "?" if name not in ctl else "+" if ctl[name] else "-") for name in ACS_BITS)


def check_listed(pci, bridges, field):
    """``bridges`` as full addresses; refuses an entry that is not a PCI bridge of this host with ACS."""
    if isinstance(bridges, str):
        bridges = [bridges]
    out = []
    for index, given in enumerate(bridges or []):
        where = "%s[%d] %r" % (field, index, given)
        text = str(given).strip().lower()
        if not BDF.match(text):
            raise AcsError("%s is not a PCI address (write it as 0000:3a:00.0)" % where)
        addr = full_address(text)
        entry = pci.get(addr)
        if entry is None:
            raise AcsError("%s is not a PCI device on this host (lspci -D lists them)" % where)
        if not is_pci_bridge(entry):
            raise AcsError("%s is not a PCI bridge (lspci: %s: %s)"
                           % (where, entry.get("class") or "?", entry.get("description") or "?"))
        if not has_acs(entry):
            raise AcsError("%s has no ACS capability (lspci -vvv -s %s shows no 'Access Control Services')"
                           % (where, addr))
        if addr not in out:
            out.append(addr)
    return out


def _above(pci, addr, reason, reasons):
    for bridge in pci[addr].get("upstream") or []:
        entry = pci.get(bridge)
        if entry is not None and has_acs(entry):
            reasons.setdefault(bridge, [])
            if reason not in reasons[bridge]:
                reasons[bridge].append(reason)


def select_bridges(pci, acs, nics=(), override=None, field=MODEL_FIELD):
    """``([{"address", "reason"}], messages)``.

    ``pci``: :func:`normalize`d facts; ``acs``: ``{"disable", "bridges"}`` (the resolved ``fabric_cluster.pcie_acs``
    or the module's flat options); ``nics``: ``[(rail NIC, PCI address or None)]``; ``override``: the host-local
    ``pcie_acs_bridges``; ``field``: where ``acs["bridges"]`` come from, named in reasons and refusals."""
    messages = []
    if override:
        return [{"address": a, "reason": "listed in %s" % HOST_FIELD}
                for a in sorted(check_listed(pci, override, HOST_FIELD))], messages
    mode = acs["disable"]
    if mode == "none":
        messages.append("fabric_cluster.pcie_acs.disable is none: no bridge is changed")
        return [], messages
    if mode == "listed":
        return [{"address": a, "reason": "listed in %s" % field}
                for a in sorted(check_listed(pci, acs["bridges"], field))], messages
    gpus = sorted(addr for addr, entry in pci.items() if entry.get("kind") == "gpu")
    if not gpus:
        messages.append("no GPU on this node (lspci shows no NVIDIA 3D/VGA controller): no bridge is selected")
        return [], messages
    reasons = {}
    for gpu in gpus:
        _above(pci, gpu, "above GPU %s" % gpu, reasons)
    for nic, addr in nics:
        if addr is None:
            messages.append("rail NIC %s has no PCI device (missing or virtual): no bridge above it is selected" % nic)
            continue
        addr = full_address(addr)
        if addr not in pci:
            messages.append("rail NIC %s (%s) is not in lspci's output: no bridge above it is selected" % (nic, addr))
            continue
        _above(pci, addr, "above rail NIC %s (%s)" % (nic, addr), reasons)
    if not reasons:
        messages.append("no bridge with an ACS capability above the GPUs and rail NICs of this node")
    return [{"address": a, "reason": "; ".join(reasons[a])} for a in sorted(reasons)], messages


def setpci_argv(address, setpci="setpci"):
    return [setpci, "-s", address, REGISTER]


def actions(pci, selected, setpci="setpci"):
    """``[{"address", "argv", "what"}]`` for each selected bridge whose ACSCtl is not all off."""
    out = []
    for item in selected:
        entry = pci[item["address"]]
        on, unknown = bits_on(entry), unreadable(entry)
        if on or unknown:
            what = "ACS off on %s (on: %s)" % (item["address"], " ".join(on) or "unknown: " + " ".join(unknown))
            out.append({"address": item["address"], "argv": setpci_argv(item["address"], setpci), "what": what})
    return out


def command_line(argv):
    return " ".join(argv)


def left_on(pci, addresses):
    """``{address: [bits still on or unreadable]}`` for the addresses that are not all off."""
    out = {}
    for addr in addresses:
        entry = pci.get(addr)
        if entry is None or not has_acs(entry):
            out[addr] = ["(not in lspci's output)"]
            continue
        bad = bits_on(entry) + ["%s?" % b for b in unreadable(entry)]
        if bad:
            out[addr] = bad
    return out


def unit_sections(addresses, setpci_path="/usr/bin/setpci"):
    """The boot unit: one ``setpci`` write per selected bridge, once per boot, early."""
    execs = [("ExecStart", command_line(setpci_argv(addr, setpci_path))) for addr in addresses]
    return boot_unit.oneshot(ROLE, "PCIe ACS off on the bridges between GPUs and RDMA NICs", execs,
                             before=BEFORE, early=True)
