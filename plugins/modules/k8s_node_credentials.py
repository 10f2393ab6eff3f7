#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_node_credentials
short_description: Per-node credentials of kube-proxy and flanneld on a Windows node
version_added: 0.2.0
description:
  - For one Windows node, makes kube-proxy's ServiceAccount (C(kubewin-kube-proxy-<node>), labelled
    C(kubewin.nodes/managed=true)) and binds it to the ClusterRole C(system:node-proxier).
  - flanneld gets no ServiceAccount and no token. It runs with the kubelet's kubeconfig, the node's own identity
    C(system:node:<node>), whose changes to its Node the NodeRestriction admission plugin limits (no
    C(node-restriction.kubernetes.io/) labels, no taints). The Node authorizer lets that identity patch its own
    Node's status but read only its own Node, so a ClusterRole C(kubewin-flanneld-<node>) that may get, list and
    watch Nodes (flannel's node informer reads every Node) is bound to the user C(system:node:<node>).
  - The ServiceAccount C(kubewin-flanneld-<node>) older releases made for flanneld is deleted (which revokes its
    token), and their flanneld ClusterRole and ClusterRoleBinding of that name are brought to the above.
  - Issues a token for kube-proxy from the TokenRequest API, bound to the Node object (deleting the Node invalidates
    it) and valid for O(expiration_seconds) or less if the API server shortens it. API servers that cannot bind
    tokens to Nodes (before 1.31, or with the ServiceAccountTokenNodeBinding feature gate off) fail, unless
    O(require_binding=false), with which they get an unbound token of the same lifetime, and RV(bound) says so.
  - The token's record (annotations on the ServiceAccount) is patched with the C(resourceVersion) this run
    read, so a concurrent run for the same node is detected (409) and reported instead of overwritten.
  - A token is issued again only when less than O(renew_fraction) of its lifetime is left, when the file on the
    node (O(token_files_sha512)) is not the token last issued, or when the Node was re-created. What the last
    run issued is recorded in the ServiceAccount's annotations (expiry, issue time, SHA-512), so this decision
    never needs the token itself.
  - With O(state=absent), deletes what it made for the node, and the old shared token Secrets of
    O(shared_secrets) if they carry the managed label.
author:
  - kubewin.nodes maintainers (@kubewin)
requirements:
  - kubernetes >= 29.0.0 (Python library)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
    details:
      - Nothing is shown, as the result would hold the tokens.
  platform:
    platforms: posix
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubewin.nodes.k8s_auth
options:
  node_name:
    description: The Kubernetes Node name of the Windows node. Required unless O(nodes) is given.
    type: str
  nodes:
    description:
      - Several nodes in one task (one module run, whatever their number), instead of O(node_name). Each node is
        handled as O(node_name) would be, with the task's options unless its entry sets them; one node's renewal
        never issues another's token again. The result is in RV(nodes), by node name.
      - A node that fails does not stop the others; the task then fails, naming each node that did, and RV(nodes)
        still holds the others' results (their tokens included).
      - O(shared_secrets) are deleted once, after the nodes.
    type: list
    elements: dict
    version_added: 0.3.0
    suboptions:
      name:
        description: The Kubernetes Node name.
        type: str
        required: true
      token_files_sha512:
        description: This node's O(token_files_sha512).
        type: dict
      expiration_seconds:
        description: This node's O(expiration_seconds), if not the task's.
        type: int
      allow_long_expiration:
        description: This node's O(allow_long_expiration), if not the task's.
        type: bool
      require_binding:
        description: This node's O(require_binding), if not the task's.
        type: bool
      renew_fraction:
        description: This node's O(renew_fraction), if not the task's.
        type: float
  namespaces:
    description: Namespace of each component's ServiceAccount (flanneld's is the one older releases made, deleted now).
    type: dict
    default: {kube-proxy: kube-system, flanneld: kube-flannel}
  expiration_seconds:
    description:
      - Requested token lifetime, at least 600 and at most 2592000 (30 days) unless O(allow_long_expiration).
        The API server may shorten it.
    type: int
    default: 604800
  allow_long_expiration:
    description:
      - Accept an O(expiration_seconds) above 30 days (up to the TokenRequest API's 2^32).
    type: bool
    default: false
  require_binding:
    description:
      - Fail when the API server cannot bind tokens to the Node object, instead of issuing an unbound token
        (which deleting the Node does not revoke).
    type: bool
    default: true
  renew_fraction:
    description: Issue a new token when less than this fraction of the current one's lifetime is left.
    type: float
    default: 0.5
  token_files_sha512:
    description:
      - SHA-512 of each component's token file on the node (V(null) or missing when there is none).
      - A component not listed is compared by expiry only.
    type: dict
    default: {}
  shared_secrets:
    description: With O(state=absent), the old shared token Secrets to delete too, as C(namespace/name).
    type: list
    elements: str
    default: []
  state:
    description: V(present) makes and renews; V(absent) deletes.
    type: str
    choices: [present, absent]
    default: present
notes:
  - Run it with C(no_log=true), because RV(tokens) holds the tokens.
"""

EXAMPLES = r"""
- name: The credentials of every Windows node of the play, in one task
  kubewin.nodes.k8s_node_credentials:
    kubeconfig: /etc/kubernetes/admin.conf
    nodes:
      - name: win-1
        token_files_sha512: {kube-proxy: null}
      - name: win-2
  run_once: true
  delegate_to: "{{ groups['kube_control_plane'][0] }}"
  register: creds
  no_log: true

- name: kube-proxy's token and flanneld's node RBAC of win-1
  kubewin.nodes.k8s_node_credentials:
    kubeconfig: /etc/kubernetes/admin.conf
    node_name: win-1
  delegate_to: "{{ groups['kube_control_plane'][0] }}"
  register: creds
  no_log: true
"""

RETURN = r"""
tokens:
  description: The tokens issued by this run, by component (only those renewed; only kube-proxy has one). Secret.
  returned: success
  type: dict
renewed:
  description: Per component, why its token was (or would be) issued again, or why not.
  returned: success
  type: dict
  sample: {kube-proxy: "valid until 2026-12-03T09:00:00Z"}
expires:
  description: Per component, when its current token expires (V(null) in check mode before the first token).
  returned: success
  type: dict
bound:
  description: Whether the tokens issued are bound to the Node object.
  returned: success
  type: bool
accounts:
  description: Per component with a token (kube-proxy), C(namespace/name) of its ServiceAccount.
  returned: always
  type: dict
changes:
  description: What was (or would be, in check mode) created, updated, issued or deleted; never a token.
  returned: always
  type: list
  elements: str
  sample: ["created ServiceAccount kubewin-kube-proxy-win-1", "issued a token for kube-proxy (no token issued yet)",
           "deleted serviceaccounts kubewin-flanneld-win-1 in namespace kube-flannel"]
ca_data:
  description: The cluster CA (base64 PEM, ConfigMap kube-system/kube-root-ca.crt) for the kubeconfigs.
  returned: O(state=present)
  type: str
pod_cidr:
  description: The Node's pod subnet (C(spec.podCIDR)), read with the Node (V(null) before it has one).
  returned: O(state=present) and O(node_name)
  type: str
  sample: 10.244.3.0/24
nodes:
  description:
    - With O(nodes), each node's result by name, with the keys a task with O(node_name) returns (RV(tokens),
      RV(renewed), RV(expires), RV(bound), RV(accounts), RV(changes), RV(ca_data), RV(pod_cidr)), or C(failed)
      and C(msg) for a node that failed. Secret (the tokens).
  returned: O(nodes) is given
  type: dict
