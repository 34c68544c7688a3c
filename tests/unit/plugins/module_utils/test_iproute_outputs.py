# -*- coding: utf-8 -*-
"""The iproute2 parsers on every recorded output in data/iproute (origin of each file in
data/iproute/ORIGIN.md: scenarios recorded on a real kernel by record.sh, and outputs from
other projects' tests and issue threads), with facts checked per file."""

from __future__ import annotations

import glob
import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.host import iproute

DATA = os.path.join(os.path.dirname(__file__), "data", "iproute")
FILES = sorted(glob.glob(os.path.join(DATA, "*.json")))


def read(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def parse(path):
    what = os.path.basename(path).rsplit(".", 2)[1]
    text = read(os.path.basename(path))
    if what in ("addr", "link"):
        return iproute.parse_links(text)
    if what.startswith("route") and what != "routeget":
        return iproute.parse_routes(text, 6 if what.startswith("route6") else 4)
    if what.startswith("rule"):
        return iproute.parse_rules(text, 6 if what.startswith("rule6") else 4)
    return iproute.load(text, what)


def test_the_recorded_outputs_are_all_here():
    assert len(FILES) >= 70
    assert len([f for f in FILES if os.path.basename(f).startswith("realworld-")]) >= 9


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_every_output_parses(path):
    parse(path)  # raises on anything it cannot read


@pytest.mark.parametrize("scenario", ["clean-v4", "foreign-rules", "routes-misc", "v6"])
def test_numeric_and_named_outputs_agree(scenario):
    """`ip -N` and plain `ip` of the same state give the same objects (names mapped to numbers)."""
    for family in (4, 6):
        named = os.path.join(DATA, "%s.rule%d.json" % (scenario, family))
        numeric = os.path.join(DATA, "%s.rule%dn.json" % (scenario, family))
        assert sorted(parse(named)) == sorted(parse(numeric))
        named = os.path.join(DATA, "%s.route%d.json" % (scenario, family))
        numeric = os.path.join(DATA, "%s.route%dn.json" % (scenario, family))
        assert parse(named) == parse(numeric)


def test_foreign_rule_selectors_are_kept():
    rules = parse(os.path.join(DATA, "foreign-rules.rule4n.json"))
    with_mark = [dict(r) for r in rules if dict(r).get("fwmark")]
    assert with_mark and all("table" in r or "action" in r or "goto" in r for r in with_mark)
    assert [dict(r) for r in rules if dict(r)["priority"] == 1001 and dict(r).get("table") == 100]


def test_multipath_routes_name_every_device():
    routes = parse(os.path.join(DATA, "routes-misc.route4n.json"))
    multipath = [v for v in routes.values() if v.nexthops]
    assert multipath and all(iproute.route_devs(v) for v in multipath)


def test_real_world_netplan_routes_with_details():
    routes = parse(os.path.join(DATA, "realworld-netplan-status.route4d.json"))
    defaults = {k.metric: v.dev for k, v in routes.items() if k.dst == "0.0.0.0/0" and k.table == 254}
    assert defaults == {100: "enp0s31f6", 600: "wlan0"}
    assert {v.proto for k, v in routes.items() if k.dst == "0.0.0.0/0"} == {16}


def test_tentative_and_dad_states_are_seen():
    links = parse(os.path.join(DATA, "v6-tentative.addr.json"))
    assert any(a["tentative"] for link in links.values() for a in link.addr_attrs.values())
