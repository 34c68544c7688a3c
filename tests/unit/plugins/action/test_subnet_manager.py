# -*- coding: utf-8 -*-
"""ainet.fabric.subnet_manager (the action): render from the model and the subnet read, verify the tables read
(samples recorded from the ibsim lab: module_utils/data/ib/ORIGIN.md)."""

from __future__ import annotations

import os
import sys
from unittest import mock

from ansible_collections.ainet.fabric.plugins.action import subnet_manager

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "module_utils", "data", "ib")
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "lab"))
import ib_plans  # noqa: E402  pylint: disable=wrong-import-position

SMINFO = "sminfo: sm lid 1 sm guid 0x2c90400000100, activity count 1180 priority 0 state 3 SMINFO_MASTER\n"


def sample(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def model(**part):
    raw = ib_plans.lab_model()
    raw["infiniband"] = {"partitions": [dict({"name": "compute", "pkey": "0x0101", "mtu": 5}, **part),
                                        {"name": "storage", "pkey": "0x0202", "hosts": ["gpu01", "gpu02"],
                                         "membership": "limited", "ipoib": False}]}
    return raw


def run(**args):
    task = mock.MagicMock(args=dict(dict(cluster=model(), fabric="default", ibnetdiscover=sample(
        "ibnetdiscover-good.txt"), sminfo=SMINFO, nodes=dict((h, {"node_id": i}) for h, i in ib_plans.HOSTS.items())),
        **args), async_val=0, check_mode=False, diff=True, action="ainet.fabric.subnet_manager")
    plugin = subnet_manager.ActionModule(task, mock.MagicMock(), mock.MagicMock(), None, None)
    return plugin.run(task_vars={})


def test_render_from_the_model():
    result = run()
    assert not result.get("failed"), result
    assert result["partitions_text"].startswith("# ainet.fabric subnet_manager\n")
    assert "compute=0x0101, ipoib, mtu=5 :" in result["partitions_text"]
    assert "allow_both_pkeys" not in result["options_text"] and result["allow_both_pkeys"] is False
    assert result["lids"]["0x0002c90300100011"] == "7" and len(result["lids"]) == 8


def test_render_both_writes_allow_both_pkeys():
    result = run(cluster=model(membership="both"))
    assert "allow_both_pkeys TRUE" in result["options_text"] and result["allow_both_pkeys"] is True


def test_render_refuses_a_fabric_that_is_not_infiniband():
    result = run(fabric="storage")
    assert result["failed"] and "fabric 'storage' is not an infiniband fabric" in result["msg"]


def _read(guid, text, rc=0):
    return {"item": {"key": guid, "value": "7"}, "rc": rc, "stdout": text}


def test_verify_a_table_as_the_model_agrees_and_an_unread_one_never():
    good = _read("0x0002c90300100011", sample("smpquery-pkeys-gpu01-mlx5_0.txt"))
    result = run(state="verify", pkey_reads=[good], fail_on_findings=False)
    assert result["summary"]["ok"] == 1 and result["summary"]["by_kind"] == {"unread": 7}
    full = _read("0x0002c90300100011", sample("smpquery-pkeys-gpu01-mlx5_0-default-full.txt"))
    failed = run(state="verify", pkey_reads=[full])
    assert failed["failed"] and "holds 0xffff, wanted 0x7fff" in failed["msg"]
