"""Unit tests for plugins/module_utils/_bootstrap_token.py (kubeadm bootstrap token logic)."""

import base64
import datetime
import hashlib
import hmac
import json
import re
import shutil
import subprocess
from collections import Counter

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import _bootstrap_token as bt

UTC = datetime.timezone.utc
NOW = datetime.datetime(2025, 3, 1, 12, 0, 0, 654321, tzinfo=UTC)


# --- tokens ---------------------------------------------------------------------------------

def test_generated_token_matches_kubeadm_format():
    for _dummy in range(200):
        token = bt.generate_token()
        assert re.fullmatch(r"[a-z0-9]{6}\.[a-z0-9]{16}", token), token


def test_generated_tokens_are_unique_and_use_whole_alphabet():
    tokens = [bt.generate_token() for dummy in range(2000)]
    assert len(set(tokens)) == len(tokens)
    assert len({t.split(".")[0] for t in tokens}) == len(tokens)
    counts = Counter("".join(t.replace(".", "") for t in tokens))
    # 44000 characters over 36 symbols: every symbol appears, none wildly over/under-represented
    # (a modulo-biased or hex-only generator fails this).
    assert set(counts) == set("0123456789abcdefghijklmnopqrstuvwxyz")
    expected = 44000 / 36
    assert all(0.8 * expected < n < 1.2 * expected for n in counts.values()), counts


def test_random_string_uses_secrets_module(monkeypatch):
    calls = []

    def fake_choice(seq):
        calls.append(seq)
        return seq[0]

    monkeypatch.setattr(bt.secrets, "choice", fake_choice)
    assert bt.generate_token() == "000000.0000000000000000"
    assert len(calls) == 22 and all(c == bt.TOKEN_ALPHABET for c in calls)


def test_parse_token_ok():
    assert bt.parse_token("abcdef.0123456789abcdef") == ("abcdef", "0123456789abcdef")


@pytest.mark.parametrize("bad", [
    "", "abcdef", "abcdef.", "abcde.0123456789abcdef", "abcdefg.0123456789abcdef",
    "abcdef.0123456789abcde", "abcdef.0123456789abcdefg", "ABCDEF.0123456789abcdef",
    "abcdef:0123456789abcdef", "abcdef.0123456789abcdeF", " abcdef.0123456789abcdef",
    "abcdef.0123456789abcdef\n", "abc_ef.0123456789abcdef",
])
def test_parse_token_rejects_malformed_without_echoing_it(bad):
    with pytest.raises(bt.BootstrapTokenError) as err:
        bt.parse_token(bad)
    message = str(err.value)
    assert "malformed" in message
    if len(bad) > 8:
        assert bad.strip() not in message


def test_parse_token_rejects_non_string():
    with pytest.raises(bt.BootstrapTokenError):
        bt.parse_token(None)


def test_validate_token_id():
    assert bt.validate_token_id("a1b2c3") == "a1b2c3"
    for bad in ("a1b2c", "A1B2C3", "a1b2c3d", "a1-2c3", None):
        with pytest.raises(bt.BootstrapTokenError):
            bt.validate_token_id(bad)


def test_secret_name_roundtrip():
    assert bt.secret_name("abcdef") == "bootstrap-token-abcdef"
    assert bt.token_id_from_secret_name("bootstrap-token-abcdef") == "abcdef"
    assert bt.token_id_from_secret_name("bootstrap-token-ABCDEF") is None
    assert bt.token_id_from_secret_name("default-token-abcdef") is None


# --- durations ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text,seconds", [
    ("24h", 86400), ("90m", 5400), ("1h30m", 5400), ("1.5h", 5400), ("0", 0), ("0s", 0),
    ("3600s", 3600), ("2h45m10s", 9910), ("+10m", 600), (".5m", 30), ("1500ms", 1.5),
    ("24h0m0s", 86400), ("1m30s500ms", 90.5),
])
def test_parse_duration(text, seconds):
    assert bt.parse_duration(text).total_seconds() == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["", "24", "3600", "h", "1d", "1 h", "-1h", "1h-5m", "abc", "1hh", True, None])
