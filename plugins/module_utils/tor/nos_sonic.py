# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""SONiC: everything this collection knows about the NOS, in one module (see :mod:`platforms`).

**Render.** ``render_sonic(intent)`` returns the ``config_db`` tables SONiC needs for the ToR's rail
ports, as a dict ready for ``json.dumps`` (``config load`` input, or the source of a Generic Config
Updater patch); the file is ``<switch>.json``, read back by ``parse_qos`` as ``sonic_config_db``:

* ``PORT``: every rail port admin up, its MTU, description, and ``speed`` (Mb/s) / ``fec`` when
  the model sets them;
* L3 by addressing mode: exclusive/p2p: ``INTERFACE`` with the plan's gateway address on the port;
  shared: one VLAN per rail with the ports untagged members and the rail gateway on
  ``VLAN_INTERFACE``;
* ``FEATURE|lldp`` enabled;
* the lossless profile: ``DSCP_TO_TC_MAP`` ``AINET`` (the RoCE and CNP DSCPs on their priorities,
  every other DSCP on 0), identity ``TC_TO_QUEUE_MAP`` / ``TC_TO_PRIORITY_GROUP_MAP`` /
  ``MAP_PFC_PRIORITY_TO_QUEUE``, ``PORT_QOS_MAP`` per port with ``pfc_enable``, ``WRED_PROFILE``
  ``AINET_LOSSLESS`` (ECN on every colour at the profile's thresholds) on the ECN queues,
  ``SCHEDULER`` with the ETS weights and a strict CNP queue, ``PFC_WD`` on every port when the
  profile wants the watchdog, and ``BUFFER_PG`` lossless priority groups with ``"profile": "NULL"``
  (SONiC's dynamic buffer model computes their headroom).

Every value is a string, as in config_db. Objects this collection names start with ``AINET``.

**Validate.** ``validate_sonic(config_db, models_dir)``: the SONiC YANG models (``sonic-buildimage``
``src/sonic-yang-models/yang-models``; no registry packages them, so the directory is given) through
libyang: config_db is translated to YANG JSON (:func:`sonic_yang_json`) and parsed strictly, which
rejects unknown tables and fields, bad enums and ranges, and map or profile references that point
nowhere. A fragment is judged merged into the running config_db (:func:`merged_config_db`): SONiC
ports need ``lanes`` and ``speed``, which only the device has.

**Diff.** The fragment against the running config_db as trees (:func:`tor_diff.tree_diff`).

**Push**, over SSH (the host's own connection), with the Generic Config Updater (sonic-net/sonic-utilities
``config/main.py``): ``config apply-patch [-f CONFIGDB|SONICYANG] [-d|--dry-run] [-v] PATCH_FILE_PATH``
applies an RFC 6902 patch of config_db (validated against the YANG models, no reload), prints ``Patch
applied successfully.`` or ``Failed to apply patch`` and the error (exit status non-zero); ``config`` needs
root. The running config_db comes from ``sonic-cfggen -d --print-data`` (what ``config save`` writes).
Rail ports still marked ``[ainet]`` but no longer planned lose the keys this collection put on them
(:func:`sonic_release_patch`).

**Ports.** SONiC names front-panel ports ``Ethernet<n>`` (``Ethernet0``, ``Ethernet4``...; sonic-buildimage
``device/*/port_config.ini``); MTU up to 9216 (the ``PORT`` YANG model's ``mtu`` range 1..9216).
"""

from __future__ import annotations

import json
import os
import re
import uuid

from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_diff import lookup, owned_stale, tree_diff
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_intent import ValidatorUnavailable, is_owned
from ansible_collections.ainet.fabric.plugins.module_utils.tor.tor_push import PushError

# ----------------------------------------------------------------------------- registry facts
NAME = "sonic"
TITLE = "SONiC"
QOS_FORMAT = "sonic_config_db"
EXTENSION = "json"
RUNNING_EXTENSIONS = (".json",)
PORT_TEMPLATE = "Ethernet{node}"
PORT_MTU = 9216
PORT_MTU_MAX = 9216
PORT_NAME = "Ethernet<n>"
PORT_NAME_RE = re.compile(r"^Ethernet[0-9]+\Z")
PUSH = "ssh"
HTTP_PORT = None

MAP = "AINET"
WRED = "AINET_LOSSLESS"
STRICT = "AINET_STRICT"
WATCHDOG = {"action": "drop", "detection_time": "200", "restoration_time": "200"}
FEC = {"rs": "rs", "fc": "fc", "none": "none"}
LIBYANG = "libyang==2.7.1 (with the Debian packages libyang2-dev and libpcre2-dev)"


def invalid_ports(names):
    """The names in ``names`` that are not SONiC port names."""
    return [name for name in names if not PORT_NAME_RE.match(name)]


def render(intent, header):
    """(file text, push data) of one ToR: the config_db fragment as JSON (JSON has no comments, so the
    header is not written)."""
    data = render_sonic(intent)
    return json.dumps(data, indent=4, sort_keys=True) + "\n", data


def validate(item, running_text, options):
    """(violations, note) of a rendered fragment against the SONiC YANG models, merged into the running
    config_db; a note says why it was not checked."""
    models_dir = options.get("sonic_yang_dir")
    if not models_dir:
        return [], "SONiC YANG check skipped: sonic_yang_dir not given"
    if running_text is None:
        return [], "SONiC YANG check skipped: a config_db fragment is checked merged into the running config_db"
    return validate_sonic(merged_config_db(json.loads(running_text), item["data"]), models_dir), None


def running_diff(running_text, rendered):
    """Diff items of a rendered fragment against the running config_db (JSON text)."""
    running = json.loads(running_text) if running_text.strip() else {}
    return tree_diff(rendered["data"], running)


def stale_ports(running_text, rendered):
    """Ports the running config_db still marks ``[ainet]`` that the fragment no longer has."""
    if not running_text or not running_text.strip():
        return []
    ports = {name: (fields or {}).get("description") for name, fields in
             (json.loads(running_text).get("PORT") or {}).items()}
    return owned_stale(ports, set(rendered["data"].get("PORT") or {}))


def push(connection, item, check=False):
    """Push a rendered item; ``connection`` is ``run(argv, data=None) -> (rc, stdout, stderr)`` on the switch."""
    return sonic_push(connection, item["data"], check=check)


# ----------------------------------------------------------------------------- render

def merged_config_db(running, fragment):
    """A copy of config_db ``running`` with the fragment's tables, keys and fields laid over it (what the
    switch holds after ``config load`` of the fragment; the SONiC YANG models judge this, not the fragment)."""
    out = {table: {key: dict(fields or {}) for key, fields in entries.items()} for table, entries in running.items()}
    for table, entries in fragment.items():
        for key, fields in entries.items():
            out.setdefault(table, {}).setdefault(key, {}).update(fields)
    return out


def _dwrr(queue):
    return "AINET_DWRR_%d" % queue


def render_sonic(intent):
    """The config_db fragment of one ToR (see the module docstring)."""
    out = {"PORT": {}, "FEATURE": {"lldp": {"state": "enabled"}}}
    for entry in intent["ports"]:
        port = {"admin_status": "up", "mtu": str(entry["mtu"]), "description": entry["description"]}
        if entry["speed"]:
            port["speed"] = str(int(entry["speed"].rstrip("G")) * 1000)
        if entry["fec"]:
            port["fec"] = FEC[entry["fec"]]
        out["PORT"][entry["port"]] = port
    if intent["mode"] in ("exclusive", "p2p"):
        out["INTERFACE"] = {}
        for entry in intent["ports"]:
            out["INTERFACE"][entry["port"]] = {}
            out["INTERFACE"]["%s|%s" % (entry["port"], entry["address"])] = {}
    else:
        out["VLAN"], out["VLAN_MEMBER"], out["VLAN_INTERFACE"] = {}, {}, {}
        for svi in intent["svis"]:
            vlan = "Vlan%d" % svi["vlan"]
            out["VLAN"][vlan] = {"vlanid": str(svi["vlan"]), "mtu": str(svi["mtu"])}
            out["VLAN_INTERFACE"][vlan] = {}
            out["VLAN_INTERFACE"]["%s|%s" % (vlan, svi["address"])] = {}
        for entry in intent["ports"]:
            out["VLAN_MEMBER"]["Vlan%d|%s" % (entry["vlan"], entry["port"])] = {"tagging_mode": "untagged"}
    if intent["qos"]:
        _qos(out, intent["qos"], [e["port"] for e in intent["ports"]])
    return out


def _qos(out, q, ports):
    dscp_map = {str(d): "0" for d in range(64)}
    for dscp, priority in q["dscp_to_priority"].items():
        dscp_map[str(dscp)] = str(priority)
    identity = {str(p): str(queue) for p, queue in q["priority_to_queue"].items()}
    out["DSCP_TO_TC_MAP"] = {MAP: dscp_map}
    out["TC_TO_QUEUE_MAP"] = {MAP: dict(identity)}
    out["TC_TO_PRIORITY_GROUP_MAP"] = {MAP: dict(identity)}
    out["MAP_PFC_PRIORITY_TO_QUEUE"] = {MAP: dict(identity)}
    pfc = ",".join(str(p) for p in q["pfc"])
    out["PORT_QOS_MAP"] = {port: {"dscp_to_tc_map": MAP, "tc_to_queue_map": MAP, "tc_to_pg_map": MAP,
                                  "pfc_to_queue_map": MAP, "pfc_enable": pfc}
                           for port in ports}
    ecn = q["ecn"]
    if ecn:
        wred = {"ecn": "ecn_all"}
        for colour in ("green", "yellow", "red"):
            wred.update({"wred_%s_enable" % colour: "true",
                         "%s_min_threshold" % colour: str(ecn["min_bytes"]),
                         "%s_max_threshold" % colour: str(ecn["max_bytes"]),
                         "%s_drop_probability" % colour: str(ecn["probability"])})
        out["WRED_PROFILE"] = {WRED: wred}
    schedulers = {}
    if q["strict_queues"]:
        schedulers[STRICT] = {"type": "STRICT"}
    for queue, weight in sorted(q["ets"].items()):
        schedulers[_dwrr(queue)] = {"type": "DWRR", "weight": str(weight)}
    queues = {}
    for port in ports:
        for queue in range(8):
            entry = {}
            if queue in q["strict_queues"]:
                entry["scheduler"] = STRICT
            elif queue in q["ets"]:
                entry["scheduler"] = _dwrr(queue)
            if ecn and queue in ecn["queues"]:
                entry["wred_profile"] = WRED
            if entry:
                queues["%s|%d" % (port, queue)] = entry
    if schedulers:
        out["SCHEDULER"] = schedulers
    if queues:
        out["QUEUE"] = queues
    if q["watchdog"]:
        out["PFC_WD"] = {port: dict(WATCHDOG) for port in ports}
        out["PFC_WD"]["GLOBAL"] = {"POLL_INTERVAL": "200"}
        for port in ports:
            out["PORT_QOS_MAP"][port]["pfcwd_sw_enable"] = pfc
    out["BUFFER_PG"] = {"%s|%d" % (port, prio): {"profile": "NULL"} for port in ports for prio in q["buffer_lossless"]}


# ----------------------------------------------------------------------------- SONiC YANG

_INTS = frozenset(range(2, 5)) | frozenset((16, 17, 18))   # libyang Type.UINT8..UINT32, INT8..INT32
_BOOL = 8
_LEAFREF = 14
_CONTEXTS = {}


def _libyang():
    try:
        import libyang  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise ValidatorUnavailable("validating SONiC config_db needs the Python package %s" % LIBYANG) from None
    return libyang


def _sonic_context(models_dir):
    if models_dir in _CONTEXTS:
        return _CONTEXTS[models_dir]
    if not models_dir or not os.path.isdir(models_dir):
        raise ValidatorUnavailable("validating SONiC config_db needs the SONiC YANG models: a directory with "
                                   "sonic-buildimage's src/sonic-yang-models/yang-models/*.yang and its rendered "
                                   "yang-templates (got %r)" % (models_dir,))
    libyang = _libyang()
    ctx = libyang.Context(models_dir)
    names = sorted(f[:-5] for f in os.listdir(models_dir) if f.endswith(".yang"))
    for name in names:
        ctx.load_module(name)
    tables = {}
    for name in names:
        for node in ctx.find_path("/%s:%s/*" % (name, name)) if _has_top(ctx, name) else ():
            tables[node.name()] = (name, node)
    _CONTEXTS[models_dir] = (ctx, tables)
    return ctx, tables


def _has_top(ctx, name):
    try:
        return next(iter(ctx.find_path("/%s:%s" % (name, name))), None) is not None
    except Exception:  # pylint: disable=broad-except
        return False


def _value(leaf, text):
    """A config_db string as the JSON value libyang wants for ``leaf``."""
    kind = leaf.type()
    base = kind.base()
    if base == _LEAFREF:
        base = kind.leafref_type().base()
    if type(leaf).__name__ == "SLeafList":
        return [_scalar(base, item) for item in str(text).split(",") if item != ""]
    return _scalar(base, text)


def _scalar(base, text):
    if base in _INTS and re.match(r"^-?[0-9]+$", str(text)):
        return int(text)
    if base == _BOOL and str(text).lower() in ("true", "false"):
        return str(text).lower() == "true"
    return str(text)


def sonic_yang_json(config_db, tables):
    """config_db (``{TABLE: {key: {field: value}}}``) as YANG JSON, and the tables no model knows."""
    out, unknown = {}, []
    for table, entries in sorted(config_db.items()):
        if table not in tables:
            unknown.append(table)
            continue
        module, container = tables[table]
        lists = [c for c in container.children() if type(c).__name__ == "SList"]
        groups = {c.name(): c for c in container.children() if type(c).__name__ == "SContainer"}
        body = {}
        for key, fields in sorted(entries.items()):
            if key in groups:
                # A table of fixed entries (DEVICE_METADATA|localhost): a container per key.
                children = {c.name(): c for c in groups[key].children()}
                body[key] = {field: _value(children[field], value) if field in children else value
                             for field, value in sorted((fields or {}).items())}
                continue
            parts = key.split("|")
            slist = next((c for c in lists if len(list(c.keys())) == len(parts)), None)
            if slist is None:
                unknown.append("%s|%s (no list of %s has %d keys)" % (table, key, table, len(parts)))
                continue
            children = {c.name(): c for c in slist.children()}
            entry = {name: _value(children[name], part)
                     for name, part in zip([k.name() for k in slist.keys()], parts)}
            inner = children.get(table)
            for field, value in sorted((fields or {}).items()):
                if inner is not None and type(inner).__name__ == "SList" and field not in children:
                    # A map table: {"0": "1"} -> a list of {key leaf, value leaf}.
                    leaves = list(inner.children())
                    entry.setdefault(table, []).append({leaves[0].name(): _value(leaves[0], field),
                                                        leaves[1].name(): _value(leaves[1], value)})
                elif field in children and type(children[field]).__name__ in ("SLeaf", "SLeafList"):
                    entry[field] = _value(children[field], value)
                else:
                    entry[field] = value   # libyang names the unknown field
            body.setdefault(slist.name(), []).append(entry)
        out.setdefault("%s:%s" % (module, module), {})[table] = body
    return out, unknown


def validate_sonic(config_db, models_dir):
    """Violations of a config_db (a whole one, or a fragment merged into the running config) against the
    SONiC YANG models in ``models_dir``."""
    ctx, tables = _sonic_context(models_dir)
    data, unknown = sonic_yang_json(config_db, tables)
    problems = ["%s: no SONiC YANG model has this table" % name for name in unknown]
    try:
        tree = ctx.parse_data_mem(json.dumps(data), "json", strict=True, validate_present=True)
    except Exception as exc:  # libyang.LibyangError; its message names the path
        return problems + [str(exc)]
    if tree is not None:
        tree.free()
    return problems


# ----------------------------------------------------------------------------- push (Generic Config Updater)

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
        if lookup(running, entry) is not None:
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
        diff.append({"path": path, "before": lookup(running, path), "after": None})
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
