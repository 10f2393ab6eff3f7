# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Network configuration of a Windows node: CNI config, flannel's net-conf.json, the flanneld and kube-proxy command
lines (under kube-log-runner) and kube-proxy's source VIP reservation, all derived from the cluster's CIDRs and the
flannel backend. node_preflight works out flanneld's command line (kubewin_node_spec.flanneld_argv), win_host_service
kube-proxy's (its kube_proxy option) and win_host_files the reservation (its source_vip_reservation option)."""

from __future__ import annotations

import ipaddress
import json

from ansible_collections.kubewin.nodes.plugins.module_utils import _flannel as flannel
from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import feature_gates as fg
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import runtime_cni
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service_logs as sl


class NetworkConfigError(Exception):
    """The variables cannot describe a working network; the message names the variable."""


def cidr_host(cidr, index):
    """'10.233.0.0/18', 3 -> '10.233.0.3' (kubespray's skydns_server rule); negative counts from the end."""
    net = ipaddress.ip_network(cidr, strict=False)
    if index < 0:
        return str(net.broadcast_address + index)
    return str(net.network_address + index)


def network_name(backend, vni):
    """The HNS network flannel creates on Windows: cbr0 for host-gw, flannel.<VNI> for vxlan."""
    if backend == "host-gw":
        return "cbr0"
    if backend == "vxlan":
        return "flannel.%d" % int(vni)
    raise NetworkConfigError("flannel_backend_type must be vxlan or host-gw, not %r" % backend)


# microsoft/SDN Kubernetes/windows/helper.v2.psm1 CreateExternalNetwork: the External network's VSID.
EXTERNAL_VSID = 9999
EXTERNAL_VSID_ALT = 9998
# Where neither the cluster nor the host says otherwise (a play without the discovery): what Windows flannel needs.
WINDOWS_FLANNEL_DEFAULTS = {"flannel_backend_type": "vxlan", "flannel_vxlan_vni": flannel.WINDOWS_VXLAN_MIN_VNI,
                            "flannel_vxlan_port": flannel.WINDOWS_VXLAN_PORT}


def _flannel_setting(name, *sources):
    for source in sources:
        value = (source or {}).get(name)
        if value not in (None, ""):
            return value
    return WINDOWS_FLANNEL_DEFAULTS[name]


def windows_flannel(settings, host_settings=None, node_ip=None):
    """The cluster's flannel network as a Windows host has it, decided once for every role (the roles read
    fields of this; none of them re-derives a backend rule).

    ``settings``: the resolved cluster settings (control_plane's ``kubewin_cluster_settings``: the cluster's
    values, else the first control-plane host's); ``host_settings``: this host's own kubespray variables
    (where the cluster has no value, or a play ran without the discovery); what neither says is vxlan 4096/4789.
    Returns backend, vni, port; ``overlay`` (vxlan: kube-proxy's source VIP); ``network_name``, the HNS
    network flanneld creates; ``external``, the network that binds the adapter to its vSwitch before flanneld
    does (microsoft/SDN's External: name, HNS type, VSID, and the fields that identify it); ``firewall_port``,
    the UDP port the other nodes send vxlan to (None for host-gw); ``net_conf``, flanneld's net-conf.json
    (None without a pod subnet in ``settings``); ``flanneld_args``, flanneld's arguments on a host whose IPv4
    address is ``node_ip`` (None without it). Raises NetworkConfigError for a backend Windows lacks.
    """
    backend = str(_flannel_setting("flannel_backend_type", settings, host_settings)).lower()
    vni = int(_flannel_setting("flannel_vxlan_vni", settings, host_settings))
    port = int(_flannel_setting("flannel_vxlan_port", settings, host_settings))
    overlay = backend == "vxlan"
    external = {"name": "External", "type": "overlay" if overlay else "l2bridge", "vsid": None,
                "compare": ["type", "adapter_name"]}
    if overlay:
        # microsoft/SDN's VSID, unless flannel's own VNI is that number (flannel allows any VNI >= 4096);
        # only then can the VSID tell the two networks apart, so only then is it compared.
        external["vsid"] = EXTERNAL_VSID_ALT if vni == EXTERNAL_VSID else EXTERNAL_VSID
        if vni == EXTERNAL_VSID:
            external["compare"].append("vsid")
    pods_subnet = (settings or {}).get("pods_subnet")
    return {"backend": backend, "vni": vni, "port": port, "overlay": overlay,
            "network_name": network_name(backend, vni), "external": external,
            "firewall_port": port if overlay else None,
            "net_conf": net_conf(pods_subnet, backend, vni, port) if pods_subnet else None,
            "flanneld_args": flanneld_args(node_ip) if node_ip else None}


