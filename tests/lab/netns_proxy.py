"""Relay stdin/stdout to a TCP port: SSH's ProxyCommand into the lab.

The lab's management network exists only inside the ``<prefix>-mgmt`` network
namespace, so ssh reaches a node through this relay, which re-runs itself there:

    ProxyCommand=python3 netns_proxy.py [--prefix PREFIX | --netns NAMESPACE] %h %p

(the prefix defaults to the lab's own, see labname.py; ``--netns`` names the namespace
outright, as the VM tier's tests/vm/vms.sh does).

``--wait SECONDS`` instead polls until the port sends an SSH banner, then exits
0 (1 on time-out).
"""

from __future__ import annotations

import os
import selectors
import socket
import sys
import time


def wait(host, port, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=2) as sock:
                if sock.recv(64).startswith(b"SSH-"):
                    return 0
        except OSError:
            pass
        time.sleep(0.3)
    return 1


def relay(host, port):
    sock = socket.create_connection((host, port), timeout=10)
    sock.settimeout(None)
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ, "stdin")
    selector.register(sock, selectors.EVENT_READ, "socket")
    while True:
        for key, _events in selector.select():
            if key.data == "stdin":
                data = os.read(0, 65536)
                if data:
                    sock.sendall(data)
                else:
                    selector.unregister(0)
                    sock.shutdown(socket.SHUT_WR)
            else:
                data = sock.recv(65536)
                if not data:
                    return 0
                view = memoryview(data)
                while view:
                    view = view[os.write(1, view):]


def main(argv):
    namespace = None
    if argv[:1] == ["--prefix"]:
        os.environ["AINET_LAB_PREFIX"] = argv[1]
        argv = argv[2:]
    elif argv[:1] == ["--netns"]:
        namespace, argv = argv[1], argv[2:]
    if os.environ.get("AINET_LAB_INSIDE") != "1":
        if namespace is None:
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            from labname import prefix  # pylint: disable=import-outside-toplevel
            namespace = prefix() + "-mgmt"
        os.environ["AINET_LAB_INSIDE"] = "1"
        os.execvp("ip", ["ip", "netns", "exec", namespace, sys.executable, os.path.abspath(__file__)] + argv)
    if argv[:1] == ["--wait"]:
        return wait(argv[2], int(argv[3]), float(argv[1]))
    return relay(argv[0], int(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
