# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ``ainet.fabric.subnet_manager``: OpenSM's partitions.conf and options from the model's
``infiniband.partitions`` (``render``), and the PKey tables the member ports serve against them (``verify``).

The logic lives in ``module_utils/ib/opensm.py`` and ``module_utils/cabling/ib_cabling.py``; this plugin reads the
arguments and returns text and findings. The role writes the files on the SM host and reads the tables there."""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.cabling import ib_cabling, ib_parse
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.ib import opensm
from ansible_collections.ainet.fabric.plugins.plugin_utils.plan_action import PlanAction

ARGUMENT_SPEC = dict(
    cluster=dict(type="dict", required=True),
    nodes=dict(type="dict"),
    node_group=dict(type="str"),
    fabric=dict(type="str", required=True),
    state=dict(type="str", default="render", choices=["render", "verify"]),
    ibnetdiscover=dict(type="str", required=True),
    partitions_file=dict(type="path", default="/etc/opensm/partitions.conf"),
    sminfo=dict(type="str"),
    pkey_reads=dict(type="list", elements="dict", default=[]),
    fail_on_findings=dict(type="bool", default=True),
)
MARKER = "# ainet.fabric subnet_manager"


def _subnet(plan, fabric, text):
    """The fabric's plan, the subnet read, and ``{host: {rail: port guid}}`` of the rails cabled as planned (the
    members rendered: a rail the cabling check does not find as planned fails the rendering, naming it)."""
    if fabric not in ib_cabling.infiniband_fabrics(plan):
        raise FabricError("subnet_manager: fabric %r is not an infiniband fabric of the model (%s)" % (
            fabric, ", ".join(ib_cabling.infiniband_fabrics(plan)) or "none"))
    fplan = ib_cabling.fabric_plan(plan, [fabric])
    topology = ib_parse.parse_ibnetdiscover(text)
    guids = {}
    for entry in ib_cabling.check_ib_cabling(fplan, topology)["ok"]:
        if entry.get("port_guid"):
            guids.setdefault(entry["host"], {})[entry["rail"]] = entry["port_guid"]
    return fplan, topology, guids


class ActionModule(PlanAction):
    ARGUMENT_SPEC = ARGUMENT_SPEC
    ARGUMENT_RULES = dict(mutually_exclusive=[["nodes", "node_group"]], required_one_of=[["nodes", "node_group"]])
    NODE_GROUP_VARIABLE = "subnet_manager_node_group"

    def act(self, result, args, task_vars):
        plan, topology, guids = _subnet(self.plan(args, task_vars), args["fabric"], args["ibnetdiscover"])
        parts = opensm.model_partitions(plan, args["fabric"])
        both = opensm.allow_both_pkeys(parts)
        sm_port = ib_parse.parse_sminfo(args["sminfo"])["guid"] if args["sminfo"] else None
        desired = opensm.desired_pkeys(plan, parts, guids, both_pkeys=both, sm_port_guid=sm_port)
        if args["state"] == "render":
            partitions = opensm.partitions_text(plan, parts, guids)
            options = opensm.options_text(args["partitions_file"], both_pkeys=both)
            result.update(changed=False, partitions_text="%s\n%s" % (MARKER, partitions),
                          options_text="%s\n%s" % (MARKER, options), marker=MARKER, allow_both_pkeys=both,
                          lids=dict((g, str(lid)) for g, lid in opensm.member_lids(topology, desired).items()))
            return result
        seen = {}
        for read in args["pkey_reads"]:
            guid = ib_parse.guid_text((read.get("item") or {}).get("key"))
            if read.get("rc") == 0 and read.get("stdout"):
                seen[guid] = ib_parse.parse_smpquery_pkeys(read["stdout"])["pkeys"]
        compared = opensm.compare_pkeys(desired, seen)
        result.update(changed=False, findings=compared["findings"], ok=compared["ok"], summary=compared["summary"])
        if compared["findings"] and args["fail_on_findings"]:
            result.update(failed=True, msg="subnet_manager: %d PKey finding(s):\n%s" % (
                len(compared["findings"]), "\n".join(f["detail"] for f in compared["findings"][:20])))
        return result
