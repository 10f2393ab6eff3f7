# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one producer of the cluster settings the Windows nodes use, each with where it came from.

An operator adds the Windows hosts to an unchanged kubespray (or kubeadm) inventory and sets nothing
else: what the cluster knows comes from the cluster (``kubewin.nodes.k8s_join_info``), what kubespray
keeps only in its inventory comes from the first control-plane host's variables (kubespray's
``group_vars/k8s_cluster`` applies to that host, never to the Windows group). Inventory values that
the cluster also knows are compared with it, and every difference is a conflict that names both
values and their origin; preflight stops on it.

Sources:
- kubeadm ClusterConfiguration (kube-system/kubeadm-config): networking.podSubnet/serviceSubnet/dnsDomain,
  controlPlaneEndpoint; kubeadm's default dnsDomain is ``cluster.local`` (cmd/kubeadm/app/apis/kubeadm/v1beta4
  DefaultServiceDNSDomain).
- kubelet-config clusterDNS: kubespray writes ``nodelocaldns_ip`` (169.254.25.10) there when
  ``enable_nodelocaldns`` (kubespray roles/kubernetes/control-plane/templates/kubeadm-config.v1beta4.yaml.j2,
  ``clusterDNS: kubelet_cluster_dns``); nodelocaldns runs only on Linux nodes, so Windows gets the
  cluster DNS Service's clusterIP: ``kube-system/kube-dns`` (kubeadm) or ``kube-system/coredns``
  (kubespray roles/kubernetes-apps/ansible/defaults/main.yml ``coredns_svc_name: coredns``).
- controlPlaneEndpoint: kubespray writes ``<loadbalancer_apiserver.address>:<port>`` with an external
  load balancer and ``<first control plane main_ip>:<kube_apiserver_port>`` otherwise
  (kubeadm-config.v1beta4.yaml.j2); an endpoint on localhost/127.0.0.1 is reachable only through the
  local nginx/haproxy kubespray runs on Linux nodes, and kubespray itself then discovers through the
  first control-plane address (roles/kubernetes/kubeadm/tasks/main.yml ``kubeadm_discovery_address``).
- The cluster CA's path on a Windows node: kubelet-config's ``authentication.x509.clientCAFile``, which kubeadm
  sets to ``<certificatesDir>/ca.crt`` (kubespray: ``certificatesDir: {{ kube_cert_dir }}``, /etc/kubernetes/ssl),
  with the drive kubeadm join gives it on Windows; kubeadm join writes the CA only to the JoinConfiguration's
  ``caCertPath`` (cmd/kubeadm/app/cmd/phases/join/kubelet.go), so the two must be the same path.
