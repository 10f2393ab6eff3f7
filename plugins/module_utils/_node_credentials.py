# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-node credentials of kube-proxy and flanneld on a Windows node (services mode).

kube-proxy gets, per node, its own ServiceAccount, its own RBAC binding and a token from the
TokenRequest API (``serviceaccounts/token``) bound to the Node object, with a finite lifetime.
Nothing here is shared by two nodes, so one node's credential can be revoked alone (delete its
ServiceAccount, or its Node: a Node-bound token dies with the Node).

flanneld has no token: it runs with the kubelet's own kubeconfig (the node identity
``system:node:<node>``), so the NodeRestriction admission plugin limits what it may change on its
Node (no ``node-restriction.kubernetes.io/`` or other protected labels, no taints), which it does
not for a ServiceAccount (``flanneld_rules``).

The decisions are plain functions, unit-tested without a cluster:

* ``account_name``: the ServiceAccount (and RBAC object) name for a component on a node;
* ``desired_objects``: the ServiceAccounts, ClusterRole and ClusterRoleBindings a node needs;
* ``renewal``: whether the token on the node must be replaced, from what the last run recorded
  in the ServiceAccount's annotations (never from the token itself);
* ``record``: those annotations for a token just issued.

The files on the Windows host that carry these tokens are the controller's business
(``plugin_utils/_host/credential_files.py``).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re

MANAGED_LABEL = "kubewin.nodes/managed"
NODE_ANNOTATION = "kubewin.nodes/node"
EXPIRES_ANNOTATION = "kubewin.nodes/token-expires"
ISSUED_ANNOTATION = "kubewin.nodes/token-issued"
SHA512_ANNOTATION = "kubewin.nodes/token-sha512"
BOUND_UID_ANNOTATION = "kubewin.nodes/token-bound-node-uid"
# What token_file_hashes reports for a token file others than Administrators and SYSTEM may read.
OPEN_ACL = "open-access-rules"

# TokenRequest refuses less than 10 minutes (pkg/apis/authentication/validation: "may not specify
# a duration less than 10 minutes").
MIN_EXPIRATION_SECONDS = 600
# The longest lifetime accepted without allow_long_expiration (security-2 N6): kubeadm leaves the API server's
# --service-account-max-token-expiration unset, so nothing else bounds a copied token's life.
MAX_EXPIRATION_SECONDS = 30 * 24 * 3600

# kube-proxy: the rights kubeadm gives its kube-proxy ServiceAccount (ClusterRoleBinding
# kubeadm:node-proxier -> ClusterRole system:node-proxier, kubernetes
# plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go: services, endpoints, endpointslices
# list/watch, nodes get/list/watch, events create/patch/update). Read-only topology, no Secrets.
KUBE_PROXY_CLUSTER_ROLE = "system:node-proxier"


def flanneld_rules(node_name):
    """What flanneld needs beyond what the Node authorizer gives the kubelet's identity it runs with.

    flanneld's kube subnet manager (flannel-io/flannel v0.26.7 pkg/subnet/kube/kube.go), with
    --kube-subnet-mgr and NODE_NAME set:

    * ``NewSubnetManager`` reads the Node name from NODE_NAME, so no ``pods get``;
    * ``newKubeSubnetManager`` runs a Node informer, ``Nodes().List`` and ``Nodes().Watch`` with no
      selector: it learns the other nodes' leases from their annotations, so it must read every Node;
    * ``AcquireLease`` writes its annotations with ``Nodes().Patch(..., "status")``, ``CompleteLease``
      its NetworkUnavailable condition with ``Nodes().PatchStatus``, and ``GetStoredMacAddresses`` /
      ``GetStoredPublicIP`` ``Nodes().Get`` its own Node.

    The Node authorizer (kubernetes v1.37.2 plugin/pkg/auth/authorizer/node/node_authorizer.go,
    ``authorizeNode``) allows a node identity get/list/watch of its own Node only ("cannot read all
    nodes, only its own Node object"; AuthorizeNodeWithSelectors, beta and on in 1.32, GA in 1.34, no
    gate in 1.37) and update/patch of ``nodes/status``, which NodeRestriction
    (plugin/pkg/admission/noderestriction/admission.go, ``admitNode``) limits to its own Node, without
    changes to taints, ownerReferences or protected labels. The informer's list and watch of every
    Node is the one thing missing: this ClusterRole gives exactly that (read only), bound to the
    node's own user ``system:node:<node>`` (``flanneld_subject``). Before 1.32 the Node authorizer
    allowed it already (bootstrappolicy NodeRules: nodes get/list/watch)."""
    return [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]


