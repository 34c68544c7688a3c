"""The lab: GPU nodes, one ToR per rail and a management network, all in network namespaces.

Every piece lives in a network namespace of its own, named ``<prefix>-*``; none is
connected to the machine's own namespace, so no lab packet can leave the lab.
The prefix is ``$AINET_LAB_PREFIX``, or ``al`` plus a hash of the checkout's path,
so two checkouts (or two test runs given their own prefix) never touch each
other's labs: ``down`` removes only namespaces and containers of its own prefix.

* ``<prefix>-mgmt``: bridge ``br-mgmt`` with 10.250.0.1/24, the management gateway.
* ``<prefix>-<host>``: a GPU node. ``eth0`` (management, default route via
  10.250.0.1) and one veth per rail named like a ConnectX port; the peer end
  sits in the rail's ToR.
* ``<prefix>-<tor>``: a ToR, a router. In ``exclusive`` and ``p2p`` mode
  every port is a routed port holding the node subnet's gateway; in ``shared``
  mode the ports are bridged under ``br0``, which holds the rail gateway.

Two kinds of node:

* ``netns`` (fast, for pytest): the bare namespace. Ansible runs the node's
  python through ``ip netns exec`` (an interpreter wrapper, connection local);
  the node shares /etc and systemd with the machine, so persistent files go to
  a per-host directory.
* ``containers`` (real hosts): a podman system container per node, booted with
  systemd and sshd from the Debian rootfs of ``rootfs.sh`` (an overlay per host,
  kept across restarts) and joined to the node's namespace. Ansible reaches it
  by SSH on its management address, through ``netns_proxy.py`` running inside
  ``<prefix>-mgmt``. ``reboot HOST`` stops the container, replaces its namespace
  by a fresh one (a reboot's blank network state) and boots it again.

Usage: python tests/lab/lab.py up|down|reboot [HOST] [--kind K] [--dir DIR] [--inventory INV|--spec JSON]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import yaml

from labname import prefix

LAB_USER, LAB_UID = "ops", 1000  # the lab nodes' login user (tests/lab/rootfs.sh)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MGMT_NET = "10.250.0"
TOR_MTU = 9216
CONTAINERS_CONF = """[containers]
# root here lacks CAP_SYS_RESOURCE: keep the limits below the machine's.
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
"""


def sh(*args, check=True, ns=None, env=None):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    result = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if check and result.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), result.stderr.strip()))
    return result.stdout


def ip(*args, ns=None, check=True):
    return sh("ip", *args, ns=ns, check=check)


def namespaces():
    out = subprocess.run(["ip", "-j", "netns", "list"], capture_output=True, text=True, check=False).stdout
    return [n["name"] for n in json.loads(out or "[]")]


def mgmt_ns():
    return prefix() + "-mgmt"


def node_ns(host):
    return prefix() + "-" + host


def overlay_source():
    return prefix() + "-lab"


def mgmt_ip(index):
    return "%s.%d" % (MGMT_NET, 10 + index)


# -- podman -----------------------------------------------------------------

def podman(lab_dir, *args, check=True):
    env = dict(os.environ, CONTAINERS_CONF=os.path.join(lab_dir, "containers.conf"))
    return sh("podman", *args, check=check, env=env)


def containers():
    if not shutil.which("podman"):
        return []
    out = subprocess.run(["podman", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True,
                         check=False).stdout
    return [n for n in out.split() if n.startswith(prefix() + "-")]


def overlay_mounts():
    with open("/proc/self/mounts") as handle:
        return [line.split()[1] for line in handle if line.split()[0] == overlay_source()]


def down():
    for name in containers():
        subprocess.run(["podman", "rm", "-f", "-t", "2", name], capture_output=True, check=False)
    for target in overlay_mounts():
        subprocess.run(["umount", target], check=False)
    for name in namespaces():
        if name.startswith(prefix() + "-"):
            subprocess.run(["ip", "netns", "del", name], check=False)


# -- namespaces ---------------------------------------------------------------

def make_mgmt():
    ip("netns", "add", mgmt_ns())
    ip("link", "set", "lo", "up", ns=mgmt_ns())
    ip("link", "add", "br-mgmt", "type", "bridge", ns=mgmt_ns())
    ip("addr", "add", MGMT_NET + ".1/24", "dev", "br-mgmt", ns=mgmt_ns())
    ip("link", "set", "br-mgmt", "up", ns=mgmt_ns())


def make_tor(name, tor, mode, number):
    ns = prefix() + "-" + name
    ip("netns", "add", ns)
    ip("link", "set", "lo", "up", ns=ns)
    # A router for both families; its own addresses skip duplicate address detection.
    sh("sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1",
       "net.ipv6.conf.default.accept_dad=0", "net.ipv6.conf.all.accept_dad=0", ns=ns)
    if mode == "shared":
        ip("link", "add", "br0", "address", mac(2, number, 0), "mtu", str(TOR_MTU),
           "type", "bridge", ns=ns)
        for svi in tor["svis"]:
            ip("addr", "add", svi["address"], "dev", "br0", ns=ns)
        ip("link", "set", "br0", "up", ns=ns)


def mac(kind, index, port):
    """A fixed MAC per NIC: a reboot keeps it, so no neighbour cache in the lab goes stale."""
    return "02:a1:%02x:%02x:%02x:%02x" % (kind, index // 256, index % 256, port)


def nic(interfaces, entry):
    """A plan entry's NIC: ``interfaces`` is a list (one fabric) or {fabric: list}."""
    if isinstance(interfaces, dict):
        return interfaces[entry["fabric"]][entry["rail"] - 1]
    return interfaces[entry["rail"] - 1]


