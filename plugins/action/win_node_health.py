# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_node_health: the node's services and HNS networks in one read (the
node_health script), judged with the Node the API returned (plugin_utils/_health.py)."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _health as health
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import runtimes
from ansible_collections.kubewin.nodes.plugins.plugin_utils._windows_action import WindowsAction


class ActionModule(WindowsAction):
    ARGSPEC = wa.NODE_HEALTH_ARGSPEC

    def act(self, args):
        runtime = runtimes.RUNTIMES[args["container_runtime"]]
        runtime_services = list(dict.fromkeys([runtime["service"], runtime["cri_service"]]))
        services = runtime_services + ["kubelet"]
        if args["network_services"]:
            services += ["flanneld", "kube-proxy"]
        # Read-only, so it runs in check mode too.
        view = health.host_view(self.script("node_health", {"Services": services}))
        result = health.judge(view, args["node"], args["node_name"], args["pod_network"], runtime_services,
                              args["external_network"], args["network_services"])
        return dict(result, changed=False, node_name=args["node_name"], runtime_services=runtime_services)
