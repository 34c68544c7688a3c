"""Issue 29 acceptance matrix: for each stage of a RoCE packet's path (docs/lossless-qos.md, "How the check follows a
RoCE packet") and each NOS, one real-layout configuration whose only wrong stage is that one, next to its control.

Every case is one edit of a control that agrees. The wrong case must disagree with the code named, or mark the topic
unchecked: never an empty list. Each edit is asserted to apply (the old text is in the sample), so a sample that
changes under a case cannot turn it into a test that passes on nothing.

Controls (origins in data/qos/<nos>/ORIGIN.md):

* SONiC: the real sonic-utilities whole config_db ``filter_fdb_config_db.json`` with a running switch's additions
  (``test_lossless_check._sonic_whole``), host as ``roce_qos`` leaves it for the sonic preset.
* EOS: ``eos/leaf_whole_running_config.cfg`` Ethernet1 (``qos profile ROCE-LEAF`` of the public Arista RoCE leaf
  article), host NVIDIA's defaults (``test_lossless_check.HOST``).
* Cumulus: ``nvue/nv-config-roce-lossless.yaml.txt`` swp1 (``nv set qos roce``), same host, the nvidia profile.
* NX-OS: ``nxos/roce_pipeline_qos_group.cfg`` Ethernet1/51 (a public N9K RoCEv2 configuration's QoS), host on
  priority 5 (``test_lossless_check.NXOS_HOST``).
* OS10: ``os10/roce_dscp_tor_layout_ax.cfg`` ethernet1/1/1 (Dell's AX TOR1 layout with a DSCP trust map; ORIGIN.md),
  same host as EOS, the nvidia profile.
* Host: the real ``mlnx_qos -i eth4 --trust dscp`` output (netarbiter) with traffic class 6 strict, merged with the
  mlx5 sysfs files, against the Cumulus control.
"""

import copy
import json

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_check import CODES, TOPICS, lossless_check
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import merge_facts
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse import parse_qos

from ansible_collections.ainet.fabric.tests.unit.plugins.module_utils.test_lossless_check import (  # noqa: E402
    HOST, NXOS_HOST, _sonic_host, _sonic_whole, read_sample)

# -- the controls -------------------------------------------------------------------------------------------------

EOS = "eos/leaf_whole_running_config.cfg"
NVUE = "nvue/nv-config-roce-lossless.yaml.txt"
NXOS = "nxos/roce_pipeline_qos_group.cfg"
OS10 = "os10/roce_dscp_tor_layout_ax.cfg"
HOST_MLNX = "host/mlnx_qos-netarbiter-eth4.txt"
HOST_SYSFS = "host/sysfs-grep-synthetic.txt"
# what `mlnx_qos -i eth4 --tsa vendor,vendor,vendor,vendor,vendor,vendor,strict,vendor` prints for tc 6 (the CNP's)
TC6_VENDOR = "tc: 6 ratelimit: unlimited, tsa: vendor"
TC6_STRICT = "tc: 6 ratelimit: unlimited, tsa: strict"


def _edit(text, edits):
    for old, new in edits:
        assert old in text, "the sample no longer holds %r" % old
        text = text.replace(old, new, 1)
    return text


def _text_switch(fmt, sample, port, host, profile):
    def verdict(edits=(), host_change=None):
        if fmt == "nvue":
            pytest.importorskip("yaml")
        facts = parse_qos(_edit(read_sample(sample), edits), fmt)
        # a wrong case may carry the parser's own problem line (EOS: no-drop without `priority-flow-control on`)
        assert edits or facts["problems"] == [], facts["problems"]
        return lossless_check(dict(host, **(host_change or {})), facts, port, profile)
    return verdict


def _sonic(profile="sonic", cnp_strict_queue=False):
    def verdict(edit=None, host_change=None):
        data = _sonic_whole()
        if cnp_strict_queue:   # the CNP's queue 6 strict (a SCHEDULER of type STRICT), as test_lossless_check's control
            data["SCHEDULER"]["strict"] = {"type": "STRICT"}
            data["QUEUE"]["Ethernet4|6"] = {"scheduler": "strict"}
        if edit:
            edit(data)
        facts = parse_qos(json.dumps(data), "sonic_config_db")
        assert facts["problems"] == [], facts["problems"]
        host = dict(_sonic_host(), **(host_change or {}))
        return lossless_check(host, facts, "Ethernet4", profile)
    return verdict


