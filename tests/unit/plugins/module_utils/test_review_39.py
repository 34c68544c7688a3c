# -*- coding: utf-8 -*-
"""Review 39 (security field review, docs/reviews/39-security.md): the defects found by attacking the names,
secrets and file-mode boundaries, each as a case with exactly one hostile value and its control. The defects are
marked ``xfail(strict=True)``: the lead flips each mark when the fix lands.

Oracles: RFC 3986 section 3.2.1 (userinfo: unreserved, pct-encoded, sub-delims, ":" - a "/" must be
percent-encoded, and Python's ``urlsplit`` ends the authority at the first "/"); POSIX ``umask``/``mkdir``
(``os.makedirs`` creates each missing parent with ``0o777 & ~umask``); procps ``pgrep``/``pkill -f`` (an
extended regular expression searched in the whole command line: ``|`` alternates at the top level, so an
unescaped ``|`` in a word lets an empty or foreign branch match other processes); Spiderpool's SpiderIPPool is a
cluster-scoped object keyed by its name (spidernet-io/spiderpool ``pkg/k8s/apis/spiderpool.spidernet.io/v2beta1``),
so two objects with one name are one object after ``kubectl apply``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections import Counter

import pytest
import yaml

from ansible_collections.ainet.fabric.plugins.action import lossless_test as lossless_action
from ansible_collections.ainet.fabric.plugins.module_utils.common import secrets
from ansible_collections.ainet.fabric.plugins.module_utils.host import host_files
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan
from ansible_collections.ainet.fabric.plugins.module_utils.rdma import rdma_gather
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_objects

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
TOKEN = "rv39PLANTEDtoken"


# -- D1: the host roles' state directory is created with the caller's umask -----------------------------------------

def _record_dir_mode(tmp_path, umask):
    old = os.umask(umask)
    try:
        host_files.write_record(str(tmp_path), {"default": {"addresses": []}})
    finally:
        os.umask(old)
    return os.stat(os.path.join(str(tmp_path), "var/lib/ainet-fabric")).st_mode & 0o777


def test_d1_control_the_record_directory_under_the_usual_umask_is_not_writable_by_others(tmp_path):
    assert _record_dir_mode(tmp_path, 0o022) & 0o022 == 0


def test_d1_the_record_directory_is_never_writable_by_others_whatever_the_umask(tmp_path):
    assert _record_dir_mode(tmp_path, 0o000) & 0o022 == 0


@pytest.mark.parametrize("umask", [0o000, 0o002, 0o077])
def test_d1_every_directory_written_into_is_created_0755_whatever_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        host_files.write_atomic(str(tmp_path / "etc/default/grub.d/ainet.cfg"), "x\n", "0644")
    finally:
        os.umask(old)
    for rel in ("etc", "etc/default", "etc/default/grub.d"):
        assert os.stat(str(tmp_path / rel)).st_mode & 0o777 == 0o755, rel
    assert os.stat(str(tmp_path / "etc/default/grub.d/ainet.cfg")).st_mode & 0o777 == 0o644


def test_d1_control_an_existing_directory_keeps_its_mode(tmp_path):
    (tmp_path / "etc").mkdir(mode=0o750)
    os.chmod(str(tmp_path / "etc"), 0o750)
    host_files.write_atomic(str(tmp_path / "etc/x"), "x\n", "0644")
    assert os.stat(str(tmp_path / "etc")).st_mode & 0o777 == 0o750


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_d1_a_state_directory_others_may_write_is_refused_before_writing(tmp_path, mode):
    state = tmp_path / "var/lib/ainet-fabric"
    state.mkdir(parents=True)
    os.chmod(str(state), mode)
    with pytest.raises(host_files.UnsafeDirectory) as exc:
        host_files.write_record(str(tmp_path), {"default": {"addresses": []}})
    assert "writable by" in str(exc.value) and str(state) in str(exc.value)
    assert os.listdir(str(state)) == []


def test_d1_control_a_state_directory_of_its_own_is_written(tmp_path):
    state = tmp_path / "var/lib/ainet-fabric"
    state.mkdir(parents=True)
    os.chmod(str(state), 0o755)
    host_files.write_record(str(tmp_path), {"default": {"addresses": []}})
    assert host_files.read_record(str(tmp_path))["fabrics"] == {"default": {"addresses": []}}


def test_d1_a_state_directory_that_is_a_link_is_refused(tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir()
    (tmp_path / "var/lib").mkdir(parents=True)
    os.symlink(str(real), str(tmp_path / "var/lib/ainet-fabric"))
    with pytest.raises(host_files.UnsafeDirectory):
        host_files.write_record(str(tmp_path), {})
    assert os.listdir(str(real)) == []


# -- D2: per-node SpiderIPPool names are made from the inventory name, not from the Kubernetes node name ------------

def _pool_names(hosts, node_names=None):
    cluster = {"name": "c", "rails": 1, "mtu": 9000, "cni": "macvlan",
               "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27},
               "kubernetes": {"ipam": "spiderpool"}}
    plan = rail_plan(cluster, dict((h, {"node_id": i + 1, "rail_interfaces": ["ens1"]}) for i, h in enumerate(hosts)))
    objects = k8s_objects.render(plan, node_names=node_names)
    return [o["metadata"]["name"] for o in objects if o["kind"] == "SpiderIPPool"]


def test_d2_control_two_hosts_get_two_pools():
    names = _pool_names(["gpu-1", "gpu-2"])
    assert len(names) == 2 and len(set(names)) == 2


def test_d2_hosts_whose_names_differ_in_punctuation_get_pools_of_their_own():
    try:
        names = _pool_names(["gpu_1", "gpu-1"], node_names={"gpu_1": "node-a"})
    except Exception as exc:  # a refusal naming the collision is a fix too
        assert "gpu_1" in str(exc) or "gpu-1" in str(exc)
        return
    assert [n for n, c in Counter(names).items() if c > 1] == []


def _d2_plan(hosts):
    cluster = {"name": "c", "rails": 1, "mtu": 9000, "cni": "macvlan",
               "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 24, "node_prefix": 27},
               "kubernetes": {"ipam": "spiderpool"}}
    return rail_plan(cluster, dict((h, {"node_id": i + 1, "rail_interfaces": ["ens1"]}) for i, h in enumerate(hosts)))


def test_d2_a_node_pool_is_named_from_the_kubernetes_node_name():
    names = _pool_names(["gpu_1", "gpu-1"], node_names={"gpu_1": "node-a"})
    assert sorted(names) == ["c-rail1-gpu-1", "c-rail1-node-a"]


def test_d2_check_against_plan_reports_two_objects_with_one_name_naming_both_hosts():
    plan = _d2_plan(["gpu-1", "gpu-2"])
    objects = k8s_objects.render(plan)
    pools = [o for o in objects if o["kind"] == "SpiderIPPool"]
    pools[1]["metadata"]["name"] = pools[0]["metadata"]["name"]
    problems = k8s_objects.check_against_plan(plan, objects)
    found = [p for p in problems if "both" in p]
    assert len(found) == 1 and "node gpu-1" in found[0] and "node gpu-2" in found[0], problems


def test_d2_control_check_against_plan_finds_no_collision_in_what_render_gives():
    plan = _d2_plan(["gpu_1", "gpu-1"])
    node_names = {"gpu_1": "node-a"}
    assert not [p for p in k8s_objects.check_against_plan(plan, k8s_objects.render(plan, node_names=node_names),
                                                          node_names=node_names) if "both" in p]


# -- D5: a mirror password holding a raw "/" is printed, and with a numeric start kept in the URL --------------------

@pytest.mark.parametrize("url", ["https://mu:%s@mirror.example/doca/" % TOKEN,
                                 "https://mu:%s%%2Fx@mirror.example/doca/" % TOKEN])
def test_d5_control_a_login_is_split_off(url):
    clean = secrets.url_credentials(url, "doca_ofed_mirror")
    assert TOKEN not in clean["url"] and clean["password"].startswith(TOKEN)


def test_d5_a_password_with_a_raw_slash_is_not_printed_in_the_refusal():
    url = "https://mu:ab/%s@mirror.example/doca/" % TOKEN
    try:
        clean = secrets.url_credentials(url, "doca_ofed_mirror")
    except secrets.SecretError as exc:
        assert TOKEN not in str(exc)
        return
    assert TOKEN not in clean["url"]


def test_d5_a_password_with_digits_then_a_raw_slash_never_stays_in_the_url():
    url = "https://mu:12/%s@mirror.example/doca/" % TOKEN
    try:
        clean = secrets.url_credentials(url, "doca_ofed_mirror")
    except secrets.SecretError as exc:
        assert TOKEN not in str(exc)
        return
    assert TOKEN not in clean["url"]
    assert TOKEN in "".join(secrets.userinfo_secrets(url))


@pytest.mark.parametrize("url", ["https://mu:ab/%s@mirror.example/doca/" % TOKEN,
                                 "https://mu:12/%s@mirror.example/doca/" % TOKEN,
                                 "https://mu:%s/x@[2001:db8::1]:8443/doca/" % TOKEN,
                                 "https://mu:%s?x@mirror.example/" % TOKEN,
                                 "https://mu:%s#x@mirror.example/" % TOKEN,
                                 "https://mu:%s@x@mirror.example/" % TOKEN,
                                 "https://%s/x@mirror.example/" % TOKEN])
def test_d5_a_userinfo_with_a_raw_reserved_character_is_refused_and_masked(url):
    with pytest.raises(secrets.SecretError) as exc:
        secrets.url_credentials(url, "doca_ofed_mirror")
    assert str(exc.value).startswith("doca_ofed_mirror: ") and TOKEN not in str(exc.value)
    assert TOKEN not in secrets.redact_url(url)
    assert any(TOKEN in value for value in secrets.userinfo_secrets(url))


@pytest.mark.parametrize("url, login, password, clean", [
    ("https://mu:%s%%2Fx@mirror.example/doca/" % TOKEN, "mu", TOKEN + "/x", "https://mirror.example/doca/"),
    ("https://mu:%s%%40x@mirror.example:8443/d/" % TOKEN, "mu", TOKEN + "@x", "https://mirror.example:8443/d/"),
    ("https://mu:%s@[2001:db8::1]:8443/doca/" % TOKEN, "mu", TOKEN, "https://[2001:db8::1]:8443/doca/"),
    ("https://mu:12%s@mirror.example:12/doca/" % TOKEN, "mu", "12" + TOKEN, "https://mirror.example:12/doca/"),
])
def test_d5_control_a_clean_userinfo_is_split_off_with_any_host_and_port(url, login, password, clean):
    got = secrets.url_credentials(url, "doca_ofed_mirror")
    assert (got["url"], got["login"], got["password"]) == (clean, login, password)


def test_d5_control_a_url_without_at_sign_is_kept_and_an_at_sign_in_a_path_must_be_encoded():
    assert secrets.split_userinfo("https://m.example:12/a/b/", "f") == ("https://m.example:12/a/b/", None, None)
    assert secrets.split_userinfo("https://m.example/%40scope/", "f")[1] is None
    with pytest.raises(secrets.SecretError):
        secrets.split_userinfo("https://m.example/@scope/", "f")


# -- D6: an RDMA device name read from the node becomes part of pkill's regular expression ---------------------------

def _role_pkill_template(role, tasks_file):
    with open(os.path.join(ROOT, "roles", role, "tasks", tasks_file), encoding="utf-8") as handle:
        text = handle.read()
    found = []

    def walk(node):
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            cmd = node.get("ansible.builtin.command")
            if isinstance(cmd, dict) and isinstance(cmd.get("argv"), list) and cmd["argv"][:1] == ["pkill"]:
                found.append(cmd["argv"])
            for value in node.values():
                walk(value)
    walk(yaml.safe_load(text))
    assert len(found) == 1, found
    return found[0]


def _render(template, item):
    from ansible.parsing.dataloader import DataLoader  # pylint: disable=import-outside-toplevel
    from ansible.template import Templar  # pylint: disable=import-outside-toplevel
    try:
        from ansible.template import trust_as_template  # pylint: disable=import-outside-toplevel
    except ImportError:  # ansible-core before 2.19: every string is a template
        def trust_as_template(value):
            return value
    return Templar(loader=DataLoader(), variables={"item": item}).template(trust_as_template(template))


def _lossless_argv(device_name):
    """The sender's command line of a rail whose RDMA device the node reports as ``device_name``: through the
    same path as the job (rdma_gather.rails -> the action's rdma_rails -> perftest_argv); None when refused."""
    facts = {"devices": {device_name: {"netdevs": ["ens1"], "ports": {"1": {"netdev": "ens1"}},
                                       "gids": [{"type": "RoCE v2", "index": 3, "netdev": "ens1", "port": 1,
                                                 "ipv4": "172.17.0.1", "gid": "::ffff:172.17.0.1"}]}}}
    rails = rdma_gather.rails(facts, ["ens1"], {}, {"ens1": "172.17.0.1/24"})
    device = lossless_action.rdma_rails({"rails": rails}).get("ens1") or {}
    if device.get("rdma_device") is None or device.get("gid_index") is None:
        return None
    args = {"seconds": 10, "qps": 1, "message_size": 65536, "tx_depth": 0, "qp_timeout": 0, "rate_gbps": 0}
    return lossless_action.perftest_argv(device, args, 106, 18515, peer="172.17.0.2", timeout=100)


@pytest.fixture
def decoy():
    """A process whose command line is not the job's: ``rv39-decoy-sshd 120`` (a sleep under another argv[0])."""
    if not shutil.which("pgrep"):
        pytest.skip("pgrep (procps) is not installed")
    proc = subprocess.Popen(["bash", "-c", 'exec -a rv39-decoy-sshd sleep 120'])  # pylint: disable=consider-using-with
    try:
        for _attempt in range(50):
            if _matches("^rv39-decoy-sshd 120$", proc.pid):
                break
            time.sleep(0.1)
        assert _matches("^rv39-decoy-sshd 120$", proc.pid)  # the judge sees the decoy
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def _matches(pattern, pid):
    out = subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True, text=True, check=False).stdout
    return str(pid) in out.split()


