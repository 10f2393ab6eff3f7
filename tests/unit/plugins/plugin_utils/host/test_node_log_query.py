"""The node log query: the kubelet drop-in per Kubernetes version, the --config-dir flag, and log files where the
kubelet's Windows implementation looks for a service's file (kubernetes v1.37.2 pkg/kubelet/kubelet_server_journal.go
heuristicsCopyFileLogs)."""

import json
import ntpath

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import kubelet as ks


@pytest.mark.parametrize("version, gates", [
    ("v1.34.4", {"NodeLogQuery": True}),  # Beta, off by default
    ("1.35.0", {"NodeLogQuery": True}),
    ("v1.36.3", None),  # GA, locked on: passing it would stop the kubelet once 1.39 removes the gate
    ("v1.37.2", None),
])
def test_the_drop_in_turns_the_query_on_with_the_gate_only_where_it_is_off(version, gates):
    doc = json.loads(ks.log_query_config(version))
    assert doc["apiVersion"] == "kubelet.config.k8s.io/v1beta1" and doc["kind"] == "KubeletConfiguration"
    assert doc["enableSystemLogHandler"] is True and doc["enableSystemLogQuery"] is True
    assert doc.get("featureGates") == gates


@pytest.mark.parametrize("version, match", [("latest", "kube_version 'latest'"), ("v1.26.9", "does not know")])
def test_a_version_without_the_query_is_refused(version, match):
    with pytest.raises(ValueError, match=match):
        ks.log_query_config(version)


def test_the_kubelet_reads_the_drop_in_directory():
    flags, _warnings = ks.compute_flags("v1.37.2", config_file=wp.KUBELET_CONFIG, config_dir=wp.KUBELET_DROPIN_DIR)
    assert flags["config-dir"] == "C:\\var\\lib\\kubelet\\config.d"
    assert list(flags).index("config-dir") == list(flags).index("config") + 1


def log_query_candidates(service):
    """The files the kubelet tries for a service without an event log provider, in its order:
    nodeLogDir "/var/log/" (C:\\var\\log on the kubelet's drive), then <s>, <s>.log, <s>/<s>.log."""
    root = "C:\\var\\log\\"
    return [root + service, root + service + ".log", root + service + "\\" + service + ".log"]


@pytest.mark.parametrize("service", ["kubelet", "kube-proxy", "flanneld"])
def test_each_service_logs_where_the_query_looks(service):
    assert wp.LOG_FILES[service] in log_query_candidates(service)
    assert ntpath.dirname(wp.LOG_FILES[service]) == wp.LOG_DIRS[service]


def test_rotation_from_1_34_with_the_size_and_age_asked_for():
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service_logs as sl
    argv = sl.log_runner_argv(["C:\\k\\kube-proxy.exe"], "C:\\l.log", (1, 34), max_size_mb=20, max_age_hours=48)
    assert argv == ["C:\\k\\kube-log-runner.exe", "-log-file=C:\\l.log", "-log-file-size=20Mi", "-log-file-age=48h",
                    "C:\\k\\kube-proxy.exe"]
    assert sl.log_runner_argv(["x"], "C:\\l.log", (1, 33)) == ["C:\\k\\kube-log-runner.exe", "-log-file=C:\\l.log", "x"]


@pytest.mark.parametrize("size, age, variable", [(0, 1, "kubewin_log_file_max_size_mb"),
                                                 ("10M", 1, "kubewin_log_file_max_size_mb"),
                                                 (5, -1, "kubewin_log_file_max_age_hours"),
                                                 (5, True, "kubewin_log_file_max_age_hours")])
def test_a_bad_size_or_age_is_refused_naming_the_variable(size, age, variable):
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network as nn
    with pytest.raises(nn.NetworkConfigError, match=variable):
        nn.flanneld_argv("192.0.2.20", "v1.37.2", max_size_mb=size, max_age_hours=age)
    with pytest.raises(nn.NetworkConfigError, match=variable):
        nn.kube_proxy_argv("win-1", "10.244.0.0/16", "host-gw", 4096, None, "v1.37.2", max_size_mb=size,
                           max_age_hours=age)
    with pytest.raises(ks.KubeletServiceError, match=variable):
        ks.render_command_line("C:\\k\\kubelet.exe", {}, "C:\\k\\kube-log-runner.exe", "C:\\l.log", "v1.37.2",
                               size, age)
