#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_join_token
short_description: Create, reuse or delete kubeadm bootstrap tokens and build the join command
version_added: 0.1.0
description:
  - Ensures a bootstrap token exists that a new node can use with C(kubeadm join), and returns it
    together with the API server endpoint, the cluster CA public key pins and the arguments of
    C(kubeadm join) (RV(join_args), also as one command line in RV(join_command)).
  - Tokens are created through the Kubernetes API exactly as C(kubeadm token create) creates them
    (Secret C(kube-system/bootstrap-token-<id>) of type C(bootstrap.kubernetes.io/token)), so no
    C(kubeadm) binary is needed where the module runs. Secrets created by this module carry the
    label C(kubewin.nodes/managed=true).
  - With O(state=present) and no O(token), a still valid token earlier created by this module is
    reused when it has at least O(min_remaining_ttl) left and the same O(usages) and O(groups);
    otherwise a new random token is created.
  - The CA pins (C(sha256:<hex>), one per certificate) are computed from the cluster's own CA bundle
    published in the C(kube-public/cluster-info) ConfigMap, as C(kubeadm token create --print-join-command) does.
  - Runs where the Kubernetes API is reachable with a kubeconfig, usually on the controller or
    delegated to a control-plane host.
  - The returned RV(token), RV(join_args) and RV(join_command) are secrets. Ansible cannot hide individual return
    values of a module, so set C(no_log) to V(true) on the task if its result could be logged or shown.
    The token never appears in messages, warnings, diffs or the module invocation.
author:
  - kubewin.nodes maintainers (@kubewin)
requirements:
  - kubernetes >= 29.0.0 (Python library)
  - cryptography >= 41.0.0 (Python library)
  - PyYAML (Python library, installed with ansible-core)
attributes:
  check_mode:
    support: full
    details:
      - A token that would be created has no id yet, so RV(token_id), RV(token), RV(join_args) and
        RV(join_command) are V(null) in check mode in that case.
  diff_mode:
    support: full
    details:
      - The token secret is shown as C(<redacted>).
  platform:
    platforms: posix
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubewin.nodes.k8s_auth
options:
  state:
    description:
      - V(present) ensures a usable token exists and returns it.
      - V(absent) deletes the token named by O(token_id) or O(token) or, when neither is given,
        every token this module created (found by label).
      - V(discovery) only reads C(kube-public/cluster-info) and returns RV(api_server_endpoint) and
        RV(ca_cert_hashes); no token is made, read or returned.
    type: str
    choices: [present, absent, discovery]
    default: present
  ttl:
    description:
      - Lifetime of a new token, in Go duration syntax such as V(24h), V(1h30m) or V(90m).
      - V(0) creates a token that never expires (not recommended).
      - Ignored for an existing token given with O(token) that is still valid.
    type: str
    default: 24h
  min_remaining_ttl:
    description:
      - A token created earlier by this module is only reused when at least this much of its lifetime
        is left (Go duration syntax). Otherwise a new token is created.
      - If it is not shorter than O(ttl), a new token is created on every run.
    type: str
    default: 1h
  reuse:
    description:
      - With V(false), a token created earlier by this module is never handed out again. Every run
        without O(token) then creates its own token, which the same run can delete by RV(token_id)
        without taking a token away from another run.
    type: bool
    default: true
  usages:
    description:
      - How the token may be used. C(kubeadm join) with token discovery needs both.
    type: list
    elements: str
    choices: [signing, authentication]
    default: [signing, authentication]
  groups:
    description:
      - Extra groups the token authenticates as (C(auth-extra-groups)).
      - Each must match C(^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$).
      - kubeadm's RBAC bindings for node bootstrap and CSR auto-approval use the default group.
    type: list
    elements: str
    default: ['system:bootstrappers:kubeadm:default-node-token']
  description:
    description:
      - Human readable description stored with a new token. An empty string stores none.
    type: str
    default: Bootstrap token created by the kubewin.nodes Ansible collection to join Windows nodes
  token:
    description:
      - A caller-chosen token C(<id>.<secret>) matching C(^[a-z0-9]{6}\.[a-z0-9]{16}$), for example
        kubespray's C(kubeadm_token).
      - With O(state=present), an existing valid Secret for it is used unchanged; if it is missing
        (or expired) it is created with this id and secret. If a token with this id but a different
        secret exists, the module fails.
      - With O(state=absent), the token to delete.
    type: str
  token_id:
    description:
      - Id (the 6 characters before the dot) of the token to delete. Only with O(state=absent).
    type: str
  api_server_endpoint:
    description:
      - C(host:port) the joining nodes use, for example a load balancer's, instead of the server
        published in C(kube-public/cluster-info). Returned in RV(api_server_endpoint) and RV(join_args).
      - Unset, the server of C(kube-public/cluster-info), else of the configured connection.
    type: str
  wait_for_signature:
    description:
      - Wait until kube-controller-manager's bootstrapsigner has signed C(kube-public/cluster-info)
        for the token (data key C(jws-kubeconfig-<id>)) and check that signature, so that
        C(kubeadm join) discovery will work straight away.
      - Not done in check mode, nor when O(usages) lacks V(signing) (nothing would sign it).
    type: bool
    default: true
  wait_timeout:
    description:
      - Seconds to wait for the signature with O(wait_for_signature).
    type: int
    default: 60
