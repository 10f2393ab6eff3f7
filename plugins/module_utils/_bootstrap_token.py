# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Kubernetes bootstrap tokens, the way kubeadm makes and uses them.

Plain functions with no Kubernetes API access, shared by the
``kubewin.nodes.k8s_join_token`` module and unit-tested on their own:
token generation/parsing/validation, Go-style duration parsing, expiry maths,
the bootstrap-token Secret body, reuse selection, CA public key pins,
the detached JWS that kube-controller-manager's bootstrapsigner writes into
``kube-public/cluster-info``, and the ``kubeadm join`` command line.

Sources: kubernetes/kubernetes staging/src/k8s.io/cluster-bootstrap
(token/api, token/util, token/jws, util/secrets) and
cmd/kubeadm/app/util/pubkeypin.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import hmac
import json
import re
import secrets

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    HAS_CRYPTOGRAPHY = True
    CRYPTOGRAPHY_IMPORT_ERROR = None
except ImportError as exc:  # pragma: no cover - exercised only without cryptography
    HAS_CRYPTOGRAPHY = False
    CRYPTOGRAPHY_IMPORT_ERROR = exc

try:
    import yaml

    HAS_YAML = True
except ImportError:  # pragma: no cover - PyYAML ships with ansible-core
    HAS_YAML = False


# --- constants (k8s.io/cluster-bootstrap/token/api) ---------------------------

TOKEN_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
TOKEN_ID_LENGTH = 6
TOKEN_SECRET_LENGTH = 16
TOKEN_RE = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
TOKEN_ID_RE = re.compile(r"^[a-z0-9]{6}$")
GROUP_RE = re.compile(r"^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$")

SECRET_TYPE = "bootstrap.kubernetes.io/token"
SECRET_NAMESPACE = "kube-system"
SECRET_NAME_PREFIX = "bootstrap-token-"

KEY_TOKEN_ID = "token-id"
KEY_TOKEN_SECRET = "token-secret"
KEY_EXPIRATION = "expiration"
KEY_DESCRIPTION = "description"
KEY_EXTRA_GROUPS = "auth-extra-groups"
USAGE_PREFIX = "usage-bootstrap-"

KNOWN_USAGES = ("signing", "authentication")
DEFAULT_USAGES = ["signing", "authentication"]
DEFAULT_GROUPS = ["system:bootstrappers:kubeadm:default-node-token"]
DEFAULT_TTL = "24h"

MANAGED_LABEL_KEY = "kubewin.nodes/managed"
MANAGED_LABEL_VALUE = "true"
MANAGED_LABEL_SELECTOR = "%s=%s" % (MANAGED_LABEL_KEY, MANAGED_LABEL_VALUE)
DEFAULT_DESCRIPTION = "Bootstrap token created by the kubewin.nodes Ansible collection to join Windows nodes"

CLUSTER_INFO_NAMESPACE = "kube-public"
CLUSTER_INFO_NAME = "cluster-info"
CLUSTER_INFO_KUBECONFIG_KEY = "kubeconfig"
JWS_KEY_PREFIX = "jws-kubeconfig-"

# Shown in place of a token secret wherever a token must be displayed (diff, messages).
REDACTED = "<redacted>"


class BootstrapTokenError(ValueError):
    """Invalid input. Messages never contain a token secret."""


# --- tokens -------------------------------------------------------------------

def random_string(length, alphabet=TOKEN_ALPHABET):
    """Return ``length`` characters drawn uniformly (no modulo bias) from ``alphabet``."""
    return "".join(secrets.choice(alphabet) for dummy in range(length))


def generate_token():
    """Return a new random token ``<6 chars>.<16 chars>`` over ``[0-9a-z]``."""
    return "%s.%s" % (random_string(TOKEN_ID_LENGTH), random_string(TOKEN_SECRET_LENGTH))


