# -*- coding: utf-8 -*-
"""doca_ofed: what a repository URL may hold before the role writes it into an apt or dnf source.

The judge is apt itself: the role's own deb822 template (roles/doca_ofed/tasks/main.yml, rendered with Jinja2 as
Ansible's ``copy`` ``content`` is) is read back by ``apt-get indextargets`` with this test's own ``Dir::Etc`` and
``Dir::State`` (nothing of the machine's apt is read or written). An accepted URL gives exactly one index target whose
``Repo-URI`` is that URL; the controls show what apt makes of the refused ones written unchecked. No dnf runs here:
its ``baseurl=`` line is covered by the same refusal (line breaks, ``$``), not by dnf reading it back.

The threat model this file proves part of: docs/security.md (output grammars: apt and dnf sources).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import jinja2
import pytest
import yaml

from ansible_collections.ainet.fabric.plugins.module_utils.host import doca_ofed_state as lib

ROLE_TASKS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "doca_ofed", "tasks", "main.yml")
APT = shutil.which("apt-get")
needs_apt = pytest.mark.skipif(not APT, reason="apt-get (the judge of the deb822 source) is not installed")

GOOD = ["https://linux.mellanox.com/public/repo/doca/3.2.1/ubuntu24.04/x86_64/",
        "http://mirror.example:8080/doca/3.2.1/ubuntu24.04/x86_64/",
        "https://mirror.example/a;b&c=d+e~f(g)'h'/%20x/",
        "https://[fd00::1]/doca/",
        "file:///srv/mirror/doca/3.2.1/ubuntu24.04/x86_64/"]
BAD = ["https://mirror.example/a b/", "https://mirror.example/x/\nEnabled: no", "https://mirror.example/x/\nTrusted: yes",
       "https://mirror.example/$(ARCH)/", "https://mirror.example/$releasever/", "https://mirror.example/x/#frag",
       "https://mirror.example/\u00e9/", "https://mirror.example/x\t/", "ftp://mirror.example/", "file://relative/x",
       "//mirror.example/", "", None, "https:///x", "https://mirror.example/x/\r"]


def source_text(url):
    """The role's deb822 source for ``url``, from its own template."""
    def walk(tasks):
        for task in tasks or []:
            yield task
            for key in ("block", "rescue", "always"):
                yield from walk(task.get(key))

    task = next(t for t in walk(yaml.safe_load(open(ROLE_TASKS)))
                if t.get("name") == "Configure the repository (Debian, Ubuntu)")
    content = task["ansible.builtin.copy"]["content"]
    return jinja2.Template(content, keep_trailing_newline=True).render(
        doca_ofed_version="3.2.1", __doca_ofed_plan={"repository": {"url": url}},
        __doca_ofed_key_path={"apt": "/etc/apt/keyrings/ainet-doca-ofed.asc"})


def apt_targets(text, tmp_path):
    """``[(Repo-URI, Sourcesentry)]`` of the Packages index targets apt reads from the source ``text``."""
    sources = tmp_path / "ainet.sources"
    sources.write_text(text)
    (tmp_path / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    done = subprocess.run([APT, "indextargets", "--no-release-info", "-o", "Dir::Etc::sourcelist=%s" % sources,
                           "-o", "Dir::Etc::sourceparts=-", "-o", "Dir::State::lists=%s" % (tmp_path / "lists"),
                           "-o", "Dir::Cache=%s" % tmp_path, "-o", "Debug::NoLocking=1", "ShortDesc: Packages"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return None
    out = []
    for block in done.stdout.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if fields:
            out.append((fields.get("Repo-URI"), fields.get("Sourcesentry")))
    return out


@needs_apt
@pytest.mark.parametrize("url", GOOD)
def test_an_accepted_url_is_one_apt_source_with_that_uri(url, tmp_path):
    assert lib.check_repository_url(url, "doca_ofed_mirror") == url
    targets = apt_targets(source_text(url), tmp_path)
    # apt prints a file URL with an empty authority as file:/path (apt-pkg's URI class)
    assert targets == [(url.replace("file:///", "file:/"), "%s:1" % (tmp_path / "ainet.sources"))]


@pytest.mark.parametrize("url", BAD)
def test_a_url_that_is_not_one_source_uri_is_refused_in_one_line(url):
    with pytest.raises(lib.DocaError) as info:
        lib.check_repository_url(url, "doca_ofed_mirror")
    message = str(info.value)
    assert message.startswith("doca_ofed_mirror: %r " % (url,)) and "\n" not in message


@needs_apt
@pytest.mark.parametrize("url, seen", [
    ("https://mirror.example/a/ https://evil.example/", ["https://mirror.example/a/", "https://evil.example/"]),
    ("https://mirror.example/x/\nEnabled: no", []),
    ("https://mirror.example/$(ARCH)/", "substituted"),
])
def test_control_what_apt_makes_of_them_unchecked(url, seen, tmp_path):
    # the harm the refusal prevents, shown by apt: a second source, a disabled one, a substituted path
    targets = apt_targets(source_text(url), tmp_path)
    if seen == "substituted":
        assert len(targets) == 1 and "$(ARCH)" not in targets[0][0]
    else:
        assert [uri for uri, _where in targets] == seen
    with pytest.raises(lib.DocaError):
        lib.check_repository_url(url, "doca_ofed_mirror")


def test_the_repository_url_built_from_a_mirror_is_checked():
    repo = lib.repository("3.2.1", "ubuntu", "24.04", "x86_64", "https://mirror.example/doca")
    assert lib.check_repository_url(repo["url"], "doca_ofed_mirror") == repo["url"]
    repo = lib.repository("3.2.1", "ubuntu", "24.04", "x86_64", "https://mirror.example/doca\nEnabled: no")
    with pytest.raises(lib.DocaError):
        lib.check_repository_url(repo["url"], "doca_ofed_mirror")


@pytest.mark.parametrize("version", ["3.2.1\n", " 3.2.1", "3.2.1\nEnabled: no"])
def test_a_version_with_whitespace_is_refused_not_stripped(version):
    # the role writes doca_ofed_version into the source's comment and the dnf repository's name as given
    with pytest.raises(lib.DocaError) as info:
        lib.check_version(version)
    assert "doca_ofed_version" in str(info.value)
    assert lib.check_version("3.2.1") == "3.2.1"
