# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_node_bundle: a Windows node's logs, configuration, services, HNS objects and
events in one read (the node_bundle script), made into the support bundle's files, redacted and written into a
staging directory on the controller (plugin_utils/_bundle.py): the task result holds no log or event text."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _bundle as bundle
from ansible_collections.kubewin.nodes.plugins.plugin_utils._windows_action import WindowsAction

# the options and the variables the support_bundle role sets them from
_LIMITS = (("max_lines", "kubewin_support_bundle_log_lines"), ("max_kib", "kubewin_support_bundle_max_kib"),
           ("max_events", "kubewin_support_bundle_events"))


class ActionModule(WindowsAction):
    ARGSPEC = wa.NODE_BUNDLE_ARGSPEC
    ERRORS = (ValueError,)

    def act(self, args):
        for option, variable in _LIMITS:
            if args[option] < 1:
                raise ValueError("%s is %s; it must be a positive number (%s)" % (option, args[option], variable))
        params = bundle.script_parameters(args["container_runtime"], args["network_services"], args["max_lines"],
                                          args["max_kib"], args["max_events"])
        # Read-only, so it runs in check mode too.
        answer = self.script("node_bundle", params)
        staging, files = bundle.stage(self.host, bundle.host_files(answer, params, args["cluster"]))
        return dict(changed=False, staging=staging, files=files)