def test_d6_control_the_stop_pattern_of_a_plain_device_matches_only_the_job(decoy):
    argv = _lossless_argv("mlx5_0")
    pattern = _render(_role_pkill_template("lossless_test", "step.yml")[3], {"argv": argv})
    assert not _matches(pattern, decoy)


@pytest.mark.parametrize("role, tasks_file", [("lossless_test", "step.yml"), ("link_test", "round.yml")])
def test_d6_a_device_name_read_from_the_node_never_widens_what_pkill_stops(decoy, role, tasks_file):
    argv = _lossless_argv("mlx5_0|rv39-decoy|")
    if argv is None:  # the name was refused where it was read: the fix at the source
        return
    pattern = _render(_role_pkill_template(role, tasks_file)[3], {"argv": argv})
    assert not _matches(pattern, decoy)


@pytest.mark.parametrize("name", ["mlx5_0|sshd|", "mlx5_0||x", "mlx5 0", "mlx5_0\n", "-mlx5", "m" * 64, "", "mlx5_(0)"])
def test_d6_a_device_name_outside_the_rule_is_never_returned_and_is_reported(name):
    facts = {"devices": {name: {"netdevs": ["ens1"], "ports": {"1": {"netdev": "ens1"}},
                                "gids": [{"type": "RoCE v2", "index": 3, "netdev": "ens1", "port": 1,
                                          "ipv4": "172.17.0.1", "gid": "::ffff:172.17.0.1"}]}}}
    rail = rdma_gather.rails(facts, ["ens1"], {}, {"ens1": "172.17.0.1/24"})[0]
    assert (rail["rdma_device"], rail["gid_index"]) == (None, None)
    assert "ens1" in rail["problem"] and repr(name) in rail["problem"]
    with pytest.raises(lossless_action.FabricError):
        lossless_action.perftest_argv({"rdma_device": name, "gid_index": 3}, {}, 106, 18515)


