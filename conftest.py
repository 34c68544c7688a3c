"""Make the repository importable as ansible_collections.ainet.fabric for pytest."""

import os
import sys
import weakref

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


def _drop_dead_module_proxies():
    """Remove sys.modules entries that are weak proxies to modules already collected.

    jinja2's ModuleLoader registers its package in sys.modules as a weakref.proxy. Once
    the loader is gone, reading any attribute of that entry raises ReferenceError, and
    Hypothesis reads ``__file__`` of every module in sys.modules while it draws
    (seen once: ReferenceError in a property test on a pytest worker that had run
    other files before).
    """
    for name, module in sys.modules.copy().items():  # one atomic copy: threads import while tests run
        if isinstance(module, weakref.ProxyTypes):
            try:
                module.__name__  # pylint: disable=pointless-statement
            except ReferenceError:
                sys.modules.pop(name, None)


def pytest_runtest_setup(item):  # pylint: disable=unused-argument
    """Before each test: no dead module proxies left in sys.modules."""
    _drop_dead_module_proxies()
