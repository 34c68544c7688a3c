# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ``rdma_netns`` role does: the RDMA subsystem's network namespace mode, live and at every boot.

The mode is one kernel-wide setting (``rdma system set netns exclusive|shared``; the ``ib_core`` module
parameter ``netns_mode``: ``0`` exclusive, ``1`` shared, the kernel's default). The cluster model decides
it from the fabrics' CNIs (:func:`rdma_host.resolve_netns`). Pure functions; the module reads and writes.

* :func:`modprobe_text` - the one file the role owns, ``/etc/modprobe.d/ainet-rdma-netns.conf``
  (``options ib_core netns_mode=N``), read when ``ib_core`` loads at boot (and from the initramfs when
  the initramfs carries ``ib_core``: it is then rebuilt).
* :func:`foreign_options` - other modprobe.d files that set ``ib_core netns_mode``: a different value
  is a conflict (refused before any change, naming the file), the same value a warning.
* :func:`plan` - the live command, the file, the initramfs rebuild and what is left for a reboot: the
  kernel refuses a live change while other network namespaces exist (``EBUSY``), and then the new mode
  comes with the next boot.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

ROLE = "rdma_netns"
CONF = "etc/modprobe.d/ainet-rdma-netns.conf"
MODPROBE_DIRS = ("etc/modprobe.d", "run/modprobe.d", "usr/local/lib/modprobe.d", "usr/lib/modprobe.d", "lib/modprobe.d")
PARAM = {"exclusive": "0", "shared": "1"}
PARAM_MODES = {"0": "exclusive", "n": "exclusive", "1": "shared", "y": "shared"}
OPTION = re.compile(r"^\s*options\s+ib_core\s+(?P<args>.*)$")
NETNS_ARG = re.compile(r"(?:^|\s)netns_mode=(?P<value>\S+)")


class NetnsError(FabricError):
    """A refusal: one line naming what is wrong and the fix."""


def modprobe_text(mode):
    return ("# Managed by ainet.fabric (rdma_netns); changes here are overwritten.\n"
            "# RDMA netns mode %s (0 exclusive, 1 shared), from fabric_cluster (the fabrics' CNIs).\n"
            "options ib_core netns_mode=%s\n" % (mode, PARAM[mode]))


def option_modes(text):
    """The ``ib_core netns_mode`` values a modprobe.d file sets, as modes (unknown values as they are)."""
    out = []
    for line in (text or "").splitlines():
        match = OPTION.match(line.split("#", 1)[0])
        if match:
            for value in NETNS_ARG.findall(match.group("args")):
                out.append(PARAM_MODES.get(value.lower(), value))
    return out


def foreign_options(files, want):
    """``files``: ``{path: text}`` of other modprobe.d files. Returns (conflicts, duplicates): lines naming each
    file that sets a different mode, and each that sets the same one."""
    conflicts, duplicates = [], []
    for path in sorted(files):
        for mode in option_modes(files[path]):
            entry = "%s (netns_mode %s)" % (path, mode)
            (duplicates if mode == want else conflicts).append(entry)
    return conflicts, duplicates


def plan(want, live, own_text, persist=True):
    """``want``: the mode (None: the model does not care; the role's file goes). ``live``: the running mode
    (None: ``ib_core`` is not loaded, so the file decides at its first load). Returns ``{"live": argv or None,
    "file": text or None (None: no file), "file_changed": bool}``; the initramfs is rebuilt when the file
    changes and the initramfs carries ``ib_core``."""
    text = modprobe_text(want) if want and persist else None
    live_argv = ["rdma", "system", "set", "netns", want] if want and live is not None and live != want else None
    return {"live": live_argv, "file": text, "file_changed": text != own_text}


def busy(error_text):
    """Whether a failed live change was the kernel's refusal while other network namespaces exist."""
    return bool(re.search(r"busy|EBUSY", error_text or "", re.I))
