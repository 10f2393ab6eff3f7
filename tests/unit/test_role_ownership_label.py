"""The labels that mark a Node as one this collection joined (security-2 N4): the decisions that trust
ownership (reset's drain and delete, the HostProcess clean-up gate) must rest on a label no kubelet can set
or remove. NodeRestriction forbids kubelets exactly the labels under node-restriction.kubernetes.io/
(Kubernetes v1.37.2 plugin/pkg/admission/noderestriction/admission.go, getForbiddenLabels); any other key
(kubewin.nodes/managed, kubernetes.io/os, which is a kubelet label) a node may write on its own Node."""

import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLE = os.path.join(ROOT, "roles", "control_plane")


def load(*parts):
    with open(os.path.join(ROLE, *parts)) as f:
        return yaml.safe_load(f)


def node_writable(key):
    """Whether NodeRestriction lets a kubelet set or remove this label key (getForbiddenLabels' first rule)."""
    namespace = key.split("/", 1)[0] if "/" in key else ""
    return not (namespace == "node-restriction.kubernetes.io" or namespace.endswith(".node-restriction.kubernetes.io"))


def test_ownership_rests_on_a_label_kubelets_cannot_write():
    owned = load("vars", "main.yml")["_kubewin_owned_node_labels"]
    assert any(not node_writable(key) for key in owned), (
        "every ownership label is one a kubelet may set or remove on its own Node: %s" % sorted(owned))


def test_reset_decisions_use_the_ownership_labels():
    for name in ("reset_drain.yml", "reset_finish.yml"):
        text = open(os.path.join(ROLE, "tasks", name)).read()
        assert 'require_labels: "{{ _kubewin_owned_node_labels }}"' in text, name
    gate = open(os.path.join(ROLE, "tasks", "reset_hostprocess.yml")).read()
    assert "[_kubewin_owned_node_selector]" in gate
    assert "kubernetes.io/os=windows, kubewin.nodes/managed=true" not in gate  # the node-writable selector


def test_finalize_sets_the_ownership_label_on_every_node_it_joins():
    tasks = load("tasks", "finalize.yml")
    text = yaml.safe_dump(tasks)
    assert "_kubewin_owned_node_labels" in text
    # set last, so no user label (kubewin_node_labels) overrides it: the task's labels, which k8s_node applies over
    # each entry of nodes (test_k8s_node: test_nodes_ready_labels_each_with_the_tasks_labels_over_its_own)
    task = tasks[0]["block"][0]["kubewin.nodes.k8s_node"]
    assert task["labels"] == "{{ _kubewin_legacy_owned_node_labels | combine(_kubewin_owned_node_labels) }}"
    assert "'labels'" in task["nodes"]
