# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ainet.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The options the host modules share (``extends_documentation_fragment: [ainet.fabric.host, ...]``).

* ``ainet.fabric.host``: the cluster model (handled by the action plugin) and the roots and persistence
  of the RDMA host modules (``sriov``, ``rdma_netns``, ``pcie_acs``, ``roce_qos``);
* ``ainet.fabric.host.model``: the cluster model and the sysfs root (``nic_link_type``, which keeps no file);
* ``ainet.fabric.host.roots``: the two roots (``gpu_host``, which takes no model);
* ``ainet.fabric.host.interfaces``: the node's rail NICs (handled by the action plugin);
* ``ainet.fabric.host.foreign_units``: what to do about another tool's unit that sets the same state.

Only DOCUMENTATION is merged by ansible-core: the return values the host modules share (``commands``,
``reboot_pending``, ``unit``) are written out in each module, with the same text.
"""

from __future__ import annotations


class ModuleDocFragment(object):

    # Literal texts (ansible-test reads them without running Python); an option's text is the same in each
    # fragment that has it (tests/unit/plugins/modules/test_host_docs.py).

    # The RDMA host modules that keep a boot file: the model, both roots, persistence.
    DOCUMENTATION = r"""
options:
  cluster:
    description:
      - The cluster model (C(fabric_cluster)). Handled by the action plugin of the same name, on the controller,
        which validates the model there and fills this module's flat options (see the description) with this
        host's desired state derived from it; the host never receives the model. A bad model fails the task
        there with one line, before anything runs on the host.
      - Without O(cluster) the flat options are given directly (for example with C(ansible -m)).
    type: dict
  config_root:
    description:
      - Root directory under which the module reads and writes its files on the host (C(/etc), C(/var/lib),
        C(/boot)); for image builds and tests.
    type: path
    default: /
  sysfs_root:
    description: Root directory under which C(/sys), C(/proc) and C(/lib/modules) are read and written (tests).
    type: path
    default: /
  persist:
    description:
      - Write and keep the one file that re-applies the state at every boot (the boot unit, or the module option
        file; see the description). V(false) removes it; what runs now stays until the next boot.
    type: bool
    default: true
"""

    # A host module with an action plugin that keeps no file (nic_link_type): the model and the sysfs root.
    MODEL = r"""
options:
  cluster:
    description:
      - The cluster model (C(fabric_cluster)). Handled by the action plugin of the same name, on the controller,
        which validates the model there and fills this module's flat options (see the description) with this
        host's desired state derived from it; the host never receives the model. A bad model fails the task
        there with one line, before anything runs on the host.
      - Without O(cluster) the flat options are given directly (for example with C(ansible -m)).
    type: dict
  sysfs_root:
    description: Root directory under which C(/sys), C(/proc) and C(/lib/modules) are read and written (tests).
    type: path
    default: /
"""

    # A host module without a model that writes files (gpu_host): both roots.
    ROOTS = r"""
options:
  config_root:
    description:
      - Root directory under which the module reads and writes its files on the host (C(/etc), C(/var/lib),
        C(/boot)); for image builds and tests.
    type: path
    default: /
  sysfs_root:
    description: Root directory under which C(/sys), C(/proc) and C(/lib/modules) are read and written (tests).
    type: path
    default: /
"""

    INTERFACES = r"""
options:
  interfaces:
    description:
      - The node's rail NICs (C(fabric_rail_interfaces)); a list for one fabric or a mapping per fabric.
      - Handled by the action plugin with O(cluster); the host never receives it.
    type: raw
"""

    FOREIGN_UNITS = r"""
options:
  foreign_units:
    description:
      - What to do about another tool's unit (or udev rule) that sets the same state as this module (see the
        description). V(fail) refuses before any change, naming it, because the two would fight at every boot;
        V(warn) goes on with a warning.
    type: str
    choices: [fail, warn]
    default: fail
"""
