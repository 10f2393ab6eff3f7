# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side preflight checks for a Windows node about to join a kubeadm/kubespray cluster.

Every check is a plain function of the inputs that returns findings; none of them touches a host.
A finding names the check, the variable the user sets to fix it, and a message that says what is
wrong and what to do. ``run_checks`` runs them all so one run reports every problem of a host.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
import urllib.parse
import urllib.request

from ansible_collections.kubewin.nodes.plugins.module_utils import _flannel as flannel
from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import PREFLIGHT_ARGSPEC
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _hostprocess as hostprocess
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import files as host_files
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import runtimes

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
}

DEPLOYMENT_MODES = ("services", "hostprocess")

# Windows Server builds this collection supports (LTSC releases Kubernetes supports on Windows).
SUPPORTED_BUILDS = {
    17763: "Windows Server 2019",
    20348: "Windows Server 2022",
    26100: "Windows Server 2025",
}

# HostProcess containers see their volume mounts (ConfigMaps, the ServiceAccount token) at the paths the pod
# names only from containerd 1.7; 1.6 puts them under $CONTAINER_SANDBOX_MOUNT_POINT, where client-go and
# flanneld do not look (kubernetes.io, "Create a Windows HostProcess Pod", Volume mounts).
CONTAINERD_HOSTPROCESS_MIN = (1, 7)
CONTAINERD_RECOMMENDED = (1, 7)
# The floor the README states (containerd >= 1.6). It is also what the kubelet needs from Kubernetes
# 1.26 on, which speaks only the CRI v1 API (containerd 1.5 and older have v1alpha2 only).
CONTAINERD_MIN = (1, 6)
DOCKERSHIM_REMOVED = (1, 24)
HOSTPROCESS_BETA = (1, 23)
HOSTPROCESS_GA = (1, 26)

NETBIOS_MAX = 15
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# A kubeadm bootstrap token (k8s.io/cluster-bootstrap/token/api: BootstrapTokenPattern).
_BOOTSTRAP_TOKEN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")

RESET_HINT = "playbooks/reset.yml"
FLANNEL_CLUSTER_FIX = (
    "set flannel_vxlan_vni: %d and flannel_vxlan_port: %d in the kubespray inventory and re-run kubespray's "
    "network plugin role (cluster.yml --tags network) so it rewrites the kube-flannel ConfigMap, then restart "
    "the kube-flannel pods (on a plain kubeadm cluster edit net-conf.json in the kube-flannel-cfg ConfigMap); "
    "changing them briefly interrupts pod traffic between nodes"
)


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


# ---------------------------------------------------------------------------------------------------
# node name


def suggest_node_name(name):
    """A DNS-1123 subdomain close to ``name`` (lowercase, invalid characters replaced by '-')."""
    labels = []
    for label in str(name or "").lower().split("."):
        label = re.sub(r"[^a-z0-9-]+", "-", label).strip("-")[:63].strip("-")
        if label:
            labels.append(label)
    return ".".join(labels)[:253].strip(".-")


def check_node_name(node_name, hostname=None):
    f = Findings("node_name")
    var = VARIABLES["node_name"]
    name = node_name or ""
    problems = []
    if not name:
        problems.append("it is empty")
    else:
        if len(name) > 253:
            problems.append("it is %d characters long (at most 253)" % len(name))
        if name != name.lower():
            problems.append("it has uppercase letters (the kubelet registers lowercase names)")
        for label in name.lower().split("."):
            if len(label) > 63:
                problems.append("label %r is %d characters long (at most 63)" % (label, len(label)))
            elif not _DNS_LABEL.match(label):
                problems.append("label %r must consist of a-z, 0-9 and '-' and start and end with a letter or digit"
                                % label)
    if problems:
        origin = ""
        if hostname and name.lower() == hostname.lower():
            origin = " (it defaults to the Windows computer name %r)" % hostname
        suggestion = suggest_node_name(name or hostname)
        fix = ("set %s to a valid name%s" % (var, ", for example %r" % suggestion if suggestion else ""))
        f.fail(var, "node name %r%s is not a valid Kubernetes node name (DNS-1123 subdomain): %s; %s"
               % (name, origin, "; ".join(problems), fix))
    if hostname and len(hostname) > NETBIOS_MAX:
        f.warn(var, "the Windows computer name %r is longer than %d characters (%d): Windows truncates its "
                    "NetBIOS name to %d characters (%r), and the node name must not depend on the truncated form; "
                    "rename the computer to at most %d characters or set %s explicitly"
               % (hostname, NETBIOS_MAX, len(hostname), NETBIOS_MAX, hostname[:NETBIOS_MAX], NETBIOS_MAX, var))
    return f.result()


