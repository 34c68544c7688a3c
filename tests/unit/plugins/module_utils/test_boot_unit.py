# -*- coding: utf-8 -*-
"""boot_unit.foreign_units: the one scan for other tools' units and udev rules that set what a host role owns
(sriov's sriov_numvfs, pcie_acs's ACS writes, roce_qos's NIC QoS), on a configuration tree in a temporary
directory, with the needles each role uses."""

from __future__ import annotations

import os

from ansible_collections.ainet.fabric.plugins.module_utils.host import pcie_acs_state, roce_qos_state, sriov_state
from ansible_collections.ainet.fabric.plugins.module_utils.host.boot_unit import foreign_units

UNITS = "etc/systemd/system"
RULES = "etc/udev/rules.d"


def write(root, rel, text):
    path = os.path.join(str(root), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


def test_nothing_to_find_without_the_directories(tmp_path):
    assert foreign_units(str(tmp_path), "pcie_acs", pcie_acs_state.FOREIGN) == []


def test_exec_lines_only_own_unit_and_other_suffixes_skipped(tmp_path):
    write(tmp_path, UNITS + "/acs-off.service", "[Service]\nExecStart=/usr/bin/setpci -s 00:03.0 ECAP_ACS+6.w=0\n")
    write(tmp_path, UNITS + "/b-pre.service", "[Service]\nExecStartPre=/sbin/setpci -s 0000:00:03.0 ecap0d+6.w=0\n")
    write(tmp_path, UNITS + "/doc.service",
          "[Unit]\nDescription=does not write ECAP_ACS\n[Service]\nExecStart=/bin/true\n")
    write(tmp_path, UNITS + "/ainet-pcie-acs.service",
          "[Service]\nExecStart=/usr/bin/setpci -s 0 ECAP_ACS+0x6.w=0000\n")
    write(tmp_path, UNITS + "/acs.timer", "[Timer]\nExecStart=setpci ECAP_ACS\n")
    os.makedirs(str(tmp_path / UNITS / "dir.service"))
    assert foreign_units(str(tmp_path), "pcie_acs", pcie_acs_state.FOREIGN) == [
        ("/etc/systemd/system/acs-off.service", []), ("/etc/systemd/system/b-pre.service", [])]


def test_the_roce_qos_needles(tmp_path):
    write(tmp_path, UNITS + "/rdma-qos.service", "[Service]\nExecStart=/usr/bin/mlnx_qos -i ens1f0np0 --trust pcp\n")
    write(tmp_path, UNITS + "/dcb.service", "[Service]\nExecStart=/sbin/dcb pfc set dev eth2 prio-pfc 3:on\n")
    write(tmp_path, UNITS + "/lldp.service", "[Service]\nExecStart=/usr/sbin/lldpad -d\n")
    write(tmp_path, UNITS + "/tos.service",
          "[Service]\nExecStart=/bin/sh -c 'echo 106 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class'\n")
    write(tmp_path, UNITS + "/ainet-roce-qos.service", "[Service]\nExecStart=/usr/sbin/mlnx_qos -i x --trust dscp\n")
    found = [path for path, _labels in foreign_units(str(tmp_path), roce_qos_state.ROLE, roce_qos_state.FOREIGN)]
    assert found == ["/etc/systemd/system/dcb.service", "/etc/systemd/system/rdma-qos.service",
                     "/etc/systemd/system/tos.service"]


def test_about_keeps_only_files_that_name_a_label_as_a_whole_word(tmp_path):
    write(tmp_path, RULES + "/70-vfs.rules", 'KERNEL=="enp1s0", ATTR{device/sriov_numvfs}="4"\n')
    write(tmp_path, RULES + "/71-other.rules", 'KERNEL=="enp1s0v0", ATTR{device/sriov_numvfs}="4"\n')
    write(tmp_path, RULES + "/72-pci.rules", 'KERNELS=="0000:02:00.0", ATTR{sriov_numvfs}="2"\n')
    write(tmp_path, RULES + "/73-both.rules", 'KERNEL=="enp1s0|enp2s0", ATTR{device/sriov_numvfs}="2"\n')
    write(tmp_path, RULES + "/74-name-only.rules", 'KERNEL=="enp1s0", ATTR{mtu}="9000"\n')
    write(tmp_path, UNITS + "/vfs.service",
          "[Service]\nExecStart=/bin/sh -c 'echo 2 > /sys/class/net/enp2s0/device/sriov_numvfs'\n")
    about = {"enp1s0": ["enp1s0", "0000:01:00.0"], "enp2s0": ["enp2s0", "0000:02:00.0"]}
    found = foreign_units(str(tmp_path), sriov_state.ROLE, sriov_state.FOREIGN, dirs=sriov_state.RULE_DIRS,
                          suffixes=sriov_state.RULE_SUFFIXES, exec_only=False, about=about)
    assert found == [("/etc/udev/rules.d/70-vfs.rules", ["enp1s0"]), ("/etc/udev/rules.d/72-pci.rules", ["enp2s0"]),
                     ("/etc/udev/rules.d/73-both.rules", ["enp1s0", "enp2s0"]),
                     ("/etc/systemd/system/vfs.service", ["enp2s0"])]
    # no PF wanted: nothing can be about one
    assert foreign_units(str(tmp_path), sriov_state.ROLE, sriov_state.FOREIGN, dirs=sriov_state.RULE_DIRS,
                         suffixes=sriov_state.RULE_SUFFIXES, exec_only=False, about={}) == []
