#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: win_docker_network
short_description: Make or remove a NAT network through Docker on a Windows node
version_added: 0.1.0
description:
  - Makes a NAT network with C(docker network create -d nat), after C(docker network ls) showed Docker lacks it,
    or removes it with C(docker network rm). Docker then has it in its own store and in HNS, and re-creates it at
    each start of its daemon when HNS lost it (a reboot drops NAT networks).
  - Docker looks a container's network up in its own store and learns about HNS networks only when its daemon
    starts, so a network made through HNS (M(kubewin.nodes.win_hns_network)) while it runs is unknown to it. An
    HNS network of that name that Docker does not know is removed before Docker makes its own.
  - On Windows, cri-dockerd runs the sandbox of every hostNetwork pod in Docker's network V(host), so a Docker
    node needs that one.
  - Runs C(docker.exe) from the folder of the C(docker) service's C(dockerd.exe), where the Docker installer puts
    both; the daemon must be running. One remote operation when nothing changes.
  - With O(state=absent), a Docker that is not installed or does not answer removes nothing and gives a warning
    instead of failing (a reset goes on; dockerd makes a network of its store again at its next start).
options:
  name:
    description: Name of the network, for example V(host).
    type: str
    required: true
  state:
    description: Whether Docker has the network.
    type: str
    default: present
    choices: [present, absent]
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
- name: The NAT network host that hostNetwork pods' sandboxes need on a Docker node
  kubewin.nodes.win_docker_network:
    name: host
"""

RETURN = r"""
removed_from_hns:
  description: Whether an HNS network of that name that Docker did not know was removed before Docker made its own.
  returned: success
  type: bool
  sample: false
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import DOCKER_NETWORK_ARGSPEC


def main():
    module = AnsibleModule(argument_spec=DOCKER_NETWORK_ARGSPEC, supports_check_mode=True)
    # Reached only if the action plugin was bypassed.
    module.fail_json(msg="kubewin.nodes.win_docker_network runs through its action plugin")


if __name__ == "__main__":
    main()
