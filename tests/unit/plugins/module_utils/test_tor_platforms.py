# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ToR platform registry (tor/platforms.py): one table, one module per NOS holding every fact about it, and
no `if platform == ...` left anywhere else."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.model import model_schema
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse import PARSERS
from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
FACTS = ("NAME", "TITLE", "QOS_FORMAT", "EXTENSION", "RUNNING_EXTENSIONS", "PORT_TEMPLATE", "PORT_MTU", "PORT_MTU_MAX",
         "PORT_NAME", "PORT_NAME_RE", "PUSH", "HTTP_PORT", "invalid_ports")
RENDERED = ("render", "validate", "running_diff", "stale_ports", "push")


def test_the_registry_covers_the_model_s_platform_choices():
    assert sorted(platforms.PLATFORMS) == sorted(model_schema.TOR["platform"].choices)
    assert platforms.rendered_platforms() == ["cumulus", "eos", "nxos", "sonic"]


@pytest.mark.parametrize("name", sorted(platforms.PLATFORMS))
def test_each_nos_module_holds_every_fact(name):
    nos = platforms.PLATFORMS[name]
    missing = [fact for fact in FACTS + (RENDERED if nos.EXTENSION else ()) if not hasattr(nos, fact)]
    assert not missing, "%s lacks %s" % (nos.__name__, missing)
    # a NOS whose configuration is not read (linux: counters only) has no parse_qos format
    assert nos.NAME == name and (nos.QOS_FORMAT in PARSERS or (nos.QOS_FORMAT is None and not getattr(nos, "READ", ())))
    assert nos.PUSH in ((None, "http", "ssh") if nos.EXTENSION else (None,))
    assert 1280 <= nos.PORT_MTU <= nos.PORT_MTU_MAX <= 9216
    defaults = [nos.PORT_TEMPLATE.format(node=n, local=n, rail=1) for n in (1, 2, 48)]
    assert nos.invalid_ports(defaults) == [], "the default port template must follow the NOS's own syntax"


@pytest.mark.parametrize("name,good,bad", [
    ("sonic", ["Ethernet0", "Ethernet124"], ["Ethernet1/1", "swp1", "Eth0", "ethernet0"]),
    ("cumulus", ["swp1", "swp31s3"], ["swp", "Ethernet1", "swp1s", "swp1.100"]),
    ("eos", ["Ethernet1", "Ethernet49/1", "Ethernet3/1/4"], ["Ethernet", "Et1", "swp1", "Ethernet1/1/1/1"]),
    ("nxos", ["Ethernet1/1", "Ethernet1/49/4"], ["Ethernet1", "Eth1/1", "ethernet1/1", "Ethernet1/1/1/1"]),
    ("os10", ["ethernet1/1/1", "ethernet1/1/49:4"], ["Ethernet1/1/1", "ethernet1/1", "ethernet1/1/1:"]),
    ("linux", ["swp1", "vm1-r1", "enp65s0f0np0", "eth0.100", "x" * 15], ["x" * 16, "eth0/1", "a b", "eth:0", ".", "..", ""]),
])
def test_port_names_follow_the_vendor_s_syntax(name, good, bad):
    assert platforms.nos(name).invalid_ports(good + bad) == bad


def test_port_problems_name_the_port_the_syntax_and_a_template():
    assert platforms.port_problems("nxos", ["Ethernet1/1", "swp2"]) == [
        "port swp2: not a Cisco NX-OS port name (Ethernet<slot>/<port>[/<breakout>]); set the ToR's port_template "
        "accordingly, e.g. Ethernet1/{node}"]
    assert platforms.port_problems("sonic", ["Ethernet0"]) == [] and platforms.port_problems(None, ["x"]) == []


def test_formats_and_file_endings_come_from_the_registry():
    assert [platforms.qos_format(p) for p in ("sonic", "cumulus", "eos", "nxos", "os10", None, "junos")] == [
        "sonic_config_db", "nvue", "eos", "nxos", "os10", None, None]
    assert platforms.running_extensions("cumulus") == (".yaml", ".yml") and platforms.running_extensions("x") == ()
    # Without a platform only an ending one NOS alone uses tells the format.
    assert [platforms.format_by_extension(e) for e in (".json", ".yaml", ".yml", ".cfg", ".txt")] == [
        "sonic_config_db", "nvue", "nvue", None, None]
    with pytest.raises(ValueError, match="no diff for platform 'os10'"):
        platforms.running_diff("os10", "", {})


# A platform compared with a NOS name, or a table keyed by NOS names, outside the registry.
CHAIN = re.compile(r"""platform["'\])]*\s*(==|!=|\bin\b)\s*[(\[{]?\s*["'](sonic|cumulus|eos|nxos|os10)["']""")
TABLE = re.compile(r"""[{,]\s*["'](sonic|cumulus)["']\s*:\s*.*["'](cumulus|eos|nxos)["']\s*:""")
# The model still names the EOS MTU cap itself (another change moves model-level platform facts).
PENDING = {os.path.join("plugins", "module_utils", "model", "cluster_model.py")}


def test_no_platform_chain_or_per_platform_table_outside_the_registry():
    found = []
    for folder, _dirs, files in os.walk(os.path.join(ROOT, "plugins")):
        for name in files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, ROOT)
            if not name.endswith(".py") or rel in PENDING or re.search(r"tor/(platforms|nos_\w+)\.py$", rel):
                continue
            with open(path, encoding="utf-8") as handle:
                for number, line in enumerate(handle, 1):
                    if CHAIN.search(line) or TABLE.search(line):
                        found.append("%s:%d: %s" % (rel, number, line.strip()))
    assert not found, "\n".join(found)
