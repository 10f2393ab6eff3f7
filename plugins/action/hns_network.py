# -*- coding: utf-8 -*-
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.hns_network: decides on the controller, runs fixed scripts on Windows."""

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
        dummy, args = self.validate_argument_spec(
            argument_spec=wa.HNS_NETWORK_ARGSPEC, required_if=wa.HNS_NETWORK_REQUIRED_IF)
        host = task_vars.get("inventory_hostname", "?")
        try:
            desired = None
            if args["state"] == "present":
                desired = hns.desired_network(
                    args["name"], args["type"], args["address_prefix"], args["gateway"],
                    args["adapter_name"], args["vsid"])
            else:
                desired = {"name": args["name"]}
            answer = run_script(self, task_vars, "hns_state")
            plan = hns.plan_network(desired, args["state"], answer, recreate=args["recreate"])
            if plan["changed"] and not self._task.check_mode:
                reply = run_script(self, task_vars, "hns_calls", {"Calls": plan["calls"]})
                responses = reply.get("responses") or []
                hns.check_call_responses(plan["calls"], responses)
                if args["state"] == "present":  # HNS answers a create with the new network
                    created = hns.parse_response(responses[-1], "creating network")
                    plan["after"] = hns.public_view(hns.live_network(created))
        except (hns.HnsError, RemoteScriptError) as e:
            result.update(failed=True, msg="hns_network %s on %s: %s" % (args["name"], host, e))
            return result
        result.update(
            changed=plan["changed"],
            network=plan["after"],
            id=plan["after"].get("id"),
            differences=[{"field": f, "live": lv, "desired": dv} for f, lv, dv in plan["differences"]],
            removed=plan["removed"],
        )
        if self._task.diff and plan["changed"]:
            result["diff"] = {"before": plan["before"], "after": plan["after"],
                              "before_header": "hns network %s" % args["name"],
                              "after_header": "hns network %s" % args["name"]}
        return result
