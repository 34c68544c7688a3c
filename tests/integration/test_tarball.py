# -*- coding: utf-8 -*-
"""What the built tarball carries: what runs from an install and what ``ansible-test units`` needs in an
installed tree, nothing that only runs in a checkout; and what it tells ansible-builder to put in an
execution environment (meta/execution-environment.yml, read back by ``ansible-builder introspect``)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import tarfile

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
# Only runnable from a checkout: the labs, VMs, containers, benchmarks, the integration tests that
# build and install the tarball, the molecule scenarios, the sanity/EE build scripts, the Mermaid judge's npm
# packages (tests/js-deps.sh; the unit tests that use it skip without it).
CHECKOUT_ONLY = ("tests/integration/", "tests/lab/", "tests/vm/", "tests/perf/", "tests/ee/", "tests/sanity/",
                 "tests/output/", "tests/js/", "molecule/", "changelogs/fragments/")
# ... except what unit tests read or import from outside tests/unit: the VM tier's recorded outputs (the parsers on
# real outputs) and its guests' bytecode cache (tests/unit/test_vm_pyc_cache.py)
UNIT_DATA = ("tests/vm/recorded/", "tests/vm/ainet_vm_pyc.py", "tests/vm/ainet-vm-pyc.pth")
# Recorders of the unit tests' data: they drive real tools on a lab, not the tests.
RECORDERS = ("tests/unit/plugins/modules/fixtures/record.py",)


def _env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    return env


@pytest.fixture(scope="module")
def tarball(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--force", "--output-path", str(out),
                    ROOT], check=True, capture_output=True, env=_env(), cwd=str(out))
    path = glob.glob(str(out / "ainet-fabric-*.tar.gz"))[0]
    with tarfile.open(path) as archive:
        files = {m.name for m in archive.getmembers() if m.isfile()}
    return path, files


def _checkout(top):
    found = set()
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
        dirnames[:] = [d for d in dirnames if d not in ("__pycache__", ".pytest_cache", ".hypothesis")]
        found.update(os.path.relpath(os.path.join(dirpath, n), ROOT) for n in filenames if not n.endswith(".pyc"))
    return found


def test_the_tarball_carries_nothing_that_runs_only_from_a_checkout(tarball):
    _path, files = tarball
    wrong = sorted(f for f in files if (f.startswith(CHECKOUT_ONLY) and not f.startswith(UNIT_DATA)) or f in RECORDERS
                   or (f.startswith("tests/") and f.endswith(".sh")))
    assert not wrong, "extend build_ignore in galaxy.yml: %s" % wrong[:20]


def test_the_tarball_carries_what_ansible_test_units_runs(tarball):
    """Every unit test and every file of tests/unit (its recorded data), and what a unit test reads or imports
    from outside tests/unit (the VM tier's recorded outputs; tests/schema/regen.py, test_model_schema.py)."""
    _path, files = tarball
    wanted = {f for f in _checkout("tests/unit") if f not in RECORDERS and not f.endswith(".sh")}
    wanted |= {"tests/schema/regen.py", "tests/vm/ainet_vm_pyc.py", "tests/vm/ainet-vm-pyc.pth"} | _checkout("tests/vm/recorded")
    assert any(f.endswith("test_scaffold.py") for f in wanted)
    missing = sorted(wanted - files)
    assert not missing, "build_ignore drops what the unit tests need: %s" % missing[:20]


def test_the_tarball_carries_the_collection_and_its_metadata(tarball):
    _path, files = tarball
    for required in ("MANIFEST.json", "README.md", "LICENSE", "CHANGELOG.rst", "changelogs/changelog.yaml",
                     "meta/runtime.yml", "meta/execution-environment.yml", "bindep.txt", "requirements.txt",
                     "playbooks/new_cluster.yml", "roles/new_cluster/templates/hosts.yml.j2"):
        assert required in files, required
    with open(os.path.join(ROOT, "meta", "execution-environment.yml")) as handle:
        deps = yaml.safe_load(handle)["dependencies"]
    for path in deps.values():
        assert path in files, "meta/execution-environment.yml names %s, which the tarball lacks" % path
    # every role, playbook and plugin of the checkout
    for top in ("roles", "playbooks", "plugins"):
        missing = sorted(_checkout(top) - files)
        assert not missing, missing[:20]


def test_ansible_builder_reads_the_optional_packages_from_the_installed_collection(tarball, tmp_path):
    """An EE built with this collection gets every optional Python package that installs from a wheel, with
    the pin the feature's own message names; libyang (a source build) stays out, kubectl is no package."""
    from ansible_collections.ainet.fabric.plugins.module_utils.tor import nos_cumulus, nos_eos
    from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_validate
    path, _files = tarball
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--offline", "-p", str(tmp_path),
                    path], check=True, capture_output=True, env=_env(), cwd=str(tmp_path))
    result = subprocess.run([os.path.join(BIN, "ansible-builder"), "introspect", str(tmp_path)], check=True,
                            capture_output=True, text=True, env=_env())
    data = yaml.safe_load(result.stdout.split("\n", 1)[1])
    python = {line.split("#")[0].strip() for line in data["python"]}
    assert python == {nos_eos.PYAVD, nos_cumulus.NVUESCHEMA, k8s_validate.OPENAPI_SCHEMA_VALIDATOR}, python
    system = {line.split("#")[0].strip() for line in data["system"]}
    assert {"iproute [platform:rpm]", "openssh-clients [platform:rpm]"} <= system, system
    # the SONiC YANG build packages only in their profile
    assert "libyang-devel [platform:rpm yang]" in system and "libyang-devel [platform:rpm]" not in system
