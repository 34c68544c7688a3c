#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: nic_firmware
short_description: Pin the firmware of NVIDIA/Mellanox NICs by PSID and set the nvconfig the model wants
version_added: 0.3.0
author: ainet.fabric contributors (@ainet)
description:
  - For the card behind each rail NIC of O(nics), reads the burned and running firmware (C(mlxfwmanager --query), or
    C(flint -d <pci> q) / C(mstflint -d <pci> q) without MFT) and burns the image O(pins) gives for its PSID when
    the burned version differs. The image is copied from O(mirror) (a directory on the host, or an http(s) URL) into
    O(cache_dir), its SHA-256 checked against the pin, and its own version and PSID read (C(flint -i <image> q))
    and compared before C(flint -d <pci> -i <image> -y burn). A card whose PSID has no pin is reported in
    RV(unpinned) and never flashed. A BlueField is refused unless O(bluefield_modes) gives its mode and the card
    reads the same.
  - Reads each rail NIC's non-volatile configuration (C(mlxconfig -d <pci> -e query)) and sets, in one
    C(mlxconfig -y -d <pci> set ...) per NIC, every parameter whose next-boot value differs from the wanted one,
    C(SRIOV_EN)/C(NUM_OF_VFS), C(LINK_TYPE_P<n>), C(ROCE_CC_PRIO_MASK_P<n>), C(CNP_DSCP_P<n>), C(CNP_802P_PRIO_P<n>)
    (from O(nics)), and O(params). A parameter the card does not list fails the run before any change.
  - The new firmware or configuration runs after a reboot, reported in RV(reboot_pending), or with O(reset=true)
    after C(mlxfwreset -d <pci> -l 3 -y reset), refused (before any change) where C(mlxfwreset q) does not support
    level 3, where VFs are on the device, or where the device carries the management path.
  - With O(max_read_request), sets the PCIe max read request size of each rail NIC's function at run time
    (C(setpci -s <pci> CAP_EXP+08.w=<v>:7000)).
extends_documentation_fragment:
  - ainet.fabric.host.model
  - ainet.fabric.host.interfaces
options:
  nics:
    description: The rail NICs and what the model wants of them. Filled by the action plugin from O(cluster).
    type: list
    elements: dict
  params:
    description: Further nvconfig parameters for every rail NIC (C(ATS_ENABLED), C(ADVANCED_PCI_SETTINGS), the raw
      list). Filled by the action plugin.
    type: dict
    default: {}
  pins:
    description: The firmware pinned per card model, keyed by PSID, each with C(version), C(image) and C(sha256).
    type: dict
    default: {}
  mirror:
    description: Where the pinned images are, an absolute directory on the host or an http(s) URL.
    type: str
  cache_dir:
    description: Where images are copied and checked before a burn (created with mode 0700; an existing one that
      is a link, belongs to another user, or that its group or others may write to is refused).
    type: path
    default: /var/cache/ainet-fabric/nic-firmware
  bluefield_modes:
    description: BlueField cards by PCI address and their mode (V(dpu) or V(nic)); a BlueField not listed, or read
      in another mode, is refused.
    type: dict
    default: {}
  max_read_request:
    description: The PCIe max read request size in bytes (128 to 4096), set at run time; none leaves it.
    type: int
  raw:
    description: With O(cluster), the raw nvconfig list (C(nic_firmware_nvconfig)). Handled by the action plugin.
    type: raw
  gpudirect:
    description: With O(cluster), V(baremetal) sets C(ATS_ENABLED=0). Handled by the action plugin.
    type: str
  sriov_overrides:
    description: With O(cluster), the host's C(sriov_overrides). Handled by the action plugin.
    type: dict
  node_id:
    description: With O(cluster), the host's C(fabric_node_id). Handled by the action plugin.
    type: int
  pci:
    description: With O(cluster), the PCI address of rail NICs by name (C(nic_link_type_pci)), for ports whose netdev
      is named otherwise while they run the other link type. Handled by the action plugin.
    type: dict
  burn:
    description: Burn pinned images (V(false) reports what would be burned and burns nothing).
    type: bool
    default: true
  reset:
    description: Reset the firmware of a card whose new firmware or nvconfig is not running yet, instead of
      reporting a pending reboot.
    type: bool
    default: false
  defer_reset:
    description: With O(reset=true), check the reset and report it in RV(reset_devices), but leave it to the
      maintenance window (C(playbooks/site.yml)).
    type: bool
    default: false
  reset_refused:
    description: V(fail) fails on a refused reset; V(reboot) (a reboot follows in the maintenance window) notes the
      refusal on RV(reboot_pending).
    type: str
    choices: [fail, reboot]
    default: fail
  management_addresses:
    description: The addresses Ansible reaches this host on (the action plugin fills them).
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: Reads the cards, checks a cached image, and reports what it would burn, set and reset.
  diff_mode:
    support: full
    description: Shows each card's firmware and each NIC's differing nvconfig before and after.
