# -*- coding: utf-8 -*-
"""rail_network on real hosts that reboot (podman system containers with systemd, needs root).

A node pre-configured by "another tool" (a boot unit adding a VPN-style rule and table, a
CNI-style fwmark rule and table, a route in main, and an address on a rail NIC) is
converged, rebooted, changed in its model (a rail removed and the backend switched from
systemd-networkd to netplan) and rebooted again. After every step the node holds exactly
the planned state, read with `ip` alone, the other tool's objects are all still there, and
jumbo pings cross every rail.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_rail_network_lab as t  # noqa: E402  pylint: disable=wrong-import-position
from test_rail_network_lab import lab  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the container lab needs root"),
    pytest.mark.skipif(not all(shutil.which(c) for c in ("podman", "runc", "mmdebstrap")),
                       reason="the container lab needs podman, runc and mmdebstrap (tests/molecule.sh installs them)"),
]
OTHER_TOOL = """[Unit]
Description=Another tool's network state (test)
After=systemd-networkd.service
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=ip rule add priority 2000 from all lookup 200
ExecStart=ip route add 198.51.100.0/24 via 10.250.0.1 dev eth0 table 200
ExecStart=ip rule add priority 500 fwmark 0x100/0xf00 lookup 300
ExecStart=ip route add 10.233.64.0/18 via 10.250.0.1 dev eth0 table 300
ExecStart=ip route add 198.18.0.0/15 via 10.250.0.1 dev eth0 proto static
ExecStart=ip addr add 192.168.77.5/24 dev ens6f0np0
[Install]
WantedBy=multi-user.target
"""
NODES = {"gpu01": 1, "gpu02": 2}
# The other tool's address, rule priorities and tables (left out of the exactness check).
THEIRS = [("ens6f0np0", "192.168.77.5/24"), 500, 2000, "200", "300"]


def install_other_tool(lab_dir, host):
    root = os.path.join(lab_dir, "hosts", host, "rootfs", "etc", "systemd", "system")
    with open(os.path.join(root, "other-tool.service"), "w") as handle:
        handle.write(OTHER_TOOL)
    wants = os.path.join(root, "multi-user.target.wants", "other-tool.service")
    if not os.path.lexists(wants):
        os.symlink("/etc/systemd/system/other-tool.service", wants)
    for line in OTHER_TOOL.splitlines():
        if line.startswith("ExecStart="):
            lab.ip(*line[len("ExecStart=ip "):].split(), ns=lab.node_ns(host))


def reboot(lab_dir):
    for host in NODES:
        lab.reboot(lab_dir, host)
    lab.settle(NODES)


def test_other_tools_state_and_a_model_change_survive_reboots(tmp_path):
    lab_dir = str(tmp_path / "lab")
    cluster = t.cluster_for("exclusive")
    try:
        inventory, plan = lab.build(cluster, NODES, t.INTERFACES, lab_dir, kind="containers")
        theirs = {}
        for host in NODES:
            install_other_tool(lab_dir, host)
            theirs[host] = t.foreign_view(host)
        first = t.playbook(inventory, "-e", "rail_network_persist=networkd")
        assert first.returncode == 0, first.stdout + first.stderr
        reboot(lab_dir)
        for host in NODES:
            t.assert_exactly_planned(host, plan, t.INTERFACES, cluster, THEIRS)
            assert t.foreign_view(host) == theirs[host]
        again = t.playbook(inventory, "-e", "rail_network_persist=networkd")
        assert set(t.changed_counts(again.stdout).values()) == {0}, again.stdout
        t.ping_matrix(plan, cluster["mtu"], 4)

        # The model changes: rail 4 removed, the backend switched to netplan; then a reboot.
        three = dict(cluster, rails=3)
        extra = t.with_vars(lab_dir, "three", fabric_cluster=three, fabric_rail_interfaces=t.INTERFACES[:3],
                            rail_network_persist="netplan")
        changed = t.playbook(inventory, "-e", extra)
        assert changed.returncode == 0, changed.stdout + changed.stderr
        reboot(lab_dir)
        new_plan = lab_plan(three)
        for host in NODES:
            t.assert_exactly_planned(host, new_plan, t.INTERFACES[:3], three, THEIRS)
            assert t.foreign_view(host) == theirs[host]
            root = os.path.join(lab_dir, "hosts", host, "rootfs", "etc")
            assert not [n for n in os.listdir(os.path.join(root, "systemd", "network")) if "ainet" in n]
            assert os.path.exists(os.path.join(root, "netplan", "60-ainet-rails.yaml"))
            # Nothing of rail 4 is left: no address, no rule 1004, no table 154.
            ns = lab.node_ns(host)
            assert "inet " not in lab.ip("addr", "show", "dev", "ens7f1np1", ns=ns)
            assert "1004:" not in lab.ip("rule", "show", ns=ns)
            assert lab.ip("route", "show", "table", "154", ns=ns, check=False).strip() == ""
        final = t.playbook(inventory, "-e", extra)
        assert set(t.changed_counts(final.stdout).values()) == {0}, final.stdout
        t.ping_matrix({"nodes": {h: {"rails": new_plan["nodes"][h]["rails"]} for h in NODES}}, cluster["mtu"], 4)
    finally:
        lab.down()


def lab_plan(cluster):
    sys.path.insert(0, os.path.join(t.ROOT, "build", ".collections"))
    from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan  # noqa: E402
    return json.loads(json.dumps(rail_plan(cluster, NODES)))
