# -*- coding: utf-8 -*-
"""The lossless load test (playbooks/lossless.yml, issue 33) on the VM tier: real soft-RoCE (rxe) counters under an
incast, and the "ToRs" - the lab's bridges ``br-rail1``/``br-rail2`` in its network namespace - read as Linux switches
(``platform: linux``: ``ip -s -s -j link show`` and ``tc -s -j qdisc show`` over their connection). Clean links first,
then loss injected on one ToR port - vm1's rail-1 port, the tap ``vm1-r1`` - and only vm1's link must come out
*dropped*, named with the ToR's counter of that port.

The scenario's model has no lossless class (igb has no DCB: ``qos: {preset: none}``), and the job refuses without
one; so this test plans the same cluster with the ``nvidia`` preset and two ToRs of platform ``linux`` whose ports are
the taps (``vm{node}-r{rail}``) into a directory of its own (its own lock and plan files, given with ``-e``:
molecule's are untouched), and runs the job with that model and an inventory that adds the ToRs as hosts. Their
connection is the lab's (tests/lab/connection_plugins/lab_netns.py: a command runs in the lab's namespace, as it would
over SSH on a Linux switch). soft-RoCE and a Linux bridge have no PFC and no ECN counters: a clean link is
*inconclusive* (no congestion reached), never *lossless*.

The loss: a clsact egress filter on the tap (classic BPF, direct action: ``tc`` has no ``gact`` here) drops a share
of the frames over 200 bytes that the bridge sends out of that port toward vm1 - the RoCE writes (1 KiB messages
here), not the ACKs (about 60 bytes). ``tc netem`` would do the same, but the machine's kernel here (as CI's) has no
netem (``CONFIG_NET_SCH_NETEM`` off). The port's clsact qdisc counts each such drop (``clsact_drops``); the link's own
``tx_dropped`` does not. Frames only, not ACKs: an ACK lost on its way to vm1 while vm1 sends makes vm1 retransmit,
and vm2's run would then be *lost* as well. Each run's time goes to ``traffic.log`` for the run's report."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

import testinfra.utils.ansible_runner
import yaml

from test_rdma_host import INVENTORY, STATE, before_the_reboot_only, model

testinfra_hosts = testinfra.utils.ansible_runner.AnsibleRunner(INVENTORY).get_hosts("vm1")
PREFIX = os.environ.get("AINET_LAB_PREFIX", "ainetvm")
NETNS = PREFIX + "-vm"
PORT = "vm1-r1"  # the "ToR" port of vm1's rail-1 link: the tap on br-rail1 (tests/vm/vms.sh)
LOSS = 2  # percent of the frames out of that port
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TORS = [{"name": "lab-rail%d" % rail, "rails": [rail], "platform": "linux", "port_template": "vm{node}-r{rail}"}
        for rail in (1, 2)]
OURS = "^timeout [0-9]+ ib_write_bw "
# soft-RoCE under TCG moves a few MB/s: perftest's default queue (128 messages of 64 KiB per QP) takes longer than
# the QP's retransmission timeout to drain, and the sender retransmits with no loss at all (measured: the receiver's
# duplicate_request +258 on a clean link). Small messages and a short queue keep every run under it; and a VM
# stalls for longer than perftest's 67 ms ACK timeout now and then (measured: duplicate_request +1 on a clean link
# with the short queue), so the senders wait 4.3 s (-u 20). A lost packet still shows at once: the receiver's
# out_of_seq_request and its NAK do not wait for the timeout.
LOAD = ("-e", "lossless_test_seconds=5", "-e", "lossless_test_qps=1", "-e", "lossless_test_message_size=1024",
        "-e", "lossless_test_tx_depth=16", "-e", "lossless_test_qp_timeout=20")


def ns(*argv, check=True):
    return subprocess.run(["ip", "netns", "exec", NETNS] + list(argv), capture_output=True, text=True, check=check)


def inject_loss():
    """The clsact filter (see the module); returns how, for the log."""
    # A = frame length; over 200: A = random % 100, drop (TC_ACT_SHOT, 2) when below LOSS; else TC_ACT_UNSPEC (-1)
    program = "8,128 0 0 0,37 0 4 200,32 0 0 4294963256,148 0 0 100,53 1 0 %d,6 0 0 2,6 0 0 4294967295," \
              "6 0 0 4294967295" % LOSS
    ns("tc", "qdisc", "add", "dev", PORT, "clsact")
    ns("tc", "filter", "add", "dev", PORT, "egress", "bpf", "da", "bytecode", program)
    return "a tc filter dropping %d%% of the data frames out of %s" % (LOSS, PORT)


def dropped_frames():
    """What the port's clsact qdisc counted as dropped (the kernel's counter, read here with tc itself)."""
    for qdisc in json.loads(ns("tc", "-s", "-j", "qdisc", "show", "dev", PORT).stdout or "[]"):
        if qdisc.get("kind") == "clsact":
            return qdisc.get("drops")
    return None


def remove_loss():
    ns("tc", "qdisc", "del", "dev", PORT, "clsact", check=False)


def job(tmp, *extra):
    """The job, with the ToRs as inventory hosts reached through the lab's namespace."""
    start = time.monotonic()
    env = dict(os.environ, ANSIBLE_CONNECTION_PLUGINS=os.path.join(ROOT, "tests", "lab", "connection_plugins"))
    run = subprocess.run(["ansible-playbook", "-i", INVENTORY, "-i", str(tmp / "tors.yml"), "ainet.fabric.lossless",
                          "-e", "@%s" % (tmp / "model.yml"), "-e", "rail_plan_lock_file=%s" % (tmp / "lock.yml")]
                         + list(LOAD) + list(extra), capture_output=True, text=True, check=False, timeout=900, env=env)
    return run, time.monotonic() - start


