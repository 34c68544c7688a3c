"""Stand-in switch APIs for the push tests (protocol level, not a NOS): the NVUE REST API on port 8765,
Arista eAPI on port 8080 and Cisco NX-API CLI (`POST /ins`, `cli_show_ascii` / `cli_conf`) on port 8081, all
plain HTTP with basic authentication, keeping state so that a second push finds nothing to change. Every
request is appended to the log file given as argv[1]; argv[2], when given, is a JSON file with the starting
state. `GET /state` returns the whole state (for the tests' verdict)."""

import base64
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

LOG = sys.argv[1]
AUTH = "Basic " + base64.b64encode(b"admin:sw1tch-pw").decode()
STATE = {"applied": {"system": {"hostname": "leaf"}}, "revisions": {}, "running": "hostname leaf\n", "sessions": {},
         "nxos": "hostname leaf\nfeature nxapi\n"}
NXOS_BLOCKS = ("interface ", "class-map ", "policy-map ", "class ", "system qos", "vlan ")
if len(sys.argv) > 2:  # a JSON file with the switches' starting state: {"applied": {...}, "running": "..."}
    with open(sys.argv[2]) as handle:
        STATE.update(json.load(handle))


def merge(into, more):
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = json.loads(json.dumps(value))


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        url = urlparse(self.path)
        if url.path == "/state":
            return self.reply(200, STATE)
        with open(LOG, "a") as log:
            log.write(json.dumps({"port": self.server.server_port, "method": self.command, "path": url.path,
                                  "query": url.query, "auth": self.headers.get("Authorization") == AUTH,
                                  "body": body}) + "\n")
        if self.headers.get("Authorization") != AUTH:
            return self.reply(401, {"title": "Unauthorized", "detail": "bad credentials"})
        if self.server.server_port == 8765:
            return self.nvue(url, body)
        if self.server.server_port == 8081:
            return self.nxapi(body)
        return self.eapi(body)

    do_GET = do_POST = do_PATCH = do_DELETE = handle_any

    def nvue(self, url, body):
        query = parse_qs(url.query)
        if url.path == "/nvue_v1/" and self.command == "GET":
            return self.reply(200, STATE["applied"])
        if url.path == "/nvue_v1/revision" and self.command == "POST":
            rev = "changeset/admin/%d" % (len(STATE["revisions"]) + 1)
            STATE["revisions"][rev] = {"state": "pending", "tree": {}, "unset": []}
            return self.reply(200, {rev: {"state": "pending", "transition": {"issue": {}, "progress": ""}}})
        if url.path == "/nvue_v1/" and self.command == "PATCH":
            merge(STATE["revisions"][query["rev"][0]]["tree"], body)
            return self.reply(200, body)
        if url.path.startswith("/nvue_v1/interface/") and self.command == "DELETE":
            STATE["revisions"][query["rev"][0]]["unset"].append(url.path[len("/nvue_v1/"):].split("/"))
            return self.reply(200, {})
        if url.path.startswith("/nvue_v1/revision/"):
            rev = STATE["revisions"][unquote(url.path[len("/nvue_v1/revision/"):])]
            if self.command == "PATCH" and body.get("state") == "apply":
                merge(STATE["applied"], rev["tree"])
                for path in rev["unset"]:
                    node = STATE["applied"]
                    for key in [unquote(p) for p in path[:-1]]:
                        node = node.get(key, {})
                    node.pop(unquote(path[-1]), None)
                rev["state"] = "applied"
            return self.reply(200, {"state": rev["state"], "transition": {"issue": {}, "progress": ""}})
        return self.reply(404, {"title": "Not Found"})

    def eapi(self, body):
        outputs, session = [], None
        running = {line.strip() for line in STATE["running"].splitlines()}
        for cmd in body["params"]["cmds"]:
            out = ""
            if cmd == "show running-config":
                out = STATE["running"]
            elif cmd.startswith("configure session "):
                session = cmd.split()[2]
                STATE["sessions"].setdefault(session, [])
            elif cmd.startswith("show session-config named "):
                lines = STATE["sessions"].get(cmd.split()[3], [])
                out = "".join("+%s\n" % line for line in lines if line not in running)
            elif cmd == "commit":
                STATE["running"] += "".join(line + "\n" for line in STATE["sessions"].pop(session))
            elif cmd == "abort":
                STATE["sessions"].pop(session, None)
            elif cmd not in ("enable", "end", "exit") and session is not None:
                STATE["sessions"][session].append(cmd)
            outputs.append({"output": out})
        return self.reply(200, {"jsonrpc": "2.0", "id": body.get("id"), "result": outputs})

    def nxapi(self, body):
        """NX-API CLI: the running configuration as a tree of [line, children]; `cli_conf` enters blocks, adds
        or replaces lines (a line with the same first two words; `match` lines add up), `no <line>` removes one
        (`no <words>` the line they begin, as `no description` does on NX-OS), `exit` leaves a block."""
        request = body["ins_api"]
        commands = [c.strip() for c in request["input"].split(" ;")]
        if request["type"] == "cli_show_ascii":
            outputs = [{"input": c, "msg": "Success", "code": "200", "body": STATE["nxos"]} for c in commands]
        else:
            root = nxos_tree(STATE["nxos"])
            stack = [root]
            for command in commands:
                node = stack[-1]
                if command == "exit":
                    stack.pop()
                elif command.startswith("no "):
                    # as NX-OS: `no <line>` removes that line, and a shorter `no` form (`no description`, `no
                    # mtu`) removes the line it names whatever its value
                    node[:] = [c for c in node if c[0] != command[3:] and not c[0].startswith(command[3:] + " ")]
                elif command.startswith(NXOS_BLOCKS):
                    child = next((c for c in node if c[0] == command), None)
                    if child is None:
                        child = [command, []]
                        node.append(child)
                    stack.append(child[1])
                else:
                    same = [c for c in node if not command.startswith("match ") and nxos_key(c[0]) == nxos_key(command)]
                    if same:
                        same[0][0] = command
                    elif command not in [c[0] for c in node]:
                        node.append([command, []])
            STATE["nxos"] = nxos_text(root)
            outputs = [{"body": {}, "msg": "Success", "code": "200"} for _c in commands]
        return self.reply(200, {"ins_api": {"type": request["type"], "version": "1.0", "sid": "eoc",
                                            "outputs": {"output": outputs[0] if len(outputs) == 1 else outputs}}})


def nxos_key(line):
    """What a line sets: `description`, else its first three words that are not numbers or addresses."""
    words = [w for w in line.split() if not w[0].isdigit()]
    return "description" if words[0] == "description" else " ".join(words[:3])


def nxos_tree(text):
    root, stack = [], []
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("!"):
            continue
        depth = (len(raw) - len(raw.lstrip(" "))) // 2
        del stack[depth:]
        node = [raw.strip(), []]
        (stack[-1][1] if stack else root).append(node)
        stack.append(node)
    return root


def nxos_text(nodes, depth=0):
    return "".join("  " * depth + line + "\n" + nxos_text(children, depth + 1) for line, children in nodes)


servers = [ThreadingHTTPServer(("127.0.0.1", port), Handler) for port in (8765, 8080, 8081)]
for server in servers:
    threading.Thread(target=server.serve_forever, daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
