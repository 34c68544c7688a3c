# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""DOCA-OFED on a host: where its packages come from, whether the driver that runs is the one installed for the
running kernel, and whether a driver restart is safe.

Pure functions; the role (``ainet.fabric.doca_ofed``) installs the packages with the distribution's package
modules, and the module of the same name reads the host and restarts the driver only when asked.

**Repository** (:func:`repository`): NVIDIA's flat repository per DOCA version, distribution and architecture,
``https://linux.mellanox.com/public/repo/doca/<version>/<os>/<arch>/`` (``deb [signed-by=<key>] <url> ./`` on
Debian and Ubuntu; ``baseurl=<url>`` on RHEL and Rocky); ``<os>`` is ``ubuntu22.04``, ``ubuntu24.04``,
``debian12``, and on RHEL-family 9 ``rhel9`` from DOCA 3.2 on (``rhel9.<minor>`` before); ``<arch>`` is ``x86_64``
or ``arm64-sbsa``. A local mirror of the same layout replaces the URL's base. Profiles: ``doca-ofed`` (MLNX_OFED's
set), ``doca-roce``, ``doca-networking``, ``doca-all``, ``doca-host-basic`` (DOCA 3.2 and later), or a list of
packages. (NVIDIA DOCA installation guide and profiles page; HPC Container Maker's doca_ofed building block.)

**Verification** (:func:`verdict`): ``ofed_info -s`` names the installed driver (``OFED-internal-25.10-1.7.1``),
``dkms status`` the modules built per kernel, ``/sys/module/mlx5_core/version`` (only the DOCA/MLNX_OFED build has
it) and ``srcversion`` against ``modinfo``'s say whether the loaded module is the installed one. The classic
breakage - a kernel update the DKMS modules were never built for - is named with its fix.

**Signing key** (:func:`signing_key`): apt reads a ``Signed-By`` file ending in ``.asc`` as an ASCII-armored key
and ignores it otherwise (``unsupported filetype``), and rpm imports armored keys; a key served or kept in binary
(``gpg --export`` without ``--armor``) is armored here (RFC 4880 section 6: base64 lines and the CRC-24 checksum),
anything that is not an OpenPGP public key (an HTML error page behind a proxy) is refused, and the keys'
fingerprints can be checked against a pinned one.

**Restart** (:func:`restart_refusal`): ``/etc/init.d/openibd restart`` unloads every RDMA module and the NICs'
netdevs go down; it is refused when a ConnectX function carries the management path (NVIDIA network-operator
issue 2176), when a storage user of the RDMA stack is loaded or mounted (NVMe-oF, NFS over RDMA, iSER, SRP), and
while nvidia_peermem or a third-party RDMA provider is loaded (:mod:`doca_ofed_load`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import itertools
import re
import struct

from ansible_collections.ainet.fabric.plugins.module_utils.common import secrets
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_load as load

REPO_BASE = "https://linux.mellanox.com/public/repo/doca"
# The repositories' signing key: since January 2026 every DOCA repository (all versions, latest too) is signed by the
# "NVIDIA DOCA Host" key (RSA 4096, created 2026-01-20), published per package format under public_keys/; the old
# GPG-KEY-Mellanox.pub carries only the retired Mellanox Technologies keys (apt: NO_PUBKEY DC726C5E41B9CC50).
# Public reports: Azure/AgentBaker PR 9256 and 9394, Mellanox/bfb-build PR 81, NVIDIA/cuda-quantum PR 5456.
DOCA_HOST_FINGERPRINT = "70454E6BF5D9C2D3B78709E8DC726C5E41B9CC50"
KEY_URLS = {"apt": REPO_BASE + "/public_keys/nvidia-doca-debian-gpg-public-key.gpg",
            "dnf": REPO_BASE + "/public_keys/nvidia-doca-rpm-gpg-public-key.asc"}
RETIRED_KEY_URL = REPO_BASE + "/GPG-KEY-Mellanox.pub"
PROFILES = ("doca-ofed", "doca-roce", "doca-networking", "doca-all", "doca-host-basic")
VERSION = re.compile(r"^\d+\.\d+\.\d+(-\d+)?$")
# DOCA release -> the DOCA-OFED (MLNX_OFED) driver release it ships; the driver's YY.MM is compared, its build numbers
# are not. Every pair is confirmed from NVIDIA's own material; none rests on third-party material ([3P]) alone:
# - Mellanox/doca-driver-build release_manifests/*.yaml (doca_version -> driver_version): all pairs, 2.9 to 3.5.
# - docs.nvidia.com/doca/archive/<ver>/ "DOCA Drivers Legal Notices and 3rd Party Licenses" (OFED Drivers): 2.9-3.0.
# - Mellanox/network-operator-docs docs/advanced/doca-drivers.rst (2.10 before PR 289), vars.rst: 2.9-3.4 but 3.0.
# - NVIDIA BlueField DPU OS 4.7.0 "Installing Repo Package on Host Side" (doca-host 2.7.0 package, 24.04): 2.7.
# 3.5 is named by the doca-driver-build manifest only (its network-operator-26.7.x branch), in no NVIDIA doc yet.
# 2.8 (24.07) is left out: only third-party material names that pair; an unknown version skips the driver check.
DRIVER_OF = {"2.7": "24.04", "2.9": "24.10", "2.10": "25.01", "3.0": "25.04", "3.1": "25.07", "3.2": "25.10",
             "3.3": "26.01", "3.4": "26.04", "3.5": "26.07"}
# The DKMS module of the driver's kernel part: the Debian packaging names it mlnx-ofed-kernel (package
# mlnx-ofed-kernel-dkms), the RPM packaging mlnx-ofa_kernel (/etc/dkms/mlnx-ofa_kernel.conf, modules under
# extra/mlnx-ofa_kernel/): see dkms_module().
DKMS_MODULE = "mlnx-ofed-kernel"
DKMS_MODULES = {"apt": "mlnx-ofed-kernel", "dnf": "mlnx-ofa_kernel"}
# Modules that use the RDMA stack for storage: unloading it under them loses the storage.
STORAGE_MODULES = ("nvme_rdma", "nvmet_rdma", "rpcrdma", "xprtrdma", "svcrdma", "ib_iser", "ib_isert", "ib_srp",
                   "ib_srpt")
ARCHES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64-sbsa", "arm64": "arm64-sbsa"}


class DocaError(FabricError):
    """A refusal: one line that names what is wrong and how to fix it."""


def check_version(version, field="doca_ofed_version"):
    text = str(version or "")
    if not VERSION.fullmatch(text):
        raise DocaError("%s: %r is not a DOCA version (write it as 3.2.1; the repository has no 'latest' pin)"
                        % (field, version))
    return text


def check_profile(profile, field="doca_ofed_profile"):
    """The packages to install: a profile name's one package, or the list given."""
    if isinstance(profile, str):
        if profile not in PROFILES:
            raise DocaError("%s: %r is not a DOCA profile; use one of %s, or a list of packages"
                            % (field, profile, ", ".join(PROFILES)))
        return [profile]
    if isinstance(profile, list) and profile and all(isinstance(p, str) and re.match(r"^[a-z0-9][a-z0-9.+-]*$", p)
                                                     for p in profile):
        return list(profile)
    raise DocaError("%s: %r is neither a DOCA profile nor a list of package names" % (field, profile))


def os_directory(version, os_id, os_version):
    """The repository's directory of a distribution, or DocaError naming the distribution."""
    major_minor = tuple(int(p) for p in version.split("-")[0].split(".")[:2])
    os_id = (os_id or "").lower()
    release = str(os_version or "")
    major = release.split(".", 1)[0]
    if os_id == "ubuntu" and release in ("22.04", "24.04"):
        return "ubuntu" + release
    if os_id == "debian" and major in ("12", "13"):
        return "debian" + major
    if os_id in ("rhel", "rocky", "almalinux", "centos", "redhat") and major in ("9", "10"):
        if major_minor >= (3, 2) or "." not in release:
            return "rhel" + major
        return "rhel" + release
    raise DocaError("doca_ofed: DOCA-OFED has no repository for %s %s (Ubuntu 22.04/24.04, Debian 12/13, RHEL and "
                    "Rocky 9/10); use doca_ofed_source: packages with a local package directory"
                    % (os_id or "an unknown distribution", release))


def repository(version, os_id, os_version, arch, mirror=None, field="doca_ofed_mirror"):
    """``{"family": "apt"|"dnf", "url": ..., "os": ...}`` of NVIDIA's (or a mirror's) repository for this host.
    A mirror's credentials (``https://user:token@mirror/``) never reach ``url``: they are split off
    (:func:`secrets.split_userinfo`) and go to a file readable by root only (the role)."""
    if mirror:
        mirror = secrets.split_userinfo(mirror, field)[0]
    directory = os_directory(version, os_id, os_version)
    machine = ARCHES.get(str(arch or "").lower())
    if machine is None:
        raise DocaError("doca_ofed: no DOCA-OFED repository for the %r architecture (x86_64, aarch64)" % (arch,))
    base = (mirror or REPO_BASE).rstrip("/")
    return {"family": package_family({"ID": os_id}), "url": "%s/%s/%s/%s/" % (base, version, directory, machine), "os": directory}


def dnf_probe_repo(url, login=None, password=None):
    """The repository file the module's ``dnf repoquery`` reads the repository from (repository id
    ``ainet-doca-ofed-probe``, in a directory of its own given with ``--setopt=reposdir``): dnf.conf(5)'s
    ``baseurl``, and ``username``/``password`` for HTTP basic authentication. No signature check: only the index
    is read, nothing is installed from it."""
    text = "[ainet-doca-ofed-probe]\nname=ainet.fabric doca_ofed probe\nbaseurl=%s\ngpgcheck=0\n" % url
    if login is not None:
        text += "username=%s\npassword=%s\n" % (login, password or "")
    return text


def driver_release(doca_version):
    """The driver's ``YY.MM`` a DOCA version ships, or None when this table does not know it."""
    return DRIVER_OF.get(".".join(doca_version.split(".")[:2]))


_DKMS = re.compile(r"^(?P<module>[^,/:\s]+)(?:/|,\s*)(?P<version>[^,:\s]+)(?:,\s*(?P<kernel>[^,:\s]+))?"
                   r"(?:,\s*(?P<arch>[^,:\s]+))?:\s*(?P<state>\S+)(?P<note>.*)$")


def parse_dkms_status(text):
    """``dkms status`` (2.x ``name, version, kernel, arch: state`` and 3.x ``name/version, kernel, arch: state``) ->
    ``[{"module", "version", "kernel", "arch", "state", "note"}]``; unreadable lines are skipped."""
    out = []
    for raw in (text or "").splitlines():
        match = _DKMS.match(raw.strip())
        if match:
            entry = match.groupdict()
            entry["note"] = entry["note"].strip().strip("()").strip() or None
            out.append(entry)
    return out


def driver_version(ofed_info_version):
    """``25.10-1.7.1`` -> ``25.10``."""
    return ofed_info_version.split("-", 1)[0] if ofed_info_version else None


def driver_build(version):
    """The numbers that name a driver build, from ``ofed_info -s`` or ``dkms status``: ``(YY, MM, a, b, c)`` at most.

    ``ofed_info -s`` prints ``MLNX_OFED_LINUX-24.10-2.1.8.0`` (MLNX_OFED: YY.MM, then a four-part build whose last
    part is 0) or ``OFED-internal-25.10-1.7.1`` (DOCA: a three-part build); ``dkms status`` names the same builds
    ``24.10.OFED.24.10.2.1.8.1`` and ``25.10.OFED.25.10.1.7.1.1`` (after the last ``OFED.``: YY.MM, the three-part
    build, then the package's own release), and MLNX_OFED 5.x and older only ``5.4`` (YY.MM or the major.minor).
    The first three build parts are what the two sides share; what follows them is packaging."""
    text = str(version or "").rsplit("OFED.", 1)[-1]
    parts = [p for p in re.split(r"[.-]", text) if p]
    if not parts or not all(p.isdigit() for p in parts):
        return ()
    return tuple(int(p) for p in parts[:5])


def same_driver(dkms_version, ofed_version):
    """Whether a DKMS entry's version is the installed driver's (see :func:`driver_build`): the same YY.MM and build,
    or one names only the start of the other (DKMS's ``5.4`` for MLNX_OFED ``5.4-3.0.3.0``)."""
    one, two = driver_build(dkms_version), driver_build(ofed_version)
    if not one or not two:
        return False
    size = min(len(one), len(two))
    return one[:size] == two[:size]


def parse_packages_index(text):
    """An apt ``Packages`` index (deb822 stanzas) -> ``{name: [versions]}``; stanzas without both fields are
    skipped."""
    found = {}
    for stanza in re.split(r"\n\s*\n", text or ""):
        fields = {}
        for line in stanza.splitlines():
            if line[:1] not in (" ", "\t") and ":" in line:
                key, value = line.split(":", 1)
                fields[key.strip().lower()] = value.strip()
        if fields.get("package") and fields.get("version"):
            found.setdefault(fields["package"], []).append(fields["version"])
    return found


def parse_repoquery(text):
    """``dnf repoquery --qf '%{name} %{evr}'`` lines -> ``{name: [versions]}``."""
    found = {}
    for line in (text or "").splitlines():
        fields = line.split()
        if len(fields) == 2:
            found.setdefault(fields[0], []).append(fields[1])
    return found


def parse_dpkg_query(text):
    """``dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\\n'`` -> ``{name: {"version", "status"}}``;
    ``status`` is the abbreviation without its blank error column (``ii``, ``rc``: removed, its configuration files
    left; ``un``: not installed, with an empty version)."""
    found = {}
    for line in (text or "").splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[0] and parts[2].strip():
            found[parts[0]] = {"version": parts[1], "status": parts[2].strip()}
    return found


def parse_rpm_qa(text):
    """``rpm -qa --qf '%{NAME} %{EPOCHNUM}:%{VERSION}-%{RELEASE}\\n'`` -> ``{name: "[epoch:]version-release"}``
    (epoch 0 left out, as dnf writes it)."""
    found = {}
    for line in (text or "").splitlines():
        fields = line.split()
        if len(fields) == 2:
            found[fields[0]] = fields[1][2:] if fields[1].startswith("0:") else fields[1]
    return found


def newest_versions(available, compare):
    """``{name: the newest of its versions}`` of ``{name: [versions]}``, in the package manager's order ``compare``."""
    newest_of = {}
    for name, versions in available.items():
        newest = versions[0]
        for version in versions[1:]:
            if compare(version, newest) > 0:
                newest = version
        newest_of[name] = newest
    return newest_of


def dnf_versionlock(available):
    """The lines of dnf's versionlock list that hold every package of the repository at the builds it ships
    (``name-epoch:version-release.*``, the form ``dnf versionlock add`` writes: any architecture, epoch 0 written
    out; a name with several builds, such as a kmod per RHEL minor, gets a line each). ``available``: ``{name:
    ["[epoch:]version-release", ...]}``."""
    return sorted(set("%s-%s.*" % (name, evr if ":" in evr else "0:" + evr)
                      for name, versions in available.items() for evr in versions))


def repository_delta(available, installed, compare):
    """What the pinned repository would change among the installed packages it ships.

    ``available``: ``{name: [versions]}`` of the repository; ``installed``: ``{name: version}`` of the host;
    ``compare(a, b)``: <0, 0, >0 like the package manager's version order. Returns ``{"upgrade": [names],
    "downgrade": ["name installed -> repository's"], "current": [names]}``: a name is upgraded when the repository's
    newest is newer than the installed one, a downgrade when it is older (the installed one came from a newer DOCA
    or elsewhere)."""
    delta = {"upgrade": [], "downgrade": [], "current": []}
    newest_of = newest_versions(dict((name, available[name]) for name in set(available) & set(installed)), compare)
    for name in sorted(newest_of):
        newest = newest_of[name]
        order = compare(newest, installed[name])
        if order > 0:
            delta["upgrade"].append(name)
        elif order < 0:
            delta["downgrade"].append("%s %s -> %s" % (name, installed[name], newest))
        else:
            delta["current"].append(name)
    return delta


def _rpm_segments(text):
    return re.findall(r"[0-9]+|[a-zA-Z]+|~|\^", text)


def _rpm_compare_part(one, two):
    """rpm's ``rpmvercmp`` of one version or release string (segments of digits and letters; ``~`` sorts before
    anything, ``^`` after the end)."""
    left, right = _rpm_segments(one), _rpm_segments(two)
    while left or right:
        a, b = (left.pop(0) if left else None), (right.pop(0) if right else None)
        if a == b:
            continue
        for mark, order in (("~", -1), ("^", 1)):
            if a == mark or b == mark:
                return order if a == mark else -order
        if a is None or b is None:
            return -1 if a is None else 1
        if a.isdigit() != b.isdigit():
            return 1 if a.isdigit() else -1
        if a.isdigit():
            a, b = int(a), int(b)
        if a != b:
            return 1 if a > b else -1
    return 0


def rpm_version_compare(one, two):
    """``(epoch, version, release)`` tuples compared as ``rpm.labelCompare`` does (for hosts whose Python has no rpm
    bindings)."""
    for a, b in zip(one, two):
        order = _rpm_compare_part(a or "", b or "")
        if order:
            return order
    return 0


def apt_pin(version, url, names):
    """The apt preferences file that holds exactly the repository's packages (``names``) at its version: priority
    1001 for them from the repository's origin (its host; ``""`` is apt's origin of a ``file:`` repository), so
    neither the distribution's archive nor unattended-upgrades replaces them, and no other package of that host (a
    mirror that also serves the distribution) is touched."""
    host = re.sub(r"^[a-z][a-z0-9+.-]*://", "", url or "", flags=re.I).split("/", 1)[0]
    host = host.rsplit("@", 1)[-1].split(":", 1)[0] if not (url or "").lower().startswith("file:") else ""
    return ("# Managed by ainet.fabric (doca_ofed): the packages of DOCA %s's repository win over every other origin.\n"
            "Package: %s\nPin: origin \"%s\"\nPin-Priority: 1001\n" % (version, " ".join(sorted(names)), host))


# What a repository URL may hold where the role writes it: the apt deb822 source's ``URIs:`` field (a line break adds
# a field such as ``Enabled: no`` or ``Trusted: yes``, whitespace a second URI, and apt substitutes ``$(ARCH)``) and
# the dnf ``baseurl=`` (a line break adds a key; dnf substitutes ``$releasever``, ``$basearch`` ...). So: http,
# https or file, then only RFC 3986's characters, without ``$`` (both substitute) and ``#`` (a one-line ``deb``
# entry's comment).
REPO_URL = re.compile(r"(?:https?://[A-Za-z0-9\[]|file:///)[A-Za-z0-9._~:/?\[\]@!&'()*+,;=%-]*")


def check_repository_url(url, field):
    """``url`` unchanged, or :class:`DocaError` in one line naming ``field`` and the value."""
    if isinstance(url, str) and REPO_URL.fullmatch(url):
        return url
    raise DocaError("%s: %r cannot be written into an apt or dnf source (an http, https or file URL; no spaces, line "
                    "breaks, '$' or '#', other characters percent-encoded)" % (field, url))


ARMOR_BEGIN = "-----BEGIN PGP PUBLIC KEY BLOCK-----"
ARMOR_END = "-----END PGP PUBLIC KEY BLOCK-----"
SIGNATURE_TAG, PUBLIC_KEY_TAG, USER_ID_TAG = 2, 6, 13


def _crc24(data):
    """RFC 4880 section 6.1's CRC-24 of the armor's checksum line."""
    crc = 0xB704CE
    for byte in bytearray(data):
        crc ^= byte << 16
        for _bit in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def _packets(data):
    """``([(tag, body)], complete)`` of an OpenPGP packet sequence (RFC 9580 section 4.2, the OpenPGP and legacy
    packet formats); ``complete`` is False when a header could not be read or a body is cut short (a truncated
    download, something appended)."""
    data = bytearray(data)
    found, at = [], 0
    while at < len(data):
        first = data[at]
        if not first & 0x80:
            return found, False
        if first & 0x40:  # OpenPGP format: the tag in 6 bits, then a one-, two- or five-octet length
            tag = first & 0x3F
            octet = data[at + 1] if at + 1 < len(data) else None
            if octet is None:
                return found, False
            if octet < 192:
                length, head = octet, 2
            elif octet < 224 and at + 2 < len(data):
                length, head = ((octet - 192) << 8) + data[at + 2] + 192, 3
            elif octet == 255 and at + 5 < len(data):
                length, head = struct.unpack(">I", bytes(data[at + 2:at + 6]))[0], 6
            else:  # a partial body length: never used in key material
                return found, False
        else:  # legacy format: the tag in 4 bits, the length type in the last 2
            tag, kind = (first >> 2) & 0x0F, first & 0x03
            if kind == 3:
                return found, False
            size = (1, 2, 4)[kind]
            if at + size >= len(data):
                return found, False
            length = int(binascii.hexlify(bytes(data[at + 1:at + 1 + size])), 16)
            head = 1 + size
        body = bytes(data[at + head:at + head + length])
        if len(body) != length:
            return found, False
        found.append((tag, body))
        at += head + length
    return found, True


def _fingerprint(body):
    """A primary key packet's fingerprint (upper-case hex): v4 SHA-1 over 0x99 and a two-octet length, v6 (RFC
    9580) SHA-256 over 0x9B and a four-octet length, v5 (LibrePGP) SHA-256 over 0x9A and a four-octet length."""
    version = bytearray(body[:1])[0]
    if version == 4:
        return hashlib.sha1(b"\x99" + struct.pack(">H", len(body)) + body).hexdigest().upper()
    prefix = b"\x9b" if version == 6 else b"\x9a"
    return hashlib.sha256(prefix + struct.pack(">I", len(body)) + body).hexdigest().upper()


def _primary_fingerprints(packets):
    return [_fingerprint(body) for tag, body in packets if tag == PUBLIC_KEY_TAG and body]


def key_fingerprints(data):
    """The fingerprints of the primary keys in binary key material, in order."""
    return _primary_fingerprints(_packets(data)[0])


def _dearmor(text):
    """The binary content of every public key block in ``text`` (concatenated), or ``(None, why)``."""
    lines = [line.strip() for line in text.lstrip("\ufeff").splitlines()]
    data, at = b"", 0
    while ARMOR_BEGIN in lines[at:]:
        start = lines.index(ARMOR_BEGIN, at)
        if ARMOR_END not in lines[start:]:
            return None, "a key block without its end line"
        end = lines.index(ARMOR_END, start)
        block = lines[start + 1:end]
        if any(":" in line for line in block):  # armor headers (Version:, Comment:) end at the first blank line
            block = block[block.index("") + 1:] if "" in block else []
        checksum = [line[1:] for line in block if line.startswith("=") and len(line) == 5]
        body = "".join(line for line in block if line and not (line.startswith("=") and len(line) == 5))
        try:
            part = base64.b64decode(body.encode("ascii"), validate=True)
            crc = struct.unpack(">I", b"\x00" + base64.b64decode(checksum[0].encode("ascii")))[0] if checksum else None
        except (binascii.Error, ValueError, UnicodeEncodeError, struct.error):
            return None, "bad base64"
        if crc is not None and crc != _crc24(part):
            return None, "its CRC-24 checksum does not match"
        data += part
        at = end + 1
    return data, None


def armor(data):
    """Binary key material as one ASCII-armored public key block (RFC 9580 section 6: 64-column base64 lines and
    the CRC-24 checksum), the form ``gpg --armor --export`` writes."""
    body = base64.b64encode(bytes(data)).decode("ascii")
    crc = base64.b64encode(struct.pack(">I", _crc24(data))[1:]).decode("ascii")
    lines = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
    return "%s\n\n%s\n=%s\n%s\n" % (ARMOR_BEGIN, lines, crc, ARMOR_END)


def _key_problem(packets, complete):
    """Why binary key material is not a usable public key (or keyring), or None."""
    if not packets or packets[0][0] != PUBLIC_KEY_TAG:
        return "not a key"
    if not complete:
        return "it is cut short or has something else appended (a truncated download?)"
    for index, (tag, body) in enumerate(packets):
        if tag != PUBLIC_KEY_TAG:
            continue
        if len(body) < 6 or bytearray(body[:1])[0] not in (4, 5, 6):
            return "a public key packet of an unknown version or no key material"
        following = [t for t, _b in itertools.takewhile(lambda p: p[0] != PUBLIC_KEY_TAG, packets[index + 1:])]
        if USER_ID_TAG not in following or SIGNATURE_TAG not in following:
            return "a key without a user ID and its self-signature"
    return None


def pinned_fingerprints(value):
    """The pinned fingerprints as upper-case hex: a string (one fingerprint; spaces, as gpg prints it, and a ``0x``
    ignored; several separated by commas) or a list of them; empty pins none. DocaError for what is not 40 (v4) or
    64 (v5, v6) hex digits."""
    items = value if isinstance(value, (list, tuple)) else str(value or "").split(",")
    found = []
    for item in items:
        text = re.sub(r"\s+", "", str(item or "")).upper()
        text = text[2:] if text.startswith("0X") else text
        if not text:
            continue
        if not re.match(r"^([0-9A-F]{40}|[0-9A-F]{64})$", text):
            raise DocaError("doca_ofed_key_fingerprint: %r is not a key fingerprint (40 hex digits, as 'gpg "
                            "--show-keys' prints it; e.g. %s)" % (item, DOCA_HOST_FINGERPRINT))
        found.append(text)
    return found


def key_user_ids(packets):
    """``{primary fingerprint: [user IDs]}`` of parsed key material (the user ID packets that follow each primary
    key, as UTF-8 text)."""
    names, current = {}, None
    for tag, body in packets:
        if tag == PUBLIC_KEY_TAG and body:
            current = _fingerprint(body)
            names[current] = []
        elif tag == USER_ID_TAG and current:
            names[current].append(body.decode("utf-8", "replace"))
    return names


def key_location(family, url=""):
    """``(url, origin)`` of the repository's signing key: ``url`` when given, else NVIDIA's current DOCA Host key
    in the package manager's form (apt: binary, dnf: armored)."""
    if url:
        return url, secrets.redact_url(url)
    if family not in KEY_URLS:
        raise DocaError("doca_ofed_key_url: no default signing key for the package manager %r; give the key's URL "
                        "or doca_ofed_key_file" % (family,))
    return KEY_URLS[family], KEY_URLS[family]


def signing_key(data, field, origin, fingerprint=""):
    """``(text, fingerprints, was_armored)``: the repository's signing key as the ``.asc`` file apt and rpm read.

    ``data``: the key as fetched or copied (bytes), ASCII-armored (every key block in it) or binary. The result is
    always the one canonical armored block of all its key material (the form ``gpg --armor --export`` writes, which
    apt's own de-armoring reads: no CRLF, the blank line after the header line). Refused with one line naming
    ``field`` and ``origin``: content that is not an OpenPGP public key, armor that does not decode or whose
    checksum does not match, key material cut short or with something appended, and, with ``fingerprint`` (see
    :func:`pinned_fingerprints`: one or several), a file whose primary keys are not exactly the pinned ones (apt
    would trust every key in the file); the refusal names each unpinned key with its user IDs (the retired
    ``Mellanox Technologies`` keys say so)."""
    data = bytes(data or b"")
    text = data.decode("utf-8", "replace")
    was_armored = ARMOR_BEGIN in text
    if was_armored:
        binary, why = _dearmor(text)
        if binary is None:
            raise DocaError("%s: %s is an ASCII-armored key that does not decode (%s). Fix: fetch the key again"
                            % (field, origin, why))
    else:
        binary = data
    packets, complete = _packets(binary)
    problem = _key_problem(packets, complete)
    if problem == "not a key":
        start = ("it begins with %r" % " ".join(text[:40].split())) if data.strip() else "it is empty"
        raise DocaError("%s: %s is not an OpenPGP public key (neither ASCII-armored nor binary); %s. Fix: point it "
                        "at the repository's signing key" % (field, origin, start))
    if problem:
        raise DocaError("%s: %s is not a usable OpenPGP public key: %s. Fix: fetch the key again, or point it at "
                        "the repository's signing key" % (field, origin, problem))
    prints = _primary_fingerprints(packets)
    wanted = pinned_fingerprints(fingerprint)
    if wanted and sorted(set(prints)) != sorted(set(wanted)):
        names = key_user_ids(packets)
        unpinned = ["%s %s" % (p, " / ".join(names.get(p) or ["(no user ID)"])) for p in prints if p not in wanted]
        missing = [p for p in wanted if p not in prints]
        raise DocaError("%s: %s holds the key(s) %s, not only the pinned fingerprint%s %s (doca_ofed_key_fingerprint): "
                        "apt and rpm would trust every key in it (%s%s). Fix: point %s at NVIDIA's current DOCA Host "
                        "key (%s), or, to trust the retired Mellanox keys, pin each of them in "
                        "doca_ofed_key_fingerprint" % (
                            field, origin, ", ".join(prints), "s" if len(wanted) > 1 else "", ", ".join(wanted),
                            ("not pinned: " + "; ".join(unpinned)) if unpinned else "",
                            ("; pinned but absent: " + ", ".join(missing)) if missing and unpinned else
                            ("pinned but absent: " + ", ".join(missing)) if missing else "",
                            field, DOCA_HOST_FINGERPRINT))
    return armor(binary), prints, was_armored


def verdict(ofed, dkms, release, loaded_version, loaded_srcversion, installed_srcversion, wanted_driver=None,
            module=DKMS_MODULE, loaded_present=None, installed=None):
    """``{"problems": [one line each, with the fix], "reboot": reason or None}`` of the installed and loaded driver.

    ``ofed``: ``parse_ofed_info``'s ``ofed`` ({version, flavour}) or None; ``dkms``: :func:`parse_dkms_status`;
    ``release``: ``uname -r``; ``loaded_*``: ``/sys/module/mlx5_core/{version,srcversion}`` (None when not loaded or
    inbox); ``installed_srcversion``: ``modinfo -F srcversion mlx5_core`` of the running kernel; ``module``: the DKMS
    module's name on this distribution (:func:`dkms_module`); ``loaded_present``: ``/sys/module/mlx5_core`` exists;
    ``installed``: ``modinfo mlx5_core`` parsed (:func:`doca_ofed_load.parse_modinfo`; its path tells DOCA's module
    from the kernel's own, see :func:`doca_ofed_load.running_reboot`)."""
    problems = []
    if ofed is None:
        return {"problems": ["DOCA-OFED is not installed (no ofed_info)"], "reboot": None}
    if wanted_driver and driver_version(ofed["version"]) != wanted_driver:
        problems.append("the installed driver is %s, the pinned DOCA version ships %s" % (ofed["version"],
                                                                                          wanted_driver))
    mine = [e for e in dkms if e["module"] == module]
    if mine:
        # Only the installed driver's own entry counts: after an upgrade whose build was skipped, the old version's
        # modules are still "installed" for this kernel while the new one is only "added".
        current = [e for e in mine if same_driver(e["version"], ofed["version"])]
        here = [e for e in current if e["kernel"] == release and e["state"] == "installed"]
        if not current:
            problems.append("dkms has %s %s, not the installed driver %s (its DKMS package was not upgraded with "
                            "it); fix: install the pinned version's %s-dkms, then reboot or restart the driver"
                            % (module, ", ".join(sorted(set(e["version"] for e in mine))), ofed["version"],
                               "mlnx-ofed-kernel" if module == DKMS_MODULES["apt"] else module))
        elif not here:
            others = sorted(set(e["kernel"] for e in current if e["kernel"]))
            problems.append("the running kernel %s has no %s modules built (dkms has them for %s); fix: install the "
                            "kernel headers (linux-headers-%s or kernel-devel-%s) and run 'dkms autoinstall -k %s', "
                            "then reboot or restart the driver"
                            % (release, module, ", ".join(others) or "no kernel", release, release, release))
    # Which mlx5_core runs against which is installed: by its path and version, not only srcversion (Debian's
    # in-tree module has none).
    reboot = load.running_reboot(loaded_present, loaded_version, loaded_srcversion,
                                 installed if installed is not None else {"srcversion": installed_srcversion})
    return {"problems": problems, "reboot": reboot}


def storage_users(loaded_modules, mounts, nvme_transports):
    """What uses the RDMA stack for storage: loaded storage modules, NFS mounts over RDMA, NVMe controllers over
    RDMA. ``mounts``: ``/proc/mounts`` text; ``nvme_transports``: {controller: transport}."""
    found = ["module %s is loaded" % name for name in STORAGE_MODULES if name in loaded_modules]
    for line in (mounts or "").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[2].startswith("nfs") and re.search(r"(^|,)proto=rdma(6)?(,|$)", fields[3]):
            found.append("%s is mounted over NFS/RDMA from %s" % (fields[1], fields[0]))
    for controller, transport in sorted(nvme_transports.items()):
        if transport == "rdma":
            found.append("NVMe controller %s runs over RDMA" % controller)
    return found


def rdma_in_use(management, mellanox, storage, problem=None, blockers=None):
    """The first reason the RDMA stack must not be pulled from under this node (a driver restart, the removal of an
    old stack), as ``(kind, detail)``, else None. ``kind``: ``unknown`` (``problem``: why the management path is not
    known for sure), ``management`` (a ConnectX function among ``mellanox`` carries the management path, ``management``:
    {pci function: why}), ``storage`` (:func:`storage_users`), ``modules`` (``blockers``:
    :func:`doca_ofed_load.restart_blockers`: nvidia_peermem, third-party RDMA)."""
    if problem:
        return "unknown", problem
    hit = sorted((pci, why) for pci, why in management.items() if pci in mellanox)
    if hit:
        return "management", "; ".join("%s: %s" % item for item in hit)
    if storage:
        return "storage", "; ".join(storage)
    if blockers:
        return "modules", "; ".join(blockers)
    return None


def restart_refusal(management, mellanox, storage, problem=None, blockers=None):
    """One line when a driver restart must not run, else None (:func:`rdma_in_use`; all ConnectX functions go down
    in a restart)."""
    found = rdma_in_use(management, mellanox, storage, problem, blockers)
    if found is None:
        return None
    kind, detail = found
    # the modules it does not manage are named even where another reason comes first: all of it in one line
    also = (" It would also unload the RDMA core under modules it does not manage (%s)." % "; ".join(blockers)
            if blockers and kind != "modules" else "")
    if kind == "unknown":
        return "doca_ofed: a driver restart is refused: %s. Fix: reboot the node instead (fabric_reboot).%s" % (
            detail, also)
    if kind == "management":
        return ("doca_ofed: a driver restart takes every ConnectX port down, and the management path runs over one "
                "(%s); not restarted. Fix: reboot the node instead (fabric_reboot).%s" % (detail, also))
    if kind == "storage":
        return ("doca_ofed: a driver restart would pull the RDMA stack from under storage (%s); not restarted. Fix: "
                "stop those users, or reboot the node instead (fabric_reboot).%s" % (detail, also))
    return ("doca_ofed: a driver restart would unload the RDMA core under modules it does not manage (%s); not "
            "restarted. Fix: unload them as said, or reboot the node instead (fabric_reboot)" % detail)


# -- the kernel's lifecycle: the DKMS module per distribution, headers for future kernels, the kernel the next boot
# starts ---------------------------------------------------------------------------------------------------------

RPM_FAMILY = ("rhel", "fedora", "centos", "rocky", "almalinux", "ol", "redhat", "sles", "suse", "opensuse")


def package_family(os_release):
    """``"apt"`` (Debian, Ubuntu), ``"dnf"`` (the RHEL family; SUSE's zypper reads the same RPM packaging) or None,
    from ``/etc/os-release``'s ``ID`` and ``ID_LIKE``."""
    ids = set(("%s %s" % ((os_release or {}).get("ID", ""), (os_release or {}).get("ID_LIKE", ""))).lower().split())
    if ids & {"debian", "ubuntu"}:
        return "apt"
    if ids & set(RPM_FAMILY):
        return "dnf"
    return None


def dkms_module(os_release):
    """The DKMS module name of the driver's kernel part on this distribution: ``mlnx-ofed-kernel`` from the Debian
    packaging, ``mlnx-ofa_kernel`` from the RPM packaging (unknown distributions: the Debian name)."""
    return DKMS_MODULES.get(package_family(os_release), DKMS_MODULE)


# A Debian/Ubuntu kernel release: upstream version, then the ABI (``-45``; Debian 13 ``+deb13``, backports ``+bpo``),
# then the flavour (``generic``, ``cloud-amd64``); the line is the upstream major.minor.
KERNEL_RELEASE = re.compile(r"^(?P<line>\d+\.\d+)(?:\.\d+)*(?:-\d+(?:\.\d+)*|\+[a-z]+\d*)-(?P<flavour>[a-z][a-z0-9.+-]*)$")
# dpkg-query -W -f IMAGE_DEPENDS_FORMAT 'linux-image-*': one line per package, its state and its Depends field.
IMAGE_DEPENDS_FORMAT = "${Package} ${db:Status-Abbrev} ${Depends}\n"


def parse_image_depends(text):
    """``dpkg-query -W -f '${Package} ${db:Status-Abbrev} ${Depends}\\n' 'linux-image-*'`` -> ``{package: [names it
    depends on]}`` of the installed packages (state ``ii``; ``rc`` leftovers of removed kernels are skipped). The
    Depends field is dpkg's: comma-separated, ``|`` between alternatives (each one kept), ``(= version)`` and
    ``:arch`` dropped (``linux-image-6.8.0-45-generic, linux-modules-extra-6.8.0-45-generic, linux-firmware``)."""
    found = {}
    for line in (text or "").splitlines():
        fields = line.split(None, 2)
        if len(fields) < 2 or not fields[1].startswith("ii"):
            continue
        names = []
        for item in re.split(r"[,|]", fields[2] if len(fields) > 2 else ""):
            name = re.sub(r"\(.*?\)|\[.*?\]|<.*?>", "", item).strip().split(":")[0]
            if name:
                names.append(name)
        found[fields[0]] = names
    return found


def _kernel_line(release):
    """``(line, flavour)`` of a Debian/Ubuntu kernel release (``("6.8", "generic")``), or None."""
    match = KERNEL_RELEASE.match(release or "")
    return (match.group("line"), match.group("flavour")) if match else None


def headers_meta_package(family, release, depends):
    """The distribution's headers meta-package that follows the running kernel to every future kernel of its line,
    or None.

    ``release``: ``uname -r`` (``6.1.0-18-cloud-amd64``, ``6.8.0-45-generic``, ``6.12.48+deb13-amd64``);
    ``depends``: :func:`parse_image_depends` of the installed ``linux-image-*`` packages. Debian and Ubuntu install a
    kernel through a meta-package ``linux-image-<name>`` (``linux-image-amd64``, ``linux-image-cloud-amd64``,
    ``linux-image-generic``, ``linux-image-generic-hwe-22.04``) that depends on the current kernel of its line
    (Ubuntu linux-meta ``linux-image-generic``: ``linux-image-6.8.0-138-generic, linux-modules-extra-...``; Debian
    ``linux-image-cloud-amd64``: ``linux-image-6.1.0-18-cloud-amd64 (= 6.1.76-1)``); its sibling
    ``linux-headers-<name>`` pulls the headers of each kernel it pulls. The name alone does not say which line a meta
    follows: on Ubuntu 22.04 ``linux-image-generic`` pulls 5.15 and ``linux-image-generic-hwe-22.04`` 6.8, both
    ``-generic``. So the meta wins whose kernel has the running kernel's flavour and major.minor line; when none has
    (the HWE meta moved to the next line before the reboot), the one of the newest line, whose kernel the next boot
    starts (:func:`boot_kernel`). Among equals: the meta named after the flavour, then one extending it, then by
    name. The RHEL family has no such package: ``kernel-devel`` is an install-only package whose upgrades install
    the headers of each new kernel beside the old ones, so it returns None there."""
    running = _kernel_line(release)
    if family != "apt" or not running:
        return None
    metas = {}
    for meta, names in (depends or {}).items():
        suffix = meta[len("linux-image-"):] if meta.startswith("linux-image-") else ""
        if not suffix or suffix[:1].isdigit():
            continue  # a kernel package itself (linux-image-6.8.0-45-generic), not a meta-package
        lines = [_kernel_line(name[len("linux-image-"):]) for name in names if name.startswith("linux-image-")]
        lines = [line for line in lines if line and line[1] == running[1]]
        if lines:
            metas[meta] = max((line[0] for line in lines), key=_kernel_key)
    if not metas:
        return None
    same = [meta for meta, line in metas.items() if line == running[0]]
    if not same:
        newest = max(metas.values(), key=_kernel_key)
        same = [meta for meta, line in metas.items() if line == newest]
    flavour = running[1]
    best = min(same, key=lambda meta: (meta != "linux-image-" + flavour,
                                       not meta.startswith("linux-image-%s-" % flavour), meta))
    return "linux-headers-" + best[len("linux-image-"):]


def _kernel_key(release):
    """A kernel release as ``sort -V`` orders it: numbers as numbers, the rest as text."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.findall(r"\d+|[^\d.+~-]+", release)]


def boot_kernel(family, grubby_default="", vmlinuz=()):
    """The kernel release the next boot starts, or None when it cannot be told.

    RHEL family: ``grubby --default-kernel`` (``/boot/vmlinuz-5.14.0-503.15.1.el9_5.x86_64``). Debian and Ubuntu: the
    newest ``/boot/vmlinuz-<release>`` in version order, which is the first entry ``update-grub`` writes and GRUB's
    default unless ``GRUB_DEFAULT`` names another. ``vmlinuz``: the names in /boot (``vmlinuz-6.1.0-18-amd64``;
    ``vmlinuz``, ``vmlinuz.old`` links and ``.old`` ignored)."""
    if family == "dnf":
        text = (grubby_default or "").strip().splitlines()
        path = text[-1].strip() if text else ""
        return path.rsplit("/vmlinuz-", 1)[-1] if "/vmlinuz-" in path else None
    releases = [name[len("vmlinuz-"):] for name in vmlinuz
                if name.startswith("vmlinuz-") and not name.endswith(".old") and len(name) > len("vmlinuz-")]
    return max(releases, key=_kernel_key) if releases else None


def boot_kernel_plan(ofed, dkms, module, running, boot, headers_present):
    """What the next boot needs from DKMS: ``{"kernel", "built", "command", "problem"}``.

    ``built``: the installed driver's own modules are ``installed`` for ``boot`` (:func:`same_driver`); otherwise
    ``command`` is ``dkms autoinstall -k <boot>`` (dkms builds and installs every added module for that kernel), and
    ``problem`` says what the boot would start with when the kernel's headers are missing (no build can succeed
    then). Nothing is planned without an installed driver with a DKMS entry (prebuilt kernel packages), without a
    known boot kernel, or when the boot kernel is the running one (the verdict judges that)."""
    plan = {"kernel": boot, "built": True, "command": None, "problem": None}
    if not ofed or not boot or boot == running:
        return plan
    current = [e for e in dkms if e["module"] == module and same_driver(e["version"], ofed["version"])]
    if not current:
        return plan
    if any(e["kernel"] == boot and e["state"] == "installed" for e in current):
        return plan
    plan["built"] = False
    if not headers_present:
        plan["problem"] = ("the next boot starts kernel %s, which has no %s modules built and no headers to build them "
                           "(it would come up with the kernel's own mlx5_core); fix: install its headers "
                           "(linux-headers-%s or kernel-devel-%s) and run 'dkms autoinstall -k %s' before rebooting"
                           % (boot, module, boot, boot, boot))
        return plan
    plan["command"] = ["dkms", "autoinstall", "-k", boot]
    return plan
