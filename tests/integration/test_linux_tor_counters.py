# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Linux ToR (``platform: linux``) read by the load test's ToR task from a playbook, on a real kernel.

The lab, in network namespaces of this test's own: a "ToR" namespace with a bridge and two ports (veth ``swp1``,
``swp2``) to two "node" namespaces. The ToR is an inventory host whose connection runs commands in its namespace
(tests/lab/connection_plugins/lab_netns.py). The playbook reads its counters with ``ainet.fabric.lossless_report``
(``read_counters``, as roles/lossless_test does), sends 1,200-byte pings from node 2 to node 1 through the bridge
while a tc filter on swp1 drops one frame in four (classic BPF, direct action: the kernel here has no netem and no
gact), reads again and judges each port with the ``parse_counters`` and ``load_verdict`` filters. swp1 must be
``dropped``, naming ``clsact_drops`` with the kernel's own count (read here with tc); swp2 must not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
CLUSTER = {"name": "linuxtor", "rails": 1, "mtu": 1500, "qos": {"preset": "nvidia"},
           "addressing": {"mode": "shared", "supernet": "10.78.0.0/16", "rail_prefix": 24},
           "tors": [{"name": "lab-tor", "rails": [1], "platform": "linux", "port_template": "swp{node}"}]}
PLAYBOOK = [{"name": "Read a Linux ToR's counters around a load", "hosts": "lab-tor", "gather_facts": False,
             "tasks": [
                 {"name": "Counters before", "ainet.fabric.lossless_report": {
                     "read_tor": "lab-tor", "read_counters": True, "ports": ["swp1", "swp2"],
                     "cluster": "{{ fabric_cluster }}"}, "register": "before"},
                 {"name": "The load", "delegate_to": "localhost", "ansible.builtin.command": {
                     "argv": ["ip", "netns", "exec", "{{ node2 }}", "ping", "-q", "-c", "200", "-i", "0.002",
                              "-s", "1200", "10.78.1.1"]}, "register": "load", "failed_when": False},
                 {"name": "Counters after", "ainet.fabric.lossless_report": {
                     "read_tor": "lab-tor", "read_counters": True, "ports": ["swp1", "swp2"],
                     "cluster": "{{ fabric_cluster }}"}, "register": "after"},
                 {"name": "Judge each port", "delegate_to": "localhost", "ansible.builtin.copy": {
                     "dest": "{{ out }}", "mode": "0644", "content": "{{ verdicts | to_json }}"}, "vars": {
                         "b": "{{ {'link': before.counters.linux_link | ainet.fabric.parse_counters('linux_link'), "
                              "'qdisc': before.counters.linux_qdisc | ainet.fabric.parse_counters('linux_qdisc')} }}",
                         "a": "{{ {'link': after.counters.linux_link | ainet.fabric.parse_counters('linux_link'), "
                              "'qdisc': after.counters.linux_qdisc | ainet.fabric.parse_counters('linux_qdisc')} }}",
                         "verdicts": "{{ {'via': after.via, 'source': after.source, "
                                     "'swp1': b | ainet.fabric.load_verdict(a, profile='nvidia', port='swp1', "
                                     "priorities=[3]), "
                                     "'swp2': b | ainet.fabric.load_verdict(a, profile='nvidia', port='swp2', "
                                     "priorities=[3])} }}"}},
             ]}]

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces of its own")


def sh(*argv):
    return subprocess.run(list(argv), capture_output=True, text=True, check=True)


@pytest.fixture()
def lab():
    tag = uuid.uuid4().hex[:6]
    tor, nodes = "ltor-%s" % tag, ["ln1-%s" % tag, "ln2-%s" % tag]
    try:
        sh("ip", "netns", "add", tor)
        sh("ip", "-n", tor, "link", "add", "br-rail1", "type", "bridge", "stp_state", "0", "forward_delay", "0")
        sh("ip", "-n", tor, "link", "set", "br-rail1", "up")
        for n, node in enumerate(nodes, 1):
            sh("ip", "netns", "add", node)
            sh("ip", "-n", tor, "link", "add", "name", "swp%d" % n, "type", "veth", "peer", "name", "rail1",
               "netns", node)
            sh("ip", "-n", tor, "link", "set", "swp%d" % n, "master", "br-rail1", "up")
            sh("ip", "-n", node, "addr", "add", "10.78.1.%d/24" % n, "dev", "rail1")
            sh("ip", "-n", node, "link", "set", "rail1", "up")
        sh("ip", "netns", "exec", nodes[1], "ping", "-c", "2", "-i", "0.2", "-q", "10.78.1.1")  # ARP resolved
        sh("ip", "netns", "exec", tor, "tc", "qdisc", "add", "dev", "swp1", "clsact")
        # A = frame length; over 200: A = random % 4, drop (TC_ACT_SHOT, 2) when 0; else TC_ACT_UNSPEC (-1)
        sh("ip", "netns", "exec", tor, "tc", "filter", "add", "dev", "swp1", "egress", "bpf", "da", "bytecode",
           "8,128 0 0 0,37 0 4 200,32 0 0 4294963256,148 0 0 4,21 0 1 0,6 0 0 2,6 0 0 4294967295,6 0 0 4294967295")
        yield tor, nodes
    finally:
        for name in [tor] + nodes:
            subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)


def test_a_linux_tor_is_read_over_its_connection_and_its_dropping_port_is_named(lab, tmp_path):
    tor, nodes = lab
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump({"all": {"hosts": {
        "lab-tor": {"ansible_connection": "lab_netns", "ansible_host": tor},
        "localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}},
        "vars": {"fabric_cluster": CLUSTER, "node2": nodes[1], "out": str(tmp_path / "verdicts.json")}}}))
    (tmp_path / "play.yml").write_text(yaml.safe_dump(PLAYBOOK, sort_keys=False))
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""),
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               ANSIBLE_CONNECTION_PLUGINS=os.path.join(ROOT, "tests", "lab", "connection_plugins"))
    run = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
                          str(tmp_path / "play.yml")], capture_output=True, text=True, env=env, timeout=300,
                         check=False, cwd=str(tmp_path))
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    got = json.loads((tmp_path / "verdicts.json").read_text())
    kernel = [q for q in json.loads(sh("ip", "netns", "exec", tor, "tc", "-s", "-j", "qdisc", "show", "dev",
                                       "swp1").stdout) if q["kind"] == "clsact"][0]["drops"]
    assert kernel > 0, "the filter dropped nothing"
    assert got["via"] == "ssh" and "ip -s -s -j link show, tc -s -j qdisc show, ethtool -S {port} over its lab_netns connection" \
        in got["source"], got["source"]
    assert got["swp1"]["verdict"] == "dropped", got["swp1"]
    drops = dict((r["counter"], r["delta"]) for r in got["swp1"]["classes"][0]["moved"]["drop"])
    assert drops == {"clsact_drops": kernel}, drops   # every drop happened between the reads
    assert "switch swp1 clsact_drops +%d" % kernel in got["swp1"]["classes"][0]["message"]
    assert got["swp2"]["verdict"] == "inconclusive" and not got["swp2"]["classes"][0]["moved"]["drop"], got["swp2"]
