# -*- coding: utf-8 -*-
"""Run playbooks/plan.yml for real (ansible-playbook on localhost)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)


def run_playbook(inventory, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", str(inventory), os.path.join(ROOT, "playbooks", "plan.yml")]
    return subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)


def write_inventory(tmp_path, cluster, hosts, interfaces=None):
    inv = tmp_path / "inv"
    (inv / "group_vars").mkdir(parents=True)
    (inv / "group_vars" / "all.yml").write_text(yaml.safe_dump({"fabric_cluster": cluster}))
    group = {"hosts": {h: {"fabric_node_id": n} for h, n in hosts.items()}}
    if interfaces is not None:
        group["vars"] = {"fabric_rail_interfaces": interfaces}
    (inv / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": group}}}))
    return inv


CLUSTER = {"name": "lim", "rails": 2,
           "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27}}
NICS = ["ens6f0np0", "ens6f1np1"]


@pytest.fixture
def out_dir(tmp_path):
    return tmp_path / "out"


def test_lab_inventory_plan_is_written_and_idempotent(out_dir):
    result = run_playbook(os.path.join(ROOT, "inventories", "lab"), "-e", "rail_plan_output_dir=%s" % out_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "lab: 4 nodes, 4 rails in fabric(s) default (exclusive, ipv4), 4 ToRs, 16 addresses; node ids may go up to 8 (addressing capacity)" in result.stdout
    plan = json.loads((out_dir / "plan.json").read_text())
    assert plan["nodes"]["gpu03"]["rails"][1]["address"] == "172.17.1.66/27"
    assert plan["nodes"]["gpu03"]["rails"][1]["interface"] == "ens6f1np1"
    csv_lines = (out_dir / "rails.csv").read_text().splitlines()
    assert len(csv_lines) == 1 + 16
    rails_md = (out_dir / "rails.md").read_text()
    assert rails_md.startswith("# Rail plan: lab")
    # the load test's report, by its relative name, without claiming it was written: none was here
    assert "[lossless.md](lossless.md)" in rails_md and "Until a run has written it" in rails_md
    assert not (out_dir / "lossless.md").exists()
    assert (out_dir / "topology.mmd").read_text().startswith("flowchart LR")
    again = run_playbook(os.path.join(ROOT, "inventories", "lab"), "-e", "rail_plan_output_dir=%s" % out_dir)
    assert again.returncode == 0
    assert "changed=0" in again.stdout


def test_check_mode_reports_without_writing_and_diff_shows_the_change(out_dir):
    check = run_playbook(os.path.join(ROOT, "inventories", "lab"), "--check", "--diff",
                         "-e", "rail_plan_output_dir=%s" % out_dir)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "changed=1" in check.stdout
    assert not out_dir.exists()
    assert "+gpu03,3,default,2,ens6f1np1,172.17.1.66/27,172.17.1.64/27,172.17.1.65," in check.stdout
    assert run_playbook(os.path.join(ROOT, "inventories", "lab"), "-e", "rail_plan_output_dir=%s" % out_dir).returncode == 0
    csv = out_dir / "rails.csv"
    csv.write_text(csv.read_text().replace("172.17.1.66", "172.17.1.99"))
    again = run_playbook(os.path.join(ROOT, "inventories", "lab"), "--check", "--diff",
                         "-e", "rail_plan_output_dir=%s" % out_dir)
    assert "changed=1" in again.stdout
    assert "-gpu03,3,default,2,ens6f1np1,172.17.1.99/27," in again.stdout
    assert "+gpu03,3,default,2,ens6f1np1,172.17.1.66/27," in again.stdout
    assert "172.17.1.99" in csv.read_text()  # check mode left the edited file alone


def test_set_fact_keeps_the_whole_plan(out_dir):
    result = run_playbook(os.path.join(ROOT, "inventories", "lab"), "-e", "rail_plan_output_dir=%s" % out_dir,
                          "-e", "rail_plan_set_fact=true", "-v")
    assert result.returncode == 0, result.stdout + result.stderr
    assert '"rail_plan_result"' in result.stdout


def test_limit_does_not_change_the_plan(tmp_path, out_dir):
    # --limit narrows the hosts a play runs on; the plan still covers the whole group.
    # Under --limit the plan play targets the node group (else its first node, gpu01 here, which
    # the limit leaves out), so a limit to GPU nodes still runs it (no "no hosts matched").
    inv = write_inventory(tmp_path, CLUSTER, {"gpu01": 1, "gpu02": 2, "gpu03": 3}, NICS)
    result = run_playbook(inv, "-e", "rail_plan_output_dir=%s" % out_dir, "--limit", "gpu02")
    assert result.returncode == 0, result.stdout + result.stderr
    plan = json.loads((out_dir / "plan.json").read_text())
    assert sorted(plan["nodes"]) == ["gpu01", "gpu02", "gpu03"]
    # The lock went next to the inventory, and is an inventory source setting rail_plan_lock (format 2: four
    # scalars, one line per host in nodes), read back by ansible-inventory as every host's variable.
    lock = yaml.safe_load((inv / "rail_plan_lock.yml").read_text())["all"]["vars"]["rail_plan_lock"]
    assert [line.split()[0] for line in lock["nodes"].splitlines()] == ["gpu01", "gpu02", "gpu03"]
    listed = inventory_list(inv)
    assert listed["_meta"]["hostvars"]["gpu03"]["rail_plan_lock"] == lock


def inventory_list(inv):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), PATH=BIN + os.pathsep + os.environ["PATH"])
    out = subprocess.run([os.path.join(BIN, "ansible-inventory"), "-i", str(inv), "--list"], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True)
    assert "WARNING" not in out.stderr, out.stderr
    return json.loads(out.stdout)


def test_lab_inventory_has_constructed_groups_per_tor_and_rail():
    listed = inventory_list(os.path.join(ROOT, "inventories", "lab"))
    assert listed["tor_lab_tor2"]["hosts"] == ["gpu01", "gpu02", "gpu03", "gpu04"]
    assert listed["rail_default_3"]["hosts"] == ["gpu01", "gpu02", "gpu03", "gpu04"]
    assert listed["_meta"]["hostvars"]["gpu02"]["fabric_tors"] == ["lab-tor1", "lab-tor2", "lab-tor3", "lab-tor4"]


@pytest.mark.parametrize("cluster,hosts,interfaces,expected", [
    ({"name": "x", "rails": 2,
      "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27},
      "management_networks": ["172.17.0.0/20"]},
     {"a": 1}, None, "fabric_cluster.management_networks[0]: '172.17.0.0/20' overlaps the RDMA supernet"),
    ({"name": "x", "rails": 2, "addressing": {"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24}},
     {"a": 1, "b": 1}, None, "hostvars[b].fabric_node_id: 1 is already the node id of a"),
    ({"name": "x", "rails": 2, "addressing": {"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24}},
     {"a": 1}, ["ens1"], "hostvars[a].fabric_rail_interfaces: ['ens1'] has 1 interfaces but the cluster has 2 rails"),
])
def test_bad_input_fails_with_one_clear_error(tmp_path, out_dir, cluster, hosts, interfaces, expected):
    inv = write_inventory(tmp_path, cluster, hosts, interfaces)
    result = run_playbook(inv, "-e", "rail_plan_output_dir=%s" % out_dir)
    text = result.stdout + result.stderr
    assert result.returncode != 0
    assert expected in text
    assert "Traceback" not in text
    assert not out_dir.exists()


V1_LOCK = os.path.join(ROOT, "tests", "unit", "plugins", "module_utils", "data", "plan_lock", "rail_plan_lock.v1.json")


def lab_with_a_format_1_lock(tmp_path, text):
    """A copy of the lab inventory whose lock is still rail_plan_lock.json (``text``), as before format 2."""
    inv = tmp_path / "inv"
    shutil.copytree(os.path.join(ROOT, "inventories", "lab"), inv, ignore=shutil.ignore_patterns(".ainet-fabric"))
    (inv / "rail_plan_lock.yml").unlink()
    (inv / "rail_plan_lock.json").write_text(text)
    return inv


def test_the_plan_job_replaces_the_format_1_lock_it_wrote_and_nothing_else(tmp_path, out_dir):
    """The lab's lock of format 1 (as the plan job wrote it before) is replaced by rail_plan_lock.yml, the same plan:
    the diff names the file replaced and no host; a rail_plan_lock.json that also sets another variable is not ours,
    and the job fails naming it before anything is written."""
    with open(V1_LOCK, encoding="utf-8") as handle:
        v1 = handle.read()
    inv = lab_with_a_format_1_lock(tmp_path, v1)
    assert inventory_list(inv)["_meta"]["hostvars"]["gpu02"]["rail_plan_lock"]["version"] == 1  # still an inventory source
    result = run_playbook(inv, "--diff", "-e", "rail_plan_output_dir=%s" % out_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "%s: removed, replaced by %s (format 2)" % (inv / "rail_plan_lock.json", inv / "rail_plan_lock.yml") \
        in result.stdout
    assert "        gpu0" not in result.stdout and "0 added, 0 removed, 0 changed" in result.stdout
    assert sorted(p.name for p in inv.iterdir() if p.name.startswith("rail_plan_lock")) == ["rail_plan_lock.yml"]
    with open(os.path.join(ROOT, "inventories", "lab", "rail_plan_lock.yml"), encoding="utf-8") as handle:
        assert (inv / "rail_plan_lock.yml").read_text() == handle.read()
    assert "changed=0" in run_playbook(inv, "-e", "rail_plan_output_dir=%s" % out_dir).stdout

    shutil.rmtree(tmp_path / "inv")
    shutil.rmtree(out_dir)
    inv = lab_with_a_format_1_lock(tmp_path, v1.replace('{"all": {"vars": {', '{"all": {"vars": {"ntp_server": "ntp1", '))
    refused = run_playbook(inv, "-e", "rail_plan_output_dir=%s" % out_dir)
    assert refused.returncode != 0
    assert "%s: None is in the way of the plan lock rail_plan_lock.yml and is not a plan lock of format 1 that this " \
           "collection wrote. Fix: move or remove it yourself" % (inv / "rail_plan_lock.json") in refused.stdout
    assert not (inv / "rail_plan_lock.yml").exists() and not out_dir.exists()
