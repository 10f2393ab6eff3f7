# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-node RBAC of kube-proxy and flanneld on a Windows node (services mode): both run as the node.

kube-proxy and flanneld have no token of their own: they run with the kubelet's kubeconfig
(C:\\etc\\kubernetes\\kubelet.conf), the node's own identity ``system:node:<node>``, whose client
certificate the kubelet rotates itself. Nothing a playbook run issued can expire under them; the
kubelet's certificate is the only limit, and it is the node's own (``kube_proxy_subject``).

What that identity lacks is given by one ClusterRoleBinding per node and component, each bound to
the user ``system:node:<node>`` only, so one node's extra rights are revoked alone by deleting its
bindings (the Node authorizer's own rights stay with the node, as for any kubeadm node):

* kube-proxy: ``kubewin-kube-proxy-<node>`` -> ClusterRole ``system:node-proxier`` (kubeadm's role
  for kube-proxy);
* flanneld: ``kubewin-flanneld-<node>`` -> ClusterRole ``kubewin-flanneld-<node>`` (``flanneld_rules``).

Older releases gave each a ServiceAccount of that name with a token file on the node: a run deletes
those accounts (``retired_account``), which revokes every token they issued (a token carries its
ServiceAccount's UID: kubernetes pkg/serviceaccount/claims.go), and the files go (roles/network).

The decisions are plain functions, unit-tested without a cluster: ``account_name``,
``desired_objects``, ``drift``, ``in_place``. The API calls follow them (``ensure``, ``delete_managed``,
``absent``); the module keeps their order (present, absent).
"""

from __future__ import annotations

import hashlib
import json
import re

from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc

MANAGED_LABEL = "kubewin.nodes/managed"
NODE_ANNOTATION = "kubewin.nodes/node"

# kube-proxy: the rights kubeadm gives its kube-proxy ServiceAccount (ClusterRoleBinding
# kubeadm:node-proxier -> ClusterRole system:node-proxier, kubernetes v1.37.2
# plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go L615-630: services, endpoints list/watch, nodes
# get/list/watch, events create/patch/update, servicecidrs list/watch with MultiCIDRServiceAllocator, endpointslices
# list/watch). Read-only topology, no Secrets. See kube_proxy_subject for why the node's identity needs it.
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
    node's own user ``system:node:<node>`` (``node_subject``). Before 1.32 the Node authorizer
    allowed it already (bootstrappolicy NodeRules: nodes get/list/watch)."""
    return [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]


def node_user(node_name):
    """The user name of a node's kubelet credential (kubernetes pkg/auth/nodeidentifier: ``system:node:<name>``
    in the group ``system:nodes``)."""
    return "system:node:%s" % node_name


def node_subject(node_name):
    """The RBAC subject flanneld and kube-proxy act as: the node's own identity (the kubelet's client certificate)."""
    return {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": node_user(node_name)}


def kube_proxy_subject(node_name):
    """The subject of kube-proxy's binding to ``system:node-proxier``: the node's own identity.

    kube-proxy runs with the kubelet's kubeconfig. What it asks the API server for (kubernetes v1.37.2
    cmd/kube-proxy/app/server.go L591-620 and pkg/proxy/node.go), and who allows it for ``system:node:<node>``:

    * Services list/watch (label selector ``!service.kubernetes.io/service-proxy-name``, field selector
      ``spec.clusterIP!=None``): the Node authorizer's static NodeRules (bootstrappolicy/policy.go L221, services
      get/list/watch);
    * its own Node get/list/watch (``fieldSelector=metadata.name=<node>``): the Node authorizer (``authorizeNode``,
      plugin/pkg/auth/authorizer/node/node_authorizer.go; requestinfo takes the name from that selector);
    * Events create/patch/update (core and events.k8s.io): NodeRules (policy.go L230);
    * EndpointSlices list/watch (label selector ``!service.kubernetes.io/headless``) and ServiceCIDRs list/watch
      (MultiCIDRServiceAllocator): not in NodeRules, so the Node authorizer has no opinion and RBAC decides
      (apiserver pkg/authorization/union/union.go: NoOpinion moves on; kubeadm and kubespray run
      ``--authorization-mode=Node,RBAC``). ``system:node-proxier`` grants both (policy.go L622-626).

    The node gains read-only topology (Endpoints, EndpointSlices, ServiceCIDRs, every Node, which flanneld's
    binding already gives) and no write. NodeRestriction (plugin/pkg/admission/noderestriction/admission.go)
    admits nothing kube-proxy writes but Events, which it does not restrict: nothing changes there."""
    return node_subject(node_name)


COMPONENTS = ("kube-proxy", "flanneld")
# The namespace of each component's ServiceAccount unless the task names another.
DEFAULT_NAMESPACES = {"kube-proxy": "kube-system", "flanneld": "kube-flannel"}

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
    """The RBAC objects for one node, keyed by component.

    ``namespaces``: {component: namespace of the ServiceAccount an older release made for it}. Returns
    {component: {"account": None, "role": ClusterRole or None, "binding": ClusterRoleBinding,
    "retired_account": (namespace, name) of the ServiceAccount an older release made, which a run deletes}}.
    Both components run with the kubelet's credential, so both bindings name the node's user. The
    ServiceAccounts ``kubewin-kube-proxy-<node>`` (token in C:\\etc\\kube-proxy\\token) and
    ``kubewin-flanneld-<node>`` (C:\\etc\\kube-flannel\\token) of older releases are retired: deleting them
    revokes their tokens. kube-proxy's binding keeps its name and roleRef (which the API cannot change), so an
    older binding only needs its subjects patched.
    """
    out = {}
    for component in COMPONENTS:
        name = account_name(component, node_name)
        meta = {"name": name, "labels": {MANAGED_LABEL: "true"}, "annotations": {NODE_ANNOTATION: node_name}}
        if component == "flanneld":
            role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": dict(meta, annotations=dict(meta["annotations"])), "rules": flanneld_rules(node_name)}
            role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}
            subjects = [node_subject(node_name)]
        else:
            role = None
            role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": KUBE_PROXY_CLUSTER_ROLE}
            subjects = [kube_proxy_subject(node_name)]
        binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": dict(meta, annotations=dict(meta["annotations"])), "roleRef": role_ref,
                   "subjects": subjects}
        out[component] = {"account": None, "role": role, "binding": binding,
                          "retired_account": (namespaces[component], name)}
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


def in_place(node_name, namespaces, roles, bindings, managed_accounts):
    """Whether a run of ``present`` (retire=False) would change nothing for this node, judged from lists read
    elsewhere (k8s_join_info's, so a no-op run needs no call of its own): ``roles``/``bindings`` {name: object},
    ``managed_accounts`` the (namespace, name) of ServiceAccounts with the managed label (one to retire is work)."""
    try:
        objects = desired_objects(node_name, namespaces)
    except NodeCredentialsError:
        return False
    for obj in objects.values():
        if tuple(obj["retired_account"]) in managed_accounts:
            return False
        role, binding = obj["role"], obj["binding"]
        current = bindings.get(binding["metadata"]["name"])
        if current is None or current.get("roleRef") != binding["roleRef"] or drift(current, binding, ["subjects"]):
            return False
        if role is not None:
            current = roles.get(role["metadata"]["name"])
            if current is None or drift(current, role, ["rules"]):
                return False
    return True


def _normalise(value):
    return json.dumps(value, sort_keys=True)


def ensure(module, apis, desired, kind, changes, fields, keep_rules=False):
    """Create ``desired`` or bring its ``fields`` (and managed label, node annotation) in line: ``(what was read,
    the object as it is now)`` (``None`` for what does not exist, or is not known in check mode). ``keep_rules``: a
    ClusterRole's rules become the union of the ones it has and the desired ones (nothing it grants is cut)."""
    meta = desired["metadata"]
    name, namespace = meta["name"], meta.get("namespace")
    if kind == "ServiceAccount":
        read = (apis.core.read_namespaced_service_account, (name, namespace))
        create = (apis.core.create_namespaced_service_account, (namespace, desired))
        patch = apis.core.patch_namespaced_service_account
        resource = "serviceaccounts"
    elif kind == "ClusterRole":
        read = (apis.rbac.read_cluster_role, (name,))
        create = (apis.rbac.create_cluster_role, (desired,))
        patch = apis.rbac.patch_cluster_role
        resource = "clusterroles"
    else:
        read = (apis.rbac.read_cluster_role_binding, (name,))
        create = (apis.rbac.create_cluster_role_binding, (desired,))
        patch = apis.rbac.patch_cluster_role_binding
        resource = "clusterrolebindings"
    current = kc.call(apis, "get", resource, namespace, name, read[0], *read[1])
    if current is None:
        changes.append("created %s %s" % (kind, name))
        latest = None
        if not module.check_mode:
            latest = kc.call(apis, "create", resource, namespace, name, create[0], *create[1], not_found_ok=False)
        return None, latest
    labels = (current.get("metadata") or {}).get("labels") or {}
    if labels.get(MANAGED_LABEL) != "true":
        raise kc.K8sError("%s %s%s exists but was not made by kubewin.nodes (no label %s=true): rename or "
                          "delete it, or set kubewin_node_name so the node gets another name"
                          % (kind, name, " in namespace %s" % namespace if namespace else "", MANAGED_LABEL))
    if kind == "ClusterRoleBinding" and current.get("roleRef") != desired["roleRef"]:
        # roleRef cannot change: delete and create again.
        changes.append("replaced %s %s" % (kind, name))
        if not module.check_mode:
            kc.call(apis, "delete", resource, None, name, apis.rbac.delete_cluster_role_binding, name)
            kc.call(apis, "create", resource, None, name, create[0], *create[1], not_found_ok=False)
        return None, None
    if keep_rules:
        kept = list(current.get("rules") or [])
        desired = dict(desired, rules=kept + [r for r in desired["rules"] if r not in kept])
    different = drift(current, desired, fields)
    if different:
        changes.append("updated %s %s (%s)" % (kind, name, ", ".join(different)))
        if not module.check_mode:
            body = {"metadata": {"labels": meta["labels"], "annotations": meta["annotations"]}}
            body.update({f: desired[f] for f in fields})
            args = (name, namespace, body) if namespace else (name, body)
            return current, kc.call(apis, "patch", resource, namespace, name, patch, *args, not_found_ok=False,
                                    _content_type=kc.MERGE_PATCH)
    return current, current


def delete_managed(module, apis, resource, namespace, name, read, delete, args):
    current = kc.call(apis, "get", resource, namespace, name, read, *args)
    if current is None:
        return []
    if ((current.get("metadata") or {}).get("labels") or {}).get(MANAGED_LABEL) != "true":
        module.warn("%s %s was left alone: it does not carry the label %s=true, so kubewin.nodes did not make it."
                    % (resource, name, MANAGED_LABEL))
        return []
    if not module.check_mode:
        kc.call(apis, "delete", resource, namespace, name, delete, *args)
    return ["deleted %s %s%s" % (resource, name, " in namespace %s" % namespace if namespace else "")]


def absent(module, apis, p=None):
    p = p or module.params
    namespaces = dict(DEFAULT_NAMESPACES, **(p["namespaces"] or {}))
    objects = desired_objects(p["node_name"], namespaces)
    changes = []
    for component in COMPONENTS:
        obj = objects[component]
        # no ServiceAccount any more; the one an older release made has the binding's name.
        name = obj["binding"]["metadata"]["name"]
        targets = [("clusterrolebindings", None, apis.rbac.read_cluster_role_binding,
                    apis.rbac.delete_cluster_role_binding, (name,))]
        if obj["role"] is not None:
            targets.append(("clusterroles", None, apis.rbac.read_cluster_role, apis.rbac.delete_cluster_role, (name,)))
        targets.append(("serviceaccounts", namespaces[component], apis.core.read_namespaced_service_account,
                        apis.core.delete_namespaced_service_account, (name, namespaces[component])))
        for resource, namespace, read, delete, args in targets:
            changes += delete_managed(module, apis, resource, namespace, name, read, delete, args)
    changes += delete_shared_secrets(module, apis, p["shared_secrets"])
    return dict(changed=bool(changes), changes=changes)


def delete_shared_secrets(module, apis, refs):
    changes = []
    for ref in refs:
        namespace, _sep, name = ref.partition("/")
        changes += delete_managed(module, apis, "secrets", namespace, name, apis.core.read_namespaced_secret,
                                  apis.core.delete_namespaced_secret, (name, namespace))
    return changes
