# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one-shot boot units of the host roles, and the file each role owns for them.

A host role that changes runtime state the kernel forgets at reboot (NIC QoS, SR-IOV VFs, PCIe ACS)
keeps it with exactly one systemd unit, ``/etc/systemd/system/ainet-<role>.service``: ``Type=oneshot``,
``RemainAfterExit=yes``, the same commands the role ran, once per boot (no re-apply loop, no rc.local).

* :func:`oneshot` - the unit's sections (for :func:`file_formats.unit_dump`);
* :func:`wait_for` / :func:`write_sysfs` - the ``ExecStart`` lines that wait for a path and write one
  sysfs value (``sh -c`` is used for these two only);
* :func:`read_unit` / :func:`sync_unit` - the unit file's state on a host (under ``config_root``) and
  writing or removing it (the role enables it with ``ansible.builtin.systemd_service``);
* :func:`foreign_units` - other tools' units (and udev rules) that set what a role owns: refused before
  any change (or warned about), because the two would fight at every boot.
"""

from __future__ import annotations

import os
import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import read_text, remove, write_atomic

UNIT_DIR = "etc/systemd/system"
WANTS_DIR = "etc/systemd/system/multi-user.target.wants"
DOCS = "https://github.com/ainet/ainet.fabric/tree/main/roles/"
WAIT_SECONDS = 60


def unit_name(role):
    return "ainet-%s.service" % role.replace("_", "-")


def header(role):
    return "Managed by ainet.fabric (%s); changes here are overwritten." % role


def oneshot(role, description, execs, after=(), before=(), wanted_by="multi-user.target", early=False, wants=()):
    """Sections of a ``Type=oneshot`` unit running ``execs`` ([(ExecStartPre|ExecStart, line)]) in order.

    ``early``: without systemd's default dependencies, so that the unit can run before ``basic.target``
    and every service ordered after it (a container runtime, the kubelet and its device plugins)."""
    unit = [("Description", "ainet.fabric %s: %s" % (role, description)), ("Documentation", DOCS + role)]
    if early:
        unit.append(("DefaultDependencies", False))
        unit.append(("Conflicts", "shutdown.target"))
        before = list(before) + ["shutdown.target"]
    if wants:  # a passive target (network-pre.target) is in the boot only when a unit pulls it in
        unit.append(("Wants", " ".join(wants)))
    if after:
        unit.append(("After", " ".join(after)))
    if before:
        unit.append(("Before", " ".join(before)))
    return [("Unit", unit),
            ("Service", [("Type", "oneshot"), ("RemainAfterExit", True)] + list(execs)),
            ("Install", [("WantedBy", wanted_by)])]


# A path or value these two put inside ``sh -c "..."`` on an Exec line: systemd unquotes the double quotes (a ``"`` or
# ``\\`` would end or escape them), expands ``%`` specifiers and ``${VAR}``, then sh reads the script (``;`` ``$``
# quotes, spaces). Only characters none of them treats specially, and never a ``..`` part.
SH_PATH = re.compile(r"/(?:sys|proc)(?:/[A-Za-z0-9_.:@+-]+)+")
SH_VALUE = re.compile(r"[A-Za-z0-9_.:,+-]+")


def _sh_safe(path, value=None):
    if not SH_PATH.fullmatch(str(path)) or ".." in str(path).split("/"):
        raise FabricError("boot unit: the path %r cannot be written into a unit's shell line (an interface or device "
                          "name with a character the unit or the shell would read as syntax)" % (path,))
    if value is not None and not SH_VALUE.fullmatch(str(value)):
        raise FabricError("boot unit: the value %r for %s cannot be written into a unit's shell line" % (value, path))


def wait_for(path, sh_path="/bin/sh", seconds=WAIT_SECONDS):
    """An ``ExecStartPre`` line that waits up to ``seconds`` for ``path`` and fails if it never appears.

    Used instead of ``Requires=`` on a device unit: a device unit that never appears (no udev, a renamed
    NIC) would fail the whole unit only after 90 s, and says less."""
    _sh_safe(path)
    return ("ExecStartPre", "%s -c \"i=0; while [ ! -e %s ] && [ $i -lt %d ]; do sleep 1; i=$((i+1)); done; "
                            "[ -e %s ]\"" % (sh_path, path, seconds, path))


def write_sysfs(path, value, sh_path="/bin/sh"):
    """An ``ExecStart`` line that writes ``value`` to the sysfs file ``path``."""
    _sh_safe(path, value)
    return ("ExecStart", "%s -c \"echo %s > %s\"" % (sh_path, value, path))


def device_unit(ifname):
    """The device unit of network interface ``ifname`` (``sys-subsystem-net-devices-<name>.device``), its name
    escaped as ``systemd-escape --path`` escapes it (systemd's unit_name_path_escape: a ``-`` in the name becomes
    ``\\x2d``, a leading ``.`` ``\\x2e``), so that ``ens1-a`` names its own device and not ``.../ens1/a``."""
    out = []
    for index, char in enumerate(ifname):
        if (char.isascii() and char.isalnum()) or char in ":_" or (char == "." and index > 0):
            out.append(char)
        else:
            out.extend("\\x%02x" % byte for byte in char.encode("utf-8"))
    return "sys-subsystem-net-devices-%s.device" % "".join(out)


def read_unit(config_root, role):
    """``{"path", "text", "present", "enabled"}`` of the role's unit under ``config_root``."""
    name = unit_name(role)
    path = os.path.join(config_root, UNIT_DIR, name)
    text = read_text(path) if os.path.isfile(path) else None
    link = os.path.join(config_root, WANTS_DIR, name)
    return {"path": "/" + UNIT_DIR + "/" + name, "file": path, "link": link, "text": text,
            "present": text is not None, "enabled": os.path.lexists(link)}


