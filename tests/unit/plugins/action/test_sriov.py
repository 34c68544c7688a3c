# -*- coding: utf-8 -*-
"""The sriov module in-process on a sysfs tree in a temporary directory, with a stand-in ``ip`` on PATH that
keeps the PFs' VF settings (what ``ip -j -d address show`` prints, in the shape of the VM tier's recorded
``tests/vm/recorded/ip_j_d_link_pf_with_vfs.txt``) and records every call. Proves the command-level
behaviour: check mode changes nothing, refusals come before any change, a second run changes nothing, the
record and the unit are the only files written. The kernel side (VFs really created, settings really
applied, surviving a reboot) is proven on the VM tier (molecule/rdma_vm)."""

from __future__ import annotations

import copy
import json
import os
import sys

import pytest
from ansible_collections.ainet.fabric.tests.unit.plugins.modules.host_task import run_module
from ansible_collections.ainet.fabric.tests.unit.plugins.action.task_runner import run_task

from ansible_collections.ainet.fabric.plugins.module_utils.host.sriov_state import rebind_script

STANDIN = r'''
import json, os, sys
state_path, root = os.environ["STANDIN_STATE"], os.environ["STANDIN_SYSFS"]
with open(state_path) as h:
    state = json.load(h)
with open(os.environ["STANDIN_LOG"], "a") as h:
    h.write(" ".join(sys.argv[1:]) + "\n")
args = sys.argv[1:]
if args[:1] == ["-j"]:
    out = []
    for pf, info in sorted(state.items()):
        with open(os.path.join(root, "sys/class/net", pf, "device/sriov_numvfs")) as h:
            num = int(h.read().strip() or 0)
        if info.get("ib"):  # an IPoIB PF (mlx5): data/sriov_ib/ORIGIN.md
            vfs = [dict({"vf": i, "link_type": "infiniband", "address": info["mac"], "spoofchk": False,
                         "node guid": "00:00:00:00:00:00:00:00", "port guid": "00:00:00:00:00:00:00:00",
                         "link_state": "auto", "trust": False, "query_rss_en": False}, **info.get(str(i), {}))
                   for i in range(num)]
        else:
            vfs = [dict({"vf": i, "address": "00:00:00:00:00:00", "spoofchk": True, "trust": False,
                         "link_state": "auto"}, **info.get(str(i), {})) for i in range(num)]
        out.append({"ifname": pf, "address": info["mac"], "flags": ["BROADCAST"], "addr_info": [], "vfinfo_list": vfs})
    print(json.dumps(out))
    sys.exit(0)
if args[:3] == ["link", "set", "dev"]:
    pf, index, rest = args[3], args[5], args[6:]
    entry = state[pf].setdefault(index, {})
    for key, value in zip(rest[::2], rest[1::2]):
        if state[pf].get("ib") and key in ("mac", "trust", "spoofchk"):
            # ipoib_netdev_ops_pf has no ndo_set_vf_mac/trust/spoofchk: the kernel answers EOPNOTSUPP
            sys.stderr.write("RTNETLINK answers: Operation not supported\n")
            sys.exit(2)
        if key in ("node_guid", "port_guid"):
            entry[key.replace("_", " ")] = value
        elif key == "mac":
            entry["address"] = value
        elif key in ("trust", "spoofchk"):
            entry[key] = value == "on"
        elif key == "state":
            entry["link_state"] = value
    with open(state_path, "w") as h:
        json.dump(state, h)
    sys.exit(0)
sys.exit(2)
'''

CLUSTER = {"name": "t", "rails": 2, "mtu": 9000,
           "addressing": {"mode": "shared", "supernet": "172.16.0.0/16", "rail_prefix": 24},
           "cni": "sriov", "sriov": {"vfs": 2, "trust": True, "spoof_check": False}}
NICS = ["enp1s0", "enp2s0"]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


