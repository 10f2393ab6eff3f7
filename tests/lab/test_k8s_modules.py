"""k8s_join_info, k8s_daemonset_os_pin and k8s_node run by real Ansible against the lab's real kube-apiserver.

Every module runs as Ansible runs it (``ansible localhost -m kubewin.nodes.<module>``), with the real
``kubernetes`` client. Objects are created with unique names in a namespace of their own and removed
afterwards; the cluster's own kube-proxy and flannel DaemonSets are only read (check mode).
Fake nodes are kwok nodes (annotation ``kwok.x-k8s.io/node: fake``): kwok keeps them Ready and runs
their pods.
"""

import json
import os
import secrets
import subprocess
import sys
import time

import pytest
import scenario  # noqa: E402  (lab/, on sys.path through tests/lab/conftest.py)
from kubernetes import client

LAB = scenario.LAB
ROOT = os.path.dirname(LAB)
ADMIN = os.environ.get("LAB_KUBECONFIG", os.path.join(LAB, "_run", "admin.conf"))
COLLECTIONS = os.path.join(ROOT, ".build", "collections")
OWN_TAINT = "kubewin.test/own"

if not os.path.exists(ADMIN):  # part of `make lab-test`, which starts the lab: never skip silently
    raise RuntimeError("the lab is not up (%s missing): run make lab-up" % ADMIN)

config = pytest.importorskip("kubernetes.config")


@pytest.fixture(scope="module")
def api():
    return config.new_client_from_config(config_file=ADMIN)


@pytest.fixture(scope="module")
def core(api):
    return client.CoreV1Api(api)


@pytest.fixture(scope="module")
def apps(api):
    return client.AppsV1Api(api)


def ansible(module, args, check=False, diff=False, timeout=180):
    """Run one module on localhost; return its result dict."""
    link = os.path.join(COLLECTIONS, "ansible_collections", "kubewin", "nodes")
    if not os.path.exists(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(ROOT, link)
    args = dict(args, kubeconfig=ADMIN)
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible"), "localhost", "-m", "kubewin.nodes." + module,
           "-a", json.dumps(args)]
    if check:
        cmd.append("--check")
    if diff:
        cmd.append("--diff")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_STDOUT_CALLBACK="json",
               ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_LOCALHOST_WARNING="false",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="false", ANSIBLE_PYTHON_INTERPRETER=sys.executable)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("ansible printed no JSON (rc %s): %s %s"
                             % (proc.returncode, proc.stdout, proc.stderr)) from None
    result = doc["plays"][0]["tasks"][0]["hosts"]["localhost"]
    assert "Traceback" not in json.dumps(result), result
    return result


