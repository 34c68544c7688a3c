# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lossless QoS facts: the one normalized structure that every QoS parser returns.

Host tools (``mlnx_qos``, iproute2 ``dcb``, the ECN/CNP sysfs files, ``traffic_class``,
``cma_roce_tos``) and switch configurations (SONiC config_db, Cumulus NVUE, Arista EOS,
Cisco NX-OS, Dell OS10) all say the same few things in different words. A parser turns its
source into a **QoS facts** mapping::

    {
      "format": "mlnx_qos",            # the parser that produced it
      "ports": {"eth2": {...}},        # one settings mapping per port; host tools: one entry
      "problems": ["..."],             # what the source states but cannot be honoured
    }                                  # (a policy referenced but never defined, a bad value)

and a **settings** mapping per port, whose keys are :data:`FIELDS`. A field that the source
does not state is ``None`` - never a guessed default - unless the tool prints its effective
value (``mlnx_qos`` always prints all 64 DSCPs) or the vendor's documented default applies
when the configuration is silent (then the parser says so in its docstring).

**Defaults by omission.** A complete configuration source - a whole running-config, a whole
config_db, ``nv config show`` - states the NOS defaults by leaving a command out: a port without
``priority-flow-control`` has PFC off. The switch-configuration parsers fill what such a source
omits with the NOS's documented default (a named table per NOS, each value with its source in
``docs/lossless-qos.md``, "Defaults by omission"). ``None`` stays where the input cannot tell: a
``show`` output (``nvue_roce``), a visibly partial configuration (an EOS/NX-OS ``! Command: show
running-config interfaces ...`` section, a config_db fragment without ``DEVICE_METADATA``, an NVUE
``set`` body without the ``header`` document), a value the source states but that cannot be read,
and every default no vendor documentation was found for.

The vocabulary, shared by hosts and switches:

* **priority**: the 802.1p priority 0-7 that PFC pause frames name. On hosts it is what
  ``dscp2prio`` yields; on SONiC the traffic class (SONiC enables PFC per TC with the same
  number); on Cumulus the switch-priority; on EOS/NX-OS/OS10 the traffic class / qos-group,
  whose PFC priority is the CoS of the same number unless the config maps it otherwise (NX-OS/OS10: ``pfc`` is the
  no-drop classes' ``pfc-cos`` values, ``pfc_to_pg`` the qos-group whose buffer sends their pauses).
* **queue**: the egress queue (host: the ETS traffic class ``tc``). ECN marking and ETS
  scheduling are properties of a queue.

Fields (all optional, ``None`` when unknown):

``trust``
    ``"dscp"``, ``"pcp"``, ``"pcp,dscp"`` (either, DSCP wins for IP) or ``"none"``.
``dscp_to_priority``
    ``{dscp: priority}`` for every DSCP the source states (ints).
``priority_to_queue``
    ``{priority: queue}``.
``pfc``
    sorted list of priorities with PFC (no-drop) enabled.
``pfc_mode``
    how the switch port decides whether PFC runs: ``"on"`` (always, on ``pfc``), ``"off"`` or ``"auto"`` (NX-OS's
    interface default: only once DCBX negotiates it with the peer; ``pfc`` is then what runs when it does, and the
    check judges the mode against the host's ``dcbx``). ``None`` where the NOS has no such mode or it was not read.
``pfc_rx`` / ``pfc_tx``
    the priorities of ``pfc`` on which the port honours the pause frames it receives (``rx``) and sends
    pause frames when its buffer fills (``tx``). A source that switches both directions with one setting
    (SONiC's ``pfc_enable``, EOS/NX-OS/OS10 ``priority-flow-control``, Cumulus ``qos roce``) states them
    equal to ``pfc`` (:func:`pfc_both_ways`, named in the parser's docstring); Cumulus PFC profiles
    state ``rx``/``tx`` apart. Hosts: ``None`` (only the switch port's directions are judged).
``pfc_to_queue``
    ``{pfc priority: queue}``: the egress queue that a pause frame received for that priority stops
    (SONiC ``pfc_to_queue_map``). A NOS without that stage stops the queue its priority is scheduled on:
    its parser states ``priority_to_queue`` here (:func:`pause_stops_own_queue`). Hosts: ``None``.
``ecn``
    ``{queue: {"enabled": bool, "min_bytes": int|None, "max_bytes": int|None,
    "probability": int|None}}`` (switches: ECN/WRED on egress queues).
``ecn_unit``
    ``{queue: {"min_bytes": unit, "max_bytes": unit}}``: the unit each ECN threshold of ``ecn`` is stated in, so that
    the check compares in it (``lossless_check.same_threshold``): a number is the bytes one step of the stated value
    is worth (``1``: bytes; ``1024``: kbytes; ``1048576``: mbytes; ``10.24`` for ``nv show qos roce``'s printed
    ``146.48 KB``, two decimals of a KiB); a string names a unit that is not a size (``"segments"``,
    ``"milliseconds"``, ``"microseconds"``), whose ``*_bytes`` is then ``None``. ``None`` (or a queue or threshold
    left out): not stated; the check then takes a whole number of KiB or MiB as counted in that unit.
``ecn_rp`` / ``ecn_np``
    sorted lists of priorities with DCQCN reaction point / notification point enabled (hosts).
``ets``
    ``{queue: {"mode": "strict"|"ets"|"vendor", "weight": int|None}}``.
``cnp_dscp`` / ``cnp_priority``
    the DSCP and priority the host's notification point sends CNPs with (hosts; on a switch
    the CNP DSCP is judged through ``dscp_to_priority``).
``mtu``
    the port's MTU in bytes (switch L2 MTU, host interface MTU).
``pfc_watchdog``
    sorted list of priorities with the PFC watchdog on (``[]``: off everywhere).
``pfc_watchdog_queue``
    ``{priority: queue}``: the queue the watchdog of each priority of ``pfc_watchdog`` watches and acts on, for a NOS
    whose watchdog is armed per queue index (SONiC: bit ``i`` of ``pfcwd_sw_enable`` watches queue ``i`` with the
    pause counters of priority ``i``, whatever queue that priority's traffic leaves on). ``None`` where the NOS has
    no such stage (its watchdog follows the priority's own queue) or ``pfc_watchdog`` is ``None``.
``buffer_lossless``
    sorted list of priorities that have a lossless (headroom) buffer, for sources that give ingress
    buffers per priority (hosts' ``prio2buffer``, Cumulus traffic pools).
``priority_to_pg`` / ``buffer_lossless_pg``
    sources with an ingress **priority group** stage of their own (SONiC: ``tc_to_pg_map`` ->
    ``TC_TO_PRIORITY_GROUP_MAP`` and ``BUFFER_PG``; NX-OS/OS10: qos-group N is group N, the no-drop classes' groups
    are lossless): ``{priority: PG}`` and the sorted PGs whose buffer
    profile is lossless. ``buffer_lossless`` is then ``None``: the check derives which priorities have a
    lossless buffer from these two (``lossless_check``), the one place that fact is derived.
``pfc_to_pg``
    ``{pfc priority: PG}``: the priority group whose headroom (xoff) sends the pause frames of that priority (SONiC
    ``pfc_to_pg_map`` -> ``PFC_PRIORITY_TO_PRIORITY_GROUP_MAP``, Mellanox and Barefoot ASICs; NX-OS/OS10: each
    ``pfc-cos`` value -> the qos-group of the no-drop class that states it). A source with a priority
    group stage but no such map states ``priority_to_pg`` here (pauses come from the group the priority is buffered
    in); ``None`` where the source has no priority group stage or the map's default is not known.
``why_unknown``
    ``{field: reason}``: why a parser left a field ``None`` although the source speaks of it (one line naming the
    source's field, e.g. a config_db whose version cannot tell which field arms the watchdog); the check shows it as
    the reason of the unchecked topic. ``None`` when the parser has nothing to say.
``roce_tos`` / ``traffic_class``
    ``cma_roce_tos`` of the RDMA device and its ``tc/1/traffic_class`` (hosts).
``pfc_capable`` / ``dcbx``
    what the NIC reports (hosts); ``dcbx`` is the DCBX mode ``mlnx_qos`` prints (``"OS controlled"``: the firmware
    does not negotiate, ``"Firmware controlled"``: it does), judged against a switch port's ``pfc_mode`` auto.
"""

from __future__ import annotations

FORMATS_HOST = ("mlnx_qos", "dcb", "sysfs")
FORMATS_SWITCH = ("sonic_config_db", "nvue", "nvue_roce", "eos", "nxos", "os10")
FORMATS = FORMATS_HOST + FORMATS_SWITCH

FIELDS = ("trust", "dscp_to_priority", "priority_to_queue", "pfc", "ecn", "ecn_rp", "ecn_np", "ets",
          "cnp_dscp", "cnp_priority", "mtu", "pfc_watchdog", "buffer_lossless", "roce_tos", "traffic_class",
          "pfc_capable", "dcbx", "pfc_rx", "pfc_tx", "pfc_to_queue", "priority_to_pg", "buffer_lossless_pg",
          "pfc_mode", "pfc_to_pg", "pfc_watchdog_queue", "ecn_unit", "why_unknown")


# The eight egress queues / traffic classes every NOS here has per port (0-7).
QUEUES = tuple(range(8))
ECN_OFF = {"enabled": False, "min_bytes": None, "max_bytes": None, "probability": None}


def ecn_off_elsewhere(ecn):
    """``ecn`` (a stated ``{queue: ecn}`` or None) with every other queue of :data:`QUEUES` marked off: for a
    complete source, where a queue without ECN configuration does not mark."""
    out = dict((q, dict(v)) for q, v in (ecn or {}).items())
    for queue in QUEUES:
        out.setdefault(queue, dict(ECN_OFF))
    return out


def pfc_both_ways(settings):
    """For a source whose one PFC setting both sends and honours pauses: ``pfc_rx`` and ``pfc_tx`` are ``pfc``
    (``None`` while ``pfc`` is)."""
    for field in ("pfc_rx", "pfc_tx"):
        if settings.get(field) is None and settings.get("pfc") is not None:
            settings[field] = list(settings["pfc"])
    return settings


def pause_stops_own_queue(settings):
    """For a NOS with no PFC priority -> queue map: a pause for a priority stops the queue that priority is
    scheduled on, so ``pfc_to_queue`` is ``priority_to_queue`` (``None`` while that is)."""
    if settings.get("pfc_to_queue") is None and settings.get("priority_to_queue") is not None:
        settings["pfc_to_queue"] = dict(settings["priority_to_queue"])
    return settings


def one_way_pfc_stages(settings):
    """:func:`pfc_both_ways` and :func:`pause_stops_own_queue`: for a NOS whose ``priority-flow-control`` names
    priorities only (no direction, no pause -> queue map)."""
    return pause_stops_own_queue(pfc_both_ways(settings))


def ecn_units(settings):
    """Move the ``min_unit`` / ``max_unit`` a parser keeps in its ``ecn`` entries to ``ecn_unit`` (see the field);
    ``ecn_unit`` stays as it is when no entry has one."""
    units = {}
    for queue, entry in (settings.get("ecn") or {}).items():
        unit = {"min_bytes": entry.pop("min_unit", None), "max_bytes": entry.pop("max_unit", None)}
        if unit["min_bytes"] is not None or unit["max_bytes"] is not None:
            units[queue] = unit
    if units:
        settings["ecn_unit"] = units
    return settings


def new_settings():
    """A settings mapping that states nothing yet."""
    return dict.fromkeys(FIELDS)


def new_facts(fmt, ports=None, problems=None):
    """A facts mapping for ``fmt``."""
    return {"format": fmt, "ports": ports if ports is not None else {}, "problems": list(problems or [])}


def merge_settings(base, extra):
    """``base`` with every field that ``extra`` states (not ``None``) taken from ``extra``."""
    out = dict(base)
    for key, value in extra.items():
        if value is not None:
            out[key] = value
    return out


def merge_facts(*facts):
    """One facts mapping from several sources about the same ports (e.g. ``mlnx_qos`` + sysfs):
    per port, later sources fill and override what earlier ones state."""
    formats, ports, problems = [], {}, []
    for item in facts:
        if not item:
            continue
        formats.append(item.get("format") or "?")
        problems += item.get("problems") or []
        for name, settings in (item.get("ports") or {}).items():
            ports[name] = merge_settings(ports.get(name, new_settings()), settings)
    return new_facts("+".join(formats), ports, problems)


def settings_of(facts, port=None):
    """The settings of ``port`` in ``facts`` (or of its only port when ``port`` is None).

    Accepts a bare settings mapping too. Raises KeyError naming the ports there are."""
    if facts is None:
        return new_settings()
    if "ports" not in facts:
        return merge_settings(new_settings(), facts)
    ports = facts.get("ports") or {}
    if port is None:
        if len(ports) == 1:
            return merge_settings(new_settings(), next(iter(ports.values())))
        if not ports:
            return new_settings()
        names = ", ".join(sorted(ports)[:8])
        raise KeyError("the %s facts hold %d ports (%s); name one" % (facts.get("format"), len(ports), names))
    if port not in ports:
        raise KeyError("port %s is not in the %s facts (it has: %s)" % (port, facts.get("format"),
                                                                        ", ".join(sorted(ports)[:8]) or "none"))
    return merge_settings(new_settings(), ports[port])


# DSCP names common to every NOS and tool (RFC 2474/2597/3246/5865); parsers add their own extras.
DSCP_NAMES = {"ef": 46, "va": 44}
DSCP_NAMES.update(("cs%d" % n, 8 * n) for n in range(8))
DSCP_NAMES.update(("af%d%d" % (c, d), 8 * c + 2 * d) for c in range(1, 5) for d in range(1, 4))


def unique(items):
    """``items`` without repeats, first occurrence kept."""
    seen, out = set(), []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def to_int(value, where, problems):
    """``value`` as an int; None when empty, or (with a line in ``problems``) when not a number."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        problems.append("%s: %r is not a number" % (where, value))
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        problems.append("%s: %r is not a number" % (where, value))
        return None


def to_int_list(value, where, problems, what):
    """:func:`int_list` of ``value``; ``[]`` and a line in ``problems`` (``... is not <what>``) when unreadable."""
    try:
        return int_list(value)
    except ValueError:
        problems.append("%s: %r is not %s" % (where, value, what))
        return []


def lookup(mapping, key):
    """``mapping[key]`` with int or str keys (facts and profiles travel through JSON); None when absent."""
    if not mapping:
        return None
    if key in mapping:
        return mapping[key]
    return mapping.get(str(key))


def sorted_ints(values):
    """A stated list of priorities as sorted ints; None stays None (not stated)."""
    return sorted(int(v) for v in values) if values is not None else None


def int_list(text):
    """``"3,4"``, ``"3-4"``, ``"0 1 2"``, ``[3, "4"]`` -> ``[3, 4]`` (sorted, unique)."""
    if text is None:
        return []
    if isinstance(text, int):
        return [text]
    if isinstance(text, (list, tuple, set)):
        items = [str(x) for x in text]
    else:
        items = str(text).replace(",", " ").split()
    out = set()
    for item in items:
        item = item.strip()
        if not item:
            continue
        if "-" in item.strip("-"):
            low, high = item.split("-", 1)
            out.update(range(int(low), int(high) + 1))
        else:
            out.add(int(item))
    return sorted(out)
