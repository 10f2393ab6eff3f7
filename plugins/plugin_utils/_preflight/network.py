# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight: pod and service subnets, the network plugin (flannel) and conflicting settings.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import ipaddress

from ansible_collections.kubewin.nodes.plugins.module_utils import _flannel as flannel
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import firewall as host_firewall
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.calico import check_calico
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.findings import VARIABLES, Findings

FLANNEL_CLUSTER_FIX = (
    "set flannel_vxlan_vni: %d and flannel_vxlan_port: %d in the kubespray inventory and re-run kubespray's "
    "network plugin role (cluster.yml --tags network) so it rewrites the kube-flannel ConfigMap, then restart "
    "the kube-flannel pods (on a plain kubeadm cluster edit net-conf.json in the kube-flannel-cfg ConfigMap); "
    "changing them briefly interrupts pod traffic between nodes"
)


# ---------------------------------------------------------------------------------------------------
# subnets


def _ipv4_part(value):
    """The IPv4 entry of a possibly dual-stack kubeadm value ('10.244.0.0/16,fd00::/56')."""
    parts = [p.strip() for p in str(value).split(",") if p.strip()]
    for p in parts:
        if ":" not in p:
            return p
    return parts[0] if parts else str(value)


def _network(f, var, value, what):
    """Parse a CIDR the user set; record a failure and return None when it is unusable."""
    if "," in value:
        f.fail(var, "%s %r lists several networks; Windows nodes are IPv4 single-stack: set %s to the IPv4 %s "
                    "only" % (var, value, var, what))
        return None
    try:
        net = ipaddress.ip_network(value.strip(), strict=False)
    except ValueError:
        f.fail(var, "%s %r is not a network in CIDR form; set %s to the cluster's %s, for example %s"
               % (var, value, var, what, "10.233.64.0/18" if what == "pod network" else "10.233.0.0/18"))
        return None
    if net.version != 4:
        f.fail(var, "%s %s is IPv6; Windows nodes here support IPv4 only: set %s to the IPv4 %s"
               % (var, value, var, what))
        return None
    if str(net) != value.strip():
        f.fail(var, "%s %s has host bits set; set %s: %s" % (var, value, var, net))
        return None
    return net


def check_subnets(kube_pods_subnet, kube_service_addresses, cluster_pod_subnet=None, cluster_service_subnet=None):
    f = Findings("subnets")
    pods_var, svc_var = VARIABLES["kube_pods_subnet"], VARIABLES["kube_service_addresses"]
    nets = {}
    for var, value, cluster_value, what, cluster_field in (
            (pods_var, kube_pods_subnet, cluster_pod_subnet, "pod network", "networking.podSubnet"),
            (svc_var, kube_service_addresses, cluster_service_subnet, "service network", "networking.serviceSubnet")):
        if not value:
            if not cluster_value:
                f.fail(var, "%s is not set and the cluster's kubeadm ClusterConfiguration has no %s; set %s to the "
                            "cluster's %s where the first kube_control_plane host sees it (group_vars/all, or "
                            "kubespray's group_vars/k8s_cluster)" % (var, cluster_field, var, what))
                continue
            value = _ipv4_part(cluster_value)
        net = _network(f, var, value, what)
        nets[var] = net
        if net is None or not cluster_value:
            continue
        cluster_text = _ipv4_part(cluster_value)
        try:
            cluster_net = ipaddress.ip_network(cluster_text, strict=False)
        except ValueError:
            f.warn(var, "the cluster's %s %r is not a network; %s was not compared with it"
                   % (cluster_field, cluster_value, var))
            continue
        if cluster_net != net:
            f.fail(var, "%s is %s but the cluster's kubeadm ClusterConfiguration %s is %s; the %s cannot change "
                        "after kubeadm init: set %s: %s"
                   % (var, net, cluster_field, cluster_value, what, var, cluster_net))
    pods, svc = nets.get(pods_var), nets.get(svc_var)
    if pods is not None and svc is not None and pods.overlaps(svc):
        f.fail(pods_var, "%s %s overlaps %s %s; pod and service networks must be disjoint: change one of them "
                         "(on a new cluster; an existing cluster's values cannot change)"
               % (pods_var, pods, svc_var, svc))
    return f.result(), pods, svc


