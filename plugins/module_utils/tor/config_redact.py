# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets in a switch's configuration, redacted by each NOS's own grammar before any of its text is kept.

A running configuration read live carries the switch's secrets: local users' password hashes, SNMP communities,
TACACS+ and RADIUS keys, routing protocol keys. The lossless check keeps only the QoS facts it parses from it
(``tor_read``); what is kept as text anyway - a parser's problem line, a read's error line - passes through
:func:`redact_line`, and a whole configuration kept as text through :func:`redact_config`.

Grammars (the secret is what follows the keyword, up to the end of the line):

* CLI (Arista EOS, Cisco NX-OS, Dell OS10, SONiC's FRR, Cumulus' NCLU): ``username <name> ... secret|password
  [<type>] <hash>``; ``enable secret|password``; ``snmp-server community <community> ...``; ``snmp-server user
  <name> ... auth <proto> <key> priv <proto> <key>``; ``snmp-server host <host> ... <community>``;
  ``tacacs-server|radius-server [host <h> ...] key [<type>] <key>``; ``key 7 <key>``, ``key-string``,
  ``password 7``, ``md5 <key>``, ``authentication-key``, ``message-digest-key``, ``pre-shared-key``, ``passphrase``.
* JSON (SONiC config_db, Cumulus NVUE): a value whose key names a secret (``password``, ``hashed-password``,
  ``secret``, ``passkey``, ``key``, ``auth-key``, SNMP ``*_PASSWORD``); the keys of a table whose keys are the
  secrets themselves (config_db ``SNMP_COMMUNITY``; NVUE ``readonly-community``, ``readwrite-community``).

Over-redaction is harmless here: the QoS parsers read the unredacted text, and nothing redacted is a QoS setting.
"""

from __future__ import annotations

import json
import re

REDACTED = "<redacted>"

# CLI: a line (or a one-line message quoting one) whose secret follows one of these words.
_CLI = [
    re.compile(r"(?P<keep>\busername\s+\S+.*?\b(?:secret|password)(?:\s+(?:sha512|sha256|[0-9]))?\s+)(?!.*<redacted>)\S.*", re.I),
    re.compile(r"(?P<keep>\benable\s+(?:secret|password)(?:\s+(?:sha512|sha256|[0-9]))?\s+)(?!.*<redacted>)\S.*", re.I),
    re.compile(r"(?P<keep>\bsnmp-server\s+community\s+)(?!.*<redacted>)\S.*", re.I),
    re.compile(r"(?P<keep>\bsnmp-server\s+user\s+\S+.*?\b(?:auth|localized|localizedkey)\s+)(?!.*<redacted>)\S.*", re.I),
    re.compile(r"(?P<keep>\bsnmp-server\s+host\s+\S+\s+)(?!.*<redacted>)\S.*", re.I),
    re.compile(r"(?P<keep>\b(?:tacacs-server|radius-server|tacacs|radius)\b.*?\bkey(?:\s+[0-9])?\s+)(?!.*<redacted>)\S.*", re.I),
    re.compile(r"(?P<keep>\b(?:key-string|authentication-key|message-digest-key|pre-shared-key|passphrase|passkey|"
               r"secret|password|community)(?:\s+(?:sha512|sha256|[0-9]+))?(?:\s+md5)?(?:\s+[0-9])?\s+)(?!.*<redacted>)\S.*", re.I),
    re.compile(r"(?P<keep>\b(?:key|md5)\s+[0-9]\s+)(?!.*<redacted>)\S.*", re.I),
]
# JSON: values of these keys are secrets (compared lower-case, "_" as "-").
_SECRET_KEYS = re.compile(r"(^|-)(password|passwd|passkey|secret|key|auth-key|community|token|psk)$")
# JSON: the keys below these keys are the secrets (SNMP community names).
_SECRET_TABLES = re.compile(r"^(snmp-community|readonly-community|readwrite-community|community)$")


def redact_line(line):
    """``line`` (a configuration line, or a message quoting one or several on one line) with what follows a
    secret-bearing keyword replaced by ``<redacted>``."""
    text = str(line)
    for pattern in _CLI:
        text = pattern.sub(lambda m: m.group("keep") + REDACTED, text)
    return text


def _key(name):
    return str(name).lower().replace("_", "-")


def redact_data(data, _table=False):
    """A copy of JSON-like ``data`` (config_db, NVUE) with secret values and secret table keys redacted."""
    if isinstance(data, dict):
        out = {}
        for index, (name, value) in enumerate(data.items()):
            key = _key(name)
            shown = "%s-%d" % (REDACTED, index + 1) if _table else name
            if _SECRET_TABLES.match(key) and isinstance(value, dict):
                out[shown] = redact_data(value, _table=True)
            elif _SECRET_KEYS.search(key) and not isinstance(value, (dict, list)):
                out[shown] = REDACTED
            else:
                out[shown] = redact_data(value)
        return out
    if isinstance(data, list):
        return [redact_data(item) for item in data]
    return data


def redact_config(text):
    """A configuration's text with its secrets redacted: JSON (config_db, NVUE) by its keys when it parses as
    JSON, else line by line (:func:`redact_line`)."""
    if not isinstance(text, str):
        return redact_data(text)
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            return json.dumps(redact_data(json.loads(text)), indent=2, sort_keys=False)
        except ValueError:
            pass
    return "\n".join(redact_line(line) for line in text.split("\n"))


def secret_values(data, _table=False):
    """The secrets of JSON-like ``data`` (config_db, NVUE) as :func:`redact_data` finds them: the values of secret
    keys and the keys of secret tables (SNMP communities)."""
    found = set()
    if isinstance(data, dict):
        for name, value in data.items():
            key = _key(name)
            if _table:
                found.add(str(name))
            if _SECRET_TABLES.match(key) and isinstance(value, dict):
                found |= secret_values(value, _table=True)
            elif _SECRET_KEYS.search(key) and not isinstance(value, (dict, list)):
                if value not in (None, ""):
                    found.add(str(value))
            else:
                found |= secret_values(value)
    elif isinstance(data, list):
        for item in data:
            found |= secret_values(item)
    return found


def config_secrets(text):
    """The secrets of a configuration's text: by key when it parses as JSON (:func:`secret_values`), else what
    :func:`redact_line` redacts on each line (the whole tail, and each of its words of 4 characters or more)."""
    if text is None:
        return set()
    if not isinstance(text, str):
        return secret_values(text)
    if text.lstrip()[:1] in ("{", "["):
        try:
            return secret_values(json.loads(text))
        except ValueError:
            pass
    found = set()
    for line in text.split("\n"):
        redacted = redact_line(line)
        if redacted != line and REDACTED in redacted:
            tail = line[redacted.index(REDACTED):].strip()
            found.add(tail)
            found.update(word for word in tail.split() if len(word) >= 4)
    return found


def redact_values(text, values):
    """``text`` (a message: a validator's, a device's) with every secret of ``values`` replaced by ``<redacted>``
    (longest first), then :func:`redact_line`. A secret shorter than 4 characters is replaced only where a message
    quotes it (``"v"``, ``'v'``, ``=v``), so that it does not erase every digit of the message."""
    text = str(text)
    for value in sorted((v for v in values if v), key=len, reverse=True):
        if len(value) >= 4:
            text = text.replace(value, REDACTED)
        else:
            text = re.sub(r"(?<=[\"'=])%s(?=[\"'\],;)\s]|\Z)" % re.escape(value), REDACTED, text)
    return redact_line(text)
