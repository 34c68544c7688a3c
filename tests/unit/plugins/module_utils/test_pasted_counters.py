# -*- coding: utf-8 -*-
"""Counter reads as they are pasted (issue 40): with the prompt line, the shell's echo of the command, mail quoting,
a mail client's 72/76-column wrap and CRLF. Every parser gets the same pre-pass (pasted_text.clean, run by
parse_counters); each case pastes a recorded read (data/counters/ORIGIN.md) one way and compares the counters with
the plain read, the control."""
from __future__ import annotations

import os
import textwrap

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import parse_counters, parse_sonic_pfc
from ansible_collections.ainet.fabric.plugins.module_utils.qos.pasted_text import clean, unwrapped

DATA = os.path.join(os.path.dirname(__file__), "data", "counters")

# (recorded read, format, the command a user typed)
READS = [
    ("recorded/rdma-stat-show-mlx5-netdev-2019.txt", "rdma_mlx5", "rdma statistic show"),
    ("recorded/rdma-stat-show-p-mlx5-netdev-2019.txt", "rdma_mlx5", "rdma statistic show -p"),
    ("ethtool-cx6dx-after.txt", "ethtool_mlx5", "ethtool -S ens1f0np0"),
    ("hw_counters-mlx5-after.txt", "rdma_mlx5", "grep -H . /sys/class/infiniband/mlx5_0/ports/1/hw_counters/*"),
    ("sonic-pfc-after.txt", "sonic_pfc", "show pfc counters"),
    ("sonic-queue-after.txt", "sonic_queue", "show queue counters"),
    ("eos-pfc-after.json", "eos_pfc", "show priority-flow-control counters | json"),
    ("nvue-qos-after.txt", "nvue_qos", "nv show interface swp1 counters qos"),
    ("linux-qdisc-after.json", "linux_qdisc", "tc -s -j qdisc show"),
]
# a prompt and the command (the same prompt follows the output), or the shell's echo of the command alone
PROMPTS = ["$ %s", "admin@sonic:~$ %s", "[root@gpu01 ~]# %s", "switch# %s", "leaf01(config)# %s"]
ECHOES = ["+ %s", "%s"]


def text(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def plain(name, fmt):
    facts = parse_counters(text(name), fmt)
    assert facts["ports"] and any(facts["ports"].values()), name
    return facts


def mail_wrap(raw, width):
    """What a mail client does to a long line: break it at the last space before ``width`` (the space dropped)."""
    out = []
    for line in raw.split("\n"):
        out += textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False, drop_whitespace=True,
                             replace_whitespace=False) if len(line) > width else [line]
    return "\n".join(out)


def test_the_issue_case_rdma_statistic_show_with_its_prompt_reads_the_counters():
    raw = text("recorded/rdma-stat-show-mlx5-netdev-2019.txt")
    assert parse_counters("$ rdma statistic show\n" + raw, "rdma_mlx5")["ports"] == plain(
        "recorded/rdma-stat-show-mlx5-netdev-2019.txt", "rdma_mlx5")["ports"]


@pytest.mark.parametrize("prompt", PROMPTS + ECHOES)
@pytest.mark.parametrize("name,fmt,command", READS)
def test_a_prompt_or_echo_line_before_and_a_prompt_after_change_nothing(name, fmt, command, prompt):
    after = prompt.split("%s")[0].rstrip() + "\n" if prompt in PROMPTS else ""
    pasted = (prompt % command) + "\n" + text(name).rstrip("\n") + "\n" + after
    got = parse_counters(pasted, fmt)
    want = plain(name, fmt)
    assert got["ports"] == want["ports"] and got["problems"] == want["problems"]


@pytest.mark.parametrize("name,fmt,command", READS)
def test_crlf_and_mail_quoting(name, fmt, command):
    want = plain(name, fmt)
    crlf = ("admin@sonic:~$ %s\n" % command + text(name)).replace("\n", "\r\n")
    assert parse_counters(crlf, fmt)["ports"] == want["ports"]
    quoted = "\n".join("> " + line if line else ">" for line in ("$ %s\n" % command + text(name)).split("\n"))
    assert parse_counters(quoted, fmt)["ports"] == want["ports"]
    nested = "\n".join("> > " + line for line in text(name).split("\n"))
    assert parse_counters(nested, fmt)["ports"] == want["ports"]


@pytest.mark.parametrize("name,fmt,width", [
    ("sonic-pfc-after.txt", "sonic_pfc", 72), ("sonic-queue-after.txt", "sonic_queue", 72),
    ("sonic-queue-after.txt", "sonic_queue", 76), ("nvue-qos-after.txt", "nvue_qos", 72),
    ("nvue-qos-after.txt", "nvue_qos", 76)])
def test_a_table_wrapped_by_a_mail_client_reads_as_the_plain_one(name, fmt, width):
    wrapped = mail_wrap(text(name), width)
    assert wrapped != text(name)
    assert parse_counters(wrapped, fmt)["ports"] == plain(name, fmt)["ports"]


@pytest.mark.parametrize("width", [72, 76])
def test_rdma_statistic_show_on_one_line_wrapped_by_a_mail_client(width):
    name = "recorded/rdma-stat-show-mlx5-netdev-2019.txt"
    one_line = " ".join(text(name).split())  # what the tool printed before the mail wrapped it
    wrapped = "$ rdma statistic show\n" + mail_wrap(one_line, width)
    assert wrapped.count("\n") > 2
    assert parse_counters(wrapped, "rdma_mlx5")["ports"] == plain(name, "rdma_mlx5")["ports"]


def test_the_wrapped_table_is_a_real_case_and_joining_is_needed():
    # the control of the case above: the SONiC PFC table (74 columns) wrapped at 72 loses its PFC7 column when read
    # without joining the lines back
    wrapped = mail_wrap(text("sonic-pfc-after.txt"), 72)
    assert wrapped != text("sonic-pfc-after.txt")
    assert parse_sonic_pfc(clean(wrapped))["ports"] != plain("sonic-pfc-after.txt", "sonic_pfc")["ports"]
    assert unwrapped(clean(wrapped), 72) is not None


def test_an_unwrapped_table_is_not_joined_into_one_row():
    # rows that end near column 72 on their own: the joined reading parses worse, the plain one is kept
    raw = text("sonic-queue-after.txt")
    assert parse_counters(raw, "sonic_queue") == plain("sonic-queue-after.txt", "sonic_queue")


def test_what_is_not_noise_stays():
    assert clean("rx_prio3_pause: 5\r\n") == "rx_prio3_pause: 5\n"
    assert clean("link mlx5_0/1 np_cnp_sent 0") == "link mlx5_0/1 np_cnp_sent 0"
    # a quote marker on some lines only is not a mail quote: kept for the parser to report
    assert clean("> x\nrx_prio3_pause: 5") == "> x\nrx_prio3_pause: 5"
    facts = parse_counters("$ ethtool -S ens1f0np0\nNIC statistics:\n     rx_prio3_pause: 5\nbogus line\n", "ethtool_mlx5")
    assert facts["ports"] == {"port": {"rx_prio3_pause": 5}}
    assert facts["problems"] == ["ethtool_mlx5: cannot read the line 'bogus line'"]
