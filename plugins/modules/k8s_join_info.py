#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_join_info
short_description: Read what adding Windows nodes to a kubeadm or kubespray cluster needs to know
version_added: 0.1.0
description:
  - Reads, and never changes, the facts a Windows-node preflight checks, namely the API server version, the
    flannel network configuration with the defaults flannel applies, every Node's readiness, OS, kubelet
    version and Windows build, kubeadm's ClusterConfiguration and whether kubeadm's kubelet-config exists.
  - flannel's C(net-conf.json) is read from the first ConfigMap of O(flannel_configmaps) that exists,
    C(kube-flannel/kube-flannel-cfg) (flannel's own manifest) or C(kube-system/kube-flannel-cfg) (kubespray).
    Settings missing from it are reported as flannel applies them on Linux. No C(Backend) means C(udp); a
    vxlan backend without C(VNI) uses VNI 1 and without C(Port) the kernel's UDP port 8472. Windows flannel
    needs vxlan VNI 4096 or more and port 4789 (on Linux too), or host-gw; RV(flannel.windows_problems) says
    what to change.
  - Runs where the Kubernetes API is reachable with a kubeconfig, usually on the controller or
    delegated to a control-plane host.
author:
  - kubewin.nodes maintainers (@kubewin)
requirements:
  - kubernetes >= 29.0.0 (Python library)
  - PyYAML (Python library, installed with ansible-core)
attributes:
  check_mode:
    support: full
    details:
      - The module only reads; it runs the same in check mode.
  diff_mode:
    support: none
  platform:
    platforms: posix
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubewin.nodes.k8s_auth
options:
  flannel_configmaps:
    description:
      - ConfigMaps (C(namespace/name)) to look for flannel's C(net-conf.json) in, first found wins.
    type: list
    elements: str
    default: [kube-flannel/kube-flannel-cfg, kube-system/kube-flannel-cfg]
  discovery:
    description:
      - Also read C(kube-public/cluster-info) and return RV(discovery), what
        M(kubewin.nodes.k8s_join_token) returns with C(state=discovery), in the same module run. Needs the
        C(cryptography) and C(PyYAML) Python libraries.
    type: bool
    default: false
    version_added: 0.3.0
  pin_daemonsets:
    description:
      - Also return in RV(daemonset_pins) what M(kubewin.nodes.k8s_daemonset_os_pin) would do with these
        DaemonSets (its O(kubewin.nodes.k8s_daemonset_os_pin#module:daemonsets)), changing nothing; unset, they
        are not read.
    type: list
    elements: str
    version_added: 0.3.0
  pod_security:
    description:
      - Also list the Namespaces and return in RV(pod_security) how the HostProcess mode of the collection's
        C(control_plane) role changes their Pod Security enforce label, and how its reset puts it back, changing
        nothing.
    type: bool
    default: false
notes:
  - The kubeconfig's user must be allowed to list Nodes and get ConfigMaps in C(kube-system) and the flannel
    namespace (and, with O(pod_security), list Namespaces); C(/etc/kubernetes/admin.conf) can.
seealso:
  - name: flannel backends
    description: The vxlan and host-gw settings, and what Windows supports.
    link: https://github.com/flannel-io/flannel/blob/master/Documentation/backends.md
  - module: kubewin.nodes.k8s_daemonset_os_pin
  - module: kubewin.nodes.k8s_node
"""

EXAMPLES = r"""
- name: Read the cluster facts from the first control-plane host
  kubewin.nodes.k8s_join_info:
    kubeconfig: /etc/kubernetes/admin.conf
  delegate_to: "{{ groups['kube_control_plane'][0] }}"
  run_once: true
  register: cluster

- name: Refuse to add Windows nodes to a flannel network Windows cannot join
  ansible.builtin.assert:
    that:
      - not cluster.flannel.found or cluster.flannel.windows_compatible
    fail_msg: "{{ cluster.flannel.windows_problems | join(' ') }}"

- name: Windows kubelet must not be newer than the API server
  ansible.builtin.assert:
    that:
      - kubelet_version is version(cluster.server_version.version, '<=')
"""

RETURN = r"""
daemonset_pins:
  description:
    - With O(pin_daemonsets), the DaemonSets M(kubewin.nodes.k8s_daemonset_os_pin) would pin (C(to_pin)), refuse
      (C(conflicts), messages), not find (C(missing)), and the other DaemonSets whose Linux pods would land on
      Windows nodes (C(landing_on_windows)), each as C(namespace/name).
  returned: O(pin_daemonsets) is set
  type: dict
  sample: {to_pin: [kube-system/kube-proxy], conflicts: [], missing: [kube-system/kube-flannel], landing_on_windows: []}
pod_security:
  description:
    - With O(pod_security), the Namespace definitions to apply as merge patches. C(enable), for the namespaces the
      HostProcess pods run in (flannel's, else C(kube-flannel), and C(kube-system)) whose
      C(pod-security.kubernetes.io/enforce) label is not V(privileged), sets it so and records the value before in
      the annotation C(kubewin.nodes/pod-security-enforce-before) (once). C(revert), for every namespace with that
      annotation, puts the recorded value back (removes the label when there was none) and drops the annotation.
  returned: O(pod_security=true)
  type: dict
  sample: {enable: [{apiVersion: v1, kind: Namespace, metadata: {name: kube-flannel,
           labels: {pod-security.kubernetes.io/enforce: privileged},
           annotations: {kubewin.nodes/pod-security-enforce-before: baseline}}}], revert: []}
discovery:
  description: With O(discovery), the C(api_server_endpoint) and C(ca_cert_hashes) of C(kube-public/cluster-info).
  returned: O(discovery=true)
  type: dict
  sample: {api_server_endpoint: 192.0.2.10:6443, ca_cert_hashes: ["sha256:5c4a8ee6d5e8..."]}
server_version:
  description: The API server's version (C(/version)).
  returned: always
  type: dict
  contains:
    git_version:
      description: C(gitVersion) as the server reports it.
      type: str
      sample: v1.31.4
    version:
      description: C(major.minor.patch) without C(v) or build metadata.
      type: str
      sample: 1.31.4
    major:
      description: Major version (a provider's C(1+) becomes 1).
      type: int
      sample: 1
    minor:
      description: Minor version (a provider's C(31+) becomes 31).
      type: int
      sample: 31
    patch:
      description: Patch version, from C(gitVersion).
      type: int
      sample: 4
    platform:
      description: The server's platform.
      type: str
      sample: linux/amd64
flannel:
  description: flannel's network configuration, with flannel's defaults applied.
  returned: always
  type: dict
  contains:
    found:
      description: Whether one of O(flannel_configmaps) exists.
      type: bool
      sample: true
    namespace:
      description: Namespace of the ConfigMap found.
      type: str
      sample: kube-flannel
    name:
      description: Name of the ConfigMap found.
      type: str
      sample: kube-flannel-cfg
    network:
      description: The C(Network) (pod CIDR) flannel manages.
      type: str
      sample: 10.244.0.0/16
    backend_type:
      description: The backend flannel uses (C(udp) when net-conf.json has no Backend).
      type: str
      sample: vxlan
    vni:
      description: vxlan VNI (1 when not set); V(null) for other backends.
      type: int
      sample: 4096
    port:
      description: vxlan UDP port (8472 when not set); V(null) for other backends.
      type: int
      sample: 4789
    direct_routing:
      description: vxlan DirectRouting; V(null) for other backends.
      type: bool
      sample: false
    defaults_applied:
      description: Which of C(backend_type), C(vni), C(port) came from flannel's defaults.
      type: list
      elements: str
      sample: [vni, port]
    net_conf:
      description: The parsed C(net-conf.json).
      type: dict
    windows_compatible:
      description: Whether Windows flannel can join this network as configured; V(null) when not found.
      type: bool
      sample: true
    windows_problems:
      description: What to change so that Windows nodes can join, one sentence each.
      type: list
      elements: str
      sample: []
calico:
  description:
    - The calico-node DaemonSet, the first of C(kube-system/calico-node) (kubespray's) and C(calico-system/calico-node)
      (the Tigera operator's); where found, the Calico settings Windows nodes depend on (C(kube-system/calico-config)
      and C(crd.projectcalico.org/v1) ClusterInformation, FelixConfiguration, IPAMConfig, IPPools); else no more keys.
  returned: always
  type: dict
  contains:
    found:
      description: Whether it exists.
      type: bool
      sample: true
    namespace:
      description: Its namespace.
      type: str
      sample: kube-system
    name:
      description: Its name.
      type: str
      sample: calico-node
    version:
      description: The Calico version (ClusterInformation C(default) C(calicoVersion), else the calico/node image tag).
      type: str
      sample: v3.31.5
    datastore:
      description: C(kubernetes) (kubespray's kdd) or C(etcdv3), from calico-node's C(DATASTORE_TYPE).
      type: str
      sample: kubernetes
    backend:
      description: C(calico_backend) of the C(calico-config) ConfigMap (C(vxlan), C(bird), C(none)).
      type: str
      sample: vxlan
    ipam_type:
      description: The IPAM plugin of its C(cni_network_config) (C(calico-ipam) or C(host-local)).
      type: str
      sample: calico-ipam
    vxlan_vni:
      description: The VXLAN VNI Felix runs with (calico-node's C(FELIX_VXLANVNI), else FelixConfiguration, else 4096).
      type: int
      sample: 4096
    vxlan_port:
      description: The VXLAN port Felix runs with (C(FELIX_VXLANPORT), else FelixConfiguration, else 4789).
      type: int
      sample: 4789
    bpf_enabled: {description: FelixConfiguration C(bpfEnabled)., type: bool}
    wireguard_enabled: {description: FelixConfiguration C(wireguardEnabled)., type: bool}
    ippools:
      description: Every IPPool (C(name cidr ip_version ipip_mode vxlan_mode block_size disabled node_selector)).
      type: list
      elements: dict
    ipamconfig_found: {description: Whether IPAMConfig C(default) exists., type: bool}
    strict_affinity:
      description: IPAMConfig C(strictAffinity); V(false) without the object, as Calico's IPAM does.
      type: bool
    origins: {description: "Where C(version), C(datastore), C(vxlan_vni) and C(vxlan_port) came from.", type: dict}
    auto_allocate_blocks:
      description: IPAMConfig C(autoAllocateBlocks); V(true) without the object, as Calico's IPAM does.
      type: bool
nodes:
  description: Every Node, by name; C(credentials_in_place) (Windows nodes) whether
    M(kubewin.nodes.k8s_node_credentials) would change nothing for it (V(null) if the RBAC could not be listed).
  returned: always
  type: dict
  sample:
    cp-1: {ready: true, os: linux, kubelet_version: v1.31.4, windows_build: null, unschedulable: false,
           internal_ip: 192.0.2.10, architecture: amd64, pod_cidr: 10.244.0.0/24, credentials_in_place: null}
    win-1: {ready: true, os: windows, kubelet_version: v1.31.4, windows_build: 10.0.20348, unschedulable: false,
            internal_ip: 192.0.2.21, architecture: amd64, pod_cidr: 10.244.1.0/24, credentials_in_place: true}
kubeadm_config:
  description: Fields of kubeadm's ClusterConfiguration (ConfigMap C(kube-system/kubeadm-config)).
  returned: always
  type: dict
  contains:
    found:
      description: Whether the ConfigMap exists (kubeadm and kubespray create it).
      type: bool
      sample: true
    kubernetes_version:
      description: C(kubernetesVersion).
      type: str
      sample: v1.31.4
    control_plane_endpoint:
      description: C(controlPlaneEndpoint).
      type: str
      sample: 192.0.2.10:6443
    pod_subnet:
      description: C(networking.podSubnet).
      type: str
      sample: 10.244.0.0/16
    service_subnet:
      description: C(networking.serviceSubnet).
      type: str
      sample: 10.96.0.0/12
    dns_domain:
      description: C(networking.dnsDomain).
      type: str
      sample: cluster.local
    cluster_name:
      description: C(clusterName).
      type: str
      sample: kubernetes
    certificates_dir:
      description: C(certificatesDir) (kubeadm's default C(/etc/kubernetes/pki); kubespray's C(/etc/kubernetes/ssl)).
      type: str
      sample: /etc/kubernetes/ssl
kubelet_config_present:
  description: Whether kubeadm's kubelet configuration ConfigMap exists (C(kube-system/kubelet-config), or
    C(kubelet-config-1.X) up to Kubernetes 1.23); C(kubeadm join) needs it.
  returned: always
  type: bool
  sample: true
kubelet_config_name:
  description: Name of that ConfigMap, V(null) when absent.
  returned: always
  type: str
  sample: kubelet-config
kubelet_client_ca_file:
  description:
    - C(authentication.x509.clientCAFile) of the kubelet-config ConfigMap, V(null) when absent. A Windows node's
      kubelet reads the CA there, so C(kubeadm join) must write it there (the JoinConfiguration's C(caCertPath)).
  returned: always
  type: str
  sample: /etc/kubernetes/ssl/ca.crt
kubelet_security:
  description:
    - The fields of the kubelet-config ConfigMap that decide who may talk to a kubelet (C(authentication) without
      C(x509), C(authorization), C(readOnlyPort), C(rotateCertificates), C(tlsMinVersion)); empty when absent.
      Every Windows kubelet runs with them; preflight refuses values weaker than kubeadm's defaults.
  returned: always
  type: dict
  sample: {authentication: {anonymous: {enabled: false}, webhook: {enabled: true}}, authorization: {mode: Webhook}}
node_renewal_bindings:
  description:
    - The ClusterRoleBindings that let a node's kubelet renew its own client certificate without an operator (they
      bind the ClusterRole C(system:certificates.k8s.io:certificatesigningrequests:selfnodeclient) to the Group
      C(system:nodes), as kubeadm's C(kubeadm:node-autoapprove-certificate-rotation) does), one list of the
      ClusterRoleBindings; V(null) when the kubeconfig may not list them. Empty, a node's certificate runs out a year
      after its join (preflight warns).
  returned: always
  type: list
  elements: str
  sample: [kubeadm:node-autoapprove-certificate-rotation]
dns:
  description:
    - The cluster DNS as kubeadm's kubelet configuration and the cluster DNS Service give it.
    - kubespray's nodelocaldns puts C(169.254.25.10) into C(clusterDNS), an address only Linux nodes serve.
  returned: always
  type: dict
  contains:
    kubelet_cluster_dns:
      description: C(clusterDNS) of the kubelet-config ConfigMap (empty when absent).
      type: list
      elements: str
      sample: [169.254.25.10]
    kubelet_cluster_domain:
      description: C(clusterDomain) of the kubelet-config ConfigMap.
      type: str
      sample: cluster.local
    service:
      description:
        - The first of C(kube-system/kube-dns) (kubeadm) and C(kube-system/coredns) (kubespray) that exists, as
          C(namespace), C(name) and C(cluster_ip); V(null) when neither exists.
      type: dict
      sample: {namespace: kube-system, name: coredns, cluster_ip: 10.233.0.3}
"""

from ansible_collections.kubewin.nodes.plugins.module_utils import _cluster_facts as cf
from ansible_collections.kubewin.nodes.plugins.module_utils._join_info import gather
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s.client import build_apis
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s.runner import run_module


def argument_spec():
    spec = dict(
        flannel_configmaps=dict(type="list", elements="str", default=list(cf.FLANNEL_CONFIGMAPS)),
        discovery=dict(type="bool", default=False),
        pin_daemonsets=dict(type="list", elements="str"),
        pod_security=dict(type="bool", default=False),
    )
    spec.update(kc.auth_argument_spec())
    return spec


def main():
    run_module(argument_spec(), gather, build_apis=build_apis)


if __name__ == "__main__":
    main()
