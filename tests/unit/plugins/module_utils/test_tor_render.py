"""ToR configurations from the plan (SONiC config_db, Cumulus NVUE, Arista EOS through pyavd, Cisco NX-OS), proven by:

* a round trip: every rendered file, parsed back with ``parse_qos`` in the NOS's own format, agrees
  port by port with a host that roce_qos set up for the same profile (``lossless_diff`` finds
  nothing), and a switch rendered for another profile is caught;
* addresses read back from each rendered file equal the gateways of the plan's per-ToR view;
* golden files per NOS, addressing mode and family (``AINET_REGEN_GOLDEN=1`` rewrites them);
* the vendors' schemas: pyavd for EOS, the NVUE object model of the pinned Cumulus release,
  and the SONiC YANG models when ``AINET_SONIC_YANG_DIR`` names them; NX-OS, which has no offline
  schema, is read back by its own parser and checked for what Cisco's notes state.
"""

import copy
import json
import os
import re
import sys

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_check import lossless_check, same_threshold
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse import parse_qos
from ansible_collections.ainet.fabric.plugins.module_utils.model.qos_profile import resolve_profile
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.desired.roce_qos import desired, ets_layout
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import tor_intent
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_render import lacking, render_tor, render_tors, summary
from ansible_collections.ainet.fabric.plugins.module_utils.tor import nos_nxos
from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_cumulus import RELEASE, validate_nvue
from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_eos import eos_structured, validate_eos
from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_sonic import merged_config_db, validate_sonic
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import (
    RendererUnavailable, ValidatorUnavailable)


def disagreements(*args, **kwargs):
    """The disagreements alone (lossless_check), for the round trips that judge them, not the unchecked topics."""
    return lossless_check(*args, **kwargs)["disagreements"]


GOLDEN = os.path.join(os.path.dirname(__file__), "golden", "tors")
ADDRESSING = {
    "shared-v4": {"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24},
    "shared-v6": {"mode": "shared", "supernet": "fd00:17::/48", "rail_prefix": 64},
    "exclusive-v4": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 29},
    "exclusive-v6": {"mode": "exclusive", "supernet": "fd00:17::/48", "rail_prefix": 56, "node_prefix": 64},
    "p2p-v4": {"mode": "p2p", "supernet": "172.17.0.0/16", "rail_prefix": 24},
    "p2p-v6": {"mode": "p2p", "supernet": "fd00:17::/48", "rail_prefix": 64},
}
PRESETS = {"nvidia": {}, "sonic": {"preset": "sonic"}, "spiderpool": {"preset": "spiderpool"}}
PLATFORMS = ("sonic", "cumulus", "eos", "nxos")
PORTS = {"sonic": "Ethernet{node}", "cumulus": "swp{node}", "eos": "Ethernet{node}", "nxos": "Ethernet1/{node}"}


def plan_for(platform, mode, qos=None, **tor):
    cluster = {"name": "r", "rails": 2, "mtu": 9000, "addressing": ADDRESSING[mode], "qos": qos or {},
               "tors": [dict({"name": "leaf%d" % r, "rails": [r], "platform": platform,
                              "port_template": PORTS[platform]}, **tor) for r in (1, 2)]}
    return rail_plan(cluster, {"gpu%02d" % n: {"node_id": n, "rail_interfaces": ["ens1", "ens2"]} for n in (1, 2, 5)})


def host_as_roce_qos_leaves_it(profile, mtu):
    """A NIC after roce_qos: the profile's desired settings, ETS as its layout, the fabric MTU."""
    host = dict(desired(profile), mtu=mtu)
    layout = ets_layout(profile)
    if layout:
        host["ets"] = {tc: {"mode": layout[0][tc], "weight": layout[1][tc] if layout[0][tc] == "ets" else None}
                       for tc in range(8)}
        host["priority_to_queue"] = {p: p for p in range(8)}
    return host


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("mode", sorted(ADDRESSING))
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_port_agrees_with_the_host_after_a_round_trip(platform, mode, preset):
    plan = plan_for(platform, mode, PRESETS[preset])
    profile = plan["cluster"]["fabrics"]["default"]["qos"]
    host = host_as_roce_qos_leaves_it(profile, 9000)
    for name, tor in plan["tors"].items():
        rendered = render_tor(plan, name)
        facts = parse_qos(rendered["text"], rendered["format"])
        assert facts["problems"] == []
        assert sorted(facts["ports"]) == sorted(e["port"] for e in tor["ports"])
        for entry in tor["ports"]:
            assert disagreements(host, facts, entry["port"], profile) == [], (name, entry["port"])


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_switch_rendered_for_another_profile_is_caught(platform):
    plan = plan_for(platform, "exclusive-v4", {"preset": "spiderpool"})  # RoCE on DSCP 40 / priority 5
    nvidia = resolve_profile({}, "q")
    rendered = render_tor(plan, "leaf1")
    facts = parse_qos(rendered["text"], rendered["format"])
    codes = {i["code"] for i in disagreements(host_as_roce_qos_leaves_it(nvidia, 9000), facts,
                                              PORTS[platform].format(node=1), nvidia)}
    assert {"roce_dscp_lossy_on_switch", "pfc_mismatch", "profile_mismatch_switch"} <= codes


