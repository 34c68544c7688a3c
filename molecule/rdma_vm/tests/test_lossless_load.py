# -*- coding: utf-8 -*-
"""The lossless load test (playbooks/lossless.yml, issue 33) on the VM tier: real soft-RoCE (rxe) counters under an
incast, clean links first, then loss injected on one "ToR" port - the host side of vm1's rail-1 link, the tap
``vm1-r1`` on the bridge ``br-rail1`` in the lab's namespace - and only vm1's run must come out *lost*.

The scenario's model has no lossless class (igb has no DCB: ``qos: {preset: none}``), and the job refuses without
one; so this test plans the same cluster with the ``nvidia`` preset into a directory of its own (its own lock and
plan files, given with ``-e``: molecule's are untouched) and runs the job with that model. soft-RoCE has no PFC and
no ECN counters: a clean link is *inconclusive* (no congestion reached), never *lossless*, and a lost packet moves
the receiver's ``out_of_seq_request`` (and the sender's ``rcvd_seq_err``): *lost*, "lost between vm2 and vm1". The
VM tier has no ToR counters, and host RDMA counters count a loss anywhere on the path of the QP: the data toward vm1
crosses vm2's uplink and vm1's downlink, which they cannot tell apart (review 33), so the run is not called *dropped*
on vm1's link; what the test holds is that vm1's run, and only it, is not lossless and names its counters.

The loss: an nftables rule of the lab's namespace drops a share (``numgen random``) of the data frames the bridge
forwards out of that port - frames over 200 bytes: the RoCE writes (1 KiB messages here), not the ACKs (about 60
bytes). ``tc netem`` would do the same on the tap, but the machine's kernel here (as CI's) has no netem
(``CONFIG_NET_SCH_NETEM`` off). Frames only, not ACKs: an ACK lost on its way to vm1 while vm1 sends makes vm1
retransmit, and its receiver (vm2) then counts a duplicate request (measured with every frame dropped: vm2
duplicate_request +1); since review 33 that makes vm2's run *lost* too ("ACKs lost on their way back"), never
*dropped*: the receiver's duplicate requests do not tell the two links apart. Each run's time goes to
``traffic.log`` for the run's report."""

from __future__ import annotations

import json
import os
import re
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
    """The nftables bridge rule (see the module); returns how, for the log."""
    rules = ('table bridge ainet_test_loss {\n chain forward {\n  type filter hook forward priority 0; policy accept;\n'
             '  oifname "%s" meta length > 200 numgen random mod 100 < %d counter drop\n }\n}\n' % (PORT, LOSS))
    subprocess.run(["ip", "netns", "exec", NETNS, "nft", "-f", "-"], input=rules, text=True, check=True)
    return "nftables bridge drop of %d%% of the data frames out of %s" % (LOSS, PORT)


def dropped_frames():
    out = ns("nft", "list", "table", "bridge", "ainet_test_loss", check=False).stdout
    match = re.search(r"counter packets (\d+)", out)
    return int(match.group(1)) if match else None


def remove_loss():
    ns("nft", "delete", "table", "bridge", "ainet_test_loss", check=False)


def job(tmp, *extra):
    start = time.monotonic()
    run = subprocess.run(["ansible-playbook", "-i", INVENTORY, "ainet.fabric.lossless", "-e", "@%s" % (tmp / "model.yml"),
                          "-e", "rail_plan_lock_file=%s" % (tmp / "lock.json")] + list(LOAD) + list(extra), capture_output=True, text=True, check=False,
                         timeout=900)
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


def test_incast_reads_real_rxe_counters_and_names_only_the_lossy_links_run_lost(host, tmp_path):
    before_the_reboot_only()
    nodes = [host, host.get_host("ansible://vm2", ansible_inventory=INVENTORY)]
    cluster = dict(model(host)["fabric_cluster"], qos={"preset": "nvidia"})
    (tmp_path / "model.yml").write_text(yaml.safe_dump({"fabric_cluster": cluster}))
    plan = subprocess.run(["ansible-playbook", "-i", INVENTORY, "ainet.fabric.plan", "-e", "@%s" % (tmp_path / "model.yml"),
                           "-e", "rail_plan_lock_file=%s" % (tmp_path / "lock.json"),
                           "-e", "rail_plan_output_dir=%s" % (tmp_path / "plan")],
                          capture_output=True, text=True, check=False, timeout=300)
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-2000:]
    tor = "%s-rail1-tor" % cluster["name"]
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
        assert not item["verdict"]["classes"][0]["moved"]["drop"], item["verdict"]
        # rail 2 has no RDMA device (rxe0 is on enp1s0 only): not run, saying why
        assert "no RDMA device" in found[(receiver, "2")]["skipped"], found[(receiver, "2")]

    # Loss on vm1's ToR port: vm1's run, and only it, is lost, named with its counters; the job fails on it.
    lossy = tmp_path / "lossy"
    how = inject_loss()
    try:
        run, seconds = job(tmp_path, "-e", "lossless_test_report_dir=%s" % lossy,
                           "-e", "lossless_check_report_dir=%s" % lossy)
        frames = dropped_frames()
    finally:
        remove_loss()
    log.append("lossless.yml, %s (%s frames dropped): %.0f s" % (how, frames, seconds))
    assert frames, "the rule dropped nothing: the load did not cross vm1's port"
    nothing_left(nodes, files)
    assert run.returncode != 0, run.stdout[-5000:]
    found = runs(lossy)
    bad = found[("vm1", "1")]
    assert bad["verdict"]["verdict"] == "lost" and bad["port"] == "swp1", bad["verdict"]
    drops = dict(("%s %s" % (c["side"], c["counter"]), c["delta"]) for c in bad["verdict"]["classes"][0]["moved"]["drop"])
    assert drops and set(drops) <= {"RDMA out_of_seq_request", "RDMA duplicate_request", "RDMA rcvd_seq_err",
                                    "RDMA retry_exceeded_err", "RDMA completer_retry_err", "RDMA send_err"}, drops
    assert found[("vm2", "1")]["verdict"]["verdict"] not in ("dropped", "lost"), found[("vm2", "1")]["verdict"]
    message = bad["verdict"]["classes"][0]["message"]
    assert "lost under load between vm2 and vm1" in message and all(name.split()[1] in message for name in drops), \
        message
    # the play's failure names the link, its ToR port and the counter (Ansible prints it on stderr)
    assert "vm1 enp1s0 (%s swp1, default rail 1) priority 3 round 1: lost: Priority 3 lost under load between vm2 " \
        "and vm1" % tor in run.stdout + run.stderr, run.stderr[-3000:]
    assert "vm2 enp1s0 (" not in run.stderr, run.stderr[-3000:]
    log.append("  vm1 rail 1 lost: %s" % message)
    with open(os.path.join(os.path.dirname(STATE), "traffic.log"), "a") as handle:  # for the run's report
        handle.write("\n".join(log) + "\n")
