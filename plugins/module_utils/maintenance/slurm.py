# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm as a maintenance backend: node names, what ``scontrol`` prints and the ``scontrol`` argv we run.

Read from SchedMD/slurm (tests/unit/plugins/module_utils/data/slurm/ORIGIN.md names the commit):

* ``scontrol show node -o`` prints one line per node (src/api/node_info.c ``slurm_sprint_node_table``), starting
  ``NodeName=<name>``; without ``-o`` the same fields on indented lines, nodes separated by a blank line.
  ``State=`` is ``node_state_string_complete``: the base state (DOWN, IDLE, ALLOCATED, ERROR, MIXED, FUTURE,
  UNKNOWN) and ``+FLAG`` for each flag (COMPLETING, DRAIN, FAIL, MAINTENANCE, NOT_RESPONDING, REBOOT_REQUESTED,
  REBOOT_ISSUED, ...). ``Reason=<text> [<user>@<time>]`` comes after the power fields and is followed only by
  optional fields (Comment, Extra, InstanceId, InstanceType, ReservationName, TLSCert*, Topology, Parameters).
* ``sinfo``'s *drained* and *draining* are ``node_state_string``: a DRAIN flag with COMPLETING, or on an
  ALLOCATED or MIXED node, is *draining* (jobs still run or finish); otherwise *drained*. Only a drained node is
  free of jobs.
* ``scontrol show config`` prints ``Name = value`` lines; ``RebootProgram = (null)`` when none is configured.
* ``scontrol reboot [ASAP] [nextstate={RESUME|DOWN}] [reason=...] <nodes>`` (doc/man/man1/scontrol.1): with
  ``nextstate=DOWN`` the node stays DOWN after its boot (its reason gets ``" : reboot complete"``), so it returns
  to service only when we resume it after the checks.

