# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The live reads of the ToRs (tor/tor_read.py and each NOS module's ``read``) on recorded responses: the reads the
push tests replay (data/tor_push/, origins in its ORIGIN.md: NVUE REST, eAPI, NX-API, ``sonic-cfggen``) and real
OS10 and NX-OS running configurations (data/qos/*/ORIGIN.md) as a switch's command output. Every request and
command is asserted; what comes back is read by ``parse_qos`` in the ToR's format. Then the choice of the way, the
API's address and credentials from the push's variables, the one-line errors that name the ToR (an HTTP 401 from a
real socket among them, without the password), and the reading of the role's loop results."""

from __future__ import annotations

import copy
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse import parse_qos
from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms, tor_read
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import HttpTransport, PushError

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
PASSWORD = "sw1tch-pw"


def load(*parts):
    with open(os.path.join(DATA, *parts), encoding="utf-8") as handle:
        return json.load(handle) if parts[-1].endswith(".json") else handle.read()


def first_exchange(name):
    """The recorded read that opens a push (its first request and response)."""
    return load("tor_push", name)["exchanges"][0]


class Replay(object):
    """A transport that checks each request against the recorded one and answers the recorded response."""

    def __init__(self, *exchanges):
        self.exchanges = copy.deepcopy(list(exchanges))

    def request(self, method, path, body=None, params=None):
        assert self.exchanges, "unexpected request %s %s" % (method, path)
        want = self.exchanges.pop(0)
        sent = {"method": method, "path": path}
        if params is not None:
            sent["params"] = params
        if body is not None:
            sent["body"] = body
        assert sent == want["request"]
        return want["response"]["status"], want["response"].get("body")


class Switch(object):
    """``run(argv, data=None)`` on a switch: answers each expected argv with its recorded (rc, stdout, stderr)."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.ran = []

    def __call__(self, argv, data=None):
        self.ran.append(list(argv))
        assert data is None, "a read sends nothing to the switch"
        want, rc, out, err = self.answers.pop(0)
        assert list(argv) == want
        return rc, out, err


# ----------------------------------------------------------------------------- each NOS, recorded

def test_cumulus_reads_the_applied_revision_over_the_nvue_rest_api():
    exchange = first_exchange("nvue/nothing_to_do.json")
    transport = Replay(exchange)
    text = platforms.read_running("cumulus", "http", transport)
    assert transport.exchanges == []
    assert exchange["request"] == {"method": "GET", "path": "/nvue_v1/",
                                   "params": {"rev": "applied", "filled": "false"}}
    facts = parse_qos(text, platforms.qos_format("cumulus"))
    assert facts["problems"] == [] and "swp1" in facts["ports"]
    assert facts["ports"]["swp1"]["mtu"] == 9216


def test_cumulus_reads_nv_config_show_over_its_connection():
    applied = first_exchange("nvue/nothing_to_do.json")["response"]["body"]
    shown = json.dumps([{"header": {"model": "VX", "version": "cumulus-linux-5.14.0"}}, {"set": applied}])
    switch = Switch((["nv", "config", "show", "-o", "json"], 0, shown, ""))
    text = platforms.read_running("cumulus", "ssh", switch)
    assert text == shown
    assert "swp1" in parse_qos(text, "nvue")["ports"]


def test_eos_reads_the_running_config_over_eapi_in_text_format():
    exchange = first_exchange("eos/no_diff.json")
    assert exchange["request"]["body"]["params"] == {"version": 1, "cmds": ["enable", "show running-config"],
                                                     "format": "text"}
    text = platforms.read_running("eos", "http", Replay(exchange))
    assert text == exchange["response"]["body"]["result"][1]["output"]
    assert "Ethernet1" in parse_qos(text, "eos")["ports"]


def test_nxos_reads_the_running_config_over_nxapi_cli_show_ascii():
    exchange = first_exchange("nxos/no_diff.json")
    assert exchange["request"]["body"]["ins_api"]["type"] == "cli_show_ascii"
    text = platforms.read_running("nxos", "http", Replay(exchange))
    assert text == exchange["response"]["body"]["ins_api"]["outputs"]["output"]["body"]
    assert parse_qos(text, "nxos")["ports"]


def test_sonic_reads_config_db_with_sonic_cfggen_over_its_connection():
    recorded = load("tor_push", "sonic", "apply_ok.json")["commands"][0]
    assert recorded["argv"] == ["sonic-cfggen", "-d", "--print-data"]
    switch = Switch((recorded["argv"], recorded["rc"], recorded["stdout"], ""))
    text = platforms.read_running("sonic", "ssh", switch)
    assert text == recorded["stdout"]
    assert parse_qos(text, "sonic_config_db")["ports"]


@pytest.mark.parametrize("platform,fmt,data,command", [
    ("eos", "eos", ("qos", "eos", "leaf_whole_running_config.cfg"), ["show", "running-config"]),
    ("nxos", "nxos", ("qos", "nxos", "azurelocal_fully_converged_tor1.cfg"), ["show", "running-config"]),
    ("os10", "os10", ("qos", "os10", "dell_ax_azurelocal_s4148f_tor1.cfg"), ["show", "running-configuration"]),
])
def test_cli_switches_are_read_with_show_running_config_over_their_connection(platform, fmt, data, command):
    text = load(*data)
    switch = Switch((command, 0, text, ""))
    assert platforms.read_running(platform, "ssh", switch) == text
    assert switch.ran == [command]
    assert parse_qos(text, fmt)["ports"]


def test_the_ways_each_platform_is_read_the_default_first():
    assert {p: platforms.read_ways(p) for p in platforms.PLATFORMS} == {
        "sonic": ("ssh",), "cumulus": ("http", "ssh"), "eos": ("http", "ssh"), "nxos": ("http", "ssh"),
        "os10": ("ssh",), "linux": ()}
    assert platforms.read_ways(None) == () and platforms.read_ways("junos") == ()
    assert platforms.readable_platforms() == ["cumulus", "eos", "nxos", "os10", "sonic"]
    with pytest.raises(ValueError, match="cannot be read over 'http'"):
        platforms.read_running("sonic", "http", Replay())


# ----------------------------------------------------------------------------- errors name the ToR

@pytest.mark.parametrize("platform,answer,reason", [
    ("sonic", (1, "", "Error: Redis connection refused\n"),
     "sonic-cfggen -d --print-data failed (rc 1): Error: Redis connection refused"),
    ("sonic", (0, "Traceback (most recent call last):\n  ...", ""),
     "sonic-cfggen -d --print-data printed no config_db JSON: Traceback (most recent call last): ..."),
    ("eos", (0, "  \n", ""), "show running-config returned nothing"),
    ("os10", (127, "", "bash: show: command not found"),
     "show running-configuration failed (rc 127): bash: show: command not found"),
])
def test_a_failed_command_is_one_line_naming_the_tor_and_the_way(platform, answer, reason):
    command = list(platforms.nos(platform).READ_COMMAND)
    how = tor_read.where(platform, "ssh", connection="ssh")
    with pytest.raises(tor_read.ReadError) as err:
        tor_read.read_tor("leaf7", platform, "ssh", Switch((command,) + answer), how)
    assert str(err.value) == "ToR leaf7 could not be read live (%s over its ssh connection): %s" % (
        " ".join(command), reason)


def test_an_api_error_is_one_line_naming_the_tor():
    class Refused(object):
        def request(self, method, path, body=None, params=None):
            raise PushError("POST http://10.0.0.7:8081/ins: [Errno 111] Connection refused")

    how = tor_read.where("nxos", "http", url="http://10.0.0.7:8081")
    with pytest.raises(tor_read.ReadError) as err:
        tor_read.read_tor("leaf7", "nxos", "http", Refused(), how)
    assert str(err.value) == ("ToR leaf7 could not be read live (Cisco NX-OS API http://10.0.0.7:8081): "
                              "POST http://10.0.0.7:8081/ins: [Errno 111] Connection refused")


def test_nvue_answering_no_tree_is_an_error():
    exchange = copy.deepcopy(first_exchange("nvue/nothing_to_do.json"))
    exchange["response"]["body"] = "<html>maintenance</html>"
    with pytest.raises(tor_read.ReadError, match=r"^ToR leaf1 could not be read live \(x\): NVUE answered no "
                                                 r"configuration tree: <html>maintenance</html>$"):
        tor_read.read_tor("leaf1", "cumulus", "http", Replay(exchange), "x")


@pytest.fixture
def nvue_401():
    """A real HTTP server answering the recorded NVUE 401 (data/tor_push/nvue/unauthorized.json) on 127.0.0.1."""
    response = first_exchange("nvue/unauthorized.json")["response"]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):  # noqa: N802 (the stdlib's name)
            body = response["text"].encode()
            self.send_response(response["status"], response["reason"])
            self.send_header("Content-Type", response["content_type"])
            for key, value in response["headers"].items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()


def test_wrong_credentials_over_a_real_socket_name_the_tor_not_the_password(nvue_401):
    url, user, password, validate = tor_read.api_endpoint(
        {"ansible_host": "127.0.0.1", "ansible_user": "admin", "ansible_password": PASSWORD,
         "ansible_httpapi_use_ssl": False, "ansible_httpapi_port": nvue_401}, "leaf1", 8765)
    transport = HttpTransport(url, user, password, validate_certs=validate, timeout=5)
    with pytest.raises(tor_read.ReadError) as err:
        tor_read.read_tor("leaf1", "cumulus", "http", transport, tor_read.where("cumulus", "http", url=url))
    assert str(err.value) == (
        "ToR leaf1 could not be read live (Cumulus Linux (NVUE) API http://127.0.0.1:%d): GET "
        "http://127.0.0.1:%d/nvue_v1/?rev=applied&filled=false: HTTP 401 Unauthorized: 401 Authorization Required"
        % (nvue_401, nvue_401))
    assert PASSWORD not in str(err.value) and "\n" not in str(err.value)


# ----------------------------------------------------------------------------- the way, the address, the results

@pytest.mark.parametrize("platform,transport,connection,via", [
    ("cumulus", "auto", None, "http"), ("eos", "auto", "ssh", "http"), ("nxos", "auto", "local", "http"),
    ("sonic", "auto", None, "ssh"), ("os10", "auto", None, "ssh"),
    ("eos", "auto", "ansible.netcommon.network_cli", "ssh"), ("nxos", "auto", "network_cli", "ssh"),
    ("sonic", "auto", "ansible.netcommon.network_cli", "ssh"),
    ("eos", "connection", None, "ssh"), ("cumulus", "connection", "ssh", "ssh"),
    ("nxos", "api", "ansible.netcommon.network_cli", "http"), ("cumulus", "api", None, "http"),
])
def test_choose_via_takes_the_push_s_way_unless_told_or_on_network_cli(platform, transport, connection, via):
    assert tor_read.choose_via("leaf1", platform, transport, connection) == via


@pytest.mark.parametrize("platform,transport,message", [
    ("sonic", "api", "ToR leaf1: SONiC is not read over its API; set lossless_check_read_transport to connection "
                     "(or auto)"),
    ("os10", "api", "ToR leaf1: Dell OS10 is not read over its API; set lossless_check_read_transport to "
                    "connection (or auto)"),
    (None, "auto", "ToR leaf1: platform unset cannot be read live (readable: cumulus, eos, nxos, os10, sonic); give "
                   "its configuration instead"),
    ("eos", "snmp", "ToR leaf1: lossless_check_read_transport 'snmp' is not one of auto, api, connection"),
])
def test_choose_via_refuses_in_one_line(platform, transport, message):
    with pytest.raises(tor_read.ReadError) as err:
        tor_read.choose_via("leaf1", platform, transport)
    assert str(err.value) == message


def test_the_api_address_and_credentials_are_the_push_s_variables_and_defaults():
    assert tor_read.api_endpoint({}, "leaf1", 8765) == ("https://leaf1:8765", None, None, True)
    assert tor_read.api_endpoint({}, "leaf1") == ("https://leaf1:443", None, None, True)
    assert tor_read.api_endpoint({"ansible_httpapi_use_ssl": "no"}, "leaf1") == ("http://leaf1:80", None, None, True)
    assert tor_read.api_endpoint(
        {"ansible_host": "fd00::7", "ansible_httpapi_port": 8443, "ansible_httpapi_user": "ops",
         "ansible_httpapi_password": "a", "ansible_password": "b", "ansible_httpapi_validate_certs": False},
        "leaf1", 8765) == ("https://[fd00::7]:8443", "ops", "a", False)
    assert tor_read.api_endpoint({"ansible_user": "admin", "ansible_httpapi_user": "ops", "ansible_ssh_pass": "c"},
                                 "leaf1")[1:3] == ("admin", "c")
    with pytest.raises(tor_read.ReadError, match=r"^ToR leaf1: ansible_httpapi_use_ssl: 'maybe' is not a boolean$"):
        tor_read.api_endpoint({"ansible_httpapi_use_ssl": "maybe"}, "leaf1")


def test_where_names_the_api_or_the_command_and_the_connection():
    assert tor_read.where("eos", "http", url="https://10.0.0.3:443") == "Arista EOS API https://10.0.0.3:443"
    assert tor_read.where("sonic", "ssh", connection=None) == "sonic-cfggen -d --print-data over its ssh connection"
    assert (tor_read.where("os10", "ssh", connection="ansible.netcommon.network_cli")
            == "show running-configuration over its network_cli connection")


def test_collect_reads_the_loop_results_the_role_registers():
    results = [
        {"item": "leaf1", "tor": "leaf1", "changed": False,
         "config": {"facts": {"ports": {}}, "format": "eos", "source": "Arista EOS API https://leaf1:443"}},
        {"item": "leaf2", "tor": "leaf2", "read_error": "ToR leaf2 could not be read live (x): HTTP 401 Unauthorized"},
        {"item": "leaf3", "failed": True, "msg": "The ainet.fabric.lossless_report action failed to execute in the "
                                                 "expected time frame (60) and was terminated"},
        {"item": "leaf4", "unreachable": True, "msg": "Failed to connect to the host via ssh:\n Connection timed out"},
        {"item": "leaf5", "unreachable": True},
        {"item": "leaf6", "skipped": True, "tor": "leaf6", "given": "/inv/switch-configs/leaf6.cfg"},
        {"item": "leaf7", "skipped": True, "skip_reason": "Conditional result was False"},
        "not a result",
        # a configuration's text is never a read: only its QoS facts leave the read task
        {"item": "leaf8", "tor": "leaf8", "config": {"text": "hostname leaf8\n", "format": "eos", "source": "x"}},
    ]
    reads, errors = tor_read.collect(results)
    assert reads == {"leaf1": results[0]["config"]}
    assert errors == {
        "leaf2": "ToR leaf2 could not be read live (x): HTTP 401 Unauthorized",
        "leaf3": "ToR leaf3 could not be read live: The ainet.fabric.lossless_report action failed to execute in the "
                 "expected time frame (60) and was terminated",
        "leaf4": "ToR leaf4 could not be read live: Failed to connect to the host via ssh: Connection timed out",
        "leaf5": "ToR leaf5 could not be read live: unreachable",
        "leaf8": "ToR leaf8 could not be read live: no configuration came back"}
    assert tor_read.collect(None) == ({}, {})


def test_unread_reasons_say_what_to_do():
    assert tor_read.unread_reason("leaf1", "eos", ["gpu01"]) == (
        "ToR leaf1 was not read live: it is not an inventory host; add it to the inventory under this name with "
        "its connection variables, or give its configuration")
    assert tor_read.unread_reason("leaf1", None, ["leaf1"]) == (
        "ToR leaf1 was not read live: platform unset cannot be read live (readable: cumulus, eos, nxos, os10, "
        "sonic); give its configuration")


def test_platform_of_finds_a_tor_in_any_fabric():
    cluster = load_cluster({"name": "c", "fabrics": {
        "compute": {"rails": 1, "addressing": {"mode": "p2p", "supernet": "172.17.0.0/16", "rail_prefix": 24},
                    "tors": [{"name": "leaf1", "rails": [1], "platform": "eos"}]},
        "storage": {"rails": 1, "addressing": {"mode": "p2p", "supernet": "172.18.0.0/16", "rail_prefix": 24},
                    "tors": [{"name": "leaf9", "rails": [1]}]}}})
    assert tor_read.platform_of(cluster, "leaf1") == (True, "eos")
    assert tor_read.platform_of(cluster, "leaf9") == (True, None)
    assert tor_read.platform_of(cluster, "leaf2") == (False, None)


def test_one_line():
    assert tor_read.one_line("a\n  b\tc ") == "a b c"
    assert len(tor_read.one_line("x" * 1000)) == tor_read.MAX_REASON
