import os
import re

import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import feature_gates as fg
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import kubelet as ks
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network as nn

POD_CIDR = "10.244.3.0/24"


def proxy_gates(version, backend="vxlan"):
    args = nn.kube_proxy_args("win-1", "10.244.0.0/16", backend, 4096, POD_CIDR, version)
    return [a for a in args if a.startswith("--feature-gates")]


@pytest.mark.parametrize("version, expected", [
    ("v1.19.4", ["--feature-gates=WinOverlay=true"]),   # beta, off by default: must be passed
    ("v1.20.0", []),                                     # on by default from 1.20
    ("v1.33.2", []),
    ("v1.34.0", []),                                     # GA and locked
    ("v1.36.3", []),                                     # the lab's upgrade-from version
    ("v1.37.2", []),                                     # the lab's version
])
def test_kube_proxy_gets_win_overlay_only_where_it_is_off_by_default(version, expected):
    assert proxy_gates(version) == expected


def test_host_gw_kube_proxy_gets_no_gate_at_any_version():
    assert proxy_gates("v1.19.4", "host-gw") == [] and proxy_gates("v1.37.2", "host-gw") == []


def test_kube_proxy_on_a_version_without_win_overlay_is_refused():
    with pytest.raises(nn.NetworkConfigError, match="does not know the feature gate WinOverlay"):
        proxy_gates("v1.13.0")


@pytest.mark.parametrize("version", [None, "", "latest"])
def test_kube_proxy_args_need_a_version(version):
    with pytest.raises(nn.NetworkConfigError, match="kube_version"):
        nn.kube_proxy_args("win-1", "10.244.0.0/16", "vxlan", 4096, POD_CIDR, version)


@pytest.mark.parametrize("version, gate, spec", [
    ((1, 33), "WinOverlay", {"default": True, "pre_release": "Beta", "locked": False}),
    ((1, 34), "WinOverlay", {"default": True, "pre_release": "GA", "locked": True}),
    ((1, 37), "WinDSR", {"default": True, "pre_release": "GA", "locked": True}),
    ((1, 33), "WinDSR", {"default": True, "pre_release": "Beta", "locked": False}),
    ((1, 31), "WindowsCPUAndMemoryAffinity", "unknown"),
    ((1, 37), "SomeGateNotInTheTable", None),
])
def test_gate_specs_per_version(version, gate, spec):
    assert fg.gate_spec(gate, version) == spec


def test_a_removed_gate_is_unknown_from_its_removal(monkeypatch):
    monkeypatch.setitem(fg.REMOVED, "WinOverlay", (1, 38))
    assert fg.gate_spec("WinOverlay", (1, 37))["locked"] is True
    assert fg.gate_spec("WinOverlay", (1, 38)) == "unknown"


def test_kubelet_drops_a_locked_gate_set_to_its_value_and_keeps_the_others():
    flags, warnings = ks.compute_flags("v1.37.2", None, {"feature-gates": "WinOverlay=true,MyGate=false"})
    assert flags["feature-gates"] == "MyGate=false"
    assert len(warnings) == 1 and "WinOverlay=true" in warnings[0] and "locked" in warnings[0]


def test_kubelet_drops_the_flag_when_only_locked_gates_were_given():
    flags, warnings = ks.compute_flags("v1.36.3", None, {"feature-gates": "WinDSR=true"})
    assert "feature-gates" not in flags and warnings


def test_kubelet_refuses_a_locked_gate_set_against_its_lock():
    with pytest.raises(ks.KubeletServiceError, match="WinDSR=false.*locked to true.*kubewin_kubelet_extra_args"):
        ks.compute_flags("v1.37.2", None, {"feature-gates": "WinDSR=false"})
    flags, warnings = ks.compute_flags("v1.33.2", None, {"feature-gates": "WinDSR=false"})
    assert flags["feature-gates"] == "WinDSR=false" and warnings == []  # beta in 1.33: may be turned off


def test_kubelet_refuses_a_gate_its_version_does_not_know():
    with pytest.raises(ks.KubeletServiceError, match="unrecognized feature gate: WindowsCPUAndMemoryAffinity"):
        ks.compute_flags("v1.31.0", None, {"feature-gates": "WindowsCPUAndMemoryAffinity=true"})


def test_kubelet_refuses_a_malformed_gate_list():
    with pytest.raises(ks.KubeletServiceError, match="not a feature gate setting"):
        ks.compute_flags("v1.37.2", None, {"feature-gates": "WinDSR"})


# The table against Kubernetes' own source, when the lab's Go module cache has it.
GOMODCACHE = os.environ.get("GOMODCACHE") or os.path.expanduser("~/go/pkg/mod")


def _source_specs(version):
    path = os.path.join(GOMODCACHE, "k8s.io", "kubernetes@%s" % version, "pkg", "features", "kube_features.go")
    if not os.path.exists(path):
        pytest.skip("no k8s.io/kubernetes@%s in the Go module cache (run make setup)" % version)
    with open(path) as f:
        text = f.read()
    specs = {}
    for name in fg.GATES:
        m = re.search(r"\n\t%s: \{\n(.*?)\n\t\},\n" % name, text, re.S)
        if m is None:
            specs[name] = None
            continue
        specs[name] = [((int(a), int(b)), d == "true", p, bool(lock))
                       for a, b, d, p, lock in re.findall(
                           r'version\.MustParse\("(\d+)\.(\d+)"\), Default: (true|false), '
                           r'PreRelease: featuregate\.(\w+)(, LockToDefault: true)?', m.group(1))]
    return specs


@pytest.mark.parametrize("version", ["v1.36.3", "v1.37.2"])
def test_table_matches_kube_features_go(version):
    assert _source_specs(version) == fg.GATES
