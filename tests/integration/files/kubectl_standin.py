# -*- coding: utf-8 -*-
"""A stand-in for ``kubectl`` over a JSON file (``$FAKE_K8S_STATE``), answering the few calls the maintenance_k8s
module makes as the API server documents them, and logging each call (``$FAKE_K8S_STATE.log``):

* ``get node <n> -o json``, ``patch node <n> --type merge -p <json>`` (a JSON merge patch: null deletes a key);
* ``get pods -A --field-selector spec.nodeName=<n> -o json``, ``get pods -A -l <k=v> -o json``; a pod with
  ``finishAt`` (epoch seconds) reports phase Succeeded from then on;
* ``create --raw /api/v1/namespaces/<ns>/pods/<p>/eviction -f -``: the Eviction API - refused with
  ``Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's disruption budget.`` while
  the pod's PodDisruptionBudget (``pdbs``: label app -> allowed disruptions; one comes back ``pdbRefillAfter``
  seconds after the first refusal, as a replacement replica gets ready elsewhere) allows none, else the pod is
  deleted; ``NotFound`` for a pod that is gone;
* ``apply -f -`` (a NodeMaintenance: stored; Ready once no pod of its waitForPodCompletion selector runs on its
  node), ``get nodemaintenances... -n <ns> <name> -o json --ignore-not-found``, ``delete ... --ignore-not-found``
  (the operator's finalizer uncordons the node).
"""

import json
import os
import sys
import time

STATE = os.environ["FAKE_K8S_STATE"]


def load():
    with open(STATE) as handle:
        return json.load(handle)


def save(state):
    with open(STATE + ".tmp", "w") as handle:
        json.dump(state, handle)
    os.replace(STATE + ".tmp", STATE)


def merge(target, patch):
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            merge(target.setdefault(key, {}), value)
        else:
            target[key] = value


def pods(state):
    now = time.time()
    for pod in state["pods"]:
        if pod.get("finishAt") and now >= pod["finishAt"]:
            pod["status"]["phase"] = "Succeeded"
    return state["pods"]


def selected(pod, selector):
    key, _sep, value = selector.partition("=")
    return (pod["metadata"].get("labels") or {}).get(key) == value


def fail(message, code=1):
    sys.stderr.write(message + "\n")
    sys.exit(code)


def main(argv):
    if argv[:1] == ["--kubeconfig"]:
        argv = argv[2:]
    state = load()
    with open(STATE + ".log", "a") as log:
        log.write(json.dumps([time.time()] + argv) + "\n")
    if argv[:2] == ["get", "nodes"]:  # a NodeList, as kubectl get nodes -o json prints it
        print(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(state["nodes"].values())}))
    elif argv[:2] == ["get", "node"]:
        node = state["nodes"].get(argv[2])
        if node is None:
            fail('Error from server (NotFound): nodes "%s" not found' % argv[2])
        print(json.dumps(node))
    elif argv[:2] == ["patch", "node"]:
        merge(state["nodes"][argv[2]], json.loads(argv[argv.index("-p") + 1]))
        save(state)
    elif argv[:3] == ["get", "pods", "-A"] and argv[3] == "--field-selector":
        name = argv[4].split("=", 1)[1]
        print(json.dumps({"items": [p for p in pods(state) if p["spec"]["nodeName"] == name]}))
        save(state)
    elif argv[:3] == ["get", "pods", "-A"] and argv[3] == "-l":
        print(json.dumps({"items": [p for p in pods(state) if selected(p, argv[4])]}))
        save(state)
    elif argv[:2] == ["create", "--raw"]:
        parts = argv[2].strip("/").split("/")  # api v1 namespaces ns pods name eviction
        namespace, name = parts[3], parts[5]
        pod = next((p for p in state["pods"] if p["metadata"]["name"] == name
                    and p["metadata"]["namespace"] == namespace), None)
        if pod is None:
            fail('Error from server (NotFound): pods "%s" not found' % name)
        app = pod["metadata"].get("labels", {}).get("app")
        if app in state.get("pdbs", {}):
            first = state.setdefault("firstRefusal", {}).get(app)
            if state["pdbs"][app] < 1 and first and time.time() >= first + state.get("pdbRefillAfter", 0):
                state["pdbs"][app] = 1
            if state["pdbs"][app] < 1:
                state.setdefault("refused", []).append(name)
                state["firstRefusal"].setdefault(app, time.time())
                save(state)
                fail("Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's "
                     "disruption budget.")
            state["pdbs"][app] -= 1
        state["pods"].remove(pod)
        state.setdefault("evicted", []).append(name)
        save(state)
        print('{"kind": "Status", "status": "Success"}')
    elif argv[:2] == ["apply", "-f"]:
        obj = json.loads(sys.stdin.read())
        state.setdefault("nodemaintenances", {})[obj["metadata"]["name"]] = obj
        state.setdefault("applied", []).append(obj)
        state["nodes"][obj["spec"]["nodeName"]]["spec"]["unschedulable"] = True
        save(state)
    elif argv[:1] == ["get"] and argv[1].startswith("nodemaintenances"):
        obj = state.get("nodemaintenances", {}).get(argv[4])
        if obj is not None:
            wait = obj["spec"]["waitForPodCompletion"]["podSelector"]
            busy = [p for p in pods(state) if p["spec"]["nodeName"] == obj["spec"]["nodeName"]
                    and selected(p, wait) and p["status"]["phase"] not in ("Succeeded", "Failed")]
            obj["status"] = {"conditions": [{"type": "Ready", "status": "False" if busy else "True",
                                             "reason": "WaitForPodCompletion" if busy else "Ready"}]}
            save(state)
            print(json.dumps(obj))
    elif argv[:1] == ["delete"] and argv[1].startswith("nodemaintenances"):
        obj = state.get("nodemaintenances", {}).pop(argv[4], None)
        if obj is not None:
            state["nodes"][obj["spec"]["nodeName"]]["spec"].pop("unschedulable", None)
        state.setdefault("deleted", []).append(argv[4])
        save(state)
    else:
        fail("kubectl stand-in: unknown call %s" % argv, 2)


if __name__ == "__main__":
    main(sys.argv[1:])
