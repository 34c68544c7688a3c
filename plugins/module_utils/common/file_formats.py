# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Structured dumpers for the files the collection writes on hosts.

Each takes structured data and returns the file's text, or raises ValueError naming the key
and value that would change the file's meaning (a newline in a systemd value, a ``]`` in a
keyfile group). Never build these files by joining strings: an interface name with a comma
becomes a different YAML mapping, a newline a new INI section.

* ``yaml_dump``: block YAML (netplan); every string is a double-quoted scalar (``plain``: only the
  strings that would not read back as themselves bare).
* ``unit_dump``: systemd INI (units, .network, .conf drop-ins); repeated sections and keys kept.
* ``keyfile_dump``: NetworkManager keyfiles (GLib key file escaping: ``\\s``, ``\\n``, ``\\t``,
  ``\\r``, ``\\\\``).
* ``sysctl_dump``: sysctl.d lines with ``/`` separators (an interface name with a dot, such as
  a VLAN ``bond0.100``, cannot be written with dot separators).
"""

from __future__ import annotations

import json
import re

_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
# What YAML allows unescaped in a double-quoted scalar (YAML 1.1 "printable", as libyaml and
# PyYAML read it); anything else is written as a \u or \U escape.
# NEL, LINE and PARAGRAPH SEPARATOR are line breaks to YAML, and a BOM is dropped: escaped too.
# Compiled on first use (about 5 ms): a host module that writes no YAML does not pay for it.
_NOT_PRINTABLE_RE = "[^\x09\x0a\x0d\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
_COMPILED = {}
# json.dumps(text, ensure_ascii=False), without building an encoder for each string.
_JSON = json.JSONEncoder(ensure_ascii=False)


def _not_printable():
    if "np" not in _COMPILED:
        _COMPILED["np"] = re.compile(_NOT_PRINTABLE_RE)
    return _COMPILED["np"]


def _yaml_escape(match):
    code = ord(match.group(0))
    return "\\u%04x" % code if code <= 0xFFFF else "\\U%08x" % code


def _header(header):
    if not header:
        return []
    return ["# " + line if line else "#" for line in header.splitlines()]


# Strings that read back as the same string when written bare (yaml_dump(plain=True)).
_PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*\Z")
_YAML11_WORDS = frozenset(("y", "n", "yes", "no", "on", "off", "true", "false", "null"))


def _plain(value):
    if isinstance(value, str) and _PLAIN.match(value) and value.lower() not in _YAML11_WORDS:
        return value
    return _scalar(value)


def _scalar(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    # A JSON string is a YAML double-quoted scalar once the characters YAML does not take raw
    # are escaped as well.
    return _not_printable().sub(_yaml_escape, _JSON.encode(str(value)))


def _yaml(data, indent, out, scalar):
    pad = "  " * indent
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, (dict, list)) and value:
                out.append(pad + scalar(str(key)) + ":")
                _yaml(value, indent + 1, out, scalar)
            else:
                text = "{}" if value == {} else "[]" if value == [] else scalar(value)
                out.append(pad + scalar(str(key)) + ": " + text)
    else:
        for value in data:
            if isinstance(value, dict) and value:
                sub = []
                _yaml(value, indent + 1, sub, scalar)
                sub[0] = pad + "- " + sub[0].lstrip()
                out.extend(sub)
            elif isinstance(value, list) and value:
                out.append(pad + "-")
                _yaml(value, indent + 1, out, scalar)
            else:
                out.append("%s- %s" % (pad, "{}" if value == {} else "[]" if value == [] else scalar(value)))


def _remembered(scalar):
    """``scalar`` with each string's text kept for the rest of one dump: a file's keys repeat on every entry (an NVUE
    file of 64 ports writes ``description`` 64 times), and the scalar's checks are most of a dump's time."""
    texts = {}

    def remembered(value):
        if type(value) is not str:  # pylint: disable=unidiomatic-typecheck  # True == 1: only exact strings are kept
            return scalar(value)
        text = texts.get(value)
        if text is None:
            text = texts[value] = scalar(value)
        return text
    return remembered


def yaml_dump(data, header=None, plain=False):
    """Block YAML of ``data``; with ``plain``, identifier-like strings (``swp1``, ``br_default``) are
    written bare and only the others quoted, as a person would write the file."""
    out = _header(header)
    _yaml(data, 0, out, _remembered(_plain if plain else _scalar))
    return "\n".join(out) + "\n"


def _unit_value(section, key, value):
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = str(value)
    if any(ord(c) < 32 or ord(c) == 127 for c in text) or text != text.strip():
        raise ValueError("[%s] %s=%r: control characters or surrounding whitespace" % (section, key, text))
    # systemd expands specifiers (%n, %i, %H ...) in unit settings (systemd.unit(5) "Specifiers"): a '%' from a
    # value would be read as one, or refused at load time; none of our values needs one
    if "%" in text:
        raise ValueError("[%s] %s=%r: '%%' is a systemd specifier" % (section, key, text))
    # a line ending in a backslash continues on the next one (systemd's conf-parser): the next key would join it
    if text.endswith("\\"):
        raise ValueError("[%s] %s=%r: a trailing backslash joins the next line" % (section, key, text))
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
        # sysctl.d(5): one "key = value" per line, '#' or ';' starts a comment line, a leading '-' on the key means
        # "ignore failure"; the key's '/' or '.' separate its parts ('..' would climb out of /proc/sys)
        text = str(value)
        if (not path or path[0] in "-#;/" or ".." in path.split("/") or any(c.isspace() or c == "=" for c in path)
                or any(ord(c) < 32 or ord(c) == 127 for c in text + path) or text != text.strip()):
            raise ValueError("sysctl %r = %r cannot be written" % (path, value))
        out.append("%s = %s" % (path, value))
    return "\n".join(out) + "\n"
