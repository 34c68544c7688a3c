#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: sriov
short_description: Create the SR-IOV VFs of a GPU node's rail NICs and keep them across reboots, in one call
version_added: 0.1.0
author: ainet.fabric contributors (@ainet)
description:
  - Creates O(pfs[].vfs) VFs on each PF of O(pfs) and sets each VF's MAC, trust, spoof check and link state. Only
    what differs is changed.
  - On an InfiniBand PF (O(pfs[].link_layer=infiniband), an IPoIB netdev) each VF gets its link state and its node
    and port GUID from O(pfs[].vf_guids) (C(ip link set dev PF vf N node_guid G port_guid G)); the IPoIB PF has no
    VF MAC, trust or spoof check. A VF whose GUID changed is rebound (its driver unbound, then
    C(/sys/bus/pci/drivers_probe)) so that its driver takes the GUID, unless it is in use. The action plugin
    derives the GUIDs from the model (cluster and fabric name, O(node_id), rail, VF index; see the role's README).
  - The action plugin of the same name fills O(pfs) on the controller from O(cluster), O(interfaces) and
    O(overrides) - for every fabric with C(cni=sriov), each of the node's rail NICs of that fabric with the fabric's
    C(sriov) settings, changed by the host-local O(overrides), which are validated like the model - so the host
    never receives the model. O(pfs) can also be given directly (with C(ansible -m)).
  - A VF count changes through 0 (the kernel refuses a direct change). It is refused, before any change, while a
    VF of the PF is in use (moved into another network namespace, bound to C(vfio-pci), up, enslaved or
    addressed) unless O(allow_in_use=true), and on a PF whose VFs another tool created unless O(takeover=true).
  - Refuses, before any change, a VF count above the PF's C(sriov_totalvfs), a rail NIC without SR-IOV, a rail NIC
    that does not exist, and another tool's udev rule or unit that also sets the PF's C(sriov_numvfs)
    (O(foreign_units)).
  - On Mellanox NICs with C(mlxconfig) installed, reads the firmware's C(SRIOV_EN) and C(NUM_OF_VFS); when they
    do not allow the VFs it runs C(mlxconfig set) only with O(firmware=true) and then reports a pending reboot
    (the VFs are created by the boot unit at that boot).
  - Persists with one boot unit, C(/etc/systemd/system/ainet-sriov.service), which creates the VFs and sets their
    settings once per boot, before C(network-pre.target) and the kubelet. It and the record
    C(/var/lib/ainet-fabric/sriov.json) (the PFs whose VFs this module made) are the only files it owns. A PF no
    longer in O(pfs) loses the VFs this module made.
extends_documentation_fragment:
  - ainet.fabric.host
  - ainet.fabric.host.interfaces
  - ainet.fabric.host.foreign_units
options:
  pfs:
    description:
      - The PFs and their VFs; filled by the action plugin from O(cluster). An empty list wants no VFs (the VFs this
        module made are removed).
      - Required unless O(cluster) is given.
    type: list
    elements: dict
    suboptions:
      name:
        description: The PF's netdev (a rail NIC).
        type: str
        required: true
      vfs:
        description: The number of VFs (1..127).
        type: int
        required: true
      trust:
        description: VF trust.
        type: bool
        default: false
      spoof_check:
        description: VF spoof check.
        type: bool
        default: true
      link_state:
        description: VF link state.
        type: str
        choices: [auto, enable, disable]
        default: auto
      firmware_vfs:
        description: The C(NUM_OF_VFS) Mellanox firmware must allow (at least O(pfs[].vfs); default O(pfs[].vfs)).
        type: int
      fabric:
        description: The PF's fabric, named in refusals.
        type: str
      source:
        description:
          - Where the settings come from (C(fabric_cluster.sriov), C(sriov_overrides.<nic>)), named in refusals.
        type: str
      link_layer:
        description:
          - V(infiniband) on a PF of an InfiniBand fabric (then O(pfs[].vf_guids) is required and VF MAC, trust and
            spoof check are not set).
        type: str
        choices: [ethernet, infiniband]
        default: ethernet
      vf_guids:
        description:
          - InfiniBand only, one per VF in VF order; each is set as the VF's node and port GUID.
          - Eight hex octets separated by C(:), not all zeros or all ones, unique on the host.
        type: list
        elements: str
  node_id:
    description:
      - The node's C(fabric_node_id), from which the action plugin derives the GUIDs of InfiniBand VFs; required when
        a fabric with C(cni=sriov) is InfiniBand.
      - Handled by the action plugin with O(cluster); the host never receives it.
    type: raw
  overrides:
    description:
      - Host-local changes to a rail NIC's C(sriov) settings, by NIC name (C(vfs), C(trust), C(spoof_check),
        C(link_state), C(firmware_vfs)); validated like the model.
      - Handled by the action plugin with O(cluster); the host never receives it.
    type: dict
    default: {}
  vf_mac:
    description:
      - V(derived) gives every VF a locally administered MAC computed from the PF's permanent MAC and the VF index
        (stable across reboots, unique per VF); V(keep) leaves VF MACs to the driver or another tool.
    type: str
    choices: [derived, keep]
    default: derived
  allow_in_use:
    description: Change or remove VFs while some are in use (their pods or VMs lose them).
    type: bool
    default: false
  takeover:
    description: Change the VF count of a PF whose VFs another tool created, and own them from then on.
    type: bool
    default: false
  firmware:
    description: Run C(mlxconfig) when the NIC firmware does not allow the VFs (a reboot is then pending).
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reads the PFs and VFs and reports the commands it would run.
  diff_mode:
    support: full
    description: Shows each PF's VFs before and after, and the boot unit.
