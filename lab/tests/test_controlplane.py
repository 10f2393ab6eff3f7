"""Checks that the lab control plane looks like what `kubeadm init` leaves.

Assumes the lab is up (lab/bin/lab-up). Kubeconfig: $LAB_KUBECONFIG or
lab/_run/admin.conf.
"""

import base64
import os
import secrets
import string
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.rest import ApiException

KUBECONFIG = os.environ.get(
    "LAB_KUBECONFIG", str(Path(__file__).resolve().parents[1] / "_run" / "admin.conf")
)


@pytest.fixture(scope="module")
def api():
    return config.new_client_from_config(config_file=KUBECONFIG)


@pytest.fixture(scope="module")
def core(api):
    return client.CoreV1Api(api)


@pytest.fixture(scope="module")
def apps(api):
    return client.AppsV1Api(api)


def test_kubeadm_config_has_cluster_configuration(core):
    cm = core.read_namespaced_config_map("kubeadm-config", "kube-system")
    cc = yaml.safe_load(cm.data["ClusterConfiguration"])
    assert cc["kind"] == "ClusterConfiguration"
    assert cc["networking"]["podSubnet"] == "10.244.0.0/16"
    assert cc["networking"]["serviceSubnet"] == "10.96.0.0/12"
    assert cc["controlPlaneEndpoint"].startswith("127.0.0.1:")


def test_kubelet_config_uploaded(core):
    cm = core.read_namespaced_config_map("kubelet-config", "kube-system")
    assert yaml.safe_load(cm.data["kubelet"])["kind"] == "KubeletConfiguration"


def test_cluster_info_is_public(core):
    cm = core.read_namespaced_config_map("cluster-info", "kube-public")
    kc = yaml.safe_load(cm.data["kubeconfig"])
    assert kc["clusters"][0]["cluster"]["server"].startswith("https://127.0.0.1:")


def test_kube_proxy_is_linux_only(apps):
    ds = apps.read_namespaced_daemon_set("kube-proxy", "kube-system")
    assert ds.spec.template.spec.node_selector == {"kubernetes.io/os": "linux"}


def test_kubeadm_rbac(api):
    rbac = client.RbacAuthorizationV1Api(api)
    crb = rbac.read_cluster_role_binding("kubeadm:kubelet-bootstrap")
    assert crb.role_ref.name == "system:node-bootstrapper"
    assert any(s.name == "system:bootstrappers:kubeadm:default-node-token" for s in crb.subjects)
    for name in ("kubeadm:node-autoapprove-bootstrap", "kubeadm:node-autoapprove-certificate-rotation"):
        rbac.read_cluster_role_binding(name)


def test_flannel(core, apps):
    ds = apps.read_namespaced_daemon_set("kube-flannel-ds", "kube-flannel")
    assert ds.spec.template.spec.host_network
    cm = core.read_namespaced_config_map("kube-flannel-cfg", "kube-flannel")
    net = yaml.safe_load(cm.data["net-conf.json"])
    assert net["Network"] == "10.244.0.0/16"
    backend = net["Backend"]
    assert backend["Type"] in ("vxlan", "host-gw")
    if backend["Type"] == "vxlan":
        assert backend["VNI"] == 4096 and backend["Port"] == 4789


def test_bootstrapsigner_signs_cluster_info(core):
    """A new bootstrap token gets a jws-kubeconfig-<id> key from the controller-manager."""
    alphabet = string.ascii_lowercase + string.digits
    tid = "".join(secrets.choice(alphabet) for _ in range(6))
    tsecret = "".join(secrets.choice(alphabet) for _ in range(16))
    expiration = (datetime.now(timezone.utc) + timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    data = {
        "token-id": tid,
        "token-secret": tsecret,
        "expiration": expiration,
        "usage-bootstrap-authentication": "true",
        "usage-bootstrap-signing": "true",
        "auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token",
    }
    body = client.V1Secret(
        metadata=client.V1ObjectMeta(name=f"bootstrap-token-{tid}", namespace="kube-system"),
        type="bootstrap.kubernetes.io/token",
        data={k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    )
    core.create_namespaced_secret("kube-system", body)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            cm = core.read_namespaced_config_map("cluster-info", "kube-public")
            if f"jws-kubeconfig-{tid}" in (cm.data or {}):
                break
            time.sleep(1)
        else:
            pytest.fail(f"cluster-info never got jws-kubeconfig-{tid}")
    finally:
        try:
            core.delete_namespaced_secret(f"bootstrap-token-{tid}", "kube-system")
        except ApiException:
            pass


def test_kwok_fake_node_and_daemonset_pod(api, core, apps):
    """kwok keeps an annotated fake node Ready and a DaemonSet pod on it Running."""
    name = "lab-fake-" + secrets.token_hex(3)
    node = client.V1Node(
        metadata=client.V1ObjectMeta(
            name=name,
            annotations={"kwok.x-k8s.io/node": "fake"},
            labels={"kubernetes.io/os": "linux", "kubernetes.io/hostname": name, "type": "kwok"},
        ),
        spec=client.V1NodeSpec(
            taints=[client.V1Taint(key="kwok.x-k8s.io/node", value="fake", effect="NoSchedule")]
        ),
    )
    core.create_node(node)
    ds_name = "lab-probe-" + secrets.token_hex(3)
    ds = client.V1DaemonSet(
        metadata=client.V1ObjectMeta(name=ds_name, namespace="default"),
        spec=client.V1DaemonSetSpec(
            selector=client.V1LabelSelector(match_labels={"app": ds_name}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": ds_name}),
                spec=client.V1PodSpec(
                    node_selector={"kubernetes.io/hostname": name},
                    tolerations=[client.V1Toleration(operator="Exists")],
                    containers=[client.V1Container(name="c", image="registry.k8s.io/pause:3.10")],
                ),
            ),
        ),
    )
    apps.create_namespaced_daemon_set("default", ds)
    try:
        deadline = time.monotonic() + 90
        ready = running = False
        while time.monotonic() < deadline and not (ready and running):
            n = core.read_node(name)
            ready = any(c.type == "Ready" and c.status == "True" for c in (n.status.conditions or []))
            pods = core.list_namespaced_pod("default", label_selector=f"app={ds_name}").items
            running = any(p.spec.node_name == name and p.status.phase == "Running" for p in pods)
            time.sleep(1)
        assert ready, f"node {name} never became Ready"
        assert running, f"DaemonSet {ds_name} pod never Running on {name}"
    finally:
        apps.delete_namespaced_daemon_set(ds_name, "default")
        core.delete_node(name)
