#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: maintenance_k8s
short_description: Take a Kubernetes node out of service for a maintenance window and give it back, with kubectl
version_added: 0.2.0
author: ainet.fabric contributors (@ainet)
description:
  - The Kubernetes backend of the C(maintenance) role, run on the controller with C(kubectl) and the kubeconfig
    the C(k8s_objects) role takes; every command is an argument list.
  - The window's state is the node annotation C(ainet.fabric/maintenance) (the same mark as Slurm's reason,
    C(plugins/module_utils/maintenance/window.py)); a node cordoned without it belongs to someone else and is
    left alone.
  - V(enter) cordons the node with the mark, waits until the pods of O(job_selector) (the training jobs) have
    finished - a timeout stops the wait, the node stays cordoned, nothing is killed - then evicts the other pods
    through the Eviction API, so that PodDisruptionBudgets hold (a 429 refusal is waited on and retried, never
    forced). DaemonSet, mirror and finished pods stay. With O(operator), a C(NodeMaintenance) of NVIDIA's
    maintenance operator (requestorID C(ainet.fabric), C(waitForPodCompletion) with the selector and no timeout,
    C(drainSpec) not forced) does it instead, and its C(Ready) condition is waited for.
  - V(mark) records the next phase in the annotation; V(leave) uncordons (or deletes our C(NodeMaintenance)) and
    removes the annotation, only on a node that carries it. V(read) reads the nodes and whether a training pod runs
    on each.
  - The sequence is tested against a fake API server in the unit tests; no API server runs in this project's CI.
options:
  state:
    description: What to do.
    type: str
    choices: [read, enter, mark, leave]
    default: read
  nodes:
    description: The Kubernetes node names (V(read)) or the one node to act on.
    type: list
    elements: str
    required: true
  kubeconfig:
    description: The kubeconfig kubectl uses.
    type: path
    required: true
  job_selector:
    description: Equality-based label selector of the training jobs' pods (C(app=training)).
    type: str
    required: true
  steps:
    description: The window's steps (the mark names them).
    type: list
    elements: str
    default: []
  phase:
    description: The phase V(mark) records.
    type: str
  boot:
    description: The boot id before a reboot (V(mark)).
    type: str
  tries:
    description: Reboots this window issued so far (V(mark)).
    type: int
  check:
    description: The failed check (V(mark) with phase C(failed)).
    type: str
  operator:
    description: Use NVIDIA's maintenance operator (a C(NodeMaintenance) per window) instead of our own drain.
    type: bool
    default: false
  namespace:
    description: The namespace of the C(NodeMaintenance) objects.
    type: str
    default: default
  timeout:
    description: Seconds V(enter) waits for the jobs and the evictions.
    type: int
    default: 86400
  run:
    description:
      - This run's id, written in the annotation (C(run=)); the annotation is the window's lock, set with the node's
        resourceVersion (a 409 Conflict is a race lost to another run). Another live run's window is left to it.
    type: str
  stale_after:
    description: Seconds after which another run's annotation that made no progress (its managedFields time) is taken over.
    type: int
    default: 3600
  force:
    description: Evict pods no controller manages (kubectl drain C(--force)); the operator's C(drainSpec.force).
    type: bool
    default: false
  delete_emptydir_data:
    description: Evict pods with an emptyDir volume (kubectl drain C(--delete-emptydir-data)); C(drainSpec.deleteEmptyDir).
    type: bool
    default: false
  interval:
    description: Seconds between two passes while waiting.
    type: int
    default: 10
attributes:
  check_mode:
    support: full
    description: Reads the nodes; changes nothing.
  diff_mode:
    support: none
    description: No diff.
"""

EXAMPLES = r"""
- name: Cordon gpu01, wait for its training pods, evict the rest
  ainet.fabric.maintenance_k8s:
    state: enter
    nodes: [gpu01]
    steps: [reboot]
    kubeconfig: /etc/ainet/kubeconfig
    job_selector: app=training
  delegate_to: localhost
"""

RETURN = r"""
nodes:
  description: Per node - name, out (cordoned), reason (our annotation), idle (no training pod runs there), owner.
  returned: always
  type: dict
