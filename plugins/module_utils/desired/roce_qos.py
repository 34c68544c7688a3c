# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``roce_qos``: from the model to one host's flat desired state (controller side).

Every rail NIC of a fabric with a lossless class (its resolved profile, :mod:`model.qos_profile`) gets
that profile's host settings, in the :mod:`qos_facts` vocabulary the host reads back
(:mod:`host.roce_qos_state` applies them)::

    {"nics": [{"name": "ens1f0np0", "trust": "dscp", "pfc": [3], "dscp_to_priority": {"26": 3, "48": 6},
               "ecn_rp": [3], "ecn_np": [3], "cnp_dscp": 48, "cnp_priority": 6, "roce_tos": 106,
               "ets": {"tsa": ["ets", "ets", "ets", "ets", "ets", "ets", "strict", "ets"],
                       "bw": [50, 0, 0, 50, 0, 0, 0, 0]}}]}

``ets`` is None when the profile leaves ETS alone (no weights and no strict CNP queue). The NICs of
fabrics without a lossless class (``qos: {preset: none}``, InfiniBand) are not listed: the module
leaves them alone and removes its boot unit when no NIC is listed.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.model.qos_profile import dscp_map
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import fabric_interfaces


def desired(profile):
    """The settings (qos_facts vocabulary) that ``profile`` wants on every rail NIC."""
    return {
        "trust": "dscp",
        "pfc": list(profile["pfc_priorities"]),
        "dscp_to_priority": dscp_map(profile),
        "ecn_rp": list(profile["dcqcn_priorities"]),
        "ecn_np": list(profile["dcqcn_priorities"]),
        "cnp_dscp": profile["cnp_dscp"],
        "cnp_priority": profile["cnp_priority"],
        "roce_tos": profile["roce_tos"],
        "traffic_class": profile["roce_tos"],
    }


def ets_layout(profile):
    """(tsa per tc, bandwidth per tc) for the 8 traffic classes, or None when ETS is left alone.

    The CNP priority's traffic class is strict when the profile wants a strict CNP queue; the profile's
    weights go on the listed classes, and without weights the other classes share 100 % evenly."""
    weights = {int(q): int(w) for q, w in (profile.get("ets_weights") or {}).items()}
    strict = {profile["cnp_priority"]} if profile.get("cnp_strict") else set()
    if not weights and not strict:
        return None
    tsa = ["strict" if tc in strict else "ets" for tc in range(8)]
    if weights:
        bw = [weights.get(tc, 0) for tc in range(8)]
    else:
        rest = [tc for tc in range(8) if tc not in strict]
        share, extra = divmod(100, len(rest))
        bw = [0] * 8
        for i, tc in enumerate(rest):
            bw[tc] = share + (1 if i < extra else 0)
    return tsa, bw


def nic_settings(profile, name=None):
    """One NIC's flat settings (an entry of the module's ``nics``) for ``profile``; JSON-safe (string DSCP keys)."""
    want = desired(profile)
    layout = ets_layout(profile)
    out = {"trust": want["trust"], "pfc": want["pfc"],
           "dscp_to_priority": dict((str(d), p) for d, p in sorted(want["dscp_to_priority"].items())),
           "ecn_rp": want["ecn_rp"], "ecn_np": want["ecn_np"], "cnp_dscp": want["cnp_dscp"],
           "cnp_priority": want["cnp_priority"], "roce_tos": want["roce_tos"],
           "ets": {"tsa": layout[0], "bw": layout[1]} if layout else None}
    if name is not None:
        out["name"] = name
    return out


def options(cluster, interfaces):
    """The module's flat options for one host: ``{"nics": [settings per rail NIC with a lossless class]}``.

    ``cluster``: the validated model; ``interfaces``: the host's ``fabric_rail_interfaces`` (checked here,
    raising FabricModelError)."""
    nics_by_fabric = fabric_interfaces(cluster, interfaces)
    return {"nics": [nic_settings(fabric.qos, nic) for fabric in cluster.fabrics if fabric.qos
                     for nic in nics_by_fabric.get(fabric.name, [])]}
