# -*- coding: utf-8 -*-
"""playbooks/k8s.yml for real (ansible-playbook on the controller): the files, one per kind, read back as YAML and
checked here against the plan with the standard library's ipaddress (not with the code under test), the CRD
check when AINET_K8S_CRD_DIR (or ../shared/validators/k8s) is there, idempotence, check mode, a switched IPAM
that removes its stale file, and bad input refused with one line."""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
CRDS = os.environ.get("AINET_K8S_CRD_DIR") or os.path.join(os.path.dirname(ROOT), "shared", "validators", "k8s")
NICS = ["ens6f0np0", "ens6f1np1", "ens7f0np0", "ens7f1np1"]
CLUSTER = {"name": "kube", "rails": 4, "cni": "sriov", "sriov": {"vfs": 8},
           "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27},
           "kubernetes": {"namespace": "rdma"}}


def run_playbook(inventory, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", str(inventory), os.path.join(ROOT, "playbooks", "k8s.yml")]
    return subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


def write_inventory(tmp_path, cluster, nodes=4):
    inv = tmp_path / "inv"
    (inv / "group_vars").mkdir(parents=True, exist_ok=True)
    (inv / "group_vars" / "all.yml").write_text(yaml.safe_dump({"fabric_cluster": cluster}))
    group = {"hosts": dict(("gpu%02d" % n, {"fabric_node_id": n}) for n in range(1, nodes + 1)),
             "vars": {"fabric_rail_interfaces": NICS}}
    (inv / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": group}}}))
    return inv


def load(path):
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def test_exclusive_sriov_pools_follow_the_plan(tmp_path):
    inv = write_inventory(tmp_path, CLUSTER)
    dest = tmp_path / "k8s"
    extra = ["-e", "k8s_objects_dest=%s" % dest]
    if os.path.isdir(CRDS):
        extra += ["-e", "k8s_objects_crd_dir=%s" % CRDS]
    checked = run_playbook(inv, "--check", *extra)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert not dest.exists()
    first = run_playbook(inv, *extra)
    assert first.returncode == 0, first.stdout + first.stderr
    assert sorted(os.listdir(dest)) == ["10-configmaps.yaml", "30-spiderippools.yaml", "40-spidermultusconfigs.yaml"]
    if os.path.isdir(CRDS):
        assert "schema check: passed" in first.stdout, first.stdout
    else:
        assert "CRD schemas not checked" in first.stdout
    pools = load(dest / "30-spiderippools.yaml")
    assert len(pools) == 16
    # The plan as the planner's documented layout gives it (rail r block 172.17.(r-1).0/24, node n subnet the n-th
    # /27 of it, ToR .1, host .2), computed here independently of the code under test.
    for pool in pools:
        node = pool["metadata"]["labels"]["ainet.fabric/node"]
        rail = int(pool["metadata"]["labels"]["ainet.fabric/rail"])
        n = int(node[3:])
        subnet = ipaddress.ip_network("172.17.%d.%d/27" % (rail - 1, (n - 1) * 32))
        assert pool["spec"]["subnet"] == str(subnet)
        assert pool["spec"]["gateway"] == str(subnet[1])
        assert pool["spec"]["nodeAffinity"]["matchExpressions"] == [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]
        assert pool["spec"]["ips"] == ["%s-%s" % (subnet[3], subnet[30])]
        assert pool["spec"]["routes"] == [{"dst": "172.17.%d.0/24" % (rail - 1), "gw": str(subnet[1])}]
    configs = load(dest / "40-spidermultusconfigs.yaml")
    rail3 = [c for c in configs if c["metadata"]["name"] == "kube-rail3"][0]
    assert rail3["metadata"]["namespace"] == "rdma"
    assert rail3["spec"]["sriov"]["resourceName"] == "nvidia.com/rail3"
    assert rail3["spec"]["sriov"]["ippools"]["ipv4"] == ["kube-rail3-gpu%02d" % n for n in range(1, 5)]
    maps = dict((m["metadata"]["name"], m) for m in load(dest / "10-configmaps.yaml"))
    assert maps["kube-nccl-env"]["data"] == {"NCCL_CROSS_NIC": "0", "NCCL_SOCKET_IFNAME": "=eth0",
                                             "NCCL_IB_TC": "106", "NCCL_IB_SL": "3"}
    device_plugin = json.loads(maps["sriovdp-config"]["data"]["config.json"])
    assert [(r["resourceName"], r["selectors"]["pfNames"]) for r in device_plugin["resourceList"]] == [
        ("rail%d" % r, [NICS[r - 1]]) for r in range(1, 5)]

    again = run_playbook(inv, *extra)
    assert again.returncode == 0 and "changed=0" in again.stdout, again.stdout

    # Another CNI and IPAM: macvlan in shared addressing with whereabouts; the pools' file is removed.
    shared = dict(CLUSTER, cni="macvlan", kubernetes={"ipam": "whereabouts", "pod_offset": 128, "pod_count": 100})
    shared.pop("sriov")
    shared["addressing"] = {"mode": "shared", "supernet": "172.17.0.0/16", "rail_prefix": 24}
    inv = write_inventory(tmp_path, shared)
    switched = run_playbook(inv, *extra)
    assert switched.returncode == 0, switched.stdout + switched.stderr
    assert sorted(os.listdir(dest)) == ["10-configmaps.yaml", "40-networkattachmentdefinitions.yaml"]
    nads = load(dest / "40-networkattachmentdefinitions.yaml")
    conf = json.loads(nads[1]["spec"]["config"])
    assert conf["plugins"][0]["master"] == "ens6f1np1" and conf["plugins"][0]["type"] == "macvlan"
    assert conf["plugins"][0]["ipam"] == {"type": "whereabouts", "range": "172.17.1.0/24",
                                          "range_start": "172.17.1.128", "range_end": "172.17.1.227",
                                          "gateway": "172.17.1.1"}


@pytest.mark.parametrize("limit", ["gpu03", "gpu02:gpu04", "mgmt01", "mgmt01:gpu03"])
def test_a_limit_renders_the_objects_of_the_whole_node_group(tmp_path, limit):
    """The job's play targets the node group's first node, and under --limit the group and then every other host
    (playbooks/k8s.yml): a limit that leaves the first node out, or names no node at all (a management host), still
    runs the task and renders every node's objects, the same bytes as without a limit (the control). The model lives
    in the node group's group_vars here, so the management host has none of its own: the action reads the group's
    first node's."""
    inv = write_inventory(tmp_path, CLUSTER)
    (inv / "group_vars" / "all.yml").rename(inv / "group_vars" / "gpu_nodes.yml")
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    hosts["all"]["children"]["mgmt"] = {"hosts": {"mgmt01": {"ansible_connection": "local"}}}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    whole, limited = tmp_path / "whole", tmp_path / "limited"
    control = run_playbook(inv, "-e", "k8s_objects_dest=%s" % whole)
    assert control.returncode == 0, control.stdout + control.stderr
    result = run_playbook(inv, "-e", "k8s_objects_dest=%s" % limited, "--limit", limit)
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(load(whole / "30-spiderippools.yaml")) == 16  # 4 nodes x 4 rails
    assert sorted(os.listdir(limited)) == sorted(os.listdir(whole))
    for name in os.listdir(whole):
        assert (limited / name).read_bytes() == (whole / name).read_bytes(), name


def test_a_limit_without_a_node_writes_to_the_default_directory_of_the_cluster(tmp_path):
    """The default k8s_objects_dest is named after the model's cluster: on a management host without the model (it
    lives in the node group's group_vars) the name is the group's first node's, not the default's 'cluster'."""
    inv = write_inventory(tmp_path, CLUSTER)
    (inv / "group_vars" / "all.yml").rename(inv / "group_vars" / "gpu_nodes.yml")
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    hosts["all"]["children"]["mgmt"] = {"hosts": {"mgmt01": {"ansible_connection": "local"}}}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    result = run_playbook(inv, "--limit", "mgmt01")
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(os.listdir(inv / ".ainet-fabric")) == [CLUSTER["name"]]
    assert "30-spiderippools.yaml" in os.listdir(inv / ".ainet-fabric" / CLUSTER["name"] / "k8s")


@pytest.mark.parametrize("change,words", [
    ({"addressing": {"mode": "p2p", "supernet": "172.17.0.0/16", "rail_prefix": 24}},
     "fabric_cluster.kubernetes.ipam: 'spiderpool' cannot give pods addresses in p2p addressing"),
    ({"kubernetes": {"ipam": "whereabouts"}}, "fabric_cluster.kubernetes.ipam: 'whereabouts' hands out one "
                                              "cluster-wide range per network"),
    ({"kubernetes": {"namespace": "RDMA"}}, "fabric_cluster.kubernetes.namespace: 'RDMA'"),
    ({"cni": "host", "sriov": None}, "fabric_cluster.kubernetes: {'namespace': 'rdma'} is set while the fabric's cni "
                                     "is host"),
])
def test_bad_input_is_one_line(tmp_path, change, words):
    cluster = dict(CLUSTER, **change)
    cluster = dict((k, v) for k, v in cluster.items() if v is not None)
    inv = write_inventory(tmp_path, cluster)
    result = run_playbook(inv, "-e", "k8s_objects_dest=%s" % (tmp_path / "k8s"))
    assert result.returncode != 0
    assert words in result.stdout, result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert not (tmp_path / "k8s").exists()


KUBECTL = """#!/bin/sh
# A stand-in for kubectl (no Kubernetes API here): logs its arguments and whether the file it is given is there;
# `diff` reports differences (exit 1) for the files named in $KUBECTL_DIFFERS, as kubectl diff does, and nothing
# (exit 0) for the others; with $KUBECTL_FAILS it fails (exit 2) as kubectl does on an unreachable server.
for last; do :; done
if [ -f "$last" ]; then echo "$* (there)" >> "$KUBECTL_LOG"; else echo "$* (missing)" >> "$KUBECTL_LOG"; fi
if [ -n "$KUBECTL_FAILS" ]; then printf 'error: the server could not be reached\nsecond line\n' >&2; exit 2; fi
case "$*" in
  *" diff "*) for f in $KUBECTL_DIFFERS; do case "$*" in *"/$f") echo "+ changed"; exit 1;; esac; done; exit 0;;
esac
exit 0
"""


def test_apply_runs_kubectl_on_the_files_that_differ_in_order(tmp_path):
    """The orchestration of the apply, with a kubectl stand-in that answers diff as kubectl does: only the files
    kubectl diff finds different are applied, server-side, in file order; check mode applies nothing."""
    inv = write_inventory(tmp_path, CLUSTER)
    dest = tmp_path / "k8s"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").write_text(KUBECTL)
    os.chmod(str(bin_dir / "kubectl"), 0o755)
    log = tmp_path / "kubectl.log"
    env = dict(os.environ, KUBECTL_LOG=str(log), KUBECTL_DIFFERS="10-configmaps.yaml 40-spidermultusconfigs.yaml",
               PATH=str(bin_dir) + os.pathsep + BIN + os.pathsep + os.environ.get("PATH", ""),
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", str(inv), os.path.join(ROOT, "playbooks", "k8s.yml"),
           "-e", "k8s_objects_dest=%s" % dest, "-e", "k8s_objects_kubeconfig=/nonexistent/kubeconfig"]
    first = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert first.returncode == 0, first.stdout + first.stderr
    calls = log.read_text().splitlines()
    head = "--kubeconfig /nonexistent/kubeconfig"
    assert [c.split()[2] + " " + c.split()[-2].rsplit("/", 1)[-1] for c in calls] == [
        "diff 10-configmaps.yaml", "diff 30-spiderippools.yaml", "diff 40-spidermultusconfigs.yaml",
        "apply 10-configmaps.yaml", "apply 40-spidermultusconfigs.yaml"], calls
    assert all(c.startswith(head) and "--server-side --field-manager ainet-fabric" in c for c in calls), calls
    assert all(c.endswith(" (there)") and "%s/" % dest in c for c in calls), calls  # the files written
    log.write_text("")
    checked = subprocess.run(cmd + ["--check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                             check=False)
    assert checked.returncode == 0, checked.stdout
    assert not [c for c in log.read_text().splitlines() if " apply " in c]
    assert "kubectl: 10-configmaps.yaml, 40-spidermultusconfigs.yaml (check mode: not applied)" in checked.stdout


def test_check_mode_compares_this_runs_files_and_kubectl_errors_are_one_line(tmp_path):
    """In check mode on a directory never written, kubectl diff is given copies of the files this run would write
    (a private temporary directory, removed after), and nothing is applied or written; a kubectl error fails the
    task with one line naming the file; the control succeeds."""
    inv = write_inventory(tmp_path, CLUSTER)
    dest = tmp_path / "k8s"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").write_text(KUBECTL)
    os.chmod(str(bin_dir / "kubectl"), 0o755)
    log = tmp_path / "kubectl.log"
    env = dict(os.environ, KUBECTL_LOG=str(log), KUBECTL_DIFFERS="30-spiderippools.yaml",
               PATH=str(bin_dir) + os.pathsep + BIN + os.pathsep + os.environ.get("PATH", ""),
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", str(inv), os.path.join(ROOT, "playbooks", "k8s.yml"),
           "-e", "k8s_objects_dest=%s" % dest, "-e", "k8s_objects_kubeconfig=/nonexistent/kubeconfig"]
    checked = subprocess.run(cmd + ["--check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                             check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    calls = log.read_text().splitlines()
    assert [c.split()[2] for c in calls] == ["diff"] * 3 and all(c.endswith(" (there)") for c in calls), calls
    copies = [c.split()[-2] for c in calls]
    assert not dest.exists() and not any(os.path.exists(path) for path in copies)  # nothing written, copies gone
    assert "changed=1" in checked.stdout and "kubectl: 30-spiderippools.yaml (check mode: not applied)" in \
        checked.stdout
    log.write_text("")
    failing = subprocess.run(cmd, cwd=ROOT, env=dict(env, KUBECTL_FAILS="1"), capture_output=True, text=True,
                             timeout=600, check=False)
    assert failing.returncode != 0
    assert "k8s_objects: kubectl diff of 10-configmaps.yaml failed (exit 2): error: the server could not be " \
        "reached" in failing.stdout, failing.stdout
    assert "second line" not in failing.stdout and "Traceback" not in failing.stdout + failing.stderr
    assert [c.split()[2] for c in log.read_text().splitlines()] == ["diff"]  # stopped at the first error
    control = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert control.returncode == 0 and "kubectl: 30-spiderippools.yaml (applied)" in control.stdout, control.stdout
