# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Error types shared by the ainet.fabric library.

Every error raised for bad input names the field, the offending value and
how to fix it, so that playbooks can show it verbatim instead of a traceback.
"""

from __future__ import annotations


class FabricError(Exception):
    """Base class of all errors raised by the ainet.fabric library."""


# The value of a FabricModelError whose field could not be read at all (a template in it that does not render): the
# line names the field and the problem, and no value.
UNREADABLE = object()


class FabricModelError(FabricError):
    """Invalid cluster description (inventory data).

    ``field`` is a dotted path such as ``fabric_cluster.addressing.supernet``; ``value`` :data:`UNREADABLE` where
    there is no value to show.
    """

    def __init__(self, field, value, problem, fix=None):
        self.field = field
        self.value = value
        self.problem = problem
        self.fix = fix
        text = "%s: %s" % (field, problem) if value is UNREADABLE else "%s: %r %s" % (field, value, problem)
        if fix:
            text += ". Fix: %s" % fix
        super().__init__(text)


class FabricModelErrors(FabricModelError):
    """Several problems of one model, reported together: one line each."""

    def __init__(self, errors):
        first = errors[0]
        super().__init__(first.field, first.value, first.problem, first.fix)
        self.errors = list(errors)
        self.args = ("\n".join(str(e) for e in errors),)

    def __str__(self):
        return self.args[0]


class FabricStateError(FabricError):
    """A host's live state makes the requested change unsafe or impossible."""
