"""Benchmark what each host module costs a host (not a test: prints numbers).

Usage (root, for the CPU part: network namespaces):
    .venv/bin/python tests/perf/bench_payload.py [--repo PATH] [--rails 8] [--repeat 20] [--no-cpu]

For every module in ``plugins/modules`` of ``--repo`` (default: this checkout; give another worktree,
e.g. ``git worktree add /tmp/before <commit>``, to measure an older version) that runs on a host:

- the AnsiballZ payload Ansible builds for it (``ansible.executor.module_common.modify_module``, the
  ``ZIP_DEFLATED`` compression ansible-core ships by default): its bytes, and how many of the
  collection's module_utils files it holds;
- for ``rail_interfaces``, the CPU (user + system, of the payload's python process and the ``ip``
  commands it runs) of one re-converge on a node of ``--rails`` rails in a network namespace made
  for the run (dummy rail NICs; nothing leaves the namespace). The module arguments are the ones a
  play sends: when the repository has an action plugin that derives the module's flat state on the
  controller, its ``desired()`` computes them, as in a play.

Last line: JSON summary.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONTROLLER_ONLY = ("rail_plan", "tor_config", "lossless_report")
PREFIX = "ansible_collections/ainet/fabric/plugins/module_utils/"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=ROOT, help="the collection checkout to measure")
    parser.add_argument("--rails", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--no-cpu", action="store_true", help="payload sizes only (no namespace, no root)")
    return parser.parse_args()


def install_collection(repo, workdir):
    """Make ``repo`` importable as ansible_collections.ainet.fabric for this process and for Ansible's loader."""
    parent = os.path.join(workdir, "collections", "ansible_collections", "ainet")
    os.makedirs(parent)
    os.symlink(os.path.abspath(repo), os.path.join(parent, "fabric"))
    paths = [os.path.join(workdir, "collections")]
    from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder  # pylint: disable=import-outside-toplevel
    _AnsibleCollectionFinder(paths=paths)._install()  # pylint: disable=protected-access
    return paths[0]


def build_payload(name, module_path, module_args):
    """(payload bytes, collection module_utils files in it) of module ``name`` with ``module_args``."""
    from ansible.executor import module_common  # pylint: disable=import-outside-toplevel
    from ansible.parsing.dataloader import DataLoader  # pylint: disable=import-outside-toplevel
    from ansible.template import Templar  # pylint: disable=import-outside-toplevel
    built = module_common.modify_module(module_name="ainet.fabric." + name, module_path=module_path,
                                        module_args=module_args, templar=Templar(loader=DataLoader()),
                                        task_vars={"ansible_python_interpreter": sys.executable},
                                        module_compression="ZIP_DEFLATED")
    data = built.b_module_data
    return data, utils_files(data)


def ping_payload():
    """ansible.builtin.ping's payload (the reference every module pays at least)."""
    from ansible.modules import ping  # pylint: disable=import-outside-toplevel
    from ansible.executor import module_common  # pylint: disable=import-outside-toplevel
    from ansible.parsing.dataloader import DataLoader  # pylint: disable=import-outside-toplevel
    from ansible.template import Templar  # pylint: disable=import-outside-toplevel
    return module_common.modify_module(module_name="ansible.builtin.ping", module_path=ping.__file__, module_args={},
                                       templar=Templar(loader=DataLoader()),
                                       task_vars={"ansible_python_interpreter": sys.executable},
                                       module_compression="ZIP_DEFLATED").b_module_data


def utils_files(payload):
    """The collection's module_utils files inside an AnsiballZ wrapper (its zip is base64 in the source)."""
    import base64  # pylint: disable=import-outside-toplevel
    import io  # pylint: disable=import-outside-toplevel
    import re  # pylint: disable=import-outside-toplevel
    match = re.search(rb"zip_data='([A-Za-z0-9+/=]+)'", payload)
    if not match:
        return None
    archive = zipfile.ZipFile(io.BytesIO(base64.b64decode(b"".join(match.group(1).split()))))
    return sorted(n[len(PREFIX):] for n in archive.namelist() if n.startswith(PREFIX) and n.endswith(".py")
                  and not n.endswith("__init__.py"))


