# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A few variables of many hosts, as ``hostvars[host][name]`` gives them, without building every host's whole
variable set.

``hostvars[host]`` runs ``VariableManager.get_vars(host=host, include_hostvars=False)`` and templates the value asked
for. For 1,024 hosts that is about a second of CPU, and most of it goes to work the nodes' variables do not need: the
magic variables, the facts cleaned and deep-copied for each host, the same group layers combined again for every
host of the same groups. This module reads the same layers in the same order as ``get_vars`` (ansible-core 2.16 to
2.19: ``ansible/vars/manager.py``, ``get_vars``):

1. the group layers, in ``VARIABLE_PRECEDENCE`` order (inventory ``all``, its group_vars plugins beside the inventory
   and beside the playbook, the host's other groups' inventory vars and their group_vars plugins), computed once per
   set of groups;
2. the host's inventory variables, then the vars plugins for the host beside the inventory and beside the playbook
   (host_vars);
3. the fact cache (``ansible_facts``; with ``INJECT_FACTS_AS_VARS``, the facts at top level);
4. ``include_vars``, then ``set_fact`` and ``register`` (the non-persistent fact cache), then the extra vars (``-e``);

each layer merged with Ansible's own ``combine_vars`` (so ``hash_behaviour`` and its merge are Ansible's). Only the
names asked for are combined, which gives the same values because ``combine_vars`` treats each top-level name on
its own.

Where the reading would need more than the layers, the host is read through ``hostvars`` itself, so the result is
always ``hostvars``' own:

* a value that may be a template (a string with a Jinja start string, at any depth: :func:`maybe_template`), or
  that is not plain data (a vaulted string; :func:`needs_templar`): ``hostvars`` renders (or decrypts) it in the
  host's context;
* a name that the host's fact cache also holds (``set_fact: cacheable``, facts injected at top level);
* ``ansible_facts`` where a layer above the facts sets it;
* anything that is not Ansible's ``HostVars`` (a plain mapping, as unit tests pass): read as a mapping.

