# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``roce_qos`` does to one rail NIC: the actions that bring its lossless settings to the NIC's
flat desired settings, and the boot unit that re-applies them.

The **settings** of one NIC come from its fabric's resolved lossless profile, derived on the
controller (:mod:`desired.roce_qos`); the module receives them as its ``nics`` option, in the
:mod:`qos_facts` vocabulary::

    {"name": "ens1f0np0", "trust": "dscp", "pfc": [3], "dscp_to_priority": {26: 3, 48: 6},
     "ecn_rp": [3], "ecn_np": [3], "cnp_dscp": 48, "cnp_priority": 6, "roce_tos": 106,
     "ets": {"tsa": ["ets", .., "strict", "ets"], "bw": [50, 0, 0, 50, 0, 0, 0, 0]} | None}

Pure functions from (settings, current settings in the :mod:`qos_facts` vocabulary, NIC, tool)
to a list of **actions**, each a dict::

    {"argv": ["mlnx_qos", "-i", "ens1f0np0", "--trust", "dscp"], "what": "trust DSCP"}
    {"path": "/sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp", "value": "48", "what": "CNP DSCP 48"}
    {"mkdir": "/sys/kernel/config/rdma_cm/mlx5_0", "what": "rdma_cm configfs entry of mlx5_0"}

:func:`nic_actions` with the current settings returns only what differs (empty when the NIC
already agrees); with ``current=None`` it returns every action, which is what the boot unit
runs (:func:`boot_unit`). The tools: ``mlnx_qos`` (NVIDIA NICs, from DOCA-OFED / mlnx-tools)
and iproute2 ``dcb`` (any NIC whose driver speaks DCB netlink). The DCQCN/CNP files exist on
mlx5 NICs only; ``caps`` says what the NIC has, and what it lacks is skipped with a warning.

What is set (and nothing else):

* trust DSCP;
* PFC on exactly the ``pfc`` priorities (all others off);
* DSCP -> priority for the entries of ``dscp_to_priority`` (the RoCE DSCP and the CNP DSCP;
  other DSCPs are left as they are);
* ETS, when ``ets`` is given: each traffic class strict or ETS with its bandwidth share
  (priority n on traffic class n untouched);
* DCQCN reaction and notification point on for the ``ecn_rp`` / ``ecn_np`` priorities (others left);
* the CNP DSCP and 802.1p priority;
* the RoCE ToS: ``tc/1/traffic_class`` and the rdma_cm ``default_roce_tos`` (what
  ``cma_roce_tos`` writes).
"""

from __future__ import annotations

import re

from ansible_collections.ainet.fabric.plugins.module_utils.common import linux_names
from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.host import boot_unit as units
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_facts import lookup, sorted_ints

ROLE = "roce_qos"
TOOLS = ("mlnx_qos", "dcb")
UNIT_NAME = "ainet-roce-qos.service"
UNIT_PATH = "etc/systemd/system/" + UNIT_NAME
NIC_WAIT = 60
TSA = ("ets", "strict")
# Exec lines of another tool's unit that set NIC QoS (boot_unit.foreign_units needles)
FOREIGN = (re.compile(r"\b(mlnx_qos|dcb\s+(pfc|ets|app|apptrust)|cma_roce_tos)\b|/traffic_class\b|roce_np/cnp_dscp"),)
# An RDMA device name as sysfs and the boot unit's shell line take it (IB_DEVICE_NAME_MAX 64, never a path)
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")


class QosError(FabricError):
    """A refusal or a failure: one line naming what is wrong."""


def _ints(value, where, low, high):
    values = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for item in values:
        if isinstance(item, bool) or not re.match(r"^ *[0-9]+ *\Z", str(item)) or not low <= int(item) <= high:
            raise QosError("%s: %r is not an integer in %d..%d" % (where, item, low, high))
        out.append(int(item))
    return out


def check_settings(nic, where="nics"):
    """One NIC's flat settings (the module's ``nics`` entry) checked and with integer keys and values;
    one error line naming the entry and the value otherwise."""
    name = nic.get("name")
    problem = linux_names.host_ifname_problem(name, "%s[].name" % where)
    if problem:
        raise QosError(problem)
    where = "%s[%s]" % (where, name)
    out = dict(nic)
    out["pfc"] = sorted(set(_ints(nic.get("pfc") or [], where + ".pfc", 0, 7)))
    out["ecn_rp"] = sorted(set(_ints(nic.get("ecn_rp") or [], where + ".ecn_rp", 0, 7)))
    out["ecn_np"] = sorted(set(_ints(nic.get("ecn_np") or [], where + ".ecn_np", 0, 7)))
    mapping = nic.get("dscp_to_priority") or {}
    if not isinstance(mapping, dict):
        raise QosError("%s.dscp_to_priority: %r is not a mapping of DSCP to priority" % (where, mapping))
    out["dscp_to_priority"] = dict(
        (_ints(d, where + ".dscp_to_priority", 0, 63)[0], _ints(p, "%s.dscp_to_priority.%s" % (where, d), 0, 7)[0])
        for d, p in mapping.items())
    for key, high in (("cnp_dscp", 63), ("cnp_priority", 7), ("roce_tos", 255)):
        out[key] = _ints(nic.get(key), "%s.%s" % (where, key), 0, high)[0]
    ets = nic.get("ets")
    if ets:
        tsa, bw = list(ets.get("tsa") or []), _ints(ets.get("bw") or [], where + ".ets.bw", 0, 100)
        if len(tsa) != 8 or len(bw) != 8 or any(t not in TSA for t in tsa):
            raise QosError("%s.ets: %r is not 8 traffic classes (tsa: ets or strict, bw: a share each)" % (where, ets))
        if sum(b for t, b in zip(tsa, bw) if t == "ets") != 100:
            raise QosError("%s.ets.bw: %r does not give the ETS classes 100 %% together" % (where, bw))
        out["ets"] = {"tsa": tsa, "bw": bw}
    else:
        out["ets"] = None
    out["trust"] = nic.get("trust") or "dscp"
    return out


def wanted(settings):
    """The NIC's settings as the :mod:`qos_facts` vocabulary compares them (what it reads back)."""
    return {
        "trust": settings.get("trust") or "dscp",
        "pfc": sorted(settings["pfc"]),
        "dscp_to_priority": dict((int(d), int(p)) for d, p in settings["dscp_to_priority"].items()),
        "ecn_rp": list(settings["ecn_rp"]),
        "ecn_np": list(settings["ecn_np"]),
        "cnp_dscp": int(settings["cnp_dscp"]),
        "cnp_priority": int(settings["cnp_priority"]),
        "roce_tos": int(settings["roce_tos"]),
        "traffic_class": int(settings["roce_tos"]),
    }


