# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ``nic_firmware`` role does to an NVIDIA/Mellanox NIC: the firmware pinned for its PSID, the
non-volatile configuration (nvconfig) the model wants, and the commands between what the card holds and that.

Pure functions; the module reads the host and runs the commands. Nothing read from a device becomes a command
word: PCI addresses are checked against :data:`BDF`, parameter names and values against :data:`PARAM_NAME` and
:data:`PARAM_VALUE`, image paths are the pin table's (checked here), and a PSID or version read from a card or an
image is only compared, never passed on.

**Readers** (formats in ``tests/unit/plugins/module_utils/data/nic_firmware/ORIGIN.md``):

* :func:`parse_mlxfwmanager`: ``mlxfwmanager --query`` (or ``-d <dev>``): per device its type, part number, PSID,
  PCI name, and the ``Versions:`` table (``FW`` is the burned image, ``FW (Running)`` the one running when they
  differ, i.e. a burn waits for a reset).
* :func:`parse_flint_query`: ``flint -d <dev> q`` / ``mstflint -d <dev> q`` (``FW Version`` burned,
  ``FW Version(Running)`` when it differs) and ``flint -i <image> q`` (the image's version and PSID, checked
  before a burn).
* :func:`parse_nvconfig`: ``mlxconfig -d <dev> -e query``: ``Default Current Next Boot`` columns, ``*`` on a
  changed row, ``Name(n)`` values, ``Array[a..b]`` placeholders and ``NAME[i]`` element rows.

**Firmware** (:func:`firmware_plan`): a card whose PSID has no pin is reported (``unpinned``), never flashed; a
BlueField is refused unless its mode is given (``dpu`` or ``nic``) and read back the same; ``ok`` when burned and
running are the pinned version, ``pending`` (reset or reboot) when only the burned one is, ``burn`` otherwise, after
the image's PSID and version (``flint -i <img> q``) match the card and the pin.

**nvconfig** (:func:`nvconfig_plan`): ``set`` holds every parameter whose next-boot value differs from the wanted one
(one ``mlxconfig -y -d <pci> set A=1 B=2`` per NIC); ``reboot`` names every parameter whose running value will differ
from the wanted one after that (next boot != current); a wanted parameter the card does not list is refused.

