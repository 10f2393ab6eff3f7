"""A Windows node's network configuration: flannel's net-conf.json, the CNI config, and the flanneld and
kube-proxy command lines (plugins/module_utils/node_network.py)."""

import json

import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network as nn

PODS, SERVICES = "10.244.0.0/16", "10.96.0.0/12"


def conf(backend, runtime="containerd", node_ip="192.168.1.10", vni=4096):
    return json.loads(nn.cni_config(PODS, SERVICES, backend, vni, "10.96.0.10", "cluster.local", node_ip, runtime))


@pytest.mark.parametrize("cidr, index, expected", [
    ("10.233.0.0/18", 3, "10.233.0.3"),          # kubespray's skydns_server: the 3rd address of the service network
    ("10.233.0.5/18", 3, "10.233.0.3"),          # host bits are ignored
    ("10.244.3.0/24", -1, "10.244.3.254"),       # counted back from the broadcast address
])
def test_cidr_host_follows_kubesprays_rule(cidr, index, expected):
    assert nn.cidr_host(cidr, index) == expected


def test_the_hns_network_name_matches_what_flannel_creates():
    assert nn.network_name("vxlan", "4097") == "flannel.4097"
    assert nn.network_name("host-gw", 4096) == "cbr0"
    with pytest.raises(nn.NetworkConfigError, match="flannel_backend_type must be vxlan or host-gw, not 'udp'"):
        nn.network_name("udp", 4096)


def test_net_conf_is_what_kube_flannel_cfg_holds():
    assert json.loads(nn.net_conf(PODS, "vxlan", "4097", "4790")) == \
        {"Network": PODS, "Backend": {"Type": "vxlan", "VNI": 4097, "Port": 4790}}
    assert json.loads(nn.net_conf(PODS, "host-gw")) == {"Network": PODS, "Backend": {"Type": "host-gw"}}


def test_files_are_written_the_same_on_every_run():
    """Sorted keys and one trailing newline: a value decoded and re-encoded on the way is the same file, so a
    re-run reports no change."""
    text = nn.net_conf(PODS, "vxlan")
    assert text.endswith("}\n") and nn.json_text(json.loads(text)) == text
    assert nn.cni_config(PODS, SERVICES, "vxlan", 4096, "10.96.0.10", "cluster.local", "192.168.1.10") == \
        nn.json_text(conf("vxlan"))


def test_pod_and_service_traffic_is_not_nated_and_services_are_routed():
    for backend in ("vxlan", "host-gw"):
        c = conf(backend)
        assert c["type"] == "flannel-amd64" and c["capabilities"] == {"portMappings": True, "dns": True}
        policies = {a["Value"]["Type"]: a["Value"]["Settings"] for a in c["delegate"]["AdditionalArgs"]}
        assert policies["OutBoundNAT"] == {"Exceptions": [PODS, SERVICES]}
        assert {"DestinationPrefix": SERVICES, "NeedEncap": True} in \
            [a["Value"]["Settings"] for a in c["delegate"]["AdditionalArgs"] if a["Value"]["Type"] == "SDNRoute"]
        assert c["delegate"]["dns"] == {"Nameservers": ["10.96.0.10"], "Search": ["svc.cluster.local", "cluster.local"]}


def test_host_gw_routes_the_nodes_own_address_through_the_bridge():
    c = conf("host-gw")
    assert c["name"] == "cbr0" and c["delegate"]["type"] == "sdnbridge"
    assert c["delegate"]["optionalFlags"] == {"loopbackDSR": False, "forceBridgeGateway": True}
    assert {"DestinationPrefix": "192.168.1.10/32", "NeedEncap": True} in \
        [a["Value"]["Settings"] for a in c["delegate"]["AdditionalArgs"]]
    assert "ProviderAddress" not in json.dumps(c)


def test_docker_gets_the_hns_v1_plugins_and_policies():
    overlay = conf("vxlan", "docker")
    assert overlay["delegate"]["type"] == "win-overlay"
    assert {"Name": "EndpointPolicy", "Value": {"Type": "PA", "PA": "192.168.1.10"}} in overlay["delegate"]["policies"]
    assert conf("host-gw", "docker")["delegate"]["type"] == "win-bridge"


def test_docker_host_gw_routes_the_nodes_own_address_so_pods_reach_their_node():
    """realnode.md F3: win-bridge (Docker) on host-gw gets the node-IP /32 ROUTE policy both upstream L2Bridge configs
    have (microsoft/SDN Kubernetes/flannel/l2bridge/cni/config/cni.conf, sig-windows-tools flannel-host-gw.yml)."""
    policies = conf("host-gw", "docker")["delegate"]["policies"]
    assert {"Name": "EndpointPolicy", "Value": {"Type": "ROUTE", "DestinationPrefix": "192.168.1.10/32",
                                                "NeedEncap": True}} in policies
    assert not any(p["Value"].get("DestinationPrefix") == "192.168.1.10/32"
                   for p in conf("vxlan", "docker")["delegate"]["policies"])


