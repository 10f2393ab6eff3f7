"""The files that carry kube-proxy's and flanneld's tokens on a host: kubeconfig, entries, in-sync checks."""

import datetime
import hashlib
import json

from ansible_collections.kubewin.nodes.plugins.module_utils import _node_credentials as nc
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import credential_files as cf

T0 = datetime.datetime(2026, 11, 26, 9, 0, 0, tzinfo=datetime.timezone.utc)


def issued(token="tok", at=T0, seconds=604800, uid="uid-1"):
    status = {"expirationTimestamp": nc.format_time(at + datetime.timedelta(seconds=seconds))}
    return nc.record(status, at, token, uid, True)


def test_the_kubeconfig_reads_the_token_from_its_file_and_holds_no_secret():
    doc = json.loads(cf.token_file_kubeconfig("https://10.0.0.1:6443", "Q0E=", "kube-system/kubewin-kube-proxy-w",
                                              "C:\\etc\\kube-proxy\\token"))
    assert doc["users"][0]["user"] == {"tokenFile": "C:\\etc\\kube-proxy\\token"}
    assert doc["clusters"][0]["cluster"] == {"server": "https://10.0.0.1:6443", "certificate-authority-data": "Q0E="}


def test_token_files_only_for_the_tokens_issued():
    paths = {"kube-proxy": "C:\\etc\\kube-proxy\\token", "flanneld": "C:\\etc\\kube-flannel\\token"}
    assert cf.token_files({}, paths) == []
    assert cf.token_files({"flanneld": "t"}, paths) == [
        {"path": "C:\\etc\\kube-flannel\\token", "content": "t", "restricted": True, "secret": True}]


# Owner and access rules, as files_state reads them (GetSecurityDescriptorSddlForm('Owner, Access')).
RESTRICTED = "O:BAD:PAI(A;;FA;;;SY)(A;;FA;;;BA)"
A_USER = "S-1-5-21-1004336348-1177238915-682003330-1001"
PATHS = {"kube-proxy": "C:\\etc\\kube-proxy\\token", "flanneld": "C:\\etc\\kube-flannel\\token"}


def test_token_file_hashes_from_the_node_state():
    state = {"sha512": {PATHS["kube-proxy"]: "ab" * 64, PATHS["flanneld"]: None},
             "acls": {PATHS["kube-proxy"]: RESTRICTED, PATHS["flanneld"]: None}}
    assert cf.token_file_hashes(PATHS, state) == {"kube-proxy": "ab" * 64, "flanneld": None}


def test_a_token_file_others_can_read_is_replaced():
    state = {"sha512": {PATHS["kube-proxy"]: "ab" * 64},
             "acls": {PATHS["kube-proxy"]: "O:BAD:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)(A;ID;0x1200a9;;;BU)"}}
    hashes = cf.token_file_hashes(PATHS, state)
    assert hashes["kube-proxy"] == nc.OPEN_ACL
    renew, reason = nc.renewal(issued("tok"), T0, "uid-1", hashes["kube-proxy"], 0.5)
    assert renew is True and "read by others" in reason


def test_a_token_file_a_user_owns_is_replaced_even_with_the_right_access_rules():
    # its owner can always read the rules back and give itself access (READ_CONTROL, WRITE_DAC)
    state = {"sha512": {PATHS["kube-proxy"]: "ab" * 64},
             "acls": {PATHS["kube-proxy"]: "O:%sD:PAI(A;;FA;;;SY)(A;;FA;;;BA)" % A_USER}}
    assert cf.token_file_hashes(PATHS, state)["kube-proxy"] == nc.OPEN_ACL


def test_kubeconfigs_in_sync_only_with_their_content_and_access_rules():
    f = {"path": "C:\\etc\\kube-proxy\\kubeconfig", "content": "x", "restricted": True}
    sha = hashlib.sha512(b"x").hexdigest()
    assert cf.credential_files_in_sync({"sha512": {f["path"]: sha}, "acls": {f["path"]: RESTRICTED}}, [f])
    assert not cf.credential_files_in_sync({"sha512": {f["path"]: sha}, "acls": {f["path"]: "O:BAD:AI"}}, [f])
    assert not cf.credential_files_in_sync(
        {"sha512": {f["path"]: sha}, "acls": {f["path"]: RESTRICTED.replace("O:BA", "O:" + A_USER)}}, [f])
    assert not cf.credential_files_in_sync({"sha512": {f["path"]: None}, "acls": {}}, [f])


def test_a_kubeconfig_the_templating_decoded_is_still_in_sync():
    # ansible-core 2.18 hands the token_file_kubeconfig filter's JSON text (no true/false/null) over as a dict:
    # the re-run must see the file it wrote as in sync, not fail or rewrite it.
    text = cf.token_file_kubeconfig("https://10.0.0.1:6443", "Q0E=", "kubewin-flanneld-n1",
                                    "C:\\etc\\kube-flannel\\token")
    f = {"path": "C:\\etc\\kube-flannel\\kubeconfig", "content": json.loads(text), "restricted": True}
    state = {"sha512": {f["path"]: hashlib.sha512(text.encode()).hexdigest()}, "acls": {f["path"]: RESTRICTED}}
    assert cf.credential_files_in_sync(state, [f])


def test_credential_files_give_every_kubeconfig_and_only_the_issued_tokens():
    kubeconfigs = {"kube-proxy": "C:\\etc\\kube-proxy\\kubeconfig", "flanneld": "C:\\etc\\kube-flannel\\kubeconfig"}
    accounts = {"kube-proxy": "u-proxy", "flanneld": "u-flannel"}
    configs, tokens = cf.credential_files("https://192.0.2.10:6443", "Q0E=", accounts, {"kube-proxy": "tok1"},
                                          PATHS, kubeconfigs)
    assert tokens == [{"path": PATHS["kube-proxy"], "content": "tok1", "restricted": True, "secret": True}]
    assert [c["path"] for c in configs] == [kubeconfigs["kube-proxy"], kubeconfigs["flanneld"]]
    assert all(c["restricted"] and not c["secret"] and "tok1" not in c["content"] for c in configs)
    doc = json.loads(configs[1]["content"])
    assert doc["users"] == [{"name": "u-flannel", "user": {"tokenFile": PATHS["flanneld"]}}]
    assert cf.token_file_hashes(PATHS, {}) == {"kube-proxy": None, "flanneld": None}
    assert cf.credential_files_in_sync({}, configs) is False
