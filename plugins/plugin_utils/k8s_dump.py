# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes objects' YAML files (``k8s_objects``' ``dest``), fast enough for 16,384 nodes x 8 rails.

One file per kind: :data:`HEADER`, then one block-style document per object (``---``), keys in the order the
renderer built them, multi-line strings (the device plugins' ``config.json``) as ``|`` literal blocks, width 120.

Speed, with the output unchanged (tests compare the bytes of every way below with PyYAML's own representer path):

* libyaml's C emitter (``yaml.CSafeDumper``) where PyYAML was built with it, else PyYAML's pure-Python one
  (``yaml.SafeDumper``): the same events either way, only the emitter differs.
* one pass: the emitter's events are made straight from the objects - what PyYAML's ``SafeRepresenter`` and
  ``Serializer`` would make for dicts, lists, strings, integers, booleans and None (anything else goes through the
  representer) - so no node tree is built, and Ansible's tagged ``str``/``dict``/``list`` subclasses need no JSON
  round trip (a deep copy) first.
* a scalar's event - with whether it reads back as its own tag (PyYAML's regex resolver, which the serializer
  asks twice per scalar) - is made once per value and style: 8,192 pools repeat the same keys and labels.
* one emitter run per shape (``workload/k8s_shapes``): the document of an object is its shape's document with the
  object's strings in the slots. A string goes into a slot only where the emitter writes it as it is, whatever
  column it starts at: a plain scalar (it reads back as a string: none of PyYAML's implicit resolvers matches it)
  of letters, digits and ``._/-:`` that starts with a letter or digit and does not end with ``:``, on one line and
  without a space (the emitters break a plain scalar only at a space). In a block collection every value starts its
  own line after its key or ``-``, so the other scalars of the document are laid out alike whatever the slots hold.
  Any other string is part of the shape (emitted by the emitter itself, once per distinct value).

No anchors: PyYAML writes one (``&id001``) for an object it meets twice; every object here is written in full.
"""

from __future__ import annotations

import io
import operator
import re

import yaml
from yaml.events import (
    DocumentEndEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent, ScalarEvent, SequenceEndEvent,
    SequenceStartEvent,
)
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from ansible_collections.ainet.fabric.plugins.module_utils.common.report_escape import one_line
from ansible_collections.ainet.fabric.plugins.module_utils.workload import k8s_shapes

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


def _implicit_patterns(*dumpers):
    """The regular expressions of every implicit resolver of ``dumpers`` (PyYAML's resolver tags a plain scalar
    that one of them matches as an int, a float, a bool, null, a timestamp...)."""
    patterns = []
    for dumper in dumpers:
        for resolvers in dumper.yaml_implicit_resolvers.values():
            for _tag, regexp in resolvers:
                if regexp.pattern not in patterns:
                    patterns.append(regexp.pattern)
    return patterns


# A string the emitters write as it is in a block collection, whatever column it starts at: plain (PyYAML's and
# libyaml's analysis allow it: no indicator, no space, no line break, no ':' at its end, where it would be followed by
# whitespace) and read back as a string (no implicit resolver matches it: PyYAML asks those of its first character
# only, this asks them all).
_NOT_IMPLICIT = "(?! %s )" % "|".join("(?:%s)" % pattern for pattern in _implicit_patterns(PureDumper, FastDumper))
_SLOT = re.compile(r"%s [A-Za-z0-9] [A-Za-z0-9._/:-]* (?<!:) \Z" % _NOT_IMPLICIT, re.X)


# What a template's slots hold while its document is emitted: a string of the kind above.
_MARK = "ainetfabricslot"


def _emit(dumper_class, obj):
    """``(document, end)``: the text of ``obj`` as the first document of a stream (``---`` and its lines), and what
    the stream's end adds after it (``...`` after an open-ended document, else nothing)."""
    stream = io.StringIO()
    dumper = dumper_class(stream, default_flow_style=False, width=120, explicit_start=True, sort_keys=False)
    walk = _events(dumper, {})
    try:
        dumper.open()
        dumper.emit(DocumentStartEvent(explicit=True))
        walk(obj)
        dumper.emit(DocumentEndEvent(explicit=False))
        document = stream.getvalue()
        dumper.close()
    finally:
        dumper.dispose()
    return document, stream.getvalue()[len(document):]


def _template(dumper_class, shape, values, slotted):
    """``(format, end)`` of a shape: the document with ``%s`` in each slot (``slotted``: the indexes of the values
    that go into slots, the others written as they are), or None as format where a value of the shape holds the
    mark itself (its objects are then emitted one by one)."""
    marked = list(values)
    for index in slotted:
        marked[index] = _MARK
    document, end = _emit(dumper_class, k8s_shapes.join(shape, marked))
    parts = document.split(_MARK)
    if len(parts) != len(slotted) + 1:
        return None, end
    return "%s".join(part.replace("%", "%%") for part in parts), end


def dump(kind, cluster, objects, pure=False, by_shape=True, shapes=None):
    """The file of ``objects`` (all of ``kind``): the header, then one document per object. ``pure``: PyYAML's
    pure-Python emitter (the reference the C emitter's output is tested against); ``by_shape``: one emitter run per
    shape (``False``: one per object, the reference the shapes' output is tested against); ``shapes``: a
    ``k8s_shapes.Shapes`` shared with the CRD check (each object split once)."""
    # The header is a YAML comment: a line break in a name would end it and start YAML of its own.
    header = HEADER % (one_line(kind), one_line(cluster))
    dumper_class = PureDumper if pure else FastDumper
    if not by_shape or not objects:
        stream = io.StringIO()
        dumper = dumper_class(stream, default_flow_style=False, width=120, explicit_start=True, sort_keys=False)
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
        return header + stream.getvalue()
    split = shapes.split if shapes is not None else k8s_shapes.split
    of_shape, order = {}, []  # per shape its _Shape; per object (its _Shape, its values), or None (unsplittable)
    for obj in objects:
        try:
            shape, values = split(obj)
        except k8s_shapes.Unsplittable:
            order.append(None)
            continue
        group = of_shape.get(shape)
        if group is None:
            group = of_shape[shape] = _Shape(shape)
        group.rows.append(values)
        order.append((group, values))
    for group in of_shape.values():
        group.sort_columns()
    documents = []
    end = ""
    for obj, item in zip(objects, order):
        form = None
        if item is not None:
            group, values = item
            form, end, slotted = group.template(dumper_class, values)
        if form is None:
            document, end = _emit(dumper_class, obj)
            documents.append(document)
        else:
            documents.append(form % slotted(values))
    return header + "".join(documents) + end


def _picker(indexes):
    """``pick(values)``: the tuple of ``values`` at ``indexes`` (itemgetter's, always a tuple)."""
    if len(indexes) > 1:
        return operator.itemgetter(*indexes)
    if indexes:
        index = indexes[0]
        return lambda values: (values[index],)
    return lambda values: ()


class _Shape:
    """The objects of one shape in a file: their values (``rows``), which go into slots, and the templates."""

    __slots__ = ("shape", "rows", "kept", "mixed", "kept_of", "pick_kept", "templates")

    def __init__(self, shape):
        self.shape, self.rows, self.templates = shape, [], {}

    def sort_columns(self):
        """Column by column (a column: the strings at one index of ``rows``): ``kept`` the indexes of the columns that
        hold no string for a slot (part of the shape, as the objects have them), ``mixed`` those that hold some and
        some not, ``kept_of`` whether each string of a mixed column is kept. Each distinct string is asked once, and
        a column whose strings were all found slots in an earlier column is not asked again (a pool's gateway and
        its route's are the same 131,072 strings at 16,384 nodes)."""
        kept, mixed, self.kept_of = [], [], {}
        slots = set()  # the strings found slots so far
        for index, column in enumerate(zip(*self.rows)):
            distinct = set(column)
            if distinct <= slots:
                continue
            if all(map(_SLOT.match, distinct)):  # the usual: names, addresses
                slots |= distinct
                continue
            flags = dict((text, _SLOT.match(text) is None) for text in distinct)
            if all(flags.values()):
                kept.append(index)
            else:
                mixed.append(index)
                self.kept_of.update(flags)
        self.kept, self.mixed, self.pick_kept = tuple(kept), tuple(mixed), _picker(kept)
        self.rows = None

    def template(self, dumper_class, values):
        """``(format, end, slotted)`` of an object of this shape with ``values``: its shape's document with ``%s`` in
        the slots, what the stream's end adds after it, ``slotted(values)`` the strings for the slots (format None:
        emit the object itself)."""
        if self.mixed:  # this object's own choice in the mixed columns
            kept = tuple(sorted(self.kept + tuple(i for i in self.mixed if self.kept_of[values[i]])))
            key = (kept, tuple(values[i] for i in kept))
        else:
            kept, key = self.kept, self.pick_kept(values)
        template = self.templates.get(key)
        if template is None:
            slots = [i for i in range(len(values)) if i not in set(kept)]
            template = self.templates[key] = _template(dumper_class, self.shape, values, slots) + (_picker(slots),)
        return template
