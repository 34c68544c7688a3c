# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A user's play built on the agreement filters, run by ansible-playbook (issue 40): it must fail on a port whose PFC
stage was never read.

The switch is the OS10 control of the stage matrix (data/qos/os10/roce_dscp_tor_layout_ax.cfg, ORIGIN.md: every
stage right for NVIDIA's host defaults and the nvidia profile), the host ``test_lossless_check.HOST``. The case
removes the ``policy-map type network-qos pfc-policy`` definition the ports' ``service-policy input type network-qos
pfc-policy`` references: referenced but never defined, so which priorities the port pauses is unknown. Nothing then
*disagrees*; before the fix the filter's ``length == 0`` passed. The play asserts as the filters' EXAMPLES do:
``lossless_diff`` empty, or ``lossless_check``'s verdict ``agree``. The control passes both."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.ainet.fabric.tests.unit.plugins.module_utils.test_lossless_check import HOST

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
SAMPLE = os.path.join(ROOT, "tests", "unit", "plugins", "module_utils", "data", "qos", "os10",
                      "roce_dscp_tor_layout_ax.cfg")
DEFINITION = "policy-map type network-qos pfc-policy\n !\n class RoceData\n  pause\n  pfc-cos 3\n!\n"
CHECK = "nic | ainet.fabric.lossless_check(tor, port='ethernet1/1/1', profile='nvidia')"
DIFF = "nic | ainet.fabric.lossless_diff(tor, port='ethernet1/1/1', profile='nvidia')"
PLAYBOOK = [{"name": "A user's agreement assertion", "hosts": "localhost", "gather_facts": False,
             "vars": {"tor": "{{ lookup('ansible.builtin.file', tor_file) | ainet.fabric.parse_qos('os10') }}"},
             "tasks": [
                 {"name": "Record the check", "ansible.builtin.copy": {
                     "dest": "{{ out }}", "mode": "0644", "content": "{{ {'check': %s, 'diff': %s} | to_json }}"
                                                                     % (CHECK, DIFF)}},
                 {"name": "The NIC and its ToR port agree (lossless_diff, as its EXAMPLES)", "when": "which == 'diff'",
                  "ansible.builtin.assert": {"that": "findings | length == 0",
                                             "fail_msg": "{{ findings | map(attribute='message') | join(' ') }}"},
                  "vars": {"findings": "{{ %s }}" % DIFF}},
                 {"name": "The NIC and its ToR port agree (lossless_check)", "when": "which == 'check'",
                  "ansible.builtin.assert": {"that": "check.verdict == 'agree'",
                                             "fail_msg": "{{ check.verdict }}: {{ check.unchecked | to_json }}"},
                  "vars": {"check": "{{ %s }}" % CHECK}},
             ]}]


def play(tmp_path, config, which):
    (tmp_path / "tor.cfg").write_text(config)
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump({"all": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}))
    (tmp_path / "play.yml").write_text(yaml.safe_dump(PLAYBOOK, sort_keys=False))
    extra = {"nic": HOST, "tor_file": str(tmp_path / "tor.cfg"), "out": str(tmp_path / "check.json"), "which": which}
    (tmp_path / "extra.json").write_text(json.dumps(extra))
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""),
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    run = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
                          "-e", "@" + str(tmp_path / "extra.json"), str(tmp_path / "play.yml")],
                         capture_output=True, text=True, env=env, timeout=300, check=False, cwd=str(tmp_path))
    return run, json.loads((tmp_path / "check.json").read_text())


def sample():
    with open(SAMPLE, encoding="utf-8") as handle:
        text = handle.read()
    assert DEFINITION in text
    return text


@pytest.mark.parametrize("which", ["diff", "check"])
def test_the_control_passes_the_assertion(tmp_path, which):
    run, got = play(tmp_path, sample(), which)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert got["check"]["verdict"] == "agree" and got["diff"] == []


@pytest.mark.parametrize("which", ["diff", "check"])
def test_a_port_whose_pfc_stage_is_unread_fails_the_assertion(tmp_path, which):
    run, got = play(tmp_path, sample().replace(DEFINITION, ""), which)
    # nothing disagrees: the old lossless_diff returned [] here and the play passed
    assert got["check"]["disagreements"] == [] and got["check"]["verdict"] == "unchecked"
    assert [(i["code"], i["topic"]) for i in got["diff"]] == [("unchecked", "pfc")]
    assert run.returncode == 2, run.stdout[-3000:] + run.stderr[-2000:]
    assert "failed=1" in run.stdout
    assert ("Not checked: the sets of PFC priorities (PFC of the switch port ethernet1/1/1 was not read)" if which == "diff"
            else "unchecked") in run.stdout
