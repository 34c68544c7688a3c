# -*- coding: utf-8 -*-
"""A bytecode cache for Python modules imported from zip archives, in the VM tier's guests (tests/vm/image.sh).

Ansible runs every module on a node as an AnsiballZ payload: a zip of the module and its module_utils, which Python
imports with ``zipimport``. zipimport never writes bytecode, so every task compiles ``ansible.module_utils.basic``
and the rest from source again: under TCG that is about 2 s of the 3-4 s a module takes on a VM (measured on
``ansible.builtin.stat``: ``python3 -X importtime``, 2.8 s in ``ansible.module_utils.basic``; 0.4 s from bytecode).
For files on disk CPython keeps bytecode in ``__pycache__``; this does the same for zip members, keyed as PEP 552's
checked hash-based pycs are: by the source itself (SHA-256 of its bytes, with the interpreter's bytecode magic number
and optimization level), never by a path or a time, so a changed source is always compiled afresh. The code object is
the one ``compile`` makes (the same call zipimport makes, on a miss); only its file name is set to the importing
archive's path (``_imp._fix_co_filename``, as importlib does for pycs). Any failure to read or write the cache falls
back to compiling; the cache directory is root's alone (mode 0700), and other users compile as before.

The image installs it at every interpreter start: ``ainet-vm-pyc.pth`` in the local site-packages directory holds
``import ainet_vm_pyc; ainet_vm_pyc.install()``.
"""

import zipimport

CACHE = "/var/cache/ainet-vm-pyc"


def _key(source):
    """The cache file name of ``source`` (the bytes zipimport read) for this interpreter."""
    import sys
    import _frozen_importlib_external
    import _sha256

    digest = _sha256.sha256(_frozen_importlib_external.MAGIC_NUMBER)
    digest.update(b"%d\0" % sys.flags.optimize)
    digest.update(source)
    return digest.hexdigest()


def cached_compile(compile_source, directory=None):
    """Wrap zipimport's ``_compile_source(pathname, source)`` with the cache in ``directory`` (default CACHE)."""

    def _compile_source(pathname, source):
        import os

        where = directory or CACHE
        try:
            path = os.path.join(where, _key(source))
        except Exception:  # pylint: disable=broad-except  # no cache at all is always correct
            return compile_source(pathname, source)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            data = None
        if data is not None:
            try:
                import _imp
                import marshal

                code = marshal.loads(data)
                if type(code).__name__ == "code":
                    _imp._fix_co_filename(code, pathname)  # pylint: disable=protected-access
                    return code
            except Exception:  # pylint: disable=broad-except  # a damaged entry: compile and write it again
                pass
        code = compile_source(pathname, source)
        try:
            import marshal

            os.makedirs(where, mode=0o700, exist_ok=True)
            tmp = "%s.%d.tmp" % (path, os.getpid())
            with open(tmp, "wb") as handle:
                handle.write(marshal.dumps(code))
            os.replace(tmp, path)
        except Exception:  # pylint: disable=broad-except  # read-only or not ours: the import goes on uncached
            pass
        return code

    _compile_source.ainet_vm_pyc = True
    return _compile_source


def install(directory=None):
    """Put the cache in front of zipimport's compiler, once."""
    if not getattr(zipimport._compile_source, "ainet_vm_pyc", False):  # pylint: disable=protected-access
        zipimport._compile_source = cached_compile(  # pylint: disable=protected-access
            zipimport._compile_source, directory)  # pylint: disable=protected-access