def _host(mlnx=HOST_MLNX, port="ens1f0np0"):
    def verdict(edits=(), sysfs_edits=(), host_change=None):
        pytest.importorskip("yaml")
        text = _edit(read_sample(mlnx), edits)
        if mlnx == HOST_MLNX:
            text = _edit(text, [(TC6_VENDOR, TC6_STRICT)])
        facts = merge_facts(parse_qos(text, "mlnx_qos", port=port),
                            parse_qos(_edit(read_sample(HOST_SYSFS), sysfs_edits), "sysfs", port=port))
        assert facts["problems"] == [], facts["problems"]
        switch = parse_qos(read_sample(NVUE), "nvue")
        return lossless_check(facts, switch, "swp1", "nvidia", port)
    return verdict


CONTROLS = {
    "sonic": _sonic(),
    "sonic-noprofile": _sonic(profile=None, cnp_strict_queue=True),
    "eos": _text_switch("eos", EOS, "Ethernet1", HOST, None),
    "nvue": _text_switch("nvue", NVUE, "swp1", HOST, "nvidia"),
    "nxos": _text_switch("nxos", NXOS, "Ethernet1/51", NXOS_HOST, None),
    "os10": _text_switch("os10", OS10, "ethernet1/1/1", HOST, "nvidia"),
    "host": _host(),
}
EOS_ECN = "random-detect ecn minimum-threshold 256 kbytes maximum-threshold 512 kbytes"

# The topics each control leaves unchecked, and why (the "stays unproven" column of the report).
CONTROL_UNCHECKED = {
    "sonic": set(),
    "sonic-noprofile": {"cnp_host"},     # roce_qos's host for the sonic preset: its scheduler is not stated
    "eos": {"buffer_switch"},            # EOS states no ingress buffer in its config (qos_parse_eos)
    "nvue": set(), "nxos": set(),
    "os10": set(),
    "host": {"buffer_host"},             # the recorded mlnx_qos prints no receive buffers (4.x layout)
}


@pytest.mark.parametrize("nos", sorted(CONTROLS))
def test_control_every_stage_right_agrees(nos):
    verdict = CONTROLS[nos]()
    assert verdict["disagreements"] == [] and verdict["advice"] == []
    assert {u["topic"] for u in verdict["unchecked"]} == CONTROL_UNCHECKED[nos]


# -- one stage wrong ------------------------------------------------------------------------------------------------
# (control, stage, id, edit, expected): edit is a list of (old, new) text edits, or for SONiC a function of the
# config_db; expected: a code that must disagree, or "unchecked:<topic>".

NV_ECN = "{ecn: enable, min-threshold: 150000, max-threshold: 1500000, probability: 100}"


def _nvue_qos(flow):
    """One `qos` feature added beside `roce` in the control's `set` document (YAML flow style: the same mapping as
    the block style `nv config show` prints, one line per case)."""
    return [("      roce:\n", "      %s\n      roce:\n" % flow)]


def _sonic_set(table, key, **values):
    def edit(data):
        data[table].setdefault(key, {})
        for field, value in values.items():
            if value is None:
                data[table][key].pop(field)
            else:
                data[table][key][field] = value
    return edit


