# -*- coding: utf-8 -*-
"""The role lossless_check reading the ToRs live, with no play of the user's own to fetch their configurations.

The ToRs are the push tests' stand-ins (files/fake_switch_api.py: the NVUE REST API, eAPI and NX-API at the protocol
level; files/sonic_cfggen_standin.py as the switch's `sonic-cfggen` over its local connection; no NOS runs here),
inside a network namespace of the test's own. Two GPU nodes (local connection, in the same namespace) have veth
"rail NICs" read through the mlnx_qos stand-in (tests/unit/plugins/modules/fixtures/mlnx_qos_standin.py), set as
roce_qos sets them for the nvidia profile. Every ToR serves the configuration tor_config renders from the same plan, except:

* leaf-sonic: node 2's port Ethernet2 lacks PFC (``pfc_enable`` gone from its PORT_QOS_MAP);
* leaf-down: its eAPI port has nothing listening; leaf-ssh: its SSH port refuses the connection.

The report must then say: nothing disagrees on the NVUE, EOS and NX-OS ToRs and on node 1's SONiC port - "not all
checked", as the mlnx_qos stand-in states no host buffers, DCQCN, CNP scheduler or RoCE ToS (and EOS no ingress
buffer): an unread topic is never agreement (issue 40) - exactly the PFC disagreement on node 2's, and "not checked"
naming the reason for the two unreachable ToRs; the play does not fail;
the switches received only reads, and the password reaches neither the output nor the report. A second run gives
leaf-sonic's configuration as text and leaf-nxos's in the directory: those win, and neither switch is read; a third
with ``lossless_check_read_tors: false`` reads no switch.

The playbook is the role's plain play (as in the role's README; playbooks/validate.yml runs the role after rail
checks that need real hosts).

The threat model this file proves part of: docs/security.md (secrets: the ToR credentials and the running configuration's secrets).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest
import yaml

from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_render import render_tors

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
FILES = os.path.join(ROOT, "tests", "integration", "files")
PASSWORD = "sw1tch-pw"
NODES = {"gpu01": 1, "gpu02": 2}
RAILS = 6
TORS = [{"name": "leaf-nvue", "rails": [1], "platform": "cumulus", "port_template": "swp{node}"},
        {"name": "leaf-sonic", "rails": [2], "platform": "sonic", "port_template": "Ethernet{node}"},
        {"name": "leaf-eos", "rails": [3], "platform": "eos", "port_template": "Ethernet{node}"},
        {"name": "leaf-nxos", "rails": [4], "platform": "nxos", "port_template": "Ethernet1/{node}"},
        {"name": "leaf-down", "rails": [5], "platform": "eos", "port_template": "Ethernet{node}"},
        {"name": "leaf-ssh", "rails": [6], "platform": "sonic", "port_template": "Ethernet{node}"}]
CLUSTER = {"name": "live", "rails": RAILS, "mtu": 9000, "qos": {"preset": "nvidia"},
           "addressing": {"mode": "p2p", "supernet": "172.17.0.0/16", "rail_prefix": 24}, "tors": TORS}
# What roce_qos sets on a NIC for the nvidia profile (tests/integration/test_roce_qos_containers.py, BOOT).
NIC_SETTINGS = (["--trust", "dscp"], ["--pfc", "0,0,0,1,0,0,0,0"], ["--dscp2prio", "set,26,3"],
                ["--dscp2prio", "set,48,6"],
                ["--tsa", "ets,ets,ets,ets,ets,ets,strict,ets", "--tcbw", "50,0,0,50,0,0,0,0"])
# Secrets planted in the inventory (the ToRs' password, an API token, a become password) and in the switches'
# running configurations (password hashes, SNMP communities, TACACS+ keys, in each NOS's grammar): none may reach
# the play's output at any verbosity nor a file the play writes (test_no_secret_leaves_the_live_read).
BECOME = "PLANTEDBECOME-pw"
API = {"ansible_connection": "local", "ansible_host": "127.0.0.1", "ansible_user": "admin",
       "ansible_password": PASSWORD, "ansible_httpapi_use_ssl": False, "ansible_become_password": BECOME}
CLI_SECRETS = ("username admin privilege 15 role network-admin secret sha512 $6$PLANTEDHASH$eos0x1\n"
               "enable secret sha512 $6$PLANTEDENABLE$eos0x2\n"
               "snmp-server community PLANTEDCOMMUNITY ro\n"
               "tacacs-server host 10.9.9.9 key 7 PLANTEDTACACS070C\n"
               "radius-server key 7 PLANTEDRADIUS0822\n")
PLANTED = (PASSWORD, BECOME, "PLANTEDHASH", "PLANTEDENABLE", "PLANTEDCOMMUNITY", "PLANTEDTACACS", "PLANTEDRADIUS",
           "PLANTEDSONIC", "PLANTEDNVUE")
PLAYBOOK = [{"name": "Check lossless agreement between the rail NICs and their ToR ports", "hosts": "gpu_nodes",
             "gather_facts": False, "roles": [{"role": "ainet.fabric.lossless_check"}]}]

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a network namespace of its own")


def nics(host):
    """The host's rail NICs, rail 1 first (unique names in the one namespace both nodes share)."""
    return ["ens%df%dnp%d" % (rail, NODES[host] - 1, NODES[host] - 1) for rail in range(1, RAILS + 1)]


