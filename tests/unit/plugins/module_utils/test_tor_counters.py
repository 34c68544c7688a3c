# -*- coding: utf-8 -*-
"""The load test's ToR counter reads (each NOS module's ``read_counters``, tor/platforms.py, tor/tor_read.py): the
commands run over the way each NOS is read (SONiC and Cumulus over the switch's connection, EOS over eAPI or its
connection), what they print reaches the parsers as it is (recorded samples, data/counters/ORIGIN.md), a NOS that
prints one port a command is read for the step's ports only, and a failure is one line naming the ToR and the
command."""
from __future__ import annotations

import copy
import json
import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import (
    FORMATS, ONE_PORT_FORMATS, parse_counters)
from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms, tor_read
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import PushError

DATA = os.path.join(os.path.dirname(__file__), "data", "counters")


def recorded(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def switch(outputs, ran):
    """A switch's connection, ``run(argv) -> (rc, out, err)``, printing the recorded outputs of its commands."""
    def run(argv, data=None):
        assert data is None, "a counter read sends nothing to the switch"
        ran.append(" ".join(argv))
        return outputs.get(" ".join(argv), (127, "", "%s: command not found" % argv[0]))
    return run


class Eapi(object):
    """eAPI (``POST /command-api``, JSON-RPC ``runCmds``): checks the request and answers ``reply``."""

    def __init__(self, reply):
        self.reply = reply
        self.sent = []

    def request(self, method, path, body=None, params=None):
        self.sent.append((method, path, copy.deepcopy(body), params))
        return 200, copy.deepcopy(self.reply)


EOS_CMDS = [{"cmd": "show priority-flow-control counters", "revision": 3},
            {"cmd": "show interfaces counters queue detail", "revision": 1},
            {"cmd": "show qos interfaces ecn counters queue", "revision": 1}]


def eos_objects(when):
    return [json.loads(recorded(name % when)) for name in
            ("eos-pfc-%s.json", "eos-queue-detail-%s.json", "eos-ecn-%s.json")]


# ----------------------------------------------------------------------------- SONiC

def test_sonic_counters_are_read_with_its_show_commands_and_parse_per_port():
    ran = []
    outputs = {"show pfc counters": (0, recorded("sonic-pfc-after.txt"), ""),
               "show queue counters": (0, recorded("sonic-queue-after.txt"), "")}
    got = platforms.read_counters("sonic", "ssh", switch(outputs, ran), ports=["Ethernet8"])
    assert ran == ["show pfc counters", "show queue counters", "show pfcwd stats -e", "show priority-group drop counters",
                   "show priority-group persistent-watermark headroom"]
    assert sorted(got) == ["sonic_pfc", "sonic_pfcwd", "sonic_pg_drop", "sonic_pg_headroom", "sonic_queue"]
    assert parse_counters(got["sonic_pfc"], "sonic_pfc", port="Ethernet8")["ports"]["Ethernet8"]["pfc3_tx_pkts"] == 23740
    assert parse_counters(got["sonic_queue"], "sonic_queue", port="Ethernet8")["ports"]["Ethernet8"]["uc3_drop_pkts"] == 0


def test_a_failing_counter_command_names_it():
    ran = []
    with pytest.raises(PushError, match="show queue counters failed \\(rc 127\\)"):
        platforms.read_counters("sonic", "ssh", switch({"show pfc counters": (0, "x", "")}, ran))


# ----------------------------------------------------------------------------- Arista EOS

class EapiByCommand(object):
    """eAPI answering each ``runCmds`` request by its commands: ``{command: object}``; a request holding a command it
    has no answer for fails as eAPI does (``error``, the failed command's object last with ``errors``)."""

    def __init__(self, answers):
        self.answers = answers
        self.sent = []

    def request(self, method, path, body=None, params=None):
        self.sent.append((method, path, copy.deepcopy(body), params))
        cmds = [c["cmd"] if isinstance(c, dict) else c for c in body["params"]["cmds"]]
        missing = [i for i, c in enumerate(cmds) if c != "enable" and c not in self.answers]
        if missing:
            i = missing[0]
            return 200, {"jsonrpc": "2.0", "id": body["id"], "error": {
                "code": 1002, "message": "CLI command %d of %d '%s' failed: invalid command" % (i + 1, len(cmds), cmds[i]),
                "data": [{}] * i + [{"errors": ["Invalid input (at token 2: 'interface')"]}]}}
        return 200, {"jsonrpc": "2.0", "id": body["id"],
                     "result": [{} if c == "enable" else copy.deepcopy(self.answers[c]) for c in cmds]}


def eos_answers(when):
    answers = dict((c["cmd"], o) for c, o in zip(EOS_CMDS, eos_objects(when)))
    answers["show interface Ethernet1/1 priority-flow-control counters detail"] = json.loads(
        recorded("eos-pfc-detail-%s.json" % when))
    return answers


def test_eos_counters_over_eapi_are_one_runcmds_in_json_at_the_parsers_revisions():
    eapi = EapiByCommand(eos_answers("after"))
    got = platforms.read_counters("eos", "http", eapi, ports=["Ethernet1/1"])
    assert eapi.sent[0] == ("POST", "/command-api", {"jsonrpc": "2.0", "method": "runCmds", "id": "ainet-fabric",
                                                     "params": {"version": 1, "cmds": ["enable"] + EOS_CMDS,
                                                                "format": "json"}}, None)
    # the per-priority PFC read: its own request, one command a port, no revision (the model's default)
    assert len(eapi.sent) == 2 and eapi.sent[1][2]["params"]["cmds"] == [
        "enable", "show interface Ethernet1/1 priority-flow-control counters detail"]
    assert sorted(got) == ["eos_ecn", "eos_pfc", "eos_pfc_detail", "eos_queue"]
    pfc = parse_counters(got["eos_pfc"], "eos_pfc", port="Ethernet1/1")
    assert pfc["problems"] == [] and pfc["ports"]["Ethernet1/1"]["txFrames"] == 23740
    queue = parse_counters(got["eos_queue"], "eos_queue", port="Ethernet1/1")
    assert queue["problems"] == [] and "ucast.TC3.DP0.droppedPackets" in queue["ports"]["Ethernet1/1"]
    ecn = parse_counters(got["eos_ecn"], "eos_ecn", port="Ethernet1/1")
    assert ecn["problems"] == [] and ecn["ports"]["Ethernet1/1"]
    detail = parse_counters(got["eos_pfc_detail"], "eos_pfc_detail", port="Ethernet1/1")
    assert detail["problems"] == [] and detail["ports"]["Ethernet1/1"]["prio3.txFrames"] == 23740


def test_eos_a_refused_per_priority_read_is_its_problem_and_the_rest_is_read():
    answers = eos_answers("after")
    del answers["show interface Ethernet1/1 priority-flow-control counters detail"]
    got = platforms.read_counters("eos", "http", EapiByCommand(answers), ports=["Ethernet1/1"])
    assert parse_counters(got["eos_pfc"], "eos_pfc", port="Ethernet1/1")["problems"] == []
    detail = parse_counters(got["eos_pfc_detail"], "eos_pfc_detail", port="Ethernet1/1")
    assert detail["ports"] == {} and "Invalid input" in detail["problems"][0]
    with pytest.raises(ValueError, match="Ethernet1/1; show: not a Arista EOS port name"):
        platforms.read_counters("eos", "http", EapiByCommand(answers), ports=["Ethernet1/1; show"])


def test_eos_counters_over_its_connection_pipe_the_same_commands_to_json():
    ran = []
    objects = eos_objects("before")
    outputs = dict(("%s | json" % c["cmd"], (0, json.dumps(o, indent=2), "")) for c, o in zip(EOS_CMDS, objects))
    got = platforms.read_counters("eos", "ssh", switch(outputs, ran))
    assert ran == ["%s | json" % c["cmd"] for c in EOS_CMDS]
    over_eapi = platforms.read_counters("eos", "http", Eapi({"result": [{}] + objects}))
    for fmt in got:
        assert parse_counters(got[fmt], fmt) == parse_counters(over_eapi[fmt], fmt), fmt


def test_eos_per_priority_read_over_its_connection_runs_once_a_port_with_the_json_pipe():
    ran = []
    outputs = dict(("%s | json" % c["cmd"], (0, json.dumps(o), "")) for c, o in zip(EOS_CMDS, eos_objects("before")))
    outputs["show interface Ethernet1/1 priority-flow-control counters detail | json"] = (
        0, recorded("eos-pfc-detail-before.json"), "")
    got = platforms.read_counters("eos", "ssh", switch(outputs, ran), ports=["Ethernet1/1", "Ethernet2/1"])
    assert ran == ["%s | json" % c["cmd"] for c in EOS_CMDS] + [
        "show interface Ethernet1/1 priority-flow-control counters detail | json",
        "show interface Ethernet2/1 priority-flow-control counters detail | json"]
    assert parse_counters(got["eos_pfc_detail"], "eos_pfc_detail", port="Ethernet1/1")["ports"]["Ethernet1/1"][
        "prio3.txFrames"] == 18240
    refused = parse_counters(got["eos_pfc_detail"], "eos_pfc_detail", port="Ethernet2/1")  # not answered: rc 127
    assert refused["ports"] == {} and "failed (rc 127)" in refused["problems"][0]


def test_eos_failed_command_over_eapi_is_named():
    eapi = Eapi({"jsonrpc": "2.0", "id": "ainet-fabric", "error": {
        "code": 1002, "message": "CLI command 3 of 4 'show interfaces counters queue detail' failed: invalid command",
        "data": [{}, {"interfaceCounters": {}}, {"errors": ["Invalid input (at token 3: 'queue')"]}]}})
    how = tor_read.counters_where("eos", "http", url="https://10.0.0.9:443")
    with pytest.raises(tor_read.ReadError) as err:
        tor_read.read_counters("leaf9", "eos", "http", eapi, how)
    assert str(err.value) == (
        "ToR leaf9: its counters could not be read (Arista EOS API https://10.0.0.9:443 (show priority-flow-control "
        "counters, show interfaces counters queue detail, show qos interfaces ecn counters queue, show interface "
        "{port} priority-flow-control counters detail)): eAPI: command 3 "
        "of 4 'show interfaces counters queue detail' failed: Invalid input (at token 3: 'queue') (CLI command 3 of "
        "4 'show interfaces counters queue detail' failed: invalid command)")
    assert "\n" not in str(err.value)


def test_eos_eapi_answering_text_or_too_few_outputs_is_an_error():
    with pytest.raises(PushError, match="eAPI answered 2 outputs to 3 commands"):
        platforms.read_counters("eos", "http", Eapi({"result": [{}] + eos_objects("after")[:2]}))
    with pytest.raises(PushError, match="^show qos interfaces ecn counters queue: eAPI answered % Invalid"):
        platforms.read_counters("eos", "http", Eapi({"result": [{}] + eos_objects("after")[:2] + ["% Invalid\n"]}))


# ----------------------------------------------------------------------------- Cumulus (NVUE)

def test_cumulus_counters_are_read_port_by_port_for_the_step_s_ports_only():
    ran = []
    outputs = {"nv show interface swp1 counters qos": (0, recorded("nvue-qos-after.txt"), ""),
               "nv show interface swp1 qos roce counters": (0, recorded("nvue-roce-after.txt"), ""),
               "nv show interface swp5 counters qos": (0, recorded("nvue-qos-before.txt"), ""),
               "nv show interface swp5 qos roce counters": (0, recorded("nvue-roce-before.txt"), "")}
    got = platforms.read_counters("cumulus", "ssh", switch(outputs, ran), ports=["swp5", "swp1", "swp5"])
    assert ran == ["nv show interface swp1 counters qos", "nv show interface swp5 counters qos",
                   "nv show interface swp1 qos roce counters", "nv show interface swp5 qos roce counters"]
    assert got == {"nvue_qos": {"swp1": recorded("nvue-qos-after.txt"), "swp5": recorded("nvue-qos-before.txt")},
                   "nvue_roce": {"swp1": recorded("nvue-roce-after.txt"), "swp5": recorded("nvue-roce-before.txt")}}
    # each port's counters are its own command's
    one = parse_counters(got["nvue_qos"], "nvue_qos", port="swp1")
    alone = parse_counters(recorded("nvue-qos-after.txt"), "nvue_qos", port="swp1")
    assert one == alone and one["problems"] == [] and list(one["ports"]) == ["swp1"]
    assert parse_counters(got["nvue_qos"], "nvue_qos", port="swp5")["ports"]["swp5"] != one["ports"]["swp1"]
    roce = parse_counters(got["nvue_roce"], "nvue_roce")
    assert sorted(roce["ports"]) == ["swp1", "swp5"] and roce["problems"] == []
    missing = parse_counters(got["nvue_qos"], "nvue_qos", port="swp9")
    assert missing["ports"] == {} and missing["problems"] == ["nvue_qos: port swp9 was not read (read: swp1, swp5)"]


@pytest.mark.parametrize("ports, message", [
    (None, "NVUE prints the counters of one port a command: give the ports to read"),
    ([], "NVUE prints the counters of one port a command: give the ports to read"),
    (["swp1", "swp2; reboot"], "swp2; reboot: not a Cumulus Linux \\(NVUE\\) port name"),
])
def test_cumulus_ports_are_checked_before_anything_runs(ports, message):
    ran = []
    with pytest.raises(ValueError, match=message):
        platforms.read_counters("cumulus", "ssh", switch({}, ran), ports=ports)
    assert ran == []


def test_cumulus_one_failed_command_is_one_line_naming_the_tor_and_the_command():
    ran = []
    outputs = {"nv show interface swp1 counters qos": (0, recorded("nvue-qos-after.txt"), ""),
               "nv show interface swp1 qos roce counters": (1, "", "Error: The requested item does not exist.\n")}
    how = tor_read.counters_where("cumulus", "ssh", connection="ssh")
    with pytest.raises(tor_read.ReadError) as err:
        tor_read.read_counters("leaf3", "cumulus", "ssh", switch(outputs, ran), how, ports=["swp1"])
    assert str(err.value) == (
        "ToR leaf3: its counters could not be read (nv show interface {port} counters qos, nv show interface {port} "
        "qos roce counters over its ssh connection): nv show interface swp1 qos roce counters failed (rc 1): "
        "Error: The requested item does not exist.")


# ----------------------------------------------------------------------------- the registry and the way

def test_every_counter_command_names_a_known_format_and_one_port_formats_run_per_port():
    assert platforms.counter_platforms() == ["cumulus", "eos", "linux", "nxos", "os10", "sonic"]
    for platform in platforms.counter_platforms():
        for fmt, command in platforms.nos(platform).COUNTER_COMMANDS:
            assert fmt in FORMATS and parse_counters("", fmt)["format"] == fmt, (platform, command)
            assert ("{port}" in command) == (fmt in ONE_PORT_FORMATS), (platform, command)
            assert command[0] in ("show", "nv") or command[:2] in (("ip", "-s"), ("tc", "-s"), ("ethtool", "-S")), command
            assert "clear" not in command and (command[-1] == "show" or command[0] in ("show", "nv")
                                               or command[:2] == ("ethtool", "-S")), \
                "read-only: %s" % (command,)


def test_only_a_nos_with_a_counter_reader_is_read():
    assert platforms.counters_readable("sonic") and platforms.counters_readable("cumulus")
    assert not platforms.counters_readable("ios") and not platforms.counters_readable(None)
    with pytest.raises(ValueError, match="platform None has no counter reader \\(readable: cumulus, eos, linux, nxos, "
                                         "os10, sonic\\)"):
        platforms.read_counters(None, "ssh", switch({}, []))
    with pytest.raises(ValueError, match="cannot be read over 'http'"):
        platforms.read_counters("sonic", "http", switch({}, []))
    with pytest.raises(ValueError, match="cannot be read over 'http'"):
        platforms.read_counters("cumulus", "http", switch({}, []), ports=["swp1"])


@pytest.mark.parametrize("platform, transport, connection, via", [
    ("eos", "auto", "ssh", "http"),
    ("eos", "auto", "ansible.netcommon.network_cli", "ssh"),
    ("eos", "connection", None, "ssh"),
    ("cumulus", "auto", None, "ssh"),
    ("sonic", "auto", "ssh", "ssh"),
])
def test_the_counter_way_is_chosen_as_the_configuration_s(platform, transport, connection, via):
    assert tor_read.choose_counter_via("leaf1", platform, transport, connection) == via


@pytest.mark.parametrize("platform, transport, message", [
    ("cumulus", "api", "ToR leaf1: Cumulus Linux (NVUE) counters are not read over its API; set "
                       "lossless_check_read_transport to connection (or auto)"),
    (None, "auto", "ToR leaf1: platform unset has no counter reader (readable: cumulus, eos, linux, nxos, os10, "
                   "sonic); its counters are not read"),
    ("os10", "api", "ToR leaf1: Dell OS10 counters are not read over its API; set lossless_check_read_transport to "
                    "connection (or auto)"),
])
def test_choose_counter_via_refuses_in_one_line(platform, transport, message):
    with pytest.raises(tor_read.ReadError) as err:
        tor_read.choose_counter_via("leaf1", platform, transport)
    assert str(err.value) == message


# ----------------------------------------------------------------------------- Dell OS10

def test_os10_counters_are_read_port_by_port_with_the_port_as_the_cli_takes_it():
    ran = []
    out = recorded("recorded/os10-queuing-hound-dirt-cubic-netdev-2022.txt")
    breakout = out.replace("ethernet1/1/4", "ethernet1/1/3:2")
    outputs = {"show queuing statistics interface ethernet 1/1/4": (0, out, ""),
               "show queuing statistics interface ethernet 1/1/3:2": (0, breakout, "")}
    got = platforms.read_counters("os10", "ssh", switch(outputs, ran), ports=["ethernet1/1/4", "ethernet1/1/3:2"])
    assert ran == ["show queuing statistics interface ethernet 1/1/3:2",
                   "show queuing statistics interface ethernet 1/1/4"]
    assert sorted(got) == ["os10_queuing"] and sorted(got["os10_queuing"]) == ["ethernet1/1/3:2", "ethernet1/1/4"]
    facts = parse_counters(got["os10_queuing"], "os10_queuing", port="ethernet1/1/3:2")
    assert facts["problems"] == [] and facts["ports"]["ethernet1/1/3:2"]["q5_dropped_bytes"] == 11321730380


def test_os10_bad_or_missing_ports_run_nothing_and_a_failure_names_the_command():
    ran = []
    with pytest.raises(ValueError, match="ethernet1/1/4; show: not a Dell OS10 port name"):
        platforms.read_counters("os10", "ssh", switch({}, ran), ports=["ethernet1/1/4; show"])
    with pytest.raises(ValueError, match="give the ports to read"):
        platforms.read_counters("os10", "ssh", switch({}, ran))
    assert ran == []
    with pytest.raises(PushError, match="show queuing statistics interface ethernet 1/1/4 failed \\(rc 127\\)"):
        platforms.read_counters("os10", "ssh", switch({}, ran), ports=["ethernet1/1/4"])
    with pytest.raises(ValueError, match="cannot be read over 'http'"):
        platforms.read_counters("os10", "http", switch({}, ran), ports=["ethernet1/1/4"])
