# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The checks a node passes before its maintenance window gives it back to the scheduler.

Each check reads what the collection's own modules report, nothing new is measured here:

* ``rail-config``: ``rail_interfaces`` in check mode (the rail_network role's arguments) would change nothing -
  every rail NIC carries its planned address, MTU, routes and rules;
* ``rdma-devices``: ``rdma_facts`` maps every rail NIC to an RDMA device;
* ``rail-links``: each of those RDMA ports is ``ACTIVE`` with ``LINK_UP`` (``rdma link`` / ``ibv_devinfo``);
* ``boot-id``: where the window rebooted the node, ``/proc/sys/kernel/random/boot_id`` differs from the one read
  before (a reboot that silently did not happen fails here);
* ``still-pending``: the host roles' read-back after the steps reports no reboot still pending;
* ``lossless`` (optional): ``roce_qos`` in check mode would change nothing;
* ``command`` (optional): a site's own health check (an argument list run on the node) exits 0.

A check whose input was not read fails (``not read``): an unread object never agrees.
"""

from __future__ import annotations

CHECKS = ("rail-config", "rdma-devices", "rail-links", "boot-id", "still-pending", "lossless", "command")


def _changed(result):
    if not isinstance(result, dict) or result.get("skipped"):
        return None
    if result.get("failed"):
        return "could not be read: %s" % str(result.get("msg") or "")[:160]
    if result.get("changed"):
        return list(result.get("commands") or ["would change"])[:5]
    return []


def node_checks(required, rail_config=None, rdma=None, boot_before=None, boot_after=None, rebooted=False,
                pending_after=None, lossless=None, command=None):
    """``[{"check", "detail"}]`` of the failed ones among ``required`` (names from :data:`CHECKS`); empty: the
    node may go back."""
    failed = []
    required = [c for c in CHECKS if c in (required or [])]

    def fail(check, detail):
        failed.append({"check": check, "detail": detail})

    for name, result in (("rail-config", rail_config), ("lossless", lossless)):
        if name in required:
            diff = _changed(result)
            if diff is None:
                fail(name, "not read")
            elif isinstance(diff, str):
                fail(name, diff)
            elif diff:
                fail(name, "differs from the plan: %s" % "; ".join(str(d) for d in diff))
    rails = (rdma or {}).get("rails") if isinstance(rdma, dict) and not rdma.get("skipped") else None
    devices = (((rdma or {}).get("facts") or {}).get("devices") or {}) if isinstance(rdma, dict) else {}
    if "rdma-devices" in required:
        if not rails:
            fail("rdma-devices", "not read")
        else:
            missing = [r.get("netdev") for r in rails if not r.get("rdma_device")]
            if missing:
                fail("rdma-devices", "no RDMA device for %s" % ", ".join(str(m) for m in missing))
    if "rail-links" in required:
        if not rails:
            fail("rail-links", "not read")
        else:
            down = []
            for rail in rails:
                port = ((devices.get(rail.get("rdma_device")) or {}).get("ports") or {}).get(rail.get("port"))
                if port is None:
                    port = ((devices.get(rail.get("rdma_device")) or {}).get("ports") or {}).get(
                        str(rail.get("port")))
                state = (port or {}).get("state"), (port or {}).get("physical_state")
                if state != ("ACTIVE", "LINK_UP"):
                    down.append("%s (%s)" % (rail.get("netdev"), "/".join(str(s) for s in state)))
            if down:
                fail("rail-links", "not up: %s" % ", ".join(down))
    if "boot-id" in required and rebooted:
        if not boot_before or not boot_after:
            fail("boot-id", "not read")
        elif boot_before.strip() == boot_after.strip():
            fail("boot-id", "the boot id did not change: the node did not reboot")
    if "still-pending" in required:
        if pending_after is None:
            fail("still-pending", "not read")
        elif pending_after:
            fail("still-pending", "; ".join(str(p) for p in pending_after)[:200])
    if "command" in required:
        if not isinstance(command, dict) or command.get("skipped") or "rc" not in command:
            fail("command", "not read")
        elif command["rc"] != 0:
            output = str(command.get("stderr") or command.get("stdout") or "").strip()
            fail("command", "exit %s: %s" % (command["rc"], output[:160]))
    return failed
