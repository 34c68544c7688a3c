# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller-side reports with hostile names and tool output, judged by their grammar's reader (the judges
and hostile values of tests/unit/plugins/module_utils/report_judges.py; the library's reports are judged in
test_report_escape.py there): the link test's Markdown report and the Kubernetes files' header comment.

The threat model this file proves part of: docs/security.md (output grammars: the link test report, the Kubernetes files' header).
"""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.ainet.fabric.plugins.action.link_test import report_markdown as link_test_markdown
from ansible_collections.ainet.fabric.plugins.plugin_utils.k8s_dump import dump as k8s_dump
from ansible_collections.ainet.fabric.tests.unit.plugins.module_utils.report_judges import (
    CASES, HOSTILE, PH, assert_markdown_shows, markdown_tables, shown,
)


# --- the link test's report ------------------------------------------------------------------------------------

def _link_test(value):
    finding = {"host": "%sgpu1" % value, "interface": "ens1", "fabric": "default", "rail": 1, "tor": "%s-tor" % value,
               "tor_port": "swp1", "why": "ping: %s: 100%% packet loss" % value}
    verdict = {"tested": 2, "failed": 1, "broken": [finding], "slow": [], "suspect": []}
    measured = {"%sgpu2" % value: {"default": {"1": {"ib_write_bw": {
        "peers": 1, "min_gbps": 90.5, "min_peer": "%sgpu1" % value, "max_gbps": 91.0, "max_usec": None}}}}}
    return link_test_markdown("c-%s" % value, verdict, "2 nodes, 1 round(s).", measured,
                              ["%sgpu3: no RDMA device (%s)" % (value, value)])


@pytest.mark.parametrize("case", CASES)
def test_link_test_report_shows_tool_output_as_text(case):
    value = HOSTILE[case]
    assert_markdown_shows(_link_test(value), _link_test(PH), value, PH)
    assert [len(t) for t in markdown_tables(_link_test(value))] == [2, 2]


@pytest.mark.parametrize("case", CASES)
def test_k8s_dump_header_stays_a_comment(case):
    value = HOSTILE[case]
    objects = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": value}}]
    text = k8s_dump("ConfigMap", value, objects)
    assert list(yaml.safe_load_all(text)) == objects  # the header added no document, key or value
    header, body = text.split("\n", 1)
    assert header.startswith("# Managed by ainet.fabric") and shown(value) in shown(header)
    assert not any(char in header for char in "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029") and body.startswith("---\n")


def test_k8s_dump_control():
    objects = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}]
    text = k8s_dump("ConfigMap", PH, objects)
    assert text.split("\n", 1)[0] == ("# Managed by ainet.fabric (k8s_objects): ConfigMap of cluster zqx, from the rail "
                                      "plan. Apply in file order.")
    assert list(yaml.safe_load_all(text)) == objects
