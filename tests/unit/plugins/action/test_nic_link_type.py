# -*- coding: utf-8 -*-
"""nic_link_type: the derivation (controller), the outcomes (pure), the management path, and the module in-process
against a sysfs tree with stand-ins for ``mlxconfig`` and ``mlxfwreset`` on PATH.

The stand-in ``mlxconfig`` keeps a dual-port ConnectX-7's LINK_TYPE_P1/P2 (current and next boot) in a JSON file
and prints ``-e q`` in the layout of MFT's query (``data/rdma/mlxconfig/synthetic-cx7-doca-e-q.txt``, parsed by the
same ``parse_mlxconfig`` as the recorded real outputs there); ``set`` changes the next-boot value as the firmware
does; the stand-in ``mlxfwreset`` makes the next-boot values current and rewrites the ports' sysfs ``link_layer``,
as a firmware reset and the driver's restart do. What a real NIC does is not proven here (no ConnectX in the test
machines): the commands, the refusals and the read-back are.
"""

from __future__ import annotations

import json
import os
import sys

import pytest
from ansible_collections.ainet.fabric.tests.unit.plugins.modules.host_task import run_module
from ansible_collections.ainet.fabric.tests.unit.plugins.action.task_runner import run_task

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.desired import nic_link_type as desired
from ansible_collections.ainet.fabric.plugins.module_utils.host import mgmt_path
from ansible_collections.ainet.fabric.plugins.module_utils.host import nic_link_type_state as lib
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse_pci import parse_mlxconfig

DATA = os.path.join(os.path.dirname(__file__), "..", "module_utils", "data")
MLXCONFIG = os.path.join(DATA, "rdma", "mlxconfig")
FWRESET = os.path.join(DATA, "firmware", "mlxfwreset")
IPROUTE = os.path.join(DATA, "iproute")

ROCE = {"name": "t", "rails": 2, "addressing": {"mode": "shared", "supernet": "172.16.0.0/16", "rail_prefix": 24}}
TWO = {"name": "t", "fabrics": {
    "compute": {"rails": 2, "addressing": {"mode": "infiniband", "supernet": "10.10.0.0/16", "rail_prefix": 24}},
    "storage": {"rails": 2, "addressing": {"mode": "shared", "supernet": "172.16.0.0/16", "rail_prefix": 24}}}}

STANDIN_MLXCONFIG = r'''
import json, os, sys
state_file = os.environ["STANDIN_FW"]
fw = json.load(open(state_file))
with open(os.environ["STANDIN_LOG"], "a") as h:
    h.write(os.path.basename(sys.argv[0]) + " " + " ".join(sys.argv[1:]) + "\n")
args = sys.argv[1:]
dev = args[args.index("-d") + 1]
slot = dev.rsplit(".", 1)[0]
if slot not in fw:
    sys.stderr.write("-E- Failed to open device: %s. No such file or directory\n" % dev)
    sys.exit(1)
name = {"1": "IB(1)", "2": "ETH(2)"}
if "q" in args and "INTERNAL_CPU_OFFLOAD_ENGINE" in args:
    mode = os.environ.get("STANDIN_MODE")
    if not mode:
        sys.stderr.write("-E- The Device doesn't support INTERNAL_CPU_OFFLOAD_ENGINE parameter\n")
        sys.exit(1)
    sys.stdout.write(open(mode).read())
    sys.exit(0)
if "q" in args:
    print("\nDevice #1:\n----------\n\nDevice type:        ConnectX7\nName:               MCX755106AS-HEA_Ax")
    print("Description:        NVIDIA ConnectX-7 HHHL Adapter Card; Dual-port QSFP112\nDevice:             %s\n" % dev)
    print("Configurations:                                          Default             Current             Next Boot")
    for port in ("P1", "P2"):
        cur, nxt = fw[slot][port]
        star = "*" if cur != nxt else " "
        print("%s        LINK_TYPE_%-36s%-20s%-20s%s" % (star, port, "IB(1)", name[cur], name[nxt]))
    print("         SRIOV_EN                                        False(0)            False(0)            False(0)")
    if os.environ.get("STANDIN_FULL_MODE"):
        mode = os.environ["STANDIN_FULL_MODE"]
        print("         INTERNAL_CPU_OFFLOAD_ENGINE                     ENABLED(0)          %-20s%s" % (mode, mode))
    sys.exit(0)
if "set" in args:
    key, value = args[-1].split("=")
    fw[slot][key.rsplit("_", 1)[1]][1] = value
    json.dump(fw, open(state_file, "w"))
    print("Apply new Configuration? (y/n) [n] : y\nApplying... Done!\n-I- Please reboot machine to load new configurations.")
    sys.exit(0)
sys.exit(255)
'''
STANDIN_FWRESET = r'''
import json, os, sys
state_file = os.environ["STANDIN_FW"]
fw = json.load(open(state_file))
with open(os.environ["STANDIN_LOG"], "a") as h:
    h.write(os.path.basename(sys.argv[0]) + " " + " ".join(sys.argv[1:]) + "\n")
dev = sys.argv[sys.argv.index("-d") + 1]
slot = dev.rsplit(".", 1)[0]
if sys.argv[-1] == "q":
    sys.stdout.write(open(os.environ["STANDIN_FWRESET_QUERY"]).read())
    sys.exit(0)
if sys.argv[-1] != "reset" or "-l" not in sys.argv:
    sys.exit(255)  # this stand-in resets only at an explicit level
layer = {"1": "InfiniBand", "2": "Ethernet"}
for index, port in enumerate(("P1", "P2")):
    fw[slot][port][0] = fw[slot][port][1]
    path = os.path.join(os.environ["STANDIN_SYS"], "sys/bus/pci/devices/%s.%d/infiniband/mlx5_%d/ports/1/link_layer"
                        % (slot, index, index))
    if os.path.exists(path):
        open(path, "w").write(layer[fw[slot][port][0]] + "\n")
json.dump(fw, open(state_file, "w"))
print("-I- Resetting Firmware... Done")
'''


