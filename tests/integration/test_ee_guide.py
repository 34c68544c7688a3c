# -*- coding: utf-8 -*-
"""docs/execution-environment.md's snippets for a user's own execution environment, as ansible-builder reads them:
the libyang and kubectl blocks merged into a minimal EE definition (version 3) that installs the collection from
the tarball, then ``ansible-builder create`` (the build context, no image: quay.io is not reachable here). The
context must carry what the guide promises (kubectl from the Kubernetes repository set up in the base stage, which
the final stage derives from; the libyang build packages in the build stage only), and the snippets must be what
this repository's own EE (execution-environment.yml, built by tests/ee/build.sh) uses, so the two cannot drift.
What the collection itself hands ansible-builder (meta/ee-requirements.txt, bindep.txt) is test_tarball.py's
introspect test; the repository's EE context is test_installed_collection.py's."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
GUIDE = os.path.join(ROOT, "docs", "execution-environment.md")


def guide_snippets():
    """The YAML blocks of the guide, by the section they are in."""
    with open(GUIDE, encoding="utf-8") as handle:
        text = handle.read()
    found = {}
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        title = section.splitlines()[0]
        blocks = re.findall(r"^```yaml\n(.*?)^```", section, re.M | re.S)
        if blocks:
            found[title] = [yaml.safe_load(block) for block in blocks]
    return found


def merged(snippets):
    """The snippets as one EE definition's dependencies and build steps (lists joined in order)."""
    out = {"dependencies": {}, "additional_build_steps": {}}
    for snippet in snippets:
        for top in out:
            for key, value in (snippet.get(top) or {}).items():
                out[top].setdefault(key, []).extend(value)
    return out


def test_the_guide_has_the_libyang_and_kubectl_snippets():
    sections = guide_snippets()
    assert [title for title in sections if "libyang" in title or "kubectl" in title] == [
        "The SONiC YANG check (libyang)", "kubectl (applying the Kubernetes objects)"], list(sections)


def test_the_guides_snippets_are_what_this_repositorys_ee_uses():
    with open(os.path.join(ROOT, "execution-environment.yml")) as handle:
        ours = yaml.safe_load(handle)
    for snippets in guide_snippets().values():
        for top, part in merged(snippets).items():
            for key, lines in part.items():
                assert [line for line in lines if line not in ours[top][key]] == [], (top, key)


def test_ansible_builder_creates_the_users_ee_from_the_guide(tmp_path):
    """The build context of an EE made of the guide's snippets: kubectl and libyang in bindep, the Kubernetes
    repository before the package install of the final stage, the CRB repository in the build stage only."""
    parts = merged([s for snippets in guide_snippets().values() for s in snippets])
    tarball = tmp_path / "ainet-fabric.tar.gz"
    tarball.write_bytes(b"")  # ansible-builder create only copies the requirements; the build would install it
    definition = {"version": 3, "images": {"base_image": {"name": "quay.io/centos/centos:stream10"}},
                  "dependencies": dict(parts["dependencies"], python_interpreter={
                      "package_system": "python3", "python_path": "/usr/bin/python3"},
                      ansible_core={"package_pip": "ansible-core"}, ansible_runner={"package_pip": "ansible-runner"},
                      galaxy={"collections": [{"name": str(tarball), "type": "file"}]}),
                  "additional_build_steps": parts["additional_build_steps"]}
    path = tmp_path / "execution-environment.yml"
    path.write_text(yaml.safe_dump(definition, sort_keys=False))
    context = tmp_path / "context"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    subprocess.run([os.path.join(BIN, "ansible-builder"), "create", "--file", str(path), "--context", str(context),
                    "--output-filename", "Containerfile"], check=True, capture_output=True, env=env, cwd=str(tmp_path),
                   timeout=120)
    bindep = (context / "_build" / "bindep.txt").read_text().splitlines()
    assert "kubectl [platform:rpm]" in bindep and "libyang [platform:rpm]" in bindep, bindep
    assert "libyang-devel [platform:rpm compile]" in bindep, bindep
    assert "libyang==2.7.1" in (context / "_build" / "requirements.txt").read_text().split()
    containerfile = (context / "Containerfile").read_text()
    base, rest = containerfile.split("FROM base AS builder", 1)
    builder, final = rest.split("FROM base AS final", 1)
    assert "baseurl=https://pkgs.k8s.io/core:/stable:/" in base and "gpgcheck=1" in base
    assert "/etc/yum.repos.d/kubernetes.repo" not in builder + final  # set up once, in the stage both derive from
    assert "--enablerepo=crb" in builder and "--enablerepo=crb" not in final
    assert "requirements.yml" in containerfile  # the collection, from the galaxy requirements
