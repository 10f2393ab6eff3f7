# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What ``kubewin.nodes.k8s_join_token`` does: create, reuse or delete bootstrap tokens and report the join details.

The module's ``run(module, apis)``: its Secrets and the cluster-info ConfigMap through the shared client, the
states present, discovery and absent, and the wait for the bootstrapsigner's signature. The module file keeps
its documentation, argument spec and ``main()``. PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import hmac

from ansible_collections.kubewin.nodes.plugins.module_utils import _bootstrap_token as bt
from ansible_collections.kubewin.nodes.plugins.module_utils import _cluster_info as ci
from ansible_collections.kubewin.nodes.plugins.module_utils import _go_formats as gf
from ansible_collections.kubewin.nodes.plugins.module_utils import _kubeadm_join as kj
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import waiter

POLL_INTERVAL = 2.0
CREATE_ATTEMPTS = 3


# --- the Secrets and the ConfigMap, through the shared client -------------------------------------

def get_cluster_info(apis):
    return kc.call(apis, "get", "configmaps", ci.CLUSTER_INFO_NAMESPACE, ci.CLUSTER_INFO_NAME,
                   apis.core.read_namespaced_config_map, ci.CLUSTER_INFO_NAME, ci.CLUSTER_INFO_NAMESPACE)


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
    return ci.read_details(apis, module.params["api_server_endpoint"])


# --- state=present: resolve the parameters, choose the token, write it, report -----------------------

def _resolve(module):
    """The validated parameters of state=present."""
    params = module.params
    try:
        wanted = dict(
            ttl=gf.parse_duration(params["ttl"]),
            min_remaining=gf.parse_duration(params["min_remaining_ttl"]),
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
                    % (gf.format_duration(wanted["min_remaining"]), gf.format_duration(wanted["ttl"])))
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
        _warn_longer_than_asked(module, token_id, info["expiration"], wanted["ttl"], now)
    return token


def _warn_longer_than_asked(module, token_id, expiration, ttl, now):
    """Say so when a supplied token that already exists outlives ``ttl`` (security-2 N8): it is used
    unchanged and, not made by this run, never deleted by it, so whoever knows it (the inventory, the vault)
    can join nodes for that long."""
    left = bt.remaining_ttl(expiration, now)
    if left is not None and (not ttl or left <= ttl):
        return
    module.warn("bootstrap token %s (token, from kubeadm_token in the roles) already exists and %s, longer than "
                "the ttl asked for (%s); it is used unchanged and not deleted afterwards, so it keeps letting "
                "whoever knows it join nodes: unset kubeadm_token to get a token made for this join and deleted "
                "after it, or give that token an expiration" % (
                    token_id, "never expires" if left is None else "expires at %s" % expiration,
                    gf.format_duration(ttl) if ttl else "none"))


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
        signature = data.get(ci.jws_key(token.token_id))
        if not signature:
            return False
        seen.append(True)
        content = data.get(ci.CLUSTER_INFO_KUBECONFIG_KEY) or ""
        return ci.verify_detached_jws(signature, content, token.token_id, token.token_secret)

    _cm, ok = waiter.poll(deadline, POLL_INTERVAL, lambda: get_cluster_info(apis), signed)
    if ok:
        return True
    lifetime = ("it expires at %s" % token.expiration) if token.expiration else "it does not expire"
    if seen:
        why = (
            "kube-public/cluster-info has %s, but that signature does not verify with token %s's secret "
            "(a stale signature from an earlier token with the same id?). The bootstrapsigner controller of "
            "kube-controller-manager should replace it; check that kube-controller-manager is running and healthy"
            % (ci.jws_key(token.token_id), token.token_id)
        )
    else:
        why = (
            "no signature %s appeared in ConfigMap kube-public/cluster-info: kube-controller-manager's "
            "bootstrapsigner controller is not running or not enabled. Run kube-controller-manager with "
            "--controllers=*,bootstrapsigner,tokencleaner (kubeadm's default) and check that it is healthy"
            % ci.jws_key(token.token_id)
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

    join_args = kj.join_args(endpoint, token.value, pins) if token.value else None
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
