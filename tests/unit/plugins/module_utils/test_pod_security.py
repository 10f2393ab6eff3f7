"""The Pod Security label the HostProcess mode changes and reset puts back (module_utils/_pod_security.py, returned by
k8s_join_info's pod_security; before, the filters pod_security_enable and pod_security_reverts: same patches)."""

from ansible_collections.kubewin.nodes.plugins.module_utils import _pod_security as ps


def _reverts(namespaces):
    """{name, patch} of each Namespace definition revert gives."""
    out = []
    for d in ps.changes(namespaces, "kube-flannel")["revert"]:
        meta = dict(d["metadata"])
        out.append({"name": meta.pop("name"), "patch": {"metadata": meta}})
    return out


def _ns(labels=None, annotations=None):
    return {"metadata": {"name": "kube-flannel", "labels": labels or {}, "annotations": annotations or {}}}


def test_only_the_enforce_label_changes_and_its_value_before_is_recorded_once():
    patch = ps.enable(_ns({ps.ENFORCE_LABEL: "baseline", "pod-security.kubernetes.io/warn": "restricted"}))
    assert patch == {"metadata": {"labels": {ps.ENFORCE_LABEL: "privileged"},
                                  "annotations": {ps.PRIOR_ANNOTATION: "baseline"}}}
    assert ps.enable(_ns({ps.ENFORCE_LABEL: "privileged"})) == {}  # nothing to do, nothing recorded
    # none before: recorded as "", so reset removes the label again
    assert ps.enable(_ns())["metadata"]["annotations"] == {ps.PRIOR_ANNOTATION: ""}
    # someone set it back to restricted after an earlier run: the first record (what was there before) stays
    again = ps.enable(_ns({ps.ENFORCE_LABEL: "restricted"}, {ps.PRIOR_ANNOTATION: "baseline"}))
    assert again == {"metadata": {"labels": {ps.ENFORCE_LABEL: "privileged"}}}


def test_reset_puts_back_what_was_recorded_and_leaves_other_namespaces_alone():
    namespaces = [_ns({ps.ENFORCE_LABEL: "privileged"}, {ps.PRIOR_ANNOTATION: "baseline"}),
                  {"metadata": {"name": "kube-system", "labels": {ps.ENFORCE_LABEL: "privileged"},
                                "annotations": {ps.PRIOR_ANNOTATION: ""}}},
                  {"metadata": {"name": "default", "labels": {ps.ENFORCE_LABEL: "privileged"}}}]
    assert _reverts(namespaces) == [
        {"name": "kube-flannel", "patch": {"metadata": {"labels": {ps.ENFORCE_LABEL: "baseline"},
                                                        "annotations": {ps.PRIOR_ANNOTATION: None}}}},
        {"name": "kube-system", "patch": {"metadata": {"labels": {ps.ENFORCE_LABEL: None},
                                                       "annotations": {ps.PRIOR_ANNOTATION: None}}}}]