def _ets_agrees(current_ets, layout):
    if current_ets is None:
        return False
    tsa, bw = layout
    for tc in range(8):
        have = lookup(current_ets, tc) or {}
        if tsa[tc] == "strict":
            if have.get("mode") != "strict":
                return False
        elif have.get("mode") != "ets" or (have.get("weight") is not None and int(have["weight"]) != bw[tc]):
            return False
    return True


def nic_actions(settings, nic, tool, current=None, rdma_device=None, caps=None):
    """The actions that bring NIC ``nic`` to ``settings`` (its flat settings, see above); ``current`` None
    means all of them (the boot unit)."""
    if tool not in TOOLS:
        raise ValueError("tool %r: use one of %s" % (tool, ", ".join(TOOLS)))
    if linux_names.host_ifname_problem(nic, "nic") or (rdma_device and not _SAFE.fullmatch(rdma_device)):
        raise ValueError("interface %r / RDMA device %r: unexpected characters" % (nic, rdma_device))
    caps = caps or {}
    want = wanted(settings)
    cur = current or {}
    full = current is None
    out = []

    def tool_cmd(args, what):
        base = ["mlnx_qos", "-i", nic] if tool == "mlnx_qos" else ["dcb"]
        out.append({"argv": base + args, "what": what})

    if full or cur.get("trust") != "dscp":
        if tool == "mlnx_qos":
            tool_cmd(["--trust", "dscp"], "trust DSCP")
        else:
            tool_cmd(["apptrust", "set", "dev", nic, "order", "dscp"], "trust DSCP")
    pfc = want["pfc"]
    if full or sorted_ints(cur.get("pfc")) != pfc:
        if tool == "mlnx_qos":
            tool_cmd(["--pfc", ",".join("1" if p in pfc else "0" for p in range(8))],
                     "PFC on priorities %s only" % ",".join(str(p) for p in pfc))
        else:
            pfc_map = ["%d:%s" % (p, "on" if p in pfc else "off") for p in range(8)]
            tool_cmd(["pfc", "set", "dev", nic, "prio-pfc"] + pfc_map,
                     "PFC on priorities %s only" % ",".join(str(p) for p in pfc))
    for dscp, prio in sorted(want["dscp_to_priority"].items()):
        have = lookup(cur.get("dscp_to_priority"), dscp)
        if full or have is None or int(have) != prio:
            if tool == "mlnx_qos":
                tool_cmd(["--dscp2prio", "set,%d,%d" % (dscp, prio)], "DSCP %d -> priority %d" % (dscp, prio))
            else:
                tool_cmd(["app", "replace", "dev", nic, "dscp-prio", "%d:%d" % (dscp, prio)],
                         "DSCP %d -> priority %d" % (dscp, prio))
    ets = settings.get("ets")
    layout = (ets["tsa"], ets["bw"]) if ets else None
    if layout and (full or not _ets_agrees(cur.get("ets"), layout)):
        tsa, bw = layout
        what = "ETS: %s" % ", ".join("tc%d %s" % (tc, "strict" if tsa[tc] == "strict" else "%d%%" % bw[tc])
                                     for tc in range(8))
        if tool == "mlnx_qos":
            tool_cmd(["--tsa", ",".join(tsa), "--tcbw", ",".join(str(b) for b in bw)], what)
        else:
            tool_cmd(["ets", "set", "dev", nic, "tc-tsa"] + ["%d:%s" % (tc, tsa[tc]) for tc in range(8)]
                     + ["tc-bw"] + ["%d:%d" % (tc, bw[tc]) for tc in range(8)], what)
    if caps.get("ecn", True):
        ecn = "/sys/class/net/%s/ecn" % nic
        for point in ("rp", "np"):
            have = sorted_ints(cur.get("ecn_" + point)) or []
            for prio in want["ecn_" + point]:
                if full or prio not in have:
                    out.append({"path": "%s/roce_%s/enable/%d" % (ecn, point, prio), "value": "1",
                                "what": "DCQCN %s on priority %d" % ("reaction point" if point == "rp"
                                                                     else "notification point", prio)})
        for field, name in (("cnp_dscp", "cnp_dscp"), ("cnp_priority", "cnp_802p_prio")):
            if full or cur.get(field) is None or int(cur[field]) != want[field]:
                out.append({"path": "%s/roce_np/%s" % (ecn, name), "value": str(want[field]),
                            "what": "CNP %s %d" % ("DSCP" if field == "cnp_dscp" else "priority", want[field])})
    if rdma_device:
        tos = want["roce_tos"]
        if caps.get("traffic_class", True) and (full or cur.get("traffic_class") is None
                                                or int(cur["traffic_class"]) != tos):
            out.append({"path": "/sys/class/infiniband/%s/tc/1/traffic_class" % rdma_device, "value": str(tos),
                        "what": "traffic_class %d of %s" % (tos, rdma_device)})
        if caps.get("configfs", True) and (full or cur.get("roce_tos") is None or int(cur["roce_tos"]) != tos):
            base = "/sys/kernel/config/rdma_cm/%s" % rdma_device
            out.append({"mkdir": base, "what": "rdma_cm configfs entry of %s" % rdma_device})
            out.append({"path": base + "/ports/1/default_roce_tos", "value": str(tos),
                        "what": "RDMA-CM default RoCE ToS %d of %s" % (tos, rdma_device)})
    return out


