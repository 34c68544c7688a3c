# -*- coding: utf-8 -*-
"""Where the host modules write and which names may become paths.

- The host lock lives in a private runtime directory (host_files.private_dir): created 0700, refused when it is a
  symbolic link, not a directory, another user's, or writable by group or others; the lock file itself is never
  opened through a link. Each refusal has one thing wrong; the control is a fresh directory.
- An interface name from the inventory (or a host module's flat options) never becomes a path or a word in a host
  file: common.linux_names (the kernel's dev_valid_name, and the narrower host rule), enforced by the host roles
  that build /sys paths, unit lines and network files from a name, and by the runner for every /sys, /proc, /etc
  path as a last net.

The threat model this file proves part of: docs/security.md (output grammars: paths, network files, sysctl.d; files on hosts).
"""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.common import linux_names
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host import host_files
from ansible_collections.ainet.fabric.plugins.module_utils.host import nic_link_type_state
from ansible_collections.ainet.fabric.plugins.module_utils.host import rail_intent
from ansible_collections.ainet.fabric.plugins.module_utils.host import roce_qos_state
from ansible_collections.ainet.fabric.plugins.module_utils.host import sriov_state
from ansible_collections.ainet.fabric.plugins.module_utils.host.runner import Runner

NOBODY = 65534


# -- the private runtime directory and the lock ----------------------------------------------------------------

def test_control_a_fresh_directory_is_created_0700_and_locks(tmp_path):
    run = tmp_path / "run"
    with host_files.Lock("/", 1, directory=str(run)) as lock:
        info = os.lstat(str(run))
        assert stat.S_ISDIR(info.st_mode) and info.st_mode & 0o777 == 0o700 and info.st_uid == os.geteuid()
        assert os.stat(lock.path).st_mode & 0o777 == 0o600
        with pytest.raises(TimeoutError):
            with host_files.Lock("/", 0, directory=str(run)):
                pass
    with host_files.Lock("/", 0, directory=str(run)):
        pass


def test_the_default_directory_is_never_world_writable():
    private = os.path.join(os.environ.get("XDG_RUNTIME_DIR", "?"), "ainet-fabric")
    assert host_files.run_dir() in (host_files.RUN_DIR, private)
    assert "/tmp" not in host_files.run_dir() and "/run/lock" not in host_files.run_dir()


def unsafe(run):
    with pytest.raises(host_files.UnsafeDirectory) as info:
        with host_files.Lock("/", 0, directory=str(run)):
            pass
    assert str(run) in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, FabricError)
    return str(info.value)


