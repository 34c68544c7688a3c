# -*- coding: utf-8 -*-
"""gpu_host (issue 30): the GPU operator values a node needs (host driver, GPU generation, host MLNX_OFED / DOCA-OFED,
the legacy peermem path), a group of nodes that disagrees, and the locked-memory limit of running containerd / kubelet.

Parsers run on recorded outputs (``module_utils/data/gpu``, ORIGIN.md); the module runs in-process against
test_gpu_host's host tree, with the PCI ids and ``/proc`` files taken from those recordings and stand-in
``nvidia-smi`` / ``systemctl`` on PATH (the stand-in systemctl logs its arguments and, for a restart, writes the
limits a service started after ``DefaultLimitMEMLOCK=infinity`` shows)."""

from __future__ import annotations

import os
import re
import sys

import pytest
from ansible_collections.ainet.fabric.tests.unit.plugins.modules import test_gpu_host
from ansible_collections.ainet.fabric.tests.unit.plugins.modules.test_gpu_host import run, tools

from ansible_collections.ainet.fabric.plugins.module_utils.host import gpu_host_state as lib

DATA = os.path.join(os.path.dirname(__file__), "..", "module_utils", "data", "gpu")
LSPCI = re.compile(r"^(?:[0-9a-f]{4}:)?(?P<bus>[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) .*\[(?P<cls>[0-9a-f]{4})\]: .*"
                   r"\[(?P<vendor>[0-9a-f]{4}):(?P<device>[0-9a-f]{4})\]")