**Reset** (:func:`reset_plan`): ``mlxfwreset -d <pci> -l 3 -y reset`` when ``mlxfwreset q`` lists level 3 as
supported and no VF or management path is on the device (the refusals of :mod:`host.nic_link_type_state`), a reboot
through the maintenance layer otherwise.
"""

from __future__ import annotations

import hashlib
import re

from ansible_collections.ainet.fabric.plugins.module_utils.common import linux_names
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host import nic_link_type_state as link
from ansible_collections.ainet.fabric.plugins.module_utils.host.sriov_state import firmware_allows
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse_pci import config_row

BDF = link.BDF
BLUEFIELD = link.BLUEFIELD
PSID = re.compile(r"^[A-Za-z0-9_]{2,16}$")
VERSION = re.compile(r"^\d{1,3}\.\d{1,4}\.\d{1,5}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
IMAGE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,200}$")
MIRROR_URL = re.compile(r"^https?://[A-Za-z0-9.-]+(:\d+)?(/[A-Za-z0-9._~%+-]+)*/?$")
MIRROR_PATH = re.compile(r"^/[A-Za-z0-9._+/-]*$")
PARAM_NAME = re.compile(r"^[A-Z0-9_]+(\[\d{1,3}\])?$")
PARAM_VALUE = re.compile(r"^[A-Za-z0-9_]{1,32}$")
VALUE = re.compile(r"^(?P<name>.*?)\((?P<num>[^)]*)\)$")
ARRAY = re.compile(r"^Array\[(?P<lo>\d+)\.\.(?P<hi>\d+)\]$")
ELEMENT = re.compile(r"^(?P<name>[A-Z0-9_]+)\[(?P<index>\d{1,3})\]$")
NUMBER = re.compile(r"^(?:\d+|0[xX][0-9a-fA-F]+)$")
# Parameters the model derives; the raw list may not set them (one fact, one place)
MODEL_PARAMS = re.compile(r"^(SRIOV_EN|NUM_OF_VFS|LINK_TYPE_P\d|ROCE_CC_PRIO_MASK_P\d|CNP_DSCP_P\d|CNP_802P_PRIO_P\d|"
                          r"ATS_ENABLED|ADVANCED_PCI_SETTINGS|INTERNAL_CPU_OFFLOAD_ENGINE)$")
# Parameters mlxconfig shows and takes only with ADVANCED_PCI_SETTINGS=True (NVIDIA MFT user manual, mlxconfig
# "Advanced PCI settings"; nic-configuration-operator api/v1alpha1 PciPerformanceOptimizedSpec)
NEEDS_ADVANCED_PCI = frozenset(("MAX_ACC_OUT_READ", "PCI_WR_ORDERING"))
# PCIe Device Control (CAP_EXP+08), bits 14:12: max read request = 128 << n (PCI Express Base spec 7.5.3.4)
MAX_READ_REQUEST = {128 << n: n for n in range(6)}
RESET_LEVEL = 3


class NicFirmwareError(FabricError):
    """A refusal: one line naming the card, what is wrong and how to fix it."""


# --- readers -------------------------------------------------------------------------------------------

def number(raw):
    """The number of an mlxconfig value, in decimal whatever its base (mlxconfig takes ``0x10`` and prints ``16``):
    ``ETH(2)`` -> ``2``, ``True(1)`` -> ``1``, ``8`` -> ``8``, ``0x10``/``0X10`` -> ``16``; a bare symbol
    (``HOST_0``) stays as it is, upper-cased; None for None."""
    if raw is None:
        return None
    text = raw.strip()
    match = VALUE.match(text)
    if match:
        text = match.group("num").strip()
    if NUMBER.match(text):
        return str(int(text, 16 if text[1:2] in ("x", "X") else 10))
    return text.upper()


def symbol(raw):
    """The name part of an mlxconfig value (``ETH(2)`` -> ``ETH``), or None."""
    match = VALUE.match((raw or "").strip())
    return match.group("name").strip().upper() or None if match else None


def parse_nvconfig(text):
    """``mlxconfig -d <dev> -e query [NAMES]`` (or ``mstconfig``): ``{"device_type", "description", "device",
    "columns", "params": {name: {"default", "current", "next_boot", "changed", "read_only", "array"}}, "problems"}``.

    Rows are read by :func:`rdma_parse_pci.config_row` (the one reader of mlxconfig rows). Values are kept as
    printed (``ETH(2)``); :func:`number` compares them. ``changed`` is the row's ``*`` (mlxconfig: the next value
    differs from the default or current one), ``read_only`` its ``RO`` (mstflint >= 4.25). ``array`` is ``(lo, hi)`` on an
    ``Array[lo..hi]`` placeholder row, whose elements a query of ``NAME[lo..hi]`` lists as ``NAME[i]`` rows.
    Without ``-e`` only ``Next Boot`` is printed; ``default``/``current`` are then None (unknown, never equal)."""
    out = {"device_type": None, "description": None, "device": None, "columns": None, "params": {},
           "problems": []}
    columns = ["next_boot"]
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line or line.startswith("The '*'") or set(line) <= {"-"}:
            continue
        meta = re.match(r"^(Device type|Description|Device|PCI device|Name):\s*(.*)$", line)
        if meta:
            key = {"Device type": "device_type", "Description": "description", "Device": "device",
                   "PCI device": "device", "Name": "name"}[meta.group(1)]
            if key != "name":
                out[key] = meta.group(2).strip() or None
            continue
        if line.startswith("Configurations:"):
            names = [n.strip().lower() for n in re.split(r"\s{2,}", line.split(":", 1)[1].strip()) if n.strip()]
            columns = [{"default": "default", "current": "current", "next boot": "next_boot"}.get(n) for n in names]
            if None in columns or not columns:
                out["problems"].append("mlxconfig: the column header %r is not understood" % line)
                columns = ["next_boot"]
            out["columns"] = columns
            continue
        match = config_row(line)
        if not match:
            continue
        values = match["values"]
        if len(values) != len(columns):
            out["problems"].append("mlxconfig: %s has %d values for the %d columns %s: %r"
                                   % (match["name"], len(values), len(columns), ", ".join(columns), line))
            continue
        row = dict.fromkeys(("default", "current", "next_boot"))
        row.update(zip(columns, values))
        array = ARRAY.match(row["next_boot"])
        row["changed"] = match["changed"]
        row["read_only"] = match["read_only"]
        row["array"] = (int(array.group("lo")), int(array.group("hi"))) if array else None
        out["params"][match["name"]] = row
    if not out["params"] and not out["problems"]:
        out["problems"].append("mlxconfig: no configuration rows in the output")
    return out


def _versions(lines):
    result = {}
    for line in lines:
        match = re.match(r"^(?P<what>FW \(Running\)|FW|PXE|UEFI(?: Virtio \w+)?|FCODE)\s{2,}(?P<cur>\S+)"
                         r"(?:\s+(?P<avail>\S+))?\s*$", line.strip())
        if match:
            key = {"FW": "fw", "FW (Running)": "fw_running"}.get(match.group("what"), match.group("what").lower())
            result[key] = None if match.group("cur") == "N/A" else match.group("cur")
            if key == "fw":
                avail = match.group("avail")
                result["available"] = None if avail in (None, "N/A") else avail
    return result


def parse_mlxfwmanager(text):
    """``mlxfwmanager --query`` / ``mlxfwmanager -d <dev> [--query]``: ``{"devices": [{"device_type", "part_number",
    "description", "psid", "pci", "fw", "fw_running", "available", "status"}], "problems"}``. ``fw`` is the burned
    version; ``fw_running`` the running one (the burned one when the tool prints no ``FW (Running)`` row)."""
    devices = []
    problems = []
    current = None
    version_lines = None
    keys = {"Device Type": "device_type", "Part Number": "part_number", "Description": "description",
            "PSID": "psid", "PCI Device Name": "pci", "Status": "status", "Base GUID": "base_guid",
            "Base MAC": "base_mac"}
    for raw in (text or "").splitlines():
        line = raw.strip()
        if re.match(r"^Device #\d+:", line):
            if current is not None:
                current.update(_versions(version_lines))
            current = dict.fromkeys(("device_type", "part_number", "description", "psid", "pci", "fw", "fw_running",
                                     "available", "status"))
            devices.append(current)
            version_lines = []
            continue
        if current is None:
            continue
        field = re.match(r"^(?P<key>[A-Za-z ]+?):\s*(?P<value>.*)$", line)
        if field and field.group("key") == "Versions":
            continue
        if field and field.group("key") in keys:
            current[keys[field.group("key")]] = field.group("value").strip() or None
            continue
        version_lines.append(raw)
    if current is not None:
        current.update(_versions(version_lines))
    for device in devices:
        if device["fw"] and not device["fw_running"]:
            device["fw_running"] = device["fw"]
        if not device["psid"] or not device["fw"]:
            problems.append("mlxfwmanager: device %s: no %s in the output"
                            % (device["pci"] or "?", "PSID" if not device["psid"] else "FW version"))
    if not devices:
        problems.append("mlxfwmanager: no 'Device #' in the output")
    return {"devices": devices, "problems": problems}


def parse_flint_query(text):
    """``flint -d <dev> q`` / ``flint -i <image> q`` (``mstflint`` the same): ``{"image_type", "fw", "fw_running",
    "psid", "product_version", "description", "problems"}``. ``fw_running`` is the burned one unless the tool
    prints ``FW Version(Running)`` (a burn not activated yet)."""
    out = dict.fromkeys(("image_type", "fw", "fw_running", "psid", "product_version", "description"))
    keys = {"Image type": "image_type", "FW Version": "fw", "FW Version(Running)": "fw_running",
            "FW Version (Running)": "fw_running", "PSID": "psid", "Product Version": "product_version",
            "Description": "description"}
    for raw in (text or "").splitlines():
        match = re.match(r"^(?P<key>[A-Za-z][A-Za-z ()]*?):\s+(?P<value>\S.*?)\s*$", raw)
        if match and match.group("key") in keys and out[keys[match.group("key")]] is None:
            out[keys[match.group("key")]] = match.group("value")
    out["problems"] = ["flint: no %s in the output" % what for what, key in (("FW Version", "fw"), ("PSID", "psid"))
                       if not out[key]]
    if out["fw"] and not out["fw_running"]:
        out["fw_running"] = out["fw"]
    return out


# --- pins ----------------------------------------------------------------------------------------------

def check_mirror(mirror, field="nic_firmware_mirror"):
    """The offline mirror: an absolute directory or an http(s) URL without credentials or query."""
    text = str(mirror or "")
    if MIRROR_PATH.match(text) and "/../" not in text + "/" and "/./" not in text + "/":
        return text.rstrip("/") or "/"
    if MIRROR_URL.match(text):
        return text.rstrip("/")
    raise NicFirmwareError("%s: %r is not an absolute directory or an http(s) URL without login, query or "
                           "'..' (e.g. /srv/nic-firmware or https://mirror.example/nic-firmware)" % (field, mirror))


def check_pins(pins, field="nic_firmware_pins"):
    """The pin table ``{PSID: {"version", "image", "sha256"}}``, checked; returns it with PSIDs upper-cased."""
    if not isinstance(pins, dict):
        raise NicFirmwareError("%s: %r is not a mapping of PSID to {version, image, sha256}" % (field, pins))
    out = {}
    for psid, pin in pins.items():
        where = "%s.%s" % (field, psid)
        if not isinstance(psid, str) or not PSID.match(psid):
            raise NicFirmwareError("%s: the PSID %r is not a PSID (letters, digits, _; e.g. MT_0000000436)"
                                   % (field, psid))
        if not isinstance(pin, dict):
            raise NicFirmwareError("%s: %r is not a mapping of version, image, sha256" % (where, pin))
        unknown = sorted(set(pin) - {"version", "image", "sha256"})
        if unknown:
            raise NicFirmwareError("%s.%s: is not a key of a pin (use version, image, sha256)" % (where, unknown[0]))
        version = str(pin.get("version", ""))
        if not VERSION.match(version):
            raise NicFirmwareError("%s.version: %r is not a firmware version (e.g. 22.43.1014)"
                                   % (where, pin.get("version")))
        image = str(pin.get("image", ""))
        if not IMAGE_NAME.match(image) or ".." in image:
            raise NicFirmwareError("%s.image: %r is not a file name in the mirror (no '/', no '..')"
                                   % (where, pin.get("image")))
        sha = str(pin.get("sha256", "")).lower()
        if not SHA256.match(sha):
            raise NicFirmwareError("%s.sha256: %r is not a SHA-256 (64 hex digits)" % (where, pin.get("sha256")))
        if psid.upper() in out:
            raise NicFirmwareError("%s: the PSID is pinned twice (PSIDs compare case-insensitively)" % where)
        out[psid.upper()] = {"version": version, "image": image, "sha256": sha}
    return out


def check_pci(pci, field):
    text = str(pci or "").strip().lower()
    if len(text) == 7:
        text = "0000:" + text
    if not BDF.match(text):
        raise NicFirmwareError("%s: %r is not a PCI address (write it as 0000:3b:00.0)" % (field, pci))
    return text


# --- firmware ------------------------------------------------------------------------------------------

def firmware_plan(card, pins, bluefield_modes=None, image=None, host=None):
    """The firmware outcome of one card (a device of :func:`parse_mlxfwmanager`, plus ``device_id`` and ``mode``
    read from sysfs and ``INTERNAL_CPU_OFFLOAD_ENGINE``): ``{"pci", "psid", "fw", "fw_running", "pinned", "action",
    "image", "argv", "reset", "refusal"}``; ``action`` is ``ok``, ``pending`` (burned, not running: reset or
    reboot), ``burn``, ``unpinned`` (reported, never flashed) or ``refused`` (``refusal`` says why).
    ``image``: the parsed ``flint -i <image> q`` of the pinned image (None before it was read: ``burn`` then
    says ``image_check: needed`` and carries no argv)."""
    pci = card["pci"]
    where = "%s: %s" % (host, pci) if host else pci
    psid = (card.get("psid") or "").upper()
    result = {"pci": pci, "psid": psid or None, "fw": card.get("fw"), "fw_running": card.get("fw_running"),
              "pinned": None, "action": "ok", "image": None, "argv": None, "reset": False, "refusal": None}
    model = BLUEFIELD.get((card.get("device_id") or "").lower())
    if model:
        wanted_mode = (bluefield_modes or {}).get(pci)
        if wanted_mode not in ("dpu", "nic") or card.get("mode") != wanted_mode:
            result.update(action="refused", refusal=(
                "nic_firmware: %s is a %s; its mode is %s and nic_firmware_bluefield_modes gives %s: not touched. "
                "Fix: give its mode (dpu or nic) in nic_firmware_bluefield_modes, the same as "
                "'mlxconfig -d %s -e q INTERNAL_CPU_OFFLOAD_ENGINE' reads"
                % (where, model, card.get("mode") or "unread", wanted_mode or "none", pci)))
            return result
    pin = pins.get(psid) if psid else None
    if pin is None:
        result.update(action="unpinned", refusal=(
            "nic_firmware: %s (PSID %s, firmware %s) has no pin in nic_firmware_pins: reported, not flashed"
            % (where, psid or "unread", card.get("fw") or "unread")))
        return result
    result.update(pinned=pin["version"], image=pin["image"])
    if card.get("fw") == pin["version"]:
        if card.get("fw_running") != pin["version"]:
            result.update(action="pending", reset=True)
        return result
    result["action"] = "burn"
    result["reset"] = True
    if image is None:
        result["image_check"] = "needed"
        return result
    problem = None
    if (image.get("psid") or "").upper() != psid:
        problem = "its PSID is %s, the card's %s" % (image.get("psid") or "unread", psid)
    elif image.get("fw") != pin["version"]:
        problem = "its version is %s, the pin's %s" % (image.get("fw") or "unread", pin["version"])
    if problem:
        result.update(action="refused", reset=False, refusal=(
            "nic_firmware: %s: the image %s pinned for PSID %s does not fit: %s; not burned. Fix: put the image of "
            "PSID %s version %s in the mirror and its sha256 in the pin"
            % (where, pin["image"], psid, problem, psid, pin["version"])))
    return result


def burn_argv(pci, image_path, tool="flint"):
    """``flint -d <pci> -i <image> -y burn``: ``image_path`` is the checked local copy of the pinned image."""
    check_pci(pci, "pci")
    if not MIRROR_PATH.match(image_path or ""):
        raise NicFirmwareError("nic_firmware: image path %r is not an absolute path" % (image_path,))
    return [tool, "-d", pci, "-i", image_path, "-y", "burn"]


def sha256_of(path):
    """The SHA-256 (hex) of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def image_query_argv(image_path, tool="flint"):
    return [tool, "-i", image_path, "q"]