def make_node(host, index, node, interfaces, modes, crossed=None):
    """The node's namespace as a freshly booted machine sees it: NICs present, no rail configuration.
    ``crossed``: two rails ``(a, b)`` of the node's first fabric whose cables are swapped at the ToR end (rail a's
    NIC reaches rail b's ToR and port, and the other way round), as a cabling mistake leaves them."""
    ns = node_ns(host)
    ip("netns", "add", ns)
    ip("link", "set", "lo", "up", ns=ns)
    # IPv6 rails keep duplicate address detection, as real hosts do: the role must wait for it.
    mgmt_peer = "m-%s" % host[-8:]
    ip("link", "add", "eth0", "address", mac(0, index, 0), "netns", ns, "type", "veth",
       "peer", "name", mgmt_peer, "address", mac(1, index, 0), "netns", mgmt_ns())
    ip("link", "set", mgmt_peer, "master", "br-mgmt", "up", ns=mgmt_ns())
    ip("addr", "add", mgmt_ip(index) + "/24", "dev", "eth0", ns=ns)
    ip("link", "set", "eth0", "up", ns=ns)
    ip("route", "add", "default", "via", MGMT_NET + ".1", ns=ns)
    far = dict(((entry["fabric"], entry["rail"]), (entry["tor"], entry["tor_port"])) for entry in node["rails"])
    if crossed:  # two rails of the node's first fabric
        first = node["rails"][0]["fabric"]
        one, two = (first, crossed[0]), (first, crossed[1])
        far[one], far[two] = far[two], far[one]
    for entry in node["rails"]:
        tor, port = far[(entry["fabric"], entry["rail"])]
        tor_ns = prefix() + "-" + tor
        ifname = nic(interfaces, entry)
        ip("link", "add", ifname, "address", mac(0, index, entry["rail"]), "netns", ns, "type", "veth",
           "peer", "name", port, "address", mac(1, index, entry["rail"]), "netns", tor_ns)
        ip("link", "set", port, "mtu", str(TOR_MTU), ns=tor_ns)
        if ":" not in entry["ip"]:
            # IPv4 rails: no IPv6 chatter (RS, MLD) to blur the per-NIC packet counters.
            sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % port, ns=tor_ns)
            sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % ifname, ns=ns)
        if modes[entry["fabric"]] == "shared":
            ip("link", "set", port, "master", "br0", ns=tor_ns)
        else:
            ip("addr", "add", "%s/%d" % (entry["gateway"], entry["prefix"]), "dev", port, ns=tor_ns)
        ip("link", "set", port, "up", ns=tor_ns)


# -- node kinds ----------------------------------------------------------------

def netns_host(host, node, lab_dir, python="/usr/bin/python3"):
    wrapper = os.path.join(lab_dir, "bin", "python-" + host)
    with open(wrapper, "w") as handle:
        handle.write("#!/bin/sh\nexec ip netns exec %s %s \"$@\"\n" % (node_ns(host), python))
    os.chmod(wrapper, 0o755)
    return {
        "fabric_node_id": node["node_id"],
        "ansible_connection": "local",
        # already root on the controller: the playbooks' become is not needed (nor sudo)
        "ansible_become": False,
        "ansible_python_interpreter": wrapper,
        "rail_network_config_root": os.path.join(lab_dir, "root", host),
        "rail_network_persist": "networkd",
    }


