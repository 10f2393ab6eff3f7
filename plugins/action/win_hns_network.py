# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_hns_network: decides on the controller, runs fixed scripts on Windows."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import hns
from ansible_collections.kubewin.nodes.plugins.plugin_utils._windows_action import WindowsAction


class ActionModule(WindowsAction):
    ARGSPEC = wa.HNS_NETWORK_ARGSPEC
    REQUIRED_IF = wa.HNS_NETWORK_REQUIRED_IF
    ERRORS = (hns.HnsError,)

    def subject(self, args):
        return "network %s" % args["name"]

    def act(self, args):
        if args["state"] == "present":
            desired = hns.desired_network(
                args["name"], args["type"], args["address_prefix"], args["gateway"],
                args["adapter_name"], args["vsid"])
        else:
            desired = {"name": args["name"]}
        answer = self.script("hns_state")
        plan = hns.plan_network(desired, args["state"], answer, recreate=args["recreate"], compare=args["compare"])
        if plan["changed"] and not self._task.check_mode:
            reply = self.script("hns_calls", {"Calls": plan["calls"]})
            responses = reply.get("responses") or []
            hns.check_call_responses(plan["calls"], responses)
            if args["state"] == "present":  # HNS answers a create with the new network
                created = hns.parse_response(responses[-1], "creating network")
                plan["after"] = hns.public_view(hns.live_network(created))
        result = dict(
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
