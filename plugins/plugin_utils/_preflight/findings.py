# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a check reports: a finding names the check, the variable the user sets to fix it, and a message.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions

# The user-facing variable behind each option (kubespray's name where kubespray has one).
VARIABLES = {
    "node_name": "kubewin_node_name",
    "windows_build": "kubewin_supported_windows_builds",
    "container_runtime": "kubewin_container_runtime",
    "deployment_mode": "kubewin_deployment_mode",
    "kube_pods_subnet": "kube_pods_subnet",
    "kube_service_addresses": "kube_service_addresses",
    "kube_network_plugin": "kube_network_plugin",
    "flannel_backend_type": "flannel_backend_type",
    "flannel_vxlan_vni": "flannel_vxlan_vni",
    "flannel_vxlan_port": "flannel_vxlan_port",
    "flannel_vxlan_direct_routing": "flannel_vxlan_direct_routing",
    "kube_version": "kube_version",
    "adapter_name": "kubewin_network_adapter",
    "proxy": "kubewin_http_proxy",
    "no_proxy": "kubewin_no_proxy",
    "flannel_version": "kubewin_flannel_version",
    "cni_plugins_version": "kubewin_cni_plugins_version",
    "kubeadm_token": "kubeadm_token",
    "allow_insecure_downloads": "kubewin_allow_insecure_downloads",
    "checksums": "kubewin_checksums",
    "containerd_install": "kubewin_containerd_install",
    "containerd_version": "kubewin_containerd_version",
    "crictl_version": "kubewin_crictl_version",
    "sandbox_image": "kubewin_sandbox_image",
    "registry_mirrors": "kubewin_containerd_registry_mirrors",
}


def finding(check, variable, message):
    return {"check": check, "variable": variable, "message": message}


class Findings:
    """Collects failures and warnings of one check function."""

    def __init__(self, check):
        self.check = check
        self.failures = []
        self.warnings = []

    def fail(self, variable, message):
        self.failures.append(finding(self.check, variable, message))

    def warn(self, variable, message):
        self.warnings.append(finding(self.check, variable, message))

    def result(self):
        return self.failures, self.warnings


def _v(ver, parts=3):
    return versions.format_version(ver, parts)