CASES = [
    # ---- SONiC (qosorch.cpp: dscp_to_tc_map, pfc_enable, QUEUE wred_profile / scheduler) ----
    ("sonic", "classification/trust", "no-dscp-to-tc-map",
     _sonic_set("PORT_QOS_MAP", "Ethernet4", dscp_to_tc_map=None), "trust_mismatch"),
    ("sonic", "classification/dscp-to-tc", "dscp3-to-tc1",
     lambda d: d["DSCP_TO_TC_MAP"]["AZURE"].update({"3": "1"}), "roce_dscp_lossy_on_switch"),
    # a DSCP the map does not place goes to the port's default TC (SAI_PORT_ATTR_QOS_DEFAULT_TC, 0): class-default
    ("sonic", "classification/class-default", "dscp3-unmapped",
     lambda d: d["DSCP_TO_TC_MAP"]["AZURE"].pop("3"), "roce_dscp_lossy_on_switch"),
    ("sonic", "pfc/enable", "pfc-enable-4-only",
     _sonic_set("PORT_QOS_MAP", "Ethernet4", pfc_enable="4", pfcwd_sw_enable="4"), "pfc_mismatch"),
    ("sonic", "egress/ecn", "queue3-no-wred-profile",
     _sonic_set("QUEUE", "Ethernet4|3", wred_profile=None), "profile_mismatch_switch"),
    ("sonic", "egress/ecn", "wred-ecn-none",
     lambda d: d["WRED_PROFILE"]["AZURE_LOSSLESS"].update(ecn="ecn_none"), "profile_mismatch_switch"),
    # SAI saiwred.h: SAI_ECN_MARK_MODE_YELLOW "enable ECN marking for yellow color. Green and red are disabled";
    # RoCE is not metered, so its packets are green and never marked
    ("sonic", "egress/ecn", "wred-ecn-yellow-only",
     lambda d: d["WRED_PROFILE"]["AZURE_LOSSLESS"].update(ecn="ecn_yellow"), "profile_mismatch_switch"),
    ("sonic-noprofile", "egress/ecn", "wred-ecn-yellow-only",
     lambda d: d["WRED_PROFILE"]["AZURE_LOSSLESS"].update(ecn="ecn_yellow_red"), "ecn_off_on_switch"),
    ("sonic", "egress/ecn-threshold", "green-max-1MiB",
     lambda d: d["WRED_PROFILE"]["AZURE_LOSSLESS"].update(green_max_threshold="1048576"), "profile_mismatch_switch"),
    ("sonic-noprofile", "egress/scheduler", "cnp-queue6-dwrr",
     lambda d: d["QUEUE"]["Ethernet4|6"].update(scheduler="scheduler.0"), "cnp_not_strict_on_switch"),

    # ---- Arista EOS (qos trust, qos map dscp, service-profile PFC, uc-tx-queue) ----
    ("eos", "classification/trust", "trust-cos",
     [("   qos trust dscp\n", "   qos trust cos\n")], "trust_mismatch"),
    ("eos", "classification/dscp-to-tc", "dscp26-to-tc1",
     [("qos map dscp 26 to traffic-class 3", "qos map dscp 26 to traffic-class 1")], "roce_dscp_lossy_on_switch"),
    ("eos", "pfc/enable", "no-drop-priority-4",
     [("priority-flow-control priority 3 no-drop", "priority-flow-control priority 4 no-drop")], "pfc_mismatch"),
    ("eos", "pfc/enable", "pfc-not-on",
     [("   priority-flow-control on\n", "")], "pfc_mismatch"),
    ("eos", "egress/queue", "tc3-to-tx-queue-4",
     [("qos map dscp 48 to traffic-class 6\n", "qos map dscp 48 to traffic-class 6\nqos map traffic-class 3 to "
                                               "tx-queue 4\n")], "ecn_off_on_switch"),
    ("eos", "egress/ecn", "no-random-detect",
     [("      " + EOS_ECN + " max-mark-probability 100 weight 0\n", "")], "ecn_off_on_switch"),
    # egress/ecn-threshold: test_lossless_check.test_eos_ecn_thresholds_compare_in_eos_units (bytes, kbytes, mbytes;
    # segments / milliseconds unchecked)
    ("eos", "egress/scheduler", "cnp-queue6-not-strict",
     [("   uc-tx-queue 6\n      priority strict\n", "   uc-tx-queue 6\n      no priority\n      bandwidth percent 5\n")],
     "cnp_not_strict_on_switch"),

    # ---- Cumulus NVUE (nv set qos mapping / pfc / traffic-pool / congestion-control / egress-scheduler) ----
    ("nvue", "classification/trust", "trust-l2",
     _nvue_qos("mapping: {default-global: {trust: l2}}"), "trust_mismatch"),
    ("nvue", "classification/dscp-to-sp", "dscp26-to-sp1",
     _nvue_qos("mapping: {default-global: {dscp: {'26': {switch-priority: 1}}}}"), "roce_dscp_lossy_on_switch"),
    # SP 3 stated in default-lossy (the layout of the "Change RoCE Configuration" commands of the Cumulus RoCE page,
    # nvue/ORIGIN.md): a switch priority sits in one pool, so qos roce's lossless buffer no longer covers it
    ("nvue", "buffer/lossless-pool", "sp3-in-default-lossy",
     _nvue_qos("traffic-pool: {default-lossy: {memory-percent: 40, switch-priority: {'0': {}, '3': {}}}}"),
     "no_lossless_buffer_on_switch"),
    ("nvue", "pfc/enable", "pfc-sp4",
     _nvue_qos("pfc: {default-global: {switch-priority: {'4': {}}}}"), "pfc_mismatch"),
    ("nvue", "egress/queue", "sp3-to-tc1",
     _nvue_qos("egress-queue-mapping: {default-global: {switch-priority: {'3': {traffic-class: 1}}}}"),
     "ecn_off_on_switch"),
    ("nvue", "egress/ecn", "tc3-ecn-disable",
     _nvue_qos("congestion-control: {default-global: {traffic-class: {'0': %s, '3': {ecn: disable}}}}" % NV_ECN),
     "ecn_off_on_switch"),
    ("nvue", "egress/ecn-threshold", "tc3-min-300000",
     _nvue_qos("congestion-control: {default-global: {traffic-class: {'0': %s, '3': %s}}}"
               % (NV_ECN, NV_ECN.replace("150000", "300000"))), "profile_mismatch_switch"),
    ("nvue", "egress/scheduler", "tc6-dwrr",
     _nvue_qos("egress-scheduler: {default-global: {traffic-class: {'0': {mode: dwrr, bw-percent: 50}, "
               "'3': {mode: dwrr, bw-percent: 40}, '6': {mode: dwrr, bw-percent: 10}}}}"), "cnp_not_strict_on_switch"),

    # ---- Cisco NX-OS (class-map type qos, set qos-group, priority-flow-control mode, queuing policy) ----
    ("nxos", "classification/trust", "classes-match-cos",
     [("  match dscp 48\n", "  match cos 6\n"), ("  match dscp 26\n", "  match cos 5\n")], "trust_mismatch"),
    ("nxos", "classification/dscp-to-qos-group", "roce-set-qos-group-4",
     [("    set qos-group 5\n", "    set qos-group 4\n")], "roce_dscp_lossy_on_switch"),
    ("nxos", "classification/class-default", "roce-class-matches-dscp-24",
     [("  match dscp 26\n", "  match dscp 24\n")], "roce_dscp_lossy_on_switch"),
    ("nxos", "pfc/mode", "mode-off",
     [("  priority-flow-control mode on\n", "  priority-flow-control mode off\n")], "pfc_mismatch"),
    ("nxos", "egress/ecn", "wred-without-ecn",
     [(" weight 0 ecn\n", " weight 0\n")], "ecn_off_on_switch"),
    ("nxos", "egress/scheduler", "cnp-queue6-bandwidth",
     [("  class type queuing c-out-8q-q6\n    priority level 1\n",
       "  class type queuing c-out-8q-q6\n    bandwidth remaining percent 10\n")], "cnp_not_strict_on_switch"),

    # ---- Dell OS10 (trust dscp-map, network-qos pause, wred ecn, queuing priority) ----
    ("os10", "classification/trust", "no-trust-map",
     [("system qos\n trust-map dscp roce_dscp_map\n", "system qos\n")], "trust_mismatch"),
    ("os10", "classification/dscp-to-tc", "dscp26-to-qos-group-1",
     [(" qos-group 3 dscp 26\n", " qos-group 1 dscp 26\n")], "roce_dscp_lossy_on_switch"),
    ("os10", "classification/class-default", "dscp26-unmapped",
     [(" qos-group 3 dscp 26\n", " qos-group 3 dscp 24\n")], "roce_dscp_lossy_on_switch"),
    ("os10", "buffer/lossless-pg", "pause-class-qos-group-5",
     [("class-map type network-qos RoceData\n match qos-group 3\n",
       "class-map type network-qos RoceData\n match qos-group 5\n")], "no_lossless_buffer_on_switch"),
    ("os10", "pfc/enable", "pfc-cos-4",
     [("  pfc-cos 3\n", "  pfc-cos 4\n")], "pfc_mismatch"),
    ("os10", "pfc/enable", "mode-not-on",
     [(" priority-flow-control mode on\n", "")], "pfc_mismatch"),
    ("os10", "egress/queue", "qos-group-3-to-queue-1",
     [(" queue 0 qos-group 0-2,4-5,7\n queue 3 qos-group 3\n", " queue 0 qos-group 0-2,4-5,7\n queue 1 qos-group 3\n")],
     "ecn_off_on_switch"),
    ("os10", "egress/ecn", "wred-without-ecn",
     [(" drop-probability 100\n random-detect ecn\n", " drop-probability 100\n")], "ecn_off_on_switch"),
    ("os10", "egress/ecn-threshold", "min-300-kb",
     [("minimum-threshold 150 maximum", "minimum-threshold 300 maximum")], "profile_mismatch_switch"),
    ("os10", "egress/scheduler", "cnp-queue6-bandwidth",
     [(" class Q6\n  priority\n", " class Q6\n  bandwidth percent 10\n")], "cnp_not_strict_on_switch"),

    # ---- host (mlnx_qos, mlx5 sysfs) ----
    ("host", "classification/trust", "trust-pcp",
     [("Priority trust state: dscp", "Priority trust state: pcp")], "trust_mismatch"),
    ("host", "classification/dscp-to-prio", "dscp26-to-prio5",
     [("prio:3 dscp:31,30,29,28,27,26,25,24,", "prio:3 dscp:31,30,29,28,27,25,24,"),
      ("prio:5 dscp:47,46,45,44,43,42,41,40,", "prio:5 dscp:47,46,45,44,43,42,41,40,26,")],
     "roce_dscp_not_lossless_on_host"),
    ("host", "pfc/enable", "pfc-4",
     [("enabled     0   0   0   1   0   0   0   0", "enabled     0   0   0   0   1   0   0   0")], "pfc_mismatch"),
    ("host", "egress/scheduler", "cnp-tc6-vendor",
     [], "cnp_not_strict_on_host"),
]


