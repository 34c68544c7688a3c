#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: doca_ofed
short_description: Plan, verify and (only when asked) restart NVIDIA DOCA-OFED on a host
version_added: 0.2.0
author: ainet.fabric contributors (@ainet)
description:
  - With O(state=plan), checks the pinned O(version) and O(profile) and names the repository for this host's
    distribution and architecture (NVIDIA's flat repository per DOCA version, or O(mirror) with the same layout),
    the packages and the driver release the version ships; changes nothing. A bad version, profile or a
    distribution DOCA-OFED has no repository for fails with one line.
  - With O(state=repository), also reads the repository's index from this host, before anything on it changes (apt's
    C(Packages) file of the flat repository; dnf C(repoquery) with the repository given on the command line only),
    and returns the packages it ships, those of them installed, which of those it would upgrade, and which it would
    downgrade (refused with one line unless O(allow_downgrade)). A version the repository lacks (404) and a
    repository this host cannot read are refused with one line each.
  - With O(state=key), reads the repository's signing key from O(key_url) or as copied to O(key_source) on the host
    and writes it to O(key_path) as the one canonical ASCII-armored block apt's C(Signed-By) and rpm read (binary
    key material is armored; armor with CRLF, headers or several blocks is rewritten). Content that is not an
    OpenPGP public key, key material cut short or with something appended, and with O(key_fingerprint) any key
    but that one, are refused with one line before anything is written.
  - With O(state=verify), reads what is installed and what runs - C(ofed_info -s), C(dkms status) (module
    C(mlnx-ofed-kernel) on Debian and Ubuntu, C(mlnx-ofa_kernel) on the RHEL family), the loaded C(mlx5_core)'s
    C(version) and C(srcversion) against C(modinfo) - and fails with one line per problem and its fix (the installed
    driver is not the pinned one; the running kernel has no DOCA-OFED modules built, the classic breakage after a
    kernel update). A loaded driver older than the installed one is a pending reboot; which
    C(mlx5_core) runs is told by the module's path (in C(modinfo), C(updates/dkms/) or C(extra/mlnx-ofa_kernel/) is
    DOCA's, C(kernel/drivers/net/ethernet/mellanox/) the kernel's) and C(/sys/module/mlx5_core/version) (only DOCA's
    has it), so the kernel's own without a C(srcversion) (Debian) is a pending reboot too.
  - Also with O(state=verify), before any reboot, the kernel the next boot starts (RHEL family C(grubby
    --default-kernel), Debian and Ubuntu the newest C(/boot/vmlinuz-*)) must have the installed driver's DKMS
    modules; where it has not, runs C(dkms autoinstall -k <kernel>) (reported as a change; in check mode only
    reported) and reads C(dkms status) back. Without that kernel's headers, fails with the fix.
  - With O(state=verify), a node with ConnectX/BlueField functions (PCI vendor 15b3) and no C(mlx5_core) loaded
    fails, naming what was found (Secure Boot and DKMS's key, a C(blacklist mlx5_core) in modprobe.d or on the
    kernel command line, the driver's build problems).
  - Secure Boot (C(mokutil --sb-state), else the EFI variable) - a DKMS-built driver is refused with O(state=plan)
    (before any install) and fails O(state=verify) while it waits for the next boot, when DKMS's signing
    certificate is missing, not enrolled (C(mokutil --test-key)), blocked, or cannot be checked (no C(mokutil));
    the message gives C(mokutil --import <cert>) and the confirmation in MokManager on the console. A certificate
    in the enrolment request is a pending reboot.
  - With O(restart=true) and a loaded driver that is not the installed one, restarts it (C(/etc/init.d/openibd
    restart)) and reads it back - but never when a ConnectX function carries the management path (a default route
    of any table, the address this session came in on, a bond, VLAN or bridge above them, or a path that cannot be
    traced), a storage user of the RDMA stack is there (NVMe-oF, NFS over RDMA, iSER, SRP), C(nvidia_peermem) is
    loaded, or a third-party RDMA provider module is (C(irdma), C(efa), C(bnxt_re) ..., the list of NVIDIA's driver
    container); that refuses the run before any change, naming it. Nothing is unloaded by the module.
  - An old stack - MLNX_OFED (C(ofed_info -s) C(MLNX_OFED_LINUX-...)), or DOCA before 2.6 (the release in the version of
    C(doca-host), C(doca-host-repo-<os>), a profile's meta-package, C(doca-runtime), C(doca-tools), C(doca-sdk); an
    C(OFED-internal) driver before 24.01) - must be uninstalled before DOCA-Host installs (NVIDIA's DOCA-Host guide;
    2.6 and later upgrade in place). O(state=plan) refuses it with one line naming it and the commands that would
    remove it, unless O(replace_old_stack); with it, while the RDMA stack is in use (the same conditions as a
    restart). With O(state=old_stack) and O(replace_old_stack), removes it as the guide does - C(apt-get remove
    --purge) of the packages named like C(doca|flexio|dpa-gdbserver|dpa-stats|dpa-resource-mgmt|dpaeumgmt) (dnf
    C(remove) of those named like C(doca)), then C(/usr/sbin/ofed_uninstall.sh --force) - and reports the reboot its
    still loaded modules need; never reboots.
  - With O(state=file), writes O(file_text) to O(file_path) with O(file_mode) when either differs - the files of the
    role that hold the mirror's login (apt's C(auth.conf.d) entry, the dnf repository file). The text goes to a new
    file created 0600 (C(O_CREAT|O_EXCL)) in the same directory, is given its mode, then renamed into place, so no
    other user can open the login at any moment whatever the umask (C(ansible.builtin.copy) renames first and
    chmods after; C(yum_repository) opens the file C(O_CREAT) 0666 and writes before its chmod). Never shown in a
    diff.
