# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The published plan, or plan lock: what each host was planned with.

The plan job sees the whole inventory; a host job under ``--limit`` or in an AWX slice sees
only part of it, so it cannot find two hosts with the same node id by itself. The plan job
therefore publishes a lock (a file committed next to the inventory, and the same data as
job artifacts): the cluster model's digest and, per host, its node id and every rail as
``"<fabric> <rail> <nic> <address>"``. A host job plans the hosts it sees and refuses to
touch any of them unless each one is in the lock with exactly that node id, those NICs and
those addresses, and the model is the one the lock was made from.

The file, ``rail_plan_lock.json`` in the inventory directory, is at the same time an inventory
source that sets the group variable ``rail_plan_lock`` of ``all``: with ``-i <inventory dir>``
(and in an AWX inventory synced from the project) every job, and every slice of one, has the lock
without a lookup. It is JSON with one host per line, in node-id order, so that a review of a
changed lock reads like a review of the plan.
"""

from __future__ import annotations

import difflib
import hashlib
import json

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError, FabricModelErrors

LOCK_VERSION = 1
LOCK_VAR = "rail_plan_lock"
LOCK_FILE = LOCK_VAR + ".json"
# Problems listed one by one before the rest are counted.
MAX_PROBLEMS = 20
NO_NIC = "-"


def model_digest(cluster_dict):
    """A short digest of the normalised cluster model (``Cluster.to_dict()``)."""
    text = json.dumps(cluster_dict, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _rail_line(entry):
    return "%s %d %s %s" % (entry["fabric"], entry["rail"], entry["interface"] or NO_NIC, entry["address"])


def plan_lock(plan):
    """The lock of a plan made by ``rail_plan.rail_plan``."""
    nodes = {}
    for host, node in sorted(plan["nodes"].items(), key=lambda item: item[1]["node_id"]):
        nodes[host] = {"node_id": node["node_id"], "rails": [_rail_line(e) for e in node["rails"]]}
    return {
        "version": LOCK_VERSION,
        "cluster": plan["summary"]["cluster"],
        "model": model_digest(plan["cluster"]),
        "nodes": nodes,
    }


def lock_dump(lock):
    """The lock file's text: an inventory source (JSON) setting ``all.vars.rail_plan_lock``,
    one host per line, in node-id order."""
    head = ['{"all": {"vars": {"%s": {' % LOCK_VAR, '  "version": %d,' % lock["version"],
            '  "cluster": %s,' % json.dumps(lock["cluster"]), '  "model": %s,' % json.dumps(lock["model"]),
            '  "nodes": {']
    hosts = sorted(lock["nodes"].items(), key=lambda item: item[1]["node_id"])
    body = ['    %s: %s%s' % (json.dumps(host), json.dumps(entry, sort_keys=True), "," if i < len(hosts) - 1 else "")
            for i, (host, entry) in enumerate(hosts)]
    return "\n".join(head + body + ['  }', '}}}}']) + "\n"


def lock_load(data, source):
    """Check a lock (text, or the data published as job artifacts) and return it as a dict."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise FabricModelError(source, None, "is not JSON (%s)" % exc,
                                   "write it with the plan job (ansible-playbook ainet.fabric.plan), do not edit it by hand")
        try:
            data = data["all"]["vars"][LOCK_VAR]
        except (KeyError, TypeError):
            raise FabricModelError(source, None, "does not set all.vars.%s" % LOCK_VAR,
                                   "write it with the plan job (ansible-playbook ainet.fabric.plan), do not edit it by hand") from None
    fix = "publish a new lock with the plan job (ansible-playbook ainet.fabric.plan)"
    if not isinstance(data, dict) or data.get("version") != LOCK_VERSION:
        raise FabricModelError(source + ".version", data.get("version") if isinstance(data, dict) else data,
                               "is not a plan lock of version %d" % LOCK_VERSION, fix)
    for key, kind in (("cluster", str), ("model", str), ("nodes", dict)):
        if not isinstance(data.get(key), kind):
            raise FabricModelError("%s.%s" % (source, key), data.get(key), "is missing or not a %s" % kind.__name__, fix)
    for host, entry in data["nodes"].items():
        if not (isinstance(entry, dict) and isinstance(entry.get("node_id"), int) and not isinstance(entry["node_id"], bool)
                and isinstance(entry.get("rails"), list) and all(isinstance(r, str) for r in entry["rails"])):
            raise FabricModelError("%s.nodes.%s" % (source, host), entry,
                                   "is not {node_id: <int>, rails: [<fabric> <rail> <nic> <address>, ...]}", fix)
    return data


def published(var_data, file_path, file_text):
    """``(source, lock)`` of the newest published lock, ``(None, None)`` when there is none.

    The file, where it exists, is the newest word: a plan job that just ran in the same ansible-playbook
    command rewrote it after the inventory (and its copy of the lock as the variable) was loaded. Without a
    file (an AWX job, whose inventory is not a directory of the project), the variable: the inventory's copy,
    or the plan job's artifact passed on by the workflow as an extra var."""
    source, data = LOCK_VAR, var_data
    if file_text is not None:
        source, data = file_path, file_text
    if data in (None, "", {}):
        return None, None
    return source, lock_load(data, source)


