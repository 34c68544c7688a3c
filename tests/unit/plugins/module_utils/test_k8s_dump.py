# -*- coding: utf-8 -*-
"""The Kubernetes objects' files (plugin_utils/k8s_dump): libyaml's C emitter writes the same bytes as PyYAML's
pure-Python one, and both the same bytes as PyYAML's own representer path (``yaml.dump_all`` with a
``SafeDumper`` after a JSON round trip - how the files were written before), for every CNI and IPAM the model
allows; Ansible's tagged string subclasses and floats come out as their plain values."""

from __future__ import annotations

import json

import pytest
import yaml

from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_objects
from ansible_collections.ainet.fabric.plugins.plugin_utils import k8s_dump

from ansible_collections.ainet.fabric.tests.unit.plugins.module_utils.test_workload import (  # noqa: E402
    CASES, cluster, nodes_of, plan_of)


class _Dumper(yaml.SafeDumper):
    """The reference: PyYAML's representer and pure-Python emitter, multi-line strings as literal blocks."""


_Dumper.add_representer(str, lambda dumper, value: dumper.represent_scalar(
    "tag:yaml.org,2002:str", value, style="|" if "\n" in value else None))


def reference(kind, cluster_name, objects):
    objects = json.loads(json.dumps(objects))
    return k8s_dump.HEADER % (kind, cluster_name) + yaml.dump_all(
        objects, Dumper=_Dumper, sort_keys=False, explicit_start=True, default_flow_style=False, width=120)


def files(cni, mode, family, k8s, pure):
    plan = plan_of(cluster(cni, mode, family, **k8s), nodes=5 if nodes_of(k8s) > 1 else 1)
    name = plan["cluster"]["name"]
    return dict((path, k8s_dump.dump(items[0]["kind"], name, items, pure=pure))
                for path, items in k8s_objects.by_file(k8s_objects.render(plan)).items())


@pytest.mark.parametrize("cni,mode,family,k8s", CASES, ids=["-".join(str(x) for x in c[:3]) + str(c[3]) for c in CASES])
def test_the_c_emitter_writes_the_pure_pythons_bytes(cni, mode, family, k8s):
    if k8s_dump.C_DUMPER is None:
        pytest.skip("PyYAML was built without libyaml: only the pure-Python emitter runs")
    pure = files(cni, mode, family, k8s, pure=True)
    assert pure and files(cni, mode, family, k8s, pure=False) == pure


@pytest.mark.parametrize("cni,mode,family,k8s", CASES, ids=["-".join(str(x) for x in c[:3]) + str(c[3]) for c in CASES])
def test_the_events_are_the_representers(cni, mode, family, k8s):
    plan = plan_of(cluster(cni, mode, family, **k8s), nodes=5 if nodes_of(k8s) > 1 else 1)
    for path, items in k8s_objects.by_file(k8s_objects.render(plan)).items():
        expected = reference(items[0]["kind"], "c", items)
        assert k8s_dump.dump(items[0]["kind"], "c", items, pure=True) == expected, path
        assert k8s_dump.dump(items[0]["kind"], "c", items) == expected, path


class Tagged(str):
    """Like Ansible's tagged strings: a str subclass PyYAML's safe representer does not know."""


SCALARS = {"kind": "ConfigMap", "metadata": {"name": Tagged("a"), "labels": {"x": Tagged("true"), "y": "0x10"}},
           "data": {"config.json": Tagged('{\n  "a": 1\n}\n'), "n": 3, "on": True, "off": None, "f": 1.5,
                    "empty": [], "none": {}, "list": [Tagged("yes"), 1, [2, {"k": "v: w"}]], "t": (1, "2")},
           "long": "x " * 80}


@pytest.mark.parametrize("pure", [True, False])
def test_scalars_and_subclasses_read_back_as_written(pure):
    text = k8s_dump.dump("ConfigMap", "c", [SCALARS, SCALARS], pure=pure)
    assert text == reference("ConfigMap", "c", [SCALARS, SCALARS])
    assert "&id" not in text and "!!" not in text  # no anchors for the repeated object, no tags for subclasses
    assert list(yaml.safe_load_all(text)) == json.loads(json.dumps([SCALARS, SCALARS]))