# ---------------------------------------------------------------------------------------------------
# network plugin (flannel)


def check_settings_conflicts(conflicts):
    """Inventory values that differ from the cluster's: one failure each (the same variable and value seen by
    several hosts, e.g. from group_vars/all, once)."""
    f = Findings("cluster_settings")
    seen = set()
    for conflict in conflicts or []:
        key = (conflict.get("variable"), repr(conflict.get("value")))
        if conflict.get("value") is not None and key in seen:
            continue
        seen.add(key)
        f.fail(conflict.get("variable"), conflict.get("message") or "%s differs from the cluster's value"
               % conflict.get("variable"))
    return f.result()


# Where flannel's ConfigMap is looked for (module_utils._cluster_facts.FLANNEL_CONFIGMAPS), for messages.
FLANNEL_CONFIGMAPS_TEXT = "kube-flannel/kube-flannel-cfg or kube-system/kube-flannel-cfg"


def _network_plugin_refusal(plugin, origin, plugin_var):
    """Why the network the cluster runs cannot take Windows nodes from this collection, and what to do today."""
    if plugin == "calico":
        found = origin and origin.startswith("DaemonSet")
        return ("%s; kubewin.nodes runs Windows nodes on flannel only and cannot put them on Calico yet, so it "
                "changed nothing. Do not switch a running cluster to flannel for this: kubespray documents no "
                "migration between network plugins. What works today is Calico's own Windows installation "
                "(Calico's documentation, \"Calico for Windows\"), outside this collection"
                % ("the cluster runs Calico (%s)" % origin if found else
                   "%s is 'calico' (%s)" % (plugin_var, origin or "inventory")))
    if not plugin:
        return ("no pod network Windows nodes can join was found: the cluster has no flannel ConfigMap (%s) and no "
                "calico-node DaemonSet, and %s is not set on the first kube_control_plane host. Deploy flannel on "
                "the Linux nodes first (kubespray: %s: flannel)" % (FLANNEL_CONFIGMAPS_TEXT, plugin_var, plugin_var))
    return ("%s is %r (%s); kubewin.nodes runs Windows nodes on flannel only, and the cluster shows no flannel "
            "ConfigMap (%s). Windows nodes need the cluster's own network plugin to support Windows"
            % (plugin_var, plugin, origin or "inventory", FLANNEL_CONFIGMAPS_TEXT))


