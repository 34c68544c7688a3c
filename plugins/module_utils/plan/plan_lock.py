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

The file, ``rail_plan_lock.yml`` in the inventory directory, is at the same time an inventory
source that sets the group variable ``rail_plan_lock`` of ``all``: with ``-i <inventory dir>``
(and in an AWX inventory synced from the project) every job, and every slice of one, has the lock
without a lookup. Format 2 (:func:`lock_dump`): a YAML mapping of four scalars, ``version``,
``cluster``, ``model`` and ``nodes``, whose ``nodes`` is one block scalar with one line per host,
in node-id order::

    <host> <node id>: <fabric> <rail> <nic> <address>, <fabric> <rail> <nic> <address>, ...

so that a review of a changed lock reads like a review of the plan, and so that Ansible, which parses
every inventory source twice (the ``auto`` then the ``yaml`` plugin), tags every string it reads with its
origin and deep-copies what it parsed, handles a few scalars instead of one string per rail (format 1,
``rail_plan_lock.json``: a JSON mapping per host with a list of rails, about 150,000 strings at 16,384 nodes,
cost every job 7 s). The job artifact ``rail_plan_lock`` is the same mapping (:func:`lock_variable`).

:func:`lock_load` reads both formats (a format 1 file, variable or artifact is still read) and returns
one internal form, ``{version, cluster, model, nodes: {host: {node_id, rails: [...]}}}``, the form
:func:`plan_lock` makes from a plan; :func:`published` finds the newest lock, a format 1 file beside the
new file's path included; the plan job replaces a format 1 file only where it is one this collection wrote
(:func:`legacy_lock`).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError, FabricModelErrors

LOCK_VERSION = 2
LOCK_VAR = "rail_plan_lock"
LOCK_FILE = LOCK_VAR + ".yml"
# Format 1: the file the plan job wrote before (JSON), still read, replaced by the plan job where it wrote it.
LEGACY_VERSION = 1
LEGACY_LOCK_FILE = LOCK_VAR + ".json"
# Problems listed one by one before the rest are counted.
MAX_PROBLEMS = 20
NO_NIC = "-"
# What the plan job writes, and what a hand-edited lock is told.
WRITE_FIX = "write it with the plan job (ansible-playbook ainet.fabric.plan), do not edit it by hand"
PUBLISH_FIX = "publish a new lock with the plan job (ansible-playbook ainet.fabric.plan)"
# One host's line of format 2 without its host name: the node id, then its rails, each four fields with no whitespace
# and no comma (a host name, a fabric name, a NIC name and an address have none: the plan checked them).
_FIELD = r"[^\s,]+"
_NUMBER = r"(?:0|[1-9][0-9]*)"
_RAIL = r"%s %s %s %s" % (_FIELD, _NUMBER, _FIELD, _FIELD)
_LINE_REST = re.compile(r"(%s):(?: (%s(?:, %s)*))?\Z" % (_NUMBER, _RAIL, _RAIL))
_HOST = re.compile(r"%s\Z" % _FIELD)
LINE_FORM = "<host> <node id>: <fabric> <rail> <nic> <address>, ..."
HEADER = """# yamllint disable rule:line-length
# The published rail plan (the plan lock) of this inventory, written by the plan job
# (ansible-playbook ainet.fabric.plan): review its diff and commit it with the inventory; do not edit it.
# An inventory source: it sets the variable rail_plan_lock of every host. Format 2: in nodes, one line per
# host in node-id order, <host> <node id>: then each rail as <fabric> <rail> <nic> <address> (nic - where
# the host names none), separated by ", ".
"""


