# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Persistent rail NIC configuration: systemd-networkd, netplan and NetworkManager keyfiles.

Each renderer takes the validated cluster and one host's rail entries (with
``interface``) and returns ``{path: (content, mode)}`` relative to the root
filesystem.  Files are ours alone (``ainet-`` in the name), so stale ones can
be found and removed without touching anything else.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.rail_links import SYSCTLS_V4

HEADER = "# Managed by ainet.fabric (rail_network role). Local changes are overwritten.\n"
NETWORKD_DIR = "etc/systemd/network"
NETWORKD_CONF_DIR = "etc/systemd/networkd.conf.d"
# networkd removes routes and rules it did not configure (ManageForeignRoutes=
# since v246, ManageForeignRoutingPolicyRules= since v249) when it starts or
# reconfigures a link: that would wipe what CNIs, Spiderpool or an operator
# added with `ip`. Ours are in the .network files, so networkd needs no licence
# to remove anything.
NETWORKD_CONF = """[Network]
ManageForeignRoutingPolicyRules=no
ManageForeignRoutes=no
"""
NETPLAN_DIR = "etc/netplan"
NM_DIR = "etc/NetworkManager/system-connections"
SYSTEMD_DIR = "etc/systemd/system"
SYSCTL_FILE = "etc/sysctl.d/60-ainet-rails.conf"
KEEPOFF_UNIT = "ainet-rail-keepoff.service"
RENDERERS = ("networkd", "netplan", "nm")


def _host_len(cluster):
    return "/32" if cluster.family == 4 else "/128"


def _default(cluster):
    return "0.0.0.0/0" if cluster.family == 4 else "::/0"


def render_networkd(cluster, rails):
    files = {}
    policy = cluster.policy_routing
    for index, entry in enumerate(rails):
        name = entry["interface"]
        lines = [HEADER.rstrip("\n"), "[Match]", "Name=%s" % name, "", "[Link]",
                 "MTUBytes=%d" % entry["mtu"], "RequiredForOnline=no", "", "[Network]",
                 "Address=%s" % entry["address"], "LinkLocalAddressing=%s" % ("ipv6" if cluster.family == 6 else "no"),
                 "IPv6AcceptRA=no", "ConfigureWithoutCarrier=yes", "KeepConfiguration=static"]
        if policy:
            table = entry["table"]
            lines += ["", "[Route]", "Destination=%s" % entry["subnet"], "Scope=link",
                      "PreferredSource=%s" % entry["ip"], "Table=%d" % table,
                      "", "[Route]", "Gateway=%s" % entry["gateway"], "Table=%d" % table,
                      "", "[RoutingPolicyRule]", "From=%s%s" % (entry["ip"], _host_len(cluster)),
                      "Table=%d" % table, "Priority=%d" % entry["priority"]]
            if index == 0 and cluster.keep_off_rule:
                lines += ["", "[RoutingPolicyRule]", "To=%s" % cluster.supernet, "InvertRule=yes",
                          "Table=main", "Priority=%d" % cluster.rule_priority]
            if index == 0 and cluster.aggregate_route:
                lines += ["", "[Route]", "Destination=%s" % cluster.supernet, "Gateway=%s" % entry["gateway"]]
        files["%s/60-ainet-%s.network" % (NETWORKD_DIR, name)] = ("\n".join(lines) + "\n", "0644")
    files["%s/60-ainet-rails.conf" % NETWORKD_CONF_DIR] = (HEADER + NETWORKD_CONF, "0644")
    return files


