#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: gpu_host
short_description: Prepare a GPU node for the NVIDIA GPU operator (nouveau, IOMMU kernel arguments, memlock)
version_added: 0.2.0
author: ainet.fabric contributors (@ainet)
description:
  - Blacklists nouveau (and C(nova_core), C(nova_drm) where the running kernel ships them) with
    C(options nouveau modeset=0) in C(/etc/modprobe.d/ainet-gpu-host.conf), and rebuilds the initramfs when that
    file changes (C(update-initramfs -u -k all) or C(dracut -f --regenerate-all)).
  - Adds O(kernel_args) (IOMMU pass-through for GPUDirect RDMA by default) through the boot loader the host uses -
    a GRUB drop-in C(/etc/default/grub.d/60-ainet-gpu-host.cfg) and C(update-grub) on Debian and Ubuntu, or
    C(grubby --update-kernel=ALL --args) on BLS hosts (RHEL, Rocky), remembering the arguments it added so that
    one dropped from O(kernel_args) is removed and no other tool's argument ever is. Another boot loader file or
    entry that sets one of the keys to another value fails the run before any change, naming it.
  - Sets memlock unlimited for login sessions (C(/etc/security/limits.d/90-ainet-memlock.conf)) and services
    (C(/etc/systemd/system.conf.d/90-ainet-memlock.conf), then C(systemctl daemon-reexec)).
  - Reports a pending reboot for every argument not in C(/proc/cmdline) (with O(boot_loader=none) a warning, as a
    reboot would not bring it) and every blacklisted module still loaded (never reboots), the kernel headers
    package the running kernel needs, the GPUs found, and which NVIDIA GPU operator values fit this host, each with
    its reason (C(driver.enabled) for a driver installed on the host, C(driver.kernelModuleType) by GPU generation,
    C(driver.rdma.enabled), C(driver.rdma.useHostMofed) by kernel, host MLNX_OFED / DOCA-OFED and O(rdma_legacy)).
    A host without an NVIDIA GPU gets the same settings and says so; it does not fail.
  - Reports C(containerd) and C(kubelet) processes whose C(Max locked memory) (C(/proc/<pid>/limits)) is not
    unlimited in RV(restart_pending) (a running service keeps the limit it started with); restarts them only with
    O(restart_services).
  - Owns only the files above and the record C(/var/lib/ainet-fabric/gpu_host.json); an option turned off removes
    its file.
extends_documentation_fragment:
  - ainet.fabric.host.roots
