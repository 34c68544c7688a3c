# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cisco NX-OS (Nexus 9000, 8-queue mode): everything this collection knows about the NOS, in one module
(see :mod:`platforms`).

Sources (Cisco's own unless said otherwise; docs/tor-config.md gives every full address and which fact comes
from which). ``QOS`` is Cisco's Nexus 9000 QoS configuration guide,
https://www.cisco.com/c/en/us/td/docs/dcn/nx-os/nexus9000/ then ``<release>/configuration/qos/<guide>/<page>``:

* [BP] "Cisco Data Center Networking Blueprint for AI/ML Applications" (white paper),
  https://www.cisco.com/c/en/us/td/docs/dcn/whitepapers/ then
  ``cisco-data-center-networking-blueprint-for-ai-ml-applications.html``
  (RoCEv2 on Nexus 9000: DSCP classification into a qos-group, PFC on its no-drop class, WRED ECN on its
  queue, a strict-priority queue for CNPs);
* [PFC] QOS Release 10.5(x), "Configuring Priority Flow Control" (``m-configuring-priority-flow-control.html``;
  the PFC watchdog works on no-drop queues only), and the Release 7.x guide's steps ``priority-flow-control mode
  {auto | on | off}``, ``service-policy type qos input``, "Configuring a Priority Flow Control Watchdog Interval";
* [QUE] QOS Release 10.1(x), "Configuring Queuing and Scheduling" (``m-configuring-queuing-and-scheduling.html``:
  system-defined queuing classes that cannot be modified, WRED with ECN on egress queues, priority, bandwidth);
* [CLS] QOS Release 10.1(x), "Configuring Classification" (``m-configuring-classification.html``: DSCP match
  criteria; unmatched traffic goes to ``class-default``);
* [REST] "Cisco Nexus 3000 and 9000 Series NX-API REST SDK User Guide and API Reference", Release 9.3(x) and
  7.x, https://developer.cisco.com/docs/ : "Configuring QoS Class Maps" (queuing class maps are system-defined),
  "Configuring QoS Policy Maps", "Configuring Priority Flow Control" (modes auto / on / off), "Configuring
  Priority Flow Control on an Ethernet Interface", "Configuring SVIs" (``feature interface-vlan``),
  "Configuring VLANs" (``switchport access vlan``); each page gives the CLI equivalent of its payload;
* [NAC] Cisco Network-as-Code NX-OS data model, "Network QoS" and "Queuing", https://netascode.cisco.com/docs/
  (network-qos sets the per-class MTU and ``pause pfc-cos``, applied system-wide; queuing policies reference the
  system classes and are applied as the system output policy);
* [MTU] Cisco tech note 118994, "Configure and Verify Maximum Transmission Unit on Nexus Platforms",
  https://www.cisco.com/c/en/us/support/docs/switches/nexus-9000-series-switches/118994-config-nexus-00.html
  (per-port ``mtu`` 9216 on Nexus 9000, ``no switchport`` + ``mtu`` on a routed port, ``interface vlan``
  ``mtu``; a layer-2 port takes only the default MTU or the system jumbo MTU, 9216 by default);
* [API] "Working with NX-API CLI", https://developer.cisco.com/docs/nx-os/working-with-nx-api-cli
  (``feature nxapi``; message types ``cli_show``, ``cli_show_ascii``, ``cli_conf``, ``bash``), with the
  request and reply shapes as ansible-collections/cisco.nxos ``plugins/httpapi/nxos.py`` sends and reads them
  (``POST /ins``, ``{"ins_api": {"version": "1.0", "type", "chunk": "0", "sid", "input": "c1 ;c2",
  "output_format": "json"}}``, ``type`` serialised before ``input``; ``outputs.output`` one object or a list,
  ``code`` ``"200"`` or an error with ``msg`` and ``clierror``);
* [ECN] ``congestion-control random-detect forward-nonecn`` (global): with WRED ECN on a queue, a packet that is
  not ECN-capable is forwarded past WRED rather than dropped on its curve (NX-OS WRED ECN treats non-ECT packets
  as plain WRED does, [QUE]: "ECN is an extension to WRED"); cited as seen in a field N9K RoCE configuration
  (tests/unit/plugins/module_utils/data/qos/nxos/ORIGIN.md, ``roce_pipeline_qos_group.cfg``), not a Cisco guide. Still
  to read: the N9K QoS configuration guide, Queuing and Scheduling, "Configuring WRED on Egress Queues"; until then
  it is rendered last among the global lines (NX-API stops at the first failing command), to confirm on a switch;
