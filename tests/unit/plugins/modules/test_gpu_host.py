# -*- coding: utf-8 -*-
"""gpu_host: the pure parts (GRUB files, grubby's entries, conflicts, GPU operator values) and the module in-process
against a host tree (sysfs, /proc/cmdline, /lib/modules, /etc, /boot under temporary roots) with stand-ins for
``update-grub``, ``update-initramfs`` and ``grubby`` on PATH that log their arguments (the stand-in grubby keeps its
BLS entries' arguments in a JSON file and prints ``--info=ALL`` in grubby's ``key="value"`` layout). What the boot
loader and the kernel make of it after a reboot is not proven here."""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest
from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ainet.fabric.tests.unit.plugins.modules.host_task import run_module

from ansible_collections.ainet.fabric.plugins.module_utils.host import gpu_host_state as lib

RELEASE = os.uname()[2]
STANDIN = r'''
import json, os, sys
name = os.path.basename(sys.argv[0])
with open(os.environ["STANDIN_LOG"], "a") as h:
    h.write(name + " " + " ".join(sys.argv[1:]) + "\n")
if name == "grubby":
    path = os.environ["STANDIN_BLS"]
    entries = json.load(open(path))
    if sys.argv[1] == "--info=ALL":
        for index, (kernel, args) in enumerate(sorted(entries.items())):
            print('index=%d\nkernel="%s"\nargs="%s"\nroot="/dev/mapper/rl-root"\ntitle="Rocky"' % (index, kernel,
                                                                                              " ".join(args)))
        sys.exit(0)
    for arg in sys.argv[2:]:
        key, value = arg.split("=", 1)
        for kernel in entries:
            if key == "--args":
                entries[kernel] += [a for a in value.split() if a not in entries[kernel]]
            elif key == "--remove-args":
                entries[kernel] = [a for a in entries[kernel] if a not in value.split()]
    json.dump(entries, open(path, "w"))
sys.exit(int(os.environ.get("STANDIN_RC_" + name.replace("-", "_"), "0")))
'''


# -- pure -------------------------------------------------------------------------------------------------------

def test_grub_defaults_files_are_read_by_the_shell_as_grub_mkconfig_reads_them(tmp_path):
    import subprocess
    grub = tmp_path / "grub"
    grub.write_text('GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet splash"\n'
                    'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX console=ttyS0,115200n8 \\\n  iommu=off"  # serial\n'
                    '#GRUB_CMDLINE_LINUX="intel_iommu=on"\n'
                    'export GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT nomodeset"\n')
    later = tmp_path / "90-serial.cfg"
    later.write_text('GRUB_CMDLINE_LINUX="console=ttyS1"\n')
    ours = str(tmp_path / "60-ainet-gpu-host.cfg")
    out = subprocess.run(["sh", "-c", lib.GRUB_EVAL, "sh", ours, lib.grub_dropin_text(["iommu=pt"]), str(grub), ours,
                          str(later)], capture_output=True, text=True, check=True).stdout
    steps = lib.grub_steps(out)
    assert steps[0] == (str(grub), ["console=ttyS0,115200n8", "iommu=off", "quiet", "splash", "nomodeset"])
    assert lib.token_sources(steps[:1]) == dict.fromkeys(steps[0][1], str(grub))
    assert lib.conflicts(["iommu=pt"], {"/etc/default/grub": steps[0][1]}) == [
        "/etc/default/grub sets iommu=off (wanted: iommu=pt)"]
    assert "iommu=pt" in steps[1][1]
    # 90-serial.cfg assigns the command line anew: our argument is gone after it
    assert lib.dropped_after(steps, ours, ["iommu=pt"]) == (str(later), ["iommu=pt"])
    assert lib.grub_dropin_args(lib.grub_dropin_text(["iommu=pt", "intel_iommu=on"])) == ["iommu=pt", "intel_iommu=on"]


def test_grubby_info_and_changes_never_touch_other_tools_arguments():
    info = ('index=0\nkernel="/boot/vmlinuz-5.14.0-427.el9.x86_64"\nargs="ro crashkernel=1G-4G:192M rhgb quiet"\n'
            'root="/dev/mapper/rl-root"\ninitrd="/boot/initramfs-5.14.0-427.el9.x86_64.img"\ntitle="Rocky Linux"\n'
            'index=1\nkernel="/boot/vmlinuz-0-rescue"\nargs="ro crashkernel=1G-4G:192M iommu=pt"\n')
    entries = lib.parse_grubby_info(info)
    assert entries["/boot/vmlinuz-0-rescue"] == ["ro", "crashkernel=1G-4G:192M", "iommu=pt"]
    assert lib.grubby_changes(["iommu=pt"], [], entries) == (["iommu=pt"], [], ["iommu=pt"])
    # dropped from the model: removed only because this role added it (recorded), never "quiet" or "rhgb"
    assert lib.grubby_changes(["intel_iommu=on"], ["iommu=pt"], entries) == (["intel_iommu=on"], ["iommu=pt"],
                                                                             ["intel_iommu=on"])
    assert lib.grubby_changes([], [], entries) == ([], [], [])


