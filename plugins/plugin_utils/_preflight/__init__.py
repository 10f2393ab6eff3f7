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

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp
from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import PREFLIGHT_ARGSPEC as _BASE_ARGSPEC
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import kubelet as host_kubelet
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network as host_network
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import runtime_cni, service_logs
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
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.images import (  # noqa: F401
    IMAGE_VALUES,
    images_to_pull,
    sandbox_image,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.inputs import (  # noqa: F401
    check_inputs,
    check_kubeadm_token_use,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.kubelet import (  # noqa: F401
    ALLOW_INSECURE_VAR,
    EXTRA_ARGS_VAR,
    KUBESPRAY_HARDENING,
    check_kubelet_args,
    check_kubelet_config,
    check_kubespray_hardening,
    check_node_renewal,
    flag_data,
    supported_minors,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.labels import (  # noqa: F401
    KUBELET_MANAGED_LABELS,
    LABELS_VAR,
    TAINTS_VAR,
    check_node_labels_taints,
    kubelet_may_set,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.metrics import (  # noqa: F401
    VARIABLES as METRICS_VARIABLES,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.metrics import (
    check_windows_exporter,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.network import (  # noqa: F401
    FIREWALL_REMOTE_VAR,
    FLANNEL_CLUSTER_FIX,
    check_firewall_remote_addresses,
    check_network_plugin,
    check_settings_conflicts,
    check_subnets,
    firewall_remoteip,
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
    check_windows_update,
    chosen_adapter,
    node_subnet,
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
    check_containerd_install,
    check_deployment_mode,
    check_hostprocess_hosts,
    check_hostprocess_images,
    check_version_skew,
    hostprocess_images,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.values import (  # noqa: F401
    NUMBER_RANGES,
    check_deprecated_token_vars,
    check_node_names,
    check_numbers,
    duration_seconds,
)

# The options node_preflight takes beyond _windows_args' PREFLIGHT_ARGSPEC (issue 20 item 4); its doc stub
# (plugins/modules/node_preflight.py) declares the same, and a unit test keeps the two equal.
EXTRA_ARGSPEC = dict(
    # The values the user sets, by variable name (VALUE_VARIABLES), each checked for its form.
    values=dict(type="dict", default={}),
    # inventory host -> node name, every Windows host of the batch.
    node_names=dict(type="dict", default={}),
    # The cluster's KubeletConfiguration (kube-system/kubelet-config), or its security fields.
    kubelet_config=dict(type="dict"),
    # The ClusterRoleBindings that approve a node's renewal of its own client certificate (k8s_join_info; None: not
    # read).
    node_renewal_bindings=dict(type="list", elements="str"),
)
PREFLIGHT_ARGSPEC = dict(_BASE_ARGSPEC, **EXTRA_ARGSPEC)
DURATIONS = ("kubewin_bootstrap_token_ttl",)
# containerd's install (check_containerd_install); kubewin_containerd_planned is the roles' decision, not a variable.
CONTAINERD_VALUES = ("kubewin_containerd_install", "kubewin_containerd_planned", "kubewin_containerd_upgrade",
                     "kubewin_containerd_installed",
                     "kubewin_containerd_version",
                     "kubewin_crictl_version", "kubewin_sandbox_image", "kubewin_containerd_registry_mirrors")
# The deprecated node-token variables the preflight role passes: each warns when set (check_deprecated_token_vars).
DEPRECATED_VALUES = ("kubewin_node_token_expiration_seconds", "kubewin_node_token_renew_fraction",
                     "kubewin_node_token_allow_long_expiration", "kubewin_node_token_require_binding")
VALUE_VARIABLES = ((LABELS_VAR, TAINTS_VAR, EXTRA_ARGS_VAR, ALLOW_INSECURE_VAR, FIREWALL_REMOTE_VAR,
                    "kubewin_use_kubeadm_token") + DEPRECATED_VALUES
                   + tuple(NUMBER_RANGES) + DURATIONS + tuple(KUBESPRAY_HARDENING) + METRICS_VARIABLES
                   + CONTAINERD_VALUES + tuple(v for v in IMAGE_VALUES if v not in NUMBER_RANGES))

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
        check_hostprocess_hosts(i.get("host"), i["deployment_mode"], i["hostprocess_images"],
                                i["hostprocess_image_pins"], i["hostprocess_hosts"]),
        check_container_runtime(i["container_runtime"], i["runtime"], i["deployment_mode"], kube),
        check_version_skew(kube, i["server_version"]),
    ]
    subnet_result, pods, svc = check_subnets(i["kube_pods_subnet"], i["kube_service_addresses"],
                                             i["cluster_pod_subnet"], i["cluster_service_subnet"])
    results.append(subnet_result)
    results.append(check_network_plugin(i["kube_network_plugin"], i["flannel_backend_type"], i["flannel_vxlan_vni"],
                                        i["flannel_vxlan_port"], i["cluster_flannel"], pods,
                                        i["flannel_vxlan_direct_routing"], i.get("network_plugin_origin"),
                                        i["cluster_calico"], i["windows_build"]))
    results.append(check_settings_conflicts(i.get("settings_conflicts") or []))
    results.append(check_existing_node(i["node_name"], i["existing_node"], i["joined"]))
    adapter_result, node_ips = check_network_adapter(i["adapters"], i["adapter_name"], i["kube_network_plugin"])
    results.append(adapter_result)
    identity = {"name": i["node_name"], "ip": str(node_ips[0]) if node_ips else None,
                "adapter": chosen_adapter(i["adapters"], i["adapter_name"], node_ips),
                # the node address's network (host-gw's OutBoundNAT exception, cni_config node_subnet)
                "subnet": node_subnet(i["adapters"], node_ips[0] if node_ips else None),
                # the inbound rules' remoteip, as the facts read it back (kubewin_firewall_remote_addresses)
                "firewall_remoteip": firewall_remoteip((i["values"] or {}).get(FIREWALL_REMOTE_VAR, "any")),
                # hostprocess mode: the images pinned by digest its DaemonSets run (the control_plane role's
                # templates read the first such host's)
                "hostprocess_images": hostprocess_images(i["deployment_mode"], i["hostprocess_images"],
                                                         i["hostprocess_image_pins"])}
    results.append(check_node_ip(node_ips, pods, svc))
    results.append(check_cni_dirs(i["container_runtime"], i["cni_dirs"]))
    # The flannel backend the node gets: the cluster's, else the inventory's.
    backend = (i.get("cluster_flannel") or {}).get("backend_type") or i["flannel_backend_type"]
    results.append(check_windows_update(i["windows_build"], backend))
    values = i["values"] or {}
    insecure = values.get(ALLOW_INSECURE_VAR)
    try:
        allow_insecure = boolean(insecure) if insecure not in (None, "") else False
    except TypeError:
        allow_insecure = False
        results.append(([finding("values", ALLOW_INSECURE_VAR, "%s is %r, not a boolean: set it to true or false"
                                 % (ALLOW_INSECURE_VAR, insecure))], []))
    if FIREWALL_REMOTE_VAR in values:
        results.append(check_firewall_remote_addresses(values[FIREWALL_REMOTE_VAR], pods))
    results.append(check_node_labels_taints(values.get(LABELS_VAR), values.get(TAINTS_VAR)))
    results.append(check_kubelet_args(values.get(EXTRA_ARGS_VAR), _kube_tuple(kube), i["node_name"], allow_insecure))
    results.append(check_kubelet_config(i["kubelet_config"], allow_insecure))
    results.append(check_node_renewal(i["node_renewal_bindings"], i["kubelet_config"], i.get("host"), i["node_name"]))
    results.append(check_kubespray_hardening(dict((k, values.get(k)) for k in KUBESPRAY_HARDENING),
                                             values.get(EXTRA_ARGS_VAR)))
    results.append(check_node_names(i.get("host"), i["node_name"], i["node_names"]))
    results.append(check_kubeadm_token_use(i["kubeadm_token"], values.get("kubewin_use_kubeadm_token")))
    results.append(check_numbers(dict((k, values[k]) for k in NUMBER_RANGES if k in values),
                                 dict((k, values[k]) for k in DURATIONS if k in values)))
    results.append(check_deprecated_token_vars(values))
    results.append(check_windows_exporter(values))
    results.append(check_containerd_install(i["container_runtime"], values, _kube_tuple(kube)))
    # issue 23 points 3 and 4: the pause image for this host's build (by digest), and the images it lacks
    identity["sandbox_image"], result = sandbox_image(i["windows_build"], values, i["hostprocess_image_pins"])
    results.append(result)
    identity["images_to_pull"], result = images_to_pull(i["container_runtime"], values)
    results.append(result)
    failures, warnings = [], []
    for fails, warns in results:
        failures.extend(fails)
        warnings.extend(warns)
    return failures, warnings, identity


def node_config_files(inputs, node):
    """The files the node role writes for ``node`` (preflight's identity: its ip and subnet), worked out once here:
    the flannel CNI config where the runtime reads it (both modes) and the kubelet drop-in that turns the node log
    query on, as [{path, content}] for win_host_files. A function of the run's inputs alone (the cluster's settings,
    this host's flannel variables, the runtime, the version), so every run writes the same bytes. Returns (files,
    failures); files is None when a failure says why they cannot be made."""
    settings = inputs.get("settings") or {}
    missing = [k for k in ("pods_subnet", "service_subnet", "dns_server", "dns_domain") if not settings.get(k)]
    if missing:
        return None, [finding("settings", None, "the cluster's settings lack %s, which the node's CNI config needs: "
                                                "run playbooks/discover.yml first, in the same run (docs/tags.md)"
                              % ", ".join(missing))]
    conf_dir = (inputs.get("cni_dirs") or {}).get("conf_dir")
    if not conf_dir:
        return None, [finding("cni_dirs", VARIABLES["container_runtime"],
                              "the CNI directories of %s are unknown, so the pod network's configuration cannot be put "
                              "where the runtime reads it: check kubewin_container_runtime"
                              % inputs.get("container_runtime"))]
    kube = versions.effective_kube_version(inputs.get("kube_version"), inputs.get("server_version"))
    try:
        flannel = host_network.windows_flannel(settings, inputs.get("host_settings"), node.get("ip"))
        cni = host_network.cni_config(settings["pods_subnet"], settings["service_subnet"], flannel["backend"],
                                      flannel["vni"], settings["dns_server"], settings["dns_domain"], node.get("ip"),
                                      inputs.get("container_runtime"), node.get("subnet"))
    except host_network.NetworkConfigError as e:
        return None, [finding("network", VARIABLES["flannel_backend_type"], str(e))]
    try:
        log_query = host_kubelet.log_query_config(kube)
    except ValueError as e:
        return None, [finding("inputs", VARIABLES["kube_version"], str(e))]
    return [{"path": "%s\\%s" % (conf_dir, runtime_cni.CNI_CONF_FILE), "content": cni},
            {"path": "%s\\%s" % (wp.KUBELET_DROPIN_DIR, host_kubelet.LOG_QUERY_DROPIN), "content": log_query}], []


def flanneld_argv(inputs, node):
    """flanneld's command line on ``node`` (its ip) in services mode, worked out once here as node_config_files are:
    kube-log-runner of the node's Kubernetes version writing flanneld.log, rotated as kubewin_log_file_max_size_mb
    and kubewin_log_file_max_age_hours say (host_network.flanneld_argv). Nothing in it waits for the join, so the
    network role runs it as it is. Returns (argv, failures); argv is None in hostprocess mode (a DaemonSet runs
    flanneld) or when a failure says why it cannot be made."""
    if inputs.get("deployment_mode") != "services":
        return None, []
    if not node.get("ip"):
        return None, [finding("network_adapter", VARIABLES["adapter_name"],
                              "flanneld needs the node's IPv4 address, which no adapter gave: set "
                              "kubewin_network_adapter")]
    values = inputs.get("values") or {}
    kube = versions.effective_kube_version(inputs.get("kube_version"), inputs.get("server_version"))
    try:
        return host_network.flanneld_argv(
            node.get("ip"), kube,
            values.get("kubewin_log_file_max_size_mb", service_logs.LOG_FILE_MAX_SIZE_MB),
            values.get("kubewin_log_file_max_age_hours", service_logs.LOG_FILE_MAX_AGE_HOURS)), []
    except host_network.NetworkConfigError as e:
        return None, [finding("values", None, "flanneld's command line: %s" % e)]


def _kube_tuple(kube):
    tag = versions.kube_release(kube) if kube else None
    return versions.parse(tag) if tag else None


def failure_message(host, failures):
    return "Preflight failed on %s:\n%s" % (host, "\n".join("- " + x["message"] for x in failures))