"""

from __future__ import annotations

import ipaddress

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp

KUBEADM_DEFAULT_DNS_DOMAIN = "cluster.local"
DEFAULT_APISERVER_PORT = 6443
DNS_SERVICES = ("kube-system/kube-dns", "kube-system/coredns")
LOCAL_HOSTS = ("localhost", "localhost.localdomain", "ip6-localhost")

ORIGIN_KUBEADM = "kubeadm-config ConfigMap"
ORIGIN_KUBELET = "kubelet-config ConfigMap"
ORIGIN_DEFAULT = "kubeadm's default"

# The kubespray variables compared with the cluster: variable -> (setting, field named in messages).
COMPARED = (
    ("kube_pods_subnet", "pods_subnet"),
    ("kube_service_addresses", "service_subnet"),
    ("dns_domain", "dns_domain"),
    ("flannel_backend_type", "flannel_backend_type"),
    ("flannel_vxlan_vni", "flannel_vxlan_vni"),
    ("flannel_vxlan_port", "flannel_vxlan_port"),
    ("flannel_vxlan_direct_routing", "flannel_vxlan_direct_routing"),
)

# What kubespray's variables read here are: read only these, never a kubespray template over its
# role-internal variables (skydns_server over kube_service_subnets would crash on any other host).
INVENTORY_VARIABLES = [name for name, dummy in COMPARED] + [
    "kube_network_plugin", "loadbalancer_apiserver", "kube_apiserver_port",
]


class SettingsError(Exception):
    """Inputs that cannot be used."""


def inventory_origin(host):
    return "inventory, hostvars of %s" % host


def _ipv4_part(value):
    """kubeadm dual-stack lists ('10.233.64.0/18,fd85::/56') -> the IPv4 one; else the value."""
    parts = [p.strip() for p in str(value or "").split(",") if p.strip()]
    for part in parts:
        if ":" not in part:
            return part
    return parts[0] if parts else None


def _network(value):
    try:
        return ipaddress.ip_network(_ipv4_part(value), strict=False)
    except (TypeError, ValueError):
        return None


def _same(setting, left, right):
    """Whether an inventory value and a cluster value mean the same."""
    if setting in ("pods_subnet", "service_subnet"):
        a, b = _network(left), _network(right)
        return a is not None and a == b
    if setting == "dns_domain":
        return str(left).strip().rstrip(".").lower() == str(right).strip().rstrip(".").lower()
    if setting == "flannel_backend_type":
        return str(left).strip().lower() == str(right).strip().lower()
    if setting == "flannel_vxlan_direct_routing":
        return _bool(left) == _bool(right)
    try:
        return int(left) == int(right)
    except (TypeError, ValueError):
        return False


def _bool(value):
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _given(values, name):
    value = (values or {}).get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return value


def split_endpoint(endpoint):
    """'host:port', '[::1]:6443', 'host' -> (host, port or None)."""
    text = str(endpoint or "").strip()
    if text.startswith("https://"):
        text = text[len("https://"):]
    text = text.rstrip("/")
    if text.startswith("["):
        host, dummy, rest = text[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else None
    if text.count(":") == 1:
        host, port = text.split(":")
        return host, int(port) if port.isdigit() else None
    return text, None


def join_endpoint(host, port):
    host = str(host)
    return "[%s]:%d" % (host, port) if ":" in host else "%s:%d" % (host, port)


def is_local_host(host):
    host = str(host or "").strip().lower()
    if host in LOCAL_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


HA_ADVICE = ("For API server HA give the cluster a load balancer (kubespray: loadbalancer_apiserver, then kubespray's "
             "cluster.yml so that kubeadm-config's controlPlaneEndpoint names it) and run this playbook again.")


def _node_named(host, nodes):
    """The Node whose InternalIP is ``host``: kubespray writes controlPlaneEndpoint from main_ip, which falls back
    to a gathered fact, so the cluster's own Node addresses tell it apart, not the inventory's ip/access_ip."""
    for name, node in sorted((nodes or {}).items()):
        if host and (node or {}).get("internal_ip") == host:
            return name
    return None


def _api_server(cluster_endpoint, cp_values, cp_host, cp_address, control_planes, notes, nodes=None):
    """The API server endpoint for the Windows nodes, and its origin."""
    if not cluster_endpoint:
        notes.append("kubeadm-config has no controlPlaneEndpoint: the Windows nodes use the API server endpoint "
                     "kube-public/cluster-info publishes.")
        return None, None
    host, port = split_endpoint(cluster_endpoint)
    if not is_local_host(host):
        node = _node_named(host, nodes) or (cp_host if cp_address and host == cp_address else None)
        if control_planes > 1 and node:
            notes.append("controlPlaneEndpoint %s (kubeadm-config) is the address of one control-plane host (%s): "
                         "the Windows nodes reach the API server only through it. %s" % (cluster_endpoint, node,
                                                                                         HA_ADVICE))
        return cluster_endpoint, ORIGIN_KUBEADM
    apiserver_port = _given(cp_values, "kube_apiserver_port") or DEFAULT_APISERVER_PORT
    lb = _given(cp_values, "loadbalancer_apiserver")
    lb_address = lb.get("address") if isinstance(lb, dict) else None
    if lb_address and not is_local_host(lb_address):
        chosen = join_endpoint(lb_address, int(lb.get("port") or apiserver_port))
        origin = "loadbalancer_apiserver (%s)" % inventory_origin(cp_host)
    elif cp_address:
        chosen = join_endpoint(cp_address, int(apiserver_port))
        origin = "first control-plane host %s, port kube_apiserver_port" % cp_host
    else:
        raise SettingsError(
            "controlPlaneEndpoint %s (kubeadm-config) is on the loopback address, which only Linux nodes running "
            "kubespray's local nginx/haproxy can reach, and no other address is known: set loadbalancer_apiserver "
            "or ansible_host for %s" % (cluster_endpoint, cp_host))
    notes.append("controlPlaneEndpoint %s (kubeadm-config) is the local load balancer kubespray runs on Linux nodes, "
                 "which Windows nodes do not have: they use %s (%s) instead, as kubespray's own join does.%s"
                 % (cluster_endpoint, chosen, origin,
                    " So they depend on that one control-plane host. " + HA_ADVICE
                    if control_planes > 1 and not origin.startswith("loadbalancer_apiserver") else ""))
    return chosen, origin


def _dns_server(cluster, service_subnet, notes):
    """The cluster DNS address Windows pods and kubelets use, its origin, and whether it overrides kubelet-config."""
    dns = cluster.get("dns") or {}
    kubelet_dns = [str(x) for x in dns.get("kubelet_cluster_dns") or [] if x]
    service = dns.get("service") or {}
    service_ip = service.get("cluster_ip")
    service_ref = "%s/%s" % (service.get("namespace"), service.get("name")) if service.get("name") else None
    svc_net = _network(service_subnet)
    usable = None
    for address in kubelet_dns:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            continue
        if ip.version == 4 and (svc_net is None or ip in svc_net) and not ip.is_link_local:
            usable = address
            break
    if usable and (not service_ip or usable == service_ip):
        return usable, ORIGIN_KUBELET, False
    if service_ip:
        origin = "clusterIP of Service %s" % service_ref
        if kubelet_dns:
            notes.append(
                "kubelet-config clusterDNS is %s, %s; Windows kubelets get the cluster DNS Service %s at %s "
                "instead (kubelet flag --cluster-dns, shown in the kubelet service's --diff)."
                % (", ".join(kubelet_dns),
                   "kubespray's nodelocaldns, which runs on Linux nodes only" if not usable
                   else "not the cluster DNS Service", service_ref, service_ip))
        return service_ip, origin, bool(kubelet_dns)
    if usable:
        return usable, ORIGIN_KUBELET, False
    return None, None, False


# kubespray's values of kube_network_plugin that say nothing about which network runs: its "cni" and "custom_cni"
# install any manifest (kubespray roles/network_plugin/custom_cni), e.g. upstream flannel.
UNNAMED_NETWORK_PLUGINS = ("cni", "custom_cni")


def _network_plugin(cluster, flannel_origin, inventory_plugin, cp_origin, values, origins, notes):
    """The pod network the cluster runs, from the cluster first (flannel's ConfigMap, else the calico-node
    DaemonSet), whatever the inventory says; the inventory's kube_network_plugin only when the cluster shows
    neither. kubespray's sample says calico, and flannel installed through custom_cni says custom_cni."""
    calico = cluster.get("calico") or {}
    if (cluster.get("flannel") or {}).get("found"):
        detected, origin = "flannel", flannel_origin
    elif calico.get("found"):
        detected = "calico"
        origin = "DaemonSet %s/%s%s" % (calico.get("namespace"), calico.get("name"),
                                        " (Calico %s)" % calico["version"] if calico.get("version") else "")
    else:
        detected = origin = None
    if detected is None:
        values["kube_network_plugin"] = inventory_plugin
        origins["kube_network_plugin"] = cp_origin if inventory_plugin else None
        return
    values["kube_network_plugin"], origins["kube_network_plugin"] = detected, origin
    if inventory_plugin and str(inventory_plugin).lower() not in (detected,) + UNNAMED_NETWORK_PLUGINS:
        notes.append("kube_network_plugin is %s on %s, but the cluster runs %s (%s): the Windows nodes follow the "
                     "cluster" % (inventory_plugin, cp_origin, detected, origin))


