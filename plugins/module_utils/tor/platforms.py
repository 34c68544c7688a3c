# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ToR platform registry: one table from a ToR's ``platform`` to the module of its NOS.

Everything about one NOS lives in its own module, ``nos_<platform>.py``; nothing else in the collection
says ``if platform == ...``. A NOS module is imported statically here (AnsiballZ and the import-graph
test see every edge) and holds:

=====================  ==========================================================================
``NAME``, ``TITLE``    the ``platform`` value of the model, and the NOS's name in messages
``QOS_FORMAT``         the :func:`qos_parse.parse_qos` format that reads its configuration
``EXTENSION``          extension of the rendered file (``tors/<switch>.<ext>``); None: not rendered
``RUNNING_EXTENSIONS`` endings tried for a configuration of the switch in ``switch-configs/``
``PORT_TEMPLATE``      the default port name pattern (``{node}``, ``{local}``, ``{rail}``)
``PORT_MTU``,          the rail port MTU rendered when the model sets none, and the largest the
``PORT_MTU_MAX``       NOS takes
``PORT_NAME``,         the NOS's port name syntax (for messages) and its regular expression;
``PORT_NAME_RE``,      ``invalid_ports(names)`` returns the names that do not follow it
``invalid_ports``
``render``             ``render(intent, header) -> (text, data)``: the file and what a push sends
``validate``           ``validate(item, running_text, options) -> (violations, note)``: the vendor
                       schema check (``options``: ``sonic_yang_dir``)
