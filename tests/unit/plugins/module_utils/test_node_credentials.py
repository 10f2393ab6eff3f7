"""Per-node credential decisions: names, RBAC, when a token is renewed, the kubeconfig."""

import datetime
import json
import re

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import node_credentials as nc

UTC = datetime.timezone.utc
T0 = datetime.datetime(2026, 11, 26, 9, 0, 0, tzinfo=UTC)
DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


def issued(token="tok", at=T0, seconds=604800, uid="uid-1"):
    status = {"expirationTimestamp": nc.format_time(at + datetime.timedelta(seconds=seconds))}
    return nc.record(status, at, token, uid, True)


def test_account_names_are_per_node_and_component():
    assert nc.account_name("kube-proxy", "win-1") == "kubewin-kube-proxy-win-1"
    assert nc.account_name("flanneld", "win-1") == "kubewin-flanneld-win-1"
    assert nc.account_name("flanneld", "win-1") != nc.account_name("flanneld", "win-2")


def test_long_node_names_are_capped_with_a_hash_and_stay_distinct():
    a = "w" * 60 + ".example.com"
    b = "w" * 60 + ".example.org"
    na, nb = nc.account_name("kube-proxy", a), nc.account_name("kube-proxy", b)
    assert len(na) <= 63 and len(nb) <= 63
    assert na != nb
    assert DNS1123.match(na) and DNS1123.match(nb)
    assert na == nc.account_name("kube-proxy", a)  # stable across runs


def test_a_node_name_kubernetes_would_refuse_names_the_variable():
    with pytest.raises(nc.NodeCredentialsError, match="kubewin_node_name"):
        nc.account_name("flanneld", "Win_1")


def test_flanneld_may_patch_only_its_own_node_status():
    objs = nc.desired_objects("win-1", {"kube-proxy": "kube-system", "flanneld": "kube-flannel"})
    rules = objs["flanneld"]["role"]["rules"]
    writes = [r for r in rules if set(r["verbs"]) - {"get", "list", "watch"}]
    assert writes == [{"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"],
                       "resourceNames": ["win-1"]}]
    assert not any("pods" in r["resources"] or "nodes" in r["resources"] and "patch" in r["verbs"] for r in rules)
    binding = objs["flanneld"]["binding"]
    assert binding["roleRef"]["name"] == "kubewin-flanneld-win-1"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "kubewin-flanneld-win-1",
                                    "namespace": "kube-flannel"}]


def test_kube_proxy_gets_node_proxier_only_for_its_own_account():
    objs = nc.desired_objects("win-1", {"kube-proxy": "kube-system", "flanneld": "kube-flannel"})
    assert objs["kube-proxy"]["role"] is None
    assert objs["kube-proxy"]["binding"]["roleRef"]["name"] == "system:node-proxier"
    assert objs["kube-proxy"]["binding"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "kubewin-kube-proxy-win-1", "namespace": "kube-system"}]
    for obj in ("account", "binding"):
        assert objs["kube-proxy"][obj]["metadata"]["labels"] == {"kubewin.nodes/managed": "true"}


def test_a_fresh_token_that_is_on_the_node_is_kept():
    notes = issued("tok")
    renew, reason = nc.renewal(notes, T0 + datetime.timedelta(days=1), "uid-1", nc.token_sha512("tok"), 0.5)
    assert renew is False and "valid until 2026-12-03T09:00:00Z" in reason


def test_renewed_when_less_than_the_fraction_of_its_life_is_left():
    notes = issued("tok")
    sha = nc.token_sha512("tok")
    assert nc.renewal(notes, T0 + datetime.timedelta(days=3, hours=11), "uid-1", sha, 0.5)[0] is False
    renew, reason = nc.renewal(notes, T0 + datetime.timedelta(days=3, hours=13), "uid-1", sha, 0.5)
    assert renew is True and "less than 50%" in reason
    assert nc.renewal(notes, T0 + datetime.timedelta(days=8), "uid-1", sha, 0.5) == (
        True, "the token expired at 2026-12-03T09:00:00Z")


def test_the_lifetime_the_api_server_granted_is_what_counts():
    # asked 7 days, the API server capped it at 1 hour: half of that hour decides
    notes = issued("tok", seconds=3600)
    sha = nc.token_sha512("tok")
    assert nc.renewal(notes, T0 + datetime.timedelta(minutes=29), "uid-1", sha, 0.5)[0] is False
    assert nc.renewal(notes, T0 + datetime.timedelta(minutes=31), "uid-1", sha, 0.5)[0] is True


@pytest.mark.parametrize("notes, uid, sha, why", [
    ({}, "uid-1", None, "no token issued yet"),
    (issued("tok"), "uid-1", None, "the token file is missing on the node"),
    (issued("tok"), "uid-1", nc.token_sha512("other"), "the token file on the node is not the token last issued"),
    (issued("tok"), "uid-2", nc.token_sha512("tok"), "bound to an earlier Node object"),
])
def test_renewed_when_the_node_does_not_hold_a_usable_token(notes, uid, sha, why):
    renew, reason = nc.renewal(notes, T0 + datetime.timedelta(minutes=5), uid, sha, 0.5)
    assert renew is True and why in reason


def test_the_record_holds_no_token():
    notes = issued("secret-token-value")
    assert "secret-token-value" not in json.dumps(notes)
    assert notes[nc.SHA512_ANNOTATION] == nc.token_sha512("secret-token-value")


def test_token_request_is_bound_to_the_node_object():
    body = nc.token_request("win-1", "uid-1", 604800)
    assert body["spec"] == {"expirationSeconds": 604800, "boundObjectRef": {
        "kind": "Node", "apiVersion": "v1", "name": "win-1", "uid": "uid-1"}}
    assert "boundObjectRef" not in nc.token_request("win-1", "uid-1", 604800, bind=False)["spec"]


