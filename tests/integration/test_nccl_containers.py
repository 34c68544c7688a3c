# -*- coding: utf-8 -*-
"""playbooks/nccl.yml on the container lab (a real Debian with systemd, needs root): the node has no RDMA device,
so every rail is named as a problem (the run fails by default, before writing anything); allowed, the file holds
the management interface of the node's own default route and the lossless profile's class, owned by its marker;
a second run changes nothing; another tool's file is refused before any change, and replaced only on request.
The RDMA device and GID index selection is tested on recorded real outputs (test_workload.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
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
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(inventory, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=t.BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(t.BIN, "ansible-playbook"), "-i", inventory, os.path.join(ROOT, "playbooks", "nccl.yml")]
    return subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


def test_nccl_conf_is_owned_and_refuses_a_foreign_file(tmp_path):
    lab_dir = str(tmp_path / "lab")
    try:
        inventory, _plan = lab.build(t.cluster_for("exclusive", qos={"preset": "nvidia"}), {"gpu01": 1},
                                     t.INTERFACES, lab_dir, kind="containers")

        def conf():
            return lab.podman(lab_dir, "exec", lab.node_ns("gpu01"), "cat", "/etc/nccl.conf", check=False)

        strict = run(inventory)
        assert strict.returncode != 0 and "nccl on gpu01: rail 1 (ens6f0np0): no RDMA device has this netdev" in \
            strict.stdout, strict.stdout
        assert "No such file" in conf() or conf() == ""
        done = run(inventory, "-e", "nccl_require_all_rails=false")
        assert done.returncode == 0, done.stdout + done.stderr
        text = conf()
        assert text.splitlines()[0] == "# Managed by ainet.fabric (nccl): NCCL settings of this node's rail NICs."
        # the lab node's default route leaves through eth0; the nvidia preset's ToS and priority
        assert "NCCL_SOCKET_IFNAME==eth0\n" in text and "NCCL_IB_TC=106\n" in text and "NCCL_IB_SL=3\n" in text
        assert "NCCL_IB_HCA" not in text and "NCCL_CROSS_NIC=0\n" in text, text
        again = run(inventory, "-e", "nccl_require_all_rails=false")
        assert again.returncode == 0 and t.changed_counts(again.stdout)["gpu01"] == 0, again.stdout
        # A management network without a default route: the interface holding the address Ansible came in on.
        lab.ip("route", "del", "default", ns=lab.node_ns("gpu01"))
        routeless = run(inventory, "-e", "nccl_require_all_rails=false")
        assert routeless.returncode == 0 and t.changed_counts(routeless.stdout)["gpu01"] == 0, routeless.stdout
        assert conf() == text

        lab.podman(lab_dir, "exec", lab.node_ns("gpu01"), "sh", "-c", "echo NCCL_DEBUG=INFO > /etc/nccl.conf")
        foreign = run(inventory, "-e", "nccl_require_all_rails=false")
        assert foreign.returncode != 0 and "/etc/nccl.conf on gpu01 was not written by this role" in foreign.stdout
        assert conf() == "NCCL_DEBUG=INFO\n"
        taken = run(inventory, "-e", "nccl_require_all_rails=false", "-e", "nccl_takeover=true")
        assert taken.returncode == 0 and conf() == text, taken.stdout
    finally:
        lab.down()
