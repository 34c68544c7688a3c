# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Linux interface names: the kernel's rule, and the narrower rule for a name the host roles write into paths,
systemd units, networkd/NetworkManager/ifupdown files and shell lines.

* :func:`kernel_ifname_ok` - ``dev_valid_name`` (net/core/dev.c): 1 to 15 bytes (``IFNAMSIZ`` - 1), not ``.`` or
  ``..``, no ``/``, ``:`` or kernel ``isspace`` byte (lib/ctype.c: 9-13, 32 and 160 - 0xA0 is also the second byte
  of UTF-8 letters such as U+00E0), and no ``%`` (``dev_get_valid_name`` makes ``swp%d`` a template the kernel
  numbers). What the kernel would create; a switch port may be any of these.
* :func:`host_ifname_problem` - what the host roles accept: the kernel's rule, and only letters, digits, ``_``,
  ``.`` and ``-``, starting with a letter or digit (the rail planner's rule, ``rail_plan.IFNAME_RE``). Every other
  character the kernel allows is syntax somewhere a host role writes the name: ``*`` ``?`` ``[`` are globs in
  networkd's ``[Match] Name=``, ``%`` a systemd specifier, ``$`` ``;`` quotes a shell's, a space a list separator.
* :func:`rdma_device_problem` - what the collection accepts as an RDMA device name read from a node (before it
  reaches an argv, a file or a report): 1 to 63 bytes (``IB_DEVICE_NAME_MAX`` 64 with its NUL,
  include/rdma/ib_verbs.h), letters, digits, ``_``, ``.`` and ``-``, starting with a letter or digit: every name the
  kernel's drivers (``mlx5_%d``, ``irdma%d``, ``rxe%d``) and rdma-core's ``rdma_rename`` (``ibp..s..``,
  ``rocep..s..f..``) give. The kernel refuses little in a rename (``RDMA_NLDEV_CMD_SET``), so a device renamed
  ``mlx5_0|sshd|`` is reported by the node as it is: such a name is refused here, never used.
"""

from __future__ import annotations

import re

IFNAMSIZ = 16
_KERNEL_REFUSED = frozenset(b"/:%\t\n\v\f\r \xa0")
HOST_IFNAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,14}")
HOST_IFNAME_RULE = "1-15 letters, digits, '_', '.', '-', starting with a letter or digit"
RDMA_DEVICE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
RDMA_DEVICE_RULE = "1-63 letters, digits, '_', '.', '-', starting with a letter or digit"


def kernel_ifname_ok(name):
    """True when the kernel takes ``name`` as an interface name (``dev_valid_name``)."""
    if not isinstance(name, str) or name in ("", ".", ".."):
        return False
    raw = name.encode("utf-8", "surrogatepass")
    return len(raw) < IFNAMSIZ and not _KERNEL_REFUSED.intersection(raw)


def host_ifname_problem(name, field):
    """None for a name the host roles may write into paths and files; else one line naming ``field`` and the value."""
    if isinstance(name, str) and HOST_IFNAME.fullmatch(name) and kernel_ifname_ok(name):
        return None
    return "%s %r is not an interface name this collection writes into host files (%s)" % (
        field, name, HOST_IFNAME_RULE)


def rdma_device_problem(name, field):
    """None for an RDMA device name this collection may put into a command line or a file (:data:`RDMA_DEVICE`);
    else one line naming ``field`` and the value (``%r``: a control character is shown escaped)."""
    if isinstance(name, str) and RDMA_DEVICE.fullmatch(name):
        return None
    return "%s %r is not an RDMA device name this collection uses (%s)" % (field, name, RDMA_DEVICE_RULE)
