# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_node_health: the node's services, HNS networks and (Docker) Docker's networks in
one read (the node_health script), judged with the Node the API returned (plugin_utils/_health.py); or, with
``report``, the report and table of those results (no host is read)."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _health as health
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import runtimes
from ansible_collections.kubewin.nodes.plugins.plugin_utils._windows_action import WindowsAction


class ActionModule(WindowsAction):
    ARGSPEC = wa.NODE_HEALTH_ARGSPEC

    def act(self, args):
        if args["report"] is not None:
            leave_out = wa.NODE_HEALTH_CHECK_ARGS + ("external_network", "services", "load_balancers_missing_since")
            given = [k for k in leave_out if args[k] is not None]
            if given:
                return dict(failed=True, msg="%s on %s: report is the report of checks made before, not a check: "
                            "leave out %s" % (self.module_name, self.host, ", ".join(given)))
            # Checks nothing: the report of the results the task was given (its play's last step, playbooks/health.yml).
            doc = health.report(args["report"])
            return dict(changed=False, report=doc, table=health.table(doc))
        missing = [k for k in wa.NODE_HEALTH_CHECK_ARGS if args[k] is None]
        if missing:
            return dict(failed=True, msg="%s on %s: missing required arguments: %s (or give report)"
                        % (self.module_name, self.host, ", ".join(missing)))
        runtime = runtimes.RUNTIMES[args["container_runtime"]]
        runtime_services = list(dict.fromkeys([runtime["service"], runtime["cri_service"]]))
        if args["cert_warn_days"] < 0:
            return dict(failed=True, msg="%s on %s: cert_warn_days (kubewin_health_cert_warn_days) is %s: give 0 or "
                        "more days" % (self.module_name, self.host, args["cert_warn_days"]))
        if args["load_balancer_wait"] < 0:
            return dict(failed=True, msg="%s on %s: load_balancer_wait (kubewin_health_load_balancer_wait) is %s: "
                        "give 0 or more seconds" % (self.module_name, self.host, args["load_balancer_wait"]))
        # Read-only, so it runs in check mode too.
        view = health.host_view(self.script("node_health", health.script_parameters(
            args["container_runtime"], args["network_services"])))
        result = health.judge(view, args["node"], args["node_name"], args["pod_network"], runtime_services,
                              args["external_network"], args["network_services"],
                              args["container_runtime"] == "docker", args["container_runtime"],
                              args["cert_warn_days"], services=args["services"],
                              load_balancers_missing_since=args["load_balancers_missing_since"],
                              load_balancer_wait=args["load_balancer_wait"])
        return dict(result, changed=False, node_name=args["node_name"], runtime_services=runtime_services)
