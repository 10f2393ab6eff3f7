"""Where each setting of the Windows nodes comes from, and which inventory values conflict with the cluster."""

import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _cluster_settings as cs


def kubespray_cluster(**changes):
    """k8s_join_info's result for a kubespray cluster with its defaults (nodelocaldns, no external load balancer)."""
    cluster = {
        "server_version": {"git_version": "v1.36.4"},
        "kubeadm_config": {"found": True, "control_plane_endpoint": "192.0.2.10:6443", "pod_subnet": "10.233.64.0/18",
                           "service_subnet": "10.233.0.0/18", "dns_domain": "cluster.local"},
        "flannel": {"found": True, "namespace": "kube-system", "name": "kube-flannel-cfg", "network": "10.233.64.0/18",
                    "backend_type": "vxlan", "vni": 4096, "port": 4789, "direct_routing": False},
        "dns": {"kubelet_cluster_dns": ["169.254.25.10"], "kubelet_cluster_domain": "cluster.local",
                "service": {"namespace": "kube-system", "name": "coredns", "cluster_ip": "10.233.0.3"}},
    }
    for key, value in changes.items():
        cluster[key] = dict(cluster[key], **value)
    return cluster


def test_an_inventory_without_kubespray_variables_gets_everything_from_the_cluster():
    s = cs.resolve(kubespray_cluster(), "cp1", {}, "192.0.2.10")
    assert (s["pods_subnet"], s["service_subnet"], s["dns_domain"]) == ("10.233.64.0/18", "10.233.0.0/18",
                                                                        "cluster.local")
    assert s["origins"]["pods_subnet"] == "kubeadm-config ConfigMap"
    assert (s["flannel_backend_type"], s["flannel_vxlan_vni"], s["flannel_vxlan_port"]) == ("vxlan", 4096, 4789)
    assert s["origins"]["flannel_vxlan_vni"] == "flannel ConfigMap kube-system/kube-flannel-cfg"
    assert s["kube_network_plugin"] == "flannel"
    assert s["api_server_endpoint"] == "192.0.2.10:6443"
    assert s["conflicts"] == []


def test_nodelocaldns_is_replaced_by_the_coredns_service_and_explained():
    s = cs.resolve(kubespray_cluster(), "cp1", {})
    assert s["dns_server"] == "10.233.0.3" and s["kubelet_dns_override"] is True
    assert s["origins"]["dns_server"] == "clusterIP of Service kube-system/coredns"
    assert any("169.254.25.10" in n and "nodelocaldns" in n and "10.233.0.3" in n for n in s["notes"])


def test_a_kubeadm_cluster_dns_in_the_service_network_is_kept_without_override():
    cluster = kubespray_cluster(dns={"kubelet_cluster_dns": ["10.233.0.10"],
                                     "service": {"namespace": "kube-system", "name": "kube-dns",
                                                 "cluster_ip": "10.233.0.10"}})
    s = cs.resolve(cluster, "cp1", {})
    assert s["dns_server"] == "10.233.0.10" and s["kubelet_dns_override"] is False
    assert s["origins"]["dns_server"] == "kubelet-config ConfigMap"


def test_no_dns_service_and_only_nodelocaldns_leaves_the_dns_server_unknown():
    cluster = kubespray_cluster(dns={"service": None})
    s = cs.resolve(cluster, "cp1", {})
    assert s["dns_server"] is None


def test_conflicting_pod_subnet_of_the_control_plane_host_names_both_values_and_origins():
    s = cs.resolve(kubespray_cluster(kubeadm_config={"pod_subnet": "10.244.0.0/16"}), "cp1",
                   {"kube_pods_subnet": "10.233.64.0/18"})
    assert s["pods_subnet"] == "10.244.0.0/16"
    assert [c["variable"] for c in s["conflicts"]] == ["kube_pods_subnet"]
    assert s["conflicts"][0]["message"].startswith(
        "kube_pods_subnet 10.233.64.0/18 (inventory, hostvars of cp1) differs from podSubnet 10.244.0.0/16 "
        "(kubeadm-config ConfigMap)")


@pytest.mark.parametrize("variable,value", [
    ("kube_pods_subnet", "10.233.64.0/18"), ("kube_service_addresses", "10.233.0.0/18"),
    ("dns_domain", "cluster.local."), ("flannel_backend_type", "VXLAN"), ("flannel_vxlan_vni", "4096"),
    ("flannel_vxlan_port", 4789), ("flannel_vxlan_direct_routing", False), ("kube_pods_subnet", None),
])
def test_inventory_values_equal_to_the_cluster_are_no_conflict(variable, value):
    s = cs.resolve(kubespray_cluster(), "cp1", {variable: value})
    assert s["conflicts"] == []


