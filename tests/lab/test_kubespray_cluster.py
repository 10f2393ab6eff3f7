"""A kubespray cluster as kubespray leaves it, plus one Windows group: kubespray's variables only in
group_vars/k8s_cluster (which applies to the control-plane host, never to the Windows hosts), no kube_version,
nodelocaldns' 169.254.25.10 as kubelet-config's clusterDNS and a controlPlaneEndpoint on the loopback address
(kubespray's local load balancer). The Windows nodes take every cluster value from the cluster."""

import json
import os

import pytest
import scenario
import yaml

TOKEN_SELECTOR = "type=bootstrap.kubernetes.io/token"
NODELOCALDNS = "169.254.25.10"

# kubespray's own values, as its sample inventory keeps them (inventory/sample/group_vars/k8s_cluster/
# k8s-cluster.yml and k8s-net-flannel.yml, kubespray v2.31), with the lab's networks. skydns_server is kubespray's
# template over its role-internal kube_service_subnets: evaluated anywhere outside kubespray's roles it crashes.
KUBESPRAY_K8S_CLUSTER = {
    "kube_network_plugin": "flannel",
    "kube_service_addresses": "10.96.0.0/12",
    "kube_pods_subnet": "10.244.0.0/16",
    "kube_network_node_prefix": 24,
    "kube_apiserver_port": int(os.environ.get("LAB_APISERVER_PORT") or 16443),
    "kube_proxy_mode": "ipvs",
    "cluster_name": "cluster.local",
    "dns_domain": "{{ cluster_name }}",
    "enable_nodelocaldns": True,
    "nodelocaldns_ip": NODELOCALDNS,
    "skydns_server": "{{ kube_service_subnets.split(',') | first | ansible.utils.ipaddr('net') "
                     "| ansible.utils.ipaddr(3) | ansible.utils.ipaddr('address') }}",
    "flannel_vxlan_vni": 4096,
    "flannel_vxlan_port": 4789,
}
# Left out of group_vars/all: kubespray keeps them in k8s_cluster (None = not written).
KUBESPRAY_NAMES = {name: None for name in ("kube_version", "kube_pods_subnet", "kube_service_addresses",
                                           "flannel_backend_type", "flannel_vxlan_vni", "flannel_vxlan_port",
                                           "kube_apiserver_port")}


def bootstrap_tokens(core):
    return {s.metadata.name for s in core.list_namespaced_secret("kube-system", field_selector=TOKEN_SELECTOR).items}


def kubespray_scenario(path, prefix, **k8s_cluster):
    sc = scenario.Scenario(path, nodes=1, kubewin_node_name=prefix + "-{{ inventory_hostname }}", **KUBESPRAY_NAMES)
    with open(os.path.join(sc.root, "group_vars", "k8s_cluster.yml"), "w") as f:
        json.dump(dict(KUBESPRAY_K8S_CLUSTER, **k8s_cluster), f, indent=2)
    return sc


@pytest.fixture
def nodelocaldns(api):
    """kubelet-config's clusterDNS as kubespray writes it with enable_nodelocaldns (the default)."""
    core, _ = api
    cm = core.read_namespaced_config_map("kubelet-config", "kube-system")
    original = cm.data["kubelet"]
    doc = yaml.safe_load(original)
    service_dns = doc.get("clusterDNS")
    doc["clusterDNS"] = [NODELOCALDNS]
    core.patch_namespaced_config_map("kubelet-config", "kube-system", {"data": {"kubelet": yaml.safe_dump(doc)}})
    yield service_dns
    core.patch_namespaced_config_map("kubelet-config", "kube-system", {"data": {"kubelet": original}})


def kube_dns_ip(core):
    return core.read_namespaced_service("kube-dns", "kube-system").spec.cluster_ip


def messages_of(doc, task_name):
    out = []
    for play in (doc or {}).get("plays", []):
        for task in play["tasks"]:
            if task["task"]["name"].endswith(task_name):
                for res in task["hosts"].values():
                    out.append(json.dumps(res.get("msg")))
    return "\n".join(out)


