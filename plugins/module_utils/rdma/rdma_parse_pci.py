# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers of the PCI and firmware views of an RDMA host into RDMA facts (:mod:`rdma_facts`).

* ``lspci -vvv`` / ``lspci -vvvnn -D`` (also ``-vv``, one device with ``-s``): functions by address
  with class, IDs (``-nn``), NUMA node, driver, bridge bus numbers, the ACS capability and control
  bits, SR-IOV counts; the bridge chain above each function from the bridges' ``Bus:`` lines.
  ``ACSCap``/``ACSCtl`` lines wrapped by a mail or terminal are joined again.
* ``mlxconfig -d <dev> q [NAMES]`` (also ``mstconfig``, ``-e q``, and grep-filtered output):
  ``Configurations:`` with ``Next Boot`` alone or ``Default Current Next Boot``; a ``*`` first
  column marks a next-boot value that differs.
* ``nvidia-smi topo -m`` (``-mp`` too): the matrix, CPU/NUMA affinity and the NIC legend; tab or
  space separated; old drivers name NIC columns by their RDMA device (``mlx5_0``).
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_facts import (
    ACS_BITS, finish, new_facts, new_firmware, new_pci, to_int,
)

PCI_HEAD = re.compile(r"^(?P<addr>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(?P<rest>\S.*)$")
ACS_LINE = re.compile(r"^(?P<kind>ACSCap|ACSCtl):\s*(?P<bits>.*)$")
ACS_BIT = re.compile(r"^(?P<name>[A-Za-z]+)(?P<sign>[+-])$")
BUS_LINE = re.compile(r"^Bus:\s+primary=(?P<p>[0-9a-f]{2}),\s*secondary=(?P<s>[0-9a-f]{2}),"
                      r"\s*subordinate=(?P<u>[0-9a-f]{2})", re.I)
VENDORS = {"15b3": "mellanox", "10de": "nvidia"}


def _kind(entry):
    klass = (entry["class"] or "").lower()
    text = (entry["description"] or "").lower()
    vendor = VENDORS.get(entry["vendor_id"] or "")
    if vendor is None and ("mellanox" in text or text.startswith("nvidia")):
        vendor = "mellanox" if "mellanox" in text else "nvidia"
    if "bridge" in klass:
        return "bridge"
    if vendor == "nvidia" and ("3d controller" in klass or "vga" in klass):
        return "gpu"
    if vendor in ("mellanox", "nvidia") and ("ethernet" in klass or "infiniband" in klass or "network" in klass):
        return "rdma_nic"
    return "other"


def _acs_bits(text, where, problems):
    bits = {}
    for word in text.split():
        match = ACS_BIT.match(word)
        if match and match.group("name") in ACS_BITS:
            bits[match.group("name")] = match.group("sign") == "+"
    missing = [name for name in ACS_BITS if name not in bits]
    if missing:
        problems.append("lspci_vvv: %s: ACS line without %s: %r" % (where, ", ".join(missing), text.strip()))
    return bits


def _lspci_lines(text):
    """Lines with wrapped ACS lines joined again (``...UpstreamFwd- \\nEgressCtrl- DirectTrans-``)."""
    lines = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if lines and ACS_LINE.match(lines[-1].strip()) and stripped and \
                all(ACS_BIT.match(word) and ACS_BIT.match(word).group("name") in ACS_BITS for word in stripped.split()):
            lines[-1] = lines[-1].rstrip() + " " + stripped
            continue
        lines.append(raw)
    return lines


