"""daemonset_os: when a DaemonSet already stays off Windows, and the plan."""

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import _daemonset_os as dso


def _ds(node_selector=None, terms=None, namespace="kube-system", name="ds"):
    spec = {}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if terms is not None:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": terms}}}
    return {"metadata": {"namespace": namespace, "name": name}, "spec": {"template": {"spec": spec}}}


def _expr(operator, values, key="kubernetes.io/os"):
    return {"key": key, "operator": operator, "values": values}


@pytest.mark.parametrize("ds, how", [
    (_ds({"kubernetes.io/os": "linux"}), "node_selector"),
    (_ds({"kubernetes.io/os": "linux", "x": "y"}), "node_selector"),
    (_ds(terms=[{"matchExpressions": [_expr("In", ["linux"])]}]), "node_affinity"),
    (_ds(terms=[{"matchExpressions": [_expr("NotIn", ["windows"])]}]), "node_affinity"),
    (_ds(terms=[{"matchExpressions": [_expr("In", ["amd64"], "kubernetes.io/arch"), _expr("In", ["linux"])]}]),
     "node_affinity"),
    # Terms are ORed: one term that allows Windows is enough to land there.
    (_ds(terms=[{"matchExpressions": [_expr("In", ["linux"])]},
                {"matchExpressions": [_expr("In", ["amd64"], "kubernetes.io/arch")]}]), None),
    (_ds(terms=[{"matchExpressions": [_expr("In", ["linux", "windows"])]}]), None),
    (_ds(terms=[]), None),
    (_ds({"beta.kubernetes.io/arch": "amd64"}), None),
    (_ds(), None),
])
def test_pin_status(ds, how):
    assert dso.pin_status(ds) == (how, None)


def test_other_os_is_a_conflict():
    how, conflict = dso.pin_status(_ds({"kubernetes.io/os": "windows"}, name="kube-proxy-windows"))
    assert how is None and "kube-system/kube-proxy-windows" in conflict


def test_parse_refs():
    assert dso.parse_refs(["a/b", " a/b ", "c/d"]) == [("a", "b"), ("c", "d")]
    for bad in ["a", "a/b/c", "/b", "a/"]:
        with pytest.raises(dso.DaemonSetPinError):
            dso.parse_refs([bad])


def test_plan():
    refs = [("kube-system", "kube-proxy"), ("kube-system", "kube-flannel"), ("kube-flannel", "kube-flannel-ds")]
    found = {refs[0]: _ds({"kubernetes.io/os": "linux"}), refs[1]: _ds({"a": "b"}), refs[2]: None}
    plan = dso.plan(refs, found)
    assert plan["to_pin"] == ["kube-system/kube-flannel"]
    assert plan["already_pinned"] == ["kube-system/kube-proxy"]
    assert plan["missing"] == ["kube-flannel/kube-flannel-ds"]
    assert plan["diff"]["after"]["kube-system/kube-flannel"]["nodeSelector"] == {"a": "b", "kubernetes.io/os": "linux"}
    assert dso.pin_patch() == {"spec": {"template": {"spec": {"nodeSelector": {"kubernetes.io/os": "linux"}}}}}
