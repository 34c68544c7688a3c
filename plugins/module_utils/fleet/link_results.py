# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The link tests' outputs, parsed: iputils ``ping`` and perftest (``ib_write_bw``, ``ib_read_bw``,
``ib_write_lat``, ``ib_read_lat``, ``ib_send_lat``), and the assignments of a schedule's rounds.

Parse tolerantly (perftest interleaves "Conflicting CPU frequency" warnings with its table, prints ``MB/sec`` or,
with ``--report_gbits``, ``Gb/sec``; ping prints ``local error: message too long`` when the frame exceeds the
sending NIC's MTU), report precisely: every result says what failed in one line.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.fleet.pair_schedule import round_count, round_pairs, tally

# TCP port of the perftest exchange of rail r: PERFTEST_PORT + r, so that every rail of a pair runs at once.
PERFTEST_PORT = 18515
_STATS = re.compile(r"(\d+) packets transmitted, (\d+) received(?:, \+(\d+) errors)?.*?([\d.]+)% packet loss")
_RTT = re.compile(r"rtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms")
_LOCAL_MTU = re.compile(r"local error: message too long, mtu=(\d+)")


def parse_ping(text):
    """iputils ``ping`` output -> ``{"transmitted", "received", "loss", "rtt_avg_ms", "errors", "mtu_error"}``
    (``loss`` in percent; ``mtu_error``: the MTU ping's own NIC refused the frame with, else None). A text without
    the statistics line (ping could not start) has ``transmitted`` None and its first line in ``errors``."""
    text = text or ""
    out = {"transmitted": None, "received": None, "loss": None, "rtt_avg_ms": None, "errors": [], "mtu_error": None}
    stats = _STATS.search(text)
    if stats:
        out.update(transmitted=int(stats.group(1)), received=int(stats.group(2)), loss=float(stats.group(4)))
    rtt = _RTT.search(text)
    if rtt:
        out["rtt_avg_ms"] = float(rtt.group(2))
    mtu = _LOCAL_MTU.search(text)
    if mtu:
        out["mtu_error"] = int(mtu.group(1))
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("ping:") and line not in out["errors"]:
            out["errors"].append(line)
    if stats is None and not out["errors"] and text.strip():
        out["errors"].append(text.strip().splitlines()[0])
    return out


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None


def parse_perftest(text):
    """perftest output -> ``{"kind": "bw"|"lat"|None, "gbps", "peak_gbps", "usec", "rows", "errors"}``.

    Bandwidth tests: the last row's ``BW average`` (and peak) in Gb/s, whether printed in ``Gb/sec`` or ``MB/sec``
    (MB = 10^6 bytes, as perftest counts); latency tests: the last row's ``t_avg`` in microseconds. ``rows``: the
    table's rows as dicts of its columns. Lines that are neither (warnings) are skipped; error lines are kept."""
    text = text or ""
    out = {"kind": None, "gbps": None, "peak_gbps": None, "usec": None, "rows": [], "errors": []}
    header = None
    for raw in text.replace("\\\n", " ").splitlines():
        line = raw.strip()
        if line.startswith("#bytes"):
            header = re.findall(r"#bytes|#iterations|BW peak\[[^\]]+\]|BW average\[[^\]]+\]|MsgRate\[[^\]]+\]|"
                                r"t_\w+\[usec\]|99(?:\.9)?% percentile\[usec\]", line)
            out["kind"] = "bw" if any(h.startswith("BW") for h in header) else "lat"
            continue
        fields = line.split()
        if header and fields and fields[0].isdigit() and len(fields) >= 3:
            values = [_number(f) for f in fields]
            if None in values:
                continue
            out["rows"].append(dict(zip(header, values)))
            continue
        if re.search(r"(?i)\b(error|failed|couldn't|unable|cannot)\b", line) and "CPU Frequency" not in line:
            out["errors"].append(line)
    if out["rows"]:
        last = out["rows"][-1]
        for key, value in last.items():
            scale = 1.0 if "Gb/sec" in key else 8.0 / 1000.0 if "MB/sec" in key else None
            if key.startswith("BW average") and scale is not None:
                out["gbps"] = round(value * scale, 4)
            elif key.startswith("BW peak") and scale is not None:
                out["peak_gbps"] = round(value * scale, 4)
            elif key == "t_avg[usec]":
                out["usec"] = value
    return out


def round_assignments(plan, hosts, number, fabric=None):
    """Round ``number`` (1, 2, ...) as each host runs it: ``{host: {"peer", "role", "rails": [...]}}``.

    ``role``: ``server`` (the first of the pair) or ``client``; ``rails``: the pair's rails of ``fabric`` (every
    fabric when None), each ``{"fabric", "rail", "interface", "ip", "peer_ip", "mtu", "ping_size", "port",
    "perftest_args"}``: ``ping_size`` fills the rail MTU with a DF ping (MTU less 28 bytes of IPv4 and ICMP headers, 48
    for IPv6); ``perftest_args`` is ``["--ipv6-addr"]`` on an IPv6 rail, for both ends of ``ib_write_bw``. One round
    only (:func:`pair_schedule.round_pairs`), so that a play holds one round's assignments at a time."""
    members = [h for h in hosts if h in plan["nodes"]]
    this = {}
    for server, client in round_pairs(members, number):
        for me, peer, role in ((server, client, "server"), (client, server, "client")):
            mine = dict(((e["fabric"], e["rail"]), e) for e in plan["nodes"][me]["rails"]
                        if fabric is None or e["fabric"] == fabric)
            theirs = dict(((e["fabric"], e["rail"]), e) for e in plan["nodes"][peer]["rails"])
            rails = []
            for key, entry in sorted(mine.items()):
                if key not in theirs:
                    continue
                v6 = ":" in entry["ip"]
                rails.append({"fabric": entry["fabric"], "rail": entry["rail"], "interface": entry["interface"],
                              "ip": entry["ip"], "peer_ip": theirs[key]["ip"], "mtu": entry["mtu"],
                              "ping_size": entry["mtu"] - (48 if v6 else 28),
                              "port": PERFTEST_PORT + entry["rail"],
                              # perftest exchanges its parameters over TCP/IPv4 unless told --ipv6-addr (both
                              # ends; linux-rdma/perftest src/perftest_parameters.c: ai_family AF_INET6)
                              "perftest_args": ["--ipv6-addr"] if v6 else []})
            this[me] = {"peer": peer, "role": role, "rails": rails}
    return this


def schedule(nodes, hosts, count, full_mesh=False):
    """The schedule's size, without its rounds: ``{"rounds", "hosts", "pairs"}`` (``pairs``: in all rounds, each
    round pairing every node but an odd fleet's odd one out) of the ``hosts`` that are ``nodes`` (the plan's
    ``nodes``, or their names). The rounds themselves come one at a time from :func:`round_assignments` as each
    starts: a full mesh of 1,024 nodes x 8 rails is 1,023 rounds of 8,192 rail assignments each, never held at once."""
    members = [h for h in hosts if h in nodes]
    number = round_count(len(members), count, full_mesh)
    return {"rounds": number, "hosts": len(members), "pairs": number * (len(members) // 2)}


TESTS = ("icmp", "icmp_small", "rdma_bw", "rdma_lat", "rdma_cm")
_RPING_DATA = re.compile(r"^ping data: ", re.M)


def _flatten(registered):
    """The role's registered rounds -> ``{(round, peer, fabric, rail): {test: loop result}}``.

    ``registered``: ``[{"round", "peer", "icmp": [...], "icmp_small": [...], "rdma_bw": [...], "rdma_lat": [...]}]``,
    each list the ``results`` of a task looped over the pair's rails (``item`` the rail; skipped items left out)."""
    grouped = {}
    for entry in registered or []:
        for test in TESTS:
            for item in entry.get(test) or []:
                rail = item.get("item") or {}
                if item.get("skipped") or not rail:
                    continue
                key = (int(entry["round"]), entry["peer"], rail.get("fabric"), rail.get("rail"))
                grouped.setdefault(key, {})[test] = dict(item, size=rail.get("ping_size"))
    return grouped


def results_of(host, registered):
    """One client's registered rounds (see :func:`_flatten`) -> :func:`pair_schedule.verdict` results.

    A rail's ICMP result fails when the DF ping that fills the MTU lost packets, and says whether small frames
    passed (an MTU below the fabric's on the path) or not (no path at all); RDMA results fail without a result
    table."""
    out = []
    for (number, peer, fabric, rail), tests in sorted(_flatten(registered).items()):
        base = {"round": number, "fabric": fabric, "rail": rail, "a": peer, "b": host}
        if "icmp" in tests:
            item = tests["icmp"]
            jumbo = parse_ping((item.get("stdout") or "") + "\n" + (item.get("stderr") or ""))
            small = parse_ping(tests["icmp_small"].get("stdout") or "") if "icmp_small" in tests else None
            ok = item.get("rc") == 0 and bool(jumbo["received"]) and jumbo["received"] == jumbo["transmitted"]
            error = None
            if not ok:
                if jumbo["mtu_error"]:
                    error = "the NIC's own MTU %s refuses a %s-byte DF ping" % (jumbo["mtu_error"], item.get("size"))
                elif small is not None and small["received"]:
                    error = "%s-byte DF pings lost (%s%% loss) while small ones pass: an MTU below the fabric's on " \
                            "the path" % (item.get("size"), "%g" % jumbo["loss"] if jumbo["loss"] is not None else "?")
                else:
                    error = "no ICMP reply (%s)" % ("; ".join(jumbo["errors"][:1]) or "%s%% loss" % (
                        "%g" % jumbo["loss"] if jumbo["loss"] is not None else "?"))
            out.append(dict(base, test="icmp", ok=ok, gbps=None, usec=None, rtt_ms=jumbo["rtt_avg_ms"],
                            error=("icmp: " + error) if error else None))
        for test in ("rdma_bw", "rdma_lat"):
            if test not in tests:
                continue
            item = tests[test]
            parsed = parse_perftest((item.get("stdout") or "") + "\n" + (item.get("stderr") or ""))
            ok = item.get("rc") == 0 and bool(parsed["rows"])
            error = None if ok else ("; ".join(parsed["errors"][:2]) or "rc %s, no result table" % item.get("rc"))
            out.append(dict(base, test=test, ok=ok, gbps=parsed["gbps"], usec=parsed["usec"], rtt_ms=None,
                            error=("%s: %s" % (test, error)) if error else None))
        if "rdma_cm" in tests:
            item = tests["rdma_cm"]
            text = (item.get("stdout") or "") + "\n" + (item.get("stderr") or "")
            pings = len(_RPING_DATA.findall(text))
            ok = item.get("rc") == 0 and pings > 0
            error = None if ok else "rdma_cm: rping %s" % (one_error(text) or "rc %s, no ping data" % item.get("rc"))
            out.append(dict(base, test="rdma_cm", ok=ok, gbps=None, usec=None, rtt_ms=None, error=error))
    return out


def new_tally():
    """The running tally of a link test before its first round (see :func:`judge_round`)."""
    return {"tested": 0, "failed": 0, "links": {}, "measured": {}, "rounds": []}


def measure(state, results):
    """Fold the RDMA measurements of ``results`` into ``state["measured"]``: per client, fabric, rail and test, how
    many peers were measured and the lowest and highest Gb/s (with the peer of the lowest) and the highest
    latency: the report's table, of a size that does not grow with the rounds."""
    for result in results:
        if not (result["test"].startswith("rdma") and result["ok"]) or (result["gbps"] is None and result["usec"] is None):
            continue
        rails = state["measured"].setdefault(result["b"], {}).setdefault(result["fabric"], {})
        row = rails.setdefault(str(result["rail"]), {}).setdefault(result["test"], {
            "peers": 0, "min_gbps": None, "min_peer": None, "max_gbps": None, "max_usec": None})
        row["peers"] += 1
        if result["gbps"] is not None:
            if row["min_gbps"] is None or result["gbps"] < row["min_gbps"]:
                row["min_gbps"], row["min_peer"] = result["gbps"], result["a"]
            row["max_gbps"] = max(row["max_gbps"] or result["gbps"], result["gbps"])
        if result["usec"] is not None:
            row["max_usec"] = max(row["max_usec"] or result["usec"], result["usec"])
    return state


def judge_round(state, number, outputs, min_gbps=None, max_usec=None):
    """Round ``number`` as it ends, folded into the running tally ``state`` (:func:`new_tally`; updated and returned):
    ``outputs``: ``{host: what the host kept of its last round}`` (``{"round", "peer", "icmp", ...}``, see
    :func:`_flatten`; a host whose entry is of another round, a server, adds nothing). What the job keeps between
    rounds is this tally (the failures and slow links by peer, the counts, the RDMA table per client rail), never
    the outputs: their memory is one round's."""
    if number in state["rounds"]:
        return state  # a round is counted once
    results = []
    for host in sorted(outputs):
        entry = outputs[host]
        if isinstance(entry, dict) and entry.get("round") is not None and int(entry["round"]) == number:
            results.extend(results_of(host, [entry]))
    tally(results, min_gbps, max_usec, state)
    measure(state, results)
    state["rounds"].append(number)
    return state


def one_error(text):
    """The first line of ``text`` that says what failed (rping: ``rdma_resolve_addr: ...``, ``cma event
    RDMA_CM_EVENT_REJECTED``, ``connect error``), or None."""
    for line in (text or "").splitlines():
        if re.search(r"(?i)(error|fail|reject|unreachable|timed? ?out|refused|cma event)", line):
            return line.strip()
    return None


def not_run(plan, hosts, rdma, rdma_rails, fabric=None):
    """One line per test the link test did not run, each saying why ("skipped, because ...").

    ``rdma``: whether RDMA tests were asked for (``link_test_rdma``); ``rdma_rails``: ``{host: rdma_facts' rails}``
    (``{"netdev", "rdma_device", "port", "gid_index", "address"}`` per rail NIC; a host absent: rdma_facts gave
    nothing). ib_write_bw needs the rail's RDMA device and the index of the RoCE v2 GID of its address, rping the
    device; a rail without them on either end of a pair is not RDMA-tested."""
    if not rdma:
        return ["RDMA tests (ib_write_bw, rping) skipped on every rail, because link_test_rdma is false: ICMP only."]
    lines = []
    for host in [h for h in hosts if h in plan["nodes"]]:
        facts = rdma_rails.get(host)
        by_nic = dict((r.get("netdev"), r) for r in facts or [])
        for entry in plan["nodes"][host]["rails"]:
            if fabric is not None and entry["fabric"] != fabric:
                continue
            where = "%s %s (%s rail %s, %s)" % (host, entry["interface"], entry["fabric"], entry["rail"], entry["ip"])
            rail = by_nic.get(entry["interface"])
            if facts is None or rail is None:
                lines.append("ib_write_bw and rping skipped on %s, because rdma_facts reported nothing for it" % where)
            elif rail.get("rdma_device") is None:
                lines.append("ib_write_bw and rping skipped on %s, because the NIC has no RDMA device" % where)
            elif rail.get("gid_index") is None:
                lines.append("ib_write_bw skipped on %s, because %s port %s has no RoCE v2 GID holding %s (GID table: "
                             "/sys/class/infiniband/%s/ports/%s/gids; the address must be on the NIC itself)"
                             % (where, rail["rdma_device"], rail.get("port"), entry["ip"], rail["rdma_device"],
                                rail.get("port")))
    return lines
