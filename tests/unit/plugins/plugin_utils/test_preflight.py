"""Preflight checks for a Windows node: each check's failures name the variable and the fix."""

import ipaddress

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _downloads
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _preflight as preflight

VALID = dict(
    node_name="win-worker-1",
    hostname="WIN-WORKER-1",
    windows_build="10.0.20348.2113",
    container_runtime="containerd",
    runtime=dict(service_exists=True, service_status="Running", pipe_exists=True,
                 version="containerd github.com/containerd/containerd v1.7.13 7c3aca7a6"),
    deployment_mode="hostprocess",
    kube_pods_subnet="10.244.0.0/16",
    kube_service_addresses="10.96.0.0/12",
    cluster_pod_subnet="10.244.0.0/16",
    cluster_service_subnet="10.96.0.0/12",
    kube_network_plugin="flannel",
    flannel_backend_type="vxlan",
    flannel_vxlan_vni=4096,
    flannel_vxlan_port=4789,
    cluster_flannel=dict(found=True, backend_type="vxlan", vni=4096, port=4789, network="10.244.0.0/16"),
    kube_version="v1.31.4",
    server_version="v1.31.4",
    existing_node=dict(exists=False, ready=False, os=None),
    joined=False,
    adapters=[dict(name="Ethernet0", ipv4=["192.168.10.21/24"]),
              dict(name="Loopback Pseudo-Interface 1", ipv4=["127.0.0.1"])],
    adapter_name=None,
)


def run(**changes):
    inputs = dict(VALID)
    inputs.update(changes)
    failures, warnings, dummy = preflight.run_checks(inputs)
    return failures, warnings


def test_valid_input_passes_without_failures_or_warnings():
    failures, warnings = run()
    assert failures == [] and warnings == []


def test_minimal_input_with_cluster_values_passes():
    failures, warnings, dummy = preflight.run_checks(dict(
        node_name="win1", cluster_pod_subnet="10.244.0.0/16", cluster_service_subnet="10.96.0.0/12",
        server_version="v1.37.2", kube_network_plugin="flannel"))
    assert failures == [] and warnings == []


COMPOSE = "re-run kubespray's network plugin role"

