# A recording stand-in for NVIDIA's mlnx_qos on the lab's veth NICs, which cannot do DCB.
# It keeps each NIC's QoS state in /run (lost at reboot, like a NIC's), prints it in the
# format of mlnx_qos (MLNX_OFED 4.2 docs: DCBX mode, trust state, dscp2prio, PFC rows, one
# block per tc) and logs every call with an id of the boot, so a test can tell what ran at boot.
# Only the options roce_qos uses are understood; anything else fails like a bad option.
import json
import os
import sys
import uuid

# MLNX_QOS_STANDIN_ROOT moves its files and the /sys it looks at (unit tests, without root).
ROOT = os.environ.get("MLNX_QOS_STANDIN_ROOT", "/")
STATE_DIR = os.path.join(ROOT, "run/mlnx_qos-standin")
LOG = os.path.join(ROOT, "var/log/mlnx_qos-standin.log")


def default_state():
    # ConnectX defaults: trust pcp, no PFC, DSCP d -> priority d // 8, priority 0 on tc 1 and
    # priority 1 on tc 0, every tc ETS at 12-13 %.
    return {"trust": "pcp", "pfc": [0] * 8, "dscp2prio": [d // 8 for d in range(64)],
            "prio_tc": [1, 0, 2, 3, 4, 5, 6, 7], "tsa": ["ets"] * 8, "tcbw": [12, 12, 12, 12, 13, 13, 13, 13]}


def fail(text):
    sys.stderr.write(text + "\n")
    sys.exit(1)


def main(argv):
    # A boot's id: made on the first call after a boot in /run, which every boot starts empty
    # (the kernel's boot_id would not do: a container shares its host's kernel).
    os.makedirs(STATE_DIR, exist_ok=True)
    marker = os.path.join(STATE_DIR, "boot-id")
    if not os.path.exists(marker):
        with open(marker, "w") as handle:
            handle.write(uuid.uuid4().hex)
    with open(marker) as handle:
        boot = handle.read().strip()
    os.makedirs(os.path.dirname(LOG), exist_ok=True)
    with open(LOG, "a") as handle:
        handle.write("%s %s\n" % (boot, " ".join(argv)))
    if len(argv) < 2 or argv[0] != "-i":
        fail("usage: mlnx_qos -i <interface> [options]")
    nic = argv[1]
    if not os.path.isdir(os.path.join(ROOT, "sys/class/net", nic)):
        fail("Interface %s does not exist" % nic)
    os.makedirs(STATE_DIR, exist_ok=True)
    path = os.path.join(STATE_DIR, nic + ".json")
    state = default_state()
    if os.path.exists(path):
        with open(path) as handle:
            state = json.load(handle)
    args = argv[2:]
    while args:
        opt, value = args[0], args[1] if len(args) > 1 else fail("option %s needs a value" % args[0])
        args = args[2:]
        if opt == "--trust":
            if value not in ("pcp", "dscp"):
                fail("bad trust %s" % value)
            state["trust"] = value
        elif opt in ("--pfc", "-f"):
            state["pfc"] = [int(v) for v in value.split(",")]
        elif opt == "--dscp2prio":
            action, dscp, prio = value.split(",")
            if action != "set":
                fail("bad dscp2prio action %s" % action)
            state["dscp2prio"][int(dscp)] = int(prio)
        elif opt in ("--tsa", "-s"):
            state["tsa"] = value.split(",")
        elif opt in ("--tcbw", "-t"):
            state["tcbw"] = [int(v) for v in value.split(",")]
            if sum(b for b, t in zip(state["tcbw"], state["tsa"]) if t == "ets") != 100:
                fail("Bandwidth of ETS traffic classes must sum to 100")
        else:
            fail("unknown option %s" % opt)
    with open(path, "w") as handle:
        json.dump(state, handle)
    out = ["DCBX mode: OS controlled", "Priority trust state: %s" % state["trust"], "dscp2prio mapping:"]
    for prio in range(8):
        dscps = [d for d in range(63, -1, -1) if state["dscp2prio"][d] == prio]
        out.append("\tprio:%d dscp:%s" % (prio, "".join("%02d," % d for d in dscps)))
    out += ["Cable len: 7", "PFC configuration:",
            "\tpriority    " + "".join("%-4d" % p for p in range(8)),
            "\tenabled     " + "".join("%-4d" % v for v in state["pfc"]), ""]
    for tc in range(8):
        line = "tc: %d ratelimit: unlimited, tsa: %s" % (tc, state["tsa"][tc])
        if state["tsa"][tc] == "ets":
            line += ", bw: %d%%" % state["tcbw"][tc]
        out.append(line)
        for prio in range(8):
            if state["prio_tc"][prio] == tc:
                out.append("\t priority:  %d" % prio)
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])
