#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: win_hns_cleanup
short_description: Remove HNS networks with their endpoints and policy lists from a Windows node
version_added: 0.1.0
description:
  - Removes the named HNS networks, the endpoints attached to them and the policy lists that reference those
    endpoints, in the order HNS accepts. Networks that do not exist are skipped, so it is safe to run twice.
  - Used by the reset playbook to take a node's pod networking away. Two remote operations at most.
options:
  networks:
    description: Names of the networks to remove, for example V(cbr0), V(flannel.4096), V(host).
    type: list
    elements: str
    required: true
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: windows
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
seealso:
  - module: kubewin.nodes.win_hns_network
author:
  - kubewin.nodes maintainers (@kubewin)
"""

EXAMPLES = r"""
- name: Remove flannel's and Docker's networks
  kubewin.nodes.win_hns_cleanup:
    networks: [cbr0, flannel.4096, host]
"""

RETURN = r"""
removed:
  description: What was (or in check mode would be) removed.
  returned: success
  type: dict
  sample: {"networks": ["cbr0"], "endpoints": ["cbr0_ep"], "policylists": ["7D3A..."]}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import HNS_CLEANUP_ARGSPEC


def main():
    module = AnsibleModule(argument_spec=HNS_CLEANUP_ARGSPEC, supports_check_mode=True)
    # Reached only if the action plugin was bypassed.
    module.fail_json(msg="kubewin.nodes.win_hns_cleanup runs through its action plugin")


if __name__ == "__main__":
    main()