def check_whole_plan(lock, plan, source):
    """Like :func:`check_plan` for a job that acts on the whole plan at once (the ToR push): every host
    of the plan as the lock has it, and no host of the lock missing from the plan."""
    gone = sorted(set(lock["nodes"]) - set(plan["nodes"]))
    try:
        check_plan(lock, plan, source)
        problems = []
    except FabricModelErrors as exc:
        problems = list(exc.errors)
    except FabricModelError as exc:
        problems = [exc]
    fix = ("publish the plan of the whole inventory first (the plan job, ansible-playbook ainet.fabric.plan), or restore the "
           "inventory to the published plan")
    problems += [FabricModelError("inventory", host, "is in the published plan %s but not in the inventory" % source,
                                  None) for host in gone[:MAX_PROBLEMS]]
    if problems:
        raise FabricModelErrors([FabricModelError(p.field, p.value, p.problem, fix if i == len(problems) - 1 else None)
                                 for i, p in enumerate(problems)])


def check_plan(lock, plan, source):
    """Refuse the hosts of ``plan`` that the lock does not give exactly what they are planned with.

    ``plan`` is the plan of the hosts this job sees (possibly a slice of the inventory); every
    one of them must be in the lock with the same node id and the same rails, and the lock must
    come from the same cluster model. Raises FabricModelErrors naming each disagreement.
    """
    problems = []
    fix = ("publish the plan of the whole inventory first (the plan job, ansible-playbook ainet.fabric.plan, writes %s "
           "and the job artifact %s), or restore the inventory to the published plan" % (source, LOCK_VAR))
    name = plan["summary"]["cluster"]
    if lock["cluster"] != name:
        problems.append(("fabric_cluster.name", name,
                         "is not the cluster of the published plan %s (%s)" % (source, lock["cluster"])))
    elif lock["model"] != model_digest(plan["cluster"]):
        problems.append(("fabric_cluster", "model %s" % model_digest(plan["cluster"]),
                         "differs from the model the published plan %s was made from (model %s)"
                         % (source, lock["model"])))
    owners = {entry["node_id"]: host for host, entry in lock["nodes"].items()}
    for host, node in sorted(plan["nodes"].items(), key=lambda item: item[1]["node_id"]):
        node_id = node["node_id"]
        field = "hostvars[%s].fabric_node_id" % host
        locked = lock["nodes"].get(host)
        owner = owners.get(node_id)
        if locked is None:
            where = ": the plan gives node id %d to %s" % (node_id, owner) if owner else " (a host added since)"
            problems.append((field, node_id, "is not in the published plan %s%s" % (source, where)))
            continue
        if locked["node_id"] != node_id:
            also = " and node id %d to %s" % (node_id, owner) if owner else ""
            problems.append((field, node_id, "disagrees with the published plan %s, which gives %s node id %d%s"
                             % (source, host, locked["node_id"], also)))
            continue
        rails = [_rail_line(e) for e in node["rails"]]
        if rails != locked["rails"]:
            here = [r for r in rails if r not in locked["rails"]]
            there = [r for r in locked["rails"] if r not in rails]
            problems.append(("hostvars[%s].fabric_rail_interfaces" % host, here or rails,
                             "disagrees with the published plan %s, which has %s" % (source, there or locked["rails"])))
    if not problems:
        return
    if len(problems) > MAX_PROBLEMS:
        rest = len(problems) - MAX_PROBLEMS
        problems = problems[:MAX_PROBLEMS] + [(source, "...", "and %d more hosts disagree with it" % rest)]
    # One line per problem; the fix once, on the last line.
    raise FabricModelErrors([FabricModelError(field, value, problem, fix if i == len(problems) - 1 else None)
                             for i, (field, value, problem) in enumerate(problems)])


def lock_changes(before, after):
    """What a new lock changes: the hosts it adds, removes and changes, and whether the model changed."""
    old_nodes = (before or {}).get("nodes", {})
    new_nodes = after["nodes"]
    summary = {
        "added": sorted(h for h in new_nodes if h not in old_nodes),
        "removed": sorted(h for h in old_nodes if h not in new_nodes),
        "changed": sorted(h for h in new_nodes if h in old_nodes and old_nodes[h] != new_nodes[h]),
        "model": before is None or before.get("model") != after["model"],
    }
    return summary


def short_diff(before_text, after_text, path, max_lines=200):
    """A unified diff without context, cut after ``max_lines``: a plan of thousands of nodes
    must not become a diff event of megabytes."""
    lines = list(difflib.unified_diff((before_text or "").splitlines(), after_text.splitlines(),
                                      fromfile=path, tofile=path, n=0, lineterm=""))
    if len(lines) > max_lines:
        lines = lines[:max_lines] + ["... %d more diff lines (see the file itself)" % (len(lines) - max_lines)]
    return "\n".join(lines) + "\n" if lines else ""
