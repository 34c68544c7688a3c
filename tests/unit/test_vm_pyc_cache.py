# -*- coding: utf-8 -*-
"""The VM tier's bytecode cache for modules imported from zip archives (tests/vm/ainet_vm_pyc.py, installed in the
guests by tests/vm/image.sh): each case imports a module from a zip in a fresh interpreter with the cache installed
(a directory of the test's own, never the guests' path), then judges what the import returned."""

from __future__ import annotations

import json
import marshal
import os
import shutil
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VM = os.path.join(ROOT, "tests", "vm")

IMPORT = """
import json, sys
sys.path.insert(0, {vm!r})
import ainet_vm_pyc
if {install!r}:
    ainet_vm_pyc.install({cache!r})
sys.path.insert(0, {archive!r})
import probe
print(json.dumps({{"value": probe.VALUE, "file": probe.__file__, "co_filename": probe.where.__code__.co_filename}}))
"""


def archive(path, value):
    """A zip holding probe.py, whose VALUE is ``value``; ``where`` is a function (its code object is nested)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with zipfile.ZipFile(path, "w") as handle:
        handle.writestr("probe.py", "VALUE = %r\n\n\ndef where():\n    return VALUE\n" % value)
    return path


def imported(path, cache, install=True):
    run = subprocess.run([sys.executable, "-c", IMPORT.format(vm=VM, install=install, cache=str(cache),
                                                              archive=str(path))],
                         capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


def entries(cache):
    return sorted(os.listdir(cache)) if os.path.isdir(cache) else []


def planted(cache, value):
    """Overwrite the one cache entry with code compiled from another source (VALUE = ``value``)."""
    (name,) = entries(cache)
    code = compile("VALUE = %r\n\n\ndef where():\n    return VALUE\n" % value, "elsewhere.py", "exec")
    with open(os.path.join(cache, name), "wb") as handle:
        handle.write(marshal.dumps(code))


def test_the_second_import_reads_the_code_from_the_cache(tmp_path):
    cache, path = tmp_path / "cache", archive(str(tmp_path / "a" / "payload.zip"), "source")
    assert imported(path, cache)["value"] == "source"
    assert len(entries(cache)) == 1
    planted(cache, "cache")
    # what the cache holds is what the import runs: the entry was read, not the source compiled
    assert imported(path, cache)["value"] == "cache"


def test_control_without_the_cache_installed_the_entry_is_not_read(tmp_path):
    cache, path = tmp_path / "cache", archive(str(tmp_path / "a" / "payload.zip"), "source")
    imported(path, cache)
    planted(cache, "cache")
    assert imported(path, cache, install=False)["value"] == "source"


def test_a_changed_source_is_compiled_not_taken_from_the_cache(tmp_path):
    cache = tmp_path / "cache"
    imported(archive(str(tmp_path / "a" / "payload.zip"), "old"), cache)
    assert imported(archive(str(tmp_path / "a" / "payload.zip"), "new"), cache)["value"] == "new"
    assert len(entries(cache)) == 2


def test_cached_code_names_the_archive_it_was_imported_from(tmp_path):
    cache = tmp_path / "cache"
    first = imported(archive(str(tmp_path / "a" / "payload.zip"), "same"), cache)
    second_path = archive(str(tmp_path / "b" / "payload.zip"), "same")
    second = imported(second_path, cache)
    assert len(entries(cache)) == 1  # the same source: one entry, read the second time
    assert first["co_filename"] == os.path.join(str(tmp_path / "a" / "payload.zip"), "probe.py")
    assert second["file"] == second["co_filename"] == os.path.join(second_path, "probe.py")


def test_a_damaged_entry_is_compiled_again_and_replaced(tmp_path):
    cache, path = tmp_path / "cache", archive(str(tmp_path / "a" / "payload.zip"), "source")
    imported(path, cache)
    (name,) = entries(cache)
    with open(os.path.join(cache, name), "wb") as handle:
        handle.write(b"\xe3 not marshal data")
    assert imported(path, cache)["value"] == "source"
    with open(os.path.join(cache, name), "rb") as handle:
        assert type(marshal.loads(handle.read())).__name__ == "code"


def test_a_cache_that_cannot_be_written_leaves_the_import_uncached(tmp_path):
    cache, path = tmp_path / "cache", archive(str(tmp_path / "a" / "payload.zip"), "source")
    cache.write_text("a file where the directory would be\n")
    assert imported(path, cache)["value"] == "source"
    assert cache.read_text() == "a file where the directory would be\n"


def test_the_pth_line_installs_the_cache_at_interpreter_start(tmp_path):
    """The file image.sh puts in the guests' site-packages, read by site as the guests' python3 reads it."""
    site = tmp_path / "site"
    site.mkdir()
    for name in ("ainet-vm-pyc.pth", "ainet_vm_pyc.py"):
        shutil.copy(os.path.join(VM, name), str(site / name))
    check = "import site, sys, zipimport; %ssys.exit(0 if getattr(zipimport._compile_source, 'ainet_vm_pyc', False) else 3)"
    # no zip is imported here: the default cache directory (the guests') is never written on this machine
    assert subprocess.run([sys.executable, "-c", check % ("site.addsitedir(%r); " % str(site))], check=False).returncode == 0
    assert subprocess.run([sys.executable, "-c", check % ""], check=False).returncode == 3
