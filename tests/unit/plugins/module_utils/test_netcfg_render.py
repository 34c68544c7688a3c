# -*- coding: utf-8 -*-
"""Golden-file tests of the persistent configuration renderers.

Regenerate after an intended change with: AINET_UPDATE_GOLDEN=1 pytest tests/unit
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils import netcfg_render
from ansible_collections.ainet.fabric.plugins.module_utils.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.rail_plan import rail_addresses

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


def rendered(case, renderer):
    raw = CASES[case]
    rails = [dict(e, interface=n) for e, n in zip(rail_addresses(raw, 2), ["ens6f0np0", "ens6f1np1"])]
    files = netcfg_render.render(renderer, load_cluster(raw), rails)
    text = []
    for path, (content, mode) in sorted(files.items()):
        text.append("==> %s (%s)\n%s" % (path, mode, content))
    return "".join(text)


@pytest.mark.parametrize("renderer", netcfg_render.RENDERERS)
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
