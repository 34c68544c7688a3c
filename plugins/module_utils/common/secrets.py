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


def _parts(url):
    try:
        parts = urlsplit(str(url or ""))
        parts.port  # pylint: disable=pointless-statement  # raises ValueError on a bad port
    except ValueError:
        return None
    return parts


def has_userinfo(url):
    """Whether ``url`` carries a userinfo (``user[:password]@``) in its authority."""
    parts = _parts(url)
    return bool(parts and "@" in parts.netloc)


def redact_url(url):
    """``url`` with the userinfo of its authority replaced by ``<redacted>`` (``https://<redacted>@mirror/x``);
    a URL without one is returned as it is. Text that is no URL is returned with anything before an ``@`` in
    what looks like its authority replaced as well."""
    text = str(url or "")
    parts = _parts(text)
    if parts is None or not parts.netloc:
        return re.sub(r"(?<=://)[^/@\s]*@", REDACTED + "@", text)
    if "@" not in parts.netloc:
        return text
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, REDACTED + "@" + host, parts.path, parts.query, parts.fragment))


def userinfo_secrets(url):
    """The strings of ``url`` a result must mask (a module adds them to its ``no_log_values``), even where the URL is
    refused: the password of its userinfo as written and percent-decoded. Nothing for a URL without one."""
    match = re.search(r"://([^/?#]*)@", str(url or ""))
    if not match or ":" not in match.group(1):
        return set()
    password = match.group(1).split(":", 1)[1]
    return set(p for p in (password, unquote(password)) if p)


def split_userinfo(url, field):
    """``(url without userinfo, login, password)`` of ``url``; ``login`` and ``password`` are None without a
    userinfo (``password`` also when only a login is given), percent-decoded otherwise. ``field`` names the option
    in :class:`SecretError` (an unparsable URL, a login or password with white space or a control character,
    which neither apt's auth.conf nor dnf's repository file can hold)."""
    text = str(url or "")
    parts = _parts(text)
    if parts is None:
        raise SecretError("%s: %s is not a URL" % (field, redact_url(text)))
    if "@" not in parts.netloc:
        return text, None, None
    userinfo, host = parts.netloc.rsplit("@", 1)
    login, sep, password = userinfo.partition(":")
    login, password = unquote(login), (unquote(password) if sep else None)
    for name, value in (("login", login), ("password", password)):
        if value is not None and (not value and name == "login" or re.search(r"[\s\x00-\x1f\x7f]", value)):
            raise SecretError("%s: the %s in the URL's userinfo (%s) is empty or holds white space or a control "
                              "character, which a credentials file cannot hold" % (field, name, redact_url(text)))
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment)), login, password


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