requirements:
  - iproute2 C(ip)
  - C(mlxconfig) (mstflint or DOCA) only to change Mellanox firmware
"""

EXAMPLES = r"""
- name: SR-IOV VFs on the rail NICs
  ainet.fabric.sriov:
    cluster: "{{ fabric_cluster }}"
    interfaces: "{{ fabric_rail_interfaces }}"

- name: Fewer VFs on one NIC of this node, allowing the change on a drained node
  ainet.fabric.sriov:
    cluster: "{{ fabric_cluster }}"
    interfaces: "{{ fabric_rail_interfaces }}"
    overrides:
      ens6f0np0:
        vfs: 4
    allow_in_use: true

- name: SR-IOV VFs on the rail NICs of an InfiniBand fabric (GUIDs derived from the node id)
  ainet.fabric.sriov:
    cluster: "{{ fabric_cluster }}"
    interfaces: "{{ fabric_rail_interfaces }}"
    node_id: "{{ fabric_node_id }}"

- name: Two InfiniBand VFs with given GUIDs, without the model
  ainet.fabric.sriov:
    pfs:
      - name: ibp24s0
        vfs: 2
        link_layer: infiniband
        vf_guids: ["02:00:00:00:00:01:01:00", "02:00:00:00:00:01:01:01"]

- name: Four trusted VFs on one PF, without the model
  ainet.fabric.sriov:
    pfs:
      - name: ens6f0np0
        vfs: 4
        trust: true
"""

RETURN = r"""
pfs:
  description: Per PF this module manages (after the change).
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The PF's netdev.
      type: str
    pci:
      description: Its PCI address.
      type: str
    total_vfs:
      description: C(sriov_totalvfs).
      type: int
    vfs_before:
      description: VFs before the run.
      type: int
    vfs:
      description: VFs wanted (0 for a PF released).
      type: int
    firmware:
      description: C(ok), C(set) (mlxconfig ran or would run) or C(pending) (next boot).
      type: str
    vf_netdevs:
      description: The VFs' netdevs in this namespace, by index.
      type: list
      elements: str
commands:
  description: The commands run (or, in check mode, that would run), in order.
  returned: always
  type: list
  elements: str
