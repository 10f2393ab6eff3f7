# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_kubelet_service: decides on the controller, runs fixed scripts on Windows."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import kubelet as ks
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service as ws
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service_logs as sl
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host.service_action import converge_service
from ansible_collections.kubewin.nodes.plugins.plugin_utils._windows_action import WindowsAction


class ActionModule(WindowsAction):
    ARGSPEC = wa.KUBELET_SERVICE_ARGSPEC
    REQUIRED_IF = wa.KUBELET_SERVICE_REQUIRED_IF
    ERRORS = (ks.KubeletServiceError,)

    def subject(self, args):
        return "service %s" % args["name"]

    def act(self, args):
        def build_desired(answer):
            # kubeadm-flags.env comes back with the service state, so what join wrote takes effect.
            flags, warnings = ks.compute_flags(
                args["kubelet_version"], answer.get("flags_file_content"), args["extra_args"],
                config_file=args["config_file"], config_dir=args["config_dir"], kubeconfig=args["kubeconfig"],
                bootstrap_kubeconfig=args["bootstrap_kubeconfig"], cert_dir=args["cert_dir"],
                pod_infra_container_image=args["pod_infra_container_image"])
            dependencies = args["dependencies"]
            if dependencies is None:
                dependencies = ks.DEFAULT_DEPENDENCIES[args["container_runtime"]]
            desired = ws.desired_definition(
                ks.render_command_line(args["kubelet_path"], flags, args["log_runner_path"], args["log_file"],
                                       args["kubelet_version"], args["log_file_max_size_mb"],
                                       args["log_file_max_age_hours"]), dependencies,
                args["restart_delay_seconds"], ks.DISPLAY_NAME, ks.DESCRIPTION)
            return desired, warnings

        watch = args["watch_seconds"]
        if watch is None:
            watch = sl.watch_seconds(args["restart_delay_seconds"])
        log_files = [args["log_file"]] if args["log_runner_path"] else []
        return converge_service(self, self.task_vars, args["name"], args["state"], build_desired,
                                flags_file=args["kubeadm_flags_file"] or "", watch_seconds=watch,
                                log_files=log_files, observed=args["observed"])
