"""Benchmark ToR rendering in-process (not a test: prints numbers).

Usage: .venv/bin/python tests/perf/bench_tor_render.py [--tors 64] [--ports 64] [--repeat 3] [--validate]
       [--platforms sonic,cumulus,eos,nxos]

64 ToRs x 64 ports (8 rails x 8 ToRs, each serving 64 nodes: 512 nodes), all on one
platform at a time: plan once, render every ToR (SONiC config_db JSON, NVUE YAML, EOS CLI through
pyavd, NX-OS CLI), optionally validate (NVUE object model, pyavd, the NX-OS read-back; SONiC YANG when
AINET_SONIC_YANG_DIR is set),
and print the time per platform and the lines of configuration per ToR.
"""

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "build", ".collections"))

from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_render import render_tors  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_cumulus import RELEASE, validate_nvue  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.tor.nos_sonic import (  # noqa: E402
    merged_config_db, validate_sonic)

PORTS = {"sonic": "Ethernet{local}", "cumulus": "swp{local}", "eos": "Ethernet{local}/1", "nxos": "Ethernet1/{local}"}


def plan_for(platform, tors, ports):
    rails = 8
    per_rail = max(1, tors // rails)
    nodes = per_rail * ports
    tor_list = [{"name": "r%d-t%d" % (rail, i + 1), "rails": [rail], "nodes": "%d-%d" % (i * ports + 1, (i + 1) * ports),
                 "port_template": PORTS[platform], "platform": platform}
                for rail in range(1, rails + 1) for i in range(per_rail)]
    cluster = {"name": "bench", "rails": rails, "mtu": 9000,
               "addressing": {"mode": "p2p", "supernet": "10.0.0.0/8", "rail_prefix": 16}, "tors": tor_list}
    return rail_plan(cluster, {"n%05d" % n: {"node_id": n} for n in range(1, nodes + 1)})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tors", type=int, default=64)
    parser.add_argument("--ports", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--validate", action="store_true")
    parser.add_argument("--platforms", default="sonic,cumulus,eos,nxos")
    args = parser.parse_args()
    for platform in args.platforms.split(","):
        plan = plan_for(platform, args.tors, args.ports)
        times, result = [], None
        for _repeat in range(args.repeat):
            start = time.perf_counter()
            result = render_tors(plan)
            times.append(time.perf_counter() - start)
        lines = [len(r["text"].splitlines()) for r in result["rendered"]]
        print("%-8s %d ToRs x %d ports: render best %.2f s, median %.2f s; %d lines per ToR (%.0f KB)"
              % (platform, len(result["rendered"]), args.ports, min(times), statistics.median(times),
                 statistics.median(lines), statistics.median(len(r["text"]) for r in result["rendered"]) / 1024))
        if args.validate:
            start = time.perf_counter()
            problems = 0
            for item in result["rendered"]:
                if platform == "cumulus":
                    problems += len(validate_nvue(item["data"], RELEASE))
                elif platform == "sonic" and os.environ.get("AINET_SONIC_YANG_DIR"):
                    problems += len(validate_sonic(device(item), os.environ["AINET_SONIC_YANG_DIR"]))
                elif platform == "nxos":
                    problems += len(platforms.nos(platform).validate(item, None, {})[0])
            print("%-8s validate %.2f s, %d problems%s" % (platform, time.perf_counter() - start, problems,
                                                           " (pyavd validated while rendering)" if platform == "eos"
                                                           else ""))


def device(item):
    config = {"DEVICE_METADATA": {"localhost": {"hostname": item["name"], "hwsku": "bench", "mac": "52:54:00:00:00:01",
                                                "platform": "x86_64-kvm_x86_64-r0", "type": "LeafRouter"}},
              "PORT": {p: {"lanes": str(i + 1), "alias": "e%d" % i, "speed": "100000"}
                       for i, p in enumerate(item["data"]["PORT"])}}
    config = merged_config_db(config, item["data"])
    return config


if __name__ == "__main__":
    main()