Every argv is a list (the ``command`` module's ``argv``, ``run_command`` with a list): no node name or reason
ever passes through a shell. Node names are checked first: hostlist syntax (``[``, ``,``) and whitespace would
name other nodes, ``=`` other fields.
"""

from __future__ import annotations

import datetime
import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

NODE_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?$")
_REASON = re.compile(r"^[A-Za-z0-9 .:=+_/-]{1,200}$")
AFTER_REASON = ("Comment", "Extra", "InstanceId", "InstanceType", "ReservationName", "TLSCertTokenSet",
                "TLSCertLastRenewal", "Topology", "Parameters")
_KEY = re.compile(r"(?:^|(?<=\s))([A-Za-z][A-Za-z0-9_]*)=")
_REASON_END = re.compile(r"\s(?:%s)=" % "|".join(AFTER_REASON))
_STAMP = re.compile(r"\s*\[([^\]@\s]+)@([^\]]+)\]\s*$")
BUSY_BASES = ("ALLOCATED", "MIXED")
# a reboot Slurm will do (src/slurmctld/node_mgr.c, proc_req.c _slurm_rpc_reboot_nodes, controller.c _reboot_nodes):
# REBOOT_REQUESTED until the node is idle, then REBOOT_ISSUED until slurmd registers again
REBOOT_FLAGS = ("REBOOT_REQUESTED", "REBOOT_ISSUED")
OUT_FLAGS = ("DRAIN", "FAIL")


class SlurmError(FabricError):
    """A Slurm node name, reason or output the backend cannot use; the message names it."""


def check_node_name(name, field="maintenance_slurm_node_name"):
    """A single Slurm node name, or one line naming what is wrong with it."""
    if not isinstance(name, str) or not NODE_NAME.match(name):
        raise SlurmError("%s: %r is not a single Slurm node name (letters, digits, '.', '_', '-'; no hostlist "
                         "syntax such as '[' or ',', no spaces or '=')" % (field, name))
    return name


def check_reason(reason):
    if not isinstance(reason, str) or not _REASON.match(reason):
        raise SlurmError("maintenance: reason %r is not plain text for scontrol" % (reason,))
    return reason


def _records(text):
    """The text of each node: a line starting with NodeName= opens one, indented lines continue it."""
    records, current = [], None
    for line in (text or "").splitlines():
        stripped = line.strip()
        if stripped.startswith("NodeName="):
            current = [stripped]
            records.append(current)
        elif stripped and current is not None:
            current.append(stripped)
        elif not stripped:
            current = None
    return [" ".join(r) for r in records]


def _fields(record):
    """``{key: value}`` of one node's text; Reason taken whole (it may hold spaces and '=')."""
    reason = out_time = None
    match = re.search(r"(?:^|\s)Reason=", record)
    head = record
    if match:
        head, rest = record[:match.start()], record[match.end():]
        end = _REASON_END.search(rest)
        tail = ""
        if end:
            rest, tail = rest[:end.start()], rest[end.start():]
        stamp = _STAMP.search(rest)
        if stamp:
            out_time = stamp.group(2).strip()
        reason = _STAMP.sub("", rest).strip()
        head = head + " " + tail
    keys = list(_KEY.finditer(head))
    out = {}
    for index, key in enumerate(keys):
        stop = keys[index + 1].start() if index + 1 < len(keys) else len(head)
        out[key.group(1)] = head[key.end():stop].strip()
    if reason is not None:
        out["Reason"] = reason
    if out_time is not None:
        out["ReasonTime"] = out_time
    return out


def parse_state(state):
    """``(base, flags)`` of a ``State=`` value such as ``IDLE+DRAIN`` or ``MIXED+DRAIN+NOT_RESPONDING``."""
    parts = [p for p in (state or "").strip().upper().split("+") if p]
    if not parts:
        raise SlurmError("scontrol: a node without a State= field")
    return parts[0].rstrip("*~#%$@^!"), parts[1:]


# node_state_string's one-character suffixes, in its order of precedence
SUFFIXES = (("MAINTENANCE", "$"), ("REBOOT_ISSUED", "^"), ("REBOOT_REQUESTED", "@"), ("POWERING_UP", "#"),
            ("POWERING_DOWN", "%"), ("POWERED_DOWN", "~"), ("POWER_DOWN", "!"), ("NOT_RESPONDING", "*"))


def sinfo_state(base, flags):
    """sinfo's long state (``%T``) of a node, as src/common/slurm_protocol_defs.c ``node_state_string`` derives it
    from the base state and flags (lower case, as sinfo prints it): drained against draining, reboot^, down* ..."""
    flags = set(flags)
    busy = base in BUSY_BASES or "COMPLETING" in flags

    def suffix(skip=()):
        return next((mark for flag, mark in SUFFIXES if flag in flags and flag not in skip), "")

    if "MAINTENANCE" in flags and not ("DRAIN" in flags or base in ("ALLOCATED", "DOWN", "MIXED")):
        return "maint*" if "NOT_RESPONDING" in flags else "maint"
    if flags & {"REBOOT_REQUESTED", "REBOOT_ISSUED"} and base not in BUSY_BASES:
        return "reboot^" if "REBOOT_ISSUED" in flags else "reboot*" if "NOT_RESPONDING" in flags else "reboot"
    if "DRAIN" in flags:
        return ("draining" if busy else "drained") + suffix()
    if "FAIL" in flags:
        return ("failing" if busy else "fail") + ("*" if "NOT_RESPONDING" in flags else "")
    if base == "ALLOCATED":
        return "allocated" + (suffix() or ("+" if "COMPLETING" in flags else ""))
    if "COMPLETING" in flags:
        return "completing" + suffix()
    if base in ("DOWN", "IDLE", "MIXED", "FUTURE"):
        return base.lower() + suffix()
    return base.lower() + ("*" if "NOT_RESPONDING" in flags else "")


def node_record(fields):
    """The backend-neutral record of one node (see window.next_action) from its scontrol fields."""
    base, flags = parse_state(fields.get("State"))
    busy = base in BUSY_BASES or "COMPLETING" in flags
    drain = "DRAIN" in flags
    return {
        "name": fields.get("NodeName"),
        "state": fields.get("State"),
        "base": base,
        "flags": flags,
        "sinfo": sinfo_state(base, flags),
        "out": drain or base == "DOWN" or "FAIL" in flags,
        "idle": not busy,
        "reason": fields.get("Reason") or "",
        "reason_time": fields.get("ReasonTime"),
        "reboot_pending": any(f in flags for f in REBOOT_FLAGS),
        "boot_time": fields.get("BootTime"),
    }


def reason_age(reason_time, now):
    """Seconds since Slurm recorded the reason (``[user@<time>]``, printed by scontrol in the local time of the
    host it runs on, as ``now`` - a naive datetime of that host - is), or None when unknown."""
    if not reason_time:
        return None
    try:
        stamp = datetime.datetime.strptime(reason_time.strip(), "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    return max(0, int((now - stamp).total_seconds()))


def parse_show_node(text):
    """``{node name: record}`` from ``scontrol show node [-o] [<name>]``."""
    nodes = {}
    for record in _records(text):
        fields = _fields(record)
        name = fields.get("NodeName")
        if not name:
            continue
        nodes[name] = node_record(fields)
    return nodes


def parse_show_config(text):
    """``{name: value}`` from ``scontrol show config`` (``(null)`` becomes None)."""
    out = {}
    for line in (text or "").splitlines():
        match = re.match(r"^([A-Za-z][A-Za-z0-9_]*)\s+=\s?(.*)$", line.rstrip())
        if match:
            value = match.group(2).strip()
            out[match.group(1)] = None if value in ("(null)", "") else value
    return out


def reboot_program(config):
    """The configured RebootProgram, or None (then the collection reboots the node itself)."""
    return config.get("RebootProgram")


def drain_argv(scontrol, node, reason):
    """Drain (or, on a node we already hold, re-mark) one node: jobs running there go on, no new ones start."""
    return [scontrol, "update", "NodeName=%s" % check_node_name(node), "State=DRAIN",
            "Reason=%s" % check_reason(reason)]


def resume_argv(scontrol, node):
    return [scontrol, "update", "NodeName=%s" % check_node_name(node), "State=RESUME"]


def reboot_argv(scontrol, node, reason):
    """Slurm's own reboot through its RebootProgram; the node stays DOWN afterwards until we resume it."""
    return [scontrol, "reboot", "nextstate=DOWN", "reason=%s" % check_reason(reason), check_node_name(node)]


def show_node_argv(scontrol, nodes=None):
    argv = [scontrol, "show", "node", "-o"]
    if nodes:
        # one call for all: a comma list is Slurm's hostlist, of names checked one by one
        argv.append(",".join(check_node_name(n) for n in nodes))
    return argv