def test_parse_duration_rejects(bad):
    with pytest.raises(bt.BootstrapTokenError):
        bt.parse_duration(bad)


def test_parse_duration_bare_number_hint():
    with pytest.raises(bt.BootstrapTokenError, match="unit is required.*3600s"):
        bt.parse_duration("3600")


def test_format_duration_go_style():
    assert bt.format_duration(datetime.timedelta(hours=24)) == "24h0m0s"
    assert bt.format_duration(datetime.timedelta(minutes=90)) == "1h30m0s"
    assert bt.format_duration(datetime.timedelta(seconds=59)) == "59s"
    assert bt.format_duration(datetime.timedelta(0)) == "0s"


# --- expiry ---------------------------------------------------------------------------------------

def test_expiration_is_utc_rfc3339_with_z_and_no_fraction():
    exp = bt.expiration_for_ttl("24h", NOW)
    assert exp == "2025-03-02T12:00:00Z"
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", exp)


def test_expiration_converts_other_timezones_to_utc():
    cet = datetime.timezone(datetime.timedelta(hours=1))
    now = datetime.datetime(2025, 3, 1, 13, 0, 0, tzinfo=cet)
    assert bt.expiration_for_ttl("90m", now) == "2025-03-01T13:30:00Z"


def test_ttl_zero_means_no_expiration():
    assert bt.expiration_for_ttl("0", NOW) is None
    assert bt.remaining_ttl(None, NOW) is None
    assert not bt.is_expired(None, NOW)


def test_remaining_and_expired():
    assert bt.remaining_ttl("2025-03-01T13:00:00Z", NOW.replace(microsecond=0)) == datetime.timedelta(hours=1)
    assert bt.is_expired("2025-03-01T11:59:59Z", NOW)
    assert not bt.is_expired("2025-03-01T12:00:01Z", NOW)
    # offsets and fractions written by other tools are understood
    left = bt.remaining_ttl("2025-03-01T14:00:00.5+01:00", NOW.replace(microsecond=0))
    assert left == datetime.timedelta(seconds=3600.5)


def test_parse_rfc3339_rejects_garbage():
    for bad in ("2025-03-01 12:00:00", "2025-03-01T12:00:00", "tomorrow", "2025-13-01T00:00:00Z"):
        with pytest.raises(bt.BootstrapTokenError):
            bt.parse_rfc3339(bad)


# --- Secret body --------------------------------------------------------------------------------

def _decoded(secret):
    return {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}


def test_secret_body_is_exactly_kubeadms():
    secret = bt.build_secret("abcdef", "0123456789abcdef", "2025-03-02T12:00:00Z",
                             ["signing", "authentication"], ["system:bootstrappers:kubeadm:default-node-token"],
                             "join token")
    assert secret["apiVersion"] == "v1" and secret["kind"] == "Secret"
    assert secret["metadata"]["name"] == "bootstrap-token-abcdef"
    assert secret["metadata"]["namespace"] == "kube-system"
    assert secret["metadata"]["labels"] == {"kubewin.nodes/managed": "true"}
    assert secret["type"] == "bootstrap.kubernetes.io/token"
    assert _decoded(secret) == {
        "token-id": "abcdef",
        "token-secret": "0123456789abcdef",
        "expiration": "2025-03-02T12:00:00Z",
        "description": "join token",
        "usage-bootstrap-authentication": "true",
        "usage-bootstrap-signing": "true",
        "auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token",
    }
    assert set(secret) == {"apiVersion", "kind", "metadata", "type", "data"}


def test_secret_body_omits_expiration_for_ttl_zero_and_empty_description():
    secret = bt.build_secret("abcdef", "0123456789abcdef", bt.expiration_for_ttl("0", NOW), description="")
    data = _decoded(secret)
    assert "expiration" not in data
    assert "description" not in data
    assert data["auth-extra-groups"] == "system:bootstrappers:kubeadm:default-node-token"
    assert data["usage-bootstrap-signing"] == data["usage-bootstrap-authentication"] == "true"


