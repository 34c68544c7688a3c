# -*- coding: utf-8 -*-
"""Stand-ins for NVIDIA's NIC tools, for the nic_firmware tests: ``mlxfwmanager``, ``flint``, ``mlxconfig``,
``mlxfwreset`` and ``setpci`` over a JSON file of cards (``STANDIN_FW``) and the test's sysfs tree (``STANDIN_SYS``).

They print the layouts of the recorded outputs in ``tests/unit/plugins/module_utils/data/nic_firmware`` and
``data/firmware/mlxfwreset`` (origins in their ORIGIN.md) and refuse what the real tools refuse, in their words
(Mellanox/mstflint@b9d9e844a14ae1c85cb90c76ccd4a56a0eccd599):

* ``flint -d <dev> -i <img> burn`` of an image of another PSID: ``PSID mismatch. Device PSID (<dev>) differs from
  image PSID (<img>).`` (``mlxfwops/lib/psid_utils.cpp``, ``PsidValidator::statusToString``, reached from
  ``FwOperations::CheckPSID`` in ``mlxfwops/lib/fw_ops.cpp`` unless ``-allow_psid_change``);
* ``mlxfwreset -l <n> reset`` at a level the card does not list as supported: ``Failed to send MFRL! reset-level
  <n> is not supported!`` (``small_utils/mlxfwresetlib/cmd_reg_mfrl.py``, ``CmdRegMfrl.send``);
* a reset of a device with VFs: the tool writes 0 to ``sriov_numvfs`` of functions .0 and .1 without asking
  (``small_utils/mlxfwresetlib/mlxfwreset_mlnxdriver.py``, ``MlnxDriverLinux.driver_stop``), and fails with
  ``Reset virtual functions failed! Please reset virtual functions manually and resume operation`` when the
  count does not go to 0; here a VF bound to ``vfio-pci`` (held by a VM) keeps it from going to 0;
* ``flint -i <file> q`` of a file that is no image: ``-E- Failed to query image: <file>. No valid image found``
  (recorded with Debian's mstflint 4.21, ``data/nic_firmware/mstflint-4.21-image-query-not-an-image.txt``);
* ``mlxconfig set`` of a parameter the card does not have: ``-E- The Device doesn't support <NAME> parameter``.

``mlxconfig [-e] query`` prints rows as ``mlxconfig/mlxcfg_ui.cpp`` ``printSingleParam`` does (``*`` when the next
value differs, ``RO`` for a read-only row, a fourth state entry ``"RO"``); an array (rows ``NAME[i]``, its
placeholder ``NAME`` holding ``Array[lo..hi]``) shows as its ``Array[lo..hi]`` row, and ``query NAME[lo..hi]``
prints the element rows (the operator's ``pkg/nvconfig/utils.go`` ``queryMLXConfig`` asks so).

An image file is a stand-in too: its first line is ``STANDIN-IMAGE <PSID> <version>``. What a real NIC does is not
proven here (no ConnectX in the test machines): the commands, the order, the refusals and the read-back are.
"""

from __future__ import annotations

import os
import sys

HEAD = "#!%s\nimport json, os, sys\n" % sys.executable
COMMON = r'''
state_file = os.environ["STANDIN_FW"]
fw = json.load(open(state_file))
with open(os.environ["STANDIN_LOG"], "a") as h:
    h.write(os.path.basename(sys.argv[0]) + " " + " ".join(sys.argv[1:]) + "\n")
args = sys.argv[1:]
def slot_of(dev):
    slot = dev.rsplit(".", 1)[0]
    if slot not in fw:
        sys.stderr.write("-E- Failed to open device: %s. No such file or directory\n" % dev)
        sys.exit(1)
    return slot
def save():
    json.dump(fw, open(state_file, "w"))
def image(path):
    first = open(path).readline().split()
    if first[:1] != ["STANDIN-IMAGE"]:
        sys.stderr.write("-E- Failed to query image: %s. No valid image found\n" % path)
        sys.exit(1)
    return first[1], first[2]
'''

MLXFWMANAGER = COMMON + r'''
if args != ["--query"]:
    sys.exit(255)
print("Querying Mellanox devices firmware ...\n")
for n, slot in enumerate(sorted(fw), 1):
    c = fw[slot]
    print("Device #%d:\n----------\n" % n)
    print("  Device Type:      %s\n  Part Number:      %s\n  Description:      %s" % (c["type"], c["part"], c["type"]))
    print("  PSID:             %s\n  PCI Device Name:  %s.0" % (c["psid"], slot))
    print("  Base GUID:        1c34da030073458a\n  Base MAC:         1c34da73458a")
    print("  Versions:         Current        Available")
    print("     FW             %-15sN/A" % c["fw"])
    if c["fw_running"] != c["fw"]:
        print("     FW (Running)   %-15sN/A" % c["fw_running"])
    print("     PXE            3.7.0102       N/A\n\n  Status:           No matching image found\n")
'''

FLINT = COMMON + r'''
if "-i" in args and args[-1] == "q":
    psid, version = image(args[args.index("-i") + 1])
    print("Image type:            FS4\nFW Version:            %s\nProduct Version:       %s" % (version, version))
    print("Base GUID:             N/A                     4294967295\nPSID:                  %s" % psid)
    sys.exit(0)
slot = slot_of(args[args.index("-d") + 1])
c = fw[slot]
if args[-1] == "q":
    print("Image type:            FS4\nFW Version:            %s" % c["fw"])
    if c["fw_running"] != c["fw"]:
        print("FW Version(Running):   %s" % c["fw_running"])
    print("Product Version:       %s\nPSID:                  %s" % (c["fw"], c["psid"]))
    sys.exit(0)
if args[-1] == "burn":
    psid, version = image(args[args.index("-i") + 1])
    if psid != c["psid"] and "-allow_psid_change" not in args:
        sys.stderr.write("-E- Burning FS4 image failed: PSID mismatch. Device PSID (%s) differs from image PSID "
                         "(%s).\n" % (c["psid"], psid))
        sys.exit(1)
    c["fw"] = version
    save()
    print("    Current FW version on flash:  %s\n    New FW version:               %s\n\nBurning FW image... OK"
          % (c["fw_running"], version))
    sys.exit(0)
sys.exit(255)
'''

