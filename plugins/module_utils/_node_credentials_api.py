# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The Kubernetes API calls of ``kubewin.nodes.k8s_node_credentials``: create or bring in line one of its
objects, delete what it made. The module keeps the decisions' order (present, absent).
PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _node_credentials as nc
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc


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
    if labels.get(nc.MANAGED_LABEL) != "true":
        raise kc.K8sError("%s %s%s exists but was not made by kubewin.nodes (no label %s=true): rename or "
                          "delete it, or set kubewin_node_name so the node gets another name"
                          % (kind, name, " in namespace %s" % namespace if namespace else "", nc.MANAGED_LABEL))
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
    different = nc.drift(current, desired, fields)
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
    if ((current.get("metadata") or {}).get("labels") or {}).get(nc.MANAGED_LABEL) != "true":
        module.warn("%s %s was left alone: it does not carry the label %s=true, so kubewin.nodes did not make it."
                    % (resource, name, nc.MANAGED_LABEL))
        return []
    if not module.check_mode:
        kc.call(apis, "delete", resource, namespace, name, delete, *args)
    return ["deleted %s %s%s" % (resource, name, " in namespace %s" % namespace if namespace else "")]


def absent(module, apis, p=None):
    p = p or module.params
    namespaces = dict(nc.DEFAULT_NAMESPACES, **(p["namespaces"] or {}))
    objects = nc.desired_objects(p["node_name"], namespaces)
    changes = []
    for component in nc.COMPONENTS:
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
