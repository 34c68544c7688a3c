# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja2 filters of the maintenance role; all logic lives in module_utils/maintenance."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.maintenance import batches, checks, window


def _call(function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except FabricError as exc:
        raise AnsibleFilterError(str(exc)) from None


def _windows(hosts, plan, max_nodes, max_per_group, group_by, others=None, run=None, stale_after=None):
    if not isinstance(hosts, dict):
        raise window.MaintenanceError("maintenance_windows: the input must map hosts to {steps, record}")
    actions, unavailable, busy, resumed, pending = {}, [], [], [], []
    for host, entry in hosts.items():
        entry = entry or {}
        record = entry.get("record") or {"out": False, "idle": True, "reason": ""}
        steps = window.check_steps(entry.get("steps") or [], "maintenance_steps (%s)" % host)
        action, why = window.next_action(record, steps, run=run, stale_after=stale_after)
        actions[host] = {"action": action, "detail": why, "steps": steps}
        if action == "skip":
            unavailable.append(host)
        elif action != "none":
            pending.append(host)
            if window.owner(record) == "ours":
                resumed.append(host)
            if not record.get("idle", True) or action == "reboot-wait":
                busy.append(host)
    for host, record in (others or {}).items():
        # nodes of the node group outside this play (--limit, another job's limit): read, never acted on; out of
        # service (for anyone, a window of ours included) or with a reboot pending, they count against the limits
        if host in hosts:
            continue
        if record is None:
            raise window.MaintenanceError("maintenance: %s (outside this play) was not read from the scheduler: "
                                          "the limits cannot count it" % host)
        if record.get("out") or window.owner(record) is not None or record.get("reboot_pending"):
            unavailable.append(host)
    out = batches.batches(plan, pending, unavailable=unavailable, busy=busy, resumed=resumed,
                          max_nodes=max_nodes, max_per_group=max_per_group, group_by=group_by)
    out["hosts"] = actions
    out["skipped"] = dict((h, actions[h]["detail"]) for h in unavailable if h in actions and actions[h]["steps"])
    return out


def maintenance_windows(hosts, plan, max_nodes=1, max_per_group=1, group_by="rail_group", others=None, run=None,
                        stale_after=None):
    """Each host's next action and the ordered batches of the windows to open."""
    return _call(_windows, hosts, plan, max_nodes, max_per_group, group_by, others, run or None,
                 None if stale_after in (None, "") else int(stale_after))


def maintenance_next(record, steps, boot_id=None, max_reboots=2, run=None, stale_after=None):
    """``{"action", "detail", "mark"}``: what to do next on one node, from its scheduler record (``mark``: our
    parsed mark, or None)."""
    record = record or {"out": False, "idle": True, "reason": ""}
    action, detail = _call(window.next_action, record, _call(window.check_steps, steps or []), boot_id or None,
                           int(max_reboots), run or None, None if stale_after in (None, "") else int(stale_after))
    return {"action": action, "detail": detail, "mark": window.parse_mark(record.get("reason"))}


def maintenance_checks(required, **kwargs):
    """The failed checks (``[{"check", "detail"}]``) of a node before it goes back."""
    return _call(checks.node_checks, required, **kwargs)


def maintenance_refusal(services, backend, ack, host):
    """One line refusing a disruptive step on ``host``, or an empty string."""
    return _call(window.backend_refusal, backend, bool(ack), services or [], host) or ""


def maintenance_warning(services, backend, ack, host):
    """The line said where the opt-out lets a step run next to a scheduler's daemon (naming it), or ''."""
    return _call(window.backend_warning, backend, bool(ack), services or [], host) or ""


class FilterModule(object):
    """ainet.fabric maintenance filters."""

    def filters(self):
        return {"maintenance_windows": maintenance_windows, "maintenance_next": maintenance_next,
                "maintenance_checks": maintenance_checks, "maintenance_refusal": maintenance_refusal,
                "maintenance_warning": maintenance_warning}
