"""k8s_join_info end to end through main() against a fake API."""

import json

import pytest
from k8s_fakes import FakeCluster, api_error, make_runner

from ansible_collections.kubewin.nodes.plugins.modules import k8s_join_info as mod

CLUSTER_CONFIGURATION = """\
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.31.4
controlPlaneEndpoint: lb.example.com:6443
clusterName: prod
certificatesDir: /etc/kubernetes/ssl
networking:
  dnsDomain: cluster.local
  podSubnet: 10.233.64.0/18
  serviceSubnet: 10.233.0.0/18
"""


@pytest.fixture
def run(monkeypatch, capsys):
    return make_runner(mod, monkeypatch, capsys)


def _flannel(cluster, namespace, backend):
    net_conf = {"Network": "10.244.0.0/16"}
    if backend is not None:
        net_conf["Backend"] = backend
    cluster.configmaps[(namespace, "kube-flannel-cfg")] = {"data": {"net-conf.json": json.dumps(net_conf)}}


@pytest.fixture
def cluster():
    c = FakeCluster()
    c.configmaps[("kube-system", "kubeadm-config")] = {"data": {"ClusterConfiguration": CLUSTER_CONFIGURATION}}
    # kubespray's: kubeadm set clientCAFile from its certificatesDir (kube_cert_dir) before uploading.
    c.configmaps[("kube-system", "kubelet-config")] = {"data": {"kubelet": (
        "kind: KubeletConfiguration\nauthentication:\n  x509:\n    clientCAFile: /etc/kubernetes/ssl/ca.crt\n")}}
    c.add_node("cp-1")
    c.add_node("win-1", ready=False, labels={"kubernetes.io/os": "windows",
                                             "node.kubernetes.io/windows-build": "10.0.20348"},
               operatingSystem="windows", unschedulable=True)
    return c


def test_kubespray_cluster_with_linux_flannel_defaults(run, cluster):
    _flannel(cluster, "kube-system", {"Type": "vxlan"})
    result = run({}, cluster)
    assert result["_rc"] == 0 and result["changed"] is False
    assert result["server_version"] == {"git_version": "v1.31.4", "version": "1.31.4", "major": 1, "minor": 31,
                                        "patch": 4, "platform": "linux/amd64"}
    flannel = result["flannel"]
    assert flannel["found"] is True and (flannel["namespace"], flannel["name"]) == ("kube-system", "kube-flannel-cfg")
    assert (flannel["backend_type"], flannel["vni"], flannel["port"]) == ("vxlan", 1, 8472)
    assert flannel["defaults_applied"] == ["vni", "port"]
    assert flannel["windows_compatible"] is False
    assert any("4096" in p and "flannel_vxlan_vni" in p for p in flannel["windows_problems"])
    assert any("4789" in p and "flannel_vxlan_port" in p for p in flannel["windows_problems"])
    assert result["kubeadm_config"] == {
        "found": True, "kubernetes_version": "v1.31.4", "control_plane_endpoint": "lb.example.com:6443",
        "pod_subnet": "10.233.64.0/18", "service_subnet": "10.233.0.0/18", "dns_domain": "cluster.local",
        "cluster_name": "prod", "certificates_dir": "/etc/kubernetes/ssl"}
    assert result["kubelet_config_present"] is True and result["kubelet_config_name"] == "kubelet-config"
    assert result["kubelet_client_ca_file"] == "/etc/kubernetes/ssl/ca.crt"
    assert result["kubelet_security"] == {"authentication": {}}  # the CA's path is no security setting
    assert result["nodes"]["cp-1"]["ready"] is True and result["nodes"]["cp-1"]["os"] == "linux"
    assert result["nodes"]["win-1"] == {
        "ready": False, "os": "windows", "kubelet_version": "v1.31.4", "windows_build": "10.0.20348",
        "unschedulable": True, "internal_ip": "192.0.2.21", "architecture": "amd64", "pod_cidr": None,
        "credentials_in_place": False}
    assert cluster.writes() == []


