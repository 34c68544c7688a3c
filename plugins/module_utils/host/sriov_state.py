# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ``sriov`` role does to a node's rail PFs: the actions that reach the desired VFs, the boot unit.

Pure functions; the module (``ainet.fabric.sriov``) reads the host and runs the actions.

**Desired state**: the module's flat ``pfs`` option (:func:`check_wanted`), one entry per PF with its
``vfs``, ``trust``, ``spoof_check``, ``link_state`` and ``firmware_vfs``, derived on the controller from
the model and the host-local overrides (:mod:`desired.sriov`). The VF MAC is either ``derived`` (a locally
administered unicast MAC computed from the PF's permanent MAC and the VF index, so it is the same after
every boot and unique per VF) or ``keep`` (whatever the driver or another tool gives it).

**Current state** of one PF, as the module reads it (``pf_state``)::

    {"name": "enp1s0", "exists": True, "pci": "0000:01:00.0", "driver": "igb", "mac": "52:54:00:..",
     "total_vfs": 7 | None (no SR-IOV), "num_vfs": 2,
     "vfs": [{"index": 0, "pci": "0000:01:10.0", "driver": "igbvf", "netdev": "enp1s0v0", "in_use": None | "why"}],
     "vfinfo": {0: {"mac": "..", "trust": False, "spoof_check": True, "link_state": "auto",
                    "node_guid": None | "00:..", "port_guid": None | "00:.."}},   # :func:`vfinfo`
     "firmware": None | {"sriov_en": bool, "num_of_vfs": int,              # next boot (mlxconfig, Mellanox only)
                         "current": {"sriov_en": bool, "num_of_vfs": int}}  # running
    }

**InfiniBand PFs** (``link_layer: infiniband``, an IPoIB netdev): the kernel's IPoIB PF has no VF MAC,
trust or spoof check (``ipoib_netdev_ops_pf`` in drivers/infiniband/ulp/ipoib/ipoib_main.c offers only
``ndo_set_vf_link_state`` and ``ndo_set_vf_guid``), so a VF there gets its link state and its node and
port GUID (``vf_guids``, one per VF, derived on the controller by :func:`desired.sriov.vf_guid`), both set to
the same value as the SR-IOV operator does (pkg/host/internal/infiniband/infiniband.go
``applyVfGUIDToInterface``). mlx5 writes the GUID into the VF's vport context at once but the VF's driver
read its GUID when it bound, so a VF whose GUID changed is rebound (unbind, then
``/sys/bus/pci/drivers_probe``), as the operator's config daemon does after ``ConfigureVfGUID``
(pkg/host/internal/sriov/sriov.go ``configSriovVFDevices``, pkg/host/internal/kernel/kernel.go).

**Actions** (:func:`pf_actions`), in order::

    {"path": "/sys/class/net/enp1s0/device/sriov_numvfs", "value": "0", "what": "remove the 2 VFs of enp1s0"}
    {"argv": ["ip", "link", "set", "dev", "enp1s0", "vf", "0", "mac", "..", "trust", "on"], "what": ".."}
    {"argv": ["mlxconfig", "-y", "-d", "0000:3b:00.0", "set", "SRIOV_EN=1", "NUM_OF_VFS=16"], "what": ".."}
    {"rebind": {"pf": "ibp24s0", "index": 0}, "what": ".."}     # InfiniBand: after a VF's GUID changed

A PF whose firmware must change (``set``, only with ``sriov_firmware: true``) or has changed for the next
boot (``pending``) gets no VFs now: a reboot is pending, and the boot unit creates them at that boot.