# (changes, check, variable, key phrases that must all be in the one failure of that variable)
BAD = [
    # node name
    (dict(node_name="Win_Worker1", hostname="Win_Worker1"), "node_name", "kubewin_node_name",
     ["DNS-1123", "uppercase", "defaults to the Windows computer name 'Win_Worker1'", "set kubewin_node_name",
      "'win-worker1'"]),
    (dict(node_name="a" * 64), "node_name", "kubewin_node_name", ["at most 63", "set kubewin_node_name"]),
    (dict(node_name="-win"), "node_name", "kubewin_node_name", ["start and end with a letter or digit"]),
    (dict(node_name="win..x"), "node_name", "kubewin_node_name", ["label ''"]),
    # Windows build
    (dict(windows_build="10.0.19045"), "windows_build", "kubewin_supported_windows_builds",
     ["10.0.19045 is not supported", "20348 (Windows Server 2022)", "add 19045 to kubewin_supported_windows_builds"]),
    (dict(windows_build="10.0.14393"), "windows_build", "kubewin_supported_windows_builds", ["not supported"]),
    (dict(windows_build="Windows"), "windows_build", "kubewin_supported_windows_builds",
     ["not a Windows build like 10.0.20348"]),
    (dict(supported_builds=["17763", "2022"]), "windows_build", "kubewin_supported_windows_builds",
     ["entry '2022' is not a Windows build number"]),
    (dict(supported_builds=["17763"]), "windows_build", "kubewin_supported_windows_builds",
     ["10.0.20348 (Windows Server 2022) is not supported", "17763 (Windows Server 2019)"]),
    # container runtime
    (dict(runtime=dict(VALID["runtime"], service_exists=False)), "container_runtime", "kubewin_container_runtime",
     ["containerd service does not exist", "install containerd", "set kubewin_container_runtime"]),
    (dict(runtime=dict(VALID["runtime"], service_status="Stopped")), "container_runtime",
     "kubewin_container_runtime", ["is Stopped, not Running", "Start-Service containerd"]),
    (dict(runtime=dict(VALID["runtime"], pipe_exists=False)), "container_runtime", "kubewin_container_runtime",
     ["\\\\.\\pipe\\containerd-containerd does not exist", "grpc.address"]),
    (dict(runtime=dict(VALID["runtime"], version="1.5.13")), "container_runtime", "kubewin_container_runtime",
     ["containerd v1.5.13 is older than the supported minimum v1.6", "upgrade containerd"]),
    (dict(runtime=dict(VALID["runtime"], version="v1.5.13"), deployment_mode="services"), "container_runtime",
     "kubewin_container_runtime", ["older than the supported minimum v1.6", "CRI v1", "upgrade containerd"]),
    # HostProcess volume mounts at the pod's paths need containerd 1.7 (1.6: under $CONTAINER_SANDBOX_MOUNT_POINT)
    (dict(runtime=dict(VALID["runtime"], version="v1.6.28")), "container_runtime", "kubewin_deployment_mode",
     ["hostprocess needs containerd >= v1.7", "it has v1.6.28", "CONTAINER_SANDBOX_MOUNT_POINT",
      "kubewin_deployment_mode: services"]),
    # the README's floor (containerd >= 1.6) holds whatever the Kubernetes version: 1.25 used to pass
    (dict(runtime=dict(VALID["runtime"], version="containerd github.com/containerd/containerd v1.5.18 x"),
          deployment_mode="services", kube_version="v1.25.16", server_version="v1.25.16"), "container_runtime",
     "kubewin_container_runtime", ["containerd v1.5.18 is older than the supported minimum v1.6"]),
    (dict(container_runtime="docker", deployment_mode="services",
          runtime=dict(service_exists=True, service_status="Running", pipe_exists=True, version="20.10.24")),
     "container_runtime", "kubewin_container_runtime",
     ["dockershim", "removed in Kubernetes 1.24", "no cri-dockerd service",
      "set kubewin_container_runtime: containerd"]),
    (dict(container_runtime="docker", kube_version="v1.23.17", server_version="v1.23.17",
          runtime=dict(service_exists=True, service_status="Running", pipe_exists=True,
                       cri_dockerd_service_exists=True)),
     "container_runtime", "kubewin_deployment_mode",
     ["Docker cannot run HostProcess containers", "set kubewin_container_runtime: containerd",
      "kubewin_deployment_mode: services"]),
    (dict(container_runtime="docker", deployment_mode="services", kube_version="v1.23.17",
          server_version="v1.23.17", runtime=dict(service_exists=True, service_status="Running", pipe_exists=False)),
     "container_runtime", "kubewin_container_runtime", ["\\\\.\\pipe\\docker_engine does not exist"]),
    # deployment mode
    (dict(deployment_mode="hostprocess", kube_version="v1.22.17", server_version="v1.22.17"), "deployment_mode",
     "kubewin_deployment_mode", ["beta from 1.23", "set kubewin_deployment_mode: services"]),
    # subnets
    (dict(kube_pods_subnet="10.244.0.0/33"), "subnets", "kube_pods_subnet", ["not a network in CIDR form",
                                                                             "set kube_pods_subnet"]),
    (dict(kube_pods_subnet="10.244.1.0/16"), "subnets", "kube_pods_subnet", ["host bits set",
                                                                             "set kube_pods_subnet: 10.244.0.0/16"]),
    (dict(kube_pods_subnet="fd00:10:244::/56", cluster_pod_subnet=None, cluster_flannel=None), "subnets",
     "kube_pods_subnet", ["is IPv6", "IPv4"]),
    (dict(kube_pods_subnet="10.244.0.0/16,fd00::/56"), "subnets", "kube_pods_subnet",
     ["lists several networks", "IPv4"]),
    (dict(kube_service_addresses="10.233.0.0/18"), "subnets", "kube_service_addresses",
     ["networking.serviceSubnet is 10.96.0.0/12", "10.233.0.0/18", "set kube_service_addresses: 10.96.0.0/12"]),
    (dict(kube_pods_subnet="10.233.64.0/18", cluster_flannel=None), "subnets", "kube_pods_subnet",
     ["networking.podSubnet is 10.244.0.0/16", "10.233.64.0/18", "set kube_pods_subnet: 10.244.0.0/16"]),
    (dict(kube_service_addresses="10.244.128.0/20", cluster_service_subnet=None), "subnets", "kube_pods_subnet",
     ["overlaps kube_service_addresses 10.244.128.0/20", "disjoint"]),
    (dict(kube_pods_subnet=None, cluster_pod_subnet=None, cluster_flannel=None), "subnets", "kube_pods_subnet",
     ["kube_pods_subnet is not set", "networking.podSubnet"]),
    # network plugin
    (dict(kube_network_plugin="calico"), "network_plugin", "kube_network_plugin",
     ["flannel only", "kube_network_plugin is 'calico'", "changed nothing", "no migration", "Calico for Windows"]),
    (dict(kube_network_plugin="calico", network_plugin_origin="DaemonSet kube-system/calico-node (Calico v3.31.5)"),
     "network_plugin", "kube_network_plugin",
     ["the cluster runs Calico (DaemonSet kube-system/calico-node (Calico v3.31.5))", "no migration"]),
    (dict(kube_network_plugin=None), "network_plugin", "kube_network_plugin",
     ["no pod network", "kube-flannel/kube-flannel-cfg", "kube_network_plugin: flannel"]),
    (dict(flannel_backend_type="wireguard"), "network_plugin", "flannel_backend_type",
     ["vxlan and host-gw only", "set flannel_backend_type: vxlan"]),
    (dict(flannel_vxlan_vni=1, cluster_flannel=dict(VALID["cluster_flannel"], vni=1)), "network_plugin",
     "flannel_vxlan_vni", ["flannel_vxlan_vni is 1", "from 4096", "set flannel_vxlan_vni: 4096 and "
                                                                  "flannel_vxlan_port: 4789", COMPOSE]),
    (dict(flannel_vxlan_port=8472, cluster_flannel=dict(VALID["cluster_flannel"], port=8472)), "network_plugin",
     "flannel_vxlan_port", ["UDP port 4789 only", "set flannel_vxlan_vni: 4096 and flannel_vxlan_port: 4789",
                            COMPOSE]),
    # kubespray defaults on the Linux side: net-conf.json without VNI/Port means VNI 1 / port 8472
    (dict(cluster_flannel=dict(found=True, backend_type="vxlan", network="10.244.0.0/16")), "network_plugin",
     "flannel_vxlan_vni", ["cluster's flannel uses VXLAN VNI 1", "Windows needs >= 4096",
                           "set flannel_vxlan_vni: 4096 and flannel_vxlan_port: 4789", COMPOSE]),
    (dict(cluster_flannel=dict(VALID["cluster_flannel"], port=8472)), "network_plugin", "flannel_vxlan_port",
     ["cluster's flannel uses VXLAN port 8472", COMPOSE, "kube-flannel-cfg"]),
    (dict(flannel_vxlan_vni=4097), "network_plugin", "flannel_vxlan_vni",
     ["uses VXLAN VNI 4096 but flannel_vxlan_vni is 4097", "set flannel_vxlan_vni: 4096 to match the cluster"]),
    (dict(cluster_flannel=dict(VALID["cluster_flannel"], backend_type="host-gw")), "network_plugin",
     "flannel_backend_type", ["cluster's flannel uses backend host-gw", "set flannel_backend_type: host-gw"]),
    (dict(cluster_flannel=dict(found=False)), "network_plugin", "kube_network_plugin",
     ["no flannel ConfigMap", "deploy flannel on the Linux nodes first"]),
    (dict(cluster_flannel=dict(VALID["cluster_flannel"], network="10.245.0.0/16")), "network_plugin",
     "kube_pods_subnet", ["not inside the cluster's flannel Network 10.245.0.0/16",
                          "set kube_pods_subnet: 10.245.0.0/16"]),
    # version skew
    (dict(kube_version="v1.32.0"), "version_skew", "kube_version",
     ["newer than the API server v1.31.4", "allowed: v1.28 to v1.31", "set kube_version to v1.31.x"]),
    (dict(kube_version="1.27.16"), "version_skew", "kube_version",
     ["too old for the API server v1.31.4", "at most 3 minor versions older", "allowed: v1.28 to v1.31"]),
    (dict(kube_version="v1.23.17", server_version="v1.26.3", runtime=None, deployment_mode="services"),
     "version_skew", "kube_version", ["too old", "at most 2 minor versions older", "allowed: v1.24 to v1.26"]),
    # the form of each value (check_inputs): variable, value given, form expected
    (dict(kube_version="latest"), "inputs", "kube_version",
     ["kube_version 'latest' is not a Kubernetes release version", "1.36.4 or v1.36.4", "the API server runs v1.31.4"]),
    (dict(kube_version="1.31"), "inputs", "kube_version", ["'1.31' is not a Kubernetes release", "major.minor.patch"]),
    (dict(kube_version="v1.31.4-eks-1"), "inputs", "kube_version", ["'v1.31.4-eks-1' is not a Kubernetes release"]),
    (dict(kube_version=None, server_version="weird"), "inputs", "kube_version",
     ["kube_version is not set and the API server's version ('weird') is not a Kubernetes release"]),
    (dict(flannel_version="0.26.7"), "inputs", "kubewin_flannel_version",
     ["kubewin_flannel_version '0.26.7' is not a release tag", "here v0.26.7"]),
    (dict(cni_plugins_version="v1.6"), "inputs", "kubewin_cni_plugins_version",
     ["'v1.6' is not a release tag", "e.g. v1.6.2"]),
    (dict(container_runtime="containerdd"), "inputs", "kubewin_container_runtime",
     ["kubewin_container_runtime is 'containerdd'; it must be one of: containerd, docker", "did you mean containerd?"]),
    (dict(deployment_mode="HostProcess"), "inputs", "kubewin_deployment_mode",
     ["kubewin_deployment_mode is 'HostProcess'; it must be one of: services, hostprocess",
      "did you mean hostprocess?"]),
    (dict(kubeadm_token="abcdef.0123456789ABCDEF"), "inputs", "kubeadm_token",
     ["value not shown", "[a-z0-9]{6}.[a-z0-9]{16}", "the secret after the '.' has 16 characters including "
                                                     "characters other than a-z and 0-9", "kubeadm token generate"]),
    (dict(kubeadm_token="abcdef0123456789abcdef"), "inputs", "kubeadm_token", ["no '.' between"]),
    (dict(proxy="proxy.corp:3128"), "inputs", "kubewin_http_proxy",
     ["kubewin_http_proxy 'proxy.corp:3128' is not a proxy URL: it has no scheme", "http://host:port"]),
    (dict(proxy="http://proxy.corp:31x8"), "inputs", "kubewin_http_proxy", ["port is not a number"]),
    (dict(proxy="https://user:s3cret@proxy.corp:3128"), "inputs", "kubewin_http_proxy",
     ["'https://user:<hidden>@proxy.corp:3128'", "its scheme is https"]),
    (dict(no_proxy=["mirror.corp", "http://mirror.corp", "fd00::/64"]), "inputs", "kubewin_no_proxy",
     ["'http://mirror.corp': a no_proxy entry is a host", "'fd00::/64' is an IPv6 network", "or * for everything"]),
    # where the files come from (check_downloads)
    (dict(download_bases={"kubewin_kubernetes_download_url": "http://mirror.corp/release"},
          downloads=[{"url": "http://mirror.corp/release/v1.31.4/bin/windows/amd64/kubelet.exe", "dest": "C:\\k"}]),
     "downloads", "kubewin_kubernetes_download_url",
     ["kubewin_kubernetes_download_url http://mirror.corp/release is plain http", "replace both",
      "set kubewin_allow_insecure_downloads: true"]),
    (dict(downloads=[{"url": "https://mirror.corp/x.exe", "checksum_url": "http://mirror.corp/x.sha512",
                      "dest": "C:\\k\\x.exe"}]),
     "downloads", "kubewin_allow_insecure_downloads", ["download http://mirror.corp/x.sha512 is plain http"]),
    (dict(download_bases={"kubewin_cni_download_url": "github.com/containernetworking/plugins/releases/download"}),
     "downloads", "kubewin_cni_download_url", ["is not a download location", "https://host/path"]),
    (dict(checksums={"flanneld.exe": "a" * 128},
          downloads=[{"url": "https://github.com/f/v0.26.7/flanneld.exe", "dest": "C:\\k\\flanneld.exe"}]),
     "downloads", "kubewin_checksums",
     ["key 'flanneld.exe' is a file name", "keyed by the full download URL",
      "use 'https://github.com/f/v0.26.7/flanneld.exe'"]),
    # existing node
    (dict(existing_node=dict(exists=True, ready=True, os="windows")), "existing_node", "kubewin_node_name",
     ["'win-worker-1' already exists and is Ready", "the name is taken", "playbooks/reset.yml",
      "set kubewin_node_name to a different name"]),
    (dict(existing_node=dict(exists=True, ready=False, os="linux"), joined=True), "existing_node",
     "kubewin_node_name", ["is a linux node", "set kubewin_node_name to a different name"]),
    # adapters
    (dict(adapters=[dict(name="Ethernet0", ipv4=["192.168.10.21"]), dict(name="Ethernet1", ipv4=["10.0.5.4/24"])]),
     "network_adapter", "kubewin_network_adapter",
     ["2 adapters with an IPv4 address", "Ethernet0 192.168.10.21", "Ethernet1 10.0.5.4",
      "set kubewin_network_adapter to one of them"]),
    (dict(adapter_name="Ethernet9"), "network_adapter", "kubewin_network_adapter",
     ["no adapter of that name", "Ethernet0", "set kubewin_network_adapter"]),
    (dict(adapters=[dict(name="Ethernet0", ipv4=["192.168.10.21"]), dict(name="Ethernet1", ipv4=[])],
          adapter_name="Ethernet1"), "network_adapter", "kubewin_network_adapter",
     ["has no IPv4 address", "(Ethernet0)"]),
    (dict(adapters=[dict(name="Ethernet0", ipv4=["169.254.3.3"])]), "network_adapter", "kubewin_network_adapter",
     ["no network adapter of this host has an IPv4 address"]),
    # node address inside the pod or service network
    (dict(adapters=[dict(name="Ethernet0", ipv4=["10.244.9.9/24"])]), "node_ip", "kube_pods_subnet",
     ["node address 10.244.9.9 lies inside kube_pods_subnet 10.244.0.0/16"]),
]