def _addresses(rendered):
    """(port, address) pairs read back from a rendered file by its own format's rules."""
    text, platform = rendered["text"], rendered["platform"]
    if platform == "sonic":
        config = json.loads(text)
        pairs = [tuple(k.split("|", 1)) for table in ("INTERFACE", "VLAN_INTERFACE")
                 for k in config.get(table, {}) if "|" in k]
    elif platform == "cumulus":
        import yaml
        body = yaml.safe_load(text)[0]["set"]
        pairs = [(port, address) for port, conf in body["interface"].items()
                 for address in (conf.get("ip") or {}).get("address", {})]
    else:
        indent = 2 if platform == "nxos" else 3   # NX-OS CLI: 2 spaces a level; EOS: 3
        pairs, port = [], None
        for line in text.splitlines():
            match = re.match(r"^interface (\S+)$", line)
            if match:
                port = match.group(1)
            match = re.match(r"^ {%d}ipv?6? address (\S+)$" % indent, line)
            if match:
                pairs.append((port, match.group(1)))
    return sorted(pairs)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("mode", sorted(ADDRESSING))
def test_addresses_are_the_plans_gateways(platform, mode):
    plan = plan_for(platform, mode)
    svi = {"sonic": "Vlan%d", "cumulus": "vlan%d", "eos": "Vlan%d", "nxos": "Vlan%d"}[platform]
    for name, tor in plan["tors"].items():
        if mode.startswith("shared"):
            want = [(svi % (1000 + s["rail"]), s["address"]) for s in tor["svis"]]
        else:
            want = [(e["port"], e["address"]) for e in tor["ports"]]
        assert _addresses(render_tor(plan, name)) == sorted(want)
        assert want and all(address for _port, address in want)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("mode", sorted(ADDRESSING))
def test_golden_files(platform, mode):
    plan = plan_for(platform, mode, port_speed="400G", port_fec="rs")
    rendered = render_tor(plan, "leaf1")
    # .txt: the NVUE files are YAML that ansible-lint must not take for playbooks.
    path = os.path.join(GOLDEN, "%s-%s.%s.txt" % (platform, mode, rendered["path"].rsplit(".", 1)[1]))
    if os.environ.get("AINET_REGEN_GOLDEN") == "1":
        with open(path, "w") as handle:
            handle.write(rendered["text"])
    with open(path) as handle:
        assert rendered["text"] == handle.read(), "render differs from %s (AINET_REGEN_GOLDEN=1 rewrites)" % path


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_second_render_is_byte_identical(platform):
    one = render_tor(plan_for(platform, "shared-v4"), "leaf2")["text"]
    assert one == render_tor(plan_for(platform, "shared-v4"), "leaf2")["text"]


def test_preset_none_renders_ports_and_addresses_without_qos():
    for platform in PLATFORMS:
        rendered = render_tor(plan_for(platform, "p2p-v4", {"preset": "none"}), "leaf1")
        assert not re.search(r"(?i)pfc|priority-flow|DSCP_TO_TC|qos", rendered["text"]), platform
        assert "172.17.0.0/31" in rendered["text"]


def test_tors_without_a_renderer_are_listed_not_rendered():
    cluster = {"name": "r", "rails": 3, "addressing": ADDRESSING["p2p-v4"],
               "tors": [{"name": "a", "rails": [1], "platform": "sonic"}, {"name": "b", "rails": [2], "platform": "os10"},
                        {"name": "c", "rails": [3]}]}
    plan = rail_plan(cluster, {"n1": {"node_id": 1}})
    result = render_tors(plan)
    assert [r["name"] for r in result["rendered"]] == ["a"]
    assert result["skipped"] == {"b": "platform os10 is read by the lossless check but not rendered",
                                 "c": "no platform set"}
    with pytest.raises(ValueError, match="ToR b: platform os10 has no renderer"):
        render_tor(plan, "b")


