# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side preflight checks for a Windows node about to join a kubeadm/kubespray cluster.

Every check is a plain function of the inputs that returns findings; none of them touches a host.
A finding names the check, the variable the user sets to fix it, and a message that says what is
wrong and what to do. ``run_checks`` runs them all so one run reports every problem of a host.

One module per concern; this package runs them all and re-exports their checks.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import PREFLIGHT_ARGSPEC
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.downloads import (  # noqa: F401
    check_downloads,
    cni_plugin_downloads,
    download_failures,
    resolved_downloads,
    unavailable_downloads,
    unavailable_failure,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.findings import (  # noqa: F401
    VARIABLES,
    Findings,
    finding,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.inputs import (  # noqa: F401
    check_inputs,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.network import (  # noqa: F401
    FLANNEL_CLUSTER_FIX,
    check_network_plugin,
    check_settings_conflicts,
    check_subnets,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.node import (  # noqa: F401
    NETBIOS_MAX,
    RESET_HINT,
    SUPPORTED_BUILDS,
    adapter_candidates,
    check_ca_cert_path,
    check_existing_node,
    check_network_adapter,
    check_node_ip,
    check_node_name,
    check_windows_build,
    chosen_adapter,
    suggest_node_name,
    supported_builds_table,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.runtime import (  # noqa: F401
    CNI_DIRS_FIX,
    CONTAINERD_HOSTPROCESS_MIN,
    CONTAINERD_MIN,
    CONTAINERD_RECOMMENDED,
    DEPLOYMENT_MODES,
    DOCKERSHIM_REMOVED,
    HOSTPROCESS_BETA,
    HOSTPROCESS_GA,
    allowed_kubelet_minors,
    check_cni_dirs,
    check_container_runtime,
    check_deployment_mode,
    check_hostprocess_images,
    check_version_skew,
)

# ---------------------------------------------------------------------------------------------------


def run_checks(inputs):
    """Run every check on the task's options; return (failures, warnings, identity): failures and
    warnings are lists of {check, variable, message}; identity is the node as the roles use it
    ({name, ip, adapter}, None where unknown): this is its only producer."""
    i = dict((k, spec.get("default")) for k, spec in PREFLIGHT_ARGSPEC.items())
    i.update((k, v) for k, v in inputs.items() if v is not None)
    # The version the node gets: kube_version in either spelling, else the API server's.
    kube = versions.effective_kube_version(i["kube_version"], i["server_version"])
    results = [
        check_inputs(i["kube_version"], i["server_version"], i["container_runtime"], i["deployment_mode"],
                     i["flannel_version"], i["cni_plugins_version"], i["kubeadm_token"], i["proxy"], i["no_proxy"]),
        check_downloads(i["downloads"], i["download_bases"], i["allow_insecure_downloads"], i["checksums"]),
        check_node_name(i["node_name"], i["hostname"]),
        check_ca_cert_path((i.get("settings") or {}).get("ca_cert_path"),
                           ((i.get("settings") or {}).get("origins") or {}).get("ca_cert_path")),
        check_windows_build(i["windows_build"], i["supported_builds"]),
        check_deployment_mode(i["deployment_mode"], kube),
        check_hostprocess_images(i["deployment_mode"], i["hostprocess_images"], i["hostprocess_image_pins"]),
        check_container_runtime(i["container_runtime"], i["runtime"], i["deployment_mode"], kube),
        check_version_skew(kube, i["server_version"]),
    ]
    subnet_result, pods, svc = check_subnets(i["kube_pods_subnet"], i["kube_service_addresses"],
                                             i["cluster_pod_subnet"], i["cluster_service_subnet"])
    results.append(subnet_result)
    results.append(check_network_plugin(i["kube_network_plugin"], i["flannel_backend_type"], i["flannel_vxlan_vni"],
                                        i["flannel_vxlan_port"], i["cluster_flannel"], pods,
                                        i["flannel_vxlan_direct_routing"], i.get("network_plugin_origin")))
    results.append(check_settings_conflicts(i.get("settings_conflicts") or []))
    results.append(check_existing_node(i["node_name"], i["existing_node"], i["joined"]))
    adapter_result, node_ips = check_network_adapter(i["adapters"], i["adapter_name"], i["kube_network_plugin"])
    results.append(adapter_result)
    identity = {"name": i["node_name"], "ip": str(node_ips[0]) if node_ips else None,
                "adapter": chosen_adapter(i["adapters"], i["adapter_name"], node_ips)}
    results.append(check_node_ip(node_ips, pods, svc))
    results.append(check_cni_dirs(i["container_runtime"], i["cni_dirs"]))
    failures, warnings = [], []
    for fails, warns in results:
        failures.extend(fails)
        warnings.extend(warns)
    return failures, warnings, identity


def failure_message(host, failures):
    return "Preflight failed on %s:\n%s" % (host, "\n".join("- " + x["message"] for x in failures))