# --- nvconfig ------------------------------------------------------------------------------------------

def check_raw(raw, field="nic_firmware_nvconfig", allow=()):
    """The raw list ``[{"name": "KEEP_ETH_LINK_UP_P1", "value": 1}]`` (or a mapping), checked: names
    ``[A-Z0-9_]+`` with an optional ``[n]``, values letters, digits or ``_``, none the model derives."""
    items = list(raw.items()) if isinstance(raw, dict) else None
    if items is None:
        if not isinstance(raw, list):
            raise NicFirmwareError("%s: %r is not a list of {name, value}" % (field, raw))
        items = []
        for index, entry in enumerate(raw):
            if not isinstance(entry, dict) or set(entry) != {"name", "value"}:
                raise NicFirmwareError("%s[%d]: %r is not {name, value}" % (field, index, entry))
            items.append((entry["name"], entry["value"]))
    out = {}
    for name, value in items:
        if not isinstance(name, str) or not PARAM_NAME.match(name):
            raise NicFirmwareError("%s: the name %r is not an nvconfig parameter ([A-Z0-9_]+ with an optional [n])"
                                   % (field, name))
        if MODEL_PARAMS.match(name) and name not in allow:
            raise NicFirmwareError("%s.%s: is derived from the model (SR-IOV, link type, QoS profile, GPUDirect, "
                                   "PCI settings); set it there, not in the raw list" % (field, name))
        text = str(int(value)) if isinstance(value, bool) else str(value)
        if not PARAM_VALUE.match(text):
            raise NicFirmwareError("%s.%s: the value %r is not a number or a symbol (letters, digits, _)"
                                   % (field, name, value))
        if name in out:
            raise NicFirmwareError("%s.%s: given twice" % (field, name))
        out[name] = text
    return out