def parse_token(token):
    """Split ``token`` into ``(token_id, token_secret)``.

    Raises BootstrapTokenError when the format is wrong; the message describes the
    expected format but never repeats the (possibly secret) input.
    """
    if not isinstance(token, str):
        raise BootstrapTokenError("the bootstrap token must be a string")
    match = TOKEN_RE.fullmatch(token)
    if not match:
        raise BootstrapTokenError(
            "the bootstrap token is malformed: it must match [a-z0-9]{6}.[a-z0-9]{16} "
            "(6 lowercase letters/digits, a dot, 16 lowercase letters/digits), for example "
            "the output of 'kubeadm token generate'"
        )
    return match.group(1), match.group(2)


def validate_token_id(token_id):
    """Return ``token_id`` if it is 6 characters of ``[a-z0-9]``, else raise."""
    if not isinstance(token_id, str) or not TOKEN_ID_RE.fullmatch(token_id):
        raise BootstrapTokenError(
            "token_id %r is not a bootstrap token id: it must be 6 characters of [a-z0-9] "
            "(the part of the token before the dot)" % (token_id,)
        )
    return token_id


def secret_name(token_id):
    """Name of the Secret that holds token ``token_id``."""
    return SECRET_NAME_PREFIX + token_id


def token_id_from_secret_name(name):
    """Token id encoded in a Secret name, or None if the name is not ``bootstrap-token-<id>``."""
    if not isinstance(name, str) or not name.startswith(SECRET_NAME_PREFIX):
        return None
    token_id = name[len(SECRET_NAME_PREFIX):]
    return token_id if TOKEN_ID_RE.fullmatch(token_id) else None


# --- usages and groups ----------------------------------------------------------

def validate_usages(usages):
    """Return the usages de-duplicated in canonical order, or raise on unknown/empty ones."""
    if usages is None:
        usages = DEFAULT_USAGES
    unknown = [u for u in usages if u not in KNOWN_USAGES]
    if unknown:
        raise BootstrapTokenError(
            "unknown bootstrap token usage(s) %s: valid usages are %s"
            % (", ".join(repr(u) for u in unknown), ", ".join(KNOWN_USAGES))
        )
    result = [u for u in KNOWN_USAGES if u in usages]
    if not result:
        raise BootstrapTokenError("at least one bootstrap token usage is needed (%s)" % ", ".join(KNOWN_USAGES))
    return result


def validate_groups(groups):
    """Return the extra groups de-duplicated (order kept), or raise on an invalid one.

    kubeadm (cluster-bootstrap ValidateBootstrapGroupName) requires each group to match
    ``^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$``.
    """
    if groups is None:
        groups = DEFAULT_GROUPS
    result = []
    for group in groups:
        if not isinstance(group, str) or not GROUP_RE.fullmatch(group):
            raise BootstrapTokenError(
                "bootstrap token group %r is invalid: it must match %s, "
                "for example 'system:bootstrappers:kubeadm:default-node-token'" % (group, GROUP_RE.pattern)
            )
        if group not in result:
            result.append(group)
    return result


# --- durations and expiry ------------------------------------------------------------

_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "\u00b5s": 1e-6,  # micro sign
    "\u03bcs": 1e-6,  # Greek mu
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_DURATION_PART_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")


def parse_duration(value):
    """Parse a Go ``time.ParseDuration`` string (``24h``, ``1h30m``, ``90m``, ``1.5h``, ``0``).

    Returns a ``datetime.timedelta`` (sub-microsecond parts are dropped).
    Negative durations and bare numbers other than ``0`` are rejected, as Go does.
    """
    if isinstance(value, datetime.timedelta):
        return value
    if isinstance(value, bool) or value is None:
        raise BootstrapTokenError("invalid duration %r: expected a string such as '24h', '90m' or '0'" % (value,))
    text = str(value).strip()
    if text in ("0", "+0", "-0"):
        return datetime.timedelta(0)
    if not text:
        raise BootstrapTokenError("invalid duration '': expected a string such as '24h', '90m' or '0'")
    body = text
    if body[0] in "+-":
        if body[0] == "-":
            raise BootstrapTokenError("invalid duration %r: it must not be negative" % text)
        body = body[1:]
    pos = 0
    total = 0.0
    while pos < len(body):
        match = _DURATION_PART_RE.match(body, pos)
        if not match:
            hint = ""
            if re.match(r"^\d+(\.\d+)?$", body):
                hint = " (a unit is required, e.g. '%ss' or '%sm')" % (body, body)
            raise BootstrapTokenError(
                "invalid duration %r%s: use Go duration syntax such as '24h', '1h30m', '90m', '3600s' or '0'"
                % (text, hint)
            )
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        pos = match.end()
    return datetime.timedelta(microseconds=round(total * 1e6))


