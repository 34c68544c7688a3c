# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes as a maintenance backend: cordon, wait for the training pods, evict the rest, uncordon.

The sequence runs against an *api* object with the few calls it needs (``get_node``, ``patch_node`` - a JSON
merge patch -, ``list_pods`` on a node, ``evict`` through the Eviction API returning the HTTP status, ``sleep``,
``now``; and for NVIDIA's maintenance operator ``create``, ``get`` and ``delete`` of a ``NodeMaintenance``). The
module gives it ``kubectl`` with the kubeconfig the k8s_objects role takes; the unit tests give it a fake API
that answers as the API server documents (kubernetes.io, "API-initiated Eviction"): an eviction a
PodDisruptionBudget forbids is refused with 429 Too Many Requests and is waited on and retried, never forced;
one it allows is 200/201 and the pod terminates; a pod already gone is 404.

* The window's mark (window.format_mark) is the node annotation :data:`ANNOTATION`; a node cordoned without it
  belongs to someone else and is left alone.
* Pods of ``selector`` (the training jobs) are waited for until they finish - a timeout stops the wait with one
  line and the node stays cordoned; nothing is killed. Only then are the other pods evicted. DaemonSet pods,
  mirror (static) pods and finished pods stay, as ``kubectl drain`` leaves them.
* With NVIDIA's maintenance operator (Mellanox/maintenance-operator api/v1alpha1/nodemaintenance_types.go) a
  ``NodeMaintenance`` (requestorID ``ainet.fabric``, ``waitForPodCompletion`` with the selector and no timeout,
  ``drainSpec`` never forced) does the same; its ``Ready`` condition says the node is drained, and deleting it
  ends the maintenance (the operator uncordons).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re

from ansible_collections.ainet.fabric.plugins.module_utils.maintenance.window import MaintenanceError, parse_mark

ANNOTATION = "ainet.fabric/maintenance"
REQUESTOR = "ainet.fabric"
NM_API = "maintenance.nvidia.com/v1alpha1"
NM_KIND = "NodeMaintenance"
_LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
_NODE = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def check_node_name(name, field="maintenance_k8s_node_name"):
    if not isinstance(name, str) or not _NODE.match(name):
        raise MaintenanceError("%s: %r is not a Kubernetes node name (lower-case DNS subdomain)" % (field, name))
    return name


def parse_selector(selector, field="maintenance_k8s_job_selector"):
    """Equality-based label selector (``a=b,c!=d,e,!f``) as ``[(key, op, value)]``; set-based terms refused."""
    terms = []
    for raw in (selector or "").split(","):
        term = raw.strip()
        if not term:
            continue
        match = re.match(r"^(!)?([^=!]+?)\s*(?:(==|=|!=)\s*(.*))?$", term)
        if not match:
            raise MaintenanceError("%s: %r: %r is not an equality-based selector term" % (field, selector, term))
        neg, key, op, value = match.groups()
        if not _LABEL_KEY.match(key) or (value is not None and not _LABEL_VALUE.match(value)) or (neg and op):
            raise MaintenanceError("%s: %r: %r is not an equality-based selector term (key=value, key!=value, key, "
                                   "!key)" % (field, selector, term))
        terms.append((key, "absent" if neg else "exists" if op is None else "!=" if op == "!=" else "=", value))
    if not terms:
        raise MaintenanceError("%s: empty: name the label of the training jobs' pods (e.g. app=training)" % field)
    return terms


def matches(labels, terms):
    labels = labels or {}
    for key, op, value in terms:
        if op == "exists" and key not in labels or op == "absent" and key in labels:
            return False
        if op == "=" and labels.get(key) != value or op == "!=" and labels.get(key) == value:
            return False
    return True


def mark_age(node, now):
    """Seconds since our annotation was last written (the newest managedFields entry that owns it), or None."""
    newest = None
    for entry in (node.get("metadata") or {}).get("managedFields") or []:
        if '"f:%s"' % ANNOTATION not in json.dumps((entry or {}).get("fieldsV1") or {}):
            continue
        try:
            stamp = datetime.datetime.strptime(str(entry.get("time")), "%Y-%m-%dT%H:%M:%SZ")
        except ValueError:
            continue
        newest = stamp if newest is None or stamp > newest else newest
    return None if newest is None else max(0, int((now - newest).total_seconds()))


def node_record(node, now=None):
    """``{"name", "out", "reason", "resource_version", "mark_age"}`` of a Node object; ``now`` a naive UTC time."""
    meta = node.get("metadata") or {}
    return {"name": meta.get("name"), "out": bool((node.get("spec") or {}).get("unschedulable")),
            "reason": (meta.get("annotations") or {}).get(ANNOTATION) or "",
            "resource_version": meta.get("resourceVersion"),
            "mark_age": mark_age(node, now) if now is not None else None}


def cordon_patch(mark, resource_version=None):
    """Cordon with our mark; with ``resource_version`` the API server applies it only to that version of the node
    (optimistic concurrency: a 409 Conflict is a race lost to another writer)."""
    meta = {"annotations": {ANNOTATION: mark}}
    if resource_version:
        meta["resourceVersion"] = resource_version
    return {"spec": {"unschedulable": True}, "metadata": meta}


def mark_patch(mark):
    return {"metadata": {"annotations": {ANNOTATION: mark}}}


def uncordon_patch():
    return {"spec": {"unschedulable": None}, "metadata": {"annotations": {ANNOTATION: None}}}


def _controller(pod):
    """The pod's controller (the ownerReference with ``controller: true``, metav1.GetControllerOf), or None."""
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if (ref or {}).get("controller") is True:
            return ref
    return None


def _finished(pod):
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _stays(pod):
    """Pods a drain leaves: DaemonSet pods, mirror pods, finished pods (k8s.io/kubectl pkg/drain/filters.go
    daemonSetFilter, mirrorPodFilter)."""
    meta = pod.get("metadata") or {}
    if (_controller(pod) or {}).get("kind") == "DaemonSet":
        return True
    if "kubernetes.io/config.mirror" in (meta.get("annotations") or {}):
        return True
    return _finished(pod)


def refusals(pods, force=False, delete_emptydir_data=False):
    """The pods kubectl drain refuses to evict without an explicit option (pkg/drain/filters.go): one with an
    emptyDir volume (localStorageFilter, ``--delete-emptydir-data``: its data is lost) and one no controller
    manages (unreplicatedFilter, ``--force``: it is never recreated). Finished pods are always evictable."""
    out = []
    for pod in pods:
        if _stays(pod):
            continue
        if not delete_emptydir_data and any("emptyDir" in (v or {}) for v in (pod.get("spec") or {}).get("volumes")
                                            or []):
            out.append("%s has an emptyDir volume (maintenance_k8s_delete_emptydir_data)" % _name(pod))
        elif not force and _controller(pod) is None:
            out.append("%s is managed by no controller (maintenance_k8s_force)" % _name(pod))
    return out


def _name(pod):
    meta = pod.get("metadata") or {}
    return "%s/%s" % (meta.get("namespace"), meta.get("name"))


def drain_once(api, node, terms, force=False, delete_emptydir_data=False):
    """One pass: ``(done, waiting)``. Training pods (``terms``) still running: wait for them, evict nothing.
    Then, unless a pod is refused (:func:`refusals`: nothing is evicted, one error names them all), each other pod
    is evicted once per pass; a 429 (a PodDisruptionBudget) is left for the next pass."""
    pods = [p for p in api.list_pods(node) if not _stays(p)]
    jobs = [p for p in pods if matches((p.get("metadata") or {}).get("labels"), terms)]
    if jobs:
        return False, ["job %s" % _name(p) for p in jobs]
    refused = refusals(pods, force, delete_emptydir_data)
    if refused:
        raise MaintenanceError("%s: not drained, as kubectl drain would not: %s; nothing was evicted, the node stays "
                               "cordoned" % (node, "; ".join(refused[:5])))
    waiting = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            waiting.append("terminating %s" % _name(pod))
            continue
        status = api.evict(meta.get("namespace"), meta.get("name"))
        if status in (200, 201):
            waiting.append("evicted %s" % _name(pod))
        elif status == 404:
            continue
        elif status == 429:
            waiting.append("eviction of %s refused by a PodDisruptionBudget (429): retried" % _name(pod))
        else:
            raise MaintenanceError("%s: the eviction of %s answered %s: the node stays cordoned"
                                   % (node, _name(pod), status))
    return not waiting, waiting


def enter(api, node, mark, terms, timeout, interval=5, force=False, delete_emptydir_data=False):
    """Open (or go on with) the window on ``node``: cordon with our mark, wait for the jobs, evict the rest.
    Returns ``"skip"`` for a node cordoned by someone else, ``"drained"`` when done; a timeout raises with what
    is still running (the node stays cordoned, nothing was killed)."""
    record = node_record(api.get_node(node))
    if record["out"] and parse_mark(record["reason"]) is None:
        return "skip"
    if parse_mark(record["reason"]) is None:
        api.patch_node(node, cordon_patch(mark, record.get("resource_version")))
    elif not record["out"]:
        api.patch_node(node, {"spec": {"unschedulable": True}})
    start = api.now()
    while True:
        done, waiting = drain_once(api, node, terms, force, delete_emptydir_data)
        if done:
            return "drained"
        if api.now() - start >= timeout:
            raise MaintenanceError("%s: still waiting after %ds for %s: the node stays cordoned (nothing was "
                                   "killed); run again to go on" % (node, timeout, "; ".join(waiting[:5])))
        api.sleep(interval)


def leave(api, node):
    """Give the node back: uncordon and drop our mark, only where the mark is ours."""
    record = node_record(api.get_node(node))
    if parse_mark(record["reason"]) is None:
        return False
    api.patch_node(node, uncordon_patch())
    return True


NM_PREFIX = "ainet-fabric-"
NAME_MAX = 253  # metadata.name: a DNS subdomain


def nm_name(node):
    """The NodeMaintenance's name: ``ainet-fabric-<node>``; where that would exceed 253 characters, the node name
    is cut and a hash of the whole name appended (deterministic, still a DNS subdomain)."""
    check_node_name(node)
    name = NM_PREFIX + node
    if len(name) <= NAME_MAX:
        return name
    digest = hashlib.sha256(node.encode("utf-8")).hexdigest()[:16]
    head = (NM_PREFIX + node)[:NAME_MAX - len(digest) - 1].rstrip("-.")
    return "%s-%s" % (head, digest)


def node_maintenance(node, selector, namespace="default", drain_timeout=0, delete_empty_dir=False, force=False):
    """The NodeMaintenance object of a window (waitForPodCompletion without timeout; force and deleteEmptyDir as
    the role's maintenance_k8s_force and maintenance_k8s_delete_emptydir_data, false by default)."""
    parse_selector(selector)
    check_node_name(node)
    return {
        "apiVersion": NM_API,
        "kind": NM_KIND,
        "metadata": {"name": nm_name(node), "namespace": namespace,
                     "labels": {"app.kubernetes.io/managed-by": "ainet.fabric"}},
        "spec": {
            "requestorID": REQUESTOR,
            "nodeName": node,
            "cordon": True,
            "waitForPodCompletion": {"podSelector": selector, "timeoutSeconds": 0},
            "drainSpec": {"force": bool(force), "timeoutSeconds": int(drain_timeout), "deleteEmptyDir":
                          bool(delete_empty_dir)},
        },
    }


def nm_ready(obj):
    """True when the operator reports the node ready for maintenance (condition Ready, status True)."""
    for condition in ((obj or {}).get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def nm_failed(obj):
    for condition in ((obj or {}).get("status") or {}).get("conditions") or []:
        if condition.get("reason") == "FailedMaintenance" or condition.get("type") == "RequestorFailed" and \
                condition.get("status") == "True":
            return condition.get("message") or condition.get("reason")
    return None