# Parameters whose wanted value is a floor: the card agrees with any value at or above it
AT_LEAST = {"NUM_OF_VFS": firmware_allows}


def _equal(wanted, raw, name=None):
    """A wanted value (``2``, ``0x10``, ``ETH``, ``True``) against a printed one (``ETH(2)``, ``16``): numbers as
    numbers whatever their base, names as names; None/array never equal. For a parameter of :data:`AT_LEAST`
    (``name``) a printed number at or above the wanted one agrees."""
    if raw is None or ARRAY.match(raw):
        return False
    want = wanted.strip().upper()
    alias = {"TRUE": "1", "FALSE": "0", "ENABLED": "1", "DISABLED": "0"}
    if number(raw) == number(wanted) or symbol(raw) == want:
        return True
    floor = AT_LEAST.get(name)
    if floor is not None and NUMBER.match(number(raw)) and NUMBER.match(number(wanted)):
        return floor(int(number(raw)), int(number(wanted)))
    return alias.get(want) is not None and number(raw) == alias[want] and symbol(raw) in (None, "TRUE", "FALSE")


def element_queries(wanted, query):
    """The ``NAME[lo..hi]`` arguments of ``mlxconfig -e query`` that list the element rows of the arrays ``wanted``
    names by element (``NAME[i]``) and ``query`` (:func:`parse_nvconfig`) shows only as an ``Array[lo..hi]`` row
    (mlxconfig prints the elements only when asked for them; the operator's ``queryMLXConfig`` asks so). The name is
    the checked wanted one, ``lo``/``hi`` integers the card printed."""
    params = query.get("params") or {}
    out = []
    for name in sorted(wanted):
        element = ELEMENT.match(name)
        row = params.get(element.group("name")) if element and name not in params else None
        if row and row.get("array"):
            ask = "%s[%d..%d]" % (element.group("name"), row["array"][0], row["array"][1])
            if ask not in out:
                out.append(ask)
    return out


