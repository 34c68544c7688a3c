# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one ToR must hold, in no NOS's words: the single source of every switch renderer.

``tor_intent(plan, tor_name)`` reads the rail plan's per-ToR view (``plan["tors"][name]``,
:func:`rail_plan.rail_plan`) and the fabric's resolved lossless profile (:mod:`qos_profile`) and
returns::

    {"name", "platform", "fabric", "mode", "family",          # mode: exclusive | p2p | shared
     "ports": [{"port", "description", "mtu", "speed", "fec", "rail", "host", "interface",
                "address", "vlan"}],                          # address: routed port (exclusive/p2p)
     "svis": [{"vlan", "rail", "address", "mtu"}],            # shared mode: one per rail
     "lldp": True,
     "qos": None | {"trust", "dscp_to_priority", "pfc", "priority_to_queue", "ecn", "ets",
                    "strict_queues", "watchdog", "buffer_lossless"}}

Addresses are the plan's gateway strings, never recomputed. Every rail port gets the
description ``<host> <nic> rail<r> [ainet]``: the marker ``[ainet]`` tells a later run which
ports it configured (a port still marked but no longer in the plan is one it owns and must
release). Shared mode puts rail ``r`` in VLAN ``1000 + r``.

ECN: the profile's queues and thresholds; a profile without switch thresholds (``spiderpool``)
gets ECN on its PFC priorities' queues at NVIDIA's RoCE switch defaults (150,000 - 1,500,000
bytes, probability 100), since DCQCN has no congestion signal without it.

QoS vocabulary is :mod:`qos_facts`'s: a **priority** is the PFC priority / switch priority /
traffic class, a **queue** the egress queue; queues equal priorities (identity map).

Two links of the ToR that land on the same port name never reach here: ``rail_plan`` refuses them, for every platform.

Every value a renderer places in a configuration is one line: :func:`check_intent` (called here and by every NOS's
``render``) refuses a line break, a control or invisible character or ';' in any of them, and a port name that is
not one (:data:`PORT_RE`), with one line naming the value - the second wall behind the model's checks
(docs/cluster-model.md, "Names: what the model accepts").

Every NOS module (``nos_<platform>.py``, listed in :mod:`platforms`) starts from this intent; the two
errors below are the ones a NOS module raises when an optional dependency of its renderer or of its
vendor-schema check is missing.
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.model.model_schema import breaking_character
from ansible_collections.ainet.fabric.plugins.module_utils.model.qos_profile import PRESETS, dscp_map

MARKER = "[ainet]"
VLAN_BASE = 1000


class RendererUnavailable(RuntimeError):
    """A renderer's optional dependency is missing (the message names the package)."""


class ValidatorUnavailable(RuntimeError):
    """A vendor-schema check's package or schema files are missing."""


# A port name as it may stand in a CLI line, an NVUE path or a config_db key (``PORT_QOS_MAP|<port>``): the
# characters of the model's port templates (model_schema.PORT_TEMPLATE_RE) once the fields are filled in.
PORT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_./-]{0,63}\Z")
# What no value placed on a configuration line may hold beside the line-breaking characters: ';' separates the
# commands of an NX-API ``input`` (docs/tor-config.md, "Names never become commands": cisco.nxos's httpapi joins them
# with " ;", NX-OS's Python ``cli()`` takes them "separated with ' ; '"); eAPI takes each string as one command.
COMMAND_SEPARATOR = ";"


def line_problem(text):
    """Why ``text`` cannot stand in one configuration line or command (a line break, a control or invisible
    character, ';'), or None when it can. The one test every renderer and every CLI push applies."""
    if not isinstance(text, str):
        return "is not a string"
    bad = breaking_character(text)
    if bad is not None:
        return "holds the character U+%04X, which ends or splits a configuration line" % ord(bad)
    if COMMAND_SEPARATOR in text:
        return "holds ';', which separates commands in NX-API"
    return None


