# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether the installed DOCA-OFED driver really loads, and what must not be under the driver when it restarts.

Pure functions (the module ``ainet.fabric.doca_ofed`` reads the host; :mod:`doca_ofed_state` judges the installed
driver and calls :func:`running_reboot` for the loaded one).

**Which mlx5_core** (:func:`module_origin`, :func:`parse_modinfo`): DKMS installs DOCA-OFED's modules under
``/lib/modules/<release>/updates/dkms/`` (Debian, Ubuntu) and NVIDIA's kmod packages under
``extra/mlnx-ofa_kernel/`` (RHEL); the kernel's own is ``kernel/drivers/net/ethernet/mellanox/``. Only the
DOCA/MLNX_OFED build has a ``version`` (``modinfo -F version``, ``/sys/module/mlx5_core/version``: NVIDIA's
nic-configuration-operator reads the loaded driver's version there and takes its absence for "OFED not loaded");
Debian's in-tree module has neither ``version`` nor ``srcversion``, so neither can be the only test.

**Secure Boot** (:func:`parse_sb_state`, :func:`efi_secure_boot`, :func:`parse_test_key`, :func:`mok_certificate`):
with Secure Boot on, the kernel loads a DKMS-built module only when the key that signed it is enrolled (MOK). The
state is ``mokutil --sb-state`` (``SecureBoot enabled``/``SecureBoot disabled``; ``EFI variables are not supported
on this system`` on a BIOS boot) or the EFI variable itself; ``mokutil --test-key <cert>`` says whether DKMS's
certificate is enrolled (``... is already enrolled``, ``... is not enrolled``, ``... is already in the enrollment
request``). DKMS's certificate (:func:`mok_certificate`, dkms ``prepare_mok``): on Ubuntu while
``/etc/dkms/framework.conf(.d)`` sets no ``mok_signing_key``, ``/var/lib/shim-signed/mok/MOK.der``; otherwise its
``mok_certificate``, else ``/var/lib/dkms/mok.pub``.

**Restart blockers** (:func:`parse_proc_modules`, :func:`restart_blockers`): NVIDIA's driver container
(Mellanox/doca-driver-build) refuses a driver reload while ``nvidia_peermem`` is in use, and while third-party RDMA
provider modules are loaded unless it is told to unload them.
"""

from __future__ import annotations

import re

# Where a mlx5_core.ko lives tells whose it is (path fragments, after /lib/modules/<release>/).
OFED_PATHS = ("/updates/dkms/", "/extra/mlnx-ofa_kernel/", "/updates/mlnx-ofa_kernel/")
INBOX_PATHS = ("/kernel/drivers/net/ethernet/mellanox/",)
# Mellanox/doca-driver-build entrypoint/pkg/mofedmodules/mofedmodules.go DefaultThirdPartyRDMAModules: non-NVIDIA
# RDMA providers (from rdma-core) its container refuses to reload the driver under unless told to unload them.
THIRD_PARTY_RDMA_MODULES = ("bnxt_re", "efa", "erdma", "iw_cxgb4", "hfi1", "hns_roce", "ionic_rdma", "irdma",
                            "ib_qib", "mana_ib", "ocrdma", "qedr", "rdma_rxe", "siw", "vmw_pvrdma")
PEERMEM = "nvidia_peermem"
# dkms prepare_mok: the certificate DKMS signs with.
DKMS_MOK = "/var/lib/dkms/mok.pub"
UBUNTU_MOK = "/var/lib/shim-signed/mok/MOK.der"
# The loaded module's sysfs directory (its version and srcversion files).
MLX5_CORE_SYSFS = "/sys/module/mlx5_core"
# The EFI global variable GUID (mokutil's efi_guid_global) of SecureBoot.
SECURE_BOOT_EFIVAR = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e098032b8c4c"


def parse_modinfo(text):
    """``modinfo <module>`` -> ``{field: first value}`` (``filename``, ``version``, ``srcversion``, ``signer`` ...);
    continuation lines (a signature's hex) are skipped."""
    fields = {}
    for line in (text or "").splitlines():
        match = re.match(r"^([a-z_]+):\s*(.*)$", line)
        if match and match.group(1) not in fields:
            fields[match.group(1)] = match.group(2).strip()
    return fields


def module_origin(filename, version=None):
    """``"ofed"``, ``"inbox"`` or None (unknown) of an installed module file; a ``version`` field means DOCA's."""
    path = str(filename or "")
    if any(part in path for part in OFED_PATHS):
        return "ofed"
    if any(part in path for part in INBOX_PATHS):
        return "inbox"
    return "ofed" if version else None


def read_loaded_mlx5_core(read_sys, is_dir):
    """The loaded mlx5_core as sysfs shows it: ``{"present", "version", "srcversion"}`` (None where a file is
    absent), read in this one place for every module that asks whether DOCA's driver is the loaded one
    (:func:`loaded_origin` decides). ``read_sys(path)``: a file's stripped text or None; ``is_dir(path)``: whether a
    directory exists (both take the path under the host's /sys, as :class:`host.runner.Runner` does).
    ``/sys/module/mlx5_core`` is the module's own directory; NVIDIA's nic-configuration-operator reads the same
    ``version`` through the driver's link to it (``/sys/bus/pci/drivers/mlx5_core/module/version``)."""
    return {"present": bool(is_dir(MLX5_CORE_SYSFS)), "version": read_sys(MLX5_CORE_SYSFS + "/version"),
            "srcversion": read_sys(MLX5_CORE_SYSFS + "/srcversion")}


def loaded_origin(present, version):
    """The loaded mlx5_core: None when ``/sys/module/mlx5_core`` is absent (not loaded), ``"ofed"`` with a
    ``version`` file, ``"inbox"`` without one."""
    if not present:
        return None
    return "ofed" if version else "inbox"


def running_reboot(present, loaded_version, loaded_srcversion, installed):
    """Why the loaded mlx5_core is not the installed one (the new driver loads at the next boot), or None.

    ``present``: ``/sys/module/mlx5_core`` exists (None: not known, the old callers); ``loaded_*``: its
    ``version`` and ``srcversion`` files; ``installed``: :func:`parse_modinfo` of ``modinfo mlx5_core``."""
    installed = installed or {}
    mine = module_origin(installed.get("filename"), installed.get("version"))
    loaded = loaded_origin(present if present is not None else loaded_srcversion is not None, loaded_version)
    if loaded == "inbox" and (mine == "ofed" or (mine is None and loaded_srcversion is not None)):
        return "the loaded mlx5_core is the kernel's own, not DOCA-OFED's: the installed driver loads at the next " \
               "boot (or driver restart)"
    srcversion = installed.get("srcversion")
    if loaded_srcversion and srcversion and loaded_srcversion != srcversion:
        return "the loaded mlx5_core (srcversion %s) is not the installed one (%s): the new driver loads at the " \
               "next boot (or driver restart)" % (loaded_srcversion, srcversion)
    return None


def parse_sb_state(text):
    """``mokutil --sb-state`` (stdout and stderr) -> ``"enabled"``, ``"disabled"``, ``"unsupported"`` (no EFI
    variables: a BIOS boot) or None. ``SecureBoot validation is disabled in shim`` after ``enabled``: shim does not
    verify, the kernel does not enforce module signatures - ``"disabled"``."""
    text = text or ""
    if "EFI variables are not supported on this system" in text or "doesn't support Secure Boot" in text:
        return "unsupported"
    if re.search(r"^SecureBoot enabled$", text, re.M):
        return "disabled" if "SecureBoot validation is disabled in shim" in text else "enabled"
    if re.search(r"^SecureBoot disabled$", text, re.M):
        return "disabled"
    return None


def efi_secure_boot(data):
    """The ``SecureBoot`` EFI variable as efivarfs gives it (4 bytes of attributes, then the value) -> ``"enabled"``
    (value 1), ``"disabled"``, or None when it cannot be read."""
    data = bytes(data or b"")
    if len(data) < 5:
        return None
    return "enabled" if bytearray(data)[4] == 1 else "disabled"


def parse_test_key(text):
    """``mokutil --test-key <cert>`` -> ``"enrolled"`` (in MokList or the firmware's db), ``"pending"`` (in the
    enrolment request: confirmed on the console at the next boot), ``"not_enrolled"``, ``"blocked"`` or None."""
    text = text or ""
    if re.search(r" is already (enrolled|in db)$", text, re.M):
        return "enrolled"
    if re.search(r" is already in the enrollment request$", text, re.M):
        return "pending"
    if re.search(r" is not enrolled$", text, re.M):
        return "not_enrolled"
    if re.search(r" is blocked in (dbx|MokListXRT)$", text, re.M):
        return "blocked"
    return None


def dkms_distribution(os_release):
    """The distribution name dkms's ``distro_version`` derives from ``/etc/os-release``: ``ID`` on Ubuntu, else
    ``${ID_LIKE[0]}`` when ``ID_LIKE`` is set (a sourced string is a one-element array: the whole value, so
    ``"ubuntu debian"`` on Linux Mint), else ``ID``. ``os_release``: the parsed file (a dict) or its ``ID`` alone."""
    release = os_release if isinstance(os_release, dict) else {"ID": os_release or ""}
    os_id = str(release.get("ID") or "")
    if os_id == "ubuntu":
        return os_id
    if "ID_LIKE" in release:
        return str(release.get("ID_LIKE") or "")
    return os_id


def _framework_value(framework_conf, name):
    """The value bash holds for ``name`` after sourcing the framework configuration (last assignment wins, an empty
    one included); None when never assigned."""
    value = None
    for line in (framework_conf or "").splitlines():
        match = re.match(r"^\s*%s\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s#]*))" % name, line)
        if match:
            value = next(g for g in match.groups() if g is not None)
    return value


def mok_certificate(framework_conf, os_release):
    """The certificate DKMS signs modules with, in dkms's own order (dkms.in ``prepare_mok``).

    ``framework_conf``: the text of ``/etc/dkms/framework.conf`` and ``framework.conf.d/*.conf`` in that order (dkms
    sources them in turn, so the last assignment wins); ``os_release``: ``/etc/os-release`` (a dict, or its ``ID``).
    While ``mok_signing_key`` is unset or empty, dkms on Ubuntu and its derivatives (:func:`dkms_distribution`
    ``ubuntu*``) takes ``update-secureboot-policy``'s key and ``/var/lib/shim-signed/mok/MOK.der``, whatever
    ``mok_certificate`` says; once ``mok_signing_key`` is set, it keeps ``mok_certificate`` and falls back to
    ``/var/lib/dkms/mok.pub``, as it does on every other distribution. (Gentoo's portage and kernel-config keys are
    not modelled.)"""
    certificate = _framework_value(framework_conf, "mok_certificate")
    if not _framework_value(framework_conf, "mok_signing_key") and \
            dkms_distribution(os_release).startswith("ubuntu"):
        return UBUNTU_MOK
    return certificate or DKMS_MOK


def secure_boot_problem(state, cert, cert_exists, key_state, signer=None, dkms_module=True):
    """``(problem, pending)``: why a DKMS-built driver will not load under Secure Boot (one line with the fix), and
    what waits for the next boot (the key's enrolment confirmed on the console); both None when nothing stands in
    the way. ``state``: :func:`parse_sb_state`; ``cert``: :func:`mok_certificate`; ``key_state``:
    :func:`parse_test_key` (None: ``mokutil`` missing); ``signer``: ``modinfo``'s of the installed module (``""``:
    unsigned, None: not installed yet); ``dkms_module``: the driver is DKMS-built (NVIDIA's kmods carry their own
    signature)."""
    if state != "enabled" or not dkms_module:
        return None, None
    enrol = ("Fix: 'mokutil --import %s' (it asks for a one-time password), reboot and confirm the key in MokManager "
             "on the console, then run again" % cert)
    if signer == "":
        return ("Secure Boot is on and the installed mlx5_core is not signed: the kernel refuses to load it. Fix: "
                "let DKMS sign it (a signing key and certificate, mok_signing_key/mok_certificate in "
                "/etc/dkms/framework.conf), rebuild it (dkms autoinstall) and enrol that certificate"), None
    if not cert_exists:
        return ("Secure Boot is on and DKMS has no signing certificate (%s): the DKMS-built driver would be refused "
                "by the kernel. Fix: 'dkms generate_mok' (dkms 3.1 and later) and 'mokutil --import %s', reboot and "
                "confirm the key in MokManager on the console, then run again" % (cert, cert)), None
    if key_state is None:
        return ("Secure Boot is on and whether DKMS's certificate %s is enrolled cannot be read (mokutil is not "
                "installed or says nothing known). Fix: install mokutil; if the key is not enrolled: %s"
                % (cert, enrol)), None
    if key_state == "not_enrolled":
        return ("Secure Boot is on and DKMS's signing certificate %s is not enrolled: the kernel refuses the "
                "DKMS-built driver. %s" % (cert, enrol)), None
    if key_state == "blocked":
        return ("Secure Boot is on and DKMS's signing certificate %s is blocked (dbx or MokListX): the kernel refuses "
                "the DKMS-built driver. Fix: sign with a new key (dkms generate_mok after moving the old one away) "
                "and enrol it" % cert), None
    if key_state == "pending":
        return None, ("DKMS's signing certificate %s is in the enrolment request: confirm it in MokManager on the "
                      "console at the next boot, or the DKMS-built driver will not load" % cert)
    return None, None


def parse_proc_modules(text):
    """``/proc/modules`` (``name size refcount users state address``; ``users`` comma-separated with a trailing
    comma, ``-`` for none) -> ``{name: {"refcount": int, "users": [names]}}``; short lines are skipped."""
    found = {}
    for line in (text or "").splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        try:
            refcount = int(fields[2])
        except ValueError:
            refcount = 0
        users = [] if fields[3] == "-" else [name for name in fields[3].strip(",").split(",") if name]
        found[fields[0]] = {"refcount": refcount, "users": users}
    return found


def restart_blockers(modules):
    """What in ``modules`` (:func:`parse_proc_modules`) stops a driver restart, one line each: ``nvidia_peermem``
    loaded (it holds ib_core; in use, nothing but a reboot frees it - NVIDIA's container refuses too), and
    third-party RDMA providers (they hold ib_core; openibd does not unload them)."""
    found = []
    peermem = modules.get(PEERMEM)
    if peermem is not None:
        if peermem["refcount"] > 0:
            found.append("%s is in use (refcount %d%s): GPUDirect RDMA runs over it" % (
                PEERMEM, peermem["refcount"],
                "; used by " + ", ".join(peermem["users"]) if peermem["users"] else ""))
        else:
            found.append("%s is loaded (unused: 'rmmod %s' first, and load it again after the restart)"
                         % (PEERMEM, PEERMEM))
    third = [name for name in THIRD_PARTY_RDMA_MODULES if name in modules]
    if third:
        found.append("third-party RDMA modules are loaded (%s): another vendor's RDMA devices run on the same RDMA "
                     "core ('modprobe -r %s' first if nothing needs them)" % (", ".join(third), " ".join(third)))
    return found


def modprobe_blacklist(files, cmdline=""):
    """Where ``mlx5_core`` is kept from loading: ``blacklist mlx5_core`` or ``install mlx5_core /bin/false``-style
    lines of modprobe.d files (``{path: text}``) and ``module_blacklist=``/``modprobe.blacklist=`` on the kernel
    command line; one line each."""
    found = []
    for path in sorted(files):
        for line in files[path].splitlines():
            words = line.split("#", 1)[0].split()
            if len(words) >= 2 and words[1] == "mlx5_core" and (
                    words[0] == "blacklist" or (words[0] == "install" and len(words) >= 3
                                                and words[2] in ("/bin/false", "/bin/true", "/usr/bin/false",
                                                                 "/usr/bin/true"))):
                found.append("%s: %s" % (path, " ".join(words)))
    for word in (cmdline or "").split():
        key, _sep, value = word.partition("=")
        if key in ("module_blacklist", "modprobe.blacklist") and "mlx5_core" in value.split(","):
            found.append("the kernel command line: %s" % word)
    return found


def not_loaded_problem(mellanox, present, reasons):
    """The problem when ConnectX/BlueField functions (``mellanox``: PCI addresses) are there and no mlx5_core is
    loaded (``present`` False): a node without its driver is never verified. ``reasons``: what was found."""
    if present or not mellanox:
        return None
    return ("no mlx5_core is loaded while ConnectX/BlueField devices are present (%s): %s" % (
        ", ".join(sorted(mellanox)[:4]) + (" ..." if len(mellanox) > 4 else ""),
        "; ".join(reasons) if reasons else "no reason found here; fix: 'modprobe mlx5_core' and read "
        "'dmesg | grep -i -e mlx5 -e module' (a signature rejected, unknown symbols)"))


def dkms_builds(version, family):
    """Whether the pinned DOCA's driver is built by DKMS on the host: always on Debian and Ubuntu (apt), and on the
    RHEL family from DOCA 3.2 on, which ships no prebuilt kmods (NVIDIA DOCA 3.2.1 general-support notes)."""
    if family == "apt":
        return True
    major_minor = tuple(int(part) for part in str(version or "0.0").split("-", 1)[0].split(".")[:2])
    return major_minor >= (3, 2)


def secure_boot_args(secure_boot, signer=None, dkms_module=True):
    """:func:`secure_boot_problem`'s arguments from the module's ``secure_boot`` result."""
    return {"state": secure_boot["state"], "cert": secure_boot["certificate"],
            "cert_exists": secure_boot["certificate_present"], "key_state": secure_boot["key"], "signer": signer,
            "dkms_module": dkms_module}