@pytest.mark.parametrize("changes, check, variable, phrases", BAD,
                         ids=["%s-%d" % (b[1], n) for n, b in enumerate(BAD)])
def test_each_bad_input_fails_naming_the_variable_and_the_fix(changes, check, variable, phrases):
    failures, dummy = run(**changes)
    mine = [f for f in failures if f["check"] == check and f["variable"] == variable]
    assert len(mine) == 1, failures
    for phrase in phrases:
        assert phrase in mine[0]["message"], (phrase, mine[0]["message"])


def test_every_check_has_a_bad_case():
    checks = {"inputs", "downloads", "node_name", "windows_build", "container_runtime", "deployment_mode", "subnets",
              "network_plugin", "version_skew", "existing_node", "network_adapter", "node_ip"}
    assert checks == {b[1] for b in BAD}


WARN = [
    (dict(hostname="WIN-WORKER-LONGNAME1"), "node_name", "kubewin_node_name",
     ["longer than", "15 characters", "'WIN-WORKER-LONG'"]),
    (dict(runtime=dict(VALID["runtime"], version="1.6.28"), deployment_mode="services"), "container_runtime",
     "kubewin_container_runtime", ["containerd >= v1.7 is recommended"]),
    (dict(runtime=dict(VALID["runtime"], version=None)), "container_runtime", "kubewin_container_runtime",
     ["could not be read"]),
    (dict(kube_version="v1.25.16", server_version="v1.25.16"), "deployment_mode", "kubewin_deployment_mode",
     ["beta", "stable from 1.26"]),
    (dict(flannel_backend_type="host-gw", cluster_flannel=dict(found=True, backend_type="host-gw",
                                                               network="10.244.0.0/16")),
     "network_plugin", "flannel_backend_type", ["share one L2 network segment"]),
    (dict(kube_version="v1.31.5"), "version_skew", "kube_version", ["newer patch release"]),
    (dict(existing_node=dict(exists=True, ready=False, os="windows")), "existing_node", "kubewin_node_name",
     ["kubeadm join refuses only a Ready Node", "takes over the existing Node object"]),
    (dict(joined=True), "existing_node", "kubewin_node_name", ["kubelet.conf but the cluster has no Node",
                                                               "playbooks/reset.yml"]),
]


