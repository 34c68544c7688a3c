# -*- coding: utf-8 -*-
"""playbooks/links.yml on the namespace lab (needs root): four nodes configured by the host job, then the fleet
link test in 3 rounds of pairs. Two faults are made at the ToR end, as a switch would have them: gpu03's rail-2
port is down (no path) and gpu04's rail-1 port has an MTU of 1500 (small frames pass, jumbo DF frames do not).
The verdict must name exactly those two links, by node, NIC, ToR and port, with the right diagnosis, and no other
link; ICMP is the traffic (real kernels, real frames)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_rail_network_lab as t  # noqa: E402  pylint: disable=wrong-import-position
from test_rail_network_lab import lab  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the lab needs root for network namespaces")
ROOT = os.path.dirname(os.path.dirname(HERE))
NODES = {"gpu01": 1, "gpu02": 2, "gpu03": 3, "gpu04": 4}


@pytest.fixture(name="lab_dir")
def fixture_lab_dir(tmp_path):
    yield str(tmp_path / "lab")
    lab.down()


def links(inventory, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=t.BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(t.BIN, "ansible-playbook"), "-i", inventory, os.path.join(ROOT, "playbooks", "links.yml")]
    return subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


@pytest.mark.parametrize("family", [4, 6])
def test_broken_and_narrow_links_are_named(family, lab_dir):
    cluster = t.cluster_for("exclusive", family)
    inventory, plan = lab.build(cluster, NODES, t.INTERFACES, lab_dir)
    applied = t.playbook(inventory)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    report = os.path.join(lab_dir, "links.md")

    healthy = links(inventory, "-e", "link_test_report=%s" % report)
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    with open(report) as handle:
        text = handle.read()
    assert "4 nodes, 3 round(s)" in text and "Every tested link passed." in text, text
    assert "24 tests, 0 failed." in text, text  # 3 rounds x 2 pairs x 4 rails, one ICMP result each

    down = plan["nodes"]["gpu03"]["rails"][1]
    narrow = plan["nodes"]["gpu04"]["rails"][0]
    lab.ip("link", "set", down["tor_port"], "down", ns=lab.prefix() + "-" + down["tor"])
    lab.ip("link", "set", narrow["tor_port"], "mtu", "1500", ns=lab.prefix() + "-" + narrow["tor"])
    broken = links(inventory, "-e", "link_test_report=%s" % report)
    out = broken.stdout + broken.stderr
    assert broken.returncode != 0, out
    assert "link_test: 2 broken link(s):" in out, out
    # the ToR port is down, so the node's NIC has no carrier: said first
    assert ("gpu03 ens6f1np1 (default rail 2, %s %s): its link is down (operstate DOWN); failed with 3 peers: gpu01: "
            "icmp: no ICMP reply" % (down["tor"], down["tor_port"])) in out, out
    size = 9000 - (48 if family == 6 else 28)
    assert ("gpu04 ens6f0np0 (default rail 1, %s %s): failed with 3 peers: gpu01: icmp: %d-byte DF pings lost "
            "(100%% loss) while small ones pass: an MTU below the fabric's on the path"
            % (narrow["tor"], narrow["tor_port"], size)) in out, out
    assert "Traceback" not in out
    with open(report) as handle:
        text = handle.read()
    assert text.count("| broken |") == 2 and "| suspect |" not in text, text