@pytest.mark.parametrize("variable,value,field", [
    ("kube_service_addresses", "10.96.0.0/12", "serviceSubnet 10.233.0.0/18 (kubeadm-config ConfigMap)"),
    ("dns_domain", "corp.local", "dnsDomain cluster.local (kubeadm-config ConfigMap)"),
    ("flannel_vxlan_vni", 1, "Backend VNI 4096 (flannel ConfigMap kube-system/kube-flannel-cfg)"),
    ("flannel_vxlan_port", 8472, "Backend Port 4789 (flannel ConfigMap kube-system/kube-flannel-cfg)"),
    ("flannel_backend_type", "host-gw", "Backend Type vxlan (flannel ConfigMap kube-system/kube-flannel-cfg)"),
    ("flannel_vxlan_direct_routing", True, "Backend DirectRouting False"),
])
def test_a_windows_host_value_that_differs_is_a_conflict_of_that_host(variable, value, field):
    s = cs.resolve(kubespray_cluster(), "cp1", {})
    found = cs.conflicts(s, "win-1", {variable: value})
    assert [(c["host"], c["variable"]) for c in found] == [("win-1", variable)]
    assert "(inventory, hostvars of win-1) differs from %s" % field in found[0]["message"]


def test_without_kubeadm_config_the_control_plane_hosts_values_are_used():
    cluster = kubespray_cluster()
    cluster["kubeadm_config"] = {"found": False}
    cluster["flannel"] = {"found": False}
    cluster["dns"] = {}
    s = cs.resolve(cluster, "cp1", {"kube_pods_subnet": "10.1.0.0/16", "kube_service_addresses": "10.2.0.0/16",
                                    "flannel_vxlan_vni": 4096})
    assert s["pods_subnet"] == "10.1.0.0/16" and s["origins"]["pods_subnet"] == "inventory, hostvars of cp1"
    assert s["service_subnet"] == "10.2.0.0/16"
    assert s["flannel_vxlan_vni"] == 4096
    assert s["kube_network_plugin"] is None
    # a Windows host with another value conflicts with the control-plane host's
    found = cs.conflicts(s, "win-1", {"kube_pods_subnet": "10.9.0.0/16"})
    assert "differs from podSubnet 10.1.0.0/16 (inventory, hostvars of cp1)" in found[0]["message"]
    assert s["dns_domain"] == "cluster.local" and s["origins"]["dns_domain"] == "kubeadm's default"


def test_a_load_balancer_endpoint_is_used_as_it_is():
    cluster = kubespray_cluster(kubeadm_config={"control_plane_endpoint": "lb.example.com:8443"})
    s = cs.resolve(cluster, "cp1", {"loadbalancer_apiserver": {"address": "192.0.2.100", "port": 8443}})
    assert s["api_server_endpoint"] == "lb.example.com:8443"
    assert s["origins"]["api_server_endpoint"] == "kubeadm-config ConfigMap"


@pytest.mark.parametrize("endpoint", ["localhost:6443", "127.0.0.1:6443", "[::1]:6443"])
def test_a_loopback_endpoint_falls_back_to_loadbalancer_apiserver(endpoint):
    cluster = kubespray_cluster(kubeadm_config={"control_plane_endpoint": endpoint})
    s = cs.resolve(cluster, "cp1", {"loadbalancer_apiserver": {"address": "192.0.2.100", "port": 8443}}, "192.0.2.10")
    assert s["api_server_endpoint"] == "192.0.2.100:8443"
    assert "loadbalancer_apiserver" in s["origins"]["api_server_endpoint"]
    assert any(endpoint in n and "192.0.2.100:8443" in n for n in s["notes"])


def test_a_loopback_endpoint_without_load_balancer_uses_the_first_control_plane_address():
    cluster = kubespray_cluster(kubeadm_config={"control_plane_endpoint": "localhost:6443"})
    s = cs.resolve(cluster, "cp1", {"kube_apiserver_port": 6444}, "192.0.2.10")
    assert s["api_server_endpoint"] == "192.0.2.10:6444"
    assert s["origins"]["api_server_endpoint"].startswith("first control-plane host cp1")