@pytest.mark.parametrize("changes, check, variable, phrases", WARN,
                         ids=["%s-%d" % (w[1], n) for n, w in enumerate(WARN)])
def test_warnings_do_not_fail(changes, check, variable, phrases):
    failures, warnings = run(**changes)
    assert failures == []
    mine = [w for w in warnings if w["check"] == check and w["variable"] == variable]
    assert len(mine) == 1, warnings
    for phrase in phrases:
        assert phrase in mine[0]["message"], (phrase, mine[0]["message"])


def test_all_failures_of_a_host_are_collected():
    failures, dummy = run(node_name="Bad_Name", windows_build="10.0.19045", flannel_vxlan_vni=1,
                          kube_version="v1.35.0", existing_node=dict(exists=True, ready=True, os="windows"))
    assert [f["variable"] for f in failures] == [
        "kubewin_node_name", "kubewin_supported_windows_builds", "kube_version", "flannel_vxlan_vni",
        "flannel_vxlan_vni", "kubewin_node_name"]
    text = preflight.failure_message("win1", failures)
    assert text.startswith("Preflight failed on win1:\n- ") and text.count("\n- ") == len(failures)
    assert all("\n" not in f["message"] for f in failures)


def test_kubespray_defaults_name_both_variables_and_the_cluster_fix():
    # kubespray's flannel defaults everywhere: VNI 1 and port 8472 on both sides.
    failures, dummy = run(flannel_vxlan_vni=1, flannel_vxlan_port=8472,
                          cluster_flannel=dict(found=True, backend_type="vxlan", network="10.244.0.0/16"))
    assert [f["variable"] for f in failures] == ["flannel_vxlan_vni", "flannel_vxlan_port"]


