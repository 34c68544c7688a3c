# -*- coding: utf-8 -*-
"""Adversarial review of gpu_host and nic_link_type (issue 20): inputs and host states on which the modules broke
the project's bar (own only what they create, conflicts refused before any change, honest check mode, changed=0 on a
second run, safe by default, real-format parsing). Each test failed before its fix.

Hosts are the temporary trees and stand-in tools of test_gpu_host / test_nic_link_type (imported fixtures)."""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest
from ansible_collections.ainet.fabric.tests.unit.plugins.modules.host_task import run_module

from ansible_collections.ainet.fabric.plugins.module_utils.host import gpu_host_state as lib

from ansible_collections.ainet.fabric.tests.unit.plugins.modules import test_gpu_host
from ansible_collections.ainet.fabric.tests.unit.plugins.modules.test_gpu_host import RELEASE, files, run, tools
from ansible_collections.ainet.fabric.tests.unit.plugins.action import test_nic_link_type
from ansible_collections.ainet.fabric.tests.unit.plugins.action.test_nic_link_type import log

MLXCONFIG = os.path.join(os.path.dirname(__file__), "..", "module_utils", "data", "rdma", "mlxconfig")


# ======================================== gpu_host ==============================================================

@pytest.fixture
def host(tmp_path, monkeypatch):
    """test_gpu_host's Debian GPU node (H100, ConnectX-7, nouveau loaded, nova_core shipped, GRUB, an initramfs,
    booted without iommu=pt; stand-in update-grub, update-initramfs and grubby)."""
    return test_gpu_host.host.__wrapped__(tmp_path, monkeypatch)


# -- 1. grubby: an argument another tool set is recorded as ours, and later removed --------------------------------

def test_grubby_never_records_or_removes_an_argument_another_tool_set(capsys, host):
    """Every BLS entry already has iommu=pt (the installer's kickstart put it there): the role adds nothing, yet
    records iommu=pt as its own, and when the model drops it, removes the installer's argument."""
    os.makedirs(str(host / "cfg/boot/loader/entries"))
    theirs = {"/boot/vmlinuz-%s" % RELEASE: ["ro", "rhgb", "iommu=pt"], "/boot/vmlinuz-0-rescue": ["ro", "iommu=pt"]}
    (host / "bls.json").write_text(json.dumps(theirs))
    first = run(capsys, host)
    assert not any(line.startswith("grubby") for line in tools(host))  # nothing added by this role
    assert json.loads((host / "cfg" / lib.RECORD).read_text())["kernel_args"] == []
    run(capsys, host, kernel_args=[])
    assert json.loads((host / "bls.json").read_text()) == theirs, first["commands"]


# -- 2. GRUB files read line by line, not as the shell grub-mkconfig sources them -------------------------------------

def test_a_conflict_split_over_a_line_continuation_is_refused(capsys, host):
    (host / "cfg/etc/default/grub").write_text('GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX="console=ttyS0,115200n8 \\\n'
                                               '    iommu=off"\n')
    result = run(capsys, host)
    assert result.get("failed") and files(host) == {} and tools(host) == []
    assert "/etc/default/grub sets iommu=off (wanted: iommu=pt)" in result["msg"]


def test_a_conflict_through_a_shell_variable_is_refused(capsys, host):
    (host / "cfg/etc/default/grub").write_text('IOMMU="iommu=off"\nGRUB_CMDLINE_LINUX="quiet $IOMMU"\n')
    result = run(capsys, host)
    assert result.get("failed") and files(host) == {} and tools(host) == []


def test_a_conflict_after_a_semicolon_is_refused(capsys, host):
    (host / "cfg/etc/default/grub").write_text('GRUB_TIMEOUT=5; GRUB_CMDLINE_LINUX="iommu=off"\n')
    result = run(capsys, host)
    assert result.get("failed") and files(host) == {} and tools(host) == []


