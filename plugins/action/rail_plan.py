# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side rail plan: compute once, write the report files, return a summary.

One task instead of a large set_fact plus a templated copy per file: Ansible
never templates or copies the plan itself unless ``return_plan`` asks for it.
"""

from __future__ import annotations

import os
import tempfile

from ansible.plugins.action import ActionBase

from ansible_collections.ainet.fabric.plugins.module_utils.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.plan_report import render
from ansible_collections.ainet.fabric.plugins.module_utils.rail_plan import rail_plan

REPORTS = (("plan.json", "json"), ("rails.csv", "csv"), ("rails.md", "markdown"), ("topology.mmd", "mermaid"))

ARGUMENT_SPEC = dict(
    cluster=dict(type="dict", required=True),
    nodes=dict(type="dict", required=True),
    output_dir=dict(type="path"),
    diagram_max_nodes=dict(type="int", default=64),
    return_plan=dict(type="bool", default=False),
)


def _read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _write(path, content):
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".ainet-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _unused, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        try:
            plan = rail_plan(args["cluster"], args["nodes"])
            reports = {name: render(plan, fmt, args["diagram_max_nodes"]) for name, fmt in REPORTS} \
                if args["output_dir"] else {}
        except FabricError as exc:
            result.update(failed=True, msg=str(exc))
            return result

        changed_files, diffs = [], []
        out = args["output_dir"]
        for name, content in reports.items():
            path = os.path.join(out, name)
            before = _read(path)
            if before != content:
                changed_files.append(path)
                diffs.append({"before_header": path, "after_header": path,
                              "before": before or "", "after": content})
        if changed_files and not self._task.check_mode:
            try:
                os.makedirs(out, exist_ok=True)
                for path in changed_files:
                    _write(path, reports[os.path.basename(path)])
            except OSError as exc:
                result.update(failed=True, msg="could not write the plan files in %s: %s" % (out, exc))
                return result

        result.update(changed=bool(changed_files), summary=plan["summary"], files=changed_files,
                      output_dir=out)
        if self._task.diff and diffs:
            result["diff"] = diffs
        if args["return_plan"]:
            result["plan"] = plan
        return result
