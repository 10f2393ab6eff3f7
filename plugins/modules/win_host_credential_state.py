#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: win_host_credential_state
short_description: SHA-512 and access rules of a Windows node's credential files, never their content
version_added: 0.2.0
description:
  - Reads, in one remote operation, the SHA-512 and the access rules (SDDL) of each file of O(paths),
    O(token_files) and O(kubeconfigs).
  - Earlier releases' network role used it to decide whether kube-proxy's token on the node was the one last
    issued, without reading a token back. kube-proxy and flanneld now run with the kubelet's kubeconfig and have
    no credential files of their own, so the roles no longer call it; it stays for playbooks of your own.
options:
  paths:
    description: Files to read.
    type: list
    elements: str
    default: []
  token_files:
    description:
      - The token file of each node component that has one (V(kube-proxy); V(flanneld) had one in earlier
        releases) -> its path; their SHA-512 per component is returned as RV(token_files_sha512).
    type: dict
    default: {}
  kubeconfigs:
    description:
      - The kubeconfig of each node component -> its path (read like O(paths), for the C(credentials) option of
        M(kubewin.nodes.win_host_files)).
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: windows
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
author:
  - kubewin.nodes maintainers (@kubewin)
"""

EXAMPLES = r"""
- name: State of kube-proxy's token file
  kubewin.nodes.win_host_credential_state:
    paths: [C:\etc\kube-proxy\token]
  register: state

# As earlier releases' network role did: kube-proxy's files by component and, in the same read, flanneld's token
# and kubeconfig of earlier releases.
- name: State of kube-proxy's credential files, and whether flanneld's old ones are still there
  kubewin.nodes.win_host_credential_state:
    token_files:
      kube-proxy: C:\etc\kube-proxy\token
    kubeconfigs:
      kube-proxy: C:\etc\kube-proxy\kubeconfig
    paths: [C:\etc\kube-flannel\token, C:\etc\kube-flannel\kubeconfig]
  register: credential_state
"""

RETURN = r"""
sha512:
  description:
    - SHA-512 (lower-case hex) of each file, V(null) when it does not exist or is a junction or symbolic link
      (never read through).
    - V(unreadable) when Administrators cannot read it, V(directory) when a directory is there.
  returned: success
  type: dict
acls:
  description: Owner and access rules (SDDL) of each file, V(null) when it does not exist, V(unreadable)
    when Administrators cannot read them.
  returned: success
  type: dict
token_files_sha512:
  description:
    - Component -> SHA-512 of its token file (O(token_files)), what the C(token_files_sha512) option of
      M(kubewin.nodes.k8s_node_credentials) takes.
    - V(null) when the file is missing; V(open-access-rules) when its owner is not trusted or its access rules are
      not Administrators and SYSTEM only (such a token may have been read, so it is replaced).
  returned: success
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import CREDENTIAL_STATE_ARGSPEC


def main():
    module = AnsibleModule(argument_spec=CREDENTIAL_STATE_ARGSPEC, supports_check_mode=True)
    # Reached only if the action plugin was bypassed.
    module.fail_json(msg="kubewin.nodes.win_host_credential_state runs through its action plugin")


if __name__ == "__main__":
    main()
