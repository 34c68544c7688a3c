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
# A kernel argument passes three parsers on its way to the kernel, and each must take it literally:
# - sh: grub-mkconfig sources the drop-in (``GRUB_CMDLINE_LINUX="..."``): inside double quotes ``$``, backquote,
#   ``"`` and backslash are special; ``$`` is escaped there (:func:`sh_double_quoted`), the others are refused;
# - GRUB's script lexer (grub-core/script/yylex.l): 10_linux copies the variable unquoted onto the ``linux`` line,
#   where a word is made of ``[^{}|&$;<> \t\n'"\\]`` and ``;`` ``|`` ``&`` ``<`` ``>`` ``{`` ``}`` end it, ``$``
#   expands a variable, ``'`` and ``"`` quote, backslash escapes, ``#`` at a word's start comments the rest out, and
#   ``*`` ``?`` ``[`` are wildcards (commands/wildcard.c) in an unquoted word: such an argument is written inside
#   GRUB single quotes (literal up to the next ``'``: :func:`grub_word`); GRUB's loader (grub-core/lib/cmdline.c
#   grub_create_loader_cmdline) then puts a backslash before ``\``, ``'`` and ``"`` and double quotes around an
#   argument with a space, which the kernel does not undo: those are refused;
# - the kernel (lib/cmdline.c next_arg): whitespace separates arguments, ``"`` toggles quoting, the first ``=`` ends
#   the parameter's name, and ``--`` hands everything after it to init: a name is letters, digits, ``_``, ``.``,
#   ``-``, never starting with ``-``.
# So: printable ASCII without space, ``"``, ``'``, backslash or backquote; the rest is written so GRUB keeps it.
ARG_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
ARG_VALUE = re.compile(r"^[!#-&(-\[\]-_a-~]*$")
GRUB_BARE = re.compile(r"^[A-Za-z0-9_.,:=@+/%~^!-]+$")


class GpuHostError(FabricError):
    """A refusal: one line that names what is wrong and how to fix it."""


def header():
    return "# Managed by ainet.fabric (%s); changes here are overwritten.\n" % ROLE


def check_kernel_args(args):
    """The kernel arguments, checked (one line naming the bad one); duplicates of a key are refused."""
    seen = {}
    for index, arg in enumerate(args or []):
        text = str(arg).strip()
        key, _eq, value = text.partition("=")
        if not ARG_KEY.fullmatch(key) or not ARG_VALUE.fullmatch(value):
            raise GpuHostError("gpu_host: kernel_args[%d] %r is not one kernel argument (key or key=value: the key "
                               "letters, digits, '_', '.', '-'; the value printable ASCII without spaces, quotes, "
                               "backslash or backquote, which GRUB or the kernel would not pass on literally)"
                               % (index, arg))
        if key in seen:
            raise GpuHostError("gpu_host: kernel_args names %s twice (%s and %s)" % (key, seen[key], text))
        seen[key] = text
    return list(seen.values())


def check_grubby_args(args):
    """On BLS hosts: grubby writes the arguments unquoted into the entries' ``options`` lines, which GRUB's blscfg
    reads as script words (``$`` expands there): an argument GRUB would have to quote is refused, naming it."""
    for index, arg in enumerate(args or []):
        if not GRUB_BARE.fullmatch(arg):
            raise GpuHostError("gpu_host: kernel_args[%d] %r has a character GRUB reads as script syntax ({}|&$;<>*?[]#), "
                               "and grubby cannot quote it in a BLS entry; use gpu_host_boot_loader: none and add it "
                               "where this host's command line is made" % (index, arg))
    return args


def grub_word(arg):
    """``arg`` as one GRUB script word that GRUB passes on unchanged (single quotes where it has a special character)."""
    return arg if GRUB_BARE.fullmatch(arg) else "'%s'" % arg


def grub_unword(word):
    """The text GRUB makes of one word of ours (its single quotes removed); other words unchanged."""
    return word.replace("'", "") if word.count("'") % 2 == 0 else word