# kubeadm upgrade apply refuses a new version more than 3 minors ahead of any kubelet (kubernetes
# cmd/kubeadm/app/phases/upgrade/policy.go, MaximumAllowedMinorVersionKubeletSkew); kubespray's upgrade-cluster.yml
# runs it without --force.
KUBELET_SKEW_FOR_UPGRADE = 3


def _lagging_windows_nodes(cluster, notes):
    """A note for each Windows node whose kubelet is KUBELET_SKEW_FOR_UPGRADE minors behind the API server: the
    control plane's next minor upgrade is refused until it is upgraded too."""
    server = versions.leading((cluster.get("server_version") or {}).get("git_version"))
    if not server:
        return
    for name, node in sorted((cluster.get("nodes") or {}).items()):
        kubelet = versions.leading((node or {}).get("kubelet_version"))
        if (node or {}).get("os") == "windows" and kubelet and kubelet[0] == server[0] \
                and server[1] - kubelet[1] >= KUBELET_SKEW_FOR_UPGRADE:
            behind = server[1] - kubelet[1]
            notes.append("Windows node %s runs kubelet %s, %d minors behind the API server v%d.%d: kubeadm upgrade "
                         "apply (kubespray's upgrade-cluster.yml) refuses the control plane's next minor until this "
                         "node is upgraded (playbooks/upgrade.yml)"
                         % (name, node["kubelet_version"], behind, server[0], server[1]))