# ----------------------------------------------------------------------------- vendor schemas

@pytest.mark.parametrize("mode", sorted(ADDRESSING))
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_eos_structured_config_passes_pyavds_schema(mode, preset):
    plan = plan_for("eos", mode, PRESETS[preset], port_speed="800G", port_fec="rs")
    for name in plan["tors"]:
        assert validate_eos(eos_structured(tor_intent(plan, name))) == []


def test_pyavd_catches_a_broken_eos_structured_config():
    structured = eos_structured(tor_intent(plan_for("eos", "p2p-v4"), "leaf1"))
    structured["qos_profiles"][0]["priority_flow_control"]["priorities"][0]["priority"] = 9
    structured["ethernet_interfaces"][0]["speed"] = "forced 400gfull"
    problems = validate_eos(structured)
    assert sorted(p.split(":")[0] for p in problems) == ["ethernet_interfaces.0.speed",
                                                         "qos_profiles.0.priority_flow_control.priorities.0.priority"]


@pytest.mark.parametrize("mode", sorted(ADDRESSING))
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_nvue_body_passes_the_cumulus_object_model(mode, preset):
    plan = plan_for("cumulus", mode, PRESETS[preset], port_speed="400G", port_fec="rs")
    for name in plan["tors"]:
        assert validate_nvue(render_tor(plan, name)["data"], RELEASE) == []


def test_the_nvue_object_model_catches_a_broken_body():
    body = copy.deepcopy(render_tor(plan_for("cumulus", "p2p-v4"), "leaf1")["data"])
    body["interface"]["swp1"]["link"]["mtu"] = 9300
    body["interface"]["swp1"]["link"]["colour"] = "blue"
    body["qos"]["mapping"]["ainet-roce"]["trust"] = "dscp"
    body["qos"]["roce"]["enable"] = True          # a bare YAML `on` read as a boolean
    problems = validate_nvue(body, RELEASE)
    assert len(problems) == 4
    assert [p.split(":")[0] for p in problems] == ["interface.swp1.link.mtu", "interface.swp1.link.colour",
                                                   "qos.mapping.ainet-roce.trust", "qos.roce.enable"]


@pytest.mark.parametrize("mode", sorted(ADDRESSING))
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_nxos_cli_reads_back_whole_and_holds_the_roce_objects(mode, preset):
    plan = plan_for("nxos", mode, PRESETS[preset], port_speed="800G", port_fec="rs")
    profile = plan["cluster"]["fabrics"]["default"]["qos"]
    for name in plan["tors"]:
        item = render_tor(plan, name)
        problems, note = nos_nxos.validate(item, None, {})
        assert problems == [] and "no offline schema" in note
        text = item["text"]
        for line in ("class-map type qos match-all AINET_ROCE\n  match dscp %d\n" % profile["roce_dscp"],
                     "  class AINET_ROCE\n    set qos-group %d\n" % profile["roce_priority"],
                     "    pause pfc-cos %d\n" % profile["roce_priority"],
                     "system qos\n  service-policy type network-qos AINET_NQ\n"
                     "  service-policy type queuing output AINET_QUEUING\n",
                     "  priority-flow-control mode on\n  ", "  service-policy type qos input AINET_QOS\n",
                     "  speed 800000\n  fec rs-fec\n", "  no shutdown\n"):
            assert line in text, (line, text)
        assert re.search(r"\n    random-detect minimum-threshold \d+ kbytes maximum-threshold \d+ kbytes "
                         r"drop-probability \d+ weight 0 ecn\n", text)
        assert ("    priority level 1\n" in text) == bool(profile["cnp_strict"])
        assert ("priority-flow-control watch-dog-interval on\n" in text) == bool(profile["pfc_watchdog"])
        shares = [int(w) for w in re.findall(r"bandwidth remaining percent (\d+)", text)]
        assert sum(shares) == 100 and len(shares) == (7 if profile["cnp_strict"] else 8)
        if mode.startswith("shared"):
            assert "feature interface-vlan\n" in text and re.search(r"\n  switchport access vlan 100[12]\n", text)
        else:
            assert "\n  no switchport\n" in text and "interface Vlan" not in text


