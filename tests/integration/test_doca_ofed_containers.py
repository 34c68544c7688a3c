# -*- coding: utf-8 -*-
"""doca_ofed's install path on a real Debian 12 with apt (a podman system container of the lab, needs root).

NVIDIA's repository is out of reach, so the suite builds a stand-in mirror of the same layout and package names
(tests/lab/doca_standin.py: ``<mirror>/<version>/debian12/x86_64/``, signed ``InRelease``, ``doca-ofed`` ->
``mlnx-ofed-kernel-utils`` with an ``ofed_info`` that prints what the real one prints) and serves it over HTTP
from the lab's management namespace (10.250.0.1: the node's only network; nothing leaves the lab).

The verdict is the node's own apt and dpkg: check mode on a fresh node changes nothing there; the first run
writes the key, the deb822 source and the pin and installs the profile; ``ofed_info -s`` answers with the
driver the pinned DOCA version ships; the second run changes nothing; a version the mirror lacks is refused
before any change; a new pinned version upgrades, and its DKMS driver package, which the node's real dkms
registers without building (no headers for the running kernel), is found as the classic breakage and named with
its fix; the air-gapped path (the repository and its key copied from the controller) installs too.

The threat model this file proves part of: docs/security.md (secrets: the DOCA mirror's login).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_rail_network_lab as t  # noqa: E402  pylint: disable=wrong-import-position
from test_rail_network_lab import lab  # noqa: E402  pylint: disable=wrong-import-position

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lab"))
import doca_standin  # noqa: E402  pylint: disable=wrong-import-position,import-error

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the container lab needs root"),
    pytest.mark.skipif(not all(shutil.which(c) for c in ("podman", "runc", "mmdebstrap", "dpkg-deb", "gpg")),
                       reason="the container lab needs podman, runc, mmdebstrap, dpkg-deb and gpg "
                              "(tests/molecule.sh installs them)"),
]
ROOT = os.path.dirname(os.path.dirname(HERE))
NODES = {"gpu01": 1}
PORT = 18080
MIRROR = "http://%s.1:%d" % (lab.MGMT_NET, PORT)
PLAY = """- name: DOCA-OFED on the GPU nodes
  hosts: gpu_nodes
  gather_facts: false
  become: true
  roles:
    - role: ainet.fabric.doca_ofed
"""


def run_play(lab_dir, inventory, *extra):
    play = os.path.join(lab_dir, "doca.yml")
    with open(play, "w") as handle:
        handle.write(PLAY)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=t.BIN + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(t.BIN, "ansible-playbook"), "-i", inventory, play]
    return subprocess.run(cmd + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
                          check=False)


def on_node(lab_dir, *argv, check=True):
    return lab.podman(lab_dir, "exec", lab.node_ns("gpu01"), *argv, check=check)


def recap_changed(result):
    line = [x for x in result.stdout.splitlines() if x.startswith("gpu01")][-1]
    return int(line.split("changed=")[1].split()[0])


def node_state(lab_dir):
    """What apt and dpkg on the node say: installed packages of ours, our files, the apt lists."""
    return {
        "packages": on_node(lab_dir, "dpkg-query", "-W", "-f", "${Package} ${Version} ${Status}\\n", check=False),
        "files": on_node(lab_dir, "sh", "-c", "ls -l /etc/apt/sources.list.d /etc/apt/preferences.d "
                         "/etc/apt/keyrings 2>&1; cat /etc/apt/sources.list.d/*.sources 2>/dev/null; true"),
    }


@pytest.fixture(name="mirror")
def fixture_mirror(tmp_path):
    """The stand-in mirror, served from the lab's management namespace while the test runs."""
    root = str(tmp_path / "mirror")
    # The lab cannot reach Debian's archive: 3.2.1's repository also carries a stand-in of the running kernel's
    # headers (the containers share this machine's kernel), which the role installs before the packages.
    doca_standin.build(root, version="3.2.1", driver="25.10-1.7.1", headers=os.uname().release)
    doca_standin.build(root, version="3.2.2", driver="25.10-2.4.1", dkms=True)
    yield root


