"""InfiniBand on a simulated subnet with the real tools: ibsim (tests/lab/ib_lab.py) built from a rail plan, the real
OpenSM given the partitions.conf that ib/opensm.py renders, and infiniband-diags read back by the library.

Done when: the plan's cabling agrees, one swapped cable is named exactly, a removed link is named, and the PKeys
OpenSM programs into the ports are the model's (a wrong PKey and a file OpenSM refuses are each caught)."""

from __future__ import annotations

import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))

import ib_lab  # noqa: E402  pylint: disable=wrong-import-position
import ib_plans  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.ainet.fabric.plugins.module_utils.cabling.ib_cabling import check_ib_cabling  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.cabling.ib_parse import (  # noqa: E402
    parse_ibnetdiscover, parse_smpquery_pkeys)
from ansible_collections.ainet.fabric.plugins.module_utils.ib import opensm  # noqa: E402
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import rail_plan  # noqa: E402

# As root missing packages fail (tests/system-deps.sh installs them), they never skip.
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the InfiniBand lab needs root for its network namespace")


@pytest.fixture(name="plan", scope="module")
def plan_fixture():
    assert not ib_lab.missing_programs(), "missing %s: run tests/system-deps.sh" % ib_lab.missing_programs()
    return ib_plans.lab_plan()


def _lab(plan, **faults):
    return ib_lab.start(ib_lab.net_file(plan, **faults), prefix=os.environ.get("AINET_LAB_PREFIX"))


def _pkey_tables(lab, topo, guids):
    """``{port guid: [pkey, ...]}`` read with smpquery from each member port (by its LID)."""
    lids = {}
    for node in topo["nodes"].values():
        for pguid in (node.get("port_guids") or {}).values():
            lids[pguid] = node["lid"]
    return dict((g, parse_smpquery_pkeys(lab.tool("smpquery", "pkeys", str(lids[g])))["pkeys"])
                for g in guids if g in lids)


def _sm_port(lab):
    """The SM's port GUID as sminfo prints it (``sminfo: sm lid 1 sm guid 0x..., ...``): the one full member of
    the default partition."""
    match = re.search(r"sm guid (0x[0-9a-fA-F]+)", lab.tool("sminfo"))
    assert match, "sminfo printed no SM GUID"
    return match.group(1)


def test_cabling_and_partitions_on_the_simulated_subnet(plan):
    lab = _lab(plan)
    try:
        before = parse_ibnetdiscover(lab.tool("ibnetdiscover"))
        result = check_ib_cabling(plan, before)
        assert result["findings"] == [] and result["summary"]["ok"] == 8
        guids = ib_plans.port_guids(plan, before)
        conf = opensm.partitions_text(plan, ib_plans.PARTITIONS, guids)
        log = lab.opensm(conf)
        assert "PARSE ERROR" not in log
        topo = parse_ibnetdiscover(lab.tool("ibnetdiscover"))
        desired = opensm.desired_pkeys(plan, ib_plans.PARTITIONS, guids, sm_port_guid=_sm_port(lab))
        served = _pkey_tables(lab, topo, desired)
        assert len(served) == 8
        compared = opensm.compare_pkeys(desired, served)
        assert compared["findings"] == [] and compared["summary"]["ok"] == 8
        # The model changed (compute's PKey) but OpenSM still serves the old file: caught on every member.
        wrong = [dict(ib_plans.PARTITIONS[0], pkey="0x0103"), ib_plans.PARTITIONS[1]]
        stale = opensm.compare_pkeys(opensm.desired_pkeys(plan, wrong, guids), served)
        assert stale["summary"]["by_kind"] == {"missing_pkey": 8, "extra_pkey": 8}
        # A file OpenSM cannot parse: it says so, and falls back to its default partition only.
        lab.stop_opensm()
        log = lab.opensm(conf.replace("compute=0x0101, ipoib, mtu=5 :", "compute=0x0101, ipoib, mtu=5"))
        assert "PARSE ERROR" in log and "retrying with default config" in log
        fallback = opensm.compare_pkeys(desired, _pkey_tables(lab, topo, desired))
        assert fallback["summary"]["by_kind"].get("missing_pkey") == 12
    finally:
        lab.stop()
    assert not os.path.exists(lab.root)


def test_one_swapped_cable_is_named(plan):
    lab = _lab(plan, swap=("gpu03", 1, 2))
    try:
        lab.opensm()
        result = check_ib_cabling(plan, lab.tool("ibnetdiscover"))
    finally:
        lab.stop()
    assert result["summary"]["by_kind"] == {"swapped": 1}
    finding = result["findings"][0]
    assert (finding["host"], finding["rail"], finding["pair"]["rail"]) == ("gpu03", 1, 2)
    assert finding["seen"] == {"tor": "su2-r2", "port": "1"}


def test_a_removed_link_is_named(plan):
    lab = _lab(plan, drop=[("gpu02", 1)])
    try:
        lab.opensm()
        result = check_ib_cabling(plan, lab.tool("ibnetdiscover"))
    finally:
        lab.stop()
    assert result["summary"]["by_kind"] == {"missing": 1}
    assert (result["findings"][0]["host"], result["findings"][0]["rail"]) == ("gpu02", 1)


