# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every ToR's configuration file from the plan: one entry point over the NOS modules (:mod:`platforms`).

``render_tor(plan, name)`` returns ``{"name", "platform", "format", "path", "text", "data"}``:
``path`` is ``tors/<switch>.<ext>`` relative to the plan directory (``<inventory dir>/.ainet-fabric/<cluster>/`` by default),
``text`` the file's content (SONiC config_db JSON, NVUE ``nv config apply`` YAML, EOS or NX-OS CLI),
``data`` the structured form a push sends (config_db dict, NVUE ``set`` body, CLI lines),
``format`` the :mod:`qos_parse` format that reads the file back and ``ports`` the rail ports' names.
``render_tors(plan, names)`` renders several and lists the ToRs it cannot render (no platform, or a platform with no
renderer) in ``skipped`` with the reason.
``summary(result, validate, directory)`` is the one line a job prints of the tor_config action's result, and
``lacking(tors)`` the lines that say what each running configuration lacks of the rendered one.

The file text is deterministic: a second render of the same plan gives the same bytes.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.tor import platforms
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import tor_intent

HEADER = "Rendered by ainet.fabric tor_config from the rail plan of cluster %s; do not edit: re-render instead."


def render_tor(plan, name):
    """The rendered file of ToR ``name`` (see the module docstring)."""
    intent = tor_intent(plan, name)
    platform = intent["platform"]
    if not platforms.is_rendered(platform):
        raise ValueError("ToR %s: platform %s has no renderer (rendered: %s)"
                         % (name, platform or "(unset)", ", ".join(platforms.rendered_platforms())))
    nos = platforms.nos(platform)
    text, data = nos.render(intent, HEADER % plan["summary"]["cluster"])
    return {"name": name, "platform": platform, "format": nos.QOS_FORMAT,
            "path": platforms.file_name(name, platform), "text": text, "data": data,
            "ports": [entry["port"] for entry in intent["ports"]]}


def render_tors(plan, names=None):
    """Render ``names`` (default: every ToR of the plan); ``{"rendered": [...], "skipped": {name: why}}``."""
    names = sorted(plan["tors"]) if names is None else list(names)
    rendered, skipped = [], {}
    for name in names:
        tor = plan["tors"].get(name)
        if tor is None:
            raise ValueError("%s is not a ToR of the plan (ToRs: %s)" % (name, ", ".join(sorted(plan["tors"]))))
        if not platforms.is_rendered(tor.get("platform")):
            skipped[name] = ("no platform set" if not tor.get("platform")
                             else "platform %s is read by the lossless check but not rendered" % tor["platform"])
            continue
        rendered.append(render_tor(plan, name))
    return {"rendered": rendered, "skipped": skipped}


# Lines printed of what one running configuration lacks (the result's ``diff`` keeps up to 400, the file everything).
SHOWN_DIFF = 50


def _out_of_sync(tors):
    return [tor for tor in tors if tor.get("in_sync") is False]


def summary(result, validate, directory=None):
    """One line of a tor_config result (``tors``, ``files``, ``skipped``, ``notes``, ``unvalidated``): how many
    configurations were rendered into ``directory``/tors and changed, on how many the vendor schema was checked
    (``validate``) and which not, the ToRs not rendered, those out of sync with their running configuration, and the
    notes."""
    tors, unvalidated = result["tors"], result.get("unvalidated") or {}
    line = "%d ToR configuration(s) %s, %d changed" % (
        len(tors), "in %s/tors" % directory if directory else "rendered (not written)", len(result["files"]))
    if validate:
        line += "; vendor schema checked on %d of %d" % (len(tors) - len(unvalidated), len(tors))
        if unvalidated:
            line += ", NOT checked: " + ", ".join(unvalidated)
    else:
        line += "; vendor schema check off (tor_config_validate false)"
    if result.get("skipped"):
        line += "; not rendered: " + ", ".join(result["skipped"])
    behind = _out_of_sync(tors)
    if behind:
        line += "; out of sync with the running configuration: " + ", ".join(tor["name"] for tor in behind)
    if result.get("notes"):
        line += "; " + "; ".join(result["notes"])
    return line


def lacking(tors):
    """For each ToR of ``tors`` (a tor_config result's) out of sync with its running configuration: a line naming
    it, its running configuration and the count of differences and stale ports, then the first :data:`SHOWN_DIFF`
    lines of what the running configuration lacks."""
    lines = []
    for tor in _out_of_sync(tors):
        lines.append("%s (%s): %d difference(s), %d stale port(s)"
                     % (tor["name"], tor["running"], tor["differences"], len(tor["stale_ports"])))
        lines.extend(tor["diff"][:SHOWN_DIFF])
    return lines
