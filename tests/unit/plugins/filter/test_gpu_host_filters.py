# -*- coding: utf-8 -*-
"""The gpu_host filter (plugins/filter/gpu_host.py) on the registered results of two generations: a group that
disagrees is reported, one that agrees is not. Controller-side (the filter imports ansible-core's plugin base), so
outside tests/unit/plugins/modules, which ``ansible-test units`` runs with nothing of ansible-core but
``ansible.module_utils``; the nodes are test_gpu_host_operator's recorded GPUs."""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.filter.gpu_host import gpu_operator_group
from ansible_collections.ainet.fabric.plugins.module_utils.host import gpu_host_state as lib
from ansible_collections.ainet.fabric.tests.unit.plugins.modules.test_gpu_host_operator import H100, V100, gpu, node


def test_the_group_filter_takes_the_registered_results():
    one = lib.operator_values(node(gpu(H100)))
    assert gpu_operator_group({"gpu01": one, "gpu02": lib.operator_values(node(gpu(V100)))})["conflicts"]
    assert gpu_operator_group({"gpu01": one, "gpu02": one})["conflicts"] == []
