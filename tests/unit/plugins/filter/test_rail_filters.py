# -*- coding: utf-8 -*-
from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.ainet.fabric.plugins.filter.rail import FilterModule

FILTERS = FilterModule().filters()
CLUSTER = {
    "name": "f",
    "rails": 2,
    "addressing": {"mode": "p2p", "supernet": "10.9.0.0/16", "rail_prefix": 24},
}


def test_rail_addresses_with_interfaces():
    rails = FILTERS["rail_addresses"](CLUSTER, 2, ["ens1np0", "ens2np0"])
    expected = [("ens1np0", "10.9.0.3/31"), ("ens2np0", "10.9.1.3/31")]
    assert [(r["interface"], r["address"]) for r in rails] == expected


def test_errors_become_filter_errors_with_the_field():
    with pytest.raises(AnsibleFilterError, match=r"^fabric_node_id: 0 is below the minimum 1"):
        FILTERS["rail_addresses"](CLUSTER, 0)
    with pytest.raises(AnsibleFilterError, match=r"fabric_rail_interfaces: \['a'\] has 1 interfaces"):
        FILTERS["rail_addresses"](CLUSTER, 1, ["a"])
    with pytest.raises(AnsibleFilterError, match="fabric_cluster.addressing.mode"):
        FILTERS["cluster_model"](dict(CLUSTER, addressing={"mode": "x"}))


class FakeHostvars(dict):
    pass


def test_node_map_reads_only_two_variables():
    hostvars = FakeHostvars(a={"fabric_node_id": 1, "fabric_rail_interfaces": ["x", "y"], "other": 1}, b={})
    assert FILTERS["node_map"](["a", "b"], hostvars) == {
        "a": {"node_id": 1, "rail_interfaces": ["x", "y"]},
        "b": {"node_id": None, "rail_interfaces": None},
    }


def test_plan_and_report():
    plan = FILTERS["rail_plan"](CLUSTER, {"h1": 1})
    assert FILTERS["plan_report"](plan, "csv").splitlines()[1].startswith("h1,1,default,1,,10.9.0.1/31")
