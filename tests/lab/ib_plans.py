"""The rail plan of the InfiniBand lab and of its recorded data: 4 nodes x 2 rails, 2 rail groups of 2 nodes (one
leaf per rail group and rail: su<g>-r<r>), infiniband addressing; and the partitions it is given."""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan

HOSTS = {"gpu01": 1, "gpu02": 2, "gpu03": 3, "gpu04": 4}
PARTITIONS = [
    {"name": "compute", "pkey": "0x0101", "fabric": "default", "membership": "full", "ipoib": True, "mtu": 5},
    {"name": "storage", "pkey": "0x0202", "hosts": ["gpu01", "gpu02"], "membership": "limited", "ipoib": False},
]


def lab_model(groups=2, per_group=2, rails=2):
    tors = []
    for group in range(1, groups + 1):
        first = (group - 1) * per_group + 1
        for rail in range(1, rails + 1):
            tors.append({"name": "su%d-r%d" % (group, rail), "rails": [rail], "port_template": "{local}",
                         "spine_block": "sb1", "nodes": "%d-%d" % (first, first + per_group - 1)})
    return {"name": "iblab", "rails": rails, "tors": tors,
            "addressing": {"mode": "infiniband", "supernet": "172.18.0.0/16", "rail_prefix": 24}}


def lab_plan():
    return rail_plan(lab_model(), dict(HOSTS))


def port_guids(plan, topology):
    """``{host: {rail: port guid}}`` from the good subnet's ibnetdiscover (by node description), as the cabling
    check's ok entries give them."""
    from ansible_collections.ainet.fabric.plugins.module_utils.cabling.ib_cabling import check_ib_cabling
    result = check_ib_cabling(plan, topology)
    guids = {}
    for entry in result["ok"]:
        guids.setdefault(entry["host"], {})[entry["rail"]] = entry["port_guid"]
    return guids
