# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Files on the managed host: compare rendered files with disk, find our stale ones,
check that everything can be written before any change, write atomically, lock, and
keep the state file (the record of runtime objects this collection created).

Plain Python with no Ansible import, so it is tested on temporary directories.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import stat
import tempfile
import time

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

RECORD_FILE = "var/lib/ainet-fabric/rail_interfaces.json"


def read_text(path):
    """A file's text (UTF-8), or None when it is missing or unreadable."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def file_changes(root, files, owned, scan_dirs):
    """Compare ``files`` ({rel: (content, mode)}) with disk under ``root``.

    Returns (writes {abs: (content, mode)}, removals [abs], diffs).  A removal is any
    path under ``scan_dirs`` that ``owned(rel)`` claims and ``files`` does not have.
    """
    writes, removals, diffs = {}, [], []
    for rel, (content, mode) in sorted(files.items()):
        path = os.path.join(root, rel)
        before = read_text(path) if os.path.isfile(path) else None
        current_mode = "%04o" % (os.stat(path).st_mode & 0o7777) if before is not None else None
        if before != content or current_mode != mode:
            writes[path] = (content, mode)
            diffs.append({"before_header": path, "after_header": path, "before": before or "", "after": content})
    for rel_dir in scan_dirs:
        directory = os.path.join(root, rel_dir)
        if not os.path.isdir(directory):
            continue
        for name in sorted(os.listdir(directory)):
            rel = "%s/%s" % (rel_dir, name)
            path = os.path.join(root, rel)
            if owned(rel) and rel not in files and (os.path.isfile(path) or os.path.islink(path)):
                removals.append(path)
                diffs.append({"before_header": path, "after_header": "%s (removed)" % path,
                              "before": read_text(path) or "(link or unreadable)\n", "after": ""})
    return writes, removals, diffs


def unwritable(paths):
    """The paths that could not be created or replaced, with the reason (before any change)."""
    problems = []
    for path in paths:
        directory = os.path.dirname(path)
        probe = directory
        while not os.path.isdir(probe):
            parent = os.path.dirname(probe)
            if parent == probe:
                break
            probe = parent
        if not os.access(probe, os.W_OK | os.X_OK):
            reason = "read-only file system" if _read_only(probe) else "no write permission"
            problems.append("%s (%s: %s)" % (path, probe, reason))
    return problems


def _read_only(path):
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


# Directories the collection creates: system configuration directories (/etc/default/grub.d, /etc/systemd/...)
# and the state directory are created with this mode whatever the caller's umask (a module run with umask 000 would
# otherwise leave them writable by every local user, who could then replace what the next run trusts or sources).
DIR_MODE = 0o755


def make_dirs(directory, mode=DIR_MODE):
    """Create ``directory`` and its missing parents, each with exactly ``mode`` (``mkdir`` then ``chmod``: the
    umask never applies); existing directories are left as they are."""
    missing = []
    probe = os.path.abspath(directory)
    while not os.path.isdir(probe):
        missing.append(probe)
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            if not os.path.isdir(path):
                raise
            continue
        os.chmod(path, mode)


def check_state_dir(directory):
    """Refuse (:class:`UnsafeDirectory`, one line) to keep state in ``directory`` when it is a link or not a
    directory, belongs to another user, or its group or others may write to it: another user could replace the
    record that the next run trusts (the addresses and routes it removes as its own)."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise UnsafeDirectory("%s is not a directory of its own (%s)" % (directory, exc.strerror)) from None
    try:
        _check_owner_only(fd, directory, "0755")
    finally:
        os.close(fd)


def _check_owner_only(fd, path, mode_text):
    info = os.fstat(fd)
    problem = None
    if info.st_uid != os.geteuid():
        problem = "belongs to uid %d, not %d" % (info.st_uid, os.geteuid())
    elif info.st_mode & 0o022:
        who = "others" if info.st_mode & 0o002 else "its group"
        problem = "is writable by %s (mode %04o)" % (who, info.st_mode & 0o7777)
    if problem:
        raise UnsafeDirectory("%s %s; only its owner may write there: fix its owner and mode (or remove it, the next "
                              "run creates it %s)" % (path, problem, mode_text))