def test_the_nxos_check_catches_an_undefined_class_and_a_layer_2_mtu():
    item = render_tor(plan_for("nxos", "shared-v4", port_mtu=9100), "leaf1")
    item = dict(item, text=item["text"].replace("class-map type qos match-all AINET_CNP\n  match dscp 48\n", ""))
    problems = nos_nxos.validate(item, None, {})[0]
    assert problems == [
        "read back by the nxos parser: policy-map type qos AINET_QOS (line 12): class-map type qos AINET_CNP is "
        "referenced but not defined",
        "interface Ethernet1/1: mtu 9100 on a layer-2 port, which NX-OS takes only at the default 1500 or the "
        "system jumbo MTU (9216); use port_mtu 9216",
        "interface Ethernet1/2: mtu 9100 on a layer-2 port, which NX-OS takes only at the default 1500 or the "
        "system jumbo MTU (9216); use port_mtu 9216",
        "interface Ethernet1/5: mtu 9100 on a layer-2 port, which NX-OS takes only at the default 1500 or the "
        "system jumbo MTU (9216); use port_mtu 9216"]


@pytest.mark.parametrize("value,kbytes", [(150000, 150), (1500000, 1500), (1048576, 1024), (2097152, 2048),
                                          (1000, 1), (300000, 300), (123456, 121)])
def test_nxos_ecn_thresholds_are_kbytes_the_lossless_check_agrees_with(value, kbytes):
    assert nos_nxos._kbytes(value) == kbytes
    assert same_threshold(kbytes * 1024, value)


def _sonic_device(rendered):
    """The rendered fragment merged into a minimal device config_db (SONiC ports need lanes and a speed)."""
    config = {"DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "hwsku": "Force10-S6000",
                                                "platform": "x86_64-kvm_x86_64-r0", "mac": "52:54:00:12:34:56",
                                                "type": "LeafRouter"}},
              "PORT": {port: {"lanes": "%d,%d,%d,%d" % tuple(range(4 * i + 1, 4 * i + 5)), "alias": "eth%d" % i,
                              "speed": "100000"}
                       for i, port in enumerate(rendered["data"]["PORT"])}}
    config = merged_config_db(config, rendered["data"])
    return config


SONIC_YANG = os.environ.get("AINET_SONIC_YANG_DIR")


@pytest.mark.skipif(not SONIC_YANG, reason="SONiC YANG check skipped: set AINET_SONIC_YANG_DIR to a directory with "
                    "sonic-buildimage's yang-models (no registry packages them; docs/tor-config.md)")
@pytest.mark.parametrize("mode", sorted(ADDRESSING))
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_sonic_config_db_passes_the_sonic_yang_models(mode, preset):
    plan = plan_for("sonic", mode, PRESETS[preset], port_speed="400G", port_fec="rs")
    for name in plan["tors"]:
        assert validate_sonic(_sonic_device(render_tor(plan, name)), SONIC_YANG) == []


@pytest.mark.skipif(not SONIC_YANG, reason="SONiC YANG check skipped: AINET_SONIC_YANG_DIR is not set")
@pytest.mark.parametrize("mutate,message", [
    (lambda c: c["PORT_QOS_MAP"]["Ethernet1"].update(pfc_enable="3,9"), "does not conform"),
    (lambda c: c["DSCP_TO_TC_MAP"]["AINET"].update({"64": "1"}), "Invalid DSCP"),
    (lambda c: c["PORT"]["Ethernet1"].update(bogus="1"), 'Node "bogus" not found'),
    (lambda c: c["PORT_QOS_MAP"]["Ethernet1"].update(dscp_to_tc_map="NOPE"), 'Invalid leafref value "NOPE"'),
    (lambda c: c.update(NOT_A_TABLE={"x": {}}), "NOT_A_TABLE: no SONiC YANG model has this table"),
], ids=["pfc-9", "dscp-64", "unknown-field", "dangling-map", "unknown-table"])
def test_the_sonic_yang_models_catch_a_broken_config_db(mutate, message):
    config = _sonic_device(render_tor(plan_for("sonic", "p2p-v4"), "leaf1"))
    mutate(config)
    problems = validate_sonic(config, SONIC_YANG)
    assert len(problems) == 1 and message in problems[0], problems


