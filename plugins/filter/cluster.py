# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that turn what the cluster and the inventory say into the settings the Windows nodes use."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _cluster_settings as cs


def cluster_settings(cluster, cp_host, cp_values=None, cp_address=None, control_planes=1):
    """``k8s_join_info``'s result and the first control-plane host's kubespray variables -> the settings."""
    try:
        return cs.resolve(cluster, cp_host, cp_values, cp_address, int(control_planes or 1))
    except cs.SettingsError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {
            "cluster_settings": cluster_settings,
        }
