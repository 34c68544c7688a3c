# -*- coding: utf-8 -*-
"""doca_ofed: the repository per distribution (pure), the parsers and the verdict on recorded ``dkms status`` and
``ofed_info -s`` outputs (``data/doca/dkms_status``, ``data/rdma/ofed_info``, each with its ORIGIN.md), and the
module in-process against a host tree with stand-ins for ``ofed_info``, ``dkms``, ``modinfo`` and ``openibd`` that
print those outputs. What a real ConnectX and a real driver reload do is not proven here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from ansible_collections.ainet.fabric.tests.unit.plugins.modules.host_task import run_module

from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_state as lib
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse_host import parse_ofed_info

DATA = os.path.join(os.path.dirname(__file__), "..", "module_utils", "data")
RELEASE = os.uname()[2]


def data(*parts):
    with open(os.path.join(DATA, *parts)) as handle:
        return handle.read()


# -- pure -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("os_id,os_version,arch,version,url", [
    ("ubuntu", "24.04", "x86_64", "3.2.1", "https://linux.mellanox.com/public/repo/doca/3.2.1/ubuntu24.04/x86_64/"),
    ("ubuntu", "22.04", "aarch64", "2.9.3", "https://linux.mellanox.com/public/repo/doca/2.9.3/ubuntu22.04/arm64-sbsa/"),
    ("debian", "12", "x86_64", "3.2.1", "https://linux.mellanox.com/public/repo/doca/3.2.1/debian12/x86_64/"),
    # RHEL-family directories are per minor release up to DOCA 3.1, per major release from 3.2 on
    ("rocky", "9.6", "x86_64", "3.1.0", "https://linux.mellanox.com/public/repo/doca/3.1.0/rhel9.6/x86_64/"),
    ("rhel", "9.6", "x86_64", "3.2.1", "https://linux.mellanox.com/public/repo/doca/3.2.1/rhel9/x86_64/"),
])
def test_repository_per_distribution(os_id, os_version, arch, version, url):
    repo = lib.repository(version, os_id, os_version, arch)
    assert repo["url"] == url and repo["family"] == ("dnf" if "rhel" in url else "apt")
    mirror = lib.repository(version, os_id, os_version, arch, "http://mirror.internal/doca/")
    assert mirror["url"] == url.replace("https://linux.mellanox.com/public/repo/doca", "http://mirror.internal/doca")


@pytest.mark.parametrize("call,words", [
    (lambda: lib.check_version("latest"), "doca_ofed_version: 'latest' is not a DOCA version"),
    (lambda: lib.check_profile("doca-everything"), "doca_ofed_profile: 'doca-everything' is not a DOCA profile"),
    (lambda: lib.check_profile(["mlnx-ofed-kernel-dkms", "rm -rf"]), "neither a DOCA profile nor a list"),
    (lambda: lib.repository("3.2.1", "sles", "15.6", "x86_64"), "has no repository for sles 15.6"),
    (lambda: lib.repository("3.2.1", "ubuntu", "20.04", "x86_64"), "has no repository for ubuntu 20.04"),
    (lambda: lib.repository("3.2.1", "ubuntu", "24.04", "ppc64le"), "'ppc64le' architecture"),
])
def test_bad_input_is_one_line(call, words):
    with pytest.raises(lib.DocaError) as info:
        call()
    assert words in str(info.value) and "\n" not in str(info.value)


def test_dkms_status_both_layouts_and_notes():
    new = lib.parse_dkms_status(data("doca", "dkms_status", "doca-25.10-dkms3.txt"))
    assert new == [{"module": "mlnx-ofed-kernel", "version": "25.10.OFED.25.10.1.7.1.1", "kernel": "5.15.0-170-generic",
                    "arch": "x86_64", "state": "installed", "note": None}]
    two = lib.parse_dkms_status(data("doca", "dkms_status", "doca-24.01-with-nvidia-dkms3.txt"))
    assert [e["module"] for e in two] == ["mlnx-ofed-kernel", "nvidia"]
    old = lib.parse_dkms_status(data("doca", "dkms_status", "mlnx-ofed-4.9-dkms2-synthetic.txt"))
    assert [(e["version"], e["kernel"], e["state"]) for e in old] == [("4.9", "5.4.0-91-generic", "installed"),
                                                                      ("4.9", "5.4.0-92-generic", "built")]
    warned = lib.parse_dkms_status(data("doca", "dkms_status", "doca-25.10-added-and-warning-synthetic.txt"))
    assert warned[0]["kernel"] is None and warned[0]["state"] == "added"
    assert warned[1]["note"] == "WARNING! Diff between built and installed module!"


def test_verdict_names_the_kernel_without_modules_and_the_fix():
    ofed = parse_ofed_info(data("rdma", "ofed_info", "doca-ofed-25.10.txt"))["ofed"]
    dkms = lib.parse_dkms_status(data("doca", "dkms_status", "doca-25.10-dkms3.txt"))
    ok = lib.verdict(ofed, dkms, "5.15.0-170-generic", "25.10-1.7.1", "AB12", "AB12", "25.10")
    assert ok == {"problems": [], "reboot": None}
    broken = lib.verdict(ofed, dkms, "5.15.0-171-generic", "25.10-1.7.1", "AB12", "AB12", "25.10")
    assert broken["problems"] == [
        "the running kernel 5.15.0-171-generic has no mlnx-ofed-kernel modules built (dkms has them for "
        "5.15.0-170-generic); fix: install the kernel headers (linux-headers-5.15.0-171-generic or "
        "kernel-devel-5.15.0-171-generic) and run 'dkms autoinstall -k 5.15.0-171-generic', then reboot or restart "
        "the driver"]
    # built but not installed for the running kernel (dkms 2.x, after a kernel update) is the same breakage
    old = lib.parse_dkms_status(data("doca", "dkms_status", "mlnx-ofed-4.9-dkms2-synthetic.txt"))
    assert lib.verdict({"version": "4.9-4.1.7.0", "flavour": "mlnx_ofed"}, old, "5.4.0-92-generic", None, None,
                       None)["problems"]
    wrong = lib.verdict(ofed, dkms, "5.15.0-170-generic", "25.10-1.7.1", "AB12", "AB12", "25.07")
    assert wrong["problems"] == ["the installed driver is 25.10-1.7.1, the pinned DOCA version ships 25.07"]
    inbox = lib.verdict(ofed, dkms, "5.15.0-170-generic", None, "CD34", "AB12", "25.10")
    assert inbox["reboot"].startswith("the loaded mlx5_core is the kernel's own")
    stale = lib.verdict(ofed, dkms, "5.15.0-170-generic", "25.07-0.9.7", "CD34", "AB12", "25.10")
    assert "srcversion CD34" in stale["reboot"]
    assert lib.verdict(None, [], RELEASE, None, None, None)["problems"] == ["DOCA-OFED is not installed (no ofed_info)"]


def test_storage_users_and_the_restart_refusal():
    mounts = ("/dev/nvme0n1p2 / ext4 rw,relatime 0 0\n"
              "10.0.0.9:/export /mnt/data nfs4 rw,vers=4.2,proto=rdma,port=20049,addr=10.0.0.9 0 0\n"
              "10.0.0.9:/home /home nfs4 rw,vers=4.2,proto=tcp 0 0\n")
    users = lib.storage_users({"nvme_rdma", "mlx5_ib"}, mounts, {"nvme0": "pcie", "nvme1": "rdma"})
    assert users == ["module nvme_rdma is loaded", "/mnt/data is mounted over NFS/RDMA from 10.0.0.9:/export",
                     "NVMe controller nvme1 runs over RDMA"]
    assert lib.restart_refusal({}, {"0000:3b:00.0"}, []) is None
    assert "management path runs over one (0000:3b:00.0: ens6f0np0: the default route" in lib.restart_refusal(
        {"0000:3b:00.0": "ens6f0np0: the default route via 10.0.0.1"}, {"0000:3b:00.0"}, [])
    assert "pull the RDMA stack from under storage (module nvme_rdma is loaded)" in lib.restart_refusal(
        {}, {"0000:3b:00.0"}, ["module nvme_rdma is loaded"])


# -- the module -------------------------------------------------------------------------------------------------

STANDIN = r'''
import json, os, sys
name = os.path.basename(sys.argv[0])
state = json.load(open(os.environ["STANDIN_STATE"]))
with open(os.environ["STANDIN_LOG"], "a") as h:
    h.write(name + " " + " ".join(sys.argv[1:]) + "\n")
if name == "ofed_info":
    print(state["ofed_info"])
elif name == "dkms":
    sys.stdout.write(state["dkms"])
elif name == "modinfo":
    sys.stdout.write(state["modinfo"].replace("78352976D87E8F24553D352", state["installed_srcversion"]))
elif name == "mokutil":
    sys.stdout.write(state["sb_state"] if sys.argv[1] == "--sb-state" else state["test_key"])
elif name == "openibd":
    # the driver loader: the installed module is now the loaded one
    sysroot = os.environ["STANDIN_SYS"]
    os.makedirs(os.path.join(sysroot, "sys/module/mlx5_core"), exist_ok=True)
    open(os.path.join(sysroot, "sys/module/mlx5_core/srcversion"), "w").write(state["installed_srcversion"] + "\n")
    open(os.path.join(sysroot, "sys/module/mlx5_core/version"), "w").write("25.10-1.7.1\n")
'''


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A node with DOCA-OFED 25.10 installed and built for the running kernel, the kernel's own mlx5_core still loaded
    (installed, not yet rebooted), a ConnectX at 0000:3b:00.0 (ens6f0np0) and eno1 (Intel) with the default route."""
    sysroot, cfg = tmp_path / "sys", tmp_path / "cfg"
    os.makedirs(str(sysroot / "sys/module/mlx5_core"))
    (sysroot / "sys/module/mlx5_core/srcversion").write_text("INBOX0001\n")
    for pci, vendor, nic in (("0000:3b:00.0", "0x15b3", "ens6f0np0"), ("0000:5e:00.0", "0x8086", "eno1")):
        dev = sysroot / "sys/bus/pci/devices" / pci
        os.makedirs(str(dev))
        (dev / "vendor").write_text(vendor + "\n")
        os.makedirs(str(sysroot / "sys/class/net" / nic))
        os.symlink(str(dev), str(sysroot / "sys/class/net" / nic / "device"))
    os.makedirs(str(sysroot / "proc"))
    (sysroot / "proc/modules").write_text("mlx5_ib 483328 0 - Live 0x0\nmlx5_core 2166784 1 mlx5_ib, Live 0x0\n")
    (sysroot / "proc/mounts").write_text("/dev/sda2 / ext4 rw 0 0\n")
    os.makedirs(str(cfg / "etc/init.d"))
    (cfg / "etc/os-release").write_text('ID=ubuntu\nVERSION_ID="24.04"\n')
    state = {"ofed_info": "OFED-internal-25.10-1.7.1:",
             "dkms": "mlnx-ofed-kernel/25.10.OFED.25.10.1.7.1.1, %s, x86_64: installed\n" % RELEASE,
             "installed_srcversion": "DOCA2510AB",
             # modinfo of DOCA's DKMS module (recorded on Debian 12), its srcversion replaced by installed_srcversion
             "modinfo": data("doca", "modinfo", "debian12-doca-24.10-dkms.txt"),
             "sb_state": "SecureBoot disabled\n", "test_key": ""}
    (tmp_path / "state.json").write_text(json.dumps(state))
    bin_dir = tmp_path / "bin"
    os.makedirs(str(bin_dir))
    for name in ("ofed_info", "dkms", "modinfo"):
        (bin_dir / name).write_text("#!%s\n%s" % (sys.executable, STANDIN))
        os.chmod(str(bin_dir / name), 0o755)
    (cfg / "etc/init.d/openibd").write_text("#!%s\n%s" % (sys.executable, STANDIN))
    os.chmod(str(cfg / "etc/init.d/openibd"), 0o755)
    ip = bin_dir / "ip"
    routes = json.dumps([{"dst": "default", "gateway": "10.0.0.1", "dev": "eno1"}])
    ip.write_text("#!/bin/sh\ncase \"$*\" in *route*) echo '%s';; *) echo '[]';; esac\n" % routes)
    os.chmod(str(ip), 0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("STANDIN_STATE", str(tmp_path / "state.json"))
    monkeypatch.setenv("STANDIN_LOG", str(tmp_path / "tools.log"))
    monkeypatch.setenv("STANDIN_SYS", str(sysroot))
    monkeypatch.delenv("SSH_CONNECTION", raising=False)
    return tmp_path


def run(capsys, tmp_path, check=False, **args):
    params = dict(config_root=str(tmp_path / "cfg"), sysfs_root=str(tmp_path / "sys"))
    params.update(args)
    return run_module(capsys, "doca_ofed", params, check=check)


def restarts(tmp_path):
    path = tmp_path / "tools.log"
    return [line for line in path.read_text().splitlines() if line.startswith("openibd")] if path.exists() else []


def test_plan_names_the_repository_and_refuses_bad_input(capsys, host):
    plan = run(capsys, host, state="plan", version="3.2.1", profile="doca-roce")
    assert plan["repository"]["family"] == "apt" and plan["repository"]["os"] == "ubuntu24.04"
    assert plan["packages"] == ["doca-roce"] and plan["driver"] == "25.10" and not plan["changed"]
    bad = run(capsys, host, state="plan", version="3.2.1", profile="doca-everything")
    assert bad["failed"] and bad["msg"].startswith("doca_ofed_profile: 'doca-everything' is not a DOCA profile")


def test_plan_returns_and_names_no_login_of_the_mirror_or_the_key_url(capsys, host):
    plan = run(capsys, host, state="plan", version="3.2.1", mirror="https://fabric:PLANTEDTOKEN@mirror.example/doca/",
               key_url="https://fabric:PLANTEDKEY@mirror.example/doca/key.gpg")
    assert not plan.get("failed"), plan.get("msg")
    assert plan["repository"]["url"] == "https://mirror.example/doca/3.2.1/ubuntu24.04/x86_64/"
    assert plan["key"]["url"] == plan["key"]["origin"] == "https://<redacted>@mirror.example/doca/key.gpg"
    assert "PLANTED" not in json.dumps(plan), plan
    # the control: without a login the URLs are returned as given
    plain = run(capsys, host, state="plan", version="3.2.1", key_url="https://mirror.example/doca/key.gpg")
    assert plain["key"]["url"] == "https://mirror.example/doca/key.gpg"
    # a login a credentials file cannot hold: refused naming the option, never the value
    bad = run(capsys, host, state="plan", version="3.2.1", mirror="https://fabric:PLANTED TOKEN@mirror.example/")
    assert bad["failed"] and bad["msg"].startswith("doca_ofed_mirror: the password in the URL's userinfo")
    assert "PLANTED" not in json.dumps(bad), bad


def test_installed_not_loaded_is_a_pending_reboot_and_a_restart_when_asked(capsys, host):
    verify = run(capsys, host, version="3.2.1")
    assert not verify["changed"] and verify["reboot_pending"] == [
        "DOCA-OFED: the loaded mlx5_core is the kernel's own, not DOCA-OFED's: the installed driver loads at the next "
        "boot (or driver restart)"]
    check = run(capsys, host, check=True, version="3.2.1", restart=True, management_addresses=["10.0.0.5"])
    assert check["changed"] and restarts(host) == []
    done = run(capsys, host, version="3.2.1", restart=True, management_addresses=["10.0.0.5"])
    assert done["changed"] and restarts(host) == ["openibd restart"] and done["reboot_pending"] == []
    assert done["loaded"]["srcversion"] == "DOCA2510AB"
    again = run(capsys, host, version="3.2.1", restart=True, management_addresses=["10.0.0.5"])
    assert not again["changed"] and len(restarts(host)) == 1


def test_restart_refused_on_the_management_path_and_under_storage(capsys, host):
    (host / "bin" / "ip").write_text("#!/bin/sh\ncase \"$*\" in *route*) echo '%s';; *) echo '[]';; esac\n"
                                     % json.dumps([{"dst": "default", "gateway": "10.0.0.1", "dev": "ens6f0np0"}]))
    refused = run(capsys, host, version="3.2.1", restart=True, management_addresses=["10.0.0.5"])
    assert refused["failed"] and restarts(host) == []
    assert "the management path runs over one (0000:3b:00.0: ens6f0np0: the default route via 10.0.0.1)" in \
        refused["msg"]
    (host / "bin" / "ip").write_text("#!/bin/sh\necho '[]'\n")
    (host / "sys/proc/modules").write_text("nvme_rdma 49152 2 - Live 0x0\nmlx5_core 2166784 1 - Live 0x0\n")
    storage = run(capsys, host, version="3.2.1", restart=True, management_addresses=["10.0.0.5"])
    assert storage["failed"] and "module nvme_rdma is loaded" in storage["msg"] and restarts(host) == []
    unknown = run(capsys, host, version="3.2.1", restart=True)
    assert unknown["failed"] and "the address this session came in on is not known" in unknown["msg"]


def test_a_kernel_update_without_built_modules_fails_with_the_fix(capsys, host):
    state = json.loads((host / "state.json").read_text())
    state["dkms"] = "mlnx-ofed-kernel/25.10.OFED.25.10.1.7.1.1, 5.15.0-1-generic, x86_64: installed\n"
    (host / "state.json").write_text(json.dumps(state))
    result = run(capsys, host, version="3.2.1")
    assert result["failed"] and ("the running kernel %s has no mlnx-ofed-kernel modules built" % RELEASE) in \
        result["msg"] and "dkms autoinstall -k %s" % RELEASE in result["msg"]


def test_nothing_installed_nothing_pinned_says_so(capsys, host):
    os.remove(str(host / "bin" / "ofed_info"))
    result = run(capsys, host)
    assert not result.get("failed") and result["msg"].startswith("DOCA-OFED is not installed and no version is pinned")
    pinned = run(capsys, host, version="3.2.1")
    assert pinned["failed"] and "DOCA-OFED is not installed" in pinned["msg"]


# -- the repository, read before any change ----------------------------------------------------------------------

PACKAGES = """Package: doca-ofed
Version: 3.2.2-1
Architecture: amd64
Depends: mlnx-ofed-kernel-utils (= 25.10.2.4.1), mlnx-tools
Description: DOCA-OFED
 a continuation line: Version: 9.9 is not a field

Package: mlnx-tools
Version: 25.10.2.4.1
Architecture: amd64

Package: mlnx-ofed-kernel-utils
Version: 25.10.2.4.1
Architecture: amd64

Package: mlnx-ofed-kernel-utils
Version: 25.10.2.3.9
Architecture: amd64
"""


def test_packages_index_delta_and_pin():
    index = lib.parse_packages_index(PACKAGES)
    assert index == {"doca-ofed": ["3.2.2-1"], "mlnx-tools": ["25.10.2.4.1"],
                     "mlnx-ofed-kernel-utils": ["25.10.2.4.1", "25.10.2.3.9"]}

    def compare(one, two):  # numeric dotted versions are enough for these
        def key(v):
            return [int(p) for p in v.replace("-", ".").split(".")]
        return (key(one) > key(two)) - (key(one) < key(two))

    delta = lib.repository_delta(index, {"doca-ofed": "3.2.1-1", "mlnx-tools": "25.10.2.4.1",
                                         "mlnx-ofed-kernel-utils": "25.10.3.0.0", "iproute2": "6.1.0"}, compare)
    assert delta == {"upgrade": ["doca-ofed"], "current": ["mlnx-tools"],
                     "downgrade": ["mlnx-ofed-kernel-utils 25.10.3.0.0 -> 25.10.2.4.1"]}
    pin = lib.apt_pin("3.2.2", "https://user:secret@mirror.example:8443/doca/3.2.2/ubuntu24.04/x86_64/", index)
    assert pin.splitlines()[1:] == ["Package: doca-ofed mlnx-ofed-kernel-utils mlnx-tools",
                                    'Pin: origin "mirror.example"', "Pin-Priority: 1001"]
    assert 'Pin: origin ""' in lib.apt_pin("3.2.2", "file:///var/lib/ainet-fabric/doca-ofed-repo/", index)
    assert lib.parse_repoquery("doca-ofed 3.2.2-1.el9\n\nmlnx-tools 1:25.10-1\n") == {
        "doca-ofed": ["3.2.2-1.el9"], "mlnx-tools": ["1:25.10-1"]}


@pytest.mark.parametrize("newer,older,order", [
    (("0", "1.0", "1"), ("0", "1.0", "1"), 0), (("0", "1.10", "1"), ("0", "1.9", "1"), 1),
    (("0", "1.0~rc1", "1"), ("0", "1.0", "1"), -1), (("0", "1.0^git1", "1"), ("0", "1.0", "1"), 1),
    (("1", "0.1", "1"), ("0", "9.9", "1"), 1), (("0", "1.0a", "1"), ("0", "1.0", "1"), 1),
    (("0", "1.0", "1.el9"), ("0", "1.0", "1.el9_2"), -1), (("0", "2a", "1"), ("0", "2.0", "1"), -1),
])
def test_rpm_version_order(newer, older, order):
    """rpmvercmp's documented cases (rpm's tests/rpmvercmp.at); ``order`` is newer's against older's."""
    assert lib.rpm_version_compare(newer, older) == order
    assert lib.rpm_version_compare(older, newer) == -order


def test_only_the_installed_drivers_dkms_entry_counts():
    ofed = {"version": "25.10-2.4.1", "flavour": "internal"}
    old_installed_new_added = [
        {"module": "mlnx-ofed-kernel", "version": "25.10.OFED.25.10.1.7.1.1", "kernel": RELEASE, "arch": "x86_64",
         "state": "installed", "note": None},
        {"module": "mlnx-ofed-kernel", "version": "25.10.OFED.25.10.2.4.1.1", "kernel": None, "arch": None,
         "state": "added", "note": None}]
    found = lib.verdict(ofed, old_installed_new_added, RELEASE, None, None, None)
    assert found["problems"] and found["problems"][0].startswith("the running kernel %s has no mlnx-ofed-kernel "
                                                                 "modules built (dkms has them for no kernel)" % RELEASE)
    stale_dkms = lib.verdict(ofed, old_installed_new_added[:1], RELEASE, None, None, None)
    assert stale_dkms["problems"] == [
        "dkms has mlnx-ofed-kernel 25.10.OFED.25.10.1.7.1.1, not the installed driver 25.10-2.4.1 (its DKMS package "
        "was not upgraded with it); fix: install the pinned version's mlnx-ofed-kernel-dkms, then reboot or restart "
        "the driver"]
    assert lib.same_driver("4.9", "4.9-4.1.7.0") and not lib.same_driver("25.10.OFED.25.10.1.7.1.1", "25.10-2.4.1")


def repository_host(host, packages, installed):
    """A mirror directory (file://) with ``packages`` as its index, and a dpkg-query that lists ``installed``."""
    repo = host / "mirror" / "3.2.2" / "ubuntu24.04" / "x86_64"
    os.makedirs(str(repo))
    import gzip
    with gzip.open(str(repo / "Packages.gz"), "wt") as handle:
        handle.write(packages)
    query = host / "bin" / "dpkg-query"
    query.write_text("#!/bin/sh\n%s" % "".join("echo '%s %s ii '\n" % item for item in installed))
    os.chmod(str(query), 0o755)
    for tool in ("dpkg",):
        os.symlink("/usr/bin/" + tool, str(host / "bin" / tool))
    return "file://%s" % (host / "mirror")


@pytest.mark.skipif(not os.path.exists("/usr/bin/dpkg"), reason="compares versions with this machine's dpkg")
def test_repository_state_reads_the_index_and_refuses_a_downgrade(capsys, host):
    mirror = repository_host(host, PACKAGES, [("doca-ofed", "3.2.1-1"), ("mlnx-tools", "25.10.1.7.1"),
                                              ("bash", "5.2")])
    read = run(capsys, host, state="repository", version="3.2.2", mirror=mirror)
    assert not read.get("failed"), read.get("msg")
    repo = read["repository"]
    assert repo["available"] == ["doca-ofed", "mlnx-ofed-kernel-utils", "mlnx-tools"]
    assert repo["installed"] == ["doca-ofed", "mlnx-tools"] and repo["upgrade"] == ["doca-ofed", "mlnx-tools"]
    assert "Package: doca-ofed mlnx-ofed-kernel-utils mlnx-tools\nPin: origin \"\"" in repo["apt_preferences"]
    assert read["headers"]["package"] == "linux-headers-%s" % RELEASE and not read["headers"]["present"]

    (host / "bin" / "dpkg-query").write_text("#!/bin/sh\necho 'doca-ofed 3.2.3-1 ii '\n")
    down = run(capsys, host, state="repository", version="3.2.2", mirror=mirror)
    assert down["failed"] and down["msg"] == (
        "doca_ofed_version: 3.2.2 is older than what this host has (doca-ofed 3.2.3-1 -> 3.2.2-1); a downgrade is "
        "refused. Fix: pin the installed DOCA version, or set doca_ofed_allow_downgrade")
    allowed = run(capsys, host, state="repository", version="3.2.2", mirror=mirror, allow_downgrade=True)
    assert not allowed.get("failed") and allowed["repository"]["downgrade"] == ["doca-ofed 3.2.3-1 -> 3.2.2-1"]

    missing = run(capsys, host, state="repository", version="3.3.0", mirror=mirror)
    assert missing["failed"] and missing["msg"].startswith(
        "doca_ofed_version: 3.3.0 is not in the repository for this host (%s/3.3.0/ubuntu24.04/x86_64/: 404)"
        % mirror)


# -- the repository's signing key -------------------------------------------------------------------------------

DEBIAN_KEY = os.path.join(DATA, "doca", "keys", "debian-archive-bookworm-stable.gpg")
DEBIAN_FINGERPRINT = "4D64FEC119C2029067D6E791F8D2585B8783D481"  # Debian's published bookworm release key
needs_gpg = pytest.mark.skipif(not shutil.which("gpg"), reason="gpg (the judge of the armored keys) is not installed")


def gpg(tmp_path, *args, data=None):
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700, exist_ok=True)
    return subprocess.run(["gpg", "--homedir", str(home), "--batch", "--quiet", "--pinentry-mode", "loopback",
                           "--passphrase", ""] + list(args), input=data, capture_output=True, check=True).stdout