def test_secret_body_groups_comma_separated_and_single_usage():
    groups = ["system:bootstrappers:kubeadm:default-node-token", "system:bootstrappers:windows"]
    data = _decoded(bt.build_secret("abcdef", "0123456789abcdef", usages=["authentication"], groups=groups))
    assert data["auth-extra-groups"] == ",".join(groups)
    assert "usage-bootstrap-signing" not in data


def test_secret_body_rejects_bad_secret():
    with pytest.raises(bt.BootstrapTokenError):
        bt.build_secret("abcdef", "short")


def test_secret_roundtrips_through_token_info():
    secret = bt.build_secret("abcdef", "0123456789abcdef", "2025-03-02T12:00:00Z", description="x")
    info = bt.token_info_from_secret(secret)
    assert info["valid"] and info["managed"]
    assert (info["token_id"], info["token_secret"]) == ("abcdef", "0123456789abcdef")
    assert info["usages"] == ["signing", "authentication"]
    assert info["groups"] == bt.DEFAULT_GROUPS
    assert info["expiration"] == "2025-03-02T12:00:00Z"


def test_token_info_flags_secret_kubernetes_would_ignore():
    secret = bt.build_secret("abcdef", "0123456789abcdef")
    secret["metadata"]["name"] = "bootstrap-token-zzzzzz"
    info = bt.token_info_from_secret(secret)
    assert not info["valid"] and "name" in info["problem"]
    secret = bt.build_secret("abcdef", "0123456789abcdef")
    secret["type"] = "Opaque"
    assert not bt.token_info_from_secret(secret)["valid"]


def test_redacted_secret_hides_token_secret():
    shown = bt.redacted_secret(bt.build_secret("abcdef", "0123456789abcdef"))
    assert "0123456789abcdef" not in json.dumps(shown)
    assert shown["data"]["token-id"] == "abcdef"


# --- groups and usages --------------------------------------------------------------------------

@pytest.mark.parametrize("good", [
    "system:bootstrappers:kubeadm:default-node-token", "system:bootstrappers:a", "system:bootstrappers:windows-2022",
    "system:bootstrappers:" + "a" * 256,
])
def test_valid_groups(good):
    assert bt.validate_groups([good]) == [good]


@pytest.mark.parametrize("bad", [
    "system:bootstrappers:", "system:bootstrappers:Upper", "system:bootstrappers:trailing-",
    "system:nodes", "system:bootstrappers:x y", "system:bootstrappers:" + "a" * 257,
    "xsystem:bootstrappers:a",
])
def test_invalid_groups(bad):
    with pytest.raises(bt.BootstrapTokenError, match="group"):
        bt.validate_groups([bad])


def test_groups_default_and_dedup():
    assert bt.validate_groups(None) == ["system:bootstrappers:kubeadm:default-node-token"]
    assert bt.validate_groups(["system:bootstrappers:a", "system:bootstrappers:a"]) == ["system:bootstrappers:a"]


def test_usages():
    assert bt.validate_usages(["authentication", "signing", "signing"]) == ["signing", "authentication"]
    with pytest.raises(bt.BootstrapTokenError, match="unknown"):
        bt.validate_usages(["signing", "encryption"])
    with pytest.raises(bt.BootstrapTokenError):
        bt.validate_usages([])


# --- reuse selection ----------------------------------------------------------------------------

def _token_secret(token_id, left=None, managed=True, usages=None, groups=None, deleting=False):
    expiration = bt.format_rfc3339(NOW + left) if left is not None else None
    secret = bt.build_secret(token_id, token_id + "0123456789", expiration, usages, groups, managed=managed)
    if deleting:
        secret["metadata"]["deletionTimestamp"] = "2025-03-01T11:00:00Z"
    return secret


H = datetime.timedelta(hours=1)


def test_reuse_picks_valid_managed_token_with_most_time_left():
    secrets = [
        _token_secret("aaaaaa", left=5 * H),
        _token_secret("bbbbbb", left=20 * H),
        _token_secret("cccccc", left=10 * H),
    ]
    picked = bt.select_reusable_token(secrets, "24h", "1h", now=NOW)
    assert picked["token_id"] == "bbbbbb"
    assert picked["token_secret"] == "bbbbbb0123456789"


