"""The lossless profile: presets, overrides, the one-line errors, and fabrics apart."""

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.model.qos_profile import describe, dscp_map, resolve_profile

F = "fabric_cluster.qos"


def test_default_is_nvidia_dscp26_priority3_cnp48_strict_tos106():
    p = resolve_profile({}, F)
    assert (p["preset"], p["roce_dscp"], p["roce_priority"], p["pfc_priorities"]) == ("nvidia", 26, 3, [3])
    assert (p["cnp_dscp"], p["cnp_priority"], p["cnp_strict"], p["roce_tos"]) == (48, 6, True, 106)
    assert p["ecn_queues"] == [0, 3] and (p["ecn_min_bytes"], p["ecn_max_bytes"]) == (150000, 1500000)
    assert p["ets_weights"] == {"0": 50, "3": 50} and p["dcqcn_priorities"] == [3]
    assert describe(p) == "nvidia: DSCP 26 -> priority 3 (PFC 3), CNP DSCP 48 -> 6 strict, ToS 106"


def test_sonic_preset_is_dscp3_and_4_lossless_with_watchdog():
    p = resolve_profile({"preset": "sonic"}, F)
    assert (p["roce_dscp"], p["pfc_priorities"], p["pfc_watchdog"], p["roce_tos"]) == (3, [3, 4], True, 14)
    assert (p["ecn_min_bytes"], p["ecn_max_bytes"]) == (1048576, 2097152)


def test_spiderpool_preset_is_dscp40_priority5():
    p = resolve_profile({"preset": "spiderpool"}, F)
    assert (p["roce_dscp"], p["roce_priority"], p["cnp_dscp"], p["cnp_priority"], p["roce_tos"]) == (40, 5, 48, 6, 162)


def test_overrides_and_strings_from_inventory():
    p = resolve_profile({"roce_dscp": "24", "roce_tos": 98, "pfc_priorities": ["3"], "ets_weights": {3: 60, "0": 40}}, F)
    assert (p["roce_dscp"], p["roce_tos"], p["pfc_priorities"], p["ets_weights"]) == (24, 98, [3], {"0": 40, "3": 60})


def test_none_and_infiniband_have_no_class():
    assert resolve_profile({"preset": "none"}, F) is None
    assert resolve_profile({}, F, "infiniband") is None


@pytest.mark.parametrize("raw, message", [
    ({"preset": "arista"}, r"fabric_cluster.qos.preset: 'arista' is not a known preset"),
    ({"preset": "custom", "roce_dscp": 26}, r"qos.roce_priority: .* is missing \(preset custom"),
    ({"roce_dscp": 64}, r"qos.roce_dscp: 64 is out of range. Fix: use 0..63"),
    ({"roce_priority": 4, "pfc_priorities": [3]}, r"qos.pfc_priorities: \[3\] does not include the RoCE priority 4"),
    ({"cnp_priority": 3}, r"qos.cnp_priority: 3 is a PFC \(lossless\) priority"),
    ({"cnp_dscp": 26}, r"qos.cnp_dscp: 26 equals the RoCE DSCP"),
    ({"roce_tos": 104 + 4}, r"qos.roce_tos: 108 carries DSCP 27, not the RoCE DSCP 26"),
    ({"ets_weights": {0: 50, 3: 40}}, r"qos.ets_weights: .* does not add up to 100 \(90\)"),
    ({"ets_weights": {0: 50, 6: 50}}, r"gives the CNP queue 6 an ETS weight"),
    ({"ecn_min_bytes": 2000000}, r"qos.ecn_min_bytes: 2000000 is above ecn_max_bytes 1500000"),
    ({"preset": "none", "roce_dscp": 26}, r"qos.roce_dscp: 26 is set while preset is none"),
    ({"pfc": [3]}, r"qos.pfc: \[3\] is not a known key"),
    ({"pfc_priorities": [3, 3]}, r"qos.pfc_priorities\[1\]: 3 is listed twice"),
])
def test_errors_name_the_field_and_value(raw, message):
    with pytest.raises(FabricModelError, match=message):
        resolve_profile(raw, F)


