# -*- coding: utf-8 -*-
"""playbooks/tors.yml with -e tor_config_push=true against stand-in switch APIs (files/fake_switch_api.py: the
NVUE REST API, eAPI and NX-API CLI at the protocol level; no NOS runs here), inside a network namespace of the
test's own: the push changes the switch once, a second push reports changed=0, check mode sends nothing that changes,
and the password never reaches the output or the rendered files."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
PASSWORD = "sw1tch-pw"
CLUSTER = {"name": "push", "rails": 2, "mtu": 9000,
           "addressing": {"mode": "p2p", "supernet": "172.17.0.0/16", "rail_prefix": 24},
           "tors": [{"name": "leaf-nvue", "rails": [1], "platform": "cumulus", "port_template": "swp{node}"},
                    {"name": "leaf-eos", "rails": [2], "platform": "eos", "port_template": "Ethernet{node}"}]}

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a network namespace of its own")


@pytest.fixture
def switch_ns(tmp_path):
    ns = "ainet-tpush-%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", ns], check=True)
    subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
    log = tmp_path / "requests.log"
    start = tmp_path / "start.json"
    start.write_text(json.dumps({"applied": {"system": {"hostname": "leaf"}, "interface": {
        "swp9": {"description": "gpu09 ens1 rail1 [ainet]", "ip": {"address": {"172.17.0.16/31": {}}}},
        "swp10": {"description": "storage (another team)", "ip": {"address": {"10.9.9.1/24": {}}}}}},
        "nxos": "hostname leaf-nxos\nfeature nxapi\ninterface Ethernet1/1\n  mtu 1500\n"
                "interface Ethernet1/9\n  description gpu09 ens1 rail1 [ainet]\n  no switchport\n"
                "  ip address 172.17.0.16/31\n  priority-flow-control mode on\n"
                "interface Ethernet1/10\n  description storage (another team)\n  ip address 10.9.9.1/24\n"}))
    server = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable,
                               os.path.join(ROOT, "tests", "integration", "files", "fake_switch_api.py"), str(log),
                               str(start)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().strip() == "ready"
        yield ns, log
    finally:
        server.kill()
        server.wait()
        subprocess.run(["ip", "netns", "del", ns], check=False)


def inventory(tmp_path):
    inv = tmp_path / "inv"
    (inv / "group_vars").mkdir(parents=True, exist_ok=True)
    (inv / "group_vars" / "all.yml").write_text(yaml.safe_dump({
        "fabric_cluster": CLUSTER, "tor_config_output_dir": str(tmp_path / "out"),
        "tor_config_running_dir": str(tmp_path / "running")}))
    switch = {"ansible_connection": "local", "ansible_host": "127.0.0.1", "ansible_user": "admin",
              "ansible_password": PASSWORD, "ansible_httpapi_use_ssl": False}
    (inv / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {
        "gpu_nodes": {"hosts": {"gpu%02d" % n: {"fabric_node_id": n, "fabric_rail_interfaces": ["ens1", "ens2"]}
                                for n in (1, 2)}},
        "tors": {"hosts": {"leaf-nvue": dict(switch, ansible_httpapi_port=8765),
                           "leaf-eos": dict(switch, ansible_httpapi_port=8080)}}}}}))
    return inv


def publish_plan(inv):
    """The plan job writes the lock next to the inventory, as a push requires."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    result = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", str(inv),
                             os.path.join(ROOT, "playbooks", "plan.yml"), "-e", "rail_plan_output_dir=%s" % (inv / "plan")],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (inv / "rail_plan_lock.yml").exists()


