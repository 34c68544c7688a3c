# -*- coding: utf-8 -*-
"""Loading extensions/awx for the AWX tests: the configuration as configure_aap reads it, and the project.

infra.aap_configuration's configure_aap loads every ``*.yml`` under ``aap_configs_dir`` with
include_vars (redhat-cop/infra.aap_configuration@f2302146 playbooks/configure_aap.yml); its YAML is
Ansible's, where ``!unsafe`` marks a string Ansible must not template (here: AWX's own injector
templates), which reaches AWX as the plain string.
"""

from __future__ import annotations

import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AWX = os.path.join(ROOT, "extensions", "awx")
CONFIGS_DIR = os.path.join(AWX, "configs")
CONFIG_PATH = os.path.join(CONFIGS_DIR, "controller_config.yml")
PROJECT_PLAYBOOKS = os.path.join(AWX, "project", "playbooks")
# The AWX project's one-line playbooks are not in the tarball (galaxy.yml build_ignore: Galaxy's importer cannot
# resolve ainet.fabric.<job>): in an installed tree (MANIFEST.json) their tests have nothing to read; in the checkout
# they must be there.
NO_PROJECT = os.path.isfile(os.path.join(ROOT, "MANIFEST.json"))
NO_PROJECT_REASON = "extensions/awx/project is not in the installed collection (galaxy.yml build_ignore)"


class Unsafe(str):
    """A string Ansible leaves untemplated (``!unsafe``)."""


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor("!unsafe", lambda loader, node: Unsafe(loader.construct_scalar(node)))


def load_yaml(path):
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_Loader)  # nosec: a SafeLoader with one more tag


def load_config():
    return load_yaml(CONFIG_PATH)
