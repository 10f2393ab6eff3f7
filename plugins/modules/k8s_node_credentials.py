#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_node_credentials
short_description: Per-node RBAC of kube-proxy and flanneld on a Windows node, which run as the node
version_added: 0.2.0
description:
  - For one Windows node, binds the ClusterRole C(system:node-proxier) to the node's own identity, the user
    C(system:node:<node>) (ClusterRoleBinding C(kubewin-kube-proxy-<node>), labelled C(kubewin.nodes/managed=true)).
    kube-proxy runs with the kubelet's kubeconfig, whose client certificate the kubelet rotates itself, so its
    credential outlives any outage the node itself survives. The Node authorizer gives that identity Services,
    its own Node and Events; the binding adds what it lacks, list and watch of EndpointSlices and ServiceCIDRs
    (and Endpoints, every Node), all read only.
  - flanneld runs with the same kubeconfig. The Node authorizer lets that identity patch its own Node's status but
    read only its own Node, so a ClusterRole C(kubewin-flanneld-<node>) that may get, list and watch Nodes (flannel's
    node informer reads every Node) is bound to the user C(system:node:<node>).
  - Neither gets a ServiceAccount or a token. The ServiceAccounts C(kubewin-kube-proxy-<node>) and
    C(kubewin-flanneld-<node>) older releases made are deleted, which revokes every token they issued, and their
    bindings are brought to the above (a binding's subjects are patched; its roleRef, which the API cannot change,
    is the same). RV(retired) names the accounts deleted, so the caller removes the token files on the node.
  - Deleting a node's bindings revokes its extra rights at once; the node's identity itself is revoked as for any
    node (delete the Node; its certificate stays valid until it expires).
  - With O(state=absent), deletes what it made for the node (and what older releases made), and the old shared token
    Secrets of O(shared_secrets) if they carry the managed label.
author:
  - kubewin.nodes maintainers (@kubewin)
requirements:
  - kubernetes >= 29.0.0 (Python library)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
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
        handled as O(node_name) would be. The result is in RV(nodes), by node name.
      - A node that fails does not stop the others; the task then fails, naming each node that did, and RV(nodes)
        still holds the others' results.
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
        description: Deprecated and ignored, see O(token_files_sha512).
        type: dict
      expiration_seconds:
        description: Deprecated and ignored, see O(expiration_seconds).
        type: int
      allow_long_expiration:
        description: Deprecated and ignored, see O(allow_long_expiration).
        type: bool
      require_binding:
        description: Deprecated and ignored, see O(require_binding).
        type: bool
      renew_fraction:
        description: Deprecated and ignored, see O(renew_fraction).
        type: float
  namespaces:
    description: Namespace of the ServiceAccount older releases made for each component (deleted now).
    type: dict
    default: {kube-proxy: kube-system, flanneld: kube-flannel}
  expiration_seconds:
    description:
      - Deprecated and ignored (no token is issued any more); a value other than the default warns. Removed in 1.0.0.
    type: int
    default: 604800
  allow_long_expiration:
    description:
      - Deprecated and ignored (no token is issued any more); a value other than the default warns. Removed in 1.0.0.
    type: bool
    default: false
  require_binding:
    description:
      - Deprecated and ignored (no token is issued any more); a value other than the default warns. Removed in 1.0.0.
    type: bool
    default: true
  renew_fraction:
    description:
      - Deprecated and ignored (no token is issued any more); a value other than the default warns. Removed in 1.0.0.
    type: float
    default: 0.5
  token_files_sha512:
    description:
      - Deprecated and ignored (no token is issued any more); a value other than the default warns. Removed in 1.0.0.
    type: dict
    default: {}
  shared_secrets:
    description: With O(state=absent), the old shared token Secrets to delete too, as C(namespace/name).
    type: list
    elements: str
    default: []
  retire:
    description:
      - With V(false), the ServiceAccounts older releases made are kept, and each binding that names one keeps naming
        it beside the node, and flanneld's ClusterRole keeps the rules it had (an older release's may patch its
        Node's status), so a kube-proxy or flanneld still running with that account's token keeps working; the
        accounts that exist are named in RV(to_retire). A second run with V(true), once the services run with the
        kubelet's kubeconfig, deletes them (the network role does so after it has switched kube-proxy's service).
      - With V(true), the accounts are deleted, which revokes their tokens, and the bindings name only the node.
    type: bool
    default: true
    version_added: 0.3.0
  state:
    description: V(present) makes and brings in line; V(absent) deletes.
    type: str
    choices: [present, absent]
    default: present
"""

EXAMPLES = r"""
- name: The RBAC of every Windows node of the play, in one task
  kubewin.nodes.k8s_node_credentials:
    kubeconfig: /etc/kubernetes/admin.conf
    nodes:
      - name: win-1
      - name: win-2
  run_once: true
  delegate_to: "{{ groups['kube_control_plane'][0] }}"
  register: creds

- name: kube-proxy's and flanneld's RBAC as the node win-1
  kubewin.nodes.k8s_node_credentials:
    kubeconfig: /etc/kubernetes/admin.conf
    node_name: win-1
  delegate_to: "{{ groups['kube_control_plane'][0] }}"
"""

RETURN = r"""
changes:
  description: What was (or would be, in check mode) created, updated or deleted.
  returned: always
  type: list
  elements: str
  sample: ["updated ClusterRoleBinding kubewin-kube-proxy-win-1 (subjects)",
           "deleted serviceaccounts kubewin-kube-proxy-win-1 in namespace kube-system"]
retired:
  description:
    - The components whose ServiceAccount of an older release was (or would be, in check mode) deleted, with its
      C(namespace/name). Their token files on the node are no longer used.
  returned: O(state=present)
  type: dict
  sample: {kube-proxy: kube-system/kubewin-kube-proxy-win-1}
