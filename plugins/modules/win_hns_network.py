#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: win_hns_network
short_description: Manage a Host Networking Service (HNS) network on a Windows node
version_added: 0.1.0
description:
  - Ensures an HNS network exists with the given type, address prefix, gateway, adapter and VSID, or is absent.
  - The live network is compared with the task. A network that differs is reported with a diff and the task
    fails, because recreating a network interrupts the node's connectivity; set O(recreate=true) to allow it.
  - Removing a network first removes the HNS endpoints attached to it and the policy lists that reference them.
  - All decisions are made on the controller by the action plugin; the Windows host only runs two small fixed
    PowerShell scripts through M(ansible.windows.win_powershell) (read HNS state, apply HNS v1 calls).
options:
  name:
    description:
      - Name of the HNS network, for example V(cbr0) or V(flannel.4096). Docker's networks (V(host)) are made
        through Docker instead (M(kubewin.nodes.win_docker_network)), since a running dockerd does not see HNS networks.
    type: str
    required: true
  type:
    description:
      - Network type. Required when O(state=present).
    type: str
    choices: [l2bridge, nat, overlay, transparent]
  address_prefix:
    description:
      - The subnet of the network in CIDR form. Required for V(l2bridge) and V(overlay).
    type: str
  gateway:
    description:
      - Gateway address inside O(address_prefix). When unset, the gateway HNS chose is accepted.
    type: str
  adapter_name:
    description:
      - Network adapter the network binds to. Name it on hosts with several adapters
        (HNS otherwise fails with "An adapter was not found"). When unset, any adapter is accepted.
    type: str
  vsid:
    description:
      - Virtual subnet ID of an V(overlay) network. flannel uses its VXLAN VNI, which must be at least 4096 on Windows.
    type: int
  state:
    description: Whether the network should exist.
    type: str
    choices: [present, absent]
    default: present
  recreate:
    description:
      - Allow deleting and recreating a network that differs from the task. This interrupts the node's network
        connectivity and removes the endpoints attached to the network.
    type: bool
    default: false
  compare:
    description:
      - Which settings of an existing network of this O(name) must match the task; an option that is not set is
        never compared. The others are used only to create the network.
      - Leave out what HNS may report back differently from what was asked, for example the subnet, gateway and
        VSID of the C(External) network that only binds the adapter to its vSwitch (microsoft/SDN's scripts look
        for it by name only).
    type: list
    elements: str
    choices: [type, address_prefix, gateway, adapter_name, vsid]
    default: [type, address_prefix, gateway, adapter_name, vsid]
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: windows
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
notes:
  - Uses the HNS v1 API (C(vmcompute.dll!HNSCall)), available on Windows Server 2019 and later.
seealso:
  - module: kubewin.nodes.win_docker_network
  - module: kubewin.nodes.win_hns_cleanup
author:
  - kubewin.nodes maintainers (@kubewin)
"""

EXAMPLES = r"""
- name: A NAT network in HNS
  kubewin.nodes.win_hns_network:
    name: lab-nat
    type: nat

- name: Overlay network for flannel vxlan
  kubewin.nodes.win_hns_network:
    name: flannel.4096
    type: overlay
    address_prefix: 10.244.3.0/24
    gateway: 10.244.3.1
    vsid: 4096
    adapter_name: Ethernet0

- name: Remove a network with its endpoints and policy lists
  kubewin.nodes.win_hns_network:
    name: cbr0
    state: absent
"""

RETURN = r"""
id:
  description: HNS ID of the network (absent after removal or when it would only be created in check mode).
  returned: success
  type: str
  sample: 3EB2B2A4-0E2B-4B6B-9C1B-4D61F0F4B5A1
network:
  description: The network after the task.
  returned: success
  type: dict
  sample: {"name": "host", "type": "NAT", "subnets": [{"address_prefix": "172.29.0.0/20", "gateway": "172.29.0.1",
           "vsid": null}]}
differences:
  description: Fields in which the live network differed from the task.
  returned: success
  type: list
  elements: dict
  sample: [{"field": "vsid", "live": 4097, "desired": 4096}]
removed:
  description: Endpoints and policy lists removed together with the network.
  returned: success
  type: dict
  sample: {"endpoints": ["cbr0_ep"], "policylists": []}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import (
    HNS_NETWORK_ARGSPEC,
    HNS_NETWORK_REQUIRED_IF,
)


def main():
    module = AnsibleModule(argument_spec=HNS_NETWORK_ARGSPEC, required_if=HNS_NETWORK_REQUIRED_IF,
                           supports_check_mode=True)
    # Reached only if the action plugin was bypassed (e.g. the module was copied elsewhere).
    module.fail_json(msg="kubewin.nodes.win_hns_network runs through its action plugin; call it as a task of the "
                         "kubewin.nodes collection")


if __name__ == "__main__":
    main()