def check_intent(intent, header=None):
    """``intent`` when every value a renderer places in the configuration is one line of text and every port name a
    port name (:data:`PORT_RE`); else a one-line FabricModelError naming the value. Every NOS's ``render`` calls it
    (and :func:`tor_intent` does), so an intent made without the model's checks (a filter called directly, a test)
    is refused before a line is written: the model refuses the same values where they enter (``model_schema``,
    ``rail_plan``), this is the second wall. ``header``: the comment line a renderer writes first (a line break refused)."""
    # The header is a comment line (never sent as a command): only a line break could make it more than one line.
    if header is not None and (not isinstance(header, str) or breaking_character(header) is not None):
        raise FabricModelError("header", header, "is not one line of text", "render from a valid cluster name")
    name = intent.get("name")
    where = "tors[%r]" % (name,)
    problem = line_problem(name) if name is not None else None
    if problem is None and name is not None and not PORT_RE.match(name):
        problem = "is not a switch name"
    if problem:
        raise FabricModelError("tor", name, problem, "name the ToR with letters, digits, '-', '_' and '.'")
    if _all_clean(intent):
        return intent
    # Something is wrong: name the first value that is.
    for index, entry in enumerate(intent.get("ports") or ()):
        port = entry.get("port")
        if not isinstance(port, str) or not PORT_RE.match(port):
            raise FabricModelError("%s.ports[%d].port" % (where, index), port, "is not a port name",
                                   "set the ToR's port_template to the NOS's port names, e.g. Ethernet1/{node}")
        for key in _PORT_TEXT:
            value = entry.get(key)
            problem = line_problem(value) if value is not None else None
            if problem:
                raise FabricModelError("%s.ports[%d].%s" % (where, index, key), value, problem,
                                       "fix the inventory value it comes from")
    for index, svi in enumerate(intent.get("svis") or ()):
        value = svi.get("address")
        problem = line_problem(value) if value is not None else None
        if problem:
            raise FabricModelError("%s.svis[%d].address" % (where, index), value, problem, "fix the plan")
    return intent


# The values of a rail port that a renderer places in the configuration (beside the port name itself).
_PORT_TEXT = ("description", "host", "interface", "address", "speed", "fec")


def _all_clean(intent):
    """Whether every port name of ``intent`` is one and every value :func:`check_intent` checks is one line, in one
    pass: the values joined by a space (a character no check refuses) hold a bad character exactly when one of them
    does. A 64-port ToR has about 400 values; checked one by one they were half of a render's time."""
    ports = intent.get("ports") or ()
    values = [entry.get(key) for entry in ports for key in _PORT_TEXT]
    values += [svi.get("address") for svi in intent.get("svis") or ()]
    values = [value for value in values if value is not None]
    if not all(isinstance(value, str) for value in values):
        return False
    if not all(isinstance(entry.get("port"), str) and PORT_RE.match(entry["port"]) for entry in ports):
        return False
    return line_problem(" ".join(values)) is None


def description(host, interface, rail):
    """The description of a rail port (with the ownership marker)."""
    return "%s %s rail%d %s" % (host, interface or "-", rail, MARKER)


def is_owned(text):
    """True when a port description carries this collection's marker."""
    return isinstance(text, str) and text.rstrip().endswith(MARKER)


def tor_intent(plan, tor_name):
    """The NOS-neutral desired state of ToR ``tor_name`` (see the module docstring)."""
    try:
        tor = plan["tors"][tor_name]
    except KeyError:
        raise FabricModelError("tor", tor_name, "is not a ToR of the plan",
                               "use one of: %s" % ", ".join(sorted(plan["tors"])) or "none") from None
    fabric_name = tor["fabric"]
    fabric = plan["cluster"]["fabrics"][fabric_name]
    mode = fabric["addressing"]["mode"]
    if mode == "infiniband":
        raise FabricModelError("tors[%s].platform" % tor_name, tor.get("platform"),
                               "is an Ethernet NOS on an InfiniBand fabric", "remove platform")
    mtu = tor.get("port_mtu") or 9216
    ports = []
    for entry in tor["ports"]:
        ports.append({
            "port": entry["port"], "rail": entry["rail"], "host": entry["host"], "interface": entry.get("interface"),
            "description": description(entry["host"], entry.get("interface"), entry["rail"]),
            "mtu": mtu, "speed": tor.get("port_speed"), "fec": tor.get("port_fec"),
            "address": entry["address"] if mode in ("exclusive", "p2p") else None,
            "vlan": VLAN_BASE + entry["rail"] if mode == "shared" else None,
        })
    svis = [{"vlan": VLAN_BASE + svi["rail"], "rail": svi["rail"], "address": svi["address"], "mtu": mtu}
            for svi in tor.get("svis") or ()]
    return check_intent({
        "name": tor_name, "platform": tor.get("platform"), "fabric": fabric_name, "mode": mode,
        "family": plan["fabrics"][fabric_name]["family"],
        "ports": ports, "svis": svis, "lldp": True, "qos": qos_intent(fabric.get("qos")),
    })