``running_diff``,      diff items against a running configuration's text, and the ports it still
``stale_ports``        marks ``[ainet]`` that the rendered file no longer has
``PUSH``, ``push``     ``None`` (not pushed), ``"http"`` (``push(transport, item, check)`` with an
``HTTP_PORT``          :class:`tor_push.HttpTransport`; ``HTTP_PORT`` the API's default port, None:
                       443/80) or ``"ssh"`` (``push(run, item, check)``, ``run(argv, data)`` on the
                       switch through the host's connection)
``LLDP_PORT_ID``,      what the NOS announces as LLDP Port ID: ``"alias"`` (the port's alias, subtype
``lldp_port_aliases``  local; ``lldp_port_aliases(running_text, tor)`` maps aliases to port names) or, when
                       absent, the port's own name (subtype ifname)
``READ``, ``read``,    how the lossless check reads the running configuration live (:mod:`tor_read`):
``READ_COMMAND``       the ways, the default first (``"http"``: its API through a
                       :class:`tor_push.HttpTransport`; ``"ssh"``: ``READ_COMMAND`` over the switch's
                       own connection, ``run(argv, data)`` as for a push); ``read(connection, via)``
                       returns the text ``parse_qos`` reads in ``QOS_FORMAT``, never changes the switch
``COUNTER_SETTLE``     seconds the NOS may take to show a counter's latest value (its polling interval; optional, 0)
``read_counter_settle`` the polling interval configured on the switch (optional): ``read_counter_settle(connection,
                       via)`` returns ``(seconds, source)``, ``(None, why)`` where it is left at its default
``COUNTER_READ``,      the load test's counter reads (optional): the ways, the default first, as ``READ``;
``COUNTER_COMMANDS``,  ``(format, command words)`` pairs in ``counters_parse`` formats (``{port}``: run once a
``read_counters``      port); ``read_counters(connection, via, ports=None)`` returns ``{format: output}`` (a one-port
                       format's output ``{port: text}``) over the same connection ``read`` uses, for ``ports``
                       where the NOS prints one port a command; never changes the switch
=====================  ==========================================================================

A read-only NOS (``EXTENSION`` None: the lossless check reads it, nothing renders it) needs only the
facts down to ``invalid_ports``, and ``READ``/``read`` to be read live (without them: only from files).
The helpers below are what the rest of the collection calls.

The qos wing sits below this one, so :mod:`qos_parse` does not know platforms; callers map a platform to
its format here (:func:`qos_format`) and pass the format to ``parse_qos``.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.tor import (
    nos_cumulus, nos_eos, nos_linux, nos_nxos, nos_os10, nos_sonic)
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import PushError

PLATFORMS = {
    "sonic": nos_sonic,
    "cumulus": nos_cumulus,
    "eos": nos_eos,
    "nxos": nos_nxos,
    "os10": nos_os10,
    "linux": nos_linux,
}


def drop_stages():
    """``{counter format: how to make it readable}`` of every NOS's reads that count drops (each module's
    ``DROP_STAGES``; a format belongs to one NOS): a drop stage not read leaves a class inconclusive (load_verdict)."""
    out = {}
    for module in PLATFORMS.values():
        out.update(getattr(module, "DROP_STAGES", {}))
    return out


def nos(platform):
    """The NOS module of ``platform``, or None when the registry has none."""
    return PLATFORMS.get(str(platform or ""))


def is_rendered(platform):
    """Whether ``platform`` has a renderer."""
    module = nos(platform)
    return module is not None and module.EXTENSION is not None


def rendered_platforms():
    """The sorted platforms that have a renderer."""
    return sorted(name for name in PLATFORMS if is_rendered(name))


def qos_format(platform):
    """The ``parse_qos`` format of a ToR ``platform``'s configuration (None when the platform has no parser)."""
    module = nos(platform)
    return module.QOS_FORMAT if module is not None else None


def running_extensions(platform):
    """The file endings tried for a configuration of a ``platform`` switch, in order (``()``: unknown)."""
    module = nos(platform)
    return tuple(module.RUNNING_EXTENSIONS) if module is not None else ()


def format_by_extension(ext):
    """The ``parse_qos`` format of a configuration file of a ToR without a platform, guessed from its ending
    ``ext`` (``.json``): only an ending that exactly one NOS uses tells; None otherwise."""
    formats = {module.QOS_FORMAT for module in PLATFORMS.values() if ext in module.RUNNING_EXTENSIONS}
    return formats.pop() if len(formats) == 1 else None


def read_ways(platform):
    """How a ``platform`` switch can be read live, the default first (``"http"``, ``"ssh"``); ``()``: it cannot."""
    module = nos(platform)
    return tuple(getattr(module, "READ", ())) if module is not None else ()


def readable_platforms():
    """The sorted platforms that can be read live."""
    return sorted(name for name in PLATFORMS if read_ways(name))


def read_running(platform, via, connection):
    """The running configuration of a ``platform`` switch read ``via`` one of its :func:`read_ways` through
    ``connection`` (see the table above): text for ``parse_qos`` in :func:`qos_format`. The NOS's errors pass
    through (:class:`tor_push.PushError`, ValueError); :mod:`tor_read` names the switch in them."""
    if via not in read_ways(platform):
        raise ValueError("platform %r cannot be read over %r" % (platform, via))
    return nos(platform).read(connection, via)


def counter_ways(platform):
    """How a ``platform`` switch's load-test counters can be read live, the default first; ``()``: they cannot."""
    module = nos(platform)
    if module is None or not callable(getattr(module, "read_counters", None)):
        return ()
    return tuple(getattr(module, "COUNTER_READ", ()))


def counters_readable(platform):
    """Whether a ``platform`` switch's load-test counters can be read live (its NOS has ``read_counters``)."""
    return bool(counter_ways(platform))


def counter_platforms():
    """The sorted platforms whose load-test counters can be read live."""
    return sorted(name for name in PLATFORMS if counters_readable(name))


def counter_settle(platform):
    """Seconds a ``platform`` switch may take to show its counters' latest values (0: at once, or not known)."""
    return int(getattr(nos(platform), "COUNTER_SETTLE", 0) or 0)


def read_counter_settle(platform, via, connection):
    """``(seconds, source)``: how long a ``platform`` switch takes to show its counters' latest values, from the poll
    interval configured on it where its NOS reads one (``read_counter_settle``), else its default
    (:func:`counter_settle`, ``source`` saying why). Never raises on a switch that cannot say: the default is kept."""
    module = nos(platform)
    default = counter_settle(platform)
    reader = getattr(module, "read_counter_settle", None)
    if reader is None:
        return default, "the NOS's default poll interval (the configured one is not read)"
    try:
        seconds, source = reader(connection, via)
    except (PushError, ValueError) as exc:
        return default, "the NOS's default poll interval (%s)" % " ".join(str(exc).split())[:200]
    if seconds is None:
        return default, "the NOS's default poll interval (%s)" % source
    return int(seconds), source


def counter_commands(platform):
    """The load-test counter commands of a ``platform`` switch as text (``{port}`` where one runs per port)."""
    module = nos(platform)
    return [" ".join(command) for _fmt, command in getattr(module, "COUNTER_COMMANDS", ())]


def read_counters(platform, via, connection, ports=None):
    """``{format: output}`` of a ``platform`` switch's counters for the load test (``counters_parse`` formats; a
    one-port format's output ``{port: text}``), read ``via`` one of its :func:`counter_ways` through ``connection``,
    for ``ports`` where its NOS reads port by port. ValueError when the NOS has no counter reader or cannot be read
    so; the NOS's errors pass through as for :func:`read_running`."""
    if not counters_readable(platform):
        raise ValueError("platform %r has no counter reader (readable: %s)" % (platform, ", ".join(
            counter_platforms())))
    if via not in counter_ways(platform):
        raise ValueError("platform %r counters cannot be read over %r (only %s)" % (
            platform, via, ", ".join(counter_ways(platform))))
    return nos(platform).read_counters(connection, via, ports=ports)


def port_problems(platform, names):
    """One line per port name in ``names`` that ``platform``'s NOS does not accept (empty: all valid)."""
    module = nos(platform)
    bad = module.invalid_ports(names) if module is not None else []
    if not bad:
        return []
    return ["port %s: not a %s port name (%s); set the ToR's port_template accordingly, e.g. %s"
            % (name, module.TITLE, module.PORT_NAME, module.PORT_TEMPLATE) for name in bad]


def _diffing(platform):
    module = nos(platform)
    if module is None or module.EXTENSION is None:
        raise ValueError("no diff for platform %r" % (platform,))
    return module


def running_diff(platform, running_text, rendered):
    """Diff items of a rendered file (:func:`tor_render.render_tor`) against a running configuration."""
    return _diffing(platform).running_diff(running_text, rendered)


def stale_ports(platform, running_text, rendered):
    """Ports of the running configuration that carry this collection's description marker but are not in the
    rendered configuration (a node left the plan, a ToR was renumbered): sorted port names."""
    return _diffing(platform).stale_ports(running_text, rendered)


def file_name(name, platform):
    """``tors/<switch>.<ext>``: where the rendered file of ToR ``name`` goes, relative to the plan directory."""
    return "tors/%s.%s" % (name, nos(platform).EXTENSION)


def lldp_announces_alias(platform):
    """Whether ``platform``'s NOS announces the port alias, not the port's name, as its LLDP Port ID."""
    module = nos(platform)
    return module is not None and getattr(module, "LLDP_PORT_ID", "ifname") == "alias"


def lldp_port_aliases(platform, running_text, tor="the ToR"):
    """``{alias (lower case): port}`` of a ToR of ``platform`` from its running configuration's text (None when the
    NOS announces port names); one-line ``FabricError`` naming ``tor`` when the text is not readable."""
    module = nos(platform)
    if not lldp_announces_alias(platform):
        return None
    return module.lldp_port_aliases(running_text, tor)