def cluster(raw):
    return load_cluster(raw)


# -- the derivation (controller side) ---------------------------------------------------------------------------

def test_rail_nics_want_their_fabrics_link_type():
    state = desired.options(cluster(TWO), {"compute": ["ibp12s0", "ibp13s0"], "storage": ["ens1f0np0", "ens1f1np1"]},
                            pci={"ibp13s0": "0d:00.0"})
    assert state == {"ports": [
        {"nic": "ibp12s0", "pci": None, "link_type": "IB", "source": "fabric compute"},
        {"nic": "ibp13s0", "pci": "0000:0d:00.0", "link_type": "IB", "source": "fabric compute"},
        {"nic": "ens1f0np0", "pci": None, "link_type": "ETH", "source": "fabric storage"},
        {"nic": "ens1f1np1", "pci": None, "link_type": "ETH", "source": "fabric storage"}]}


def test_extra_ports_join_and_an_agreeing_rail_entry_adds_nothing():
    state = desired.options(cluster(ROCE), ["ens6f0np0", "ens6f1np1"],
                            ports=[{"pci": "0000:5e:00.0", "link_type": "ib"}, {"nic": "ens6f0np0", "link_type": "ETH"}])
    assert [p["source"] for p in state["ports"]] == ["fabric default", "fabric default", "nic_link_type_ports[0]"]
    assert state["ports"][2] == {"nic": None, "pci": "0000:5e:00.0", "link_type": "IB",
                                 "source": "nic_link_type_ports[0]"}


@pytest.mark.parametrize("ports,pci,field,words", [
    # a link type that contradicts the fabric's addressing
    ([{"nic": "ens6f0np0", "link_type": "IB"}], None, "nic_link_type_ports[0].link_type",
     "contradicts the model: ens6f0np0 is a rail NIC of fabric default, whose addressing mode shared runs over "
     "Ethernet"),
    ([{"nic": "eth9", "link_type": "FC"}], None, "nic_link_type_ports[0].link_type", "is not a link type"),
    ([{"link_type": "IB"}], None, "nic_link_type_ports[0]", "names no port"),
    ([{"nic": "eth9", "link_type": "IB", "port": 2}], None, "nic_link_type_ports[0].port", "is not a key"),
    ([{"pci": "3b:00", "link_type": "IB"}], None, "nic_link_type_ports[0].pci", "is not a PCI address"),
    ([], {"eth9": "0000:3b:00.0"}, "nic_link_type_pci.eth9", "names no rail NIC"),
    ([], {"ens6f0np0": "x"}, "nic_link_type_pci.ens6f0np0", "is not a PCI address"),
])
def test_bad_host_input_is_refused_on_the_controller_in_one_line(ports, pci, field, words):
    with pytest.raises(FabricModelError) as info:
        desired.options(cluster(ROCE), ["ens6f0np0", "ens6f1np1"], ports=ports, pci=pci)
    assert str(info.value).startswith(field + ":") and words in str(info.value) and "\n" not in str(info.value)


# -- the outcomes (pure) ----------------------------------------------------------------------------------------

def _fw(name):
    with open(os.path.join(MLXCONFIG, name)) as handle:
        return next(iter(parse_mlxconfig(handle.read())["firmware"].values()))


PORT = {"nic": "ens6f0np0", "pci": None, "link_type": "ETH", "source": "fabric compute"}


def test_recorded_cx7_query_port1_eth_port2_ib():
    fw = _fw("synthetic-cx7-doca-e-q.txt")
    one = lib.port_actions(PORT, {"pci": "0000:3b:00.0", "vendor": "0x15b3", "link_layer": "ETH", "firmware": fw})
    assert (one["port"], one["current"], one["next_boot"], one["action"], one["argv"]) == (1, "ETH", "ETH", "ok", None)
    two = lib.port_actions(dict(PORT, nic="ens6f1np1"),
                           {"pci": "0000:3b:00.1", "vendor": "0x15b3", "link_layer": "IB", "firmware": fw})
    assert two["action"] == "set" and two["argv"] == ["mlxconfig", "-y", "-d", "0000:3b:00.1", "set",
                                                      "LINK_TYPE_P2=2"]
    assert two["current"] == "IB" and two["next_boot"] == "ETH"
    assert two["reboot"] == "LINK_TYPE_P2 of 0000:3b:00.1 (ens6f1np1): IB now, ETH from the next boot (NIC firmware)"


def test_recorded_mstconfig_cx3_next_boot_only_column():
    # ConnectX-3 (mstconfig, one Next Boot column): P1 IB, P2 ETH; wanting IB on port 1 needs nothing
    fw = _fw("truenas-cx3-mstconfig-ib-eth.txt")
    out = lib.port_actions(dict(PORT, link_type="IB"), {"pci": "0000:09:00.0", "vendor": "0x15b3",
                                                        "link_layer": "IB", "firmware": fw}, "mstconfig")
    assert out["action"] == "ok" and out["current"] == "IB"


