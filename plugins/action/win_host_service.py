# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_host_service: a native Windows service for a node component."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network as host_network
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service as ws
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service_logs as sl
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host.service_action import converge_service
from ansible_collections.kubewin.nodes.plugins.plugin_utils._windows_action import WindowsAction


class ActionModule(WindowsAction):
    ARGSPEC = wa.NODE_SERVICE_ARGSPEC
    REQUIRED_IF = wa.NODE_SERVICE_REQUIRED_IF
    ERRORS = (ws.ServiceParameterError, host_network.NetworkConfigError)

    def subject(self, args):
        return "service %s" % args["name"]

    def act(self, args):
        ws.check_description(args["description"])
        parameters = ws.with_app_parameters(args["parameters"], args["app_parameters"])
        proxy = args["kube_proxy"]
        argv = [args["path"]] + list(args["args"])
        if proxy and args["state"] != "absent":
            if args["args"]:
                raise ws.ServiceParameterError("args and kube_proxy are mutually exclusive: kube_proxy makes "
                                               "kube-proxy's arguments")
            argv = host_network.kube_proxy_argv(
                proxy["node_name"], proxy["cluster_cidr"], proxy["backend"], proxy["vni"], proxy["pod_cidr"],
                proxy["version"], args["path"], proxy["log_file"], proxy["log_file_max_size_mb"],
                proxy["log_file_max_age_hours"])

        def build_desired(answer):
            command_line = ws.render_command_line(argv)
            return ws.desired_definition(
                command_line, args["dependencies"], args["restart_delay_seconds"],
                args["display_name"] or args["name"], args["description"], args["environment"],
                parameters), []

        watch = args["watch_seconds"]
        if watch is None:
            watch = sl.watch_seconds(args["restart_delay_seconds"])
        log_files = args["log_files"]
        if log_files is None and proxy:  # the file kube-log-runner writes kube-proxy's output to
            log_files = [proxy["log_file"]]
        if log_files is None:  # NSSM's own output files, when the service is configured through them
            log_files = []
            for key in ("AppStderr", "AppStdout"):
                value = next((v for k, v in parameters.items() if k.lower() == key.lower()), None)
                if value and str(value) not in log_files:
                    log_files.append(str(value))
        return converge_service(self, self.task_vars, args["name"], args["state"], build_desired,
                                watch_seconds=watch, log_files=log_files, observed=args["observed"])