def wait(predicate, timeout=60, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(1)
    raise AssertionError("timed out waiting for " + what)


@pytest.fixture
def suffix():
    return secrets.token_hex(3)


@pytest.fixture
def namespace(core, suffix):
    name = "kubewin-mods-" + suffix
    core.create_namespace({"metadata": {"name": name}})
    yield name
    core.delete_namespace(name)


@pytest.fixture
def kwok_node(core, suffix):
    name = "kubewin-node-" + suffix
    # The taint keeps other tests' pods (and coredns) off this node; only this file's pods tolerate it.
    core.create_node({"metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                                   "labels": {"kubernetes.io/os": "linux", "kubernetes.io/hostname": name}},
                      "spec": {"taints": [{"key": OWN_TAINT, "value": suffix, "effect": "NoSchedule"}]}})
    yield name
    try:
        core.delete_node(name)
    except client.exceptions.ApiException as exc:
        if exc.status != 404:
            raise


def _ds_body(name, node_selector=None, affinity=None):
    spec = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
            # Only on a node that does not exist: these DaemonSets must not land on other tests' nodes.
            "nodeSelector": dict(node_selector or {}, **{"kubewin.test/none": "none"})}
    if affinity:
        spec["affinity"] = affinity
    return {"metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


# --- k8s_join_info -----------------------------------------------------------------------------------

def test_cluster_info_reads_the_lab(kwok_node, core):
    wait(lambda: any(c.type == "Ready" and c.status == "True"
                     for c in (core.read_node(kwok_node).status.conditions or [])), what="kwok node Ready")
    result = ansible("k8s_join_info", {})
    assert result.get("failed") is not True, result
    assert result["changed"] is False
    version = open(os.path.join(LAB, "_run", "VERSION")).read().strip()
    assert result["server_version"]["git_version"] == version
    assert "%d.%d" % (result["server_version"]["major"], result["server_version"]["minor"]) in version
    flannel = result["flannel"]
    assert flannel["found"] is True and flannel["namespace"] == "kube-flannel" and flannel["name"] == "kube-flannel-cfg"
    assert flannel["network"] == "10.244.0.0/16"
    if flannel["backend_type"] == "vxlan":  # the lab default (LAB_FLANNEL_BACKEND)
        assert (flannel["vni"], flannel["port"], flannel["windows_compatible"]) == (4096, 4789, True)
    assert result["kubeadm_config"]["found"] is True
    assert result["kubeadm_config"]["pod_subnet"] == "10.244.0.0/16"
    assert result["kubeadm_config"]["service_subnet"] == "10.96.0.0/12"
    assert result["kubeadm_config"]["control_plane_endpoint"].startswith("127.0.0.1:")
    assert result["kubelet_config_present"] is True
    assert result["nodes"][kwok_node]["ready"] is True and result["nodes"][kwok_node]["os"] == "linux"


# --- k8s_daemonset_os_pin -------------------------------------------------------------------------------

def test_daemonset_os_pin(apps, namespace):
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]}}}
    apps.create_namespaced_daemon_set(namespace, _ds_body("loose"))
    apps.create_namespaced_daemon_set(namespace, _ds_body("by-selector", {"kubernetes.io/os": "linux"}))
    apps.create_namespaced_daemon_set(namespace, _ds_body("by-affinity", affinity=affinity))
    names = ["%s/%s" % (namespace, n) for n in ("loose", "by-selector", "by-affinity", "absent")]
    generations = {n: apps.read_namespaced_daemon_set(n, namespace).metadata.generation
                   for n in ("loose", "by-selector", "by-affinity")}

    check = ansible("k8s_daemonset_os_pin", {"daemonsets": names}, check=True, diff=True)
    assert check["changed"] is True and check["pinned"] == [names[0]], check
    loose = apps.read_namespaced_daemon_set("loose", namespace)
    assert "kubernetes.io/os" not in loose.spec.template.spec.node_selector

    failed = ansible("k8s_daemonset_os_pin", {"daemonsets": names, "missing": "fail"})
    assert failed["failed"] is True and names[3] in failed["msg"]

    result = ansible("k8s_daemonset_os_pin", {"daemonsets": names}, diff=True)
    assert result["changed"] is True, result
    assert result["pinned"] == [names[0]] and result["already_pinned"] == names[1:3] and result["missing"] == names[3:]
    assert result["daemonsets"][names[2]]["pinned_by"] == "node_affinity"
    loose = apps.read_namespaced_daemon_set("loose", namespace)
    assert loose.spec.template.spec.node_selector == {"kubernetes.io/os": "linux", "kubewin.test/none": "none"}
    # The pinned ones were not touched: same generation, so no rollout.
    for name in ("by-selector", "by-affinity"):
        assert apps.read_namespaced_daemon_set(name, namespace).metadata.generation == generations[name]

    again = ansible("k8s_daemonset_os_pin", {"daemonsets": names})
    assert again["changed"] is False and again["pinned"] == []


def test_daemonset_os_pin_defaults_on_the_lab_are_already_pinned():
    # Read-only (check mode): kubeadm's kube-proxy has the nodeSelector, flannel's manifest the affinity.
    result = ansible("k8s_daemonset_os_pin", {}, check=True)
    assert result.get("failed") is not True, result
    assert result["changed"] is False and result["pinned"] == []
    assert "kube-system/kube-proxy" in result["already_pinned"]
    assert "kube-flannel/kube-flannel-ds" in result["already_pinned"]
    assert result["missing"] == ["kube-system/kube-flannel"]


# --- k8s_node ---------------------------------------------------------------------------------------

