# -*- coding: utf-8 -*-
"""The collection as a user runs it: built, installed from the tarball, read-only, by FQCN.

The tarball is built from this checkout and installed into an empty collections path with
``ansible-galaxy collection install --offline``; no other collection is visible (the venv's
``ansible`` package is hidden with ``collections_scan_sys_path = false``), and the installed tree is
made read-only (``chmod -R a-w``, and where the test runs as root, which ignores mode bits, a
read-only bind mount in a private mount namespace around every command). A copy of the example
inventory outside the checkout then goes through every playbook by its FQCN, from a working
directory outside the checkout, with a configuration of its own: the plan and ToR jobs for real,
the host jobs in check mode against hosts that refuse the connection at once (``127.0.0.1`` port 1,
so nothing on this machine is configured). Each command must leave the installed tree exactly as it
was, and the files must be where the docs say: ``<inventory dir>/.ainet-fabric/<cluster>/`` and
``<inventory dir>/rail_plan_lock.yml``, or under the working directory where the hosts come from
no inventory directory. ``ansible-doc`` must document every module, filter and role of the
installed tree.
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
import sysconfig

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
PLAYBOOKS = sorted(os.path.splitext(name)[0] for name in os.listdir(os.path.join(ROOT, "playbooks"))
                   if name.endswith(".yml"))
# The jobs that need no host: they run for real and write their files.
CONTROLLER_JOBS = ("plan", "tors", "k8s", "topology")
# The jobs that touch a node only when something waits on it (maintenance windows: nothing pending, no host).
NOTHING_PENDING = ("maintenance",)
# The playbooks that write a new inventory directory (on localhost, no inventory needed).
SCAFFOLDS = ("new_cluster",)
# The AWX workflow's gate: no host job, it compares the plan with a lock in the project (test below).
GATES = ("plan_lock_gate",)
# Every job's first play, which every job imports (the jobs' runs below run it from the installed tree).
PARTS = ("check_input",)
# Where the docs (README "Where the jobs write", the roles' READMEs) put the files.
OUT = ".ainet-fabric"
PLAN_FILES = ("plan.json", "rails.csv", "rails.md", "topology.mmd")
LOCK = "rail_plan_lock.yml"
# Every host refuses the connection at once: the host plays fail cleanly, nothing is configured.
NO_HOSTS = ("-e", "ansible_host=127.0.0.1", "-e", "ansible_port=1")
# Mount the installed collection read-only over itself, in a mount namespace of the command's own.
RO_WRAPPER = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'


def _listing(top):
    """Every entry under ``top`` with its type, size, mode and modification time."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            info = os.lstat(path)
            found[os.path.relpath(path, top)] = (stat.S_IFMT(info.st_mode), info.st_size, stat.S_IMODE(info.st_mode),
                                                 info.st_mtime_ns)
    return found


def _can_mount_read_only():
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "--mount", "--", "sh", "-c", RO_WRAPPER, "/", "true"],
                           capture_output=True, check=False)
    return probe.returncode == 0


