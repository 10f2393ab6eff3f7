# -*- coding: utf-8 -*-
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Network configuration of a Windows node: CNI config, flannel's net-conf.json, and the flanneld
and kube-proxy command lines, all derived from the cluster's CIDRs and the flannel backend."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import ipaddress
import json

from ansible_collections.kubewin.nodes.plugins.module_utils import runtime_cni

FLANNEL_DIR = "C:\\etc\\kube-flannel"
KUBE_PROXY_DIR = "C:\\etc\\kube-proxy"


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


def net_conf(pods_subnet, backend, vni=4096, port=4789):
    """flannel's net-conf.json, as the cluster's kube-flannel-cfg would hold it."""
    conf = {"Network": pods_subnet, "Backend": {"Type": backend}}
    if backend == "vxlan":
        conf["Backend"].update(VNI=int(vni), Port=int(port))
    return json.dumps(conf, indent=2, sort_keys=True) + "\n"


def cni_config(pods_subnet, service_subnet, backend, vni, dns_server, dns_domain, node_ip=None,
               container_runtime="containerd"):
    """The flannel CNI config (type flannel-amd64, the file flannel-io/cni-plugin ships) with its delegate:
    sdnoverlay/sdnbridge (HNS v2, microsoft/windows-container-networking) with containerd,
    win-overlay/win-bridge (HNS v1, containernetworking/plugins) with Docker.

    Traffic to pods and services is not NATed; service traffic is routed (encapsulated on overlay).
    """
    if backend not in ("vxlan", "host-gw"):
        raise NetworkConfigError("flannel_backend_type must be vxlan or host-gw, not %r" % backend)
    if backend == "vxlan" and not node_ip:
        raise NetworkConfigError("vxlan needs the node's IP address (set kubewin_network_adapter)")
    delegate_type = runtime_cni.DELEGATES.get((container_runtime, backend))
    if delegate_type is None:
        raise NetworkConfigError("kubewin_container_runtime must be containerd or docker, not %r" % container_runtime)
    dns = {"Nameservers": [dns_server], "Search": ["svc.%s" % dns_domain, dns_domain]}
    if container_runtime == "containerd":
        # microsoft/windows-container-networking example/flannel_overlay.conf, flannel_l2bridge.conf (v0.3.1).
        def policy(kind, settings):
            return {"Name": "EndpointPolicy", "Value": {"Type": kind, "Settings": settings}}
        args = [policy("OutBoundNAT", {"Exceptions": [pods_subnet, service_subnet]}),
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
            {"Name": "EndpointPolicy", "Value": {"Type": "OutBoundNAT",
                                                 "ExceptionList": [pods_subnet, service_subnet]}},
            {"Name": "EndpointPolicy", "Value": {"Type": "ROUTE", "DestinationPrefix": service_subnet,
                                                 "NeedEncap": True}},
        ]
        if backend == "vxlan":
            policies.append({"Name": "EndpointPolicy", "Value": {"Type": "PA", "PA": node_ip}})
        delegate = {"type": delegate_type, "dns": dns, "policies": policies}
    conf = {"cniVersion": "0.3.0", "name": network_name(backend, vni), "type": runtime_cni.FLANNEL_TYPE,
            "capabilities": {"portMappings": True, "dns": True}, "delegate": delegate}
    return json.dumps(conf, indent=2, sort_keys=True) + "\n"


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


def source_vip(pod_cidr):
    """kube-proxy's source VIP on overlay: the last usable address of the node's pod subnet.

    host-local hands out addresses from the bottom, and the kubelet's pod limit (110 by default)
    keeps it far from the top of a /24.
    """
    if not pod_cidr:
        raise NetworkConfigError("the node has no podCIDR yet: kube-controller-manager must run with "
                                 "--allocate-node-cidrs=true (kubeadm does when podSubnet is set)")
    return cidr_host(pod_cidr, -1)


def flanneld_args(node_ip, kubeconfig=FLANNEL_DIR + "\\kubeconfig", conf=FLANNEL_DIR + "\\net-conf.json"):
    return ["--kube-subnet-mgr", "--kubeconfig-file=%s" % kubeconfig, "--net-config-path=%s" % conf,
            "--iface=%s" % node_ip, "--ip-masq=false"]


def kube_proxy_args(node_name, pods_subnet, backend, vni, pod_cidr=None, kubeconfig=KUBE_PROXY_DIR + "\\kubeconfig"):
    args = ["--windows-service", "--proxy-mode=kernelspace", "--kubeconfig=%s" % kubeconfig,
            "--hostname-override=%s" % node_name, "--cluster-cidr=%s" % pods_subnet,
            "--network-name=%s" % network_name(backend, vni), "--v=2"]
    if backend == "vxlan":
        args += ["--feature-gates=WinOverlay=true", "--source-vip=%s" % source_vip(pod_cidr)]
    return args


def kubeconfig(server, ca_data_b64, user, token):
    """A token kubeconfig for a node component (kube-proxy, flanneld). Holds a secret."""
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "default",
        "clusters": [{"name": "default", "cluster": {"server": server, "certificate-authority-data": ca_data_b64}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "default", "context": {"cluster": "default", "user": user}}],
    }, indent=2) + "\n"


def token_kubeconfig(secret, server):
    """Kubeconfig from a service-account-token Secret (as the API returns it) for ``server``."""
    data = (secret or {}).get("data") or {}
    if not data.get("token") or not data.get("ca.crt"):
        name = ((secret or {}).get("metadata") or {}).get("name")
        raise NetworkConfigError("Secret %s has no token yet: the controller-manager's token controller fills it in; "
                                 "is kube-controller-manager running?" % name)
    account = (((secret.get("metadata") or {}).get("annotations") or {})
               .get("kubernetes.io/service-account.name") or "node-component")
    token = base64.b64decode(data["token"]).decode("utf-8")
    return kubeconfig(server, data["ca.crt"], account, token)
