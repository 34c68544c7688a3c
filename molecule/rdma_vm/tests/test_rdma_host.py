# -*- coding: utf-8 -*-
"""The VM tier's verdict (molecule verifier: pytest-testinfra), run after converge and again after a real
reboot of both VMs. Everything is judged from live state read on the VMs with the system's own tools
(sysfs, ``ip -j``, ``rdma``, ``lspci``, ``systemctl``) against the cluster model in molecule's inventory,
and from RDMA traffic between the VMs; ``rdma_facts`` is checked against those reads, and only its GID
index is used as an input (to ``ib_write_bw -x``), where a wrong index makes the traffic fail.

After the reboot (side_effect.yml leaves ``rebooted`` in molecule's ephemeral directory), the tests that judge
what a boot could change run again; the ones that judge a run of the roles or a playbook on the nodes as they
stand (check mode, bad input, the fleet link test) ran once, before it, and say so when skipped."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import subprocess
import time

import pytest
import testinfra
import testinfra.utils.ansible_runner
import yaml

INVENTORY = os.environ["MOLECULE_INVENTORY_FILE"]
testinfra_hosts = testinfra.utils.ansible_runner.AnsibleRunner(INVENTORY).get_hosts("gpu_nodes")
STATE = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/tmp"), "vf-macs.json")
REBOOTED = os.path.join(os.path.dirname(STATE), "rebooted")


def before_the_reboot_only():
    """Skip a test that judges a run on the nodes as they stand, not what a boot keeps: it ran before the reboot."""
    if os.path.exists(REBOOTED):
        pytest.skip("judged once, before the reboot (it tests a run on the nodes, not what the boot kept)")


def model(host):
    return host.ansible.get_variables()


def nics(host):
    return model(host)["fabric_rail_interfaces"]


def link(host, name):
    return json.loads(host.check_output("ip -j -d link show dev %s" % name))[0]


def plan_file(cluster):
    """The plan the converge wrote: rail_plan_output_dir defaults to <inventory dir>/.ainet-fabric/<cluster>/, and
    molecule's inventory directory is the one holding MOLECULE_INVENTORY_FILE."""
    path = os.path.join(os.path.dirname(INVENTORY), ".ainet-fabric", cluster, "plan.json")
    assert os.path.isfile(path), "the converge wrote no plan at %s (rail_plan_output_dir's default)" % path
    return path


def planned(host):
    variables = model(host)
    with open(plan_file(variables["fabric_cluster"]["name"])) as handle:
        return json.load(handle)["nodes"][variables["inventory_hostname"]]["rails"]


def test_vfs_exist_with_their_settings(host):
    sriov = model(host)["fabric_cluster"]["sriov"]
    macs = {}
    for pf in nics(host):
        assert host.file("/sys/class/net/%s/device/sriov_numvfs" % pf).content_string.strip() == str(sriov["vfs"])
        vfinfo = link(host, pf)["vfinfo_list"]
        assert [vf["vf"] for vf in vfinfo] == list(range(sriov["vfs"]))
        for vf in vfinfo:
            assert vf["trust"] is sriov["trust"], (pf, vf)
            assert vf["spoofchk"] is sriov["spoof_check"], (pf, vf)
            first = int(vf["address"].split(":")[0], 16)
            assert first & 0x02 and not first & 0x01, "not a locally administered unicast MAC: %s" % vf["address"]
            macs["%s/%d" % (pf, vf["vf"])] = vf["address"]
        # the VF netdevs exist in the host namespace, bound to the VF driver
        for index in range(sriov["vfs"]):
            assert host.file("/sys/class/net/%s/device/virtfn%d/net" % (pf, index)).is_directory
    assert len(set(macs.values())) == len(macs), macs
    # The same MACs after the reboot as after converge (the first verify records them).
    recorded = json.load(open(STATE)) if os.path.exists(STATE) else {}
    mine = recorded.get(host.backend.get_hostname())
    if mine is None:
        recorded[host.backend.get_hostname()] = macs
        with open(STATE, "w") as handle:
            json.dump(recorded, handle)
    else:
        assert mine == macs


def booted_after(host, path):
    """Whether the node booted after ``path`` was last written (so what it sets must have come from it)."""
    booted = int(re.search(r"^btime (\d+)$", host.file("/proc/stat").content_string, re.M).group(1))
    return int(host.check_output("stat -c %%Y %s" % path)) < booted