def json_text(data):
    """The text of every JSON file written to a host (one format, so a value decoded and re-encoded on the way
    is written byte for byte the same)."""
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def net_conf(pods_subnet, backend, vni=flannel.WINDOWS_VXLAN_MIN_VNI, port=flannel.WINDOWS_VXLAN_PORT):
    """flannel's net-conf.json, as the cluster's kube-flannel-cfg would hold it."""
    conf = {"Network": pods_subnet, "Backend": {"Type": backend}}
    if backend == "vxlan":
        conf["Backend"].update(VNI=int(vni), Port=int(port))
    return json_text(conf)


def _node_subnet(node_subnet, backend):
    """The node's own IPv4 subnet for host-gw's OutBoundNAT exceptions (network address/prefix), or None."""
    if backend != "host-gw" or not node_subnet:
        return None
    try:
        net = ipaddress.ip_network(str(node_subnet), strict=False)
    except ValueError:
        raise NetworkConfigError("the node's subnet %r is not an IPv4 network like 192.168.1.0/24" % (node_subnet,)) \
            from None
    if net.version != 4:
        raise NetworkConfigError("the node's subnet %s is not IPv4: flannel on Windows is IPv4 only" % net)
    return str(net)


def cni_config(pods_subnet, service_subnet, backend, vni, dns_server, dns_domain, node_ip=None,
               container_runtime="containerd", node_subnet=None):
    """The flannel CNI config (type flannel-amd64, the file flannel-io/cni-plugin ships) with its delegate:
    sdnoverlay/sdnbridge (HNS v2, microsoft/windows-container-networking) with containerd,
    win-overlay/win-bridge (HNS v1, containernetworking/plugins) with Docker.

    Traffic to pods and services is not NATed; service traffic is routed (encapsulated on overlay). On host-gw
    (L2Bridge), as both upstream L2Bridge configurations do (microsoft/SDN Kubernetes/flannel/l2bridge/cni/config/
    cni.conf; sig-windows-tools kubeadm/flannel/flannel-host-gw.yml, Docker and containerd alike): a route to the
    node's own address (``node_ip``/32, NeedEncap), without which a pod cannot reach its own node (its IP,
    hostNetwork pods, NodePorts on it), and, when ``node_subnet`` (the node's IPv4 subnet) is given, no OutBoundNAT
    towards it, so the other nodes of that L2 segment see the pod's own address.
    """
    if backend not in ("vxlan", "host-gw"):
        raise NetworkConfigError("flannel_backend_type must be vxlan or host-gw, not %r" % backend)
    if backend == "vxlan" and not node_ip:
        raise NetworkConfigError("vxlan needs the node's IP address (set kubewin_network_adapter)")
    delegate_type = runtime_cni.DELEGATES.get((container_runtime, backend))
    if delegate_type is None:
        raise NetworkConfigError("kubewin_container_runtime must be containerd or docker, not %r" % container_runtime)
    dns = {"Nameservers": [dns_server], "Search": ["svc.%s" % dns_domain, dns_domain]}
    exceptions = [pods_subnet, service_subnet]
    own_subnet = _node_subnet(node_subnet, backend)
    if own_subnet and own_subnet not in exceptions:
        exceptions.append(own_subnet)
    if container_runtime == "containerd":
        # microsoft/windows-container-networking example/flannel_overlay.conf, flannel_l2bridge.conf (v0.3.1).
        def policy(kind, settings):
            return {"Name": "EndpointPolicy", "Value": {"Type": kind, "Settings": settings}}
        args = [policy("OutBoundNAT", {"Exceptions": exceptions}),
                policy("SDNRoute", {"DestinationPrefix": service_subnet, "NeedEncap": True})]
        if backend == "vxlan":
            args.append(policy("ProviderAddress", {"ProviderAddress": node_ip}))
        elif node_ip:
            args.append(policy("SDNRoute", {"DestinationPrefix": "%s/32" % node_ip, "NeedEncap": True}))
        delegate = {"type": delegate_type, "dns": dns, "AdditionalArgs": args,
                    "optionalFlags": {"loopbackDSR": False, "forceBridgeGateway": backend == "host-gw"}}
    else:
        # containernetworking/plugins win-overlay / win-bridge: HNS v1 endpoint policies.
        policies = [
            {"Name": "EndpointPolicy", "Value": {"Type": "OutBoundNAT", "ExceptionList": exceptions}},
            {"Name": "EndpointPolicy", "Value": {"Type": "ROUTE", "DestinationPrefix": service_subnet,
                                                 "NeedEncap": True}},
        ]
        if backend == "vxlan":
            policies.append({"Name": "EndpointPolicy", "Value": {"Type": "PA", "PA": node_ip}})
        elif node_ip:
            # microsoft/SDN l2bridge cni.conf (commit 343ca0f): {"Type": "ROUTE", "DestinationPrefix":
            # "<node-ip>/32", "NeedEncap": true}; sig-windows-tools flannel-host-gw.yml cni-conf.json, policies[2].
            policies.append({"Name": "EndpointPolicy", "Value": {
                "Type": "ROUTE", "DestinationPrefix": "%s/32" % node_ip, "NeedEncap": True}})
        delegate = {"type": delegate_type, "dns": dns, "policies": policies}
    conf = {"cniVersion": "0.3.0", "name": network_name(backend, vni), "type": runtime_cni.FLANNEL_TYPE,
            "capabilities": {"portMappings": True, "dns": True}, "delegate": delegate}
    return json_text(conf)