options:
  kernel_args:
    description:
      - Kernel arguments every boot must have (key or key=value); an empty list adds none.
      - A key is letters, digits, C(_), C(.), C(-); a value printable ASCII without spaces, quotes, backslash or
        backquote (which GRUB or the kernel would not pass on literally). An argument with a character GRUB's script
        lexer reads as syntax (C({}|&$;<>*?[]#)) is written inside GRUB single quotes, and refused on BLS hosts
        (C(grubby) cannot quote it).
    type: list
    elements: str
    default: [iommu=pt]
  blacklist:
    description:
      - Kernel modules that must not load. C(nova_core) and C(nova_drm) are added where the running kernel ships
        them when the list holds C(nouveau).
    type: list
    elements: str
    default: [nouveau]
  memlock:
    description: Unlimited locked memory for login sessions and services (RDMA pins registered memory).
    type: bool
    default: true
  boot_loader:
    description:
      - How kernel arguments reach the next boot. V(auto) takes C(grubby) where BLS entries exist
        (C(/boot/loader/entries)) and it is installed, else GRUB where C(/etc/default/grub) exists; V(none) sets no
        argument (an image-based or directly booted host) and only reports what C(/proc/cmdline) lacks.
    type: str
    choices: [auto, grub, grubby, none]
    default: auto
  initramfs:
    description: V(auto) rebuilds the initramfs when the blacklist file changed; V(never) does not.
    type: str
    choices: [auto, never]
    default: auto
  foreign_files:
    description: What to do about another boot loader file or entry that sets a wanted key to another value.
    type: str
    choices: [fail, warn]
    default: fail
  rdma_legacy:
    description:
      - Ask for the legacy C(nvidia-peermem) GPUDirect RDMA path (C(driver.rdma.enabled=true)) even where DMA-BUF is
        possible (Turing or later, kernel 5.12+). Only changes the GPU operator values reported.
    type: bool
    default: false
  restart_services:
    description:
      - With O(memlock), restart C(containerd.service) and C(kubelet.service) when their running process has a
        locked-memory limit other than unlimited (after C(systemctl daemon-reexec)). Off, they are only reported in
        RV(restart_pending).
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reads the host and reports what it would write, remove and run.
  diff_mode:
    support: full
    description: Shows the owned files before and after.
requirements:
  - C(update-grub) or C(grub-mkconfig) (GRUB), or C(grubby) (BLS); C(update-initramfs) or C(dracut)
"""

EXAMPLES = r"""
- name: GPU operator prerequisites with the defaults (nouveau off, iommu=pt, memlock)
  ainet.fabric.gpu_host:

- name: Intel IOMMU on and pass-through, without touching memlock
  ainet.fabric.gpu_host:
    kernel_args: [intel_iommu=on, iommu=pt]
    memlock: false
"""

RETURN = r"""
gpus:
  description: The NVIDIA GPUs (PCI display or 3D controllers of vendor 10de) found, by PCI address.
  returned: always
  type: list
  elements: str
boot_loader:
  description: The boot loader the kernel arguments go through (C(grub), C(grubby) or C(none)).
  returned: always
  type: str
kernel_args:
  description: The kernel arguments wanted.
  returned: always
  type: list
  elements: str
blacklist:
  description: The modules blacklisted (the option, with C(nova_core)/C(nova_drm) where the kernel has them).
  returned: always
  type: list
  elements: str
headers:
  description: The running kernel's headers (DKMS and the GPU driver build against them).
  returned: always
  type: dict
  contains:
    release:
      description: The running kernel release.
      type: str
    present:
      description: Whether C(/lib/modules/<release>/build) exists.
      type: bool
    package:
      description: The distribution package that holds them (null where the distribution is not known).
      type: str
gpu_operator:
  description: GPU operator Helm values that fit this host, and why.
  returned: always
  type: dict
  contains:
    values:
      description: Helm key (C(driver.kernelModuleType)) to value, for C(helm --set).
      type: dict
    reasons:
      description: One entry per value the node forced (C(value) V(key=value)) or note (C(value) null), with C(why)
        and the vendor C(source).
      type: list
      elements: dict
    gpus:
      description: The GPUs read (C(pci), C(device) id, C(name) and C(compute_cap) from nvidia-smi where it runs).
      type: list
      elements: dict
restart_pending:
  description: Running services whose locked-memory limit differs from the one the role set, to restart.
  returned: always
  type: list
  elements: str
commands:
  description: The commands run (or, in check mode, that would run), in order.
  returned: always
  type: list
  elements: str
cmdline_missing:
  description: The wanted kernel arguments the running kernel did not boot with.
  returned: always
  type: list
  elements: str
reboot_pending:
  description: Why a reboot is due before the node is as wanted (empty when none).
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_load as load
from ansible_collections.ainet.fabric.plugins.module_utils.host import gpu_host_state as lib
from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import (
    file_changes, read_text, remove, unwritable, write_atomic,
)
from ansible_collections.ainet.fabric.plugins.module_utils.host.runner import (
    VENDOR_MELLANOX, VENDOR_NVIDIA, Runner, one_line,
)

GPU_CLASSES = ("0x0300", "0x0302")  # VGA-compatible and 3D controllers


class Host(object):
    """Reads what the module needs through a :class:`Runner` (sysfs, /proc, /lib/modules, /boot, /etc)."""

    def __init__(self, runner):
        self.runner = runner
        self.release = os.uname()[2]

    def kernel_has(self, module):
        """Whether the running kernel ships ``module``: a line of depmod's ``modules.dep`` (or ``modules.builtin``)
        names its .ko, possibly compressed (``kernel/drivers/gpu/nova-core/nova_core.ko.xz: ...``)."""
        for name in ("modules.dep", "modules.builtin"):
            text = read_text(self.runner.sys("/lib/modules/%s/%s" % (self.release, name))) or ""
            for line in text.splitlines():
                path = line.split(":", 1)[0]
                if os.path.basename(path).split(".ko", 1)[0].replace("-", "_") == module:
                    return True
        return False

    def loaded(self, module):
        return os.path.isdir(self.runner.sys("/sys/module/%s" % module))

    def boot_loader(self, wanted):
        if wanted != "auto":
            return wanted
        if self.runner.bin("grubby") and os.path.isdir(self.runner.conf("/boot/loader/entries")):
            return "grubby"
        if os.path.isfile(self.runner.conf("/" + lib.GRUB_DEFAULT)):
            return "grub"
        return "none"

    def grub_files(self):
        """The GRUB defaults files grub-mkconfig sources, in its order (absolute paths on this host, ours included
        at its place whether it exists or not)."""
        paths = [self.runner.conf("/" + lib.GRUB_DEFAULT)]
        directory = self.runner.conf("/" + lib.GRUB_DIR)
        names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
        ours = os.path.basename(lib.GRUB_DROPIN)
        names = sorted(set([n for n in names if n.endswith(".cfg")] + [ours]))
        return paths + [os.path.join(directory, n) for n in names]

    def grub_eval(self, dropin):
        """[(file, tokens)]: the kernel command line after each GRUB defaults file, as the shell sources them, with
        ``dropin`` (the text this run would write, "" for none) in our file's place."""
        files = [f for f in self.grub_files() if os.path.isfile(f) or f == self.runner.conf("/" + lib.GRUB_DROPIN)]
        ours = self.runner.conf("/" + lib.GRUB_DROPIN)
        rc, out, err = self.runner.run(["/bin/sh", "-c", lib.GRUB_EVAL, "sh", ours, dropin] + files, check=False)
        if rc != 0:
            raise lib.GpuHostError("gpu_host: reading the GRUB defaults as grub-mkconfig does (sourcing %s) failed "
                                   "(rc %d): %s" % (", ".join(self.shown(f) for f in files), rc,
                                                    one_line(err or out, 200)))
        return [(self.shown(path), tokens) for path, tokens in lib.grub_steps(out)]

    def shown(self, path):
        """A path under config_root as the host sees it."""
        return "/" + os.path.relpath(path, self.runner.conf("/"))

    def grub_reads_drop_ins(self):
        """Whether this GRUB's grub-mkconfig sources /etc/default/grub.d (Debian's patch; upstream, Fedora and SUSE
        read /etc/default/grub only). True where the script cannot be found (update-grub alone)."""
        for name in ("grub-mkconfig", "grub2-mkconfig"):
            path = self.runner.bin(name)
            if path:
                text = read_text(path)
                return text is None or "default/grub.d" in text
        return True

    def grub_update_argv(self):
        if self.runner.bin("update-grub"):
            return ["update-grub"]
        tool = next((name for name in ("grub-mkconfig", "grub2-mkconfig") if self.runner.bin(name)), None)
        if not tool:
            raise lib.GpuHostError("gpu_host: the host boots with GRUB but neither update-grub nor grub-mkconfig is "
                                   "installed; install grub2-common, or set gpu_host_boot_loader: none")
        for cfg in ("/boot/grub/grub.cfg", "/boot/grub2/grub.cfg"):
            if os.path.isfile(self.runner.conf(cfg)):
                return [tool, "-o", cfg]
        return [tool, "-o", "/boot/grub/grub.cfg"]

    def grubby_entries(self):
        _rc, out, _err = self.runner.run(["grubby", "--info=ALL"])
        return lib.parse_grubby_info(out)

    def initramfs_argv(self):
        for image, rebuild in (("/boot/initrd.img-%s" % self.release, ["update-initramfs", "-u", "-k", "all"]),
                               ("/boot/initramfs-%s.img" % self.release, ["dracut", "-f", "--regenerate-all"])):
            if os.path.exists(self.runner.conf(image)) and self.runner.bin(rebuild[0]):
                return rebuild
        return None

    def headers(self):
        return self.runner.kernel_headers()

    def gpus(self, addresses):
        """The GPUs at ``addresses``: ``{"pci", "device" (sysfs id), "name", "compute_cap"}``; the names and compute
        capabilities from ``nvidia-smi --query-gpu=name,compute_cap`` where it runs (one row per GPU, in PCI order)."""
        gpus = []
        for pci in addresses:
            device = self.runner.read_sys("/sys/bus/pci/devices/%s/device" % pci)
            try:
                device = int(device, 16)
            except (TypeError, ValueError):
                device = None
            gpus.append({"pci": pci, "device": device, "name": None, "compute_cap": None})
        rows = None
        if gpus and self.runner.bin("nvidia-smi") and self.loaded("nvidia"):
            rc, out, _err = self.runner.run(list(lib.GPU_QUERY), check=False)
            rows = lib.parse_gpu_query(out) if rc == 0 else None
        if rows and len(rows) == len(gpus):
            for gpu, (name, cap) in zip(gpus, rows):
                gpu.update(name=name, compute_cap=list(cap) if cap else None)
        return gpus

    def host_driver(self):
        """A driver installed on the host, as the GPU operator's validator finds it: an executable nvidia-smi at one of
        its paths under the host root; ``loaded`` (/proc/driver/nvidia/version) and its ``version``."""
        smi = next((path for path in lib.VALIDATOR_SMI_PATHS
                    if os.path.isfile(self.runner.conf(path)) and os.access(self.runner.conf(path), os.X_OK)
                    and os.path.getsize(self.runner.conf(path)) > 0), None)
        text = self.runner.read_sys("/proc/driver/nvidia/version")
        return {"smi": smi, "loaded": text is not None or self.loaded("nvidia"),
                "version": lib.parse_driver_version(text)}

    def ofed(self):
        """MLNX_OFED / DOCA-OFED on the host: ``installed`` (ofed_info, or the /usr/src/ofa_kernel sources the
        operator's nvidia-peermem build uses), ``loaded`` (the loaded mlx5_core is DOCA's, :func:`doca_ofed_load.loaded_origin`: the in-box driver has
        none), ``evidence``."""
        found = [what for what, there in (("ofed_info", self.runner.bin("ofed_info")),
                                          ("/usr/src/ofa_kernel", os.path.isdir(self.runner.conf("/usr/src/ofa_kernel"))))
                 if there]
        mlx5 = load.read_loaded_mlx5_core(self.runner.read_sys, lambda path: os.path.isdir(self.runner.sys(path)))
        loaded = load.loaded_origin(mlx5["present"], mlx5["version"]) == "ofed"
        return {"installed": bool(found), "loaded": loaded, "evidence": ", ".join(found) or None}

    def sees_running_services(self):
        """Whether the services in /proc read the files written here: the host itself (config_root /), or a test
        tree (sysfs_root not /); never an image built under another config_root on a running host."""
        return self.runner.config_root == "/" or self.runner.sysfs_root != "/"

    def memlock_services(self):
        """Running containerd / kubelet processes: ``[{"comm", "pid", "unit", "limits": (soft, hard) or None}]``."""
        units = dict(lib.MEMLOCK_SERVICES)
        base = self.runner.sys("/proc")
        found = []
        for pid in sorted((n for n in (os.listdir(base) if os.path.isdir(base) else []) if n.isdigit()), key=int):
            comm = self.runner.read_sys("/proc/%s/comm" % pid)
            if comm in units:
                found.append({"comm": comm, "pid": int(pid), "unit": units[comm],
                              "limits": lib.parse_limits(self.runner.read_sys("/proc/%s/limits" % pid))})
        return found


def run_module():
    module = AnsibleModule(
        argument_spec=dict(
            kernel_args=dict(type="list", elements="str", default=["iommu=pt"]),
            blacklist=dict(type="list", elements="str", default=["nouveau"]),
            memlock=dict(type="bool", default=True),
            boot_loader=dict(type="str", choices=list(lib.BOOT_LOADERS), default="auto"),
            initramfs=dict(type="str", choices=["auto", "never"], default="auto"),
            foreign_files=dict(type="str", choices=["fail", "warn"], default="fail"),
            rdma_legacy=dict(type="bool", default=False),
            restart_services=dict(type="bool", default=False),
            config_root=dict(type="path", default="/"),
            sysfs_root=dict(type="path", default="/"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    root = params["config_root"]
    result = {"changed": False, "gpus": [], "boot_loader": None, "kernel_args": [], "blacklist": [], "headers": {},
              "gpu_operator": {}, "commands": [], "cmdline_missing": [], "reboot_pending": [],
              "restart_pending": []}
    try:
        runner = Runner(module, params["sysfs_root"], root, error=lib.GpuHostError)
        host = Host(runner)
        args = lib.check_kernel_args(params["kernel_args"])
        blacklist = lib.check_blacklist(params["blacklist"])
        if "nouveau" in blacklist:
            blacklist += [m for m in lib.NOVA if m not in blacklist and host.kernel_has(m)]
        loader = host.boot_loader(params["boot_loader"])
        if loader == "grubby":
            lib.check_grubby_args(args)
        result.update(kernel_args=args, blacklist=blacklist, boot_loader=loader, headers=host.headers())
        cmdline = runner.read_sys("/proc/cmdline")

        record_path = os.path.join(root, lib.RECORD)
        record_before = read_text(record_path)
        record = lib.read_grub_record(record_before)
        dropin_path = os.path.join(root, lib.GRUB_DROPIN)
        # what this role put on the command line before this run: the drop-in's arguments, or grubby's record
        before = (lib.grub_dropin_args(read_text(dropin_path)) if loader == "grub" else list(record["kernel_args"]))

        # Conflicts first: nothing changes when another tool's boot configuration disagrees.
        entries, owned = {}, []
        if loader == "grub":
            if args and not host.grub_reads_drop_ins():
                raise lib.GpuHostError(
                    "gpu_host: this host's grub-mkconfig does not read /etc/default/grub.d (only Debian's GRUB "
                    "does), so a drop-in would never reach the kernel; fix: set gpu_host_boot_loader: none and add "
                    "%s where this host's kernel command line is made" % " ".join(args))
            theirs = lib.token_sources(host.grub_eval(""))
            sources = {}
            for token, path in theirs.items():
                sources.setdefault(path, []).append(token)
            if args:
                lost = lib.dropped_after(host.grub_eval(lib.grub_dropin_text(args)), host.shown(dropin_path), args)
                if lost:
                    raise lib.GpuHostError(
                        "gpu_host: %s is read after %s and sets the kernel command line anew, so %s would never reach "
                        "the kernel; fix: make it append (GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX ...\"), or add "
                        "the arguments there" % (lost[0], "/" + lib.GRUB_DROPIN, " ".join(lost[1])))
        else:
            entries = host.grubby_entries() if loader == "grubby" else {}
            mine = set(record["kernel_args"])
            sources = dict(("BLS entry %s" % kernel, [t for t in tokens if t not in mine])
                           for kernel, tokens in entries.items())
        found = lib.conflicts(args, sources)
        if found and params["foreign_files"] == "fail":
            raise lib.GpuHostError("gpu_host: %s; fix: remove those arguments, or change gpu_host_kernel_args "
                                   "(gpu_host_foreign_files: warn goes on)" % "; ".join(found))
        for line in found:
            module.warn("gpu_host: %s" % line)

        wanted = lib.files(blacklist, args, loader, params["memlock"])
        writes, removals, diffs = file_changes(root, wanted, lib.owned, lib.scan_dirs())
        add, drop = [], []
        if loader == "grubby":
            add, drop, owned = lib.grubby_changes(args, record["kernel_args"], entries)
        steps = [list(argv) for argv in record["pending"]]  # a step that failed in an earlier run is run again

        def step(argv):
            if argv not in steps:
                steps.append(argv)

        for path in sorted(writes):
            result["commands"].append("write %s" % host.shown(path))
        for path in removals:
            result["commands"].append("remove %s" % host.shown(path))
        blacklist_path = os.path.join(root, lib.BLACKLIST_FILE)
        if (blacklist_path in writes or blacklist_path in removals) and params["initramfs"] == "auto":
            argv = host.initramfs_argv()
            if argv:
                step(argv)
        if loader == "grub" and (dropin_path in writes or dropin_path in removals):
            step(host.grub_update_argv())
        if add:
            step(["grubby", "--update-kernel=ALL", "--args=%s" % " ".join(add)])
        if drop:
            step(["grubby", "--update-kernel=ALL", "--remove-args=%s" % " ".join(drop)])
        systemd_path = os.path.join(root, lib.SYSTEMD_FILE)
        if (systemd_path in writes or systemd_path in removals) and root == "/" and \
                os.path.isdir("/run/systemd/system") and runner.bin("systemctl"):
            step(["systemctl", "daemon-reexec"])
        result["commands"] += [" ".join(argv) for argv in steps]
        # memlock of running services: read before any change, restarted (opt-in) after daemon-reexec
        services = host.memlock_services() if params["memlock"] and host.sees_running_services() else []
        pending = lib.restart_pending(services)
        restarts = [["systemctl", "restart", proc["unit"]] for proc in services if lib.restart_pending([proc])]
        restarts = [argv for i, argv in enumerate(restarts) if argv not in restarts[:i]]
        if params["restart_services"] and restarts:
            result["commands"] += [" ".join(argv) for argv in restarts]
        # Arguments this role took off that the running kernel still has: pending until a boot without them.
        removed = [arg for arg in before + record["removed"] if arg not in args]
        removed = [arg for i, arg in enumerate(removed) if arg not in removed[:i] and arg in (cmdline or "").split()]
        final = {"kernel_args": owned, "removed": removed, "pending": []}
        record_after = lib.record_text(final) if (record_before is not None or owned or removed or steps) else None
        result["changed"] = bool(result["commands"]) or record_after != record_before and record_after is not None
        if module._diff:
            result["diff"] = diffs

        problems = unwritable(list(writes) + removals + ([record_path] if record_after else []))
        if problems:  # in check mode too: the real run would fail here, before any change
            raise lib.GpuHostError("gpu_host: cannot write %s" % "; ".join(problems))
        if not module.check_mode:
            if steps:  # remembered until they all succeed: a failed step is run again by the next run
                write_atomic(record_path, lib.record_text(dict(final, pending=steps)), "0644", state=True)
            for path, (content, mode) in sorted(writes.items()):
                write_atomic(path, content, mode)
            remove(removals)
            for argv in steps:
                rc, out, err = runner.run(argv, check=False)
                if rc != 0:
                    raise lib.GpuHostError("gpu_host: %s failed (rc %d): %s"
                                           % (" ".join(argv), rc, " ".join((err or out).split())[-300:]))
            if record_after is not None and (steps or record_after != record_before):
                write_atomic(record_path, record_after, "0644", state=True)
            if params["restart_services"] and restarts:
                for argv in restarts:
                    runner.run(argv)
                pending = lib.restart_pending(host.memlock_services())  # read back: a unit's own limit stays
        result["restart_pending"] = pending
        for arg in removed:
            result["reboot_pending"].append("kernel argument %s: taken off for the next boot, still in /proc/cmdline"
                                            % arg)

        result["cmdline_missing"] = lib.missing_in_cmdline(args, cmdline)
        for arg in result["cmdline_missing"]:
            if loader == "none":
                # a reboot would not bring it: say so, and leave the reboot to what makes the command line
                module.warn("gpu_host: kernel argument %s is not in /proc/cmdline and no boot loader is managed "
                            "here (boot_loader none): add it where this host's kernel command line is made" % arg)
            else:
                result["reboot_pending"].append("kernel argument %s: not in /proc/cmdline, set for the next boot "
                                                "(%s)" % (arg, loader))
        for name in blacklist:
            if host.loaded(name):
                result["reboot_pending"].append("%s is loaded; blacklisted from the next boot" % name)

        devices = runner.pci_devices()
        result["gpus"] = [pci for pci, (vendor, cls) in devices.items()
                          if vendor == VENDOR_NVIDIA and cls.startswith(GPU_CLASSES)]
        rdma_nics = [pci for pci, (vendor, _cls) in devices.items() if vendor == VENDOR_MELLANOX]
        gpus = host.gpus(result["gpus"])
        result["gpu_operator"] = lib.operator_values({
            "gpus": gpus, "rdma_nics": bool(rdma_nics), "release": host.release, "host_driver": host.host_driver(),
            "ofed": host.ofed(), "peermem_loaded": host.loaded("nvidia_peermem"), "legacy": params["rdma_legacy"]})
        result["gpu_operator"]["gpus"] = gpus
        if not result["gpus"]:
            result["msg"] = "no NVIDIA GPU on this host: the host settings are applied, the GPU checks are skipped"
    except FabricError as exc:
        module.fail_json(msg=str(exc), **result)
    except OSError as exc:
        module.fail_json(msg="gpu_host: %s: %s" % (exc.filename or "", exc.strerror or one_line(str(exc))), **result)
    module.exit_json(**result)


def main():
    run_module()


if __name__ == "__main__":
    main()
