# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A task failure whose message is the whole report (one line naming the field, the value and the Fix), printed
once by ansible-core 2.16 and 2.19 alike.

ansible-core 2.19 turns every failed task result into an error summary: ``TaskExecutor._execute`` calls
``AnsibleActionCapturedError.maybe_raise_on_result``, which raises on ``failed``, and the exception's result dict
(``_error_utils.result_dict_from_exception``) gets an ``exception`` key. The default stdout callback prints that key
(``CallbackBase._handle_exception``) as ``[ERROR]: Task failed: Action failed: <msg>`` with the task's ``Origin:``
snippet, then the ``fatal:`` line with the same msg. An exception that contributes the task result itself and says
``omit_exception_key`` (as ansible-core's own ``AnsibleActionSkip`` does) leaves the key out, so only the ``fatal:``
line is printed. ansible-core 2.16 has no error summary: there the action returns the failed result, as before.
"""

from __future__ import annotations

from ansible.errors import AnsibleActionFail

# ansible-core 2.19 and later: an AnsibleActionFail raised from an action contributes the task result.
RAISES = hasattr(AnsibleActionFail, "result_contribution")


class OneLineFailure(AnsibleActionFail):
    """The failed result, without the error summary that ansible-core 2.19 would print above the ``fatal:`` line
    (the message is already the whole report; the summary only repeats it with the task's origin)."""

    @property
    def omit_exception_key(self):
        return True


def fail(task, result, msg, **more):
    """The failed task result ``result`` + ``msg`` (and ``more`` keys), to ``return`` from an action's ``run``
    (``task``: the action's task). On ansible-core 2.19 it is raised instead, as a :class:`OneLineFailure` carrying
    that result, so that the message is printed once; except where the task has ``failed_when`` or ``until``, which
    ansible-core evaluates on a returned result only (a raised one skips them)."""
    failed = dict(result, failed=True, msg=msg, **more)
    failed.setdefault("changed", False)
    if RAISES and not (task.failed_when or task.until):
        raise OneLineFailure(msg, result=failed) from None
    return failed
