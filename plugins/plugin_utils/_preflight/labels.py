# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight: node labels and taints as the API server and the kubelet check them, before the host joins.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import difflib

from ansible_collections.kubewin.nodes.plugins.module_utils import _node_state as node_state
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.findings import Findings

LABELS_VAR = "kubewin_node_labels"
TAINTS_VAR = "kubewin_node_taints"

# The labels the kubelet sets on its own Node and puts back at every status update (kubernetes v1.37.2
# pkg/kubelet/kubelet_node_status.go, updateDefaultLabels): a value set through the API does not last.
KUBELET_MANAGED_LABELS = (
    "kubernetes.io/hostname", "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type", "kubernetes.io/os", "kubernetes.io/arch",
    "node.kubernetes.io/windows-build", "beta.kubernetes.io/os", "beta.kubernetes.io/arch",
)
# The labels the collection sets itself (roles/control_plane/vars/main.yml, _kubewin_owned_node_labels).
COLLECTION_LABELS = ("kubewin.nodes/managed", "node-restriction.kubernetes.io/kubewin-managed")

# What a kubelet may set on itself with --node-labels (kubernetes v1.37.2 cmd/kubelet/app/options/options.go
# ValidateKubeletFlags + k8s.io/kubelet pkg/apis/well_known_labels.go IsKubeletLabel; the NodeRestriction admission
# plugin refuses the others from a kubelet): in the kubernetes.io / k8s.io namespaces only these labels and the
# kubelet.kubernetes.io / node.kubernetes.io namespaces.
KUBELET_SELF_LABELS = (
    "kubernetes.io/hostname", "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type", "kubernetes.io/os", "kubernetes.io/arch",
    "beta.kubernetes.io/os", "beta.kubernetes.io/arch",
)
KUBELET_SELF_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")

# Taint effects (k8s.io/api core/v1 TaintEffect; kubernetes pkg/apis/core/validation validateTaintEffect).
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _namespace(key):
    return key.rpartition("/")[0]


def _is_kubernetes_label(key):
    ns = _namespace(key)
    return ns in ("kubernetes.io", "k8s.io") or ns.endswith(".kubernetes.io") or ns.endswith(".k8s.io")


def kubelet_may_set(key):
    """Whether the kubelet accepts ``key`` in --node-labels (and NodeRestriction lets a kubelet set it)."""
    if not _is_kubernetes_label(key) or key in KUBELET_SELF_LABELS:
        return True
    ns = _namespace(key)
    return any(ns == allowed or ns.endswith("." + allowed) for allowed in KUBELET_SELF_NAMESPACES)


def _label_problem(key, value, allow_null=True):
    if value is None and allow_null:
        value_ok = {}
    else:
        value_ok = {key: value}
    try:
        node_state.validate_label_key(key)
        node_state.normalize_labels(value_ok)
    except node_state.NodeStateError as e:
        return str(e)
    if value is None and not allow_null:
        return "label %s has no value" % key
    return None


