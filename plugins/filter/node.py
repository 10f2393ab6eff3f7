# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The public filters of a Windows node's network and version (docs/filters.md)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network as nn


def _wrap(func):
    def filter_func(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (nn.NetworkConfigError, ValueError) as e:
            raise AnsibleFilterError(str(e)) from None

    filter_func.__doc__ = func.__doc__
    return filter_func


class FilterModule:
    def filters(self):
        filters = {"windows_flannel": _wrap(nn.windows_flannel)}
        # kube_version | kube_release(server_git_version): the release tag the nodes install.
        filters["kube_release"] = versions.effective_kube_version
        return filters
