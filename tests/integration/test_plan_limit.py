# -*- coding: utf-8 -*-
"""The plan job under --limit plans the whole node group whatever the limit names. ansible-core applies the limit
after the play's pattern (``InventoryManager.get_hosts``), so a play on the node group alone would have no host under a
limit that names only hosts outside it (a management host, a ToR, an @retry file of such hosts) and be skipped, the job
succeeding without a plan, a lock or an artifact (found by the field review of issue 42). The model lives in the node
group's group_vars here, so a host outside the group has none of its own: the action reads the group's first node's.
The control: a limit to a node."""

from __future__ import annotations

import json

import pytest
import yaml

from test_plan_playbook import CLUSTER, NICS, run_playbook, write_inventory


def _inventory(tmp_path):
    inv = write_inventory(tmp_path, CLUSTER, {"gpu01": 1, "gpu02": 2}, NICS)
    (inv / "group_vars" / "all.yml").rename(inv / "group_vars" / "gpu_nodes.yml")
    data = yaml.safe_load((inv / "hosts.yml").read_text())
    data["all"]["children"]["mgmt"] = {"hosts": {"mgmt01": {"ansible_connection": "local"}}}
    (inv / "hosts.yml").write_text(yaml.safe_dump(data))
    (tmp_path / "retry").write_text("mgmt01\n")
    return inv


@pytest.mark.parametrize("limit", ["gpu02", "mgmt01", "mgmt", "@{retry}", "mgmt01:gpu02"])
def test_any_limit_plans_the_whole_group(tmp_path, limit):
    inv = _inventory(tmp_path)
    out = tmp_path / "out"
    result = run_playbook(inv, "-e", "rail_plan_output_dir=%s" % out, "--limit", limit.format(retry=tmp_path / "retry"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no hosts matched" not in result.stdout
    assert sorted(json.loads((out / "plan.json").read_text())["nodes"]) == ["gpu01", "gpu02"]
    lock = yaml.safe_load((inv / "rail_plan_lock.yml").read_text())["all"]["vars"]["rail_plan_lock"]
    assert [line.split()[0] for line in lock["nodes"].splitlines()] == ["gpu01", "gpu02"]