def sh_double_quoted(text):
    """``text`` for the inside of a shell double-quoted string (POSIX: ``$`` backquote ``"`` backslash escaped)."""
    return re.sub(r'([$`"\\])', r"\\\1", text)


def arg_key(arg):
    return arg.split("=", 1)[0]


MODULE_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def check_blacklist(modules):
    """The module names, checked (one line naming a bad one): a name, never a modprobe directive."""
    out = []
    for index, name in enumerate(modules or []):
        text = str(name).strip()
        if not MODULE_NAME.fullmatch(text):
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
        words = (fields[index + 1] + " " + fields[index + 2]).split()
        steps.append((fields[index], [grub_unword(word) for word in words]))
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
    """The drop-in: one line appending the arguments to ``GRUB_CMDLINE_LINUX``, each a GRUB word (:func:`grub_word`),
    escaped for the shell that sources it; ``args`` as :func:`check_kernel_args` returns them."""
    words = " ".join(grub_word(arg) for arg in args)
    return header() + 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX %s"\n' % sh_double_quoted(words)


def grub_dropin_args(text):
    """The arguments our own drop-in adds (its last ``GRUB_CMDLINE_LINUX`` line, as :func:`grub_dropin_text`
    writes it); [] for none."""
    for line in reversed((text or "").splitlines()):
        if line.startswith('GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX '):
            words = re.sub(r'\\([$`"\\])', r"\1", line.split(" ", 1)[1].rstrip('"'))
            return [grub_unword(word) for word in words.split()]
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


# -- GPU operator values ---------------------------------------------------------------------------------------------
# Facts and where they live (docs/rdma-host.md cites each):
# - DMA-BUF needs kernel 5.12+, the open kernel modules and a Turing or newer GPU; the legacy nvidia-peermem works with
#   any GPU and needs MLNX_OFED / DOCA-OFED (NVIDIA/cloud-native-docs gpu-operator/gpu-operator-rdma.rst);
# - the open GPU kernel modules run on Turing or later only (NVIDIA/open-gpu-kernel-modules README "Compatible GPUs");
#   Turing is compute capability 7.5, and the lowest PCI device id in that README's table is 0x1E02 (TU102), every
#   Volta (GV100: 0x1DB1..0x1DF6) and older id is below 0x1E00;
# - a driver installed on the host: the validator runs ``chroot /host nvidia-smi`` from one of these paths and, when it
#   succeeds, treats the driver as pre-installed (NVIDIA/gpu-operator cmd/nvidia-validator/main.go validateHostDriver,
#   hostNvidiaSMISearchPaths); Helm ``driver.enabled=false`` for such nodes (gpu-operator/getting-started.rst);
# - ``driver.rdma.useHostMofed`` reaches the driver and driver-manager containers (USE_HOST_MOFED, /usr/src mounted for
#   /usr/src/ofa_kernel) only when ``driver.rdma.enabled`` is true (NVIDIA/gpu-operator controllers/object_controls.go,
#   api/nvidia/v1/clusterpolicy_types.go IsHostMOFED).
DMABUF_KERNEL = (5, 12)
TURING_COMPUTE_CAP = (7, 5)
TURING_FIRST_DEVICE = 0x1E00
VALIDATOR_SMI_PATHS = ("/usr/bin/nvidia-smi", "/usr/sbin/nvidia-smi", "/bin/nvidia-smi", "/sbin/nvidia-smi",
                       "/usr/lib/wsl/lib/nvidia-smi", "/opt/bin/nvidia-smi")
GPU_QUERY = ("nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader")
DRIVER_VERSION = re.compile(r"^NVRM version: NVIDIA UNIX (?P<open>Open )?(?:\S+ )?Kernel Module(?: for \S+)?\s+"
                            r"(?P<version>\d+(?:\.\d+)+)", re.M)