reboot_pending:
  description: Why a reboot is due before the node is as wanted (empty when none).
  returned: always
  type: list
  elements: str
unit:
  description: The boot unit's state.
  returned: always
  type: dict
  contains:
    path:
      description: Its path.
      type: str
    changed:
      description: Whether it was written or removed.
      type: bool
    enabled:
      description: Whether it is enabled (linked from C(multi-user.target.wants)).
      type: bool
    present:
      description: Whether it exists after the run.
      type: bool
"""

import json
import os
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ainet.fabric.plugins.module_utils.host import boot_unit
from ansible_collections.ainet.fabric.plugins.module_utils.host import sriov_state
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.common.file_formats import unit_dump
from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import read_text, write_atomic
from ansible_collections.ainet.fabric.plugins.module_utils.host.runner import Runner, refuse_action_options
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_gather import netdev_sysfs
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse_pci import parse_mlxconfig

PASSTHROUGH = ("vfio-pci", "pci-stub", "uio_pci_generic", "igb_uio")
VF_APPEAR = 10
ACTION_OPTIONS = ("cluster", "interfaces", "overrides", "node_id")
PF_SPEC = dict(
    name=dict(type="str", required=True),
    vfs=dict(type="int", required=True),
    trust=dict(type="bool", default=False),
    spoof_check=dict(type="bool", default=True),
    link_state=dict(type="str", choices=list(sriov_state.LINK_STATES), default="auto"),
    firmware_vfs=dict(type="int"),
    fabric=dict(type="str"),
    source=dict(type="str"),
    link_layer=dict(type="str", choices=list(sriov_state.LINK_LAYERS), default="ethernet"),
    vf_guids=dict(type="list", elements="str"),
)


class Pfs(object):
    """Reads the rail PFs and their VFs through a :class:`Runner` (sysfs, ``ip -j``, ``mlxconfig``)."""

    def __init__(self, runner):
        self.runner = runner
        self.mlxconfig = runner.bin("mlxconfig")

    def vf_driver(self, pf, index):
        link = self.runner.sys("/sys/class/net/%s/device/virtfn%d/driver" % (pf, index))
        return os.path.basename(os.path.realpath(link)) if os.path.exists(link) else None

    def firmware(self, pci, driver):
        if driver != "mlx5_core" or not self.mlxconfig:
            return None
        # -e prints the current (running) column too: what the next boot brings is then told from what runs now
        rc, out, _err = self.runner.run([self.mlxconfig, "-e", "-d", pci, "q", "SRIOV_EN", "NUM_OF_VFS"], check=False)
        entry = next(iter(parse_mlxconfig(out)["firmware"].values()), None) if rc == 0 else None
        if not entry or entry.get("sriov_en") is None:
            raise sriov_state.SriovError("mlxconfig -e -d %s q SRIOV_EN NUM_OF_VFS failed (rc %d): %s"
                                         % (pci, rc, out.strip()[:300]))
        return {"sriov_en": entry["sriov_en"], "num_of_vfs": entry["num_of_vfs"], "current": entry.get("current")}

    def states(self, names):
        """``{pf: pf_state}`` (see :mod:`sriov_state`)."""
        sysfs = netdev_sysfs(self.runner.sysfs_root, names)
        shown = self.runner.json(["ip", "-j", "-d", "address", "show"]) or []
        links = dict((entry.get("ifname"), entry) for entry in shown)
        out = {}
        for name in names:
            info = sysfs.get(name)
            link = links.get(name) or {}
            if info is None:
                out[name] = {"name": name, "exists": name in links, "pci": None, "driver": None, "mac": None,
                             "total_vfs": None, "num_vfs": 0, "vfs": [], "vfinfo": {}, "firmware": None}
                continue
            sriov = info["sriov"] or {}
            vfs = []
            for vf in sriov.get("vfs", []):
                vf = dict(vf, driver=self.vf_driver(name, vf["index"]))
                vf["in_use"] = in_use(vf, links.get(vf["netdev"]) if vf["netdev"] else None)
                vfs.append(vf)
            vfinfo = sriov_state.vfinfo(link)
            out[name] = {"name": name, "exists": True, "pci": info["pci"], "driver": info["driver"],
                         "mac": link.get("permaddr") or link.get("address"),
                         "total_vfs": sriov.get("total_vfs") if info["sriov"] else None,
                         "num_vfs": sriov.get("num_vfs", 0), "vfs": vfs, "vfinfo": vfinfo,
                         "firmware": self.firmware(info["pci"], info["driver"])}
        return out


def in_use(vf, link):
    """Why the VF is in use, or None."""
    if vf.get("driver") in PASSTHROUGH:
        return "bound to %s" % vf["driver"]
    if vf.get("driver") and not vf.get("netdev"):
        return "its netdev is in another network namespace (a pod?)"
    if link:
        if link.get("master"):
            return "enslaved to %s" % link["master"]
        addresses = [a.get("local") for a in link.get("addr_info") or [] if a.get("scope") != "link"]
        if addresses:
            return "has address %s" % addresses[0]
        if "UP" in (link.get("flags") or []):
            return "is up"
    return None


def foreign_rules(config_root, pfs):
    """Other tools' udev rules and units that write ``sriov_numvfs`` of one of ``pfs`` (a pf_state list)."""
    about = dict((pf["name"], [pf["name"], pf.get("pci")]) for pf in pfs)
    found = boot_unit.foreign_units(config_root, sriov_state.ROLE, sriov_state.FOREIGN, dirs=sriov_state.RULE_DIRS,
                                    suffixes=sriov_state.RULE_SUFFIXES, exec_only=False, about=about)
    return ["%s (sets sriov_numvfs of %s)" % (path, ", ".join(names)) for path, names in found]


