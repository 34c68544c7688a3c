"""roce_qos at the command level: for a current NIC state, the exact commands, none when it agrees."""

from ansible_collections.ainet.fabric.plugins.module_utils.common.file_formats import unit_dump
from ansible_collections.ainet.fabric.plugins.module_utils.model.qos_profile import resolve_profile
from ansible_collections.ainet.fabric.plugins.module_utils.host.roce_qos_state import boot_unit, command_line
from ansible_collections.ainet.fabric.plugins.module_utils.host.roce_qos_state import nic_actions as state_actions
from ansible_collections.ainet.fabric.plugins.module_utils.desired.roce_qos import ets_layout, nic_settings

NVIDIA = resolve_profile({}, "q")
SPIDER = resolve_profile({"preset": "spiderpool"}, "q")
# A ConnectX NIC as it comes: trust pcp, no PFC, mlnx_qos default DSCP map, 8 ETS classes of 12-13 %,
# DCQCN on for every priority, CNP DSCP 48 on priority 6, ToS 0.
FRESH = {"trust": "pcp", "pfc": [], "dscp_to_priority": {d: d // 8 for d in range(64)},
         "ets": {tc: {"mode": "ets", "weight": 12 if tc < 4 else 13} for tc in range(8)},
         "ecn_rp": list(range(8)), "ecn_np": list(range(8)), "cnp_dscp": 48, "cnp_priority": 6,
         "roce_tos": 0, "traffic_class": 0}
DONE = dict(FRESH, trust="dscp", pfc=[3],
            ets={0: {"mode": "ets", "weight": 50}, 3: {"mode": "ets", "weight": 50}, 6: {"mode": "strict"},
                 **{tc: {"mode": "ets", "weight": 0} for tc in (1, 2, 4, 5, 7)}},
            roce_tos=106, traffic_class=106)


def nic_actions(profile, *args, **kwargs):
    """The host's actions for the NIC settings the controller derives from ``profile`` (desired.roce_qos)."""
    return state_actions(nic_settings(profile), *args, **kwargs)


def lines(actions):
    return [command_line(a) for a in actions]


def test_fresh_connectx_gets_exactly_these_mlnx_qos_commands():
    assert lines(nic_actions(NVIDIA, "ens1f0np0", "mlnx_qos", FRESH, "mlx5_0")) == [
        "mlnx_qos -i ens1f0np0 --trust dscp",
        "mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0",
        "mlnx_qos -i ens1f0np0 --tsa ets,ets,ets,ets,ets,ets,strict,ets --tcbw 50,0,0,50,0,0,0,0",
        "echo 106 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class",
        "mkdir -p /sys/kernel/config/rdma_cm/mlx5_0",
        "echo 106 > /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos",
    ]


def test_a_nic_that_agrees_gets_no_command():
    assert nic_actions(NVIDIA, "ens1f0np0", "mlnx_qos", DONE, "mlx5_0") == []
    assert nic_actions(NVIDIA, "ens1f0np0", "dcb", DONE, "mlx5_0") == []


def test_dcb_commands_for_a_spiderpool_profile():
    current = dict(FRESH, ecn_rp=[], ecn_np=[3], cnp_dscp=46, dscp_to_priority={})
    assert lines(nic_actions(SPIDER, "eth2", "dcb", current, None)) == [
        "dcb apptrust set dev eth2 order dscp",
        "dcb pfc set dev eth2 prio-pfc 0:off 1:off 2:off 3:off 4:off 5:on 6:off 7:off",
        "dcb app replace dev eth2 dscp-prio 40:5",
        "dcb app replace dev eth2 dscp-prio 48:6",
        "echo 1 > /sys/class/net/eth2/ecn/roce_rp/enable/5",
        "echo 1 > /sys/class/net/eth2/ecn/roce_np/enable/5",
        "echo 48 > /sys/class/net/eth2/ecn/roce_np/cnp_dscp",
    ]


def test_what_the_nic_lacks_is_skipped():
    actions = nic_actions(NVIDIA, "eth2", "dcb", None, "mlx5_0", {"ecn": False, "traffic_class": False,
                                                                  "configfs": False})
    assert not any("path" in a for a in actions)


def test_ets_left_alone_without_weights_or_strict_cnp():
    assert ets_layout(SPIDER) is None
    tsa, bw = ets_layout(dict(SPIDER, cnp_strict=True))
    assert tsa[6] == "strict" and sum(bw) == 100 and bw[6] == 0


def test_boot_unit_runs_every_command_after_the_nic():
    actions = nic_actions(NVIDIA, "ens1f0np0", "mlnx_qos", None, "mlx5_0")
    text = unit_dump(boot_unit([("ens1f0np0", "mlx5_0", actions)], "mlnx_qos", "/usr/sbin/mlnx_qos"))
    assert 'ExecStartPre=/bin/sh -c "i=0; while [ ! -e /sys/class/net/ens1f0np0 ] && [ $i -lt 60 ]; do sleep 1; ' \
           'i=$((i+1)); done; [ -e /sys/class/net/ens1f0np0 ]"' in text
    assert "After=network-pre.target openibd.service sys-kernel-config.mount " \
           "sys-subsystem-net-devices-ens1f0np0.device" in text
    assert "ExecStart=/usr/sbin/mlnx_qos -i ens1f0np0 --dscp2prio set,26,3" in text
    assert 'ExecStart=/bin/sh -c "echo 6 > /sys/class/net/ens1f0np0/ecn/roce_np/cnp_802p_prio"' in text
    assert "ExecStartPre=-/sbin/modprobe rdma_cm" in text
    assert text.count("ExecStart=") == len(actions)