def cni_plugin_types(conf_text):
    """Every plugin a CNI config makes the runtime run: its type, the delegate's and the delegate's IPAM
    (the flannel plugin adds host-local IPAM to the delegate: flannel-io/cni-plugin flannel_windows.go)."""
    conf = json.loads(conf_text)
    types = [conf["type"]]
    delegate = conf.get("delegate") or {}
    if delegate:
        types.append(delegate.get("type") or "win-bridge")  # flannel_windows.go: win-bridge when unset
        if conf["type"] == runtime_cni.FLANNEL_TYPE:
            types.append(runtime_cni.FLANNEL_IPAM)
    return types


# host-local's store (containernetworking/plugins v1.6.2 plugins/ipam/host-local/backend/disk/backend.go):
# one file per reserved address under <dataDir>\<network name>, created with O_EXCL, holding
# "<container id>\r\n<ifname>". The flannel CNI plugin on Windows (flannel-io/cni-plugin
# flannel_windows.go) delegates with ipam {"type": "host-local", "subnet": FLANNEL_SUBNET} and no
# dataDir, so pods' addresses are reserved under the default "/var/lib/cni/networks" (C: drive) in
# the directory named after the CNI config's "name" (network_name below).
SOURCE_VIP_OWNER = "kubewin-kube-proxy-source-vip"
SOURCE_VIP_IFNAME = "source-vip"


def source_vip(pod_cidr):
    """kube-proxy's source VIP on overlay: the last usable address of the node's pod subnet.

    host-local allocates round-robin from the last reserved address (allocator.go), so after enough
    pod creations it reaches the top of the range too: the address is kept from pods by a
    reservation in host-local's own store (source_vip_reservation), not by hoping. The address is a
    function of the pod subnet alone, so it is the same on every run.
    """
    if not pod_cidr:
        raise NetworkConfigError("the node has no podCIDR yet: kube-controller-manager must run with "
                                 "--allocate-node-cidrs=true (kubeadm does when podSubnet is set)")
    net = ipaddress.ip_network(pod_cidr, strict=False)
    if net.version != 4 or net.num_addresses < 4:
        raise NetworkConfigError("the node's podCIDR %s has no room for kube-proxy's source VIP: flannel on Windows "
                                 "needs an IPv4 pod subnet of /30 or larger (kube_pods_subnet, node-cidr-mask-size)"
                                 % pod_cidr)
    return cidr_host(pod_cidr, -1)


def source_vip_reservation(pod_cidr, backend, vni):
    """The host-local reservation file that keeps pods off the source VIP: a win_host_files entry.

    host-local skips an address whose file exists (Reserve opens it with O_EXCL) and releases only
    files holding the releasing container's id, so the file written here is never handed out or
    removed by pod churn. It is the same file on every run for the same pod subnet.
    """
    vip = source_vip(pod_cidr)
    path = "%s\\%s\\%s" % (wp.HOST_LOCAL_DATA_DIR, network_name(backend, vni), vip)
    return {"path": path, "content": SOURCE_VIP_OWNER + "\r\n" + SOURCE_VIP_IFNAME}


# The kubeconfig flanneld runs with: the kubelet's own (kubeadm join's TLS bootstrap writes it, naming the client
# certificate file the kubelet rotates). client-go reloads a file-based client certificate and closes its connections
# when it changes (k8s.io/client-go v0.29.12, which flannel v0.26.7 builds with: transport/transport.go loadTLSFiles
# sets ReloadTLSFiles, transport/cache.go wraps the dialer in certRotatingDialer, cert_rotation.go checks every
# 5 minutes). As the node's identity (system:node:<node>) flanneld is subject to NodeRestriction; the RBAC it needs
# beyond the Node authorizer is in module_utils/_node_credentials.flanneld_rules.
FLANNELD_KUBECONFIG = wp.KUBELET_CONF


