"""node_credentials end to end through main() against a fake API: per-node objects, Node-bound tokens,
renewal only when due, check mode, reset."""

import copy
import datetime

import pytest
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
        return {"status": {"token": token, "expirationTimestamp": nc.format_time(
            self.clock + datetime.timedelta(seconds=seconds))}}

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
        monkeypatch.setattr(mod, "now", lambda: cluster.clock)
        cluster.calls = []
        base = {} if "nodes" in args and "node_name" not in args else {"node_name": "win-1"}
        return runner(dict(base, **args), cluster, check=check)

    return _run


def files_holding(result):
    return {c: nc.token_sha512(t) for c, t in result["tokens"].items()}


def test_first_run_makes_per_node_accounts_rbac_and_node_bound_tokens(run, cluster):
    r = run({})
    assert r["_rc"] == 0 and r["changed"] is True and r["bound"] is True
    assert set(r["tokens"]) == {"kube-proxy"}
    assert r["accounts"] == {"kube-proxy": "kube-system/kubewin-kube-proxy-win-1"}
    assert set(cluster.accounts) == {("kube-system", "kubewin-kube-proxy-win-1")}
    assert set(cluster.bindings) == {"kubewin-kube-proxy-win-1", "kubewin-flanneld-win-1"}
    # flanneld: the node's own identity, allowed to read Nodes (its writes go through the Node authorizer)
    assert cluster.bindings["kubewin-flanneld-win-1"]["subjects"] == [
        {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "system:node:win-1"}]
    assert cluster.roles["kubewin-flanneld-win-1"]["rules"] == [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]
    for _ns, _name, body in cluster.token_requests:
        assert body["spec"]["boundObjectRef"] == {"kind": "Node", "apiVersion": "v1", "name": "win-1",
                                                  "uid": "uid-win-1"}
        assert body["spec"]["expirationSeconds"] == 604800
    notes = cluster.accounts[("kube-system", "kubewin-kube-proxy-win-1")]["metadata"]["annotations"]
    assert notes[nc.EXPIRES_ANNOTATION] == "2026-12-03T09:00:00Z"
    assert r["tokens"]["kube-proxy"] not in str(notes)
    assert r["ca_data"]


def test_two_nodes_get_different_identities_and_tokens(run, cluster):
    a = run({})
    b = run({"node_name": "win-2"})
    assert set(a["accounts"].values()).isdisjoint(b["accounts"].values())
    assert set(a["tokens"].values()).isdisjoint(b["tokens"].values())


def test_rerun_with_the_tokens_on_the_node_changes_nothing(run, cluster):
    first = run({})
    again = run({"token_files_sha512": files_holding(first)}, at=T0 + datetime.timedelta(days=1))
    assert again["changed"] is False and again["tokens"] == {}
    assert cluster.writes() == []
    assert again["expires"] == first["expires"]


def test_a_token_near_expiry_is_renewed_and_recorded(run, cluster):
    first = run({})
    later = T0 + datetime.timedelta(days=4)
    again = run({"token_files_sha512": files_holding(first)}, at=later)
    assert again["changed"] is True and set(again["tokens"]) == {"kube-proxy"}
    assert again["tokens"]["kube-proxy"] != first["tokens"]["kube-proxy"]
    assert again["expires"]["kube-proxy"] == "2026-12-07T09:00:00Z"
    assert "less than 50%" in again["renewed"]["kube-proxy"]
    third = run({"token_files_sha512": files_holding(again)}, at=later + datetime.timedelta(hours=1))
    assert third["changed"] is False


def test_a_token_file_others_could_read_is_revoked_before_a_new_token_is_issued(run, cluster):
    # security-2 N5: a TokenRequest alone leaves the copied token valid until it expires; making the
    # ServiceAccount again (new UID) revokes it
    first = run({})
    files = files_holding(first)
    files["kube-proxy"] = nc.OPEN_ACL
    again = run({"token_files_sha512": files})
    assert again["_rc"] == 0 and set(again["tokens"]) == {"kube-proxy"}
    writes = cluster.writes()
    assert writes.index("delete_namespaced_service_account") < writes.index("create_namespaced_service_account") \
        < writes.index("create_namespaced_service_account_token"), writes
    assert any("revoked the earlier tokens of kube-proxy" in c for c in again["changes"])
    account = cluster.accounts[("kube-system", "kubewin-kube-proxy-win-1")]
    assert account["metadata"]["labels"][nc.MANAGED_LABEL] == "true"
    assert account["metadata"]["annotations"][nc.SHA512_ANNOTATION] == nc.token_sha512(again["tokens"]["kube-proxy"])