def rail_args(repo, rails):
    """The arguments a play sends rail_interfaces for node 1 of a ``rails``-rail exclusive cluster."""
    cluster = {"name": "bench", "rails": rails, "mtu": 9000,
               "addressing": {"mode": "exclusive", "supernet": "172.17.0.0/16", "rail_prefix": 19,
                              "node_prefix": 27},
               "management_networks": ["10.250.0.0/24"]}
    task = {"cluster": cluster, "node_id": 1, "interfaces": ["ens%df0np0" % r for r in range(1, rails + 1)]}
    action_file = os.path.join(repo, "plugins", "action", "rail_interfaces.py")
    if not os.path.isfile(action_file):
        return task, None
    action = importlib.import_module("ansible_collections.ainet.fabric.plugins.action.rail_interfaces")
    host_action = importlib.import_module("ansible_collections.ainet.fabric.plugins.plugin_utils.host_action")
    model = host_action.load_model(cluster)
    start = time.process_time()
    for _attempt in range(100):
        state = action.ActionModule.desired(None, model, task, {})
    return state, (time.process_time() - start) / 100


def child_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def rail_cpu(payload, rails, repeat, workdir, ping_payload):
    """CPU seconds (median, min) of one re-converge of the payload in a fresh namespace of ``rails`` rail NICs, and
    (median, min) of ansible.builtin.ping's payload there (the floor every module pays: python, AnsiballZ, basic)."""
    namespace = "ainetbench%d" % os.getpid()
    path = os.path.join(workdir, "rail_interfaces_payload.py")
    with open(path, "wb") as handle:
        handle.write(payload)
    ping_path = os.path.join(workdir, "ping_payload.py")
    with open(ping_path, "wb") as handle:
        handle.write(ping_payload)
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    try:
        ns = ["ip", "-n", namespace]
        subprocess.run(ns + ["link", "set", "lo", "up"], check=True)
        for rail in range(1, rails + 1):
            subprocess.run(ns + ["link", "add", "ens%df0np0" % rail, "mtu", "1500", "type", "veth", "peer", "name", "peer%d" % rail], check=True)
        run = ["ip", "netns", "exec", namespace, sys.executable, path]
        first = json.loads(subprocess.run(run, capture_output=True, text=True, check=True).stdout)
        if first.get("failed"):
            raise SystemExit("rail_interfaces failed: %s" % first.get("msg"))
        samples, ping = [], []
        for _attempt in range(repeat):
            before = child_cpu()
            out = json.loads(subprocess.run(run, capture_output=True, text=True, check=True).stdout)
            samples.append(child_cpu() - before)
            if out.get("changed") or out.get("failed"):
                raise SystemExit("the re-converge was not a no-op: %s" % out)
            before = child_cpu()
            subprocess.run(run[:-1] + [ping_path], capture_output=True, check=True)
            ping.append(child_cpu() - before)
        return (statistics.median(samples), min(samples)), (statistics.median(ping), min(ping))
    finally:
        subprocess.run(["ip", "netns", "del", namespace], check=False)


def main():
    args = parse_args()
    workdir = tempfile.mkdtemp(prefix="ainet-bench-payload-")
    result = {"repo": os.path.abspath(args.repo), "modules": {}}
    try:
        install_collection(args.repo, workdir)
        modules_dir = os.path.join(args.repo, "plugins", "modules")
        names = sorted(f[:-3] for f in os.listdir(modules_dir) if f.endswith(".py") and f[:-3] not in CONTROLLER_ONLY)
        for name in names:
            module_args = {}
            if name == "rail_interfaces":
                module_args, derive_s = rail_args(args.repo, args.rails)
                module_args = dict(module_args, persist="none", config_root=workdir, manage_service=False)
                if derive_s is not None:
                    result["rail_interfaces_controller_derive_ms"] = round(derive_s * 1000, 3)
            data, files = build_payload(name, os.path.join(modules_dir, name + ".py"), module_args)
            entry = result["modules"][name] = {"payload_bytes": len(data), "module_utils_files": len(files or [])}
            print("%-16s payload %7d bytes, %2d collection module_utils: %s"
                  % (name, len(data), len(files or []), " ".join(files or [])))
            if name == "rail_interfaces" and not args.no_cpu:
                ping_data = ping_payload()
                (median, low), (p_median, p_low) = rail_cpu(data, args.rails, args.repeat, workdir, ping_data)
                entry["reconverge_cpu_ms"] = {"median": round(median * 1000, 1), "min": round(low * 1000, 1)}
                result["ping_cpu_ms"] = {"median": round(p_median * 1000, 1), "min": round(p_low * 1000, 1)}
                print("%-16s re-converge CPU on a %d-rail node: median %.1f ms, min %.1f ms (%d runs); "
                      "ansible.builtin.ping there: median %.1f ms, min %.1f ms"
                      % (name, args.rails, median * 1000, low * 1000, args.repeat, p_median * 1000, p_low * 1000))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