def data(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def lspci_gpu(name):
    """The first GPU row of a recorded ``lspci -nn`` as sysfs holds it (address, class, vendor, device)."""
    match = LSPCI.match(data(name).splitlines()[0])
    return {"pci": "0000:" + match.group("bus"), "class": "0x%s00" % match.group("cls"),
            "vendor": "0x" + match.group("vendor"), "device": int(match.group("device"), 16)}


H100 = lspci_gpu("lspci-nn-h100-sxm5.txt")
V100 = lspci_gpu("lspci-nn-v100-pcie.txt")


def gpu(recorded, compute_cap=None):
    return {"pci": recorded["pci"], "device": recorded["device"], "name": None, "compute_cap": compute_cap}


def node(*gpus, **facts):
    out = {"gpus": list(gpus), "rdma_nics": True, "release": "6.8.0-45-generic", "legacy": False,
           "ofed": {"installed": False, "loaded": False, "evidence": None}, "host_driver": {}}
    out.update(facts)
    return out


HOST_OFED = {"installed": True, "loaded": True, "evidence": "ofed_info, /usr/src/ofa_kernel"}


# -- parsers on recorded outputs ------------------------------------------------------------------------------------

def test_the_recorded_lspci_rows_carry_the_generations_pci_ids():
    assert (H100["device"], H100["class"], V100["device"]) == (0x2330, "0x030200", 0x1db6)
    assert lib.turing_or_later(gpu(H100)) is True and lib.turing_or_later(gpu(V100)) is False


def test_nvidia_smi_gpu_query_is_read_and_an_old_driver_is_no_table():
    rows = lib.parse_gpu_query(data("nvidia-smi-query-h100-8gpu.csv"))
    assert rows == [("NVIDIA H100 80GB HBM3", (9, 0))] * 8
    assert lib.parse_gpu_query(data("nvidia-smi-query-v100.csv")) == [("Tesla V100-SXM2-16GB", (7, 0))]
    assert lib.parse_gpu_query(data("nvidia-smi-query-old-driver.txt")) is None
    # the compute capability decides over the device id (a Volta reported by nvidia-smi, whatever sysfs says)
    assert lib.turing_or_later(gpu(H100, (7, 0))) is False and lib.turing_or_later(gpu(V100, (7, 5))) is True


def test_proc_driver_version_names_the_kernel_module_flavour():
    assert lib.parse_driver_version(data("proc-driver-nvidia-version-open-580.txt")) == {
        "flavour": "open", "version": "580.95.05"}
    assert lib.parse_driver_version(data("proc-driver-nvidia-version-proprietary-515.txt")) == {
        "flavour": "proprietary", "version": "515.76"}
    assert lib.parse_driver_version("GCC version:  gcc version 11.4.0\n") is None


def test_proc_limits_memlock_row_and_the_pending_restart():
    assert lib.parse_limits(data("proc-pid-limits-dockerd-ubuntu2404.txt")) == ("8388608", "8388608")
    unlimited = lib.parse_limits(data("proc-pid-limits-unlimited-synthetic.txt"))
    assert unlimited == ("unlimited", "unlimited")
    control = {"comm": "containerd", "pid": 812, "unit": "containerd.service", "limits": unlimited}
    assert lib.restart_pending([control]) == []
    old = dict(control, limits=("8388608", "8388608"))
    assert lib.restart_pending([old]) == ["containerd (pid 812) runs with Max locked memory 8388608/8388608, wanted "
                                          "unlimited: restart containerd.service to pick up the new limit"]
    assert lib.restart_pending([dict(control, limits=("unlimited", "8388608"))]) != []  # hard limit alone is enough


# -- the values a node forces -----------------------------------------------------------------------------------------

def test_turing_or_later_gets_dma_buf_and_volta_the_proprietary_modules_and_peermem():
    control = lib.operator_values(node(gpu(H100)))
    assert control["values"] == {"driver.kernelModuleType": "open", "driver.rdma.enabled": False}
    volta = lib.operator_values(node(gpu(V100)))
    assert volta["values"] == {"driver.kernelModuleType": "proprietary", "driver.rdma.enabled": True,
                               "driver.rdma.useHostMofed": False}
    assert "10de:1db6 is older than Turing" in volta["reasons"][0]["why"]
    assert volta["reasons"][0]["source"] == lib.SOURCE_OPEN
    # one Volta beside Turing+ GPUs on the node decides
    assert lib.operator_values(node(gpu(H100), gpu(V100)))["values"]["driver.kernelModuleType"] == "proprietary"


def test_host_ofed_sets_use_host_mofed_only_on_the_peermem_path():
    legacy = lib.operator_values(node(gpu(V100), ofed=HOST_OFED))
    assert legacy["values"]["driver.rdma.useHostMofed"] is True
    # DMA-BUF: the operator ignores useHostMofed without rdma.enabled, so it is not set, and that is said
    dmabuf = lib.operator_values(node(gpu(H100), ofed=HOST_OFED))
    assert "driver.rdma.useHostMofed" not in dmabuf["values"]
    assert any("reads it only with driver.rdma.enabled=true" in r["why"] for r in dmabuf["reasons"])
    asked = lib.operator_values(node(gpu(H100), ofed=HOST_OFED, legacy=True))
    assert asked["values"] == {"driver.rdma.enabled": True, "driver.rdma.useHostMofed": True}


def test_a_driver_installed_on_the_host_turns_the_operators_driver_off():
    host = {"smi": "/usr/bin/nvidia-smi", "loaded": True,
            "version": lib.parse_driver_version(data("proc-driver-nvidia-version-open-580.txt"))}
    found = lib.operator_values(node(gpu(H100), host_driver=host))
    assert found["values"] == {"driver.enabled": False}
    assert "open kernel modules 580.95.05" in found["reasons"][0]["why"]
    # the operator's own driver container loads the module too: no nvidia-smi at the validator's paths, no host driver
    container = lib.operator_values(node(gpu(H100), host_driver=dict(host, smi=None)))
    assert "driver.enabled" not in container["values"]
    proprietary = dict(host, version=lib.parse_driver_version(data("proc-driver-nvidia-version-proprietary-515.txt")))
    notes = [r["why"] for r in lib.operator_values(node(gpu(H100), host_driver=proprietary))["reasons"]]
    assert any("proprietary kernel modules" in why and "load nvidia_peermem" in why for why in notes), notes


def test_a_group_that_disagrees_is_reported_not_resolved():
    h100 = lib.operator_values(node(gpu(H100)))
    control = lib.operator_group({"gpu01": h100, "gpu02": h100, "cpu01": None})
    assert control == {"values": {"driver.kernelModuleType": "open", "driver.rdma.enabled": "false"}, "conflicts": []}
    mixed = lib.operator_group({"gpu01": h100, "gpu02": h100, "gpu03": lib.operator_values(node(gpu(V100)))})
    assert mixed["values"] == {"driver.rdma.useHostMofed": "false"}
    assert mixed["conflicts"][0].startswith("driver.kernelModuleType: open on gpu01, gpu02; proprietary on gpu03; ")
    assert mixed["conflicts"][1].startswith("driver.rdma.enabled: false on gpu01, gpu02; true on gpu03; ")


# -- the module on a host tree --------------------------------------------------------------------------------------

STANDIN = r'''
import os, sys
name = os.path.basename(sys.argv[0])
with open(os.environ["STANDIN_LOG"], "a") as h:
    h.write(name + " " + " ".join(sys.argv[1:]) + "\n")
if name == "nvidia-smi":
    sys.stdout.write(open(os.environ["STANDIN_SMI"]).read())
    sys.exit(int(os.environ.get("STANDIN_SMI_RC", "0")))
if name == "systemctl" and sys.argv[1] == "restart":
    comm = {"containerd.service": "containerd", "kubelet.service": "kubelet"}[sys.argv[2]]
    proc = os.path.join(os.environ["STANDIN_SYS"], "proc")
    for pid in os.listdir(proc):
        if pid.isdigit() and open(os.path.join(proc, pid, "comm")).read().strip() == comm:
            with open(os.path.join(proc, pid, "limits"), "w") as h:
                h.write(open(os.environ["STANDIN_RESTARTED"]).read())
'''


@pytest.fixture
def host(tmp_path, monkeypatch):
    """test_gpu_host's Debian node with the recorded V100 (10de:1db6) in its GPU's place, stand-in nvidia-smi and
    systemctl, containerd (pid 812) running with the recorded 8 MiB limit, kubelet (pid 901) already unlimited."""
    root = test_gpu_host.host.__wrapped__(tmp_path, monkeypatch)
    (root / "sys/sys/bus/pci/devices/0000:17:00.0/device").write_text("0x%04x\n" % V100["device"])
    for name in ("nvidia-smi", "systemctl"):
        (root / "bin" / name).write_text("#!%s\n%s" % (sys.executable, STANDIN))
        os.chmod(str(root / "bin" / name), 0o755)
    for pid, comm, limits in ((812, "containerd", "proc-pid-limits-dockerd-ubuntu2404.txt"),
                              (901, "kubelet", "proc-pid-limits-unlimited-synthetic.txt"),
                              (955, "containerd-shim", "proc-pid-limits-dockerd-ubuntu2404.txt")):
        os.makedirs(str(root / "sys/proc" / str(pid)))
        (root / "sys/proc" / str(pid) / "comm").write_text(comm + "\n")
        (root / "sys/proc" / str(pid) / "limits").write_text(data(limits))
    monkeypatch.setenv("STANDIN_SMI", os.path.join(DATA, "nvidia-smi-query-v100.csv"))
    monkeypatch.setenv("STANDIN_SYS", str(root / "sys"))
    monkeypatch.setenv("STANDIN_RESTARTED", os.path.join(DATA, "proc-pid-limits-unlimited-synthetic.txt"))
    return root


def test_a_volta_node_gets_the_proprietary_modules(capsys, host):
    result = run(capsys, host, boot_loader="none")
    assert result["gpu_operator"]["values"]["driver.kernelModuleType"] == "proprietary", result["gpu_operator"]
    assert result["gpu_operator"]["gpus"] == [{"pci": "0000:17:00.0", "device": 0x1db6, "name": None,
                                               "compute_cap": None}]
    (host / "sys/sys/bus/pci/devices/0000:17:00.0/device").write_text("0x%04x\n" % H100["device"])
    assert run(capsys, host, boot_loader="none")["gpu_operator"]["values"]["driver.kernelModuleType"] == "open"


def test_a_loaded_driver_is_asked_for_the_compute_capability_and_a_host_driver_is_found(capsys, host, monkeypatch):
    # sysfs says H100, the loaded driver's nvidia-smi says Volta 7.0: the compute capability decides
    (host / "sys/sys/bus/pci/devices/0000:17:00.0/device").write_text("0x%04x\n" % H100["device"])
    os.makedirs(str(host / "sys/sys/module/nvidia"))
    result = run(capsys, host, boot_loader="none")
    assert "nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader" in tools(host)
    assert result["gpu_operator"]["gpus"][0]["compute_cap"] == [7, 0]
    assert result["gpu_operator"]["values"]["driver.kernelModuleType"] == "proprietary"
    assert "driver.enabled" not in result["gpu_operator"]["values"]  # no nvidia-smi on the host root yet
    # an old driver without compute_cap: the device id decides
    monkeypatch.setenv("STANDIN_SMI", os.path.join(DATA, "nvidia-smi-query-old-driver.txt"))
    monkeypatch.setenv("STANDIN_SMI_RC", "2")
    assert run(capsys, host, boot_loader="none")["gpu_operator"]["values"]["driver.kernelModuleType"] == "open"
    # the driver installed on the host: nvidia-smi where the validator looks, /proc/driver/nvidia/version
    os.makedirs(str(host / "cfg/usr/bin"))
    (host / "cfg/usr/bin/nvidia-smi").write_text("#!/bin/sh\n")
    os.chmod(str(host / "cfg/usr/bin/nvidia-smi"), 0o755)
    os.makedirs(str(host / "sys/proc/driver/nvidia"))
    (host / "sys/proc/driver/nvidia/version").write_text(data("proc-driver-nvidia-version-open-580.txt"))
    found = run(capsys, host, boot_loader="none")["gpu_operator"]
    assert found["values"] == {"driver.enabled": False}, found


def test_host_ofed_on_the_peermem_path(capsys, host):
    os.makedirs(str(host / "cfg/usr/src/ofa_kernel/x86_64"))
    values = run(capsys, host, boot_loader="none")["gpu_operator"]["values"]
    assert values["driver.rdma.enabled"] is True and values["driver.rdma.useHostMofed"] is True


def test_host_ofed_loaded_is_read_where_doca_ofed_reads_it(capsys, host):
    """REVIEW-30: whether the loaded mlx5_core is DOCA's comes from doca_ofed_load.read_loaded_mlx5_core
    (/sys/module/mlx5_core/version), the same reading doca_ofed's verification makes."""
    os.makedirs(str(host / "cfg/usr/src/ofa_kernel/x86_64"))
    os.makedirs(str(host / "sys/sys/module/mlx5_core"))
    (host / "sys/sys/module/mlx5_core/srcversion").write_text("INBOX0001\n")  # the kernel's own: no version file

    def unloaded_note():
        reasons = run(capsys, host, boot_loader="none")["gpu_operator"]["reasons"]
        return [r["why"] for r in reasons if "installed but not loaded" in (r["why"] or "")]
    assert unloaded_note()
    (host / "sys/sys/module/mlx5_core/version").write_text("25.10-1.7.1\n")  # DOCA's build is the loaded one
    assert unloaded_note() == []


def test_a_running_service_with_the_old_memlock_is_a_pending_restart_until_opted_in(capsys, host):
    first = run(capsys, host, boot_loader="none")
    pending = ["containerd (pid 812) runs with Max locked memory 8388608/8388608, wanted unlimited: restart "
               "containerd.service to pick up the new limit"]
    assert first["restart_pending"] == pending and not any("systemctl" in line for line in tools(host))
    again = run(capsys, host, boot_loader="none")
    assert not again["changed"] and again["restart_pending"] == pending  # said again, nothing changed
    check = run(capsys, host, check=True, boot_loader="none", restart_services=True)
    assert check["changed"] and check["commands"] == ["systemctl restart containerd.service"]
    assert check["restart_pending"] == pending and not any("systemctl" in line for line in tools(host))
    real = run(capsys, host, boot_loader="none", restart_services=True)
    assert real["changed"] and real["restart_pending"] == [], real
    assert [line for line in tools(host) if line.startswith("systemctl")] == ["systemctl restart containerd.service"]
    assert not run(capsys, host, boot_loader="none", restart_services=True)["changed"]


def test_memlock_off_reads_no_service(capsys, host):
    assert run(capsys, host, boot_loader="none", memlock=False)["restart_pending"] == []