# ---------------------------------------------------------------------------------------------------
# Windows build


def supported_builds_table(supported_builds=None):
    """The supported builds as {build: label}; ``supported_builds`` (strings) overrides the default table."""
    if supported_builds is None:
        return dict(SUPPORTED_BUILDS)
    table = {}
    for item in supported_builds:
        build = versions.windows_build(item)
        if build is None:
            raise ValueError(item)
        table[build] = SUPPORTED_BUILDS.get(build, "build %d" % build)
    return table


def check_windows_build(windows_build, supported_builds=None):
    f = Findings("windows_build")
    var = VARIABLES["windows_build"]
    try:
        table = supported_builds_table(supported_builds)
    except ValueError as e:
        f.fail(var, "%s entry %r is not a Windows build number; list builds like '20348' or '10.0.20348'"
               % (var, str(e)))
        return f.result()
    if windows_build is None:
        return f.result()
    build = versions.windows_build(windows_build)
    listed = ", ".join("%d (%s)" % (b, table[b]) for b in sorted(table))
    if build is None:
        f.fail(var, "Windows version %r is not a Windows build like 10.0.20348; check the gathered facts "
                    "(ansible_distribution_version) of this host" % windows_build)
    elif build not in table:
        known = SUPPORTED_BUILDS.get(build)
        f.fail(var, "Windows build 10.0.%d%s is not supported; supported builds: %s. Use a supported Windows "
                    "Server (client editions such as Windows 10/11 cannot be nodes), or add %d to %s if you have "
                    "verified this build"
               % (build, " (%s)" % known if known else "", listed, build, var))
    return f.result()


# ---------------------------------------------------------------------------------------------------
# container runtime and deployment mode


def _kube(kube_version):
    """(major, minor, patch) of a well-formed kube_version (either spelling), else None."""
    tag = versions.kube_release(kube_version) if kube_version else None
    return versions.parse(tag) if tag else None


def check_container_runtime(container_runtime, runtime, deployment_mode, kube_version=None):
    f = Findings("container_runtime")
    var = VARIABLES["container_runtime"]
    mode_var = VARIABLES["deployment_mode"]
    if container_runtime not in runtimes.NAMES:
        return f.result()  # check_inputs names the typo; nothing below means anything for it
    kube = _kube(kube_version)
    if container_runtime == "docker":
        if deployment_mode == "hostprocess":
            f.fail(mode_var, "%s: hostprocess needs containerd >= 1.7; Docker cannot run HostProcess containers: "
                             "set %s: containerd, or %s: services"
                   % (mode_var, var, mode_var))
        cri_dockerd = bool(runtime and runtime.get("cri_dockerd_service_exists"))
        if kube and kube[:2] >= DOCKERSHIM_REMOVED and not cri_dockerd:
            f.fail(var, "%s: docker cannot be used with kube_version %s: the kubelet's built-in Docker support "
                        "(dockershim) was removed in Kubernetes 1.24 and no cri-dockerd service exists on this "
                        "host: set %s: containerd (recommended), or install cri-dockerd as a Windows service"
                   % (var, _v(kube), var))
    if not runtime:
        return f.result()
    pipe = runtimes.pipe_path(container_runtime)
    if not runtime.get("service_exists"):
        f.fail(var, "%s is %s but the %s service does not exist on this host; install %s (and register its "
                    "service) or set %s to the runtime this host has"
               % (var, container_runtime, container_runtime, container_runtime, var))
        return f.result()
    status = runtime.get("service_status")
    if (status or "").lower() != "running":
        f.fail(var, "the %s service (%s: %s) is %s, not Running; start it (Start-Service %s) and set its start "
                    "type to Automatic"
               % (container_runtime, var, container_runtime, status or "in an unknown state", container_runtime))
    elif not runtime.get("pipe_exists"):
        f.fail(var, "the %s service is running but its named pipe %s does not exist; the kubelet connects to "
                    "it there: check the %s configuration (%s) and restart the service"
               % (container_runtime, pipe, container_runtime,
                  "grpc.address in config.toml" if container_runtime == "containerd" else "daemon.json hosts"))
    if container_runtime != "containerd":
        return f.result()
    version = versions.parse(runtime.get("version"), whole=False)
    if version is None:
        f.warn(var, "the containerd version (%r) could not be read, so it was not checked: containerd >= %s is "
                    "required (>= %s recommended)"
               % (runtime.get("version"), _v(CONTAINERD_MIN, 2), _v(CONTAINERD_RECOMMENDED, 2)))
        return f.result()
    if version[:2] < CONTAINERD_MIN:
        f.fail(var, "containerd %s is older than the supported minimum %s (%s: containerd; the kubelet speaks only "
                    "the CRI v1 API from Kubernetes 1.26, which containerd has from %s; HostProcess containers need "
                    "it too): upgrade containerd on this host to %s or later (%s recommended)"
               % (_v(version), _v(CONTAINERD_MIN, 2), var, _v(CONTAINERD_MIN, 2), _v(CONTAINERD_MIN, 2),
                  _v(CONTAINERD_RECOMMENDED, 2)))
    elif deployment_mode == "hostprocess" and version[:2] < CONTAINERD_HOSTPROCESS_MIN:
        f.fail(mode_var, "%s: hostprocess needs containerd >= %s on this host (it has %s): containerd 1.6 mounts a "
                         "HostProcess pod's volumes and ServiceAccount token under $CONTAINER_SANDBOX_MOUNT_POINT, not "
                         "at the paths the DaemonSets name; upgrade containerd, or set %s: services"
               % (mode_var, _v(CONTAINERD_HOSTPROCESS_MIN, 2), _v(version), mode_var))
    elif version[:2] < CONTAINERD_RECOMMENDED:
        f.warn(var, "containerd %s works but containerd >= %s is recommended for Windows nodes; upgrade "
                    "containerd when you can" % (_v(version), _v(CONTAINERD_RECOMMENDED, 2)))
    return f.result()