def test_node_ready_labels_taints_cordon(core, kwok_node):
    args = {"name": kwok_node, "state": "ready", "wait_timeout": 60,
            "labels": {"kubewin.test/role": "windows-worker"},
            "taints": [{"key": "kubewin.test/os", "value": "windows", "effect": "NoSchedule"}]}
    first = ansible("k8s_node", args, diff=True)
    assert first.get("failed") is not True, first
    assert first["changed"] is True and first["node"]["ready"] is True
    assert first["node"]["labels"]["kubewin.test/role"] == "windows-worker"
    assert {"key": "kubewin.test/os", "value": "windows", "effect": "NoSchedule"} in first["node"]["taints"]
    assert ansible("k8s_node", args)["changed"] is False

    removed = ansible("k8s_node", {"name": kwok_node, "labels": {"kubewin.test/role": None},
                                   "taints": [{"key": "kubewin.test/os", "state": "absent"}]})
    assert removed["changed"] is True
    node = core.read_node(kwok_node)
    assert "kubewin.test/role" not in node.metadata.labels
    assert not any(t.key == "kubewin.test/os" for t in node.spec.taints or [])

    assert ansible("k8s_node", {"name": kwok_node, "state": "cordoned"}, check=True)["changed"] is True
    assert not core.read_node(kwok_node).spec.unschedulable
    assert ansible("k8s_node", {"name": kwok_node, "state": "cordoned"})["changed"] is True
    assert core.read_node(kwok_node).spec.unschedulable is True
    assert ansible("k8s_node", {"name": kwok_node, "state": "cordoned"})["changed"] is False
    assert ansible("k8s_node", {"name": kwok_node, "state": "uncordoned"})["changed"] is True
    assert not core.read_node(kwok_node).spec.unschedulable


def test_node_ready_timeout_names_conditions(core, suffix):
    # Not a kwok node: nothing reports its status, like a Windows host whose kubelet never started.
    name = "kubewin-dead-" + suffix
    core.create_node({"metadata": {"name": name}})
    try:
        result = ansible("k8s_node", {"name": name, "state": "ready", "wait_timeout": 4})
        assert result["failed"] is True
        assert "did not become Ready within 4s" in result["msg"] and "kubelet service on " + name in result["msg"]
    finally:
        core.delete_node(name)


def _pods_on(core, node, namespace):
    return [p for p in core.list_namespaced_pod(namespace, field_selector="spec.nodeName=" + node).items
            if not p.metadata.deletion_timestamp]


