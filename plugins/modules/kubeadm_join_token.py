#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kubeadm_join_token
short_description: Create, reuse or delete kubeadm bootstrap tokens and build the join command
version_added: 0.1.0
description:
  - Ensures a bootstrap token exists that a new node can use with C(kubeadm join), and returns it
    together with the API server endpoint, the cluster CA public key pins and the complete
    C(kubeadm join) command line.
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
  - The returned RV(token) and RV(join_command) are secrets. Ansible cannot hide individual return
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
      - A token that would be created has no id yet, so RV(token_id), RV(token) and RV(join_command)
        are V(null) in check mode in that case.
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
  kubewin.nodes.kubeadm_join_token:
    kubeconfig: /etc/kubernetes/admin.conf
  delegate_to: "{{ groups['kube_control_plane'][0] }}"
  run_once: true
  register: join
  no_log: true

- name: Show the endpoint and CA pins (not secret)
  ansible.builtin.debug:
    msg: "{{ join.api_server_endpoint }} {{ join.ca_cert_hashes }}"

- name: Use kubespray's fixed token, creating it if the cluster does not have it
  kubewin.nodes.kubeadm_join_token:
    token: "{{ kubeadm_token }}"
    ttl: "0"
  register: join
  no_log: true

- name: A short-lived token, from the controller with the default kubeconfig
  kubewin.nodes.kubeadm_join_token:
    ttl: 2h
    min_remaining_ttl: 30m
    description: Windows node join (wave 2)
  register: join
  no_log: true

- name: Delete one token
  kubewin.nodes.kubeadm_join_token:
    state: absent
    token_id: abcdef

- name: A token for this run only, deleted by id at its end
  kubewin.nodes.kubeadm_join_token:
    ttl: 30m
    reuse: false
  register: join
  no_log: true

- name: The API server endpoint and CA pins, without any token
  kubewin.nodes.kubeadm_join_token:
    state: discovery
  register: cluster_discovery

- name: Delete every token this collection created
  kubewin.nodes.kubeadm_join_token:
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
    - C(host:port) of the API server as published in C(kube-public/cluster-info), else of the
      configured connection.
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
import json
import time

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible.module_utils.common.parameters import remove_values

from ansible_collections.kubewin.nodes.plugins.module_utils import bootstrap_token as bt
from ansible_collections.kubewin.nodes.plugins.module_utils import k8s_client as kc
from ansible_collections.kubewin.nodes.plugins.module_utils.k8s_client import (
    K8S_IMPORT_ERROR,
    ApiException,
    Urllib3HTTPError,
)

# Seconds for one API request (connect, read): an unreachable server must not hang the play.
REQUEST_TIMEOUT = (10, 30)
POLL_INTERVAL = 2.0


class ModuleFailure(Exception):
    """Raised with a user-facing message; turned into fail_json outside any except block."""

    def __init__(self, msg, **extra):
        super(ModuleFailure, self).__init__(msg)
        self.msg = msg
        self.extra = extra


def build_core_v1_api(params):
    """Return ``(CoreV1Api, configured_host)`` for the connection options.

    Tests replace this function with one returning a fake API.
    """
    try:
        api_client, host = kc.build_api_client(params)
    except kc.K8sError as exc:
        raise ModuleFailure(exc.msg) from None
    return kc.k8s_client.CoreV1Api(api_client), host


def _api_detail(exc):
    """The ``message`` of a Kubernetes Status body, else the HTTP reason."""
    body = getattr(exc, "body", None)
    if body:
        try:
            doc = json.loads(body)
            if isinstance(doc, dict) and doc.get("message"):
                return str(doc["message"])
        except ValueError:
            pass
    return getattr(exc, "reason", None) or None