def node_user(node_name):
    """The user name of a node's kubelet credential (kubernetes pkg/auth/nodeidentifier: ``system:node:<name>``
    in the group ``system:nodes``)."""
    return "system:node:%s" % node_name


def flanneld_subject(node_name):
    """The RBAC subject flanneld acts as: the node's own identity (the kubelet's client certificate)."""
    return {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": node_user(node_name)}


COMPONENTS = ("kube-proxy", "flanneld")
# The namespace of each component's ServiceAccount unless the task names another.
DEFAULT_NAMESPACES = {"kube-proxy": "kube-system", "flanneld": "kube-flannel"}
# The components that get a ServiceAccount and a token (flanneld uses the kubelet's credential).
TOKEN_COMPONENTS = ("kube-proxy",)

_NAME_MAX = 63
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class NodeCredentialsError(Exception):
    """Input that cannot be used; the message names the variable and the fix."""


def account_name(component, node_name):
    """``kubewin-<component>-<node>``, a valid DNS-1123 name of at most 63 characters: a longer one
    keeps the start of the node name and ends with 10 hex digits of the node name's SHA-256, so two
    long node names never share a name."""
    if component not in COMPONENTS:
        raise NodeCredentialsError("unknown node component %r (one of %s)" % (component, ", ".join(COMPONENTS)))
    if not node_name or len(node_name) > 253 or not _DNS1123_SUBDOMAIN.match(node_name):
        raise NodeCredentialsError("node name %r is not a valid Kubernetes Node name (lower-case DNS-1123 "
                                   "subdomain): set kubewin_node_name" % (node_name,))
    name = "kubewin-%s-%s" % (component, node_name)
    if len(name) <= _NAME_MAX:
        return name
    digest = hashlib.sha256(node_name.encode("utf-8")).hexdigest()[:10]
    head = name[:_NAME_MAX - len(digest) - 1].rstrip("-.")
    return "%s-%s" % (head, digest)


def desired_objects(node_name, namespaces):
    """The RBAC objects and ServiceAccounts for one node, keyed by component.

    ``namespaces``: {component: namespace of its ServiceAccount}. Returns
    {component: {"account": ServiceAccount or None, "role": ClusterRole or None, "binding": ClusterRoleBinding,
    "retired_account": (namespace, name) of a ServiceAccount an older release made and a run deletes, or None}}.
    flanneld has no ServiceAccount (it uses the kubelet's credential): its binding names the node's user, and
    the ServiceAccount ``kubewin-flanneld-<node>`` older releases made (whose token was in
    C:\\etc\\kube-flannel\\token) is retired: deleting it revokes that token.
    """
    out = {}
    for component in COMPONENTS:
        name = account_name(component, node_name)
        namespace = namespaces[component]
        meta = {"name": name, "labels": {MANAGED_LABEL: "true"}, "annotations": {NODE_ANNOTATION: node_name}}
        account = {"apiVersion": "v1", "kind": "ServiceAccount",
                   "metadata": dict(meta, namespace=namespace, annotations=dict(meta["annotations"])),
                   # Nothing mounts it: the token goes to the node as a file.
                   "automountServiceAccountToken": False}
        role, retired = None, None
        subjects = [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]
        if component == "flanneld":
            role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": dict(meta, annotations=dict(meta["annotations"])), "rules": flanneld_rules(node_name)}
            role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}
            subjects = [flanneld_subject(node_name)]
            account, retired = None, (namespace, name)
        else:
            role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": KUBE_PROXY_CLUSTER_ROLE}
        binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": dict(meta, annotations=dict(meta["annotations"])), "roleRef": role_ref,
                   "subjects": subjects}
        out[component] = {"account": account, "role": role, "binding": binding, "retired_account": retired}
    return out