def _case_id(case):
    values = case.values if hasattr(case, "values") else case
    return "%s-%s-%s" % values[:3]


def _run(nos, edit, host_change=None):
    control = CONTROLS[nos]
    if nos.startswith("sonic"):
        return control(edit, host_change)
    if nos == "host":
        return control(edit, host_change=host_change)
    return control(edit, host_change)


@pytest.mark.parametrize("nos, stage, name, edit, expected", CASES, ids=[_case_id(c) for c in CASES])
def test_one_stage_wrong_disagrees_or_is_unchecked(nos, stage, name, edit, expected):
    if nos == "host" and name == "cnp-tc6-vendor":
        # the recorded output itself: every tc `tsa: vendor`, the CNP's tc 6 too
        pytest.importorskip("yaml")
        facts = merge_facts(parse_qos(read_sample(HOST_MLNX), "mlnx_qos", port="ens1f0np0"),
                            parse_qos(read_sample(HOST_SYSFS), "sysfs", port="ens1f0np0"))
        verdict = lossless_check(facts, parse_qos(read_sample(NVUE), "nvue"), "swp1", "nvidia", "ens1f0np0")
    else:
        verdict = _run(nos, edit)
    found = [i["code"] for i in verdict["disagreements"]]
    assert all(code in CODES for code in found)
    if expected.startswith("unchecked:"):
        topic = expected.split(":", 1)[1]
        assert topic in TOPICS and topic in {u["topic"] for u in verdict["unchecked"]}, verdict
    else:
        assert expected in found, verdict