def parse_lspci_vvv(text):
    """``lspci -vvv`` output (any of ``-D``, ``-nn``, ``-s``)."""
    facts = new_facts("lspci_vvv")
    problems = facts["problems"]
    entry = addr = None
    for raw in _lspci_lines(text):
        line = raw.strip()
        head = PCI_HEAD.match(raw) if not raw[:1].isspace() else None
        if head:
            addr = head.group("addr").lower()
            entry = new_pci()
            facts["pci"][addr] = entry
            rest = head.group("rest")
            rest = re.sub(r"\s*\(prog-if [^)]*\)\s*$", "", rest)
            klass, _sep, description = rest.partition(": ")
            class_id = re.search(r"\s*\[([0-9a-fA-F]{4})\]$", klass)
            if class_id:
                entry["class_id"] = class_id.group(1).lower()
                klass = klass[:class_id.start()]
            entry["class"] = klass.strip()
            entry["description"] = description.strip() or None
            ids = re.search(r"\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]", description)
            if ids:
                entry["vendor_id"], entry["device_id"] = ids.group(1).lower(), ids.group(2).lower()
            entry["kind"] = _kind(entry)
            continue
        if entry is None or not line:
            continue
        if line.startswith("NUMA node:"):
            entry["numa_node"] = to_int(line.split(":", 1)[1])
        elif line.startswith("Kernel driver in use:"):
            entry["driver"] = line.split(":", 1)[1].strip()
        elif BUS_LINE.match(line):
            match = BUS_LINE.match(line)
            entry["bus"] = {"primary": match.group("p").lower(), "secondary": match.group("s").lower(),
                            "subordinate": match.group("u").lower()}
        elif ACS_LINE.match(line):
            match = ACS_LINE.match(line)
            if entry["acs"] is None:
                entry["acs"] = {"cap": {}, "ctl": {}}
            entry["acs"]["cap" if match.group("kind") == "ACSCap" else "ctl"] = \
                _acs_bits(match.group("bits"), "%s %s" % (addr, match.group("kind")), problems)
        elif "Total VFs:" in line:
            counts = dict((k.strip(), v.strip()) for k, _s, v in
                          (part.partition(":") for part in line.split(",")))
            entry["sriov"] = entry["sriov"] or {}
            entry["sriov"].update({"initial_vfs": to_int(counts.get("Initial VFs")),
                                   "total_vfs": to_int(counts.get("Total VFs")),
                                   "num_vfs": to_int(counts.get("Number of VFs"))})
            if entry["sriov"]["total_vfs"] is None:
                problems.append("lspci_vvv: %s: unreadable SR-IOV line %r" % (addr, line))
        elif line.startswith("VF offset:"):
            match = re.match(r"^VF offset:\s*(\d+),\s*stride:\s*(\d+)(?:,\s*Device ID:\s*([0-9a-fA-F]+))?", line)
            entry["sriov"] = entry["sriov"] or {}
            if match:
                entry["sriov"].update({"vf_offset": int(match.group(1)), "vf_stride": int(match.group(2)),
                                       "vf_device_id": (match.group(3) or "").lower() or None})
            else:
                problems.append("lspci_vvv: %s: unreadable VF offset line %r" % (addr, line))
    _chains(facts["pci"])
    return finish(facts, text, bool(facts["pci"]))


def _split_addr(addr):
    if addr.count(":") == 2:
        domain, bus, rest = addr.split(":")
    else:
        domain, (bus, rest) = None, addr.split(":")
    return domain, bus, rest


def _chains(pci):
    """``parent`` and ``upstream`` of every function from the bridges' secondary bus numbers."""
    by_bus = {}
    for addr, entry in pci.items():
        if entry["bus"]:
            domain = _split_addr(addr)[0]
            by_bus[(domain, entry["bus"]["secondary"])] = addr
    for addr, entry in pci.items():
        chain, seen, current = [], set([addr]), addr
        while True:
            domain, bus, _rest = _split_addr(current)
            parent = by_bus.get((domain, bus))
            if parent is None or parent in seen:
                break
            chain.append(parent)
            seen.add(parent)
            current = parent
        entry["parent"] = chain[0] if chain else None
        entry["upstream"] = chain


# --- mlxconfig ---------------------------------------------------------------------------------------