def drift(current, desired, fields):
    """The top-level ``fields`` (and the managed label and node annotation) in which ``current``
    differs from ``desired``: what an update must change."""
    changed = []
    cur_meta = (current or {}).get("metadata") or {}
    want_meta = desired["metadata"]
    if (cur_meta.get("labels") or {}).get(MANAGED_LABEL) != "true":
        changed.append("metadata.labels")
    if (cur_meta.get("annotations") or {}).get(NODE_ANNOTATION) != want_meta["annotations"][NODE_ANNOTATION]:
        changed.append("metadata.annotations")
    for field in fields:
        if _normalise((current or {}).get(field)) != _normalise(desired.get(field)):
            changed.append(field)
    return changed


def _normalise(value):
    return json.dumps(value, sort_keys=True)


def token_sha512(token):
    return hashlib.sha512(token.encode("utf-8")).hexdigest()


def parse_time(text):
    """An RFC 3339 time as the API writes it (``2026-11-26T10:00:00Z``) -> aware datetime, or None."""
    if not text:
        return None
    try:
        value = datetime.datetime.strptime(text.replace("Z", "+0000")[:24], "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return None
    return value


def format_time(value):
    return value.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


EXPOSED_OPEN_ACL = "the token file on the node may be read by others than Administrators and SYSTEM"
EXPOSED_OTHER_CONTENT = "the token file on the node is not the token last issued"


def revoke_before_renewal(reason):
    """Whether the tokens issued so far must stop working before a new one is issued (security-2 N5): a token
    file others may have read, or one whose content is not the token last issued, may be in other hands, and
    a TokenRequest alone leaves the old token valid until it expires. A token carries its ServiceAccount's
    UID and the authenticator checks it against the live account (kubernetes pkg/serviceaccount/claims.go,
    "ServiceAccount UID ... does not match"), so deleting and re-creating the account revokes them all."""
    return reason in (EXPOSED_OPEN_ACL, EXPOSED_OTHER_CONTENT)


def renewal(annotations, now, node_uid, file_sha512, renew_fraction):
    """(renew, reason) for one component's token.

    ``annotations``: the ServiceAccount's annotations (what the run that issued the token recorded);
    ``node_uid``: the Node's uid now; ``file_sha512``: SHA-512 of the token file on the node (None
    when it is missing); ``renew_fraction``: renew when less than this fraction of the token's life
    is left. The token itself is never read back."""
    annotations = annotations or {}
    expires = parse_time(annotations.get(EXPIRES_ANNOTATION))
    issued = parse_time(annotations.get(ISSUED_ANNOTATION))
    if expires is None or issued is None or not annotations.get(SHA512_ANNOTATION):
        return True, "no token issued yet"
    if file_sha512 is None:
        return True, "the token file is missing on the node"
    if file_sha512 == OPEN_ACL:
        return True, EXPOSED_OPEN_ACL
    if file_sha512.lower() != annotations[SHA512_ANNOTATION]:
        return True, EXPOSED_OTHER_CONTENT
    bound_uid = annotations.get(BOUND_UID_ANNOTATION)
    if bound_uid and bound_uid != node_uid:
        return True, "the token is bound to an earlier Node object of this name (deleted since)"
    if now >= expires:
        return True, "the token expired at %s" % format_time(expires)
    life = (expires - issued).total_seconds()
    left = (expires - now).total_seconds()
    if life <= 0 or left < renew_fraction * life:
        percent = round(renew_fraction * 100)
        return True, "less than %d%% of its lifetime is left (expires %s)" % (percent, format_time(expires))
    return False, "valid until %s" % format_time(expires)


def token_request(node_name, node_uid, expiration_seconds, bind=True):
    """The TokenRequest body: bound to the Node (name and uid) unless ``bind`` is False."""
    # No audiences: the API server's own (--api-audiences), which is what it authenticates.
    spec = {"expirationSeconds": int(expiration_seconds)}
    if bind:
        spec["boundObjectRef"] = {"kind": "Node", "apiVersion": "v1", "name": node_name, "uid": node_uid}
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}


