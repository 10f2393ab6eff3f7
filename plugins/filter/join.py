# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubeadm JoinConfiguration a Windows node joins with (the token stays off the command line)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kubewin.nodes.plugins.module_utils import bootstrap_token as bt


def join_configuration(token, endpoint, ca_hashes, node_name, cri_socket):
    """``token | kubewin.nodes.join_configuration(endpoint, pins, node_name, cri_socket)``."""
    try:
        return bt.join_configuration(endpoint, token, ca_hashes, node_name, cri_socket)
    except bt.BootstrapTokenError as e:
        # The message never contains the token: parse_token's error names only the expected form.
        raise AnsibleFilterError("cannot build the kubeadm JoinConfiguration: %s" % e) from None


class FilterModule:
    def filters(self):
        return {"join_configuration": join_configuration}