def test_a_real_binary_key_is_armored_and_its_fingerprint_is_debians():
    with open(DEBIAN_KEY, "rb") as handle:
        binary = handle.read()
    text, prints, armored = lib.signing_key(binary, "doca_ofed_key_url", "https://mirror/key.gpg")
    assert prints == [DEBIAN_FINGERPRINT] and armored is False
    assert text.startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n") and text.endswith(
        "\n-----END PGP PUBLIC KEY BLOCK-----\n")
    # armored material is kept byte for byte: a second pass changes nothing
    again, prints_again, armored_again = lib.signing_key(text.encode(), "f", "o")
    assert (again, prints_again, armored_again) == (text, [DEBIAN_FINGERPRINT], True)
    # the pinned fingerprint, as gpg prints it (groups of four, any case)
    spaced = " ".join(DEBIAN_FINGERPRINT[i:i + 4] for i in range(0, 40, 4)).lower()
    assert lib.signing_key(binary, "f", "o", spaced)[1] == [DEBIAN_FINGERPRINT]


@needs_gpg
def test_gpg_reads_the_armored_key_back_byte_for_byte(tmp_path):
    with open(DEBIAN_KEY, "rb") as handle:
        binary = handle.read()
    text = lib.signing_key(binary, "f", "o")[0]
    assert gpg(tmp_path, "--dearmor", data=text.encode()) == binary


