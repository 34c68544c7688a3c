# -*- coding: utf-8 -*-
"""doca_ofed_load: which mlx5_core is installed and loaded, Secure Boot and DKMS's signing key, and the modules a
driver restart must not run under - on recorded and vendor-format outputs (``data/doca/{modinfo,mokutil,
proc_modules}``, each with its ORIGIN.md)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_load as load
from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_state as lib

DATA = os.path.join(os.path.dirname(__file__), "data", "doca")


def data(*parts):
    with open(os.path.join(DATA, *parts)) as handle:
        return handle.read()


DKMS = load.parse_modinfo(data("modinfo", "debian12-doca-24.10-dkms.txt"))
INBOX = load.parse_modinfo(data("modinfo", "debian12-inbox-synthetic.txt"))
UNSIGNED = load.parse_modinfo(data("modinfo", "doca-24.10-dkms-unsigned-synthetic.txt"))


def test_modinfo_fields_and_origin():
    assert DKMS["filename"] == "/lib/modules/6.1.0-31-amd64/updates/dkms/mlx5_core.ko"
    assert (DKMS["version"], DKMS["srcversion"], DKMS["signer"]) == ("24.10-2.1.8", "78352976D87E8F24553D352",
                                                                     "DKMS module signing key")
    assert "version" not in INBOX and "srcversion" not in INBOX and "signer" not in UNSIGNED
    assert load.module_origin(DKMS["filename"]) == "ofed" and load.module_origin(INBOX["filename"]) == "inbox"
    assert load.module_origin("/lib/modules/5.14.0-427.el9.x86_64/extra/mlnx-ofa_kernel/drivers/net/ethernet/"
                              "mellanox/mlx5/core/mlx5_core.ko") == "ofed"
    assert load.module_origin("/opt/elsewhere/mlx5_core.ko") is None
    assert load.module_origin("/opt/elsewhere/mlx5_core.ko", "25.10-1.7.1") == "ofed"


def test_debian_inbox_without_srcversion_is_a_pending_reboot():
    """Debian 12 right after the install: the kernel's own mlx5_core runs (no version, no srcversion files), DKMS's
    is installed. The old code compared srcversions only and passed."""
    reason = load.running_reboot(True, None, None, DKMS)
    assert reason and reason.startswith("the loaded mlx5_core is the kernel's own, not DOCA-OFED's")
    ofed = {"version": "24.10-2.1.8", "flavour": "internal"}
    dkms = [{"module": "mlnx-ofed-kernel", "version": "24.10.OFED.24.10.2.1.8.1", "kernel": "6.1.0-31-amd64",
             "arch": "x86_64", "state": "installed", "note": None}]
    found = lib.verdict(ofed, dkms, "6.1.0-31-amd64", None, None, DKMS.get("srcversion"), "24.10",
                        loaded_present=True, installed=DKMS)
    assert found == {"problems": [], "reboot": reason}
    # control: DOCA's module loaded, the installed one
    assert load.running_reboot(True, "24.10-2.1.8", "78352976D87E8F24553D352", DKMS) is None
    # control: only the kernel's own is installed and loaded (no DOCA module to wait for)
    assert load.running_reboot(True, None, None, INBOX) is None
    # not loaded at all: no reboot reason here (that is a problem, not_loaded_problem)
    assert load.running_reboot(False, None, None, DKMS) is None


def test_not_loaded_with_a_connectx_fails_with_its_reasons():
    reason = "blacklisted in /etc/modprobe.d/x.conf: blacklist mlx5_core"
    found = load.not_loaded_problem({"0000:3b:00.0"}, False, [reason])
    assert found == ("no mlx5_core is loaded while ConnectX/BlueField devices are present (0000:3b:00.0): "
                     "blacklisted in /etc/modprobe.d/x.conf: blacklist mlx5_core")
    assert "no reason found here" in load.not_loaded_problem({"0000:3b:00.0"}, False, [])
    assert load.not_loaded_problem({"0000:3b:00.0"}, True, []) is None
    assert load.not_loaded_problem(set(), False, []) is None


def test_blacklist_in_modprobe_d_and_on_the_command_line():
    files = {"/etc/modprobe.d/blacklist-ofed-modules.conf": "# blacklist ofed-related modules on host\n\n"
             "blacklist mlx5_core\nblacklist mlx5_ib\n",
             "/etc/modprobe.d/other.conf": "blacklist nouveau\noptions mlx5_core prof_sel=2\n# blacklist mlx5_core\n",
             "/etc/modprobe.d/off.conf": "install mlx5_core /bin/false\n"}
    assert load.modprobe_blacklist(files, "BOOT_IMAGE=/vmlinuz ro module_blacklist=nouveau,mlx5_core") == [
        "/etc/modprobe.d/blacklist-ofed-modules.conf: blacklist mlx5_core",
        "/etc/modprobe.d/off.conf: install mlx5_core /bin/false",
        "the kernel command line: module_blacklist=nouveau,mlx5_core"]
    assert load.modprobe_blacklist({"/etc/modprobe.d/other.conf": files["/etc/modprobe.d/other.conf"]},
                                   "ro quiet") == []


@pytest.mark.parametrize("name,state", [
    ("sb-state-enabled.txt", "enabled"), ("sb-state-disabled.txt", "disabled"),
    ("sb-state-setup-mode.txt", "disabled"), ("sb-state-shim-validation-off.txt", "disabled"),
    ("sb-state-no-efi.txt", "unsupported")])
def test_sb_state(name, state):
    assert load.parse_sb_state(data("mokutil", name)) == state


def test_sb_state_unknown_and_efivar():
    assert load.parse_sb_state("Cannot determine secure boot state.\n") is None
    assert load.efi_secure_boot(b"\x06\x00\x00\x00\x01") == "enabled"
    assert load.efi_secure_boot(b"\x06\x00\x00\x00\x00") == "disabled"
    assert load.efi_secure_boot(b"") is None


@pytest.mark.parametrize("name,state", [
    ("test-key-not-enrolled.txt", "not_enrolled"), ("test-key-enrolled.txt", "enrolled"),
    ("test-key-in-db.txt", "enrolled"), ("test-key-pending.txt", "pending")])
def test_test_key(name, state):
    assert load.parse_test_key(data("mokutil", name)) == state


def test_dkms_certificate_path():
    assert load.mok_certificate("", "debian") == "/var/lib/dkms/mok.pub"
    assert load.mok_certificate("", "ubuntu") == "/var/lib/shim-signed/mok/MOK.der"
    conf = "# mok_certificate=/nope\nmok_signing_key=/root/k.key\nmok_certificate=\"/root/k.der\"\n"
    assert load.mok_certificate(conf, "ubuntu") == "/root/k.der"


@pytest.mark.parametrize("conf,os_release,cert", [
    # dkms-project/dkms@04154266 dkms.in prepare_mok (1292-1358), distro_version (486-505), read_framework_conf (975)
    ("", {"ID": "ubuntu", "ID_LIKE": "debian"}, "/var/lib/shim-signed/mok/MOK.der"),
    ("", {"ID": "linuxmint", "ID_LIKE": "ubuntu debian"}, "/var/lib/shim-signed/mok/MOK.der"),  # ${ID_LIKE[0]}
    ("", {"ID": "debian"}, "/var/lib/dkms/mok.pub"),
    ("", {"ID": "rocky", "ID_LIKE": "rhel centos fedora"}, "/var/lib/dkms/mok.pub"),
    ('mok_signing_key="/root/s.key"\n', {"ID": "ubuntu"}, "/var/lib/dkms/mok.pub"),  # key alone: DKMS's cert
    ("mok_certificate=/root/c.der\n", {"ID": "ubuntu"}, "/var/lib/shim-signed/mok/MOK.der"),  # cert alone: ignored
    ("mok_certificate=/root/c.der\n", {"ID": "debian"}, "/root/c.der"),
    # framework.conf sets the key, a later framework.conf.d file empties it: the last assignment wins
    ('mok_signing_key=/root/s.key\nmok_certificate=/root/c.der\nmok_signing_key=""\n', {"ID": "ubuntu"},
     "/var/lib/shim-signed/mok/MOK.der"),
    ("mok_signing_key=/root/s.key\nmok_certificate='/root/c.der'  # ours\n", {"ID": "ubuntu"}, "/root/c.der"),
])
def test_dkms_certificate_follows_prepare_mok(conf, os_release, cert):
    assert load.mok_certificate(conf, os_release) == cert


def test_secure_boot_refusals_and_the_enrol_command():
    cert = "/var/lib/dkms/mok.pub"
    problem, pending = load.secure_boot_problem("enabled", cert, True, "not_enrolled")
    assert pending is None and "'mokutil --import /var/lib/dkms/mok.pub'" in problem and "MokManager" in problem
    assert load.secure_boot_problem("enabled", cert, True, "enrolled") == (None, None)
    assert load.secure_boot_problem("disabled", cert, True, "not_enrolled") == (None, None)
    assert load.secure_boot_problem("enabled", cert, True, "not_enrolled", dkms_module=False) == (None, None)
    assert load.secure_boot_problem("enabled", cert, True, "pending")[1].startswith(
        "DKMS's signing certificate /var/lib/dkms/mok.pub is in the enrolment request")
    assert "'dkms generate_mok'" in load.secure_boot_problem("enabled", cert, False, None)[0]
    assert "mokutil is not installed" in load.secure_boot_problem("enabled", cert, True, None)[0]
    assert "not signed" in load.secure_boot_problem("enabled", cert, True, "enrolled", signer="")[0]
    assert load.dkms_builds("3.1.0", "dnf") is False and load.dkms_builds("3.2.1", "dnf") is True
    assert load.dkms_builds("2.9.3", "apt") is True


def test_proc_modules_and_restart_blockers():
    modules = load.parse_proc_modules(data("proc_modules", "peermem-irdma-synthetic.txt"))
    assert modules["ib_core"] == {"refcount": 4, "users": ["nvidia_peermem", "irdma", "ib_uverbs", "mlx5_ib"]}
    assert modules["nvidia_peermem"] == {"refcount": 2, "users": []}
    assert load.restart_blockers(modules) == [
        "nvidia_peermem is in use (refcount 2): GPUDirect RDMA runs over it",
        "third-party RDMA modules are loaded (irdma): another vendor's RDMA devices run on the same RDMA core "
        "('modprobe -r irdma' first if nothing needs them)"]
    unused = load.parse_proc_modules(data("proc_modules", "peermem-unused-synthetic.txt"))
    assert load.restart_blockers(unused) == [
        "nvidia_peermem is loaded (unused: 'rmmod nvidia_peermem' first, and load it again after the restart)"]
    refusal = lib.restart_refusal({}, {"0000:3b:00.0"}, [], blockers=load.restart_blockers(modules))
    assert refusal.startswith("doca_ofed: a driver restart would unload the RDMA core under modules it does not "
                              "manage (nvidia_peermem is in use (refcount 2)")
    # storage users come first, and the modules it does not manage are named in the same line (the VM tier: Debian's
    # rdma-core loads rpcrdma and ib_iser beside soft-RoCE's rdma_rxe)
    both = lib.restart_refusal({}, {"0000:3b:00.0"}, ["module rpcrdma is loaded"], blockers=load.restart_blockers(modules))
    assert both.startswith("doca_ofed: a driver restart would pull the RDMA stack from under storage (module rpcrdma")
    assert "It would also unload the RDMA core under modules it does not manage (nvidia_peermem is in use" in both
    assert "\n" not in both
    assert "It would also" not in lib.restart_refusal({}, {"0000:3b:00.0"}, ["module rpcrdma is loaded"])
    # control: only NVIDIA's own stack loaded
    clean = dict((name, info) for name, info in modules.items() if name not in ("nvidia_peermem", "irdma"))
    assert load.restart_blockers(clean) == []
    assert lib.restart_refusal({}, {"0000:3b:00.0"}, [], blockers=load.restart_blockers(clean)) is None


def test_the_loaded_mlx5_core_is_read_from_its_module_directory():
    files = {"/sys/module/mlx5_core/version": "25.10-1.7.1", "/sys/module/mlx5_core/srcversion": "DOCA2510AB"}
    dirs = {"/sys/module/mlx5_core"}
    doca = load.read_loaded_mlx5_core(files.get, dirs.__contains__)
    assert doca == {"present": True, "version": "25.10-1.7.1", "srcversion": "DOCA2510AB"}
    assert load.loaded_origin(doca["present"], doca["version"]) == "ofed"
    del files["/sys/module/mlx5_core/version"]  # the kernel's own module: no version file
    inbox = load.read_loaded_mlx5_core(files.get, dirs.__contains__)
    assert load.loaded_origin(inbox["present"], inbox["version"]) == "inbox"
    assert load.loaded_origin(**dict((k, v) for k, v in load.read_loaded_mlx5_core(
        {}.get, set().__contains__).items() if k != "srcversion")) is None
