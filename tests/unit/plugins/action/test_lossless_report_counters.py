# -*- coding: utf-8 -*-
"""``ainet.fabric.lossless_report`` with ``read_tor`` and ``read_counters`` (plugins/action/lossless_report.py), run
in-process as the role's loop runs it (delegated to the ToR): an EOS ToR read over a real eAPI socket on 127.0.0.1
with the push's inventory variables, EOS and Cumulus ToRs over their connection (the command strings the connection
gets, ``| json`` unquoted), the step's ports given to Cumulus, and one failed command as one line naming the ToR and
the command. Answers are the recorded samples of data/counters (ORIGIN.md there)."""

from __future__ import annotations

import base64
import importlib
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from unittest import mock

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import parse_counters
from ansible_collections.ainet.fabric.tests.unit.plugins.modules.host_task import COLLECTION

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "module_utils", "data", "counters")
PASSWORD = "eapi-s3cret"


def recorded(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def model(platform, template):
    return {"name": "t", "rails": 1, "mtu": 9000, "management_networks": ["10.0.0.0/16"],
            "addressing": {"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24},
            "tors": [{"name": "leaf1", "rails": [1], "port_template": template, "platform": platform}],
            "qos": {"preset": "nvidia"}}


def read(args, tvars, commands=None):
    """The action's result for ``read_tor: leaf1`` delegated to leaf1 with inventory variables ``tvars``; over the
    connection, ``commands`` {command string: (rc, stdout, stderr)} answer and record what ran."""
    action = importlib.import_module("%s.action.lossless_report" % COLLECTION)
    task = mock.MagicMock(args=dict(args, read_tor="leaf1", read_counters=True), async_val=0, check_mode=False,
                          diff=False, action="ainet.fabric.lossless_report", delegate_to="leaf1")
    connection = mock.MagicMock(socket_path=None)
    plugin = action.ActionModule(task, connection, mock.MagicMock(), None, None)
    ran = []

    def execute(command, sudoable=True, executable=None, in_data=None):
        ran.append(command)
        rc, out, err = (commands or {}).get(command, (127, "", "%s: not recorded" % command))
        return {"rc": rc, "stdout": out, "stderr": err}

    with mock.patch.object(plugin, "_low_level_execute_command", execute):
        result = plugin.run(task_vars={"inventory_hostname": "leaf1", "hostvars": {"leaf1": tvars}})
    return result, ran


@pytest.fixture
def eapi():
    """A real HTTP socket answering eAPI ``runCmds`` in JSON from the recorded EOS samples (basic auth checked)."""
    seen = []
    answers = [{}] + [json.loads(recorded(name)) for name in
                      ("eos-pfc-after.json", "eos-queue-detail-after.json", "eos-ecn-after.json")]
    detail = json.loads(recorded("eos-pfc-detail-after.json"))

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):  # noqa: N802 (the stdlib's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append((self.path, self.headers.get("Authorization"), body))
            cmds = body["params"]["cmds"]
            # the per-priority PFC read is a request of its own, one command a port
            result = answers if len(cmds) == len(answers) else [{}] + [detail for _cmd in cmds[1:]]
            reply = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], seen
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_an_eos_tor_s_counters_are_read_over_eapi_with_the_push_s_variables(eapi):
    port, seen = eapi
    tvars = {"ansible_host": "127.0.0.1", "ansible_httpapi_port": port, "ansible_httpapi_use_ssl": False,
             "ansible_user": "admin", "ansible_httpapi_password": PASSWORD, "ansible_connection": "ssh"}
    result, ran = read({"cluster": model("eos", "Ethernet{node}/1"), "ports": ["Ethernet1/1"]}, tvars)
    assert ran == [] and result["via"] == "http", result
    assert len(seen) == 2 and seen[0][0] == "/command-api"
    assert seen[1][2]["params"]["cmds"] == ["enable", "show interface Ethernet1/1 priority-flow-control counters detail"]
    assert seen[0][1] == "Basic " + base64.b64encode(("admin:%s" % PASSWORD).encode()).decode()
    assert seen[0][2]["params"]["format"] == "json"
    assert [c["cmd"] if isinstance(c, dict) else c for c in seen[0][2]["params"]["cmds"]] == [
        "enable", "show priority-flow-control counters", "show interfaces counters queue detail",
        "show qos interfaces ecn counters queue"]
    assert result["source"] == ("Arista EOS API http://127.0.0.1:%d (show priority-flow-control counters, show "
                                "interfaces counters queue detail, show qos interfaces ecn counters queue, show "
                                "interface {port} priority-flow-control counters detail) (read live)" % port)
    pfc = parse_counters(result["counters"]["eos_pfc"], "eos_pfc", port="Ethernet1/1")
    assert pfc["ports"]["Ethernet1/1"]["txFrames"] == 23740
    detail = parse_counters(result["counters"]["eos_pfc_detail"], "eos_pfc_detail", port="Ethernet1/1")
    assert detail["ports"]["Ethernet1/1"]["prio3.txFrames"] == 23740
    assert PASSWORD not in json.dumps(result)


