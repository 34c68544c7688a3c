# -*- coding: utf-8 -*-
"""playbooks/topology.yml for real (ansible-playbook on the controller): with the cabling job's cabling.json agreeing,
every file is written under the plan's output directory and read back here (the Slurm files by the Slurm judge, the
labels as YAML); a second run changes nothing; --check --diff shows the difference and writes nothing; a cabling.json
whose finding fuses two rail groups withholds both (reported in the summary), and their stale lines go; without a
cabling result nothing is published; a Slurm node name with a hostlist bracket is one line; any --limit renders the
whole node group."""

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
sys.path.insert(0, os.path.join(ROOT, "tests", "unit", "plugins", "module_utils"))
import slurm_topology_judge as judge  # noqa: E402  pylint: disable=wrong-import-position

CRDS = os.environ.get("AINET_K8S_CRD_DIR") or os.path.join(os.path.dirname(ROOT), "shared", "validators", "k8s")
NICS = ["ens6f0np0", "ens6f1np1"]


def cluster():
    tors = []
    for group in range(3):
        for rail in (1, 2):
            tors.append({"name": "su%d-r%d" % (group + 1, rail), "rails": [rail], "port_template": "swp{local}",
                         "nodes": "%d-%d" % (group * 2 + 1, group * 2 + 2),
                         "spine_block": "sb1" if group < 2 else "sb2"})
    return {"name": "topo", "rails": 2, "tors": tors,
            "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 20, "node_prefix": 28}}


def write_inventory(tmp_path):
    inv = tmp_path / "inv"
    (inv / "group_vars").mkdir(parents=True, exist_ok=True)
    (inv / "group_vars" / "all.yml").write_text(yaml.safe_dump({"fabric_cluster": cluster()}))
    group = {"hosts": dict(("gpu%02d" % n, {"fabric_node_id": n}) for n in range(1, 7)),
             "vars": {"fabric_rail_interfaces": NICS}}
    (inv / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": group}}}))
    out = inv / ".ainet-fabric" / "topo"
    out.mkdir(parents=True)
    return inv, out


def cabling_json(out, findings=()):
    hosts = ["gpu%02d" % n for n in range(1, 7)]
    (out / "cabling.json").write_text(json.dumps({"summary": {}, "findings": list(findings), "hosts": hosts}))


def run_playbook(inventory, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", str(inventory), os.path.join(ROOT, "playbooks", "topology.yml")]
    return subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


def recap_changed(stdout):
    line = [text for text in stdout.splitlines() if text.startswith("gpu01 ")][-1]
    return int(line.split("changed=")[1].split()[0])


def test_the_job_writes_judges_and_withholds(tmp_path):
    inv, out = write_inventory(tmp_path)
    cabling_json(out)
    extra = ["-e", "topology_crd_dir=%s" % CRDS] if os.path.isdir(CRDS) else []
    first = run_playbook(inv, *extra)
    assert first.returncode == 0, first.stdout + first.stderr
    dest = out / "topology"
    files = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert files == ["k8s/10-node-labels.yaml", "k8s/20-kueue.yaml", "k8s/30-volcano.yaml",
                     "slurm/default/topology-block.conf", "slurm/default/topology.conf", "slurm/topology.yaml"]
    if os.path.isdir(CRDS):
        assert "schema check passed" in first.stdout, first.stdout
    nodes = set("gpu%02d" % n for n in range(1, 7))
    switches, violations = judge.judge_tree((dest / "slurm/default/topology.conf").read_text(), nodes)
    assert violations == []
    assert dict((n, s["nodes"]) for n, s in switches.items() if s["nodes"]) == {
        "sb1.rg1": ["gpu01", "gpu02"], "sb1.rg2": ["gpu03", "gpu04"], "sb2.rg1": ["gpu05", "gpu06"]}
    assert judge.judge_block((dest / "slurm/default/topology-block.conf").read_text(), nodes)[2] == []
    assert judge.judge_yaml(yaml.safe_load((dest / "slurm/topology.yaml").read_text()), nodes) == []
    labels = dict((d["metadata"]["name"], d["metadata"]["labels"])
                  for d in yaml.safe_load_all((dest / "k8s/10-node-labels.yaml").read_text()) if d)
    assert labels["gpu05"] == {"ainet.fabric/cluster": "topo", "ainet.fabric/rail-group": "sb2.rg1",
                               "ainet.fabric/spine-block": "sb2"}

    again = run_playbook(inv, *extra)
    assert again.returncode == 0 and recap_changed(again.stdout) == 0, again.stdout

    # gpu03's rail 1 reaches su1-r1, rail group sb1.rg1's ToR: sb1.rg1 and sb1.rg2 are fused.
    cabling_json(out, [{"host": "gpu03", "fabric": "default", "rail": 1, "kind": "wrong_tor",
                        "expected": {"tor": "su2-r1", "port": "swp1"}, "seen": {"tor": "su1-r1", "port": "swp9"}}])
    before = (dest / "slurm/default/topology.conf").read_text()
    checked = run_playbook(inv, "--check", "--diff", *extra)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "-SwitchName=sb1.rg2 Nodes=gpu[03-04]" in checked.stdout, checked.stdout
    assert (dest / "slurm/default/topology.conf").read_text() == before
    fused = run_playbook(inv, *extra)
    assert fused.returncode == 0, fused.stdout + fused.stderr
    assert "'sb1.rg2': 'fused'" in fused.stdout, fused.stdout
    switches = judge.judge_tree((dest / "slurm/default/topology.conf").read_text(), nodes)[0]
    assert dict((n, s["nodes"]) for n, s in switches.items() if s["nodes"]) == {"sb2.rg1": ["gpu05", "gpu06"]}
    assert "'sb1.rg1': 'fused'" in fused.stdout

    # No cabling result: nothing is published, and the files of the last run go.
    (out / "cabling.json").unlink()
    bare = run_playbook(inv, *extra)
    assert bare.returncode == 0 and "no cabling result" in bare.stdout, bare.stdout
    assert not [p for p in dest.rglob("*") if p.is_file()]


@pytest.mark.parametrize("limit", ["gpu03", "gpu02:gpu04", "mgmt01", "mgmt01:gpu03"])
def test_a_limit_renders_the_topology_of_the_whole_node_group(tmp_path, limit):
    """The job's play targets the node group's first node, and under --limit the group and then every other host
    (playbooks/topology.yml): a limit that leaves the first node out, or names no node at all (a management host),
    still runs the task and renders every rail group, the same bytes in the same default directory as without a limit
    (the control). The model lives in the node group's group_vars here, so the management host has none of its own:
    the action reads the group's first node's, and the defaults name the directory and the cabling file after it."""
    inv, out = write_inventory(tmp_path)
    cabling_json(out)
    (inv / "group_vars" / "all.yml").rename(inv / "group_vars" / "gpu_nodes.yml")
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    hosts["all"]["children"]["mgmt"] = {"hosts": {"mgmt01": {"ansible_connection": "local"}}}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    control = run_playbook(inv)
    assert control.returncode == 0, control.stdout + control.stderr
    whole = tmp_path / "whole"
    shutil.move(str(out / "topology"), str(whole))
    names = sorted(str(p.relative_to(whole)) for p in whole.rglob("*") if p.is_file())
    assert len(names) == 6 and "withheld none (cabling checked)" in control.stdout, control.stdout
    result = run_playbook(inv, "--limit", limit)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "withheld none (cabling checked)" in result.stdout, result.stdout
    dest = out / "topology"
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file()) == names
    for name in names:
        assert (dest / name).read_bytes() == (whole / name).read_bytes(), name


def test_a_slurm_name_with_a_hostlist_bracket_is_one_line(tmp_path):
    inv, out = write_inventory(tmp_path)
    cabling_json(out)
    result = run_playbook(inv, "-e", '{"topology_slurm_node_names": {"gpu01": "gpu[01]"}}')
    assert result.returncode != 0
    lines = [text for text in result.stdout.splitlines() if "topology_node_names.gpu01" in text]
    assert lines and "'gpu[01]' is not a Slurm node name" in lines[0], result.stdout
    assert not (out / "topology").exists()