def test_pending_when_the_firmware_already_holds_the_wanted_type():
    fw = {"configs": {"LINK_TYPE_P1": {}}, "link_type_p1": "IB", "current": {"link_type_p1": "ETH"}}
    out = lib.port_actions(dict(PORT, link_type="IB"),
                           {"pci": "0000:3b:00.0", "vendor": "0x15b3", "link_layer": "ETH", "firmware": fw})
    assert out["action"] == "pending" and out["argv"] is None and "ETH now, IB from the next boot" in out["reboot"]


@pytest.mark.parametrize("reading,words", [
    ({"pci": "0000:01:00.0", "vendor": "0x8086", "link_layer": "ETH", "firmware": None},
     "runs Ethernet and is not an NVIDIA/Mellanox NIC"),
    ({"pci": "0000:3b:00.0", "vendor": "0x15b3", "link_layer": "ETH", "firmware": None,
      "firmware_error": "no mlxconfig or mstconfig on this host"}, "install mlxconfig"),
    ({"pci": "0000:3b:00.0", "vendor": "0x15b3", "link_layer": "ETH",
      "firmware": {"configs": {"SRIOV_EN": {}}, "current": {}}}, "has no LINK_TYPE_P1 (a NIC with a fixed protocol)"),
])
def test_a_port_that_cannot_be_given_the_type_is_refused(reading, words):
    with pytest.raises(lib.LinkTypeError) as info:
        lib.port_actions(dict(PORT, link_type="IB"), reading)
    assert words in str(info.value) and "fabric compute wants InfiniBand" in str(info.value)


def test_a_fixed_protocol_nic_that_runs_the_wanted_type_is_fine():
    out = lib.port_actions(PORT, {"pci": "0000:01:00.0", "vendor": "0x8086", "link_layer": "ETH", "firmware": None})
    assert out["action"] == "ok"


# -- the management path -----------------------------------------------------------------------------------------

def _json(name):
    with open(os.path.join(IPROUTE, name)) as handle:
        return json.load(handle)


def test_management_path_from_recorded_ip_outputs_with_bonds_below():
    # clean-v4: eth0 10.250.0.11/24 carries the default route; the session came in on 10.250.0.11
    routes = [r for r in _json("clean-v4.route4.json") if r.get("dst") == "default"]
    lowers = {"eth0": ["bond0"], "bond0": ["ens1f0np0", "ens1f1np1"]}
    found = mgmt_path.management_devices(routes, _json("clean-v4.addr.json"), ["10.250.0.11"],
                                         lambda dev: lowers.get(dev, []))
    assert found["eth0"].startswith("the default route via 10.250.0.1")
    assert set(found) == {"eth0", "bond0", "ens1f0np0", "ens1f1np1"}
    assert found["ens1f1np1"].startswith("below bond0")


def test_management_path_multipath_default_and_session_address():
    routes = [r for r in _json("routes-misc.route4.json") if r.get("dst") == "default" and "nexthops" in r]
    found = mgmt_path.management_devices(routes, [], [], lambda dev: [])
    assert set(found) == {"eth1", "eth2"}
    addrs = [{"ifname": "mgmt0", "addr_info": [{"family": "inet6", "local": "fd00::5", "prefixlen": 64}]}]
    found = mgmt_path.management_devices([], addrs, mgmt_path.session_addresses(
        {"SSH_CONNECTION": "fd00::1 50000 fd00::5 22"}, ["gpu01.example"]), lambda dev: [])
    assert found == {"mgmt0": "holds fd00::5, the address this session came in on"}


def test_reset_refusal_names_the_path():
    assert lib.reset_refusal(["0000:3b:00.1"], {"0000:5e:00.0": "eno1: the default route"}) is None
    text = lib.reset_refusal(["0000:3b:00.1"], {"0000:3b:00.0": "ens6f0np0: the default route via 10.0.0.1"})
    assert "firmware reset of 0000:3b:00 would take down the management path (0000:3b:00.0: ens6f0np0: the " \
           "default route via 10.0.0.1)" in text


# -- the module, in-process ---------------------------------------------------------------------------------------