SOURCE_RDMA = "NVIDIA/cloud-native-docs gpu-operator/gpu-operator-rdma.rst"
SOURCE_OPEN = "NVIDIA/open-gpu-kernel-modules README.md (Compatible GPUs)"
SOURCE_VALIDATOR = "NVIDIA/gpu-operator cmd/nvidia-validator/main.go; gpu-operator/getting-started.rst"
SOURCE_MOFED = "NVIDIA/gpu-operator controllers/object_controls.go"


def kernel_version(release):
    """(major, minor) of a kernel release string such as ``6.1.0-28-amd64``; (0, 0) when unreadable."""
    match = re.match(r"^(\d+)\.(\d+)", release or "")
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def parse_gpu_query(text):
    """``nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader`` -> ``[(name, (major, minor) or None)]``;
    None when the output is not that table (a driver older than the ``compute_cap`` field prints ``Field
    "compute_cap" is not a valid field to query.``)."""
    rows = []
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        name, comma, cap = line.rpartition(",")
        match = re.match(r"^\s*(\d+)\.(\d+)\s*$", cap)
        if not comma or not name.strip():
            return None
        rows.append((name.strip(), (int(match.group(1)), int(match.group(2))) if match else None))
    return rows or None


def parse_driver_version(text):
    """``/proc/driver/nvidia/version`` -> ``{"flavour": "open" | "proprietary", "version"}``, or None."""
    match = DRIVER_VERSION.search(text or "")
    if not match:
        return None
    return {"flavour": "open" if match.group("open") else "proprietary", "version": match.group("version")}


def turing_or_later(gpu):
    """True/False for a GPU ``{"compute_cap": (major, minor) or None, "device": int or None}`` (the compute capability
    decides where known, else the PCI device id); None when neither is known."""
    if gpu.get("compute_cap"):
        return tuple(gpu["compute_cap"]) >= TURING_COMPUTE_CAP
    if gpu.get("device") is not None:
        return gpu["device"] >= TURING_FIRST_DEVICE
    return None


def gpu_label(gpu):
    parts = [gpu.get("name") or "GPU"]
    if gpu.get("pci"):
        parts.append(gpu["pci"])
    if gpu.get("compute_cap"):
        parts.append("compute capability %d.%d" % tuple(gpu["compute_cap"]))
    elif gpu.get("device") is not None:
        parts.append("PCI device 10de:%04x" % gpu["device"])
    return " ".join(parts)


