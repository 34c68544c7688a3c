# -*- coding: utf-8 -*-
"""doca_ofed_state (issue 30): the repositories' current signing key and the retired Mellanox keys (real key
material, ``data/doca/keys``), the driver build that ``ofed_info -s`` and ``dkms status`` both name (recorded outputs,
``data/rdma/ofed_info`` and ``data/doca/dkms_status``, each with its ORIGIN.md), the DKMS module per distribution, the
headers meta-package of the running kernel's flavour and the kernel the next boot starts."""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_state as lib
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse_host import parse_ofed_info

DATA = os.path.join(os.path.dirname(__file__), "data")
# gpg --show-keys --with-colons of data/doca/keys/mellanox-retired-doca-keys.asc (gpg is the oracle here; the key IDs
# C5ED83E2..., 01048FA7..., A024F6F0... are the three Azure/AgentBaker PR 9256 names as the retired Mellanox keys)
RETIRED = ["0DAED433E148394D18F3BA51C5ED83E26224C050", "B35DA2F24879E6493C9F1C8101048FA7A9E4B643",
           "CAE649B3B3929F8470D4D33BA024F6F0E6D6A281"]


def data(*parts, mode="r"):
    with open(os.path.join(DATA, *parts), mode) as handle:
        return handle.read()


# -- 1. signing key --------------------------------------------------------------------------------------------

def test_the_default_key_is_nvidias_current_doca_host_key_per_package_manager():
    assert lib.DOCA_HOST_FINGERPRINT == "70454E6BF5D9C2D3B78709E8DC726C5E41B9CC50"
    assert lib.DOCA_HOST_FINGERPRINT.endswith("DC726C5E41B9CC50")  # the key ID apt's NO_PUBKEY names
    assert lib.key_location("apt") == (
        "https://linux.mellanox.com/public/repo/doca/public_keys/nvidia-doca-debian-gpg-public-key.gpg",) * 2
    assert lib.key_location("dnf")[0].endswith("/public_keys/nvidia-doca-rpm-gpg-public-key.asc")
    assert "GPG-KEY-Mellanox" not in lib.key_location("apt")[0] + lib.key_location("dnf")[0]
    assert lib.key_location("apt", "https://mirror.internal/doca.gpg")[0] == "https://mirror.internal/doca.gpg"
    with pytest.raises(lib.DocaError):
        lib.key_location(None)


def test_the_retired_mellanox_keys_are_refused_under_the_default_pin_and_name_themselves():
    retired = data("doca", "keys", "mellanox-retired-doca-keys.asc", mode="rb")
    assert lib.key_fingerprints(lib._dearmor(retired.decode())[0]) == RETIRED  # our parser agrees with gpg
    with pytest.raises(lib.DocaError) as info:
        lib.signing_key(retired, "doca_ofed_key_url", "https://linux.mellanox.com/public/repo/doca/GPG-KEY-Mellanox.pub",
                        lib.DOCA_HOST_FINGERPRINT)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith("doca_ofed_key_url: https://linux.mellanox.com/public/repo/doca/GPG-KEY")
    assert "not pinned: 0DAED433E148394D18F3BA51C5ED83E26224C050 Mellanox Technologies (Mellanox Technologies - " \
           "Signing Key v2) <support@mellanox.com>" in msg
    assert "pinned but absent: 70454E6BF5D9C2D3B78709E8DC726C5E41B9CC50" in msg
    assert "pin each of them in doca_ofed_key_fingerprint" in msg


def test_the_retired_keys_pass_only_when_each_is_pinned():
    retired = data("doca", "keys", "mellanox-retired-doca-keys.asc", mode="rb")
    # control: all three pinned (a list, or gpg's spaced form, any case)
    spaced = [" ".join(fp[i:i + 4] for i in range(0, 40, 4)).lower() for fp in RETIRED]
    text, prints, armored = lib.signing_key(retired, "doca_ofed_key_url", "the mirror", spaced)
    assert prints == RETIRED and armored and lib.key_fingerprints(lib._dearmor(text)[0]) == RETIRED
    # exactly one thing wrong: one of the three keys not pinned
    with pytest.raises(lib.DocaError) as info:
        lib.signing_key(retired, "doca_ofed_key_url", "the mirror", RETIRED[:2])
    assert "not pinned: CAE649B3B3929F8470D4D33BA024F6F0E6D6A281 Mellanox Technologies" in str(info.value)