def test_a_token_file_with_other_content_is_revoked_too_and_check_mode_only_says_so(run, cluster):
    first = run({})
    files = {"kube-proxy": "ab" * 64}
    check = run({"token_files_sha512": files}, check=True)
    assert cluster.writes() == [] and any("revoked" in c for c in check["changes"])
    run({"token_files_sha512": files})
    assert "delete_namespaced_service_account" in cluster.writes()
    assert first["tokens"]


def test_a_renewal_for_age_revokes_nothing(run, cluster):
    first = run({})
    run({"token_files_sha512": files_holding(first)}, at=T0 + datetime.timedelta(days=4))
    assert "delete_namespaced_service_account" not in cluster.writes()


def test_a_missing_token_file_gets_a_new_token_for_that_component_only(run, cluster):
    first = run({})
    files = files_holding(first)
    files["kube-proxy"] = None
    again = run({"token_files_sha512": files})
    assert set(again["tokens"]) == {"kube-proxy"}


def test_the_expiry_the_api_server_grants_is_used(run, cluster):
    cluster.max_seconds = 3600
    first = run({})
    assert first["expires"]["kube-proxy"] == "2026-11-26T10:00:00Z"
    assert run({"token_files_sha512": files_holding(first)}, at=T0 + datetime.timedelta(minutes=40))["changed"]


def test_without_node_binding_the_run_fails_and_issues_nothing(run, cluster):
    """security-2 N6: no fail-open fallback to unbound tokens unless asked for."""
    cluster.node_binding = False
    r = run({})
    assert r["_rc"] != 0 and r["failed"] is True and not r.get("tokens")
    assert "cannot bind tokens to Node objects" in r["msg"] and "kubewin_node_token_require_binding" in r["msg"]
    assert "ServiceAccountTokenNodeBinding" in r["msg"] and "win-1" in r["msg"]
    assert cluster.token_requests == []


def test_without_node_binding_the_token_is_unbound_and_the_run_says_so(run, cluster):
    cluster.node_binding = False
    r = run({"require_binding": False})
    assert r["_rc"] == 0 and r["bound"] is False and set(r["tokens"]) == {"kube-proxy"}
    assert all("boundObjectRef" not in body["spec"] for _n, _a, body in cluster.token_requests)
    assert any("ServiceAccountTokenNodeBinding" in str(w) for w in r.get("warnings", []))


def test_check_mode_writes_nothing_and_issues_no_token(run, cluster):
    r = run({}, check=True)
    assert r["changed"] is True and r["tokens"] == {}
    assert cluster.writes() == [] and cluster.accounts == {}


def test_a_node_that_has_not_joined(run, cluster):
    r = run({"node_name": "win-9"}, check=True)
    assert r["_rc"] == 0 and r["changed"] is True and r["tokens"] == {}
    r = run({"node_name": "win-9"})
    assert r["_rc"] == 1 and "Node win-9 does not exist" in r["msg"] and "scale_up.yml" in r["msg"]


def test_an_account_of_that_name_not_made_by_the_collection_is_not_taken_over(run, cluster):
    cluster.accounts[("kube-system", "kubewin-kube-proxy-win-1")] = {
        "metadata": {"name": "kubewin-kube-proxy-win-1", "namespace": "kube-system"}}
    r = run({})
    assert r["_rc"] == 1 and "not made by kubewin.nodes" in r["msg"] and "kubewin_node_name" in r["msg"]
    assert cluster.token_requests == []