def test_only_a_node_binding_refusal_falls_back_to_an_unbound_token():
    assert nc.binding_unsupported(400, 'cannot bind token to a Node object as the "ServiceAccountTokenNodeBinding" '
                                       'feature-gate is disabled')
    assert nc.binding_unsupported(400, "cannot bind token for object type Node")
    assert not nc.binding_unsupported(403, "cannot bind token to a Node object")
    assert not nc.binding_unsupported(400, "expirationSeconds: may not specify a duration less than 10 minutes")


@pytest.mark.parametrize("seconds, fraction, variable", [
    (599, 0.5, "kubewin_node_token_expiration_seconds"),
    (3600, 1, "kubewin_node_token_renew_fraction"),
    (3600, 0, "kubewin_node_token_renew_fraction"),
])
def test_settings_the_api_would_refuse_name_the_variable(seconds, fraction, variable):
    with pytest.raises(nc.NodeCredentialsError, match=variable):
        nc.check_settings(seconds, fraction)


def test_the_kubeconfig_reads_the_token_from_its_file_and_holds_no_secret():
    doc = json.loads(nc.token_file_kubeconfig("https://10.0.0.1:6443", "Q0E=", "kube-system/kubewin-kube-proxy-w",
                                              "C:\\etc\\kube-proxy\\token"))
    assert doc["users"][0]["user"] == {"tokenFile": "C:\\etc\\kube-proxy\\token"}
    assert doc["clusters"][0]["cluster"] == {"server": "https://10.0.0.1:6443", "certificate-authority-data": "Q0E="}


def test_token_files_only_for_the_tokens_issued():
    paths = {"kube-proxy": "C:\\etc\\kube-proxy\\token", "flanneld": "C:\\etc\\kube-flannel\\token"}
    assert nc.token_files({}, paths) == []
    assert nc.token_files({"flanneld": "t"}, paths) == [
        {"path": "C:\\etc\\kube-flannel\\token", "content": "t", "restricted": True, "secret": True}]


# Owner and access rules, as files_state reads them (GetSecurityDescriptorSddlForm('Owner, Access')).
RESTRICTED = "O:BAD:PAI(A;;FA;;;SY)(A;;FA;;;BA)"
A_USER = "S-1-5-21-1004336348-1177238915-682003330-1001"
PATHS = {"kube-proxy": "C:\\etc\\kube-proxy\\token", "flanneld": "C:\\etc\\kube-flannel\\token"}


def test_token_file_hashes_from_the_node_state():
    state = {"sha512": {PATHS["kube-proxy"]: "ab" * 64, PATHS["flanneld"]: None},
             "acls": {PATHS["kube-proxy"]: RESTRICTED, PATHS["flanneld"]: None}}
    assert nc.token_file_hashes(PATHS, state) == {"kube-proxy": "ab" * 64, "flanneld": None}


def test_a_token_file_others_can_read_is_replaced():
    state = {"sha512": {PATHS["kube-proxy"]: "ab" * 64},
             "acls": {PATHS["kube-proxy"]: "O:BAD:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)(A;ID;0x1200a9;;;BU)"}}
    hashes = nc.token_file_hashes(PATHS, state)
    assert hashes["kube-proxy"] == nc.OPEN_ACL
    renew, reason = nc.renewal(issued("tok"), T0, "uid-1", hashes["kube-proxy"], 0.5)
    assert renew is True and "read by others" in reason


def test_a_token_file_a_user_owns_is_replaced_even_with_the_right_access_rules():
    # its owner can always read the rules back and give itself access (READ_CONTROL, WRITE_DAC)
    state = {"sha512": {PATHS["kube-proxy"]: "ab" * 64},
             "acls": {PATHS["kube-proxy"]: "O:%sD:PAI(A;;FA;;;SY)(A;;FA;;;BA)" % A_USER}}
    assert nc.token_file_hashes(PATHS, state)["kube-proxy"] == nc.OPEN_ACL


def test_kubeconfigs_in_sync_only_with_their_content_and_access_rules():
    f = {"path": "C:\\etc\\kube-proxy\\kubeconfig", "content": "x", "restricted": True}
    sha = nc.hashlib.sha512(b"x").hexdigest()
    assert nc.credential_files_in_sync({"sha512": {f["path"]: sha}, "acls": {f["path"]: RESTRICTED}}, [f])
    assert not nc.credential_files_in_sync({"sha512": {f["path"]: sha}, "acls": {f["path"]: "O:BAD:AI"}}, [f])
    assert not nc.credential_files_in_sync(
        {"sha512": {f["path"]: sha}, "acls": {f["path"]: RESTRICTED.replace("O:BA", "O:" + A_USER)}}, [f])
    assert not nc.credential_files_in_sync({"sha512": {f["path"]: None}, "acls": {}}, [f])


def test_a_kubeconfig_the_templating_decoded_is_still_in_sync():
    # ansible-core 2.18 hands the token_file_kubeconfig filter's JSON text (no true/false/null) over as a dict:
    # the re-run must see the file it wrote as in sync, not fail or rewrite it.
    text = nc.token_file_kubeconfig("https://10.0.0.1:6443", "Q0E=", "kubewin-flanneld-n1",
                                    "C:\\etc\\kube-flannel\\token")
    f = {"path": "C:\\etc\\kube-flannel\\kubeconfig", "content": nc.json.loads(text), "restricted": True}
    state = {"sha512": {f["path"]: nc.hashlib.sha512(text.encode()).hexdigest()}, "acls": {f["path"]: RESTRICTED}}
    assert nc.credential_files_in_sync(state, [f])