@pytest.fixture
def host(tmp_path, monkeypatch):
    """A node with a dual-port ConnectX-7 (0000:3b:00.0 ens6f0np0, 0000:3b:00.1 ens6f1np1) running Ethernet on both
    ports, and eno1 (0000:5e:00.0, Intel) carrying the default route."""
    root = tmp_path / "root"
    layers = {"0000:3b:00.0": ("ens6f0np0", "0x15b3", "Ethernet"), "0000:3b:00.1": ("ens6f1np1", "0x15b3", "Ethernet"),
              "0000:5e:00.0": ("eno1", "0x8086", None)}
    for index, (pci, (nic, vendor, layer)) in enumerate(sorted(layers.items())):
        dev = root / "sys/bus/pci/devices" / pci
        os.makedirs(str(dev))
        (dev / "vendor").write_text(vendor + "\n")
        if layer:
            port = dev / "infiniband" / ("mlx5_%d" % index) / "ports" / "1"
            os.makedirs(str(port))
            (port / "link_layer").write_text(layer + "\n")
        net = root / "sys/class/net" / nic
        os.makedirs(str(net))
        os.symlink(str(dev), str(net / "device"))
        (net / "type").write_text("1\n")
    (tmp_path / "fw.json").write_text(json.dumps({"0000:3b:00": {"P1": ["2", "2"], "P2": ["2", "2"]}}))
    bin_dir = tmp_path / "bin"
    os.makedirs(str(bin_dir))
    for name, body in (("mlxconfig", STANDIN_MLXCONFIG), ("mlxfwreset", STANDIN_FWRESET)):
        (bin_dir / name).write_text("#!%s\n%s" % (sys.executable, body))
        os.chmod(str(bin_dir / name), 0o755)
    ip = bin_dir / "ip"
    routes = json.dumps([{"dst": "default", "gateway": "10.0.0.1", "dev": "eno1"}])
    ip.write_text("#!/bin/sh\ncase \"$*\" in *route*) echo '%s';; *) echo '[]';; esac\n" % routes)
    os.chmod(str(ip), 0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("STANDIN_FW", str(tmp_path / "fw.json"))
    monkeypatch.setenv("STANDIN_LOG", str(tmp_path / "tools.log"))
    monkeypatch.setenv("STANDIN_SYS", str(root))
    monkeypatch.setenv("STANDIN_FWRESET_QUERY", os.path.join(FWRESET, "mstflint-layout-cx7-level3-default.txt"))
    monkeypatch.delenv("STANDIN_MODE", raising=False)
    monkeypatch.delenv("SSH_CONNECTION", raising=False)
    return tmp_path


def log(tmp_path):
    path = tmp_path / "tools.log"
    return [line for line in path.read_text().splitlines() if " q" not in line] if path.exists() else []


def task(capsys, tmp_path, check=False, **args):
    one = {"name": "t", "fabrics": {name: dict(fabric, rails=1) for name, fabric in TWO["fabrics"].items()}}
    params = dict(cluster=one, interfaces={"compute": ["ens6f0np0"], "storage": ["ens6f1np1"]},
                  sysfs_root=str(tmp_path / "root"))
    params.update(args)
    return run_task(capsys, "nic_link_type", params, check=check)


def test_set_ib_on_the_compute_port_then_pending_then_reset(capsys, host):
    # check mode: says what it would set, sets nothing
    result, sent = task(capsys, host, check=True)
    assert sent["ports"][0] == {"nic": "ens6f0np0", "pci": None, "link_type": "IB", "source": "fabric compute"}
    assert result["changed"] and result["commands"] == ["mlxconfig -y -d 0000:3b:00.0 set LINK_TYPE_P1=1"]
    assert log(host) == []
    assert result["ports"][0]["current"] == "ETH" and result["ports"][0]["next_boot"] == "IB"
    assert result["ports"][1]["action"] == "ok"
    # for real: set, a reboot pending (never forced)
    result, _sent = task(capsys, host)
    assert result["changed"] and log(host) == ["mlxconfig -y -d 0000:3b:00.0 set LINK_TYPE_P1=1"]
    assert result["reboot_pending"] == ["LINK_TYPE_P1 of 0000:3b:00.0 (ens6f0np0): ETH now, IB from the next boot "
                                        "(NIC firmware)"]
    # again: nothing to set, still pending
    again, _sent = task(capsys, host)
    assert not again["changed"] and again["ports"][0]["action"] == "pending" and again["reboot_pending"]
    assert len(log(host)) == 1
    # reset asked for: this NIC does not carry the management path (eno1 does): reset, read back, nothing pending
    reset, _sent = task(capsys, host, reset=True, management_addresses=["10.0.0.5"])
    assert reset["changed"] and log(host)[-1] == "mlxfwreset -d 0000:3b:00.0 -l 3 -y reset"
    assert reset["reset_devices"] == ["0000:3b:00.0"]
    assert reset["reboot_pending"] == [] and reset["ports"][0]["current"] == "IB"
    assert reset["management"] == ["0000:5e:00.0: eno1: the default route via 10.0.0.1"]
    final, _sent = task(capsys, host, reset=True, management_addresses=["10.0.0.5"])
    assert not final["changed"] and final["reboot_pending"] == [] and final["commands"] == []


def test_reset_refused_before_any_change_when_the_nic_carries_the_management_path(capsys, host, monkeypatch):
    # the session came in on an address of the port that would be reset
    addr = json.dumps([{"ifname": "ens6f1np1", "addr_info": [{"family": "inet", "local": "10.9.0.5", "prefixlen": 24}]}])
    (host / "bin" / "ip").write_text("#!/bin/sh\ncase \"$*\" in *route*) echo '[]';; *) echo '%s';; esac\n" % addr)
    result, _sent = task(capsys, host, reset=True, management_addresses=["10.9.0.5"])
    assert result["failed"] and log(host) == []
    assert result["msg"] == ("nic_link_type: a firmware reset of 0000:3b:00 would take down the management path "
                             "(0000:3b:00.1: ens6f1np1: holds 10.9.0.5, the address this session came in on); not "
                             "reset. Fix: reboot the node instead (fabric_reboot), or move the management path off "
                             "this NIC")


def test_contradiction_refused_on_the_controller_module_never_runs(capsys, host):
    result, sent = task(capsys, host, extra_ports=[{"nic": "ens6f1np1", "link_type": "IB"}])
    assert sent is None and result["failed"] and result["msg"].startswith("nic_link_type_ports[0].link_type: 'IB' "
                                                                          "contradicts the model")


def test_flat_options_directly_and_a_missing_nic(capsys, host):
    ok = run_module(capsys, "nic_link_type", {"ports": [{"pci": "0000:3b:00.1", "link_type": "ETH"}],
                                              "sysfs_root": str(host / "root")})
    assert not ok["changed"] and ok["ports"][0]["port"] == 2
    missing = run_module(capsys, "nic_link_type", {"ports": [{"nic": "ibp12s0", "link_type": "IB",
                                                              "source": "fabric compute"}],
                                                   "sysfs_root": str(host / "root")})
    assert missing["failed"] and "give its PCI address in nic_link_type_pci" in missing["msg"]


def test_the_model_never_reaches_the_module(capsys, host):
    result = run_module(capsys, "nic_link_type", {"cluster": TWO, "sysfs_root": str(host / "root")})
    assert result["failed"] and "handled on the controller by the action plugin" in result["msg"]


def test_no_reset_when_the_session_address_is_unknown(capsys, host):
    # no SSH_CONNECTION (sudo's env_reset drops it) and no address given: which NIC carries the session is unknown
    result, _sent = task(capsys, host, reset=True)
    assert result["failed"] and log(host) == []
    assert result["msg"].startswith("nic_link_type: a firmware reset is refused: the address this session came in on "
                                    "is not known")


# -- the firmware reset: level, query, VFs (issue 30) ----------------------------------------------------------------

def _query(name):
    with open(os.path.join(FWRESET, name)) as handle:
        return lib.parse_fwreset_query(handle.read())


def test_fwreset_query_in_mstflints_layout_level_3_supported_and_default():
    query = _query("mstflint-layout-cx7-level3-default.txt")
    assert sorted(query["levels"]) == [0, 1, 3, 4]
    assert query["levels"][3] == {"text": "Driver restart and PCI reset", "supported": True, "default": True}
    assert [n for n, row in sorted(query["levels"].items()) if row["supported"]] == [3, 4]
    assert query["types"][0]["default"] and not query["types"][1]["supported"]
    assert query["sync"][1] == {"text": "NIC Driver is the owner", "supported": True, "default": False}
    # the request-method and reset-reason sections are not taken as levels or syncs
    assert sorted(query["sync"]) == [0, 1, 2]
    assert lib.reset_level_refusal("0000:3b:00.0", 3, query, "gpu01") is None


def test_fwreset_query_where_only_a_warm_reboot_is_supported_is_refused():
    query = _query("mstflint-layout-level4-only-legacy.txt")
    assert query["levels"][3]["supported"] is False and query["levels"][4]["default"] is True
    assert query["sync"][1] == {"text": "Driver is the owner", "supported": False, "default": False}
    text = lib.reset_level_refusal("0000:3b:00.0", 3, query, "gpu01")
    assert text == ("nic_link_type: gpu01: 0000:3b:00.0 does not support firmware reset level 3 (driver restart and "
                    "PCI reset) now; supported: 4 (warm reboot of the node); not reset. Fix: reboot the node instead "
                    "(fabric_reboot), leaving nic_link_type_reset off")


def test_fwreset_query_without_levels_is_refused():
    assert "lists no reset levels" in lib.reset_level_refusal("0000:3b:00.0", 3, lib.parse_fwreset_query(
        "-E- Failed to open device: 0000:3b:00.0\n"))


def test_reset_runs_at_an_explicit_level_and_only_level_3_is_accepted():
    assert lib.reset_argv("0000:3b:00.0") == ["mlxfwreset", "-d", "0000:3b:00.0", "-l", "3", "-y", "reset"]
    assert lib.check_reset_level(3) == 3
    for wrong in (4, 0, "3", True):
        with pytest.raises(lib.LinkTypeError) as info:
            lib.check_reset_level(wrong)
        assert str(info.value).startswith("nic_link_type_reset_level: %r is not a reset level" % (wrong,))


def test_vfs_on_the_device_refuse_the_reset_and_name_their_drivers():
    assert lib.vf_refusal("0000:3b:00", {"0000:3b:00.0": {"numvfs": 0, "vfs": {}},
                                         "0000:3b:00.1": {"numvfs": 0, "vfs": {}}}) is None
    vfs = {"0000:3b:01.2": "vfio-pci", "0000:3b:01.3": "mlx5_core", "0000:3b:01.4": None}
    text = lib.vf_refusal("0000:3b:00", {"0000:3b:00.0": {"numvfs": 0, "vfs": {}},
                                         "0000:3b:00.1": {"numvfs": 3, "vfs": vfs}}, "gpu01")
    assert text == ("nic_link_type: gpu01: a firmware reset of 0000:3b:00 would remove its VFs (the reset sets "
                    "sriov_numvfs to 0): 0000:3b:00.1 has 3 VFs (1 bound to mlx5_core, 1 no driver, 1 bound to "
                    "vfio-pci); not reset. Fix: stop their users and set sriov_numvfs to 0, or reboot the node "
                    "instead (fabric_reboot)")


def _fwreset_log(tmp_path):
    path = tmp_path / "tools.log"
    return [line for line in path.read_text().splitlines() if line.startswith("mlxfwreset")] if path.exists() else []


def test_reset_refused_before_any_change_where_level_3_is_not_supported(capsys, host, monkeypatch):
    monkeypatch.setenv("STANDIN_FWRESET_QUERY", os.path.join(FWRESET, "mstflint-layout-level4-only-legacy.txt"))
    result, _sent = task(capsys, host, reset=True, management_addresses=["10.0.0.5"])
    assert result["failed"] and log(host) == [], result["commands"]
    assert _fwreset_log(host) == ["mlxfwreset -d 0000:3b:00.0 q"]
    assert "0000:3b:00.0 does not support firmware reset level 3" in result["msg"] and "\n" not in result["msg"]
    # control: the same host with level 3 supported sets and resets
    monkeypatch.setenv("STANDIN_FWRESET_QUERY", os.path.join(FWRESET, "mstflint-layout-cx7-level3-default.txt"))
    result, _sent = task(capsys, host, reset=True, management_addresses=["10.0.0.5"])
    assert not result.get("failed") and log(host) == ["mlxconfig -y -d 0000:3b:00.0 set LINK_TYPE_P1=1",
                                                      "mlxfwreset -d 0000:3b:00.0 -l 3 -y reset"]


def _add_vfs(host, pf, drivers):
    base = host / "root/sys/bus/pci/devices"
    (base / pf / "sriov_numvfs").write_text("%d\n" % len(drivers))
    for index, driver in enumerate(drivers):
        vf = base / ("0000:3b:01.%d" % (index + 2))
        os.makedirs(str(vf))
        os.symlink(str(vf), str(base / pf / ("virtfn%d" % index)))
        if driver:
            os.makedirs(str(host / "root/sys/bus/pci/drivers" / driver), exist_ok=True)
            os.symlink(str(host / "root/sys/bus/pci/drivers" / driver), str(vf / "driver"))


def test_reset_refused_before_any_change_when_the_other_port_has_vfs(capsys, host):
    # the reset is for port 1 (0000:3b:00.0); the VFs sit on port 2's PF of the same device
    (host / "root/sys/bus/pci/devices/0000:3b:00.0/sriov_numvfs").write_text("0\n")
    _add_vfs(host, "0000:3b:00.1", ["vfio-pci", None])
    result, _sent = task(capsys, host, reset=True, management_addresses=["10.0.0.5"])
    assert result["failed"] and log(host) == [], result["commands"]
    assert ("a firmware reset of 0000:3b:00 would remove its VFs (the reset sets sriov_numvfs to 0): 0000:3b:00.1 "
            "has 2 VFs (1 no driver, 1 bound to vfio-pci)") in result["msg"]


def test_a_refused_reset_with_a_reboot_to_follow_is_applied_by_the_reboot():
    refusal = lib.vf_refusal("0000:3b:00", {"0000:3b:00.1": {"numvfs": 2, "vfs": {}}}, "gpu01")
    assert lib.refused_reset(None, True) == (None, None) and lib.refused_reset(None, False) == (None, None)
    # no reboot follows (nic_link_type_reset alone, or site.yml's first play): the refusal fails the task
    assert lib.refused_reset(refusal, False) == (refusal, None)
    # the rolling play with fabric_reboot: no error, the reason goes onto the pending ports
    assert lib.refused_reset(refusal, True) == (None, (
        "reset refused (gpu01: a firmware reset of 0000:3b:00 would remove its VFs (the reset sets sriov_numvfs to "
        "0): 0000:3b:00.1 has 2 VFs (none listed)); applied by the reboot"))
    level = lib.reset_level_refusal("0000:3b:00.0", 3, {"levels": {4: {"text": "", "supported": True}}})
    assert lib.refused_reset(level, True)[1] == ("reset refused (0000:3b:00.0 does not support firmware reset level "
                                                 "3 (driver restart and PCI reset) now; supported: 4 (warm reboot of "
                                                 "the node)); applied by the reboot")


def test_rolling_reset_refused_by_vfs_the_sriov_role_made_falls_back_to_the_reboot(capsys, host):
    """REVIEW-30 D3: the first play checked the reset before sriov created VFs on the NIC; in the rolling play the
    reset is refused, and with fabric_reboot the node is rebooted instead of failing (and stopping the rollout)."""
    first, _sent = task(capsys, host, reset=True, defer_reset=True, management_addresses=["10.0.0.5"])
    assert first["reset_devices"] == ["0000:3b:00.0"] and not first.get("failed")
    _add_vfs(host, "0000:3b:00.1", ["mlx5_core", "mlx5_core"])  # the sriov role runs after the check
    rolling, _sent = task(capsys, host, reset=True, reset_refused="reboot", management_addresses=["10.0.0.5"])
    assert not rolling.get("failed") and _fwreset_log(host)[-1] == "mlxfwreset -d 0000:3b:00.0 q"  # no reset run
    assert rolling["reset_devices"] == [] and not rolling["changed"]
    assert rolling["reset_refused"].startswith("reset refused (") and "would remove its VFs" in rolling["reset_refused"]
    assert rolling["reset_refused"].endswith("); applied by the reboot")
    assert rolling["reboot_pending"] == ["LINK_TYPE_P1 of 0000:3b:00.0 (ens6f0np0): ETH now, IB from the next boot "
                                         "(NIC firmware): " + rolling["reset_refused"]]
    # control: without a reboot to follow, the same refusal fails the task before any change
    alone, _sent = task(capsys, host, reset=True, management_addresses=["10.0.0.5"])
    assert alone["failed"] and "would remove its VFs" in alone["msg"] and alone["reset_refused"] is None


def test_no_vfs_written_as_zero_is_no_refusal(capsys, host):
    for pf in ("0000:3b:00.0", "0000:3b:00.1"):
        (host / "root/sys/bus/pci/devices" / pf / "sriov_numvfs").write_text("0\n")
    result, _sent = task(capsys, host, reset=True, management_addresses=["10.0.0.5"])
    assert not result.get("failed") and log(host)[-1] == "mlxfwreset -d 0000:3b:00.0 -l 3 -y reset"


def test_deferred_reset_is_checked_reported_and_left_pending(capsys, host):
    result, _sent = task(capsys, host, reset=True, defer_reset=True, management_addresses=["10.0.0.5"])
    assert result["reset_devices"] == ["0000:3b:00.0"]
    assert log(host) == ["mlxconfig -y -d 0000:3b:00.0 set LINK_TYPE_P1=1"]
    assert _fwreset_log(host) == ["mlxfwreset -d 0000:3b:00.0 q"]
    assert result["reboot_pending"] == ["LINK_TYPE_P1 of 0000:3b:00.0 (ens6f0np0): ETH now, IB from the next boot "
                                        "(NIC firmware)"]
    # the rolling play's reset (tasks/reset.yml): the same ports, reset now
    after, _sent = task(capsys, host, reset=True, management_addresses=["10.0.0.5"])
    assert log(host)[-1] == "mlxfwreset -d 0000:3b:00.0 -l 3 -y reset" and after["reboot_pending"] == []


def test_deferred_reset_refusal_comes_in_the_first_play(capsys, host, monkeypatch):
    monkeypatch.setenv("STANDIN_FWRESET_QUERY", os.path.join(FWRESET, "mstflint-layout-level4-only-legacy.txt"))
    result, _sent = task(capsys, host, reset=True, defer_reset=True, management_addresses=["10.0.0.5"])
    assert result["failed"] and log(host) == [] and "does not support firmware reset level 3" in result["msg"]


# -- BlueField: DPU or NIC mode (issue 30) ---------------------------------------------------------------------------

def test_bluefield_mode_from_the_offload_engine_query():
    assert lib.bluefield_mode(_fw("synthetic-bf3-dpu-mode-e-q-offload-engine.txt")) == "dpu"
    assert lib.bluefield_mode(_fw("synthetic-bf3-nic-mode-e-q-offload-engine.txt")) == "nic"
    # a query without the parameter (older firmware, another device): unknown
    assert lib.bluefield_mode(_fw("synthetic-cx7-doca-e-q.txt")) is None


BF_READING = {"pci": "0000:3b:00.0", "vendor": "0x15b3", "device_id": "0xa2dc", "link_layer": "ETH", "host": "gpu01",
              "firmware": {"configs": {"LINK_TYPE_P1": {}}, "link_type_p1": "ETH", "current": {"link_type_p1": "ETH"}}}


def test_a_bluefield_in_nic_mode_is_set_like_a_connectx():
    out = lib.port_actions(dict(PORT, link_type="IB"), dict(BF_READING, mode="nic"))
    assert out["action"] == "set" and out["argv"][-1] == "LINK_TYPE_P1=1"


def test_a_bluefield_in_dpu_mode_that_needs_another_type_is_refused():
    with pytest.raises(lib.LinkTypeError) as info:
        lib.port_actions(dict(PORT, link_type="IB"), dict(BF_READING, mode="dpu"))
    assert str(info.value) == (
        "nic_link_type: gpu01: ens6f0np0 (0000:3b:00.0) runs Ethernet and fabric compute wants InfiniBand, but it is "
        "a BlueField-3 in DPU mode (INTERNAL_CPU_OFFLOAD_ENGINE ENABLED(0)): its firmware does not take the host's "
        "configuration and a host reboot does not load it, so rebooting would never converge; not set. Fix: set "
        "LINK_TYPE_P1 on the DPU side (its Arm OS) and power-cycle the node, or switch the BlueField-3 to NIC mode")


def test_a_bluefield_in_dpu_mode_with_the_wanted_type_is_left_alone():
    assert lib.port_actions(PORT, dict(BF_READING, mode="dpu"))["action"] == "ok"


def test_a_bluefield_whose_mode_is_unknown_is_refused_and_a_connectx_is_not_asked():
    with pytest.raises(lib.LinkTypeError) as info:
        lib.port_actions(dict(PORT, link_type="IB"), dict(BF_READING, mode=None, mode_error="mlxconfig failed"))
    assert "a BlueField-3 whose mode (DPU or NIC) could not be read: mlxconfig failed" in str(info.value)
    # a ConnectX-7 (device 0x1021) has no mode: set as before
    out = lib.port_actions(dict(PORT, link_type="IB"), dict(BF_READING, device_id="0x1021", mode=None))
    assert out["action"] == "set"


def _bluefield(host, monkeypatch, mode_file):
    for pci in ("0000:3b:00.0", "0000:3b:00.1"):
        (host / "root/sys/bus/pci/devices" / pci / "device").write_text("0xa2dc\n")
    if mode_file:
        monkeypatch.setenv("STANDIN_MODE", os.path.join(MLXCONFIG, mode_file))


def test_module_refuses_a_dpu_mode_bluefield_before_any_change(capsys, host, monkeypatch):
    import socket
    _bluefield(host, monkeypatch, "synthetic-bf3-dpu-mode-e-q-offload-engine.txt")
    result, _sent = task(capsys, host)
    assert result["failed"] and log(host) == [], result["commands"]
    assert result["msg"].startswith("nic_link_type: %s: ens6f0np0 (0000:3b:00.0) runs Ethernet and fabric compute "
                                    "wants InfiniBand, but it is a BlueField-3 in DPU mode" % socket.gethostname())
    queries = (host / "tools.log").read_text().splitlines()
    assert "mlxconfig -d 0000:3b:00.0 -e q INTERNAL_CPU_OFFLOAD_ENGINE" in queries


def test_module_sets_a_nic_mode_bluefield(capsys, host, monkeypatch):
    _bluefield(host, monkeypatch, "synthetic-bf3-nic-mode-e-q-offload-engine.txt")
    result, _sent = task(capsys, host)
    assert not result.get("failed") and log(host) == ["mlxconfig -y -d 0000:3b:00.0 set LINK_TYPE_P1=1"]
    assert result["reboot_pending"]


def test_a_mode_the_full_query_lists_is_read_from_it_without_a_second_query(capsys, host, monkeypatch):
    # the full query (-e q) lists INTERNAL_CPU_OFFLOAD_ENGINE: no query of that parameter alone (none is given to
    # the stand-in, so one would fail); DPU mode refused, NIC mode set, as from the parameter's own query
    _bluefield(host, monkeypatch, None)
    monkeypatch.setenv("STANDIN_FULL_MODE", "ENABLED(0)")
    result, _sent = task(capsys, host)
    assert result["failed"] and log(host) == [] and "a BlueField-3 in DPU mode" in result["msg"], result
    assert not [q for q in (host / "tools.log").read_text().splitlines() if "INTERNAL_CPU_OFFLOAD_ENGINE" in q]
    monkeypatch.setenv("STANDIN_FULL_MODE", "DISABLED(1)")
    result, _sent = task(capsys, host)
    assert not result.get("failed") and log(host) == ["mlxconfig -y -d 0000:3b:00.0 set LINK_TYPE_P1=1"], result


def test_module_refuses_a_bluefield_whose_mode_query_fails(capsys, host, monkeypatch):
    _bluefield(host, monkeypatch, None)
    result, _sent = task(capsys, host)
    assert result["failed"] and log(host) == []
    assert "could not be read: mlxconfig -d 0000:3b:00.0 -e q INTERNAL_CPU_OFFLOAD_ENGINE failed (rc 1): -E- The " \
           "Device doesn't support INTERNAL_CPU_OFFLOAD_ENGINE parameter" in result["msg"]


# -- playbooks/site.yml: the reset runs in a maintenance window (issues 30, 41) ----------------------------------------

def test_site_checks_the_reset_in_the_first_play_and_runs_it_in_the_maintenance_window():
    import yaml
    root = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..")
    with open(os.path.join(root, "playbooks", "site.yml")) as handle:
        plays = yaml.safe_load(handle)
    prepare = next(p for p in plays if any(r.get("role") == "ainet.fabric.nic_link_type" for r in p.get("roles", [])))
    entry = next(r for r in prepare["roles"] if r.get("role") == "ainet.fabric.nic_link_type")
    assert entry["vars"] == {"__nic_link_type_defer_reset": True}
    # the first play names the window's steps: the reset only with fabric_reboot, where devices wait for it
    collect = next(t for t in prepare["tasks"] if "__site_maintenance_steps" in t.get("ansible.builtin.set_fact", {}))
    steps = collect["ansible.builtin.set_fact"]["__site_maintenance_steps"]
    assert "['firmware-reset'] if (fabric_reboot | default(false) | bool)" in steps
    assert "nic_link_type_result.reset_devices" in steps
    rolling = next(p for p in plays if any(r.get("role") == "ainet.fabric.maintenance" for r in p.get("roles", [])))
    window = next(r for r in rolling["roles"] if r.get("role") == "ainet.fabric.maintenance")
    assert window["maintenance_steps"] == "{{ __site_maintenance_steps | default([]) }}"
    assert window["maintenance_reboot_pending"] == "{{ __site_reboot_pending | default([]) }}"
    with open(os.path.join(root, "roles", "maintenance", "tasks", "steps.yml")) as handle:
        tasks = yaml.safe_load(handle)
    names = [t["name"] for t in tasks]
    reset = next(t for t in tasks if t.get("ansible.builtin.include_role", {}).get("tasks_from") == "reset")
    assert reset["ansible.builtin.include_role"]["name"] == "ainet.fabric.nic_link_type"
    assert "'firmware-reset' in __maintenance_steps" in reset["when"]
    with open(os.path.join(root, "roles", "nic_link_type", "tasks", "main.yml")) as handle:
        main = yaml.safe_load(handle)[0]["ainet.fabric.nic_link_type"]
    assert main["defer_reset"] == "{{ __nic_link_type_defer_reset | default(false) }}"
    with open(os.path.join(root, "roles", "nic_link_type", "tasks", "reset.yml")) as handle:
        again = yaml.safe_load(handle)[0]
    assert again["ainet.fabric.nic_link_type"]["reset"] is True and again["register"] == "nic_link_type_reset_result"
    # REVIEW-30 D3: a reset refused in the window falls back to the reboot only where one follows
    assert again["ainet.fabric.nic_link_type"]["reset_refused"] == \
        "{{ (fabric_reboot | default(false) | bool) | ternary('reboot', 'fail') }}"
    # ... and what the refused reset leaves pending is what the node reboots for: the window's reboot comes after
    leave = next(t for t in tasks if t["name"] == "Leave out what the firmware reset resolved")
    assert "+ nic_link_type_reset_result.reboot_pending" in leave["ansible.builtin.set_fact"]["__maintenance_pending_now"]
    assert names.index(reset["name"]) < names.index(leave["name"])
    with open(os.path.join(root, "roles", "maintenance", "tasks", "window.yml")) as handle:
        block = yaml.safe_load(handle)[0]["block"]
    inner = next(t for t in block if t["name"] == "Run the window")["block"]
    order = [t["name"] for t in inner]
    assert order.index("Run the steps") < order.index("Reboot the node") < order.index("Give the node back to the scheduler")
    # the sriov role (which may create VFs after the first play's check) runs before the windows
    assert plays.index(prepare) < plays.index(rolling)
