#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: rail_interfaces
short_description: Configure a GPU node's rail NICs from the cluster plan, in one call
version_added: 0.1.0
author: ainet.fabric contributors (@ainet)
description:
  - Computes the node's slice of the rail plan from O(cluster) and O(node_id), reads the live state
    with C(ip -j) (links, addresses, routes of all tables, rules) and applies only the difference with
    one C(ip -batch) run. It manages MTU, link up, addresses, a policy-routing table per rail NIC (connected
    route and default via the rail gateway), C(from <address>) rules, the keep-off rule
    (C(not to <supernet> lookup main)), the aggregate supernet route, and the ARP / rp_filter sysctls.
  - InfiniBand mode configures addresses and MTU only.
  - Writes persistent configuration (systemd-networkd, netplan or NetworkManager keyfiles, plus a
    sysctl.d file) so the state survives a reboot. Runtime and persistent state are both compared, so a
    second run reports no change.
  - Refuses, before changing anything, to touch an interface that carries the default route or the
    Ansible connection, an interface that does not exist, an MTU above the NIC's maximum, or a supernet
    that overlaps a management address.
  - Anything it did not create (other addresses, routes, rules) is left alone unless O(prune=true).
options:
  cluster:
    description: The cluster model (C(fabric_cluster)).
    type: dict
    required: true
  node_id:
    description: The node's id (C(fabric_node_id)).
    type: raw
    required: true
  interfaces:
    description: The node's rail NICs, rail 1 first (C(fabric_rail_interfaces)).
    type: list
    elements: str
    required: true
  persist:
    description:
      - Which persistent configuration to write. V(auto) picks netplan when C(/etc/netplan) and the
        C(netplan) command exist, NetworkManager when it is running, systemd-networkd otherwise.
      - V(none) changes runtime state only.
    type: str
    choices: [auto, networkd, netplan, nm, none]
    default: auto
  config_root:
    description: Root directory for the persistent files (for image builds and tests).
    type: path
    default: /
  prune:
    description:
      - Also remove addresses on the rail NICs, and routes in the rail tables, that the plan does not have.
    type: bool
    default: false
  protect_interfaces:
    description: Interfaces never to touch, in addition to the detected management path.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: Computes the same changes and reports them without running them.
  diff_mode:
    support: full
    description: Shows the managed runtime state before and after, and each persistent file.
requirements:
  - iproute2 with JSON output (C(ip -j))
"""

EXAMPLES = r"""
- name: Configure the rail NICs
  ainet.fabric.rail_interfaces:
    cluster: "{{ fabric_cluster }}"
    node_id: "{{ fabric_node_id }}"
    interfaces: "{{ fabric_rail_interfaces }}"
"""

RETURN = r"""
commands:
  description: The C(ip -batch) lines run (or, in check mode, that would run).
  returned: always
  type: list
  elements: str
sysctls:
  description: The sysctl values written (or that would be).
  returned: always
  type: dict
files:
  description: Persistent files written or removed (or that would be).
  returned: always
  type: list
  elements: str
renderer:
  description: The persistent configuration backend used.
  returned: always
  type: str
service:
  description:
    - With systemd-networkd as the backend and O(config_root=/), what C(systemctl is-enabled) and
      C(is-active) say of C(systemd-networkd.service), so the role enables it only when needed.
  returned: when the backend is networkd
  type: dict
  sample: {unit: systemd-networkd.service, enabled: disabled, active: inactive}
protected:
  description: Interfaces the module refused to touch, with the reason.
  returned: always
  type: dict
rails:
  description: This node's rail plan entries, each with its interface.
  returned: always
  type: list
  elements: dict
