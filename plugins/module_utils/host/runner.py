# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one command runner of the host modules.

Every host module runs its tools through :class:`Runner`: the C locale (parsers read English output),
``check`` to turn a non-zero exit into one :class:`FabricError` line naming the command, its exit
status and the first part of what it printed, tools found once per run (``PATH`` plus the sbin
directories, as ``AnsibleModule.get_bin_path`` searches), and ``sysfs_root`` / ``config_root`` joins
so that tests run the same code against a tree in a temporary directory.
"""

from __future__ import annotations

import json
import os

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

ERROR_CHARS = 400
# PCI vendor ids as sysfs writes them (/sys/bus/pci/devices/<addr>/vendor)
VENDOR_MELLANOX = "0x15b3"
VENDOR_NVIDIA = "0x10de"


def one_line(text, limit=ERROR_CHARS):
    """``text`` folded onto one line and cut at ``limit`` characters (for error messages)."""
    folded = " ".join((text or "").split())
    return folded if len(folded) <= limit else folded[:limit - 3] + "..."


class Runner(object):
    """Runs one host's tools for a module (an ``AnsibleModule``); ``error`` is the exception class raised."""

    def __init__(self, module, sysfs_root="/", config_root="/", error=FabricError):
        self.module = module
        self.sysfs_root = sysfs_root
        self.config_root = config_root
        self.error = error
        self._bins = {}

    def bin(self, name, required=False):
        """The path of tool ``name`` (None when absent; with ``required``, one error line naming it)."""
        if name not in self._bins:
            self._bins[name] = self.module.get_bin_path(name)
        if required and not self._bins[name]:
            raise self.error("%s is not installed on this host" % name)
        return self._bins[name]

    def forget(self):
        """Find every tool again (after a package removal took some away)."""
        self._bins = {}

    def run(self, argv, check=True, data=None, environ=None):
        """(rc, stdout, stderr) of ``argv`` in the C locale (plus ``environ``); ``argv[0]`` may be a bare tool name.

        With ``check`` a non-zero exit raises one line: the command, its exit status and its message."""
        argv = list(argv)
        if not os.path.isabs(argv[0]):
            argv[0] = self.bin(argv[0], required=True)
        rc, out, err = self.module.run_command(argv, data=data, binary_data=data is not None,
                                               environ_update=dict(environ or {}, LC_ALL="C", LANG="C"))
        if check and rc != 0:
            raise self.error("%s failed (rc %d): %s" % (" ".join(argv), rc, one_line(err or out)))
        return rc, out, err

    def json(self, argv):
        """The JSON that ``argv`` prints (``ip -j``, ``rdma -j``, ``dcb -j``); one error line when it is not."""
        _rc, out, _err = self.run(argv)
        try:
            return json.loads(out or "null")
        except ValueError:
            raise self.error("%s printed no JSON: %s" % (" ".join(argv), one_line(out, 200))) from None

    def sys(self, path):
        """``path`` (absolute, under /sys or /proc) below ``sysfs_root``."""
        return os.path.join(self.sysfs_root, self.checked(path).lstrip("/"))

    def conf(self, path):
        """``path`` (absolute, under /etc or /var) below ``config_root``."""
        return os.path.join(self.config_root, self.checked(path).lstrip("/"))

    def checked(self, path):
        """``path`` unchanged, or one error line when a part of it is ``..`` or it has a NUL byte: a name from the
        inventory or a device that made it so would lead the read or write out of the directory meant."""
        if "\0" in path or ".." in path.split("/"):
            raise self.error("refusing the path %r: a name in it is '..' or has a NUL byte (an interface, device or "
                             "module name is never a path)" % path)
        return path

    def read_sys(self, path):
        """The stripped text of a sysfs/procfs file, or None when it cannot be read."""
        try:
            with open(self.sys(path)) as handle:
                return handle.read().strip()
        except OSError:
            return None

    def pci_devices(self):
        """``{pci address: (vendor, class)}`` of every PCI device in sysfs (``"0x15b3"``, ``"0x020000"``; "" where
        unreadable)."""
        base = self.sys("/sys/bus/pci/devices")
        names = sorted(os.listdir(base)) if os.path.isdir(base) else []
        return dict((name, (self.read_sys("/sys/bus/pci/devices/%s/vendor" % name) or "",
                            self.read_sys("/sys/bus/pci/devices/%s/class" % name) or "")) for name in names)

    def os_release(self):
        """``/etc/os-release`` as ``{KEY: value}`` (quotes stripped; empty when unreadable)."""
        values = {}
        try:
            with open(self.conf("/etc/os-release")) as handle:
                text = handle.read()
        except OSError:
            text = ""
        for line in text.splitlines():
            if "=" in line and not line.lstrip().startswith("#"):
                key, value = line.split("=", 1)
                values[key.strip()] = value.strip().strip('"').strip("'")
        return values

    def kernel_headers(self):
        """The running kernel's headers: ``{"release", "present" (its /lib/modules/<release>/build exists),
        "package"}`` - ``linux-headers-<release>`` on Debian and Ubuntu, ``kernel-devel-<release>`` on the RHEL
        family, None elsewhere. DKMS and the GPU driver build against them."""
        release = os.uname()[2]
        values = self.os_release()
        ids = set(("%s %s" % (values.get("ID", ""), values.get("ID_LIKE", ""))).split())
        package = None
        if ids & {"debian", "ubuntu"}:
            package = "linux-headers-%s" % release
        elif ids & {"rhel", "fedora", "centos", "rocky", "almalinux"}:
            package = "kernel-devel-%s" % release
        return {"release": release, "present": os.path.isdir(self.sys("/lib/modules/%s/build" % release)),
                "package": package}

    def write_sys(self, path, value):
        """Write ``value`` to a sysfs/procfs file; one error line naming the file on failure."""
        try:
            with open(self.sys(path), "w") as handle:
                handle.write("%s\n" % value)
        except OSError as exc:
            raise self.error("writing %s to %s: %s" % (value, path, exc.strerror or exc)) from None

    def mkdir_sys(self, path):
        """Create the directory ``path`` (under /sys, such as a configfs entry) below ``sysfs_root``; one error line
        naming it on failure."""
        try:
            os.makedirs(self.sys(path), exist_ok=True)
        except OSError as exc:
            raise self.error("mkdir %s: %s" % (path, exc.strerror or exc)) from None


def refuse_action_options(module, names, plugin):
    """Fail the module with one line when options that only its action plugin handles reached it (``cluster``,
    ``interfaces`` ...: the model never travels to a host), e.g. when the module file is run on its own."""
    given = [name for name in names if module.params.get(name) not in (None, {}, [], "")]
    if given:
        module.fail_json(msg="%s: %s %s handled on the controller by the action plugin %s, which derives this "
                             "module's flat options from the model; run the task through Ansible, or give the flat "
                             "options instead" % (plugin.rsplit(".", 1)[-1], ", ".join(given),
                                                  "is" if len(given) == 1 else "are", plugin))
