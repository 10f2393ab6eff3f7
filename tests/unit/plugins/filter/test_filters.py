"""What the roles get from the collection's filters, rendered through Ansible's templating by FQCN."""

import json

import pytest
from ansible.errors import AnsibleError

TOKEN = "abcdef.0123456789abcdef"
PIN = "sha256:" + "a" * 64


def data(rendered):
    """A filter's JSON text as data (ansible-core 2.18's templating turns JSON-looking text into data itself)."""
    return rendered if isinstance(rendered, (dict, list)) else json.loads(rendered)


def test_windows_flannel_names_the_hns_network_flannel_creates(render):
    settings = {"flannel_backend_type": "vxlan", "flannel_vxlan_vni": 4097}
    assert render("{{ s | kubewin.nodes.windows_flannel }}", s=settings)["network_name"] == "flannel.4097"
    assert render("{{ s | kubewin.nodes.windows_flannel(h) }}", s={}, h={"flannel_backend_type": "host-gw"})[
        "network_name"] == "cbr0"


def test_a_module_error_reaches_the_user_as_a_template_error_naming_the_variable(render):
    with pytest.raises(AnsibleError, match="flannel_backend_type must be vxlan or host-gw, not 'vxaln'"):
        render("{{ s | kubewin.nodes.windows_flannel }}", s={"flannel_backend_type": "vxaln"})


def test_windows_flannel_gives_flanneld_args_for_a_host_with_an_address(render):
    flannel = render("{{ s | kubewin.nodes.windows_flannel({}, '192.0.2.20') }}", s={"flannel_backend_type": "vxlan"})
    assert flannel["flanneld_args"][0] == "--kube-subnet-mgr" and "--iface=192.0.2.20" in flannel["flanneld_args"]
    assert render("{{ s | kubewin.nodes.windows_flannel }}", s={})["flanneld_args"] is None


def test_the_join_configuration_carries_the_token_and_a_bad_token_is_never_echoed(render):
    args = ["192.0.2.10:6443", "--token", TOKEN, "--discovery-token-ca-cert-hash", PIN]
    conf = data(render("{{ a | kubewin.nodes.join_configuration('win-1', sock) }}",
                       a=args, sock="npipe:////./pipe/containerd-containerd"))
    assert conf["kind"] == "JoinConfiguration"
    assert conf["discovery"]["bootstrapToken"] == {"apiServerEndpoint": "192.0.2.10:6443", "caCertHashes": [PIN],
                                                   "token": TOKEN}
    assert conf["nodeRegistration"] == {"criSocket": "npipe:////./pipe/containerd-containerd", "name": "win-1"}
    bad = "ABCDEF.0123456789secret"
    with pytest.raises(AnsibleError, match="cannot build the kubeadm JoinConfiguration") as err:
        render("{{ a | kubewin.nodes.join_configuration('win-1', 'npipe:x') }}",
               a=["192.0.2.10:6443", "--token", bad, "--discovery-token-ca-cert-hash", PIN])
    assert "secret" not in str(err.value)


@pytest.mark.parametrize("given, server, expected", [("1.33.2", "", "v1.33.2"), ("v1.33.2", "v1.32.0", "v1.33.2"),
                                                     ("", "v1.33.1", "v1.33.1")])
def test_kube_release_in_either_spelling_or_the_servers(render, given, server, expected):
    assert render("{{ k | kubewin.nodes.kube_release(s) }}", k=given, s=server) == expected


def test_the_node_gets_the_pod_network_from_the_cluster_and_a_hopeless_endpoint_is_refused(render):
    cluster = {"kubeadm_config": {"found": True, "control_plane_endpoint": "192.0.2.10:6443",
                                  "pod_subnet": "10.233.64.0/18", "service_subnet": "10.233.0.0/18"}}
    settings = render("{{ c | kubewin.nodes.cluster_settings('cp1', {}, '192.0.2.10') }}", c=cluster)
    assert settings["pods_subnet"] == "10.233.64.0/18"
    assert any(line.startswith("pod network 10.233.64.0/18") for line in settings["summary"])
    loopback = {"kubeadm_config": dict(cluster["kubeadm_config"], control_plane_endpoint="127.0.0.1:6443")}
    with pytest.raises(AnsibleError, match="loadbalancer_apiserver"):
        render("{{ c | kubewin.nodes.cluster_settings('cp1', {}, none) }}", c=loopback)


def test_kubespray_download_and_proxy_settings(render):
    assert render("{{ k | kubewin.nodes.kubespray_download_url('kubernetes') }}", k={}) == "https://dl.k8s.io/release"
    assert render("{{ k | kubewin.nodes.kubespray_proxy(['https://dl.k8s.io/release']) }}",
                  k={"https_proxy": "http://proxy.example:3128"}) == "http://proxy.example:3128"
    assert render("{{ k | kubewin.nodes.kubespray_no_proxy }}", k={"no_proxy": "mirror.example,10.0.0.0/8"}) == \
        ["mirror.example", "10.0.0.0/8"]


def test_net_conf_through_templating(render):
    flannel = render("{{ s | kubewin.nodes.windows_flannel }}",
                     s={"flannel_backend_type": "host-gw", "pods_subnet": "10.244.0.0/16"})
    assert data(flannel["net_conf"]) == {"Network": "10.244.0.0/16", "Backend": {"Type": "host-gw"}}
