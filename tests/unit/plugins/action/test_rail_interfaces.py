# -*- coding: utf-8 -*-
"""rail_interfaces without root: the module runs against recorded `ip` outputs.

The recorded states (fixtures/*.json, made by fixtures/record.py from a real kernel) answer
the module's reads; every command it runs is checked against the exact expected sequence,
and an unrecorded command fails the test (the community.general way). After a batch, reads
answer from the state the batch leads to.
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.desired.rail import rail_state
from ansible_collections.ainet.fabric.plugins.module_utils.host import iproute
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.modules import rail_interfaces
from ansible_collections.ainet.fabric.tests.unit.plugins.modules.host_task import run_module as run_flat
from ansible_collections.ainet.fabric.tests.unit.plugins.action.task_runner import run_task

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "modules", "fixtures")
CLUSTER = {"name": "rec", "rails": 2, "mtu": 9000, "management_networks": ["10.250.0.0/24"],
           "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27}}
INTERFACES = ["ens6f0np0", "ens6f1np1"]
SYSCTLS = ["net/ipv4/conf/%s/%s" % (i, k) for i in INTERFACES
           for k in ("rp_filter", "arp_ignore", "arp_announce", "arp_filter", "promote_secondaries")]
FRESH_TO_CONVERGED = [
    ("ip -batch -", ["link set dev ens6f0np0 mtu 9000 up", "link set dev ens6f1np1 mtu 9000 up",
                     "address add 172.17.0.2/27 broadcast 172.17.0.31 dev ens6f0np0",
                     "address add 172.17.1.2/27 broadcast 172.17.1.31 dev ens6f1np1"]),
    ("ip -4 -batch -", ["route replace 172.17.0.0/27 table 151 metric 0 dev ens6f0np0 src 172.17.0.2 scope link proto 211",
                        "route replace 172.17.1.0/27 table 152 metric 0 dev ens6f1np1 src 172.17.1.2 scope link proto 211",
                        "route replace 172.17.0.0/16 table 151 metric 0 via 172.17.0.1 dev ens6f0np0 proto 211",
                        "route replace 172.17.0.0/16 table 152 metric 0 via 172.17.1.1 dev ens6f1np1 proto 211",
                        "route replace 172.17.0.0/16 table 254 metric 0 via 172.17.0.1 dev ens6f0np0 proto 211",
                        "rule add priority 1001 from 172.17.0.2/32 table 151 protocol 4",
                        "rule add priority 1002 from 172.17.1.2/32 table 152 protocol 4"]),
]


def load(state):
    with open(os.path.join(FIXTURES, state + ".json")) as handle:
        return json.load(handle)


class FakeHost(object):
    """Answers run_command from a recorded state; a batch moves the host to ``after``."""

    def __init__(self, state, after=None, sysctls=None):
        self.outputs = load(state)
        self.after = after
        self.calls = []
        self.sysctls = dict(sysctls or {})

    def run_command(self, _module, args, data=None, **_kwargs):
        argv = ["ip"] + list(args[1:]) if args[0].endswith("/ip") else list(args)
        key = " ".join(argv)
        if "-batch" in argv and "-N" not in argv:
            self.calls.append((key, data.decode().splitlines() if isinstance(data, bytes) else data.splitlines()))
            if self.after:
                self.outputs = load(self.after)
            return 0, "", ""
        self.calls.append((key, None))
        if key in self.outputs:
            return 0, self.outputs[key], ""
        if key.startswith("ip -j route get"):
            return 0, '[{"dst":"10.250.0.1","dev":"eth0","prefsrc":"10.250.0.11"}]', ""
        raise AssertionError("unrecorded command: %s" % key)


@pytest.fixture
def host(monkeypatch):
    def make(state, after=None, sysctls=None):
        fake = FakeHost(state, after, sysctls)

        def run_command(module, args, **kwargs):
            return fake.run_command(module, args, **kwargs)
        monkeypatch.setattr(rail_interfaces.AnsibleModule, "run_command", run_command)
        monkeypatch.setattr(rail_interfaces.AnsibleModule, "get_bin_path",
                            lambda module, name, required=False, opt_dirs=None: "/usr/sbin/ip" if name == "ip" else None)
        monkeypatch.setattr(rail_interfaces.Host, "read_sysctls",
                            staticmethod(lambda paths: {p: fake.sysctls.get(p) for p in paths}))
        monkeypatch.setattr(rail_interfaces.Host, "write_sysctls", staticmethod(fake.sysctls.update))
        return fake
    return make


def run_module(capsys, root, **extra):
    """The task's result, through the action plugin (the plan made on the controller) and the module."""
    check = extra.pop("_ansible_check_mode", False)
    diff = extra.pop("_ansible_diff", False)
    args = dict(cluster=CLUSTER, node_id=1, interfaces=INTERFACES, persist="networkd", config_root=str(root))
    args.update(extra)
    return run_task(capsys, "rail_interfaces", args, check=check, diff=diff)[0]


