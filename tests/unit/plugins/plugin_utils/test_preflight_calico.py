"""Preflight on a Calico cluster (issue 24, point 1): every setting Calico's Windows nodes cannot run is named with
kubespray's variable and the fix, all in one run, and the run is still refused because installation is not there
yet, listing what is fine."""

import copy

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import _calico as calico_facts
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _preflight as preflight
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.calico import check_calico

# k8s_join_info's calico result for kubespray v2.31.0's defaults (its unit test reads the same from the API)
KUBESPRAY = dict(
    found=True, namespace="kube-system", name="calico-node", version="v3.31.5", datastore="kubernetes",
    backend="vxlan", ipam_type="calico-ipam", vxlan_vni=4096, vxlan_port=4789,
    origins=dict(version="ClusterInformation default (calicoVersion)",
                 datastore="env DATASTORE_TYPE of DaemonSet kube-system/calico-node",
                 vxlan_vni="env FELIX_VXLANVNI of DaemonSet kube-system/calico-node",
                 vxlan_port="env FELIX_VXLANPORT of DaemonSet kube-system/calico-node"),
    bpf_enabled=False, wireguard_enabled=False,
    ippools=[dict(name="default-pool", cidr="10.233.64.0/18", ip_version=4, ipip_mode="Never", vxlan_mode="Always",
                  block_size=26, disabled=False, node_selector=None)],
    ipamconfig_found=True, strict_affinity=False, auto_allocate_blocks=True)
FIXED = dict(KUBESPRAY, strict_affinity=True)
WS2022 = "10.0.20348.2113"
RERUN = "re-run kubespray's network plugin role (cluster.yml --tags network)"


def check(calico, build=WS2022):
    failures, warnings = check_calico(calico, build)
    assert warnings == []
    return failures


def verdict(failures):
    last = failures[-1]
    assert last["variable"] == "kube_network_plugin" and last["check"] == "calico"
    assert "cannot install Calico's Windows components yet" in last["message"]
    assert "changed nothing" in last["message"]
    return last["message"]


def test_kubesprays_default_is_refused_for_strict_affinity_naming_its_variable():
    failures = check(KUBESPRAY)
    assert [f["variable"] for f in failures] == ["calico_ipam_strictaffinity", "kube_network_plugin"]
    message = failures[0]["message"]
    for phrase in ("strictAffinity false (kubespray's default)", "set calico_ipam_strictaffinity: true",
                   "group_vars/k8s_cluster/k8s-net-calico.yml", RERUN, "Do not patch the IPAMConfig by hand",
                   "re-applies it"):
        assert phrase in message
    last = verdict(failures)
    for phrase in ("Calico v3.31.5 found", "datastore kubernetes (kdd)", "backend vxlan", "IPAM calico-ipam",
                   "VXLAN VNI 4096", "VXLAN port 4789", "no eBPF, no WireGuard",
                   "IPv4 pool default-pool (10.233.64.0/18, blockSize 26) with vxlanMode Always, ipipMode Never",
                   "Windows build 20348.2113 (Windows Server 2022",
                   "Needs fixing first (each named above): calico_ipam_strictaffinity"):
        assert phrase in last
    assert "strictAffinity true" not in last


def test_a_supported_config_is_still_refused_as_not_installable_yet_listing_what_is_fine():
    failures = check(FIXED)
    assert len(failures) == 1
    last = verdict(failures)
    assert "IPAM strictAffinity true" in last
    assert "Nothing else this collection checks needs fixing: what is missing is the installation" in last
    assert "Calico 3.31 documents it only through the Tigera operator, which kubespray does not use" in last


def _pool(**changes):
    return [dict(FIXED["ippools"][0], **changes)]


