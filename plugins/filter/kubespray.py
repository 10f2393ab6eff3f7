# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters mapping kubespray's download and proxy settings to the Windows nodes' downloads
(plugin_utils/kubespray.py; used by roles/kubewin/defaults/main.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _kubespray as kubespray


def _wrap(func):
    def filter_func(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except ValueError as e:  # KubesprayValueError: says what to set
            raise AnsibleFilterError(str(e)) from None

    filter_func.__doc__ = func.__doc__
    return filter_func


class FilterModule:
    def filters(self):
        return {
            # _kubewin_kubespray | kubespray_download_url('kubernetes'): a download's base URL
            "kubespray_download_url": _wrap(kubespray.download_url),
            # _kubewin_kubespray | kubespray_proxy([base URLs]): https_proxy or http_proxy by their scheme
            "kubespray_proxy": _wrap(kubespray.proxy),
            # _kubewin_kubespray | kubespray_no_proxy: no_proxy (else additional_no_proxy) as a list
            "kubespray_no_proxy": _wrap(kubespray.no_proxy),
        }
