# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers of a host NIC's lossless settings: ``mlnx_qos``, iproute2 ``dcb``, the sysfs files.

Each returns QoS facts (:mod:`qos_facts`) with one port, keyed by ``port`` (the interface)
or ``""``. Unknown lines are ignored; a field the output does not show stays ``None``; what
cannot be read is a line in ``problems``, never an exception. CRLF, blank lines and any
indentation (spaces, tabs, none) are accepted.

``mlnx_qos -i <if>`` (NVIDIA). Old releases (MLNX_OFED 3.x/4.x) print only the PFC rows and
the tc blocks (4.x adds ``Priority trust state``/``mode``, ``dscp2prio``, ``Cable len``); the
DOCA / MLNX_OFED 5.x+ layout adds the receive buffers and the PFC ``buffer`` row::

    DCBX mode: OS controlled                     -> dcbx ("OS controlled" / "Firmware controlled")
    Priority trust state: dscp                   -> trust ("Priority trust mode: pcp" in 4.x)
    dscp2prio mapping:                           -> dscp_to_priority, every DSCP printed
            prio:0 dscp:07,06,05,04,03,02,01,00,    (a priority may take several lines)
    default priority:
    Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=262016
    Cable len: 7
    PFC configuration:
            priority    0   1   2   3   4   5   6   7
            enabled     0   0   0   1   0   0   0   0     -> pfc
            buffer      0   0   0   1   0   0   0   0     -> priority -> receive buffer
    tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%        -> ets {3: ets, 50}
             priority:  3                                -> priority_to_queue {3: 3}
    tc: 6 ratelimit: unlimited, tsa: vendor              -> ets {6: vendor, None}
             skprio: 2 (tos: 8)                          (old releases; ignored)

``buffer_lossless`` rule: a priority has a lossless buffer when PFC is enabled for it and the
receive buffer its ``buffer`` row names has a size above zero in ``Receive buffer size``.
Without both the ``buffer`` row and the sizes (old releases, or a grep of the PFC rows only)
``buffer_lossless`` is ``None``. mlnx_qos prints the whole dscp2prio table, so
``dscp_to_priority`` holds all 64 DSCPs when the section is there; with ``trust pcp`` the
section is absent and the field is ``None``.

iproute2 ``dcb`` (concatenated ``dcb pfc|ets|app|apptrust|buffer show dev <if>``)::

    pfc-cap 8 macsec-bypass off delay 4096                -> pfc_capable
    prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off   -> pfc
    prio-tc 0:0 1:1 ... / tc-tsa 0:ets ... 6:strict / tc-bw 0:50 ...   -> priority_to_queue, ets
    dscp-prio 26:3 48:6     (default output: names CS3:3 AF31:3 EF:5; ``dcb -N``: numbers)
    order: dscp pcp         (``dcb apptrust show``; ``order dscp pcp`` accepted too) -> trust
    prio-buffer 0:0 1:0 2:0 3:1 ... / buffer-size 0:130944 1:10Kb 2:1Mb ...

DSCP names are those of iproute2's ``rt_dsfield``: CS0-CS7, AF11-AF43, EF, VA, LE. The trust
order is reduced to the shared vocabulary: both ``dscp`` and ``pcp`` -> ``"pcp,dscp"``, one
of them -> that one, neither -> ``"none"``. ``buffer_lossless`` follows the mlnx_qos rule with
``prio-buffer`` and ``buffer-size``. ``dcb -j`` prints one JSON object per command, e.g.
``{"pfc_cap":8,"prio_pfc":[false,false,false,true,...]}``, ``{"dscp_prio":[[26,3],[48,6]]}``,
``{"prio_tc":[...],"tc_tsa":["ets",...],"tc_bw":[...]}``; these are read (one per line or
run together) with the same keys.

sysfs: a mapping ``{path: content}``, or text with ``path:value`` lines (``grep -H . <files>``)
or ``... path = value`` lines (scripts that echo the file and its value):