def test_node_drain_with_pdb_and_daemonset(core, apps, namespace, kwok_node, suffix):
    policy = client.PolicyV1Api(core.api_client)
    # No blanket toleration: it would also tolerate the cordon, and the evicted pod's replacement would
    # be scheduled straight back onto the node.
    pod_spec = {"nodeSelector": {"kubernetes.io/hostname": kwok_node},
                "tolerations": [{"key": OWN_TAINT, "operator": "Equal", "value": suffix, "effect": "NoSchedule"}],
                "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}
    apps.create_namespaced_deployment(namespace, {
        "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec}}})
    apps.create_namespaced_daemon_set(namespace, {
        "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}}, "spec": pod_spec}}})
    wait(lambda: len([p for p in _pods_on(core, kwok_node, namespace) if p.status.phase == "Running"]) == 2,
         what="web and agent pods Running on the kwok node")
    policy.create_namespaced_pod_disruption_budget(namespace, {
        "metadata": {"name": "web"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
    wait(lambda: (policy.read_namespaced_pod_disruption_budget("web", namespace).status.current_healthy or 0) >= 1,
         what="PDB status")

    check = ansible("k8s_node", {"name": kwok_node, "state": "drained"}, check=True)
    assert check["changed"] is True and len(check["evicted_pods"]) == 1 and check["evicted_pods"][0].startswith(
        namespace + "/web-")
    assert not core.read_node(kwok_node).spec.unschedulable

    refused = ansible("k8s_node", {"name": kwok_node, "state": "drained", "wait_timeout": 8})
    assert refused["failed"] is True and refused["changed"] is True, refused
    assert "disruption budget" in refused["msg"] and "PodDisruptionBudget" in refused["msg"]
    assert core.read_node(kwok_node).spec.unschedulable is True

    policy.delete_namespaced_pod_disruption_budget("web", namespace)
    drained = ansible("k8s_node", {"name": kwok_node, "state": "drained", "wait_timeout": 60})
    assert drained.get("failed") is not True, drained
    assert drained["changed"] is True and len(drained["evicted_pods"]) == 1
    # DaemonSet pods stay: this test's agent (and kube-proxy/flannel, which the lab runs on Linux kwok nodes).
    ours = [p for p in drained["skipped_pods"] if p.startswith(namespace + "/")]
    assert [p.startswith(namespace + "/agent-") for p in ours] == [True]
    left = _pods_on(core, kwok_node, namespace)
    assert [p.metadata.name.startswith("agent-") for p in left] == [True]

    again = ansible("k8s_node", {"name": kwok_node, "state": "drained"})
    assert again["changed"] is False and again["evicted_pods"] == []


def test_node_absent(core, kwok_node):
    assert ansible("k8s_node", {"name": kwok_node, "state": "absent"}, check=True)["changed"] is True
    core.read_node(kwok_node)
    gone = ansible("k8s_node", {"name": kwok_node, "state": "absent"})
    assert gone["changed"] is True and gone["node"]["name"] == kwok_node
    wait(lambda: kwok_node not in [n.metadata.name for n in core.list_node().items], what="node deleted")
    assert ansible("k8s_node", {"name": kwok_node, "state": "absent"})["changed"] is False


# --- one module run for every node (issue 22) -----------------------------------------------------------

def test_join_info_discovery_and_pin_survey_equal_what_their_own_modules_answer():
    """discover reads the endpoint, CA pins and what the pin would do in its one k8s_join_info run."""
    both = ansible("k8s_join_info", {"discovery": True, "pin_daemonsets": ["kube-system/kube-proxy",
                                                                          "kube-flannel/kube-flannel-ds"]})
    assert both.get("failed") is not True, both
    alone = ansible("k8s_join_token", {"state": "discovery"})
    assert both["discovery"] == {"api_server_endpoint": alone["api_server_endpoint"],
                                 "ca_cert_hashes": alone["ca_cert_hashes"]}
    pin = ansible("k8s_daemonset_os_pin", {"daemonsets": ["kube-system/kube-proxy", "kube-flannel/kube-flannel-ds"]},
                  check=True)
    assert both["daemonset_pins"]["to_pin"] == pin["pinned"] == []
    assert both["daemonset_pins"]["landing_on_windows"] == pin["landing_on_windows"]


def test_node_and_credentials_of_several_nodes_in_one_run_each(core, suffix):
    names = ["kubewin-many-%s-%d" % (suffix, i) for i in (1, 2)]
    for name in names:
        core.create_node({"metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                                       "labels": {"kubernetes.io/os": "linux"}},
                          "spec": {"taints": [{"key": OWN_TAINT, "value": suffix, "effect": "NoSchedule"}]}})
    try:
        ready = ansible("k8s_node", {"nodes": [{"name": names[0], "labels": {"kubewin.test/n": "1"}},
                                               {"name": names[1]}],
                                     "labels": {"kubewin.test/all": "yes"}, "state": "ready", "wait_timeout": 60})
        assert ready.get("failed") is not True, ready
        assert core.read_node(names[0]).metadata.labels["kubewin.test/n"] == "1"
        assert all(core.read_node(n).metadata.labels["kubewin.test/all"] == "yes" for n in names)
        creds = ansible("k8s_node_credentials", {"nodes": [{"name": n} for n in names]})
        assert creds.get("failed") is not True, creds.get("msg")
        # each node's kube-proxy binding names that node (kube-proxy runs with the kubelet's credential)
        rbac = client.RbacAuthorizationV1Api(core.api_client)
        for n in names:
            binding = rbac.read_cluster_role_binding("kubewin-kube-proxy-" + n)
            assert [(s.kind, s.name) for s in binding.subjects] == [("User", "system:node:" + n)]
        again = ansible("k8s_node_credentials", {"nodes": [{"name": n} for n in names]})
        assert again["changed"] is False and all(not r["changed"] for r in again["nodes"].values())
        gone = ansible("k8s_node", {"nodes": [{"name": n} for n in names], "state": "absent"})
        assert gone["changed"] is True and set(gone["nodes"]) == set(names)
    finally:
        ansible("k8s_node_credentials", {"nodes": [{"name": n} for n in names], "state": "absent"})
        for name in names:
            try:
                core.delete_node(name)
            except client.exceptions.ApiException as exc:
                if exc.status != 404:
                    raise
