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

import hmac

from ansible_collections.kubewin.nodes.plugins.module_utils import _bootstrap_token as bt
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import waiter
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s.client import build_apis
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s.runner import run_module

POLL_INTERVAL = 2.0
CREATE_ATTEMPTS = 3


# --- the Secrets and the ConfigMap, through the shared client -------------------------------------

def get_cluster_info(apis):
    return kc.call(apis, "get", "configmaps", bt.CLUSTER_INFO_NAMESPACE, bt.CLUSTER_INFO_NAME,
                   apis.core.read_namespaced_config_map, bt.CLUSTER_INFO_NAME, bt.CLUSTER_INFO_NAMESPACE)


def get_secret(apis, name):
    return kc.call(apis, "get", "secrets", bt.SECRET_NAMESPACE, name,
                   apis.core.read_namespaced_secret, name, bt.SECRET_NAMESPACE)


def list_managed_secrets(apis):
    result = kc.call(apis, "list", "secrets", bt.SECRET_NAMESPACE, None, apis.core.list_namespaced_secret,
                     bt.SECRET_NAMESPACE, label_selector=bt.MANAGED_LABEL_SELECTOR)
    return (result or {}).get("items") or []


def create_secret(apis, body):
    """The created Secret, or False when one of that name exists already (HTTP 409)."""
    try:
        return kc.call(apis, "create", "secrets", bt.SECRET_NAMESPACE, body["metadata"]["name"],
                       apis.core.create_namespaced_secret, bt.SECRET_NAMESPACE, body, not_found_ok=False)
    except kc.K8sError as exc:
        if exc.status == 409:
            return False
        raise


def replace_secret(apis, body):
    name = body["metadata"]["name"]
    return kc.call(apis, "update", "secrets", bt.SECRET_NAMESPACE, name,
                   apis.core.replace_namespaced_secret, name, bt.SECRET_NAMESPACE, body, not_found_ok=False)


def delete_secret(apis, name):
    """True if deleted, False if it was gone already."""
    return kc.call(apis, "delete", "secrets", bt.SECRET_NAMESPACE, name,
                   apis.core.delete_namespaced_secret, name, bt.SECRET_NAMESPACE) is not None


# --- discovery --------------------------------------------------------------------------------------

def _cluster_details(module, apis):
    """``(endpoint, ca_pins)`` from kube-public/cluster-info; O(api_server_endpoint) overrides its server."""
    cm = get_cluster_info(apis)
    if cm is None:
        raise kc.K8sError(
            "ConfigMap kube-public/cluster-info does not exist, so nodes cannot discover this cluster with "
            "a token. It is created by 'kubeadm init' (phase bootstrap-token); run "
            "'kubeadm init phase bootstrap-token' on a control-plane node to create it."
        )
    kubeconfig_text = (cm.get("data") or {}).get(bt.CLUSTER_INFO_KUBECONFIG_KEY)
    if not kubeconfig_text:
        raise kc.K8sError("ConfigMap kube-public/cluster-info has no 'kubeconfig' key; recreate it with "
                          "'kubeadm init phase bootstrap-token' on a control-plane node.")
    try:
        server, ca_pem = bt.cluster_info_details(kubeconfig_text)
        if not ca_pem:
            raise bt.BootstrapTokenError(
                "its kubeconfig has no certificate-authority-data, so no CA pin can be computed"
            )
        pins = bt.ca_cert_hashes(ca_pem)
        endpoint = bt.endpoint_from_server(server) or bt.endpoint_from_server(apis.host)
    except bt.BootstrapTokenError as exc:
        raise kc.K8sError("ConfigMap kube-public/cluster-info is not usable: %s" % exc) from None
    endpoint = module.params["api_server_endpoint"] or endpoint
    if not endpoint:
        raise kc.K8sError("The API server endpoint is unknown: cluster-info has no server and no host is configured.")
    return endpoint, pins


# --- state=present: resolve the parameters, choose the token, write it, report -----------------------

