# -*- coding: utf-8 -*-
"""A node group named in the inventory (group_vars/all: rail_plan_node_group), not with -e: a play's ``hosts:`` is
templated with the play's, the extra and the magic variables only (ansible-core's PlaybookExecutor.run templates it
with VariableManager.get_vars(play=play), which reads inventory variables only for a host), so the host play falls back
on all:localhost where no group gpu_nodes exists, while its first task, the rail_plan role's check, reads the
inventory's rail_plan_node_group and passes. Field review of issue 42 (review42b): the check must not pass a play whose
hosts are not all in the node group it checked. Runs the host job in check mode, its nodes' connections refused on
127.0.0.1:9 (test_job_input.run_job, with this venv's ansible-core).
"""

from __future__ import annotations

import re
import shutil

import pytest

from test_job_input import BIN, LAB, run_job as run_with_core

# the nodes' connections refused on this machine (no traffic leaves it); localhost keeps its local connection
UNREACHABLE = ("-e", "ansible_host=127.0.0.1", "-e", "ansible_port=9")


def run_job(inv, playbook, *extra):
    return run_with_core(BIN, inv, playbook, *(UNREACHABLE + extra))


@pytest.fixture
def inv(tmp_path):
    """The lab inventory with its node group named compute (no group gpu_nodes)."""
    path = tmp_path / "inv"
    shutil.copytree(LAB, path, ignore=shutil.ignore_patterns(".ainet-fabric"))
    hosts = path / "hosts.yml"
    hosts.write_text(hosts.read_text().replace("    gpu_nodes:\n", "    compute:\n"))
    (path / "group_vars" / "gpu_nodes.yml").rename(path / "group_vars" / "compute.yml")
    return path


def hosts_after_check(stdout):
    """The hosts that got a result from a task after the rail_plan role's check (a task not of rail_plan)."""
    touched, after = set(), False
    for line in stdout.splitlines():
        if line.startswith("TASK ["):
            after = not line.startswith("TASK [ainet.fabric.rail_plan") and not line.startswith("TASK [Check the job")
        found = re.match(r"^(ok|changed|fatal|skipping): \[([^\]]+)\]", line)
        if after and found:
            touched.add(found.group(2).split(" ")[0])
    return touched


def test_control_the_group_given_with_extra_vars(inv):
    """-e rail_plan_node_group=compute: the host play targets the group; the controller is not one of its hosts."""
    result = run_job(inv, "hosts", "--check", "-e", "rail_plan_node_group=compute")
    assert "4 host(s) agree" in result.stdout, result.stdout
    assert hosts_after_check(result.stdout) == {"gpu01", "gpu02", "gpu03", "gpu04"}, result.stdout


# The defect found by the field review of issue 42: the check refuses the hosts outside the group it read.
def test_the_group_named_in_the_inventory_never_reaches_the_controller(inv):
    """The same group named in group_vars/all: either the job is refused before any host, or its host tasks reach
    the group's nodes only, never localhost (the controller, where become: true is root)."""
    (inv / "group_vars" / "all" / "node_group.yml").write_text("---\nrail_plan_node_group: compute\n")
    result = run_job(inv, "hosts", "--check")
    assert result.returncode != 0
    assert "localhost" not in hosts_after_check(result.stdout), result.stdout
    assert "rail_plan_node_group: 'compute' does not hold the host(s) the job would touch: localhost. Fix: name the " \
           "node group on the command line (-e rail_plan_node_group=compute" in result.stdout, result.stdout