COLUMN_NAMES = {"default": "default", "current": "current", "next boot": "next_boot", "new": "new"}
# A configuration row of ``mlxconfig [-e] query`` (mstflint mlxconfig/mlxcfg_ui.cpp printSingleParam:
# ``printf("%s%s     %-48s", diff, readOnly, name)``): an optional ``*`` (the next value differs), an optional ``RO``
# (mstflint >= 4.25: a read-only parameter; two spaces otherwise), the name (``NAME`` or ``NAME[i]``), the values.
CONFIG_ROW = re.compile(r"^(?P<star>\*)?\s*(?P<ro>RO\s{2,})?(?P<name>[A-Z_][A-Z0-9_]*(?:\[\d+(?:\.\.\d+)?\])?)"
                        r"\s+(?P<values>\S.*)$")
TYPED = {"LINK_TYPE_P1": "link_type_p1", "LINK_TYPE_P2": "link_type_p2", "SRIOV_EN": "sriov_en",
         "NUM_OF_VFS": "num_of_vfs"}


def config_row(line):
    """One configuration row of ``mlxconfig [-e] query`` (a stripped line): ``{"name", "changed", "read_only",
    "values"}`` (``values`` as printed, split on runs of two or more spaces or tabs), or None for another line."""
    match = CONFIG_ROW.match(line)
    if not match:
        return None
    return {"name": match.group("name"), "changed": bool(match.group("star")), "read_only": bool(match.group("ro")),
            "values": [v for v in re.split(r"\s{2,}|\t+", match.group("values").strip()) if v]}


def _typed(field, raw):
    """A config value as its typed field: ``ETH(2)`` -> ``ETH``, ``True(1)`` -> True, ``8`` -> 8."""
    if raw is None:
        return None
    match = re.match(r"^(?P<name>[A-Za-z_]*)\((?P<num>\d+)\)$", raw)
    if field in ("link_type_p1", "link_type_p2"):
        if match and match.group("name"):
            return match.group("name").upper()
        return {"1": "IB", "2": "ETH", "3": "VPI"}.get(raw)
    if field == "sriov_en":
        if match:
            return match.group("num") != "0"
        return {"true": True, "false": False, "1": True, "0": False}.get(raw.lower())
    return to_int(match.group("num") if match else raw)


def _columns(header):
    names = re.split(r"\s{2,}", header.split(":", 1)[1].strip()) if ":" in header else re.split(r"\s{2,}", header)
    return [COLUMN_NAMES.get(name.strip().lower()) for name in names if name.strip()]


def parse_mlxconfig(text):
    """``mlxconfig -d <dev> [-e] q [NAMES]`` (or ``mstconfig``) output, possibly grep-filtered."""
    facts = new_facts("mlxconfig")
    problems = facts["problems"]
    current = None
    columns = ["next_boot"]
    rows = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("Device #"):
            current = new_firmware()
            rows.append(current)
            columns = ["next_boot"]
            continue
        meta = re.match(r"^(Device type|Name|Description|Device|PCI device):\s*(.*)$", line)
        if meta and not line.startswith("Device #"):
            if current is None:
                current = new_firmware()
                rows.append(current)
            key = {"Device type": "device_type", "Name": "name", "Description": "description", "Device": "device",
                   "PCI device": "device"}[meta.group(1)]
            current[key] = meta.group(2).strip() or None
            continue
        if line.startswith("Configurations:") or (line.startswith("#") and "Next Boot" in line):
            columns = _columns(line.lstrip("#").strip() if line.startswith("#") else line)
            continue
        match = config_row(line)
        if not match:
            continue
        values = match["values"]
        if current is None:
            current = new_firmware()
            rows.append(current)
        if columns == ["next_boot"] and len(values) == 3:
            columns = ["default", "current", "next_boot"]  # a grep that dropped the -e header line
        if len(values) < len(columns):
            if len(values) == 1 and "next_boot" in columns:
                values = [None] * (len(columns) - 1) + values
            else:
                problems.append("mlxconfig: %s has %d values for %d columns: %r"
                                % (match["name"], len(values), len(columns), line))
                continue
        row = dict.fromkeys(("default", "current", "next_boot"))
        row.update((col, value) for col, value in zip(columns, values) if col in row)
        if "new" in columns and "next_boot" in columns:
            row = {"default": None, "current": row["next_boot"], "next_boot": values[columns.index("new")]}
        row["read_only"] = match["read_only"]
        current["configs"][match["name"]] = row
    found = False
    for index, fw in enumerate(rows):
        if not fw["configs"] and not fw["device_type"]:
            continue
        found = True
        for name, field in TYPED.items():
            row = fw["configs"].get(name)
            if row:
                fw[field] = _typed(field, row["next_boot"])
                fw["current"][field] = _typed(field, row["current"])
                if row["next_boot"] is not None and fw[field] is None:
                    problems.append("mlxconfig: %s value %r is not understood" % (name, row["next_boot"]))
        fw["pending"] = sorted(name for name, row in fw["configs"].items()
                               if row["current"] is not None and row["next_boot"] is not None
                               and row["current"] != row["next_boot"])
        key = fw["device"] or ("device%d" % (index + 1))
        facts["firmware"][key] = fw
    return finish(facts, text, found)


