"""Unit tests for plugins/module_utils/_cluster_info.py (cluster-info: endpoint, CA pins, JWS)."""

import base64
import hashlib
import hmac
import re
import shutil
import subprocess

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import _bootstrap_token as bt
from ansible_collections.kubewin.nodes.plugins.module_utils import _cluster_info as ci


@pytest.mark.parametrize("server,endpoint", [
    ("https://192.0.2.10:6443", "192.0.2.10:6443"),
    ("https://192.0.2.10:6443/", "192.0.2.10:6443"),
    ("https://k8s.example.com", "k8s.example.com:443"),
    ("https://[fd00::10]:6443", "[fd00::10]:6443"),
    ("https://[fd00::10]", "[fd00::10]:443"),
    ("192.0.2.10:6443", "192.0.2.10:6443"),
    ("http://localhost:8080", "localhost:8080"),
])
def test_endpoint_from_server(server, endpoint):
    assert ci.endpoint_from_server(server) == endpoint


needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl CLI not installed")


def _openssl(*args, data=None):
    return subprocess.run(["openssl", *args], input=data, capture_output=True, check=True).stdout


def _make_ca(tmp_path, name, key_args):
    key = tmp_path / (name + ".key")
    crt = tmp_path / (name + ".crt")
    _openssl("req", "-x509", "-new", "-nodes", *key_args, "-keyout", str(key), "-out", str(crt),
             "-days", "1", "-subj", "/CN=" + name)
    return crt.read_bytes()


def _openssl_pin(pem):
    """Independent pin: openssl x509 -pubkey | openssl pkey -pubin -outform der | openssl dgst -sha256."""
    pub = _openssl("x509", "-pubkey", "-noout", data=pem)
    der = _openssl("pkey", "-pubin", "-outform", "der", data=pub)
    digest = _openssl("dgst", "-sha256", "-r", data=der).decode().split()[0]
    return "sha256:" + digest


@needs_openssl
def test_ca_pin_matches_openssl(tmp_path):
    pem = _make_ca(tmp_path, "kubernetes", ["-newkey", "rsa:2048"])
    pins = ci.ca_cert_hashes(pem)
    assert pins == [_openssl_pin(pem)]
    assert re.match(r"^sha256:[0-9a-f]{64}$", pins[0])


@needs_openssl
def test_ca_bundle_gives_one_pin_per_certificate(tmp_path):
    rsa = _make_ca(tmp_path, "old-ca", ["-newkey", "rsa:2048"])
    ec = _make_ca(tmp_path, "new-ca", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"])
    pins = ci.ca_cert_hashes(rsa + b"\n" + ec)
    assert pins == [_openssl_pin(rsa), _openssl_pin(ec)]
    assert pins[0] != pins[1]


@needs_openssl
def test_cluster_info_kubeconfig_to_endpoint_and_pins(tmp_path):
    pem = _make_ca(tmp_path, "kubernetes", ["-newkey", "rsa:2048"])
    kubeconfig = (
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n"
        "    certificate-authority-data: %s\n    server: https://192.0.2.10:6443\n  name: \"\"\n"
        "contexts: null\ncurrent-context: \"\"\npreferences: {}\nusers: null\n"
    ) % base64.b64encode(pem).decode()
    server, ca = ci.cluster_info_details(kubeconfig)
    assert server == "https://192.0.2.10:6443"
    assert ci.ca_cert_hashes(ca) == [_openssl_pin(pem)]


def test_ca_pins_reject_non_certificates():
    with pytest.raises(bt.BootstrapTokenError):
        ci.ca_cert_hashes(b"not a certificate")


def test_cluster_info_without_clusters():
    with pytest.raises(bt.BootstrapTokenError):
        ci.cluster_info_details("apiVersion: v1\nkind: Config\nclusters: []\n")


# --- JWS ----------------------------------------------------------------------------------------

def test_jws_known_vector_computed_independently():
    content = "apiVersion: v1\nkind: Config\n"
    token_id, token_secret = "abcdef", "0123456789abcdef"

    def b64u(raw):
        return base64.urlsafe_b64encode(raw).rstrip(b"=")

    header = b64u(b'{"alg":"HS256","kid":"abcdef"}')
    mac = hmac.new(b"0123456789abcdef", header + b"." + b64u(content.encode()), hashlib.sha256).digest()
    expected = (header + b".." + b64u(mac)).decode()
    assert ci.compute_detached_jws(content, token_id, token_secret) == expected
    assert "=" not in expected


def test_jws_matches_upstream_kubernetes_vector():
    # k8s.io/cluster-bootstrap/token/jws/jws_test.go TestComputeDetachedSignature
    content = "Hello from the other side. I must have called a thousand times."
    assert ci.compute_detached_jws(content, "joshua", "my voice is my passcode") == (
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8")
    assert ci.compute_detached_jws("", "joshua", "my voice is my passcode") == (
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..7Ui1ALizW4jXphVUB7xUqC9vLYLL9RZeOFfVLoB7Tgk")


def test_jws_roundtrip_and_rejections():
    content = "apiVersion: v1\nclusters: []\n"
    sig = ci.compute_detached_jws(content, "abcdef", "0123456789abcdef")
    assert ci.verify_detached_jws(sig, content, "abcdef", "0123456789abcdef")
    assert not ci.verify_detached_jws(sig, content, "abcdef", "0123456789abcdeg")   # wrong key
    assert not ci.verify_detached_jws(sig, content, "zzzzzz", "0123456789abcdef")   # wrong kid
    assert not ci.verify_detached_jws(sig, content + " ", "abcdef", "0123456789abcdef")  # other content
    hdr, dummy, mac = sig.split(".")
    attached = hdr + "." + ci.b64url(content) + "." + mac
    assert not ci.verify_detached_jws(attached, content, "abcdef", "0123456789abcdef")
    none_hdr = ci.b64url('{"alg":"none","kid":"abcdef"}')
    assert not ci.verify_detached_jws(none_hdr + ".." + mac, content, "abcdef", "0123456789abcdef")
    assert not ci.verify_detached_jws("garbage", content, "abcdef", "0123456789abcdef")
    assert not ci.verify_detached_jws(None, content, "abcdef", "0123456789abcdef")
