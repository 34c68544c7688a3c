# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The opening of the controller-side actions that plan the whole node group (``cabling_check``, ``link_test``,
``lossless_test``, ``rail_plan``, ``k8s_objects``, ``tor_config`` ...): nothing is sent to a host, the task runs once
for the job.

:class:`PlanAction` does what each of them did first, in the same order:

1. the task's arguments checked against the action's :attr:`~PlanAction.ARGUMENT_SPEC` (and its
   :attr:`~PlanAction.ARGUMENT_RULES`: ``mutually_exclusive``, ``required_one_of`` ...), as
   ``ActionBase.validate_argument_spec`` checks them, without its deep copy of the large values
   (:meth:`~PlanAction.validate_arguments`);
2. the nodes: first, where the action takes them (``node_groups``: ``rail_plan``, ``tor_config``), the job's node
   groups checked in order, as the jobs' input check (check_input.yml) checks them (:func:`node_groups_hosts`); then,
   with ``node_group``, the group's hosts and their ``fabric_node_id`` and ``fabric_rail_interfaces``
   (and whatever else :attr:`~PlanAction.NODE_VARS` names) read once, with the values and precedence
   ``hostvars[node]`` gives (:mod:`inventory_vars`), instead of a ``node_map(hostvars)`` templated into the task's
   arguments; else ``nodes`` as the task gives them (:meth:`~PlanAction.nodes`, :func:`group_nodes`);