# The initramfs images unpacked on the nodes in this verify: (node, image, its mtime and size) -> (host, directory).
# unmkinitramfs takes about a minute on a TCG VM, so each node's image is unpacked once per verify (again if it
# changed), and the directories are removed when the verify ends.
UNPACKED = {}


@pytest.fixture(scope="session", autouse=True)
def _remove_unpacked_initramfs():
    yield
    for node_host, unpacked in UNPACKED.values():
        node_host.run("rm -rf %s" % unpacked)


def in_initramfs(host, path):
    """The text of ``path`` inside the initramfs the running kernel boots from."""
    image = "/boot/initrd.img-%s" % host.check_output("uname -r")
    key = (host.backend.get_hostname(), image, host.check_output("stat -L -c %%Y.%%s %s" % image))
    if key not in UNPACKED:
        unpacked = host.check_output("mktemp -d")
        UNPACKED[key] = (host, unpacked)
        host.check_output("unmkinitramfs %s %s" % (image, unpacked))
    unpacked = UNPACKED[key][1]
    return host.check_output("cat %s/main%s 2>/dev/null || cat %s%s" % (unpacked, path, unpacked, path))


def test_rdma_netns_mode_is_exclusive_and_kept(host):
    conf = "/etc/modprobe.d/ainet-rdma-netns.conf"
    assert re.search(r"\bnetns exclusive\b", host.check_output("rdma system show"))
    assert host.file(conf).contains("^options ib_core netns_mode=0$")
    if booted_after(host, conf):  # ib_core was loaded with the option at this boot
        assert host.file("/sys/module/ib_core/parameters/netns_mode").content_string.strip() in ("N", "0")
    # the VM's initramfs carries ib_core: the same option must be in it, with the same text
    assert in_initramfs(host, conf).strip() == host.file(conf).content_string.strip()


def test_gpu_host_blacklist_and_memlock_hold_across_the_boot(host):
    conf = "/etc/modprobe.d/ainet-gpu-host.conf"
    assert host.file(conf).contains("^blacklist nouveau$") and host.file(conf).contains("^options nouveau modeset=0$")
    # kmod's own reading of every modprobe.d file, and the initramfs the next boot starts from
    assert re.search(r"^blacklist nouveau$", host.check_output("modprobe -c"), re.M)
    assert in_initramfs(host, conf).strip() == host.file(conf).content_string.strip()
    if booted_after(host, conf):  # vm1 had nouveau loaded before the role: the boot after it did not load it
        assert not host.file("/sys/module/nouveau").exists
    # services get unlimited locked memory (RDMA pins registered memory): what systemd starts now
    assert host.check_output("systemctl show --property=DefaultLimitMEMLOCK") == "DefaultLimitMEMLOCK=infinity"
    assert host.check_output("systemd-run --wait --pipe --quiet sh -c 'ulimit -l'") == "unlimited"
    assert host.file("/etc/security/limits.d/90-ainet-memlock.conf").contains("^\\* hard memlock unlimited$")


def role_default(role, name):
    """A role's default, read from its defaults file (the inventory here leaves it as it is)."""
    path = os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], "roles", role, "defaults", "main.yml")
    with open(path) as handle:
        return yaml.safe_load(handle)[name]


def test_gpu_host_kernel_arguments_reach_the_kernel_through_grub(host):
    wanted = role_default("gpu_host", "gpu_host_kernel_args")
    assert wanted, "gpu_host_kernel_args' default is empty: nothing for this check to see"
    # qemu starts no kernel of its own: SeaBIOS starts GRUB, which reads the VM's own /boot/grub/grub.cfg
    name = host.backend.get_hostname()
    qemu = os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], "build", "vm",
                        os.environ.get("AINET_LAB_PREFIX", "ainetvm"), "%s.cmdline" % name)
    with open(qemu) as handle:
        argv = handle.read()
    assert "-kernel" not in argv and "-append" not in argv and ".boot.iso" in argv, argv
    # the role's GRUB drop-in, and grub-mkconfig's output from it (update-grub in the guest, not the image's file)
    assert host.file("/etc/default/grub.d/60-ainet-gpu-host.cfg").contains(" ".join(wanted))
    cfg = host.file("/boot/grub/grub.cfg").content_string
    assert "### BEGIN /etc/grub.d/10_linux ###" in cfg, "update-grub never rewrote the image's grub.cfg"
    entries = [line.split() for line in cfg.splitlines() if line.strip().startswith("linux\t")
               or line.strip().startswith("linux ")]
    assert entries and all(set(wanted) <= set(words) for words in entries), entries
    # the kernel running now was booted by GRUB from that file, after it was written, with the arguments
    cmdline = host.file("/proc/cmdline").content_string.split()
    assert any(word.startswith("BOOT_IMAGE=/boot/vmlinuz-") for word in cmdline), cmdline
    assert set(wanted) <= set(cmdline), cmdline
    assert booted_after(host, "/boot/grub/grub.cfg")
    # and the role, reading /proc/cmdline, has nothing pending for them
    args = dict((key, role_default("gpu_host", "gpu_host_" + key))
                for key in ("kernel_args", "blacklist", "memlock", "boot_loader", "initramfs", "foreign_files"))
    result = host.ansible("ainet.fabric.gpu_host", json.dumps(args), check=True)
    assert result["cmdline_missing"] == [] and result["reboot_pending"] == [] and not result["changed"], result