* ``/sys/class/net/<if>/ecn/roce_np/enable/<prio>``, ``.../roce_rp/enable/<prio>`` -> ecn_np / ecn_rp
* ``/sys/class/net/<if>/ecn/roce_np/cnp_dscp`` -> cnp_dscp; ``.../cnp_802p_prio`` -> cnp_priority
* ``/sys/class/net/<if>/mtu`` -> mtu
* ``/sys/class/infiniband/<dev>/tc/1/traffic_class`` -> traffic_class: ``Global tclass=106`` (mlx5
  with the tclass rules; rule lines after it are ignored) or a bare ``106``; empty when unset
* ``/sys/kernel/config/rdma_cm/<dev>/ports/1/default_roce_tos`` (what ``cma_roce_tos`` reads and
  writes) -> roce_tos; a ``cma_roce_tos: 106`` line of text is read as well.

``parse_cma_roce_tos`` reads the script's own output (it echoes the ToS value).
"""

from __future__ import annotations

import json
import re

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import DSCP_NAMES as COMMON_DSCP_NAMES
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import int_list, new_facts, new_settings

# The common names as iproute2's dcb prints them (upper case), plus LE (RFC 8622).
DSCP_NAMES = dict(((name.upper(), value) for name, value in COMMON_DSCP_NAMES.items()), LE=1)

_TRUST = {"dscp": "dscp", "pcp": "pcp", "both": "pcp,dscp", "pcp,dscp": "pcp,dscp", "none": "none"}
_TC_LINE = re.compile(r"^tc:\s*(\d+)\s+ratelimit:\s*[^,]*,\s*tsa:\s*([A-Za-z_]+)(?:,\s*bw:\s*(\d+)\s*%)?")
_DSCP_LINE = re.compile(r"^prio:\s*(\d+)\s+dscp:\s*([\d,\s]*)$")
_DCBX = re.compile(r"^dcbx mode:\s*(\w+\s+controlled|\S+)", re.I)
_PAIR = re.compile(r"^([A-Za-z0-9]+):([A-Za-z0-9]+)$")
_SIZE = re.compile(r"^(\d+)([KMG]?)(?:i?b)?$", re.I)


def _one(settings, port, fmt, problems):
    return new_facts(fmt, {port or "": settings}, problems)


def _text(text):
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return str(text or "").replace("\r\n", "\n").replace("\r", "\n")


def _ints(text):
    """``int_list`` that answers None instead of raising on what is not a list of numbers."""
    try:
        return int_list(text)
    except ValueError:
        return None


def _row(line):
    """``enabled     0   0   0   1 ...`` (or ``enabled:``) -> [0, 0, 0, 1, ...]; None when not all numbers."""
    parts = line.split()[1:]
    if not parts:
        return None
    try:
        return [int(p) for p in parts]
    except ValueError:
        return None


def _mode(tsa):
    tsa = tsa.lower()
    return tsa if tsa in ("ets", "strict") else "vendor"


def parse_mlnx_qos(text, port=None):
    """``mlnx_qos -i <if>`` output (any release) -> QoS facts (format ``mlnx_qos``)."""
    text = _text(text)
    s = new_settings()
    problems = []
    pfc_row = buffer_row = sizes = None
    dscp_map, ets, prio_tc = {}, {}, {}
    tc = section = None
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        low = line.lower()
        if low.startswith("dcbx mode"):
            match = _DCBX.match(line)
            s["dcbx"] = match.group(1) if match else None
            section = None
        elif low.startswith("priority trust"):
            value = line.split(":", 1)[1].strip().lower() if ":" in line else ""
            s["trust"] = _TRUST.get(value)
            if s["trust"] is None:
                problems.append("mlnx_qos: unknown trust state %r" % value)
            section = None
        elif low.startswith("dscp2prio mapping"):
            section = "dscp"
        elif section == "dscp" and low.startswith("prio:"):
            match = _DSCP_LINE.match(line)
            dscps = _ints(match.group(2)) if match else None
            if dscps is None or int(match.group(1)) > 7 or any(d > 63 for d in dscps):
                problems.append("mlnx_qos: cannot read dscp2prio line %r" % line)
                continue
            for dscp in dscps:
                dscp_map[dscp] = int(match.group(1))
        elif low.startswith("receive buffer size"):
            sizes = [int(v) for v in line.split(":", 1)[1].split(",") if v.strip().isdigit()]
            section = None
        elif low.startswith("pfc configuration"):
            section = "pfc"
        elif section == "pfc" and low.startswith("enabled"):
            pfc_row = _row(line)
            if pfc_row is None or len(pfc_row) != 8 or any(v not in (0, 1) for v in pfc_row):
                problems.append("mlnx_qos: cannot read the PFC row %r" % line)
                pfc_row = None
        elif section == "pfc" and low.startswith("buffer"):
            buffer_row = _row(line)
            if buffer_row is None or len(buffer_row) != 8:
                problems.append("mlnx_qos: cannot read the PFC buffer row %r" % line)
                buffer_row = None
        elif low.startswith("tc:"):
            section = "tc"
            match = _TC_LINE.match(line)
            if not match:
                problems.append("mlnx_qos: cannot read %r" % line)
                tc = None
                continue
            tc = int(match.group(1))
            ets[tc] = {"mode": _mode(match.group(2)), "weight": int(match.group(3)) if match.group(3) else None}
        elif section == "tc" and tc is not None and low.startswith("priority:"):
            prios = _ints(line.split(":", 1)[1])
            if prios is None or any(p > 7 for p in prios):
                problems.append("mlnx_qos: cannot read %r under tc %s" % (line, tc))
                continue
            for prio in prios:
                prio_tc[prio] = tc
        elif low.startswith("pfc_cap") or low.startswith("pfc cap"):
            digits = re.findall(r"\d+", line)
            s["pfc_capable"] = int(digits[0]) if digits else None
    if dscp_map:
        s["dscp_to_priority"] = dscp_map
    if pfc_row is not None:
        s["pfc"] = [p for p, on in enumerate(pfc_row) if on]
        if buffer_row is not None and sizes:
            s["buffer_lossless"] = [p for p in s["pfc"] if buffer_row[p] < len(sizes) and sizes[buffer_row[p]] > 0]
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


def _size(token):
    """``130944``, ``10Kb``, ``1Mb`` (dcb prints binary units) -> bytes; None when unreadable."""
    match = _SIZE.match(str(token))
    if not match:
        return None
    return int(match.group(1)) * {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}[match.group(2).upper()]


def _indexed(value):
    """A JSON array (index = key) or object (string keys) -> {int: value}."""
    if isinstance(value, list):
        return dict(enumerate(value))
    if isinstance(value, dict):
        return dict((int(k), v) for k, v in value.items() if str(k).isdigit())
    return None


def _dcb_json(obj, s, state, problems):
    if not isinstance(obj, dict):
        problems.append("dcb: JSON %r is not an object" % (obj,))
        return
    pfc = _indexed(obj.get("prio_pfc"))
    if pfc is not None:
        s["pfc"] = sorted(p for p, on in pfc.items() if on in (True, "on", 1))
    if isinstance(obj.get("pfc_cap"), int):
        s["pfc_capable"] = obj["pfc_cap"]
    for key in ("tc_tsa", "tc_bw", "prio_tc", "prio_buffer", "buffer_size"):
        value = _indexed(obj.get(key))
        if value is not None:
            state[key] = value
    if state.get("buffer_size") is not None:
        state["buffer_size"] = dict((b, _size(v)) for b, v in state["buffer_size"].items() if _size(v) is not None)
    for item in obj.get("dscp_prio") or ():
        if isinstance(item, (list, tuple)) and len(item) == 2:
            _dcb_app(str(item[0]), str(item[1]), state, problems)
    if isinstance(obj.get("order"), list):
        state["order"] = [str(x).lower() for x in obj["order"]]


def _dcb_app(name, prio, state, problems):
    dscp = _dscp(name)
    if dscp is None or dscp > 63 or not prio.isdigit() or int(prio) > 7:
        problems.append("dcb: cannot read the dscp-prio entry %s:%s" % (name, prio))
        return
    if dscp in state["dscp"] and state["dscp"][dscp] != int(prio):
        problems.append("dcb: DSCP %d has several APP entries (priorities %d and %s); which one applies "
                        "is up to the driver" % (dscp, state["dscp"][dscp], prio))
    state["dscp"][dscp] = int(prio)


def _json_objects(line, s, state, problems):
    decoder = json.JSONDecoder()
    pos = 0
    while pos < len(line):
        try:
            obj, pos = decoder.raw_decode(line, pos)
        except ValueError:
            problems.append("dcb: cannot read JSON %r" % line[pos:pos + 80])
            return
        _dcb_json(obj, s, state, problems)
        while pos < len(line) and line[pos] in " \t,":
            pos += 1


def parse_dcb(text, port=None):
    """Concatenated ``dcb ... show dev <if>`` outputs (text or ``-j``) -> QoS facts (format ``dcb``)."""
    text = _text(text)
    s = new_settings()
    problems = []
    state = {"dscp": {}, "tc_tsa": None, "tc_bw": None, "prio_tc": None, "prio_buffer": None,
             "buffer_size": None, "order": None}
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("{") or line.startswith("["):
            _json_objects(line, s, state, problems)
            continue
        tokens = line.split()
        key = tokens[0].rstrip(":").lower()
        pairs = _pairs(tokens[1:])
        if key == "prio-pfc":
            s["pfc"] = sorted(int(p) for p, on in pairs if p.isdigit() and on == "on")
        elif key == "pfc-cap":
            s["pfc_capable"] = int(tokens[1]) if len(tokens) > 1 and tokens[1].isdigit() else None
        elif key == "tc-tsa":
            state["tc_tsa"] = dict((int(t), v) for t, v in pairs if t.isdigit())
        elif key == "tc-bw":
            state["tc_bw"] = dict((int(t), int(v)) for t, v in pairs if t.isdigit() and v.isdigit())
        elif key == "prio-tc":
            state["prio_tc"] = dict((int(p), int(t)) for p, t in pairs if p.isdigit() and t.isdigit())
        elif key == "dscp-prio":
            for name, prio in pairs:
                _dcb_app(name, prio, state, problems)
        elif key in ("order", "trust-order"):
            state["order"] = [t.lower() for t in tokens[1:]]
        elif key == "prio-buffer":
            state["prio_buffer"] = dict((int(p), int(b)) for p, b in pairs if p.isdigit() and b.isdigit())
        elif key == "buffer-size":
            state["buffer_size"] = dict((int(b), _size(v)) for b, v in pairs if b.isdigit() and _size(v) is not None)
    if state["dscp"]:
        s["dscp_to_priority"] = state["dscp"]
    if state["order"] is not None:
        order = set(state["order"])
        s["trust"] = ("pcp,dscp" if {"dscp", "pcp"} <= order else "dscp" if "dscp" in order
                      else "pcp" if "pcp" in order else "none")
    if state["tc_tsa"] is not None:
        bw = state["tc_bw"] or {}
        s["ets"] = dict((tc, {"mode": _mode(str(tsa)), "weight": bw.get(tc) if _mode(str(tsa)) == "ets" else None})
                        for tc, tsa in state["tc_tsa"].items())
    if state["prio_tc"] is not None:
        s["priority_to_queue"] = state["prio_tc"]
    if state["prio_buffer"] is not None and state["buffer_size"] is not None and s["pfc"] is not None:
        s["buffer_lossless"] = [p for p in s["pfc"] if (state["buffer_size"].get(state["prio_buffer"].get(p)) or 0) > 0]
    if not text.strip():
        problems.append("dcb: empty output")
    elif all(s[k] is None for k in ("pfc", "pfc_capable", "ets", "priority_to_queue", "dscp_to_priority", "trust")):
        problems.append("dcb: no prio-pfc, tc-tsa, prio-tc, dscp-prio or order line found; is this dcb output?")
    return _one(s, port, "dcb", problems)


_SYS_NET = re.compile(r"^/sys/class/net/([^/]+)/(.+)$")
_SYS_IB = re.compile(r"^/sys/class/infiniband/([^/]+)/tc/1/traffic_class$")
_CONFIGFS = re.compile(r"^/sys/kernel/config/rdma_cm/([^/]+)/ports/1/default_roce_tos$")
_TEXT_PATH = re.compile(r"(/sys/[^\s:=]+)\s*[:=]\s?(.*)$")
_TOS_LINE = re.compile(r"^\s*(?:cma_roce_tos|default_roce_tos)\s*[:=]\s*(\d+)\s*$", re.I)


def _files(files):
    """``{path: content}`` from a mapping or from ``path:value`` / ``... path = value`` text."""
    if isinstance(files, dict):
        return dict((str(k), _text(v)) for k, v in files.items()), None
    out, tos = {}, None
    for line in _text(files).split("\n"):
        match = _TEXT_PATH.search(line)
        if match:
            path = match.group(1)
            out[path] = out.get(path, "") + match.group(2).strip() + "\n"
            continue
        match = _TOS_LINE.match(line)
        if match:
            tos = int(match.group(1))
    return out, tos


def _number(value):
    match = re.match(r"^\s*(-?\d+)\s*$", value or "")
    return int(match.group(1)) if match else None


def _tclass(value):
    """``Global tclass=106`` (rule lines may follow) or a bare ``106`` -> 106; None when unset."""
    found = re.search(r"Global tclass=(\d+)", value)
    if found:
        return int(found.group(1))
    first = value.strip().split("\n")[0] if value.strip() else ""
    return _number(first)


def parse_sysfs(files, port=None):
    """The ECN/CNP, MTU, traffic_class and default_roce_tos files -> QoS facts (format ``sysfs``)."""
    s = new_settings()
    problems = []
    names = set()
    rp, np_ = {}, {}
    contents, s["roce_tos"] = _files(files)
    for path, content in sorted(contents.items()):
        value = content.strip()
        net = _SYS_NET.match(path)
        if net:
            names.add(net.group(1))
            rest = net.group(2)
            match = re.match(r"^ecn/roce_(rp|np)/enable/(\d)$", rest)
            if match:
                number = _number(value)
                if number not in (0, 1):
                    problems.append("sysfs: %s holds %r, not 0 or 1" % (path, value))
                    continue
                (rp if match.group(1) == "rp" else np_)[int(match.group(2))] = bool(number)
                continue
            field = {"ecn/roce_np/cnp_dscp": "cnp_dscp", "ecn/roce_np/cnp_802p_prio": "cnp_priority",
                     "mtu": "mtu"}.get(rest)
            if field:
                s[field] = _number(value)
                if s[field] is None:
                    problems.append("sysfs: %s holds %r, not a number" % (path, value))
        elif _SYS_IB.match(path):
            s["traffic_class"] = _tclass(value)
            if s["traffic_class"] is None and value:
                problems.append("sysfs: %s holds %r, not a traffic class" % (path, value[:80]))
        elif _CONFIGFS.match(path):
            s["roce_tos"] = _number(value)
            if s["roce_tos"] is None:
                problems.append("sysfs: %s holds %r, not a ToS" % (path, value))
    if rp:
        s["ecn_rp"] = sorted(p for p, on in rp.items() if on)
    if np_:
        s["ecn_np"] = sorted(p for p, on in np_.items() if on)
    if port is None and len(names) == 1:
        port = names.pop()
    elif port is None and len(names) > 1:
        problems.append("sysfs: files of several interfaces (%s); name the port" % ", ".join(sorted(names)))
    if not contents and s["roce_tos"] is None:
        problems.append("sysfs: no known file found")
    return _one(s, port, "sysfs", problems)


def parse_cma_roce_tos(text, port=None):
    """The output of the ``cma_roce_tos`` script (it echoes the ToS, e.g. ``106``) -> QoS facts."""
    s = new_settings()
    numbers = [int(n) for n in re.findall(r"\b(\d{1,3})\b", _text(text)) if int(n) < 256]
    s["roce_tos"] = numbers[-1] if numbers else None
    return _one(s, port, "cma_roce_tos", [] if numbers else ["cma_roce_tos: no ToS value found"])
