# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA Cumulus Linux (NVUE): everything this collection knows about the NOS, in one module (see
:mod:`platforms`).

**Render.** ``render_nvue(intent)`` returns the body of one ``- set:`` document (a nested dict, the same
tree the NVUE REST API patches); ``nvue_text(body)`` the YAML that ``nv config apply -y <file>`` takes
(``<switch>.yaml``, read back by ``parse_qos`` as ``nvue``). The object model is Cumulus Linux
``RELEASE`` (5.14): 5.18 renames ``interface.ip`` and ``qos.roce.enable``, so the release is pinned and
the tests validate against its schema.

What is set:

* per rail port ``swpN``: ``type swp``, description, ``link`` (``state up``, ``mtu``, ``speed`` /
  ``fec`` when the model sets them), and by addressing mode ``ip address <gateway>`` (exclusive,
  p2p) or ``bridge domain br_default access <vlan>`` (shared, with ``vlan<id>`` SVIs holding the
  rail gateway and the VLANs in ``br_default``);
* ``service lldp state enabled``;
* the lossless profile: ``qos roce`` lossless (Cumulus's RoCE baseline, which sizes the lossless
  ingress pool and headroom) and, on the rail ports, this collection's own profiles named
  ``PROFILE`` for ``mapping`` (trust, the profile's DSCPs), ``pfc`` (the PFC priorities),
  ``congestion-control`` (ECN on the ECN queues) and ``egress-scheduler`` (:func:`tor_intent.scheduler`: every
  queue in use, DWRR weights and the strict CNP queue; without ETS weights ``qos roce``'s own split), and
  ``pfc-watchdog`` on the ports when the profile wants it;
* switch-wide, only where the profile differs from what ``qos roce`` sets ([ROCE] "Default RoCE
  Configuration": switch priority 3 -> traffic class 3, 6 -> 6, the others -> 0; priority 3 in the RoCE
  lossless pool): ``egress-queue-mapping default-global`` for the switch priorities the profile uses whose
  traffic class differs (NVUE has no other profile of it, [QOS] "Egress Queues"), and, when the lossless
  priorities are not ``qos roce``'s 3, the ``roce-lossless`` traffic pool on them with ``default-lossy``
  keeping the others, as [QOS] "Traffic Pools" and [ROCE] "Change RoCE Configuration" move a priority
  between pools. The ``nvidia`` profile writes no switch-wide object besides ``qos roce``.

Sources: Cumulus Linux 5.14 user guide, https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-514/
then ``Layer-1-and-Switch-Ports/Quality-of-Service/`` (markdown: CumulusNetworks/docs ``content/cumulus-linux-514/
Layer-1-and-Switch-Ports/Quality-of-Service/``, read at 1ffba627 and 0d142afe):

* [ROCE] ``RDMA-over-Converged-Ethernet-RoCE/``: table "Default RoCE Configuration" (trust, the switch
  priority to traffic class map, "Port ETS" TC 6 strict / TC 3 WRR 50 % / TC 0 WRR 50 %, ECN, PFC on switch
  priority 3, priority 3 in the RoCE lossless traffic pool), the ``nv show qos roce`` example (pools
  ``lossy-default-ingress`` 0,1,2,4,5,6,7 and ``roce-reserved-ingress`` 3 on a port), "Change RoCE
  Configuration" (a priority leaves ``default-lossy`` before another pool takes it; moving the lossless
  priority re-maps PFC, the egress queue and the DSCP);
* [QOS] ``_index.md`` (the "Quality of Service" page): "Egress Queues" (NVUE only supports the
  ``default-global`` egress-queue-mapping), "Egress Scheduler" (``dwrr`` needs ``bw-percent`` 1-100, at most
  100 in all; a traffic class left out gets DWRR 0), "Port Groups" (a port profile overrides the global
  settings for its ports; a scheduler profile that weights some queues schedules the others best effort),
  "Traffic Pools" (``default-lossy`` holds every switch priority by default; ``roce-lossless`` is the RoCE
  lossless pool; only one lossless pool at a time).

Trust: ``dscp`` -> ``l3``, ``pcp,dscp`` -> ``both``. Every map key is a string, as NVUE's.

**Validate.** ``validate_nvue(body, release)``: the NVUE object model of a Cumulus Linux release from the
``nvueschema`` package (Pydantic models generated from NVIDIA's NVUE OpenAPI), made strict: every model
forbids unknown keys, as ``nv config apply`` does (pydantic's ``extra="forbid"`` for the validation; where
pydantic's ``model_validate`` takes no ``extra``, set on every model).

**Diff.** The ``set`` body against the running configuration (``nv config show -o yaml`` or an ``nv config
apply`` file, read as the NVUE QoS parser reads it) as trees (:func:`tor_diff.tree_diff`).

**Push**, NVUE, Cumulus Linux 5.x REST API (user guide "NVUE API", CumulusNetworks/docs
``content/cumulus-linux-59/System-Configuration/NVIDIA-User-Experience-NVUE/NVUE-API.md`` at 01d698bf;
the 4.4 page ``content/cumulus-linux-44/System-Configuration/NVIDIA-User-Experience-NVUE.md`` at c1bf79c8),
port 8765 unless ``ansible_httpapi_port``:

* ``GET /nvue_v1/?rev=applied&filled=false``: the applied configuration, without defaults;
* ``POST /nvue_v1/revision`` -> ``{"<id>": {"state": "pending", "transition": {"issue": {}, "progress": ""}}}``
  (5.x ids are numbers as strings, ``"2"``; 4.x ids were ``changeset/cumulus/<date>``, quoted ``%2F``);
* ``PATCH /nvue_v1/?rev=<id>`` with the ``set`` body (a *root patch*) -> ``{}``; ``DELETE`` on a path with
  ``?rev=<id>`` is ``nv unset``;
* ``PATCH /nvue_v1/revision/<id>`` with ``{"state": "apply", "auto-prompt": {"ays": "ays_yes"}}`` ->
  ``{"state": "apply", ...}``; without ``ays_yes`` a warning prompt ends the revision in ``ays_fail``;
* ``GET /nvue_v1/revision/<id>`` -> ``{"state": "applied", ...}`` (the docs also show the reply wrapped in
  ``{"<id>": {...}}``); failures carry ``transition.issue`` = ``{"0": {"code", "data", "message",
  "severity"}}`` (``invalid`` / ``config_invalid``, ``ays_fail`` / ``client_timeout``). Terminal states
  beyond the docs' two examples (``apply_fail``, ``apply_error``, ``confirm_fail``, ``ready_error``,
  ``verify_error``; ``applied_and_saved``) are those NVUE clients in the wild treat as such; see
  tests/unit/plugins/module_utils/data/tor_push/ORIGIN.md.

Nothing is created when the applied configuration already holds everything. Rail ports still marked
``[ainet]`` but no longer planned lose the paths this collection set (:data:`NVUE_PORT_PATHS`, ``DELETE`` in
the same revision).

**Ports.** Cumulus Linux names front-panel ports ``swp<n>`` and breakout ports ``swp<n>s<m>`` (user guide
"Switch Port Attributes", "Breakout Ports"); link MTU up to 9216.
"""

from __future__ import annotations

import importlib
import inspect
import re
import time
from urllib import parse

from ansible_collections.ainet.fabric.plugins.module_utils.common.file_formats import yaml_dump
from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse_nos import parse_switchd_poll, whole_seconds
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse_nvue import nvue_config
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_diff import lookup, owned_stale, tree_diff
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import (
    ValidatorUnavailable, check_intent, is_owned, scheduler)
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import PushError, read_command

# ----------------------------------------------------------------------------- registry facts
NAME = "cumulus"
TITLE = "Cumulus Linux (NVUE)"
QOS_FORMAT = "nvue"
EXTENSION = "yaml"
RUNNING_EXTENSIONS = (".yaml", ".yml")
PORT_TEMPLATE = "swp{node}"
PORT_MTU = 9216
PORT_MTU_MAX = 9216
PORT_NAME = "swp<n>[s<m>]"
PORT_NAME_RE = re.compile(r"^swp[0-9]+(s[0-9]+)?\Z")
PUSH = "http"
HTTP_PORT = 8765

RELEASE = "5.14"
PROFILE = "ainet-roce"
POOL = "roce-lossless"
BRIDGE = "br_default"
TRUST = {"dscp": "l3", "pcp,dscp": "both"}
FEC = {"rs": "rs", "fc": "baser", "none": "off"}
NVUESCHEMA = "nvueschema==0.1.0"
_NVUE_MODELS = {}
NVUE_APPLIED = ("applied", "applied_and_saved")
NVUE_FAILED = ("apply_fail", "apply_error", "ays_fail", "ignore_fail", "invalid", "confirm_fail",
               "ready_error", "verify_error", "check_fail", "failed")
NVUE_APPLY = {"state": "apply", "auto-prompt": {"ays": "ays_yes"}}


def invalid_ports(names):
    """The names in ``names`` that are not Cumulus Linux port names."""
    return [name for name in names if not PORT_NAME_RE.match(name)]


def render(intent, header):
    """(file text, push data) of one ToR: the ``nv config apply`` YAML and its ``set`` body."""
    check_intent(intent, header)
    data = render_nvue(intent)
    return nvue_text(data, header=header), data


def validate(item, running_text, options):
    """(violations, note) of a rendered ``set`` body against the pinned release's NVUE object model."""
    return validate_nvue(item["data"], RELEASE), None


def _nvue_tree(text):
    """The merged ``set`` tree of an NVUE configuration, read as the NVUE QoS parser reads it."""
    problems = []
    tree = nvue_config(text, problems)
    if tree is None:
        raise ValueError("; ".join(problems))
    return tree


def running_diff(running_text, rendered):
    """Diff items of a rendered ``set`` body against a running NVUE configuration (YAML text)."""
    return tree_diff(rendered["data"], _nvue_tree(running_text) if running_text.strip() else {})


def stale_ports(running_text, rendered):
    """Ports the running configuration still marks ``[ainet]`` that the rendered body no longer has."""
    if not running_text or not running_text.strip():
        return []
    ports = {name: (conf or {}).get("description") for name, conf in
             (_nvue_tree(running_text).get("interface") or {}).items() if isinstance(conf, dict)}
    return owned_stale(ports, set(rendered["data"].get("interface") or {}))


def push(connection, item, check=False):
    """Push a rendered item through the NVUE REST API; ``connection`` is an :class:`tor_push.HttpTransport`."""
    return nvue_push(connection, item["data"], check=check)


# ----------------------------------------------------------------------------- render

def render_nvue(intent):
    """The ``set`` body of one ToR (see the module docstring)."""
    q = intent["qos"]
    interfaces = {}
    for entry in intent["ports"]:
        link = {"state": {"up": {}}, "mtu": entry["mtu"]}
        if entry["speed"]:
            link["speed"] = entry["speed"]
        if entry["fec"]:
            link["fec"] = FEC[entry["fec"]]
        conf = {"type": "swp", "description": entry["description"], "link": link}
        if entry["address"]:
            conf["ip"] = {"address": {entry["address"]: {}}}
        else:
            conf["bridge"] = {"domain": {BRIDGE: {"access": entry["vlan"]}}}
        if q:
            conf["qos"] = {feature: {"profile": PROFILE}
                           for feature in ("mapping", "pfc", "congestion-control", "egress-scheduler")}
            if q["watchdog"]:
                conf["qos"]["pfc-watchdog"] = {"state": "enable"}
        interfaces[entry["port"]] = conf
    body = {"interface": interfaces, "service": {"lldp": {"state": "enabled"}}}
    if intent["svis"]:
        body["bridge"] = {"domain": {BRIDGE: {"vlan": {str(svi["vlan"]): {} for svi in intent["svis"]}}}}
        for svi in intent["svis"]:
            interfaces["vlan%d" % svi["vlan"]] = {"type": "svi", "vlan": svi["vlan"],
                                                  "ip": {"address": {svi["address"]: {}}},
                                                  "link": {"mtu": svi["mtu"]}}
    if q:
        body["qos"] = _qos(q)
    return body


# What `nv set qos roce mode lossless` sets ([ROCE] "Default RoCE Configuration", module doc): switch priority 3 ->
# traffic class 3 (RoCE), 6 -> 6 (CNP), the others -> 0; switch priority 3 in the RoCE lossless traffic pool.
ROCE_PRIORITY_TO_QUEUE = {sp: sp if sp in (3, 6) else 0 for sp in range(8)}
ROCE_LOSSLESS = (3,)
# The same table's "Port ETS": TC 6 (CNP) strict, TC 3 (RoCE) WRR 50 %, TC 0 (other traffic) WRR 50 %: half of the
# DWRR bandwidth to the lossless class, half to the rest.
LOSSY_POOL = "default-lossy"


def _used_priorities(q):
    return sorted(set(q["dscp_to_priority"].values()) | set(q["pfc"]))


def _qos(q):
    """The ``qos`` tree: ``qos roce`` lossless, then only what the profile wants otherwise (see the module doc)."""
    out = {
        "roce": {"enable": "on", "mode": "lossless"},
        "mapping": {PROFILE: {"trust": TRUST[q["trust"]],
                              "dscp": {str(d): {"switch-priority": p}
                                       for d, p in sorted(q["dscp_to_priority"].items())}}},
        "pfc": {PROFILE: {"switch-priority": {str(p): {} for p in q["pfc"]}}},
    }
    # Switch-wide ([QOS] "Egress Queues": NVUE only supports the default-global profile): only the switch priorities
    # the profile uses whose queue differs from qos roce's map; the others keep qos roce's.
    moved = {str(p): {"traffic-class": q["priority_to_queue"][p]} for p in _used_priorities(q)
             if q["priority_to_queue"][p] != ROCE_PRIORITY_TO_QUEUE[p]}
    if moved:
        out["egress-queue-mapping"] = {"default-global": {"switch-priority": moved}}
    # Lossless priorities other than qos roce's 3 move out of default-lossy into the RoCE lossless pool, as [QOS]
    # "Traffic Pools" (`default-lossy switch-priority 0,1,3,4,5,6,7` before `mc-lossy switch-priority 2`) and [ROCE]
    # "Change RoCE Configuration" (`default-lossy switch-priority 0-3,5-7` before a pool takes priority 4) do.
    lossless = sorted(q["buffer_lossless"])
    if tuple(lossless) != ROCE_LOSSLESS:
        out["traffic-pool"] = {LOSSY_POOL: {"switch-priority": {str(p): {} for p in range(8) if p not in lossless}},
                               POOL: {"switch-priority": {str(p): {} for p in lossless}}}
    if q["ecn"]:
        out["congestion-control"] = {PROFILE: {"traffic-class": {
            str(queue): {"ecn": "enable", "min-threshold": q["ecn"]["min_bytes"],
                         "max-threshold": q["ecn"]["max_bytes"], "probability": q["ecn"]["probability"]}
            for queue in q["ecn"]["queues"]}}}
    else:
        out["congestion-control"] = {PROFILE: {}}
    # A port's egress-scheduler profile overrides the global one, and a traffic class it leaves out gets DWRR 0 ([QOS]
    # "Egress Scheduler", "Port Groups"): every queue in use is listed.
    out["egress-scheduler"] = {PROFILE: {"traffic-class": {
        str(queue): {"mode": "strict"} if weight is None else {"mode": "dwrr", "bw-percent": weight}
        for queue, weight in scheduler(q).items()}}}
    return out


def nvue_text(body, header=None):
    """The ``nv config apply`` YAML of a ``set`` body: a list with one ``set`` document."""
    return yaml_dump([{"set": body}], header=header, plain=True)


# ----------------------------------------------------------------------------- validate

def _strict_nvue_model(release):
    """``(model, keywords)``: the NVUE object model of ``release`` and the keywords of its ``model_validate`` that make
    every model of it forbid unknown keys. A pydantic whose ``model_validate`` takes ``extra`` (2.14 does) forbids
    them for one validation, at every depth, over any model's own configuration; an older one gets each model's
    configuration set to forbid them and every model rebuilt (a third of a second for the 741 models of 5.14, in
    each task's worker)."""
    if release in _NVUE_MODELS:
        return _NVUE_MODELS[release]
    try:
        from pydantic import BaseModel  # pylint: disable=import-outside-toplevel
        module = importlib.import_module("nvueschema.models.v%s" % release.replace(".", "_"))
    except ImportError as exc:
        raise ValidatorUnavailable("validating NVUE (Cumulus Linux %s) needs nvueschema on the controller: pip "
                                   "install '%s' (or add it to the execution environment); %s"
                                   % (release, NVUESCHEMA, exc)) from None
    if "extra" in inspect.signature(BaseModel.model_validate).parameters:
        _NVUE_MODELS[release] = (module.NvueConfig, {"extra": "forbid"})
        return _NVUE_MODELS[release]
    _forbid_extra(module, BaseModel)
    _NVUE_MODELS[release] = (module.NvueConfig, {})
    return _NVUE_MODELS[release]


def _forbid_extra(module, base):
    """Every model of ``module`` (a subclass of pydantic's ``base``) made to forbid unknown keys, for a pydantic whose
    validation takes no ``extra``."""
    classes = [c for c in vars(module).values()
               if inspect.isclass(c) and issubclass(c, base) and c.__module__ == module.__name__]
    for cls in classes:
        cls.model_config["extra"] = "forbid"
    for cls in classes:
        cls.model_rebuild(force=True)


def validate_nvue(body, release):
    """Violations of an NVUE ``set`` body against Cumulus Linux ``release``'s object model (unknown keys refused)."""
    model, keywords = _strict_nvue_model(release)
    try:
        model.model_validate(body, **keywords)
    except ValueError as exc:  # pydantic.ValidationError is a ValueError
        errors = getattr(exc, "errors", None)
        if not callable(errors):
            raise
        return ["%s: %s (got %r)" % (".".join(str(p) for p in err["loc"]), err["msg"], err.get("input"))
                for err in errors()]
    return []


# ----------------------------------------------------------------------------- push (NVUE REST API)

# What a rendered rail port holds (tor_render_nvue): unset on a port that is still marked but not planned.
NVUE_PORT_PATHS = (("description",), ("ip", "address"), ("bridge", "domain", "br_default", "access"),
                   ("qos", "mapping"), ("qos", "pfc"), ("qos", "congestion-control"), ("qos", "egress-scheduler"),
                   ("qos", "pfc-watchdog"))


def nvue_release_paths(applied, body):
    """(port, path) of what this collection set on rail ports that the applied configuration still marks
    but the rendered ``set`` body no longer has."""
    out = []
    for port, conf in sorted(((applied or {}).get("interface") or {}).items()):
        if isinstance(conf, dict) and is_owned(conf.get("description")) and port not in (body.get("interface") or {}):
            out += [(port, path) for path in NVUE_PORT_PATHS if lookup(conf, path) is not None]
    return out


def nvue_push(transport, body, check=False, timeout=120, sleep=time.sleep, interval=1):
    """Push an NVUE ``set`` body (see the module docstring): ``{"changed", "diff", "revision", "released"}``.

    ``timeout`` bounds the wait for the revision to leave ``apply`` (seconds of ``sleep(interval)`` calls,
    so a test's ``sleep`` decides the time)."""
    _status, applied = transport.request("GET", "/nvue_v1/", params={"rev": "applied", "filled": "false"})
    applied = applied if isinstance(applied, dict) else {}
    diff = tree_diff(body, applied)
    release = nvue_release_paths(applied, body)
    diff += [{"path": ("interface", port) + path, "before": lookup(applied["interface"][port], path), "after": None}
             for port, path in release]
    released = sorted({port for port, _path in release})
    if not diff or check:
        return {"changed": bool(diff), "diff": diff, "revision": None, "released": released}
    _status, created = transport.request("POST", "/nvue_v1/revision")
    if not isinstance(created, dict) or len(created) != 1:
        raise PushError("NVUE did not return one new revision: %r" % (created,))
    rev = str(next(iter(created)))
    quoted = parse.quote(rev, safe="")
    transport.request("PATCH", "/nvue_v1/", body=body, params={"rev": rev})
    for port, path in release:
        # DELETE is the API's `nv unset`.
        transport.request("DELETE", "/nvue_v1/interface/%s/%s" % (parse.quote(port, safe=""), "/".join(path)),
                          params={"rev": rev})
    transport.request("PATCH", "/nvue_v1/revision/%s" % quoted, body=dict(NVUE_APPLY))
    waited = 0
    while True:
        _status, state = transport.request("GET", "/nvue_v1/revision/%s" % quoted)
        state = _unwrap(state, rev)
        name = state.get("state")
        if name in NVUE_APPLIED:
            return {"changed": True, "diff": diff, "revision": rev, "released": released}
        if name in NVUE_FAILED:
            raise PushError("NVUE revision %s ended %s: %s" % (rev, name, nvue_message(state)))
        if waited >= timeout:
            raise PushError("NVUE revision %s still %s after %s s" % (rev, name, timeout))
        sleep(interval)
        waited += interval


def _unwrap(state, rev):
    """A revision's state object, also when NVUE wraps it in ``{"<id>": {...}}``."""
    if not isinstance(state, dict):
        return {}
    if "state" not in state and len(state) == 1 and isinstance(state.get(rev), dict):
        return state[rev]
    return state


def nvue_message(state):
    """The messages of a revision's ``transition.issue`` (and its ``progress``), for an error."""
    transition = state.get("transition") or {}
    issues = transition.get("issue") or {}
    if isinstance(issues, dict):
        issues = [issues[key] for key in sorted(issues, key=lambda k: (len(str(k)), str(k)))]
    elif not isinstance(issues, list):
        issues = [issues]
    texts = [str(i.get("message") or i.get("code") or "").strip() if isinstance(i, dict) else str(i).strip()
             for i in issues]
    if transition.get("progress"):
        texts.append("(%s)" % transition["progress"])
    return "; ".join(t for t in texts if t) or "no message"


# ----------------------------------------------------------------------------- read (the lossless check)

# How the lossless check reads the switch (tor/tor_read.py), the default first: the NVUE REST API, as the push
# reads it, or `nv config show` over the switch's own connection.
READ = ("http", "ssh")
READ_COMMAND = ("nv", "config", "show", "-o", "json")


def read(connection, via):
    """The applied configuration as text that ``parse_qos`` reads as ``nvue``. ``via`` ``"http"``: ``connection``
    is an :class:`tor_push.HttpTransport`, ``GET /nvue_v1/?rev=applied&filled=false`` (the push's own read), written
    as an ``nv config apply`` YAML; ``"ssh"``: ``connection`` is ``run(argv, data=None) -> (rc, stdout, stderr)``
    on the switch, ``nv config show -o json``. Reads only; :class:`PushError` when it fails."""
    if via == "http":
        _status, applied = connection.request("GET", "/nvue_v1/", params={"rev": "applied", "filled": "false"})
        if not isinstance(applied, dict):
            raise PushError("NVUE answered no configuration tree: %s" % " ".join(str(applied).split())[:200])
        return nvue_text(applied)
    if via != "ssh":
        raise ValueError("Cumulus is read over its NVUE REST API (http) or its connection (ssh), not %r" % (via,))
    return read_command(connection, READ_COMMAND)


# The load test's counters (qos/counters_parse.py formats ``nvue_qos``, ``nvue_roce``): NVUE's show commands print
# one port's counters, so each is run for each port of the step's links (``{port}``), over the switch's connection.
# Only the text layout of these commands has a source (the Cumulus Linux 5.10 user guide, "Show Qos Counters" and
# the RoCE page; see tests/unit/plugins/module_utils/data/counters/ORIGIN.md); the REST API's JSON of them has none,
# so they are not read over the API.
COUNTER_READ = ("ssh",)
# switchd polls the ASIC's statistics of physical ports every 2 s by default (switchd.conf ``stats.poll_interval =
# 2000`` msec; NVUE sets it from 1 to 10 s: the Cumulus Linux 5.9 user guide, "Configuring switchd",
# https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-59/System-Configuration/Configuring-switchd/).
# That the QoS and RoCE counters come through the same poll is not documented: this is the one interval there is.
COUNTER_SETTLE = 2
# The interval configured: switchd's own file (NVUE's `nv set system counter polling-interval physical-interface`
# writes it too); a commented ``#stats.poll_interval`` line is the default.
SETTLE_COMMAND = ("cat", "/etc/cumulus/switchd.conf")
COUNTER_COMMANDS = (("nvue_qos", ("nv", "show", "interface", "{port}", "counters", "qos")),
                    ("nvue_roce", ("nv", "show", "interface", "{port}", "qos", "roce", "counters")))
# The reads that count drops (load_verdict: one not read leaves the class inconclusive), with how to read them.
DROP_STAGES = {"nvue_qos": "`nv show interface <port> counters qos`",
               "nvue_roce": "`nv show interface <port> qos roce counters` (RoCE mode set on the switch)"}


def read_counter_settle(connection, via):
    """``(seconds, source)`` of switchd's configured ``stats.poll_interval`` (whole seconds, rounded up), ``(None, why)``
    where the file leaves it at its default; :class:`PushError` when the file cannot be read."""
    if via != "ssh":
        raise ValueError("Cumulus counters are read over its connection (ssh), not %r" % (via,))
    millis, problems = parse_switchd_poll(read_command(connection, SETTLE_COMMAND))
    if millis is None:
        return None, "; ".join(problems) or "switchd.conf sets no stats.poll_interval (the default)"
    return whole_seconds(millis), "switchd.conf: stats.poll_interval = %d ms" % millis


def read_counters(connection, via, ports=None):
    """``{format: {port: text}}`` of the QoS and RoCE counters of each of ``ports`` (``COUNTER_COMMANDS``, one run per
    port) over the switch's connection (``via`` ``"ssh"``, ``connection`` as for :func:`read`). ValueError before
    anything runs when no port is given or one is not a Cumulus port name; :class:`PushError` naming the command when
    one fails. Reads only."""
    if via != "ssh":
        raise ValueError("Cumulus counters are read over its connection (ssh), not %r" % (via,))
    ports = sorted(set(ports or ()))
    if not ports:
        raise ValueError("NVUE prints the counters of one port a command: give the ports to read")
    bad = invalid_ports(ports)
    if bad:
        raise ValueError("%s: not a %s port name (%s)" % (", ".join(bad), TITLE, PORT_NAME))
    out = {}
    for fmt, command in COUNTER_COMMANDS:
        out[fmt] = dict((port, read_command(connection, tuple(port if w == "{port}" else w for w in command)))
                        for port in ports)
    return out
