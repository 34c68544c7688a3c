# -*- coding: utf-8 -*-
"""doca_ofed module (issue 30), in-process against the host tree of ``test_doca_ofed.py`` with stand-in tools: the
plan names the current signing key and the headers meta-package, and before any reboot the kernel the next boot
starts gets the driver's DKMS modules (``dkms autoinstall -k``), honestly in check mode."""

from __future__ import annotations

import json
import os
import sys

from ansible_collections.ainet.fabric.tests.unit.plugins.modules.test_doca_ofed import (  # noqa: F401 (host is a fixture) # pylint: disable=unused-import
    RELEASE, host, run)

DKMS = r'''
import json, os, sys
state = json.load(open(os.environ["STANDIN_STATE"]))
with open(os.environ["STANDIN_LOG"], "a") as h:
    h.write("dkms " + " ".join(sys.argv[1:]) + "\n")
if sys.argv[1:3] == ["autoinstall", "-k"]:
    if state.get("autoinstall_fails"):
        sys.stderr.write("Error! Bad return status for module build on kernel: %s (x86_64)\n" % sys.argv[3])
        sys.exit(10)
    state["dkms"] += "mlnx-ofed-kernel/25.10.OFED.25.10.1.7.1.1, %s, x86_64: installed\n" % sys.argv[3]
    json.dump(state, open(os.environ["STANDIN_STATE"], "w"))
else:
    sys.stdout.write(state["dkms"])
'''
NEXT = "99.0.0-1-generic"  # sorts after any real running kernel


def boot(tmp, *kernels, headers=True):
    (tmp / "bin" / "dkms").write_text("#!%s\n%s" % (sys.executable, DKMS))
    os.makedirs(str(tmp / "cfg" / "boot"), exist_ok=True)
    for kernel in kernels:
        (tmp / "cfg" / "boot" / ("vmlinuz-" + kernel)).write_text("")
        if headers:
            os.makedirs(str(tmp / "sys" / "lib" / "modules" / kernel / "build"), exist_ok=True)


def tool_log(tmp):
    path = tmp / "tools.log"
    return [line for line in path.read_text().splitlines() if "autoinstall" in line] if path.exists() else []


def test_the_next_boots_kernel_gets_its_modules_before_the_reboot(capsys, host):  # noqa: F811
    boot(host, RELEASE, NEXT)
    checked = run(capsys, host, check=True, version="3.2.1")
    assert checked["changed"] and checked["commands"] == ["dkms autoinstall -k " + NEXT] and tool_log(host) == []
    done = run(capsys, host, version="3.2.1")
    assert done["changed"] and tool_log(host) == ["dkms autoinstall -k " + NEXT]
    assert done["boot"]["kernel"] == NEXT and done["boot"]["built"]
    again = run(capsys, host, version="3.2.1")
    assert not again["changed"] and len(tool_log(host)) == 1 and again["boot"]["command"] is None


def test_the_running_kernel_as_the_next_boots_needs_nothing(capsys, host):  # noqa: F811
    boot(host, RELEASE)
    result = run(capsys, host, version="3.2.1")
    assert not result["changed"] and tool_log(host) == []


def test_no_headers_for_the_next_boots_kernel_fails_with_the_fix(capsys, host):  # noqa: F811
    boot(host, RELEASE, NEXT, headers=False)
    result = run(capsys, host, version="3.2.1")
    assert result["failed"] and tool_log(host) == []
    assert "the next boot starts kernel %s, which has no mlnx-ofed-kernel modules built and no headers" % NEXT in \
        result["msg"]


def test_a_failed_build_for_the_next_boot_is_one_line(capsys, host):  # noqa: F811
    boot(host, RELEASE, NEXT)
    state = json.loads((host / "state.json").read_text())
    state["autoinstall_fails"] = True
    (host / "state.json").write_text(json.dumps(state))
    result = run(capsys, host, version="3.2.1")
    assert result["failed"] and "'dkms autoinstall -k %s' did not build" % NEXT in result["msg"]
    assert "Bad return status" in result["msg"] and "\n" not in result["msg"]


def test_the_plan_names_the_doca_host_key_and_the_headers_meta_package(capsys, host, monkeypatch):  # noqa: F811
    # Ubuntu 22.04 with the GA and the HWE meta-packages, the HWE kernel running (REVIEW-30 D1)
    recorded = os.path.join(os.path.dirname(__file__), "..", "module_utils", "data", "doca", "dpkg_query",
                            "ubuntu2204-ga-and-hwe.txt")
    # the stand-in answers only the query the sample was written for (format and pattern)
    (host / "bin" / "dpkg-query").write_text(
        "#!%s\nimport sys\nif sys.argv[1:] == ['-W', '-f', '${Package} ${db:Status-Abbrev} ${Depends}\\n', "
        "'linux-image-*']:\n    sys.stdout.write(open(%r).read())\n" % (sys.executable, os.path.abspath(recorded)))
    os.chmod(str(host / "bin" / "dpkg-query"), 0o755)
    uname = os.uname()
    monkeypatch.setattr(os, "uname", lambda: (uname[0], uname[1], "6.8.0-45-generic", uname[3], uname[4]))
    plan = run(capsys, host, state="plan", version="3.2.1", key_fingerprint=["70454E6BF5D9C2D3B78709E8DC726C5E41B9CC50"])
    assert plan["key"] == {"url": "https://linux.mellanox.com/public/repo/doca/public_keys/"
                                  "nvidia-doca-debian-gpg-public-key.gpg",
                           "origin": "https://linux.mellanox.com/public/repo/doca/public_keys/"
                                     "nvidia-doca-debian-gpg-public-key.gpg",
                           "fingerprints": ["70454E6BF5D9C2D3B78709E8DC726C5E41B9CC50"]}
    assert plan["headers"]["release"] == "6.8.0-45-generic"
    assert plan["headers"]["meta"] == "linux-headers-generic-hwe-22.04"
    bad = run(capsys, host, state="plan", version="3.2.1", key_fingerprint=["DC726C5E41B9CC50"])
    assert bad["failed"] and bad["msg"].startswith("doca_ofed_key_fingerprint: 'DC726C5E41B9CC50' is not a key")