@pytest.mark.parametrize("secret", [
    _token_secret("aaaaaa", left=20 * H, managed=False),                           # not ours
    _token_secret("aaaaaa", left=-H),                                               # expired
    _token_secret("aaaaaa", left=datetime.timedelta(minutes=30)),                   # near expiry
    _token_secret("aaaaaa", left=20 * H, usages=["authentication"]),                # wrong usages
    _token_secret("aaaaaa", left=20 * H, groups=["system:bootstrappers:other"]),    # wrong groups
    _token_secret("aaaaaa", left=None),                                             # never expires, ttl asked
    _token_secret("aaaaaa", left=48 * H),                                           # lives longer than asked
    _token_secret("aaaaaa", left=20 * H, deleting=True),                            # being deleted
])
def test_reuse_ignores_unsuitable_tokens(secret):
    assert bt.select_reusable_token([secret], "24h", "1h", now=NOW) is None


def test_reuse_ignores_invalid_secret():
    secret = _token_secret("aaaaaa", left=20 * H)
    secret["metadata"]["name"] = "bootstrap-token-bbbbbb"
    assert bt.select_reusable_token([secret], "24h", "1h", now=NOW) is None


def test_reuse_ttl_zero_only_picks_non_expiring():
    secrets = [_token_secret("aaaaaa", left=20 * H), _token_secret("bbbbbb", left=None)]
    assert bt.select_reusable_token(secrets, "0", "1h", now=NOW)["token_id"] == "bbbbbb"
    assert bt.select_reusable_token(secrets[:1], "0", "1h", now=NOW) is None


def test_reuse_threshold_is_inclusive():
    now = NOW.replace(microsecond=0)
    secret = bt.build_secret("aaaaaa", "aaaaaa0123456789", bt.format_rfc3339(now + 2 * H))
    assert bt.select_reusable_token([secret], "24h", "2h", now=now)["token_id"] == "aaaaaa"
    assert bt.select_reusable_token([secret], "24h", "2h1s", now=now) is None


def test_reuse_of_just_created_token():
    secret = bt.build_secret("aaaaaa", "aaaaaa0123456789", bt.expiration_for_ttl("24h", NOW))
    later = NOW + datetime.timedelta(seconds=5)
    assert bt.select_reusable_token([secret], "24h", "1h", now=later)["token_id"] == "aaaaaa"


# --- cluster-info, endpoint and CA pins ------------------------------------------------------

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
    assert bt.endpoint_from_server(server) == endpoint


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
    pins = bt.ca_cert_hashes(pem)
    assert pins == [_openssl_pin(pem)]
    assert re.match(r"^sha256:[0-9a-f]{64}$", pins[0])


