# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.topology``: the schedulers' topology (Slurm, node labels, Kueue, Volcano) from
the plan, the rail groups judged against the cabling check's result first, the files written under ``dest``.

The node group and the model are checked first, with the jobs' one-line refusals (the topology job has no input check
of its own: playbooks/topology.yml). The model is not an argument: the task's ``fabric_cluster`` is read untemplated, or
the node group's first node's where the task's host is not a node (``PlanAction.cluster``); the result carries the
summary lines the role prints (``summary``, ``labels_summary``), so that no later task templates the large values.

The logic lives in ``module_utils/workload/topology.py`` and ``module_utils/cabling/rail_group_check.py``; this
plugin reads the arguments and the files and writes files."""

from __future__ import annotations

import json
import os

from ansible_collections.ainet.fabric.plugins.module_utils.cabling import rail_group_check
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import read_text
from ansible_collections.ainet.fabric.plugins.module_utils.plan import plan_lock
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_validate, topology
from ansible_collections.ainet.fabric.plugins.plugin_utils.plan_action import PlanAction
from ansible_collections.ainet.fabric.plugins.plugin_utils.reports import write_reports

ARGUMENT_SPEC = dict(
    cluster=dict(type="dict"),
    nodes=dict(type="dict"),
    node_group=dict(type="str"),
    dest=dict(type="path", required=True),
    cabling=dict(type="dict"),
    cabling_file=dict(type="path"),
    require_cabling=dict(type="bool", default=True),
    slurm_node_names=dict(type="dict", default={}),
    k8s_node_names=dict(type="dict", default={}),
    label_keys=dict(type="str", default="ainet", choices=list(topology.LABEL_KEYS)),
    topograph_fabric=dict(type="str"),
    kueue_api=dict(type="str", default="v1beta2", choices=list(topology.KUEUE_APIS)),
    slurm_yaml_types=dict(type="dict", default={}),
    crd_dir=dict(type="path"),
    nodes_read=dict(type="list", elements="dict"),
)


def _read_cabling(args):
    """The cabling check's result: ``cabling`` as given, else ``cabling_file`` (the cabling job's cabling.json),
    else None (not checked)."""
    if args["cabling"] is not None:
        return args["cabling"]
    path = args["cabling_file"]
    if not path or not os.path.isfile(path):
        return None
    try:
        data = json.loads(read_text(path) or "")
    except ValueError as exc:
        raise FabricError("topology: cabling_file %s is not the cabling check's JSON (%s); run playbooks/cabling.yml "
                          "again" % (path, exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise FabricError("topology: cabling_file %s holds no findings list; run playbooks/cabling.yml again" % path)
    return data


class ActionModule(PlanAction):
    ARGUMENT_SPEC = ARGUMENT_SPEC
    ARGUMENT_RULES = dict(mutually_exclusive=[["nodes", "node_group"], ["cabling", "cabling_file"]],
                          required_one_of=[["nodes", "node_group"]])
    NODE_GROUP_VARIABLE = "topology_node_group"
    PAUSE_GC = True

    def act(self, result, args, task_vars):
        # The node group's hosts read once (a missing or empty group refused naming topology_node_group), then the
        # model: the task's fabric_cluster untemplated (as "{{ fabric_cluster }}" the model of 2,048 ToRs is templated,
        # checked and sent back with the result: about a second), or the group's first node's where the task's host is
        # not a node (the job under a --limit without one); rail_plan refuses a bad model in its one line.
        plan = self.plan(args, task_vars)
        topos = topology.topologies(plan)
        cabling = _read_cabling(args)
        agreement = None
        if cabling is not None or args["require_cabling"]:
            agreement = rail_group_check.agreement(topos, cabling)
        names = ("slurm_node_names", "k8s_node_names", "label_keys", "topograph_fabric", "kueue_api", "slurm_yaml_types")
        options = dict((k, args[k]) for k in names)
        label_diff = None
        if args["nodes_read"] is not None:
            # Labels are compared with the nodes as read; only nodes that exist are written (a server-side apply of
            # a Node that is not there would create one).
            existing = set(((n or {}).get("metadata") or {}).get("name") for n in args["nodes_read"])
            options["existing_nodes"] = existing
        out = topology.render(plan, options, agreement, topos)
        if args["nodes_read"] is not None:
            label_diff = topology.label_diff(out["labels"], args["nodes_read"], args["label_keys"])
        notes = list(n for t in topos.values() for n in t["notes"])
        validated = False
        crd_dir = args["crd_dir"] or os.environ.get("AINET_K8S_CRD_DIR")
        objects = out["objects"]["kueue"] + out["objects"]["volcano"]
        if crd_dir and objects:
            try:
                violations, unchecked = k8s_validate.validate(objects, k8s_validate.load_crds(crd_dir))
            except k8s_validate.ValidatorUnavailable as exc:
                notes.append("CRD schemas not checked: %s" % exc)
            else:
                if violations:
                    return dict(result, failed=True, violations=violations,
                                msg="topology: %d violation(s) of the CRD schemas in %s: %s"
                                    % (len(violations), crd_dir, violations[0]))
                validated = not unchecked
                if unchecked:
                    notes.append("no CRD in %s for %s: not checked" % (crd_dir, ", ".join(unchecked)))
        elif objects:
            notes.append("CRD schemas not checked: no crd_dir (or AINET_K8S_CRD_DIR) given")
        files = dict((os.path.join(args["dest"], name), text) for name, text in out["files"].items())
        diffs = []
        if self._task.diff:
            for path, text in sorted(files.items()):
                before = read_text(path)
                if before != text:
                    diffs.append(plan_lock.short_diff(before, text, path))
        # A file of ours that this run does not render (every group of it withheld, a fabric gone) is removed: a
        # stale topology must not stay published beside the new one.
        stale = sorted(path for path in (os.path.join(args["dest"], n) for n in topology.file_names(topos))
                       if path not in files and os.path.isfile(path) and topology.own_file(read_text(path)))
        changed = write_reports(files, self._task.check_mode, "topology") or bool(stale)
        if not self._task.check_mode:
            for path in stale:
                try:
                    os.remove(path)
                except OSError as exc:
                    raise FabricError("topology: could not remove the stale %s: %s" % (path, exc.strerror)) from None
        withheld = dict((f, dict((g, v["verdict"]) for g, v in groups.items())) for f, groups in out["withheld"].items())
        result.update(changed=changed, dest=args["dest"], files=sorted(out["files"]), removed=stale, withheld=withheld,
                      why=dict((f, dict((g, v["why"][:5]) for g, v in groups.items()))
                               for f, groups in out["withheld"].items()),
                      groups=dict((f, len(t["groups"])) for f, t in topos.items()),
                      cabling_checked=cabling is not None, label_diff=label_diff, notes=notes, validated=validated,
                      k8s_files=sorted(n for n in out["files"] if n.startswith("k8s/")))
        result["summary"] = topology.summary(args["dest"], result["files"], result["groups"], withheld,
                                             result["cabling_checked"], validated, notes)
        result["labels_summary"] = None if label_diff is None else topology.labels_summary(label_diff)
        if diffs:
            result["diff"] = {"prepared": "".join(diffs)}
        return result
