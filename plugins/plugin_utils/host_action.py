# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The common opening of the host modules' action plugins (controller side).

Every host module (``rail_interfaces``, ``nic_link_type``, ``sriov``, ``rdma_netns``, ``pcie_acs``,
``roce_qos``) has an action plugin of the same name. Given the cluster model (``cluster``, with the node's ``interfaces`` and
``node_id`` where the module needs them), the action validates the model on the controller, derives
this one host's flat desired state from it (a pure function of ``module_utils/desired/``) and runs the
module with that state only: the host never sees the model, the planner or the QoS profile code, and
their bytes are not in the module's payload.

Without ``cluster`` the task's arguments are the module's own flat options and go to the module as
they are (``ansible -m ainet.fabric.sriov -a 'pfs=...'``), so the module stays usable on its own.

The model is validated once per worker process and kept by the canonical JSON of ``fabric_cluster``
(:func:`load_model`); loading the example model takes well under a millisecond, so the memo matters
only for large models and many tasks of one play.
"""

from __future__ import annotations

import hashlib
import json

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.ainet.fabric.plugins.module_utils.common.errors import FabricError
from ansible_collections.ainet.fabric.plugins.module_utils.model.cluster_model import load_cluster
from ansible_collections.ainet.fabric.plugins.plugin_utils.one_line import fail

_MODELS = {}


def model_key(raw):
    """A stable key of a raw model (the same dict in every task of a play gives the same key)."""
    text = json.dumps(raw, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_model(raw):
    """The validated :class:`Cluster` of ``raw``, memoised; raises FabricError as ``load_cluster`` does."""
    key = model_key(raw)
    cluster = _MODELS.get(key)
    if cluster is None:
        cluster = _MODELS[key] = load_cluster(raw)
    return cluster


class HostModuleAction(ActionBase):
    """Derive one host's flat desired state on the controller and run the module of the same name with it.

    A subclass sets :attr:`MODEL_SPEC` (the options that exist only on the controller side: ``cluster``
    and whatever else the derivation reads) and implements :meth:`desired`, which returns the module's
    flat options that come from the model. Every other task argument is passed to the module unchanged
    (the module's own argument spec validates it).
    """

    TRANSFERS_FILES = False
    _requires_connection = True
    MODEL_SPEC = {"cluster": {"type": "dict", "required": True}}
    # The module's own argument spec (its flat options), where its module_utils hold it: the arguments sent to the
    # host (the derived state and the task's other options) are validated against it here first, so that a wrong
    # value fails on the controller with one line and the task never reaches a host.
    MODULE_SPEC = None

    def desired(self, cluster, args, task_vars):
        """The module options derived from the model for this host (a dict); raise FabricError to refuse."""
        raise NotImplementedError

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_args = dict(self._task.args)
        if "cluster" not in task_args:
            # The module's own flat options: nothing to derive.
            result.update(self._execute_module(module_args=task_args, task_vars=task_vars))
            return result
        model_args = dict((name, task_args.pop(name)) for name in list(task_args) if name in self.MODEL_SPEC)
        args, errors = self._validate(self.MODEL_SPEC, model_args)
        if errors:
            return fail(self._task, result, "Validation of arguments failed: %s" % "; ".join(errors))
        try:
            cluster = load_model(args["cluster"])
            state = self.desired(cluster, args, task_vars or {})
        except FabricError as exc:
            return fail(self._task, result, str(exc))
        module_args = dict(task_args)
        module_args.update(state)
        if self.MODULE_SPEC is not None:
            _params, errors = self._validate(self.MODULE_SPEC, module_args)
            if errors:
                return fail(self._task, result, "%s: %s" % (self._task.action.rsplit(".", 1)[-1], "; ".join(errors)))
        result.update(self._execute_module(module_args=module_args, task_vars=task_vars))
        return result

    @staticmethod
    def _validate(spec, args):
        """``args`` checked against an argument spec (types, choices, required, defaults): (the validated
        parameters, the error lines). Serves :attr:`MODEL_SPEC` and :attr:`MODULE_SPEC` alike."""
        validated = ArgumentSpecValidator(spec).validate(args)
        return validated.validated_parameters, validated.error_messages