"""

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ainet.fabric.plugins.module_utils.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils import netcfg_render
from ansible_collections.ainet.fabric.plugins.module_utils import rail_links
from ansible_collections.ainet.fabric.plugins.module_utils.rail_plan import check_interfaces, rail_addresses


class Host(object):
    """Thin command runner around iproute2 and /proc/sys."""

    def __init__(self, module):
        self.module = module
        self.ip = module.get_bin_path("ip", required=True)

    def run(self, args, data=None):
        rc, out, err = self.module.run_command([self.ip] + args, data=data, binary_data=data is not None)
        if rc != 0:
            self.module.fail_json(msg="`ip %s` failed: %s" % (" ".join(args), (err or out).strip()))
        return out

    def read(self, family):
        flag = ["-6"] if family == 6 else ["-4"]
        links = rail_links.parse_links(self.run(["-j", "-d", "addr", "show"]))
        routes = rail_links.parse_routes(self.run(flag + ["-j", "route", "show", "table", "all"]), family)
        rules = rail_links.parse_rules(self.run(flag + ["-j", "rule", "show"]), family)
        return links, routes, rules

    @staticmethod
    def read_sysctls(paths):
        values = {}
        for path in paths:
            try:
                with open("/proc/sys/" + path) as handle:
                    values[path] = handle.read().strip()
            except OSError:
                values[path] = None
        return values

    def write_sysctls(self, values):
        for path, value in values.items():
            try:
                with open("/proc/sys/" + path, "w") as handle:
                    handle.write(value)
            except OSError as exc:
                self.module.fail_json(msg="could not set %s to %s: %s" % (path.replace("/", "."), value, exc))


def pick_renderer(persist, root):
    if persist != "auto":
        return persist
    if os.path.isdir(os.path.join(root, "etc/netplan")) and any(
            os.path.exists(p) for p in ("/usr/sbin/netplan", "/usr/bin/netplan")):
        return "netplan"
    if os.path.isdir("/run/NetworkManager") and os.path.exists(os.path.join(root, "etc/NetworkManager")):
        return "nm"
    return "networkd"


def unit_state(module, unit):
    """What systemctl says of a unit, or None where there is no systemctl."""
    systemctl = module.get_bin_path("systemctl")
    if not systemctl:
        return None
    state = {"unit": unit}
    for verb, key in (("is-enabled", "enabled"), ("is-active", "active")):
        _rc, out, _err = module.run_command([systemctl, verb, unit])
        state[key] = out.strip() or "unknown"
    return state


def file_changes(root, files, renderer):
    """Compare rendered files with disk; returns (writes {abs: (content, mode)}, removals, diffs)."""
    writes, removals, diffs = {}, [], []
    for rel, (content, mode) in sorted(files.items()):
        path = os.path.join(root, rel)
        before = None
        if os.path.exists(path):
            with open(path) as handle:
                before = handle.read()
            current_mode = "%04o" % (os.stat(path).st_mode & 0o7777)
        else:
            current_mode = None
        if before != content or current_mode != mode:
            writes[path] = (content, mode)
            diffs.append({"before_header": path, "after_header": path, "before": before or "", "after": content})
    dirs = {netcfg_render.NETWORKD_DIR, netcfg_render.NETWORKD_CONF_DIR, netcfg_render.NETPLAN_DIR,
            netcfg_render.NM_DIR}
    if renderer != "none":
        for rel_dir in sorted(dirs):
            directory = os.path.join(root, rel_dir)
            if not os.path.isdir(directory):
                continue
            for name in sorted(os.listdir(directory)):
                rel = "%s/%s" % (rel_dir, name)
                if netcfg_render.owned(rel) and rel not in files:
                    removals.append(os.path.join(root, rel))
                    diffs.append({"before_header": os.path.join(root, rel), "after_header": "(removed)",
                                  "before": "(ainet.fabric file)\n", "after": ""})
    return writes, removals, diffs


def write_files(module, writes, removals, root):
    for path, (content, mode) in writes.items():
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".ainet-")
        with os.fdopen(fd, "w") as handle:
            handle.write(content)
        module.atomic_move(tmp, path)
        # atomic_move gives a new file the umask's mode and keeps an old file's mode:
        # set ours afterwards (netplan and NetworkManager files must be 0600).
        os.chmod(path, int(mode, 8))
        if path.endswith("/" + netcfg_render.KEEPOFF_UNIT):
            wants = os.path.join(root, netcfg_render.SYSTEMD_DIR, "multi-user.target.wants")
            os.makedirs(wants, exist_ok=True)
            link = os.path.join(wants, netcfg_render.KEEPOFF_UNIT)
            if not os.path.islink(link):
                os.symlink("/" + netcfg_render.SYSTEMD_DIR + "/" + netcfg_render.KEEPOFF_UNIT, link)
    for path in removals:
        os.unlink(path)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            cluster=dict(type="dict", required=True),
            node_id=dict(type="raw", required=True),
            interfaces=dict(type="list", elements="str", required=True),
            persist=dict(type="str", default="auto", choices=["auto", "networkd", "netplan", "nm", "none"]),
            config_root=dict(type="path", default="/"),
            prune=dict(type="bool", default=False),
            protect_interfaces=dict(type="list", elements="str", default=[]),
        ),
        supports_check_mode=True,
    )
    params = module.params
    try:
        cluster = load_cluster(params["cluster"])
        interfaces = check_interfaces(cluster, params["interfaces"])
        rails = rail_addresses(params["cluster"], params["node_id"])
    except FabricError as exc:
        module.fail_json(msg=str(exc))
    for entry in rails:
        entry["interface"] = interfaces[entry["rail"] - 1]

    host = Host(module)
    links, routes, rules = host.read(cluster.family)
    v4_routes = routes if cluster.family == 4 else rail_links.parse_routes(
        host.run(["-4", "-j", "route", "show", "table", "all"]), 4)
    ssh = os.environ.get("SSH_CONNECTION", "").split()
    connection_ip = ssh[2] if len(ssh) == 4 else None
    peer_ip = ssh[0] if len(ssh) == 4 else None
    protected = rail_links.protected_interfaces(links, {**v4_routes, **routes}, connection_ip,
                                                params["protect_interfaces"])
    try:
        rail_links.check_safe(cluster, rails, links, protected, peer_ip)
    except FabricError as exc:
        module.fail_json(msg=str(exc), protected=protected)

    desired = rail_links.desired_state(cluster, rails)
    current = rail_links.current_state(desired, links, routes, rules, Host.read_sysctls(desired["sysctls"]))
    commands, sysctls = rail_links.plan_changes(desired, current, params["prune"])

    root = params["config_root"]
    renderer = pick_renderer(params["persist"], root)
    files = netcfg_render.render(renderer, cluster, rails) if renderer != "none" else {}
    writes, removals, file_diffs = file_changes(root, files, renderer)

    changed = bool(commands or sysctls or writes or removals)
    result = dict(changed=changed, commands=commands, sysctls=sysctls, renderer=renderer,
                  files=sorted(list(writes) + removals), protected=protected, rails=rails)
    if renderer == "networkd" and os.path.realpath(root) == "/":
        result["service"] = unit_state(module, "systemd-networkd.service")
    if module._diff:
        after = rail_links.expected_after(desired, current, params["prune"])
        result["diff"] = [{"before_header": "rail NIC runtime state", "after_header": "rail NIC runtime state",
                           "before": rail_links.describe(current), "after": rail_links.describe(after)}] + file_diffs
    if module.check_mode or not changed:
        module.exit_json(**result)

    if commands:
        host.run(["-batch", "-"], data="\n".join(commands) + "\n")
    host.write_sysctls(sysctls)
    write_files(module, writes, removals, root)

    links, routes, rules = host.read(cluster.family)
    verify = rail_links.current_state(desired, links, routes, rules, Host.read_sysctls(desired["sysctls"]))
    missing = rail_links.missing_after(desired, verify)
    if missing:
        module.fail_json(msg="applied, but the live state still lacks: %s" % "; ".join(missing), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