def test_docker_with_cri_dockerd_on_new_kubernetes_is_accepted_in_services_mode():
    failures, dummy = run(container_runtime="docker", deployment_mode="services",
                          runtime=dict(service_exists=True, service_status="Running", pipe_exists=True,
                                       cri_dockerd_service_exists=True))
    assert failures == []


def test_joined_host_with_its_own_ready_node_is_a_rerun():
    failures, warnings = run(existing_node=dict(exists=True, ready=True, os="windows"), joined=True)
    assert failures == [] and warnings == []


def test_dual_stack_cluster_values_compare_their_ipv4_part():
    failures, dummy = run(cluster_pod_subnet="10.244.0.0/16,fd00:10:244::/56",
                          cluster_service_subnet="10.96.0.0/12,fd00:10:96::/112")
    assert failures == []


def test_cluster_values_fill_unset_kubespray_variables():
    failures, dummy = run(kube_pods_subnet=None, kube_service_addresses=None)
    assert failures == []


@pytest.mark.parametrize("server, allowed", [(31, [28, 29, 30, 31]), (27, [25, 26, 27]), (28, [25, 26, 27, 28]),
                                             (24, [22, 23, 24])])
def test_allowed_kubelet_minors_follow_the_skew_policy(server, allowed):
    assert preflight.allowed_kubelet_minors(server) == allowed