def qos_intent(profile):
    """The switch side of a resolved lossless profile (None for none)."""
    if not profile:
        return None
    pfc = list(profile["pfc_priorities"])
    # DCQCN needs ECN marks from the queue that carries RoCE: a profile that states no switch
    # thresholds (spiderpool configures hosts only) gets NVIDIA's RoCE switch defaults.
    fallback = PRESETS["nvidia"]
    ecn = {"queues": list(profile.get("ecn_queues") or pfc),
           "min_bytes": profile.get("ecn_min_bytes") or fallback["ecn_min_bytes"],
           "max_bytes": profile.get("ecn_max_bytes") or fallback["ecn_max_bytes"],
           "probability": profile.get("ecn_probability") or fallback["ecn_probability"]}
    strict = [profile["cnp_priority"]] if profile.get("cnp_strict") else []
    weights = {int(q): int(w) for q, w in (profile.get("ets_weights") or {}).items()}
    return {
        "trust": profile["trust"],
        "dscp_to_priority": dscp_map(profile),
        "roce_dscp": profile["roce_dscp"], "cnp_dscp": profile["cnp_dscp"],
        "pfc": pfc,
        "priority_to_queue": {p: p for p in range(8)},
        "ecn": ecn,
        "ets": weights,
        "strict_queues": strict,
        "watchdog": bool(profile.get("pfc_watchdog")),
        "buffer_lossless": pfc,
    }


# NVIDIA's `qos roce` egress scheduler gives the lossless traffic class 50 % and queue 0 the other 50 % (Cumulus Linux
# 5.14 user guide, "RDMA over Converged Ethernet - RoCE", table "Default RoCE Configuration": TC 6 strict, TC 3 WRR 50 %,
# TC 0 WRR 50 %): a profile without ETS weights gets that split on the queues it uses, on every NOS.
LOSSLESS_SHARE = 50


def _shares(queues, total):
    """``total`` percent split evenly over ``queues`` (the first ones get the remainder)."""
    share, extra = divmod(total, len(queues))
    return {queue: share + (1 if i < extra else 0) for i, queue in enumerate(queues)}


def scheduler(q):
    """The complete egress scheduler of an intent's ``qos`` (every renderer reads it): ``{queue: weight}``, ``None`` for a strict queue.

    Strict: the intent's ``strict_queues`` (the CNP queue when the profile wants it strict). Weighted: the profile's
    ETS weights; without them NVIDIA's ``qos roce`` scheduler (:data:`LOSSLESS_SHARE`) carried over to the
    queues the profile uses: the queues of its PFC priorities share 50 %, queue 0 and the other queues its DSCPs land
    in (a CNP queue that is not strict, a lossy class of ``dscp_priorities``) share the other 50 %. For the
    ``nvidia`` priorities that is exactly ``qos roce``'s 3: 50, 0: 50, 6: strict. Every renderer schedules a profile
    from this, so a profile schedules alike on every NOS."""
    queue_of = q["priority_to_queue"]
    out = dict.fromkeys(q["strict_queues"])
    if q["ets"]:
        out.update((queue, weight) for queue, weight in q["ets"].items() if queue not in out)
        return dict(sorted(out.items()))
    lossless = sorted(set(queue_of[p] for p in q["pfc"]) - set(out))
    lossy = sorted(({0} | set(queue_of[p] for p in q["dscp_to_priority"].values())) - set(lossless) - set(out))
    if lossless and lossy:
        out.update(_shares(lossless, LOSSLESS_SHARE))
        out.update(_shares(lossy, 100 - LOSSLESS_SHARE))
    else:
        out.update(_shares(lossless or lossy, 100))
    return dict(sorted(out.items()))