def sync_unit(state, text, check_mode):
    """Write ``text`` to the unit (or remove it and its ``multi-user.target.wants`` link when ``text`` is
    None); True when that changes the file."""
    if state["text"] == text:
        return False
    if not check_mode:
        if text is None:
            remove([state["file"]] + ([state["link"]] if os.path.lexists(state["link"]) else []))
        else:
            write_atomic(state["file"], text, "0644")
    return True


def _word(token):
    """``token`` as a whole word: not inside a longer interface name, PCI address or path component."""
    return re.compile(r"(?<![\w.:-])%s(?![\w.:-])" % re.escape(token))


def foreign_units(config_root, own_role, needles, dirs=(UNIT_DIR,), suffixes=(".service",), exec_only=True,
                  about=None):
    """Other tools' units (or udev rules) under ``config_root`` that set what role ``own_role`` owns.

    A file counts when it is a regular file in one of ``dirs`` (relative to ``config_root``) whose name ends
    with one of ``suffixes``, is not the role's own unit, and one of ``needles`` (regular expressions, compiled
    or as text) matches its text - only its ``Exec*`` lines with ``exec_only`` (a unit's commands, not its
    description; a udev rule has no such lines: scan those with ``exec_only=False``).

    ``about``: ``{label: [word, ...]}`` (a PF's name and PCI address): a file then counts only when it also
    names one of a label's words as a whole word, and comes with the labels it names.

    Returns ``[(path, labels)]`` in directory then name order, ``path`` as on the host
    (``/etc/systemd/system/x.service``), ``labels`` empty without ``about``."""
    own = unit_name(own_role)
    patterns = [re.compile(n) if isinstance(n, str) else n for n in needles]
    words = dict((label, [_word(w) for w in tokens if w]) for label, tokens in (about or {}).items())
    found = []
    for rel in dirs:
        directory = os.path.join(config_root, rel)
        if not os.path.isdir(directory):
            continue
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if name == own or not name.endswith(tuple(suffixes)) or not os.path.isfile(path):
                continue
            text = read_text(path) or ""
            lines = text.splitlines()
            if exec_only:
                lines = [line for line in lines if line.strip().startswith("Exec")]
            if not any(p.search(line) for p in patterns for line in lines):
                continue
            labels = sorted(label for label, regexes in words.items() if any(r.search(text) for r in regexes))
            if about is None or labels:
                found.append(("/" + rel.strip("/") + "/" + name, labels))
    return found
