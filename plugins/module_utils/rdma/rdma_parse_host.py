# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers of the RDMA host tools into RDMA facts (:mod:`rdma_facts`).

* ``rdma system show`` (``rdma sys``): ``netns shared copy-on-fork on``; iproute2 before 5.13 prints
  ``netns shared`` only, 6.5+ adds ``privileged-qkey``, 6.10+ ``monitor``; ``rdma -j sys`` JSON.
* ``rdma link show``: ``link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens1f0np0``; the
  first iproute2 releases print ``0/1: mlx5_0/1: state ...``; InfiniBand ports add ``subnet_prefix
  lid sm_lid lmc`` (and no netdev before kernel 6.7); ``rdma -j [-d] link`` JSON. A line that starts
  with blank space and no ``link`` continues the previous one (wrapped mail or terminal copies).
* ``show_gids`` (MLNX_OFED/DOCA script; tab or space separated) and the GID sysfs files given as
  ``grep -H . /sys/class/infiniband/*/ports/*/gids/* .../gid_attrs/types/* .../gid_attrs/ndevs/*``.
* ``ibstat`` and ``ibv_devinfo`` (either; recognised by ``CA '...'`` / ``hca_id:``).
* ``ofed_info -s``, ``lsmod``, and ``/sys/module/ib_core/parameters/netns_mode`` (``Y``: shared).
"""

from __future__ import annotations

import json
import re

from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_facts import (
    RDMA_MODULES, device, finish, gid_type, new_facts, new_gid, port, to_int,
)

ON_OFF = {"on": True, "off": False}
LINK_HEAD = re.compile(r"^(?:link\s+|\d+/\d+:\s+)(?P<dev>[^\s/]+)/(?P<port>\d+):?(?P<rest>.*)$")
LINK_KEYS = {"state": "state", "physical_state": "physical_state", "netdev": "netdev",
             "netdev_index": "netdev_index", "subnet_prefix": "subnet_prefix", "lid": "lid", "sm_lid": "sm_lid",
             "link_layer": "link_layer"}
GID_TEXT = re.compile(r"^[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}$")
GID_ROW = re.compile(r"^(?P<dev>\S+)\s+(?P<port>\d+)\s+(?P<index>\d+)\s+(?P<gid>[0-9a-fA-Fx:]{20,})\s*(?P<rest>.*)$")
SYSFS_GID = re.compile(r"^/sys/class/infiniband/(?P<dev>[^/]+)/ports/(?P<port>\d+)/"
                       r"(?P<kind>gids|gid_attrs/types|gid_attrs/ndevs)/(?P<index>\d+):(?P<value>.*)$")
PHYS_STATES = {"linkup": "LINK_UP", "disabled": "DISABLED", "polling": "POLLING", "sleep": "SLEEP",
               "nop": "NOP", "linkerrorrecovery": "LINK_ERROR_RECOVERY", "phytest": "PHY_TEST",
               "portconfigurationtraining": "PORT_CONFIGURATION_TRAINING"}


def _state(text):
    """``PORT_ACTIVE (4)``, ``Active``, ``4: ACTIVE`` -> ``ACTIVE``."""
    text = re.sub(r"\(\d+\)|^\d+:", "", str(text or "")).strip()
    text = text.upper()
    return text[5:] if text.startswith("PORT_") else (text or None)


def _phys_state(text):
    """``LinkUp``, ``LINK_UP (5)``, ``5: LinkUp`` -> ``LINK_UP``."""
    text = re.sub(r"\(\d+\)|^\d+:", "", str(text or "")).strip()
    if not text:
        return None
    return PHYS_STATES.get(text.replace("_", "").replace(" ", "").lower(), text.upper())


# --- rdma system -----------------------------------------------------------------------------------


def parse_rdma_system(text):
    """``rdma system show`` text or ``rdma -j system show`` JSON -> facts with ``system`` filled."""
    facts = new_facts("rdma_system")
    system = facts["system"]
    found = False
    stripped = text.strip()
    if stripped.startswith("[") or stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
            facts["problems"].append("rdma_system: JSON output that does not parse: %r" % stripped[:80])
        for item in (data if isinstance(data, list) else [data] if isinstance(data, dict) else []):
            if not isinstance(item, dict):
                continue
            if item.get("netns") in ("shared", "exclusive"):
                system["netns"] = item["netns"]
                found = True
            for key, field in (("copy-on-fork", "copy_on_fork"), ("privileged-qkey", "privileged_qkey"),
                               ("monitor", "monitor")):
                if key in item:
                    value = item[key]
                    system[field] = ON_OFF.get(value, value) if isinstance(value, str) else bool(value)
        return finish(facts, "" if found else text, found)
    for line in text.splitlines():
        words = line.split()
        if not words or words[0] != "netns":
            continue
        pairs = dict(zip(words[0::2], words[1::2]))
        mode = pairs.get("netns")
        if mode not in ("shared", "exclusive"):
            facts["problems"].append("rdma_system: unknown netns mode in %r" % line.strip())
            continue
        system["netns"] = mode
        found = True
        for key, field in (("copy-on-fork", "copy_on_fork"), ("privileged-qkey", "privileged_qkey"),
                           ("monitor", "monitor")):
            if key in pairs:
                if pairs[key] not in ON_OFF:
                    facts["problems"].append("rdma_system: %s is %r in %r" % (key, pairs[key], line.strip()))
                else:
                    system[field] = ON_OFF[pairs[key]]
    return finish(facts, text, found)


def parse_netns_mode(text):
    """``/sys/module/ib_core/parameters/netns_mode`` (``Y``/``1``: shared, ``N``/``0``: exclusive)."""
    facts = new_facts("netns_mode")
    value = text.strip().split(":")[-1].strip() if text.strip() else ""
    modes = {"y": "shared", "1": "shared", "n": "exclusive", "0": "exclusive"}
    if value.lower() in modes:
        facts["system"]["netns"] = modes[value.lower()]
        return finish(facts, "", True)
    return finish(facts, text, False)


# --- rdma link -------------------------------------------------------------------------------------


def _link_lines(text):
    lines = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        if lines and raw[:1].isspace() and LINK_HEAD.match(lines[-1]) and not LINK_HEAD.match(raw.strip()) \
                and re.match(r"^\s+(state|physical_state|netdev)\b", raw):
            lines[-1] += " " + raw.strip()
            continue
        lines.append(raw.strip())
    return lines


def _put_link(facts, name, number, values):
    entry = port(facts, name, number)
    for key, field in LINK_KEYS.items():
        if key not in values or values[key] in (None, ""):
            continue
        value = values[key]
        if field == "state":
            value = _state(value)
        elif field == "physical_state":
            value = _phys_state(value)
        elif field in ("netdev_index", "lid", "sm_lid"):
            value = to_int(value)
        entry[field] = value
    if entry["link_layer"] is None and entry["subnet_prefix"] is not None:
        entry["link_layer"] = "InfiniBand"


def parse_rdma_link(text):
    """``rdma link show`` text (new and old iproute2) or ``rdma -j [-d] link show`` JSON."""
    facts = new_facts("rdma_link")
    found = False
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except ValueError:
            facts["problems"].append("rdma_link: JSON output that does not parse: %r" % stripped[:80])
            data = []
        for item in data if isinstance(data, list) else []:
            if not isinstance(item, dict) or not item.get("ifname") or to_int(item.get("port")) is None:
                facts["problems"].append("rdma_link: JSON entry without ifname/port: %r" % (item,))
                continue
            _put_link(facts, item["ifname"], to_int(item["port"]), item)
            found = True
        return finish(facts, "" if found else text, found)
    for line in _link_lines(text):
        match = LINK_HEAD.match(line)
        if not match:
            continue
        words = match.group("rest").split()
        values = {}
        index = 0
        while index < len(words):
            key = words[index]
            if key in LINK_KEYS and index + 1 < len(words):
                values[key] = words[index + 1]
                index += 2
            elif key in ("lmc", "type", "parent", "ipoib", "rdma_port_num"):
                index += 2
            else:
                index += 1
        if "state" not in values:
            facts["problems"].append("rdma_link: no state in %r" % line)
        _put_link(facts, match.group("dev"), int(match.group("port")), values)
        found = True
    return finish(facts, text, found)


# --- GIDs ------------------------------------------------------------------------------------------


def parse_show_gids(text):
    """``show_gids`` output, or the GID sysfs files as ``grep -H . <files>`` text (recognised by
    their ``/sys/class/infiniband/`` paths)."""
    if "/sys/class/infiniband/" in text:
        return _parse_gid_sysfs(text)
    facts = new_facts("show_gids")
    found = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("DEV", "---", "n_gids_found")):
            continue
        match = GID_ROW.match(line)
        if not match:
            continue
        rest = match.group("rest").split()
        ipv4 = rest[0] if rest and re.match(r"^\d+\.\d+\.\d+\.\d+$", rest[0]) else None
        if ipv4:
            rest = rest[1:]
        version = rest[0] if rest and rest[0].lower() in ("v1", "v2") else None
        if version is None and len(rest) > 1 and rest[0].lower() in ("roce", "ib/roce") and \
                rest[1].lower() in ("v1", "v2"):
            # a table printed from sysfs, the type as gid_attrs/types says it: "RoCE v2", "IB/RoCE v1"
            version, rest = rest[0] + " " + rest[1], rest[1:]
        netdev = rest[1] if version and len(rest) > 1 else None
        gid = match.group("gid")
        if not GID_TEXT.match(gid):
            facts["problems"].append("show_gids: GID %s is not 8 groups of 4 hex digits in %r" % (gid, line))
        if version is None:
            facts["problems"].append("show_gids: no GID version (v1/v2) in %r" % line)
        entry = new_gid(int(match.group("port")), int(match.group("index")), gid, gid_type(version, netdev),
                        netdev, ipv4)
        device(facts, match.group("dev"))["gids"].append(entry)
        found = True
    if not found and re.search(r"^DEV\s+PORT\s+INDEX", text, re.M) and "n_gids_found=0" in text:
        facts["problems"].append("show_gids: no GIDs (n_gids_found=0)")
        return finish(facts, "", True)
    return finish(facts, text, found)


def _parse_gid_sysfs(text):
    facts = new_facts("show_gids")
    table = {}
    for raw in text.splitlines():
        match = SYSFS_GID.match(raw.strip())
        if not match:
            continue
        key = (match.group("dev"), int(match.group("port")), int(match.group("index")))
        table.setdefault(key, {})[match.group("kind")] = match.group("value").strip()
    found = False
    for (name, number, index), values in sorted(table.items()):
        gid = values.get("gids")
        if not gid or set(gid.replace(":", "")) == {"0"}:
            continue  # an empty slot of the GID table
        if not GID_TEXT.match(gid):
            facts["problems"].append("show_gids: %s port %d GID %d is not a GID: %r" % (name, number, index, gid))
        netdev = values.get("gid_attrs/ndevs")
        device(facts, name)["gids"].append(new_gid(number, index, gid, gid_type(values.get("gid_attrs/types"), netdev),
                                                   netdev))
        found = True
    return finish(facts, text, found)


# --- ibstat / ibv_devinfo --------------------------------------------------------------------------

IBSTAT_DEVICE = {"ca type": "ca_type", "firmware version": "fw_ver", "node guid": "node_guid",
                 "system image guid": "sys_image_guid", "fw_ver": "fw_ver", "node_guid": "node_guid",
                 "sys_image_guid": "sys_image_guid", "board_id": "board_id", "vendor_id": "vendor_id",
                 "vendor_part_id": "vendor_part_id", "transport": "transport"}
IBSTAT_PORT = {"state": "state", "physical state": "physical_state", "phys_state": "physical_state",
               "rate": "rate", "base lid": "lid", "port_lid": "lid", "sm lid": "sm_lid", "sm_lid": "sm_lid",
               "port guid": "port_guid", "link layer": "link_layer", "link_layer": "link_layer"}


def parse_ibstat(text):
    """``ibstat`` (``CA 'mlx5_0'`` blocks) or ``ibv_devinfo`` (``hca_id:`` blocks) output."""
    facts = new_facts("ibstat")
    name = number = None
    found = False
    for raw in text.splitlines():
        line = raw.strip()
        head = re.match(r"^(?:CA '(?P<ca>[^']+)'|hca_id:\s*(?P<hca>\S+))$", line)
        if head:
            name, number = head.group("ca") or head.group("hca"), None
            device(facts, name)
            found = True
            continue
        head = re.match(r"^(?:Port (\d+):|port:\s*(\d+))$", line)
        if head and name:
            number = int(head.group(1) or head.group(2))
            port(facts, name, number)
            continue
        if ":" not in line or name is None:
            continue
        key, value = [part.strip() for part in line.split(":", 1)]
        key = key.lower()
        if number is None and key in IBSTAT_DEVICE:
            field = IBSTAT_DEVICE[key]
            device(facts, name)[field] = re.sub(r"\s*\(\d+\)$", "", value) if field == "transport" else value
        elif number is not None and key in IBSTAT_PORT:
            field = IBSTAT_PORT[key]
            entry = port(facts, name, number)
            if field == "state":
                entry[field] = _state(value)
            elif field == "physical_state":
                entry[field] = _phys_state(value)
            elif field == "rate":
                rate = re.match(r"^(\d+)", value)
                entry[field] = int(rate.group(1)) if rate else None
                if not rate:
                    facts["problems"].append("ibstat: %s port %d rate %r is not a number" % (name, number, value))
            elif field in ("lid", "sm_lid"):
                entry[field] = to_int(value)
            else:
                entry[field] = value
    return finish(facts, text, found)


# --- ofed_info, lsmod --------------------------------------------------------------------------------


def parse_ofed_info(text):
    """``ofed_info -s``: ``MLNX_OFED_LINUX-5.8-1.1.2.1:`` or ``OFED-internal-24.10-1.1.4.0.200:``."""
    facts = new_facts("ofed_info")
    for raw in text.splitlines():
        match = re.match(r"^(MLNX_OFED_LINUX|OFED-internal)-(\d+\.\d+-[0-9.]+?):?$", raw.strip())
        if not match:
            continue
        version = match.group(2)
        if match.group(1) == "MLNX_OFED_LINUX":
            flavour = "mlnx_ofed"
        else:
            flavour = "doca" if int(version.split(".")[0]) >= 24 else "ofed_internal"
        facts["ofed"] = {"version": version, "flavour": flavour, "raw": raw.strip()}
        return finish(facts, "", True)
    return finish(facts, text, False)


def parse_lsmod(text):
    """``lsmod`` (or ``cat /proc/modules``): which RDMA-related modules are loaded."""
    facts = new_facts("lsmod")
    loaded = set()
    for raw in text.splitlines():
        words = raw.split()
        if len(words) >= 2 and words[0] != "Module" and re.match(r"^[A-Za-z0-9_]+$", words[0]) \
                and words[1].isdigit():
            loaded.add(words[0])
    facts["modules"] = {"loaded": sorted(loaded), "rdma": dict((name, name in loaded) for name in RDMA_MODULES)}
    return finish(facts, text, bool(loaded))
