#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: rdma_netns
short_description: Set the RDMA subsystem's network namespace mode (exclusive or shared), live and at every boot
version_added: 0.1.0
author: ainet.fabric contributors (@ainet)
description:
  - Sets the mode O(mode). The action plugin of the same name fills O(mode) on the controller from O(cluster)
    (C(fabric_cluster.rdma_netns), by default what the fabrics' CNIs need - exclusive for SR-IOV and host-device,
    shared for macvlan, ipvlan and IPoIB), so the host never receives the model; a contradiction in the model is
    refused there, by the model's validation, before anything runs on the host. O(mode) can also be given
    directly (with C(ansible -m)).
  - Live with C(rdma system set netns), verified by reading C(rdma system show) back. The kernel refuses a live
    change while other network namespaces exist; the new mode is then pending a reboot (reported, never forced).
  - At every boot with the C(ib_core) option C(netns_mode) in C(/etc/modprobe.d/ainet-rdma-netns.conf), the only
    file it owns; when the initramfs of the running kernel carries C(ib_core) it is rebuilt (C(update-initramfs)
    or C(dracut)) so the option is there when the module loads early.
  - Another modprobe.d file that sets a different C(ib_core netns_mode) fails the run before any change, naming it.
  - With O(mode=none) (the model does not decide a mode, as no fabric has a CNI that cares), nothing is set and
    the owned file is removed.
extends_documentation_fragment:
  - ainet.fabric.host
options:
  mode:
    description:
      - The RDMA netns mode every boot must run; V(none) leaves the mode as the kernel has it and removes the owned
        file. Filled by the action plugin from O(cluster).
      - Required unless O(cluster) is given.
    type: str
    choices: [exclusive, shared, none]
  initramfs:
    description: V(auto) rebuilds the initramfs when it carries C(ib_core) and the option changed; V(never) does not.
    type: str
    choices: [auto, never]
    default: auto
  foreign_files:
    description: What to do about another modprobe.d file that sets a different C(ib_core netns_mode).
    type: str
    choices: [fail, warn]
    default: fail
attributes:
  check_mode:
    support: full
    description: Reads the mode and the files, and reports what it would run and write.
  diff_mode:
    support: full
    description: Shows the mode and the modprobe file before and after.
requirements:
  - iproute2 C(rdma)
"""

EXAMPLES = r"""
- name: RDMA netns mode from the cluster model
  ainet.fabric.rdma_netns:
    cluster: "{{ fabric_cluster }}"

- name: Exclusive mode, without the model
  ainet.fabric.rdma_netns:
    mode: exclusive
"""

RETURN = r"""
mode:
  description: The mode asked for (null when none is).
  returned: always
  type: str
live_before:
  description: The running mode before the run (null when C(ib_core) is not loaded).
  returned: always
  type: str
live:
  description: The running mode after the run.
  returned: always
  type: str
commands:
  description: The commands run (or, in check mode, that would run), in order.
  returned: always
  type: list
  elements: str
file:
  description: The modprobe option file's state.
  returned: always
  type: dict
  contains:
    path:
      description: Its path.
      type: str
    changed:
      description: Whether it was written or removed.
      type: bool
    present:
      description: Whether it exists after the run.
      type: bool
reboot_pending:
  description: Why a reboot is due before the node is as wanted (empty when none).
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ainet.fabric.plugins.module_utils.host import rdma_netns_state as plan_lib
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import read_text, remove, write_atomic
from ansible_collections.ainet.fabric.plugins.module_utils.host.runner import Runner, one_line, refuse_action_options
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse_host import parse_rdma_system

ACTION_OPTIONS = ("cluster",)


