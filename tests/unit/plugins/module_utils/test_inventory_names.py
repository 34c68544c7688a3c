# -*- coding: utf-8 -*-
"""Names from the inventory never become configuration of their own (issue 39), judged by the real grammars.

Boundaries, each with hostile names and a control:

* where inventory host names enter a plan (``rail_plan``): refused in one line naming ``inventory_hostname``;
* the model's free-form strings (``model_schema``): every ``str`` key has a pattern or choices; port templates and
  descriptions with a line break, ';', '|' or a control character are refused naming the key;
* every ToR renderer, with the model bypassed (an intent changed after ``tor_intent``): refused naming the value;
* the CLI grammars: the EOS text read back as EOS reads it (a line is a command, indentation is the mode) and the
  NX-API ``input`` split as NX-API splits it (" ;") give exactly the intended commands for names the checks let
  through, however odd (``!``, ``#``, a leading ``no ``, 253 characters);
* the pushes' sinks (eAPI ``cmds``, NX-API ``input``, a command over the switch's CLI): a command with a line break
  or ';' is refused before anything is sent, including text read from the switch (a stale port's description);
* SONiC config_db JSON and NVUE YAML: a hostile description survives a round trip through ``json`` and a YAML
  parser unchanged and adds no key;
* Kubernetes: a host name is a node name only when it is a DNS subdomain;
* ``/etc/nccl.conf``: a name read from the node (an RDMA device, a GPU) or the management interface never adds a line.

The threat model this file proves part of: docs/security.md (output grammars: the ToR CLIs, config_db, NVUE, Kubernetes names, nccl.conf).
"""

from __future__ import annotations

import copy
import json
import os
import re

import pytest
import yaml

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError, FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.model import model_schema
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import node_map, rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse import parse_rdma
from ansible_collections.ainet.fabric.plugins.module_utils.tor import nos_cumulus, nos_eos, nos_nxos, nos_sonic
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import tor_intent
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import PushError, read_command
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_render import HEADER, render_tor
from ansible_collections.ainet.fabric.plugins.module_utils.workload import nccl
from ansible_collections.ainet.fabric.plugins.module_utils.workload.k8s_objects import node_name

PORTS = {"sonic": "Ethernet{node}", "cumulus": "swp{node}", "eos": "Ethernet{node}", "nxos": "Ethernet1/{node}"}
INJECTED = "username evil privilege 15 secret 0 x"
# Names an attacker could give an inventory host: each would add a command or hide one, on some NOS.
HOSTILE = [
    "gpu1\n" + INJECTED,                 # a new EOS line: a command of its own
    "gpu1 ;" + INJECTED,                 # NX-API splits its input on " ;"
    "gpu1;" + INJECTED,
    "gpu1\r" + INJECTED,
    "gpu1\t" + INJECTED,
    "gpu1\u2028" + INJECTED,             # Unicode line separator
    "gpu1\u0085" + INJECTED,             # NEL
    "gpu1\x00",
    "gpu1\u202egpu2",                    # a bidirectional override: reads otherwise than it is
    "!gpu1",                             # an EOS / NX-OS comment
    "#gpu1",
    "no shutdown",                       # a leading `no ` and a space
    "gpu1|x",                            # the SONiC config_db key separator
    "../gpu1", "gpu1/x",                 # a path
    "gpu1 x", "", "-gpu1", "gpu1-", "gpu1..x", ".gpu1",
    "a" * 64,                            # a label longer than 63
    ".".join(["a" * 63] * 4) + "a",      # 256 characters
]
FINE = ["gpu01", "GPU-01", "gpu_01", "gpu01.dc1.example.com", "10.0.0.5", "fd00::5", "1gpu",
        ".".join(["a" * 63] * 3 + ["a" * 61])]       # 253 characters