@pytest.fixture
def host(tmp_path, monkeypatch):
    root = tmp_path / "root"
    state = {}
    for slot, nic in enumerate(NICS, 1):
        pci = root / ("sys/devices/pci0000:00/0000:00:0%d.0/0000:0%d:00.0" % (slot + 2, slot))
        write(str(pci / "sriov_totalvfs"), "7\n")
        write(str(pci / "sriov_numvfs"), "0\n")
        os.makedirs(str(root / "sys/class/net" / nic))
        os.symlink(str(pci), str(root / "sys/class/net" / nic / "device"))
        state[nic] = {"mac": "52:54:00:a1:01:0%d" % slot}
    write(str(tmp_path / "ip-state.json"), json.dumps(state))
    bin_dir = tmp_path / "bin"
    write(str(bin_dir / "ip"), "#!%s\n%s" % (sys.executable, STANDIN))
    os.chmod(str(bin_dir / "ip"), 0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("STANDIN_STATE", str(tmp_path / "ip-state.json"))
    monkeypatch.setenv("STANDIN_SYSFS", str(root))
    monkeypatch.setenv("STANDIN_LOG", str(tmp_path / "ip.log"))
    return tmp_path


def calls(tmp_path):
    path = tmp_path / "ip.log"
    return [line for line in path.read_text().splitlines() if not line.startswith("-j")] if path.exists() else []


def numvfs(tmp_path, nic):
    return (tmp_path / "root/sys/class/net" / nic / "device/sriov_numvfs").read_text().strip()


def run(capsys, tmp_path, check=False, cluster=None, **args):
    """The task with the model, as roles write it: through the action plugin (controller), then the module."""
    params = dict(cluster=cluster or CLUSTER, interfaces=NICS, config_root=str(tmp_path / "etc-root"),
                  sysfs_root=str(tmp_path / "root"))
    params.update(args)
    return run_task(capsys, "sriov", params, check=check)[0]


def test_check_mode_then_apply_then_nothing(host, capsys):
    checked = run(capsys, host, check=True)
    assert checked["changed"] and calls(host) == [] and numvfs(host, "enp1s0") == "0"
    assert checked["commands"][0] == "echo 2 > /sys/class/net/enp1s0/device/sriov_numvfs"
    assert not (host / "etc-root").exists()

    done = run(capsys, host)
    assert done["changed"], done
    assert numvfs(host, "enp1s0") == "2" and numvfs(host, "enp2s0") == "2"
    assert [c.split(" mac ")[0] for c in calls(host)] == ["link set dev enp1s0 vf 0", "link set dev enp1s0 vf 1",
                                                          "link set dev enp2s0 vf 0", "link set dev enp2s0 vf 1"]
    assert all(c.endswith("trust on spoofchk off") for c in calls(host))
    unit = (host / "etc-root/etc/systemd/system/ainet-sriov.service").read_text()
    assert unit.startswith("# Managed by ainet.fabric (sriov)")
    record = json.loads((host / "etc-root/var/lib/ainet-fabric/sriov.json").read_text())
    assert record["pfs"] == {"enp1s0": {"pci": "0000:01:00.0", "vfs": 2}, "enp2s0": {"pci": "0000:02:00.0", "vfs": 2}}

    before = len(calls(host))
    again = run(capsys, host)
    assert not again["changed"] and again["commands"] == [] and len(calls(host)) == before


def test_a_removed_fabric_sriov_releases_the_vfs_it_made(host, capsys):
    run(capsys, host)
    macvlan = dict(copy.deepcopy(CLUSTER), cni="macvlan", sriov=None)
    released = run(capsys, host, cluster=macvlan)
    assert released["changed"] and numvfs(host, "enp1s0") == "0"
    assert not (host / "etc-root/etc/systemd/system/ainet-sriov.service").exists()
    assert json.loads((host / "etc-root/var/lib/ainet-fabric/sriov.json").read_text())["pfs"] == {}


@pytest.mark.parametrize("change, message", [
    ({"sriov": {"vfs": 8}}, "fabric_cluster.sriov.vfs 8 is above the 7 VFs rail NIC enp1s0"),
])
def test_bad_input_is_refused_before_any_change(host, capsys, change, message):
    result = run(capsys, host, cluster=dict(copy.deepcopy(CLUSTER), **change))
    assert result["failed"] and message in result["msg"] and "\n" not in result["msg"]
    assert calls(host) == [] and numvfs(host, "enp1s0") == "0"


def test_rail_nic_without_sriov_is_refused(host, capsys):
    os.remove(str(host / "root/sys/class/net/enp2s0/device/sriov_totalvfs"))
    result = run(capsys, host)
    assert result["failed"] and "enp2s0 (0000:02:00.0, driver None) has no SR-IOV capability" in result["msg"]
    assert calls(host) == [] and numvfs(host, "enp1s0") == "0"


def test_override_above_total_is_refused(host, capsys):
    result = run(capsys, host, overrides={"enp2s0": {"vfs": 9}})
    assert result["failed"] and "sriov_overrides.enp2s0.vfs 9 is above the 7 VFs" in result["msg"]
    assert calls(host) == []


def test_another_tools_udev_rule_for_the_pf_is_refused_by_name(host, capsys):
    write(str(host / "etc-root/etc/udev/rules.d/70-vfs.rules"),
          'ACTION=="add", SUBSYSTEM=="net", KERNEL=="enp1s0", ATTR{device/sriov_numvfs}="4"\n')
    write(str(host / "etc-root/etc/udev/rules.d/71-other.rules"),
          'ACTION=="add", SUBSYSTEM=="net", KERNEL=="eth7", ATTR{device/sriov_numvfs}="4"\n')
    result = run(capsys, host)
    assert result["failed"] and "/etc/udev/rules.d/70-vfs.rules (sets sriov_numvfs of enp1s0)" in result["msg"]
    assert "71-other" not in result["msg"]
    assert calls(host) == [] and numvfs(host, "enp1s0") == "0"


def test_vfs_another_tool_made_are_not_renumbered(host, capsys):
    (host / "root/sys/class/net/enp1s0/device/sriov_numvfs").write_text("4\n")
    result = run(capsys, host)
    assert result["failed"] and "enp1s0 has 4 VFs that ainet.fabric did not create" in result["msg"]
    assert calls(host) == [] and numvfs(host, "enp1s0") == "4"
    # the same count is another tool's too: its VFs' settings are not rewritten either
    same = run(capsys, host, cluster=dict(copy.deepcopy(CLUSTER), sriov={"vfs": 4, "trust": True}))
    assert same["failed"] and "refusing to manage them" in same["msg"] and calls(host) == []
    # with takeover: adopted as they are (count kept), settings applied, owned from then on
    adopted = run(capsys, host, cluster=dict(copy.deepcopy(CLUSTER), sriov={"vfs": 4, "trust": True}), takeover=True)
    assert adopted["changed"] and numvfs(host, "enp1s0") == "4"
    assert "enp1s0" in json.loads((host / "etc-root/var/lib/ainet-fabric/sriov.json").read_text())["pfs"]


def test_an_override_that_is_not_a_mapping_is_one_line(host, capsys):
    result = run(capsys, host, overrides={"enp2s0": 4})
    assert result["failed"] and result["msg"].startswith("sriov_overrides.enp2s0: 4 is not a mapping")
    assert calls(host) == []


def test_the_action_sends_the_host_only_its_flat_pfs(host, capsys):
    params = dict(cluster=CLUSTER, interfaces=NICS, overrides={"enp2s0": {"vfs": 1}}, takeover=True,
                  config_root=str(host / "etc-root"), sysfs_root=str(host / "root"))
    result, sent = run_task(capsys, "sriov", params, check=True)
    assert result["changed"] and not result.get("failed"), result
    assert sorted(sent) == ["config_root", "pfs", "sysfs_root", "takeover"]
    assert [(p["name"], p["vfs"], p["trust"], p["spoof_check"], p["source"]) for p in sent["pfs"]] == [
        ("enp1s0", 2, True, False, "fabric_cluster.sriov"), ("enp2s0", 1, True, False, "sriov_overrides.enp2s0")]


def test_bad_model_input_is_refused_on_the_controller_and_the_module_never_runs(host, capsys):
    bad = dict(copy.deepcopy(CLUSTER), sriov={"vfs": 2, "colour": "red"})
    result, sent = run_task(capsys, "sriov", dict(cluster=bad, interfaces=NICS, sysfs_root=str(host / "root")))
    assert result["failed"] and sent is None and result["msg"].startswith("fabric_cluster.sriov.colour")
    assert "\n" not in result["msg"]
    result, sent = run_task(capsys, "sriov", dict(cluster=CLUSTER, interfaces=NICS, overrides={"eth9": {"vfs": 1}}))
    assert sent is None and result["msg"].startswith("sriov_overrides.eth9: eth9 is not a rail NIC of this node")
    assert calls(host) == [] and numvfs(host, "enp1s0") == "0"


def test_the_flat_options_work_without_the_model(host, capsys):
    params = dict(pfs=[{"name": "enp2s0", "vfs": 3, "trust": True}], config_root=str(host / "etc-root"),
                  sysfs_root=str(host / "root"))
    done, sent = run_task(capsys, "sriov", params)  # no cluster: the action passes the task's options through
    assert sent == params and done["changed"] and numvfs(host, "enp2s0") == "3" and numvfs(host, "enp1s0") == "0"
    assert [c.split(" mac ")[0] for c in calls(host)] == ["link set dev enp2s0 vf %d" % i for i in range(3)]
    assert all(c.endswith("trust on spoofchk on") for c in calls(host))
    again = run_module(capsys, "sriov", params)
    assert not again["changed"] and again["commands"] == []
    failed = run_module(capsys, "sriov", dict(params, pfs=[{"name": "enp2s0", "vfs": 9}]))
    assert failed["failed"] and "pfs[0].vfs 9 is above the 7 VFs rail NIC enp2s0" in failed["msg"]


def test_the_module_refuses_the_model_itself(host, capsys):
    result = run_module(capsys, "sriov", dict(cluster=CLUSTER, interfaces=NICS, sysfs_root=str(host / "root")))
    assert result["failed"] and "\n" not in result["msg"]
    assert result["msg"].startswith("sriov: cluster, interfaces are handled on the controller by the action plugin "
                                    "ainet.fabric.sriov")
    assert calls(host) == []


IB_CLUSTER = {"name": "ibc", "rails": 2,
              "addressing": {"mode": "infiniband", "supernet": "172.20.0.0/16", "rail_prefix": 24},
              "cni": "sriov", "sriov": {"vfs": 2}}


def make_ib(tmp_path):
    """Turn the fixture's PFs into IPoIB PFs whose two VFs exist as PCI devices bound to mlx5_core, each with its
    netdev (what the kernel shows once sriov_numvfs is written; the stand-in cannot create them)."""
    state = json.loads((tmp_path / "ip-state.json").read_text())
    root = tmp_path / "root"
    driver = root / "sys/bus/pci/drivers/mlx5_core"
    os.makedirs(str(driver))
    for slot, nic in enumerate(NICS, 1):
        state[nic].update(ib=True, mac="00:00:10:29:fe:80:00:00:00:00:00:00:b8:59:9f:03:00:c1:2a:%02x" % slot)
        device = os.path.realpath(str(root / "sys/class/net" / nic / "device"))
        for index in range(2):
            pci = "0000:0%d:00.%d" % (slot, index + 1)
            vf = os.path.join(os.path.dirname(device), pci)
            os.makedirs(os.path.join(vf, "net", "%sv%d" % (nic, index)))
            os.symlink(str(driver), os.path.join(vf, "driver"))
            os.symlink(vf, os.path.join(device, "virtfn%d" % index))
            os.makedirs(str(root / "sys/bus/pci/devices"), exist_ok=True)
            os.symlink(vf, str(root / "sys/bus/pci/devices" / pci))
    (tmp_path / "ip-state.json").write_text(json.dumps(state))
    return state


def test_infiniband_vfs_get_their_guids_are_rebound_and_a_second_run_changes_nothing(host, capsys):
    make_ib(host)
    checked = run(capsys, host, check=True, cluster=IB_CLUSTER, node_id="3")
    assert checked["changed"] and calls(host) == [] and not (host / "root/sys/bus/pci/drivers_probe").exists()
    done = run(capsys, host, cluster=IB_CLUSTER, node_id=3)
    assert done["changed"] and not done.get("failed"), done
    assert calls(host) == ["link set dev %s vf %d node_guid 02:25:26:00:00:03:%02x:%02x port_guid "
                           "02:25:26:00:00:03:%02x:%02x" % (nic, index, rail, index, rail, index)
                           for rail, nic in enumerate(NICS, 1) for index in range(2)]
    assert done["commands"][2] == rebind_script("enp1s0", 0)
    # the last VF rebound: unbound from mlx5_core, then probed again
    assert (host / "root/sys/bus/pci/drivers/mlx5_core/unbind").read_text() == "0000:02:00.2\n"
    assert (host / "root/sys/bus/pci/drivers_probe").read_text() == "0000:02:00.2\n"
    unit = (host / "etc-root/etc/systemd/system/ainet-sriov.service").read_text()
    assert "/ip link set dev enp2s0 vf 1 node_guid 02:25:26:00:00:03:02:01 port_guid 02:25:26:00:00:03:02:01\n" in unit
    assert 'ExecStart=/bin/sh -c "%s"\n' % rebind_script("enp2s0", 1).replace("$", "$$") in unit
    before = len(calls(host))
    again = run(capsys, host, cluster=IB_CLUSTER, node_id=3)
    assert not again["changed"] and again["commands"] == [] and len(calls(host)) == before
    # one VF's GUID changed behind the role's back: only that VF is set and rebound
    state = json.loads((host / "ip-state.json").read_text())
    state["enp2s0"]["0"]["node guid"] = "5a:3e:01:9c:00:12:7f:01"
    (host / "ip-state.json").write_text(json.dumps(state))
    diffed = run_task(capsys, "sriov", dict(cluster=IB_CLUSTER, interfaces=NICS, node_id=3,
                                            config_root=str(host / "etc-root"), sysfs_root=str(host / "root")),
                      check=True, diff=True)[0]
    assert "enp2s0: 2 VFs\n  vf 0 guid 5a:3e:01:9c:00:12:7f:01\n" in diffed["diff"][0]["before"]
    assert "  vf 0 guid 02:25:26:00:00:03:02:00\n" in diffed["diff"][0]["after"]
    fixed = run(capsys, host, cluster=IB_CLUSTER, node_id=3)
    assert fixed["commands"] == ["ip link set dev enp2s0 vf 0 node_guid 02:25:26:00:00:03:02:00 port_guid "
                                 "02:25:26:00:00:03:02:00", rebind_script("enp2s0", 0)]


def test_infiniband_without_a_node_id_is_refused_on_the_controller(host, capsys):
    make_ib(host)
    result, sent = run_task(capsys, "sriov", dict(cluster=IB_CLUSTER, interfaces=NICS, sysfs_root=str(host / "root")))
    assert result["failed"] and sent is None and "\n" not in result["msg"]
    assert result["msg"].startswith("fabric_node_id: is missing; the GUIDs of the InfiniBand VFs")
    assert calls(host) == [] and numvfs(host, "enp1s0") == "0"