class Netns(object):
    """Reads the RDMA netns mode, the modprobe.d files and the initramfs through a :class:`Runner`."""

    def __init__(self, runner):
        self.runner = runner

    def live(self):
        """The running mode, or None when ib_core is not loaded."""
        if not os.path.isdir(self.runner.sys("/sys/module/ib_core")):
            return None
        if not self.runner.bin("rdma"):
            raise plan_lib.NetnsError("rdma_netns: iproute2's 'rdma' tool is not installed (package iproute2, or "
                                      "rdma on older distributions)")
        rc, out, err = self.runner.run(["rdma", "system", "show"], check=False)
        mode = parse_rdma_system(out)["system"]["netns"] if rc == 0 else None
        if mode is None:
            raise plan_lib.NetnsError("rdma_netns: 'rdma system show' did not say the netns mode (rc %d): %s"
                                      % (rc, one_line(err or out, 300)))
        return mode

    def other_files(self):
        own = self.runner.conf(plan_lib.CONF)
        files = {}
        for rel in plan_lib.MODPROBE_DIRS:
            directory = self.runner.conf(rel)
            if not os.path.isdir(directory):
                continue
            for name in sorted(os.listdir(directory)):
                path = os.path.join(directory, name)
                if name.endswith(".conf") and os.path.isfile(path) and os.path.realpath(path) != os.path.realpath(own):
                    files["/" + rel + "/" + name] = read_text(path) or ""
        return files

    def initramfs(self):
        """``(rebuild argv, whether the image holds the option file)`` when the running kernel's initramfs
        carries ib_core, else None. The rebuild covers every installed kernel (a newer one may boot next)."""
        release = os.uname()[2]
        for image, lister, rebuild in (
                ("/boot/initrd.img-%s" % release, "lsinitramfs", ["update-initramfs", "-u", "-k", "all"]),
                ("/boot/initramfs-%s.img" % release, "lsinitrd", ["dracut", "-f", "--regenerate-all"])):
            if not os.path.exists(self.runner.conf(image)):
                continue
            tool = self.runner.bin(lister)
            builder = self.runner.bin(rebuild[0])
            if not tool or not builder:
                continue
            rc, out, _err = self.runner.run([tool, image], check=False)
            if rc == 0 and "/ib_core.ko" in out:
                return [builder] + rebuild[1:], plan_lib.CONF in out
        return None


def other_netns():
    """Network namespaces besides this process's (of processes, and ``ip netns`` bind mounts without one):
    while any exists the kernel refuses a live netns mode change. Sorted ``net:[inode]`` / paths."""
    found = set()
    try:
        mine = os.readlink("/proc/self/ns/net")
    except OSError:
        return []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                link = os.readlink("/proc/%s/ns/net" % pid)
            except OSError:
                continue
            if link != mine:
                found.add(link)
    own_inode = mine.rsplit("[", 1)[-1].rstrip("]")
    # Namespaces kept by a bind mount without a process: ip netns (/run/netns), container runtimes
    # (/run/docker/netns, /var/run/netns of CNI plugins ...): every nsfs mount of a network namespace.
    try:
        with open("/proc/self/mountinfo") as handle:
            mounts = handle.read().splitlines()
    except OSError:
        mounts = []
    for line in mounts:
        fields = line.split(" - ", 1)
        if len(fields) == 2 and fields[1].startswith("nsfs ") and "net:[" in fields[0]:
            inode = fields[0].split("net:[", 1)[1].split("]", 1)[0]
            if inode != own_inode:
                found.add("net:[%s]" % inode)
    return sorted(found)