@pytest.mark.parametrize("name", ["mlx5_0", "rocep65s0f0", "ibp193s0", "irdma1", "rxe_eth0.10", "m" * 63])
def test_d6_control_the_names_drivers_and_rdma_rename_give_are_kept(name):
    facts = {"devices": {name: {"netdevs": ["ens1"], "ports": {"1": {"netdev": "ens1"}},
                                "gids": [{"type": "RoCE v2", "index": 3, "netdev": "ens1", "port": 1,
                                          "ipv4": "172.17.0.1", "gid": "::ffff:172.17.0.1"}]}}}
    rail = rdma_gather.rails(facts, ["ens1"], {}, {"ens1": "172.17.0.1/24"})[0]
    assert (rail["rdma_device"], rail["gid_index"], rail["problem"]) == (name, 3, None)


# -- D7: the SONiC YANG check quotes the running config_db's secrets in tor_config's refusal -------------------------

SONIC_YANG = os.environ.get("AINET_SONIC_YANG_DIR") or next(
    (p for p in (os.path.join(ROOT, "..", "shared", "validators", "sonic-yang-models"),
                 "/work/shared/validators/sonic-yang-models") if os.path.isdir(p)), None)


def _sonic_problems(extra):
    """The problems tor_config prints (its ``_validate``) for the lab's SONiC rendering of one node, checked merged
    into a stock running config_db holding ``extra`` tables."""
    pytest.importorskip("libyang")
    if not SONIC_YANG:
        pytest.skip("SONiC YANG models not found (AINET_SONIC_YANG_DIR)")
    import json  # pylint: disable=import-outside-toplevel
    import sys  # pylint: disable=import-outside-toplevel
    from ansible_collections.ainet.fabric.plugins.action import tor_config  # pylint: disable=import-outside-toplevel
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import test_nos_sonic  # pylint: disable=import-outside-toplevel
    _plan, item = test_nos_sonic.rendered(test_nos_sonic.PROFILES["nvidia"], port_speed="400G")
    running = dict(test_nos_sonic.stock("traditional"), **extra)
    problems, _note = tor_config._validate({"sonic_yang_dir": SONIC_YANG}, item, json.dumps(running))  # pylint: disable=protected-access
    return problems


