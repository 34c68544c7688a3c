# -*- coding: utf-8 -*-
"""What runs on the nodes must parse on their oldest supported Python.

ansible-core 2.19 runs modules on Python 3.8 and later; the oldest platform Python the roles
declare is EL 9's 3.9 (EL 8's 3.6 is not supported by ansible-core 2.19 on targets, so EL 8 is
not declared). The controller-only code (action and filter plugins) runs on the controller's
Python and is not checked here.
"""

from __future__ import annotations

import ast
import glob
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET_CODE = sorted(glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py"))
                     + glob.glob(os.path.join(ROOT, "plugins", "module_utils", "**", "*.py"), recursive=True))


@pytest.mark.parametrize("path", TARGET_CODE, ids=lambda p: os.path.relpath(p, ROOT))
def test_parses_as_python_3_9(path):
    with open(path, encoding="utf-8") as handle:
        ast.parse(handle.read(), filename=path, feature_version=(3, 9))


def test_a_3_10_construct_is_caught():
    with pytest.raises(SyntaxError):
        ast.parse("match x:\n    case 1:\n        pass\n", feature_version=(3, 9))