def test_flannel_manifest_location_wins_and_windows_compatible(run, cluster):
    _flannel(cluster, "kube-flannel", {"Type": "vxlan", "VNI": 4096, "Port": 4789})
    _flannel(cluster, "kube-system", {"Type": "vxlan"})
    flannel = run({}, cluster)["flannel"]
    assert flannel["namespace"] == "kube-flannel"
    assert (flannel["vni"], flannel["port"], flannel["defaults_applied"]) == (4096, 4789, [])
    assert flannel["windows_compatible"] is True and flannel["windows_problems"] == []


def test_no_flannel_no_kubeadm(run):
    cluster = FakeCluster()
    result = run({}, cluster)
    assert result["flannel"]["found"] is False and result["flannel"]["windows_compatible"] is None
    assert result["kubeadm_config"]["found"] is False and result["kubelet_config_present"] is False
    assert result["nodes"] == {}


def test_old_kubelet_config_name(run):
    cluster = FakeCluster(version="v1.23.17")
    cluster.configmaps[("kube-system", "kubelet-config-1.23")] = {"data": {"kubelet": "kind: KubeletConfiguration\n"}}
    result = run({}, cluster)
    assert result["kubelet_config_name"] == "kubelet-config-1.23" and result["kubelet_config_present"] is True


def test_check_mode_is_the_same(run, cluster):
    _flannel(cluster, "kube-flannel", {"Type": "host-gw"})
    result = run({}, cluster, check=True)
    assert result["changed"] is False and result["flannel"]["backend_type"] == "host-gw"
    assert result["flannel"]["windows_compatible"] is True and cluster.writes() == []


def test_broken_net_conf_fails_clearly(run, cluster):
    cluster.configmaps[("kube-flannel", "kube-flannel-cfg")] = {"data": {"net-conf.json": "{not json"}}
    result = run({}, cluster)
    assert result["failed"] is True and "kube-flannel/kube-flannel-cfg" in result["msg"]
    assert "not valid JSON" in result["msg"] and "Traceback" not in result["_raw"]


def test_forbidden_listing_nodes(run, cluster):
    cluster.errors["list_node"] = api_error(403, "Forbidden", 'nodes is forbidden: User "x" cannot list')
    result = run({}, cluster)
    assert result["failed"] is True and "Forbidden (HTTP 403)" in result["msg"]
    assert "list nodes (cluster-wide)" in result["msg"] and "admin.conf" in result["msg"]


def test_bad_flannel_configmaps_entry(run, cluster):
    result = run({"flannel_configmaps": ["kube-flannel-cfg"]}, cluster)
    assert result["failed"] is True and "namespace/name" in result["msg"]


