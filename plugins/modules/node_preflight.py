#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: node_preflight
short_description: Check on the controller that a Windows host can join the cluster, before anything changes
version_added: 0.1.0
description:
  - Validates the settings and gathered facts of one Windows host against the cluster it is about to join, and fails
    before any change is made. Every problem of the host is reported at once, one line each, naming the variable to
    set and how to fix it.
  - Runs entirely on the controller and makes no remote call; the facts (Windows build, container runtime, adapters,
    the existing Node object, the cluster's kubeadm and flannel configuration) are gathered by earlier tasks.
  - Checks the node name (DNS-1123 subdomain; warns about Windows computer names longer than 15 characters), the
    Windows build, the container runtime and deployment mode, the pod and service networks against each other and
    against the cluster, flannel's backend, VNI and port against Windows' limits and the Linux flannel, the version
    skew between O(kube_version) and the API server, a Node object already using the name, and the network adapter.
  - Windows Server 2025 with flannel's vxlan backend needs the October 2025 cumulative update (KB5066835, OS build
    26100.6899) or later; without the update revision in O(windows_build) it is a warning.
  - Options not given are not checked (for example no O(runtime) facts when the role installs the runtime itself).
options:
  node_name:
    description: The Kubernetes node name the host will have (variable C(kubewin_node_name)).
    type: str
    required: true
  hostname:
    description: The Windows computer name (from facts), to explain where an invalid node name comes from.
    type: str
  windows_build:
    description: The Windows version of the host, V(10.0.20348) or with the update revision V(10.0.20348.2113).
    type: str
  supported_builds:
    description:
      - Windows builds accepted instead of the default table (17763 Windows Server 2019, 20348 Windows Server 2022,
        26100 Windows Server 2025), as V(20348) or V(10.0.20348) (variable C(kubewin_supported_windows_builds)).
    type: list
    elements: str
  container_runtime:
    description:
      - The container runtime of the node (variable C(kubewin_container_runtime)), V(containerd) or V(docker).
      - Any other value is a preflight failure naming the variable (not an argument error), with the other problems.
    type: str
    default: containerd
  runtime:
    description: Facts about the chosen runtime on the host. When omitted, the runtime on the host is not checked.
    type: dict
    suboptions:
      service_exists:
        description: Whether the runtime's Windows service exists.
        type: bool
      service_status:
        description: Status of that service, for example V(Running) or V(Stopped).
        type: str
      pipe_exists:
        description: Whether the runtime's pipe (C(\\.\pipe\containerd-containerd), C(\\.\pipe\docker_engine)) exists.
        type: bool
      version:
        description: The runtime's version, for example V(1.7.13) or the output of C(containerd --version).
        type: str
      cri_dockerd_service_exists:
        description: Whether a C(cri-dockerd) service exists (needed for Docker from Kubernetes 1.24).
        type: bool
  deployment_mode:
    description:
      - How the node's kubelet companions run (variable C(kubewin_deployment_mode)), V(services) or V(hostprocess).
        V(hostprocess) needs containerd 1.6 or later. Any other value is a preflight failure naming the variable.
    type: str
    default: services
  kube_pods_subnet:
    description: The pod network the node uses (the cluster's, see C(kubewin.nodes.cluster_settings)). Defaults to
      the cluster's value when given.
    type: str
  kube_service_addresses:
    description: The service network the node uses (the cluster's). Defaults to the cluster's value when given.
    type: str
  cluster_pod_subnet:
    description: C(networking.podSubnet) of the cluster's kubeadm ClusterConfiguration.
    type: str
  cluster_service_subnet:
    description: C(networking.serviceSubnet) of the cluster's kubeadm ClusterConfiguration.
    type: str
  kube_network_plugin:
    description:
      - The cluster's network plugin (kubespray's variable's name); V(flannel), or V(calico) (see O(cluster_calico)).
      - The roles pass the one the cluster runs (flannel's ConfigMap, else the calico-node DaemonSet), else the first
        control-plane host's C(kube_network_plugin). Unset, nothing Windows nodes can join was found, and preflight
        fails saying so.
    type: str
  flannel_backend_type:
    description: flannel backend (kubespray's variable); V(vxlan) or V(host-gw).
    type: str
    default: vxlan
  flannel_vxlan_vni:
    description: VXLAN VNI (kubespray's variable); at least 4096 on Windows.
    type: int
    default: 4096
  flannel_vxlan_port:
    description: VXLAN UDP port (kubespray's variable); 4789 on Windows.
    type: int
    default: 4789
  cluster_flannel:
    description: The Linux flannel's configuration (C(net-conf.json) of the C(kube-flannel-cfg) ConfigMap).
    type: dict
    suboptions:
      found:
        description: Whether the ConfigMap was found.
        type: bool
        default: true
      backend_type:
        description: C(Backend.Type).
        type: str
      vni:
        description: C(Backend.VNI); unset means flannel's Linux default 1.
        type: int
      port:
        description: C(Backend.Port); unset means the Linux default 8472.
        type: int
      network:
        description: C(Network), the range flannel hands node subnets out of.
        type: str
      direct_routing:
        description: C(Backend.DirectRouting); V(true) is refused, Windows flannel has no direct routing.
        type: bool
  cluster_calico:
    description: M(kubewin.nodes.k8s_join_info)'s C(calico); refused, listing what Windows cannot run (no install yet).
    type: dict
  flannel_vxlan_direct_routing:
    description: kubespray's C(flannel_vxlan_direct_routing); V(true) is refused, Windows flannel has no direct routing.
    type: bool
    default: false
  settings:
    description:
      - The resolved cluster settings (the C(kubewin.nodes.control_plane) role's C(kubewin_cluster_settings), from the
        C(kubewin.nodes.cluster_settings) filter). Its C(conflicts) (the first control-plane host's inventory values
        that differ from the cluster's) and this host's own (O(host_settings)) are failures, each naming both values,
        their origin and the fix. The same variable and value reported for several hosts counts once.
    type: dict
    default: {}
  host_settings:
    description: This host's own values of the kubespray variables the cluster also knows (C(kube_pods_subnet),
      C(kube_service_addresses), C(dns_domain), the C(flannel_*) ones), compared with O(settings).
    type: dict
    default: {}
  kube_version:
    description:
      - The kubelet version to install (kubespray's variable), as kubespray writes it (V(1.31.4)) or as kubeadm does
        (V(v1.31.4)); a pre-release like V(v1.32.0-rc.1) is accepted.
      - When omitted, the node gets the API server's version (O(server_version) without a provider's build suffix).
    type: str
  server_version:
    description: The API server's C(gitVersion).
    type: str
  existing_node:
    description: The Node object of the same name in the cluster, if any.
    type: dict
    suboptions:
      exists:
        description: Whether a Node of that name exists.
        type: bool
        default: false
      ready:
        description: Whether it is Ready.
        type: bool
        default: false
      os:
        description: Its C(kubernetes.io/os) label.
        type: str
  joined:
    description: Whether this host has already joined (C(C:\etc\kubernetes\kubelet.conf) exists).
    type: bool
    default: false
  adapters:
    description: The host's network adapters.
    type: list
    elements: dict
    suboptions:
      name:
        description: Adapter name, for example V(Ethernet0).
        type: str
        required: true
      ipv4:
        description: Its IPv4 addresses, with or without prefix length.
        type: list
        elements: str
        default: []
  adapter_name:
    description: The adapter flannel and HNS use (variable C(kubewin_network_adapter)); required when several adapters
      have an IPv4 address.
    type: str
  downloads:
    description:
      - The node's downloads (as M(kubewin.nodes.win_host_files) takes them). Their checksum files and the first
        byte of each file are fetched on the controller now, the way the node will fetch them, so a missing file or
        a missing or malformed checksum stops the run before any change. The only check that uses the network.
      - Every URL that cannot be fetched is listed in one failure (for an air-gapped mirror, exactly the URLs to
        add to it).
    type: list
    elements: dict
    default: []
    suboptions:
      url:
        description: Download URL.
        type: str
        required: true
      dest:
        description: Destination file.
        type: str
      extract_dir:
        description: Directory an archive is unpacked to.
        type: str
      checksum: {description: "Pinned checksum (SHA-512, or SHA-256 with O(downloads[].algorithm=sha256)).", type: str}
      checksum_url:
        description: URL of the checksum file (default the URL with C(.sha512), or C(.sha256sum), appended).
        type: str
      algorithm: {description: "V(sha512) (unset) or V(sha256) (archives only, as containerd's).", type: str,
                  choices: [sha512, sha256]}
  proxy:
    description: HTTP proxy for fetching the checksum files (variable C(kubewin_http_proxy)), checked to be
      V(http://host:port).
    type: str
  checksum_timeout:
    description: Seconds to wait for a checksum file.
    type: int
    default: 30
  cni_dirs:
    description:
      - Where the container runtime reads CNI configuration and plugins, as C(win_host_facts) reports them in
        C(kubewin_host.cni[runtime]) with the keys C(bin_dir), C(conf_dir) and C(source), or C(error) when they
        could not be read (containerd from C(containerd.exe config dump), cri-dockerd from its service command line).
      - The roles write the CNI files there; an error, or a configuration in C(conf_files) loaded first, fails.
    type: dict
  no_proxy:
    description: Hosts fetched without the proxy (variable C(kubewin_no_proxy)), in the forms Go programs accept
      (V(mirror.corp), V(.corp), V(*.corp), V(10.0.0.5), V(10.0.0.0/8), each with an optional V(:port), or V(*)). Each
      entry is checked; the checksum files are fetched the way the node will fetch the files.
    type: list
    elements: str
    default: []
  flannel_version:
    description: flannel's release tag (variable C(kubewin_flannel_version)), checked to be V(vX.Y.Z).
    type: str
  cni_plugins_version:
    description: The CNI plugins' release tag (variable C(kubewin_cni_plugins_version)), checked to be V(vX.Y.Z).
    type: str
  cni_versions:
    description:
      - The tag of each CNI plugin release the runtime needs, by source (C(cni), C(flannel_cni), C(sdn_cni)). Their
        archives, unpacked into the runtime's plugin directory (O(cni_dirs)), join O(downloads) and are checked like
        them; none while O(cni_dirs) is unknown. Their base URLs come from O(download_bases)
        (C(kubewin_cni_download_url), C(kubewin_flannel_cni_download_url), C(kubewin_sdn_cni_download_url)).
    type: dict
    default: {}
  kubeadm_token:
    description: The bootstrap token the user set (variable C(kubeadm_token) of the first control-plane host), checked
      to have kubeadm's form C([a-z0-9]{6}.[a-z0-9]{16}). Never shown, also not in a failure.
    type: str
  download_bases:
    description: The download base URLs by variable name (for example C(kubewin_kubernetes_download_url)), so a
      malformed or plain C(http://) one is reported by the variable that holds it.
    type: dict
    default: {}
  allow_insecure_downloads:
    description: Accept plain C(http://) or C(ftp://) download locations (C(kubewin_allow_insecure_downloads));
      otherwise they are refused, as the file and its checksum would come over one unauthenticated connection.
    type: bool
    default: false
  checksums:
    description: The pinned checksums (variable C(kubewin_checksums)), download URL to SHA-512. A key that is a bare
      file name is refused (pins hold for one URL, so for one version); a pin for a URL the node does not download is a
      warning. A pin is applied to the download of its URL (it wins over the published checksum file), and the
      RV(downloads) returned carry the pinned SHA-512.
    type: dict
    default: {}
  hostprocess_images:
    description: With O(deployment_mode=hostprocess), the images of the HostProcess DaemonSets, variable name to image
      reference (C(kubewin_flannel_hostprocess_image), C(kubewin_kube_proxy_hostprocess_image)), each pinned by digest
      (C(name@sha256:<64 hex>)) itself or through O(hostprocess_image_pins), as they run as SYSTEM on every Windows
      node and a tag can be moved to another image.
    type: dict
    default: {}
  hostprocess_image_pins:
    description: The digest pins of those images (variable C(kubewin_hostprocess_image_pins)), image reference to
      C(name@sha256:<64 hex>); a value of another form is refused.
    type: dict
    default: {}
  hostprocess_hosts:
    description: Inventory host to its C(deployment_mode), C(images) and C(pins), every Windows host of the run; one
      DaemonSet of each runs on all, so hosts in hostprocess mode whose images differ (pinned by digest) are refused.
    type: dict
    default: {}
  values:
    description:
      - The values the user sets, by variable name, each checked before anything changes, naming the variable;
        C(kubewin_node_labels) and C(kubewin_node_taints) as the API server checks them (labels the kubelet or this
        collection set are refused); C(kubewin_kubelet_extra_args) against the flags of that minor's Windows kubelet
        (generated by C(lab/kubelet_flags/generate.py)), weakening flags unless C(kubewin_kubelet_allow_insecure);
        the timeouts, token lifetime and renew fraction, C(kube_apiserver_port) in their ranges;
        C(kubewin_bootstrap_token_ttl) a Go duration above zero; kubespray's kubelet hardening variables, which never
        reach Windows, each a warning naming its flag.
    type: dict
    default: {}
  node_names:
    description: Inventory host to node name, every Windows host of the run; a name two hosts share is refused on both.
    type: dict
    default: {}
  kubelet_config:
    description: The cluster's KubeletConfiguration (C(kube-system/kubelet-config)); anonymous authentication,
      C(AlwaysAllow), a read-only port, rotation off or TLS below 1.2 are refused (O(values)), rotation unset warns.
    type: dict
  node_renewal_bindings:
    description: What approves a node's own certificate renewal (M(kubewin.nodes.k8s_join_info)); none is a warning.
    type: list
    elements: str
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: windows
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
notes:
  - Never changes anything and never contacts the host.
author:
  - kubewin.nodes maintainers (@kubewin)
"""

EXAMPLES = r"""
# The preflight role (roles/preflight/tasks/main.yml) passes every option; a shorter call for one host:
- name: Check the host before anything changes
  kubewin.nodes.node_preflight:
    node_name: "{{ kubewin_node_name }}"
    windows_build: "{{ kubewin_host.windows_build }}"
    adapters: "{{ kubewin_host.adapters }}"
    server_version: "{{ hostvars[groups['kube_control_plane'] | first].kubewin_cluster.server_version.git_version }}"
    values: {kubewin_node_labels: "{{ kubewin_node_labels }}", kubewin_kubelet_extra_args: {max-pods: 250}}
  register: _preflight
"""

RETURN = r"""
failures:
  description: Every problem found, one entry each, naming the check and the variable to change.
  returned: always
  type: list
  elements: dict
  sample: [{"check": "network_plugin", "variable": "flannel_vxlan_vni",
            "message": "flannel_vxlan_vni is 1; flannel on Windows needs a VXLAN VNI from 4096 ..."}]
warning_findings:
  description: The warnings (also shown as Ansible warnings), with check and variable.
  returned: always
  type: list
  elements: dict
  sample: [{"check": "network_plugin", "variable": "flannel_backend_type",
            "message": "flannel_backend_type: host-gw routes pod traffic directly between node IPs ..."}]
node:
  description:
    - The node as the roles use it, worked out only here. C(name) is O(node_name); C(ip) the node's IPv4 address, from
      O(adapter_name) or the only adapter with one (an address HNS moved to C(vEthernet (<adapter>)) counts for that
      adapter); C(adapter) its adapter; C(subnet) the network of C(ip); null when unknown. Once all checks passed,
      C(config_files) (CNI config, log query drop-in), C(flanneld_argv) (null in hostprocess mode) and, in hostprocess
      mode, C(hostprocess_images) (variable to the image pinned by digest; null else), for the roles.
  returned: always
  type: dict
  sample: {"name": "win-worker-1", "ip": "10.50.0.10", "adapter": "Ethernet", "subnet": "10.50.0.0/24"}
downloads:
  description:
    - O(downloads), each with its SHA-512 (C(sha512)) or SHA-256 (C(sha256)) in place of O(downloads[].checksum)
      and O(downloads[].checksum_url), for M(kubewin.nodes.win_host_files), which fetches no checksum again.
      Checksum files are fetched once per host.
    - Null when the downloads could not be checked (the task failed).
  returned: always
  type: list
  elements: dict
  sample: [{"url": "https://dl.k8s.io/release/v1.33.2/bin/windows/amd64/kubelet.exe", "dest": "C:\\k\\kubelet.exe",
            "sha512": "<128 hex digits>"}]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import PREFLIGHT_ARGSPEC

# The action plugin's spec (plugin_utils/_preflight EXTRA_ARGSPEC) again, for the docs (a unit test keeps both equal).
ARGUMENT_SPEC = dict(PREFLIGHT_ARGSPEC, values=dict(type="dict", default={}), node_names=dict(type="dict", default={}),
                     kubelet_config=dict(type="dict"), node_renewal_bindings=dict(type="list", elements="str"))


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    # Reached only if the action plugin was bypassed (e.g. the module was copied elsewhere).
    module.fail_json(msg="kubewin.nodes.node_preflight runs through its action plugin; call it as a task of the "
                         "kubewin.nodes collection")


if __name__ == "__main__":
    main()
