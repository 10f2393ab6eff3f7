# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Kubernetes bootstrap tokens, the way kubeadm makes and uses them.

Plain functions with no Kubernetes API access, shared by the
``kubewin.nodes.k8s_join_token`` module and unit-tested on their own:
token generation/parsing/validation, expiry maths, the bootstrap-token Secret body
and reuse selection. Go durations and RFC 3339 times are in ``_go_formats``, what
``kube-public/cluster-info`` holds (endpoint, CA pins, JWS) in ``_cluster_info`` and
the ``kubeadm join`` arguments and JoinConfiguration in ``_kubeadm_join``.
PRIVATE to the collection: no compatibility promise outside it.

Sources: kubernetes/kubernetes staging/src/k8s.io/cluster-bootstrap
(token/api, token/util, util/secrets).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import re
import secrets

from ansible_collections.kubewin.nodes.plugins.module_utils import _go_formats as gf

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

# Shown in place of a token secret wherever a token must be displayed (diff, messages).
REDACTED = "<redacted>"

# Invalid input; messages never contain a token secret. The same class as _go_formats.FormatError, so one
# ``except BootstrapTokenError`` also catches a bad ttl or expiration (parsed here with _go_formats).
BootstrapTokenError = gf.FormatError


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


# --- expiry ------------------------------------------------------------------------

def utcnow():
    """Current time as an aware UTC datetime (patchable in tests)."""
    return datetime.datetime.now(datetime.timezone.utc)


def expiration_for_ttl(ttl, now=None):
    """The ``expiration`` value for a token with ``ttl``, or None when ttl is 0 (never expires)."""
    ttl = gf.parse_duration(ttl)
    if ttl <= datetime.timedelta(0):
        return None
    now = now or utcnow()
    return gf.format_rfc3339(now.replace(microsecond=0) + ttl)


def remaining_ttl(expiration, now=None):
    """Time left before ``expiration`` (negative when past); None when the token never expires."""
    if expiration in (None, ""):
        return None
    when = expiration if isinstance(expiration, datetime.datetime) else gf.parse_rfc3339(expiration)
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
                gf.parse_rfc3339(info["expiration"])
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
    ttl = gf.parse_duration(ttl)
    min_remaining_ttl = gf.parse_duration(min_remaining_ttl)
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