def test_kubespray_inventory_unchanged_scale_up_rerun_and_reset(tmp_path, api, nodelocaldns):
    core, _ = api
    dns_ip = kube_dns_ip(core)
    sc = kubespray_scenario(tmp_path, "ks")
    before = sc.dump("win-1")
    rc, doc, text = sc.run("scale_up.yml", "--diff")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert "kube_service_subnets" not in text

    node = core.read_node("ks-win-1")
    assert any(c.type == "Ready" and c.status == "True" for c in node.status.conditions)
    # no kube_version anywhere: the API server's release
    assert node.status.node_info.kubelet_version == scenario.lab_version()

    # nodelocaldns exists only on Linux nodes: the Windows kubelet and pods get the cluster DNS Service
    kubelet = sc.dump("win-1")["services"]["kubelet"]["image_path"]
    assert "--cluster-dns=%s" % dns_ip in kubelet and NODELOCALDNS not in kubelet
    assert "--cluster-dns=%s" % dns_ip in text  # the kubelet service's --diff shows the choice
    said = messages_of(doc, "Say what the Windows nodes take from the cluster, and why")
    assert NODELOCALDNS in said and "nodelocaldns" in said and dns_ip in said, said
    # the loopback controlPlaneEndpoint (kubespray's local load balancer) is replaced, and that is said
    assert "controlPlaneEndpoint 127.0.0.1:" in said and "first control-plane host localhost" in said, said
    assert "pod network 10.244.0.0/16 (kubeadm-config ConfigMap)" in said, said

    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0 and scenario.changed_tasks(doc) == {}, scenario.changed_tasks(doc)
    rc, doc, text = sc.run("reset.yml", "-e", "skip_confirmation=true", "-e", "kubewin_reset_delete_tokens=false")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert sc.dump("win-1") == before


@pytest.mark.parametrize("variable, value, cluster_side", [
    ("kube_pods_subnet", "10.233.64.0/18", "podSubnet 10.244.0.0/16 (kubeadm-config ConfigMap)"),
    ("flannel_vxlan_vni", 1, "Backend VNI 4096 (flannel ConfigMap kube-flannel/kube-flannel-cfg)"),
])
def test_a_kubespray_value_that_differs_from_the_cluster_stops_preflight_naming_both(tmp_path, api, variable, value,
                                                                                     cluster_side):
    core, _ = api
    sc = kubespray_scenario(tmp_path, "ksc", **{variable: value})
    before, tokens = sc.dump("win-1"), bootstrap_tokens(core)
    rc, doc, text = sc.run("scale_up.yml")
    assert rc != 0
    messages = "\n".join(scenario.failures(doc))
    assert "Preflight failed on win-1" in messages, messages or text[-2000:]
    assert "%s %s (inventory, hostvars of localhost) differs from %s" % (variable, value, cluster_side) in messages, \
        messages
    assert sc.dump("win-1") == before and bootstrap_tokens(core) == tokens


@pytest.fixture
def calico_cluster(api):
    """The cluster as kubespray's default network leaves it: calico-node in kube-system (kubespray's manifests,
    roles/network_plugin/calico/templates/calico-node.yml.j2) and no flannel ConfigMap. Restored afterwards."""
    from kubernetes import client
    core, _ = api
    apps = client.AppsV1Api(core.api_client)
    flannel = core.read_namespaced_config_map("kube-flannel-cfg", "kube-flannel")
    core.delete_namespaced_config_map("kube-flannel-cfg", "kube-flannel")
    labels = {"k8s-app": "calico-node"}
    apps.create_namespaced_daemon_set("kube-system", {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "calico-node", "labels": labels},
        "spec": {"selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"nodeSelector": {"kubernetes.io/os": "linux"},
                     "containers": [{"name": "calico-node", "image": "quay.io/calico/node:v3.31.5"}]}}}})
    try:
        yield
    finally:
        apps.delete_namespaced_daemon_set("calico-node", "kube-system")
        core.create_namespaced_config_map("kube-flannel", {"metadata": {"name": "kube-flannel-cfg",
                                                                        "labels": flannel.metadata.labels},
                                                           "data": flannel.data})


@pytest.mark.parametrize("inventory_plugin", ["calico", "flannel"])
def test_kubesprays_default_calico_is_refused_before_any_change_whatever_the_inventory_says(
        tmp_path, api, calico_cluster, inventory_plugin):
    core, _ = api
    sc = kubespray_scenario(tmp_path, "kscal", kube_network_plugin=inventory_plugin)
    before, tokens = sc.dump("win-1"), bootstrap_tokens(core)
    rc, doc, text = sc.run("scale_up.yml")
    assert rc != 0
    messages = "\n".join(scenario.failures(doc))
    assert "Preflight failed on win-1" in messages, messages or text[-2000:]
    # issue 24 point 1: what was read of Calico, each setting Windows cannot run (this stand-in calico-node sets no
    # DATASTORE_TYPE, so Calico's default etcdv3 applies), then the run itself, with what is already fine
    assert "the cluster runs Calico: kubewin.nodes cannot install Calico's Windows components yet" in messages, messages
    assert "Calico v3.31.5 found (calico/node image tag of DaemonSet kube-system/calico-node)" in messages, messages
    assert "Calico's datastore is etcdv3" in messages and "no migration" in messages, messages
    assert sc.dump("win-1") == before and bootstrap_tokens(core) == tokens