def _resolve(module):
    """The validated parameters of state=present."""
    params = module.params
    try:
        wanted = dict(
            ttl=bt.parse_duration(params["ttl"]),
            min_remaining=bt.parse_duration(params["min_remaining_ttl"]),
            usages=bt.validate_usages(params["usages"]),
            groups=bt.validate_groups(params["groups"]),
            supplied=bt.parse_token(params["token"]) if params["token"] else None,
        )
    except bt.BootstrapTokenError as exc:
        raise kc.K8sError(str(exc)) from None
    if params["token_id"]:
        raise kc.K8sError("token_id is only used with state=absent; to use a token of your choice set token.")
    if wanted["ttl"] and wanted["min_remaining"] >= wanted["ttl"] and params["reuse"]:
        module.warn("min_remaining_ttl (%s) is not shorter than ttl (%s), so a new token is created on every run."
                    % (bt.format_duration(wanted["min_remaining"]), bt.format_duration(wanted["ttl"])))
    return wanted


class _Token(object):
    """The token a run hands out: its id and secret (None in check mode before creation), its expiration,
    and what has to be written (``action``: None, "create" or "replace")."""

    def __init__(self, token_id=None, token_secret=None, expiration=None, action=None, reused=False, before=None):
        self.token_id = token_id
        self.token_secret = token_secret
        self.expiration = expiration
        self.action = action
        self.reused = reused
        self.before = before or {}

    def set(self, module, token_id, token_secret):
        self.token_id, self.token_secret = token_id, token_secret
        module.add_result_secrets(token_secret, "%s.%s" % (token_id, token_secret))

    @property
    def value(self):
        return "%s.%s" % (self.token_id, self.token_secret) if self.token_id else None


def _supplied_token(module, apis, wanted, now):
    """The caller's token: used if valid and the same, renewed if expired, created if missing."""
    token_id, token_secret = wanted["supplied"]
    token = _Token()
    token.set(module, token_id, token_secret)
    name = bt.secret_name(token_id)
    existing = get_secret(apis, name)
    if existing is None:
        token.action = "create"
        return token
    info = bt.token_info_from_secret(existing)
    if not info["valid"]:
        raise kc.K8sError(
            "Secret kube-system/%s exists but is not a valid bootstrap token (%s). Delete it or choose "
            "another token." % (name, info["problem"]), token_id=token_id)
    if not hmac.compare_digest(info["token_secret"], token_secret):
        raise kc.K8sError(
            "A bootstrap token with id %s already exists in the cluster with a different secret. Choose "
            "another token, or delete the existing one (state=absent, token_id=%s) first."
            % (token_id, token_id), token_id=token_id)
    missing = [u for u in wanted["usages"] if u not in info["usages"]]
    if missing:
        raise kc.K8sError(
            "Bootstrap token %s exists but lacks usage(s) %s, which were requested (kubeadm join needs "
            "signing and authentication). Delete it (state=absent, token_id=%s) so it can be recreated, "
            "or use another token." % (token_id, ", ".join(missing), token_id), token_id=token_id)
    if set(info["groups"]) != set(wanted["groups"]):
        module.warn("Bootstrap token %s exists with groups %s, not the requested %s; it is used unchanged."
                    % (token_id, ",".join(info["groups"]) or "(none)", ",".join(wanted["groups"]) or "(none)"))
    if bt.is_expired(info["expiration"], now):
        token.action = "replace"
        token.before = bt.redacted_secret(existing)
    else:
        token.expiration = info["expiration"]
        token.reused = True
    return token


def _choose_token(module, apis, wanted, now):
    """The caller's token, else a reusable one this module made, else a new one (no id in check mode)."""
    if wanted["supplied"]:
        return _supplied_token(module, apis, wanted, now)
    token = _Token()
    info = None
    if module.params["reuse"]:
        info = bt.select_reusable_token(list_managed_secrets(apis), wanted["ttl"], wanted["min_remaining"],
                                        wanted["usages"], wanted["groups"], now)
    if info:
        token.set(module, info["token_id"], info["token_secret"])
        token.expiration = info["expiration"]
        token.reused = True
    else:
        token.action = "create"
        if not module.check_mode:
            token.set(module, *bt.parse_token(bt.generate_token()))
    return token


