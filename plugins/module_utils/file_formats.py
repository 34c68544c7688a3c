# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Structured dumpers (interim minimal version)."""

from __future__ import annotations

import json
import re

_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")


def _header(header):
    if not header:
        return []
    return ["# " + line if line else "#" for line in header.splitlines()]


def _scalar(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value), ensure_ascii=False)


def _yaml(data, indent, out):
    pad = "  " * indent
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, (dict, list)) and value:
                out.append("%s%s:" % (pad, _scalar(str(key))))
                _yaml(value, indent + 1, out)
            else:
                out.append("%s%s: %s" % (pad, _scalar(str(key)), "{}" if value == {} else "[]" if value == []
                                         else _scalar(value)))
    else:
        for value in data:
            if isinstance(value, dict) and value:
                sub = []
                _yaml(value, indent + 1, sub)
                sub[0] = pad + "- " + sub[0].lstrip()
                out.extend(sub)
            elif isinstance(value, list) and value:
                out.append(pad + "-")
                _yaml(value, indent + 1, out)
            else:
                out.append("%s- %s" % (pad, "{}" if value == {} else "[]" if value == [] else _scalar(value)))


def yaml_dump(data, header=None):
    out = _header(header)
    _yaml(data, 0, out)
    return "\n".join(out) + "\n"


def _unit_value(section, key, value):
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = str(value)
    if any(ord(c) < 32 or ord(c) == 127 for c in text) or text != text.strip():
        raise ValueError("[%s] %s=%r: control characters or surrounding whitespace" % (section, key, text))
    return text


def unit_dump(sections, header=None):
    out = _header(header)
    for section, entries in sections:
        if out:
            out.append("")
        out.append("[%s]" % section)
        for key, value in entries:
            if not _KEY.match(key):
                raise ValueError("[%s] %r is not a valid key" % (section, key))
            out.append("%s=%s" % (key, _unit_value(section, key, value)))
    return "\n".join(out) + "\n"


def _keyfile_escape(text):
    text = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    if text.startswith(" "):
        text = "\\s" + text[1:]
    return text


def keyfile_dump(groups, header=None):
    out = _header(header)
    for group, entries in groups:
        if "[" in group or "]" in group:
            raise ValueError("%r is not a valid group name" % group)
        if out:
            out.append("")
        out.append("[%s]" % group)
        for key, value in entries:
            if "=" in key or "\n" in key:
                raise ValueError("[%s] %r is not a valid key" % (group, key))
            value = ("true" if value else "false") if isinstance(value, bool) else str(value)
            out.append("%s=%s" % (key, _keyfile_escape(value)))
    return "\n".join(out) + "\n"


def sysctl_dump(settings, header=None):
    out = _header(header)
    for path, value in settings.items():
        if any(c.isspace() or c == "=" for c in path) or "\n" in str(value):
            raise ValueError("sysctl %r = %r cannot be written" % (path, value))
        out.append("%s = %s" % (path, value))
    return "\n".join(out) + "\n"
