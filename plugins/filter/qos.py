# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja2 filters of the lossless QoS check; all logic lives in module_utils."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.ainet.fabric.plugins.module_utils.qos.counters_parse import parse_counters as _parse_counters
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_report import load_report as _load_report
from ansible_collections.ainet.fabric.plugins.module_utils.qos.load_verdict import load_verdict as _load_verdict
from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_check import lossless_check as _lossless_check
from ansible_collections.ainet.fabric.plugins.module_utils.qos.lossless_check import lossless_diff as _lossless_diff
from ansible_collections.ainet.fabric.plugins.module_utils.qos.qos_parse import parse_qos as _parse_qos


def parse_qos(text, format, port=None):  # noqa: A002 - the documented argument name
    try:
        return _parse_qos(text, format, port)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


def lossless_diff(host, switch, port=None, profile=None, host_port=None):
    try:
        return _lossless_diff(host, switch, port, profile, host_port)
    except KeyError as exc:
        raise AnsibleFilterError(str(exc.args[0] if exc.args else exc)) from None
    except ValueError as exc:  # a profile that is neither a preset name nor a resolved profile
        raise AnsibleFilterError(str(exc)) from None


def lossless_check(host, switch, port=None, profile=None, host_port=None):
    try:
        return _lossless_check(host, switch, port, profile, host_port)
    except KeyError as exc:
        raise AnsibleFilterError(str(exc.args[0] if exc.args else exc)) from None
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


def parse_counters(data, format, port=None):  # noqa: A002 - the documented argument name
    try:
        return _parse_counters(data, format, port)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


def load_verdict(before, after, profile=None, port=None, host_port=None, priorities=None, seconds=None,
                 max_pause_ratio=0.5, max_storm_events=0, queues=None, congestion=None, role=None):
    try:
        return _load_verdict(before, after, profile, port, host_port, priorities, seconds, max_pause_ratio,
                             max_storm_events, queues, congestion, role)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


def load_report(runs, cluster=None, generated=None):
    try:
        return _load_report(runs, cluster, generated)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule(object):
    """ainet.fabric lossless QoS filters."""

    def filters(self):
        return {"parse_qos": parse_qos, "lossless_diff": lossless_diff, "lossless_check": lossless_check,
                "parse_counters": parse_counters,
                "load_verdict": load_verdict, "load_report": load_report}
