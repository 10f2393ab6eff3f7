"""k8s_node_credentials end to end through main() against a fake API: per-node RBAC bound to the node's own
identity (kube-proxy and flanneld run with the kubelet's credential), the old ServiceAccount layout retired,
check mode, reset, the deprecated token options."""

import copy
import datetime

import pytest
from ansible.module_utils.common import warnings as ansible_warnings
from k8s_fakes import FakeCluster, api_error, make_runner

from ansible_collections.kubewin.nodes.plugins.module_utils import _node_credentials as nc
from ansible_collections.kubewin.nodes.plugins.modules import k8s_node_credentials as mod

UTC = datetime.timezone.utc
T0 = datetime.datetime(2026, 11, 26, 9, 0, 0, tzinfo=UTC)


class CredCluster(FakeCluster):
    """FakeCluster plus ServiceAccounts, their tokens, Secrets and the RBAC objects."""

    def __init__(self, max_seconds=None, node_binding=True):
        super().__init__()
        self.rbac = self
        self.accounts, self.roles, self.bindings, self.secrets = {}, {}, {}, {}
        self.token_requests = []
        self.max_seconds = max_seconds
        self.node_binding = node_binding
        self.clock = T0
        self.configmaps[("kube-system", "kube-root-ca.crt")] = {"data": {"ca.crt": "-----BEGIN CERTIFICATE-----\n"}}

    # ServiceAccounts
    def read_namespaced_service_account(self, name, namespace, **kw):
        self._hit("read_namespaced_service_account", name, namespace, **kw)
        obj = self.accounts.get((namespace, name))
        if obj is None:
            raise api_error(404, "Not Found")
        return copy.deepcopy(obj)

    def create_namespaced_service_account(self, namespace, body, **kw):
        self._hit("create_namespaced_service_account", namespace, body, **kw)
        obj = copy.deepcopy(body)
        obj["metadata"]["resourceVersion"] = self._next_rv()
        self.accounts[(namespace, body["metadata"]["name"])] = obj
        return copy.deepcopy(obj)

    def patch_namespaced_service_account(self, name, namespace, body, **kw):
        """A merge patch; a resourceVersion in it is a precondition (the API server's registry Store.Update
        answers 409 Conflict when it is not the stored one)."""
        self._hit("patch_namespaced_service_account", name, namespace, body, **kw)
        obj = self.accounts[(namespace, name)]
        body = copy.deepcopy(body)
        wanted = (body.get("metadata") or {}).pop("resourceVersion", None)
        if wanted is not None and wanted != obj["metadata"].get("resourceVersion"):
            raise api_error(409, "Conflict", "Operation cannot be fulfilled on serviceaccounts %r: the object has "
                            "been modified; please apply your changes to the latest version and try again" % name)
        obj["metadata"]["resourceVersion"] = self._next_rv()
        for key in ("labels", "annotations"):
            obj["metadata"].setdefault(key, {}).update((body.get("metadata") or {}).get(key) or {})
        for key, value in body.items():
            if key != "metadata":
                obj[key] = value
        return copy.deepcopy(obj)

    def delete_namespaced_service_account(self, name, namespace, **kw):
        self._hit("delete_namespaced_service_account", name, namespace, **kw)
        del self.accounts[(namespace, name)]
        return {}

    def create_namespaced_service_account_token(self, name, namespace, body, **kw):
        self._hit("create_namespaced_service_account_token", name, namespace, body, **kw)
        ref = body["spec"].get("boundObjectRef")
        if ref and not self.node_binding:
            raise api_error(400, "Bad Request", 'cannot bind token to a Node object as the '
                            '"ServiceAccountTokenNodeBinding" feature-gate is disabled')
        self.token_requests.append((namespace, name, copy.deepcopy(body)))
        seconds = body["spec"]["expirationSeconds"]
        if self.max_seconds:
            seconds = min(seconds, self.max_seconds)
        token = "jwt-%s-%d" % (name, len(self.token_requests))
        return {"status": {"token": token, "expirationTimestamp": (
            self.clock + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")}}

    # Secrets (the old shared ones)
    def read_namespaced_secret(self, name, namespace, **kw):
        self._hit("read_namespaced_secret", name, namespace, **kw)
        if (namespace, name) not in self.secrets:
            raise api_error(404, "Not Found")
        return copy.deepcopy(self.secrets[(namespace, name)])

    def delete_namespaced_secret(self, name, namespace, **kw):
        self._hit("delete_namespaced_secret", name, namespace, **kw)
        del self.secrets[(namespace, name)]
        return {}

    # RBAC
    def _store(self, kind):
        return self.roles if kind == "role" else self.bindings

    def _read(self, kind, name, **kw):
        self._hit("read_cluster_%s" % kind, name, **kw)
        if name not in self._store(kind):
            raise api_error(404, "Not Found")
        return copy.deepcopy(self._store(kind)[name])

    def read_cluster_role(self, name, **kw):
        return self._read("role", name, **kw)

    def read_cluster_role_binding(self, name, **kw):
        return self._read("role_binding", name, **kw)

    def create_cluster_role(self, body, **kw):
        self._hit("create_cluster_role", body, **kw)
        self.roles[body["metadata"]["name"]] = copy.deepcopy(body)

    def create_cluster_role_binding(self, body, **kw):
        self._hit("create_cluster_role_binding", body, **kw)
        self.bindings[body["metadata"]["name"]] = copy.deepcopy(body)

    def patch_cluster_role(self, name, body, **kw):
        self._hit("patch_cluster_role", name, body, **kw)
        self.roles[name]["rules"] = body["rules"]

    def patch_cluster_role_binding(self, name, body, **kw):
        self._hit("patch_cluster_role_binding", name, body, **kw)
        self.bindings[name]["subjects"] = body["subjects"]

    def delete_cluster_role(self, name, **kw):
        self._hit("delete_cluster_role", name, **kw)
        del self.roles[name]

    def delete_cluster_role_binding(self, name, **kw):
        self._hit("delete_cluster_role_binding", name, **kw)
        del self.bindings[name]

    def writes(self):
        return [c[0] for c in self.calls if not c[0].startswith("read")]


@pytest.fixture
def cluster():
    c = CredCluster()
    c.add_node("win-1")
    c.nodes["win-1"]["metadata"]["uid"] = "uid-win-1"
    c.add_node("win-2")
    c.nodes["win-2"]["metadata"]["uid"] = "uid-win-2"
    return c


@pytest.fixture
def run(monkeypatch, capsys, cluster):
    runner = make_runner(mod, monkeypatch, capsys)

    def _run(args, check=False, at=None):
        cluster.clock = at or T0
        cluster.calls = []
        base = {} if "nodes" in args and "node_name" not in args else {"node_name": "win-1"}
        return runner(dict(base, **args), cluster, check=check)

    return _run


NODE_USER = {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "system:node:win-1"}


def test_first_run_binds_node_proxier_and_flanneld_reads_to_the_node_itself(run, cluster):
    r = run({})
    assert r["_rc"] == 0 and r["changed"] is True and r["retired"] == {}
    assert "tokens" not in r and "accounts" not in r
    # no ServiceAccount, no token: both components run with the kubelet's credential
    assert cluster.accounts == {} and cluster.token_requests == []
    assert set(cluster.bindings) == {"kubewin-kube-proxy-win-1", "kubewin-flanneld-win-1"}
    proxy = cluster.bindings["kubewin-kube-proxy-win-1"]
    assert proxy["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                "name": "system:node-proxier"}
    assert proxy["subjects"] == [NODE_USER]
    assert cluster.bindings["kubewin-flanneld-win-1"]["subjects"] == [NODE_USER]
    assert cluster.roles["kubewin-flanneld-win-1"]["rules"] == [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]


def test_two_nodes_get_their_own_bindings(run, cluster):
    run({})
    run({"node_name": "win-2"})
    assert cluster.bindings["kubewin-kube-proxy-win-2"]["subjects"][0]["name"] == "system:node:win-2"
    assert cluster.bindings["kubewin-kube-proxy-win-1"]["subjects"][0]["name"] == "system:node:win-1"


def test_a_rerun_changes_nothing_and_writes_nothing(run, cluster):
    run({})
    again = run({}, at=T0 + datetime.timedelta(days=400))
    assert again["changed"] is False and again["changes"] == [] and cluster.writes() == []


def test_a_deleted_binding_is_made_again(run, cluster):
    run({})
    del cluster.bindings["kubewin-kube-proxy-win-1"]
    again = run({})
    assert again["changed"] is True and "created ClusterRoleBinding kubewin-kube-proxy-win-1" in again["changes"]
    assert cluster.bindings["kubewin-kube-proxy-win-1"]["subjects"] == [NODE_USER]


def test_check_mode_writes_nothing(run, cluster):
    r = run({}, check=True)
    assert r["changed"] is True and cluster.writes() == [] and cluster.bindings == {}


def test_a_node_that_has_not_joined(run, cluster):
    r = run({"node_name": "win-9"}, check=True)
    assert r["_rc"] == 0 and r["changed"] is True
    r = run({"node_name": "win-9"})
    assert r["_rc"] == 1 and "Node win-9 does not exist" in r["msg"] and "scale_up.yml" in r["msg"]


def test_a_binding_of_that_name_not_made_by_the_collection_is_not_taken_over(run, cluster):
    cluster.bindings["kubewin-kube-proxy-win-1"] = {
        "metadata": {"name": "kubewin-kube-proxy-win-1"}, "roleRef": {"name": "cluster-admin"}, "subjects": []}
    r = run({})
    assert r["_rc"] == 1 and "not made by kubewin.nodes" in r["msg"] and "kubewin_node_name" in r["msg"]
    assert cluster.bindings["kubewin-kube-proxy-win-1"]["roleRef"] == {"name": "cluster-admin"}


def test_reset_deletes_what_it_made_and_the_old_shared_secrets(run, cluster):
    run({})
    run({"node_name": "win-2"})
    old_kube_proxy_layout(cluster, "win-1")
    cluster.secrets[("kube-system", "kubewin-kube-proxy-token")] = {
        "metadata": {"name": "kubewin-kube-proxy-token", "labels": {"kubewin.nodes/managed": "true"}}}
    cluster.secrets[("kube-system", "someone-elses")] = {"metadata": {"name": "someone-elses"}}
    r = run({"state": "absent", "shared_secrets": ["kube-system/kubewin-kube-proxy-token",
                                                   "kube-system/someone-elses"]})
    assert r["_rc"] == 0 and r["changed"] is True
    assert cluster.accounts == {}
    assert set(cluster.bindings) == {"kubewin-kube-proxy-win-2", "kubewin-flanneld-win-2"}
    assert set(cluster.roles) == {"kubewin-flanneld-win-2"}
    assert set(cluster.secrets) == {("kube-system", "someone-elses")}
    assert run({"state": "absent"})["changed"] is False


def old_kube_proxy_layout(cluster, node="win-1"):
    """What releases before kube-proxy ran as its node made for it: a ServiceAccount (whose Node-bound token was in
    C:\\etc\\kube-proxy\\token, recorded in its annotations) bound to system:node-proxier."""
    name = "kubewin-kube-proxy-" + node
    meta = {"name": name, "labels": {"kubewin.nodes/managed": "true"}, "annotations": {"kubewin.nodes/node": node}}
    cluster.accounts[("kube-system", name)] = {"metadata": dict(meta, namespace="kube-system", annotations={
        "kubewin.nodes/node": node, "kubewin.nodes/token-expires": "2026-12-03T09:00:00Z"}),
        "automountServiceAccountToken": False}
    cluster.bindings[name] = {"metadata": dict(meta), "roleRef": {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:node-proxier"},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "kube-system"}]}


def test_a_rerun_over_the_old_kube_proxy_token_layout_retires_it(run, cluster):
    """The migration: the ServiceAccount is deleted (its tokens then fail with 401: a token carries its account's
    UID), the binding's subject is patched to the node (roleRef unchanged, so no delete and create), and the
    result names what was retired so the role removes the files."""
    old_kube_proxy_layout(cluster)
    again = run({})
    assert again["_rc"] == 0 and again["changed"] is True
    assert ("kube-system", "kubewin-kube-proxy-win-1") not in cluster.accounts
    assert again["retired"] == {"kube-proxy": "kube-system/kubewin-kube-proxy-win-1"}
    assert cluster.bindings["kubewin-kube-proxy-win-1"]["subjects"] == [NODE_USER]
    assert cluster.bindings["kubewin-kube-proxy-win-1"]["roleRef"]["name"] == "system:node-proxier"
    assert "updated ClusterRoleBinding kubewin-kube-proxy-win-1 (subjects)" in again["changes"]
    assert "patch_cluster_role_binding" in cluster.writes()
    assert "delete_cluster_role_binding" not in cluster.writes()
    assert "deleted serviceaccounts kubewin-kube-proxy-win-1 in namespace kube-system" in again["changes"]
    third = run({})
    assert third["changed"] is False and third["retired"] == {} and cluster.writes() == []


def test_check_mode_over_the_old_kube_proxy_layout_says_what_it_would_retire(run, cluster):
    old_kube_proxy_layout(cluster)
    r = run({}, check=True)
    assert r["changed"] is True and cluster.writes() == []
    assert r["retired"] == {"kube-proxy": "kube-system/kubewin-kube-proxy-win-1"}
    assert ("kube-system", "kubewin-kube-proxy-win-1") in cluster.accounts


def test_retire_false_keeps_the_old_accounts_and_their_binding_subjects_until_a_run_retires_them(run, cluster):
    """Review-s5 C1: the network role's first call keeps the older release's ServiceAccounts (and each binding names
    them beside the node), so kube-proxy and flanneld, still running with those tokens until their services are
    switched, keep their rights; a second call after the switch deletes the accounts and leaves only the node."""
    old_kube_proxy_layout(cluster)
    old_flanneld_layout(cluster)
    first = run({"retire": False})
    assert first["_rc"] == 0 and first["retired"] == {}
    assert first["to_retire"] == {"kube-proxy": "kube-system/kubewin-kube-proxy-win-1",
                                  "flanneld": "kube-flannel/kubewin-flanneld-win-1"}
    assert ("kube-system", "kubewin-kube-proxy-win-1") in cluster.accounts
    assert ("kube-flannel", "kubewin-flanneld-win-1") in cluster.accounts
    assert cluster.bindings["kubewin-kube-proxy-win-1"]["subjects"] == [NODE_USER, {
        "kind": "ServiceAccount", "name": "kubewin-kube-proxy-win-1", "namespace": "kube-system"}]
    assert cluster.bindings["kubewin-flanneld-win-1"]["subjects"] == [NODE_USER, {
        "kind": "ServiceAccount", "name": "kubewin-flanneld-win-1", "namespace": "kube-flannel"}]
    assert not [c for c in first["changes"] if c.startswith("deleted")]
    # Review-s6 M1: flanneld's ClusterRole keeps the older release's patch of its Node's status until the retiring
    # call, so an old flanneld restarting on its token before its service is switched can still complete its lease.
    old_flanneld_rules = [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"], "resourceNames": ["win-1"]}]
    assert cluster.roles["kubewin-flanneld-win-1"]["rules"] == old_flanneld_rules
    again = run({"retire": False})
    assert again["changed"] is False and cluster.writes() == [] and again["to_retire"] == first["to_retire"]
    second = run({})
    assert second["retired"] == first["to_retire"] and second["to_retire"] == {}
    assert ("kube-system", "kubewin-kube-proxy-win-1") not in cluster.accounts
    assert ("kube-flannel", "kubewin-flanneld-win-1") not in cluster.accounts
    assert cluster.bindings["kubewin-kube-proxy-win-1"]["subjects"] == [NODE_USER]
    assert cluster.bindings["kubewin-flanneld-win-1"]["subjects"] == [NODE_USER]
    assert cluster.roles["kubewin-flanneld-win-1"]["rules"] == nc.flanneld_rules("win-1") != old_flanneld_rules
    third = run({"retire": False})
    assert third["changed"] is False and third["to_retire"] == {} and cluster.writes() == []


def old_flanneld_layout(cluster, node="win-1"):
    """What releases before flanneld ran with the kubelet's credential made for it: a ServiceAccount (whose token
    was in C:\\etc\\kube-flannel\\token), a ClusterRole that may patch its Node's status, and a binding to the
    ServiceAccount."""
    name = "kubewin-flanneld-" + node
    meta = {"name": name, "labels": {"kubewin.nodes/managed": "true"}, "annotations": {"kubewin.nodes/node": node}}
    cluster.accounts[("kube-flannel", name)] = {"metadata": dict(meta, namespace="kube-flannel"),
                                                "automountServiceAccountToken": False}
    cluster.roles[name] = {"metadata": dict(meta), "rules": [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"], "resourceNames": [node]}]}
    cluster.bindings[name] = {"metadata": dict(meta), "roleRef": {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "kube-flannel"}]}


def test_a_rerun_over_the_old_flanneld_token_layout_retires_it(run, cluster):
    run({})
    old_flanneld_layout(cluster)
    again = run({})
    assert again["_rc"] == 0 and again["changed"] is True
    # the ServiceAccount is gone (its tokens stop working), the role may no longer write, the binding names the node
    assert ("kube-flannel", "kubewin-flanneld-win-1") not in cluster.accounts
    assert again["retired"] == {"flanneld": "kube-flannel/kubewin-flanneld-win-1"}
    assert cluster.roles["kubewin-flanneld-win-1"]["rules"] == [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]
    assert cluster.bindings["kubewin-flanneld-win-1"]["subjects"] == [NODE_USER]
    assert "deleted serviceaccounts kubewin-flanneld-win-1 in namespace kube-flannel" in again["changes"]
    assert run({})["changed"] is False


def test_check_mode_over_the_old_flanneld_layout_says_what_it_would_retire(run, cluster):
    run({})
    old_flanneld_layout(cluster)
    r = run({}, check=True)
    assert r["changed"] is True and cluster.writes() == []
    assert ("kube-flannel", "kubewin-flanneld-win-1") in cluster.accounts
    assert any(c.startswith("deleted serviceaccounts kubewin-flanneld-win-1") for c in r["changes"])


def test_reset_removes_the_old_accounts_too(run, cluster):
    run({})
    old_flanneld_layout(cluster)
    old_kube_proxy_layout(cluster)
    r = run({"state": "absent"})
    assert r["_rc"] == 0 and cluster.accounts == {} and cluster.roles == {} and cluster.bindings == {}


# --- the token options: deprecated, ignored, a warning when set ----------------------------------------------------

@pytest.mark.parametrize("args", [
    {"expiration_seconds": 31 * 24 * 3600}, {"renew_fraction": 0.7}, {"allow_long_expiration": True},
    {"require_binding": False}, {"token_files_sha512": {"kube-proxy": "ab" * 64}},
    {"nodes": [{"name": "win-1", "expiration_seconds": 3600}]}])
def test_a_token_option_set_is_ignored_with_a_deprecation_warning(run, cluster, args):
    r = run(args)
    option = [k for k in args if k != "nodes"] or ["expiration_seconds"]
    assert r["_rc"] == 0 and cluster.token_requests == [] and cluster.accounts == {}
    text = str(r.get("deprecations"))
    assert "%s is ignored" % option[0] in text and "1.0.0" in text, r


def test_the_token_options_at_their_defaults_warn_nothing(run, cluster):
    # AnsibleModule keeps deprecations in a module-level collection the runner does not clear
    ansible_warnings._global_deprecations.clear()
    r = run({"expiration_seconds": 604800, "renew_fraction": 0.5, "token_files_sha512": {"kube-proxy": None}})
    assert r["_rc"] == 0 and not r.get("deprecations")


# --- several nodes in one task (issue 22: one control-plane call for every node of the run) -----------------------

def test_one_task_serves_every_node_and_returns_each_its_pod_subnet(run, cluster):
    cluster.nodes["win-1"]["spec"]["podCIDR"] = "10.244.1.0/24"
    old_kube_proxy_layout(cluster, "win-2")
    r = run({"nodes": [{"name": "win-1"}, {"name": "win-2"}]})
    assert r["_rc"] == 0 and r["changed"] is True and set(r["nodes"]) == {"win-1", "win-2"}, r["msg"]
    one, two = r["nodes"]["win-1"], r["nodes"]["win-2"]
    assert one["pod_cidr"] == "10.244.1.0/24" and two["pod_cidr"] is None
    assert one["retired"] == {} and two["retired"] == {"kube-proxy": "kube-system/kubewin-kube-proxy-win-2"}
    again = run({"nodes": [{"name": "win-1"}, {"name": "win-2"}]})
    assert again["changed"] is False and cluster.writes() == []


def test_a_node_that_fails_does_not_stop_the_others(run, cluster):
    r = run({"nodes": [{"name": "win-9"}, {"name": "win-2"}]})
    assert r["_rc"] == 1 and "Node win-9 does not exist" in r["msg"]
    assert r["nodes"]["win-9"]["failed"] is True
    assert r["nodes"]["win-2"]["changed"] is True and "kubewin-kube-proxy-win-2" in cluster.bindings


def test_check_mode_with_nodes_changes_nothing_and_names_one_not_joined(run, cluster):
    r = run({"nodes": [{"name": "win-1"}, {"name": "win-3"}]}, check=True)
    assert r["_rc"] == 0 and cluster.writes() == []
    assert r["nodes"]["win-3"]["pod_cidr"] is None


def test_reset_of_several_nodes_in_one_task(run, cluster):
    run({"nodes": [{"name": "win-1"}, {"name": "win-2"}]})
    cluster.secrets[("kube-system", "kubewin-kube-proxy-token")] = {"metadata": {"labels": {nc.MANAGED_LABEL: "true"}}}
    r = run({"state": "absent", "nodes": [{"name": "win-1"}, {"name": "win-2"}],
             "shared_secrets": ["kube-system/kubewin-kube-proxy-token"]})
    assert r["_rc"] == 0 and r["changed"] is True
    assert cluster.accounts == {} and cluster.bindings == {} and cluster.roles == {} and cluster.secrets == {}
    assert "deleted secrets kubewin-kube-proxy-token in namespace kube-system" in r["changes"]


def test_name_and_nodes_together_are_refused(run, cluster):
    r = run({"node_name": "win-1", "nodes": [{"name": "win-2"}]})
    assert r["_rc"] == 1 and "mutually exclusive" in r["msg"]


def _not_managed(cluster):
    del cluster.bindings["kubewin-flanneld-win-1"]["metadata"]["labels"]


def _extra_rule(cluster):
    cluster.roles["kubewin-flanneld-win-1"]["rules"].append({"apiGroups": [""], "resources": ["pods"],
                                                             "verbs": ["list"]})


def _other_subject(cluster):
    cluster.bindings["kubewin-kube-proxy-win-1"]["subjects"] = [dict(NODE_USER, name="system:node:win-2")]


def _other_role_ref(cluster):
    cluster.bindings["kubewin-flanneld-win-1"]["roleRef"]["name"] = "system:node-proxier"


# (what happens to win-1's objects after a first run, whether the objects are then still in place)
AFTER_FIRST_RUN = [
    (lambda c: None, True),
    (lambda c: c.bindings.pop("kubewin-kube-proxy-win-1"), False),
    (lambda c: c.roles.pop("kubewin-flanneld-win-1"), False),
    (_not_managed, False),
    (_extra_rule, False),
    (_other_subject, False),
    (_other_role_ref, False),
    (old_kube_proxy_layout, False),
    (old_flanneld_layout, False),
]


@pytest.mark.parametrize("change, expected", AFTER_FIRST_RUN)
def test_in_place_agrees_with_what_a_run_would_do(run, cluster, change, expected):
    """k8s_join_info's in_place decides whether the network role may skip this module on a re-run: it must say
    True exactly when a run (retire=false, as the network role's first call) would change nothing."""
    run({})
    change(cluster)
    managed = {key for key, sa in cluster.accounts.items() if sa["metadata"]["labels"].get(nc.MANAGED_LABEL)}
    verdict = nc.in_place("win-1", dict(nc.DEFAULT_NAMESPACES), cluster.roles, cluster.bindings, managed)
    again = run({"retire": False}, check=True)
    assert verdict is expected
    assert (again["_rc"] == 0 and again["changed"] is False) is expected, again


def test_a_node_without_objects_or_with_an_invalid_name_is_not_in_place():
    assert nc.in_place("win-1", dict(nc.DEFAULT_NAMESPACES), {}, {}, set()) is False
    assert nc.in_place("Win_1", dict(nc.DEFAULT_NAMESPACES), {}, {}, set()) is False