def run_module():
    module = AnsibleModule(
        argument_spec=dict(
            mode=dict(type="str", choices=["exclusive", "shared", "none"]),
            cluster=dict(type="dict"),
            persist=dict(type="bool", default=True),
            initramfs=dict(type="str", choices=["auto", "never"], default="auto"),
            foreign_files=dict(type="str", choices=["fail", "warn"], default="fail"),
            config_root=dict(type="path", default="/"),
            sysfs_root=dict(type="path", default="/"),
        ),
        required_one_of=[["mode", "cluster"]],
        supports_check_mode=True,
    )
    refuse_action_options(module, ACTION_OPTIONS, "ainet.fabric.rdma_netns")
    params = module.params
    conf = os.path.join(params["config_root"], plan_lib.CONF)
    result = {"changed": False, "mode": None, "live_before": None, "live": None, "commands": [], "reboot_pending": [],
              "file": {"path": "/" + plan_lib.CONF, "changed": False, "present": os.path.isfile(conf)}}
    try:
        want = None if params["mode"] == "none" else params["mode"]
        result["mode"] = want
        runner = Runner(module, params["sysfs_root"], params["config_root"], error=plan_lib.NetnsError)
        host = Netns(runner)
        live = host.live()
        result["live_before"] = result["live"] = live
        own_text = read_text(conf) if os.path.isfile(conf) else None
        if want:
            conflicts, duplicates = plan_lib.foreign_options(host.other_files(), want)
            if conflicts and params["foreign_files"] == "fail":
                raise plan_lib.NetnsError("rdma_netns: another modprobe.d file sets a different ib_core netns_mode: "
                                          "%s; the wanted mode is %s. Fix: remove that option (or set "
                                          "rdma_netns_foreign_files: warn)" % ("; ".join(conflicts), want))
            for entry in conflicts + duplicates:
                module.warn("another modprobe.d file also sets ib_core netns_mode: %s" % entry)
        steps = plan_lib.plan(want, live, own_text, params["persist"])
        # Rebuilt when the file changes, and also when the image and the file disagree on its presence (a
        # rebuild that failed or was interrupted after the file was written is done again).
        image = host.initramfs() if params["initramfs"] == "auto" and (want or own_text is not None) else None
        rebuild = image[0] if image and (steps["file_changed"] or image[1] != (steps["file"] is not None)) else None
        if steps["live"]:
            result["commands"].append(" ".join(steps["live"]))
        if steps["file_changed"]:
            result["commands"].append(("write %s" % result["file"]["path"]) if steps["file"] else
                                      ("remove %s" % result["file"]["path"]))
        if rebuild:
            result["commands"].append(" ".join(rebuild))
        result["changed"] = bool(result["commands"])
        result["file"]["changed"] = steps["file_changed"]
        result["file"]["present"] = steps["file"] is not None
        if module._diff:
            after = want or live or "ib_core not loaded"
            result["diff"] = [{"before_header": "RDMA netns mode", "before": "%s\n" % (live or "ib_core not loaded"),
                               "after_header": "RDMA netns mode", "after": "%s\n" % after},
                              {"before_header": result["file"]["path"], "before": own_text or "",
                               "after_header": result["file"]["path"], "after": steps["file"] or ""}]
        if module.check_mode:
            others = other_netns() if steps["live"] else []
            if others:
                result["changed"] = steps["file_changed"] or bool(rebuild)  # what the real run will report
                result["reboot_pending"].append(
                    "RDMA netns mode %s: the kernel will refuse the live change while %d other network namespace(s) "
                    "exist; ib_core gets netns_mode=%s at the next boot" % (want, len(others), plan_lib.PARAM[want]))
            module.exit_json(**result)
        if steps["file_changed"]:
            if steps["file"]:
                write_atomic(conf, steps["file"], "0644")
            else:
                remove([conf])
        if rebuild:
            rc, out, err = runner.run(rebuild, check=False)
            if rc != 0:
                detail = " ".join((err or out).split())[-300:]  # the end of the tool's output says why
                raise plan_lib.NetnsError("rdma_netns: %s failed (rc %d): %s" % (" ".join(rebuild), rc, detail))
        if steps["live"]:
            rc, out, err = runner.run(steps["live"], check=False)
            if rc != 0 and plan_lib.busy(err + out) and steps["file"]:
                result["changed"] = steps["file_changed"] or bool(rebuild)
                result["reboot_pending"].append(
                    "RDMA netns mode %s: the kernel refuses a live change while other network namespaces exist "
                    "(%s); ib_core gets netns_mode=%s at the next boot"
                    % (want, one_line(err or out, 120), plan_lib.PARAM[want]))
            elif rc != 0:
                detail = one_line(err or out, 300)
                raise plan_lib.NetnsError("rdma_netns: %s failed (rc %d): %s" % (" ".join(steps["live"]), rc, detail))
            else:
                result["live"] = host.live()
                if result["live"] != want:
                    raise plan_lib.NetnsError("rdma_netns: read back after 'rdma system set netns %s': the mode is %s"
                                              % (want, result["live"]))
    except FabricError as exc:
        module.fail_json(msg=str(exc), **result)
    except OSError as exc:  # a read-only /etc (image-based OS), a full disk
        module.fail_json(msg="rdma_netns: %s: %s" % (exc.filename or "", exc.strerror or exc), **result)
    module.exit_json(**result)


def main():
    run_module()


if __name__ == "__main__":
    main()
