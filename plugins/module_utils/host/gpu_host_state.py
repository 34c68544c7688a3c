# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ``gpu_host`` role does to a GPU node before the NVIDIA GPU operator runs there: the files it owns, the
kernel arguments it adds through the boot loader the host really uses, what waits for a reboot, and which GPU
operator values fit the host.

Pure functions; the module (``ainet.fabric.gpu_host``) reads the host, writes the files and runs the commands.

**Owned objects** (nothing else is written or removed):

- ``/etc/modprobe.d/ainet-gpu-host.conf``: ``blacklist`` lines for nouveau (and ``nova_core`` / ``nova_drm``
  where the kernel ships them) and ``options nouveau modeset=0`` (NVIDIA GPU operator troubleshooting; the
  initramfs is rebuilt after a change so the early boot honours it);
- ``/etc/default/grub.d/60-ainet-gpu-host.cfg`` on GRUB hosts (Debian, Ubuntu): appends the kernel arguments to
  ``GRUB_CMDLINE_LINUX`` (grub-mkconfig sources ``grub.d/*.cfg`` after ``/etc/default/grub``), then
  ``update-grub``; on BLS hosts with ``grubby`` (RHEL, Rocky): ``grubby --update-kernel=ALL --args=...``, and the
  arguments it added are kept in ``/var/lib/ainet-fabric/gpu_host.json`` so that one the model drops is removed
  (``--remove-args``) and no other tool's argument ever is;
- ``/etc/security/limits.d/90-ainet-memlock.conf`` (``memlock unlimited`` for login sessions) and
  ``/etc/systemd/system.conf.d/90-ainet-memlock.conf`` (``DefaultLimitMEMLOCK=infinity`` for services: RDMA
  registers memory that must stay pinned).

**Conflicts**: another file of the boot loader's configuration (``/etc/default/grub``, another
``grub.d/*.cfg``) or a current BLS entry that sets one of the wanted arguments' keys to another value
(``iommu=off`` against ``iommu=pt``) fails the run before any change, naming it.

**Reboot pending**: a wanted argument not in ``/proc/cmdline``; a blacklisted module still loaded.
"""

from __future__ import annotations

import json
import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

ROLE = "gpu_host"
BLACKLIST_FILE = "etc/modprobe.d/ainet-gpu-host.conf"
GRUB_DROPIN = "etc/default/grub.d/60-ainet-gpu-host.cfg"
LIMITS_FILE = "etc/security/limits.d/90-ainet-memlock.conf"
SYSTEMD_FILE = "etc/systemd/system.conf.d/90-ainet-memlock.conf"
OWNED = (BLACKLIST_FILE, GRUB_DROPIN, LIMITS_FILE, SYSTEMD_FILE)
RECORD = "var/lib/ainet-fabric/gpu_host.json"
GRUB_DEFAULT = "etc/default/grub"
GRUB_DIR = "etc/default/grub.d"
# nova_core (Rust Nova, kernels 6.15+) binds Turing to Ada GPUs like nouveau does: blacklisted where present.
NOVA = ("nova_core", "nova_drm")
BOOT_LOADERS = ("auto", "grub", "grubby", "none")
ARG = re.compile(r"^[A-Za-z0-9_.-]+(=[^\s\"'$`\\]+)?$")
# GPU operator facts (NVIDIA GPU operator docs, "GPUDirect RDMA"): DMA-BUF needs kernel 5.12+ with the open
# kernel modules (CUDA 11.7+, Turing or newer); the legacy nvidia-peermem needs MLNX_OFED / DOCA-OFED on the host.
DMABUF_KERNEL = (5, 12)


class GpuHostError(FabricError):
    """A refusal: one line that names what is wrong and how to fix it."""


def header():
    return "# Managed by ainet.fabric (%s); changes here are overwritten.\n" % ROLE


def check_kernel_args(args):
    """The kernel arguments, checked (one line naming the bad one); duplicates of a key are refused."""
    seen = {}
    for index, arg in enumerate(args or []):
        text = str(arg).strip()
        if not ARG.match(text):
            raise GpuHostError("gpu_host: kernel_args[%d] %r is not one kernel argument (key or key=value, no "
                               "spaces, quotes or shell characters)" % (index, arg))
        key = arg_key(text)
        if key in seen:
            raise GpuHostError("gpu_host: kernel_args names %s twice (%s and %s)" % (key, seen[key], text))
        seen[key] = text
    return list(seen.values())


def arg_key(arg):
    return arg.split("=", 1)[0]


MODULE_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def check_blacklist(modules):
    """The module names, checked (one line naming a bad one): a name, never a modprobe directive."""
    out = []
    for index, name in enumerate(modules or []):
        text = str(name).strip()
        if not MODULE_NAME.match(text):
            raise GpuHostError("gpu_host: blacklist[%d] %r is not a kernel module name (letters, digits, '_', '-')"
                               % (index, name))
        if text not in out:
            out.append(text)
    return out


# grub-mkconfig sources /etc/default/grub, then (Debian's grub, and every distribution that took the patch)
# /etc/default/grub.d/*.cfg in order, as shell: the files are read the same way, and the command line after each
# is printed (NUL-separated: file, GRUB_CMDLINE_LINUX, GRUB_CMDLINE_LINUX_DEFAULT). At our own file's place the
# drop-in this run would write is evaluated instead ("" leaves it out).
GRUB_EVAL = r"""ours=$1; shift; dropin=$1; shift
for f in "$@"; do
  if [ "$f" = "$ours" ]; then eval "$dropin"; else . "$f" || exit 3; fi
  printf '%s\0%s\0%s\0' "$f" "$GRUB_CMDLINE_LINUX" "$GRUB_CMDLINE_LINUX_DEFAULT"
done
"""


def grub_steps(output):
    """``GRUB_EVAL``'s output -> [(file, [tokens of both variables])], in sourcing order."""
    fields = output.split("\0")
    steps = []
    for index in range(0, len(fields) - 2, 3):
        steps.append((fields[index], (fields[index + 1] + " " + fields[index + 2]).split()))
    return steps


def token_sources(steps):
    """{token: the file whose sourcing put it on the final command line}."""
    origin = {}
    for path, tokens in steps:
        present = set(tokens)
        for token in list(origin):
            if token not in present:
                del origin[token]
        for token in tokens:
            origin.setdefault(token, path)
    return origin


def dropped_after(steps, ours, wanted):
    """``(file, [arguments])``: the first file sourced after ``ours`` that takes wanted arguments off the command
    line again (it assigns GRUB_CMDLINE_LINUX without ``$GRUB_CMDLINE_LINUX``), or None."""
    seen_ours = False
    for path, tokens in steps:
        if path == ours:
            seen_ours = True
            continue
        if seen_ours:
            lost = [arg for arg in wanted if arg not in tokens]
            if lost:
                return path, lost
    return None


def read_grub_record(text):
    """The record: ``{"kernel_args": [added by this role through grubby], "removed": [dropped, maybe still
    running], "pending": [[argv] not yet run successfully]}``."""
    try:
        data = json.loads(text or "{}")
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    out = {}
    for key in ("kernel_args", "removed"):
        value = data.get(key)
        out[key] = [str(v) for v in value] if isinstance(value, list) else []
    pending = data.get("pending")
    out["pending"] = [[str(a) for a in argv] for argv in pending if isinstance(argv, list)] \
        if isinstance(pending, list) else []
    return out


def record_text(record):
    return json.dumps(record, indent=1, sort_keys=True) + "\n"


def blacklist_text(modules):
    lines = [header()]
    for module in modules:
        lines.append("blacklist %s\n" % module)
    if "nouveau" in modules:
        lines.append("options nouveau modeset=0\n")
    return "".join(lines)


def grub_dropin_text(args):
    return header() + 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX %s"\n' % " ".join(args)


def grub_dropin_args(text):
    """The arguments our own drop-in adds (its last ``GRUB_CMDLINE_LINUX`` line, as :func:`grub_dropin_text`
    writes it); [] for none."""
    for line in reversed((text or "").splitlines()):
        if line.startswith('GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX '):
            return line.split(" ", 1)[1].rstrip('"').split()
    return []


def limits_text():
    return header() + "* soft memlock unlimited\n* hard memlock unlimited\n"


def systemd_text():
    return header() + "[Manager]\nDefaultLimitMEMLOCK=infinity\n"


def files(blacklist, kernel_args, boot_loader, memlock):
    """The owned files the host should have: {rel: (content, mode)}."""
    out = {}
    if blacklist:
        out[BLACKLIST_FILE] = (blacklist_text(blacklist), "0644")
    if boot_loader == "grub" and kernel_args:
        out[GRUB_DROPIN] = (grub_dropin_text(kernel_args), "0644")
    if memlock:
        out[LIMITS_FILE] = (limits_text(), "0644")
        out[SYSTEMD_FILE] = (systemd_text(), "0644")
    return out


def owned(rel):
    return rel in OWNED


def scan_dirs():
    return sorted(set(rel.rsplit("/", 1)[0] for rel in OWNED))


def conflicts(wanted, sources):
    """One line per other source that sets a wanted argument's key to another value. ``sources``: {where:
    [tokens]} (a GRUB file's arguments, a BLS entry's)."""
    keys = dict((arg_key(arg), arg) for arg in wanted)
    found = []
    for where, tokens in sorted(sources.items()):
        for token in tokens:
            key = arg_key(token)
            if key in keys and token != keys[key]:
                found.append("%s sets %s (wanted: %s)" % (where, token, keys[key]))
    return found


def missing_in_cmdline(wanted, cmdline):
    """The wanted arguments the running kernel did not boot with."""
    running = set((cmdline or "").split())
    return [arg for arg in wanted if arg not in running]


def grubby_changes(wanted, recorded, entries):
    """``(add, remove, owned)`` for grubby: ``add`` the wanted arguments some BLS entry lacks; ``remove`` those this
    role added before (``recorded``) that the model no longer wants and an entry still has; ``owned``: the wanted
    arguments this role added (before or now), the record's new ``kernel_args`` - an argument every entry had from
    another tool is never recorded, so never removed. ``entries``: {kernel: [tokens]} from ``grubby --info=ALL``."""
    add = [arg for arg in wanted if any(arg not in tokens for tokens in entries.values())]
    stale = [arg for arg in recorded if arg not in wanted]
    remove = [arg for arg in stale if any(arg in tokens for tokens in entries.values())]
    owned = [arg for arg in wanted if arg in recorded or arg in add]
    return add, remove, owned


def parse_grubby_info(text):
    """``grubby --info=ALL`` -> {kernel: [argument tokens]}."""
    entries, kernel = {}, None
    for line in (text or "").splitlines():
        if line.startswith("kernel="):
            kernel = line.split("=", 1)[1].strip().strip('"')
            entries.setdefault(kernel, [])
        elif line.startswith("args=") and kernel is not None:
            entries[kernel] = line.split("=", 1)[1].strip().strip('"').split()
    return entries


def kernel_version(release):
    """(major, minor) of a kernel release string such as ``6.1.0-28-amd64``; (0, 0) when unreadable."""
    match = re.match(r"^(\d+)\.(\d+)", release or "")
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def operator_values(gpus, rdma_nics, host_ofed, release, peermem_loaded):
    """Which NVIDIA GPU operator Helm values fit this host, each with its reason: ``[{"value", "why"}]``."""
    if not gpus:
        return [{"value": None, "why": "no NVIDIA GPU on this host: nothing for the GPU operator to drive here"}]
    out = []
    if not rdma_nics:
        out.append({"value": "driver.rdma.enabled=false",
                    "why": "no NVIDIA/Mellanox RDMA NIC on this host: GPUDirect RDMA has nothing to pair with"})
        return out
    if kernel_version(release) >= DMABUF_KERNEL:
        out.append({"value": "driver.kernelModuleType=open",
                    "why": "kernel %s has DMA-BUF (5.12+): GPUDirect RDMA through DMA-BUF needs the open kernel "
                           "modules (and CUDA 11.7+, a Turing or newer GPU), no nvidia-peermem" % release})
        out.append({"value": "driver.rdma.enabled=false",
                    "why": "DMA-BUF is the recommended path; set it true only for the legacy nvidia-peermem"})
    else:
        out.append({"value": "driver.rdma.enabled=true",
                    "why": "kernel %s predates DMA-BUF (5.12): GPUDirect RDMA needs the legacy nvidia-peermem"
                           % release})
        out.append({"value": "driver.rdma.useHostMofed=%s" % ("true" if host_ofed else "false"),
                    "why": ("MLNX_OFED / DOCA-OFED is loaded on the host (mlx5_core's module version)"
                            if host_ofed else "no host MLNX_OFED / DOCA-OFED is loaded: nvidia-peermem then needs "
                            "the network operator's driver container, or install DOCA-OFED (doca_ofed)")})
    if peermem_loaded:
        out.append({"value": None, "why": "nvidia_peermem is loaded already (by the host driver or a previous "
                                          "operator install)"})
    return out
