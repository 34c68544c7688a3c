# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL (and UCX) settings of a node, from its RDMA facts and the rail plan.

* ``NCCL_IB_HCA``: ``=`` and the RDMA devices of the fabric's rails with their ports, in rail order
  (``=mlx5_0:1,mlx5_1:1``; the ``=`` makes NCCL take exactly these names instead of every device whose name
  starts with one of them).
* ``NCCL_IB_GID_INDEX``: the index of the RoCE v2 GID that holds the rail address (IPv4 or IPv6) - the same on
  every rail, or the node is reported; not set on InfiniBand fabrics (NCCL uses the LID there).
* ``NCCL_SOCKET_IFNAME``: ``=`` and the management interface (never a rail NIC: NCCL's bootstrap and socket
  traffic must not ride the lossless class).
* ``NCCL_IB_TC`` / ``NCCL_IB_SL``: the lossless profile's ToS (``roce_tos``: the DSCP shifted, with ECT) and
  RoCE priority, so NCCL's queue pairs land in the PFC class the hosts and the ToRs were given.
* ``NCCL_CROSS_NIC``: ``0`` by default - a ring or tree channel stays on one rail, as a rail-optimised fabric
  wants (NCCL's 2 lets it cross rails when that looks faster).
* ``UCX_NET_DEVICES``: the same devices and ports for UCX (``mlx5_0:1,mlx5_1:1``).
* the GPU -> NIC table from ``nvidia-smi topo -m``: each GPU's nearest rail NIC (``PIX`` before ``PXB``, ``PHB``,
  ``NODE``, ``SYS``).
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_facts import device_of_netdev, roce_v2_gid_index

# nvidia-smi topo -m relations, nearest first (NV# links are GPU-GPU only).
NEARNESS = ("X", "PIX", "PXB", "PHB", "NODE", "SYS")
MARKER = "# Managed by ainet.fabric (nccl): NCCL settings of this node's rail NICs."


def _port_of(dev, netdev):
    for number, port in sorted((dev.get("ports") or {}).items(), key=lambda item: int(item[0])):
        if port.get("netdev") == netdev:
            return int(number)
    return 1 if len(dev.get("ports") or {}) <= 1 else None


def gpu_nic_table(facts, rail_devices):
    """``[{"gpu", "device", "netdev", "rail", "relation"}]``: each GPU's nearest rail NIC (``rail_devices``:
    ``{device: (netdev, rail)}``) by ``nvidia-smi topo -m``; empty without topology."""
    table = []
    for gpu, links in sorted(((facts.get("topology") or {}).get("gpu_nic") or {}).items(),
                             key=lambda item: int("".join(c for c in item[0] if c.isdigit()) or 0)):
        best = None
        for device, relation in links.items():
            if device not in rail_devices or relation not in NEARNESS:
                continue
            rank = (NEARNESS.index(relation), rail_devices[device][1])
            if best is None or rank < best[0]:
                best = (rank, device, relation)
        if best:
            netdev, rail = rail_devices[best[1]]
            table.append({"gpu": gpu, "device": best[1], "netdev": netdev, "rail": rail, "relation": best[2]})
    return table


def nccl_settings(plan, host, facts, socket_ifname, fabric=None, cross_nic=0):
    """``{"env": {NAME: value}, "gpu_nic": [...], "problems": [...]}`` of ``host``.

    ``plan``: the rail plan; ``facts``: the node's RDMA facts (``rdma_facts``); ``socket_ifname``: the management
    interface; ``fabric``: the fabric NCCL runs on (default: the first fabric of the cluster). A rail whose NIC has
    no RDMA device or no RoCE v2 GID for its address is a problem (the env leaves it out); a management interface
    that is a rail NIC is an error."""
    node = plan["nodes"].get(host)
    if node is None:
        raise FabricError("nccl: %s is not a node of the plan" % host)
    fabrics = plan["cluster"]["fabrics"]
    fabric = fabric or list(fabrics)[0]
    if fabric not in fabrics:
        raise FabricError("nccl: fabric %r is not in the cluster (%s)" % (fabric, ", ".join(fabrics)))
    model = fabrics[fabric]
    rails = [e for e in node["rails"] if e["fabric"] == fabric]
    rail_nics = set(e["interface"] for e in node["rails"] if e["interface"])
    if not socket_ifname or socket_ifname in rail_nics:
        raise FabricError("nccl: NCCL_SOCKET_IFNAME %r on %s is %s; NCCL's bootstrap must use the management "
                          "interface" % (socket_ifname, host, "a rail NIC" if socket_ifname else "not known"))
    problems, hcas, indexes, rail_devices = [], [], {}, {}
    infiniband = model["addressing"]["mode"] == "infiniband"
    for entry in rails:
        netdev = entry["interface"]
        device = device_of_netdev(facts, netdev) if netdev else None
        if device is None:
            problems.append("rail %d (%s): no RDMA device has this netdev" % (entry["rail"], netdev))
            continue
        dev = facts["devices"][device]
        port = _port_of(dev, netdev)
        hcas.append("%s:%d" % (device, port or 1))
        rail_devices[device] = (netdev, entry["rail"])
        if not infiniband:
            index = roce_v2_gid_index(facts, netdev, entry["ip"])
            if index is None:
                problems.append("rail %d (%s, %s): no RoCE v2 GID holds %s" % (entry["rail"], netdev, device,
                                                                               entry["ip"]))
            else:
                indexes.setdefault(index, []).append(entry["rail"])
    env = {"NCCL_SOCKET_IFNAME": "=" + socket_ifname, "NCCL_CROSS_NIC": str(cross_nic)}
    if hcas:
        env["NCCL_IB_HCA"] = "=" + ",".join(hcas)
        env["UCX_NET_DEVICES"] = ",".join(hcas)
    if len(indexes) == 1:
        env["NCCL_IB_GID_INDEX"] = str(list(indexes)[0])
    elif len(indexes) > 1:
        problems.append("the RoCE v2 GIDs of the rail addresses sit at different indexes (%s); NCCL takes one "
                        "NCCL_IB_GID_INDEX" % "; ".join("%d: rails %s" % (i, ", ".join(str(r) for r in rails_))
                                                        for i, rails_ in sorted(indexes.items())))
    qos = model.get("qos") or {}
    if not infiniband and qos.get("roce_tos") is not None:
        env["NCCL_IB_TC"] = str(qos["roce_tos"])
    if not infiniband and qos.get("roce_priority") is not None:
        env["NCCL_IB_SL"] = str(qos["roce_priority"])
    return {"env": env, "gpu_nic": gpu_nic_table(facts, rail_devices), "problems": problems}


def nccl_conf(settings):
    """``/etc/nccl.conf`` text (NCCL reads ``NAME=value`` lines from it) of :func:`nccl_settings`' result."""
    lines = [MARKER]
    lines.extend("%s=%s" % (name, value) for name, value in sorted(settings["env"].items())
                 if name.startswith("NCCL_"))
    for row in settings["gpu_nic"]:
        lines.append("# %s -> %s (%s, rail %d, %s)" % (row["gpu"], row["device"], row["netdev"], row["rail"],
                                                       row["relation"]))
    return "\n".join(lines) + "\n"
