# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every benchmark script here starts with: this checkout (or another one) importable as
ansible_collections.ainet.fabric, through build/.collections, as conftest.py makes it for pytest."""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def importable(repo=ROOT):
    """Link ``repo`` as build/.collections/ansible_collections/ainet/fabric and put build/.collections first on
    sys.path; returns ``repo``."""
    link = os.path.join(repo, "build", ".collections", "ansible_collections", "ainet", "fabric")
    if not os.path.islink(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        try:
            os.symlink(os.path.abspath(repo), link)
        except FileExistsError:  # another process made it first
            pass
    sys.path.insert(0, os.path.join(repo, "build", ".collections"))
    return repo