def test_hns_vswitch_vnic_counts_as_its_physical_adapter():
    # After HNS bound Ethernet0 to a vSwitch, the address sits on "vEthernet (Ethernet0)"; HNS's own
    # vNICs (nat, cbr0_ep) are not candidates: a re-run on a one-NIC host needs no adapter name.
    adapters = [dict(name="Ethernet0", ipv4=[]), dict(name="vEthernet (Ethernet0)", ipv4=["192.168.10.21/24"]),
                dict(name="vEthernet (nat)", ipv4=["172.29.0.1/20"]),
                dict(name="vEthernet (cbr0_ep)", ipv4=["10.244.3.2/24"])]
    assert preflight.adapter_candidates(adapters) == {"Ethernet0": [ipaddress.ip_address("192.168.10.21")]}
    failures, dummy = run(adapters=adapters)
    assert failures == []
    failures, dummy = run(adapters=adapters, adapter_name="ethernet0")
    assert failures == []


@pytest.mark.parametrize("text, build", [("10.0.20348", 20348), ("10.0.20348.2113", 20348), ("26100", 26100),
                                         ("6.3.9600", None), ("", None)])
def test_parse_build(text, build):
    assert versions.windows_build(text) == build


def test_supported_builds_override_accepts_new_builds():
    failures, dummy = run(windows_build="10.0.26200.1", supported_builds=["10.0.26200", "20348"])
    assert failures == []