def check_network_plugin(kube_network_plugin, flannel_backend_type, flannel_vxlan_vni, flannel_vxlan_port,
                         cluster_flannel=None, pods_net=None, direct_routing=False, plugin_origin=None,
                         cluster_calico=None, windows_build=None):
    f = Findings("network_plugin")
    plugin_var = VARIABLES["kube_network_plugin"]
    backend_var = VARIABLES["flannel_backend_type"]
    vni_var, port_var = VARIABLES["flannel_vxlan_vni"], VARIABLES["flannel_vxlan_port"]
    min_vni, win_port = flannel.WINDOWS_VXLAN_MIN_VNI, flannel.WINDOWS_VXLAN_PORT
    plugin = (kube_network_plugin or "").lower()
    if plugin == "calico" and (cluster_calico or {}).get("found"):
        # what the cluster's Calico runs, every setting Windows cannot run named together
        return check_calico(cluster_calico, windows_build)
    if plugin != "flannel":
        f.fail(plugin_var, _network_plugin_refusal(plugin, plugin_origin, plugin_var))
        return f.result()
    backend = (flannel_backend_type or "").lower()
    if backend not in flannel.WINDOWS_BACKENDS:
        f.fail(backend_var,
               "%s is %r; flannel on Windows supports vxlan and host-gw only: set %s: vxlan (or host-gw), "
               "the same as the Linux nodes" % (backend_var, flannel_backend_type, backend_var))
        return f.result()
    if backend == "vxlan":
        fix = FLANNEL_CLUSTER_FIX % (min_vni, win_port)
        if not flannel.vni_usable(flannel_vxlan_vni):
            f.fail(vni_var, "%s is %s; flannel on Windows needs a VXLAN VNI from %d to %d (kubespray's default 1 "
                            "does not work) and the Linux flannel must use the same VNI: %s"
                   % (vni_var, flannel_vxlan_vni, min_vni, flannel.VXLAN_MAX_VNI, fix))
        if flannel_vxlan_port != win_port:
            f.fail(port_var, "%s is %s; Windows VXLAN works on UDP port %d only (kubespray's default 8472 does not "
                             "work) and the Linux flannel must use the same port: %s"
                   % (port_var, flannel_vxlan_port, win_port, fix))
        if direct_routing or (cluster_flannel or {}).get("direct_routing"):
            dr_var = VARIABLES["flannel_vxlan_direct_routing"]
            f.fail(dr_var, "%s is true (DirectRouting in the cluster's flannel net-conf.json); Windows flannel's vxlan "
                           "backend has no direct routing, so Windows nodes cannot join this network: set %s: false "
                           "in the kubespray inventory (group_vars/k8s_cluster/k8s-net-flannel.yml) and re-run "
                           "kubespray's network plugin role (cluster.yml --tags network), then restart the "
                           "kube-flannel pods" % (dr_var, dr_var))
    else:
        f.warn(backend_var, "%s: host-gw routes pod traffic directly between node IPs: every Linux and Windows "
                            "node must share one L2 network segment; use vxlan if they do not" % backend_var)
    if cluster_flannel is None:
        return f.result()
    if not cluster_flannel.get("found", True):
        message = ("%s is flannel but the cluster has no flannel ConfigMap (%s); deploy flannel on the Linux nodes "
                   "first (kubespray: %s: flannel)" % (plugin_var, FLANNEL_CONFIGMAPS_TEXT, plugin_var))
        f.fail(plugin_var, message)
        return f.result()
    c_backend, c_vni, c_port = flannel.with_linux_defaults((cluster_flannel.get("backend_type") or "vxlan").lower(),
                                                           cluster_flannel.get("vni"), cluster_flannel.get("port"))
    if c_backend != backend:
        f.fail(backend_var, "%s is %s but the cluster's flannel uses backend %s; all nodes must use the same "
                            "backend: set %s: %s" % (backend_var, backend, c_backend, backend_var, c_backend))
    elif backend == "vxlan":
        cluster_ok = flannel.vni_usable(c_vni) and c_port == win_port
        if c_vni != flannel_vxlan_vni:
            if cluster_ok:
                fix = "set %s: %s to match the cluster" % (vni_var, c_vni)
            else:
                fix = FLANNEL_CLUSTER_FIX % (min_vni, win_port)
            f.fail(vni_var, "the cluster's flannel uses VXLAN VNI %s but %s is %s; Linux and Windows flannel must "
                            "use the same VNI%s: %s"
                   % (c_vni, vni_var, flannel_vxlan_vni,
                      " and Windows needs >= %d" % min_vni if c_vni < min_vni else "",
                      fix))
        if c_port != flannel_vxlan_port:
            if c_port == win_port:
                fix = "set %s: %d to match the cluster" % (port_var, c_port)
            else:
                fix = FLANNEL_CLUSTER_FIX % (min_vni, win_port)
            f.fail(port_var, "the cluster's flannel uses VXLAN port %s but %s is %s; Linux and Windows flannel must "
                             "use the same port%s: %s"
                   % (c_port, port_var, flannel_vxlan_port,
                      " and Windows needs %d" % win_port if c_port != win_port else "", fix))
    network = cluster_flannel.get("network")
    if network and pods_net is not None:
        try:
            flannel_net = ipaddress.ip_network(_ipv4_part(network), strict=False)
        except ValueError:
            f.warn(VARIABLES["kube_pods_subnet"], "the cluster's flannel Network %r is not a network; "
                                                  "kube_pods_subnet was not compared with it" % network)
        else:
            if flannel_net.version != 4 or not pods_net.subnet_of(flannel_net):
                f.fail(VARIABLES["kube_pods_subnet"],
                       "kube_pods_subnet %s is not inside the cluster's flannel Network %s (kube-flannel-cfg "
                       "net-conf.json); set kube_pods_subnet: %s, the network flannel hands out node subnets from"
                       % (pods_net, network, flannel_net))
    return f.result()