def ssh_key(lab_dir):
    key = os.path.join(lab_dir, "ssh", "id_ed25519")
    if not os.path.exists(key):
        os.makedirs(os.path.dirname(key), exist_ok=True)
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ainet-lab", "-f", key)
    return key


def host_rootfs(lab_dir, host, rootfs):
    """An overlay of the shared rootfs, private to the host and kept until ``down``."""
    base = os.path.join(lab_dir, "hosts", host)
    merged = os.path.join(base, "rootfs")
    if merged in overlay_mounts():
        return merged
    for sub in ("upper", "work", "rootfs"):
        os.makedirs(os.path.join(base, sub), exist_ok=True)
    sh("mount", "-t", "overlay", overlay_source(), "-o", "lowerdir=%s,upperdir=%s/upper,workdir=%s/work"
       % (rootfs, base, base), merged)
    return merged


def wait_ssh(index, seconds=90):
    result = subprocess.run([sys.executable, os.path.join(HERE, "netns_proxy.py"), "--prefix", prefix(),
                             "--wait", str(seconds), mgmt_ip(index), "22"], check=False)
    if result.returncode != 0:
        raise RuntimeError("%s: no SSH within %d s" % (mgmt_ip(index), seconds))


def container_host(host, index, node, lab_dir, rootfs):
    key = ssh_key(lab_dir)
    merged = host_rootfs(lab_dir, host, rootfs)
    # Ansible logs in as the unprivileged user "ops" (uid 1000, created by rootfs.sh) and becomes
    # root with sudo, as on production nodes; root's key is there for the lab tools.
    for home, owner in (("root", 0), (os.path.join("home", LAB_USER), LAB_UID)):
        ssh_dir = os.path.join(merged, home, ".ssh")
        os.makedirs(ssh_dir, mode=0o700, exist_ok=True)
        with open(key + ".pub") as src, open(os.path.join(ssh_dir, "authorized_keys"), "w") as dst:
            dst.write(src.read())
        for path in (ssh_dir, os.path.join(ssh_dir, "authorized_keys")):
            os.chown(path, owner, owner)
    with open(os.path.join(merged, "etc", "hostname"), "w") as handle:
        handle.write(host + "\n")
    # --add-host: sudo looks its host name up, and without an /etc/hosts line the lookup waits
    # for a DNS server that the lab's namespaces cannot reach, longer than Ansible waits for become.
    podman(lab_dir, "run", "-d", "--name", node_ns(host), "--hostname", host, "--add-host", host + ":127.0.1.1",
           "--runtime", "runc",
           "--network", "ns:/run/netns/" + node_ns(host), "--systemd=always", "--privileged",
           "--rootfs", merged, "/sbin/init")
    return {
        "fabric_node_id": node["node_id"],
        "ansible_host": mgmt_ip(index),
        "ansible_user": LAB_USER,
        "ansible_ssh_private_key_file": key,
    }


def ssh_args():
    """SSH to the lab's nodes: through the lab's relay, with a connection cache of the lab's own. Every lab has
    the same management addresses and user: a shared ControlPath (ssh's default hashes host, port and user)
    would hand one lab's connection to another lab running at the same time (pytest's workers)."""
    proxy = "/usr/bin/python3 %s --prefix %s %%h %%p" % (os.path.join(HERE, "netns_proxy.py"), prefix())
    return ("-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR "
            "-o ControlMaster=auto -o ControlPersist=60s -o ControlPath=/tmp/ainet-ssh-%s-%%C "
            "-o ProxyCommand=\"%s\"" % (prefix(), proxy))


def tor_lldpd(lab_dir, name, rootfs):
    """lldpd in a ToR's namespace (a container of the lab's rootfs, host name = the ToR's name), announcing its
    ports by name (port id subtype ifname, as Cumulus and SONiC switches do) every second."""
    merged = host_rootfs(lab_dir, name, rootfs)
    container = prefix() + "-" + name
    podman(lab_dir, "run", "-d", "--name", container, "--hostname", name, "--runtime", "runc",
           "--network", "ns:/run/netns/" + container, "--privileged", "--rootfs", merged,
           "/bin/sh", "-c", "mkdir -p /run/lldpd && exec /usr/sbin/lldpd -d")
    env = dict(os.environ, CONTAINERS_CONF=os.path.join(lab_dir, "containers.conf"))
    deadline = time.monotonic() + 30
    for setting in (["portidsubtype", "ifname"], ["tx-interval", "1"]):
        while subprocess.run(["podman", "exec", container, "lldpcli", "configure", "lldp"] + setting, env=env,
                             capture_output=True, check=False).returncode != 0:
            if time.monotonic() > deadline:
                raise RuntimeError("lldpd did not start in %s: %s" % (container, podman(
                    lab_dir, "logs", container, check=False)))
            time.sleep(0.5)


