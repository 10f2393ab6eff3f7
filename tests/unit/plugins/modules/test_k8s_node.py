"""k8s_node end to end through main() against a fake API and a fake clock."""

import pytest
from k8s_fakes import FakeCluster, FakeTime, api_error, make_runner

from ansible_collections.kubewin.nodes.plugins.modules import k8s_node as mod

NOT_READY = [
    {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory", "message": "ok"},
    {"type": "Ready", "status": "False", "reason": "KubeletNotReady",
     "message": "container runtime network not ready: cni config uninitialized"},
]


@pytest.fixture
def run(monkeypatch, capsys):
    return make_runner(mod, monkeypatch, capsys)


@pytest.fixture
def cluster():
    c = FakeCluster()
    c.add_node("win-1", labels={"kubernetes.io/os": "windows", "keep": "me"},
               taints=[{"key": "other", "value": "x", "effect": "NoExecute", "timeAdded": "2024-01-01T00:00:00Z"}])
    return c


# --- ready ----------------------------------------------------------------------------------------

def test_ready_waits_for_registration_and_readiness(run):
    cluster = FakeCluster()

    def progress(name, count):
        if count == 3:
            cluster.add_node(name, ready=False)
        if count == 6:
            cluster.nodes[name]["status"]["conditions"][0].update(status="True", reason="KubeletReady")

    cluster.on_read_node = progress
    clock = FakeTime()
    result = run({"name": "win-2", "state": "ready", "labels": {"role": "win"}}, cluster, clock=clock)
    assert result["_rc"] == 0, result
    assert result["node"]["ready"] is True and result["node"]["labels"]["role"] == "win"
    assert result["changed"] is True  # the label
    assert clock.now - 1000.0 < 300


def test_ready_already_ready_is_unchanged(run, cluster):
    result = run({"name": "win-1", "state": "ready"}, cluster)
    assert result["changed"] is False and result["node"]["ready"] is True and cluster.writes() == []


def test_ready_timeout_shows_conditions_and_where_to_look(run):
    cluster = FakeCluster()
    cluster.add_node("win-1", conditions=NOT_READY)
    result = run({"name": "win-1", "state": "ready", "wait_timeout": 30}, cluster)
    assert result["failed"] is True
    msg = result["msg"]
    assert "did not become Ready within 30s" in msg
    assert "Ready=False (KubeletNotReady: container runtime network not ready: cni config uninitialized)" in msg
    assert "MemoryPressure=False" in msg
    assert "kubelet service on win-1" in msg and "Get-Service kubelet" in msg
    assert result["node"]["conditions"][1]["reason"] == "KubeletNotReady"
    assert "Traceback" not in result["_raw"]


def test_ready_never_registered(run):
    result = run({"name": "ghost", "state": "ready", "wait_timeout": 10}, FakeCluster())
    assert result["failed"] is True and "did not register" in result["msg"] and "kubelet" in result["msg"]


def test_ready_check_mode_does_not_wait(run):
    clock = FakeTime()
    result = run({"name": "ghost", "state": "ready", "labels": {"a": "b"}}, FakeCluster(), check=True, clock=clock)
    assert result["_rc"] == 0 and result["changed"] is True and clock.sleeps == []
    assert "not waiting" in result["msg"]


# --- labels and taints ----------------------------------------------------------------------------

def test_labels_and_taints_idempotent_and_others_left_alone(run, cluster):
    args = {"name": "win-1", "labels": {"role": "windows", "keep": "me", "gone": None},
            "taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]}
    first = run(args, cluster, diff=True)
    assert first["changed"] is True
    node = cluster.nodes["win-1"]
    assert node["metadata"]["labels"] == {"kubernetes.io/os": "windows", "keep": "me", "role": "windows"}
    assert node["spec"]["taints"] == [
        {"key": "other", "value": "x", "effect": "NoExecute", "timeAdded": "2024-01-01T00:00:00Z"},
        {"key": "os", "value": "windows", "effect": "NoSchedule"}]
    assert first["diff"]["after"]["labels"] == {"role": "windows"}
    second = run(args, cluster)
    assert second["changed"] is False and cluster.writes() == ["patch_node"]


def test_label_removal_and_taint_update_and_removal(run, cluster):
    result = run({"name": "win-1", "labels": {"keep": None},
                  "taints": [{"key": "other", "value": "y", "effect": "NoExecute"}]}, cluster)
    assert result["changed"] is True
    assert "keep" not in cluster.nodes["win-1"]["metadata"]["labels"]
    assert cluster.nodes["win-1"]["spec"]["taints"] == [{"key": "other", "value": "y", "effect": "NoExecute"}]
    gone = run({"name": "win-1", "taints": [{"key": "other", "state": "absent"}]}, cluster)
    assert gone["changed"] is True and cluster.nodes["win-1"]["spec"]["taints"] == []


def test_stale_taint_patch_gets_409_then_rereads(run, cluster):
    original = cluster.patch_node
    state = {"raced": False}

    def racing_patch(name, body, **kwargs):
        if not state["raced"]:
            state["raced"] = True
            cluster.nodes[name]["spec"]["taints"].append({"key": "late", "effect": "NoSchedule"})
            cluster.nodes[name]["metadata"]["resourceVersion"] = "999"
        return original(name, body, **kwargs)

    cluster.patch_node = racing_patch
    result = run({"name": "win-1", "taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]}, cluster)
    assert result["_rc"] == 0, result
    assert [t["key"] for t in cluster.nodes["win-1"]["spec"]["taints"]] == ["other", "late", "os"]
    assert [c[0] for c in cluster.calls].count("patch_node") == 2


def test_invalid_label_value(run, cluster):
    result = run({"name": "win-1", "labels": {"flag": True}}, cluster)
    assert result["failed"] is True and "quote it" in result["msg"] and cluster.writes() == []


def test_missing_node_for_present_fails_clearly(run):
    result = run({"name": "nope", "labels": {"a": "b"}}, FakeCluster())
    assert result["failed"] is True and "does not exist" in result["msg"] and "state=ready" in result["msg"]


# --- cordon ---------------------------------------------------------------------------------------

def test_cordon_uncordon_idempotent_and_check_mode(run, cluster):
    check = run({"name": "win-1", "state": "cordoned"}, cluster, check=True)
    assert check["changed"] is True and cluster.writes() == []
    first = run({"name": "win-1", "state": "cordoned"}, cluster)
    assert first["changed"] is True and first["node"]["unschedulable"] is True
    assert run({"name": "win-1", "state": "cordoned"}, cluster)["changed"] is False
    back = run({"name": "win-1", "state": "uncordoned"}, cluster)
    assert back["changed"] is True and "unschedulable" not in cluster.nodes["win-1"]["spec"]
    assert run({"name": "win-1", "state": "uncordoned"}, cluster)["changed"] is False


# --- drain ----------------------------------------------------------------------------------------

def _drain_cluster():
    c = FakeCluster()
    c.add_node("win-1")
    c.add_node("other")
    c.add_pod("default", "web-1", "win-1")
    c.add_pod("kube-system", "kube-proxy-abc", "win-1", owner_kind="DaemonSet")
    c.add_pod("kube-system", "static-etc", "win-1", owner_kind="Node", mirror=True)
    c.add_pod("default", "done", "win-1", owner_kind=None, phase="Succeeded")
    c.add_pod("default", "elsewhere", "other")
    return c


def test_drain_skips_daemonset_and_mirror_pods(run):
    cluster = _drain_cluster()
    result = run({"name": "win-1", "state": "drained"}, cluster)
    assert result["_rc"] == 0, result
    assert result["changed"] is True and result["node"]["unschedulable"] is True
    assert sorted(result["evicted_pods"]) == ["default/done", "default/web-1"]
    assert sorted(result["skipped_pods"]) == ["kube-system/kube-proxy-abc", "kube-system/static-etc"]
    assert set(cluster.pods) == {("kube-system", "kube-proxy-abc"), ("kube-system", "static-etc"),
                                 ("default", "elsewhere")}
    evictions = [c[1][2] for c in cluster.calls if c[0] == "create_namespaced_pod_eviction"]
    assert evictions[0]["deleteOptions"]["preconditions"]["uid"].startswith("uid-default-")
    again = run({"name": "win-1", "state": "drained"}, cluster)
    assert again["changed"] is False and again["evicted_pods"] == []


def test_drain_check_mode(run):
    cluster = _drain_cluster()
    result = run({"name": "win-1", "state": "drained"}, cluster, check=True)
    assert result["changed"] is True and sorted(result["evicted_pods"]) == ["default/done", "default/web-1"]
    assert cluster.writes() == [] and len(cluster.pods) == 5


def test_drain_refuses_emptydir_and_unmanaged_pods_before_changing_anything(run):
    cluster = _drain_cluster()
    cluster.add_pod("default", "cache", "win-1", emptydir=True)
    cluster.add_pod("default", "bare", "win-1", owner_kind=None)
    result = run({"name": "win-1", "state": "drained"}, cluster)
    assert result["failed"] is True and result["changed"] is False
    assert "default/cache" in result["msg"] and "delete_emptydir_data=true" in result["msg"]
    assert "default/bare" in result["msg"] and "force=true" in result["msg"]
    assert cluster.writes() == []
    ok = run({"name": "win-1", "state": "drained", "delete_emptydir_data": True, "force": True}, cluster)
    assert ok["_rc"] == 0 and "default/bare" in ok["evicted_pods"] and "default/cache" in ok["evicted_pods"]


def test_drain_pdb_refusal_retried_then_succeeds(run):
    cluster = _drain_cluster()
    refusals = {"left": 2}

    def pdb(pod):
        if pod["metadata"]["name"] == "web-1" and refusals["left"]:
            refusals["left"] -= 1
            return api_error(429, "Too Many Requests",
                             "Cannot evict pod as it would violate the pod's disruption budget.")
        return None

    cluster.evict_hook = pdb
    result = run({"name": "win-1", "state": "drained"}, cluster)
    assert result["_rc"] == 0, result
    assert ("default", "web-1") not in cluster.pods


def test_drain_pdb_timeout_is_clear(run):
    cluster = _drain_cluster()
    cluster.evict_hook = lambda pod: api_error(
        429, "Too Many Requests", "Cannot evict pod as it would violate the pod's disruption budget.") \
        if pod["metadata"]["name"] == "web-1" else None
    result = run({"name": "win-1", "state": "drained", "wait_timeout": 20}, cluster)
    assert result["failed"] is True and result["changed"] is True
    assert "Timed out after 20s draining node win-1" in result["msg"]
    assert "default/web-1 (Cannot evict pod as it would violate the pod's disruption budget.)" in result["msg"]
    assert "PodDisruptionBudget" in result["msg"] and "stays cordoned" in result["msg"]
    assert cluster.nodes["win-1"]["spec"]["unschedulable"] is True


def test_drain_waits_for_terminating_pods(run):
    cluster = _drain_cluster()
    cluster.pods[("default", "web-1")]["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    clock = FakeTime()
    clock.on_sleep = lambda now: cluster.pods.pop(("default", "web-1"), None) if now > 1005 else None
    result = run({"name": "win-1", "state": "drained"}, cluster, clock=clock)
    assert result["_rc"] == 0, result
    assert "default/web-1" not in result["evicted_pods"]
    assert not any(c[0] == "create_namespaced_pod_eviction" and c[1][0] == "web-1" for c in cluster.calls)
    assert clock.now > 1005


# --- absent ---------------------------------------------------------------------------------------

def test_absent_is_idempotent(run, cluster):
    check = run({"name": "win-1", "state": "absent"}, cluster, check=True)
    assert check["changed"] is True and "win-1" in cluster.nodes
    first = run({"name": "win-1", "state": "absent"}, cluster, diff=True)
    assert first["changed"] is True and "win-1" not in cluster.nodes
    assert first["diff"]["before"]["name"] == "win-1" and first["node"]["exists"] is True
    second = run({"name": "win-1", "state": "absent"}, cluster)
    assert second["changed"] is False and second["node"]["exists"] is False


def test_absent_rejects_labels(run, cluster):
    result = run({"name": "win-1", "state": "absent", "labels": {"a": "b"}}, cluster)
    assert result["failed"] is True and "state=absent" in result["msg"]


def test_unreachable_server_message(run, cluster):
    cluster.errors["read_node"] = ConnectionRefusedError(111, "Connection refused")
    result = run({"name": "win-1"}, cluster)
    assert result["failed"] is True and "Cannot reach the Kubernetes API server at https://192.0.2.10:6443" \
        in result["msg"]


# --- require_labels: reset touches only the Windows nodes this collection joined -----------------

OWNED = {"kubernetes.io/os": "windows", "kubewin.nodes/managed": "true"}
NEW_OWNED = {"kubernetes.io/os": "windows", "node-restriction.kubernetes.io/kubewin-managed": "true"}


def test_absent_leaves_a_node_without_the_required_labels_alone(run, cluster):
    result = run({"name": "win-1", "state": "absent", "require_labels": OWNED}, cluster, diff=True)
    assert result["changed"] is False and result["owned"] is False
    assert "win-1" in cluster.nodes
    assert "kubewin.nodes/managed=true (has: no such label)" in result["msg"]
    assert "kubectl label node win-1 kubewin.nodes/managed=true" in result["msg"]
    assert any("win-1" in str(w) for w in result.get("warnings", []))


def test_drain_leaves_a_node_without_the_required_labels_alone(run, cluster):
    result = run({"name": "win-1", "state": "drained", "require_labels": OWNED}, cluster)
    assert result["changed"] is False and result["owned"] is False
    assert not cluster.nodes["win-1"].get("spec", {}).get("unschedulable")


def test_absent_and_drain_act_on_a_node_with_the_required_labels(run):
    cluster = FakeCluster()
    cluster.add_node("win-2", labels=dict(OWNED))
    drained = run({"name": "win-2", "state": "drained", "require_labels": OWNED}, cluster)
    assert drained["changed"] is True and drained["owned"] is True
    gone = run({"name": "win-2", "state": "absent", "require_labels": OWNED}, cluster)
    assert gone["changed"] is True and gone["owned"] is True and "win-2" not in cluster.nodes


def test_a_linux_node_with_the_managed_label_is_still_left_alone(run):
    cluster = FakeCluster()
    cluster.add_node("cp-1", labels={"kubernetes.io/os": "linux", "kubewin.nodes/managed": "true"})
    result = run({"name": "cp-1", "state": "absent", "require_labels": OWNED}, cluster)
    assert result["changed"] is False and "cp-1" in cluster.nodes
    assert "kubernetes.io/os=windows (has: 'linux')" in result["msg"]


def test_require_labels_is_refused_with_state_ready(run, cluster):
    result = run({"name": "win-1", "state": "ready", "require_labels": OWNED}, cluster)
    assert result["failed"] is True and "state=ready" in result["msg"]


# --- accept_legacy_labels: the transition from the node-writable ownership label (security-2 N4) ------

def test_a_node_with_only_the_legacy_labels_is_accepted_during_the_transition_with_a_warning(run):
    cluster = FakeCluster()
    cluster.add_node("win-2", labels=dict(OWNED))
    gone = run({"name": "win-2", "state": "absent", "require_labels": NEW_OWNED, "accept_legacy_labels": OWNED},
               cluster)
    assert gone["changed"] is True and gone["owned"] is True and "win-2" not in cluster.nodes
    warning = " ".join(str(w) for w in gone.get("warnings", []))
    assert "win-2" in warning and "kubewin.nodes/managed=true" in warning
    assert "node-restriction.kubernetes.io/kubewin-managed=true" in warning


def test_without_accept_legacy_labels_the_legacy_label_is_no_proof_of_ownership(run):
    cluster = FakeCluster()
    cluster.add_node("win-2", labels=dict(OWNED))
    result = run({"name": "win-2", "state": "drained", "require_labels": NEW_OWNED}, cluster)
    assert result["changed"] is False and result["owned"] is False
    assert "node-restriction.kubernetes.io/kubewin-managed=true (has: no such label)" in result["msg"]


def test_a_node_with_the_new_label_is_owned_without_a_transition_warning(run):
    cluster = FakeCluster()
    cluster.add_node("win-2", labels=dict(NEW_OWNED))
    result = run({"name": "win-2", "state": "drained", "require_labels": NEW_OWNED,
                  "accept_legacy_labels": OWNED}, cluster)
    assert result["owned"] is True and not result.get("warnings")


def test_a_linux_node_with_the_legacy_labels_stays_alone(run):
    cluster = FakeCluster()
    cluster.add_node("cp-1", labels={"kubernetes.io/os": "linux", "kubewin.nodes/managed": "true"})
    result = run({"name": "cp-1", "state": "absent", "require_labels": NEW_OWNED, "accept_legacy_labels": OWNED},
                 cluster)
    assert result["changed"] is False and "cp-1" in cluster.nodes


def test_accept_legacy_labels_needs_require_labels(run, cluster):
    result = run({"name": "win-1", "state": "absent", "accept_legacy_labels": OWNED}, cluster)
    assert result["failed"] is True and "require_labels" in result["msg"]


# --- several Nodes in one task (issue 22: one control-plane call for every node of the run) ---------------------

def test_nodes_ready_labels_each_with_the_tasks_labels_over_its_own(run, cluster):
    cluster.add_node("win-2", labels={"kubernetes.io/os": "windows"})
    result = run({"nodes": [{"name": "win-1", "labels": {"role": "a", "owner": "me"}},
                            {"name": "win-2", "taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]}],
                  "labels": {"owner": "kubewin"}, "state": "ready"}, cluster)
    assert result["_rc"] == 0 and result["changed"] is True and result["owned"] is True
    assert cluster.nodes["win-1"]["metadata"]["labels"]["role"] == "a"
    assert cluster.nodes["win-1"]["metadata"]["labels"]["owner"] == "kubewin"
    assert cluster.nodes["win-2"]["metadata"]["labels"]["owner"] == "kubewin"
    assert [t["key"] for t in cluster.nodes["win-2"]["spec"]["taints"]] == ["os"]
    assert set(result["nodes"]) == {"win-1", "win-2"} and result["nodes"]["win-2"]["node"]["ready"] is True
    assert run({"nodes": [{"name": "win-1"}, {"name": "win-2"}], "state": "ready"}, cluster)["changed"] is False


def test_nodes_one_not_ready_fails_the_task_naming_it_after_the_others_are_done(run, cluster):
    cluster.add_node("win-2", conditions=NOT_READY)
    cluster.add_node("win-3", ready=True)
    result = run({"nodes": [{"name": "win-2"}, {"name": "win-3", "labels": {"role": "b"}}], "state": "ready",
                  "wait_timeout": 30}, cluster)
    assert result["failed"] is True and "win-2" in result["msg"] and "did not become Ready" in result["msg"]
    assert result["nodes"]["win-2"]["failed"] is True
    assert cluster.nodes["win-3"]["metadata"]["labels"]["role"] == "b"


def test_nodes_absent_deletes_only_the_owned_ones(run, cluster):
    cluster.add_node("win-2", labels={"kubernetes.io/os": "windows", "owned": "yes"})
    result = run({"nodes": [{"name": "win-1"}, {"name": "win-2"}, {"name": "win-9"}], "state": "absent",
                  "require_labels": {"owned": "yes"}}, cluster)
    assert result["_rc"] == 0 and result["changed"] is True and result["owned"] is False
    assert set(cluster.nodes) == {"win-1"}
    assert result["nodes"]["win-1"]["owned"] is False and result["nodes"]["win-9"]["changed"] is False