# ---------------------------------------------------------------------------------------------------
# firewall: who may reach the ports the roles open (security-2 N10)

FIREWALL_REMOTE_VAR = "kubewin_firewall_remote_addresses"
# New-NetFirewallRule -RemoteAddress (Microsoft Learn): "Any", an IPv4 address, a subnet (address/prefix length or
# address/mask), a range (address-address), or a keyword. The keywords this collection takes: LocalSubnet (the
# subnets of the host's own addresses). DNS, DHCP, WINS, DefaultGateway, Internet, Intranet, IntranetRemoteAccess,
# PlayToDevice depend on the host's network configuration and are refused (nothing here models them).
FIREWALL_KEYWORDS = {"localsubnet": "LocalSubnet"}


def firewall_remote_entries(value):
    """The entries of ``value`` (a list, or one comma-separated string), stripped."""
    items = value if isinstance(value, (list, tuple)) else str(value if value is not None else "").split(",")
    return [str(v).strip() for v in items if str(v).strip()]


def firewall_remoteip(value):
    """win_firewall_rule's remoteip for ``value``, in the form the facts read a rule back (_host/firewall.py): any, else
    each entry as an address (a single host without /32), address/prefix length (a mask as its length) or keyword in
    Windows' spelling. A rule already as wanted then compares equal and is skipped, whichever way the inventory
    wrote the same addresses (192.0.2.10/32, 10.0.0.0/255.0.0.0, localsubnet)."""
    entries = firewall_remote_entries(value)
    if not entries or any(e.lower() in ("any", "*") for e in entries):
        return "any"
    return host_firewall.remote_addresses(",".join(FIREWALL_KEYWORDS.get(e.lower(), e) for e in entries))


def firewall_entry_error(entry):
    """None when Windows Firewall takes ``entry`` as a remote address, else why not."""
    if entry.lower() in FIREWALL_KEYWORDS or entry.lower() in ("any", "*"):
        return None
    try:
        if "-" in entry:
            low, high = (ipaddress.ip_address(p.strip()) for p in entry.split("-", 1))
            if low.version != 4 or high.version != 4 or low > high:
                return "a range needs two IPv4 addresses, the lower first"
            return None
        net = ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return "neither an IPv4 address, a subnet (a.b.c.d/n), a range (a.b.c.d-e.f.g.h) nor any/LocalSubnet"
    if net.version != 4:
        return "IPv6 (Windows nodes here are IPv4 only)"
    return None


def check_firewall_remote_addresses(value, pods_net=None):
    """The inbound rules the roles make (kubelet 10250/tcp, flannel vxlan) admit ``value``'s sources; ``any`` (the
    default) is a warning naming what to set, an entry Windows Firewall would not take a failure."""
    f = Findings("firewall")
    var = FIREWALL_REMOTE_VAR
    entries = firewall_remote_entries(value)
    if not entries:
        f.fail(var, "%s is empty: set it to the addresses that may reach the kubelet (10250/tcp) and flannel's vxlan "
                    "port (the control-plane hosts and the cluster's node network), or to any" % var)
        return f.result()
    bad = [(e, firewall_entry_error(e)) for e in entries]
    bad = [(e, why) for e, why in bad if why]
    for entry, why in bad:
        f.fail(var, "%s entry %r is %s: fix or remove it" % (var, entry, why))
    if bad:
        return f.result()
    if any(e.lower() in ("any", "*") for e in entries):
        if len(entries) > 1:
            f.fail(var, "%s lists any together with other addresses (%s): any admits every source, so list either "
                        "any alone or only the addresses" % (var, ", ".join(entries)))
        else:
            f.warn(var, "%s is any: the kubelet (10250/tcp) and flannel's vxlan port accept connections from every "
                        "address. Set %s to the control-plane hosts and the cluster's node network%s (a list of "
                        "addresses, subnets a.b.c.d/n, ranges a.b.c.d-e.f.g.h, or LocalSubnet)"
                   % (var, var, " (and the pod network %s)" % pods_net if pods_net is not None else ""))
    return f.result()
