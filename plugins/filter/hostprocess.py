# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter of the HostProcess mode: digest-pinned images."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _hostprocess as hp


def _wrap(func):
    def filter_func(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except hp.HostProcessError as e:
            raise AnsibleFilterError(str(e)) from None

    filter_func.__doc__ = func.__doc__
    return filter_func


class FilterModule:
    def filters(self):
        return {
            "hostprocess_pinned_image": _wrap(hp.pinned_image),
        }