extends_documentation_fragment:
  - ainet.fabric.host.roots
options:
  state:
    description: V(plan) names the repository and packages; V(repository) also reads what the configured repository
      ships and would change; V(key) writes the repository's signing key; V(old_stack) removes an old MLNX_OFED or
      DOCA before 2.6 (with O(replace_old_stack)); V(verify) reads the host (and restarts when asked); V(file)
      writes a file holding the mirror's login.
    type: str
    choices: [plan, repository, key, old_stack, verify, file]
    default: verify
  version:
    description: The pinned DOCA version (C(3.2.1)); required with O(state=plan). With O(state=verify) the installed
      driver must be the release this version ships, and none installed is a problem; empty verifies what is there.
    type: str
    default: ""
  profile:
    description: A DOCA profile (C(doca-ofed), C(doca-roce), C(doca-networking), C(doca-all), C(doca-host-basic)) or
      a list of package names.
    type: raw
    default: doca-ofed
  mirror:
    description:
      - Base URL of a local mirror with NVIDIA's layout (C(<mirror>/<version>/<os>/<arch>/)); empty for NVIDIA's
        repository.
      - A login in it (C(https://user:token@mirror/)) is split off and used as O(mirror_username) and
        O(mirror_password) would be; no URL returned (C(repository.url)) or named in a message carries it, and its
        password is masked in everything returned. The role gives the login in those options instead, and writes it
        to a file readable by root only.
    type: str
    default: ""
  mirror_username:
    description: The login to read O(mirror) with (HTTP basic authentication).
    type: str
  mirror_password:
    description: The password (or token) of O(mirror_username); a secret (C(no_log)), never returned.
    type: str
  mirror_option:
    description: The name of the role option that set the repository's location, named in the refusals.
    type: str
    default: doca_ofed_mirror
  key_source:
    description: With O(state=key), the signing key as copied to the host (armored or binary).
    type: path
  key_url:
    description: With O(state=key), the URL the signing key is fetched from on this host (read into memory, in check
      mode too, and judged before anything is written). Exclusive with O(key_source). With O(state=plan), empty names
      NVIDIA's current DOCA Host key for the host's package manager in the returned C(key.url). A login in it is
      used for the fetch and redacted from what is returned and printed.
    type: str
  key_path:
    description: With O(state=key), where the armored key is written (the file the repository's configuration
      names).
    type: path
  key_origin:
    description: With O(state=key), where the key came from (its URL or controller path), named in the refusals.
    type: str
    default: ""
  file_path:
    description: With O(state=file), the file to write (a missing directory is created 0755).
    type: path
  file_text:
    description: With O(state=file), the file's whole text; a secret (C(no_log)), never returned or shown in a diff.
    type: str
  file_mode:
    description: With O(state=file), the file's mode.
    type: str
    default: "0600"
  key_option:
    description: With O(state=key), the name of the role option that gave the key, named in the refusals.
    type: str
    default: doca_ofed_key_url
  key_fingerprint:
    description: With O(state=key), the fingerprints (40 hex digits each, spaces ignored) of exactly the keys the key
      file must hold; empty checks none. The role pins NVIDIA's current DOCA Host key
      (C(70454E6BF5D9C2D3B78709E8DC726C5E41B9CC50)); the retired Mellanox keys of C(GPG-KEY-Mellanox.pub) pass only
      when each is listed here. With O(state=plan), checked for form (one line naming it) before anything changes.
    type: list
    elements: str
    default: []
  allow_downgrade:
    description: With O(state=repository), let the repository's packages replace newer installed ones.
    type: bool
    default: false
  restart:
    description: Restart the driver when the loaded one is not the installed one (refused on the management path and
      under storage users); otherwise that is a pending reboot.
    type: bool
    default: false
  replace_old_stack:
    description: With O(state=plan) or O(state=old_stack), an old MLNX_OFED or DOCA before 2.6 may be removed (refused
      otherwise, and while the RDMA stack is in use); with O(state=repository), a downgrade against its packages is not
      refused (they are removed first).
    type: bool
    default: false
  management_addresses:
    description: This host's addresses (or names) that Ansible reaches it on; the NIC that holds one carries the
      management path.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: Reads everything; a restart is only reported.
  diff_mode:
    support: none
    description: Nothing is written by the module; the role's package tasks show their own changes.
requirements:
  - C(ofed_info) and C(dkms) (DOCA-OFED) to verify; C(modinfo); C(mokutil) where Secure Boot is on
"""

EXAMPLES = r"""
- name: Where DOCA 3.2.1's packages come from for this host
  ainet.fabric.doca_ofed:
    state: plan
    version: 3.2.1
    profile: doca-ofed

- name: Fetch the repository's signing key on the host and write it as the armored file apt reads
  ainet.fabric.doca_ofed:
    state: key
    key_url: https://linux.mellanox.com/public/repo/doca/public_keys/nvidia-doca-debian-gpg-public-key.gpg
    key_path: /etc/apt/keyrings/ainet-doca-ofed.asc
    key_fingerprint: 70454E6BF5D9C2D3B78709E8DC726C5E41B9CC50

- name: Remove MLNX_OFED or a DOCA before 2.6 before DOCA 3.2.1 installs (refused while the RDMA stack is in use)
  ainet.fabric.doca_ofed:
    state: old_stack
    version: 3.2.1
    replace_old_stack: true
    management_addresses: [10.0.0.5]

- name: Verify the installed and running driver, restart it if the management path allows
  ainet.fabric.doca_ofed:
    version: 3.2.1
    restart: true
"""

RETURN = r"""
repository:
  description: With O(state=plan), the repository (C(family) apt or dnf, C(url), C(os) directory); with
    O(state=repository) also C(available) (the package names it ships), C(installed) (those of them installed),
    C(upgrade) (those it would upgrade), C(downgrade) (C(name installed -> repository's)), C(current), and on apt
    C(apt_preferences), the preferences file that holds exactly those packages at the repository's version, on dnf
    C(versionlock), the lines of dnf's versionlock list that hold them there (C(name-epoch:version-release.*)).
  returned: always
  type: dict
key:
  description: With O(state=key), C(path), C(fingerprints) (the primary keys' v4 fingerprints) and C(armored) (whether
    the key came ASCII-armored; binary key material was armored here). With O(state=plan), C(url) (O(key_url), or
    NVIDIA's current DOCA Host key for this package manager; a login in it redacted), C(origin) and C(fingerprints)
    (the pinned ones).
  returned: when state is key or plan
  type: dict
headers:
  description: With O(state=plan) or O(state=repository), the running kernel's headers (C(release), C(present),
    C(package)) and C(meta), the distribution's headers meta-package of the running kernel's flavour
    (C(linux-headers-amd64), C(linux-headers-generic); null on the RHEL family, whose C(kernel-devel) upgrades follow
    every new kernel).
  returned: when state is plan or repository
  type: dict
boot:
  description: With O(state=verify), the kernel the next boot starts (C(kernel)), whether the installed driver's DKMS
    modules are built for it (C(built)), the C(dkms autoinstall) run for it (C(command), null when none) and
    C(problem).
  returned: when state is verify and a driver is installed
  type: dict
packages:
  description: The packages to install.
  returned: always
  type: list
  elements: str
driver:
  description: The driver release (C(YY.MM)) the pinned version ships (null when not known).
  returned: always
  type: str
ofed:
  description: The installed DOCA-OFED (C(ofed_info -s)) as C(version) and C(flavour); null when none.
  returned: always
  type: dict
dkms:
  description: C(dkms status) entries.
  returned: always
  type: list
  elements: dict
loaded:
  description: The loaded mlx5_core - C(present) (C(/sys/module/mlx5_core) exists), its C(version) (only the
    DOCA-OFED build has one) and C(srcversion) - and the installed one, C(installed) (C(modinfo mlx5_core)'s
    C(filename), C(version), C(srcversion), C(signer); C(signer) empty when unsigned), C(installed_srcversion).
  returned: always
  type: dict
secure_boot:
  description: With O(state=verify), and with O(state=plan) or O(state=repository) where DKMS builds the driver -
    C(state) (C(enabled), C(disabled), C(unsupported) without EFI, null when unknown), C(certificate) (DKMS's
    signing certificate), C(certificate_present), C(key) (C(enrolled), C(pending), C(not_enrolled), C(blocked);
    null when not checked).
  returned: when read
  type: dict
old_stack:
  description: With O(state=plan) or O(state=old_stack), an old stack that must go before DOCA-Host installs -
    C(installed) (what it is), C(packages) (those the package manager removes), C(commands) (argv lists, in order),
    C(problem) (why nothing here can remove it, or null); null when there is none.
  returned: when state is plan or old_stack
  type: dict
storage:
  description: Storage users of the RDMA stack.
  returned: always
  type: list
  elements: str
commands:
  description: The commands run (or, in check mode, that would run), in order.
  returned: always
  type: list
  elements: str
path:
  description: With O(state=file), the file written (or that would be).
  returned: when state is file
  type: str
reboot_pending:
  description: Why a reboot is due before the node is as wanted (empty when none).
  returned: always
  type: list
  elements: str
"""

import glob
import gzip
import lzma
import os
import re
import shutil
import stat
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.urls import fetch_url

from ansible_collections.ainet.fabric.plugins.module_utils.common import secrets
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_load as load
from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_old_stack as old
from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_state as lib
from ansible_collections.ainet.fabric.plugins.module_utils.host import mgmt_path
from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import read_text, write_atomic
from ansible_collections.ainet.fabric.plugins.module_utils.host.runner import VENDOR_MELLANOX, Runner, one_line
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse_host import parse_ofed_info


def _dpkg_compare(runner):
    try:
        import apt_pkg  # python3-apt, which ansible.builtin.apt needs on the host anyway
        apt_pkg.init_system()
        return apt_pkg.version_compare
    except ImportError:
        def compare(one, two):
            if runner.run(["dpkg", "--compare-versions", one, "gt", two], check=False)[0] == 0:
                return 1
            return 0 if runner.run(["dpkg", "--compare-versions", one, "eq", two], check=False)[0] == 0 else -1
        return compare


def _rpm_compare(one, two):
    def split(evr):
        epoch, _sep, rest = evr.rpartition(":")
        version, _sep, release = rest.partition("-")
        return (epoch or "0", version, release)
    try:
        import rpm  # python3-rpm, the bindings dnf itself uses
        return rpm.labelCompare(split(one), split(two))
    except ImportError:
        return lib.rpm_version_compare(split(one), split(two))


def installed_packages(runner, family):
    """``{name: {"version", "status"}}`` of the packages this host knows: ``dpkg-query -W`` on Debian and Ubuntu
    (every status: ``ii``, ``rc`` ...), ``rpm -qa`` on the RHEL family (status ``ii``)."""
    if family == "apt":
        _rc, out, _err = runner.run(["dpkg-query", "-W", "-f", "${Package} ${Version} ${db:Status-Abbrev}\n"])
        return lib.parse_dpkg_query(out)
    _rc, out, _err = runner.run(["rpm", "-qa", "--qf", "%{NAME} %{EPOCHNUM}:%{VERSION}-%{RELEASE}\n"])
    return dict((name, {"version": version, "status": "ii"}) for name, version in lib.parse_rpm_qa(out).items())


def fetch(module, url, login=None, password=None):
    """``(status, bytes)`` of a URL read from this host (``file://`` too); on failure the status is the HTTP code, 404
    for a missing file, or -1, and the bytes are the reason. ``login`` and ``password`` (HTTP basic, sent with the
    first request) or a userinfo in ``url`` authenticate the read."""
    if url.startswith("file://"):
        try:
            with open(url[len("file://"):], "rb") as handle:
                return 200, handle.read()
        except OSError:
            return 404, None
    if login is None:
        url, login, password = secrets.split_userinfo(url, "url")
    # fetch_url takes its credentials from the module's parameters (the url_argument_spec names)
    module.params.update(url_username=login, url_password=password, force_basic_auth=login is not None)
    try:
        response, info = fetch_url(module, url, timeout=60, decompress=False, force=True)
    finally:  # never in the result's invocation
        for name in ("url_username", "url_password", "force_basic_auth"):
            module.params.pop(name, None)
    if info.get("status") == 200 and response is not None:
        return 200, response.read()
    return info.get("status", -1), info.get("msg", "")


class Repository(object):
    """What the pinned repository ships and would change on this host, read from the repository itself before
    anything on the host changes (the package manager's own sources and lists stay as they are)."""

    INDEXES = ("Packages.gz", "Packages.xz", "Packages")

    def __init__(self, module, runner, url, mirror_hint, login=None, password=None):
        self.module = module
        self.runner = runner
        self.url = url  # without credentials: it is named in the messages
        self.hint = mirror_hint
        self.login, self.password = login, password

    def _get(self, name):
        return fetch(self.module, self.url + name, self.login, self.password)

    def apt(self):
        failures = []
        for name in self.INDEXES:
            status, body = self._get(name)
            if status == 200:
                if name.endswith(".gz"):
                    body = gzip.decompress(body)
                elif name.endswith(".xz"):
                    body = lzma.decompress(body)
                available = lib.parse_packages_index(body.decode("utf-8", "replace"))
                break
            failures.append((name, status, body))
        else:
            self.unreadable(failures)
        installed = dict((name, entry["version"]) for name, entry in installed_packages(self.runner, "apt").items()
                         if entry["status"] == "ii")
        return available, installed, _dpkg_compare(self.runner)

    def dnf(self):
        # The repository alone, from a repository file in a directory of this run only (--setopt=reposdir): nothing
        # under /etc/yum.repos.d changes, and a login goes into that file (mode 0600), never onto the command line
        # where every local user reads it (/proc/<pid>/cmdline).
        probe = tempfile.mkdtemp(prefix="ainet-doca-ofed-probe.")
        try:
            path = os.path.join(probe, "ainet-doca-ofed-probe.repo")
            handle = os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w")
            with handle:
                handle.write(lib.dnf_probe_repo(self.url, self.login, self.password))
            rc, out, err = self.runner.run(["dnf", "repoquery", "-q", "--setopt=reposdir=" + probe,
                                            "--repo=ainet-doca-ofed-probe", "--qf", "%{name} %{evr}\n"], check=False)
        finally:
            shutil.rmtree(probe, ignore_errors=True)
        if rc != 0:
            self.unreadable([("repodata", -1, one_line(err or out))])
        available = lib.parse_repoquery(out)
        installed = dict((name, entry["version"]) for name, entry in installed_packages(self.runner, "dnf").items())
        return available, installed, _rpm_compare

    def unreadable(self, failures):
        if all(status == 404 for _name, status, _msg in failures):
            raise lib.DocaError("doca_ofed_version: %s is not in the repository for this host (%s: 404); fix: pin a "
                                "released DOCA version, or set %s" % (self.version, self.url, self.hint))
        name, status, msg = [f for f in failures if f[1] != 404][0]
        raise lib.DocaError("%s: cannot read %s%s from this host (%s %s); fix: check the mirror, its credentials or "
                            "the proxy" % (self.hint, self.url, name, status, one_line(str(msg or ""))))

    def read(self, family, version):
        self.version = version
        available, installed, compare = self.apt() if family == "apt" else self.dnf()
        if not available:
            raise lib.DocaError("doca_ofed: the repository %s lists no packages; fix: check that it has this "
                                "version's packages for this distribution and architecture" % self.url)
        delta = lib.repository_delta(available, installed, compare)
        delta["available"] = sorted(available)
        delta["installed"] = sorted(set(available) & set(installed))
        if family == "dnf":
            delta["versionlock"] = lib.dnf_versionlock(available)
        return delta


class Driver(object):
    """Reads the installed and loaded driver through a :class:`Runner`."""

    def __init__(self, runner):
        self.runner = runner
        self.release = os.uname()[2]

    def ofed(self):
        if not self.runner.bin("ofed_info"):
            return None
        _rc, out, _err = self.runner.run(["ofed_info", "-s"], check=False)
        return parse_ofed_info(out or "").get("ofed")

    def dkms(self):
        if not self.runner.bin("dkms"):
            return []
        _rc, out, _err = self.runner.run(["dkms", "status"], check=False)
        return lib.parse_dkms_status(out)

    def loaded(self):
        """The loaded mlx5_core (``present``: /sys/module/mlx5_core exists; its ``version`` and ``srcversion``) and
        the installed one (``installed``: ``modinfo mlx5_core``'s filename, version, srcversion, signer)."""
        installed = {}
        if self.runner.bin("modinfo"):
            rc, out, _err = self.runner.run(["modinfo", "mlx5_core"], check=False)
            fields = load.parse_modinfo(out) if rc == 0 else {}
            installed = dict((key, fields[key]) for key in ("filename", "version", "srcversion", "signer")
                             if key in fields)
            if "filename" in installed:
                installed.setdefault("signer", "")
        loaded = load.read_loaded_mlx5_core(self.runner.read_sys, lambda path: os.path.isdir(self.runner.sys(path)))
        loaded.update(installed_srcversion=installed.get("srcversion"), installed=installed)
        return loaded

    def modules(self):
        """``/proc/modules`` as :func:`doca_ofed_load.parse_proc_modules`."""
        return load.parse_proc_modules(self.runner.read_sys("/proc/modules"))

    def secure_boot(self):
        """``{"state", "certificate", "certificate_present", "key"}``: Secure Boot (mokutil, else the EFI variable,
        else no EFI: ``unsupported``) and DKMS's signing certificate with its enrolment (``mokutil --test-key``)."""
        state = None
        if self.runner.bin("mokutil"):
            _rc, out, err = self.runner.run(["mokutil", "--sb-state"], check=False)
            state = load.parse_sb_state("%s\n%s" % (out, err))
        if state is None:
            try:
                with open(self.runner.sys(load.SECURE_BOOT_EFIVAR), "rb") as handle:
                    state = load.efi_secure_boot(handle.read())
            except OSError:
                state = None if os.path.isdir(self.runner.sys("/sys/firmware/efi")) else "unsupported"
        conf = []
        for path in [self.runner.conf("/etc/dkms/framework.conf")] + sorted(
                glob.glob(self.runner.conf("/etc/dkms/framework.conf.d/*.conf"))):
            try:
                with open(path) as handle:
                    conf.append(handle.read())
            except OSError:
                pass
        cert = load.mok_certificate("\n".join(conf), self.runner.os_release())
        present = os.path.isfile(self.runner.conf(cert))
        key = None
        if state == "enabled" and present and self.runner.bin("mokutil"):
            _rc, out, err = self.runner.run(["mokutil", "--test-key", self.runner.conf(cert)], check=False)
            key = load.parse_test_key("%s\n%s" % (out, err))
        return {"state": state, "certificate": cert, "certificate_present": present, "key": key}

    def blacklisted(self):
        """Where mlx5_core is kept from loading (modprobe.d files, the kernel command line)."""
        files = {}
        for directory in ("/etc/modprobe.d", "/run/modprobe.d", "/usr/lib/modprobe.d", "/lib/modprobe.d"):
            for path in sorted(glob.glob(self.runner.conf(directory + "/*.conf"))):
                try:
                    with open(path) as handle:
                        files[directory + "/" + os.path.basename(path)] = handle.read()
                except OSError:
                    pass
        return load.modprobe_blacklist(files, self.runner.read_sys("/proc/cmdline"))

    def nvme_transports(self):
        base = self.runner.sys("/sys/class/nvme")
        return dict((name, self.runner.read_sys("/sys/class/nvme/%s/transport" % name))
                    for name in (sorted(os.listdir(base)) if os.path.isdir(base) else []))

    def boot_kernel(self, family):
        """The kernel release the next boot starts (:func:`lib.boot_kernel`), or None."""
        grubby = ""
        if family == "dnf" and self.runner.bin("grubby"):
            rc, out, _err = self.runner.run(["grubby", "--default-kernel"], check=False)
            grubby = out if rc == 0 else ""
        boot = self.runner.conf("/boot")
        names = sorted(os.listdir(boot)) if family != "dnf" and os.path.isdir(boot) else []
        return lib.boot_kernel(family, grubby, names)

    def headers_present(self, release):
        return os.path.isdir(self.runner.sys("/lib/modules/%s/build" % release))

    def mellanox(self):
        return set(pci for pci, (vendor, _cls) in self.runner.pci_devices().items() if vendor == VENDOR_MELLANOX)

    def restart_argv(self):
        script = self.runner.conf("/etc/init.d/openibd")
        if os.path.exists(script):
            return [script, "restart"]
        raise lib.DocaError("doca_ofed: a driver restart is asked for but /etc/init.d/openibd (DOCA-OFED's driver "
                            "loader) is not installed; reboot the node instead (fabric_reboot)")


def headers_meta(runner, family, release):
    """The headers meta-package that follows the running kernel's line (:func:`lib.headers_meta_package`), from what
    the installed ``linux-image-*`` packages depend on; None on the RHEL family and where none is installed."""
    if family != "apt" or not runner.bin("dpkg-query"):
        return None
    _rc, out, _err = runner.run(["dpkg-query", "-W", "-f", lib.IMAGE_DEPENDS_FORMAT, "linux-image-*"], check=False)
    return lib.headers_meta_package(family, release, lib.parse_image_depends(out))


def rdma_users(runner, driver, addresses):
    """What uses the RDMA stack on this node: ``(storage users, the arguments of lib.rdma_in_use and
    lib.restart_refusal)`` - the management path over a ConnectX, storage, nvidia_peermem and third-party RDMA."""
    modules = driver.modules()
    storage = lib.storage_users(modules, runner.read_sys("/proc/mounts"), driver.nvme_transports())
    _devices, management, problem = mgmt_path.read_management(runner, addresses)
    return storage, (management, driver.mellanox(), storage, problem, load.restart_blockers(modules))


def read_old_stack(runner, driver):
    """An old stack (MLNX_OFED, DOCA before 2.6) on this host (:func:`old.old_stack`), or None."""
    family = lib.package_family(runner.os_release())
    tool = "dpkg-query" if family == "apt" else "rpm"
    return old.old_stack(driver.ofed(), installed_packages(runner, family) if runner.bin(tool) else {}, family,
                         os.path.isfile(runner.conf(old.UNINSTALLER)))


def judge_old_stack(runner, driver, params, version, result):
    """Reads the old stack into ``result["old_stack"]`` and refuses (one line) what must not go on: an old stack
    without O(replace_old_stack), one nothing here can remove, one under RDMA users."""
    stack = read_old_stack(runner, driver)
    result["old_stack"] = stack
    in_use = None
    if stack and params["replace_old_stack"] and not stack["problem"]:
        storage, args = rdma_users(runner, driver, params["management_addresses"])
        result["storage"] = storage
        in_use = lib.rdma_in_use(*args)
    refusal = old.old_stack_refusal(stack, version, params["replace_old_stack"], in_use)
    if refusal:
        raise lib.DocaError(refusal)
    return stack


def remove_old_stack(module, runner, driver, version, result):
    """State ``old_stack``: removes an old stack as NVIDIA's guide does (only reported in check mode); its modules
    stay loaded, so a reboot is pending."""
    stack = judge_old_stack(runner, driver, module.params, version, result)
    if not stack:
        return
    result["changed"] = True
    result["commands"].extend(" ".join(argv) for argv in stack["commands"])
    result["reboot_pending"].append(old.removed_reboot(stack))
    if module.check_mode:
        return
    for argv in stack["commands"]:
        here = [runner.conf(argv[0])] + argv[1:] if argv[0] == old.UNINSTALLER else argv
        runner.run(here, environ={"DEBIAN_FRONTEND": "noninteractive"} if argv[0] == "apt-get" else None)
    runner.forget()  # the old ofed_info went with it
    left = read_old_stack(runner, driver)
    if left:
        raise lib.DocaError("doca_ofed: after %s, %s is still installed (packages: %s); fix: remove it by hand, "
                            "reboot, and run again" % ("; ".join(result["commands"]), left["installed"],
                                                       ", ".join(left["packages"]) or "none named"))


def write_file(module):
    """State ``file``: ``file_text`` at ``file_path`` with ``file_mode``, through a file created 0600 and renamed
    into place (:func:`host_files.write_atomic`); exits the module. Nothing of the text is returned."""
    params = module.params
    path, mode = params["file_path"], params["file_mode"]
    result = {"changed": False, "path": path}
    try:
        if not re.match(r"^0?[0-7]{3}\Z", mode or ""):
            raise lib.DocaError("doca_ofed: file_mode %r is not an octal mode such as 0600" % mode)
        mode = "%04o" % int(mode, 8)
        try:
            info = os.lstat(path)
            current = read_text(path) if stat.S_ISREG(info.st_mode) else None
            current_mode = "%04o" % (info.st_mode & 0o7777)
        except FileNotFoundError:
            current, current_mode = None, None
        if current != params["file_text"] or current_mode != mode:
            result["changed"] = True
            if not module.check_mode:
                write_atomic(path, params["file_text"], mode)
    except (FabricError, OSError) as exc:
        module.fail_json(msg="doca_ofed: cannot write %s: %s" % (path, getattr(exc, "strerror", None) or exc), **result)
    module.exit_json(**result)


def write_key(module):
    """State ``key``: the repository's signing key, armored, at ``key_path``; exits the module."""
    params = module.params
    origin = params["key_origin"] or secrets.redact_url(params["key_url"] or "") or params["key_source"]
    result = {"changed": False, "key": {"path": params["key_path"]}}
    try:
        if params["key_url"]:  # read into memory, in check mode too: nothing is written before it is judged
            status, data = fetch(module, params["key_url"])
            if status != 200:
                raise lib.DocaError("%s: %s could not be fetched from this host (%s %s); fix: check the URL, the "
                                    "proxy, or give the key as doca_ofed_key_file" % (
                                        params["key_option"], origin, status, one_line(str(data or ""))))
        else:
            try:
                with open(params["key_source"], "rb") as handle:
                    data = handle.read()
            except (IOError, OSError) as exc:
                raise lib.DocaError("%s: %s could not be read on this host from %s (%s)" % (
                    params["key_option"], origin, params["key_source"], exc.strerror or exc))
        text, prints, armored = lib.signing_key(data, params["key_option"], origin, params["key_fingerprint"])
        result["key"].update(fingerprints=prints, armored=armored)
        try:
            with open(params["key_path"], "rb") as handle:
                before = handle.read().decode("utf-8", "replace")
        except (IOError, OSError):
            before = None
        if before != text:
            result["changed"] = True
            if module._diff:
                result["diff"] = {"before": before or "", "after": text, "before_header": params["key_path"],
                                  "after_header": params["key_path"]}
            if not module.check_mode:
                staged = os.path.join(module.tmpdir, "ainet-doca-key")  # private to this run (0700), not beside the key
                with open(staged, "wb") as handle:
                    handle.write(text.encode("ascii"))
                os.chmod(staged, 0o644)
                module.atomic_move(staged, params["key_path"])
    except FabricError as exc:
        module.fail_json(msg=str(exc), **result)
    module.exit_json(**result)


def build_for_boot(module, driver, family, dkms_module, result):
    """Before any reboot: the kernel the next boot starts must have the installed driver's DKMS modules, else that
    boot comes up with the kernel's own driver. Runs ``dkms autoinstall -k <kernel>`` where they are missing (only
    reported in check mode) and reads ``dkms status`` back."""
    boot = driver.boot_kernel(family)
    plan = lib.boot_kernel_plan(result["ofed"], result["dkms"], dkms_module, driver.release, boot,
                                driver.headers_present(boot) if boot else False)
    result["boot"] = dict(plan)
    if plan["problem"]:
        raise lib.DocaError("doca_ofed: " + plan["problem"])
    if not plan["command"]:
        return
    result["commands"].append(" ".join(plan["command"]))
    result["changed"] = True
    if module.check_mode:
        return
    rc, out, err = driver.runner.run(plan["command"], check=False)
    result["dkms"] = driver.dkms()
    again = lib.boot_kernel_plan(result["ofed"], result["dkms"], dkms_module, driver.release, boot, True)
    result["boot"] = dict(again, command=plan["command"])
    if rc != 0 or not again["built"]:
        raise lib.DocaError("doca_ofed: 'dkms autoinstall -k %s' did not build the %s modules for the kernel the next "
                            "boot starts (rc %s: %s); fix: read /var/lib/dkms/%s/<version>/build/make.log, then run it "
                            "again before rebooting" % (boot, dkms_module, rc, one_line(err or out), dkms_module))


def hide_credentials(module):
    """The mirror's ``(login, password)`` (None, None without one): O(mirror_username) and O(mirror_password), else
    the userinfo of O(mirror). Ansible masks a ``no_log`` option's value where it appears in the result, but a
    password inside a URL option is no option's value: the passwords in O(mirror) and O(key_url) are added to the
    values masked in everything the module returns (defence in depth; the URLs returned and named in messages carry
    no userinfo)."""
    params = module.params
    for url in (params["mirror"], params["key_url"]):
        module.no_log_values.update(secrets.userinfo_secrets(url))
    _url, login, password = secrets.split_userinfo(params["mirror"], params["mirror_option"])
    if params["mirror_username"]:
        login, password = params["mirror_username"], params["mirror_password"]
    secrets.split_userinfo(params["key_url"] or "", params["key_option"])
    if password:
        module.no_log_values.add(password)
    return login, password


def run_module():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", choices=["plan", "repository", "key", "old_stack", "verify", "file"],
                       default="verify"),
            file_path=dict(type="path"),
            file_text=dict(type="str", no_log=True),
            file_mode=dict(type="str", default="0600"),
            key_source=dict(type="path"),
            # public: a key's URL, its name and fingerprint are no secrets
            key_url=dict(type="str", no_log=False),
            key_path=dict(type="path"),
            key_origin=dict(type="str", default="", no_log=False),
            key_option=dict(type="str", default="doca_ofed_key_url", no_log=False),
            key_fingerprint=dict(type="list", elements="str", default=[], no_log=False),
            version=dict(type="str", default=""),
            profile=dict(type="raw", default="doca-ofed"),
            # a login in the mirror's URL (https://user:token@mirror/) is split off: see hide_credentials
            mirror=dict(type="str", default="", no_log=False),
            mirror_username=dict(type="str"),
            mirror_password=dict(type="str", no_log=True),
            mirror_option=dict(type="str", default="doca_ofed_mirror"),
            allow_downgrade=dict(type="bool", default=False),
            restart=dict(type="bool", default=False),
            replace_old_stack=dict(type="bool", default=False),
            management_addresses=dict(type="list", elements="str", default=[]),
            config_root=dict(type="path", default="/"),
            sysfs_root=dict(type="path", default="/"),
        ),
        required_if=[("state", "file", ("file_path", "file_text")), ("state", "key", ("key_path",)), ("state", "key", ("key_source", "key_url"), True)],
        mutually_exclusive=[("key_source", "key_url")],
        supports_check_mode=True,
    )
    params = module.params
    try:
        mirror_login = hide_credentials(module)
    except FabricError as exc:
        module.fail_json(msg=str(exc))
    if params["state"] == "key":
        write_key(module)
    if params["state"] == "file":
        write_file(module)
    result = {"changed": False, "repository": {}, "packages": [], "driver": None, "ofed": None, "dkms": [],
              "loaded": {}, "storage": [], "commands": [], "reboot_pending": []}
    try:
        runner = Runner(module, params["sysfs_root"], params["config_root"], error=lib.DocaError)
        version = (lib.check_version(params["version"]) if params["version"] or params["state"] != "verify"
                   else None)
        result["packages"] = lib.check_profile(params["profile"])
        result["driver"] = lib.driver_release(version) if version else None
        if params["state"] in ("plan", "repository"):
            release = runner.os_release()
            result["repository"] = lib.repository(version, release.get("ID"), release.get("VERSION_ID"),
                                                  os.uname()[4], params["mirror"] or None, params["mirror_option"])
            lib.check_repository_url(result["repository"]["url"], params["mirror_option"])
            result["headers"] = runner.kernel_headers()
            result["headers"]["meta"] = headers_meta(runner, result["repository"]["family"],
                                                     result["headers"]["release"])
            url, origin = lib.key_location(result["repository"]["family"], params["key_url"] or "")
            result["key"] = {"url": secrets.redact_url(url), "origin": origin,
                             "fingerprints": lib.pinned_fingerprints(params["key_fingerprint"])}
            # Before anything is installed: a DKMS-built driver that Secure Boot would refuse is not installed.
            if load.dkms_builds(version, result["repository"]["family"]):
                result["secure_boot"] = Driver(runner).secure_boot()
                problem, pending = load.secure_boot_problem(**load.secure_boot_args(result["secure_boot"]))
                if problem:
                    raise lib.DocaError("doca_ofed: %s" % problem)
                if pending:
                    result["reboot_pending"].append("DOCA-OFED: %s" % pending)
            # Before anything changes: an old stack is refused without the opt-in, or under RDMA users with it.
            if params["state"] == "plan":
                judge_old_stack(runner, Driver(runner), params, version, result)
        if params["state"] == "old_stack":
            remove_old_stack(module, runner, Driver(runner), version, result)
            module.exit_json(**result)
        if params["state"] == "repository":
            found = Repository(module, runner, result["repository"]["url"], params["mirror_option"],
                               *mirror_login).read(
                result["repository"]["family"], version)
            result["repository"].update(found)
            if result["repository"]["family"] == "apt":
                result["repository"]["apt_preferences"] = lib.apt_pin(version, result["repository"]["url"],
                                                                      found["available"])
            # An old stack about to be removed is replaced, not downgraded: NVIDIA installs afresh after it.
            replaced = params["replace_old_stack"] and read_old_stack(runner, Driver(runner))
            if result["repository"]["downgrade"] and not params["allow_downgrade"] and not replaced:
                raise lib.DocaError(
                    "doca_ofed_version: %s is older than what this host has (%s); a downgrade is refused. Fix: pin "
                    "the installed DOCA version, or set doca_ofed_allow_downgrade" % (
                        version, "; ".join(result["repository"]["downgrade"])))
        if params["state"] != "verify":
            module.exit_json(**result)
        driver = Driver(runner)
        result["ofed"] = driver.ofed()
        result["dkms"] = driver.dkms()
        result["loaded"] = driver.loaded()
        if result["ofed"] is None and not version:
            result["msg"] = "DOCA-OFED is not installed and no version is pinned: nothing to verify"
            module.exit_json(**result)

        os_release = runner.os_release()
        family = lib.package_family(os_release)
        dkms_module = lib.dkms_module(os_release)

        result["secure_boot"] = driver.secure_boot()
        mellanox = driver.mellanox()

        def judge(loaded):
            found = lib.verdict(result["ofed"], result["dkms"], driver.release, loaded["version"],
                                loaded["srcversion"], loaded["installed_srcversion"], result["driver"],
                                loaded_present=loaded["present"], installed=loaded["installed"], module=dkms_module)
            # Secure Boot matters while the installed driver is not the one running (it loads at the next boot) or
            # a ConnectX has no driver; a node without one never loads it.
            waiting = found["reboot"] or (mellanox and not loaded["present"])
            problem, pending = load.secure_boot_problem(**load.secure_boot_args(
                result["secure_boot"], loaded["installed"].get("signer"),
                any(e["module"] == dkms_module for e in result["dkms"]))) if waiting else (None, None)
            reasons = ([problem] if problem else []) + ["blacklisted in %s" % where for where in driver.blacklisted()]
            if found["problems"]:
                reasons.append("the driver's own problems: see the other messages")
            missing = load.not_loaded_problem(mellanox, loaded["present"], reasons)
            found["problems"].extend([missing] if missing else [problem] if problem else [])
            found["pending"] = pending
            return found

        found = judge(result["loaded"])
        if found["problems"]:
            raise lib.DocaError("doca_ofed: " + "; ".join(found["problems"]))
        if found["pending"]:
            result["reboot_pending"].append("DOCA-OFED: %s" % found["pending"])
        build_for_boot(module, driver, family, dkms_module, result)
        if found["reboot"] and params["restart"]:
            result["storage"], args = rdma_users(runner, driver, params["management_addresses"])
            refusal = lib.restart_refusal(*args)
            if refusal:
                raise lib.DocaError(refusal)
            argv = driver.restart_argv()
            result["commands"].append(" ".join(argv))
            result["changed"] = True
            if not module.check_mode:
                runner.run(argv)
                result["loaded"] = driver.loaded()
                again = judge(result["loaded"])
                if again["problems"] or again["reboot"]:
                    raise lib.DocaError("doca_ofed: after the restart, %s" % "; ".join(
                        again["problems"] + ([again["reboot"]] if again["reboot"] else [])))
        elif found["reboot"]:
            result["reboot_pending"].append("DOCA-OFED: %s" % found["reboot"])
    except FabricError as exc:
        module.fail_json(msg=str(exc), **result)
    module.exit_json(**result)


def main():
    run_module()


if __name__ == "__main__":
    main()
