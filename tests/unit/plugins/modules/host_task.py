# -*- coding: utf-8 -*-
"""Run a host module in-process with exactly its own (flat) options, as the host runs it: ``plugins/modules/<name>.py``'s
``main()``. Module-side only (``ansible-test units`` runs tests/unit/plugins/modules with nothing of ansible-core
but ``ansible.module_utils``); the whole task, through the action plugin first, is
tests/unit/plugins/action/task_runner.py."""

from __future__ import annotations

import importlib
import json

import pytest
from ansible.module_utils.testing import patch_module_args

COLLECTION = "ansible_collections.ainet.fabric.plugins"


def run_module(capsys, name, args, check=False, diff=True):
    """The result of module ``name`` run in-process with exactly ``args`` (its own options)."""
    module = importlib.import_module("%s.modules.%s" % (COLLECTION, name))
    with patch_module_args(dict(args, _ansible_check_mode=check, _ansible_diff=diff)):
        with pytest.raises(SystemExit):
            module.main()
    return json.loads(capsys.readouterr().out)
