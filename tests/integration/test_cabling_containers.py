# -*- coding: utf-8 -*-
"""The cabling check on the container lab (podman system containers, needs root): lldpd on the GPU nodes (started
by the role) and in every ToR's namespace (tests/lab/lab.py: host name = the plan's ToR name, ports announced by
name), real LLDP frames over the lab's cables. gpu02's rail 3 and rail 4 cables are crossed at the ToR end when the
lab is built; the check must find exactly that, with the fix, and nothing on gpu01, whose cables are as planned."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

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
ROOT = os.path.dirname(os.path.dirname(HERE))
NODES = {"gpu01": 1, "gpu02": 2}


def run(inventory, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=t.BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(t.BIN, "ansible-playbook"), "-i", inventory, os.path.join(ROOT, "playbooks", "cabling.yml")]
    return subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


def test_crossed_cables_are_found_with_their_fix(tmp_path):
    lab_dir = str(tmp_path / "lab")
    cluster = t.cluster_for("exclusive")
    plan_dir = tmp_path / "plan"  # the plan job's files, where the cabling check also writes by default
    report = plan_dir / "cabling.md"
    try:
        inventory, plan = lab.build(cluster, NODES, t.INTERFACES, lab_dir, kind="containers", lldp=True,
                                    crossed={"gpu02": (3, 4)})
        # A fresh node's rail NICs are down until rail_network brings them up: no frame arrives, and the check
        # says so rather than calling the cables missing.
        down = run(inventory, "-e", "cabling_check_install_lldpd=true", "-e", "cabling_check_settle=3",
                   "-e", "cabling_check_report=%s" % report)
        text = down.stdout + down.stderr
        assert down.returncode != 0 and "cabling_check: 8 finding(s):" in text, text
        assert ("gpu01 ens6f0np0 (rail 1): the link is down (operstate DOWN), so no LLDP frame arrives, planned "
                "%s swp1; bring gpu01 ens6f0np0 up" % plan["nodes"]["gpu01"]["rails"][0]["tor"]) in text, text
        for host in NODES:
            for ifname in t.INTERFACES:
                lab.ip("link", "set", ifname, "up", ns=lab.node_ns(host))
        lab.settle(NODES)
        # The ToRs send every second; a loaded machine (the VM tier runs beside pytest) may take minutes.
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not all(
                lab.podman(lab_dir, "exec", lab.node_ns(host), "lldpcli", "show", "neighbors", "summary",
                           check=False).count("SysName:") == 4 for host in NODES):
            time.sleep(1)
        result = run(inventory, "-e", "cabling_check_install_lldpd=true", "-e", "cabling_check_settle=8",
                     "-e", "cabling_check_report=%s" % report)
        text = result.stdout + result.stderr
        assert result.returncode != 0, text
        tor3, tor4 = plan["nodes"]["gpu02"]["rails"][2]["tor"], plan["nodes"]["gpu02"]["rails"][3]["tor"]
        assert "cabling_check: 1 finding(s):" in text, text
        assert ("gpu02: ens7f0np0 (rail 3) and ens7f1np1 (rail 4) are crossed: ens7f0np0 reaches %s swp2, planned "
                "%s swp2" % (tor4, tor3)) in text, text
        assert "Traceback" not in text
        table = report.read_text()
        assert "gpu02" in table and "gpu01" not in table, table
        # What the node's own lldpd says, read here: rail 3's NIC sees rail 4's ToR.
        seen = lab.podman(lab_dir, "exec", lab.node_ns("gpu02"), "lldpcli", "show", "neighbors", "ports",
                          "ens7f0np0")
        assert tor4 in seen and "swp2" in seen, seen

        # The plan job's report shows the last check: the counts, the finding, the crossed link drawn dotted.
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                   PATH=t.BIN + os.pathsep + os.environ.get("PATH", ""))
        planned = subprocess.run([os.path.join(t.BIN, "ansible-playbook"), "-i", inventory,
                                  os.path.join(ROOT, "playbooks", "plan.yml"), "-e", "rail_plan_output_dir=%s" % plan_dir],
                                 cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
        assert planned.returncode == 0, planned.stdout + planned.stderr
        rails = (plan_dir / "rails.md").read_text()
        assert "Last check: 2 hosts, 8 rails, 6 as planned, 1 finding(s)." in rails, rails
        diagram = (plan_dir / "topology.mmd").read_text()
        assert diagram.count(" .- ") == 1 and "ens7f0np0 default r3" in [
            line for line in diagram.splitlines() if " .- " in line][0], diagram

        # Reported only: the same finding, the play passes.
        relaxed = run(inventory, "-e", "cabling_check_fail=false", "-e", "cabling_check_report=%s" % report)
        assert relaxed.returncode == 0, relaxed.stdout + relaxed.stderr
    finally:
        lab.down()
