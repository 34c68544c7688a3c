# -*- coding: utf-8 -*-
"""The controller side of the lossless load test (plugins/action/lossless_test.py) run in-process as Ansible runs
it, with the hosts' registered results in hostvars: the refusals, one step's ib_write_bw command lines, the runs
judged from recorded reads, and the report (the pages rendered by ``qos/load_report.py``)."""
from __future__ import annotations

import importlib
import json
import os
from unittest import mock

from ansible.errors import AnsibleAction

from ansible_collections.ainet.fabric.plugins.module_utils.qos import load_report
from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_read import read_links

from ansible_collections.ainet.fabric.tests.unit.plugins.modules.host_task import run_module

COLLECTION = "ansible_collections.ainet.fabric.plugins"
DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "module_utils", "data", "counters")
MODEL = {"name": "t", "rails": 2, "mtu": 9000, "management_networks": ["10.0.0.0/16"],
         "addressing": {"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24},
         "tors": [{"name": "leaf1", "rails": [1], "port_template": "Ethernet{node}", "platform": "sonic"},
                  {"name": "leaf2", "rails": [2], "port_template": "Ethernet{node}", "platform": "sonic"}],
         "qos": {"preset": "nvidia"}}
NODES = dict(("gpu0%d" % i, {"node_id": i, "rail_interfaces": ["eth0", "eth1"]}) for i in (1, 2, 3))
RDMA = dict((h, {"rails": [{"netdev": "eth0", "rdma_device": "mlx5_0", "port": 1, "gid_index": 3},
                           {"netdev": "eth1", "rdma_device": "mlx5_1" if h != "gpu02" else None, "port": 1,
                            "gid_index": 3 if h != "gpu02" else None}]}) for h in NODES)


def action(args, hostvars=None, check=False):
    module = importlib.import_module("%s.action.lossless_test" % COLLECTION)
    base = {"cluster": MODEL, "nodes": NODES, "hosts": sorted(NODES)}
    task = mock.MagicMock(args=dict(base, **args), async_val=0, check_mode=check, diff=False,
                          action="ainet.fabric.lossless_test", failed_when=[], until=[])
    plugin = module.ActionModule(task, mock.MagicMock(), mock.MagicMock(), None, None)
    try:
        return plugin.run(task_vars={"hostvars": hostvars or {}})
    except AnsibleAction as exc:  # ansible-core 2.19: a failure is raised with its result (plugin_utils/one_line.py)
        return exc.result


def test_no_lossless_profile_and_options_out_of_bounds_are_refused_in_one_line():
    result = action({"mode": "schedule", "cluster": dict(MODEL, qos={"preset": "none"})})
    assert result["failed"] and result["msg"].startswith("lossless_test: no fabric has a lossless profile")
    result = action({"mode": "schedule", "seconds": 900})
    assert result["failed"] and result["msg"].startswith("lossless_test_seconds: 900 is outside 1 to 300")
    result = action({"mode": "schedule", "tx_depth": 20000})
    assert result["failed"] and result["msg"].startswith("lossless_test_tx_depth: 20000 is outside 0")
    result = action({"mode": "schedule", "fail_on": ["broken"]})
    assert result["failed"] and "lossless_test_fail_on: broken is not a verdict" in result["msg"]


def test_schedule_counts_steps_and_names_the_refused_rails():
    rows = [{"fabric": "default", "rail": 2, "host": "gpu03", "host_port": "eth1", "tor": "leaf2",
             "switch_port": "Ethernet3", "status": "disagree", "disagreements": [{"code": "pfc_priorities"}]}]
    result = action({"mode": "schedule", "agreement": rows})
    assert (result["steps"], result["classes"], result["groups"], result["senders_per_incast"]) == (3, [3], 2, 2)
    assert result["traffic_classes"] == {"default 3": 106} and result["load_seconds"] == 30
    assert result["refused"] == ["default rail 2 is not loaded: its agreement check found 1 link(s) that disagree "
                                 "(gpu03 eth1 / leaf2 Ethernet3: pfc_priorities); fix them (playbooks/qos.yml, "
                                 "playbooks/tors.yml) and run playbooks/validate.yml"]


def test_a_step_gives_each_node_its_perftest_lines_on_the_rails_gid_and_traffic_class():
    hostvars = dict((h, {"__lossless_test_rdma": RDMA[h]}) for h in NODES)
    result = action({"mode": "step", "step": 1, "seconds": 5, "qps": 2, "rate_gbps": 40}, hostvars)
    assert result["steps"] == 3 and result["priority"] == 3 and result["round"] == 1
    rail1, rail2 = result["incasts"]
    assert (rail1["receiver"], rail1["senders"], rail1["tor_port"], rail1["skipped"]) == (
        "gpu01", ["gpu02", "gpu03"], "Ethernet1", None)
    # gpu02 has no RDMA device on rail 2: left out of that incast, which still runs with gpu03
    assert rail2["senders"] == ["gpu03"] and rail2["missing"] == ["gpu02"] and rail2["skipped"] is None
    servers = result["hosts"]["gpu01"]["servers"]
    assert [s["argv"] for s in servers][0] == [
        "timeout", "600", "ib_write_bw", "-d", "mlx5_0", "-i", "1", "-x", "3", "-p", "20000", "-D", "5", "-q", "2",
        "-s", "65536", "--tclass", "106", "-F", "--report_gbits"]
    # ports come from the schedule (gpu03 is the second sender of rail 2 even where gpu02 is left out)
    assert [s["port"] for s in servers] == [20000, 20001, 20101]
    client = result["hosts"]["gpu03"]["clients"][0]["argv"]
    assert client[-8:] == ["--report_gbits", "--rate_limit", "40", "--rate_limit_type", "SW", "--rate_units", "g",
                           "172.17.0.2"] and client[:2] == ["timeout", "65"]
    assert result["hosts"]["gpu02"]["links"] == [{"interface": "eth0", "rdma_device": "mlx5_0", "rdma_port": 1}]
    # a shorter send queue goes to the senders only
    short = action({"mode": "step", "step": 1, "tx_depth": 16, "qp_timeout": 20}, hostvars)["hosts"]
    assert short["gpu03"]["clients"][0]["argv"][-6:-1] == ["--report_gbits", "-t", "16", "-u", "20"]
    assert "-t" not in short["gpu01"]["servers"][0]["argv"]
    assert result["tors"] == ["leaf1", "leaf2"] and result["loaded"] == 2


def test_a_step_on_a_refused_rail_or_without_the_receivers_rdma_loads_nothing_there():
    hostvars = dict((h, {"__lossless_test_rdma": RDMA[h]}) for h in NODES)
    rows = [{"fabric": "default", "rail": 1, "host": "gpu01", "host_port": "eth0", "tor": "leaf1",
             "switch_port": "Ethernet1", "status": "disagree", "disagreements": [{"code": "pfc_priorities"}]}]
    result = action({"mode": "step", "step": 2, "agreement": rows}, hostvars)
    rail1, rail2 = result["incasts"]
    assert rail1["skipped"].startswith("default rail 1 is not loaded: its agreement check found 1 link(s)")
    assert rail2["receiver"] == "gpu02" and rail2["skipped"] == (
        "gpu02 eth1 has no RDMA device or no RoCE v2 GID for 172.17.1.3 (rdma_facts)")
    assert result["hosts"] == {} and result["loaded"] == 0
    assert action({"mode": "step", "step": 4}, hostvars)["msg"].startswith("lossless_test: step=4 is not a step")


def sysfs(root, when):
    base = root / "sys" / "class" / "infiniband" / "mlx5_0"
    (base / "ports" / "1" / "hw_counters").mkdir(parents=True)
    (root / "bus" / "mlx5_core").mkdir(parents=True)
    (base / "device").mkdir()
    (base / "device" / "driver").symlink_to(root / "bus" / "mlx5_core")
    with open(os.path.join(DATA, "hw_counters-mlx5-%s.txt" % when)) as handle:
        for line in handle:
            path, value = line.strip().rsplit(":", 1)
            (base / "ports" / "1" / "hw_counters" / path.rsplit("/", 1)[-1]).write_text(value + "\n")
    with open(os.path.join(DATA, "ethtool-cx6dx-%s.txt" % when)) as handle:
        ethtool = handle.read()
    return read_links([{"interface": "eth0", "rdma_device": "mlx5_0", "rdma_port": 1}],
                      lambda argv: (0, ethtool, ""), str(root))


def test_judge_makes_one_run_per_incast_from_the_receivers_reads_and_its_tor_port(tmp_path):
    hostvars = dict((h, {"__lossless_test_rdma": RDMA[h]}) for h in NODES)
    step = action({"mode": "step", "step": 1}, hostvars)
    hostvars["gpu01"].update(__lossless_test_before=sysfs(tmp_path / "b", "before"),
                             __lossless_test_after=sysfs(tmp_path / "a", "after"))
    # the recorded pair counts a host held back by the switch (rx_prio3_pause, rp_cnp_handled): a sender's evidence
    # (load_verdict.ROLE_CONGESTION); the receiver's link alone moved only the other way
    hostvars["gpu02"].update(__lossless_test_before=sysfs(tmp_path / "gpu02" / "b", "before"),
                             __lossless_test_after=sysfs(tmp_path / "gpu02" / "a", "after"))

    def tor_read(when):
        with open(os.path.join(DATA, "sonic-pfc-%s.txt" % when)) as pfc, \
                open(os.path.join(DATA, "sonic-queue-%s.txt" % when)) as queue:
            return [{"tor": "leaf1", "counters": {"sonic_pfc": pfc.read(), "sonic_queue": queue.read()}},
                    {"tor": "leaf2", "read_error": "ToR leaf2 could not be reached"}]
    # the recorded ToR reads name the receiver's port Ethernet8: the rail-1 incast is given that port here
    incasts = [dict(step["incasts"][0], tor_port="Ethernet8"), step["incasts"][1]]
    result = action({"mode": "judge", "incasts": incasts, "tor_before": tor_read("before"),
                     "tor_after": tor_read("after")}, hostvars)
    one, two = result["runs"]
    # the recorded queue table holds Ethernet8 only: the sender gpu02's port Ethernet2 is an unread drop stage, so the
    # class, clean where it was read, is inconclusive (review 40 D8), never lossless
    assert one["verdict"]["verdict"] == "inconclusive", one["verdict"]["classes"][0]["message"]
    assert {c["read"] for c in one["verdict"]["counters"]} == {"nic", "rdma", "tor_pfc", "tor_queue"}
    assert two["host_nic"] == "eth1" and two["verdict"] is None and "eth1 was not read" in two["skipped"]
    assert result["findings"][0].startswith("gpu01 eth0 (leaf1 Ethernet8, default rail 1) priority 3 round 1: "
                                            "inconclusive: Priority 3 cannot be shown lossless: a drop stage of the "
                                            "link was not read: sender gpu02 before: ToR sonic_queue of port Ethernet2")
    assert "none of 28 drop counters moved" in result["findings"][0]


CUMULUS = dict(MODEL, tors=[dict(t, platform="cumulus", port_template="swp{node}") for t in MODEL["tors"]])


def test_a_step_names_each_tor_s_ports_of_its_loaded_receivers_and_their_senders():
    hostvars = dict((h, {"__lossless_test_rdma": RDMA[h]}) for h in NODES)
    result = action({"mode": "step", "step": 1, "cluster": CUMULUS}, hostvars)
    # rail 2 runs without gpu02 (no RDMA device there): its port is not read
    assert result["tors"] == ["leaf1", "leaf2"]
    assert result["tor_ports"] == {"leaf1": ["swp1", "swp2", "swp3"], "leaf2": ["swp1", "swp3"]}
    assert [i["sender_ports"] for i in result["incasts"]] == [{"gpu02": "swp2", "gpu03": "swp3"}, {"gpu03": "swp3"}]
    rows = [{"fabric": "default", "rail": 1, "host": "gpu01", "host_port": "eth0", "tor": "leaf1",
             "switch_port": "swp1", "status": "disagree", "disagreements": [{"code": "pfc_priorities"}]}]
    refused = action({"mode": "step", "step": 1, "cluster": CUMULUS, "agreement": rows}, hostvars)
    assert refused["tors"] == ["leaf2"] and refused["tor_ports"] == {"leaf2": ["swp1", "swp3"]}


def test_a_step_waits_the_slowest_nos_s_counter_refresh_before_the_tors_read_after_the_load():
    hostvars = dict((h, {"__lossless_test_rdma": RDMA[h]}) for h in NODES)
    sonic = dict(MODEL, tors=[dict(t, platform="sonic", port_template="Ethernet{node}") for t in MODEL["tors"]])
    # SONiC polls its queue counters every 10 s by default (sonic-swss#483); Cumulus switchd its statistics every 2 s
    assert action({"mode": "step", "step": 1, "cluster": sonic}, hostvars)["tor_settle"] == 10
    assert action({"mode": "step", "step": 1, "cluster": CUMULUS}, hostvars)["tor_settle"] == 2
    assert action({"mode": "step", "step": 1, "cluster": sonic, "tor_settle": "3"}, hostvars)["tor_settle"] == 3
    # auto: the role waits as long as the ToRs' configured poll intervals instead (their reads' settle)
    assert action({"mode": "step", "step": 1, "cluster": sonic}, hostvars)["tor_settle_auto"] is True
    assert action({"mode": "step", "step": 1, "cluster": sonic, "tor_settle": "3"}, hostvars)["tor_settle_auto"] is False
    refused = action({"mode": "step", "step": 1, "cluster": sonic, "tor_settle": "soon"}, hostvars)
    assert refused["failed"] and refused["msg"].startswith(
        "lossless_test_tor_settle_seconds: 'soon' is neither auto nor a number of seconds from 0 to 600")


def test_judge_reads_a_cumulus_tor_s_per_port_counters_for_the_receiver_s_port(tmp_path):
    hostvars = dict((h, {"__lossless_test_rdma": RDMA[h]}) for h in NODES)
    step = action({"mode": "step", "step": 1, "cluster": CUMULUS}, hostvars)
    hostvars["gpu01"].update(__lossless_test_before=sysfs(tmp_path / "b", "before"),
                             __lossless_test_after=sysfs(tmp_path / "a", "after"))
    # the recorded pair counts a host held back by the switch (rx_prio3_pause, rp_cnp_handled): a sender's evidence
    # (load_verdict.ROLE_CONGESTION); the receiver's link alone moved only the other way
    hostvars["gpu02"].update(__lossless_test_before=sysfs(tmp_path / "gpu02" / "b", "before"),
                             __lossless_test_after=sysfs(tmp_path / "gpu02" / "a", "after"))

    def tor_read(when, other):
        # what nos_cumulus.read_counters returns: {format: {port: text}}; the senders' ports swp2 and swp3 are read
        # in the step (nothing moves there), swp9 is another port of the switch
        with open(os.path.join(DATA, "nvue-qos-%s.txt" % when)) as qos, \
                open(os.path.join(DATA, "nvue-roce-%s.txt" % when)) as roce:
            qos, roce = qos.read(), roce.read()
        with open(os.path.join(DATA, "nvue-qos-before.txt")) as still_qos, \
                open(os.path.join(DATA, "nvue-roce-before.txt")) as still_roce:
            still_qos, still_roce = still_qos.read(), still_roce.read()
        return [{"tor": "leaf1", "counters": {
            "nvue_qos": {"swp1": qos, "swp2": still_qos, "swp3": still_qos, "swp9": other},
            "nvue_roce": {"swp1": roce, "swp2": still_roce, "swp3": still_roce, "swp9": other}}}]
    garbage = "Error: this port's read must not reach the receiver's verdict"
    result = action({"mode": "judge", "cluster": CUMULUS, "incasts": step["incasts"][:1],
                     "tor_before": tor_read("before", garbage), "tor_after": tor_read("after", garbage)}, hostvars)
    verdict = result["runs"][0]["verdict"]
    assert verdict["verdict"] == "lossless_under_load", verdict["classes"][0]["message"]
    assert {c["read"] for c in verdict["counters"]} == {"nic", "rdma", "tor_qos", "tor_roce"}
    assert not any("swp9" in p or "must not" in p for p in verdict["problems"]), verdict["problems"]
    moved = {c["counter"] for c in verdict["counters"] if c["read"] == "tor_qos" and c["delta"]}
    assert "pfc-stats.3.tx-pause-frames" in moved


def test_judge_reads_the_senders_a_senders_own_drop_makes_the_run_lost_not_the_receivers(tmp_path):
    """Review 33: the step names each sender's interface; judge reads the senders' counters from their hostvars."""
    hostvars = dict((h, {"__lossless_test_rdma": RDMA[h]}) for h in NODES)
    step = action({"mode": "step", "step": 1}, hostvars)
    assert step["incasts"][0]["sender_interfaces"] == {"gpu02": "eth0", "gpu03": "eth0"}
    for host in ("gpu01", "gpu02", "gpu03"):
        hostvars[host].update(__lossless_test_before=sysfs(tmp_path / host / "b", "before"),
                              __lossless_test_after=sysfs(tmp_path / host / "a", "after"))
    incasts = [step["incasts"][0]]
    clean = action({"mode": "judge", "incasts": incasts}, hostvars)["runs"][0]
    assert clean["verdict"]["verdict"] == "lossless_under_load", clean["verdict"]["classes"][0]["message"]
    after = hostvars["gpu03"]["__lossless_test_after"]["interfaces"]["eth0"]
    after["ethtool"] = after["ethtool"].replace("rx_discards_phy: 0", "rx_discards_phy: 9")
    lost = action({"mode": "judge", "incasts": incasts}, hostvars)["runs"][0]
    assert lost["verdict"]["verdict"] == "lost" and lost["verdict"]["classes"][0]["placed_on"] == ["gpu03"]
    assert "gpu03 host NIC eth0 rx_discards_phy +9" in lost["verdict"]["classes"][0]["message"]


def test_an_incast_s_congestion_at_the_senders_ports_is_congestion_reached(tmp_path):
    """In an incast the switch pauses the senders: its PFC frames leave the senders' ports, not the receiver's. Here
    nothing moved on the receiver's link (its NIC, RDMA device and ToR port Ethernet0 read the same twice); the ToR
    sent 5,500 PFC pauses on priority 3 out of each sender's port (Ethernet4, Ethernet8: the recorded SONiC pair)."""
    hostvars = dict((h, {"__lossless_test_rdma": RDMA[h]}) for h in NODES)
    step = action({"mode": "step", "step": 1}, hostvars)
    hostvars["gpu01"].update(__lossless_test_before=sysfs(tmp_path / "gpu01" / "b", "before"),
                             __lossless_test_after=sysfs(tmp_path / "gpu01" / "a", "before"))
    for host in ("gpu02", "gpu03"):   # the senders' own counters did not move either
        hostvars[host].update(__lossless_test_before=sysfs(tmp_path / host / "b", "before"),
                              __lossless_test_after=sysfs(tmp_path / host / "a", "before"))

    def tor_read(when):   # the queue counters of the recording hold Ethernet8 only: read without them
        with open(os.path.join(DATA, "sonic-pfc-%s.txt" % when)) as pfc:
            return [{"tor": "leaf1", "counters": {"sonic_pfc": pfc.read()}}]
    incasts = [dict(step["incasts"][0], tor_port="Ethernet0", sender_ports={"gpu02": "Ethernet4", "gpu03": "Ethernet8"})]
    args = {"mode": "judge", "incasts": incasts, "tor_before": tor_read("before"), "tor_after": tor_read("after")}
    paused = action(args, hostvars)["runs"][0]["verdict"]["classes"][0]
    # PFC held the senders, and no ECN mark or CNP moved anywhere although the profile runs DCQCN on priority 3
    assert paused["verdict"] == "ecn_inactive", paused["message"]
    assert "gpu02 switch Ethernet4 pfc3_tx_pkts +5,500" in paused["message"], paused["message"]
    assert "gpu03 switch Ethernet8 pfc3_tx_pkts +5,500" in paused["message"], paused["message"]
    assert not paused["moved"]["drop"]
    # the senders' RDMA devices handled CNPs (the recorded pair): DCQCN acted, the class stayed lossless
    for host in ("gpu02", "gpu03"):
        hostvars[host]["__lossless_test_after"] = sysfs(tmp_path / host / "a2", "after")
    acted = action(args, hostvars)["runs"][0]["verdict"]["classes"][0]
    assert acted["verdict"] == "lossless_under_load", acted["message"]
    assert "gpu02 RDMA eth0 rp_cnp_handled +" in acted["message"], acted["message"]
    # without the ToR's reads, nothing shows the congestion: not lossless, say what to raise
    alone = action(dict(args, tor_before=[], tor_after=[]), dict(hostvars, gpu02=dict(
        hostvars["gpu02"], __lossless_test_after=hostvars["gpu02"]["__lossless_test_before"]), gpu03=dict(
        hostvars["gpu03"], __lossless_test_after=hostvars["gpu03"]["__lossless_test_before"])))
    assert alone["runs"][0]["verdict"]["verdict"] == "inconclusive"
    # a ToR read without the receiver's port judges the run without it, saying so (never a failed judge)
    elsewhere = action(dict(args, incasts=[dict(incasts[0], tor_port="Ethernet99")]), hostvars)["runs"][0]["verdict"]
    assert elsewhere["verdict"] == "lossless_under_load" and any(
        "ToR sonic_pfc: port Ethernet99 is not in the output" in p for p in elsewhere["problems"]), elsewhere["problems"]


def run(host, verdict):
    return {"tor": "leaf1", "rail": "1", "fabric": "default", "port": "Ethernet1", "host": host, "host_nic": "eth0",
            "senders": ["gpu02"], "round": 1, "priority": 3, "seconds": 10.0, "skipped": None,
            "verdict": {"verdict": verdict, "classes": [{"message": "Priority 3 %s." % verdict}]}}


def test_report_writes_the_runs_and_the_rendered_pages_and_fails_on_a_drop(tmp_path):
    runs = [run("gpu01", "dropped"), run("gpu02", "inconclusive")]
    result = action({"mode": "report", "runs": runs, "report_dir": str(tmp_path), "generated": "now"})
    assert json.loads((tmp_path / "lossless.json").read_text())["runs"] == runs
    rendered = load_report.load_report(runs, cluster="t", generated="now")  # the pages are the report module's
    assert (tmp_path / "lossless.md").read_text() == rendered["markdown"]
    assert (tmp_path / "lossless.html").read_text() == rendered["html"]
    assert result["failed"] and result["summary"] == {"runs": 2, "skipped": 0, "dropped": 1, "inconclusive": 1,
                                                      "worst": "dropped"}
    assert result["msg"] == ("lossless_test: 1 link(s) and class(es) with dropped or lost or pause_storm:\ngpu01 eth0 "
                             "(leaf1 Ethernet1, default rail 1) priority 3 round 1: dropped: Priority 3 dropped.")
    # check mode: the same verdict, nothing written
    again = action({"mode": "report", "runs": runs[1:], "report_dir": str(tmp_path / "c")}, check=True)
    assert not again.get("failed") and again["changed"] and not (tmp_path / "c").exists()


def test_the_counters_module_reads_sysfs_and_says_what_it_could_not(capsys, tmp_path):
    sysfs(tmp_path, "after")
    links = [{"interface": "ainet-no-such-nic", "rdma_device": "mlx5_0", "rdma_port": 1}]
    out = run_module(capsys, "lossless_counters", {"links": links, "sysfs_root": str(tmp_path)})
    item = out["interfaces"]["ainet-no-such-nic"]
    assert not out["changed"] and item["rdma_driver"] == "mlx5_core" and item["hw_counters"]["np_cnp_sent"]
    assert item["ethtool"] is None and item["ethtool_error"].startswith("ainet-no-such-nic: ethtool -S failed")
    bad = run_module(capsys, "lossless_counters", {"links": [{"rdma_device": "mlx5_0"}]})
    assert bad["failed"] and bad["msg"].startswith("links[0].interface: None is not an interface name")