def _write(module, apis, wanted, token, expiration):
    """Create or renew the token's Secret (a new id when a generated one is taken); returns the diff."""
    token.expiration = expiration

    def body():
        return bt.build_secret(token.token_id, token.token_secret, expiration, wanted["usages"], wanted["groups"],
                               module.params["description"])

    if token.token_id:
        after = bt.redacted_secret(body())
    else:
        after = {"metadata": {"name": bt.SECRET_NAME_PREFIX + "<generated>", "namespace": bt.SECRET_NAMESPACE},
                 "type": bt.SECRET_TYPE}
    diff = dict(before=token.before, after=after)
    if module.check_mode:
        return diff
    if token.action == "replace":
        replace_secret(apis, body())
        return diff
    attempts = 1
    while create_secret(apis, body()) is False:
        if wanted["supplied"] or attempts >= CREATE_ATTEMPTS:
            raise kc.K8sError("Secret kube-system/%s was created by someone else at the same time; run the task "
                              "again." % bt.secret_name(token.token_id), token_id=token.token_id)
        attempts += 1
        token.set(module, *bt.parse_token(bt.generate_token()))
    return diff


def _message(check, token):
    done = "created" if token.action == "create" else "renewed"
    if check and not token.token_id:
        return ("Check mode: a new bootstrap token would be created; its id and secret are not known "
                "until it is really created.")
    if check and token.action:
        return "Check mode: bootstrap token %s would be %s." % (token.token_id, done)
    if token.action:
        return "Bootstrap token %s %s." % (token.token_id, done)
    return "Existing bootstrap token %s is used." % token.token_id


def _wait_for_signature(module, apis, token):
    """True once cluster-info carries a signature for the token that verifies with its secret."""
    deadline = waiter.Deadline(module.params["wait_timeout"])
    seen = []

    def signed(cm):
        data = (cm or {}).get("data") or {}
        signature = data.get(bt.jws_key(token.token_id))
        if not signature:
            return False
        seen.append(True)
        content = data.get(bt.CLUSTER_INFO_KUBECONFIG_KEY) or ""
        return bt.verify_detached_jws(signature, content, token.token_id, token.token_secret)

    _cm, ok = waiter.poll(deadline, POLL_INTERVAL, lambda: get_cluster_info(apis), signed)
    if ok:
        return True
    lifetime = ("it expires at %s" % token.expiration) if token.expiration else "it does not expire"
    if seen:
        why = (
            "kube-public/cluster-info has %s, but that signature does not verify with token %s's secret "
            "(a stale signature from an earlier token with the same id?). The bootstrapsigner controller of "
            "kube-controller-manager should replace it; check that kube-controller-manager is running and healthy"
            % (bt.jws_key(token.token_id), token.token_id)
        )
    else:
        why = (
            "no signature %s appeared in ConfigMap kube-public/cluster-info: kube-controller-manager's "
            "bootstrapsigner controller is not running or not enabled. Run kube-controller-manager with "
            "--controllers=*,bootstrapsigner,tokencleaner (kubeadm's default) and check that it is healthy"
            % bt.jws_key(token.token_id)
        )
    raise kc.K8sError(
        "Timed out after %ss waiting for the cluster-info signature of bootstrap token %s: %s. Without it "
        "'kubeadm join' cannot discover the cluster. The token exists (%s); set wait_for_signature=false "
        "to skip this check." % (deadline.timeout, token.token_id, why, lifetime),
        token_id=token.token_id,
        secret_name=bt.secret_name(token.token_id),
    )


