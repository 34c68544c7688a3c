# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja2 filters that split the credentials off a repository URL, or redact them in a URL a message names; all
logic lives in module_utils."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.ainet.fabric.plugins.module_utils.common import secrets


def url_credentials(url, field="url", owner="ainet.fabric"):
    try:
        return secrets.url_credentials(url, field, owner)
    except secrets.SecretError as exc:
        raise AnsibleFilterError(str(exc)) from None


def redact_url(url):
    return secrets.redact_url(url)


class FilterModule(object):
    """ainet.fabric secret filters."""

    def filters(self):
        return {"url_credentials": url_credentials, "redact_url": redact_url}
