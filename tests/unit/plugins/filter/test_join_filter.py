"""The join_configuration filter: k8s_join_token's join_args plus the node's own name and CRI socket."""

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.kubewin.nodes.plugins.filter.join import join_configuration
from ansible_collections.kubewin.nodes.plugins.module_utils import _kubeadm_join as kj

PIN = "sha256:" + "ab" * 32
TOKEN = "abcdef.0123456789abcdef"


def test_the_token_modules_join_args_become_the_join_configuration():
    args = kj.join_args("lb.example.com:8443", TOKEN, [PIN])
    doc = yaml.safe_load(join_configuration(args, "win-1", "npipe:////./pipe/containerd-containerd"))
    assert doc["discovery"]["bootstrapToken"] == {
        "apiServerEndpoint": "lb.example.com:8443", "token": TOKEN, "caCertHashes": [PIN]}
    assert doc["nodeRegistration"] == {"name": "win-1", "criSocket": "npipe:////./pipe/containerd-containerd"}


def test_a_refusal_names_the_problem_but_never_the_token():
    with pytest.raises(AnsibleFilterError) as exc:
        join_configuration(["lb.example.com:8443", "--token", TOKEN, "--node-name", "x"], "win-1", "npipe:////./pipe/x")
    assert "cannot build the kubeadm JoinConfiguration" in str(exc.value) and "0123456789abcdef" not in str(exc.value)