class Cluster(object):
    """Thin wrapper over CoreV1Api: dict results, clean errors, 404 as None/False."""

    def __init__(self, core, host):
        self.core = core
        self.host = host

    def _to_dict(self, obj):
        if obj is None or isinstance(obj, dict):
            return obj
        api_client = getattr(self.core, "api_client", None)
        if api_client is not None:
            return api_client.sanitize_for_serialization(obj)
        return obj.to_dict()

    def _call(self, verb, resource, namespace, name, func, *args, **kwargs):
        kwargs["_request_timeout"] = REQUEST_TIMEOUT
        error = None
        try:
            return self._to_dict(func(*args, **kwargs))
        except ApiException as exc:
            if exc.status == 404:
                return None
            error = bt.api_error_message(exc.status, verb, resource, namespace, name, _api_detail(exc))
            status = exc.status
        except (Urllib3HTTPError, OSError) as exc:
            error = bt.unreachable_message(self.host, getattr(exc, "reason", None) or exc)
            status = None
        raise ModuleFailure(error, api_status=status)

    def get_cluster_info(self):
        return self._call(
            "get", "configmaps", bt.CLUSTER_INFO_NAMESPACE, bt.CLUSTER_INFO_NAME,
            self.core.read_namespaced_config_map, bt.CLUSTER_INFO_NAME, bt.CLUSTER_INFO_NAMESPACE,
        )

    def get_secret(self, name):
        return self._call(
            "get", "secrets", bt.SECRET_NAMESPACE, name,
            self.core.read_namespaced_secret, name, bt.SECRET_NAMESPACE,
        )

    def list_managed_secrets(self):
        result = self._call(
            "list", "secrets", bt.SECRET_NAMESPACE, None,
            self.core.list_namespaced_secret, bt.SECRET_NAMESPACE, label_selector=bt.MANAGED_LABEL_SELECTOR,
        )
        return (result or {}).get("items") or []

    def create_secret(self, body):
        name = body["metadata"]["name"]
        try:
            return self._call(
                "create", "secrets", bt.SECRET_NAMESPACE, name,
                self.core.create_namespaced_secret, bt.SECRET_NAMESPACE, body,
            )
        except ModuleFailure as exc:
            if exc.extra.get("api_status") == 409:
                return False
            raise

    def replace_secret(self, body):
        name = body["metadata"]["name"]
        return self._call(
            "update", "secrets", bt.SECRET_NAMESPACE, name,
            self.core.replace_namespaced_secret, name, bt.SECRET_NAMESPACE, body,
        )

    def delete_secret(self, name):
        return self._call(
            "delete", "secrets", bt.SECRET_NAMESPACE, name,
            self.core.delete_namespaced_secret, name, bt.SECRET_NAMESPACE,
        ) is not None


def _cluster_details(cluster):
    """``(endpoint, ca_pins)`` from kube-public/cluster-info."""
    cm = cluster.get_cluster_info()
    if cm is None:
        raise ModuleFailure(
            "ConfigMap kube-public/cluster-info does not exist, so nodes cannot discover this cluster with "
            "a token. It is created by 'kubeadm init' (phase bootstrap-token); run "
            "'kubeadm init phase bootstrap-token' on a control-plane node to create it."
        )
    kubeconfig_text = (cm.get("data") or {}).get(bt.CLUSTER_INFO_KUBECONFIG_KEY)
    if not kubeconfig_text:
        raise ModuleFailure("ConfigMap kube-public/cluster-info has no 'kubeconfig' key; recreate it with "
                            "'kubeadm init phase bootstrap-token' on a control-plane node.")
    try:
        server, ca_pem = bt.cluster_info_details(kubeconfig_text)
        if not ca_pem:
            raise bt.BootstrapTokenError(
                "its kubeconfig has no certificate-authority-data, so no CA pin can be computed"
            )
        pins = bt.ca_cert_hashes(ca_pem)
        endpoint = bt.endpoint_from_server(server) or bt.endpoint_from_server(cluster.host)
    except bt.BootstrapTokenError as exc:
        raise ModuleFailure("ConfigMap kube-public/cluster-info is not usable: %s" % exc) from None
    if not endpoint:
        raise ModuleFailure("The API server endpoint is unknown: cluster-info has no server and no host is configured.")
    return endpoint, pins


def _wait_for_signature(module, cluster, token_id, token_secret, expiration):
    timeout = max(0, module.params["wait_timeout"])
    deadline = time.monotonic() + timeout
    seen = False
    while True:
        cm = cluster.get_cluster_info() or {}
        data = cm.get("data") or {}
        signature = data.get(bt.jws_key(token_id))
        if signature:
            seen = True
            content = data.get(bt.CLUSTER_INFO_KUBECONFIG_KEY) or ""
            if bt.verify_detached_jws(signature, content, token_id, token_secret):
                return True
        left = deadline - time.monotonic()
        if left <= 0:
            break
        time.sleep(min(POLL_INTERVAL, left))
    lifetime = ("it expires at %s" % expiration) if expiration else "it does not expire"
    if seen:
        why = (
            "kube-public/cluster-info has %s, but that signature does not verify with token %s's secret "
            "(a stale signature from an earlier token with the same id?). The bootstrapsigner controller of "
            "kube-controller-manager should replace it; check that kube-controller-manager is running and healthy"
            % (bt.jws_key(token_id), token_id)
        )
    else:
        why = (
            "no signature %s appeared in ConfigMap kube-public/cluster-info: kube-controller-manager's "
            "bootstrapsigner controller is not running or not enabled. Run kube-controller-manager with "
            "--controllers=*,bootstrapsigner,tokencleaner (kubeadm's default) and check that it is healthy"
            % bt.jws_key(token_id)
        )
    raise ModuleFailure(
        "Timed out after %ss waiting for the cluster-info signature of bootstrap token %s: %s. Without it "
        "'kubeadm join' cannot discover the cluster. The token exists (%s); set wait_for_signature=false "
        "to skip this check." % (timeout, token_id, why, lifetime),
        token_id=token_id,
        secret_name=bt.secret_name(token_id),
    )


