# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nodes of the controller-side actions that plan the node group (``extends_documentation_fragment:
[ainet.fabric.nodes]``): ``cabling_check`` and ``lossless_test``. Their action plugins read them through
``plugins/plugin_utils/plan_action.py``."""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options:
  nodes:
    description:
      - Host name to C({node_id, rail_interfaces}), as built by the P(ainet.fabric.node_map#filter) filter.
      - One of O(nodes) and O(node_group) is required; O(node_group) is what the roles pass, and faster for
        thousands of nodes.
      - Every host name must be an RFC 1123 host name (dot-separated labels of letters, digits, C(-) and C(_)) or
        an IPv6 address; another name (a line break, a space, C(;)) is refused in one line, since host names are
        written into the ToRs' port descriptions.
    type: dict
  node_group:
    description:
      - The inventory group of the GPU nodes, instead of O(nodes). The action reads each node's C(fabric_node_id) and
        C(fabric_rail_interfaces) itself, once, with the same values and precedence as C(hostvars[node]) gives
        them, without templating them per node.
      - A missing group or one without hosts fails the task with one line naming the group and the role's variable
        that names it (C(<role>_node_group)).
    type: str
"""
