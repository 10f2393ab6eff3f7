"""The node role's configuration files as preflight works them out (kubewin_node_spec.config_files): byte for byte
what the role wrote before, through the filters cni_config and kubelet_log_query_config and Ansible's templating
(node_config_files_golden.json was rendered by them on ansible-core 2.18 and 2.19 alike), so a re-run on a node set up
by an older release writes nothing; and what stops preflight when they cannot be made."""

import json
from pathlib import Path

import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _preflight as preflight

GOLDEN = json.loads((Path(__file__).parent / "node_config_files_golden.json").read_text())


def inputs(case):
    c = case["inputs"]
    return dict(settings=c["settings"], host_settings=c["host_settings"], container_runtime=c["runtime"],
                cni_dirs=c["cni_dirs"], kube_version=c["given"] or None, server_version=c["server"])


@pytest.mark.parametrize("case", GOLDEN, ids=[c["id"] for c in GOLDEN])
def test_the_files_are_byte_for_byte_what_the_filters_rendered(case):
    node = {"name": "win-1", "ip": case["inputs"]["ip"], "subnet": case["inputs"]["subnet"]}
    files, failures = preflight.node_config_files(inputs(case), node)
    assert failures == []
    assert files == case["files"]


def test_the_golden_cases_cover_both_backends_runtimes_and_the_log_query_gate():
    contents = [json.loads(c["files"][0]["content"]) for c in GOLDEN]
    assert {c["name"] for c in contents} == {"cbr0", "flannel.4096", "flannel.4097"}
    assert {c["delegate"]["type"] for c in contents} == {"sdnoverlay", "sdnbridge", "win-overlay", "win-bridge"}
    gated = ["featureGates" in json.loads(c["files"][1]["content"]) for c in GOLDEN]
    assert True in gated and False in gated


@pytest.mark.parametrize("change, check, words", [
    ({"settings": {}}, "settings", "lack pods_subnet, service_subnet, dns_server, dns_domain"),
    ({"cni_dirs": None}, "cni_dirs", "CNI directories of containerd are unknown"),
    ({"container_runtime": "cri-o"}, "network", "kubewin_container_runtime must be containerd or docker"),
    ({"kube_version": "latest"}, "inputs", "kube_version 'latest' is not a Kubernetes version"),
])
def test_what_cannot_be_made_stops_preflight_naming_why(change, check, words):
    files, failures = preflight.node_config_files(dict(inputs(GOLDEN[0]), **change), {"ip": "192.168.10.21"})
    assert files is None and [f["check"] for f in failures] == [check]
    assert words in failures[0]["message"]