def test_doca_ofed_from_the_mirror_is_installed_pinned_and_verified(host):
    """The install from a site's mirror (doca_ofed_mirror) of the suite's stand-in repository, served to the VMs from
    the lab's namespace (prepare.yml, tests/vm/vms.sh serve): NVIDIA's layout and package names, not NVIDIA's
    packages (no driver is built or loaded: tests/lab/doca_standin.py); its key from the controller."""
    variables = model(host)
    mirror, key = variables["doca_ofed_mirror"], variables["doca_ofed_key_file"]
    served = os.path.join(os.path.dirname(key), "3.2.1", "debian12", "x86_64")  # what vms.sh serve serves
    with open(os.path.join(served, "Packages")) as handle:
        shipped = sorted(re.findall(r"^Package: (\S+)$", handle.read(), re.M))
    assert host.check_output("ofed_info -s") == "OFED-internal-25.10-1.7.1:"
    for name in shipped:
        assert host.package(name).is_installed, name
    # the pin holds exactly the repository's packages, by the mirror's origin, and apt gives the installed version
    # priority 1001 (apt 2.6 prints a version's pin on its version line), from the mirror
    origin = re.match(r"^https?://([^:/]+)", mirror).group(1)
    pin = host.file("/etc/apt/preferences.d/ainet-doca-ofed.pref").content_string
    assert "Package: %s\nPin: origin \"%s\"\nPin-Priority: 1001\n" % (" ".join(shipped), origin) in pin, pin
    policy = host.check_output("apt-cache policy doca-ofed")
    assert re.search(r"^\s*\*\*\* 3\.2\.1-1 1001$", policy, re.M), policy
    assert re.search(r"^\s+\d+ %s/3\.2\.1/debian12/x86_64 \./ Packages$" % re.escape(mirror), policy, re.M), policy
    # the key was handed over in binary form: armored on the node, the same key (gpg on the controller judges)
    armored = host.file("/etc/apt/keyrings/ainet-doca-ofed.asc").content_string
    assert armored.startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----\n")
    with open(key, "rb") as handle:
        assert subprocess.run(["gpg", "--dearmor"], input=armored.encode(), capture_output=True,
                              check=True).stdout == handle.read()
    # and the role's own verification, read on the node now: the pinned release, nothing pending - with no mlx5_core
    # loaded (no ConnectX here): the control of test_doca_ofed_tells_the_kernels_own_mlx5_core_from_the_installed_one
    assert not host.file("/sys/module/mlx5_core").exists
    result = host.ansible("ainet.fabric.doca_ofed", json.dumps({"state": "verify", "version": "3.2.1"}), check=True)
    assert not result.get("failed") and result["ofed"]["version"] == "25.10-1.7.1", result
    assert result["reboot_pending"] == [], result


DEBIAN_REPO = "/var/lib/ainet-vm/debian"   # the image's file repository of Debian packages (tests/vm/image.sh)
STANDIN_DRIVER = "25.10-1.7.1"             # prepare.yml's stand-in driver (ofed_info -s, the stub's modinfo version)