@pytest.mark.parametrize("value,pins", [
    ("70454E6BF5D9C2D3B78709E8DC726C5E41B9CC50", ["70454E6BF5D9C2D3B78709E8DC726C5E41B9CC50"]),
    ("7045 4E6B F5D9 C2D3 B787  09E8 DC72 6C5E 41B9 CC50", ["70454E6BF5D9C2D3B78709E8DC726C5E41B9CC50"]),
    ([RETIRED[0], "0x" + RETIRED[1].lower()], RETIRED[:2]),
    ("", []), ([], []), ([""], []),
])
def test_pinned_fingerprints_forms(value, pins):
    assert lib.pinned_fingerprints(value) == pins


def test_a_fingerprint_that_is_no_fingerprint_is_one_line():
    with pytest.raises(lib.DocaError) as info:
        lib.pinned_fingerprints("DC726C5E41B9CC50")  # the key ID apt prints, not the fingerprint
    assert str(info.value).startswith("doca_ofed_key_fingerprint: 'DC726C5E41B9CC50' is not a key fingerprint")


# -- 2. the same driver in ofed_info and dkms -----------------------------------------------------------------

def _ofed(name):
    return parse_ofed_info(data("rdma", "ofed_info", name))["ofed"]["version"]


def _dkms(name, module="mlnx-ofed-kernel"):
    return [e["version"] for e in lib.parse_dkms_status(data("doca", "dkms_status", name)) if e["module"] == module][0]


@pytest.mark.parametrize("ofed_file,dkms_file", [
    ("mlnx-ofed-24.10-2.1.8.txt", "mlnx-ofed-24.10-dkms3.txt"),   # legacy MLNX_OFED: four-part build, DKMS release .1
    ("doca-ofed-25.10.txt", "doca-25.10-dkms3.txt"),             # DOCA: three-part build
    ("mlnx-ofed-5.4-3.0.3.txt", "mlnx-ofed-5.4-dkms2.txt"),      # MLNX_OFED 5.x: DKMS names only 5.4
])
def test_real_pairs_are_the_same_driver(ofed_file, dkms_file):
    assert lib.same_driver(_dkms(dkms_file), _ofed(ofed_file))


@pytest.mark.parametrize("ofed_file,dkms_file", [
    ("mlnx-ofed-24.10-2.1.8.txt", "doca-24.10-3.2.5-added.txt"),  # same 24.10, another build
    ("doca-ofed-25.10.txt", "mlnx-ofed-24.10-dkms3.txt"),
    ("mlnx-ofed-5.4-3.0.3.txt", "mlnx-ofed-24.10-dkms3.txt"),
])
def test_truly_different_pairs_are_not(ofed_file, dkms_file):
    assert not lib.same_driver(_dkms(dkms_file), _ofed(ofed_file))


def test_driver_build_reads_both_sides():
    assert lib.driver_build("24.10-2.1.8.0") == (24, 10, 2, 1, 8)
    assert lib.driver_build("24.10.OFED.24.10.2.1.8.1") == (24, 10, 2, 1, 8)
    assert lib.driver_build("5.4") == (5, 4) and lib.driver_build("garbage") == () and lib.driver_build(None) == ()


def test_the_verdict_passes_a_legacy_mlnx_ofed_host_whose_modules_are_built():
    ofed = parse_ofed_info(data("rdma", "ofed_info", "mlnx-ofed-24.10-2.1.8.txt"))["ofed"]
    dkms = lib.parse_dkms_status(data("doca", "dkms_status", "mlnx-ofed-24.10-dkms3.txt"))
    assert lib.verdict(ofed, dkms, "5.15.0-170-generic", None, None, None, "24.10")["problems"] == []


# -- 3. the DKMS module per distribution ------------------------------------------------------------------------

@pytest.mark.parametrize("os_release,module", [
    ({"ID": "ubuntu", "ID_LIKE": "debian"}, "mlnx-ofed-kernel"),
    ({"ID": "debian"}, "mlnx-ofed-kernel"),
    ({"ID": "rocky", "ID_LIKE": "rhel centos fedora"}, "mlnx-ofa_kernel"),
    ({"ID": "rhel", "ID_LIKE": "fedora"}, "mlnx-ofa_kernel"),
    ({"ID": "ol", "ID_LIKE": "fedora"}, "mlnx-ofa_kernel"),
])
def test_dkms_module_per_distribution(os_release, module):
    assert lib.dkms_module(os_release) == module


