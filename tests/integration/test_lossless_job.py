# -*- coding: utf-8 -*-
"""playbooks/lossless.yml's refusals, as ansible-playbook runs them on a copy of the lab inventory: each stops the
job in one line before any host is touched (the lab's hosts do not exist here: a task that reached one would fail
as unreachable, not with the line) and writes nothing. The load itself runs on the VM tier
(molecule/rdma_vm/tests/test_lossless_load.py)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
LAB = os.path.join(ROOT, "inventories", "lab")


def job(inv, playbook, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_TIMEOUT="3",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", str(inv), os.path.join(ROOT, "playbooks", playbook + ".yml")]
    return subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture
def inv(tmp_path):
    path = tmp_path / "inv"
    shutil.copytree(LAB, path, ignore=shutil.ignore_patterns(".ainet-fabric"))
    return path


def with_profile(inv, preset="nvidia"):
    """The lab model with a lossless profile, and its plan published (the plan job connects to no host)."""
    path = inv / "group_vars" / "all" / "fabric.yml"
    data = yaml.safe_load(path.read_text())
    data["fabric_cluster"]["qos"] = {"preset": preset}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    run = job(inv, "plan")
    assert run.returncode == 0, run.stdout[-3000:]


def failed_with(run, line):
    assert run.returncode != 0, run.stdout[-3000:]
    assert line in run.stdout, run.stdout[-4000:]
    assert "UNREACHABLE" not in run.stdout and "Traceback" not in run.stdout + run.stderr


def no_load_report(inv):
    out = inv / ".ainet-fabric"
    return not out.exists() or not list(out.rglob("lossless.*"))


def test_without_a_lossless_profile_the_job_refuses(inv):
    run = job(inv, "lossless")
    failed_with(run, '"msg": "lossless_test: no fabric has a lossless profile (fabric_cluster qos preset none, or '
                     'InfiniBand): there is no lossless class to prove under load. Fix: give the fabric a qos preset')
    assert no_load_report(inv)


def test_without_the_published_plan_the_job_refuses(inv):
    with_profile(inv)
    (inv / "rail_plan_lock.yml").unlink()
    run = job(inv, "lossless")
    failed_with(run, "does not exist and no published plan (rail_plan_lock) was passed. Fix: run the plan job "
                     "(ansible-playbook ainet.fabric.plan) on the whole inventory first")
    # the check is the host play's first task (docs/performance.md, "The rules"): no task of the load test ran
    assert "TASK [ainet.fabric.lossless_test" not in run.stdout
    assert no_load_report(inv)


@pytest.mark.parametrize("option,value,line", [
    ("lossless_test_seconds", 900, "lossless_test_seconds: 900 is outside 1 to 300"),
    ("lossless_test_qps", 0, "lossless_test_qps: 0 is outside 1 to 64"),
    ("lossless_test_rate_gbps", -5, "lossless_test_rate_gbps: -5.0 is negative"),
    ("lossless_test_fail_on", ["broken"], "lossless_test_fail_on: broken is not a verdict"),
])
def test_an_option_out_of_bounds_is_refused_before_any_host_is_touched(inv, option, value, line):
    with_profile(inv)
    run = job(inv, "lossless", "-e", json.dumps({option: value}))
    failed_with(run, line)
    assert no_load_report(inv)


def test_check_mode_of_a_refused_job_refuses_the_same(inv):
    run = job(inv, "lossless", "--check")
    failed_with(run, "lossless_test: no fabric has a lossless profile")
