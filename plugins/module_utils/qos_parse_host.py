# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers of a host NIC's lossless settings: ``mlnx_qos``, iproute2 ``dcb``, the sysfs files.

Each returns QoS facts (:mod:`qos_facts`) with one port, keyed by ``port`` (the interface)
or ``""``. Unknown lines are ignored; a field the output does not show stays ``None``; what
cannot be read is a line in ``problems``, never an exception.

``mlnx_qos -i <if>`` (NVIDIA, MLNX_OFED 4.x and DOCA/5.x+)::

    DCBX mode: OS controlled
    Priority trust state: dscp          (older: "Priority trust mode: pcp")
    dscp2prio mapping:
            prio:0 dscp:07,06,05,04,03,02,01,00,
    Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,   (newer, optional)
    PFC configuration:
            priority    0   1   2   3   4   5   6   7
            enabled     0   0   0   1   0   0   0   0
            buffer      0   0   0   1   0   0   0   0          (newer, optional)
    tc: 3 ratelimit: unlimited, tsa: ets, bw: 13%
             priority:  3

A priority has a lossless buffer when it has PFC and the receive buffer it maps to (the
``buffer`` row) has a size above zero; without those rows ``buffer_lossless`` is ``None``.

iproute2 ``dcb`` (concatenated ``dcb pfc|ets|app|apptrust|buffer show dev <if>``)::

    pfc-cap 8 macsec-bypass off delay 4096
    prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off
    tc-bw 0:50 1:0 ... / tc-tsa 0:ets 1:ets ... 6:strict / prio-tc 0:0 1:1 ...
    dscp-prio 26:3 48:6            (names too: AF31:3 CS6:6)
    order dscp pcp                 (apptrust)
    prio-buffer 0:0 1:0 2:0 3:1 ... / buffer-size 0:130944 1:130944 ...

``dcb -j`` JSON objects (one per line or concatenated) are read for the same keys.