def test_reset_deletes_what_it_made_and_the_old_shared_secrets(run, cluster):
    run({})
    run({"node_name": "win-2"})
    cluster.secrets[("kube-system", "kubewin-kube-proxy-token")] = {
        "metadata": {"name": "kubewin-kube-proxy-token", "labels": {"kubewin.nodes/managed": "true"}}}
    cluster.secrets[("kube-system", "someone-elses")] = {"metadata": {"name": "someone-elses"}}
    r = run({"state": "absent", "shared_secrets": ["kube-system/kubewin-kube-proxy-token",
                                                   "kube-system/someone-elses"]})
    assert r["_rc"] == 0 and r["changed"] is True
    assert set(cluster.accounts) == {("kube-system", "kubewin-kube-proxy-win-2")}
    assert set(cluster.bindings) == {"kubewin-kube-proxy-win-2", "kubewin-flanneld-win-2"}
    assert set(cluster.roles) == {"kubewin-flanneld-win-2"}
    assert set(cluster.secrets) == {("kube-system", "someone-elses")}
    assert run({"state": "absent"})["changed"] is False


def test_secrets_never_in_the_module_arguments_log(run, cluster):
    # the result holds tokens (the roles run it with no_log); the ServiceAccount annotations never do
    first = run({})
    for obj in cluster.accounts.values():
        for token in first["tokens"].values():
            assert token not in str(obj)


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
    first = run({})
    old_flanneld_layout(cluster)
    again = run({"token_files_sha512": files_holding(first)})
    assert again["_rc"] == 0 and again["changed"] is True and again["tokens"] == {}
    # the ServiceAccount is gone (its tokens stop working), the role may no longer write, the binding names the node
    assert ("kube-flannel", "kubewin-flanneld-win-1") not in cluster.accounts
    assert cluster.roles["kubewin-flanneld-win-1"]["rules"] == [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]
    assert cluster.bindings["kubewin-flanneld-win-1"]["subjects"] == [
        {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "system:node:win-1"}]
    assert "deleted serviceaccounts kubewin-flanneld-win-1 in namespace kube-flannel" in again["changes"]
    assert run({"token_files_sha512": files_holding(first)})["changed"] is False


def test_check_mode_over_the_old_flanneld_layout_says_what_it_would_retire(run, cluster):
    first = run({})
    old_flanneld_layout(cluster)
    r = run({"token_files_sha512": files_holding(first)}, check=True)
    assert r["changed"] is True and cluster.writes() == []
    assert ("kube-flannel", "kubewin-flanneld-win-1") in cluster.accounts
    assert any(c.startswith("deleted serviceaccounts kubewin-flanneld-win-1") for c in r["changes"])


def test_reset_removes_the_old_flanneld_account_too(run, cluster):
    run({})
    old_flanneld_layout(cluster)
    r = run({"state": "absent"})
    assert r["_rc"] == 0 and cluster.accounts == {} and cluster.roles == {} and cluster.bindings == {}


# --- security-2 N6: a cap on the lifetime, and a concurrent run detected ---------------------------

def test_a_lifetime_above_30_days_is_refused_before_any_change(run, cluster):
    r = run({"expiration_seconds": 31 * 24 * 3600})
    assert r["_rc"] != 0 and "kubewin_node_token_expiration_seconds is 2678400" in r["msg"]
    assert "kubewin_node_token_allow_long_expiration" in r["msg"] and "30 days" in r["msg"]
    assert cluster.writes() == []
    assert run({"expiration_seconds": 30 * 24 * 3600})["_rc"] == 0


def test_a_lifetime_above_30_days_is_accepted_when_allowed(run, cluster):
    r = run({"expiration_seconds": 90 * 24 * 3600, "allow_long_expiration": True})
    assert r["_rc"] == 0 and r["expires"]["kube-proxy"] == "2027-02-24T09:00:00Z"


def test_the_record_is_patched_with_the_resource_version_read(run, cluster):
    first = run({})
    patches = [c for c in cluster.calls if c[0] == "patch_namespaced_service_account"]
    assert patches and patches[-1][1][2]["metadata"]["resourceVersion"]
    again = run({"token_files_sha512": files_holding(first)}, at=T0 + datetime.timedelta(days=5))
    assert again["_rc"] == 0 and again["changed"] is True


