# -*- coding: utf-8 -*-
"""Golden-file tests of the persistent configuration renderers.

Regenerate after an intended change with: AINET_UPDATE_GOLDEN=1 pytest tests/unit
"""

from __future__ import annotations

import os

import pytest

import yaml

from ansible_collections.ainet.fabric.plugins.module_utils.host import netcfg_render
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.desired.rail import host_intent

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
CASES = {
    "exclusive-v4": {
        "name": "g", "rails": 2,
        "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27},
    },
    "p2p-v6": {"name": "g", "rails": 2, "addressing": {"mode": "p2p", "supernet": "fd00:17::/48", "rail_prefix": 64}},
    "infiniband": {
        "name": "g", "rails": 2,
        "addressing": {"mode": "infiniband", "supernet": "172.18.0.0/16", "rail_prefix": 24},
    },
}


RENDERERS = ("networkd", "netplan", "nm")


def rendered(case, renderer):
    files = host_intent(load_cluster(CASES[case]), 2, ["ens6f0np0", "ens6f1np1"], renderer).files
    text = []
    for path, (content, mode) in sorted(files.items()):
        text.append("==> %s (%s)\n%s" % (path, mode, content))
    return "".join(text)


@pytest.mark.parametrize("renderer", RENDERERS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case, renderer):
    path = os.path.join(GOLDEN, "%s.%s.txt" % (case, renderer))
    text = rendered(case, renderer)
    if os.environ.get("AINET_UPDATE_GOLDEN"):
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w") as handle:
            handle.write(text)
    with open(path) as handle:
        assert handle.read() == text


def test_owned_files_only():
    assert netcfg_render.owned("etc/systemd/network/60-ainet-ens1.network")
    assert netcfg_render.owned("etc/NetworkManager/system-connections/ainet-ens1.nmconnection")
    assert not netcfg_render.owned("etc/systemd/network/10-eth0.network")


def test_owned_patterns_cover_every_rendered_file_and_the_old_keepoff_unit():
    for case in CASES:
        for renderer in RENDERERS:
            for path in host_intent(load_cluster(CASES[case]), 1, ["a0", "b0"], renderer).files:
                assert netcfg_render.owned(path), path
    assert netcfg_render.owned("etc/systemd/system/ainet-rail-keepoff.service")
    assert netcfg_render.owned("etc/systemd/system/multi-user.target.wants/ainet-rail-keepoff.service")
    assert not netcfg_render.owned("etc/systemd/system/other-tool.service")
    assert not netcfg_render.owned("etc/netplan/50-cloud-init.yaml")


def test_netplan_file_is_the_intent_as_yaml():
    """Parsed back, the netplan file carries exactly the intent's addresses, routes and rules."""
    intent = host_intent(load_cluster(CASES["exclusive-v4"]), 2, ["ens6f0np0", "ens6f1np1"], "netplan")
    data = yaml.safe_load(intent.files[netcfg_render.NETPLAN_FILE][0])
    eth = data["network"]["ethernets"]
    assert sorted(eth) == ["ens6f0np0", "ens6f1np1"]
    assert [a for n in sorted(eth) for a in eth[n]["addresses"]] == [a.cidr for a in intent.addresses]
    routes = {(r.get("table", 254), r["to"], r.get("via"), n) for n in eth for r in eth[n]["routes"]}
    assert routes == {(k.table, k.dst, v.gateway, v.dev) for k, v in intent.routes.items()}
    rules = {(r["priority"], r["from"], r["table"]) for n in eth for r in eth[n]["routing-policy"]}
    assert rules == {(dict(r)["priority"], dict(r)["src"], dict(r)["table"]) for r in intent.rules}


def test_owned_matches_exactly_what_fnmatch_matches():
    """owned() matches its patterns without regular expressions; fnmatch is the reference, on the patterns'
    own expansions and on mutations of them (random but seeded)."""
    import fnmatch
    import random

    assert not any(c in "".join(netcfg_render.OWNED_PATTERNS) for c in "?[")  # '*' is the only wildcard
    rnd = random.Random(20)
    alphabet = "ae*/.-60ainetrlsycw"
    paths = []
    for _case in range(5000):
        pattern = rnd.choice(netcfg_render.OWNED_PATTERNS)
        chars = list(pattern.replace("*", "".join(rnd.choice(alphabet) for _char in range(rnd.randint(0, 4)))))
        for _change in range(rnd.randint(0, 2)):
            if chars:
                chars[rnd.randrange(len(chars))] = rnd.choice(alphabet)
        paths.append("".join(chars))
    owned = [p for p in paths if netcfg_render.owned(p)]
    assert len(owned) > 1000 and len(paths) - len(owned) > 1000  # both sides exercised
    for path in paths:
        assert netcfg_render.owned(path) == any(fnmatch.fnmatchcase(path, p) for p in netcfg_render.OWNED_PATTERNS), path