def test_a_loopback_load_balancer_is_not_used():
    cluster = kubespray_cluster(kubeadm_config={"control_plane_endpoint": "localhost:6443"})
    s = cs.resolve(cluster, "cp1", {"loadbalancer_apiserver": {"address": "127.0.0.1", "port": 6443}}, "192.0.2.10")
    assert s["api_server_endpoint"] == "192.0.2.10:6443"


def test_a_loopback_endpoint_and_no_address_stops_with_the_fix():
    cluster = kubespray_cluster(kubeadm_config={"control_plane_endpoint": "127.0.0.1:6443"})
    with pytest.raises(cs.SettingsError, match="loadbalancer_apiserver"):
        cs.resolve(cluster, "cp1", {}, None)


def test_several_control_planes_behind_the_first_ones_address_is_explained():
    s = cs.resolve(kubespray_cluster(), "cp1", {}, "192.0.2.10", control_planes=3)
    assert s["api_server_endpoint"] == "192.0.2.10:6443"
    assert any("HA" in n and "loadbalancer_apiserver" in n for n in s["notes"])


def test_no_control_plane_endpoint_keeps_cluster_info():
    s = cs.resolve(kubespray_cluster(kubeadm_config={"control_plane_endpoint": None}), "cp1", {})
    assert s["api_server_endpoint"] is None


def test_dual_stack_subnets_compare_by_their_ipv4_part():
    cluster = kubespray_cluster(kubeadm_config={"pod_subnet": "10.233.64.0/18,fd85:ee78:d8a6:8607::1:0000/112"})
    s = cs.resolve(cluster, "cp1", {"kube_pods_subnet": "10.233.64.0/18"})
    assert s["conflicts"] == []


def test_summary_names_each_value_with_its_origin():
    lines = cs.summary(cs.resolve(kubespray_cluster(), "cp1", {}, "192.0.2.10"))
    assert "cluster DNS 10.233.0.3 (clusterIP of Service kube-system/coredns)" in lines
    assert "pod network 10.233.64.0/18 (kubeadm-config ConfigMap)" in lines


@pytest.mark.parametrize("kubelet_ca, certificates_dir, path, origin", [
    # kubespray: kubeadm set clientCAFile from certificatesDir (kube_cert_dir); the drive as kubeadm join adds it
    ("/etc/kubernetes/ssl/ca.crt", "/etc/kubernetes/ssl", "C:\\etc\\kubernetes\\ssl\\ca.crt",
     "kubelet-config ConfigMap clientCAFile"),
    (None, "/etc/kubernetes/ssl/", "C:\\etc\\kubernetes\\ssl\\ca.crt", "kubeadm-config ConfigMap certificatesDir"),
    (None, None, "C:\\etc\\kubernetes\\pki\\ca.crt", "kubeadm's default"),
])
def test_the_ca_path_on_the_node_is_where_the_clusters_kubelet_reads_it(kubelet_ca, certificates_dir, path, origin):
    cluster = kubespray_cluster(kubeadm_config={"certificates_dir": certificates_dir})
    cluster["kubelet_client_ca_file"] = kubelet_ca
    s = cs.resolve(cluster, "cp1", {}, "192.0.2.10")
    assert (s["ca_cert_path"], s["origins"]["ca_cert_path"]) == (path, origin)
    assert "cluster CA on the node %s (%s)" % (path, origin) in s["summary"]
    assert s["ca_cert_dirs"] == [path.rsplit("\\", 1)[0], "C:\\etc\\kubernetes", "C:\\etc"]


CALICO = {"found": True, "namespace": "kube-system", "name": "calico-node", "version": "v3.31.5"}


def test_flannel_in_the_cluster_wins_over_kubesprays_sample_calico_and_says_so():
    s = cs.resolve(kubespray_cluster(), "cp1", {"kube_network_plugin": "calico"}, "192.0.2.10")
    assert s["kube_network_plugin"] == "flannel"
    assert s["origins"]["kube_network_plugin"] == "flannel ConfigMap kube-system/kube-flannel-cfg"
    assert any("kube_network_plugin is calico" in n and "the Windows nodes follow the cluster" in n
               for n in s["notes"]), s["notes"]
    assert s["conflicts"] == []


