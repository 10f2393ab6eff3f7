"""The lab's kubespray flavour (LAB_FLAVOUR=kubespray lab/bin/lab-up): kubespray's own kubeadm template rendered
with kubespray's defaults and sample inventory (lab/kubespray/render) carries kubespray's values, and the running
flavour publishes them (kubeadm-config, kubelet-config, kube-proxy ConfigMaps read back with its admin.conf).

The rendering needs kubespray's fixture (../shared/fixtures/kubespray beside the project) and skips without it;
the read-back needs the flavour up and skips otherwise."""

import os
import subprocess

import pytest
import scenario
import yaml

FIXTURE = os.environ.get("LAB_KUBESPRAY_FIXTURE") or os.path.join(os.path.dirname(scenario.REPO), "shared",
                                                              "fixtures", "kubespray", "v2.31.0")
RENDER = os.path.join(scenario.LAB, "kubespray", "render")
needs_fixture = pytest.mark.skipif(
    not os.path.isdir(FIXTURE),
    reason="kubespray's fixture is not at %s (a clone without ../shared/fixtures)" % FIXTURE)

# kubespray's values (v2.31 roles/kubespray_defaults/defaults/main/main.yml and inventory/sample)
KUBESPRAY = {"certificatesDir": "/etc/kubernetes/ssl", "clusterName": "cluster.local", "dnsDomain": "cluster.local",
             "serviceSubnet": "10.233.0.0/18", "podSubnet": "10.233.64.0/18", "clusterDNS": ["169.254.25.10"],
             "proxyMode": "ipvs"}


def documents(text):
    return {d["kind"]: d for d in yaml.safe_load_all(text) if d}


