"""Record the InfiniBand test data (tests/unit/plugins/module_utils/data/ib/) from the simulated subnet of
``ib_lab.py``: ibnetdiscover, iblinkinfo and smpquery pkeys as the real infiniband-diags print them, OpenSM's log
lines about a bad partitions.conf. Run as root: ``python3 tests/lab/record_ib.py [OUTDIR]``."""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ib_lab  # noqa: E402
import ib_plans  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "unit", "plugins", "module_utils", "data", "ib")

from ansible_collections.ainet.fabric.plugins.module_utils.cabling.ib_parse import parse_ibnetdiscover  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.ib import opensm  # noqa: E402


def _write(outdir, name, text):
    with open(os.path.join(outdir, name), "w") as handle:
        handle.write(text)


def main(outdir=OUT):
    os.makedirs(outdir, exist_ok=True)
    plan = ib_plans.lab_plan()
    for case, kwargs in (("good", {}), ("swapped", {"swap": ("gpu02", 1, 2)}), ("dropped", {"drop": [("gpu03", 2)]})):
        lab = ib_lab.start(ib_lab.net_file(plan, **kwargs))
        try:
            topo_text = None
            if case == "good":
                topo_text = lab.tool("ibnetdiscover")
                topo = parse_ibnetdiscover(topo_text)
                guids = ib_plans.port_guids(plan, topo)
                conf = opensm.partitions_text(plan, ib_plans.PARTITIONS, guids)
                _write(outdir, "partitions.conf", conf)
                lab.opensm(conf)
                topo_text = lab.tool("ibnetdiscover")
                topo = parse_ibnetdiscover(topo_text)
                lid = next(n["lid"] for n in topo["nodes"].values() if n["description"] == "gpu01 mlx5_0")
                _write(outdir, "smpquery-pkeys-gpu01-mlx5_0.txt", lab.tool("smpquery", "pkeys", str(lid)))
                _write(outdir, "iblinkinfo-good.txt", lab.tool("iblinkinfo"))
                lab.stop_opensm()
                lab.opensm(conf.replace("compute=0x0101, ipoib, mtu=5 :", "compute=0x0101, ipoib, mtu=5"))
                _write(outdir, "opensm-parse-error.log", "".join(
                    line + "\n" for line in lab.log("opensm.log").splitlines() if "parse_part_conf" in line
                    or "osm_prtn_make_partitions" in line))
            else:
                lab.opensm()
            _write(outdir, "ibnetdiscover-%s.txt" % case, topo_text or lab.tool("ibnetdiscover"))
        finally:
            lab.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
