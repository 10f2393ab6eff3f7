"""node_state: labels, taints, node patches, drain classification and messages."""

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import _node_state as ns


def test_normalize_labels():
    assert ns.normalize_labels({"a": "b", "n": 3, "gone": None, "example.com/x": ""}) == {
        "a": "b", "n": "3", "gone": None, "example.com/x": ""}
    for bad in [{"a": True}, {"a": "-bad"}, {"a": "x" * 64}, {"Bad_Prefix/a": "b"}, {"": "b"}, {"a": ["x"]}]:
        with pytest.raises(ns.NodeStateError):
            ns.normalize_labels(bad)


def test_labels_patch():
    assert ns.labels_patch({"a": "1", "b": "2"}, {"a": "1", "b": "3", "c": None, "d": "4"}) == {"b": "3", "d": "4"}
    assert ns.labels_patch({"c": "x"}, {"c": None}) == {"c": None}


def test_normalize_taints():
    assert ns.normalize_taints([{"key": "os", "value": "windows", "effect": "NoSchedule"}]) == [
        {"key": "os", "value": "windows", "effect": "NoSchedule", "state": "present"}]
    assert ns.normalize_taints([{"key": "os", "state": "absent"}])[0]["effect"] is None
    for bad in [[{"value": "x", "effect": "NoSchedule"}], [{"key": "os"}], [{"key": "os", "effect": "Nope"}]]:
        with pytest.raises(ns.NodeStateError):
            ns.normalize_taints(bad)


def test_taints_after():
    current = [{"key": "a", "effect": "NoSchedule"},
               {"key": "a", "value": "v", "effect": "NoExecute", "timeAdded": "t"}]
    want = ns.normalize_taints([{"key": "a", "effect": "NoSchedule"}])
    assert ns.taints_after(current, want) is None
    changed = ns.taints_after(current, ns.normalize_taints([{"key": "a", "value": "w", "effect": "NoSchedule"}]))
    assert changed[0] == {"key": "a", "value": "w", "effect": "NoSchedule"} and changed[1]["timeAdded"] == "t"
    assert ns.taints_after(current, ns.normalize_taints([{"key": "a", "state": "absent"}])) == []
    only_one = ns.taints_after(current, ns.normalize_taints([{"key": "a", "effect": "NoExecute", "state": "absent"}]))
    assert only_one == [{"key": "a", "effect": "NoSchedule"}]
    assert ns.taints_after(current, ns.normalize_taints([{"key": "b", "state": "absent"}])) is None


def test_node_patch():
    node = {"metadata": {"labels": {"a": "1"}, "resourceVersion": "7"}, "spec": {}}
    assert ns.node_patch(node, {"a": "1"}, [], None) == (None, {}, {})
    patch, before, after = ns.node_patch(
        node, {"a": "2"}, ns.normalize_taints([{"key": "os", "value": "windows", "effect": "NoSchedule"}]), True)
    assert patch == {"metadata": {"labels": {"a": "2"}, "resourceVersion": "7"},
                     "spec": {"taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}],
                              "unschedulable": True}}
    assert before == {"labels": {"a": "1"}, "taints": [], "unschedulable": False}
    assert after["unschedulable"] is True
    patch, dummy, dummy2 = ns.node_patch({"metadata": {}, "spec": {"unschedulable": True}}, None, None, False)
    assert patch == {"spec": {"unschedulable": None}}


def _pod(name, owner="ReplicaSet", **extra):
    pod = {"metadata": {"name": name, "namespace": "ns", "uid": "u-" + name}, "spec": {},
           "status": {"phase": "Running"}}
    if owner:
        pod["metadata"]["ownerReferences"] = [{"kind": owner, "name": "o", "controller": True}]
    for key, value in extra.items():
        if key == "annotations":
            pod["metadata"]["annotations"] = value
        elif key == "volumes":
            pod["spec"]["volumes"] = value
        elif key == "phase":
            pod["status"]["phase"] = value
        elif key == "deleting":
            pod["metadata"]["deletionTimestamp"] = "t"
    return pod


def test_classify_pods_like_kubectl_drain():
    pods = [
        _pod("web"), _pod("proxy", owner="DaemonSet"),
        _pod("static", owner="Node", annotations={"kubernetes.io/config.mirror": "x"}),
        _pod("bare", owner=None), _pod("cache", volumes=[{"name": "v", "emptyDir": {}}]),
        _pod("job-done", owner=None, phase="Succeeded", volumes=[{"name": "v", "emptyDir": {}}]),
        _pod("leaving", deleting=True),
    ]
    result = ns.classify_pods(pods)
    assert [ns.pod_ref(p) for p in result["evict"]] == ["ns/web", "ns/job-done"]
    assert result["skipped_daemonset"] == ["ns/proxy"] and result["skipped_mirror"] == ["ns/static"]
    assert [ns.pod_ref(p) for p in result["terminating"]] == ["ns/leaving"]
    assert [b[0] for b in result["blocked"]] == ["ns/bare", "ns/cache"]
    forced = ns.classify_pods(pods, force=True, delete_emptydir_data=True)
    assert forced["blocked"] == [] and len(forced["evict"]) == 4


def test_eviction_body():
    assert ns.eviction_body(_pod("web"), 10) == {
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web", "namespace": "ns"},
        "deleteOptions": {"preconditions": {"uid": "u-web"}, "gracePeriodSeconds": 10}}


def test_pod_still_there_compares_uid():
    pod = _pod("web")
    replaced = _pod("web")
    replaced["metadata"]["uid"] = "other"
    assert ns.pod_still_there(pod, [pod]) is True
    assert ns.pod_still_there(pod, [replaced]) is False


def test_messages():
    node = {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                                       "message": "PLEG is not healthy"}]}}
    text = ns.not_ready_message("win-1", node, 60)
    assert "Ready=False (KubeletNotReady: PLEG is not healthy)" in text and "Get-Service kubelet" in text
    assert "(no conditions reported yet)" in ns.not_ready_message("win-1", {}, 60)
    text = ns.drain_timeout_message("win-1", 30, {"ns/web": "budget"}, ["ns/web", "ns/slow"])
    assert "ns/web (budget)" in text and "ns/slow" in text.split("Evicted but not yet gone:")[1]
    summary = ns.node_summary(None)
    assert summary["exists"] is False and summary["ready"] is False


def test_summary_reports_the_pod_subnet_kube_proxy_needs():
    node = {"metadata": {"name": "win-1", "labels": {"kubernetes.io/os": "windows"}},
            "spec": {"podCIDR": "10.244.3.0/24"}, "status": {"nodeInfo": {"kubeletVersion": "v1.37.2"}}}
    summary = ns.node_summary(node)
    assert summary["pod_cidr"] == "10.244.3.0/24" and summary["os"] == "windows"
    assert ns.node_summary(None)["pod_cidr"] is None