def test_a_value_the_shell_overwrites_is_no_conflict(capsys, host):
    # the later assignment replaces the first one: grub-mkconfig never sees iommu=off
    (host / "cfg/etc/default/grub").write_text('GRUB_CMDLINE_LINUX="iommu=off"\nGRUB_CMDLINE_LINUX=""\n')
    result = run(capsys, host)
    assert not result.get("failed"), result.get("msg")


def test_a_later_grub_d_file_that_resets_the_command_line_is_refused(capsys, host):
    """grub-mkconfig sources grub.d/*.cfg in order; 90-serial.cfg assigns GRUB_CMDLINE_LINUX without
    $GRUB_CMDLINE_LINUX, so 60-ainet-gpu-host.cfg's iommu=pt never reaches grub.cfg, yet the run succeeds, reports
    "set for the next boot" and every later run reports changed=0."""
    os.makedirs(str(host / "cfg/etc/default/grub.d"))
    (host / "cfg/etc/default/grub.d/90-serial.cfg").write_text('GRUB_CMDLINE_LINUX="console=ttyS0,115200n8"\n')
    result = run(capsys, host)
    assert result.get("failed") and files(host) == {} and tools(host) == []
    assert "/etc/default/grub.d/90-serial.cfg" in result["msg"]


def test_a_grub_that_does_not_read_grub_d_gets_no_drop_in(capsys, host):
    """SUSE / Fedora-style GRUB (grub2-mkconfig, /boot/grub2/grub.cfg, no BLS): upstream grub-mkconfig sources only
    /etc/default/grub; /etc/default/grub.d is a Debian patch. The drop-in is written, grub2-mkconfig runs, nothing
    of it reaches grub.cfg, and the run reports success with iommu=pt "set for the next boot"."""
    bin_dir = host / "bin"
    os.rename(str(bin_dir / "update-grub"), str(bin_dir / "grub2-mkconfig"))
    # an upstream grub-mkconfig too (the same stand-in, no grub.d in it): the module looks for grub-mkconfig first,
    # and a machine running these tests may have Debian's in /usr/sbin, which does read grub.d
    shutil.copy(str(bin_dir / "grub2-mkconfig"), str(bin_dir / "grub-mkconfig"))
    os.remove(str(bin_dir / "grubby"))
    os.makedirs(str(host / "cfg/boot/grub2"))
    (host / "cfg/boot/grub2/grub.cfg").write_text("")
    (host / "cfg/etc/os-release").write_text('ID="sles"\nID_LIKE="suse"\nVERSION_ID="15.6"\n')
    result = run(capsys, host, blacklist=[], memlock=False)
    assert result.get("failed") and lib.GRUB_DROPIN not in files(host), result["commands"]


# -- 3. a failed step is forgotten: the next run reports changed=0 -------------------------------------------------

def test_a_failed_update_grub_is_retried_by_the_next_run(capsys, host, monkeypatch):
    monkeypatch.setenv("STANDIN_RC_update_grub", "1")
    assert run(capsys, host)["failed"]
    monkeypatch.delenv("STANDIN_RC_update_grub")
    again = run(capsys, host)
    assert again["changed"] and "update-grub" in again["commands"], again["commands"]


def test_a_failed_initramfs_rebuild_is_retried_by_the_next_run(capsys, host, monkeypatch):
    monkeypatch.setenv("STANDIN_RC_update_initramfs", "1")
    assert run(capsys, host)["failed"]
    monkeypatch.delenv("STANDIN_RC_update_initramfs")
    again = run(capsys, host)
    assert again["changed"] and "update-initramfs -u -k all" in again["commands"], again["commands"]


# -- 4. check mode does not predict the real run ------------------------------------------------------------------

def test_check_mode_on_a_read_only_config_root_predicts_the_failure(capsys, host, monkeypatch):
    cfg = str(host / "cfg")
    real_access = os.access
    # a read-only /etc (root ignores permission bits, so the read-only mount is simulated where it is asked)
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: False if str(path).startswith(cfg) and mode & os.W_OK
                        else real_access(path, mode, **kw))
    check = run(capsys, host, check=True)
    real = run(capsys, host)
    assert real["failed"] and "cannot write" in real["msg"]
    assert check.get("failed"), "check mode said changed=%s, the real run failed" % check["changed"]