def check_deployment_mode(deployment_mode, kube_version=None):
    f = Findings("deployment_mode")
    var = VARIABLES["deployment_mode"]
    kube = _kube(kube_version)
    if deployment_mode == "hostprocess" and kube:
        if kube[:2] < HOSTPROCESS_BETA:
            f.fail(var, "%s: hostprocess needs HostProcess containers, which Kubernetes %s does not have (beta "
                        "from 1.23, stable from 1.26); set %s: services or use kube_version >= 1.26"
                   % (var, _v(kube, 2), var))
        elif kube[:2] < HOSTPROCESS_GA:
            f.warn(var, "%s: hostprocess on Kubernetes %s uses HostProcess containers while they are beta "
                        "(stable from 1.26)" % (var, _v(kube, 2)))
    return f.result()


def check_hostprocess_images(deployment_mode, images, pins):
    """hostprocess mode: images made for the DaemonSets (none is published), run as SYSTEM on every node,
    so only pinned by digest."""
    f = Findings("hostprocess_images")
    if deployment_mode == "hostprocess":
        unusable = hostprocess.unusable_images(images, pins)
        usable = {var: ref for var, ref in (images or {}).items() if not any(p.startswith(var + " ") for p in unusable)}
        for problem in unusable + hostprocess.image_problems(usable, pins):
            var = problem.split(" ", 1)[0].split("[", 1)[0]
            f.fail(var, problem)
    return f.result()


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


def check_network_plugin(kube_network_plugin, flannel_backend_type, flannel_vxlan_vni, flannel_vxlan_port,
                         cluster_flannel=None, pods_net=None, direct_routing=False):
    f = Findings("network_plugin")
    plugin_var = VARIABLES["kube_network_plugin"]
    backend_var = VARIABLES["flannel_backend_type"]
    vni_var, port_var = VARIABLES["flannel_vxlan_vni"], VARIABLES["flannel_vxlan_port"]
    min_vni, win_port = flannel.WINDOWS_VXLAN_MIN_VNI, flannel.WINDOWS_VXLAN_PORT
    if (kube_network_plugin or "").lower() != "flannel":
        f.fail(plugin_var, "%s is %r; kubewin.nodes supports flannel only on Windows nodes: the cluster must run "
                           "flannel (set %s: flannel in kubespray)" % (plugin_var, kube_network_plugin, plugin_var))
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
        f.fail(plugin_var, "%s is flannel but the cluster has no flannel ConfigMap (kube-flannel-cfg); deploy "
                           "flannel on the Linux nodes first (kubespray: %s: flannel)" % (plugin_var, plugin_var))
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
# version skew


def allowed_kubelet_minors(server_minor):
    """Minor versions a kubelet may have against an API server 1.<server_minor> (skew policy):
    never newer, at most 3 minors older, 2 if the kubelet is older than 1.25."""
    return [m for m in range(max(server_minor - 3, 0), server_minor + 1)
            if server_minor - m <= (3 if m >= 25 else 2)]