@pytest.fixture
def gnupg_home(tmp_path):
    """The test's GnuPG home; its gpg-agent (started by key generation) is stopped at the end, not left running."""
    yield tmp_path
    subprocess.run(["gpgconf", "--homedir", str(tmp_path / "gnupg"), "--kill", "all"], capture_output=True, check=False)


@needs_gpg
def test_fingerprints_of_two_keys_with_subkeys_are_gpgs(gnupg_home):
    tmp_path = gnupg_home
    for uid, algo in (("one <one@ainet-fabric.invalid>", "rsa2048"), ("two <two@ainet-fabric.invalid>", "ed25519")):
        gpg(tmp_path, "--quick-generate-key", uid, algo, "sign", "1d")
        fingerprint = [line.split(b":")[9] for line in gpg(tmp_path, "--with-colons", "--list-keys", uid).splitlines()
                       if line.startswith(b"fpr:")][0].decode()
        gpg(tmp_path, "--quick-add-key", fingerprint, "cv25519" if algo == "ed25519" else "rsa2048", "encr", "1d")
    listed = gpg(tmp_path, "--with-colons", "--list-keys").decode().splitlines()
    primaries = [listed[i + 1].split(":")[9] for i, line in enumerate(listed) if line.startswith("pub:")]
    binary = gpg(tmp_path, "--export")
    assert lib.key_fingerprints(binary) == primaries and len(primaries) == 2
    armored = gpg(tmp_path, "--armor", "--export")
    text, prints, was_armored = lib.signing_key(armored, "f", "o")
    assert text == armored.decode() and prints == primaries and was_armored
    assert gpg(tmp_path, "--dearmor", data=lib.signing_key(binary, "f", "o")[0].encode()) == binary
    # two armored blocks in one file: both keys are read (apt would trust both), so pinning one refuses the file
    apart = b"".join(gpg(tmp_path, "--armor", "--export", fingerprint) for fingerprint in primaries)
    text, prints, _armored = lib.signing_key(apart, "f", "o")
    assert prints == primaries and gpg(tmp_path, "--dearmor", data=text.encode()) == binary
    for data in (apart, binary):
        with pytest.raises(lib.DocaError) as err:
            lib.signing_key(data, "doca_ofed_key_url", "u", primaries[0])
        assert "holds the key(s) %s, not only the pinned fingerprint %s" % (", ".join(primaries), primaries[0]) in str(
            err.value)