MLXCONFIG = COMMON + r'''
import re
dev = args[args.index("-d") + 1]
slot = slot_of(dev)
nv = fw[slot]["nv"][dev]
query = [a for a in ("query", "q") if a in args]
if query:
    names = args[args.index(query[0]) + 1:]
    rows = sorted(n for n in nv if "[" not in n)
    if names:
        rows = []
        for name in names:
            m = re.match(r"^(\w+)\[(\d+)\.\.(\d+)\]$", name)
            rows += ["%s[%d]" % (m.group(1), i) for i in range(int(m.group(2)), int(m.group(3)) + 1)] if m else [name]
    print("\nDevice #1:\n----------\n\nDevice type:        %s\nDevice:             %s\n" % (fw[slot]["type"], dev))
    print("Configurations:                                          Default             Current             Next Boot")
    for name in rows:
        d, cur, nxt = nv[name][:3]
        ro = "RO" if nv[name][3:] == ["RO"] else "  "
        print("%s%s     %-48s%-20s%-20s%s" % ("*" if cur != nxt else " ", ro, name, d, cur, nxt))
    print("The '*' shows parameters with next value different from default/current value.")
    sys.exit(0)
if "set" in args:
    pairs = [a.split("=", 1) for a in args[args.index("set") + 1:]]
    for name, value in pairs:
        if name not in nv or nv[name][2].startswith("Array"):
            sys.stderr.write("-E- The Device doesn't support %s parameter\n" % name)
            sys.exit(1)
    for name, value in pairs:
        value = str(int(value, 16)) if value[:2] in ("0x", "0X") else value  # takes hex, prints decimal
        old = nv[name][2]
        nv[name][2] = old.split("(")[0] + "(" + value + ")" if "(" in old else value
    save()
    print("Apply new Configuration? (y/n) [n] : y\nApplying... Done!\n-I- Please reboot machine to load new "
          "configurations.")
    sys.exit(0)
sys.exit(255)
'''

MLXFWRESET = COMMON + r'''
slot = slot_of(args[args.index("-d") + 1])
c = fw[slot]
names = {0: 'Driver, PCI link, network link will remain up ("live-Patch")',
         1: 'Only ARM side will not remain up ("Immediate reset").', 3: "Driver restart and PCI reset",
         4: "Warm Reboot"}
if args[-1] == "q":
    print("Reset-levels:")
    for level in (0, 1, 3, 4):
        ok = level in c["levels"]
        print("{0}: {1:<62}-{2:<14}{3}".format(level, names[level], "Supported" if ok else "Not Supported",
                                               "(default)" if ok and level == min(c["levels"]) else ""))
    sys.exit(0)
if args[-1] != "reset" or "-l" not in args:
    sys.exit(255)
level = int(args[args.index("-l") + 1])
if level not in c["levels"]:
    sys.stderr.write("-E- Failed to send MFRL! reset-level %d is not supported!\n" % level)
    sys.exit(1)
sysroot = os.environ["STANDIN_SYS"]
for pf in (0, 1):
    base = os.path.join(sysroot, "sys/bus/pci/devices/%s.%d" % (slot, pf))
    numvfs = os.path.join(base, "sriov_numvfs")
    if os.path.exists(numvfs) and open(numvfs).read().strip() not in ("", "0"):
        held = [v for v in os.listdir(base) if v.startswith("virtfn") and os.path.exists(os.path.join(base, v, "driver"))
                and os.path.basename(os.path.realpath(os.path.join(base, v, "driver"))) == "vfio-pci"]
        if held:
            sys.stderr.write("-E- Reset virtual functions failed! Please reset virtual functions manually and resume "
                             "operation\n")
            sys.exit(1)
        open(numvfs, "w").write("0\n")
c["fw_running"] = c["fw"]
for nv in c["nv"].values():
    for row in nv.values():
        row[1] = row[2]
save()
print("-I- Resetting Firmware... Done")
'''

SETPCI = COMMON + r'''
slot = slot_of(args[args.index("-s") + 1])
reg = args[-1]
if reg == "CAP_EXP+08.w":
    print("%04x" % fw[slot]["devctl"])
    sys.exit(0)
value, mask = reg.split("=", 1)[1].split(":")
fw[slot]["devctl"] = (fw[slot]["devctl"] & ~int(mask, 16)) | (int(value, 16) & int(mask, 16))
save()
'''

TOOLS = {"mlxfwmanager": MLXFWMANAGER, "flint": FLINT, "mlxconfig": MLXCONFIG, "mlxfwreset": MLXFWRESET,
         "setpci": SETPCI}


def install(bin_dir, names=None):
    """Write the stand-ins (all, or ``names``) into ``bin_dir``."""
    for name in names or sorted(TOOLS):
        path = os.path.join(str(bin_dir), name)
        with open(path, "w") as handle:
            handle.write(HEAD + TOOLS[name])
        os.chmod(path, 0o755)


def write_image(path, psid, version):
    with open(str(path), "w") as handle:
        handle.write("STANDIN-IMAGE %s %s\n%s\n" % (psid, version, "x" * 64))
