# -*- coding: utf-8 -*-
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters the roles use to render a Windows node's configuration."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.kubewin.nodes.plugins.module_utils import node_files as nfiles
from ansible_collections.kubewin.nodes.plugins.module_utils import node_network as nn
from ansible_collections.kubewin.nodes.plugins.module_utils import versions
from ansible_collections.kubewin.nodes.plugins.module_utils import win_service as ws


def _wrap(func):
    def filter_func(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (nn.NetworkConfigError, nfiles.NodeFilesError, ValueError) as e:
            raise AnsibleFilterError(str(e)) from None

    filter_func.__doc__ = func.__doc__
    return filter_func


class FilterModule(object):
    def filters(self):
        filters = {name: _wrap(getattr(nn, name)) for name in (
            "cidr_host", "network_name", "net_conf", "cni_config", "source_vip", "flanneld_args",
            "kube_proxy_args", "token_kubeconfig")}
        filters["pin_checksums"] = _wrap(nfiles.pin_checksums)
        # kube_version | kube_release(server_git_version): the release tag the nodes install.
        filters["kube_release"] = versions.effective_kube_version
        filters["windows_command_line"] = _wrap(ws.render_command_line)
        return filters
