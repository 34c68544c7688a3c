# -*- coding: utf-8 -*-
"""Run a host module's task in-process the way Ansible runs it: through the action plugin of the same name
(``plugins/action/<name>.py``, the controller side: the model validated and this host's flat desired state
derived there, a bad model refused there), then the module itself (``plugins/modules/<name>.py``, the host
side) with the flat options the action sends it. Only the transport is left out: ``_execute_module`` runs the
module's ``main()`` in this process instead of shipping an AnsiballZ payload. Controller-side (it imports the action
plugins), so it and its tests live here, outside tests/unit/plugins/modules, which ``ansible-test units`` runs with
nothing of ansible-core but ``ansible.module_utils``."""

from __future__ import annotations

import importlib
from unittest import mock

from ansible.errors import AnsibleAction

from ansible_collections.ainet.fabric.tests.unit.plugins.modules.host_task import COLLECTION, run_module


def run_task(capsys, name, args, check=False, diff=True):
    """(result, module args) of a task ``ainet.fabric.<name>: args``; module args is None when the action refused
    the task on the controller (the module never ran)."""
    action = importlib.import_module("%s.action.%s" % (COLLECTION, name))
    task = mock.MagicMock(args=dict(args), async_val=0, check_mode=check, diff=diff, action="ainet.fabric." + name,
                          failed_when=[], until=[])
    plugin = action.ActionModule(task, mock.MagicMock(), mock.MagicMock(), None, None)
    sent = []

    def execute_module(module_args=None, task_vars=None, **_kwargs):
        sent.append(dict(module_args))
        return run_module(capsys, name, module_args, check, diff)

    with mock.patch.object(plugin, "_execute_module", execute_module):
        try:
            result = plugin.run(task_vars={})
        except AnsibleAction as exc:
            # ansible-core 2.19: a refusal is raised with the task's failed result (plugins/plugin_utils/one_line.py);
            # the task executor turns it into that result, as here.
            result = exc.result
    return result, (sent[0] if sent else None)