``tests/unit/plugins/plugin_utils/test_inventory_vars.py`` compares the result with ``hostvars`` on inventories with
host_vars and group_vars files, a constructed inventory plugin, templated values, facts, ``set_fact`` and extra vars,
with both hash behaviours.
"""

from __future__ import annotations

import contextlib
import gc
import re

from ansible import constants as C
from ansible.inventory.helpers import get_group_vars, sort_groups
from ansible.utils.vars import combine_vars
from ansible.vars.hostvars import HostVars
from ansible.vars.plugins import get_vars_from_inventory_sources, get_vars_from_path

FACTS = "ansible_facts"
_MISSING = object()
# What Host.get_magic_vars() adds to a host's inventory variables (ansible-core 2.16 to 2.19).
_MAGIC = frozenset(("inventory_hostname", "inventory_hostname_short", "group_names"))


# What makes a string a template to ansible-core 2.16 to 2.19 (``is_possibly_template``): a start string of Jinja's
# (Ansible keeps Jinja's own: {{, {% and {#) or, at its start, a header that sets other ones.
_START_STRING = re.compile(r"\{[{%#]")
_OVERRIDE_HEADER = "#jinja2:"


def maybe_template(value):
    """Whether ``value`` holds a string that Ansible might render, at any depth: as ansible-core's
    ``is_possibly_template`` judges a string (a Jinja start string, or the ``#jinja2:`` header that sets others), so
    that a model's port template (``swp{local}``) is not taken for one."""
    if isinstance(value, str):
        return value.startswith(_OVERRIDE_HEADER) or ("{" in value and _START_STRING.search(value) is not None)
    if isinstance(value, dict):
        return any(maybe_template(k) or maybe_template(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(maybe_template(v) for v in value)
    return False


# Values ansible-core's templating gives back as they are, unless a string among them is a template.
_PLAIN_SCALARS = (str, int, float, bool, type(None))


def needs_templar(value):
    """Whether ansible-core's ``Templar.template`` may give back something other than ``value`` itself, at any depth: a
    string it may render (:func:`maybe_template`), or a value that is not plain data, which it transforms or leaves
    to ``hostvars`` to show (a vaulted string: ansible-core 2.19's ``EncryptedString``, decrypted through its
    ``_type_transform_mapping``; 2.16's ``AnsibleVaultEncryptedUnicode``)."""
    if isinstance(value, str):
        return maybe_template(value)
    if isinstance(value, dict):
        return any(needs_templar(k) or needs_templar(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(needs_templar(v) for v in value)
    return not isinstance(value, _PLAIN_SCALARS)


def _pick(data, names):
    return dict((name, data[name]) for name in names if name in data) if data else {}


def _facts_view(facts):
    """``namespace_facts(facts)['ansible_facts']`` without its deep copy (the values are only read)."""
    return dict((k[8:] if k.startswith("ansible_") and k != "ansible_local" else k, v) for k, v in facts.items())


class InventoryVars:
    """Reads ``names`` of many hosts from the variable manager behind ``hostvars`` (see the module's text)."""

    def __init__(self, hostvars, names):
        self._hostvars = hostvars
        self._names = tuple(names)
        self._groups_cache = {}
        self.fallbacks = []  # the hosts read through hostvars, for the tests and the curious
        manager = getattr(hostvars, "_variable_manager", None) if isinstance(hostvars, HostVars) else None
        self._manager = manager
        if manager is not None:  # what get_vars itself reads: the manager's inventory and loader
            self._inventory = manager._inventory
            self._loader = manager._loader
            self._basedirs = [self._loader.get_basedir()] if getattr(manager, "safe_basedir", False) else []

    def _plugins_inventory(self, entities):
        return get_vars_from_inventory_sources(self._loader, self._inventory._sources, entities, "task")

    def _plugins_play(self, entities):
        data = {}
        for path in self._basedirs:
            data = combine_vars(data, get_vars_from_path(self._loader, path, entities, "task"))
        return data

    def _group_layer(self, host_groups):
        """The group layers of get_vars for a host of these groups, the names asked for only."""
        key = tuple(g.name for g in host_groups)
        if key not in self._groups_cache:
            all_group = self._inventory.groups.get("all")
            entries = {
                "all_inventory": all_group.get_vars,
                "all_plugins_inventory": lambda: self._plugins_inventory([all_group]),
                "all_plugins_play": lambda: self._plugins_play([all_group]),
                "groups_inventory": lambda: get_group_vars(host_groups),
                "groups_plugins_inventory": lambda: self._plugins_inventory(host_groups),
                "groups_plugins_play": lambda: self._plugins_play(host_groups),
            }
            data = {}
            for entry in C.VARIABLE_PRECEDENCE:
                if entry in entries:  # get_vars warns about any other entry and skips it
                    data = combine_vars(data, _pick(entries[entry](), self._names))
            self._groups_cache[key] = data
        return self._groups_cache[key]

    def _read(self, name):
        """One host's names through the variable manager's layers; None where hostvars must answer."""
        host = self._inventory.hosts.get(name) or self._inventory.get_host(name)
        if host is None:
            return None
        manager, names = self._manager, self._names
        host_groups = sort_groups([g for g in host.get_groups() if g.name != "all"])
        data = dict(self._group_layer(host_groups))
        # Host.get_vars() is its inventory variables with its magic ones over them; built only where a name asked
        # for is one of those (a few microseconds per host, and per host of 16,384)
        own = host.get_vars() if _MAGIC & set(names) else host.vars
        for layer in (own, self._plugins_inventory([host]), self._plugins_play([host])):
            picked = _pick(layer, names)
            if picked:
                data = combine_vars(data, picked)
        if FACTS in data:
            return None  # ansible_facts in inventory: 2.16 merges the facts into it, 2.19 replaces it
        try:
            facts = manager._fact_cache.get(host.name)
        except KeyError:
            facts = None
        facts = facts or {}
        if FACTS in names:
            data[FACTS] = _facts_view(facts)  # get_vars: all_vars |= namespace_facts(facts)
        if C.INJECT_FACTS_AS_VARS and any(n in facts for n in names if n != FACTS):
            return None  # a fact at top level: hostvars cleans and wraps it
        later = {}
        for layer in (manager._vars_cache.get(host.name), manager._nonpersistent_fact_cache.get(host.name),
                      manager._extra_vars):
            picked = _pick(layer, names)
            if picked:
                later = combine_vars(later, picked)
        if FACTS in later:
            return None
        if later:
            data = combine_vars(data, later)
        if any(needs_templar(v) for n, v in data.items() if n != FACTS):
            return None
        return data

    def get(self, hosts):
        """``{host: {name: value}}`` for the names that are defined (as ``hostvars[host].get(name)`` would give)."""
        out = {}
        for name in hosts:
            data = self._read(name) if self._manager is not None else None
            if data is None:
                if self._manager is not None:
                    self.fallbacks.append(name)
                variables = self._hostvars[name]
                data = {}
                for key in self._names:
                    value = variables.get(key, _MISSING)
                    if value is not _MISSING:
                        data[key] = value
            out[name] = data
        return out


def host_variables(task_vars, hosts, names):
    """``{host: {name: value}}``: ``names`` of ``hosts`` as ``task_vars['hostvars']`` gives them."""
    return InventoryVars((task_vars or {}).get("hostvars") or {}, names).get(hosts)


@contextlib.contextmanager
def gc_paused():
    """Python's cyclic garbage collector off for a block that builds many containers and no cycles (a plan, its
    objects and their YAML for thousands of nodes): in a task's worker, forked from ansible-playbook with the whole
    inventory in memory, each full collection walks all of it, about a quarter of the time of building the objects.
    Memory is still freed by reference counting; the collector comes back on after the block."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