def test_what_is_not_a_key_is_refused_in_one_line():
    with open(DEBIAN_KEY, "rb") as handle:
        binary = handle.read()
    text = lib.signing_key(binary, "f", "o")[0]
    lines = text.splitlines()
    checksum = [i for i, line in enumerate(lines) if line.startswith("=")][0]
    wrong = "=" + ("AAAA" if lines[checksum] != "=AAAA" else "BBBB")
    for data, words in [
            (b"", "doca_ofed_key_url: https://k is not an OpenPGP public key (neither ASCII-armored nor binary); "
                  "it is empty"),
            (b"<!DOCTYPE html>\n<html><body>Forbidden</body></html>\n", "it begins with '<!DOCTYPE html> <html>"),
            (b"\x00\x01garbage", "is not an OpenPGP public key"),
            ("\n".join(lines[:checksum] + [wrong] + lines[checksum + 1:]).encode(),
             "doca_ofed_key_url: https://k is an ASCII-armored key that does not decode (its CRC-24 checksum does "
             "not match)"),
            ("\n".join(lines[:-1]).encode(), "does not decode (a key block without its end line)"),
            # a cut-off download, a page appended to the key, a bare public key header
            (binary[:200], "doca_ofed_key_url: https://k is not a usable OpenPGP public key: it is cut short or has "
                           "something else appended (a truncated download?)"),
            (binary + b"<html>502</html>", "is cut short or has something else appended"),
            (b"\xc6\x00", "a public key packet of an unknown version or no key material"),
            # a signature block is not a public key
            (b"\x88\x04\x00\x00\x00\x00", "is not an OpenPGP public key")]:
        with pytest.raises(lib.DocaError) as err:
            lib.signing_key(data, "doca_ofed_key_url", "https://k")
        assert words in str(err.value) and "\n" not in str(err.value), str(err.value)
    with pytest.raises(lib.DocaError) as err:
        lib.signing_key(binary, "doca_ofed_key_file", "/keys/doca.pub", "70454E6BF5D9C2D3B78709E8DC726C5E41B9CC50")
    assert str(err.value).startswith("doca_ofed_key_file: /keys/doca.pub holds the key(s) %s, not only the pinned "
                                     "fingerprint 70454E6BF5D9C2D3B78709E8DC726C5E41B9CC50" % DEBIAN_FINGERPRINT)
    assert lib.signing_key(binary, "f", "o", "0x" + DEBIAN_FINGERPRINT.lower())[1] == [DEBIAN_FINGERPRINT]


