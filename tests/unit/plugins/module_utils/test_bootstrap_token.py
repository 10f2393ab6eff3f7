"""Unit tests for plugins/module_utils/_bootstrap_token.py (kubeadm bootstrap token logic)."""

import base64
import datetime
import json
import re
from collections import Counter

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import _bootstrap_token as bt
from ansible_collections.kubewin.nodes.plugins.module_utils import _go_formats as gf

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
    expiration = gf.format_rfc3339(NOW + left) if left is not None else None
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
    secret = bt.build_secret("aaaaaa", "aaaaaa0123456789", gf.format_rfc3339(now + 2 * H))
    assert bt.select_reusable_token([secret], "24h", "2h", now=now)["token_id"] == "aaaaaa"
    assert bt.select_reusable_token([secret], "24h", "2h1s", now=now) is None


def test_reuse_of_just_created_token():
    secret = bt.build_secret("aaaaaa", "aaaaaa0123456789", bt.expiration_for_ttl("24h", NOW))
    later = NOW + datetime.timedelta(seconds=5)
    assert bt.select_reusable_token([secret], "24h", "1h", now=later)["token_id"] == "aaaaaa"
