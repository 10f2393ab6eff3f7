"""k8s_daemonset_os_pin end to end through main() against a fake API."""

import json

import pytest
from k8s_fakes import FakeCluster, api_error, make_runner

from ansible_collections.kubewin.nodes.plugins.modules import k8s_daemonset_os_pin as mod

LINUX_AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]}}}


@pytest.fixture
def run(monkeypatch, capsys):
    return make_runner(mod, monkeypatch, capsys)


@pytest.fixture
def cluster():
    c = FakeCluster()
    c.add_daemonset("kube-system", "kube-proxy", node_selector={"kubernetes.io/os": "linux"})
    c.add_daemonset("kube-flannel", "kube-flannel-ds", affinity=LINUX_AFFINITY)
    c.add_daemonset("kube-system", "kube-flannel", node_selector={"example.com/role": "worker"})
    return c


def _selector(cluster, namespace, name):
    return cluster.daemonsets[(namespace, name)]["spec"]["template"]["spec"].get("nodeSelector")


def test_pins_only_what_needs_it(run, cluster):
    result = run({}, cluster, diff=True)
    assert result["_rc"] == 0 and result["changed"] is True
    assert result["pinned"] == ["kube-system/kube-flannel"]
    assert result["already_pinned"] == ["kube-system/kube-proxy", "kube-flannel/kube-flannel-ds"]
    assert result["missing"] == []
    assert result["daemonsets"]["kube-flannel/kube-flannel-ds"] == {"state": "already_pinned",
                                                                    "pinned_by": "node_affinity"}
    assert _selector(cluster, "kube-system", "kube-flannel") == {"example.com/role": "worker",
                                                                 "kubernetes.io/os": "linux"}
    # Pinned ones are not touched at all: no patch, no new generation (no rollout).
    patched = [c[1][:2] for c in cluster.calls if c[0] == "patch_namespaced_daemon_set"]
    assert patched == [("kube-flannel", "kube-system")]
    assert cluster.daemonsets[("kube-system", "kube-proxy")]["metadata"]["generation"] == 1
    assert cluster.daemonsets[("kube-flannel", "kube-flannel-ds")]["metadata"]["generation"] == 1
    # The patch sets one key of the nodeSelector only.
    body = [c[1][2] for c in cluster.calls if c[0] == "patch_namespaced_daemon_set"][0]
    assert body == {"spec": {"template": {"spec": {"nodeSelector": {"kubernetes.io/os": "linux"}}}}}
    assert result["diff"]["before"] == {"kube-system/kube-flannel": {"nodeSelector": {"example.com/role": "worker"}}}
    assert result["diff"]["after"]["kube-system/kube-flannel"]["nodeSelector"]["kubernetes.io/os"] == "linux"


def test_second_run_is_idempotent(run, cluster):
    run({}, cluster)
    again = run({}, cluster)
    assert again["changed"] is False and again["pinned"] == []
    assert sorted(again["already_pinned"]) == sorted(
        ["kube-system/kube-proxy", "kube-flannel/kube-flannel-ds", "kube-system/kube-flannel"])


def test_check_mode_changes_nothing(run, cluster):
    result = run({}, cluster, check=True, diff=True)
    assert result["changed"] is True and result["pinned"] == ["kube-system/kube-flannel"]
    assert cluster.writes() == []
    assert "kubernetes.io/os" not in _selector(cluster, "kube-system", "kube-flannel")
    assert "Would pin" in result["msg"]


def test_missing_is_reported_or_fails(run):
    cluster = FakeCluster()
    cluster.add_daemonset("kube-system", "kube-proxy")
    result = run({}, cluster)
    assert result["missing"] == ["kube-flannel/kube-flannel-ds", "kube-system/kube-flannel"]
    assert result["pinned"] == ["kube-system/kube-proxy"]

    cluster = FakeCluster()
    cluster.add_daemonset("kube-system", "kube-proxy")
    failed = run({"missing": "fail"}, cluster)
    assert failed["failed"] is True and "kube-flannel/kube-flannel-ds" in failed["msg"]
    assert "missing=ignore" in failed["msg"] and cluster.writes() == []


def test_windows_daemonset_is_never_repinned(run):
    cluster = FakeCluster()
    cluster.add_daemonset("kube-system", "kube-proxy-windows", node_selector={"kubernetes.io/os": "windows"})
    result = run({"daemonsets": ["kube-system/kube-proxy-windows"]}, cluster)
    assert result["failed"] is True and "not a Linux DaemonSet" in result["msg"] and cluster.writes() == []


def test_affinity_allowing_windows_is_not_pinned(run):
    cluster = FakeCluster()
    both = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux", "windows"]}]}]}}}
    cluster.add_daemonset("ns", "agent", affinity=both)
    result = run({"daemonsets": ["ns/agent"]}, cluster)
    assert result["pinned"] == ["ns/agent"]


def test_bad_reference(run, cluster):
    result = run({"daemonsets": ["kube-proxy"]}, cluster)
    assert result["failed"] is True and "namespace/name" in result["msg"]


def test_patch_forbidden_is_clear(run, cluster):
    cluster.errors["patch_namespaced_daemon_set"] = api_error(403, "Forbidden")
    result = run({}, cluster)
    assert result["failed"] is True and "patch daemonsets in namespace kube-system" in result["msg"]
    assert result["changed"] is False and "Traceback" not in result["_raw"]


EVERY_TAINT = [{"operator": "Exists"}]


def test_other_daemonsets_that_tolerate_every_taint_are_named_and_left_alone(run, cluster):
    # kubespray's multus tolerates every taint and has no OS selector: the Windows nodes' taint does not stop it
    multus = cluster.add_daemonset("kube-system", "kube-multus-ds-amd64")
    multus["spec"]["template"]["spec"]["tolerations"] = EVERY_TAINT
    calm = cluster.add_daemonset("kube-system", "node-exporter")  # no toleration: the Windows taint keeps it off
    pinned = cluster.add_daemonset("kube-system", "csi-node", node_selector={"kubernetes.io/os": "linux"})
    windows = cluster.add_daemonset("kube-system", "win-exporter", node_selector={"kubernetes.io/os": "windows"})
    for ds in (calm, pinned, windows):
        ds["spec"]["template"]["spec"]["tolerations"] = EVERY_TAINT if ds is not calm else []
    result = run({}, cluster)
    assert result["_rc"] == 0 and result["landing_on_windows"] == ["kube-system/kube-multus-ds-amd64"]
    warned = json.dumps(result.get("warnings"))  # plain strings on ansible-core 2.18, summaries on 2.19
    assert "kube-system/kube-multus-ds-amd64 have no OS nodeSelector" in warned and "kubewin_pin_daemonsets" in warned
    assert multus["spec"]["template"]["spec"].get("nodeSelector") is None
    assert not [c for c in cluster.calls if c[0] == "patch_namespaced_daemon_set" and c[1][0] != "kube-flannel"]


def test_nothing_landing_means_no_warning(run, cluster):
    result = run({}, cluster)
    assert result["landing_on_windows"] == [] and "tolerate every taint" not in json.dumps(result.get("warnings"))