"""

import datetime
import json
import re
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.maintenance import k8s
from ansible_collections.ainet.fabric.plugins.module_utils.maintenance import window

_DNS = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
NM_RESOURCE = "nodemaintenances.maintenance.nvidia.com"


class Kubectl(object):
    """The api of module_utils/maintenance/k8s.py over kubectl."""

    def __init__(self, module):
        self.module = module
        self.kubectl = module.get_bin_path("kubectl", required=True)
        self.base = [self.kubectl, "--kubeconfig", module.params["kubeconfig"]]

    def _run(self, args, data=None, check=True):
        rc, out, err = self.module.run_command(self.base + args, data=data, binary_data=data is not None)
        if check and rc != 0:
            raise window.MaintenanceError("kubectl %s: %s" % (" ".join(args[:3]), (err or out).strip()[:300]))
        return rc, out, err

    def get_node(self, name):
        return json.loads(self._run(["get", "node", k8s.check_node_name(name), "-o", "json"])[1])

    def list_nodes(self):
        """Every Node, one call (the group-wide read of the limits)."""
        items = json.loads(self._run(["get", "nodes", "-o", "json"])[1]).get("items") or []
        return dict(((n.get("metadata") or {}).get("name"), n) for n in items)

    def patch_node(self, name, patch):
        rc, out, err = self._run(["patch", "node", k8s.check_node_name(name), "--type", "merge", "-p", json.dumps(patch)],
                                 check=False)
        if rc != 0 and "(Conflict)" in (err or out):
            raise window.MaintenanceError("%s: another writer changed the node at the same moment (409 Conflict): "
                                          "the window was not taken, nothing done; run again" % name)
        if rc != 0:
            raise window.MaintenanceError("kubectl patch node: %s" % (err or out).strip()[:300])

    def list_pods(self, node):
        out = self._run(["get", "pods", "-A", "--field-selector", "spec.nodeName=%s" % k8s.check_node_name(node),
                         "-o", "json"])[1]
        return json.loads(out).get("items") or []

    def evict(self, namespace, name):
        for value in (namespace, name):
            if not isinstance(value, str) or not _DNS.match(value):
                raise window.MaintenanceError("kubectl: pod %r/%r is no DNS name: not evicted" % (namespace, name))
        body = json.dumps({"apiVersion": "policy/v1", "kind": "Eviction",
                           "metadata": {"name": name, "namespace": namespace}})
        rc, out, err = self._run(["create", "--raw", "/api/v1/namespaces/%s/pods/%s/eviction" % (namespace, name),
                                  "-f", "-"], data=body, check=False)
        return eviction_status(rc, err or out)

    def apply(self, obj):
        self._run(["apply", "-f", "-"], data=json.dumps(obj))

    def get(self, namespace, name):
        out = self._run(["get", NM_RESOURCE, "-n", namespace, name, "-o", "json", "--ignore-not-found"])[1]
        return json.loads(out) if out.strip() else None

    def delete(self, namespace, name):
        self._run(["delete", NM_RESOURCE, "-n", namespace, name, "--ignore-not-found"])

    def jobs_by_node(self, selector):
        out = self._run(["get", "pods", "-A", "-l", selector, "-o", "json"])[1]
        counts = {}
        for pod in json.loads(out).get("items") or []:
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            node = (pod.get("spec") or {}).get("nodeName")
            counts[node] = counts.get(node, 0) + 1
        return counts

    @staticmethod
    def now():
        return time.time()

    @staticmethod
    def sleep(seconds):
        time.sleep(seconds)


def eviction_status(rc, text):
    """The HTTP status of an eviction from kubectl's exit and message (``Error from server (TooManyRequests)``)."""
    if rc == 0:
        return 201
    match = re.search(r"Error from server \((\w+)\)", text or "")
    reason = match.group(1) if match else ""
    return {"TooManyRequests": 429, "NotFound": 404, "Forbidden": 403, "Conflict": 409}.get(reason, 500)