* real running configurations of the same syntax: Microsoft's Azure Local reference Nexus 93180YC-FX QoS
  (tests/unit/plugins/module_utils/data/qos/nxos/ORIGIN.md).

**Render** (``<switch>.cfg``, NX-OS CLI, 2 spaces a level, read back by ``parse_qos`` as ``nxos``):

* ``feature lldp``; ``feature interface-vlan`` in shared mode;
* per rail port ``interface Ethernet<slot>/<port>``: description, ``no switchport`` (exclusive/p2p, with the
  plan's gateway as ``ip address`` / ``ipv6 address``) or ``switchport`` + ``switchport access vlan
  <1000+rail>`` (shared, with ``vlan <id>`` / ``name rail<r>`` and ``interface Vlan<id>`` holding the rail
  gateway), ``mtu``, ``speed <Mb/s>`` / ``fec`` when the model sets them, ``no shutdown``;
* the lossless profile: ``class-map type qos match-all AINET_ROCE`` / ``AINET_CNP`` matching the DSCPs,
  ``policy-map type qos AINET_QOS`` setting the ``qos-group`` (= the priority; NX-OS pauses CoS N for
  qos-group N; ``class-default`` stated with qos-group 0, [CLS]), ``policy-map type network-qos AINET_NQ``
  with ``pause pfc-cos <p>`` and ``mtu`` on the system class ``c-8q-nq<p>`` of each PFC priority (and ``mtu``
  on ``c-8q-nq-default``), ``policy-map type queuing AINET_QUEUING`` on the system classes ``c-out-8q-q<n>``
  (queue 0: ``c-out-8q-q-default``): ``priority level 1`` on the strict CNP queue, ``bandwidth remaining
  percent`` on every other queue (the profile's ETS weights, 0 elsewhere; a profile without weights gets NVIDIA's
  Cumulus ``qos roce`` split, as on every NOS (:func:`tor_intent.scheduler`: the PFC queues share 50 %,
  queue 0 and the other queues the profile uses, a non-strict CNP queue among them, the other 50 %),
  ``random-detect minimum-threshold A kbytes maximum-threshold B kbytes drop-probability P weight 0 ecn`` on
  the ECN queues, and ``congestion-control random-detect forward-nonecn`` so that packets that are not ECN-capable
  (lossy queue 0's TCP) are never dropped early by the marking curve [ECN]; ``system qos`` with the network-qos and
  the output queuing policy; per rail port
  ``priority-flow-control mode on`` and ``service-policy type qos input AINET_QOS``; the PFC watchdog
  (``priority-flow-control watch-dog-interval on``, global and per port) when the profile wants it.

ECN thresholds are written in kbytes (NX-OS counts 1,024 bytes): a whole number of kbytes as such, a whole
number of thousands of bytes as that number (NVIDIA's "150 KB" is ``150 kbytes``), anything else rounded;
the lossless check compares them in the switch's unit. NX-OS has no offline schema of its CLI, so
:func:`validate` reads the render back with the ``nxos`` parser (every referenced class and policy defined)
and checks what the tech notes state (layer-2 port MTU).

**Diff.** Per configuration block (:func:`tor_diff.cli_diff`, 2 spaces a level); ``no switchport``,
``switchport`` and ``no shutdown`` count as held when the running block says nothing against them, since
NX-OS leaves its defaults out of the running configuration.

**Counters** (the load test): ``show queuing interface <port>`` once per port of the step's links, ``show interface
priority-flow-control detail`` and ``show queuing pfc-queue detail`` (the PFC watchdog), over NX-API
(``cli_show_ascii``) or the switch's connection, read-only
(``COUNTER_COMMANDS``, ``read_counters``; formats ``nxos_queuing``, ``nxos_pfc``, ``nxos_pfcwd`` in
``qos/counters_parse_nos.py``).

**Push**, NX-API CLI over HTTPS (``feature nxapi``; port 443 unless ``ansible_httpapi_port``): ``show
running-config`` (``cli_show_ascii``); nothing is sent when it holds everything; check mode stops there;
otherwise the missing lines, each inside its blocks (a ``match`` line another value replaces is removed
first: match statements add up) and the release of stale marked ports go in one ``cli_conf`` request, and
the running configuration is read again and must then hold everything. NX-API applies commands in order and
has no session to abort here: a failed command is named, the ones before it stay applied, and the next run's
diff shows what is still missing.

**Ports.** NX-OS names front-panel ports ``Ethernet<slot>/<port>`` and breakout ports
``Ethernet<slot>/<port>/<breakout>``; port MTU up to 9216 [MTU].

Not confirmed against a Cisco page here (to check on a switch before first use): ``feature lldp``, the ``fec``
keywords (``rs-fec``, ``fc-fec``, ``off``) and ``speed`` in Mb/s.
"""

from __future__ import annotations

import re
from collections import OrderedDict

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse import parse_qos
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import check_intent, scheduler
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_diff import (
    cli_blocks, cli_diff, cli_port_descriptions, owned_stale)
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import PushError, check_commands, read_command

# ----------------------------------------------------------------------------- registry facts
NAME = "nxos"
TITLE = "Cisco NX-OS"
QOS_FORMAT = "nxos"
EXTENSION = "cfg"
RUNNING_EXTENSIONS = (".cfg", ".conf", ".txt")
PORT_TEMPLATE = "Ethernet1/{node}"
PORT_MTU = 9216
PORT_MTU_MAX = 9216
PORT_NAME = "Ethernet<slot>/<port>[/<breakout>]"
PORT_NAME_RE = re.compile(r"^Ethernet[0-9]+/[0-9]+(/[0-9]+)?\Z")
PUSH = "http"
HTTP_PORT = None
INDENT = 2

# [ECN] global: ECN-capable packets are marked at the WRED thresholds; packets that are not ECN-capable are
# forwarded past WRED instead of being dropped early on its curve. Seen in a field N9K RoCE config, not a Cisco guide
# (still to read: N9K QoS guide, Queuing and Scheduling, "Configuring WRED on Egress Queues"): rendered last.
FORWARD_NON_ECN = "congestion-control random-detect forward-nonecn"
CLASS_ROCE = "AINET_ROCE"
CLASS_CNP = "AINET_CNP"
POLICY_QOS = "AINET_QOS"
POLICY_NQ = "AINET_NQ"
POLICY_QUEUING = "AINET_QUEUING"
FEC = {"rs": "rs-fec", "fc": "fc-fec", "none": "off"}
# A layer-2 port takes the default MTU or the system jumbo MTU (9216 unless `system jumbomtu` says otherwise).
L2_MTUS = (1500, 9216)
KILO = 1024
# What this collection sets on a rail port, released when the port is still marked but no longer planned.
OWNED_PORT_LINES = ("description ", "ip address ", "ipv6 address ", "switchport access vlan ",
                    "priority-flow-control mode ", "priority-flow-control watch-dog-interval ",
                    "service-policy type qos input %s" % POLICY_QOS)


def invalid_ports(names):
    """The names in ``names`` that are not NX-OS Ethernet port names."""
    return [name for name in names if not PORT_NAME_RE.match(name)]


def render(intent, header):
    """(file text, push data) of one ToR: the NX-OS CLI and its configuration lines."""
    check_intent(intent, header)
    text = "! %s\n%s" % (header, render_nxos(intent))
    return text, [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("!")]


def validate(item, running_text, options):
    """(problems, note): the render read back by the ``nxos`` parser, and layer-2 port MTUs."""
    problems = ["read back by the nxos parser: %s" % p for p in parse_qos(item["text"], QOS_FORMAT)["problems"]]
    blocks = cli_blocks(item["text"], INDENT)
    for block, lines in blocks.items():
        if block.startswith("interface Ethernet") and "switchport" in lines:
            for line in lines:
                if line.startswith("mtu ") and int(line.split()[1]) not in L2_MTUS:
                    problems.append("%s: mtu %s on a layer-2 port, which NX-OS takes only at the default %d or the "
                                    "system jumbo MTU (%d); use port_mtu %d"
                                    % (block, line.split()[1], L2_MTUS[0], L2_MTUS[1], L2_MTUS[1]))
    return problems, "%s: no offline schema of the NX-OS CLI; checked by reading it back" % item["name"]


def _default_held(line, current):
    """NX-OS prints no default: ``no switchport`` / ``switchport`` / ``no shutdown`` hold when the running block
    does not say the opposite."""
    opposite = {"no switchport": "switchport", "switchport": "no switchport", "no shutdown": "shutdown"}
    return line in opposite and opposite[line] not in current


def nxos_diff(running, rendered):
    """Rendered NX-OS lines the running configuration lacks, per block (:func:`tor_diff.cli_diff`)."""
    return cli_diff(running, rendered, INDENT, satisfied=_default_held)


def running_diff(running_text, rendered):
    """Diff items of a rendered NX-OS configuration against a running one (``show running-config`` text)."""
    return nxos_diff(running_text, rendered["text"])


def stale_ports(running_text, rendered):
    """Ports the running configuration still describes with ``[ainet]`` that the rendered one no longer has."""
    if not running_text or not running_text.strip():
        return []
    return owned_stale(cli_port_descriptions(running_text, INDENT),
                       set(cli_port_descriptions(rendered["text"], INDENT)))


def push(connection, item, check=False):
    """Push a rendered item over NX-API; ``connection`` is an :class:`tor_push.HttpTransport`."""
    return nxos_push(connection, item["text"], check=check)


# ----------------------------------------------------------------------------- render

def _kbytes(value):
    """An ECN threshold in bytes as NX-OS kbytes (see the module docstring)."""
    value = int(value)
    if value % KILO == 0:
        return value // KILO
    if value % 1000 == 0:
        return value // 1000
    return max(1, int(round(float(value) / KILO)))


def _queue_class(queue):
    return "c-out-8q-q-default" if queue == 0 else "c-out-8q-q%d" % queue


def _nq_class(priority):
    return "c-8q-nq-default" if priority == 0 else "c-8q-nq%d" % priority


def _address(family, address):
    return ("ipv6 address %s" if family == "ipv6" else "ip address %s") % address


def render_nxos(intent):
    """The NX-OS CLI of one ToR (see the module docstring)."""
    check_intent(intent)
    q = intent["qos"]
    family = intent["family"]
    mtu = intent["ports"][0]["mtu"] if intent["ports"] else PORT_MTU
    out = ["feature lldp"]
    if intent["svis"]:
        out.append("feature interface-vlan")
    if q:
        out += _qos(q, mtu)
    for svi in intent["svis"]:
        out += ["", "vlan %d" % svi["vlan"], "  name rail%d" % svi["rail"]]
    for svi in intent["svis"]:
        out += ["", "interface Vlan%d" % svi["vlan"], "  description rail%d gateway" % svi["rail"],
                "  no shutdown", "  mtu %d" % svi["mtu"], "  " + _address(family, svi["address"])]
    for entry in intent["ports"]:
        out += ["", "interface %s" % entry["port"], "  description %s" % entry["description"]]
        if entry["address"]:
            out.append("  no switchport")
        else:
            out += ["  switchport", "  switchport access vlan %d" % entry["vlan"]]
        out.append("  mtu %d" % entry["mtu"])
        if entry["speed"]:
            out.append("  speed %d" % (int(entry["speed"].rstrip("G")) * 1000))
        if entry["fec"]:
            out.append("  fec %s" % FEC[entry["fec"]])
        if entry["address"]:
            out.append("  " + _address(family, entry["address"]))
        if q:
            out.append("  priority-flow-control mode on")
            if q["watchdog"]:
                out.append("  priority-flow-control watch-dog-interval on")
            out.append("  service-policy type qos input %s" % POLICY_QOS)
        out.append("  no shutdown")
    return "\n".join(out) + "\n"


def _classes(q):
    """{class-map name: (priority, [DSCPs])} of the profile's classified DSCPs."""
    classes = OrderedDict()
    for dscp, priority in sorted(q["dscp_to_priority"].items(), key=lambda kv: (kv[1], kv[0])):
        name = CLASS_ROCE if dscp == q["roce_dscp"] else CLASS_CNP if dscp == q["cnp_dscp"] else "AINET_P%d" % priority
        classes.setdefault(name, (priority, []))[1].append(dscp)
    return classes


def _weights(q):
    """{queue: bandwidth remaining percent} of every non-strict queue: the profile's ETS weights, or without them
    NVIDIA's ``qos roce`` split (:func:`tor_intent.scheduler`, the same on every NOS); 0 on the queues the
    profile does not use (NX-OS has no "unset" for a class of a user queuing policy; the vendor's templates list
    every class)."""
    shares = scheduler(q)
    return {queue: shares.get(queue) or 0 for queue in range(8) if queue not in q["strict_queues"]}


def _qos(q, mtu):
    out = []
    classes = _classes(q)
    for name, (_priority, dscps) in classes.items():
        out += ["", "class-map type qos match-all %s" % name, "  match dscp %s" % ",".join(str(d) for d in dscps)]
    out += ["", "policy-map type qos %s" % POLICY_QOS]
    for name, (priority, _dscps) in classes.items():
        out += ["  class %s" % name, "    set qos-group %d" % priority]
    # Every other DSCP to qos-group 0, stated (as Cisco's RoCE templates do) so that the map read back is whole.
    out += ["  class class-default", "    set qos-group 0"]
    out += ["", "policy-map type network-qos %s" % POLICY_NQ]
    for priority in sorted(set(q["pfc"]) | {0}):
        out += ["  class type network-qos %s" % _nq_class(priority), "    mtu %d" % mtu]
        if priority in q["pfc"]:
            out.append("    pause pfc-cos %d" % priority)
    out += ["", "policy-map type queuing %s" % POLICY_QUEUING]
    weights = _weights(q)
    ecn = q["ecn"]
    for queue in range(8):
        out.append("  class type queuing %s" % _queue_class(queue))
        if queue in q["strict_queues"]:
            out.append("    priority level 1")
        else:
            out.append("    bandwidth remaining percent %d" % weights[queue])
        if ecn and queue in ecn["queues"]:
            out.append("    random-detect minimum-threshold %d kbytes maximum-threshold %d kbytes drop-probability %d "
                       "weight 0 ecn" % (_kbytes(ecn["min_bytes"]), _kbytes(ecn["max_bytes"]), ecn["probability"]))
    out += ["", "system qos", "  service-policy type network-qos %s" % POLICY_NQ,
            "  service-policy type queuing output %s" % POLICY_QUEUING]
    if q["watchdog"]:
        out += ["", "priority-flow-control watch-dog-interval on"]
    if ecn:
        # WRED ECN marks ECN-capable packets and drops the others on the same curve; with forward-nonecn a packet
        # that is not ECN-capable bypasses WRED (only the queue limit drops it), so marking never drops early.
        # Last among the global lines: NX-API stops at the first command that fails, and this one is seen only in a
        # field N9K RoCE config, so a platform that rejects it must not cost the lines before it.
        out += ["", FORWARD_NON_ECN]
    return out


# ----------------------------------------------------------------------------- push (NX-API CLI)

def _outputs(reply):
    outputs = (((reply or {}).get("ins_api") or {}).get("outputs") or {}).get("output")
    if outputs is None:
        raise PushError("NX-API answered without outputs: %r" % (reply,))
    return outputs if isinstance(outputs, list) else [outputs]


def nxapi(transport, kind, commands):
    """Run ``commands`` as one NX-API CLI request of type ``kind`` (``cli_show_ascii``, ``cli_conf``); the
    ``body`` of each command's output. A command that failed raises :class:`PushError` naming it; a command that
    holds ';' or a line break is refused before the request (:func:`tor_push.check_commands`): NX-API would split it."""
    check_commands(commands, "NX-API")
    request = OrderedDict((("version", "1.0"), ("type", kind), ("chunk", "0"), ("sid", "1"),
                           ("input", " ;".join(commands)), ("output_format", "json")))
    _status, reply = transport.request("POST", "/ins", body={"ins_api": request})
    if not isinstance(reply, dict):
        raise PushError("NX-API answered %r" % (reply,))
    bodies = []
    for index, output in enumerate(_outputs(reply)):
        if str(output.get("code")) != "200":
            command = commands[index] if index < len(commands) else output.get("input", "?")
            raise PushError("NX-API: command %d of %d %r failed: %s (%s %s)" % (
                index + 1, len(commands), command, " ".join(str(output.get("clierror") or "").split()) or "no detail",
                output.get("code"), output.get("msg")))
        bodies.append(output.get("body"))
    return bodies


def nxos_commands(items):
    """``cli_conf`` commands that add the diff items' lines, each inside its blocks (consecutive lines of one
    block share one visit); a ``match`` line the running block holds with another value is removed first."""
    out, path = [], []
    for item in items:
        if item["after"] is None:
            continue
        want = item["path"][0].split(" / ") if item["path"] else []
        if want != path:
            out += ["exit"] * len(path)
            out += want
            path = want
        if item["before"] and item["before"].startswith("match "):
            out.append("no " + item["before"])
        out.append(item["after"])
    return out + ["exit"] * len(path)


def nxos_release(running, ports):
    """(commands, diff items) that remove what this collection set on stale rail ports (:func:`stale_ports`):
    the ``no`` form of each owned line the running configuration holds on them."""
    blocks = cli_blocks(running or "", INDENT)
    commands, items = [], []
    for port in ports:
        block = "interface %s" % port
        lines = [line for line in blocks.get(block, []) if line.startswith(OWNED_PORT_LINES)]
        if lines:
            # `no description` takes no text: the switch's own description never becomes part of a command.
            commands += [block] + ["no description" if line.startswith("description ") else "no " + line
                                   for line in lines] + ["exit"]
            items += [{"path": (block,), "before": line, "after": None} for line in lines]
    return commands, items


def _running(transport):
    return str(nxapi(transport, "cli_show_ascii", ["show running-config"])[0] or "")


def _missing(running, text):
    """Diff items of ``text`` against ``running`` without the lines that open a block whose lines the diff
    lists (entering the block to add them adds it), and the stale ports."""
    items = nxos_diff(running, text)
    opened = {item["path"][0] for item in items if item["path"]}
    items = [item for item in items if " / ".join(item["path"] + (item["after"],)) not in opened]
    return items, stale_ports(running, {"text": text})


def nxos_push(transport, text, check=False):
    """Push a rendered NX-OS configuration (see the module docstring): ``{"changed", "diff", "released"}``."""
    text = text if isinstance(text, str) else "\n".join(text) + "\n"
    running = _running(transport)
    items, release = _missing(running, text)
    release_cmds, release_items = nxos_release(running, release)
    diff = items + release_items
    if not diff or check:
        return {"changed": bool(diff), "diff": diff, "released": release}
    nxapi(transport, "cli_conf", nxos_commands(items) + release_cmds)
    left, stale = _missing(_running(transport), text)
    if left or stale:
        raise PushError("the switch still lacks after the push: %s" % "; ".join(
            ["%s: %s" % (" ".join(i["path"]) or "(top)", i["after"]) for i in left[:5]]
            + ["stale port %s" % port for port in stale[:5]]))
    return {"changed": True, "diff": diff, "released": release}


# ----------------------------------------------------------------------------- read (the lossless check)

# How the lossless check reads the switch (tor/tor_read.py), the default first: NX-API, as the push reads it, or
# `show running-config` over the switch's own connection (SSH or ansible.netcommon.network_cli).
READ = ("http", "ssh")
READ_COMMAND = ("show", "running-config")


def read(connection, via):
    """The running configuration (CLI text, what ``parse_qos`` reads as ``nxos``). ``via`` ``"http"``:
    ``connection`` is an :class:`tor_push.HttpTransport`, NX-API ``cli_show_ascii`` ``show running-config``;
    ``"ssh"``: ``connection`` is ``run(argv, data=None) -> (rc, stdout, stderr)`` on the switch. Reads only;
    :class:`PushError` when it fails."""
    if via == "http":
        text = _running(connection)
        if not text.strip():
            raise PushError("%s returned nothing" % " ".join(READ_COMMAND))
        return text
    if via == "ssh":
        return read_command(connection, READ_COMMAND)
    raise ValueError("NX-OS is read over NX-API (http) or its connection (ssh), not %r" % (via,))


# ----------------------------------------------------------------------------- counters (the load test)

# The load test's counters (qos/counters_parse_nos.py formats ``nxos_queuing``, ``nxos_pfc``, ``nxos_pfcwd``), read-only, the way the
# configuration is read: NX-API ``cli_show_ascii`` (the text the CLI prints) or the switch's connection.
# ``show queuing interface <port>`` prints one port's egress queues per qos-group (transmitted, WRED/AFD and tail
# drops, the PFC watchdog's drops) and its ingress drops (overflow: headroom exhausted); it runs once per port of the
# step's links. ``show interface priority-flow-control detail`` prints every port's PFC frames per priority. Their
# layout: a published Nexus 9000 RoCE capture (tests/unit/plugins/module_utils/data/counters/ORIGIN.md). How often
# NX-OS refreshes them is not documented: no settle (0).
COUNTER_READ = ("http", "ssh")
COUNTER_COMMANDS = (("nxos_queuing", ("show", "queuing", "interface", "{port}")),
                    ("nxos_pfc", ("show", "interface", "priority-flow-control", "detail")),
                    ("nxos_pfcwd", ("show", "queuing", "pfc-queue", "detail")))
# The PFC watchdog's storms and drops (``show queuing pfc-queue detail``, every port it watches; format ``nxos_pfcwd``;
# its layout: ORIGIN.md) are read apart, so that a release or a switch that refuses the command keeps the other reads:
# the failure is kept as its one line, which the parser reports as the read's problem (as SONiC's watchdog read).
OPTIONAL_COUNTERS = ("nxos_pfcwd",)
# The reads that count drops (load_verdict: one not read leaves the class inconclusive), with how to read them.
DROP_STAGES = {"nxos_queuing": "`show queuing interface <port>` (a role with show rights)",
               "nxos_pfcwd": "`show queuing pfc-queue detail` (a release with the PFC watchdog)"}


def read_counters(connection, via, ports=None):
    """``{format: output}`` of the ports' queuing counters (``{port: text}``, one command a port), the switch's PFC
    counters and its PFC watchdog's (text) (``COUNTER_COMMANDS``): ``via`` ``"http"``, NX-API ``cli_show_ascii``
    through ``connection`` (an :class:`tor_push.HttpTransport`), the required commands in one request and each
    ``OPTIONAL_COUNTERS`` command in its own; ``"ssh"``, each command on ``connection`` (``run(argv, data=None)``).
    ValueError before anything runs when no port is given or one is not an NX-OS port name; :class:`PushError` naming
    the command when a required one fails (an optional one that fails is its error line). Reads only."""
    if via not in COUNTER_READ:
        raise ValueError("NX-OS counters are read over NX-API (http) or its connection (ssh), not %r" % (via,))
    ports = sorted(set(ports or ()))
    if not ports:
        raise ValueError("NX-OS prints a port's queuing counters a command: give the ports to read")
    bad = invalid_ports(ports)
    if bad:
        raise ValueError("%s: not a %s port name (%s)" % (", ".join(bad), TITLE, PORT_NAME))
    runs = []  # (format, port or None, command words)
    for fmt, command in COUNTER_COMMANDS:
        if "{port}" in command:
            runs += [(fmt, port, tuple(port if w == "{port}" else w for w in command)) for port in ports]
        else:
            runs.append((fmt, None, command))
    required = [run for run in runs if run[0] not in OPTIONAL_COUNTERS]
    texts = {}
    if via == "http":
        bodies = nxapi(connection, "cli_show_ascii", [" ".join(command) for _fmt, _port, command in required])
        if len(bodies) != len(required):
            raise PushError("NX-API answered %d outputs to %d commands" % (len(bodies), len(required)))
        texts.update((run, str(body or "")) for run, body in zip(required, bodies))
    else:
        texts.update((run, read_command(connection, run[2])) for run in required)
    for run in runs:
        if run in texts:
            continue
        try:
            texts[run] = (str((nxapi(connection, "cli_show_ascii", [" ".join(run[2])]) or [""])[0] or "")
                          if via == "http" else read_command(connection, run[2]))
        except PushError as exc:
            texts[run] = str(exc)
    out = {}
    for run in runs:
        fmt, port, _command = run
        if port is None:
            out[fmt] = texts[run]
        else:
            out.setdefault(fmt, {})[port] = texts[run]
    return out
