# -*- coding: utf-8 -*-
"""doca_ofed_old_stack: what is installed (``ofed_info -s``, ``dpkg-query -W``, ``rpm -qa``), whether NVIDIA wants it
removed before DOCA-Host installs (MLNX_OFED, DOCA before 2.6), the commands, and the refusals - on recorded and
vendor-format outputs (``data/rdma/ofed_info``, ``data/doca/packages``, ``data/doca/proc_modules``, each with its
ORIGIN.md)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_load as load
from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_old_stack as old
from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_state as lib
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse_host import parse_ofed_info

DATA = os.path.join(os.path.dirname(__file__), "data")
UNINSTALL = ["/usr/sbin/ofed_uninstall.sh", "--force"]


def data(*parts):
    with open(os.path.join(DATA, *parts)) as handle:
        return handle.read()


def ofed(name):
    return parse_ofed_info(data("rdma", "ofed_info", name))["ofed"]


def deb(name):
    return lib.parse_dpkg_query(data("doca", "packages", name))


def rpm(name):
    return dict((n, {"version": v, "status": "ii"})
                for n, v in lib.parse_rpm_qa(data("doca", "packages", name)).items())


def test_package_queries_parse_every_status_and_the_epoch():
    packages = deb("dpkg-query-doca-2.5-synthetic.txt")
    assert packages["doca-host-repo-ubuntu2204"] == {"version": "2.5.0-0.0.1.23.10.1.1.9.0", "status": "ii"}
    assert packages["doca-sdk"] == {"version": "2.5.0108-1", "status": "rc"}
    assert packages["doca-tools"] == {"version": "", "status": "un"}
    assert lib.parse_dpkg_query(data("doca", "packages", "dpkg-query-mlnx-ofed-23.10.txt"))["openssh-server"][
        "version"] == "1:9.2p1-2+deb12u3"
    assert lib.parse_rpm_qa(data("doca", "packages", "rpm-qa-doca-2.5-alinux.txt"))["doca-host-repo-alinux32"] == \
        "2.5.0-0.0.1.2.5.0108.1.al8.23.10.1.1.9.0"
    assert lib.parse_rpm_qa("foo 3:1.0-1\n") == {"foo": "3:1.0-1"}


def test_doca_release_from_the_packages():
    assert old.doca_release(deb("dpkg-query-doca-3.2.0.txt")) == {
        "release": (3, 2), "package": "doca-host", "version": "3.2.0-125000-25.10-ubuntu2404"}
    # the removed (rc) and unknown (un) packages name no installed release
    assert old.doca_release(deb("dpkg-query-doca-2.5-synthetic.txt"))["package"] == "doca-host-repo-ubuntu2204"
    assert old.doca_release(deb("dpkg-query-mlnx-ofed-23.10.txt")) is None
    assert old.doca_release(rpm("rpm-qa-doca-2.7-alinux.txt"))["release"] == (2, 7)


def test_mlnx_ofed_is_old_and_removed_by_its_uninstaller():
    stack = old.old_stack(ofed("mlnx-ofed-23.10-azure.txt"), deb("dpkg-query-mlnx-ofed-23.10.txt"), "apt", True)
    assert stack == {"installed": "MLNX_OFED_LINUX-23.10-1.1.9.0", "packages": [], "commands": [UNINSTALL],
                     "problem": None}
    # the control: DOCA 3.2 (25.10) with its own packages is upgraded in place, nothing is removed
    assert old.old_stack(ofed("doca-ofed-25.10.txt"), deb("dpkg-query-doca-3.2.0.txt"), "apt", True) is None
    # only ofed_info differs: the legacy MLNX_OFED line makes the same host an old stack
    assert old.old_stack(ofed("mlnx-ofed-24.10-2.1.8.txt"), deb("dpkg-query-doca-3.2.0.txt"), "apt", True)[
        "installed"] == "MLNX_OFED_LINUX-24.10-2.1.8.0"
    # nothing here to remove it with
    lost = old.old_stack(ofed("mlnx-ofed-23.10-azure.txt"), deb("dpkg-query-mlnx-ofed-23.10.txt"), "apt", False)
    assert lost["commands"] == [] and "/usr/sbin/ofed_uninstall.sh" in lost["problem"]


def test_doca_before_2_6_is_purged_as_nvidia_says():
    stack = old.old_stack(None, deb("dpkg-query-doca-2.5-synthetic.txt"), "apt", True)
    assert stack["installed"] == "DOCA 2.5 (doca-host-repo-ubuntu2204 2.5.0-0.0.1.23.10.1.1.9.0)"
    # NVIDIA's name pattern: doca*, flexio; the rc package is purged too, the un one is not there
    assert stack["commands"] == [["apt-get", "remove", "--purge", "-y", "doca-host-repo-ubuntu2204", "doca-runtime",
                                  "doca-sdk", "flexio"], UNINSTALL]
    rhel = old.old_stack(None, rpm("rpm-qa-doca-2.5-alinux.txt"), "dnf", False)
    assert rhel["commands"] == [["dnf", "remove", "-y", "doca-host-repo-alinux32"]] and rhel["problem"] is None
    # the control: DOCA 2.7 on the same system is upgraded in place
    assert old.old_stack(None, rpm("rpm-qa-doca-2.7-alinux.txt"), "dnf", True) is None


@pytest.mark.parametrize("name,old_one", [
    ("ofed-internal-5.0-old.txt", True), ("doca-ofed-24.04.txt", False), ("doca-ofed-25.10.txt", False)])
def test_an_ofed_internal_driver_before_doca_2_6_is_old(name, old_one):
    stack = old.old_stack(ofed(name), {}, "apt", True)
    assert (stack is not None) == old_one
    if old_one:
        assert stack["installed"] == "OFED-internal-5.0-1.0.0.0 (a DOCA driver before DOCA 2.6)"


def test_refusals_name_what_is_installed_and_the_opt_in():
    stack = old.old_stack(ofed("mlnx-ofed-24.10-2.1.8.txt"), deb("dpkg-query-mlnx-ofed-23.10.txt"), "apt", True)
    refused = old.old_stack_refusal(stack, "3.2.1", False)
    assert refused.startswith("doca_ofed: MLNX_OFED_LINUX-24.10-2.1.8.0 is installed; DOCA 3.2.1 requires removing "
                              "it first")
    assert "set doca_ofed_replace_old_stack: true to remove it here (/usr/sbin/ofed_uninstall.sh --force; a " \
           "reboot is pending afterwards)" in refused and "\n" not in refused
    assert old.old_stack_refusal(stack, "3.2.1", True) is None
    assert old.old_stack_refusal(None, "3.2.1", False) is None
    lost = dict(stack, commands=[], problem="no uninstaller")
    assert "but no uninstaller. Fix: remove it by hand" in old.old_stack_refusal(lost, "3.2.1", True)


def test_removal_refused_while_the_rdma_stack_is_in_use():
    stack = old.old_stack(ofed("mlnx-ofed-24.10-2.1.8.txt"), {}, "apt", True)
    cx = {"0000:3b:00.0"}
    clean = lib.rdma_in_use({}, cx, [], None, load.restart_blockers({}))
    assert clean is None and old.old_stack_refusal(stack, "3.2.1", True, clean) is None
    modules = load.parse_proc_modules(data("doca", "proc_modules", "peermem-irdma-synthetic.txt"))
    blocked = old.old_stack_refusal(stack, "3.2.1", True,
                                    lib.rdma_in_use({}, cx, [], None, load.restart_blockers(modules)))
    assert blocked.startswith("doca_ofed: removing MLNX_OFED_LINUX-24.10-2.1.8.0 is refused while the RDMA stack is "
                              "in use: modules it does not manage sit on the RDMA core (nvidia_peermem is in use")
    storage = old.old_stack_refusal(stack, "3.2.1", True, lib.rdma_in_use({}, cx, ["module nvme_rdma is loaded"]))
    assert "storage runs over the RDMA stack (module nvme_rdma is loaded)" in storage
    mgmt = old.old_stack_refusal(stack, "3.2.1", True, lib.rdma_in_use({"0000:3b:00.0": "ens6f0np0: the default "
                                                                        "route via 10.0.0.1"}, cx, []))
    assert "the management path runs over a ConnectX port (0000:3b:00.0: ens6f0np0" in mgmt
    # an Intel NIC on the management path is no reason
    assert lib.rdma_in_use({"0000:5e:00.0": "eno1: the default route"}, cx, []) is None
    unknown = old.old_stack_refusal(stack, "3.2.1", True, lib.rdma_in_use({}, cx, [], "no route"))
    assert "the management path cannot be traced (no route)" in unknown


def test_the_reboot_after_the_removal():
    stack = old.old_stack(ofed("mlnx-ofed-24.10-2.1.8.txt"), {}, "apt", True)
    assert old.removed_reboot(stack) == ("DOCA-OFED: MLNX_OFED_LINUX-24.10-2.1.8.0 was removed; its kernel modules "
                                         "stay loaded until the next boot")