def format_duration(delta):
    """Format a timedelta the way Go prints whole-second durations (``23h59m0s``, ``0s``)."""
    seconds = int(delta.total_seconds())
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return "%s%dh%dm%ds" % (sign, hours, minutes, secs)
    if minutes:
        return "%s%dm%ds" % (sign, minutes, secs)
    return "%s%ds" % (sign, secs)


def utcnow():
    """Current time as an aware UTC datetime (patchable in tests)."""
    return datetime.datetime.now(datetime.timezone.utc)


def format_rfc3339(moment):
    """UTC RFC3339 with ``Z`` and no fractional seconds, like Go's ``time.RFC3339`` in UTC."""
    if moment.tzinfo is None:
        raise BootstrapTokenError("a timezone-aware datetime is required")
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


_RFC3339_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)


def parse_rfc3339(text):
    """Parse an RFC3339 timestamp (``Z`` or an offset, optional fraction) into an aware datetime."""
    match = _RFC3339_RE.fullmatch(text.strip()) if isinstance(text, str) else None
    if not match:
        raise BootstrapTokenError("invalid RFC3339 timestamp %r" % (text,))
    year, month, day, hour, minute, second = (int(x) for x in match.groups()[:6])
    fraction = match.group(7)
    micro = int(round(float(fraction) * 1e6)) if fraction else 0
    micro = min(micro, 999999)
    zone = match.group(8)
    if zone in ("Z", "z"):
        tz = datetime.timezone.utc
    else:
        sign = 1 if zone[0] == "+" else -1
        tz = datetime.timezone(sign * datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    try:
        return datetime.datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)
    except ValueError as exc:
        raise BootstrapTokenError("invalid RFC3339 timestamp %r: %s" % (text, exc)) from None


def expiration_for_ttl(ttl, now=None):
    """The ``expiration`` value for a token with ``ttl``, or None when ttl is 0 (never expires)."""
    ttl = parse_duration(ttl)
    if ttl <= datetime.timedelta(0):
        return None
    now = now or utcnow()
    return format_rfc3339(now.replace(microsecond=0) + ttl)


def remaining_ttl(expiration, now=None):
    """Time left before ``expiration`` (negative when past); None when the token never expires."""
    if expiration in (None, ""):
        return None
    when = expiration if isinstance(expiration, datetime.datetime) else parse_rfc3339(expiration)
    return when - (now or utcnow())


def is_expired(expiration, now=None):
    """True if ``expiration`` is set and not in the future (cluster-bootstrap semantics)."""
    left = remaining_ttl(expiration, now)
    return left is not None and left <= datetime.timedelta(0)


# --- the bootstrap token Secret ----------------------------------------------------------

def _b64(text):
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def build_secret_data(token_id, token_secret, expiration=None, usages=None, groups=None, description=None):
    """The Secret's string data, key for key as kubeadm writes it (BootstrapTokenToSecret)."""
    validate_token_id(token_id)
    parse_token("%s.%s" % (token_id, token_secret))
    data = {KEY_TOKEN_ID: token_id, KEY_TOKEN_SECRET: token_secret}
    if description:
        data[KEY_DESCRIPTION] = description
    if expiration:
        data[KEY_EXPIRATION] = expiration
    for usage in validate_usages(usages):
        data[USAGE_PREFIX + usage] = "true"
    groups = validate_groups(groups)
    if groups:
        data[KEY_EXTRA_GROUPS] = ",".join(groups)
    return data