# -- stages that need more than one edit of text ------------------------------------------------------------------

def test_host_priority_on_a_receive_buffer_without_room_has_no_lossless_buffer():
    # the real `mlnx_qos -i mce0` output (data/qos/host, Firmware controlled): PFC 3 on receive buffer 1 (130944 B);
    # wrong: priority 3 moved to buffer 2, whose size is 0 (what `mlnx_qos --prio2buffer 0,0,0,2,0,0,0,0` leaves)
    text = read_sample("host/mlnx_qos-mce0-firmware-dcbx.txt")
    row = "buffer      0   0   0   1   0   0   0   0"
    host = parse_qos(text, "mlnx_qos", port="mce0")
    wrong = parse_qos(_edit(text, [(row, row.replace("1", "2"))]), "mlnx_qos", port="mce0")
    switch = parse_qos(read_sample(NXOS), "nxos")
    # only the buffer stage is compared here: both host outputs have PFC 3 and the same everything else
    for facts, lossless in ((host, True), (wrong, False)):
        verdict = lossless_check(facts, switch, "Ethernet1/51")
        assert ("no_lossless_buffer_on_host" not in [i["code"] for i in verdict["disagreements"]]) is lossless
        assert "buffer_host" not in {u["topic"] for u in verdict["unchecked"]}