def test_doca_ofed_installed_the_headers_and_dkms_installed_the_driver_for_the_running_kernel(host):
    """doca_ofed_headers: the running kernel's headers and the meta-package of its flavour, from Debian's packages
    (the image's file repository: the VMs reach no mirror), installed by the role - the image had neither - and
    with them the stand-in's DKMS package installed its module for the running kernel through the node's dkms."""
    release = host.check_output("uname -r")
    flavour = re.match(r"^\d+\.\d+\.\d+-\d+-(.+)$", release).group(1)      # 6.1.0-50-amd64 -> amd64
    assert host.package("linux-image-%s" % flavour).is_installed   # the image's kernel comes by its meta-package
    image = host.file("/etc/ainet/image-packages").content_string
    for name in ("linux-headers-%s" % release, "linux-headers-%s" % flavour):
        assert host.package(name).is_installed, name
        assert not re.search(r"^%s " % re.escape(name), image, re.M), "%s was in the image already" % name
        policy = host.check_output("apt-cache policy %s" % name)
        assert re.search(r"^\s+\d+ file:%s \./ Packages$" % DEBIAN_REPO, policy, re.M), policy
    assert host.file("/lib/modules/%s/build" % release).is_directory
    status = host.check_output("dkms status -m mlnx-ofed-kernel -k %s" % release)
    assert re.match(r"^mlnx-ofed-kernel/%s, %s, x86_64: installed" % (re.escape(STANDIN_DRIVER.replace("-", ".")),
                                                                      re.escape(release)), status), status
    # modinfo resolves mlx5_core to the DKMS copy (updates/dkms outranks the kernel's own), with DOCA's version
    assert host.check_output("modinfo -n mlx5_core") == "/lib/modules/%s/updates/dkms/mlx5_core.ko" % release
    assert host.check_output("modinfo -F version mlx5_core") == STANDIN_DRIVER


def test_other_tools_objects_are_left_alone(host):
    if host.backend.get_hostname() == "vm1":
        conf = host.file("/etc/modprobe.d/other-tool.conf")
        assert conf.exists and conf.contains("^options ib_core recv_queue_size=256$")


def test_acs_is_off_on_the_listed_bridges(host):
    for bridge in model(host)["fabric_cluster"]["pcie_acs"]["bridges"]:
        text = host.check_output("lspci -vvv -s %s" % bridge)
        ctl = re.search(r"ACSCtl:\s*(.*)", text)
        assert ctl, "no ACS capability read on %s" % bridge
        assert "+" not in ctl.group(1), "%s: %s" % (bridge, ctl.group(0))
    # with an IOMMU the kernel turned it on at boot: only the unit can have turned it off again
    assert "intel_iommu=on" in host.file("/proc/cmdline").content_string


def test_units_are_enabled_and_ran_at_boot(host):
    for unit in ("ainet-sriov.service", "ainet-pcie-acs.service"):
        service = host.service(unit)
        assert service.is_enabled, unit
        if booted_after(host, "/etc/systemd/system/" + unit):  # booted with the unit in place: it ran, successfully
            state = host.check_output("systemctl show -p ActiveState -p Result %s" % unit)
            assert "ActiveState=active" in state and "Result=success" in state, (unit, state)


def test_rail_addresses_are_the_plan(host):
    for entry in planned(host):
        addresses = [a["local"] + "/" + str(a["prefixlen"]) for a in
                     json.loads(host.check_output("ip -j addr show dev %s" % entry["interface"]))[0]["addr_info"]]
        assert entry["address"] in addresses, (entry, addresses)


def rdma_facts(host, rails):
    args = {"interfaces": [r["interface"] for r in rails], "addresses": dict((r["interface"], r["ip"]) for r in rails)}
    return host.ansible("ainet.fabric.rdma_facts", json.dumps(args), check=False)


def test_rdma_facts_agrees_with_the_live_reads(host):
    rails = [r for r in planned(host) if ":" not in r["ip"]]
    facts = rdma_facts(host, rails)
    assert facts["facts"]["system"]["netns"] == "exclusive"
    sriov = model(host)["fabric_cluster"]["sriov"]
    for pf in nics(host):
        assert facts["netdevs"][pf]["sriov"]["num_vfs"] == sriov["vfs"]
        assert [vf["netdev"] for vf in facts["netdevs"][pf]["sriov"]["vfs"]] == \
            sorted(os.path.basename(p) for p in host.check_output(
                "ls -d /sys/class/net/%s/device/virtfn*/net/*" % pf).split())
    for bridge in model(host)["fabric_cluster"]["pcie_acs"]["bridges"]:
        acs = facts["facts"]["pci"][bridge]["acs"]["ctl"]
        assert not any(acs.values()), (bridge, acs)
    # the rail-1 NIC carries soft-RoCE: the reported GID index holds the rail address as a RoCE v2 GID
    rail = facts["rails"][0]
    assert rail["rdma_device"] == "rxe0" and rail["gid_index"] is not None, rail
    base = "/sys/class/infiniband/rxe0/ports/1"
    assert host.file("%s/gid_attrs/types/%d" % (base, rail["gid_index"])).content_string.strip() == "RoCE v2"
    gid = host.file("%s/gids/%d" % (base, rail["gid_index"])).content_string.strip()
    assert ipaddress.IPv6Address(gid).ipv4_mapped == ipaddress.IPv4Address(rails[0]["ip"])


