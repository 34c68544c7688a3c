# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.k8s_objects``: plan, render the fabrics' Kubernetes objects, check them
against the plan (always) and against their CRDs (when a CRD directory is given), write one file per kind, and with
a kubeconfig compare them with the cluster (``kubectl diff``) and apply the files that differ (``kubectl apply``).

The logic lives in ``module_utils/workload``; this plugin reads the arguments, writes files and runs kubectl."""

from __future__ import annotations

import os
import subprocess
import tempfile

from ansible_collections.ainet.fabric.plugins.module_utils.common.report_escape import one_line
from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import read_text, write_atomic
from ansible_collections.ainet.fabric.plugins.module_utils.plan import plan_lock
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_objects, k8s_shapes, k8s_validate
from ansible_collections.ainet.fabric.plugins.plugin_utils import k8s_dump
from ansible_collections.ainet.fabric.plugins.plugin_utils.plan_action import PlanAction

# What the action reads of each node of node_group (as hostvars[node] gives it): the plan's inputs, and the facts
# for the PFs' PCI addresses.
NODE_VARS = ("fabric_node_id", "fabric_rail_interfaces", "ansible_facts")

ARGUMENT_SPEC = dict(
    cluster=dict(type="dict"),
    nodes=dict(type="dict"),
    node_group=dict(type="str"),
    dest=dict(type="path"),
    crd_dir=dict(type="path"),
    node_names=dict(type="dict", default={}),
    rail_pci=dict(type="dict", default={}),
    remove_stale=dict(type="bool", default=True),
    kubeconfig=dict(type="path"),
)


class ActionModule(PlanAction):
    ARGUMENT_SPEC = ARGUMENT_SPEC
    ARGUMENT_RULES = dict(mutually_exclusive=[["nodes", "node_group"]], required_one_of=[["nodes", "node_group"]])
    NODE_GROUP_VARIABLE = "k8s_objects_node_group"
    NODE_VARS = NODE_VARS
    PAUSE_GC = True

    def act(self, result, args, task_vars):
        # With node_group, the group's nodes and their variables read once, as hostvars gives them
        # (plugin_utils/inventory_vars), without templating a map of every node into the task's arguments. The model:
        # the task's fabric_cluster, read untemplated unless it holds a template (PlanAction.cluster): the model of
        # 2,048 ToRs as an argument is templated, checked and sent back with the result (about a second). On a host
        # outside the node group (the job under a --limit without a node), the group's first node's.
        plan, variables = self.plan_and_variables(args, task_vars)
        pci = k8s_objects.rail_pci(plan, args["rail_pci"], variables)
        objects = k8s_objects.render(plan, node_names=args["node_names"], pci=pci)
        problems = k8s_objects.check_against_plan(plan, objects, node_names=args["node_names"])
        if problems:
            return dict(result, failed=True, problems=problems,
                        msg="k8s_objects: %d object(s) disagree with the plan: %s" % (len(problems), problems[0]))
        notes = []
        crd_dir = args["crd_dir"] or os.environ.get("AINET_K8S_CRD_DIR")
        # Each object split once, for the CRD check and the files; without the check the files split each object once
        # anyway, and the table of every object's split would cost 0.1 s at 16,384 nodes for nothing.
        shapes = k8s_shapes.Shapes() if crd_dir else None
        validated = False
        if crd_dir:
            try:
                violations, unchecked = k8s_validate.validate(objects, k8s_validate.load_crds(crd_dir), shapes)
            except k8s_validate.ValidatorUnavailable as exc:
                notes.append("CRD schemas not checked: %s" % exc)
            else:
                if violations:
                    return dict(result, failed=True, violations=violations,
                                msg="k8s_objects: %d violation(s) of the CRD schemas in %s: %s"
                                    % (len(violations), crd_dir, violations[0]))
                validated = True
                if unchecked:
                    notes.append("no CRD in %s for %s: not checked" % (crd_dir, ", ".join(unchecked)))
        else:
            notes.append("CRD schemas not checked: no crd_dir (or AINET_K8S_CRD_DIR) given")
        cluster = plan["cluster"]["name"]
        files = dict((name, k8s_dump.dump(items[0]["kind"], cluster, items, shapes=shapes))
                     for name, items in k8s_objects.by_file(objects).items())
        counts = {}
        for obj in objects:
            counts[obj["kind"]] = counts.get(obj["kind"], 0) + 1
        changed, diffs, removed = [], [], []
        dest = args["dest"]
        if dest:
            for name, text in sorted(files.items()):
                path = os.path.join(dest, name)
                before = read_text(path)
                if before != text:
                    changed.append(path)
                    if self._task.diff:  # a diff of 4 MB of pools costs a second: only when asked for
                        diffs.append(plan_lock.short_diff(before, text, path))
            if args["remove_stale"] and os.path.isdir(dest):
                # Files of a kind this run no longer renders (a CNI or IPAM switched), only ours.
                for _kind, name in k8s_objects.FILES:
                    path = os.path.join(dest, name)
                    if name not in files and os.path.isfile(path) and \
                            (read_text(path) or "").startswith(k8s_dump.HEADER.split("%s", 1)[0]):
                        removed.append(path)
            if not self._task.check_mode:
                try:
                    for path in changed:
                        write_atomic(path, files[os.path.basename(path)], "0644")
                    for path in removed:
                        os.remove(path)
                except OSError as exc:
                    return dict(result, failed=True, msg="k8s_objects: could not write %s: %s" % (dest, exc))
        differ, applied = [], []
        if args["kubeconfig"]:
            failure = self._apply(args["kubeconfig"], dest, files, differ, applied)
            if failure:
                return dict(result, failed=True, msg=failure, written=changed, removed=removed, differ=differ,
                            applied=applied, changed=bool(changed or removed or applied))
        result.update(changed=bool(changed or removed or differ), files=sorted(files), written=changed,
                      removed=removed, differ=differ, applied=applied, counts=counts, validated=validated,
                      notes=notes, dest=dest, objects=len(objects))
        if self._task.diff and diffs:
            result["diff"] = {"prepared": "".join(diffs)}
        return result

    def _apply(self, kubeconfig, dest, files, differ, applied):
        """kubectl on the controller, file by file in file order: ``kubectl diff`` says which files would change
        anything (exit 1: differences; above 1: an error), and only those are applied, server-side, with this
        collection as the field manager (``differ``, ``applied``: the file names). In check mode, or without
        ``dest``, the files compared are copies of this run's (in a private temporary directory), and nothing is
        applied. Returns the one-line failure, or None."""
        with tempfile.TemporaryDirectory(prefix="ainet-k8s.") as tmp:
            where = {}
            for name in sorted(files):
                if dest and not self._task.check_mode:
                    where[name] = os.path.join(dest, name)
                else:
                    where[name] = os.path.join(tmp, name)
                    write_atomic(where[name], files[name], "0600")
            for verb in ("diff", "apply"):
                if verb == "apply" and self._task.check_mode:
                    break
                for name in sorted(files) if verb == "diff" else list(differ):
                    argv = k8s_objects.kubectl_argv(kubeconfig, verb, where[name])
                    try:
                        done = subprocess.run(argv, capture_output=True, text=True, check=False)
                    except OSError as exc:
                        return "k8s_objects: could not run %s: %s" % (argv[0], one_line(exc))
                    if verb == "diff" and done.returncode == 1:
                        differ.append(name)
                    elif done.returncode:
                        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
                        return "k8s_objects: kubectl %s of %s failed (exit %d): %s" % (
                            verb, name, done.returncode, one_line(said[0] if said else "no message"))
                    elif verb == "apply":
                        applied.append(name)
        return None