@needs_openssl
def test_ca_bundle_gives_one_pin_per_certificate(tmp_path):
    rsa = _make_ca(tmp_path, "old-ca", ["-newkey", "rsa:2048"])
    ec = _make_ca(tmp_path, "new-ca", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"])
    pins = bt.ca_cert_hashes(rsa + b"\n" + ec)
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
    server, ca = bt.cluster_info_details(kubeconfig)
    assert server == "https://192.0.2.10:6443"
    assert bt.ca_cert_hashes(ca) == [_openssl_pin(pem)]


def test_ca_pins_reject_non_certificates():
    with pytest.raises(bt.BootstrapTokenError):
        bt.ca_cert_hashes(b"not a certificate")


def test_cluster_info_without_clusters():
    with pytest.raises(bt.BootstrapTokenError):
        bt.cluster_info_details("apiVersion: v1\nkind: Config\nclusters: []\n")


# --- JWS ----------------------------------------------------------------------------------------

def test_jws_known_vector_computed_independently():
    content = "apiVersion: v1\nkind: Config\n"
    token_id, token_secret = "abcdef", "0123456789abcdef"

    def b64u(raw):
        return base64.urlsafe_b64encode(raw).rstrip(b"=")

    header = b64u(b'{"alg":"HS256","kid":"abcdef"}')
    mac = hmac.new(b"0123456789abcdef", header + b"." + b64u(content.encode()), hashlib.sha256).digest()
    expected = (header + b".." + b64u(mac)).decode()
    assert bt.compute_detached_jws(content, token_id, token_secret) == expected
    assert "=" not in expected


def test_jws_matches_upstream_kubernetes_vector():
    # k8s.io/cluster-bootstrap/token/jws/jws_test.go TestComputeDetachedSignature
    content = "Hello from the other side. I must have called a thousand times."
    assert bt.compute_detached_jws(content, "joshua", "my voice is my passcode") == (
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8")
    assert bt.compute_detached_jws("", "joshua", "my voice is my passcode") == (
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..7Ui1ALizW4jXphVUB7xUqC9vLYLL9RZeOFfVLoB7Tgk")


def test_jws_roundtrip_and_rejections():
    content = "apiVersion: v1\nclusters: []\n"
    sig = bt.compute_detached_jws(content, "abcdef", "0123456789abcdef")
    assert bt.verify_detached_jws(sig, content, "abcdef", "0123456789abcdef")
    assert not bt.verify_detached_jws(sig, content, "abcdef", "0123456789abcdeg")   # wrong key
    assert not bt.verify_detached_jws(sig, content, "zzzzzz", "0123456789abcdef")   # wrong kid
    assert not bt.verify_detached_jws(sig, content + " ", "abcdef", "0123456789abcdef")  # other content
    hdr, dummy, mac = sig.split(".")
    attached = hdr + "." + bt.b64url(content) + "." + mac
    assert not bt.verify_detached_jws(attached, content, "abcdef", "0123456789abcdef")
    none_hdr = bt.b64url('{"alg":"none","kid":"abcdef"}')
    assert not bt.verify_detached_jws(none_hdr + ".." + mac, content, "abcdef", "0123456789abcdef")
    assert not bt.verify_detached_jws("garbage", content, "abcdef", "0123456789abcdef")
    assert not bt.verify_detached_jws(None, content, "abcdef", "0123456789abcdef")


# --- kubeadm join arguments ---------------------------------------------------------------------

def test_join_args_one_flag_per_pin():
    pins = ["sha256:" + "a" * 64, "sha256:" + "b" * 64]
    args = bt.join_args("192.0.2.10:6443", "abcdef.0123456789abcdef", pins)
    assert args == ["192.0.2.10:6443", "--token", "abcdef.0123456789abcdef",
                    "--discovery-token-ca-cert-hash", pins[0], "--discovery-token-ca-cert-hash", pins[1]]
    assert bt.parse_join_args(args) == ("192.0.2.10:6443", "abcdef.0123456789abcdef", pins)


def test_join_args_refuse_without_pins():
    with pytest.raises(bt.BootstrapTokenError, match="unsafe"):
        bt.join_args("192.0.2.10:6443", "abcdef.0123456789abcdef", [])


@pytest.mark.parametrize("args", [
    None,
    ["192.0.2.10:6443", "--token", "abcdef.0123456789abcdef"],
    ["192.0.2.10:6443", "abcdef.0123456789abcdef", "--token", "--discovery-token-ca-cert-hash", "sha256:x"],
    ["192.0.2.10:6443", "--token", "abcdef.0123456789abcdef", "abcdef.0123456789abcdef", "sha256:x"],
])
def test_parse_join_args_refuses_other_lists_without_quoting_them(args):
    with pytest.raises(bt.BootstrapTokenError) as exc:
        bt.parse_join_args(args)
    assert "0123456789abcdef" not in str(exc.value)


# --- JoinConfiguration for kubeadm join --config ------------------------------------------------

PIN = "sha256:" + "ab" * 32


def test_join_configuration_is_a_v1beta4_join_configuration_with_the_token_inside():
    import yaml

    text = bt.join_configuration("192.0.2.10:6443", "abcdef.0123456789abcdef", [PIN], "win-1",
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
        bt.join_configuration(*args)
    assert fragment in str(err.value)
    assert "0123456789" not in str(err.value)