def test_rdma_traffic_between_the_vms_with_the_reported_gid_index(host):
    if host.backend.get_hostname() != "vm1":
        return
    server = testinfra.get_host("ansible://vm2", ansible_inventory=host.backend.ansible_inventory)
    mine, theirs = planned(host)[0], planned(server)[0]
    client_gid = rdma_facts(host, [mine])["rails"][0]["gid_index"]
    server_gid = rdma_facts(server, [theirs])["rails"][0]["gid_index"]
    host.run_expect([0, 1], "ping -c 1 -W 2 %s" % theirs["ip"])  # ARP warm-up
    server.run("pkill -x ib_write_bw; pkill -x rping")  # by name: -f would match this very shell
    server.check_output("setsid nohup timeout 120 ib_write_bw -d rxe0 -x %d -n 200 > /tmp/ib_write_bw.server 2>&1 < /dev/null &" % server_gid)
    deadline = time.monotonic() + 60
    while True:
        time.sleep(2)
        result = host.run("timeout 120 ib_write_bw -d rxe0 -x %d -n 200 %s" % (client_gid, theirs["ip"]))
        if result.rc == 0 or time.monotonic() > deadline:
            break
    assert result.rc == 0, result.stdout + result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if re.match(r"^\s*\d+\s+\d+\s+[\d.]+\s+[\d.]+", line)]
    assert rows and float(rows[-1][3]) > 0, result.stdout   # BW average, MB/sec
    with open(os.path.join(os.path.dirname(STATE), "traffic.log"), "a") as handle:  # for the run's report
        handle.write("ib_write_bw -x %d (client) / -x %d (server): %s MB/s average, %s MB/s peak\n"
                     % (client_gid, server_gid, rows[-1][3], rows[-1][2]))
    # rdma_cm (rping) over the same rail
    server.check_output("setsid nohup timeout 60 rping -s -a %s -C 3 > /tmp/rping.server 2>&1 < /dev/null &" % theirs["ip"])
    time.sleep(2)
    ping = host.run("timeout 60 rping -c -a %s -C 3 -v" % theirs["ip"])
    assert ping.rc == 0 and ping.stdout.count("ping data:") == 3, ping.stdout + ping.stderr


def test_fleet_link_test_runs_icmp_and_rdma_with_the_facts_gid_index(host):
    """playbooks/links.yml (the installed collection's ainet.fabric.links) with RDMA: ICMP on both rails, and
    ib_write_bw and rping (rdma_cm) on rail 1, the rail with an RDMA device (soft-RoCE rxe0), ib_write_bw with the GID
    index rdma_facts finds;
    rail 2 has no RDMA device and gets ICMP only. Judged from the report the play writes: every test passed and
    the bandwidth ib_write_bw printed is there."""
    before_the_reboot_only()
    if host.backend.get_hostname() != "vm1":
        return
    report = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/tmp"), "links.md")
    nodes = [host, host.get_host("ansible://vm2", ansible_inventory=INVENTORY)]
    # another user's rdma_cm server on each node, on the rail address the link test serves on: the role stops
    # the servers it started (by their whole command line), never this one
    foreign = "rping -s -a %s -p 7999 -P"
    for node in nodes:
        line = foreign % planned(node)[0]["ip"]
        node.check_output("setsid nohup timeout 900 %s > /dev/null 2>&1 < /dev/null &" % line)
    run = subprocess.run(["ansible-playbook", "-i", INVENTORY, "ainet.fabric.links", "-e", "link_test_rdma=true",
                          "-e", "link_test_report=%s" % report], capture_output=True, text=True, check=False,
                         timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    for node in nodes:
        ours = node.run("pgrep -af '^timeout [0-9]+ (ib_write_bw|rping) '")
        theirs = node.run("pgrep -f '^rping -s -a %s -p 7999 -P$'" % planned(node)[0]["ip"].replace(".", "[.]"))
        node.run("pkill -f '^timeout 900 rping -s -a .* -p 7999 -P$'")
        assert [line for line in ours.stdout.splitlines() if not line.endswith("-p 7999 -P")] == [], ours.stdout
        assert theirs.rc == 0, "the link test stopped another user's rping"
    with open(report) as handle:
        text = handle.read()
    assert "2 nodes, 1 round(s)" in text and "4 tests, 0 failed." in text and "Every tested link passed." in text, text
    # one row per client rail: | client | rail | test | servers | lowest Gb/s (server) | highest Gb/s | highest usec |
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in text.splitlines()
            if line.startswith("| vm2 | default 1 | rdma_bw |")]
    assert len(rows) == 1 and rows[0][3] == "1" and rows[0][4].endswith(" (vm1)"), text
    lowest = float(rows[0][4].split()[0])
    assert lowest > 0 and float(rows[0][5]) == lowest, text
    with open(os.path.join(os.path.dirname(STATE), "traffic.log"), "a") as handle:  # for the run's report
        handle.write("links.yml: ib_write_bw vm2 <- vm1 rail 1: %s Gb/s\n" % lowest)