def check_version_skew(kube_version, server_version):
    f = Findings("version_skew")
    var = VARIABLES["kube_version"]
    kube = _kube(kube_version)
    if kube is None or not server_version:
        return f.result()  # a malformed kube_version is reported by check_inputs
    server = versions.leading(server_version)
    if server is None:
        f.warn(var, "the API server version %r could not be read; kube_version %s was not checked against it"
               % (server_version, _v(kube)))
        return f.result()
    if kube[0] != 1 or server[0] != 1:
        f.fail(var, "kube_version %s and API server %s: only Kubernetes 1.x is supported" % (_v(kube), server_version))
        return f.result()
    minors = allowed_kubelet_minors(server[1])
    allowed = "v1.%d to v1.%d" % (minors[0], minors[-1])
    if kube[1] > server[1]:
        f.fail(var, "kube_version %s is newer than the API server %s; a kubelet must never be newer than the API "
                    "server (version skew policy; allowed: %s): set %s to %s, or upgrade the control plane first"
               % (_v(kube), server_version, allowed, var, "v1.%d.x" % server[1]))
    elif kube[1] not in minors:
        f.fail(var, "kube_version %s is too old for the API server %s; the kubelet may be at most %d minor versions "
                    "older (version skew policy; allowed: %s): set %s within that range"
               % (_v(kube), server_version, server[1] - minors[0], allowed, var))
    elif kube[1] == server[1] and kube[2] > server[2]:
        f.warn(var, "kube_version %s is a newer patch release than the API server %s; upgrading the control plane "
                    "to it first is recommended" % (_v(kube), server_version))
    return f.result()


# ---------------------------------------------------------------------------------------------------
# existing Node object


def check_existing_node(node_name, existing_node, joined):
    f = Findings("existing_node")
    var = VARIABLES["node_name"]
    node = existing_node or {}
    if not node.get("exists"):
        if joined:
            f.warn(var, "this host has C:\\etc\\kubernetes\\kubelet.conf but the cluster has no Node %r: it was "
                        "deleted or this host belongs to another cluster; if so, reset it (%s) before joining"
                   % (node_name, RESET_HINT))
        return f.result()
    node_os = (node.get("os") or "").lower()
    if node_os and node_os != "windows":
        f.fail(var, "Node %r already exists in the cluster and is a %s node; the name belongs to another machine: "
                    "set %s to a different name" % (node_name, node_os, var))
        return f.result()
    if joined:
        return f.result()
    if node.get("ready"):
        f.fail(var, "Node %r already exists and is Ready, but this host has not joined (no kubelet.conf): the name "
                    "is taken and kubeadm join refuses a Ready Node of the same name; reset that node first (%s "
                    "for a kubewin node; otherwise kubeadm reset on it and kubectl delete node %s) or set %s to a "
                    "different name"
               % (node_name, RESET_HINT, node_name, var))
    else:
        f.warn(var, "Node %r already exists (NotReady) and this host has not joined: kubeadm join refuses only a "
                    "Ready Node of the same name, so joining takes over the existing Node object with its labels "
                    "and taints; delete it first (kubectl delete node %s) if it belongs to another machine"
               % (node_name, node_name))
    return f.result()


# ---------------------------------------------------------------------------------------------------
# network adapter


def _usable_ipv4(values):
    out = []
    for value in values or []:
        try:
            ip = ipaddress.ip_interface(str(value).strip()).ip
        except ValueError:
            continue
        if ip.version == 4 and not ip.is_loopback and not ip.is_link_local:
            out.append(ip)
    return out


def adapter_candidates(adapters):
    """{physical adapter name: [IPv4]} for adapters with a usable IPv4 address.

    Once HNS has bound an adapter X to a vSwitch, X keeps no address and the host vNIC
    'vEthernet (X)' holds it: that address counts for X. Other 'vEthernet (...)' adapters
    (HNS's nat, cbr0_ep, ...) are HNS's own and not candidates.
    """
    names = {a["name"] for a in adapters}
    lower = {n.lower(): n for n in names}
    out = {}
    for a in adapters:
        ips = _usable_ipv4(a.get("ipv4"))
        if not ips:
            continue
        m = re.match(r"^vEthernet \((.*)\)$", a["name"], re.IGNORECASE)
        if m:
            owner = lower.get(m.group(1).lower())
            if owner is None:
                continue
            out.setdefault(owner, []).extend(ips)
        else:
            out.setdefault(a["name"], []).extend(ips)
    return out


