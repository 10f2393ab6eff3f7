# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_hns_cleanup: removes HNS networks with their endpoints and policy lists."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import hns
from ansible_collections.kubewin.nodes.plugins.plugin_utils._windows_action import WindowsAction


class ActionModule(WindowsAction):
    ARGSPEC = wa.HNS_CLEANUP_ARGSPEC
    ERRORS = (hns.HnsError,)

    def act(self, args):
        answer = self.script("hns_state")
        calls, removed = hns.plan_cleanup(args["networks"], answer)
        if calls and not self._task.check_mode:
            reply = self.script("hns_calls", {"Calls": calls})
            hns.check_call_responses(calls, reply.get("responses") or [])
        result = dict(changed=bool(calls), removed=removed)
        if self._task.diff and calls:
            result["diff"] = {"before": removed, "after": {"networks": [], "endpoints": [], "policylists": []},
                              "before_header": "hns objects", "after_header": "hns objects"}
        return result