def helm(value):
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def operator_values(node):
    """The NVIDIA GPU operator Helm values this node needs, each with its reason: ``{"values": {helm key: value},
    "reasons": [{"value": "key=value" or None (a note), "why", "source"}]}``.

    ``node``: ``gpus`` [{pci, device, name, compute_cap}], ``rdma_nics`` (bool), ``release``, ``host_driver``
    {smi: a validator path or None, loaded, version: :func:`parse_driver_version`}, ``ofed`` {installed, loaded,
    evidence}, ``peermem_loaded``, ``legacy`` (the legacy nvidia-peermem asked for)."""
    values, reasons = {}, []

    def force(key, value, why, source):
        values[key] = value
        reasons.append({"value": "%s=%s" % (key, helm(value)), "why": why, "source": source})

    def note(why, source):
        reasons.append({"value": None, "why": why, "source": source})

    gpus = node.get("gpus") or []
    if not gpus:
        note("no NVIDIA GPU on this host: nothing for the GPU operator to drive here", None)
        return {"values": values, "reasons": reasons}
    release = node.get("release") or ""
    new_kernel = kernel_version(release) >= DMABUF_KERNEL
    old = [g for g in gpus if turing_or_later(g) is False]
    unknown = [g for g in gpus if turing_or_later(g) is None]
    driver = node.get("host_driver") or {}
    ofed = node.get("ofed") or {}
    rdma = bool(node.get("rdma_nics"))
    legacy = bool(node.get("legacy"))
    if driver.get("smi"):
        flavour = (driver.get("version") or {}).get("flavour")
        force("driver.enabled", False, "an NVIDIA driver is installed on the host (%s%s): the operator's validator finds "
              "it (chroot /host nvidia-smi) and must not deploy its own" % (driver["smi"], ", %s kernel modules %s" % (
                  flavour, driver["version"]["version"]) if flavour else ""), SOURCE_VALIDATOR)
        if not driver.get("loaded"):
            note("the host's NVIDIA driver is installed but not loaded (no /proc/driver/nvidia/version): the validator's "
                 "nvidia-smi fails until it is (reboot, or modprobe nvidia)", SOURCE_VALIDATOR)
        if rdma:
            if flavour == "open" and new_kernel and not old and not legacy:
                note("GPUDirect RDMA through DMA-BUF: the host driver has the open kernel modules and kernel %s has "
                     "DMA-BUF (5.12+)" % release, SOURCE_RDMA)
            else:
                note("GPUDirect RDMA needs nvidia-peermem here (%s), and the operator's nvidia-peermem container belongs "
                     "to its driver DaemonSet, which driver.enabled=false leaves out: load nvidia_peermem from the host "
                     "driver (%s)" % (peermem_cause(flavour, new_kernel, release, old, legacy),
                                      "loaded now" if node.get("peermem_loaded") else "not loaded now"), SOURCE_MOFED)
        return {"values": values, "reasons": reasons}
    if driver.get("loaded"):
        note("the nvidia kernel module is loaded but no nvidia-smi is at the validator's host paths: taken as the "
             "operator's own driver container (/run/nvidia/driver)", SOURCE_VALIDATOR)
    if old:
        force("driver.kernelModuleType", "proprietary", "%s is older than Turing: the open GPU kernel modules run on "
              "Turing or later only" % ", ".join(gpu_label(g) for g in old), SOURCE_OPEN)
    if unknown:
        note("GPU generation unknown for %s (no compute capability, no PCI device id): driver.kernelModuleType left to "
             "the operator (auto)" % ", ".join(gpu_label(g) for g in unknown), SOURCE_OPEN)
    if not rdma:
        force("driver.rdma.enabled", False, "no NVIDIA/Mellanox RDMA NIC on this host: GPUDirect RDMA has nothing to "
              "pair with", SOURCE_RDMA)
        return {"values": values, "reasons": reasons}
    if new_kernel and not old and not legacy:
        if not unknown:
            force("driver.kernelModuleType", "open", "%s: Turing or later, kernel %s has DMA-BUF (5.12+): GPUDirect "
                  "RDMA through DMA-BUF needs the open kernel modules" % (", ".join(gpu_label(g) for g in gpus), release),
                  SOURCE_RDMA)
        force("driver.rdma.enabled", False, "DMA-BUF is the recommended path, no nvidia-peermem (true only for the "
              "legacy path: gpu_host_rdma_legacy)", SOURCE_RDMA)
        if ofed.get("installed"):
            note("MLNX_OFED / DOCA-OFED is on the host (%s), yet driver.rdma.useHostMofed is not set: the operator "
                 "reads it only with driver.rdma.enabled=true (the RDMA guide's DMA-BUF example sets it, to no "
                 "effect)" % ofed.get("evidence"), SOURCE_MOFED)
    else:
        force("driver.rdma.enabled", True, "GPUDirect RDMA needs the legacy nvidia-peermem here (%s)"
              % peermem_cause(None, new_kernel, release, old, legacy), SOURCE_RDMA)
        if ofed.get("installed"):
            force("driver.rdma.useHostMofed", True, "MLNX_OFED / DOCA-OFED is installed on the host (%s): nvidia-peermem "
                  "is built against its /usr/src/ofa_kernel (USE_HOST_MOFED, passed only with rdma.enabled)"
                  % ofed.get("evidence"), SOURCE_MOFED)
            if not ofed.get("loaded"):
                note("the host's MLNX_OFED / DOCA-OFED is installed but not loaded (mlx5_core has no module version): "
                     "reboot or restart openibd (doca_ofed) first", SOURCE_MOFED)
        else:
            force("driver.rdma.useHostMofed", False, "no MLNX_OFED / DOCA-OFED on the host (no ofed_info, no "
                  "/usr/src/ofa_kernel): nvidia-peermem then needs the network operator's driver container, or install "
                  "DOCA-OFED (doca_ofed)", SOURCE_RDMA)
    if node.get("peermem_loaded"):
        note("nvidia_peermem is loaded already (by the host driver or a previous operator install)", None)
    return {"values": values, "reasons": reasons}