def test_a_rhel_kernel_update_without_built_modules_is_caught():
    ofed = parse_ofed_info(data("rdma", "ofed_info", "doca-ofed-25.10.txt"))["ofed"]
    dkms = lib.parse_dkms_status(data("doca", "dkms_status", "rhel9-mlnx-ofa_kernel-synthetic.txt"))
    module = lib.dkms_module({"ID": "rocky", "ID_LIKE": "rhel centos fedora"})
    assert lib.verdict(ofed, dkms, "5.14.0-503.15.1.el9_5.x86_64", None, None, None, "25.10", module)["problems"] == []
    broken = lib.verdict(ofed, dkms, "5.14.0-503.16.1.el9_5.x86_64", None, None, None, "25.10", module)["problems"]
    assert broken and broken[0].startswith("the running kernel 5.14.0-503.16.1.el9_5.x86_64 has no mlnx-ofa_kernel "
                                           "modules built")


# -- 4. headers for future kernels, the kernel the next boot starts ---------------------------------------------

def metas(*pairs):
    """``{meta: [its kernel package]}`` as :func:`lib.parse_image_depends` gives it (kernel packages left out)."""
    return {meta: ["linux-image-" + kernel, "linux-firmware"] for meta, kernel in pairs}


@pytest.mark.parametrize("release,depends,meta", [
    ("6.1.0-18-amd64", metas(("linux-image-amd64", "6.1.0-18-amd64")), "linux-headers-amd64"),
    ("6.1.0-18-cloud-amd64", metas(("linux-image-cloud-amd64", "6.1.0-18-cloud-amd64"),
                                   ("linux-image-amd64", "6.1.0-18-amd64")), "linux-headers-cloud-amd64"),
    ("5.15.0-170-generic", metas(("linux-image-generic", "5.15.0-170-generic")), "linux-headers-generic"),
    ("6.8.0-45-generic", metas(("linux-image-generic-hwe-22.04", "6.8.0-45-generic")),
     "linux-headers-generic-hwe-22.04"),
    ("6.8.0-45-generic", {}, None),                                                    # no meta-package installed
    ("6.1.0-18-amd64", metas(("linux-image-cloud-amd64", "6.1.0-18-cloud-amd64")), None),  # another flavour's
    # the meta already pulls a newer kernel of the line (not rebooted yet): the line is what counts
    ("6.8.0-45-generic", metas(("linux-image-generic-hwe-22.04", "6.8.0-50-generic")),
     "linux-headers-generic-hwe-22.04"),
    # Ubuntu 22.04 with both: the GA meta follows 5.15, the HWE meta 6.8 (REVIEW-30 D1) ...
    ("6.8.0-45-generic", metas(("linux-image-generic", "5.15.0-170-generic"),
                               ("linux-image-generic-hwe-22.04", "6.8.0-45-generic")),
     "linux-headers-generic-hwe-22.04"),
    # ... and running the GA kernel, the GA meta (control: the name still wins among metas of the same line)
    ("5.15.0-170-generic", metas(("linux-image-generic", "5.15.0-170-generic"),
                                 ("linux-image-generic-hwe-22.04", "6.8.0-45-generic")), "linux-headers-generic"),
    ("6.8.0-45-generic", metas(("linux-image-generic", "6.8.0-45-generic"),
                               ("linux-image-generic-hwe-24.04", "6.8.0-45-generic")), "linux-headers-generic"),
    # the HWE meta moved to the next line before the reboot: the newest line, which the next boot starts
    ("6.5.0-41-generic", metas(("linux-image-generic", "5.15.0-170-generic"),
                               ("linux-image-generic-hwe-22.04", "6.8.0-45-generic")),
     "linux-headers-generic-hwe-22.04"),
    ("6.12.48+deb13-amd64", metas(("linux-image-amd64", "6.12.48+deb13-amd64")), "linux-headers-amd64"),
])
def test_headers_meta_package_follows_the_running_line(release, depends, meta):
    assert lib.headers_meta_package("apt", release, depends) == meta


@pytest.mark.parametrize("name,release,meta", [
    ("ubuntu2204-ga-and-hwe.txt", "6.8.0-45-generic", "linux-headers-generic-hwe-22.04"),
    ("ubuntu2204-ga-and-hwe.txt", "5.15.0-170-generic", "linux-headers-generic"),
    ("debian12-amd64-and-cloud.txt", "6.1.0-18-cloud-amd64", "linux-headers-cloud-amd64"),
    ("debian12-amd64-and-cloud.txt", "6.1.0-18-amd64", "linux-headers-amd64"),
    ("debian13-amd64.txt", "6.12.48+deb13-amd64", "linux-headers-amd64"),
])
def test_headers_meta_package_from_dpkg_query(name, release, meta):
    depends = lib.parse_image_depends(data("doca", "dpkg_query", name))
    assert lib.headers_meta_package("apt", release, depends) == meta