def test_armor_that_apt_cannot_read_is_written_in_the_canonical_form():
    """apt's own de-armoring (apt-key's awk) needs LF line ends and the blank line after the header line: what is
    fetched with CRLF, headers or without that line is written as the one canonical block."""
    with open(DEBIAN_KEY, "rb") as handle:
        binary = handle.read()
    canonical = lib.signing_key(binary, "f", "o")[0]
    lines = canonical.splitlines()
    for variant in ("\r\n".join(lines) + "\r\n",
                    "\n".join(lines[:1] + ["Version: GnuPG v1", "Comment: NVIDIA", ""] + lines[2:]) + "\n",
                    "\n".join(lines[:1] + lines[2:]) + "\n",
                    "\n".join(lines[:1] + ["  "] + lines[2:]) + "\n",
                    "\ufeff" + canonical):
        assert lib.signing_key(variant.encode("utf-8"), "f", "o") == (canonical, [DEBIAN_FINGERPRINT], True)


def test_key_state_writes_the_armored_key_once_and_honours_check_mode(capsys, tmp_path):
    source, dest = tmp_path / "key.download", tmp_path / "keyrings" / "doca.asc"
    dest.parent.mkdir()
    with open(DEBIAN_KEY, "rb") as handle:
        source.write_bytes(handle.read())
    args = dict(state="key", key_source=str(source), key_path=str(dest), key_origin="https://mirror/key.gpg")
    checked = run_module(capsys, "doca_ofed", args, check=True)
    assert checked["changed"] and not dest.exists()
    first = run_module(capsys, "doca_ofed", args)
    assert first["changed"] and first["key"] == {"path": str(dest), "fingerprints": [DEBIAN_FINGERPRINT],
                                                 "armored": False}
    assert dest.read_text().startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----") and oct(dest.stat().st_mode)[-3:] == "644"
    assert not run_module(capsys, "doca_ofed", args)["changed"]
    # an error page where the key was: refused, the key written before is left as it is
    before = dest.read_bytes()
    source.write_bytes(b"<html>502</html>")
    failed = run_module(capsys, "doca_ofed", dict(args, key_option="doca_ofed_key_url"))
    assert failed["failed"] and failed["msg"].startswith("doca_ofed_key_url: https://mirror/key.gpg is not an OpenPGP")
    assert dest.read_bytes() == before
    missing = run_module(capsys, "doca_ofed", dict(args, key_source=str(tmp_path / "nothing")))
    assert missing["failed"] and "could not be read on this host" in missing["msg"]