def serve(root):
    server = subprocess.Popen(["ip", "netns", "exec", lab.mgmt_ns(), sys.executable, "-m", "http.server",
                               "--bind", "%s.1" % lab.MGMT_NET, "--directory", root, str(PORT)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        probe = subprocess.run(["ip", "netns", "exec", lab.mgmt_ns(), sys.executable, "-c",
                                "import urllib.request; urllib.request.urlopen('%s/GPG-KEY-Mellanox.pub')" % MIRROR],
                               capture_output=True, check=False)
        if probe.returncode == 0:
            return server
        time.sleep(0.3)
    server.kill()
    raise RuntimeError("the stand-in mirror did not answer at %s" % MIRROR)


def test_doca_ofed_installs_pins_and_verifies_from_a_mirror(tmp_path, mirror):
    lab_dir = str(tmp_path / "lab")
    server = None
    try:
        inventory, _plan = lab.build(t.cluster_for("exclusive"), NODES, t.INTERFACES, lab_dir, kind="containers")
        server = serve(mirror)
        pinned = ["-e", "doca_ofed_version=3.2.1", "-e", "doca_ofed_mirror=" + MIRROR,
                  "-e", "doca_ofed_key_url=%s/GPG-KEY-Mellanox.pub" % MIRROR,
                  # the stand-in's throwaway key, not NVIDIA's DOCA Host key the role pins by default: no pin
                  "-e", "doca_ofed_key_fingerprint="]
        fresh = node_state(lab_dir)
        assert "doca-ofed" not in fresh["packages"]

        release = on_node(lab_dir, "uname", "-r").strip()
        checked = run_play(lab_dir, inventory, "--check", *pinned)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert node_state(lab_dir) == fresh  # check mode wrote no file and installed nothing
        # ... and said what it would install, the kernel headers with it
        assert "would install doca-ofed (DOCA 3.2.1)" in checked.stdout, checked.stdout
        assert "and the kernel headers linux-headers-%s" % release in checked.stdout, checked.stdout

        first = run_play(lab_dir, inventory, *pinned)
        assert first.returncode == 0, first.stdout + first.stderr
        packages = on_node(lab_dir, "dpkg-query", "-W", "-f", "${Package} ${Version}\\n")
        assert "doca-ofed 3.2.1-1" in packages and "mlnx-ofed-kernel-utils 25.10.1.7.1" in packages, packages
        assert "linux-headers-%s 1.0" % release in packages, packages
        assert on_node(lab_dir, "ofed_info", "-s").strip() == "OFED-internal-25.10-1.7.1:"
        source = on_node(lab_dir, "cat", "/etc/apt/sources.list.d/ainet-doca-ofed.sources")
        assert "URIs: %s/3.2.1/debian12/x86_64/" % MIRROR in source
        assert "Signed-By: /etc/apt/keyrings/ainet-doca-ofed.asc" in source
        # The pin holds exactly the repository's packages (priority 1001, seen by apt itself); a package of the
        # distribution is left at its own priority.
        pin = on_node(lab_dir, "cat", "/etc/apt/preferences.d/ainet-doca-ofed.pref")
        assert ("Package: doca-ofed linux-headers-%s mlnx-ofed-kernel-utils mlnx-tools\nPin: origin \"%s.1\"\n"
                "Pin-Priority: 1001\n" % (release, lab.MGMT_NET)) in pin, pin
        policy = on_node(lab_dir, "apt-cache", "policy", "doca-ofed", "iproute2")
        doca, iproute = policy.split("iproute2:")
        assert "3.2.1-1 1001" in doca and "%s/3.2.1/debian12/x86_64 ./ Packages" % MIRROR in doca, policy
        assert "1001" not in iproute, policy

        second = run_play(lab_dir, inventory, *pinned)
        assert second.returncode == 0 and recap_changed(second) == 0, second.stdout

        # A version the mirror lacks: refused with one line before anything on the node changes.
        before = node_state(lab_dir)
        missing = run_play(lab_dir, inventory, "-e", "doca_ofed_version=3.3.0", *pinned[2:])
        text = missing.stdout + missing.stderr
        assert missing.returncode != 0
        assert "doca_ofed_version: 3.3.0 is not in the repository for this host" in text, text
        assert "Traceback" not in text
        assert node_state(lab_dir) == before

        # A new pinned version upgrades every package of the repository the node has, mlnx-tools too (doca-ofed
        # names it without a version). The kernel's headers are gone meanwhile (3.2.2 does not carry them: a node
        # after a kernel update), so the node's real dkms registers the new driver and skips its build while the
        # old one's modules stay: found as the classic breakage and named with its fix.
        on_node(lab_dir, "dpkg", "-r", "linux-headers-%s" % release)
        upgraded = run_play(lab_dir, inventory, "-e", "doca_ofed_version=3.2.2", "-e", "doca_ofed_headers=false",
                            *pinned[2:])
        text = upgraded.stdout + upgraded.stderr
        packages = on_node(lab_dir, "dpkg-query", "-W", "-f", "${Package} ${Version}\\n")
        assert "doca-ofed 3.2.2-1" in packages and "mlnx-ofed-kernel-dkms 25.10.2.4.1" in packages, packages
        assert "mlnx-tools 25.10.2.4.1" in packages, packages
        assert on_node(lab_dir, "ofed_info", "-s").strip() == "OFED-internal-25.10-2.4.1:"
        dkms = on_node(lab_dir, "dkms", "status")
        assert "mlnx-ofed-kernel/25.10.2.4.1" in dkms and "added" in dkms, dkms
        assert upgraded.returncode != 0
        assert ("the running kernel %s has no mlnx-ofed-kernel modules built (dkms has them for no kernel); fix: "
                "install the kernel headers (linux-headers-%s" % (release, release)) in text, text
        assert "Traceback" not in text

        # Back to 3.2.1 would downgrade: refused with one line before anything on the node changes.
        before = node_state(lab_dir)
        back = run_play(lab_dir, inventory, *pinned)
        text = back.stdout + back.stderr
        assert back.returncode != 0
        assert ("doca_ofed_version: 3.2.1 is older than what this host has (doca-ofed 3.2.2-1 -> 3.2.1-1; "
                "mlnx-ofed-kernel-utils 25.10.2.4.1 -> 25.10.1.7.1; mlnx-tools 25.10.2.4.1 -> 25.10.1.7.1); a "
                "downgrade is refused") in text, text
        assert "Traceback" not in text
        assert node_state(lab_dir) == before
    finally:
        if server:
            server.kill()
        lab.down()


def test_doca_ofed_air_gapped_copy_from_the_controller(tmp_path, mirror):
    """doca_ofed_source: packages: the repository directory and its key come from the controller; the node
    reaches no server at all (nothing is served here)."""
    lab_dir = str(tmp_path / "lab")
    try:
        inventory, _plan = lab.build(t.cluster_for("exclusive"), NODES, t.INTERFACES, lab_dir, kind="containers")
        repo = os.path.join(mirror, "3.2.1", "debian12", "x86_64")
        common = ["-e", "doca_ofed_version=3.2.1", "-e", "doca_ofed_source=packages",
                  "-e", "doca_ofed_packages_dir=" + repo]

        # Refused on the controller, before anything reaches the node: no key, no directory (it would copy the
        # controller's / to the node), the root directory, a directory without a repository index, a missing key.
        fresh = node_state(lab_dir)
        empty = str(tmp_path / "empty")
        os.makedirs(empty)
        key = os.path.join(mirror, "GPG-KEY-Mellanox.pub")
        base = ["-e", "doca_ofed_version=3.2.1", "-e", "doca_ofed_source=packages"]
        for extra, message in [
                (["-e", "doca_ofed_packages_dir=" + repo], "doca_ofed_key_file: empty, and doca_ofed_source is packages"),
                (["-e", "doca_ofed_key_file=" + key], "doca_ofed_packages_dir: empty, and doca_ofed_source is packages"),
                (["-e", "doca_ofed_key_file=" + key, "-e", "doca_ofed_packages_dir=/"],
                 "doca_ofed_packages_dir: / is the root directory"),
                (["-e", "doca_ofed_key_file=" + key, "-e", "doca_ofed_packages_dir=" + empty],
                 "doca_ofed_packages_dir: %s holds no repository index" % empty),
                (["-e", "doca_ofed_key_file=" + key + ".missing", "-e", "doca_ofed_packages_dir=" + repo],
                 "doca_ofed_key_file: %s.missing is not a file on the controller" % key)]:
            refused = run_play(lab_dir, inventory, *(base + extra))
            assert refused.returncode != 0 and message in refused.stdout, refused.stdout
            assert "Traceback" not in refused.stdout + refused.stderr
        assert node_state(lab_dir) == fresh
        assert on_node(lab_dir, "ls", "/var/lib/ainet-fabric", check=False).strip() == ""

        # A key file that is no key (a proxy's error page saved by hand), and the right key with another pinned
        # fingerprint: refused on the node before the package manager is configured.
        page = str(tmp_path / "key.html")
        with open(page, "w") as handle:
            handle.write("<!DOCTYPE html>\n<html><body>502 Bad Gateway</body></html>\n")
        binary = os.path.join(mirror, "GPG-KEY-Mellanox.gpg")
        shown = subprocess.run(["gpg", "--show-keys", "--with-colons", binary], check=True, capture_output=True,
                               text=True).stdout
        fingerprint = [line.split(":")[9] for line in shown.splitlines() if line.startswith("fpr:")][0]
        for extra, message in [
                (["-e", "doca_ofed_key_file=" + page],
                 "doca_ofed_key_file: %s is not an OpenPGP public key (neither ASCII-armored nor binary); it begins "
                 "with '<!DOCTYPE html> <html><body>502 Bad Gate'. Fix" % page),
                (["-e", "doca_ofed_key_file=" + binary, "-e", "doca_ofed_key_fingerprint=" + "0" * 40],
                 "doca_ofed_key_file: %s holds the key(s) %s, not only the pinned fingerprint %s" % (
                     binary, fingerprint, "0" * 40))]:
            refused = run_play(lab_dir, inventory, *(common + extra))
            assert refused.returncode != 0 and message in refused.stdout + refused.stderr, refused.stdout
            assert "Traceback" not in refused.stdout + refused.stderr
            assert node_state(lab_dir) == fresh

        # The key in binary form (gpg --export without --armor), pinned by its fingerprint (written with spaces,
        # as gpg prints it): armored on the node, where apt reads it when it checks the repository's InRelease.
        spaced = " ".join(fingerprint[i:i + 4] for i in range(0, 40, 4))
        keyed = ["-e", "doca_ofed_key_file=" + binary, "-e", "doca_ofed_key_fingerprint='%s'" % spaced]
        first = run_play(lab_dir, inventory, *(common + keyed))
        assert first.returncode == 0, first.stdout + first.stderr
        assert on_node(lab_dir, "ofed_info", "-s").strip() == "OFED-internal-25.10-1.7.1:"
        source = on_node(lab_dir, "cat", "/etc/apt/sources.list.d/ainet-doca-ofed.sources")
        assert "URIs: file:///var/lib/ainet-fabric/doca-ofed-repo" in source
        # The pin of a copied repository: apt gives a file repository an empty origin, so the pin names it so, and
        # apt itself gives the installed version priority 1001 from the copy (the VM tier proved this before it
        # installed from a mirror; a distribution's package is left at its own priority)
        release = on_node(lab_dir, "uname", "-r").strip()
        pin = on_node(lab_dir, "cat", "/etc/apt/preferences.d/ainet-doca-ofed.pref")
        assert ("Package: doca-ofed linux-headers-%s mlnx-ofed-kernel-utils mlnx-tools\nPin: origin \"\"\n"
                "Pin-Priority: 1001\n" % release) in pin, pin
        policy = on_node(lab_dir, "apt-cache", "policy", "doca-ofed", "iproute2")
        doca, iproute = policy.split("iproute2:")
        assert "3.2.1-1 1001" in doca, policy
        assert "file:/var/lib/ainet-fabric/doca-ofed-repo/3.2.1/debian12/x86_64 ./ Packages" in doca, policy
        assert "1001" not in iproute, policy
        armored = on_node(lab_dir, "cat", "/etc/apt/keyrings/ainet-doca-ofed.asc")
        assert armored.startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----\n")
        dearmored = subprocess.run(["gpg", "--dearmor"], input=armored.encode(), check=True,
                                   capture_output=True).stdout
        with open(binary, "rb") as handle:
            assert dearmored == handle.read()

        second = run_play(lab_dir, inventory, *(common + keyed))
        assert second.returncode == 0 and recap_changed(second) == 0, second.stdout

        # Check mode on the converged node: the copy, the key and the packages report no change and touch nothing
        # (the copied repository's files keep their times).
        copied = ["find", "/var/lib/ainet-fabric", "/etc/apt/keyrings", "-printf", "%p %m %s %T@\\n"]
        converged = (node_state(lab_dir), on_node(lab_dir, *copied))
        checked = run_play(lab_dir, inventory, "--check", *(common + keyed))
        assert checked.returncode == 0 and recap_changed(checked) == 0, checked.stdout
        assert (node_state(lab_dir), on_node(lab_dir, *copied)) == converged
    finally:
        lab.down()


# A mirror that wants a login (HTTP basic): the stand-in repository behind it, the token planted in the URL.
LOGIN, TOKEN = "fabric", "PLANTEDTOKEN-d0ca"
AUTH_PORT = PORT + 1
AUTH_SERVER = """import base64, functools, http.server, sys
want = "Basic " + base64.b64encode(sys.argv[3].encode()).decode()
class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def send_head(self):
        if self.headers.get("Authorization") != want:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="mirror"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        return super().send_head()
http.server.ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])),
                                functools.partial(Handler, directory=sys.argv[4])).serve_forever()
"""


def serve_with_login(root, script):
    with open(script, "w") as handle:
        handle.write(AUTH_SERVER)
    server = subprocess.Popen(["ip", "netns", "exec", lab.mgmt_ns(), sys.executable, script, "%s.1" % lab.MGMT_NET,
                               str(AUTH_PORT), "%s:%s" % (LOGIN, TOKEN), root],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    return server


def test_doca_ofed_mirror_login_never_leaks(tmp_path, mirror):
    """A mirror URL with a login (https://user:token@mirror/): apt reads the repository with it, and the token
    reaches no output at any verbosity (check mode, a failure, the install, the second run) and no file but apt's
    auth.conf.d file of ours, mode 0600 and root's; the source file names the URL without it; a mirror without a
    login removes that file."""
    lab_dir = str(tmp_path / "lab")
    servers = []
    try:
        inventory, _plan = lab.build(t.cluster_for("exclusive"), NODES, t.INTERFACES, lab_dir, kind="containers")
        servers.append(serve_with_login(mirror, str(tmp_path / "auth_server.py")))
        base = "http://%s.1:%d" % (lab.MGMT_NET, AUTH_PORT)
        secret = "http://%s:%s@%s.1:%d" % (LOGIN, TOKEN, lab.MGMT_NET, AUTH_PORT)
        # the control: without the login the mirror refuses, so a passing run used it
        assert subprocess.run(["ip", "netns", "exec", lab.mgmt_ns(), "curl", "-sf", base + "/GPG-KEY-Mellanox.pub"],
                              capture_output=True, check=False).returncode != 0
        # in a variables file, as a vault or a job's credential gives it (ansible-playbook -vvvv prints the command
        # line's extra variables themselves)
        given = str(tmp_path / "mirror.json")
        with open(given, "w") as handle:
            json.dump({"doca_ofed_mirror": secret, "doca_ofed_key_url": "%s/GPG-KEY-Mellanox.pub" % secret}, handle)
        pinned = ["-e", "doca_ofed_version=3.2.1", "-e", "@" + given, "-e", "doca_ofed_key_fingerprint="]
        began = time.monotonic()
        runs = {"check": run_play(lab_dir, inventory, "--check", "--diff", *pinned),
                "missing -vvv": run_play(lab_dir, inventory, "-vvv", "-e", "doca_ofed_version=3.3.0", *pinned[2:]),
                "missing": run_play(lab_dir, inventory, "-e", "doca_ofed_version=3.3.0", *pinned[2:]),
                "install -vvvv": run_play(lab_dir, inventory, "-vvvv", "--diff", *pinned)}
        for level in ("", "-v", "-vv", "-vvv"):
            runs["second " + (level or "0")] = run_play(lab_dir, inventory, *([level] if level else []), *pinned)
        seconds = time.monotonic() - began
        print("doca_ofed with a mirror login, 8 runs (check, 2 failures, install, 4 second runs): %.1f s" % seconds)
        assert runs["check"].returncode == 0, runs["check"].stdout + runs["check"].stderr
        assert "would install doca-ofed (DOCA 3.2.1) from %s/3.2.1/debian12/x86_64/" % base in runs["check"].stdout
        for name in ("missing", "missing -vvv"):
            assert runs[name].returncode != 0
            assert "doca_ofed_version: 3.3.0 is not in the repository for this host (%s/3.3.0/" % base in (
                runs[name].stdout), runs[name].stdout
        assert runs["install -vvvv"].returncode == 0, runs["install -vvvv"].stdout[-4000:]
        assert on_node(lab_dir, "ofed_info", "-s").strip() == "OFED-internal-25.10-1.7.1:"
        for name, result in runs.items():
            text = result.stdout + result.stderr
            assert TOKEN not in text, (name, [line for line in text.splitlines() if TOKEN in line][:5])
            if name.startswith("second"):
                assert result.returncode == 0 and recap_changed(result) == 0, (name, result.stdout[-3000:])

        # Files on the node: the token only in our auth.conf.d file, root's and 0600; the source file without it.
        found = on_node(lab_dir, "sh", "-c", "grep -rlF %s /etc /var /tmp /root /home /run 2>/dev/null; true" % TOKEN)
        assert found.split() == ["/etc/apt/auth.conf.d/ainet-doca-ofed.conf"], found
        mode = on_node(lab_dir, "stat", "-c", "%a %U %G", "/etc/apt/auth.conf.d/ainet-doca-ofed.conf").strip()
        assert mode == "600 root root", mode
        auth = on_node(lab_dir, "cat", "/etc/apt/auth.conf.d/ainet-doca-ofed.conf")
        assert "machine %s login %s password %s\n" % (base, LOGIN, TOKEN) in auth
        source = on_node(lab_dir, "cat", "/etc/apt/sources.list.d/ainet-doca-ofed.sources")
        assert "URIs: %s/3.2.1/debian12/x86_64/\n" % base in source, source
        # ... and on the controller: nothing the runs wrote holds it (the node's overlay under the lab is the node's)
        leaked = subprocess.run(["grep", "-rlF", "--exclude-dir=upper", "--exclude-dir=rootfs", "--exclude-dir=work",
                                 TOKEN, str(tmp_path), os.path.expanduser("~/.ansible")],
                                capture_output=True, text=True, check=False).stdout.split()
        assert leaked == [given], leaked

        # A mirror without a login (the same repository served openly): our auth.conf.d file goes.
        servers.append(serve(mirror))
        plain = run_play(lab_dir, inventory, "-e", "doca_ofed_version=3.2.1", "-e", "doca_ofed_mirror=" + MIRROR,
                         "-e", "doca_ofed_key_url=%s/GPG-KEY-Mellanox.pub" % MIRROR, "-e", "doca_ofed_key_fingerprint=")
        assert plain.returncode == 0, plain.stdout[-3000:]
        assert on_node(lab_dir, "ls", "/etc/apt/auth.conf.d/", check=False).strip() == ""
    finally:
        for server in servers:
            server.kill()
        lab.down()
