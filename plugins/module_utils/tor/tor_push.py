# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pushing a rendered ToR configuration through its NOS's usual path, changing nothing that is not needed.

Each push first reads what the switch holds and computes what it lacks of the rendered configuration;
nothing is sent that changes the switch when nothing is lacking (``changed`` False, no revision, no
committed session, no patch), and check mode stops after that comparison (EOS: after the switch's own
session diff, then ``abort``). Diff items are ``{"path": (...), "before": x, "after": y}``; the path is a
tuple, since config_db keys (``Ethernet0|10.0.0.1/31``) and NVUE keys (``172.17.0.0/31``) hold dots and
slashes. :func:`tor_diff.tree_diff` is the one comparison NVUE and SONiC share (values compare as strings:
config_db is all strings, NVUE prints numbers bare).

NVUE, Cumulus Linux 5.x REST API (user guide "NVUE API", CumulusNetworks/docs
``content/cumulus-linux-59/System-Configuration/NVIDIA-User-Experience-NVUE/NVUE-API.md`` at 01d698bf;
the 4.4 page ``content/cumulus-linux-44/System-Configuration/NVIDIA-User-Experience-NVUE.md`` at c1bf79c8):

* ``GET /nvue_v1/?rev=applied&filled=false``: the applied configuration, without defaults;
* ``POST /nvue_v1/revision`` -> ``{"<id>": {"state": "pending", "transition": {"issue": {}, "progress": ""}}}``
  (5.x ids are numbers as strings, ``"2"``; 4.x ids were ``changeset/cumulus/<date>``, quoted ``%2F``);
* ``PATCH /nvue_v1/?rev=<id>`` with the ``set`` body (a *root patch*) -> ``{}``; ``DELETE`` on a path with
  ``?rev=<id>`` is ``nv unset``;
* ``PATCH /nvue_v1/revision/<id>`` with ``{"state": "apply", "auto-prompt": {"ays": "ays_yes"}}`` ->
  ``{"state": "apply", ...}``; without ``ays_yes`` a warning prompt ends the revision in ``ays_fail``;
* ``GET /nvue_v1/revision/<id>`` -> ``{"state": "applied", ...}`` (the docs also show the reply wrapped in
  ``{"<id>": {...}}``); failures carry ``transition.issue`` = ``{"0": {"code", "data", "message",
  "severity"}}`` (``invalid`` / ``config_invalid``, ``ays_fail`` / ``client_timeout``). Terminal states
  beyond the docs' two examples (``apply_fail``, ``apply_error``, ``confirm_fail``, ``ready_error``,
  ``verify_error``; ``applied_and_saved``) are those NVUE clients in the wild treat as such; see
  tests/unit/plugins/module_utils/data/tor_push/ORIGIN.md.

