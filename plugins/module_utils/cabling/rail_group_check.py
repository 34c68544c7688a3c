# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The planned rail groups against the cabling as LLDP found it: declared against discovered.

A rail group (``workload.topology``: the nodes that reach the same ToR on every rail) is only what the plan
declares; the schedulers must not be told of one that the cables do not make. :func:`agreement` reads the cabling
check's result (:func:`cabling_check.check_cabling`) and gives every planned group a verdict: ``agrees``, ``split``,
``fused`` or ``unverified``. Switch names are compared by the cabling check's rule (:func:`cabling_check.same_switch`).

``topos``: ``{fabric: {"groups": {name: {"hosts": [...], "tors": [ToR per rail]}}}}``, plain data, so this wing does
not import the workload wing.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.cabling.cabling_check import same_switch

VERDICTS = ("agrees", "crossed", "split", "fused", "unverified")


def _discovered_tors(cabling):
    """``{(host, fabric, rail): ToR name or None}`` from a cabling check result: the switch each rail reaches, None
    where it was not read or is ambiguous (missing, unexpected, unknown interface)."""
    seen = {}
    for entry in cabling.get("ok") or ():
        seen[(entry.get("host"), entry.get("fabric"), entry.get("rail"))] = ("planned", None)
    for finding in cabling.get("findings") or ():
        key = (finding.get("host"), finding.get("fabric"), finding.get("rail"))
        kind = finding.get("kind")
        if kind == "wrong_port":
            seen[key] = ("planned", None)
        elif kind in ("wrong_tor", "swapped"):
            seen[key] = ("seen", (finding.get("seen") or {}).get("tor"))
            pair = finding.get("pair")
            if pair:
                seen[(finding.get("host"), pair.get("fabric"), pair.get("rail"))] = (
                    "seen", (pair.get("seen") or {}).get("tor"))
        else:
            seen[key] = ("unread", kind)
    return seen


def agreement(topos, cabling):
    """Each rail group's verdict against the cabling check's result ``cabling`` (what ``check_cabling`` returned, or
    the cabling job's ``cabling.json``: its findings and the hosts it checked; None: not checked)::

        {fabric: {group: {"verdict": "agrees" | "crossed" | "split" | "fused" | "unverified", "why": [line, ...]}}}

    ``unverified``: some rail of a member was not read (no cabling result, a host or rail missing from it, no LLDP
    neighbour, several neighbours). ``fused``: a member's rail reaches a ToR of another rail group (``why`` names
    it), and that group is fused too. ``split``: a member's rail reaches a switch outside the plan's ToRs of the fabric, so the group's members no
    longer share one set of ToRs. ``crossed``: a member's rail reaches its group's ToR of another rail (the group
    holds, its rails do not). The worst wins: fused, split, crossed, unverified. A wrong port on the planned ToR
    changes no group; only ``agrees`` is published.
    """
    seen = _discovered_tors(cabling) if isinstance(cabling, dict) else {}
    # The cabling job's saved status (cabling.json) lists the hosts it checked instead of every ok rail: a rail of
    # theirs without a finding was seen as planned; a host it did not check stays unread.
    checked = set((cabling or {}).get("hosts") or ()) if isinstance(cabling, dict) else set()
    out = {}
    for fabric, topo in topos.items():
        owner = {}
        for group in topo["groups"].values():
            for tor in group["tors"]:
                owner.setdefault(tor, group["name"])
        verdicts, fusions = {}, []
        for name, group in topo["groups"].items():
            why, verdict = [], "agrees"
            if cabling is None:
                verdicts[name] = {"verdict": "unverified", "why": ["no cabling check result (playbooks/cabling.yml)"]}
                continue
            for host in group["hosts"]:
                for rail, planned in enumerate(group["tors"], 1):
                    state, value = seen.get((host, fabric, rail), ("planned", None) if host in checked else
                                            ("unread", "not in the cabling check"))
                    if state == "planned":
                        continue
                    if state == "unread":
                        why.append("%s rail %d: %s" % (host, rail, str(value).replace("_", " ")))
                        verdict = "unverified" if verdict == "agrees" else verdict
                        continue
                    if value is not None and same_switch(value, planned):
                        continue
                    other = next((g for t, g in owner.items() if value is not None and same_switch(value, t)), None)
                    if other is not None and value is not None and any(same_switch(value, t) for t in group["tors"]):
                        why.append("%s rail %d reaches %s, planned %s: the group's own ToR of another rail"
                                   % (host, rail, value, planned))
                        verdict = "crossed" if verdict in ("agrees", "unverified") else verdict
                    elif other is not None and other != name:
                        line = "%s rail %d reaches %s of rail group %s, planned %s" % (
                            host, rail, value, other, planned)
                        why.append(line)
                        fusions.append((name, other, line))
                        verdict = "fused"
                    else:
                        why.append("%s rail %d reaches %s, planned %s" % (host, rail, value or "an unnamed switch",
                                                                          planned))
                        verdict = "split" if verdict in ("agrees", "unverified", "crossed") else verdict
            verdicts[name] = {"verdict": verdict, "why": why}
        # A fusion ties two groups: the group whose ToR a stranger reaches is fused too.
        for name, other, line in fusions:
            verdicts[other]["verdict"] = "fused"
            verdicts[other]["why"].append("fused with %s: %s" % (name, line))
        out[fabric] = verdicts
    return out