def _present(module, apis):
    wanted = _resolve(module)
    endpoint, pins = _cluster_details(module, apis)
    now = bt.utcnow()
    token = _choose_token(module, apis, wanted, now)
    result = dict(changed=bool(token.action), reused=token.reused, signed=False,
                  api_server_endpoint=endpoint, ca_cert_hashes=pins)
    if token.action:
        result["diff"] = _write(module, apis, wanted, token, bt.expiration_for_ttl(wanted["ttl"], now))
    result["msg"] = _message(module.check_mode, token)

    if token.token_id and module.params["wait_for_signature"] and "signing" in wanted["usages"] \
            and not module.check_mode:
        try:
            result["signed"] = _wait_for_signature(module, apis, token)
        except kc.K8sError as exc:
            exc.extra["changed"] = result["changed"]
            raise

    join_args = bt.join_args(endpoint, token.value, pins) if token.value else None
    result.update(
        token_id=token.token_id,
        token=token.value,
        secret_name=bt.secret_name(token.token_id) if token.token_id else None,
        expiration=token.expiration,
        join_args=join_args,
        join_command=" ".join(["kubeadm", "join"] + join_args) if join_args else None,
    )
    return result


# --- state=discovery and state=absent ---------------------------------------------------------------

def _discovery(module, apis):
    if module.params["token"] or module.params["token_id"]:
        raise kc.K8sError("state=discovery reads only the cluster's endpoint and CA pins; leave token and "
                          "token_id unset.")
    endpoint, pins = _cluster_details(module, apis)
    return dict(changed=False, api_server_endpoint=endpoint, ca_cert_hashes=pins,
                msg="API server %s, %d CA pin(s)." % (endpoint, len(pins)))


def _absent(module, apis):
    params = module.params
    check = module.check_mode
    given_secret = None
    try:
        if params["token"]:
            token_id, given_secret = bt.parse_token(params["token"])
        elif params["token_id"]:
            token_id = bt.validate_token_id(params["token_id"])
        else:
            token_id = None
    except bt.BootstrapTokenError as exc:
        raise kc.K8sError(str(exc)) from None
    module.add_result_secrets(given_secret)

    victims = []
    if token_id:
        existing = get_secret(apis, bt.secret_name(token_id))
        if existing is not None:
            info = bt.token_info_from_secret(existing)
            if existing.get("type") != bt.SECRET_TYPE:
                raise kc.K8sError("Secret kube-system/%s is not of type %s; not deleting it."
                                  % (bt.secret_name(token_id), bt.SECRET_TYPE))
            if given_secret and not hmac.compare_digest(info["token_secret"] or "", given_secret):
                raise kc.K8sError(
                    "Bootstrap token %s in the cluster has a different secret than the given token; not deleting "
                    "it. Use token_id=%s to delete it regardless." % (token_id, token_id))
            victims.append((token_id, existing))
    else:
        for secret in list_managed_secrets(apis):
            info = bt.token_info_from_secret(secret)
            if info and info["managed"] and info["token_id"] and secret.get("type") == bt.SECRET_TYPE \
                    and info["name"] == bt.secret_name(info["token_id"]):
                victims.append((info["token_id"], secret))
    victims.sort(key=lambda item: item[0])

    deleted = []
    for victim_id, _secret in victims:
        if check or delete_secret(apis, bt.secret_name(victim_id)):
            deleted.append(victim_id)
    result = dict(changed=bool(deleted), deleted_token_ids=deleted)
    if deleted:
        result["diff"] = dict(
            before=dict((bt.secret_name(i), bt.redacted_secret(s)) for i, s in victims if i in deleted),
            after={},
        )
        result["msg"] = "%s bootstrap token(s) %s." % ("Would delete" if check else "Deleted", ", ".join(deleted))
    else:
        result["msg"] = "No bootstrap token to delete."
    return result


def run(module, apis):
    state = module.params["state"]
    if state == "present":
        return _present(module, apis)
    if state == "discovery":
        return _discovery(module, apis)
    return _absent(module, apis)


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
               required_libs=[("cryptography", bt.HAS_CRYPTOGRAPHY, bt.CRYPTOGRAPHY_IMPORT_ERROR)])


if __name__ == "__main__":
    main()
