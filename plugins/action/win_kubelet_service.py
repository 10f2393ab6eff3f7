# -*- coding: utf-8 -*-
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_kubelet_service: decides on the controller, runs fixed scripts on Windows."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.kubewin.nodes.plugins.module_utils import kubelet_service as ks
from ansible_collections.kubewin.nodes.plugins.module_utils.winremote import RemoteScriptError, run_script


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = True

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(
            argument_spec=ks.SERVICE_ARGSPEC, required_if=ks.SERVICE_REQUIRED_IF)
        host = task_vars.get("inventory_hostname", "?")
        try:
            answer = run_script(self, task_vars, "service_state",
                                {"Name": args["name"], "FlagsFile": args["kubeadm_flags_file"] or ""})
            desired, warnings, command_line = {}, [], None
            if args["state"] != "absent":
                flags, warnings = ks.compute_flags(
                    args["kubelet_version"], answer.get("flags_file_content"), args["extra_args"],
                    config_file=args["config_file"], kubeconfig=args["kubeconfig"],
                    bootstrap_kubeconfig=args["bootstrap_kubeconfig"], cert_dir=args["cert_dir"],
                    pod_infra_container_image=args["pod_infra_container_image"])
                command_line = ks.render_command_line(args["kubelet_path"], flags)
                dependencies = args["dependencies"]
                if dependencies is None:
                    dependencies = ks.DEFAULT_DEPENDENCIES[args["container_runtime"]]
                desired = ks.desired_definition(command_line, dependencies, args["restart_delay_seconds"])
            plan = ks.plan_service(args["state"], desired, answer)
            status = answer.get("status") if answer.get("exists") else "Absent"
            if plan["changed"] and not self._task.check_mode:
                reply = run_script(self, task_vars, "service_apply", {
                    "Name": args["name"],
                    "Action": plan["action"],
                    "CommandLine": command_line or "",
                    "DisplayName": desired.get("display_name", ""),
                    "Description": desired.get("description", ""),
                    "Dependencies": desired.get("dependencies", []),
                    "FailureResetSeconds": ks.FAILURE_RESET_SECONDS,
                    "FailureActions": desired.get("recovery", {}).get("actions", ""),
                    "Run": plan["run"],
                })
                status = reply.get("status", status)
        except (ks.KubeletServiceError, RemoteScriptError) as e:
            result.update(failed=True, msg="win_kubelet_service %s on %s: %s" % (args["name"], host, e))
            return result
        if warnings:
            result["warnings"] = warnings
        result.update(changed=plan["changed"], command_line=command_line, status=status,
                      differences=plan["differences"], action=plan["action"] or "none", run=plan["run"])
        if self._task.diff and plan["changed"]:
            result["diff"] = {"before": plan["before"], "after": plan["after"],
                              "before_header": "service %s" % args["name"],
                              "after_header": "service %s" % args["name"]}
        return result
