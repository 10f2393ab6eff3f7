# -*- coding: utf-8 -*-
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.hns_cleanup: removes HNS networks with their endpoints and policy lists."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.kubewin.nodes.plugins.module_utils import windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils import hns
from ansible_collections.kubewin.nodes.plugins.plugin_utils.winremote import RemoteScriptError, run_script


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = True

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=wa.HNS_CLEANUP_ARGSPEC)
        host = task_vars.get("inventory_hostname", "?")
        try:
            answer = run_script(self, task_vars, "hns_state")
            calls, removed = hns.plan_cleanup(args["networks"], answer)
            if calls and not self._task.check_mode:
                reply = run_script(self, task_vars, "hns_calls", {"Calls": calls})
                hns.check_call_responses(calls, reply.get("responses") or [])
        except (hns.HnsError, RemoteScriptError) as e:
            result.update(failed=True, msg="hns_cleanup on %s: %s" % (host, e))
            return result
        result.update(changed=bool(calls), removed=removed)
        if self._task.diff and calls:
            result["diff"] = {"before": removed, "after": {"networks": [], "endpoints": [], "policylists": []},
                              "before_header": "hns objects", "after_header": "hns objects"}
        return result
