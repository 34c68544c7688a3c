"""A stand-in DOCA-OFED apt repository, built by the test suite, for the doca_ofed role's install path.

NVIDIA's repository cannot be reached from the lab, and its packages need ConnectX hardware and kernel
headers. This builds, with dpkg-deb and gpg alone, a mirror of the same layout and names
(``<mirror>/<version>/debian12/x86_64/``: a flat apt repository, ``./`` suite, an ``InRelease`` signed by a
throw-away key served as ``<mirror>/GPG-KEY-Mellanox.pub``, armored, and ``GPG-KEY-Mellanox.gpg``, binary) whose packages stand in for NVIDIA's:

* ``doca-ofed`` - the profile's meta package, depending on the two below (as NVIDIA's does on the driver's
  user-space and kernel packages);
* ``mlnx-ofed-kernel-utils`` - ships ``/usr/bin/ofed_info``, which prints ``ofed_info -s`` the way the real one
  does (``OFED-internal-25.10-1.7.1:``);
* ``mlnx-tools`` - a file under ``/usr/share/doc`` only;
* with ``dkms=True``, ``mlnx-ofed-kernel-dkms`` - the driver's sources for DKMS (a ``dkms.conf`` under
  ``/usr/src/mlnx-ofed-kernel-<driver>/``) and the postinst every dh_dkms package runs (dkms's
  ``common.postinst``): on a host without the running kernel's headers, dkms registers the module and skips the
  build, exactly the state a kernel update without headers leaves ("added", no modules for the running kernel).
  With the headers, dkms "builds" and installs it for real: the build step only copies a prebuilt stub
  ``mlx5_core.ko`` (an ELF object holding nothing but a ``.modinfo`` section: ``version=<driver>``, a
  ``srcversion``; made here with ``objcopy``, no compiler). dkms 3.0.10 needs a module file after the build
  ("Build of mlx5_core.ko failed") and refuses to install one whose modinfo version equals the kernel's own
  ("exactly matches what is already found in kernel"); with a version it installs it to
  ``/lib/modules/<kernel>/updates/dkms/``, where ``modinfo mlx5_core`` then finds it, as it finds DOCA's.
  The stub is never loaded (no ConnectX in the lab; loading it would fail: it has no code).

No driver is built or loaded: what the stand-ins prove is the role's repository, key, pin, install, upgrade,
idempotence, version checks and DKMS bookkeeping on a real Debian with apt and dkms, never the driver itself.

Usage: python tests/lab/doca_standin.py DIR [--version 3.2.1] [--driver 25.10-1.7.1]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import shutil
import subprocess
import tempfile
import time

OFED_INFO = """#!/bin/sh
# Stand-in for DOCA-OFED's ofed_info (ainet.fabric test suite): the lines the real one prints.
case "$1" in
    -s) echo "OFED-internal-{driver}:" ;;
    -n) echo "{driver}" ;;
    *) printf 'OFED-internal-{driver} (stand-in):\\n\\nmlnx-ofed-kernel:\\nmlnx_ofed/mlnx-ofed-kernel-{driver}\\n' ;;
esac
"""


def _control(name, version, depends=None, description="stand-in"):
    lines = ["Package: %s" % name, "Version: %s" % version, "Architecture: all",
             "Maintainer: ainet.fabric test suite <tests@ainet-fabric.invalid>",
             "Section: net", "Priority: optional"]
    if depends:
        lines.append("Depends: %s" % ", ".join(depends))
    lines.append("Description: %s (ainet.fabric test stand-in)" % description)
    return "\n".join(lines) + "\n"


# The "build" copies the stub module (STRIP: it has no symbols to strip); dkms then checks mlx5_core.ko is there.
DKMS_CONF = """PACKAGE_NAME="mlnx-ofed-kernel"
PACKAGE_VERSION="{version}"
BUILT_MODULE_NAME[0]="mlx5_core"
DEST_MODULE_LOCATION[0]="/updates/dkms"
STRIP[0]="no"
MAKE[0]="cp stand-in/mlx5_core.ko mlx5_core.ko"
CLEAN="rm -f mlx5_core.ko"
AUTOINSTALL="yes"
"""
# What dh_dkms writes into a DKMS package's postinst (the real package runs the same dkms script).
DKMS_POSTINST = """#!/bin/sh
set -e
if [ "$1" = configure ] && [ -x /usr/lib/dkms/common.postinst ]; then
    /usr/lib/dkms/common.postinst mlnx-ofed-kernel {version} /usr/share/mlnx-ofed-kernel-dkms "" "$2"