def write_tool(bin_dir, name, source):
    with open(source, encoding="utf-8") as handle:
        (bin_dir / name).write_text("#!%s\n%s" % (sys.executable, handle.read()))
    (bin_dir / name).chmod(0o755)


@pytest.fixture
def lab(tmp_path):
    """The namespace with the NICs and the switches' stand-ins, the inventory, and how to run the playbook."""
    ns = "ainet-llive-%d" % os.getpid()
    bin_dir, qos_root = tmp_path / "bin", tmp_path / "qos-root"
    bin_dir.mkdir()
    qos_root.mkdir()
    (qos_root / "sys").symlink_to("/sys")   # the stand-in looks for NICs under $MLNX_QOS_STANDIN_ROOT/sys
    write_tool(bin_dir, "mlnx_qos",
               os.path.join(ROOT, "tests", "unit", "plugins", "modules", "fixtures", "mlnx_qos_standin.py"))
    write_tool(bin_dir, "sonic-cfggen", os.path.join(FILES, "sonic_cfggen_standin.py"))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=os.pathsep.join([str(bin_dir), BIN, os.environ.get("PATH", "")]),
               MLNX_QOS_STANDIN_ROOT=str(qos_root), SONIC_STANDIN_DB=str(tmp_path / "config_db.json"),
               SONIC_STANDIN_LOG=str(tmp_path / "sonic-reads.log"))

    plan = rail_plan(CLUSTER, {host: {"node_id": node, "rail_interfaces": nics(host)} for host, node in NODES.items()})
    rendered = {item["name"]: item for item in render_tors(plan)["rendered"]}
    config_db = json.loads(json.dumps(rendered["leaf-sonic"]["data"]))
    del config_db["PORT_QOS_MAP"]["Ethernet2"]["pfc_enable"]            # node 2's port lacks PFC
    config_db.update({"SNMP_COMMUNITY": {"PLANTEDSONICCOMMUNITY": {"TYPE": "RO"}},
                      "TACPLUS": {"global": {"passkey": "PLANTEDSONICPASSKEY"}},
                      "RADIUS_SERVER": {"10.9.9.9": {"passkey": "PLANTEDSONICRADIUS"}}})
    applied = json.loads(json.dumps(rendered["leaf-nvue"]["data"]))
    applied.setdefault("system", {}).setdefault("aaa", {})["user"] = {
        "admin": {"hashed-password": "$6$PLANTEDNVUEHASH$x", "role": "system-admin"}}
    applied.setdefault("service", {})["snmp-server"] = {"readonly-community": {"PLANTEDNVUECOMMUNITY": {}}}
    (tmp_path / "config_db.json").write_text(json.dumps(config_db))
    start = tmp_path / "start.json"
    start.write_text(json.dumps({"applied": applied, "running": CLI_SECRETS + rendered["leaf-eos"]["text"],
                                 "nxos": CLI_SECRETS + rendered["leaf-nxos"]["text"]}))

    inv = tmp_path / "inv"
    (inv / "group_vars").mkdir(parents=True)
    (inv / "group_vars" / "all.yml").write_text(yaml.safe_dump({"fabric_cluster": CLUSTER}))
    node = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "ansible_become": False}
    (inv / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {
        "gpu_nodes": {"hosts": {host: dict(node, fabric_node_id=n, fabric_rail_interfaces=nics(host))
                                for host, n in NODES.items()}},
        "tors": {"hosts": {
            "leaf-nvue": dict(API, ansible_httpapi_port=8765), "leaf-eos": dict(API, ansible_httpapi_port=8080),
            # NX-OS: its API token as ansible_httpapi_password (the ToR push's variable for it)
            "leaf-nxos": dict(API, ansible_httpapi_port=8081, ansible_password=None, ansible_httpapi_password=PASSWORD),
            "leaf-down": dict(API, ansible_httpapi_port=8099),
            "leaf-sonic": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
            "leaf-ssh": {"ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": 1,
                         "ansible_user": "admin", "ansible_ssh_timeout": 5}}}}}}))

    subprocess.run(["ip", "netns", "add", ns], check=True)
    server = None
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        for host in NODES:
            for index, nic in enumerate(nics(host)):
                peer = "p%s%d" % (host[-1], index)
                subprocess.run(["ip", "-n", ns, "link", "add", nic, "mtu", "9000", "type", "veth", "peer", "name",
                                peer, "mtu", "9000"], check=True)
                for _args in NIC_SETTINGS:
                    subprocess.run(["ip", "netns", "exec", ns, str(bin_dir / "mlnx_qos"), "-i", nic] + _args,
                                   env=env, check=True, capture_output=True)
        log = tmp_path / "requests.log"
        server = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, os.path.join(FILES, "fake_switch_api.py"),
                                   str(log), str(start)], stdout=subprocess.PIPE, text=True)
        assert server.stdout.readline().strip() == "ready"
        playbook = tmp_path / "lossless_check.yml"
        playbook.write_text(yaml.safe_dump(PLAYBOOK, sort_keys=False))

        def run(*extra):
            began = time.monotonic()
            result = subprocess.run(
                ["ip", "netns", "exec", ns, os.path.join(BIN, "ansible-playbook"), "-i", str(inv),
                 str(playbook),
                 "-e", "lossless_check_report_dir=%s" % (tmp_path / "report")] + list(extra),
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
            result.seconds = time.monotonic() - began
            return result

        yield {"run": run, "tmp": tmp_path, "inv": inv, "log": log, "rendered": rendered, "start": start}
    finally:
        if server is not None:
            server.kill()
            server.wait()
        subprocess.run(["ip", "netns", "del", ns], check=False)


# What the mlnx_qos stand-in does not state (host buffers, DCQCN, CNP scheduler, RoCE ToS) and EOS's config does not
# hold (its ingress buffers): the topics a link of this lab leaves unchecked when everything it states agrees.
UNREAD = {"buffer_host", "cnp_host", "ecn_host", "tos", "buffer_switch"}


def report_rows(tmp_path):
    """{(rail, host): (verdict, details)} of the Markdown report's link table (a link whose topics were compared
    apart from :data:`UNREAD` is ``partly`` instead of ``not all checked``)."""
    rows = {}
    with open(tmp_path / "report" / "lossless-report.md", encoding="utf-8") as handle:
        for line in handle:
            # the cells as written, then without the report's Markdown escapes (report_style.md_cell: "\\:" ...)
            cells = [re.sub(r"\\(.)", r"\1", c.strip()) for c in line.strip().strip("|").split(" | ")]
            if len(cells) == 9 and cells[0] == "default":
                topics = set(re.findall(r"`(\w+)`:", cells[8]))
                verdict = "partly" if cells[6] == "not all checked" and topics and topics <= UNREAD else cells[6]
                rows[(int(cells[1]), cells[2])] = (verdict, cells[7])
    return rows


def requests(log):
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_the_role_reads_the_tors_live_and_reports_each_link(lab):
    result = lab["run"]()
    print("the lossless_check play, reading 6 ToRs live: %.1f s" % result.seconds)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = report_rows(lab["tmp"])
    assert len(rows) == 2 * RAILS, rows
    for rail in (1, 3, 4):
        for host in NODES:
            assert rows[(rail, host)] == ("partly", ""), (rail, host, rows[(rail, host)])
    assert rows[(2, "gpu01")] == ("partly", "")
    # A port without PFC: RoCE's DSCP lands in a lossy class there, PFC differs from the host's and the profile's.
    assert rows[(2, "gpu02")] == ("DISAGREE", no_pfc("Ethernet2"))
    for host in NODES:
        verdict, reason = rows[(5, host)]
        assert verdict == "not checked"
        assert reason.startswith("ToR leaf-down could not be read live (Arista EOS API http://127.0.0.1:8099): "
                                 "POST http://127.0.0.1:8099/command-api:"), reason
        assert "Connection refused" in reason
        verdict, reason = rows[(6, host)]
        assert verdict == "not checked"
        assert reason.startswith("ToR leaf-ssh could not be reached (sonic-cfggen -d --print-data over its ssh "
                                 "connection): "), reason
        assert "Connection refused" in reason
    assert "12 host-ToR links: 0 agree, 1 disagree, 7 not all checked, 4 not checked" in result.stdout
    assert "ToRs read live: leaf-eos, leaf-nvue, leaf-nxos, leaf-sonic" in result.stdout

    # Only reads reached the switches, with the ToR push's credentials.
    sent = requests(lab["log"])
    assert [(r["port"], r["method"], r["path"]) for r in sent] == [
        (8080, "POST", "/command-api"), (8765, "GET", "/nvue_v1/"), (8081, "POST", "/ins")]
    assert all(r["auth"] for r in sent)
    assert sent[0]["body"]["params"]["cmds"] == ["enable", "show running-config"]
    assert sent[1]["query"] == "rev=applied&filled=false"
    assert sent[2]["body"]["ins_api"]["type"] == "cli_show_ascii"
    assert (lab["tmp"] / "sonic-reads.log").read_text() == "-d --print-data\n"
    assert PASSWORD not in result.stdout + result.stderr
    report = (lab["tmp"] / "report" / "lossless-report.md").read_text()
    assert "Read: 2 hosts, 4 switches, 4 switches read live." in report
    assert PASSWORD not in report


def no_pfc(port):
    return "<br>".join((
        "`roce_dscp_lossy_on_switch`: DSCP 26 is lossless priority 3 on the host but lands in lossy TC3 on the "
        "switch port %s (PFC there: none)." % port,
        "`pfc_mismatch`: PFC is on priorities 3 on the host but none on the switch port %s." % port,
        "`profile_mismatch_switch`: The switch port %s has PFC on priorities none; the nvidia profile wants 3." % port))


def test_given_configurations_win_over_reading_the_tor_and_false_reads_none(lab):
    fixed = json.dumps(lab["rendered"]["leaf-sonic"]["data"])
    extra = lab["tmp"] / "given.json"
    extra.write_text(json.dumps({"lossless_check_switch_configs": {"leaf-sonic": fixed}}))
    configs = lab["inv"] / "switch-configs"
    configs.mkdir()
    text = lab["rendered"]["leaf-nxos"]["text"]
    assert "  priority-flow-control mode on\n" in text
    (configs / "leaf-nxos.cfg").write_text(text.replace("priority-flow-control mode on",
                                                        "priority-flow-control mode off"))
    result = lab["run"]("-e", "@%s" % extra, "-e", "lossless_check_read_tors=true")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = report_rows(lab["tmp"])
    assert rows[(2, "gpu02")] == ("partly", "")                              # the given text, not the switch
    assert rows[(4, "gpu01")] == ("DISAGREE", no_pfc("Ethernet1/1"))         # the directory's file, not the switch
    assert rows[(1, "gpu01")] == ("partly", "")                              # still read live
    assert not (lab["tmp"] / "sonic-reads.log").exists()
    assert [r["port"] for r in requests(lab["log"])] == [8080, 8765]         # NX-OS and SONiC were not read
    assert "ToRs read live: leaf-eos, leaf-nvue;" in result.stdout

    before = len(requests(lab["log"]))
    off = lab["run"]("-e", "lossless_check_read_tors=false")
    assert off.returncode == 0, off.stdout + off.stderr
    assert len(requests(lab["log"])) == before and not (lab["tmp"] / "sonic-reads.log").exists()
    rows = report_rows(lab["tmp"])
    assert rows[(4, "gpu02")] == ("DISAGREE", no_pfc("Ethernet1/2"))          # the directory still counts
    assert rows[(1, "gpu01")] == ("not checked", "no configuration of ToR leaf-nvue was read (platform cumulus; "
                                  "looked in %s for leaf-nvue.*)" % configs)
    assert "ToRs read live: none" in off.stdout


def test_no_secret_leaves_the_live_read(lab):
    """The ToRs' credentials from the inventory and the secrets in their running configurations reach neither the
    play's output at any verbosity (the registered read loop is printed from -v on, its arguments and results at
    -vvv) nor any file the play writes."""
    began = time.monotonic()
    outputs = {}
    for level in ("", "-v", "-vv", "-vvv", "-vvvv"):
        result = lab["run"](*([level] if level else []))
        assert result.returncode == 0, result.stdout + result.stderr
        outputs[level or "0"] = result.stdout + result.stderr
    seconds = time.monotonic() - began
    print("the lossless_check play at 5 verbosity levels: %.1f s" % seconds)
    # the reads happened, and the switches served their secrets (the control: the planted text was there to leak)
    assert "ToRs read live: leaf-eos, leaf-nvue, leaf-nxos, leaf-sonic" in outputs["0"]
    served = lab["start"].read_text() + (lab["tmp"] / "config_db.json").read_text()
    assert all(secret in served for secret in PLANTED[2:]), served
    # -v prints the loop's results (what is kept of each read: the QoS facts), -vvv the module arguments
    assert '"facts":' in outputs["-v"] and '"facts":' not in outputs["0"]
    for level, text in outputs.items():
        leaked = [secret for secret in PLANTED if secret in text]
        assert not leaked, (level, leaked, [line for line in text.splitlines() if any(s in line for s in leaked)][:5])
    inputs = {lab["start"], lab["tmp"] / "config_db.json", lab["log"], lab["tmp"] / "sonic-reads.log"}
    written = [path for path in lab["tmp"].rglob("*") if path.is_file() and path not in inputs
               and "inv" not in path.relative_to(lab["tmp"]).parts[:1] and path.parent.name != "bin"]
    assert any(path.name == "lossless-report.html" for path in written), written
    for path in written:
        text = path.read_text(errors="replace")
        assert not [secret for secret in PLANTED if secret in text], path