def merge_nvconfig(query, elements):
    """``query`` with the rows of a parsed ``mlxconfig -e query NAME[lo..hi]`` (``elements``) added; their problems
    too. Returns ``query``."""
    query["params"].update((name, row) for name, row in (elements.get("params") or {}).items()
                           if name not in query["params"])
    query["problems"] = list(query.get("problems") or []) + list(elements.get("problems") or [])
    return query


def nvconfig_plan(pci, wanted, query, tool="mlxconfig", host=None):
    """One NIC's nvconfig outcome: ``{"pci", "set": {name: value}, "argv", "reboot": [names], "diff": [{name,
    current, next_boot, wanted}], "deferred": [names]}``. ``wanted``: ``{name: value}``; ``query``: the parsed
    ``mlxconfig -e query`` (:func:`parse_nvconfig`), with the element rows of :func:`element_queries` merged
    (:func:`merge_nvconfig`): an element ``NAME[i]`` compares and sets as a parameter of its own. Values compare
    by :func:`_equal` (``NUM_OF_VFS`` is a floor: a card allowing more VFs than wanted is left as it is, as the
    sriov role does). Raises NicFirmwareError (one line) on a parameter the card does not list (after
    ADVANCED_PCI_SETTINGS where it needs it), an element outside its array, a read-only parameter (``RO``) that
    would need a set, or an unreadable query."""
    where = "%s: %s" % (host, pci) if host else pci
    params = query.get("params") or {}
    if query.get("problems") and not params:
        raise NicFirmwareError("nic_firmware: %s: the nvconfig could not be read: %s"
                               % (where, "; ".join(query["problems"])))
    advanced = params.get("ADVANCED_PCI_SETTINGS")
    advanced_on = advanced is not None and _equal("1", advanced["next_boot"])
    result = {"pci": pci, "set": {}, "argv": None, "reboot": [], "diff": [], "deferred": []}
    for name in sorted(wanted):
        value = str(wanted[name])
        row = params.get(name)
        element = ELEMENT.match(name)
        array = (params.get(element.group("name")) or {}).get("array") if element else None
        if row is None and array and not array[0] <= int(element.group("index")) <= array[1]:
            raise NicFirmwareError("nic_firmware: %s (%s): %s is outside the array %s[%d..%d]: not set. Fix: give an "
                                   "element %d..%d" % (where, query.get("device_type") or "unknown model", name,
                                                       element.group("name"), array[0], array[1], array[0], array[1]))
        if row is None and array:
            raise NicFirmwareError("nic_firmware: %s: the element rows of the array %s[%d..%d] were not read (mlxconfig "
                                   "-e query %s[%d..%d]): %s not set" % (where, element.group("name"), array[0],
                                                                         array[1], element.group("name"), array[0],
                                                                         array[1], name))
        if row is None:
            if name in NEEDS_ADVANCED_PCI and not advanced_on and "ADVANCED_PCI_SETTINGS" in wanted:
                result["deferred"].append(name)
                continue
            raise NicFirmwareError("nic_firmware: %s (%s) does not list the nvconfig parameter %s: not set. Fix: "
                                   "leave it out for this card model, or update its firmware"
                                   % (where, query.get("device_type") or "unknown model", name))
        if row.get("array"):
            raise NicFirmwareError("nic_firmware: %s: %s is an array (%s); set its elements as %s[n]"
                                   % (where, name, row["next_boot"], name))
        if not _equal(value, row["next_boot"], name):
            if row.get("read_only"):
                raise NicFirmwareError("nic_firmware: %s (%s): %s is read-only (mlxconfig marks it RO) and is %s, not "
                                       "%s: not set. Fix: leave it out for this card model"
                                       % (where, query.get("device_type") or "unknown model", name, row["next_boot"],
                                          value))
            result["set"][name] = value
        if not _equal(value, row["current"], name):
            result["reboot"].append(name)
        if name in result["set"] or name in result["reboot"]:
            result["diff"].append({"name": name, "current": row["current"], "next_boot": row["next_boot"],
                                   "wanted": value})
    if result["set"]:
        result["argv"] = [tool, "-y", "-d", check_pci(pci, "pci"), "set"] + [
            "%s=%s" % (name, result["set"][name]) for name in sorted(result["set"])]
    return result