requirements:
  - C(mlxconfig) (MFT) or C(mstconfig) (mstflint); C(flint) or C(mstflint); C(mlxfwreset) or C(mstfwreset) for
    O(reset); C(setpci) for O(max_read_request)
"""

EXAMPLES = r"""
- name: Firmware and nvconfig of the rail NICs from the model
  ainet.fabric.nic_firmware:
    cluster: "{{ fabric_cluster }}"
    interfaces: "{{ fabric_rail_interfaces }}"
    pins:
      MT_0000000838: {version: 28.43.1014, image: fw-ConnectX7-rel-28_43_1014.bin, sha256: "{{ cx7_sha }}"}
    mirror: /srv/nic-firmware
"""

RETURN = r"""
cards:
  description: Each card (by its first rail NIC's PCI function) with its PSID, firmware and outcome.
  returned: always
  type: list
  elements: dict
nvconfig:
  description: Each rail NIC's nvconfig outcome (C(set), C(reboot), C(diff), C(deferred)).
  returned: always
  type: list
  elements: dict
unpinned:
  description: The cards whose PSID has no pin (reported, never flashed).
  returned: always
  type: list
  elements: str
commands:
  description: The commands run (or, in check mode, that would run), in order.
  returned: always
  type: list
  elements: str
reboot_pending:
  description: Why a reboot is due before the cards run what is wanted.
  returned: always
  type: list
  elements: str
reset_devices:
  description: The PCI functions whose card is reset (in check mode or with O(defer_reset), would be).
  returned: always
  type: list
  elements: str
reset_refused:
  description: With O(reset_refused=reboot), why the reset was refused; null otherwise.
  returned: always
  type: str
"""

import os
import shutil
import socket

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.urls import fetch_url

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host import host_files
from ansible_collections.ainet.fabric.plugins.module_utils.host import mgmt_path
from ansible_collections.ainet.fabric.plugins.module_utils.host import nic_firmware_state as lib
from ansible_collections.ainet.fabric.plugins.module_utils.host import nic_link_type_state as link
from ansible_collections.ainet.fabric.plugins.module_utils.host.runner import Runner, one_line, refuse_action_options

ACTION_OPTIONS = ("cluster", "interfaces", "raw", "gpudirect", "sriov_overrides", "node_id", "pci")


class Host(object):
    """Reads the rail NICs' cards (sysfs, flint/mlxfwmanager, mlxconfig) through a :class:`Runner`."""

    def __init__(self, module, runner, hostname):
        self.module = module
        self.runner = runner
        self.host = hostname
        self.config_tool = runner.bin("mlxconfig") or runner.bin("mstconfig")
        self.flint = runner.bin("flint") or runner.bin("mstflint")
        self.reset_tool = runner.bin("mlxfwreset") or runner.bin("mstfwreset")
        self._nvconfig = {}
        self._cards = None

    def function(self, nic, pci=None):
        if pci is None:
            device = self.runner.sys("/sys/class/net/%s/device" % nic)
            if not os.path.exists(device):
                raise lib.NicFirmwareError("nic_firmware: %s: %s is not a PCI network interface of this host (a port "
                                           "running the other link type has another name: give its PCI address in "
                                           "nic_link_type_pci)" % (self.host, nic))
            pci = lib.check_pci(os.path.basename(os.path.realpath(device)), "sysfs device of %s" % nic)
        elif not os.path.isdir(self.runner.sys("/sys/bus/pci/devices/%s" % pci)):
            raise lib.NicFirmwareError("nic_firmware: %s: %s: no PCI device %s on this host" % (self.host, nic, pci))
        base = "/sys/bus/pci/devices/%s" % pci
        vendor = self.runner.read_sys(base + "/vendor")
        if vendor != link.MELLANOX:
            raise lib.NicFirmwareError("nic_firmware: %s: %s (%s) is not an NVIDIA/Mellanox NIC (vendor %s)"
                                       % (self.host, nic, pci, vendor or "unread"))
        return pci, (self.runner.read_sys(base + "/device") or "").lower()

    def nvconfig(self, pci, wanted=None):
        """The parsed ``mlxconfig -d <pci> -e query``, plus the element rows of the arrays ``wanted`` names by
        element (``-e query NAME[lo..hi]``, :func:`lib.element_queries`)."""
        if pci not in self._nvconfig:
            if not self.config_tool:
                raise lib.NicFirmwareError("nic_firmware: %s: neither mlxconfig (MFT) nor mstconfig (mstflint) is "
                                           "installed" % self.host)
            rc, out, err = self.runner.run([self.config_tool, "-d", pci, "-e", "query"], check=False)
            query = lib.parse_nvconfig(out if rc == 0 else "")
            if rc != 0:
                query["problems"] = ["%s -d %s -e query failed (rc %d): %s"
                                     % (os.path.basename(self.config_tool), pci, rc, one_line(err or out, 200))]
            self._nvconfig[pci] = query
        query = self._nvconfig[pci]
        for names in lib.element_queries(wanted or {}, query):
            rc, out, err = self.runner.run([self.config_tool, "-d", pci, "-e", "query", names], check=False)
            if rc != 0:
                raise lib.NicFirmwareError("nic_firmware: %s: %s: %s -e query %s failed (rc %d): %s"
                                           % (self.host, pci, os.path.basename(self.config_tool), names, rc,
                                              one_line(err or out, 200)))
            lib.merge_nvconfig(query, lib.parse_nvconfig(out))
        return query

    def card(self, pci):
        """The card's PSID and versions: mlxfwmanager's query of all cards when MFT is there, else flint q."""
        if self._cards is None:
            self._cards = {}
            if self.runner.bin("mlxfwmanager"):
                rc, out, _err = self.runner.run(["mlxfwmanager", "--query"], check=False)
                for device in lib.parse_mlxfwmanager(out if rc == 0 else "")["devices"]:
                    if device["pci"]:
                        name = device["pci"] if len(device["pci"]) > 7 else "0000:" + device["pci"]
                        self._cards[link.device_of(name.lower())] = device
        device = self._cards.get(link.device_of(pci))
        if device and device.get("psid") and device.get("fw"):
            return dict(device, pci=pci)
        if not self.flint:
            raise lib.NicFirmwareError("nic_firmware: %s: %s: neither mlxfwmanager, flint nor mstflint could read "
                                       "the firmware" % (self.host, pci))
        rc, out, err = self.runner.run([self.flint, "-d", pci, "q"], check=False)
        query = lib.parse_flint_query(out if rc == 0 else "")
        if rc != 0 or query["problems"]:
            raise lib.NicFirmwareError("nic_firmware: %s: %s: the firmware could not be read: %s"
                                       % (self.host, pci, one_line(err or out, 200) if rc else
                                          "; ".join(query["problems"])))
        return {"pci": pci, "psid": query["psid"], "fw": query["fw"], "fw_running": query["fw_running"]}

    def forget(self):
        self._nvconfig = {}
        self._cards = None

    def image(self, pin, mirror, cache_dir, fetch):
        """The checked local copy of a pinned image (``(path, flint -i q parsed)``), or (None, None) when it is not
        in the cache and ``fetch`` is false (check mode). ``cache_dir`` is created 0700; an existing one is refused
        when it is a link, belongs to another user or its group or others may write to it (the rule of
        :func:`host_files.private_dir`)."""
        if fetch or os.path.lexists(cache_dir):
            if fetch:
                host_files.make_dirs(cache_dir, 0o700)
            try:
                os.close(host_files.private_dir(cache_dir))
            except host_files.UnsafeDirectory as exc:
                raise lib.NicFirmwareError("nic_firmware: %s: cache_dir: %s" % (self.host, exc)) from None
        path = os.path.join(cache_dir, pin["image"])
        if not (os.path.isfile(path) and lib.sha256_of(path) == pin["sha256"]):
            if not fetch:
                return None, None
            if mirror is None:
                raise lib.NicFirmwareError("nic_firmware: %s: a burn needs %s but nic_firmware_mirror is not set"
                                           % (self.host, pin["image"]))
            partial = path + ".part"
            if mirror.startswith("/"):
                shutil.copyfile(os.path.join(mirror, pin["image"]), partial)
            else:
                response, info = fetch_url(self.module, "%s/%s" % (mirror, pin["image"]))
                if info.get("status") != 200:
                    raise lib.NicFirmwareError("nic_firmware: %s: fetching %s from the mirror: HTTP %s %s"
                                               % (self.host, pin["image"], info.get("status"),
                                                  one_line(str(info.get("msg")), 200)))
                with open(partial, "wb") as handle:
                    shutil.copyfileobj(response, handle)
            got = lib.sha256_of(partial)
            if got != pin["sha256"]:
                os.unlink(partial)
                raise lib.NicFirmwareError("nic_firmware: %s: the image %s from the mirror has SHA-256 %s, the pin "
                                           "says %s: not burned" % (self.host, pin["image"], got, pin["sha256"]))
            os.rename(partial, path)
        rc, out, err = self.runner.run(lib.image_query_argv(path, self.flint or "flint"), check=False)
        if rc != 0:
            raise lib.NicFirmwareError("nic_firmware: %s: the image %s could not be read (%s -i <image> q, rc %d): %s; "
                                       "not burned" % (self.host, pin["image"], os.path.basename(self.flint or "flint"),
                                                       rc, one_line(err or out, 200)))
        return path, lib.parse_flint_query(out)


def run_module():
    module = AnsibleModule(
        argument_spec=dict(
            nics=dict(type="list", elements="dict"),
            params=dict(type="dict", default={}),
            pins=dict(type="dict", default={}),
            mirror=dict(type="str"),
            cache_dir=dict(type="path", default="/var/cache/ainet-fabric/nic-firmware"),
            bluefield_modes=dict(type="dict", default={}),
            max_read_request=dict(type="int"),
            cluster=dict(type="dict"),
            interfaces=dict(type="raw"),
            raw=dict(type="raw"),
            gpudirect=dict(type="str"),
            sriov_overrides=dict(type="dict"),
            node_id=dict(type="int"),
            pci=dict(type="dict"),
            burn=dict(type="bool", default=True),
            reset=dict(type="bool", default=False),
            defer_reset=dict(type="bool", default=False),
            reset_refused=dict(type="str", default="fail", choices=["fail", "reboot"]),
            management_addresses=dict(type="list", elements="str", default=[]),
            sysfs_root=dict(type="path", default="/"),
        ),
        required_one_of=[["nics", "cluster"]],
        supports_check_mode=True,
    )
    refuse_action_options(module, ACTION_OPTIONS, "ainet.fabric.nic_firmware")
    params = module.params
    result = {"changed": False, "cards": [], "nvconfig": [], "unpinned": [], "commands": [], "reboot_pending": [],
              "reset_devices": [], "reset_refused": None}
    try:
        pins = lib.check_pins(params["pins"])
        mirror = lib.check_mirror(params["mirror"]) if params["mirror"] else None
        common = lib.check_raw(params["params"] or {}, "params", allow=lib.COMMON_MODEL_PARAMS)
        wanted_nics = lib.check_nics(params["nics"] or [])
        modes = dict((lib.check_pci(pci, "bluefield_modes"), mode) for pci, mode in params["bluefield_modes"].items())
        mrr = lib.check_max_read_request(params["max_read_request"], "max_read_request")
        runner = Runner(module, params["sysfs_root"], error=lib.NicFirmwareError)
        hostname = socket.gethostname()
        host = Host(module, runner, hostname)
        nics = []
        for nic in wanted_nics:
            pci, device_id = host.function(nic["nic"], nic["pci"])
            nics.append(dict(nic, pci=pci, device_id=device_id))
        # firmware: one plan per card (its first rail function)
        cards = {}
        for nic in nics:
            cards.setdefault(link.device_of(nic["pci"]), nic)
        fw_plans = []
        burns = []
        for device in sorted(cards):
            nic = cards[device]
            card = dict(host.card(nic["pci"]), device_id=nic["device_id"])
            if nic["device_id"] in link.BLUEFIELD:
                card["mode"] = link.MODES.get(lib.number(
                    (host.nvconfig(nic["pci"])["params"].get(link.MODE_PARAM) or {}).get("current")) or "")
            plan = lib.firmware_plan(card, pins, modes, host=hostname)
            if plan["action"] == "burn":
                path, image = host.image(pins[plan["psid"]], mirror, params["cache_dir"],
                                         fetch=params["burn"] and not module.check_mode)
                if image is not None:
                    plan = lib.firmware_plan(card, pins, modes, image=image, host=hostname)
                    plan["path"] = path
            if plan["action"] == "refused":
                raise lib.NicFirmwareError(plan["refusal"])
            if plan["action"] == "unpinned":
                result["unpinned"].append(plan["refusal"])
                module.warn(plan["refusal"])
            if plan["action"] == "burn" and params["burn"]:
                burns.append(plan)
            fw_plans.append(plan)
        # nvconfig: one batch per rail NIC
        nv_plans = []
        for nic in nics:
            wanted = lib.wanted_params(nic, link.port_number(nic["pci"]), common)
            plan = lib.nvconfig_plan(nic["pci"], wanted, host.nvconfig(nic["pci"], wanted),
                                     host.config_tool or "mlxconfig", host=hostname)
            plan["nic"] = nic["nic"]
            nv_plans.append(plan)
        # runtime max read request
        mrr_sets = []
        for nic in nics if mrr else []:
            _rc, out, _err = runner.run(lib.devctl_argv(nic["pci"]))
            if lib.parse_devctl(out) != mrr:
                mrr_sets.append(lib.devctl_argv(nic["pci"], mrr))
        # what needs a reset or reboot, per card
        due = {}
        for plan in fw_plans:
            if plan["action"] in ("burn", "pending") and (plan["action"] == "pending" or params["burn"]):
                due.setdefault(link.device_of(plan["pci"]), []).append(
                    "firmware of %s (PSID %s): %s running, %s from the next boot or reset (NIC firmware)"
                    % (plan["pci"], plan["psid"], plan["fw_running"], plan["pinned"]))
        for plan in nv_plans:
            for row in plan["diff"]:
                if row["name"] in plan["reboot"]:
                    due.setdefault(link.device_of(plan["pci"]), []).append(
                        "%s of %s (%s): %s now, %s from the next boot (NIC nvconfig)"
                        % (row["name"], plan["pci"], plan["nic"], row["current"] or "unknown", row["wanted"]))
        resets = []
        if params["reset"] and due:
            _devices, management, problem = mgmt_path.read_management(runner, params["management_addresses"])
            for device in sorted(due):
                pci = cards[device]["pci"]
                if problem:
                    how = {"how": "reboot" if params["reset_refused"] == "reboot" else "pending",
                           "why": "the management path is unknown: %s" % problem}
                elif not host.reset_tool:
                    how = {"how": "pending", "why": "neither mlxfwreset nor mstfwreset is installed"}
                else:
                    _rc, out, _err = runner.run(link.query_argv(pci, host.reset_tool), check=False)
                    how = lib.reset_plan(pci, link.parse_fwreset_query(out), link.device_vfs(runner, device),
                                         management, hostname, reboot_allowed=params["reset_refused"] == "reboot")
                if how["how"] == "reset":
                    resets.append(pci)
                elif params["reset_refused"] == "fail":
                    raise lib.NicFirmwareError("nic_firmware: %s: the firmware reset of %s is refused: %s. Fix: "
                                               "reboot the node instead (fabric_reboot)" % (hostname, pci, how["why"]))
                else:
                    note = "reset refused (%s); applied by the reboot" % how["why"]
                    result["reset_refused"] = note
                    due[device] = ["%s: %s" % (line, note) for line in due[device]]
            result["reset_devices"] = list(resets)
            if params["defer_reset"]:
                resets = []
        flint = os.path.basename(host.flint or "flint")
        result["commands"] = [" ".join(lib.burn_argv(p["pci"], p.get("path") or os.path.join(
            params["cache_dir"], p["image"]), flint)) for p in burns]
        result["commands"] += [" ".join([os.path.basename(p["argv"][0])] + p["argv"][1:]) for p in nv_plans
                               if p["argv"]]
        result["commands"] += [" ".join(argv) for argv in mrr_sets]
        result["commands"] += [" ".join(link.reset_argv(pci, os.path.basename(host.reset_tool or "mlxfwreset"),
                                                        lib.RESET_LEVEL)) for pci in resets]
        result["changed"] = bool(result["commands"])
        if module._diff:
            result["diff"] = {
                "before_header": "NIC firmware and nvconfig", "after_header": "NIC firmware and nvconfig",
                "before": "".join(["%s %s: firmware %s\n" % (p["pci"], p["psid"], p["fw"]) for p in fw_plans]
                                  + ["%s %s: %s=%s\n" % (p["pci"], p["nic"], r["name"], r["next_boot"])
                                     for p in nv_plans for r in p["diff"] if r["name"] in p["set"]]),
                "after": "".join(["%s %s: firmware %s\n" % (p["pci"], p["psid"], p["pinned"] if p in burns else p["fw"])
                                  for p in fw_plans]
                                 + ["%s %s: %s=%s\n" % (p["pci"], p["nic"], r["name"], r["wanted"])
                                    for p in nv_plans for r in p["diff"] if r["name"] in p["set"]])}
        if not module.check_mode:
            for plan in burns:
                runner.run(lib.burn_argv(plan["pci"], plan["path"], host.flint))
            for plan in nv_plans:
                if plan["argv"]:
                    runner.run([host.config_tool] + plan["argv"][1:])
            for argv in mrr_sets:
                runner.run(argv)
            for pci in resets:
                runner.run(link.reset_argv(pci, host.reset_tool, lib.RESET_LEVEL))
            if resets:
                # read back: a reset card runs what it holds, or it still waits for a reboot
                host.forget()
                for pci in resets:
                    device = link.device_of(pci)
                    due[device] = []
                    card = host.card(pci)
                    if card["fw_running"] != card["fw"]:
                        due[device].append("firmware of %s: %s running after the reset, %s burned (NIC firmware)"
                                           % (pci, card["fw_running"], card["fw"]))
                    for nic in nics:
                        if link.device_of(nic["pci"]) != device:
                            continue
                        wanted = lib.wanted_params(nic, link.port_number(nic["pci"]), common)
                        again = lib.nvconfig_plan(nic["pci"], wanted, host.nvconfig(nic["pci"], wanted),
                                                  host=hostname)
                        due[device] += ["%s of %s (%s): still not running after the reset (NIC nvconfig)"
                                        % (name, nic["pci"], nic["nic"]) for name in again["reboot"]]
        elif resets:
            for pci in resets:
                due.pop(link.device_of(pci), None)
        result["reboot_pending"] = [line for device in sorted(due) for line in due[device]]
        shown = ("pci", "psid", "fw", "fw_running", "pinned", "action", "image")
        result["cards"] = [dict((k, p.get(k)) for k in shown) for p in fw_plans]
        result["nvconfig"] = [dict((k, p[k]) for k in ("nic", "pci", "set", "reboot", "diff", "deferred"))
                              for p in nv_plans]
    except FabricError as exc:
        module.fail_json(msg=str(exc), **result)
    except OSError as exc:
        module.fail_json(msg="nic_firmware: %s" % one_line(str(exc), 300), **result)
    module.exit_json(**result)


def main():
    run_module()


if __name__ == "__main__":
    main()
