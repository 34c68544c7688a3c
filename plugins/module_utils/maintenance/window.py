# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A maintenance window on one node, whatever the scheduler: its mark, its phases and the next thing to do.

A window takes a node out of service, waits until no job runs there, runs the disruptive steps, checks the
node and gives it back. Its state lives on the scheduler's own record of the node (the Slurm node reason, a
Kubernetes node annotation), never only in the controller's memory, so a run killed mid-window is finished by
the next one. That record is the *mark*::

    ainet.fabric: <steps> <phase>[ run=<run id>][ boot=<boot id>][ try=<n>][ check=<name>]

``<steps>`` are the window's step names joined by ``+`` (``firmware-reset+reboot``); ``<phase>`` one of
:data:`PHASES`. Slurm appends its own notes to a reason (``" : reboot issued"``, ``" : reboot complete"``,
src/slurmctld/node_mgr.c ``set_node_reason``), which the parser leaves out. A node whose record carries no mark
but is out of service belongs to someone else (an administrator's drain, another tool's cordon): it is left
exactly as it is, never drained, stepped or resumed by us.

*Which run holds a window* (``run=``): the run that set the mark owns the window. Another run that finds a live
mark of a different run leaves the node to it (``skip``); a ``failed`` mark (its run stopped there) is taken up by
the next run at once; a mark that made no progress for ``stale_after``
seconds (its age: how long ago the scheduler recorded it, Slurm's reason time) is stale and is taken over, so a
killed run is still finished by the next one. A mark without ``run=`` (an earlier version's) is taken over too.
The mark itself is the lock: the backend sets it only on a record that is free, ours or stale, and reads it back
before any step (see maintenance_slurm ``drain``, maintenance_k8s ``enter``).

*A reboot someone else asked Slurm for* (``reboot_pending`` in a record: the REBOOT_REQUESTED or REBOOT_ISSUED
flag, sinfo ``reboot``/``reboot^``/``...@``) is someone else's: Slurm reboots the node as soon as it is idle and,
with ``nextstate=RESUME``, hands it back by itself. Such a node is never drained or stepped while the reboot is
pending; only the reboot our own mark records (phase ``reboot``) is ours.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

MARK = "ainet.fabric:"
# drain: asked to leave service; step: the steps run; reboot: a reboot issued (boot= the boot id before it);
# check: the node is being checked; failed: a check failed (check= names it), the node stays out of service.
PHASES = ("drain", "step", "reboot", "check", "failed")
STEPS = ("command", "firmware-reset", "driver-restart", "reboot")
BACKENDS = ("slurm", "kubernetes", "none")
_STEP = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
_FIELD = re.compile(r"^(run|boot|try|check)=([A-Za-z0-9._-]{1,64})$")
_RUN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_CHECK = re.compile(r"^[a-z][a-z0-9_-]{0,47}$")
_BOOT = re.compile(r"^[0-9a-f-]{8,36}$")
# What a scheduler's daemon on a node is called: it runs jobs there.
SCHEDULER_SERVICES = {"slurmd": "slurm", "kubelet": "kubernetes"}


class MaintenanceError(FabricError):
    """A window cannot open, go on or close safely; the message names the node, field or check."""


def check_steps(steps, field="maintenance_steps"):
    """The window's steps, known names, in :data:`STEPS` order (a reboot last); refuses anything else."""
    if isinstance(steps, str):
        steps = [steps]
    if not isinstance(steps, (list, tuple)):
        raise MaintenanceError("%s: %r is not a list of step names (%s)" % (field, steps, ", ".join(STEPS)))
    for step in steps:
        if step not in STEPS:
            raise MaintenanceError("%s: %r is not a step this collection runs; use one of %s"
                                   % (field, step, ", ".join(STEPS)))
    return [s for s in STEPS if s in steps]


def check_run(run, field="maintenance_run_id"):
    """A run id (letters, digits, '.', '_', '-'; at most 64), or one line naming it."""
    if not isinstance(run, str) or not _RUN.match(run):
        raise MaintenanceError("%s: %r is not a run id (letters, digits, '.', '_', '-'; 1 to 64 characters, "
                               "e.g. the AWX job id)" % (field, run))
    return run


def format_mark(steps, phase, boot=None, tries=None, check=None, run=None):
    """The mark of a window (see the module docstring); every part validated, so it is never shell or
    hostlist syntax."""
    steps = check_steps(steps)
    if not steps:
        raise MaintenanceError("maintenance: a window needs at least one step")
    if phase not in PHASES:
        raise MaintenanceError("maintenance: phase %r is not one of %s" % (phase, ", ".join(PHASES)))
    parts = [MARK, "+".join(steps), phase]
    if run is not None:
        parts.append("run=%s" % check_run(run))
    if boot is not None:
        if not _BOOT.match(str(boot)):
            raise MaintenanceError("maintenance: boot id %r is not a kernel boot id (hex and dashes)" % (boot,))
        parts.append("boot=%s" % boot)
    if tries is not None:
        parts.append("try=%d" % int(tries))
    if check is not None:
        if not _CHECK.match(str(check)):
            raise MaintenanceError("maintenance: check name %r is not a plain name" % (check,))
        parts.append("check=%s" % check)
    return " ".join(parts)


def parse_mark(reason):
    """``{"steps", "phase", "boot", "tries", "check"}`` from a scheduler's reason or annotation, or None when
    it is no mark of ours (empty, another's reason, a mark this version cannot read). Tolerant of what Slurm
    appends (``" : reboot issued"``) and of Slurm's ``[user@time]`` suffix."""
    if not isinstance(reason, str):
        return None
    text = reason.strip()
    if not text.startswith(MARK):
        return None
    text = re.sub(r"\s+\[[^\]@\s]+@[^\]]+\]\s*$", "", text[len(MARK):])
    text = text.split(" : ", 1)[0]
    words = text.split()
    if len(words) < 2 or words[1] not in PHASES:
        return None
    steps = words[0].split("+")
    if not steps or any(s not in STEPS for s in steps):
        return None
    out = {"steps": steps, "phase": words[1], "run": None, "boot": None, "tries": 0, "check": None}
    for word in words[2:]:
        match = _FIELD.match(word)
        if not match:
            return None
        key, value = match.groups()
        if key == "try":
            if not value.isdigit():
                return None
            out["tries"] = int(value)
        else:
            out[key] = value
    return out


def owner(record):
    """Who holds a node out of service: ``"ours"`` (our mark), ``"foreign"`` (out of service, no mark of
    ours), ``None`` (in service). ``record``: a backend's ``{"out", "reason"}``."""
    if parse_mark(record.get("reason")) is not None:
        return "ours"
    if record.get("out"):
        return "foreign"
    return None


def reboot_pending(record, mark=None):
    """True when the scheduler has a reboot pending on the node that no mark of ours records (phase reboot)."""
    if not record.get("reboot_pending"):
        return False
    return mark is None or mark["phase"] != "reboot"


def holder(record, run=None, stale_after=None):
    """Another live run holding the node's window: its run id, or None (free, ours, an earlier version's mark, a
    ``failed`` one - its run stopped there -, or stale: no progress for ``stale_after`` seconds,
    ``record["mark_age"]`` the mark's age where known)."""
    mark = parse_mark(record.get("reason"))
    if mark is None or not mark["run"] or run is None or mark["run"] == run or mark["phase"] == "failed":
        return None  # a failed window is one its run finished with: the next run takes it up
    age = record.get("mark_age")
    if stale_after is not None and age is not None and age >= int(stale_after):
        return None
    return mark["run"]


def next_action(record, steps, boot_id=None, max_reboots=2, run=None, stale_after=None):
    """What to do next on one node, from its scheduler record alone (resumable).

    ``record``: ``{"out": bool (drain flag / cordon set), "idle": bool (no job runs there and none is finishing),
    "reason": str}``; ``steps``: what is pending on the node now (may be empty: a window a killed run left is
    still finished); ``boot_id``: the node's current boot id where known. Returns ``(action, detail)``:

    ``run``: this run's id; ``stale_after``: seconds without progress after which another run's mark is taken
    over (see the module docstring).

    * ``("none", None)``: nothing pending, no window of ours: the node is never touched;
    * ``("reboot-wait", why)``: in service, a reboot someone else asked for is pending: not drained until the
      scheduler has done it (then the window opens as on any node);
    * ``("skip", why)``: out of service for someone else, a window another live run holds, or our window on a
      node where someone else's reboot is pending: left as it is, its steps stay pending;
    * ``("drain", None)``: open the window (mark phase ``drain``);
    * ``("wait", None)``: our drain is set, jobs still run or finish: wait (never kill);
    * ``("step", steps)``: drained: run the steps;
    * ``("rebooted", None)``: the reboot recorded in the mark happened (the boot id differs): check;
    * ``("reboot", tries)``: the recorded reboot did not happen yet: issue it again (``tries`` so far);
    * ``("check", None)``: run the checks, then resume;
    * ``("held", why)``: a reboot loop (``max_reboots`` issued in this window and the node is still not
      right): the node stays out of service.
    """
    mark = parse_mark(record.get("reason"))
    pending = reboot_pending(record, mark)
    if mark is None:
        if pending and not record.get("out") and steps:
            return "reboot-wait", ("a reboot someone else asked Slurm for is pending (%s): not drained until Slurm "
                                   "has done it" % record.get("sinfo", "reboot"))
        if record.get("out"):
            return "skip", "out of service for another reason (%s): left as it is" % (
                (record.get("reason") or "no reason").strip()[:120])
        if not steps:
            return "none", None
        return "drain", None
    other = holder(record, run, stale_after)
    if other is not None:
        return "skip", "its window is held by another run (run=%s, still making progress): left to it" % other
    if pending:
        return "skip", ("a reboot someone else asked Slurm for is pending (%s): not stepped; the window stays as it "
                        "is" % record.get("sinfo", "reboot"))
    if not record.get("idle"):
        return "wait", None
    phase = mark["phase"]
    if phase == "reboot":
        if mark["boot"] and boot_id and boot_id != mark["boot"]:
            return "rebooted", None
        if mark["tries"] >= max_reboots:
            return "held", "reboot-loop"
        return "reboot", mark["tries"]
    if phase == "failed" and mark["tries"] >= max_reboots and "reboot" in mark["steps"]:
        return "held", "reboot-loop"
    if phase in ("drain", "step", "failed"):
        return "step", check_steps(steps) if steps else []
    return "check", None


def backend_refusal(backend, ack, services, host):
    """One line refusing a disruptive step on ``host``, or None. ``services``: the scheduler daemons found
    running there (``slurmd``, ``kubelet``). ``backend`` ``""`` is "not configured": a node running a scheduler's
    daemon is refused, naming the backend to configure, and so is any other node (configure one, or opt out).
    ``none`` is the opt-out for clusters that run no jobs, and needs ``ack`` as well."""
    if backend not in BACKENDS + ("",):
        raise MaintenanceError("maintenance_backend: %r is not one of %s" % (backend, ", ".join(BACKENDS)))
    if backend in ("slurm", "kubernetes"):
        return None
    running = sorted(set(s for s in services if s in SCHEDULER_SERVICES))
    if backend == "" and running:
        return ("%s: %s runs here and no maintenance_backend is configured: set maintenance_backend: %s so that "
                "its jobs end before a disruptive step" % (
                    host, " and ".join(running), "/".join(SCHEDULER_SERVICES[s] for s in running)))
    if backend == "" or not ack:
        return ("%s: no maintenance_backend is configured: set maintenance_backend (slurm, kubernetes), or, on a "
                "cluster that runs no jobs, maintenance_backend: none with maintenance_no_scheduler_ack: true" % host)
    return None


def backend_warning(backend, ack, services, host):
    """The one line said when the opt-out (``none`` with ``ack``) lets a step run where a scheduler's daemon runs,
    naming the daemon, or None. The acknowledgment is trusted: it is the explicit opt-out for clusters without
    jobs."""
    running = sorted(set(s for s in services if s in SCHEDULER_SERVICES))
    if backend != "none" or not ack or not running:
        return None
    return ("%s: %s runs here, yet maintenance_backend is none (maintenance_no_scheduler_ack: true): the steps run "
            "without draining it" % (host, " and ".join(running)))
