# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A test lab's connection to a switch that is a network namespace of this machine (the VM tier's bridges).

Not part of the collection: the VM tier's lossless load test points ``ANSIBLE_CONNECTION_PLUGINS`` here and gives
its Linux ToR ``ansible_connection: lab_netns`` and ``ansible_host: <namespace>``. A command runs as
``ip netns exec <namespace> /bin/sh -c <command>``, as it would in a login shell on a Linux switch over SSH."""

from __future__ import annotations

DOCUMENTATION = """
name: lab_netns
short_description: run commands in a network namespace of the controller (test labs only)
description:
  - Runs each command with C(ip netns exec <namespace> /bin/sh -c <command>) on the controller. No file transfer.
author: ainet.fabric contributors
options:
  remote_addr:
    description: The network namespace.
    default: inventory_hostname
    vars:
      - name: inventory_hostname
      - name: ansible_host
"""

import subprocess

from ansible.errors import AnsibleError
from ansible.plugins.connection import ConnectionBase


class Connection(ConnectionBase):
    """Commands in a network namespace."""

    transport = "lab_netns"
    has_pipelining = False

    def _connect(self):
        self._connected = True
        return self

    def exec_command(self, cmd, in_data=None, sudoable=True):
        super().exec_command(cmd, in_data=in_data, sudoable=sudoable)
        namespace = self.get_option("remote_addr")
        done = subprocess.run(["ip", "netns", "exec", namespace, "/bin/sh", "-c", cmd], input=in_data,
                              capture_output=True, check=False, timeout=120)
        return done.returncode, done.stdout, done.stderr

    def put_file(self, in_path, out_path):
        raise AnsibleError("lab_netns transfers no files (%s)" % in_path)

    def fetch_file(self, in_path, out_path):
        raise AnsibleError("lab_netns transfers no files (%s)" % in_path)

    def close(self):
        self._connected = False