notes:
  - The kubeconfig's user must be allowed to get, list, create, update and delete Secrets in
    C(kube-system) and to get ConfigMaps in C(kube-public); C(/etc/kubernetes/admin.conf) can.
  - Tokens expire and are then removed by the controller-manager's C(tokencleaner) controller.
seealso:
  - name: kubeadm token
    description: The kubeadm command this module reproduces.
    link: https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-token/
  - name: Authenticating with bootstrap tokens
    description: The Secret format and the cluster-info signature.
    link: https://kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens/
"""

EXAMPLES = r"""
- name: Get a join token (reusing a recent one), from a control-plane host
  kubewin.nodes.k8s_join_token:
    kubeconfig: /etc/kubernetes/admin.conf
  delegate_to: "{{ groups['kube_control_plane'][0] }}"
  run_once: true
  register: join
  no_log: true

- name: Show the endpoint and CA pins (not secret)
  ansible.builtin.debug:
    msg: "{{ join.api_server_endpoint }} {{ join.ca_cert_hashes }}"

- name: Use kubespray's fixed token, creating it if the cluster does not have it
  kubewin.nodes.k8s_join_token:
    token: "{{ kubeadm_token }}"
    ttl: "0"
  register: join
  no_log: true

- name: A short-lived token, from the controller with the default kubeconfig
  kubewin.nodes.k8s_join_token:
    ttl: 2h
    min_remaining_ttl: 30m
    description: Windows node join (wave 2)
  register: join
  no_log: true

- name: Delete one token
  kubewin.nodes.k8s_join_token:
    state: absent
    token_id: abcdef

- name: A token for this run only, deleted by id at its end
  kubewin.nodes.k8s_join_token:
    ttl: 30m
    reuse: false
  register: join
  no_log: true

- name: The API server endpoint and CA pins, without any token
  kubewin.nodes.k8s_join_token:
    state: discovery
  register: cluster_discovery

- name: Delete every token this collection created
  kubewin.nodes.k8s_join_token:
    state: absent
"""

RETURN = r"""
token_id:
  description: Id of the token (not secret). V(null) in check mode when a new token would be created.
  returned: state is present
  type: str
  sample: abcdef
token:
  description:
    - The bootstrap token C(<id>.<secret>). Secret; use C(no_log) on the task.
    - V(null) in check mode when a new token would be created.
  returned: state is present
  type: str
  sample: abcdef.0123456789abcdef