# --- nvidia-smi topo -m ----------------------------------------------------------------------------

RELATION = re.compile(r"^(X|SYS|NODE|PHB|PXB|PIX|PXN|SOC|NV\d+)$")
AFFINITY = {"cpu affinity": "cpu_affinity", "numa affinity": "numa_affinity", "gpu numa id": "gpu_numa_id"}


def _cells(line):
    return [cell.strip() for cell in re.split(r"\t+|\s{2,}", line.strip()) if cell.strip()]


def parse_nvidia_smi_topo(text):
    """``nvidia-smi topo -m`` output."""
    facts = new_facts("nvidia_smi_topo")
    topo = facts["topology"]
    problems = facts["problems"]
    header = None
    devices = []
    extra = []
    in_legend = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        if line.strip().startswith("NIC Legend"):
            in_legend = True
            continue
        if line.strip().startswith("Legend"):
            in_legend = False
            continue
        legend = re.match(r"^\s*(NIC\d+):\s*(\S+)\s*$", line)
        if legend and in_legend:
            topo["nics"].setdefault(legend.group(1), {})["device"] = legend.group(2)
            continue
        cells = _cells(line)
        if header is None:
            if raw[:1].isspace() and cells and cells[0] == "GPU0":
                header = cells
                devices = [c for c in cells if c.lower() not in AFFINITY]
                extra = [AFFINITY[c.lower()] for c in cells if c.lower() in AFFINITY]
            continue
        if not cells or cells[0] not in devices:
            continue
        name = cells[0]
        values = cells[1:]
        relations = values[:len(devices)]
        if len(relations) < len(devices):
            problems.append("nvidia_smi_topo: row %s has %d of %d entries: %r"
                            % (name, len(relations), len(devices), line.strip()))
        for other, relation in zip(devices, relations):
            if not RELATION.match(relation):
                problems.append("nvidia_smi_topo: %s/%s relation %r is not a topology code" % (name, other, relation))
                continue
            topo["links"].setdefault(name, {})[other] = relation
        if name.startswith("GPU"):
            info = dict.fromkeys(AFFINITY.values())
            for field, value in zip(extra, values[len(devices):]):
                info[field] = None if value in ("N/A", "") else value
            topo["gpus"][name] = info
        elif not name.startswith("NIC"):
            topo["nics"].setdefault(name, {})["device"] = name
    for nic in [d for d in devices if not d.startswith("GPU")]:
        topo["nics"].setdefault(nic, {}).setdefault("device", None)
    for gpu in topo["gpus"]:
        for nic, info in topo["nics"].items():
            relation = topo["links"].get(gpu, {}).get(nic)
            if relation and info.get("device"):
                topo["gpu_nic"].setdefault(gpu, {})[info["device"]] = relation
    return finish(facts, text, bool(topo["gpus"]))
