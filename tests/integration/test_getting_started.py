# -*- coding: utf-8 -*-
"""docs/getting-started.md, run as written: every ``sh`` block, line by line, from the built tarball.

A new user with ansible-core and nothing else, as a platform engineer's login is: a user of its own
(``useradd``, so not root: mode bits hold), an empty HOME (so ``~`` is theirs), no ansible.cfg, a venv
with nothing but ansible-core (built from the system's Python, cached under ``build/guide-venvs/``),
the tarball in the working directory. It runs once per ansible-core the collection supports at both
ends: 2.19 (the CI venv's version) and 2.16 (``meta/runtime.yml``'s minimum).

The guide's ``sudo`` lines are the administrator's: they run as root, the system-wide path
``/usr/share/ansible/collections`` replaced by a directory of the test's (which stands in for it in the
user's ``ANSIBLE_COLLECTIONS_PATH``), and the installed tree is then made read-only (``chmod -R a-w``),
as an execution environment's or a distribution's is. Two more things are filled in as the guide tells
the reader to: ``<version>`` (galaxy.yml's) and the inventory edit of step 2, which points every host
at ``127.0.0.1`` port 1, so that the host jobs run their controller checks and then find their hosts
unreachable at once (nothing on this machine is configured, no packet leaves it). An optional
``[--flags]`` part runs both ways.

Each command must exit as the guide implies (0; 4, hosts unreachable, for the host jobs), print
no traceback, leave the installed collection exactly as it was, and the files must be where the
guide says they are.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.dirname(sys.executable)
GUIDE = os.path.join(ROOT, "docs", "getting-started.md")
sys.path.insert(0, HERE)
from ansible_cores import CORES, core_venv  # noqa: E402  pylint: disable=wrong-import-position
from test_installed_collection import _listing  # noqa: E402  pylint: disable=wrong-import-position

SYSTEM_PATH = "/usr/share/ansible/collections"


def collection_files(tree):
    """The installed tree as the jobs must leave it: Python's byte-code caches and the directory
    times they touch left out (the read-only tree takes none, but a failed write must not pass)."""
    return {path: (kind, size, mode, None if stat.S_ISDIR(kind) else mtime)
            for path, (kind, size, mode, mtime) in _listing(tree).items() if "__pycache__" not in path}


# Jobs that need their hosts: their controller play runs, then every host is unreachable (rc 4).
HOST_JOBS = re.compile(r"ainet\.fabric\.(hosts|site|qos|validate)\b")


def guide_commands(text):
    """The shell lines of the guide's ``sh`` blocks, in order (a trailing backslash joins the next line),
    each optional ``[...]`` part run both ways."""
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            optional = re.search(r"\s\[([^\]]+)\]", line)
            if optional:
                commands.append(line[:optional.start()] + line[optional.end():])
                commands.append(line[:optional.start()] + " " + optional.group(1) + line[optional.end():])
            else:
                commands.append(line)
    return commands


def test_the_guide_has_the_whole_flow():
    with open(GUIDE, encoding="utf-8") as handle:
        commands = guide_commands(handle.read())
    for job in ("new_cluster", "plan", "hosts", "tors", "validate"):
        assert any("ainet.fabric.%s" % job in c for c in commands), job
    assert any("collection install" in c and SYSTEM_PATH in c for c in commands)
    # what failed from a read-only install: a copy that keeps the install's modes
    assert not [c for c in commands if re.match(r"cp -r ", c) and "--no-preserve=mode" not in c]


class User(object):
    """A user of its own with an empty home, and the administrator (root) beside it."""

    def __init__(self, base, venv):
        self.name = "aguide%d" % os.getpid()
        self.home = os.path.join(base, "home")
        skel = os.path.join(base, "skel")
        os.makedirs(skel)
        subprocess.run(["useradd", "--create-home", "--home-dir", self.home, "--skel", skel, "--shell", "/bin/bash",
                        "--user-group", self.name], check=True, capture_output=True)
        entry = pwd.getpwnam(self.name)
        self.uid, self.gid = entry.pw_uid, entry.pw_gid
        self.system = os.path.join(base, "usr-share-ansible-collections")   # stands in for SYSTEM_PATH
        self.tree = os.path.join(self.system, "ansible_collections", "ainet", "fabric")
        self.venv = venv
        bin_dir = os.path.join(venv, "bin")
        self.env = {"PATH": bin_dir + os.pathsep + "/usr/local/bin:/usr/bin:/bin", "HOME": self.home, "USER": self.name,
                    "LOGNAME": self.name, "LANG": "C.UTF-8", "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0",
                    # the default search path, with the test's directory for the system-wide one
                    "ANSIBLE_COLLECTIONS_PATH": os.pathsep.join([os.path.join(self.home, ".ansible", "collections"),
                                                                 self.system]),
                    "GIT_AUTHOR_NAME": "Platform Engineer", "GIT_AUTHOR_EMAIL": "pe@example.invalid",
                    "GIT_COMMITTER_NAME": "Platform Engineer", "GIT_COMMITTER_EMAIL": "pe@example.invalid"}

    def run(self, command):
        """A line of the guide: ``sudo ...`` as the administrator, anything else as the user."""
        if command.startswith("sudo "):
            cmd = ["bash", "-c", command[len("sudo "):].replace(SYSTEM_PATH, self.system)]
        else:
            cmd = ["setpriv", "--reuid=%d" % self.uid, "--regid=%d" % self.gid, "--init-groups", "--",
                   "bash", "-c", command]
        return subprocess.run(cmd, cwd=self.home, env=self.env, capture_output=True, text=True, timeout=600,
                              check=False)

    def remove(self):
        subprocess.run(["userdel", self.name], check=False, capture_output=True)


def edit_inventory(path):
    """Step 2's edit: the hosts' addresses (here: one that refuses at once)."""
    hosts_file = os.path.join(path, "hosts.yml")
    with open(hosts_file) as handle:
        hosts = yaml.safe_load(handle)
    for host in hosts["all"]["children"]["gpu_nodes"]["hosts"].values():
        host.update(ansible_host="127.0.0.1", ansible_port=1)
    with open(hosts_file, "w") as handle:
        yaml.safe_dump(hosts, handle, sort_keys=False)


@pytest.fixture(scope="module")
def tarball():
    base = tempfile.mkdtemp(prefix="guide-dist")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--force", "--output-path", base,
                    ROOT], check=True, capture_output=True, env=env, cwd=base)
    yield glob.glob(os.path.join(base, "ainet-fabric-*.tar.gz"))[0]
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(params=sorted(CORES), ids=lambda core: "ansible-core-" + core)
def user(request, tarball):
    if os.geteuid() != 0 or not shutil.which("useradd") or not shutil.which("setpriv"):
        pytest.skip("needs root, useradd and setpriv: the guide runs as a user of its own, against an install "
                    "that only root can write (run as root, e.g. in CI)")
    venv = core_venv(request.param)
    base = tempfile.mkdtemp(prefix="guide")
    os.chmod(base, 0o755)
    usr = User(base, venv)
    try:
        probe = usr.run("ansible-playbook --version")
        if probe.returncode:
            pytest.skip("the user cannot run %s (a venv under a private directory?): %s" % (venv, probe.stderr[-300:]))
        assert "core %s." % request.param in probe.stdout, probe.stdout
        shutil.copy(tarball, usr.home)
        os.chown(os.path.join(usr.home, os.path.basename(tarball)), usr.uid, usr.gid)
        with open(os.path.join(ROOT, "galaxy.yml")) as handle:
            usr.version = yaml.safe_load(handle)["version"]
        yield usr
    finally:
        usr.remove()
        subprocess.run(["chmod", "-R", "u+w", base], check=False)
        shutil.rmtree(base, ignore_errors=True)


def test_every_command_of_the_guide_runs_as_written(user):
    with open(GUIDE, encoding="utf-8") as handle:
        commands = [c.replace("<version>", user.version) for c in guide_commands(handle.read())]
    inventory = os.path.join(user.home, "clusters", "prod")
    before = None
    ran = []
    for command in commands:
        result = user.run(command)
        text = result.stdout + result.stderr
        ran.append(command)
        expected = 4 if HOST_JOBS.search(command) else 0
        assert result.returncode == expected, "%s -> rc %d (want %d)\n%s" % (
            command, result.returncode, expected, text[-6000:])
        assert "Traceback" not in text, text[-6000:]
        if HOST_JOBS.search(command):
            # The controller's checks passed; what failed is only the unreachable hosts.
            recap = re.findall(r"^(\S+)\s+: ok=\d+\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)", result.stdout,
                               re.M)
            assert recap and all(failed == "0" for _h, _u, failed in recap), text[-6000:]
            unreachable = {h for h, count, _f in recap if count != "0"}
            assert unreachable == {"gpu01", "gpu02", "gpu03", "gpu04"}, text[-6000:]
            assert "agree with the published plan (%s)" % os.path.join(inventory, "rail_plan_lock.yml") \
                in result.stdout, text[-6000:]
        if command.startswith("sudo ") and "collection install" in command:
            assert os.path.isfile(os.path.join(user.tree, "MANIFEST.json")), text
            # read-only, as a system-wide or execution-environment install is
            subprocess.run(["chmod", "-R", "a-w", user.system], check=True)
            before = collection_files(user.tree)
        elif before is not None:
            after = collection_files(user.tree)
            changed = sorted(set(after.items()) ^ set(before.items()))
            assert not changed, "%s wrote under the installed collection: %s" % (command, changed[:20])
        if "ainet.fabric.new_cluster" in command:
            edit_inventory(inventory)
    assert before is not None, ran
    assert not os.path.exists(os.path.join(user.home, ".ansible", "collections")), "the user installed a copy"

    # The files are where the guide says, and the user's.
    with open(os.path.join(inventory, "group_vars", "all", "fabric.yml")) as handle:
        cluster = yaml.safe_load(handle)["fabric_cluster"]["name"]
    assert cluster == "prod"
    out = os.path.join(inventory, ".ainet-fabric", cluster)
    for name in ("plan.json", "rails.csv", "rails.md", "topology.mmd"):
        assert os.stat(os.path.join(out, name)).st_uid == user.uid, name
    assert glob.glob(os.path.join(out, "tors", "*")), "no ToR configuration in %s" % out
    with open(os.path.join(inventory, "rail_plan_lock.yml")) as handle:
        lock = yaml.safe_load(handle)["all"]["vars"]["rail_plan_lock"]
    # one line per host in node-id order: <host> <node id>: <rails>
    assert lock["cluster"] == cluster and [line.split()[:2] for line in lock["nodes"].splitlines()] == [
        ["gpu0%d" % i, "%d:" % i] for i in range(1, 5)], lock
    # The lock is committed; the plan's output directory is not.
    log = user.run("git -C ~/clusters/prod log --oneline -- rail_plan_lock.yml")
    assert log.returncode == 0 and log.stdout.strip(), log.stdout + log.stderr
    status = user.run("git -C ~/clusters/prod status --porcelain --ignored")
    assert ".ainet-fabric" not in status.stdout.replace("!! .ainet-fabric/", ""), status.stdout
    # The example copied out of the read-only install is the user's to change.
    assert user.run("touch ~/clusters/example/hosts.yml").returncode == 0
