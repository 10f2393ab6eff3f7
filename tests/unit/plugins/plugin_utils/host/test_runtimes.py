"""The container runtimes' one home: the services, the named pipes and the CRI endpoints."""

import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import facts as node_facts
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import kubelet as kubelet_service
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import runtimes


def test_the_runtimes_own_pipes_as_windows_writes_them():
    assert runtimes.pipe_path("containerd") == "\\\\.\\pipe\\containerd-containerd"
    assert runtimes.pipe_path("docker") == "\\\\.\\pipe\\docker_engine"


def test_the_kubelet_reaches_docker_through_cri_dockerd():
    assert runtimes.cri_endpoint("containerd") == "npipe:////./pipe/containerd-containerd"
    assert runtimes.cri_endpoint("docker") == "npipe:////./pipe/cri-dockerd"
    assert kubelet_service.DEFAULT_DEPENDENCIES == {"containerd": ["containerd"], "docker": ["cri-dockerd"]}


def test_an_unknown_runtime_names_the_variable():
    with pytest.raises(ValueError, match="kubewin_container_runtime is 'crio'; it must be one of: containerd, docker"):
        runtimes.cri_endpoint("crio")


def test_node_facts_reads_each_runtimes_service_and_pipe():
    facts = node_facts.node_facts({
        "services": {"containerd": {"exists": True, "status": "Running",
                                    "version_output": "containerd github.com/containerd/containerd v1.7.13 x"},
                     "docker": {"exists": True, "status": "Stopped"}},
        "pipes": ["containerd-containerd"]})
    assert facts["runtimes"]["containerd"] == {"service_exists": True, "service_status": "Running",
                                               "pipe_exists": True, "version": "1.7.13"}
    assert facts["runtimes"]["docker"]["pipe_exists"] is False
    assert node_facts.script_parameters()["VersionOf"] == ["containerd", "docker"]