def build_secret(token_id, token_secret, expiration=None, usages=None, groups=None, description=None,
                 managed=True):
    """A complete v1 Secret body (``data`` base64-encoded, as kubeadm sends it).

    ``managed`` adds the label this collection uses to find its own tokens again.
    """
    metadata = {"name": secret_name(token_id), "namespace": SECRET_NAMESPACE}
    if managed:
        metadata["labels"] = {MANAGED_LABEL_KEY: MANAGED_LABEL_VALUE}
    string_data = build_secret_data(token_id, token_secret, expiration, usages, groups, description)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata,
        "type": SECRET_TYPE,
        "data": {k: _b64(v) for k, v in string_data.items()},
    }


def secret_string_data(secret):
    """Decode a Secret dict's ``data`` (base64) merged with any ``stringData`` into str values."""
    result = {}
    for key, value in ((secret or {}).get("data") or {}).items():
        if value is None:
            continue
        try:
            result[key] = base64.b64decode(value).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            result[key] = None
    for key, value in ((secret or {}).get("stringData") or {}).items():
        result[key] = value
    return result


def token_info_from_secret(secret):
    """Decode a bootstrap-token Secret dict into a plain description, or None if it is not one.

    Returns a dict with ``token_id``, ``token_secret``, ``expiration`` (str or None),
    ``usages``, ``groups``, ``description``, ``managed``, ``name`` and ``valid`` /
    ``problem`` (why cluster-bootstrap would ignore it, ignoring expiry).
    """
    if not isinstance(secret, dict):
        return None
    metadata = secret.get("metadata") or {}
    name = metadata.get("name") or ""
    data = secret_string_data(secret)
    labels = metadata.get("labels") or {}
    token_id = data.get(KEY_TOKEN_ID)
    token_secret = data.get(KEY_TOKEN_SECRET)
    info = {
        "name": name,
        "token_id": token_id,
        "token_secret": token_secret,
        "expiration": data.get(KEY_EXPIRATION) or None,
        "usages": [u for u in KNOWN_USAGES if data.get(USAGE_PREFIX + u) == "true"],
        "groups": [g for g in (data.get(KEY_EXTRA_GROUPS) or "").split(",") if g],
        "description": data.get(KEY_DESCRIPTION) or "",
        "managed": labels.get(MANAGED_LABEL_KEY) == MANAGED_LABEL_VALUE,
        "deleting": bool(metadata.get("deletionTimestamp")),
        "valid": False,
        "problem": None,
    }
    if secret.get("type") != SECRET_TYPE:
        info["problem"] = "type is %r, not %r" % (secret.get("type"), SECRET_TYPE)
    elif not token_id or not TOKEN_ID_RE.fullmatch(token_id):
        info["problem"] = "key %s is missing or malformed" % KEY_TOKEN_ID
    elif name != secret_name(token_id):
        info["problem"] = "the Secret name is not %s" % secret_name(token_id)
    elif not token_secret or not re.fullmatch(r"[a-z0-9]{16}", token_secret):
        info["problem"] = "key %s is missing or malformed" % KEY_TOKEN_SECRET
    else:
        try:
            if info["expiration"]:
                parse_rfc3339(info["expiration"])
            info["valid"] = True
        except BootstrapTokenError:
            info["problem"] = "key %s is not an RFC3339 timestamp" % KEY_EXPIRATION
    return info


def redacted_secret(secret):
    """Copy of a Secret body safe to show (diff): data decoded, token secret replaced."""
    shown = {
        "metadata": {
            k: v for k, v in (secret.get("metadata") or {}).items() if k in ("name", "namespace", "labels")
        },
        "type": secret.get("type"),
        "data": secret_string_data(secret),
    }
    if KEY_TOKEN_SECRET in shown["data"]:
        shown["data"][KEY_TOKEN_SECRET] = REDACTED
    return shown


