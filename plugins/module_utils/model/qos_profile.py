# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lossless QoS profile of a fabric: presets, validation and the resolved profile.

A fabric's ``qos`` key names a preset and may override any of its values::

    qos:
      preset: nvidia          # nvidia (default for RoCE) | sonic | spiderpool | custom | none
      roce_dscp: 26           # overrides ...

:func:`resolve_profile` returns the **resolved profile**, a plain dict with every key of
:data:`PROFILE_KEYS` (``None`` where the preset deliberately leaves a setting to the
vendor, which the agreement check then does not judge), or ``None`` for ``preset: none``
and InfiniBand fabrics. The roles and the agreement check read only the resolved profile.

Where the presets come from (facts, see ``docs/lossless-qos.md``):

* ``nvidia``: NVIDIA's RoCE lossless defaults (Cumulus Linux ``qos roce``, ConnectX
  practice): trust PCP and DSCP on the switch, DSCP 26 -> priority 3 with PFC, CNP DSCP 48
  -> priority 6 on a strict queue, ECN on queues 0 and 3 (150,000 - 1,500,000 bytes,
  probability 100), ETS 50/50 between queues 0 and 3, ToS 106.
* ``sonic``: SONiC's stock QoS template: DSCP 3 and 4 lossless on priorities 3 and 4 (DSCP
  26 is lossy there!), CNP DSCP 48 -> 6, PFC watchdog on, WRED/ECN ``AZURE_LOSSLESS``
  (1,048,576 - 2,097,152 bytes, probability 5). Its scheduler is DWRR for every queue, so
  CNP strictness and ETS weights are not judged.
* ``spiderpool``: Spiderpool's host QoS defaults: DSCP 40 -> priority 5, CNP DSCP 48 ->
  priority 6. It configures hosts only; switch thresholds are not judged.
* ``custom``: nothing preset; ``roce_dscp``, ``roce_priority``, ``cnp_dscp`` and
  ``cnp_priority`` are required.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.model import model_schema
from ansible_collections.ainet.fabric.plugins.module_utils.model.model_schema import given
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricModelError

# The schema's, under the names the lossless check reads: the preset names and the keys of a resolved profile.
PRESETS_ORDER = model_schema.QOS["preset"].choices
PROFILE_KEYS = tuple(model_schema.QOS)
PRESETS = {
    "nvidia": {"trust": "pcp,dscp", "roce_dscp": 26, "roce_priority": 3, "cnp_dscp": 48, "cnp_priority": 6,
               "cnp_strict": True, "ecn_queues": [0, 3], "ecn_min_bytes": 150000, "ecn_max_bytes": 1500000,
               "ecn_probability": 100, "ets_weights": {"0": 50, "3": 50}, "pfc_watchdog": False},
    "sonic": {"trust": "dscp", "roce_dscp": 3, "roce_priority": 3, "cnp_dscp": 48, "cnp_priority": 6,
              "cnp_strict": None, "pfc_priorities": [3, 4], "dscp_priorities": {"4": 4}, "ecn_queues": [3, 4], "ecn_min_bytes": 1048576,
              "ecn_max_bytes": 2097152, "ecn_probability": 5, "ets_weights": None, "pfc_watchdog": True},
    "spiderpool": {"trust": "dscp", "roce_dscp": 40, "roce_priority": 5, "cnp_dscp": 48, "cnp_priority": 6,
                   "cnp_strict": None, "ecn_queues": None, "ecn_min_bytes": None, "ecn_max_bytes": None,
                   "ecn_probability": None, "ets_weights": None, "pfc_watchdog": None},
    "custom": {"trust": "dscp", "cnp_strict": True, "ecn_queues": None, "ecn_min_bytes": None, "ecn_max_bytes": None,
               "ecn_probability": None, "ets_weights": None, "pfc_watchdog": True},
}
REQUIRED_CUSTOM = ("roce_dscp", "roce_priority", "cnp_dscp", "cnp_priority")
# Ethernet header (14) + one 802.1Q tag (4): a switch MTU that counts the L2 frame must carry this
# much above the host's IP MTU. Switches whose MTU is the IP MTU pass with room to spare.
DEFAULT_HEADROOM = 18


def _err(field, value, problem, fix):
    return FabricModelError(field, value, problem, fix)


def resolve_profile(raw, field, rdma="roce"):
    """The resolved profile of one fabric's ``qos`` mapping as written in inventory (``field`` is its
    inventory path), or None when the fabric has no lossless class. The schema checks and normalises
    ``raw`` first; raises FabricModelError (FabricModelErrors for several shape problems)."""
    values = model_schema.normalized(raw or {}, model_schema.QOS, field, part=True)
    return profile(values, field, rdma)