def up(plan, hosts, interfaces, lab_dir, kind="netns", rootfs=None, lldp=False, crossed=None):
    """Create the lab for ``plan`` (from rail_plan).  ``hosts`` maps host -> management index.
    ``lldp`` (containers): lldpd in every ToR's namespace; ``crossed``: ``{host: (rail a, rail b)}`` cables
    swapped at the ToR end."""
    down()
    shutil.rmtree(os.path.join(lab_dir, "hosts"), ignore_errors=True)  # fresh disks
    modes = {name: fabric["mode"] for name, fabric in plan["fabrics"].items()}
    os.makedirs(os.path.join(lab_dir, "bin"), exist_ok=True)
    with open(os.path.join(lab_dir, "lab.json"), "w") as handle:
        json.dump({"kind": kind, "modes": modes, "hosts": hosts, "interfaces": interfaces, "plan": plan}, handle)
    if kind == "containers":
        with open(os.path.join(lab_dir, "containers.conf"), "w") as handle:
            handle.write(CONTAINERS_CONF)
    make_mgmt()
    for number, (name, tor) in enumerate(sorted(plan["tors"].items())):
        make_tor(name, tor, modes[tor["fabric"]], number)
    inventory_hosts = {}
    for host, index in sorted(hosts.items()):
        node = plan["nodes"][host]
        make_node(host, index, node, interfaces, modes, (crossed or {}).get(host))
        if kind == "containers":
            inventory_hosts[host] = container_host(host, index, node, lab_dir, rootfs)
        else:
            inventory_hosts[host] = netns_host(host, node, lab_dir)
    if kind == "containers":
        for index in hosts.values():
            wait_ssh(index)
        if lldp:
            for name in sorted(plan["tors"]):
                tor_lldpd(lab_dir, name, rootfs)
    settle(hosts)
    return inventory_hosts


def settle(hosts, seconds=10):
    """Wait until duplicate address detection of the nodes' link-local addresses is over, so that
    the state a test reads first does not change under it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(ip("-6", "addr", "show", "tentative", ns=node_ns(host)).strip() for host in hosts):
            return
        time.sleep(0.2)


def reboot(lab_dir, host):
    """Power-cycle a container node: its network namespace comes back blank, its disk does not."""
    with open(os.path.join(lab_dir, "lab.json")) as handle:
        state = json.load(handle)
    if state["kind"] != "containers":
        raise RuntimeError("reboot needs the containers lab")
    podman(lab_dir, "stop", "-t", "10", node_ns(host))
    # Cut the node's cables first: deleting one end of a veth pair removes both at once, while
    # a deleted namespace frees its devices later, in the kernel's own time (on a loaded
    # machine the new cables would then find the old peer names still taken).
    node = state["plan"]["nodes"][host]
    ip("link", "del", "m-%s" % host[-8:], ns=mgmt_ns(), check=False)
    for entry in node["rails"]:
        ip("link", "del", entry["tor_port"], ns=prefix() + "-" + entry["tor"], check=False)
    ip("netns", "del", node_ns(host))
    index = state["hosts"][host]
    make_node(host, index, state["plan"]["nodes"][host], state["interfaces"], state["modes"])
    podman(lab_dir, "start", node_ns(host))
    wait_ssh(index)


def write_inventory(lab_dir, cluster, inventory_hosts, interfaces, kind="netns"):
    inv = os.path.join(lab_dir, "inventory")
    os.makedirs(os.path.join(inv, "group_vars"), exist_ok=True)
    with open(os.path.join(inv, "group_vars", "all.yml"), "w") as handle:
        yaml.safe_dump({"fabric_cluster": cluster}, handle)
    group_vars = {"fabric_rail_interfaces": interfaces}
    if kind == "containers":
        group_vars["ansible_ssh_common_args"] = ssh_args()
    with open(os.path.join(inv, "hosts.yml"), "w") as handle:
        yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": inventory_hosts, "vars": group_vars}}}}, handle)
    return inv


def write_molecule_config(path, inventory):
    """molecule's instance config (default driver): how to reach each node by SSH."""
    with open(os.path.join(inventory, "hosts.yml")) as handle:
        hosts = yaml.safe_load(handle)["all"]["children"]["gpu_nodes"]["hosts"]
    instances = [{"instance": name, "address": data["ansible_host"], "user": data["ansible_user"], "port": 22,
                  "identity_file": data["ansible_ssh_private_key_file"]} for name, data in sorted(hosts.items())]
    with open(path, "w") as handle:
        yaml.safe_dump(instances, handle)


