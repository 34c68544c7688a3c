# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ToR pushes share: the error they raise, an HTTP(S) JSON client and the CLI command lister.

Each NOS module (:mod:`platforms`) pushes through its NOS's usual path (NVUE REST API, eAPI, NX-API,
the SONiC Generic Config Updater over SSH) and first reads what the switch holds, so that nothing is
sent that changes the switch when nothing is lacking (``changed`` False), and check mode stops after
that comparison. Diff items are ``{"path": (...), "before": x, "after": y}`` (:mod:`tor_diff`).

``HttpTransport`` is a stdlib (``urllib.request``) JSON client with basic authentication; tests give the
pushes a transport object with the same ``request`` method that replays recorded exchanges. Passwords never
appear in messages, and redirects are refused (they would carry the Authorization header elsewhere).
``cli_commands(lines, indent)`` turns an indented CLI configuration into the commands an API session
takes, leaving each block with ``exit`` (eAPI and NX-API do not leave a block by themselves).
``check_commands(commands, api)`` is the last wall before a switch: a command holding a line break, a control
character or ';' (:func:`tor_intent.line_problem`) is refused before the eAPI or NX-API request, or before a read over
the switch's CLI (:func:`read_command`), whether it came from the inventory or from the switch's own text.
"""

from __future__ import annotations

import base64
import json
import re
import ssl
from urllib import error as urlerror
from urllib import parse, request

from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import line_problem


class PushError(RuntimeError):
    """A push failed; the message names the switch, the step and the vendor's words."""


# ----------------------------------------------------------------------------- HTTP

class _NoRedirect(request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # pylint: disable=too-many-arguments
        return None


class HttpTransport(object):
    """JSON over HTTP(S) with basic authentication (NVUE REST API, eAPI), standard library only."""

    def __init__(self, base_url, user, password, validate_certs=True, timeout=30):
        split = parse.urlsplit(base_url.rstrip("/"))
        # Credentials never ride in the URL, which is printed in messages.
        self.base_url = parse.urlunsplit((split.scheme, split.netloc.rpartition("@")[2], split.path, "", ""))
        self.timeout = timeout
        self._password = password or ""
        self._auth = "Basic " + base64.b64encode(("%s:%s" % (user or "", self._password)).encode()).decode()
        context = ssl.create_default_context()
        if not validate_certs:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        self._opener = request.build_opener(request.HTTPSHandler(context=context), _NoRedirect())

    def request(self, method, path, body=None, params=None):
        """``(status, parsed JSON or text)``; any failure is a :class:`PushError` naming the URL."""
        url = self.base_url + path + ("?" + parse.urlencode(params) if params else "")
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = request.Request(url, data=data, method=method, headers={
            "Authorization": self._auth, "Accept": "application/json", "Content-Type": "application/json"})
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                return resp.status, _decode(resp.read())
        except urlerror.HTTPError as exc:
            detail = _detail(_decode(exc.read()))
            raise PushError(self._clean("%s %s: HTTP %d %s%s" % (method, url, exc.code, exc.reason,
                                                                 ": " + detail if detail else ""))) from None
        except (urlerror.URLError, OSError, ValueError) as exc:
            raise PushError(self._clean("%s %s: %s" % (method, url, getattr(exc, "reason", exc)))) from None

    def _clean(self, text):
        # A password of a few characters would blank out ordinary words; the URL already holds none.
        return text.replace(self._password, "********") if len(self._password) >= 4 else text


def _decode(raw):
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    try:
        return json.loads(text) if text else None
    except ValueError:
        return text


def _detail(body):
    """The vendor's words in an error body: a JSON problem's detail/message/title, an HTML page's title."""
    if isinstance(body, dict):
        body = body.get("detail") or body.get("message") or body.get("title") or json.dumps(body)
    text = str(body or "")
    title = re.search(r"<title>(.*?)</title>", text, re.S | re.I)
    if title:
        text = title.group(1)
    return " ".join(text.split())[:300]


def read_command(connection, command):
    """What ``command`` (a tuple of words) prints on a switch, read for the lossless check: ``connection`` is
    ``run(argv, data=None) -> (rc, stdout, stderr)`` on the switch. One :class:`PushError` line naming the command
    when it fails or prints nothing. A word with a line break, a control character or ';' (a port name the switch's
    CLI would read as two commands) is refused before anything runs (:func:`check_commands`)."""
    check_commands(list(command), "the switch's CLI")
    rc, out, err = connection(list(command))
    if rc != 0:
        raise PushError("%s failed (rc %d): %s" % (" ".join(command), rc, " ".join((err or out).split())[:300]))
    if not out.strip():
        raise PushError("%s returned nothing" % " ".join(command))
    return out


# ----------------------------------------------------------------------------- CLI

def check_commands(commands, api):
    """``commands`` when each is one command of ``api`` (eAPI: each string of ``cmds`` is one command; NX-API: the
    commands are joined with " ;" into one ``input``): no line break, control character or ';' in any, so that
    nothing read from the inventory or from the switch (a port name, a line of the running configuration) adds a
    command of its own. Else :class:`PushError` naming the command, before anything is sent."""
    for index, command in enumerate(commands):
        text = command.get("cmd") if isinstance(command, dict) else command
        problem = line_problem(text)
        if problem:
            raise PushError("%s: command %d of %d %r %s; nothing was sent"
                            % (api, index + 1, len(commands), text, problem))
    return commands


def cli_commands(lines, indent):
    """Rendered CLI lines (indented by ``indent`` spaces per level) as commands, with ``exit`` where a block
    ends; ``!`` and blank lines are dropped."""
    items = [((len(raw) - len(raw.lstrip(" "))) // indent, raw.strip()) for raw in lines
             if raw.strip() and not raw.lstrip().startswith("!")]
    out, depth = [], 0
    for index, (level, text) in enumerate(items):
        while depth > level:
            out.append("exit")
            depth -= 1
        out.append(text)
        following = items[index + 1][0] if index + 1 < len(items) else 0
        if following > level:
            depth = level + 1
    while depth > 0:
        out.append("exit")
        depth -= 1
    return out
