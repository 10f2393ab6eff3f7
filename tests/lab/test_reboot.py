"""A Windows node that reboots with no playbook run (issue 21 point 1) comes back Ready with its pod network, on the
lab's real control plane: one node scaled up once (services mode, containerd, flannel vxlan: the lab's defaults),
then rebooted by the simulator alone (lab/winsim/winsim_boot.py, its rules and sources in lab/winsim/README.md,
"Reboots"). What is shown here rests on that model; what a real host does is listed in docs/verification.md."""

import ipaddress

import pytest
import scenario
from kubernetes.client.exceptions import ApiException

HOST = "win-1"
NODE = "rb-" + HOST
VNI_NETWORK = "flannel.4096"


def _ready(core):
    node = core.read_node(NODE)
    return next((c.status, c.reason) for c in node.status.conditions or [] if c.type == "Ready")


def _hns(sc):
    """(networks {name: ID}, endpoints on flannel's network as {IP: ID})."""
    with scenario.core.Host(sc.root, HOST).open(save=False) as h:
        hns = h.state["hns"]
        networks = {n["Name"]: n["ID"] for n in hns["networks"]}
        flannel_id = networks.get(VNI_NETWORK, "").lower()
        eps = {e["IPAddress"]: e["ID"] for e in hns["endpoints"] if e["VirtualNetwork"].lower() == flannel_id}
        return networks, eps


def _state(sc):
    with scenario.core.Host(sc.root, HOST).open(save=False) as h:
        return h.state


@pytest.fixture(scope="module")
def node(tmp_path_factory, api):
    sc = scenario.Scenario(tmp_path_factory.mktemp("reboot"), nodes=1, kubewin_node_name="rb-{{ inventory_hostname }}")
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    core, _ = api
    sc.vip = str(ipaddress.ip_network(core.read_node(NODE).spec.pod_cidr).broadcast_address - 1)
    yield sc
    try:  # the shared cluster keeps no Node of this test (a reset run would cost a playbook run)
        core.delete_node(NODE)
    except ApiException as e:
        if e.status != 404:
            raise


def test_a_node_rebooted_without_a_run_comes_back_ready_with_its_pod_network(node, api):
    core, _ = api
    networks, eps = _hns(node)
    assert node.vip in eps, "kube-proxy made no source VIP endpoint after scale-up: %s" % eps
    before_proxy_pid = _state(node)["services"]["kube-proxy"]["pid"]
    # The node lifecycle controller marks a node whose kubelet is silent Unknown: the kubelet must post Ready again.
    core.patch_node_status(NODE, {"status": {"conditions": [
        {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
         "message": "Kubelet stopped posting node status."}]}})
    node.reset_ops(HOST)

    gone, failed = scenario.core.reboot(node.root, HOST)

    assert failed == {} and gone == [VNI_NETWORK]
    st = _state(node)
    order = [e["service"].lower() for e in st["boot_log"]]
    assert order.index("containerd") < order.index("kubelet") < order.index("flanneld") < order.index("kube-proxy")
    assert all(st["services"][s]["status"] == "Running" for s in ("containerd", "kubelet", "flanneld", "kube-proxy"))
    assert st["services"]["kube-proxy"]["pid"] != before_proxy_pid
    after, after_eps = _hns(node)
    assert after["External"] == networks["External"]  # kept: no vSwitch blip at boot
    assert VNI_NETWORK in after and after[VNI_NETWORK] != networks[VNI_NETWORK]  # flanneld made it again
    assert node.vip in after_eps and after_eps[node.vip] != eps[node.vip]  # kube-proxy's first sync made it again
    proxy = st["processes"]["kube-proxy"]
    assert proxy.get("network_checked") and not proxy.get("sync_error"), proxy
    assert _ready(core) == ("True", "KubeletReady")
    assert node.ops(HOST) == []  # nothing remote: no playbook, no module ran on the host


def test_a_run_after_the_reboot_changes_nothing(node):
    rc, doc, text = node.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert scenario.changed_tasks(doc) == {}


def test_an_hns_restart_leaves_the_pod_network_gone_until_its_programs_restart(node):
    """The lab's model of microsoft/Windows-Containers#278 (not the collection's behaviour): HNS drops flannel's
    network and every load balancer, flanneld and kube-proxy keep running and recreate nothing (proxier.go
    svcInfo.policyApplied); the health check and repair of issue 21 point 4 are what must notice."""
    networks, _ = _hns(node)
    pids = {s: _state(node)["services"][s]["pid"] for s in ("flanneld", "kube-proxy")}
    assert scenario.core.hns_service_restart(node.root, HOST) == [VNI_NETWORK]
    after, eps = _hns(node)
    st = _state(node)
    assert VNI_NETWORK not in after and after["External"] == networks["External"] and eps == {}
    assert st["hns"]["policylists"] == []
    assert {s: st["services"][s]["pid"] for s in pids} == pids  # still the same processes
    assert st["processes"]["kube-proxy"].get("network_checked")  # it looks no more: nothing is re-applied