def command_line(action):
    """One shell-free command line for ``action`` (for diffs, logs and the boot unit)."""
    if "argv" in action:
        return " ".join(action["argv"])
    if "mkdir" in action:
        return "mkdir -p %s" % action["mkdir"]
    return "echo %s > %s" % (action["value"], action["path"])


def boot_unit(nics, tool, tool_path, sh_path="/bin/sh", modprobe_path="/sbin/modprobe"):
    """The systemd unit that re-applies every action at boot, in order, after the NICs exist.

    ``nics``: [(interface, rdma device or None, actions)]; ``tool_path``: the absolute path of the
    tool on this host. Sysfs writes go through ``sh -c`` (a redirect); nothing else does."""
    after = ["network-pre.target", "openibd.service", "sys-kernel-config.mount"]
    execs = []
    if any(dev for _nic, dev, _a in nics):
        execs.append(("ExecStartPre", "-%s rdma_cm" % modprobe_path))
    for nic, _dev, _actions in nics:
        # Ordered after the NIC's device unit where udev provides one, and waiting for the NIC
        # itself (up to NIC_WAIT seconds) where it does not: a Requires= on a device unit that
        # never appears (no udev, a renamed NIC) would fail the whole unit after 90 s.
        after.append(units.device_unit(nic))
        execs.append(("ExecStartPre", "%s -c \"i=0; while [ ! -e /sys/class/net/%s ] && [ $i -lt %d ]; do "
                      "sleep 1; i=$((i+1)); done; [ -e /sys/class/net/%s ]\"" % (sh_path, nic, NIC_WAIT, nic)))
    for nic, _dev, actions in nics:
        for action in actions:
            if "argv" in action:
                argv = [tool_path] + action["argv"][1:]
                execs.append(("ExecStart", " ".join(argv)))
            elif "mkdir" in action:
                execs.append(("ExecStart", "%s -c \"mkdir -p %s\"" % (sh_path, action["mkdir"])))
            else:
                execs.append(("ExecStart", "%s -c \"echo %s > %s\"" % (sh_path, action["value"], action["path"])))
    return [
        ("Unit", [("Description", "ainet.fabric roce_qos: lossless RoCE settings of the rail NICs"),
                  ("Documentation", "https://github.com/ainet/ainet.fabric/tree/main/roles/roce_qos"),
                  ("After", " ".join(after)), ("Before", "network.target")]),
        ("Service", [("Type", "oneshot"), ("RemainAfterExit", True)] + execs),
        ("Install", [("WantedBy", "multi-user.target")]),
    ]
