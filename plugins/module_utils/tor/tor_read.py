# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading the ToRs live for the lossless check (``roles/lossless_check``, action ``lossless_report``).

The role reads every ToR that is an inventory host (named as in the model) in one task on the controller: a loop
over the ToRs, each item delegated to the ToR's inventory host, so that its connection variables and credentials
are those the push uses (``roles/tor_config``, ``plugins/action/tor_config.py``), with a timeout per ToR. Each NOS
module reads its running configuration the way it pushes (:mod:`platforms`: ``READ``, ``READ_COMMAND``, ``read``):

========  ===============================================  =======================================
platform  its API (``http``)                               over its connection (``ssh``)
========  ===============================================  =======================================
sonic     -                                                ``sonic-cfggen -d --print-data``
cumulus   NVUE REST ``GET /nvue_v1/?rev=applied`` (8765)   ``nv config show -o json``
eos       eAPI ``runCmds`` ``show running-config`` (text)  ``show running-config``
nxos      NX-API ``cli_show_ascii`` ``show running-config``  ``show running-config``
os10      -                                                ``show running-configuration``
========  ===============================================  =======================================

The first way of a NOS is its default (where the push uses an API, the API); a ToR whose ``ansible_connection`` is
``network_cli`` is read over it where its NOS can be. Nothing here changes a switch: GETs, ``show`` commands and
``sonic-cfggen -d --print-data`` only.

