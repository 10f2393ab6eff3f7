# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a joining node reads from ``kube-public/cluster-info``: the API server, CA pins and JWS signatures.

Plain functions with no Kubernetes API access but ``read_details`` (the one read of that ConfigMap), used by
``kubewin.nodes.k8s_join_token`` and ``kubewin.nodes.k8s_join_info`` and unit-tested on their own: the
kubeconfig kubeadm publishes there (server and CA), ``host:port`` for ``kubeadm join``, the CA public key pins
(``--discovery-token-ca-cert-hash``) and the detached JWS that kube-controller-manager's bootstrapsigner writes
there for each signing token.
PRIVATE to the collection: no compatibility promise outside it.

Sources: kubernetes/kubernetes staging/src/k8s.io/cluster-bootstrap (token/api, token/jws) and
cmd/kubeadm/app/util/pubkeypin.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re

from ansible_collections.kubewin.nodes.plugins.module_utils._bootstrap_token import BootstrapTokenError
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc

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

CLUSTER_INFO_NAMESPACE = "kube-public"
CLUSTER_INFO_NAME = "cluster-info"
CLUSTER_INFO_KUBECONFIG_KEY = "kubeconfig"
JWS_KEY_PREFIX = "jws-kubeconfig-"


# --- the kubeconfig, the endpoint and CA pins -------------------------------------------------------

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


def read_details(apis, endpoint_override=None):
    """``(endpoint, ca_pins)`` read from kube-public/cluster-info (the one read of the Kubernetes API here, shared
    by k8s_join_token and k8s_join_info); ``endpoint_override`` replaces its server."""
    cm = kc.call(apis, "get", "configmaps", CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_NAME,
                 apis.core.read_namespaced_config_map, CLUSTER_INFO_NAME, CLUSTER_INFO_NAMESPACE)
    if cm is None:
        raise kc.K8sError(
            "ConfigMap kube-public/cluster-info does not exist, so nodes cannot discover this cluster with "
            "a token. It is created by 'kubeadm init' (phase bootstrap-token); run "
            "'kubeadm init phase bootstrap-token' on a control-plane node to create it."
        )
    kubeconfig_text = (cm.get("data") or {}).get(CLUSTER_INFO_KUBECONFIG_KEY)
    if not kubeconfig_text:
        raise kc.K8sError("ConfigMap kube-public/cluster-info has no 'kubeconfig' key; recreate it with "
                          "'kubeadm init phase bootstrap-token' on a control-plane node.")
    try:
        server, ca_pem = cluster_info_details(kubeconfig_text)
        if not ca_pem:
            raise BootstrapTokenError(
                "its kubeconfig has no certificate-authority-data, so no CA pin can be computed"
            )
        pins = ca_cert_hashes(ca_pem)
        endpoint = endpoint_from_server(server) or endpoint_from_server(apis.host)
    except BootstrapTokenError as exc:
        raise kc.K8sError("ConfigMap kube-public/cluster-info is not usable: %s" % exc) from None
    endpoint = endpoint_override or endpoint
    if not endpoint:
        raise kc.K8sError("The API server endpoint is unknown: cluster-info has no server and no host is configured.")
    return endpoint, pins