def render_netplan(cluster, rails):
    """One netplan file for all rails; netplan cannot express an inverted rule, so the keep-off
    rule is a small oneshot unit ordered after the network comes up."""
    policy = cluster.policy_routing
    out = [HEADER.rstrip("\n"), "network:", "  version: 2", "  ethernets:"]
    for index, entry in enumerate(rails):
        out += ["    %s:" % entry["interface"],
                "      match: {name: %s}" % entry["interface"],
                "      set-name: %s" % entry["interface"],
                "      mtu: %d" % entry["mtu"],
                "      dhcp4: false", "      dhcp6: false", "      accept-ra: false",
                "      link-local: []" if cluster.family == 4 else "      link-local: [ipv6]",
                "      addresses: [\"%s\"]" % entry["address"]]
        if policy:
            table = entry["table"]
            out += ["      routes:",
                    "        - {to: \"%s\", scope: link, from: \"%s\", table: %d}" % (entry["subnet"], entry["ip"], table),
                    "        - {to: \"%s\", via: \"%s\", table: %d}" % (_default(cluster), entry["gateway"], table)]
            if index == 0 and cluster.aggregate_route:
                out.append("        - {to: \"%s\", via: \"%s\"}" % (cluster.supernet, entry["gateway"]))
            out += ["      routing-policy:",
                    "        - {from: \"%s%s\", table: %d, priority: %d}"
                    % (entry["ip"], _host_len(cluster), table, entry["priority"])]
    files = {"%s/60-ainet-rails.yaml" % NETPLAN_DIR: ("\n".join(out) + "\n", "0600")}
    if policy and cluster.keep_off_rule:
        files["%s/%s" % (SYSTEMD_DIR, KEEPOFF_UNIT)] = (keepoff_unit(cluster), "0644")
    # netplan's usual backend is networkd, which would delete the keep-off rule as foreign.
    files["%s/60-ainet-rails.conf" % NETWORKD_CONF_DIR] = (HEADER + NETWORKD_CONF, "0644")
    return files


def keepoff_unit(cluster):
    # A bare "ip": systemd searches /usr/sbin and /usr/bin, wherever the distribution put it.
    ip = "ip%s" % (" -6" if cluster.family == 6 else "")
    rule = "priority %d not to %s table main" % (cluster.rule_priority, cluster.supernet)
    return "\n".join([
        HEADER.rstrip("\n"),
        "[Unit]",
        "Description=Keep non-RDMA traffic off the RDMA rail NICs (ainet.fabric)",
        "After=network-pre.target systemd-networkd.service NetworkManager.service",
        "Before=network-online.target",
        "",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
        "ExecStartPre=-%s rule del %s" % (ip, rule),
        "ExecStart=%s rule add %s protocol static" % (ip, rule),
        "ExecStop=-%s rule del %s" % (ip, rule),
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ])


def render_nm(cluster, rails):
    files = {}
    policy = cluster.policy_routing
    fam = "ipv4" if cluster.family == 4 else "ipv6"
    other = "ipv6" if cluster.family == 4 else "ipv4"
    for index, entry in enumerate(rails):
        name = entry["interface"]
        lines = [HEADER.rstrip("\n"), "[connection]", "id=ainet-%s" % name, "type=ethernet",
                 "interface-name=%s" % name, "autoconnect=true", "", "[ethernet]", "mtu=%d" % entry["mtu"],
                 "", "[%s]" % fam, "method=manual", "address1=%s" % entry["address"], "never-default=true",
                 "may-fail=false"]
        if policy:
            table = entry["table"]
            lines += ["route1=%s" % entry["subnet"], "route1_options=table=%d,scope=253,src=%s" % (table, entry["ip"]),
                      "route2=%s,%s" % (_default(cluster), entry["gateway"]), "route2_options=table=%d" % table,
                      "routing-rule1=priority %d from %s%s table %d"
                      % (entry["priority"], entry["ip"], _host_len(cluster), table)]
            if index == 0 and cluster.keep_off_rule:
                lines.append("routing-rule2=priority %d not to %s table 254" % (cluster.rule_priority, cluster.supernet))
            if index == 0 and cluster.aggregate_route:
                lines.append("route3=%s,%s" % (cluster.supernet, entry["gateway"]))
        lines += ["", "[%s]" % other, "method=disabled"]
        files["%s/ainet-%s.nmconnection" % (NM_DIR, name)] = ("\n".join(lines) + "\n", "0600")
    return files


def render_sysctl(cluster, rails):
    """ARP / reverse-path settings multi-NIC hosts need (IPv4 only), as a sysctl.d file."""
    if cluster.family != 4 or not cluster.policy_routing:
        return {}
    lines = [HEADER.rstrip("\n")]
    for entry in rails:
        for key, value in SYSCTLS_V4:
            lines.append("net.ipv4.conf.%s.%s = %s" % (entry["interface"], key, value))
    return {SYSCTL_FILE: ("\n".join(lines) + "\n", "0644")}


def render(renderer, cluster, rails):
    if renderer not in RENDERERS:
        raise ValueError("unknown renderer %r" % renderer)
    files = {"networkd": render_networkd, "netplan": render_netplan, "nm": render_nm}[renderer](cluster, rails)
    files.update(render_sysctl(cluster, rails))
    return files


def owned(path):
    """True for files this collection writes (used to find stale ones)."""
    base = path.rsplit("/", 1)[-1]
    return base.startswith("60-ainet-") or base.startswith("ainet-")
