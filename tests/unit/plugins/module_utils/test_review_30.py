# -*- coding: utf-8 -*-
"""Field review of issue 30 (docs/reviews/30-driver-layer.md): each behaviour on samples in the other program's layout, a control
where all is right and a case where exactly one stage is wrong. The defects found (D1, D2) were strict xfails; they
pass since their fixes (the meta-packages' Depends, dkms's prepare_mok order).

Samples: ``data/review30`` (ORIGIN.md: written from mstflint's and dkms's format strings) and inline lines written
from the oracle named beside each (mokutil src/mokutil.c printf strings, Linux /proc/<pid>/limits, dkms do_status).
"""

from __future__ import annotations

import os

from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_load as load
from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_state as lib
from ansible_collections.ainet.fabric.plugins.module_utils.host import gpu_host_state as gpu
from ansible_collections.ainet.fabric.plugins.module_utils.host import nic_link_type_state as nic

DATA = os.path.join(os.path.dirname(__file__), "data", "review30")


def data(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


# -- 2. ofed_info -s vs dkms status ------------------------------------------------------------------------------

def test_same_driver_mlnx_ofed_and_doca_control_and_other_build():
    assert lib.same_driver("24.10.OFED.24.10.2.1.8.1", "24.10-2.1.8.0")
    assert lib.same_driver("25.10.OFED.25.10.1.7.1.1", "25.10-1.7.1")
    # one stage wrong: the DKMS build is 24.10-3.2.5 (doca-driver-build release_manifests 24.10-LTS25.07), not 2.1.8
    assert not lib.same_driver("24.10.OFED.24.10.3.2.5.1", "24.10-2.1.8.0")


def test_verdict_names_kernel_without_build():
    # dkms do_status layout "m/v, k, a: state" (dkms.in do_status)
    dkms = lib.parse_dkms_status("mlnx-ofa_kernel/25.10.OFED.25.10.1.7.1.1, 5.14.0-503.15.1.el9_5.x86_64, x86_64: "
                                 "installed\n")
    ofed = {"version": "25.10-1.7.1", "flavour": "doca"}
    ok = lib.verdict(ofed, dkms, "5.14.0-503.15.1.el9_5.x86_64", None, None, None, module="mlnx-ofa_kernel")
    assert ok["problems"] == []
    bad = lib.verdict(ofed, dkms, "5.14.0-570.12.1.el9_6.x86_64", None, None, None, module="mlnx-ofa_kernel")
    assert len(bad["problems"]) == 1 and "has no mlnx-ofa_kernel modules built" in bad["problems"][0]


# -- 3. DKMS module per distribution, headers meta-package, next-boot kernel --------------------------------------

def test_dkms_module_and_boot_kernel():
    assert lib.dkms_module({"ID": "ubuntu", "ID_LIKE": "debian"}) == "mlnx-ofed-kernel"
    assert lib.dkms_module({"ID": "rocky", "ID_LIKE": "rhel centos fedora"}) == "mlnx-ofa_kernel"
    assert lib.boot_kernel("apt", "", ["vmlinuz", "vmlinuz.old", "vmlinuz-6.8.0-45-generic",
                                       "vmlinuz-6.8.0-100-generic"]) == "6.8.0-100-generic"
    assert lib.boot_kernel("dnf", "/boot/vmlinuz-5.14.0-570.12.1.el9_6.x86_64\n") == "5.14.0-570.12.1.el9_6.x86_64"


def test_headers_meta_single_hwe_meta_control():
    depends = {"linux-image-generic-hwe-22.04": ["linux-image-6.8.0-45-generic", "linux-firmware"]}
    assert lib.headers_meta_package("apt", "6.8.0-45-generic", depends) == "linux-headers-generic-hwe-22.04"


def test_headers_meta_prefers_meta_of_running_kernel_line():
    # REVIEW-30 D1: both Ubuntu 22.04 metas installed (GA linux-image-generic pulls 5.15, linux-image-generic-hwe-22.04
    # pulls 6.8), the HWE 6.8 kernel running: the meta whose kernel is of the running line wins
    depends = {"linux-image-generic": ["linux-image-5.15.0-170-generic", "linux-firmware"],
               "linux-image-generic-hwe-22.04": ["linux-image-6.8.0-45-generic", "linux-firmware"],
               "linux-image-6.8.0-45-generic": ["linux-modules-6.8.0-45-generic"],
               "linux-image-5.15.0-170-generic": ["linux-modules-5.15.0-170-generic"]}
    assert lib.headers_meta_package("apt", "6.8.0-45-generic", depends) == "linux-headers-generic-hwe-22.04"


# -- 4. Secure Boot, mokutil, DKMS's MOK certificate --------------------------------------------------------------

def test_mokutil_outputs_from_mokutil_c():
    # rhboot/mokutil src/mokutil.c: sb-state printf at 1424-1428, test_key/print_skip_message at 790-802, 1538
    assert load.parse_sb_state("SecureBoot enabled\n") == "enabled"
    assert load.parse_sb_state("SecureBoot enabled\nSecureBoot validation is disabled in shim\n") == "disabled"
    assert load.parse_sb_state("SecureBoot disabled\nPlatform is in Setup Mode\n") == "disabled"
    assert load.parse_sb_state("EFI variables are not supported on this system\n") == "unsupported"
    assert load.parse_test_key("/var/lib/dkms/mok.pub is already enrolled\n") == "enrolled"
    assert load.parse_test_key("/var/lib/dkms/mok.pub is already in the enrollment request\n") == "pending"
    assert load.parse_test_key("/var/lib/dkms/mok.pub is not enrolled\n") == "not_enrolled"
    assert load.parse_test_key("/var/lib/dkms/mok.pub is blocked in dbx\n") == "blocked"


def test_mok_certificate_control():
    assert load.mok_certificate("", "ubuntu") == "/var/lib/shim-signed/mok/MOK.der"
    assert load.mok_certificate("", "debian") == "/var/lib/dkms/mok.pub"
    both = 'mok_signing_key="/root/mok.key"\nmok_certificate="/root/mok.der"\n'
    assert load.mok_certificate(both, "ubuntu") == "/root/mok.der"
    # dkms.in prepare_mok:1294-1300: without mok_signing_key, Ubuntu's MOK.der replaces a mok_certificate of its own
    assert load.mok_certificate('mok_certificate="/root/mok.der"\n', "ubuntu") == "/var/lib/shim-signed/mok/MOK.der"
    assert load.mok_certificate('mok_certificate="/root/mok.der"\n', "debian") == "/root/mok.der"


def test_mok_certificate_signing_key_only_on_ubuntu():
    # REVIEW-30 D2: with mok_signing_key set, dkms skips Ubuntu's key pair and signs with /var/lib/dkms/mok.pub
    assert load.mok_certificate(data("framework-signing-key-only.conf"), "ubuntu") == "/var/lib/dkms/mok.pub"


def test_secure_boot_problem_one_stage_wrong():
    assert load.secure_boot_problem("enabled", "/var/lib/dkms/mok.pub", True, "enrolled") == (None, None)
    problem, _pending = load.secure_boot_problem("enabled", "/var/lib/dkms/mok.pub", True, "not_enrolled")
    assert "mokutil --import /var/lib/dkms/mok.pub" in problem


# -- 5. restart blockers ------------------------------------------------------------------------------------------

PROC_MODULES = ("nvidia_peermem 16384 0 - Live 0x0000000000000000 (POE)\n"
                "ib_core 491520 9 nvidia_peermem,rdma_cm,iw_cm,ib_ipoib,ib_cm,ib_umad,mlx5_ib,ib_uverbs, Live 0x0\n"
                "mlx5_core 2355200 1 mlx5_ib, Live 0x0 (OE)\n")


def test_restart_blockers_peermem_and_third_party():
    mods = load.parse_proc_modules(PROC_MODULES)
    assert [b.split(" ")[0] for b in load.restart_blockers(mods)] == ["nvidia_peermem"]
    # one stage wrong: efa loaded beside it (doca-driver-build mofedmodules.go DefaultThirdPartyRDMAModules)
    mods = load.parse_proc_modules(PROC_MODULES + "efa 155648 0 - Live 0x0\n")
    assert any("efa" in b for b in load.restart_blockers(mods))
    assert load.restart_blockers(load.parse_proc_modules("mlx5_core 2355200 0 - Live 0x0\n")) == []


# -- 6. mlxfwreset ------------------------------------------------------------------------------------------------

def test_fwreset_query_mcam_layout():
    good = nic.parse_fwreset_query(data("mlxfwreset-q-mcam-level3-supported.txt"))
    assert good["levels"][3]["supported"] and good["levels"][3]["default"]
    assert good["sync"][0]["supported"] and not good["types"][1]["supported"]
    assert nic.reset_level_refusal("0000:3b:00.0", 3, good) is None
    bad = nic.parse_fwreset_query(data("mlxfwreset-q-mcam-level3-not-supported.txt"))
    assert not bad["sync"][1]["supported"]  # "Not supported" (lower-case s) as cmd_reg_mcam prints it
    assert "does not support firmware reset level 3" in nic.reset_level_refusal("0000:3b:00.0", 3, bad)
    assert nic.reset_argv("0000:3b:00.0") == ["mlxfwreset", "-d", "0000:3b:00.0", "-l", "3", "-y", "reset"]


def test_vf_refusal_and_bluefield_mode():
    assert nic.vf_refusal("0000:3b:00", {"0000:3b:00.0": {"numvfs": 0, "vfs": {}}}) is None
    assert "would remove its VFs" in nic.vf_refusal("0000:3b:00", {"0000:3b:00.1": {"numvfs": 2, "vfs": {}}})
    row = {"configs": {"INTERNAL_CPU_OFFLOAD_ENGINE": {"current": "ENABLED(0)", "next_boot": "ENABLED(0)"}}}
    assert nic.bluefield_mode(row) == "dpu"
    row["configs"]["INTERNAL_CPU_OFFLOAD_ENGINE"]["current"] = "DISABLED(1)"
    assert nic.bluefield_mode(row) == "nic"


# -- 7. GPU operator values ----------------------------------------------------------------------------------------

def _node(**over):
    node = {"gpus": [{"pci": "0000:1b:00.0", "device": 0x2330, "name": "NVIDIA H100 80GB HBM3",
                      "compute_cap": (9, 0)}],
            "rdma_nics": True, "release": "6.8.0-45-generic", "host_driver": {}, "legacy": False,
            "ofed": {"installed": True, "loaded": True, "evidence": "ofed_info"}}
    node.update(over)
    return node


def test_operator_values_dmabuf_legacy_and_host_driver():
    values = gpu.operator_values(_node())["values"]
    assert values == {"driver.kernelModuleType": "open", "driver.rdma.enabled": False}
    # one stage wrong: a Volta (7.0, 10de:1db6) -> proprietary, legacy peermem, host OFED used
    volta = [{"pci": "0000:1b:00.0", "device": 0x1DB6, "name": "Tesla V100-PCIE-32GB", "compute_cap": (7, 0)}]
    values = gpu.operator_values(_node(gpus=volta))["values"]
    assert values == {"driver.kernelModuleType": "proprietary", "driver.rdma.enabled": True,
                      "driver.rdma.useHostMofed": True}
    # by PCI id alone (older driver without compute_cap): 0x1DB6 < 0x1E00
    volta[0]["compute_cap"] = None
    assert gpu.operator_values(_node(gpus=volta))["values"]["driver.kernelModuleType"] == "proprietary"
    host = gpu.operator_values(_node(host_driver={"smi": "/usr/bin/nvidia-smi", "loaded": True, "version": None}))
    assert host["values"] == {"driver.enabled": False}


def test_memlock_limits_layout():
    # Linux fs/proc/base.c proc_pid_limits: "%-25s %-20s %-20s %-10s"
    limits = ("Limit                     Soft Limit           Hard Limit           Units     \n"
              "Max locked memory         8388608              8388608              bytes     \n")
    assert gpu.parse_limits(limits) == ("8388608", "8388608")
    assert gpu.restart_pending([{"comm": "containerd", "pid": 812, "unit": "containerd.service",
                                 "limits": gpu.parse_limits(limits)}])
    assert gpu.restart_pending([{"comm": "containerd", "pid": 812, "unit": "containerd.service",
                                 "limits": ("unlimited", "unlimited")}]) == []