def select_reusable_token(secrets_list, ttl, min_remaining_ttl, usages=None, groups=None, now=None):
    """Pick a token this collection created that can be handed out again, or None.

    A candidate must be a valid, managed (labelled) bootstrap token that is not being
    deleted, has exactly the requested ``usages`` and ``groups``, and:

    * when ``ttl`` is 0: never expires;
    * otherwise: expires, has at least ``min_remaining_ttl`` left, and no more than
      ``ttl`` left (never hand out a token that lives longer than asked for).

    Among candidates the one with the most time left wins (ties: lowest token id).
    Returns the ``token_info_from_secret`` dict of the winner.
    """
    ttl = parse_duration(ttl)
    min_remaining_ttl = parse_duration(min_remaining_ttl)
    usages = set(validate_usages(usages))
    groups = set(validate_groups(groups))
    now = now or utcnow()
    # Clock skew allowance: a token created moments ago with the same ttl must qualify.
    slack = datetime.timedelta(minutes=1)
    best = None
    best_key = None
    for secret in secrets_list or []:
        info = token_info_from_secret(secret)
        if not info or not info["valid"] or not info["managed"] or info["deleting"]:
            continue
        if set(info["usages"]) != usages or set(info["groups"]) != groups:
            continue
        left = remaining_ttl(info["expiration"], now)
        if ttl == datetime.timedelta(0):
            if left is not None:
                continue
            key = (0, info["token_id"])
        else:
            if left is None or left <= datetime.timedelta(0):
                continue
            if left < min_remaining_ttl or left > ttl + slack:
                continue
            key = (-left.total_seconds(), info["token_id"])
        if best_key is None or key < best_key:
            best, best_key = info, key
    return best


# --- cluster-info: endpoint and CA pins -------------------------------------------------------

def load_kubeconfig_text(text):
    """Parse a kubeconfig document (YAML or JSON) into a dict."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        if HAS_YAML:
            doc = yaml.safe_load(text)
        else:  # pragma: no cover
            doc = json.loads(text)
    except Exception as exc:  # yaml.YAMLError or ValueError
        raise BootstrapTokenError("the cluster-info kubeconfig cannot be parsed: %s" % exc) from None
    if not isinstance(doc, dict):
        raise BootstrapTokenError("the cluster-info kubeconfig is not a mapping")
    return doc


def cluster_from_kubeconfig(doc):
    """The cluster entry kubeadm discovery uses: the current context's cluster, else the first."""
    clusters = doc.get("clusters") or []
    if not clusters:
        raise BootstrapTokenError("the cluster-info kubeconfig has no clusters")
    wanted = None
    current = doc.get("current-context")
    for ctx in doc.get("contexts") or []:
        if isinstance(ctx, dict) and ctx.get("name") == current:
            wanted = (ctx.get("context") or {}).get("cluster")
    for entry in clusters:
        if isinstance(entry, dict) and wanted is not None and entry.get("name") == wanted:
            return entry.get("cluster") or {}
    first = clusters[0]
    return (first.get("cluster") or {}) if isinstance(first, dict) else {}


def ca_pem_from_cluster(cluster):
    """PEM bytes of ``certificate-authority-data`` of a kubeconfig cluster entry, or None."""
    data = cluster.get("certificate-authority-data")
    if not data:
        return None
    try:
        return base64.b64decode(data)
    except (binascii.Error, ValueError):
        raise BootstrapTokenError(
            "certificate-authority-data in the cluster-info kubeconfig is not valid base64"
        ) from None


def endpoint_from_server(server):
    """``host:port`` for ``kubeadm join`` from a URL such as ``https://10.0.0.1:6443``.

    The port defaults to 443 for https and 80 for http; IPv6 hosts keep their brackets.
    """
    if not server:
        return None
    text = str(server).strip()
    scheme = "https"
    if "://" in text:
        scheme, text = text.split("://", 1)
        scheme = scheme.lower()
    text = text.split("/", 1)[0]
    if "@" in text:
        text = text.rsplit("@", 1)[1]
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise BootstrapTokenError("cannot parse API server address %r" % server)
        host, rest = text[:end + 1], text[end + 1:]
        port = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, port = text.split(":")
    elif text.count(":") > 1:  # bare IPv6 without brackets
        host, port = "[%s]" % text, ""
    else:
        host, port = text, ""
    if not host:
        raise BootstrapTokenError("cannot parse API server address %r" % server)
    if not port:
        port = "80" if scheme == "http" else "443"
    return "%s:%s" % (host, port)