def model_digest(cluster_dict):
    """A short digest of the normalised cluster model (``Cluster.to_dict()``)."""
    text = json.dumps(cluster_dict, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _rail_line(entry):
    return "%s %d %s %s" % (entry["fabric"], entry["rail"], entry["interface"] or NO_NIC, entry["address"])


def plan_lock(plan):
    """The lock of a plan made by ``rail_plan.rail_plan`` (the internal form)."""
    nodes = {}
    for host, node in sorted(plan["nodes"].items(), key=lambda item: item[1]["node_id"]):
        nodes[host] = {"node_id": node["node_id"], "rails": [_rail_line(e) for e in node["rails"]]}
    return {
        "version": LOCK_VERSION,
        "cluster": plan["summary"]["cluster"],
        "model": model_digest(plan["cluster"]),
        "nodes": nodes,
    }


def node_line(host, entry):
    """One host's line of format 2: ``<host> <node id>: <rail>, <rail>, ...``."""
    return "%s %d:%s" % (host, entry["node_id"], (" " + ", ".join(entry["rails"])) if entry["rails"] else "")


def nodes_text(lock):
    """The ``nodes`` of format 2: :func:`node_line` of every host, in node-id order, each ending with a newline."""
    hosts = sorted(lock["nodes"].items(), key=lambda item: item[1]["node_id"])
    return "".join(node_line(host, entry) + "\n" for host, entry in hosts)


def lock_variable(lock):
    """The lock as the variable ``rail_plan_lock`` holds it in format 2 (the file's, and the job artifact): four
    scalars, the hosts one line each in ``nodes``."""
    return {"version": LOCK_VERSION, "cluster": lock["cluster"], "model": lock["model"], "nodes": nodes_text(lock)}


def lock_dump(lock):
    """The lock file's text, format 2: an inventory source (YAML) setting ``all.vars.rail_plan_lock``
    (:func:`lock_variable`), whose ``nodes`` is a literal block scalar, one host per line."""
    text = nodes_text(lock)
    body = "".join("        " + line + "\n" for line in text.splitlines())
    return "%sall:\n  vars:\n    %s:\n      version: %d\n      cluster: %s\n      model: %s\n      nodes: %s" % (
        HEADER, LOCK_VAR, LOCK_VERSION, json.dumps(lock["cluster"]), json.dumps(lock["model"]),
        "|\n" + body if body else '""\n')


def _nodes_from_text(text, source, first_line=None):
    """``{host: {node_id, rails}}`` of format 2's ``nodes``; a line that is not :data:`LINE_FORM` (or names a host or
    a node id twice) raises the error naming it: ``<source> line <n>`` (the file's line where ``first_line``, the
    file's line of the first host, is known; else the line within ``nodes``)."""
    nodes, owners = {}, {}
    for index, line in enumerate(text.splitlines()):
        host, _space, rest = line.partition(" ")
        match = _LINE_REST.match(rest) if _HOST.match(host) else None
        problem = None
        if match is None:
            problem = "is not '%s'" % LINE_FORM
        elif host in nodes:
            problem = "names host %s a second time" % host
        elif int(match.group(1)) in owners:
            problem = "gives node id %s to %s as well" % (match.group(1), owners[int(match.group(1))])
        if problem:
            where = "%s line %d" % (source, first_line + index) if first_line else "%s.nodes line %d" % (source, index + 1)
            raise FabricModelError(where, line, problem, WRITE_FIX)
        node_id = int(match.group(1))
        owners[node_id] = host
        nodes[host] = {"node_id": node_id, "rails": match.group(2).split(", ") if match.group(2) else []}
    return nodes


def _child(node, key):
    """The value node of ``key`` in a YAML mapping node, or None."""
    if node is None or node.id != "mapping":
        return None
    for key_node, value_node in node.value:
        if key_node.id == "scalar" and key_node.value == key:
            return value_node
    return None


def _load_text(text, source):
    """``(variable, first_line)``: what a lock file sets as ``all.vars.rail_plan_lock`` (format 1: JSON; format 2:
    YAML), and the file's line of the first host of format 2's ``nodes`` (None where not known)."""
    if text.lstrip()[:1] == "{":  # format 1
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise FabricModelError(source, None, "is not JSON (%s)" % exc, WRITE_FIX) from None
        first_line = None
    else:
        # PyYAML comes with ansible-core on the controller, where a lock is read (imported here: a module that
        # imports this file on a host needs no PyYAML)
        import yaml  # pylint: disable=import-outside-toplevel
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
        try:
            root = loader.get_single_node()
            data = loader.construct_document(root) if root is not None else None
        except yaml.YAMLError as exc:
            raise FabricModelError(source, None, "is not YAML (%s)" % " ".join(str(exc).split()), WRITE_FIX) from None
        finally:
            loader.dispose()
        nodes = _child(_child(_child(_child(root, "all"), "vars"), LOCK_VAR), "nodes")
        # a literal block scalar (as written): its first line follows the line of the indicator
        first_line = nodes.start_mark.line + 2 if nodes is not None and nodes.style == "|" else None
    try:
        return data["all"]["vars"][LOCK_VAR], first_line
    except (KeyError, TypeError):
        raise FabricModelError(source, None, "does not set all.vars.%s" % LOCK_VAR, WRITE_FIX) from None


def lock_load(data, source):
    """Check a lock (a file's text, or the variable: the inventory's copy or the job artifact), in format 2 or 1, and
    return it in the internal form (:func:`plan_lock`'s)."""
    first_line = None
    if isinstance(data, str):
        data, first_line = _load_text(data, source)
    version = data.get("version") if isinstance(data, dict) else data
    if version not in (LOCK_VERSION, LEGACY_VERSION) or isinstance(version, bool):
        raise FabricModelError(source + ".version", version, "is not a plan lock of version %d or %d"
                               % (LOCK_VERSION, LEGACY_VERSION), PUBLISH_FIX)
    nodes_kind = str if version == LOCK_VERSION else dict
    for key, kind in (("cluster", str), ("model", str), ("nodes", nodes_kind)):
        if not isinstance(data.get(key), kind):
            raise FabricModelError("%s.%s" % (source, key), data.get(key), "is missing or not a %s" % kind.__name__,
                                   PUBLISH_FIX)
    if version == LOCK_VERSION:
        unknown = sorted(str(key) for key in data if key not in ("version", "cluster", "model", "nodes"))
        if unknown:
            raise FabricModelError("%s.%s" % (source, unknown[0]), data[unknown[0]], "is not a key of a plan lock",
                                   PUBLISH_FIX)
        nodes = _nodes_from_text(data["nodes"], source, first_line)
    else:
        nodes = data["nodes"]
        for host, entry in nodes.items():
            if not (isinstance(entry, dict) and isinstance(entry.get("node_id"), int)
                    and not isinstance(entry["node_id"], bool)
                    and isinstance(entry.get("rails"), list) and all(isinstance(r, str) for r in entry["rails"])):
                raise FabricModelError("%s.nodes.%s" % (source, host), entry,
                                       "is not {node_id: <int>, rails: [<fabric> <rail> <nic> <address>, ...]}",
                                       PUBLISH_FIX)
    return {"version": version, "cluster": data["cluster"], "model": data["model"], "nodes": nodes}


def legacy_path(lock_file):
    """The format 1 file beside ``lock_file`` (``rail_plan_lock.json`` beside ``rail_plan_lock.yml``), or None where
    ``lock_file`` has another name (a path of the user's own: no file beside it is ours)."""
    if not lock_file or os.path.basename(lock_file) != LOCK_FILE:
        return None
    return os.path.join(os.path.dirname(lock_file), LEGACY_LOCK_FILE)


def legacy_lock(text, path):
    """The lock of a format 1 file that this collection wrote, in the internal form; any other file at that path (one
    that is not JSON, sets more than ``all.vars.rail_plan_lock``, or is not a format 1 lock) raises the error naming
    it: it is not ours to remove."""
    fix = ("move or remove it yourself (the plan job replaces only the old lock it wrote), or name another lock file "
           "(rail_plan_lock_file)")
    try:
        data = json.loads(text)
        keys = (sorted(data), sorted(data["all"]), sorted(data["all"]["vars"]))
        if keys != (["all"], ["vars"], [LOCK_VAR]) or set(data["all"]["vars"][LOCK_VAR]) != {
                "version", "cluster", "model", "nodes"} or data["all"]["vars"][LOCK_VAR]["version"] != LEGACY_VERSION:
            raise ValueError("other keys")
        lock = lock_load(data["all"]["vars"][LOCK_VAR], path)
        if any(set(entry) != {"node_id", "rails"} for entry in lock["nodes"].values()):
            raise ValueError("other keys")
    except (ValueError, TypeError, KeyError, AttributeError, FabricModelError):
        raise FabricModelError(path, None, "is in the way of the plan lock %s and is not a plan lock of format 1 that "
                               "this collection wrote" % LOCK_FILE, fix) from None
    return lock


def _read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def published(var_data, file_path, file_text):
    """``(source, lock)`` of the newest published lock, ``(None, None)`` when there is none.

    The file, where it exists, is the newest word: a plan job that just ran in the same ansible-playbook
    command rewrote it after the inventory (and its copy of the lock as the variable) was loaded. Where
    ``file_path`` is the default name and the file does not exist, a format 1 file beside it (the lock of a plan
    job before format 2, until the plan job replaces it). Without a file (an AWX job, whose inventory is not a
    directory of the project), the variable: the inventory's copy, or the plan job's artifact passed on by the
    workflow as an extra var."""
    legacy = legacy_path(file_path) if file_text is None else None
    if legacy:
        file_text = _read(legacy)
        file_path = legacy
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
