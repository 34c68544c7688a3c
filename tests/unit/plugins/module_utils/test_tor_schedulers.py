# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Egress schedulers of the Cumulus, EOS and NX-OS renders, read back by each NOS's own parser: every queue a profile
uses is scheduled under every preset (strict for the CNP queue where the profile wants it, DWRR bandwidth for the
others), the same way on every NOS; without ETS weights NVIDIA's `qos roce` split (Cumulus Linux 5.14 user guide,
"RDMA over Converged Ethernet - RoCE", "Default RoCE Configuration", "Port ETS": TC 6 (CNP) strict, TC 3 (RoCE) WRR
50 %, TC 0 (other traffic) WRR 50 %). Custom profiles, with and without ETS weights and a strict CNP queue, still
round-trip through the parsers with ``lossless_diff`` agreeing."""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.desired.roce_qos import desired, ets_layout
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_check import lossless_check
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse import parse_qos
from ansible_collections.ainet.fabric.plugins.module_utils.tor import nos_nxos
from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_cumulus import RELEASE, validate_nvue
from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_eos import eos_structured, validate_eos
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import tor_intent
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_render import render_tor


def disagreements(*args, **kwargs):
    """The disagreements alone (lossless_check), for the round trips that judge them, not the unchecked topics."""
    return lossless_check(*args, **kwargs)["disagreements"]


PORTS = {"cumulus": "swp{node}", "eos": "Ethernet{node}", "nxos": "Ethernet1/{node}"}
CUSTOM = {"preset": "custom", "roce_dscp": 24, "roce_priority": 4, "cnp_dscp": 46, "cnp_priority": 7}
# profile -> (qos, the scheduler every NOS must hold on the queues the profile uses; None: strict)
PROFILES = {
    "nvidia": ({}, {0: 50, 3: 50, 6: None}),
    "sonic": ({"preset": "sonic"}, {0: 25, 3: 25, 4: 25, 6: 25}),
    "spiderpool": ({"preset": "spiderpool"}, {0: 25, 5: 50, 6: 25}),
    "custom": (CUSTOM, {0: 50, 4: 50, 7: None}),
    "custom-cnp-not-strict": (dict(CUSTOM, cnp_strict=False), {0: 25, 4: 50, 7: 25}),
    "custom-ets": (dict(CUSTOM, ets_weights={0: 60, 4: 40}), {0: 60, 4: 40, 7: None}),
    "custom-ets-cnp-not-strict": (dict(CUSTOM, cnp_strict=False, ets_weights={0: 50, 4: 30, 7: 20}),
                                  {0: 50, 4: 30, 7: 20}),
    "custom-extra-lossless": (dict(CUSTOM, pfc_priorities=[2, 4], dscp_priorities={16: 2}),
                              {0: 50, 2: 25, 4: 25, 7: None}),
}


def plan_for(platform, qos):
    cluster = {"name": "r", "rails": 1, "mtu": 9000, "qos": qos,
               "addressing": {"mode": "p2p", "supernet": "172.17.0.0/16", "rail_prefix": 24},
               "tors": [{"name": "leaf1", "rails": [1], "platform": platform, "port_template": PORTS[platform]}]}
    return rail_plan(cluster, {"gpu%02d" % n: {"node_id": n, "rail_interfaces": ["ens1"]} for n in (1, 2)})


@pytest.mark.parametrize("platform", sorted(PORTS))
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_queue_the_profile_uses_is_scheduled_alike_on_every_nos(platform, name):
    qos, want = PROFILES[name]
    plan = plan_for(platform, qos)
    rendered = render_tor(plan, "leaf1")
    facts = parse_qos(rendered["text"], rendered["format"])
    assert facts["problems"] == []
    intent = tor_intent(plan, "leaf1")["qos"]
    used = sorted({0} | set(intent["dscp_to_priority"].values()))
    assert sorted(want) == used
    for port, settings in facts["ports"].items():
        ets = settings["ets"] or {}
        have = {queue: (ets.get(queue) or {}).get("mode") for queue in used}
        assert have == {q: "strict" if w is None else "ets" for q, w in want.items()}, (port, ets)
        assert {q: ets[q]["weight"] for q in used if want[q] is not None} == \
            {q: w for q, w in want.items() if w is not None}, (port, ets)


@pytest.mark.parametrize("platform", sorted(PORTS))
@pytest.mark.parametrize("name", sorted(n for n in PROFILES if n.startswith("custom")))
def test_custom_profiles_round_trip_with_lossless_diff_agreeing(platform, name):
    plan = plan_for(platform, PROFILES[name][0])
    profile = plan["cluster"]["fabrics"]["default"]["qos"]
    host = dict(desired(profile), mtu=9000)
    layout = ets_layout(profile)
    if layout:
        host["ets"] = {tc: {"mode": layout[0][tc], "weight": layout[1][tc] if layout[0][tc] == "ets" else None}
                       for tc in range(8)}
        host["priority_to_queue"] = {p: p for p in range(8)}
    rendered = render_tor(plan, "leaf1")
    facts = parse_qos(rendered["text"], rendered["format"])
    assert facts["problems"] == []
    for port in facts["ports"]:
        assert not disagreements(host, facts, port, profile), port


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_profile_passes_the_vendor_checks(name):
    qos = PROFILES[name][0]
    assert validate_nvue(render_tor(plan_for("cumulus", qos), "leaf1")["data"], RELEASE) == []
    assert validate_eos(eos_structured(tor_intent(plan_for("eos", qos), "leaf1"))) == []
    assert nos_nxos.validate(render_tor(plan_for("nxos", qos), "leaf1"), None, {})[0] == []


GOLDEN = os.path.join(os.path.dirname(__file__), "golden", "tors")


@pytest.mark.parametrize("platform", sorted(PORTS))
@pytest.mark.parametrize("name", ["sonic", "spiderpool", "custom"])
def test_preset_golden_files(platform, name):
    """The whole render of the presets other than ``nvidia`` (test_tor_render's golden files hold ``nvidia``)."""
    rendered = render_tor(plan_for(platform, PROFILES[name][0]), "leaf1")
    path = os.path.join(GOLDEN, "%s-p2p-v4-%s.%s.txt" % (platform, name, rendered["path"].rsplit(".", 1)[1]))
    if os.environ.get("AINET_REGEN_GOLDEN") == "1":
        with open(path, "w") as handle:
            handle.write(rendered["text"])
    with open(path) as handle:
        assert rendered["text"] == handle.read(), "render differs from %s (AINET_REGEN_GOLDEN=1 rewrites)" % path