@pytest.mark.parametrize("bad", ["iommu pt", 'x="y"', "a=`reboot`", ""])
def test_bad_kernel_arguments_are_refused_in_one_line(bad):
    with pytest.raises(lib.GpuHostError) as info:
        lib.check_kernel_args(["iommu=pt", bad])
    assert "kernel_args[1]" in str(info.value)
    with pytest.raises(lib.GpuHostError):
        lib.check_kernel_args(["iommu=pt", "iommu=on"])


def test_gpu_operator_values_by_kernel_and_host_ofed():
    h100 = {"pci": "0000:17:00.0", "device": 0x2330, "name": None, "compute_cap": None}
    ofed = {"installed": True, "loaded": True, "evidence": "ofed_info"}
    assert lib.operator_values({"gpus": [], "rdma_nics": True})["reasons"][0]["value"] is None
    new = lib.operator_values({"gpus": [h100], "rdma_nics": True, "release": "6.8.0-45-generic"})
    assert [v["value"] for v in new["reasons"]] == ["driver.kernelModuleType=open", "driver.rdma.enabled=false"]
    old = lib.operator_values({"gpus": [h100], "rdma_nics": True, "release": "5.4.0-150-generic", "ofed": ofed,
                               "peermem_loaded": True})
    assert [v["value"] for v in old["reasons"]] == ["driver.rdma.enabled=true", "driver.rdma.useHostMofed=true", None]
    assert lib.operator_values({"gpus": [h100], "release": "6.1.0"})["values"] == {"driver.rdma.enabled": False}


# -- the module -------------------------------------------------------------------------------------------------

@pytest.fixture
def host(tmp_path, monkeypatch):
    """A Debian GPU node: one H100 (0000:17:00.0, class 0302), a ConnectX-7 (0000:3b:00.0), nouveau loaded, a kernel
    that ships nova_core, GRUB, an initramfs, booted without iommu=pt."""
    sysroot, cfg = tmp_path / "sys", tmp_path / "cfg"
    for pci, vendor, cls in (("0000:17:00.0", "0x10de", "0x030200"), ("0000:3b:00.0", "0x15b3", "0x020000"),
                             ("0000:00:1f.0", "0x8086", "0x060100")):
        dev = sysroot / "sys/bus/pci/devices" / pci
        os.makedirs(str(dev))
        (dev / "vendor").write_text(vendor + "\n")
        (dev / "class").write_text(cls + "\n")
        (dev / "device").write_text({"0x10de": "0x2330", "0x15b3": "0x1021"}.get(vendor, "0x1234") + "\n")
    os.makedirs(str(sysroot / "sys/module/nouveau"))
    os.makedirs(str(sysroot / "proc"))
    (sysroot / "proc/cmdline").write_text("BOOT_IMAGE=/boot/vmlinuz root=UUID=1 ro quiet\n")
    mods = sysroot / "lib/modules" / RELEASE
    os.makedirs(str(mods))
    (mods / "modules.dep").write_text("kernel/drivers/gpu/drm/nouveau/nouveau.ko.xz: kernel/drivers/gpu/drm/ttm.ko\n"
                                      "kernel/drivers/gpu/nova-core/nova_core.ko.xz:\n")
    os.makedirs(str(cfg / "etc/default"))
    (cfg / "etc/default/grub").write_text('GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX=""\n')
    os.makedirs(str(cfg / "boot"))
    (cfg / "boot" / ("initrd.img-%s" % RELEASE)).write_text("")
    (cfg / "etc/os-release").write_text('ID=debian\nVERSION_ID="12"\n')
    bin_dir = tmp_path / "bin"
    os.makedirs(str(bin_dir))
    for name in ("update-grub", "update-initramfs", "grubby"):
        (bin_dir / name).write_text("#!%s\n%s" % (sys.executable, STANDIN))
        os.chmod(str(bin_dir / name), 0o755)
    (tmp_path / "bls.json").write_text(json.dumps({}))
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("STANDIN_LOG", str(tmp_path / "tools.log"))
    monkeypatch.setenv("STANDIN_BLS", str(tmp_path / "bls.json"))
    return tmp_path