def check_node_labels_taints(labels, taints):
    """kubewin_node_labels and kubewin_node_taints: the forms the API server accepts (apimachinery IsQualifiedName,
    IsValidLabelValue; taint effects), before the host joins; labels the kubelet or the collection own are refused."""
    f = Findings("node_labels")
    if labels is not None and not isinstance(labels, dict):
        f.fail(LABELS_VAR, "%s must be a mapping of label key to value (null removes a label), e.g. "
                           "{'example.com/pool': 'windows'}; it is %r" % (LABELS_VAR, labels))
        labels = {}
    for key, value in (labels or {}).items():
        problem = _label_problem(str(key), value)
        if problem:
            f.fail(LABELS_VAR, "%s: %s; fix it in %s" % (LABELS_VAR, problem, LABELS_VAR))
        elif str(key) in KUBELET_MANAGED_LABELS:
            f.fail(LABELS_VAR, "%s sets %s, which the kubelet sets on its own Node and puts back at every status "
                               "update (kubelet_node_status.go, updateDefaultLabels): remove it from %s"
                   % (LABELS_VAR, key, LABELS_VAR))
        elif str(key) in COLLECTION_LABELS:
            f.fail(LABELS_VAR, "%s sets %s, which this collection sets itself to mark the nodes it joined (reset "
                               "deletes only those): remove it from %s" % (LABELS_VAR, key, LABELS_VAR))
    t = Findings("node_taints")
    if taints is not None and not isinstance(taints, list):
        t.fail(TAINTS_VAR, "%s must be a list of taints, e.g. [{key: os, value: windows, effect: NoSchedule}]; "
                           "it is %r" % (TAINTS_VAR, taints))
        taints = []
    seen = {}
    for n, item in enumerate(taints or []):
        where = "%s[%d]" % (TAINTS_VAR, n)
        if isinstance(item, dict):
            unknown = sorted(set(item) - {"key", "value", "effect", "state"})
            if unknown:
                t.fail(TAINTS_VAR, "%s has the unknown field(s) %s; a taint has key, value, effect (%s) and "
                                   "optionally state (present/absent)" % (where, ", ".join(unknown),
                                                                          "/".join(TAINT_EFFECTS)))
                continue
            effect = item.get("effect")
            if effect is not None and effect not in TAINT_EFFECTS:
                close = difflib.get_close_matches(str(effect), TAINT_EFFECTS, n=1, cutoff=0.5)
                t.fail(TAINTS_VAR, "%s: effect %r is not a taint effect; it must be one of %s%s"
                       % (where, effect, ", ".join(TAINT_EFFECTS), " (did you mean %s?)" % close[0] if close else ""))
                continue
        try:
            normalized = node_state.normalize_taints([item])[0]
        except node_state.NodeStateError as e:
            t.fail(TAINTS_VAR, "%s: %s" % (where, e))
            continue
        if normalized["state"] == "present":
            pair = (normalized["key"], normalized["effect"])
            if pair in seen:
                t.fail(TAINTS_VAR, "%s repeats the taint %s with effect %s of %s[%d]: a Node's taints must be "
                                   "unique by key and effect (pkg/apis/core/validation validateNodeTaints)"
                       % (where, pair[0], pair[1], TAINTS_VAR, seen[pair]))
            seen.setdefault(pair, n)
    return f.failures + t.failures, f.warnings + t.warnings


def node_label_problems(value):
    """What the kubelet refuses in a --node-labels value (options.go ValidateKubeletFlags)."""
    problems, not_allowed = [], []
    for item in str(value).split(","):
        if not item.strip():
            continue
        key, sep, val = item.partition("=")
        if not sep:
            problems.append("%r has no '=' (key=value)" % item)
            continue
        problem = _label_problem(key.strip(), val.strip(), allow_null=False)
        if problem:
            problems.append(problem)
        elif not kubelet_may_set(key.strip()):
            not_allowed.append(key.strip())
    if not_allowed:
        problems.append("the kubelet refuses to set %s on itself: in the kubernetes.io and k8s.io namespaces "
                        "--node-labels takes only %s and labels under %s (cmd/kubelet/app/options/options.go, "
                        "NodeRestriction); put such a label in %s, which the control plane sets"
                        % (", ".join(not_allowed), ", ".join(KUBELET_SELF_LABELS), ", ".join(KUBELET_SELF_NAMESPACES),
                           LABELS_VAR))
    return problems


def taint_flag_problems(value):
    """What the kubelet refuses in --register-with-taints (key[=value]:Effect, comma-separated)."""
    problems = []
    for item in str(value).split(","):
        if not item.strip():
            continue
        head, sep, effect = item.strip().rpartition(":")
        if not sep:
            problems.append("%r has no ':<effect>'" % item)
            continue
        key, dummy, val = head.partition("=")
        taint = {"key": key, "value": val or None, "effect": effect}
        if effect not in TAINT_EFFECTS:
            problems.append("%r: effect %r is not one of %s" % (item, effect, ", ".join(TAINT_EFFECTS)))
            continue
        try:
            node_state.normalize_taints([taint])
        except node_state.NodeStateError as e:
            problems.append(str(e))
    return problems
