# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""InfiniBand partitions from the cluster model (``infiniband.partitions`` of a fabric): validated by the model,
carried by the plan, rendered by ib/opensm without the caller passing them (issue 45, step 2)."""

from __future__ import annotations

import copy
import os
import sys

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.cabling.ib_parse import parse_ibnetdiscover
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.ib import opensm
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "lab"))
import ib_plans  # noqa: E402  pylint: disable=wrong-import-position

MODEL_PARTITIONS = [
    {"name": "compute", "pkey": "0x0101", "membership": "full", "ipoib": True, "mtu": 5},
    {"name": "storage", "pkey": "0x202", "hosts": ["gpu01", "gpu02"], "membership": "limited", "ipoib": False},
]


def model(partitions=None, mode="infiniband"):
    raw = ib_plans.lab_model()
    raw["addressing"]["mode"] = mode
    raw["infiniband"] = {"partitions": copy.deepcopy(MODEL_PARTITIONS if partitions is None else partitions)}
    return raw


def guids(plan):
    with open(os.path.join(HERE, "data", "ib", "ibnetdiscover-good.txt")) as handle:
        return ib_plans.port_guids(plan, parse_ibnetdiscover(handle.read()))


def test_the_models_partitions_render_as_the_list_given():
    plan = rail_plan(model(), dict(ib_plans.HOSTS))
    assert plan["fabrics"]["default"]["partitions"][1] == {
        "name": "storage", "pkey": "0x0202", "hosts": ["gpu01", "gpu02"], "membership": "limited", "ipoib": False,
        "fabric": "default"}
    port_guids = guids(plan)
    assert opensm.partitions_text(plan, None, port_guids) == opensm.partitions_text(
        plan, ib_plans.PARTITIONS, port_guids)
    assert opensm.desired_pkeys(plan, None, port_guids) == opensm.desired_pkeys(plan, ib_plans.PARTITIONS, port_guids)


def test_a_model_without_partitions_keeps_its_plan_and_gives_the_default_partition_only():
    raw = ib_plans.lab_model()
    plan = rail_plan(raw, dict(ib_plans.HOSTS))
    assert "partitions" not in plan["fabrics"]["default"] and "infiniband" not in plan["cluster"]["fabrics"]["default"]
    assert opensm.model_partitions(plan) == []
    text = opensm.partitions_text(plan, None, {})
    assert text.splitlines()[1:] == ["Default=0x7fff, ipoib : ALL=limited, SELF=full ;"]


@pytest.mark.parametrize("change,message", [
    ({"pkey": "0x7fff"}, r"partitions\[0\]\.pkey: '0x7fff' is not a partition key 0x0001\.\.0x7ffe"),
    ({"pkey": "0x0000"}, r"partitions\[0\]\.pkey: '0x0000' is not a partition key"),
    ({"pkey": "257"}, r"partitions\[0\]\.pkey: '257'"),
    ({"pkey": "0x0202"}, r"partitions\[1\]\.pkey: '0x202' is already partitions\[0\]'s"),
    ({"name": "Default"}, r"partitions\[0\]\.name: 'Default' is OpenSM's default partition"),
    ({"name": "a b"}, r"partitions\[0\]\.name: 'a b'"),
    ({"name": "a:b"}, r"partitions\[0\]\.name: 'a:b'"),
    ({"name": "a=0x1,"}, r"partitions\[0\]\.name"),
    ({"membership": "half"}, r"partitions\[0\]\.membership: 'half'"),
    ({"ipoib": False}, r"partitions\[0\]\.mtu: 5 sets the IPoIB broadcast group, but ipoib is false"),
    ({"sl": 16}, r"partitions\[0\]\.sl: 16"),
])
def test_one_wrong_partition_key_is_named(change, message):
    parts = [dict(MODEL_PARTITIONS[0], **change), MODEL_PARTITIONS[1]]
    with pytest.raises(FabricModelError, match=r"infiniband\." + message):
        rail_plan(model(parts), dict(ib_plans.HOSTS))


def test_control_the_same_model_loads():
    assert len(rail_plan(model(), dict(ib_plans.HOSTS))["fabrics"]["default"]["partitions"]) == 2


def test_partitions_on_a_roce_fabric_are_refused():
    raw = model()
    raw["addressing"] = {"mode": "exclusive", "supernet": "172.18.0.0/16", "rail_prefix": 24, "node_prefix": 27}
    control = dict(raw)
    del control["infiniband"]
    assert rail_plan(control, dict(ib_plans.HOSTS))["fabrics"]["default"]["mode"] == "exclusive"
    with pytest.raises(FabricModelError, match=r"infiniband: .* is set on a fabric in exclusive mode"):
        rail_plan(raw, dict(ib_plans.HOSTS))


def test_a_member_host_without_rails_fails_the_rendering():
    plan = rail_plan(model([dict(MODEL_PARTITIONS[0], hosts=["gpu09"])]), dict(ib_plans.HOSTS))
    with pytest.raises(Exception, match=r"partitions\[0\]\.hosts 'gpu09' has no rail"):
        opensm.partitions_text(plan, None, guids(plan))


def test_member_lids_from_the_subnet_and_a_port_not_in_it_left_out():
    plan = rail_plan(model(), dict(ib_plans.HOSTS))
    with open(os.path.join(HERE, "data", "ib", "ibnetdiscover-good.txt")) as handle:
        topo = parse_ibnetdiscover(handle.read())
    desired = opensm.desired_pkeys(plan, None, guids(plan))
    lids = opensm.member_lids(topo, list(desired) + ["0x0002c903009999ff"])
    assert sorted(lids) == sorted(desired) and lids["0x0002c90300100011"] == 7
    result = opensm.compare_pkeys(desired, {})
    assert result["summary"]["by_kind"] == {"unread": 8}


def test_sminfo_names_the_sm_port_and_other_text_is_refused():
    from ansible_collections.ainet.fabric.plugins.module_utils.cabling.ib_parse import parse_sminfo
    from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
    text = "sminfo: sm lid 1 sm guid 0x2c90400000100, activity count 1180 priority 0 state 3 SMINFO_MASTER\n"
    assert parse_sminfo(text) == {"lid": 1, "guid": "0x0002c90400000100"}
    with pytest.raises(FabricError, match="not sminfo output"):
        parse_sminfo("ibwarn: [1] mad_rpc: _do_madrpc failed; dport (Lid 1)\nsminfo: iberror: failed: query\n")