def test_sonic_validation_without_models_says_what_is_missing(tmp_path):
    with pytest.raises(ValidatorUnavailable, match="SONiC YANG models|libyang"):
        validate_sonic({}, str(tmp_path / "nowhere"))


def test_eos_without_pyavd_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyavd", None)
    with pytest.raises(RendererUnavailable, match=r"needs pyavd on the controller: pip install 'pyavd=="):
        render_tor(plan_for("eos", "p2p-v4"), "leaf1")


# ----------------------------------------------------------------------------- the model's ToR keys

@pytest.mark.parametrize("tor,message", [
    ({"platform": "junos"}, r"tors\[0\]\.platform.*junos"),
    ({"platform": "eos", "port_mtu": 9216}, r"tors\[0\]\.port_mtu.*9216"),
    ({"platform": "sonic", "port_mtu": 9010}, r"tors\[0\]\.port_mtu.*9010.*below the fabric MTU 9000 plus"),
    ({"platform": "sonic", "port_speed": "300G"}, r"tors\[0\]\.port_speed.*300G"),
    ({"platform": "sonic", "port_fec": "baser"}, r"tors\[0\]\.port_fec.*baser"),
])
def test_bad_tor_keys_are_refused_naming_the_field(tor, message):
    cluster = {"name": "r", "rails": 1, "mtu": 9000, "addressing": ADDRESSING["p2p-v4"],
               "tors": [dict({"name": "leaf1", "rails": [1]}, **tor)]}
    with pytest.raises(FabricModelError, match=message):
        rail_plan(cluster, {"n1": {"node_id": 1}})


def test_an_ethernet_platform_on_an_infiniband_fabric_is_refused():
    cluster = {"name": "r", "rails": 1, "addressing": {"mode": "infiniband", "supernet": "10.0.0.0/16", "rail_prefix": 24},
               "tors": [{"name": "ib1", "rails": [1], "platform": "cumulus"}]}
    with pytest.raises(FabricModelError, match=r"tors\[0\]\.platform.*Ethernet NOS on an InfiniBand fabric"):
        rail_plan(cluster, {"n1": {"node_id": 1}})


def test_each_fabric_s_tors_get_their_own_profile_and_addresses():
    cluster = {"name": "two", "fabrics": {
        "compute": {"rails": 1, "addressing": ADDRESSING["p2p-v4"],
                    "tors": [{"name": "c1", "rails": [1], "platform": "sonic", "port_template": "Ethernet{node}"}]},
        "storage": {"rails": 1, "addressing": {"mode": "shared", "supernet": "10.9.0.0/16", "rail_prefix": 24},
                    "qos": {"preset": "spiderpool"},
                    "tors": [{"name": "s1", "rails": [1], "platform": "eos", "port_template": "Ethernet{node}"}]}}}
    plan = rail_plan(cluster, {"n1": {"node_id": 1}, "n2": {"node_id": 2}})
    compute = parse_qos(render_tor(plan, "c1")["text"], "sonic_config_db")
    storage_text = render_tor(plan, "s1")["text"]
    storage = parse_qos(storage_text, "eos")
    assert compute["ports"]["Ethernet1"]["pfc"] == [3] and storage["ports"]["Ethernet1"]["pfc"] == [5]
    assert "ip address 10.9.0.1/24" in storage_text and "interface Vlan1001" in storage_text
    assert tor_intent(plan, "c1")["qos"]["dscp_to_priority"] == {26: 3, 48: 6}


# ----------------------------------------------------------------------------- issue 29: one link per port