def cluster_info_details(kubeconfig_text):
    """``(server_url, ca_pem_bytes_or_None)`` from the cluster-info ConfigMap's ``kubeconfig`` value."""
    cluster = cluster_from_kubeconfig(load_kubeconfig_text(kubeconfig_text))
    return cluster.get("server"), ca_pem_from_cluster(cluster)


_PEM_CERT_RE = re.compile(
    b"-----BEGIN CERTIFICATE-----\\s.+?-----END CERTIFICATE-----", re.DOTALL
)


def ca_cert_hashes(pem_bundle):
    """One ``sha256:<hex>`` pin per certificate in a PEM bundle, in bundle order.

    The pin is SHA-256 over the certificate's DER-encoded SubjectPublicKeyInfo
    (kubeadm's pubkeypin.Hash), as ``kubeadm join --discovery-token-ca-cert-hash`` expects.
    """
    if not HAS_CRYPTOGRAPHY:
        raise BootstrapTokenError("the 'cryptography' Python library is needed to compute CA pins")
    if isinstance(pem_bundle, str):
        pem_bundle = pem_bundle.encode("ascii")
    blocks = _PEM_CERT_RE.findall(pem_bundle or b"")
    if not blocks:
        raise BootstrapTokenError("no PEM certificate found in the cluster CA data")
    pins = []
    for block in blocks:
        try:
            cert = x509.load_pem_x509_certificate(block)
        except ValueError as exc:
            raise BootstrapTokenError("a certificate in the cluster CA data cannot be parsed: %s" % exc) from None
        spki = cert.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        pin = "sha256:" + hashlib.sha256(spki).hexdigest()
        if pin not in pins:
            pins.append(pin)
    return pins


# --- detached JWS (k8s.io/cluster-bootstrap/token/jws) ---------------------------------------