def profile(values, field, rdma="roce"):
    """The resolved profile from a ``qos`` mapping the schema has normalised (None: not set)."""
    values = values or {}
    if rdma == "infiniband":
        if values and given(values, "preset", "none") != "none":
            raise _err(field + ".preset", values.get("preset"), "is set on an InfiniBand fabric",
                       "remove qos (InfiniBand is lossless by credit-based flow control) or use preset: none")
        return None
    preset = given(values, "preset", "nvidia")
    if preset == "none":
        extra = sorted(k for k in values if k != "preset")
        if extra:
            raise _err("%s.%s" % (field, extra[0]), values[extra[0]], "is set while preset is none",
                       "remove it, or choose a preset (nvidia, sonic, spiderpool, custom)")
        return None
    if preset == "custom":
        missing = [k for k in REQUIRED_CUSTOM if values.get(k) is None]
        if missing:
            raise _err("%s.%s" % (field, missing[0]), None, "is missing (preset custom states nothing itself)",
                       "set %s" % ", ".join(REQUIRED_CUSTOM))
    out = dict.fromkeys(PROFILE_KEYS)
    out.update(PRESETS[preset])
    out["preset"] = preset
    out["switch_mtu_headroom"] = DEFAULT_HEADROOM
    out["share_priority"] = False
    for key, value in values.items():
        if value is None or key == "preset":
            continue
        if key in ("pfc_priorities", "dcqcn_priorities", "ecn_queues"):
            value = sorted(value)
        elif key == "ets_weights":
            value = _weights(value, field + ".ets_weights")
        elif key == "dscp_priorities":
            value = {str(dscp): value[dscp] for dscp in sorted(value)}
        out[key] = value
    # Derived values.
    if out["pfc_priorities"] is None:
        out["pfc_priorities"] = [out["roce_priority"]]
    if out["dscp_priorities"] is None:
        out["dscp_priorities"] = {}
    if out["dcqcn_priorities"] is None:
        out["dcqcn_priorities"] = [out["roce_priority"]]
    if out["roce_tos"] is None:
        out["roce_tos"] = out["roce_dscp"] << 2 | 2  # ECT(0) in the two ECN bits
    _check(out, field)
    return out


def _weights(weights, field):
    """``weights``: {queue: percent}, normalised by the schema."""
    if sum(weights.values()) != 100:
        raise _err(field, weights, "does not add up to 100 (%d)" % sum(weights.values()),
                   "give the ETS queues' bandwidth percentages, summing to 100")
    # String keys: the resolved profile travels as JSON (plan, lock, host variables).
    return {str(q): weights[q] for q in sorted(weights)}


def _check(p, field):
    if p["roce_priority"] not in p["pfc_priorities"]:
        raise _err(field + ".pfc_priorities", p["pfc_priorities"],
                   "does not include the RoCE priority %d" % p["roce_priority"],
                   "add %d: RoCE traffic must be lossless" % p["roce_priority"])
    if p["cnp_priority"] in p["pfc_priorities"]:
        raise _err(field + ".cnp_priority", p["cnp_priority"], "is a PFC (lossless) priority",
                   "put CNPs on a priority without PFC (e.g. 6), so a paused queue cannot hold back congestion "
                   "notifications")
    if p["roce_dscp"] == p["cnp_dscp"]:
        raise _err(field + ".cnp_dscp", p["cnp_dscp"], "equals the RoCE DSCP", "give CNPs their own DSCP (e.g. 48)")
    for dscp, prio in p["dscp_priorities"].items():
        if int(dscp) in (p["roce_dscp"], p["cnp_dscp"]):
            raise _err("%s.dscp_priorities.%s" % (field, dscp), prio,
                       "maps the %s DSCP %s a second time" % ("RoCE" if int(dscp) == p["roce_dscp"] else "CNP", dscp),
                       "leave it out: roce_dscp and cnp_dscp place it already")
    mapped = set(dscp_map(p).values())
    unmapped = [prio for prio in p["pfc_priorities"] if prio not in mapped]
    if unmapped:
        raise _err(field + ".pfc_priorities", p["pfc_priorities"],
                   "includes priority %d, which no DSCP lands in (a lossless class nothing can use)" % unmapped[0],
                   "map a DSCP to it with dscp_priorities, e.g. {%d: %d}, or remove it" % (unmapped[0], unmapped[0]))
    if p["roce_tos"] >> 2 != p["roce_dscp"]:
        raise _err(field + ".roce_tos", p["roce_tos"],
                   "carries DSCP %d, not the RoCE DSCP %d" % (p["roce_tos"] >> 2, p["roce_dscp"]),
                   "use %d (DSCP << 2 | ECT) or leave it out" % (p["roce_dscp"] << 2 | 2))
    if p["ecn_min_bytes"] and p["ecn_max_bytes"] and p["ecn_min_bytes"] > p["ecn_max_bytes"]:
        raise _err(field + ".ecn_min_bytes", p["ecn_min_bytes"], "is above ecn_max_bytes %d" % p["ecn_max_bytes"],
                   "make the minimum threshold the smaller one")
    weights = p["ets_weights"] or {}
    if p["cnp_strict"] and str(p["cnp_priority"]) in weights:
        raise _err(field + ".ets_weights", weights, "gives the CNP queue %d an ETS weight" % p["cnp_priority"],
                   "leave the CNP queue out (it is strict) or set cnp_strict: false")


def dscp_map(profile):
    """Every DSCP the profile places, and its priority: RoCE, CNP and ``dscp_priorities`` (``{int: int}``)."""
    out = {int(dscp): int(prio) for dscp, prio in (profile.get("dscp_priorities") or {}).items()}
    out[profile["roce_dscp"]] = profile["roce_priority"]
    out[profile["cnp_dscp"]] = profile["cnp_priority"]
    return dict(sorted(out.items()))


def describe(profile):
    """One line for reports: ``nvidia: DSCP 26 -> priority 3 (PFC 3), CNP DSCP 48 -> 6 strict, ToS 106``."""
    if profile is None:
        return "no lossless class"
    return "%s: DSCP %d -> priority %d (PFC %s), CNP DSCP %d -> %d%s, ToS %d" % (
        profile["preset"], profile["roce_dscp"], profile["roce_priority"],
        ",".join(str(p) for p in profile["pfc_priorities"]), profile["cnp_dscp"], profile["cnp_priority"],
        " strict" if profile["cnp_strict"] else "", profile["roce_tos"])