def run_module():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", default="read", choices=["read", "enter", "mark", "leave"]),
            nodes=dict(type="list", elements="str", required=True),
            kubeconfig=dict(type="path", required=True),
            job_selector=dict(type="str", required=True),
            steps=dict(type="list", elements="str", default=[]),
            phase=dict(type="str"),
            boot=dict(type="str"),
            tries=dict(type="int"),
            check=dict(type="str"),
            operator=dict(type="bool", default=False),
            namespace=dict(type="str", default="default"),
            timeout=dict(type="int", default=86400),
            interval=dict(type="int", default=10),
            run=dict(type="str"),
            stale_after=dict(type="int", default=3600),
            force=dict(type="bool", default=False),
            delete_emptydir_data=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    params = module.params
    result = {"changed": False, "nodes": {}}
    try:
        names = [k8s.check_node_name(n) for n in params["nodes"]]
        terms = k8s.parse_selector(params["job_selector"])
        api = Kubectl(module)
        jobs = api.jobs_by_node(params["job_selector"])
        now = datetime.datetime.utcnow()
        listed = api.list_nodes() if len(names) > 1 else {}
        missing = [n for n in names if len(names) > 1 and n not in listed]
        if missing:
            raise window.MaintenanceError("kubectl: no node %s in the cluster (maintenance_node_name)"
                                          % ", ".join(missing[:5]))
        for name in names:
            record = k8s.node_record(listed[name] if name in listed else api.get_node(name), now)
            record["idle"] = not jobs.get(name)
            record["owner"] = window.owner(record)
            result["nodes"][name] = record
        state = params["state"]
        if state == "read" or module.check_mode:
            module.exit_json(**result)
        if len(names) != 1:
            raise window.MaintenanceError("maintenance_k8s: state %s acts on one node" % state)
        node, record = names[0], result["nodes"][names[0]]
        steps = window.check_steps(params["steps"])
        obj = k8s.node_maintenance(node, params["job_selector"], namespace=params["namespace"],
                                   delete_empty_dir=params["delete_emptydir_data"], force=params["force"])
        run = window.check_run(params["run"], "run") if params["run"] is not None else None
        other = window.holder(record, run, params["stale_after"])
        if state == "enter":
            if record["owner"] == "foreign":
                result["skipped_reason"] = "%s: cordoned by someone else: left as it is" % node
                module.exit_json(**result)
            if other is not None:
                result["skipped_reason"] = "%s: its window is held by another run (run=%s): left to it" % (node, other)
                module.exit_json(**result)
            mark = window.format_mark(steps, "drain", run=run)
            current = window.parse_mark(record["reason"])
            if current is not None and run is not None and current["run"] != run:
                # a stale run's window (or an earlier version's): taken over where it stands, on this version only
                taken = window.format_mark(current["steps"], current["phase"], boot=current["boot"],
                                           tries=current["tries"] or None, check=current["check"], run=run)
                api.patch_node(node, {"metadata": {"annotations": {k8s.ANNOTATION: taken},
                                                   "resourceVersion": record["resource_version"]}})
            result["changed"] = True
            if params["operator"]:
                if record["owner"] is None:
                    patch = k8s.mark_patch(mark)
                    patch["metadata"]["resourceVersion"] = record["resource_version"]
                    api.patch_node(node, patch)
                api.apply(obj)
                deadline = time.time() + params["timeout"]
                while True:
                    current = api.get(params["namespace"], obj["metadata"]["name"])
                    if k8s.nm_ready(current):
                        break
                    failed = k8s.nm_failed(current)
                    if failed:
                        raise window.MaintenanceError("%s: the maintenance operator failed: %s" % (node, failed))
                    if time.time() >= deadline:
                        raise window.MaintenanceError("%s: NodeMaintenance not Ready after %ds: the node stays "
                                                      "cordoned; run again to go on" % (node, params["timeout"]))
                    time.sleep(max(1, params["interval"]))
            else:
                k8s.enter(api, node, mark, terms, params["timeout"], max(1, params["interval"]), params["force"],
                          params["delete_emptydir_data"])
        elif state == "mark":
            if record["owner"] != "ours":
                raise window.MaintenanceError("%s: no window of ours on this node: not touched" % node)
            if other is not None:
                raise window.MaintenanceError("%s: its window is held by another run (run=%s): not touched"
                                              % (node, other))
            mark = window.format_mark(steps or window.parse_mark(record["reason"])["steps"], params["phase"],
                                      boot=params["boot"], tries=params["tries"], check=params["check"], run=run)
            if mark != record["reason"]:
                api.patch_node(node, k8s.mark_patch(mark))
                result["changed"] = True
        elif state == "leave":
            if params["operator"] and record["owner"] == "ours":
                api.delete(params["namespace"], obj["metadata"]["name"])
                api.patch_node(node, {"metadata": {"annotations": {k8s.ANNOTATION: None}}})
                result["changed"] = True
            else:
                result["changed"] = k8s.leave(api, node)
    except FabricError as exc:
        module.fail_json(msg=str(exc), **result)
    module.exit_json(**result)


def main():
    run_module()


if __name__ == "__main__":
    main()
