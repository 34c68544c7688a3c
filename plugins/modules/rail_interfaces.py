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
  - Builds the node's complete desired rail state (the intent) from its flat desired state - O(cluster_name),
    O(fabrics) and O(rails) - reads the live state with C(ip -j) (links, addresses, routes and rules of both
    families) and applies only the difference with C(ip -batch).
  - In a play the action plugin of the same name takes O(cluster), O(node_id) and O(interfaces) instead,
    validates the model and plans the node's rails on the controller, and sends the module only that flat
    state; the model and the planner never reach the host.
  - Manages MTU, link up, rail addresses, one policy-routing table per rail NIC that routes only the
    fabric's prefixes (the rail subnet and the RDMA supernet via the rail gateway), a
    C(from <address> lookup <table>) rule per rail NIC, the aggregate supernet route in C(main), and the
    ARP / reverse-path (IPv4) or RA (IPv6) sysctls. InfiniBand mode configures addresses and MTU only.
  - Owns exactly its objects - the fabric's rule priorities and tables, routes and rules with protocol
    C(ainet) (211), the objects listed in its state file C(/var/lib/ainet-fabric/rail_interfaces.json),
    and its files (see the role README) - and removes those it no longer wants. A foreign rule or route
    in its priorities or tables, or a foreign address holding a planned address, fails the run before
    any change and is named, unless O(takeover=true).
  - Writes persistent configuration (systemd-networkd, netplan or NetworkManager keyfiles, plus sysctl.d)
    and removes its files of another backend. With O(manage_service=true) it enables systemd-networkd
    when that is the backend and makes the backend re-read changed files.
  - Refuses, before changing anything, to touch an interface on the management path (every default
    route of either family, the route to the controller, the connection's address, and the devices
    below them), a device that cannot be a rail NIC, an MTU above the NIC's maximum, or a supernet that
    overlaps a management address. Runs on one host never interleave (a lock).
  - IPv6 addresses go through duplicate address detection before routes that use them are added.
    After applying, the live state is read back and any remainder is applied again.
extends_documentation_fragment:
  - ainet.fabric.host.interfaces