KUBESPRAY_KUBELET_CONFIGURATION = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
clusterDNS:
- 169.254.25.10
clusterDomain: cluster.local
"""


def test_kubespray_nodelocaldns_and_coredns_service_are_reported(run, cluster):
    # kubespray: kubelet-config clusterDNS is nodelocaldns' 169.254.25.10; the DNS Service is kube-system/coredns.
    cluster.configmaps[("kube-system", "kubelet-config")] = {"data": {"kubelet": KUBESPRAY_KUBELET_CONFIGURATION}}
    cluster.services[("kube-system", "coredns")] = {"spec": {"clusterIP": "10.233.0.3"}}
    result = run({}, cluster)
    assert result["_rc"] == 0
    assert result["dns"] == {"kubelet_cluster_dns": ["169.254.25.10"], "kubelet_cluster_domain": "cluster.local",
                             "service": {"namespace": "kube-system", "name": "coredns", "cluster_ip": "10.233.0.3"}}


def test_kubeadm_kube_dns_service_wins_over_coredns(run, cluster):
    cluster.services[("kube-system", "kube-dns")] = {"spec": {"clusterIP": "10.96.0.10"}}
    cluster.services[("kube-system", "coredns")] = {"spec": {"clusterIP": "10.96.0.3"}}
    result = run({}, cluster)
    assert result["dns"]["service"]["name"] == "kube-dns"
    assert result["dns"]["service"]["cluster_ip"] == "10.96.0.10"
    assert result["dns"]["kubelet_cluster_dns"] == []


def test_no_dns_service_is_none(run, cluster):
    result = run({}, cluster)
    assert result["_rc"] == 0 and result["dns"]["service"] is None


CALICO_CNI = json.dumps({"name": "k8s-pod-network", "cniVersion": "0.3.1", "plugins": [
    {"datastore_type": "kubernetes", "nodename": "__KUBERNETES_NODE_NAME__", "type": "calico",
     "ipam": {"type": "calico-ipam", "assign_ipv4": "true"}}, {"type": "portmap"}]})


def _kubespray_calico(cluster, strict_affinity=False):
    """kubespray v2.31.0's default Calico as its templates and tasks leave it (roles/network_plugin/calico:
    calico-node.yml.j2 env, calico-config.yml.j2, install.yml's FelixConfiguration and IPPool, calico-ipamconfig.yml.j2)
    plus the ClusterInformation calico-node writes."""
    ds = cluster.add_daemonset("kube-system", "calico-node")
    ds["spec"]["template"]["spec"]["containers"] = [
        {"name": "calico-node", "image": "quay.io/calico/node:v3.31.5",
         "env": [{"name": "DATASTORE_TYPE", "value": "kubernetes"}, {"name": "FELIX_VXLANVNI", "value": "4096"},
                 {"name": "FELIX_VXLANPORT", "value": "4789"},
                 {"name": "CALICO_NETWORKING_BACKEND", "valueFrom": {"configMapKeyRef": {
                     "name": "calico-config", "key": "calico_backend"}}}]}]
    cluster.configmaps[("kube-system", "calico-config")] = {"data": {
        "cluster_type": "kubespray", "calico_backend": "vxlan", "cni_network_config": CALICO_CNI}}
    cluster.custom_objects[("clusterinformations", "default")] = {"spec": {
        "calicoVersion": "v3.31.5", "clusterType": "k8s,bgp,kubespray,kubeadm,kdd", "datastoreReady": True}}
    cluster.custom_objects[("felixconfigurations", "default")] = {"spec": {
        "ipipEnabled": False, "vxlanEnabled": True, "bpfEnabled": False, "wireguardEnabled": False}}
    cluster.custom_objects[("ippools", "default-pool")] = {"metadata": {"name": "default-pool"}, "spec": {
        "blockSize": 26, "cidr": "10.233.64.0/18", "ipipMode": "Never", "vxlanMode": "Always", "natOutgoing": True}}
    cluster.custom_objects[("ipamconfigs", "default")] = {"spec": {
        "autoAllocateBlocks": True, "strictAffinity": strict_affinity, "maxBlocksPerHost": 0}}
    return ds


def test_kubesprays_calico_is_found_with_its_version_and_settings(run, cluster):
    # kubespray's default network: calico-node in kube-system, from its own manifests (no Tigera operator)
    _kubespray_calico(cluster)
    result = run({}, cluster)
    assert result["calico"] == {
        "found": True, "namespace": "kube-system", "name": "calico-node",
        "version": "v3.31.5", "datastore": "kubernetes", "backend": "vxlan", "ipam_type": "calico-ipam",
        "vxlan_vni": 4096, "vxlan_port": 4789,
        "origins": {"version": "ClusterInformation default (calicoVersion)",
                    "datastore": "env DATASTORE_TYPE of DaemonSet kube-system/calico-node",
                    "vxlan_vni": "env FELIX_VXLANVNI of DaemonSet kube-system/calico-node",
                    "vxlan_port": "env FELIX_VXLANPORT of DaemonSet kube-system/calico-node"},
        "bpf_enabled": False, "wireguard_enabled": False,
        "ippools": [{"name": "default-pool", "cidr": "10.233.64.0/18", "ip_version": 4, "ipip_mode": "Never",
                     "vxlan_mode": "Always", "block_size": 26, "disabled": False, "node_selector": None}],
        "ipamconfig_found": True, "strict_affinity": False, "auto_allocate_blocks": True}
    assert result["flannel"]["found"] is False
    assert cluster.writes() == []


def test_calico_without_its_objects_reads_calicos_defaults(run, cluster):
    # etcd datastore (kubespray's calico_datastore: etcd): no DATASTORE_TYPE, ETCD_ENDPOINTS from calico-config,
    # no Calico CRDs in the API; VNI/port from FelixConfiguration when the env does not set them
    ds = cluster.add_daemonset("kube-system", "calico-node")
    ds["spec"]["template"]["spec"]["containers"] = [
        {"name": "calico-node", "image": "quay.io/calico/node:v3.30.2",
         "env": [{"name": "ETCD_ENDPOINTS",
                  "valueFrom": {"configMapKeyRef": {"name": "calico-config", "key": "etcd_endpoints"}}}]}]
    calico = run({}, cluster)["calico"]
    assert (calico["version"], calico["origins"]["version"]) == (
        "v3.30.2", "calico/node image tag of DaemonSet kube-system/calico-node")
    assert calico["datastore"] == "etcdv3" and calico["ipam_type"] is None
    assert (calico["vxlan_vni"], calico["vxlan_port"]) == (4096, 4789)
    assert calico["origins"]["vxlan_vni"] == "Felix's default"
    assert calico["ippools"] == [] and calico["strict_affinity"] is False and calico["auto_allocate_blocks"] is True
    cluster.custom_objects[("felixconfigurations", "default")] = {"spec": {"vxlanVNI": 1, "vxlanPort": 8472}}
    calico = run({}, cluster)["calico"]
    assert (calico["vxlan_vni"], calico["vxlan_port"]) == (1, 8472)
    assert calico["origins"]["vxlan_port"] == "FelixConfiguration default (vxlanPort)"


def test_the_operators_calico_and_a_digest_only_image(run, cluster):
    ds = cluster.add_daemonset("calico-system", "calico-node")
    ds["spec"]["template"]["spec"]["containers"] = [
        {"name": "calico-node", "image": "registry.corp/calico/node@sha256:" + "a" * 64}]
    calico = run({}, cluster)["calico"]
    assert (calico["found"], calico["namespace"], calico["version"]) == (True, "calico-system", None)


def test_no_calico(run, cluster):
    # no calico-node: no Calico object is read (a flannel cluster has no Calico CRDs)
    assert run({}, cluster)["calico"] == {"found": False, "namespace": None, "name": None, "version": None}
    assert not [c for c in cluster.calls if "custom_object" in c[0]]


def test_pin_daemonsets_reports_what_the_pin_would_do_and_changes_nothing(run, cluster):
    """issue 22: discover reads what prepare's pin would change, so a run with nothing to pin skips it."""
    cluster.add_daemonset("kube-system", "kube-proxy", node_selector={"kubernetes.io/os": "linux"})
    cluster.add_daemonset("kube-flannel", "kube-flannel-ds")
    result = run({"pin_daemonsets": ["kube-system/kube-proxy", "kube-flannel/kube-flannel-ds",
                                     "kube-system/kube-flannel"]}, cluster)
    assert result["_rc"] == 0, result
    assert result["daemonset_pins"] == {"to_pin": ["kube-flannel/kube-flannel-ds"], "conflicts": [],
                                        "missing": ["kube-system/kube-flannel"], "landing_on_windows": []}
    assert cluster.writes() == []
    assert "daemonset_pins" not in run({}, cluster)
    assert run({"pin_daemonsets": ["no-slash"]}, cluster)["_rc"] == 1


