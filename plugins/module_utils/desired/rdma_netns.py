# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``rdma_netns``: from the model to one host's flat desired state (controller side).

The RDMA netns mode is one kernel-wide setting that every node of the cluster runs: the model's
``rdma_netns``, by default what the fabrics' CNIs need (:func:`rdma_host.resolve_netns`; a contradiction
is refused when the model is loaded). The module's flat option: ``{"mode": "exclusive" | "shared" | "none"}``
(``none``: no fabric's CNI cares; the mode is left as the kernel has it and the module's file goes).
"""

from __future__ import annotations

NONE = "none"


def options(cluster):
    """The module's flat options for any host of ``cluster`` (the validated model)."""
    return {"mode": cluster.rdma_netns or NONE}