def check_network_adapter(adapters, adapter_name, kube_network_plugin="flannel"):
    """Returns ((failures, warnings), node_ips) where node_ips are the chosen adapter's IPv4 addresses."""
    f = Findings("network_adapter")
    var = VARIABLES["adapter_name"]
    if adapters is None:
        return f.result(), []
    candidates = adapter_candidates(adapters)
    if adapter_name:
        by_lower = {a["name"].lower(): a["name"] for a in adapters}
        actual = by_lower.get(adapter_name.lower())
        if actual is None:
            f.fail(var, "%s is %r but this host has no adapter of that name; adapters: %s; set %s to one of them"
                   % (var, adapter_name, ", ".join(sorted(a["name"] for a in adapters)) or "none", var))
            return f.result(), []
        ips = candidates.get(actual) or _usable_ipv4(next(a for a in adapters if a["name"] == actual).get("ipv4"))
        if not ips:
            f.fail(var, "%s is %r but that adapter has no IPv4 address; set %s to the adapter that carries the "
                        "node's IPv4 address%s"
                   % (var, adapter_name, var,
                      " (%s)" % ", ".join(sorted(candidates)) if candidates else ""))
        return f.result(), ips
    if not candidates:
        f.fail(var, "no network adapter of this host has an IPv4 address (adapters: %s); the node needs one, or "
                    "set %s to the adapter to use" % (", ".join(sorted(a["name"] for a in adapters)) or "none", var))
        return f.result(), []
    if len(candidates) > 1:
        if (kube_network_plugin or "").lower() == "flannel":
            listing = ", ".join("%s %s" % (n, "/".join(str(i) for i in candidates[n])) for n in sorted(candidates))
            f.fail(var, "this host has %d adapters with an IPv4 address (%s) and %s is not set; flannel and HNS "
                        "must know the node's interface (HNS otherwise fails with \"An adapter was not found\"): "
                        "set %s to one of them" % (len(candidates), listing, var, var))
        return f.result(), []
    return f.result(), next(iter(candidates.values()))


CNI_DIRS_FIX = {
    "containerd": "make `containerd.exe config dump` work on the node (it reads config.toml, by default "
                  "C:\\Program Files\\containerd\\config.toml, or the file the service's --config names; "
                  "`containerd.exe config default` prints a valid one), then run the playbook again",
    "docker": "register cri-dockerd as a service (its --cni-bin-dir and --cni-conf-dir default to C:\\k\\cni\\bin "
              "and C:\\k\\cni\\config), then run the playbook again",
}


def check_cni_dirs(container_runtime, cni_dirs):
    """The node role writes the CNI config and plugins where the runtime looks (both modes); that must be known."""
    f = Findings("cni_dirs")
    if cni_dirs is None:
        return f.result()
    if cni_dirs.get("error") or not cni_dirs.get("bin_dir") or not cni_dirs.get("conf_dir"):
        f.fail(VARIABLES["container_runtime"],
               "the CNI directories of %s (kubewin_container_runtime=%s) are unknown, so the pod network's "
               "configuration cannot be put where the runtime reads it: %s. Fix: %s"
               % (container_runtime, container_runtime, cni_dirs.get("error") or "no directories reported",
                  CNI_DIRS_FIX.get(container_runtime, "use containerd or docker")))
    return f.result()


def check_node_ip(node_ips, pods_net, svc_net):
    f = Findings("node_ip")
    for ip in node_ips:
        for var, net in ((VARIABLES["kube_pods_subnet"], pods_net), (VARIABLES["kube_service_addresses"], svc_net)):
            if net is not None and ip in net:
                f.fail(var, "the node address %s lies inside %s %s; node, pod and service networks must be "
                            "disjoint: give the node an address outside it (or choose another network when "
                            "creating the cluster)" % (ip, var, net))
    return f.result()


# ---------------------------------------------------------------------------------------------------
# the form of every value, before anything that depends on it


def _did_you_mean(value, choices):
    close = difflib.get_close_matches(str(value).lower(), choices, n=1, cutoff=0.6)
    return " (did you mean %s?)" % close[0] if close else ""


def redact_url(url):
    """A URL with the password of its userinfo replaced, for messages."""
    text = str(url)
    return re.sub(r"^([a-zA-Z][a-zA-Z0-9+.-]*://[^/@:]*):[^/@]*@", r"\1:<hidden>@", text)


def _token_problem(token):
    """What is wrong with a bootstrap token, in words that do not give the secret away."""
    if "." not in token:
        return "it has no '.' between the token id and the secret"
    token_id, secret = token.split(".", 1)
    problems = []
    if not re.match(r"^[a-z0-9]{6}$", token_id):
        problems.append("the id before the '.' has %d characters%s (6 needed)"
                        % (len(token_id), " including characters other than a-z and 0-9"
                           if re.search(r"[^a-z0-9]", token_id) else ""))
    if not re.match(r"^[a-z0-9]{16}$", secret):
        problems.append("the secret after the '.' has %d characters%s (16 needed)"
                        % (len(secret), " including characters other than a-z and 0-9"
                           if re.search(r"[^a-z0-9]", secret) else ""))
    return "; ".join(problems)


