# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Pod Security Admission label the HostProcess mode (kubewin_deployment_mode: hostprocess) changes, and puts
back on reset: the Namespaces k8s_join_info returns in ``pod_security`` for the control_plane role to apply.

Pod Security Admission admits ``hostProcess: true`` only at the ``privileged`` level (kubernetes.io, Pod Security
Standards, "HostProcess" control of the Baseline policy), set per namespace by the label
``pod-security.kubernetes.io/enforce``.
"""

from __future__ import annotations

ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
# The enforce value the namespace had before kubewin.nodes set it to privileged; "" when it had none.
PRIOR_ANNOTATION = "kubewin.nodes/pod-security-enforce-before"
# The namespaces the HostProcess pods run in besides flannel's (kube-proxy-windows; roles/control_plane/templates),
# and flannel's when the cluster has no flannel ConfigMap (the control_plane role's _kubewin_flannel_namespace).
KUBE_PROXY_NAMESPACE = "kube-system"
DEFAULT_FLANNEL_NAMESPACE = "kube-flannel"


def _meta(namespace):
    meta = (namespace or {}).get("metadata") or {}
    return meta.get("labels") or {}, meta.get("annotations") or {}


def enable(namespace):
    """Merge patch for a Namespace (as read) so it admits HostProcess pods, or {} when it already does.
    Only the enforce label changes; its value before is recorded in PRIOR_ANNOTATION (once: a record
    from an earlier run is kept, so reset puts back what was there before kubewin.nodes)."""
    labels, annotations = _meta(namespace)
    if labels.get(ENFORCE_LABEL) == "privileged":
        return {}
    patch = {"labels": {ENFORCE_LABEL: "privileged"}}
    if PRIOR_ANNOTATION not in annotations:
        patch["annotations"] = {PRIOR_ANNOTATION: labels.get(ENFORCE_LABEL) or ""}
    return {"metadata": patch}


def revert(namespace):
    """Merge patch that puts back the enforce label recorded by :func:`enable` (removes it when there was none)
    and drops the record, or {} when kubewin.nodes changed nothing there."""
    labels, annotations = _meta(namespace)
    if PRIOR_ANNOTATION not in annotations:
        return {}
    prior = annotations[PRIOR_ANNOTATION] or None
    return {"metadata": {"labels": {ENFORCE_LABEL: prior}, "annotations": {PRIOR_ANNOTATION: None}}}


def _namespace(name, patch):
    """The Namespace definition that applies ``patch`` (a merge patch) to the namespace ``name``."""
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": dict(patch["metadata"], name=name)}


def changes(namespaces, flannel_namespace):
    """``namespaces``: every Namespace of the cluster (as listed); ``flannel_namespace``: where flannel's ConfigMap
    is (None when none was found). -> {enable: the Namespace definitions that let the namespaces of the HostProcess
    pods admit them (one that does not exist is created so), revert: those that put back what :func:`enable` changed
    anywhere}, each to apply with a merge patch."""
    by_name = {((ns or {}).get("metadata") or {}).get("name"): ns for ns in namespaces or []}
    wanted = list(dict.fromkeys([flannel_namespace or DEFAULT_FLANNEL_NAMESPACE, KUBE_PROXY_NAMESPACE]))
    out = {"enable": [], "revert": []}
    for name in wanted:
        patch = enable(by_name.get(name) or {})
        if patch:
            out["enable"].append(_namespace(name, patch))
    for name, ns in by_name.items():
        patch = revert(ns)
        if patch:
            out["revert"].append(_namespace(name, patch))
    return out