def test_an_eos_tor_read_over_its_connection_pipes_the_commands_to_json():
    commands = dict(("%s | json" % c, (0, recorded(f), "")) for c, f in (
        ("show priority-flow-control counters", "eos-pfc-before.json"),
        ("show interfaces counters queue detail", "eos-queue-detail-before.json"),
        ("show qos interfaces ecn counters queue", "eos-ecn-before.json")))
    result, ran = read({"cluster": model("eos", "Ethernet{node}/1"), "transport": "connection"},
                       {"ansible_connection": "ssh"}, commands)
    assert ran == sorted(commands, key=list(commands).index) and result["via"] == "ssh", result
    assert result["counters"]["eos_queue"] == recorded("eos-queue-detail-before.json")


def test_a_cumulus_tor_runs_its_commands_for_the_step_s_ports_over_its_connection():
    commands = {"nv show interface swp1 counters qos": (0, recorded("nvue-qos-after.txt"), ""),
                "nv show interface swp1 qos roce counters": (0, recorded("nvue-roce-after.txt"), "")}
    result, ran = read({"cluster": model("cumulus", "swp{node}"), "ports": ["swp1"]}, {}, commands)
    # then switchd's configured poll interval; a switch that does not print it keeps the NOS's default
    assert ran == list(commands) + ["cat /etc/cumulus/switchd.conf"] and result["via"] == "ssh", result
    assert parse_counters(result["counters"]["nvue_qos"], "nvue_qos", port="swp1")["problems"] == []
    assert result["settle"] == 2 and result["settle_source"].startswith(
        "the NOS's default poll interval (cat /etc/cumulus/switchd.conf failed (rc 127)")


def test_a_cumulus_tor_s_configured_poll_interval_is_the_settle_it_returns():
    commands = {"nv show interface swp1 counters qos": (0, recorded("nvue-qos-after.txt"), ""),
                "nv show interface swp1 qos roce counters": (0, recorded("nvue-roce-after.txt"), ""),
                "cat /etc/cumulus/switchd.conf": (0, "# Statistic poll interval (in msec)\nstats.poll_interval = 7000\n",
                                                  "")}
    result, _ran = read({"cluster": model("cumulus", "swp{node}"), "ports": ["swp1"]}, {}, commands)
    assert (result["settle"], result["settle_source"]) == (7, "switchd.conf: stats.poll_interval = 7000 ms")


def test_one_failed_command_is_one_line_naming_the_tor_and_the_command():
    commands = {"nv show interface swp1 counters qos": (0, recorded("nvue-qos-after.txt"), ""),
                "nv show interface swp1 qos roce counters": (1, "", "Error: swp1: RoCE is not enabled\n")}
    result, _ran = read({"cluster": model("cumulus", "swp{node}"), "ports": ["swp1"]}, {}, commands)
    assert "counters" not in result and result["read_error"] == (
        "ToR leaf1: its counters could not be read (nv show interface {port} counters qos, nv show interface {port} "
        "qos roce counters over its ssh connection): nv show interface swp1 qos roce counters failed (rc 1): "
        "Error: swp1: RoCE is not enabled")


def test_without_the_step_s_ports_cumulus_runs_nothing_and_says_so():
    result, ran = read({"cluster": model("cumulus", "swp{node}")}, {})
    assert ran == [] and result["read_error"].endswith(
        "NVUE prints the counters of one port a command: give the ports to read")
    assert result["read_error"].startswith("ToR leaf1: its counters could not be read")


def test_an_os10_tor_runs_its_queuing_read_for_the_step_s_ports_over_its_connection():
    out = recorded("recorded/os10-queuing-hound-dirt-cubic-netdev-2022.txt")
    commands = {"show queuing statistics interface ethernet 1/1/4": (0, out, "")}
    result, ran = read({"cluster": model("os10", "ethernet1/1/{node}"), "ports": ["ethernet1/1/4"]}, {}, commands)
    assert ran == list(commands) and result["via"] == "ssh", result
    facts = parse_counters(result["counters"]["os10_queuing"], "os10_queuing", port="ethernet1/1/4")
    assert facts["problems"] == [] and facts["ports"]["ethernet1/1/4"]["q5_dropped_packets"] == 1263665


def test_without_the_step_s_ports_os10_runs_nothing_and_says_so():
    result, ran = read({"cluster": model("os10", "ethernet1/1/{node}")}, {})
    assert ran == [] and result["read_error"].endswith(
        "OS10 prints a port's queuing counters a command: give the ports to read")