def test_infiniband_refuses_a_preset():
    with pytest.raises(FabricModelError, match=r"qos.preset: 'nvidia' is set on an InfiniBand fabric"):
        resolve_profile({"preset": "nvidia"}, F, "infiniband")


def _two(compute_qos, storage_qos):
    return {"name": "c", "fabrics": {
        "compute": {"rails": 2, "addressing": {"mode": "shared", "supernet": "10.60.0.0/16", "rail_prefix": 24},
                    "qos": compute_qos},
        "storage": {"rails": 1, "addressing": {"mode": "shared", "supernet": "10.70.0.0/16", "rail_prefix": 24},
                    "qos": storage_qos}}}


def test_two_fabrics_may_share_a_lossless_class():
    # Each fabric has its own NICs and ToRs (the model refuses sharing either), so the same DSCP and priority on
    # compute and storage never meet on one link: the default two-fabric model is accepted as it is.
    cluster = load_cluster(_two({}, {}))
    assert [f.qos["roce_priority"] for f in cluster.fabrics] == [3, 3]
    assert [f.qos["roce_dscp"] for f in cluster.fabrics] == [26, 26]
    cluster = load_cluster(_two({}, {"roce_priority": 2, "pfc_priorities": [2]}))
    assert [f.qos["roce_priority"] for f in cluster.fabrics] == [3, 2]
    # share_priority is still accepted (inventories that set it stay valid) and changes nothing.
    cluster = load_cluster(_two({"share_priority": True}, {"share_priority": True}))
    assert [f.qos["roce_priority"] for f in cluster.fabrics] == [3, 3]
    cluster = load_cluster(_two({}, {"preset": "spiderpool"}))
    assert cluster.to_dict()["fabrics"]["storage"]["qos"]["roce_dscp"] == 40


@pytest.mark.parametrize("preset", ["nvidia", "sonic", "spiderpool"])
def test_every_preset_maps_a_dscp_to_every_pfc_priority(preset):
    profile = resolve_profile({"preset": preset}, F)
    assert set(profile["pfc_priorities"]) <= set(dscp_map(profile).values()), profile


def test_the_sonic_preset_places_dscp_4_in_its_second_lossless_priority():
    profile = resolve_profile({"preset": "sonic"}, F)
    assert profile["pfc_priorities"] == [3, 4]
    assert dscp_map(profile) == {3: 3, 4: 4, 48: 6}


def test_a_pfc_priority_no_dscp_lands_in_is_refused():
    with pytest.raises(FabricModelError, match=r"qos.pfc_priorities: \[3, 4\] includes priority 4, which no DSCP "
                                               r"lands in .* map a DSCP to it with dscp_priorities, e.g. \{4: 4\}"):
        resolve_profile({"preset": "nvidia", "pfc_priorities": [3, 4]}, F)
    profile = resolve_profile({"preset": "nvidia", "pfc_priorities": [3, 4], "dscp_priorities": {34: 4}}, F)
    assert dscp_map(profile) == {26: 3, 34: 4, 48: 6}


def test_dscp_priorities_cannot_place_the_roce_or_cnp_dscp_again():
    with pytest.raises(FabricModelError, match=r"qos.dscp_priorities.26: 4 maps the RoCE DSCP 26 a second time"):
        resolve_profile({"preset": "nvidia", "dscp_priorities": {26: 4}}, F)
    with pytest.raises(FabricModelError, match=r"qos.dscp_priorities.48: 6 maps the CNP DSCP 48 a second time"):
        resolve_profile({"preset": "nvidia", "dscp_priorities": {48: 6}}, F)


def test_shape_errors_come_from_the_schema_all_at_once():
    raw = _two({"roce_dscp": "x", "cnp_priority": 9}, {"preset": "spiderpool"})
    with pytest.raises(Exception) as info:
        load_cluster(raw)
    text = str(info.value)
    assert "fabrics.compute.qos.roce_dscp: 'x' is not an integer" in text
    assert "fabrics.compute.qos.cnp_priority: 9 is above the maximum 7" in text