# --- the node's identity: one producer (issue 7 item 12) --------------------------------------------
TWO_ADAPTERS = [{"name": "Ethernet", "ipv4": ["192.168.1.10"]}, {"name": "Storage", "ipv4": ["10.50.0.10"]}]


def identity(adapters, adapter_name):
    inputs = dict(VALID, adapters=adapters, adapter_name=adapter_name)
    failures, dummy, ident = preflight.run_checks(inputs)
    assert failures == [], failures
    assert ident.pop("sandbox_image") is None and ident.pop("images_to_pull") == []
    return ident


def test_identity_is_the_named_adapters_address():
    assert identity(TWO_ADAPTERS, "storage") == {"name": "win-worker-1", "ip": "10.50.0.10", "adapter": "Storage",
                                                 "subnet": None, "firewall_remoteip": "any", "hostprocess_images": {}}


def test_identity_survives_hns_moving_the_address_to_the_host_vnic():
    """After flannel's HNS network binds 'Storage', the host vNIC 'vEthernet (Storage)' holds its address
    and 'Storage' has none: a re-run must find the same node IP (the role's own lookup did not)."""
    moved = [{"name": "Ethernet", "ipv4": ["192.168.1.10"]}, {"name": "Storage", "ipv4": []},
             {"name": "vEthernet (Storage)", "ipv4": ["10.50.0.10"]},
             {"name": "vEthernet (nat)", "ipv4": ["172.20.0.1"]}]
    assert identity(moved, "Storage") == {"name": "win-worker-1", "ip": "10.50.0.10", "adapter": "Storage",
                                          "subnet": None, "firewall_remoteip": "any", "hostprocess_images": {}}


def test_identity_of_a_single_adapter_host_needs_no_setting():
    assert identity([{"name": "Ethernet 2", "ipv4": ["192.168.1.10", "169.254.3.3"]}], None) == {
        "name": "win-worker-1", "ip": "192.168.1.10", "adapter": "Ethernet 2", "subnet": None,
        "firewall_remoteip": "any", "hostprocess_images": {}}


# --- kubespray: direct routing and conflicts with the cluster ------------------------------------------------

def test_direct_routing_in_the_inventory_is_refused_with_the_fix():
    failures, dummy = run(flannel_vxlan_direct_routing=True)
    assert [f["variable"] for f in failures] == ["flannel_vxlan_direct_routing"]
    assert "no direct routing" in failures[0]["message"]
    assert "flannel_vxlan_direct_routing: false" in failures[0]["message"]


def test_direct_routing_in_the_cluster_flannel_is_refused():
    flannel = dict(VALID["cluster_flannel"], direct_routing=True)
    failures, dummy = run(cluster_flannel=flannel)
    assert [f["variable"] for f in failures] == ["flannel_vxlan_direct_routing"]