def _present(module, cluster, secret_values):
    params = module.params
    check = module.check_mode
    try:
        ttl = bt.parse_duration(params["ttl"])
        min_remaining = bt.parse_duration(params["min_remaining_ttl"])
        usages = bt.validate_usages(params["usages"])
        groups = bt.validate_groups(params["groups"])
        supplied = None
        if params["token"]:
            supplied = bt.parse_token(params["token"])
    except bt.BootstrapTokenError as exc:
        raise ModuleFailure(str(exc)) from None
    if params["token_id"]:
        raise ModuleFailure("token_id is only used with state=absent; to use a token of your choice set token.")
    if ttl and min_remaining >= ttl and params["reuse"]:
        module.warn("min_remaining_ttl (%s) is not shorter than ttl (%s), so a new token is created on every run."
                    % (bt.format_duration(min_remaining), bt.format_duration(ttl)))

    endpoint, pins = _cluster_details(cluster)
    now = bt.utcnow()
    new_expiration = bt.expiration_for_ttl(ttl, now)
    result = dict(changed=False, reused=False, signed=False, api_server_endpoint=endpoint, ca_cert_hashes=pins)
    token_id = token_secret = expiration = None
    action = None  # None, "create" or "replace"
    before = {}

    if supplied:
        token_id, token_secret = supplied
        secret_values.update([token_secret, "%s.%s" % (token_id, token_secret)])
        name = bt.secret_name(token_id)
        existing = cluster.get_secret(name)
        if existing is None:
            action = "create"
        else:
            info = bt.token_info_from_secret(existing)
            if not info["valid"]:
                raise ModuleFailure(
                    "Secret kube-system/%s exists but is not a valid bootstrap token (%s). Delete it or choose "
                    "another token." % (name, info["problem"]), token_id=token_id)
            if not hmac.compare_digest(info["token_secret"], token_secret):
                raise ModuleFailure(
                    "A bootstrap token with id %s already exists in the cluster with a different secret. Choose "
                    "another token, or delete the existing one (state=absent, token_id=%s) first."
                    % (token_id, token_id), token_id=token_id)
            missing = [u for u in usages if u not in info["usages"]]
            if missing:
                raise ModuleFailure(
                    "Bootstrap token %s exists but lacks usage(s) %s, which were requested (kubeadm join needs "
                    "signing and authentication). Delete it (state=absent, token_id=%s) so it can be recreated, "
                    "or use another token." % (token_id, ", ".join(missing), token_id), token_id=token_id)
            if set(info["groups"]) != set(groups):
                module.warn("Bootstrap token %s exists with groups %s, not the requested %s; it is used unchanged."
                            % (token_id, ",".join(info["groups"]) or "(none)", ",".join(groups) or "(none)"))
            if bt.is_expired(info["expiration"], now):
                action = "replace"
                before = bt.redacted_secret(existing)
            else:
                expiration = info["expiration"]
                result["reused"] = True
    else:
        info = None
        if params["reuse"]:
            info = bt.select_reusable_token(cluster.list_managed_secrets(), ttl, min_remaining, usages, groups, now)
        if info:
            token_id, token_secret, expiration = info["token_id"], info["token_secret"], info["expiration"]
            result["reused"] = True
        else:
            action = "create"
            if not check:
                token_id, token_secret = bt.parse_token(bt.generate_token())

    if token_secret:
        secret_values.update([token_secret, "%s.%s" % (token_id, token_secret)])

    if action:
        expiration = new_expiration
        result["changed"] = True
        if token_id:
            body = bt.build_secret(token_id, token_secret, expiration, usages, groups, params["description"])
            after = bt.redacted_secret(body)
        else:
            after = {"metadata": {"name": bt.SECRET_NAME_PREFIX + "<generated>", "namespace": bt.SECRET_NAMESPACE},
                     "type": bt.SECRET_TYPE}
        result["diff"] = dict(before=before, after=after)
        if not check:
            if action == "replace":
                cluster.replace_secret(body)
            else:
                attempts = 0
                while cluster.create_secret(body) is False:
                    attempts += 1
                    if supplied or attempts >= 3:
                        raise ModuleFailure(
                            "Secret kube-system/%s was created by someone else at the same time; run the task again."
                            % bt.secret_name(token_id), token_id=token_id)
                    token_id, token_secret = bt.parse_token(bt.generate_token())
                    secret_values.update([token_secret, "%s.%s" % (token_id, token_secret)])
                    body = bt.build_secret(token_id, token_secret, expiration, usages, groups, params["description"])

    if check and not token_id:
        result["msg"] = ("Check mode: a new bootstrap token would be created; its id and secret are not known "
                         "until it is really created.")
    elif check and action:
        result["msg"] = "Check mode: bootstrap token %s would be %s." % (
            token_id, "created" if action == "create" else "renewed")
    elif action:
        result["msg"] = "Bootstrap token %s %s." % (token_id, "created" if action == "create" else "renewed")
    else:
        result["msg"] = "Existing bootstrap token %s is used." % token_id

    if token_id and params["wait_for_signature"] and "signing" in usages and not check:
        try:
            result["signed"] = _wait_for_signature(module, cluster, token_id, token_secret, expiration)
        except ModuleFailure as exc:
            exc.extra["changed"] = result["changed"]
            raise

    token = "%s.%s" % (token_id, token_secret) if token_id else None
    result.update(
        token_id=token_id,
        token=token,
        secret_name=bt.secret_name(token_id) if token_id else None,
        expiration=expiration,
        join_command=bt.join_command(endpoint, token, pins) if token else None,
    )
    return result


