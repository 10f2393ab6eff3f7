"""The health check and repair playbooks (issue 21 point 4) on the lab's real control plane: one node scaled up once
(services mode, containerd, flannel vxlan: the lab's defaults), checked healthy, then its Host Network Service
restarted by the simulator alone (lab/winsim/winsim_boot.py, microsoft/Windows-Containers#278: flannel's network
gone, flanneld and kube-proxy still running and recreating nothing), found by health.yml and repaired by repair.yml.
What is shown here rests on the simulator's model; what a real host does is listed in docs/verification.md."""

import json

import pytest
import scenario
from kubernetes.client.exceptions import ApiException

HOST = "win-1"
NODE = "hc-" + HOST
VNI_NETWORK = "flannel.4096"


def _state(sc):
    with scenario.core.Host(sc.root, HOST).open(save=False) as h:
        return h.state


def _networks(sc):
    return {n["Name"]: n["ID"] for n in _state(sc)["hns"]["networks"]}


def _report(path):
    with open(path) as f:
        return json.load(f)


def _checks(report):
    (node,) = report["nodes"]
    return {c["check"]: c for c in node["checks"]}


def _host_tasks(doc, changed=False):
    """Names of the tasks that ran on HOST (only those that changed, with ``changed``), in order, without the role's
    prefix ('kubewin.nodes.health : ')."""
    return [task["task"]["name"].rsplit(" : ", 1)[-1] for play in doc["plays"] for task in play["tasks"]
            if HOST in task["hosts"] and not task["hosts"][HOST].get("skipped")
            and (task["hosts"][HOST].get("changed") or not changed)]


@pytest.fixture(scope="module")
def node(tmp_path_factory, api):
    sc = scenario.Scenario(tmp_path_factory.mktemp("health"), nodes=1, kubewin_node_name="hc-{{ inventory_hostname }}")
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    yield sc
    core, _ = api
    try:  # the shared cluster keeps no Node of this test (a reset run would cost a playbook run)
        core.delete_node(NODE)
    except ApiException as e:
        if e.status != 404:
            raise


def test_health_reports_a_healthy_node_in_one_remote_operation(node, tmp_path):
    node.reset_ops(HOST)
    path = str(tmp_path / "h.json")
    rc, doc, text = node.run("health.yml", "-e", "kubewin_health_report_path=" + path)
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    report = _report(path)
    assert report["schema"] == "kubewin.nodes/health/v1" and report["healthy"] is True
    assert [(n["host"], n["node"], n["healthy"], n["repaired"]) for n in report["nodes"]] == [(HOST, NODE, True, [])]
    checks = _checks(report)
    assert {k: c["status"] for k, c in checks.items()} == {
        "service containerd": "ok", "service kubelet": "ok", "service flanneld": "ok", "service kube-proxy": "ok",
        "pod network " + VNI_NETWORK: "ok", "network External": "ok", "node Ready": "ok",
        "node NetworkUnavailable": "ok", "node schedulable": "ok"}
    assert [script for dummy, dummy2, script in node.ops_detailed(HOST)] == ["node_health"]
    assert scenario.changed_tasks(doc).get(HOST) is None


def test_an_hns_restart_is_found_then_repaired_in_dependency_order(node, tmp_path):
    before = _networks(node)
    pids = {s: _state(node)["services"][s]["pid"] for s in ("flanneld", "kube-proxy")}
    assert scenario.core.hns_service_restart(node.root, HOST) == [VNI_NETWORK]

    path = str(tmp_path / "found.json")
    # one node, as a monitoring job asks: the report and the failed run must not depend on localhost being in the limit
    rc, doc, text = node.run("health.yml", "--limit", HOST + ":kube_control_plane[0]",
                             "-e", "kubewin_health_report_path=" + path)
    assert rc == 2, text[-3000:]
    report = _report(path)
    assert report["healthy"] is False
    failed = {k: c for k, c in _checks(report).items() if c["status"] == "fail"}
    assert set(failed) == {"pod network " + VNI_NETWORK}
    assert "restarts flanneld" in failed["pod network " + VNI_NETWORK]["fix"]
    assert "pod network %s  fail    missing from HNS" % VNI_NETWORK in text  # the table's row
    assert {s: _state(node)["services"][s]["pid"] for s in pids} == pids  # a check repairs nothing

    path = str(tmp_path / "repaired.json")
    rc, doc, text = node.run("repair.yml", "-e", "kubewin_health_report_path=" + path)
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    restarts = [t for t in _host_tasks(doc, changed=True) if t.startswith("Restart")]
    assert [t.split(",")[0] for t in restarts] == ["Restart flanneld", "Restart kube-proxy"]
    report = _report(path)
    assert report["healthy"] is True and report["nodes"][0]["repaired"] == ["flanneld", "kube-proxy"]
    st = _state(node)
    assert all(st["services"][s]["pid"] != pids[s] for s in pids)
    after = _networks(node)
    assert VNI_NETWORK in after and after[VNI_NETWORK] != before[VNI_NETWORK]  # flanneld made it again
    proxy = st["processes"]["kube-proxy"]
    assert proxy.get("network_checked") and not proxy.get("sync_error"), proxy

    rc, doc, text = node.run("health.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert scenario.changed_tasks(doc).get(HOST) is None