def test_d7_control_a_running_config_db_the_models_refuse_is_refused_naming_why():
    problems = _sonic_problems({"SNMP_COMMUNITY": {"public": {"TYPE": "RW-BAD"}}})
    assert problems and "RW-BAD" in " ".join(problems)


@pytest.mark.parametrize("extra", [
    {"TACPLUS_SERVER": {"10.0.0.1": {"passkey": TOKEN + "x" * 260, "priority": "1", "tcp_port": "49"}}},
    {"SNMP_COMMUNITY": {TOKEN + "c" * 30: {"TYPE": "RO"}}},
], ids=["tacacs-passkey", "snmp-community"])
def test_d7_a_running_config_secret_is_never_quoted_by_the_schema_check(extra):
    problems = _sonic_problems(extra)
    assert problems  # refused, as it should be ...
    assert TOKEN not in " ".join(problems)  # ... without the secret


def test_d7_every_nos_schema_message_is_redacted_by_the_running_configs_secrets():
    from ansible_collections.ainet.fabric.plugins.module_utils.tor import config_redact  # pylint: disable=import-outside-toplevel
    cli = "snmp-server community %s ro\ntacacs-server host 10.0.0.1 key 7 %sk\ninterface Ethernet1\n" % (TOKEN, TOKEN)
    hidden = config_redact.config_secrets(cli)
    message = 'Ethernet1: value "%s" refused at /snmp/community[name=\'%s\'], key %sk' % (TOKEN, TOKEN, TOKEN)
    assert TOKEN not in config_redact.redact_values(message, hidden)
    nvue = '{"system": {"snmp-server": {"readonly-community": {"%s": {}}}}, "x": {"passkey": "ab1"}}' % TOKEN
    hidden = config_redact.config_secrets(nvue)
    out = config_redact.redact_values('community "%s" too long; passkey "ab1" refused, vlan 1ab1' % TOKEN, hidden)
    assert TOKEN not in out and '"ab1"' not in out and "vlan 1ab1" in out


def test_d7_control_a_message_without_secrets_is_kept_as_it_is():
    from ansible_collections.ainet.fabric.plugins.module_utils.tor import config_redact  # pylint: disable=import-outside-toplevel
    hidden = config_redact.config_secrets('{"SNMP_COMMUNITY": {"%s": {"TYPE": "RO"}}}' % TOKEN)
    message = 'Invalid value "RW-BAD" in "TYPE" element. (Data location "/sonic-snmp:sonic-snmp/SNMP_COMMUNITY")'
    assert config_redact.redact_values(message, hidden) == message