def _discovery(module, cluster):
    if module.params["token"] or module.params["token_id"]:
        raise ModuleFailure("state=discovery reads only the cluster's endpoint and CA pins; leave token and "
                            "token_id unset.")
    endpoint, pins = _cluster_details(cluster)
    return dict(changed=False, api_server_endpoint=endpoint, ca_cert_hashes=pins,
                msg="API server %s, %d CA pin(s)." % (endpoint, len(pins)))


def _absent(module, cluster, secret_values):
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
        raise ModuleFailure(str(exc)) from None
    if given_secret:
        secret_values.add(given_secret)

    victims = []
    if token_id:
        existing = cluster.get_secret(bt.secret_name(token_id))
        if existing is not None:
            info = bt.token_info_from_secret(existing)
            if existing.get("type") != bt.SECRET_TYPE:
                raise ModuleFailure("Secret kube-system/%s is not of type %s; not deleting it."
                                    % (bt.secret_name(token_id), bt.SECRET_TYPE))
            if given_secret and not hmac.compare_digest(info["token_secret"] or "", given_secret):
                raise ModuleFailure(
                    "Bootstrap token %s in the cluster has a different secret than the given token; not deleting "
                    "it. Use token_id=%s to delete it regardless." % (token_id, token_id))
            victims.append((token_id, existing))
    else:
        for secret in cluster.list_managed_secrets():
            info = bt.token_info_from_secret(secret)
            if info and info["managed"] and info["token_id"] and secret.get("type") == bt.SECRET_TYPE \
                    and info["name"] == bt.secret_name(info["token_id"]):
                victims.append((info["token_id"], secret))
    victims.sort(key=lambda item: item[0])

    deleted = []
    for victim_id, _secret in victims:
        if check or cluster.delete_secret(bt.secret_name(victim_id)):
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
        wait_for_signature=dict(type="bool", default=True),
        wait_timeout=dict(type="int", default=60),
    )
    spec.update(kc.auth_argument_spec())
    return spec


def main():
    module = AnsibleModule(
        argument_spec=argument_spec(),
        mutually_exclusive=[("token", "token_id")],
        supports_check_mode=True,
    )
    if K8S_IMPORT_ERROR:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=K8S_IMPORT_ERROR)
    if not bt.HAS_CRYPTOGRAPHY:
        module.fail_json(msg=missing_required_lib("cryptography"), exception=str(bt.CRYPTOGRAPHY_IMPORT_ERROR))

    # Token values that must never be shown except in the token/join_command results.
    secret_values = set()
    failure = None
    try:
        core, host = build_core_v1_api(module.params)
        cluster = Cluster(core, host)
        if module.params["state"] == "present":
            result = _present(module, cluster, secret_values)
        elif module.params["state"] == "discovery":
            result = _discovery(module, cluster)
        else:
            result = _absent(module, cluster, secret_values)
    except ModuleFailure as exc:
        failure = exc
    if failure is not None:
        # Fail outside the except block: no traceback; mask any token value anywhere in the result.
        module.no_log_values.update(secret_values)
        extra = dict((k, v) for k, v in failure.extra.items() if k != "api_status")
        extra.setdefault("changed", False)
        module.fail_json(msg=failure.msg, **extra)

    if not module._diff:
        result.pop("diff", None)
    # The invocation echo keeps every no_log value masked, including a caller-supplied token.
    invocation = {"module_args": remove_values(module.params, module.no_log_values | secret_values)}
    # AnsibleModule masks every no_log value anywhere in the result, which would turn the returned
    # token and join command into '********'. Unmask the token values for the two keys that carry them.
    # secret_values holds the full token (also a caller-supplied one) and its secret half.
    for value in secret_values:
        module.no_log_values.discard(value)
    module.exit_json(invocation=invocation, **result)


if __name__ == "__main__":
    main()
