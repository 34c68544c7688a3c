# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pushes at the request level: recorded NVUE REST, eAPI, NX-API and SONiC exchanges (data/tor_push/, origins in
ORIGIN.md) replayed in order, every request asserted as recorded; and HttpTransport against a real HTTP
server that replays the same files in a network namespace of the test's own."""

from __future__ import annotations

import base64
import copy
import json
import os
import subprocess
import sys
import textwrap

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_cumulus import nvue_push
from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_eos import eos_commands, eos_push
from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_nxos import nxos_push
from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_sonic import (
    merged_config_db, sonic_patch, sonic_push, sonic_remove_patch)
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import PushError
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_diff import tree_diff
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_render import render_tor

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tor_push")


def load(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as handle:
        return json.load(handle)


def paths(items):
    return [dict(item, path=tuple(item["path"])) for item in items]


class Replay(object):
    """A transport that checks each request against the recorded one and answers the recorded response."""

    def __init__(self, exchanges):
        self.exchanges = copy.deepcopy(list(exchanges))
        self.seen = []

    def request(self, method, path, body=None, params=None):
        self.seen.append({"method": method, "path": path, "params": params, "body": body})
        assert self.exchanges, "unexpected request %s %s" % (method, path)
        want = self.exchanges.pop(0)
        sent = {"method": method, "path": path}
        if params is not None:
            sent["params"] = params
        if body is not None:
            sent["body"] = body
        assert sent == want["request"]
        response = want["response"]
        assert response["status"] < 300, "error responses are replayed by the HTTP server test"
        return response["status"], response.get("body")


def rendered(platform):
    port = "swp{node}" if platform == "cumulus" else "Ethernet{node}"
    cluster = {"name": "r", "rails": 1, "addressing": {"mode": "p2p", "supernet": "172.17.0.0/16", "rail_prefix": 24},
               "tors": [{"name": "leaf1", "rails": [1], "platform": platform, "port_template": port}]}
    return render_tor(rail_plan(cluster, {"gpu01": {"node_id": 1}, "gpu02": {"node_id": 2}}), "leaf1")


# ----------------------------------------------------------------------------- tree_diff (what the pushes compare)

def test_tree_diff_lists_only_the_desired_leaves_that_differ_sorted():
    before = {"PORT": {"Ethernet0": {"mtu": "9100", "lanes": "1,2"}, "Ethernet4": {"mtu": "1500"}},
              "system": {"hostname": "x"}}
    after = {"PORT": {"Ethernet0": {"speed": "400000", "mtu": "9216"}}, "A": {"b": 1}, "system": {"hostname": "x"}}
    assert tree_diff(after, before) == [
        {"path": ("A", "b"), "before": None, "after": 1},
        {"path": ("PORT", "Ethernet0", "mtu"), "before": "9100", "after": "9216"},
        {"path": ("PORT", "Ethernet0", "speed"), "before": None, "after": "400000"}]
    # NVUE prints numbers bare, config_db holds strings: the same value is no difference
    assert tree_diff({"link": {"mtu": "9216"}}, {"link": {"mtu": 9216}}) == []


# ----------------------------------------------------------------------------- NVUE

def test_nvue_nothing_to_do_reads_once_and_creates_no_revision():
    rec = load("nvue/nothing_to_do.json")
    replay = Replay(rec["exchanges"])
    assert nvue_push(replay, rec["desired"]) == {"changed": False, "diff": [], "revision": None, "released": []}
    assert replay.exchanges == [] and len(replay.seen) == 1


def test_nvue_check_mode_reports_the_leaves_and_sends_nothing():
    rec = load("nvue/check_mode.json")
    replay = Replay(rec["exchanges"])
    result = nvue_push(replay, rec["desired"], check=True)
    assert result == {"changed": True, "diff": paths(rec["expected_diff"]), "revision": None, "released": []}
    assert [r["method"] for r in replay.seen] == ["GET"]


def test_nvue_push_creates_patches_applies_and_polls_a_revision_until_applied():
    rec = load("nvue/push_applied.json")
    replay = Replay(rec["exchanges"])
    naps = []
    result = nvue_push(replay, rec["desired"], sleep=naps.append)
    assert result["changed"] is True and result["revision"] == "2" and naps == [1]
    assert {"path": ("interface", "swp1", "link", "mtu"), "before": 1500, "after": 9216} in result["diff"]
    assert replay.exchanges == []


def test_nvue_changeset_revision_ids_are_quoted_in_the_revision_path():
    rec = load("nvue/push_changeset_id.json")
    replay = Replay(rec["exchanges"])
    result = nvue_push(replay, rec["desired"], sleep=lambda s: None)
    assert result["revision"] == "changeset/cumulus/2021-11-02_16.09.18_5Z1K" and replay.exchanges == []


@pytest.mark.parametrize("name, state, message", [
    ("apply_invalid", "invalid",
     "Config invalid at router.bgp.enable: BGP requires router-id to be set globally or in the VRF.; (Invalid config)"),
    ("apply_ays_fail", "ays_fail", "Timeout while waiting for client response; (Aborted apply after warnings)"),
])
def test_nvue_failed_revision_raises_with_nvue_s_message(name, state, message):
    rec = load("nvue/%s.json" % name)
    replay = Replay(rec["exchanges"])
    with pytest.raises(PushError) as err:
        nvue_push(replay, rec["desired"], sleep=lambda s: None)
    assert str(err.value) == "NVUE revision 6 ended %s: %s" % (state, message)
    assert replay.exchanges == []


def test_nvue_polling_is_bounded():
    rec = load("nvue/push_applied.json")
    stuck = rec["exchanges"][:4] + [rec["exchanges"][4]] * 4      # the revision never leaves "apply"
    replay = Replay(stuck)
    naps = []
    with pytest.raises(PushError, match=r"^NVUE revision 2 still apply after 3 s$"):
        nvue_push(replay, rec["desired"], timeout=3, sleep=naps.append)
    assert naps == [1, 1, 1] and replay.exchanges == []


def test_nvue_unsets_what_it_set_on_a_port_still_marked_but_no_longer_planned():
    body = rendered("cumulus")["data"]
    applied = copy.deepcopy(body)
    applied["interface"]["swp7"] = {"description": "gpu07 ens1 rail1 [ainet]", "link": {"mtu": 9216},
                                    "ip": {"address": {"172.17.0.12/31": {}}},
                                    "qos": {"pfc": {"profile": "ainet-roce"}}}
    applied["interface"]["swp8"] = {"description": "storage (another team)", "ip": {"address": {"10.9.9.1/24": {}}}}
    get = {"method": "GET", "path": "/nvue_v1/", "params": {"rev": "applied", "filled": "false"}}

    def ex(request, body=None):
        return {"request": request, "response": {"status": 200, "body": {} if body is None else body}}

    replay = Replay([
        ex(get, applied),
        ex({"method": "POST", "path": "/nvue_v1/revision"}, {"3": {"state": "pending"}}),
        ex({"method": "PATCH", "path": "/nvue_v1/", "params": {"rev": "3"}, "body": body}),
        ex({"method": "DELETE", "path": "/nvue_v1/interface/swp7/description", "params": {"rev": "3"}}),
        ex({"method": "DELETE", "path": "/nvue_v1/interface/swp7/ip/address", "params": {"rev": "3"}}),
        ex({"method": "DELETE", "path": "/nvue_v1/interface/swp7/qos/pfc", "params": {"rev": "3"}}),
        ex({"method": "PATCH", "path": "/nvue_v1/revision/3",
            "body": {"state": "apply", "auto-prompt": {"ays": "ays_yes"}}}),
        ex({"method": "GET", "path": "/nvue_v1/revision/3"}, {"state": "applied"}),
    ])
    result = nvue_push(replay, body, sleep=lambda s: None)
    assert result["released"] == ["swp7"] and replay.exchanges == []


# ----------------------------------------------------------------------------- EOS

def test_eos_commands_exit_each_block_as_the_indentation_closes():
    text = textwrap.dedent("""\
        qos profile P
           qos trust dscp
           !
           tx-queue 3
              bandwidth percent 50
           !
           tx-queue 6
              priority strict
        !

        interface Ethernet1
           mtu 9214
        qos map dscp 26 to traffic-class 3
        """)
    assert eos_commands(text.splitlines()) == [
        "qos profile P", "qos trust dscp", "tx-queue 3", "bandwidth percent 50", "exit", "tx-queue 6",
        "priority strict", "exit", "exit", "interface Ethernet1", "mtu 9214", "exit",
        "qos map dscp 26 to traffic-class 3"]


def test_eos_no_diff_aborts_the_session():
    rec = load("eos/no_diff.json")
    replay = Replay(rec["exchanges"])
    result = eos_push(replay, rec["lines"], session=rec["session"])
    assert result == {"changed": False, "session": "ainet-fabric-t1", "released": [], "diff": []}
    assert replay.exchanges == []


@pytest.mark.parametrize("name, check", [("check_mode", True), ("commit", False)])
def test_eos_diff_is_reported_and_committed_or_in_check_mode_aborted(name, check):
    rec = load("eos/%s.json" % name)
    replay = Replay(rec["exchanges"])
    # the rendered text and its lines are the same input
    result = eos_push(replay, "\n".join(rec["lines"]), check=check, session=rec["session"])
    assert result["changed"] is True
    assert [item["after"] for item in result["diff"]] == rec["expected_diff"]
    assert replay.exchanges == []    # the last recorded request is "abort" (check_mode) or "commit"


def test_eos_command_error_aborts_the_session_and_names_the_command():
    rec = load("eos/command_error.json")
    replay = Replay(rec["exchanges"])
    with pytest.raises(PushError) as err:
        eos_push(replay, rec["lines"], session=rec["session"])
    assert str(err.value) == ("eAPI: command 6 of 19 'no switchport' failed: Invalid input (at token 0: 'no') "
                              "(CLI command 6 of 19 'no switchport' failed: invalid command)")
    assert replay.exchanges == []    # the abort was sent


def test_eos_session_names_are_unique_by_default():
    rec = load("eos/no_diff.json")
    names = set()
    for _attempt in range(2):
        exchanges = copy.deepcopy(rec["exchanges"])

        class Loose(Replay):
            def request(self, method, path, body=None, params=None):
                if len(body["params"]["cmds"]) > 2:
                    names.add(body["params"]["cmds"][1])
                return 200, self.exchanges.pop(0)["response"]["body"]

        eos_push(Loose(exchanges), rec["lines"])
    assert len(names) == 2 and all(n.startswith("configure session ainet-fabric-") for n in names)


def test_eos_releases_stale_marked_ports_of_the_running_config():
    item = rendered("eos")
    running = item["text"] + ("interface Ethernet7\n   description gpu07 ens1 rail1 [ainet]\n"
                              "   ip address 172.17.0.12/31\n")
    sent = []

    class Record(object):
        def __init__(self, answers):
            self.answers = answers

        def request(self, method, path, body=None, params=None):
            sent.append(body["params"]["cmds"])
            return 200, {"jsonrpc": "2.0", "result": [{"output": o} for o in self.answers.pop(0)]}

    eos_push(Record([["", running], [""] * 80 + ["-   ip address 172.17.0.12/31\n"], ["", "", ""]]), item["text"],
             session="s1")
    tail = sent[1][sent[1].index("interface Ethernet7"):]
    assert tail[:7] == ["interface Ethernet7", "no description", "no service-profile", "no ip address",
                        "no ipv6 address", "no switchport access vlan", "exit"]
    assert sent[2] == ["enable", "configure session s1", "commit"]


# ----------------------------------------------------------------------------- NX-OS (NX-API CLI)

def test_nxos_in_sync_reads_once_and_sends_nothing():
    rec = load("nxos/no_diff.json")
    replay = Replay(rec["exchanges"])
    assert nxos_push(replay, rec["lines"]) == {"changed": False, "diff": [], "released": []}
    assert replay.exchanges == []
    # NX-OS reads `type` before `input` only when they come in that order (cisco.nxos httpapi).
    sent = json.dumps(replay.seen[0]["body"])
    assert sent.index('"type"') < sent.index('"input"')


@pytest.mark.parametrize("name, check", [("check_mode", True), ("push", False)])
def test_nxos_drift_is_reported_and_pushed_inside_its_blocks_or_in_check_mode_only_read(name, check):
    rec = load("nxos/%s.json" % name)
    replay = Replay(rec["exchanges"])
    result = nxos_push(replay, "\n".join(rec["lines"]) + "\n", check=check)
    assert result["changed"] is True and result["released"] == rec["released"] == ["Ethernet1/7"]
    assert [[" ".join(i["path"]), i["before"], i["after"]] for i in result["diff"]] == rec["expected_diff"]
    assert replay.exchanges == []        # check mode: one read; push: read, cli_conf, read back
    if not check:
        commands = replay.seen[1]["body"]["ins_api"]["input"].split(" ;")
        assert commands[:3] == ["class-map type qos match-all AINET_ROCE", "no match dscp 24", "match dscp 26"]
        assert commands[7:12] == ["policy-map type qos AINET_QOS", "class AINET_CNP", "set qos-group 6", "exit", "exit"]
        assert commands[-6:] == ["interface Ethernet1/7", "no description",
                                 "no ip address 172.17.0.12/31", "no priority-flow-control mode on",
                                 "no service-policy type qos input AINET_QOS", "exit"]


def test_nxos_refused_command_is_named_with_nxos_s_words():
    rec = load("nxos/command_error.json")
    replay = Replay(rec["exchanges"])
    with pytest.raises(PushError) as err:
        nxos_push(replay, rec["lines"])
    assert str(err.value) == ("NX-API: command 14 of 21 'mtu 9216' failed: ERROR: MTU can only be default or system "
                              "jumbo MTU (400 CLI execution error)")
    assert replay.exchanges == []


def test_nxos_push_fails_when_the_switch_still_lacks_a_line_afterwards():
    rec = load("nxos/still_lacking.json")
    replay = Replay(rec["exchanges"])
    with pytest.raises(PushError, match=r"^the switch still lacks after the push: interface Ethernet1/1: mtu 9216$"):
        nxos_push(replay, rec["lines"])
    assert replay.exchanges == []


def test_nxos_is_pushed_over_http_by_the_registry():
    from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms
    nos = platforms.nos("nxos")
    assert (nos.PUSH, nos.HTTP_PORT, nos.EXTENSION, nos.QOS_FORMAT) == ("http", None, "cfg", "nxos")


# ----------------------------------------------------------------------------- SONiC

def test_sonic_patch_adds_and_replaces_escapes_keys_and_never_removes_foreign_keys():
    running = load("sonic/running_config_db.json")
    fragment = load("sonic/fragment.json")
    expected = [op for op in load("sonic/apply_ok.json")["expected_patch"] if op["op"] != "remove"]
    assert sonic_patch(running, fragment) == expected
    assert "/INTERFACE/Ethernet0|172.17.0.0~131" in [op["path"] for op in expected]
    assert not any(op["path"].startswith(("/BGP_NEIGHBOR", "/LOOPBACK_INTERFACE", "/PORT/Ethernet4"))
                   for op in sonic_patch(running, fragment))
    assert sonic_patch({}, {"A": {"x~y/z": {"f": "1"}}}) == [
        {"op": "add", "path": "/A", "value": {"x~y/z": {"f": "1"}}}]
    assert sonic_patch({"A": {}}, {"A": {"x~y/z": {"f": "1"}}}) == [
        {"op": "add", "path": "/A/x~0y~1z", "value": {"f": "1"}}]


def test_sonic_patch_of_a_running_config_that_holds_the_fragment_is_empty():
    running = load("sonic/running_config_db.json")
    fragment = load("sonic/fragment.json")
    running = merged_config_db(running, fragment)
    assert sonic_patch(running, fragment) == []


def test_sonic_remove_patch_removes_only_owned_keys_that_exist():
    running = load("sonic/running_config_db.json")
    owned = [("INTERFACE", "Ethernet8|172.17.0.16/31"), ("PORT_QOS_MAP", "Ethernet8"),
             ("PORT", "Ethernet8", "description"), ("INTERFACE", "Ethernet12|172.17.0.24/31")]
    assert sonic_remove_patch(running, owned) == [
        {"op": "remove", "path": "/INTERFACE/Ethernet8|172.17.0.16~131"},
        {"op": "remove", "path": "/PORT/Ethernet8/description"},
        {"op": "remove", "path": "/PORT_QOS_MAP/Ethernet8"}]
    assert sonic_remove_patch(running, []) == []


class Switch(object):
    """The switch side of a SONiC push: replays the recorded commands, asserting each argv and its input."""

    def __init__(self, commands):
        self.commands = copy.deepcopy(commands)
        self.seen = []

    def __call__(self, argv, data=None):
        self.seen.append(argv)
        assert self.commands, "unexpected command %r" % (argv,)
        want = self.commands.pop(0)
        assert argv == want["argv"]
        if "data_json" in want:
            assert json.loads(data) == want["data_json"]
        else:
            assert data == want["data"]
        return want["rc"], want["stdout"], want["stderr"]


def test_sonic_push_writes_the_patch_applies_it_and_releases_stale_marked_ports():
    rec = load("sonic/apply_ok.json")
    switch = Switch(rec["commands"])
    result = sonic_push(switch, load("sonic/fragment.json"))
    assert result["changed"] is True and result["patch"] == rec["expected_patch"]
    assert result["released"] == ["Ethernet8"]
    assert {"path": ("PORT", "Ethernet0", "mtu"), "before": "9100", "after": "9216"} in result["diff"]
    assert {"path": ("PORT", "Ethernet8", "description"), "before": "gpu09 ens1 rail1 [ainet]", "after": None} \
        in result["diff"]
    assert switch.commands == []


def test_sonic_apply_failure_names_the_command_and_removes_the_patch_file():
    rec = load("sonic/apply_fail.json")
    switch = Switch(rec["commands"])
    with pytest.raises(PushError) as err:
        sonic_push(switch, load("sonic/fragment.json"))
    assert str(err.value).startswith(
        "config apply-patch /tmp/ainet-fabric-patch.Tst0123456 failed (rc 2): Failed to apply patch")
    assert "Error: Given patch will produce invalid config" in str(err.value)
    assert switch.commands == []      # rm -f ran


def test_sonic_check_mode_runs_nothing_that_changes():
    rec = load("sonic/apply_ok.json")
    switch = Switch(rec["commands"][:1])
    result = sonic_push(switch, load("sonic/fragment.json"), check=True)
    assert result["changed"] is True and result["patch"] == rec["expected_patch"]
    assert switch.seen == [["sonic-cfggen", "-d", "--print-data"]]
    rec = load("sonic/check_dry_run.json")
    switch = Switch(rec["commands"])
    assert sonic_push(switch, load("sonic/fragment.json"), check=True,
                      dry_run_in_check=True)["changed"] is True
    assert switch.commands == []


def test_sonic_push_is_idempotent():
    fragment = load("sonic/fragment.json")
    running = load("sonic/running_config_db.json")
    running["PORT"]["Ethernet8"].pop("description")       # nothing of ours left to release
    running = merged_config_db(running, fragment)
    switch = Switch([{"argv": ["sonic-cfggen", "-d", "--print-data"], "data": None, "rc": 0,
                      "stdout": json.dumps(running), "stderr": ""}])
    assert sonic_push(switch, fragment) == {"changed": False, "patch": [], "diff": [], "released": []}
    assert switch.commands == []


def test_sonic_push_with_sudo_prefixes_config_only():
    rec = load("sonic/apply_ok.json")
    commands = copy.deepcopy(rec["commands"])
    commands[3]["argv"] = ["sudo", "-n"] + commands[3]["argv"]
    switch = Switch(commands)
    sonic_push(switch, load("sonic/fragment.json"), sudo=True)
    assert switch.commands == []


@pytest.mark.parametrize("printed", ["/tmp/ainet-fabric-patch.x; rm -rf /\n", "/etc/passwd\n", "",
                                     "/tmp/ainet-fabric-patch.../../etc\n"])
def test_sonic_patch_file_name_from_the_switch_is_checked_before_any_use(printed):
    rec = load("sonic/apply_ok.json")
    commands = copy.deepcopy(rec["commands"][:2])
    commands[1]["stdout"] = printed
    switch = Switch(commands)
    with pytest.raises(PushError) as err:
        sonic_push(switch, load("sonic/fragment.json"))
    assert str(err.value).startswith("mktemp /tmp/ainet-fabric-patch.XXXXXXXXXX failed (rc 0)")
    assert switch.commands == [] and len(switch.seen) == 2      # nothing written, nothing removed


def test_sonic_patch_file_with_the_real_mktemp_and_shell(tmp_path):
    """The switch's side run here for real (coreutils mktemp, sh) with the GCU step stood in: the file it applies is
    a new regular file of this user, mode 0600, holding exactly the patch, and it is gone afterwards."""
    rec = load("sonic/apply_ok.json")
    running = rec["commands"][0]["stdout"]
    seen = {}

    def switch(argv, data=None):
        if argv[0] == "sonic-cfggen":
            return 0, running, ""
        if argv[:2] == ["config", "apply-patch"]:
            info = os.lstat(argv[-1])
            seen.update(path=argv[-1], mode=info.st_mode & 0o7777, uid=info.st_uid, patch=json.load(open(argv[-1])))
            return 0, "Patch applied successfully.\n", ""
        done = subprocess.run(argv, input=data, capture_output=True, text=True, check=False)
        return done.returncode, done.stdout, done.stderr

    result = sonic_push(switch, load("sonic/fragment.json"))
    assert seen["mode"] == 0o600 and seen["uid"] == os.getuid() and seen["patch"] == result["patch"]
    assert seen["path"].startswith("/tmp/ainet-fabric-patch.") and not os.path.exists(seen["path"])


# ----------------------------------------------------------------------------- HttpTransport, for real

SERVER = r'''
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qsl, urlsplit
exchanges = [e for name in sys.argv[3:] for e in json.load(open(name))["exchanges"]]
log = open(sys.argv[2], "a")

class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def handle_any(self):
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        got = {"method": self.command, "path": url.path}
        if url.query:
            got["params"] = dict(parse_qsl(url.query))
        if raw:
            got["body"] = json.loads(raw)
        want = exchanges.pop(0) if exchanges else None
        log.write(json.dumps({"got": got, "auth": self.headers.get("Authorization"),
                              "type": self.headers.get("Content-Type"),
                              "match": want is not None and got == want["request"]}) + "\n")
        log.flush()
        if want is None or got != want["request"]:
            self.send_response(500); self.end_headers(); return
        resp = want["response"]
        data = resp["text"].encode() if "text" in resp else json.dumps(resp["body"]).encode()
        self.send_response(resp["status"], resp.get("reason"))
        self.send_header("Content-Type", resp.get("content_type", "application/json"))
        for key, value in resp.get("headers", {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PATCH = do_DELETE = handle_any

srv = HTTPServer(("127.0.0.1", int(sys.argv[1])), H)
print("ready", flush=True)
srv.serve_forever()
'''

CLIENT = r'''
import json, sys
from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_cumulus import nvue_push
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import HttpTransport, PushError
desired = json.load(open(sys.argv[1]))["desired"]
good = HttpTransport("http://127.0.0.1:8765", "cumulus", "Sw1tch-Pass", timeout=10)
print(json.dumps(nvue_push(good, desired, sleep=lambda s: None)))
for transport in (HttpTransport("http://127.0.0.1:8765/", "cumulus", "Wr0ng-Pass", timeout=10),
                  HttpTransport("http://cumulus:Wr0ng-Pass@127.0.0.1:8766", "cumulus", "Wr0ng-Pass", timeout=10)):
    try:
        nvue_push(transport, desired)
    except PushError as exc:
        print("ERROR " + str(exc))
'''


@pytest.fixture
def netns():
    if os.geteuid() != 0:
        pytest.skip("needs root to create a network namespace of its own (ip netns add)")
    name = "ainet-tpush-%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def test_http_transport_against_a_replaying_server_in_a_namespace_of_its_own(tmp_path, netns):
    (tmp_path / "server.py").write_text(SERVER)
    (tmp_path / "client.py").write_text(CLIENT)
    log = tmp_path / "requests.log"
    files = [os.path.join(DATA, "nvue", n) for n in ("push_applied.json", "unauthorized.json")]
    server = subprocess.Popen(["ip", "netns", "exec", netns, sys.executable, str(tmp_path / "server.py"), "8765",
                               str(log)] + files, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().strip() == "ready"
        # The client imports the collection the way this test process does.
        out = subprocess.run(["ip", "netns", "exec", netns, sys.executable, str(tmp_path / "client.py"), files[0]],
                             env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p)),
                             capture_output=True, text=True, timeout=60, check=False)
    finally:
        server.kill()
        server.wait()
    text = out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 3, text
    assert json.loads(lines[0])["revision"] == "2" and json.loads(lines[0])["changed"] is True
    assert lines[1] == ("ERROR GET http://127.0.0.1:8765/nvue_v1/?rev=applied&filled=false: "
                        "HTTP 401 Unauthorized: 401 Authorization Required")
    assert lines[2].startswith("ERROR GET http://127.0.0.1:8766/nvue_v1/?rev=applied&filled=false: ")
    assert "refused" in lines[2].lower()
    assert "Sw1tch-Pass" not in text and "Wr0ng-Pass" not in text
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert [s["match"] for s in seen] == [True] * 7, seen     # every request as recorded, bodies included
    good = "Basic " + base64.b64encode(b"cumulus:Sw1tch-Pass").decode()
    bad = "Basic " + base64.b64encode(b"cumulus:Wr0ng-Pass").decode()
    assert [s["auth"] for s in seen] == [good] * 6 + [bad]
    assert seen[2]["type"] == "application/json" and seen[2]["got"]["method"] == "PATCH"
    assert subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout.count(netns) == 1


def test_http_transport_error_text_never_carries_the_password():
    import io
    from urllib import error as urlerror
    from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import HttpTransport

    transport = HttpTransport("https://admin:S3cret-pw@leaf1:443", "admin", "S3cret-pw", validate_certs=False)

    def refuse(req, timeout):
        assert req.get_header("Authorization") == "Basic " + base64.b64encode(b"admin:S3cret-pw").decode()
        assert req.full_url == "https://leaf1:443/command-api"
        body = io.BytesIO(b'{"message": "user admin with password S3cret-pw is locked"}')
        raise urlerror.HTTPError(req.full_url, 403, "Forbidden", {}, body)

    transport._opener.open = refuse
    with pytest.raises(PushError) as err:
        transport.request("POST", "/command-api", body={})
    assert str(err.value) == ("POST https://leaf1:443/command-api: HTTP 403 Forbidden: "
                              "user admin with password ******** is locked")