def wanted_params(nic, port, common):
    """``{name: value}`` for one NIC function (``port``: 1 for function .0, 2 for .1): its own values plus the
    host-wide ``common`` ones (GPUDirect, ADVANCED_PCI_SETTINGS, the raw list)."""
    out = dict(common)
    out["LINK_TYPE_P%d" % port] = str(link.VALUE[nic["link_type"]])
    if nic.get("sriov_vfs") is not None:
        out["SRIOV_EN"] = "1"
        out["NUM_OF_VFS"] = str(nic["sriov_vfs"])
    roce = nic.get("roce")
    if roce:
        out["ROCE_CC_PRIO_MASK_P%d" % port] = str(roce["cc_prio_mask"])
        out["CNP_DSCP_P%d" % port] = str(roce["cnp_dscp"])
        out["CNP_802P_PRIO_P%d" % port] = str(roce["cnp_priority"])
    return out


# Host-wide parameters the action derives from the model and sends in ``params`` besides the raw list
COMMON_MODEL_PARAMS = ("ATS_ENABLED", "ADVANCED_PCI_SETTINGS")


def check_nics(nics, field="nics"):
    """The module's flat ``nics`` (:mod:`desired.nic_firmware`), checked: one line naming the entry otherwise."""
    if not isinstance(nics, list):
        raise NicFirmwareError("%s: %r is not a list" % (field, nics))
    out = []
    for index, nic in enumerate(nics):
        where = "%s[%d]" % (field, index)
        if not isinstance(nic, dict):
            raise NicFirmwareError("%s: %r is not a mapping" % (where, nic))
        problem = linux_names.host_ifname_problem(nic.get("nic"), where + ".nic")
        if problem:
            raise NicFirmwareError(problem)
        if nic.get("link_type") not in link.VALUE:
            raise NicFirmwareError("%s.link_type: %r is not ETH or IB" % (where, nic.get("link_type")))
        vfs = nic.get("sriov_vfs")
        if vfs is not None and (isinstance(vfs, bool) or not isinstance(vfs, int) or not 0 <= vfs <= 1024):
            raise NicFirmwareError("%s.sriov_vfs: %r is not a VF count (0..1024)" % (where, vfs))
        roce = nic.get("roce")
        if roce is not None:
            limits = {"cc_prio_mask": 255, "cnp_dscp": 63, "cnp_priority": 7}
            if not isinstance(roce, dict) or set(roce) != set(limits):
                raise NicFirmwareError("%s.roce: %r is not {cc_prio_mask, cnp_dscp, cnp_priority}" % (where, roce))
            for key, top in limits.items():
                if isinstance(roce[key], bool) or not isinstance(roce[key], int) or not 0 <= roce[key] <= top:
                    raise NicFirmwareError("%s.roce.%s: %r is not 0..%d" % (where, key, roce[key], top))
        pci = check_pci(nic["pci"], where + ".pci") if nic.get("pci") is not None else None
        out.append({"nic": nic["nic"], "pci": pci, "fabric": nic.get("fabric"), "link_type": nic["link_type"],
                    "sriov_vfs": vfs, "roce": roce})
    return out