def extra_args(component):
    return {a["name"]: a["value"] for a in component.get("extraArgs") or []}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    run = tmp_path_factory.mktemp("kubespray-run")
    p = subprocess.run([RENDER, str(run)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    with open(run / "kubeadm.yaml") as f:
        return run, documents(f.read())


@needs_fixture
def test_rendered_config_carries_kubespray_values(rendered):
    run, docs = rendered
    cluster = docs["ClusterConfiguration"]
    assert cluster["certificatesDir"] == KUBESPRAY["certificatesDir"]
    assert cluster["clusterName"] == KUBESPRAY["clusterName"]
    assert cluster["networking"] == {"dnsDomain": KUBESPRAY["dnsDomain"], "serviceSubnet": KUBESPRAY["serviceSubnet"],
                                     "podSubnet": KUBESPRAY["podSubnet"]}
    assert cluster["dns"].get("disabled") is True  # kubespray installs CoreDNS itself (addon/coredns skipped)
    assert docs["KubeletConfiguration"]["clusterDNS"] == KUBESPRAY["clusterDNS"]  # nodelocaldns
    assert docs["KubeProxyConfiguration"]["mode"] == KUBESPRAY["proxyMode"]
    apiserver = extra_args(cluster["apiServer"])
    # kubespray's flags, and the lab's loopback binding in place of kubespray's "::"
    assert apiserver["authorization-mode"] == "Node,RBAC" and apiserver["service-cluster-ip-range"] == "10.233.0.0/18"
    assert apiserver["endpoint-reconciler-type"] == "lease" and apiserver["bind-address"] == "127.0.0.1"
    kcm = extra_args(cluster["controllerManager"])
    assert kcm["cluster-cidr"] == KUBESPRAY["podSubnet"] and kcm["node-cidr-mask-size-ipv4"] == "24"
    # the scheduler's --config file is kubespray's, rendered into the lab's stand-in for /etc/kubernetes
    assert extra_args(cluster["scheduler"])["config"] == "/etc/kubernetes/kubescheduler-config.yaml"
    with open(run / "kubernetes" / "kubescheduler-config.yaml") as f:
        sched = yaml.safe_load(f)
    assert sched["clientConnection"]["kubeconfig"] == str(run / "kubernetes" / "scheduler.conf")


@needs_fixture
def test_rendered_config_overrides_only_ports_and_addresses(rendered):
    """The lab's overrides (lab/kubespray/lab-vars.yml) are its ports, addresses and kubeadm-run etcd."""
    run, docs = rendered
    cluster, init = docs["ClusterConfiguration"], docs["InitConfiguration"]
    port = int(os.environ.get("LAB_APISERVER_PORT") or 16443)
    assert init["localAPIEndpoint"]["bindPort"] == port
    assert cluster["controlPlaneEndpoint"] == "127.0.0.1:%d" % port
    with open(os.path.join(scenario.LAB, "controlplane", "VERSION")) as f:
        assert cluster["kubernetesVersion"] == os.environ.get("KUBE_VERSION", f.read().strip())
    assert cluster["etcd"]["local"]["dataDir"] == str(run / "etcd")


@pytest.mark.skipif(scenario.FLAVOUR != "kubespray",
                    reason="needs the kubespray flavour up: LAB_FLAVOUR=kubespray lab/bin/lab-up, then run with "
                           "LAB_FLAVOUR=kubespray")
def test_the_running_flavour_publishes_kubespray_values():
    from kubernetes import client, config

    core = client.CoreV1Api(config.new_client_from_config(config_file=scenario.ADMIN_CONF))
    with open(os.path.join(scenario.RUN, "kubeadm.yaml")) as f:
        recorded = documents(f.read())
    assert recorded["ClusterConfiguration"]["certificatesDir"] == KUBESPRAY["certificatesDir"]

    data = core.read_namespaced_config_map("kubeadm-config", "kube-system").data
    cluster = yaml.safe_load(data["ClusterConfiguration"])
    assert cluster["certificatesDir"] == KUBESPRAY["certificatesDir"]
    assert cluster["clusterName"] == KUBESPRAY["clusterName"]
    assert cluster["networking"]["podSubnet"] == KUBESPRAY["podSubnet"]
    assert cluster["networking"]["serviceSubnet"] == KUBESPRAY["serviceSubnet"]

    kubelet = yaml.safe_load(core.read_namespaced_config_map("kubelet-config", "kube-system").data["kubelet"])
    # kubeadm's default for the kubelet: <certificatesDir>/ca.crt (what a Windows node's kubelet gets too)
    assert kubelet["authentication"]["x509"]["clientCAFile"] == "/etc/kubernetes/ssl/ca.crt"
    assert kubelet["clusterDNS"] == KUBESPRAY["clusterDNS"] and kubelet["clusterDomain"] == "cluster.local"

    proxy = yaml.safe_load(core.read_namespaced_config_map("kube-proxy", "kube-system").data["config.conf"])
    assert proxy["mode"] == KUBESPRAY["proxyMode"] and proxy["clusterCIDR"] == KUBESPRAY["podSubnet"]

    services = {s.metadata.name: s.spec.cluster_ip for s in core.list_namespaced_service("kube-system").items}
    assert services.get("coredns") == "10.233.0.3" and "kube-dns" not in services, services
    with open(os.path.join(scenario.RUN, "NETWORK")) as f:
        network = f.read().strip()
    if network == "flannel":
        flannel = core.read_namespaced_config_map("kube-flannel-cfg", "kube-flannel").data["net-conf.json"]
        assert '"Network": "%s"' % KUBESPRAY["podSubnet"] in flannel, flannel
    else:  # kubespray's default: its calico-node DaemonSet and calico-config, Calico's CRDs, no flannel
        apps = client.AppsV1Api(core.api_client)
        assert apps.read_namespaced_daemon_set("calico-node", "kube-system").metadata.labels["k8s-app"] == "calico-node"
        assert core.read_namespaced_config_map("calico-config", "kube-system").data["cluster_type"] == "kubespray"
        crds = client.ApiextensionsV1Api(core.api_client).list_custom_resource_definition().items
        assert "ippools.crd.projectcalico.org" in {c.metadata.name for c in crds}
        assert "kube-flannel" not in {n.metadata.name for n in core.list_namespace().items}
        # kubespray's controller-manager leaves node CIDRs to Calico's IPAM
        assert extra_args(cluster["controllerManager"])["allocate-node-cidrs"] == "false"