# What the roles set on a node, read with the system's tools: VFs, links, ACS, the netns mode, the units and files
# of the roles, the boot loader's configuration, the DOCA repository, pin, key and packages.
NODE_STATE = ("cat /sys/class/net/*/device/sriov_numvfs; ip -j -d link show; ip -br addr show; ip -j rule show; "
              "lspci -vvv; rdma system show; cat /etc/systemd/system/ainet-*.service /var/lib/ainet-fabric/sriov.json "
              "/etc/modprobe.d/*.conf /etc/default/grub.d/*.cfg /boot/grub/grub.cfg /etc/apt/sources.list.d/* "
              "/etc/apt/preferences.d/* /etc/apt/keyrings/* /etc/security/limits.d/*; "
              "ls -l --time-style=+%s /etc/systemd/system /etc/modprobe.d /boot /var/lib/ainet-fabric; "
              "dpkg-query -W -f '${Package} ${Version} ${Status}\\n'")


def test_check_mode_on_the_converged_nodes_changes_nothing_and_reports_nothing(host):
    """The converge itself (the plan, then site.yml with reboots allowed) in --check on the converged VMs: no task
    reports a change, and nothing on either node differs after it."""
    before_the_reboot_only()
    if host.backend.get_hostname() != "vm1":
        return
    nodes = [host, host.get_host("ansible://vm2", ansible_inventory=INVENTORY)]
    before = [node.check_output(NODE_STATE) for node in nodes]
    converge = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "converge.yml")
    run = subprocess.run(["ansible-playbook", "-i", INVENTORY, "--check", "--diff", converge], capture_output=True,
                         text=True, check=False, timeout=900)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    recap = dict((line.split()[0], line) for line in run.stdout.splitlines() if re.match(r"^vm[12]\s+:", line))
    assert sorted(recap) == ["vm1", "vm2"] and all("changed=0" in line for line in recap.values()), (
        recap, run.stdout[-4000:])
    assert [node.check_output(NODE_STATE) for node in nodes] == before


def refused(host, module, args):
    """Run ``module`` for real (not check mode) with the ``ansible`` CLI and return its failure message; the test
    fails if the module succeeds (the exit status says so: testinfra's result files lose the ``failed`` key)."""
    run = subprocess.run(["ansible", "-i", INVENTORY, host.backend.get_hostname(), "-m", module, "-a", json.dumps(args),
                          "-o"], capture_output=True, text=True, check=False, timeout=300)
    assert run.returncode != 0, "%s did not refuse %s: %s" % (module, args, run.stdout)
    return json.loads(run.stdout.split("=> ", 1)[1])["msg"]


