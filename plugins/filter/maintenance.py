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


def _windows(hosts, plan, max_nodes, max_per_group, group_by):
    if not isinstance(hosts, dict):
        raise window.MaintenanceError("maintenance_windows: the input must map hosts to {steps, record}")
    actions, unavailable, busy, resumed, pending = {}, [], [], [], []
    for host, entry in hosts.items():
        entry = entry or {}
        record = entry.get("record") or {"out": False, "idle": True, "reason": ""}
        steps = window.check_steps(entry.get("steps") or [], "maintenance_steps (%s)" % host)
        action, why = window.next_action(record, steps)
        actions[host] = {"action": action, "detail": why, "steps": steps}
        if action == "skip":
            unavailable.append(host)
        elif action != "none":
            pending.append(host)
            if window.owner(record) == "ours":
                resumed.append(host)
            if not record.get("idle", True):
                busy.append(host)
    out = batches.batches(plan, pending, unavailable=unavailable, busy=busy, resumed=resumed,
                          max_nodes=max_nodes, max_per_group=max_per_group, group_by=group_by)
    out["hosts"] = actions
    out["skipped"] = dict((h, actions[h]["detail"]) for h in unavailable if actions[h]["steps"])
    return out


def maintenance_windows(hosts, plan, max_nodes=1, max_per_group=1, group_by="rail_group"):
    """Each host's next action and the ordered batches of the windows to open."""
    return _call(_windows, hosts, plan, max_nodes, max_per_group, group_by)


def maintenance_next(record, steps, boot_id=None, max_reboots=2):
    """``{"action", "detail", "mark"}``: what to do next on one node, from its scheduler record (``mark``: our
    parsed mark, or None)."""
    record = record or {"out": False, "idle": True, "reason": ""}
    action, detail = _call(window.next_action, record, _call(window.check_steps, steps or []), boot_id or None,
                           int(max_reboots))
    return {"action": action, "detail": detail, "mark": window.parse_mark(record.get("reason"))}


def maintenance_checks(required, **kwargs):
    """The failed checks (``[{"check", "detail"}]``) of a node before it goes back."""
    return _call(checks.node_checks, required, **kwargs)


def maintenance_refusal(services, backend, ack, host):
    """One line refusing a disruptive step on ``host``, or an empty string."""
    return _call(window.backend_refusal, backend, bool(ack), services or [], host) or ""


class FilterModule(object):
    """ainet.fabric maintenance filters."""

    def filters(self):
        return {"maintenance_windows": maintenance_windows, "maintenance_next": maintenance_next,
                "maintenance_checks": maintenance_checks, "maintenance_refusal": maintenance_refusal}