def run(capsys, tmp_path, check=False, **args):
    params = dict(config_root=str(tmp_path / "cfg"), sysfs_root=str(tmp_path / "sys"))
    params.update(args)
    return run_module(capsys, "gpu_host", params, check=check)


def tools(tmp_path):
    path = tmp_path / "tools.log"
    return [line.strip() for line in path.read_text().splitlines() if "--info" not in line] if path.exists() else []


def files(tmp_path):
    out = {}
    for rel in lib.OWNED:
        path = tmp_path / "cfg" / rel
        if path.exists():
            out[rel] = path.read_text()
    return out


def test_grub_host_converges_reports_pending_and_is_idempotent(capsys, host):
    check = run(capsys, host, check=True)
    assert check["changed"] and tools(host) == [] and files(host) == {}, check
    assert check["commands"] == ["write /etc/default/grub.d/60-ainet-gpu-host.cfg",
                                 "write /etc/modprobe.d/ainet-gpu-host.conf",
                                 "write /etc/security/limits.d/90-ainet-memlock.conf",
                                 "write /etc/systemd/system.conf.d/90-ainet-memlock.conf",
                                 "update-initramfs -u -k all", "update-grub"]
    first = run(capsys, host)
    assert first["changed"] and first["boot_loader"] == "grub" and first["blacklist"] == ["nouveau", "nova_core"]
    assert tools(host) == ["update-initramfs -u -k all", "update-grub"]
    written = files(host)
    assert written[lib.GRUB_DROPIN].endswith('GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX iommu=pt"\n')
    assert written[lib.BLACKLIST_FILE].endswith("blacklist nouveau\nblacklist nova_core\noptions nouveau modeset=0\n")
    assert "DefaultLimitMEMLOCK=infinity" in written[lib.SYSTEMD_FILE]
    assert first["reboot_pending"] == ["kernel argument iommu=pt: not in /proc/cmdline, set for the next boot (grub)",
                                       "nouveau is loaded; blacklisted from the next boot"]
    assert first["gpus"] == ["0000:17:00.0"] and first["headers"]["package"] == "linux-headers-%s" % RELEASE
    assert first["gpu_operator"]["reasons"][0]["value"] in ("driver.kernelModuleType=open", "driver.rdma.enabled=true")
    again = run(capsys, host)
    assert not again["changed"] and again["commands"] == [] and len(tools(host)) == 2
    # after the reboot: the argument is there, nouveau is not loaded: nothing pending
    (host / "sys/proc/cmdline").write_text("BOOT_IMAGE=/boot/vmlinuz root=UUID=1 ro quiet iommu=pt\n")
    os.rmdir(str(host / "sys/sys/module/nouveau"))
    assert run(capsys, host)["reboot_pending"] == []


def test_an_argument_grub_must_quote_converges_and_a_bad_one_changes_nothing(capsys, host):
    args = ["iommu=pt", "memmap=12G$4G"]
    first = run(capsys, host, kernel_args=args)
    assert first["changed"] and first["kernel_args"] == args
    assert files(host)[lib.GRUB_DROPIN].endswith('GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX iommu=pt '
                                                 '\'memmap=12G\\$4G\'"\n')
    again = run(capsys, host, kernel_args=args)
    assert not again["changed"] and again["commands"] == []
    # after the reboot the kernel's command line has the argument as GRUB passes it on (its quotes removed)
    (host / "sys/proc/cmdline").write_text("BOOT_IMAGE=/boot/vmlinuz root=UUID=1 ro quiet iommu=pt memmap=12G$4G\n")
    assert not [line for line in run(capsys, host, kernel_args=args)["reboot_pending"] if "kernel argument" in line]
    before = files(host)
    refused = run(capsys, host, kernel_args=["iommu=pt", "x=\"a b\""])
    assert refused["failed"] and refused["msg"].startswith("gpu_host: kernel_args[1] 'x=\"a b\"' is not one kernel")
    assert files(host) == before and len(tools(host)) == 2


def test_options_off_remove_only_the_owned_files(capsys, host):
    other = host / "cfg/etc/modprobe.d/blacklist-other.conf"
    run(capsys, host)
    other.write_text("blacklist pcspkr\n")
    result = run(capsys, host, memlock=False, kernel_args=[], blacklist=[])
    assert result["changed"] and files(host) == {} and other.read_text() == "blacklist pcspkr\n"
    assert tools(host)[-2:] == ["update-initramfs -u -k all", "update-grub"]


