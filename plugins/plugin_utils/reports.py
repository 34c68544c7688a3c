# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the controller-side jobs that read the nodes share (cabling check, link test): the report files they
write (only when their content changed, never in check mode, one error line naming the file), and the nodes'
registered link states."""

from __future__ import annotations

import json

from ansible.errors import AnsibleActionFail

from ansible_collections.ainet.fabric.plugins.module_utils.host.host_files import read_text, write_atomic


def write_reports(files, check_mode, who):
    """Write ``{path: text}`` where the file's content differs; returns whether any differed (check mode:
    would differ). Raises AnsibleActionFail naming ``who`` and the file when one cannot be written."""
    changed = [path for path, text in files.items() if read_text(path) != text]
    if changed and not check_mode:
        for path in changed:
            try:
                write_atomic(path, files[path], "0644")
            except OSError as exc:
                raise AnsibleActionFail("%s: could not write %s: %s" % (who, path, exc.strerror or exc)) from None
    return bool(changed)


def link_states(registered):
    """``{interface: operstate}`` from a registered ``ip -j link show`` (empty when it did not run)."""
    try:
        links = json.loads((registered or {}).get("stdout") or "[]")
    except ValueError:
        return {}
    return dict((link.get("ifname"), link.get("operstate")) for link in links if isinstance(link, dict))