def runs(path):
    """The job's runs by (receiver, rail); the file is kept beside the run's other logs (molecule's ephemeral
    directory) as ``lossless-<name>.json``."""
    shutil.copy(str(path / "lossless.json"), os.path.join(os.path.dirname(STATE), "lossless-%s.json" % path.name))
    with open(path / "lossless.json") as handle:
        return dict(((r["host"], r["rail"]), r) for r in json.load(handle)["runs"])


def moved(run):
    return dict(("%s %s" % (c["side"], c["counter"]), c["delta"]) for c in run["verdict"]["counters"] if c["delta"])


def async_files(node):
    return node.run("ls -1 /root/.ansible_async 2>/dev/null").stdout.split()


def nothing_left(nodes, files):
    """No ib_write_bw of the job runs, and no async job file of it is left (the same files as before)."""
    for node, before in zip(nodes, files):
        left = node.run("pgrep -af '%s'" % OURS)
        assert left.rc == 1 and not left.stdout.strip(), "%s: %s" % (node.backend.get_hostname(), left.stdout)
        assert async_files(node) == before, node.backend.get_hostname()


def test_incast_reads_rxe_and_tor_counters_and_names_only_the_lossy_link_dropped(host, tmp_path):
    before_the_reboot_only()
    nodes = [host, host.get_host("ansible://vm2", ansible_inventory=INVENTORY)]
    cluster = dict(model(host)["fabric_cluster"], qos={"preset": "nvidia"}, tors=TORS)
    (tmp_path / "model.yml").write_text(yaml.safe_dump({"fabric_cluster": cluster}))
    (tmp_path / "tors.yml").write_text(yaml.safe_dump({"all": {"hosts": dict(
        (tor["name"], {"ansible_connection": "lab_netns", "ansible_host": NETNS}) for tor in TORS)}}))
    plan = subprocess.run(["ansible-playbook", "-i", INVENTORY, "ainet.fabric.plan", "-e", "@%s" % (tmp_path / "model.yml"),
                           "-e", "rail_plan_lock_file=%s" % (tmp_path / "lock.yml"),
                           "-e", "rail_plan_output_dir=%s" % (tmp_path / "plan")],
                          capture_output=True, text=True, check=False, timeout=300)
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-2000:]
    tor = "lab-rail1"
    log = []
    files = [async_files(node) for node in nodes]

    # Clean links: the incast ran (the receiver's rxe counted the packets), and nothing dropped.
    clean = tmp_path / "clean"
    run, seconds = job(tmp_path, "-e", "lossless_test_report_dir=%s" % clean, "-e", "lossless_check_report_dir=%s" % clean)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]
    log.append("lossless.yml, clean links: %.0f s" % seconds)
    nothing_left(nodes, files)
    found = runs(clean)
    assert sorted(found) == [("vm1", "1"), ("vm1", "2"), ("vm2", "1"), ("vm2", "2")], sorted(found)
    for receiver, sender in (("vm1", "vm2"), ("vm2", "vm1")):
        item = found[(receiver, "1")]
        assert item["skipped"] is None and item["senders"] == [sender] and item["tor"] == tor, item
        assert item["verdict"]["verdict"] in ("inconclusive", "lossless_under_load"), item["verdict"]
        counters = moved(item)
        assert counters.get("RDMA rcvd_pkts", 0) > 0, counters   # real rxe counters, read before and after
        assert counters.get("switch tx_packets", 0) > 0, counters  # the ToR's port toward the receiver, read live
        assert not item["verdict"]["classes"][0]["moved"]["drop"], item["verdict"]
        # rail 2 has no RDMA device (rxe0 is on enp1s0 only): not run, saying why
        assert "no RDMA device" in found[(receiver, "2")]["skipped"], found[(receiver, "2")]

    # Loss on vm1's ToR port: vm1's link, and only it, is dropped, named with the port's counter; the job fails.
    lossy = tmp_path / "lossy"
    how = inject_loss()
    try:
        run, seconds = job(tmp_path, "-e", "lossless_test_report_dir=%s" % lossy,
                           "-e", "lossless_check_report_dir=%s" % lossy)
        frames = dropped_frames()
    finally:
        remove_loss()
    log.append("lossless.yml, %s (%s frames dropped): %.0f s" % (how, frames, seconds))
    assert frames, "the filter dropped nothing: the load did not cross vm1's port"
    nothing_left(nodes, files)
    assert run.returncode != 0, run.stdout[-5000:]
    found = runs(lossy)
    bad = found[("vm1", "1")]
    assert bad["verdict"]["verdict"] == "dropped" and bad["port"] == PORT, bad["verdict"]
    drops = dict(("%s %s" % (c["side"], c["counter"]), c["delta"]) for c in bad["verdict"]["classes"][0]["moved"]["drop"])
    # placed by the ToR's counter of vm1's port; rxe's sequence counters show the same loss end to end
    assert 0 < drops.get("switch clsact_drops", 0) <= frames, drops
    assert set(drops) - {"switch clsact_drops"} <= {"RDMA out_of_seq_request", "RDMA duplicate_request",
                                                    "RDMA rcvd_seq_err", "RDMA retry_exceeded_err",
                                                    "RDMA completer_retry_err", "RDMA send_err"}, drops
    assert found[("vm2", "1")]["verdict"]["verdict"] not in ("dropped", "lost"), found[("vm2", "1")]["verdict"]
    message = bad["verdict"]["classes"][0]["message"]
    assert "dropped under load" in message and "switch %s clsact_drops +%d" % (PORT, drops["switch clsact_drops"]) \
        in message, message
    # the play's failure names the link, its ToR port and the counter (Ansible prints it on stderr)
    assert "vm1 enp1s0 (%s %s, default rail 1) priority 3 round 1: dropped: Priority 3 dropped under load: " % (
        tor, PORT) in run.stdout + run.stderr, run.stderr[-3000:]
    assert "vm2 enp1s0 (" not in run.stderr, run.stderr[-3000:]
    log.append("  vm1 rail 1 dropped: %s" % message)
    with open(os.path.join(os.path.dirname(STATE), "traffic.log"), "a") as handle:  # for the run's report
        handle.write("\n".join(log) + "\n")
