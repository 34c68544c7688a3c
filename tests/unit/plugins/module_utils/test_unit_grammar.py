# -*- coding: utf-8 -*-
"""The boot units the host roles write, judged by systemd's own tools.

- ``systemd-escape --path --suffix=device`` names an interface's device unit; boot_unit.device_unit must agree;
- ``systemd-analyze verify`` loads the sriov, roce_qos and pcie_acs units rendered for real names (with ``-`` and
  ``.``) without a warning (a specifier it cannot resolve, unbalanced quoting, a bad setting);
- a ``%`` in any unit value is refused by the dumper (systemd would read it as a specifier), and the shell lines
  (boot_unit.wait_for / write_sysfs) refuse a path or value with a character systemd or sh reads as syntax.

The threat model this file proves part of: docs/security.md (output grammars: systemd units).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.common.file_formats import unit_dump
from ansible_collections.ainet.fabric.plugins.module_utils.host import boot_unit
from ansible_collections.ainet.fabric.plugins.module_utils.host import pcie_acs_state
from ansible_collections.ainet.fabric.plugins.module_utils.host import roce_qos_state
from ansible_collections.ainet.fabric.plugins.module_utils.host import sriov_state
from ansible_collections.ainet.fabric.plugins.module_utils.model.qos_profile import resolve_profile

ESCAPE = shutil.which("systemd-escape")
ANALYZE = shutil.which("systemd-analyze")
TRUE = shutil.which("true")
NAMES = ["ens1f0np0", "ens1-f0", "bond0.100", "a_b-c.d", "9x"]


@pytest.mark.skipif(not ESCAPE, reason="systemd-escape is not installed")
@pytest.mark.parametrize("name", NAMES)
def test_device_unit_names_as_systemd_escapes_them(name):
    real = subprocess.run([ESCAPE, "--path", "--suffix=device", "/sys/subsystem/net/devices/" + name],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert boot_unit.device_unit(name) == real


def verify(tmp_path, name, text, debug=False):
    path = tmp_path / name
    path.write_text(text)
    env = dict(os.environ, SYSTEMD_LOG_LEVEL="debug") if debug else None
    done = subprocess.run([ANALYZE, "verify", "--man=no", str(path)], capture_output=True, text=True, check=False,
                          env=env)
    return done.returncode, (done.stdout + done.stderr).strip()


def loaded(tmp_path, name, text, field):
    """The values of ``field`` in the unit as systemd loaded it (``systemd-analyze verify``'s debug dump)."""
    out = verify(tmp_path, name, text, debug=True)[1]
    return [line.split(field + ": ", 1)[1] for line in out.splitlines() if line.strip().startswith(field + ": ")]


def sriov_unit(name):
    pf = {"name": name, "exists": True, "pci": "0000:17:00.0", "driver": "mlx5_core", "mac": "b8:3f:d2:00:00:01",
          "total_vfs": 8, "num_vfs": 0, "vfs": [], "vfinfo": {}, "firmware": None}
    want = sriov_state.check_wanted([{"name": name, "vfs": 2, "trust": True, "spoof_check": False,
                                      "link_state": "auto"}])[name]
    return unit_dump(sriov_state.unit_sections([(pf, want, "derived")], shutil.which("ip") or "/sbin/ip"), "h")


def roce_unit(name):
    settings = roce_qos_state.check_settings(dict(resolve_profile({}, "q"), name=name))
    actions = roce_qos_state.nic_actions(settings, name, "mlnx_qos", None, "mlx5_0")
    return unit_dump(roce_qos_state.boot_unit([(name, "mlx5_0", actions)], "mlnx_qos", TRUE), "h")


@pytest.mark.skipif(not ANALYZE, reason="systemd-analyze is not installed")
@pytest.mark.parametrize("name", NAMES)
def test_the_boot_units_load_in_systemd_without_a_warning(name, tmp_path):
    for unit, text in (("ainet-sriov.service", sriov_unit(name)), ("ainet-roce-qos.service", roce_unit(name)),
                       ("ainet-pcie-acs.service", unit_dump(pcie_acs_state.unit_sections(["0000:00:03.0"], TRUE),
                                                            "h"))):
        assert verify(tmp_path, unit, text) == (0, ""), unit
        assert boot_unit.device_unit(name) in text or unit == "ainet-pcie-acs.service"


@pytest.mark.skipif(not ANALYZE, reason="systemd-analyze is not installed")
@pytest.mark.parametrize("name", NAMES)
def test_systemd_reads_each_exec_line_as_the_argv_we_meant(name, tmp_path):
    # systemd prints each command it parsed quoted as sh reads it ("Command Line:"; inside double quotes '$' and '`'
    # are written '\$' and '\`', which shlex leaves escaped): the same argv as our line, which holds no backslash
    def argv(display):
        return [arg.replace("\\$", "$").replace("\\`", "`") for arg in shlex.split(display)]

    for unit, text in (("ainet-sriov.service", sriov_unit(name)), ("ainet-roce-qos.service", roce_unit(name))):
        execs = [line.split("=", 1)[1].lstrip("-") for line in text.splitlines() if line.startswith("Exec")]
        assert "\\" not in "".join(execs)
        assert [argv(c) for c in loaded(tmp_path, unit, text, "Command Line")] == [shlex.split(e) for e in execs]


@pytest.mark.skipif(not ANALYZE, reason="systemd-analyze is not installed")
def test_a_trailing_backslash_is_refused_as_systemd_would_join_the_next_line(tmp_path):
    sections = [("Unit", [("Description", "foo \\"), ("After", "evil.target")]),
                ("Service", [("Type", "oneshot"), ("ExecStart", TRUE)])]
    with pytest.raises(ValueError) as info:
        unit_dump(sections)
    assert "trailing backslash" in str(info.value)
    # control: written anyway, systemd reads the After= line into the description
    text = "[Unit]\nDescription=foo \\\nAfter=evil.target\n[Service]\nType=oneshot\nExecStart=%s\n" % TRUE
    assert loaded(tmp_path, "ainet-c.service", text, "Description") == ["foo  After=evil.target"]


@pytest.mark.skipif(not ANALYZE, reason="systemd-analyze is not installed")
def test_control_systemd_analyze_sees_a_specifier_and_bad_quoting(tmp_path):
    # the judge above would see what the dumper refuses: a '%' it cannot resolve, a quote left open
    good = unit_dump(boot_unit.oneshot("t", "x", [boot_unit.write_sysfs("/sys/class/net/eth0/mtu", "9000")]), "h")
    assert verify(tmp_path, "ainet-t.service", good) == (0, "")
    assert "specifier" in verify(tmp_path, "ainet-t.service", good.replace("ainet.fabric t: x", "x %z"))[1]
    assert "quoting" in verify(tmp_path, "ainet-t.service", good.replace('mtu"', "mtu"))[1].lower()


@pytest.mark.parametrize("value", ["50%", "%n", "a%%b"])
def test_a_percent_in_a_unit_value_is_refused(value):
    with pytest.raises(ValueError) as info:
        unit_dump([("Unit", [("Description", value)])])
    assert "[Unit] Description=%r" % value in str(info.value) and "specifier" in str(info.value)
    assert unit_dump([("Unit", [("Description", "fifty percent")])]).endswith("Description=fifty percent\n")


@pytest.mark.parametrize("path", ["/sys/class/net/a;reboot/x", "/sys/class/net/a b/x", '/sys/class/net/a"/x',
                                  "/sys/class/net/$(x)/x", "/sys/class/net/../../etc/x", "/etc/passwd",
                                  "/sys/class/net/a%n/x", "/sys/class/net/a\\b/x", "sys/class/net/a"])
def test_a_shell_line_refuses_a_path_systemd_or_sh_would_read_as_syntax(path):
    for make in (lambda: boot_unit.wait_for(path), lambda: boot_unit.write_sysfs(path, "1")):
        with pytest.raises(FabricError) as info:
            make()
        assert repr(path) in str(info.value)


@pytest.mark.parametrize("value", ["1; reboot", "$x", "1 2", "", '"'])
def test_a_shell_line_refuses_a_value_with_syntax(value):
    with pytest.raises(FabricError):
        boot_unit.write_sysfs("/sys/class/net/eth0/mtu", value)
    assert boot_unit.write_sysfs("/sys/class/net/eth0/mtu", 9000)[1].endswith('echo 9000 > /sys/class/net/eth0/mtu"')