def proxy_problem(proxy):
    """None when ``proxy`` is an http://host[:port] proxy URL, else what is wrong with it."""
    text = str(proxy).strip()
    if "://" not in text:
        return "it has no scheme"
    parts = urllib.parse.urlsplit(text)
    if parts.scheme.lower() != "http":
        return ("its scheme is %s: the nodes' WebClient (.NET Framework) and the controller's urllib talk plain HTTP "
                "to a proxy (HTTPS downloads still pass through it encrypted, with CONNECT)" % parts.scheme)
    try:
        port = parts.port
    except ValueError:
        return "its port is not a number from 1 to 65535"
    if not parts.hostname:
        return "it names no host"
    if port == 0:
        return "its port is not a number from 1 to 65535"
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return "it has a path or query; a proxy URL is only scheme, host and port"
    if re.search(r"\s", text):
        return "it contains white space"
    return None


def url_kind(url):
    """'https', 'insecure' (http, ftp: no authentication of the server), 'file' (file://, a UNC or
    drive path, which the node copies), or 'invalid'."""
    text = str(url or "").strip()
    if re.match(r"^(\\\\[^\\]+\\|[A-Za-z]:\\)", text):
        return "file"
    parts = urllib.parse.urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme == "file":
        return "file"
    if scheme not in ("http", "https", "ftp") or not parts.netloc or re.search(r"\s", text):
        return "invalid"
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 0 < port < 65536:
        return "invalid"
    return "https" if scheme == "https" else "insecure"


def check_inputs(kube_version=None, server_version=None, container_runtime="containerd", deployment_mode="services",
                 flannel_version=None, cni_plugins_version=None, kubeadm_token=None, proxy=None, no_proxy=None):
    """The form of each value the user sets: a malformed one is named with its variable, its value and
    the form expected, before any check (or download URL) builds on it."""
    f = Findings("inputs")
    var = VARIABLES["kube_version"]
    given = str(kube_version).strip() if kube_version is not None else ""
    server = versions.server_release(server_version)
    if given and versions.kube_release(given) is None:
        f.fail(var, "%s %r is not a Kubernetes release version: write it as %s%s"
               % (var, kube_version, versions.KUBE_VERSION_FORM,
                  "; the API server runs %s" % server if server else ""))
    elif not given and not server:
        f.fail(var, "%s is not set and the API server's version (%r) is not a Kubernetes release to copy: set %s "
                    "to the version the Windows nodes get, as %s"
               % (var, server_version, var, versions.KUBE_VERSION_FORM))
    for opt, example in (("flannel_version", "v0.26.7"), ("cni_plugins_version", "v1.6.2")):
        value = {"flannel_version": flannel_version, "cni_plugins_version": cni_plugins_version}[opt]
        if value is None:
            continue
        tag = versions.release_tag(value)
        if tag is None or not str(value).strip().startswith("v"):
            f.fail(VARIABLES[opt], "%s %r is not a release tag: write the tag exactly as it appears in the release's "
                                   "download URL, v and major.minor.patch (%s)"
                   % (VARIABLES[opt], value, "here %s" % tag if tag else "e.g. %s" % example))
    for opt, choices in (("container_runtime", runtimes.NAMES), ("deployment_mode", DEPLOYMENT_MODES)):
        value = {"container_runtime": container_runtime, "deployment_mode": deployment_mode}[opt]
        if value not in choices:
            f.fail(VARIABLES[opt], "%s is %r; it must be one of: %s%s"
                   % (VARIABLES[opt], value, ", ".join(choices), _did_you_mean(value, choices)))
    if kubeadm_token is not None and str(kubeadm_token) != "" and not _BOOTSTRAP_TOKEN.match(str(kubeadm_token)):
        f.fail(VARIABLES["kubeadm_token"],
               "kubeadm_token (value not shown: it is a secret) is not a bootstrap token of the form "
               "[a-z0-9]{6}.[a-z0-9]{16}: %s; set it to a token as `kubeadm token generate` prints it, or leave it "
               "unset and a token is made for the run" % _token_problem(str(kubeadm_token)))
    if proxy:
        problem = proxy_problem(proxy)
        if problem:
            f.fail(VARIABLES["proxy"], "%s %r is not a proxy URL: %s; write it as http://host:port, e.g. "
                                       "http://proxy.corp:3128" % (VARIABLES["proxy"], redact_url(proxy), problem))
    bad = []
    for entry in no_proxy or []:
        try:
            host_files.no_proxy_pattern(entry)
        except host_files.NoProxyEntryError as e:
            bad.append(str(e))
    if bad:
        f.fail(VARIABLES["no_proxy"], "%s has entries the nodes cannot use: %s; each entry is %s"
               % (VARIABLES["no_proxy"], "; ".join(bad), host_files.NO_PROXY_FORMS))
    return f.result()