@pytest.mark.parametrize("runtime", ["containerd", "docker"])
def test_host_gw_does_not_nat_pod_traffic_to_the_nodes_own_subnet(runtime):
    """realnode.md F8: upstream L2Bridge configs exempt the node subnet from OutBoundNAT (microsoft/SDN l2bridge
    cni.conf ExceptionList; sig-windows-tools flannel-host-gw.yml $networkJson.SubnetCIDR, both runtimes)."""
    text = nn.cni_config(PODS, SERVICES, "host-gw", 4096, "10.96.0.10", "cluster.local", "192.168.1.10", runtime,
                         node_subnet="192.168.1.10/24")
    delegate = json.loads(text)["delegate"]
    nat = next(p["Value"] for p in delegate.get("AdditionalArgs") or delegate.get("policies")
               if p["Value"]["Type"] == "OutBoundNAT")
    assert (nat.get("Settings") or {}).get("Exceptions", nat.get("ExceptionList")) == [PODS, SERVICES, "192.168.1.0/24"]
    # vxlan: no exception (the other nodes are reached through the overlay or NATed as upstream's overlay configs do)
    over = json.loads(nn.cni_config(PODS, SERVICES, "vxlan", 4096, "10.96.0.10", "cluster.local", "192.168.1.10",
                                    runtime, node_subnet="192.168.1.10/24"))["delegate"]
    assert "192.168.1.0/24" not in json.dumps(over)
    with pytest.raises(nn.NetworkConfigError, match="not an IPv4 network"):
        nn.cni_config(PODS, SERVICES, "host-gw", 4096, "10.96.0.10", "cluster.local", "192.168.1.10", runtime,
                      node_subnet="192.168.1.300/24")


def test_vxlan_without_the_nodes_address_says_what_to_set():
    with pytest.raises(nn.NetworkConfigError, match="set kubewin_network_adapter"):
        conf("vxlan", node_ip=None)


def test_flanneld_uses_the_kubernetes_subnet_manager_on_the_nodes_address_as_the_node():
    # the kubelet's kubeconfig: the node's identity, which NodeRestriction limits (security-2.md N1)
    args = nn.flanneld_args("192.168.1.10")
    assert args == ["--kube-subnet-mgr", "--kubeconfig-file=C:\\etc\\kubernetes\\kubelet.conf",
                    "--net-config-path=C:\\etc\\kube-flannel\\net-conf.json", "--iface=192.168.1.10",
                    "--ip-masq=false"]


def test_kube_proxy_on_host_gw_has_no_source_vip_and_needs_no_pod_subnet():
    args = nn.kube_proxy_args("win-1", PODS, "host-gw", 4096, None, "v1.33.2")
    # by default the kubelet's kubeconfig: kube-proxy runs as its node (issue 21 point 2)
    assert args == ["--windows-service", "--proxy-mode=kernelspace",
                    "--kubeconfig=C:\\etc\\kubernetes\\kubelet.conf",
                    "--hostname-override=win-1", "--cluster-cidr=%s" % PODS, "--network-name=cbr0", "--v=2"]


def test_kube_proxy_on_vxlan_before_the_node_has_a_pod_subnet_says_why():
    with pytest.raises(nn.NetworkConfigError, match="--allocate-node-cidrs=true"):
        nn.kube_proxy_args("win-1", PODS, "vxlan", 4096, None, "v1.33.2")


def test_every_plugin_type_a_config_runs():
    assert nn.cni_plugin_types(nn.json_text(conf("vxlan"))) == ["flannel-amd64", "sdnoverlay", "host-local"]
    # flannel_windows.go: a delegate without a type is win-bridge
    assert nn.cni_plugin_types(json.dumps({"type": "flannel-amd64", "delegate": {"dns": {}}})) == \
        ["flannel-amd64", "win-bridge", "host-local"]
    assert nn.cni_plugin_types(json.dumps({"type": "sdnbridge"})) == ["sdnbridge"]


def test_windows_flannel_is_the_clusters_vxlan_network_on_a_windows_host():
    settings = {"flannel_backend_type": "vxlan", "flannel_vxlan_vni": 4096, "flannel_vxlan_port": 4789,
                "pods_subnet": "10.244.0.0/16"}
    f = nn.windows_flannel(settings)
    assert (f["backend"], f["vni"], f["port"], f["overlay"]) == ("vxlan", 4096, 4789, True)
    assert f["network_name"] == "flannel.4096" and f["firewall_port"] == 4789
    assert f["external"] == {"name": "External", "type": "overlay", "vsid": 9999, "compare": ["type", "adapter_name"]}
    assert f["net_conf"] == nn.net_conf("10.244.0.0/16", "vxlan", 4096, 4789)


def test_windows_flannel_host_gw_has_no_vxlan_port_vsid_or_source_vip():
    f = nn.windows_flannel({"flannel_backend_type": "host-gw", "pods_subnet": "10.244.0.0/16"})
    assert (f["network_name"], f["overlay"], f["firewall_port"]) == ("cbr0", False, None)
    assert f["external"]["type"] == "l2bridge" and f["external"]["vsid"] is None
    assert "VNI" not in f["net_conf"]


def test_windows_flannel_vni_9999_moves_the_external_vsid_and_compares_it():
    f = nn.windows_flannel({"flannel_backend_type": "vxlan", "flannel_vxlan_vni": "9999"})
    assert f["external"]["vsid"] == 9998 and "vsid" in f["external"]["compare"]
    assert f["network_name"] == "flannel.9999" and f["net_conf"] is None  # no pod subnet: no net-conf.json


def test_windows_flannel_without_the_cluster_takes_the_hosts_settings_then_windows_defaults():
    # reset reads no cluster: the host's kubespray variables, else vxlan 4096/4789
    assert nn.windows_flannel({}, {"flannel_backend_type": "host-gw"})["network_name"] == "cbr0"
    assert nn.windows_flannel({}, {"flannel_vxlan_vni": None})["network_name"] == "flannel.4096"
    assert nn.windows_flannel({"flannel_vxlan_vni": 4097}, {"flannel_vxlan_vni": 5000})["vni"] == 4097


def test_windows_flannel_refuses_a_backend_windows_does_not_have():
    with pytest.raises(nn.NetworkConfigError, match="vxlan or host-gw"):
        nn.windows_flannel({"flannel_backend_type": "udp"})