def peermem_cause(flavour, new_kernel, release, old, legacy):
    """Why DMA-BUF is out on this node (the first reason that applies)."""
    if legacy:
        return "the legacy path is asked for (gpu_host_rdma_legacy)"
    if old:
        return "%s older than Turing: DMA-BUF needs the open kernel modules, Turing or later" % ", ".join(
            gpu_label(g) for g in old)
    if not new_kernel:
        return "kernel %s predates DMA-BUF (5.12)" % release
    return "the host driver has the %s kernel modules: DMA-BUF needs the open ones" % flavour


def operator_group(results):
    """The Helm values of a group of nodes: ``{"values": {key: value} every node that sets the key agrees on,
    "conflicts": [one line per key the nodes set differently, naming them]}``. ``results``: {host: a node's
    :func:`operator_values` result, or None}. A node that does not set a key (no GPU, generation unknown) is no
    conflict; one Helm release (one ClusterPolicy) cannot give two nodes different values, so a conflict is reported,
    never resolved by picking one."""
    seen = {}
    for host in sorted(results):
        for key, value in ((results[host] or {}).get("values") or {}).items():
            seen.setdefault(key, {}).setdefault(helm(value), []).append(host)
    values, conflicts = {}, []
    for key in sorted(seen):
        if len(seen[key]) == 1:
            values[key] = next(iter(seen[key]))
            continue
        conflicts.append("%s: %s; one Helm release cannot serve both: run one NVIDIADriver resource per node group "
                         "(driver.nvidiaDriverCRD.enabled=true, nodeSelector) or split the nodes" % (key, "; ".join(
                             "%s on %s" % (value, ", ".join(hosts)) for value, hosts in sorted(seen[key].items()))))
    return {"values": values, "conflicts": conflicts}


# -- memlock of running services --------------------------------------------------------------------------------------
# Services that pin memory for RDMA pods, by process name (/proc/<pid>/comm) and systemd unit: a running process keeps
# the limit it started with; DefaultLimitMEMLOCK reaches it only when systemd starts it again.
MEMLOCK_SERVICES = (("containerd", "containerd.service"), ("kubelet", "kubelet.service"))
MEMLOCK_ROW = "Max locked memory"


def parse_limits(text, row=MEMLOCK_ROW):
    """``/proc/<pid>/limits`` -> ``(soft, hard)`` of one row (``"unlimited"`` or a number of bytes, as printed), or
    None. The row names have spaces, so the name is cut off before the columns are split."""
    for line in (text or "").splitlines():
        if line.startswith(row + " "):
            fields = line[len(row):].split()
            if len(fields) >= 2:
                return fields[0], fields[1]
    return None


def restart_pending(processes, wanted="unlimited"):
    """One line per running service whose locked-memory limit is not ``wanted``. ``processes``: [{"comm", "pid",
    "unit", "limits": (soft, hard) or None}]."""
    out = []
    for proc in processes:
        limits = proc.get("limits")
        if limits is None or limits != (wanted, wanted):
            out.append("%s (pid %s) runs with Max locked memory %s, wanted %s: restart %s to pick up the new limit"
                       % (proc["comm"], proc["pid"], "%s/%s" % limits if limits else "unreadable", wanted, proc["unit"]))
    return out
