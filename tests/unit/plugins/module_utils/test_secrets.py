# -*- coding: utf-8 -*-
"""Secrets split off repository URLs (common/secrets.py) and redacted from switch configurations
(tor/config_redact.py). The configuration lines follow the vendors' documented syntax (Arista EOS user manual
"username", "enable password", "snmp-server community", "tacacs-server host"; Cisco NX-OS security configuration
guide "username ... password 5", "snmp-server user ... auth md5 ... localizedkey"; Dell OS10 "username ... password
... role"; SONiC config_db tables SNMP_COMMUNITY (keyed by the community) and SNMP_USER with
SNMP_USER_AUTH_PASSWORD / SNMP_USER_ENCRYPTION_PASSWORD as sonic-net/SONiC doc/snmp/snmp-configdb-migration-hld.md
shows them, TACPLUS|global and RADIUS_SERVER passkey (sonic-net/SONiC doc/aaa/TACACS+ Design.md); NVUE "system aaa user hashed-password",
"service snmp-server readonly-community").

The threat model this file proves part of: docs/security.md (secrets: mirror logins and running configurations).
"""

from __future__ import annotations

import json

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.common import secrets
from ansible_collections.ainet.fabric.plugins.module_utils.tor import config_redact as redact
from ansible_collections.ainet.fabric.plugins.module_utils.tor import tor_read


# -- URLs -----------------------------------------------------------------------------------------------------------

def test_a_login_is_split_off_and_percent_decoded():
    assert secrets.split_userinfo("https://u:PLANTED%2Ftok%40x@mirror.example:8443/doca/", "f") == (
        "https://mirror.example:8443/doca/", "u", "PLANTED/tok@x")
    # the control: a URL without a login is returned as it is
    assert secrets.split_userinfo("https://mirror.example/doca/", "f") == ("https://mirror.example/doca/", None, None)
    assert secrets.split_userinfo("", "f") == ("", None, None)
    assert secrets.split_userinfo("https://u@mirror/x", "f") == ("https://mirror/x", "u", None)


@pytest.mark.parametrize("url", ["https://u:PLANTED tok@mirror/", "https://:PLANTEDtok@mirror/",
                                 "https://u:PLANTED%0Atok@mirror/", "https://u:PLANTEDtok@mirror:port/"])
def test_an_unusable_login_is_refused_naming_the_field_never_the_value(url):
    with pytest.raises(secrets.SecretError) as err:
        secrets.split_userinfo(url, "doca_ofed_mirror")
    assert str(err.value).startswith("doca_ofed_mirror: ") and "PLANTED" not in str(err.value)


def test_the_strings_to_mask_are_found_even_in_a_refused_url():
    assert secrets.userinfo_secrets("https://u:PLANTED%20tok@m/") == {"PLANTED%20tok", "PLANTED tok"}
    assert secrets.userinfo_secrets("https://u:PLANTED tok@m/") == {"PLANTED tok"}
    assert secrets.userinfo_secrets("https://u@m/") == set() and secrets.userinfo_secrets("https://m/") == set()


def test_redact_url():
    assert secrets.redact_url("https://u:PLANTED@mirror/x") == "https://<redacted>@mirror/x"
    assert secrets.redact_url("https://mirror/x") == "https://mirror/x"
    assert secrets.redact_url("bad u:PLANTED@ http://u:PLANTED@h:po/") == "bad u:PLANTED@ http://<redacted>@h:po/"


def test_apt_auth_entry_names_the_protocol_and_the_path():
    # apt_auth.conf(5): without a protocol an entry matches https only; an http mirror needs it written
    text = secrets.apt_auth_entry("http://10.0.0.1:8080/doca/", "u", "PLANTED", "doca_ofed")
    assert text.splitlines()[1] == "machine http://10.0.0.1:8080/doca login u password PLANTED"
    assert text.startswith("# Managed by ainet.fabric (doca_ofed)")
    assert secrets.apt_auth_entry("https://m/", "u", None, "x").splitlines()[1] == "machine https://m login u"
    parts = secrets.url_credentials("https://u:PLANTED@m/doca/", "f", "doca_ofed")
    assert parts["url"] == "https://m/doca/"
    assert parts["apt_auth"].endswith("machine https://m/doca login u password PLANTED\n")
    assert secrets.url_credentials("https://m/doca/", "f")["apt_auth"] is None


# -- switch configurations ------------------------------------------------------------------------------------------