Ownership: the role owns the VFs of the PFs it lists in its record (``/var/lib/ainet-fabric/sriov.json``)
and its boot unit ``ainet-sriov.service``. VFs another tool made are never removed or renumbered unless
``sriov_takeover`` says so; VFs in use (moved into a pod's namespace, bound to vfio-pci, up with
addresses, enslaved) are never removed or renumbered unless ``sriov_allow_in_use`` says so. A PF the
model no longer wants loses the VFs the role made (count 0) and leaves the record.
"""

from __future__ import annotations

import hashlib
import re

from ansible_collections.ainet.fabric.plugins.module_utils.host import boot_unit
from ansible_collections.ainet.fabric.plugins.module_utils.common import linux_names
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

ROLE = "sriov"
RECORD = "var/lib/ainet-fabric/sriov.json"
MAC_POLICIES = ("derived", "keep")
LINK_LAYERS = ("ethernet", "infiniband")
GUID_RE = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){7}$")  # iproute2 lib/utils.c get_guid: xx:xx:xx:xx:xx:xx:xx:xx
LINK_STATES = ("auto", "enable", "disable")
MAX_VFS = 127
DEFAULT_FABRIC = "default"
# Other tools' udev rules and units that create VFs (boot_unit.foreign_units)
RULE_DIRS = ("etc/udev/rules.d", "etc/systemd/system")
RULE_SUFFIXES = (".rules", ".service")
FOREIGN = ("sriov_numvfs",)


class SriovError(FabricError):
    """A refusal: one line that names what is wrong and how to fix it."""


def derived_mac(pf_mac, index):
    """A locally administered unicast MAC for VF ``index`` of the PF whose permanent MAC is ``pf_mac``."""
    digest = hashlib.sha256(("%s/%d" % (pf_mac.lower(), index)).encode()).digest()
    octets = [0x02] + list(digest[:5])
    return ":".join("%02x" % o for o in octets)


def vfinfo(link):
    """``{vf index: {"mac", "trust", "spoof_check", "link_state", "node_guid", "port_guid"}}`` from one PF's entry
    of ``ip -j -d link show`` / ``address show`` (its ``vfinfo_list``; iproute2 ip/ipaddress.c ``print_vfinfo``).

    A field the kernel does not send is None: ``trust``/``spoofchk`` when the driver reports -1, ``node guid``/
    ``port guid`` (JSON keys with a space) unless the PF's driver has ``ndo_get_vf_guid`` (IPoIB, kernel 5.5+,
    iproute2 5.5+). GUIDs are lower case, as ``ip link set ... node_guid`` takes them."""
    out = {}
    for entry in (link or {}).get("vfinfo_list") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("vf"), int):
            continue
        guids = dict((key, entry[name].lower() if isinstance(entry.get(name), str) else None)
                     for key, name in (("node_guid", "node guid"), ("port_guid", "port guid")))
        out[entry["vf"]] = dict({"mac": entry.get("address"), "trust": entry.get("trust"),
                                 "spoof_check": entry.get("spoofchk"), "link_state": entry.get("link_state")}, **guids)
    return out


def check_guids(guids, vfs, where):
    """The VF GUIDs of one InfiniBand PF entry, lower case; refuses a wrong count, a malformed, all-zero, all-one
    or repeated GUID."""
    if not isinstance(guids, list) or len(guids) != vfs:
        raise SriovError("%s.vf_guids: %r is not a list of %d GUIDs, one per VF (fix: give one xx:xx:xx:xx:xx:xx:xx:xx "
                         "per VF, or let the action derive them from the model)" % (where, guids, vfs))
    out = []
    for index, guid in enumerate(guids):
        text = str(guid).lower()
        if not GUID_RE.match(text) or text.replace(":", "").strip("0") == "" or text.replace(":", "").strip("f") == "":
            raise SriovError("%s.vf_guids[%d]: %r is not a usable GUID (fix: eight hex octets separated by ':', not all "
                             "zeros or all ones, which ib-sriov-cni refuses)" % (where, index, guid))
        if text in out:
            raise SriovError("%s.vf_guids[%d]: %s is also VF %d's GUID (fix: give every VF its own GUID)"
                             % (where, index, text, out.index(text)))
        out.append(text)
    return out


def check_wanted(pfs, field="pfs"):
    """The module's ``pfs`` option (flat, one entry per PF) as ``{pf: want}``; refuses, with one line naming the
    entry, a PF listed twice, a VF count out of range, a firmware VF count below it and, on InfiniBand, VF GUIDs
    that are missing, malformed or repeated (on any PF of the host).

    ``want``: ``{"vfs", "trust", "spoof_check", "link_state", "firmware_vfs", "fabric", "source"}``, plus
    ``"link_layer": "infiniband"`` and ``"vf_guids"`` on InfiniBand; ``firmware_vfs`` defaults to ``vfs``,
    ``source`` (where the settings come from, for messages) to the entry."""
    out = {}
    seen = {}
    for index, entry in enumerate(pfs or []):
        name = entry["name"]
        where = "%s[%d]" % (field, index)
        problem = linux_names.host_ifname_problem(name, where + ".name")
        if problem:
            raise SriovError(problem)
        if name in out:
            raise SriovError("%s: PF %s is listed twice" % (where, name))
        vfs = entry["vfs"]
        if not 1 <= vfs <= MAX_VFS:
            raise SriovError("%s.vfs: %r is out of range (use 1..%d)" % (where, vfs, MAX_VFS))
        firmware_vfs = entry.get("firmware_vfs")
        firmware_vfs = vfs if firmware_vfs is None else firmware_vfs
        if not vfs <= firmware_vfs <= MAX_VFS:
            raise SriovError("%s.firmware_vfs: %r is out of range (use %d..%d: at least vfs)"
                             % (where, firmware_vfs, vfs, MAX_VFS))
        link_layer = entry.get("link_layer") or "ethernet"
        if link_layer not in LINK_LAYERS:
            raise SriovError("%s.link_layer: %r is not one of %s" % (where, link_layer, ", ".join(LINK_LAYERS)))
        guids = None
        if link_layer == "infiniband":
            guids = check_guids(entry.get("vf_guids"), vfs, where)
            for index, guid in enumerate(guids):
                if guid in seen:
                    raise SriovError("%s.vf_guids[%d]: %s is also the GUID of VF %d of %s (fix: give every VF its own "
                                     "GUID)" % (where, index, guid, seen[guid][1], seen[guid][0]))
                seen[guid] = (name, index)
        elif entry.get("vf_guids"):
            raise SriovError("%s.vf_guids: is set on an Ethernet PF (%s); VF GUIDs exist only on InfiniBand (fix: remove "
                             "it, or set link_layer: infiniband)" % (where, name))
        out[name] = {"vfs": vfs, "trust": bool(entry.get("trust")),
                     "spoof_check": entry.get("spoof_check") is not False,
                     "link_state": entry.get("link_state") or "auto", "firmware_vfs": firmware_vfs,
                     "fabric": entry.get("fabric") or DEFAULT_FABRIC, "source": entry.get("source") or where}
        if guids is not None:
            out[name].update(link_layer=link_layer, vf_guids=guids)
    return out


def _onoff(value):
    return "on" if value else "off"


def vf_settings(pf, want, index, mac_policy):
    """The settings VF ``index`` of ``pf`` (a :data:`pf_state`) must have: ``{"mac"?, "trust", "spoof_check",
    "link_state"}`` on Ethernet, ``{"link_state", "guid"}`` on InfiniBand (no VF MAC, trust or spoof check there)."""
    if want.get("link_layer") == "infiniband":
        return {"link_state": want["link_state"], "guid": want["vf_guids"][index]}
    out = {"trust": want["trust"], "spoof_check": want["spoof_check"], "link_state": want["link_state"]}
    if mac_policy == "derived" and pf.get("mac"):
        out["mac"] = derived_mac(pf["mac"], index)
    return out


def vf_argv(pf_name, index, settings, current=None):
    """``ip link set dev <pf> vf <i> ...`` for what differs from ``current`` (all of it when None); None when
    nothing differs. ``link_state: auto`` is only sent when the driver reports another state (igb cannot
    set VF link state at all). A GUID (InfiniBand) is sent as both ``node_guid`` and ``port_guid`` when
    either differs or is not reported."""
    argv = []
    fresh, current = current is None, current or {}
    if settings.get("mac") and (fresh or (current.get("mac") or "").lower() != settings["mac"]):
        argv += ["mac", settings["mac"]]
    guid = settings.get("guid")
    if guid and (current.get("node_guid") != guid or current.get("port_guid") != guid):
        argv += ["node_guid", guid, "port_guid", guid]
    for key, word in (("trust", "trust"), ("spoof_check", "spoofchk")):
        if key not in settings:
            continue
        # a driver that does not report a field (ip -j leaves it out) cannot be compared: not a difference
        if fresh or (current.get(key) is not None and current.get(key) != settings[key]):
            argv += [word, _onoff(settings[key])]
    state = settings["link_state"]
    reported = current.get("link_state")
    if (reported is not None and reported != state) or (reported is None and state != "auto"):
        argv += ["state", state]
    if not argv:
        return None
    return ["ip", "link", "set", "dev", pf_name, "vf", str(index)] + argv


def numvfs_path(pf_name):
    return "/sys/class/net/%s/device/sriov_numvfs" % pf_name


def check_pf(pf, want, owned, allow_in_use, takeover, firmware):
    """Refusals for one wanted PF; returns its :func:`firmware_status` (``set`` and ``pending``: the VFs are
    created by the boot unit after the reboot)."""
    name = pf["name"]
    where = want["source"] + ".vfs"
    if not pf["exists"]:
        raise SriovError("sriov: rail NIC %s does not exist on this host (fabric %s)" % (name, want["fabric"]))
    if pf["num_vfs"] and name not in owned and not takeover:
        raise SriovError("sriov: %s has %d VFs that ainet.fabric did not create (another tool's?); refusing to manage "
                         "them. Fix: remove them with that tool, or set sriov_takeover: true" % (name, pf["num_vfs"]))
    status = firmware_status(pf.get("firmware"), want)
    if status == "set":
        fw = pf["firmware"]
        if not firmware:
            raise SriovError("sriov: the firmware of %s (%s) has SRIOV_EN=%s NUM_OF_VFS=%s for the next boot, %s wants "
                             "%d VFs (firmware_vfs %d); fix: set sriov_firmware: true to let the role run mlxconfig "
                             "(then a reboot is pending)"
                             % (name, pf["pci"], fw.get("sriov_en"), fw.get("num_of_vfs"), where, want["vfs"],
                                want["firmware_vfs"]))
        return status
    if status == "pending":
        return status
    if pf["total_vfs"] is None:
        raise SriovError("sriov: rail NIC %s (%s, driver %s) has no SR-IOV capability (no sriov_totalvfs), "
                         "but %s is %d; fix: use a NIC with SR-IOV enabled in firmware/BIOS, or another cni for "
                         "fabric %s"
                         % (name, pf["pci"], pf["driver"], where, want["vfs"], want["fabric"]))
    if want["vfs"] > pf["total_vfs"]:
        raise SriovError("sriov: %s %d is above the %d VFs rail NIC %s (%s, driver %s) supports (sriov_totalvfs); "
                         "fix: set at most %d" % (where, want["vfs"], pf["total_vfs"], name, pf["pci"], pf["driver"],
                                                  pf["total_vfs"]))
    if pf["num_vfs"] and pf["num_vfs"] != want["vfs"]:
        _may_renumber(pf, owned, allow_in_use, takeover,
                      "change %s from %d to %d VFs" % (name, pf["num_vfs"], want["vfs"]))
    return "ok"


def firmware_allows(count, firmware_vfs):
    """Whether a Mellanox ``NUM_OF_VFS`` of ``count`` allows the ``firmware_vfs`` VFs the model wants: at least
    that many (a higher count is never lowered: the one rule of the sriov and nic_firmware roles)."""
    return (count or 0) >= firmware_vfs


def firmware_status(fw, want):
    """``ok`` (no firmware facts, or it allows the VFs now), ``set`` (the next-boot firmware settings do not
    allow them: mlxconfig must run) or ``pending`` (the next boot allows them, the running firmware not yet)."""
    if fw is None:
        return "ok"

    def enough(enabled, count):
        return bool(enabled) and firmware_allows(count, want["firmware_vfs"])

    if not enough(fw.get("sriov_en"), fw.get("num_of_vfs")):
        return "set"
    current = fw.get("current") or {}
    if current.get("sriov_en") is not None and not enough(current.get("sriov_en"), current.get("num_of_vfs")):
        return "pending"
    return "ok"


def _may_renumber(pf, owned, allow_in_use, takeover, doing):
    if pf["name"] not in owned and not takeover:
        raise SriovError("sriov: %s has %d VFs that ainet.fabric did not create (another tool's?); refusing to %s. "
                         "Fix: remove them with that tool, or set sriov_takeover: true"
                         % (pf["name"], pf["num_vfs"], doing))
    busy = ["VF %d (%s): %s" % (vf["index"], vf.get("netdev") or vf.get("pci"), vf["in_use"])
            for vf in pf["vfs"] if vf.get("in_use")]
    if busy and not allow_in_use:
        raise SriovError("sriov: refusing to %s while VFs are in use: %s. Fix: drain the node (pods, VMs), or set "
                         "sriov_allow_in_use: true" % (doing, "; ".join(busy)))


def busy_vfs(pf):
    """``{index: why}`` of the PF's VFs in use (a pod's namespace, vfio-pci, up, enslaved, addressed)."""
    return dict((vf["index"], vf["in_use"]) for vf in pf.get("vfs") or [] if vf.get("in_use"))


def pf_actions(pf, want, mac_policy, firmware_tool="mlxconfig", allow_in_use=False):
    """The actions that bring ``pf`` to ``want`` (call :func:`check_pf` first). A VF in use keeps its settings
    (the SR-IOV CNI sets MAC, trust and spoof check per pod) unless ``allow_in_use``."""
    name = pf["name"]
    status = firmware_status(pf.get("firmware"), want)
    if status == "pending":
        return []
    if status == "set":
        return [{"argv": [firmware_tool, "-y", "-d", pf["pci"], "set", "SRIOV_EN=1",
                          "NUM_OF_VFS=%d" % want["firmware_vfs"]],
                 "what": "allow %d VFs in the firmware of %s" % (want["firmware_vfs"], name)}]
    actions = []
    fresh = pf["num_vfs"] != want["vfs"]
    if fresh:
        if pf["num_vfs"]:
            what = "remove the %d VFs of %s (a count changes through 0)" % (pf["num_vfs"], name)
            actions.append({"path": numvfs_path(name), "value": "0", "what": what})
        actions.append({"path": numvfs_path(name), "value": str(want["vfs"]),
                        "what": "create %d VFs on %s" % (want["vfs"], name)})
    busy = {} if fresh or allow_in_use else busy_vfs(pf)
    for index in range(want["vfs"]):
        if index in busy:
            continue
        current = None if fresh else (pf.get("vfinfo") or {}).get(index)
        argv = vf_argv(name, index, vf_settings(pf, want, index, mac_policy), current)
        if argv:
            actions.append({"argv": argv, "what": "VF %d of %s" % (index, name)})
        if argv and "node_guid" in argv:
            actions.append({"rebind": {"pf": name, "index": index},
                            "what": "rebind VF %d of %s so that its driver takes the new GUID" % (index, name)})
    return actions


def release_actions(pf, allow_in_use):
    """A PF the role owns but the model no longer wants: its VFs go (count 0)."""
    if not pf["exists"] or not pf["num_vfs"]:
        return []
    _may_renumber(pf, {pf["name"]}, allow_in_use, False, "remove the %d VFs of %s (no longer in the model)"
                  % (pf["num_vfs"], pf["name"]))
    return [{"path": numvfs_path(pf["name"]), "value": "0",
             "what": "remove the %d VFs of %s (no longer in the model)" % (pf["num_vfs"], pf["name"])}]


def virtfn_path(pf_name, index):
    return "/sys/class/net/%s/device/virtfn%d" % (pf_name, index)


def command_line(action):
    if "argv" in action:
        return " ".join(action["argv"])
    if "rebind" in action:
        return rebind_script(action["rebind"]["pf"], action["rebind"]["index"])
    return "echo %s > %s" % (action["value"], action["path"])


def rebind_script(pf_name, index):
    """The shell line that rebinds VF ``index`` of ``pf_name``: unbind its driver if one is bound, then let the
    kernel probe it again (the boot unit runs it; the module does the same through sysfs)."""
    return ("vf=$(basename $(readlink -f %s)); if [ -e /sys/bus/pci/devices/$vf/driver ]; then "
            "echo $vf > /sys/bus/pci/devices/$vf/driver/unbind; fi; echo $vf > /sys/bus/pci/drivers_probe"
            % virtfn_path(pf_name, index))


def unit_sections(pfs, ip_path="/sbin/ip", sh_path="/bin/sh"):
    """The boot unit: ``pfs`` is ``[(pf_state, want, mac_policy)]`` for every PF with VFs (none pending on
    firmware); it creates the VFs and sets every VF's settings once per boot, before the network starts."""
    execs, after = [], ["systemd-modules-load.service", "openibd.service"]
    for pf, _want, _policy in pfs:
        after.append(boot_unit.device_unit(pf["name"]))
        execs.append(boot_unit.wait_for(numvfs_path(pf["name"]), sh_path))
    for pf, want, policy in pfs:
        execs.append(boot_unit.write_sysfs(numvfs_path(pf["name"]), want["vfs"], sh_path))
        for index in range(want["vfs"]):
            argv = vf_argv(pf["name"], index, vf_settings(pf, want, index, policy))
            if argv:
                execs.append(("ExecStart", " ".join([ip_path] + argv[1:])))
            if argv and "node_guid" in argv:
                # systemd expands $VAR in command lines: $$ is a literal $ (systemd.service(5), "Command lines")
                script = rebind_script(pf["name"], index).replace("$", "$$")
                execs.append(("ExecStart", "%s -c \"%s\"" % (sh_path, script)))
    return boot_unit.oneshot(ROLE, "SR-IOV VFs of the rail NICs", execs, after=after,
                             before=["network-pre.target", "kubelet.service", "ainet-roce-qos.service"],
                             wants=["network-pre.target"])
