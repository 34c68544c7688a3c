"""The network-namespace lab: GPU nodes, one ToR per rail, a management network.

Every piece lives in a network namespace of its own, named ``ainet-*``; none is
connected to the machine's own namespace, so no lab packet can leave the lab.

* ``ainet-mgmt``: bridge ``br-mgmt`` with 10.250.0.1/24, the management gateway.
* ``ainet-<host>``: a GPU node. ``eth0`` (management, default route via
  10.250.0.1) and one veth per rail named like a ConnectX port; the peer end
  sits in the rail's ToR.
* ``ainet-tor<r>``: rail r's ToR, a router. In ``exclusive`` and ``p2p`` mode
  every port is a routed port holding the node subnet's gateway; in ``shared``
  mode the ports are bridged under ``br0``, which holds the rail gateway.

Ansible reaches a node through an interpreter wrapper that runs
``ip netns exec ainet-<host> python3`` (connection: local), written under the
lab directory together with an inventory.

Usage: python tests/lab/lab.py up|down [--dir DIR] [--inventory INV]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import yaml

MGMT_NS = "ainet-mgmt"
MGMT_NET = "10.250.0"
TOR_MTU = 9216


def sh(*args, check=True, ns=None):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), result.stderr.strip()))
    return result.stdout


def ip(*args, ns=None, check=True):
    return sh("ip", *args, ns=ns, check=check)


def namespaces():
    out = subprocess.run(["ip", "-j", "netns", "list"], capture_output=True, text=True, check=False).stdout
    return [n["name"] for n in json.loads(out or "[]")]


def down():
    for name in namespaces():
        if name.startswith("ainet-"):
            subprocess.run(["ip", "netns", "del", name], check=False)


def node_ns(host):
    return "ainet-" + host


def up(plan, hosts, interfaces, lab_dir, python="/usr/bin/python3"):
    """Create the lab for ``plan`` (from rail_plan).  ``hosts`` maps host -> management index."""
    down()
    mode = plan["cluster"]["addressing"]["mode"]
    ip("netns", "add", MGMT_NS)
    ip("link", "set", "lo", "up", ns=MGMT_NS)
    ip("link", "add", "br-mgmt", "type", "bridge", ns=MGMT_NS)
    ip("addr", "add", MGMT_NET + ".1/24", "dev", "br-mgmt", ns=MGMT_NS)
    ip("link", "set", "br-mgmt", "up", ns=MGMT_NS)
    for name, tor in sorted(plan["tors"].items()):
        ns = "ainet-" + name
        ip("netns", "add", ns)
        ip("link", "set", "lo", "up", ns=ns)
        sh("sysctl", "-qw", "net.ipv4.ip_forward=1", ns=ns)
        if mode == "shared":
            ip("link", "add", "br0", "mtu", str(TOR_MTU), "type", "bridge", ns=ns)
            for svi in tor["svis"]:
                ip("addr", "add", svi["address"], "dev", "br0", ns=ns)
            ip("link", "set", "br0", "up", ns=ns)
    os.makedirs(os.path.join(lab_dir, "bin"), exist_ok=True)
    inventory_hosts = {}
    for host, index in sorted(hosts.items()):
        ns = node_ns(host)
        ip("netns", "add", ns)
        ip("link", "set", "lo", "up", ns=ns)
        # No IPv6 duplicate address detection: the lab's state settles at once.
        sh("sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0", ns=ns)
        mgmt_peer = "m-%s" % host[-8:]
        ip("link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", mgmt_peer, "netns", MGMT_NS)
        ip("link", "set", mgmt_peer, "master", "br-mgmt", "up", ns=MGMT_NS)
        ip("addr", "add", "%s.%d/24" % (MGMT_NET, 10 + index), "dev", "eth0", ns=ns)
        ip("link", "set", "eth0", "up", ns=ns)
        ip("route", "add", "default", "via", MGMT_NET + ".1", ns=ns)
        node = plan["nodes"][host]
        for entry in node["rails"]:
            tor_ns = "ainet-" + entry["tor"]
            ifname = interfaces[entry["rail"] - 1]
            port = entry["tor_port"]
            ip("link", "add", ifname, "netns", ns, "type", "veth", "peer", "name", port, "netns", tor_ns)
            ip("link", "set", port, "mtu", str(TOR_MTU), ns=tor_ns)
            # IPv4 rails: no IPv6 chatter (RS, MLD) to blur the per-NIC packet counters.
            sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % port, ns=tor_ns)
            sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % ifname, ns=ns)
            if mode == "shared":
                ip("link", "set", port, "master", "br0", ns=tor_ns)
            else:
                ip("addr", "add", "%s/%d" % (entry["gateway"], entry["prefix"]), "dev", port, ns=tor_ns)
            ip("link", "set", port, "up", ns=tor_ns)
        wrapper = os.path.join(lab_dir, "bin", "python-" + host)
        with open(wrapper, "w") as handle:
            handle.write("#!/bin/sh\nexec ip netns exec %s %s \"$@\"\n" % (ns, python))
        os.chmod(wrapper, 0o755)
        inventory_hosts[host] = {
            "fabric_node_id": node["node_id"],
            "ansible_connection": "local",
            "ansible_python_interpreter": wrapper,
            "rail_network_config_root": os.path.join(lab_dir, "root", host),
            "rail_network_persist": "networkd",
        }
    return inventory_hosts


def write_inventory(lab_dir, cluster, inventory_hosts, interfaces):
    inv = os.path.join(lab_dir, "inventory")
    os.makedirs(os.path.join(inv, "group_vars"), exist_ok=True)
    with open(os.path.join(inv, "group_vars", "all.yml"), "w") as handle:
        yaml.safe_dump({"fabric_cluster": cluster}, handle)
    with open(os.path.join(inv, "hosts.yml"), "w") as handle:
        yaml.safe_dump({"all": {"children": {"gpu_nodes": {
            "hosts": inventory_hosts, "vars": {"fabric_rail_interfaces": interfaces}}}}}, handle)
    return inv


def load_inventory(path):
    """Read an inventory directory laid out like inventories/lab."""
    with open(os.path.join(path, "hosts.yml")) as handle:
        hosts = yaml.safe_load(handle)["all"]["children"]["gpu_nodes"]["hosts"]
    with open(os.path.join(path, "group_vars", "all", "fabric.yml")) as handle:
        cluster = yaml.safe_load(handle)["fabric_cluster"]
    with open(os.path.join(path, "group_vars", "gpu_nodes.yml")) as handle:
        interfaces = yaml.safe_load(handle)["fabric_rail_interfaces"]
    return cluster, {h: v["fabric_node_id"] for h, v in hosts.items()}, interfaces


def build(cluster, node_ids, interfaces, lab_dir):
    """Plan, create the lab, write its inventory; returns the inventory path and the plan."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path.insert(0, os.path.join(root, "build", ".collections"))
    from ansible_collections.ainet.fabric.plugins.module_utils.rail_plan import rail_plan
    plan = rail_plan(cluster, node_ids)
    order = {h: i + 1 for i, h in enumerate(sorted(node_ids, key=node_ids.get))}
    inventory_hosts = up(plan, order, interfaces, lab_dir)
    return write_inventory(lab_dir, cluster, inventory_hosts, interfaces), plan


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description="network-namespace lab for ainet.fabric")
    parser.add_argument("action", choices=["up", "down"])
    parser.add_argument("--dir", default=os.path.join(root, "build", "lab"))
    parser.add_argument("--inventory", default=os.path.join(root, "inventories", "lab"))
    args = parser.parse_args()
    if args.action == "down":
        down()
        print("lab removed")
        return 0
    cluster, node_ids, interfaces = load_inventory(args.inventory)
    inv, plan = build(cluster, node_ids, interfaces, args.dir)
    print("lab up: %d nodes, %d ToRs; inventory %s" % (len(plan["nodes"]), len(plan["tors"]), inv))
    print("try: ansible-playbook -i %s playbooks/hosts.yml" % inv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