def test_parse_image_depends_layout():
    depends = lib.parse_image_depends(data("doca", "dpkg_query", "ubuntu2204-ga-and-hwe.txt"))
    assert "linux-image-5.15.0-91-generic" not in depends  # rc: removed, only its configuration left
    hwe = depends["linux-image-generic-hwe-22.04"]
    assert hwe[:2] == ["linux-image-6.8.0-45-generic", "linux-modules-extra-6.8.0-45-generic"]
    debian = lib.parse_image_depends(data("doca", "dpkg_query", "debian12-amd64-and-cloud.txt"))
    assert debian["linux-image-amd64"] == ["linux-image-6.1.0-18-amd64"]  # "(= 6.1.76-1)" dropped
    assert debian["linux-image-6.1.0-18-amd64"][-2:] == ["initramfs-tools", "linux-initramfs-tool"]  # alternatives
    assert lib.parse_image_depends("linux-image-generic ii \n") == {"linux-image-generic": []}


def test_no_headers_meta_package_on_the_rhel_family():
    assert lib.headers_meta_package("dnf", "5.14.0-503.15.1.el9_5.x86_64", {"kernel-devel": []}) is None


def test_boot_kernel_from_grubby_and_from_boot():
    assert lib.boot_kernel("dnf", "/boot/vmlinuz-5.14.0-503.16.1.el9_5.x86_64\n") == "5.14.0-503.16.1.el9_5.x86_64"
    assert lib.boot_kernel("dnf", "") is None
    names = ["vmlinuz", "vmlinuz.old", "vmlinuz-6.1.0-9-amd64", "vmlinuz-6.1.0-18-amd64", "vmlinuz-6.1.0-10-amd64",
             "config-6.1.0-18-amd64", "initrd.img-6.1.0-18-amd64"]
    assert lib.boot_kernel("apt", vmlinuz=names) == "6.1.0-18-amd64"  # 18 > 10 > 9 as numbers, not as text
    assert lib.boot_kernel("apt", vmlinuz=["vmlinuz"]) is None


def test_boot_kernel_plan():
    ofed = {"version": "25.10-1.7.1", "flavour": "doca"}
    built = lib.parse_dkms_status("mlnx-ofed-kernel/25.10.OFED.25.10.1.7.1.1, 6.8.0-45-generic, x86_64: installed\n"
                                  "mlnx-ofed-kernel/25.10.OFED.25.10.1.7.1.1, 6.8.0-47-generic, x86_64: installed\n")
    module = "mlnx-ofed-kernel"
    # control: the boot kernel has the modules
    assert lib.boot_kernel_plan(ofed, built, module, "6.8.0-45-generic", "6.8.0-47-generic", True)["command"] is None
    # one thing wrong: the boot kernel lacks them -> dkms autoinstall for it
    plan = lib.boot_kernel_plan(ofed, built[:1], module, "6.8.0-45-generic", "6.8.0-47-generic", True)
    assert plan["command"] == ["dkms", "autoinstall", "-k", "6.8.0-47-generic"] and not plan["built"]
    # and without its headers: a problem with the fix, no command
    plan = lib.boot_kernel_plan(ofed, built[:1], module, "6.8.0-45-generic", "6.8.0-47-generic", False)
    assert plan["command"] is None and "install its headers (linux-headers-6.8.0-47-generic" in plan["problem"]
    # another driver's entry for the boot kernel does not count
    old = lib.parse_dkms_status("mlnx-ofed-kernel/25.07.OFED.25.07.0.9.7.1, 6.8.0-47-generic, x86_64: installed\n")
    assert lib.boot_kernel_plan(ofed, built[:1] + old, module, "6.8.0-45-generic", "6.8.0-47-generic", True)["command"]
    # nothing to do: the boot kernel is the running one, or no driver installed
    assert lib.boot_kernel_plan(ofed, built[:1], module, "6.8.0-47-generic", "6.8.0-47-generic", True)["built"]
    assert lib.boot_kernel_plan(None, built[:1], module, "6.8.0-45-generic", "6.8.0-47-generic", True)["built"]
