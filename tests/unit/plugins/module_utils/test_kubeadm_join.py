"""Unit tests for plugins/module_utils/_kubeadm_join.py (kubeadm join arguments and JoinConfiguration)."""

import pytest
import yaml

from ansible_collections.kubewin.nodes.plugins.module_utils import _bootstrap_token as bt
from ansible_collections.kubewin.nodes.plugins.module_utils import _kubeadm_join as kj


def test_join_args_one_flag_per_pin():
    pins = ["sha256:" + "a" * 64, "sha256:" + "b" * 64]
    args = kj.join_args("192.0.2.10:6443", "abcdef.0123456789abcdef", pins)
    assert args == ["192.0.2.10:6443", "--token", "abcdef.0123456789abcdef",
                    "--discovery-token-ca-cert-hash", pins[0], "--discovery-token-ca-cert-hash", pins[1]]
    assert kj.parse_join_args(args) == ("192.0.2.10:6443", "abcdef.0123456789abcdef", pins)


def test_join_args_refuse_without_pins():
    with pytest.raises(bt.BootstrapTokenError, match="unsafe"):
        kj.join_args("192.0.2.10:6443", "abcdef.0123456789abcdef", [])


@pytest.mark.parametrize("args", [
    None,
    ["192.0.2.10:6443", "--token", "abcdef.0123456789abcdef"],
    ["192.0.2.10:6443", "abcdef.0123456789abcdef", "--token", "--discovery-token-ca-cert-hash", "sha256:x"],
    ["192.0.2.10:6443", "--token", "abcdef.0123456789abcdef", "abcdef.0123456789abcdef", "sha256:x"],
])
def test_parse_join_args_refuses_other_lists_without_quoting_them(args):
    with pytest.raises(bt.BootstrapTokenError) as exc:
        kj.parse_join_args(args)
    assert "0123456789abcdef" not in str(exc.value)


# --- JoinConfiguration for kubeadm join --config ------------------------------------------------

PIN = "sha256:" + "ab" * 32


def test_join_configuration_is_a_v1beta4_join_configuration_with_the_token_inside():
    import yaml

    text = kj.join_configuration("192.0.2.10:6443", "abcdef.0123456789abcdef", [PIN], "win-1",
                                 "npipe:////./pipe/containerd-containerd")
    doc = yaml.safe_load(text)
    assert doc["apiVersion"] == "kubeadm.k8s.io/v1beta4" and doc["kind"] == "JoinConfiguration"
    assert doc["discovery"]["bootstrapToken"] == {
        "apiServerEndpoint": "192.0.2.10:6443", "token": "abcdef.0123456789abcdef", "caCertHashes": [PIN]}
    assert doc["discovery"]["tlsBootstrapToken"] == "abcdef.0123456789abcdef"
    assert doc["nodeRegistration"] == {"name": "win-1", "criSocket": "npipe:////./pipe/containerd-containerd"}
    assert "unsafeSkipCAVerification" not in text


@pytest.mark.parametrize("args, fragment", [
    (("192.0.2.10", "abcdef.0123456789abcdef", [PIN], "win-1", "npipe:////./pipe/x"), "not host:port"),
    (("192.0.2.10:6443", "abcdef.0123456789abcdef", [], "win-1", "npipe:////./pipe/x"), "no CA certificate pins"),
    (("192.0.2.10:6443", "abcdef.0123456789abcdef", ["md5:00"], "win-1", "npipe:////./pipe/x"), "sha256"),
    (("192.0.2.10:6443", "abcdef.0123456789abcdef", [PIN], "Win_1", "npipe:////./pipe/x"), "DNS-1123"),
    (("192.0.2.10:6443", "abcdef.0123456789abcdef", [PIN], "win-1", "unix:///run/x.sock"), "npipe://"),
    (("192.0.2.10:6443", "ABCDEF.0123456789ABCDEF", [PIN], "win-1", "npipe:////./pipe/x"), "malformed"),
])
def test_join_configuration_refuses_what_kubeadm_would_refuse(args, fragment):
    with pytest.raises(bt.BootstrapTokenError) as err:
        kj.join_configuration(*args)
    assert fragment in str(err.value)
    assert "0123456789" not in str(err.value)


def test_join_configuration_puts_the_ca_where_the_clusters_kubelet_reads_it():
    # kubespray's certificatesDir: the kubelet reads C:\etc\kubernetes\ssl\ca.crt, and kubeadm writes the CA only
    # to caCertPath (default C:/etc/kubernetes/pki/ca.crt), so the join must name the kubelet's path.
    pin = "sha256:" + "a" * 64
    text = kj.join_configuration("192.0.2.10:6443", "abcdef.0123456789abcdef", [pin], "win-1",
                                 "npipe:////./pipe/containerd-containerd", "C:\\etc\\kubernetes\\ssl\\ca.crt")
    assert yaml.safe_load(text)["caCertPath"] == "C:\\etc\\kubernetes\\ssl\\ca.crt"
    default = kj.join_configuration("192.0.2.10:6443", "abcdef.0123456789abcdef", [pin], "win-1",
                                    "npipe:////./pipe/containerd-containerd")
    assert "caCertPath" not in yaml.safe_load(default)
    with pytest.raises(bt.BootstrapTokenError, match="absolute Windows path"):
        kj.join_configuration("192.0.2.10:6443", "abcdef.0123456789abcdef", [pin], "win-1",
                              "npipe:////./pipe/containerd-containerd", "/etc/kubernetes/ssl/ca.crt")
