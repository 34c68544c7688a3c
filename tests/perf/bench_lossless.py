"""Benchmark the lossless agreement check in-process (not a test: prints numbers).

Usage: .venv/bin/python tests/perf/bench_lossless.py [--nodes 1024] [--repeat 5]

A cluster of N nodes x 8 rails behind 64 ToRs (8 per rail, each serving N/8 nodes): every
ToR's SONiC config_db.json (the stock template, with one port per node, so every link
disagrees and every message is built) is parsed, the rail plan is made, every host NIC is
compared with its port and the fabric's profile, and the Markdown and HTML reports are
rendered. Each phase is timed; the total is what the validate job spends on the controller.
"""

import argparse
import json
import os
import statistics
import time

from checkout import ROOT, importable  # noqa: E402 (this directory is on sys.path: the script's own)

importable()

import fleet  # noqa: E402  (the addressing derived from the fleet size)

from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_check import link_rows  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_report import (  # noqa: E402
    render_html, render_markdown,
)
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse import parse_qos  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan  # noqa: E402

SAMPLE = os.path.join(ROOT, "tests", "unit", "plugins", "module_utils", "data", "qos", "sonic", "qos-arista7050.json")
RAILS, TORS_PER_RAIL = 8, 8


def cluster(nodes):
    per = nodes // TORS_PER_RAIL
    tors = [{"name": "r%d-t%d" % (rail, i + 1), "rails": [rail], "nodes": "%d-%d" % (i * per + 1, (i + 1) * per),
             "port_template": "Ethernet{local}", "platform": "sonic"}
            for rail in range(1, RAILS + 1) for i in range(TORS_PER_RAIL)]
    return {"name": "bench", "rails": RAILS, "addressing": fleet.addressing(nodes, RAILS), "tors": tors}


def tor_config(ports):
    """The stock SONiC sample's maps and profiles, bound to ``ports`` ports Ethernet1..N."""
    with open(SAMPLE) as handle:
        base = json.load(handle)
    names = ["Ethernet%d" % i for i in range(1, ports + 1)]
    template_port = base["PORT_QOS_MAP"]["Ethernet4"]
    out = {k: v for k, v in base.items() if k not in ("PORT_QOS_MAP", "QUEUE")}
    out["PORT_QOS_MAP"] = {name: dict(template_port) for name in names}
    out["QUEUE"] = {}
    for name in names:
        for key, value in base["QUEUE"].items():
            if key.startswith("Ethernet4|"):
                out["QUEUE"][name + key[len("Ethernet4"):]] = value
    out["PORT"] = {name: {"mtu": "9100"} for name in names}
    return json.dumps(out, indent=4)


def host_facts(plan):
    settings = {"trust": "dscp", "dscp_to_priority": {d: d // 8 for d in range(64)}, "pfc": [3],
                "priority_to_queue": {p: p for p in range(8)}, "ecn_rp": [3], "ecn_np": [3], "cnp_dscp": 48,
                "cnp_priority": 6, "mtu": 9000, "roce_tos": 106, "traffic_class": 106,
                "ets": {0: {"mode": "ets", "weight": 50}, 3: {"mode": "ets", "weight": 50}, 6: {"mode": "strict"}}}
    return {host: {"format": "mlnx_qos+sysfs", "problems": [],
                   "ports": {e["interface"]: settings for e in node["rails"]}}
            for host, node in plan["nodes"].items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    model = cluster(args.nodes)
    nodes = {"gpu%05d" % i: {"node_id": i, "rail_interfaces": ["ens%d" % r for r in range(1, RAILS + 1)]}
             for i in range(1, args.nodes + 1)}
    texts = {tor["name"]: tor_config(args.nodes // TORS_PER_RAIL) for tor in model["tors"]}
    timings = {"parse 64 ToR configs": [], "plan": [], "check": [], "render md+html": [], "total": []}
    for _run in range(args.repeat):
        start = time.perf_counter()
        switches = {name: parse_qos(text, "sonic_config_db") for name, text in texts.items()}
        t1 = time.perf_counter()
        plan = rail_plan(model, nodes)
        facts = host_facts(plan)
        t2 = time.perf_counter()
        rows = link_rows(plan, facts, switches)
        t3 = time.perf_counter()
        render_markdown(rows, {"cluster": "bench"})
        render_html(rows, {"cluster": "bench"})
        t4 = time.perf_counter()
        for key, value in (("parse 64 ToR configs", t1 - start), ("plan", t2 - t1), ("check", t3 - t2),
                           ("render md+html", t4 - t3), ("total", t4 - start)):
            timings[key].append(value)
    bad = sum(1 for r in rows if r["status"] != "agree")
    print("%d nodes x %d rails = %d links, %d ToRs, %d disagreeing links, %d disagreements"
          % (args.nodes, RAILS, len(rows), len(texts), bad, sum(len(r["disagreements"]) for r in rows)))
    for key, values in timings.items():
        print("  %-22s best %.3f s  median %.3f s" % (key, min(values), statistics.median(values)))


if __name__ == "__main__":
    main()
