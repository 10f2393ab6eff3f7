"""The node_health script's read (issue 21 point 4) run as written through the lab's interpreter on a simulated
containerd host: HNS networks and endpoints, the CNI configuration directory containerd's config dump names with each
configuration's text, and the kubelet's client certificate without the key beside it in the same file."""

import json
import os
from unittest import mock

import pytest
from winsim import core
from winsim.ps import winhost
from winsim.ps.winhost import run_kubewin_script as run_ps

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _health as health

CERT = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
KEY = "-----BEGIN EC PRIVATE KEY-----\nsecret\n-----END EC PRIVATE KEY-----\n"


@pytest.fixture
def host(tmp_path):
    return core.create_host(str(tmp_path), "h", profile="ws2022-containerd")


def _write(host, win_path, text):
    local = os.path.join(host.root, "hosts", host.name, "C", *win_path[3:].split("\\"))
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "w") as f:
        f.write(text)


def test_node_health_reads_the_cni_configuration_endpoints_and_only_the_certificate(host):
    core.flannel(host.root, host.name)
    conf_dir = "C:\\Program Files\\containerd\\cni\\conf"
    _write(host, conf_dir + "\\10-flannel.conf", '{"name": "flannel.4096"}')
    _write(host, conf_dir + "\\notes.txt", "not a configuration")
    _write(host, health.KUBELET_CLIENT_CERT, CERT + KEY)
    with host.open():
        winhost.winsim_hns.create_load_balancer(host.state, "10.96.0.1", 6, 443, 6443, "10.244.1.254")
        answer = run_ps(host, "node_health", health.script_parameters("containerd", True), True)["result"]
    assert answer["certificates"] == {
        health.KUBELET_CLIENT_CERT: {"exists": True, "certificate": CERT.strip(), "error": None}}
    assert "PRIVATE KEY" not in json.dumps(answer)
    view = health.host_view(answer)
    assert view["networks"]["flannel.4096"] == "Overlay" and view["endpoints"] == []
    dump = answer["services"]["containerd"]["config_dump"]
    assert "conf_dir" in dump, dump
    (listed,) = [files for d, files in answer["cni_conf"].items() if d.lower() == conf_dir.lower()]
    assert listed == {"10-flannel.conf": '{"name": "flannel.4096"}', "notes.txt": None}
    assert answer["services"]["containerd"]["image_path"]
    # kube-proxy's HNS v2 load balancers, each as HNS answers its properties (hcsshim HostComputeLoadBalancer)
    assert answer["load_balancers_error"] is None
    (lb,) = [json.loads(text) for text in answer["load_balancers"]]
    assert lb["FrontendVIPs"] == ["10.96.0.1"] and lb["PortMappings"] == [
        {"Protocol": 6, "InternalPort": 6443, "ExternalPort": 443}]
    assert health.host_view(answer)["load_balancers"] == answer["load_balancers"]


def test_node_health_reports_load_balancers_it_cannot_read(host):
    with host.open():
        # an ID the enumeration lists and the open does not find (a load balancer deleted in between)
        listed = json.dumps(["0B3E4D6C-0000-0000-0000-000000000001"])
        with mock.patch.object(winhost.winsim_hns, "load_balancer_ids", lambda state, query: listed):
            answer = run_ps(host, "node_health", health.script_parameters("containerd", True), True)["result"]
    assert answer["load_balancers"] is None
    assert answer["load_balancers_error"] == (
        'Exception calling "Properties" with "2" argument(s): "HcnOpenLoadBalancer failed with HRESULT 0x80070490: '
        'Element not found."')


def test_the_simulated_kube_proxy_programs_a_load_balancer_per_clusterip_port_with_ready_endpoints(host):
    import importlib
    node = importlib.import_module("ansible_collections.ansible.windows.plugins.module_utils.winsim_node")

    def svc(name, ip, ports):
        return {"metadata": {"name": name, "namespace": "default"}, "spec": {"clusterIP": ip, "ports": ports}}

    def eps(name, ports, ready):
        return {"metadata": {"namespace": "default", "labels": {"kubernetes.io/service-name": name}}, "ports": ports,
                "endpoints": [{"conditions": {"ready": ready}}]}

    services = [svc("a", "10.96.0.1", [{"name": "https", "port": 443, "targetPort": 6443}]),
                svc("dns", "10.96.0.10", [{"name": "dns", "port": 53, "protocol": "UDP"},
                                          {"name": "metrics", "port": 9153}]),
                svc("gone", "10.96.0.11", [{"name": "", "port": 80}]),
                svc("ext", "", [{"name": "", "port": 80}])]
    slices = [eps("a", [{"name": "https"}], True), eps("dns", [{"name": "dns"}], None),
              eps("gone", [{"name": ""}], False), eps("ext", [{"name": ""}], True)]
    with host.open():
        record = {"source_vip": "10.244.1.254"}
        node._program_load_balancers(host, record, services, slices)
        lbs = host.state["hns"]["loadbalancers"]
        assert sorted((lb["FrontendVIPs"][0], lb["PortMappings"][0]["ExternalPort"], lb["PortMappings"][0]["Protocol"],
                       lb["PortMappings"][0]["InternalPort"]) for lb in lbs) == [
            ("10.96.0.1", 443, 6, 6443), ("10.96.0.10", 53, 17, 53)]
        # the same process does not apply them again once HNS lost them; a new one (a restart) does, once
        host.state["hns"]["loadbalancers"] = lbs[:1]
        node._program_load_balancers(host, record, services, slices)
        assert len(host.state["hns"]["loadbalancers"]) == 1
        node._program_load_balancers(host, {}, services, slices)
        node._program_load_balancers(host, {}, services, slices)
        assert len(host.state["hns"]["loadbalancers"]) == 2