# --- runtime PCIe max read request ----------------------------------------------------------------------

def check_max_read_request(size, field="nic_firmware_max_read_request"):
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(size, int) or size not in MAX_READ_REQUEST:
        raise NicFirmwareError("%s: %r is not a PCIe max read request size (one of %s bytes)"
                               % (field, size, ", ".join(str(s) for s in sorted(MAX_READ_REQUEST))))
    return size


def parse_devctl(text):
    """``setpci -s <pci> CAP_EXP+08.w`` (a 16-bit hex word): the max read request size in bytes, or None."""
    match = re.match(r"^\s*([0-9a-fA-F]{1,4})\s*$", text or "")
    if not match:
        return None
    return 128 << ((int(match.group(1), 16) >> 12) & 0x7)


def devctl_argv(pci, size=None):
    """``setpci -s <pci> CAP_EXP+08.w`` to read; with ``size``, ``...=<n<<12>:7000`` to write bits 14:12 only."""
    pci = check_pci(pci, "pci")
    if size is None:
        return ["setpci", "-s", pci, "CAP_EXP+08.w"]
    return ["setpci", "-s", pci, "CAP_EXP+08.w=%04x:7000" % (MAX_READ_REQUEST[check_max_read_request(size)] << 12)]


# --- reset ---------------------------------------------------------------------------------------------

def reset_plan(pci, fwreset_query, functions, management, host=None, reboot_allowed=False):
    """How a card's new firmware or nvconfig gets running: ``{"how": "reset"|"reboot"|"pending", "argv", "why"}``.
    A firmware reset at level 3 when ``mlxfwreset -d <pci> q`` (parsed) supports it and no VF or management path
    is on the device; otherwise a reboot through the maintenance layer with ``reboot_allowed`` (fabric_reboot), or
    ``pending`` (reported, nothing done)."""
    device = link.device_of(pci)
    refusal = (link.reset_level_refusal(pci, RESET_LEVEL, fwreset_query or {}, host)
               or link.vf_refusal(device, functions or {}, host)
               or link.reset_refusal([pci], management or {}))
    if refusal is None:
        return {"how": "reset", "argv": link.reset_argv(pci, level=RESET_LEVEL), "why": None}
    why = re.sub(r"^nic_link_type: ", "", re.sub(r"(; not reset)?\.? Fix: .*$", "", refusal))
    return {"how": "reboot" if reboot_allowed else "pending", "argv": None, "why": why}