def write_atomic(path, content, mode, state=False):
    """Write ``content`` (UTF-8) to ``path`` with ``mode`` ("0644") through a temporary file (created 0600) and a
    rename. Missing parent directories are created 0755 (:func:`make_dirs`). ``state``: the file is a record the
    next run trusts, so its directory must be writable by its owner only (:func:`check_state_dir`)."""
    directory = os.path.dirname(path) or "."
    make_dirs(directory)
    if state:
        check_state_dir(directory)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".ainet-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
        os.chmod(tmp, int(mode, 8))
        os.rename(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def remove(paths):
    for path in paths:
        try:
            os.unlink(path)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise


def read_record(root):
    """The state file: {"version": 1, "fabrics": {name: record}}; empty when absent or unreadable."""
    text = read_text(os.path.join(root, RECORD_FILE))
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        data = {}
    if not isinstance(data, dict) or not isinstance(data.get("fabrics"), dict):
        return {"version": 1, "fabrics": {}}
    return data


def write_record(root, fabrics):
    write_atomic(os.path.join(root, RECORD_FILE),
                 json.dumps({"version": 1, "fabrics": fabrics}, indent=1, sort_keys=True) + "\n", "0644", state=True)


# Host-wide runtime state (locks) lives in a directory only its owner can write: a name in a world-writable
# directory (/run/lock, /tmp) can be created or held by any local user first, who then blocks or redirects the run.
RUN_DIR = "/run/ainet-fabric"


class UnsafeDirectory(FabricError):
    """The private runtime directory exists but another user could change what is in it."""


def run_dir(path=None):
    """The private runtime directory: ``path``, else :data:`RUN_DIR` as root, as another user
    ``$XDG_RUNTIME_DIR/ainet-fabric``."""
    if path is not None:
        return path
    if os.geteuid() == 0:
        return RUN_DIR
    if os.environ.get("XDG_RUNTIME_DIR"):
        return os.path.join(os.environ["XDG_RUNTIME_DIR"], "ainet-fabric")
    raise UnsafeDirectory("no private runtime directory for the host lock: not root and XDG_RUNTIME_DIR is not set")


def private_dir(path):
    """A file descriptor of the private runtime directory ``path`` (:func:`run_dir`), created mode 0700. Refused (:class:`UnsafeDirectory`, one line) when it is
    a symbolic link or not a directory, belongs to another user, or its group or others may write to it - checked on
    the opened directory (``O_NOFOLLOW``, ``fstat``), so a swap after the check changes nothing."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise UnsafeDirectory("%s is not a directory of its own (%s)" % (path, exc.strerror)) from None
    try:
        _check_owner_only(fd, path, "0700")
    except UnsafeDirectory:
        os.close(fd)
        raise
    return fd


def open_private(dir_fd, name, shown, mode=0o600):
    """Open for reading and writing (create, ``mode``) the regular file ``name`` in the directory ``dir_fd``, never
    through a link (``shown``: its path, for the error)."""
    try:
        fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        raise UnsafeDirectory("%s cannot be opened as a regular file (%s)" % (shown, exc.strerror)) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
        os.close(fd)
        raise UnsafeDirectory("%s is not a regular file of uid %d" % (shown, os.geteuid()))
    return fd


class Lock(object):
    """An exclusive lock on the host (flock), so that two runs never interleave: a file in the private runtime
    directory (:func:`run_dir`, :func:`private_dir`; ``directory`` for tests), one per configuration root, so that
    image builds and the namespace lab lock per tree."""

    def __init__(self, root, timeout, directory=None):
        real = os.path.realpath(root)
        suffix = "" if real == "/" else "-" + hashlib.sha1(real.encode()).hexdigest()[:12]
        self.directory = run_dir(directory)
        self.name = "rail_interfaces%s.lock" % suffix
        self.path = os.path.join(self.directory, self.name)
        self.timeout = timeout
        self.handle = None

    def __enter__(self):
        dir_fd = private_dir(self.directory)
        try:
            fd = open_private(dir_fd, self.name, self.path)
        finally:
            os.close(dir_fd)
        self.handle = os.fdopen(fd, "r+")
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() >= deadline:
                    self.handle.close()
                    raise TimeoutError("another ainet.fabric run holds %s (waited %d s)" % (self.path, self.timeout))
                time.sleep(0.2)

    def __exit__(self, *exc):
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()
        return False