def test_key_state_fetches_the_url_itself_and_judges_it_in_check_mode(capsys, tmp_path):
    """doca_ofed_key_url: the module reads the key into memory, in check mode too, so a wrong key is refused and an
    unchanged one reported unchanged there (get_url's check mode could do neither)."""
    served, dest = tmp_path / "GPG-KEY-Mellanox.pub", tmp_path / "doca.asc"
    with open(DEBIAN_KEY, "rb") as handle:
        served.write_bytes(handle.read())
    args = dict(state="key", key_url="file://%s" % served, key_path=str(dest))
    assert run_module(capsys, "doca_ofed", args, check=True)["changed"] and not dest.exists()
    assert run_module(capsys, "doca_ofed", args)["changed"]
    assert not run_module(capsys, "doca_ofed", args, check=True)["changed"]
    pinned = run_module(capsys, "doca_ofed", dict(args, key_fingerprint="70454E6BF5D9C2D3B78709E8DC726C5E41B9CC50"),
                        check=True)
    assert pinned["failed"] and pinned["msg"].startswith("doca_ofed_key_url: file://%s holds the key(s)" % served)
    gone = run_module(capsys, "doca_ofed", dict(args, key_url="file://%s.missing" % served))
    assert gone["failed"] and gone["msg"].startswith("doca_ofed_key_url: file://%s.missing could not be fetched from "
                                                     "this host (404" % served)


# -- dnf: the repository read with repoquery, and the versionlock lines --------------------------------------------

REPOQUERY = """doca-ofed 3.2.2-1.el9
mlnx-ofa_kernel 25.10-OFED.25.10.1.7.1.1.rhel9u6
mlnx-ofa_kernel 25.10-OFED.25.10.1.2.0.1.rhel9u6
mlnx-tools 1:25.10-0.2510017
"""


def test_versionlock_lines_hold_every_build_of_the_repository_in_dnfs_form():
    assert lib.dnf_versionlock(lib.parse_repoquery(REPOQUERY)) == [
        "doca-ofed-0:3.2.2-1.el9.*", "mlnx-ofa_kernel-0:25.10-OFED.25.10.1.2.0.1.rhel9u6.*",
        "mlnx-ofa_kernel-0:25.10-OFED.25.10.1.7.1.1.rhel9u6.*", "mlnx-tools-1:25.10-0.2510017.*"]
    newest = lib.newest_versions(lib.parse_repoquery(REPOQUERY), lambda one, two: lib.rpm_version_compare(
        *[(e.rpartition(":")[0] or "0",) + tuple(e.rpartition(":")[2].split("-", 1)) for e in (one, two)]))
    assert newest["mlnx-ofa_kernel"] == "25.10-OFED.25.10.1.7.1.1.rhel9u6"


def test_repository_state_on_dnf_returns_the_versionlock_and_no_apt_pin(capsys, host):
    (host / "cfg/etc/os-release").write_text('ID="rocky"\nVERSION_ID="9.6"\n')
    # the fake dnf logs its arguments, then the repository files of the reposdir it is given and their modes
    dnf = ("#!/bin/sh\necho \"$*\" >> {log}\nfor a; do case $a in --setopt=reposdir=*) d=${{a#--setopt=reposdir=}}; "
           "/bin/cat \"$d\"/*.repo >> {log}; /usr/bin/stat -c 'mode %a' \"$d\"/*.repo >> {log};; esac; done\n"
           "printf '{out}'\n").format(log=host / "dnf.log", out=REPOQUERY.replace("\n", "\\n"))
    for name, text in (("dnf", dnf),
                       ("rpm", "#!/bin/sh\necho 'mlnx-tools 1:25.10-0.2510017'\necho 'bash 0:5.1.8-9.el9'\n")):
        (host / "bin" / name).write_text(text)
        os.chmod(str(host / "bin" / name), 0o755)
    read = run(capsys, host, state="repository", version="3.2.2", mirror="https://mirror.example/doca")
    assert not read.get("failed"), read.get("msg")
    repo = read["repository"]
    assert repo["family"] == "dnf" and "apt_preferences" not in repo
    assert repo["versionlock"] == lib.dnf_versionlock(lib.parse_repoquery(REPOQUERY)) and len(repo["versionlock"]) == 4
    assert repo["installed"] == ["mlnx-tools"] and repo["current"] == ["mlnx-tools"]
    # the repository comes from a repository file of the module's own (--setopt=reposdir): nothing under
    # /etc/yum.repos.d is read or written
    log = (host / "dnf.log").read_text()
    assert "--setopt=reposdir=" in log and "--repo=ainet-doca-ofed-probe" in log, log
    assert "baseurl=https://mirror.example/doca/3.2.2/rhel9/x86_64/\n" in log and "username=" not in log, log

    # A mirror with a login: it goes into that file (mode 0600), never onto dnf's command line (every local user
    # reads /proc/<pid>/cmdline) nor into the result; the same with the login in the URL itself.
    for given in ({"mirror": "https://mirror.example/doca", "mirror_username": "fabric",
                   "mirror_password": "PLANTEDTOKEN"},
                  {"mirror": "https://fabric:PLANTEDTOKEN@mirror.example/doca"}):
        (host / "dnf.log").write_text("")
        read = run(capsys, host, state="repository", version="3.2.2", **given)
        assert not read.get("failed"), read.get("msg")
        log = (host / "dnf.log").read_text()
        argv = log.splitlines()[0]
        assert "PLANTEDTOKEN" not in argv and "fabric" not in argv, log
        assert "username=fabric\npassword=PLANTEDTOKEN\n" in log and "mode 600" in log, log
        assert read["repository"]["url"] == "https://mirror.example/doca/3.2.2/rhel9/x86_64/"
        assert "PLANTEDTOKEN" not in json.dumps(read), read


# -- does the installed driver load (issue 30) ------------------------------------------------------------------

def set_state(host, **changes):
    state = json.loads((host / "state.json").read_text())
    state.update(changes)
    (host / "state.json").write_text(json.dumps(state))


def with_mokutil(host, sb_state, test_key, cert="var/lib/shim-signed/mok/MOK.der"):
    """mokutil on the host, Secure Boot as ``sb_state`` prints it, DKMS's certificate present (``cert``)."""
    tool = host / "bin" / "mokutil"
    tool.write_text((host / "bin" / "dkms").read_text())
    os.chmod(str(tool), 0o755)
    set_state(host, sb_state=data("doca", "mokutil", sb_state), test_key=data("doca", "mokutil", test_key))
    if cert:
        os.makedirs(str((host / "cfg" / cert).parent), exist_ok=True)
        (host / "cfg" / cert).write_bytes(b"0\x82")