def read_record(config_root):
    try:
        data = json.loads(read_text(os.path.join(config_root, sriov_state.RECORD)) or "{}")
    except ValueError:
        data = {}
    pfs = data.get("pfs") if isinstance(data, dict) else None
    return pfs if isinstance(pfs, dict) else {}


def summary(pf, want):
    if not want:
        return "%s: no VFs wanted (%d now)" % (pf["name"], pf["num_vfs"])
    if want.get("link_layer") == "infiniband":
        guids = "".join("\n  vf %d guid %s" % (i, guid) for i, guid in enumerate(want["vf_guids"]))
        return "%s: %d VFs (InfiniBand, link state %s)%s" % (pf["name"], want["vfs"], want["link_state"], guids)
    return "%s: %d VFs (trust %s, spoofchk %s, link state %s)" % (
        pf["name"], want["vfs"], "on" if want["trust"] else "off", "on" if want["spoof_check"] else "off",
        want["link_state"])


def before_text(pf, want):
    """The diff's before line of one PF: its VF count, and on InfiniBand each VF's node GUID now."""
    text = "%s: %d VFs\n" % (pf["name"], pf["num_vfs"])
    if (want or {}).get("link_layer") == "infiniband":
        text += "".join("  vf %d guid %s\n" % (i, info.get("node_guid"))
                        for i, info in sorted((pf.get("vfinfo") or {}).items()))
    return text


