"""Per-node credential decisions: names, RBAC bound to the node's own identity, what older releases made and a run
retires, and drift of a binding's subjects."""

import json
import re

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import _node_credentials as nc

DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


def test_account_names_are_per_node_and_component():
    assert nc.account_name("kube-proxy", "win-1") == "kubewin-kube-proxy-win-1"
    assert nc.account_name("flanneld", "win-1") == "kubewin-flanneld-win-1"
    assert nc.account_name("flanneld", "win-1") != nc.account_name("flanneld", "win-2")


def test_long_node_names_are_capped_with_a_hash_and_stay_distinct():
    a = "w" * 60 + ".example.com"
    b = "w" * 60 + ".example.org"
    na, nb = nc.account_name("kube-proxy", a), nc.account_name("kube-proxy", b)
    assert len(na) <= 63 and len(nb) <= 63
    assert na != nb
    assert DNS1123.match(na) and DNS1123.match(nb)
    assert na == nc.account_name("kube-proxy", a)  # stable across runs


def test_a_node_name_kubernetes_would_refuse_names_the_variable():
    with pytest.raises(nc.NodeCredentialsError, match="kubewin_node_name"):
        nc.account_name("flanneld", "Win_1")


def test_flanneld_acts_as_its_node_and_may_only_read_nodes_through_rbac():
    """flanneld runs with the kubelet's credential: its writes (its own nodes/status) come from the Node authorizer
    and are restricted by NodeRestriction; RBAC adds only the informer's read of every Node."""
    objs = nc.desired_objects("win-1", {"kube-proxy": "kube-system", "flanneld": "kube-flannel"})
    assert objs["flanneld"]["account"] is None
    assert objs["flanneld"]["role"]["rules"] == [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]
    binding = objs["flanneld"]["binding"]
    assert binding["roleRef"]["name"] == "kubewin-flanneld-win-1"
    assert binding["subjects"] == [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io",
                                    "name": "system:node:win-1"}]
    # what an older release made for flanneld, deleted now
    assert objs["flanneld"]["retired_account"] == ("kube-flannel", "kubewin-flanneld-win-1")


def test_kube_proxy_acts_as_its_node_with_node_proxier_bound_to_that_node_only():
    """kube-proxy runs with the kubelet's credential: no ServiceAccount; its binding keeps kubeadm's role for
    kube-proxy and names the node's own user; the account an older release made is retired."""
    objs = nc.desired_objects("win-1", {"kube-proxy": "kube-system", "flanneld": "kube-flannel"})
    proxy = objs["kube-proxy"]
    assert proxy["account"] is None and proxy["role"] is None
    assert proxy["binding"]["metadata"]["name"] == "kubewin-kube-proxy-win-1"
    assert proxy["binding"]["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                           "name": "system:node-proxier"}
    assert proxy["binding"]["subjects"] == [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io",
                                             "name": "system:node:win-1"}]
    assert proxy["binding"]["metadata"]["labels"] == {"kubewin.nodes/managed": "true"}
    assert proxy["retired_account"] == ("kube-system", "kubewin-kube-proxy-win-1")


def test_an_older_binding_drifts_in_its_subjects_only():
    """roleRef cannot change (the API refuses it), subjects can: the old kube-proxy binding keeps its roleRef, so
    drift names the subjects and a patch brings it in line."""
    want = nc.desired_objects("win-1", {"kube-proxy": "kube-system", "flanneld": "kube-flannel"})["kube-proxy"]
    old = json.loads(json.dumps(want["binding"]))
    old["subjects"] = [{"kind": "ServiceAccount", "name": "kubewin-kube-proxy-win-1", "namespace": "kube-system"}]
    assert nc.drift(old, want["binding"], ["subjects"]) == ["subjects"]
    assert old["roleRef"] == want["binding"]["roleRef"]
    assert nc.drift(want["binding"], want["binding"], ["subjects"]) == []
