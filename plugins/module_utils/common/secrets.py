# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets in URLs: the credentials a repository URL carries (``https://user:token@mirror/...``) are split off
before the URL is used, written, returned or printed.

* :func:`split_userinfo` -> the URL without its userinfo, and the login and password (percent-decoded, RFC 3986
  section 3.2.1). Ansible's ``no_log`` masks a secret option's whole value wherever it appears as a substring of
  the result (``ansible.module_utils.common.parameters.remove_values``); a URL derived from it (another path, a
  trailing slash dropped) is no substring of it, so the split, not the masking, is what keeps the token out.
* :func:`redact_url`: the same URL with its userinfo replaced, for messages that must name a URL someone gave.
* :func:`apt_auth_entry`: the entry of apt's ``auth.conf.d`` file for a repository (apt_auth.conf(5): a
  netrc-like file, ``machine [protocol://]hostname[:port][/path] login <name> password <string>``; without a
  protocol an entry matches only https and tor+https, so the protocol is always written; tokens are separated by
  white space and there is no quoting, so a login or password with white space is refused).

Pure functions; the values never appear in an error message (the field is named, the URL shown redacted).
"""

from __future__ import annotations

import re

from urllib.parse import unquote, urlsplit, urlunsplit

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError

REDACTED = "<redacted>"
# What the files of ours that hold repository credentials begin with (apt auth.conf.d, dnf repository files).
AUTH_HEADER = "# Managed by ainet.fabric (%s): credentials of the repository, readable by root only.\n"


class SecretError(FabricError):
    """A credential that cannot be used as given; the message names the field, never the value."""


# RFC 3986 section 3.2.1: userinfo = *( unreserved / pct-encoded / sub-delims / ":" ). A raw "/", "?", "#", "@",
# "[", "]", white space or a control character in it is refused, whatever the login or password would be.
USERINFO = re.compile(r"(?:[A-Za-z0-9._~!$&'()*+,;=:-]|%[0-9A-Fa-f]{2})*\Z")


def _userinfo_span(text):
    """``(start, end)`` of what is taken as the userinfo of ``text``: everything between the first ``//`` and the
    LAST ``@`` of the whole text, or None when no ``@`` follows a ``//``.

    The safe reading, not RFC 3986's: a URL parser ends the authority at the first ``/`` (``https://u:12/tok@m/`` is
    host ``u``, port 12, path ``/tok@m/``), while a person, curl or apt may read ``tok`` as a password with a raw
    ``/`` (a base64 token). Taking the last ``@`` catches both readings; a userinfo that is not clean by RFC 3986
    (:data:`USERINFO`) is then refused by :func:`split_userinfo`, so an ``@`` in a path must be written ``%40``."""
    start = text.find("//")
    end = text.rfind("@")
    if start < 0 or end < start + 2:
        return None
    return start + 2, end


def _parts(url):
    try:
        parts = urlsplit(str(url or ""))
        parts.port  # pylint: disable=pointless-statement  # raises ValueError on a bad port
    except ValueError:
        return None
    return parts


def has_userinfo(url):
    """Whether ``url`` carries a userinfo (``user[:password]@``, :func:`_userinfo_span`)."""
    return _userinfo_span(str(url or "")) is not None


def redact_url(url):
    """``url`` with everything between its first ``//`` and its last ``@`` replaced by ``<redacted>``
    (``https://<redacted>@mirror/x``), whether the URL is valid or refused; text without such an ``@`` is returned
    as it is."""
    text = str(url or "")
    span = _userinfo_span(text)
    if span is None:
        return text
    return text[:span[0]] + REDACTED + text[span[1]:]


def userinfo_secrets(url):
    """The strings of ``url`` a result must mask (a module adds them to its ``no_log_values``), even where the URL is
    refused: the password of its userinfo (:func:`_userinfo_span`) as written and percent-decoded, or the whole
    userinfo when it has no ``:`` and is not clean (a refused URL). Nothing for a URL without one."""
    text = str(url or "")
    span = _userinfo_span(text)
    if span is None:
        return set()
    userinfo = text[span[0]:span[1]]
    found = set()
    if ":" in userinfo:
        password = userinfo.split(":", 1)[1]
        found.update((password, unquote(password)))
    elif not USERINFO.match(userinfo):  # refused, and no password to tell apart: all of it
        found.update((userinfo, unquote(userinfo)))
    return set(p for p in found if p)


def split_userinfo(url, field):
    """``(url without userinfo, login, password)`` of ``url``; ``login`` and ``password`` are None without a
    userinfo (``password`` also when only a login is given), percent-decoded otherwise. The userinfo is what lies
    between ``//`` and the last ``@`` (:func:`_userinfo_span`). ``field`` names the option in :class:`SecretError`
    (an unparsable URL; a userinfo with a character RFC 3986 does not allow there unencoded, such as a raw ``/`` of
    a base64 token or an ``@``; a login or password with white space or a control character, which neither apt's
    auth.conf nor dnf's repository file can hold). The error shows the URL redacted (:func:`redact_url`)."""
    text = str(url or "")
    span = _userinfo_span(text)
    if span is None:
        if _parts(text) is None:
            raise SecretError("%s: %s is not a URL" % (field, redact_url(text)))
        return text, None, None
    userinfo = text[span[0]:span[1]]
    login, sep, password = userinfo.partition(":")
    login, password = unquote(login), (unquote(password) if sep else None)
    for name, value in (("login", login), ("password", password)):
        if value is not None and (not value and name == "login" or re.search(r"[\s\x00-\x1f\x7f]", value)):
            raise SecretError("%s: the %s in the URL's userinfo (%s) is empty or holds white space or a control "
                              "character, which a credentials file cannot hold" % (field, name, redact_url(text)))
    if not USERINFO.match(userinfo):
        raise SecretError("%s: %s: the userinfo before the last '@' holds a character a URL must percent-encode "
                          "there ('/' %%2F, '?' %%3F, '#' %%23, '@' %%40, '[' %%5B, ']' %%5D); an '@' after the "
                          "host must be written %%40" % (field, redact_url(text)))
    parts = _parts(text[:span[0]] + text[span[1] + 1:])
    if parts is None or not parts.netloc:
        raise SecretError("%s: %s is not a URL" % (field, redact_url(text)))
    return urlunsplit(parts), login, password


def apt_machine(url):
    """The ``machine`` token of apt's auth.conf for a repository URL without userinfo:
    ``<scheme>://<host>[:<port>]<path>`` (apt matches an entry with a path when the URI's path starts with it)."""
    parts = _parts(url)
    if parts is None or not parts.scheme or not parts.hostname:
        raise SecretError("the repository URL %s has no scheme or host" % redact_url(url))
    return "%s://%s%s" % (parts.scheme, parts.netloc, parts.path.rstrip("/") or "")


def apt_auth_entry(url, login, password, owner):
    """The whole text of an apt ``auth.conf.d`` file of ``owner`` (the role's name) holding the login of the
    repository at ``url`` (without userinfo)."""
    secret = "" if password is None else " password " + password
    return "%smachine %s login %s%s\n" % (AUTH_HEADER % owner, apt_machine(url), login, secret)


def url_credentials(url, field, owner="ainet.fabric"):
    """``{"url", "login", "password", "apt_auth"}`` of a repository URL (:func:`split_userinfo`); ``apt_auth`` is the
    text of an apt auth.conf.d file of ``owner`` (:func:`apt_auth_entry`), None without a login. For the roles: the
    URL they write into a source file is ``url``, the credentials go to a file readable by root only."""
    clean, login, password = split_userinfo(url, field)
    return {"url": clean, "login": login, "password": password,
            "apt_auth": apt_auth_entry(clean, login, password, owner) if login is not None else None}