def binding_unsupported(status, detail):
    """Whether a TokenRequest failed only because this API server cannot bind tokens to Nodes:
    ServiceAccountTokenNodeBinding is alpha (off) in 1.29-1.30, beta (on) in 1.31-1.32, GA in 1.33
    (kubernetes pkg/features/kube_features.go). With the gate off the answer is 400 "cannot bind token
    to a Node object as the ... feature-gate is disabled"; before 1.29 400 "cannot bind token for
    object type Node" (pkg/registry/core/serviceaccount/storage/token.go)."""
    text = (detail or "").lower()
    return status == 400 and "node" in text and "bind" in text


def binding_required_message(node_name, detail):
    """The TokenRequest could not bind the token to the Node and unbound tokens are not accepted."""
    return ("The API server cannot bind tokens to Node objects (%s): kube-proxy's token for node %s would outlive "
            "its Node. Enable the ServiceAccountTokenNodeBinding feature gate (Kubernetes 1.31 or newer, GA in "
            "1.33), or set kubewin_node_token_require_binding: false to accept unbound tokens (reset then "
            "revokes them by deleting their ServiceAccounts)." % ((detail or "").strip() or "400", node_name))


def concurrent_run_message(node_name, namespace, name):
    """The annotation patch met a newer ServiceAccount than the one this run read (409)."""
    return ("ServiceAccount %s/%s changed between this run's read and its write (409 Conflict): another run for "
            "node %s is probably renewing the same credentials. The token this run issued is not used (it expires "
            "by itself); let the other run finish, then run again." % (namespace, name, node_name))


def record(status, issued, token, node_uid, bound):
    """The annotations that let the next run decide without the token: when it was issued, when it
    expires (the API server's answer: --service-account-max-token-expiration may shorten it), its
    SHA-512 (to recognise the file on the node) and the Node uid it is bound to."""
    expires = parse_time((status or {}).get("expirationTimestamp"))
    if expires is None:
        raise NodeCredentialsError("the TokenRequest answer has no status.expirationTimestamp")
    return {EXPIRES_ANNOTATION: format_time(expires), ISSUED_ANNOTATION: format_time(issued),
            SHA512_ANNOTATION: token_sha512(token), BOUND_UID_ANNOTATION: node_uid if bound else ""}


def check_settings(expiration_seconds, renew_fraction, allow_long_expiration=False):
    if int(expiration_seconds) < MIN_EXPIRATION_SECONDS:
        raise NodeCredentialsError("kubewin_node_token_expiration_seconds is %s: the TokenRequest API refuses "
                                   "less than %d (10 minutes); set it to %d or more"
                                   % (expiration_seconds, MIN_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS))
    if int(expiration_seconds) > MAX_EXPIRATION_SECONDS and not allow_long_expiration:
        raise NodeCredentialsError("kubewin_node_token_expiration_seconds is %s, more than %d (30 days): a copied "
                                   "token would work that long. Renew more often instead (re-run scale_up.yml on a "
                                   "schedule), or set kubewin_node_token_allow_long_expiration: true to accept it"
                                   % (expiration_seconds, MAX_EXPIRATION_SECONDS))
    if not 0 < float(renew_fraction) < 1:
        raise NodeCredentialsError("kubewin_node_token_renew_fraction is %s: it must be between 0 and 1 "
                                   "(for example 0.5: renew when less than half of the lifetime is left)"
                                   % renew_fraction)