def run_module():
    module = AnsibleModule(
        argument_spec=dict(
            pfs=dict(type="list", elements="dict", options=PF_SPEC),
            cluster=dict(type="dict"),
            interfaces=dict(type="raw"),
            node_id=dict(type="raw"),
            overrides=dict(type="dict", default={}),
            vf_mac=dict(type="str", choices=list(sriov_state.MAC_POLICIES), default="derived"),
            allow_in_use=dict(type="bool", default=False),
            takeover=dict(type="bool", default=False),
            firmware=dict(type="bool", default=False),
            persist=dict(type="bool", default=True),
            foreign_units=dict(type="str", choices=["fail", "warn"], default="fail"),
            config_root=dict(type="path", default="/"),
            sysfs_root=dict(type="path", default="/"),
        ),
        required_one_of=[["pfs", "cluster"]],
        supports_check_mode=True,
    )
    refuse_action_options(module, ACTION_OPTIONS, "ainet.fabric.sriov")
    params = module.params
    unit = boot_unit.read_unit(params["config_root"], sriov_state.ROLE)
    result = {"changed": False, "pfs": [], "commands": [], "reboot_pending": [],
              "unit": {"path": unit["path"], "changed": False, "enabled": unit["enabled"], "present": unit["present"]}}
    try:
        wanted = sriov_state.check_wanted(params["pfs"])
        record = read_record(params["config_root"])
        runner = Runner(module, params["sysfs_root"], params["config_root"], error=sriov_state.SriovError)
        host = Pfs(runner)
        names = sorted(set(wanted) | set(record))
        states = host.states(names) if names else {}
        before = dict((n, states[n]["num_vfs"]) for n in names)
        warnings = []
        foreign = foreign_rules(params["config_root"], [states[n] for n in wanted])
        if foreign and params["foreign_units"] == "fail":
            raise sriov_state.SriovError("sriov: another tool also creates VFs on the rail NICs: %s. Fix: remove it "
                                         "(or set sriov_foreign_units: warn)" % "; ".join(foreign))
        warnings += ["another tool also sets sriov_numvfs: %s" % f for f in foreign]
        status, actions = {}, []
        for name in sorted(wanted):
            status[name] = sriov_state.check_pf(states[name], wanted[name], set(record), params["allow_in_use"],
                                                params["takeover"], params["firmware"])
        for name in sorted(set(record) - set(wanted)):
            actions += sriov_state.release_actions(states[name], params["allow_in_use"])
        for name in sorted(wanted):
            actions += sriov_state.pf_actions(states[name], wanted[name], params["vf_mac"],
                                              host.mlxconfig or "mlxconfig", params["allow_in_use"])
            if not params["allow_in_use"] and states[name]["num_vfs"] == wanted[name]["vfs"]:
                warnings += ["VF %d of %s is in use (%s): its settings are left as they are" % (index, name, why)
                             for index, why in sorted(sriov_state.busy_vfs(states[name]).items())]
            if status[name] in ("set", "pending"):
                result["reboot_pending"].append("firmware of %s (%s): SRIOV_EN=1 NUM_OF_VFS=%d take effect at the next "
                                                "boot; the boot unit creates the %d VFs then"
                                                % (name, states[name]["pci"], wanted[name]["firmware_vfs"],
                                                   wanted[name]["vfs"]))
        result["commands"] = [sriov_state.command_line(a) for a in actions]
        persisted = [(states[n], wanted[n], params["vf_mac"]) for n in sorted(wanted)]
        text = None
        if persisted and params["persist"]:
            text = unit_dump(sriov_state.unit_sections(persisted, runner.bin("ip") or "/sbin/ip"),
                             boot_unit.header(sriov_state.ROLE))
        new_record = dict((n, {"pci": states[n]["pci"], "vfs": wanted[n]["vfs"]}) for n in sorted(wanted))
        unit_changed = unit["text"] != text
        record_changed = new_record != record
        result["changed"] = bool(actions) or unit_changed or record_changed
        result["unit"]["changed"] = unit_changed
        result["unit"]["present"] = text is not None
        if module._diff:
            result["diff"] = [{"before_header": "rail PFs", "after_header": "rail PFs",
                               "before": "".join(before_text(states[n], wanted.get(n)) for n in names),
                               "after": "".join(summary(states[n], wanted.get(n)) + "\n" for n in names)},
                              {"before_header": unit["path"], "before": unit["text"] or "",
                               "after_header": unit["path"], "after": text or ""}]
        if not module.check_mode:
            for action in actions:
                if "argv" in action:
                    runner.run(action["argv"])
                elif "rebind" in action:
                    rebind(runner, action["rebind"]["pf"], action["rebind"]["index"])
                else:
                    runner.write_sys(action["path"], action["value"])
            boot_unit.sync_unit(unit, text, False)
            if record_changed:
                write_atomic(os.path.join(params["config_root"], sriov_state.RECORD),
                             json.dumps({"version": 1, "pfs": new_record}, indent=1, sort_keys=True) + "\n", "0644",
                             state=True)
            if actions:
                states = verify(host, wanted, status, params["vf_mac"], names, params["allow_in_use"])
        result["pfs"] = [{"name": n, "pci": states[n]["pci"], "total_vfs": states[n]["total_vfs"],
                          "vfs_before": before[n],
                          "vfs": wanted[n]["vfs"] if n in wanted else 0, "firmware": status.get(n, "ok"),
                          "vf_netdevs": [vf["netdev"] for vf in states[n]["vfs"]]} for n in names]
        for warning in warnings:
            module.warn(warning)
    except FabricError as exc:
        module.fail_json(msg=str(exc), **result)
    except OSError as exc:  # a read-only /etc or /var/lib (image-based OS), a full disk
        module.fail_json(msg="sriov: %s: %s" % (exc.filename or "", exc.strerror or exc), **result)
    module.exit_json(**result)