@pytest.mark.parametrize("platform", PLATFORMS + ("os10", None))
def test_two_links_on_one_port_are_refused_where_the_plan_is_made(platform):
    # swp{rail}{node} on a ToR serving rails 1 and 11: rail 1 node 12 and rail 11 node 2 are both "swp112". Field
    # review finding 12: the refusal sat in tor_intent, which render_tors never reaches for a platform it does not
    # render (os10, none) and which the lossless check's link_rows never calls; the plan itself refuses it now (the
    # expectation that rail_plan builds such a plan was that defect).
    cluster = {"name": "r", "rails": 11, "mtu": 9000, "addressing": ADDRESSING["p2p-v4"],
               "tors": [{"name": "leaf%d" % r, "rails": [r], "port_template": "swp{node}"} for r in range(2, 11)]
               + [{"name": "leafx", "rails": [1, 11], "platform": platform, "port_template": "swp{rail}{node}"}]}
    if platform is None:
        del cluster["tors"][-1]["platform"]
    nodes = {"gpu%02d" % n: {"node_id": n, "rail_interfaces": ["ens%d" % r for r in range(1, 12)]} for n in (2, 12)}
    with pytest.raises(FabricModelError) as info:
        rail_plan(cluster, nodes)
    assert str(info.value) == (
        "fabric_cluster.tors[9].port_template: 'swp{rail}{node}' puts rail 1 node 12 (gpu12 ens1) and rail 11 node 2 "
        "(gpu02 ens11) on the same port swp112 of ToR leafx. Fix: give each link its own port, e.g. with {rail} and "
        "{node} apart: swp{rail}s{node}")
    # control: the same ToR with the rail and node apart plans, one link per port
    cluster["tors"][-1]["port_template"] = "swp{rail}s{node}"
    plan = rail_plan(cluster, nodes)
    assert sorted(p["port"] for p in plan["tors"]["leafx"]["ports"]) == ["swp11s12", "swp11s2", "swp1s12", "swp1s2"]


def test_nxos_ecn_marking_never_drops_packets_that_are_not_ecn_capable():
    # issue 29: WRED ECN on NX-OS drops non-ECT packets on the marking curve; the nvidia preset marks on lossy queue 0,
    # which carries TCP. The render forwards non-ECN packets past WRED (nos_nxos [ECN]).
    text = render_tor(plan_for("nxos", "p2p-v6"), "leaf1")["text"]
    assert "\n%s\n" % nos_nxos.FORWARD_NON_ECN in text
    assert text.count(" weight 0 ecn\n") == 2  # queue 0 and queue 3 of the nvidia preset mark ECN-capable packets
    # the line is global, outside every policy, and the render still reads back whole
    assert "\n\ncongestion-control random-detect forward-nonecn\n" in text
    # issue 29 review: last among the global lines (NX-API stops at the first failing command, and the line is seen
    # only in a field config): nothing but blank lines between it and the first interface
    tail = text[text.index(nos_nxos.FORWARD_NON_ECN) + len(nos_nxos.FORWARD_NON_ECN):]
    assert tail.lstrip("\n").startswith("interface ")
    assert parse_qos(text, "nxos")["problems"] == []


# ----------------------------------------------------------------------------- the job's summary line

def _result(**more):
    tors = [{"name": "leaf1", "platform": "sonic", "path": "/o/tors/leaf1.json", "changed": True, "running": None},
            {"name": "leaf2", "platform": "cumulus", "path": "/o/tors/leaf2.yaml", "changed": False,
             "running": "/r/leaf2.yaml", "in_sync": True, "differences": 0, "stale_ports": [], "diff": []}]
    return dict({"tors": tors, "files": ["/o/tors/leaf1.json"], "skipped": {}, "notes": [], "unvalidated": {}}, **more)


def test_the_summary_of_a_clean_render_counts_what_was_written_and_checked():
    assert summary(_result(), True, "/o") == \
        "2 ToR configuration(s) in /o/tors, 1 changed; vendor schema checked on 2 of 2"
    assert summary(_result(), False, None) == \
        "2 ToR configuration(s) rendered (not written), 1 changed; vendor schema check off (tor_config_validate false)"
    assert lacking(_result()["tors"]) == []


def test_the_summary_names_what_was_not_checked_not_rendered_and_out_of_sync():
    result = _result(skipped={"leaf9": "no platform set", "leaf3": "platform os10 is read ..."},
                     notes=["leaf1: not validated (no running config_db)"],
                     unvalidated={"leaf1": "leaf1: not validated (no running config_db)"})
    behind = dict(result["tors"][1], in_sync=False, differences=3, stale_ports=["swp9"],
                  diff=["- swp9: still marked [ainet] but no longer in the plan"] + ["+ line %d" % n for n in range(60)])
    result["tors"][1] = behind
    assert summary(result, True, "/o") == (
        "2 ToR configuration(s) in /o/tors, 1 changed; vendor schema checked on 1 of 2, NOT checked: leaf1; "
        "not rendered: leaf9, leaf3; out of sync with the running configuration: leaf2; "
        "leaf1: not validated (no running config_db)")
    lines = lacking(result["tors"])
    assert lines[0] == "leaf2 (/r/leaf2.yaml): 3 difference(s), 1 stale port(s)"
    assert lines[1:] == behind["diff"][:50] and len(lines) == 51