def test_another_files_conflicting_argument_fails_before_any_change(capsys, host, monkeypatch):
    (host / "cfg/etc/default/grub").write_text('GRUB_CMDLINE_LINUX_DEFAULT="quiet iommu=off"\n')
    result = run(capsys, host)
    assert result["failed"] and files(host) == {} and tools(host) == []
    assert result["msg"].startswith("gpu_host: /etc/default/grub sets iommu=off (wanted: iommu=pt); fix:")
    warnings = []
    monkeypatch.setattr(AnsibleModule, "warn", lambda _module, text, **_kwargs: warnings.append(text))
    warned = run(capsys, host, foreign_files="warn")
    assert not warned.get("failed") and files(host)
    assert warnings == ["gpu_host: /etc/default/grub sets iommu=off (wanted: iommu=pt)"]


def test_grubby_host_adds_removes_its_own_and_refuses_a_foreign_value(capsys, host):
    os.makedirs(str(host / "cfg/boot/loader/entries"))
    (host / "bls.json").write_text(json.dumps({"/boot/vmlinuz-%s" % RELEASE: ["ro", "crashkernel=1G-4G:192M", "rhgb"],
                                               "/boot/vmlinuz-0-rescue": ["ro"]}))
    first = run(capsys, host)
    assert first["boot_loader"] == "grubby" and lib.GRUB_DROPIN not in files(host)
    assert tools(host)[-1] == "grubby --update-kernel=ALL --args=iommu=pt"
    assert json.loads((host / "cfg" / lib.RECORD).read_text())["kernel_args"] == ["iommu=pt"]
    assert not run(capsys, host)["changed"]
    # the model changes: iommu=pt (ours) goes, intel_iommu=on comes; the other tool's arguments stay
    changed = run(capsys, host, kernel_args=["intel_iommu=on"])
    assert tools(host)[-2:] == ["grubby --update-kernel=ALL --args=intel_iommu=on",
                                "grubby --update-kernel=ALL --remove-args=iommu=pt"]
    bls = json.loads((host / "bls.json").read_text())
    assert bls["/boot/vmlinuz-%s" % RELEASE] == ["ro", "crashkernel=1G-4G:192M", "rhgb", "intel_iommu=on"]
    assert changed["changed"]
    # another tool's iommu=off on an entry is a conflict (ours would be removed, theirs never)
    bls["/boot/vmlinuz-0-rescue"].append("intel_iommu=off")
    (host / "bls.json").write_text(json.dumps(bls))
    refused = run(capsys, host, kernel_args=["intel_iommu=on"])
    assert refused["failed"] and "BLS entry /boot/vmlinuz-0-rescue sets intel_iommu=off" in refused["msg"]


def test_grubby_refuses_an_argument_grub_would_need_quoted_before_any_change(capsys, host):
    os.makedirs(str(host / "cfg/boot/loader/entries"))
    (host / "bls.json").write_text(json.dumps({"/boot/vmlinuz-%s" % RELEASE: ["ro"]}))
    refused = run(capsys, host, kernel_args=["iommu=pt", "memmap=12G$4G"])
    assert refused["failed"] and refused["msg"].startswith("gpu_host: kernel_args[1] 'memmap=12G$4G' has a character")
    assert tools(host) == [] and files(host) == {}
    assert json.loads((host / "bls.json").read_text()) == {"/boot/vmlinuz-%s" % RELEASE: ["ro"]}


def test_a_host_without_gpu_says_so_and_does_not_fail(capsys, host, monkeypatch):
    shutil.rmtree(str(host / "sys/sys/bus/pci/devices/0000:17:00.0"))
    # recorded here: where Ansible puts a module's warnings depends on what else the test process imported
    warnings = []
    monkeypatch.setattr(AnsibleModule, "warn", lambda _module, text, **_kwargs: warnings.append(text))
    result = run(capsys, host, boot_loader="none")
    assert not result.get("failed") and result["gpus"] == []
    assert result["msg"].startswith("no NVIDIA GPU on this host")
    note = "no NVIDIA GPU on this host: nothing for the GPU operator to drive here"
    assert result["gpu_operator"] == {"values": {}, "reasons": [{"value": None, "why": note, "source": None}], "gpus": []}
    # no boot loader managed: a reboot would not bring the argument, so none is pending; it is said
    assert result["cmdline_missing"] == ["iommu=pt"]
    assert result["reboot_pending"] == ["nouveau is loaded; blacklisted from the next boot"]
    assert warnings == ["gpu_host: kernel argument iommu=pt is not in /proc/cmdline and no boot loader is managed "
                        "here (boot_loader none): add it where this host's kernel command line is made"]
    assert "update-grub" not in " ".join(result["commands"])


def test_a_failing_boot_loader_update_names_the_command(capsys, host, monkeypatch):
    monkeypatch.setenv("STANDIN_RC_update_grub", "1")
    result = run(capsys, host)
    assert result["failed"] and result["msg"].startswith("gpu_host: ") and "update-grub failed (rc 1)" in result["msg"]
