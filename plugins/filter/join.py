# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubeadm JoinConfiguration a Windows node joins with (the token stays off the command line)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kubewin.nodes.plugins.module_utils import _bootstrap_token as bt
from ansible_collections.kubewin.nodes.plugins.module_utils import _kubeadm_join as kj


def join_configuration(join_args, node_name, cri_socket, ca_cert_path=None):
    """``join_args | kubewin.nodes.join_configuration(node_name, cri_socket[, ca_cert_path])``: the token module's
    join arguments (endpoint, token, CA pins) plus what is this node's own."""
    try:
        endpoint, token, ca_hashes = kj.parse_join_args(join_args)
        return kj.join_configuration(endpoint, token, ca_hashes, node_name, cri_socket, ca_cert_path)
    except bt.BootstrapTokenError as e:
        # The message never contains the token: parse_token's error names only the expected form.
        raise AnsibleFilterError("cannot build the kubeadm JoinConfiguration: %s" % e) from None


class FilterModule:
    def filters(self):
        return {"join_configuration": join_configuration}