def test_debian_inbox_module_without_srcversion_is_a_pending_reboot(capsys, host):
    """Debian 12 right after the install: the kernel's own mlx5_core has neither version nor srcversion in sysfs.
    The old code saw nothing to compare and verified the node."""
    os.remove(str(host / "sys/sys/module/mlx5_core/srcversion"))
    verify = run(capsys, host, version="3.2.1")
    assert not verify.get("failed") and verify["reboot_pending"] == [
        "DOCA-OFED: the loaded mlx5_core is the kernel's own, not DOCA-OFED's: the installed driver loads at the next "
        "boot (or driver restart)"]
    assert verify["loaded"]["installed"]["filename"] == "/lib/modules/6.1.0-31-amd64/updates/dkms/mlx5_core.ko"
    # control: DOCA's module is the one loaded
    (host / "sys/sys/module/mlx5_core/version").write_text("24.10-2.1.8\n")
    (host / "sys/sys/module/mlx5_core/srcversion").write_text("DOCA2510AB\n")
    assert run(capsys, host, version="3.2.1")["reboot_pending"] == []


def test_no_mlx5_core_beside_a_connectx_fails_with_the_reason(capsys, host):
    shutil.rmtree(str(host / "sys/sys/module/mlx5_core"))
    bare = run(capsys, host, version="3.2.1")
    assert bare["failed"] and "no mlx5_core is loaded while ConnectX/BlueField devices are present (0000:3b:00.0): " \
        "no reason found here" in bare["msg"]
    os.makedirs(str(host / "cfg/etc/modprobe.d"))
    (host / "cfg/etc/modprobe.d/blacklist-ofed-modules.conf").write_text("blacklist mlx5_core\nblacklist ib_core\n")
    listed = run(capsys, host, version="3.2.1")
    assert listed["failed"] and "blacklisted in /etc/modprobe.d/blacklist-ofed-modules.conf: blacklist mlx5_core" \
        in listed["msg"]
    # control: no ConnectX on the node, nothing to load
    os.remove(str(host / "sys/sys/bus/pci/devices/0000:3b:00.0/vendor"))
    (host / "sys/sys/bus/pci/devices/0000:3b:00.0/vendor").write_text("0x8086\n")
    assert not run(capsys, host, version="3.2.1").get("failed")


def test_secure_boot_with_dkms_key_not_enrolled_fails_with_the_enrol_command(capsys, host):
    with_mokutil(host, "sb-state-enabled.txt", "test-key-not-enrolled.txt")
    verify = run(capsys, host, version="3.2.1")
    assert verify["failed"] and verify["secure_boot"] == {
        "state": "enabled", "certificate": "/var/lib/shim-signed/mok/MOK.der", "certificate_present": True,
        "key": "not_enrolled"}
    assert "DKMS's signing certificate /var/lib/shim-signed/mok/MOK.der is not enrolled: the kernel refuses " \
        "the DKMS-built driver. Fix: 'mokutil --import /var/lib/shim-signed/mok/MOK.der'" in verify["msg"]
    # ... and after that boot, with no mlx5_core at all, the reason is named
    shutil.rmtree(str(host / "sys/sys/module/mlx5_core"))
    booted = run(capsys, host, version="3.2.1")
    assert booted["failed"] and booted["msg"].startswith(
        "doca_ofed: no mlx5_core is loaded while ConnectX/BlueField devices are present (0000:3b:00.0): Secure Boot "
        "is on and DKMS's signing certificate")
    # the plan (before any install) refuses the same
    plan = run(capsys, host, state="plan", version="3.2.1")
    assert plan["failed"] and "'mokutil --import /var/lib/shim-signed/mok/MOK.der'" in plan["msg"]
    # control: a node without a ConnectX never loads the driver, so its key does not fail the verification
    (host / "sys/sys/bus/pci/devices/0000:3b:00.0/vendor").write_text("0x8086\n")
    assert not run(capsys, host, version="3.2.1").get("failed")


def test_a_signing_key_of_its_own_makes_dkms_sign_with_mok_pub_on_ubuntu(capsys, host):
    """REVIEW-30 D2: framework.conf.d sets only mok_signing_key; dkms (prepare_mok) then signs with
    /var/lib/dkms/mok.pub, not Ubuntu's MOK.der, so that is the certificate mokutil --test-key must check."""
    with_mokutil(host, "sb-state-enabled.txt", "test-key-enrolled.txt", cert="var/lib/dkms/mok.pub")
    os.makedirs(str(host / "cfg/etc/dkms/framework.conf.d"))
    (host / "cfg/etc/dkms/framework.conf.d/signing.conf").write_text(
        data("review30", "framework-signing-key-only.conf"))
    verify = run(capsys, host, version="3.2.1")
    assert verify["secure_boot"]["certificate"] == "/var/lib/dkms/mok.pub"
    assert verify["secure_boot"]["certificate_present"] and verify["secure_boot"]["key"] == "enrolled"


def test_secure_boot_with_the_key_enrolled_or_pending(capsys, host):
    with_mokutil(host, "sb-state-enabled.txt", "test-key-enrolled.txt")
    assert not run(capsys, host, state="plan", version="3.2.1").get("failed")
    verify = run(capsys, host, version="3.2.1")
    assert not verify.get("failed") and len(verify["reboot_pending"]) == 1
    with_mokutil(host, "sb-state-enabled.txt", "test-key-pending.txt")
    pending = run(capsys, host, version="3.2.1")
    assert not pending.get("failed") and any("confirm it in MokManager on the console at the next boot" in line
                                             for line in pending["reboot_pending"])
    # Secure Boot off: the key does not matter
    with_mokutil(host, "sb-state-disabled.txt", "test-key-not-enrolled.txt")
    assert not run(capsys, host, version="3.2.1").get("failed")


def test_restart_refused_under_nvidia_peermem_and_third_party_rdma(capsys, host):
    (host / "sys/proc/modules").write_text(data("doca", "proc_modules", "peermem-irdma-synthetic.txt"))
    refused = run(capsys, host, version="3.2.1", restart=True, management_addresses=["10.0.0.5"])
    assert refused["failed"] and restarts(host) == []
    assert "nvidia_peermem is in use (refcount 2)" in refused["msg"] and "(irdma)" in refused["msg"]
    (host / "sys/proc/modules").write_text(data("doca", "proc_modules", "peermem-unused-synthetic.txt"))
    unused = run(capsys, host, version="3.2.1", restart=True, management_addresses=["10.0.0.5"])
    assert unused["failed"] and "'rmmod nvidia_peermem' first" in unused["msg"] and restarts(host) == []


# -- an old stack (MLNX_OFED, DOCA before 2.6) removed before the install, only when asked ---------------------------

