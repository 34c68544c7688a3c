# -*- coding: utf-8 -*-
"""The ansible-core releases the collection supports at both ends, each in a venv of its own: 2.19 (the CI venv's
version) and 2.16 (``meta/runtime.yml``'s minimum). A venv holds nothing but that ansible-core, is built from the
system's Python, readable by any user, and cached under ``build/guide-venvs/`` (``AINET_GUIDE_VENVS``), one build
at a time (pytest-xdist's workers share it)."""

from __future__ import annotations

import fcntl
import importlib.metadata
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORES = {"2.19": "ansible-core==%s" % importlib.metadata.version("ansible-core"), "2.16": "ansible-core==2.16.*"}
VENVS = os.environ.get("AINET_GUIDE_VENVS", os.path.join(ROOT, "build", "guide-venvs"))


def core_venv(core):
    """The venv of ansible-core ``core`` (a key of :data:`CORES`), built once; skips the test where it cannot be
    built (no system python3, PyPI unreachable)."""
    path = os.path.join(VENVS, "core-" + core)
    ready = os.path.join(path, ".ready")
    if os.path.exists(ready):
        return path
    os.makedirs(VENVS, exist_ok=True)
    with open(os.path.join(VENVS, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(ready):  # built by another worker meanwhile
            return path
        python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
        if not python:
            pytest.skip("no system python3 to build the venv of ansible-core %s from" % core)
        shutil.rmtree(path, ignore_errors=True)
        subprocess.run([python, "-m", "venv", path], check=True, capture_output=True)
        pip = subprocess.run([os.path.join(path, "bin", "pip"), "install", "--quiet", "--disable-pip-version-check",
                              CORES[core]], capture_output=True, text=True, check=False, timeout=600)
        if pip.returncode:
            shutil.rmtree(path, ignore_errors=True)
            pytest.skip("cannot install %s (PyPI unreachable?): %s" % (CORES[core], pip.stderr.strip()[-300:]))
        subprocess.run(["chmod", "-R", "a+rX", path], check=True)
        open(ready, "w").close()
    return path