def batches(fake):
    return [(key, lines) for key, lines in fake.calls if lines is not None]


def test_fresh_host_converges_with_two_batches_then_nothing(host, capsys, tmp_path):
    fake = host("fresh", after="converged", sysctls={p: "0" for p in SYSCTLS})
    result = run_module(capsys, tmp_path)
    assert result["changed"] is True, result
    assert batches(fake) == FRESH_TO_CONVERGED
    assert fake.sysctls == {p: dict(rp_filter="2", arp_ignore="1", arp_announce="2", arp_filter="1",
                                    promote_secondaries="1")[p.rsplit("/", 1)[1]] for p in SYSCTLS}
    assert sorted(os.path.relpath(p, str(tmp_path)) for p in result["files"]) == [
        "etc/iproute2/rt_protos.d/ainet.conf", "etc/sysctl.d/60-ainet-rails.conf",
        "etc/systemd/network/60-ainet-ens6f0np0.network", "etc/systemd/network/60-ainet-ens6f1np1.network",
        "etc/systemd/networkd.conf.d/60-ainet-rails.conf"]
    record = json.loads((tmp_path / "var/lib/ainet-fabric/rail_interfaces.json").read_text())
    assert sorted(record["fabrics"]) == ["rec"]
    assert record["fabrics"]["rec"]["addresses"] == [["ens6f0np0", "172.17.0.2/27"], ["ens6f1np1", "172.17.1.2/27"]]

    # The same host again: reads only, no batch, no file, changed false.
    again = host("converged", sysctls=fake.sysctls)
    result = run_module(capsys, tmp_path)
    assert result["changed"] is False, result
    assert batches(again) == [] and result["files"] == []
    assert [call[0] for call in again.calls] == ["ip -N -j -d -4 -batch -", "ip -N -j -d -6 -batch -"]


def test_the_action_sends_only_the_flat_state_and_the_module_alone_converges_the_same(host, capsys, tmp_path):
    task = dict(cluster=CLUSTER, node_id=1, interfaces=INTERFACES, persist="networkd", config_root=str(tmp_path))
    _result, sent = run_task(capsys, "rail_interfaces", task, check=True, diff=False)
    assert sorted(sent) == ["cluster_name", "config_root", "fabrics", "persist", "rails"]
    assert sent["fabrics"][0]["field_prefix"] == "fabric_cluster" and sent["rails"][1]["interface"] == "ens6f1np1"

    # The module on its own (ansible -m) with those flat options: the same batches.
    fake = host("fresh", after="converged", sysctls={p: "0" for p in SYSCTLS})
    flat = dict(rail_state(load_cluster(CLUSTER), 1, INTERFACES), persist="networkd", config_root=str(tmp_path))
    result = run_flat(capsys, "rail_interfaces", flat, diff=False)
    assert result["changed"] is True and batches(fake) == FRESH_TO_CONVERGED


@pytest.mark.parametrize("given", [dict(cluster=CLUSTER, node_id=1, interfaces=INTERFACES), dict()])
def test_the_module_alone_refuses_the_model_and_wants_the_flat_state(capsys, tmp_path, given):
    result = run_flat(capsys, "rail_interfaces", dict(given, config_root=str(tmp_path)), diff=False)
    assert result["failed"] is True
    if given:
        assert "cluster, node_id, interfaces are handled on the controller by the action plugin " \
               "ainet.fabric.rail_interfaces" in result["msg"], result["msg"]
    else:
        assert "missing required arguments: cluster_name, fabrics, rails" in result["msg"], result["msg"]


def test_a_bad_model_fails_on_the_controller_before_the_module_runs(capsys, tmp_path):
    result, sent = run_task(capsys, "rail_interfaces", dict(cluster=CLUSTER, node_id=99999, interfaces=INTERFACES,
                                                            config_root=str(tmp_path)))
    assert sent is None and result["failed"] is True and "fabric_node_id" in result["msg"], result


