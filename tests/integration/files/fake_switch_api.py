"""Stand-in switch APIs for the push tests (protocol level, not a NOS): the NVUE REST API on port 8765 and
Arista eAPI on port 8080, both plain HTTP with basic authentication, keeping state so that a second push
finds nothing to change. Every request is appended to the log file given as argv[1]; argv[2], when given, is a JSON file with the starting
state. `GET /state` returns the whole state (for the tests' verdict)."""

import base64
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

LOG = sys.argv[1]
AUTH = "Basic " + base64.b64encode(b"admin:sw1tch-pw").decode()
STATE = {"applied": {"system": {"hostname": "leaf"}}, "revisions": {}, "running": "hostname leaf\n", "sessions": {}}
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


servers = [ThreadingHTTPServer(("127.0.0.1", port), Handler) for port in (8765, 8080)]
for server in servers:
    threading.Thread(target=server.serve_forever, daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
