"""cluster_facts: flannel net-conf with flannel's defaults, versions, nodes, kubeadm config."""

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import _cluster_facts as cf


@pytest.mark.parametrize("net_conf, expected", [
    # Linux flannel defaults: VNI 1, kernel port 8472 (kubespray's defaults too): not Windows-compatible.
    ('{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan"}}', ("vxlan", 1, 8472, False)),
    ('{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan", "VNI": 1, "Port": 8472}}', ("vxlan", 1, 8472, False)),
    ('{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan", "VNI": 4096, "Port": 4789}}',
     ("vxlan", 4096, 4789, True)),
    ('{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan", "VNI": 4097, "Port": 4789}}',
     ("vxlan", 4097, 4789, True)),
    ('{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan", "VNI": 4096}}', ("vxlan", 4096, 8472, False)),
    ('{"Network": "10.244.0.0/16", "Backend": {"Type": "host-gw"}}', ("host-gw", None, None, True)),
    ('{"Network": "10.244.0.0/16"}', ("udp", None, None, False)),
    ('{"Network": "10.244.0.0/16", "Backend": {"Type": "wireguard"}}', ("wireguard", None, None, False)),
    # Go's encoding/json matches keys case-insensitively; flannel accepts these.
    ('{"network": "10.244.0.0/16", "backend": {"type": "vxlan", "vni": 4096, "port": 4789}}',
     ("vxlan", 4096, 4789, True)),
])
def test_flannel_net_conf(net_conf, expected):
    parsed = cf.parse_flannel_net_conf(net_conf)
    assert (parsed["backend_type"], parsed["vni"], parsed["port"], parsed["windows_compatible"]) == expected
    assert parsed["network"] == "10.244.0.0/16"
    assert parsed["windows_compatible"] == (parsed["windows_problems"] == [])


def test_flannel_defaults_are_named():
    parsed = cf.parse_flannel_net_conf('{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan"}}')
    assert parsed["defaults_applied"] == ["vni", "port"]
    assert len(parsed["windows_problems"]) == 2
    assert cf.parse_flannel_net_conf('{"Network": "x"}')["defaults_applied"] == ["backend_type"]


def test_flannel_direct_routing_is_a_windows_problem():
    parsed = cf.parse_flannel_net_conf(
        '{"Network": "n", "Backend": {"Type": "vxlan", "VNI": 4096, "Port": 4789, "DirectRouting": true}}')
    assert parsed["windows_compatible"] is False and "DirectRouting" in parsed["windows_problems"][0]


@pytest.mark.parametrize("text, fragment", [
    ("{nope", "not valid JSON"),
    ("[]", "not a JSON object"),
    ('{"Backend": "vxlan"}', "Backend is not a JSON object"),
    ('{"Backend": {"Type": "vxlan", "VNI": "4096"}}', "not a number"),
])
def test_flannel_bad_net_conf(text, fragment):
    with pytest.raises(cf.ClusterFactsError, match=fragment):
        cf.parse_flannel_net_conf(text)


def test_flannel_backend_without_type():
    parsed = cf.parse_flannel_net_conf('{"Network": "n", "Backend": {"VNI": 4096}}')
    assert parsed["backend_type"] is None and parsed["windows_compatible"] is False


def test_flannel_facts_needs_key():
    with pytest.raises(cf.ClusterFactsError, match="net-conf.json"):
        cf.flannel_facts({"data": {}}, "kube-flannel/kube-flannel-cfg")


@pytest.mark.parametrize("doc, expected", [
    ({"major": "1", "minor": "31", "gitVersion": "v1.31.4"}, (1, 31, 4, "1.31.4")),
    ({"major": "1", "minor": "28+", "gitVersion": "v1.28.3-eks-4f4795d"}, (1, 28, 3, "1.28.3")),
    ({"major": "", "minor": "", "gitVersion": "v1.30.2+k3s1"}, (1, 30, 2, "1.30.2")),
    ({}, (None, None, None, None)),
])
def test_server_version(doc, expected):
    v = cf.parse_server_version(doc)
    assert (v["major"], v["minor"], v["patch"], v["version"]) == expected


