# -*- coding: utf-8 -*-
"""docs/getting-started.md, run as written: every ``sh`` block, line by line, from the built tarball.

A new user with ansible-core and nothing else: an empty HOME (so ``~`` is theirs), no ansible.cfg,
no collection but what the guide installs (the venv's ``ansible`` package is hidden with
``ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false``), the tarball in the working directory. Where the test
runs as root, the commands run as an unprivileged uid, as a platform engineer's login would.

Two things are filled in as the guide tells the reader to: ``<version>`` (galaxy.yml's) and the inventory edit
of step 2, which here names the cluster ``prod`` and points every host at ``127.0.0.1`` port 1, so that the
host jobs run their controller checks and then find their hosts unreachable at once (nothing on this machine
is configured, no packet leaves it).
An optional ``[--flags]`` part runs both ways.

Each command must exit as the guide implies (0; 4, hosts unreachable, for the host jobs), print
no traceback, leave the installed collection exactly as it was, and the files must be where the
guide says they are.
"""

from __future__ import annotations

import glob
import json
import os
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
USER_UID = 1000
sys.path.insert(0, HERE)
from test_installed_collection import _listing  # noqa: E402  pylint: disable=wrong-import-position


def collection_files(tree):
    """The installed tree as the jobs must leave it: Python's byte-code caches (which any import
    writes into a writable install) and the directory times they touch left out."""
    return {path: (kind, size, mode, None if stat.S_ISDIR(kind) else mtime)
            for path, (kind, size, mode, mtime) in _listing(tree).items() if "__pycache__" not in path}


# Jobs that need their hosts: their controller play runs, then every host is unreachable (rc 4).
HOST_JOBS = re.compile(r"ainet\.fabric\.(hosts|site|qos|validate)\b")


def guide_commands(text):
    """The shell lines of the guide's ``sh`` blocks, in order, each optional ``[...]`` part run both ways."""
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
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
    for job in ("plan", "hosts", "tors", "validate"):
        assert any("ainet.fabric.%s" % job in c for c in commands), job
    assert any("collection install" in c for c in commands)


def _user():
    """(uid, gid) to run the user's commands as, or None to run them as this process."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return None
    # through env: a second exec, after which no capability of root's is left (a venv whose Python
    # lives under a private /root, as a pyenv one may, is root's alone: then the commands run as root)
    probe = subprocess.run(["setpriv", "--reuid=%d" % USER_UID, "--regid=%d" % USER_UID, "--clear-groups", "--",
                            "/usr/bin/env", os.path.join(BIN, "ansible-galaxy"), "--version"],
                           capture_output=True, check=False)
    return (USER_UID, USER_UID) if probe.returncode == 0 else None


class User(object):
    def __init__(self, base):
        self.home = os.path.join(base, "home")
        os.makedirs(self.home)
        self.user = _user()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "PYTHON", "GIT_"))}
        self.env.update(PATH=BIN + os.pathsep + os.environ.get("PATH", ""), HOME=self.home, ANSIBLE_NOCOLOR="1",
                        ANSIBLE_FORCE_COLOR="0", ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="false",
                        GIT_AUTHOR_NAME="Platform Engineer", GIT_AUTHOR_EMAIL="pe@example.invalid",
                        GIT_COMMITTER_NAME="Platform Engineer", GIT_COMMITTER_EMAIL="pe@example.invalid")
        self.tree = os.path.join(self.home, ".ansible", "collections", "ansible_collections", "ainet", "fabric")

    def run(self, command):
        cmd = ["bash", "-c", command]
        if self.user:
            cmd = ["setpriv", "--reuid=%d" % self.user[0], "--regid=%d" % self.user[1], "--clear-groups", "--"] + cmd
        return subprocess.run(cmd, cwd=self.home, env=self.env, capture_output=True, text=True, timeout=600,
                              check=False)


def edit_inventory(path):
    """Step 2's edit: the cluster's name, and the hosts' addresses (here: one that refuses at once)."""
    model_file = os.path.join(path, "group_vars", "all", "fabric.yml")
    with open(model_file) as handle:
        model = yaml.safe_load(handle)
    model["fabric_cluster"]["name"] = "prod"
    with open(model_file, "w") as handle:
        yaml.safe_dump(model, handle, sort_keys=False)
    hosts_file = os.path.join(path, "hosts.yml")
    with open(hosts_file) as handle:
        hosts = yaml.safe_load(handle)
    for host in hosts["all"]["children"]["gpu_nodes"]["hosts"].values():
        host.update(ansible_host="127.0.0.1", ansible_port=1)
    with open(hosts_file, "w") as handle:
        yaml.safe_dump(hosts, handle, sort_keys=False)


@pytest.fixture(scope="module")
def user():
    base = tempfile.mkdtemp(prefix="guide")
    os.chmod(base, 0o755)
    usr = User(base)
    with open(os.path.join(ROOT, "galaxy.yml")) as handle:
        usr.version = yaml.safe_load(handle)["version"]
    env = dict(usr.env)
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--force", "--output-path",
                    usr.home, ROOT], check=True, capture_output=True, env=env, cwd=base)
    if usr.user:
        subprocess.run(["chown", "-R", "%d:%d" % usr.user, usr.home], check=True)
    yield usr
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
            assert "agree with the published plan (%s)" % os.path.join(inventory, "rail_plan_lock.json") \
                in result.stdout, text[-6000:]
        if "collection install" in command:
            assert os.path.isfile(os.path.join(user.tree, "MANIFEST.json")), text
            before = collection_files(user.tree)
        elif before is not None:
            after = collection_files(user.tree)
            changed = sorted(set(after.items()) ^ set(before.items()))
            assert not changed, "%s wrote under the installed collection: %s" % (command, changed[:20])
        if command.startswith("cp -r"):
            edit_inventory(inventory)
    assert before is not None, ran

    # The files are where the guide says.
    with open(os.path.join(inventory, "group_vars", "all", "fabric.yml")) as handle:
        cluster = yaml.safe_load(handle)["fabric_cluster"]["name"]
    out = os.path.join(inventory, ".ainet-fabric", cluster)
    for name in ("plan.json", "rails.csv", "rails.md", "topology.mmd"):
        assert os.path.isfile(os.path.join(out, name)), name
    assert glob.glob(os.path.join(out, "tors", "*")), "no ToR configuration in %s" % out
    with open(os.path.join(inventory, "rail_plan_lock.json")) as handle:
        lock = json.load(handle)["all"]["vars"]["rail_plan_lock"]
    assert lock["cluster"] == cluster and set(lock["nodes"]) == {"gpu01", "gpu02", "gpu03", "gpu04"}, lock
    # The lock is committed; the plan's output directory is not.
    log = user.run("git -C ~/clusters/prod log --oneline -- rail_plan_lock.json")
    assert log.returncode == 0 and log.stdout.strip(), log.stdout + log.stderr
    status = user.run("git -C ~/clusters/prod status --porcelain --ignored")
    assert ".ainet-fabric" not in status.stdout.replace("!! .ainet-fabric/", ""), status.stdout