@pytest.mark.parametrize("tos, code", [("106", None), ("98", "tos_mismatch")])
def test_host_roce_tos_other_than_the_profiles_disagrees(tos, code):
    # sysfs: default_roce_tos 98 (DSCP 24) where traffic_class says 106 (DSCP 26)
    verdict = CONTROLS["host"](sysfs_edits=[("default_roce_tos:106", "default_roce_tos:%s" % tos)])
    found = [i["code"] for i in verdict["disagreements"]]
    assert (code in found) if code else found == []


@pytest.mark.parametrize("rp, code", [("1", None), ("0", "ecn_off_on_host")])
def test_host_dcqcn_reaction_point_off_for_the_roce_priority_disagrees(rp, code):
    verdict = CONTROLS["host"](sysfs_edits=[("roce_rp/enable/3:1", "roce_rp/enable/3:%s" % rp)])
    found = [i["code"] for i in verdict["disagreements"]]
    assert (code in found) if code else found == []


def test_nxos_pfc_mode_auto_against_a_real_os_controlled_nic():
    # the real netarbiter mlnx_qos output says "DCBX mode: OS controlled"; the NX-OS port left at mode auto (the
    # interface default) never runs PFC with it. Host moved to the NX-OS sample's priority 5 by its own tools'
    # edits (DSCP 26 on prio 5, PFC on 5), each a line mlnx_qos prints.
    text = _edit(read_sample(HOST_MLNX), [
        ("prio:3 dscp:31,30,29,28,27,26,25,24,", "prio:3 dscp:31,30,29,28,27,25,24,"),
        ("prio:5 dscp:47,46,45,44,43,42,41,40,", "prio:5 dscp:47,46,45,44,43,42,41,40,26,"),
        ("enabled     0   0   0   1   0   0   0   0", "enabled     0   0   0   0   0   1   0   0")])
    host = parse_qos(text, "mlnx_qos", port="eth4")
    on = parse_qos(read_sample(NXOS), "nxos")
    auto = parse_qos(_edit(read_sample(NXOS), [("  priority-flow-control mode on\n", "")]), "nxos")
    assert "pfc_not_negotiated" not in [i["code"] for i in lossless_check(host, on, "Ethernet1/51")["disagreements"]]
    assert "pfc_not_negotiated" in [i["code"] for i in lossless_check(host, auto, "Ethernet1/51")["disagreements"]]


def test_sonic_ecn_mark_mode_without_green_is_ecn_off_for_roce():
    # SAI saiwred.h (opencomputeproject/SAI inc/saiwred.h, sai_ecn_mark_mode_t): only GREEN, GREEN_YELLOW, GREEN_RED
    # and ALL mark green packets; RoCE is not metered, so green. The parser read every mode but ecn_none as marking.
    for mode, marks in (("ecn_all", True), ("ecn_green", True), ("ecn_green_yellow", True), ("ecn_green_red", True),
                        ("ecn_yellow", False), ("ecn_red", False), ("ecn_yellow_red", False), ("ecn_none", False)):
        data = _sonic_whole()
        data["WRED_PROFILE"]["AZURE_LOSSLESS"]["ecn"] = mode
        port = parse_qos(json.dumps(data), "sonic_config_db")["ports"]["Ethernet4"]
        assert port["ecn"][3]["enabled"] is marks, mode


def test_the_matrix_names_every_stage_for_every_nos():
    # a row lost from CASES would silently shrink the matrix: each NOS keeps its stages
    stages = {}
    for case in CASES:
        nos, stage = (case.values if hasattr(case, "values") else case)[:2]
        stages.setdefault(nos.split("-")[0], set()).add(stage.split("/")[0])
    for nos in ("sonic", "eos", "nvue", "nxos", "os10"):
        assert {"classification", "pfc", "egress"} <= stages[nos], nos
    assert copy.deepcopy(stages["host"]) >= {"classification", "pfc", "egress"}