def cluster(platform="eos", mode="exclusive", **tor):
    addressing = {"exclusive": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 29},
                  "shared": {"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24}}[mode]
    return {"name": "r", "rails": 2, "mtu": 9000, "addressing": addressing,
            "tors": [dict({"name": "leaf%d" % r, "rails": [r], "platform": platform,
                           "port_template": PORTS[platform]}, **tor) for r in (1, 2)]}


def nodes(*hosts):
    return {host: {"node_id": i, "rail_interfaces": ["ens1", "ens2"]} for i, host in enumerate(hosts, 1)}


def one_line_refusal(err, field):
    text = str(err.value)
    assert "\n" not in text and "\r" not in text and "\u2028" not in text and "\x85" not in text, text
    assert text.startswith(field + ": "), text
    return text


# ----------------------------------------------------------------------------- where host names enter a plan

@pytest.mark.parametrize("host", HOSTILE, ids=range(len(HOSTILE)))
def test_a_hostile_host_name_is_refused_in_one_line_naming_it_before_any_plan(host):
    with pytest.raises(FabricModelError) as err:
        rail_plan(cluster(), nodes("gpu00", host))
    text = one_line_refusal(err, "inventory_hostname")
    assert repr(host) in text and "RFC 1123" in text


@pytest.mark.parametrize("host", FINE)
def test_a_host_name_dns_or_ansible_accepts_is_planned(host):
    plan = rail_plan(cluster(), nodes("gpu00", host))
    assert host in plan["nodes"]
    assert [p["host"] for p in plan["tors"]["leaf1"]["ports"]] == ["gpu00", host]


def test_the_node_map_of_a_hostile_inventory_is_refused_by_the_plan():
    hostvars = {"gpu1 ;" + INJECTED: {"fabric_node_id": 1, "fabric_rail_interfaces": ["ens1", "ens2"]}}
    with pytest.raises(FabricModelError) as err:
        rail_plan(cluster(), node_map(list(hostvars), hostvars))
    one_line_refusal(err, "inventory_hostname")


# ----------------------------------------------------------------------------- the model's free-form strings

def _str_keys(schema, path=""):
    for name, key in schema.items():
        here = path + name
        if key.type == "str" or (key.type == "list" and key.elements == "str"):
            yield here, key
        if key.keys is not None and key.keys.type == "str":
            yield here + ".<key>", key.keys
        for sub in (key.options, key.values):
            if sub:
                yield from _str_keys(sub, here + ".")


def test_every_string_key_of_the_model_has_a_pattern_or_choices():
    """A new free-form key must say what it accepts (a pattern that refuses a line break and ';', or choices)."""
    keys = list(_str_keys(model_schema.CLUSTER))
    assert len(keys) > 20
    for path, key in keys:
        assert key.choices or key.pattern, path
        if key.pattern:
            for bad in ("a\nb", "a\rb", "a\u2028b", "a\x85b", "a\x00b"):
                assert not key.pattern.match(bad), (path, bad)


@pytest.mark.parametrize("template", ["swp{node}\n" + INJECTED, "Ethernet1/{node} ;" + INJECTED, "swp{node}|x",
                                      "swp {node}", "swp{node};", "swp{node}\t", "x" * 60 + "{node}"])
def test_a_hostile_port_template_is_refused_naming_the_key(template):
    raw = cluster()
    raw["tors"][0]["port_template"] = template
    with pytest.raises(FabricModelError) as err:
        rail_plan(raw, nodes("gpu01"))
    one_line_refusal(err, "fabric_cluster.tors[0].port_template")


def test_a_port_template_of_real_port_names_is_planned():
    plan = rail_plan(cluster(platform="nxos", port_template="Ethernet1/{node}"), nodes("gpu01"))
    assert plan["tors"]["leaf1"]["ports"][0]["port"] == "Ethernet1/1"


@pytest.mark.parametrize("where", ["cluster", "fabric", "tor"])
def test_a_description_is_one_line(where):
    def model(text):
        raw = cluster()
        if where == "cluster":
            raw["description"] = text
        elif where == "fabric":
            raw = {"name": "r", "fabrics": {"compute": dict((k, v) for k, v in raw.items() if k != "name")}}
            raw["fabrics"]["compute"]["description"] = text
        else:
            raw["tors"][0]["description"] = text
        return raw
    field = {"cluster": "fabric_cluster.description", "fabric": "fabric_cluster.fabrics.compute.description",
             "tor": "fabric_cluster.tors[0].description"}[where]
    for bad in ("rack 3\n" + INJECTED, "rack 3\u2028x", "x" * 256):
        with pytest.raises(FabricModelError) as err:
            rail_plan(model(bad), nodes("gpu01"))
        one_line_refusal(err, field)
    rail_plan(model("rack 3; row B, the one by the door"), nodes("gpu01"))   # control: ';' in free text is fine


# ----------------------------------------------------------------------------- the renderers, model bypassed

def _intent(platform, host="gpu01"):
    return tor_intent(rail_plan(cluster(platform), nodes(host, "gpu02")), "leaf1")


RENDER = {"eos": nos_eos.render, "nxos": nos_nxos.render, "sonic": nos_sonic.render, "cumulus": nos_cumulus.render}


@pytest.mark.parametrize("platform", sorted(RENDER))
@pytest.mark.parametrize("key, value", [
    ("description", "gpu1 ens1 rail1 [ainet]\n" + INJECTED),
    ("description", "gpu1 ;" + INJECTED),
    ("description", "gpu1\r" + INJECTED),
    ("description", "gpu1\u2028" + INJECTED),
    ("description", "gpu1\x85" + INJECTED),
    ("host", "gpu1\t" + INJECTED),
    ("port", "Ethernet1\n" + INJECTED),
    ("port", "Ethernet1|x"),
    ("port", "Ethernet1 ;" + INJECTED),
    ("address", "172.17.0.1/29\n" + INJECTED),
])
def test_every_renderer_refuses_a_value_that_breaks_a_line_even_without_the_model(platform, key, value):
    intent = _intent(platform)
    intent["ports"][0][key] = value
    with pytest.raises(FabricModelError) as err:
        RENDER[platform](intent, "header")
    one_line_refusal(err, "tors['leaf1'].ports[0].%s" % key)


@pytest.mark.parametrize("platform", sorted(RENDER))
@pytest.mark.parametrize("where, key, value, problem", [
    (-1, "description", "gpu2 ens1 rail1 [ainet]\n" + INJECTED, "U+000A"),   # the last port: the one-pass check
    (-1, "interface", "ens1;" + INJECTED, "';'"),                            # of every value names it too
    (-1, "port", "swp2 x", "is not a port name"),
    (0, "description", 7, "is not a string"),
    (-1, "speed", ["400G"], "is not a string"),
])
def test_a_bad_value_of_any_port_is_named(platform, where, key, value, problem):
    intent = _intent(platform)
    index = len(intent["ports"]) - 1 if where == -1 else where
    assert index == 1 or where == 0
    intent["ports"][index][key] = value
    with pytest.raises(FabricModelError) as err:
        RENDER[platform](intent, "header")
    assert problem in one_line_refusal(err, "tors['leaf1'].ports[%d].%s" % (index, key))


@pytest.mark.parametrize("platform", sorted(RENDER))
def test_a_bad_svi_address_is_named_and_a_clean_shared_intent_renders(platform):
    intent = tor_intent(rail_plan(cluster(platform, "shared"), nodes("gpu01", "gpu02")), "leaf1")
    RENDER[platform](intent, "header")                                     # control
    intent["svis"][0]["address"] = "172.17.0.1/24\n" + INJECTED
    with pytest.raises(FabricModelError) as err:
        RENDER[platform](intent, "header")
    one_line_refusal(err, "tors['leaf1'].svis[0].address")


@pytest.mark.parametrize("platform", sorted(RENDER))
def test_every_renderer_refuses_a_header_of_two_lines(platform):
    with pytest.raises(FabricModelError):
        RENDER[platform](_intent(platform), "cluster r\n" + INJECTED)
    RENDER[platform](_intent(platform), HEADER % "r")          # control


# ----------------------------------------------------------------------------- the CLI grammars as the judge

def eos_commands_as_eos_reads_them(text):
    """EOS CLI text as EOS takes it: each line that is not blank or a comment is one command, its indentation the
    mode it is entered in: ``(mode path, command)`` pairs."""
    out, stack = [], []
    for line in text.split("\n"):
        if not line.strip() or line.lstrip().startswith("!"):
            continue
        depth = (len(line) - len(line.lstrip(" "))) // nos_eos.INDENT
        stack = stack[:depth]
        out.append((tuple(stack), line.strip()))
        stack.append(line.strip())
    return out


def nxos_commands_as_nxapi_reads_them(commands):
    """The commands NX-API runs from the ``input`` the push sends: the commands joined with " ;", split on ";"."""
    joined = " ;".join(commands)
    return [part.strip() for part in joined.split(";")]


# Names the model refuses but a bypassed renderer lets through (no line break, no ';'): the grammar must still keep
# them inside the description. And names the model accepts, at their longest.
ODD = ["!gpu1", "#gpu1", "no shutdown", "gpu1 exit", "end", "x" * 300, "gpu01.dc1.example.com", "fd00::5",
       ".".join(["a" * 63] * 3 + ["a" * 61])]


def _with_description(platform, text):
    intent = _intent(platform)
    intent["ports"][0]["description"] = text
    return intent


@pytest.mark.parametrize("name", ODD)
def test_eos_reads_back_exactly_the_intended_commands(name):
    pytest.importorskip("pyavd")
    base = eos_commands_as_eos_reads_them(nos_eos.render(_with_description("eos", "PLACEHOLDER"), "h")[0])
    odd = eos_commands_as_eos_reads_them(nos_eos.render(_with_description("eos", name), "h")[0])
    intended = [(mode, command.replace("PLACEHOLDER", name)) for mode, command in base]
    assert odd == intended
    assert (("interface Ethernet1",), "description " + name) in odd
    # the push sends the same commands, one eAPI string each
    data = nos_eos.render(_with_description("eos", name), "h")[1]
    assert sum(1 for line in data if line.strip() == "description " + name) == 1


@pytest.mark.parametrize("name", ODD)
def test_nxapi_reads_back_exactly_the_intended_commands(name):
    text, _data = nos_nxos.render(_with_description("nxos", name), "h")
    items = nos_nxos.nxos_diff("", text)
    commands = nos_nxos.nxos_commands(items)
    assert nxos_commands_as_nxapi_reads_them(commands) == commands
    assert "description " + name in commands
    base_text = nos_nxos.render(_with_description("nxos", "PLACEHOLDER"), "h")[0]
    assert text == base_text.replace("PLACEHOLDER", name)


@pytest.mark.parametrize("host", FINE)
def test_a_fine_host_name_reaches_the_cli_as_one_description(host):
    pytest.importorskip("pyavd")
    for platform in ("eos", "nxos"):
        item = render_tor(rail_plan(cluster(platform), nodes(host, "gpu02")), "leaf1")
        lines = [line.strip() for line in item["text"].splitlines()]
        assert lines.count("description %s ens1 rail1 [ainet]" % host) == 1
        assert not [line for line in lines if re.match(r"^(username|no username)\b", line)]


# ----------------------------------------------------------------------------- the pushes' sinks

class Recorder(object):
    """A transport that records requests and answers each with ``reply``."""

    def __init__(self, reply):
        self.reply = reply
        self.requests = []

    def request(self, method, path, body=None, params=None):
        self.requests.append((method, path, copy.deepcopy(body)))
        return 200, self.reply


@pytest.mark.parametrize("command", ["description gpu1 ;" + INJECTED, "description gpu1\n" + INJECTED,
                                     "description gpu1\r" + INJECTED, "interface Ethernet1/1\u2028" + INJECTED])
def test_nxapi_refuses_a_command_it_would_split_before_sending(command):
    transport = Recorder({"ins_api": {"outputs": {"output": {"code": "200", "body": {}}}}})
    with pytest.raises(PushError) as err:
        nos_nxos.nxapi(transport, "cli_conf", ["interface Ethernet1/1", command, "exit"])
    assert transport.requests == [] and "command 2 of 3" in str(err.value) and "\n" not in str(err.value)
    nos_nxos.nxapi(transport, "cli_conf", ["interface Ethernet1/1", "description gpu1 ens1 rail1 [ainet]", "exit"])
    assert len(transport.requests) == 1                                          # control


@pytest.mark.parametrize("command", ["interface Ethernet1\n" + INJECTED, "description x\r" + INJECTED,
                                     "description x ;" + INJECTED])
def test_eapi_refuses_a_command_of_two_lines_before_sending(command):
    transport = Recorder({"result": [{"output": ""}, {"output": ""}]})
    with pytest.raises(PushError):
        nos_eos._eapi(transport, ["enable", command])                     # pylint: disable=protected-access
    assert transport.requests == []
    nos_eos._eapi(transport, ["enable", "show running-config"])           # pylint: disable=protected-access
    assert len(transport.requests) == 1                                          # control


def test_a_command_over_the_switch_cli_refuses_a_word_of_two_commands():
    ran = []

    def connection(argv, data=None):
        ran.append(argv)
        return 0, "output", ""
    with pytest.raises(PushError):
        read_command(connection, ("nv", "show", "interface", "swp1\n" + INJECTED, "counters"))
    assert ran == []
    assert read_command(connection, ("nv", "show", "interface", "swp1", "counters")) == "output"   # control


NXOS_RUNNING = """!Command: show running-config
hostname leaf1
interface Ethernet1/7
  description gpu07 ;%s ;! [ainet]
  no switchport
  ip address 172.17.0.12/31
  no shutdown
""" % INJECTED


def test_nxos_release_never_sends_the_switchs_own_description():
    commands, _items = nos_nxos.nxos_release(NXOS_RUNNING, ["Ethernet1/7"])
    assert commands == ["interface Ethernet1/7", "no description", "no ip address 172.17.0.12/31", "exit"]
    assert nxos_commands_as_nxapi_reads_them(commands) == commands


def test_nxos_push_refuses_a_stale_port_name_read_from_the_switch_before_configuring():
    running = NXOS_RUNNING.replace("interface Ethernet1/7", "interface Ethernet1/7 ;" + INJECTED)
    replies = iter([{"ins_api": {"outputs": {"output": {"code": "200", "body": running}}}}])

    class Switch(Recorder):
        def request(self, method, path, body=None, params=None):
            self.requests.append(body["ins_api"]["type"])
            return 200, next(replies)
    switch = Switch(None)
    text = nos_nxos.render(_intent("nxos"), "h")[0]
    with pytest.raises(PushError) as err:
        nos_nxos.nxos_push(switch, text)
    assert switch.requests == ["cli_show_ascii"] and "nothing was sent" in str(err.value)


# ----------------------------------------------------------------------------- SONiC and NVUE escape

HOSTILE_TEXT = ["gpu1\n" + INJECTED, "gpu1 ;" + INJECTED, "gpu1|PORT|Ethernet9", "a: b\n- c", "'\"{}[]#&*!|>%@`",
                "gpu1\u2028x", "gpu1\x85x"]


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_sonic_config_db_keeps_a_hostile_description_a_value(text):
    intent = _with_description("sonic", text)
    fragment = nos_sonic.render_sonic(intent)           # the renderer below the check: its escaping alone
    parsed = json.loads(json.dumps(fragment, indent=4, sort_keys=True))
    assert parsed["PORT"]["Ethernet1"]["description"] == text
    clean = nos_sonic.render_sonic(_intent("sonic"))
    assert sorted(parsed) == sorted(clean) and sorted(parsed["PORT"]) == sorted(clean["PORT"])
    assert all("|" not in key or key.count("|") == other.count("|")
               for table in parsed for key, other in zip(sorted(parsed[table]), sorted(clean[table])))


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_nvue_yaml_keeps_a_hostile_description_a_value(text):
    intent = _with_description("cumulus", text)
    body = nos_cumulus.render_nvue(intent)              # the renderer below the check: its escaping alone
    parsed = yaml.safe_load(nos_cumulus.nvue_text(body, header="h"))
    assert parsed == [{"set": json.loads(json.dumps(body))}]
    assert parsed[0]["set"]["interface"]["swp1"]["description"] == text


# ----------------------------------------------------------------------------- Kubernetes

@pytest.mark.parametrize("host", ["gpu1\n" + INJECTED, "gpu1 ;x", "gpu_01", "gpu1|x"])
def test_a_host_name_is_a_kubernetes_node_name_only_as_a_dns_subdomain(host):
    with pytest.raises(FabricModelError):
        node_name(host)
    assert node_name("GPU-01.example.com") == "gpu-01.example.com"                # control


def test_the_grammar_judges_see_an_injected_command():
    """The readers above are the grammars, not the renderers' own view: a line break or ' ;' shows as a command."""
    assert eos_commands_as_eos_reads_them("interface Ethernet1\n   description gpu1\n" + INJECTED) == [
        ((), "interface Ethernet1"), (("interface Ethernet1",), "description gpu1"), ((), INJECTED)]
    assert nxos_commands_as_nxapi_reads_them(["description gpu1 ;" + INJECTED]) == ["description gpu1", INJECTED]


# ----------------------------------------------------------------------------- /etc/nccl.conf (a host file)

def _nccl_node(device_name="mlx5_6"):
    """Juniper JVD's recorded gpu1_eth (mlx5_6, RoCE v2 GID 3 for 10.200.1.10), its device renamed."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "rdma", "show_gids",
                        "juniper-jvd-dual-stack-tabs.txt")
    with open(path) as handle:
        facts = parse_rdma(handle.read(), "show_gids")
    facts = json.loads(json.dumps(facts).replace('"mlx5_6"', json.dumps(device_name)))
    model = {"name": "r", "rails": 1, "addressing": {"mode": "shared", "supernet": "10.200.0.0/16", "rail_prefix": 24,
                                                     "host_offset": 2}}
    plan = rail_plan(model, {"h1": {"node_id": 1, "rail_interfaces": ["gpu1_eth"]}})
    plan["nodes"]["h1"]["rails"][0]["ip"] = "10.200.1.10"
    return plan, facts


def test_nccl_conf_takes_no_line_from_a_name_read_from_the_node():
    plan, facts = _nccl_node()
    found = nccl.nccl_settings(plan, "h1", facts, "eno1")                         # control
    assert found["env"]["NCCL_IB_HCA"] == "=mlx5_6:1" and found["problems"] == []
    conf = nccl.nccl_conf(found)
    assert [line.split("=", 1)[0] for line in conf.splitlines() if not line.startswith("#")] == sorted(
        name for name in found["env"] if name.startswith("NCCL_"))
    # a device name with a line break: a problem, never an NCCL_NET_PLUGIN line of its own
    plan, facts = _nccl_node("mlx5_6\nNCCL_NET_PLUGIN=/tmp/x.so")
    found = nccl.nccl_settings(plan, "h1", facts, "eno1")
    assert "NCCL_IB_HCA" not in found["env"] and "is not one NCCL can be given" in found["problems"][0]
    assert "NCCL_NET_PLUGIN" not in [line.split("=", 1)[0] for line in nccl.nccl_conf(found).splitlines()]
    # a comment of the GPU table with a line break
    plan, facts = _nccl_node()
    found = nccl.nccl_settings(plan, "h1", facts, "eno1")
    found["gpu_nic"] = [{"gpu": "GPU0\nNCCL_NET_PLUGIN=/tmp/x.so", "device": "mlx5_6", "netdev": "gpu1_eth",
                         "rail": 1, "relation": "PIX"}]
    with pytest.raises(FabricError):
        nccl.nccl_conf(found)
    with pytest.raises(FabricError) as err:
        nccl.nccl_settings(plan, "h1", facts, "eno1\nNCCL_NET_PLUGIN=/tmp/x.so")
    assert str(err.value).startswith("nccl_socket_ifname: ") and "\n" not in str(err.value)