This module holds what does not depend on the NOS: the way a ToR is read (:func:`choose_via`), its API's address
and credentials from its inventory variables (:func:`api_endpoint`, the push's variables and defaults), the read
with one-line errors naming the ToR (:func:`read_tor`), the reading of the role's loop results (:func:`collect`)
and the reason a ToR that was wanted was not read (:func:`unread_reason`).
"""

from __future__ import annotations

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse import parse_qos
from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms
from ansible_collections.ainet.fabric.plugins.module_utils.tor.config_redact import redact_line
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import PushError

# lossless_check_read_tors: auto reads the ToRs that can be read, true wants every ToR read, false none.
MODES = ("auto", "true", "false")
# lossless_check_read_transport, and the NOS way each names.
TRANSPORTS = ("auto", "api", "connection")
VIA = {"api": "http", "connection": "ssh"}
# The longest reason kept (one line).
MAX_REASON = 400


class ReadError(RuntimeError):
    """A ToR could not be read live; the message is one line naming the ToR."""


def one_line(text, limit=MAX_REASON):
    """``text`` on one line (whitespace runs become one space), at most ``limit`` characters, with what a switch's
    configuration line quoted in it would carry of a secret redacted (:func:`config_redact.redact_line`)."""
    return redact_line(" ".join(str(text).split()))[:limit]


def qos_facts(text, fmt):
    """What the check keeps of a running configuration: its QoS facts (:func:`qos_parse.parse_qos`), never the text
    (it holds the switch's password hashes, keys and SNMP communities); their problem lines are redacted too."""
    facts = parse_qos(text, fmt)
    facts["problems"] = [redact_line(line) for line in facts.get("problems") or ()]
    return facts


def connection_name(value):
    """The short name of an ``ansible_connection`` value (``ansible.netcommon.network_cli`` -> ``network_cli``;
    unset or ``smart`` -> ``ssh``)."""
    name = str(value or "").rsplit(".", 1)[-1]
    return "ssh" if name in ("", "smart") else name


def platform_of(cluster, name):
    """``(found, platform)`` of ToR ``name`` in a validated model (:class:`cluster_model.Cluster`)."""
    for fabric in cluster.fabrics:
        for tor in fabric.tors:
            if tor.name == name:
                return True, tor.platform
    return False, None


def choose_via(name, platform, transport="auto", connection=None):
    """``"http"`` or ``"ssh"``: how ToR ``name`` (``platform``) is read. ``transport``: ``auto`` (the NOS's
    default way; over the connection when ``connection``, the ToR's ``ansible_connection``, is ``network_cli`` and
    the NOS can be read so), ``api`` or ``connection``. :class:`ReadError` when the ToR cannot be read that way."""
    ways = platforms.read_ways(platform)
    if not ways:
        raise ReadError("ToR %s: platform %s cannot be read live (readable: %s); give its configuration instead"
                        % (name, platform or "unset", ", ".join(platforms.readable_platforms())))
    return _pick(name, ways, transport, connection, "%s is" % platforms.nos(platform).TITLE)


def choose_counter_via(name, platform, transport="auto", connection=None):
    """``"http"`` or ``"ssh"``: how ToR ``name``'s load-test counters are read (:func:`platforms.counter_ways`),
    chosen as :func:`choose_via` chooses; :class:`ReadError` when they cannot be read that way."""
    ways = platforms.counter_ways(platform)
    if not ways:
        raise ReadError("ToR %s: platform %s has no counter reader (readable: %s); its counters are not read"
                        % (name, platform or "unset", ", ".join(platforms.counter_platforms())))
    return _pick(name, ways, transport, connection, "%s counters are" % platforms.nos(platform).TITLE)


def _pick(name, ways, transport, connection, what):
    transport = str(transport or "auto")
    if transport == "auto":
        if connection_name(connection) == "network_cli" and "ssh" in ways:
            return "ssh"
        return ways[0]
    if transport not in VIA:
        raise ReadError("ToR %s: lossless_check_read_transport %r is not one of %s"
                        % (name, transport, ", ".join(TRANSPORTS)))
    if VIA[transport] not in ways:
        other = [key for key, via in sorted(VIA.items()) if via in ways]
        raise ReadError("ToR %s: %s not read over its %s; set lossless_check_read_transport to %s (or auto)"
                        % (name, what, "API" if transport == "api" else "connection", " or ".join(other)))
    return VIA[transport]


# The inventory variables :func:`api_endpoint` reads (the push reads the ToR's API with the same ones).
API_VARIABLES = ("ansible_host", "ansible_httpapi_use_ssl", "ansible_httpapi_port", "ansible_user",
                 "ansible_httpapi_user", "ansible_httpapi_password", "ansible_password", "ansible_ssh_pass",
                 "ansible_httpapi_validate_certs")


def api_endpoint(variables, name, api_port=None):
    """``(base_url, user, password, validate_certs)`` of ToR ``name``'s API from its inventory ``variables``
    (templated values), with the push's variables and defaults: ``ansible_host`` (else the name),
    ``ansible_httpapi_use_ssl`` (yes), ``ansible_httpapi_port`` (``api_port``, the NOS's, else 443 or 80),
    ``ansible_user`` or ``ansible_httpapi_user``, ``ansible_httpapi_password``, ``ansible_password`` or
    ``ansible_ssh_pass``, ``ansible_httpapi_validate_certs`` (yes)."""
    def get(key, default=None):
        value = variables.get(key)
        return default if value is None or value == "" else value

    def flag(key):
        try:
            return boolean(get(key, True))
        except TypeError:
            raise ReadError("ToR %s: %s: %r is not a boolean" % (name, key, get(key))) from None

    host = str(get("ansible_host", name))
    ssl = flag("ansible_httpapi_use_ssl")
    port = get("ansible_httpapi_port", api_port or (443 if ssl else 80))
    if ":" in host and not host.startswith("["):
        host = "[%s]" % host
    url = "%s://%s:%s" % ("https" if ssl else "http", host, port)
    user = get("ansible_user") or get("ansible_httpapi_user")
    password = get("ansible_httpapi_password") or get("ansible_password") or get("ansible_ssh_pass")
    return url, user, password, flag("ansible_httpapi_validate_certs")


def where(platform, via, url=None, connection=None):
    """How a read went, for messages and the report: ``Cumulus Linux (NVUE) API http://10.0.0.1:8765`` or
    ``sonic-cfggen -d --print-data over its ssh connection``."""
    module = platforms.nos(platform)
    if via == "http":
        return "%s API %s" % (module.TITLE, url)
    return "%s over its %s connection" % (" ".join(module.READ_COMMAND), connection_name(connection))


def read_tor(name, platform, via, connection, how):
    """The running configuration of ToR ``name`` read ``via`` ``connection`` (see :func:`platforms.read_running`);
    ``how`` (:func:`where`) names the path in the one-line :class:`ReadError` when it cannot be read."""
    try:
        return platforms.read_running(platform, via, connection)
    except (PushError, ValueError) as exc:
        raise ReadError("ToR %s could not be read live (%s): %s" % (name, how, one_line(exc))) from None


def counters_where(platform, via, url=None, connection=None):
    """How a counter read went, for messages: ``Arista EOS API https://10.0.0.1:443 (show ..., show ...)`` or
    ``show pfc counters, show queue counters over its ssh connection``."""
    commands = ", ".join(platforms.counter_commands(platform))
    if via == "http":
        return "%s API %s (%s)" % (platforms.nos(platform).TITLE, url, commands)
    return "%s over its %s connection" % (commands, connection_name(connection))


def read_counters(name, platform, via, connection, how, ports=None):
    """The load-test counters of ToR ``name`` (:func:`platforms.read_counters`), for ``ports`` where its NOS reads
    port by port; one-line :class:`ReadError` naming the ToR, ``how`` (:func:`counters_where`) and the NOS's words
    (the command that failed) when they cannot be read."""
    try:
        return platforms.read_counters(platform, via, connection, ports=ports)
    except (PushError, ValueError) as exc:
        raise ReadError("ToR %s: its counters could not be read (%s): %s" % (name, how, one_line(exc))) from None


def collect(results):
    """``(reads, errors)`` from the results of the role's read loop (the registered ``results``): ``reads``
    ``{tor: {"facts", "format", "source"}}`` of each ToR read (its QoS facts, :func:`qos_facts`), ``errors`` ``{tor: one line}`` of each that was not:
    the action's ``read_error``, or Ansible's own ``msg`` when the item failed or was unreachable before the action
    answered (its connection could not be set up, the per-ToR timeout). Skipped items (a configuration given for
    the ToR, the loop skipped) are in neither."""
    reads, errors = {}, {}
    for result in results or ():
        if not isinstance(result, dict) or result.get("skipped"):
            continue
        name = result.get("tor") or result.get("item")
        if not isinstance(name, str) or not name:
            continue
        config = result.get("config")
        if isinstance(config, dict) and isinstance(config.get("facts"), dict) and not result.get("failed"):
            reads[name] = config
            continue
        reason = result.get("read_error") or result.get("msg") or (
            "unreachable" if result.get("unreachable") else "no configuration came back")
        reason = one_line(reason)
        errors[name] = reason if reason.startswith("ToR %s" % name) else one_line(
            "ToR %s could not be read live: %s" % (name, reason))
    return reads, errors


def unread_reason(name, platform, inventory_hosts):
    """Why ToR ``name`` was not read live although ``lossless_check_read_tors`` is ``true`` (one line)."""
    if name not in inventory_hosts:
        return ("ToR %s was not read live: it is not an inventory host; add it to the inventory under this name "
                "with its connection variables, or give its configuration" % name)
    if not platforms.read_ways(platform):
        return ("ToR %s was not read live: platform %s cannot be read live (readable: %s); give its configuration"
                % (name, platform or "unset", ", ".join(platforms.readable_platforms())))
    return "ToR %s was not read live: the read task did not run for it" % name