def test_node_facts():
    node = {
        "metadata": {"name": "win-1",
                     "labels": {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.17763"}},
        "spec": {"unschedulable": True, "podCIDR": "10.244.3.0/24"},
        "status": {"conditions": [{"type": "Ready", "status": "Unknown"}],
                   "nodeInfo": {"kubeletVersion": "v1.30.1", "operatingSystem": "windows", "architecture": "amd64"},
                   "addresses": [{"type": "Hostname", "address": "win-1"},
                                 {"type": "InternalIP", "address": "10.0.0.5"}]},
    }
    assert cf.nodes_facts({"items": [node]}) == {"win-1": {
        "ready": False, "os": "windows", "kubelet_version": "v1.30.1", "windows_build": "10.0.17763",
        "unschedulable": True, "internal_ip": "10.0.0.5", "architecture": "amd64", "pod_cidr": "10.244.3.0/24"}}


def test_kubeadm_config():
    assert cf.parse_kubeadm_config(None)["found"] is False
    parsed = cf.parse_kubeadm_config({"data": {"ClusterConfiguration": "kubernetesVersion: v1.30.0\n"}})
    assert parsed["found"] is True and parsed["kubernetes_version"] == "v1.30.0" and parsed["pod_subnet"] is None
    with pytest.raises(cf.ClusterFactsError, match="ClusterConfiguration"):
        cf.parse_kubeadm_config({"data": {}})
    with pytest.raises(cf.ClusterFactsError, match="cannot be parsed"):
        cf.parse_kubeadm_config({"data": {"ClusterConfiguration": "a: [b"}})


def test_kubelet_config_names():
    assert cf.kubelet_config_names(1, 31) == ["kubelet-config"]
    assert cf.kubelet_config_names(1, 22) == ["kubelet-config", "kubelet-config-1.22"]


def test_kubelet_config_cluster_dns_and_domain():
    cm = {"data": {"kubelet": "kind: KubeletConfiguration\nclusterDNS:\n- 169.254.25.10\nclusterDomain: corp.local\n"}}
    assert cf.parse_kubelet_config(cm) == {"kubelet_cluster_dns": ["169.254.25.10"],
                                           "kubelet_cluster_domain": "corp.local"}


def test_kubelet_config_that_is_no_mapping_is_an_error():
    with pytest.raises(cf.ClusterFactsError, match="not a mapping"):
        cf.parse_kubelet_config({"data": {"kubelet": "- a\n- b\n"}})


def test_kubelet_security_fields_are_what_preflight_judges():
    # A kubelet-config weakened by hand (anonymous auth on, a read-only port): preflight sees exactly these fields,
    # and never the CA's path.
    cm = {"data": {"kubelet": "kind: KubeletConfiguration\nauthentication:\n  anonymous:\n    enabled: true\n"
                              "  webhook:\n    enabled: true\n  x509:\n    clientCAFile: /etc/kubernetes/pki/ca.crt\n"
                              "authorization:\n  mode: Webhook\nreadOnlyPort: 10255\nclusterDomain: cluster.local\n"}}
    assert cf.kubelet_security(cm) == {"authentication": {"anonymous": {"enabled": True}, "webhook": {"enabled": True}},
                                       "authorization": {"mode": "Webhook"}, "readOnlyPort": 10255}
    assert cf.kubelet_security(None) == {}


def test_headless_dns_service_has_no_cluster_ip():
    assert cf.dns_service_facts({"spec": {"clusterIP": "None"}}, "kube-system/kube-dns")["cluster_ip"] is None


def test_node_facts_agree_with_node_state():
    """k8s_join_info's per-Node summary is node_state's (what k8s_node waits on): one reading of a Node."""
    from ansible_collections.kubewin.nodes.plugins.module_utils import _node_state as node_state

    node = {"metadata": {"name": "win-2"},
            "status": {"conditions": [{"type": "MemoryPressure", "status": "False"},
                                      {"type": "Ready", "status": "True"}],
                       "nodeInfo": {"kubeletVersion": "v1.31.0", "operatingSystem": "windows"}}}
    facts, summary = cf.node_facts(node), node_state.node_summary(node)
    assert facts["ready"] is summary["ready"] is True
    assert (facts["os"], facts["kubelet_version"]) == (summary["os"], summary["kubelet_version"])
    assert facts["os"] == "windows" and facts["kubelet_version"] == "v1.31.0"
    assert facts["internal_ip"] is None and facts["windows_build"] is None


def test_node_renewal_bindings_bind_the_selfnodeclient_role_to_system_nodes():
    role = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
            "name": "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"}
    nodes = [{"kind": "Group", "name": "system:nodes"}]
    kubeadm = "kubeadm:node-autoapprove-certificate-rotation"
    items = [{"metadata": {"name": kubeadm}, "roleRef": role, "subjects": nodes},
             {"metadata": {"name": "a-custom-one"}, "roleRef": role,
              "subjects": [{"kind": "User", "name": "x"}] + nodes},
             {"metadata": {"name": "one-node"}, "roleRef": role,
              "subjects": [{"kind": "User", "name": "system:node:a"}]},
             {"metadata": {"name": "bootstrap"}, "subjects": nodes,
              "roleRef": dict(role, name="system:certificates.k8s.io:certificatesigningrequests:nodeclient")},
             {"metadata": {"name": "a-role"}, "roleRef": dict(role, kind="Role"), "subjects": nodes}]
    assert cf.node_renewal_bindings({"items": items}) == ["a-custom-one", kubeadm]
    assert cf.node_renewal_bindings({"items": []}) == [] and cf.node_renewal_bindings(None) == []
