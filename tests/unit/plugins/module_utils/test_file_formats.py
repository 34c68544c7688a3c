# -*- coding: utf-8 -*-
"""The structured dumpers: exact output for small inputs, YAML round trips for any data, and
refusals (with the key named) for values that would change a file's meaning."""

from __future__ import annotations

import configparser

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ainet.fabric.plugins.module_utils.common import file_formats

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text())
DATA = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(st.text(), inner, max_size=4)), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(DATA)
def test_yaml_round_trips_any_data(data):
    assert yaml.safe_load(file_formats.yaml_dump({"root": data}, "header")) == {"root": data}


@settings(max_examples=300, deadline=None)
@given(DATA)
def test_plain_yaml_round_trips_any_data(data):
    assert yaml.safe_load(file_formats.yaml_dump({"root": data}, "header", plain=True)) == {"root": data}


def test_a_dump_writes_each_value_by_its_own_type_when_equal_values_repeat():
    # 1 == True and "1" == "1": each string's text is kept for the dump, never an int's or a bool's
    data = [{"a": 1, "b": True, "c": "1", "d": "true", "e": 1.0}, {"a": True, "b": 1, "c": "true", "d": "1"}]
    text = file_formats.yaml_dump(data, plain=True)
    assert text == ('- a: 1\n  b: true\n  c: "1"\n  d: "true"\n  e: "1.0"\n'
                    '- a: true\n  b: 1\n  c: "true"\n  d: "1"\n')
    assert yaml.safe_load(text) == [{"a": 1, "b": True, "c": "1", "d": "true", "e": "1.0"},
                                    {"a": True, "b": 1, "c": "true", "d": "1"}]


def test_yaml_quotes_everything_that_could_change_the_mapping():
    text = file_formats.yaml_dump({"ethernets": {"ens1,ens2": {"addresses": ["10.0.0.1/24"], "mtu": 9000,
                                                               "dhcp4": False, "on": "yes"}}}, "Managed")
    assert text == ('# Managed\n"ethernets":\n  "ens1,ens2":\n    "addresses":\n      - "10.0.0.1/24"\n'
                    '    "mtu": 9000\n    "dhcp4": false\n    "on": "yes"\n')
    assert yaml.safe_load(text)["ethernets"]["ens1,ens2"]["on"] == "yes"


def test_unit_files_keep_repeated_sections_and_refuse_injection():
    text = file_formats.unit_dump([("Match", [("Name", "ens1")]), ("Route", [("Table", 151)]),
                                   ("Route", [("Gateway", "10.0.0.1"), ("ConfigureWithoutCarrier", True)])], "h")
    assert text == "# h\n\n[Match]\nName=ens1\n\n[Route]\nTable=151\n\n[Route]\nGateway=10.0.0.1\n" \
                   "ConfigureWithoutCarrier=yes\n"
    parser = configparser.ConfigParser(strict=False)
    parser.read_string(text.replace("[Route]\nGateway", "[Route2]\nGateway"))
    assert parser["Match"]["Name"] == "ens1" and parser["Route2"]["Gateway"] == "10.0.0.1"
    with pytest.raises(ValueError, match=r"\[Match\] Name='ens1\\n\[Network\]'"):
        file_formats.unit_dump([("Match", [("Name", "ens1\n[Network]")])])
    with pytest.raises(ValueError, match="not a valid key"):
        file_formats.unit_dump([("Match", [("Na me", "x")])])


def test_keyfile_values_are_escaped_the_glib_way():
    text = file_formats.keyfile_dump([("ipv4", [("dns-search", " lead\\back\nnext"), ("may-fail", False)])])
    assert text == "[ipv4]\ndns-search=\\slead\\\\back\\nnext\nmay-fail=false\n"
    with pytest.raises(ValueError, match="not a valid group name"):
        file_formats.keyfile_dump([("ipv4]x", [])])


def test_sysctl_keys_use_slashes_so_vlan_names_with_dots_work():
    text = file_formats.sysctl_dump({"net/ipv4/conf/bond0.100/rp_filter": "2"})
    assert text == "net/ipv4/conf/bond0.100/rp_filter = 2\n"
    with pytest.raises(ValueError):
        file_formats.sysctl_dump({"net/ipv4/conf/a b/rp_filter": "2"})
