# -*- coding: utf-8 -*-
"""Run playbooks/tors.yml for real (ansible-playbook, render mode on the controller): files per NOS,
idempotence, check mode, diffs against running configurations, one clear error for bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
CLUSTER = {"name": "tors", "rails": 3, "mtu": 9000,
           "addressing": {"mode": "p2p", "supernet": "172.17.0.0/16", "rail_prefix": 24},
           "tors": [{"name": "leaf-sonic", "rails": [1], "platform": "sonic", "port_template": "Ethernet{node}"},
                    {"name": "leaf-nvue", "rails": [2], "platform": "cumulus", "port_template": "swp{node}"},
                    {"name": "leaf-eos", "rails": [3], "platform": "eos", "port_template": "Ethernet{node}/1"}]}


def run(inv, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", str(inv), os.path.join(ROOT, "playbooks", "tors.yml")]
    return subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)


def inventory(tmp_path, cluster=None):
    inv = tmp_path / "inv"
    (inv / "group_vars").mkdir(parents=True, exist_ok=True)
    (inv / "group_vars" / "all.yml").write_text(yaml.safe_dump({
        "fabric_cluster": cluster or CLUSTER, "tor_config_output_dir": str(tmp_path / "out"),
        "tor_config_running_dir": str(tmp_path / "running")}))
    (inv / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": {
        "gpu%02d" % n: {"fabric_node_id": n, "fabric_rail_interfaces": ["ens1", "ens2", "ens3"]} for n in (1, 2)}}}}}))
    return inv


def test_render_is_written_once_and_then_idempotent(tmp_path):
    inv = inventory(tmp_path)
    first = run(inv)
    assert first.returncode == 0, first.stdout + first.stderr
    out = tmp_path / "out" / "tors"
    assert sorted(os.listdir(out)) == ["leaf-eos.cfg", "leaf-nvue.yaml", "leaf-sonic.json"]
    assert json.loads((out / "leaf-sonic.json").read_text())["INTERFACE"]["Ethernet1|172.17.0.0/31"] == {}
    assert "interface Ethernet2/1\n" in (out / "leaf-eos.cfg").read_text()
    assert yaml.safe_load((out / "leaf-nvue.yaml").read_text())[0]["set"]["interface"]["swp1"]["ip"] == {
        "address": {"172.17.1.0/31": {}}}
    assert "3 ToR configuration(s)" in first.stdout and "3 changed" in first.stdout
    again = run(inv)
    assert again.returncode == 0 and "changed=0" in again.stdout, again.stdout


def test_check_mode_writes_nothing_and_diff_shows_the_change(tmp_path):
    inv = inventory(tmp_path)
    assert run(inv).returncode == 0
    out = tmp_path / "out" / "tors" / "leaf-sonic.json"
    before = out.read_text()
    cluster = json.loads(json.dumps(CLUSTER))
    cluster["tors"][0]["port_mtu"] = 9100
    inventory(tmp_path, cluster)
    checked = run(inv, "--check", "--diff")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert out.read_text() == before
    assert '-            "mtu": "9216"' in checked.stdout and '+            "mtu": "9100"' in checked.stdout
    assert "changed=1" in checked.stdout


def test_running_configurations_are_diffed_and_foreign_settings_ignored(tmp_path):
    inv = inventory(tmp_path)
    assert run(inv).returncode == 0
    rendered = tmp_path / "out" / "tors"
    running = tmp_path / "running"
    running.mkdir()
    config = json.loads((rendered / "leaf-sonic.json").read_text())
    config["PORT"]["Ethernet1"]["admin_status"] = "down"
    config["PORT"]["Ethernet64"] = {"description": "uplink", "mtu": "9100"}
    (running / "leaf-sonic.json").write_text(json.dumps(config))
    (running / "leaf-eos.cfg").write_text((rendered / "leaf-eos.cfg").read_text() + "router bgp 65001\n")
    result = run(inv, "--diff")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "out of sync with the running configuration: leaf-sonic" in result.stdout
    assert "~ PORT Ethernet1 admin_status: down -> up" in result.stdout
    assert "Ethernet64" not in result.stdout and "router bgp" not in result.stdout
    assert "1 difference(s), 0 stale port(s)" in result.stdout


@pytest.mark.parametrize("change,expected", [
    ({"platform": "junos"}, "fabric_cluster.tors[0].platform"),
    ({"port_mtu": 9010}, "fabric_cluster.tors[0].port_mtu"),
])
def test_bad_input_fails_with_one_clear_error_and_writes_nothing(tmp_path, change, expected):
    cluster = json.loads(json.dumps(CLUSTER))
    cluster["tors"][0].update(change)
    result = run(inventory(tmp_path, cluster))
    assert result.returncode != 0
    assert expected in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert not (tmp_path / "out").exists()


NXOS = {"name": "tors", "rails": 3, "mtu": 9000,
        "addressing": {"mode": "p2p", "supernet": "172.17.0.0/16", "rail_prefix": 24},
        "tors": [{"name": "leaf-nxos", "rails": [1], "platform": "nxos", "port_template": "Ethernet1/{node}"},
                 {"name": "leaf-nxos2", "rails": [2], "platform": "nxos", "port_template": "Ethernet1/{node}"},
                 {"name": "leaf-os10", "rails": [3], "platform": "os10"}]}


def test_nxos_renders_a_cfg_and_a_running_config_that_holds_it_is_in_sync(tmp_path):
    inv = inventory(tmp_path, NXOS)
    first = run(inv)
    assert first.returncode == 0, first.stdout + first.stderr
    out = tmp_path / "out" / "tors"
    assert sorted(os.listdir(out)) == ["leaf-nxos.cfg", "leaf-nxos2.cfg"]
    assert "2 ToR configuration(s)" in first.stdout and "not rendered: leaf-os10" in first.stdout
    text = (out / "leaf-nxos.cfg").read_text()
    assert "interface Ethernet1/2\n" in text and "  ip address 172.17.0.2/31\n" in text
    assert "no offline schema of the NX-OS CLI" in first.stdout
    running = tmp_path / "running"
    running.mkdir()
    # NX-OS leaves defaults (`no shutdown` of an up port) out of its running configuration.
    (running / "leaf-nxos.cfg").write_text("hostname leaf-nxos\n" + text.replace("  no shutdown\n", ""))
    (running / "leaf-nxos2.cfg").write_text(text.replace("  mtu 9216\n  ip address", "  mtu 1500\n  ip address"))
    again = run(inv, "--diff")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "out of sync with the running configuration: leaf-nxos2;" in again.stdout
    assert "~ interface Ethernet1/1: mtu 1500 -> mtu 9216" in again.stdout


def test_port_names_the_nos_would_refuse_fail_before_anything_is_written(tmp_path):
    cluster = json.loads(json.dumps(NXOS))
    cluster["tors"][1]["port_template"] = "Ethernet{node}"
    result = run(inventory(tmp_path, cluster))
    assert result.returncode != 0
    assert "port Ethernet1: not a Cisco NX-OS port name (Ethernet<slot>/<port>[/<breakout>])" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert not (tmp_path / "out" / "tors").exists()


def with_tor_hosts(inv):
    """The inventory ``inv`` with the ToR host leaf-nvue in group tors (the push play's; no connection variables: no
    test here lets the push play reach a switch)."""
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    hosts["all"]["children"]["tors"] = {"hosts": {"leaf-nvue": {}}}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    return inv


def test_the_render_runs_on_one_node_of_the_run_and_a_limit_still_decides(tmp_path):
    """The render runs in a play of one node: the group's first node, or under --limit the first node of the limit
    (gpu02 here, not the group's first); a limit without a node of the group renders nothing, as a play on the group
    would, and says nothing else."""
    inv = inventory(tmp_path)
    limited = run(inv, "--limit", "gpu02")
    assert limited.returncode == 0, limited.stdout + limited.stderr
    assert "included: ainet.fabric.tor_config for gpu02\n" in limited.stdout
    assert "3 ToR configuration(s)" in limited.stdout and len(os.listdir(tmp_path / "out" / "tors")) == 3
    assert "gpu01" not in limited.stdout
    whole = run(inv)
    assert whole.returncode == 0 and "included: ainet.fabric.tor_config for gpu01\n" in whole.stdout, whole.stdout
    assert "gpu02" not in whole.stdout  # the play is the group's first node alone (<group>[0])
    elsewhere = tmp_path / "elsewhere"
    inv = with_tor_hosts(inventory(elsewhere))
    none = run(inv, "--limit", "leaf-nvue")
    assert none.returncode == 0, none.stdout + none.stderr
    assert none.stdout.count("skipping: no hosts matched") == 1, none.stdout   # the render play, on the node group
    assert "ToR configuration(s)" not in none.stdout and not (elsewhere / "out").exists()
    assert "WARNING" not in none.stdout + none.stderr, none.stdout + none.stderr


PUSH_TASK = "TASK [ainet.fabric.tor_config : Push this ToR's configuration to the switch]"


@pytest.mark.parametrize("limit", [None, "gpu01,gpu02,leaf-nvue", "leaf-nvue"])
@pytest.mark.parametrize("bad,expected", [
    # the model: refused by the render task (run_once), or by the push role's first task
    ("model", "fabric_cluster.tors[0].platform: 'junos' is not one of "),
    # a role variable: refused by the role's argument check, on the one node that included the role (the other nodes
    # of a limit have no task: without any_errors_fatal the push play would start)
    ("variable", "argument 'tor_config_validate' is of type str and we were unable to convert to bool"),
])
def test_bad_input_never_reaches_the_push(tmp_path, limit, bad, expected):
    """With tor_config_push, bad input ends the job in the render play (any_errors_fatal): the push play never starts,
    under a limit of several nodes too. Under a limit without a node of the group (no render play), the push role
    refuses it before its push task."""
    cluster = json.loads(json.dumps(CLUSTER))
    extra = ["-e", "tor_config_push=true"] + (["--limit", limit] if limit else [])
    if bad == "model":
        cluster["tors"][0]["platform"] = "junos"
    else:
        extra += ["-e", "tor_config_validate=maybe"]
    result = run(with_tor_hosts(inventory(tmp_path, cluster)), *extra)
    assert result.returncode != 0, result.stdout
    fatal = [line for line in result.stdout.splitlines() if line.startswith("fatal: [")]
    assert len(fatal) == 1 and expected in fatal[0], result.stdout
    assert ("PLAY [Push each ToR's configuration to its switch]" in result.stdout) == (limit == "leaf-nvue"), \
        result.stdout
    assert PUSH_TASK not in result.stdout and "Traceback" not in result.stdout + result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("push", [False, True])
def test_without_a_model_the_job_fails_with_the_one_line_naming_fabric_cluster(tmp_path, push):
    """The roles' defaults name fabric_cluster.name (the output directory): without a model the render task's (and the
    push role's) one line, not the undefined variable of a default in the role's argument check."""
    inv = with_tor_hosts(inventory(tmp_path))
    (inv / "group_vars" / "all.yml").write_text(yaml.safe_dump({"tor_config_running_dir": str(tmp_path / "running")}))
    extra = ["-e", "tor_config_push=true", "--limit", "leaf-nvue"] if push else []
    result = run(inv, *extra)
    assert result.returncode != 0, result.stdout
    fatal = [line for line in result.stdout.splitlines() if line.startswith("fatal: [")]
    assert len(fatal) == 1, result.stdout
    assert json.loads(fatal[0].split(" => ", 1)[1])["msg"] == (
        "fabric_cluster: None is not defined. Fix: describe the cluster in the inventory's group_vars "
        "(docs/cluster-model.md)"), result.stdout
    assert "undefined" not in result.stdout + result.stderr and PUSH_TASK not in result.stdout
    assert not (inv / ".ainet-fabric").exists()
