# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A ToR's Arista EOS configuration from its intent (:func:`tor_intent.tor_intent`), through pyavd.

``eos_structured(intent)`` builds AVD *structured config* (the data model of Arista's
``eos_cli_config_gen``), pure Python. ``render_eos(intent)`` validates it with pyavd's own schema
(``validate_structured_config``) and lets pyavd render the EOS CLI (``get_device_config``), so the
CLI syntax is Arista's, not ours. pyavd is an optional dependency that only EOS users need; without
it :class:`RendererUnavailable` names the package to install.

What is set:

* ``ethernet_interfaces`` per rail port: description, ``no shutdown``, MTU, speed / FEC when the
  model sets them (``400G`` -> ``400g``, ``800G`` -> ``800g-8``; ``rs`` -> Reed-Solomon, ``fc``
  -> Fire Code, ``none`` -> ``no error-correction encoding``); exclusive/p2p: ``no switchport`` with
  the plan's gateway (``ip address`` or ``ipv6 enable`` + ``ipv6 address``); shared: ``switchport
  access vlan <1000+rail>`` with ``vlans`` and a ``vlan_interfaces`` SVI holding the rail gateway;
* ``service-profile`` ``PROFILE`` on every rail port, and the ``qos profile``: ``qos trust dscp``,
  ``priority-flow-control on`` with ``no-drop`` on the PFC priorities (and ``pause watchdog`` when
  the profile wants it), ``tx-queue`` blocks with ECN thresholds in bytes on the ECN queues,
  ``bandwidth percent`` with ``no priority`` (DWRR) on the weighted queues and ``priority strict``
  on the CNP queue;
* global ``qos map dscp <d> to traffic-class <p>`` for the RoCE and CNP DSCPs (the other DSCPs
  keep EOS's default map) and the PFC watchdog default timers when the watchdog is wanted.

LLDP is on by default on EOS and not written. Routed EOS ports classify by DSCP, so both
``dscp`` and ``pcp,dscp`` trust become ``qos trust dscp``.
"""

from __future__ import annotations

PROFILE = "AINET_ROCE"
SPEED = {"800G": "800g-8"}
FEC = {"rs": {"enabled": True, "reed_solomon": True}, "fc": {"enabled": True, "fire_code": True},
       "none": {"enabled": False}}
WATCHDOG = {"action": "drop", "timeout": 0.2, "polling_interval": 0.1, "recovery_time": 0.2}
PYAVD = "pyavd==6.4.0"


class RendererUnavailable(RuntimeError):
    """A renderer's optional dependency is missing."""


def _address(conf, address, family):
    if family == "ipv6":
        conf["ipv6_enable"] = True
        conf["ipv6_address"] = address
    else:
        conf["ip_address"] = address


def eos_structured(intent):
    """AVD structured config of one ToR (see the module docstring)."""
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
    queues = {}
    for queue, weight in sorted(q["ets"].items()):
        queues[queue] = {"id": queue, "bandwidth_percent": weight, "priority": "no priority"}
    for queue in q["strict_queues"]:
        queues[queue] = {"id": queue, "priority": "priority strict"}
    if q["ecn"]:
        ecn = q["ecn"]
        for queue in ecn["queues"]:
            queues.setdefault(queue, {"id": queue})["random_detect"] = {"ecn": {"threshold": {
                "units": "bytes", "min": ecn["min_bytes"], "max": ecn["max_bytes"], "max_probability": ecn["probability"]}}}
    pfc = {"enabled": True, "priorities": [{"priority": p, "no_drop": True} for p in q["pfc"]]}
    if q["watchdog"]:
        pfc["watchdog"] = {"enabled": True}
    profile = {"name": PROFILE, "trust": "dscp", "priority_flow_control": pfc}
    if queues:
        profile["tx_queues"] = [queues[k] for k in sorted(queues)]
    out = {"qos_profiles": [profile],
           "qos": {"map": {"dscp": ["%d to traffic-class %d" % (d, p) for d, p in sorted(q["dscp_to_priority"].items())]}}}
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
        raise ValueError("ToR %s: pyavd refuses the EOS structured config: %s" % (intent["name"], "; ".join(violations)))
    return pyavd.get_device_config(data)
