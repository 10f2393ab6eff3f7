# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""How a node runs ``kubeadm join`` with a bootstrap token: its arguments, or a JoinConfiguration holding the token.

Plain functions, used by ``kubewin.nodes.k8s_join_token`` (``join_args``) and the ``join_configuration``
filter, and unit-tested on their own. PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import json
import re

from ansible_collections.kubewin.nodes.plugins.module_utils._bootstrap_token import BootstrapTokenError, parse_token


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


def join_configuration(endpoint, token, ca_hashes, node_name, cri_socket, ca_cert_path=None):
    """The text of a kubeadm ``JoinConfiguration`` (v1beta4) for token discovery with CA pins.

    ``kubeadm join --config <file>`` reads the token from this file, so it never appears on a process
    command line; kubeadm refuses ``--config`` mixed with ``--token`` or ``--cri-socket``
    (validation.ValidateMixedArguments), so the node name and the CRI socket are in the file too.
    Field names as in cmd/kubeadm/app/apis/kubeadm/v1beta4/types.go (JoinConfiguration, Discovery,
    BootstrapTokenDiscovery, NodeRegistrationOptions). ``ca_cert_path``: where kubeadm writes the cluster CA
    (``caCertPath``; kubeadm's Windows default C:/etc/kubernetes/pki/ca.crt when None).
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
    if ca_cert_path:
        if not re.match(r"^[A-Za-z]:[\\/]", str(ca_cert_path)):
            raise BootstrapTokenError("the CA path %r is not an absolute Windows path" % (ca_cert_path,))
        doc["caCertPath"] = str(ca_cert_path)
    # JSON is YAML; kubeadm splits the file with a YAML reader and decodes each document.
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