options:
  cluster:
    description:
      - The cluster model (C(fabric_cluster)). Handled on the controller by the action plugin, which validates
        it and sends the module O(cluster_name), O(fabrics) and O(rails) instead; the module refuses it.
    type: dict
  node_id:
    description: The node's id (C(fabric_node_id)); with O(cluster), handled by the action plugin.
    type: raw
  cluster_name:
    description:
      - The cluster's name (C(fabric_cluster.name)); it keys the state file and names the cluster in messages.
      - Given by the action plugin; required when the module runs on its own.
    type: str
  fabrics:
    description:
      - Every fabric of the cluster, in declaration order, with what the host needs of it.
      - Given by the action plugin; required when the module runs on its own.
    type: list
    elements: dict
    suboptions:
      name:
        description: The fabric's name (C(default) for the single-fabric form).
        type: str
        required: true
      field_prefix:
        description: The fabric's inventory path, for messages (C(fabric_cluster) or C(fabric_cluster.fabrics.<name>)).
        type: str
        required: true
      family:
        description: The address family.
        type: int
        choices: [4, 6]
        required: true
      supernet:
        description: The fabric's RDMA supernet.
        type: str
        required: true
      rails:
        description: The number of rails.
        type: int
        required: true
      table_base:
        description: Rail C(r) uses routing table O(fabrics[].table_base) + C(r); the module owns those tables.
        type: int
        required: true
      rule_priority:
        description: Rail C(r)'s rule has priority O(fabrics[].rule_priority) + C(r); the module owns those priorities.
        type: int
        required: true
      policy_routing:
        description: Whether the fabric gets tables, rules and routes (false for InfiniBand).
        type: bool
        required: true
      aggregate_route:
        description: Whether the supernet also gets a route in C(main) via rail 1.
        type: bool
        required: true
  rails:
    description:
      - This node's entries of the IP plan, each with its O(rails[].interface) (the action plugin adds it); the
        entries are returned as the module received them.
      - Given by the action plugin; required when the module runs on its own.
    type: list
    elements: dict
    suboptions:
      fabric:
        description: The fabric's name.
        type: str
        required: true
      rail:
        description: The rail number, from 1.
        type: int
        required: true
      interface:
        description: The rail NIC.
        type: str
        required: true
      address:
        description: The address with its prefix length.
        type: str
        required: true
      ip:
        description: The address alone.
        type: str
        required: true
      subnet:
        description: The subnet the address is in.
        type: str
        required: true
      gateway:
        description: The rail gateway (none for InfiniBand).
        type: str
      mtu:
        description: The MTU.
        type: int
        required: true
      table:
        description: The rail's routing table.
        type: int
      priority:
        description: The rail's rule priority.
        type: int
      prefix:
        description: The address's prefix length (returned only).
        type: int
      pod_ranges:
        description: The ranges left for pods on this node's rail subnet (returned only).
        type: list
        elements: str
      tor:
        description: The rail's ToR (returned only).
        type: str
      tor_port:
        description: The ToR port facing this NIC (returned only).
        type: str
  persist:
    description:
      - Which persistent configuration to write. V(auto) picks netplan when C(/etc/netplan) and the
        C(netplan) command exist, NetworkManager when it is running, systemd-networkd otherwise.
      - V(none) changes runtime state only (and removes the collection's files).
    type: str
    choices: [auto, networkd, netplan, nm, none]
    default: auto
  config_root:
    description: Root directory for the persistent files and the state file (for image builds and tests).
    type: path
    default: /
  prune:
    description:
      - Also remove addresses on the rail NICs, and routes through them, that neither the plan nor the
        collection created. The planned addresses are never removed.
    type: bool
    default: false
  takeover:
    description:
      - Delete foreign rules and routes found in the fabric's own rule priorities and tables, and replace
        a foreign route where a planned one belongs, instead of failing.
    type: bool
    default: false
  protect_interfaces:
    description: Interfaces never to touch, in addition to the detected management path.
    type: list
    elements: str
    default: []
  manage_service:
    description:
      - Enable and start systemd-networkd when it is the backend, and make the backend re-read changed
        files (C(networkctl reload), C(netplan generate), C(nmcli connection reload)). Only with
        O(config_root=/).
    type: bool
    default: true
  lock_timeout:
    description: Seconds to wait for another run on the same host to finish.
    type: int
    default: 120
attributes:
  check_mode:
    support: full
    description: Computes the same changes and reports them without running them.
  diff_mode:
    support: full
    description: Shows the managed runtime state before and after, and each persistent file.
requirements:
  - iproute2 with JSON and numeric output (C(ip -j -N))
"""

EXAMPLES = r"""
- name: Configure the rail NICs (the action plugin plans them on the controller)
  ainet.fabric.rail_interfaces:
    cluster: "{{ fabric_cluster }}"
    node_id: "{{ fabric_node_id }}"
    interfaces: "{{ fabric_rail_interfaces }}"

- name: The same node from its flat desired state alone (e.g. ansible -m)
  ainet.fabric.rail_interfaces:
    cluster_name: pod1
    fabrics:
      - name: default
        field_prefix: fabric_cluster
        family: 4
        supernet: 10.0.0.0/16
        rails: 1
        table_base: 150
        rule_priority: 1000
        policy_routing: true
        aggregate_route: false
    rails:
      - fabric: default
        rail: 1
        interface: ens1f0np0
        address: 10.0.0.3/24
        ip: 10.0.0.3
        subnet: 10.0.0.0/24
        gateway: 10.0.0.1
        mtu: 9000
        table: 151
        priority: 1001
    persist: none
"""

RETURN = r"""
commands:
  description: The C(ip) commands run (or, in check mode, that would run), in order.
  returned: always
  type: list
  elements: str
sysctls:
  description: The sysctl values written (or that would be).
  returned: always
  type: dict
removed:
  description: Objects removed because the collection no longer wants them (or foreign ones, with O(prune) or O(takeover)).
  returned: always
  type: list
  elements: str
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
  description: What was done about the backend's service (enable, reload), or would be in check mode.
  returned: always
  type: list
  elements: str
shadowing:
  description: Rules of other tools in front of the rail rules that can send rail traffic elsewhere (also warnings).
  returned: always
  type: list
  elements: str
conflicts:
  description: Foreign objects in the way (the run failed before any change).
  returned: on conflict
  type: list
  elements: str
applied:
  description: On a failure while applying, the commands that had already been applied.
  returned: on failure after a change
  type: list
  elements: str
protected:
  description: Interfaces the module refuses to touch, with the reason.
  returned: always
  type: dict
rails:
  description: This node's rail plan entries, each with its interface.
  returned: always
  type: list
  elements: dict
"""

import os
import re
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ainet.fabric.plugins.module_utils.host import host_files
from ansible_collections.ainet.fabric.plugins.module_utils.host import iproute
from ansible_collections.ainet.fabric.plugins.module_utils.host import netcfg_render
from ansible_collections.ainet.fabric.plugins.module_utils.host import rail_reconcile
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host import rail_intent
from ansible_collections.ainet.fabric.plugins.module_utils.host.runner import Runner, refuse_action_options

RELOAD = {"networkd": ["networkctl", "reload"], "netplan": ["netplan", "generate"],
          "nm": ["nmcli", "connection", "reload"]}
PASSES = 3


class ApplyError(Exception):
    def __init__(self, message, applied):
        super().__init__(message)
        self.applied = applied


class Host(object):
    """Runs iproute2 and reads /proc/sys; nothing else touches the host's network state."""

    def __init__(self, module):
        self.runner = Runner(module)
        self.ip = self.runner.bin("ip", required=True)

    def run(self, args, data=None):
        return self.runner.run([self.ip] + args, check=False, data=data)

    def query(self, args):
        return self.runner.run([self.ip] + args)[1]

    def read(self, sysctl_paths, peer=None):
        """Links, routes and rules of both families: two ``ip -batch`` runs, one per family."""
        routes, rules, parts = {}, [], []
        for family in (4, 6):
            args = ["-N", "-j", "-d", "-%d" % family, "-batch", "-"]
            rc, out, err = self.run(args, data=iproute.READ_BATCH[family])
            if rc != 0:
                raise FabricError("`ip %s` failed: %s" % (" ".join(args), (err or out).strip()))
            family_routes, family_rules, links = iproute.read_family(out, family)
            routes.update(family_routes)
            rules += family_rules
            parts.append(links)
        links = iproute.merge_links(*parts)
        peer_dev = None
        if peer:
            rc, out, _err = self.run(["-j", "route", "get", peer])
            hops = iproute.load(out, "ip -j route get") if rc == 0 else []
            peer_dev = hops[0].get("dev") if hops else None
        return rail_reconcile.Live(links, routes, rules, self.read_sysctls(sysctl_paths), peer_dev)

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

    @staticmethod
    def write_sysctls(values):
        for path, value in values.items():
            try:
                with open("/proc/sys/" + path, "w") as handle:
                    handle.write(value)
            except OSError as exc:
                raise FabricError("could not set %s to %s: %s" % (path.replace("/", "."), value, exc)) from None

    def batch(self, family, lines, applied, tolerant=False):
        args = (["-%d" % family] if family else []) + (["-force"] if tolerant else []) + ["-batch", "-"]
        rc, out, err = self.run(args, data="\n".join(lines) + "\n")
        if rc == 0 or tolerant:
            applied += ["ip %s%s" % ("-%d " % family if family else "", line) for line in lines]
            return
        match = re.search(r"Command failed -:(\d+)", err or "")
        done = int(match.group(1)) - 1 if match else 0
        applied += ["ip %s%s" % ("-%d " % family if family else "", line) for line in lines[:done]]
        failed = lines[done] if done < len(lines) else "?"
        text = re.sub(r"\s*Command failed -:\d+\s*", " ", err or out).strip()
        raise ApplyError("`ip %s%s` failed: %s" % ("-%d " % family if family else "", failed, text), applied)

    def wait_dad(self, addresses, seconds=8.0):
        """Wait until the new IPv6 addresses leave the tentative state; fail on a duplicate."""
        wanted = {(a.ifname, a.cidr) for a in addresses}
        deadline = time.monotonic() + seconds
        while True:
            links = iproute.parse_links(self.query(["-6", "-j", "addr", "show"]))
            pending, failed = [], []
            for ifname, cidr in sorted(wanted):
                attrs = links.get(ifname).addr_attrs.get(cidr) if ifname in links else None
                if attrs and attrs["dadfailed"]:
                    failed.append("%s on %s" % (cidr, ifname))
                elif attrs and attrs["tentative"]:
                    pending.append("%s on %s" % (cidr, ifname))
            if failed:
                raise FabricError("duplicate address detection failed for %s: another host on the rail holds "
                                  "the address" % ", ".join(failed))
            if not pending:
                return
            if time.monotonic() >= deadline:
                raise FabricError("IPv6 addresses still tentative after %d s: %s" % (seconds, ", ".join(pending)))
            time.sleep(0.1)


def pick_renderer(persist, root):
    if persist != "auto":
        return persist
    if os.path.isdir(os.path.join(root, "etc/netplan")) and any(
            os.path.exists(p) for p in ("/usr/sbin/netplan", "/usr/bin/netplan")):
        return "netplan"
    if os.path.isdir("/run/NetworkManager") and os.path.exists(os.path.join(root, "etc/NetworkManager")):
        return "nm"
    return "networkd"


def apply_plan(host, plan, applied):
    """Run a plan: sysctls, then removals, links and addresses, DAD, then routes and rules."""
    host.write_sysctls(plan.sysctls)
    for phases in (("remove",), ("links", "addresses"), ("routes",)):
        phase = phases[0]
        if phase == "routes" and plan.added_v6:
            host.wait_dad(plan.added_v6)
        steps = [(fam, line) for p, fam, line in plan.steps if p in phases]
        # Rules and routes go before the addresses they use; an object that vanished on its
        # own meanwhile (an address takes its routes along) is not an error: the read-back decides.
        for family in ((4, 6, None) if phase == "remove" else (None, 4, 6)):
            lines = [line for fam, line in steps if fam == family]
            if lines:
                host.batch(family, lines, applied, tolerant=phase == "remove")


def service_actions(module, renderer, files_changed, check):
    """Enable networkd when it is the backend; make the backend re-read changed files."""
    actions = []
    systemctl = module.get_bin_path("systemctl")
    if renderer == "networkd" and systemctl:
        _rc, out, _err = module.run_command([systemctl, "show", "-p", "UnitFileState", "-p", "ActiveState",
                                             "systemd-networkd.service"])
        state = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        if state.get("UnitFileState") != "enabled" or state.get("ActiveState") != "active":
            actions.append("systemctl enable --now systemd-networkd.service")
            if not check:
                rc, _out, err = module.run_command([systemctl, "enable", "--now", "systemd-networkd.service"])
                if rc != 0:
                    raise FabricError("could not enable systemd-networkd: %s" % err.strip())
    command = RELOAD.get(renderer)
    if files_changed and command and module.get_bin_path(command[0]):
        actions.append(" ".join(command))
        if not check:
            rc, _out, err = module.run_command([module.get_bin_path(command[0])] + command[1:])
            if rc != 0:
                module.warn("`%s` failed: %s" % (" ".join(command), err.strip()))
    return actions


def run(module):
    """Validate, read, reconcile and apply under the host lock (check mode reads without it)."""
    if module.check_mode:
        return converge(module)
    with host_files.Lock(module.params["config_root"], module.params["lock_timeout"]):
        return converge(module)


def converge(module):
    params = module.params
    check = module.check_mode
    root = params["config_root"]
    renderer = pick_renderer(params["persist"], root)
    intent = rail_intent.intent_from_state(params["cluster_name"], params["fabrics"], params["rails"], renderer)
    host = Host(module)
    ssh = os.environ.get("SSH_CONNECTION", "").split()
    connection_ip, peer_ip = (ssh[2], ssh[0]) if len(ssh) == 4 else (None, None)
    live = host.read(intent.sysctls, peer_ip)
    protected = rail_reconcile.protected_interfaces(live, connection_ip, params["protect_interfaces"])
    result = dict(changed=False, commands=[], sysctls={}, removed=[], files=[], renderer=renderer, service=[],
                  shadowing=[], protected=protected, rails=intent.rails)
    try:
        rail_reconcile.check_safe(intent, live, protected, peer_ip)
    except FabricError as exc:
        module.fail_json(msg=str(exc), **result)

    stored = host_files.read_record(root)
    previous = rail_reconcile.merge_records(*stored["fabrics"].values())
    plan = rail_reconcile.reconcile(intent, live, previous, params["prune"], params["takeover"])
    result.update(commands=plan.commands, sysctls=plan.sysctls, removed=plan.removed, shadowing=plan.shadowing)
    for text in plan.shadowing:
        module.warn(text)
    if plan.conflicts:
        module.fail_json(msg=str(rail_reconcile.conflict_error(intent, plan.conflicts)), conflicts=plan.conflicts,
                         **result)
    writes, removals, file_diffs = host_files.file_changes(root, intent.files, netcfg_render.owned,
                                                           netcfg_render.SCAN_DIRS)
    new_record = rail_reconcile.record_of(intent)
    record_changed = stored["fabrics"] != {intent.name: new_record}
    result["files"] = sorted(list(writes) + removals)
    blocked = host_files.unwritable(list(writes) + removals + [os.path.join(root, host_files.RECORD_FILE)])
    if blocked:
        module.fail_json(msg="cannot write the persistent configuration, nothing was changed: %s" % "; ".join(blocked),
                         **result)
    manage = params["manage_service"] and os.path.realpath(root) == "/"
    changed = bool(plan or writes or removals)
    if module._diff:
        result["diff"] = [{"before_header": "rail runtime state", "after_header": "rail runtime state",
                           "before": rail_reconcile.describe(intent, live),
                           "after": rail_reconcile.describe_intent(intent, live, plan)}] + file_diffs
    if check:
        if manage:
            result["service"] = service_actions(module, renderer, bool(writes or removals), True)
        result["changed"] = changed or bool(result["service"])
        return result

    applied = []
    recorded = stored["fabrics"]
    try:
        if plan or record_changed:
            # Recorded before the change, so that a run cut short still knows what it created.
            recorded = dict(stored["fabrics"], **{intent.name: rail_reconcile.merge_records(
                stored["fabrics"].get(intent.name, {}), new_record)})
            host_files.write_record(root, recorded)
        attempt = 0
        while plan:
            apply_plan(host, plan, applied)
            # Read back: the kernel can take more than asked (a deleted address takes the routes
            # that use it); whatever is still missing or still stale gets another pass.
            live = host.read(intent.sysctls)
            plan = rail_reconcile.reconcile(intent, live, previous, params["prune"], params["takeover"])
            attempt += 1
            if plan and (plan.conflicts or attempt >= PASSES):
                left = rail_reconcile.verify(intent, live) + plan.removed + plan.conflicts
                raise ApplyError("applied, but the live state still differs: %s" % "; ".join(left or plan.commands),
                                 applied)
        for path, (content, mode) in writes.items():
            host_files.write_atomic(path, content, mode)
        host_files.remove(removals)
        if recorded != {intent.name: new_record}:
            host_files.write_record(root, {intent.name: new_record})
        if manage:
            result["service"] = service_actions(module, renderer, bool(writes or removals), False)
    except ApplyError as exc:
        module.fail_json(msg="%s (applied before the failure: %d command(s); a re-run continues from here)"
                         % (exc, len(exc.applied)), applied=exc.applied,
                         **dict(result, changed=bool(exc.applied)))
    except (FabricError, OSError) as exc:
        module.fail_json(msg=str(exc), applied=applied, **dict(result, changed=bool(applied)))
    result["commands"] = applied
    result["changed"] = changed or bool(result["service"])
    return result


# Options only the action plugin (the controller side) takes: the model never travels to the host.
ACTION_OPTIONS = ("cluster", "node_id", "interfaces")


def main():
    module = AnsibleModule(
        argument_spec=dict(rail_intent.ARGUMENT_SPEC, cluster=dict(type="dict"), node_id=dict(type="raw"),
                           interfaces=dict(type="raw")),
        supports_check_mode=True,
    )
    refuse_action_options(module, ACTION_OPTIONS, "ainet.fabric.rail_interfaces")
    missing = [name for name in ("cluster_name", "fabrics", "rails") if module.params[name] is None]
    if missing:
        module.fail_json(msg="rail_interfaces: missing required arguments: %s (or give cluster, node_id and "
                             "interfaces to the action plugin)" % ", ".join(missing))
    try:
        module.exit_json(**run(module))
    except (FabricError, TimeoutError) as exc:
        module.fail_json(msg=str(exc))


if __name__ == "__main__":
    main()