join_args:
  description:
    - The arguments of C(kubeadm join) for a worker node (after C(kubeadm join) itself) - the API server
      endpoint, C(--token) and the token, and one C(--discovery-token-ca-cert-hash) per CA pin. A node
      adds its own (C(--node-name), C(--cri-socket)), or passes the list to the
      C(kubewin.nodes.join_configuration) filter, which keeps the token off the command line.
    - Contains the token; use C(no_log) on the task.
    - V(null) in check mode when a new token would be created.
  returned: state is present
  type: list
  elements: str
  sample: [192.0.2.10:6443, --token, abcdef.0123456789abcdef, --discovery-token-ca-cert-hash, "sha256:0f1e..."]
join_command:
  description:
    - The C(kubeadm join) command for a worker node, one C(--discovery-token-ca-cert-hash) per CA pin.
      Contains the token; use C(no_log) on the task.
    - V(null) in check mode when a new token would be created.
  returned: state is present
  type: str
  sample: kubeadm join 192.0.2.10:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash sha256:0f1e...
expiration:
  description: When the token expires (UTC, RFC3339), or V(null) if it never expires.
  returned: state is present
  type: str
  sample: "2025-01-31T12:00:00Z"
api_server_endpoint:
  description:
    - C(host:port) of the API server - O(api_server_endpoint) if set, else as published in
      C(kube-public/cluster-info), else of the configured connection.
  returned: state is present or discovery
  type: str
  sample: 192.0.2.10:6443
ca_cert_hashes:
  description: Public key pins of the cluster CA certificates, C(sha256:<hex>) over each DER SubjectPublicKeyInfo.
  returned: state is present or discovery
  type: list
  elements: str
  sample: ["sha256:5c4a8ee6d5e85e2f3d4b1f7b0b6a7b4ea8f2d7b1a6e9d6c3f0b1c2d3e4f5a6b7"]
secret_name:
  description: Name of the token's Secret in C(kube-system). V(null) when not yet known.
  returned: state is present
  type: str
  sample: bootstrap-token-abcdef
reused:
  description: Whether an existing token was returned instead of creating one.
  returned: state is present
  type: bool
  sample: true
signed:
  description:
    - Whether the C(cluster-info) signature for the token was found and verified.
    - V(false) when the signature was not checked (O(wait_for_signature=false), check mode, or no
      V(signing) usage).
  returned: state is present
  type: bool
  sample: true
deleted_token_ids:
  description: Ids of the tokens deleted (or that would be deleted in check mode).
  returned: state is absent
  type: list
  elements: str
  sample: [abcdef]
"""

from ansible_collections.kubewin.nodes.plugins.module_utils import _bootstrap_token as bt
from ansible_collections.kubewin.nodes.plugins.module_utils import _cluster_info as ci
from ansible_collections.kubewin.nodes.plugins.module_utils._join_token import run
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s.client import build_apis
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s.runner import run_module


def argument_spec():
    spec = dict(
        state=dict(type="str", choices=["present", "absent", "discovery"], default="present"),
        ttl=dict(type="str", default=bt.DEFAULT_TTL),
        min_remaining_ttl=dict(type="str", default="1h"),
        reuse=dict(type="bool", default=True),
        usages=dict(type="list", elements="str", choices=list(bt.KNOWN_USAGES), default=list(bt.DEFAULT_USAGES)),
        groups=dict(type="list", elements="str", default=list(bt.DEFAULT_GROUPS)),
        description=dict(type="str", default=bt.DEFAULT_DESCRIPTION),
        token=dict(type="str", no_log=True),
        token_id=dict(type="str", no_log=False),
        api_server_endpoint=dict(type="str"),
        wait_for_signature=dict(type="bool", default=True),
        wait_timeout=dict(type="int", default=60),
    )
    spec.update(kc.auth_argument_spec())
    return spec


def main():
    # The token values are returned in token/join_args/join_command on purpose and masked everywhere else
    # (module.add_result_secrets).
    run_module(argument_spec(), run, build_apis=build_apis, mutually_exclusive=[("token", "token_id")],
               required_libs=[("cryptography", ci.HAS_CRYPTOGRAPHY, ci.CRYPTOGRAPHY_IMPORT_ERROR)])


if __name__ == "__main__":
    main()
