# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a Windows-node preflight needs to know about a cluster, from API objects as dicts.

Plain functions with no Kubernetes API access, used by ``kubewin.nodes.k8s_join_info`` and
unit-tested on their own: the server version, flannel's ``net-conf.json`` with the defaults
flannel applies, a per-node summary, kubeadm's ClusterConfiguration and the kubelet-config
ConfigMap name.

Sources: flannel-io/flannel pkg/subnet/config.go (Backend missing -> ``udp``; JSON keys matched
case-insensitively as Go's encoding/json does), pkg/backend/vxlan/vxlan.go (Linux: VNI 1, port 0
meaning the kernel's 8472) and vxlan_windows.go (VNI >= 4096, port 4789); kubeadm
(kube-system/kubeadm-config key ClusterConfiguration, kubelet-config / kubelet-config-1.X).
"""

from __future__ import annotations

import json

from ansible_collections.kubewin.nodes.plugins.module_utils import (
    _flannel as flannel,
)
from ansible_collections.kubewin.nodes.plugins.module_utils import (
    _node_state as node_state,
)
from ansible_collections.kubewin.nodes.plugins.module_utils import (
    _versions as versions,
)

try:
    import yaml

    HAS_YAML = True
except ImportError:  # pragma: no cover - PyYAML ships with ansible-core
    HAS_YAML = False


FLANNEL_CONFIGMAPS = ["kube-flannel/kube-flannel-cfg", "kube-system/kube-flannel-cfg"]
FLANNEL_NET_CONF_KEY = "net-conf.json"


KUBEADM_CONFIG = ("kube-system", "kubeadm-config")
KUBEADM_CLUSTER_CONFIGURATION_KEY = "ClusterConfiguration"
KUBELET_CONFIG_NAMESPACE = "kube-system"

WINDOWS_BUILD_LABEL = "node.kubernetes.io/windows-build"


class ClusterFactsError(Exception):
    """A cluster object that cannot be understood."""


def split_ref(ref, what="object"):
    """``namespace/name`` -> ``(namespace, name)``."""
    parts = str(ref or "").split("/")
    if len(parts) != 2 or not all(parts):
        raise ClusterFactsError("%s %r must be written as namespace/name" % (what, ref))
    return parts[0], parts[1]


# --- server version -----------------------------------------------------------------------------

def parse_server_version(doc):
    """``/version`` -> ``{git_version, version, major, minor, patch, platform}``.

    ``major``/``minor`` are integers (a provider's ``"28+"`` becomes 28); they fall back to
    ``gitVersion`` when the fields are empty. ``version`` is ``1.28.3`` without ``v`` or build metadata.
    """
    doc = doc or {}
    git_version = doc.get("gitVersion") or ""
    match = versions.leading(git_version, full=True)
    major = versions.leading_number(doc.get("major"))
    minor = versions.leading_number(doc.get("minor"))
    patch = None
    if match:
        if major is None:
            major = match[0]
        if minor is None:
            minor = match[1]
        patch = match[2]
    return {
        "git_version": git_version or None,
        "version": versions.format_version(match, prefix="") if match else None,
        "major": major,
        "minor": minor,
        "patch": patch,
        "platform": doc.get("platform"),
    }


# --- flannel ------------------------------------------------------------------------------------

def go_json_get(mapping, key):
    """``mapping[key]`` the way Go's encoding/json fills a struct field: exact name first, then
    a case-insensitive match. Returns ``(found, value)``."""
    if not isinstance(mapping, dict):
        return False, None
    if key in mapping:
        return True, mapping[key]
    for other, value in mapping.items():
        if isinstance(other, str) and other.lower() == key.lower():
            return True, value
    return False, None


def _json_int(value, what):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise ClusterFactsError("%s is %r, not a number (flannel would refuse to start)" % (what, value))
    return int(value)


def parse_flannel_net_conf(text):
    """flannel's ``net-conf.json`` -> the settings flannel would run with, and Windows compatibility.

    Returns ``network``, ``backend_type``, ``vni``, ``port``, ``direct_routing``, ``net_conf`` (the
    parsed document), ``defaults_applied`` (names of the settings that came from flannel defaults),
    ``windows_compatible`` and ``windows_problems`` (what to change, one sentence each).
    """
    try:
        doc = json.loads(text) if isinstance(text, (str, bytes)) else text
    except ValueError as exc:
        raise ClusterFactsError("net-conf.json is not valid JSON: %s" % exc) from None
    if not isinstance(doc, dict):
        raise ClusterFactsError("net-conf.json is not a JSON object")
    defaults = []
    dummy, network = go_json_get(doc, "Network")
    has_backend, backend = go_json_get(doc, "Backend")
    if not has_backend or backend is None:
        backend = {}
        backend_type = flannel.DEFAULT_BACKEND
        defaults.append("backend_type")
    elif not isinstance(backend, dict):
        raise ClusterFactsError("net-conf.json Backend is not a JSON object")
    else:
        dummy, backend_type = go_json_get(backend, "Type")
        backend_type = backend_type or None
    vni = port = direct_routing = None
    if backend_type == "vxlan":
        dummy, vni = go_json_get(backend, "VNI")
        dummy, port = go_json_get(backend, "Port")
        vni, port = _json_int(vni, "Backend VNI"), _json_int(port, "Backend Port")
        dummy, vni_run, port_run = flannel.with_linux_defaults(backend_type, vni, port)
        defaults.extend(name for name, given, run in (("vni", vni, vni_run), ("port", port, port_run)) if given != run)
        vni, port = vni_run, port_run
        dummy, direct_routing = go_json_get(backend, "DirectRouting")
        direct_routing = bool(direct_routing)
    problems = flannel.windows_problems(backend_type, vni, port, direct_routing)
    return {
        "network": network,
        "backend_type": backend_type,
        "vni": vni,
        "port": port,
        "direct_routing": direct_routing,
        "defaults_applied": defaults,
        "net_conf": doc,
        "windows_compatible": not problems,
        "windows_problems": problems,
    }


def flannel_facts(configmap, ref):
    """The ``flannel`` result for a found ConfigMap (``ref`` = ``namespace/name``)."""
    namespace, name = split_ref(ref)
    result = flannel_not_found()
    result.update(found=True, namespace=namespace, name=name)
    text = ((configmap or {}).get("data") or {}).get(FLANNEL_NET_CONF_KEY)
    if not text:
        raise ClusterFactsError("ConfigMap %s has no %s key" % (ref, FLANNEL_NET_CONF_KEY))
    result.update(parse_flannel_net_conf(text))
    return result


def flannel_not_found():
    """The ``flannel`` result when no flannel ConfigMap exists."""
    return {
        "found": False, "namespace": None, "name": None, "network": None, "backend_type": None,
        "vni": None, "port": None, "direct_routing": None, "defaults_applied": [], "net_conf": None,
        "windows_compatible": None, "windows_problems": [],
    }


# --- Calico -------------------------------------------------------------------------------------

# calico-node as kubespray's manifests run it (roles/network_plugin/calico/templates/calico-node.yml.j2: kube-system)
# and as the Tigera operator does (calico-system). What is read beside it: module_utils/_calico.py.
CALICO_DAEMONSETS = ["kube-system/calico-node", "calico-system/calico-node"]


# --- nodes --------------------------------------------------------------------------------------

def node_facts(node):
    """One entry of ``nodes``: node_state's summary of the Node, and what preflight also needs from it."""
    summary = node_state.node_summary(node or {})
    status = (node or {}).get("status") or {}
    internal_ip = None
    for address in status.get("addresses") or []:
        if isinstance(address, dict) and address.get("type") == "InternalIP":
            internal_ip = address.get("address")
            break
    return {
        "ready": summary["ready"],
        "os": summary["os"],
        "kubelet_version": summary["kubelet_version"],
        "windows_build": summary["labels"].get(WINDOWS_BUILD_LABEL),
        "unschedulable": summary["unschedulable"],
        "internal_ip": internal_ip,
        "architecture": (status.get("nodeInfo") or {}).get("architecture"),
        "pod_cidr": ((node or {}).get("spec") or {}).get("podCIDR"),
    }


def nodes_facts(node_list):
    """``{name: node_facts}`` for a NodeList dict (or a list of Nodes)."""
    items = node_list.get("items") if isinstance(node_list, dict) else node_list
    result = {}
    for node in items or []:
        name = ((node or {}).get("metadata") or {}).get("name")
        if name:
            result[name] = node_facts(node)
    return result


# --- kubeadm ------------------------------------------------------------------------------------

def kubeadm_config_not_found():
    return {
        "found": False, "kubernetes_version": None, "control_plane_endpoint": None, "pod_subnet": None,
        "service_subnet": None, "dns_domain": None, "cluster_name": None, "certificates_dir": None,
    }


def parse_kubeadm_config(configmap):
    """ClusterConfiguration fields from the ``kube-system/kubeadm-config`` ConfigMap dict."""
    result = kubeadm_config_not_found()
    if configmap is None:
        return result
    text = (configmap.get("data") or {}).get(KUBEADM_CLUSTER_CONFIGURATION_KEY)
    if not text:
        raise ClusterFactsError("ConfigMap kube-system/kubeadm-config has no %s key"
                                % KUBEADM_CLUSTER_CONFIGURATION_KEY)
    doc = _config_document(text, "the ClusterConfiguration in kube-system/kubeadm-config")
    networking = doc.get("networking") or {}
    result.update(
        found=True,
        kubernetes_version=doc.get("kubernetesVersion"),
        control_plane_endpoint=doc.get("controlPlaneEndpoint") or None,
        pod_subnet=networking.get("podSubnet") or None,
        service_subnet=networking.get("serviceSubnet") or None,
        dns_domain=networking.get("dnsDomain") or None,
        cluster_name=doc.get("clusterName") or None,
        certificates_dir=doc.get("certificatesDir") or None,
    )
    return result


def _config_document(text, what):
    """The mapping a ConfigMap key holds (YAML, or JSON without PyYAML); ``what`` names it in the error."""
    try:
        doc = yaml.safe_load(text) if HAS_YAML else json.loads(text)
    except Exception as exc:  # yaml.YAMLError or ValueError
        raise ClusterFactsError("%s cannot be parsed: %s" % (what, exc)) from None
    if not isinstance(doc, dict):
        raise ClusterFactsError("%s is not a mapping" % what)
    return doc


def kubelet_config_names(major=None, minor=None):
    """Names of the kubelet-config ConfigMap to look for, newest convention first.

    kubeadm names it ``kubelet-config``; up to 1.23 it was ``kubelet-config-1.X``.
    """
    names = ["kubelet-config"]
    if major == 1 and minor is not None and minor <= 23:
        names.append("kubelet-config-%d.%d" % (major, minor))
    return names


# --- cluster DNS --------------------------------------------------------------------------------

KUBELET_CONFIG_KEY = "kubelet"
# kubeadm's DNS Service, and kubespray's (roles/kubernetes-apps/ansible/defaults/main.yml: coredns_svc_name).
DNS_SERVICES = ("kube-system/kube-dns", "kube-system/coredns")


def parse_kubelet_config(configmap):
    """``clusterDNS`` and ``clusterDomain`` of kubeadm's KubeletConfiguration (key ``kubelet``)."""
    result = {"kubelet_cluster_dns": [], "kubelet_cluster_domain": None}
    text = ((configmap or {}).get("data") or {}).get(KUBELET_CONFIG_KEY)
    if not text:
        return result
    doc = _config_document(text, "the KubeletConfiguration in the kubelet-config ConfigMap")
    dns = doc.get("clusterDNS") or []
    if isinstance(dns, str):
        dns = [dns]
    result["kubelet_cluster_dns"] = [str(x) for x in dns if x]
    result["kubelet_cluster_domain"] = doc.get("clusterDomain") or None
    return result


def kubelet_client_ca_file(configmap):
    """``authentication.x509.clientCAFile`` of kubeadm's KubeletConfiguration (key ``kubelet``), None when unset.
    kubeadm sets it to ``<certificatesDir>/ca.crt`` before uploading (cmd/kubeadm/app/componentconfigs/kubelet.go),
    so a kubespray cluster says /etc/kubernetes/ssl/ca.crt; the kubelet exits when the file is missing
    (cmd/kubelet/app/auth.go BuildAuthn)."""
    text = ((configmap or {}).get("data") or {}).get(KUBELET_CONFIG_KEY)
    if not text:
        return None
    doc = _config_document(text, "the KubeletConfiguration in the kubelet-config ConfigMap")
    x509 = ((doc.get("authentication") or {}).get("x509") or {})
    return x509.get("clientCAFile") or None


# The fields of the KubeletConfiguration that decide who may talk to a kubelet and how (security-2.md N9); kubeadm's
# defaults (cmd/kubeadm/app/componentconfigs/kubelet.go) keep anonymous auth off, webhook authn/authz on, no read-only
# port and certificate rotation on. Preflight refuses a cluster that weakened them.
KUBELET_SECURITY_FIELDS = ("authentication", "authorization", "readOnlyPort", "rotateCertificates", "tlsMinVersion")


def kubelet_security(configmap):
    """The security fields of kubeadm's KubeletConfiguration (key ``kubelet``), without ``x509`` (a path, not a
    setting); an empty dict when the ConfigMap is absent."""
    text = ((configmap or {}).get("data") or {}).get(KUBELET_CONFIG_KEY)
    if not text:
        return {}
    doc = _config_document(text, "the KubeletConfiguration in the kubelet-config ConfigMap")
    result = {k: doc[k] for k in KUBELET_SECURITY_FIELDS if k in doc}
    authn = result.get("authentication")
    if isinstance(authn, dict):
        result["authentication"] = {k: v for k, v in authn.items() if k in ("anonymous", "webhook")}
    return result


def dns_service_facts(service, ref):
    """``{namespace, name, cluster_ip}`` of the cluster DNS Service (``ref`` = ``namespace/name``)."""
    namespace, name = split_ref(ref)
    spec = (service or {}).get("spec") or {}
    cluster_ip = spec.get("clusterIP")
    if cluster_ip in ("None", ""):
        cluster_ip = None
    return {"namespace": namespace, "name": name, "cluster_ip": cluster_ip}


# kubeadm's auto-approval of a node's own client-certificate renewal: `kubeadm init` (phase bootstrap-token) makes the
# ClusterRoleBinding kubeadm:node-autoapprove-certificate-rotation, ClusterRole
# system:certificates.k8s.io:certificatesigningrequests:selfnodeclient for the Group system:nodes
# (kubernetes/kubernetes cmd/kubeadm/app/phases/bootstraptoken/node/tlsbootstrap.go AutoApproveNodeCertificateRotation;
# the names: cmd/kubeadm/app/constants/constants.go NodeAutoApproveCertificateRotationClusterRoleBinding,
# NodeSelfCSRAutoApprovalClusterRoleName, NodesGroup). kube-controller-manager's csrapproving controller approves a
# kubelet's renewal CSR only when its requester may create certificatesigningrequests/selfnodeclient
# (pkg/controller/certificates/approver/sarapprove.go), which that ClusterRole grants.
NODE_RENEWAL_BINDING = "kubeadm:node-autoapprove-certificate-rotation"
NODE_RENEWAL_ROLE = "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"
NODES_GROUP = "system:nodes"


def node_renewal_bindings(binding_list):
    """The ClusterRoleBindings (a list as the API returns it) -> the names of those that bind NODE_RENEWAL_ROLE to the
    Group system:nodes, sorted: kubeadm's, or one of another name that does the same."""
    out = []
    for b in (binding_list or {}).get("items") or []:
        ref = b.get("roleRef") or {}
        if ref.get("kind") != "ClusterRole" or ref.get("name") != NODE_RENEWAL_ROLE:
            continue
        if any(s.get("kind") == "Group" and s.get("name") == NODES_GROUP for s in b.get("subjects") or []):
            out.append((b.get("metadata") or {}).get("name"))
    return sorted(n for n in out if n)