def test_bad_input_is_refused_on_the_real_node_before_any_change(host):
    before_the_reboot_only()
    if host.backend.get_hostname() != "vm1":
        return
    variables = model(host)
    cluster, interfaces = variables["fabric_cluster"], variables["fabric_rail_interfaces"]
    before = host.check_output(NODE_STATE)
    # a VF count above the PF's total (igb: sriov_totalvfs 7)
    msg = refused(host, "ainet.fabric.sriov", {"cluster": dict(cluster, sriov={"vfs": 8}), "interfaces": interfaces})
    assert "sriov.vfs 8 is above the 7 VFs rail NIC enp1s0" in msg and "\n" not in msg
    # a rail NIC without SR-IOV (the virtio management NIC)
    msg = refused(host, "ainet.fabric.sriov", {"cluster": cluster, "interfaces": ["enp1s0", "enp0s2"]})
    assert "enp0s2" in msg and "has no SR-IOV capability" in msg
    # SR-IOV with the shared netns mode: a contradiction in the model
    msg = refused(host, "ainet.fabric.rdma_netns", {"cluster": dict(cluster, rdma_netns="shared")})
    assert "fabric_cluster.rdma_netns" in msg and "exclusive" in msg
    # an unknown bridge, and a PCI function that is not a bridge (q35's ISA bridge)
    msg = refused(host, "ainet.fabric.pcie_acs", {"cluster": cluster, "interfaces": interfaces,
                                                  "bridges": ["0000:00:03.0", "0000:00:09.0"]})
    assert "0000:00:09.0" in msg and "not a PCI device" in msg
    msg = refused(host, "ainet.fabric.pcie_acs", {"cluster": cluster, "interfaces": interfaces,
                                                  "bridges": ["0000:00:1f.0"]})
    assert "0000:00:1f.0" in msg and "not a PCI bridge" in msg
    # nothing changed: VF counts and settings, ACS, the netns mode, the units, the record, the options
    assert host.check_output(NODE_STATE) == before


def doca_ofed_verify(**extra):
    """The role's verify step's arguments (roles/doca_ofed/tasks/main.yml) for the module run by hand."""
    return dict({"state": "verify", "version": "3.2.1"}, **extra)


def test_doca_ofed_tells_the_kernels_own_mlx5_core_from_the_installed_one_and_refuses_a_restart_under_rdma_rxe(host):
    """Debian's own mlx5_core loaded (its module file, as before the DOCA install), DOCA-OFED's installed (the DKMS
    copy modinfo resolves): judged here from sysfs and modinfo, then the role must say the same - a pending reboot -
    and, asked to restart the driver, refuse while soft-RoCE's rdma_rxe (lab-rxe.service) is loaded, naming it."""
    before_the_reboot_only()
    if host.backend.get_hostname() != "vm1":
        return
    release = host.check_output("uname -r")
    inbox = "/lib/modules/%s/kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko" % release
    # Debian's in-tree module carries neither version nor srcversion; the installed one is the DKMS copy
    assert host.run("modinfo -F version %s" % inbox).stdout.strip() == ""
    assert host.check_output("modinfo -n mlx5_core").endswith("/updates/dkms/mlx5_core.ko")
    assert not host.file("/sys/module/mlx5_core").exists
    loaded_before = set(load.split()[0] for load in host.file("/proc/modules").content_string.splitlines())
    depends = [d for d in host.check_output("modinfo -F depends %s" % inbox).split(",") if d]
    try:
        for name in depends:
            host.check_output("modprobe %s" % name)
        host.check_output("insmod %s" % inbox)
        # the live state, read here: a mlx5_core is loaded and it has no version file, which the installed module
        # (modinfo version 25.10-1.7.1) would have: the loaded one is not the installed one
        assert host.file("/sys/module/mlx5_core").is_directory
        assert not host.file("/sys/module/mlx5_core/version").exists
        result = host.ansible("ainet.fabric.doca_ofed", json.dumps(doca_ofed_verify()), check=True)
        assert not result.get("failed"), result
        assert result["loaded"]["present"] and result["loaded"]["version"] is None, result["loaded"]
        assert result["loaded"]["installed"]["filename"] == host.check_output("modinfo -n mlx5_core")
        assert result["reboot_pending"] == ["DOCA-OFED: the loaded mlx5_core is the kernel's own, not DOCA-OFED's: "
                                            "the installed driver loads at the next boot (or driver restart)"], result
        # a restart asked for: soft-RoCE's module holds the RDMA core (it is loaded: /proc/modules says so)
        modules = host.file("/proc/modules").content_string
        assert re.search(r"^rdma_rxe ", modules, re.M), modules
        msg = refused(host, "ainet.fabric.doca_ofed", doca_ofed_verify(
            restart=True, management_addresses=[model(host)["ansible_host"]]))
        # every reason in the one line: Debian's rdma-core also loads the storage modules (rpcrdma, ib_iser) where
        # they are in /proc/modules, which come first; the module it does not manage is named either way
        assert "unload the RDMA core under modules it does not manage" in msg, msg
        assert "third-party RDMA modules are loaded (rdma_rxe)" in msg and "not restarted" in msg, msg
        for storage in ("rpcrdma", "ib_iser"):
            assert (("module %s is loaded" % storage) in msg) == bool(re.search(r"^%s " % storage, modules, re.M)), msg
        # nothing was unloaded or restarted: the same modules, the kernel's mlx5_core still there, rxe0 still up
        assert host.file("/sys/module/mlx5_core").is_directory and not host.file("/sys/module/mlx5_core/version").exists
        assert host.run("rdma link show rxe0/1").rc == 0
    finally:
        host.run("rmmod mlx5_core")
        for name in reversed(depends):
            if name.replace("-", "_") not in loaded_before:
                host.run("modprobe -r %s" % name)
    assert not host.file("/sys/module/mlx5_core").exists