class Installed(object):
    """The tarball installed into an empty, read-only collections path, and how to run commands on it."""

    def __init__(self, base):
        self.base = base
        self.collections = os.path.join(base, "collections")
        self.tree = os.path.join(self.collections, "ansible_collections", "ainet", "fabric")
        home = os.path.join(base, "home")
        os.makedirs(home)
        self.config = os.path.join(base, "ansible.cfg")
        with open(self.config, "w") as handle:
            handle.write("[defaults]\ncollections_path = %s\ncollections_scan_sys_path = false\n"
                         "retry_files_enabled = false\nhost_key_checking = false\n" % self.collections)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "PYTHON"))}
        self.env.update(PATH=BIN + os.pathsep + os.environ.get("PATH", ""), HOME=home, ANSIBLE_CONFIG=self.config,
                        ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
        self.read_only_mount = _can_mount_read_only()
        if os.geteuid() == 0 and not self.read_only_mount:
            # root writes through chmod a-w; only the listing guards the tree then, and Python's
            # byte-code caches are the one write it would see that an EE's job user cannot make.
            self.env["PYTHONDONTWRITEBYTECODE"] = "1"
        self.before = None

    def build_and_install(self):
        dist = os.path.join(self.base, "dist")
        self.run("ansible-galaxy", "collection", "build", "--force", "--output-path", dist, ROOT, cwd=self.base,
                 guarded=False, expect=0)
        self.tarball = glob.glob(os.path.join(dist, "ainet-fabric-*.tar.gz"))[0]
        with open(os.path.join(ROOT, "galaxy.yml")) as handle:
            self.dependencies = yaml.safe_load(handle).get("dependencies") or {}
        # With its dependencies, offline, from a local directory of their tarballs (as an air-gapped
        # EE build or controller would): each built from the copy the venv's ansible package carries.
        deps = [self._dependency_tarball(name, os.path.join(self.base, "deps")) for name in sorted(self.dependencies)]
        self.run("ansible-galaxy", "collection", "install", "--offline", "-p", self.collections, self.tarball, *deps,
                 cwd=self.base, guarded=False, expect=0)
        subprocess.run(["chmod", "-R", "a-w", self.tree], check=True)
        self.before = _listing(self.collections)

    def _dependency_tarball(self, name, dest):
        namespace, collection = name.split(".")
        source = os.path.join(sysconfig.get_paths()["purelib"], "ansible_collections", namespace, collection)
        assert os.path.isdir(source), "dependency %s is not in the venv (requirements-dev.txt's ansible package)" % name
        copy = os.path.join(self.base, "src", name)
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
        # An installed collection's FILES.json may name files its distribution left out: build a fresh
        # artifact from a galaxy.yml made of its MANIFEST.json.
        with open(os.path.join(copy, "MANIFEST.json")) as handle:
            info = json.load(handle)["collection_info"]
        keys = ("namespace", "name", "version", "readme", "authors", "description", "license", "license_file",
                "tags", "dependencies", "repository")
        meta = {k: info[k] for k in keys if info.get(k) not in (None, "", [])}
        meta.setdefault("readme", "README.md")
        meta.setdefault("authors", ["unknown"])
        for generated in ("MANIFEST.json", "FILES.json"):
            os.remove(os.path.join(copy, generated))
        with open(os.path.join(copy, "galaxy.yml"), "w") as handle:
            yaml.safe_dump(meta, handle)
        self.run("ansible-galaxy", "collection", "build", "--force", "--output-path", dest, copy, cwd=self.base,
                 guarded=False, expect=0)
        return glob.glob(os.path.join(dest, "%s-%s-*.tar.gz" % (namespace, collection)))[0]

    def run(self, tool, *args, cwd, guarded=True, expect=None):
        cmd = [os.path.join(BIN, tool)] + list(args)
        if guarded and self.read_only_mount:
            cmd = ["unshare", "--mount", "--", "sh", "-c", RO_WRAPPER, self.tree] + cmd
        result = subprocess.run(cmd, cwd=cwd, env=self.env, capture_output=True, text=True, timeout=600,
                                check=False)
        text = result.stdout + result.stderr
        if expect is not None:
            assert result.returncode == expect, "%s -> rc %d\n%s" % (" ".join(args), result.returncode, text[-6000:])
        assert "Traceback" not in text, text[-6000:]
        if guarded:
            after = _listing(self.collections)
            changed = sorted(set(after.items()) ^ set(self.before.items()))
            assert not changed, "%s wrote under the installed collection: %s" % (" ".join(args), changed[:20])
        return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    base = str(tmp_path_factory.mktemp("installed"))
    inst = Installed(base)
    inst.build_and_install()
    yield inst
    subprocess.run(["chmod", "-R", "u+w", base], check=False)


@pytest.fixture(scope="module")
def work(installed):
    """A copy of the example inventory outside the checkout, and the working directory of the jobs."""
    path = os.path.join(installed.base, "work")
    # without what a `make plan` in the checkout left beside it
    shutil.copytree(os.path.join(ROOT, "inventories", "lab"), os.path.join(path, "inv"),
                    ignore=shutil.ignore_patterns(OUT))
    return path


def test_only_the_declared_dependencies_are_installed_and_used(installed):
    """galaxy.yml's dependencies are every other collection the roles, playbooks and plugins use."""
    listed = installed.run("ansible-galaxy", "collection", "list", "--format", "json", cwd=installed.base, expect=0)
    found = {name for path in json.loads(listed.stdout).values() for name in path}
    # ansible-core's own internal collections (ansible._protomatter) come with it, whatever the path
    found = {name for name in found if not name.startswith("ansible._")}
    assert found == {"ainet.fabric"} | set(installed.dependencies), found
    with open(os.path.join(installed.tree, "MANIFEST.json")) as handle:
        declared = json.load(handle)["collection_info"]["dependencies"]
    assert declared == installed.dependencies
    used = set()
    patterns = (r"^\s*-?\s*([a-z0-9_]+\.[a-z0-9_]+)\.[a-z0-9_]+:",        # a task's module
                r"\|\s*([a-z0-9_]+\.[a-z0-9_]+)\.[a-z0-9_]+",              # a filter or test
                r"(?:lookup|query|q)\(\s*['\"]([a-z0-9_]+\.[a-z0-9_]+)\.",  # a lookup
                r"(?:role|name):\s*['\"]?([a-z0-9_]+\.[a-z0-9_]+)\.[a-z0-9_]+",  # a role
                r"ansible_collections\.([a-z0-9_]+\.[a-z0-9_]+)\.")         # a Python import
    for top in ("roles", "playbooks", "plugins"):
        for dirpath, _dirs, files in os.walk(os.path.join(installed.tree, top)):
            for name in files:
                if not name.endswith((".yml", ".yaml", ".py", ".j2")):
                    continue
                if top == "plugins" and name.endswith((".yml", ".yaml")):
                    continue  # a filter's or test's documentation: its EXAMPLES may show other collections' tasks
                with open(os.path.join(dirpath, name)) as handle:
                    text = handle.read()
                for pattern in patterns:
                    used.update(re.findall(pattern, text, re.M))
    used -= {"ansible.builtin", "ainet.fabric"}
    undeclared = sorted(c for c in used if c not in declared)
    assert not undeclared, ("the collection uses %s: declare each in galaxy.yml dependencies with a version range"
                            % undeclared)


def _locked_node_ids(path):
    """``{host: node id}`` of a plan lock file (format 2: YAML, one line per host, ``<host> <node id>: <rails>``)."""
    with open(path, encoding="utf-8") as handle:
        nodes = yaml.safe_load(handle)["all"]["vars"]["rail_plan_lock"]["nodes"]
    return {line.split()[0]: int(line.split()[1].rstrip(":")) for line in nodes.splitlines()}


@pytest.mark.parametrize("job", CONTROLLER_JOBS)
def test_controller_jobs_write_beside_the_inventory(installed, work, job):
    inv = os.path.join(work, "inv")
    before = _listing(work)
    result = installed.run("ansible-playbook", "-i", "inv", "ainet.fabric." + job, cwd=work, expect=0)
    out = os.path.join(inv, OUT, "lab")
    if job == "plan":
        for name in PLAN_FILES:
            assert os.path.getsize(os.path.join(out, name)) > 0, name
        assert sorted(_locked_node_ids(os.path.join(inv, LOCK))) == ["gpu01", "gpu02", "gpu03", "gpu04"]
        # The job says where its files went.
        assert "-> %s; lock %s" % (out, os.path.join(inv, LOCK)) in result.stdout
        allowed = {"inv", os.path.join("inv", OUT), os.path.join("inv", OUT, "lab"), os.path.join("inv", LOCK)}
        allowed |= {os.path.join("inv", OUT, "lab", name) for name in PLAN_FILES}
    elif job == "k8s":
        # the lab's fabric attaches no pods (cni host): no object, no file
        assert "0 objects () in %s/k8s" % out in result.stdout, result.stdout[-3000:]
        allowed = set()
    elif job == "topology":
        # no cabling check has run beside this inventory: every rail group is withheld, nothing is published
        assert "0 files in %s/topology" % out in result.stdout and "(no cabling result)" in result.stdout, \
            result.stdout[-3000:]
        allowed = {os.path.join("inv", OUT, "lab", "topology")}
    else:
        tors = sorted(os.listdir(os.path.join(out, "tors")))
        assert tors == ["lab-tor1.yaml", "lab-tor2.yaml", "lab-tor3.json", "lab-tor4.json"]
        assert "4 ToR configuration(s) in %s/tors" % out in result.stdout
        allowed = {os.path.join("inv", OUT, "lab"), os.path.join("inv", OUT, "lab", "tors")}
        allowed |= {os.path.join("inv", OUT, "lab", "tors", t) for t in tors}
    after = _listing(work)
    written = {path for path in set(after) | set(before) if after.get(path) != before.get(path)}
    assert written <= allowed, sorted(written - allowed)
    # The outputs do not disturb the directory inventory (a hidden directory is not a source).
    listed = installed.run("ansible-inventory", "-i", "inv", "--list", cwd=work, expect=0)
    assert "WARNING" not in listed.stderr, listed.stderr
    assert sorted(json.loads(listed.stdout)["gpu_nodes"]["hosts"]) == ["gpu01", "gpu02", "gpu03", "gpu04"]


@pytest.mark.parametrize("job", NOTHING_PENDING)
def test_a_job_with_nothing_pending_touches_no_host(installed, work, job):
    """From the installed tree: the example's nodes have no step pending, so the maintenance job opens no window and
    reaches no host (they are unreachable here), and writes nothing."""
    if not os.path.exists(os.path.join(work, "inv", OUT)):
        installed.run("ansible-playbook", "-i", "inv", "ainet.fabric.plan", cwd=work, expect=0)
    before = _listing(work)
    result = installed.run("ansible-playbook", "-i", "inv", "ainet.fabric." + job, "--check", *NO_HOSTS, cwd=work,
                           expect=0)
    assert "UNREACHABLE" not in result.stdout and "changed=1" not in result.stdout, result.stdout[-3000:]
    assert _listing(work) == before


@pytest.mark.parametrize("job", [name for name in PLAYBOOKS
                                 if name not in CONTROLLER_JOBS + NOTHING_PENDING + SCAFFOLDS + GATES + PARTS])
def test_host_jobs_check_on_the_controller_then_fail_cleanly_on_unreachable_hosts(installed, work, job):
    if not os.path.exists(os.path.join(work, "inv", OUT)):
        installed.run("ansible-playbook", "-i", "inv", "ainet.fabric.plan", cwd=work, expect=0)
    before = _listing(work)
    if job == "lossless":
        # the example's model has no lossless class (qos preset none): the load test refuses in one line, on the
        # controller, before any host is touched
        result = installed.run("ansible-playbook", "-i", "inv", "ainet.fabric." + job, "--check", *NO_HOSTS,
                               cwd=work, expect=2)
        assert result.stdout.count("lossless_test: no fabric has a lossless profile") == 1, result.stdout[-3000:]
        assert "UNREACHABLE" not in result.stdout and "[ERROR]" not in result.stdout + result.stderr
        assert _listing(work) == before
        return
    result = installed.run("ansible-playbook", "-i", "inv", "ainet.fabric." + job, "--check", *NO_HOSTS,
                           cwd=work, expect=4)
    if job != "qos":
        # The controller's play ran from the installed tree: the hosts agree with the lock beside the inventory.
        assert "4 host(s) agree with the published plan (%s)" % os.path.join(work, "inv", LOCK) in result.stdout
    for host in ("gpu01", "gpu02", "gpu03", "gpu04"):
        assert re.search(r"fatal: \[%s\]: UNREACHABLE! .*port 1: Connection refused" % host, result.stdout), \
            result.stdout[-3000:]
    assert _listing(work) == before


def test_the_lock_gate_passes_an_unchanged_plan_and_stops_a_changed_one(installed, work):
    """The AWX rollout's gate (docs/awx.md), from the read-only install, run in the project's checkout as AWX does:
    the lock beside the inventory agrees, so it passes; with one address of the lock changed, it fails naming the
    changed count; nothing is written either way."""
    if not os.path.exists(os.path.join(work, "inv", OUT)):
        installed.run("ansible-playbook", "-i", "inv", "ainet.fabric.plan", cwd=work, expect=0)
    gate = ("ansible-playbook", "-i", "inv", "ainet.fabric.plan_lock_gate", "-e", "ainet_awx_inventory_path=inv")
    before = _listing(work)
    installed.run(*gate, cwd=work, expect=0)
    assert _listing(work) == before
    lock = os.path.join(work, "inv", LOCK)
    with open(lock) as handle:
        text = handle.read()
    changed = re.sub(r"172\.17\.(\d+)\.(\d+)", lambda m: "172.17.%s.%d" % (m.group(1), (int(m.group(2)) + 100) % 250), text,
                     count=1)
    assert changed != text
    try:
        with open(lock, "w") as handle:
            handle.write(changed)
        before = _listing(work)
        result = installed.run(*gate, cwd=work, expect=2)
        assert "The plan differs from the lock committed in" in result.stdout and "1 changed" in result.stdout, \
            result.stdout[-3000:]
        assert _listing(work) == before
    finally:
        with open(lock, "w") as handle:
            handle.write(text)


def _scaffold(installed, cwd, directory, hosts, *extra, expect=0):
    return installed.run("ansible-playbook", "ainet.fabric.new_cluster", "-e", "new_cluster_dir=" + directory,
                         "-e", "new_cluster_hosts=" + hosts, "-e", "new_cluster_rail_interfaces=ens6f0np0,ens6f1np1",
                         "-e", "new_cluster_tor_platform=sonic", "-e", "new_cluster_tor_port_template=Ethernet{node}",
                         *extra, cwd=cwd, expect=expect)


def _recap(result):
    return re.search(r"^localhost\s+: ok=\d+\s+changed=(\d+)\s+unreachable=0\s+failed=(\d+)", result.stdout, re.M)


def test_new_cluster_writes_an_inventory_the_jobs_read(installed):
    """From the read-only install: a fresh directory becomes an inventory that ansible-inventory reads and the
    plan job accepts; a second run changes nothing."""
    cwd = os.path.join(installed.base, "scaffold")
    os.makedirs(cwd)
    inv = os.path.join(cwd, "prod")
    result = _scaffold(installed, cwd, inv, "gpu01,gpu02=10.0.0.2,gpu03")
    assert _recap(result).groups() == ("3", "0"), result.stdout[-3000:]   # the directory, the templates, rails.yml
    written = sorted(os.path.relpath(os.path.join(d, n), inv) for d, _s, names in os.walk(inv) for n in names)
    assert written == [".gitignore", "group_vars/all/fabric.yml", "group_vars/gpu_nodes.yml", "hosts.yml", "rails.yml"]
    for name in written:
        assert os.stat(os.path.join(inv, name)).st_mode & 0o200, name   # the user's to edit
    graph = installed.run("ansible-inventory", "-i", inv, "--graph", cwd=cwd, expect=0)
    assert "WARNING" not in graph.stderr, graph.stderr
    for group in ("@gpu_nodes:", "@tor_prod_rail1_tor:", "@rail_default_2:"):
        assert group in graph.stdout, graph.stdout
    plan = installed.run("ansible-playbook", "-i", inv, "ainet.fabric.plan", cwd=cwd, expect=0)
    assert "prod: 3 nodes, 2 rails" in plan.stdout, plan.stdout[-3000:]
    assert _locked_node_ids(os.path.join(inv, LOCK)) == {"gpu01": 1, "gpu02": 2, "gpu03": 3}
    before = _listing(inv)
    again = _scaffold(installed, cwd, inv, "gpu01,gpu02=10.0.0.2,gpu03")
    assert _recap(again).groups() == ("0", "0"), again.stdout[-3000:]
    assert _listing(inv) == before


def test_new_cluster_never_overwrites_without_the_flag_and_keeps_node_ids_with_it(installed):
    cwd = os.path.join(installed.base, "scaffold-existing")
    inv = os.path.join(cwd, "prod")
    os.makedirs(inv)
    hosts_file = os.path.join(inv, "hosts.yml")
    with open(hosts_file, "w") as handle:   # the user's own, with node ids of its own
        handle.write("all:\n  children:\n    gpu_nodes:\n      hosts:\n        gpu02: {fabric_node_id: 5}\n")
    with open(hosts_file) as handle:
        mine = handle.read()
    result = _scaffold(installed, cwd, inv, "gpu01,gpu02")
    with open(hosts_file) as handle:
        assert handle.read() == mine
    assert "kept as they were (already there; -e new_cluster_force=true rewrites them, node ids kept): hosts.yml" \
        in result.stdout, result.stdout[-3000:]
    assert os.path.exists(os.path.join(inv, "group_vars", "all", "fabric.yml"))   # the missing ones are written
    # with the flag: rewritten, gpu02 keeps 5, gpu01 takes the next free id
    _scaffold(installed, cwd, inv, "gpu01,gpu02", "-e", "new_cluster_force=true")
    with open(hosts_file) as handle:
        nodes = yaml.safe_load(handle)["all"]["children"]["gpu_nodes"]["hosts"]
    assert {h: v["fabric_node_id"] for h, v in nodes.items()} == {"gpu01": 6, "gpu02": 5}


def test_new_cluster_refuses_bad_input_before_writing(installed):
    cwd = os.path.join(installed.base, "scaffold-bad")
    os.makedirs(cwd)
    inv = os.path.join(cwd, "prod")
    result = _scaffold(installed, cwd, inv, "gpu01,gpu01", expect=2)
    assert "new_cluster_hosts[1]: 'gpu01' is listed twice. Fix: list every GPU node once" in result.stdout, \
        result.stdout[-3000:]
    assert not os.path.exists(inv)


def test_the_installed_tree_is_read_only_for_the_jobs(installed, work):
    """The control: the old default (build/ beside the playbooks) cannot be written, as in an EE."""
    if os.geteuid() == 0 and not installed.read_only_mount:
        pytest.skip("root without a private mount namespace writes through chmod a-w")
    target = os.path.join(installed.tree, "build", "lab")
    result = installed.run("ansible-playbook", "-i", "inv", "ainet.fabric.plan", "-e", "rail_plan_output_dir=" + target,
                           cwd=work, expect=2)
    assert re.search(r"could not write the plan files: .*(Read-only file system|Permission denied)", result.stdout), \
        result.stdout[-3000:]


def test_without_an_inventory_directory_the_files_go_under_the_working_directory(installed):
    """A host list has no inventory directory: the working directory of ansible-playbook takes its place."""
    cwd = os.path.join(installed.base, "nodir")
    os.makedirs(cwd)
    with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml")) as handle:
        cluster = yaml.safe_load(handle)["fabric_cluster"]
    with open(os.path.join(cwd, "vars.yml"), "w") as handle:
        yaml.safe_dump({"fabric_cluster": dict(cluster, name="nodir"), "fabric_node_id": 1,
                        "rail_plan_node_group": "ungrouped"}, handle)
    installed.run("ansible-playbook", "-i", "gpu01,", "ainet.fabric.plan", "-e", "@vars.yml", cwd=cwd, expect=0)
    assert sorted(os.listdir(os.path.join(cwd, OUT, "nodir"))) == sorted(PLAN_FILES)
    assert os.path.exists(os.path.join(cwd, LOCK))


def test_ansible_doc_documents_every_plugin_and_role(installed):
    tree = installed.tree
    kinds = {
        "module": sorted(os.path.splitext(n)[0] for n in os.listdir(os.path.join(tree, "plugins", "modules"))
                         if n.endswith(".py") and n != "__init__.py"),
        # each filter has its documentation in a YAML file of its name (the .py files hold several)
        "filter": sorted(os.path.splitext(n)[0] for n in os.listdir(os.path.join(tree, "plugins", "filter"))
                         if n.endswith(".yml")),
        "role": sorted(os.listdir(os.path.join(tree, "roles"))),
    }
    assert kinds["module"] and kinds["filter"] and kinds["role"]
    for kind, names in kinds.items():
        fqcns = ["ainet.fabric." + n for n in names]
        listed = installed.run("ansible-doc", "-t", kind, "-l", "ainet.fabric", "--json", cwd=installed.base, expect=0)
        assert sorted(json.loads(listed.stdout)) == fqcns, (kind, listed.stdout)
        docs = installed.run("ansible-doc", "-t", kind, "--json", *fqcns, cwd=installed.base, expect=0)
        assert not docs.stderr.strip(), docs.stderr
        data = json.loads(docs.stdout)
        assert sorted(data) == fqcns
        for fqcn in fqcns:
            if kind == "role":
                assert data[fqcn]["entry_points"]["main"]["short_description"], fqcn
            else:
                assert data[fqcn]["doc"]["short_description"] and data[fqcn]["doc"].get("options") is not None, fqcn
        # the text form too (what a user reads), without a warning
        text = installed.run("ansible-doc", "-t", kind, *fqcns, cwd=installed.base, expect=0)
        assert not text.stderr.strip(), text.stderr


def _pins(path):
    with open(os.path.join(ROOT, path)) as handle:
        return set(re.findall(r"^\s*#?\s*(?:pip install ')?([A-Za-z0-9_.-]+==[0-9][^\s']*)", handle.read(), re.M))


def test_optional_python_packages_are_declared_with_the_pins_the_code_names():
    """requirements.txt names each optional package with the pin the feature's own message names."""
    from ansible_collections.ainet.fabric.plugins.module_utils.tor import nos_cumulus, nos_eos, nos_sonic
    from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_validate
    wanted = {nos_eos.PYAVD, nos_cumulus.NVUESCHEMA, nos_sonic.LIBYANG.split()[0], k8s_validate.OPENAPI_SCHEMA_VALIDATOR}
    with open(os.path.join(ROOT, "requirements.txt")) as handle:
        text = handle.read()
    # optional: every one commented out, each with the pip line that installs it
    assert not [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert set(re.findall(r"pip install '([^']+)'", text)) == wanted
    assert nos_sonic.LIBYANG.split()[0] in _pins("requirements-yang.txt")
    assert {nos_eos.PYAVD, nos_cumulus.NVUESCHEMA, k8s_validate.OPENAPI_SCHEMA_VALIDATOR} <= _pins("requirements-dev.txt")


def _bindep(text):
    """bindep lines as {name: set of selectors}."""
    found = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            match = re.match(r"^(\S+)\s*(?:\[([^\]]*)\])?", line)
            found[match.group(1)] = set((match.group(2) or "").split())
    return found


def test_execution_environment_context_carries_every_feature(tmp_path):
    """ansible-builder's context: the optional features' Python and system packages, the collection
    in the system-wide path, runnable as AWX's job user or an arbitrary uid."""
    from ansible_collections.ainet.fabric.plugins.module_utils.tor import nos_cumulus, nos_eos, nos_sonic
    from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_validate
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env["PATH"] = BIN + os.pathsep + os.environ.get("PATH", "")
    context = tmp_path / "ee"
    subprocess.run(["bash", os.path.join(ROOT, "tests", "ee", "context.sh"), str(context)], env=env, check=True,
                   capture_output=True, timeout=300)
    with open(os.path.join(ROOT, "galaxy.yml")) as handle:
        version = yaml.safe_load(handle)["version"]
    assert (context / "_build" / "collection" / ("ainet-fabric-%s.tar.gz" % version)).exists()
    pins = set((context / "_build" / "requirements.txt").read_text().split())
    assert pins == {nos_eos.PYAVD, nos_cumulus.NVUESCHEMA, nos_sonic.LIBYANG.split()[0],
                    k8s_validate.OPENAPI_SCHEMA_VALIDATOR}
    system = _bindep((context / "_build" / "bindep.txt").read_text())
    with open(os.path.join(ROOT, "bindep.txt")) as handle:
        declared = _bindep(handle.read())
    rpm = {name for name, sel in declared.items()
           if "platform:rpm" in sel or not any(s.startswith("platform:") for s in sel)}
    assert rpm <= set(system), sorted(rpm - set(system))
    # the library in the final image; what builds the binding in the build stage only
    assert "compile" not in system["libyang"]
    # kubectl (k8s_objects_kubeconfig) from the Kubernetes rpm repository, set up in the base stage that the
    # final stage's package install runs in
    assert system["kubectl"] == {"platform:rpm"}
    base = (context / "Containerfile").read_text().split("FROM base AS builder", 1)[0]
    assert "baseurl=https://pkgs.k8s.io/core:/stable:/" in base and "gpgcheck=1" in base
    assert all("compile" in system[name] for name in ("libyang-devel", "pcre2-devel", "python3-devel", "gcc"))
    containerfile = (context / "Containerfile").read_text()
    builder = containerfile.split("FROM base AS builder", 1)[1].split("FROM base AS final", 1)[0]
    final = containerfile.split("FROM base AS final", 1)[1]
    assert "--enablerepo=crb" in builder and "--enablerepo=crb" not in final
    assert "ansible-galaxy collection install --offline -p /usr/share/ansible/collections" in final
    assert "chmod -R a+rX,go-w /usr/share/ansible/collections" in final
    assert "chgrp 0 /runner" in final and "USER 1000" in final