# (changes to the fixed cluster, windows build, the one variable refused, phrases of its message)
BAD = [
    (dict(datastore="etcdv3", origins=dict(datastore="ETCD_ENDPOINTS of DaemonSet kube-system/calico-node")), WS2022,
     "calico_datastore", ["datastore is etcdv3", "calico_datastore: kdd", "no migration", "were not read"]),
    (dict(backend="bird"), WS2022, "calico_network_backend",
     ["backend is bird", "calico_network_backend: vxlan", "IP-in-IP to VXLAN", RERUN]),
    (dict(ipam_type="host-local"), WS2022, "calico_ipam_host_local",
     ["host-local IPAM", "need calico-ipam", "set calico_ipam_host_local: false", RERUN]),
    (dict(vxlan_vni=4095, origins=dict(vxlan_vni="env FELIX_VXLANVNI of DaemonSet kube-system/calico-node")), WS2022,
     "calico_vxlan_vni", ["VNI is 4095 (env FELIX_VXLANVNI", "below 4096", "set calico_vxlan_vni: 4096", RERUN]),
    (dict(vxlan_port=8472, origins=dict(vxlan_port="FelixConfiguration default (vxlanPort)")), WS2022,
     "calico_vxlan_port",
     ["port is 8472 (FelixConfiguration default (vxlanPort))", "UDP port 4789 only", "set calico_vxlan_port: 4789"]),
    (dict(bpf_enabled=True), WS2022, "calico_bpf_enabled", ["eBPF", "Linux-only", "set calico_bpf_enabled: false"]),
    (dict(wireguard_enabled=True), WS2022, "calico_wireguard_enabled",
     ["WireGuard", "set calico_wireguard_enabled: false"]),
    (dict(ippools=_pool(ipip_mode="Always", vxlan_mode="Never")), WS2022, "calico_ipip_mode",
     ["IPPool default-pool (10.233.64.0/18) has ipipMode Always", "no IP-in-IP", "calico_ipip_mode: Never"]),
    (dict(ippools=_pool(ipip_mode="CrossSubnet", vxlan_mode="Never")), WS2022, "calico_ipip_mode",
     ["ipipMode CrossSubnet"]),
    (dict(ippools=_pool(vxlan_mode="CrossSubnet")), WS2022, "calico_vxlan_mode",
     ["vxlanMode CrossSubnet", "no cross-subnet VXLAN on Windows", "set calico_vxlan_mode: Always"]),
    (dict(ippools=_pool(vxlan_mode="Never")), WS2022, "calico_vxlan_mode",
     ["vxlanMode Never", "BGP routing", "set calico_vxlan_mode: Always"]),
    (dict(ippools=_pool(block_size=30)), WS2022, "calico_pool_blocksize", ["blockSize 30", "none for pods"]),
    (dict(ippools=[dict(FIXED["ippools"][0], name="default-pool-ipv6", cidr="fd85:ee78:d8a6:8607::1:0000/112",
                        ip_version=6, block_size=122)]), WS2022, "calico_pool_cidr",
     ["no enabled IPv4 IP pool (default-pool-ipv6 fd85", "IPv4 only", "ipv4_stack: true"]),
    (dict(ippools=_pool(disabled=True)), WS2022, "calico_pool_cidr", ["no enabled IPv4 IP pool (no enabled pool)"]),
    (dict(strict_affinity=False, ipamconfig_found=False), WS2022, "calico_ipam_strictaffinity",
     ["no IPAMConfig default, Calico's default", "set calico_ipam_strictaffinity: true"]),
    (dict(auto_allocate_blocks=False), WS2022, "calico_ipam_autoallocateblocks",
     ["autoAllocateBlocks false", "set calico_ipam_autoallocateblocks: true"]),
    (dict(), "10.0.26100.1742", None,
     ["Windows build 26100, which Calico v3.31.5 does not support", "Windows Server 2019 (17763), Windows Server "
                                                                    "2022 (20348)"]),
    (dict(), "10.0.20348.100", None,
     ["Windows build 20348.100, below the 20348.169 Calico v3.31.5 needs on Windows Server 2022",
      "install the latest cumulative update"]),
    (dict(), "10.0.17763.1431", None, ["Windows build 17763.1431, below the 17763.1432"]),
    (dict(version="v3.29.3"), WS2022, "calico_version", ["Calico v3.29.3", "not known here (known: Calico 3.31)"]),
    (dict(version=None), WS2022, "calico_version", ["of unknown version"]),
]


