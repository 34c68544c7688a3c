# -*- coding: utf-8 -*-
"""The workload filters (plugins/filter/workload.py) as the roles call them: the arguments reach the library
(module_utils/workload), what it returns comes back. Controller-side (the filters import ansible-core's plugin
base), so outside tests/unit/plugins/module_utils, which ``ansible-test units`` runs with nothing of ansible-core
but ``ansible.module_utils``."""

from __future__ import annotations

import os

from ansible_collections.ainet.fabric.plugins.filter.workload import nccl_settings as nccl_filter
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse import parse_rdma

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "module_utils", "data", "rdma")


def test_the_nccl_filter_passes_the_range_and_returns_the_warnings():
    """The nccl role's filter on the two-device host: addr_range reaches the library, warnings come back (none: no
    topology recorded there), the conf carries the range."""
    with open(os.path.join(DATA, "show_gids", "sysfs-grep-synthetic.txt")) as handle:
        facts = parse_rdma(handle.read(), "show_gids")
    model = {"name": "r", "rails": 2, "addressing": {"mode": "shared", "supernet": "10.10.0.0/16", "rail_prefix": 24,
                                                     "host_offset": 2}}
    found = nccl_filter(model, 1, ["ens4", "eth05"], facts, "eno1", addr_range=True)
    assert found["warnings"] == [] and "NCCL_IB_ADDR_RANGE=10.10.0.0/16" in found["conf"].splitlines()
    assert "NCCL_IB_GID_INDEX" not in found["conf"]
