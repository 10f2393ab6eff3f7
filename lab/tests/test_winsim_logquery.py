"""The simulated kubelet's /logs/ (lab/winsim/logquery.py): the node log query answered from the host's files as
kubernetes v1.37.2 pkg/kubelet/kubelet.go (lines 1884-1916) and kubelet_server_journal.go read them."""

import json
import os

import pytest
from winsim import core, logquery  # noqa: E402

DROPIN = "C:\\var\\lib\\kubelet\\config.d\\50-kubewin-node-log-query.conf"
KUBELET = ("C:\\k\\kube-log-runner.exe -log-file=C:\\var\\log\\kubelet\\kubelet.log C:\\k\\kubelet.exe "
           "--windows-service --config=C:\\var\\lib\\kubelet\\config.yaml%s")


def _put(host, win_path, text):
    local = host.local_path(win_path)
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "w") as f:
        f.write(text)


@pytest.fixture
def node(tmp_path):
    """A host whose kubelet service runs v<version> with config.yaml (and, when asked, --config-dir)."""
    root = str(tmp_path)

    def make(version="v1.37.2", dropin=None, flags=""):
        h = core.create_host(root, "w")
        core.write_binary(h.local_path("C:\\k\\kubelet.exe"), "kubelet", version)
        _put(h, "C:\\var\\lib\\kubelet\\config.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\n"
                                                     "kind: KubeletConfiguration\n")
        if dropin is not None:
            _put(h, DROPIN, json.dumps(dropin))
            flags += " --config-dir=C:\\var\\lib\\kubelet\\config.d"
        for name, text in (("kubelet\\kubelet.log", "I1128 kubelet line\n"),
                           ("kube-proxy\\kube-proxy.log", "I1128 kube-proxy line\n"),
                           ("flanneld\\flanneld.log", "I1128 flanneld line\n")):
            _put(h, "C:\\var\\log\\" + name, text)

        def put_service(st):
            st["services"]["kubelet"] = {"name": "kubelet", "image_path": KUBELET % flags, "status": "Running"}
        core.edit(root, "w", put_service)
        return root

    return make


ON = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", "enableSystemLogQuery": True}


@pytest.mark.parametrize("service", ["kubelet", "kube-proxy", "flanneld"])
def test_a_service_query_returns_its_file_under_var_log(node, service):
    root = node(dropin=ON)
    assert logquery.serve(root, "w", "", {"query": [service]}) == (200, "I1128 %s line\n" % service)


def test_containerd_query_finds_the_log_file_the_collection_registers_containerd_with(node):
    """review-s8 W3: containerd registers no event log provider, so the kubelet reads its file; the collection's
    --log-file (plugin_utils/_host/containerd.py LOG_FILE) is one the heuristics try (<s>\\<s>.log)."""
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import containerd as kc
    root = node(dropin=ON)
    assert logquery.serve(root, "w", "", {"query": ["containerd"]}) == (200, "\nlog not found for containerd\n")
    _put(core.Host(root, "w"), kc.LOG_FILE, 'time="x" level=info msg="starting containerd"\n')
    assert logquery.serve(root, "w", "", {"query": ["containerd"]}) == (
        200, 'time="x" level=info msg="starting containerd"\n')


def test_without_the_query_fields_logs_is_a_file_server_that_ignores_the_query(node):
    status, body = logquery.serve(node(), "w", "", {"query": ["kubelet"]})
    assert status == 200 and '<a href="kubelet/">kubelet/</a>' in body and "kubelet line" not in body


def test_1_35_needs_the_gate_or_the_kubelet_does_not_start(node):
    with pytest.raises(logquery.KubeletNotRunning, match="NodeLogQuery"):
        logquery.serve(node("v1.35.4", dropin=ON), "w", "", {"query": ["kubelet"]})
    root = node("v1.35.4", dropin=dict(ON, featureGates={"NodeLogQuery": True}))
    assert logquery.serve(root, "w", "", {"query": ["kubelet"]}) == (200, "I1128 kubelet line\n")


def test_a_log_elsewhere_is_not_found_and_options_are_refused_for_files(node):
    root = node(dropin=ON)
    assert logquery.serve(root, "w", "", {"query": ["containerd"]}) == (200, "\nlog not found for containerd\n")
    status, body = logquery.serve(root, "w", "", {"query": ["kubelet"], "tailLines": ["5"]})
    assert status == 200 and "options present and query resolved to log files for [kubelet]" in body
    assert logquery.serve(root, "w", "", {"query": ["kube proxy"]})[0] == 406
    assert logquery.serve(root, "w", "", {"query": ["kubelet"], "boot": ["-1"]})[0] == 406
