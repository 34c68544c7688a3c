# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An old NVIDIA stack (MLNX_OFED, or DOCA before 2.6) that must be removed before DOCA-Host installs.

Pure functions; the module ``ainet.fabric.doca_ofed`` reads the host (``ofed_info -s``, ``dpkg-query -W`` or
``rpm -qa``, whether ``/usr/sbin/ofed_uninstall.sh`` exists) and runs the commands returned here.

NVIDIA's "DOCA-Host Installation and Upgrade" guide (DOCA 3.2.1): where DOCA-Host 2.6.0 or later is installed, the
online repository upgrades it (the role's ordinary path); otherwise - MLNX_OFED, or DOCA before 2.6 - a full
uninstallation comes first: on Debian and Ubuntu ``apt remove --purge`` of every package whose name matches
``doca|flexio|dpa-gdbserver|dpa-stats|dpa-resource-mgmt|dpaeumgmt`` (the guide's ``dpkg --list | grep -E``), on the
RHEL family ``yum remove`` of every package matching ``doca`` (``rpm -qa | grep -i doca``), then
``/usr/sbin/ofed_uninstall.sh --force`` (the ``ofed-scripts`` package's uninstaller, which MLNX_OFED and DOCA's own
driver stack both ship), then ``autoremove``. The guide's ``autoremove`` is left out here: it removes every package
nothing depends on any more, whoever installed it.

What is installed is told by ``ofed_info -s`` (``MLNX_OFED_LINUX-24.10-2.1.8.0:``: MLNX_OFED; ``OFED-internal-`` with
a driver before 24.01, DOCA 2.6's: an older DOCA's) and by the packages that carry the DOCA release in their version
(``doca-host`` ``3.2.0-125000-25.10-ubuntu2404``; before DOCA 2.7 the repository package ``doca-host-repo-<os>``
``2.5.0-0.0.1...``; the profiles' meta-packages; DOCA 2.5's ``doca-runtime``, ``doca-tools``, ``doca-sdk``).
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.host.doca_ofed_state import PROFILES, DocaError

UNINSTALLER = "/usr/sbin/ofed_uninstall.sh"
# The first DOCA-Host release the online repository upgrades in place (NVIDIA DOCA 3.2.1 "DOCA-Host Installation and
# Upgrade"); before it, a full uninstallation.
UPGRADABLE_FROM = (2, 6)
# DOCA 2.6's driver release: an OFED-internal driver before it is an older DOCA's.
UPGRADABLE_DRIVER = (24, 1)
# The packages the guide removes, per package manager (matched on the package name, as its grep is meant).
REMOVE_PATTERNS = {"apt": re.compile(r"doca|flexio|dpa-gdbserver|dpa-stats|dpa-resource-mgmt|dpaeumgmt"),
                   "dnf": re.compile(r"doca", re.I)}
# Packages whose version begins with the DOCA release they belong to.
DOCA_VERSION_PACKAGES = ("doca-host",) + PROFILES + ("doca-runtime", "doca-tools", "doca-sdk")
DOCA_REPO_PACKAGE = "doca-host-repo-"
_RELEASE = re.compile(r"^(?:\d+:)?(\d+)\.(\d+)(?:\.(\d+))?")
# dpkg's current-state letter "n": not installed (the name is only known); every other state is removed too.
NOT_INSTALLED = "n"


def doca_release(installed):
    """The oldest DOCA release the installed packages name, as ``{"release": (major, minor), "package": name,
    "version": version}``, or None. ``installed``: ``{name: {"version", "status"}}`` (see
    :func:`doca_ofed_state.parse_dpkg_query`)."""
    found = []
    for name in sorted(installed):
        entry = installed[name]
        if entry.get("status", "ii")[1:2] == NOT_INSTALLED or entry.get("status", "ii")[:1] == "r":
            continue
        if name in DOCA_VERSION_PACKAGES or name.startswith(DOCA_REPO_PACKAGE):
            match = _RELEASE.match(entry.get("version") or "")
            if match:
                found.append(((int(match.group(1)), int(match.group(2))), name, entry["version"]))
    if not found:
        return None
    release, name, version = min(found)
    return {"release": release, "package": name, "version": version}


def _driver(version):
    match = re.match(r"^(\d+)\.(\d+)", version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def old_stack(ofed, installed, family, uninstaller_present):
    """What must go before DOCA-Host installs, or None when nothing must.

    ``ofed``: ``parse_ofed_info``'s ``ofed`` (``{"version", "flavour", "raw"}``) or None; ``installed``: the host's
    packages (``{name: {"version", "status"}}``); ``family``: ``apt`` or ``dnf``; ``uninstaller_present``:
    ``/usr/sbin/ofed_uninstall.sh`` exists. Returns ``{"installed": what (one phrase), "packages": [names the
    package manager removes], "commands": [argv, ...] in order, "problem": why nothing here can remove it, or
    None}``."""
    label = None
    if ofed and ofed.get("flavour") == "mlnx_ofed":
        label = "MLNX_OFED_LINUX-%s" % ofed["version"]
    elif ofed and ofed.get("flavour") != "mlnx_ofed" and (_driver(ofed["version"]) or (99, 0)) < UPGRADABLE_DRIVER:
        label = "OFED-internal-%s (a DOCA driver before DOCA 2.6)" % ofed["version"]
    doca = doca_release(installed)
    if doca and doca["release"] < UPGRADABLE_FROM:
        named = "DOCA %d.%d (%s %s)" % (doca["release"] + (doca["package"], doca["version"]))
        label = "%s with %s" % (label, named) if label else named
    if label is None:
        return None
    if family not in REMOVE_PATTERNS:
        raise DocaError("doca_ofed: %s is installed and no removal is known for this package manager (%r)"
                        % (label, family))
    pattern = REMOVE_PATTERNS[family]
    packages = sorted(name for name, entry in installed.items()
                      if pattern.search(name) and entry.get("status", "ii")[1:2] != NOT_INSTALLED)
    commands = []
    if packages:
        commands.append((["apt-get", "remove", "--purge", "-y"] if family == "apt" else ["dnf", "remove", "-y"])
                        + packages)
    if uninstaller_present:
        commands.append([UNINSTALLER, "--force"])
    problem = None if commands else ("neither %s (the ofed-scripts package's uninstaller) nor a DOCA package is here "
                                     "to remove it" % UNINSTALLER)
    return {"installed": label, "packages": packages, "commands": commands, "problem": problem}


def old_stack_refusal(stack, version, replace, in_use=None):
    """One line when the install must not go on, else None (then the stack's commands may run, with ``replace``).

    ``stack``: :func:`old_stack`; ``version``: the pinned DOCA version; ``replace``: ``doca_ofed_replace_old_stack``;
    ``in_use``: :func:`doca_ofed_state.rdma_in_use` of this node (only read with ``replace``)."""
    if not stack:
        return None
    head = "doca_ofed: %s is installed; DOCA %s requires removing it first" % (stack["installed"], version)
    if stack["problem"]:
        return ("%s, but %s. Fix: remove it by hand (NVIDIA's DOCA-Host guide: its packages, then "
                "'ofed_uninstall.sh --force'), reboot, and run again" % (head, stack["problem"]))
    if not replace:
        return ("%s (NVIDIA's DOCA-Host guide: a full uninstallation over MLNX_OFED or DOCA before 2.6). Fix: set "
                "doca_ofed_replace_old_stack: true to remove it here (%s; a reboot is pending afterwards), or remove "
                "it by hand" % (head, "; then ".join(" ".join(argv) for argv in stack["commands"])))
    if in_use:
        kind, detail = in_use
        why = {"unknown": "the management path cannot be traced (%s)",
               "management": "the management path runs over a ConnectX port (%s)",
               "storage": "storage runs over the RDMA stack (%s)",
               "modules": "modules it does not manage sit on the RDMA core (%s)"}[kind] % detail
        return ("doca_ofed: removing %s is refused while the RDMA stack is in use: %s. Fix: drain the node (stop "
                "those users, unload those modules, or move the management path off the ConnectX) and run again, or "
                "remove it by hand in a maintenance window" % (stack["installed"], why))
    return None


def removed_reboot(stack):
    """The pending reboot after ``stack`` was removed: its modules stay loaded until the node boots again."""
    return "DOCA-OFED: %s was removed; its kernel modules stay loaded until the next boot" % stack["installed"]