def test_a_concurrent_run_is_detected_and_reported(run, cluster, monkeypatch):
    """Another run renews the same node's token between this run's read and its record: 409, named."""
    first = run({})
    key = ("kube-system", "kubewin-kube-proxy-win-1")
    request = cluster.create_namespaced_service_account_token

    def concurrent(name, namespace, body, **kw):
        answer = request(name, namespace, body, **kw)
        other = cluster.accounts[key]["metadata"]
        other["annotations"] = dict(other.get("annotations") or {}, **{nc.SHA512_ANNOTATION: "other run"})
        other["resourceVersion"] = cluster._next_rv()
        return answer

    monkeypatch.setattr(cluster, "create_namespaced_service_account_token", concurrent)
    r = run({"token_files_sha512": files_holding(first)}, at=T0 + datetime.timedelta(days=5))
    assert r["_rc"] != 0 and "409" in r["msg"] and "another run for node win-1" in r["msg"]
    assert "kube-system/kubewin-kube-proxy-win-1" in r["msg"]
    assert cluster.accounts[key]["metadata"]["annotations"][nc.SHA512_ANNOTATION] == "other run"
    assert "jwt-" not in r["msg"]


# --- several nodes in one task (issue 22: one control-plane call for every node of the run) -----------------------

def test_one_task_serves_every_node_and_returns_each_its_own_tokens_and_pod_subnet(run, cluster):
    cluster.nodes["win-1"]["spec"]["podCIDR"] = "10.244.1.0/24"
    r = run({"nodes": [{"name": "win-1"}, {"name": "win-2"}]})
    assert r["_rc"] == 0 and r["changed"] is True and set(r["nodes"]) == {"win-1", "win-2"}, r["msg"]
    one, two = r["nodes"]["win-1"], r["nodes"]["win-2"]
    assert one["pod_cidr"] == "10.244.1.0/24" and two["pod_cidr"] is None
    assert one["accounts"] == {"kube-proxy": "kube-system/kubewin-kube-proxy-win-1"}
    assert set(one["tokens"].values()).isdisjoint(two["tokens"].values())
    assert one["ca_data"] and r["ca_data"] == one["ca_data"]
    # a renewal for one node issues no token for the other
    again = run({"nodes": [
        {"name": "win-1", "token_files_sha512": {"kube-proxy": None}},
        {"name": "win-2", "token_files_sha512": files_holding(two)}]}, at=T0 + datetime.timedelta(days=1))
    assert again["nodes"]["win-2"]["tokens"] == {} and again["nodes"]["win-2"]["changed"] is False
    assert set(again["nodes"]["win-1"]["tokens"]) == {"kube-proxy"}
    assert [b["spec"]["boundObjectRef"]["name"] for _n, _a, b in cluster.token_requests[-1:]] == ["win-1"]


def test_a_node_that_fails_does_not_stop_the_others(run, cluster):
    r = run({"nodes": [{"name": "win-9"}, {"name": "win-2"}]})
    assert r["_rc"] == 1 and "Node win-9 does not exist" in r["msg"]
    assert r["nodes"]["win-9"]["failed"] is True
    assert set(r["nodes"]["win-2"]["tokens"]) == {"kube-proxy"} and r["ca_data"]


def test_an_entry_may_set_its_own_lifetime(run, cluster):
    r = run({"nodes": [{"name": "win-1", "expiration_seconds": 3600}, {"name": "win-2"}]})
    assert [b["spec"]["expirationSeconds"] for _n, _a, b in cluster.token_requests] == [3600, 604800]
    assert r["nodes"]["win-1"]["expires"]["kube-proxy"] == "2026-11-26T10:00:00Z"


def test_check_mode_with_nodes_changes_nothing_and_names_one_not_joined(run, cluster):
    r = run({"nodes": [{"name": "win-1"}, {"name": "win-3"}]}, check=True)
    assert r["_rc"] == 0 and cluster.writes() == []
    assert r["nodes"]["win-3"]["ca_data"] is None and r["nodes"]["win-3"]["pod_cidr"] is None


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
