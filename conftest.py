"""Make the repository importable as ansible_collections.ainet.fabric for pytest."""

import os
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
LINK_PARENT = os.path.join(ROOT, "build", ".collections", "ansible_collections", "ainet")
LINK = os.path.join(LINK_PARENT, "fabric")

if not os.path.islink(LINK):
    os.makedirs(LINK_PARENT, exist_ok=True)
    try:
        os.symlink(ROOT, LINK)
    except FileExistsError:  # another pytest worker made it first
        pass
sys.path.insert(0, os.path.join(ROOT, "build", ".collections"))