@pytest.mark.parametrize("changes, build, variable, phrases", BAD)
def test_each_setting_windows_cannot_run_is_refused_with_its_fix(changes, build, variable, phrases):
    calico = dict(copy.deepcopy(FIXED), **changes)
    failures = check(calico, build)
    assert [f["variable"] for f in failures] == [variable, "kube_network_plugin"], failures
    for phrase in phrases:
        assert phrase in failures[0]["message"], (phrase, failures[0]["message"])
    last = verdict(failures)
    assert "Needs fixing first (each named above): %s" % (variable or "this host's Windows build") in last


def test_every_refusal_is_reported_in_one_run():
    calico = dict(copy.deepcopy(KUBESPRAY), backend="bird", vxlan_vni=1, vxlan_port=8472, bpf_enabled=True,
                  wireguard_enabled=True, ipam_type="host-local", ippools=_pool(ipip_mode="Always"))
    variables = [f["variable"] for f in check(calico, "10.0.26100")]
    assert variables == ["calico_network_backend", "calico_ipam_host_local", "calico_vxlan_vni", "calico_vxlan_port",
                         "calico_bpf_enabled", "calico_wireguard_enabled", "calico_ipip_mode",
                         "calico_ipam_strictaffinity", None, "kube_network_plugin"]


def test_run_checks_takes_the_clusters_calico_and_names_the_host():
    failures, warnings, dummy = preflight.run_checks(dict(
        node_name="win1", cluster_pod_subnet="10.233.64.0/18", cluster_service_subnet="10.233.0.0/18",
        server_version="v1.37.2", kube_network_plugin="calico", windows_build=WS2022, cluster_calico=KUBESPRAY,
        network_plugin_origin="DaemonSet kube-system/calico-node (Calico v3.31.5)"))
    assert [f["variable"] for f in failures] == ["calico_ipam_strictaffinity", "kube_network_plugin"]
    message = preflight.failure_message("win-1", failures)
    assert message.startswith("Preflight failed on win-1:\n- Calico's IPAMConfig default has strictAffinity false")


def test_a_calico_setting_without_the_clusters_calico_keeps_the_old_refusal():
    failures, dummy, dummy2 = preflight.run_checks(dict(
        node_name="win1", cluster_pod_subnet="10.233.64.0/18", cluster_service_subnet="10.233.0.0/18",
        server_version="v1.37.2", kube_network_plugin="calico"))
    assert [f["check"] for f in failures] == ["network_plugin"] and "flannel only" in failures[0]["message"]


def test_pool_facts_read_calicos_defaults():
    pool = calico_facts.pool_facts({"metadata": {"name": "p"}, "spec": {"cidr": "10.0.0.0/16"}})
    assert pool == {"name": "p", "cidr": "10.0.0.0/16", "ip_version": 4, "ipip_mode": "Never",
                    "vxlan_mode": "Never", "block_size": 26, "disabled": False, "node_selector": None}
    assert calico_facts.pool_facts({"spec": {"cidr": "fd00::/48"}})["block_size"] == 122


def test_host_local_ipam_is_read_from_kubesprays_cni_config():
    cni = '{"name": "k8s-pod-network", "plugins": [{"type": "calico", "ipam": {"type": "host-local", ' \
          '"subnet": "usePodCidr"}}, {"type": "portmap"}]}'
    node = {"name": "calico-node", "image": "quay.io/calico/node:v3.31.5",
            "env": [{"name": "DATASTORE_TYPE", "value": "kubernetes"}]}
    ds = {"spec": {"template": {"spec": {"containers": [node]}}}}
    configmap = {"data": {"cni_network_config": cni}}
    result = calico_facts.facts(ds, "kube-system/calico-node", configmap=configmap)
    assert result["ipam_type"] == "host-local" and result["datastore"] == "kubernetes"


def test_the_lowest_update_calico_lists_is_fine_and_a_missing_revision_is_a_warning():
    failures = check(FIXED, "10.0.17763.1432")
    assert [f["variable"] for f in failures] == ["kube_network_plugin"]
    assert "Windows build 17763.1432 (Windows Server 2019" in verdict(failures)
    failures, warnings = check_calico(FIXED, "10.0.20348")
    assert [f["variable"] for f in failures] == ["kube_network_plugin"]
    assert len(warnings) == 1 and "build 20348.169 or later) was not checked" in warnings[0]["message"]