def _ns(name, labels=None, annotations=None):
    return {"metadata": {"name": name, "labels": dict(labels or {}), "annotations": dict(annotations or {})}}


def test_pod_security_gives_the_namespaces_hostprocess_changes_and_reset_puts_back_changing_nothing(run, cluster):
    enforce, prior = "pod-security.kubernetes.io/enforce", "kubewin.nodes/pod-security-enforce-before"
    _flannel(cluster, "kube-flannel", {"Type": "vxlan", "VNI": 4096, "Port": 4789})
    cluster.namespaces = {"kube-flannel": _ns("kube-flannel", {enforce: "baseline"}),
                          "kube-system": _ns("kube-system", {enforce: "privileged"}, {prior: "restricted"}),
                          "default": _ns("default")}
    assert "pod_security" not in run({}, cluster) and ("list_namespace", ()) not in cluster.calls
    result = run({"pod_security": True}, cluster)
    assert result["pod_security"] == {
        "enable": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": "kube-flannel", "labels": {enforce: "privileged"}, "annotations": {prior: "baseline"}}}],
        "revert": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": "kube-system", "labels": {enforce: "restricted"}, "annotations": {prior: None}}}]}
    assert cluster.writes() == []
    # no flannel ConfigMap: flannel's namespace is kube-flannel (the role's default), created privileged if missing
    cluster.configmaps.pop(("kube-flannel", "kube-flannel-cfg"))
    cluster.namespaces = {}
    assert [(d["metadata"]["name"], d["metadata"]["annotations"]) for d in run({"pod_security": True}, cluster)[
        "pod_security"]["enable"]] == [("kube-flannel", {prior: ""}), ("kube-system", {prior: ""})]


def test_the_bindings_that_approve_a_nodes_own_renewal_are_read_in_one_list(run, cluster):
    result = run({}, cluster)
    assert result["node_renewal_bindings"] == ["kubeadm:node-autoapprove-certificate-rotation"]
    assert [c[0] for c in cluster.calls].count("list_cluster_role_binding") == 1
    cluster.clusterrolebindings.clear()
    assert run({}, cluster)["node_renewal_bindings"] == []
    # a kubeconfig that may not list them: unknown, not a failed read; any other error fails as every read does
    cluster.errors["list_cluster_role_binding"] = api_error(403, "Forbidden")
    result = run({}, cluster)
    assert result["_rc"] == 0 and result["node_renewal_bindings"] is None
    cluster.errors["list_cluster_role_binding"] = api_error(500, "Internal Server Error")
    assert run({}, cluster)["_rc"] != 0


def test_each_windows_nodes_credentials_are_judged_from_three_lists(run, cluster):
    """Whether k8s_node_credentials would change nothing for a Windows node (the network role then skips it on a
    re-run): ClusterRoleBindings (the renewal check's list), managed ClusterRoles and ServiceAccounts, one list each."""
    from ansible_collections.kubewin.nodes.plugins.module_utils import _node_credentials as nc
    cluster.nodes["win-1"]["spec"]["podCIDR"] = "10.244.5.0/24"
    cluster.roles, cluster.accounts = {}, {}
    for obj in nc.desired_objects("win-1", dict(nc.DEFAULT_NAMESPACES)).values():
        cluster.clusterrolebindings[obj["binding"]["metadata"]["name"]] = obj["binding"]
        if obj["role"]:
            cluster.roles[obj["role"]["metadata"]["name"]] = obj["role"]
    result = run({}, cluster)
    assert result["nodes"]["win-1"]["credentials_in_place"] is True
    assert result["nodes"]["win-1"]["pod_cidr"] == "10.244.5.0/24"
    assert result["nodes"]["cp-1"]["credentials_in_place"] is None  # not a Windows node
    calls = [c[0] for c in cluster.calls]
    assert [calls.count(m) for m in ("list_cluster_role_binding", "list_cluster_role",
                                     "list_service_account_for_all_namespaces")] == [1, 1, 1]
    # an older release's ServiceAccount still to retire: the module has work to do
    cluster.accounts[("kube-system", "kubewin-kube-proxy-win-1")] = {"metadata": {
        "name": "kubewin-kube-proxy-win-1", "namespace": "kube-system", "labels": {nc.MANAGED_LABEL: "true"}}}
    assert run({}, cluster)["nodes"]["win-1"]["credentials_in_place"] is False
    # a kubeconfig that may not list ClusterRoles: unknown (the module runs), not a failed read
    cluster.errors["list_cluster_role"] = api_error(403, "Forbidden")
    result = run({}, cluster)
    assert result["_rc"] == 0 and result["nodes"]["win-1"]["credentials_in_place"] is None