def test_check_mode_reports_the_same_commands_and_changes_nothing(host, capsys, tmp_path):
    fake = host("fresh", sysctls={p: "0" for p in SYSCTLS})
    result = run_module(capsys, tmp_path, _ansible_check_mode=True, _ansible_diff=True)
    assert result["changed"] is True
    assert batches(fake) == []
    assert result["commands"] == ["ip " + line for line in FRESH_TO_CONVERGED[0][1]] + \
        ["ip -4 " + line for line in FRESH_TO_CONVERGED[1][1]]
    assert not any(tmp_path.iterdir())
    runtime = result["diff"][0]
    assert "rule 1001: from 172.17.0.2/32 lookup 151 proto 4" in runtime["after"]
    assert "rule 1001" not in runtime["before"] and "address 172.17.0.2/27 dev ens6f0np0" in runtime["after"]


def test_foreign_rule_in_the_owned_band_fails_before_any_change(host, capsys, tmp_path):
    fake = host("foreign", sysctls={p: "0" for p in SYSCTLS})
    result = run_module(capsys, tmp_path)
    assert result["failed"] is True
    assert result["conflicts"] == ["rule `1002: from all fwmark 0x10 lookup 152 proto 0` (not created by "
                                   "ainet.fabric) sits at priority 1002, which cluster rec owns"]
    assert "set rail_network_takeover: true" in result["msg"]
    assert batches(fake) == [] and not any(tmp_path.iterdir()) and fake.sysctls == {p: "0" for p in SYSCTLS}


def test_takeover_deletes_exactly_the_foreign_rule(host, capsys, tmp_path):
    fake = host("foreign", after="converged", sysctls={p: "0" for p in SYSCTLS})
    result = run_module(capsys, tmp_path, takeover=True)
    assert result["changed"] is True
    assert batches(fake)[0] == ("ip -4 -force -batch -",
                                ["rule del priority 1002 from all fwmark 0x10 table 152 protocol 0"])
    assert result["removed"] == ["foreign rule 1002: from all fwmark 0x10 lookup 152 proto 0"]


def test_a_failing_line_reports_what_was_applied(host, capsys, tmp_path, monkeypatch):
    fake = host("fresh", sysctls={p: "0" for p in SYSCTLS})

    def failing(_module, args, data=None, **_kwargs):
        if "-batch" in args and "-N" not in args:
            fake.calls.append((" ".join(args), data))
            return 1, "", "Error: Nexthop device is not up.\nCommand failed -:3\n"
        return fake.run_command(_module, args, data=data)
    monkeypatch.setattr(rail_interfaces.AnsibleModule, "run_command", failing)
    result = run_module(capsys, tmp_path)
    assert result["failed"] is True and result["changed"] is True
    assert result["applied"] == ["ip link set dev ens6f0np0 mtu 9000 up", "ip link set dev ens6f1np1 mtu 9000 up"]
    assert "`ip address add 172.17.0.2/27 broadcast 172.17.0.31 dev ens6f0np0` failed: Error: Nexthop device is " \
           "not up." in result["msg"]
    assert "a re-run continues from here" in result["msg"]


def test_other_tools_routes_of_every_shape_are_read_and_left_alone(host, capsys, tmp_path):
    """misc.json: a converged host plus another tool's multipath (IPv4, IPv6), nexthop-object,
    blackhole and unreachable routes in table 300, recorded from the kernel."""
    routes = {}
    state = load("misc")
    for family in (4, 6):
        family_routes, _rules, _links = iproute.read_family(state["ip -N -j -d -%d -batch -" % family], family)
        routes.update({k: v for k, v in family_routes.items() if k.table == 300})
    assert {(k.family, k.dst, v.type): iproute.route_devs(v) for k, v in routes.items()} == {
        (4, "198.51.100.0/24", "unicast"): {"eth0"}, (4, "192.0.2.0/24", "unicast"): {"eth0"},
        (4, "203.0.113.0/24", "blackhole"): set(), (4, "203.0.114.0/24", "unreachable"): set(),
        (6, "2001:db8:1::/64", "unicast"): {"eth0"}}
    assert routes[iproute.RouteKey(4, 300, "198.51.100.0/24", 0)].nexthops == (
        ("10.250.0.1", "eth0", 1), ("10.250.0.2", "eth0", 2))
    fake = host("misc", sysctls=dict(zip(SYSCTLS, ["2", "1", "2", "1", "1"] * 2)))
    run_module(capsys, tmp_path)  # writes the files and the record
    result = run_module(capsys, tmp_path)
    assert result["changed"] is False and result["shadowing"] == [] and batches(fake) == [], result