def run(ns, inv, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = ["ip", "netns", "exec", ns, os.path.join(BIN, "ansible-playbook"), "-i", str(inv),
           os.path.join(ROOT, "playbooks", "tors.yml"), "-e", "tor_config_push=true"]
    return subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


def requests(log):
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_push_changes_once_then_reports_nothing_to_do(tmp_path, switch_ns):
    ns, log = switch_ns
    inv = inventory(tmp_path)
    publish_plan(inv)
    checked = run(ns, inv, "--check", "--diff")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    sent = requests(log)
    assert [r for r in sent if r["port"] == 8765 and r["method"] != "GET"] == []     # no NVUE revision
    eapi = [c for r in sent if r["port"] == 8080 for c in r["body"]["params"]["cmds"]]
    assert "abort" in eapi and "commit" not in eapi
    assert "+ interface swp1 link mtu: 9216" in checked.stdout

    first = run(ns, inv)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "leaf-nvue" in first.stdout and "changed=1" in first.stdout
    sent = requests(log)
    assert any(r["method"] == "POST" and r["path"] == "/nvue_v1/revision" for r in sent)
    assert any("commit" in r["body"]["params"]["cmds"] for r in sent if r["port"] == 8080)
    assert all(r["auth"] for r in sent)

    before = len(requests(log))
    again = run(ns, inv)
    assert again.returncode == 0, again.stdout + again.stderr
    recap = [line for line in again.stdout.splitlines() if line.startswith(("leaf-nvue", "leaf-eos"))]
    assert len(recap) == 2 and all("changed=0" in line for line in recap), again.stdout
    later = requests(log)[before:]
    assert not any(r["method"] == "POST" and r["path"] == "/nvue_v1/revision" for r in later)
    assert not any("commit" in r["body"]["params"]["cmds"] for r in later if r["port"] == 8080)

    state = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c",
                            "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8765/state').read()"
                            ".decode())"], capture_output=True, text=True, check=True)
    interfaces = json.loads(state.stdout)["applied"]["interface"]
    # released: ours, no longer planned
    assert "description" not in interfaces["swp9"] and not interfaces["swp9"].get("ip", {}).get("address")
    assert interfaces["swp10"]["ip"]["address"] == {"10.9.9.1/24": {}}  # another team's port: untouched
    assert interfaces["swp1"]["ip"]["address"] == {"172.17.0.0/31": {}}
    for output in (checked, first, again):
        assert PASSWORD not in output.stdout + output.stderr
    for path in (tmp_path / "out" / "tors").iterdir():
        assert PASSWORD not in path.read_text()


def test_wrong_credentials_fail_naming_the_switch_not_the_password(tmp_path, switch_ns):
    ns, _log = switch_ns
    inv = inventory(tmp_path)
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    for host in hosts["all"]["children"]["tors"]["hosts"].values():
        host["ansible_password"] = "not-the-pw"
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    publish_plan(inv)
    result = run(ns, inv)
    assert result.returncode != 0
    assert "HTTP 401 Unauthorized" in result.stdout and "127.0.0.1" in result.stdout
    assert "not-the-pw" not in result.stdout + result.stderr