@pytest.mark.parametrize("given", ["custom_cni", "cni", "flannel"])
def test_flannel_installed_through_custom_cni_is_flannel_without_a_note(given):
    s = cs.resolve(kubespray_cluster(), "cp1", {"kube_network_plugin": given}, "192.0.2.10")
    assert s["kube_network_plugin"] == "flannel"
    assert not any("kube_network_plugin" in n for n in s["notes"])


def test_calico_in_the_cluster_is_calico_whatever_the_inventory_says():
    cluster = kubespray_cluster(flannel={"found": False})
    cluster["calico"] = CALICO
    s = cs.resolve(cluster, "cp1", {"kube_network_plugin": "flannel"}, "192.0.2.10")
    assert s["kube_network_plugin"] == "calico"
    assert s["origins"]["kube_network_plugin"] == "DaemonSet kube-system/calico-node (Calico v3.31.5)"


def test_neither_in_the_cluster_leaves_the_inventorys_value_or_nothing():
    cluster = kubespray_cluster(flannel={"found": False})
    s = cs.resolve(cluster, "cp1", {"kube_network_plugin": "cilium"}, "192.0.2.10")
    assert (s["kube_network_plugin"], s["origins"]["kube_network_plugin"]) == ("cilium", "inventory, hostvars of cp1")
    assert cs.resolve(cluster, "cp1", {}, "192.0.2.10")["kube_network_plugin"] is None


def test_an_endpoint_on_a_control_plane_nodes_address_says_the_nodes_depend_on_it():
    # kubespray without a load balancer writes controlPlaneEndpoint from main_ip, which may come from a fact the
    # inventory does not hold: the Node's own InternalIP tells it.
    cluster = kubespray_cluster(kubeadm_config={"control_plane_endpoint": "192.0.2.11:6443"})
    cluster["nodes"] = {"node1": {"internal_ip": "192.0.2.11"}, "node2": {"internal_ip": "192.0.2.12"}}
    s = cs.resolve(cluster, "cp1", {}, None, control_planes=3)
    assert any("one control-plane host (node1)" in n and "loadbalancer_apiserver" in n for n in s["notes"])
    assert not any("HA" in n for n in cs.resolve(cluster, "cp1", {}, None, control_planes=1)["notes"])


def test_a_loopback_endpoint_with_several_control_planes_and_no_balancer_says_the_nodes_depend_on_one():
    cluster = kubespray_cluster(kubeadm_config={"control_plane_endpoint": "127.0.0.1:6443"})
    s = cs.resolve(cluster, "cp1", {}, "192.0.2.10", control_planes=3)
    assert any("depend on that one control-plane host" in n and "HA" in n for n in s["notes"])
    lb = cs.resolve(cluster, "cp1", {"loadbalancer_apiserver": {"address": "192.0.2.100", "port": 8443}},
                    "192.0.2.10", control_planes=3)
    assert lb["api_server_endpoint"] == "192.0.2.100:8443" and not any("HA" in n for n in lb["notes"])


def test_a_windows_node_three_minors_behind_is_named_before_it_blocks_the_next_control_plane_upgrade():
    cluster = kubespray_cluster()  # API server v1.36.4
    cluster["nodes"] = {"win-old": {"os": "windows", "kubelet_version": "v1.33.9"},
                        "win-ok": {"os": "windows", "kubelet_version": "v1.34.2"},
                        "linux-old": {"os": "linux", "kubelet_version": "v1.33.9"}}
    notes = [n for n in cs.resolve(cluster, "cp1", {}, "192.0.2.10")["notes"] if "minors behind" in n]
    assert len(notes) == 1 and "win-old runs kubelet v1.33.9, 3 minors behind the API server v1.36" in notes[0]
    assert "upgrade-cluster.yml" in notes[0] and "playbooks/upgrade.yml" in notes[0]


@pytest.mark.parametrize("client_ca, path", [
    ("/etc/kubernetes/../ssl/./ca.crt", "C:\\etc\\ssl\\ca.crt"),  # filepath.Join cleans the path
    ("\\etc\\kubernetes\\ssl\\ca.crt", "C:\\etc\\kubernetes\\ssl\\ca.crt"),  # rooted: the system drive
])
def test_the_ca_path_is_cleaned_as_kubeadm_and_windows_resolve_it(client_ca, path):
    cluster = kubespray_cluster()
    cluster["kubelet_client_ca_file"] = client_ca
    s = cs.resolve(cluster, "cp1", {}, "192.0.2.10")
    assert s["ca_cert_path"] == path and s["ca_cert_dirs"][0] == path.rsplit("\\", 1)[0]