CLI = [
    ("username admin privilege 15 role network-admin secret sha512 $6$PLANTED$x",
     "username admin privilege 15 role network-admin secret sha512 <redacted>"),
    ("username admin password 5 $5$PLANTED$y  role network-admin", "username admin password 5 <redacted>"),
    ("username ops password $6$PLANTED$z role sysadmin priv-lvl 15", "username ops password <redacted>"),
    ("enable secret sha512 $6$PLANTED$e", "enable secret sha512 <redacted>"),
    ("enable password 0 PLANTED", "enable password 0 <redacted>"),
    ("snmp-server community PLANTEDCOMMUNITY ro", "snmp-server community <redacted>"),
    ("snmp-server community PLANTEDCOMMUNITY group network-operator", "snmp-server community <redacted>"),
    ("snmp-server user admin network-admin auth md5 0xPLANTED priv 0xPLANTED localizedkey",
     "snmp-server user admin network-admin auth <redacted>"),
    ("snmp-server host 10.1.1.1 traps version 2c PLANTED", "snmp-server host 10.1.1.1 <redacted>"),
    ("tacacs-server host 10.1.1.1 key 7 070EPLANTED", "tacacs-server host 10.1.1.1 key 7 <redacted>"),
    ("tacacs-server key 7 PLANTED", "tacacs-server key 7 <redacted>"),
    ("radius-server host 1.1.1.1 key 9 PLANTED", "radius-server host 1.1.1.1 key 9 <redacted>"),
    ("   neighbor 10.0.0.1 password 7 PLANTED", "   neighbor 10.0.0.1 password 7 <redacted>"),
    ("   ip ospf authentication-key 7 PLANTED", "   ip ospf authentication-key 7 <redacted>"),
    ("   ip ospf message-digest-key 1 md5 7 PLANTED", "   ip ospf message-digest-key 1 md5 7 <redacted>"),
    ("   key-string 7 PLANTED", "   key-string 7 <redacted>"),
]


@pytest.mark.parametrize("line,want", CLI)
def test_cli_secret_lines_are_redacted_by_their_grammar(line, want):
    assert redact.redact_line(line) == want


@pytest.mark.parametrize("line", [
    "interface Ethernet1/1", "  priority-flow-control mode on", "qos map dscp 26 to traffic-class 3",
    "hostname leaf1", "  service-policy type qos input ROCE", "username admin role network-admin"])
def test_lines_without_a_secret_stay_as_they_are(line):
    assert redact.redact_line(line) == line


def test_json_configurations_lose_their_secret_values_and_community_names():
    config_db = {"SNMP_COMMUNITY": {"PLANTEDCOMMUNITY": {"TYPE": "RO"}},
                 "TACPLUS": {"global": {"passkey": "PLANTED1", "auth_type": "pap"}},
                 "RADIUS_SERVER": {"10.9.9.9": {"passkey": "PLANTED2", "auth_port": "1812"}},
                 "SNMP_USER": {"u": {"SNMP_USER_AUTH_PASSWORD": "PLANTED3", "SNMP_USER_ENCRYPTION_PASSWORD": "PLANTED4"}},
                 "PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3,4"}}}
    nvue = {"system": {"aaa": {"user": {"admin": {"hashed-password": "$6$PLANTED5", "role": "system-admin"}},
                               "tacacs": {"server": {"1": {"host": "10.1.1.1", "secret": "PLANTED6"}}}}},
            "service": {"snmp-server": {"readonly-community": {"PLANTEDCOMM": {"access": {"any": {}}}}}}}
    for data in (config_db, nvue):
        out = redact.redact_config(json.dumps(data))
        assert "PLANTED" not in out, out
    out = json.loads(redact.redact_config(json.dumps(config_db)))
    assert out["PORT_QOS_MAP"] == config_db["PORT_QOS_MAP"] and out["TACPLUS"]["global"]["auth_type"] == "pap"
    assert out["SNMP_COMMUNITY"] == {"<redacted>-1": {"TYPE": "RO"}}
    assert json.loads(redact.redact_config(json.dumps(nvue)))["system"]["aaa"]["user"]["admin"]["role"] == (
        "system-admin")


def test_a_text_configuration_is_redacted_line_by_line():
    text = "hostname leaf1\nusername admin secret sha512 $6$PLANTED\ninterface Ethernet1\n"
    assert redact.redact_config(text) == ("hostname leaf1\nusername admin secret sha512 <redacted>\n"
                                          "interface Ethernet1\n")


def test_the_live_read_keeps_the_qos_facts_and_one_line_messages_are_redacted():
    facts = tor_read.qos_facts("username admin secret sha512 $6$PLANTED\nsnmp-server community PLANTEDC ro\n"
                               "hostname leaf1\n", "eos")
    assert "PLANTED" not in json.dumps(facts) and "ports" in facts
    assert tor_read.one_line("ToR x could not be read: bad line 'snmp-server community PLANTEDC ro'") == (
        "ToR x could not be read: bad line 'snmp-server community <redacted>")