to_retire:
  description:
    - With O(retire=false), the components whose ServiceAccount of an older release exists (kept by this run), with
      its C(namespace/name). A run with O(retire=true) deletes them.
  returned: O(state=present)
  type: dict
  sample: {kube-proxy: kube-system/kubewin-kube-proxy-win-1}
  version_added: 0.3.0
pod_cidr:
  description: The Node's pod subnet (C(spec.podCIDR)), read with the Node (V(null) before it has one).
  returned: O(state=present) and O(node_name)
  type: str
  sample: 10.244.3.0/24
nodes:
  description:
    - With O(nodes), each node's result by name, with the keys a task with O(node_name) returns (RV(changes),
      RV(retired), RV(pod_cidr)), or C(failed) and C(msg) for a node that failed.
  returned: O(nodes) is given
  type: dict
"""

from ansible_collections.kubewin.nodes.plugins.module_utils import _node_credentials as nc
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s.client import build_apis
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s.runner import run_module

absent = nc.absent
delete_shared_secrets = nc.delete_shared_secrets

# Options of the token layout, ignored since kube-proxy runs as its node: their defaults (a value other than
# these warns). Removed in 1.0.0.
DEPRECATED = {"expiration_seconds": 604800, "renew_fraction": 0.5, "allow_long_expiration": False,
              "require_binding": True, "token_files_sha512": {}}


def warn_deprecated(module, p):
    """A deprecation warning for each ignored option set to other than its default (in the task or an entry)."""
    entries = [p] + list(p.get("nodes") or [])
    for option, default in DEPRECATED.items():
        values = [e.get(option) for e in entries if e.get(option) is not None]
        if option == "token_files_sha512":
            # a file's SHA-512; null (no file) is what the default means too
            values = [v for v in values if any(x is not None for x in v.values())]
        if any(v != default for v in values):
            module.deprecate("k8s_node_credentials: %s is ignored: kube-proxy and flanneld run with the kubelet's "
                             "credential, so no token is issued (remove the option)" % option,
                             version="1.0.0", collection_name="kubewin.nodes")


def present(module, apis, p=None):
    p = p or module.params
    node_name = p["node_name"]
    namespaces = dict(nc.DEFAULT_NAMESPACES, **(p["namespaces"] or {}))
    objects = nc.desired_objects(node_name, namespaces)
    node = kc.call(apis, "get", "nodes", None, node_name, apis.core.read_node, node_name)
    if node is None:
        if module.check_mode:
            return dict(changed=True, retired={}, to_retire={}, pod_cidr=None,
                        changes=["would make the RBAC of %s once it has joined" % node_name],
                        msg="Node %s does not exist yet: its RBAC is made once it has joined." % node_name)
        raise kc.K8sError("Node %s does not exist: kube-proxy and flanneld run as the node, so it must have joined "
                          "first (run scale_up.yml for this host)." % node_name)
    changes, retired, to_retire = [], {}, {}
    for component in nc.COMPONENTS:
        obj = objects[component]
        namespace, name = obj["retired_account"]
        binding, keep_rules = obj["binding"], False
        if not p.get("retire", True):
            # The ServiceAccount an older release made for it, kept while the service may still run with its token:
            # its binding names it beside the node until the run that retires it (review-s5 C1).
            account = kc.call(apis, "get", "serviceaccounts", namespace, name,
                              apis.core.read_namespaced_service_account, name, namespace)
            if ((account or {}).get("metadata") or {}).get("labels", {}).get(nc.MANAGED_LABEL) == "true":
                to_retire[component] = "%s/%s" % (namespace, name)
                # Its ClusterRole keeps what the older release granted (flanneld's patch of nodes/status) until the
                # retiring call: a service that restarts on the old token before it is switched keeps working
                # (review-s6 M1).
                keep_rules = True
                binding = dict(binding, subjects=binding["subjects"] + [
                    {"kind": "ServiceAccount", "name": name, "namespace": namespace}])
        # The kubelet's identity, given what it lacks (kube-proxy: system:node-proxier; flanneld: read every Node).
        if obj["role"] is not None:
            nc.ensure(module, apis, obj["role"], "ClusterRole", changes, ["rules"], keep_rules=keep_rules)
        nc.ensure(module, apis, binding, "ClusterRoleBinding", changes, ["subjects"])
        if not p.get("retire", True):
            continue
        # The ServiceAccount an older release made for it: deleted, which revokes its tokens.
        deleted = nc.delete_managed(module, apis, "serviceaccounts", namespace, name,
                                    apis.core.read_namespaced_service_account,
                                    apis.core.delete_namespaced_service_account, (name, namespace))
        if deleted:
            retired[component] = "%s/%s" % (namespace, name)
        changes += deleted
    return dict(changed=bool(changes), changes=changes, retired=retired, to_retire=to_retire,
                pod_cidr=(node.get("spec") or {}).get("podCIDR"))


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
        retire=dict(type="bool", default=True),
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
    warn_deprecated(module, p)
    if not p["nodes"]:
        return run_one(module, apis)
    # Every node of the run in one module run (one Python start on the control-plane host): each node's
    # objects decided on its own; a node that fails
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
    if errors:
        raise kc.K8sError(" ".join(errors), changed=changed, nodes=results)
    return dict(changed=changed, nodes=results,
                changes=["%s: %s" % (n, c) for n, r in results.items() for c in r.get("changes", [])] + shared)


def main():
    run_module(argument_spec(), run, build_apis=build_apis, mutually_exclusive=[("node_name", "nodes")],
               required_one_of=[("node_name", "nodes")])


if __name__ == "__main__":
    main()
