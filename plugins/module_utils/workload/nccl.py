# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL (and UCX) settings of a node, from its RDMA facts and the rail plan.

* ``NCCL_IB_HCA``: ``=`` and the RDMA devices of the fabric's rails with their ports, in rail order
  (``=mlx5_0:1,mlx5_1:1``; the ``=`` makes NCCL take exactly these names instead of every device whose name
  starts with one of them).
* ``NCCL_IB_GID_INDEX``: the index of the RoCE v2 GID that holds the rail address (IPv4 or IPv6) - the same on
  every rail, or the node is reported; not set on InfiniBand fabrics (NCCL uses the LID there), nor with
  ``addr_range`` (NCCL then picks each port's GID itself).
* ``NCCL_IB_ADDR_FAMILY`` / ``NCCL_IB_ADDR_RANGE`` (:func:`gid_selection_env`, NCCL >= 2.21): what NCCL's own GID
  choice looks for when ``NCCL_IB_GID_INDEX`` is unset - in pods, which get no index, and with ``addr_range``.
  NCCL (NVIDIA/nccl@5067397 ``src/transport/net_ib/connect.cc``, ``ncclIbGetGidIndex``/``ncclUpdateGidIndex``)
  starts at GID 0 and moves to a candidate only when it is of the wanted family (default ``AF_INET``: an IPv4-mapped
  GID), configured and not link-local, inside the range (when set), and of RoCE v2 (``NCCL_IB_ROCE_VERSION_NUM``,
  default 2). On an IPv6-only rail no GID is IPv4, so it keeps GID 0 - the ``fe80::`` RoCE v1 GID, which no ToR
  routes: an IPv6 fabric therefore gets ``AF_INET6``. A dual-stack NIC (IPv4 and IPv6 addresses on the rail)
  gets the family of the address the plan gives the rail - the fabric's - since NCCL takes only GIDs of the one
  family it is told (an IPv4 fabric leaves NCCL's default ``AF_INET``). ``NCCL_IB_ADDR_RANGE`` (with
  ``addr_range``) is the fabric's supernet, in the same family: a second address of that family on the NIC
  (SLAAC, a VIP) is then never taken, wherever the GID table puts it.
* ``NCCL_SOCKET_IFNAME``: ``=`` and the management interface (never a rail NIC: NCCL's bootstrap and socket
  traffic must not ride the lossless class).
* ``NCCL_IB_TC`` / ``NCCL_IB_SL``: the lossless profile's ToS (``roce_tos``: the DSCP shifted, with ECT) and
  RoCE priority, so NCCL's queue pairs land in the PFC class the hosts and the ToRs were given.
* ``NCCL_CROSS_NIC``: ``0`` by default - a ring or tree channel stays on one rail, as a rail-optimised fabric
  wants (NCCL's 2 lets it cross rails when that looks faster).
* ``UCX_NET_DEVICES``: the same devices and ports for UCX (``mlx5_0:1,mlx5_1:1``).
* the GPU -> NIC table from ``nvidia-smi topo -m``: each GPU's nearest rail NIC (``PIX`` before ``PXB``, ``PHB``,
  ``NODE``, ``SYS``), and a warning for each GPU whose nearest rail NIC is ``NODE`` or ``SYS`` away, or ``PHB`` on an
  x86 node (no PCIe switch shared: the path crosses the CPU, which NCCL counts as ``PATH_PHB`` or ``PATH_SYS``, both
  above its default ``NCCL_NET_GDR_LEVEL``, PXB - ``src/graph/paths.cc`` ``ncclTopoCheckGdr``, ``topo.cc``
  ``topoPathTypeStr`` - so it stages that GPU's traffic through host memory instead). ``PHB`` on Grace (aarch64) is
  left alone: the GPU reaches that NIC over C2C, NCCL's ``PATH_P2C``, within its level with ``NCCL_NET_GDR_C2C``.
"""

from __future__ import annotations

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.common.linux_names import rdma_device_problem
from ansible_collections.ainet.fabric.plugins.module_utils.model.model_schema import breaking_character
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import IFNAME_RE
from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_facts import device_of_netdev, roce_v2_gid_index

# nvidia-smi topo -m relations, nearest first (NV# links are GPU-GPU only).
NEARNESS = ("X", "PIX", "PXB", "PHB", "NODE", "SYS")
# What each far relation crosses (nvidia-smi topo -m's legend).
FAR = {"NODE": "the interconnect between PCIe host bridges within a NUMA node",
       "SYS": "the SMP interconnect between NUMA nodes (QPI/UPI)",
       "PHB": "the PCIe host bridge (the CPU's root complex)"}
# ``uname -m`` of the CPUs on which nvidia-smi's PHB is NCCL's PATH_PHB (on Grace, aarch64, it is C2C: PATH_P2C).
X86 = ("x86_64", "amd64", "i686", "i386")
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


def far_gpus(table, architecture=None):
    """One warning per row of :func:`gpu_nic_table` whose nearest rail NIC is ``NODE`` or ``SYS`` away, or ``PHB`` when
    ``architecture`` (``uname -m``) is x86 (unknown: ``PHB`` is not warned about)."""
    far = dict(FAR) if str(architecture or "").lower() in X86 else dict((k, v) for k, v in FAR.items() if k != "PHB")
    return ["%s: its nearest rail NIC %s (%s, rail %d) is %s away - across %s, no PCIe switch "
            "shared; GPUDirect RDMA would go through the CPU, and NCCL (NCCL_NET_GDR_LEVEL default PXB) stages "
            "this GPU's traffic through host memory instead. Fix: a rail NIC on this GPU's PCIe switch (PIX/PXB), "
            "or check the slots" % (row["gpu"], row["device"], row["netdev"], row["rail"], row["relation"],
                                    far[row["relation"]])
            for row in table if row["relation"] in far]


def gid_selection_env(model, addr_range=False):
    """The variables that steer NCCL's own GID choice (used where ``NCCL_IB_GID_INDEX`` is unset) on the fabric
    ``model`` (the cluster model's fabric: ``family``, ``addressing``): ``NCCL_IB_ADDR_FAMILY=AF_INET6`` on an IPv6
    fabric (NCCL's default, ``AF_INET``, keeps an IPv6 rail on GID 0), and with ``addr_range`` the fabric's supernet
    as ``NCCL_IB_ADDR_RANGE`` with its family spelled out. Nothing on InfiniBand (NCCL takes GID 0 or the routable
    FLID GID there, whatever these say)."""
    if model["addressing"]["mode"] == "infiniband":
        return {}
    env = {}
    if model["family"] == 6 or addr_range:
        env["NCCL_IB_ADDR_FAMILY"] = "AF_INET6" if model["family"] == 6 else "AF_INET"
    if addr_range:
        env["NCCL_IB_ADDR_RANGE"] = str(model["addressing"]["supernet"])
    return env


def nccl_settings(plan, host, facts, socket_ifname, fabric=None, cross_nic=0, addr_range=False, architecture=None):
    """``{"env": {NAME: value}, "gpu_nic": [...], "problems": [...], "warnings": [...]}`` of ``host``.

    ``plan``: the rail plan; ``facts``: the node's RDMA facts (``rdma_facts``); ``socket_ifname``: the management
    interface; ``fabric``: the fabric NCCL runs on (default: the first fabric of the cluster); ``addr_range``: leave
    ``NCCL_IB_GID_INDEX`` out and let NCCL pick each port's RoCE v2 GID inside the fabric's supernet (for GID
    indexes that differ between rails or nodes, or move). A rail whose NIC has no RDMA device or no RoCE v2 GID for
    its address is a problem (the env leaves it out); a management interface that is a rail NIC is an error; a GPU
    whose nearest rail NIC is ``NODE``/``SYS`` away, or ``PHB`` on an x86 ``architecture`` (``uname -m``), is a
    warning."""
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
    if socket_ifname and (not isinstance(socket_ifname, str) or not IFNAME_RE.match(socket_ifname)):
        raise FabricError("nccl_socket_ifname: %r is not a Linux interface name. Fix: name the management interface "
                          "(1-15 letters, digits, '_', '.' or '-')" % (socket_ifname,))
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
        # data read from the node, placed in NCCL_IB_HCA and UCX_NET_DEVICES (lists split on ',' and ':') and in
        # /etc/nccl.conf (one NAME=value a line): linux_names' rule for RDMA device names
        if rdma_device_problem(str(device), "device"):
            problems.append("rail %d (%s): the RDMA device name %r read from the node is not one NCCL can be given"
                            % (entry["rail"], netdev, device))
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
    if len(indexes) == 1 and not addr_range:
        env["NCCL_IB_GID_INDEX"] = str(list(indexes)[0])
    elif len(indexes) > 1 and not addr_range:  # with addr_range NCCL picks each port's GID: indexes may differ
        where = "; ".join("%d: rails %s" % (i, ", ".join(str(r) for r in rails_)) for i, rails_ in sorted(indexes.items()))
        problems.append("the RoCE v2 GIDs of the rail addresses sit at different indexes (%s); NCCL takes one "
                        "NCCL_IB_GID_INDEX. Fix: nccl_addr_range: true (NCCL >= 2.21 then picks each port's GID "
                        "in the fabric's supernet)" % where)
    env.update(gid_selection_env(model, addr_range))
    qos = model.get("qos") or {}
    if not infiniband and qos.get("roce_tos") is not None:
        env["NCCL_IB_TC"] = str(qos["roce_tos"])
    if not infiniband and qos.get("roce_priority") is not None:
        env["NCCL_IB_SL"] = str(qos["roce_priority"])
    table = gpu_nic_table(facts, rail_devices)
    return {"env": env, "gpu_nic": table, "problems": problems, "warnings": far_gpus(table, architecture)}


def nccl_conf(settings):
    """``/etc/nccl.conf`` text (NCCL reads ``NAME=value`` lines from it) of :func:`nccl_settings`' result. A value
    or a comment that would break its line (a name read from the node holding a line break) is refused: it would
    add a setting of its own (``NCCL_NET_PLUGIN`` loads a library)."""
    lines = [MARKER]
    lines.extend("%s=%s" % (name, value) for name, value in sorted(settings["env"].items())
                 if name.startswith("NCCL_"))
    for row in settings["gpu_nic"]:
        lines.append("# %s -> %s (%s, rail %d, %s)" % (row["gpu"], row["device"], row["netdev"], row["rail"],
                                                       row["relation"]))
    for line in lines:
        if breaking_character(line) is not None:
            raise FabricError("nccl: %r would not be one line of /etc/nccl.conf; a name read from the node holds a "
                              "line break or a control character. Fix: check the node's RDMA facts" % (line,))
    return "\n".join(lines) + "\n"