# -- 5. a dropped argument still in /proc/cmdline is no pending reboot ----------------------------------------------

def test_a_dropped_argument_still_running_is_a_pending_reboot(capsys, host):
    run(capsys, host)
    (host / "sys/proc/cmdline").write_text("BOOT_IMAGE=/boot/vmlinuz root=UUID=1 ro quiet iommu=pt\n")
    dropped = run(capsys, host, kernel_args=[])
    assert dropped["changed"] and "update-grub" in dropped["commands"]
    assert any("iommu=pt" in line for line in dropped["reboot_pending"]), dropped["reboot_pending"]


# -- 6. blacklist entries are written unchecked ---------------------------------------------------------------------

def test_a_blacklist_entry_that_is_not_one_module_name_is_refused(capsys, host):
    result = run(capsys, host, blacklist=["nouveau", "nvidiafb\ninstall nvidia /bin/false"])
    assert result.get("failed") and "\n" not in result["msg"]
    assert lib.BLACKLIST_FILE not in files(host)


# ======================================== nic_link_type =========================================================

@pytest.fixture
def nic_host(tmp_path, monkeypatch):
    """test_nic_link_type's host (a dual-port ConnectX-7 at 0000:3b:00, eno1 with the default route), under another
    name beside test_gpu_host's host."""
    return test_nic_link_type.host.__wrapped__(tmp_path, monkeypatch)


def _flat(capsys, root, ports, **args):
    return run_module(capsys, "nic_link_type", dict(ports=ports, sysfs_root=str(root / "root"), **args))


def _ip(root, routes="[]", addrs="[]", routes6="[]", all_tables=None):
    table = "*table*) echo '%s';; " % all_tables if all_tables is not None else ""
    (root / "bin" / "ip").write_text("#!/bin/sh\ncase \"$*\" in %s*-6*route*) echo '%s';; *route*) echo '%s';; "
                                     "*) echo '%s';; esac\n" % (table, routes6, routes, addrs))


# -- 7. one port wanted as two link types (by name and by PCI address) flips at every run ---------------------------

def test_one_port_wanted_by_name_and_by_pci_with_two_link_types_is_refused(capsys, nic_host):
    ports = [{"nic": "ens6f0np0", "link_type": "ETH", "source": "fabric storage"},
             {"pci": "0000:3b:00.0", "link_type": "IB", "source": "nic_link_type_ports[0]"}]
    first = _flat(capsys, nic_host, ports)
    second = _flat(capsys, nic_host, ports)
    # as reviewed: set P1=1, then P1=2, then P1=1 ... never changed=0
    assert first.get("failed") and log(nic_host) == [], (first["commands"], second["commands"])
    assert "ens6f0np0" in first["msg"] and "0000:3b:00.0" in first["msg"]


# -- 8. management paths the reset does not see ---------------------------------------------------------------------

def test_no_reset_under_an_ovs_bridge_that_carries_the_default_route(capsys, nic_host):
    """OVS (OpenShift br-ex, OpenStack): the default route is on the bridge's internal port, the ConnectX port is an
    OVS port (master ovs-system); sysfs has no lower_/brif link between them."""
    _ip(nic_host, routes=json.dumps([{"dst": "default", "gateway": "10.0.0.1", "dev": "br-ex"}]))
    net = nic_host / "root/sys/class/net"
    os.makedirs(str(net / "br-ex"))
    os.makedirs(str(net / "ovs-system"))
    os.symlink(str(net / "ovs-system"), str(net / "ens6f0np0/master"))
    os.symlink(str(net / "ovs-system"), str(net / "ens6f0np0/upper_ovs-system"))
    result = _flat(capsys, nic_host, [{"nic": "ens6f1np1", "link_type": "IB"}], reset=True)
    assert result.get("failed") and log(nic_host) == [], result["commands"]