def resolve(cluster, cp_host, cp_values=None, cp_address=None, control_planes=1):
    """The settings for the Windows nodes from ``k8s_join_info``'s result and the first control-plane host's
    kubespray variables (``cp_values``: variable -> value, None when not set).

    Returns each setting by name (``pods_subnet``, ``service_subnet``, ``dns_domain``, ``dns_server``,
    ``api_server_endpoint``, ``kube_network_plugin``, ``ca_cert_path`` (where kubeadm join must write the cluster
    CA on a Windows node) with ``ca_cert_dirs`` (its directories, deepest first) and the ``flannel_*`` ones; None
    when unknown) plus
    ``origins`` (setting -> where its value came from), ``conflicts`` (``{host, variable, message}``),
    ``notes`` (explanations of choices an operator may not expect) and ``kubelet_dns_override`` (the Windows
    kubelet must be given ``--cluster-dns`` because kubelet-config's clusterDNS is not usable on Windows) and
    ``summary`` (what the nodes use and where each value came from, one line each, for the run's output).
    """
    cluster = cluster or {}
    cp_values = cp_values or {}
    kubeadm = cluster.get("kubeadm_config") or {}
    flannel = cluster.get("flannel") or {}
    dns = cluster.get("dns") or {}
    cp_origin = inventory_origin(cp_host)
    values, origins, notes = {}, {}, []

    def take(setting, candidates):
        for value, origin in candidates:
            if value is not None and value != "":
                values[setting], origins[setting] = value, origin
                return
        values[setting], origins[setting] = None, None

    take("pods_subnet", [(kubeadm.get("pod_subnet"), ORIGIN_KUBEADM),
                         (flannel.get("network"), "flannel ConfigMap %s/%s net-conf.json Network"
                          % (flannel.get("namespace"), flannel.get("name"))),
                         (_given(cp_values, "kube_pods_subnet"), cp_origin)])
    take("service_subnet", [(kubeadm.get("service_subnet"), ORIGIN_KUBEADM),
                            (_given(cp_values, "kube_service_addresses"), cp_origin)])
    take("dns_domain", [(kubeadm.get("dns_domain"), ORIGIN_KUBEADM),
                        (dns.get("kubelet_cluster_domain"), ORIGIN_KUBELET),
                        (_given(cp_values, "dns_domain"), cp_origin),
                        (KUBEADM_DEFAULT_DNS_DOMAIN, ORIGIN_DEFAULT)])
    flannel_origin = "flannel ConfigMap %s/%s" % (flannel.get("namespace"), flannel.get("name"))
    found = bool(flannel.get("found"))
    for setting, key in (("flannel_backend_type", "backend_type"), ("flannel_vxlan_vni", "vni"),
                         ("flannel_vxlan_port", "port"), ("flannel_vxlan_direct_routing", "direct_routing")):
        take(setting, [(flannel.get(key) if found else None, flannel_origin), (_given(cp_values, setting), cp_origin)])
    _network_plugin(cluster, flannel_origin, _given(cp_values, "kube_network_plugin"), cp_origin, values, origins,
                    notes)

    dns_server, dns_origin, override = _dns_server(cluster, values["service_subnet"], notes)
    values["dns_server"], origins["dns_server"] = dns_server, dns_origin
    endpoint, endpoint_origin = _api_server(kubeadm.get("control_plane_endpoint"), cp_values, cp_host, cp_address,
                                            control_planes, notes, cluster.get("nodes"))
    values["api_server_endpoint"], origins["api_server_endpoint"] = endpoint, endpoint_origin
    certificates_dir = kubeadm.get("certificates_dir")
    take("ca_cert_path", [(wp.kubeadm_windows_path(cluster.get("kubelet_client_ca_file")),
                           ORIGIN_KUBELET + " clientCAFile"),
                          (wp.kubeadm_windows_path(certificates_dir and certificates_dir + "/ca.crt"),
                           ORIGIN_KUBEADM + " certificatesDir"),
                          (wp.CA_CERT, ORIGIN_DEFAULT)])
    # the directories kubeadm join makes for it (MkdirAll), deepest first: reset removes those left empty
    parts = values["ca_cert_path"].split("\\")
    values["ca_cert_dirs"] = ["\\".join(parts[:i]) for i in range(len(parts) - 1, 1, -1)]
    _lagging_windows_nodes(cluster, notes)
    settings = dict(values, origins=origins, notes=notes, kubelet_dns_override=override)
    settings["conflicts"] = conflicts(settings, cp_host, cp_values)
    settings["summary"] = summary(settings)
    return settings