fi
"""
DKMS_PRERM = """#!/bin/sh
set -e
dkms remove -m mlnx-ofed-kernel -v {version} --all >/dev/null 2>&1 || true
"""


def stub_module(work, name, fields):
    """The bytes of an ELF relocatable object whose only content is a ``.modinfo`` section of ``fields`` (what
    ``modinfo`` and ``depmod`` read from a module), made with binutils' objcopy."""
    modinfo = os.path.join(work, name + ".modinfo")
    with open(modinfo, "wb") as handle:
        handle.write(b"".join(("%s=%s" % item).encode() + b"\0" for item in fields))
    ko = os.path.join(work, name + ".ko")
    try:
        subprocess.run(["objcopy", "-I", "binary", "-O", "elf64-x86-64", "-B", "i386:x86-64", "--rename-section",
                        ".data=.modinfo,alloc,load,readonly,data,contents", modinfo, ko], check=True,
                       capture_output=True)
    except OSError as exc:
        raise SystemExit("doca_standin: objcopy (binutils) is needed for the DKMS stand-in's module: %s" % exc)
    with open(ko, "rb") as handle:
        return handle.read()


def build_deb(work, out_dir, name, version, files, depends=None, scripts=None):
    """One .deb from {path: (mode, text or bytes)} and maintainer scripts {name: text}; returns its file name."""
    tree = os.path.join(work, name)
    os.makedirs(os.path.join(tree, "DEBIAN"))
    with open(os.path.join(tree, "DEBIAN", "control"), "w", encoding="utf-8") as handle:
        handle.write(_control(name, version, depends))
    for script, text in (scripts or {}).items():
        with open(os.path.join(tree, "DEBIAN", script), "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(os.path.join(tree, "DEBIAN", script), 0o755)
    for path, (mode, text) in files.items():
        target = os.path.join(tree, path.lstrip("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(text if isinstance(text, bytes) else text.encode("utf-8"))
        os.chmod(target, mode)
    deb = "%s_%s_all.deb" % (name, version)
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree, os.path.join(out_dir, deb)],
                   check=True, capture_output=True)
    return deb


def _packages_entry(repo, deb):
    path = os.path.join(repo, deb)
    control = subprocess.run(["dpkg-deb", "-f", path], check=True, capture_output=True, text=True).stdout.rstrip()
    with open(path, "rb") as handle:
        data = handle.read()
    return "%s\nFilename: ./%s\nSize: %d\nSHA256: %s\n" % (control, deb, len(data), hashlib.sha256(data).hexdigest())


def _release(repo, names):
    lines = ["Origin: ainet.fabric stand-in", "Label: DOCA stand-in",
             "Date: %s" % time.strftime("%a, %d %b %Y %H:%M:%S UTC", time.gmtime()), "SHA256:"]
    for name in names:
        with open(os.path.join(repo, name), "rb") as handle:
            data = handle.read()
        lines.append(" %s %d %s" % (hashlib.sha256(data).hexdigest(), len(data), name))
    return "\n".join(lines) + "\n"


def build(mirror, version="3.2.1", driver="25.10-1.7.1", os_dir="debian12", arch="x86_64", dkms=False,
          headers=None):
    """Write one version's repository under ``mirror`` (the key: once, kept for later versions); returns
    {"repo", "key", "debs"} (paths below the mirror). ``headers``: a kernel release whose stand-in
    ``linux-headers-<release>`` (a ``/lib/modules/<release>/build`` directory, what dkms and the role look for) the
    repository also carries, in place of the distribution's archive the lab cannot reach."""
    repo = os.path.join(mirror, version, os_dir, arch)
    os.makedirs(repo, exist_ok=True)
    work = tempfile.mkdtemp(prefix="doca-standin-")
    gnupg = os.path.normpath(mirror) + ".gnupg"  # the throw-away signing key, beside the mirror (never served)
    os.makedirs(gnupg, mode=0o700, exist_ok=True)
    env = dict(os.environ, GNUPGHOME=gnupg)
    package_version = driver.replace("-", ".")
    try:
        debs = [
            build_deb(work, repo, "mlnx-ofed-kernel-utils", package_version,
                      {"/usr/bin/ofed_info": (0o755, OFED_INFO.format(driver=driver))}),
            build_deb(work, repo, "mlnx-tools", package_version,
                      {"/usr/share/doc/mlnx-tools/README": (0o644, "stand-in\n")}),
        ]
        depends = ["mlnx-ofed-kernel-utils (= %s)" % package_version, "mlnx-tools"]
        if headers:
            debs.append(build_deb(work, repo, "linux-headers-%s" % headers, "1.0",
                                  {"/lib/modules/%s/build/Makefile" % headers: (0o644, "# stand-in\n")}))
        if dkms:
            source = "/usr/src/mlnx-ofed-kernel-%s" % package_version
            stub = stub_module(work, "mlx5_core", [
                ("version", driver), ("license", "Dual BSD/GPL"),
                ("description", "Mellanox 5th generation network adapters (ConnectX series) core driver (stand-in)"),
                ("srcversion", hashlib.md5(driver.encode()).hexdigest()[:23].upper()), ("depends", ""),
                ("name", "mlx5_core")])
            debs.append(build_deb(work, repo, "mlnx-ofed-kernel-dkms", package_version, {
                source + "/dkms.conf": (0o644, DKMS_CONF.format(version=package_version)),
                source + "/stand-in/mlx5_core.ko": (0o644, stub),
                source + "/Makefile": (0o644, "all:\n\ttrue\n")}, depends=["dkms"],
                scripts={"postinst": DKMS_POSTINST.format(version=package_version),
                         "prerm": DKMS_PRERM.format(version=package_version)}))
            depends.append("mlnx-ofed-kernel-dkms (= %s)" % package_version)
        debs.append(build_deb(work, repo, "doca-ofed", "%s-1" % version, {}, depends=depends))
        packages = "\n".join(_packages_entry(repo, deb) for deb in sorted(debs))
        with open(os.path.join(repo, "Packages"), "w", encoding="utf-8") as handle:
            handle.write(packages)
        with gzip.open(os.path.join(repo, "Packages.gz"), "wt", encoding="utf-8") as handle:
            handle.write(packages)
        with open(os.path.join(repo, "Release"), "w", encoding="utf-8") as handle:
            handle.write(_release(repo, ["Packages", "Packages.gz"]))
        gpg = ["gpg", "--batch", "--quiet", "--pinentry-mode", "loopback", "--passphrase", ""]
        if not os.path.exists(os.path.join(mirror, "GPG-KEY-Mellanox.pub")):
            subprocess.run(gpg + ["--quick-generate-key", "ainet.fabric DOCA stand-in <tests@ainet-fabric.invalid>",
                                  "ed25519", "sign", "1d"], env=env, check=True, capture_output=True)
        subprocess.run(gpg + ["--yes", "--clearsign", "-o", os.path.join(repo, "InRelease"),
                              os.path.join(repo, "Release")], env=env, check=True, capture_output=True)
        key = subprocess.run(gpg + ["--armor", "--export"], env=env, check=True, capture_output=True).stdout
        with open(os.path.join(mirror, "GPG-KEY-Mellanox.pub"), "wb") as handle:
            handle.write(key)
        # the same key in OpenPGP's binary form (gpg --export without --armor), as some mirrors keep it
        binary = subprocess.run(gpg + ["--export"], env=env, check=True, capture_output=True).stdout
        with open(os.path.join(mirror, "GPG-KEY-Mellanox.gpg"), "wb") as handle:
            handle.write(binary)
    finally:
        subprocess.run(["gpgconf", "--kill", "all"], env=env, check=False, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    return {"repo": os.path.relpath(repo, mirror), "key": "GPG-KEY-Mellanox.pub", "debs": debs}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirror")
    parser.add_argument("--version", default="3.2.1")
    parser.add_argument("--driver", default="25.10-1.7.1")
    parser.add_argument("--dkms", action="store_true", help="add mlnx-ofed-kernel-dkms (needs dkms on the host)")
    parser.add_argument("--headers", metavar="RELEASE", help="add a stand-in linux-headers-RELEASE")
    args = parser.parse_args()
    print(build(args.mirror, args.version, args.driver, dkms=args.dkms, headers=args.headers))


if __name__ == "__main__":
    main()