def check_downloads(downloads, download_bases=None, allow_insecure=False, checksums=None):
    """Where the node's files come from: every base URL and download is a URL the node can fetch,
    plain http only when kubewin_allow_insecure_downloads says so, and every pin is keyed by the URL
    of a download and holds a SHA-512."""
    f = Findings("downloads")
    insecure_var = VARIABLES["allow_insecure_downloads"]
    pins_var = VARIABLES["checksums"]
    insecure_fix = ("the file and its checksum then come over one unauthenticated connection, so anyone on the "
                    "path can replace both: use https://, or set %s: true to accept that (an isolated lab, a mirror "
                    "on a network you trust)" % insecure_var)
    bases = dict((k, v) for k, v in (download_bases or {}).items() if v)
    named = []
    for var in sorted(bases):
        kind = url_kind(bases[var])
        named.append((str(bases[var]), var))
        if kind == "invalid":
            f.fail(var, "%s %r is not a download location: write https://host/path, or a file share as "
                        "\\\\server\\share\\path" % (var, redact_url(bases[var])))
        elif kind == "insecure" and not allow_insecure:
            f.fail(var, "%s %s is plain %s; %s"
                   % (var, redact_url(bases[var]), urllib.parse.urlsplit(str(bases[var])).scheme, insecure_fix))
        if kind != "invalid" and redact_url(bases[var]) != str(bases[var]):
            f.fail(var, "%s %s carries a password (kubespray's files_repo may, as its offline docs show); the download "
                        "URLs are shown in the node role's --diff output and task results, so the password would be "
                        "too: give the Windows nodes a location that needs none (e.g. a read-only path of the "
                        "mirror) and set %s to it" % (var, redact_url(bases[var]), var))
    for d in downloads or []:
        for url in (d.get("url"), d.get("checksum_url")):
            if not url or any(url.startswith(base) for base, dummy in named):
                continue  # judged with its base URL above
            kind = url_kind(url)
            if kind == "invalid":
                f.fail(insecure_var, "download %r is not a URL the node can fetch" % redact_url(url))
            elif kind == "insecure" and not allow_insecure:
                f.fail(insecure_var, "download %s is plain http; %s" % (redact_url(url), insecure_fix))
    urls = [d.get("url") for d in downloads or []]
    for key in sorted(str(k) for k in (checksums or {})):
        if "://" not in key and not key.startswith("\\\\"):
            matches = [u for u in urls if u and host_files.windows_basename(u.split("?", 1)[0]) == key]
            f.fail(pins_var, "%s key %r is a file name; pins are keyed by the full download URL, so a pin holds "
                             "for one version of the file only: %s"
                   % (pins_var, key, "use %r" % matches[0] if matches else
                      "use the URL the node downloads it from (the base URL, the version and the file name)"))
        elif key not in urls:
            f.warn(pins_var, "%s has a pin for %s, which this node does not download (another version, or a "
                             "different base URL?); it is not used" % (pins_var, redact_url(key)))
    return f.result()


def probe_download(url, proxy=None, timeout=30, no_proxy=()):
    """Whether ``url`` can be fetched, asked the way the node fetches it (through the proxy unless
    ``no_proxy`` or loopback sends it around, as host_files.fetch_checksum_file): one GET of its first
    byte (Range: bytes=0-0; a server that ignores Range is cut off after one byte). Raises what urllib
    raises when it cannot."""
    handlers = []
    if proxy:
        use = not host_files.bypassed(url, no_proxy)
        handlers.append(urllib.request.ProxyHandler({"http": proxy, "https": proxy} if use else {}))
    request = urllib.request.Request(url, headers={"Range": "bytes=0-0"})
    with urllib.request.build_opener(*handlers).open(request, timeout=timeout) as response:
        response.read(1)


def _fetch_reason(error):
    """A transport error in a few words: 'HTTP 404 Not Found', 'no such file', or the error's text."""
    code = getattr(error, "code", None)
    if code is not None:
        return "HTTP %s %s" % (code, getattr(error, "reason", "") or "")
    reason = getattr(error, "reason", None)
    if isinstance(reason, FileNotFoundError) or isinstance(error, FileNotFoundError):
        return "no such file"
    return str(reason or error) or error.__class__.__name__


