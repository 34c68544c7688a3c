# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes objects by shape: what is done once per shape instead of once per object, by the YAML files
(``plugin_utils/k8s_dump``) and the CRD check (``workload/k8s_validate``).

An object's *shape* is its structure with every string value taken out: the keys of its mappings in order, the
length of its lists, and each value that is not a string (an integer, a boolean, None). Its *values* are the
strings taken out, in order. 16,384 nodes x 8 rails give 131,072 node pools of one shape: they differ in their
values only. :func:`split` gives both, :func:`join` puts them back together. Pure functions, no Ansible.
"""

from __future__ import annotations


class _Mark:
    """A token of a shape that no key or value can equal (compared by identity)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "<%s>" % self.name


MAP, SEQ, END, SLOT, TRUE, FALSE = (_Mark(name) for name in ("map", "seq", "end", "slot", "true", "false"))


class Unsplittable(Exception):
    """The object holds something a shape does not describe (a float, a key that is no string)."""


def split(obj):
    """``(shape, values)`` of ``obj``: the shape as a tuple of tokens (a mapping: :data:`MAP`, then each key and its
    value, then :data:`END`; a list or tuple: :data:`SEQ`, its items, :data:`END`; a string: :data:`SLOT`;
    booleans :data:`TRUE` and :data:`FALSE`; None and integers as themselves), the strings in that order (a
    subclass of str as its plain str). Raises :class:`Unsplittable` for anything else (a float, a key that is
    not a string): the caller takes the object the long way."""
    tokens, values = [], []
    _leaf(obj, tokens.append, values.append)
    return tuple(tokens), values


# Module functions, not closures: a closure that calls itself is a reference cycle, which only the cyclic garbage
# collector frees (131,072 of them, with their lists, at 16,384 nodes).
def _leaf(data, token, value):
    """Anything but a str, dict or list (those are _walk's own cases)."""
    if data is None or type(data) is int:  # noqa: E721 # pylint: disable=unidiomatic-typecheck
        token(data)
    elif isinstance(data, bool):
        token(TRUE if data else FALSE)
    elif isinstance(data, str):
        value(str(data))
        token(SLOT)
    elif isinstance(data, int):
        token(int(data))
    elif isinstance(data, (dict, list, tuple)):
        _walk(data, token, value)
    else:
        raise Unsplittable("a %s" % type(data).__name__)


def _walk(data, token, value):
    """A dict, list or tuple; strings (most values) without a call of their own."""
    if isinstance(data, dict):
        token(MAP)
        for key, item in data.items():
            if type(key) is not str:  # noqa: E721 # pylint: disable=unidiomatic-typecheck
                if not isinstance(key, str):
                    raise Unsplittable("a key that is no string: %r" % (key,))
                key = str(key)
            token(key)
            kind = type(item)
            if kind is str:
                value(item)
                token(SLOT)
            elif kind is dict or kind is list:
                _walk(item, token, value)
            else:
                _leaf(item, token, value)
    else:
        token(SEQ)
        for item in data:
            kind = type(item)
            if kind is str:
                value(item)
                token(SLOT)
            elif kind is dict or kind is list:
                _walk(item, token, value)
            else:
                _leaf(item, token, value)
    token(END)


def join(shape, values):
    """The object (dicts, lists, strings, integers, booleans, None) of ``shape`` with ``values`` in its slots, in
    order: :func:`split`'s inverse (a tuple comes back as a list)."""
    values = iter(values)
    stack = []  # open containers: [container, key waiting for its value]
    out = None
    index = 0
    while index < len(shape):
        tok = shape[index]
        index += 1
        if tok is END:
            done = stack.pop()[0]
            item = done
        elif stack and isinstance(stack[-1][0], dict) and stack[-1][1] is None:
            stack[-1][1] = tok  # a key
            continue
        elif tok is MAP or tok is SEQ:
            stack.append([{} if tok is MAP else [], None])
            continue
        elif tok is SLOT:
            item = next(values)
        elif tok is TRUE or tok is FALSE:
            item = tok is TRUE
        else:
            item = tok
        if not stack:
            out = item
        elif isinstance(stack[-1][0], dict):
            stack[-1][0][stack[-1][1]] = item
            stack[-1][1] = None
        else:
            stack[-1][0].append(item)
    return out


class Shapes:
    """:func:`split` of objects, each object split once however many times it is asked for (by identity: the
    objects stay as they are while it is used), and each distinct shape kept once. Shared by the CRD check and the
    YAML files of one run."""

    def __init__(self):
        self._split = {}  # id(obj) -> (obj, shape, values)
        self._shapes = {}

    def split(self, obj):
        """:func:`split` of ``obj`` (raises :class:`Unsplittable` as it does)."""
        hit = self._split.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1], hit[2]
        shape, values = split(obj)
        shape = self._shapes.setdefault(shape, shape)
        self._split[id(obj)] = (obj, shape, values)
        return shape, values