def test_direct_routing_does_not_matter_for_host_gw():
    flannel = dict(VALID["cluster_flannel"], backend_type="host-gw", vni=None, port=None)
    failures, dummy = run(flannel_backend_type="host-gw", cluster_flannel=flannel, flannel_vxlan_direct_routing=True)
    assert failures == []


def test_each_settings_conflict_stops_preflight_once():
    conflict = {"host": "cp1", "variable": "kube_pods_subnet", "value": "10.233.64.0/18",
                "message": "kube_pods_subnet 10.233.64.0/18 (inventory, hostvars of cp1) differs from podSubnet "
                           "10.244.0.0/16 (kubeadm-config ConfigMap)"}
    same_from_windows = dict(conflict, host="win-1", message="the same value seen by win-1")
    failures, dummy = run(settings_conflicts=[conflict, same_from_windows])
    assert [(f["check"], f["variable"]) for f in failures] == [("cluster_settings", "kube_pods_subnet")]
    assert failures[0]["message"] == conflict["message"]


def test_a_different_value_on_a_windows_host_is_its_own_failure():
    first = {"host": "cp1", "variable": "dns_domain", "value": "a.local", "message": "one"}
    second = {"host": "win-1", "variable": "dns_domain", "value": "b.local", "message": "two"}
    failures, dummy = run(settings_conflicts=[first, second])
    assert [f["message"] for f in failures] == ["one", "two"]


def test_no_pod_subnet_anywhere_says_where_the_control_plane_host_reads_it():
    failures, dummy = run(kube_pods_subnet=None, cluster_pod_subnet=None, cluster_flannel=None)
    assert [f["variable"] for f in failures] == ["kube_pods_subnet"]
    assert "where the first kube_control_plane host sees it" in failures[0]["message"]


# --- the downloads the node role installs: checksums decided once ------------------------------------------------


def test_fetch_once_asks_for_each_url_once():
    calls = []
    fetch = _downloads.fetch_once(lambda url: calls.append(url) or url.upper())
    assert [fetch("a"), fetch("b"), fetch("a")] == ["A", "B", "A"] and calls == ["a", "b"]


def test_fetch_once_does_not_keep_a_failure():
    calls = []

    def flaky(url):
        calls.append(url)
        raise OSError("timed out")

    fetch = _downloads.fetch_once(flaky)
    for _attempt in range(2):
        with pytest.raises(OSError):
            fetch("a")
    assert calls == ["a", "a"]


def _unreachable(url):
    raise OSError("no such host")


def test_resolved_downloads_name_the_pin_variable_when_a_checksum_is_unusable():
    downloads, failures = preflight.resolved_downloads(
        [{"url": "\\\\files\\k\\kubelet.exe", "dest": "C:\\k\\kubelet.exe"}],
        _unreachable)
    assert downloads is None and failures[0]["variable"] == "kubewin_checksums"
    assert "pin the checksum" in failures[0]["message"]


@pytest.mark.parametrize("path, ok", [
    ("C:\\etc\\kubernetes\\ssl\\ca.crt", True),
    ("C:\\etc\\kubernetes\\pki\\kubelet-ca.pem", False),  # kubeadm: caCertPath must end in .crt
    ("pki\\ca.crt", False),  # relative: kubeadm's validation refuses it
])
def test_a_cluster_ca_path_kubeadm_join_cannot_write_fails_before_any_change(path, ok):
    settings = {"ca_cert_path": path, "origins": {"ca_cert_path": "kubelet-config ConfigMap clientCAFile"}}
    failures, dummy = run(settings=settings)
    mine = [f for f in failures if f["check"] == "ca_cert_path"]
    if ok:
        assert mine == []
    else:
        assert len(mine) == 1 and path in mine[0]["message"] and "kubelet-config" in mine[0]["message"]
        assert "ending in .crt" in mine[0]["message"] and "<certificatesDir>/ca.crt" in mine[0]["message"]
