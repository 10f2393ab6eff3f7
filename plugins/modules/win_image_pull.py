#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: win_image_pull
short_description: Pull a container image on a Windows node through crictl unless it has it
version_added: 0.1.0
description:
  - Runs C(crictl inspecti) and, when the image is not there, C(crictl pull) with the collection's crictl
    (C(C:\Program Files\containerd\crictl\crictl.exe)) and its C(crictl.yaml), in one remote operation; an image the
    node has is not pulled again. The runtime role runs it for each entry of C(kubewin_prepull_images) the node lacks,
    before the node joins, with retries (docs/runtime.md).
  - The reference is checked before anything runs (the distribution reference grammar). A pull that takes longer
    than O(timeout) is stopped and fails; one that finds no manifest for the host's Windows build fails saying so.
  - In check mode only C(crictl inspecti) runs, and the task reports a change when the image would be pulled.
options:
  image:
    description: The image reference, for example V(mcr.microsoft.com/windows/servercore:ltsc2022).
    type: str
    required: true
  timeout:
    description: Seconds the pull may take before it is stopped.
    type: int
    default: 600
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
  - module: kubewin.nodes.win_containerd
author:
  - kubewin.nodes maintainers (@kubewin)
"""

EXAMPLES = r"""
- name: The Server Core image the node's pods use, pulled before the node takes work
  kubewin.nodes.win_image_pull:
    image: mcr.microsoft.com/windows/servercore:ltsc2022
    timeout: 1800
"""

RETURN = r"""
present:
  description: Whether the node had the image before the task.
  returned: success
  type: bool
  sample: false
seconds:
  description: How long the pull took (0 when none ran).
  returned: success
  type: int
  sample: 42
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import IMAGE_PULL_ARGSPEC


def main():
    module = AnsibleModule(argument_spec=IMAGE_PULL_ARGSPEC, supports_check_mode=True)
    # Reached only if the action plugin was bypassed.
    module.fail_json(msg="kubewin.nodes.win_image_pull runs through its action plugin")


if __name__ == "__main__":
    main()