def test_sonic_push_over_the_connection_patches_once_and_releases_stale_marked_ports(tmp_path):
    cluster = {"name": "spush", "rails": 1, "addressing": CLUSTER["addressing"],
               "tors": [{"name": "leaf-sonic", "rails": [1], "platform": "sonic", "port_template": "Ethernet{node}"}]}
    inv = tmp_path / "inv"
    (inv / "group_vars").mkdir(parents=True)
    (inv / "group_vars" / "all.yml").write_text(yaml.safe_dump({
        "fabric_cluster": cluster, "tor_config_output_dir": str(tmp_path / "out"),
        "tor_config_running_dir": str(tmp_path / "running")}))
    (inv / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {
        "gpu_nodes": {"hosts": {"gpu01": {"fabric_node_id": 1}, "gpu02": {"fabric_node_id": 2}}},
        "tors": {"hosts": {"leaf-sonic": {"ansible_connection": "local",
                                          "ansible_python_interpreter": sys.executable}}}}}}))
    # The stand-ins become the switch's `sonic-cfggen` and `config` commands, run by this Python.
    bin_dir = tmp_path / "sonic-bin"
    bin_dir.mkdir()
    for command, source in (("sonic-cfggen", "sonic_cfggen_standin.py"), ("config", "sonic_config_standin.py")):
        with open(os.path.join(ROOT, "tests", "integration", "files", source)) as handle:
            (bin_dir / command).write_text("#!%s\n%s" % (sys.executable, handle.read()))
        (bin_dir / command).chmod(0o755)
    db = tmp_path / "config_db.json"
    db.write_text(json.dumps({
        "DEVICE_METADATA": {"localhost": {"hostname": "leaf-sonic"}},
        "PORT": {"Ethernet1": {"mtu": "9100", "lanes": "1,2"}, "Ethernet2": {"lanes": "3,4"},
                 "Ethernet9": {"description": "gpu09 ens1 rail1 [ainet]", "mtu": "9216", "lanes": "5,6"},
                 "Ethernet10": {"description": "storage (another team)", "lanes": "7,8"}},
        "INTERFACE": {"Ethernet9": {}, "Ethernet9|172.17.0.16/31": {}, "Ethernet10|10.9.9.1/24": {}}}))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               SONIC_STANDIN_DB=str(db),
               PATH=os.pathsep.join([str(bin_dir), BIN, os.environ.get("PATH", "")]))
    publish_plan(inv)
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", str(inv), os.path.join(ROOT, "playbooks", "tors.yml"),
           "-e", "tor_config_push=true"]

    def play(*extra):
        return subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                              check=False)

    checked = play("--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert not os.path.exists(str(db) + ".patches")
    first = play()
    assert first.returncode == 0, first.stdout + first.stderr
    state = json.loads(db.read_text())
    assert state["PORT"]["Ethernet1"]["mtu"] == "9216" and state["PORT"]["Ethernet1"]["lanes"] == "1,2"
    assert "Ethernet1|172.17.0.0/31" in state["INTERFACE"]
    assert "Ethernet9|172.17.0.16/31" not in state["INTERFACE"] and "description" not in state["PORT"]["Ethernet9"]
    assert "Ethernet10|10.9.9.1/24" in state["INTERFACE"]          # another team's port is left alone
    again = play()
    assert again.returncode == 0
    assert [line for line in again.stdout.splitlines() if line.startswith("leaf-sonic")][0].count("changed=0") == 1
    assert len((tmp_path / "config_db.json.patches").read_text().splitlines()) == 1


def test_nothing_is_pushed_without_the_published_plan_or_against_it(tmp_path, switch_ns):
    ns, log = switch_ns
    inv = inventory(tmp_path)
    unpublished = run(ns, inv)
    assert unpublished.returncode != 0
    assert "no published plan" in unpublished.stdout and "run the plan job (ansible-playbook ainet.fabric.plan)" in unpublished.stdout
    publish_plan(inv)
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    hosts["all"]["children"]["gpu_nodes"]["hosts"]["gpu02"]["fabric_node_id"] = 7   # renumbered since the review
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    changed = run(ns, inv)
    assert changed.returncode != 0
    assert "hostvars[gpu02].fabric_node_id: 7 disagrees with the published plan" in changed.stdout
    assert requests(log) == [], "a request reached a switch"


def test_nxos_push_over_nxapi_changes_once_and_releases_stale_marked_ports(tmp_path, switch_ns):
    ns, log = switch_ns
    cluster = {"name": "npush", "rails": 1, "mtu": 9000, "addressing": CLUSTER["addressing"],
               "tors": [{"name": "leaf-nxos", "rails": [1], "platform": "nxos", "port_template": "Ethernet1/{node}"}]}
    inv = tmp_path / "inv"
    (inv / "group_vars").mkdir(parents=True)
    (inv / "group_vars" / "all.yml").write_text(yaml.safe_dump({
        "fabric_cluster": cluster, "tor_config_output_dir": str(tmp_path / "out"),
        "tor_config_running_dir": str(tmp_path / "running")}))
    (inv / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {
        "gpu_nodes": {"hosts": {"gpu%02d" % n: {"fabric_node_id": n, "fabric_rail_interfaces": ["ens1"]}
                                for n in (1, 2)}},
        "tors": {"hosts": {"leaf-nxos": {"ansible_connection": "local", "ansible_host": "127.0.0.1",
                                         "ansible_user": "admin", "ansible_password": PASSWORD,
                                         "ansible_httpapi_use_ssl": False, "ansible_httpapi_port": 8081}}}}}}))
    publish_plan(inv)
    checked = run(ns, inv, "--check", "--diff")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert [r["body"]["ins_api"]["type"] for r in requests(log)] == ["cli_show_ascii"]
    assert "+ interface Ethernet1/2: ip address 172.17.0.2/31" in checked.stdout
    assert "~ interface Ethernet1/1: mtu 1500 -> mtu 9216" in checked.stdout

    first = run(ns, inv)
    assert first.returncode == 0, first.stdout + first.stderr
    assert [line for line in first.stdout.splitlines() if line.startswith("leaf-nxos")][0].count("changed=1") == 1
    assert [r["body"]["ins_api"]["type"] for r in requests(log)][1:] == [
        "cli_show_ascii", "cli_conf", "cli_show_ascii"]
    assert all(r["auth"] and r["path"] == "/ins" for r in requests(log))
    again = run(ns, inv)
    assert again.returncode == 0, again.stdout + again.stderr
    assert [line for line in again.stdout.splitlines() if line.startswith("leaf-nxos")][0].count("changed=0") == 1
    assert [r["body"]["ins_api"]["type"] for r in requests(log)][4:] == ["cli_show_ascii"]

    state = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c",
                            "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8081/state').read()"
                            ".decode())"], capture_output=True, text=True, check=True)
    running = json.loads(state.stdout)["nxos"]
    rendered = (tmp_path / "out" / "tors" / "leaf-nxos.cfg").read_text()
    assert "interface Ethernet1/9\n  no switchport\n" in running          # released: ours, no longer planned
    assert "gpu09" not in running and "172.17.0.16/31" not in running
    assert "interface Ethernet1/10\n  description storage (another team)\n  ip address 10.9.9.1/24\n" in running
    assert "policy-map type queuing AINET_QUEUING\n  class type queuing c-out-8q-q-default\n" in running
    assert "interface Ethernet1/1\n" in rendered
    for output in (checked, first, again):
        assert PASSWORD not in output.stdout + output.stderr