OLD_STANDIN = r'''
import json, os, sys
name = os.path.basename(sys.argv[0])
path = os.environ["STANDIN_STATE"]
state = json.load(open(path))
with open(os.environ["STANDIN_LOG"], "a") as h:
    h.write(name + " " + " ".join(sys.argv[1:]) + "\n")
if name == "dpkg-query":
    sys.stdout.write(state["dpkg"])
elif name == "apt-get":
    assert os.environ.get("DEBIAN_FRONTEND") == "noninteractive"
    gone = set(sys.argv[5:])
    state["dpkg"] = "".join(l + "\n" for l in state["dpkg"].splitlines() if l.split(" ")[0] not in gone)
elif name == "ofed_uninstall.sh":
    # MLNX_OFED's uninstaller: its packages and ofed_info go, itself too
    state["dpkg"] = "".join(l + "\n" for l in state["dpkg"].splitlines() if not l.startswith("mlnx-"))
    os.remove(os.path.join(os.path.dirname(os.environ["STANDIN_LOG"]), "bin", "ofed_info"))
    os.remove(sys.argv[0])
json.dump(state, open(path, "w"))
'''


@pytest.fixture
def mlnx_host(host):
    """The node of ``host`` with MLNX_OFED 24.10 instead (``ofed_info -s`` as the field host printed it, its packages
    as dpkg-query lists them) and its ofed_uninstall.sh."""
    state = json.loads((host / "state.json").read_text())
    state["ofed_info"] = data("rdma", "ofed_info", "mlnx-ofed-24.10-2.1.8.txt").strip()
    state["dpkg"] = data("doca", "packages", "dpkg-query-mlnx-ofed-23.10.txt")
    (host / "state.json").write_text(json.dumps(state))
    for name in ("dpkg-query", "apt-get"):
        (host / "bin" / name).write_text("#!%s\n%s" % (sys.executable, OLD_STANDIN))
        os.chmod(str(host / "bin" / name), 0o755)
    os.makedirs(str(host / "cfg/usr/sbin"))
    (host / "cfg/usr/sbin/ofed_uninstall.sh").write_text("#!%s\n%s" % (sys.executable, OLD_STANDIN))
    os.chmod(str(host / "cfg/usr/sbin/ofed_uninstall.sh"), 0o755)
    return host


def changes(tmp_path):
    path = tmp_path / "tools.log"
    return [line for line in path.read_text().splitlines()
            if line.split(" ")[0] in ("apt-get", "ofed_uninstall.sh")] if path.exists() else []


def test_plan_refuses_an_old_stack_without_the_opt_in(capsys, mlnx_host):
    refused = run(capsys, mlnx_host, state="plan", version="3.2.1")
    assert refused["failed"] and refused["msg"].startswith(
        "doca_ofed: MLNX_OFED_LINUX-24.10-2.1.8.0 is installed; DOCA 3.2.1 requires removing it first")
    assert "doca_ofed_replace_old_stack: true" in refused["msg"] and changes(mlnx_host) == []
    allowed = run(capsys, mlnx_host, state="plan", version="3.2.1", replace_old_stack=True,
                  management_addresses=["10.0.0.5"])
    assert not allowed.get("failed") and not allowed["changed"] and changes(mlnx_host) == []
    assert allowed["old_stack"]["commands"] == [["/usr/sbin/ofed_uninstall.sh", "--force"]]


def test_a_current_doca_is_no_old_stack(capsys, host):
    """The control: DOCA 25.10 installed (the ``host`` fixture) is upgraded in place."""
    plan = run(capsys, host, state="plan", version="3.2.1")
    assert not plan.get("failed") and plan["old_stack"] is None
    removal = run(capsys, host, state="old_stack", version="3.2.1", replace_old_stack=True)
    assert not removal["changed"] and removal["commands"] == [] and changes(host) == []


def test_the_old_stack_removed_when_asked_then_a_reboot_is_pending(capsys, mlnx_host):
    check = run(capsys, mlnx_host, check=True, state="old_stack", version="3.2.1", replace_old_stack=True,
                management_addresses=["10.0.0.5"])
    assert check["changed"] and check["commands"] == ["/usr/sbin/ofed_uninstall.sh --force"]
    assert changes(mlnx_host) == [] and (mlnx_host / "bin" / "ofed_info").exists()
    done = run(capsys, mlnx_host, state="old_stack", version="3.2.1", replace_old_stack=True,
               management_addresses=["10.0.0.5"])
    assert done["changed"] and changes(mlnx_host) == ["ofed_uninstall.sh --force"]
    assert done["reboot_pending"] == ["DOCA-OFED: MLNX_OFED_LINUX-24.10-2.1.8.0 was removed; its kernel modules stay "
                                      "loaded until the next boot"]
    again = run(capsys, mlnx_host, state="old_stack", version="3.2.1", replace_old_stack=True,
                management_addresses=["10.0.0.5"])
    assert not again["changed"] and again["old_stack"] is None and len(changes(mlnx_host)) == 1


def test_old_doca_packages_purged_first(capsys, mlnx_host):
    state = json.loads((mlnx_host / "state.json").read_text())
    state["ofed_info"] = ""
    state["dpkg"] = data("doca", "packages", "dpkg-query-doca-2.5-synthetic.txt")
    (mlnx_host / "state.json").write_text(json.dumps(state))
    done = run(capsys, mlnx_host, state="old_stack", version="3.2.1", replace_old_stack=True,
               management_addresses=["10.0.0.5"])
    assert changes(mlnx_host) == ["apt-get remove --purge -y doca-host-repo-ubuntu2204 doca-runtime doca-sdk flexio",
                                  "ofed_uninstall.sh --force"]
    assert done["changed"] and done["old_stack"]["installed"].startswith("DOCA 2.5 (doca-host-repo-ubuntu2204")


def test_the_removal_is_refused_under_rdma_users(capsys, mlnx_host):
    (mlnx_host / "sys/proc/modules").write_text("nvme_rdma 49152 2 - Live 0x0\nmlx5_core 2166784 1 - Live 0x0\n")
    storage = run(capsys, mlnx_host, state="old_stack", version="3.2.1", replace_old_stack=True,
                  management_addresses=["10.0.0.5"])
    assert storage["failed"] and "storage runs over the RDMA stack (module nvme_rdma is loaded)" in storage["msg"]
    assert changes(mlnx_host) == []
    (mlnx_host / "sys/proc/modules").write_text("mlx5_core 2166784 0 - Live 0x0\n")
    (mlnx_host / "bin" / "ip").write_text("#!/bin/sh\ncase \"$*\" in *route*) echo '%s';; *) echo '[]';; esac\n"
                                          % json.dumps([{"dst": "default", "gateway": "10.0.0.1",
                                                         "dev": "ens6f0np0"}]))
    mgmt = run(capsys, mlnx_host, state="plan", version="3.2.1", replace_old_stack=True,
               management_addresses=["10.0.0.5"])
    assert mgmt["failed"] and "the management path runs over a ConnectX port (0000:3b:00.0" in mgmt["msg"]
    assert changes(mlnx_host) == []
