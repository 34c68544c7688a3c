# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja2 filter of the RDMA host facts; all logic lives in module_utils."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.ainet.fabric.plugins.module_utils.rdma.rdma_parse import parse_rdma as _parse_rdma


def parse_rdma(text, format):  # noqa: A002 - the documented argument name
    try:
        return _parse_rdma(text, format)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule(object):
    """ainet.fabric RDMA filters."""

    def filters(self):
        return {"parse_rdma": parse_rdma}