sysfs: a mapping ``{path: content}`` or ``grep -H . <files>`` text (``path:value`` lines):
``/sys/class/net/<if>/ecn/roce_{rp,np}/enable/<prio>``, ``.../ecn/roce_np/cnp_dscp``,
``.../ecn/roce_np/cnp_802p_prio``, ``/sys/class/net/<if>/mtu``,
``/sys/class/infiniband/<dev>/tc/1/traffic_class`` (a bare number, or ``Global tclass=N``)
and the rdma_cm ``/sys/kernel/config/rdma_cm/<dev>/ports/1/default_roce_tos``.
"""

from __future__ import annotations

import json
import re

from ansible_collections.ainet.fabric.plugins.module_utils.qos_facts import new_facts, new_settings

DSCP_NAMES = {"CS%d" % n: 8 * n for n in range(8)}
DSCP_NAMES.update({"AF%d%d" % (c, d): 8 * c + 2 * d for c in range(1, 5) for d in range(1, 4)})
DSCP_NAMES.update({"EF": 46, "VA": 44, "LE": 1, "DF": 0, "BE": 0})
_PAIR = re.compile(r"^([A-Za-z0-9]+):([A-Za-z0-9]+)$")


def _one(settings, port, fmt, problems):
    return new_facts(fmt, {port or "": settings}, problems)


def _text(text):
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return str(text or "").replace("\r\n", "\n").replace("\r", "\n")


def _row(line):
    """``enabled     0   0   0   1 ...`` -> [0, 0, 0, 1, ...] (None when not all numbers)."""
    parts = line.split()[1:]
    try:
        return [int(p) for p in parts]
    except ValueError:
        return None


def parse_mlnx_qos(text, port=None):
    """``mlnx_qos -i <if>`` output -> QoS facts (format ``mlnx_qos``)."""
    text = _text(text)
    s = new_settings()
    problems = []
    pfc_row = buffer_row = sizes = None
    dscp_map = {}
    ets = {}
    prio_tc = {}
    tc = None
    section = None
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        low = line.lower()
        if low.startswith("dcbx mode:"):
            s["dcbx"] = line.split(":", 1)[1].strip()
        elif low.startswith("priority trust"):
            value = line.split(":", 1)[1].strip().lower()
            s["trust"] = {"both": "pcp,dscp", "pcp,dscp": "pcp,dscp", "dscp": "dscp", "pcp": "pcp"}.get(value, value)
        elif low.startswith("dscp2prio mapping"):
            section = "dscp"
        elif section == "dscp" and low.startswith("prio:"):
            match = re.match(r"prio:\s*(\d+)\s+dscp:\s*([\d,\s]*)", line)
            if match:
                for item in match.group(2).replace(" ", "").split(","):
                    if item.isdigit():
                        dscp_map[int(item)] = int(match.group(1))
            else:
                problems.append("mlnx_qos: cannot read dscp2prio line %r" % line)
        elif low.startswith("receive buffer size"):
            values = line.split(":", 1)[1].split(",")
            sizes = [int(v) for v in values if v.strip().isdigit()]
        elif low.startswith("pfc configuration"):
            section = "pfc"
        elif section == "pfc" and low.startswith("enabled"):
            pfc_row = _row(line)
        elif section == "pfc" and low.startswith("buffer"):
            buffer_row = _row(line)
        elif low.startswith("tc:"):
            section = "tc"
            match = re.match(r"tc:\s*(\d+)\s+ratelimit:[^,]*,\s*tsa:\s*(\w+)(?:,\s*bw:\s*(\d+)\s*%)?", line)
            if not match:
                problems.append("mlnx_qos: cannot read %r" % line)
                tc = None
                continue
            tc = int(match.group(1))
            mode = match.group(2).lower()
            ets[tc] = {"mode": mode if mode in ("ets", "strict") else "vendor",
                       "weight": int(match.group(3)) if match.group(3) else None}
        elif section == "tc" and tc is not None and low.startswith("priority:"):
            for item in line.split(":", 1)[1].replace(",", " ").split():
                if item.isdigit():
                    prio_tc[int(item)] = tc
        elif low.startswith("pfc_cap") or low.startswith("pfc cap"):
            digits = re.findall(r"\d+", line)
            s["pfc_capable"] = int(digits[0]) if digits else None
    if dscp_map:
        s["dscp_to_priority"] = dscp_map
    if pfc_row is not None:
        if len(pfc_row) != 8:
            problems.append("mlnx_qos: the PFC 'enabled' row has %d values, not 8" % len(pfc_row))
        s["pfc"] = [p for p, on in enumerate(pfc_row[:8]) if on]
        if buffer_row is not None and sizes is not None:
            s["buffer_lossless"] = [p for p in s["pfc"]
                                    if p < len(buffer_row) and buffer_row[p] < len(sizes) and sizes[buffer_row[p]] > 0]
    if ets:
        s["ets"] = ets
    if prio_tc:
        s["priority_to_queue"] = prio_tc
    if not text.strip():
        problems.append("mlnx_qos: empty output")
    elif s["trust"] is None and s["pfc"] is None and not ets:
        problems.append("mlnx_qos: no trust, PFC or tc line found; is this mlnx_qos output?")
    return _one(s, port, "mlnx_qos", problems)


def _dscp(token):
    if token.isdigit():
        return int(token)
    return DSCP_NAMES.get(token.upper())


def _pairs(tokens):
    out = []
    for token in tokens:
        match = _PAIR.match(token)
        if match:
            out.append((match.group(1), match.group(2)))
    return out


def _dcb_json(obj, s, state):
    if not isinstance(obj, dict):
        return
    if "prio_pfc" in obj and isinstance(obj["prio_pfc"], dict):
        s["pfc"] = sorted(int(p) for p, on in obj["prio_pfc"].items() if on in (True, "on", 1))
    if "pfc_cap" in obj:
        s["pfc_capable"] = obj["pfc_cap"]
    for key, target in (("tc_tsa", "tsa"), ("tc_bw", "bw"), ("prio_tc", "prio_tc"), ("prio_buffer", "prio_buffer"),
                        ("buffer_size", "buffer_size")):
        value = obj.get(key)
        if isinstance(value, dict):
            state[target] = {int(k): v for k, v in value.items()}
        elif isinstance(value, list):
            state[target] = dict(enumerate(value))
    for item in obj.get("dscp_prio") or ():
        if isinstance(item, (list, tuple)) and len(item) == 2:
            state["dscp"][int(item[0])] = int(item[1])
        elif isinstance(item, dict) and "dscp" in item and "prio" in item:
            state["dscp"][int(item["dscp"])] = int(item["prio"])
    if "order" in obj and isinstance(obj["order"], list):
        state["order"] = [str(x) for x in obj["order"]]


_SIZE = re.compile(r"^(\d+)([KMG]?)b?$", re.I)


def _size(token):
    """``130944``, ``10Kb``, ``1Mb`` (dcb prints binary units) -> bytes."""
    match = _SIZE.match(token)
    if not match:
        return None
    return int(match.group(1)) * {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}[match.group(2).upper()]


def parse_dcb(text, port=None):
    """Concatenated ``dcb ... show dev <if>`` outputs -> QoS facts (format ``dcb``)."""
    text = _text(text)
    s = new_settings()
    problems = []
    state = {"dscp": {}, "tsa": None, "bw": None, "prio_tc": None, "prio_buffer": None, "buffer_size": None,
             "order": None}
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                decoder = json.JSONDecoder()
                pos = 0
                while pos < len(line):
                    obj, end = decoder.raw_decode(line, pos)
                    _dcb_json(obj, s, state)
                    pos = end
                    while pos < len(line) and line[pos] in " \t,":
                        pos += 1
            except ValueError:
                problems.append("dcb: cannot read JSON %r" % line[:80])
            continue
        tokens = line.split()
        key = tokens[0]
        if key == "prio-pfc":
            s["pfc"] = sorted(int(p) for p, on in _pairs(tokens[1:]) if p.isdigit() and on == "on")
        elif key == "pfc-cap":
            s["pfc_capable"] = int(tokens[1]) if len(tokens) > 1 and tokens[1].isdigit() else None
        elif key == "tc-tsa":
            state["tsa"] = {int(t): v for t, v in _pairs(tokens[1:]) if t.isdigit()}
        elif key == "tc-bw":
            state["bw"] = {int(t): int(v) for t, v in _pairs(tokens[1:]) if t.isdigit() and v.isdigit()}
        elif key == "prio-tc":
            state["prio_tc"] = {int(p): int(t) for p, t in _pairs(tokens[1:]) if p.isdigit() and t.isdigit()}
        elif key == "dscp-prio":
            for name, prio in _pairs(tokens[1:]):
                dscp = _dscp(name)
                if dscp is None or not prio.isdigit():
                    problems.append("dcb: unknown DSCP %r in dscp-prio" % name)
                    continue
                if dscp in state["dscp"] and state["dscp"][dscp] != int(prio):
                    problems.append("dcb: DSCP %d has several APP entries (priorities %d and %s); which one applies "
                                    "is up to the driver" % (dscp, state["dscp"][dscp], prio))
                state["dscp"][dscp] = int(prio)
        elif key == "order":
            state["order"] = [t.lower() for t in tokens[1:]]
        elif key == "prio-buffer":
            state["prio_buffer"] = {int(p): int(b) for p, b in _pairs(tokens[1:]) if p.isdigit() and b.isdigit()}
        elif key == "buffer-size":
            state["buffer_size"] = {int(b): _size(v) for b, v in _pairs(tokens[1:]) if b.isdigit()
                                    and _size(v) is not None}
    if state["dscp"]:
        s["dscp_to_priority"] = state["dscp"]
    if state["order"] is not None:
        order = set(state["order"])
        s["trust"] = ("pcp,dscp" if {"dscp", "pcp"} <= order else "dscp" if "dscp" in order
                      else "pcp" if "pcp" in order else "none")
    if state["tsa"] is not None:
        bw = state["bw"] or {}
        s["ets"] = {tc: {"mode": mode if mode in ("ets", "strict") else "vendor",
                         "weight": bw.get(tc) if mode == "ets" else None}
                    for tc, mode in state["tsa"].items()}
    if state["prio_tc"] is not None:
        s["priority_to_queue"] = state["prio_tc"]
    if state["prio_buffer"] is not None and state["buffer_size"] is not None and s["pfc"] is not None:
        s["buffer_lossless"] = [p for p in s["pfc"] if state["buffer_size"].get(state["prio_buffer"].get(p), 0) > 0]
    if not text.strip():
        problems.append("dcb: empty output")
    return _one(s, port, "dcb", problems)


_SYS_NET = re.compile(r"^/sys/class/net/([^/]+)/(.+)$")
_SYS_IB = re.compile(r"^/sys/class/infiniband/([^/]+)/tc/1/traffic_class$")
_CONFIGFS = re.compile(r"^/sys/kernel/config/rdma_cm/([^/]+)/ports/1/default_roce_tos$")


def _files(files):
    if isinstance(files, dict):
        return {str(k): _text(v) for k, v in files.items()}
    out = {}
    for line in _text(files).split("\n"):
        if not line.startswith("/"):
            continue
        path, sep, value = line.partition(":")
        if sep:
            out[path] = (out.get(path, "") + value + "\n")
    return out


def _number(value):
    match = re.search(r"(?:tclass=)?\s*(-?\d+)", value or "")
    return int(match.group(1)) if match else None


def parse_sysfs(files, port=None):
    """The ECN/CNP, MTU, traffic_class and default_roce_tos files -> QoS facts (format ``sysfs``)."""
    s = new_settings()
    problems = []
    names = set()
    rp, np_ = {}, {}
    for path, content in sorted(_files(files).items()):
        value = content.strip()
        net = _SYS_NET.match(path)
        if net:
            names.add(net.group(1))
            rest = net.group(2)
            match = re.match(r"^ecn/roce_(rp|np)/enable/(\d)$", rest)
            if match:
                number = _number(value)
                if number is None:
                    problems.append("sysfs: %s holds %r, not 0 or 1" % (path, value))
                    continue
                (rp if match.group(1) == "rp" else np_)[int(match.group(2))] = bool(number)
            elif rest == "ecn/roce_np/cnp_dscp":
                s["cnp_dscp"] = _number(value)
            elif rest == "ecn/roce_np/cnp_802p_prio":
                s["cnp_priority"] = _number(value)
            elif rest == "mtu":
                s["mtu"] = _number(value)
            continue
        if _SYS_IB.match(path):
            # "106", or "Global tclass=106" on newer kernels (possibly with more lines).
            found = re.search(r"tclass=(\d+)", value)
            s["traffic_class"] = int(found.group(1)) if found else _number(value)
        elif _CONFIGFS.match(path):
            s["roce_tos"] = _number(value)
    if rp:
        s["ecn_rp"] = sorted(p for p, on in rp.items() if on)
    if np_:
        s["ecn_np"] = sorted(p for p, on in np_.items() if on)
    if port is None and len(names) == 1:
        port = names.pop()
    elif port is None and len(names) > 1:
        problems.append("sysfs: files of several interfaces (%s); name the port" % ", ".join(sorted(names)))
    return _one(s, port, "sysfs", problems)


def parse_cma_roce_tos(text, port=None):
    """The output of the ``cma_roce_tos`` script (``... 106``, or the value alone) -> QoS facts."""
    s = new_settings()
    numbers = re.findall(r"\b(\d{1,3})\b", _text(text))
    s["roce_tos"] = int(numbers[-1]) if numbers else None
    return _one(s, port, "cma_roce_tos", [] if numbers else ["cma_roce_tos: no ToS value found"])