def rebind(runner, pf, index):
    """Unbind VF ``index`` of ``pf`` from its driver (if bound) and let the kernel probe it again, as the SR-IOV
    operator does after setting an InfiniBand VF's GUID (its driver reads the GUID when it binds)."""
    link = runner.sys(sriov_state.virtfn_path(pf, index))
    if not os.path.exists(link):
        raise sriov_state.SriovError("sriov: VF %d of %s has no PCI device (%s) to rebind after its GUID was set"
                                     % (index, pf, sriov_state.virtfn_path(pf, index)))
    pci = os.path.basename(os.path.realpath(link))
    if os.path.exists(runner.sys("/sys/bus/pci/devices/%s/driver" % pci)):
        runner.write_sys("/sys/bus/pci/devices/%s/driver/unbind" % pci, pci)
    runner.write_sys("/sys/bus/pci/drivers_probe", pci)


def verify(host, wanted, status, mac_policy, names, allow_in_use):
    """Read the PFs back until the VFs are there with their settings (netdevs appear asynchronously)."""
    # VF drivers probe one VF after another: mlx5 takes seconds for dozens of them
    deadline = time.monotonic() + VF_APPEAR + 0.5 * sum(want["vfs"] for want in wanted.values())
    while True:
        states = host.states(names)
        problems = []
        for name, want in sorted(wanted.items()):
            if status[name] != "ok":
                continue
            pf = states[name]
            if pf["num_vfs"] != want["vfs"]:
                problems.append("%s has %d VFs, not %d" % (name, pf["num_vfs"], want["vfs"]))
                continue
            busy = {} if allow_in_use else sriov_state.busy_vfs(pf)
            for index in range(want["vfs"]):
                settings = sriov_state.vf_settings(pf, want, index, mac_policy)
                if index not in busy and sriov_state.vf_argv(name, index, settings, pf["vfinfo"].get(index) or {}):
                    problems.append("VF %d of %s does not have its settings: %s"
                                    % (index, name, pf["vfinfo"].get(index)))
            if any(vf["driver"] and not vf["netdev"] for vf in pf["vfs"]):
                problems.append("the VF netdevs of %s have not appeared yet" % name)
        for name in set(names) - set(wanted):
            if states[name]["num_vfs"]:
                problems.append("%s still has %d VFs" % (name, states[name]["num_vfs"]))
        if not problems:
            return states
        if time.monotonic() > deadline:
            raise sriov_state.SriovError("sriov: read back after the change: %s" % "; ".join(problems))
        time.sleep(0.5)


def main():
    run_module()


if __name__ == "__main__":
    main()