FLANNELD_EXE = wp.INSTALL_DIR + "\\flanneld.exe"
KUBE_PROXY_EXE = wp.INSTALL_DIR + "\\kube-proxy.exe"


def flanneld_args(node_ip, kubeconfig=FLANNELD_KUBECONFIG, conf=wp.FLANNEL_DIR + "\\net-conf.json"):
    """flanneld with the Kubernetes subnet manager, the kubelet's kubeconfig (the node's identity), net-conf.json,
    the node's interface (``node_ip``) and no IP masquerading."""
    return ["--kube-subnet-mgr", "--kubeconfig-file=%s" % kubeconfig, "--net-config-path=%s" % conf,
            "--iface=%s" % node_ip, "--ip-masq=false"]


def kube_proxy_args(node_name, pods_subnet, backend, vni, pod_cidr=None, kube_version=None,
                    kubeconfig=wp.KUBELET_CONF):
    """kube-proxy's arguments. Feature gates are rendered for ``kube_version``: the overlay proxier
    needs WinOverlay on (pkg/proxy/winkernel/proxier.go), which is the default from 1.20 and locked
    from 1.34, so the gate is passed only to versions where it is off by default."""
    version = _version(kube_version, "kube-proxy's flags")
    args = ["--windows-service", "--proxy-mode=kernelspace", "--kubeconfig=%s" % kubeconfig,
            "--hostname-override=%s" % node_name, "--cluster-cidr=%s" % pods_subnet,
            "--network-name=%s" % network_name(backend, vni), "--v=2"]
    wanted = {"WinOverlay": True} if backend == "vxlan" else {}
    try:
        gates = fg.render_feature_gates(fg.needed_gates(version, wanted, "kube-proxy"))
    except fg.FeatureGateError as e:
        raise NetworkConfigError("flannel_backend_type vxlan: %s" % e) from None
    if gates:
        args.append("--feature-gates=%s" % gates)
    if backend == "vxlan":
        args.append("--source-vip=%s" % source_vip(pod_cidr))
    return args


def _version(kube_version, program):
    version = versions.parse(kube_version)
    if version is None:
        raise NetworkConfigError("kube_version %r is not a Kubernetes version like v1.33.2 (%s depend on it)"
                                 % (kube_version, program))
    return version


def _under_log_runner(argv, log_file, kube_version, max_size_mb, max_age_hours):
    """``argv`` run by kube-log-runner writing ``log_file`` (service_logs.log_runner_argv)."""
    version = _version(kube_version, "kube-log-runner's flags")
    try:
        return sl.log_runner_argv(argv, log_file, version, max_size_mb=max_size_mb, max_age_hours=max_age_hours)
    except ValueError as e:
        raise NetworkConfigError(str(e)) from None


def flanneld_argv(node_ip, kube_version, max_size_mb=sl.LOG_FILE_MAX_SIZE_MB, max_age_hours=sl.LOG_FILE_MAX_AGE_HOURS):
    """flanneld's command line as its NSSM service runs it (the network role: NSSM's Application and AppParameters):
    kube-log-runner of ``kube_version`` writing flanneld.log, rotated at ``max_size_mb`` MiB and aged out after
    ``max_age_hours`` where that kube-log-runner can (service_logs), running flanneld.exe with flanneld_args on the
    host whose IPv4 address is ``node_ip``. Nothing in it waits for the join: node_preflight works it out."""
    return _under_log_runner([FLANNELD_EXE] + flanneld_args(node_ip), wp.LOG_FILES["flanneld"], kube_version,
                             max_size_mb, max_age_hours)


def kube_proxy_argv(node_name, pods_subnet, backend, vni, pod_cidr, kube_version, program=KUBE_PROXY_EXE,
                    log_file=wp.LOG_FILES["kube-proxy"], max_size_mb=sl.LOG_FILE_MAX_SIZE_MB,
                    max_age_hours=sl.LOG_FILE_MAX_AGE_HOURS):
    """kube-proxy's service command line: kube-log-runner writing ``log_file`` (kube-proxy has no --log-file), rotated
    as for flanneld_argv, running ``program`` with kube_proxy_args (the node's pod subnet ``pod_cidr`` gives the
    source VIP on vxlan, so this is decided after the join: win_host_service's kube_proxy option)."""
    args = kube_proxy_args(node_name, pods_subnet, backend, vni, pod_cidr, kube_version)
    return _under_log_runner([program] + args, log_file, kube_version, max_size_mb, max_age_hours)