"""

import base64
import datetime

from ansible_collections.kubewin.nodes.plugins.module_utils import _node_credentials as nc
from ansible_collections.kubewin.nodes.plugins.module_utils import _node_credentials_api as api
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s.client import build_apis
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s.runner import run_module

absent = api.absent
delete_shared_secrets = api.delete_shared_secrets


def now():
    return datetime.datetime.now(datetime.timezone.utc)


def present(module, apis, p=None):
    p = p or module.params
    node_name = p["node_name"]
    nc.check_settings(p["expiration_seconds"], p["renew_fraction"], p["allow_long_expiration"])
    namespaces = dict(nc.DEFAULT_NAMESPACES, **(p["namespaces"] or {}))
    objects = nc.desired_objects(node_name, namespaces)
    accounts = {c: "%s/%s" % (namespaces[c], objects[c]["account"]["metadata"]["name"]) for c in nc.TOKEN_COMPONENTS}
    node = kc.call(apis, "get", "nodes", None, node_name, apis.core.read_node, node_name)
    if node is None:
        if module.check_mode:
            return dict(changed=True, tokens={}, accounts=accounts, bound=None, ca_data=None, pod_cidr=None,
                        changes=["would make the credentials of %s once it has joined" % node_name],
                        expires={c: None for c in nc.TOKEN_COMPONENTS},
                        renewed={c: "the node has not joined yet" for c in nc.TOKEN_COMPONENTS},
                        msg="Node %s does not exist yet: its credentials are made once it has joined." % node_name)
        raise kc.K8sError("Node %s does not exist: kube-proxy's token is bound to the Node "
                          "object, so the node must have joined first (run scale_up.yml for this host)." % node_name)
    node_uid = node["metadata"]["uid"]
    root_ca = kc.call(apis, "get", "configmaps", "kube-system", "kube-root-ca.crt",
                      apis.core.read_namespaced_config_map, "kube-root-ca.crt", "kube-system") or {}
    ca_pem = (root_ca.get("data") or {}).get("ca.crt")
    if not ca_pem:
        raise kc.K8sError("ConfigMap kube-system/kube-root-ca.crt has no ca.crt: it is published by "
                          "kube-controller-manager (root-ca-cert-publisher); is it running?")
    ca_data = base64.b64encode(ca_pem.encode("utf-8")).decode("ascii")

    changes = []
    tokens, renewed, expires = {}, {}, {}
    bound = True
    when = now()
    for component in nc.COMPONENTS:
        obj = objects[component]
        if obj["account"] is None:
            # flanneld: the kubelet's identity, given read access to every Node; the ServiceAccount an older
            # release made for it is deleted (its token stops working).
            api.ensure(module, apis, obj["role"], "ClusterRole", changes, ["rules"])
            api.ensure(module, apis, obj["binding"], "ClusterRoleBinding", changes, ["subjects"])
            namespace, name = obj["retired_account"]
            changes += api.delete_managed(module, apis, "serviceaccounts", namespace, name,
                                          apis.core.read_namespaced_service_account,
                                          apis.core.delete_namespaced_service_account, (name, namespace))
            continue
        account, latest = api.ensure(module, apis, obj["account"], "ServiceAccount", changes,
                                     ["automountServiceAccountToken"])
        if obj["role"] is not None:
            api.ensure(module, apis, obj["role"], "ClusterRole", changes, ["rules"])
        api.ensure(module, apis, obj["binding"], "ClusterRoleBinding", changes, ["subjects"])
        annotations = ((account or {}).get("metadata") or {}).get("annotations") or {}
        files = p["token_files_sha512"] or {}
        file_sha = files.get(component) if component in files else annotations.get(nc.SHA512_ANNOTATION)
        renew, reason = nc.renewal(annotations, when, node_uid, file_sha, p["renew_fraction"])
        renewed[component] = reason
        expires[component] = annotations.get(nc.EXPIRES_ANNOTATION)
        if not renew:
            continue
        name, namespace = obj["account"]["metadata"]["name"], namespaces[component]
        if account is not None and nc.revoke_before_renewal(reason):
            # a new UID: every token of the account so far stops working (security-2 N5)
            changes.append("revoked the earlier tokens of %s (ServiceAccount %s/%s made again)"
                           % (component, namespace, name))
            if not module.check_mode:
                kc.call(apis, "delete", "serviceaccounts", namespace, name,
                        apis.core.delete_namespaced_service_account, name, namespace)
                latest = kc.call(apis, "create", "serviceaccounts", namespace, name,
                                 apis.core.create_namespaced_service_account, namespace, obj["account"],
                                 not_found_ok=False)
        changes.append("issued a token for %s (%s)" % (component, reason))
        if module.check_mode:
            continue
        answer, bound_now = api.request_token(apis, name, namespace, node_name, node_uid, p["expiration_seconds"],
                                              p["require_binding"])
        bound = bound and bound_now
        token = (answer.get("status") or {}).get("token")
        if not token:
            raise kc.K8sError("The TokenRequest for ServiceAccount %s/%s returned no token." % (namespace, name))
        notes = nc.record(answer.get("status"), when, token, node_uid, bound_now)
        # The resourceVersion read (or written by this run): a precondition, so a concurrent run's record is
        # not overwritten (the API server answers 409 when the account changed since).
        meta = {"annotations": notes}
        version = ((latest or {}).get("metadata") or {}).get("resourceVersion")
        if version:
            meta["resourceVersion"] = version
        try:
            kc.call(apis, "patch", "serviceaccounts", namespace, name, apis.core.patch_namespaced_service_account,
                    name, namespace, {"metadata": meta}, not_found_ok=False, _content_type=kc.MERGE_PATCH)
        except kc.K8sError as exc:
            if exc.status == 409:
                raise kc.K8sError(nc.concurrent_run_message(node_name, namespace, name)) from None
            raise
        tokens[component] = token
        expires[component] = notes[nc.EXPIRES_ANNOTATION]
    result = dict(changed=bool(changes), tokens=tokens, renewed=renewed, expires=expires, bound=bound,
                  accounts=accounts, ca_data=ca_data, changes=changes,
                  pod_cidr=(node.get("spec") or {}).get("podCIDR"))
    if not bound:
        module.warn("The API server cannot bind tokens to Node objects (ServiceAccountTokenNodeBinding: Kubernetes "
                    "1.31 or newer, GA in 1.33): node %s got unbound tokens that still expire; deleting the Node "
                    "does not revoke them, reset deletes their ServiceAccounts." % node_name)
    return result


def argument_spec():
    spec = dict(
        node_name=dict(type="str"),
        nodes=dict(type="list", elements="dict", options=dict(
            name=dict(type="str", required=True),
            token_files_sha512=dict(type="dict", no_log=False),
            expiration_seconds=dict(type="int"),
            allow_long_expiration=dict(type="bool"),
            require_binding=dict(type="bool"),
            renew_fraction=dict(type="float"),
        )),
        namespaces=dict(type="dict", default=dict(nc.DEFAULT_NAMESPACES)),
        expiration_seconds=dict(type="int", default=604800),
        allow_long_expiration=dict(type="bool", default=False),
        require_binding=dict(type="bool", default=True),
        renew_fraction=dict(type="float", default=0.5),
        token_files_sha512=dict(type="dict", default={}, no_log=False),
        shared_secrets=dict(type="list", elements="str", default=[], no_log=False),
        state=dict(type="str", choices=["present", "absent"], default="present"),
    )
    spec.update(kc.auth_argument_spec())
    return spec


def run_one(module, apis, p=None):
    p = p or module.params
    try:
        return present(module, apis, p) if p["state"] == "present" else absent(module, apis, p)
    except nc.NodeCredentialsError as exc:
        raise kc.K8sError("k8s_node_credentials for node %s: %s" % (p["node_name"], exc)) from None


def run(module, apis):
    p = module.params
    if not p["nodes"]:
        return run_one(module, apis)
    # Every node of the run in one module run (one Python start on the control-plane host): each node's
    # objects and token decided on its own (one node's renewal never re-issues another's); a node that fails
    # does not stop the others, and the task fails at the end naming each that did.
    names = [entry["name"] for entry in p["nodes"]]
    if len(set(names)) != len(names):
        raise kc.K8sError("nodes: each node may be named once (%s)." % ", ".join(sorted(
            n for n in set(names) if names.count(n) > 1)))
    results, errors = {}, []
    for entry in p["nodes"]:
        params = dict(p, node_name=entry["name"], shared_secrets=[], nodes=None)
        params.update((k, v) for k, v in entry.items() if k != "name" and v is not None)
        try:
            results[entry["name"]] = run_one(module, apis, params)
        except kc.K8sError as exc:
            errors.append(exc.msg)
            results[entry["name"]] = dict(changed=False, failed=True, msg=exc.msg)
    shared = delete_shared_secrets(module, apis, p["shared_secrets"]) if p["state"] == "absent" else []
    changed = bool(shared) or any(r["changed"] for r in results.values())
    ca_data = next((r.get("ca_data") for r in results.values() if r.get("ca_data")), None)
    if errors:
        raise kc.K8sError(" ".join(errors), changed=changed, nodes=results, ca_data=ca_data)
    return dict(changed=changed, nodes=results, ca_data=ca_data,
                changes=["%s: %s" % (n, c) for n, r in results.items() for c in r.get("changes", [])] + shared)


def main():
    run_module(argument_spec(), run, build_apis=build_apis, mutually_exclusive=[("node_name", "nodes")],
               required_one_of=[("node_name", "nodes")])


if __name__ == "__main__":
    main()
