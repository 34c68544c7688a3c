# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja2 filter of the gpu_host role; all logic lives in module_utils (gpu_host_state.operator_group)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.ainet.fabric.plugins.module_utils.host import gpu_host_state


def gpu_operator_group(results):
    """The GPU operator values a group of nodes agrees on, and one line per value they set differently."""
    if not isinstance(results, dict):
        raise AnsibleFilterError("gpu_operator_group: the input must map host names to gpu_host's gpu_operator "
                                 "results, got %s" % type(results).__name__)
    return gpu_host_state.operator_group(dict((host, value if isinstance(value, dict) else None)
                                              for host, value in results.items()))


class FilterModule(object):
    """ainet.fabric gpu_host filters."""

    def filters(self):
        return {"gpu_operator_group": gpu_operator_group}