def test_a_symbolic_link_is_refused(tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir(mode=0o700)
    (tmp_path / "run").symlink_to(real)
    unsafe(tmp_path / "run")
    assert os.listdir(str(real)) == []


def test_a_file_is_refused(tmp_path):
    (tmp_path / "run").write_text("")
    unsafe(tmp_path / "run")


@pytest.mark.parametrize("mode, words", [(0o1777, "writable by others"), (0o770, "writable by its group"),
                                         (0o702, "writable by others")])
def test_a_directory_others_may_write_is_refused(tmp_path, mode, words):
    run = tmp_path / "run"
    run.mkdir()
    os.chmod(str(run), mode)
    assert words in unsafe(run)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the directory to another user")
def test_another_users_directory_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    os.chown(str(run), NOBODY, NOBODY)
    assert "belongs to uid %d" % NOBODY in unsafe(run)


def test_a_lock_file_that_is_a_link_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    target = tmp_path / "victim"
    target.write_text("keep\n")
    lock = host_files.Lock("/", 0, directory=str(run))
    os.symlink(str(target), lock.path)
    with pytest.raises(host_files.UnsafeDirectory) as info:
        with lock:
            pass
    assert lock.path in str(info.value)
    assert target.read_text() == "keep\n"


def test_a_lock_file_that_is_a_fifo_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    lock = host_files.Lock("/", 0, directory=str(run))
    os.mkfifo(lock.path)
    with pytest.raises(host_files.UnsafeDirectory):
        with lock:
            pass


# -- interface names ---------------------------------------------------------------------------------------------

HOSTILE = ["../x", "..", ".", "a/b", "eth0 ", "a b", "a\nb", "a;reboot", "a*", "a%d", "eth$x", "a'b", 'a"b', "-x",
           "x" * 16, "", "\u00e0b", "a:1", None, 7]
GOOD = ["ens1f0np0", "eth0", "bond0.100", "ib0", "enp1s0f1", "x" * 15, "a-b_c"]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_refused_in_one_line(name):
    problem = linux_names.host_ifname_problem(name, "rails[0].interface")
    assert problem and problem.startswith("rails[0].interface %r " % (name,)) and "\n" not in problem


@pytest.mark.parametrize("name", GOOD)
def test_control_real_names_pass(name):
    assert linux_names.host_ifname_problem(name, "x") is None and linux_names.kernel_ifname_ok(name)


@pytest.mark.parametrize("name, ok", [("a;b", True), ("a*", True), ("..", False), ("a/b", False), ("a b", False),
                                      ("a%d", False), ("a:b", False), ("x" * 16, False), ("x" * 15, True),
                                      ("\u00e0", False), ("\u00e9", True)])
def test_the_kernel_rule_is_dev_valid_name(name, ok):
    # U+00E0 is C3 A0 in UTF-8: the kernel's isspace(0xA0) refuses it; U+00E9 (C3 A9) passes
    assert linux_names.kernel_ifname_ok(name) is ok


def test_sriov_refuses_a_pf_name_that_would_be_a_path():
    entry = {"name": "../../../../etc", "vfs": 4, "trust": True, "spoof_check": False, "link_state": "auto"}
    with pytest.raises(sriov_state.SriovError) as info:
        sriov_state.check_wanted([entry])
    assert "pfs[0].name '../../../../etc'" in str(info.value)
    entry["name"] = "ens1f0np0"
    assert "ens1f0np0" in sriov_state.check_wanted([entry])


def test_roce_qos_refuses_a_nic_name_that_would_be_a_path():
    with pytest.raises(roce_qos_state.QosError) as info:
        roce_qos_state.check_settings({"name": "../x", "pfc": [3]})
    assert "nics[].name '../x'" in str(info.value)
    good = {"name": "ens1f0np0", "pfc": [3], "cnp_dscp": 48, "cnp_priority": 6, "roce_tos": 106}
    assert roce_qos_state.check_settings(good)["pfc"] == [3]
    with pytest.raises(ValueError):
        roce_qos_state.nic_actions({"name": "x"}, "ens1f0np0", "mlnx_qos", rdma_device="../mlx5_0")


def test_nic_link_type_refuses_a_nic_name_that_would_be_a_path():
    with pytest.raises(nic_link_type_state.LinkTypeError) as info:
        nic_link_type_state.check_ports([{"nic": "a/../../b", "link_type": "ETH"}])
    assert "ports[0].nic 'a/../../b'" in str(info.value)
    assert nic_link_type_state.check_ports([{"nic": "ens1f0np0", "link_type": "ETH"}])


def test_rail_interfaces_refuses_an_interface_name_that_would_be_a_path():
    with pytest.raises(FabricError) as info:
        rail_intent.intent_from_state("c", [], [{"interface": "../../sys/x", "fabric": "f"}])
    assert "rails[0].interface '../../sys/x'" in str(info.value)


class _Module(object):
    pass


@pytest.mark.parametrize("path", ["/sys/class/net/../../etc/shadow", "/sys/class/net/..", "/proc/sys/net/a\0b"])
def test_the_runner_never_joins_a_path_that_climbs(path, tmp_path):
    runner = Runner(_Module(), str(tmp_path), str(tmp_path))
    with pytest.raises(FabricError) as info:
        runner.sys(path)
    assert repr(path) in str(info.value)
    with pytest.raises(FabricError):
        runner.conf(path)
    with pytest.raises(FabricError):
        runner.write_sys(path, "1")
    assert runner.sys("/sys/class/net/a..b/x") == str(tmp_path / "sys/class/net/a..b/x")


RAIL = {"fabric": "f", "rail": 1, "interface": "ens1f0np0", "address": "172.16.0.1/31", "ip": "172.16.0.1",
        "subnet": "172.16.0.0/31", "gateway": "172.16.0.0", "mtu": 9000}


@pytest.mark.parametrize("key, value", [("address", "172.16.0.1/31\n[Network]\nDNS=1.1.1.1"), ("address", " 172.16.0.1/31"),
                                        ("ip", "172.16.0.1 172.16.0.9"), ("subnet", "172.16.0.0/31\nx=y"),
                                        ("gateway", "fe80::1%eth0"), ("gateway", "172.16.0.0;"), ("ip", None)])
def test_rail_addresses_that_would_be_syntax_in_a_network_file_are_refused(key, value):
    with pytest.raises(FabricError) as info:
        rail_intent.check_rail(3, dict(RAIL, **{key: value}))
    assert str(info.value).startswith("rail_interfaces: rails[3].%s %r is not an IP" % (key, value))


def test_control_a_rail_entry_of_the_plan_passes():
    assert rail_intent.check_rail(0, RAIL) is None
    assert rail_intent.check_rail(0, dict(RAIL, gateway=None)) is None
    assert rail_intent.check_rail(0, dict(RAIL, address="fd00::1/127", ip="fd00::1", subnet="fd00::/127",
                                          gateway="fd00::")) is None


@pytest.mark.parametrize("path, value", [("net/ipv4/conf/../../x", "1"), ("-net/ipv4/ip_forward", "1"),
                                         ("#x", "1"), ("net/x", "1\nkernel/panic = 1"), ("net/x", " 1"),
                                         ("net/x\r", "1"), ("net/a b", "1"), ("net/a=b", "1"), ("", "1")])
def test_sysctl_lines_that_would_be_other_lines_are_refused(path, value):
    from ansible_collections.ainet.fabric.plugins.module_utils.common.file_formats import sysctl_dump
    with pytest.raises(ValueError) as info:
        sysctl_dump({path: value})
    assert repr(path) in str(info.value)
    assert sysctl_dump({"net/ipv4/conf/bond0.100/rp_filter": 2}) == "net/ipv4/conf/bond0.100/rp_filter = 2\n"


@pytest.mark.parametrize("name", ["nouveau\ninstall nouveau /bin/sh", "nouveau install", "a;b", "../x", ""])
def test_a_blacklist_entry_is_a_module_name_never_a_modprobe_directive(name):
    from ansible_collections.ainet.fabric.plugins.module_utils.host import gpu_host_state
    with pytest.raises(gpu_host_state.GpuHostError) as info:
        gpu_host_state.check_blacklist(["nouveau", name])
    assert "blacklist[1] %r" % name in str(info.value)
    assert gpu_host_state.check_blacklist(["nouveau", "nova_core"]) == ["nouveau", "nova_core"]