def newest_vmlinuz(host):
    """The newest /boot/vmlinuz-* in version order (sort -V): the kernel GRUB_DEFAULT=0 boots after update-grub."""
    return host.check_output("ls /boot | grep '^vmlinuz-' | sort -V | tail -n1")[len("vmlinuz-"):]


def test_doca_ofed_builds_the_driver_for_the_kernel_the_next_boot_starts(host):
    """A second kernel, newer in version order (Debian's -cloud-amd64 build of the same ABI, from the image's Debian
    repository), unpacked (dpkg --unpack: no maintainer scripts, so its kernel hooks - initramfs, GRUB, dkms - do not
    run, as when its dkms hook could not build): without its headers the role fails with the fix; with them it runs
    'dkms autoinstall -k <that kernel>' and dkms then lists the driver installed for it. Removed again before the
    reboot (the VMs keep booting their own kernel)."""
    before_the_reboot_only()
    if host.backend.get_hostname() != "vm1":
        return
    release = host.check_output("uname -r")
    second = re.sub(r"-amd64$", "-cloud-amd64", release)
    debs = dict((pkg, host.check_output("ls %s/%s_*.deb" % (DEBIAN_REPO, pkg)))
                for pkg in ("linux-image-" + second, "linux-headers-" + second))
    assert newest_vmlinuz(host) == release and not host.file("/boot/vmlinuz-" + second).exists
    dkms_entry = "mlnx-ofed-kernel/%s, %s, x86_64: installed" % (STANDIN_DRIVER.replace("-", "."), second)
    try:
        host.check_output("dpkg --unpack %s" % debs["linux-image-" + second])
        assert newest_vmlinuz(host) == second
        assert not host.file("/lib/modules/%s/build" % second).exists
        # no headers for it: refused with the fix, nothing built
        msg = refused(host, "ainet.fabric.doca_ofed", doca_ofed_verify())
        assert ("the next boot starts kernel %s, which has no mlnx-ofed-kernel modules built and no headers" % second
                in msg and "install its headers (linux-headers-%s" % second in msg
                and "run 'dkms autoinstall -k %s' before rebooting" % second in msg), msg
        assert not re.search(r", %s, x86_64: installed" % re.escape(second),
                             host.check_output("dkms status -m mlnx-ofed-kernel -k %s" % second))
        # its headers (their common part is installed with the running kernel's): the role builds for it
        host.check_output("dpkg --unpack %s" % debs["linux-headers-" + second])
        assert host.file("/lib/modules/%s/build" % second).is_directory
        result = host.ansible("ainet.fabric.doca_ofed", json.dumps(doca_ofed_verify()), check=False)
        assert not result.get("failed") and result["changed"], result
        assert result["commands"] == ["dkms autoinstall -k %s" % second], result
        # dkms says so itself, and the module is where modinfo looks for that kernel
        assert host.check_output("dkms status -m mlnx-ofed-kernel -k %s" % second).startswith(dkms_entry)
        assert host.check_output("modinfo -k %s -n mlx5_core" % second) == \
            "/lib/modules/%s/updates/dkms/mlx5_core.ko" % second
        # built: nothing left to do for the next boot
        again = host.ansible("ainet.fabric.doca_ofed", json.dumps(doca_ofed_verify()), check=True)
        assert not again["changed"] and again["commands"] == [], again
    finally:
        host.run("dkms remove -m mlnx-ofed-kernel -v %s -k %s" % (STANDIN_DRIVER.replace("-", "."), second))
        host.run("dpkg --purge linux-headers-%s linux-image-%s" % (second, second))
        host.run("rm -rf /lib/modules/%s /usr/src/linux-headers-%s /boot/*-%s" % (second, second, second))
    assert newest_vmlinuz(host) == release
    assert second not in host.file("/boot/grub/grub.cfg").content_string
