# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes objects' YAML files (``k8s_objects``' ``dest``), fast enough for 1,024 nodes x 8 rails.

One file per kind: :data:`HEADER`, then one block-style document per object (``---``), keys in the order the
renderer built them, multi-line strings (the device plugins' ``config.json``) as ``|`` literal blocks, width 120.

Speed, with the output unchanged (a test compares the bytes of both emitters, and of the representer's way):

* libyaml's C emitter (``yaml.CSafeDumper``) where PyYAML was built with it, else PyYAML's pure-Python one
  (``yaml.SafeDumper``): the same events either way, only the emitter differs.
* one pass: the emitter's events are made straight from the objects - what PyYAML's ``SafeRepresenter`` and
  ``Serializer`` would make for dicts, lists, strings, integers, booleans and None (anything else goes through the
  representer) - so no node tree is built, and Ansible's tagged ``str``/``dict``/``list`` subclasses need no JSON
  round trip (a deep copy) first.
* a scalar's event - with whether it reads back as its own tag (PyYAML's regex resolver, which the serializer
  asks twice per scalar) - is made once per value and style: 8,192 pools repeat the same keys and labels.

No anchors: PyYAML writes one (``&id001``) for an object it meets twice; every object here is written in full.
"""

from __future__ import annotations

import io

import yaml
from yaml.events import (
    DocumentEndEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent, ScalarEvent, SequenceEndEvent,
    SequenceStartEvent,
)
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from ansible_collections.ainet.fabric.plugins.module_utils.common.report_escape import one_line

HEADER = "# Managed by ainet.fabric (k8s_objects): %s of cluster %s, from the rail plan. Apply in file order.\n"

C_DUMPER = getattr(yaml, "CSafeDumper", None)
_STR, _INT, _BOOL, _NULL = ("tag:yaml.org,2002:" + t for t in ("str", "int", "bool", "null"))
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


class PureDumper(yaml.SafeDumper):
    """PyYAML's pure-Python emitter."""


class FastDumper(C_DUMPER or yaml.SafeDumper):
    """libyaml's C emitter where PyYAML has it (``C_DUMPER``), else the pure-Python one."""


def _events(dumper, cache):
    """``walk(data)``: emit the events of ``data`` as ``SafeRepresenter`` (``default_flow_style=False``, strings
    with a newline as literal blocks) and ``Serializer`` would."""
    emit, resolve = dumper.emit, dumper.resolve
    map_start = MappingStartEvent(None, _MAP, resolve(MappingNode, None, True) == _MAP, flow_style=False)
    seq_start = SequenceStartEvent(None, _SEQ, resolve(SequenceNode, None, True) == _SEQ, flow_style=False)
    map_end, seq_end = MappingEndEvent(), SequenceEndEvent()

    def scalar(tag, value, style=None):
        event = cache.get((tag, value, style))
        if event is None:
            implicit = (resolve(ScalarNode, value, (True, False)) == tag, resolve(ScalarNode, value, (False, True)) == tag)
            event = cache[tag, value, style] = ScalarEvent(None, tag, implicit, value, style=style)
        emit(event)

    def node(item):  # a node the representer made (a float, or what its rules say for other types)
        if isinstance(item, ScalarNode):
            scalar(item.tag, item.value, item.style)
        elif isinstance(item, SequenceNode):
            emit(SequenceStartEvent(None, item.tag, resolve(SequenceNode, item.value, True) == item.tag,
                                    flow_style=item.flow_style))
            for sub in item.value:
                node(sub)
            emit(seq_end)
        else:
            emit(MappingStartEvent(None, item.tag, resolve(MappingNode, item.value, True) == item.tag,
                                   flow_style=item.flow_style))
            for key, value in item.value:
                node(key)
                node(value)
            emit(map_end)

    def walk(data):
        if type(data) is str:  # noqa: E721 (the common case first; subclasses below) # pylint: disable=unidiomatic-typecheck
            scalar(_STR, data, "|" if "\n" in data else None)
        elif isinstance(data, str):
            scalar(_STR, str(data), "|" if "\n" in data else None)
        elif isinstance(data, dict):
            emit(map_start)
            for key, value in data.items():
                walk(key)
                walk(value)
            emit(map_end)
        elif isinstance(data, (list, tuple)):
            emit(seq_start)
            for item in data:
                walk(item)
            emit(seq_end)
        elif isinstance(data, bool):
            scalar(_BOOL, "true" if data else "false")
        elif isinstance(data, int):
            scalar(_INT, str(int(data)))
        elif data is None:
            scalar(_NULL, "null")
        else:
            node(dumper.represent_data(data))
    return walk


def dump(kind, cluster, objects, pure=False):
    """The file of ``objects`` (all of ``kind``): the header, then one document per object. ``pure``: PyYAML's
    pure-Python emitter (the reference the C emitter's output is tested against)."""
    stream = io.StringIO()
    dumper = (PureDumper if pure else FastDumper)(stream, default_flow_style=False, width=120, explicit_start=True,
                                                  sort_keys=False)
    walk = _events(dumper, {})
    try:
        dumper.open()
        for obj in objects:
            dumper.emit(DocumentStartEvent(explicit=True))
            walk(obj)
            dumper.emit(DocumentEndEvent(explicit=False))
        dumper.close()
    finally:
        dumper.dispose()
    # The header is a YAML comment: a line break in a name would end it and start YAML of its own.
    return HEADER % (one_line(kind), one_line(cluster)) + stream.getvalue()
