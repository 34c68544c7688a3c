# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Arista EOS: everything this collection knows about the NOS, in one module (see :mod:`platforms`).

**Render**, through pyavd. ``eos_structured(intent)`` builds AVD *structured config* (the data model of
Arista's ``eos_cli_config_gen``), pure Python. ``render_eos(intent)`` validates it with pyavd's own schema
(``validate_structured_config``) and lets pyavd render the EOS CLI (``get_device_config``), so the CLI
syntax is Arista's, not ours. pyavd is an optional dependency that only EOS users need; without it
:class:`tor_intent.RendererUnavailable` names the package to install. The file is ``<switch>.cfg``, read
back by ``parse_qos`` as ``eos``.

What is set:

* ``ethernet_interfaces`` per rail port: description, ``no shutdown``, MTU, speed / FEC when the
  model sets them (``400G`` -> ``400g``, ``800G`` -> ``800g-8``; ``rs`` -> Reed-Solomon, ``fc``
  -> Fire Code, ``none`` -> ``no error-correction encoding``); exclusive/p2p: ``no switchport`` with
  the plan's gateway (``ip address`` or ``ipv6 enable`` + ``ipv6 address``); shared: ``switchport
  access vlan <1000+rail>`` with ``vlans`` and a ``vlan_interfaces`` SVI holding the rail gateway;
* ``service-profile`` ``PROFILE`` on every rail port, and the ``qos profile``: ``qos trust dscp``,
  ``priority-flow-control on`` with ``no-drop`` on the PFC priorities (and ``pause watchdog`` when
  the profile wants it), ``tx-queue`` blocks with ECN thresholds in bytes on the ECN queues, and a
  complete scheduler (:func:`tor_intent.scheduler`, the same on every NOS): ``priority strict`` on
  the strict CNP queue, ``no priority`` (round robin) with ``bandwidth percent`` on every other queue the
  profile uses: its ETS weights, or without them NVIDIA's ``qos roce`` split (the PFC queues 50 %, queue 0
  and the other used queues 50 %). EOS schedules a tx-queue strict priority unless it says ``no priority``
  (Arista EOS User Manual, "Quality of Service", "Transmit Queues and Port Shaping",
  https://www.arista.com/en/um-eos/eos-quality-of-service; the ``eos`` parser reads it so), so a RoCE queue
  left unscheduled would be served before queue 0 and starve it;
* global ``qos map dscp <d> to traffic-class <p>`` for the RoCE and CNP DSCPs (the other DSCPs
  keep EOS's default map) and the PFC watchdog default timers when the watchdog is wanted.

LLDP is on by default on EOS and not written. Routed EOS ports classify by DSCP, so both
``dscp`` and ``pcp,dscp`` trust become ``qos trust dscp``.

**Validate.** pyavd's schema, at render time (:func:`validate_eos` for a structured config).

**Diff.** Per configuration block of the CLI, 3 spaces a level (:func:`tor_diff.cli_diff`).

**Push**, Arista eAPI (``POST /command-api``, JSON-RPC 2.0 ``runCmds``, ``version 1``, ``format text``): the
reply is ``{"result": [{"output": "..."}, ...]}`` one per command, or ``{"error": {"code", "message",
"data"}}`` where ``data`` holds the results of every command up to and including the failed one, the last
with ``errors`` (the eAPI specification as quoted in aristanetworks/anta ``asynceapi/device.py``). eAPI does
not leave a configuration block by itself (napalm-automation/napalm-base#254), so blocks are closed with
``exit``; ``show session-config named <s> diffs`` is asked after ``end`` since a diff taken inside a block
misses it (ansible-collections/arista.eos#476; pyeapi docs ``release-notes-0.6.0.rst``). A configure
session is committed only when its diff is not empty, aborted otherwise and in check mode. Rail ports still
marked ``[ainet]`` but no longer planned get ``no`` lines (:func:`eos_release_lines`).

**Ports.** EOS names front-panel ports ``Ethernet<n>``, ``Ethernet<n>/<lane>`` on multi-lane ports and
``Ethernet<slot>/<n>/<lane>`` on modular switches; port MTU at most 9214 (EOS's ``mtu`` range 68..9214,
which is why the model caps ``port_mtu`` there).
"""

from __future__ import annotations

import json
import re
import uuid

from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import check_intent, scheduler
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_diff import (
    cli_diff, cli_port_descriptions, owned_stale)
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import RendererUnavailable
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import (
    PushError, check_commands, cli_commands, read_command)

# ----------------------------------------------------------------------------- registry facts
NAME = "eos"
TITLE = "Arista EOS"
QOS_FORMAT = "eos"
EXTENSION = "cfg"
RUNNING_EXTENSIONS = (".cfg", ".conf", ".txt")
PORT_TEMPLATE = "Ethernet{node}"
PORT_MTU = 9214
PORT_MTU_MAX = 9214
PORT_NAME = "Ethernet<n>[/<m>...]"
PORT_NAME_RE = re.compile(r"^Ethernet[0-9]+(/[0-9]+){0,2}\Z")
PUSH = "http"
HTTP_PORT = None
INDENT = 3

PROFILE = "AINET_ROCE"
SPEED = {"800G": "800g-8"}
FEC = {"rs": {"enabled": True, "reed_solomon": True}, "fc": {"enabled": True, "fire_code": True},
       "none": {"enabled": False}}
WATCHDOG = {"action": "drop", "timeout": 0.2, "polling_interval": 0.1, "recovery_time": 0.2}
PYAVD = "pyavd==6.4.0"


def invalid_ports(names):
    """The names in ``names`` that are not EOS Ethernet port names."""
    return [name for name in names if not PORT_NAME_RE.match(name)]


def render(intent, header):
    """(file text, push data) of one ToR: the EOS CLI (pyavd's) and its configuration lines."""
    check_intent(intent, header)
    text = "! %s\n%s" % (header, render_eos(intent))
    return text, [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("!")]


def validate(item, running_text, options):
    """Nothing more to check: render_eos validated the structured config with pyavd already."""
    return [], None


def eos_diff(running, rendered):
    """Rendered EOS lines the running configuration lacks, per block (:func:`tor_diff.cli_diff`)."""
    return cli_diff(running, rendered, INDENT)


def running_diff(running_text, rendered):
    """Diff items of a rendered EOS configuration against a running one (CLI text)."""
    return eos_diff(running_text, rendered["text"])


def stale_ports(running_text, rendered):
    """Ports the running configuration still describes with ``[ainet]`` that the rendered one no longer has."""
    if not running_text or not running_text.strip():
        return []
    return owned_stale(cli_port_descriptions(running_text, INDENT),
                       set(cli_port_descriptions(rendered["text"], INDENT)))


def push(connection, item, check=False):
    """Push a rendered item through a configure session over eAPI; ``connection`` is an HttpTransport."""
    return eos_push(connection, item["text"], check=check)


def eos_commands(lines):
    """Rendered EOS lines (indented by 3 per level) as CLI commands, with ``exit`` where a block ends;
    ``!`` and blank lines are dropped."""
    return cli_commands(lines, INDENT)


# ----------------------------------------------------------------------------- render

def _address(conf, address, family):
    if family == "ipv6":
        conf["ipv6_enable"] = True
        conf["ipv6_address"] = address
    else:
        conf["ip_address"] = address


def eos_structured(intent):
    """AVD structured config of one ToR (see the module docstring)."""
    check_intent(intent)
    q = intent["qos"]
    family = intent["family"]
    ports = []
    for entry in intent["ports"]:
        conf = {"name": entry["port"], "description": entry["description"], "shutdown": False, "mtu": entry["mtu"]}
        if entry["speed"]:
            conf["speed"] = SPEED.get(entry["speed"], entry["speed"].lower())
        if entry["fec"]:
            conf["error_correction_encoding"] = dict(FEC[entry["fec"]])
        if entry["address"]:
            conf["switchport"] = {"enabled": False}
            _address(conf, entry["address"], family)
        else:
            conf["switchport"] = {"enabled": True, "mode": "access", "access_vlan": entry["vlan"]}
        if q:
            conf["service_profile"] = PROFILE
        ports.append(conf)
    out = {"ethernet_interfaces": ports}
    if intent["svis"]:
        out["vlans"] = [{"id": svi["vlan"], "name": "rail%d" % svi["rail"]} for svi in intent["svis"]]
        out["vlan_interfaces"] = []
        for svi in intent["svis"]:
            conf = {"name": "Vlan%d" % svi["vlan"], "description": "rail%d gateway" % svi["rail"], "shutdown": False,
                    "mtu": svi["mtu"]}
            _address(conf, svi["address"], family)
            out["vlan_interfaces"].append(conf)
    if q:
        out.update(_qos(q))
    return out


def _qos(q):
    # Every queue the profile uses is scheduled (tor_intent.scheduler): an EOS tx-queue without `no priority`
    # stays strict priority, EOS's default (see the module doc), so an unscheduled RoCE queue would starve queue 0.
    queues = {}
    for queue, weight in scheduler(q).items():
        if weight is None:
            queues[queue] = {"id": queue, "priority": "priority strict"}
        else:
            queues[queue] = {"id": queue, "bandwidth_percent": weight, "priority": "no priority"}
    if q["ecn"]:
        ecn = q["ecn"]
        for queue in ecn["queues"]:
            queues.setdefault(queue, {"id": queue})["random_detect"] = {"ecn": {"threshold": {
                "units": "bytes", "min": ecn["min_bytes"], "max": ecn["max_bytes"],
                "max_probability": ecn["probability"]}}}
    pfc = {"enabled": True, "priorities": [{"priority": p, "no_drop": True} for p in q["pfc"]]}
    if q["watchdog"]:
        pfc["watchdog"] = {"enabled": True}
    profile = {"name": PROFILE, "trust": "dscp", "priority_flow_control": pfc}
    if queues:
        profile["tx_queues"] = [queues[k] for k in sorted(queues)]
    out = {"qos_profiles": [profile],
           "qos": {"map": {"dscp": ["%d to traffic-class %d" % (d, p)
                                    for d, p in sorted(q["dscp_to_priority"].items())]}}}
    if q["watchdog"]:
        out["priority_flow_control"] = {"watchdog": dict(WATCHDOG)}
    return out


def _pyavd():
    try:
        import pyavd  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise RendererUnavailable("rendering Arista EOS configurations needs pyavd on the controller: "
                                  "pip install '%s' (or add it to the execution environment)" % PYAVD) from None
    return pyavd


def _validate(pyavd, structured):
    result = pyavd.validate_structured_config(structured)
    violations = ["%s: %s" % (".".join(str(p) for p in v.path), v.message)
                  for v in result.validation_result.violations]
    return result.validated_data, violations


def validate_eos(structured):
    """pyavd's schema violations of a structured config, as ``"path: message"`` strings."""
    return _validate(_pyavd(), structured)[1]


def render_eos(intent):
    """The EOS CLI of one ToR, rendered by pyavd; ValueError listing pyavd's violations."""
    pyavd = _pyavd()
    data, violations = _validate(pyavd, eos_structured(intent))
    if violations or data is None:
        raise ValueError("ToR %s: pyavd refuses the EOS structured config: %s"
                         % (intent["name"], "; ".join(violations)))
    return pyavd.get_device_config(data)


# ----------------------------------------------------------------------------- push (eAPI)

def _eapi(transport, cmds, fmt="text"):
    """The outputs of eAPI ``runCmds`` ``cmds`` (strings, or ``{"cmd", "revision"}`` objects) in format ``fmt``
    (``text``: each command's text; ``json``: each command's object). A command holding a line break, a control
    character or ';' is refused before the request (:func:`tor_push.check_commands`)."""
    check_commands(cmds, "eAPI")
    _status, reply = transport.request("POST", "/command-api", body={
        "jsonrpc": "2.0", "method": "runCmds", "id": "ainet-fabric",
        "params": {"version": 1, "cmds": cmds, "format": fmt}})
    if not isinstance(reply, dict):
        raise PushError("eAPI answered %r" % (reply,))
    err = reply.get("error")
    if err:
        data = err.get("data") or []
        # The last object of data is the failed command's (eAPI specification).
        if data and isinstance(data[-1], dict) and data[-1].get("errors"):
            index = len(data) - 1
            command = cmds[index] if index < len(cmds) else "?"
            command = command.get("cmd", "?") if isinstance(command, dict) else command
            raise PushError("eAPI: command %d of %d %r failed: %s (%s)" % (
                index + 1, len(cmds), command, "; ".join(str(e) for e in data[-1]["errors"]), err.get("message")))
        raise PushError("eAPI error %s: %s" % (err.get("code"), err.get("message")))
    if fmt == "json":
        return list(reply.get("result") or [])
    return [r.get("output", "") if isinstance(r, dict) else r for r in reply.get("result") or []]


def eos_push(transport, lines, check=False, session=None):
    """Push a rendered EOS configuration (its text, or its lines) through a configure session (see the
    module docstring); rail ports the running configuration still marks but the rendered one no longer has
    are released. ``session`` names the session (default ``ainet-fabric-<random>``)."""
    text = lines if isinstance(lines, str) else "\n".join(lines) + "\n"
    session = session or "ainet-fabric-%s" % uuid.uuid4().hex[:8]
    running = _eapi(transport, ["enable", "show running-config"])[-1]
    release = stale_ports(running, {"text": text})
    cmds = ["enable", "configure session %s" % session] + eos_commands(text.splitlines() + eos_release_lines(release))
    try:
        outputs = _eapi(transport, cmds + ["end", "show session-config named %s diffs" % session])
    except PushError:
        _abort(transport, session)
        raise
    diff = [line for line in (outputs[-1] if outputs else "").splitlines()
            if line[:1] in "+-" and not line.startswith(("+++ ", "--- "))]
    changed = bool(diff)
    if not changed or check:
        _abort(transport, session)
    else:
        try:
            _eapi(transport, ["enable", "configure session %s" % session, "commit"])
        except PushError:
            _abort(transport, session)
            raise
    return {"changed": changed, "session": session, "released": release,
            "diff": [{"path": (), "before": None, "after": line} for line in diff]}


def eos_release_lines(ports):
    """EOS lines that remove what this collection set on stale rail ports (see :func:`stale_ports`)."""
    out = []
    for port in ports:
        out.append("interface %s" % port)
        out += ["   " + line for line in ("no description", "no service-profile", "no ip address", "no ipv6 address",
                                          "no switchport access vlan")]
    return out


def _abort(transport, session):
    try:
        _eapi(transport, ["enable", "configure session %s" % session, "abort"])
    except PushError:
        pass


# ----------------------------------------------------------------------------- read (the lossless check)

# How the lossless check reads the switch (tor/tor_read.py), the default first: eAPI, as the push reads it, or
# `show running-config` over the switch's own connection (SSH or ansible.netcommon.network_cli).
READ = ("http", "ssh")
READ_COMMAND = ("show", "running-config")


def read(connection, via):
    """The running configuration (CLI text, what ``parse_qos`` reads as ``eos``). ``via`` ``"http"``:
    ``connection`` is an :class:`tor_push.HttpTransport`, eAPI ``runCmds`` ``enable``, ``show running-config``
    (``format text``); ``"ssh"``: ``connection`` is ``run(argv, data=None) -> (rc, stdout, stderr)`` on the switch,
    ``show running-config`` (the user needs privilege 15). Reads only; :class:`PushError` when it fails."""
    if via == "http":
        text = str(_eapi(connection, ["enable", " ".join(READ_COMMAND)])[-1] or "")
        if not text.strip():
            raise PushError("%s returned nothing" % " ".join(READ_COMMAND))
        return text
    if via == "ssh":
        return read_command(connection, READ_COMMAND)
    raise ValueError("EOS is read over eAPI (http) or its connection (ssh), not %r" % (via,))


# The load test's counters (qos/counters_parse.py formats ``eos_pfc``, ``eos_queue``, ``eos_ecn``): the show commands
# in JSON, read-only, each printing every port (the verdict keeps the link's). Over eAPI (the default, as the
# configuration is read) each command is asked at the revision whose layout the parsers read, as aristanetworks/anta
# asks it (``anta/tests/interfaces.py``: ``VerifyInterfacesPFCCounters`` revision 3,
# ``VerifyInterfacesEgressQueueDrops`` and ``VerifyInterfacesECNCounters`` revision 1; ``{"cmd", "revision"}`` in
# ``runCmds``, as anta's ``AsyncEOSDevice._collect`` sends it); over the switch's connection the CLI prints the
# same objects with ``| json`` (the CLI's own pipe: the connection passes ``|`` to the CLI as it is).
# The PFC frames per priority (qos/counters_parse_nos.py ``eos_pfc_detail``) are read port by port, for the step's
# ports, with the command as its one known reader runs it (facebook/DNE-TaaC, ``show interface <port>
# priority-flow-control counters detail | json``; over eAPI without a revision, the model's default): apart, in a
# request of their own, so that a release that refuses the command keeps the other reads (its error line is the
# read's problem, as SONiC's optional reads).
COUNTER_READ = ("http", "ssh")
COUNTER_COMMANDS = (("eos_pfc", ("show", "priority-flow-control", "counters")),
                    ("eos_queue", ("show", "interfaces", "counters", "queue", "detail")),
                    ("eos_ecn", ("show", "qos", "interfaces", "ecn", "counters", "queue")),
                    ("eos_pfc_detail", ("show", "interface", "{port}", "priority-flow-control", "counters", "detail")))
COUNTER_REVISIONS = {"eos_pfc": 3, "eos_queue": 1, "eos_ecn": 1}
OPTIONAL_COUNTERS = ("eos_pfc_detail",)
# The reads that count drops (load_verdict: one not read leaves the class inconclusive), with how to read them.
DROP_STAGES = {"eos_queue": "`show interfaces counters queue detail | json` over eAPI"}
JSON_PIPE = ("|", "json")


def _port_command(command, port):
    return tuple(port if word == "{port}" else word for word in command)


def read_counters(connection, via, ports=None):
    """``{format: output}`` of the switch's PFC, queue and ECN counters (``COUNTER_COMMANDS``): ``via`` ``"http"``,
    eAPI ``runCmds`` in ``format json`` through ``connection`` (an :class:`tor_push.HttpTransport`), each output the
    command's object; ``"ssh"``, ``<command> | json`` on ``connection`` (``run(argv, data=None)`` as for
    :func:`read`), each output its JSON text. With ``ports``, each port's PFC frames per priority too
    (``eos_pfc_detail``: ``{port: JSON text}``, a failure kept as its line). ValueError before anything runs when a
    port is not an EOS port name. Reads only; :class:`PushError` naming the command when a required one fails."""
    if via not in COUNTER_READ:
        raise ValueError("EOS counters are read over eAPI (http) or its connection (ssh), not %r" % (via,))
    ports = sorted(set(ports or ()))
    bad = invalid_ports(ports)
    if bad:
        raise ValueError("%s: not a %s port name (%s)" % (", ".join(bad), TITLE, PORT_NAME))
    required = [(fmt, command) for fmt, command in COUNTER_COMMANDS if "{port}" not in command]
    per_port = [(fmt, command) for fmt, command in COUNTER_COMMANDS if "{port}" in command]
    out = {}
    if via == "http":
        cmds = [{"cmd": " ".join(command), "revision": COUNTER_REVISIONS[fmt]} for fmt, command in required]
        outputs = _eapi(connection, ["enable"] + cmds, fmt="json")[1:]
        if len(outputs) != len(cmds):
            raise PushError("eAPI answered %d outputs to %d commands (%s)" % (
                len(outputs), len(cmds), ", ".join(c["cmd"] for c in cmds)))
        for (fmt, command), output in zip(required, outputs):
            if not isinstance(output, dict):
                raise PushError("%s: eAPI answered %s, not the command's JSON object"
                                % (" ".join(command), " ".join(str(output).split())[:200]))
            out[fmt] = output
        for fmt, command in per_port if ports else ():
            words = [" ".join(_port_command(command, port)) for port in ports]
            try:
                answers = _eapi(connection, ["enable"] + words, fmt="json")[1:]
                if len(answers) != len(words):
                    raise PushError("eAPI answered %d outputs to %d commands" % (len(answers), len(words)))
                out[fmt] = dict((port, json.dumps(answer)) for port, answer in zip(ports, answers))
            except PushError as exc:
                out[fmt] = dict((port, str(exc)) for port in ports)
        return out
    for fmt, command in required:
        out[fmt] = read_command(connection, command + JSON_PIPE)
    for fmt, command in per_port if ports else ():
        out[fmt] = {}
        for port in ports:
            try:
                out[fmt][port] = read_command(connection, _port_command(command, port) + JSON_PIPE)
            except PushError as exc:
                out[fmt][port] = str(exc)
    return out
