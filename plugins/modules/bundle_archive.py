#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: bundle_archive
short_description: Write the support bundle's archive on the controller
version_added: 0.3.0
description:
  - Writes one C(kubewin-support-bundle-<UTC time>.tar.gz) (mode 0600) into O(dest) on the controller, with every
    host's files from M(kubewin.nodes.win_node_bundle) and an index (C(index.json), schema
    C(kubewin.nodes/support-bundle/v1), and C(index.txt)) saying what each file is, from which host, and what could not
    be collected and why. The texts are read from the staging directory each M(kubewin.nodes.win_node_bundle) result
    names (only a directory of this user with mode 0700 that it made), redacted once more as they are written, and
    the staging directories are removed after.
  - Runs on the controller; it connects to no host.
options:
  hosts:
    description:
      - '{host: the M(kubewin.nodes.win_node_bundle) result}. A host whose result has no C(files) (unreachable, or the
        task failed) is listed in the index as not collected, with its message.'
    type: dict
    required: true
  dest:
    description: The directory on the controller the archive is written into (it must exist).
    type: path
    required: true
attributes:
  check_mode:
    support: none
    details: The archive is the report of a read; the kubewin.nodes.support_bundle role writes it in check mode too.
  diff_mode:
    support: none
  platform:
    platforms: posix
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
author:
  - kubewin.nodes maintainers (@kubewin)
"""

EXAMPLES = r"""
- name: Write the archive
  kubewin.nodes.bundle_archive:
    hosts: >-
      {{ dict(groups['kube_windows_nodes']
              | zip(groups['kube_windows_nodes'] | map('extract', hostvars, 'bundle'))) }}
    dest: /tmp
"""

RETURN = r"""
path:
  description: The archive written.
  returned: success
  type: str
  sample: /tmp/kubewin-support-bundle-20261128T043000Z.tar.gz
files:
  description: How many files it holds besides the index.
  returned: success
  type: int
not_collected:
  description: "What could not be collected, C(<host>: <source> (<why>)) (also in the index)."
  returned: success
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import BUNDLE_ARCHIVE_ARGSPEC


def main():
    module = AnsibleModule(argument_spec=BUNDLE_ARCHIVE_ARGSPEC)
    # Reached only if the action plugin was bypassed.
    module.fail_json(msg="kubewin.nodes.bundle_archive runs through its action plugin")


if __name__ == "__main__":
    main()