def test_no_reset_of_a_nic_whose_default_route_is_in_another_table(capsys, nic_host):
    """A management VRF / policy routing: the default route lives in table mgmt, `ip route show default` (main table)
    lists none."""
    _ip(nic_host, all_tables=json.dumps([{"dst": "default", "gateway": "10.0.0.1", "dev": "ens6f0np0",
                                          "table": "mgmt", "flags": []}]))
    result = _flat(capsys, nic_host, [{"nic": "ens6f1np1", "link_type": "IB"}], reset=True)
    assert result.get("failed") and log(nic_host) == [], result["commands"]


def test_no_reset_when_the_management_address_is_a_host_name(capsys, nic_host, monkeypatch):
    """The action plugin sends ansible_host, in most inventories a DNS name. Under become, sudo's env_reset removes
    SSH_CONNECTION, so the name is what protects the NIC the session came in on: it is resolved on the host (here
    gpu01.example resolves to 10.9.0.5, held by ens6f1np1)."""
    import socket
    monkeypatch.delenv("SSH_CONNECTION", raising=False)
    real = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lambda name, *a, **k: [
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.9.0.5", 0))] if name == "gpu01.example" else real(name, *a, **k))
    _ip(nic_host, routes=json.dumps([{"dst": "default", "gateway": "10.0.0.1", "dev": "eno1"}]),
        addrs=json.dumps([{"ifname": "ens6f1np1", "addr_info": [{"family": "inet", "local": "10.9.0.5",
                                                                 "prefixlen": 24}]}]))
    result = _flat(capsys, nic_host, [{"nic": "ens6f1np1", "link_type": "IB"}], reset=True,
                   management_addresses=["gpu01.example"])
    assert result.get("failed") and log(nic_host) == [], result["commands"]
    assert "ens6f1np1: holds 10.9.0.5, the address this session came in on" in result["msg"]


# -- 9. ConnectX-3: both ports on one PCI function; port 2 is set as port 1 ------------------------------------------

def test_connectx3_second_port_is_port_2_not_port_1(capsys, tmp_path, monkeypatch):
    """mlx4 (ConnectX-3, which the module supports through mstconfig): one PCI function 0000:09:00.0 carries both
    ports; port 2's netdev is enp9s0d1 (dev_port 1), its RDMA port is ports/2. The firmware (recorded TrueNAS query)
    holds P1 IB, P2 ETH. Wanting ETH on enp9s0d1 needs nothing; the module sets LINK_TYPE_P1=2, turning port 1
    (InfiniBand) into Ethernet."""
    root = tmp_path / "root"
    dev = root / "sys/bus/pci/devices/0000:09:00.0"
    for port, layer in (("1", "InfiniBand"), ("2", "Ethernet")):
        os.makedirs(str(dev / "infiniband/mlx4_0/ports" / port))
        (dev / "infiniband/mlx4_0/ports" / port / "link_layer").write_text(layer + "\n")
    (dev / "vendor").write_text("0x15b3\n")
    for nic, dev_port, arphrd in (("ib0", "0", "32"), ("enp9s0d1", "1", "1")):
        net = root / "sys/class/net" / nic
        os.makedirs(str(net))
        os.symlink(str(dev), str(net / "device"))
        (net / "dev_port").write_text(dev_port + "\n")
        (net / "type").write_text(arphrd + "\n")
    bin_dir = tmp_path / "bin"
    os.makedirs(str(bin_dir))
    (bin_dir / "mstconfig").write_text(
        "#!%s\nimport os, sys\nopen(os.environ['STANDIN_LOG'], 'a').write('mstconfig ' + ' '.join(sys.argv[1:]) + "
        "'\\n')\nif sys.argv[-1] == 'q':\n    sys.stdout.write(open(%r).read())\n"
        % (sys.executable, os.path.join(MLXCONFIG, "truenas-cx3-mstconfig-ib-eth.txt")))
    os.chmod(str(bin_dir / "mstconfig"), 0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("STANDIN_LOG", str(tmp_path / "tools.log"))
    result = _flat(capsys, tmp_path, [{"nic": "enp9s0d1", "link_type": "ETH", "source": "fabric storage"}])
    assert result["commands"] == [] and not result["changed"], result["commands"]
    assert result["ports"][0]["port"] == 2