def conflicts(settings, host, inventory_values):
    """Inventory values of ``host`` that differ from the settings taken from the cluster (or, where the cluster
    has none, from the first control-plane host): one ``{host, variable, message}`` each."""
    values, origins = settings or {}, (settings or {}).get("origins") or {}
    origin = inventory_origin(host)
    found = []
    for variable, setting in COMPARED:
        given = _given(inventory_values, variable)
        have = values.get(setting)
        if given is None or have is None or origins.get(setting) in (origin, ORIGIN_DEFAULT, None):
            continue
        if _same(setting, given, have):
            continue
        found.append({
            "host": host, "variable": variable, "value": given,
            "message": "%s %s (%s) differs from %s (%s); the Windows nodes use the cluster's value: set %s: %s "
                       "or remove it from the inventory" % (
                           variable, given, origin, _field(setting, have), origins.get(setting), variable, have),
        })
    return found


_FIELDS = {
    "pods_subnet": "podSubnet",
    "service_subnet": "serviceSubnet",
    "dns_domain": "dnsDomain",
    "flannel_backend_type": "Backend Type",
    "flannel_vxlan_vni": "Backend VNI",
    "flannel_vxlan_port": "Backend Port",
    "flannel_vxlan_direct_routing": "Backend DirectRouting",
}


def _field(setting, value):
    return "%s %s" % (_FIELDS.get(setting, setting), value)


def summary(settings):
    """Lines saying what the Windows nodes use and where each value came from, then the notes."""
    settings = settings or {}
    origins = settings.get("origins") or {}
    lines = []
    for setting, label in (("api_server_endpoint", "API server"), ("pods_subnet", "pod network"),
                           ("service_subnet", "service network"), ("dns_server", "cluster DNS"),
                           ("dns_domain", "DNS domain"), ("flannel_backend_type", "flannel backend"),
                           ("flannel_vxlan_vni", "VXLAN VNI"), ("flannel_vxlan_port", "VXLAN port"),
                           ("ca_cert_path", "cluster CA on the node")):
        if settings.get(setting) is not None:
            lines.append("%s %s (%s)" % (label, settings[setting], origins.get(setting)))
    return lines + list(settings.get("notes") or [])