def test_partitions_from_the_model_served_and_reloaded(plan):
    """Issue 45, step 3: the partitions of the model (infiniband.partitions) rendered with the options, OpenSM
    started on them, the served PKey tables equal the model's; a file with one wrong PKey, given to the running
    OpenSM by SIGHUP (as the subnet_manager role reloads it), is caught on exactly that partition's members, and the
    right file, reloaded the same way, agrees again."""
    raw = ib_plans.lab_model()
    raw["infiniband"] = {"partitions": [
        {"name": "compute", "pkey": "0x0101", "membership": "full", "mtu": 5},
        {"name": "storage", "pkey": "0x0202", "hosts": ["gpu01", "gpu02"], "membership": "both", "ipoib": False}]}
    model_plan = rail_plan(raw, dict(ib_plans.HOSTS))
    lab = _lab(model_plan)
    try:
        topo = parse_ibnetdiscover(lab.tool("ibnetdiscover"))
        guids = ib_plans.port_guids(model_plan, topo)
        both = opensm.allow_both_pkeys(opensm.model_partitions(model_plan))
        conf = opensm.partitions_text(model_plan, None, guids)
        options = opensm.options_text(lab.path("partitions.conf"), both_pkeys=both)
        assert both and "allow_both_pkeys TRUE" in options
        log = lab.opensm(conf, options_text=options)
        assert "PARSE ERROR" not in log
        topo = parse_ibnetdiscover(lab.tool("ibnetdiscover"))
        desired = opensm.desired_pkeys(model_plan, None, guids, both_pkeys=both, sm_port_guid=_sm_port(lab))
        lids = opensm.member_lids(topo, desired)
        assert len(lids) == 8

        def served():
            return dict((g, parse_smpquery_pkeys(lab.tool("smpquery", "pkeys", str(lid)))["pkeys"])
                        for g, lid in lids.items())

        compared = opensm.compare_pkeys(desired, served())
        assert compared["findings"] == [] and compared["summary"]["ok"] == 8
        assert "0x0202" in served()[ib_plans.port_guids(model_plan, topo)["gpu01"][1]]
        # One wrong PKey in the file (storage 0x0203), reloaded: storage's 2 hosts x 2 rails are wrong, no other.
        lab.reload_opensm(conf.replace("storage=0x0202", "storage=0x0203"))
        wrong = opensm.compare_pkeys(desired, served())
        assert sorted({(f["host"], f["rail"]) for f in wrong["findings"]}) == [
            ("gpu01", 1), ("gpu01", 2), ("gpu02", 1), ("gpu02", 2)]
        assert {f["kind"] for f in wrong["findings"]} == {"missing_pkey", "extra_pkey"}
        lab.reload_opensm(conf)
        assert opensm.compare_pkeys(desired, served())["summary"]["ok"] == 8
    finally:
        lab.stop()
    assert not os.path.exists(lab.root)


def test_subnet_manager_role_on_the_simulated_subnet(plan, tmp_path):
    """The role itself on the lab (ansible-playbook in the lab's namespace, umad2sim preloaded): the files written,
    OpenSM given SIGHUP through a pid file, the served tables agree; the second run changes nothing; a foreign
    file at the path fails before any change."""
    import subprocess  # pylint: disable=import-outside-toplevel
    import yaml  # pylint: disable=import-outside-toplevel
    raw = ib_plans.lab_model()
    raw["infiniband"] = {"partitions": [{"name": "compute", "pkey": "0x0101", "mtu": 5},
                                        {"name": "storage", "pkey": "0x0202", "hosts": ["gpu01", "gpu02"],
                                         "membership": "limited", "ipoib": False}]}
    lab = _lab(ib_plans.lab_plan())
    try:
        # OpenSM reads its partitions from the file the role owns (-P, as partition_config_file points it there).
        lab.opensm("Default=0x7fff, ipoib : ALL=limited, SELF=full ;\n")
        with open(lab.path("opensm.pid"), "w") as handle:
            handle.write("%d\n" % lab.procs["opensm"].pid)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        inv = tmp_path / "hosts.yml"
        inv.write_text(yaml.safe_dump({"all": {"vars": {"fabric_cluster": raw}, "children": {
            "gpu_nodes": {"hosts": dict((h, {"fabric_node_id": n}) for h, n in ib_plans.HOSTS.items())},
            "sm": {"hosts": {"smhost": {"ansible_connection": "local",
                                        "ansible_python_interpreter": sys.executable}}}}}}))
        play = tmp_path / "sm.yml"
        play.write_text(yaml.safe_dump([{"hosts": "sm", "gather_facts": False, "roles": [{
            "role": "ainet.fabric.subnet_manager",
            "vars": {"subnet_manager_partitions_file": lab.path("partitions.conf"),
                     "subnet_manager_options_file": lab.path("sm-options.conf"),
                     "subnet_manager_reload": "pidfile", "subnet_manager_pid_file": lab.path("opensm.pid"),
                     "subnet_manager_settle": 5}}]}]))
        env = dict(lab.env(), ANSIBLE_CONFIG=os.path.join(root, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                   PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))

        def run(*extra):
            argv = ["ip", "netns", "exec", lab.ns, os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
                    "-i", str(inv), str(play)] + list(extra)
            return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)

        with open(lab.path("partitions.conf"), "w") as handle:
            handle.write("# someone else's\n")
        foreign = run()
        assert foreign.returncode != 0 and "without the line" in foreign.stdout, foreign.stdout[-3000:]
        with open(lab.path("partitions.conf")) as handle:
            assert handle.read() == "# someone else's\n"
        os.unlink(lab.path("partitions.conf"))
        check = run("--check", "--diff")
        assert check.returncode == 0 and "changed=2" in check.stdout, check.stdout[-3000:]
        assert "compute=0x0101, ipoib, mtu=5 :" in check.stdout and not os.path.exists(lab.path("partitions.conf"))
        first = run()
        assert first.returncode == 0, first.stdout[-4000:]
        assert "changed=3" in first.stdout, first.stdout[-2000:]   # two files and the SIGHUP
        second = run()
        assert second.returncode == 0 and "changed=0" in second.stdout, second.stdout[-2000:]
        assert oct(os.stat(lab.path("partitions.conf")).st_mode & 0o777) == "0o644"
    finally:
        lab.stop()