def unavailable_downloads(downloads, fetch, probe):
    """Every URL the node needs that cannot be had, in download order, as [(url, reason)]: each file,
    and its checksum file unless the checksum is pinned. All of them, not the first: a mirror made from
    kubespray's offline list (contrib/offline/generate_list.sh: Linux files, SHA-256 pins, no .sha512)
    lacks the Windows files and their checksum files, and the operator adds them in one go.
    ``fetch(url)`` returns a checksum file's text; ``probe(url)`` raises when the file cannot be fetched.
    Locations the controller cannot reach itself (a UNC or drive path) are left to the node."""
    out = []
    for d in downloads or []:
        url = d.get("url")
        if not url or url_kind(url) == "invalid" or re.match(r"^(\\\\|[A-Za-z]:\\)", str(url)):
            continue
        if not d.get("checksum"):
            checksum_url = d.get("checksum_url") or url + ".sha512"
            try:
                host_files.parse_checksum(fetch(checksum_url), checksum_url)
            except host_files.NodeFilesError as e:
                out.append((checksum_url, "not a SHA-512 checksum file: %s" % e))
            except Exception as e:  # any transport error: the URL and the answer
                out.append((checksum_url, _fetch_reason(e)))
        try:
            probe(url)
        except Exception as e:
            out.append((url, _fetch_reason(e)))
    return out


def unavailable_failure(unavailable, inputs):
    """ONE finding for everything unavailable: which URLs must be added to the download location (or
    pinned, for a checksum file), one per line, and which version variable a release in them comes
    from, since a release that does not exist looks exactly like a file the mirror lacks."""
    kube = versions.kube_release(versions.effective_kube_version(inputs.get("kube_version"),
                                                                 inputs.get("server_version")))
    variable, hints = VARIABLES["checksums"], []
    for var, tag in ((VARIABLES["kube_version"], kube), (VARIABLES["flannel_version"], inputs.get("flannel_version")),
                     (VARIABLES["cni_plugins_version"], inputs.get("cni_plugins_version"))):
        if tag and any("/%s/" % tag in url for url, dummy in unavailable):
            hints.append("the URLs with /%s/ hold release %s (from %s): check that %s is a published release at "
                         "that base URL" % (tag, tag, var, tag))
            if variable == VARIABLES["checksums"]:
                variable = var
    lines = "".join("\n    %s (%s)" % (redact_url(url), reason) for url, reason in unavailable)
    message = ("%d download URL(s) the Windows nodes need cannot be fetched; add them to the download location "
               "(an air-gapped mirror made from kubespray's offline file list has no Windows files and no .sha512 "
               "files), or, for a checksum file, pin the file's SHA-512 in %s instead (the base URLs are "
               "kubewin_*_download_url, or kubespray's dl_k8s_io_url, github_url and files_repo):%s"
               % (len(unavailable), VARIABLES["checksums"], lines))
    if hints:
        message += "\n  " + "; ".join(hints)
    return finding("downloads", variable, message)


def fetch_once(fetch):
    """``fetch`` that asks for each URL once per run of the plugin: the checksum files preflight checks are
    the ones the node's downloads are verified against, so they are fetched once per host."""
    texts = {}

    def cached(url):
        if url not in texts:
            texts[url] = fetch(url)
        return texts[url]

    return cached


def resolved_downloads(downloads, fetch):
    """(the downloads with their SHA-512, as win_node_files takes them; failures): the one place a
    download's checksum is decided (pinned, else its checksum file). ``fetch`` should be the one
    download_failures used (fetch_once), so no checksum file is read twice."""
    try:
        return host_files.resolve_checksums(downloads or [], fetch), []
    except host_files.NodeFilesError as e:
        return None, [finding("downloads", VARIABLES["checksums"], str(e))]


def download_failures(downloads, fetch, probe, inputs):
    """The findings about the node's downloads that need the network (the controller fetches the
    checksum files and the first byte of each file): a malformed pinned checksum, by its URL, and ONE
    finding listing every URL that cannot be had (unavailable_failure)."""
    out = []
    for d in downloads or []:
        if d.get("checksum"):
            try:
                host_files.parse_checksum(d["checksum"], "the checksum pinned for %s" % redact_url(d["url"]))
            except host_files.NodeFilesError as e:
                out.append(finding("downloads", VARIABLES["checksums"], str(e)))
    unavailable = unavailable_downloads(downloads, fetch, probe)
    if unavailable:
        out.append(unavailable_failure(unavailable, inputs))
    return out

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
                                        i["flannel_vxlan_direct_routing"]))
    results.append(check_settings_conflicts(i["settings_conflicts"]))
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


def chosen_adapter(adapters, adapter_name, node_ips):
    """The physical adapter that carries the node IP: the one named by kubewin_network_adapter (in the
    host's own spelling), else the only candidate; None when there is none."""
    if not node_ips:
        return None
    for name, ips in adapter_candidates(adapters or []).items():
        if node_ips[0] in ips and (not adapter_name or name.lower() == adapter_name.lower()):
            return name
    by_lower = {a["name"].lower(): a["name"] for a in adapters or []}
    return by_lower.get((adapter_name or "").lower())


def failure_message(host, failures):
    return "Preflight failed on %s:\n%s" % (host, "\n".join("- " + x["message"] for x in failures))