def load_inventory(path):
    """Read an inventory directory laid out like inventories/lab."""
    with open(os.path.join(path, "hosts.yml")) as handle:
        hosts = yaml.safe_load(handle)["all"]["children"]["gpu_nodes"]["hosts"]
    with open(os.path.join(path, "group_vars", "all", "fabric.yml")) as handle:
        cluster = yaml.safe_load(handle)["fabric_cluster"]
    with open(os.path.join(path, "group_vars", "gpu_nodes.yml")) as handle:
        interfaces = yaml.safe_load(handle)["fabric_rail_interfaces"]
    return cluster, {h: v["fabric_node_id"] for h, v in hosts.items()}, interfaces


def build(cluster, node_ids, interfaces, lab_dir, kind="netns", rootfs=None, lldp=False, crossed=None):
    """Plan, create the lab, write its inventory; returns the inventory path and the plan."""
    sys.path.insert(0, os.path.join(ROOT, "build", ".collections"))
    from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
    plan = rail_plan(cluster, node_ids)
    order = {h: i + 1 for i, h in enumerate(sorted(node_ids, key=node_ids.get))}
    if kind == "containers":
        missing = [cmd for cmd in ("podman", "runc", "mmdebstrap", "ssh-keygen") if not shutil.which(cmd)]
        if missing:
            raise SystemExit("the container lab needs %s: apt-get install podman runc mmdebstrap openssh-client"
                             % ", ".join(missing))
        rootfs = rootfs or os.path.join(ROOT, "build", "lab", "rootfs")
        subprocess.run(["bash", os.path.join(HERE, "rootfs.sh"), rootfs], check=True)
    inventory_hosts = up(plan, order, interfaces, lab_dir, kind, rootfs, lldp=lldp, crossed=crossed)
    inventory = write_inventory(lab_dir, cluster, inventory_hosts, interfaces, kind)
    # The lab is planned here, as the plan job would: its published lock goes with the inventory.
    from ansible_collections.ainet.fabric.plugins.module_utils.plan import plan_lock
    nodes = {host: {"node_id": node_id, "rail_interfaces": interfaces} for host, node_id in node_ids.items()}
    with open(os.path.join(inventory, plan_lock.LOCK_FILE), "w") as handle:
        handle.write(plan_lock.lock_dump(plan_lock.plan_lock(rail_plan(cluster, nodes))))
    return inventory, plan


def main():
    parser = argparse.ArgumentParser(description="network-namespace lab for ainet.fabric")
    parser.add_argument("action", choices=["up", "down", "reboot"])
    parser.add_argument("hosts", nargs="*", help="reboot: the hosts to power-cycle")
    parser.add_argument("--kind", choices=["netns", "containers"], default="containers")
    parser.add_argument("--dir", default=os.path.join(ROOT, "build", "lab"))
    parser.add_argument("--inventory", default=os.path.join(ROOT, "inventories", "lab"),
                        help="an inventory laid out like inventories/lab to take the cluster from")
    parser.add_argument("--spec", help="JSON file {cluster, node_ids, interfaces}, instead of --inventory")
    parser.add_argument("--molecule-instance-config", help="also write molecule's instance config here")
    args = parser.parse_intermixed_args()
    if args.action == "down":
        down()
        print("lab removed")
        return 0
    if args.action == "reboot":
        for host in args.hosts:
            start = time.monotonic()
            reboot(args.dir, host)
            print("%s: rebooted, SSH back after %.1f s" % (host, time.monotonic() - start))
        return 0
    if args.spec:
        with open(args.spec) as handle:
            spec = json.load(handle)
        cluster, node_ids, interfaces = spec["cluster"], spec["node_ids"], spec["interfaces"]
    else:
        cluster, node_ids, interfaces = load_inventory(args.inventory)
    inv, plan = build(cluster, node_ids, interfaces, args.dir, args.kind)
    if args.molecule_instance_config:
        write_molecule_config(args.molecule_instance_config, inv)
    print("lab up (%s): %d nodes, %d ToRs; inventory %s" % (args.kind, len(plan["nodes"]), len(plan["tors"]), inv))
    print("try: ansible-playbook -i %s playbooks/hosts.yml" % inv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
