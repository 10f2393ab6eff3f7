# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Argument specs of the modules that run through an action plugin on a Windows host (and of node_preflight).

The action plugins validate their task with these (plugins/plugin_utils, on the controller); the doc
stubs in plugins/modules build an AnsibleModule from the same dicts so validate-modules compares them
with the documentation. They live here because a module may import only module_utils.
"""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp

# kubewin.nodes.win_hns_network; the types are hns.NETWORK_TYPES' keys.
HNS_NETWORK_ARGSPEC = dict(
    name=dict(type="str", required=True),
    type=dict(type="str", choices=["l2bridge", "nat", "overlay", "transparent"]),
    address_prefix=dict(type="str"),
    gateway=dict(type="str"),
    adapter_name=dict(type="str"),
    vsid=dict(type="int"),
    state=dict(type="str", default="present", choices=["present", "absent"]),
    recreate=dict(type="bool", default=False),
    compare=dict(type="list", elements="str", default=["type", "address_prefix", "gateway", "adapter_name", "vsid"],
                 choices=["type", "address_prefix", "gateway", "adapter_name", "vsid"]),
)
HNS_NETWORK_REQUIRED_IF = [("state", "present", ["type"])]

# kubewin.nodes.win_docker_network
DOCKER_NETWORK_ARGSPEC = dict(
    name=dict(type="str", required=True),
    state=dict(type="str", default="present", choices=["present", "absent"]),
)

# kubewin.nodes.win_containerd
CONTAINERD_ARGSPEC = dict(
    sandbox_image=dict(type="str"),
    registry_mirrors=dict(type="list", elements="dict", default=[]),
    version=dict(type="str"),
    state=dict(type="str", choices=["started", "stopped"], default="started"),
    log_max_size_mb=dict(type="int", default=100),
    log_max_files=dict(type="int", default=5),
)

# kubewin.nodes.win_image_pull
IMAGE_PULL_ARGSPEC = dict(
    image=dict(type="str", required=True),
    timeout=dict(type="int", default=600),
)

# kubewin.nodes.win_hns_cleanup
HNS_CLEANUP_ARGSPEC = dict(
    networks=dict(type="list", elements="str", required=True),
)

# kubewin.nodes.win_kubelet_service
KUBELET_SERVICE_ARGSPEC = dict(
    name=dict(type="str", default="kubelet"),
    state=dict(type="str", default="present", choices=["present", "started", "stopped", "absent"]),
    kubelet_version=dict(type="str"),
    kubelet_path=dict(type="str", default=wp.KUBELET_EXE),
    config_file=dict(type="str", default=wp.KUBELET_CONFIG),
    config_dir=dict(type="str"),
    kubeconfig=dict(type="str", default=wp.KUBELET_CONF),
    bootstrap_kubeconfig=dict(type="str", default=wp.BOOTSTRAP_CONF),
    cert_dir=dict(type="str", default=wp.KUBELET_PKI),
    kubeadm_flags_file=dict(type="str", default=wp.KUBEADM_FLAGS),
    container_runtime=dict(type="str", default="containerd", choices=["containerd", "docker"]),
    dependencies=dict(type="list", elements="str"),
    pod_infra_container_image=dict(type="str"),
    extra_args=dict(type="dict", default={}),
    restart_delay_seconds=dict(type="int", default=10),
    log_runner_path=dict(type="str", default=wp.KUBE_LOG_RUNNER_EXE),
    log_file=dict(type="str", default=wp.LOG_FILES["kubelet"]),
    # service_logs.LOG_FILE_MAX_SIZE_MB / LOG_FILE_MAX_AGE_HOURS (module_utils cannot import plugin_utils)
    log_file_max_size_mb=dict(type="int", default=100),
    log_file_max_age_hours=dict(type="int", default=168),
    watch_seconds=dict(type="int"),
    # preflight's read of this service (kubewin_host.service_definitions), taken instead of a read of its own
    observed=dict(type="dict"),
)
KUBELET_SERVICE_REQUIRED_IF = [("state", "present", ["kubelet_version"]), ("state", "started", ["kubelet_version"]),
                               ("state", "stopped", ["kubelet_version"])]

# kubewin.nodes.win_host_service
NODE_SERVICE_ARGSPEC = dict(
    name=dict(type="str", required=True),
    state=dict(type="str", default="started", choices=["present", "started", "stopped", "absent"]),
    path=dict(type="str"),
    args=dict(type="list", elements="str", default=[]),
    dependencies=dict(type="list", elements="str", default=[]),
    environment=dict(type="dict", default={}),
    parameters=dict(type="dict", default={}),
    app_parameters=dict(type="list", elements="str"),
    display_name=dict(type="str"),
    description=dict(type="str", default="Kubernetes node component (managed by kubewin.nodes)"),
    restart_delay_seconds=dict(type="int", default=10),
    log_files=dict(type="list", elements="str"),
    watch_seconds=dict(type="int"),
    # preflight's read of this service (kubewin_host.service_definitions), taken instead of a read of its own
    observed=dict(type="dict"),
    # kube-proxy's arguments and kube-log-runner around it, made by the action (plugin_utils/_host/network.py
    # kube_proxy_argv) from these; O(path) is kube-proxy's program.
    kube_proxy=dict(type="dict", options=dict(
        node_name=dict(type="str", required=True),
        cluster_cidr=dict(type="str", required=True),
        backend=dict(type="str", required=True, choices=["vxlan", "host-gw"]),
        vni=dict(type="int", default=4096),
        pod_cidr=dict(type="str"),
        version=dict(type="str", required=True),
        log_file=dict(type="str", default=wp.LOG_FILES["kube-proxy"]),
        # service_logs.LOG_FILE_MAX_SIZE_MB / LOG_FILE_MAX_AGE_HOURS, as for the kubelet's
        log_file_max_size_mb=dict(type="int", default=100),
        log_file_max_age_hours=dict(type="int", default=168),
    )),
)
NODE_SERVICE_REQUIRED_IF = [("state", "present", ["path"]), ("state", "started", ["path"]),
                            ("state", "stopped", ["path"])]

# kubewin.nodes.win_host_facts
FACTS_ARGSPEC = dict(
    extra_paths=dict(type="list", elements="str", default=[]),
    ca_cert_path=dict(type="str"),
    list_images=dict(type="bool", default=False),
)

# kubewin.nodes.win_host_files
FILES_ARGSPEC = dict(
    directories=dict(type="list", elements="dict", default=[], options=dict(
        path=dict(type="str", required=True),
        restricted=dict(type="bool", default=True),
    )),
    downloads=dict(type="list", elements="dict", default=[], options=dict(
        url=dict(type="str", required=True),
        dest=dict(type="str"),
        extract_dir=dict(type="str"),
        checksum=dict(type="str"),
        checksum_url=dict(type="str"),
        algorithm=dict(type="str", default="sha512", choices=["sha512", "sha256"]),
        # The SHA-512 (or SHA-256) node_preflight resolved (its 'downloads' result): used as given, nothing is fetched.
        sha512=dict(type="str"),
        sha256=dict(type="str"),
        # the Windows service whose program this is: stopped before the file changes (node_sync), left stopped
        service=dict(type="str"),
    )),
    files=dict(type="list", elements="dict", default=[], options=dict(
        path=dict(type="str", required=True),
        # str; a JSON document the templating decoded on the way (ansible-core 2.18 turns a filter's JSON
        # text without true/false/null into a dict) is written as host_network.json_text writes it.
        content=dict(type="raw", required=True),
        restricted=dict(type="bool", default=False),
        secret=dict(type="bool", default=False),
    )),
    # kube-proxy's source VIP kept from pods by a file in host-local's store, made by the action
    # (plugin_utils/_host/network.py source_vip_reservation) and written with O(files).
    source_vip_reservation=dict(type="dict", options=dict(
        pod_cidr=dict(type="str", required=True),
        backend=dict(type="str", required=True, choices=["vxlan", "host-gw"]),
        vni=dict(type="int", default=4096),
    )),
    absent=dict(type="list", elements="str", default=[]),
    prune=dict(type="list", elements="str", default=[]),
    # reset: delete the host's transport key (plugin_utils/_host/sealed.py) in the same node_sync run
    forget_transport_key=dict(type="bool", default=False),
    # What the roles put in the runtime's CNI directories (runtime_cni.installed_paths), for reset.
    remove_cni=dict(type="dict", options=dict(
        dirs=dict(type="dict"),
        container_runtime=dict(type="str", required=True),
        versions=dict(type="dict", required=True),
    )),
    proxy=dict(type="str"),
    proxy_bypass=dict(type="list", elements="str", default=[], no_log=False),
    checksum_timeout=dict(type="int", default=30),
)

# kubewin.nodes.win_node_health
# Either the check of one node (node_name, node, pod_network, container_runtime) or the report of the checks (report).
NODE_HEALTH_CHECK_ARGS = ("node_name", "node", "pod_network", "container_runtime")
NODE_HEALTH_ARGSPEC = dict(
    node_name=dict(type="str"),
    node=dict(type="dict"),
    pod_network=dict(type="str"),
    container_runtime=dict(type="str", choices=["containerd", "docker"]),
    external_network=dict(type="str"),
    network_services=dict(type="bool", default=True),
    cert_warn_days=dict(type="int", default=30),
    services=dict(type="dict"),
    load_balancers_missing_since=dict(type="dict"),
    load_balancer_wait=dict(type="int", default=60),
    report=dict(type="dict"),
)

# kubewin.nodes.win_node_bundle
NODE_BUNDLE_ARGSPEC = dict(
    container_runtime=dict(type="str", required=True, choices=["containerd", "docker"]),
    network_services=dict(type="bool", default=True),
    cluster=dict(type="dict", default={}),
    max_lines=dict(type="int", default=2000),
    max_kib=dict(type="int", default=1024),
    max_events=dict(type="int", default=200),
)

# kubewin.nodes.bundle_archive
BUNDLE_ARCHIVE_ARGSPEC = dict(
    hosts=dict(type="dict", required=True),
    dest=dict(type="path", required=True),
)

# kubewin.nodes.node_preflight
PREFLIGHT_ARGSPEC = dict(
    node_name=dict(type="str", required=True),
    hostname=dict(type="str"),
    windows_build=dict(type="str"),
    supported_builds=dict(type="list", elements="str"),
    # No choices: a typo is reported by check_inputs naming the variable, not by the argument spec.
    container_runtime=dict(type="str", default="containerd"),
    runtime=dict(type="dict", options=dict(
        service_exists=dict(type="bool"),
        service_status=dict(type="str"),
        pipe_exists=dict(type="bool"),
        version=dict(type="str"),
        cri_dockerd_service_exists=dict(type="bool"),
    )),
    deployment_mode=dict(type="str", default="services"),
    kube_pods_subnet=dict(type="str"),
    kube_service_addresses=dict(type="str"),
    cluster_pod_subnet=dict(type="str"),
    cluster_service_subnet=dict(type="str"),
    kube_network_plugin=dict(type="str"),
    flannel_backend_type=dict(type="str", default="vxlan"),
    flannel_vxlan_vni=dict(type="int", default=4096),
    flannel_vxlan_port=dict(type="int", default=4789),
    cluster_flannel=dict(type="dict", options=dict(
        found=dict(type="bool", default=True),
        backend_type=dict(type="str"),
        vni=dict(type="int"),
        port=dict(type="int"),
        network=dict(type="str"),
        direct_routing=dict(type="bool"),
    )),
    flannel_vxlan_direct_routing=dict(type="bool", default=False),
    # k8s_join_info's calico result, as it is (module_utils/_calico.py makes it; _preflight/calico.py judges it)
    cluster_calico=dict(type="dict"),
    # Inventory values that differ from the cluster's (cluster_settings.conflicts): each stops preflight.
    # {host, variable, value, message} each (no suboptions: 'message' is a name Ansible reserves).
    # The resolved cluster settings and this host's own values of the same kubespray variables (conflicts).
    settings=dict(type="dict", default={}),
    host_settings=dict(type="dict", default={}),
    kube_version=dict(type="str"),
    server_version=dict(type="str"),
    existing_node=dict(type="dict", options=dict(
        exists=dict(type="bool", default=False),
        ready=dict(type="bool", default=False),
        os=dict(type="str"),
    )),
    joined=dict(type="bool", default=False),
    adapters=dict(type="list", elements="dict", options=dict(
        name=dict(type="str", required=True),
        ipv4=dict(type="list", elements="str", default=[]),
    )),
    adapter_name=dict(type="str"),
    # Downloads whose checksums are resolved now, so a missing checksum stops the run before any change.
    downloads=dict(type="list", elements="dict", default=[], options=dict(
        url=dict(type="str", required=True),
        dest=dict(type="str"),
        extract_dir=dict(type="str"),
        checksum=dict(type="str"),
        checksum_url=dict(type="str"),
        algorithm=dict(type="str", choices=["sha512", "sha256"]),
    )),
    proxy=dict(type="str"),
    checksum_timeout=dict(type="int", default=30),
    # Where the runtime reads CNI config and plugins (win_host_facts' kubewin_host.cni[runtime]).
    cni_dirs=dict(type="dict"),
    # Values checked for their form before anything else (check_inputs).
    no_proxy=dict(type="list", elements="str", default=[]),
    flannel_version=dict(type="str"),
    cni_plugins_version=dict(type="str"),
    # The CNI plugin releases (cni, flannel_cni, sdn_cni) -> tag; their archives join the downloads.
    cni_versions=dict(type="dict", default={}),
    kubeadm_token=dict(type="str", no_log=True),
    download_bases=dict(type="dict", default={}),
    allow_insecure_downloads=dict(type="bool", default=False),
    checksums=dict(type="dict", default={}),
    # hostprocess mode: variable name -> image reference, and the tag -> digest pins (check_hostprocess_images)
    hostprocess_images=dict(type="dict", default={}),
    hostprocess_image_pins=dict(type="dict", default={}),
    # inventory host -> {deployment_mode, images, pins}, every Windows host of the batch (check_hostprocess_hosts)
    hostprocess_hosts=dict(type="dict", default={}),
)