EOS, Arista eAPI (``POST /command-api``, JSON-RPC 2.0 ``runCmds``, ``version 1``, ``format text``): the
reply is ``{"result": [{"output": "..."}, ...]}`` one per command, or ``{"error": {"code", "message",
"data"}}`` where ``data`` holds the results of every command up to and including the failed one, the last
with ``errors`` (the eAPI specification as quoted in aristanetworks/anta ``asynceapi/device.py``). eAPI does
not leave a configuration block by itself (napalm-automation/napalm-base#254), so blocks are closed with
``exit``; ``show session-config named <s> diffs`` is asked after ``end`` since a diff taken inside a block
misses it (ansible-collections/arista.eos#476; pyeapi docs ``release-notes-0.6.0.rst``).

SONiC, Generic Config Updater (sonic-net/sonic-utilities ``config/main.py``): ``config apply-patch
[-f CONFIGDB|SONICYANG] [-d|--dry-run] [-v] PATCH_FILE_PATH`` applies an RFC 6902 patch of config_db
(validated against the YANG models, no reload), prints ``Patch applied successfully.`` or ``Failed to apply
patch`` and the error (exit status non-zero); ``config`` needs root. The running config_db comes from
``sonic-cfggen -d --print-data`` (what ``config save`` writes).

Rail ports still marked ``[ainet]`` but no longer planned (:func:`tor_diff.stale_ports`) are released in
the same push: NVUE ``DELETE``s the paths it set (:data:`NVUE_PORT_PATHS`) in the revision, EOS sends ``no``
lines (:func:`eos_release_lines`), SONiC removes the keys (:func:`sonic_release_patch`).

``HttpTransport`` is a stdlib (``urllib.request``) JSON client with basic authentication; tests give the
pushes a transport object with the same ``request`` method that replays recorded exchanges. Passwords never
appear in messages, and redirects are refused (they would carry the Authorization header elsewhere).
"""

from __future__ import annotations

import base64
import json
import re
import ssl
import time
import uuid
from urllib import error as urlerror
from urllib import parse, request

from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_diff import stale_ports, tree_diff
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import is_owned

NVUE_APPLIED = ("applied", "applied_and_saved")
NVUE_FAILED = ("apply_fail", "apply_error", "ays_fail", "ignore_fail", "invalid", "confirm_fail",
               "ready_error", "verify_error", "check_fail", "failed")
NVUE_APPLY = {"state": "apply", "auto-prompt": {"ays": "ays_yes"}}


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


# ----------------------------------------------------------------------------- NVUE

# What a rendered rail port holds (tor_render_nvue): unset on a port that is still marked but not planned.
NVUE_PORT_PATHS = (("description",), ("ip", "address"), ("bridge", "domain", "br_default", "access"),
                   ("qos", "mapping"), ("qos", "pfc"), ("qos", "congestion-control"), ("qos", "egress-scheduler"),
                   ("qos", "pfc-watchdog"))


def _lookup(tree, path):
    for key in path:
        if not isinstance(tree, dict) or key not in tree:
            return None
        tree = tree[key]
    return tree


def nvue_release_paths(applied, body):
    """(port, path) of what this collection set on rail ports that the applied configuration still marks
    but the rendered ``set`` body no longer has."""
    out = []
    for port, conf in sorted(((applied or {}).get("interface") or {}).items()):
        if isinstance(conf, dict) and is_owned(conf.get("description")) and port not in (body.get("interface") or {}):
            out += [(port, path) for path in NVUE_PORT_PATHS if _lookup(conf, path) is not None]
    return out


def nvue_push(transport, body, check=False, timeout=120, sleep=time.sleep, interval=1):
    """Push an NVUE ``set`` body (see the module docstring): ``{"changed", "diff", "revision", "released"}``.

    ``timeout`` bounds the wait for the revision to leave ``apply`` (seconds of ``sleep(interval)`` calls,
    so a test's ``sleep`` decides the time)."""
    _status, applied = transport.request("GET", "/nvue_v1/", params={"rev": "applied", "filled": "false"})
    applied = applied if isinstance(applied, dict) else {}
    diff = tree_diff(body, applied)
    release = nvue_release_paths(applied, body)
    diff += [{"path": ("interface", port) + path, "before": _lookup(applied["interface"][port], path), "after": None}
             for port, path in release]
    released = sorted({port for port, _path in release})
    if not diff or check:
        return {"changed": bool(diff), "diff": diff, "revision": None, "released": released}
    _status, created = transport.request("POST", "/nvue_v1/revision")
    if not isinstance(created, dict) or len(created) != 1:
        raise PushError("NVUE did not return one new revision: %r" % (created,))
    rev = str(next(iter(created)))
    quoted = parse.quote(rev, safe="")
    transport.request("PATCH", "/nvue_v1/", body=body, params={"rev": rev})
    for port, path in release:
        # DELETE is the API's `nv unset`.
        transport.request("DELETE", "/nvue_v1/interface/%s/%s" % (parse.quote(port, safe=""), "/".join(path)),
                          params={"rev": rev})
    transport.request("PATCH", "/nvue_v1/revision/%s" % quoted, body=dict(NVUE_APPLY))
    waited = 0
    while True:
        _status, state = transport.request("GET", "/nvue_v1/revision/%s" % quoted)
        state = _unwrap(state, rev)
        name = state.get("state")
        if name in NVUE_APPLIED:
            return {"changed": True, "diff": diff, "revision": rev, "released": released}
        if name in NVUE_FAILED:
            raise PushError("NVUE revision %s ended %s: %s" % (rev, name, nvue_message(state)))
        if waited >= timeout:
            raise PushError("NVUE revision %s still %s after %s s" % (rev, name, timeout))
        sleep(interval)
        waited += interval


def _unwrap(state, rev):
    """A revision's state object, also when NVUE wraps it in ``{"<id>": {...}}``."""
    if not isinstance(state, dict):
        return {}
    if "state" not in state and len(state) == 1 and isinstance(state.get(rev), dict):
        return state[rev]
    return state


def nvue_message(state):
    """The messages of a revision's ``transition.issue`` (and its ``progress``), for an error."""
    transition = state.get("transition") or {}
    issues = transition.get("issue") or {}
    if isinstance(issues, dict):
        issues = [issues[key] for key in sorted(issues, key=lambda k: (len(str(k)), str(k)))]
    elif not isinstance(issues, list):
        issues = [issues]
    texts = [str(i.get("message") or i.get("code") or "").strip() if isinstance(i, dict) else str(i).strip()
             for i in issues]
    if transition.get("progress"):
        texts.append("(%s)" % transition["progress"])
    return "; ".join(t for t in texts if t) or "no message"


# ----------------------------------------------------------------------------- EOS eAPI

def eos_commands(lines):
    """Rendered EOS lines (indented by 3 per level) as CLI commands, with ``exit`` where a block ends;
    ``!`` and blank lines are dropped."""
    items = [((len(raw) - len(raw.lstrip(" "))) // 3, raw.strip()) for raw in lines
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


def _eapi(transport, cmds):
    _status, reply = transport.request("POST", "/command-api", body={
        "jsonrpc": "2.0", "method": "runCmds", "id": "ainet-fabric",
        "params": {"version": 1, "cmds": cmds, "format": "text"}})
    if not isinstance(reply, dict):
        raise PushError("eAPI answered %r" % (reply,))
    err = reply.get("error")
    if err:
        data = err.get("data") or []
        # The last object of data is the failed command's (eAPI specification).
        if data and isinstance(data[-1], dict) and data[-1].get("errors"):
            index = len(data) - 1
            command = cmds[index] if index < len(cmds) else "?"
            raise PushError("eAPI: command %d of %d %r failed: %s (%s)" % (
                index + 1, len(cmds), command, "; ".join(str(e) for e in data[-1]["errors"]), err.get("message")))
        raise PushError("eAPI error %s: %s" % (err.get("code"), err.get("message")))
    return [r.get("output", "") if isinstance(r, dict) else r for r in reply.get("result") or []]


def eos_push(transport, lines, check=False, session=None):
    """Push a rendered EOS configuration (its text, or its lines) through a configure session (see the
    module docstring); rail ports the running configuration still marks but the rendered one no longer has
    are released. ``session`` names the session (default ``ainet-fabric-<random>``)."""
    text = lines if isinstance(lines, str) else "\n".join(lines) + "\n"
    session = session or "ainet-fabric-%s" % uuid.uuid4().hex[:8]
    running = _eapi(transport, ["enable", "show running-config"])[-1]
    release = stale_ports("eos", running, {"text": text})
    cmds = ["enable", "configure session %s" % session] + eos_commands(text.splitlines() + eos_release_lines(release))
    try:
        outputs = _eapi(transport, cmds + ["end", "show session-config named %s diffs" % session])
    except PushError:
        _abort(transport, session)
        raise
    diff = [line for line in (outputs[-1] if outputs else "").splitlines()
            if line[:1] in "+-" and not line.startswith(("+++ ", "--- "))]
    changed = bool(diff)
    if not changed or check:
        _abort(transport, session)
    else:
        try:
            _eapi(transport, ["enable", "configure session %s" % session, "commit"])
        except PushError:
            _abort(transport, session)
            raise
    return {"changed": changed, "session": session, "released": release,
            "diff": [{"path": (), "before": None, "after": line} for line in diff]}


def eos_release_lines(ports):
    """EOS lines that remove what this collection set on stale rail ports (see :func:`tor_diff.stale_ports`)."""
    out = []
    for port in ports:
        out.append("interface %s" % port)
        out += ["   " + line for line in ("no description", "no service-profile", "no ip address", "no ipv6 address",
                                          "no switchport access vlan")]
    return out


def _abort(transport, session):
    try:
        _eapi(transport, ["enable", "configure session %s" % session, "abort"])
    except PushError:
        pass


# ----------------------------------------------------------------------------- SONiC

def _pointer(*parts):
    """An RFC 6901 JSON pointer: ``~`` -> ``~0``, ``/`` -> ``~1`` in each part."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def sonic_patch(running, fragment, diff=None):
    """RFC 6902 operations that bring the fragment's tables, keys and fields into ``running``: ``add`` for a
    missing table, key or field, ``replace`` for a field that differs. Nothing of ``running`` that the
    fragment does not state is touched, and the patch of a ``running`` that holds the fragment is ``[]``.
    ``diff`` is ``tree_diff(fragment, running)`` when the caller has it already."""
    ops, whole = [], set()
    for item in tree_diff(fragment, running) if diff is None else diff:
        path = item["path"]
        table = path[0]
        if not isinstance(running.get(table), dict):
            if (table,) not in whole:
                whole.add((table,))
                ops.append({"op": "add", "path": _pointer(table), "value": fragment[table]})
            continue
        key = path[1]
        have = running[table].get(key)
        if not isinstance(have, dict):
            if (table, key) not in whole:
                whole.add((table, key))
                ops.append({"op": "add", "path": _pointer(table, key), "value": fragment[table][key]})
            continue
        field = path[2]
        ops.append({"op": "replace" if field in have else "add", "path": _pointer(table, key, field),
                    "value": fragment[table][key][field]})
    return ops


def sonic_remove_patch(running, owned):
    """``remove`` operations for what we own but no longer want: ``(table, key)`` removes a key,
    ``(table, key, field)`` one field; what ``running`` does not hold is skipped."""
    ops = []
    for entry in sorted({tuple(e) for e in owned}):
        if _lookup(running, entry) is not None:
            ops.append({"op": "remove", "path": _pointer(*entry)})
    return ops


SONIC_PORT_TABLES = ("INTERFACE", "VLAN_MEMBER", "PORT_QOS_MAP", "QUEUE", "PFC_WD", "BUFFER_PG")


def sonic_release_patch(running, ports):
    """Operations that remove what this collection put on ``ports`` (stale rail ports): their L3, VLAN
    membership, QoS bindings, queues, watchdog, priority groups, and the marked description."""
    owned = []
    for table in SONIC_PORT_TABLES:
        for key in (running.get(table) or {}):
            parts = key.split("|")
            port = parts[1] if table == "VLAN_MEMBER" and len(parts) == 2 else parts[0]
            if port in ports:
                owned.append((table, key))
    owned += [("PORT", port, "description") for port in ports]
    order = {table: i for i, table in enumerate(SONIC_PORT_TABLES + ("PORT",))}
    return sorted(sonic_remove_patch(running, owned), key=lambda op: order[op["path"].split("/")[1]])


def sonic_push(run, fragment, check=False, patch_file=None, sudo=False, dry_run_in_check=False):
    """Push a config_db fragment with the Generic Config Updater: ``{"changed", "patch", "diff", "released"}``.

    ``run(argv, data=None) -> (rc, stdout, stderr)`` runs a command on the switch. Check mode reads only,
    unless ``dry_run_in_check`` asks GCU to validate the patch (``config apply-patch --dry-run``), which
    writes the patch to a temporary file on the switch. ``sudo`` prefixes the commands that need root
    (``config``). The patch file is a fresh name under /tmp, created 0600, removed afterwards."""
    rc, out, err = run(["sonic-cfggen", "-d", "--print-data"])
    if rc != 0:
        raise PushError("sonic-cfggen -d --print-data failed (rc %d): %s" % (rc, (err or out).strip()[:300]))
    try:
        running = json.loads(out)
    except ValueError:
        raise PushError("sonic-cfggen printed no config_db JSON: %s" % out[:200]) from None
    release = sorted(port for port, fields in (running.get("PORT") or {}).items()
                     if is_owned((fields or {}).get("description")) and port not in (fragment.get("PORT") or {}))
    released_ops = sonic_release_patch(running, set(release))
    diff = tree_diff(fragment, running)
    ops = sonic_patch(running, fragment, diff) + released_ops
    for op in released_ops:
        path = tuple(p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:])
        diff.append({"path": path, "before": _lookup(running, path), "after": None})
    result = {"changed": bool(ops), "patch": ops, "diff": diff, "released": release}
    if not ops or (check and not dry_run_in_check):
        return result
    patch_file = patch_file or "/tmp/ainet-fabric-patch-%s.json" % uuid.uuid4().hex[:12]
    apply = ["config", "apply-patch"] + (["--dry-run"] if check else []) + [patch_file]
    steps = ((["sh", "-c", "umask 077 && set -C && cat > %s" % patch_file], json.dumps(ops, indent=2)),
             ((["sudo", "-n"] if sudo else []) + apply, None))
    try:
        for argv, data in steps:
            rc, out, err = run(argv, data)
            if rc != 0:
                raise PushError("%s failed (rc %d): %s" % (" ".join(argv[:4]), rc, (err or out).strip()[-500:]))
    finally:
        run(["rm", "-f", patch_file])
    return result