3. the cluster planned from the model (``cluster``, else the task's ``fabric_cluster``: :meth:`~PlanAction.cluster`)
   and the nodes (:meth:`~PlanAction.plan`);
4. bad input (a :class:`FabricError`, or whatever else :attr:`~PlanAction.REFUSED` names), raised anywhere in the
   action's :meth:`~PlanAction.act`, ends the task with its one line (field, value, Fix) through
   :func:`one_line.fail`, never a traceback.
"""

from __future__ import annotations

import contextlib

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.errors import UnsupportedError
from ansible.plugins.action import ActionBase

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import UNREADABLE, FabricError, FabricModelError
from ansible_collections.ainet.fabric.plugins.module_utils.plan.rail_plan import node_group_hosts, node_map, rail_plan
from ansible_collections.ainet.fabric.plugins.plugin_utils.inventory_vars import gc_paused, host_variables, needs_templar
from ansible_collections.ainet.fabric.plugins.plugin_utils.one_line import fail

# What the plan reads of each node (as hostvars[node] gives it).
NODE_VARS = ("fabric_node_id", "fabric_rail_interfaces")


def read_nodes(task_vars, hosts, names=NODE_VARS):
    """``(nodes, variables)`` of ``hosts``: ``variables`` each host's ``names`` as ``task_vars['hostvars']`` gives
    them, read once; ``nodes`` the plan's ``{host: {node_id, rail_interfaces}}`` made from them
    (:func:`rail_plan.node_map`)."""
    variables = host_variables(task_vars, hosts, names)
    return node_map(hosts, variables), variables


def group_nodes(task_vars, variable, group, names=NODE_VARS):
    """:func:`read_nodes` of the hosts of inventory group ``group``; a group that is missing or has no hosts raises
    the :class:`FabricError` naming ``variable`` (the option or role variable that gave the group's name)."""
    return read_nodes(task_vars, node_group_hosts(task_vars.get("groups") or {}, variable, group), names)


def node_groups_hosts(task_vars, node_groups):
    """The hosts of the first group of ``node_groups`` (``{variable: group}``: each option or role variable that names a
    node group of the job, and its value), each group checked in that order first: a group that is missing or has no
    hosts raises the :class:`FabricError` naming its variable, as the jobs' input check (check_input.yml) refuses it.
    ``None`` where ``node_groups`` names none."""
    groups, hosts = task_vars.get("groups") or {}, None
    for variable, name in (node_groups or {}).items():
        found = node_group_hosts(groups, variable, name)
        hosts = found if hosts is None else hosts
    return hosts


@contextlib.contextmanager
def reading_model():
    """Reading the cluster model (``fabric_cluster`` of a host): a template in it that does not render (an undefined
    variable, a bad filter) is refused in the model's one line, naming ansible-core's first line of the error, not
    with a traceback or the template error's pages."""
    try:
        yield
    except AnsibleError as exc:
        raise FabricModelError("fabric_cluster", UNREADABLE, "could not be read: %s" % str(exc).splitlines()[0],
                               "correct the cluster model (docs/cluster-model.md)") from None


def _taken_as_given(spec, value):
    """Whether ansible-core's check of an argument gives back ``value`` itself (a copy of it) whatever it holds: a
    dict for a ``dict`` or ``raw`` option, a list for a ``list`` or ``raw`` one whose elements, if typed ``str``, are
    all strings; the option without ``options`` (no sub-spec to fill in), ``choices``, ``no_log`` or ``aliases``."""
    if any(spec.get(key) for key in ("options", "choices", "no_log", "aliases")):
        return False
    kind, elements = spec.get("type", "str"), spec.get("elements")
    if isinstance(value, dict):
        return kind in ("dict", "raw") and elements is None
    if isinstance(value, list):
        strings = elements == "str" and all(isinstance(v, str) for v in value)
        return kind in ("list", "raw") and (elements is None or strings)
    return False


class PlanAction(ActionBase):
    """A controller-side action over the node group (see the module). A subclass sets :attr:`ARGUMENT_SPEC` and
    implements :meth:`act`, which gets the task result so far, the validated arguments and the task's variables, and
    returns the task result."""

    TRANSFERS_FILES = False
    _requires_connection = False
    # The action's options, and the argument spec's rules across them (keyword arguments of validate_argument_spec).
    ARGUMENT_SPEC = {}
    ARGUMENT_RULES = {}
    # The role variable that names ``node_group``, as a bad group's refusal names it.
    NODE_GROUP_VARIABLE = "rail_plan_node_group"
    NODE_VARS = NODE_VARS
    # What bad input raises: its message is the one-line refusal.
    REFUSED = (FabricError,)
    # Python's cyclic garbage collector off for the whole task (inventory_vars.gc_paused).
    PAUSE_GC = False

    def act(self, result, args, task_vars):
        """The task result, from ``result`` (ActionBase's), the validated ``args`` and ``task_vars``."""
        raise NotImplementedError

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        with gc_paused() if self.PAUSE_GC else contextlib.nullcontext():
            result = super().run(tmp, task_vars)
            args = self.validate_arguments()
            try:
                return self.act(result, args, task_vars)
            except self.REFUSED as exc:
                return fail(self._task, result, str(exc))

    def validate_arguments(self):
        """The task's arguments checked and completed as ``ActionBase.validate_argument_spec`` does it (the same
        validator, rules, defaults and conversions, and the same failure), except that an argument the check would
        give back unchanged (:func:`_taken_as_given`: the model, the nodes, a list of host names) is checked as an empty
        one of its type and kept as it is: ansible-core's validator deep-copies every argument first, and the values of
        a model or of 16,384 host names carry the data tags of ansible-core 2.19, whose copy goes through
        ``copy._reconstruct`` for each string (a second per task at 16,384 nodes)."""
        given = dict(self._task.args)
        compared = set(key for rule in self.ARGUMENT_RULES.get("required_if") or () for key in rule[:1])
        kept = dict((name, value) for name, value in given.items() if name in self.ARGUMENT_SPEC and name not in compared
                    and _taken_as_given(self.ARGUMENT_SPEC[name], value))
        given.update((name, {} if isinstance(value, dict) else []) for name, value in kept.items())
        result = ArgumentSpecValidator(self.ARGUMENT_SPEC, **self.ARGUMENT_RULES).validate(given)
        if result.error_messages:
            msg = result.errors.msg
            if isinstance(result.errors[0], UnsupportedError):
                msg = "Unsupported parameters for (%s) module: %s" % (self._load_name, msg)
            raise AnsibleActionFail(msg, obj=self._task.args)
        args = dict(given, **result.validated_parameters)
        args.update(kept)
        return args

    def nodes(self, args, task_vars):
        """``(nodes, variables)``: the hosts of ``args['node_group']`` read once (:func:`group_nodes`, the names
        :attr:`NODE_VARS`), else ``args['nodes']`` and the task's ``hostvars``."""
        if args.get("node_group") is not None:
            return group_nodes(task_vars, self.NODE_GROUP_VARIABLE, args["node_group"], self.NODE_VARS)
        return args["nodes"], task_vars.get("hostvars") or {}

    def task_variable(self, task_vars, name, default=None):
        """The variable ``name`` of the task's host as ``task_vars`` holds it, templated only where it holds a template:
        a large value (a lock of 16,384 nodes) read without templating it whole, as an argument ``"{{ name }}"``
        would."""
        value = task_vars.get(name, default)
        if needs_templar(value):
            value = self._templar.template(value)
        return value

    def cluster(self, args, task_vars, nodes=None):
        """The model: ``args['cluster']``, else the task's ``fabric_cluster`` as :meth:`task_variable` reads it (a model
        of 2,048 ToRs passed as ``"{{ fabric_cluster }}"`` is rendered whole for the task and sent back with its
        result), or, where the task's host has none and is not among ``nodes`` (the node group's hosts, in order: a
        job's play under a --limit without a node, the model in the node group's group_vars), the first node's, read
        through ``hostvars`` (which templates it whole: only where the task's host has no model of its own, so that a
        ToR's push does not pay it); a model that is not there is refused in one line."""
        cluster = args.get("cluster")
        if cluster is None:
            with reading_model():
                host = task_vars.get("inventory_hostname")
                if nodes and host is not None and host not in nodes and "fabric_cluster" not in task_vars:
                    cluster = (task_vars.get("hostvars") or {})[next(iter(nodes))].get("fabric_cluster")
                else:
                    cluster = self.task_variable(task_vars, "fabric_cluster")
        if cluster is None:
            raise FabricModelError("fabric_cluster", None, "is not defined",
                                   "describe the cluster in the inventory's group_vars (docs/cluster-model.md)")
        return cluster

    def plan_and_variables(self, args, task_vars):
        """``(plan, variables)``: the rail plan of the task's nodes (:meth:`nodes`, whose variables come with it) and
        the model (:meth:`cluster`), read in that order: a bad node group is refused before the model is read, as the
        jobs' input check (check_input.yml) refuses them. With ``node_group``, the model is its first node's where the
        task's host is not one of its nodes."""
        nodes, variables = self.nodes(args, task_vars)
        group = nodes if args.get("node_group") is not None else None
        return rail_plan(self.cluster(args, task_vars, nodes=group), nodes), variables

    def plan(self, args, task_vars):
        """The rail plan of :meth:`plan_and_variables`."""
        return self.plan_and_variables(args, task_vars)[0]