def b64url(data):
    """base64url without padding."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text):
    """Inverse of b64url (padding optional)."""
    if isinstance(text, str):
        text = text.encode("ascii")
    return base64.urlsafe_b64decode(text + b"=" * (-len(text) % 4))


def jws_header(token_id):
    """The protected header bootstrapsigner writes, byte for byte (Go sorts map keys)."""
    return '{"alg":"HS256","kid":"%s"}' % token_id


def compute_detached_jws(content, token_id, token_secret):
    """Detached compact JWS (``header..signature``) over ``content``, HS256 keyed with the token secret."""
    if isinstance(content, str):
        content = content.encode("utf-8")
    header = b64url(jws_header(token_id))
    signing_input = header.encode("ascii") + b"." + b64url(content).encode("ascii")
    signature = hmac.new(token_secret.encode("utf-8"), signing_input, hashlib.sha256).digest()
    return "%s..%s" % (header, b64url(signature))


def verify_detached_jws(detached, content, token_id, token_secret):
    """True if ``detached`` is a valid HS256 detached JWS over ``content`` for this token."""
    if not isinstance(detached, str):
        return False
    parts = detached.split(".")
    if len(parts) != 3 or parts[1] != "" or not parts[0] or not parts[2]:
        return False
    try:
        header = json.loads(b64url_decode(parts[0]).decode("utf-8"))
        signature = b64url_decode(parts[2])
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return False
    if not isinstance(header, dict) or header.get("alg") != "HS256" or header.get("kid") != token_id:
        return False
    if isinstance(content, str):
        content = content.encode("utf-8")
    signing_input = parts[0].encode("ascii") + b"." + b64url(content).encode("ascii")
    expected = hmac.new(token_secret.encode("utf-8"), signing_input, hashlib.sha256).digest()
    return hmac.compare_digest(expected, signature)


def jws_key(token_id):
    """cluster-info data key that holds the signature for ``token_id``."""
    return JWS_KEY_PREFIX + token_id


# --- kubeadm join -----------------------------------------------------------------------------

def join_args(endpoint, token, ca_hashes):
    """The arguments of ``kubeadm join`` for token discovery with CA pins:
    ``[<endpoint>, --token, <token>, --discovery-token-ca-cert-hash, <pin>, ...]``, one flag per pin."""
    parse_token(token)
    if not endpoint:
        raise BootstrapTokenError("the API server endpoint is unknown")
    if not ca_hashes:
        raise BootstrapTokenError(
            "no CA certificate pins: refusing to build join arguments without "
            "--discovery-token-ca-cert-hash (that would need --discovery-token-unsafe-skip-ca-verification)"
        )
    args = [endpoint, "--token", token]
    for pin in ca_hashes:
        args.extend(["--discovery-token-ca-cert-hash", pin])
    return args


def parse_join_args(args):
    """``(endpoint, token, ca_hashes)`` from what ``join_args`` returns; anything else is refused."""
    args = list(args or [])
    if len(args) < 5 or len(args) % 2 == 0 or args[1] != "--token":
        raise BootstrapTokenError("the join arguments are not <endpoint> --token <token> "
                                  "--discovery-token-ca-cert-hash <pin>... (k8s_join_token's join_args)")
    pins = []
    for position in range(3, len(args), 2):
        # Never quote an argument: a misplaced one may be the token.
        if args[position] != "--discovery-token-ca-cert-hash":
            raise BootstrapTokenError("join argument %d is not --discovery-token-ca-cert-hash (only CA pins may "
                                      "follow the token)" % position)
        pins.append(args[position + 1])
    return args[0], args[2], pins


# --- kubeadm join --config ----------------------------------------------------------------------

JOIN_CONFIG_API_VERSION = "kubeadm.k8s.io/v1beta4"
_DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def join_configuration(endpoint, token, ca_hashes, node_name, cri_socket):
    """The text of a kubeadm ``JoinConfiguration`` (v1beta4) for token discovery with CA pins.

    ``kubeadm join --config <file>`` reads the token from this file, so it never appears on a process
    command line; kubeadm refuses ``--config`` mixed with ``--token`` or ``--cri-socket``
    (validation.ValidateMixedArguments), so the node name and the CRI socket are in the file too.
    Field names as in cmd/kubeadm/app/apis/kubeadm/v1beta4/types.go (JoinConfiguration, Discovery,
    BootstrapTokenDiscovery, NodeRegistrationOptions).
    """
    parse_token(token)
    endpoint = str(endpoint or "")
    if not re.match(r"^(\[[0-9a-fA-F:.]+\]|[^:\[\]/]+):[0-9]{1,5}$", endpoint):
        raise BootstrapTokenError("the API server endpoint %r is not host:port" % endpoint)
    if not ca_hashes:
        raise BootstrapTokenError(
            "no CA certificate pins: refusing to write a JoinConfiguration without caCertHashes "
            "(that would need unsafeSkipCAVerification)")
    for pin in ca_hashes:
        if not re.match(r"^sha256:[0-9a-f]{64}$", str(pin)):
            raise BootstrapTokenError("CA pin %r is not sha256:<64 hex digits>" % (pin,))
    node_name = str(node_name or "")
    if len(node_name) > 253 or not _DNS1123_SUBDOMAIN_RE.match(node_name):
        raise BootstrapTokenError("node name %r is not a lower-case DNS-1123 subdomain" % node_name)
    cri_socket = str(cri_socket or "")
    if not cri_socket.startswith("npipe://"):
        raise BootstrapTokenError("CRI socket %r is not an npipe:// URL (kubeadm on Windows accepts only those)"
                                  % cri_socket)
    doc = {
        "apiVersion": JOIN_CONFIG_API_VERSION,
        "kind": "JoinConfiguration",
        "discovery": {
            "bootstrapToken": {
                "apiServerEndpoint": endpoint,
                "token": token,
                "caCertHashes": list(ca_hashes),
            },
            "tlsBootstrapToken": token,
        },
        "nodeRegistration": {"name": node_name, "criSocket": cri_socket},
    }
    # JSON is YAML; kubeadm splits the file with a YAML reader and decodes each document.
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
